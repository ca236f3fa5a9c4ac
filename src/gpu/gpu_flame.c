/* gpu_flame.c - the fractal-flame chaos game on the GPU (owner: flamegpu): host side of
 * shaders/flame_iterate.comp (chaos game, ring shuffle, packed integer accumulation) and
 * shaders/flame_flush.comp (packed accumulator -> flam3's float buckets). See src/flame/gpu_flame.h
 * for the contract and shaders/flame_abi.glsl for the buffer layouts.
 *
 * Launch plan: the points (x, y, colour, previous xform | bad-value count) persist in a buffer between
 * launches; the first launch seeds them and runs `fuse` rounds without plotting. Every launch adds
 * its counted samples to a counter that is read back, and the next launch's round count is chosen
 * from the measured rate (xaos rejections and bad-value retries do not count) so the render stops
 * within one launch-round of flam3's sample count. The carry counters of the accumulator cannot
 * overflow before 2^32 * 65536 / (255 * KF_UNITS) samples have landed in one bucket; the host still
 * flushes to float every 2^36 samples so no render, however long, can reach that. */
#include "flame/gpu_flame.h"
#include "gpu/vk.h"

#include "../../shaders/flame_abi.glsl"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KF_FLUSH_SAMPLES (1ull << 36)
#define KF_BINDINGS 6u
#define KF_PUSH_BYTES (KF_PUSH_WORDS * 4u)

typedef struct kf_push {
    uint32_t n, final_rec, flags, rounds, fuse, seed_lo, seed_hi, launch, hist_w, hist_h;
    float xmin, ymin, xmax, ymax, sx, sy, r00, r01, r10, r11, cx, cy, final_opacity;
    uint32_t pad[3];
} kf_push;
_Static_assert(sizeof(kf_push) == KF_PUSH_BYTES, "push constant layout");

/* Writes one xform record at rec (header + active variations except pre_blur); returns the words used. */
static uint32_t put_record(float *w, uint32_t rec, const kiln_flame_xform *x)
{
    kiln_flame_xform_pre pre;
    kiln__flame_xform_precalc(x, &pre);
    float *h = w + rec;
    for (int i = 0; i < 6; i++) {
        h[i] = (float)x->c[i / 2][i % 2];
        h[KF_H_POST + i] = (float)x->post[i / 2][i % 2];
    }
    h[KF_H_COLOR] = (float)x->color;
    h[KF_H_SPEED] = (float)x->color_speed;
    h[KF_H_VIS] = (float)pre.vis;
    h[KF_H_OPACITY] = (float)x->opacity;
    uint32_t flags = (pre.need_atan_xy ? KF_FLAG_ATAN_XY : 0) | (pre.need_angles ? KF_FLAG_ANGLES : 0) |
                     (pre.need_atan_yx ? KF_FLAG_ATAN_YX : 0) | (x->has_post ? KF_FLAG_POST : 0);
    h[KF_H_PREBLUR] = (float)pre.pre_blur;
    uint32_t nv = 0;
    for (uint32_t k = 0; k < x->nactive; k++) {
        uint32_t id = x->active[k];
        if (id == KILN_FLAME_VAR_pre_blur || x->var[id] == 0.0) continue;
        float *e = h + KF_HDR_WORDS + nv * KF_VAR_WORDS;
        memset(e, 0, KF_VAR_WORDS * sizeof *e);
        uint32_t idb = id;
        memcpy(&e[0], &idb, 4);
        e[1] = (float)x->var[id];
        for (int p = 0; p < KILN_FLAME_MAX_PARAMS; p++) e[2 + p] = (float)x->params[id][p];
        float *pe = e + 10;
        switch (id) {
        case KILN_FLAME_VAR_waves:
            pe[0] = (float)x->c[1][0]; pe[1] = (float)x->c[1][1];
            pe[2] = (float)pre.waves_dx2; pe[3] = (float)pre.waves_dy2;
            break;
        case KILN_FLAME_VAR_popcorn: pe[0] = (float)x->c[2][0]; pe[1] = (float)x->c[2][1]; break;
        case KILN_FLAME_VAR_rings: pe[0] = (float)(x->c[2][0] * x->c[2][0] + KILN_FLAME_EPS); break;
        case KILN_FLAME_VAR_fan:
            pe[0] = (float)(M_PI * (x->c[2][0] * x->c[2][0] + KILN_FLAME_EPS));
            pe[1] = (float)x->c[2][1];
            break;
        case KILN_FLAME_VAR_perspective: pe[0] = (float)pre.persp_vsin; pe[1] = (float)pre.persp_vfcos; break;
        case KILN_FLAME_VAR_julian: pe[0] = (float)pre.julian_rN; pe[1] = (float)pre.julian_cn; break;
        case KILN_FLAME_VAR_juliascope: pe[0] = (float)pre.juliascope_rN; pe[1] = (float)pre.juliascope_cn; break;
        case KILN_FLAME_VAR_radial_blur: pe[0] = (float)pre.radial_spinvar; pe[1] = (float)pre.radial_zoomvar; break;
        case KILN_FLAME_VAR_disc2:
            pe[0] = (float)pre.disc2_timespi; pe[1] = (float)pre.disc2_sinadd; pe[2] = (float)pre.disc2_cosadd;
            break;
        case KILN_FLAME_VAR_super_shape: pe[0] = (float)pre.super_shape_pm_4; pe[1] = (float)pre.super_shape_pneg1_n1; break;
        case KILN_FLAME_VAR_wedge_julia:
            pe[0] = (float)pre.wedge_julia_cf; pe[1] = (float)pre.wedge_julia_rN; pe[2] = (float)pre.wedge_julia_cn;
            break;
        default: break;
        }
        nv++;
    }
    memcpy(&h[KF_H_FLAGS], &flags, 4);
    memcpy(&h[KF_H_NVARS], &nv, 4);
    h[KF_H_NVARS + 1] = 0.0f;
    return KF_HDR_WORDS + nv * KF_VAR_WORDS;
}

static uint32_t record_words(const kiln_flame_xform *x)
{
    uint32_t nv = 0;
    for (uint32_t k = 0; k < x->nactive; k++)
        if (x->active[k] != KILN_FLAME_VAR_pre_blur && x->var[x->active[k]] != 0.0) nv++;
    return KF_HDR_WORDS + nv * KF_VAR_WORDS;
}

/* Selection tables (see flame_abi.glsl): proposal cumulative weights, and with xaos the acceptance
 * table P(prev -> j) / max_p P(p -> j). */
static kiln_status put_tables(kiln_context *ctx, const kiln_flame *flame, uint32_t n, float *w, int *xaos)
{
    double sum = 0.0;
    for (uint32_t j = 0; j < n; j++) sum += flame->xforms[j].weight;
    if (!(sum > 0.0))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "flame \"%s\": the xform weights sum to %g", flame->name, sum);
    *xaos = 0;
    if (flame->chaos)
        for (uint32_t i = 0; i < n && !*xaos; i++)
            for (uint32_t j = 0; j < n; j++)
                if (flame->chaos[(size_t)i * flame->num_xforms + j] != 1.0) *xaos = 1;
    if (!*xaos) {
        double c = 0.0;
        for (uint32_t j = 0; j < n; j++) {
            c += flame->xforms[j].weight;
            w[KF_TAB_CUM + j] = (float)(c / sum);
        }
        w[KF_TAB_CUM + n - 1] = 1.0f;
        return KILN_OK;
    }
    /* P[p][j], p = 0 (no previous xform) .. n */
    double *P = kiln__calloc(ctx, (size_t)(n + 1) * n, sizeof *P);
    if (!P) return KILN_ERR_OUT_OF_MEMORY;
    for (uint32_t p = 0; p <= n; p++) {
        double rs = 0.0;
        for (uint32_t j = 0; j < n; j++) {
            double cw = p == 0 ? 1.0 : flame->chaos[(size_t)(p - 1) * flame->num_xforms + j];
            P[(size_t)p * n + j] = flame->xforms[j].weight * (cw > 0.0 ? cw : 0.0);
            rs += P[(size_t)p * n + j];
        }
        if (!(rs > 0.0)) {
            /* a row that can never be used (its xform has weight 0) may be empty */
            if (p > 0 && !(flame->xforms[p - 1].weight > 0.0)) continue;
            free(P);
            return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "flame \"%s\": xaos leaves xform %u no successor", flame->name, p - 1);
        }
        for (uint32_t j = 0; j < n; j++) P[(size_t)p * n + j] /= rs;
    }
    double c = 0.0;
    for (uint32_t j = 0; j < n; j++) {
        double m = 0.0;
        for (uint32_t p = 0; p <= n; p++) m = P[(size_t)p * n + j] > m ? P[(size_t)p * n + j] : m;
        c += m;
        w[KF_TAB_CUM + j] = (float)c;
        for (uint32_t p = 0; p <= n; p++) w[KF_TAB_ACC + p * n + j] = m > 0.0 ? (float)(P[(size_t)p * n + j] / m) : 0.0f;
    }
    free(P);
    return KILN_OK;
}

/* compute writes -> transfer writes (a fill after a shader used the buffer) */
static void compute_to_transfer(kiln_vk_cmd *cmd)
{
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT};
    vkCmdPipelineBarrier(cmd->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0,
                         NULL, 0, NULL);
}

typedef struct kf_state {
    kiln_gpu *gpu;
    kiln_vk_buffer points, packed, carry;
    kiln_vk_io xforms, palette, counters, out;
    int chroma;               /* subsampled-chroma accumulator (flame_flush_chroma.comp flushes it) */
    uint32_t w, h;            /* histogram size (chroma flush) */
} kf_state;

static void kf_state_free(kf_state *s)
{
    if (!s->gpu) return;
    kiln_vk_buffer_destroy(s->gpu, &s->points);
    kiln_vk_buffer_destroy(s->gpu, &s->packed);
    kiln_vk_buffer_destroy(s->gpu, &s->carry);
    kiln_vk_io_destroy(s->gpu, &s->xforms);
    kiln_vk_io_destroy(s->gpu, &s->palette);
    kiln_vk_io_destroy(s->gpu, &s->counters);
    kiln_vk_io_destroy(s->gpu, &s->out);
}

static kiln_vk_buffer *io_host(kiln_vk_io *io) { return io->direct ? &io->dev : &io->staging; }

/* flame_flush over every bucket (adds into the float buffer, clears the accumulator) */
static kiln_status run_flush(kiln_context *ctx, kf_state *s, const kiln_vk_pipeline *fp, uint32_t buckets,
                             int download, double *ms)
{
    kiln_vk_cmd cmd;
    KILN_TRY(kiln_vk_cmd_begin(ctx, s->gpu, 1, &cmd));
    kiln_vk_cmd_timestamp(&cmd, 0);
    kiln_vk_binding b[3] = {{.buffer = s->packed.buffer}, {.buffer = s->carry.buffer}, {.buffer = s->out.dev.buffer}};
    uint32_t blocks = ((s->w + 1u) / 2u) * ((s->h + 1u) / 2u);
    uint32_t push[3] = {s->chroma ? blocks : buckets, s->w, s->h};
    kiln_status st = kiln_vk_cmd_dispatch_linear(ctx, &cmd, fp, b, push, s->chroma ? blocks : buckets);
    kiln_vk_cmd_timestamp(&cmd, 1);
    kiln_vk_cmd_barrier(&cmd);
    if (download) kiln_vk_cmd_download(&cmd, &s->out, (VkDeviceSize)buckets * 16u);
    double t = 0.0;
    if (st == KILN_OK) st = kiln_vk_cmd_submit(ctx, &cmd, &t);
    kiln_vk_cmd_free(&cmd);
    *ms += t;
    return st;
}

/* Hot-tile mode (owner: flameideas): the tw x th window of the float histogram rgba (w x h buckets)
 * with the most A mass, through a summed-area table; origin in *tx, *ty. */
static kiln_status pick_hot_tile(kiln_context *ctx, const float *rgba, uint32_t w, uint32_t h, uint32_t tw,
                                 uint32_t th, uint32_t *tx, uint32_t *ty)
{
    const size_t sw = (size_t)w + 1;
    if ((size_t)h + 1 > SIZE_MAX / sizeof(double) / sw)
        return kiln__fail(ctx, KILN_ERR_OUT_OF_MEMORY, "hot tile: %ux%u histogram too large", w, h);
    double *sat = kiln__calloc(ctx, sw * ((size_t)h + 1), sizeof *sat);
    if (!sat) return KILN_ERR_OUT_OF_MEMORY;
    for (uint32_t y = 0; y < h; y++) {
        double row = 0.0;
        for (uint32_t x = 0; x < w; x++) {
            row += rgba[((size_t)y * w + x) * 4 + 3];
            sat[(y + 1) * sw + x + 1] = sat[y * sw + x + 1] + row;
        }
    }
    double best = -1.0;
    *tx = *ty = 0;
    for (uint32_t y = 0; y + th <= h; y++)
        for (uint32_t x = 0; x + tw <= w; x++) {
            double m = sat[(y + th) * sw + x + tw] - sat[y * sw + x + tw] - sat[(y + th) * sw + x] + sat[y * sw + x];
            if (m > best) {
                best = m;
                *tx = x;
                *ty = y;
            }
        }
    free(sat);
    return KILN_OK;
}

kiln_status kiln__flame_iterate_gpu_ex(kiln_context *ctx, const kiln_flame *flame, const kiln_flame_setup *setup,
                                       const kiln_flame_gpu_opts *opts, kiln_flame_hist *hist,
                                       kiln_flame_gpu_stats *stats)
{
    kiln_flame_gpu_opts o = {0};
    if (opts) o = *opts;
    kiln_flame_gpu_stats stv;
    memset(&stv, 0, sizeof stv);
    if (!flame || !setup || !hist) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln__flame_iterate_gpu: NULL argument");
    memset(hist, 0, sizeof *hist);
    const uint32_t n = flame->final_xform >= 0 ? flame->num_xforms - 1 : flame->num_xforms;
    if (n == 0 || n > KF_MAX_XFORMS)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "flame \"%s\": %u xforms (the GPU renderer takes 1..%u)", flame->name,
                          n, KF_MAX_XFORMS);
    if (setup->hist_w == 0 || setup->hist_h == 0)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "flame \"%s\": empty histogram", flame->name);
    const uint64_t buckets = (uint64_t)setup->hist_w * setup->hist_h;

    kiln_gpu *gpu;
    KILN_TRY(kiln__gpu_get(ctx, &gpu));

    /* subgroup size, workgroup size, workgroups */
    uint32_t dflt = gpu->phys[gpu->chosen].info.subgroup_size;
    uint32_t sg = o.subgroup_size;
    if (sg != 0 && !kiln_vk_subgroup_size_ok(gpu, sg))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s cannot run flame shaders with subgroup size %u",
                          gpu->props.deviceName, sg);
    if (sg == 0 && gpu->full_subgroups && kiln_vk_subgroup_size_ok(gpu, dflt)) sg = dflt;
    uint32_t s_eff = sg ? sg : (dflt ? dflt : 32);
    uint32_t ls = KF_LOCAL_SIZE_MIN;
    while (ls < 8u * s_eff) ls *= 2; /* at least 8 subgroups per workgroup for the ring shuffle */
    if (ls > gpu->props.limits.maxComputeWorkGroupInvocations || ls > gpu->props.limits.maxComputeWorkGroupSize[0] ||
        2u * ls * 16u > gpu->props.limits.maxComputeSharedMemorySize)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: flame workgroups of %u invocations (subgroup size %u) do not fit",
                          gpu->props.deviceName, ls, s_eff);
    int cpu_dev = gpu->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    uint32_t groups = o.workgroups ? o.workgroups : (cpu_dev ? 8u : gpu->discrete ? 2048u : 512u);
    if (groups > 65535u) groups = 65535u;
    /* Every lane plots at least min_rounds samples: a point that plots only a few rounds after its fuse
     * still carries the bias of its random start (flam3 plots 10,000 per fuse), which showed on the
     * H100 as 2 dB lost against flam3 for slowly contracting genomes (gen_symm2) at test size. Small
     * renders therefore run fewer workgroups rather than fewer rounds. */
    const uint32_t min_rounds = o.min_rounds ? o.min_rounds : 1024u;
    {
        uint64_t need = (setup->nsamples + (uint64_t)ls * min_rounds - 1) / ((uint64_t)ls * min_rounds);
        if (need < groups) groups = need ? (uint32_t)need : 1u;
    }
    const uint64_t threads = (uint64_t)groups * ls;
    uint32_t max_rounds = o.max_rounds ? o.max_rounds : (cpu_dev ? 256u : 1024u);
    if ((uint64_t)max_rounds * threads >= (1ull << 32)) max_rounds = (uint32_t)(((1ull << 32) - 1) / threads);
    if (max_rounds == 0) max_rounds = 1;
    const uint32_t fuse = o.fuse ? o.fuse : 20u;

    /* opt-in modes (docs/FLAME.md "Beyond the notes' design"), one at a time */
    if ((o.hot_tile != 0) + (o.sat_level > 0.0) + (o.chroma_2x2 != 0) > 1)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "flame GPU options: hot_tile, sat_level and chroma_2x2 are exclusive");
    if (o.sat_level < 0.0 || o.sat_thin_log2 > 8u)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "flame GPU options: sat_level %g, sat_thin_log2 %u (0..8)",
                          o.sat_level, o.sat_thin_log2);
    uint32_t tile_w = 0, tile_h = 0, tile_n = 1;
    if (o.hot_tile) {
        tile_w = o.tile_w ? o.tile_w : 32u;
        tile_h = o.tile_h ? o.tile_h : 32u;
        if (tile_w > setup->hist_w) tile_w = setup->hist_w;
        if (tile_h > setup->hist_h) tile_h = setup->hist_h;
        if (tile_w > 65535u || tile_h > 65535u || setup->hist_w > 65535u || setup->hist_h > 65535u ||
            (uint64_t)tile_w * tile_h * 16u + 2u * ls * 16u > gpu->props.limits.maxComputeSharedMemorySize)
            return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "flame hot tile %ux%u (histogram %ux%u) does not fit %s",
                              tile_w, tile_h, setup->hist_w, setup->hist_h, gpu->props.deviceName);
        tile_n = tile_w * tile_h;
        /* the 32-bit shared sums: at most ls * rounds samples of <= 255 per channel per dispatch */
        uint32_t cap = (uint32_t)(0xffffffffu / (256u * ls));
        if (max_rounds > cap) max_rounds = cap;
    }

    uint64_t limit = gpu->props.limits.maxStorageBufferRange;
    if (buckets * 16u > limit || threads * 16u > limit)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "flame \"%s\": a %ux%u histogram exceeds %s's storage buffer range",
                          flame->name, setup->hist_w, setup->hist_h, gpu->props.deviceName);

    /* xform buffer: tables + records */
    uint32_t words = KF_TAB_ACC + (n + 1) * n;
    for (uint32_t i = 0; i < flame->num_xforms; i++) words += record_words(&flame->xforms[i]);

    kf_state s;
    memset(&s, 0, sizeof s);
    s.gpu = gpu;
    kiln_status st = KILN_OK;
    const kiln_vk_pipeline *ip = NULL, *fp = NULL;
    kiln_vk_pipeline_desc idesc = {.shader = "flame_iterate", .local_size = ls, .nbindings = KF_BINDINGS,
                                   .push_size = KF_PUSH_BYTES, .subgroup_size = sg,
                                   .full_subgroups = sg != 0 && gpu->full_subgroups};
    kiln_vk_pipeline_desc fdesc = {.shader = "flame_flush", .local_size = 256, .nbindings = 3, .push_size = 4};
    if (o.hot_tile) {
        idesc.spec = &tile_n;
        idesc.nspec = 1;
    }
    s.chroma = o.chroma_2x2 != 0;
    s.w = setup->hist_w;
    s.h = setup->hist_h;
    /* chroma: one word per bucket + one per 2x2 block, two carry counters per word */
    const uint64_t acc_words = s.chroma ? buckets + (uint64_t)((setup->hist_w + 1u) / 2u) * ((setup->hist_h + 1u) / 2u)
                                        : 2u * buckets;
    if (s.chroma) {
        fdesc.shader = "flame_flush_chroma";
        fdesc.push_size = 12;
    }
    stv.tile_x = stv.tile_y = -1;
    stv.accum_bytes = acc_words * 12u;
    st = kiln_vk_pipeline_get(ctx, gpu, &idesc, &ip);
    if (st == KILN_OK) st = kiln_vk_pipeline_get(ctx, gpu, &fdesc, &fp);
    if (st == KILN_OK) st = kiln_vk_buffer_create(ctx, gpu, threads * 16u, KILN_VK_MEM_DEVICE, &s.points);
    if (st == KILN_OK) st = kiln_vk_buffer_create(ctx, gpu, acc_words * 4u, KILN_VK_MEM_DEVICE, &s.packed);
    if (st == KILN_OK) st = kiln_vk_buffer_create(ctx, gpu, acc_words * 8u, KILN_VK_MEM_DEVICE, &s.carry);
    if (st == KILN_OK) st = kiln_vk_io_create(ctx, gpu, (VkDeviceSize)words * 4u, 0, &s.xforms);
    if (st == KILN_OK) st = kiln_vk_io_create(ctx, gpu, 512u * 16u, 0, &s.palette);
    if (st == KILN_OK) st = kiln_vk_io_create(ctx, gpu, 16u, 1, &s.counters);
    if (st == KILN_OK) st = kiln_vk_io_create(ctx, gpu, buckets * 16u, 1, &s.out);
    int xaos = 0;
    if (st == KILN_OK) {
        float *w = kiln_vk_io_map(&s.xforms);
        memset(w, 0, (size_t)words * 4u);
        st = put_tables(ctx, flame, n, w, &xaos);
        uint32_t rec = KF_TAB_ACC + (n + 1) * n;
        for (uint32_t i = 0; st == KILN_OK && i < flame->num_xforms; i++) {
            memcpy(&w[KF_TAB_OFFSETS + i], &rec, 4);
            rec += put_record(w, rec, &flame->xforms[i]);
        }
        if (st == KILN_OK) st = kiln_vk_buffer_flush(ctx, gpu, io_host(&s.xforms));
    }
    if (st == KILN_OK) {
        /* dmap = palette * 255 (as the CPU renderer computes it, in double), then its truncation */
        float *p = kiln_vk_io_map(&s.palette);
        for (int i = 0; i < 256; i++)
            for (int c = 0; c < 4; c++) {
                double d = (double)flame->palette[i][c] * 255.0;
                p[i * 4 + c] = (float)d;
                p[1024 + i * 4 + c] = (float)(uint32_t)(d > 0 ? d : 0);
            }
        st = kiln_vk_buffer_flush(ctx, gpu, io_host(&s.palette));
    }

    kf_push push;
    memset(&push, 0, sizeof push);
    push.n = n;
    push.final_rec = 0;
    if (flame->final_xform >= 0) {
        uint32_t off;
        memcpy(&off, (float *)kiln_vk_io_map(&s.xforms) + KF_TAB_OFFSETS + n, 4);
        push.final_rec = off;
        push.final_opacity = (float)flame->xforms[flame->final_xform].opacity;
    }
    push.flags = (xaos ? 1u : 0u) | (flame->palette_linear ? 2u : 0u) | (setup->rotated ? 4u : 0u) |
                 (o.per_lane_choice ? 16u : 0u) | (o.no_shuffle ? 32u : 0u) | (o.sat_level > 0.0 ? 128u : 0u) |
                 (o.chroma_2x2 ? 256u : 0u);
    if (o.sat_level > 0.0) {
        /* the A total at which k1 / 255 * ln(1 + A * k2) reaches sat_level, in word-1 wraps (65536 A units) */
        double a_sat = (exp(o.sat_level * 255.0 / setup->k1) - 1.0) / setup->k2;
        double wraps = ceil(a_sat * KF_UNITS / 65536.0);
        uint32_t thr = !(wraps >= 1.0) ? 1u : wraps > 16777215.0 ? 16777215u : (uint32_t)wraps;
        push.pad[2] = thr | (o.sat_thin_log2 << 24);
    }
    push.seed_lo = (uint32_t)setup->seed;
    push.seed_hi = (uint32_t)(setup->seed >> 32) ^ 0x5bd1e995u;
    push.hist_w = setup->hist_w;
    push.hist_h = setup->hist_h;
    push.xmin = (float)setup->bounds[0];
    push.ymin = (float)setup->bounds[1];
    push.xmax = (float)setup->bounds[2];
    push.ymax = (float)setup->bounds[3];
    push.sx = (float)setup->to_hist[0];
    push.sy = (float)setup->to_hist[1];
    /* flam3's camera rotation: rot = [[cos(-t), sin(-t)], [-sin(-t), cos(-t)]] about the centre,
     * p' = (dx * rot00 + dy * rot10, dx * rot01 + dy * rot11) */
    push.r00 = (float)setup->rot_cos;
    push.r01 = (float)setup->rot_sin;
    push.r10 = (float)-setup->rot_sin;
    push.r11 = (float)setup->rot_cos;
    push.cx = (float)flame->center[0];
    push.cy = (float)flame->center[1];

    const kiln_vk_binding ib[KF_BINDINGS] = {{.buffer = s.points.buffer},  {.buffer = s.xforms.dev.buffer},
                                             {.buffer = s.palette.dev.buffer}, {.buffer = s.packed.buffer},
                                             {.buffer = s.carry.buffer},   {.buffer = s.counters.dev.buffer}};
    const uint64_t target = setup->nsamples;
    uint64_t done = 0, since_flush = 0, lane_rounds = 0;
    uint32_t launch = 0, seeded = groups;
    while (st == KILN_OK && done < target) {
        /* rounds for this launch from the measured rate of counted samples per lane-round */
        double rate = lane_rounds ? (double)done / (double)lane_rounds : 1.0;
        if (rate < 0.01) rate = 0.01;
        uint64_t want = (uint64_t)ceil((double)(target - done) / (rate * (double)threads));
        uint32_t rounds = want > max_rounds ? max_rounds : (uint32_t)(want ? want : 1);
        /* the last launches aim at 90 % of what is missing, so the rate's launch-to-launch variation
         * (xaos rejections, bad-value retries) cannot overshoot the sample count by more than a round */
        if (want <= max_rounds && want > 1) {
            double aim = 0.9 * (double)(target - done) / (rate * (double)threads);
            rounds = aim >= 1.0 ? (uint32_t)aim : 1u;
        }
        /* A launch plots at least one round of every lane it runs: when one round of all lanes
         * would overshoot (small renders on a large GPU), run only the workgroups still needed.
         * Lanes are seeded by launch 0, so later launches never run more workgroups than it did. */
        uint32_t g_now = groups;
        if (want <= 1) {
            uint64_t need = (uint64_t)ceil((double)(target - done) / (rate * (double)ls));
            if (need < g_now) g_now = need ? (uint32_t)need : 1u;
        }
        if (launch > 0 && g_now > seeded) g_now = seeded;
        uint32_t f = launch == 0 ? fuse : 0;
        push.rounds = rounds + f;
        push.fuse = f;
        push.launch = launch;
        push.flags = (push.flags & ~8u) | (launch == 0 ? 8u : 0u);
        kiln_vk_cmd cmd;
        st = kiln_vk_cmd_begin(ctx, gpu, 1, &cmd);
        if (st != KILN_OK) break;
        if (launch == 0) {
            kiln_vk_cmd_upload(&cmd, &s.xforms, 0);
            kiln_vk_cmd_upload(&cmd, &s.palette, 0);
            vkCmdFillBuffer(cmd.cb, s.packed.buffer, 0, VK_WHOLE_SIZE, 0);
            vkCmdFillBuffer(cmd.cb, s.carry.buffer, 0, VK_WHOLE_SIZE, 0);
            vkCmdFillBuffer(cmd.cb, s.out.dev.buffer, 0, VK_WHOLE_SIZE, 0);
        } else {
            compute_to_transfer(&cmd);
        }
        vkCmdFillBuffer(cmd.cb, s.counters.dev.buffer, 0, VK_WHOLE_SIZE, 0);
        kiln_vk_cmd_transfer_to_compute(cmd.cb);
        kiln_vk_cmd_timestamp(&cmd, 0);
        st = kiln_vk_cmd_dispatch(ctx, &cmd, ip, ib, &push, g_now, 1, 1);
        kiln_vk_cmd_timestamp(&cmd, 1);
        kiln_vk_cmd_barrier(&cmd);
        kiln_vk_cmd_download(&cmd, &s.counters, 16);
        double ms = 0.0;
        if (st == KILN_OK) st = kiln_vk_cmd_submit(ctx, &cmd, &ms);
        kiln_vk_cmd_free(&cmd);
        if (st == KILN_OK) st = kiln_vk_buffer_invalidate(ctx, gpu, io_host(&s.counters));
        if (st != KILN_OK) break;
        const uint32_t *cnt = kiln_vk_io_map(&s.counters);
        stv.kernel_ms += ms;
        stv.launches++;
        done += cnt[0];
        since_flush += cnt[0];
        stv.bad_values += cnt[1];
        lane_rounds += (uint64_t)rounds * g_now * ls;
        if (launch == 0) seeded = g_now;
        launch++;
        if (cnt[0] == 0 && launch > 4) {
            st = kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "flame \"%s\": the GPU chaos game counts no samples", flame->name);
            break;
        }
        /* stop when fewer than half a launch-round of samples is missing */
        if (target - (done < target ? done : target) < (uint64_t)(rate * (double)ls / 2.0)) break;
        if (o.hot_tile && launch == 1) {
            /* hot tile: flush launch 0 (the float histogram adds up the flushes) and pick the window
             * with the most mass for the later launches */
            st = run_flush(ctx, &s, fp, (uint32_t)buckets, 1, &stv.flush_ms);
            since_flush = 0;
            if (st == KILN_OK) st = kiln_vk_buffer_invalidate(ctx, gpu, io_host(&s.out));
            uint32_t tx = 0, ty = 0;
            if (st == KILN_OK)
                st = pick_hot_tile(ctx, kiln_vk_io_map(&s.out), setup->hist_w, setup->hist_h, tile_w, tile_h, &tx, &ty);
            if (st != KILN_OK) break;
            push.pad[0] = tx | (ty << 16);
            push.pad[1] = tile_w | (tile_h << 16);
            push.flags |= 64u;
            stv.tile_x = (int32_t)tx;
            stv.tile_y = (int32_t)ty;
        }
        if (since_flush >= KF_FLUSH_SAMPLES) {
            st = run_flush(ctx, &s, fp, (uint32_t)buckets, 0, &stv.flush_ms);
            since_flush = 0;
        }
        if (st == KILN_OK) st = kiln__progress(ctx, (float)((double)(done < target ? done : target) / (double)target));
    }
    double post_ms = 0.0;
    if (o.post_out) {
        /* (owner: flamepost) the histogram stays on the device: DE + filter + tone map there */
        kiln_flame_post_stats ps;
        memset(&ps, 0, sizeof ps);
        if (o.post_stats) ps.split = o.post_stats->split;
        if (st == KILN_OK) st = run_flush(ctx, &s, fp, (uint32_t)buckets, 0, &stv.flush_ms);
        /* the chaos game's buffers are done with (submit waited): lower the peak before the post passes */
        kiln_vk_buffer_destroy(gpu, &s.points);
        kiln_vk_buffer_destroy(gpu, &s.packed);
        kiln_vk_buffer_destroy(gpu, &s.carry);
        if (st == KILN_OK) st = kiln__flame_post_gpu_dev(ctx, flame, setup, &s.out.dev, o.post_out, &ps);
        if (st == KILN_OK && o.post_stats) *o.post_stats = ps;
        post_ms = ps.total_ms;
    } else {
        if (st == KILN_OK) st = run_flush(ctx, &s, fp, (uint32_t)buckets, 1, &stv.flush_ms);
        if (st == KILN_OK) st = kiln_vk_buffer_invalidate(ctx, gpu, io_host(&s.out));
        if (st == KILN_OK) st = kiln__flame_hist_alloc(ctx, hist, setup->hist_w, setup->hist_h);
        if (st == KILN_OK) {
            memcpy(hist->rgba, kiln_vk_io_map(&s.out), (size_t)buckets * 16u);
            hist->samples_plotted = done;
            hist->bad_values = stv.bad_values;
        }
    }
    kf_state_free(&s);
    if (st != KILN_OK) {
        kiln__flame_hist_free(hist);
        return st;
    }
    stv.samples = done;
    stv.subgroup_size = sg;
    stv.local_size = ls;
    stv.workgroups = groups;
    if (stats) *stats = stv;
    ctx->last_gpu_ms = stv.kernel_ms + stv.flush_ms + post_ms;
    return KILN_OK;
}

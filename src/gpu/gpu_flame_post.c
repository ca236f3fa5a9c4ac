/* gpu_flame_post.c - the flame post-processing on the GPU (owner: flamepost): density estimation,
 * spatial filter and tone map of kiln__flame_tonemap (src/flame/render.c) as three compute passes over
 * the float histogram on the device (src/flame/gpu_flame.h has the contract):
 *   flame_de_prep.comp    per bucket: log scale k1 * log1p(A * k2) / A, scaled colour, DE filter index
 *                         (exact: a threshold table built on the host from the CPU's own index rule)
 *   flame_de_gather.comp  density estimation as a gather (each bucket sums the sources whose kernel
 *                         reaches it, in a fixed order: deterministic, no atomics)
 *   flame_tonemap.comp    spatial filter + gamma / vibrancy / highlight power / background -> RGBA8
 * Without density estimation (estimator_radius 0) the prep pass writes the log-scaled accumulator and
 * the gather is skipped. The tables (DE coefficients and reaches, thresholds, spatial filter) come from
 * kiln__flame_de_make / kiln__flame_spatial_kernel, the CPU tone map's own functions. */
#include "flame/gpu_flame.h"
#include "gpu/vk.h"

#include "../../shaders/flame_post_abi.glsl"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct kfp_prep_push {
    uint32_t w, h, ss, mode;
    float k1, k2;
    uint32_t ntab, pad;
} kfp_prep_push;
_Static_assert(sizeof(kfp_prep_push) == 32, "prep push layout");

typedef struct kfp_gather_push {
    uint32_t w, h, ss, reach, ks, pad[3];
} kfp_gather_push;
_Static_assert(sizeof(kfp_gather_push) == 32, "gather push layout");

typedef struct kfp_tm_push {
    uint32_t out_w, out_h, hist_w, ss;
    int32_t fw, offset;
    uint32_t flags, pad0;
    float g, linrange, linpow, vib;
    float highpow, pad1, pad2, pad3;
    float bg[4];
} kfp_tm_push;
_Static_assert(sizeof(kfp_tm_push) == 80, "tonemap push layout");

static const char *label(const kiln_flame *f) { return f->name[0] ? f->name : "(unnamed)"; }

/* the CPU's filtered count of a box sum S of A values (density_estimation: sum of A / 255, scaled for
 * even supersampling) */
static double box_fs(double S, uint32_t ss, double scfact)
{
    double fs = S / 255.0;
    if (!(ss & 1)) fs *= scfact;
    return fs;
}

static float float_of_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* thr[m - 1] = the smallest non-negative float S whose DE index is >= m (m = 1..max_index); +inf when
 * no float reaches it. The index is non-decreasing in S, so a bisection over the float bit patterns
 * (ordered like the values for non-negative floats) finds it. */
static void de_thresholds(const kiln_flame *f, const kiln_flame_de *de, uint32_t ss, float *thr)
{
    const double scfact = pow(ss / (ss + 1.0), 2.0), curve = f->estimator_curve;
    const uint32_t top = 0x7f7fffffu; /* FLT_MAX */
    for (int m = 1; m <= de->max_index; m++) {
        if (kiln__flame_de_index(de, curve, box_fs(float_of_bits(top), ss, scfact)) < m) {
            thr[m - 1] = INFINITY;
            continue;
        }
        uint32_t lo = 0, hi = top; /* index(lo) < m unless lo == 0 reaches it; index(hi) >= m */
        if (kiln__flame_de_index(de, curve, 0.0) >= m) hi = 0;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (kiln__flame_de_index(de, curve, box_fs(float_of_bits(mid), ss, scfact)) >= m)
                hi = mid;
            else
                lo = mid + 1;
        }
        thr[m - 1] = float_of_bits(hi);
    }
}

typedef struct kfp_state {
    kiln_gpu *gpu;
    kiln_vk_io thr, coefs, reach, filter, out, hist;
    kiln_vk_buffer prep, idx, acc;
} kfp_state;

static void kfp_free(kfp_state *s)
{
    if (!s->gpu) return;
    kiln_vk_io_destroy(s->gpu, &s->thr);
    kiln_vk_io_destroy(s->gpu, &s->coefs);
    kiln_vk_io_destroy(s->gpu, &s->reach);
    kiln_vk_io_destroy(s->gpu, &s->filter);
    kiln_vk_io_destroy(s->gpu, &s->out);
    kiln_vk_io_destroy(s->gpu, &s->hist);
    kiln_vk_buffer_destroy(s->gpu, &s->prep);
    kiln_vk_buffer_destroy(s->gpu, &s->idx);
    kiln_vk_buffer_destroy(s->gpu, &s->acc);
}

static kiln_vk_buffer *io_host(kiln_vk_io *io) { return io->direct ? &io->dev : &io->staging; }

/* earlier submissions' shader and transfer writes (the histogram) -> this command's shaders */
static void prior_writes_to_compute(kiln_vk_cmd *cmd)
{
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
    vkCmdPipelineBarrier(cmd->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
}

static uint32_t tiles(uint32_t n) { return (n + KFP_TILE - 1) / KFP_TILE; }

/* hist_dev: the device histogram, or NULL to upload `hist` */
static kiln_status post(kiln_context *ctx, const kiln_flame *flame, const kiln_flame_setup *setup,
                        const kiln_vk_buffer *hist_dev, const kiln_flame_hist *hist, kiln_image *out,
                        kiln_flame_post_stats *stats)
{
    kiln_flame_post_stats sv;
    memset(&sv, 0, sizeof sv);
    if (stats) {
        sv.split = stats->split;
        sv.no_shared = stats->no_shared;
    }
    if (!out) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "flame GPU post: out is NULL");
    memset(out, 0, sizeof *out);
    if (!flame || !setup || (!hist_dev && !hist))
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "flame GPU post: NULL argument");
    if (hist && (!hist->rgba || hist->width != setup->hist_w || hist->height != setup->hist_h))
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "flame GPU post: histogram does not match the set-up");
    const uint32_t W = setup->hist_w, H = setup->hist_h, ss = setup->ss;
    const uint64_t buckets = (uint64_t)W * H, pixels = (uint64_t)setup->out_w * setup->out_h;
    const int fw = setup->filter_width;
    const int offset = (int)setup->gutter - (fw - (int)ss) / 2;
    if (buckets == 0 || pixels == 0 || fw < 1 || offset < 0 ||
        (uint64_t)offset + (uint64_t)(setup->out_w - 1) * ss + fw > W ||
        (uint64_t)offset + (uint64_t)(setup->out_h - 1) * ss + fw > H)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "flame GPU post: inconsistent set-up");

    kiln_gpu *gpu;
    KILN_TRY(kiln__gpu_get(ctx, &gpu));
    const uint64_t limit = gpu->props.limits.maxStorageBufferRange;
    if (buckets * 16u > limit)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "flame \"%s\": a %ux%u histogram exceeds %s's storage buffer range",
                          label(flame), W, H, gpu->props.deviceName);
    if (hist_dev && hist_dev->size < buckets * 16u)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "flame GPU post: the device histogram is too small");

    /* host tables */
    const int de_on = flame->estimator_radius > 0;
    kiln_flame_de de;
    memset(&de, 0, sizeof de);
    double *filt = NULL;
    kiln_status st = kiln__flame_spatial_kernel(ctx, flame, setup, &filt);
    if (st == KILN_OK && de_on) st = kiln__flame_de_make(ctx, flame, ss, &de);
    if (st != KILN_OK) {
        free(filt);
        return st;
    }
    const uint32_t nfilt = (uint32_t)de.max_index + 1u; /* DE filters 0..max_index */
    uint32_t reach_max = 0;
    if (de_on) {
        if ((uint64_t)nfilt * (uint64_t)de.kernel_size * 4u > limit) {
            free(filt);
            kiln__flame_de_free(&de);
            return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "flame \"%s\": DE tables exceed the storage buffer range",
                              label(flame));
        }
        for (uint32_t k = 0; k < nfilt; k++) {
            int r = (int)ceil(de.widths[k]) - 1;
            if (r > 0 && (uint32_t)r > reach_max) reach_max = (uint32_t)r;
        }
        /* the prep pass packs index | reach << KFP_REACH_SHIFT into one word */
        if (reach_max > 255u || nfilt >= KFP_INDEX_MASK) {
            free(filt);
            kiln__flame_de_free(&de);
            return kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                              "flame \"%s\": %u DE filters of reach up to %u are beyond the GPU path", label(flame),
                              nfilt, reach_max);
        }
    }
    sv.de_reach = reach_max;

    kfp_state s;
    memset(&s, 0, sizeof s);
    s.gpu = gpu;
    const kiln_vk_pipeline *pp = NULL, *gp = NULL, *tp = NULL;
    /* the gather stages its sources' words in shared memory when the tile fits and the reach is short:
     * on the H100 (2026-11-25, `gpu_flame --post-only`) the shared tile won at reach 9 (ss 1: 3.8-5.5 vs
     * 4.1-5.8 ms) and lost at reach 18 (ss 2: 49-72 vs 34-52 ms), so it is used up to reach 12 */
    const uint64_t src_w = KFP_TILE + 2u * (uint64_t)reach_max;
    const uint64_t tile_bytes = src_w * src_w * 4u;
    uint32_t halo = !sv.no_shared && reach_max <= 12u && tile_bytes <= KFP_SHARED_MAX &&
                            tile_bytes <= gpu->props.limits.maxComputeSharedMemorySize
                        ? reach_max
                        : 0u;
    kiln_vk_pipeline_desc pdesc = {.shader = "flame_de_prep", .local_size = KFP_TILE, .nbindings = 5, .push_size = 32};
    kiln_vk_pipeline_desc gdesc = {.shader = "flame_de_gather", .local_size = KFP_TILE, .nbindings = 4, .push_size = 32,
                                   .spec = &halo, .nspec = 1};
    kiln_vk_pipeline_desc tdesc = {.shader = "flame_tonemap", .local_size = KFP_TILE, .nbindings = 3, .push_size = 80};
    st = kiln_vk_pipeline_get(ctx, gpu, &pdesc, &pp);
    if (st == KILN_OK && de_on) st = kiln_vk_pipeline_get(ctx, gpu, &gdesc, &gp);
    if (st == KILN_OK) st = kiln_vk_pipeline_get(ctx, gpu, &tdesc, &tp);
    /* prep holds the accumulator itself without DE */
    if (st == KILN_OK) st = kiln_vk_buffer_create(ctx, gpu, buckets * 16u, KILN_VK_MEM_DEVICE, &s.prep);
    if (st == KILN_OK && de_on) st = kiln_vk_buffer_create(ctx, gpu, buckets * 4u, KILN_VK_MEM_DEVICE, &s.idx);
    if (st == KILN_OK && de_on) st = kiln_vk_buffer_create(ctx, gpu, buckets * 16u, KILN_VK_MEM_DEVICE, &s.acc);
    if (st == KILN_OK && !de_on) st = kiln_vk_buffer_create(ctx, gpu, 16u, KILN_VK_MEM_DEVICE, &s.idx); /* unused */
    const uint32_t ntab = de_on ? (uint32_t)de.max_index : 0u;
    if (st == KILN_OK) st = kiln_vk_io_create(ctx, gpu, 4u * (ntab ? ntab : 1u), 0, &s.thr);
    if (st == KILN_OK && de_on) st = kiln_vk_io_create(ctx, gpu, 4u * (uint64_t)nfilt * de.kernel_size, 0, &s.coefs);
    if (st == KILN_OK) st = kiln_vk_io_create(ctx, gpu, 4u * (uint64_t)nfilt, 0, &s.reach);
    if (st == KILN_OK) st = kiln_vk_io_create(ctx, gpu, 4u * (uint64_t)fw * fw, 0, &s.filter);
    if (st == KILN_OK) st = kiln_vk_io_create(ctx, gpu, 4u * pixels, 1, &s.out);
    if (st == KILN_OK && !hist_dev) st = kiln_vk_io_create(ctx, gpu, buckets * 16u, 0, &s.hist);
    if (st == KILN_OK) {
        float *t = kiln_vk_io_map(&s.thr);
        t[0] = INFINITY;
        if (de_on) de_thresholds(flame, &de, ss, t);
        st = kiln_vk_buffer_flush(ctx, gpu, io_host(&s.thr));
    }
    if (st == KILN_OK) {
        int32_t *r = kiln_vk_io_map(&s.reach);
        r[0] = 0;
        if (de_on) {
            float *c = kiln_vk_io_map(&s.coefs);
            for (uint64_t i = 0; i < (uint64_t)nfilt * de.kernel_size; i++) c[i] = (float)de.coefs[i];
            for (uint32_t k = 0; k < nfilt; k++) r[k] = (int32_t)ceil(de.widths[k]) - 1;
            st = kiln_vk_buffer_flush(ctx, gpu, io_host(&s.coefs));
        }
        if (st == KILN_OK) st = kiln_vk_buffer_flush(ctx, gpu, io_host(&s.reach));
    }
    if (st == KILN_OK) {
        float *f = kiln_vk_io_map(&s.filter);
        for (int i = 0; i < fw * fw; i++) f[i] = (float)filt[i];
        st = kiln_vk_buffer_flush(ctx, gpu, io_host(&s.filter));
    }
    if (st == KILN_OK && !hist_dev) {
        memcpy(kiln_vk_io_map(&s.hist), hist->rgba, (size_t)buckets * 16u);
        st = kiln_vk_buffer_flush(ctx, gpu, io_host(&s.hist));
    }
    free(filt);
    const uint32_t ks = de_on ? (uint32_t)de.kernel_size : 0u;
    kiln__flame_de_free(&de);

    /* pushes */
    kfp_prep_push pq = {W, H, ss, de_on ? KFP_MODE_DE : KFP_MODE_LOG, (float)setup->k1, (float)setup->k2, ntab, 0};
    kfp_gather_push gq = {W, H, ss, reach_max, ks, {0, 0, 0}};
    kfp_tm_push tq;
    memset(&tq, 0, sizeof tq);
    tq.out_w = setup->out_w;
    tq.out_h = setup->out_h;
    tq.hist_w = W;
    tq.ss = ss;
    tq.fw = fw;
    tq.offset = offset;
    const double g = 1.0 / flame->gamma, lr = flame->gamma_threshold;
    tq.flags = (flame->vibrancy != 1.0 ? KFP_TM_VIB : 0u) | (flame->highlight_power >= 0.0 ? KFP_TM_HIGHPOW : 0u);
    tq.g = (float)g;
    tq.linrange = (float)lr;
    tq.linpow = lr > 0 ? (float)(pow(lr, g) / lr) : 0.0f;
    tq.vib = (float)flame->vibrancy;
    tq.highpow = (float)flame->highlight_power;
    for (int k = 0; k < 3; k++) tq.bg[k] = (float)(flame->background[k] * 256.0);

    const kiln_vk_buffer *hb = hist_dev ? hist_dev : &s.hist.dev;
    const kiln_vk_binding pb[5] = {{.buffer = hb->buffer, .range = buckets * 16u}, {.buffer = s.prep.buffer},
                                   {.buffer = s.idx.buffer}, {.buffer = s.thr.dev.buffer}, {.buffer = s.reach.dev.buffer}};
    const kiln_vk_binding gb[4] = {{.buffer = s.prep.buffer}, {.buffer = s.idx.buffer}, {.buffer = s.coefs.dev.buffer},
                                   {.buffer = s.acc.buffer}};
    const kiln_vk_binding tb[3] = {{.buffer = de_on ? s.acc.buffer : s.prep.buffer}, {.buffer = s.filter.dev.buffer},
                                   {.buffer = s.out.dev.buffer}};

    /* pass 0: prep, 1: gather (DE only), 2: tone map. One submission, or one per pass when split. */
    kiln_vk_cmd cmd;
    memset(&cmd, 0, sizeof cmd);
    int open = 0;
    double *pass_ms[3] = {&sv.prep_ms, &sv.de_ms, &sv.tonemap_ms};
    for (int pass = 0; pass < 3 && st == KILN_OK; pass++) {
        if (pass == 1 && !de_on) continue;
        const int last = pass == 2;
        if (!open) {
            st = kiln_vk_cmd_begin(ctx, gpu, 3, &cmd);
            if (st != KILN_OK) break;
            open = 1;
            if (pass == 0) {
                prior_writes_to_compute(&cmd);
                kiln_vk_cmd_upload(&cmd, &s.thr, 0);
                if (de_on) kiln_vk_cmd_upload(&cmd, &s.coefs, 0);
                kiln_vk_cmd_upload(&cmd, &s.reach, 0);
                kiln_vk_cmd_upload(&cmd, &s.filter, 0);
                if (!hist_dev) kiln_vk_cmd_upload(&cmd, &s.hist, 0);
            }
            kiln_vk_cmd_timestamp(&cmd, 0);
        }
        if (pass == 0)
            st = kiln_vk_cmd_dispatch(ctx, &cmd, pp, pb, &pq, tiles(W), tiles(H), 1);
        else if (pass == 1)
            st = kiln_vk_cmd_dispatch(ctx, &cmd, gp, gb, &gq, tiles(W), tiles(H), 1);
        else
            st = kiln_vk_cmd_dispatch(ctx, &cmd, tp, tb, &tq, tiles(setup->out_w), tiles(setup->out_h), 1);
        if (st != KILN_OK) break;
        if (last || sv.split) {
            kiln_vk_cmd_timestamp(&cmd, 1);
            kiln_vk_cmd_barrier(&cmd);
            if (last) kiln_vk_cmd_download(&cmd, &s.out, 4u * pixels);
            double ms = 0.0;
            st = kiln_vk_cmd_submit(ctx, &cmd, &ms);
            kiln_vk_cmd_free(&cmd);
            open = 0;
            sv.total_ms += ms;
            if (sv.split) *pass_ms[pass] = ms;
        } else {
            kiln_vk_cmd_barrier(&cmd);
        }
    }
    if (open) kiln_vk_cmd_free(&cmd);
    if (st == KILN_OK) st = kiln_vk_buffer_invalidate(ctx, gpu, io_host(&s.out));
    if (st == KILN_OK) st = kiln_image_alloc(ctx, out, setup->out_w, setup->out_h, KILN_PIXEL_U8);
    if (st == KILN_OK) {
        memcpy(out->pixels, kiln_vk_io_map(&s.out), (size_t)pixels * 4u);
        out->channels = 3;
        out->srgb = 1;
    }
    kfp_free(&s);
    if (st != KILN_OK) {
        kiln_image_free(out);
        return st;
    }
    if (stats) *stats = sv;
    return KILN_OK;
}

kiln_status kiln__flame_post_gpu(kiln_context *ctx, const kiln_flame *flame, const kiln_flame_setup *setup,
                                 const kiln_flame_hist *hist, kiln_image *out, kiln_flame_post_stats *stats)
{
    if (!hist) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "flame GPU post: hist is NULL");
    kiln_flame_post_stats sv;
    memset(&sv, 0, sizeof sv);
    if (stats) sv = *stats;
    KILN_TRY(post(ctx, flame, setup, NULL, hist, out, &sv));
    ctx->last_gpu_ms = sv.total_ms;
    if (stats) *stats = sv;
    return KILN_OK;
}

kiln_status kiln__flame_post_gpu_dev(kiln_context *ctx, const kiln_flame *flame, const kiln_flame_setup *setup,
                                     const struct kiln_vk_buffer *hist_dev, kiln_image *out,
                                     kiln_flame_post_stats *stats)
{
    if (!hist_dev) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "flame GPU post: hist_dev is NULL");
    return post(ctx, flame, setup, hist_dev, NULL, out, stats);
}

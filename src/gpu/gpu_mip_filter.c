/* gpu_mip_filter.c - the quality mipmap filters on the GPU (Kaiser, Lanczos-3, Mitchell; also the box
 * filter for normal maps): kiln__gpu_mip sends here every job whose filter is not the box or that is a
 * normal map (the box strategies of gpu_mip.c do neither).
 *
 * The CPU reference filters LEVEL BY LEVEL (mip.h rule 6): level m from the fp32 level m-1, vertical
 * pass first. Here each level is two dispatches of shaders/mip_filter.comp (vertical into an fp32
 * intermediate of source width x destination height, then horizontal into the fp32 chain and the
 * quantised output), for every texture of the batch at once (z = texture). The tap tables are made by
 * the CPU's own kiln__mip_axis_build (weights in double, normalised, rounded to fp32, edge mode
 * applied) and uploaded unchanged, so the GPU sums the same fp32 products in the same order; the
 * shader corrects divisions and square roots to correct rounding. Result: the same bits as the CPU
 * wherever fp32 add/multiply are IEEE and no denormals occur (lavapipe: every test case byte-identical,
 * tests/unit/test_gpu_mip_filter.c); the contract stays +-1 LSB (mip.h).
 *
 * kiln__gpu_mip_filter_record (gpu_mip.h) records the same passes into a caller's command buffer and
 * leaves the quantised levels on the device for gpu_mip_encode.c (kiln_encode_mips, issue 5).
 *
 * Alpha coverage (helper alphacov): the chain of every level stays on the device (MIPF_CHAIN_ALL),
 * gpu_mip_alpha.c counts it and patches the scaled alpha into the outputs before the download.
 *
 * 16-bit images arrive decoded (RGBA32F, the CPU decoder's floats); kiln__gpu_mip16_filter_record (at the
 * end, helper mip16b) takes the base decoded on the device and, for 16-bit normal maps, reads it as
 * n = 2v - 1 and writes 0.5 n + 0.5 as for 8-bit ones (MIPF_NORMAL_UNORM).
 *
 * Box filter with alpha coverage and the subgroup / pyramid / single-pass strategies (helper mipfall,
 * cov_tiled): gpu_mip.c's tiled kernels make the fp32 chain on the device, gpu_mip_alpha.c scales it and
 * writes the outputs (RGBA8, RGBA16F, RGBA32F).
 *
 * Not here (the caller falls back to the CPU under strategy AUTO): R8/RG8 outputs (mip.c decides before
 * calling), and strategies other than AUTO and per-level for the quality filters and normal maps (the
 * tiled strategies are box-only designs) and blit with alpha coverage (no fp32 chain). */
#include "gpu/gpu_mip.h"
#include "gpu/gpu_mip16.h"
#include "gpu/gpu_mip_alpha_vk.h"
#include "image/color.h"
#include "mip/mip.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* job table layout and flags: shaders/mip_common.glsl, mip_filter.comp */
#define P_LEVEL 8u
#define P_TEX 392u
#define MIPF_DECODE_SRGB 1u
#define MIPF_IN_F32 2u
#define MIPF_OUT_F16 4u
#define MIPF_OUT_F32 8u
#define MIPF_OUT_SRGB 16u
#define MIPF_NORMAL 32u
#define MIPF_NORMAL_UNORM 64u
#define MIPF_RECON_Z 128u
#define MIPF_EPS 256u
#define MIPF_CHAIN_ALL 512u

#define MF_LOCAL 128u
#define MF_BINDINGS 7u
#define MF_MAX_LEVELS 32u
#define MF_MAX_TEXTURES 16384u

typedef struct mf_push {
    uint32_t level, pass, per, total, stride;
} mf_push;

static kiln_status check_range(kiln_context *ctx, const kiln_gpu *gpu, uint64_t bytes, const char *what,
                               const kiln_image *b0, uint32_t count)
{
    if (bytes > gpu->props.limits.maxStorageBufferRange || bytes >= ((uint64_t)1 << 34))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                          "GPU mipmap filters: the %s of %u image(s) of %ux%u needs %llu bytes, over %s's storage-buffer "
                          "range (%u bytes)",
                          what, count, b0->width, b0->height, (unsigned long long)bytes, gpu->props.deviceName,
                          gpu->props.limits.maxStorageBufferRange);
    return KILN_OK;
}

static kiln_status io_flush(kiln_context *ctx, kiln_gpu *gpu, kiln_vk_io *io)
{
    return kiln_vk_buffer_flush(ctx, gpu, io->direct ? &io->dev : &io->staging);
}

static const char *filter_name(int f)
{
    static const char *names[] = {"box", "kaiser", "lanczos3", "mitchell"};
    return f >= 0 && f <= 3 ? names[f] : "?";
}

static const char *strategy_name(int s)
{
    static const char *names[] = {"auto", "blit", "per-level", "subgroup", "pyramid", "single-pass", "baseline"};
    return s >= 0 && s <= 6 ? names[s] : "?";
}

/* Appends the tap table of one axis (first[dst + 1], then (index, weight bits) pairs) at words[*pos]. */
static void put_axis(uint32_t *words, size_t *pos, const kiln__mip_axis *a)
{
    size_t p = *pos;
    for (uint32_t o = 0; o <= a->dst; o++) words[p++] = a->first[o];
    for (uint32_t k = 0; k < a->first[a->dst]; k++) {
        uint32_t wb;
        memcpy(&wb, &a->weight[k], sizeof wb);
        words[p++] = a->index[k];
        words[p++] = wb;
    }
    *pos = p;
}

typedef struct mf_copy_job {
    const kiln__gpu_mip_job *job;
    const uint8_t *src;
    const uint32_t *table;
    const uint32_t *w, *h;
    uint32_t L, out_words;
    size_t bpt;
} mf_copy_job;

static void mf_copy_out(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    const mf_copy_job *c = user;
    for (size_t i = begin; i < end; i++) {
        uint32_t z = (uint32_t)(i / (c->L - 1)), m = (uint32_t)(i % (c->L - 1)) + 1;
        size_t off = ((size_t)z * c->out_words + c->table[P_LEVEL + 4 * m + 3]) * 4;
        memcpy(c->job->dst[(size_t)z * c->job->levels + m], c->src + off, (size_t)c->w[m] * c->h[m] * c->bpt);
    }
}

/* ---- alpha coverage (mip.h rule 8; the CPU's run_chain / pass_threshold / base_coverage) ---- */

/* Describes output levels 1..L-1 of every image for gpu_mip_alpha.c (helper alphacov): the fp32 chain
 * (MIPF_CHAIN_ALL: every level kept) is counted on the device, the scale is the CPU's
 * kiln__mip_coverage_scale decision with the same target, and alpha' = min(1, s * clamp(a, 0, 1)) is
 * written into the quantised outputs as the CPU's sinks store it; colour is not touched. */
static kiln_status coverage_setup(kiln_context *ctx, kiln_gpu *gpu, const kiln__gpu_mip_job *job, const uint32_t *table,
                                  const uint32_t *w, const uint32_t *h, uint32_t L, uint64_t chain_v, uint64_t out_w,
                                  VkBuffer chain, VkBuffer out, kiln__gpu_mip_alpha *a)
{
    const float ref = job->alpha_coverage_ref;
    const kiln_image *b0 = &job->images[0];
    const uint64_t n0 = (uint64_t)b0->width * b0->height;
    KILN_TRY(kiln__gpu_mip_alpha_init(ctx, gpu, a, job->count * (L - 1)));
    a->thr = kiln__mip_alpha_pass_threshold(job->out_kind, ref);
    a->mode = job->out_kind == 1   ? KILN_GPU_MIP_ALPHA_PATCH_U8
              : job->out_kind == 3 ? KILN_GPU_MIP_ALPHA_PATCH_F16
                                   : KILN_GPU_MIP_ALPHA_PATCH_F32; /* F32: the output's alpha is the chain's */
    a->chain = chain;
    a->out = out;
    for (uint32_t z = 0; z < job->count; z++) {
        uint64_t cov0 = 0;
        KILN_TRY(kiln__gpu_mip_alpha_base_coverage(ctx, &job->images[z], ref, &cov0));
        for (uint32_t m = 1; m < L; m++) {
            kiln__gpu_mip_alpha_pair *q = &a->pairs[(size_t)z * (L - 1) + m - 1];
            q->n = w[m] * h[m];
            q->chain_vec4 = (uint64_t)z * chain_v + table[P_LEVEL + 4 * m + 2];
            q->out_word = (uint64_t)z * out_w + table[P_LEVEL + 4 * m + 3];
            q->target = (2 * cov0 * q->n + n0) / (2 * n0); /* round(cov0 * n / n0) */
        }
    }
    return kiln__gpu_mip_alpha_prepare(ctx, a);
}

/* KILN_GPU_MIP_ALPHA_HOST=1 (bench and testing aid, helper alphacov): the former route, kept to measure
 * against: the fp32 chain downloaded and every level's alpha scaled on one host thread with the CPU's
 * kiln__mip_coverage_scale (the same bytes). */
static kiln_status apply_coverage_host(kiln_context *ctx, const kiln__gpu_mip_job *job, const float *chain,
                                       const uint32_t *table, const uint32_t *w, const uint32_t *h, uint32_t L,
                                       uint64_t chain_v)
{
    const float ref = job->alpha_coverage_ref;
    const kiln_image *b0 = &job->images[0];
    const size_t n0 = (size_t)b0->width * b0->height, n1 = (size_t)w[1] * h[1];
    uint32_t *scratch = kiln__malloc(ctx, (n1 + 65536) * sizeof *scratch);
    if (!scratch) return KILN_ERR_OUT_OF_MEMORY;
    const float thr = kiln__mip_alpha_pass_threshold(job->out_kind, ref);
    for (uint32_t z = 0; z < job->count; z++) {
        const size_t cov0 = kiln__mip_base_coverage(&job->images[z], ref);
        for (uint32_t m = 1; m < L; m++) {
            size_t n = (size_t)w[m] * h[m];
            const float *lv = chain + ((size_t)z * chain_v + table[P_LEVEL + 4 * m + 2]) * 4;
            uint64_t target = ((uint64_t)2 * cov0 * n + n0) / ((uint64_t)2 * n0); /* round(cov0 * n / n0) */
            float s = kiln__mip_coverage_scale(lv + 3, 4, n, (size_t)target, thr, scratch);
            uint8_t *d = job->dst[(size_t)z * job->levels + m];
            for (size_t i = 0; i < n; i++) {
                float a = lv[i * 4 + 3];
                a = a > 0.0f ? (a < 1.0f ? a : 1.0f) : 0.0f;
                a = s * a;
                a = a < 1.0f ? a : 1.0f;
                if (job->out_kind == 1) d[i * 4 + 3] = kiln__mip_unorm8(a);
                else if (job->out_kind == 3) ((uint16_t *)d)[i * 4 + 3] = kiln__float_to_half(a);
                else ((float *)d)[i * 4 + 3] = a;
            }
        }
    }
    free(scratch);
    return KILN_OK;
}

typedef struct mf_rows_job {
    uint8_t *dst;
    const uint8_t *src;
    size_t row;
} mf_rows_job;

static void mf_copy_rows(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    const mf_rows_job *c = user;
    memcpy(c->dst + begin * c->row, c->src + begin * c->row, (end - begin) * c->row);
}

/* Everything one filter run owns (host tables, device buffers, the pipeline) and its geometry. */
typedef struct mf_res {
    kiln_gpu *gpu;
    uint32_t count, L, flags, stride;
    uint32_t w[MF_MAX_LEVELS], h[MF_MAX_LEVELS];
    uint32_t *table, *taps;
    size_t table_words, tap_words;
    uint64_t out_w, chain_v;
    int cov;
    kiln_vk_io prm, in, out, lut, tio;
    kiln_vk_io chain; /* device memory only (chain.dev) */
    kiln_vk_buffer inter;
    const kiln_vk_pipeline *pipe;
    /* 16-bit sources (helper mip16b, kiln__gpu_mip16_filter_record): the base written on the device by fill
     * (no host copy, no upload); unorm16: the F32 base is a decoded unorm image (MIPF_NORMAL_UNORM for normal maps) */
    kiln__gpu_mip_fill_fn fill;
    void *fill_user;
    int unorm16;
} mf_res;

static void mf_res_free(mf_res *r)
{
    kiln_gpu *gpu = r->gpu;
    if (gpu) {
        kiln_vk_io_destroy(gpu, &r->prm);
        kiln_vk_io_destroy(gpu, &r->in);
        kiln_vk_io_destroy(gpu, &r->out);
        kiln_vk_io_destroy(gpu, &r->lut);
        kiln_vk_io_destroy(gpu, &r->tio);
        kiln_vk_buffer_destroy(gpu, &r->chain.dev);
        kiln_vk_buffer_destroy(gpu, &r->inter);
    }
    free(r->taps);
    free(r->table);
    memset(r, 0, sizeof *r);
}

/* Checks the job, builds the tables and creates every buffer (base images uploaded to the mapped or
 * staging memory; the command still has to copy them). Level offsets in the output are multiples of
 * align_words. Frees nothing on failure: the caller calls mf_res_free. */
static kiln_status mf_prepare(kiln_context *ctx, kiln_gpu *gpu, const kiln__gpu_mip_job *job, uint32_t align_words,
                              int device_out, mf_res *r)
{
    const kiln_image *b0 = &job->images[0];
    const uint32_t count = job->count, L = job->levels;
    r->gpu = gpu;
    r->count = count;
    r->L = L;
    if (job->strategy != KILN_MIP_STRATEGY_AUTO && job->strategy != KILN_MIP_STRATEGY_PER_LEVEL)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                          "mipmaps: no GPU strategy for this request: strategy %s does only the box filter without "
                          "normal maps or alpha coverage; the %s filter%s%s runs on the GPU with strategy auto or "
                          "per-level",
                          strategy_name(job->strategy), filter_name(job->filter),
                          job->normal_map ? " of a normal map" : "",
                          job->alpha_coverage_ref > 0.0f ? " with alpha coverage" : "");
    if (job->filter < KILN_MIP_FILTER_BOX || job->filter > KILN_MIP_FILTER_MITCHELL ||
        (job->edge != KILN_MIP_EDGE_CLAMP && job->edge != KILN_MIP_EDGE_WRAP))
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "GPU mipmap filters: filter %d, edge mode %d", job->filter,
                          job->edge);
    if (count > MF_MAX_TEXTURES || L > MF_MAX_LEVELS || L < 2)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "GPU mipmap filters: %u images x %u levels (at most %u x %u)", count, L,
                          MF_MAX_TEXTURES, MF_MAX_LEVELS);
    const int in_f32 = b0->type == KILN_PIXEL_F32;
    uint32_t flags = (job->decode_srgb ? MIPF_DECODE_SRGB : 0) | (in_f32 ? MIPF_IN_F32 : 0) |
                     (job->out_kind == 3 ? MIPF_OUT_F16 : job->out_kind == 4 ? MIPF_OUT_F32 : 0) |
                     (job->out_srgb && job->out_kind != 3 ? MIPF_OUT_SRGB : 0) |
                     (job->filter != KILN_MIP_FILTER_BOX ? MIPF_EPS : 0);
    if (job->normal_map) {
        flags |= MIPF_NORMAL;
        if (!in_f32 || r->unorm16) flags |= MIPF_NORMAL_UNORM;
        if (b0->channels < 3) flags |= MIPF_RECON_Z;
    }
    const uint32_t wpt = job->out_kind == 4 ? 4 : job->out_kind == 3 ? 2 : 1;
    r->cov = job->alpha_coverage_ref > 0.0f;
    if (r->cov) flags |= MIPF_CHAIN_ALL;
    r->flags = flags;

    /* geometry, job table (mip_common.glsl layout), buffer sizes */
    uint32_t *w = r->w, *h = r->h;
    for (uint32_t m = 0; m < L; m++) {
        w[m] = kiln_level_dim(b0->width, m);
        h[m] = kiln_level_dim(b0->height, m);
    }
    r->table_words = P_TEX + (size_t)count;
    uint32_t *table = r->table = kiln__calloc(ctx, r->table_words, sizeof *table);
    if (!table) return KILN_ERR_OUT_OF_MEMORY;
    uint64_t out_w = 0, chain_v = 0, inter_v = 0;
    int any_weighted = 0;
    for (uint32_t z = 0; z < count; z++) {
        int wt = job->weighted && job->weighted[z] && !job->normal_map;
        table[P_TEX + z] = (uint32_t)wt;
        any_weighted |= wt;
    }
    const uint32_t stride = r->stride = any_weighted ? 2 : 1;
    for (uint32_t m = 0; m < L; m++) {
        table[P_LEVEL + 4 * m] = w[m];
        table[P_LEVEL + 4 * m + 1] = h[m];
        if (m >= 1) {
            table[P_LEVEL + 4 * m + 3] = (uint32_t)out_w;
            out_w += (uint64_t)w[m] * h[m] * wpt;
            if (align_words > 1) out_w = (out_w + align_words - 1) / align_words * align_words;
            uint64_t iv = (uint64_t)w[m - 1] * h[m] * stride;
            if (iv > inter_v) inter_v = iv;
        }
        if (m >= 1 && (m + 1 < L || r->cov)) {
            table[P_LEVEL + 4 * m + 2] = (uint32_t)chain_v;
            chain_v += (uint64_t)w[m] * h[m];
        }
    }
    table[0] = L;
    table[1] = count;
    table[2] = flags;
    table[3] = 0;
    table[4] = b0->width * b0->height;
    table[5] = (uint32_t)chain_v;
    table[6] = (uint32_t)out_w;
    r->out_w = out_w;
    r->chain_v = chain_v;

    const size_t texel_bytes = in_f32 ? 16 : 4;
    const uint64_t in_bytes = (uint64_t)b0->width * b0->height * texel_bytes * count;
    const uint64_t out_bytes = out_w * 4 * count, chain_bytes = chain_v * 16 * count, inter_bytes = inter_v * 16 * count;
    KILN_TRY(check_range(ctx, gpu, in_bytes, "base images", b0, count));
    KILN_TRY(check_range(ctx, gpu, out_bytes, "output levels", b0, count));
    KILN_TRY(check_range(ctx, gpu, chain_bytes, "fp32 chain", b0, count));
    KILN_TRY(check_range(ctx, gpu, inter_bytes, "fp32 intermediate", b0, count));

    /* tap tables of every level (the CPU's, mip.h rule 6): axes[2 m + 0 / 1] = x / y of level m */
    kiln__mip_axis axes[2 * MF_MAX_LEVELS];
    memset(axes, 0, sizeof axes);
    kiln_status st = KILN_OK;
    size_t tap_words = 2 * (size_t)L, pos = tap_words;
    for (uint32_t m = 1; m < L && st == KILN_OK; m++) {
        for (uint32_t axis = 0; axis < 2 && st == KILN_OK; axis++) {
            kiln__mip_axis *a = &axes[2 * m + axis];
            st = kiln__mip_axis_build(ctx, a, axis ? h[m - 1] : w[m - 1], (kiln_mip_filter)job->filter,
                                      (kiln_mip_edge)job->edge, 0.0f);
            if (st != KILN_OK) break;
            if (a->dst != (axis ? h[m] : w[m]))
                st = kiln__fail(ctx, KILN_ERR_INTERNAL, "GPU mipmap filters: axis of level %u has %u outputs", m, a->dst);
            tap_words += (size_t)a->dst + 1 + 2 * (size_t)a->first[a->dst];
        }
    }
    if (st == KILN_OK && tap_words * 4 > gpu->props.limits.maxStorageBufferRange)
        st = kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "GPU mipmap filters: tap tables of %zu words", tap_words);
    if (st == KILN_OK) {
        r->taps = kiln__calloc(ctx, tap_words, sizeof *r->taps);
        if (!r->taps) st = KILN_ERR_OUT_OF_MEMORY;
    }
    for (uint32_t m = 1; m < L && st == KILN_OK; m++)
        for (uint32_t axis = 0; axis < 2; axis++) {
            r->taps[2 * m + axis] = (uint32_t)pos;
            put_axis(r->taps, &pos, &axes[2 * m + axis]);
        }
    for (uint32_t i = 0; i < 2 * MF_MAX_LEVELS; i++) kiln__mip_axis_free(&axes[i]);
    r->tap_words = tap_words;
    if (st != KILN_OK) return st;

    /* buffers */
    KILN_TRY(kiln_vk_io_create(ctx, gpu, (VkDeviceSize)r->table_words * 4, 0, &r->prm));
    memcpy(kiln_vk_io_map(&r->prm), table, r->table_words * 4);
    KILN_TRY(io_flush(ctx, gpu, &r->prm));
    KILN_TRY(kiln_vk_io_create(ctx, gpu, (VkDeviceSize)tap_words * 4, 0, &r->tio));
    memcpy(kiln_vk_io_map(&r->tio), r->taps, tap_words * 4);
    KILN_TRY(io_flush(ctx, gpu, &r->tio));
    KILN_TRY(kiln_vk_io_create(ctx, gpu, 1024 * 4, 0, &r->lut));
    float *l = kiln_vk_io_map(&r->lut);
    kiln__gpu_mip_lut(l, (flags & MIPF_DECODE_SRGB) != 0);
    KILN_TRY(io_flush(ctx, gpu, &r->lut));
    if (r->fill) /* 16-bit base made on the device (mip16b) */
        KILN_TRY(kiln_vk_buffer_create(ctx, gpu, in_bytes, KILN_VK_MEM_DEVICE, &r->in.dev));
    else
        KILN_TRY(kiln_vk_io_create(ctx, gpu, in_bytes, 0, &r->in));
    uint8_t *p = r->fill ? NULL : kiln_vk_io_map(&r->in);
    size_t img_bytes = (size_t)b0->width * b0->height * texel_bytes;
    for (uint32_t i = 0; i < count && !r->fill; i++) {
        mf_rows_job cj = {p + i * img_bytes, job->images[i].pixels, img_bytes / b0->height};
        KILN_TRY(kiln__parallel_for(ctx, b0->height, 64, mf_copy_rows, &cj)); /* the base into mapped memory */
    }
    if (!r->fill) KILN_TRY(io_flush(ctx, gpu, &r->in));
    if (device_out) /* read in place by later passes, never downloaded: no staging buffer */
        KILN_TRY(kiln_vk_buffer_create(ctx, gpu, out_bytes ? out_bytes : 16, KILN_VK_MEM_DEVICE, &r->out.dev));
    else
        KILN_TRY(kiln_vk_io_create(ctx, gpu, out_bytes ? out_bytes : 16, 1, &r->out));
    KILN_TRY(kiln_vk_buffer_create(ctx, gpu, chain_bytes ? chain_bytes : 16, KILN_VK_MEM_DEVICE, &r->chain.dev));
    KILN_TRY(kiln_vk_buffer_create(ctx, gpu, inter_bytes ? inter_bytes : 16, KILN_VK_MEM_DEVICE, &r->inter));
    kiln_vk_pipeline_desc d = {.shader = "mip_filter", .local_size = MF_LOCAL, .nbindings = MF_BINDINGS,
                               .push_size = sizeof(mf_push), .subgroup_size = job->subgroup_size};
    return kiln_vk_pipeline_get(ctx, gpu, &d, &r->pipe);
}

/* Records the uploads and, per level, vertical pass, barrier, horizontal pass, barrier (`timed`: the
 * dispatches between the command's two timestamps). */
static kiln_status mf_record(kiln_context *ctx, kiln_vk_cmd *cmd, mf_res *r, int timed, VkQueryPool qp)
{
    kiln_vk_cmd_upload(cmd, &r->prm, 0);
    kiln_vk_cmd_upload(cmd, &r->tio, 0);
    kiln_vk_cmd_upload(cmd, &r->lut, 0);
    if (!r->fill) kiln_vk_cmd_upload(cmd, &r->in, 0);
    if (timed) kiln_vk_cmd_timestamp(cmd, 0);
    if (qp) vkCmdWriteTimestamp(cmd->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp, 0);
    if (r->fill) { /* the 16-bit base decoded on the device (mip16b; inside the timed section, as gpu_mip.c) */
        KILN_TRY(r->fill(ctx, cmd, r->in.dev.buffer, r->fill_user));
        kiln_vk_cmd_barrier(cmd);
    }
    kiln_vk_binding b[MF_BINDINGS] = {{.buffer = r->prm.dev.buffer}, {.buffer = r->in.dev.buffer},
                                      {.buffer = r->chain.dev.buffer}, {.buffer = r->out.dev.buffer},
                                      {.buffer = r->lut.dev.buffer}, {.buffer = r->tio.dev.buffer},
                                      {.buffer = r->inter.buffer}};
    kiln_status st = KILN_OK;
    for (uint32_t m = 1; m < r->L && st == KILN_OK; m++) {
        for (uint32_t pass = 0; pass < 2 && st == KILN_OK; pass++) {
            uint32_t per = pass == 0 ? r->w[m - 1] * r->h[m] : r->w[m] * r->h[m];
            mf_push push = {.level = m, .pass = pass, .per = per, .total = per * r->count, .stride = r->stride};
            st = kiln_vk_cmd_dispatch_linear(ctx, cmd, r->pipe, b, &push, (uint64_t)per * r->count);
            kiln_vk_cmd_barrier(cmd);
        }
    }
    if (timed) kiln_vk_cmd_timestamp(cmd, 1);
    return st;
}

/* ---- alpha coverage with the tiled box strategies (helper mipfall) ----
 * subgroup, pyramid and single-pass make the exact box chain in gpu_mip.c's kernels; the CPU filters the
 * unscaled chain and the coverage scale only changes each level's stored alpha, so those kernels write every
 * level's fp32 chain (out_kind 4, device-resident: kiln__gpu_mip_record), gpu_mip_alpha.c counts it and pass 2
 * writes the requested outputs from it: RGBA8 (CONVERT_U8, sRGB8 colour as the sink), RGBA16F (CONVERT_F16,
 * kiln__float_to_half on the bits) or RGBA32F (alpha patched in place; the kernels wrote the F32 sink's colour);
 * then one download. Bytes: the CPU's (tests/unit/test_gpu_mip_alpha.c strategies). */
static kiln_status cov_tiled(kiln_context *ctx, kiln_gpu *gpu, const kiln__gpu_mip_job *job)
{
    const uint32_t count = job->count, L = job->levels;
    const int kind = job->out_kind;
    const kiln_image *b0 = &job->images[0];
    if (L < 2 || L > KILN_GPU_MIP_MAX_LEVELS || (kind != 1 && kind != 3 && kind != 4))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "GPU mipmaps with alpha coverage: %u levels, output kind %d", L, kind);
    kiln__gpu_mip_job j = *job;
    j.alpha_coverage_ref = 0.0f;
    j.out_kind = 4;
    j.out_srgb = kind == 4 ? job->out_srgb : 0; /* RGBA32F: the sink's colour; else the linear chain */
    j.dst = NULL;
    /* RGBA8 / RGBA16F outputs: image z's level m at z * per + pre[m] words (tight) */
    const uint32_t wpt = kind == 1 ? 1u : 2u;
    uint64_t pre[KILN_GPU_MIP_MAX_LEVELS], per = 0;
    for (uint32_t m = 1; m < L; m++) {
        pre[m] = per;
        per += (uint64_t)kiln_level_dim(b0->width, m) * kiln_level_dim(b0->height, m) * wpt;
    }
    if (kind != 4 && per * 4 * count > gpu->props.limits.maxStorageBufferRange)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "GPU mipmaps with alpha coverage: %llu bytes of levels exceed %s's range",
                          (unsigned long long)(per * 4 * count), gpu->props.deviceName);
    kiln__gpu_mip_dev md;
    memset(&md, 0, sizeof md);
    kiln__gpu_mip_alpha a;
    memset(&a, 0, sizeof a);
    kiln_vk_io out;
    memset(&out, 0, sizeof out);
    kiln_vk_buffer dl = {0};
    kiln_vk_cmd cmd;
    memset(&cmd, 0, sizeof cmd);
    double ms = 0.0, ms2 = 0.0;
    kiln_status st = kiln_vk_cmd_begin(ctx, gpu, KILN_GPU_MIP_MAX_DISPATCHES(L) + 1, &cmd);
    if (st == KILN_OK) {
        kiln_vk_cmd_timestamp(&cmd, 0);
        st = kiln__gpu_mip_record(ctx, gpu, &j, 16, &cmd, VK_NULL_HANDLE, &md);
        kiln_vk_cmd_timestamp(&cmd, 1);
    }
    if (st == KILN_OK && (md.image_stride % 16 != 0 || md.image_stride == 0))
        st = kiln__fail(ctx, KILN_ERR_INTERNAL, "GPU mipmaps with alpha coverage: chain stride %llu",
                        (unsigned long long)md.image_stride);
    if (st == KILN_OK && kind != 4) st = kiln_vk_io_create(ctx, gpu, per * 4 * count, 1, &out);
    if (st == KILN_OK && kind == 4)
        st = kiln_vk_buffer_create(ctx, gpu, md.image_stride * count, KILN_VK_MEM_DOWNLOAD, &dl);
    if (st == KILN_OK) st = kiln__gpu_mip_alpha_init(ctx, gpu, &a, count * (L - 1));
    if (st == KILN_OK) {
        a.thr = kiln__mip_alpha_pass_threshold(kind, job->alpha_coverage_ref);
        a.mode = kind == 1 ? KILN_GPU_MIP_ALPHA_CONVERT_U8 : kind == 3 ? KILN_GPU_MIP_ALPHA_CONVERT_F16 : KILN_GPU_MIP_ALPHA_PATCH_F32;
        a.srgb = kind == 1 && job->out_srgb;
        a.chain = md.out;
        a.out = kind == 4 ? md.out : out.dev.buffer;
        const uint64_t n0 = (uint64_t)b0->width * b0->height;
        for (uint32_t z = 0; z < count && st == KILN_OK; z++) {
            uint64_t cov0 = 0;
            st = kiln__gpu_mip_alpha_base_coverage(ctx, &job->images[z], job->alpha_coverage_ref, &cov0);
            for (uint32_t m = 1; m < L && st == KILN_OK; m++) {
                kiln__gpu_mip_alpha_pair *q = &a.pairs[(size_t)z * (L - 1) + m - 1];
                q->n = kiln_level_dim(b0->width, m) * kiln_level_dim(b0->height, m);
                q->chain_vec4 = ((uint64_t)z * md.image_stride + md.off[m]) / 16;
                q->out_word = kind == 4 ? q->chain_vec4 * 4 : (uint64_t)z * per + pre[m];
                q->target = (2 * cov0 * q->n + n0) / (2 * n0); /* round(cov0 * n / n0), as run_chain */
            }
        }
    }
    if (st == KILN_OK) st = kiln__gpu_mip_alpha_prepare(ctx, &a);
    if (st == KILN_OK) st = kiln__gpu_mip_alpha_run(ctx, &a, &cmd, 0, &ms); /* submits the mip pass */
    if (st == KILN_OK) {
        if (kind != 4) {
            kiln_vk_cmd_download(&cmd, &out, 0);
        } else {
            VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                                  .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT};
            vkCmdPipelineBarrier(cmd.cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0,
                                 NULL, 0, NULL);
            VkBufferCopy region = {0, 0, md.image_stride * count};
            vkCmdCopyBuffer(cmd.cb, md.out, dl.buffer, 1, &region);
            VkMemoryBarrier hb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                                  .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
            vkCmdPipelineBarrier(cmd.cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &hb, 0, NULL, 0,
                                 NULL);
        }
        st = kiln_vk_cmd_submit(ctx, &cmd, &ms2);
    }
    kiln_vk_cmd_free(&cmd);
    if (st == KILN_OK)
        st = kind == 4 ? kiln_vk_buffer_invalidate(ctx, gpu, &dl)
                       : kiln_vk_buffer_invalidate(ctx, gpu, out.direct ? &out.dev : &out.staging);
    if (st == KILN_OK) {
        const uint8_t *src = kind == 4 ? (const uint8_t *)dl.mapped : (const uint8_t *)kiln_vk_io_map(&out);
        for (uint32_t z = 0; z < count; z++)
            for (uint32_t m = 1; m < L; m++) {
                const size_t bytes = (size_t)kiln_level_dim(b0->width, m) * kiln_level_dim(b0->height, m) * (kind == 4 ? 16 : wpt * 4);
                const size_t o = kind == 4 ? (size_t)(z * md.image_stride + md.off[m]) : (size_t)((z * per + pre[m]) * 4);
                memcpy(job->dst[(size_t)z * job->levels + m], src + o, bytes);
            }
    }
    if (st == KILN_OK && ctx->params.verbose)
        fprintf(stderr,
                "kiln: mipmaps on %s, %s + alpha coverage on the device (%u of %u levels by histogram; %s): %u + %u "
                "dispatches, %.3f ms (mip kernel time + counting passes, wall)\n",
                gpu->props.deviceName, md.what, a.hist_levels, a.npairs,
                kind == 1 ? "RGBA8 written from the fp32 chain" : kind == 3 ? "RGBA16F written from the fp32 chain"
                                                                             : "RGBA32F alpha patched in place",
                md.dispatches, KILN_GPU_MIP_ALPHA_DISPATCHES, ms);
    kiln__gpu_mip_alpha_free(&a);
    kiln__gpu_mip_dev_free(&md);
    kiln_vk_io_destroy(gpu, &out);
    kiln_vk_buffer_destroy(gpu, &dl);
    if (st == KILN_OK) ctx->last_gpu_ms = ms + ms2;
    return st;
}

kiln_status kiln__gpu_mip_filter(kiln_context *ctx, kiln_gpu *gpu, const kiln__gpu_mip_job *job)
{
    const uint32_t count = job->count, L = job->levels;
    if (job->alpha_coverage_ref > 0.0f && job->filter == KILN_MIP_FILTER_BOX && !job->normal_map &&
        (job->strategy == KILN_MIP_STRATEGY_SUBGROUP || job->strategy == KILN_MIP_STRATEGY_PYRAMID ||
         job->strategy == KILN_MIP_STRATEGY_SINGLE_PASS))
        return cov_tiled(ctx, gpu, job);
    mf_res r;
    memset(&r, 0, sizeof r);
    kiln_status st = mf_prepare(ctx, gpu, job, 1, 0, &r);
    kiln_vk_cmd cmd;
    memset(&cmd, 0, sizeof cmd);
    kiln__gpu_mip_alpha cov;
    memset(&cov, 0, sizeof cov);
    double ms = 0.0, cov_ms = 0.0;
    const char *hv = getenv("KILN_GPU_MIP_ALPHA_HOST");
    const int host_cov = r.cov && hv && hv[0] == '1'; /* the former host route (bench aid) */
    kiln_vk_buffer chain_dl = {0};
    if (st == KILN_OK && host_cov)
        st = kiln_vk_buffer_create(ctx, gpu, r.chain_v ? r.chain_v * 16 * count : 16, KILN_VK_MEM_DOWNLOAD, &chain_dl);
    /* alpha coverage (helper alphacov): the chain stays on the device; gpu_mip_alpha.c counts it, the host
     * picks the scales and a pass writes the scaled alpha into the outputs before they are downloaded */
    if (st == KILN_OK && r.cov && !host_cov)
        st = coverage_setup(ctx, gpu, job, r.table, r.w, r.h, L, r.chain_v, r.out_w, r.chain.dev.buffer, r.out.dev.buffer,
                            &cov);
    if (st == KILN_OK) st = kiln_vk_cmd_begin(ctx, gpu, 2 * (L - 1) + 1 + (r.cov ? KILN_GPU_MIP_ALPHA_DISPATCHES : 0u), &cmd);
    if (st == KILN_OK) {
        st = mf_record(ctx, &cmd, &r, 1, VK_NULL_HANDLE);
        if (st == KILN_OK && host_cov) {
            VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                                  .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT};
            vkCmdPipelineBarrier(cmd.cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0,
                                 NULL, 0, NULL);
            VkBufferCopy region = {0, 0, chain_dl.size};
            vkCmdCopyBuffer(cmd.cb, r.chain.dev.buffer, chain_dl.buffer, 1, &region);
            VkMemoryBarrier hb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                                  .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
            vkCmdPipelineBarrier(cmd.cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &hb, 0, NULL, 0,
                                 NULL);
        } else if (st == KILN_OK && r.cov) {
            /* submits the mip pass (its timed section: ms) with the first counting pass */
            double t = 0.0;
            st = kiln__gpu_mip_alpha_run(ctx, &cov, &cmd, 0, &t);
            ms = t;
        }
        if (st == KILN_OK) kiln_vk_cmd_download(&cmd, &r.out, 0);
        if (st == KILN_OK) st = kiln_vk_cmd_submit(ctx, &cmd, r.cov && !host_cov ? &cov_ms : &ms);
    }
    kiln_vk_cmd_free(&cmd);
    if (st == KILN_OK) st = kiln_vk_buffer_invalidate(ctx, gpu, r.out.direct ? &r.out.dev : &r.out.staging);
    if (st == KILN_OK) {
        mf_copy_job c = {.job = job, .src = kiln_vk_io_map(&r.out), .table = r.table, .w = r.w, .h = r.h, .L = L,
                         .out_words = (uint32_t)r.out_w, .bpt = job->out_kind == 1 ? 4 : job->out_kind == 3 ? 8 : 16};
        st = kiln__parallel_for(ctx, (size_t)count * (L - 1), 1, mf_copy_out, &c);
    }
    if (st == KILN_OK && host_cov) {
        st = kiln_vk_buffer_invalidate(ctx, gpu, &chain_dl);
        if (st == KILN_OK) st = apply_coverage_host(ctx, job, chain_dl.mapped, r.table, r.w, r.h, L, r.chain_v);
    }
    kiln_vk_buffer_destroy(gpu, &chain_dl);
    if (st == KILN_OK && ctx->params.verbose) {
        char covmsg[128] = "";
        if (host_cov) snprintf(covmsg, sizeof covmsg, " + alpha coverage on the host (KILN_GPU_MIP_ALPHA_HOST=1)");
        else if (r.cov)
            snprintf(covmsg, sizeof covmsg, " + alpha coverage on the device (%u of %u levels by histogram)", cov.hist_levels,
                     cov.npairs);
        fprintf(stderr, "kiln: mipmaps on %s, %s filter%s%s: %u dispatches, %.3f ms%s\n", gpu->props.deviceName,
                filter_name(job->filter), job->normal_map ? " (normal map)" : "", covmsg, 2 * (L - 1), ms,
                r.cov && !host_cov ? " (mip kernel time + counting passes, wall)" : " kernel time");
    }
    kiln__gpu_mip_alpha_free(&cov);
    mf_res_free(&r);
    if (st == KILN_OK) ctx->last_gpu_ms = ms + cov_ms;
    return st;
}

static void mf_res_free_cb(kiln_gpu *gpu, void *run)
{
    (void)gpu;
    mf_res_free(run);
    free(run);
}

/* The filter chain recorded into cmd for a device-resident caller (dev describes its buffers); fill (may
 * be NULL) writes the base on the device (16-bit sources), unorm16 makes 16-bit levels; nm names a normal map
 * in dev->what. */
static kiln_status mf_dev_record(kiln_context *ctx, kiln_gpu *gpu, const kiln__gpu_mip_job *job, uint32_t align_bytes,
                                 kiln_vk_cmd *cmd, VkQueryPool qp, kiln__gpu_mip_dev *dev, kiln__gpu_mip_fill_fn fill,
                                 void *user, int unorm16, const char *nm)
{
    mf_res *r = kiln__calloc(ctx, 1, sizeof *r);
    if (!r) return KILN_ERR_OUT_OF_MEMORY;
    dev->gpu = gpu;
    dev->run = r;
    dev->free_run = mf_res_free_cb;
    r->fill = fill;
    r->fill_user = user;
    r->unorm16 = unorm16 != 0;
    KILN_TRY(mf_prepare(ctx, gpu, job, align_bytes / 4, 1, r));
    kiln__gpu_mip_poison(cmd->cb, (VkBuffer[]){r->out.dev.buffer, r->chain.dev.buffer, r->inter.buffer}, 3);
    KILN_TRY(mf_record(ctx, cmd, r, 0, qp));
    dev->in = r->in.dev.buffer;
    dev->out = r->out.dev.buffer;
    dev->image_stride = r->out_w * 4;
    for (uint32_t l = 1; l < r->L; l++) dev->off[l] = (VkDeviceSize)r->table[P_LEVEL + 4 * l + 3] * 4;
    dev->dispatches = 2 * (r->L - 1) + (fill ? 1u : 0u);
    snprintf(dev->what, sizeof dev->what, "%s filter%s", filter_name(job->filter), job->normal_map ? nm : "");
    return KILN_OK;
}

kiln_status kiln__gpu_mip_filter_record(kiln_context *ctx, kiln_gpu *gpu, const kiln__gpu_mip_job *job,
                                        uint32_t align_bytes, kiln_vk_cmd *cmd, VkQueryPool qp, kiln__gpu_mip_dev *dev)
{
    if (job->alpha_coverage_ref > 0.0f)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                          "device-resident GPU mipmaps: alpha coverage scales alpha on the host (the chain is read back)");
    return mf_dev_record(ctx, gpu, job, align_bytes, cmd, qp, dev, NULL, NULL, 0, " (normal map)");
}

/* ---- 16-bit sources, device-resident (helper mip16b; gpu_mip16.h) ---- */

kiln_status kiln__gpu_mip16_filter_record(kiln_context *ctx, kiln_gpu *gpu, const kiln__gpu_mip_job *job,
                                          uint32_t align_bytes, kiln_vk_cmd *cmd, VkQueryPool qp, kiln__gpu_mip_dev *dev,
                                          kiln__gpu_mip_fill_fn fill, void *user, int unorm16)
{
    memset(dev, 0, sizeof *dev);
    if (!job || !job->images || job->images[0].type != KILN_PIXEL_F32 || job->alpha_coverage_ref > 0.0f)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "device-resident 16-bit mipmaps: a decoded base, no alpha coverage");
    if (align_bytes == 0 || align_bytes % 4 != 0)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "GPU mipmap filters: level alignment %u", align_bytes);
    return mf_dev_record(ctx, gpu, job, align_bytes, cmd, qp, dev, fill, user, unorm16, " (16-bit normal map)");
}

/* gpu_mip_alpha.c - alpha coverage (mip.h rule 8) on device-resident GPU mip chains (helper alphacov,
 * issue 5). See gpu_mip_alpha_vk.h for the interface and shaders/mip_alpha.comp for the passes.
 *
 * Exactness: the CPU (mip.c run_chain) picks each level's scale with kiln__mip_coverage_scale from the
 * bits of the clamped fp32 chain alphas: the target-th largest value vk (two 16-bit histogram passes),
 * the counts >= vk and > vk and vk's neighbours below and above; then everything is fp32 arithmetic on
 * those few values. Here the device counts the same things on the same fp32 chain (which the GPU mip
 * passes make bit for bit as the CPU does) and the host finishes with filters.c's own functions
 * (kiln__mip_hist_select, kiln__mip_coverage_early, kiln__mip_coverage_final), so the scale is the CPU's.
 * Levels of at most ALPHA_DIRECT_MAX texels read their raw alpha back (4 bytes a texel, less than a
 * histogram) and run kiln__mip_coverage_scale itself. alpha' = min(1, s * clamp(a, 0, 1)) is computed
 * on the bits in the shader (an integer fp32 multiply with round-to-nearest-even and denormals, the
 * CPU's SSE result) and quantised with the exact encoders of the mip shaders.
 *
 * Tables (binding 0, words): header [0] pairs [1] chunks [2] mode [3] flags (1: sRGB colour) [5] chunk
 * table offset [6] acc offset of the bucket histograms [7] of the direct alpha [8] of the 16-bit
 * histograms; pair p at 12 + 12 p: chain vec4 index, n, output word, kind (0 histogram, 1 direct), slot
 * (histogram index, or word offset of the direct alpha), hi, hb, ha (pass 1; 0xffffffff: none), scale
 * bits, apply flags (1: alpha' = 1, an infinite scale), 2 spare; chunk c: pair, first texel.
 * acc (binding 3): per pair 4 words (zero alphas, largest b, largest b of bucket hb, ~smallest b of
 * bucket ha), then the histograms and direct words. */
#include "gpu/gpu_mip_alpha_vk.h"
#include "gpu/gpu_mip.h"
#include "mip/mip.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ALPHA_LOCAL 256u
#define ALPHA_CHUNK (256u * 16u) /* texels per workgroup (mip_alpha.comp PER_THREAD) */
#define ALPHA_HDR 12u
#define ALPHA_PAIR 12u
#define ALPHA_STAT 4u
#define ALPHA_HIST_HI 16384u /* buckets b >> 16 of b <= 0x3f800000 */
#define ALPHA_HIST_LO 65536u
#define ALPHA_DIRECT_MAX 16384u
#define ALPHA_NONE 0xffffffffu

void kiln__gpu_mip_alpha_stats_get(kiln_context *ctx, kiln__gpu_mip_alpha_stats *out)
{
    if (!out) return;
    memset(out, 0, sizeof *out);
    kiln_gpu *gpu = ctx ? ctx->gpu : NULL;
    if (!gpu) return;
    out->runs = gpu->mip_alpha_count[0];
    out->levels = gpu->mip_alpha_count[1];
    out->hist_levels = gpu->mip_alpha_count[2];
}

/* ---- the base coverage (mip.c kiln__mip_base_coverage, on the context's threads) ---- */

typedef struct cov_job {
    const kiln_image *img;
    const uint8_t *pass; /* U8 / U16: 1 when value / 255.0 (65535.0) > ref, as mip.c compares */
    double ref;
    size_t *counts;      /* per worker */
} cov_job;

static void cov_rows(void *user, size_t begin, size_t end, uint32_t worker)
{
    const cov_job *j = user;
    const kiln_image *img = j->img;
    size_t c = 0;
    if (img->type == KILN_PIXEL_U8) {
        const uint8_t *p = img->pixels;
        for (size_t i = begin; i < end; i++) c += j->pass[p[i * 4 + 3]];
    } else if (img->type == KILN_PIXEL_U16) {
        const uint16_t *p = img->pixels;
        for (size_t i = begin; i < end; i++) c += j->pass[p[i * 4 + 3]];
    } else {
        const float *p = img->pixels;
        for (size_t i = begin; i < end; i++) c += (double)p[i * 4 + 3] > j->ref;
    }
    j->counts[worker] += c;
}

kiln_status kiln__gpu_mip_alpha_base_coverage(kiln_context *ctx, const kiln_image *img, float ref, uint64_t *out)
{
    const uint32_t threads = kiln_context_threads(ctx) ? kiln_context_threads(ctx) : 1;
    const size_t n = (size_t)img->width * img->height;
    uint8_t *pass = img->type == KILN_PIXEL_F32 ? NULL : kiln__malloc(ctx, 65536);
    size_t *counts = kiln__calloc(ctx, threads, sizeof *counts);
    if ((img->type != KILN_PIXEL_F32 && !pass) || !counts) {
        free(pass);
        free(counts);
        return KILN_ERR_OUT_OF_MEMORY;
    }
    if (img->type == KILN_PIXEL_U8)
        for (uint32_t v = 0; v < 256; v++) pass[v] = v / 255.0 > (double)ref;
    else if (img->type == KILN_PIXEL_U16)
        for (uint32_t v = 0; v < 65536; v++) pass[v] = v / 65535.0 > (double)ref;
    cov_job j = {.img = img, .pass = pass, .ref = (double)ref, .counts = counts};
    kiln_status st = kiln__parallel_for(ctx, n, 1u << 16, cov_rows, &j);
    uint64_t c = 0;
    for (uint32_t i = 0; i < threads; i++) c += counts[i];
    *out = c;
    free(pass);
    free(counts);
    return st;
}

kiln_status kiln__gpu_mip_alpha_init(kiln_context *ctx, kiln_gpu *gpu, kiln__gpu_mip_alpha *a, uint32_t npairs)
{
    memset(a, 0, sizeof *a);
    a->gpu = gpu;
    if (npairs == 0 || npairs > (1u << 24))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "GPU alpha coverage: %u levels", npairs);
    a->npairs = npairs;
    a->pairs = kiln__calloc(ctx, npairs, sizeof *a->pairs);
    a->scale = kiln__calloc(ctx, npairs, sizeof *a->scale);
    if (!a->pairs || !a->scale) return KILN_ERR_OUT_OF_MEMORY;
    return KILN_OK;
}

void kiln__gpu_mip_alpha_free(kiln__gpu_mip_alpha *a)
{
    if (!a) return;
    if (a->gpu) {
        kiln_vk_io_destroy(a->gpu, &a->tab);
        kiln_vk_io_destroy(a->gpu, &a->acc);
        kiln_vk_io_destroy(a->gpu, &a->lut);
    }
    free(a->pairs);
    free(a->scale);
    free(a->tab_host);
    memset(a, 0, sizeof *a);
}

kiln_status kiln__gpu_mip_alpha_prepare(kiln_context *ctx, kiln__gpu_mip_alpha *a)
{
    kiln_gpu *gpu = a->gpu;
    const uint64_t range = gpu->props.limits.maxStorageBufferRange;
    uint64_t chunks = 0, nhist = 0, direct = 0;
    for (uint32_t p = 0; p < a->npairs; p++) {
        const kiln__gpu_mip_alpha_pair *q = &a->pairs[p];
        if (q->n == 0 || q->chain_vec4 + q->n > UINT32_MAX || q->out_word > UINT32_MAX ||
            q->out_word + (uint64_t)q->n * 4 > UINT32_MAX)
            return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "GPU alpha coverage: level %u is out of 32-bit reach", p);
        chunks += (q->n + ALPHA_CHUNK - 1) / ALPHA_CHUNK;
        if (q->n <= ALPHA_DIRECT_MAX) direct += q->n;
        else nhist++;
    }
    a->off_hist = (uint64_t)ALPHA_STAT * a->npairs;
    a->off_direct = a->off_hist + ALPHA_HIST_HI * nhist;
    a->off_lo = a->off_direct + direct;
    a->acc_words = a->off_lo + ALPHA_HIST_LO * nhist;
    a->tab_words = ALPHA_HDR + (size_t)ALPHA_PAIR * a->npairs + 2 * (size_t)chunks;
    if (a->acc_words * 4 > range || (uint64_t)a->tab_words * 4 > range || chunks * ALPHA_LOCAL > UINT32_MAX)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                          "GPU alpha coverage: %llu words of histograms exceed %s's storage-buffer range",
                          (unsigned long long)a->acc_words, gpu->props.deviceName);
    a->nchunks = (uint32_t)chunks;
    uint32_t *t = a->tab_host = kiln__calloc(ctx, a->tab_words, sizeof *t);
    if (!t) return KILN_ERR_OUT_OF_MEMORY;
    t[0] = a->npairs;
    t[1] = a->nchunks;
    t[2] = a->mode;
    t[3] = a->srgb ? 1u : 0u;
    t[5] = (uint32_t)(ALPHA_HDR + ALPHA_PAIR * a->npairs);
    t[6] = (uint32_t)a->off_hist;
    t[7] = (uint32_t)a->off_direct;
    t[8] = (uint32_t)a->off_lo;
    uint32_t hslot = 0, dslot = 0, c = 0;
    for (uint32_t p = 0; p < a->npairs; p++) {
        const kiln__gpu_mip_alpha_pair *q = &a->pairs[p];
        uint32_t *r = t + ALPHA_HDR + ALPHA_PAIR * p;
        r[0] = (uint32_t)q->chain_vec4;
        r[1] = q->n;
        r[2] = (uint32_t)q->out_word;
        r[3] = q->n <= ALPHA_DIRECT_MAX ? 1u : 0u;
        r[4] = r[3] ? dslot : hslot;
        if (r[3]) dslot += q->n;
        else hslot++;
        r[5] = r[6] = r[7] = ALPHA_NONE;
        for (uint32_t f = 0; f < q->n; f += ALPHA_CHUNK) {
            t[t[5] + 2 * c] = p;
            t[t[5] + 2 * c + 1] = f;
            c++;
        }
    }
    a->hist_levels = hslot;
    KILN_TRY(kiln_vk_io_create(ctx, gpu, (VkDeviceSize)a->tab_words * 4, 0, &a->tab));
    KILN_TRY(kiln_vk_io_create(ctx, gpu, (VkDeviceSize)a->acc_words * 4, 1, &a->acc));
    KILN_TRY(kiln_vk_io_create(ctx, gpu, 1024 * 4, 0, &a->lut));
    kiln__gpu_mip_lut(kiln_vk_io_map(&a->lut), 0); /* [512, 1024): the exact sRGB8 / unorm8 encoders */
    KILN_TRY(kiln_vk_buffer_flush(ctx, gpu, a->lut.direct ? &a->lut.dev : &a->lut.staging));
    kiln_vk_pipeline_desc d = {.shader = "mip_alpha", .local_size = ALPHA_LOCAL, .nbindings = 5, .push_size = 4};
    return kiln_vk_pipeline_get(ctx, gpu, &d, &a->pipe);
}

static kiln_status put_tab(kiln_context *ctx, kiln__gpu_mip_alpha *a, kiln_vk_cmd *cmd)
{
    memcpy(kiln_vk_io_map(&a->tab), a->tab_host, a->tab_words * 4);
    KILN_TRY(kiln_vk_buffer_flush(ctx, a->gpu, a->tab.direct ? &a->tab.dev : &a->tab.staging));
    kiln_vk_cmd_upload(cmd, &a->tab, 0);
    return KILN_OK;
}

static kiln_status dispatch(kiln_context *ctx, kiln__gpu_mip_alpha *a, kiln_vk_cmd *cmd, uint32_t pass)
{
    const kiln_vk_binding b[5] = {{.buffer = a->tab.dev.buffer}, {.buffer = a->chain}, {.buffer = a->out},
                                  {.buffer = a->acc.dev.buffer}, {.buffer = a->lut.dev.buffer}};
    return kiln_vk_cmd_dispatch_linear(ctx, cmd, a->pipe, b, &pass, (uint64_t)a->nchunks * ALPHA_LOCAL);
}

static kiln_status submit(kiln_context *ctx, kiln__gpu_mip_alpha *a, kiln_vk_cmd *cmd, VkDeviceSize bytes, double *ms)
{
    kiln_vk_cmd_download(cmd, &a->acc, bytes);
    double t = 0.0;
    kiln_status st = kiln_vk_cmd_submit(ctx, cmd, &t);
    kiln_vk_cmd_free(cmd);
    if (st == KILN_OK && ms) *ms += t;
    if (st == KILN_OK) st = kiln_vk_buffer_invalidate(ctx, a->gpu, a->acc.direct ? &a->acc.dev : &a->acc.staging);
    return st;
}

kiln_status kiln__gpu_mip_alpha_run(kiln_context *ctx, kiln__gpu_mip_alpha *a, kiln_vk_cmd *cmd, uint32_t more_dispatches,
                                    double *ms)
{
    kiln_gpu *gpu = a->gpu;
    uint32_t *t = a->tab_host;
    /* submission 1: the caller's mip pass, then pass 0 on the finished chain */
    kiln_vk_cmd_barrier(cmd); /* chain writes -> pass 0 reads */
    vkCmdFillBuffer(cmd->cb, a->acc.dev.buffer, 0, VK_WHOLE_SIZE, 0);
    kiln_vk_cmd_transfer_to_compute(cmd->cb);
    KILN_TRY(put_tab(ctx, a, cmd));
    kiln_vk_cmd_upload(cmd, &a->lut, 0);
    KILN_TRY(dispatch(ctx, a, cmd, 0));
    KILN_TRY(submit(ctx, a, cmd, (VkDeviceSize)a->off_lo * 4, ms));

    /* host: the levels decided by pass 0 (small levels: the CPU function on their alpha) */
    const uint32_t *acc = kiln_vk_io_map(&a->acc);
    uint32_t *scratch = NULL;
    size_t *above_cnt = kiln__calloc(ctx, a->npairs, sizeof *above_cnt), *rank = kiln__calloc(ctx, a->npairs, sizeof *rank);
    size_t *target = kiln__calloc(ctx, a->npairs, sizeof *target);
    if (!above_cnt || !rank || !target) {
        free(above_cnt);
        free(rank);
        free(target);
        return KILN_ERR_OUT_OF_MEMORY;
    }
    uint32_t need = 0;
    int oom = 0;
    for (uint32_t p = 0; p < a->npairs && !oom; p++) {
        uint32_t *r = t + ALPHA_HDR + ALPHA_PAIR * p;
        const uint32_t n = r[1];
        target[p] = (size_t)a->pairs[p].target;
        if (r[3]) {
            if (!scratch) scratch = kiln__malloc(ctx, ((size_t)ALPHA_DIRECT_MAX + 65536) * sizeof *scratch);
            if (!scratch) {
                oom = 1;
                break;
            }
            const float *alpha = (const float *)(acc + a->off_direct + r[4]);
            a->scale[p] = kiln__mip_coverage_scale(alpha, 1, n, target[p], a->thr, scratch);
            continue;
        }
        const uint32_t *st = acc + ALPHA_STAT * p;
        if (kiln__mip_coverage_early((size_t)n - st[0], st[1], &target[p], a->thr, &a->scale[p])) continue;
        const uint32_t *h = acc + a->off_hist + (size_t)ALPHA_HIST_HI * r[4];
        size_t above = 0;
        uint32_t hi = kiln__mip_hist_select(h, ALPHA_HIST_HI - 1, target[p], &above);
        above_cnt[p] = above;
        rank[p] = target[p] - above;
        r[5] = hi;
        for (uint32_t j = hi; j-- > 0;)
            if (h[j]) {
                r[6] = j;
                break;
            }
        for (uint32_t j = hi + 1; j < ALPHA_HIST_HI; j++)
            if (h[j]) {
                r[7] = j;
                break;
            }
        need++;
    }
    free(scratch);
    kiln_status st = oom ? KILN_ERR_OUT_OF_MEMORY : KILN_OK;
    /* submission 2: pass 1 for the levels pass 0 left open */
    if (need && st == KILN_OK) {
        st = kiln_vk_cmd_begin(ctx, gpu, 1, cmd);
        if (st == KILN_OK) st = put_tab(ctx, a, cmd);
        if (st == KILN_OK) st = dispatch(ctx, a, cmd, 1);
        if (st == KILN_OK) st = submit(ctx, a, cmd, 0, ms);
        else kiln_vk_cmd_free(cmd);
        acc = kiln_vk_io_map(&a->acc);
        for (uint32_t p = 0; p < a->npairs && st == KILN_OK; p++) {
            uint32_t *r = t + ALPHA_HDR + ALPHA_PAIR * p;
            if (r[3] || r[5] == ALPHA_NONE) continue;
            const uint32_t hi = r[5], *lo = acc + a->off_lo + (size_t)ALPHA_HIST_LO * r[4], *s4 = acc + ALPHA_STAT * p;
            size_t above2 = 0;
            uint32_t l = kiln__mip_hist_select(lo, ALPHA_HIST_LO - 1, rank[p], &above2);
            uint32_t vk = hi << 16 | l;
            size_t count_gt = above_cnt[p] + above2, count_ge = count_gt + lo[l];
            uint32_t below = r[6] != ALPHA_NONE ? s4[2] : 0u, abv = r[7] != ALPHA_NONE ? ~s4[3] : ALPHA_NONE;
            for (uint32_t j = l; j-- > 0;)
                if (lo[j]) {
                    below = hi << 16 | j;
                    break;
                }
            for (uint32_t j = l + 1; j < ALPHA_HIST_LO; j++)
                if (lo[j]) {
                    abv = hi << 16 | j;
                    break;
                }
            if (count_ge < target[p] || count_gt >= target[p])
                st = kiln__fail(ctx, KILN_ERR_INTERNAL, "GPU alpha coverage: level %u's histograms disagree", p);
            a->scale[p] = kiln__mip_coverage_final(target[p], a->thr, vk, count_ge, count_gt, below, abv);
        }
    }
    free(above_cnt);
    free(rank);
    free(target);
    if (st != KILN_OK) return st;

    /* submission 3 (the caller's): pass 2 with the scales */
    for (uint32_t p = 0; p < a->npairs; p++) {
        uint32_t *r = t + ALPHA_HDR + ALPHA_PAIR * p;
        float s = a->scale[p];
        memcpy(&r[8], &s, sizeof s);
        r[9] = isinf(s) ? 1u : 0u; /* inf * 0 is NaN, stored as 1 (mip.c: a < 1 ? a : 1) */
    }
    KILN_TRY(kiln_vk_cmd_begin(ctx, gpu, more_dispatches + 1, cmd));
    kiln_status s2 = put_tab(ctx, a, cmd);
    if (s2 == KILN_OK) s2 = dispatch(ctx, a, cmd, 2);
    if (s2 != KILN_OK) {
        kiln_vk_cmd_free(cmd);
        return s2;
    }
    kiln_vk_cmd_barrier(cmd);
    gpu->mip_alpha_count[0]++;
    gpu->mip_alpha_count[1] += a->npairs;
    gpu->mip_alpha_count[2] += a->hist_levels;
    return KILN_OK;
}

kiln_status kiln__gpu_mip_alpha_convert(kiln_context *ctx, kiln__gpu_mip_alpha *a, kiln_vk_cmd *cmd)
{
    if (!a->tab_host || (a->mode != KILN_GPU_MIP_ALPHA_CONVERT_U8 && a->mode != KILN_GPU_MIP_ALPHA_CONVERT_F16))
        return kiln__fail(ctx, KILN_ERR_INTERNAL, "GPU mip conversion: not prepared for a converting mode");
    a->tab_host[3] |= 2u; /* mip_alpha.comp: alpha as the chain holds it */
    kiln_vk_cmd_barrier(cmd); /* chain writes -> pass 2 reads */
    KILN_TRY(put_tab(ctx, a, cmd));
    kiln_vk_cmd_upload(cmd, &a->lut, 0);
    KILN_TRY(dispatch(ctx, a, cmd, 2));
    kiln_vk_cmd_barrier(cmd);
    return KILN_OK;
}

/* ---- the device-resident encoder (gpu_mip_encode.c) ---- */

kiln_status kiln__gpu_mip_alpha_resident(kiln_context *ctx, kiln_gpu *gpu, const kiln_image *img, float ref, int srgb,
                                         uint32_t levels, kiln__gpu_mip_dev *md, kiln_vk_cmd *cmd,
                                         uint32_t more_dispatches, kiln__gpu_mip_alpha_res *res)
{
    memset(res, 0, sizeof *res);
    kiln__gpu_mip_alpha *a = &res->a;
    if (levels < 2 || levels > KILN_GPU_MIP_MAX_LEVELS)
        return kiln__fail(ctx, KILN_ERR_INTERNAL, "GPU alpha coverage: %u levels", levels);
    KILN_TRY(kiln__gpu_mip_alpha_init(ctx, gpu, a, levels - 1));
    const int u8 = img->type == KILN_PIXEL_U8;
    /* mip.c: the sink of a level has the image's pixel type (kind 1 U8, 2 U16, 4 F32) */
    a->thr = kiln__mip_alpha_pass_threshold(u8 ? 1 : img->type == KILN_PIXEL_U16 ? 2 : 4, ref);
    a->mode = u8 ? KILN_GPU_MIP_ALPHA_CONVERT_U8 : KILN_GPU_MIP_ALPHA_PATCH_F32;
    a->srgb = srgb;
    a->chain = md->out;
    const uint64_t n0 = (uint64_t)img->width * img->height;
    uint64_t cov0 = 0;
    KILN_TRY(kiln__gpu_mip_alpha_base_coverage(ctx, img, ref, &cov0));
    VkDeviceSize align = gpu->props.limits.minStorageBufferOffsetAlignment, off[KILN_GPU_MIP_MAX_LEVELS], bytes = 0;
    if (align < 16) align = 16;
    for (uint32_t l = 1; l < levels; l++) {
        kiln__gpu_mip_alpha_pair *q = &a->pairs[l - 1];
        q->n = kiln_level_dim(img->width, l) * kiln_level_dim(img->height, l);
        q->chain_vec4 = md->off[l] / 16;
        q->target = (2 * cov0 * q->n + n0) / (2 * n0); /* round(cov0 * n / n0), as run_chain */
        off[l] = bytes;
        bytes = (bytes + (VkDeviceSize)q->n * 4 + align - 1) / align * align;
        q->out_word = u8 ? off[l] / 4 : md->off[l] / 4;
    }
    if (u8) {
        if (bytes > gpu->props.limits.maxStorageBufferRange)
            return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "GPU alpha coverage: %llu bytes of RGBA8 levels exceed %s's range",
                              (unsigned long long)bytes, gpu->props.deviceName);
        KILN_TRY(kiln_vk_buffer_create(ctx, gpu, bytes, KILN_VK_MEM_DEVICE, &res->u8));
    }
    a->out = u8 ? res->u8.buffer : md->out;
    KILN_TRY(kiln__gpu_mip_alpha_prepare(ctx, a));
    KILN_TRY(kiln__gpu_mip_alpha_run(ctx, a, cmd, more_dispatches, NULL));
    if (u8) {
        md->out = res->u8.buffer; /* the encoders and the gather read the RGBA8 levels */
        for (uint32_t l = 1; l < levels; l++) md->off[l] = off[l];
    }
    return KILN_OK;
}

void kiln__gpu_mip_alpha_resident_free(kiln__gpu_mip_alpha_res *res)
{
    if (!res) return;
    kiln_gpu *gpu = res->a.gpu;
    kiln__gpu_mip_alpha_free(&res->a);
    if (gpu) kiln_vk_buffer_destroy(gpu, &res->u8);
    memset(res, 0, sizeof *res);
}

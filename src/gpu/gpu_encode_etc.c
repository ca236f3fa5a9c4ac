/* gpu_encode_etc.c - the GPU encoders of the ETC family (kiln__gpu_encode routes ETC1 / ETC2 / EAC here).
 *
 * Done: EAC R11 / RG11 (unsigned and signed) in two designs, selected by params->gpu_strategy:
 *   0 (kiln)  shaders/enc_eac.comp: bit-identical to the CPU encoder (src/codec/eac_enc.c) at every
 *             quality, tie-breaking included; 4 blocks per workgroup of 64, 16 lanes per block, exact
 *             pruning (base masks over pixel windows, plus at high / max a spacing bound:
 *             KILN_GPU_EAC_PRUNE=0 turns it off, see kiln__gpu_eac_shader); the few jobs whose CPU
 *             range estimate sits exactly on a double rounding boundary are flagged by the shader and
 *             re-encoded here on the CPU (see enc_etc_eac.glsl and enc_eac.comp). (The opt-in second
 *             design enc_eac_max.comp, 2.4x slower on the H100, was removed: see kiln__gpu_eac_shader.)
 *   1 (seed)  shaders/enc_eac_seed.comp: betsy's design, 256 invocations per block (one per base),
 *             every table x multiplier, tree reduction: an exact optimum (same error as kiln's design
 *             at high/max, ties may differ). Shared-memory preload of the targets or direct reads:
 *             specialisation constant, chosen by the environment variable KILN_GPU_ETC_PRELOAD=0/1
 *             (default 1) for tests and bench/.
 * ETC1, kiln's design (gpu_strategy 0), bit-identical to the CPU encoder (etc1_enc.c, etc_enc_fast.c):
 *   FAST: shaders/enc_etc1.comp, 4 invocations per block (flip x half), exact integer error model,
 *   min-reduction of the flips in shared memory with the CPU's tie-break, selectors by row;
 *   NORMAL / HIGH / MAX: shaders/enc_etc1_q.comp, 8 invocations per block: the 8 independent sub-block
 *   searches (flip x individual / differential x half), then the delta-box searches the CPU's sequence can
 *   reach (a superset found by replaying it without them; listed per workgroup of 256: etc1_q_pipeline, helper
 *   etc2max), then the CPU's sequential choice (pruning included) replayed by one invocation on those results.
 * ETC2 RGB at FAST (kiln's design): enc_etc1.comp with ETC2 = 1 adds the CPU fast path's planar check;
 *   the blocks that need T / H (error above ETC_FAST_TH_ERR) are flagged and re-encoded here with
 *   kiln__etc_fast_opaque, so the bytes are the CPU's. ETC2 RGBA at FAST: that colour pass plus the EAC
 *   alpha pass (enc_eac.comp, KIND 0), as the CPU's kiln__enc_etc2_rgba stitches them.
 * ETC1, seed (gpu_strategy 1): shaders/enc_etc1_seed.comp, betsy's 4 invocations per block (flip x
 *   individual / differential), each an rg_etc1-style base search (radius 0 / 1 / 2 / 2 by quality),
 *   min-reduction; same KILN_GPU_ETC_PRELOAD switch. Not bit-identical to the CPU (a different search).
 * ETC2 RGB / RGBA above FAST and ETC2 RGB A1 at every quality (kiln's design, etc2_colour_pass), bit-identical
 *   to the CPU's kiln__etc2_search run as passes in its order (so its pruning sees the same errors), over one
 *   kiln_etc2_gpu_block per block (gpu_etc2_th.h: error, flags, packed bytes):
 *   1. ETC1 modes: enc_etc1_q.comp with OUT4 = 1 (it also writes the chosen solution's error), or for RGB A1
 *      enc_etc1_q_a1.comp (no individual mode; transparent blocks: only opaque pixels count, +-a = 0,
 *      selector 2 transparent, opaque bit 0, the empty-half case; fully transparent blocks the CPU's fixed
 *      block; at FAST the opaque blocks take kiln__etc1_fast, the others the FAST-effort search);
 *   2. planar: enc_etc2_planar.comp, the CPU's double arithmetic replayed (precise, correctly rounded
 *      divisions), gated by planar_bound, skipped for transparent A1 blocks; 1 and 2 in one submission;
 *   3. T / H: kiln__gpu_etc2_th (gpu_etc2_th.c, helper etc2b) when it is built and accepts the request,
 *      else (or with KILN_GPU_ETC2_TH=host in the environment: tests, bench/) on the host with the CPU's
 *      own kiln__etc2_search_th, which reads only the incoming error.
 *   ETC2 RGBA: that colour into bytes 8..15 and the EAC alpha pass into bytes 0..7, as at FAST. Needs
 *   shaderFloat64 (else KILN_ERR_UNSUPPORTED: AUTO encodes on the CPU).
 * ETC2 RGB / RGBA, seed (gpu_strategy 1): betsy's ETC2 design in gpu_encode_etc2_seed.c (ETC1 seed, k-means +
 *   960-invocation T/H, 16-invocation planar, select); RGBA adds the EAC seed alpha pass. RGB A1: kiln's only.
 * Dithering (params->dither, kiln's strategy; helper gpudither): the CPU dithers only the final selectors /
 * indices (kiln__etc_reselect, eac_enc.c write_block), so the passes above search without it and post-passes
 * re-pick them: enc_eac_dither.comp inside eac_pass (R11 / RG11, RGBA alpha), enc_etc_dither.comp in
 * etc_dither_pass (ETC1, ETC2 RGB / RGBA / RGB A1 colour). Not on the GPU: the seed strategy with dithering
 * (KILN_ERR_UNSUPPORTED, AUTO encodes on the CPU). The EAC alpha pass also runs
 * alone through the test hook kiln__gpu_encode_etc2_alpha.
 *
 * Input: 8-bit images go up as they are (the shader reads the channel byte) for unsigned R11 and the
 * alpha; 16-bit / float sources and signed R11 go up as int32 targets computed here exactly as the
 * CPU driver (encode.c fetch_texel) and eac_enc.c compute them. */
#include "codec/etc_enc.h"
#include "gpu/gpu_encode.h"
#include "gpu/gpu_etc2_th.h"
#include "gpu/gpu_mip_encode_etc.h"
#include "gpu/gpu_encode_etc2_seed.h"
#include "gpu/vk.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- host-side targets */

static inline float clamp01f(float v) { return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v; }

/* The texel as encode.c's fetch_texel sees it (rgba8, rgba16, f), before the signed mapping. */
static void fetch_px(const kiln_image *img, uint32_t x, uint32_t y, uint8_t r8[4], uint16_t r16[4], float f[4])
{
    size_t base = ((size_t)y * img->width + x) * 4;
    if (img->type == KILN_PIXEL_U8) {
        const uint8_t *p = (const uint8_t *)img->pixels + base;
        for (int c = 0; c < 4; c++) {
            r8[c] = p[c];
            r16[c] = (uint16_t)(p[c] * 257u);
            f[c] = (float)p[c] * (1.0f / 255.0f);
        }
    } else if (img->type == KILN_PIXEL_U16) {
        const uint16_t *p = (const uint16_t *)img->pixels + base;
        for (int c = 0; c < 4; c++) {
            r8[c] = (uint8_t)(((uint32_t)p[c] * 255u + 32767u) / 65535u);
            r16[c] = p[c];
            f[c] = (float)p[c] * (1.0f / 65535.0f);
        }
    } else {
        const float *p = (const float *)img->pixels + base;
        for (int c = 0; c < 4; c++) {
            float v = p[c];
            if (v != v) v = 0.0f;
            float u = clamp01f(v);
            r8[c] = (uint8_t)(u * 255.0f + 0.5f);
            r16[c] = (uint16_t)(u * 65535.0f + 0.5f);
            f[c] = v;
        }
    }
}

typedef struct eac_job {
    const kiln_image *img;
    int kind;      /* 0 alpha8, 1 unsigned R11, 2 signed R11 */
    int nch;       /* channels per block */
    int ch0;       /* first image channel */
    int signed_map;
    int32_t *targets;
} eac_job;

/* The target of one texel channel, as eac_enc.c's kiln__eac_target_* computes it. */
static int32_t target_of(const eac_job *j, uint32_t x, uint32_t y, int ch)
{
    uint8_t r8[4];
    uint16_t r16[4];
    float f[4];
    fetch_px(j->img, x, y, r8, r16, f);
    if (j->kind == 0) return r8[ch];
    if (j->kind == 1) return (int32_t)r16[ch] * 2047;
    float v = f[ch];
    if (j->signed_map) v = v * 2.0f - 1.0f;
    if (!(v >= -1.0f)) v = v > 0 ? 1.0f : -1.0f;
    if (v > 1.0f) v = 1.0f;
    return (int32_t)llround((double)v * 1023.0 * 65536.0);
}

static void targets_rows(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    const eac_job *j = user;
    const uint32_t w = j->img->width;
    for (size_t y = begin; y < end; y++)
        for (uint32_t x = 0; x < w; x++)
            for (int c = 0; c < j->nch; c++)
                j->targets[((size_t)y * w + x) * (size_t)j->nch + (size_t)c] = target_of(j, x, (uint32_t)y, j->ch0 + c);
}

/* CPU encode of one job (block, channel) into out (8 bytes): the exact CPU result. */
static void cpu_job(const eac_job *j, uint32_t bx, uint32_t block, int ch, int quality, int dither, uint8_t out[8])
{
    eac_target tg;
    tg.kind = j->kind;
    tg.scale = j->kind == 0 ? 1 : (j->kind == 1 ? 65535 : 65536);
    const uint32_t x0 = (block % bx) * 4, y0 = (block / bx) * 4;
    for (uint32_t p = 0; p < 16; p++) {
        uint32_t x = x0 + (p & 3), y = y0 + (p >> 2);
        if (x >= j->img->width) x = j->img->width - 1;
        if (y >= j->img->height) y = j->img->height - 1;
        tg.t[p] = target_of(j, x, y, j->ch0 + ch);
    }
    kiln__eac_encode_channel(&tg, quality, dither, out);
}

/* The flagged jobs of an EAC pass (list[0..n-1], job = block * nch + channel) re-encoded with cpu_job over
 * the context's threads (helper etcring: on the H100 the serial loop was most of an EAC batch's wall time);
 * job jn's 8 bytes at d + (jn / nch) * stride + off + 8 (jn % nch). */
typedef struct eac_fix_job {
    const eac_job *ej;
    uint32_t bx, nch;
    const uint32_t *list;
    int quality, dither;
    uint8_t *d;
    size_t stride, off;
} eac_fix_job;

static void eac_fix_jobs(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    const eac_fix_job *f = user;
    for (size_t i = begin; i < end; i++) {
        const uint32_t jn = f->list[i];
        cpu_job(f->ej, f->bx, jn / f->nch, (int)(jn % f->nch), f->quality, f->dither,
                f->d + (size_t)(jn / f->nch) * f->stride + f->off + 8u * (jn % f->nch));
    }
}

/* Collects the nonzero flags of fl[0..njobs-1] into a list (malloc'd into *list, count *n) and re-encodes
 * those jobs as eac_fix_jobs does. */
static kiln_status eac_fix(kiln_context *ctx, const eac_job *ej, uint32_t bx, uint32_t nch, const uint32_t *fl, uint64_t njobs,
                           int quality, int dither, uint8_t *d, size_t stride, size_t off)
{
    uint64_t n = 0;
    for (uint64_t jn = 0; jn < njobs; jn++) n += fl[jn] != 0;
    if (n == 0) return KILN_OK;
    uint32_t *list = malloc((size_t)n * sizeof *list);
    if (!list) return kiln__fail(ctx, KILN_ERR_OUT_OF_MEMORY, "GPU EAC encode: no memory for %llu flagged jobs", (unsigned long long)n);
    n = 0;
    for (uint64_t jn = 0; jn < njobs; jn++)
        if (fl[jn]) list[n++] = (uint32_t)jn;
    eac_fix_job f = {ej, bx, nch, list, quality, dither, d, stride, off};
    kiln_status st = kiln__parallel_for(ctx, (size_t)n, 8, eac_fix_jobs, &f);
    free(list);
    return st;
}

/* ---------------------------------------------------------------- pass buffers */

/* The synchronous passes' input and output buffers (helper syncbatch): the device's scratch pair
 * gpu->dec_in / dec_out (the decoders' too; kiln_vk_io_ensure grows them, vk_device.c frees them with
 * the device), so consecutive images (kiln_encode_batch's image-by-image formats, mip levels) do not
 * create, map and free 2 to 6 Vulkan buffers each. Every pass writes all the words it reads back, so
 * what an earlier pass left in them never shows. KILN_GPU_SYNC_SCRATCH=0 in the environment: fresh
 * buffers per pass, as before (bench/gpu_batch_rows A/B). */
typedef struct pass_io {
    kiln_vk_io own; /* the per-pass buffers (KILN_GPU_SYNC_SCRATCH=0) */
    kiln_vk_io *io; /* &own or the device's scratch */
} pass_io;

static kiln_status pass_io_get(kiln_context *ctx, kiln_gpu *gpu, VkDeviceSize size, int output, pass_io *p)
{
    memset(p, 0, sizeof *p);
    const char *e = getenv("KILN_GPU_SYNC_SCRATCH");
    if (e && e[0] == '0') {
        p->io = &p->own;
        return kiln_vk_io_create(ctx, gpu, size, output, &p->own);
    }
    kiln_vk_io **slot = output ? &gpu->dec_out : &gpu->dec_in;
    if (!*slot) {
        *slot = kiln__calloc(ctx, 1, sizeof **slot);
        if (!*slot) return KILN_ERR_OUT_OF_MEMORY;
    }
    KILN_TRY(kiln_vk_io_ensure(ctx, gpu, size, output, *slot));
    p->io = *slot;
    return KILN_OK;
}

static void pass_io_put(kiln_gpu *gpu, pass_io *p)
{
    if (p->io == &p->own) kiln_vk_io_destroy(gpu, &p->own);
    p->io = NULL;
}

/* ---------------------------------------------------------------- the EAC pass */

static kiln_status check_int64(kiln_context *ctx, kiln_gpu *gpu)
{
    VkPhysicalDeviceFeatures f;
    vkGetPhysicalDeviceFeatures(gpu->physical, &f);
    if (!f.shaderInt64)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "the GPU EAC encoders need 64-bit integers in shaders; %s has none",
                          gpu->props.deviceName);
    return KILN_OK;
}

/* kiln's EAC design (strategy 0): the shader and its specialisation constant 3 (PRUNE), the one setting every EAC
 * pass takes (eac_pass, the ETC ring, the device-resident mip path: gpu_mip_encode_etc.h): enc_eac.comp (one
 * search: the (table, multiplier) units of a job to whichever of its lanes is free, the lb0 tie cut, the gap
 * bound, candidate bases as masks over one window per distinct target; helpers eacm, eacn, eacp, eac), bit 1
 * the spacing bound (the shader applies it at high and max only: one pipeline per kind). Default 2.
 * KILN_GPU_EAC_PRUNE=0..3 sets bit 1 from its bit 1 (0 / 1: without the spacing bound; the five-condition
 * search of 1 / 3 was removed by helper eacp); KILN_GPU_EAC_PROF=1 sets bit 9, a profiling aid that skips the
 * exact search (the blocks of the estimate: not exact). The second design, enc_eac_max.comp (helper eacmax: the
 * exact search spread evenly over the workgroup's lanes), ran 2.4x slower on the H100 (2026-11-26 08:40 UTC:
 * R11 max 181.1 vs 76.6 ms) and was removed (helper bc4k, 2026-11-26: one shader and its test fewer in CI). */
const char *kiln__gpu_eac_shader(uint32_t *spec3)
{
    uint32_t s = 2u;
    const char *pr = getenv("KILN_GPU_EAC_PRUNE");
    if (pr && pr[0] >= '0' && pr[0] <= '3') s = (uint32_t)(pr[0] - '0') & 2u;
    const char *pf = getenv("KILN_GPU_EAC_PROF");
    if (pf && pf[0] == '1') s |= 512u;
    *spec3 = s;
    return "enc_eac";
}

/* Encodes nch EAC channels per block into dst: the 8 bytes of channel c of block i at byte
 * (i * out_stride + out_off + 2 c) * 4. */
static kiln_status eac_pass(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params, int kind,
                            int nch, int ch0, uint32_t out_stride, uint32_t out_off, uint32_t subgroup_size,
                            uint8_t *dst, double *ms_out)
{
    const kiln_format_info *fi = kiln_format_get_info(params->format);
    kiln_gpu *gpu;
    KILN_TRY(kiln__gpu_get(ctx, &gpu));
    KILN_TRY(check_int64(ctx, gpu));
    const int seed = params->gpu_strategy == 1;
    int preload = 1;
    const char *pe = getenv("KILN_GPU_ETC_PRELOAD");
    if (pe && pe[0] == '0') preload = 0;
    /* kiln's design: enc_eac.comp, see kiln__gpu_eac_shader */
    uint32_t kspec = 0;
    const char *kshader = kiln__gpu_eac_shader(&kspec);

    const uint32_t w = img->width, h = img->height, bx = (w + 3) / 4, by = (h + 3) / 4;
    const uint64_t nblocks = (uint64_t)bx * by, njobs = nblocks * (uint64_t)nch;
    const int inmode = (img->type == KILN_PIXEL_U8 && kind != 2) ? 0 : 1;
    const uint64_t in_bytes = (uint64_t)w * h * 4u * (inmode ? (uint64_t)nch : 1u);
    const uint64_t out_bytes = nblocks * out_stride * 4u, flag_bytes = njobs * 4u;
    const uint64_t range = gpu->props.limits.maxStorageBufferRange;
    if (in_bytes > range || out_bytes > range || njobs > UINT32_MAX / 256u)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                          "%ux%u %s: %llu bytes of input exceed the device's storage buffer range (%llu) of one GPU pass",
                          w, h, fi->name, (unsigned long long)in_bytes, (unsigned long long)range);

    if (seed && (gpu->props.limits.maxComputeWorkGroupInvocations < 256 || gpu->props.limits.maxComputeWorkGroupSize[0] < 256))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "the seed EAC design needs workgroups of 256; %s allows %u",
                          gpu->props.deviceName, gpu->props.limits.maxComputeWorkGroupInvocations);
    const uint32_t spec[3] = {(uint32_t)kind, (uint32_t)inmode, seed ? (uint32_t)preload : kspec};
    const kiln_vk_pipeline *pipe;
    kiln_vk_pipeline_desc desc = {
        .shader = seed ? "enc_eac_seed" : kshader,
        .local_size = seed ? 256 : 64,
        .spec = spec,
        .nspec = 3,
        .nbindings = 3,
        .push_size = 9 * 4,
        .subgroup_size = subgroup_size,
    };
    KILN_TRY(kiln_vk_pipeline_get(ctx, gpu, &desc, &pipe));
    /* params->dither (kiln design; helper gpudither): enc_eac_dither.comp re-picks the indices of the
     * blocks enc_eac.comp wrote as eac_enc.c's write_block does (the search does not change) */
    const int dither = params->dither && !seed;
    const kiln_vk_pipeline *dpipe = NULL;
    if (dither) {
        const uint32_t dspec[2] = {(uint32_t)kind, (uint32_t)inmode};
        kiln_vk_pipeline_desc dd = {.shader = "enc_eac_dither", .local_size = 64, .spec = dspec, .nspec = 2,
                                    .nbindings = 2, .push_size = 9 * 4, .subgroup_size = subgroup_size};
        KILN_TRY(kiln_vk_pipeline_get(ctx, gpu, &dd, &dpipe));
    }

    /* the blocks and the flags share one output buffer: the flags from foff */
    uint64_t align = gpu->props.limits.minStorageBufferOffsetAlignment;
    if (align < 4) align = 4;
    const uint64_t foff = (out_bytes + align - 1) / align * align;
    pass_io pin, pout;
    memset(&pin, 0, sizeof pin);
    memset(&pout, 0, sizeof pout);
    kiln_vk_cmd cmd;
    memset(&cmd, 0, sizeof cmd);
    eac_job job = {img, kind, nch, ch0, (fi->flags & KILN_FF_SIGNED) && img->type != KILN_PIXEL_F32, NULL};
    kiln_status st = pass_io_get(ctx, gpu, in_bytes, 0, &pin);
    if (st == KILN_OK) st = pass_io_get(ctx, gpu, foff + flag_bytes, 1, &pout);
    kiln_vk_io *in = pin.io, *out = pout.io;
    if (st == KILN_OK) {
        if (inmode == 0) {
            memcpy(kiln_vk_io_map(in), img->pixels, (size_t)in_bytes);
        } else {
            job.targets = kiln_vk_io_map(in);
            st = kiln__parallel_for(ctx, h, 16, targets_rows, &job);
        }
    }
    if (st == KILN_OK) st = kiln_vk_buffer_flush(ctx, gpu, in->direct ? &in->dev : &in->staging);
    if (st == KILN_OK) st = kiln_vk_cmd_begin(ctx, gpu, dither ? 2 : 1, &cmd);
    double ms = 0.0;
    if (st == KILN_OK) {
        kiln_vk_cmd_upload(&cmd, in, in_bytes);
        kiln_vk_cmd_timestamp(&cmd, 0);
        uint32_t push[9] = {w, h, bx, (uint32_t)njobs, (uint32_t)nch, (uint32_t)ch0, out_stride, out_off, (uint32_t)params->quality};
        kiln_vk_binding b[3] = {{.buffer = in->dev.buffer, .range = in_bytes},
                                {.buffer = out->dev.buffer, .range = out_bytes},
                                {.buffer = out->dev.buffer, .offset = foff, .range = flag_bytes}};
        /* kiln: 16 invocations per job (4 jobs per workgroup); seed: 256 per job */
        st = kiln_vk_cmd_dispatch_linear(ctx, &cmd, pipe, b, push, njobs * (seed ? 256u : 16u));
        if (st == KILN_OK && dither) {
            kiln_vk_cmd_barrier(&cmd);
            st = kiln_vk_cmd_dispatch_linear(ctx, &cmd, dpipe, b, push, njobs);
        }
        kiln_vk_cmd_timestamp(&cmd, 1);
        kiln_vk_cmd_download(&cmd, out, foff + flag_bytes);
        if (st == KILN_OK) st = kiln_vk_cmd_submit(ctx, &cmd, &ms);
    }
    kiln_vk_cmd_free(&cmd);
    if (st == KILN_OK) st = kiln_vk_buffer_invalidate(ctx, gpu, out->direct ? &out->dev : &out->staging);
    if (st == KILN_OK) {
        const uint32_t *o = kiln_vk_io_map(out);
        /* only this pass's words: other passes (ETC2 RGBA colour) own the rest of each block */
        if (out_stride == 2u * (uint32_t)nch && out_off == 0) {
            memcpy(dst, o, (size_t)out_bytes);
        } else {
            for (uint64_t i = 0; i < nblocks; i++)
                memcpy(dst + (i * out_stride + out_off) * 4, o + i * out_stride + out_off, 8u * (size_t)nch);
        }
        if (!seed) {
            const uint32_t *fl = (const uint32_t *)((const uint8_t *)kiln_vk_io_map(out) + foff);
            st = eac_fix(ctx, &job, bx, (uint32_t)nch, fl, njobs, params->quality, params->dither, dst, (size_t)out_stride * 4u,
                         (size_t)out_off * 4u);
        }
    }
    pass_io_put(gpu, &pin);
    pass_io_put(gpu, &pout);
    if (st == KILN_OK) *ms_out = ms;
    return st;
}

/* Test hook (no header: tests/unit/test_gpu_encode_etc.c declares it): the EAC alpha of ETC2 RGBA alone, into
 * bytes 0..7 of each 16-byte block of dst (bytes 8..15 are left as they are), with kiln's design or the
 * seed's (params->gpu_strategy). */
kiln_status kiln__gpu_encode_etc2_alpha(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                                        uint32_t subgroup_size, uint8_t *dst, size_t dst_size);
kiln_status kiln__gpu_encode_etc2_alpha(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                                        uint32_t subgroup_size, uint8_t *dst, size_t dst_size)
{
    if (!img || !img->pixels || img->width == 0 || img->height == 0 || !params)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "GPU ETC2 alpha encode: empty image or no parameters");
    size_t need = kiln_format_image_size(KILN_FORMAT_ETC2_RGBA8_UNORM, img->width, img->height);
    if (need == 0 || !dst || dst_size < need)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "GPU ETC2 alpha encode of %ux%u needs %zu bytes", img->width,
                          img->height, need);
    if (params->dither)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "etc2-rgba alpha pass: this test hook does not dither (kiln__gpu_encode_etc does)");
    double ms = 0.0;
    KILN_TRY(eac_pass(ctx, img, params, 0, 1, 3, 4, 0, subgroup_size, dst, &ms));
    ctx->last_gpu_ms = ms;
    return KILN_OK;
}

/* ---------------------------------------------------------------- the ETC1 seed pass */

/* RGBA8 rows of any source (fetch_px's 8-bit view), for the colour seed shaders. */
typedef struct rgba8_job {
    const kiln_image *img;
    uint8_t *out;
} rgba8_job;

static void rgba8_rows(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    const rgba8_job *j = user;
    const uint32_t w = j->img->width;
    for (size_t y = begin; y < end; y++)
        for (uint32_t x = 0; x < w; x++) {
            uint16_t r16[4];
            float f[4];
            fetch_px(j->img, x, (uint32_t)y, j->out + ((size_t)y * w + x) * 4, r16, f);
        }
}

/* Block i (row-major, bx blocks per row) of a w x h RGBA8 image, edge-replicated as encode.c's fetch_block. */
static void rgba8_block(const uint8_t *px, uint32_t w, uint32_t h, uint32_t bx, size_t i, kiln_block *blk)
{
    memset(blk, 0, sizeof *blk);
    const uint32_t x0 = (uint32_t)(i % bx) * 4u, y0 = (uint32_t)(i / bx) * 4u;
    for (uint32_t p = 0; p < 16; p++) {
        uint32_t x = x0 + (p & 3u), y = y0 + (p >> 2);
        x = x < w ? x : w - 1;
        y = y < h ? y : h - 1;
        memcpy(blk->rgba8 + p * 4, px + ((size_t)y * w + x) * 4, 4);
    }
}

/* ETC2 RGB fast: the blocks the shader flagged for T / H, re-encoded with the CPU's fast path from the
 * RGBA8 words the shader read (edge-replicated as encode.c's fetch_block). */
typedef struct th_job {
    const uint32_t *flags;
    const uint8_t *px;
    uint32_t w, h, bx;
    const kiln_encode_params *params;
    uint8_t *dst;
} th_job;

static void th_blocks(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    const th_job *j = user;
    for (size_t i = begin; i < end; i++) {
        if (!j->flags[i]) continue;
        kiln_block blk;
        rgba8_block(j->px, j->w, j->h, j->bx, i, &blk);
        kiln__etc_fast_opaque(&blk, j->params, 1, j->dst + i * 8u);
    }
}

/* The pipeline of enc_etc1_q.comp (a1 = 0) or enc_etc1_q_a1.comp (a1 = 1) with OUT4 = out4 (helper etc2max):
 * KILN_GPU_ETC1_BOXSKIP=0|1|2 (step 2's delta-box searches: 0 all of them speculatively, 1 / 2 only those the
 * CPU's sequence can reach, 2 listed per workgroup; default ETC1_BOXSKIP_DEFAULT) and KILN_GPU_ETC1_WG=64|128|256
 * (the workgroup size, 8 invocations per block; default ETC1_WG_DEFAULT); KILN_GPU_ETC1_TOPFIX=0|1 (sub_search's sorted lists with
 * constant indices only; default ETC1_TOPFIX_DEFAULT). Every setting gives the same bytes. Dispatches: 8
 * invocations per block, any multiple of 8 (kiln_vk_cmd_dispatch_linear rounds up to whole workgroups). */
/* H100, 2026-11-26 11:50 UTC, whole ETC2 RGB max at 4096^2 (rock), kernel min ms: BOXSKIP 0 / WG 64 / TOPFIX 0 (before)
 * 87.07, 87.09, 86.95; BOXSKIP 2 80.19; 2 + TOPFIX 1 101.18, 101.53; 2 + TOPFIX 1 + WG 256 77.32; 0 + TOPFIX 1 118.86:
 * the listed box searches pay, more so in workgroups of 256 (fewer subgroups hold one), TOPFIX does not */
#define ETC1_BOXSKIP_DEFAULT 2u
#define ETC1_WG_DEFAULT 256u
#define ETC1_TOPFIX_DEFAULT 0u
static kiln_status etc1_q_pipeline(kiln_context *ctx, kiln_gpu *gpu, int a1, uint32_t out4, uint32_t subgroup_size,
                                   const kiln_vk_pipeline **out)
{
    uint32_t boxskip = ETC1_BOXSKIP_DEFAULT, wg = ETC1_WG_DEFAULT, topfix = ETC1_TOPFIX_DEFAULT;
    const char *eb = getenv("KILN_GPU_ETC1_BOXSKIP"), *ew = getenv("KILN_GPU_ETC1_WG"), *et = getenv("KILN_GPU_ETC1_TOPFIX");
    if (et && et[0]) {
        if (strcmp(et, "0") && strcmp(et, "1"))
            return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "KILN_GPU_ETC1_TOPFIX=%s: expected 0 or 1", et);
        topfix = (uint32_t)(et[0] - '0');
    }
    if (eb && eb[0]) {
        if (strcmp(eb, "0") && strcmp(eb, "1") && strcmp(eb, "2"))
            return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "KILN_GPU_ETC1_BOXSKIP=%s: expected 0, 1 or 2", eb);
        boxskip = (uint32_t)(eb[0] - '0');
    }
    if (ew && ew[0]) {
        if (strcmp(ew, "64") && strcmp(ew, "128") && strcmp(ew, "256"))
            return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "KILN_GPU_ETC1_WG=%s: expected 64, 128 or 256", ew);
        wg = (uint32_t)atoi(ew);
    }
    const uint32_t spec[3] = {out4, boxskip, topfix};
    kiln_vk_pipeline_desc d = {
        .shader = a1 ? "enc_etc1_q_a1" : "enc_etc1_q",
        .local_size = wg,
        .spec = spec,
        .nspec = 3,
        .nbindings = 2,
        .push_size = 9 * 4,
        .subgroup_size = subgroup_size,
    };
    return kiln_vk_pipeline_get(ctx, gpu, &d, out);
}

/* The ETC1 passes, 8 bytes per block into dst: betsy's design (shaders/enc_etc1_seed.comp, seed = 1,
 * 4 invocations per block) or kiln's (seed = 0): shaders/enc_etc1.comp at quality FAST (4 invocations
 * per block), shaders/enc_etc1_q.comp at NORMAL / HIGH / MAX (8 per block). etc2 = 1: ETC2 RGB at FAST
 * (enc_etc1.comp with ETC2 = 1): the blocks the shader flags for T / H are re-encoded here with the
 * CPU's fast path (kiln__etc_fast_opaque, the CPU encoder's own bytes). */
static kiln_status etc1_pass(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params, int seed,
                             int etc2, uint32_t subgroup_size, uint8_t *dst, double *ms_out)
{
    const kiln_format_info *fi = kiln_format_get_info(params->format);
    kiln_gpu *gpu;
    KILN_TRY(kiln__gpu_get(ctx, &gpu));
    int preload = 1;
    const char *pe = getenv("KILN_GPU_ETC_PRELOAD");
    if (pe && pe[0] == '0') preload = 0;
    const uint32_t w = img->width, h = img->height, bx = (w + 3) / 4, by = (h + 3) / 4;
    const uint64_t nblocks = (uint64_t)bx * by;
    const uint64_t in_bytes = (uint64_t)w * h * 4u, out_bytes = nblocks * (etc2 ? 12u : 8u);
    const uint64_t range = gpu->props.limits.maxStorageBufferRange;
    if (in_bytes > range || out_bytes > range || nblocks > UINT32_MAX / 8u)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                          "%ux%u %s: %llu bytes of input exceed the device's storage buffer range (%llu) of one GPU pass",
                          w, h, fi->name, (unsigned long long)in_bytes, (unsigned long long)range);
    const int search = !seed && params->quality != KILN_QUALITY_FAST;
    /* enc_etc1_q: OUT4 = 0 (2 words per block) */
    const uint32_t spec[1] = {search ? 0u : (seed ? (uint32_t)preload : (uint32_t)etc2)};
    const uint32_t per_group = search ? 8u : 16u; /* blocks per workgroup of 64 */
    const kiln_vk_pipeline *pipe;
    kiln_vk_pipeline_desc desc = {
        .shader = seed ? "enc_etc1_seed" : "enc_etc1",
        .local_size = 64,
        .spec = spec,
        .nspec = 1,
        .nbindings = 2,
        .push_size = seed ? 5 * 4 : (search ? 9 * 4 : 8 * 4),
        .subgroup_size = subgroup_size,
    };
    if (search)
        KILN_TRY(etc1_q_pipeline(ctx, gpu, 0, 0u, subgroup_size, &pipe));
    else
        KILN_TRY(kiln_vk_pipeline_get(ctx, gpu, &desc, &pipe));

    pass_io pin, pout;
    kiln_vk_io *in = NULL, *out = NULL;
    memset(&pin, 0, sizeof pin);
    memset(&pout, 0, sizeof pout);
    kiln_vk_cmd cmd;
    memset(&cmd, 0, sizeof cmd);
    /* ETC2 re-encodes flagged blocks from the RGBA8 words: a host copy, never the (maybe uncached) mapping */
    uint8_t *host8 = NULL;
    kiln_status st = pass_io_get(ctx, gpu, in_bytes, 0, &pin);
    if (st == KILN_OK) st = pass_io_get(ctx, gpu, out_bytes, 1, &pout);
    in = pin.io;
    out = pout.io;
    if (st == KILN_OK) {
        if (img->type == KILN_PIXEL_U8) {
            memcpy(kiln_vk_io_map(in), img->pixels, (size_t)in_bytes);
        } else if (etc2) {
            host8 = malloc((size_t)in_bytes);
            if (!host8)
                st = kiln__fail(ctx, KILN_ERR_OUT_OF_MEMORY, "GPU %s encode: no memory for the 8-bit view (%llu bytes)",
                                fi->name, (unsigned long long)in_bytes);
            rgba8_job job = {img, host8};
            if (st == KILN_OK) st = kiln__parallel_for(ctx, h, 16, rgba8_rows, &job);
            if (st == KILN_OK) memcpy(kiln_vk_io_map(in), host8, (size_t)in_bytes);
        } else {
            rgba8_job job = {img, kiln_vk_io_map(in)};
            st = kiln__parallel_for(ctx, h, 16, rgba8_rows, &job);
        }
    }
    if (st == KILN_OK) st = kiln_vk_buffer_flush(ctx, gpu, in->direct ? &in->dev : &in->staging);
    if (st == KILN_OK) st = kiln_vk_cmd_begin(ctx, gpu, 1, &cmd);
    double ms = 0.0;
    if (st == KILN_OK) {
        kiln_vk_cmd_upload(&cmd, in, in_bytes);
        kiln_vk_cmd_timestamp(&cmd, 0);
        uint32_t push[9] = {w, h, bx, (uint32_t)nblocks, (uint32_t)params->quality, 0, 0, 0, 0};
        if (!seed) { /* kiln: the channel weights, then the quality */
            push[4] = params->perceptual ? ETC_PW_R : 1;
            push[5] = params->perceptual ? ETC_PW_G : 1;
            push[6] = params->perceptual ? ETC_PW_B : 1;
            /* enc_etc1_q: the quality; enc_etc1: the T/H threshold of ETC2 (etc_enc_fast.c fast_body) */
            push[7] = search ? (uint32_t)params->quality
                             : ETC_FAST_TH_ERR * 16u * (push[4] + push[5] + push[6]) / 3u;
        }
        kiln_vk_binding b[2] = {{.buffer = in->dev.buffer, .range = in_bytes}, {.buffer = out->dev.buffer, .range = out_bytes}};
        st = kiln_vk_cmd_dispatch_linear(ctx, &cmd, pipe, b, push, (nblocks + per_group - 1u) / per_group * 64u);
        kiln_vk_cmd_timestamp(&cmd, 1);
        kiln_vk_cmd_download(&cmd, out, out_bytes);
        if (st == KILN_OK) st = kiln_vk_cmd_submit(ctx, &cmd, &ms);
    }
    kiln_vk_cmd_free(&cmd);
    if (st == KILN_OK) st = kiln_vk_buffer_invalidate(ctx, gpu, out->direct ? &out->dev : &out->staging);
    if (st == KILN_OK) {
        const uint8_t *o = kiln_vk_io_map(out);
        memcpy(dst, o, (size_t)nblocks * 8u);
        if (etc2) {
            /* the flagged blocks (T / H) on the CPU, over the context's threads */
            th_job tj = {(const uint32_t *)(o + nblocks * 8u), host8 ? host8 : (const uint8_t *)img->pixels, w, h, bx,
                         params, dst};
            st = kiln__parallel_for(ctx, (size_t)nblocks, 1024, th_blocks, &tj);
        }
    }
    free(host8);
    pass_io_put(gpu, &pin);
    pass_io_put(gpu, &pout);
    if (st == KILN_OK) *ms_out = ms;
    return st;
}

/* ---------------------------------------------------------------- ETC2 colour above FAST, RGB A1 */

/* The host T / H step (kiln__etc2_search_th, the CPU's own gate, bound, search and reselect) for the
 * blocks of the GPU passes' state, when the GPU T / H pass (gpu_etc2_th.c) is not built or declines. */
typedef struct th_host_job {
    const uint8_t *px; /* RGBA8, w x h */
    uint32_t w, h, bx;
    const kiln_encode_params *params;
    int a1;
    kiln_etc2_gpu_block *blocks;
} th_host_job;

static void th_host_blocks(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    const th_host_job *j = user;
    for (size_t i = begin; i < end; i++) {
        kiln_etc2_gpu_block *b = &j->blocks[i];
        if (b->err == 0) continue; /* the gate is never below 0 */
        kiln_block blk;
        rgba8_block(j->px, j->w, j->h, j->bx, i, &blk);
        etc_src src;
        kiln__etc_src_init(&src, &blk, j->params, j->a1);
        if (src.nopaque == 0) continue; /* RGB A1, fully transparent: the fixed block, no search */
        etc_sol sol;
        memset(&sol, 0, sizeof sol);
        sol.mode = ETC_MODE_DIFF; /* anything but T / H: the search reads only the error */
        sol.err = b->err;
        kiln__etc2_search_th(&src, &sol);
        if (sol.mode == ETC_MODE_T || sol.mode == ETC_MODE_H) {
            kiln__etc_pack(&sol, &src, b->bytes);
            b->err = sol.err;
        }
    }
}

static kiln_status check_float64(kiln_context *ctx, kiln_gpu *gpu, const char *what)
{
    VkPhysicalDeviceFeatures f;
    vkGetPhysicalDeviceFeatures(gpu->physical, &f);
    if (!f.shaderFloat64)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "the GPU %s encoder needs 64-bit floats in shaders; %s has none", what,
                          gpu->props.deviceName);
    return KILN_OK;
}

/* ETC2 RGB / RGBA colour above FAST and RGB A1 (a1 = 1) at every quality, as the CPU's kiln__etc2_search
 * in passes over a kiln_etc2_gpu_block per block: the ETC1 modes (enc_etc1_q.comp OUT4 = 1, or
 * enc_etc1_q_a1.comp), planar (enc_etc2_planar.comp) in one submission, then T / H (kiln__gpu_etc2_th
 * when built, else on the host with the CPU's code). The 8 colour bytes of block i go to
 * dst + i * stride + off. */
static kiln_status etc2_colour_pass(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params, int a1,
                                    uint32_t subgroup_size, uint8_t *dst, size_t stride, size_t off, double *ms_out)
{
    const kiln_format_info *fi = kiln_format_get_info(params->format);
    kiln_gpu *gpu;
    KILN_TRY(kiln__gpu_get(ctx, &gpu));
    KILN_TRY(check_float64(ctx, gpu, fi->name));
    const uint32_t w = img->width, h = img->height, bx = (w + 3) / 4, by = (h + 3) / 4;
    const uint64_t nblocks = (uint64_t)bx * by;
    const uint64_t in_bytes = (uint64_t)w * h * 4u, state_bytes = nblocks * sizeof(kiln_etc2_gpu_block);
    const uint64_t range = gpu->props.limits.maxStorageBufferRange;
    if (in_bytes > range || state_bytes > range || nblocks > UINT32_MAX / 8u || state_bytes > SIZE_MAX)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                          "%ux%u %s: %llu bytes of input exceed the device's storage buffer range (%llu) of one GPU pass",
                          w, h, fi->name, (unsigned long long)in_bytes, (unsigned long long)range);
    const kiln_vk_pipeline *pe, *pp;
    kiln_vk_pipeline_desc dp = {
        .shader = "enc_etc2_planar",
        .local_size = 64,
        .nbindings = 2,
        .push_size = 10 * 4,
        .subgroup_size = subgroup_size,
    };
    KILN_TRY(etc1_q_pipeline(ctx, gpu, a1, 1u, subgroup_size, &pe)); /* OUT4 = 1 */
    KILN_TRY(kiln_vk_pipeline_get(ctx, gpu, &dp, &pp));

    pass_io pin, pstate;
    kiln_vk_io *in = NULL, *state = NULL;
    memset(&pin, 0, sizeof pin);
    memset(&pstate, 0, sizeof pstate);
    kiln_vk_cmd cmd;
    memset(&cmd, 0, sizeof cmd);
    uint8_t *host8 = NULL;
    kiln_etc2_gpu_block *blocks = NULL;
    const uint8_t *px = img->type == KILN_PIXEL_U8 ? (const uint8_t *)img->pixels : NULL;
    kiln_status st = KILN_OK;
    if (!px) {
        /* the 8-bit view the CPU's blocks see (encode.c fetch_texel), for the GPU and the host T / H */
        host8 = malloc((size_t)in_bytes);
        if (!host8)
            st = kiln__fail(ctx, KILN_ERR_OUT_OF_MEMORY, "GPU %s encode: no memory for the 8-bit view (%llu bytes)", fi->name,
                            (unsigned long long)in_bytes);
        rgba8_job job = {img, host8};
        if (st == KILN_OK) st = kiln__parallel_for(ctx, h, 16, rgba8_rows, &job);
        px = host8;
    }
    if (st == KILN_OK) {
        blocks = malloc((size_t)state_bytes);
        if (!blocks)
            st = kiln__fail(ctx, KILN_ERR_OUT_OF_MEMORY, "GPU %s encode: no memory for %llu block states", fi->name,
                            (unsigned long long)nblocks);
    }
    if (st == KILN_OK) st = pass_io_get(ctx, gpu, in_bytes, 0, &pin);
    if (st == KILN_OK) st = pass_io_get(ctx, gpu, state_bytes, 1, &pstate);
    in = pin.io;
    state = pstate.io;
    if (st == KILN_OK) {
        memcpy(kiln_vk_io_map(in), px, (size_t)in_bytes);
        st = kiln_vk_buffer_flush(ctx, gpu, in->direct ? &in->dev : &in->staging);
    }
    if (st == KILN_OK) st = kiln_vk_cmd_begin(ctx, gpu, 2, &cmd);
    double ms = 0.0;
    if (st == KILN_OK) {
        const uint32_t pw[3] = {params->perceptual ? ETC_PW_R : 1u, params->perceptual ? ETC_PW_G : 1u,
                                params->perceptual ? ETC_PW_B : 1u};
        const uint32_t push[10] = {w, h, bx, (uint32_t)nblocks, pw[0], pw[1], pw[2], (uint32_t)params->quality,
                                   (uint32_t)params->alpha_threshold, 0};
        const uint32_t push_p[10] = {w, h, bx, (uint32_t)nblocks, pw[0], pw[1], pw[2], (uint32_t)params->quality,
                                     (uint32_t)a1, (uint32_t)params->alpha_threshold};
        kiln_vk_binding b[2] = {{.buffer = in->dev.buffer, .range = in_bytes}, {.buffer = state->dev.buffer, .range = state_bytes}};
        kiln_vk_cmd_upload(&cmd, in, in_bytes);
        kiln_vk_cmd_timestamp(&cmd, 0);
        /* enc_etc1_q: 8 invocations per block; enc_etc2_planar: 4 */
        st = kiln_vk_cmd_dispatch_linear(ctx, &cmd, pe, b, push, (nblocks + 7u) / 8u * 64u);
        /* KILN_GPU_ETC2_BENCH_NO_PLANAR=1 (bench/ only, wrong bytes): the ETC1 modes' kernel time without planar */
        const char *np = getenv("KILN_GPU_ETC2_BENCH_NO_PLANAR");
        if (st == KILN_OK && !(np && np[0] == '1')) {
            kiln_vk_cmd_barrier(&cmd);
            st = kiln_vk_cmd_dispatch_linear(ctx, &cmd, pp, b, push_p, (nblocks + 15u) / 16u * 64u);
        }
        kiln_vk_cmd_timestamp(&cmd, 1);
        kiln_vk_cmd_download(&cmd, state, state_bytes);
        if (st == KILN_OK) st = kiln_vk_cmd_submit(ctx, &cmd, &ms);
    }
    kiln_vk_cmd_free(&cmd);
    if (st == KILN_OK) st = kiln_vk_buffer_invalidate(ctx, gpu, state->direct ? &state->dev : &state->staging);
    if (st == KILN_OK) memcpy(blocks, kiln_vk_io_map(state), (size_t)state_bytes);
    pass_io_put(gpu, &pin);
    pass_io_put(gpu, &pstate);
    /* T / H: on the GPU when gpu_etc2_th.c is built and takes the request, else on the host */
    int th_done = 0;
#if defined(__has_include)
#if __has_include("gpu_etc2_th.c")
    const char *th_env = getenv("KILN_GPU_ETC2_TH"); /* "host": the host step (tests, bench/) */
    if (st == KILN_OK && !(th_env && strcmp(th_env, "host") == 0)) {
        double ms_th = 0.0;
        kiln_status s2 = kiln__gpu_etc2_th(ctx, px, w, h, params, a1, subgroup_size, blocks, &ms_th);
        if (s2 == KILN_OK) {
            th_done = 1;
            ms += ms_th;
        } else if (s2 != KILN_ERR_UNSUPPORTED) {
            st = s2;
        }
    }
#endif
#endif
    if (st == KILN_OK && !th_done) {
        th_host_job tj = {px, w, h, bx, params, a1, blocks};
        st = kiln__parallel_for(ctx, (size_t)nblocks, 256, th_host_blocks, &tj);
    }
    if (st == KILN_OK)
        for (uint64_t i = 0; i < nblocks; i++) memcpy(dst + i * stride + off, blocks[i].bytes, 8);
    free(blocks);
    free(host8);
    if (st == KILN_OK) *ms_out = ms;
    return st;
}

/* ---------------------------------------------------------------- dithering (helper gpudither) */

/* params->dither for ETC1 / ETC2 RGB / RGBA colour, kiln strategy: the CPU dithers only the final
 * selectors (kiln__etc_reselect with dither after the search; integers only), so after the colour
 * passes have put the CPU's blocks in dst, enc_etc_dither.comp re-picks the selectors of every block
 * from the RGBA8 texels (the 8-bit view the colour encoders read) and the block's own mode, colours and
 * tables. Blocks of stride_words words, colour half at off_words. A pass of its own (upload texels and
 * blocks, one dispatch, download), so it follows whichever colour pass (ETC1, ETC1 + planar + T/H on the
 * GPU or the host) wrote the blocks. */
static kiln_status etc_dither_pass(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params, int etc2,
                                   int a1, uint32_t stride_words, uint32_t off_words, uint32_t subgroup_size, uint8_t *dst,
                                   double *ms_out)
{
    const kiln_format_info *fi = kiln_format_get_info(params->format);
    kiln_gpu *gpu;
    KILN_TRY(kiln__gpu_get(ctx, &gpu));
    const uint32_t w = img->width, h = img->height, bx = (w + 3) / 4, by = (h + 3) / 4;
    const uint64_t nblocks = (uint64_t)bx * by, in_bytes = (uint64_t)w * h * 4u, blk_bytes = nblocks * stride_words * 4u;
    const uint64_t range = gpu->props.limits.maxStorageBufferRange;
    if (in_bytes > range || blk_bytes > range || nblocks > UINT32_MAX)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%ux%u %s with dithering: %llu bytes exceed the device's storage buffer range (%llu)",
                          w, h, fi->name, (unsigned long long)(in_bytes > blk_bytes ? in_bytes : blk_bytes), (unsigned long long)range);
    const uint32_t spec[2] = {etc2 ? 1u : 0u, a1 ? 1u : 0u};
    const kiln_vk_pipeline *pipe;
    kiln_vk_pipeline_desc desc = {.shader = "enc_etc_dither", .local_size = 64, .spec = spec, .nspec = 2,
                                  .nbindings = 3, .push_size = 10 * 4, .subgroup_size = subgroup_size};
    KILN_TRY(kiln_vk_pipeline_get(ctx, gpu, &desc, &pipe));
    kiln_vk_io px, bin, bout;
    memset(&px, 0, sizeof px);
    memset(&bin, 0, sizeof bin);
    memset(&bout, 0, sizeof bout);
    kiln_vk_cmd cmd;
    memset(&cmd, 0, sizeof cmd);
    kiln_status st = kiln_vk_io_create(ctx, gpu, in_bytes, 0, &px);
    if (st == KILN_OK) st = kiln_vk_io_create(ctx, gpu, blk_bytes, 0, &bin);
    if (st == KILN_OK) st = kiln_vk_io_create(ctx, gpu, blk_bytes, 1, &bout);
    if (st == KILN_OK) {
        if (img->type == KILN_PIXEL_U8) {
            memcpy(kiln_vk_io_map(&px), img->pixels, (size_t)in_bytes);
        } else {
            rgba8_job job = {img, kiln_vk_io_map(&px)};
            st = kiln__parallel_for(ctx, h, 16, rgba8_rows, &job);
        }
    }
    if (st == KILN_OK) {
        memcpy(kiln_vk_io_map(&bin), dst, (size_t)blk_bytes);
        st = kiln_vk_buffer_flush(ctx, gpu, px.direct ? &px.dev : &px.staging);
    }
    if (st == KILN_OK) st = kiln_vk_buffer_flush(ctx, gpu, bin.direct ? &bin.dev : &bin.staging);
    if (st == KILN_OK) st = kiln_vk_cmd_begin(ctx, gpu, 1, &cmd);
    double ms = 0.0;
    if (st == KILN_OK) {
        kiln_vk_cmd_upload(&cmd, &px, in_bytes);
        kiln_vk_cmd_upload(&cmd, &bin, blk_bytes);
        kiln_vk_cmd_timestamp(&cmd, 0);
        const uint32_t push[10] = {w, h, bx, (uint32_t)nblocks, stride_words, off_words,
                                   params->perceptual ? ETC_PW_R : 1u, params->perceptual ? ETC_PW_G : 1u,
                                   params->perceptual ? ETC_PW_B : 1u, (uint32_t)params->alpha_threshold};
        kiln_vk_binding b[3] = {{.buffer = px.dev.buffer, .range = in_bytes},
                                {.buffer = bin.dev.buffer, .range = blk_bytes},
                                {.buffer = bout.dev.buffer, .range = blk_bytes}};
        st = kiln_vk_cmd_dispatch_linear(ctx, &cmd, pipe, b, push, nblocks);
        kiln_vk_cmd_timestamp(&cmd, 1);
        kiln_vk_cmd_download(&cmd, &bout, blk_bytes);
        if (st == KILN_OK) st = kiln_vk_cmd_submit(ctx, &cmd, &ms);
    }
    kiln_vk_cmd_free(&cmd);
    if (st == KILN_OK) st = kiln_vk_buffer_invalidate(ctx, gpu, bout.direct ? &bout.dev : &bout.staging);
    if (st == KILN_OK) {
        const uint32_t *o = kiln_vk_io_map(&bout);
        for (uint64_t i = 0; i < nblocks; i++)
            memcpy(dst + (i * stride_words + off_words) * 4u, o + i * stride_words + off_words, 8);
        *ms_out += ms;
    }
    kiln_vk_io_destroy(gpu, &px);
    kiln_vk_io_destroy(gpu, &bin);
    kiln_vk_io_destroy(gpu, &bout);
    return st;
}

/* ---------------------------------------------------------------- entry */

kiln_status kiln__gpu_encode_etc(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                                 uint32_t subgroup_size, uint8_t *dst, size_t dst_size)
{
    const kiln_format_info *fi = kiln_format_get_info(params->format);
    if (!fi) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_encode: unknown format %d", (int)params->format);
    if (!img || !img->pixels || img->width == 0 || img->height == 0)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "GPU %s encode: empty image", fi->name);
    size_t need = kiln_format_image_size(fi->format, img->width, img->height);
    if (need == 0 || !dst || dst_size < need)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "GPU %s encode of %ux%u needs %zu bytes, the buffer holds %zu",
                          fi->name, img->width, img->height, need, dst ? dst_size : (size_t)0);
    if (params->gpu_strategy != 0 && params->gpu_strategy != 1)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "GPU strategy %d is neither kiln (0) nor seed (1)", params->gpu_strategy);
    /* dithering (helper gpudither): kiln's strategy only; EAC in eac_pass, ETC colour by etc_dither_pass
     * after the colour passes */
    if (params->dither && params->gpu_strategy != 0)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: the seed strategy does not dither on the GPU; --backend auto encodes it on the CPU",
                          fi->name);
    /* the colour passes search without dithering (as the CPU does; a block they hand to the CPU encoder
     * must not come back dithered), then etc_dither_pass re-picks the selectors.
     * ETC2 RGB / RGBA at FAST (helper ditherfix): the CPU dithers the fast path's block (kiln__etc_fast_opaque,
     * which enc_etc1.comp ETC2 = 1 replays), see etc2_enc.c kiln__enc_etc2_rgb. */
    kiln_encode_params nd_params = *params;
    nd_params.dither = 0;
    const kiln_encode_params *cp = &nd_params;
    if (fi->format == KILN_FORMAT_ETC1_UNORM || fi->format == KILN_FORMAT_ETC1_SRGB) {
        double ms = 0.0;
        KILN_TRY(etc1_pass(ctx, img, cp, params->gpu_strategy == 1, 0, subgroup_size, dst, &ms));
        if (params->dither) KILN_TRY(etc_dither_pass(ctx, img, params, 0, 0, 2, 0, subgroup_size, dst, &ms));
        ctx->last_gpu_ms = ms;
        return KILN_OK;
    }
    const int is_rgb = fi->format == KILN_FORMAT_ETC2_RGB8_UNORM || fi->format == KILN_FORMAT_ETC2_RGB8_SRGB;
    const int is_rgba = fi->format == KILN_FORMAT_ETC2_RGBA8_UNORM || fi->format == KILN_FORMAT_ETC2_RGBA8_SRGB;
    const int is_a1 = fi->format == KILN_FORMAT_ETC2_RGB8A1_UNORM || fi->format == KILN_FORMAT_ETC2_RGB8A1_SRGB;
    if ((is_rgb || is_rgba) && params->gpu_strategy == 1) {
        /* betsy's ETC2 design (gpu_encode_etc2_seed.c); RGBA: its colour in bytes 8..15, the EAC seed alpha in 0..7 */
        double ms_c = 0.0, ms_a = 0.0;
        KILN_TRY(kiln__gpu_etc2_seed_colour(ctx, img, params, subgroup_size, dst, is_rgba ? 16 : 8, is_rgba ? 8 : 0, &ms_c));
        if (is_rgba) KILN_TRY(eac_pass(ctx, img, params, 0, 1, 3, 4, 0, subgroup_size, dst, &ms_a));
        ctx->last_gpu_ms = ms_c + ms_a;
        return KILN_OK;
    }
    if ((is_rgb || is_a1) && params->gpu_strategy == 0) {
        double ms = 0.0;
        if (is_rgb && params->quality == KILN_QUALITY_FAST)
            KILN_TRY(etc1_pass(ctx, img, cp, 0, 1, subgroup_size, dst, &ms));
        else
            KILN_TRY(etc2_colour_pass(ctx, img, cp, is_a1, subgroup_size, dst, 8, 0, &ms));
        if (params->dither) KILN_TRY(etc_dither_pass(ctx, img, params, 1, is_a1, 2, 0, subgroup_size, dst, &ms));
        ctx->last_gpu_ms = ms;
        return KILN_OK;
    }
    if (is_rgba && params->gpu_strategy == 0) {
        /* the CPU's kiln__enc_etc2_rgba: EAC alpha in bytes 0..7, the ETC2 RGB colour in bytes 8..15 */
        const uint64_t nblocks = (uint64_t)((img->width + 3) / 4) * ((img->height + 3) / 4);
        if (nblocks > SIZE_MAX / 8u)
            return kiln__fail(ctx, KILN_ERR_TOO_LARGE, "GPU %s encode of %ux%u: too many blocks", fi->name, img->width,
                              img->height);
        double ms_c = 0.0, ms_a = 0.0;
        kiln_status st = KILN_OK;
        if (params->quality == KILN_QUALITY_FAST) {
            uint8_t *colour = malloc((size_t)nblocks * 8u);
            if (!colour)
                return kiln__fail(ctx, KILN_ERR_OUT_OF_MEMORY, "GPU %s encode: no memory for %llu colour blocks", fi->name,
                                  (unsigned long long)nblocks);
            st = etc1_pass(ctx, img, cp, 0, 1, subgroup_size, colour, &ms_c);
            if (st == KILN_OK)
                for (uint64_t i = 0; i < nblocks; i++) memcpy(dst + i * 16u + 8u, colour + i * 8u, 8);
            free(colour);
        } else {
            st = etc2_colour_pass(ctx, img, cp, 0, subgroup_size, dst, 16, 8, &ms_c);
        }
        if (st == KILN_OK && params->dither) st = etc_dither_pass(ctx, img, params, 1, 0, 4, 2, subgroup_size, dst, &ms_c);
        /* the alpha pass writes bytes 0..7 of each block only */
        if (st == KILN_OK) st = eac_pass(ctx, img, params, 0, 1, 3, 4, 0, subgroup_size, dst, &ms_a);
        if (st == KILN_OK) ctx->last_gpu_ms = ms_c + ms_a;
        return st;
    }
    int kind, nch;
    switch (fi->format) {
    case KILN_FORMAT_EAC_R11_UNORM: kind = 1; nch = 1; break;
    case KILN_FORMAT_EAC_R11_SNORM: kind = 2; nch = 1; break;
    case KILN_FORMAT_EAC_RG11_UNORM: kind = 1; nch = 2; break;
    case KILN_FORMAT_EAC_RG11_SNORM: kind = 2; nch = 2; break;
    default:
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                          "%s has no GPU encoder yet for GPU strategy %d (the GPU covers EAC R11/RG11 and ETC1 at every quality, "
                          "ETC2 RGB / RGBA / RGB A1 with kiln's strategy 0, ETC1 and ETC2 RGB / RGBA with the seed strategy 1)",
                          fi->name, params->gpu_strategy);
    }
    double ms = 0.0;
    KILN_TRY(eac_pass(ctx, img, params, kind, nch, 0, 2u * (uint32_t)nch, 0, subgroup_size, dst, &ms));
    ctx->last_gpu_ms = ms;
    return KILN_OK;
}

/* device-resident texels: the mip chain + encode path (owner mipetc, src/gpu/gpu_mip_encode.c) */
#include "gpu/gpu_mip_encode_etc.inc"

/* the pipelined ETC / EAC encoder (helper etcring): gpu_encode_bc_ring.inc's design on these passes */
#include "gpu/gpu_encode_etc_ring.inc"

/* encode.c - whole-image encoding on the CPU: the encoder table, parameter defaults and the driver
 * that cuts an image into 4x4 blocks (edge-replicated at the right and bottom borders), fills a
 * kiln_block for each and calls the format's block encoder. Blocks are independent and each writes
 * only its own bytes, so the output is the same for any thread count. Uncompressed formats (R8, RG8,
 * RGBA8, RGBA16F, RGBA32F) are converted pixel by pixel. */
#include "codec/codec.h"
#include "gpu/gpu.h"
#include "gpu/gpu_mip_encode.h"

#include <stdio.h>

#include <math.h>
#include <string.h>

kiln_block_encode_fn kiln__block_encoder(kiln_format format)
{
    switch (format) {
    case KILN_FORMAT_BC1_RGB_UNORM:
    case KILN_FORMAT_BC1_RGB_SRGB:
    case KILN_FORMAT_BC1_RGBA_UNORM:
    case KILN_FORMAT_BC1_RGBA_SRGB: return kiln__enc_bc1;
    case KILN_FORMAT_BC2_UNORM:
    case KILN_FORMAT_BC2_SRGB: return kiln__enc_bc2;
    case KILN_FORMAT_BC3_UNORM:
    case KILN_FORMAT_BC3_SRGB: return kiln__enc_bc3;
    case KILN_FORMAT_BC4_UNORM:
    case KILN_FORMAT_BC4_SNORM: return kiln__enc_bc4;
    case KILN_FORMAT_BC5_UNORM:
    case KILN_FORMAT_BC5_SNORM: return kiln__enc_bc5;
    case KILN_FORMAT_ETC1_UNORM:
    case KILN_FORMAT_ETC1_SRGB: return kiln__enc_etc1;
    case KILN_FORMAT_ETC2_RGB8_UNORM:
    case KILN_FORMAT_ETC2_RGB8_SRGB: return kiln__enc_etc2_rgb;
    case KILN_FORMAT_ETC2_RGB8A1_UNORM:
    case KILN_FORMAT_ETC2_RGB8A1_SRGB: return kiln__enc_etc2_rgb_a1;
    case KILN_FORMAT_ETC2_RGBA8_UNORM:
    case KILN_FORMAT_ETC2_RGBA8_SRGB: return kiln__enc_etc2_rgba;
    case KILN_FORMAT_EAC_R11_UNORM:
    case KILN_FORMAT_EAC_R11_SNORM: return kiln__enc_eac_r11;
    case KILN_FORMAT_EAC_RG11_UNORM:
    case KILN_FORMAT_EAC_RG11_SNORM: return kiln__enc_eac_rg11;
    case KILN_FORMAT_BC6H_UFLOAT:
    case KILN_FORMAT_BC6H_SFLOAT: return kiln__enc_bc6h;
    default: return NULL;
    }
}

void kiln_encode_params_init(kiln_encode_params *params, kiln_format format, kiln_quality quality)
{
    if (!params) return;
    memset(params, 0, sizeof *params);
    params->format = format;
    params->quality = quality;
    params->perceptual = 0;
    params->dither = 0;
    params->alpha_threshold = 128;
    params->alpha_cutout = 0;
    params->gpu_strategy = 0;
}

/* ---------------------------------------------------------------- pixel access */

typedef struct encode_job {
    const kiln_image *img;
    const kiln_encode_params *params;
    const kiln_format_info *fi;
    kiln_block_encode_fn fn;
    kiln_batch_encode_fn batch; /* when the format has one at this quality */
    uint8_t *dst;
    uint32_t bx, by; /* blocks per row, block rows */
    int signed_map;  /* SNORM target from a non-float source: unorm x -> 2x - 1 */
} encode_job;

static inline float clamp01(float v) { return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v; }

/* Fills the three representations of one texel from the image at (x, y). */
static void fetch_texel(const encode_job *j, uint32_t x, uint32_t y, kiln_block *b, int t)
{
    const kiln_image *img = j->img;
    size_t base = ((size_t)y * img->width + x) * 4;
    switch (img->type) {
    case KILN_PIXEL_U8: {
        const uint8_t *p = (const uint8_t *)img->pixels + base;
        for (int c = 0; c < 4; c++) {
            b->rgba8[t * 4 + c] = p[c];
            b->rgba16[t * 4 + c] = (uint16_t)(p[c] * 257u);
            b->f[t * 4 + c] = (float)p[c] * (1.0f / 255.0f);
        }
        break;
    }
    case KILN_PIXEL_U16: {
        const uint16_t *p = (const uint16_t *)img->pixels + base;
        for (int c = 0; c < 4; c++) {
            b->rgba8[t * 4 + c] = (uint8_t)(((uint32_t)p[c] * 255u + 32767u) / 65535u);
            b->rgba16[t * 4 + c] = p[c];
            b->f[t * 4 + c] = (float)p[c] * (1.0f / 65535.0f);
        }
        break;
    }
    default: { /* F32 */
        const float *p = (const float *)img->pixels + base;
        for (int c = 0; c < 4; c++) {
            float v = p[c];
            if (v != v) v = 0.0f; /* NaN */
            float u = clamp01(v);
            b->rgba8[t * 4 + c] = (uint8_t)(u * 255.0f + 0.5f);
            b->rgba16[t * 4 + c] = (uint16_t)(u * 65535.0f + 0.5f);
            b->f[t * 4 + c] = v;
        }
        break;
    }
    }
    if (j->signed_map)
        for (int c = 0; c < 4; c++) b->f[t * 4 + c] = b->f[t * 4 + c] * 2.0f - 1.0f;
}

/* One block of the image into b: edge-replicated at the borders; 8-bit interiors take a fast path. */
static void fetch_block(const encode_job *j, uint32_t bx, uint32_t by, kiln_block *b)
{
    const kiln_image *img = j->img;
    const uint32_t w = img->width, h = img->height;
    if (img->type == KILN_PIXEL_U8 && bx * 4 + 4 <= w && by * 4 + 4 <= h) {
        const uint8_t *p = (const uint8_t *)img->pixels + ((size_t)by * 4 * w + (size_t)bx * 4) * 4;
        for (uint32_t y = 0; y < 4; y++) memcpy(b->rgba8 + y * 16, p + (size_t)y * w * 4, 16);
        for (int i = 0; i < 64; i++) {
            b->rgba16[i] = (uint16_t)(b->rgba8[i] * 257u);
            b->f[i] = (float)b->rgba8[i] * (1.0f / 255.0f);
        }
        if (j->signed_map)
            for (int i = 0; i < 64; i++) b->f[i] = b->f[i] * 2.0f - 1.0f;
        return;
    }
    for (uint32_t y = 0; y < 4; y++) {
        uint32_t sy = by * 4 + y;
        if (sy >= h) sy = h - 1;
        for (uint32_t x = 0; x < 4; x++) {
            uint32_t sx = bx * 4 + x;
            if (sx >= w) sx = w - 1;
            fetch_texel(j, sx, sy, b, (int)(y * 4 + x));
        }
    }
}

static void encode_blocks(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    const encode_job *j = user;
    const uint32_t bytes = j->fi->block_bytes;
    kiln_block blk[16];
    for (size_t i = begin; i < end;) {
        size_t m = j->batch ? (end - i < 16 ? end - i : 16) : 1;
        for (size_t k = 0; k < m; k++) fetch_block(j, (uint32_t)((i + k) % j->bx), (uint32_t)((i + k) / j->bx), &blk[k]);
        if (j->batch) j->batch(blk, (int)m, j->dst + i * bytes, j->params);
        else j->fn(&blk[0], j->dst + i * bytes, j->params);
        i += m;
    }
}

/* Uncompressed targets: one "block" is one pixel. */
static void encode_pixels(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    const encode_job *j = user;
    const uint32_t w = j->img->width;
    const uint32_t bytes = j->fi->block_bytes;
    kiln_block blk;
    for (size_t i = begin; i < end; i++) {
        fetch_texel(j, (uint32_t)(i % w), (uint32_t)(i / w), &blk, 0);
        uint8_t *o = j->dst + i * bytes;
        switch (j->fi->format) {
        case KILN_FORMAT_RGBA16F:
            for (int c = 0; c < 4; c++) {
                uint16_t hv = kiln__float_to_half(blk.f[c]);
                memcpy(o + c * 2, &hv, 2);
            }
            break;
        case KILN_FORMAT_RGBA32F: memcpy(o, blk.f, 16); break;
        default: memcpy(o, blk.rgba8, bytes); break; /* R8, RG8, RGBA8 (UNORM/SRGB) */
        }
    }
}

static kiln_status check_image(kiln_context *ctx, const kiln_image *img)
{
    if (!img || !img->pixels)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_encode: the image is NULL or has no pixels");
    if (img->type != KILN_PIXEL_U8 && img->type != KILN_PIXEL_U16 && img->type != KILN_PIXEL_F32)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_encode: bad pixel type %d", (int)img->type);
    if (img->width == 0 || img->height == 0)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_encode: image size %ux%u is empty", img->width,
                          img->height);
    if (img->width > KILN_MAX_DIMENSION || img->height > KILN_MAX_DIMENSION ||
        (uint64_t)img->width * img->height > KILN_MAX_PIXELS)
        return kiln__fail(ctx, KILN_ERR_TOO_LARGE, "kiln_encode: image size %ux%u exceeds kiln's limit (%u per side, %llu pixels)",
                          img->width, img->height, KILN_MAX_DIMENSION, (unsigned long long)KILN_MAX_PIXELS);
    return KILN_OK;
}

static kiln_status check_params(kiln_context *ctx, const kiln_encode_params *params, const kiln_format_info **fi_out,
                                kiln_block_encode_fn *fn_out)
{
    if (!params) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_encode: params is NULL");
    const kiln_format_info *fi = kiln_format_get_info(params->format);
    if (!fi) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_encode: unknown format %d", (int)params->format);
    if ((int)params->quality < (int)KILN_QUALITY_FAST || (int)params->quality > (int)KILN_QUALITY_MAX)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_encode: quality %d is not fast, normal, high or max",
                          (int)params->quality);
    kiln_block_encode_fn fn = NULL;
    if (fi->flags & KILN_FF_COMPRESSED) {
        fn = kiln__block_encoder(fi->format);
        if (!fn) return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "kiln cannot encode %s yet", fi->name);
    }
    *fi_out = fi;
    *fn_out = fn;
    return KILN_OK;
}

/* The work itself, after validation; errors are recorded on ctx. */
static kiln_status encode_into(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                               const kiln_format_info *fi, kiln_block_encode_fn fn, uint8_t *dst, float plo, float phi)
{
    encode_job j;
    memset(&j, 0, sizeof j);
    j.img = img;
    j.params = params;
    j.fi = fi;
    j.fn = fn;
    j.batch = fn ? kiln__batch_encoder(fi->format, params->quality) : NULL;
    j.dst = dst;
    j.signed_map = (fi->flags & KILN_FF_SIGNED) && !(fi->flags & KILN_FF_FLOAT) && img->type != KILN_PIXEL_F32;
    if (fn) {
        kiln_status gst = KILN_OK;
        if (kiln__gpu_wanted(ctx, &gst)) {
            size_t need = kiln_format_image_size(fi->format, img->width, img->height);
            kiln_status st = kiln__gpu_encode(ctx, img, params, 0, dst, need);
            /* AUTO: a format or quality without a GPU encoder (or a device that cannot run it) is
             * encoded on the CPU. An explicit VULKAN backend reports the failure. */
            if (st != KILN_ERR_UNSUPPORTED || ctx->params.backend == KILN_BACKEND_VULKAN) return st;
            if (ctx->params.verbose) fprintf(stderr, "kiln: %s; encoding on the CPU\n", kiln_last_error(ctx));
            kiln__clear_error(ctx);
        }
        if (gst != KILN_OK) return gst;
        ctx->last_gpu_ms = -1.0;
        j.bx = (img->width + fi->block_width - 1) / fi->block_width;
        j.by = (img->height + fi->block_height - 1) / fi->block_height;
        size_t blocks = (size_t)j.bx * j.by;
        /* Grain: ~32 blocks per chunk keeps threads busy on thin images (16384x4 is one block row)
         * while the per-chunk overhead stays negligible. */
        return kiln__parallel_for_progress(ctx, blocks, 32, encode_blocks, &j, plo, phi);
    }
    size_t pixels = (size_t)img->width * img->height;
    return kiln__parallel_for_progress(ctx, pixels, 4096, encode_pixels, &j, plo, phi);
}

kiln_status kiln_encode_image(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                              uint8_t *dst, size_t dst_size)
{
    kiln__clear_error(ctx);
    if (!ctx) return KILN_ERR_INVALID_ARGUMENT;
    KILN_TRY(check_image(ctx, img));
    const kiln_format_info *fi = NULL;
    kiln_block_encode_fn fn = NULL;
    KILN_TRY(check_params(ctx, params, &fi, &fn));
    size_t need = kiln_format_image_size(fi->format, img->width, img->height);
    if (need == 0) return kiln__fail(ctx, KILN_ERR_TOO_LARGE, "kiln_encode: %ux%u %s overflows", img->width, img->height, fi->name);
    if (!dst || dst_size < need)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_encode: %ux%u %s needs %zu bytes but the buffer holds %zu",
                          img->width, img->height, fi->name, need, dst ? dst_size : (size_t)0);
    return encode_into(ctx, img, params, fi, fn, dst, 0.0f, 1.0f);
}

kiln_status kiln_encode(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params, kiln_texture *out)
{
    kiln__clear_error(ctx);
    if (!ctx) return KILN_ERR_INVALID_ARGUMENT;
    if (!out) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_encode: the output texture is NULL");
    memset(out, 0, sizeof *out);
    KILN_TRY(check_image(ctx, img));
    const kiln_format_info *fi = NULL;
    kiln_block_encode_fn fn = NULL;
    KILN_TRY(check_params(ctx, params, &fi, &fn));
    KILN_TRY(kiln_texture_alloc(ctx, out, fi->format, img->width, img->height, 1, 1, 1));
    size_t size = 0;
    uint8_t *dst = kiln_texture_image(out, 0, 0, 0, &size);
    kiln_status st = dst ? encode_into(ctx, img, params, fi, fn, dst, 0.0f, 1.0f)
                         : kiln__fail(ctx, KILN_ERR_INTERNAL, "kiln_encode: texture level 0 is missing");
    if (st != KILN_OK) kiln_texture_free(out);
    return st;
}

/* ---------------------------------------------------------------- mip chains */

kiln_status kiln_encode_mips(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                             const kiln_mip_params *mip, kiln_texture *out)
{
    kiln__clear_error(ctx);
    if (!ctx) return KILN_ERR_INVALID_ARGUMENT;
    if (!out) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_encode_mips: the output texture is NULL");
    memset(out, 0, sizeof *out);
    KILN_TRY(check_image(ctx, img));
    const kiln_format_info *fi = NULL;
    kiln_block_encode_fn fn = NULL;
    KILN_TRY(check_params(ctx, params, &fi, &fn));
    kiln_mip_params mp;
    if (mip) mp = *mip;
    else kiln_mip_params_init(&mp);
    uint32_t full = kiln_mip_level_count(img->width, img->height);
    if (mp.levels > full)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_encode_mips: %u levels asked, a %ux%u image has %u",
                          mp.levels, img->width, img->height, full);
    if (mp.color == KILN_MIP_COLOR_AUTO && !mp.normal_map)
        mp.color = (fi->flags & KILN_FF_SRGB) && !img->hdr ? KILN_MIP_COLOR_SRGB : KILN_MIP_COLOR_LINEAR;

    /* GPU: the chain stays on the device between the mip pass and the encoder (src/gpu/gpu_mip_encode.c);
     * what that path does not cover (KILN_ERR_UNSUPPORTED) takes the host path below */
    if (fn) {
        kiln_status gst = KILN_OK;
        if (kiln__gpu_wanted(ctx, &gst)) {
            kiln_status rst = kiln__gpu_encode_mips(ctx, img, params, &mp, out);
            if (rst != KILN_ERR_UNSUPPORTED) return rst;
            if (ctx->params.verbose) fprintf(stderr, "kiln: %s; mip chain through host memory\n", kiln_last_error(ctx));
            kiln__clear_error(ctx);
        }
        if (gst != KILN_OK) return gst;
    }

    kiln_image levels[KILN_MAX_LEVELS];
    memset(levels, 0, sizeof levels);
    uint32_t n = KILN_MAX_LEVELS;
    KILN_TRY(kiln_mip_generate(ctx, img, &mp, levels, &n));
    kiln_status st = kiln_texture_alloc(ctx, out, fi->format, img->width, img->height, n, 1, 1);
    /* progress: each level's share is its pixel count */
    double total = 0.0, done = 0.0;
    for (uint32_t l = 0; l < n; l++) total += (double)levels[l].width * levels[l].height;
    for (uint32_t l = 0; l < n && st == KILN_OK; l++) {
        size_t size = 0;
        uint8_t *dst = kiln_texture_image(out, l, 0, 0, &size);
        double share = (double)levels[l].width * levels[l].height;
        if (!dst) st = kiln__fail(ctx, KILN_ERR_INTERNAL, "kiln_encode_mips: texture level %u is missing", l);
        else st = encode_into(ctx, &levels[l], params, fi, fn, dst, (float)(done / total), (float)((done + share) / total));
        done += share;
    }
    for (uint32_t l = 0; l < n; l++) kiln_image_free(&levels[l]);
    if (st != KILN_OK) kiln_texture_free(out);
    return st;
}

/* ---------------------------------------------------------------- batches */

#include "gpu/gpu_batch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#define BATCH_MAX_FORMATS 8

typedef struct batch_run {
    const kiln_image *images;
    uint32_t count, nformats;
    const kiln_encode_params *params;
    kiln_texture *out;
    uint32_t ring_fmt[BATCH_MAX_FORMATS]; /* the formats that go through the pipelined GPU encoder */
    kiln_encode_params ring_params[BATCH_MAX_FORMATS];
    uint32_t nring;
    /* the image queue both sides pull from: the low 32 bits the next image from the front (the GPU side's),
     * the high 32 bits one past the last image left (the CPU side takes images from the back) */
    _Atomic uint64_t queue;
    atomic_uint gpu_images; /* images the GPU side took */
    _Atomic uint64_t gpu_claimed, gpu_done; /* blocks x ring formats the GPU side took, and finished */
    double t0;              /* when the batch started (ms, monotonic) */
    double t_gpu_end, t_cpu_end; /* when each side finished (trace) */
    /* the CPU side of a split */
    kiln_context *cpu;
    int cpu_nice;           /* the CPU side's scheduling nice value (split_nice) */
    uint32_t cpu_images;
    const char *cpu_stop;   /* why the CPU side stopped (trace) */
    kiln_status cpu_status;
} batch_run;

/* The next image from the front (back = 0) or the back of the queue; 0 when it is empty. */
static int batch_take(batch_run *b, int back, uint32_t *index)
{
    uint64_t q = atomic_load(&b->queue);
    for (;;) {
        uint32_t lo = (uint32_t)q, hi = (uint32_t)(q >> 32);
        if (lo >= hi) return 0;
        uint64_t nq = back ? (uint64_t)lo | (uint64_t)(hi - 1u) << 32 : q + 1u;
        if (atomic_compare_exchange_weak(&b->queue, &q, nq)) {
            *index = back ? hi - 1u : lo;
            return 1;
        }
    }
}

/* Empties the queue (a failure: the other side stops too). */
static void batch_stop(batch_run *b) { atomic_store(&b->queue, 0u); }

/* Image i's blocks x ring formats. */
static uint64_t batch_blocks(const batch_run *b, uint32_t i)
{
    return (uint64_t)((b->images[i].width + 3) / 4) * ((b->images[i].height + 3) / 4) * b->nring;
}

static int batch_next(void *user, const kiln_image **img, uint8_t **dst)
{
    batch_run *b = user;
    uint32_t i;
    if (!batch_take(b, 0, &i)) return 0;
    *img = &b->images[i];
    atomic_fetch_add(&b->gpu_claimed, batch_blocks(b, i));
    for (uint32_t r = 0; r < b->nring; r++) {
        size_t size = 0;
        dst[r] = kiln_texture_image(&b->out[(size_t)i * b->nformats + b->ring_fmt[r]], 0, 0, 0, &size);
    }
    atomic_fetch_add(&b->gpu_images, 1u);
    return 1;
}

/* A CPU side that is more than this many times slower than the GPU side drops out (3; KILN_SPLIT_GPU_LEAD
 * overrides it for tests and bench/): measured on the H200 (docs/PERFORMANCE.md, 2026-11-27), a CPU side 3.3x
 * slower than the GPU side gained nothing (bc1 fast, 256 images of 512^2), 5.5x slower it cost 10 % (etc1 fast).
 * Without it (the end-time rule alone; H100 2026-11-27 14:46 UTC, 256 x 512^2, min ms r1 / r2) `both` was 13.3 / 13.9
 * against 12.1 / 11.8 at bc4 normal and 18.4 / 19.1 against 17.0 / 16.8 at bc1 normal (bc1 and etc1 fast: even). */
static double split_gpu_lead(void)
{
    const char *e = getenv("KILN_SPLIT_GPU_LEAD");
    if (e && e[0] >= '0' && e[0] <= '9') return atof(e);
    return 3.0;
}

static double split_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The CPU side of a split: images from the back of the queue (the GPU side takes them from the front), one at a
 * time on its own threads, while that cannot delay the end: it stops when the GPU side would finish all it has
 * left sooner than this side one more image, or when the GPU side is more than split_gpu_lead() times as fast.
 * The GPU side's pace: the blocks of the jobs it finished since its first one (so not its start-up); its work
 * left: the blocks it took and has not finished and those in the queue; this side's: its ms a block so far.
 * The first image only from a queue of 8 or more (no estimate of this side yet). Before 2026-11-27 the CPU side
 * took images from the front and dropped out when the GPU side took images more than twice as fast as it
 * encoded them; with several images a GPU job (taken at once) that rate says nothing, and the CPU side's last
 * image could end after the GPU side's. */
static void *batch_cpu_side(void *user)
{
    batch_run *b = user;
    kiln__thread_set_nice(b->cpu_nice);
    kiln_status st = KILN_OK;
    uint32_t done = 0;
    double t_all = 0.0, t_d0 = 0.0;
    uint64_t cpu_blocks = 0, d0 = 0;
    const double lead = split_gpu_lead();
    b->cpu_stop = "queue empty";
    for (;;) {
        uint64_t q = atomic_load(&b->queue);
        uint32_t lo = (uint32_t)q, hi = (uint32_t)(q >> 32);
        if (done == 0 && (hi > lo ? hi - lo : 0) < 8) {
            b->cpu_stop = "few images";
            break;
        }
        if (hi <= lo) break;
        const uint64_t gd = atomic_load(&b->gpu_done);
        const double now = split_now_ms();
        if (gd > 0 && d0 == 0) {
            d0 = gd;
            t_d0 = now;
        }
        if (done > 0 && d0 > 0 && gd > d0 && now > t_d0) {
            const double gpu_rate = (double)(gd - d0) / (now - t_d0); /* blocks a ms */
            const double mine = t_all / (double)cpu_blocks;           /* ms a block */
            if (gpu_rate * mine > lead) {
                b->cpu_stop = "GPU side too fast";
                break;
            }
            uint64_t left = atomic_load(&b->gpu_claimed) - gd;
            for (uint32_t k = lo; k + 1 < hi; k++) left += batch_blocks(b, k);
            if (mine * (double)batch_blocks(b, hi - 1) > (double)left / gpu_rate) {
                b->cpu_stop = "GPU side ends first";
                break;
            }
        }
        uint32_t i;
        if (!batch_take(b, 1, &i)) break;
        const double t_img = split_now_ms();
        for (uint32_t r = 0; r < b->nring && st == KILN_OK; r++) {
            const kiln_encode_params *p = &b->params[b->ring_fmt[r]];
            const kiln_format_info *fi = kiln_format_get_info(p->format);
            size_t size = 0;
            uint8_t *dst = kiln_texture_image(&b->out[(size_t)i * b->nformats + b->ring_fmt[r]], 0, 0, 0, &size);
            st = encode_into(b->cpu, &b->images[i], p, fi, kiln__block_encoder(fi->format), dst, 0.0f, 1.0f);
        }
        if (st != KILN_OK) {
            batch_stop(b); /* stop the GPU side too */
            break;
        }
        t_all += split_now_ms() - t_img;
        cpu_blocks += batch_blocks(b, i);
        done++;
    }
    b->cpu_images = done;
    b->t_cpu_end = split_now_ms();
    b->cpu_status = st;
    return NULL;
}

/* The CPU side of a split batch runs its threads at a raised nice value (Linux): when both sides want
 * the cores, the GPU side's host work (texel preparation, copies, fallback blocks) runs first and the
 * CPU side takes what is left, so the split does not slow the GPU side down. KILN_SPLIT_NICE (0..19)
 * overrides the default for bench/. */
static int split_nice(void)
{
    const char *e = getenv("KILN_SPLIT_NICE");
    if (e && e[0] >= '0' && e[0] <= '9') {
        int v = atoi(e);
        return v > 19 ? 19 : v;
    }
    return 10;
}

/* The batch's output textures, allocated over the context's threads: their zeroing (calloc) and first page faults
 * took 8-10 ms on one thread for 256 textures of 512^2 at BC1 (H100 2026-11-27 14:02 UTC, a third of the GPU side's
 * batch), 0.4-1.0 ms so. On a failure they are made again on the calling thread, for its message. */
typedef struct batch_alloc_job {
    kiln_texture *out;
    const kiln_image *images;
    const kiln_format_info *const *fis;
    uint32_t nformats;
    atomic_int failed;
} batch_alloc_job;

static void batch_alloc_range(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    batch_alloc_job *a = user;
    for (size_t t = begin; t < end && !atomic_load(&a->failed); t++)
        if (kiln_texture_alloc(NULL, &a->out[t], a->fis[t % a->nformats]->format, a->images[t / a->nformats].width,
                               a->images[t / a->nformats].height, 1, 1, 1) != KILN_OK)
            atomic_store(&a->failed, 1);
}

static kiln_status batch_alloc(kiln_context *ctx, const kiln_image *images, const kiln_format_info *const *fis,
                               uint32_t nformats, size_t ntex, kiln_texture *out)
{
    if (ntex > 1) {
        batch_alloc_job a = {out, images, fis, nformats, 0};
        atomic_init(&a.failed, 0);
        kiln_status st = kiln__parallel_for(ctx, ntex, 8, batch_alloc_range, &a);
        if (st == KILN_OK && !atomic_load(&a.failed)) return KILN_OK;
        for (size_t t = 0; t < ntex; t++) kiln_texture_free(&out[t]);
        memset(out, 0, ntex * sizeof *out);
        if (st != KILN_OK) return st;
    }
    kiln_status st = KILN_OK;
    for (size_t t = 0; t < ntex && st == KILN_OK; t++)
        st = kiln_texture_alloc(ctx, &out[t], fis[t % nformats]->format, images[t / nformats].width, images[t / nformats].height,
                                1, 1, 1);
    return st;
}

kiln_status kiln_encode_batch(kiln_context *ctx, const kiln_image *images, uint32_t count,
                              const kiln_encode_params *params, uint32_t nformats, uint32_t flags, kiln_texture *out)
{
    kiln__clear_error(ctx);
    if (!ctx) return KILN_ERR_INVALID_ARGUMENT;
    if (!out || !params || (count && !images))
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_encode_batch: images, params or out is NULL");
    if (nformats == 0 || nformats > BATCH_MAX_FORMATS)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_encode_batch: %u formats (1 to %d)", nformats,
                          BATCH_MAX_FORMATS);
    if (flags & ~KILN_ENCODE_BATCH_SPLIT)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_encode_batch: unknown flags 0x%x", flags);
    size_t ntex;
    if (!kiln__mul_size(count, nformats, &ntex)) return kiln__fail(ctx, KILN_ERR_TOO_LARGE, "kiln_encode_batch: too many images");
    memset(out, 0, ntex * sizeof *out);
    const kiln_format_info *fis[BATCH_MAX_FORMATS];
    kiln_block_encode_fn fns[BATCH_MAX_FORMATS];
    for (uint32_t f = 0; f < nformats; f++) KILN_TRY(check_params(ctx, &params[f], &fis[f], &fns[f]));
    for (uint32_t i = 0; i < count; i++) KILN_TRY(check_image(ctx, &images[i]));

    kiln_status st = KILN_OK;
    const char *trace = getenv("KILN_RING_TRACE");
    const int tracing = trace && (trace[0] == '1' || trace[0] == '2');
    const double t_call = tracing ? split_now_ms() : 0.0;
    double t_alloc = 0.0, t_probe = 0.0, t_ring = 0.0;
    st = batch_alloc(ctx, images, fis, nformats, ntex, out);
    batch_run *b = st == KILN_OK ? kiln__malloc(ctx, sizeof *b) : NULL;
    if (st == KILN_OK && !b) st = KILN_ERR_OUT_OF_MEMORY;
    if (b) {
        memset(b, 0, sizeof *b);
        b->images = images;
        b->count = count;
        b->nformats = nformats;
        b->params = params;
        b->out = out;
        atomic_init(&b->queue, (uint64_t)count << 32);
        atomic_init(&b->gpu_claimed, 0u);
        atomic_init(&b->gpu_done, 0u);
        atomic_init(&b->gpu_images, 0u);
        b->t0 = split_now_ms();
    }
    if (tracing) t_alloc = split_now_ms();
    /* which formats take the pipelined GPU path: every image must be accepted */
    kiln_status gst = KILN_OK;
    if (st == KILN_OK && count && kiln__gpu_wanted(ctx, &gst)) {
        for (uint32_t f = 0; f < nformats && st == KILN_OK; f++) {
            if (!fns[f]) continue;
            kiln_status pst = KILN_OK;
            for (uint32_t i = 0; i < count && pst == KILN_OK; i++) pst = kiln__gpu_bc_ring_probe(ctx, &images[i], &params[f]);
            if (pst == KILN_OK) {
                b->ring_params[b->nring] = params[f];
                b->ring_fmt[b->nring++] = f;
            } else if (pst == KILN_ERR_UNSUPPORTED) {
                kiln__clear_error(ctx);
            } else {
                st = pst;
            }
        }
    } else if (st == KILN_OK && gst != KILN_OK) {
        st = gst;
    }
    if (st == KILN_OK && (flags & KILN_ENCODE_BATCH_SPLIT) && ctx->resolved == KILN_BACKEND_VULKAN) {
        kiln_context_params cp = ctx->params;
        cp.backend = KILN_BACKEND_CPU;
        cp.progress = NULL;
        cp.threads = ctx->threads > 1 ? ctx->threads - 1 : 1;
        b->cpu_nice = split_nice();
        st = kiln__context_create_nice(&cp, b->cpu_nice, &b->cpu);
        if (st != KILN_OK) st = kiln__fail(ctx, st, "kiln_encode_batch: cannot create the CPU side's context");
    }
    if (tracing) t_probe = split_now_ms();
    if (st == KILN_OK && b->nring) {
        pthread_t th;
        int threaded = 0;
        if (b->cpu) {
            if (pthread_create(&th, NULL, batch_cpu_side, b) != 0)
                st = kiln__fail(ctx, KILN_ERR_INTERNAL, "kiln_encode_batch: cannot start the CPU side's thread");
            else threaded = 1;
        }
        if (st == KILN_OK) {
            kiln__gpu_image_source src = {batch_next, b, 0, &b->gpu_done};
            st = kiln__gpu_bc_ring(ctx, &src, b->ring_params, b->nring, 0);
            b->t_gpu_end = split_now_ms();
            if (st != KILN_OK) {
                batch_stop(b);
                if (b->cpu) kiln_cancel(b->cpu);
            }
        }
        if (threaded) {
            pthread_join(th, NULL);
            const char *tr = getenv("KILN_RING_TRACE");
            if (tr && (tr[0] == '1' || tr[0] == '2'))
                fprintf(stderr, "kiln split (CPU side %u threads, nice %d): GPU side %u images, done at %.2f ms; CPU side %u "
                        "images, done at %.2f ms (%s)\n", kiln_context_threads(b->cpu), b->cpu_nice,
                        atomic_load(&b->gpu_images), b->t_gpu_end - b->t0, b->cpu_images, b->t_cpu_end - b->t0,
                        b->cpu_stop ? b->cpu_stop : "-");

            if (st == KILN_OK && b->cpu_status != KILN_OK)
                st = kiln__fail(ctx, b->cpu_status, "%s", kiln_last_error(b->cpu));
        }
        if (st == KILN_OK && ctx->params.verbose && b->cpu)
            fprintf(stderr, "kiln: batch of %u images split: %u on the GPU, %u on the CPU\n", count,
                    atomic_load(&b->gpu_images), count - atomic_load(&b->gpu_images));
    }
    /* kiln_last_gpu_ms after the batch: the kernel ms summed over all of its GPU work (the ring's jobs
     * and every image of the formats below that ran on the GPU); negative when none ran there */
    double gpu_sum = -1.0;
    if (st == KILN_OK && b && b->nring) gpu_sum = ctx->last_gpu_ms;
    /* everything else: image by image, as kiln_encode does */
    for (uint32_t f = 0; f < nformats && st == KILN_OK; f++) {
        int ringed = 0;
        for (uint32_t r = 0; b && r < b->nring; r++) ringed |= b->ring_fmt[r] == f;
        if (ringed) continue;
        for (uint32_t i = 0; i < count && st == KILN_OK; i++) {
            size_t size = 0;
            uint8_t *dst = kiln_texture_image(&out[(size_t)i * nformats + f], 0, 0, 0, &size);
            ctx->last_gpu_ms = -1.0;
            st = encode_into(ctx, &images[i], &params[f], fis[f], fns[f], dst, 0.0f, 1.0f);
            if (st == KILN_OK && ctx->last_gpu_ms >= 0.0) gpu_sum = (gpu_sum < 0.0 ? 0.0 : gpu_sum) + ctx->last_gpu_ms;
            if (st == KILN_ERR_UNSUPPORTED && b && b->cpu) { /* split: no GPU encoder, so the CPU side's */
                kiln__clear_error(ctx);
                st = encode_into(b->cpu, &images[i], &params[f], fis[f], fns[f], dst, 0.0f, 1.0f);
                if (st != KILN_OK) st = kiln__fail(ctx, st, "%s", kiln_last_error(b->cpu));
            }
        }
    }
    if (tracing) t_ring = split_now_ms();
    if (b) {
        if (b->cpu) kiln_context_free(b->cpu);
        free(b);
    }
    if (tracing)
        fprintf(stderr, "kiln batch (%u images x %u formats): %.2f ms: outputs %.2f, probes and CPU side's context %.2f, ring (and "
                        "split) %.2f, other formats and the rest %.2f\n", count, nformats, split_now_ms() - t_call, t_alloc - t_call,
                t_probe - t_alloc, t_ring - t_probe, split_now_ms() - t_ring);
    if (st == KILN_OK) ctx->last_gpu_ms = gpu_sum;
    if (st != KILN_OK)
        for (size_t t = 0; t < ntex; t++) kiln_texture_free(&out[t]);
    return st;
}

/* test_gpu_bc6h.c - the BC6H GPU encoders (src/gpu/gpu_encode_bc6h.c, shaders/enc_bc6h_seed.comp)
 * on any Vulkan device (lavapipe in CI; the backend is forced to VULKAN), with the validation layer
 * on (KILN_VK_VALIDATION=1) and asserting it reported nothing:
 *  - seed strategy (GPURealTimeBC6H): against its CPU model kiln__enc_bc6h_seed on crops of the HDR
 *    images with odd sizes, fast and quality. Stated tolerance: float log2/exp2 and half rounding
 *    may differ between the GPU and the CPU, so at least 90% of the blocks must be bit-identical and
 *    the image RMSLE within 2% of the CPU model's; every block must decode to a valid mode 3, 1 or 14;
 *  - every subgroup size the device can require, several batches: the same bytes as the default;
 *  - kiln strategy (shaders/enc_bc6h.comp), quality fast, UF16 and SF16 (crops with negated texels):
 *    against the CPU encoder kiln__enc_bc6h_rgb at quality fast. Stated tolerance (float log and
 *    float least squares on the GPU): at least 90% of the blocks bit-identical, the image RMSLE within
 *    1% of the CPU's, and no block's error (the CPU's metric, summed over its 48 channels, measured
 *    by decoding) above 1.25 x the CPU block's + 1e-4; every block a one-subset mode (3, 7, 11, 15);
 *    the same bytes at every subgroup size the device can require and with small batches;
 *  - kiln strategy at normal, high and max (shaders/enc_bc6h_q.comp), UF16 and SF16, on crops and on
 *    a synthetic image (odd size, very bright, subnormal, negative, +-Inf, NaN texels): against the
 *    CPU encoder at the same level (tolerance: see kiln_quality_matches_cpu), the fraction of
 *    bit-identical blocks printed;
 *  - the GPU-native high (shaders/enc_bc6h_hl.comp, several invocations per block, the default at
 *    high, at 8 (default), 16 and 4 lanes; enc_bc6h_h.comp, one invocation per block, KILN_BC6H_HIGH_DESIGN=1; the
 *    first GPU-native design enc_bc6h_h4.comp with KILN_BC6H_HIGH_DESIGN=4; the exact port above with
 *    KILN_BC6H_GPU_EXACT=1): quality against the CPU's high/normal/fast (see kiln_high_native);
 *  - GPU high in two kernels (KILN_BC6H_HIGH_SPLIT=1, enc_bc6h_ha.comp + enc_bc6h_hb.comp): the one kernel's bytes
 *    (high_split);
 *  - what has no GPU design is KILN_ERR_UNSUPPORTED with a message (an unknown strategy; SF16 with
 *    the seed), and AUTO/CPU encodes then fall back to the CPU encoder;
 *  - KILN_VK_PIPELINE_STATS=1: the driver's pipeline statistics (skipped where the device lacks
 *    VK_KHR_pipeline_executable_properties).
 * Run time (CI): almost all of it is pipeline creation on lavapipe (~0.4 s of CPU each with the validation layer), so
 * the variant checks reuse pipelines where the code is the same (KILN_BC6H_HIGH_OPT_B), skip required-subgroup-size
 * pipelines on single-size devices (but once), and run the non-default variants in SF16 only with
 * KILN_TEST_BC6H_FULL=1 (see full_matrix).
 * Skipped when there is no Vulkan device at all. */
#include "support.h"
#include "codec/bc_tables.h"
#include "codec/codec.h"
#include "gpu/gpu.h"
#include "gpu/vk.h" /* pipeline_stats: kiln_vk_pipeline_stats */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef kt_gpu_fixture fixture;

static kiln_image load_crop(kiln_context *ctx, const char *rel, uint32_t x0, uint32_t y0, uint32_t w, uint32_t h)
{
    kiln_image img, c;
    if (kiln_image_load(ctx, kt_testdata(rel), &img) != KILN_OK) fail_msg("cannot load %s: %s", rel, kiln_last_error(ctx));
    assert_int_equal(img.type, KILN_PIXEL_F32);
    assert_int_equal(kiln_image_alloc(ctx, &c, w, h, KILN_PIXEL_F32), KILN_OK);
    c.channels = 3;
    c.hdr = 1;
    for (uint32_t y = 0; y < h; y++)
        memcpy((float *)c.pixels + (size_t)y * w * 4, (const float *)img.pixels + ((size_t)(y0 + y) * img.width + x0) * 4,
               (size_t)w * 16);
    kiln_image_free(&img);
    return c;
}

/* The subgroup sizes whose required-size pipelines a test compares with the default (kiln__gpu_subgroup_sizes). A device
 * with a single size (lavapipe: 8, NVIDIA: 32) compiles the same code with or without the requirement, so there the
 * comparison runs once per test file (kiln_high_native, the default high design, UF16: the plumbing) and the other
 * loops skip it (test time on lavapipe, where each pipeline costs ~0.4 s of CPU with the validation layer); devices with
 * several sizes run every loop. */
static uint32_t subgroup_sizes_to_check(kiln_context *gpu)
{
    const uint32_t s = kiln__gpu_subgroup_sizes(gpu);
    return (s & (s - 1u)) ? s : 0u;
}

/* KILN_TEST_BC6H_FULL=1: the whole variant matrix in SF16 too. By default (CI time: each pipeline costs ~0.4 s of CPU on
 * lavapipe with the validation layer) SF16 runs every default configuration (each lane count and design against the CPU,
 * two kernels against one, batches) and the code variants at 8 lanes (high_opt_variants: 1007, 88, 4103), while the
 * non-default variants at 4 and 16 lanes (OPT combinations, BPW, R = 1 / 4, SUM2, OPT 1007), high_split's NE2 (OPT 1031)
 * and the kernel variants of high_prof_aroll run in UF16 only (helper bc6hhigh, 2026-11-26) */
static int full_matrix(void)
{
    const char *e = getenv("KILN_TEST_BC6H_FULL");
    return e && *e && strcmp(e, "0") != 0;
}

/* The CPU model over the whole image (edge replication as the encode driver does it). */
static void seed_cpu(const kiln_image *img, int quality, uint8_t *out)
{
    const uint32_t bx = (img->width + 3) / 4, by = (img->height + 3) / 4;
    for (uint32_t y = 0; y < by; y++)
        for (uint32_t x = 0; x < bx; x++) {
            float f[64];
            for (uint32_t t = 0; t < 16; t++) {
                uint32_t sx = x * 4 + t % 4, sy = y * 4 + t / 4;
                if (sx >= img->width) sx = img->width - 1;
                if (sy >= img->height) sy = img->height - 1;
                memcpy(f + t * 4, (const float *)img->pixels + ((size_t)sy * img->width + sx) * 4, 16);
            }
            kiln__enc_bc6h_seed(f, quality, out + ((size_t)y * bx + x) * 16);
        }
}

static double rmsle_blocks_fmt(kiln_context *ctx, const kiln_image *img, const uint8_t *blocks, size_t size,
                               kiln_format fmt)
{
    kiln_texture tex;
    assert_int_equal(kiln_texture_alloc(ctx, &tex, fmt, img->width, img->height, 1, 1, 1), KILN_OK);
    memcpy(kiln_texture_image(&tex, 0, 0, 0, NULL), blocks, size);
    kiln_image dec;
    assert_int_equal(kiln_decode(ctx, &tex, 0, 0, 0, &dec), KILN_OK);
    kiln_metrics m;
    assert_int_equal(kiln_compare(ctx, img, &dec, &m), KILN_OK);
    kiln_image_free(&dec);
    kiln_texture_free(&tex);
    return m.rmsle;
}

static double rmsle_blocks(kiln_context *ctx, const kiln_image *img, const uint8_t *blocks, size_t size)
{
    return rmsle_blocks_fmt(ctx, img, blocks, size, KILN_FORMAT_BC6H_UFLOAT);
}

/* The 16 texels of block (x, y), edge replicated as the encode driver does. */
static void block_texels(const kiln_image *img, uint32_t x, uint32_t y, float f[64])
{
    for (uint32_t t = 0; t < 16; t++) {
        uint32_t sx = x * 4 + t % 4, sy = y * 4 + t / 4;
        if (sx >= img->width) sx = img->width - 1;
        if (sy >= img->height) sy = img->height - 1;
        memcpy(f + t * 4, (const float *)img->pixels + ((size_t)sy * img->width + sx) * 4, 16);
    }
}

/* An independent measure of a block's error: decode it and sum the CPU encoder's per-channel error
 * (signed ln(1 + |v|) difference squared + 0.03 * (ln 2 / 1024)^2 * ULP difference squared) against
 * the targets rounded to half as the encoder rounds them. */
static double block_err(const float f[64], const uint8_t blk[16], int sf)
{
    uint16_t h[48];
    kiln__dec_bc6h_half(blk, sf, h);
    const double k2 = 0.03 * 0.480453014 / 1048576.0;
    double e = 0.0;
    for (int t = 0; t < 16; t++)
        for (int c = 0; c < 3; c++) {
            float v = f[t * 4 + c];
            if (v != v) v = 0.0f;
            if (!sf && v < 0.0f) v = 0.0f;
            v = v > 65504.0f ? 65504.0f : v < -65504.0f ? -65504.0f : v;
            uint16_t th = kiln__float_to_half(v);
            int32_t xt = (th & 0x8000u) ? -(int32_t)(th & 0x7FFFu) : (int32_t)(th & 0x7FFFu);
            int32_t xp = (h[t * 3 + c] & 0x8000u) ? -(int32_t)(h[t * 3 + c] & 0x7FFFu) : (int32_t)(h[t * 3 + c] & 0x7FFFu);
            double lt = log1p(fabs(kiln__half_to_float((uint16_t)(th & 0x7FFFu)))) * (xt < 0 ? -1 : 1);
            double lp = log1p(fabs(kiln__half_to_float((uint16_t)(h[t * 3 + c] & 0x7FFFu)))) * (xp < 0 ? -1 : 1);
            e += (lp - lt) * (lp - lt) + k2 * (double)(xp - xt) * (double)(xp - xt);
        }
    return e;
}

/* A crop of a test image (file under testdata/; NULL = the synthetic image of w x h). */
typedef struct crop_spec {
    const char *file;
    uint32_t x, y, w, h;
} crop_spec;

static void seed_matches_cpu_model(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    static const crop_spec crops[] = {
        {"hdr/blender_sunset_1024x512.exr", 470, 170, 61, 38},
        {"hdr/qtcreator_preview_landscape_256x128.hdr", 90, 40, 50, 33},
        {"hdr/blender_city_1024x512.exr", 400, 200, 40, 40},
    };
    for (size_t k = 0; k < sizeof crops / sizeof crops[0]; k++) {
        kiln_image img = load_crop(fx->cpu, crops[k].file, crops[k].x, crops[k].y, crops[k].w, crops[k].h);
        size_t size = kiln_format_image_size(KILN_FORMAT_BC6H_UFLOAT, img.width, img.height);
        uint8_t *g = malloc(size), *c = malloc(size);
        assert_non_null(g);
        assert_non_null(c);
        for (int q = 0; q < 2; q++) {
            kiln_encode_params p;
            kiln_encode_params_init(&p, KILN_FORMAT_BC6H_UFLOAT, q ? KILN_QUALITY_HIGH : KILN_QUALITY_FAST);
            p.gpu_strategy = 1;
            kiln_status st = kiln__gpu_encode(fx->gpu, &img, &p, 0, g, size);
            if (st != KILN_OK) fail_msg("seed GPU encode: %s", kiln_last_error(fx->gpu));
            seed_cpu(&img, q, c);
            size_t n = size / 16, same = 0;
            for (size_t i = 0; i < n; i++) {
                same += memcmp(g + i * 16, c + i * 16, 16) == 0;
                kiln_bc6h_info info;
                assert_true(kiln__bc6h_unpack(g + i * 16, 0, &info) > 0);
                assert_true(info.mode == 3 || (q && (info.mode == 1 || info.mode == 14)));
            }
            double eg = rmsle_blocks(fx->cpu, &img, g, size), ec = rmsle_blocks(fx->cpu, &img, c, size);
            print_message("%s q%d: %zu/%zu blocks identical, RMSLE GPU %.5f CPU model %.5f\n", crops[k].file, q, same, n,
                          eg, ec);
            assert_true(same * 10 >= n * 9);
            assert_true(fabs(eg - ec) <= 0.02 * ec + 1e-7);
        }
        free(g);
        free(c);
        kiln_image_free(&img);
    }
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

static void kiln_fast_matches_cpu(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    static const crop_spec crops[] = {
        {"hdr/blender_sunset_1024x512.exr", 470, 170, 29, 22},
        {"hdr/qtcreator_preview_landscape_256x128.hdr", 90, 40, 26, 17},
    };
    uint32_t sizes = subgroup_sizes_to_check(fx->gpu);
    for (size_t k = 0; k < sizeof crops / sizeof crops[0]; k++) {
        kiln_image img = load_crop(fx->cpu, crops[k].file, crops[k].x, crops[k].y, crops[k].w, crops[k].h);
        for (int sf = 0; sf < 2; sf++) {
            const kiln_format fmt = sf ? KILN_FORMAT_BC6H_SFLOAT : KILN_FORMAT_BC6H_UFLOAT;
            if (sf) /* signed data: negate the red and blue channels of every third texel */
                for (size_t i = 0; i < (size_t)img.width * img.height; i += 3) {
                    ((float *)img.pixels)[i * 4] = -((float *)img.pixels)[i * 4];
                    ((float *)img.pixels)[i * 4 + 2] = -((float *)img.pixels)[i * 4 + 2] * 0.25f;
                }
            size_t size = kiln_format_image_size(fmt, img.width, img.height);
            uint8_t *g = malloc(size), *c = malloc(size), *g2 = malloc(size);
            assert_non_null(g);
            assert_non_null(c);
            assert_non_null(g2);
            kiln_encode_params p;
            kiln_encode_params_init(&p, fmt, KILN_QUALITY_FAST);
            p.gpu_strategy = 0;
            kiln_status st = kiln__gpu_encode(fx->gpu, &img, &p, 0, g, size);
            if (st != KILN_OK) fail_msg("kiln GPU encode: %s", kiln_last_error(fx->gpu));
            const uint32_t bx = (img.width + 3) / 4, by = (img.height + 3) / 4;
            size_t same = 0, n = (size_t)bx * by;
            double worst = 0.0;
            for (uint32_t y = 0; y < by; y++)
                for (uint32_t x = 0; x < bx; x++) {
                    float f[64];
                    size_t i = (size_t)y * bx + x;
                    block_texels(&img, x, y, f);
                    (void)kiln__enc_bc6h_rgb(f, sf, KILN_QUALITY_FAST, -1, c + i * 16);
                    same += memcmp(g + i * 16, c + i * 16, 16) == 0;
                    kiln_bc6h_info info;
                    assert_true(kiln__bc6h_unpack(g + i * 16, sf, &info) > 0);
                    assert_true(info.mode == 3 || info.mode == 7 || info.mode == 11 || info.mode == 15);
                    double eg = block_err(f, g + i * 16, sf), ec = block_err(f, c + i * 16, sf);
                    if (eg > 1.25 * ec + 1e-4) fail_msg("block %u,%u: GPU error %g, CPU %g", x, y, eg, ec);
                    if (ec > 0 && eg / ec > worst) worst = eg / ec;
                }
            double eg = rmsle_blocks_fmt(fx->cpu, &img, g, size, fmt), ec = rmsle_blocks_fmt(fx->cpu, &img, c, size, fmt);
            print_message("%s %s fast: %zu/%zu blocks identical, RMSLE GPU %.6f CPU %.6f, worst block ratio %.3f\n",
                          crops[k].file, sf ? "SF" : "UF", same, n, eg, ec, worst);
            assert_true(same * 10 >= n * 9);
            assert_true(eg <= 1.01 * ec + 1e-7);
            /* every subgroup size and small batches: the same bytes */
            for (uint32_t sg = 1; sg <= 128; sg <<= 1) {
                if (!(sizes & sg)) continue;
                st = kiln__gpu_encode(fx->gpu, &img, &p, sg, g2, size);
                if (st != KILN_OK) fail_msg("subgroup %u: %s", sg, kiln_last_error(fx->gpu));
                assert_memory_equal(g2, g, size);
            }
            if (k == 0) {
                char env[32];
                snprintf(env, sizeof env, "%zu", (size_t)img.width * 16 * 4 * 3);
                setenv("KILN_GPU_BATCH_BYTES", env, 1);
                st = kiln__gpu_encode(fx->gpu, &img, &p, 0, g2, size);
                unsetenv("KILN_GPU_BATCH_BYTES");
                if (st != KILN_OK) fail_msg("batched: %s", kiln_last_error(fx->gpu));
                assert_memory_equal(g2, g, size);
            }
            free(g);
            free(c);
            free(g2);
        }
        kiln_image_free(&img);
    }
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

/* A synthetic HDR image (sizes not multiples of 4): smooth gradients, two-colour edges, very bright
 * texels (above 65504, +Inf), tiny ones (half subnormals), negatives, -Inf and NaN (the documented
 * policy maps them), noise. Deterministic. */
static kiln_image synthetic(kiln_context *ctx, uint32_t w, uint32_t h)
{
    kiln_image img;
    assert_int_equal(kiln_image_alloc(ctx, &img, w, h, KILN_PIXEL_F32), KILN_OK);
    img.channels = 3;
    img.hdr = 1;
    uint32_t r = 12345u;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            float *px = (float *)img.pixels + ((size_t)y * w + x) * 4;
            uint32_t kind = (x / 4 + (y / 4) * 3) % 7;
            for (int c = 0; c < 3; c++) {
                r = r * 1664525u + 1013904223u;
                float n = (float)(r >> 8) / 16777216.0f; /* [0, 1) */
                float v;
                switch (kind) {
                case 0: v = 0.05f + 0.2f * (float)x / (float)w + 0.1f * (float)c; break;       /* gradient */
                case 1: v = ((x + y) & 2) ? 8.0f + (float)c : 0.01f * (float)(c + 1); break;  /* edge */
                case 2: v = n * 70000.0f; break;                                              /* very bright */
                case 3: v = n * 1e-5f; break;                                                 /* subnormal halves */
                case 4: v = (n - 0.5f) * 4.0f; break;                                         /* signed */
                case 5: v = n * n * 300.0f; break;                                            /* noise */
                default: v = (float)(1u << (r & 15)) * 0.001f; break;                          /* wide range */
                }
                px[c] = v;
            }
            px[3] = 1.0f;
        }
    /* specials */
    float *p0 = (float *)img.pixels;
    p0[0] = INFINITY;
    p0[5] = -INFINITY;
    p0[10] = NAN;
    p0[4 * 7 + 1] = -0.0f;
    if (w * h > 40) p0[4 * 40] = 1e30f, p0[4 * 40 + 2] = -1e30f;
    return img;
}

/* helper bc6hk (2026-11-26): blocks whose ranking has exact ties (the order by partition / candidate number decides):
 * per 4x4 block by kind (block index % 5) a constant colour (every partition's residual 0), two colours split at x = 2,
 * at y = 2, a two-colour checker, a ramp along x; the colours from the block index */
static kiln_image ties_image(kiln_context *ctx, uint32_t w, uint32_t h)
{
    kiln_image img;
    assert_int_equal(kiln_image_alloc(ctx, &img, w, h, KILN_PIXEL_F32), KILN_OK);
    img.channels = 3;
    img.hdr = 1;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            float *px = (float *)img.pixels + ((size_t)y * w + x) * 4;
            const uint32_t bi = (y / 4) * ((w + 3) / 4) + x / 4, kind = bi % 5, lx = x % 4, ly = y % 4;
            const float a = 0.25f * (float)(bi % 7 + 1), b = 3.0f + (float)(bi % 3);
            for (int c = 0; c < 3; c++) {
                const float ac = a * (float)(c + 1), bc = b / (float)(c + 1);
                float v;
                switch (kind) {
                case 0: v = ac; break;
                case 1: v = lx < 2 ? ac : bc; break;
                case 2: v = ly < 2 ? ac : bc; break;
                case 3: v = ((lx ^ ly) & 1) ? ac : bc; break;
                default: v = ac + 0.5f * (float)lx; break;
                }
                px[c] = v;
            }
            px[3] = 1.0f;
        }
    return img;
}

/* A test case: the crop (or the synthetic image when c->file is NULL; ties_image when it is "#ties"); for SFLOAT (sf) the crops get signed data:
 * the red and blue channels of every third texel negated (blue also scaled by 1/4). */
static kiln_image load_case(kiln_context *ctx, const crop_spec *c, int sf)
{
    kiln_image img = c->file && !strcmp(c->file, "#ties") ? ties_image(ctx, c->w, c->h)
                     : c->file                             ? load_crop(ctx, c->file, c->x, c->y, c->w, c->h)
                                                           : synthetic(ctx, c->w, c->h);
    if (sf && c->file)
        for (size_t i = 0; i < (size_t)img.width * img.height; i += 3) {
            ((float *)img.pixels)[i * 4] = -((float *)img.pixels)[i * 4];
            ((float *)img.pixels)[i * 4 + 2] = -((float *)img.pixels)[i * 4 + 2] * 0.25f;
        }
    return img;
}

/* kiln's GPU encoder at normal, high and max (shaders/enc_bc6h_q.comp) against the CPU encoder at
 * the same level, UF16 and SF16. Stated tolerance (docs/PERFORMANCE.md, BC6H): the image RMSLE within
 * 1% of the CPU's, no block's error above 1.25 x the CPU block's + 1e-4, and at least 90% of the
 * blocks bit-identical; the same bytes at every subgroup size the device can require, in small
 * batches and with 8, 16 or 32 invocations per block. Prints the fraction of bit-identical blocks. */
static void kiln_quality_matches_cpu(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    static const crop_spec crops[] = {
        {"hdr/blender_sunset_1024x512.exr", 470, 170, 21, 14},
        {"hdr/qtcreator_preview_landscape_256x128.hdr", 90, 40, 18, 13},
        {NULL, 0, 0, 23, 13}, /* synthetic */
    };
    uint32_t sizes = subgroup_sizes_to_check(fx->gpu);
    setenv("KILN_BC6H_GPU_EXACT", "1", 1); /* quality high: the CPU-exact port (default: GPU-native) */
    for (size_t k = 0; k < sizeof crops / sizeof crops[0]; k++) {
        for (int sf = 0; sf < 2; sf++) {
            kiln_image img = load_case(fx->cpu, &crops[k], sf);
            const kiln_format fmt = sf ? KILN_FORMAT_BC6H_SFLOAT : KILN_FORMAT_BC6H_UFLOAT;
            /* the metric's reference: the texels as the documented policy maps them (NaN -> 0, beyond the
             * half range -> +-65504, UF16 negatives -> 0), so that RMSLE stays finite */
            kiln_image ref;
            assert_int_equal(kiln_image_alloc(fx->cpu, &ref, img.width, img.height, KILN_PIXEL_F32), KILN_OK);
            ref.channels = 3;
            ref.hdr = 1;
            for (size_t i = 0; i < (size_t)img.width * img.height * 4; i++) {
                float v = ((const float *)img.pixels)[i];
                if (v != v || (!sf && v < 0.0f)) v = 0.0f;
                ((float *)ref.pixels)[i] = v > 65504.0f ? 65504.0f : v < -65504.0f ? -65504.0f : v;
            }
            size_t size = kiln_format_image_size(fmt, img.width, img.height);
            uint8_t *g = malloc(size), *c = malloc(size), *g2 = malloc(size);
            assert_non_null(g);
            assert_non_null(c);
            assert_non_null(g2);
            for (int q = 1; q < 4; q++) {
                kiln_encode_params p;
                kiln_encode_params_init(&p, fmt, (kiln_quality)q);
                p.gpu_strategy = 0;
                kiln_status st = kiln__gpu_encode(fx->gpu, &img, &p, 0, g, size);
                if (st == KILN_ERR_UNSUPPORTED && strstr(kiln_last_error(fx->gpu), "shaderFloat64")) {
                    print_message("note: no shaderFloat64: %s\n", kiln_last_error(fx->gpu));
                    break;
                }
                if (st != KILN_OK) fail_msg("kiln GPU encode q%d: %s", q, kiln_last_error(fx->gpu));
                const uint32_t bx = (img.width + 3) / 4, by = (img.height + 3) / 4;
                size_t same = 0, n = (size_t)bx * by;
                double worst = 0.0;
                for (uint32_t y = 0; y < by; y++)
                    for (uint32_t x = 0; x < bx; x++) {
                        float f[64];
                        size_t i = (size_t)y * bx + x;
                        block_texels(&img, x, y, f);
                        for (int t = 0; t < 64; t++) /* the encode driver maps NaN to 0 for F32 images */
                            if (f[t] != f[t]) f[t] = 0.0f;
                        (void)kiln__enc_bc6h_rgb(f, sf, q, -1, c + i * 16);
                        same += memcmp(g + i * 16, c + i * 16, 16) == 0;
                        kiln_bc6h_info info;
                        assert_true(kiln__bc6h_unpack(g + i * 16, sf, &info) > 0);
                        double eg = block_err(f, g + i * 16, sf), ec = block_err(f, c + i * 16, sf);
                        if (eg > 1.25 * ec + 1e-4) fail_msg("q%d block %u,%u: GPU error %g, CPU %g", q, x, y, eg, ec);
                        if (ec > 0 && eg / ec > worst) worst = eg / ec;
                    }
                double eg = rmsle_blocks_fmt(fx->cpu, &ref, g, size, fmt), ec = rmsle_blocks_fmt(fx->cpu, &ref, c, size, fmt);
                print_message("%s %s q%d: %zu/%zu blocks identical, RMSLE GPU %.6f CPU %.6f, worst block ratio %.3f\n",
                              crops[k].file ? crops[k].file : "synthetic", sf ? "SF" : "UF", q, same, n, eg, ec, worst);
                assert_true(same * 10 >= n * 9);
                assert_true(eg <= 1.01 * ec + 1e-7);
                if (k == 0 && sf == 0) {
                    /* every subgroup size and small batches: the same bytes */
                    for (uint32_t sg = 1; sg <= 128; sg <<= 1) {
                        if (!(sizes & sg)) continue;
                        st = kiln__gpu_encode(fx->gpu, &img, &p, sg, g2, size);
                        if (st != KILN_OK) fail_msg("subgroup %u: %s", sg, kiln_last_error(fx->gpu));
                        assert_memory_equal(g2, g, size);
                    }
                    char env[32];
                    snprintf(env, sizeof env, "%zu", (size_t)img.width * 16 * 4 * 2);
                    setenv("KILN_GPU_BATCH_BYTES", env, 1);
                    st = kiln__gpu_encode(fx->gpu, &img, &p, 0, g2, size);
                    unsetenv("KILN_GPU_BATCH_BYTES");
                    if (st != KILN_OK) fail_msg("batched: %s", kiln_last_error(fx->gpu));
                    assert_memory_equal(g2, g, size);
                    /* other lane counts per block (KILN_BC6H_GPU_LANES): the same bytes; 8 at max is refused */
                    static const char *lanes[3] = {"8", "16", "32"};
                    for (int l = 0; l < 3; l++) {
                        setenv("KILN_BC6H_GPU_LANES", lanes[l], 1);
                        st = kiln__gpu_encode(fx->gpu, &img, &p, 0, g2, size);
                        unsetenv("KILN_BC6H_GPU_LANES");
                        if (q == 3 && l == 0) {
                            assert_int_equal(st, KILN_ERR_INVALID_ARGUMENT);
                            continue;
                        }
                        if (st != KILN_OK) fail_msg("lanes %s: %s", lanes[l], kiln_last_error(fx->gpu));
                        assert_memory_equal(g2, g, size);
                    }
                }
            }
            free(g);
            free(c);
            free(g2);
            kiln_image_free(&ref);
            kiln_image_free(&img);
        }
    }
    unsetenv("KILN_BC6H_GPU_EXACT");
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

/* The GPU-native high (shaders/enc_bc6h_hl.comp, the default at quality high, and the one-invocation
 * design shaders/enc_bc6h_h.comp) against the CPU encoder
 * at high, normal and fast, UF16 and SF16 (negated texels), on crops of three HDR images and the
 * synthetic image of kiln_quality_matches_cpu. Stated tolerance (docs/PERFORMANCE.md, BC6H): image
 * RMSLE <= HIGH_TOL x the CPU high's and <= NORMAL_TOL x the CPU normal's (+1e-7), never above the CPU
 * fast's, no block's error above BLOCK_TOL x the CPU high block's + 1e-4; every block valid; the same
 * bytes at every subgroup size the device can require and in small batches; KILN_BC6H_HIGH_CFG
 * (one-subset only: only one-subset blocks; out of range: KILN_ERR_INVALID_ARGUMENT; a value set by
 * the caller is used for every image: tuning runs); the first design (KILN_BC6H_HIGH_DESIGN=4) within
 * HIGH_TOL of the CPU high on the first image. Prints the ratios to the CPU's high and normal and the
 * two-subset block counts. */
#define HIGH_TOL 1.10
#define NORMAL_TOL 1.08
#define BLOCK_TOL 4.0
/* lanes 0: the default design (enc_bc6h_hl.comp, 8 lanes; or the caller's KILN_BC6H_HIGH_DESIGN),
 * with the knob checks; -1: the one-invocation design enc_bc6h_h.comp (KILN_BC6H_HIGH_DESIGN=1); 4, 8,
 * 16: enc_bc6h_hl.comp at that many lanes (KILN_BC6H_HIGH_DESIGN=lanes, KILN_BC6H_HIGH_LANES) and its
 * knob limits. Every one under the same bounds. */
/* the CPU's high, normal and fast blocks of high_native's crops (the same for every design and lane count it checks:
 * computed once per process, kept until it ends) */
static struct {
    uint8_t *blocks[3]; /* high, normal, fast */
    size_t size;
} hn_cpu[4][2];

static void high_native(fixture *fx, int lanes)
{
    char lanes_s[8];
    snprintf(lanes_s, sizeof lanes_s, "%d", lanes);
    if (lanes > 0) {
        setenv("KILN_BC6H_HIGH_DESIGN", "lanes", 1);
        setenv("KILN_BC6H_HIGH_LANES", lanes_s, 1);
    } else if (lanes < 0)
        setenv("KILN_BC6H_HIGH_DESIGN", "1", 1);
    static const crop_spec crops[] = {
        {"hdr/blender_sunset_1024x512.exr", 470, 170, 41, 30},
        {"hdr/qtcreator_preview_landscape_256x128.hdr", 90, 40, 38, 29},
        {"hdr/blender_city_1024x512.exr", 300, 200, 37, 31},
        {NULL, 0, 0, 23, 13}, /* synthetic */
    };
    /* every size on the default design's UF16 (the plumbing), else only where the device has several */
    const uint32_t sizes_all = kiln__gpu_subgroup_sizes(fx->gpu), sizes_multi = subgroup_sizes_to_check(fx->gpu);
    unsetenv("KILN_BC6H_GPU_EXACT");
    char cfg0[64] = "";
    if (getenv("KILN_BC6H_HIGH_CFG")) snprintf(cfg0, sizeof cfg0, "%s", getenv("KILN_BC6H_HIGH_CFG"));
    for (size_t k = 0; k < sizeof crops / sizeof crops[0]; k++) {
        for (int sf = 0; sf < 2; sf++) {
            kiln_image img = load_case(fx->cpu, &crops[k], sf);
            const kiln_format fmt = sf ? KILN_FORMAT_BC6H_SFLOAT : KILN_FORMAT_BC6H_UFLOAT;
            kiln_image ref;
            assert_int_equal(kiln_image_alloc(fx->cpu, &ref, img.width, img.height, KILN_PIXEL_F32), KILN_OK);
            ref.channels = 3;
            ref.hdr = 1;
            for (size_t i = 0; i < (size_t)img.width * img.height * 4; i++) {
                float v = ((const float *)img.pixels)[i];
                if (v != v || (!sf && v < 0.0f)) v = 0.0f;
                ((float *)ref.pixels)[i] = v > 65504.0f ? 65504.0f : v < -65504.0f ? -65504.0f : v;
            }
            size_t size = kiln_format_image_size(fmt, img.width, img.height);
            const uint32_t sizes = lanes == 0 && sf == 0 ? sizes_all : sizes_multi;
            uint8_t *g = malloc(size), *g2 = malloc(size);
            assert_true(g && g2);
            if (!hn_cpu[k][sf].blocks[0]) { /* the CPU's blocks at high, normal and fast, once per process */
                const uint32_t cbx = (img.width + 3) / 4, cby = (img.height + 3) / 4;
                for (int q = 0; q < 3; q++) {
                    hn_cpu[k][sf].blocks[q] = malloc(size);
                    assert_non_null(hn_cpu[k][sf].blocks[q]);
                }
                hn_cpu[k][sf].size = size;
                for (uint32_t y = 0; y < cby; y++)
                    for (uint32_t x = 0; x < cbx; x++) {
                        float f[64];
                        size_t i = (size_t)y * cbx + x;
                        block_texels(&img, x, y, f);
                        for (int t = 0; t < 64; t++)
                            if (f[t] != f[t]) f[t] = 0.0f;
                        (void)kiln__enc_bc6h_rgb(f, sf, KILN_QUALITY_HIGH, -1, hn_cpu[k][sf].blocks[0] + i * 16);
                        (void)kiln__enc_bc6h_rgb(f, sf, KILN_QUALITY_NORMAL, -1, hn_cpu[k][sf].blocks[1] + i * 16);
                        (void)kiln__enc_bc6h_rgb(f, sf, KILN_QUALITY_FAST, -1, hn_cpu[k][sf].blocks[2] + i * 16);
                    }
            }
            assert_int_equal(hn_cpu[k][sf].size, size);
            const uint8_t *ch = hn_cpu[k][sf].blocks[0], *cn = hn_cpu[k][sf].blocks[1], *cf = hn_cpu[k][sf].blocks[2];
            kiln_encode_params p;
            kiln_encode_params_init(&p, fmt, KILN_QUALITY_HIGH);
            p.gpu_strategy = 0;
            kiln_status st = kiln__gpu_encode(fx->gpu, &img, &p, 0, g, size);
            if (st != KILN_OK) fail_msg("GPU-native high: %s", kiln_last_error(fx->gpu));
            const uint32_t bx = (img.width + 3) / 4, by = (img.height + 3) / 4;
            size_t two = 0, two_cpu = 0, n = (size_t)bx * by;
            double worst = 0.0;
            for (uint32_t y = 0; y < by; y++)
                for (uint32_t x = 0; x < bx; x++) {
                    float f[64];
                    size_t i = (size_t)y * bx + x;
                    block_texels(&img, x, y, f);
                    for (int t = 0; t < 64; t++)
                        if (f[t] != f[t]) f[t] = 0.0f;
                    kiln_bc6h_info info;
                    assert_true(kiln__bc6h_unpack(g + i * 16, sf, &info) > 0);
                    two += !(info.mode == 3 || info.mode == 7 || info.mode == 11 || info.mode == 15);
                    assert_true(kiln__bc6h_unpack(ch + i * 16, sf, &info) > 0);
                    two_cpu += !(info.mode == 3 || info.mode == 7 || info.mode == 11 || info.mode == 15);
                    double eg = block_err(f, g + i * 16, sf), ec = block_err(f, ch + i * 16, sf);
                    if (eg > BLOCK_TOL * ec + 1e-4) fail_msg("block %u,%u: GPU error %g, CPU high %g", x, y, eg, ec);
                    if (ec > 0 && eg / ec > worst) worst = eg / ec;
                }
            double eg = rmsle_blocks_fmt(fx->cpu, &ref, g, size, fmt), eh = rmsle_blocks_fmt(fx->cpu, &ref, ch, size, fmt);
            double en = rmsle_blocks_fmt(fx->cpu, &ref, cn, size, fmt), ef = rmsle_blocks_fmt(fx->cpu, &ref, cf, size, fmt);
            print_message("%s%s %s %s native high: RMSLE GPU %.6f, CPU high %.6f (x%.4f), normal %.6f (x%.4f), fast %.6f; "
                          "two-subset blocks %zu (CPU high %zu) of %zu, worst block ratio %.3f\n",
                          lanes > 0 ? "lanes " : lanes < 0 ? "one-invocation" : "", lanes > 0 ? lanes_s : "", crops[k].file ? crops[k].file : "synthetic", sf ? "SF" : "UF", eg, eh, eh > 0 ? eg / eh : 1.0, en,
                          en > 0 ? eg / en : 1.0, ef, two, two_cpu, n, worst);
            assert_true(eg <= HIGH_TOL * eh + 1e-7);
            assert_true(eg <= NORMAL_TOL * en + 1e-7);
            assert_true(eg <= ef + 1e-7); /* never worse than fast */
            if (k == 0) {
                for (uint32_t sg = 1; sg <= 128; sg <<= 1) { /* every subgroup size: the same bytes */
                    if (!(sizes & sg)) continue;
                    st = kiln__gpu_encode(fx->gpu, &img, &p, sg, g2, size);
                    if (st != KILN_OK) fail_msg("subgroup %u: %s", sg, kiln_last_error(fx->gpu));
                    assert_memory_equal(g2, g, size);
                }
                char env[32];
                snprintf(env, sizeof env, "%zu", (size_t)img.width * 16 * 4 * 2);
                setenv("KILN_GPU_BATCH_BYTES", env, 1); /* small batches: the same bytes */
                st = kiln__gpu_encode(fx->gpu, &img, &p, 0, g2, size);
                unsetenv("KILN_GPU_BATCH_BYTES");
                if (st != KILN_OK) fail_msg("batched: %s", kiln_last_error(fx->gpu));
                assert_memory_equal(g2, g, size);
                if (lanes > 0 && (sf == 0 || full_matrix())) { /* its knobs: P <= 4, K <= 4, R in 1, 2, 4 (<= the
                                                                * lanes); lanes 4, 8, 16; SF16: KILN_TEST_BC6H_FULL */
                    setenv("KILN_BC6H_HIGH_CFG", "5,4,3,2", 1);
                    assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &p, 0, g2, size), KILN_ERR_INVALID_ARGUMENT);
                    setenv("KILN_BC6H_HIGH_CFG", "4,5,3,2", 1);
                    assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &p, 0, g2, size), KILN_ERR_INVALID_ARGUMENT);
                    setenv("KILN_BC6H_HIGH_CFG", "4,4,3,3", 1);
                    assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &p, 0, g2, size), KILN_ERR_INVALID_ARGUMENT);
                    setenv("KILN_BC6H_HIGH_CFG", "0,4,3,1", 1); /* one-subset only, R = 1 */
                    st = kiln__gpu_encode(fx->gpu, &img, &p, 0, g2, size);
                    if (st != KILN_OK) fail_msg("lanes cfg 0,4,3,1: %s", kiln_last_error(fx->gpu));
                    for (size_t i = 0; i < n; i++) {
                        kiln_bc6h_info info;
                        assert_true(kiln__bc6h_unpack(g2 + i * 16, sf, &info) > 0);
                        assert_true(info.mode == 3 || info.mode == 7 || info.mode == 11 || info.mode == 15);
                    }
                    setenv("KILN_BC6H_HIGH_CFG", "2,2,2,4", 1); /* R = 4: every group refines */
                    st = kiln__gpu_encode(fx->gpu, &img, &p, 0, g2, size);
                    if (st != KILN_OK) fail_msg("lanes cfg 2,2,2,4: %s", kiln_last_error(fx->gpu));
                    for (size_t i = 0; i < n; i++) {
                        kiln_bc6h_info info;
                        assert_true(kiln__bc6h_unpack(g2 + i * 16, sf, &info) > 0);
                    }
                    unsetenv("KILN_BC6H_HIGH_CFG");
                    setenv("KILN_BC6H_HIGH_LANES", "32", 1);
                    assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &p, 0, g2, size), KILN_ERR_INVALID_ARGUMENT);
                    setenv("KILN_BC6H_HIGH_LANES", lanes_s, 1);
                    /* the two-step sums of the refinement: the same additions in the same order. They act only
                     * without OPT bit 1 and in groups of 4 or more lanes (TRANSPOSE), so kernel B runs with
                     * KILN_BC6H_HIGH_OPT_B=1, and only at 8 or more lanes (R = 2); at the default OPT 7 (and at 4
                     * lanes) SUM2 is ignored: the same code as the default (what this run compared until
                     * 2026-11-26) */
                    if (lanes >= 8) {
                        setenv("KILN_BC6H_HIGH_SUM2", "1", 1);
                        setenv("KILN_BC6H_HIGH_OPT_B", "1", 1);
                        st = kiln__gpu_encode(fx->gpu, &img, &p, 0, g2, size);
                        unsetenv("KILN_BC6H_HIGH_OPT_B");
                        if (st != KILN_OK) fail_msg("KILN_BC6H_HIGH_SUM2=1: %s", kiln_last_error(fx->gpu));
                        assert_memory_equal(g2, g, size);
                    }
                    setenv("KILN_BC6H_HIGH_SUM2", "2", 1);
                    assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &p, 0, g2, size), KILN_ERR_INVALID_ARGUMENT);
                    unsetenv("KILN_BC6H_HIGH_SUM2");
                    /* the code variants (KILN_BC6H_HIGH_OPT bits) and blocks per workgroup (KILN_BC6H_HIGH_BPW):
                     * the same bytes; bad values refused. In two kernels (the default here) bit 0 acts only in kernel
                     * A (rank loops), bit 1 only in kernel B (per-component sums), bit 2 in neither (it picks the one
                     * kernel's shader): OPT 0..4 and 7 (checked until 2026-11-26, when 7 was the default) are the four
                     * combinations of kernel A with / without bit 0 and kernel B with / without bit 1, run as {OPT,
                     * kernel B's OPT} = {0, 0} (OPT 0 and 4), {7, 0} (OPT 1), {0, 4103} (OPT 2), {7, 4103} (OPT 3 and 7; the
                     * default is now 4103 = 7 + MERGE3 in kernel A): each kernel compiled once per code */
                    static const char *opts[][2] = {{"0", "0"}, {"7", "0"}, {"0", "4103"}, {"7", "4103"}};
                    for (int oi = 0; oi < 4; oi++) {
                        setenv("KILN_BC6H_HIGH_OPT", opts[oi][0], 1);
                        setenv("KILN_BC6H_HIGH_OPT_B", opts[oi][1], 1);
                        st = kiln__gpu_encode(fx->gpu, &img, &p, 0, g2, size);
                        unsetenv("KILN_BC6H_HIGH_OPT_B");
                        if (st != KILN_OK) fail_msg("KILN_BC6H_HIGH_OPT=%s (B %s): %s", opts[oi][0], opts[oi][1], kiln_last_error(fx->gpu));
                        if (memcmp(g2, g, size)) fail_msg("KILN_BC6H_HIGH_OPT=%s (B %s): other bytes", opts[oi][0], opts[oi][1]);
                    }
                    setenv("KILN_BC6H_HIGH_OPT", "x", 1);
                    assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &p, 0, g2, size), KILN_ERR_INVALID_ARGUMENT);
                    unsetenv("KILN_BC6H_HIGH_OPT");
                    /* 16 lanes: 2 blocks per workgroup; 4 lanes: 16 (may exceed the device's shared memory: refused) */
                    setenv("KILN_BC6H_HIGH_BPW", lanes == 16 ? "2" : "16", 1);
                    st = kiln__gpu_encode(fx->gpu, &img, &p, 0, g2, size);
                    if (st == KILN_ERR_INVALID_ARGUMENT && lanes != 16)
                        assert_non_null(strstr(kiln_last_error(fx->gpu), "shared memory"));
                    else if (st != KILN_OK)
                        fail_msg("KILN_BC6H_HIGH_BPW: %s", kiln_last_error(fx->gpu));
                    else
                        assert_memory_equal(g2, g, size);
                    setenv("KILN_BC6H_HIGH_BPW", "3", 1);
                    assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &p, 0, g2, size), KILN_ERR_INVALID_ARGUMENT);
                    unsetenv("KILN_BC6H_HIGH_BPW");
                    setenv("KILN_BC6H_HIGH_STOP", "6", 1);
                    assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &p, 0, g2, size), KILN_ERR_INVALID_ARGUMENT);
                    unsetenv("KILN_BC6H_HIGH_STOP");
                    setenv("KILN_BC6H_HIGH_SPAN", "9", 1);
                    assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &p, 0, g2, size), KILN_ERR_INVALID_ARGUMENT);
                    unsetenv("KILN_BC6H_HIGH_SPAN");
                    if (cfg0[0]) setenv("KILN_BC6H_HIGH_CFG", cfg0, 1);
                }
                if (lanes != 0) goto next;
                /* one-subset modes only, K above the filtered candidates: valid, no two-subset block */
                setenv("KILN_BC6H_HIGH_CFG", "0,4,3", 1);
                st = kiln__gpu_encode(fx->gpu, &img, &p, 0, g2, size);
                if (st != KILN_OK) fail_msg("cfg 0,4,3: %s", kiln_last_error(fx->gpu));
                for (size_t i = 0; i < n; i++) {
                    kiln_bc6h_info info;
                    assert_true(kiln__bc6h_unpack(g2 + i * 16, sf, &info) > 0);
                    assert_true(info.mode == 3 || info.mode == 7 || info.mode == 11 || info.mode == 15);
                }
                setenv("KILN_BC6H_HIGH_CFG", "9,1,0", 1);
                assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &p, 0, g2, size), KILN_ERR_INVALID_ARGUMENT);
                setenv("KILN_BC6H_HIGH_CFG", "4,4,3,5", 1); /* R above 4 */
                assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &p, 0, g2, size), KILN_ERR_INVALID_ARGUMENT);
                /* the first design (enc_bc6h_h4.comp, 4 invocations per block): valid blocks, the same
                 * tolerance against the CPU high; no R for it; an unknown design is refused */
                setenv("KILN_BC6H_HIGH_DESIGN", "4", 1);
                assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &p, 0, g2, size), KILN_ERR_INVALID_ARGUMENT);
                unsetenv("KILN_BC6H_HIGH_CFG");
                st = kiln__gpu_encode(fx->gpu, &img, &p, 0, g2, size);
                if (st != KILN_OK) fail_msg("first design: %s", kiln_last_error(fx->gpu));
                for (size_t i = 0; i < n; i++) {
                    kiln_bc6h_info info;
                    assert_true(kiln__bc6h_unpack(g2 + i * 16, sf, &info) > 0);
                }
                double e4 = rmsle_blocks_fmt(fx->cpu, &ref, g2, size, fmt);
                print_message("  first design (KILN_BC6H_HIGH_DESIGN=4): RMSLE %.6f (x%.4f CPU high)\n", e4, eh > 0 ? e4 / eh : 1.0);
                assert_true(e4 <= HIGH_TOL * eh + 1e-7);
                setenv("KILN_BC6H_HIGH_DESIGN", "2", 1);
                assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &p, 0, g2, size), KILN_ERR_INVALID_ARGUMENT);
                unsetenv("KILN_BC6H_HIGH_DESIGN");
                if (cfg0[0]) setenv("KILN_BC6H_HIGH_CFG", cfg0, 1); /* the caller's (tuning runs) */
            }
        next:
            free(g);
            free(g2);
            kiln_image_free(&ref);
            kiln_image_free(&img);
        }
    }
    if (lanes != 0) {
        unsetenv("KILN_BC6H_HIGH_DESIGN");
        unsetenv("KILN_BC6H_HIGH_LANES");
    }
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

static void kiln_high_native(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    high_native(fx, 0);
    high_native(fx, -1);
}

/* the several-lanes design (enc_bc6h_hl.comp) at 16 and 4 lanes per block (8, the default, is
 * kiln_high_native's): the same quality bounds, bytes independent of the subgroup size and the batches,
 * its knobs' limits, KILN_BC6H_HIGH_SUM2's bytes */
static void kiln_high_lanes(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    high_native(fx, 16);
    if (!kt_gpu_light()) high_native(fx, 4); /* light run: 16 lanes (the same host code) */
}

/* The code variants of the GPU-native high added by helper bc6hreg (KILN_BC6H_HIGH_OPT bits 3-9 of
 * enc_bc6h_hl.glsl: REFSH, RECOMP, LEAN3, LINE, PAIR3, RANKV, PAIR1; bits 3 and 4 act only with bit 1): the same
 * bytes as the default (whose quality kiln_high_native checks against the CPU) on odd-sized crops of the four HDR test
 * images and on the synthetic image, UF16 and SF16 (negated texels), at 8 lanes (the default) and, with all
 * bits but RECOMP, at 4 and 16 lanes (each against the default at that many lanes; the first image) */
static void high_opt_variants(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    static const crop_spec crops[] = {
        {"hdr/blender_sunset_1024x512.exr", 600, 300, 29, 19},
        {"hdr/qtcreator_preview_landscape_256x128.hdr", 10, 70, 21, 15},
        {"hdr/qtcreator_preview_studio_256x128.hdr", 130, 20, 27, 13},
        {"hdr/blender_city_1024x512.exr", 700, 100, 25, 17},
        {NULL, 0, 0, 23, 13}, /* synthetic */
        {"#ties", 0, 0, 20, 12}, /* exact ties in the rankings (helper bc6hk) */
    };
    /* 8 lanes: each new bit alone (with the default 7), all of them but RECOMP (1007), LINE without bit 1 (88:
     * bits 3 and 4 ignored); SF16 (each variant is another pipeline, ~3 s to compile on lavapipe): 1007 and 88;
     * 4 and 16 lanes: 1007. RECOMP (bit 4, "23") only for UF16: on the NVIDIA H200 (2026-11-26) it gave other
     * bytes for SF16 (4096^2 bench image; UF16 the same), its sums are not guaranteed to compile to the
     * default's */
    /* {OPT, kernel B's OPT (KILN_BC6H_HIGH_OPT_B; NULL: OPT)}: bits that act only in kernel A (5 LEAN3, 6 LINE, 7 PAIR3,
     * 8 RANKV, 9 PAIR1, 12 MERGE3: "7" is the former default, rank counting) run with kernel B's default pipeline (OPT_B
     * 5127 = 4103 + NE2 since helper bc6hk; the host compiles kernel B without the kernel-A-only bits), RECOMP (bit 4, kernel
     * B only) with kernel A's: the same code as OPT = that value in both kernels, each kernel compiled once. {"7", "4103"}:
     * kernel A without MERGE3 and kernel B without NE2 (the former default's kernel B) against the default. SF16: the first three. */
    static const char *opts8[][2] = {{"1007", NULL}, {"88", NULL}, {"7", "4103"}, {"15", NULL}, {"4103", "4119"}, {"39", "5127"},
                                     {"71", "5127"}, {"135", "5127"}, {"263", "5127"}, {"519", "5127"}};
    static const char *opts_other[][2] = {{"1007", NULL}};
    static const char *lane_list[] = {"8", "4", "16"};
    unsetenv("KILN_BC6H_GPU_EXACT");
    unsetenv("KILN_BC6H_HIGH_OPT");
    setenv("KILN_BC6H_HIGH_DESIGN", "lanes", 1);
    for (size_t k = 0; k < sizeof crops / sizeof crops[0]; k++) {
        for (int sf = 0; sf < 2; sf++) {
            kiln_image img = load_case(fx->cpu, &crops[k], sf);
            const kiln_format fmt = sf ? KILN_FORMAT_BC6H_SFLOAT : KILN_FORMAT_BC6H_UFLOAT;
            const size_t size = kiln_format_image_size(fmt, img.width, img.height);
            uint8_t *ref = malloc(size), *g = malloc(size);
            assert_true(ref && g);
            kiln_encode_params p;
            kiln_encode_params_init(&p, fmt, KILN_QUALITY_HIGH);
            p.gpu_strategy = 0;
            /* the first image at every lane count, the others at 8 lanes (the default) */
            for (int l = 0; l < (k == 0 && !kt_gpu_light() && (sf == 0 || full_matrix()) ? 3 : 1); l++) { /* light run: 8 */ /* SF16 at 4 / 16: KILN_TEST_BC6H_FULL */
                setenv("KILN_BC6H_HIGH_LANES", lane_list[l], 1);
                kiln_status st = kiln__gpu_encode(fx->gpu, &img, &p, 0, ref, size);
                if (st != KILN_OK) fail_msg("default: %s", kiln_last_error(fx->gpu));
                size_t nz = 0;
                for (size_t i = 0; i < size; i++) nz += ref[i] != 0;
                assert_true(nz > 0);
                const char *(*opts)[2] = l == 0 ? opts8 : opts_other;
                const int nopts = l == 0 ? (sf ? 3 : (int)(sizeof opts8 / sizeof opts8[0])) : 1;
                for (int oi = 0; oi < (kt_gpu_light() ? (k == 0 && !sf ? 3 : 0) : nopts); oi++) { /* light run: 3 */
                    setenv("KILN_BC6H_HIGH_OPT", opts[oi][0], 1);
                    if (opts[oi][1]) setenv("KILN_BC6H_HIGH_OPT_B", opts[oi][1], 1);
                    memset(g, 0xA5, size);
                    st = kiln__gpu_encode(fx->gpu, &img, &p, 0, g, size);
                    unsetenv("KILN_BC6H_HIGH_OPT");
                    unsetenv("KILN_BC6H_HIGH_OPT_B");
                    if (st != KILN_OK) fail_msg("KILN_BC6H_HIGH_OPT=%s: %s", opts[oi][0], kiln_last_error(fx->gpu));
                    size_t diff = 0;
                    for (size_t i = 0; i < size; i += 16) diff += memcmp(g + i, ref + i, 16) != 0;
                    if (diff)
                        fail_msg("%s %s %ux%u, %s lanes, KILN_BC6H_HIGH_OPT=%s (B %s): %zu of %zu blocks differ from the default",
                                 crops[k].file ? crops[k].file : "synthetic", sf ? "SF16" : "UF16", img.width, img.height,
                                 lane_list[l], opts[oi][0], opts[oi][1] ? opts[oi][1] : opts[oi][0], diff, size / 16);
                }
            }
            unsetenv("KILN_BC6H_HIGH_LANES");
            if (k == 0 && !sf) { /* bits above 15: refused */
                setenv("KILN_BC6H_HIGH_OPT", "65536", 1);
                assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &p, 0, g, size), KILN_ERR_INVALID_ARGUMENT);
                unsetenv("KILN_BC6H_HIGH_OPT");
            }
            free(ref);
            free(g);
            kiln_image_free(&img);
        }
    }
    unsetenv("KILN_BC6H_HIGH_DESIGN");
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

/* GPU high in two kernels (KILN_BC6H_HIGH_SPLIT=1: enc_bc6h_ha.comp hands the jobs to refine to enc_bc6h_hb.comp
 * through a device buffer): the same bytes as the one-kernel encoder (KILN_BC6H_HIGH_SPLIT=0) on odd-sized crops of
 * two HDR images and on the synthetic image, UF16 and SF16 (negated texels); in small batches (each batch's hand-off);
 * with KILN_BC6H_HIGH_OPT bit 10 (NE2) in both designs; on the first crop also with R = 4 refined jobs (4 records per
 * block, 2 lanes per job), at 16 lanes (8 lanes per job): other index layouts, and with kernel B's own blocks per
 * workgroup (KILN_BC6H_HIGH_BPW_B=8; the default 4). The images must exercise every field of the hand-off (else a
 * truncated hand-off could pass): one- and two-subset blocks, partitions >= 16 (the partition's fifth bit) and nonzero
 * indices in both index
 * words (texels < 8 and >= 8); bad values of the variables, and KILN_BC6H_HIGH_STOP with the split, are
 * KILN_ERR_INVALID_ARGUMENT. (Checked on lavapipe,
 * 2026-11-26: kernel B reading only 16 bits of the second index word, 10 bits of each endpoint, or 4 bits of the
 * partition fails this test; the endpoints' upper 16 bits do not matter, the packing keeps at most 16.) */
static void high_split(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    static const crop_spec crops[] = {
        {"hdr/blender_sunset_1024x512.exr", 600, 300, 29, 19},
        {"hdr/blender_city_1024x512.exr", 700, 100, 25, 17},
        {NULL, 0, 0, 23, 13}, /* synthetic */
    };
    unsetenv("KILN_BC6H_GPU_EXACT");
    unsetenv("KILN_BC6H_HIGH_OPT");
    unsetenv("KILN_BC6H_HIGH_DESIGN");
    unsetenv("KILN_BC6H_HIGH_LANES");
    unsetenv("KILN_BC6H_HIGH_CFG");
    size_t one = 0, two = 0, hipart = 0, ix_lo = 0, ix_hi = 0;
    for (size_t k = 0; k < sizeof crops / sizeof crops[0]; k++)
        for (int sf = 0; sf < 2; sf++) {
            kiln_image img = load_case(fx->cpu, &crops[k], sf);
            const kiln_format fmt = sf ? KILN_FORMAT_BC6H_SFLOAT : KILN_FORMAT_BC6H_UFLOAT;
            const size_t size = kiln_format_image_size(fmt, img.width, img.height);
            uint8_t *ref = malloc(size), *g = malloc(size);
            assert_true(ref && g);
            kiln_encode_params p;
            kiln_encode_params_init(&p, fmt, KILN_QUALITY_HIGH);
            p.gpu_strategy = 0;
            /* settings: the default; small batches; OPT bit 10 (NE2, both kernels and the one kernel: against the
             * one-kernel default); (first crop, UF16) R = 4 (2 lanes per job, 8 texels each) and 16 lanes (8 lanes per job,
             * 2 texels each; the default: 4 lanes per job), kernel B with 8 blocks per workgroup (KILN_BC6H_HIGH_BPW_B; the
             * default is 4 since helper bc6hm, 2026-11-27) */
            static const char *cfgs[] = {NULL, NULL, NULL, "4,4,3,4", NULL, NULL};
            static const char *lanes[] = {NULL, NULL, NULL, NULL, "16", NULL};
            const int nset = k == 0 && !sf ? 6 : kt_gpu_light() ? 1 : 3; /* light run: the other crops at the default */
            for (int si = 0; si < nset; si++) {
                if (si == 2 && sf && !full_matrix()) continue; /* NE2 in SF16: KILN_TEST_BC6H_FULL (see full_matrix) */
                char batch[32];
                snprintf(batch, sizeof batch, "%zu", (size_t)img.width * 16 * 4 * 2); /* 2 block rows per batch */
                if (cfgs[si]) setenv("KILN_BC6H_HIGH_CFG", cfgs[si], 1);
                if (lanes[si]) {
                    setenv("KILN_BC6H_HIGH_DESIGN", "lanes", 1);
                    setenv("KILN_BC6H_HIGH_LANES", lanes[si], 1);
                }
                setenv("KILN_BC6H_HIGH_SPLIT", "0", 1);
                memset(ref, 0x5A, size);
                kiln_status st = kiln__gpu_encode(fx->gpu, &img, &p, 0, ref, size);
                if (st != KILN_OK) fail_msg("one kernel: %s", kiln_last_error(fx->gpu));
                setenv("KILN_BC6H_HIGH_SPLIT", "1", 1);
                if (si == 1) setenv("KILN_GPU_BATCH_BYTES", batch, 1);
                if (si == 2) setenv("KILN_BC6H_HIGH_OPT", "1031", 1);
                if (si == 5) setenv("KILN_BC6H_HIGH_BPW_B", "8", 1);
                memset(g, 0xA5, size);
                st = kiln__gpu_encode(fx->gpu, &img, &p, 0, g, size);
                unsetenv("KILN_GPU_BATCH_BYTES");
                if (si == 2 && st == KILN_OK) { /* NE2 in the one kernel too */
                    uint8_t *g1 = malloc(size);
                    assert_non_null(g1);
                    setenv("KILN_BC6H_HIGH_SPLIT", "0", 1);
                    st = kiln__gpu_encode(fx->gpu, &img, &p, 0, g1, size);
                    if (st == KILN_OK && memcmp(g1, ref, size) != 0)
                        fail_msg("%s %s: one kernel with KILN_BC6H_HIGH_OPT=1031 differs from the default",
                                 crops[k].file ? crops[k].file : "synthetic", sf ? "SF16" : "UF16");
                    free(g1);
                }
                unsetenv("KILN_BC6H_HIGH_OPT");
                unsetenv("KILN_BC6H_HIGH_BPW_B");
                unsetenv("KILN_BC6H_HIGH_SPLIT");
                unsetenv("KILN_BC6H_HIGH_CFG");
                unsetenv("KILN_BC6H_HIGH_DESIGN");
                unsetenv("KILN_BC6H_HIGH_LANES");
                if (st != KILN_OK) fail_msg("two kernels: %s", kiln_last_error(fx->gpu));
                size_t diff = 0;
                for (size_t i = 0; i < size; i += 16) diff += memcmp(g + i, ref + i, 16) != 0;
                if (diff)
                    fail_msg("%s %s %ux%u, setting %d (cfg %s, lanes %s): %zu of %zu blocks of the two kernels differ from one kernel's",
                             crops[k].file ? crops[k].file : "synthetic", sf ? "SF16" : "UF16", img.width, img.height, si,
                             cfgs[si] ? cfgs[si] : "default", lanes[si] ? lanes[si] : "8", diff, size / 16);
                if (si) continue;
                for (size_t i = 0; i < size; i += 16) { /* what the default's blocks exercise of the hand-off */
                    kiln_bc6h_info info;
                    assert_true(kiln__bc6h_unpack(g + i, sf, &info) > 0);
                    if (info.subsets == 2) two++, hipart += info.partition >= 16;
                    else one++;
                    /* the index bits: texels 0-7 in bytes 8.. (after the header), 8-15 in the last bytes */
                    ix_lo += g[i + 11] != 0;
                    ix_hi += g[i + 15] != 0;
                }
            }
            free(ref);
            free(g);
            kiln_image_free(&img);
        }
    print_message("two kernels: the same bytes as one; blocks one-subset %zu, two-subset %zu (partition >= 16: %zu), "
                  "index bytes %zu / %zu\n", one, two, hipart, ix_lo, ix_hi);
    assert_true(one > 0 && two > 0 && hipart > 0 && ix_lo > 0 && ix_hi > 0);
    {
        kiln_image img = synthetic(fx->cpu, 8, 8);
        uint8_t blk[64];
        kiln_encode_params p;
        kiln_encode_params_init(&p, KILN_FORMAT_BC6H_UFLOAT, KILN_QUALITY_HIGH);
        p.gpu_strategy = 0;
        setenv("KILN_BC6H_HIGH_SPLIT", "2", 1);
        assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &p, 0, blk, sizeof blk), KILN_ERR_INVALID_ARGUMENT);
        setenv("KILN_BC6H_HIGH_SPLIT", "1", 1);
        setenv("KILN_BC6H_HIGH_BPW_B", "3", 1);
        assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &p, 0, blk, sizeof blk), KILN_ERR_INVALID_ARGUMENT);
        unsetenv("KILN_BC6H_HIGH_BPW_B");
        setenv("KILN_BC6H_HIGH_STOP", "3", 1);
        assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &p, 0, blk, sizeof blk), KILN_ERR_INVALID_ARGUMENT);
        unsetenv("KILN_BC6H_HIGH_STOP");
        kiln_image_free(&img);
    }
    unsetenv("KILN_BC6H_HIGH_SPLIT");
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

/* helper bc6hfast (2026-11-26): OPT bit 11 (AROLL: the exact index choice's texel loop rolled) gives the default's
 * bytes, in two kernels (against the two-kernel default) and in one (against the one-kernel default), and so does
 * kernel A at 16 lanes per block (KILN_BC6H_HIGH_AWIDE=1, the default since 2026-11-26; also with OPT 3143 = LINE + NE2 +
 * AROLL, the plain kernel A), at 32 (=2) and at 8 (=0, the former default); the former default (plain shaders,
 * KILN_BC6H_HIGH_LEANSH=0, OPT 4103 / 5127); (KILN_BC6H_HIGH_TRIM / _AUNROLL lost on the H100: removed, helper bc6hk,
 * 2026-11-27); a group
 * past R handing over its records would overwrite the next block's); the profiling
 * aid KILN_BC6H_HIGH_PROF: "abb" and "aab" (a kernel run twice) give the default's bytes, "a" (kernel A alone) writes
 * no block, so its output is not the default's (a sequence without kernel B is really dispatched without it); bad
 * sequences are KILN_ERR_INVALID_ARGUMENT. Crops of an HDR image and the synthetic image, UF16 and SF16 (negated
 * texels). */
static void high_prof_aroll(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    static const crop_spec crops[] = {
        {"hdr/blender_sunset_1024x512.exr", 600, 300, 29, 19},
        {NULL, 0, 0, 23, 13}, /* synthetic */
    };
    unsetenv("KILN_BC6H_GPU_EXACT");
    unsetenv("KILN_BC6H_HIGH_OPT");
    unsetenv("KILN_BC6H_HIGH_DESIGN");
    unsetenv("KILN_BC6H_HIGH_LANES");
    unsetenv("KILN_BC6H_HIGH_CFG");
    unsetenv("KILN_BC6H_HIGH_PROF");
    for (size_t k = 0; k < sizeof crops / sizeof crops[0]; k++)
        for (int sf = 0; sf < 2; sf++) {
            kiln_image img = load_case(fx->cpu, &crops[k], sf);
            const kiln_format fmt = sf ? KILN_FORMAT_BC6H_SFLOAT : KILN_FORMAT_BC6H_UFLOAT;
            const size_t size = kiln_format_image_size(fmt, img.width, img.height);
            uint8_t *ref = malloc(size), *ref1 = malloc(size), *g = malloc(size);
            assert_true(ref && ref1 && g);
            kiln_encode_params p;
            kiln_encode_params_init(&p, fmt, KILN_QUALITY_HIGH);
            p.gpu_strategy = 0;
            const char *name = crops[k].file ? crops[k].file : "synthetic", *fname = sf ? "SF16" : "UF16";
            setenv("KILN_BC6H_HIGH_SPLIT", "1", 1);
            memset(ref, 0x5A, size);
            if (kiln__gpu_encode(fx->gpu, &img, &p, 0, ref, size) != KILN_OK) fail_msg("two kernels: %s", kiln_last_error(fx->gpu));
            setenv("KILN_BC6H_HIGH_SPLIT", "0", 1);
            memset(ref1, 0x5B, size);
            if (kiln__gpu_encode(fx->gpu, &img, &p, 0, ref1, size) != KILN_OK) fail_msg("one kernel: %s", kiln_last_error(fx->gpu));
            if (memcmp(ref, ref1, size) != 0) fail_msg("%s %s: two kernels differ from one", name, fname);
            /* settings: split, OPT, PROF; 1: must equal the default */
            /* trim "Ln": KILN_BC6H_HIGH_LEANSH=n (helper bc6hk; the field was KILN_BC6H_HIGH_TRIM, removed) */
            static const struct { const char *split, *opt, *prof, *trim, *aunroll, *awide; int same; const char *opt_b; } set[] = {
                {"1", "2055", NULL, NULL, NULL, NULL, 1, NULL}, {"0", "2055", NULL, NULL, NULL, NULL, 1, NULL},
                {"1", NULL, "abb", NULL, NULL, NULL, 1, NULL}, {"1", NULL, "aab", NULL, NULL, NULL, 1, NULL},
                /* helper bc6hk: the former default (plain shaders, KILN_BC6H_HIGH_LEANSH=0, kernel A without bits 13-15) against
                 * the new one (lean shaders, BAL4 + U4 + U4B); TRIM=1 and AUNROLL=1 removed (2026-11-27) */
                {"1", "4103", NULL, "L0", NULL, NULL, 1, "5127"}, {"1", NULL, NULL, NULL, NULL, "1", 1, NULL},
                {"1", "3143", NULL, NULL, NULL, "1", 1, NULL}, {"1", NULL, NULL, NULL, NULL, "0", 1, NULL},
                {"1", NULL, NULL, NULL, NULL, "2", 1, NULL}, {"1", NULL, "a", NULL, NULL, NULL, 0, NULL},
                /* helper bc6hhigh: kernel B's lean bits (KILN_BC6H_HIGH_OPT_B; on the H100 3087 gave other SF16 bytes, so
                 * UF16), kernel A at 20 lanes (AWIDE=3, with MERGE3 as the default) */
                {"1", NULL, NULL, NULL, NULL, NULL, 1, "3087"}, {"1", NULL, NULL, NULL, NULL, "3", 1, NULL},
            };
            for (size_t si = 0; si < sizeof set / sizeof set[0]; si++) {
                if (!set[si].same && (k || sf)) continue; /* kernel A alone: once */
                /* kernel B with OPT 3087 (REFSH + NE2 + AROLL): other SF16 bytes on the NVIDIA H100 (2026-11-26), like
                 * RECOMP: UF16 only */
                if (sf && set[si].opt_b && strcmp(set[si].opt_b, "3087") == 0) continue;
                /* SF16: the default's own settings (PROF, AWIDE=1) unless KILN_TEST_BC6H_FULL */
                if (sf && !full_matrix() &&
                    (set[si].opt || set[si].trim || set[si].aunroll || set[si].opt_b || strcmp(set[si].split, "1") != 0 ||
                     (set[si].awide && strcmp(set[si].awide, "1") != 0)))
                    continue;
                setenv("KILN_BC6H_HIGH_SPLIT", set[si].split, 1);
                if (set[si].opt) setenv("KILN_BC6H_HIGH_OPT", set[si].opt, 1);
                if (set[si].prof) setenv("KILN_BC6H_HIGH_PROF", set[si].prof, 1);
                if (set[si].trim) setenv("KILN_BC6H_HIGH_LEANSH", set[si].trim + 1, 1);
                if (set[si].awide) setenv("KILN_BC6H_HIGH_AWIDE", set[si].awide, 1);
                if (set[si].opt_b) setenv("KILN_BC6H_HIGH_OPT_B", set[si].opt_b, 1);
                memset(g, 0xA5, size);
                kiln_status st = kiln__gpu_encode(fx->gpu, &img, &p, 0, g, size);
                unsetenv("KILN_BC6H_HIGH_OPT");
                unsetenv("KILN_BC6H_HIGH_OPT_B");
                unsetenv("KILN_BC6H_HIGH_PROF");
                unsetenv("KILN_BC6H_HIGH_AWIDE");
                unsetenv("KILN_BC6H_HIGH_LEANSH");
                if (st != KILN_OK) fail_msg("setting %zu: %s", si, kiln_last_error(fx->gpu));
                size_t diff = 0;
                for (size_t i = 0; i < size; i += 16) diff += memcmp(g + i, ref + i, 16) != 0;
                if (set[si].same && diff)
                    fail_msg("%s %s: split %s, OPT %s, OPT_B %s, PROF %s, LEANSH %s: %zu of %zu blocks differ from the default", name,
                             fname, set[si].split, set[si].opt ? set[si].opt : "-", set[si].opt_b ? set[si].opt_b : "-",
                             set[si].prof ? set[si].prof : "-", set[si].trim ? set[si].trim : "-", diff, size / 16);
                if (!set[si].same && diff == 0) fail_msg("%s %s: PROF %s gave the default's blocks", name, fname, set[si].prof);
            }
            free(ref);
            free(ref1);
            free(g);
            kiln_image_free(&img);
        }
    {
        kiln_image img = synthetic(fx->cpu, 8, 8);
        uint8_t blk[64];
        kiln_encode_params p;
        kiln_encode_params_init(&p, KILN_FORMAT_BC6H_UFLOAT, KILN_QUALITY_HIGH);
        p.gpu_strategy = 0;
        setenv("KILN_BC6H_HIGH_SPLIT", "1", 1);
        static const char *bad[] = {"ba", "abbbb", "x", "ac"};
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            setenv("KILN_BC6H_HIGH_PROF", bad[i], 1);
            if (kiln__gpu_encode(fx->gpu, &img, &p, 0, blk, sizeof blk) != KILN_ERR_INVALID_ARGUMENT)
                fail_msg("KILN_BC6H_HIGH_PROF=%s: not refused", bad[i]);
        }
        unsetenv("KILN_BC6H_HIGH_PROF");
        setenv("KILN_BC6H_HIGH_LEANSH", "4", 1);
        if (kiln__gpu_encode(fx->gpu, &img, &p, 0, blk, sizeof blk) != KILN_ERR_INVALID_ARGUMENT) fail_msg("KILN_BC6H_HIGH_LEANSH=4: not refused");
        unsetenv("KILN_BC6H_HIGH_LEANSH");
        setenv("KILN_BC6H_HIGH_OPT_B", "262144", 1);
        if (kiln__gpu_encode(fx->gpu, &img, &p, 0, blk, sizeof blk) != KILN_ERR_INVALID_ARGUMENT) fail_msg("KILN_BC6H_HIGH_OPT_B=262144: not refused");
        unsetenv("KILN_BC6H_HIGH_OPT_B");
        setenv("KILN_BC6H_HIGH_AWIDE", "1", 1); /* only at 8 lanes */
        setenv("KILN_BC6H_HIGH_LANES", "16", 1);
        setenv("KILN_BC6H_HIGH_DESIGN", "lanes", 1);
        if (kiln__gpu_encode(fx->gpu, &img, &p, 0, blk, sizeof blk) != KILN_ERR_INVALID_ARGUMENT)
            fail_msg("KILN_BC6H_HIGH_AWIDE=1 at 16 lanes: not refused");
        unsetenv("KILN_BC6H_HIGH_LANES");
        unsetenv("KILN_BC6H_HIGH_DESIGN");
        unsetenv("KILN_BC6H_HIGH_AWIDE");
        kiln_image_free(&img);
    }
    unsetenv("KILN_BC6H_HIGH_SPLIT");
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

static void subgroup_sizes_and_batches(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kiln_image img = load_crop(fx->cpu, "hdr/qtcreator_preview_studio_256x128.hdr", 80, 50, 45, 30);
    size_t size = kiln_format_image_size(KILN_FORMAT_BC6H_UFLOAT, img.width, img.height);
    uint8_t *ref = malloc(size), *g = malloc(size);
    assert_non_null(ref);
    assert_non_null(g);
    kiln_encode_params p;
    kiln_encode_params_init(&p, KILN_FORMAT_BC6H_UFLOAT, KILN_QUALITY_NORMAL);
    p.gpu_strategy = 1;
    assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &p, 0, ref, size), KILN_OK);
    /* 2 block rows per batch: 4 submissions for 8 block rows */
    char env[32];
    snprintf(env, sizeof env, "%zu", (size_t)img.width * 16 * 4 * 2);
    setenv("KILN_GPU_BATCH_BYTES", env, 1);
    kiln_status st = kiln__gpu_encode(fx->gpu, &img, &p, 0, g, size);
    unsetenv("KILN_GPU_BATCH_BYTES");
    if (st != KILN_OK) fail_msg("batched: %s", kiln_last_error(fx->gpu));
    assert_memory_equal(g, ref, size);
    uint32_t sizes = kiln__gpu_subgroup_sizes(fx->gpu);
    for (uint32_t sg = 1; sg <= 128; sg <<= 1) {
        if (!(sizes & sg)) continue;
        st = kiln__gpu_encode(fx->gpu, &img, &p, sg, g, size);
        if (st != KILN_OK) fail_msg("subgroup %u: %s", sg, kiln_last_error(fx->gpu));
        assert_memory_equal(g, ref, size);
    }
    if (!sizes) print_message("note: the device cannot require subgroup sizes\n");
    free(ref);
    free(g);
    kiln_image_free(&img);
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

static void unsupported_and_fallback(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kiln_image img = load_crop(fx->cpu, "hdr/qtcreator_preview_studio_256x128.hdr", 0, 0, 9, 7);
    size_t size = kiln_format_image_size(KILN_FORMAT_BC6H_UFLOAT, img.width, img.height);
    uint8_t *g = malloc(size), *c = malloc(size);
    assert_non_null(g);
    assert_non_null(c);
    for (int q = 0; q < 4; q++) { /* every quality has kiln's GPU design; an unknown strategy has none */
        kiln_encode_params p;
        kiln_encode_params_init(&p, KILN_FORMAT_BC6H_UFLOAT, (kiln_quality)q);
        p.gpu_strategy = 7;
        assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &p, 0, g, size), KILN_ERR_UNSUPPORTED);
        assert_non_null(strstr(kiln_last_error(fx->gpu), "GPU"));
    }
    kiln_encode_params p;
    kiln_encode_params_init(&p, KILN_FORMAT_BC6H_SFLOAT, KILN_QUALITY_FAST);
    p.gpu_strategy = 1;
    assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &p, 0, g, size), KILN_ERR_UNSUPPORTED);
    /* AUTO falls back to the CPU: the same bytes as the CPU backend */
    kiln_context *autoctx = kt_context(2, KILN_BACKEND_AUTO);
    assert_non_null(autoctx);
    kiln_encode_params_init(&p, KILN_FORMAT_BC6H_UFLOAT, KILN_QUALITY_NORMAL); /* high on a GPU: GPU-native bytes */
    assert_int_equal(kiln_encode_image(autoctx, &img, &p, g, size), KILN_OK);
    assert_int_equal(kiln_encode_image(fx->cpu, &img, &p, c, size), KILN_OK);
    assert_memory_equal(g, c, size);
    kiln_context_free(autoctx);
    free(g);
    free(c);
    kiln_image_free(&img);
    assert_int_equal(kt_gpu_validation_messages(fx->gpu), 0);
}

/* KILN_VK_PIPELINE_STATS=1 (VK_KHR_pipeline_executable_properties): without it (the fixture's device)
 * kiln_vk_pipeline_stats is KILN_ERR_UNSUPPORTED with a message; with it, on a device that offers the
 * extension, every pipeline of a high encode (enc_bc6h_hl) reports statistics that name the shader (and
 * the encode's bytes are those of the device without it); skipped where the extension is absent (lavapipe,
 * Mesa 22.3) */
static void pipeline_stats(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kiln_image img = load_crop(fx->cpu, "hdr/qtcreator_preview_studio_256x128.hdr", 0, 0, 9, 7);
    size_t size = kiln_format_image_size(KILN_FORMAT_BC6H_UFLOAT, img.width, img.height);
    uint8_t *g = malloc(size), *g2 = malloc(size);
    assert_non_null(g);
    assert_non_null(g2);
    kiln_encode_params p;
    kiln_encode_params_init(&p, KILN_FORMAT_BC6H_UFLOAT, KILN_QUALITY_HIGH);
    assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &p, 0, g, size), KILN_OK);
    kiln_gpu *gpu = NULL;
    assert_int_equal(kiln__gpu_get(fx->gpu, &gpu), KILN_OK);
    char text[4096];
    uint32_t n = 7;
    if (!gpu->exec_stats) { /* the fixture's device was created without KILN_VK_PIPELINE_STATS=1 */
        assert_true(gpu->npipelines > 0);
        assert_int_equal(kiln_vk_pipeline_stats(fx->gpu, gpu, &gpu->pipelines[0], text, sizeof text, &n), KILN_ERR_UNSUPPORTED);
        assert_int_equal(n, 0);
        assert_non_null(strstr(kiln_last_error(fx->gpu), "KILN_VK_PIPELINE_STATS"));
    }
    /* the variable is read when the device is created (kiln__gpu_get), not with the context */
    setenv("KILN_VK_PIPELINE_STATS", "1", 1);
    kiln_context *ctx = kt_context(1, KILN_BACKEND_VULKAN);
    kiln_gpu *sg = NULL;
    kiln_status gs = ctx ? kiln__gpu_get(ctx, &sg) : KILN_ERR_GPU;
    unsetenv("KILN_VK_PIPELINE_STATS");
    assert_non_null(ctx);
    if (gs != KILN_OK) fail_msg("device: %s", kiln_last_error(ctx));
    int skipped = !sg->exec_stats;
    if (skipped)
        print_message("note: %s does not offer VK_KHR_pipeline_executable_properties: no statistics\n", sg->props.deviceName);
    else {
        assert_int_equal(kiln__gpu_encode(ctx, &img, &p, 0, g2, size), KILN_OK);
        assert_memory_equal(g, g2, size);
        assert_true(sg->npipelines > 0);
        for (uint32_t i = 0; i < sg->npipelines; i++) {
            kiln_status st = kiln_vk_pipeline_stats(ctx, sg, &sg->pipelines[i], text, sizeof text, &n);
            if (st != KILN_OK) fail_msg("%s: %s", sg->pipelines[i].shader, kiln_last_error(ctx));
            print_message("%s: %u statistics\n%s", sg->pipelines[i].shader, n, text);
            assert_true(n > 0);
            assert_non_null(strstr(text, sg->pipelines[i].shader));
            /* a short buffer is truncated and terminated */
            char small[16];
            memset(small, 'x', sizeof small);
            assert_int_equal(kiln_vk_pipeline_stats(ctx, sg, &sg->pipelines[i], small, sizeof small, &n), KILN_OK);
            assert_true(strlen(small) < sizeof small);
        }
    }
    assert_int_equal(kiln__gpu_validation_messages(ctx), 0);
    kiln_context_free(ctx);
    free(g);
    free(g2);
    kiln_image_free(&img);
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
    if (skipped) skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pipeline_stats), /* first: cheap, and its output is wanted on devices with statistics */
        cmocka_unit_test(seed_matches_cpu_model),
        cmocka_unit_test(kiln_fast_matches_cpu),
        cmocka_unit_test(kiln_quality_matches_cpu),
        cmocka_unit_test(kiln_high_native),
        cmocka_unit_test(kiln_high_lanes),
        cmocka_unit_test(high_opt_variants),
        cmocka_unit_test(high_split),
        cmocka_unit_test(high_prof_aroll),
        cmocka_unit_test(subgroup_sizes_and_batches),
        cmocka_unit_test(unsupported_and_fallback),
    };
    /* KILN_TEST_FILTER=pattern: only the matching tests (cmocka's filter; development aid) */
    const char *filter = getenv("KILN_TEST_FILTER");
    if (filter && *filter) cmocka_set_test_filter(filter);
    return cmocka_run_group_tests(tests, kt_gpu_setup, kt_gpu_teardown);
}

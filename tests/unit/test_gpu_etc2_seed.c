/* test_gpu_etc2_seed.c - the ETC2 colour seed design on the GPU (betsy; src/gpu/gpu_encode_etc2_seed.c,
 * shaders/enc_etc2_seed_*.comp), gpu_strategy 1 for ETC2 RGB and RGBA:
 *  - quality on crops of real images (../shared/testdata): the decoded PSNR (kiln's CPU decoder) clears a
 *    floor (measured on lavapipe minus 0.5 dB) and stays within a measured gap of the CPU encoder at normal
 *    quality; no block is worse than the ETC1 seed's block for it (the select pass keeps the best of ETC1,
 *    T/H and planar), so the PSNR is at least the ETC1 seed's;
 *  - T, H and planar blocks are chosen where only they fit (synthetic blocks: exact T and H colour sets,
 *    a smooth gradient): the mode bits say so (kiln__etc_mode, the decoder's rule), and the T / H blocks
 *    decode exactly;
 *  - the preload / direct-read specialisation constants give the same bytes, as do every subgroup size
 *    the device lets us require and 16-bit sources; RGBA = the RGB colour in bytes 8..15 + the EAC seed
 *    alpha in bytes 0..7; odd sizes 1x1, 5x3, 13x7, 37x21; the k-means / T/H passes split into chunks give the
 *    same bytes.
 * Runs with the Vulkan validation layer on and asserts it reported nothing. Skipped without a device. */
#include "support.h"
#include "codec/etc_tables.h"
#include "gpu/gpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* gpu_encode_etc.c's test hook: the EAC alpha of ETC2 RGBA alone into bytes 0..7 of each block */
kiln_status kiln__gpu_encode_etc2_alpha(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                                        uint32_t subgroup_size, uint8_t *dst, size_t dst_size);

#define NSRC 3
typedef struct fixture {
    kiln_context *gpu;
    kiln_context *cpu;
    kiln_image src[NSRC];
    int have[NSRC];
} fixture;

static const char *const src_names[NSRC] = {"ldr/stk_generic_rock_a_512.png", "ldr/stktex_directionSign_a_256_rgba.png",
                                            "ldr/Sara_Head_Diff_256_rgba.png"};

static int setup(void **state)
{
    static fixture f;
    memset(&f, 0, sizeof f);
    if (kt_gpu_contexts(&f.gpu, &f.cpu, 2)) return -1;
    if (f.gpu)
        for (int i = 0; i < NSRC; i++)
            f.have[i] = kiln_image_load(f.cpu, kt_testdata(src_names[i]), &f.src[i]) == KILN_OK && f.src[i].type == KILN_PIXEL_U8;
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < NSRC; i++)
        if (f->have[i]) kiln_image_free(&f->src[i]);
    kiln_context_free(f->gpu);
    kiln_context_free(f->cpu);
    return 0;
}

/* A w x h RGBA8 (or RGBA16) crop of src at (ox, oy), wrapping. */
static void crop(fixture *fx, kiln_image *img, kiln_pixel_type type, uint32_t w, uint32_t h, const kiln_image *src,
                 uint32_t ox, uint32_t oy)
{
    assert_int_equal(kiln_image_alloc(fx->cpu, img, w, h, type), KILN_OK);
    img->channels = 4;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            for (int c = 0; c < 4; c++) {
                uint32_t v8 = ((const uint8_t *)src->pixels)[(((size_t)(oy + y) % src->height) * src->width + (ox + x) % src->width) * 4 + (size_t)c];
                size_t i = ((size_t)y * w + x) * 4 + (size_t)c;
                if (type == KILN_PIXEL_U8) ((uint8_t *)img->pixels)[i] = (uint8_t)v8;
                else ((uint16_t *)img->pixels)[i] = (uint16_t)(v8 * 257u);
            }
}

/* Squared RGB error of each block (bx x by blocks, edge texels outside the image not counted) of the decoded
 * blocks against img (8-bit); returns the image's PSNR. per_block may be NULL. */
static double rgb_psnr_blocks(fixture *fx, const kiln_image *img, kiln_format f, const uint8_t *blocks, double *per_block)
{
    kiln_texture tex;
    memset(&tex, 0, sizeof tex);
    size_t size = kiln_format_image_size(f, img->width, img->height);
    assert_int_equal(kiln_texture_alloc(fx->cpu, &tex, f, img->width, img->height, 1, 1, 1), KILN_OK);
    size_t have = 0;
    uint8_t *level = kiln_texture_image(&tex, 0, 0, 0, &have);
    assert_non_null(level);
    assert_true(have == size);
    memcpy(level, blocks, size);
    kiln_image dec;
    assert_int_equal(kiln_decode(fx->cpu, &tex, 0, 0, 0, &dec), KILN_OK);
    assert_int_equal(dec.type, KILN_PIXEL_U8);
    const uint32_t bx = (img->width + 3) / 4;
    double se = 0.0;
    if (per_block) memset(per_block, 0, sizeof(double) * bx * ((img->height + 3) / 4));
    for (uint32_t y = 0; y < img->height; y++)
        for (uint32_t x = 0; x < img->width; x++)
            for (size_t c = 0; c < 3; c++) {
                size_t i = ((size_t)y * img->width + x) * 4 + c;
                double d = (double)((const uint8_t *)img->pixels)[i] - ((const uint8_t *)dec.pixels)[i];
                se += d * d;
                if (per_block) per_block[(y / 4) * bx + x / 4] += d * d;
            }
    kiln_image_free(&dec);
    kiln_texture_free(&tex);
    double mse = se / ((double)img->width * img->height * 3.0);
    return mse > 0 ? 10.0 * log10(255.0 * 255.0 / mse) : 99.0;
}

static uint8_t *encode_raw(fixture *fx, kiln_context *ctx, const kiln_image *img, kiln_format f, kiln_quality q, int strategy,
                           uint32_t sg)
{
    kiln_encode_params ep;
    kiln_encode_params_init(&ep, f, q);
    ep.gpu_strategy = strategy;
    size_t size = kiln_format_image_size(f, img->width, img->height);
    uint8_t *o = malloc(size);
    assert_non_null(o);
    memset(o, 0xAB, size);
    kiln_status st = ctx == fx->gpu ? kiln__gpu_encode(ctx, img, &ep, sg, o, size) : kiln_encode_image(ctx, img, &ep, o, size);
    if (st != KILN_OK)
        fail_msg("%s %s strategy %d q%d %ux%u: %s", ctx == fx->gpu ? "GPU" : "CPU", kiln_format_get_info(f)->name, strategy,
                 (int)q, img->width, img->height, kiln_last_error(ctx));
    return o;
}

/* PSNR floors per image: measured on lavapipe (Mesa 22.3, 2026-11-25; the design is integer-exact, so any device
 * gives these bytes) minus 0.5 dB: rock 36.358, sign 35.154, Sara 44.959 dB; the gap to the CPU encoder at normal
 * quality (CPU - seed) as measured plus 0.5 dB: 0.007, 1.046, -1.375 dB (the seed is better on Sara's smooth
 * skin: planar). */
#define QW 96 /* the quality crops: QW x QW */
static const double seed_floor[NSRC] = {35.85, 34.65, 44.45};
static const double seed_gap[NSRC] = {0.51, 1.55, -0.87};

static void etc2_seed_quality(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    unsigned modes[5] = {0, 0, 0, 0, 0};
    int ran = 0;
    for (int s = 0; s < NSRC; s++) {
        if (!fx->have[s]) continue;
        ran++;
        kiln_image img;
        crop(fx, &img, KILN_PIXEL_U8, QW, QW, &fx->src[s], fx->src[s].width / 3, fx->src[s].height / 3);
        const kiln_format f = KILN_FORMAT_ETC2_RGB8_UNORM;
        uint8_t *g = encode_raw(fx, fx->gpu, &img, f, KILN_QUALITY_NORMAL, 1, 0);
        uint8_t *e1 = encode_raw(fx, fx->gpu, &img, KILN_FORMAT_ETC1_UNORM, KILN_QUALITY_NORMAL, 1, 0);
        uint8_t *c = encode_raw(fx, fx->cpu, &img, f, KILN_QUALITY_NORMAL, 0, 0);
        const size_t nb = (QW / 4) * (QW / 4);
        double eg[(QW / 4) * (QW / 4)], ee[(QW / 4) * (QW / 4)];
        double pg = rgb_psnr_blocks(fx, &img, f, g, eg), pe = rgb_psnr_blocks(fx, &img, KILN_FORMAT_ETC1_UNORM, e1, ee);
        double pc = rgb_psnr_blocks(fx, &img, f, c, NULL);
        for (size_t b = 0; b < nb; b++) {
            if (eg[b] > ee[b]) fail_msg("%s block %zu: ETC2 seed error %.0f above the ETC1 seed's %.0f", src_names[s], b, eg[b], ee[b]);
            modes[kiln__etc_mode(g + b * 8, 0)]++;
        }
        print_message("%s %dx%d normal: ETC2 seed %.3f dB, ETC1 seed %.3f dB, CPU ETC2 %.3f dB (gap %.3f dB)\n", src_names[s], QW, QW, pg,
                      pe, pc, pc - pg);
        if (!(pg >= seed_floor[s])) fail_msg("%s: seed PSNR %.2f dB below the floor %.2f", src_names[s], pg, seed_floor[s]);
        if (!(pg >= pc - seed_gap[s])) fail_msg("%s: seed %.2f dB, CPU %.2f dB: gap above %.2f", src_names[s], pg, pc, seed_gap[s]);
        if (!(pg >= pe)) fail_msg("%s: ETC2 seed %.2f dB below the ETC1 seed %.2f", src_names[s], pg, pe);
        free(g);
        free(e1);
        free(c);
        kiln_image_free(&img);
    }
    if (!ran) skip();
    print_message("modes chosen: individual %u, differential %u, T %u, H %u, planar %u\n", modes[KILN_ETC_MODE_INDIVIDUAL],
                  modes[KILN_ETC_MODE_DIFFERENTIAL], modes[KILN_ETC_MODE_T], modes[KILN_ETC_MODE_H], modes[KILN_ETC_MODE_PLANAR]);
    assert_int_equal(kt_gpu_validation_messages(fx->gpu), 0);
}

/* Synthetic blocks that need T, H and planar: 5 blocks side by side (20x4), then the same in a 21x5 image
 * (odd size: a partial block column and row, edge-replicated). */
static void put(kiln_image *img, uint32_t x, uint32_t y, int r, int g, int b)
{
    uint8_t *p = (uint8_t *)img->pixels + ((size_t)y * img->width + x) * 4;
    p[0] = (uint8_t)r;
    p[1] = (uint8_t)g;
    p[2] = (uint8_t)b;
    p[3] = 255;
}

static void synth(fixture *fx, kiln_image *img, uint32_t w, uint32_t h)
{
    assert_int_equal(kiln_image_alloc(fx->cpu, img, w, h, KILN_PIXEL_U8), KILN_OK);
    img->channels = 4;
    memset(img->pixels, 128, (size_t)w * h * 4);
    /* T: one colour (204, 34, 34) and (68, 68, 170) + {32, 0, -32} (4-bit levels, distance index 5 = 32),
     * scattered so that no ETC1 half sees fewer than 3 hues; H: (204, 34, 34) +-32 and (68, 68, 170) +-32 */
    static const int tcol[4][3] = {{204, 34, 34}, {100, 100, 202}, {68, 68, 170}, {36, 36, 138}};
    static const int hcol[4][3] = {{236, 66, 66}, {172, 2, 2}, {100, 100, 202}, {36, 36, 138}};
    /* H with an even distance index (4 = 23): the colours must be stored the other way round */
    static const int hcol2[4][3] = {{227, 57, 57}, {181, 11, 11}, {91, 91, 193}, {45, 45, 147}};
    static const uint8_t pat[16] = {0, 1, 2, 3, 2, 3, 0, 1, 1, 0, 3, 2, 3, 2, 1, 0};
    for (uint32_t y = 0; y < 4; y++)
        for (uint32_t x = 0; x < 4; x++) {
            const int k = pat[y * 4 + x];
            put(img, x, y, tcol[k][0], tcol[k][1], tcol[k][2]);
            put(img, 4 + x, y, hcol[k][0], hcol[k][1], hcol[k][2]);
            /* planar: a smooth gradient with different slopes per channel */
            put(img, 8 + x, y, 20 + 37 * (int)x, 200 - 13 * (int)y, 60 + 21 * (int)x + 29 * (int)y);
            /* a flat block (any mode) */
            put(img, 12 + x, y, 90, 140, 30);
            put(img, 16 + x, y, hcol2[k][0], hcol2[k][1], hcol2[k][2]);
        }
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            if (x >= 20 || y >= 4) memcpy((uint8_t *)img->pixels + ((size_t)y * w + x) * 4, (uint8_t *)img->pixels + ((size_t)(y % 4) * w + x % 20) * 4, 4);
}

static void etc2_seed_modes(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    static const uint32_t sizes[2][2] = {{20, 4}, {21, 5}};
    for (int k = 0; k < 2; k++) {
        kiln_image img;
        synth(fx, &img, sizes[k][0], sizes[k][1]);
        for (int pl = 1; pl >= 0; pl--) {
            setenv("KILN_GPU_ETC_PRELOAD", pl ? "1" : "0", 1);
            uint8_t *g = encode_raw(fx, fx->gpu, &img, KILN_FORMAT_ETC2_RGB8_UNORM, KILN_QUALITY_NORMAL, 1, 0);
            const kiln_etc_mode want[5] = {KILN_ETC_MODE_T, KILN_ETC_MODE_H, KILN_ETC_MODE_PLANAR, KILN_ETC_MODE_INDIVIDUAL, KILN_ETC_MODE_H};
            for (int b = 0; b < 5; b++) {
                if (b == 3) continue;
                kiln_etc_mode m = kiln__etc_mode(g + b * 8, 0);
                if (m != want[b]) fail_msg("%ux%u block %d: mode %d, want %d (preload %d)", img.width, img.height, b, (int)m, (int)want[b], pl);
            }
            double eb[6 * 2];
            rgb_psnr_blocks(fx, &img, KILN_FORMAT_ETC2_RGB8_UNORM, g, eb);
            if (eb[0] != 0.0 || eb[1] != 0.0 || eb[4] != 0.0)
                fail_msg("%ux%u: T / H blocks do not decode exactly (errors %.0f, %.0f, %.0f)", img.width, img.height, eb[0], eb[1], eb[4]);
            /* the gradient: planar fits it to a few units per texel */
            if (!(eb[2] <= 16 * 3 * 9.0)) fail_msg("%ux%u: planar block error %.0f", img.width, img.height, eb[2]);
            /* a flat colour no mode holds exactly: within 2 units per channel */
            if (!(eb[3] <= 16 * 3 * 4.0)) fail_msg("%ux%u: flat block error %.0f", img.width, img.height, eb[3]);
            free(g);
        }
        kiln_image_free(&img);
    }
    unsetenv("KILN_GPU_ETC_PRELOAD");
    assert_int_equal(kt_gpu_validation_messages(fx->gpu), 0);
}

/* Same bytes with preload on / off, every subgroup size, 16-bit sources; RGBA = RGB colour + EAC seed alpha. */
static void etc2_seed_variants(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    const kiln_image *src = fx->have[1] ? &fx->src[1] : fx->have[0] ? &fx->src[0] : NULL;
    if (!src) skip();
    static const uint32_t sizes[][2] = {{1, 1}, {5, 3}, {13, 7}, {37, 21}};
    uint32_t sgs = kiln__gpu_subgroup_sizes(fx->gpu);
    if (!sgs) print_message("note: the device cannot require subgroup sizes\n");
    unsigned sg_checked = 0;
    for (size_t k = 0; k < 4; k++) {
        kiln_image img, img16;
        crop(fx, &img, KILN_PIXEL_U8, sizes[k][0], sizes[k][1], src, 100, 30);
        crop(fx, &img16, KILN_PIXEL_U16, sizes[k][0], sizes[k][1], src, 100, 30);
        const kiln_quality q = k == 3 ? KILN_QUALITY_HIGH : KILN_QUALITY_NORMAL;
        const kiln_format f = KILN_FORMAT_ETC2_RGB8_UNORM, fa = KILN_FORMAT_ETC2_RGBA8_UNORM;
        const size_t size = kiln_format_image_size(f, img.width, img.height), nb = size / 8;
        setenv("KILN_GPU_ETC_PRELOAD", "1", 1);
        uint8_t *ref = encode_raw(fx, fx->gpu, &img, f, q, 1, 0);
        double p = rgb_psnr_blocks(fx, &img, f, ref, NULL);
        if (!(p >= 20.0)) fail_msg("ETC2 seed %ux%u: PSNR %.2f", img.width, img.height, p);
        for (uint32_t sg = 1; sg <= 128; sg <<= 1) {
            if (!(sgs & sg)) continue;
            /* sizes too small for 960 invocations (lavapipe: 8 x 32 subgroups) are refused, with a message */
            kiln_encode_params ep;
            kiln_encode_params_init(&ep, f, q);
            ep.gpu_strategy = 1;
            uint8_t *o = malloc(size);
            assert_non_null(o);
            kiln_status st = kiln__gpu_encode(fx->gpu, &img, &ep, sg, o, size);
            if (st == KILN_ERR_UNSUPPORTED && strstr(kiln_last_error(fx->gpu), "subgroups of")) {
                if (k == 0) print_message("subgroup size %u: %s\n", sg, kiln_last_error(fx->gpu));
            } else if (st != KILN_OK || memcmp(o, ref, size)) {
                fail_msg("ETC2 seed %ux%u: subgroup size %u differs (%s)", img.width, img.height, sg, kiln_last_error(fx->gpu));
            } else {
                sg_checked++;
            }
            free(o);
        }
        uint8_t *o16 = encode_raw(fx, fx->gpu, &img16, f, q, 1, 0);
        if (memcmp(o16, ref, size)) fail_msg("ETC2 seed %ux%u: the 16-bit source differs", img.width, img.height);
        free(o16);
        /* RGBA: colour = the RGB bytes, alpha = the EAC seed's */
        uint8_t *rgba = encode_raw(fx, fx->gpu, &img, fa, q, 1, 0);
        uint8_t *alpha = malloc(nb * 16);
        assert_non_null(alpha);
        memset(alpha, 0, nb * 16);
        kiln_encode_params ep;
        kiln_encode_params_init(&ep, fa, q);
        ep.gpu_strategy = 1;
        assert_int_equal(kiln__gpu_encode_etc2_alpha(fx->gpu, &img, &ep, 0, alpha, nb * 16), KILN_OK);
        for (size_t b = 0; b < nb; b++)
            if (memcmp(rgba + b * 16 + 8, ref + b * 8, 8) || memcmp(rgba + b * 16, alpha + b * 16, 8))
                fail_msg("ETC2 RGBA seed %ux%u block %zu: not the RGB colour + the EAC seed alpha", img.width, img.height, b);
        free(alpha);
        /* direct reads */
        setenv("KILN_GPU_ETC_PRELOAD", "0", 1);
        uint8_t *d = encode_raw(fx, fx->gpu, &img, f, q, 1, 0);
        if (memcmp(d, ref, size)) fail_msg("ETC2 seed %ux%u: direct reads differ from preload", img.width, img.height);
        uint8_t *da = encode_raw(fx, fx->gpu, &img, fa, q, 1, 0);
        if (memcmp(da, rgba, nb * 16)) fail_msg("ETC2 RGBA seed %ux%u: direct reads differ from preload", img.width, img.height);
        /* the k-means / T/H passes in chunks of 7 blocks (the 65536 of big images, scaled down) */
        setenv("KILN_GPU_ETC_PRELOAD", "1", 1);
        setenv("KILN_GPU_ETC2_SEED_CHUNK", "7", 1);
        uint8_t *ch = encode_raw(fx, fx->gpu, &img, f, q, 1, 0);
        unsetenv("KILN_GPU_ETC2_SEED_CHUNK");
        if (memcmp(ch, ref, size)) fail_msg("ETC2 seed %ux%u: chunks of 7 blocks differ", img.width, img.height);
        free(ch);
        free(d);
        free(da);
        free(rgba);
        free(ref);
        kiln_image_free(&img);
        kiln_image_free(&img16);
    }
    unsetenv("KILN_GPU_ETC_PRELOAD");
    print_message("required subgroup sizes compared: %u encodes\n", sg_checked);
    assert_int_equal(kt_gpu_validation_messages(fx->gpu), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(etc2_seed_modes),
        cmocka_unit_test(etc2_seed_quality),
        cmocka_unit_test(etc2_seed_variants),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

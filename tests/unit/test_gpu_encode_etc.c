/* test_gpu_encode_etc.c - the GPU encoders of the ETC family (src/gpu/gpu_encode_etc.c, shaders/enc_eac*.comp).
 *  - kiln's EAC design (gpu_strategy 0): the bytes equal the CPU encoder's (src/codec/eac_enc.c) for
 *    R11 / RG11, unsigned and signed, at every quality, on crops of real textures, random pixels, blocks
 *    built to tie (flat and two-valued blocks) and to hit the rounding boundary of the CPU's range
 *    estimate, 8-bit / 16-bit / float sources, odd sizes (1x1, 3x5, 13x7), at every subgroup size the
 *    device lets us require.
 *  - the seed design (gpu_strategy 1, betsy's brute force), with shared-memory preload and with direct
 *    reads: decoded with kiln's decoder, its error against the source equals the error of the CPU's
 *    exact optimum (quality max) and its PSNR clears a floor.
 *  - kiln's ETC1 / ETC2 designs: the CPU's bytes for ETC1 at every quality, ETC2 RGB / RGBA at every quality
 *    and ETC2 RGB A1 at every quality (alpha cut-outs, empty sub-blocks, other alpha thresholds; T / H on
 *    the GPU and on the host).
 *  - with dithering: EAC R11 / RG11 (eac_dither_equals_cpu), ETC1 and ETC2 RGB / RGBA / RGB A1
 *    (etc_dither_equals_cpu): the CPU's bytes; the seed strategy refuses dithering.
 *  - formats without a GPU encoder report KILN_ERR_UNSUPPORTED with a message, and AUTO falls back.
 * Runs with the Vulkan validation layer on (KILN_VK_VALIDATION=1) and asserts it reported nothing.
 * Skipped when there is no Vulkan device (lavapipe counts: the backend is forced to VULKAN). */
#include "support.h"
#include "gpu/gpu.h"
#include "gpu/gpu_mip_encode_etc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fixture {
    kiln_context *gpu;
    kiln_context *cpu;
    kiln_image rock; /* a real texture */
    int have_rock;
} fixture;

static int setup(void **state)
{
    static fixture f;
    memset(&f, 0, sizeof f);
    if (kt_gpu_contexts(&f.gpu, &f.cpu, 1)) return -1;
    if (f.gpu) {
        f.have_rock = kiln_image_load(f.cpu, kt_testdata("ldr/stktex_directionSign_a_256_rgba.png"), &f.rock) == KILN_OK;
    }
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (f->have_rock) kiln_image_free(&f->rock);
    kiln_context_free(f->gpu);
    kiln_context_free(f->cpu);
    return 0;
}

static const kiln_format eac_formats[] = {KILN_FORMAT_EAC_R11_UNORM, KILN_FORMAT_EAC_R11_SNORM, KILN_FORMAT_EAC_RG11_UNORM,
                                          KILN_FORMAT_EAC_RG11_SNORM};

/* A w x h image of the given pixel type: a crop of src at (ox, oy), or (src NULL) pixels from rng. */
static void make_image(fixture *fx, kiln_image *img, kiln_pixel_type type, uint32_t w, uint32_t h, const kiln_image *src,
                       uint32_t ox, uint32_t oy, kt_rng *rng)
{
    assert_int_equal(kiln_image_alloc(fx->cpu, img, w, h, type), KILN_OK);
    img->channels = 4;
    kt_fill_crop(img, src, ox, oy, 0, rng);
}

/* Blocks built for ties and boundaries: per block of a U8 image, one of: flat, two values, two values
 * with min + max = 255 and a small range (the CPU estimate's double rounding boundary for R11), random. */
static void make_crafted(fixture *fx, kiln_image *img, uint32_t w, uint32_t h, kt_rng *rng)
{
    assert_int_equal(kiln_image_alloc(fx->cpu, img, w, h, KILN_PIXEL_U8), KILN_OK);
    img->channels = 4;
    kt_fill_crafted_blocks(img->pixels, w, h, rng);
}

/* GPU (at subgroup size sg, 0 = any) and CPU encodes of img must be the same bytes (perceptual: the
 * perceptual channel weights of the ETC colour encoders). */
static void expect_same_ep(fixture *fx, const kiln_image *img, const kiln_encode_params *epp, uint32_t sg, const char *what)
{
    const kiln_encode_params ep = *epp;
    const kiln_format f = ep.format;
    const kiln_quality q = ep.quality;
    const kiln_format_info *fi = kiln_format_get_info(f);
    size_t size = kiln_format_image_size(f, img->width, img->height);
    uint8_t *g = malloc(size), *c = malloc(size);
    assert_non_null(g);
    assert_non_null(c);
    memset(g, 0xAB, size);
    kiln_status st = kiln__gpu_encode(fx->gpu, img, &ep, sg, g, size);
    if (st != KILN_OK) fail_msg("%s q%d %s %ux%u sg %u: GPU encode failed: %s", fi->name, (int)q, what, img->width, img->height, sg, kiln_last_error(fx->gpu));
    /* memoised: the same CPU reference serves the host T / H run and the required subgroup sizes */
    assert_int_equal(kt_encode_cpu_cached(fx->cpu, img, &ep, c, size), KILN_OK);
    if (memcmp(g, c, size) != 0) {
        size_t i = 0;
        while (g[i] == c[i]) i++;
        size_t blk = i / fi->block_bytes;
        char hg[40] = "", hc[40] = "";
        for (size_t k = 0; k < fi->block_bytes; k++) {
            snprintf(hg + 2 * k, 3, "%02x", g[blk * fi->block_bytes + k]);
            snprintf(hc + 2 * k, 3, "%02x", c[blk * fi->block_bytes + k]);
        }
        free(g);
        free(c);
        fail_msg("%s q%d %s %ux%u sg %u: block %zu differs: GPU %s CPU %s", fi->name, (int)q, what, img->width, img->height, sg, blk, hg, hc);
    }
    free(g);
    free(c);
}

static void expect_same_p(fixture *fx, const kiln_image *img, kiln_format f, kiln_quality q, uint32_t sg, int perceptual,
                          const char *what)
{
    kiln_encode_params ep;
    kiln_encode_params_init(&ep, f, q);
    ep.perceptual = perceptual;
    expect_same_ep(fx, img, &ep, sg, what);
}

static void expect_same(fixture *fx, const kiln_image *img, kiln_format f, kiln_quality q, uint32_t sg, const char *what)
{
    expect_same_p(fx, img, f, q, sg, 0, what);
}

/* Colour blocks for ETC: per block of a U8 image one of flat, near-flat (+-2), near black / near white
 * (clamped palettes), two colours, a gradient, random. */
static void make_etc_blocks(fixture *fx, kiln_image *img, uint32_t w, uint32_t h, kt_rng *rng)
{
    assert_int_equal(kiln_image_alloc(fx->cpu, img, w, h, KILN_PIXEL_U8), KILN_OK);
    img->channels = 4;
    uint8_t *px = img->pixels;
    for (uint32_t by = 0; by < (h + 3) / 4; by++)
        for (uint32_t bx = 0; bx < (w + 3) / 4; bx++) {
            uint32_t kind = kt_rng_u32(rng) % 6;
            int a[3], b[3];
            for (int c = 0; c < 3; c++) {
                a[c] = (int)(kt_rng_u32(rng) & 255u);
                b[c] = (int)(kt_rng_u32(rng) & 255u);
                if (kind == 2) a[c] = (kt_rng_u32(rng) & 1) ? (int)(kt_rng_u32(rng) % 12u) : 255 - (int)(kt_rng_u32(rng) % 12u);
            }
            for (uint32_t y = by * 4; y < by * 4 + 4 && y < h; y++)
                for (uint32_t x = bx * 4; x < bx * 4 + 4 && x < w; x++) {
                    uint8_t *o = px + ((size_t)y * w + x) * 4;
                    for (int c = 0; c < 3; c++) {
                        int v = a[c];
                        if (kind == 1 || kind == 2) v += (int)(kt_rng_u32(rng) % 5u) - 2;
                        if (kind == 3 && (kt_rng_u32(rng) & 1)) v = b[c];
                        if (kind == 4) v = a[c] + (b[c] - a[c]) * (int)((x & 3) + (y & 3)) / 6;
                        if (kind == 5) v = (int)(kt_rng_u32(rng) & 255u);
                        o[c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
                    }
                    o[3] = (uint8_t)kt_rng_u32(rng);
                }
        }
}

/* kiln's ETC1 designs (enc_etc1.comp at FAST, enc_etc1_q.comp above): the CPU's bytes at every quality on
 * real crops, crafted and random blocks, odd sizes, 16-bit / float sources, uniform and perceptual
 * weights, at every subgroup size the device can require; ETC2 RGB and RGBA at FAST likewise. */
static void etc1_kiln_equals_cpu(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 77);
    static const uint32_t odd[][2] = {{1, 1}, {3, 5}, {13, 7}};
    const kiln_format fmts[2] = {KILN_FORMAT_ETC1_UNORM, KILN_FORMAT_ETC1_SRGB};
    /* required subgroup sizes: on a single-size device once per file (eac_kiln_subgroup_sizes), not per format here */
    uint32_t sgs = kt_subgroup_sizes_multi(fx->gpu);
    static const char *more[3] = {"ldr/stk_generic_rock_a_512.png", "ldr/city_fern_512_rgba.png", "ldr/gimp_stone33_tileable_156.png"};
    kiln_image extra[3];
    int have_extra[3];
    for (int i = 0; i < 3; i++) have_extra[i] = kiln_image_load(fx->cpu, kt_testdata(more[i]), &extra[i]) == KILN_OK;
    for (int pw = 0; pw < 2; pw++)
      for (int qi = KILN_QUALITY_FAST; qi <= KILN_QUALITY_MAX; qi++) {
        const kiln_format f = fmts[pw];
        const kiln_quality q = (kiln_quality)qi;
        kiln_image img;
        if (fx->have_rock) {
            make_image(fx, &img, KILN_PIXEL_U8, 64, 48, &fx->rock, 64 + 40 * (uint32_t)pw, 90 + 8 * (uint32_t)qi, &rng);
            expect_same_p(fx, &img, f, q, 0, pw, "real crop");
            kiln_image_free(&img);
        }
        for (int i = 0; i < 3; i++) {
            if (!have_extra[i]) continue;
            make_image(fx, &img, KILN_PIXEL_U8, 48, 32, &extra[i], 17 * (uint32_t)(qi + 1), 23 * (uint32_t)(pw + 1), &rng);
            expect_same_p(fx, &img, f, q, 0, pw, more[i]);
            kiln_image_free(&img);
        }
        make_etc_blocks(fx, &img, 64, 40, &rng);
        expect_same_p(fx, &img, f, q, 0, pw, "crafted");
        for (uint32_t sg = 1; sg <= 128; sg <<= 1)
            if (sgs & sg) expect_same_p(fx, &img, f, q, sg, pw, "crafted, required subgroup size");
        kiln_image_free(&img);
        make_image(fx, &img, KILN_PIXEL_U8, 16, 12, NULL, 0, 0, &rng);
        expect_same_p(fx, &img, f, q, 0, pw, "random");
        kiln_image_free(&img);
        for (size_t s = 0; s < 3; s++) {
            make_image(fx, &img, KILN_PIXEL_U8, odd[s][0], odd[s][1], fx->have_rock ? &fx->rock : NULL, 7, 9, &rng);
            expect_same_p(fx, &img, f, q, 0, pw, "odd size");
            kiln_image_free(&img);
        }
        make_image(fx, &img, KILN_PIXEL_U16, 9, 6, fx->have_rock ? &fx->rock : NULL, 40, 40, &rng);
        expect_same_p(fx, &img, f, q, 0, pw, "16-bit");
        kiln_image_free(&img);
        make_image(fx, &img, KILN_PIXEL_F32, 6, 9, fx->have_rock ? &fx->rock : NULL, 60, 20, &rng);
        expect_same_p(fx, &img, f, q, 0, pw, "float");
        kiln_image_free(&img);
    }
    /* ETC2 RGB / RGBA at FAST: ETC1 / planar on the GPU, the T/H blocks re-encoded on the CPU; RGBA adds the
     * EAC alpha pass */
    static const kiln_format etc2f[4] = {KILN_FORMAT_ETC2_RGB8_UNORM, KILN_FORMAT_ETC2_RGB8_SRGB, KILN_FORMAT_ETC2_RGBA8_UNORM,
                                         KILN_FORMAT_ETC2_RGBA8_SRGB};
    for (int fi = 0; fi < 4; fi++) {
        const kiln_format f = etc2f[fi];
        const int pw = fi & 1;
        kiln_image img;
        for (int i = 0; i < 3; i++) {
            if (!have_extra[i]) continue;
            make_image(fx, &img, KILN_PIXEL_U8, 64, 40, &extra[i], 31 * (uint32_t)(i + 1), 11 * (uint32_t)(fi + 1), &rng);
            expect_same_p(fx, &img, f, KILN_QUALITY_FAST, 0, pw, more[i]);
            kiln_image_free(&img);
        }
        make_etc_blocks(fx, &img, 64, 40, &rng);
        expect_same_p(fx, &img, f, KILN_QUALITY_FAST, 0, pw, "crafted");
        for (uint32_t sg = 1; sg <= 128; sg <<= 1)
            if (sgs & sg) expect_same_p(fx, &img, f, KILN_QUALITY_FAST, sg, pw, "crafted, required subgroup size");
        kiln_image_free(&img);
        for (size_t s = 0; s < 3; s++) {
            make_image(fx, &img, KILN_PIXEL_U8, odd[s][0], odd[s][1], NULL, 0, 0, &rng);
            expect_same_p(fx, &img, f, KILN_QUALITY_FAST, 0, pw, "odd size");
            kiln_image_free(&img);
        }
        make_image(fx, &img, KILN_PIXEL_U16, 9, 6, fx->have_rock ? &fx->rock : NULL, 40, 40, &rng);
        expect_same_p(fx, &img, f, KILN_QUALITY_FAST, 0, pw, "16-bit");
        kiln_image_free(&img);
    }
    for (int i = 0; i < 3; i++)
        if (have_extra[i]) kiln_image_free(&extra[i]);
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

/* Alpha for the RGB A1 tests (threshold 128): mode 0 random bytes, 1 a diagonal gradient (a cut-out edge
 * through blocks), 2 per block one of opaque / transparent / a few holes / random, 3 half of each block
 * transparent. */
static void set_alpha(kiln_image *img, int mode, kt_rng *rng)
{
    uint8_t *px = img->pixels;
    const uint32_t w = img->width, h = img->height;
    uint32_t kind = 0;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            uint8_t a;
            if (mode == 0) {
                a = (uint8_t)kt_rng_u32(rng);
            } else if (mode == 1) {
                a = (uint8_t)((x * 255u / (w > 1 ? w - 1 : 1) + y * 255u / (h > 1 ? h - 1 : 1)) / 2u);
            } else if (mode == 2) {
                /* the block's kind: a hash of the block coordinates */
                kind = ((x / 4u) * 7u + (y / 4u) * 13u) % 4u;
                a = kind == 0 ? 255 : kind == 1 ? 0 : kind == 2 ? ((kt_rng_u32(rng) % 5u) ? 255 : 3) : (uint8_t)kt_rng_u32(rng);
            } else {
                /* a half (left, right, top, bottom) of each block transparent: the CPU's empty sub-block case */
                kind = ((x / 4u) * 5u + (y / 4u) * 3u) % 4u;
                const uint32_t bxp = x & 3u, byp = y & 3u;
                const int off = kind == 0 ? bxp < 2 : kind == 1 ? bxp >= 2 : kind == 2 ? byp < 2 : byp >= 2;
                a = off ? 0 : 255;
            }
            px[((size_t)y * w + x) * 4 + 3] = a;
        }
}

/* kiln's ETC2 colour design above FAST (enc_etc1_q / enc_etc1_q_a1, enc_etc2_planar, T / H) and RGB A1 at
 * every quality: the CPU's bytes for ETC2 RGB / RGBA / RGB A1 on real crops, crafted blocks, odd sizes,
 * 16-bit sources, A1 cut-outs (random, gradient, mixed blocks), uniform and perceptual weights. */
static void etc2_kiln_equals_cpu(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 2026);
    static const char *more[2] = {"ldr/stk_generic_rock_a_512.png", "ldr/city_fern_512_rgba.png"};
    kiln_image extra[2];
    int have_extra[2];
    for (int i = 0; i < 2; i++) have_extra[i] = kiln_image_load(fx->cpu, kt_testdata(more[i]), &extra[i]) == KILN_OK;
    static const kiln_format fmts[3][2] = {{KILN_FORMAT_ETC2_RGB8_UNORM, KILN_FORMAT_ETC2_RGB8_SRGB},
                                           {KILN_FORMAT_ETC2_RGBA8_UNORM, KILN_FORMAT_ETC2_RGBA8_SRGB},
                                           {KILN_FORMAT_ETC2_RGB8A1_UNORM, KILN_FORMAT_ETC2_RGB8A1_SRGB}};
    uint32_t sgs = kt_subgroup_sizes_multi(fx->gpu); /* single-size device: eac_kiln_subgroup_sizes has it */
    for (int fk = 0; fk < 3; fk++)
        for (int qi = KILN_QUALITY_FAST; qi <= KILN_QUALITY_MAX; qi++) {
            if (qi == KILN_QUALITY_FAST && fk != 2) continue; /* RGB / RGBA FAST: etc1_kiln_equals_cpu */
            for (int pw = 0; pw < 2; pw++) {
                const kiln_format f = fmts[fk][pw];
                const kiln_quality q = (kiln_quality)qi;
                const uint32_t cw = qi == KILN_QUALITY_MAX ? 32 : 48, chh = qi == KILN_QUALITY_MAX ? 24 : 32;
                kiln_image img;
                for (int i = 0; i < 2; i++) {
                    if (!have_extra[i]) continue;
                    make_image(fx, &img, KILN_PIXEL_U8, cw, chh, &extra[i], 29 * (uint32_t)(qi + 3 * i + 1), 37 * (uint32_t)(pw + fk + 1), &rng);
                    if (fk == 2) set_alpha(&img, (i + pw + qi) % 3, &rng);
                    expect_same_p(fx, &img, f, q, 0, pw, more[i]);
                    kiln_image_free(&img);
                }
                if (fx->have_rock) { /* real alpha cut-outs (a sign with a transparent surround) */
                    make_image(fx, &img, KILN_PIXEL_U8, cw, chh, &fx->rock, 100 + 16 * (uint32_t)qi, 8 + 20 * (uint32_t)pw, &rng);
                    expect_same_p(fx, &img, f, q, 0, pw, "real crop with alpha");
                    kiln_image_free(&img);
                }
                make_etc_blocks(fx, &img, 32, 24, &rng);
                if (fk == 2) set_alpha(&img, pw ? 2 : 3, &rng);
                expect_same_p(fx, &img, f, q, 0, pw, "crafted");
                setenv("KILN_GPU_ETC2_TH", "host", 1); /* T / H on the host (the driver's fallback) */
                expect_same_p(fx, &img, f, q, 0, pw, "crafted, host T/H");
                unsetenv("KILN_GPU_ETC2_TH");
                if (qi == KILN_QUALITY_HIGH && pw == 0)
                    for (uint32_t sg = 1; sg <= 128; sg <<= 1)
                        if (sgs & sg) expect_same_p(fx, &img, f, q, sg, pw, "crafted, required subgroup size");
                kiln_image_free(&img);
                if (fk == 2 && pw == 0) { /* empty sub-blocks next to clamped palettes */
                    make_etc_blocks(fx, &img, 64, 64, &rng);
                    set_alpha(&img, 3, &rng);
                    expect_same_p(fx, &img, f, q, 0, pw, "crafted, half-transparent blocks");
                    kiln_image_free(&img);
                }
                make_image(fx, &img, KILN_PIXEL_U8, 13, 7, fx->have_rock ? &fx->rock : NULL, 50, 70, &rng);
                if (fk == 2) set_alpha(&img, 1, &rng);
                expect_same_p(fx, &img, f, q, 0, pw, "odd size");
                if (fk == 2) { /* other alpha thresholds: 200, and 0 (every pixel opaque) */
                    kiln_encode_params ep;
                    kiln_encode_params_init(&ep, f, q);
                    ep.perceptual = pw;
                    ep.alpha_threshold = pw ? 0 : 200;
                    expect_same_ep(fx, &img, &ep, 0, "odd size, alpha threshold");
                }
                kiln_image_free(&img);
                if (qi == KILN_QUALITY_NORMAL) {
                    make_image(fx, &img, KILN_PIXEL_U16, 9, 6, fx->have_rock ? &fx->rock : NULL, 40, 40, &rng);
                    expect_same_p(fx, &img, f, q, 0, pw, "16-bit");
                    kiln_image_free(&img);
                }
            }
        }
    for (int i = 0; i < 2; i++)
        if (have_extra[i]) kiln_image_free(&extra[i]);
    assert_int_equal(kt_gpu_validation_messages(fx->gpu), 0);
}

/* Step 2 of enc_etc1_q (the differential delta-box searches) with KILN_GPU_ETC1_BOXSKIP / KILN_GPU_ETC1_WG (helper etc2max;
 * the other tests run the default, BOXSKIP 2 at workgroup 256, and test_gpu_mip_encode the shader's own 0 at 64): only
 * the searches the CPU's sequence can reach, each by its invocation (1) or listed per workgroup of 64 (2), and the
 * sorted lists with constant indices (KILN_GPU_ETC1_TOPFIX=1, with BOXSKIP 1; 0 with 2): the CPU's
 * bytes at high and max for ETC1 (OUT4 = 0), ETC2 RGB (OUT4 = 1) and RGB A1 (transparent halves), perceptual on / off,
 * on crops where the CPU runs box searches (rock, wood: 5-25 % of the flips at max). Running none of them fails here. */
static void etc1_boxskip(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 4711);
    static const char *files[2] = {"ldr/stk_generic_rock_a_512.png", "ldr/stktex_generic_WoodB_1024.png"};
    kiln_image src[2];
    for (int i = 0; i < 2; i++) assert_int_equal(kiln_image_load(fx->cpu, kt_testdata(files[i]), &src[i]), KILN_OK);
    /* boxskip, workgroup size, topfix */
    static const char *cfg[2][3] = {{"1", "64", "1"}, {"2", "64", "0"}};
    for (int c = 0; c < 2; c++) {
        setenv("KILN_GPU_ETC1_BOXSKIP", cfg[c][0], 1);
        setenv("KILN_GPU_ETC1_WG", cfg[c][1], 1);
        setenv("KILN_GPU_ETC1_TOPFIX", cfg[c][2], 1);
        for (int qi = KILN_QUALITY_HIGH; qi <= KILN_QUALITY_MAX; qi++)
            for (int i = 0; i < 2; i++) {
                kiln_image img;
                const int pw = (qi + i + c) & 1;
                make_image(fx, &img, KILN_PIXEL_U8, 36, 28, &src[i], 64 + 40 * (uint32_t)(qi + c), 96 + 24 * (uint32_t)i, &rng);
                expect_same_p(fx, &img, c ? KILN_FORMAT_ETC2_RGB8_UNORM : KILN_FORMAT_ETC1_UNORM, (kiln_quality)qi, 0, pw, files[i]);
                set_alpha(&img, 3 - (qi & 1), &rng); /* half-transparent blocks, or mixed ones */
                expect_same_p(fx, &img, KILN_FORMAT_ETC2_RGB8A1_UNORM, (kiln_quality)qi, 0, pw, files[i]);
                kiln_image_free(&img);
            }
    }
    unsetenv("KILN_GPU_ETC1_BOXSKIP");
    unsetenv("KILN_GPU_ETC1_WG");
    unsetenv("KILN_GPU_ETC1_TOPFIX");
    /* bad settings fail with a message naming the knob */
    kiln_image img;
    make_image(fx, &img, KILN_PIXEL_U8, 4, 4, NULL, 0, 0, &rng);
    kiln_encode_params ep;
    kiln_encode_params_init(&ep, KILN_FORMAT_ETC1_UNORM, KILN_QUALITY_MAX);
    uint8_t out[8];
    setenv("KILN_GPU_ETC1_BOXSKIP", "3", 1);
    assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &ep, 0, out, sizeof out), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(kiln_last_error(fx->gpu), "KILN_GPU_ETC1_BOXSKIP"));
    unsetenv("KILN_GPU_ETC1_BOXSKIP");
    setenv("KILN_GPU_ETC1_WG", "96", 1);
    assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &ep, 0, out, sizeof out), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(kiln_last_error(fx->gpu), "KILN_GPU_ETC1_WG"));
    unsetenv("KILN_GPU_ETC1_WG");
    setenv("KILN_GPU_ETC1_TOPFIX", "2", 1);
    assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &ep, 0, out, sizeof out), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(kiln_last_error(fx->gpu), "KILN_GPU_ETC1_TOPFIX"));
    unsetenv("KILN_GPU_ETC1_TOPFIX");
    kiln_image_free(&img);
    for (int i = 0; i < 2; i++) kiln_image_free(&src[i]);
    assert_int_equal(kt_gpu_validation_messages(fx->gpu), 0);
}

static void eac_kiln_equals_cpu(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 42);
    static const uint32_t odd[][2] = {{1, 1}, {3, 5}, {13, 7}};
    for (size_t k = 0; k < sizeof eac_formats / sizeof eac_formats[0]; k++) {
        for (int q = KILN_QUALITY_FAST; q <= KILN_QUALITY_MAX; q++) {
            kiln_image img;
            if (fx->have_rock) { /* a crop of a real texture */
                make_image(fx, &img, KILN_PIXEL_U8, 32, 24, &fx->rock, 96 + 8 * (uint32_t)k, 100 + 4 * (uint32_t)q, &rng);
                expect_same(fx, &img, eac_formats[k], (kiln_quality)q, 0, "real crop");
                kiln_image_free(&img);
            }
            make_crafted(fx, &img, 24, 20, &rng);
            expect_same(fx, &img, eac_formats[k], (kiln_quality)q, 0, "crafted");
            kiln_image_free(&img);
            make_image(fx, &img, KILN_PIXEL_U8, 8, 8, NULL, 0, 0, &rng);
            expect_same(fx, &img, eac_formats[k], (kiln_quality)q, 0, "random");
            kiln_image_free(&img);
            for (size_t s = 0; s < 3; s++) {
                make_image(fx, &img, KILN_PIXEL_U8, odd[s][0], odd[s][1], NULL, 0, 0, &rng);
                expect_same(fx, &img, eac_formats[k], (kiln_quality)q, 0, "odd size");
                kiln_image_free(&img);
            }
            make_image(fx, &img, KILN_PIXEL_U16, 9, 6, fx->have_rock ? &fx->rock : NULL, 40, 40, &rng);
            expect_same(fx, &img, eac_formats[k], (kiln_quality)q, 0, "16-bit");
            kiln_image_free(&img);
            make_image(fx, &img, KILN_PIXEL_F32, 6, 9, fx->have_rock ? &fx->rock : NULL, 60, 20, &rng);
            expect_same(fx, &img, eac_formats[k], (kiln_quality)q, 0, "float");
            kiln_image_free(&img);
        }
    }
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

/* Every subgroup size the device can require, and the search without the spacing bound (KILN_GPU_EAC_PRUNE=0). */
static void eac_kiln_subgroup_sizes(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 9);
    uint32_t sizes = kiln__gpu_subgroup_sizes(fx->gpu);
    if (!sizes) print_message("note: the device cannot require subgroup sizes\n");
    kiln_image img;
    make_crafted(fx, &img, 13, 7, &rng);
    for (uint32_t sg = 1; sg <= 128; sg <<= 1) {
        if (!(sizes & sg)) continue;
        expect_same(fx, &img, KILN_FORMAT_EAC_RG11_UNORM, KILN_QUALITY_MAX, sg, "crafted");
        expect_same(fx, &img, KILN_FORMAT_EAC_R11_SNORM, KILN_QUALITY_FAST, sg, "crafted");
    }
    kiln_image_free(&img);
    /* without the spacing bound, every quality */
    setenv("KILN_GPU_EAC_PRUNE", "0", 1);
    for (size_t k = 0; k < sizeof eac_formats / sizeof eac_formats[0]; k += 2)
        for (int q = KILN_QUALITY_NORMAL; q <= KILN_QUALITY_MAX; q++) {
            make_crafted(fx, &img, 20, 16, &rng);
            expect_same(fx, &img, eac_formats[k + (size_t)(q & 1)], (kiln_quality)q, 0, "crafted, prune0");
            kiln_image_free(&img);
            if (fx->have_rock) {
                make_image(fx, &img, KILN_PIXEL_U8, 16, 16, &fx->rock, 20 * (uint32_t)q, 150, &rng);
                expect_same(fx, &img, eac_formats[k + (size_t)(q & 1)], (kiln_quality)q, 0, "real crop, prune0");
                kiln_image_free(&img);
            }
        }
    unsetenv("KILN_GPU_EAC_PRUNE");
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

/* The EAC shader's setting, the one every EAC pass takes (the encode path, the ETC ring and the device-resident mip
 * path): the spacing bound by default, KILN_GPU_EAC_PRUNE's bit 1 when set (no device needed). */
static void eac_shader_setting(void **state)
{
    (void)state;
#ifndef KILN_HAVE_VULKAN
    skip(); /* the setting lives in the Vulkan backend */
#else
    const char *old = getenv("KILN_GPU_EAC_PRUNE");
    char *keep = old ? strdup(old) : NULL;
    uint32_t spec = 99u;
    unsetenv("KILN_GPU_EAC_PRUNE");
    assert_string_equal(kiln__gpu_eac_shader(&spec), "enc_eac");
    assert_int_equal(spec & 2u, 2u);
    const char *set[4] = {"0", "1", "2", "3"};
    for (int i = 0; i < 4; i++) {
        setenv("KILN_GPU_EAC_PRUNE", set[i], 1);
        kiln__gpu_eac_shader(&spec);
        assert_int_equal(spec & 2u, (uint32_t)i & 2u);
    }
    if (keep) {
        setenv("KILN_GPU_EAC_PRUNE", keep, 1);
        free(keep);
    } else {
        unsetenv("KILN_GPU_EAC_PRUNE");
    }
#endif
}

/* Squared error of a decoded EAC texture against the source, in the encoder's integer domain
 * (unsigned: target s16 * 2047 vs v11 * 65535; signed: round(f * 1023 * 65536) vs v11 * 65536),
 * and the PSNR of the decoded channels in [0, 1] (signed mapped to [0, 1]). */
static void eac_error(fixture *fx, const kiln_image *img, const kiln_texture *tex, uint64_t *err, double *psnr)
{
    const kiln_format_info *fi = kiln_format_get_info(tex->format);
    kiln_image dec;
    assert_int_equal(kiln_decode(fx->cpu, tex, 0, 0, 0, &dec), KILN_OK);
    const int sgn = (fi->flags & KILN_FF_SIGNED) != 0;
    uint64_t e = 0;
    double se = 0.0;
    size_t n = 0;
    for (uint32_t y = 0; y < img->height; y++)
        for (uint32_t x = 0; x < img->width; x++)
            for (uint32_t c = 0; c < fi->channels; c++) {
                size_t i = ((size_t)y * img->width + x) * 4 + c;
                uint8_t s8 = ((const uint8_t *)img->pixels)[i];
                int64_t t, l;
                double a, b;
                if (!sgn) {
                    int v = ((const uint16_t *)dec.pixels)[i] >> 5;
                    t = (int64_t)s8 * 257 * 2047;
                    l = (int64_t)v * 65535;
                    a = s8 / 255.0;
                    b = v / 2047.0;
                } else {
                    float fv = (float)s8 * (1.0f / 255.0f) * 2.0f - 1.0f;
                    float dv = ((const float *)dec.pixels)[i];
                    int v = (int)lround((double)dv * 1023.0);
                    t = llround((double)fv * 1023.0 * 65536.0);
                    l = (int64_t)v * 65536;
                    a = (fv + 1.0) / 2.0;
                    b = (dv + 1.0) / 2.0;
                }
                e += (uint64_t)((t - l) * (t - l));
                se += (a - b) * (a - b);
                n++;
            }
    kiln_image_free(&dec);
    *err = e;
    *psnr = se > 0 ? 10.0 * log10((double)n / se) : INFINITY;
}

static void eac_seed_design(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 3);
    for (int preload = 0; preload <= 1; preload++) {
        setenv("KILN_GPU_ETC_PRELOAD", preload ? "1" : "0", 1);
        for (size_t k = 0; k < sizeof eac_formats / sizeof eac_formats[0]; k++) {
            if (!preload && k != 0) continue; /* direct reads: R11 unsigned (one more pipeline each) */
            const kiln_format_info *fi = kiln_format_get_info(eac_formats[k]);
            static const uint32_t sizes[][2] = {{8, 8}, {1, 1}, {13, 7}};
            for (size_t s = 0; s < 3; s++) {
                kiln_image img;
                if (s == 0 && fx->have_rock) make_image(fx, &img, KILN_PIXEL_U8, sizes[s][0], sizes[s][1], &fx->rock, 120, 64, &rng);
                else make_crafted(fx, &img, sizes[s][0], sizes[s][1], &rng);
                kiln_encode_params ep;
                kiln_encode_params_init(&ep, eac_formats[k], KILN_QUALITY_MAX);
                kiln_texture tg, tc;
                ep.gpu_strategy = 1;
                if (kiln_encode(fx->gpu, &img, &ep, &tg) != KILN_OK)
                    fail_msg("%s seed %ux%u: %s", fi->name, img.width, img.height, kiln_last_error(fx->gpu));
                ep.gpu_strategy = 0;
                assert_int_equal(kiln_encode(fx->cpu, &img, &ep, &tc), KILN_OK);
                uint64_t eg, ec;
                double pg, pc;
                eac_error(fx, &img, &tg, &eg, &pg);
                eac_error(fx, &img, &tc, &ec, &pc);
                if (eg != ec)
                    fail_msg("%s seed (preload %d) %ux%u: error %llu, the CPU optimum %llu", fi->name, preload, img.width,
                             img.height, (unsigned long long)eg, (unsigned long long)ec);
                if (!(pg >= (s == 0 ? 38.0 : 20.0)))
                    fail_msg("%s seed %ux%u: PSNR %.2f dB below the floor", fi->name, img.width, img.height, pg);
                kiln_texture_free(&tg);
                kiln_texture_free(&tc);
                kiln_image_free(&img);
            }
        }
    }
    unsetenv("KILN_GPU_ETC_PRELOAD");
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

/* The EAC alpha pass of ETC2 RGBA (KIND 0 of the shaders): kiln's design equals the CPU's alpha half at
 * every quality; the seed design reaches the same (optimal) alpha error at max. The hook lives in
 * src/gpu/gpu_encode_etc.c, which a build without Vulkan lacks: weak, so that build still links. */
__attribute__((weak)) kiln_status kiln__gpu_encode_etc2_alpha(kiln_context *ctx, const kiln_image *img,
                                                              const kiln_encode_params *params, uint32_t subgroup_size,
                                                              uint8_t *dst, size_t dst_size);

static uint64_t alpha_err(const kiln_image *img, const uint8_t *blocks)
{
    uint64_t e = 0;
    const uint32_t bx = (img->width + 3) / 4;
    for (uint32_t y = 0; y < img->height; y++)
        for (uint32_t x = 0; x < img->width; x++) {
            const uint8_t *b = blocks + ((size_t)(y / 4) * bx + x / 4) * 16;
            uint64_t v = 0;
            for (int i = 0; i < 8; i++) v = v << 8 | b[i];
            int base = (int)(v >> 56), mul = (int)(v >> 52) & 15, tab = (int)(v >> 48) & 15;
            int j = (int)(x & 3) * 4 + (int)(y & 3), idx = (int)(v >> (45 - 3 * j)) & 7;
            static const int mod[16][8] = {
                {-3, -6, -9, -15, 2, 5, 8, 14}, {-3, -7, -10, -13, 2, 6, 9, 12}, {-2, -5, -8, -13, 1, 4, 7, 12},
                {-2, -4, -6, -13, 1, 3, 5, 12}, {-3, -6, -8, -12, 2, 5, 7, 11}, {-3, -7, -9, -11, 2, 6, 8, 10},
                {-4, -7, -8, -11, 3, 6, 7, 10}, {-3, -5, -8, -11, 2, 4, 7, 10}, {-2, -6, -8, -10, 1, 5, 7, 9},
                {-2, -5, -8, -10, 1, 4, 7, 9}, {-2, -4, -8, -10, 1, 3, 7, 9}, {-2, -5, -7, -10, 1, 4, 6, 9},
                {-3, -4, -7, -10, 2, 3, 6, 9}, {-1, -2, -3, -10, 0, 1, 2, 9}, {-4, -6, -8, -9, 3, 5, 7, 8},
                {-3, -5, -7, -9, 2, 4, 6, 8}};
            int a = base + mod[tab][idx] * mul;
            a = a < 0 ? 0 : a > 255 ? 255 : a;
            int d = a - ((const uint8_t *)img->pixels)[((size_t)y * img->width + x) * 4 + 3];
            e += (uint64_t)(d * d);
        }
    return e;
}

static void etc2_alpha_pass(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu || !kiln__gpu_encode_etc2_alpha) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 77);
    for (int q = KILN_QUALITY_FAST; q <= KILN_QUALITY_MAX; q++) {
        for (int k = 0; k < 3; k++) {
            kiln_image img;
            if (k == 0) make_crafted(fx, &img, 13, 7, &rng);
            else if (k == 1) make_image(fx, &img, KILN_PIXEL_U8, 3, 5, NULL, 0, 0, &rng);
            else make_image(fx, &img, KILN_PIXEL_U8, 16, 16, fx->have_rock ? &fx->rock : NULL, 100, 30, &rng);
            kiln_encode_params ep;
            kiln_encode_params_init(&ep, KILN_FORMAT_ETC2_RGBA8_UNORM, (kiln_quality)q);
            size_t size = kiln_format_image_size(KILN_FORMAT_ETC2_RGBA8_UNORM, img.width, img.height);
            uint8_t *g = calloc(1, size), *c = malloc(size);
            assert_non_null(g);
            assert_non_null(c);
            if (kiln__gpu_encode_etc2_alpha(fx->gpu, &img, &ep, 0, g, size) != KILN_OK)
                fail_msg("ETC2 alpha q%d: %s", q, kiln_last_error(fx->gpu));
            assert_int_equal(kiln_encode_image(fx->cpu, &img, &ep, c, size), KILN_OK);
            for (size_t b = 0; b < size / 16; b++) {
                if (memcmp(g + b * 16, c + b * 16, 8) != 0) fail_msg("ETC2 alpha q%d image %d: block %zu differs", q, k, b);
                for (int i = 8; i < 16; i++) assert_int_equal(g[b * 16 + (size_t)i], 0); /* colour half untouched */
            }
            if (q == KILN_QUALITY_MAX) {
                ep.gpu_strategy = 1;
                memset(g, 0, size);
                assert_int_equal(kiln__gpu_encode_etc2_alpha(fx->gpu, &img, &ep, 0, g, size), KILN_OK);
                assert_true(alpha_err(&img, g) == alpha_err(&img, c));
            }
            free(g);
            free(c);
            kiln_image_free(&img);
        }
    }
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

/* Issue #4 (helper gpudither): EAC R11 / RG11 with params->dither (enc_eac_dither.comp after enc_eac.comp)
 * give the CPU's bytes at every quality: a crop of a real texture, crafted blocks (ties, the estimate's
 * rounding boundary: those jobs go back to the CPU, which must dither them too), random pixels, odd sizes,
 * 16-bit and float sources; and dithering changes blocks (else the comparison proves nothing). */
static void eac_dither_equals_cpu(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 4);
    for (size_t k = 0; k < sizeof eac_formats / sizeof eac_formats[0]; k++) {
        size_t changed = 0;
        for (int q = KILN_QUALITY_FAST; q <= KILN_QUALITY_MAX; q++) {
            kiln_encode_params ep;
            kiln_encode_params_init(&ep, eac_formats[k], (kiln_quality)q);
            ep.dither = 1;
            kiln_image img[6];
            const char *what[6] = {"real crop", "crafted", "random", "odd 3x5", "16-bit", "float"};
            int n = 0;
            if (fx->have_rock) make_image(fx, &img[n++], KILN_PIXEL_U8, 32, 24, &fx->rock, 64 + 8 * (uint32_t)k, 90 + 4 * (uint32_t)q, &rng);
            else what[0] = NULL;
            make_crafted(fx, &img[n++], 24, 20, &rng);
            make_image(fx, &img[n++], KILN_PIXEL_U8, 8, 8, NULL, 0, 0, &rng);
            make_image(fx, &img[n++], KILN_PIXEL_U8, 3, 5, NULL, 0, 0, &rng);
            make_image(fx, &img[n++], KILN_PIXEL_U16, 9, 6, fx->have_rock ? &fx->rock : NULL, 40, 40, &rng);
            make_image(fx, &img[n++], KILN_PIXEL_F32, 6, 9, fx->have_rock ? &fx->rock : NULL, 60, 20, &rng);
            for (int i = 0; i < n; i++) {
                expect_same_ep(fx, &img[i], &ep, 0, what[fx->have_rock ? i : i + 1]);
                if (q == KILN_QUALITY_FAST) {
                    size_t size = kiln_format_image_size(ep.format, img[i].width, img[i].height);
                    uint8_t *a = malloc(size), *b = malloc(size);
                    assert_non_null(a);
                    assert_non_null(b);
                    assert_int_equal(kiln_encode_image(fx->cpu, &img[i], &ep, a, size), KILN_OK);
                    ep.dither = 0;
                    assert_int_equal(kiln_encode_image(fx->cpu, &img[i], &ep, b, size), KILN_OK);
                    ep.dither = 1;
                    for (size_t o = 0; o < size; o += 8) changed += memcmp(a + o, b + o, 8) != 0;
                    free(a);
                    free(b);
                }
                kiln_image_free(&img[i]);
            }
        }
        print_message("eac dither: %s fast: dithering changed %zu channel blocks\n", kiln_format_get_info(eac_formats[k])->name, changed);
        if (changed == 0) fail_msg("%s: dithering changed no block", kiln_format_get_info(eac_formats[k])->name);
    }
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

/* Issue #4 (helper gpudither): ETC1, ETC2 RGB, RGBA and RGB A1 with params->dither (the colour passes, then
 * enc_etc_dither.comp re-picks the selectors; RGBA's alpha through enc_eac_dither.comp) give the CPU's
 * bytes at every quality, with uniform and perceptual weights (A1: four alpha patterns, thresholds 128 and
 * 200): crops of real textures, crafted colour
 * blocks (flat, clamped palettes, two colours, gradients: T / H / planar blocks among them), T / H on
 * the host, odd sizes, a 16-bit source; and dithering changes blocks. */
static void etc_dither_equals_cpu(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 99);
    kiln_image fern;
    const int have_fern = kiln_image_load(fx->cpu, kt_testdata("ldr/city_fern_512_rgba.png"), &fern) == KILN_OK;
    static const kiln_format fmts[] = {KILN_FORMAT_ETC1_UNORM, KILN_FORMAT_ETC2_RGB8_UNORM, KILN_FORMAT_ETC2_RGBA8_SRGB,
                                       KILN_FORMAT_ETC2_RGB8A1_UNORM};
    for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++) {
        size_t changed = 0;
        for (int qi = KILN_QUALITY_FAST; qi <= KILN_QUALITY_MAX; qi++)
            for (int pw = 0; pw < 2; pw++) {
                kiln_encode_params ep;
                kiln_encode_params_init(&ep, fmts[k], (kiln_quality)qi);
                ep.dither = 1;
                ep.perceptual = pw;
                const uint32_t cw = qi == KILN_QUALITY_MAX ? 24 : 40, chh = qi == KILN_QUALITY_MAX ? 16 : 24;
                kiln_image img[5];
                const char *what[5];
                int n = 0;
                if (have_fern) {
                    make_image(fx, &img[n], KILN_PIXEL_U8, cw, chh, &fern, 100 + 31 * (uint32_t)qi, 200 + 17 * (uint32_t)pw, &rng);
                    what[n++] = "fern crop";
                }
                if (fx->have_rock) {
                    make_image(fx, &img[n], KILN_PIXEL_U8, cw, chh, &fx->rock, 90 + 16 * (uint32_t)qi, 30 + 20 * (uint32_t)pw, &rng);
                    what[n++] = "sign crop";
                }
                make_etc_blocks(fx, &img[n], 32, 24, &rng);
                what[n++] = "crafted";
                make_image(fx, &img[n], KILN_PIXEL_U8, 13, 7, NULL, 0, 0, &rng);
                what[n++] = "odd 13x7";
                make_image(fx, &img[n], KILN_PIXEL_U16, 9, 6, fx->have_rock ? &fx->rock : NULL, 40, 40, &rng);
                what[n++] = "16-bit";
                for (int i = 0; i < n; i++) {
                    if (k == 3 && img[i].type == KILN_PIXEL_U8) set_alpha(&img[i], (i + pw + qi) % 4, &rng); /* A1 cut-outs */
                    expect_same_ep(fx, &img[i], &ep, 0, what[i]);
                    if (k == 3 && i == 0) { /* another alpha threshold */
                        ep.alpha_threshold = 200;
                        expect_same_ep(fx, &img[i], &ep, 0, "alpha threshold 200");
                        ep.alpha_threshold = 128;
                    }
                    if (k > 0 && qi > KILN_QUALITY_FAST && i == n - 3) { /* T / H on the host */
                        setenv("KILN_GPU_ETC2_TH", "host", 1);
                        expect_same_ep(fx, &img[i], &ep, 0, "crafted, host T/H");
                        unsetenv("KILN_GPU_ETC2_TH");
                    }
                    if (qi == KILN_QUALITY_NORMAL && pw == 0) {
                        size_t size = kiln_format_image_size(ep.format, img[i].width, img[i].height);
                        uint8_t *a = malloc(size), *b = malloc(size);
                        assert_non_null(a);
                        assert_non_null(b);
                        assert_int_equal(kiln_encode_image(fx->cpu, &img[i], &ep, a, size), KILN_OK);
                        ep.dither = 0;
                        assert_int_equal(kiln_encode_image(fx->cpu, &img[i], &ep, b, size), KILN_OK);
                        ep.dither = 1;
                        for (size_t o = 0; o < size; o += 8) changed += memcmp(a + o, b + o, 8) != 0;
                        free(a);
                        free(b);
                    }
                    kiln_image_free(&img[i]);
                }
            }
        print_message("etc dither: %s normal: dithering changed %zu 8-byte halves\n", kiln_format_get_info(fmts[k])->name, changed);
        if (changed == 0) fail_msg("%s: dithering changed no block", kiln_format_get_info(fmts[k])->name);
    }
    if (have_fern) kiln_image_free(&fern);
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

/* Helper ditherfix: ETC2 RGB / RGBA at FAST with dithering. The GPU dithers the fast path's blocks
 * (enc_etc1.comp ETC2 = 1, then enc_etc_dither.comp); the CPU used to run kiln__etc2_search at FAST instead
 * (planar levels rounded in doubles, planar without the residual gate), so in these blocks (cut from the
 * synthetic 4096^2 texture of bench/gpu_encode.c, where 121 of 1M blocks differed; none at 1024^2) it chose
 * other planar levels, or planar instead of differential, and the GPU's bytes differed. Checks: the CPU's
 * dithered block keeps the non-dithered block's mode and colours (all 8 bytes for planar, bytes 0..3
 * otherwise), with and without perceptual weights; and the GPU gives the CPU's bytes (RGB and RGBA). */
static const uint32_t fast_planar_px[][16] = {
    {0x020381, 0x020380, 0x020380, 0x020380, 0x020382, 0x020381, 0x020381, 0x020381, 0x020383, 0x020382, 0x020382, 0x020382, 0x020384, 0x020383, 0x020383, 0x020383}, /* block 13494: planar levels */
    {0xd70b81, 0xd70b80, 0xd60b80, 0xd60b80, 0xd70b82, 0xd70b81, 0xd60b81, 0xd60b81, 0xd70b83, 0xd70b82, 0xd60b82, 0xd50b82, 0xd70b84, 0xd60b83, 0xd60b83, 0xd50b83}, /* block 46937: planar levels */
    {0xf60f81, 0xf60f80, 0xf50f80, 0xf50f80, 0xf61082, 0xf51081, 0xf51081, 0xf51081, 0xf61083, 0xf51082, 0xf51082, 0xf51082, 0xf61084, 0xf51083, 0xf51083, 0xf51083}, /* block 63808: planar levels */
    {0x021381, 0x021380, 0x021380, 0x021380, 0x021382, 0x021381, 0x021381, 0x021381, 0x021483, 0x021482, 0x021482, 0x021482, 0x021484, 0x021483, 0x021483, 0x021483}, /* block 80822: planar levels */
    {0x731481, 0x721480, 0x711480, 0x701480, 0x731482, 0x721481, 0x711481, 0x701481, 0x721483, 0x721482, 0x711482, 0x701482, 0x721484, 0x711483, 0x711483, 0x701483}, /* block 81264: planar levels */
    {0x451581, 0x441580, 0x441580, 0x431580, 0x451582, 0x441581, 0x441581, 0x431581, 0x451583, 0x441582, 0x431582, 0x431582, 0x451584, 0x441583, 0x431583, 0x421583}, /* block 86398: planar levels */
    {0x3e0781, 0x3e0780, 0x3f0780, 0x400780, 0x3e0782, 0x3e0781, 0x3f0781, 0x400781, 0x3e0783, 0x3f0782, 0x3f0782, 0x400782, 0x3e0784, 0x3f0783, 0x400783, 0x400783}, /* block 29923: differential -> planar */
    {0x012e81, 0x012e80, 0x012e80, 0x012e80, 0x012e82, 0x012e81, 0x012e81, 0x012e81, 0x012e83, 0x012e82, 0x012e82, 0x012e82, 0x012e84, 0x012e83, 0x012e83, 0x012e83}, /* block 188053: differential -> planar */
    {0x7a2e81, 0x792e80, 0x782e80, 0x772e80, 0x7a2e82, 0x792e81, 0x782e81, 0x772e81, 0x792e83, 0x792e82, 0x782e82, 0x772e82, 0x792e84, 0x782e83, 0x782e83, 0x772e83}, /* block 188495: differential -> planar */
    {0xed3681, 0xee3680, 0xee3680, 0xee3680, 0xed3682, 0xee3681, 0xee3681, 0xee3681, 0xed3683, 0xee3682, 0xee3682, 0xef3682, 0xed3684, 0xee3683, 0xee3683, 0xef3683}, /* block 221938: differential -> planar */
};

static void etc2_fast_dither_planar(void **state)
{
    fixture *fx = *state;
    /* the CPU half runs without a Vulkan device too (the fixture's contexts are then NULL) */
    kiln_context *cpu = fx->cpu ? fx->cpu : kt_context(1, KILN_BACKEND_CPU);
    assert_non_null(cpu);
    const uint32_t nb = (uint32_t)(sizeof fast_planar_px / sizeof fast_planar_px[0]), bw = 5;
    kiln_image img;
    assert_int_equal(kiln_image_alloc(cpu, &img, bw * 4, (nb + bw - 1) / bw * 4, KILN_PIXEL_U8), KILN_OK);
    img.channels = 4;
    uint8_t *px = img.pixels;
    memset(px, 0xff, (size_t)img.width * img.height * 4);
    for (uint32_t b = 0; b < nb; b++)
        for (uint32_t p = 0; p < 16; p++) {
            uint8_t *t = px + ((size_t)((b / bw) * 4 + p / 4) * img.width + (b % bw) * 4 + p % 4) * 4;
            t[0] = (uint8_t)(fast_planar_px[b][p] >> 16);
            t[1] = (uint8_t)(fast_planar_px[b][p] >> 8);
            t[2] = (uint8_t)fast_planar_px[b][p];
            t[3] = (uint8_t)(200 + 3 * p); /* RGBA: an alpha to dither too */
        }
    const size_t size = kiln_format_image_size(KILN_FORMAT_ETC2_RGB8_UNORM, img.width, img.height);
    uint8_t *nd = malloc(size), *d = malloc(size);
    assert_non_null(nd);
    assert_non_null(d);
    for (int pw = 0; pw < 2; pw++) {
        kiln_encode_params ep;
        kiln_encode_params_init(&ep, KILN_FORMAT_ETC2_RGB8_UNORM, KILN_QUALITY_FAST);
        ep.perceptual = pw;
        assert_int_equal(kiln_encode_image(cpu, &img, &ep, nd, size), KILN_OK);
        ep.dither = 1;
        assert_int_equal(kiln_encode_image(cpu, &img, &ep, d, size), KILN_OK);
        for (uint32_t b = 0; b < nb; b++) {
            const uint8_t *x = nd + b * 8u, *y = d + b * 8u;
            /* planar: R, G in range, B out of range (the differential reading of bytes 0..3) */
            const int r = x[0] >> 3, dr = (x[0] & 3) - (x[0] & 4), g = x[1] >> 3, dg = (x[1] & 3) - (x[1] & 4);
            const int bb = x[2] >> 3, db = (x[2] & 3) - (x[2] & 4);
            const int planar = (x[3] & 2) && r + dr >= 0 && r + dr <= 31 && g + dg >= 0 && g + dg <= 31 && (bb + db < 0 || bb + db > 31);
            if (memcmp(x, y, planar ? 8u : 4u) != 0)
                fail_msg("etc2-rgb fast, perceptual %d, block %u: dithering changed the %s: %02x%02x%02x%02x%02x%02x%02x%02x -> "
                         "%02x%02x%02x%02x%02x%02x%02x%02x", pw, b, planar ? "planar block" : "mode / colours", x[0], x[1], x[2],
                         x[3], x[4], x[5], x[6], x[7], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7]);
        }
        if (fx->gpu) {
            expect_same_ep(fx, &img, &ep, 0, "fast planar blocks");
            ep.format = KILN_FORMAT_ETC2_RGBA8_UNORM;
            expect_same_ep(fx, &img, &ep, 0, "fast planar blocks");
        }
    }
    free(nd);
    free(d);
    kiln_image_free(&img);
    if (cpu != fx->cpu) kiln_context_free(cpu);
    if (!fx->gpu) skip();
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

static void unsupported_paths(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 1);
    kiln_image img;
    make_image(fx, &img, KILN_PIXEL_U8, 8, 8, NULL, 0, 0, &rng);
    uint8_t buf[256];
    kiln_encode_params ep;
    kiln_encode_params_init(&ep, KILN_FORMAT_ETC1_UNORM, KILN_QUALITY_MAX); /* every ETC format dithers, not the seed strategy */
    ep.dither = 1;
    ep.gpu_strategy = 1;
    assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &ep, 0, buf, sizeof buf), KILN_ERR_UNSUPPORTED);
    assert_non_null(strstr(kiln_last_error(fx->gpu), "dither"));
    kiln_encode_params_init(&ep, KILN_FORMAT_EAC_R11_UNORM, KILN_QUALITY_MAX);
    ep.dither = 1;
    ep.gpu_strategy = 1; /* the seed design does not dither */
    assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &ep, 0, buf, sizeof buf), KILN_ERR_UNSUPPORTED);
    assert_non_null(strstr(kiln_last_error(fx->gpu), "dither"));
    ep.dither = 0;
    ep.gpu_strategy = 7;
    assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &ep, 0, buf, sizeof buf), KILN_ERR_INVALID_ARGUMENT);
    ep.gpu_strategy = 0;
    assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &ep, 0, buf, 31), KILN_ERR_INVALID_ARGUMENT);
    /* ETC2 RGB A1 with the seed strategy has no GPU encoder (RGB / RGBA do: test_gpu_etc2_seed.c): VULKAN
     * reports it, AUTO falls back to the CPU; dithering is refused for RGB A1 and the seed strategy */
    kiln_encode_params_init(&ep, KILN_FORMAT_ETC2_RGB8A1_UNORM, KILN_QUALITY_NORMAL);
    ep.gpu_strategy = 1;
    assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &ep, 0, buf, sizeof buf), KILN_ERR_UNSUPPORTED);
    assert_non_null(strstr(kiln_last_error(fx->gpu), "no GPU encoder"));
    kiln_encode_params_init(&ep, KILN_FORMAT_ETC2_RGB8A1_UNORM, KILN_QUALITY_FAST);
    ep.dither = 1; /* RGB A1 dithers on the GPU (etc_dither_equals_cpu) */
    assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &ep, 0, buf, sizeof buf), KILN_OK);
    kiln_encode_params_init(&ep, KILN_FORMAT_ETC2_RGBA8_UNORM, KILN_QUALITY_MAX);
    ep.dither = 1; /* kiln's strategy dithers RGBA (etc_dither_equals_cpu), the seed strategy does not */
    assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &ep, 0, buf, sizeof buf), KILN_OK);
    ep.gpu_strategy = 1;
    assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &ep, 0, buf, sizeof buf), KILN_ERR_UNSUPPORTED);
    assert_non_null(strstr(kiln_last_error(fx->gpu), "dither"));
    ep.gpu_strategy = 0;
    ep.dither = 0;
    ep.format = KILN_FORMAT_EAC_R11_UNORM;
    /* a subgroup size no device offers */
    assert_int_equal(kiln__gpu_encode(fx->gpu, &img, &ep, 3, buf, sizeof buf), KILN_ERR_UNSUPPORTED);
    kiln_image_free(&img);
    assert_int_equal(kt_gpu_validation_messages(fx->gpu), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(etc1_kiln_equals_cpu),
        cmocka_unit_test(etc2_kiln_equals_cpu),
        cmocka_unit_test(etc1_boxskip),
        cmocka_unit_test(eac_kiln_equals_cpu),
        cmocka_unit_test(eac_kiln_subgroup_sizes),
        cmocka_unit_test(eac_shader_setting),
        cmocka_unit_test(eac_seed_design),
        cmocka_unit_test(etc2_alpha_pass),
        cmocka_unit_test(eac_dither_equals_cpu),
        cmocka_unit_test(etc_dither_equals_cpu),
        cmocka_unit_test(etc2_fast_dither_planar),
        cmocka_unit_test(unsupported_paths),
    };
    if (getenv("KILN_TEST_FILTER")) cmocka_set_test_filter(getenv("KILN_TEST_FILTER"));
    return cmocka_run_group_tests(tests, setup, teardown);
}

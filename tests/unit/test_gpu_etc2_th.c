/* test_gpu_etc2_th.c - the ETC2 T / H pass on the GPU (src/gpu/gpu_etc2_th.c, shaders/enc_etc2_th.comp).
 *
 * For every block the state before T / H is built on the CPU (kiln__etc2_search_pre_th: the ETC1 modes and
 * planar), packed into kiln_etc2_gpu_block, run through kiln__gpu_etc2_th, and compared with the CPU's
 * result (kiln__etc2_search_th on the same state, packed; that pair is kiln__etc2_search, checked on one
 * image): the same 8 bytes and the same error, on crops of real textures (opaque, with real alpha, logos),
 * synthetic blocks built for T / H (two and three colour clusters, saturated colours whose palettes clamp,
 * grey ramps with an outlier, noise), a grey texture whose split costs tie, odd sizes, ETC2 RGB and RGB A1
 * (random and real alpha, two thresholds), perceptual weights on and off, at all four qualities, with both builds
 * of the shader (th_eval's pixel loops rolled, the default, and unrolled) and at every subgroup size the device can
 * require (the unrolled build). Fully transparent A1 blocks keep the CPU encoder's state (it does not search them).
 * The validation layer (KILN_VK_VALIDATION=1, set by the fixture) must stay silent.
 * Skipped without a Vulkan device or without shaderFloat64 / shaderInt64 (KILN_ERR_UNSUPPORTED). */
#include "support.h"
#include "codec/etc_enc.h"
#include "gpu/gpu.h"
#include "gpu/gpu_etc2_th.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct th_image {
    const char *what;
    uint32_t w, h;
    uint8_t *px; /* RGBA8 */
} th_image;

static void fetch(const th_image *im, uint32_t b, kiln_block *blk)
{
    const uint32_t bx = (im->w + 3) / 4, x0 = (b % bx) * 4, y0 = (b / bx) * 4;
    memset(blk, 0, sizeof *blk);
    for (uint32_t p = 0; p < 16; p++) {
        uint32_t x = x0 + (p & 3), y = y0 + (p >> 2);
        x = x < im->w ? x : im->w - 1;
        y = y < im->h ? y : im->h - 1;
        memcpy(blk->rgba8 + p * 4, im->px + ((size_t)y * im->w + x) * 4, 4);
    }
}

/* What the CPU encoder starts T / H from (pre) and ends with (post) for block b. */
static void cpu_states(const th_image *im, uint32_t b, const kiln_encode_params *params, int a1, int full,
                       kiln_etc2_gpu_block *pre, kiln_etc2_gpu_block *post)
{
    kiln_block blk;
    fetch(im, b, &blk);
    etc_src src;
    etc_sol sol;
    kiln__etc_src_init(&src, &blk, params, a1);
    memset(&sol, 0, sizeof sol);
    memset(pre, 0, sizeof *pre);
    if (a1 && src.nopaque == 0) {
        /* kiln__enc_etc2_rgb_a1: fully transparent, no search */
        sol.mode = ETC_MODE_DIFF;
        memset(sol.sel, 2, sizeof sol.sel);
        kiln__etc_pack(&sol, &src, pre->bytes);
        pre->err = 0;
        *post = *pre;
        return;
    }
    kiln__etc2_search_pre_th(&src, &sol);
    kiln__etc_pack(&sol, &src, pre->bytes);
    pre->err = sol.err;
    kiln__etc2_search_th(&src, &sol);
    memset(post, 0, sizeof *post);
    kiln__etc_pack(&sol, &src, post->bytes);
    post->err = sol.err;
    if (full) { /* the two halves are the CPU's whole search */
        etc_sol whole;
        memset(&whole, 0, sizeof whole);
        kiln__etc2_search(&src, &whole);
        uint8_t bytes[8];
        kiln__etc_pack(&whole, &src, bytes);
        assert_int_equal(whole.err, sol.err);
        assert_memory_equal(bytes, post->bytes, 8);
    }
}

/* Runs the pass on im and compares every block with the CPU; returns the blocks T / H improved. */
static double g_ms; /* kernel time summed (printed, never asserted) */

static uint32_t compare(kt_gpu_fixture *fx, const th_image *im, int quality, int perceptual, int a1, uint8_t threshold,
                        uint32_t sg, int full)
{
    kiln_encode_params params;
    kiln_encode_params_init(&params, a1 ? KILN_FORMAT_ETC2_RGB8A1_UNORM : KILN_FORMAT_ETC2_RGB8_UNORM, (kiln_quality)quality);
    params.perceptual = perceptual;
    params.alpha_threshold = threshold;
    const uint32_t nb = ((im->w + 3) / 4) * ((im->h + 3) / 4);
    kiln_etc2_gpu_block *gpu = calloc(nb, sizeof *gpu), *want = calloc(nb, sizeof *want);
    assert_non_null(gpu);
    assert_non_null(want);
    uint32_t improved = 0;
    for (uint32_t b = 0; b < nb; b++) {
        cpu_states(im, b, &params, a1, full, &gpu[b], &want[b]);
        improved += want[b].err < gpu[b].err;
    }
    double ms = -1.0;
    kiln_status st = kiln__gpu_etc2_th(fx->gpu, im->px, im->w, im->h, &params, a1, sg, gpu, &ms);
    if (st != KILN_OK) fail_msg("%s: kiln__gpu_etc2_th: %s", im->what, kiln_last_error(fx->gpu));
    assert_true(ms >= 0.0);
    g_ms += ms;
    uint32_t bad = 0;
    for (uint32_t b = 0; b < nb; b++) {
        if (gpu[b].err == want[b].err && !memcmp(gpu[b].bytes, want[b].bytes, 8) && gpu[b].flags == 0) continue;
        if (bad++ < 5)
            printf("%s q%d perceptual %d a1 %d thr %u sg %u: block %u: GPU err %u %02x%02x%02x%02x%02x%02x%02x%02x, CPU err %u "
                   "%02x%02x%02x%02x%02x%02x%02x%02x\n",
                   im->what, quality, perceptual, a1, threshold, sg, b, gpu[b].err, gpu[b].bytes[0], gpu[b].bytes[1],
                   gpu[b].bytes[2], gpu[b].bytes[3], gpu[b].bytes[4], gpu[b].bytes[5], gpu[b].bytes[6], gpu[b].bytes[7],
                   want[b].err, want[b].bytes[0], want[b].bytes[1], want[b].bytes[2], want[b].bytes[3], want[b].bytes[4],
                   want[b].bytes[5], want[b].bytes[6], want[b].bytes[7]);
    }
    free(gpu);
    free(want);
    if (bad) fail_msg("%s: %u of %u blocks differ from the CPU", im->what, bad, nb);
    return improved;
}

static int unsupported(kt_gpu_fixture *fx)
{
    /* a 1x1 probe: KILN_ERR_UNSUPPORTED when the device lacks 64-bit floats / integers */
    uint8_t px[4] = {1, 2, 3, 255};
    kiln_etc2_gpu_block blk;
    memset(&blk, 0, sizeof blk);
    kiln_encode_params params;
    kiln_encode_params_init(&params, KILN_FORMAT_ETC2_RGB8_UNORM, KILN_QUALITY_NORMAL);
    double ms;
    kiln_status st = kiln__gpu_etc2_th(fx->gpu, px, 1, 1, &params, 0, 0, &blk, &ms);
    if (st == KILN_ERR_UNSUPPORTED) {
        printf("note: %s\n", kiln_last_error(fx->gpu));
        return 1;
    }
    if (st != KILN_OK) fail_msg("probe: %s", kiln_last_error(fx->gpu));
    return 0;
}

/* ---------------------------------------------------------------- images */

static void load_crop(kt_gpu_fixture *fx, const char *file, uint32_t ox, uint32_t oy, uint32_t w, uint32_t h, th_image *im)
{
    kiln_image img;
    memset(&img, 0, sizeof img);
    assert_int_equal(kiln_image_load(fx->cpu, kt_testdata(file), &img), KILN_OK);
    assert_int_equal(img.type, KILN_PIXEL_U8);
    if (w == 0) w = img.width;
    if (h == 0) h = img.height;
    im->what = file;
    im->w = w;
    im->h = h;
    im->px = malloc((size_t)w * h * 4);
    assert_non_null(im->px);
    /* kiln_image storage is RGBA whatever img.channels says (grey: v, v, v, 255; RGB: alpha 255); the crops of RGB
     * images were read with a stride of 3 bytes before (helper etcfix, 2026-11-27) */
    const uint8_t *s = img.pixels;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            size_t si = (((size_t)(oy + y) % img.height) * img.width + (ox + x) % img.width) * 4u;
            memcpy(im->px + ((size_t)y * w + x) * 4, s + si, 4);
        }
    kiln_image_free(&img);
}

static uint8_t sat(int v) { return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v); }

/* Blocks built for T / H: per block one of two clusters, three clusters, saturated clusters (palettes clamp),
 * two clusters of near-grey colours, a grey ramp with an outlier, noise, flat; alpha varies by block (all
 * opaque, all transparent, a random mix, one or two transparent pixels). */
static void synth(kt_rng *rng, uint32_t w, uint32_t h, const char *what, th_image *im)
{
    im->what = what;
    im->w = w;
    im->h = h;
    im->px = malloc((size_t)w * h * 4);
    assert_non_null(im->px);
    for (uint32_t by = 0; by < (h + 3) / 4; by++)
        for (uint32_t bx = 0; bx < (w + 3) / 4; bx++) {
            uint32_t kind = kt_rng_u32(rng) % 7, akind = kt_rng_u32(rng) % 4;
            int col[3][3];
            for (int k = 0; k < 3; k++)
                for (int c = 0; c < 3; c++) {
                    int v = (int)(kt_rng_u32(rng) & 255u);
                    if (kind == 2) v = (kt_rng_u32(rng) & 1u) ? (int)(kt_rng_u32(rng) % 24u) : 255 - (int)(kt_rng_u32(rng) % 24u);
                    col[k][c] = v;
                }
            if (kind == 3) /* near-grey pair */
                for (int k = 0; k < 2; k++) {
                    int g = (int)(kt_rng_u32(rng) & 255u);
                    for (int c = 0; c < 3; c++) col[k][c] = sat(g + (int)(kt_rng_u32(rng) % 9u) - 4);
                }
            uint32_t outlier = kt_rng_u32(rng) % 16u, tr1 = kt_rng_u32(rng) % 16u, tr2 = kt_rng_u32(rng) % 16u;
            uint32_t split = kt_rng_u32(rng);
            for (uint32_t p = 0; p < 16; p++) {
                uint32_t x = bx * 4 + (p & 3), y = by * 4 + (p >> 2);
                if (x >= w || y >= h) continue;
                uint8_t *o = im->px + ((size_t)y * w + x) * 4;
                int noise = (int)(kt_rng_u32(rng) % 7u) - 3;
                int k = (split >> p & 1u) ? 1 : 0;
                if (kind == 1 && (split >> (p + 16) & 1u) && k) k = 2;
                for (int c = 0; c < 3; c++) {
                    int v;
                    switch (kind) {
                    case 0: case 1: case 2: case 3: v = col[k][c] + noise; break;
                    case 4: v = (p == outlier) ? col[0][c] : (int)(p * 15) + noise; break;
                    case 5: v = (int)(kt_rng_u32(rng) & 255u); break;
                    default: v = col[0][c]; break;
                    }
                    o[c] = sat(v);
                }
                uint8_t a = 255;
                if (akind == 1) a = (uint8_t)(kt_rng_u32(rng) % 100u);
                else if (akind == 2) a = (uint8_t)(kt_rng_u32(rng) & 255u);
                else if (akind == 3 && (p == tr1 || p == tr2)) a = 0;
                o[3] = a;
            }
        }
}

/* Alpha of a real RGB crop for the A1 runs: random per block as in synth(). */
static void random_alpha(kt_rng *rng, th_image *im)
{
    for (uint32_t i = 0; i < im->w * im->h; i++) im->px[i * 4 + 3] = (kt_rng_u32(rng) % 5u) ? 255 : (uint8_t)(kt_rng_u32(rng) & 255u);
}

/* ---------------------------------------------------------------- tests */

static void every_quality(void **state, int a1)
{
    kt_gpu_fixture *fx = *state;
    if (!fx->gpu) skip();
    if (unsupported(fx)) skip();
    kt_rng rng;
    kt_rng_seed(&rng, a1 ? 77 : 76);
    th_image ims[6];
    load_crop(fx, "ldr/stk_generic_rock_a_512.png", 200, 136, 36, 28, &ims[0]);
    load_crop(fx, "ldr/stkflag_TCPLogo_a_1024x512_rgba.png", 384, 192, 64, 24, &ims[1]);
    load_crop(fx, "ldr/stktex_directionSign_a_256_rgba.png", 96, 112, 40, 32, &ims[2]);
    load_crop(fx, "ldr/gimp_qube1_tiny_31x57.png", 0, 0, 0, 0, &ims[3]);
    synth(&rng, 48, 40, "synthetic 48x40", &ims[4]);
    synth(&rng, 18, 7, "synthetic 18x7", &ims[5]);
    if (a1) {
        random_alpha(&rng, &ims[0]);
        random_alpha(&rng, &ims[3]);
    }
    for (int q = KILN_QUALITY_FAST; q <= KILN_QUALITY_MAX; q++)
        for (int pw = 0; pw < 2; pw++) {
            uint32_t imp_real = 0, imp_synth = 0;
            g_ms = 0.0;
            for (int i = 0; i < 6; i++) {
                uint8_t thr = (uint8_t)(a1 && (i & 1) ? 200 : 128);
                uint32_t n = compare(fx, &ims[i], q, pw, a1, thr, 0, q == KILN_QUALITY_HIGH && i == 1);
                if (i < 4) imp_real += n;
                else imp_synth += n;
            }
            printf("%s quality %d perceptual %d: blocks improved by T/H: %u real, %u synthetic (kernel %.1f ms)\n",
                   a1 ? "RGB A1" : "RGB", q, pw, imp_real, imp_synth, g_ms);
            assert_true(imp_synth > 0); /* the pass has work to do (the test can fail) */
        }
    for (int i = 0; i < 6; i++) free(ims[i].px);
    assert_int_equal(kt_gpu_validation_messages(fx->gpu), 0);
}

static void rgb_every_quality(void **state) { every_quality(state, 0); }
static void a1_every_quality(void **state) { every_quality(state, 1); }

/* Every subgroup size the device can require (the shader uses none, the pipeline must still build and agree). */
static void subgroup_sizes(void **state)
{
    kt_gpu_fixture *fx = *state;
    if (!fx->gpu) skip();
    if (unsupported(fx)) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 5);
    th_image im;
    synth(&rng, 21, 13, "synthetic 21x13", &im);
    /* the unrolled build of the shader (the default; KILN_GPU_ETC2_TH_UNROLL=1) at every subgroup size the device can require
     * (each a pipeline to compile: lavapipe's take ~20 s, so the rolled build runs at the driver's choice only) */
    uint32_t sizes = kiln__gpu_subgroup_sizes(fx->gpu), first = 0;
    if (!sizes) printf("note: the device cannot require subgroup sizes\n");
    /* a device with one subgroup size (lavapipe: 8; the H100: 32) runs every pipeline at it: requiring it compiles the
     * default's pipelines again for the same code (lavapipe: ~6 s of CPU; CI time), so only several sizes are run */
    const int several = (sizes & (sizes - 1u)) != 0;
    if (sizes && !several) printf("note: one subgroup size (mask %u): the default pipelines cover it\n", sizes);
    setenv("KILN_GPU_ETC2_TH_UNROLL", "1", 1);
    for (uint32_t sg = 1; sg <= 128; sg <<= 1)
        if (sizes & sg) {
            if (!first) first = sg;
            if (!several) continue;
            compare(fx, &im, KILN_QUALITY_MAX, 1, 1, 128, sg, 0); /* (max only: a pipeline per quality setting) */
            compare(fx, &im, KILN_QUALITY_MAX, 0, 0, 200, sg, 0);
        }
    /* the rolled build (KILN_GPU_ETC2_TH_UNROLL=0, bench/ only; the other tests run the unrolled default): the same
     * bytes */
    setenv("KILN_GPU_ETC2_TH_UNROLL", "0", 1);
    th_image logo;
    load_crop(fx, "ldr/stkflag_TCPLogo_a_1024x512_rgba.png", 384, 192, 32, 24, &logo);
    uint32_t improved = 0;
    /* at fast and max (normal / high need a pipeline set of their own: left out for CI time) */
    for (int q = kt_gpu_light() ? KILN_QUALITY_MAX : KILN_QUALITY_FAST; q <= KILN_QUALITY_MAX; q += 3) /* light run: max */
        for (int a1 = 0; a1 < 2; a1++) {
            improved += compare(fx, &im, q, (q + a1) & 1, a1, 128, first, 0);
            improved += compare(fx, &logo, q, a1, a1, 128, first, 0);
        }
    unsetenv("KILN_GPU_ETC2_TH_UNROLL");
    free(logo.px);
    assert_true(improved > 0);
    /* 1x1 and 1xN images (edge replication) */
    th_image one = {"1x1", 1, 1, im.px};
    compare(fx, &one, KILN_QUALITY_MAX, 0, 0, 128, 0, 0);
    th_image col = {"1x13", 1, 13, im.px};
    compare(fx, &col, KILN_QUALITY_HIGH, 1, 1, 128, 0, 0);
    free(im.px);
    /* bad arguments */
    kiln_encode_params params;
    kiln_encode_params_init(&params, KILN_FORMAT_ETC2_RGB8_UNORM, KILN_QUALITY_NORMAL);
    kiln_etc2_gpu_block blk;
    memset(&blk, 0, sizeof blk);
    uint8_t px[4] = {0, 0, 0, 0};
    double ms;
    assert_int_equal(kiln__gpu_etc2_th(fx->gpu, px, 0, 1, &params, 0, 0, &blk, &ms), KILN_ERR_INVALID_ARGUMENT);
    assert_true(strlen(kiln_last_error(fx->gpu)) > 0);
    assert_int_equal(kiln__gpu_etc2_th(fx->gpu, NULL, 1, 1, &params, 0, 0, &blk, &ms), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kt_gpu_validation_messages(fx->gpu), 0);
}

/* A grey image (R = G = B), where the 2-means costs of two splits can tie in exact arithmetic: block (97, 101) of
 * grey/stk_generic_rock_a_gloss_R_512_grey.png at normal, where the split costs 8998.0000000000018 (group means 26 and
 * 356 / 6) and 8998 must rank as the CPU ranks them. The group mean 356 / 6 came out one ulp low on lavapipe (its
 * fma on doubles rounds twice, and div_int's correction relied on a fused one), the costs tied, the stable sort kept
 * the other split first and the block stayed ETC1 (error 1050) where the CPU takes T (942). The default pipelines of
 * every quality (rgb_every_quality builds them), on an 8x8 crop around the block and a 32x32 crop of the same image. */
static void grey_split_tie(void **state)
{
    kt_gpu_fixture *fx = *state;
    if (!fx->gpu) skip();
    if (unsupported(fx)) skip();
    th_image ims[2];
    load_crop(fx, "grey/stk_generic_rock_a_gloss_R_512_grey.png", 384, 400, 8, 8, &ims[0]);
    load_crop(fx, "grey/stk_generic_rock_a_gloss_R_512_grey.png", 96, 160, 32, 32, &ims[1]);
    for (int q = KILN_QUALITY_FAST; q <= KILN_QUALITY_MAX; q++)
        for (int i = 0; i < 2; i++) compare(fx, &ims[i], q, 0, 0, 128, 0, 0);
    for (int i = 0; i < 2; i++) free(ims[i].px);
    assert_int_equal(kt_gpu_validation_messages(fx->gpu), 0);
}

/* The search with several invocations per block (KILN_GPU_ETC2_TH_LANES, enc_etc2_th_lanes.comp; the other tests run
 * the default) and the partitions from the gate or from every lane (KILN_GPU_ETC2_TH_PREP), and today's one invocation
 * per block (lanes 1, prep 0): the same bytes as the CPU at every quality, RGB and A1, perceptual or not. */
static void lane_counts(void **state)
{
    kt_gpu_fixture *fx = *state;
    if (!fx->gpu) skip();
    if (unsupported(fx)) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 9);
    th_image ims[4];
    synth(&rng, 40, 36, "synthetic 40x36", &ims[0]);
    load_crop(fx, "ldr/stkflag_TCPLogo_a_1024x512_rgba.png", 384, 192, 32, 24, &ims[1]);
    load_crop(fx, "ldr/stk_generic_rock_a_512.png", 100, 60, 28, 20, &ims[2]);
    /* blue = red in every pixel: without perceptual weights, max's +-1 steps of red and of blue (neighbours 1 and 5,
     * one lane at 4 lanes) tie, and the lanes must keep the CPU's first */
    synth(&rng, 64, 64, "synthetic blue = red 64x64", &ims[3]);
    for (uint32_t i = 0; i < 64u * 64u; i++) ims[3].px[i * 4 + 2] = ims[3].px[i * 4];
    /* (1, 1) is the default the other tests run (here for the blue = red image only); each other configuration is a
     * pipeline per quality setting (normal: FASTPIX / DEDUP / RECENT off; max: on), which lavapipe takes 1-4 s of CPU to
     * compile and which dominate this file's run time, so the lane counts run at one of the two each (CI time, helper
     * etc2max, 2026-11-26): 4 lanes with the gate's partitions at max, 16 lanes sorting themselves at normal (8 lanes,
     * the same code between them, no longer runs); the one-lane shader (1, 0) at both. Quality bits: 1 normal, 2 max. */
    /* (helper etc2th, 2026-11-26: 4 and 16 lanes removed from the library - slower on the H100 - and so from here; (1, 1) at
     * max is now the pooled search, whose +-1 neighbours are reduced like the lanes' were: the blue = red image tests that) */
    static const char *cfg[][2] = {{"1", "0"}, {"1", "1"}};
    static const int cfg_q[] = {3, 2};
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
        setenv("KILN_GPU_ETC2_TH_LANES", cfg[c][0], 1);
        setenv("KILN_GPU_ETC2_TH_PREP", cfg[c][1], 1);
        uint32_t improved = 0;
        g_ms = 0.0;
        for (int q = KILN_QUALITY_NORMAL; q <= KILN_QUALITY_MAX; q += (q == KILN_QUALITY_NORMAL ? 2 : 1)) {
            if (!(cfg_q[c] & (q == KILN_QUALITY_MAX ? 2 : 1))) continue;
            for (int a1 = 0; a1 < 2; a1++)
                for (int i = c == 1 ? 3 : 0; i < 4; i++)
                    improved += compare(fx, &ims[i], q, i == 3 ? 0 : (i + a1) & 1, a1, a1 && i == 1 ? 200 : 128, 0, 0);
        }
        printf("lanes %s prep %s: blocks improved by T/H %u (kernel %.1f ms)\n", cfg[c][0], cfg[c][1], improved, g_ms);
        assert_true(improved > 0);
    }
    /* bad settings fail with a message */
    kiln_encode_params params;
    kiln_encode_params_init(&params, KILN_FORMAT_ETC2_RGB8_UNORM, KILN_QUALITY_MAX);
    kiln_etc2_gpu_block blk;
    memset(&blk, 0, sizeof blk);
    double ms;
    setenv("KILN_GPU_ETC2_TH_LANES", "3", 1);
    assert_int_equal(kiln__gpu_etc2_th(fx->gpu, ims[0].px, 4, 4, &params, 0, 0, &blk, &ms), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(kiln_last_error(fx->gpu), "KILN_GPU_ETC2_TH_LANES"));
    unsetenv("KILN_GPU_ETC2_TH_LANES");
    setenv("KILN_GPU_ETC2_TH_PREP", "2", 1);
    assert_int_equal(kiln__gpu_etc2_th(fx->gpu, ims[0].px, 4, 4, &params, 0, 0, &blk, &ms), KILN_ERR_INVALID_ARGUMENT);
    unsetenv("KILN_GPU_ETC2_TH_PREP");
    for (int i = 0; i < 4; i++) free(ims[i].px);
    assert_int_equal(kt_gpu_validation_messages(fx->gpu), 0);
}

/* The search variants of helper etc2max (KILN_GPU_ETC2_TH_FLAT / _FASTPIX / _CHECK / _CACHE / _PACKED; the other tests run
 * the library's defaults): the CPU's bytes at high and max, RGB and A1, perceptual or not, on real crops (a logo with many
 * T / H blocks, rock) and blocks built for T / H (two / three clusters, saturated clusters whose palettes clamp, near-grey
 * pairs) - both values of every on / off knob, and CHECK 2, 4, 16, workgroup sizes 32, 64, 128 (KILN_GPU_ETC2_TH_WG), shared memory on / off (_SMEM), in a few pipelines (each costs lavapipe seconds to compile). */
static void search_variants(void **state)
{
    kt_gpu_fixture *fx = *state;
    if (!fx->gpu) skip();
    if (unsupported(fx)) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 4242);
    th_image ims[3];
    synth(&rng, 28, 24, "synthetic 28x24", &ims[0]);
    load_crop(fx, "ldr/stkflag_TCPLogo_a_1024x512_rgba.png", 360, 184, 32, 20, &ims[1]);
    load_crop(fx, "ldr/stk_generic_rock_a_512.png", 300, 20, 16, 12, &ims[2]);
    /* flat, fastpix, check, cache, packed, workgroup size, shared memory */
    static const char *cfg[][7] = {{"0", "0", "4", "1", "1", "64", "1"}, {"1", "1", "16", "1", "0", "128", "0"},
                                   {"0", "1", "2", "1", "0", "32", "0"}};
    static const char *names[7] = {"KILN_GPU_ETC2_TH_FLAT",   "KILN_GPU_ETC2_TH_FASTPIX", "KILN_GPU_ETC2_TH_CHECK", "KILN_GPU_ETC2_TH_CACHE",
                                   "KILN_GPU_ETC2_TH_PACKED", "KILN_GPU_ETC2_TH_WG",      "KILN_GPU_ETC2_TH_SMEM"};
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
        if (kt_gpu_light() && c != 2) continue; /* light run: one setting of the knobs (the same host code) */
        for (int k = 0; k < 7; k++) setenv(names[k], cfg[c][k], 1);
        uint32_t improved = 0;
        g_ms = 0.0;
        /* shared memory is slow on lavapipe (~100x): that configuration runs the T/H-built image at max only; the
         * others one quality each (a pipeline per quality setting, 1-4 s of lavapipe CPU each: CI time): the second at
         * max (DEDUP / RECENT on), the third at high (off) */
        const int smem = cfg[c][6][0] == '1';
        const int qlo = c == 2 ? KILN_QUALITY_HIGH : KILN_QUALITY_MAX, qhi = c == 2 ? KILN_QUALITY_HIGH : KILN_QUALITY_MAX;
        for (int q = qlo; q <= qhi; q++)
            for (int a1 = 0; a1 < 2; a1++)
                for (int i = 0; i < (smem ? 1 : 3); i++)
                    improved += compare(fx, &ims[i], q, (i + a1 + q) & 1, a1, a1 && i == 1 ? 200 : 128, 0, 0);
        printf("flat %s fastpix %s check %s cache %s packed %s wg %s smem %s: blocks improved by T/H %u (kernel %.1f ms)\n",
               cfg[c][0], cfg[c][1], cfg[c][2], cfg[c][3], cfg[c][4], cfg[c][5], cfg[c][6], improved, g_ms);
        assert_true(improved > 0);
    }
    for (int k = 0; k < 7; k++) unsetenv(names[k]);
    /* bad settings fail with a message naming the knob */
    kiln_encode_params params;
    kiln_encode_params_init(&params, KILN_FORMAT_ETC2_RGB8_UNORM, KILN_QUALITY_MAX);
    kiln_etc2_gpu_block blk;
    memset(&blk, 0, sizeof blk);
    double ms;
    static const char *bad[7] = {"2", "x", "3", "-1", "10", "48", "5"};
    for (int k = 0; k < 7; k++) {
        setenv(names[k], bad[k], 1);
        assert_int_equal(kiln__gpu_etc2_th(fx->gpu, ims[0].px, 4, 4, &params, 0, 0, &blk, &ms), KILN_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(kiln_last_error(fx->gpu), names[k]));
        unsetenv(names[k]);
    }
    for (int i = 0; i < 3; i++) free(ims[i].px);
    assert_int_equal(kt_gpu_validation_messages(fx->gpu), 0);
}

/* The exact work reductions of helper etc2fast (KILN_GPU_ETC2_TH_DEDUP: partitions whose quantised centres (a, b) repeat an
 * earlier partition's are not searched again; KILN_GPU_ETC2_TH_RECENT: a recentring round that gives the local best's colours
 * again stops the recentring; both on by default at max, so the other tests also run them, lane_counts with 4, 8 and 16 lanes):
 * the CPU's bytes with both off (the code before, at high: max with them off no longer runs, CI time), both on (the
 * default: one lane, the gate's partitions) and RECENT in the one-invocation shader (PREP 0), at max (RGB and A1), on a
 * grass crop (most partitions repeat there) and two
 * logo crops where a wrong rule shows: a DEDUP key of a alone (ignoring b) changes 8 blocks of the first, a RECENT test of
 * the first colour alone 8 of the second (found with a CPU copy of the search; those mutations of the shader fail here). */
static void exact_reductions(void **state)
{
    kt_gpu_fixture *fx = *state;
    if (!fx->gpu) skip();
    if (unsupported(fx)) skip();
    th_image ims[3];
    load_crop(fx, "ldr/stk_generic_grassB_1024.png", 500, 300, 32, 24, &ims[0]);
    load_crop(fx, "ldr/stkflag_TCPLogo_a_1024x512_rgba.png", 768, 256, 32, 32, &ims[1]);
    load_crop(fx, "ldr/stkflag_TCPLogo_a_1024x512_rgba.png", 672, 384, 32, 32, &ims[2]);
    /* dedup, recent, lanes, prep */
    static const char *cfg[][4] = {{"0", "0", "1", "1"}, {"1", "1", "1", "1"}, {"1", "1", "1", "0"}};
    static const char *names[4] = {"KILN_GPU_ETC2_TH_DEDUP", "KILN_GPU_ETC2_TH_RECENT", "KILN_GPU_ETC2_TH_LANES",
                                   "KILN_GPU_ETC2_TH_PREP"};
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
        for (int k = 0; k < 4; k++) setenv(names[k], cfg[c][k], 1);
        uint32_t improved = 0;
        g_ms = 0.0;
        /* each configuration at the quality where it is the library's (or lane_counts') pipeline, so that this test
         * compiles none of its own (lavapipe: 2-4 s of CPU each; CI time): the rules off at high, on at max */
        const int qc = c == 0 ? KILN_QUALITY_HIGH : KILN_QUALITY_MAX;
        for (int q = qc; q <= qc; q++)
            for (int a1 = 0; a1 < (q == KILN_QUALITY_MAX ? 2 : 1); a1++)
                for (int i = 0; i < 3; i++) improved += compare(fx, &ims[i], q, 0, a1, 128, 0, 0);
        printf("dedup %s recent %s lanes %s prep %s: blocks improved by T/H %u (kernel %.1f ms)\n", cfg[c][0], cfg[c][1],
               cfg[c][2], cfg[c][3], improved, g_ms);
        assert_true(improved > 0);
    }
    for (int k = 0; k < 4; k++) unsetenv(names[k]);
    kiln_encode_params params;
    kiln_encode_params_init(&params, KILN_FORMAT_ETC2_RGB8_UNORM, KILN_QUALITY_MAX);
    kiln_etc2_gpu_block blk;
    memset(&blk, 0, sizeof blk);
    double ms;
    /* (and KILN_GPU_ETC2_TH_POOL, helper etc2th's pooled search: the default at max, so every test above runs it there) */
    static const char *knobs[3] = {"KILN_GPU_ETC2_TH_DEDUP", "KILN_GPU_ETC2_TH_RECENT", "KILN_GPU_ETC2_TH_POOL"};
    for (int k = 0; k < 3; k++) {
        setenv(knobs[k], "2", 1);
        assert_int_equal(kiln__gpu_etc2_th(fx->gpu, ims[0].px, 4, 4, &params, 0, 0, &blk, &ms), KILN_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(kiln_last_error(fx->gpu), knobs[k]));
        unsetenv(knobs[k]);
    }
    for (int i = 0; i < 3; i++) free(ims[i].px);
    assert_int_equal(kt_gpu_validation_messages(fx->gpu), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rgb_every_quality),
        cmocka_unit_test(a1_every_quality),
        cmocka_unit_test(grey_split_tie),
        cmocka_unit_test(subgroup_sizes),
        cmocka_unit_test(lane_counts),
        cmocka_unit_test(search_variants),
        cmocka_unit_test(exact_reductions),
    };
    if (getenv("KILN_TEST_FILTER")) cmocka_set_test_filter(getenv("KILN_TEST_FILTER"));
    return cmocka_run_group_tests(tests, kt_gpu_setup, kt_gpu_teardown);
}

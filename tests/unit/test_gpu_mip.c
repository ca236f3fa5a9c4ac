/* test_gpu_mip.c - the GPU mipmap strategies (src/gpu/gpu_mip.c, shaders/mip_tile.comp) against the
 * CPU reference (src/mip, kiln_mip_generate on a CPU context): every strategy x sizes that hit every
 * path (1x1, 1xN, Nx1, 3x5, 2047x3, 64x64, 255x129, 256x256, 512x96, 16384x4: even and odd axes,
 * axes reaching 1 early, stages with and without subgroup shuffles, multi-stage single pass) x
 * RGBA8 sRGB with alpha (alpha-weighted, transparent texels included), RGBA8 linear opaque and
 * RGBA32F with alpha, at every subgroup size the device lets us require. Contract (mip.h): every
 * 8-bit value within 1 LSB, floats within 2^-12 (1/16 of an 8-bit step). Output buffers start
 * filled with a poison byte, so a texel no workgroup writes fails. Also: the public API routes to
 * the GPU (kiln_mip_generate, kiln_mip_texture_layers batch, RGBA16F), falls back to the CPU under
 * AUTO for what the GPU does not do, refuses baseline; blit is checked on opaque powers of two (where
 * it is the exact box) and its odd-size difference printed; the validation layer stays silent.
 * Skipped when there is no Vulkan device (lavapipe counts: the backend is forced to VULKAN). */
#include "support.h"
#include "gpu/gpu.h"
#include "gpu/gpu_mip.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef kt_gpu_fixture fixture;

enum { MODE_SRGB_ALPHA = KT_MIP_SRGB_ALPHA, MODE_LINEAR_OPAQUE = KT_MIP_LINEAR_OPAQUE, MODE_F32_ALPHA = KT_MIP_F32_ALPHA, NMODES = KT_MIP_NMODES };
static const char *mode_name[] = {"rgba8-srgb-alpha", "rgba8-linear", "rgba32f-alpha"};

static void make_image(kt_rng *rng, int mode, uint32_t w, uint32_t h, kiln_image *img)
{
    kt_mip_test_image(rng, mode, w, h, img);
}

static int has_alpha(const kiln_image *img)
{
    size_t n = (size_t)img->width * img->height;
    for (size_t i = 0; i < n; i++) {
        if (img->type == KILN_PIXEL_U8 ? ((const uint8_t *)img->pixels)[i * 4 + 3] != 255
                                       : ((const float *)img->pixels)[i * 4 + 3] != 1.0f)
            return 1;
    }
    return 0;
}

/* Compares level l of a GPU result with the CPU reference; returns the worst difference in LSB
 * (U8) or in units of 2^-12 (F32). */
static double level_diff(const kiln_image *ref, const uint8_t *got, int f32)
{
    size_t n = (size_t)ref->width * ref->height * 4;
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d;
        if (f32) {
            float a = ((const float *)ref->pixels)[i], b;
            memcpy(&b, got + i * 4, 4);
            d = isnan(b) ? 1e9 : fabs((double)a - (double)b) * 4096.0;
        } else {
            d = abs((int)((const uint8_t *)ref->pixels)[i] - (int)got[i]);
        }
        if (d > worst) worst = d;
    }
    return worst;
}

#ifndef KILN_TEST_GPU_MIP_BLIT
static const uint32_t sizes[][2] = {{1, 1},     {1, 37},   {29, 1},    {3, 5},   {2047, 3},
                                    {64, 64},   {255, 129}, {256, 256}, {512, 96}, {16384, 4}};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static const int strategies[] = {KILN_MIP_STRATEGY_PER_LEVEL, KILN_MIP_STRATEGY_SUBGROUP, KILN_MIP_STRATEGY_PYRAMID,
                                 KILN_MIP_STRATEGY_SINGLE_PASS, KILN_MIP_STRATEGY_AUTO};
static const char *strategy_names[] = {"per-level", "subgroup", "pyramid", "single-pass", "auto"};
#define NSTRATEGIES (sizeof strategies / sizeof strategies[0])
#endif

/* Runs kiln__gpu_mip for `count` images and checks every level against the CPU reference. */
static void check_batch(fixture *fx, const kiln_image *imgs, const kiln_image *refs, uint32_t count, int mode,
                        int strategy, const char *sname, uint32_t subgroup)
{
    const uint32_t W = imgs[0].width, H = imgs[0].height, L = kiln_mip_level_count(W, H);
    const int f32 = mode == MODE_F32_ALPHA;
    const size_t bpt = f32 ? 16 : 4;
    uint8_t **dst = calloc((size_t)count * L, sizeof *dst);
    uint8_t *weighted = calloc(count, 1);
    assert_non_null(dst);
    assert_non_null(weighted);
    for (uint32_t i = 0; i < count; i++) {
        weighted[i] = (uint8_t)has_alpha(&imgs[i]);
        for (uint32_t l = 1; l < L; l++) {
            size_t bytes = (size_t)kiln_level_dim(W, l) * kiln_level_dim(H, l) * bpt;
            dst[(size_t)i * L + l] = malloc(bytes);
            assert_non_null(dst[(size_t)i * L + l]);
            memset(dst[(size_t)i * L + l], 0xA7, bytes); /* poison: NaN-ish floats, odd bytes */
        }
    }
    kiln__gpu_mip_job job = {.images = imgs, .count = count, .levels = L, .decode_srgb = mode == MODE_SRGB_ALPHA,
                             .out_srgb = mode == MODE_SRGB_ALPHA, .out_kind = f32 ? 4 : 1, .weighted = weighted,
                             .dst = dst, .strategy = strategy, .subgroup_size = subgroup};
    kiln_status st = kiln__gpu_mip(fx->gpu, &job);
    if (st != KILN_OK) fail_msg("%s %ux%u x%u %s sg %u: %s", sname, W, H, count, mode_name[mode], subgroup,
                                kiln_last_error(fx->gpu));
    double blit_worst = 0.0;
    for (uint32_t i = 0; i < count; i++) {
        const kiln_image *ref = refs + (size_t)i * L;
        for (uint32_t l = 1; l < L; l++) {
            double d = level_diff(&ref[l], dst[(size_t)i * L + l], f32);
            if (d > blit_worst) blit_worst = d;
            if (d > (strategy == KILN_MIP_STRATEGY_BLIT ? 1.0 + l : 1.0))
                fail_msg("%s %ux%u image %u/%u %s subgroup %u: level %u (%ux%u) differs by %.3g %s", sname, W, H, i,
                         count, mode_name[mode], subgroup, l, ref[l].width, ref[l].height, d,
                         f32 ? "x 2^-12" : "LSB");
        }
        for (uint32_t l = 1; l < L; l++) free(dst[(size_t)i * L + l]);
    }
    if (strategy == KILN_MIP_STRATEGY_BLIT)
        print_message("note: blit %ux%u x%u %s: worst %.0f LSB\n", W, H, count, mode_name[mode], blit_worst);
    free(dst);
    free(weighted);
}

/* CPU references of `count` images: count * levels images (free with free_refs). */
static kiln_image *make_refs(fixture *fx, const kiln_image *imgs, uint32_t count)
{
    uint32_t L = kiln_mip_level_count(imgs[0].width, imgs[0].height);
    kiln_image *refs = calloc((size_t)count * L, sizeof *refs);
    assert_non_null(refs);
    for (uint32_t i = 0; i < count; i++) {
        uint32_t n = L;
        assert_int_equal(kiln_mip_generate(fx->cpu, &imgs[i], NULL, refs + (size_t)i * L, &n), KILN_OK);
        assert_int_equal(n, L);
    }
    return refs;
}

static void free_refs(kiln_image *refs, const kiln_image *imgs, uint32_t count)
{
    uint32_t L = kiln_mip_level_count(imgs[0].width, imgs[0].height);
    for (size_t i = 0; i < (size_t)count * L; i++) kiln_image_free(&refs[i]);
    free(refs);
}

#ifndef KILN_TEST_GPU_MIP_BLIT
/* Every subgroup size pipelines may require (0 = the driver's choice when it cannot be controlled). */
static uint32_t subgroup_list(fixture *fx, uint32_t *out)
{
    uint32_t mask = kiln__gpu_subgroup_sizes(fx->gpu), n = 0;
    for (uint32_t s = 4; s <= 128; s <<= 1)
        if (mask & s) out[n++] = s;
    if (n == 0) out[n++] = 0;
    return n;
}

static void every_strategy_size_and_mode(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 5);
    uint32_t sg[16], nsg = subgroup_list(fx, sg);
    for (size_t si = 0; si < NSIZES; si++) {
        for (int mode = 0; mode < NMODES; mode++) {
            /* sanitised build (ASan's time; its purpose is the host code): one pixel mode per size, in turn */
            if (kt_gpu_light() && (size_t)mode != si % NMODES) continue;
            kiln_image img;
            make_image(&rng, mode, sizes[si][0], sizes[si][1], &img);
            kiln_image *refs = make_refs(fx, &img, 1);
            for (size_t k = 0; k + 1 < NSTRATEGIES; k++) /* AUTO (= pyramid): checked in batches, public_api */
                for (uint32_t g = 0; g < nsg; g++)
                    check_batch(fx, &img, refs, 1, mode, strategies[k], strategy_names[k], sg[g]);
            free_refs(refs, &img, 1);
            kiln_image_free(&img);
        }
    }
}

static void batches(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 77);
    static const uint32_t bs[][3] = {{32, 32, 7}, {37, 23, 5}, {128, 64, 3}};
    for (size_t b = 0; b < 3; b++) {
        kiln_image imgs[8];
        for (uint32_t i = 0; i < bs[b][2]; i++) make_image(&rng, i % 2 ? MODE_LINEAR_OPAQUE : MODE_SRGB_ALPHA, bs[b][0], bs[b][1], &imgs[i]);
        /* one colour space per batch: make them all sRGB-tagged (opaque ones then have no alpha) */
        for (uint32_t i = 0; i < bs[b][2]; i++) imgs[i].srgb = 1;
        kiln_image *refs = make_refs(fx, imgs, bs[b][2]);
        for (size_t k = 0; k < NSTRATEGIES; k++)
            check_batch(fx, imgs, refs, bs[b][2], MODE_SRGB_ALPHA, strategies[k], strategy_names[k], 0);
        free_refs(refs, imgs, bs[b][2]);
        for (uint32_t i = 0; i < bs[b][2]; i++) kiln_image_free(&imgs[i]);
    }
}

/* The public API: kiln_mip_generate / kiln_mip_texture_layers on a Vulkan context use the GPU and
 * agree with the CPU context; AUTO falls back for the quality filters; blit / baseline refused. */
static void public_api(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 9);
    kiln_image img;
    make_image(&rng, MODE_SRGB_ALPHA, 67, 40, &img);
    kiln_mip_params p;
    kiln_mip_params_init(&p);
    char union_was[8] = "";
    if (getenv("KILN_GPU_MIP_SPEC_UNION")) snprintf(union_was, sizeof union_was, "%s", getenv("KILN_GPU_MIP_SPEC_UNION"));
    unsetenv("KILN_GPU_MIP_SPEC_UNION"); /* the pipelines as the library specialises them (main sets it) */
    for (int s = KILN_MIP_STRATEGY_AUTO; s <= KILN_MIP_STRATEGY_SINGLE_PASS; s++) {
        if (s == KILN_MIP_STRATEGY_BLIT) continue;
        p.strategy = (kiln_mip_strategy)s;
        kiln_image a[KILN_MAX_LEVELS], b[KILN_MAX_LEVELS];
        uint32_t na = KILN_MAX_LEVELS, nb = KILN_MAX_LEVELS;
        fx->gpu->last_gpu_ms = -1.0;
        assert_int_equal(kiln_mip_generate(fx->gpu, &img, &p, a, &na), KILN_OK);
        assert_true(fx->gpu->last_gpu_ms >= 0.0); /* the GPU ran */
        assert_int_equal(kiln_mip_generate(fx->cpu, &img, &p, b, &nb), KILN_OK);
        assert_int_equal(na, nb);
        assert_memory_equal(a[0].pixels, b[0].pixels, (size_t)67 * 40 * 4);
        for (uint32_t l = 1; l < na; l++) assert_true(level_diff(&b[l], a[l].pixels, 0) <= 1.0);
        for (uint32_t l = 0; l < na; l++) {
            kiln_image_free(&a[l]);
            kiln_image_free(&b[l]);
        }
    }
    /* explicit baseline: refused with a message */
    kiln_image lv[KILN_MAX_LEVELS];
    uint32_t n = KILN_MAX_LEVELS;
    p.strategy = KILN_MIP_STRATEGY_BASELINE;
    assert_int_equal(kiln_mip_generate(fx->gpu, &img, &p, lv, &n), KILN_ERR_UNSUPPORTED);
    assert_non_null(strstr(kiln_last_error(fx->gpu), "baseline"));
    n = KILN_MAX_LEVELS;
    p.strategy = (kiln_mip_strategy)99;
    assert_int_equal(kiln_mip_generate(fx->gpu, &img, &p, lv, &n), KILN_ERR_INVALID_ARGUMENT);
    /* explicit strategy + a CPU-only filter: refused; AUTO: CPU fallback, same bytes as the CPU */
    p.filter = KILN_MIP_FILTER_KAISER;
    p.strategy = KILN_MIP_STRATEGY_PYRAMID;
    n = KILN_MAX_LEVELS;
    assert_int_equal(kiln_mip_generate(fx->gpu, &img, &p, lv, &n), KILN_ERR_UNSUPPORTED);
    p.strategy = KILN_MIP_STRATEGY_AUTO;
    kiln_texture ta, tb;
    assert_int_equal(kiln_mip_texture(fx->gpu, &img, &p, KILN_FORMAT_RGBA8_SRGB, &ta), KILN_OK);
    assert_int_equal(kiln_mip_texture(fx->cpu, &img, &p, KILN_FORMAT_RGBA8_SRGB, &tb), KILN_OK);
    assert_int_equal(ta.data_size, tb.data_size);
    assert_memory_equal(ta.data, tb.data, ta.data_size);
    kiln_texture_free(&ta);
    kiln_texture_free(&tb);
    kiln_image_free(&img);

    /* a 6-layer array in one GPU batch, RGBA8 and RGBA16F, against the CPU texture */
    kiln_mip_params_init(&p);
    kiln_image layers[6];
    for (int i = 0; i < 6; i++) make_image(&rng, MODE_SRGB_ALPHA, 45, 30, &layers[i]);
    static const kiln_format fmts[] = {KILN_FORMAT_RGBA8_SRGB, KILN_FORMAT_RGBA16F, KILN_FORMAT_RGBA32F};
    for (int f = 0; f < 3; f++) {
        fx->gpu->last_gpu_ms = -1.0;
        assert_int_equal(kiln_mip_texture_layers(fx->gpu, layers, 6, 1, 1, &p, fmts[f], &ta), KILN_OK);
        assert_true(fx->gpu->last_gpu_ms >= 0.0);
        assert_int_equal(kiln_mip_texture_layers(fx->cpu, layers, 6, 1, 1, &p, fmts[f], &tb), KILN_OK);
        assert_int_equal(ta.data_size, tb.data_size);
        for (size_t i = 0; i < ta.data_size;) {
            if (f == 0) {
                assert_true(abs((int)ta.data[i] - (int)tb.data[i]) <= 1);
                i++;
            } else if (f == 1) {
                uint16_t ha, hb;
                memcpy(&ha, ta.data + i, 2);
                memcpy(&hb, tb.data + i, 2);
                assert_true(abs((int)ha - (int)hb) <= 1); /* 1 ulp of a half (values in [0,1]) */
                i += 2;
            } else {
                float a, b;
                memcpy(&a, ta.data + i, 4);
                memcpy(&b, tb.data + i, 4);
                assert_true(fabs((double)a - (double)b) <= 1.0 / 4096.0);
                i += 4;
            }
        }
        kiln_texture_free(&ta);
        kiln_texture_free(&tb);
    }
    for (int i = 0; i < 6; i++) kiln_image_free(&layers[i]);
    if (union_was[0]) setenv("KILN_GPU_MIP_SPEC_UNION", union_was, 1);
}

/* All levels of `count` images from kiln__gpu_mip with KILN_GPU_MIP_FAST=fast_env (NULL: unset), one buffer. */
static uint8_t *run_levels(fixture *fx, const kiln_image *imgs, uint32_t count, int mode, int strategy,
                           const char *fast_env, size_t *bytes)
{
    const uint32_t W = imgs[0].width, H = imgs[0].height, L = kiln_mip_level_count(W, H);
    const int f32 = mode == MODE_F32_ALPHA;
    const size_t bpt = f32 ? 16 : 4;
    size_t total = 0;
    for (uint32_t l = 1; l < L; l++) total += (size_t)kiln_level_dim(W, l) * kiln_level_dim(H, l) * bpt;
    total *= count;
    uint8_t *all = malloc(total ? total : 1);
    uint8_t **dst = calloc((size_t)count * L, sizeof *dst);
    uint8_t *weighted = calloc(count, 1);
    assert_non_null(all);
    assert_non_null(dst);
    assert_non_null(weighted);
    memset(all, 0xA7, total);
    size_t off = 0;
    for (uint32_t i = 0; i < count; i++) {
        weighted[i] = (uint8_t)has_alpha(&imgs[i]);
        for (uint32_t l = 1; l < L; l++) {
            dst[(size_t)i * L + l] = all + off;
            off += (size_t)kiln_level_dim(W, l) * kiln_level_dim(H, l) * bpt;
        }
    }
    if (fast_env) setenv("KILN_GPU_MIP_FAST", fast_env, 1);
    else unsetenv("KILN_GPU_MIP_FAST");
    kiln__gpu_mip_job job = {.images = imgs, .count = count, .levels = L, .decode_srgb = mode == MODE_SRGB_ALPHA,
                             .out_srgb = mode == MODE_SRGB_ALPHA, .out_kind = f32 ? 4 : 1, .weighted = weighted,
                             .dst = dst, .strategy = strategy};
    kiln_status st = kiln__gpu_mip(fx->gpu, &job);
    unsetenv("KILN_GPU_MIP_FAST");
    if (st != KILN_OK) fail_msg("%ux%u x%u fast=%s: %s", W, H, count, fast_env ? fast_env : "default", kiln_last_error(fx->gpu));
    free(dst);
    free(weighted);
    *bytes = total;
    return all;
}

/* The fast box path (shaders/mip_fast2.comp: even stages on large levels, mip_fast.comp on small ones;
 * mip_fast_level.comp: odd levels one (per-level, large levels) or two (pyramid, small levels) at a time) gives
 * the SAME bytes as the general path (KILN_GPU_MIP_FAST=0), as its even stages alone (=1) and with the tuning
 * knobs KILN_GPU_MIP_O2=1 KILN_GPU_MIP_EVEN2=0 KILN_GPU_MIP_TAIL=1024 (the other kernel of each, the
 * one-workgroup tail), for per-level and pyramid (subgroup's fast plan is pyramid's) on sizes that make every
 * kind of stage: 256^2 (F5 + E3), 384x200 (F3, odd levels), 130x66 (E1, then odd), 255x129 (odd levels),
 * 2047x3, 16384x4 (an axis at 1 early), 2x2, 1x1 and a batch of 3 x 96x40 (E); in the three pixel modes
 * (alpha-weighted sRGB with transparent texels, linear opaque, RGBA32F). Byte equality holds on any device
 * (the same arithmetic in the same order), unlike the 1-LSB contract against the CPU. */
static void fast_path_same_bytes(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 21);
    static const uint32_t fs[][3] = {{256, 256, 1}, {384, 200, 1}, {130, 66, 1}, {255, 129, 1}, {2047, 3, 1},
                                     {16384, 4, 1}, {2, 2, 1},     {1, 1, 1},     {96, 40, 3}};
    static const int fstrat[] = {KILN_MIP_STRATEGY_PER_LEVEL, KILN_MIP_STRATEGY_PYRAMID};
    static const char *fname[] = {"per-level", "pyramid"};
    for (size_t si = 0; si < sizeof fs / sizeof fs[0]; si++) {
        for (int mode = 0; mode < NMODES; mode++) {
            if (kt_gpu_light() && (size_t)mode != si % NMODES) continue; /* ASan's time: one mode per size, in turn */
            kiln_image imgs[3];
            for (uint32_t k = 0; k < fs[si][2]; k++) make_image(&rng, mode, fs[si][0], fs[si][1], &imgs[k]);
            for (size_t k = 0; k < 2; k++) {
                size_t n0, n1, n2;
                uint8_t *g = run_levels(fx, imgs, fs[si][2], mode, fstrat[k], "0", &n0);
                uint8_t *e = run_levels(fx, imgs, fs[si][2], mode, fstrat[k], "1", &n1);
                uint8_t *f = run_levels(fx, imgs, fs[si][2], mode, fstrat[k], NULL, &n2);
                /* the tuning knobs' other kernels: odd pairs on every odd level, mip_fast.comp on large levels */
                setenv("KILN_GPU_MIP_O2", "1", 1);
                setenv("KILN_GPU_MIP_EVEN2", "0", 1);
                setenv("KILN_GPU_MIP_TAIL", "1024", 1);
                size_t n3;
                uint8_t *v = run_levels(fx, imgs, fs[si][2], mode, fstrat[k], NULL, &n3);
                unsetenv("KILN_GPU_MIP_O2");
                unsetenv("KILN_GPU_MIP_EVEN2");
                unsetenv("KILN_GPU_MIP_TAIL");
                assert_int_equal(n0, n1);
                assert_int_equal(n0, n2);
                assert_int_equal(n0, n3);
                if (memcmp(g, e, n0) || memcmp(g, f, n0) || memcmp(g, v, n0))
                    fail_msg("%ux%u x%u %s %s: the fast box path's bytes differ from the general path's (even only: %s, "
                             "all: %s, all with KILN_GPU_MIP_O2=1 KILN_GPU_MIP_EVEN2=0 KILN_GPU_MIP_TAIL=1024: %s)",
                             fs[si][0], fs[si][1], fs[si][2], mode_name[mode], fname[k],
                             memcmp(g, e, n0) ? "differ" : "same", memcmp(g, f, n0) ? "differ" : "same",
                             memcmp(g, v, n0) ? "differ" : "same");
                free(g);
                free(e);
                free(f);
                free(v);
            }
            for (uint32_t k = 0; k < fs[si][2]; k++) kiln_image_free(&imgs[k]);
        }
    }
}

/* KILN_GPU_MIP_SP_TAIL value (in the tables below) for 0: no tail, every stage chained (sp_one) */
#define SP_NO_TAIL 0xffffffffu
/* ... or'ed into a tail value: KILN_GPU_MIP_EVEN2=1, mip_fast2.comp's stages inside the one-dispatch chain (off by
 * default since the H200 run of 2026-11-26 05:25 UTC) */
#define SP_EVEN2 0x40000000u

/* The single pass on the fast path in ONE dispatch (gpu_mip.c sp_one, shaders/mip_sp.comp SP_CHAIN = 2: the
 * pyramid's fast stages chained by per-tile arrival counters into the first stage's dispatch, then the tail made by
 * the workgroup that completes the last tile; the tail alone for small bases) and the old hybrid
 * (KILN_GPU_MIP_SP_HYBRID=1, sp_fuse: the pyramid's fast stages, the last
 * one fused with the tail made by its last-arriving workgroup per texture, or the tail alone for small bases) give
 * the SAME bytes as the general path (KILN_GPU_MIP_FAST=0, mip_tile.comp) in every mode, and in the 8-bit modes
 * the same bytes as the CPU reference (RGBA32F: within the 2^-12 contract, the sRGB encode of float output uses
 * pow()). Sizes that make every plan shape: the tail alone (3x5, 1x37, 29x1, 45x33, 2047x3: a 1023 x 1 level),
 * the tail after an odd level at stage 0 (1x4096: 1 x 1024 and 1 x 512 tail levels, the shared arrays full), after
 * odd levels at stage 1 and 3 (255x129, 600x338), after an even stage (130x66: E1; 384x200: F3 made E3; 256^2:
 * F5 made E5), 960x540 (F2, three odd levels), batches (5 x 96x40 tail alone, 4 x 200x130 and 3 x 255x129 fused
 * after odd levels), KILN_GPU_MIP_SP_TAIL=16 (a later tail: more dispatches before it), 1024x512 (the stage before
 * the tail too large to carry it: the hybrid's pyramid plan, every stage dispatched); the one-dispatch chain's consumer
 * kinds: 129^2 (an even six-level stage after an odd level, no tail), 513^2 (mip_fast2.comp's stage after an odd
 * level, then the tail), KILN_GPU_MIP_SP_TAIL=0 (no tail: every level chained;
 * 513^2: O1 + F5 + E3, 256^2 x 2: F5 + E3, 130x66: E1 + odd levels, 255x129 x 2: ten odd levels), KILN_GPU_MIP_SP_TAIL=256
 * (the default since the H200 run of 2026-11-26 05:25 UTC: the tail stage after odd, mip_fast2 and odd-after-even stages;
 * 45x33: one workgroup per texture), 16 x 64^2, SP_EVEN2 (mip_fast2.comp's stages inside the chain: 513^2, 384x200 x 2,
 * 256^2 x 2); sizes over
 * 200000 texels in one mode only. In the sRGB mode also the hybrid with the odd-level stages chained into the tail's
 * dispatch (KILN_GPU_MIP_SP_CHAIN=1: after an mip_fast.comp or odd stage; =2: also after mip_fast2.comp's stage, made
 * as mip_fast.comp's). The single pass runs first: a device buffer reused from an earlier run holds other levels. */
static void single_pass_same_bytes(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 31);
    static const uint32_t ss[][4] = {{3, 5, 1, 0},     {1, 37, 1, 0},    {29, 1, 1, 0},    {45, 33, 1, 0},
                                     {2047, 3, 1, 0},  {1, 4096, 1, 0},  {255, 129, 1, 0}, {600, 338, 1, 0},
                                     {130, 66, 1, 0},  {384, 200, 1, 0}, {256, 256, 1, 0}, {96, 40, 5, 0},
                                     {200, 130, 4, 0}, {255, 129, 1, 16}, {384, 200, 2, 16}, {960, 540, 1, 0},
                                     {255, 129, 3, 0}, {1024, 512, 1, 0}, {129, 129, 1, 0}, {513, 513, 1, 0},
                                     {513, 513, 1, SP_NO_TAIL}, {256, 256, 2, SP_NO_TAIL}, {130, 66, 1, SP_NO_TAIL},
                                     {255, 129, 2, SP_NO_TAIL}, {64, 64, 16, 0}, {255, 129, 1, 256}, {45, 33, 1, 256},
                                     {384, 200, 2, 256}, {256, 256, 2, 256}, {513, 513, 1, 256},
                                     {513, 513, 1, SP_EVEN2}, {384, 200, 2, SP_EVEN2 | 256}, {256, 256, 2, SP_EVEN2}};
    for (size_t si = 0; si < sizeof ss / sizeof ss[0]; si++) {
        for (int mode = 0; mode < NMODES; mode++) {
            const uint32_t W = ss[si][0], H = ss[si][1], count = ss[si][2], L = kiln_mip_level_count(W, H);
            if (mode != MODE_SRGB_ALPHA && (uint64_t)W * H * count > 200000) continue; /* the ASan run's time */
            /* sanitised build: sRGB (with the hybrid's chains) on every entry, linear and float on every second */
            if (kt_gpu_light() && mode != MODE_SRGB_ALPHA && si % 2 != (size_t)(mode - 1)) continue;
            kiln_image imgs[16];
            for (uint32_t k = 0; k < count; k++) make_image(&rng, mode, W, H, &imgs[k]);
            size_t n0, n1;
            char cap[16];
            const int even2 = ss[si][3] != SP_NO_TAIL && (ss[si][3] & SP_EVEN2);
            const uint32_t tcap = ss[si][3] == SP_NO_TAIL ? 0u : ss[si][3] & ~SP_EVEN2;
            snprintf(cap, sizeof cap, "%u", tcap);
            if (tcap || ss[si][3] == SP_NO_TAIL) setenv("KILN_GPU_MIP_SP_TAIL", cap, 1);
            if (even2) setenv("KILN_GPU_MIP_EVEN2", "1", 1);
            /* the one-dispatch single pass first: a device buffer reused from the previous run holds another image's
             * levels; then the hybrid (KILN_GPU_MIP_SP_HYBRID=1) with the odd-level stages chained into the tail's
             * dispatch (KILN_GPU_MIP_SP_CHAIN=1, =2) */
            uint8_t *f = run_levels(fx, imgs, count, mode, KILN_MIP_STRATEGY_SINGLE_PASS, NULL, &n1);
            uint8_t *c[2] = {NULL, NULL};
            for (int k = 0; k < 2 && mode == MODE_SRGB_ALPHA && ss[si][3] != SP_NO_TAIL; k++) { /* one mode (ASan's time) */
                setenv("KILN_GPU_MIP_SP_HYBRID", "1", 1);
                setenv("KILN_GPU_MIP_SP_CHAIN", k ? "2" : "1", 1);
                size_t nc;
                c[k] = run_levels(fx, imgs, count, mode, KILN_MIP_STRATEGY_SINGLE_PASS, NULL, &nc);
                unsetenv("KILN_GPU_MIP_SP_CHAIN");
                unsetenv("KILN_GPU_MIP_SP_HYBRID");
                assert_int_equal(nc, n1);
            }
            if (!c[0]) c[0] = c[1] = f;
            unsetenv("KILN_GPU_MIP_SP_TAIL");
            unsetenv("KILN_GPU_MIP_EVEN2");
            uint8_t *g = run_levels(fx, imgs, count, mode, KILN_MIP_STRATEGY_SINGLE_PASS, "0", &n0);
            assert_int_equal(n0, n1);
            if (memcmp(g, f, n0) || memcmp(g, c[0], n0) || memcmp(g, c[1], n0)) {
                const uint8_t *b = memcmp(g, f, n0) ? f : memcmp(g, c[0], n0) ? c[0] : c[1];
                size_t at = 0;
                while (g[at] == b[at]) at++;
                size_t ndiff = 0;
                for (size_t q = 0; q < n0; q++) ndiff += g[q] != b[q];
                fail_msg("%ux%u x%u %s (tail cap %s): the fast single pass's bytes differ from the general path's "
                         "(one dispatch: %s, hybrid chain 1: %s, chain 2: %s; first at byte %zu of %zu, %zu bytes differ)", W, H,
                         count, mode_name[mode], ss[si][3] ? cap : "default", memcmp(g, f, n0) ? "differ" : "same",
                         memcmp(g, c[0], n0) ? "differ" : "same", memcmp(g, c[1], n0) ? "differ" : "same", at, n0,
                         ndiff);
            }
            if (c[0] != f) {
                free(c[0]);
                free(c[1]);
            }
            /* against the CPU reference, level by level (run_levels packs image after image, level after level) */
            kiln_image *refs = make_refs(fx, imgs, count);
            const int f32 = mode == MODE_F32_ALPHA;
            size_t off = 0;
            for (uint32_t i = 0; i < count; i++) {
                for (uint32_t l = 1; l < L; l++) {
                    const kiln_image *ref = &refs[(size_t)i * L + l];
                    size_t bytes = (size_t)ref->width * ref->height * (f32 ? 16 : 4);
                    if (f32 ? level_diff(ref, f + off, 1) > 1.0 : memcmp(ref->pixels, f + off, bytes) != 0)
                        fail_msg("%ux%u x%u %s: image %u level %u (%ux%u) differs from the CPU reference (worst %.3g)",
                                 W, H, count, mode_name[mode], i, l, ref->width, ref->height,
                                 level_diff(ref, f + off, f32));
                    off += bytes;
                }
            }
            assert_int_equal(off, n1);
            free_refs(refs, imgs, count);
            free(g);
            free(f);
            for (uint32_t k = 0; k < count; k++) kiln_image_free(&imgs[k]);
        }
    }
}

/* The fast single pass's counters (mip_sp.comp: the last-arriving workgroup of a texture, or of a tile with
 * the one-dispatch chain's per-tile counters, resets its counter) are zeroed only when the buffer is new:
 * KILN_GPU_MIP_RESUBMIT=1 (testing aid in gpu_mip.c, helper mip16b) submits the same run a second time on the same
 * buffers, output and fp32 chain filled with 0xAB, counters left as the first run left them (a counter target off by
 * one leaves a counter non-zero: the second run's tile starts before its inputs exist). Both runs' levels equal the
 * CPU's, for single images (odd stages + tail; one workgroup for the whole chain; every chain kind without a tail),
 * batches, the tail stage (last column: KILN_GPU_MIP_SP_TAIL) and the hybrid's chained mode (last column 1). */
static void single_pass_resubmit(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 32);
    static const uint32_t ss[][4] = {{255, 129, 1, 0},        {45, 33, 1, 0},   {96, 40, 5, 0},  {384, 200, 2, 1},
                                     {513, 513, 1, SP_NO_TAIL}, {129, 129, 2, 0}, {255, 129, 3, SP_NO_TAIL},
                                     {256, 256, 4, 0},         {255, 129, 2, 256}, {513, 513, 1, 256}};
    for (size_t si = 0; si < sizeof ss / sizeof ss[0]; si++) {
        const uint32_t W = ss[si][0], H = ss[si][1], count = ss[si][2], L = kiln_mip_level_count(W, H);
        kiln_image imgs[5];
        for (uint32_t k = 0; k < count; k++) make_image(&rng, MODE_SRGB_ALPHA, W, H, &imgs[k]);
        kiln_image *refs = make_refs(fx, imgs, count);
        if (ss[si][3] == 1) {
            setenv("KILN_GPU_MIP_SP_HYBRID", "1", 1);
            setenv("KILN_GPU_MIP_SP_CHAIN", "1", 1);
        }
        char cap[16];
        snprintf(cap, sizeof cap, "%u", ss[si][3] == SP_NO_TAIL ? 0u : ss[si][3]);
        if (ss[si][3] >= 2) setenv("KILN_GPU_MIP_SP_TAIL", cap, 1); /* 1: the hybrid's chain, above */
        for (int again = 0; again < 2; again++) {
            if (again) setenv("KILN_GPU_MIP_RESUBMIT", "1", 1);
            size_t n = 0, off = 0;
            uint8_t *f = run_levels(fx, imgs, count, MODE_SRGB_ALPHA, KILN_MIP_STRATEGY_SINGLE_PASS, NULL, &n);
            unsetenv("KILN_GPU_MIP_RESUBMIT");
            for (uint32_t i = 0; i < count; i++)
                for (uint32_t l = 1; l < L; l++) {
                    const kiln_image *ref = &refs[(size_t)i * L + l];
                    const size_t bytes = (size_t)ref->width * ref->height * 4;
                    if (memcmp(ref->pixels, f + off, bytes) != 0)
                        fail_msg("%ux%u x%u mode %u, %s run: image %u level %u differs from the CPU reference", W, H,
                                 count, ss[si][3], again ? "second" : "first", i, l);
                    off += bytes;
                }
            assert_int_equal(off, n);
            free(f);
        }
        unsetenv("KILN_GPU_MIP_SP_CHAIN");
        unsetenv("KILN_GPU_MIP_SP_HYBRID");
        unsetenv("KILN_GPU_MIP_SP_TAIL");
        free_refs(refs, imgs, count);
        for (uint32_t k = 0; k < count; k++) kiln_image_free(&imgs[k]);
    }
}

/* Issue 5: single-pass is ONE dispatch for every size and batch (gpu_mip.c sp_one), by the plan (no device: the
 * issue's sizes up to 8192^2 and 16384 x 4, odd sizes, the 256 x 256^2 batch, tail caps 0 and 16), while the hybrid
 * (KILN_GPU_MIP_SP_HYBRID=1) stays reachable (more than one at 1920x1080) and auto keeps the pyramid's plan. */
static void single_pass_one_dispatch_plan(void **state)
{
    (void)state;
#ifndef KILN_HAVE_VULKAN
    skip(); /* the no-Vulkan build has no GPU plans (gpu_stub.c returns 0) */
#endif
    static const uint32_t ps[][3] = {{1, 2, 1},       {2, 1, 1},       {1, 37, 1},      {3, 5, 1},
                                     {255, 129, 1},   {1920, 1080, 1}, {2560, 1440, 1}, {3840, 2160, 1},
                                     {2048, 2048, 1}, {4096, 4096, 1}, {8192, 8192, 1}, {2047, 2047, 1},
                                     {4095, 4095, 1}, {3095, 990, 1},  {1080, 4096, 1}, {16384, 4, 1},
                                     {2049, 2049, 1}, {513, 513, 1},   {129, 129, 1},   {64, 64, 1},
                                     {256, 256, 256}, {256, 256, 64},  {96, 40, 5},     {1024, 512, 1},
                                     {16384, 16384, 1}, {1, 16384, 1}, {8191, 8193, 1}, {32, 32, 16384}};
    static const char *caps[] = {NULL, "0", "16", "256", "1024"};
    unsetenv("KILN_GPU_MIP_FAST");
    for (size_t ci = 0; ci < sizeof caps / sizeof caps[0]; ci++) {
        if (caps[ci]) setenv("KILN_GPU_MIP_SP_TAIL", caps[ci], 1);
        for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
            const uint32_t W = ps[i][0], H = ps[i][1], L = kiln_mip_level_count(W, H);
            char desc[256];
            uint32_t n = kiln__gpu_mip_plan_dispatches(W, H, L, ps[i][2], KILN_MIP_STRATEGY_SINGLE_PASS, desc, sizeof desc);
            if (n != 1)
                fail_msg("single-pass %ux%u x%u (tail cap %s): %u dispatches (%s), not 1", W, H, ps[i][2],
                         caps[ci] ? caps[ci] : "default", n, desc);
            /* fewer levels than the full chain: one too */
            n = kiln__gpu_mip_plan_dispatches(W, H, L > 3 ? L - 2 : L, ps[i][2], KILN_MIP_STRATEGY_SINGLE_PASS, desc,
                                              sizeof desc);
            if (n != 1) fail_msg("single-pass %ux%u x%u, %u levels: %u dispatches (%s)", W, H, ps[i][2], L - 2, n, desc);
            if (ci == 0) { /* auto = the pyramid's plan */
                char da[256], dp[256];
                uint32_t na = kiln__gpu_mip_plan_dispatches(W, H, L, ps[i][2], KILN_MIP_STRATEGY_AUTO, da, sizeof da);
                uint32_t np = kiln__gpu_mip_plan_dispatches(W, H, L, ps[i][2], KILN_MIP_STRATEGY_PYRAMID, dp, sizeof dp);
                assert_int_equal(na, np);
                assert_string_equal(da, dp);
            }
        }
        unsetenv("KILN_GPU_MIP_SP_TAIL");
    }
    setenv("KILN_GPU_MIP_SP_HYBRID", "1", 1);
    assert_true(kiln__gpu_mip_plan_dispatches(1920, 1080, 11, 1, KILN_MIP_STRATEGY_SINGLE_PASS, NULL, 0) > 1);
    unsetenv("KILN_GPU_MIP_SP_HYBRID");
    assert_int_equal(kiln__gpu_mip_plan_dispatches(1920, 1080, 11, 1, KILN_MIP_STRATEGY_BLIT, NULL, 0), 0);
}

/* The same counted where it is recorded: kiln__gpu_mip_record into a command buffer of ours, whose descriptor-set
 * count is its dispatch count (one per kiln_vk_cmd_dispatch); the command then runs (validation layer on in CI).
 * Sizes: 1xN, 3x5, 255x129, 1920x1080, 1023^2, 16 x 256^2; RGBA8 sRGB and RGBA32F. */
static void single_pass_one_dispatch_recorded(void **state)
{
    fixture *fx = *state;
#ifndef KILN_HAVE_VULKAN
    (void)fx;
    skip(); /* the no-Vulkan build: no recorder to call */
#else
    if (!fx->gpu) skip();
    kiln_gpu *gpu;
    assert_int_equal(kiln__gpu_get(fx->gpu, &gpu), KILN_OK);
    kt_rng rng;
    kt_rng_seed(&rng, 33);
    static const uint32_t rs[][3] = {{1, 300, 1}, {3, 5, 1}, {255, 129, 1}, {1920, 1080, 1}, {1023, 1023, 1},
                                     {256, 256, 16}};
    for (size_t i = 0; i < sizeof rs / sizeof rs[0]; i++) {
        for (int mode = 0; mode < NMODES; mode += 2) {
            const uint32_t W = rs[i][0], H = rs[i][1], count = rs[i][2];
            kiln_image imgs[16];
            for (uint32_t k = 0; k < count; k++) make_image(&rng, mode, W, H, &imgs[k]);
            kiln__gpu_mip_job job = {.images = imgs, .count = count, .levels = kiln_mip_level_count(W, H),
                                     .decode_srgb = mode == MODE_SRGB_ALPHA, .out_srgb = mode == MODE_SRGB_ALPHA,
                                     .out_kind = mode == MODE_F32_ALPHA ? 4 : 1,
                                     .strategy = KILN_MIP_STRATEGY_SINGLE_PASS};
            kiln_vk_cmd cmd;
            kiln__gpu_mip_dev dev;
            memset(&dev, 0, sizeof dev);
            assert_int_equal(kiln_vk_cmd_begin(fx->gpu, gpu, KILN_GPU_MIP_MAX_DISPATCHES(job.levels), &cmd), KILN_OK);
            kiln_status st = kiln__gpu_mip_record(fx->gpu, gpu, &job, 256, &cmd, VK_NULL_HANDLE, &dev);
            if (st != KILN_OK) fail_msg("%ux%u x%u: %s", W, H, count, kiln_last_error(fx->gpu));
            if (cmd.used_sets != 1 || dev.dispatches != 1)
                fail_msg("single-pass %ux%u x%u %s: %u dispatches recorded (plan %u), not 1", W, H, count,
                         mode_name[mode], cmd.used_sets, dev.dispatches);
            kiln_vk_cmd_barrier(&cmd);
            assert_int_equal(kiln_vk_cmd_submit(fx->gpu, &cmd, NULL), KILN_OK);
            kiln_vk_cmd_free(&cmd);
            kiln__gpu_mip_dev_free(&dev);
            for (uint32_t k = 0; k < count; k++) kiln_image_free(&imgs[k]);
        }
    }
#endif
}
#endif

/* blit: where the blit is the exact box (opaque, every level even: powers of two, also as a batch of
 * array layers) level l within 1 + l LSB, not 1: the hardware chain re-quantises every level to
 * 8 bits and filters the next level from that, where the reference keeps fp32 (mip.h rule 2), so
 * rounding errors add up over levels (lavapipe, linear RGBA8: 2 LSB at level 2 .. 5 at level 8;
 * sRGB: 1). A wrong filter would be tens of LSB off on these noise images. On an odd size it runs and is NOT the reference (the worst difference is
 * printed: blit's documented inexactness). */
#ifdef KILN_TEST_GPU_MIP_BLIT
static void blit_power_of_two(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 11);
    static const uint32_t pot[][3] = {{64, 64, 1}, {256, 256, 1}, {128, 32, 1}, {32, 32, 3}};
    for (size_t i = 0; i < 4; i++) {
        for (int srgb = 0; srgb < 2; srgb++) {
            kiln_image imgs[3];
            for (uint32_t k = 0; k < pot[i][2]; k++) {
                make_image(&rng, MODE_LINEAR_OPAQUE, pot[i][0], pot[i][1], &imgs[k]);
                imgs[k].srgb = srgb;
            }
            kiln_image *refs = make_refs(fx, imgs, pot[i][2]);
            check_batch(fx, imgs, refs, pot[i][2], srgb ? MODE_SRGB_ALPHA : MODE_LINEAR_OPAQUE, KILN_MIP_STRATEGY_BLIT,
                        "blit", 0);
            free_refs(refs, imgs, pot[i][2]);
            for (uint32_t k = 0; k < pot[i][2]; k++) kiln_image_free(&imgs[k]);
        }
    }
    /* an odd size: the blit runs, its levels differ from the exact NP2 reference */
    kiln_image img;
    make_image(&rng, MODE_LINEAR_OPAQUE, 255, 129, &img);
    kiln_mip_params p;
    kiln_mip_params_init(&p);
    p.strategy = KILN_MIP_STRATEGY_BLIT;
    kiln_image a[KILN_MAX_LEVELS], b[KILN_MAX_LEVELS];
    uint32_t na = KILN_MAX_LEVELS, nb = KILN_MAX_LEVELS;
    assert_int_equal(kiln_mip_generate(fx->gpu, &img, &p, a, &na), KILN_OK);
    assert_int_equal(kiln_mip_generate(fx->cpu, &img, NULL, b, &nb), KILN_OK);
    double worst = 0.0;
    for (uint32_t l = 1; l < na; l++) {
        double d = level_diff(&b[l], a[l].pixels, 0);
        if (d > worst) worst = d;
    }
    print_message("note: blit on 255x129 (odd sizes): worst difference to the exact reference %.0f LSB\n", worst);
    for (uint32_t l = 0; l < na; l++) kiln_image_free(&a[l]);
    for (uint32_t l = 0; l < nb; l++) kiln_image_free(&b[l]);
    kiln_image_free(&img);
    /* blit keeps the input format: RGBA8 -> RGBA16F is refused */
    make_image(&rng, MODE_LINEAR_OPAQUE, 16, 16, &img);
    kiln_texture t;
    assert_int_equal(kiln_mip_texture(fx->gpu, &img, &p, KILN_FORMAT_RGBA16F, &t), KILN_ERR_UNSUPPORTED);
    kiln_image_free(&img);
}
#else
/* batches, public_api and every_strategy_size_and_mode run here */
#endif

static void validation_layer_ran(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    assert_int_equal(kt_gpu_validation_messages(fx->gpu), 0);
}

/* tests/unit/test_gpu_mip_blit.c includes this file with KILN_TEST_GPU_MIP_BLIT: the blit checks run
 * there, in their own process (Mesa 22.3's lavapipe leaks 2 x 56 bytes inside the driver on its blit
 * path, so CMake turns LeakSanitizer off for that test only). */
int main(void)
{
    const struct CMUnitTest tests[] = {
#ifdef KILN_TEST_GPU_MIP_BLIT
        cmocka_unit_test(blit_power_of_two),
#else
        cmocka_unit_test(every_strategy_size_and_mode),
        cmocka_unit_test(batches),
        cmocka_unit_test(public_api),
        cmocka_unit_test(fast_path_same_bytes),
        cmocka_unit_test(single_pass_same_bytes),
        cmocka_unit_test(single_pass_resubmit),
        cmocka_unit_test(single_pass_one_dispatch_plan),
        cmocka_unit_test(single_pass_one_dispatch_recorded),
#endif
        cmocka_unit_test(validation_layer_ran),
    };
#ifndef KILN_TEST_GPU_MIP_BLIT
    /* lavapipe's compile time (CI): the single pass's shaders with the default plans' stage kinds all compiled in
     * (mip_one.comp) and the largest shared arrays (the hybrid's mip_sp.comp; gpu_mip.c spec_union), one pipeline
     * per mode instead of one per tail size and set of chained kinds; public_api runs the specialised pipelines the
     * library ships (as do test_gpu_mip16 and test_gpu_mip_encode through kiln_mip_generate / kiln_encode_mips);
     * KILN_GPU_MIP_SPEC_UNION=0 in the environment: the specialised pipelines everywhere */
    setenv("KILN_GPU_MIP_SPEC_UNION", "1", 0);
#endif
    if (getenv("KILN_TEST_FILTER")) cmocka_set_test_filter(getenv("KILN_TEST_FILTER"));
    return cmocka_run_group_tests(tests, kt_gpu_setup, kt_gpu_teardown);
}

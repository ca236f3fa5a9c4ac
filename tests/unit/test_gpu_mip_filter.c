/* test_gpu_mip_filter.c - the quality mipmap filters on the GPU (src/gpu/gpu_mip_filter.c,
 * shaders/mip_filter.comp) against the CPU reference (src/mip: kiln_mip_generate / kiln_mip_texture_layers
 * on a CPU context), every level compared:
 *   - Kaiser, Lanczos-3, Mitchell x edge clamp and wrap x sizes 1x1, 1x23, 19x1, 3x5, 17x9, 64x64,
 *     257x129 x RGBA8 sRGB with alpha (alpha-weighted, transparent texels), RGBA8 linear opaque and
 *     RGBA32F with alpha (floats may ring outside [0,1]);
 *   - a partial chain (levels = 3), an sRGB-decoded float image, the per-level strategy;
 *   - the three alpha modes, alpha coverage (box and Kaiser; RGBA8, RGBA32F, RGBA16F); normal maps (RGBA8, RG8-style 2-channel with z reconstruction, F32;
 *     box and Kaiser); a cube (6 faces) and an array in one batch, RGBA8 and RGBA16F;
 *   - routing: an explicit tiled strategy (or blit) with a quality filter or alpha coverage is refused;
 *     the validation layer stays silent.
 * Contract (mip.h): 8-bit values within 1 LSB, floats within 2^-12 (RGBA16F within 1 half ulp). The
 * worst differences are printed; on lavapipe they are 0 (byte-identical). The GPU must have run
 * (last_gpu_ms set). Skipped when there is no Vulkan device. */
#include "support.h"
#include "gpu/gpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fixture {
    kiln_context *gpu;
    kiln_context *cpu;
    double worst8, worstf; /* over the whole run: LSB, units of 2^-12 */
    size_t compared;
} fixture;

static int setup(void **state)
{
    static fixture f;
    memset(&f, 0, sizeof f);
    if (kt_gpu_contexts(&f.gpu, &f.cpu, 2)) return -1;
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    kiln_context_free(f->gpu);
    kiln_context_free(f->cpu);
    return 0;
}

enum { MODE_SRGB_ALPHA = KT_MIP_SRGB_ALPHA, MODE_LINEAR_OPAQUE = KT_MIP_LINEAR_OPAQUE, MODE_F32_ALPHA = KT_MIP_F32_ALPHA, NMODES = KT_MIP_NMODES };
static const char *mode_name[] = {"rgba8-srgb-alpha", "rgba8-linear", "rgba32f-alpha"};
static const char *filter_name[] = {"box", "kaiser", "lanczos3", "mitchell"};

static void make_image(kt_rng *rng, int mode, uint32_t w, uint32_t h, kiln_image *img)
{
    kt_mip_test_image(rng, mode, w, h, img);
}

/* Worst difference of n values: LSB for U8, units of 2^-12 for F32. */
static double diff(const void *ref, const void *got, size_t n, int f32)
{
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d;
        if (f32) {
            float a = ((const float *)ref)[i], b = ((const float *)got)[i];
            d = isnan(b) || isnan(a) ? 1e9 : fabs((double)a - (double)b) * 4096.0;
        } else {
            d = abs((int)((const uint8_t *)ref)[i] - (int)((const uint8_t *)got)[i]);
        }
        if (d > worst) worst = d;
    }
    return worst;
}

/* kiln_mip_generate on both contexts; every level within the contract. */
static void compare_generate(fixture *fx, const kiln_image *img, const kiln_mip_params *p, const char *what)
{
    kiln_image a[KILN_MAX_LEVELS], b[KILN_MAX_LEVELS];
    uint32_t na = KILN_MAX_LEVELS, nb = KILN_MAX_LEVELS;
    fx->gpu->last_gpu_ms = -1.0;
    kiln_status st = kiln_mip_generate(fx->gpu, img, p, a, &na);
    if (st != KILN_OK) fail_msg("%s: GPU failed: %s", what, kiln_last_error(fx->gpu));
    if (na > 1 && !(fx->gpu->last_gpu_ms >= 0.0)) fail_msg("%s: the GPU did not run", what);
    assert_int_equal(kiln_mip_generate(fx->cpu, img, p, b, &nb), KILN_OK);
    assert_int_equal(na, nb);
    const int f32 = img->type == KILN_PIXEL_F32;
    for (uint32_t l = 0; l < na; l++) {
        assert_int_equal(a[l].width, b[l].width);
        assert_int_equal(a[l].height, b[l].height);
        double d = diff(b[l].pixels, a[l].pixels, (size_t)a[l].width * a[l].height * 4, f32);
        fx->compared++;
        if (f32) {
            if (d > fx->worstf) fx->worstf = d;
        } else if (d > fx->worst8) {
            fx->worst8 = d;
        }
        if (d > 1.0)
            fail_msg("%s: level %u (%ux%u) differs by %.3g %s", what, l, a[l].width, a[l].height, d,
                     f32 ? "x 2^-12" : "LSB");
    }
    for (uint32_t l = 0; l < na; l++) kiln_image_free(&a[l]);
    for (uint32_t l = 0; l < nb; l++) kiln_image_free(&b[l]);
}

static void filters_sizes_edges_modes(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    static const uint32_t sizes[][2] = {{1, 1}, {1, 23}, {19, 1}, {3, 5}, {17, 9}, {64, 64}, {257, 129}};
    kt_rng rng;
    kt_rng_seed(&rng, 1234);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        for (int mode = 0; mode < NMODES; mode++) {
            kiln_image img;
            make_image(&rng, mode, sizes[si][0], sizes[si][1], &img);
            for (int f = KILN_MIP_FILTER_KAISER; f <= KILN_MIP_FILTER_MITCHELL; f++) {
                for (int e = KILN_MIP_EDGE_CLAMP; e <= KILN_MIP_EDGE_WRAP; e++) {
                    kiln_mip_params p;
                    kiln_mip_params_init(&p);
                    p.filter = (kiln_mip_filter)f;
                    p.edge = (kiln_mip_edge)e;
                    char what[128];
                    snprintf(what, sizeof what, "%s %s %ux%u %s", filter_name[f], e ? "wrap" : "clamp", sizes[si][0],
                             sizes[si][1], mode_name[mode]);
                    compare_generate(fx, &img, &p, what);
                }
            }
            kiln_image_free(&img);
        }
    }
    /* explicit per-level strategy and linear colour of an sRGB-tagged image */
    kiln_image img;
    make_image(&rng, MODE_SRGB_ALPHA, 45, 31, &img);
    kiln_mip_params p;
    kiln_mip_params_init(&p);
    p.filter = KILN_MIP_FILTER_LANCZOS3;
    p.strategy = KILN_MIP_STRATEGY_PER_LEVEL;
    compare_generate(fx, &img, &p, "lanczos3 per-level 45x31 srgb");
    p.color = KILN_MIP_COLOR_LINEAR;
    compare_generate(fx, &img, &p, "lanczos3 per-level 45x31 forced linear");
    /* a partial chain (3 levels of 6) */
    p.color = KILN_MIP_COLOR_AUTO;
    p.levels = 3;
    compare_generate(fx, &img, &p, "lanczos3 45x31 3 levels");
    kiln_image_free(&img);
    /* an sRGB-decoded float image (pow on the GPU: floats within 2^-12) */
    make_image(&rng, MODE_F32_ALPHA, 29, 18, &img);
    kiln_mip_params_init(&p);
    p.filter = KILN_MIP_FILTER_MITCHELL;
    p.color = KILN_MIP_COLOR_SRGB;
    compare_generate(fx, &img, &p, "mitchell 29x18 f32 srgb");
    kiln_image_free(&img);
}

static void alpha_modes(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 99);
    for (int mode = 0; mode < NMODES; mode++) {
        if (mode == MODE_LINEAR_OPAQUE) continue;
        kiln_image img;
        make_image(&rng, mode, 37, 26, &img);
        for (int a = KILN_MIP_ALPHA_WEIGHTED; a <= KILN_MIP_ALPHA_PREMULTIPLIED; a++) {
            kiln_mip_params p;
            kiln_mip_params_init(&p);
            p.filter = KILN_MIP_FILTER_KAISER;
            p.edge = KILN_MIP_EDGE_WRAP;
            p.alpha = (kiln_mip_alpha)a;
            char what[96];
            snprintf(what, sizeof what, "kaiser alpha mode %d %s", a, mode_name[mode]);
            compare_generate(fx, &img, &p, what);
        }
        /* alpha coverage (a per-level post-pass on the downloaded fp32 chain), box and Kaiser */
        for (int f = KILN_MIP_FILTER_BOX; f <= KILN_MIP_FILTER_KAISER; f++) {
            kiln_mip_params p;
            kiln_mip_params_init(&p);
            p.filter = (kiln_mip_filter)f;
            p.alpha_coverage_ref = 0.4f;
            char what[96];
            snprintf(what, sizeof what, "%s alpha coverage 0.4 %s", filter_name[f], mode_name[mode]);
            compare_generate(fx, &img, &p, what);
        }
        kiln_image_free(&img);
    }
}

/* Random unit normals: RGBA8 (0.5 n + 0.5), or 2-channel (x, y only: z reconstructed), or F32 signed. */
static void make_normals(kt_rng *rng, uint32_t w, uint32_t h, int f32, uint32_t channels, kiln_image *img)
{
    memset(img, 0, sizeof *img);
    img->width = w;
    img->height = h;
    img->channels = channels;
    img->type = f32 ? KILN_PIXEL_F32 : KILN_PIXEL_U8;
    size_t n = (size_t)w * h;
    img->pixels = malloc(n * (f32 ? 16 : 4));
    assert_non_null(img->pixels);
    for (size_t i = 0; i < n; i++) {
        double x = (double)(kt_rng_u32(rng) % 2001) / 1000.0 - 1.0, y = (double)(kt_rng_u32(rng) % 2001) / 1000.0 - 1.0;
        double zz = 1.0 - x * x - y * y;
        if (zz < 0.0) {
            double l = sqrt(x * x + y * y);
            x /= l;
            y /= l;
            zz = 0.0;
        }
        double v[4] = {x, y, sqrt(zz), 1.0};
        if (channels < 3) v[2] = 0.0;
        for (int c = 0; c < 4; c++) {
            if (f32) ((float *)img->pixels)[i * 4 + c] = (float)v[c];
            else ((uint8_t *)img->pixels)[i * 4 + c] = c == 3 ? 255 : (uint8_t)floor((0.5 * v[c] + 0.5) * 255.0 + 0.5);
        }
    }
}

static void normal_maps(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 4242);
    static const uint32_t sizes[][2] = {{1, 1}, {3, 5}, {64, 64}, {57, 33}};
    for (size_t si = 0; si < 4; si++) {
        for (int kind = 0; kind < 3; kind++) { /* RGBA8, 2-channel U8, F32 */
            kiln_image img;
            make_normals(&rng, sizes[si][0], sizes[si][1], kind == 2, kind == 1 ? 2 : 4, &img);
            for (int f = KILN_MIP_FILTER_BOX; f <= KILN_MIP_FILTER_KAISER; f++) {
                kiln_mip_params p;
                kiln_mip_params_init(&p);
                p.normal_map = 1;
                p.filter = (kiln_mip_filter)f;
                p.edge = KILN_MIP_EDGE_WRAP;
                char what[96];
                snprintf(what, sizeof what, "normal map %s %ux%u %s", filter_name[f], sizes[si][0], sizes[si][1],
                         kind == 0 ? "rgba8" : kind == 1 ? "rg8 (z rebuilt)" : "f32");
                compare_generate(fx, &img, &p, what);
            }
            kiln_image_free(&img);
        }
    }
}

/* A cube (6 faces) and a 3-layer array in one GPU batch, RGBA8 sRGB and RGBA16F, every byte compared. */
static void cube_and_array(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 606);
    kiln_image faces[6];
    for (int i = 0; i < 6; i++) make_image(&rng, MODE_SRGB_ALPHA, 33, 33, &faces[i]);
    static const kiln_format fmts[] = {KILN_FORMAT_RGBA8_SRGB, KILN_FORMAT_RGBA16F};
    for (int shape = 0; shape < 2; shape++) {
        uint32_t layers = shape == 0 ? 1 : 3, nfaces = shape == 0 ? 6 : 1;
        uint32_t n = layers * nfaces;
        for (int f = 0; f < 2; f++) {
            kiln_mip_params p;
            kiln_mip_params_init(&p);
            p.filter = shape == 0 ? KILN_MIP_FILTER_KAISER : KILN_MIP_FILTER_MITCHELL;
            p.edge = shape == 0 ? KILN_MIP_EDGE_CLAMP : KILN_MIP_EDGE_WRAP;
            kiln_texture ta, tb;
            fx->gpu->last_gpu_ms = -1.0;
            kiln_status st = kiln_mip_texture_layers(fx->gpu, faces, layers, nfaces, shape == 1, &p, fmts[f], &ta);
            if (st != KILN_OK) fail_msg("cube/array: %s", kiln_last_error(fx->gpu));
            assert_true(fx->gpu->last_gpu_ms >= 0.0);
            assert_int_equal(kiln_mip_texture_layers(fx->cpu, faces, layers, nfaces, shape == 1, &p, fmts[f], &tb),
                             KILN_OK);
            assert_int_equal(ta.data_size, tb.data_size);
            assert_true(n >= 3);
            for (size_t i = 0; i < ta.data_size;) {
                if (f == 0) {
                    int d = abs((int)ta.data[i] - (int)tb.data[i]);
                    if (d > 1) fail_msg("cube/array rgba8: byte %zu differs by %d", i, d);
                    if (d > fx->worst8) fx->worst8 = d;
                    i++;
                } else {
                    uint16_t ha, hb;
                    memcpy(&ha, ta.data + i, 2);
                    memcpy(&hb, tb.data + i, 2);
                    if (abs((int)ha - (int)hb) > 1) fail_msg("cube/array rgba16f: half %zu: %04x vs %04x", i / 2, ha, hb);
                    i += 2;
                }
            }
            kiln_texture_free(&ta);
            kiln_texture_free(&tb);
        }
    }
    for (int i = 0; i < 6; i++) kiln_image_free(&faces[i]);
}

static void routing(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 7);
    kiln_image img;
    make_image(&rng, MODE_SRGB_ALPHA, 40, 24, &img);
    kiln_mip_params p;
    kiln_mip_params_init(&p);
    p.filter = KILN_MIP_FILTER_MITCHELL;
    kiln_image lv[KILN_MAX_LEVELS];
    static const kiln_mip_strategy tiled[] = {KILN_MIP_STRATEGY_BLIT, KILN_MIP_STRATEGY_SUBGROUP,
                                              KILN_MIP_STRATEGY_PYRAMID, KILN_MIP_STRATEGY_SINGLE_PASS};
    for (int s = 0; s < 4; s++) {
        uint32_t n = KILN_MAX_LEVELS;
        p.strategy = tiled[s];
        assert_int_equal(kiln_mip_generate(fx->gpu, &img, &p, lv, &n), KILN_ERR_UNSUPPORTED);
        assert_non_null(strstr(kiln_last_error(fx->gpu), "mitchell"));
    }
    /* box with alpha coverage under a tiled strategy: on the GPU since helper mipfall (gpu_mip_filter.c cov_tiled,
     * byte-identical to the CPU: tests/unit/test_gpu_mip_alpha.c strategies) */
    p.filter = KILN_MIP_FILTER_BOX;
    p.strategy = KILN_MIP_STRATEGY_PYRAMID;
    p.alpha_coverage_ref = 0.5f;
    uint32_t n = KILN_MAX_LEVELS;
    assert_int_equal(kiln_mip_generate(fx->gpu, &img, &p, lv, &n), KILN_OK);
    for (uint32_t l = 0; l < n; l++) kiln_image_free(&lv[l]);
    /* alpha coverage with RGBA16F output under AUTO: on the GPU, within 1 half ulp of the CPU */
    p.strategy = KILN_MIP_STRATEGY_AUTO;
    p.filter = KILN_MIP_FILTER_KAISER;
    kiln_texture ta, tb;
    fx->gpu->last_gpu_ms = -1.0;
    assert_int_equal(kiln_mip_texture(fx->gpu, &img, &p, KILN_FORMAT_RGBA16F, &ta), KILN_OK);
    assert_true(fx->gpu->last_gpu_ms >= 0.0);
    assert_int_equal(kiln_mip_texture(fx->cpu, &img, &p, KILN_FORMAT_RGBA16F, &tb), KILN_OK);
    assert_int_equal(ta.data_size, tb.data_size);
    for (size_t i = 0; i + 2 <= ta.data_size; i += 2) {
        uint16_t ha, hb;
        memcpy(&ha, ta.data + i, 2);
        memcpy(&hb, tb.data + i, 2);
        if (abs((int)ha - (int)hb) > 1) fail_msg("coverage rgba16f: half %zu: %04x vs %04x", i / 2, ha, hb);
    }
    kiln_texture_free(&ta);
    kiln_texture_free(&tb);
    kiln_image_free(&img);
}

static void summary_and_validation(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    print_message("note: %zu levels compared; worst GPU-CPU difference %.0f LSB (8-bit), %.3g x 2^-12 (float)\n",
                  fx->compared, fx->worst8, fx->worstf);
    assert_true(fx->compared > 0);
    assert_int_equal(kt_gpu_validation_messages(fx->gpu), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(filters_sizes_edges_modes),
        cmocka_unit_test(alpha_modes),
        cmocka_unit_test(normal_maps),
        cmocka_unit_test(cube_and_array),
        cmocka_unit_test(routing),
        cmocka_unit_test(summary_and_validation),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

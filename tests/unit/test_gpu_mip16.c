/* test_gpu_mip16.c - 16-bit sources on the GPU mip paths (helper mip16, issue 5; src/gpu/gpu_mip16.c,
 * shaders/mip16_convert.comp, the 16-bit parts of src/gpu/gpu_mip_encode.c and mip.c try_gpu) against
 * the CPU reference, byte for byte at every level:
 *  - thresholds: the 16-bit quantisers' decision points (what mip16_convert.comp compares against) give
 *    the CPU's kiln__float_to_unorm16 / kiln__linear_to_srgb16 code for random and edge floats;
 *  - generate_u16: kiln_mip_generate of RGBA16 images (odd, non-square, 1-wide sizes; sRGB and linear;
 *    alpha-weighted and opaque; box with explicit strategies and the Kaiser / Mitchell filters) on the
 *    GPU (kiln_last_gpu_ms set: the GPU made the levels; an explicit strategy fails rather than falling
 *    back) against a CPU context;
 *  - texture_u16: kiln_mip_texture of a 16-bit image into RGBA8 sRGB, RGBA16F and RGBA32F;
 *  - encode_mips_u16: kiln_encode_mips from 16-bit images (BC1 high with CPU-fallback blocks, BC1a, BC3,
 *    BC4, BC5 SNORM, ETC1, ETC2 RGBA fast, EAC R11 SNORM, RG11) with the chain device-resident (the
 *    context's kiln__gpu_mip_encode_stats count the run and its levels), KILN_GPU_MIP_POISON=1 on some;
 *  - encode_mips_u16_device_decode: the base decoded on the device (mip16dev, mip16_decode.comp) gives the
 *    bytes of the host decode (KILN_GPU_MIP16_DEVICE_DECODE=0) and the CPU; =2 (wrong tables) changes them;
 *  - the Vulkan validation layer stays silent. Skipped when there is no Vulkan device. */
#include "support.h"
#include "gpu/gpu_mip_encode.h"
#include "gpu/gpu_mip16_api.h"
#include "image/color.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef kt_gpu_fixture fixture;

static int setup(void **state) { return kt_gpu_setup(state); }
static int teardown(void **state) { return kt_gpu_teardown(state); }

/* RGBA16 texels: random with flat 8x8 patches; alpha (when set) 0, 65535 or partial. */
static void image16(kt_rng *rng, uint32_t w, uint32_t h, int alpha, kiln_image *img)
{
    assert_int_equal(kiln_image_alloc(NULL, img, w, h, KILN_PIXEL_U16), KILN_OK);
    img->channels = 4;
    uint16_t *p = img->pixels;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            uint16_t *t = p + ((size_t)y * w + x) * 4;
            if (((x / 8) + (y / 8)) % 3 == 0) {
                uint32_t c = ((x / 8) * 2654435761u) ^ ((y / 8) * 40503u);
                t[0] = (uint16_t)c;
                t[1] = (uint16_t)(c >> 8);
                t[2] = (uint16_t)(c >> 16);
                t[3] = 65535;
            } else {
                kt_rng_bytes(rng, t, 8);
                if (!alpha) t[3] = 65535;
                else if (t[3] < 12000) t[3] = 0;
                else if (t[3] > 60000) t[3] = 65535;
            }
        }
}

static uint32_t search(const float *t, float v)
{
    uint32_t k = 0;
    for (uint32_t s = 32768; s; s >>= 1)
        if (v >= t[k + s]) k += s;
    return k;
}

static void thresholds(void **state)
{
    (void)state;
    float *t = malloc(KILN_GPU_MIP16_THR_FLOATS * sizeof *t);
    assert_non_null(t);
    kt_rng rng;
    kt_rng_seed(&rng, 16);
    for (int srgb = 0; srgb < 2; srgb++) {
        kiln__gpu_mip16_thresholds(t, srgb);
        for (uint32_t i = 0; i < 400000; i++) {
            float v;
            if (i < 65536 * 2) { /* around every code's decision point */
                uint32_t k = 1 + (i >> 1) % 65535;
                v = (i & 1) ? t[k] : nextafterf(t[k], -1.0f);
            } else {
                uint32_t b = kt_rng_u32(&rng);
                if (i % 3 == 0) b = 0x3f800000u - (b >> 6); /* mostly in (0, 1] */
                memcpy(&v, &b, sizeof v);
            }
            uint32_t want = srgb ? kiln__linear_to_srgb16(v) : kiln__float_to_unorm16(v);
            if (search(t, v) != want) fail_msg("srgb %d: %a -> %u, CPU %u", srgb, (double)v, search(t, v), want);
            if (search(t + 65536, v) != kiln__float_to_unorm16(v)) fail_msg("alpha: %a", (double)v);
        }
        assert_true(kiln__gpu_mip16_roundtrip(t, srgb));
    }
    assert_int_equal(search(t, NAN), 0);
    assert_int_equal(search(t, INFINITY), 65535);
    assert_int_equal(search(t, -INFINITY), 0);
    free(t);
}

static const uint32_t sizes[][2] = {{37, 19}, {64, 64}, {1, 7}, {130, 67}, {5, 3}};

static void generate_u16(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 1616);
    static const struct { int filter, strategy; } cases[] = {
        {KILN_MIP_FILTER_BOX, KILN_MIP_STRATEGY_AUTO},       {KILN_MIP_FILTER_BOX, KILN_MIP_STRATEGY_PER_LEVEL},
        {KILN_MIP_FILTER_BOX, KILN_MIP_STRATEGY_SINGLE_PASS}, {KILN_MIP_FILTER_BOX, KILN_MIP_STRATEGY_SUBGROUP},
        {KILN_MIP_FILTER_KAISER, KILN_MIP_STRATEGY_AUTO},    {KILN_MIP_FILTER_MITCHELL, KILN_MIP_STRATEGY_AUTO},
    };
    size_t n = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (int alpha = 0; alpha < 2; alpha++) {
            kiln_image img;
            image16(&rng, sizes[si][0], sizes[si][1], alpha, &img);
            for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
                for (int srgb = 0; srgb < 2; srgb++) {
                    kiln_mip_params mp;
                    kiln_mip_params_init(&mp);
                    mp.filter = (kiln_mip_filter)cases[c].filter;
                    mp.strategy = (kiln_mip_strategy)cases[c].strategy;
                    mp.color = srgb ? KILN_MIP_COLOR_SRGB : KILN_MIP_COLOR_LINEAR;
                    kiln_image lg[KILN_MAX_LEVELS], lc[KILN_MAX_LEVELS];
                    uint32_t ng = KILN_MAX_LEVELS, nc = KILN_MAX_LEVELS;
                    fx->gpu->last_gpu_ms = -1.0;
                    kiln_status st = kiln_mip_generate(fx->gpu, &img, &mp, lg, &ng);
                    if (st != KILN_OK)
                        fail_msg("%ux%u filter %d strategy %d srgb %d: %s", sizes[si][0], sizes[si][1], cases[c].filter,
                                 cases[c].strategy, srgb, kiln_last_error(fx->gpu));
                    if (ng > 1 && !(kiln_last_gpu_ms(fx->gpu) >= 0.0))
                        fail_msg("%ux%u filter %d srgb %d: the GPU did not make the levels", sizes[si][0], sizes[si][1],
                                 cases[c].filter, srgb);
                    assert_int_equal(kiln_mip_generate(fx->cpu, &img, &mp, lc, &nc), KILN_OK);
                    assert_int_equal(ng, nc);
                    for (uint32_t l = 0; l < ng; l++) {
                        assert_int_equal(lg[l].type, KILN_PIXEL_U16);
                        size_t bytes = (size_t)lc[l].width * lc[l].height * 8;
                        if (memcmp(lg[l].pixels, lc[l].pixels, bytes) != 0) {
                            const uint16_t *a = lg[l].pixels, *b = lc[l].pixels;
                            size_t i = 0;
                            while (a[i] == b[i]) i++;
                            fail_msg("%ux%u alpha %d filter %d strategy %d srgb %d level %u: texel %zu channel %zu GPU %u "
                                     "CPU %u",
                                     sizes[si][0], sizes[si][1], alpha, cases[c].filter, cases[c].strategy, srgb, l, i / 4,
                                     i % 4, a[i], b[i]);
                        }
                        kiln_image_free(&lg[l]);
                        kiln_image_free(&lc[l]);
                    }
                    n++;
                }
            kiln_image_free(&img);
        }
    print_message("note: %zu 16-bit chains byte-identical to the CPU\n", n);
}

static void texture_u16(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 1617);
    static const kiln_format fmts[] = {KILN_FORMAT_RGBA8_SRGB, KILN_FORMAT_RGBA16F, KILN_FORMAT_RGBA32F};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si += 2) {
        kiln_image img;
        image16(&rng, sizes[si][0], sizes[si][1], 1, &img);
        for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++) {
            kiln_mip_params mp;
            kiln_mip_params_init(&mp);
            mp.strategy = KILN_MIP_STRATEGY_PER_LEVEL;
            mp.color = f == 0 ? KILN_MIP_COLOR_SRGB : KILN_MIP_COLOR_LINEAR;
            kiln_texture a, b;
            kiln_status st = kiln_mip_texture(fx->gpu, &img, &mp, fmts[f], &a);
            if (st != KILN_OK) fail_msg("format %d: %s", (int)fmts[f], kiln_last_error(fx->gpu));
            assert_int_equal(kiln_mip_texture(fx->cpu, &img, &mp, fmts[f], &b), KILN_OK);
            assert_int_equal(a.levels, b.levels);
            for (uint32_t l = 0; l < a.levels; l++) {
                size_t sa = 0, sb = 0;
                const uint8_t *pa = kiln_texture_image(&a, l, 0, 0, &sa), *pb = kiln_texture_image(&b, l, 0, 0, &sb);
                assert_int_equal(sa, sb);
                if (memcmp(pa, pb, sa) != 0) fail_msg("%ux%u format %d level %u differs", sizes[si][0], sizes[si][1], (int)fmts[f], l);
            }
            kiln_texture_free(&a);
            kiln_texture_free(&b);
        }
        kiln_image_free(&img);
    }
}

static void encode_mips_u16(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 1618);
    static const struct { kiln_format f; kiln_quality q; } cases[] = {
        {KILN_FORMAT_BC1_RGB_SRGB, KILN_QUALITY_HIGH},  {KILN_FORMAT_BC1_RGBA_UNORM, KILN_QUALITY_NORMAL},
        {KILN_FORMAT_BC3_SRGB, KILN_QUALITY_NORMAL},    {KILN_FORMAT_BC4_UNORM, KILN_QUALITY_NORMAL},
        {KILN_FORMAT_BC5_SNORM, KILN_QUALITY_NORMAL},   {KILN_FORMAT_ETC1_UNORM, KILN_QUALITY_NORMAL},
        {KILN_FORMAT_ETC2_RGBA8_SRGB, KILN_QUALITY_FAST}, {KILN_FORMAT_EAC_R11_SNORM, KILN_QUALITY_NORMAL},
        {KILN_FORMAT_EAC_RG11_UNORM, KILN_QUALITY_FAST},
    };
    size_t n = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        kiln_image img;
        image16(&rng, sizes[si][0], sizes[si][1], si != 1, &img);
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            const kiln_format_info *fi = kiln_format_get_info(cases[k].f);
            kiln_encode_params ep;
            kiln_encode_params_init(&ep, cases[k].f, cases[k].q);
            kiln_mip_params mp;
            kiln_mip_params_init(&mp);
            if ((k + si) % 3 == 1) mp.filter = KILN_MIP_FILTER_KAISER;
            if ((k + si) % 4 == 2) mp.strategy = KILN_MIP_STRATEGY_PER_LEVEL;
            const int poison = (k + si) % 2;
            if (poison) setenv("KILN_GPU_MIP_POISON", "1", 1);
            kiln__gpu_mip_encode_stats s0, s1;
            kiln__gpu_mip_encode_stats_get(fx->gpu, &s0);
            kiln_texture a, b;
            kiln_status st = kiln_encode_mips(fx->gpu, &img, &ep, &mp, &a);
            unsetenv("KILN_GPU_MIP_POISON");
            if (st != KILN_OK) fail_msg("%s %ux%u: %s", fi->name, sizes[si][0], sizes[si][1], kiln_last_error(fx->gpu));
            kiln__gpu_mip_encode_stats_get(fx->gpu, &s1);
            if (s1.runs != s0.runs + 1 || s1.levels != s0.levels + a.levels)
                fail_msg("%s %ux%u: not device-resident", fi->name, sizes[si][0], sizes[si][1]);
            assert_int_equal(kiln_encode_mips(fx->cpu, &img, &ep, &mp, &b), KILN_OK);
            assert_int_equal(a.levels, b.levels);
            for (uint32_t l = 0; l < a.levels; l++) {
                size_t sa = 0, sb = 0;
                const uint8_t *pa = kiln_texture_image(&a, l, 0, 0, &sa), *pb = kiln_texture_image(&b, l, 0, 0, &sb);
                assert_int_equal(sa, sb);
                if (memcmp(pa, pb, sa) != 0) {
                    size_t i = 0;
                    while (pa[i] == pb[i]) i++;
                    fail_msg("%s quality %d %ux%u filter %d level %u: block %zu differs", fi->name, (int)cases[k].q,
                             sizes[si][0], sizes[si][1], (int)mp.filter, l, i / fi->block_bytes);
                }
            }
            kiln_texture_free(&a);
            kiln_texture_free(&b);
            n++;
        }
        kiln_image_free(&img);
    }
    kiln__gpu_mip_encode_stats s;
    kiln__gpu_mip_encode_stats_get(fx->gpu, &s);
    print_message("note: %zu device-resident 16-bit encodes byte-identical to the CPU (%llu blocks to the CPU encoder)\n",
                  n, (unsigned long long)s.fallback_blocks);
    assert_true(s.fallback_blocks > 0); /* BC1 high's flat patches went through the gather */
}

/* The 16-bit base decoded on the device (mip16dev: gpu_mip16.c, shaders/mip16_decode.comp; box filter):
 * the default path, KILN_GPU_MIP16_DEVICE_DECODE=0 (the host decode) and the CPU give the same bytes, and
 * =2 (testing aid: every colour value decodes to 0) changes them, so the device decode is what ran. */
static int same_texture(const kiln_texture *a, const kiln_texture *b)
{
    if (a->levels != b->levels) return 0;
    for (uint32_t l = 0; l < a->levels; l++) {
        size_t sa = 0, sb = 0;
        const uint8_t *pa = kiln_texture_image(a, l, 0, 0, &sa), *pb = kiln_texture_image(b, l, 0, 0, &sb);
        if (sa != sb || memcmp(pa, pb, sa) != 0) return 0;
    }
    return 1;
}

static void encode_mips_u16_device_decode(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 4096);
    static const kiln_format fmts[] = {KILN_FORMAT_BC1_RGB_SRGB, KILN_FORMAT_BC4_UNORM, KILN_FORMAT_BC3_SRGB};
    static const uint32_t dims[][2] = {{130, 67}, {37, 19}};
    for (size_t si = 0; si < 2; si++) {
        kiln_image img;
        image16(&rng, dims[si][0], dims[si][1], 1, &img);
        for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++) {
            const kiln_format_info *fi = kiln_format_get_info(fmts[k]);
            kiln_encode_params ep;
            kiln_encode_params_init(&ep, fmts[k], KILN_QUALITY_NORMAL);
            kiln_mip_params mp;
            kiln_mip_params_init(&mp);
            if (k == 2) setenv("KILN_GPU_MIP_POISON", "1", 1);
            kiln_texture dev, host, wrong, cpu;
            kiln__gpu_mip_encode_stats s0, s1;
            kiln__gpu_mip_encode_stats_get(fx->gpu, &s0);
            unsetenv("KILN_GPU_MIP16_DEVICE_DECODE");
            kiln_status st = kiln_encode_mips(fx->gpu, &img, &ep, &mp, &dev);
            if (st != KILN_OK) fail_msg("%s device decode: %s", fi->name, kiln_last_error(fx->gpu));
            setenv("KILN_GPU_MIP16_DEVICE_DECODE", "0", 1);
            st = kiln_encode_mips(fx->gpu, &img, &ep, &mp, &host);
            if (st != KILN_OK) fail_msg("%s host decode: %s", fi->name, kiln_last_error(fx->gpu));
            setenv("KILN_GPU_MIP16_DEVICE_DECODE", "2", 1);
            st = kiln_encode_mips(fx->gpu, &img, &ep, &mp, &wrong);
            unsetenv("KILN_GPU_MIP16_DEVICE_DECODE");
            unsetenv("KILN_GPU_MIP_POISON");
            if (st != KILN_OK) fail_msg("%s wrong tables: %s", fi->name, kiln_last_error(fx->gpu));
            kiln__gpu_mip_encode_stats_get(fx->gpu, &s1);
            if (s1.runs != s0.runs + 3) fail_msg("%s %ux%u: not device-resident", fi->name, dims[si][0], dims[si][1]);
            assert_int_equal(kiln_encode_mips(fx->cpu, &img, &ep, &mp, &cpu), KILN_OK);
            if (!same_texture(&dev, &cpu)) fail_msg("%s %ux%u: device decode differs from the CPU", fi->name, dims[si][0], dims[si][1]);
            if (!same_texture(&host, &cpu)) fail_msg("%s %ux%u: host decode differs from the CPU", fi->name, dims[si][0], dims[si][1]);
            /* BC4 reads red only: the wrong colour tables blacken it too */
            if (same_texture(&wrong, &dev)) fail_msg("%s %ux%u: the device decode did not run", fi->name, dims[si][0], dims[si][1]);
            kiln_texture_free(&dev);
            kiln_texture_free(&host);
            kiln_texture_free(&wrong);
            kiln_texture_free(&cpu);
        }
        kiln_image_free(&img);
    }
}

static void validation(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    assert_int_equal(kt_gpu_validation_messages(fx->gpu), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(thresholds),
        cmocka_unit_test(generate_u16),
        cmocka_unit_test(texture_u16),
        cmocka_unit_test(encode_mips_u16),
        cmocka_unit_test(encode_mips_u16_device_decode),
        cmocka_unit_test(validation),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

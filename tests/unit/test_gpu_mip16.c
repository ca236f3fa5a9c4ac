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
 *  - generate_u16_normal_device_decode (mip16b): kiln_mip_generate decodes the 16-bit image on the device (any
 *    filter) and makes 16-bit normal maps on the GPU; same levels as the CPU and the host decode;
 *  - encode_mips_u16_normal (mip16b): 16-bit normal maps (4, 3 and 2 channels; box, Kaiser, Lanczos-3, Mitchell)
 *    device-resident and byte-identical to the CPU; host decode equal, wrong-table aid different;
 *  - encode_mips_u16_filters_device_decode (mip16b): quality filters from a base decoded on the device;
 *  - encode_mips_bc6h_from_int (mip16b): BC6H from 8- and 16-bit images device-resident, equal to the GPU encoder
 *    on the CPU reference's chain (fetch_texel's floats of each level);
 *  - the Vulkan validation layer stays silent. Skipped when there is no Vulkan device. */
#include "support.h"
#include "gpu/gpu_mip_encode.h"
#include "gpu/gpu_mip16_api.h"
#include "gpu/gpu_mip_alpha.h"
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

/* kiln_mip_generate of one 16-bit image (mip16b): the image goes to the GPU as it is and is decoded there
 * (mip16_decode.comp) for every filter; 16-bit normal maps (4 and 2 channels) are made on the GPU too. The levels
 * equal the CPU's; the host decode (=0) gives them too, the wrong-table aid (=2) changes them. */
static void generate_u16_normal_device_decode(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 1619);
    static const struct { int filter, normal; uint32_t ch; } cases[] = {
        {KILN_MIP_FILTER_BOX, 1, 4}, {KILN_MIP_FILTER_KAISER, 1, 2}, {KILN_MIP_FILTER_LANCZOS3, 1, 3},
        {KILN_MIP_FILTER_KAISER, 0, 4}, {KILN_MIP_FILTER_BOX, 0, 4},
    };
    static const char *envs[] = {NULL, "0", "2"};
    size_t n = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        kiln_image img;
        image16(&rng, sizes[si][0], sizes[si][1], 1, &img);
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            img.channels = cases[c].ch;
            kiln_mip_params mp;
            kiln_mip_params_init(&mp);
            mp.filter = (kiln_mip_filter)cases[c].filter;
            mp.normal_map = cases[c].normal;
            mp.color = KILN_MIP_COLOR_LINEAR;
            kiln_image lc[KILN_MAX_LEVELS];
            uint32_t nc = KILN_MAX_LEVELS;
            assert_int_equal(kiln_mip_generate(fx->cpu, &img, &mp, lc, &nc), KILN_OK);
            for (int e = 0; e < 3; e++) {
                if (e && si != 0 && si != 3) break; /* the decode variants on two sizes */
                if (envs[e]) setenv("KILN_GPU_MIP16_DEVICE_DECODE", envs[e], 1);
                kiln_image lg[KILN_MAX_LEVELS];
                uint32_t ng = KILN_MAX_LEVELS;
                fx->gpu->last_gpu_ms = -1.0;
                kiln_status st = kiln_mip_generate(fx->gpu, &img, &mp, lg, &ng);
                unsetenv("KILN_GPU_MIP16_DEVICE_DECODE");
                if (st != KILN_OK)
                    fail_msg("%ux%u filter %d normal %d: %s", sizes[si][0], sizes[si][1], cases[c].filter,
                             cases[c].normal, kiln_last_error(fx->gpu));
                if (ng > 1 && !(kiln_last_gpu_ms(fx->gpu) >= 0.0))
                    fail_msg("%ux%u filter %d normal %d: the GPU did not make the levels", sizes[si][0], sizes[si][1],
                             cases[c].filter, cases[c].normal);
                assert_int_equal(ng, nc);
                int differ = 0;
                for (uint32_t l = 0; l < ng; l++) {
                    size_t bytes = (size_t)lc[l].width * lc[l].height * 8;
                    if (memcmp(lg[l].pixels, lc[l].pixels, bytes) != 0) {
                        if (e != 2)
                            fail_msg("%ux%u %u channels filter %d normal %d decode %s: level %u differs from the CPU",
                                     sizes[si][0], sizes[si][1], cases[c].ch, cases[c].filter, cases[c].normal,
                                     envs[e] ? envs[e] : "device", l);
                        differ = 1;
                    }
                    kiln_image_free(&lg[l]);
                }
                if (e == 2 && ng > 1 && !differ)
                    fail_msg("%ux%u filter %d normal %d: the device decode did not run", sizes[si][0], sizes[si][1],
                             cases[c].filter, cases[c].normal);
                n++;
            }
            for (uint32_t l = 0; l < nc; l++) kiln_image_free(&lc[l]);
        }
        kiln_image_free(&img);
    }
    print_message("note: %zu 16-bit chains (normal maps, device decode) byte-identical to the CPU\n", n);
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

/* ---- helper mip16b: 16-bit normal maps, quality filters with the device decode, BC6H from 8/16-bit ---- */

/* kiln_encode_mips on the GPU context, checked device-resident (the stats count one run and every level);
 * returns the status (the texture is left empty on failure). */
static kiln_status resident_encode(fixture *fx, const kiln_image *img, const kiln_encode_params *ep,
                                   const kiln_mip_params *mp, kiln_texture *out, const char *what)
{
    kiln__gpu_mip_encode_stats s0, s1;
    kiln__gpu_mip_encode_stats_get(fx->gpu, &s0);
    kiln_status st = kiln_encode_mips(fx->gpu, img, ep, mp, out);
    if (st != KILN_OK) fail_msg("%s: %s", what, kiln_last_error(fx->gpu));
    kiln__gpu_mip_encode_stats_get(fx->gpu, &s1);
    if (s1.runs != s0.runs + 1 || s1.levels != s0.levels + out->levels) fail_msg("%s: not device-resident", what);
    return st;
}

static void first_diff(const kiln_texture *a, const kiln_texture *b, const char *what)
{
    assert_int_equal(a->levels, b->levels);
    for (uint32_t l = 0; l < a->levels; l++) {
        size_t sa = 0, sb = 0;
        const uint8_t *pa = kiln_texture_image(a, l, 0, 0, &sa), *pb = kiln_texture_image(b, l, 0, 0, &sb);
        assert_int_equal(sa, sb);
        if (memcmp(pa, pb, sa) != 0) {
            size_t i = 0;
            while (pa[i] == pb[i]) i++;
            fail_msg("%s: level %u differs at byte %zu of %zu", what, l, i, sa);
        }
    }
}

/* 16-bit normal maps (RGBA and 2-channel, where z is rebuilt from x and y), box / Kaiser / Lanczos-3, odd sizes,
 * into BC5, BC1, BC3, EAC RG11 SNORM: device-resident (n = 2v - 1 on read, renormalised, 0.5 n + 0.5 on write,
 * quantised to 16 bits on the device) and byte-identical to the CPU; the host decode (=0) gives the same bytes,
 * the wrong-table aid (=2) changes them, so the device decode is what ran. */
static void encode_mips_u16_normal(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 5151);
    static const struct { kiln_format f; int filter; uint32_t ch; } cases[] = {
        {KILN_FORMAT_BC5_UNORM, KILN_MIP_FILTER_BOX, 4},      {KILN_FORMAT_BC5_UNORM, KILN_MIP_FILTER_KAISER, 2},
        {KILN_FORMAT_BC1_RGB_UNORM, KILN_MIP_FILTER_LANCZOS3, 3}, {KILN_FORMAT_BC3_UNORM, KILN_MIP_FILTER_BOX, 2},
        {KILN_FORMAT_EAC_RG11_SNORM, KILN_MIP_FILTER_MITCHELL, 4}, {KILN_FORMAT_BC5_SNORM, KILN_MIP_FILTER_BOX, 3},
    };
    static const uint32_t dims[][2] = {{37, 19}, {64, 64}, {5, 3}, {1, 9}};
    size_t n = 0;
    for (size_t si = 0; si < sizeof dims / sizeof dims[0]; si++) {
        kiln_image img;
        image16(&rng, dims[si][0], dims[si][1], 1, &img);
        uint16_t *p = img.pixels;
        p[0] = p[1] = 32768; /* (almost) zero-length normals */
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            const kiln_format_info *fi = kiln_format_get_info(cases[k].f);
            img.channels = cases[k].ch;
            kiln_encode_params ep;
            kiln_encode_params_init(&ep, cases[k].f, KILN_QUALITY_NORMAL);
            kiln_mip_params mp;
            kiln_mip_params_init(&mp);
            mp.normal_map = 1;
            mp.filter = (kiln_mip_filter)cases[k].filter;
            if (k % 2) setenv("KILN_GPU_MIP_POISON", "1", 1);
            char what[128];
            snprintf(what, sizeof what, "%s %ux%u normal map, %u channels, filter %d", fi->name, dims[si][0], dims[si][1],
                     cases[k].ch, cases[k].filter);
            kiln_texture dev, cpu;
            resident_encode(fx, &img, &ep, &mp, &dev, what);
            assert_int_equal(kiln_encode_mips(fx->cpu, &img, &ep, &mp, &cpu), KILN_OK);
            first_diff(&dev, &cpu, what);
            if (si == 0) {
                kiln_texture host, wrong;
                setenv("KILN_GPU_MIP16_DEVICE_DECODE", "0", 1);
                resident_encode(fx, &img, &ep, &mp, &host, what);
                setenv("KILN_GPU_MIP16_DEVICE_DECODE", "2", 1);
                resident_encode(fx, &img, &ep, &mp, &wrong, what);
                unsetenv("KILN_GPU_MIP16_DEVICE_DECODE");
                first_diff(&host, &cpu, what);
                if (same_texture(&wrong, &dev)) fail_msg("%s: the device decode did not run", what);
                kiln_texture_free(&host);
                kiln_texture_free(&wrong);
            }
            unsetenv("KILN_GPU_MIP_POISON");
            kiln_texture_free(&dev);
            kiln_texture_free(&cpu);
            n++;
        }
        kiln_image_free(&img);
    }
    print_message("note: %zu device-resident 16-bit normal-map encodes byte-identical to the CPU\n", n);
}

/* The quality filters from a 16-bit base decoded on the device (mip16b; before, the host decoded it): the
 * device decode, the host decode (=0) and the CPU give the same bytes, =2 changes them. */
static void encode_mips_u16_filters_device_decode(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 4097);
    static const struct { kiln_format f; int filter; } cases[] = {
        {KILN_FORMAT_BC1_RGB_SRGB, KILN_MIP_FILTER_KAISER}, {KILN_FORMAT_BC4_UNORM, KILN_MIP_FILTER_MITCHELL},
        {KILN_FORMAT_BC3_SRGB, KILN_MIP_FILTER_LANCZOS3},  {KILN_FORMAT_ETC1_UNORM, KILN_MIP_FILTER_KAISER},
    };
    static const uint32_t dims[][2] = {{67, 130}, {37, 19}, {9, 2}};
    for (size_t si = 0; si < sizeof dims / sizeof dims[0]; si++) {
        kiln_image img;
        image16(&rng, dims[si][0], dims[si][1], si != 1, &img);
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            const kiln_format_info *fi = kiln_format_get_info(cases[k].f);
            kiln_encode_params ep;
            kiln_encode_params_init(&ep, cases[k].f, KILN_QUALITY_NORMAL);
            kiln_mip_params mp;
            kiln_mip_params_init(&mp);
            mp.filter = (kiln_mip_filter)cases[k].filter;
            if (k == 1) mp.edge = KILN_MIP_EDGE_WRAP;
            char what[128];
            snprintf(what, sizeof what, "%s %ux%u filter %d", fi->name, dims[si][0], dims[si][1], cases[k].filter);
            kiln_texture dev, host, wrong, cpu;
            if (k == 2) setenv("KILN_GPU_MIP_POISON", "1", 1);
            resident_encode(fx, &img, &ep, &mp, &dev, what);
            setenv("KILN_GPU_MIP16_DEVICE_DECODE", "0", 1);
            resident_encode(fx, &img, &ep, &mp, &host, what);
            setenv("KILN_GPU_MIP16_DEVICE_DECODE", "2", 1);
            resident_encode(fx, &img, &ep, &mp, &wrong, what);
            unsetenv("KILN_GPU_MIP16_DEVICE_DECODE");
            unsetenv("KILN_GPU_MIP_POISON");
            assert_int_equal(kiln_encode_mips(fx->cpu, &img, &ep, &mp, &cpu), KILN_OK);
            first_diff(&dev, &cpu, what);
            first_diff(&host, &cpu, what);
            if (same_texture(&wrong, &dev)) fail_msg("%s: the device decode did not run", what);
            kiln_texture_free(&dev);
            kiln_texture_free(&host);
            kiln_texture_free(&wrong);
            kiln_texture_free(&cpu);
        }
        kiln_image_free(&img);
    }
}

/* RGBA32F image of what encode.c fetch_texel gives the BC6H encoder for an 8- or 16-bit level (blk.f): v / 255 or
 * p / 65535 as (float)v * (1.0f / 255.0f), (float)p * (1.0f / 65535.0f). */
static void level_as_float(const kiln_image *lv, kiln_image *out)
{
    assert_int_equal(kiln_image_alloc(NULL, out, lv->width, lv->height, KILN_PIXEL_F32), KILN_OK);
    out->channels = lv->channels;
    out->hdr = 1;
    float *f = out->pixels;
    const size_t n = (size_t)lv->width * lv->height * 4;
    for (size_t i = 0; i < n; i++)
        f[i] = lv->type == KILN_PIXEL_U8 ? (float)((const uint8_t *)lv->pixels)[i] * (1.0f / 255.0f)
                                         : (float)((const uint16_t *)lv->pixels)[i] * (1.0f / 65535.0f);
}

/* BC6H UF16 / SF16 from 8-bit and 16-bit images (mip16b; before, the host path): the resident encode equals the
 * GPU BC6H encoder run on the CPU reference's chain (kiln_mip_generate on the CPU, each level as the floats
 * fetch_texel makes of it), so the encoder's input is the CPU's bit for bit; the CPU encoder gives the same bytes
 * on those floats as on the 8- / 16-bit levels (the conversion is fetch_texel's). Box, Kaiser, sRGB 8-bit chains,
 * odd sizes, qualities fast / normal / high. */
static void encode_mips_bc6h_from_int(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 6600);
    /* cov (helper mipfall; before, the host path): --alpha-coverage, which BC6H (no alpha) cannot show: the chain's
     * colour never depends on the scale, so the resident path skips the coverage passes (the alpha stats must not
     * move) and the bytes are the reference's made with coverage on the CPU; strategy: pyramid / subgroup */
    static const struct { kiln_format f; kiln_quality q; int u16, filter, srgb, blit, cov, strategy; } cases[] = {
        {KILN_FORMAT_BC6H_UFLOAT, KILN_QUALITY_FAST, 1, KILN_MIP_FILTER_BOX, 0, 0, 0, 0},
        {KILN_FORMAT_BC6H_SFLOAT, KILN_QUALITY_FAST, 1, KILN_MIP_FILTER_KAISER, 1, 0, 0, 0},
        {KILN_FORMAT_BC6H_UFLOAT, KILN_QUALITY_NORMAL, 1, KILN_MIP_FILTER_MITCHELL, 0, 0, 0, 0},
        {KILN_FORMAT_BC6H_UFLOAT, KILN_QUALITY_FAST, 0, KILN_MIP_FILTER_BOX, 1, 0, 0, 0},
        {KILN_FORMAT_BC6H_SFLOAT, KILN_QUALITY_HIGH, 0, KILN_MIP_FILTER_KAISER, 0, 0, 0, 0},
        {KILN_FORMAT_BC6H_UFLOAT, KILN_QUALITY_FAST, 0, KILN_MIP_FILTER_BOX, 0, 0, 0, 0},
        {KILN_FORMAT_BC6H_UFLOAT, KILN_QUALITY_FAST, 0, KILN_MIP_FILTER_BOX, 1, 1, 0, 0}, /* the blit chain (8-bit) */
        {KILN_FORMAT_BC6H_UFLOAT, KILN_QUALITY_FAST, 1, KILN_MIP_FILTER_BOX, 0, 0, 1, 0},
        {KILN_FORMAT_BC6H_SFLOAT, KILN_QUALITY_FAST, 1, KILN_MIP_FILTER_BOX, 1, 0, 1, KILN_MIP_STRATEGY_PYRAMID},
        {KILN_FORMAT_BC6H_UFLOAT, KILN_QUALITY_FAST, 1, KILN_MIP_FILTER_KAISER, 0, 0, 1, 0},
        {KILN_FORMAT_BC6H_UFLOAT, KILN_QUALITY_FAST, 0, KILN_MIP_FILTER_BOX, 1, 0, 1, KILN_MIP_STRATEGY_SUBGROUP},
        {KILN_FORMAT_BC6H_UFLOAT, KILN_QUALITY_NORMAL, 0, KILN_MIP_FILTER_MITCHELL, 0, 0, 1, 0},
        {KILN_FORMAT_BC6H_UFLOAT, KILN_QUALITY_FAST, 0, KILN_MIP_FILTER_BOX, 1, 1, 1, 0},
    };
    static const uint32_t dims[][2] = {{37, 19}, {5, 3}, {64, 33}};
    size_t n = 0;
    for (size_t si = 0; si < sizeof dims / sizeof dims[0]; si++) {
        kiln_image i16, i8;
        image16(&rng, dims[si][0], dims[si][1], 1, &i16);
        kt_mip_test_image(&rng, KT_MIP_SRGB_ALPHA, dims[si][0], dims[si][1], &i8);
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            const kiln_image *img = cases[k].u16 ? &i16 : &i8;
            const kiln_format_info *fi = kiln_format_get_info(cases[k].f);
            kiln_encode_params ep;
            kiln_encode_params_init(&ep, cases[k].f, cases[k].q);
            kiln_mip_params mp;
            kiln_mip_params_init(&mp);
            mp.filter = (kiln_mip_filter)cases[k].filter;
            mp.color = cases[k].srgb ? KILN_MIP_COLOR_SRGB : KILN_MIP_COLOR_LINEAR;
            if (cases[k].blit) mp.strategy = KILN_MIP_STRATEGY_BLIT;
            if (cases[k].strategy) mp.strategy = (kiln_mip_strategy)cases[k].strategy;
            const kiln_mip_params mp_ref = mp; /* blit: the GPU blit chain without coverage (no such GPU chain) */
            if (cases[k].cov) mp.alpha_coverage_ref = 0.3f + 0.2f * (float)(k % 3);
            char what[128];
            snprintf(what, sizeof what, "%s q%d from %s %ux%u filter %d %s%s%s", fi->name, (int)cases[k].q,
                     cases[k].u16 ? "16-bit" : "8-bit", dims[si][0], dims[si][1], cases[k].filter,
                     cases[k].srgb ? "sRGB" : "linear", cases[k].blit ? " blit" : "", cases[k].cov ? " coverage" : "");
            if (k % 2) setenv("KILN_GPU_MIP_POISON", "1", 1);
            kiln_texture dev, ref;
            kiln__gpu_mip_alpha_stats a0, a1;
            kiln__gpu_mip_alpha_stats_get(fx->gpu, &a0);
            resident_encode(fx, img, &ep, &mp, &dev, what);
            kiln__gpu_mip_alpha_stats_get(fx->gpu, &a1);
            unsetenv("KILN_GPU_MIP_POISON");
            if (a1.runs != a0.runs) fail_msg("%s: coverage passes ran for BC6H", what);
            /* the reference: the CPU chain (blit: the GPU's blit chain, not the CPU's), each level as the BC6H
             * encoder's floats, through the GPU encoder */
            kiln_image lv[KILN_MAX_LEVELS];
            uint32_t nl = KILN_MAX_LEVELS;
            assert_int_equal(kiln_mip_generate(cases[k].blit ? fx->gpu : fx->cpu, img, cases[k].blit ? &mp_ref : &mp, lv, &nl),
                             KILN_OK);
            assert_int_equal(kiln_texture_alloc(NULL, &ref, cases[k].f, img->width, img->height, nl, 1, 1), KILN_OK);
            for (uint32_t l = 0; l < nl; l++) {
                kiln_image fl;
                level_as_float(&lv[l], &fl);
                size_t size = 0;
                uint8_t *d = kiln_texture_image(&ref, l, 0, 0, &size);
                fx->gpu->last_gpu_ms = -1.0;
                if (kiln_encode_image(fx->gpu, &fl, &ep, d, size) != KILN_OK)
                    fail_msg("%s level %u: %s", what, l, kiln_last_error(fx->gpu));
                if (!(kiln_last_gpu_ms(fx->gpu) >= 0.0)) fail_msg("%s level %u: not the GPU encoder", what, l);
                if (l + 2 >= nl && !cases[k].blit) { /* the conversion is fetch_texel's: the CPU encoder agrees on both inputs */
                    const size_t bytes = kiln_format_image_size(cases[k].f, lv[l].width, lv[l].height);
                    uint8_t *a = malloc(bytes), *b = malloc(bytes);
                    assert_non_null(a);
                    assert_non_null(b);
                    assert_int_equal(kiln_encode_image(fx->cpu, &lv[l], &ep, a, bytes), KILN_OK);
                    assert_int_equal(kiln_encode_image(fx->cpu, &fl, &ep, b, bytes), KILN_OK);
                    if (memcmp(a, b, bytes) != 0) fail_msg("%s level %u: the float view is not fetch_texel's", what, l);
                    free(a);
                    free(b);
                }
                kiln_image_free(&fl);
                kiln_image_free(&lv[l]);
            }
            first_diff(&dev, &ref, what);
            kiln_texture_free(&dev);
            kiln_texture_free(&ref);
            n++;
        }
        kiln_image_free(&i16);
        kiln_image_free(&i8);
    }
    print_message("note: %zu device-resident BC6H encodes from 8/16-bit images equal the GPU encoder on the CPU's "
                  "chain\n", n);
}

/* ---- helper mipfall: one 16-bit image into RGBA8 / RGBA16F / RGBA32F decoded on the device; 16-bit alpha coverage ---- */

static void tex_equal(const kiln_texture *a, const kiln_texture *b, const char *what)
{
    assert_int_equal(a->levels, b->levels);
    assert_int_equal(a->data_size, b->data_size);
    if (memcmp(a->data, b->data, a->data_size) != 0) {
        size_t i = 0;
        while (a->data[i] == b->data[i]) i++;
        fail_msg("%s: byte %zu of %zu differs (GPU %02x, CPU %02x)", what, i, a->data_size, a->data[i], b->data[i]);
    }
}

/* kiln_mip_texture of ONE 16-bit image into RGBA8 (sRGB, unorm), RGBA16F, RGBA32F: the raw image to the GPU (before,
 * decoded on the host), every box strategy but blit and the Kaiser filter: the CPU's bytes; the wrong-table aid
 * (KILN_GPU_MIP16_DEVICE_DECODE=2) changes them (so the device decoded the base), the host decode (=0) does not. With
 * alpha coverage (kiln_mip_texture and kiln_mip_generate of 16-bit images: before, on the CPU): the CPU's bytes, the
 * alpha stats count the run and its levels, and the coverage changes the levels. */
static void u16_device_outputs_and_coverage(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 1661);
    static const kiln_format fmts[] = {KILN_FORMAT_RGBA8_SRGB, KILN_FORMAT_RGBA16F, KILN_FORMAT_RGBA32F,
                                       KILN_FORMAT_RGBA8_UNORM};
    static const struct { int filter, strategy; } cases[] = {
        {KILN_MIP_FILTER_BOX, KILN_MIP_STRATEGY_AUTO},        {KILN_MIP_FILTER_BOX, KILN_MIP_STRATEGY_PYRAMID},
        {KILN_MIP_FILTER_BOX, KILN_MIP_STRATEGY_SINGLE_PASS}, {KILN_MIP_FILTER_BOX, KILN_MIP_STRATEGY_SUBGROUP},
        {KILN_MIP_FILTER_KAISER, KILN_MIP_STRATEGY_AUTO},     {KILN_MIP_FILTER_BOX, KILN_MIP_STRATEGY_PER_LEVEL},
    };
    static const float refs[] = {0.5f, 0.25f, 0.8f};
    size_t n = 0, changed = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        kiln_image img;
        image16(&rng, sizes[si][0], sizes[si][1], 1, &img);
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            const size_t f = (si + c) % 4;
            kiln_mip_params mp;
            kiln_mip_params_init(&mp);
            mp.filter = (kiln_mip_filter)cases[c].filter;
            mp.strategy = (kiln_mip_strategy)cases[c].strategy;
            mp.color = (si + c) % 3 == 0 ? KILN_MIP_COLOR_LINEAR : KILN_MIP_COLOR_SRGB;
            char what[160];
            for (int cov = 0; cov < 2; cov++) {
                mp.alpha_coverage_ref = cov ? refs[(si + c) % 3] : 0.0f;
                snprintf(what, sizeof what, "16-bit %ux%u into format %d filter %d strategy %d color %d coverage %g",
                         sizes[si][0], sizes[si][1], (int)fmts[f], cases[c].filter, cases[c].strategy, (int)mp.color,
                         (double)mp.alpha_coverage_ref);
                kiln_texture a, b, w;
                kiln__gpu_mip_alpha_stats a0, a1;
                kiln__gpu_mip_alpha_stats_get(fx->gpu, &a0);
                fx->gpu->last_gpu_ms = -1.0;
                if (kiln_mip_texture(fx->gpu, &img, &mp, fmts[f], &a) != KILN_OK)
                    fail_msg("%s: %s", what, kiln_last_error(fx->gpu));
                kiln__gpu_mip_alpha_stats_get(fx->gpu, &a1);
                if (a.levels > 1 && !(kiln_last_gpu_ms(fx->gpu) >= 0.0)) fail_msg("%s: not on the GPU", what);
                if (a.levels > 1 && cov && (a1.runs != a0.runs + 1 || a1.levels != a0.levels + a.levels - 1))
                    fail_msg("%s: coverage not scaled on the device", what);
                assert_int_equal(kiln_mip_texture(fx->cpu, &img, &mp, fmts[f], &b), KILN_OK);
                tex_equal(&a, &b, what);
                if (a.levels > 1 && img.width >= 16 && (si + c) % 2 == 0) { /* device decode: the wrong tables show */
                    setenv("KILN_GPU_MIP16_DEVICE_DECODE", "2", 1);
                    kiln_status st = kiln_mip_texture(fx->gpu, &img, &mp, fmts[f], &w);
                    unsetenv("KILN_GPU_MIP16_DEVICE_DECODE");
                    assert_int_equal(st, KILN_OK);
                    if (memcmp(w.data, b.data, b.data_size) == 0) fail_msg("%s: the base was not decoded on the device", what);
                    kiln_texture_free(&w);
                    setenv("KILN_GPU_MIP16_DEVICE_DECODE", "0", 1);
                    st = kiln_mip_texture(fx->gpu, &img, &mp, fmts[f], &w);
                    unsetenv("KILN_GPU_MIP16_DEVICE_DECODE");
                    assert_int_equal(st, KILN_OK);
                    tex_equal(&w, &b, "host decode");
                    kiln_texture_free(&w);
                }
                kiln_texture_free(&a);
                kiln_texture_free(&b);
                n++;
            }
            /* kiln_mip_generate (16-bit levels) with coverage, and the coverage must matter */
            mp.alpha_coverage_ref = refs[(si + c + 1) % 3];
            kiln_image lg[KILN_MAX_LEVELS], lc[KILN_MAX_LEVELS], lo[KILN_MAX_LEVELS];
            uint32_t ng = KILN_MAX_LEVELS, nc = KILN_MAX_LEVELS, no = KILN_MAX_LEVELS;
            kiln__gpu_mip_alpha_stats a0, a1;
            kiln__gpu_mip_alpha_stats_get(fx->gpu, &a0);
            snprintf(what, sizeof what, "16-bit generate %ux%u filter %d strategy %d color %d coverage %g", sizes[si][0],
                     sizes[si][1], cases[c].filter, cases[c].strategy, (int)mp.color, (double)mp.alpha_coverage_ref);
            if (c % 2) setenv("KILN_GPU_MIP_POISON", "1", 1);
            kiln_status st = kiln_mip_generate(fx->gpu, &img, &mp, lg, &ng);
            unsetenv("KILN_GPU_MIP_POISON");
            if (st != KILN_OK) fail_msg("%s: %s", what, kiln_last_error(fx->gpu));
            kiln__gpu_mip_alpha_stats_get(fx->gpu, &a1);
            if (ng > 1 && (a1.runs != a0.runs + 1 || a1.levels != a0.levels + ng - 1))
                fail_msg("%s: coverage not scaled on the device", what);
            assert_int_equal(kiln_mip_generate(fx->cpu, &img, &mp, lc, &nc), KILN_OK);
            kiln_mip_params off = mp;
            off.alpha_coverage_ref = 0.0f;
            assert_int_equal(kiln_mip_generate(fx->cpu, &img, &off, lo, &no), KILN_OK);
            assert_int_equal(ng, nc);
            int diff = 0;
            for (uint32_t l = 0; l < ng; l++) {
                const size_t bytes = (size_t)lc[l].width * lc[l].height * 8;
                if (memcmp(lg[l].pixels, lc[l].pixels, bytes) != 0) {
                    const uint16_t *pa = lg[l].pixels, *pb = lc[l].pixels;
                    size_t i = 0;
                    while (pa[i] == pb[i]) i++;
                    fail_msg("%s level %u: texel %zu channel %zu GPU %u CPU %u", what, l, i / 4, i % 4, pa[i], pb[i]);
                }
                diff |= memcmp(lo[l].pixels, lc[l].pixels, bytes) != 0;
                kiln_image_free(&lg[l]);
                kiln_image_free(&lc[l]);
                kiln_image_free(&lo[l]);
            }
            changed += (size_t)diff;
            n++;
        }
        kiln_image_free(&img);
    }
    if (changed < 5) fail_msg("alpha coverage changed only %zu 16-bit chains", changed);
    print_message("note: %zu 16-bit chains / textures on the device (RGBA8 / RGBA16F / RGBA32F outputs, alpha coverage) "
                  "byte-identical to the CPU; coverage changed %zu chains\n",
                  n, changed);
}

/* Helper mipfall: 16-bit images with the blit strategy (before, refused: "no exact 16-bit blit chain"): the base
 * decoded on the host, blitted as R32G32B32A32_SFLOAT, quantised / converted on the device. kiln_mip_generate and
 * kiln_mip_texture (RGBA8 sRGB) on opaque images whose levels are all even (where a blit is the box) are within 1 + l
 * LSB of the CPU at level l (the 8-bit blit tests' bound); on odd sizes (bilinear, not the 3-tap kernel) the worst
 * difference is printed and bounded (a broken chain fails); kiln_encode_mips is device-resident and byte-identical to
 * the host path (KILN_GPU_MIP_RESIDENT=0: the same blit chain through kiln_mip_generate, then each level encoded). */
static void blit_u16(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 1690);
    static const uint32_t dims[][2] = {{64, 64}, {128, 32}, {37, 19}, {130, 67}};
    size_t n = 0;
    for (size_t si = 0; si < sizeof dims / sizeof dims[0]; si++) {
        const int even = si < 2;
        kiln_image img;
        image16(&rng, dims[si][0], dims[si][1], 0, &img);
        for (int srgb = 0; srgb < 2; srgb++) {
            kiln_mip_params mp;
            kiln_mip_params_init(&mp);
            mp.strategy = KILN_MIP_STRATEGY_BLIT;
            mp.color = srgb ? KILN_MIP_COLOR_SRGB : KILN_MIP_COLOR_LINEAR;
            kiln_image lg[KILN_MAX_LEVELS], lc[KILN_MAX_LEVELS];
            uint32_t ng = KILN_MAX_LEVELS, nc = KILN_MAX_LEVELS;
            fx->gpu->last_gpu_ms = -1.0;
            if (kiln_mip_generate(fx->gpu, &img, &mp, lg, &ng) != KILN_OK)
                fail_msg("blit 16-bit %ux%u: %s", dims[si][0], dims[si][1], kiln_last_error(fx->gpu));
            if (!(kiln_last_gpu_ms(fx->gpu) >= 0.0)) fail_msg("blit 16-bit: not on the GPU");
            assert_int_equal(kiln_mip_generate(fx->cpu, &img, &mp, lc, &nc), KILN_OK);
            assert_int_equal(ng, nc);
            int worst = 0;
            for (uint32_t l = 1; l < ng; l++) {
                const uint16_t *a = lg[l].pixels, *b = lc[l].pixels;
                for (size_t i = 0; i < (size_t)lc[l].width * lc[l].height * 4; i++) {
                    int d = abs((int)a[i] - (int)b[i]);
                    if (d > worst) worst = d;
                    if (even && d > 1 + (int)l)
                        fail_msg("blit 16-bit %ux%u %s level %u: value %zu GPU %u CPU %u", dims[si][0], dims[si][1],
                                 srgb ? "sRGB" : "linear", l, i, a[i], b[i]);
                }
            }
            if (!even) print_message("note: blit 16-bit %ux%u %s (odd sizes): worst %d LSB (16-bit)\n", dims[si][0],
                                     dims[si][1], srgb ? "sRGB" : "linear", worst);
            if (worst > 257 * 230) fail_msg("blit 16-bit %ux%u: worst difference %d", dims[si][0], dims[si][1], worst);
            for (uint32_t l = 0; l < ng; l++) {
                kiln_image_free(&lg[l]);
                kiln_image_free(&lc[l]);
            }
            /* RGBA8 sRGB levels of the same chain */
            kiln_texture a, b;
            mp.color = KILN_MIP_COLOR_SRGB;
            if (kiln_mip_texture(fx->gpu, &img, &mp, KILN_FORMAT_RGBA8_SRGB, &a) != KILN_OK)
                fail_msg("blit 16-bit texture: %s", kiln_last_error(fx->gpu));
            assert_int_equal(kiln_mip_texture(fx->cpu, &img, &mp, KILN_FORMAT_RGBA8_SRGB, &b), KILN_OK);
            assert_int_equal(a.data_size, b.data_size);
            for (uint32_t l = 1; l < a.levels && even; l++) {
                size_t sa = 0, sb = 0;
                const uint8_t *pa = kiln_texture_image(&a, l, 0, 0, &sa), *pb = kiln_texture_image(&b, l, 0, 0, &sb);
                for (size_t i = 0; i < sa; i++)
                    if (abs((int)pa[i] - (int)pb[i]) > 1 + (int)l)
                        fail_msg("blit 16-bit RGBA8 %ux%u level %u byte %zu: GPU %u CPU %u", dims[si][0], dims[si][1], l, i,
                                 pa[i], pb[i]);
            }
            kiln_texture_free(&a);
            kiln_texture_free(&b);
            /* device-resident encoding: the host path's bytes */
            static const struct { kiln_format f; kiln_quality q; } enc[] = {
                {KILN_FORMAT_BC1_RGB_SRGB, KILN_QUALITY_NORMAL}, {KILN_FORMAT_BC3_UNORM, KILN_QUALITY_NORMAL},
                {KILN_FORMAT_EAC_R11_SNORM, KILN_QUALITY_FAST},  {KILN_FORMAT_ETC1_UNORM, KILN_QUALITY_FAST},
            };
            const size_t e = (si * 2 + (size_t)srgb) % 4;
            kiln_encode_params ep;
            kiln_encode_params_init(&ep, enc[e].f, enc[e].q);
            mp.color = srgb ? KILN_MIP_COLOR_SRGB : KILN_MIP_COLOR_LINEAR;
            char what[128];
            snprintf(what, sizeof what, "blit 16-bit %ux%u %s into %s", dims[si][0], dims[si][1], srgb ? "sRGB" : "linear",
                     kiln_format_get_info(enc[e].f)->name);
            if (srgb) setenv("KILN_GPU_MIP_POISON", "1", 1);
            resident_encode(fx, &img, &ep, &mp, &a, what);
            unsetenv("KILN_GPU_MIP_POISON");
            setenv("KILN_GPU_MIP_RESIDENT", "0", 1);
            kiln_status st = kiln_encode_mips(fx->gpu, &img, &ep, &mp, &b);
            unsetenv("KILN_GPU_MIP_RESIDENT");
            if (st != KILN_OK) fail_msg("%s (host path): %s", what, kiln_last_error(fx->gpu));
            first_diff(&a, &b, what);
            kiln_texture_free(&a);
            kiln_texture_free(&b);
            n++;
        }
        kiln_image_free(&img);
    }
    print_message("note: %zu 16-bit blit chains on the GPU (levels, RGBA8, device-resident encodes = host path)\n", n);
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
        cmocka_unit_test(generate_u16_normal_device_decode),
        cmocka_unit_test(texture_u16),
        cmocka_unit_test(encode_mips_u16),
        cmocka_unit_test(encode_mips_u16_device_decode),
        cmocka_unit_test(encode_mips_u16_normal),
        cmocka_unit_test(encode_mips_u16_filters_device_decode),
        cmocka_unit_test(encode_mips_bc6h_from_int),
        cmocka_unit_test(u16_device_outputs_and_coverage),
        cmocka_unit_test(blit_u16),
        cmocka_unit_test(validation),
    };
    if (getenv("KILN_TEST_FILTER")) cmocka_set_test_filter(getenv("KILN_TEST_FILTER"));
    return cmocka_run_group_tests(tests, setup, teardown);
}

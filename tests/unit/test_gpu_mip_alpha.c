/* test_gpu_mip_alpha.c - alpha coverage on the GPU mip paths, device-resident (helper alphacov, issue 5;
 * src/gpu/gpu_mip_alpha.c, shaders/mip_alpha.comp, the coverage parts of gpu_mip_filter.c and
 * gpu_mip_encode.c) against the CPU reference, byte for byte at every level:
 *  - generate: kiln_mip_generate with alpha_coverage_ref of 8-bit sRGB / linear and float images (odd,
 *    non-square, 1-wide sizes and sizes whose first levels go through the device histograms; box with the
 *    auto and per-level strategies, Kaiser, Lanczos-3, Mitchell; several references) on the GPU, and the
 *    context's kiln__gpu_mip_alpha_stats count the run, its levels and its histogram levels;
 *  - texture: kiln_mip_texture into RGBA8, RGBA16F and RGBA32F (alpha patched in place, every kind);
 *  - layers: kiln_mip_texture_layers of 2 x 6 faces in one batch (per-face base coverage and scales);
 *  - encode: kiln_encode_mips with --alpha-coverage from 8-bit, 16-bit and float images (BC1, BC1a, BC3,
 *    BC4, BC5, ETC1, ETC2 RGBA / RGB A1, EAC RG11; normal maps) with the chain device-resident (the
 *    kiln__gpu_mip_encode_stats and the alpha stats both count the run), KILN_GPU_MIP_POISON=1 on some;
 *  - edges: alpha all 0, all 1, a single opaque texel, tiny float alphas, references near 0 and 1 (scales
 *    0, tiny, huge and infinite), out-of-range float alphas (negative, above 1, +inf). No denormal alphas:
 *    the GPU mip pass flushes them (NVIDIA), outside its exactness contract; the scaling pass itself keeps
 *    denormals (an integer multiply) but cannot mend a flushed chain;
 *  - the host path (KILN_GPU_MIP_RESIDENT=0) and the former host scaling (KILN_GPU_MIP_ALPHA_HOST=1) give the
 *    same bytes; the Vulkan validation layer stays silent.
 * Skipped when there is no Vulkan device. */
#include "support.h"
#include "gpu/gpu_mip_encode.h"
#include "gpu/gpu_mip_alpha.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef kt_gpu_fixture fixture;

static int setup(void **state) { return kt_gpu_setup(state); }
static int teardown(void **state) { return kt_gpu_teardown(state); }

static kiln__gpu_mip_alpha_stats astats(fixture *fx)
{
    kiln__gpu_mip_alpha_stats s;
    kiln__gpu_mip_alpha_stats_get(fx->gpu, &s);
    return s;
}

/* RGBA texels with soft-edged alpha shapes (discs of varied radius with a ramp, flat 0 / 1 areas) so the
 * coverage scale is not 1; type U8, U16 or F32 (F32: values may leave [0, 1] slightly when wild). */
static void shape_image(kt_rng *rng, uint32_t w, uint32_t h, kiln_pixel_type type, int wild, kiln_image *img)
{
    assert_int_equal(kiln_image_alloc(NULL, img, w, h, type), KILN_OK);
    img->channels = 4;
    img->srgb = type == KILN_PIXEL_U8;
    float cx = (float)(kt_rng_u32(rng) % (w + 1)), cy = (float)(kt_rng_u32(rng) % (h + 1));
    float r = 1.0f + (float)(kt_rng_u32(rng) % (w > h ? w : h)) * 0.4f, soft = 1.0f + (float)(kt_rng_u32(rng) % 6);
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            size_t i = ((size_t)y * w + x) * 4;
            float d = sqrtf((x - cx) * (x - cx) + (y - cy) * (y - cy));
            float a = (r - d) / soft;
            a = a < 0.0f ? 0.0f : a > 1.0f ? 1.0f : a;
            if ((x / 5 + y / 3) % 7 == 0) a = (float)(kt_rng_u32(rng) % 1000) / 999.0f; /* speckles */
            float c[4] = {(float)(kt_rng_u32(rng) % 256) / 255.0f, (float)((x * 7 + y * 3) % 256) / 255.0f,
                          (float)(kt_rng_u32(rng) % 256) / 255.0f, a};
            for (int k = 0; k < 4; k++) {
                if (type == KILN_PIXEL_U8) ((uint8_t *)img->pixels)[i + k] = (uint8_t)(c[k] * 255.0f + 0.5f);
                else if (type == KILN_PIXEL_U16)
                    ((uint16_t *)img->pixels)[i + k] = (uint16_t)(c[k] * 65535.0f + 0.5f) ^ (uint16_t)(kt_rng_u32(rng) & 3);
                else ((float *)img->pixels)[i + k] = c[k];
            }
            if (type == KILN_PIXEL_F32 && wild && kt_rng_u32(rng) % 23 == 0) {
                /* no denormals, not even after a chain of averages: the GPU mip pass flushes them (NVIDIA; its
                 * contract excludes them), so the chain itself would differ */
                static const float odd[] = {-0.25f, 1.5f, INFINITY, 1e-20f, 3e-21f, 2e-20f, -0.0f, 1.0000001f};
                ((float *)img->pixels)[i + 3] = odd[kt_rng_u32(rng) % 8];
            }
        }
}

static void fill_alpha(kiln_image *img, float a)
{
    size_t n = (size_t)img->width * img->height;
    for (size_t i = 0; i < n; i++) {
        if (img->type == KILN_PIXEL_U8) ((uint8_t *)img->pixels)[i * 4 + 3] = (uint8_t)(a * 255.0f + 0.5f);
        else if (img->type == KILN_PIXEL_U16) ((uint16_t *)img->pixels)[i * 4 + 3] = (uint16_t)(a * 65535.0f + 0.5f);
        else ((float *)img->pixels)[i * 4 + 3] = a;
    }
}

static void same_levels(const kiln_image *a, const kiln_image *b, uint32_t n, const char *what)
{
    for (uint32_t l = 1; l < n; l++) {
        size_t bytes = (size_t)a[l].width * a[l].height * 4 * (size_t)a[l].type;
        if (a[l].width != b[l].width || a[l].height != b[l].height || memcmp(a[l].pixels, b[l].pixels, bytes) != 0) {
            size_t i = 0;
            const uint8_t *pa = a[l].pixels, *pb = b[l].pixels;
            while (pa[i] == pb[i]) i++;
            fail_msg("%s: level %u (%ux%u) differs at byte %zu (texel %zu: GPU %02x, CPU %02x)", what, l, a[l].width,
                     a[l].height, i, i / (4 * (size_t)a[l].type), pa[i], pb[i]);
        }
    }
}

/* 1 when n floats hold a denormal: the GPU mip pass may flush those (NVIDIA), so a test image must not make
 * any (a guard on the test data, checked on the CPU's levels). */
static int has_denormal(const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t b;
        memcpy(&b, (const uint8_t *)p + 4 * i, 4);
        if ((b & 0x7f800000u) == 0 && (b & 0x7fffffu) != 0) return 1;
    }
    return 0;
}

/* kiln_mip_generate on both contexts; fails unless the GPU scaled the alpha on the device. */
static void gen_compare(fixture *fx, const kiln_image *img, const kiln_mip_params *mp, const char *what)
{
    kiln_image lg[KILN_MAX_LEVELS], lc[KILN_MAX_LEVELS];
    uint32_t ng = KILN_MAX_LEVELS, nc = KILN_MAX_LEVELS;
    kiln__gpu_mip_alpha_stats s0 = astats(fx);
    if (kiln_mip_generate(fx->gpu, img, mp, lg, &ng) != KILN_OK) fail_msg("%s: GPU: %s", what, kiln_last_error(fx->gpu));
    kiln__gpu_mip_alpha_stats s1 = astats(fx);
    assert_int_equal(kiln_mip_generate(fx->cpu, img, mp, lc, &nc), KILN_OK);
    assert_int_equal(ng, nc);
    /* (16-bit images too since helper mipfall: gpu_mip16.c scales their float chain on the device) */
    if (ng > 1 && (s1.runs != s0.runs + 1 || s1.levels != s0.levels + ng - 1))
        fail_msg("%s: alpha coverage not scaled on the device", what);
    for (uint32_t l = 1; l < nc && lc[l].type == KILN_PIXEL_F32; l++)
        if (has_denormal(lc[l].pixels, (size_t)lc[l].width * lc[l].height * 4))
            fail_msg("%s: the test image makes denormals at level %u (not a GPU result)", what, l);
    same_levels(lg, lc, ng, what);
    for (uint32_t l = 0; l < ng; l++) kiln_image_free(&lg[l]);
    for (uint32_t l = 0; l < nc; l++) kiln_image_free(&lc[l]);
}

static void generate(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 2718);
    static const uint32_t sizes[][2] = {{37, 19}, {1, 7}, {5, 3}, {64, 64}, {300, 261}};
    static const struct { int filter, strategy; } cases[] = {
        {KILN_MIP_FILTER_BOX, KILN_MIP_STRATEGY_AUTO}, {KILN_MIP_FILTER_BOX, KILN_MIP_STRATEGY_PER_LEVEL},
        {KILN_MIP_FILTER_KAISER, KILN_MIP_STRATEGY_AUTO}, {KILN_MIP_FILTER_LANCZOS3, KILN_MIP_STRATEGY_AUTO},
        {KILN_MIP_FILTER_MITCHELL, KILN_MIP_STRATEGY_PER_LEVEL},
    };
    static const float refs[] = {0.5f, 0.1f, 0.9f, 0.25f};
    kiln__gpu_mip_alpha_stats a0 = astats(fx);
    size_t n = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (int t = 0; t < 3; t++) {
            kiln_image img;
            shape_image(&rng, sizes[si][0], sizes[si][1], t == 2 ? KILN_PIXEL_F32 : KILN_PIXEL_U8, 0, &img);
            if (t == 1) img.srgb = 0;
            for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
                if (si == 4 && c % 2 == 1) continue; /* time: the large size with three cases */
                kiln_mip_params mp;
                kiln_mip_params_init(&mp);
                mp.filter = (kiln_mip_filter)cases[c].filter;
                mp.strategy = (kiln_mip_strategy)cases[c].strategy;
                mp.alpha_coverage_ref = refs[(si + c + (size_t)t) % 4];
                if (c == 3) mp.alpha = KILN_MIP_ALPHA_PREMULTIPLIED;
                char what[128];
                snprintf(what, sizeof what, "generate %ux%u type %d filter %d strategy %d ref %g", sizes[si][0],
                         sizes[si][1], t, cases[c].filter, cases[c].strategy, (double)mp.alpha_coverage_ref);
                gen_compare(fx, &img, &mp, what);
                n++;
            }
            kiln_image_free(&img);
        }
    kiln__gpu_mip_alpha_stats a1 = astats(fx);
    print_message("note: %zu GPU chains with alpha coverage byte-identical to the CPU (%llu levels, %llu by histogram)\n",
                  n, (unsigned long long)(a1.levels - a0.levels), (unsigned long long)(a1.hist_levels - a0.hist_levels));
    assert_true(a1.hist_levels > a0.hist_levels); /* 300x261: level 1 is counted by the device histograms */
}

static void texture(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 31);
    static const kiln_format fmts[] = {KILN_FORMAT_RGBA8_SRGB, KILN_FORMAT_RGBA16F, KILN_FORMAT_RGBA32F};
    for (int t = 0; t < 2; t++) {
        kiln_image img;
        shape_image(&rng, 270, 133, t ? KILN_PIXEL_F32 : KILN_PIXEL_U8, 1, &img);
        for (size_t k = 0; k < 3; k++) {
            kiln_mip_params mp;
            kiln_mip_params_init(&mp);
            mp.alpha_coverage_ref = k == 1 ? 0.3f : 0.6f;
            mp.filter = k == 2 ? KILN_MIP_FILTER_KAISER : KILN_MIP_FILTER_BOX;
            if (t) mp.alpha = KILN_MIP_ALPHA_SEPARATE; /* wild float alphas (see edges) */
            kiln_texture a, b;
            kiln__gpu_mip_alpha_stats s0 = astats(fx);
            if (kiln_mip_texture(fx->gpu, &img, &mp, fmts[k], &a) != KILN_OK)
                fail_msg("texture %d format %d: %s", t, (int)fmts[k], kiln_last_error(fx->gpu));
            kiln__gpu_mip_alpha_stats s1 = astats(fx);
            assert_int_equal(kiln_mip_texture(fx->cpu, &img, &mp, fmts[k], &b), KILN_OK);
            if (s1.runs != s0.runs + 1) fail_msg("texture %d format %d: not on the device", t, (int)fmts[k]);
            assert_int_equal(a.data_size, b.data_size);
            if (fmts[k] == KILN_FORMAT_RGBA16F) {
                /* alpha: exact; colour: the mip pass's own contract for half outputs (packHalf2x16's rounding is
                 * the driver's; lavapipe matches the CPU exactly) */
                for (size_t i = 0; i + 2 <= a.data_size; i += 2) {
                    uint16_t ha, hb;
                    memcpy(&ha, a.data + i, 2);
                    memcpy(&hb, b.data + i, 2);
                    int d = (int)ha - (int)hb;
                    if ((i / 2) % 4 == 3 ? d != 0 : (d > 1 || d < -1))
                        fail_msg("texture %d RGBA16F: half %zu (channel %zu) GPU %04x CPU %04x", t, i / 2, (i / 2) % 4, ha, hb);
                }
            } else if (fmts[k] == KILN_FORMAT_RGBA32F && has_denormal(b.data, b.data_size / 4)) {
                fail_msg("texture %d: the test image makes denormals (not a GPU result)", t);
            } else if (memcmp(a.data, b.data, a.data_size) != 0) {
                size_t i = 0;
                while (a.data[i] == b.data[i]) i++;
                fail_msg("texture %d format %d: byte %zu differs (GPU %02x, CPU %02x)", t, (int)fmts[k], i, a.data[i],
                         b.data[i]);
            }
            kiln_texture_free(&a);
            kiln_texture_free(&b);
        }
        kiln_image_free(&img);
    }
}

/* kiln_mip_texture_layers: 2 layers x 6 faces in one GPU batch, each face its own base coverage and scales. */
static void layers(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 612);
    kiln_image imgs[12];
    for (int i = 0; i < 12; i++) shape_image(&rng, 45, 45, KILN_PIXEL_U8, 0, &imgs[i]);
    fill_alpha(&imgs[3], 0.0f);
    kiln_mip_params mp;
    kiln_mip_params_init(&mp);
    mp.alpha_coverage_ref = 0.45f;
    kiln_texture a, b;
    kiln__gpu_mip_alpha_stats s0 = astats(fx);
    if (kiln_mip_texture_layers(fx->gpu, imgs, 2, 6, 1, &mp, KILN_FORMAT_RGBA8_SRGB, &a) != KILN_OK)
        fail_msg("layers: %s", kiln_last_error(fx->gpu));
    kiln__gpu_mip_alpha_stats s1 = astats(fx);
    assert_int_equal(kiln_mip_texture_layers(fx->cpu, imgs, 2, 6, 1, &mp, KILN_FORMAT_RGBA8_SRGB, &b), KILN_OK);
    assert_true(s1.runs == s0.runs + 1 && s1.levels == s0.levels + 12 * (a.levels - 1));
    assert_int_equal(a.data_size, b.data_size);
    assert_memory_equal(a.data, b.data, a.data_size);
    kiln_texture_free(&a);
    kiln_texture_free(&b);
    for (int i = 0; i < 12; i++) kiln_image_free(&imgs[i]);
}

/* kiln_encode_mips on both contexts; fails unless the device-resident path ran with the alpha on the device. */
static void enc_compare(fixture *fx, const kiln_image *img, kiln_format fmt, kiln_quality q, const kiln_mip_params *mp,
                        const char *what)
{
    kiln_encode_params ep;
    kiln_encode_params_init(&ep, fmt, q);
    kiln__gpu_mip_encode_stats e0, e1;
    kiln__gpu_mip_encode_stats_get(fx->gpu, &e0);
    kiln__gpu_mip_alpha_stats s0 = astats(fx);
    kiln_texture a, b;
    if (kiln_encode_mips(fx->gpu, img, &ep, mp, &a) != KILN_OK) fail_msg("%s: GPU: %s", what, kiln_last_error(fx->gpu));
    kiln__gpu_mip_encode_stats_get(fx->gpu, &e1);
    kiln__gpu_mip_alpha_stats s1 = astats(fx);
    /* formats that store no alpha skip the coverage passes (helper mipfall): their bytes must still be the CPU's made
     * with coverage */
    const kiln_format_info *fa = kiln_format_get_info(fmt);
    const int keeps_alpha = fa->channels >= 4 || (fa->flags & KILN_FF_ALPHA1) != 0;
    if (e1.runs != e0.runs + 1 || e1.levels != e0.levels + a.levels ||
        (keeps_alpha ? s1.runs != s0.runs + 1 || s1.levels != s0.levels + a.levels - 1 : s1.runs != s0.runs))
        fail_msg("%s: not device-resident with the alpha scaled on the device (or scaled for a format without alpha)",
                 what);
    assert_int_equal(kiln_encode_mips(fx->cpu, img, &ep, mp, &b), KILN_OK);
    assert_int_equal(a.levels, b.levels);
    const kiln_format_info *fi = kiln_format_get_info(fmt);
    for (uint32_t l = 0; l < a.levels; l++) {
        size_t sa = 0, sb = 0;
        const uint8_t *pa = kiln_texture_image(&a, l, 0, 0, &sa), *pb = kiln_texture_image(&b, l, 0, 0, &sb);
        assert_int_equal(sa, sb);
        if (memcmp(pa, pb, sa) != 0) {
            size_t i = 0;
            while (pa[i] == pb[i]) i++;
            fail_msg("%s: level %u block %zu differs from the CPU", what, l, i / fi->block_bytes);
        }
    }
    kiln_texture_free(&a);
    kiln_texture_free(&b);
}

static void encode(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 1414);
    static const struct { kiln_format f; kiln_quality q; } cases[] = {
        {KILN_FORMAT_BC3_SRGB, KILN_QUALITY_NORMAL},      {KILN_FORMAT_BC1_RGBA_UNORM, KILN_QUALITY_NORMAL},
        {KILN_FORMAT_BC1_RGB_SRGB, KILN_QUALITY_HIGH},    {KILN_FORMAT_BC4_UNORM, KILN_QUALITY_NORMAL},
        {KILN_FORMAT_BC5_UNORM, KILN_QUALITY_NORMAL},     {KILN_FORMAT_ETC2_RGBA8_SRGB, KILN_QUALITY_FAST},
        {KILN_FORMAT_ETC2_RGB8A1_UNORM, KILN_QUALITY_NORMAL}, {KILN_FORMAT_ETC1_UNORM, KILN_QUALITY_FAST},
        {KILN_FORMAT_EAC_RG11_UNORM, KILN_QUALITY_FAST},  {KILN_FORMAT_BC3_UNORM, KILN_QUALITY_HIGH},
    };
    static const uint32_t sizes[][2] = {{37, 19}, {300, 261}, {6, 1}};
    static const kiln_pixel_type types[] = {KILN_PIXEL_U8, KILN_PIXEL_U16, KILN_PIXEL_F32};
    size_t n = 0;
    for (size_t si = 0; si < 3; si++)
        for (size_t ti = 0; ti < 3; ti++) {
            kiln_image img;
            shape_image(&rng, sizes[si][0], sizes[si][1], types[ti], 0, &img);
            for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
                if (si == 1 && (k + ti) % 3 != 0) continue; /* time */
                const kiln_format_info *fi = kiln_format_get_info(cases[k].f);
                kiln_mip_params mp;
                kiln_mip_params_init(&mp);
                mp.alpha_coverage_ref = (k % 3 == 0) ? 0.5f : (k % 3 == 1) ? 0.2f : 0.75f;
                if ((k + si) % 4 == 1) mp.filter = KILN_MIP_FILTER_KAISER;
                if ((k + ti) % 5 == 2) mp.strategy = KILN_MIP_STRATEGY_PER_LEVEL;
                const int poison = (k + si + ti) % 2;
                if (poison) setenv("KILN_GPU_MIP_POISON", "1", 1);
                char what[160];
                snprintf(what, sizeof what, "%s quality %d from %d-byte texels %ux%u filter %d ref %g", fi->name,
                         (int)cases[k].q, (int)types[ti], sizes[si][0], sizes[si][1], (int)mp.filter,
                         (double)mp.alpha_coverage_ref);
                enc_compare(fx, &img, cases[k].f, cases[k].q, &mp, what);
                unsetenv("KILN_GPU_MIP_POISON");
                n++;
            }
            kiln_image_free(&img);
        }
    /* normal maps with coverage (alpha is untouched by the renormalisation; 8-bit: unorm 2v - 1 mapping) */
    for (size_t ti = 0; ti < 3; ti += 2) {
        kiln_image img;
        shape_image(&rng, 70, 45, types[ti], 0, &img);
        img.srgb = 0;
        kiln_mip_params mp;
        kiln_mip_params_init(&mp);
        mp.normal_map = 1;
        mp.alpha_coverage_ref = 0.4f;
        mp.filter = ti ? KILN_MIP_FILTER_MITCHELL : KILN_MIP_FILTER_BOX;
        enc_compare(fx, &img, KILN_FORMAT_BC3_UNORM, KILN_QUALITY_NORMAL, &mp, ti ? "normal map float bc3" : "normal map bc3");
        gen_compare(fx, &img, &mp, ti ? "normal map float" : "normal map");
        kiln_image_free(&img);
        n++;
    }
    print_message("note: %zu device-resident encodes with alpha coverage byte-identical to the CPU\n", n);
}

/* Edge cases of the scale search and of alpha' = min(1, s * a): flat alpha (nothing or everything passes),
 * one opaque texel, tiny / out-of-range float alphas, references near 0 and 1. */
static void edges(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 77);
    static const float refs[] = {0.5f, 0.001f, 0.999f};
    for (int t = 0; t < 3; t++) {
        const kiln_pixel_type type = t == 0 ? KILN_PIXEL_U8 : t == 1 ? KILN_PIXEL_U16 : KILN_PIXEL_F32;
        for (int e = 0; e < 6; e++) {
            kiln_image img;
            shape_image(&rng, e == 5 ? 203 : 33, e == 5 ? 170 : 21, type, t == 2, &img);
            if (e == 0) fill_alpha(&img, 0.0f);
            if (e == 1) fill_alpha(&img, 1.0f);
            if (e == 2) { /* one opaque texel */
                fill_alpha(&img, 0.0f);
                img.type == KILN_PIXEL_U8    ? (void)(((uint8_t *)img.pixels)[(5 * 33 + 7) * 4 + 3] = 255)
                : img.type == KILN_PIXEL_U16 ? (void)(((uint16_t *)img.pixels)[(5 * 33 + 7) * 4 + 3] = 65535)
                                             : (void)(((float *)img.pixels)[(5 * 33 + 7) * 4 + 3] = 1.0f);
            }
            if (e == 3) fill_alpha(&img, type == KILN_PIXEL_F32 ? 1e-30f : 1.0f / 255.0f); /* tiny: huge scales */
            if (e == 4 && type == KILN_PIXEL_F32) { /* a few large alphas among tiny ones (huge scales) */
                float *p = img.pixels;
                for (size_t i = 0; i < (size_t)img.width * img.height; i++)
                    p[i * 4 + 3] = (i % 17 == 0) ? 0.75f : (i % 3 == 0) ? 2e-20f : 3e-21f;
            }
            for (int r = 0; r < 3; r++) {
                kiln_mip_params mp;
                kiln_mip_params_init(&mp);
                mp.alpha_coverage_ref = refs[r];
                /* tiny and infinite alphas of the float images: an alpha-weighted chain divides colour by them
                 * (inf / inf, tiny products), so alpha is separate data there */
                if (e == 4 || type == KILN_PIXEL_F32) mp.alpha = KILN_MIP_ALPHA_SEPARATE;
                char what[96];
                snprintf(what, sizeof what, "edge %d type %d ref %g", e, t, (double)refs[r]);
                gen_compare(fx, &img, &mp, what);
                if (r == 0 && type == KILN_PIXEL_F32) {
                    kiln_texture a, b;
                    assert_int_equal(kiln_mip_texture(fx->gpu, &img, &mp, KILN_FORMAT_RGBA32F, &a), KILN_OK);
                    assert_int_equal(kiln_mip_texture(fx->cpu, &img, &mp, KILN_FORMAT_RGBA32F, &b), KILN_OK);
                    if (memcmp(a.data, b.data, a.data_size) != 0) fail_msg("%s: RGBA32F differs", what);
                    kiln_texture_free(&a);
                    kiln_texture_free(&b);
                }
                if (r != 1) {
                    snprintf(what, sizeof what, "edge %d type %d ref %g bc3", e, t, (double)refs[r]);
                    enc_compare(fx, &img, KILN_FORMAT_BC3_UNORM, KILN_QUALITY_NORMAL, &mp, what);
                }
            }
            kiln_image_free(&img);
        }
    }
}

/* KILN_GPU_MIP_RESIDENT=0 (the host path: kiln_mip_generate on the GPU, then each level encoded) gives the
 * bytes of the resident path; the coverage pass decides (without it the alpha blocks differ). */
static void host_path(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 5);
    kiln_image img;
    shape_image(&rng, 96, 80, KILN_PIXEL_U8, 0, &img);
    kiln_mip_params mp;
    kiln_mip_params_init(&mp);
    mp.alpha_coverage_ref = 0.7f;
    kiln_encode_params ep;
    kiln_encode_params_init(&ep, KILN_FORMAT_BC3_SRGB, KILN_QUALITY_NORMAL);
    kiln_texture a, b, c;
    assert_int_equal(kiln_encode_mips(fx->gpu, &img, &ep, &mp, &a), KILN_OK);
    setenv("KILN_GPU_MIP_RESIDENT", "0", 1);
    kiln_status st = kiln_encode_mips(fx->gpu, &img, &ep, &mp, &b);
    unsetenv("KILN_GPU_MIP_RESIDENT");
    assert_int_equal(st, KILN_OK);
    kiln_mip_params off = mp;
    off.alpha_coverage_ref = 0.0f;
    assert_int_equal(kiln_encode_mips(fx->gpu, &img, &ep, &off, &c), KILN_OK);
    assert_int_equal(a.data_size, b.data_size);
    assert_memory_equal(a.data, b.data, a.data_size);
    assert_true(a.data_size == c.data_size && memcmp(a.data, c.data, a.data_size) != 0);
    /* KILN_GPU_MIP_ALPHA_HOST=1 (the former route: the chain downloaded, scaled on the host): same levels, not
     * counted as device scaling */
    kiln_image lg[KILN_MAX_LEVELS], lh[KILN_MAX_LEVELS];
    uint32_t ng = KILN_MAX_LEVELS, nh = KILN_MAX_LEVELS;
    mp.filter = KILN_MIP_FILTER_LANCZOS3;
    assert_int_equal(kiln_mip_generate(fx->gpu, &img, &mp, lg, &ng), KILN_OK);
    kiln__gpu_mip_alpha_stats s0 = astats(fx);
    setenv("KILN_GPU_MIP_ALPHA_HOST", "1", 1);
    st = kiln_mip_generate(fx->gpu, &img, &mp, lh, &nh);
    unsetenv("KILN_GPU_MIP_ALPHA_HOST");
    assert_int_equal(st, KILN_OK);
    assert_int_equal(astats(fx).runs, s0.runs);
    assert_int_equal(ng, nh);
    same_levels(lg, lh, ng, "KILN_GPU_MIP_ALPHA_HOST=1");
    for (uint32_t l = 0; l < ng; l++) {
        kiln_image_free(&lg[l]);
        kiln_image_free(&lh[l]);
    }
    kiln_texture_free(&a);
    kiln_texture_free(&b);
    kiln_texture_free(&c);
    kiln_image_free(&img);
}

/* Helper mipfall: alpha coverage with the tiled box strategies (subgroup, pyramid, single-pass; before, only auto
 * and per-level): kiln_mip_generate / kiln_mip_texture (gpu_mip_filter.c cov_tiled: the tiled kernels' fp32 chain,
 * scaled and written as RGBA8 / RGBA16F / RGBA32F on the device) and kiln_encode_mips (device-resident) byte for
 * byte against the CPU, the alpha stats counting every run; also with KILN_GPU_MIP_FAST=0 / 1 (the general tile
 * kernels). The coverage must change the levels (a wrong scale could not pass). */
static void strategies(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 4242);
    static const int strats[] = {KILN_MIP_STRATEGY_SUBGROUP, KILN_MIP_STRATEGY_PYRAMID, KILN_MIP_STRATEGY_SINGLE_PASS};
    static const uint32_t sizes[][2] = {{37, 19}, {64, 64}, {256, 96}, {300, 261}, {1, 7}};
    static const float refs[] = {0.5f, 0.2f, 0.8f};
    static const char *fast_env[] = {NULL, "0", "1"};
    size_t n = 0, changed[3] = {0, 0, 0};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (int t = 0; t < 3; t++) {
            kiln_image img;
            shape_image(&rng, sizes[si][0], sizes[si][1], t == 2 ? KILN_PIXEL_F32 : KILN_PIXEL_U8, 0, &img);
            if (t == 1) img.srgb = 0;
            for (size_t k = 0; k < 3; k++) {
                const char *fe = fast_env[(si + (size_t)t + k) % 3];
                if (fe) setenv("KILN_GPU_MIP_FAST", fe, 1);
                kiln_mip_params mp;
                kiln_mip_params_init(&mp);
                mp.strategy = (kiln_mip_strategy)strats[k];
                mp.alpha_coverage_ref = refs[(si + (size_t)t + k) % 3];
                if ((si + k) % 4 == 3) mp.alpha = KILN_MIP_ALPHA_PREMULTIPLIED;
                char what[160];
                snprintf(what, sizeof what, "strategy %d %ux%u type %d ref %g fast %s", strats[k], sizes[si][0],
                         sizes[si][1], t, (double)mp.alpha_coverage_ref, fe ? fe : "default");
                gen_compare(fx, &img, &mp, what);
                /* the coverage changed something (else a wrong scale could pass) */
                kiln_image lg[KILN_MAX_LEVELS], lo[KILN_MAX_LEVELS];
                uint32_t ng = KILN_MAX_LEVELS, no = KILN_MAX_LEVELS;
                kiln_mip_params off = mp;
                off.alpha_coverage_ref = 0.0f;
                assert_int_equal(kiln_mip_generate(fx->gpu, &img, &mp, lg, &ng), KILN_OK);
                assert_int_equal(kiln_mip_generate(fx->gpu, &img, &off, lo, &no), KILN_OK);
                for (uint32_t l = 1; l < ng; l++)
                    if (memcmp(lg[l].pixels, lo[l].pixels, (size_t)lg[l].width * lg[l].height * 4 * (size_t)lg[l].type)) {
                        changed[k]++;
                        break;
                    }
                for (uint32_t l = 0; l < ng; l++) kiln_image_free(&lg[l]);
                for (uint32_t l = 0; l < no; l++) kiln_image_free(&lo[l]);
                /* the encoders on the device-resident chain */
                static const struct { kiln_format f; kiln_quality q; } enc[] = {
                    {KILN_FORMAT_BC3_SRGB, KILN_QUALITY_NORMAL}, {KILN_FORMAT_BC1_RGBA_UNORM, KILN_QUALITY_NORMAL},
                    {KILN_FORMAT_ETC2_RGBA8_SRGB, KILN_QUALITY_FAST}, {KILN_FORMAT_BC3_UNORM, KILN_QUALITY_HIGH},
                };
                const size_t e = (si + (size_t)t + k) % 4;
                snprintf(what, sizeof what, "encode %s strategy %d %ux%u type %d ref %g fast %s",
                         kiln_format_get_info(enc[e].f)->name, strats[k], sizes[si][0], sizes[si][1], t,
                         (double)mp.alpha_coverage_ref, fe ? fe : "default");
                if (k == 1) setenv("KILN_GPU_MIP_POISON", "1", 1);
                enc_compare(fx, &img, enc[e].f, enc[e].q, &mp, what);
                unsetenv("KILN_GPU_MIP_POISON");
                unsetenv("KILN_GPU_MIP_FAST");
                n++;
            }
            kiln_image_free(&img);
        }
    for (int k = 0; k < 3; k++)
        if (changed[k] == 0) fail_msg("strategy %d: alpha coverage never changed a level", strats[k]);
    /* 16-bit sources into the resident encoder with each strategy */
    for (size_t k = 0; k < 3; k++) {
        kiln_image img;
        shape_image(&rng, 70 + (uint32_t)k * 31, 45, KILN_PIXEL_U16, 0, &img);
        kiln_mip_params mp;
        kiln_mip_params_init(&mp);
        mp.strategy = (kiln_mip_strategy)strats[k];
        mp.alpha_coverage_ref = refs[k];
        char what[96];
        snprintf(what, sizeof what, "encode 16-bit BC3 strategy %d", strats[k]);
        enc_compare(fx, &img, KILN_FORMAT_BC3_UNORM, KILN_QUALITY_NORMAL, &mp, what);
        kiln_image_free(&img);
        n++;
    }
    /* kiln_mip_texture into every output kind (RGBA16F: exact now, colour included) and a batch of layers */
    static const kiln_format fmts[] = {KILN_FORMAT_RGBA8_SRGB, KILN_FORMAT_RGBA16F, KILN_FORMAT_RGBA32F, KILN_FORMAT_RGBA8_UNORM};
    for (int t = 0; t < 2; t++) {
        kiln_image img;
        shape_image(&rng, 270, 133, t ? KILN_PIXEL_F32 : KILN_PIXEL_U8, 1, &img);
        for (size_t k = 0; k < 4; k++) {
            kiln_mip_params mp;
            kiln_mip_params_init(&mp);
            mp.strategy = (kiln_mip_strategy)strats[(k + (size_t)t) % 3];
            mp.alpha_coverage_ref = k == 1 ? 0.3f : 0.6f;
            if (t) mp.alpha = KILN_MIP_ALPHA_SEPARATE;
            kiln_texture a, b;
            kiln__gpu_mip_alpha_stats s0 = astats(fx);
            if (kiln_mip_texture(fx->gpu, &img, &mp, fmts[k], &a) != KILN_OK)
                fail_msg("strategies texture %d format %d: %s", t, (int)fmts[k], kiln_last_error(fx->gpu));
            kiln__gpu_mip_alpha_stats s1 = astats(fx);
            assert_int_equal(kiln_mip_texture(fx->cpu, &img, &mp, fmts[k], &b), KILN_OK);
            if (s1.runs != s0.runs + 1) fail_msg("strategies texture %d format %d: not on the device", t, (int)fmts[k]);
            assert_int_equal(a.data_size, b.data_size);
            if (fmts[k] == KILN_FORMAT_RGBA32F && has_denormal(b.data, b.data_size / 4))
                fail_msg("strategies texture %d: the test image makes denormals (not a GPU result)", t);
            if (memcmp(a.data, b.data, a.data_size) != 0) {
                size_t i = 0;
                while (a.data[i] == b.data[i]) i++;
                fail_msg("strategies texture %d format %d strategy %d: byte %zu differs (GPU %02x, CPU %02x)", t,
                         (int)fmts[k], (int)mp.strategy, i, a.data[i], b.data[i]);
            }
            kiln_texture_free(&a);
            kiln_texture_free(&b);
            n++;
        }
        kiln_image_free(&img);
    }
    kiln_image imgs[12];
    for (int i = 0; i < 12; i++) shape_image(&rng, 46, 46, KILN_PIXEL_U8, 0, &imgs[i]);
    fill_alpha(&imgs[5], 1.0f);
    for (size_t k = 0; k < 3; k++) {
        kiln_mip_params mp;
        kiln_mip_params_init(&mp);
        mp.strategy = (kiln_mip_strategy)strats[k];
        mp.alpha_coverage_ref = 0.45f;
        kiln_texture a, b;
        kiln__gpu_mip_alpha_stats s0 = astats(fx);
        if (kiln_mip_texture_layers(fx->gpu, imgs, 2, 6, 1, &mp, k == 1 ? KILN_FORMAT_RGBA16F : KILN_FORMAT_RGBA8_SRGB, &a) !=
            KILN_OK)
            fail_msg("strategies layers: %s", kiln_last_error(fx->gpu));
        kiln__gpu_mip_alpha_stats s1 = astats(fx);
        assert_int_equal(
            kiln_mip_texture_layers(fx->cpu, imgs, 2, 6, 1, &mp, k == 1 ? KILN_FORMAT_RGBA16F : KILN_FORMAT_RGBA8_SRGB, &b),
            KILN_OK);
        assert_true(s1.runs == s0.runs + 1 && s1.levels == s0.levels + 12 * (a.levels - 1));
        assert_int_equal(a.data_size, b.data_size);
        assert_memory_equal(a.data, b.data, a.data_size);
        kiln_texture_free(&a);
        kiln_texture_free(&b);
        n++;
    }
    for (int i = 0; i < 12; i++) kiln_image_free(&imgs[i]);
    print_message("note: %zu chains / encodes with alpha coverage and the subgroup, pyramid and single-pass strategies "
                  "byte-identical to the CPU\n",
                  n);
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
        cmocka_unit_test(generate), cmocka_unit_test(texture), cmocka_unit_test(layers), cmocka_unit_test(encode),
        cmocka_unit_test(edges),    cmocka_unit_test(host_path), cmocka_unit_test(strategies),
        cmocka_unit_test(validation),
    };
    /* lavapipe's compile time (CI): the single pass's pipelines of test_gpu_mip (the default plans' stage kinds
     * all compiled in, one per mode; gpu_mip.c spec_union) instead of one per tail size and set of chained kinds;
     * the specialised ones run in test_gpu_mip's public_api, test_gpu_mip16 and test_gpu_mip_encode.
     * KILN_GPU_MIP_SPEC_UNION=0 in the environment: specialised here too */
    setenv("KILN_GPU_MIP_SPEC_UNION", "1", 0);
    if (getenv("KILN_TEST_FILTER")) cmocka_set_test_filter(getenv("KILN_TEST_FILTER"));
    return cmocka_run_group_tests(tests, setup, teardown);
}

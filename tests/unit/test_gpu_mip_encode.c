/* test_gpu_mip_encode.c - kiln_encode_mips on the GPU with the chain kept on the device
 * (src/gpu/gpu_mip_encode.c, issue #5) against the CPU (kiln_encode_mips on a CPU context): every level
 * of every case byte-identical, for BC1, BC1a, BC3, BC4, BC5 (UNORM, sRGB, SNORM), BC6H normal (fast and
 * the GPU-native high against the host path on the GPU: they are not the CPU's), odd and even sizes
 * (1x1 and 37x19 included), sRGB and linear chains, EAC R11 / RG11 (unsigned and signed), ETC1 (every quality) and ETC2 RGB
 * and RGBA FAST (etc_family, etc_routing: what stays on the host path), ETC2 RGB / RGBA above FAST and RGB A1
 * (etc2_search_resident: the T / H pass on the device, also against the host path), the box filter (single-pass and per-level strategies)
 * and the quality filters, alpha-weighted and opaque images, a normal map, fast to max quality. The
 * device-resident path must be the one taken: the context's counters (kiln__gpu_mip_encode_stats_get)
 * count a run and every level it encoded; KILN_GPU_MIP_RESIDENT=0 must take the host
 * path (counters unchanged, same bytes). An image with flat patches at high quality sends blocks to
 * the CPU encoder through the device-side gather; with KILN_GPU_SKIP_FALLBACK=1 (those blocks keep the
 * device's bytes) the output must then differ, so the gather is what makes it right. What the path
 * does not cover (alpha coverage, float images, one level) goes the host way. The validation layer stays
 * silent. Skipped when there is no Vulkan device. On a mismatch, diagnose() prints which stage differs
 * (host path on the GPU, the GPU mip levels alone, the GPU encoder alone on the CPU's levels).
 * KILN_GPU_MIP_POISON=1 fills the path's device buffers with 0xAB first (NVIDIA-like fresh memory).
 * float_chain_8bit_formats / blit_strategy_chains (helper mipres2): float chains into BC1-BC5 / ETC / EAC
 * (converted on the device) and the blit strategy's chains, against the host path on the GPU. */
#include "support.h"
#include "gpu/gpu_mip_encode.h"
#include "gpu/vk.h" /* staging_buffers: the device's discrete flag */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef kt_gpu_fixture fixture;

static size_t g_cases, g_hostref, g_resident;

static int setup(void **state) { return kt_gpu_setup(state); }
static int teardown(void **state) { return kt_gpu_teardown(state); }

static kiln__gpu_mip_encode_stats stats(fixture *fx)
{
    kiln__gpu_mip_encode_stats s;
    kiln__gpu_mip_encode_stats_get(fx->gpu, &s);
    return s;
}

/* Random texels with flat 8x8 patches (flat blocks: the CPU encoder's single-colour path at high
 * quality) and, when alpha, transparent and partial alpha. */
static void patchy_image(kt_rng *rng, uint32_t w, uint32_t h, int alpha, int srgb, kiln_image *img)
{
    assert_int_equal(kiln_image_alloc(NULL, img, w, h, KILN_PIXEL_U8), KILN_OK);
    img->channels = 4;
    img->srgb = srgb;
    uint8_t *p = img->pixels;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            uint8_t *t = p + ((size_t)y * w + x) * 4;
            if (((x / 8) + (y / 8)) % 3 == 0) {
                uint32_t c = ((x / 8) * 2654435761u) ^ ((y / 8) * 40503u);
                t[0] = (uint8_t)c;
                t[1] = (uint8_t)(c >> 8);
                t[2] = (uint8_t)(c >> 16);
                t[3] = 255;
            } else {
                kt_rng_bytes(rng, t, 4);
                if (!alpha) t[3] = 255;
                else if (t[3] < 64) t[3] = 0;
            }
        }
}

/* On a mismatch: which stage differs from the CPU? (1) the host path on the GPU
 * (KILN_GPU_MIP_RESIDENT=0: GPU mip chain downloaded, GPU encoder per level), (2) the GPU mip levels
 * alone (kiln_mip_generate, GPU vs CPU context, same colour space as kiln_encode_mips picks), (3) the GPU
 * encoder alone on the CPU's levels (kiln_encode_image, GPU vs CPU context). Prints only. */
static void diagnose(fixture *fx, const kiln_image *img, const kiln_encode_params *ep, const kiln_mip_params *mp,
                     const kiln_texture *ref, const char *what)
{
    const kiln_format_info *fi = kiln_format_get_info(ep->format);
    kiln_texture h;
    setenv("KILN_GPU_MIP_RESIDENT", "0", 1);
    kiln_status st = kiln_encode_mips(fx->gpu, img, ep, mp, &h);
    unsetenv("KILN_GPU_MIP_RESIDENT");
    if (st != KILN_OK) {
        print_message("diag %s: host path on the GPU failed: %s\n", what, kiln_last_error(fx->gpu));
    } else {
        for (uint32_t l = 0; l < h.levels && l < ref->levels; l++) {
            size_t sa = 0, sb = 0;
            const uint8_t *pa = kiln_texture_image(&h, l, 0, 0, &sa), *pb = kiln_texture_image(ref, l, 0, 0, &sb);
            size_t nd = 0, first = 0;
            for (size_t i = 0; pa && pb && sa == sb && i < sa; i += fi->block_bytes)
                if (memcmp(pa + i, pb + i, fi->block_bytes) != 0 && nd++ == 0) first = i / fi->block_bytes;
            print_message("diag %s: stage 1 host path (KILN_GPU_MIP_RESIDENT=0) level %u: %s (%zu blocks differ, first %zu)\n",
                          what, l, nd ? "DIFFERS" : "same as CPU", nd, first);
        }
        kiln_texture_free(&h);
    }
    kiln_mip_params m2 = *mp;
    if (m2.color == KILN_MIP_COLOR_AUTO && !m2.normal_map)
        m2.color = (fi->flags & KILN_FF_SRGB) && !img->hdr ? KILN_MIP_COLOR_SRGB : KILN_MIP_COLOR_LINEAR;
    kiln_image lg[KILN_MAX_LEVELS], lc[KILN_MAX_LEVELS];
    uint32_t ng = KILN_MAX_LEVELS, nc = KILN_MAX_LEVELS;
    if (kiln_mip_generate(fx->gpu, img, &m2, lg, &ng) != KILN_OK) {
        print_message("diag %s: GPU kiln_mip_generate failed: %s\n", what, kiln_last_error(fx->gpu));
        return;
    }
    if (kiln_mip_generate(fx->cpu, img, &m2, lc, &nc) != KILN_OK) {
        print_message("diag %s: CPU kiln_mip_generate failed: %s\n", what, kiln_last_error(fx->cpu));
        for (uint32_t l = 0; l < ng; l++) kiln_image_free(&lg[l]);
        return;
    }
    for (uint32_t l = 0; l < ng && l < nc; l++) {
        size_t n = (size_t)lc[l].width * lc[l].height * lc[l].channels * lc[l].type, nd = 0, first = 0;
        int worst = 0;
        const uint8_t *a = lg[l].pixels, *b = lc[l].pixels;
        if (lg[l].type == KILN_PIXEL_U8 && lg[l].width == lc[l].width && lg[l].height == lc[l].height &&
            lg[l].channels == lc[l].channels) {
            for (size_t i = 0; i < n; i++) {
                int d = abs((int)a[i] - (int)b[i]);
                if (d && nd++ == 0) first = i;
                if (d > worst) worst = d;
            }
            print_message("diag %s: stage 2 GPU mip level %u (%ux%u): %s (%zu bytes differ, worst %d LSB, first texel (%zu, %zu) "
                          "channel %zu)\n",
                          what, l, lc[l].width, lc[l].height, nd ? "DIFFERS" : "same as CPU", nd, worst,
                          (first / lc[l].channels) % lc[l].width, (first / lc[l].channels) / lc[l].width,
                          first % lc[l].channels);
        } else {
            print_message("diag %s: stage 2 GPU mip level %u: %s\n", what, l,
                          lg[l].type == lc[l].type && n && memcmp(a, b, n) == 0 ? "same as CPU" : "DIFFERS (or not 8-bit)");
        }
        /* stage 3: the GPU encoder alone on the CPU's level */
        size_t es = kiln_format_image_size(ep->format, lc[l].width, lc[l].height);
        uint8_t *ea = malloc(es), *eb = malloc(es);
        if (ea && eb && kiln_encode_image(fx->gpu, &lc[l], ep, ea, es) == KILN_OK &&
            kiln_encode_image(fx->cpu, &lc[l], ep, eb, es) == KILN_OK) {
            size_t bd = 0, bfirst = 0;
            for (size_t i = 0; i < es; i += fi->block_bytes)
                if (memcmp(ea + i, eb + i, fi->block_bytes) != 0 && bd++ == 0) bfirst = i / fi->block_bytes;
            print_message("diag %s: stage 3 GPU encoder on the CPU's level %u: %s (%zu blocks differ, first %zu)\n", what, l,
                          bd ? "DIFFERS" : "same as CPU", bd, bfirst);
        }
        free(ea);
        free(eb);
    }
    for (uint32_t l = 0; l < ng; l++) kiln_image_free(&lg[l]);
    for (uint32_t l = 0; l < nc; l++) kiln_image_free(&lc[l]);
}

/* GPU vs CPU kiln_encode_mips; returns 1 when the device-resident path encoded it (counter check). */
static int compare(fixture *fx, const kiln_image *img, kiln_format fmt, kiln_quality q, const kiln_mip_params *mp,
                   const char *what)
{
    kiln_encode_params ep;
    kiln_encode_params_init(&ep, fmt, q);
    kiln_texture a, b;
    kiln__gpu_mip_encode_stats s0 = stats(fx);
    kiln_status st = kiln_encode_mips(fx->gpu, img, &ep, mp, &a);
    if (st != KILN_OK) fail_msg("%s: GPU: %s", what, kiln_last_error(fx->gpu));
    kiln__gpu_mip_encode_stats s1 = stats(fx);
    st = kiln_encode_mips(fx->cpu, img, &ep, mp, &b);
    if (st != KILN_OK) fail_msg("%s: CPU: %s", what, kiln_last_error(fx->cpu));
    assert_int_equal(a.levels, b.levels);
    for (uint32_t l = 0; l < a.levels; l++) {
        size_t sa = 0, sb = 0;
        const uint8_t *pa = kiln_texture_image(&a, l, 0, 0, &sa), *pb = kiln_texture_image(&b, l, 0, 0, &sb);
        assert_non_null(pa);
        assert_non_null(pb);
        assert_int_equal(sa, sb);
        if (memcmp(pa, pb, sa) != 0) {
            size_t i = 0;
            while (pa[i] == pb[i]) i++;
            diagnose(fx, img, &ep, mp, &b, what);
            fail_msg("%s: level %u differs from the CPU at byte %zu (block %zu)", what, l, i,
                     i / kiln_format_get_info(fmt)->block_bytes);
        }
    }
    int resident = s1.runs == s0.runs + 1;
    if (resident) {
        if (s1.levels != s0.levels + a.levels)
            fail_msg("%s: %llu levels counted, %u made", what, (unsigned long long)(s1.levels - s0.levels), a.levels);
        g_resident++;
    } else {
        assert_int_equal(s1.levels, s0.levels);
    }
    kiln_texture_free(&a);
    kiln_texture_free(&b);
    g_cases++;
    return resident;
}

static void formats_sizes_filters(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 5);
    static const uint32_t sizes[][2] = {{37, 19}, {64, 64}, {5, 3}, {1, 33}};
    static const kiln_format fmts[] = {KILN_FORMAT_BC1_RGB_SRGB, KILN_FORMAT_BC1_RGBA_UNORM, KILN_FORMAT_BC3_SRGB,
                                       KILN_FORMAT_BC3_UNORM,    KILN_FORMAT_BC4_UNORM,      KILN_FORMAT_BC5_UNORM,
                                       KILN_FORMAT_BC5_SNORM,    KILN_FORMAT_BC1_RGB_UNORM};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        for (int alpha = 0; alpha < 2; alpha++) {
            kiln_image img;
            patchy_image(&rng, sizes[si][0], sizes[si][1], alpha, 1, &img);
            for (size_t fi = 0; fi < sizeof fmts / sizeof fmts[0]; fi++) {
                kiln_mip_params mp;
                kiln_mip_params_init(&mp);
                /* filters in turn: box (auto = single pass), kaiser, mitchell + wrap, box per-level */
                switch ((fi + si + (size_t)alpha) % 4) {
                case 1: mp.filter = KILN_MIP_FILTER_KAISER; break;
                case 2: mp.filter = KILN_MIP_FILTER_MITCHELL; mp.edge = KILN_MIP_EDGE_WRAP; break;
                case 3: mp.strategy = KILN_MIP_STRATEGY_PER_LEVEL; break;
                default: break;
                }
                kiln_quality q = (fi + si) % 2 ? KILN_QUALITY_HIGH : KILN_QUALITY_NORMAL;
                char what[160];
                snprintf(what, sizeof what, "%s %s %ux%u %s filter %d strategy %d", kiln_format_get_info(fmts[fi])->name,
                         q == KILN_QUALITY_HIGH ? "high" : "normal", sizes[si][0], sizes[si][1],
                         alpha ? "alpha" : "opaque", (int)mp.filter, (int)mp.strategy);
                if (!compare(fx, &img, fmts[fi], q, &mp, what)) fail_msg("%s: not device-resident", what);
            }
            kiln_image_free(&img);
        }
    }
}

static void qualities_and_big(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 77);
    kiln_image img;
    patchy_image(&rng, 256, 256, 1, 1, &img);
    kiln_mip_params mp;
    kiln_mip_params_init(&mp);
    kiln__gpu_mip_encode_stats s0 = stats(fx);
    assert_true(compare(fx, &img, KILN_FORMAT_BC1_RGB_SRGB, KILN_QUALITY_HIGH, &mp, "bc1-srgb high 256x256"));
    kiln__gpu_mip_encode_stats s1 = stats(fx);
    /* flat patches at high quality: blocks for the CPU encoder came back through the gather */
    assert_true(s1.fallback_blocks > s0.fallback_blocks);
    assert_true(compare(fx, &img, KILN_FORMAT_BC3_SRGB, KILN_QUALITY_FAST, &mp, "bc3-srgb fast 256x256"));
    assert_true(compare(fx, &img, KILN_FORMAT_BC4_UNORM, KILN_QUALITY_MAX, &mp, "bc4 max 256x256"));
    mp.color = KILN_MIP_COLOR_LINEAR;
    assert_true(compare(fx, &img, KILN_FORMAT_BC1_RGBA_SRGB, KILN_QUALITY_NORMAL, &mp, "bc1a-srgb linear chain"));
    kiln_image_free(&img);
    patchy_image(&rng, 40, 24, 0, 0, &img);
    kiln_mip_params_init(&mp);
    mp.filter = KILN_MIP_FILTER_LANCZOS3;
    assert_true(compare(fx, &img, KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_MAX, &mp, "bc1 max 40x24 lanczos"));
    mp.levels = 3;
    assert_true(compare(fx, &img, KILN_FORMAT_BC3_UNORM, KILN_QUALITY_MAX, &mp, "bc3 max 40x24 3 levels"));
    kiln_mip_params_init(&mp);
    mp.normal_map = 1;
    assert_true(compare(fx, &img, KILN_FORMAT_BC5_UNORM, KILN_QUALITY_HIGH, &mp, "bc5 normal map 40x24"));
    kiln_image_free(&img);
}

/* BC6H from a float chain: the device-resident bytes equal the host path's on the same GPU context
 * (GPU-native high and the fast path are not the CPU's by design), and the CPU's where the GPU encoder
 * is an exact port (normal). */
static void bc6h_float_chain(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 61);
    kiln_image img;
    assert_int_equal(kiln_image_alloc(NULL, &img, 37, 19, KILN_PIXEL_F32), KILN_OK);
    img.channels = 4;
    img.hdr = 1;
    float *p = img.pixels;
    for (size_t i = 0; i < (size_t)37 * 19; i++) {
        float scale = (i / 37) % 5 == 0 ? 0.0f : 8.0f * (float)(kt_rng_u32(&rng) % 1000) / 1000.0f;
        for (int c = 0; c < 3; c++) p[i * 4 + c] = scale * (float)(kt_rng_u32(&rng) % 4096) / 4096.0f - (c == 2 ? 0.5f : 0.0f);
        p[i * 4 + 3] = 1.0f;
    }
    static const struct { kiln_format f; kiln_quality q; int exact; int filter; } cases[] = {
        {KILN_FORMAT_BC6H_UFLOAT, KILN_QUALITY_FAST, 0, KILN_MIP_FILTER_BOX},
        {KILN_FORMAT_BC6H_UFLOAT, KILN_QUALITY_HIGH, 0, KILN_MIP_FILTER_KAISER},
        {KILN_FORMAT_BC6H_SFLOAT, KILN_QUALITY_HIGH, 0, KILN_MIP_FILTER_BOX},
        {KILN_FORMAT_BC6H_UFLOAT, KILN_QUALITY_NORMAL, 1, KILN_MIP_FILTER_BOX},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        kiln_mip_params mp;
        kiln_mip_params_init(&mp);
        mp.filter = (kiln_mip_filter)cases[k].filter;
        char what[96];
        snprintf(what, sizeof what, "%s quality %d filter %d", kiln_format_get_info(cases[k].f)->name, (int)cases[k].q,
                 cases[k].filter);
        if (cases[k].exact) {
            assert_true(compare(fx, &img, cases[k].f, cases[k].q, &mp, what));
            continue;
        }
        kiln_encode_params ep;
        kiln_encode_params_init(&ep, cases[k].f, cases[k].q);
        kiln_texture a, b;
        kiln__gpu_mip_encode_stats s0 = stats(fx);
        assert_int_equal(kiln_encode_mips(fx->gpu, &img, &ep, &mp, &a), KILN_OK);
        kiln__gpu_mip_encode_stats s1 = stats(fx);
        if (s1.runs != s0.runs + 1) fail_msg("%s: not device-resident", what);
        setenv("KILN_GPU_MIP_RESIDENT", "0", 1);
        assert_int_equal(kiln_encode_mips(fx->gpu, &img, &ep, &mp, &b), KILN_OK);
        unsetenv("KILN_GPU_MIP_RESIDENT");
        assert_int_equal(stats(fx).runs, s1.runs);
        assert_int_equal(a.levels, b.levels);
        for (uint32_t l = 0; l < a.levels; l++) {
            size_t sa = 0, sb = 0;
            const uint8_t *pa = kiln_texture_image(&a, l, 0, 0, &sa), *pb = kiln_texture_image(&b, l, 0, 0, &sb);
            assert_int_equal(sa, sb);
            if (memcmp(pa, pb, sa) != 0) fail_msg("%s: level %u differs from the host path", what, l);
        }
        kiln_texture_free(&a);
        kiln_texture_free(&b);
        g_hostref++;
        g_resident++;
    }
    kiln_image_free(&img);
}

/* Lavapipe's memory is host-visible, so every buffer is mapped directly; a discrete GPU (the H100)
 * stages uploads and downloads through copies. Pretending the device is discrete takes those paths
 * (staged blocks, the record counter and records copied back) on lavapipe too. */
static void staging_buffers(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    assert_non_null(fx->gpu->gpu); /* created by the earlier tests */
    const int was = fx->gpu->gpu->discrete;
    fx->gpu->gpu->discrete = 1;
    kt_rng rng;
    kt_rng_seed(&rng, 404);
    kiln_image img;
    patchy_image(&rng, 70, 45, 1, 1, &img);
    kiln_mip_params mp;
    kiln_mip_params_init(&mp);
    kiln__gpu_mip_encode_stats s0 = stats(fx);
    assert_true(compare(fx, &img, KILN_FORMAT_BC1_RGB_SRGB, KILN_QUALITY_HIGH, &mp, "staged bc1-srgb high"));
    assert_true(stats(fx).fallback_blocks > s0.fallback_blocks);
    mp.filter = KILN_MIP_FILTER_KAISER;
    assert_true(compare(fx, &img, KILN_FORMAT_BC3_UNORM, KILN_QUALITY_NORMAL, &mp, "staged bc3 kaiser"));
    kiln_image_free(&img);
    fx->gpu->gpu->discrete = was;
}

static void routing(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 9);
    kiln_image img;
    patchy_image(&rng, 48, 40, 1, 1, &img);
    kiln_mip_params mp;
    kiln_mip_params_init(&mp);
    /* the host path on request: same bytes, counters unchanged */
    setenv("KILN_GPU_MIP_RESIDENT", "0", 1);
    assert_false(compare(fx, &img, KILN_FORMAT_BC1_RGB_SRGB, KILN_QUALITY_HIGH, &mp, "bc1 host path"));
    unsetenv("KILN_GPU_MIP_RESIDENT");
    /* a single level (1x1): nothing to keep on the device */
    kiln_image one;
    patchy_image(&rng, 1, 1, 1, 1, &one);
    assert_false(compare(fx, &one, KILN_FORMAT_BC3_SRGB, KILN_QUALITY_HIGH, &mp, "bc3 1x1"));
    kiln_image_free(&one);
    /* alpha coverage: device-resident since alphacov (gpu_mip_alpha.c; tests/unit/test_gpu_mip_alpha.c), the
     * CPU's bytes; a float image into BC1: device-resident since mipres2 (mip_enc_convert.comp), the CPU's bytes */
    mp.alpha_coverage_ref = 0.5f;
    assert_true(compare(fx, &img, KILN_FORMAT_BC3_SRGB, KILN_QUALITY_NORMAL, &mp, "bc3 alpha coverage"));
    kiln_mip_params_init(&mp);
    kiln_image f;
    assert_int_equal(kiln_image_alloc(NULL, &f, img.width, img.height, KILN_PIXEL_F32), KILN_OK);
    f.channels = 4;
    for (size_t i = 0; i < (size_t)img.width * img.height * 4; i++)
        ((float *)f.pixels)[i] = ((const uint8_t *)img.pixels)[i] / 255.0f;
    assert_true(compare(fx, &f, KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_NORMAL, &mp, "bc1 from a float image"));
    kiln_image_free(&f);
    /* the gather matters: without the CPU encoder's blocks the output differs from the CPU's */
    kiln_encode_params ep;
    kiln_encode_params_init(&ep, KILN_FORMAT_BC1_RGB_SRGB, KILN_QUALITY_HIGH);
    kiln_texture a, b;
    setenv("KILN_GPU_SKIP_FALLBACK", "1", 1);
    assert_int_equal(kiln_encode_mips(fx->gpu, &img, &ep, &mp, &a), KILN_OK);
    unsetenv("KILN_GPU_SKIP_FALLBACK");
    assert_int_equal(kiln_encode_mips(fx->cpu, &img, &ep, &mp, &b), KILN_OK);
    int differs = 0;
    for (uint32_t l = 0; l < a.levels; l++) {
        size_t sa = 0, sb = 0;
        const uint8_t *pa = kiln_texture_image(&a, l, 0, 0, &sa), *pb = kiln_texture_image(&b, l, 0, 0, &sb);
        differs |= memcmp(pa, pb, sa) != 0;
    }
    assert_true(differs);
    kiln_texture_free(&a);
    kiln_texture_free(&b);
    kiln_image_free(&img);
}

/* KILN_GPU_SKIP_FALLBACK=1: the device-resident path (it must run) keeps the GPU's bytes for the blocks
 * the gather would send to the CPU encoder; 1 when the output then differs from the CPU's. */
static int differs_without_gather(fixture *fx, const kiln_image *img, kiln_format fmt, kiln_quality q,
                                  const kiln_mip_params *mp)
{
    kiln_encode_params ep;
    kiln_encode_params_init(&ep, fmt, q);
    kiln_texture a, b;
    kiln__gpu_mip_encode_stats s0 = stats(fx);
    setenv("KILN_GPU_SKIP_FALLBACK", "1", 1);
    assert_int_equal(kiln_encode_mips(fx->gpu, img, &ep, mp, &a), KILN_OK);
    unsetenv("KILN_GPU_SKIP_FALLBACK");
    assert_int_equal(stats(fx).runs, s0.runs + 1);
    assert_int_equal(kiln_encode_mips(fx->cpu, img, &ep, mp, &b), KILN_OK);
    int differs = 0;
    for (uint32_t l = 0; l < a.levels; l++) {
        size_t sa = 0, sb = 0;
        const uint8_t *pa = kiln_texture_image(&a, l, 0, 0, &sa), *pb = kiln_texture_image(&b, l, 0, 0, &sb);
        differs |= memcmp(pa, pb, sa) != 0;
    }
    kiln_texture_free(&a);
    kiln_texture_free(&b);
    return differs;
}

/* The ETC family (issue #5, owner mipetc; gpu_mip_encode_etc.inc): EAC R11 / RG11 unsigned and signed
 * (targets looked up on the device) at every quality (its CPU-flagged jobs through the gather), ETC1 at every quality (enc_etc1.comp FAST,
 * enc_etc1_q.comp above), ETC2 RGB FAST (its T / H blocks through the gather and the CPU's fast path), ETC2 RGBA FAST (that colour
 * plus the EAC alpha pass, stitched on the device):
 * every level byte-identical to the CPU, the device-resident path taken. */
static void etc_family(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 55);
    static const uint32_t sizes[][2] = {{37, 19}, {64, 64}, {1, 1}, {2, 9}};
    static const struct { kiln_format f; kiln_quality q; } cases[] = {
        {KILN_FORMAT_EAC_R11_UNORM, KILN_QUALITY_FAST},   {KILN_FORMAT_EAC_R11_UNORM, KILN_QUALITY_HIGH},
        {KILN_FORMAT_EAC_RG11_UNORM, KILN_QUALITY_NORMAL}, {KILN_FORMAT_EAC_RG11_UNORM, KILN_QUALITY_MAX},
        {KILN_FORMAT_ETC1_UNORM, KILN_QUALITY_FAST},      {KILN_FORMAT_ETC1_SRGB, KILN_QUALITY_NORMAL},
        {KILN_FORMAT_ETC1_UNORM, KILN_QUALITY_HIGH},      {KILN_FORMAT_ETC1_SRGB, KILN_QUALITY_MAX},
        {KILN_FORMAT_ETC2_RGB8_UNORM, KILN_QUALITY_FAST}, {KILN_FORMAT_ETC2_RGB8_SRGB, KILN_QUALITY_FAST},
        {KILN_FORMAT_ETC2_RGBA8_UNORM, KILN_QUALITY_FAST}, {KILN_FORMAT_ETC2_RGBA8_SRGB, KILN_QUALITY_FAST},
        {KILN_FORMAT_EAC_R11_SNORM, KILN_QUALITY_NORMAL},  {KILN_FORMAT_EAC_RG11_SNORM, KILN_QUALITY_FAST},
    };
    kiln__gpu_mip_encode_stats s0 = stats(fx);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        kiln_image img;
        patchy_image(&rng, sizes[si][0], sizes[si][1], 1, 1, &img);
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            kiln_mip_params mp;
            kiln_mip_params_init(&mp);
            /* box (single pass) and Kaiser in turn; every third case a linear chain for the sRGB formats */
            if ((k + si) % 2) mp.filter = KILN_MIP_FILTER_KAISER;
            if ((k + si) % 3 == 0) mp.color = KILN_MIP_COLOR_LINEAR;
            if (sizes[si][0] == 1 && sizes[si][1] == 1) mp.levels = 0;
            char what[160];
            snprintf(what, sizeof what, "%s quality %d %ux%u filter %d color %d", kiln_format_get_info(cases[k].f)->name,
                     (int)cases[k].q, sizes[si][0], sizes[si][1], (int)mp.filter, (int)mp.color);
            int res = compare(fx, &img, cases[k].f, cases[k].q, &mp, what);
            /* a 1x1 image has one level: nothing to keep on the device (host path, same bytes) */
            if (res != (sizes[si][0] * sizes[si][1] > 1)) fail_msg("%s: device-resident %d", what, res);
        }
        kiln_image_free(&img);
    }
    /* random blocks at ETC2 FAST need T / H: those came back through the gather */
    assert_true(stats(fx).fallback_blocks > s0.fallback_blocks);

    /* 256x256, sRGB and linear chains */
    kiln_image img;
    patchy_image(&rng, 256, 256, 1, 1, &img);
    kiln_mip_params mp;
    kiln_mip_params_init(&mp);
    assert_true(compare(fx, &img, KILN_FORMAT_ETC2_RGB8_SRGB, KILN_QUALITY_FAST, &mp, "etc2-srgb fast 256x256"));
    assert_true(compare(fx, &img, KILN_FORMAT_ETC1_SRGB, KILN_QUALITY_NORMAL, &mp, "etc1-srgb normal 256x256"));
    assert_true(compare(fx, &img, KILN_FORMAT_ETC2_RGBA8_SRGB, KILN_QUALITY_FAST, &mp, "etc2-rgba-srgb fast 256x256"));
    assert_true(compare(fx, &img, KILN_FORMAT_EAC_RG11_SNORM, KILN_QUALITY_FAST, &mp, "eac-rg11-snorm fast 256x256"));
    mp.filter = KILN_MIP_FILTER_MITCHELL;
    assert_true(compare(fx, &img, KILN_FORMAT_EAC_RG11_UNORM, KILN_QUALITY_NORMAL, &mp, "eac-rg11 normal 256x256 mitchell"));
    mp.color = KILN_MIP_COLOR_LINEAR;
    mp.strategy = KILN_MIP_STRATEGY_PER_LEVEL;
    assert_true(compare(fx, &img, KILN_FORMAT_ETC1_UNORM, KILN_QUALITY_FAST, &mp, "etc1 fast 256x256 per-level"));
    kiln_image_free(&img);

    /* EAC jobs on the CPU estimate's double rounding boundary (blocks of two values with min + max = 255
     * and a small range, as tests/unit/test_gpu_encode_etc.c crafts them): the shader flags them, the
     * gather brings their texels back, the CPU encoder redoes them */
    assert_int_equal(kiln_image_alloc(NULL, &img, 64, 36, KILN_PIXEL_U8), KILN_OK);
    img.channels = 4;
    uint8_t *px = img.pixels;
    for (uint32_t by = 0; by < 9; by++)
        for (uint32_t bx = 0; bx < 16; bx++) {
            uint8_t a[4];
            for (int c = 0; c < 4; c++) a[c] = (uint8_t)(127u - (kt_rng_u32(&rng) % 40u) / 2u - kt_rng_u32(&rng) % 3u);
            for (uint32_t y = by * 4; y < by * 4 + 4; y++)
                for (uint32_t x = bx * 4; x < bx * 4 + 4; x++)
                    for (int c = 0; c < 4; c++)
                        px[((size_t)y * 64 + x) * 4 + (size_t)c] = (kt_rng_u32(&rng) & 1) ? a[c] : (uint8_t)(255u - a[c]);
        }
    kiln_mip_params_init(&mp);
    s0 = stats(fx);
    assert_true(compare(fx, &img, KILN_FORMAT_EAC_RG11_UNORM, KILN_QUALITY_NORMAL, &mp, "eac-rg11 boundary blocks"));
    assert_true(compare(fx, &img, KILN_FORMAT_EAC_R11_UNORM, KILN_QUALITY_FAST, &mp, "eac-r11 fast boundary blocks"));
    assert_true(compare(fx, &img, KILN_FORMAT_EAC_RG11_SNORM, KILN_QUALITY_HIGH, &mp, "eac-rg11-snorm boundary blocks"));
    assert_true(stats(fx).fallback_blocks > s0.fallback_blocks);
    /* (the GPU's own bytes for those jobs happen to be right here: a flag says "may differ", so only the
     * counter, not KILN_GPU_SKIP_FALLBACK, shows the EAC gather ran) */
    kiln_image_free(&img);
}

/* What of the ETC family the device-resident path leaves to the host path (same bytes, counters unchanged: ETC2
 * above FAST and RGB A1 with KILN_GPU_ETC2_TH=host), and the
 * gather matters for ETC2 RGB FAST (KILN_GPU_SKIP_FALLBACK=1: the T / H blocks keep the GPU's ETC1 /
 * planar bytes, so the output differs from the CPU's). */
static void etc_routing(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 56);
    kiln_image img;
    patchy_image(&rng, 24, 20, 1, 1, &img);
    kiln_mip_params mp;
    kiln_mip_params_init(&mp);
    /* KILN_GPU_ETC2_TH=host (the host T / H step) keeps ETC2 above FAST and RGB A1 on the host path */
    setenv("KILN_GPU_ETC2_TH", "host", 1);
    assert_false(compare(fx, &img, KILN_FORMAT_ETC2_RGBA8_SRGB, KILN_QUALITY_NORMAL, &mp, "etc2-rgba normal (host path)"));
    assert_false(compare(fx, &img, KILN_FORMAT_ETC2_RGB8_UNORM, KILN_QUALITY_NORMAL, &mp, "etc2 normal (host path)"));
    assert_false(compare(fx, &img, KILN_FORMAT_ETC2_RGB8A1_UNORM, KILN_QUALITY_FAST, &mp, "etc2-a1 (host path)"));
    unsetenv("KILN_GPU_ETC2_TH");
    assert_true(differs_without_gather(fx, &img, KILN_FORMAT_ETC2_RGB8_UNORM, KILN_QUALITY_FAST, &mp));
    assert_true(differs_without_gather(fx, &img, KILN_FORMAT_ETC2_RGBA8_UNORM, KILN_QUALITY_FAST, &mp));
    kiln_image_free(&img);
}

/* Blocks of an ETC2 colour level (8 bytes each, every stride bytes from off) in T or H mode. */
static size_t th_blocks(const uint8_t *p, size_t size, size_t stride, size_t off, int a1)
{
    size_t n = 0;
    for (size_t i = off; i + 8 <= size; i += stride) {
        const uint8_t *b = p + i;
        if (!a1 && !(b[3] & 2)) continue; /* individual mode (RGB / RGBA only) */
        int r = (b[0] >> 3) + ((int)((b[0] & 7) ^ 4) - 4), g = (b[1] >> 3) + ((int)((b[1] & 7) ^ 4) - 4);
        if (r < 0 || r > 31 || g < 0 || g > 31) n++;
    }
    return n;
}

/* ETC2 RGB above FAST, RGBA above FAST and RGB A1 at every quality on the device (helper etc2res: the ETC1
 * modes, planar, the T / H pass of gpu_etc2_th.c on the device, gpu_mip_encode_etc.inc kinds 6 / 7): every level
 * byte-identical to the CPU and to the host path (KILN_GPU_MIP_RESIDENT=0), the device-resident path taken, odd
 * sizes, alpha. The T / H pass matters: level 0 has T / H blocks. Also the rolled T / H shader
 * (KILN_GPU_ETC2_TH_UNROLL=0) and staged buffers (a discrete device). */
static void etc2_search_resident(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 2511);
    static const struct { uint32_t w, h; kiln_format f; kiln_quality q; int filter; } cases[] = {
        {37, 23, KILN_FORMAT_ETC2_RGB8_UNORM, KILN_QUALITY_HIGH, KILN_MIP_FILTER_BOX},
        {64, 64, KILN_FORMAT_ETC2_RGB8_SRGB, KILN_QUALITY_MAX, KILN_MIP_FILTER_KAISER},
        {37, 23, KILN_FORMAT_ETC2_RGBA8_SRGB, KILN_QUALITY_NORMAL, KILN_MIP_FILTER_KAISER},
        {64, 64, KILN_FORMAT_ETC2_RGBA8_UNORM, KILN_QUALITY_HIGH, KILN_MIP_FILTER_BOX},
        {37, 23, KILN_FORMAT_ETC2_RGB8A1_UNORM, KILN_QUALITY_FAST, KILN_MIP_FILTER_BOX},
        {64, 64, KILN_FORMAT_ETC2_RGB8A1_SRGB, KILN_QUALITY_MAX, KILN_MIP_FILTER_MITCHELL},
        {64, 64, KILN_FORMAT_ETC2_RGB8A1_UNORM, KILN_QUALITY_NORMAL, KILN_MIP_FILTER_BOX},
    };
    kiln_image img37, img64;
    patchy_image(&rng, 37, 23, 1, 1, &img37);
    patchy_image(&rng, 64, 64, 1, 1, &img64);
    size_t th_total = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const kiln_image *img = cases[k].w == 37 ? &img37 : &img64;
        const kiln_format_info *fi = kiln_format_get_info(cases[k].f);
        kiln_mip_params mp;
        kiln_mip_params_init(&mp);
        mp.filter = (kiln_mip_filter)cases[k].filter;
        if (k == 2) mp.color = KILN_MIP_COLOR_LINEAR;
        char what[160];
        snprintf(what, sizeof what, "%s quality %d %ux%u filter %d", fi->name, (int)cases[k].q, cases[k].w, cases[k].h,
                 cases[k].filter);
        if (!compare(fx, img, cases[k].f, cases[k].q, &mp, what)) fail_msg("%s: not device-resident", what);
        /* the host path on the GPU gives the same bytes as the device-resident one */
        kiln_encode_params ep;
        kiln_encode_params_init(&ep, cases[k].f, cases[k].q);
        kiln_texture a, b;
        assert_int_equal(kiln_encode_mips(fx->gpu, img, &ep, &mp, &a), KILN_OK);
        kiln__gpu_mip_encode_stats s0 = stats(fx);
        setenv("KILN_GPU_MIP_RESIDENT", "0", 1);
        assert_int_equal(kiln_encode_mips(fx->gpu, img, &ep, &mp, &b), KILN_OK);
        unsetenv("KILN_GPU_MIP_RESIDENT");
        assert_int_equal(stats(fx).runs, s0.runs);
        for (uint32_t l = 0; l < a.levels; l++) {
            size_t sa = 0, sb = 0;
            const uint8_t *pa = kiln_texture_image(&a, l, 0, 0, &sa), *pb = kiln_texture_image(&b, l, 0, 0, &sb);
            assert_int_equal(sa, sb);
            if (memcmp(pa, pb, sa) != 0) fail_msg("%s: level %u differs from the host path", what, l);
            if (l == 0) {
                const int rgba = fi->block_bytes == 16;
                th_total += th_blocks(pa, sa, rgba ? 16 : 8, rgba ? 8 : 0, fi->format == KILN_FORMAT_ETC2_RGB8A1_UNORM ||
                                                                               fi->format == KILN_FORMAT_ETC2_RGB8A1_SRGB);
            }
        }
        kiln_texture_free(&a);
        kiln_texture_free(&b);
        g_hostref++;
    }
    assert_true(th_total > 0);
    /* the rolled T / H shader, and staged uploads and downloads (a discrete device) */
    setenv("KILN_GPU_ETC2_TH_UNROLL", "0", 1);
    kiln_mip_params mp;
    kiln_mip_params_init(&mp);
    assert_true(compare(fx, &img37, KILN_FORMAT_ETC2_RGBA8_UNORM, KILN_QUALITY_HIGH, &mp, "etc2-rgba high rolled T/H"));
    unsetenv("KILN_GPU_ETC2_TH_UNROLL");
    const int was = fx->gpu->gpu->discrete;
    fx->gpu->gpu->discrete = 1;
    assert_true(compare(fx, &img37, KILN_FORMAT_ETC2_RGB8A1_SRGB, KILN_QUALITY_HIGH, &mp, "staged etc2-a1 high"));
    fx->gpu->gpu->discrete = was;
    kiln_image_free(&img37);
    kiln_image_free(&img64);
}

/* ---- float chains into the 8-bit encoders and the blit strategy (issue 5, helper mipres2) ----
 * The device-resident bytes against the host path on the same GPU context (KILN_GPU_MIP_RESIDENT=0: the
 * chain downloaded, each level prepared on the host and uploaded again); returns 1 when the
 * device-resident path ran (a run and every level counted), 0 when it took the host path. */
static int compare_host(fixture *fx, const kiln_image *img, kiln_format fmt, kiln_quality q, const kiln_mip_params *mp,
                        const char *what)
{
    kiln_encode_params ep;
    kiln_encode_params_init(&ep, fmt, q);
    kiln_texture a, b;
    kiln__gpu_mip_encode_stats s0 = stats(fx);
    if (kiln_encode_mips(fx->gpu, img, &ep, mp, &a) != KILN_OK) fail_msg("%s: GPU: %s", what, kiln_last_error(fx->gpu));
    kiln__gpu_mip_encode_stats s1 = stats(fx);
    setenv("KILN_GPU_MIP_RESIDENT", "0", 1);
    kiln_status st = kiln_encode_mips(fx->gpu, img, &ep, mp, &b);
    unsetenv("KILN_GPU_MIP_RESIDENT");
    if (st != KILN_OK) fail_msg("%s: host path: %s", what, kiln_last_error(fx->gpu));
    assert_int_equal(stats(fx).runs, s1.runs); /* the host path is not counted */
    assert_int_equal(a.levels, b.levels);
    for (uint32_t l = 0; l < a.levels; l++) {
        size_t sa = 0, sb = 0;
        const uint8_t *pa = kiln_texture_image(&a, l, 0, 0, &sa), *pb = kiln_texture_image(&b, l, 0, 0, &sb);
        assert_non_null(pa);
        assert_non_null(pb);
        assert_int_equal(sa, sb);
        if (memcmp(pa, pb, sa) != 0) {
            size_t i = 0;
            while (pa[i] == pb[i]) i++;
            fail_msg("%s: level %u differs from the host path at byte %zu (block %zu)", what, l, i,
                     i / kiln_format_get_info(fmt)->block_bytes);
        }
    }
    int resident = s1.runs == s0.runs + 1;
    if (resident && s1.levels != s0.levels + a.levels)
        fail_msg("%s: %llu levels counted, %u made", what, (unsigned long long)(s1.levels - s0.levels), a.levels);
    if (!resident) assert_int_equal(s1.levels, s0.levels);
    g_hostref++;
    g_resident += (size_t)resident;
    kiln_texture_free(&a);
    kiln_texture_free(&b);
    return resident;
}

/* A float image: flat 8x8 patches (the CPU encoder's single-colour blocks at high quality), random
 * values in [-0.25, 1.5) (both clamps of the 8-bit conversion), transparent and partial alpha, and a NaN
 * every 97 texels (the conversion's NaN -> 0). */
static void float_image(kt_rng *rng, uint32_t w, uint32_t h, int hdr, kiln_image *img)
{
    assert_int_equal(kiln_image_alloc(NULL, img, w, h, KILN_PIXEL_F32), KILN_OK);
    img->channels = 4;
    img->hdr = hdr;
    float *p = img->pixels;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            float *t = p + ((size_t)y * w + x) * 4;
            if (((x / 8) + (y / 8)) % 3 == 0) {
                uint32_t c = ((x / 8) * 2654435761u) ^ ((y / 8) * 40503u);
                for (int k = 0; k < 3; k++) t[k] = (float)((c >> (8 * k)) & 255u) / 255.0f;
                t[3] = 1.0f;
            } else {
                for (int k = 0; k < 4; k++) t[k] = (float)(kt_rng_u32(rng) % 7000u) / 4000.0f - 0.25f;
                if (t[3] < 0.2f) t[3] = 0.0f;
            }
            if (((size_t)y * w + x) % 97 == 41) t[kt_rng_u32(rng) % 4] = NAN;
        }
}

/* BC1 / BC1a / BC3 / BC4 / BC5 (UNORM, sRGB, SNORM), ETC1, ETC2 (FAST; above FAST and RGB A1 on a small
 * image) and EAC R11 / RG11 (unsigned, signed) from float chains: mip_enc_convert.comp makes on the device what the host path prepares from each downloaded
 * level; odd sizes, box / Kaiser / per-level, sRGB (non-HDR float into an sRGB format) and linear chains,
 * fast to max. The CPU encoder's blocks come back through mip_enc_gather_f32.comp (counter), and
 * without them (KILN_GPU_SKIP_FALLBACK=1) BC1 high differs from the host path. */
static void float_chain_8bit_formats(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 2511);
    static const uint32_t sizes[][2] = {{37, 23}, {64, 64}, {5, 3}};
    static const struct { kiln_format f; kiln_quality q; } cases[] = {
        {KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_HIGH},  {KILN_FORMAT_BC1_RGB_SRGB, KILN_QUALITY_NORMAL},
        {KILN_FORMAT_BC1_RGBA_UNORM, KILN_QUALITY_FAST}, {KILN_FORMAT_BC3_SRGB, KILN_QUALITY_HIGH},
        {KILN_FORMAT_BC4_UNORM, KILN_QUALITY_NORMAL},    {KILN_FORMAT_BC4_SNORM, KILN_QUALITY_MAX},
        {KILN_FORMAT_BC5_UNORM, KILN_QUALITY_FAST},      {KILN_FORMAT_BC5_SNORM, KILN_QUALITY_NORMAL},
        {KILN_FORMAT_ETC1_UNORM, KILN_QUALITY_FAST},     {KILN_FORMAT_ETC1_SRGB, KILN_QUALITY_NORMAL},
        {KILN_FORMAT_EAC_R11_UNORM, KILN_QUALITY_FAST},  {KILN_FORMAT_EAC_RG11_UNORM, KILN_QUALITY_NORMAL},
        {KILN_FORMAT_EAC_R11_SNORM, KILN_QUALITY_HIGH},  {KILN_FORMAT_EAC_RG11_SNORM, KILN_QUALITY_FAST},
        {KILN_FORMAT_ETC2_RGB8_SRGB, KILN_QUALITY_FAST}, {KILN_FORMAT_ETC2_RGBA8_UNORM, KILN_QUALITY_FAST},
    };
    kiln__gpu_mip_encode_stats s0 = stats(fx);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        for (int hdr = 0; hdr < 2; hdr++) {
            kiln_image img;
            float_image(&rng, sizes[si][0], sizes[si][1], hdr, &img);
            for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
                kiln_mip_params mp;
                kiln_mip_params_init(&mp);
                switch ((k + si + (size_t)hdr) % 3) {
                case 1: mp.filter = KILN_MIP_FILTER_KAISER; break;
                case 2: mp.strategy = KILN_MIP_STRATEGY_PER_LEVEL; break;
                default: break;
                }
                char what[160];
                snprintf(what, sizeof what, "float %s %s quality %d %ux%u filter %d strategy %d",
                         hdr ? "hdr" : "ldr", kiln_format_get_info(cases[k].f)->name, (int)cases[k].q, sizes[si][0],
                         sizes[si][1], (int)mp.filter, (int)mp.strategy);
                if (!compare_host(fx, &img, cases[k].f, cases[k].q, &mp, what)) fail_msg("%s: not device-resident", what);
            }
            kiln_image_free(&img);
        }
    }
    assert_true(stats(fx).fallback_blocks > s0.fallback_blocks); /* BC1 / BC3 high: flat blocks */

    /* the gathered float texels matter: without the CPU encoder's blocks BC1 high differs */
    kiln_image img;
    float_image(&rng, 64, 40, 0, &img);
    kiln_mip_params mp;
    kiln_mip_params_init(&mp);
    kiln_encode_params ep;
    kiln_encode_params_init(&ep, KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_HIGH);
    kiln_texture a, b;
    s0 = stats(fx);
    setenv("KILN_GPU_SKIP_FALLBACK", "1", 1);
    assert_int_equal(kiln_encode_mips(fx->gpu, &img, &ep, &mp, &a), KILN_OK);
    unsetenv("KILN_GPU_SKIP_FALLBACK");
    assert_int_equal(stats(fx).runs, s0.runs + 1);
    setenv("KILN_GPU_MIP_RESIDENT", "0", 1);
    assert_int_equal(kiln_encode_mips(fx->gpu, &img, &ep, &mp, &b), KILN_OK);
    unsetenv("KILN_GPU_MIP_RESIDENT");
    int differs = 0;
    for (uint32_t l = 0; l < a.levels; l++) {
        size_t sa = 0, sb = 0;
        const uint8_t *pa = kiln_texture_image(&a, l, 0, 0, &sa), *pb = kiln_texture_image(&b, l, 0, 0, &sb);
        differs |= memcmp(pa, pb, sa) != 0;
    }
    assert_true(differs);
    kiln_texture_free(&a);
    kiln_texture_free(&b);
    /* staged buffers (a discrete GPU's copies) with 66-word records */
    const int was = fx->gpu->gpu->discrete;
    fx->gpu->gpu->discrete = 1;
    s0 = stats(fx);
    assert_true(compare_host(fx, &img, KILN_FORMAT_BC3_UNORM, KILN_QUALITY_HIGH, &mp, "staged float bc3 high"));
    assert_true(stats(fx).fallback_blocks > s0.fallback_blocks);
    fx->gpu->gpu->discrete = was;
    /* ETC2 above FAST and RGB A1 from a float chain (the device's planar and T / H passes on the RGBA8 view) */
    kiln_image small;
    float_image(&rng, 24, 20, 0, &small);
    assert_true(compare_host(fx, &small, KILN_FORMAT_ETC2_RGB8_UNORM, KILN_QUALITY_NORMAL, &mp, "float etc2 normal"));
    assert_true(compare_host(fx, &small, KILN_FORMAT_ETC2_RGBA8_SRGB, KILN_QUALITY_HIGH, &mp, "float etc2-rgba-srgb high"));
    assert_true(compare_host(fx, &small, KILN_FORMAT_ETC2_RGB8A1_UNORM, KILN_QUALITY_FAST, &mp, "float etc2-a1 fast"));
    kiln_image_free(&small);
    /* EAC jobs on the CPU estimate's double rounding boundary from a float image (etc_family's blocks of two
     * values with min + max = 255, as v / 255: the same 16-bit targets): flagged, gathered as float texels,
     * redone by the CPU encoder */
    kiln_image eb;
    assert_int_equal(kiln_image_alloc(NULL, &eb, 64, 36, KILN_PIXEL_F32), KILN_OK);
    eb.channels = 4;
    eb.hdr = 1;
    for (uint32_t by = 0; by < 9; by++)
        for (uint32_t bx = 0; bx < 16; bx++) {
            uint8_t av[4];
            for (int c = 0; c < 4; c++) av[c] = (uint8_t)(127u - (kt_rng_u32(&rng) % 40u) / 2u - kt_rng_u32(&rng) % 3u);
            for (uint32_t y = by * 4; y < by * 4 + 4; y++)
                for (uint32_t x = bx * 4; x < bx * 4 + 4; x++)
                    for (int c = 0; c < 4; c++)
                        ((float *)eb.pixels)[((size_t)y * 64 + x) * 4 + (size_t)c] =
                            (float)((kt_rng_u32(&rng) & 1) ? av[c] : 255u - av[c]) / 255.0f;
        }
    s0 = stats(fx);
    assert_true(compare_host(fx, &eb, KILN_FORMAT_EAC_RG11_UNORM, KILN_QUALITY_NORMAL, &mp, "float eac-rg11 boundary blocks"));
    assert_true(compare_host(fx, &eb, KILN_FORMAT_EAC_R11_UNORM, KILN_QUALITY_FAST, &mp, "float eac-r11 fast boundary"));
    assert_true(stats(fx).fallback_blocks > s0.fallback_blocks);
    kiln_image_free(&eb);
    /* 16-bit images (helper mip16: the decoded base's float chain, quantised on the device) are resident too */
    kiln_image u16;
    assert_int_equal(kiln_image_alloc(NULL, &u16, img.width, img.height, KILN_PIXEL_U16), KILN_OK);
    u16.channels = 4;
    for (size_t i = 0; i < (size_t)img.width * img.height * 4; i++)
        ((uint16_t *)u16.pixels)[i] = (uint16_t)(kt_rng_u32(&rng) & 0xffffu);
    assert_true(compare_host(fx, &u16, KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_NORMAL, &mp, "16-bit bc1"));
    kiln_image_free(&u16);
    kiln_image_free(&img);
}

/* The blit strategy (vkCmdBlitImage into a VkImage, gpu_mip_blit.c): its levels copied image -> buffer on
 * the device into the encoders' layout. 8-bit sRGB and linear chains and a float chain (linear; also into
 * BC6H and, converted, BC1 / EAC), odd sizes, byte-identical to the host path's blit chain downloaded
 * and encoded per level. A non-box filter with the blit strategy is not a blit: the host path's answer. */
static void blit_strategy_chains(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 2512);
    static const uint32_t sizes[][2] = {{37, 23}, {64, 64}, {1, 9}};
    static const struct { kiln_format f; kiln_quality q; } u8cases[] = {
        {KILN_FORMAT_BC1_RGB_SRGB, KILN_QUALITY_HIGH}, {KILN_FORMAT_BC3_UNORM, KILN_QUALITY_NORMAL},
        {KILN_FORMAT_BC4_UNORM, KILN_QUALITY_FAST},    {KILN_FORMAT_BC5_SNORM, KILN_QUALITY_NORMAL},
        {KILN_FORMAT_ETC1_SRGB, KILN_QUALITY_FAST},    {KILN_FORMAT_EAC_RG11_UNORM, KILN_QUALITY_FAST},
        {KILN_FORMAT_ETC2_RGBA8_UNORM, KILN_QUALITY_FAST},
    };
    static const struct { kiln_format f; kiln_quality q; } fcases[] = {
        {KILN_FORMAT_BC6H_UFLOAT, KILN_QUALITY_NORMAL}, {KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_HIGH},
        {KILN_FORMAT_EAC_R11_SNORM, KILN_QUALITY_FAST}, {KILN_FORMAT_BC4_UNORM, KILN_QUALITY_NORMAL},
    };
    kiln_mip_params mp;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        kiln_image img;
        patchy_image(&rng, sizes[si][0], sizes[si][1], 1, 1, &img);
        for (size_t k = 0; k < sizeof u8cases / sizeof u8cases[0]; k++) {
            kiln_mip_params_init(&mp);
            mp.strategy = KILN_MIP_STRATEGY_BLIT;
            if ((k + si) % 2) mp.color = KILN_MIP_COLOR_LINEAR;
            char what[160];
            snprintf(what, sizeof what, "blit %s quality %d %ux%u color %d", kiln_format_get_info(u8cases[k].f)->name,
                     (int)u8cases[k].q, sizes[si][0], sizes[si][1], (int)mp.color);
            if (!compare_host(fx, &img, u8cases[k].f, u8cases[k].q, &mp, what)) fail_msg("%s: not device-resident", what);
        }
        kiln_image_free(&img);
        float_image(&rng, sizes[si][0], sizes[si][1], 1, &img);
        for (size_t k = 0; k < sizeof fcases / sizeof fcases[0]; k++) {
            kiln_mip_params_init(&mp);
            mp.strategy = KILN_MIP_STRATEGY_BLIT;
            char what[160];
            snprintf(what, sizeof what, "blit float %s quality %d %ux%u", kiln_format_get_info(fcases[k].f)->name,
                     (int)fcases[k].q, sizes[si][0], sizes[si][1]);
            if (!compare_host(fx, &img, fcases[k].f, fcases[k].q, &mp, what)) fail_msg("%s: not device-resident", what);
        }
        kiln_image_free(&img);
    }
    /* staged (discrete-GPU) copies of the blit chain's input and blocks */
    kiln_image img;
    patchy_image(&rng, 70, 45, 1, 1, &img);
    kiln_mip_params_init(&mp);
    mp.strategy = KILN_MIP_STRATEGY_BLIT;
    const int was = fx->gpu->gpu->discrete;
    fx->gpu->gpu->discrete = 1;
    assert_true(compare_host(fx, &img, KILN_FORMAT_BC1_RGB_SRGB, KILN_QUALITY_HIGH, &mp, "staged blit bc1-srgb high"));
    fx->gpu->gpu->discrete = was;
    /* Kaiser with the blit strategy is no blit: the device-resident path declines, the host path's
     * answer (whatever it is) stands */
    mp.filter = KILN_MIP_FILTER_KAISER;
    kiln_encode_params ep;
    kiln_encode_params_init(&ep, KILN_FORMAT_BC1_RGB_SRGB, KILN_QUALITY_NORMAL);
    kiln_texture a;
    kiln__gpu_mip_encode_stats s0 = stats(fx);
    if (kiln_encode_mips(fx->gpu, &img, &ep, &mp, &a) == KILN_OK) kiln_texture_free(&a);
    assert_int_equal(stats(fx).runs, s0.runs);
    kiln_image_free(&img);
}

static void summary_and_validation(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kiln__gpu_mip_encode_stats s = stats(fx);
    print_message("note: %zu cases byte-identical to the CPU, %zu to the host path on the GPU (BC6H fast/high, float "
                  "chains, blit), %zu "
                  "device-resident (%llu levels, %llu blocks to the CPU encoder)\n",
                  g_cases, g_hostref, g_resident, (unsigned long long)s.levels, (unsigned long long)s.fallback_blocks);
    assert_true(g_resident > 0);
    assert_int_equal(kt_gpu_validation_messages(fx->gpu), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(formats_sizes_filters),
        cmocka_unit_test(qualities_and_big),
        cmocka_unit_test(bc6h_float_chain),
        cmocka_unit_test(staging_buffers),
        cmocka_unit_test(routing),
        cmocka_unit_test(etc_family),
        cmocka_unit_test(etc_routing),
        cmocka_unit_test(etc2_search_resident),
        cmocka_unit_test(float_chain_8bit_formats),
        cmocka_unit_test(blit_strategy_chains),
        cmocka_unit_test(summary_and_validation),
    };
    if (getenv("KILN_TEST_FILTER")) cmocka_set_test_filter(getenv("KILN_TEST_FILTER"));
    return cmocka_run_group_tests(tests, setup, teardown);
}

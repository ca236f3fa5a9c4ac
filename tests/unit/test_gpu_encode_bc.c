/* test_gpu_encode_bc.c - the BC GPU encoders (src/gpu/gpu_encode_bc.c, shaders/enc_bc*.comp) on the
 * Vulkan device (lavapipe in CI), against the CPU encoders:
 *   - kiln strategy: the same bytes as the CPU encoder, for BC4/BC5 (UNORM, SNORM) and the BC3 alpha
 *     at every quality (max: both designs, also on adversarial blocks), BC1 / BC1a / BC3 at every quality (fast, normal; high and max: the cluster fit
 *     of enc_bc1_cf.comp, also with 8, 32 and 64 invocations per block; designs 2 and 3, enc_bc1_cf2.comp and
 *     enc_bc1_cf3.comp with each of its code variants: bc1_cf_designs_identical, bc1_cf3_variants_identical), including blocks the GPU hands
 *     back to the CPU (flat and near-flat, punch-through, cut-out), on crops of the test images, random
 *     texels, near-flat blocks, odd sizes (1x1, 3x5, 13x7), 16-bit and float sources, small batches,
 *     and every subgroup size the device can require; with dithering too (dither_identical);
 *   - seed strategy: PSNR floors against the CPU encoder's PSNR, with texels preloaded into shared
 *     memory and read directly;
 *   - the validation layer (KILN_VK_VALIDATION=1) reports nothing.
 * Skipped when there is no Vulkan device. */
#include "support.h"
#include "gpu/gpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fixture {
    kiln_context *gpu;
    kiln_context *cpu;
    kiln_image img[10];
    const char *name[10];
    int nimg;
} fixture;

/* A w x h crop of src at (x0, y0) (clamped). */
static void crop(const kiln_image *src, uint32_t x0, uint32_t y0, uint32_t w, uint32_t h, kiln_image *out)
{
    assert_int_equal(kiln_image_alloc(NULL, out, w, h, KILN_PIXEL_U8), KILN_OK);
    out->channels = 4;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            uint32_t sx = x0 + x < src->width ? x0 + x : src->width - 1, sy = y0 + y < src->height ? y0 + y : src->height - 1;
            memcpy((uint8_t *)out->pixels + ((size_t)y * w + x) * 4, (const uint8_t *)src->pixels + ((size_t)sy * src->width + sx) * 4, 4);
        }
}

/* Appends the two real-image crops of the BC1 cluster-fit tests to img / name from index n (a crop whose image
 * cannot be loaded is left out with a note); returns the new count. */
static int add_real_crops(fixture *fx, kiln_image *img, const char **name, int n)
{
    static const struct { const char *path; uint32_t x, y, w, h; } crops[] = {
        {"ldr/stktex_generic_WoodB_1024.png", 301, 517, 83, 45},
        {"ldr/stk_generic_grassB_1024.png", 611, 250, 58, 41},
    };
    for (size_t i = 0; i < sizeof crops / sizeof crops[0]; i++) {
        kiln_image src;
        if (kiln_image_load(fx->cpu, kt_testdata(crops[i].path), &src) != KILN_OK) {
            print_message("note: cannot load %s: %s\n", crops[i].path, kiln_last_error(fx->cpu));
            continue;
        }
        crop(&src, crops[i].x, crops[i].y, crops[i].w, crops[i].h, &img[n]);
        name[n++] = crops[i].path;
        kiln_image_free(&src);
    }
    return n;
}

static void random_image(kt_rng *rng, uint32_t w, uint32_t h, int near_flat, kiln_image *out)
{
    assert_int_equal(kiln_image_alloc(NULL, out, w, h, KILN_PIXEL_U8), KILN_OK);
    out->channels = 4;
    uint8_t *p = out->pixels;
    kt_rng_bytes(rng, p, (size_t)w * h * 4);
    if (near_flat) /* blocks of one colour plus small noise, some exactly flat, some alpha 0 / 255 */
        for (uint32_t y = 0; y < h; y++)
            for (uint32_t x = 0; x < w; x++) {
                uint32_t blk = (y / 4) * 97 + (x / 4) * 31;
                uint8_t *t = p + ((size_t)y * w + x) * 4;
                uint32_t r = kt_rng_u32(rng);
                for (int c = 0; c < 4; c++) {
                    int base = (int)((blk * (7 + c * 13)) % 256);
                    int noise = (blk % 3 == 0) ? 0 : (int)(r >> (8 * c) & 3) - 1;
                    int v = base + noise;
                    t[c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
                }
                if (blk % 5 == 1) t[3] = (r & 1) ? 0 : 255;
            }
}

static int setup(void **state)
{
    static fixture f;
    memset(&f, 0, sizeof f);
    if (kt_gpu_contexts(&f.gpu, &f.cpu, 2)) return -1;
    if (f.gpu) {
        static const struct { const char *path; uint32_t x, y, w, h; } crops[] = {
            {"ldr/stk_generic_rock_a_512.png", 200, 120, 36, 20},
            {"ldr/Sara_Head_Diff_256_rgba.png", 96, 64, 29, 23},
            {"normal/stk_generic_rock_a_Normal_512_rgba.png", 300, 300, 24, 16},
            {"ldr/gimp_qube1_tiny_31x57.png", 0, 0, 31, 57},
            {"ldr/gimp_stone33_tileable_156.png", 0, 0, 156, 156},
        };
        for (size_t i = 0; i < sizeof crops / sizeof crops[0]; i++) {
            kiln_image src;
            if (kiln_image_load(f.cpu, kt_testdata(crops[i].path), &src) != KILN_OK) {
                print_message("note: cannot load %s: %s\n", crops[i].path, kiln_last_error(f.cpu));
                continue;
            }
            crop(&src, crops[i].x, crops[i].y, crops[i].w, crops[i].h, &f.img[f.nimg]);
            f.name[f.nimg++] = crops[i].path;
            kiln_image_free(&src);
        }
        kt_rng rng;
        kt_rng_seed(&rng, 42);
        random_image(&rng, 13, 7, 0, &f.img[f.nimg]);
        f.name[f.nimg++] = "random 13x7";
        random_image(&rng, 24, 20, 1, &f.img[f.nimg]);
        f.name[f.nimg++] = "near-flat 24x20";
        random_image(&rng, 1, 1, 0, &f.img[f.nimg]);
        f.name[f.nimg++] = "random 1x1";
        random_image(&rng, 3, 5, 1, &f.img[f.nimg]);
        f.name[f.nimg++] = "near-flat 3x5";
    }
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < f->nimg; i++) kiln_image_free(&f->img[i]);
    kiln_context_free(f->gpu);
    kiln_context_free(f->cpu);
    return 0;
}

static const char *qname(kiln_quality q) { return q == 0 ? "fast" : q == 1 ? "normal" : q == 2 ? "high" : "max"; }

/* GPU (kiln__gpu_encode at subgroup size sg) == CPU bytes; returns the GPU status. */
static kiln_status compare(fixture *fx, const kiln_image *img, const char *what, const kiln_encode_params *ep, uint32_t sg)
{
    const kiln_format_info *fi = kiln_format_get_info(ep->format);
    size_t size = kiln_format_image_size(ep->format, img->width, img->height);
    uint8_t *g = malloc(size), *c = malloc(size);
    assert_non_null(g);
    assert_non_null(c);
    memset(g, 0xcd, size);
    kiln_status st = kiln__gpu_encode(fx->gpu, img, ep, sg, g, size);
    if (st == KILN_OK) {
        assert_true(kiln_last_gpu_ms(fx->gpu) >= 0.0);
        assert_int_equal(kt_encode_cpu_cached(fx->cpu, img, ep, c, size), KILN_OK);
        if (memcmp(g, c, size) != 0) {
            size_t i = 0;
            while (g[i] == c[i]) i++;
            size_t blk = i / fi->block_bytes;
            char hg[40] = "", hc[40] = "";
            for (uint32_t k = 0; k < fi->block_bytes; k++) {
                snprintf(hg + 2 * k, 3, "%02x", g[blk * fi->block_bytes + k]);
                snprintf(hc + 2 * k, 3, "%02x", c[blk * fi->block_bytes + k]);
            }
            uint32_t bx = (img->width + 3) / 4;
            fail_msg("%s %s %s sg %u (%ux%u): block %zu (%zu,%zu) differs: GPU %s CPU %s", fi->name, qname(ep->quality), what, sg,
                     img->width, img->height, blk, blk % bx, blk / bx, hg, hc);
        }
    }
    free(g);
    free(c);
    return st;
}

static const kiln_format channel_formats[] = {KILN_FORMAT_BC4_UNORM, KILN_FORMAT_BC4_SNORM, KILN_FORMAT_BC5_UNORM,
                                               KILN_FORMAT_BC5_SNORM};

static void bc4_bc5_identical(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    for (size_t k = 0; k < sizeof channel_formats / sizeof channel_formats[0]; k++)
        for (int q = KILN_QUALITY_FAST; q <= KILN_QUALITY_MAX; q++)
            for (int i = 0; i < fx->nimg; i++) {
                /* max on lavapipe: the exhaustive search costs ~1 s per 100 random channel blocks */
                if (q == KILN_QUALITY_MAX && (strstr(fx->name[i], "qube") || strstr(fx->name[i], "stone") ||
                                              (strstr(fx->name[i], "random 13x7") && k >= 2)))
                    continue;
                kiln_encode_params ep;
                kiln_encode_params_init(&ep, channel_formats[k], (kiln_quality)q);
                kiln_status st = compare(fx, &fx->img[i], fx->name[i], &ep, 0);
                if (st != KILN_OK) fail_msg("%s: %s", fx->name[i], kiln_last_error(fx->gpu));
            }
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

/* Issue #4: BC4-style max quality (enc_bc4_max_pool.comp's shared pool of quadtree cells, also with a tiny
 * stack; the quadtree-per-invocation and v1 designs were removed) gives the CPU's
 * bytes on adversarial blocks - flat, two values, only the range extremes, noise, three clusters, SNORM
 * values around zero (where the truncating ramps bunch up), gradients, one outlier - in every channel, on
 * 64x64 crops of the grey and normal-map test images, and (the default design) from a float source with
 * SNORM values beyond -1 / 1. */
static void adversarial_image(kt_rng *rng, uint32_t w, uint32_t h, kiln_image *out)
{
    assert_int_equal(kiln_image_alloc(NULL, out, w, h, KILN_PIXEL_U8), KILN_OK);
    out->channels = 4;
    uint8_t *p = out->pixels;
    const uint32_t bx = (w + 3) / 4;
    for (uint32_t by = 0; by < (h + 3) / 4; by++)
        for (uint32_t b = 0; b < bx; b++)
            for (int c = 0; c < 4; c++) {
                const uint32_t kind = (by * bx + b + 5u * (uint32_t)c) % 12u;
                const int v0 = (int)(kt_rng_u32(rng) & 255u), v1 = (int)(kt_rng_u32(rng) & 255u);
                const int v2 = (int)(kt_rng_u32(rng) & 255u), odd = (int)(kt_rng_u32(rng) & 15u);
                for (uint32_t t = 0; t < 16; t++) {
                    const uint32_t x = b * 4 + (t & 3), y = by * 4 + (t >> 2);
                    if (x >= w || y >= h) continue;
                    const uint32_t r = kt_rng_u32(rng);
                    int v;
                    switch (kind) {
                    case 0: v = v0; break;                                             /* flat */
                    case 1: v = (r & 1) ? v0 : v1; break;                              /* two values */
                    case 2: v = (r & 1) ? 0 : 255; break;                              /* the extremes */
                    case 3: v = (int)((uint32_t[]){0, 1, 254, 255})[r & 3]; break;     /* near the extremes */
                    case 4: v = (int)(r & 255u); break;                                /* noise */
                    case 5: v = ((int[]){v0, v1, v2})[r % 3] + (int)((r >> 8) & 3); break; /* three clusters */
                    case 6: v = 120 + (int)((r >> 4) % 17u); break;                    /* SNORM around zero */
                    case 7: v = 125 + (int)((r >> 4) % 7u); break;
                    case 8: v = (v0 + (int)t * (v1 - 128) / 16) & 255; break;          /* gradient */
                    case 9: v = (r & 3) == 0 ? 0 : (r & 3) == 1 ? 255 : v0; break;     /* extremes + one value */
                    case 10: v = v0 + (int)((r >> 4) % 21u) - 10; break;              /* narrow noise */
                    default: v = (int)t == odd ? v1 : v0; break;                       /* one outlier */
                    }
                    p[((size_t)y * w + x) * 4 + (size_t)c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
                }
            }
}

static void bc4_max_adversarial_identical(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    /* a GPU context of its own: its pipelines (two pool settings x five variants) would otherwise count
     * against the 256 of the context the later tests share */
    kiln_context *shared_gpu = fx->gpu, *own_gpu = NULL, *own_cpu = NULL;
    if (kt_gpu_contexts(&own_gpu, &own_cpu, 1) != 0 || !own_gpu) fail_msg("cannot make a second GPU context");
    fx->gpu = own_gpu;
    kiln_image img[3];
    const char *name[3] = {"adversarial 44x40", "grey/stk_generic_rock_a_gloss_R_512_grey.png 64x64",
                           "normal/stk_solarPanel_a_Normal_1024.png 64x64"};
    int nimg = 0;
    kt_rng rng;
    kt_rng_seed(&rng, 4004);
    adversarial_image(&rng, 44, 40, &img[nimg++]);
    static const struct { const char *path; uint32_t x, y; } crops[] = {
        {"grey/stk_generic_rock_a_gloss_R_512_grey.png", 128, 256}, {"normal/stk_solarPanel_a_Normal_1024.png", 500, 300}};
    for (int i = 0; i < 2; i++) {
        kiln_image src;
        if (kiln_image_load(fx->cpu, kt_testdata(crops[i].path), &src) != KILN_OK) {
            print_message("note: cannot load %s: %s\n", crops[i].path, kiln_last_error(fx->cpu));
            continue;
        }
        crop(&src, crops[i].x, crops[i].y, 64, 64, &img[nimg]);
        name[nimg++] = name[i + 1];
        kiln_image_free(&src);
    }
    static const kiln_format fmts[] = {KILN_FORMAT_BC4_UNORM, KILN_FORMAT_BC4_SNORM, KILN_FORMAT_BC5_UNORM,
                                       KILN_FORMAT_BC5_SNORM, KILN_FORMAT_BC3_UNORM};
    /* the pool, and its overflow path (a stack of 8 entries: most cells then go to the invocation's own
     * depth-first walk) on the adversarial blocks in BC4 UNORM and BC5 SNORM only (lavapipe time) */
    /* (BC4 / BC5: the default split, KILN_EBC_BC4_SPLIT: the pre-pass, step 1 and the search over its list; the
     * small stack with step 1 and the search in one kernel, KILN_GPU_BC4_SPLIT=1; the images have tasks with
     * heuristic error 0, which the pre-pass does not list, and tasks above 0) */
    static const struct { const char *design, *cap, *split; int all; } designs[] = {{"pool", NULL, NULL, 1}, {"pool", "8", "1", 0}};
    for (size_t dz = 0; dz < sizeof designs / sizeof designs[0]; dz++) {
        setenv("KILN_GPU_BC4_MAX", designs[dz].design, 1);
        if (designs[dz].cap) setenv("KILN_GPU_BC4_POOL_CAP", designs[dz].cap, 1);
        if (designs[dz].split) setenv("KILN_GPU_BC4_SPLIT", designs[dz].split, 1);
        /* (the small stack also without 16-bit floats: the integer cell bound and pre-pass of devices without
         * shaderFloat16; the default has them where the device does, as lavapipe; helper bc4n) */
        if (designs[dz].cap) setenv("KILN_GPU_BC4_F16", "0", 1);
        for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++)
            for (int i = 0; i < nimg; i++) {
                if (!designs[dz].all && i > 0) continue;
                /* the small stack (a constant of the pool's code): BC4 UNORM and BC5 SNORM (one and two channels,
                 * both signednesses), not every format (lavapipe compile time) */
                if (!designs[dz].all && k != 0 && k != 3) continue;
                kiln_encode_params ep;
                kiln_encode_params_init(&ep, fmts[k], KILN_QUALITY_MAX);
                kiln_status st = compare(fx, &img[i], name[i], &ep, 0);
                if (st != KILN_OK)
                    fail_msg("%s%s %s: %s", designs[dz].design, designs[dz].cap ? " (small stack)" : "", name[i],
                             kiln_last_error(fx->gpu));
            }
        unsetenv("KILN_GPU_BC4_MAX");
        unsetenv("KILN_GPU_BC4_POOL_CAP");
        unsetenv("KILN_GPU_BC4_SPLIT");
        unsetenv("KILN_GPU_BC4_F16");
    }
    /* float source (the host prepares the channel bytes): SNORM from -1.5 .. 2 (clamped), exact -1 / 1 */
    kiln_image f32;
    assert_int_equal(kiln_image_alloc(NULL, &f32, img[0].width, img[0].height, KILN_PIXEL_F32), KILN_OK);
    f32.channels = 4;
    for (size_t i = 0; i < (size_t)f32.width * f32.height * 4; i++) {
        uint8_t u = ((const uint8_t *)img[0].pixels)[i];
        ((float *)f32.pixels)[i] = u == 3 ? -1.5f : u == 252 ? 2.0f : (float)u / 127.5f - 1.0f;
    }
    /* (BC5 SNORM only: each format's max takes three pipelines with the split, KILN_EBC_BC4_SPLIT, and BC5 SNORM
     * has the BC4 SNORM channel code in both channels) */
    static const kiln_format sfmts[] = {KILN_FORMAT_BC5_SNORM};
    for (size_t k = 0; k < sizeof sfmts / sizeof sfmts[0]; k++) {
        kiln_encode_params ep;
        kiln_encode_params_init(&ep, sfmts[k], KILN_QUALITY_MAX);
        kiln_status st = compare(fx, &f32, "adversarial float", &ep, 0);
        if (st != KILN_OK) fail_msg("float: %s", kiln_last_error(fx->gpu));
    }
    kiln_image_free(&f32);
    for (int i = 0; i < nimg; i++) kiln_image_free(&img[i]);
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
    fx->gpu = shared_gpu;
    kiln_context_free(own_gpu);
    kiln_context_free(own_cpu);
}

/* enc_bc4_max_pool.comp's option bits (KILN_GPU_BC4_POOL_OPT, helpers bc4max, bc4k) other than the default
 * (0xd0000, which bc4_max_adversarial_identical runs): the former step 1 with the heuristic's return at error
 * 0 turned off, and 0x3d0000 (the k-means DP in shared memory, the cell bound over all 16 slots) in
 * 32-invocation workgroups with an 8-entry stack. The adversarial blocks, BC4 UNORM / BC5 SNORM, then BC4 UNORM (lavapipe: a few seconds). */
static void bc4_max_pool_options_identical(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kiln_context *shared_gpu = fx->gpu, *own_gpu = NULL, *own_cpu = NULL;
    if (kt_gpu_contexts(&own_gpu, &own_cpu, 1) != 0 || !own_gpu) fail_msg("cannot make a second GPU context");
    fx->gpu = own_gpu;
    kiln_image img;
    kt_rng rng;
    kt_rng_seed(&rng, 4004);
    adversarial_image(&rng, 44, 40, &img);
    static const struct { const char *opt, *wg, *cap; } runs[] = {{"0x400000", NULL, NULL}, {"0x3d0000", "32", "8"}};
    static const kiln_format fmts[] = {KILN_FORMAT_BC4_UNORM, KILN_FORMAT_BC5_SNORM};
    setenv("KILN_GPU_BC4_MAX", "pool", 1);
    setenv("KILN_GPU_BC4_SPLIT", "0", 1); /* the pool kernel alone, with its heuristic (BC3 max, the mip path) */
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        setenv("KILN_GPU_BC4_POOL_OPT", runs[r].opt, 1);
        if (runs[r].wg) setenv("KILN_GPU_BC4_POOL_WG", runs[r].wg, 1);
        if (runs[r].cap) setenv("KILN_GPU_BC4_POOL_CAP", runs[r].cap, 1);
        for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++) {
            if (r > 0 && k > 0) continue; /* the second setting: BC4 alone */
            kiln_encode_params ep;
            kiln_encode_params_init(&ep, fmts[k], KILN_QUALITY_MAX);
            kiln_status st = compare(fx, &img, "adversarial 44x40", &ep, 0);
            if (st != KILN_OK) fail_msg("KILN_GPU_BC4_POOL_OPT=%s: %s", runs[r].opt, kiln_last_error(fx->gpu));
        }
        unsetenv("KILN_GPU_BC4_POOL_OPT");
        unsetenv("KILN_GPU_BC4_POOL_WG");
        unsetenv("KILN_GPU_BC4_POOL_CAP");
    }
    unsetenv("KILN_GPU_BC4_MAX");
    unsetenv("KILN_GPU_BC4_SPLIT");
    kiln_image_free(&img);
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
    fx->gpu = shared_gpu;
    kiln_context_free(own_gpu);
    kiln_context_free(own_cpu);
}

static void bc1_bc3_fast_normal_identical(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    static const kiln_format fmts[] = {KILN_FORMAT_BC1_RGB_UNORM, KILN_FORMAT_BC1_RGBA_UNORM, KILN_FORMAT_BC3_UNORM,
                                       KILN_FORMAT_BC1_RGB_SRGB};
    for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++)
        for (int i = 0; i < fx->nimg; i++)
            for (int variant = 0; variant < 4; variant++) {
                kiln_encode_params ep;
                kiln_encode_params_init(&ep, fmts[k], variant == 3 ? KILN_QUALITY_NORMAL : KILN_QUALITY_FAST);
                if (variant == 1) ep.perceptual = 1;
                if (variant == 2) ep.alpha_cutout = 1, ep.alpha_threshold = 200;
                kiln_status st = compare(fx, &fx->img[i], fx->name[i], &ep, 0);
                if (st != KILN_OK) fail_msg("%s: %s", fx->name[i], kiln_last_error(fx->gpu));
            }
    /* normal with perceptual weights */
    for (int k = 0; k < 3; k++) {
        kiln_encode_params ep;
        kiln_encode_params_init(&ep, fmts[k], KILN_QUALITY_NORMAL);
        ep.perceptual = 1;
        kiln_status st = compare(fx, &fx->img[1], fx->name[1], &ep, 0);
        if (st != KILN_OK) fail_msg("%s: %s", fx->name[1], kiln_last_error(fx->gpu));
    }
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

/* Blocks the GPU itself encoded equal to the CPU's: with KILN_GPU_SKIP_FALLBACK=1 the flagged blocks
 * keep the device's stale bytes, so the matches are the GPU's own work (guards against a shader that
 * flags everything). Returns the fraction of matching blocks. */
static double gpu_own_fraction(fixture *fx, const kiln_image *img, const kiln_encode_params *ep)
{
    const kiln_format_info *fi = kiln_format_get_info(ep->format);
    size_t size = kiln_format_image_size(ep->format, img->width, img->height), nb = size / fi->block_bytes, same = 0;
    uint8_t *g = malloc(size), *c = malloc(size);
    assert_non_null(g);
    assert_non_null(c);
    memset(g, 0xcd, size);
    setenv("KILN_GPU_SKIP_FALLBACK", "1", 1);
    kiln_status st = kiln__gpu_encode(fx->gpu, img, ep, 0, g, size);
    unsetenv("KILN_GPU_SKIP_FALLBACK");
    if (st != KILN_OK) fail_msg("%s", kiln_last_error(fx->gpu));
    assert_int_equal(kt_encode_cpu_cached(fx->cpu, img, ep, c, size), KILN_OK);
    for (size_t i = 0; i < nb; i++) same += memcmp(g + i * fi->block_bytes, c + i * fi->block_bytes, fi->block_bytes) == 0;
    free(g);
    free(c);
    return (double)same / (double)nb;
}

/* Issue #4: at fast and normal quality enc_bc1.comp finishes the blocks it used to give back to the CPU
 * (flat blocks and the exact single-colour pairs of near-flat ones, from the tables at binding 3; the
 * per-block fast path of lanes where the batch degenerates; punch-through and cut-out texels). On
 * crops of four test images whose whole images used to give 15-97% of their blocks back at fast,
 * every block must now be the GPU's own (KILN_GPU_SKIP_FALLBACK) and equal the CPU's, for BC1, BC1a
 * and BC3 with uniform and perceptual weights and alpha cut-out, on the pipelined and the synchronous
 * path; also BC1 RGB fast with bc1_black (which the CPU's fast path does not apply: its batch calls
 * the per-block encoder without try_black), on those crops and on dark near-flat blocks. */
static void bc1_testdata_gpu_finishes(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    static const struct { const char *path; uint32_t x, y; } crops[] = {
        {"ldr/Sara_Head_Diff_256_rgba.png", 64, 64},
        {"ldr/city_fern_512_rgba.png", 128, 128},
        {"ldr/desktopbase_softwaves_crop_1000x600.png", 400, 200},
        {"ldr/stkflag_TCPLogo_a_1024x512_rgba.png", 384, 160},
    };
    static const kiln_format fmts[] = {KILN_FORMAT_BC1_RGB_UNORM, KILN_FORMAT_BC1_RGBA_UNORM, KILN_FORMAT_BC3_UNORM};
    int loaded = 0;
    for (size_t i = 0; i < sizeof crops / sizeof crops[0]; i++) {
        kiln_image src, img;
        if (kiln_image_load(fx->cpu, kt_testdata(crops[i].path), &src) != KILN_OK) {
            print_message("note: cannot load %s: %s\n", crops[i].path, kiln_last_error(fx->cpu));
            continue;
        }
        loaded++;
        crop(&src, crops[i].x, crops[i].y, 128, 96, &img);
        kiln_image_free(&src);
        for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++)
            for (int q = KILN_QUALITY_FAST; q <= KILN_QUALITY_NORMAL; q++)
                for (int variant = 0; variant < 3; variant++) {
                    kiln_encode_params ep;
                    kiln_encode_params_init(&ep, fmts[k], (kiln_quality)q);
                    if (variant == 1) ep.perceptual = 1;
                    if (variant == 2) ep.alpha_cutout = 1, ep.alpha_threshold = 200;
                    double own = gpu_own_fraction(fx, &img, &ep);
                    if (own < 1.0)
                        fail_msg("%s %s %s variant %d: only %.4f of the blocks are the GPU's own", crops[i].path,
                                 kiln_format_get_info(fmts[k])->name, qname(ep.quality), variant, own);
                    if (variant == 1) setenv("KILN_GPU_SYNC", "1", 1);
                    kiln_status st = compare(fx, &img, crops[i].path, &ep, 0);
                    unsetenv("KILN_GPU_SYNC");
                    if (st != KILN_OK) fail_msg("%s: %s", crops[i].path, kiln_last_error(fx->gpu));
                }
        kiln_encode_params ep;
        kiln_encode_params_init(&ep, KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_FAST);
        ep.bc1_black = 1;
        if (gpu_own_fraction(fx, &img, &ep) < 1.0) fail_msg("%s bc1_black: blocks went back to the CPU", crops[i].path);
        kiln_status st = compare(fx, &img, crops[i].path, &ep, 0);
        if (st != KILN_OK) fail_msg("%s: %s", crops[i].path, kiln_last_error(fx->gpu));
        kiln_image_free(&img);
    }
    if (!loaded) skip();
    /* dark near-flat blocks (two grey levels a few steps apart, below 48: what try_black would look at) */
    kiln_image dark;
    assert_int_equal(kiln_image_alloc(NULL, &dark, 64, 32, KILN_PIXEL_U8), KILN_OK);
    dark.channels = 4;
    kt_rng rng;
    kt_rng_seed(&rng, 7);
    for (uint32_t y = 0; y < 32; y++)
        for (uint32_t x = 0; x < 64; x++) {
            uint32_t blk = (y / 4) * 16 + x / 4, r = kt_rng_u32(&rng);
            uint8_t *t = (uint8_t *)dark.pixels + ((size_t)y * 64 + x) * 4;
            int base = (int)(blk % 9), v = base + ((r & 1) ? (int)(1 + blk % 6) : 0);
            for (int c = 0; c < 3; c++) t[c] = (uint8_t)(v + (c == 1 && (r & 6) == 6 ? 1 : 0));
            t[3] = 255;
        }
    for (int perceptual = 0; perceptual < 2; perceptual++) {
        kiln_encode_params ep;
        kiln_encode_params_init(&ep, KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_FAST);
        ep.perceptual = perceptual;
        ep.bc1_black = 1;
        if (gpu_own_fraction(fx, &dark, &ep) < 1.0) fail_msg("dark blocks, bc1_black: blocks went back to the CPU");
        kiln_status st = compare(fx, &dark, "dark near-flat, bc1_black", &ep, 0);
        if (st != KILN_OK) fail_msg("dark: %s", kiln_last_error(fx->gpu));
    }
    kiln_image_free(&dark);
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

/* High and max quality: the cluster fit (enc_bc1_cf.comp) gives the CPU's bytes for BC1, BC1a and
 * BC3 colour, with uniform and perceptual weights and with alpha cut-out / a high punch-through
 * threshold (those blocks go back to the CPU). */
static void bc1_bc3_high_max_identical(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    static const kiln_format fmts[] = {KILN_FORMAT_BC1_RGB_UNORM, KILN_FORMAT_BC1_RGBA_UNORM, KILN_FORMAT_BC3_UNORM};
    for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++)
        for (int q = KILN_QUALITY_HIGH; q <= KILN_QUALITY_MAX; q++)
            for (int i = 0; i < fx->nimg; i++)
                for (int variant = 0; variant < 3; variant++) {
                    /* lavapipe time: the 156x156 crop once per format and quality */
                    if (variant > 0 && strstr(fx->name[i], "stone")) continue;
                    if (kt_gpu_light() && i % 3 != 0) continue; /* light run: 3 of the 9 images */
                    kiln_encode_params ep;
                    kiln_encode_params_init(&ep, fmts[k], (kiln_quality)q);
                    if (variant == 1) ep.perceptual = 1;
                    if (variant == 2) ep.alpha_cutout = 1, ep.alpha_threshold = 200;
                    kiln_status st = compare(fx, &fx->img[i], fx->name[i], &ep, 0);
                    if (st != KILN_OK) fail_msg("%s: %s", fx->name[i], kiln_last_error(fx->gpu));
                }
    /* larger random images: uniform noise, and blocks of two or three colours (many partitions tie:
     * the first in table order must win, whichever lane scored it) */
    kt_rng rng;
    kt_rng_seed(&rng, 7);
    kiln_image extra[2];
    random_image(&rng, 64, 64, 0, &extra[0]);
    random_image(&rng, 64, 64, 0, &extra[1]);
    for (uint32_t y = 0; y < 64; y++)
        for (uint32_t x = 0; x < 64; x++) {
            uint8_t *t = (uint8_t *)extra[1].pixels + ((size_t)y * 64 + x) * 4;
            uint32_t blk = (y / 4) * 16 + x / 4, r = kt_rng_u32(&rng), pick = r % (blk % 2 ? 3u : 2u);
            for (int c = 0; c < 3; c++) t[c] = (uint8_t)((blk * 37u + pick * (53u + 20u * (uint32_t)c) + (blk % 5) * (uint32_t)c) & 255u);
            t[3] = 255;
        }
    for (int e = 0; e < 2; e++)
        for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++)
            for (int q = KILN_QUALITY_HIGH; q <= KILN_QUALITY_MAX; q++)
                for (int pw = 0; pw < 2; pw++) {
                    kiln_encode_params ep;
                    kiln_encode_params_init(&ep, fmts[k], (kiln_quality)q);
                    ep.perceptual = pw;
                    const char *what = e ? "two or three colours 64x64" : "random 64x64";
                    kiln_status st = compare(fx, &extra[e], what, &ep, 0);
                    if (st != KILN_OK) fail_msg("%s: %s", what, kiln_last_error(fx->gpu));
                    double own = gpu_own_fraction(fx, &extra[e], &ep);
                    if (getenv("KILN_TEST_VERBOSE")) print_message("%s %s %s: %.3f of the blocks from the GPU\n", kiln_format_get_info(ep.format)->name, qname(ep.quality), what, own);
                    /* the opaque few-colour blocks (the tie cases) must be the GPU's own work */
                    if (e == 1 && !(own >= 0.9)) fail_msg("%s: only %.3f of the blocks came from the GPU", what, own);
                }
    kiln_image_free(&extra[0]);
    kiln_image_free(&extra[1]);
    /* the GPU encodes most blocks of a photo crop itself (flat and near-flat ones go to the CPU) */
    for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++)
        for (int q = KILN_QUALITY_HIGH; q <= KILN_QUALITY_MAX; q++) {
            kiln_encode_params ep;
            kiln_encode_params_init(&ep, fmts[k], (kiln_quality)q);
            double own = gpu_own_fraction(fx, &fx->img[0], &ep);
            if (getenv("KILN_TEST_VERBOSE")) print_message("%s %s: %.3f of the blocks from the GPU\n", kiln_format_get_info(ep.format)->name, qname(ep.quality), own);
            if (!(own >= 0.9)) fail_msg("%s %s: only %.3f of the blocks came from the GPU", kiln_format_get_info(ep.format)->name, qname(ep.quality), own);
        }
    /* the lane count only splits the work: 8, 32 and 64 invocations per block (default 16) give the
     * same bytes */
    static const char *lanes[] = {"8", "32", "64"};
    for (int l = 0; l < 3; l++) {
        setenv("KILN_GPU_CF_DESIGN", l == 1 ? "2" : "1", 1); /* the designs that split a block (3 does not) */
        setenv("KILN_GPU_CF_LANES", lanes[l], 1);
        for (int q = KILN_QUALITY_HIGH; q <= KILN_QUALITY_MAX; q++)
            for (int i = 0; i < 3 && i < fx->nimg; i++) {
                kiln_encode_params ep;
                kiln_encode_params_init(&ep, fmts[l], (kiln_quality)q);
                ep.perceptual = l & 1;
                kiln_status st = compare(fx, &fx->img[i], lanes[l], &ep, 0);
                if (st != KILN_OK) fail_msg("%s lanes %s: %s", fx->name[i], lanes[l], kiln_last_error(fx->gpu));
            }
        unsetenv("KILN_GPU_CF_LANES");
        unsetenv("KILN_GPU_CF_DESIGN");
    }
    setenv("KILN_GPU_CF_LANES", "12", 1);
    kiln_encode_params ep;
    kiln_encode_params_init(&ep, KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_HIGH);
    size_t size = kiln_format_image_size(ep.format, fx->img[0].width, fx->img[0].height);
    uint8_t *d = malloc(size);
    assert_non_null(d);
    assert_int_equal(kiln__gpu_encode(fx->gpu, &fx->img[0], &ep, 0, d, size), KILN_ERR_INVALID_ARGUMENT);
    unsetenv("KILN_GPU_CF_LANES");
    free(d);
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

/* The cluster-fit designs (KILN_GPU_CF_DESIGN=1: enc_bc1_cf.comp, refinement on one invocation per
 * candidate; 2: enc_bc1_cf2.comp, setup and refinement split over the block's invocations; 3:
 * enc_bc1_cf3.comp, one invocation per block, here on the whole grassB image only) give the CPU's bytes
 * for BC1 / BC1a / BC3 at high and max, on odd-sized real crops (many blocks take every refinement
 * round), with perceptual weights, cut-out alpha and every lane count; an unknown design is refused. */
static void bc1_cf_designs_identical(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    static const kiln_format fmts[] = {KILN_FORMAT_BC1_RGB_UNORM, KILN_FORMAT_BC1_RGBA_UNORM, KILN_FORMAT_BC3_UNORM};
    static const struct { const char *path; uint32_t x, y, w, h; } crops[] = {
        {"ldr/stktex_generic_WoodB_1024.png", 301, 517, 203, 77},
        {"ldr/stk_generic_grassB_1024.png", 611, 250, 98, 61},
    };
    int loaded = 0;
    for (size_t i = 0; i < sizeof crops / sizeof crops[0]; i++) {
        kiln_image src, img;
        if (kiln_image_load(fx->cpu, kt_testdata(crops[i].path), &src) != KILN_OK) {
            print_message("note: cannot load %s: %s\n", crops[i].path, kiln_last_error(fx->cpu));
            continue;
        }
        loaded++;
        crop(&src, crops[i].x, crops[i].y, crops[i].w, crops[i].h, &img);
        kiln_image_free(&src);
        for (int design = 1; design <= 2; design++) {
            if (kt_gpu_light() && i > 0) break; /* light run: the first crop */
            setenv("KILN_GPU_CF_DESIGN", design == 1 ? "1" : "2", 1);
            for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++)
                for (int q = KILN_QUALITY_HIGH; q <= KILN_QUALITY_MAX; q++) {
                    kiln_encode_params ep;
                    kiln_encode_params_init(&ep, fmts[k], (kiln_quality)q);
                    ep.perceptual = (int)(k & 1);
                    if (k == 2 && q == KILN_QUALITY_MAX) ep.alpha_cutout = 1, ep.alpha_threshold = 128;
                    kiln_status st = compare(fx, &img, crops[i].path, &ep, 0);
                    if (st != KILN_OK) fail_msg("%s design %d: %s", crops[i].path, design, kiln_last_error(fx->gpu));
                    double own = gpu_own_fraction(fx, &img, &ep);
                    if (!(own >= 0.5)) fail_msg("%s design %d: only %.3f of the blocks from the GPU", crops[i].path, design, own);
                }
            /* design 2 splits its rounds over 8..64 invocations per block: the same bytes */
            if (design == 2)
                for (int l = 16; l <= (kt_gpu_light() ? 16 : 64); l *= 2) { /* light run: 16 */
                    char lanes[16];
                    snprintf(lanes, sizeof lanes, "%d", l);
                    setenv("KILN_GPU_CF_LANES", lanes, 1);
                    kiln_encode_params ep;
                    kiln_encode_params_init(&ep, fmts[(size_t)l % 3], KILN_QUALITY_MAX);
                    kiln_status st = compare(fx, &img, crops[i].path, &ep, 0);
                    unsetenv("KILN_GPU_CF_LANES");
                    if (st != KILN_OK) fail_msg("%s lanes %d: %s", crops[i].path, l, kiln_last_error(fx->gpu));
                }
            unsetenv("KILN_GPU_CF_DESIGN");
        }
        kiln_image_free(&img);
    }
    if (!loaded) skip();
    /* a whole 1024^2 photo at BC1 max, both designs (on the H100, 2026-11-25 21:13 UTC, design 2 gave
     * other bytes here while every crop above matched; lavapipe matches): the first differing block */
    kiln_image big; /* not in the light run: the crops' host path on a large image (lavapipe time) */
    if (!kt_gpu_light() && kiln_image_load(fx->cpu, kt_testdata("ldr/stk_generic_grassB_1024.png"), &big) == KILN_OK) {
        /* design 4 here: design 3 split into search and refine passes (KILN_GPU_CF_OPT 417 = 33 + 128 + 256,
         * helper bc1split) */
        for (int design = 1; design <= 4; design++) {
            char dn[12], what[40];
            snprintf(dn, sizeof dn, "%d", design < 4 ? design : 3);
            snprintf(what, sizeof what, "grassB 1024 design %d%s", design < 4 ? design : 3, design < 4 ? "" : " split");
            setenv("KILN_GPU_CF_DESIGN", dn, 1);
            if (design == 4) setenv("KILN_GPU_CF_OPT", "417", 1);
            kiln_encode_params ep;
            kiln_encode_params_init(&ep, KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_MAX);
            kiln_status st = compare(fx, &big, what, &ep, 0);
            unsetenv("KILN_GPU_CF_DESIGN");
            unsetenv("KILN_GPU_CF_OPT");
            if (st != KILN_OK) fail_msg("grassB design %d: %s", design, kiln_last_error(fx->gpu));
        }
        kiln_image_free(&big);
    }
    setenv("KILN_GPU_CF_DESIGN", "4", 1);
    kiln_encode_params ep;
    kiln_encode_params_init(&ep, KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_MAX);
    size_t size = kiln_format_image_size(ep.format, fx->img[0].width, fx->img[0].height);
    uint8_t *d = malloc(size);
    assert_non_null(d);
    assert_int_equal(kiln__gpu_encode(fx->gpu, &fx->img[0], &ep, 0, d, size), KILN_ERR_INVALID_ARGUMENT);
    unsetenv("KILN_GPU_CF_DESIGN");
    free(d);
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

/* Cluster-fit design 3 (KILN_GPU_CF_DESIGN=3: enc_bc1_cf3.comp, one invocation per block) and each of its
 * code variants (KILN_GPU_CF_OPT bits: plain products, one prefix-sum table; helper bc1split:
 * the split into a search and a refine pass, texels from the source buffer, two entries per iteration)
 * give the CPU's bytes for BC1 / BC1a / BC3 at high and max: real crops (perceptual on BC1a, cut-out on
 * BC3 max), adversarial blocks (flat, two values, extremes, clusters, outliers per channel), tied
 * two- and three-colour blocks, near-flat and 16-bit sources; the GPU must encode most blocks itself;
 * an out-of-range variant is refused. */
static void bc1_cf3_variants_identical(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    static const kiln_format fmts[] = {KILN_FORMAT_BC1_RGB_UNORM, KILN_FORMAT_BC1_RGBA_UNORM, KILN_FORMAT_BC3_UNORM};
    kiln_image img[5];
    const char *name[5];
    int n = add_real_crops(fx, img, name, 0);
    const int nc = n; /* the real crops */
    kt_rng rng;
    kt_rng_seed(&rng, 11);
    adversarial_image(&rng, 48, 36, &img[n]);
    name[n++] = "adversarial 48x36";
    assert_int_equal(kiln_image_alloc(NULL, &img[n], 32, 32, KILN_PIXEL_U8), KILN_OK);
    img[n].channels = 4;
    for (uint32_t y = 0; y < 32; y++)
        for (uint32_t x = 0; x < 32; x++) { /* two or three colours per block: tied partitions */
            uint8_t *t = (uint8_t *)img[n].pixels + ((size_t)y * 32 + x) * 4;
            uint32_t blk = (y / 4) * 8 + x / 4, r = kt_rng_u32(&rng), pick = r % (blk % 2 ? 3u : 2u);
            for (int c = 0; c < 3; c++) t[c] = (uint8_t)((blk * 41u + pick * (61u + 17u * (uint32_t)c) + (blk % 7) * (uint32_t)c) & 255u);
            t[3] = 255;
        }
    name[n++] = "two or three colours 32x32";
    random_image(&rng, 20, 16, 1, &img[n]);
    name[n++] = "near-flat 20x16";
    /* 128 and up (helper bc1split): 128 = search and refine passes, 256 = texels from the source buffer,
     * 512 = two entries per iteration, 1024 = (with 128) one refine invocation per candidate, 2048 = rounding
     * by adding 1.5 * 2^23, 4096 = no penalty loads in the search, 16384 (with 512) = four entries per iteration
     * (the values 2, 4, 8, 16, 64 and 8192 were removed with their shader code: helper bc1k, 2026-11-26; 8, 16, 64
     * and 8192 name other variants since helper bc1n, 2026-11-27: bc1_cf3_tie_order_fast_bits) */
    static const uint32_t opts[] = {0, 1, 32, 33, 128, 289, 417, 673, 1185, 1441, 1952, 2465, 7585, 24481};
    for (size_t oi = 0; oi < sizeof opts / sizeof opts[0]; oi++) {
        const uint32_t opt = opts[oi];
        /* lavapipe time (each variant compiles its own pipelines): variants that together have every bit both on
         * and off - 0 (none), 32 (bit 5 alone), 417 (split, source texels), 1952 (split with two entries per
         * iteration and one refine invocation per candidate, bit 0 off) and the high default 24481 (all of them);
         * the light run (kt_gpu_light: the sanitised build), whose host code differs only between one pass and the
         * split, runs 0 and 417; KILN_TEST_BC1_FULL=1: all */
        const int full = getenv("KILN_TEST_BC1_FULL") && getenv("KILN_TEST_BC1_FULL")[0] == '1';
        if (!full && opt != 0 && opt != 417 && opt != 24481 && (kt_gpu_light() || (opt != 32 && opt != 1952))) continue;
        if (!full && kt_gpu_light() && opt == 24481) continue; /* the high default: bc1_bc3_high_max_identical */
        char o[8];
        snprintf(o, sizeof o, "%u", opt);
        setenv("KILN_GPU_CF_DESIGN", "3", 1);
        setenv("KILN_GPU_CF_OPT", o, 1);
        for (int i = 0; i < n; i++)
            for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++)
                for (int q = KILN_QUALITY_HIGH; q <= KILN_QUALITY_MAX; q++) {
                    /* lavapipe time: high only for some variants; the 16-bit source on the even ones */
                    if (q == KILN_QUALITY_HIGH && opt != 0 && opt != 33 && opt != 128 && opt != 417 && opt != 1441 && opt != 7585 &&
                        opt != 24481)
                        continue;
                    kiln_encode_params ep;
                    kiln_encode_params_init(&ep, fmts[k], (kiln_quality)q);
                    ep.perceptual = (int)(k & 1) ^ (int)(opt & 1);
                    if (k == 2 && q == KILN_QUALITY_MAX) ep.alpha_cutout = 1, ep.alpha_threshold = 128;
                    kiln_status st = compare(fx, &img[i], name[i], &ep, 0);
                    if (st != KILN_OK) fail_msg("%s design 3 opt %u: %s", name[i], opt, kiln_last_error(fx->gpu));
                    if (i < nc || i == nc + 1) { /* real crops and the tie blocks: the GPU's own work */
                        double own = gpu_own_fraction(fx, &img[i], &ep);
                        if (!(own >= 0.5)) fail_msg("%s design 3 opt %u: only %.3f of the blocks from the GPU", name[i], opt, own);
                    }
                }
        /* a 16-bit source (float texels in shared memory instead of packed 8-bit words) */
        if (opt & 1) continue;
        kiln_image wide;
        assert_int_equal(kiln_image_alloc(NULL, &wide, img[0].width, img[0].height, KILN_PIXEL_U16), KILN_OK);
        wide.channels = 4;
        for (size_t t = 0; t < (size_t)img[0].width * img[0].height * 4; t++)
            ((uint16_t *)wide.pixels)[t] = (uint16_t)(((const uint8_t *)img[0].pixels)[t] * 257u + (t * 7919u) % 200u);
        kiln_encode_params ep;
        kiln_encode_params_init(&ep, KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_MAX);
        kiln_status st = compare(fx, &wide, "16-bit", &ep, 0);
        if (st != KILN_OK) fail_msg("16-bit design 3 opt %u: %s", opt, kiln_last_error(fx->gpu));
        kiln_image_free(&wide);
    }
    setenv("KILN_GPU_CF_OPT", "32768", 1);
    kiln_encode_params ep;
    kiln_encode_params_init(&ep, KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_MAX);
    size_t size = kiln_format_image_size(ep.format, img[0].width, img[0].height);
    uint8_t *d = malloc(size);
    assert_non_null(d);
    assert_int_equal(kiln__gpu_encode(fx->gpu, &img[0], &ep, 0, d, size), KILN_ERR_INVALID_ARGUMENT);
    free(d);
    unsetenv("KILN_GPU_CF_OPT");
    unsetenv("KILN_GPU_CF_DESIGN");
    for (int i = 0; i < n; i++) kiln_image_free(&img[i]);
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

/* Helper bc1fast (2026-11-26). (1) Blocks on which two search entries of one four-entry group of
 * enc_bc1_cf3.comp's four-per-iteration loop (CF_OPT bit 14), kept entries 4m + 2 and 4m + 3, tie exactly
 * for the best (high) or the second best (max) four-colour partition with different endpoints (found by
 * replaying bc1_enc.c's search arithmetic over 3 million random 2-4 colour blocks: 6 hits), so keeping
 * e + 3 before e + 2 changes the bytes (the gap named by helper bc1split). (2) Design 3's CF_OPT bits 16-22
 * (float conversions by a magic add, refine texels in shared memory, the spread from the diagonal, no local
 * arrays in the scoring / steps, float products in the refinement and in the setup, magic rounding in the
 * steps) alone on top of 24481 (with KILN_TEST_BC1_FULL=1), and together with bits 25 (the classify pass's list, helper
 * bc1m) and 27 (the max default 176118689, also at high; the high default 33578913 at max too; one pass with `* one`
 * products), and the defaults, give the CPU's bytes on the tie blocks, real crops, adversarial, near-flat and 16-bit
 * sources; bit 15 and the removed bits (1, 2, 24, 28, 30; helpers bc1k, bc1m, bc1n; bit 26 is the host's) are
 * refused. Bits 3, 4, 6, 13, 23 name helper bc1n's variants since 2026-11-27 (in the defaults below and the variants
 * 184515577, 33578937, 150961016). */
static const uint8_t k_tie_blocks[6][16][3] = {
    {{201, 56, 24}, {201, 56, 24}, {231, 94, 1}, {74, 110, 173}, {231, 94, 1}, {231, 94, 1}, {231, 94, 1}, {231, 94, 1},
     {201, 56, 24}, {231, 94, 1}, {231, 94, 1}, {201, 56, 24}, {201, 56, 24}, {201, 56, 24}, {231, 94, 1}, {231, 94, 1}},
    {{49, 156, 223}, {198, 10, 41}, {253, 49, 102}, {198, 10, 41}, {198, 10, 41}, {49, 156, 223}, {253, 49, 102}, {198, 10, 41},
     {176, 63, 65}, {198, 10, 41}, {198, 10, 41}, {253, 49, 102}, {253, 49, 102}, {176, 63, 65}, {253, 49, 102}, {253, 49, 102}},
    {{11, 5, 87}, {219, 88, 234}, {11, 5, 87}, {240, 59, 138}, {219, 88, 234}, {11, 5, 87}, {11, 5, 87}, {219, 88, 234},
     {240, 59, 138}, {219, 88, 234}, {11, 5, 87}, {219, 88, 234}, {11, 5, 87}, {11, 5, 87}, {219, 88, 234}, {11, 5, 87}},
    {{43, 237, 62}, {43, 237, 62}, {43, 237, 62}, {43, 237, 62}, {43, 237, 62}, {43, 237, 62}, {43, 237, 62}, {43, 237, 62},
     {142, 245, 116}, {43, 237, 62}, {43, 237, 62}, {43, 237, 62}, {43, 237, 62}, {43, 237, 62}, {43, 237, 62}, {43, 237, 62}},
    {{68, 160, 196}, {68, 160, 196}, {68, 160, 196}, {68, 160, 196}, {68, 160, 196}, {68, 160, 196}, {68, 160, 196}, {68, 160, 196},
     {167, 73, 180}, {68, 160, 196}, {68, 160, 196}, {68, 160, 196}, {68, 160, 196}, {68, 160, 196}, {68, 160, 196}, {68, 160, 196}},
    {{137, 12, 200}, {206, 53, 39}, {213, 32, 240}, {206, 53, 39}, {213, 32, 240}, {137, 12, 200}, {213, 32, 240}, {213, 32, 240},
     {194, 211, 209}, {213, 32, 240}, {137, 12, 200}, {206, 53, 39}, {206, 53, 39}, {206, 53, 39}, {206, 53, 39}, {206, 53, 39}},
};

/* A GPU context of the test's own in place of the shared one (for tests whose many pipelines would take the shared
 * context past KILN_VK_MAX_PIPELINES); returns the shared one for own_gpu_end, which checks the validation layer's
 * count of the own context, frees it and puts the shared one back. */
static kiln_context *own_gpu_begin(fixture *fx)
{
    kiln_context *shared = fx->gpu;
    fx->gpu = kt_context(2, KILN_BACKEND_VULKAN);
    assert_non_null(fx->gpu);
    return shared;
}

static void own_gpu_end(fixture *fx, kiln_context *shared)
{
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
    kiln_context_free(fx->gpu);
    fx->gpu = shared;
}

/* The six tie blocks, then each again with its texels in reversed order (the same sorted colours): 48x4 RGBA8. */
static void tie_image(kiln_image *img)
{
    assert_int_equal(kiln_image_alloc(NULL, img, 4 * 12, 4, KILN_PIXEL_U8), KILN_OK);
    img->channels = 4;
    for (uint32_t b = 0; b < 12; b++)
        for (uint32_t t = 0; t < 16; t++) {
            uint8_t *px = (uint8_t *)img->pixels + ((size_t)(t / 4) * 48 + b * 4 + t % 4) * 4;
            const uint8_t *c = k_tie_blocks[b % 6][b < 6 ? t : 15 - t];
            px[0] = c[0], px[1] = c[1], px[2] = c[2], px[3] = 255;
        }
}

static void bc1_cf3_tie_order_fast_bits(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kiln_image img[6];
    const char *name[6];
    int n = 0;
    /* the tie blocks, each also with its texels in reversed order (the same sorted colours) */
    tie_image(&img[n]);
    name[n++] = "tie order 48x4";
    const int ntie = n;
    n = add_real_crops(fx, img, name, n);
    kt_rng rng;
    kt_rng_seed(&rng, 29);
    adversarial_image(&rng, 32, 24, &img[n]);
    name[n++] = "adversarial 32x24";
    random_image(&rng, 20, 16, 1, &img[n]);
    name[n++] = "near-flat 20x16";
    static const kiln_format fmts[] = {KILN_FORMAT_BC1_RGB_UNORM, KILN_FORMAT_BC1_RGBA_UNORM, KILN_FORMAT_BC3_UNORM};
    /* 24481 = the high default without bit 25 (split, bits 0, 5, 7-12, 14); 176118689 = it with bits 16-22, 25 and 27,
     * without bit 10 (the max default since 2026-11-27; bit 25, PRELIST, helper bc1m: a classify pass lists the blocks
     * the GPU encodes, the search and the refine pass run over the list; here at high too); 33578913 = 24481 + bit 25
     * (the high default, here at max too: the list with one refine invocation per candidate); 142564128 = one pass (no
     * split, no list), fm products with `* one`. (The defaults' pipelines are the ones the defaults below use.) */
    /* Helper bc1n (2026-11-27): 184515577 = 176118689 + bits 3, 4, 6, 13, 23 (the max default since), 33578937 = 33578913
     * + bits 3, 4 (the high default since), 150961016 = 142564128 + bits 3, 4, 6, 13, 23 (one pass: finish_block's
     * channel_step and scoring with them). */
    static const uint32_t opts[] = {24481,          24481 + 65536,   24481 + 131072,  24481 + 262144,
                                    24481 + 524288, 24481 + 1048576, 24481 + 2097152, 24481 + 4194304,
                                    184515577,      33578937,        150961016};
    for (size_t oi = 0; oi < sizeof opts / sizeof opts[0]; oi++) {
        /* lavapipe time: the default, and the combinations, whose bits 16-22 on top of 24481 include every single
         * bit's code (each bit alone: KILN_TEST_BC1_FULL=1) */
        const int full = getenv("KILN_TEST_BC1_FULL") && getenv("KILN_TEST_BC1_FULL")[0] == '1';
        if (!full && oi >= 1 && oi < 8) continue;
        /* light run: the max default (split) and the one-pass variant; the high default runs in bc1_bc3_high_max */
        if (!full && kt_gpu_light() && (oi == 0 || oi == 9)) continue;
        char o[16];
        snprintf(o, sizeof o, "%u", opts[oi]);
        setenv("KILN_GPU_CF_DESIGN", "3", 1);
        setenv("KILN_GPU_CF_OPT", o, 1);
        for (int i = 0; i < n; i++)
            for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++)
                for (int q = KILN_QUALITY_HIGH; q <= KILN_QUALITY_MAX; q++) {
                    /* lavapipe time: the tie blocks in BC1 at both qualities for every variant; the single bits
                     * (oi 1..8) also on the first crop in BC1 at max; the default and the combinations on all */
                    if (i < ntie && k != 0) continue;
                    if (oi >= 1 && oi < 8 && i >= ntie && (i != ntie || k != 0 || q != KILN_QUALITY_MAX)) continue;
                    if (i >= ntie && q == KILN_QUALITY_HIGH && oi != 0 && oi != 8) continue;
                    kiln_encode_params ep;
                    kiln_encode_params_init(&ep, fmts[k], (kiln_quality)q);
                    ep.perceptual = i >= ntie && (k & 1);
                    if (k == 2 && q == KILN_QUALITY_MAX) ep.alpha_cutout = 1, ep.alpha_threshold = 128;
                    kiln_status st = compare(fx, &img[i], name[i], &ep, 0);
                    if (st != KILN_OK) fail_msg("%s design 3 opt %s: %s", name[i], o, kiln_last_error(fx->gpu));
                    if (i == 0 && k == 0) { /* the tie blocks: every one the GPU's own */
                        double own = gpu_own_fraction(fx, &img[i], &ep);
                        if (!(own >= 1.0)) fail_msg("tie blocks opt %s: only %.3f from the GPU", o, own);
                    }
                }
        /* a 16-bit source (float texels; bit 22 stays off there, bit 20 applies) */
        if (oi != 0 && oi != 5 && oi < 8) continue;
        kiln_image wide;
        assert_int_equal(kiln_image_alloc(NULL, &wide, img[n - 3].width, img[n - 3].height, KILN_PIXEL_U16), KILN_OK);
        wide.channels = 4;
        for (size_t t = 0; t < (size_t)wide.width * wide.height * 4; t++)
            ((uint16_t *)wide.pixels)[t] = (uint16_t)(((const uint8_t *)img[n - 3].pixels)[t] * 257u + (t * 7919u) % 200u);
        kiln_encode_params ep;
        kiln_encode_params_init(&ep, KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_MAX);
        kiln_status st = compare(fx, &wide, "16-bit", &ep, 0);
        if (st != KILN_OK) fail_msg("16-bit design 3 opt %s: %s", o, kiln_last_error(fx->gpu));
        kiln_image_free(&wide);
    }
    kiln_encode_params ep;
    kiln_encode_params_init(&ep, KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_MAX);
    size_t size = kiln_format_image_size(ep.format, img[0].width, img[0].height);
    uint8_t *d = malloc(size);
    assert_non_null(d);
    /* bit 15; removed bits 1, 24 (helper bc1k); bit 29; removed bit 30 (helper bc1m); 2^32 */
    static const char *const bad[] = {"57249", "24483", "16801697", "536870913", "1073741824", "4294967296"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("KILN_GPU_CF_OPT", bad[i], 1);
        assert_int_equal(kiln__gpu_encode(fx->gpu, &img[0], &ep, 0, d, size), KILN_ERR_INVALID_ARGUMENT);
    }
    free(d);
    unsetenv("KILN_GPU_CF_OPT");
    unsetenv("KILN_GPU_CF_DESIGN");
    /* the defaults (no variables; high 24481 + bits 3, 4, 25, max 184515577 = 8347553 + bits 3, 4, 6, 13, 23, 25, 27 - bit 10
     * for BC1, BC1a and BC3):
     * the tie blocks, and the crops, adversarial (flat blocks: not listed) and near-flat images at max */
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++)
            for (int q = KILN_QUALITY_HIGH; q <= KILN_QUALITY_MAX; q++) {
                if ((i < ntie && k != 0) || (i >= ntie && q == KILN_QUALITY_HIGH)) continue;
                kiln_encode_params_init(&ep, fmts[k], (kiln_quality)q);
                ep.perceptual = i >= ntie && (k & 1);
                assert_int_equal(compare(fx, &img[i], name[i], &ep, 0), KILN_OK);
            }
    for (int i = 0; i < n; i++) kiln_image_free(&img[i]);
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

/* 16-bit and float sources go through the host-side preparation. */
static void wide_sources_identical(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    const kiln_image *s = &fx->img[0];
    kiln_image i16, f32;
    assert_int_equal(kiln_image_alloc(NULL, &i16, s->width, s->height, KILN_PIXEL_U16), KILN_OK);
    assert_int_equal(kiln_image_alloc(NULL, &f32, s->width, s->height, KILN_PIXEL_F32), KILN_OK);
    i16.channels = f32.channels = 4;
    kt_rng rng;
    kt_rng_seed(&rng, 3);
    size_t n = (size_t)s->width * s->height * 4;
    for (size_t i = 0; i < n; i++) {
        uint8_t v = ((const uint8_t *)s->pixels)[i];
        ((uint16_t *)i16.pixels)[i] = (uint16_t)(v * 257u + (kt_rng_u32(&rng) % 200));
        ((float *)f32.pixels)[i] = (float)v / 200.0f - 0.2f; /* beyond [0, 1] both ways */
    }
    static const kiln_format fmts[] = {KILN_FORMAT_BC4_UNORM, KILN_FORMAT_BC5_SNORM, KILN_FORMAT_BC1_RGBA_UNORM,
                                       KILN_FORMAT_BC3_UNORM};
    for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++)
        for (int which = 0; which < 4; which++) {
            if (k < 2 && which >= 2) continue; /* colour: fast and max (cluster fit) */
            kiln_encode_params ep;
            kiln_encode_params_init(&ep, fmts[k], k < 2 ? KILN_QUALITY_HIGH : which >= 2 ? KILN_QUALITY_MAX : KILN_QUALITY_FAST);
            kiln_status st = compare(fx, which & 1 ? &f32 : &i16, which & 1 ? "float source" : "16-bit source", &ep, 0);
            if (st != KILN_OK) fail_msg("%s", kiln_last_error(fx->gpu));
        }
    kiln_image_free(&i16);
    kiln_image_free(&f32);
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

/* Several batches per image, and every subgroup size the device can require. */
static void batches_and_subgroup_sizes(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    const kiln_image *img = &fx->img[3 < fx->nimg ? 3 : 0];
    static const kiln_format fmts[] = {KILN_FORMAT_BC5_SNORM, KILN_FORMAT_BC1_RGBA_UNORM, KILN_FORMAT_BC3_UNORM,
                                       KILN_FORMAT_BC1_RGB_UNORM, KILN_FORMAT_BC3_UNORM};
    static const kiln_quality qs[] = {KILN_QUALITY_NORMAL, KILN_QUALITY_FAST, KILN_QUALITY_FAST, KILN_QUALITY_HIGH,
                                      KILN_QUALITY_MAX};
    for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++) {
        kiln_encode_params ep;
        kiln_encode_params_init(&ep, fmts[k], qs[k]);
        char env[32];
        snprintf(env, sizeof env, "%u", img->width * 4 * 4 * 2 * 3); /* ~3 block rows per batch */
        setenv("KILN_GPU_BATCH_BYTES", env, 1);
        kiln_status st = compare(fx, img, "batched", &ep, 0);
        unsetenv("KILN_GPU_BATCH_BYTES");
        if (st != KILN_OK) fail_msg("batched: %s", kiln_last_error(fx->gpu));
        /* a single-size device compiles the default's code again for a required size: there the first format only */
        uint32_t sizes = k == 0 ? kiln__gpu_subgroup_sizes(fx->gpu) : kt_subgroup_sizes_multi(fx->gpu);
        for (uint32_t sg = 1; sg <= 128; sg <<= 1) {
            if (!(sizes & sg)) continue;
            st = compare(fx, img, "subgroup size", &ep, sg);
            if (st != KILN_OK) fail_msg("subgroup %u: %s", sg, kiln_last_error(fx->gpu));
        }
    }
    if (kiln__gpu_subgroup_sizes(fx->gpu) == 0) print_message("note: the device cannot require subgroup sizes\n");
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

/* PSNR (RGB, or the format's channels) of blocks against the source, through the CPU decoder. */
static double psnr_of(fixture *fx, const kiln_image *src, kiln_format f, const uint8_t *blocks)
{
    kiln_texture tex;
    assert_int_equal(kiln_texture_alloc(fx->cpu, &tex, f, src->width, src->height, 1, 1, 1), KILN_OK);
    memcpy(tex.data, blocks, tex.data_size);
    kiln_image dec;
    assert_int_equal(kiln_decode(fx->cpu, &tex, 0, 0, 0, &dec), KILN_OK);
    const kiln_format_info *fi = kiln_format_get_info(f);
    int is_signed = (fi->flags & KILN_FF_SIGNED) != 0;
    int nch = f == KILN_FORMAT_BC4_UNORM || f == KILN_FORMAT_BC4_SNORM ? 1 : f == KILN_FORMAT_BC5_UNORM || f == KILN_FORMAT_BC5_SNORM ? 2 : 3;
    if (f == KILN_FORMAT_BC3_UNORM) nch = 4;
    double se = 0.0;
    size_t n = (size_t)src->width * src->height;
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < nch; c++) {
            double s = ((const uint8_t *)src->pixels)[i * 4 + c], d;
            if (is_signed) d = (((const float *)dec.pixels)[i * 4 + c] * 127.0 + 127.0) * 255.0 / 254.0, s = s; /* back to 0..255 */
            else d = ((const uint8_t *)dec.pixels)[i * 4 + c];
            se += (s - d) * (s - d);
        }
    kiln_image_free(&dec);
    kiln_texture_free(&tex);
    double mse = se / (double)(n * (size_t)nch);
    return mse <= 0.0 ? 99.0 : 10.0 * log10(255.0 * 255.0 / mse);
}

static void seed_strategy_psnr(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    static const kiln_format fmts[] = {KILN_FORMAT_BC1_RGB_UNORM, KILN_FORMAT_BC3_UNORM, KILN_FORMAT_BC4_UNORM,
                                       KILN_FORMAT_BC5_UNORM, KILN_FORMAT_BC1_RGBA_UNORM};
    for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++)
        for (int q = KILN_QUALITY_FAST; q <= KILN_QUALITY_MAX; q += 2) /* fast (thread per block), high (cluster fit) */
            for (int pre = 0; pre < 2; pre++)
                for (int i = 0; i < 3 && i < fx->nimg; i++) {
                    const kiln_image *img = &fx->img[i];
                    kiln_encode_params ep;
                    kiln_encode_params_init(&ep, fmts[k], (kiln_quality)q);
                    size_t size = kiln_format_image_size(ep.format, img->width, img->height);
                    uint8_t *g = malloc(size), *c = malloc(size);
                    assert_non_null(g);
                    assert_non_null(c);
                    assert_int_equal(kiln_encode_image(fx->cpu, img, &ep, c, size), KILN_OK);
                    ep.gpu_strategy = 1;
                    setenv("KILN_GPU_PRELOAD", pre ? "1" : "0", 1);
                    kiln_status st = kiln__gpu_encode(fx->gpu, img, &ep, 0, g, size);
                    unsetenv("KILN_GPU_PRELOAD");
                    if (st != KILN_OK) fail_msg("seed %s %s: %s", kiln_format_get_info(ep.format)->name, qname(ep.quality), kiln_last_error(fx->gpu));
                    double pg = psnr_of(fx, img, ep.format, g), pc = psnr_of(fx, img, ep.format, c);
                    /* floors: the seed designs are simpler searches (no exact single-colour fits, no
                     * six-value BC4 mode, no refinement): within 2 dB of kiln's CPU encoder, or 40 dB
                     * where that is near-lossless (smooth crops: the seeds reach 44-58 dB there). A
                     * broken seed encoder lands far below (< 30 dB on these crops). */
                    double floor = pc - 2.0 < 40.0 ? pc - 2.0 : 40.0;
                    if (getenv("KILN_TEST_VERBOSE")) print_message("seed %s %s preload %d %s: GPU %.3f CPU %.3f\n", kiln_format_get_info(ep.format)->name, qname(ep.quality), pre, fx->name[i], pg, pc);
                    if (!(pg >= floor))
                        fail_msg("seed %s %s preload %d on %s: PSNR %.3f dB, CPU %.3f dB (floor %.3f)", kiln_format_get_info(ep.format)->name,
                                 qname(ep.quality), pre, fx->name[i], pg, pc, floor);
                    free(g);
                    free(c);
                }
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

/* Issue #4 (helper gpudither): params->dither on the GPU gives the CPU's bytes. The CPU dithers only
 * the final indices of the endpoints its search chose (bc1_enc.c select_indices_dither, bc4_enc.c
 * redither; at fast its BC1 batch sends every block to the per-block encoder), so the GPU runs its
 * search and then enc_bc1_dither.comp / enc_bc4_dither.comp. Checked for BC1, BC1a, BC3 (colour
 * dithered, alpha not, as on the CPU), BC4 and BC5 UNORM / SNORM at every quality, with perceptual
 * weights and alpha cut-out for the colour formats, on the fixture's crops of real images and odd
 * sizes, a 128x96 crop of a smooth gradient image, 16-bit and
 * float sources, several batches, on the pipelined entry (which hands dithering to the synchronous
 * path) and the synchronous one; and dithering must change the bytes (else the test proves nothing). */
static void dither_identical(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kiln_context *shared_gpu = own_gpu_begin(fx); /* its ~20 pipelines (dither passes, ALL_PER_BLOCK) */
    kiln_image grad, src;
    int have_grad = 0;
    if (kiln_image_load(fx->cpu, kt_testdata("ldr/desktopbase_softwaves_crop_1000x600.png"), &src) == KILN_OK) {
        crop(&src, 400, 200, 128, 96, &grad);
        kiln_image_free(&src);
        have_grad = 1;
    } else {
        print_message("note: cannot load the gradient image: %s\n", kiln_last_error(fx->cpu));
    }
    static const kiln_format fmts[] = {KILN_FORMAT_BC1_RGB_UNORM, KILN_FORMAT_BC1_RGBA_UNORM, KILN_FORMAT_BC3_UNORM,
                                       KILN_FORMAT_BC4_UNORM,     KILN_FORMAT_BC4_SNORM,      KILN_FORMAT_BC5_UNORM,
                                       KILN_FORMAT_BC5_SNORM};
    for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++) {
        const int colour = k < 3;
        size_t changed = 0;
        for (int q = KILN_QUALITY_FAST; q <= KILN_QUALITY_MAX; q++)
            for (int i = -1; i < fx->nimg; i++) {
                if (i < 0 && !have_grad) continue;
                if (kt_gpu_light() && i > 0 && i != 3) continue; /* light run: the gradient, a crop, 31x57 */
                const kiln_image *img = i < 0 ? &grad : &fx->img[i];
                const char *name = i < 0 ? "softwaves 128x96" : fx->name[i];
                /* lavapipe time: the large random / textured crops not at max */
                if (q == KILN_QUALITY_MAX && i >= 0 && (strstr(name, "qube") || strstr(name, "stone") || strstr(name, "random 13x7")))
                    continue;
                for (int variant = 0; variant < (colour ? 3 : 1); variant++) {
                    if (variant > 0 && (i < 0 || strstr(name, "stone"))) continue;
                    kiln_encode_params ep;
                    kiln_encode_params_init(&ep, fmts[k], (kiln_quality)q);
                    ep.dither = 1;
                    if (variant == 1) ep.perceptual = 1;
                    if (variant == 2) ep.alpha_cutout = 1, ep.alpha_threshold = 200;
                    if (variant == 1 || (i == 0 && q == KILN_QUALITY_NORMAL)) setenv("KILN_GPU_SYNC", "1", 1);
                    kiln_status st = compare(fx, img, name, &ep, 0);
                    unsetenv("KILN_GPU_SYNC");
                    if (st != KILN_OK) fail_msg("%s %s %s dither: %s", kiln_format_get_info(fmts[k])->name, qname(ep.quality), name,
                                                kiln_last_error(fx->gpu));
                    if (variant == 0 && q == KILN_QUALITY_FAST) { /* dithering must change some blocks */
                        size_t size = kiln_format_image_size(ep.format, img->width, img->height);
                        uint8_t *a = malloc(size), *b = malloc(size);
                        assert_non_null(a);
                        assert_non_null(b);
                        assert_int_equal(kt_encode_cpu_cached(fx->cpu, img, &ep, a, size), KILN_OK);
                        ep.dither = 0;
                        assert_int_equal(kt_encode_cpu_cached(fx->cpu, img, &ep, b, size), KILN_OK);
                        size_t d = 0;
                        for (size_t o = 0; o < size; o += 8) d += memcmp(a + o, b + o, 8) != 0;
                        changed += d;
                        free(a);
                        free(b);
                    }
                }
            }
        print_message("dither: %s fast: dithering changed %zu 8-byte halves of the test images\n", kiln_format_get_info(fmts[k])->name, changed);
        if (changed == 0) fail_msg("%s: dithering changed no block", kiln_format_get_info(fmts[k])->name);
    }
    /* at fast and normal no block goes back to the CPU encoder: the dithered bytes are the GPU's own */
    for (size_t k = 0; have_grad && k < 3; k++)
        for (int q = KILN_QUALITY_FAST; q <= KILN_QUALITY_NORMAL; q++) {
            kiln_encode_params ep;
            kiln_encode_params_init(&ep, fmts[k], (kiln_quality)q);
            ep.dither = 1;
            double own = gpu_own_fraction(fx, &grad, &ep);
            if (own < 1.0) fail_msg("%s %s dither: only %.4f of the blocks are the GPU's own", kiln_format_get_info(fmts[k])->name, qname(ep.quality), own);
        }
    /* 16-bit and float sources (the host-prepared texels), and several batches of block rows */
    const kiln_image *s = &fx->img[0];
    kiln_image i16, f32;
    assert_int_equal(kiln_image_alloc(NULL, &i16, s->width, s->height, KILN_PIXEL_U16), KILN_OK);
    assert_int_equal(kiln_image_alloc(NULL, &f32, s->width, s->height, KILN_PIXEL_F32), KILN_OK);
    i16.channels = f32.channels = 4;
    kt_rng rng;
    kt_rng_seed(&rng, 11);
    for (size_t n = 0; n < (size_t)s->width * s->height * 4; n++) {
        uint8_t v = ((const uint8_t *)s->pixels)[n];
        ((uint16_t *)i16.pixels)[n] = (uint16_t)(v * 257u + (kt_rng_u32(&rng) % 200));
        ((float *)f32.pixels)[n] = (float)v / 200.0f - 0.2f;
    }
    for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++)
        for (int which = 0; which < 2; which++) {
            kiln_encode_params ep;
            kiln_encode_params_init(&ep, fmts[k], which ? KILN_QUALITY_HIGH : KILN_QUALITY_FAST);
            ep.dither = 1;
            setenv("KILN_GPU_BATCH_BYTES", "4096", 1);
            kiln_status st = compare(fx, which ? &f32 : &i16, which ? "float source" : "16-bit source", &ep, 0);
            unsetenv("KILN_GPU_BATCH_BYTES");
            if (st != KILN_OK) fail_msg("%s", kiln_last_error(fx->gpu));
        }
    kiln_image_free(&i16);
    kiln_image_free(&f32);
    if (have_grad) kiln_image_free(&grad);
    own_gpu_end(fx, shared_gpu);
}

static void bad_arguments(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kiln_encode_params ep;
    kiln_encode_params_init(&ep, KILN_FORMAT_BC4_UNORM, KILN_QUALITY_FAST);
    uint8_t small[8];
    assert_int_equal(kiln__gpu_encode(fx->gpu, &fx->img[0], &ep, 0, small, sizeof small), KILN_ERR_INVALID_ARGUMENT);
    ep.gpu_strategy = 7;
    size_t size = kiln_format_image_size(ep.format, fx->img[0].width, fx->img[0].height);
    uint8_t *d = malloc(size);
    assert_non_null(d);
    assert_int_equal(kiln__gpu_encode(fx->gpu, &fx->img[0], &ep, 0, d, size), KILN_ERR_INVALID_ARGUMENT);
    ep.gpu_strategy = 0;
    assert_int_equal(kiln__gpu_encode(fx->gpu, &fx->img[0], &ep, 3, d, size), KILN_ERR_UNSUPPORTED); /* no such subgroup size */
    ep.dither = 1; /* dithering is on the GPU (dither_identical); the seed strategy ignores it */
    assert_int_equal(kiln__gpu_encode(fx->gpu, &fx->img[0], &ep, 0, d, size), KILN_OK);
    ep.dither = 0;
    free(d);
    /* through the public API: the VULKAN backend encodes on the GPU */
    kiln_texture tex;
    assert_int_equal(kiln_encode(fx->gpu, &fx->img[0], &ep, &tex), KILN_OK);
    assert_true(kiln_last_gpu_ms(fx->gpu) >= 0.0);
    kiln_texture_free(&tex);
}

static void validation_layer_ran(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    assert_int_equal(kt_gpu_validation_messages(fx->gpu), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bc4_bc5_identical),
        cmocka_unit_test(bc4_max_adversarial_identical),
        cmocka_unit_test(bc4_max_pool_options_identical),
        cmocka_unit_test(bc1_bc3_fast_normal_identical),
        cmocka_unit_test(bc1_testdata_gpu_finishes),
        cmocka_unit_test(bc1_bc3_high_max_identical),
        cmocka_unit_test(bc1_cf_designs_identical),
        cmocka_unit_test(bc1_cf3_variants_identical),
        cmocka_unit_test(bc1_cf3_tie_order_fast_bits),
        cmocka_unit_test(wide_sources_identical),
        cmocka_unit_test(batches_and_subgroup_sizes),
        cmocka_unit_test(seed_strategy_psnr),
        cmocka_unit_test(dither_identical),
        cmocka_unit_test(bad_arguments),
        cmocka_unit_test(validation_layer_ran),
    };
    if (getenv("KILN_TEST_FILTER")) cmocka_set_test_filter(getenv("KILN_TEST_FILTER"));
    return cmocka_run_group_tests(tests, setup, teardown);
}

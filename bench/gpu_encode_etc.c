/* gpu_encode_etc.c - bench of the GPU ETC / EAC encoders (src/gpu/gpu_encode_etc.c): kiln's exact designs at
 * every quality (EAC R11 / RG11, ETC1, ETC2 RGB / RGBA at fast) and betsy's seed designs (EAC, ETC1; shared-memory
 * preload and direct reads; ETC2 RGB / RGBA colour at --quality, default normal, at --seed-size), next to kiln's CPU
 * encoder.
 *
 *   gpu_encode_etc [--size N] [--seed-size N] [--cpu-size N] [--runs R] [--threads T] [image.png]
 *
 * The image (default: ../shared/testdata/ldr/stk_generic_rock_a_512.png, else shared/testdata/...,
 * else a synthetic pattern) is tiled to N x N (default 4096) for kiln's design, to --seed-size (default
 * 1024) for the seed design (a brute force: 256 x 256 x 128 operations per block) and cropped to
 * --cpu-size (default 512) for the CPU encoder (its exact search runs at ~0.1 Mpix/s per thread).
 * Kernel time comes from Vulkan timestamps around the dispatch (kiln_last_gpu_ms): minimum and median of R
 * runs after a warm-up; "wall" is the whole kiln_encode_image call (upload, kernel, download), median.
 * kiln's EAC design runs once (its default: the spacing bound at high / max). ETC2 RGB / RGBA fast:
 * the kernel time is the GPU's ETC1 / planar pass; "wall" includes the CPU re-encode of the blocks the
 * shader flags for T / H. ETC2 RGB / RGBA normal..max and RGB A1 (every quality): the kernel time sums the
 * ETC1-modes + planar submission and the T / H pass (gpu_etc2_th.c), plus the EAC alpha pass for RGBA;
 * --th-host runs T / H on the host instead (KILN_GPU_ETC2_TH=host: "wall" then holds it). RGB A1 encodes
 * --alpha-image (default ../shared/testdata/ldr/city_fern_512_rgba.png: real cut-outs) tiled likewise.
 * --only / --quality / --no-seed / --no-cpu restrict the table (format names as printed).
 * "== CPU" encodes the CPU-size crop on both and compares the bytes (kiln's designs must say "yes"; the
 * EAC seed is an exact optimum with its own tie-breaking, the ETC1 seed a different, narrower search). */
#include "kiln/kiln.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_bench_util.h"

/* Tiles (mirrored) src into a new n x n (w x h) RGBA8 image. */
static int tile(kiln_context *ctx, const kiln_image *src, uint32_t w, uint32_t h, kiln_image *out)
{
    if (kiln_image_alloc(ctx, out, w, h, KILN_PIXEL_U8) != KILN_OK) return -1;
    out->channels = 4;
    uint8_t *d = out->pixels;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            uint32_t sx = x % (2 * src->width), sy = y % (2 * src->height);
            if (sx >= src->width) sx = 2 * src->width - 1 - sx;
            if (sy >= src->height) sy = 2 * src->height - 1 - sy;
            memcpy(d + ((size_t)y * w + x) * 4, (const uint8_t *)src->pixels + ((size_t)sy * src->width + sx) * 4, 4);
        }
    return 0;
}

/* One GPU configuration: runs + 1 encodes; prints a row. */
static void run_gpu(kiln_context *g, kiln_context *c, const kiln_image *img, const kiln_image *crop, kiln_format f,
                    const char *fname, int strategy, int preload, kiln_quality q, int runs, int eac)
{
    static const char *qn[] = {"fast", "normal", "high", "max"};
    kiln_encode_params ep;
    kiln_encode_params_init(&ep, f, q);
    ep.gpu_strategy = strategy;
    setenv("KILN_GPU_ETC_PRELOAD", preload ? "1" : "0", 1);
    size_t size = kiln_format_image_size(f, img->width, img->height);
    uint8_t *buf = malloc(size);
    double *k = calloc((size_t)runs, sizeof *k), *wall = calloc((size_t)runs, sizeof *wall);
    if (!buf || !k || !wall) exit(1);
    for (int r = -1; r < runs; r++) {
        double t0 = now_ms();
        if (kiln_encode_image(g, img, &ep, buf, size) != KILN_OK) {
            printf("| %s | %s | %s | GPU encode failed: %s |\n", fname, strategy ? "seed" : "kiln", qn[q], kiln_last_error(g));
            free(buf), free(k), free(wall);
            return;
        }
        if (r >= 0) {
            wall[r] = now_ms() - t0;
            k[r] = kiln_last_gpu_ms(g);
        }
    }
    qsort(k, (size_t)runs, sizeof *k, cmp_double);
    qsort(wall, (size_t)runs, sizeof *wall, cmp_double);
    /* the CPU comparison on the crop */
    char same[64] = "-";
    size_t cs = kiln_format_image_size(f, crop->width, crop->height);
    uint8_t *gb = malloc(cs), *cb = malloc(cs);
    if (gb && cb && kiln_encode_image(g, crop, &ep, gb, cs) == KILN_OK) {
        kiln_encode_params cp = ep;
        cp.gpu_strategy = 0;
        if (kiln_encode_image(c, crop, &cp, cb, cs) == KILN_OK) {
            if (!strategy) snprintf(same, sizeof same, "%s", memcmp(gb, cb, cs) ? "NO" : "yes");
            else snprintf(same, sizeof same, "%s", !memcmp(gb, cb, cs) ? "yes" : eac ? "ties differ" : "differs (own search)");
        }
    }
    free(gb), free(cb);
    double px = (double)img->width * img->height;
    printf("| %s | %s%s | %s | %ux%u | %.3f | %.3f | %.1f | %.1f | %s |\n", fname, strategy ? "seed" : "kiln",
           strategy ? (preload ? " preload" : " direct") : "", qn[q], img->width, img->height, k[0], k[runs / 2],
           px / (k[0] * 1e-3) / 1e6, wall[runs / 2], same);
    free(buf), free(k), free(wall);
}

int main(int argc, char **argv)
{
    uint32_t size = 4096, seed_size = 1024, cpu_size = 512, threads = 0;
    int runs = 5, only_q = -1, no_seed = 0, no_cpu = 0;
    const char *path = NULL, *only = NULL, *apath = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--size") && i + 1 < argc) size = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed-size") && i + 1 < argc) seed_size = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cpu-size") && i + 1 < argc) cpu_size = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--quality") && i + 1 < argc) only_q = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-seed")) no_seed = 1;
        else if (!strcmp(argv[i], "--no-cpu")) no_cpu = 1;
        else if (!strcmp(argv[i], "--alpha-image") && i + 1 < argc) apath = argv[++i];
        else if (!strcmp(argv[i], "--th-host")) setenv("KILN_GPU_ETC2_TH", "host", 1);
        else if (argv[i][0] != '-') path = argv[i];
        else {
            fprintf(stderr, "usage: %s [--size N] [--seed-size N] [--cpu-size N] [--runs R] [--threads T] [--only FORMAT] [--quality 0-3] [--no-seed] [--no-cpu] [--alpha-image P] [--th-host] [image.png]\n", argv[0]);
            return 2;
        }
    }
    if (runs < 1) runs = 1;
    kiln_context_params gp, cp;
    kiln_context_params_init(&gp);
    gp.backend = KILN_BACKEND_VULKAN;
    gp.threads = threads;
    kiln_context_params_init(&cp);
    cp.backend = KILN_BACKEND_CPU;
    cp.threads = threads;
    kiln_context *g = NULL, *c = NULL;
    if (kiln_context_create(&gp, &g) != KILN_OK || kiln_context_create(&cp, &c) != KILN_OK) {
        fprintf(stderr, "cannot create contexts\n");
        return 1;
    }
    kiln_image src;
    const char *tries[] = {path, "../shared/testdata/ldr/stk_generic_rock_a_512.png", "shared/testdata/ldr/stk_generic_rock_a_512.png",
                           "/work/shared/testdata/ldr/stk_generic_rock_a_512.png"};
    int loaded = 0;
    for (size_t i = 0; i < 4 && !loaded; i++)
        if (tries[i] && kiln_image_load(c, tries[i], &src) == KILN_OK && src.type == KILN_PIXEL_U8) {
            loaded = 1;
            path = tries[i];
        }
    if (!loaded) { /* synthetic: gradients and noise */
        kiln_image_alloc(c, &src, 256, 256, KILN_PIXEL_U8);
        src.channels = 4;
        uint32_t s = 1;
        for (size_t i = 0; i < 256 * 256; i++) {
            s = s * 1664525u + 1013904223u;
            uint8_t *p = (uint8_t *)src.pixels + i * 4;
            p[0] = (uint8_t)((i % 256) + (s >> 28));
            p[1] = (uint8_t)((i / 256) ^ (s >> 30));
            p[2] = (uint8_t)(s >> 24);
            p[3] = 255;
        }
        path = "synthetic";
    }
    kiln_image big, mid, crop, asrc, abig, acrop;
    if (tile(c, &src, size, size, &big) || tile(c, &src, seed_size, seed_size, &mid) || tile(c, &src, cpu_size, cpu_size, &crop)) return 1;
    /* RGB A1: an image with alpha cut-outs (else the colour image) */
    const char *atries[] = {apath, "../shared/testdata/ldr/city_fern_512_rgba.png", "shared/testdata/ldr/city_fern_512_rgba.png",
                            "/work/shared/testdata/ldr/city_fern_512_rgba.png"};
    int aloaded = 0;
    for (size_t i = 0; i < 4 && !aloaded; i++)
        if (atries[i] && kiln_image_load(c, atries[i], &asrc) == KILN_OK && asrc.type == KILN_PIXEL_U8) {
            aloaded = 1;
            apath = atries[i];
        }
    if (!aloaded) apath = path;
    if (tile(c, aloaded ? &asrc : &src, size, size, &abig) || tile(c, aloaded ? &asrc : &src, cpu_size, cpu_size, &acrop)) return 1;
    kiln_gpu_info info;
    memset(&info, 0, sizeof info);
    uint32_t ndev = 0;
    kiln_gpu_list(g, &info, 1, &ndev);
    printf("device: %s; image %s tiled (etc2-rgb-a1: %s); %d runs after a warm-up; T/H %s\n\n", ndev ? info.name : "?", path,
           apath, runs, getenv("KILN_GPU_ETC2_TH") ? "on the host" : "on the GPU");
    printf("| format | design | quality | size | kernel min ms | kernel median ms | Mpix/s (min) | wall median ms | == CPU (crop %u) |\n",
           cpu_size);
    printf("|---|---|---|---|---:|---:|---:|---:|---|\n");
    static const struct { kiln_format f; const char *name; } fmts[] = {
        {KILN_FORMAT_EAC_R11_UNORM, "eac-r11"}, {KILN_FORMAT_EAC_RG11_UNORM, "eac-rg11"},
        {KILN_FORMAT_EAC_R11_SNORM, "eac-r11-snorm"}, {KILN_FORMAT_EAC_RG11_SNORM, "eac-rg11-snorm"},
        {KILN_FORMAT_ETC1_UNORM, "etc1"}, {KILN_FORMAT_ETC2_RGB8_UNORM, "etc2-rgb"}, {KILN_FORMAT_ETC2_RGBA8_UNORM, "etc2-rgba"},
        {KILN_FORMAT_ETC2_RGB8A1_UNORM, "etc2-rgb-a1"}};
    for (size_t i = 0; i < 8; i++) {
        if (only && strcmp(only, fmts[i].name)) continue;
        const int eac = i < 4, a1 = i == 7;
        for (int q = KILN_QUALITY_FAST; q <= KILN_QUALITY_MAX; q++)
            if (only_q < 0 || only_q == q)
                run_gpu(g, c, a1 ? &abig : &big, a1 ? &acrop : &crop, fmts[i].f, fmts[i].name, 0, 0, (kiln_quality)q, runs, eac);
        if (eac && i < 3 && !no_seed) {
            run_gpu(g, c, &mid, &crop, fmts[i].f, fmts[i].name, 1, 1, KILN_QUALITY_MAX, runs < 3 ? runs : 3, 1);
            run_gpu(g, c, &mid, &crop, fmts[i].f, fmts[i].name, 1, 0, KILN_QUALITY_MAX, runs < 3 ? runs : 3, 1);
        }
        if ((i == 5 || i == 6) && !no_seed) /* the ETC2 seed (betsy, gpu_encode_etc2_seed.c): --quality or normal */
            for (int pl = 1; pl >= 0; pl--)
                run_gpu(g, c, &mid, &crop, fmts[i].f, fmts[i].name, 1, pl,
                        only_q >= 0 ? (kiln_quality)only_q : KILN_QUALITY_NORMAL, runs < 3 ? runs : 3, 0);
        if (i == 4 && !no_seed) /* the ETC1 seed: radius 0 / 1 / 2 / 2 */
            for (int q = KILN_QUALITY_FAST; q <= KILN_QUALITY_MAX; q++)
                if (only_q < 0 || only_q == q)
                    for (int pl = 1; pl >= 0; pl--)
                        run_gpu(g, c, &mid, &crop, fmts[i].f, fmts[i].name, 1, pl, (kiln_quality)q, runs < 3 ? runs : 3, 0);
    }
    /* the CPU encoder on the crop */
    printf("\n| format | CPU quality | size | threads | wall ms | Mpix/s |\n|---|---|---|---:|---:|---:|\n");
    static const size_t cpu_fmts[4] = {0, 1, 4, 5};
    for (size_t ci = 0; ci < 4 && !no_cpu; ci++)
        for (int q = KILN_QUALITY_FAST; q <= KILN_QUALITY_MAX; q += 3) {
            const size_t i = cpu_fmts[ci];
            if (only && strcmp(only, fmts[i].name)) continue;
            kiln_encode_params ep;
            kiln_encode_params_init(&ep, fmts[i].f, (kiln_quality)q);
            size_t cs = kiln_format_image_size(fmts[i].f, crop.width, crop.height);
            uint8_t *cb = malloc(cs);
            double t0 = now_ms();
            kiln_encode_image(c, &crop, &ep, cb, cs);
            double ms = now_ms() - t0;
            printf("| %s | %s | %ux%u | %u | %.1f | %.2f |\n", fmts[i].name, q ? "max" : "fast", crop.width, crop.height,
                   kiln_context_threads(c), ms, (double)crop.width * crop.height / (ms * 1e3));
            free(cb);
        }
    kiln_image_free(&big);
    kiln_image_free(&abig);
    kiln_image_free(&acrop);
    if (aloaded) kiln_image_free(&asrc);
    kiln_image_free(&mid);
    kiln_image_free(&crop);
    kiln_image_free(&src);
    kiln_context_free(g);
    kiln_context_free(c);
    return 0;
}

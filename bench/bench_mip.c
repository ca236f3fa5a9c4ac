/* bench_mip.c - CPU mipmap throughput: input megapixels per second for a full chain
 * (kiln_mip_generate, level 0 copy included), 1 thread and all threads.
 *
 * usage: bench_mip [--runs N] [--threads N] [--sizes WxH,WxH,...] [--all-cases] [--only SUBSTRING]
 * Cases: U8 sRGB RGBA opaque (box, kaiser), U8 sRGB with alpha (box, alpha-weighted), F32 linear (box);
 * --all-cases adds the rest of the filter/type matrix. Reports the best of N runs (default 5) by wall
 * time, with the process CPU time of that run (on a shared machine the 1-thread CPU time is the steadier
 * figure). */
#include "kiln/kiln.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct bcase {
    const char *name;
    kiln_pixel_type type;
    int alpha;
    kiln_mip_filter filter;
    int extra; /* only with --all-cases */
} bcase;

static const bcase k_cases[] = {
    {"u8 srgb, box", KILN_PIXEL_U8, 0, KILN_MIP_FILTER_BOX, 0},
    {"u8 srgb+alpha, box (weighted)", KILN_PIXEL_U8, 1, KILN_MIP_FILTER_BOX, 0},
    {"u8 srgb, kaiser", KILN_PIXEL_U8, 0, KILN_MIP_FILTER_KAISER, 0},
    {"f32 linear, box", KILN_PIXEL_F32, 0, KILN_MIP_FILTER_BOX, 0},
    {"u8 srgb, lanczos3", KILN_PIXEL_U8, 0, KILN_MIP_FILTER_LANCZOS3, 1},
    {"u8 srgb, mitchell", KILN_PIXEL_U8, 0, KILN_MIP_FILTER_MITCHELL, 1},
    {"u8 srgb+alpha, kaiser (weighted)", KILN_PIXEL_U8, 1, KILN_MIP_FILTER_KAISER, 1},
    {"f32 linear, kaiser", KILN_PIXEL_F32, 0, KILN_MIP_FILTER_KAISER, 1},
};

static int make_image(kiln_context *ctx, kiln_image *img, uint32_t w, uint32_t h, kiln_pixel_type t, int alpha)
{
    if (kiln_image_alloc(ctx, img, w, h, t) != KILN_OK) return -1;
    img->channels = 4;
    img->srgb = t == KILN_PIXEL_U8;
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            size_t i = ((size_t)y * w + x) * 4;
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            uint32_t r = (uint32_t)((s * 0x2545F4914F6CDD1Dull) >> 32);
            uint8_t v[4] = {(uint8_t)(x + (r & 15)), (uint8_t)(y + (r >> 8 & 15)), (uint8_t)((x ^ y) + (r >> 16 & 31)),
                            alpha ? (uint8_t)(r >> 24) : 255};
            for (int c = 0; c < 4; c++) {
                if (t == KILN_PIXEL_U8) ((uint8_t *)img->pixels)[i + c] = v[c];
                else ((float *)img->pixels)[i + c] = v[c] / 255.0f;
            }
        }
    return 0;
}

int main(int argc, char **argv)
{
    int runs = 5, all = 0;
    const char *only = NULL;
    uint32_t max_threads = 0;
    char sizes_buf[256] = "1920x1080,4096x4096,2047x2047";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) max_threads = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) snprintf(sizes_buf, sizeof sizes_buf, "%s", argv[++i]);
        else if (!strcmp(argv[i], "--all-cases")) all = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else {
            fprintf(stderr, "usage: bench_mip [--runs N] [--threads N] [--sizes WxH,...] [--all-cases] [--only SUBSTRING]\n");
            return 2;
        }
    }
    if (runs < 1) runs = 1;
    kiln_context *ctxs[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        kiln_context_params p;
        kiln_context_params_init(&p);
        p.backend = KILN_BACKEND_CPU;
        p.threads = k == 0 ? 1 : max_threads;
        if (kiln_context_create(&p, &ctxs[k]) != KILN_OK) {
            fprintf(stderr, "bench_mip: cannot create a context\n");
            return 1;
        }
    }
    printf("| size | case | threads | best wall ms | Mpix/s (wall) | CPU ms (same run) |\n|---|---|---|---|---|---|\n");
    char *save = NULL;
    for (char *tok = strtok_r(sizes_buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        unsigned w, h;
        if (sscanf(tok, "%ux%u", &w, &h) != 2 || !w || !h) {
            fprintf(stderr, "bench_mip: bad size '%s'\n", tok);
            return 2;
        }
        for (size_t ci = 0; ci < sizeof k_cases / sizeof k_cases[0]; ci++) {
            const bcase *bc = &k_cases[ci];
            if (only ? !strstr(bc->name, only) : (bc->extra && !all)) continue;
            kiln_image img;
            if (make_image(ctxs[0], &img, w, h, bc->type, bc->alpha)) {
                fprintf(stderr, "bench_mip: cannot allocate %ux%u\n", w, h);
                return 1;
            }
            kiln_mip_params mp;
            kiln_mip_params_init(&mp);
            mp.filter = bc->filter;
            for (int k = 0; k < 2; k++) {
                double best = 1e30, best_cpu = 0;
                for (int r = 0; r < runs + 1; r++) { /* first run warms up */
                    kiln_image lv[KILN_MAX_LEVELS];
                    uint32_t n = KILN_MAX_LEVELS;
                    double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
                    kiln_status st = kiln_mip_generate(ctxs[k], &img, &mp, lv, &n);
                    double t = clock_s(CLOCK_MONOTONIC) - t0, cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
                    if (st != KILN_OK) {
                        fprintf(stderr, "bench_mip: %s\n", kiln_last_error(ctxs[k]));
                        return 1;
                    }
                    for (uint32_t l = 0; l < n; l++) kiln_image_free(&lv[l]);
                    if (r > 0 && t < best) {
                        best = t;
                        best_cpu = cpu;
                    }
                }
                printf("| %ux%u | %s | %u | %.1f | %.1f | %.1f |\n", w, h, bc->name, kiln_context_threads(ctxs[k]),
                       best * 1e3, (double)w * h / best / 1e6, best_cpu * 1e3);
                fflush(stdout);
            }
            kiln_image_free(&img);
        }
    }
    kiln_context_free(ctxs[0]);
    kiln_context_free(ctxs[1]);
    return 0;
}

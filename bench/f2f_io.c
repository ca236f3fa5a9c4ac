/* f2f_io.c - helpers for the file-to-file measurements (issue 4, helper f2f2):
 *   f2f_io make-bmp OUT.bmp SIZE SRC [24|32]   SRC tiled to SIZE x SIZE, written as an uncompressed BMP
 *                                              (bottom-up, BITMAPINFOHEADER; 32-bit: BI_RGB with alpha)
 *   f2f_io make-pngs DIR COUNT SIZE SRC        COUNT crops of SIZE^2 of SRC (tiled; gpu_encode --write-batch's
 *                                              offsets) as DIR/img_NNNN.png, on all cores
 *   f2f_io load FILE RUNS [THREADS]            kiln_image_load RUNS times on a context of THREADS threads
 *                                              (0 = all): min / median ms, FNV-1a 64 of the pixels
 * KILN_BMP_FAST=0 in the environment: stb_image for BMPs (the reader before kiln's own);
 * KILN_PNG_LIBPNG=1: libpng for PNGs (opt-in; stb_image by default). */
#include "kiln/kiln.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static void put16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v) { put16(p, v & 0xffff), put16(p + 2, v >> 16); }

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int make_bmp(const char *out, uint32_t size, const char *src, uint32_t bpp)
{
    kiln_context *ctx = NULL;
    if (kiln_context_create(NULL, &ctx) != KILN_OK) return 1;
    kiln_image img;
    if (kiln_image_load(ctx, src, &img) != KILN_OK || img.type != KILN_PIXEL_U8) {
        fprintf(stderr, "f2f_io: cannot load %s as 8-bit: %s\n", src, kiln_last_error(ctx));
        kiln_context_free(ctx);
        return 1;
    }
    const uint32_t bypp = bpp / 8, stride = (size * bypp + 3) & ~3u, hdr = 54;
    const uint64_t bytes = (uint64_t)stride * size;
    uint8_t *f = calloc(1, hdr + bytes);
    if (!f) return 1;
    f[0] = 'B', f[1] = 'M';
    put32(f + 2, (uint32_t)(hdr + bytes));
    put32(f + 10, hdr);
    put32(f + 14, 40);
    put32(f + 18, size);
    put32(f + 22, size); /* positive: bottom-up */
    put16(f + 26, 1);
    put16(f + 28, bpp);
    put32(f + 34, (uint32_t)bytes);
    const uint8_t *px = img.pixels;
    for (uint32_t y = 0; y < size; y++) {
        uint8_t *row = f + hdr + (uint64_t)(size - 1 - y) * stride;
        for (uint32_t x = 0; x < size; x++) {
            const uint8_t *s = px + ((size_t)(y % img.height) * img.width + x % img.width) * 4;
            uint8_t *o = row + (size_t)x * bypp;
            o[0] = s[2], o[1] = s[1], o[2] = s[0];
            if (bypp == 4) o[3] = s[3];
        }
    }
    FILE *fp = fopen(out, "wb");
    int bad = !fp || fwrite(f, 1, hdr + bytes, fp) != hdr + bytes;
    if (fp && fclose(fp)) bad = 1;
    free(f);
    kiln_image_free(&img);
    kiln_context_free(ctx);
    if (bad) fprintf(stderr, "f2f_io: cannot write %s\n", out);
    return bad;
}

typedef struct png_job {
    const kiln_image *src;
    const char *dir;
    uint32_t count, size;
    atomic_uint next;
    atomic_int bad;
} png_job;

static void *png_worker(void *user)
{
    png_job *j = user;
    kiln_context_params cp;
    kiln_context_params_init(&cp);
    cp.threads = 1;
    cp.backend = KILN_BACKEND_CPU;
    kiln_context *ctx = NULL;
    if (kiln_context_create(&cp, &ctx) != KILN_OK) {
        atomic_store(&j->bad, 1);
        return NULL;
    }
    for (;;) {
        uint32_t k = atomic_fetch_add(&j->next, 1u);
        if (k >= j->count) break;
        kiln_image out;
        if (kiln_image_alloc(ctx, &out, j->size, j->size, KILN_PIXEL_U8) != KILN_OK) {
            atomic_store(&j->bad, 1);
            break;
        }
        out.channels = j->src->channels;
        out.srgb = j->src->srgb;
        const uint32_t x0 = k * 251u * 4u, y0 = k * 137u * 4u;
        for (uint32_t y = 0; y < j->size; y++)
            for (uint32_t x = 0; x < j->size; x++)
                memcpy((uint8_t *)out.pixels + ((size_t)y * j->size + x) * 4,
                       (const uint8_t *)j->src->pixels +
                           ((size_t)((y0 + y) % j->src->height) * j->src->width + (x0 + x) % j->src->width) * 4,
                       4);
        char path[4096];
        snprintf(path, sizeof path, "%s/img_%04u.png", j->dir, k);
        if (kiln_image_save(ctx, &out, path, 0) != KILN_OK) {
            fprintf(stderr, "f2f_io: %s\n", kiln_last_error(ctx));
            atomic_store(&j->bad, 1);
        }
        kiln_image_free(&out);
    }
    kiln_context_free(ctx);
    return NULL;
}

static int make_pngs(const char *dir, uint32_t count, uint32_t size, const char *src)
{
    kiln_context *ctx = NULL;
    if (kiln_context_create(NULL, &ctx) != KILN_OK) return 1;
    kiln_image img;
    if (kiln_image_load(ctx, src, &img) != KILN_OK || img.type != KILN_PIXEL_U8) {
        fprintf(stderr, "f2f_io: cannot load %s as 8-bit: %s\n", src, kiln_last_error(ctx));
        return 1;
    }
    png_job j = {&img, dir, count, size, 0, 0};
    atomic_init(&j.next, 0u);
    atomic_init(&j.bad, 0);
    pthread_t th[64];
    uint32_t nt = kiln_context_threads(ctx), started = 0;
    if (nt > 64) nt = 64;
    for (uint32_t t = 1; t < nt; t++)
        if (pthread_create(&th[started], NULL, png_worker, &j) == 0) started++;
    png_worker(&j);
    for (uint32_t t = 0; t < started; t++) pthread_join(th[t], NULL);
    kiln_image_free(&img);
    kiln_context_free(ctx);
    return atomic_load(&j.bad);
}

static int load(const char *file, int runs, uint32_t threads)
{
    kiln_context_params cp;
    kiln_context_params_init(&cp);
    cp.threads = threads;
    cp.backend = KILN_BACKEND_CPU;
    kiln_context *ctx = NULL;
    if (kiln_context_create(&cp, &ctx) != KILN_OK) return 1;
    double t[64], c[64];
    if (runs > 64) runs = 64;
    if (runs < 1) runs = 1;
    uint64_t h = 0;
    kiln_image img;
    for (int r = 0; r < runs; r++) {
        const double t0 = now_ms(), c0 = cpu_ms();
        if (kiln_image_load(ctx, file, &img) != KILN_OK) {
            fprintf(stderr, "f2f_io: %s\n", kiln_last_error(ctx));
            return 1;
        }
        t[r] = now_ms() - t0;
        c[r] = cpu_ms() - c0;
        h = 0xcbf29ce484222325ull;
        const uint8_t *p = img.pixels;
        const size_t n = (size_t)img.width * img.height * 4 * (size_t)img.type;
        for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
        if (r + 1 < runs) kiln_image_free(&img);
    }
    qsort(t, (size_t)runs, sizeof t[0], cmp_d);
    qsort(c, (size_t)runs, sizeof c[0], cmp_d);
    const char *env = getenv("KILN_BMP_FAST"), *penv = getenv("KILN_PNG_LIBPNG");
    printf("load %s: %ux%u ch %u srgb %d, %u threads, reader %s: min %.2f ms, median %.2f ms, CPU time min %.2f ms (%d runs), fnv %016llx\n",
           file, img.width, img.height, img.channels, img.srgb, kiln_context_threads(ctx),
           (env && !strcmp(env, "0")) ? "BMP stb_image" : (penv && !strcmp(penv, "1")) ? "PNG libpng" : "default", t[0], t[runs / 2], c[0], runs, (unsigned long long)h);
    kiln_image_free(&img);
    kiln_context_free(ctx);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 5 && !strcmp(argv[1], "make-bmp"))
        return make_bmp(argv[2], (uint32_t)atoi(argv[3]), argv[4], argc > 5 ? (uint32_t)atoi(argv[5]) : 24);
    if (argc >= 6 && !strcmp(argv[1], "make-pngs"))
        return make_pngs(argv[2], (uint32_t)atoi(argv[3]), (uint32_t)atoi(argv[4]), argv[5]);
    if (argc >= 4 && !strcmp(argv[1], "load")) return load(argv[2], atoi(argv[3]), argc > 4 ? (uint32_t)atoi(argv[4]) : 0);
    fprintf(stderr, "usage: f2f_io make-bmp OUT.bmp SIZE SRC [24|32] | f2f_io make-pngs DIR COUNT SIZE SRC | f2f_io load FILE RUNS [THREADS]\n");
    return 2;
}

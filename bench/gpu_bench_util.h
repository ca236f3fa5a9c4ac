/* gpu_bench_util.h - helpers the GPU encode benches share (timing, statistics, comma lists, crops,
 * PSNR through kiln's CPU decoder, file writes, quality names). Header-only (static functions): every
 * bench source is its own executable (CMakeLists.txt globs the bench .c files). Moved out of bench/gpu_encode.c
 * (helper batchrows); used by gpu_encode.c and gpu_batch_rows.c. */
#ifndef KILN_BENCH_GPU_BENCH_UTIL_H
#define KILN_BENCH_GPU_BENCH_UTIL_H

#include "kiln/kiln.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static inline double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static inline double minimum(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        if (v[i] < m) m = v[i];
    return m;
}

/* Comma list item i of list into buf; 0 when past the end. */
static inline int list_item(const char *list, int i, char *buf, size_t cap)
{
    const char *p = list;
    for (int k = 0; k < i && p; k++) {
        p = strchr(p, ',');
        if (p) p++;
    }
    if (!p || !*p) return 0;
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len + 1 > cap) len = cap - 1;
    memcpy(buf, p, len);
    buf[len] = 0;
    return 1;
}

static inline uint32_t hash32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

static inline int crop(const kiln_image *src, uint32_t x0, uint32_t y0, uint32_t w, uint32_t h, kiln_image *out)
{
    if (kiln_image_alloc(NULL, out, w, h, src->type) != KILN_OK) return -1;
    out->channels = src->channels;
    out->srgb = src->srgb;
    out->hdr = src->hdr;
    size_t px = 4 * (size_t)src->type;
    for (uint32_t y = 0; y < h; y++) {
        uint32_t sy = (y0 + y) % src->height;
        for (uint32_t x = 0; x < w; x++) {
            uint32_t sx = (x0 + x) % src->width;
            memcpy((uint8_t *)out->pixels + ((size_t)y * w + x) * px, (const uint8_t *)src->pixels + ((size_t)sy * src->width + sx) * px, px);
        }
    }
    return 0;
}

/* Source value of channel c at texel i in [0, 1]. */
static inline double src_value(const kiln_image *img, size_t i, int c)
{
    switch (img->type) {
    case KILN_PIXEL_U8: return ((const uint8_t *)img->pixels)[i * 4 + c] / 255.0;
    case KILN_PIXEL_U16: return ((const uint16_t *)img->pixels)[i * 4 + c] / 65535.0;
    default: {
        double v = ((const float *)img->pixels)[i * 4 + c];
        return v != v ? 0.0 : v < 0 ? 0.0 : v > 1 ? 1.0 : v;
    }
    }
}

/* Squared error of blocks (f, src's size) against src over the format's channels (R; R, G; R, G, B;
 * R, G, B, A for formats with alpha; colour only for 1-bit alpha; SNORM decoded values mapped back to
 * [0, 1]), through kiln's CPU decoder: adds to *se and *n (values counted); -1 when decoding fails. */
static inline int sse_blocks(kiln_context *cpu, const kiln_image *src, kiln_format f, const uint8_t *blocks, double *se,
                             double *count)
{
    const kiln_format_info *fi = kiln_format_get_info(f);
    kiln_texture tex;
    if (!fi || kiln_texture_alloc(cpu, &tex, f, src->width, src->height, 1, 1, 1) != KILN_OK) return -1;
    memcpy(tex.data, blocks, tex.data_size);
    kiln_image dec;
    kiln_status st = kiln_decode(cpu, &tex, 0, 0, 0, &dec);
    kiln_texture_free(&tex);
    if (st != KILN_OK) return -1;
    int nch = (int)fi->channels;
    if (nch < 1 || nch > 4) nch = 3;
    if (nch == 4 && (fi->flags & KILN_FF_ALPHA1)) nch = 3; /* 1-bit alpha: colour only */
    int is_signed = (fi->flags & KILN_FF_SIGNED) != 0;
    double e = 0.0;
    size_t n = (size_t)src->width * src->height;
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < nch; c++) {
            double s = src_value(src, i, c), d;
            if (dec.type == KILN_PIXEL_U8) d = ((const uint8_t *)dec.pixels)[i * 4 + c] / 255.0;
            else if (dec.type == KILN_PIXEL_U16) d = ((const uint16_t *)dec.pixels)[i * 4 + c] / 65535.0;
            else d = ((const float *)dec.pixels)[i * 4 + c];
            if (is_signed && dec.type == KILN_PIXEL_F32) d = (d + 1.0) * 0.5;
            e += (s - d) * (s - d);
        }
    kiln_image_free(&dec);
    *se += e;
    *count += (double)(n * (size_t)nch);
    return 0;
}

static inline double psnr_of(double se, double count)
{
    if (count <= 0.0) return NAN;
    double mse = se / count;
    return mse <= 0.0 ? INFINITY : 10.0 * log10(1.0 / mse);
}

/* PSNR of one image's blocks (see sse_blocks). */
static inline double psnr_blocks(kiln_context *cpu, const kiln_image *src, kiln_format f, const uint8_t *blocks)
{
    double se = 0.0, n = 0.0;
    return sse_blocks(cpu, src, f, blocks, &se, &n) ? NAN : psnr_of(se, n);
}

static inline int write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(data, 1, size, f);
    int rc = fclose(f);
    return (w == size && rc == 0) ? 0 : -1;
}

static inline kiln_quality parse_quality(const char *s)
{
    if (!strcmp(s, "fast")) return KILN_QUALITY_FAST;
    if (!strcmp(s, "normal")) return KILN_QUALITY_NORMAL;
    if (!strcmp(s, "high")) return KILN_QUALITY_HIGH;
    if (!strcmp(s, "max")) return KILN_QUALITY_MAX;
    return (kiln_quality)-1;
}

/* A Vulkan context (device `device`, `threads` CPU threads) and a CPU one with the same threads; prints why on
 * failure (name: the bench) and returns 0, else 1. */
static inline int open_contexts(const char *name, int device, int threads, kiln_context **gpu, kiln_context **cpu)
{
    kiln_context_params p;
    kiln_context_params_init(&p);
    p.backend = KILN_BACKEND_VULKAN;
    p.device_index = device;
    p.threads = (uint32_t)threads;
    *gpu = NULL;
    *cpu = NULL;
    if (kiln_context_create(&p, gpu) != KILN_OK) {
        fprintf(stderr, "%s: no context\n", name);
        return 0;
    }
    p.backend = KILN_BACKEND_CPU;
    p.device_index = -1;
    if (kiln_context_create(&p, cpu) != KILN_OK) {
        fprintf(stderr, "%s: no CPU context\n", name);
        kiln_context_free(*gpu);
        *gpu = NULL;
        return 0;
    }
    return 1;
}

#endif

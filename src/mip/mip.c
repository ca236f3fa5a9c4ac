/* mip.c - CPU mipmap chains: the engine (filter pass, post-passes, quantisation) and the public API.
 * The arithmetic is specified in mip.h; the sRGB and unorm conversions come from image/color.h. */
#include "mip/mip.h"
#include "image/color.h"
#include "gpu/gpu.h"
#include "gpu/gpu_mip16_api.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define MIP_INLINE static inline __attribute__((always_inline))
#else
#define MIP_INLINE static inline
#endif

/* ---------------------------------------------------------------- configuration */

typedef enum sink_kind { SINK_U8 = 1, SINK_U16 = 2, SINK_F16 = 3, SINK_F32 = 4 } sink_kind;

/* Where one level's quantised texels go: w * h texels of `comps` components, rows tightly packed. */
typedef struct sink {
    uint8_t *data;
    sink_kind kind;
    uint32_t comps; /* 1 (R), 2 (RG) or 4 (RGBA) */
    int srgb;       /* colour components are stored sRGB-encoded */
    const kiln__mip_srgb8 *enc; /* set by run_chain */
} sink;

typedef struct cfg {
    kiln_mip_filter filter;
    kiln_mip_edge edge;
    int srgb;           /* input colour is sRGB-encoded: decoded on read */
    int weighted;       /* alpha-weighted colour (rule 7) */
    int normal;         /* renormalise xyz per output level */
    int normal_unorm;   /* U8/U16 normal map: n = 2v - 1 on read, 0.5n + 0.5 on write */
    int recon_z;        /* normal map with fewer than 3 channels: z = sqrt(1 - x^2 - y^2) */
    float coverage_ref; /* 0 = off */
} cfg;

/* Base texels -> linear fp32 RGBA (rule 3, without the normal-map mapping). */
typedef struct decoder {
    const kiln_image *img;
    int srgb;
    float lut8c[256], lut8a[256];
    float *lut16c; /* 65536 entries for U16 sRGB, else NULL */
} decoder;

static kiln_status decoder_init(kiln_context *ctx, decoder *d, const kiln_image *img, int srgb)
{
    memset(d, 0, sizeof *d);
    d->img = img;
    d->srgb = srgb;
    for (int v = 0; v < 256; v++) {
        d->lut8a[v] = (float)v / 255.0f;
        d->lut8c[v] = srgb ? kiln__srgb8_to_linear(v) : d->lut8a[v];
    }
    if (img->type == KILN_PIXEL_U16 && srgb) {
        d->lut16c = kiln__malloc(ctx, 65536 * sizeof(float));
        if (!d->lut16c) return KILN_ERR_OUT_OF_MEMORY;
        for (uint32_t v = 0; v < 65536; v++) d->lut16c[v] = kiln__srgb16_to_linear((uint16_t)v);
    }
    return KILN_OK;
}

static void decoder_free(decoder *d) { free(d->lut16c); }

static void decode_row(const decoder *d, uint32_t y, float *out)
{
    const kiln_image *img = d->img;
    size_t w = img->width;
    switch (img->type) {
    case KILN_PIXEL_U8: {
        const uint8_t *p = (const uint8_t *)img->pixels + (size_t)y * w * 4;
        for (size_t i = 0; i < w; i++, p += 4, out += 4) {
            out[0] = d->lut8c[p[0]];
            out[1] = d->lut8c[p[1]];
            out[2] = d->lut8c[p[2]];
            out[3] = d->lut8a[p[3]];
        }
        break;
    }
    case KILN_PIXEL_U16: {
        const uint16_t *p = (const uint16_t *)img->pixels + (size_t)y * w * 4;
        for (size_t i = 0; i < w; i++, p += 4, out += 4) {
            for (int c = 0; c < 3; c++) out[c] = d->lut16c ? d->lut16c[p[c]] : (float)p[c] / 65535.0f;
            out[3] = (float)p[3] / 65535.0f;
        }
        break;
    }
    default: {
        const float *p = (const float *)img->pixels + (size_t)y * w * 4;
        if (d->srgb) {
            for (size_t i = 0; i < w; i++, p += 4, out += 4) {
                for (int c = 0; c < 3; c++) out[c] = kiln__srgb_to_linear(p[c]);
                out[3] = p[3];
            }
        } else {
            memcpy(out, p, w * 4 * sizeof(float));
        }
        break;
    }
    }
}

/* The base as the CPU chain reads it (rule 3, decode_row): linear RGBA32F. The GPU paths filter 16-bit
 * images from this (helper mip16: gpu_mip16.c, gpu_mip_encode.c), so their chain is the CPU's. */
typedef struct decode_job {
    const decoder *d;
    float *out;
    size_t row_floats;
} decode_job;

static void decode_rows(void *user, size_t begin, size_t end, uint32_t worker)
{
    const decode_job *j = user;
    (void)worker;
    for (size_t y = begin; y < end; y++) decode_row(j->d, (uint32_t)y, j->out + y * j->row_floats);
}

kiln_status kiln__mip_decode_f32(kiln_context *ctx, const kiln_image *img, int srgb, kiln_image *out)
{
    memset(out, 0, sizeof *out);
    KILN_TRY(kiln_image_alloc(ctx, out, img->width, img->height, KILN_PIXEL_F32));
    out->channels = img->channels;
    out->hdr = img->hdr;
    decoder d;
    kiln_status st = decoder_init(ctx, &d, img, srgb);
    if (st == KILN_OK) {
        decode_job j = {.d = &d, .out = out->pixels, .row_floats = (size_t)img->width * 4};
        size_t rows = 65536 / ((size_t)img->width * 4);
        st = kiln__parallel_for(ctx, img->height, rows ? rows : 1, decode_rows, &j);
        decoder_free(&d);
    }
    if (st != KILN_OK) kiln_image_free(out);
    return st;
}

/* ---------------------------------------------------------------- sinks (rule 9) */

void kiln__mip_srgb8_init(kiln__mip_srgb8 *t)
{
    uint32_t lo, hi;
    float one = 1.0f;
    memcpy(&lo, &kiln__srgb8_thresholds[0], sizeof lo);
    memcpy(&hi, &one, sizeof hi);
    t->base = lo >> KILN_MIP_SRGB8_SHIFT;
    t->count = (hi >> KILN_MIP_SRGB8_SHIFT) - t->base;
    memcpy(t->thr, kiln__srgb8_thresholds, sizeof kiln__srgb8_thresholds);
    t->thr[255] = INFINITY;
    t->max_steps = 0;
    for (uint32_t i = 0; i < t->count && i < sizeof t->start; i++) {
        uint32_t b = (t->base + i) << KILN_MIP_SRGB8_SHIFT, e = b + (1u << KILN_MIP_SRGB8_SHIFT) - 1;
        float x, xe;
        memcpy(&x, &b, sizeof x);
        memcpy(&xe, &e, sizeof xe);
        t->start[i] = kiln__linear_to_srgb8(x);
        uint32_t steps = (uint32_t)kiln__linear_to_srgb8(xe) - t->start[i];
        if (steps > t->max_steps) t->max_steps = steps;
    }
}

MIP_INLINE uint16_t q16(float v, int srgb) { return srgb ? kiln__linear_to_srgb16(v) : kiln__float_to_unorm16(v); }

MIP_INLINE void sink_put(const sink *s, size_t idx, const float v[4])
{
    uint32_t n = s->comps;
    switch (s->kind) {
    case SINK_U8: {
        uint8_t *d = s->data + idx * n;
        if (n == 4 && s->srgb) {
            d[0] = kiln__mip_srgb8_encode(s->enc, v[0]);
            d[1] = kiln__mip_srgb8_encode(s->enc, v[1]);
            d[2] = kiln__mip_srgb8_encode(s->enc, v[2]);
            d[3] = kiln__mip_unorm8(v[3]);
        } else if (s->srgb) {
            for (uint32_t c = 0; c < n; c++) d[c] = kiln__mip_srgb8_encode(s->enc, v[c]);
        } else {
            for (uint32_t c = 0; c < n; c++) d[c] = kiln__mip_unorm8(v[c]);
        }
        break;
    }
    case SINK_U16: {
        uint16_t *d = (uint16_t *)s->data + idx * n;
        for (uint32_t c = 0; c < n; c++) d[c] = c == 3 ? kiln__float_to_unorm16(v[3]) : q16(v[c], s->srgb);
        break;
    }
    case SINK_F16: {
        uint16_t *d = (uint16_t *)s->data + idx * n;
        for (uint32_t c = 0; c < n; c++) d[c] = kiln__float_to_half(v[c]);
        break;
    }
    case SINK_F32: {
        float *d = (float *)s->data + idx * n;
        for (uint32_t c = 0; c < n; c++) d[c] = (c != 3 && s->srgb) ? kiln__linear_to_srgb(v[c]) : v[c];
        break;
    }
    }
}

/* The stored alpha as a fraction (what an alpha test sees). */
static double sink_alpha_value(sink_kind kind, float x)
{
    switch (kind) {
    case SINK_U8: return kiln__float_to_unorm8(x) / 255.0;
    case SINK_U16: return kiln__float_to_unorm16(x) / 65535.0;
    case SINK_F16: return kiln__half_to_float(kiln__float_to_half(x));
    case SINK_F32: return x;
    }
    return x;
}

static uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bitsf(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Smallest fp32 x in (0, 1] whose stored value is > ref (ref in (0,1), so 1 always passes). */
float kiln__mip_alpha_pass_threshold(int kind, float ref)
{
    uint32_t lo = 0, hi = fbits(1.0f); /* fails at lo, passes at hi */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (sink_alpha_value((sink_kind)kind, bitsf(mid)) > (double)ref) hi = mid;
        else lo = mid;
    }
    return bitsf(hi);
}

/* Texels of the base whose stored alpha is > ref. */
size_t kiln__mip_base_coverage(const kiln_image *img, float ref)
{
    size_t n = (size_t)img->width * img->height, count = 0;
    if (img->type == KILN_PIXEL_U8) {
        const uint8_t *p = img->pixels;
        for (size_t i = 0; i < n; i++) count += p[i * 4 + 3] / 255.0 > (double)ref;
    } else if (img->type == KILN_PIXEL_U16) {
        const uint16_t *p = img->pixels;
        for (size_t i = 0; i < n; i++) count += p[i * 4 + 3] / 65535.0 > (double)ref;
    } else {
        const float *p = img->pixels;
        for (size_t i = 0; i < n; i++) count += (double)p[i * 4 + 3] > (double)ref;
    }
    return count;
}

int kiln__mip_base_has_alpha(const kiln_image *img)
{
    size_t n = (size_t)img->width * img->height;
    if (img->type == KILN_PIXEL_U8) {
        /* AND the alpha bytes block by block (no early exit inside a block, so it vectorises) */
        const uint8_t *p = img->pixels;
        for (size_t i = 0; i < n;) {
            size_t e = i + 4096 < n ? i + 4096 : n;
            unsigned all = 255;
            for (; i < e; i++) all &= p[i * 4 + 3];
            if (all != 255) return 1;
        }
    } else if (img->type == KILN_PIXEL_U16) {
        const uint16_t *p = img->pixels;
        for (size_t i = 0; i < n; i++)
            if (p[i * 4 + 3] != 65535) return 1;
    } else {
        const float *p = img->pixels;
        for (size_t i = 0; i < n; i++)
            if (!(p[i * 4 + 3] == 1.0f)) return 1;
    }
    return 0;
}

/* ---------------------------------------------------------------- the filter pass */

/* Floats of padding between scratch rows (and before the accumulator): power-of-two row sizes would
 * otherwise put the accumulator and the source rows at the same address modulo 4 KiB (page-aligned
 * allocations), which stalls loads behind stores ("4K aliasing"). 40 floats = 160 bytes. */
#define MIP_PAD 40

typedef struct level_job {
    const cfg *cf;
    const decoder *dec; /* level 0 source when non-NULL */
    const float *src;   /* otherwise the fp32 chain level (4 floats per texel) */
    uint32_t sw, sh, dw, dh;
    const kiln__mip_axis *ax, *ay;
    uint32_t nc;        /* channels filtered: 4, or 8 when alpha-weighted */
    float eps;          /* alpha-weighted: divide when A > eps */
    float *dst;         /* dw * dh * 4 */
    /* per worker: a cache of nslots prepared source rows (tags: level << 32 | row), then the accumulator */
    float *scratch;
    size_t scratch_stride; /* floats per worker */
    uint64_t *tags;        /* tag_stride per worker */
    uint32_t nslots, tag_stride;
    uint64_t gen;
} level_job;

/* Source row iy as nc floats per texel (rule 3 + the alpha-weighted expansion). Rows that need work
 * (decoding, normal mapping, expansion) are cached per worker, so the ~12 rows a wide kernel shares
 * between neighbouring output rows are prepared once per chunk; the pointer is valid until the next
 * call. */
static const float *get_row(const level_job *j, uint32_t iy, float *slots, uint64_t *tags)
{
    size_t w = j->sw;
    if (!j->dec && j->nc == 4) return j->src + (size_t)iy * w * 4;
    uint32_t slot = iy % j->nslots;
    float *buf = slots + (size_t)slot * (w * j->nc + MIP_PAD);
    uint64_t tag = j->gen << 32 | iy;
    if (tags[slot] == tag) return buf;
    const float *row;
    float *dbuf = j->nc == 4 ? buf : slots + (size_t)j->nslots * (w * j->nc + MIP_PAD); /* in place for 4 */
    if (j->dec) {
        decode_row(j->dec, iy, dbuf);
        const cfg *cf = j->cf;
        if (cf->normal_unorm || cf->recon_z) {
            for (size_t i = 0; i < w; i++) {
                float *t = dbuf + i * 4;
                if (cf->normal_unorm)
                    for (int c = 0; c < 3; c++) t[c] = 2.0f * t[c] - 1.0f;
                if (cf->recon_z) {
                    float zz = 1.0f - t[0] * t[0] - t[1] * t[1];
                    t[2] = zz > 0.0f ? sqrtf(zz) : 0.0f;
                }
            }
        }
        row = dbuf;
    } else {
        row = j->src + (size_t)iy * w * 4;
    }
    if (j->nc == 8) {
        for (size_t i = 0; i < w; i++) {
            const float *s = row + i * 4;
            float *e = buf + i * 8;
            float a = s[3];
            e[0] = a * s[0];
            e[1] = a * s[1];
            e[2] = a * s[2];
            e[3] = a;
            e[4] = s[0];
            e[5] = s[1];
            e[6] = s[2];
            e[7] = 0.0f;
        }
    }
    tags[slot] = tag;
    return buf;
}

MIP_INLINE void hpass(const level_job *j, const float *acc, float *drow, const uint32_t nc)
{
    const kiln__mip_axis *ax = j->ax;
    for (uint32_t x = 0; x < j->dw; x++) {
        uint32_t k0 = ax->first[x], k1 = ax->first[x + 1];
        float o[8];
        const float *t = acc + (size_t)ax->index[k0] * nc;
        float w = ax->weight[k0];
        for (uint32_t c = 0; c < nc; c++) o[c] = w * t[c];
        for (uint32_t k = k0 + 1; k < k1; k++) {
            t = acc + (size_t)ax->index[k] * nc;
            w = ax->weight[k];
            for (uint32_t c = 0; c < nc; c++) o[c] = o[c] + w * t[c];
        }
        float *d = drow + (size_t)x * 4;
        if (nc == 4) {
            d[0] = o[0];
            d[1] = o[1];
            d[2] = o[2];
            d[3] = o[3];
        } else {
            float a = o[3];
            if (a > j->eps) {
                d[0] = o[0] / a;
                d[1] = o[1] / a;
                d[2] = o[2] / a;
            } else {
                d[0] = o[4];
                d[1] = o[5];
                d[2] = o[6];
            }
            d[3] = a;
        }
    }
}

/* acc = w * r and acc = acc + w * r over m floats (m a multiple of 4); written 4 at a time so the
 * compiler emits packed SSE at -O2 (element-wise, so the bits are those of the scalar loop). */
static void vscale(float *restrict acc, const float *restrict r, float w, size_t m)
{
    for (size_t i = 0; i < m; i += 4) {
        acc[i] = w * r[i];
        acc[i + 1] = w * r[i + 1];
        acc[i + 2] = w * r[i + 2];
        acc[i + 3] = w * r[i + 3];
    }
}

static void vmadd(float *restrict acc, const float *restrict r, float w, size_t m)
{
    for (size_t i = 0; i < m; i += 4) {
        acc[i] = acc[i] + w * r[i];
        acc[i + 1] = acc[i + 1] + w * r[i + 1];
        acc[i + 2] = acc[i + 2] + w * r[i + 2];
        acc[i + 3] = acc[i + 3] + w * r[i + 3];
    }
}

static void filter_rows(void *user, size_t begin, size_t end, uint32_t worker)
{
    const level_job *j = user;
    float *slots = j->scratch + (size_t)worker * j->scratch_stride + MIP_PAD / 2; /* off page alignment */
    uint64_t *tags = j->tags + (size_t)worker * j->tag_stride;
    float *acc = slots + (size_t)(j->nslots + 1) * ((size_t)j->sw * 8 + MIP_PAD) + MIP_PAD;
    size_t m = (size_t)j->sw * j->nc;
    const kiln__mip_axis *ay = j->ay;
    for (size_t y = begin; y < end; y++) {
        uint32_t k0 = ay->first[y], k1 = ay->first[y + 1];
        for (uint32_t k = k0; k < k1; k++) {
            const float *r = get_row(j, ay->index[k], slots, tags);
            float w = ay->weight[k];
            if (k == k0) vscale(acc, r, w, m);
            else vmadd(acc, r, w, m);
        }
        float *drow = j->dst + y * (size_t)j->dw * 4;
        if (j->nc == 4) hpass(j, acc, drow, 4);
        else hpass(j, acc, drow, 8);
    }
}

/* ---------------------------------------------------------------- quantisation passes */

typedef struct quant_job {
    const cfg *cf;
    const decoder *dec; /* level 0: convert the base */
    const float *src;   /* levels >= 1: the fp32 chain level */
    uint32_t w, h;
    sink out;
    int coverage;
    float cov_scale;
    float *scratch; /* per worker: w * 4 floats (level 0) */
} quant_job;

static void quant_rows(void *user, size_t begin, size_t end, uint32_t worker)
{
    const quant_job *q = user;
    const cfg *cf = q->cf;
    for (size_t y = begin; y < end; y++) {
        const float *row;
        if (q->dec) {
            float *buf = q->scratch + (size_t)worker * q->w * 4;
            decode_row(q->dec, (uint32_t)y, buf);
            row = buf;
        } else {
            row = q->src + y * (size_t)q->w * 4;
        }
        for (uint32_t x = 0; x < q->w; x++) {
            float v[4] = {row[x * 4], row[x * 4 + 1], row[x * 4 + 2], row[x * 4 + 3]};
            if (!q->dec) { /* post-passes (rule 8), output levels >= 1 only */
                if (cf->normal) {
                    float len = sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
                    if (len > 1e-20f) {
                        v[0] /= len;
                        v[1] /= len;
                        v[2] /= len;
                    } else {
                        v[0] = 0.0f;
                        v[1] = 0.0f;
                        v[2] = 1.0f;
                    }
                    if (cf->normal_unorm)
                        for (int c = 0; c < 3; c++) v[c] = 0.5f * v[c] + 0.5f;
                }
                if (q->coverage) {
                    float a = v[3] > 0.0f ? (v[3] < 1.0f ? v[3] : 1.0f) : 0.0f;
                    a = q->cov_scale * a;
                    v[3] = a < 1.0f ? a : 1.0f;
                }
            }
            sink_put(&q->out, y * (size_t)q->w + x, v);
        }
    }
}

/* ---------------------------------------------------------------- one chain */

typedef struct copy_job {
    uint8_t *dst;
    const uint8_t *src;
    size_t row_bytes;
} copy_job;

static void copy_rows(void *user, size_t begin, size_t end, uint32_t worker)
{
    const copy_job *c = user;
    (void)worker;
    memcpy(c->dst + begin * c->row_bytes, c->src + begin * c->row_bytes, (end - begin) * c->row_bytes);
}

static size_t rows_per_chunk(uint32_t width, uint32_t taps)
{
    size_t work = (size_t)width * (taps ? taps : 1);
    size_t g = 65536 / (work ? work : 1);
    return g ? g : 1;
}

static int sink_is_copy(const sink *s, const kiln_image *base, const cfg *cf)
{
    if (s->comps != 4 || s->srgb != cf->srgb) return 0;
    return (s->kind == SINK_U8 && base->type == KILN_PIXEL_U8) || (s->kind == SINK_U16 && base->type == KILN_PIXEL_U16) ||
           (s->kind == SINK_F32 && base->type == KILN_PIXEL_F32);
}

/* Fills sinks[0 .. levels-1] from base. Progress goes from plo to phi. */
static kiln_status run_chain(kiln_context *ctx, const kiln_image *base, const cfg *cf, uint32_t levels,
                             const sink *sinks, float plo, float phi)
{
    const uint32_t W = base->width, H = base->height;
    const uint32_t threads = kiln_context_threads(ctx) ? kiln_context_threads(ctx) : 1;
    kiln_status st = KILN_OK;
    decoder dec;
    float *chain[2] = {NULL, NULL}, *scratch = NULL;
    uint32_t *cov_scratch = NULL;
    uint64_t *tags = NULL;
    kiln__mip_srgb8 *enc = NULL;
    KILN_TRY(decoder_init(ctx, &dec, base, cf->srgb));
    enc = kiln__malloc(ctx, sizeof *enc);
    if (!enc) {
        decoder_free(&dec);
        return KILN_ERR_OUT_OF_MEMORY;
    }
    kiln__mip_srgb8_init(enc);

    /* progress: level-0 conversion counts a quarter of the base, each filter step its source size */
    double total = 0.25 * (double)W * H, done = 0.0;
    for (uint32_t l = 1; l < levels; l++) total += (double)kiln_level_dim(W, l - 1) * kiln_level_dim(H, l - 1);
#define PROG(x) (float)(plo + (phi - plo) * ((x) / total))

    /* level 0 */
    if (sink_is_copy(&sinks[0], base, cf)) {
        copy_job cj = {.dst = sinks[0].data, .src = base->pixels, .row_bytes = (size_t)W * 4 * (size_t)base->type};
        st = kiln__parallel_for_progress(ctx, H, rows_per_chunk(W, 4), copy_rows, &cj, PROG(0),
                                         PROG(0.25 * (double)W * H));
    } else {
        scratch = kiln__malloc(ctx, (size_t)threads * W * 4 * sizeof(float));
        if (!scratch) {
            st = KILN_ERR_OUT_OF_MEMORY;
            goto done;
        }
        quant_job q = {.cf = cf, .dec = &dec, .w = W, .h = H, .out = sinks[0], .scratch = scratch};
        q.out.enc = enc;
        st = kiln__parallel_for_progress(ctx, H, rows_per_chunk(W, 1), quant_rows, &q, PROG(0), PROG(0.25 * (double)W * H));
        free(scratch);
        scratch = NULL;
    }
    done = 0.25 * (double)W * H;
    if (st != KILN_OK || levels == 1) goto done;

    /* buffers: two fp32 levels (ping-pong), per-worker rows, coverage scratch */
    size_t n1 = (size_t)kiln_level_dim(W, 1) * kiln_level_dim(H, 1);
    size_t n2 = levels > 2 ? (size_t)kiln_level_dim(W, 2) * kiln_level_dim(H, 2) : 1;
    /* per worker: nslots cached rows + a decode row + the accumulator, each up to 8 floats per texel */
    uint32_t nslots = cf->filter == KILN_MIP_FILTER_BOX
                          ? 4u
                          : (uint32_t)ceil(2.0 * kiln__mip_kernel_support(cf->filter) * 3.0) + 3u; /* scale <= 3 */
    size_t stride = ((size_t)W * 8 + MIP_PAD) * (nslots + 2) + 3 * MIP_PAD;
    size_t bytes;
    if (!kiln__mul_size(n1, 4 * sizeof(float), &bytes) || !kiln__mul_size(stride, threads * sizeof(float), &bytes)) {
        st = kiln__fail(ctx, KILN_ERR_TOO_LARGE, "mipmap buffers for %ux%u overflow", W, H);
        goto done;
    }
    chain[0] = kiln__malloc(ctx, n1 * 4 * sizeof(float));
    chain[1] = kiln__malloc(ctx, n2 * 4 * sizeof(float));
    scratch = kiln__malloc(ctx, stride * threads * sizeof(float));
    tags = kiln__malloc(ctx, (size_t)nslots * threads * sizeof *tags);
    if (cf->coverage_ref > 0.0f) cov_scratch = kiln__malloc(ctx, (n1 + 65536) * sizeof(uint32_t));
    if (!chain[0] || !chain[1] || !scratch || !tags || (cf->coverage_ref > 0.0f && !cov_scratch)) {
        st = KILN_ERR_OUT_OF_MEMORY;
        goto done;
    }
    memset(tags, 0xff, (size_t)nslots * threads * sizeof *tags);
    size_t cov0 = cf->coverage_ref > 0.0f ? kiln__mip_base_coverage(base, cf->coverage_ref) : 0;
    const size_t n0 = (size_t)W * H;

    const float *prev = NULL;
    for (uint32_t l = 1; l < levels; l++) {
        uint32_t sw = kiln_level_dim(W, l - 1), sh = kiln_level_dim(H, l - 1);
        uint32_t dw = kiln_level_dim(W, l), dh = kiln_level_dim(H, l);
        float *cur = chain[(l - 1) & 1];
        kiln__mip_axis ax, ay;
        st = kiln__mip_axis_build(ctx, &ax, sw, cf->filter, cf->edge, PROG(done));
        if (st != KILN_OK) goto done;
        st = kiln__mip_axis_build(ctx, &ay, sh, cf->filter, cf->edge, PROG(done));
        if (st != KILN_OK) {
            kiln__mip_axis_free(&ax);
            goto done;
        }
        level_job j = {.cf = cf, .dec = l == 1 ? &dec : NULL, .src = prev, .sw = sw, .sh = sh, .dw = dw, .dh = dh,
                       .ax = &ax, .ay = &ay, .nc = cf->weighted ? 8u : 4u,
                       .eps = cf->filter == KILN_MIP_FILTER_BOX ? 0.0f : 1.0f / 256.0f, .dst = cur,
                       .scratch = scratch, .scratch_stride = stride, .tags = tags, .nslots = ay.max_taps + 1,
                       .tag_stride = nslots, .gen = l};
        if (j.nslots > nslots) j.nslots = nslots; /* cannot happen: max_taps <= 2 * support * 3 + 2 */
        double step = (double)sw * sh;
        st = kiln__parallel_for_progress(ctx, dh, rows_per_chunk(sw, 2 * ay.max_taps), filter_rows, &j, PROG(done),
                                         PROG(done + 0.9 * step));
        kiln__mip_axis_free(&ax);
        kiln__mip_axis_free(&ay);
        if (st != KILN_OK) goto done;

        quant_job q = {.cf = cf, .src = cur, .w = dw, .h = dh, .out = sinks[l], .cov_scale = 1.0f};
        q.out.enc = enc;
        if (cf->coverage_ref > 0.0f) {
            size_t n = (size_t)dw * dh;
            uint64_t target = ((uint64_t)2 * cov0 * n + n0) / ((uint64_t)2 * n0); /* round(cov0 * n / n0) */
            float thr = kiln__mip_alpha_pass_threshold((int)sinks[l].kind, cf->coverage_ref);
            q.coverage = 1;
            q.cov_scale = kiln__mip_coverage_scale(cur + 3, 4, n, (size_t)target, thr, cov_scratch);
        }
        st = kiln__parallel_for_progress(ctx, dh, rows_per_chunk(dw, 4), quant_rows, &q, PROG(done + 0.9 * step),
                                         PROG(done + step));
        if (st != KILN_OK) goto done;
        done += step;
        prev = cur;
    }
#undef PROG
done:
    free(chain[0]);
    free(chain[1]);
    free(scratch);
    free(cov_scratch);
    free(tags);
    free(enc);
    decoder_free(&dec);
    return st;
}

/* ---------------------------------------------------------------- validation */

void kiln_mip_params_init(kiln_mip_params *params)
{
    if (!params) return;
    memset(params, 0, sizeof *params);
    params->filter = KILN_MIP_FILTER_BOX;
    params->edge = KILN_MIP_EDGE_CLAMP;
    params->color = KILN_MIP_COLOR_AUTO;
    params->alpha = KILN_MIP_ALPHA_WEIGHTED;
    params->alpha_coverage_ref = 0.0f;
    params->normal_map = 0;
    params->levels = 0;
}

uint32_t kiln_mip_level_count(uint32_t width, uint32_t height)
{
    if (!width || !height) return 0;
    uint32_t m = width > height ? width : height, n = 1;
    while (m > 1) {
        m >>= 1;
        n++;
    }
    return n;
}

static kiln_status check_image(kiln_context *ctx, const kiln_image *img, const char *what)
{
    if (!img) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "mipmaps: %s is NULL", what);
    if (img->width == 0 || img->height == 0)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "mipmaps: %s size %ux%u is empty", what, img->width, img->height);
    if (img->width > KILN_MAX_DIMENSION || img->height > KILN_MAX_DIMENSION ||
        (uint64_t)img->width * img->height > KILN_MAX_PIXELS)
        return kiln__fail(ctx, KILN_ERR_TOO_LARGE, "mipmaps: %s size %ux%u exceeds kiln's limit (%u per side, %llu pixels)",
                          what, img->width, img->height, KILN_MAX_DIMENSION, (unsigned long long)KILN_MAX_PIXELS);
    if (img->type != KILN_PIXEL_U8 && img->type != KILN_PIXEL_U16 && img->type != KILN_PIXEL_F32)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "mipmaps: %s has a bad pixel type %d", what, (int)img->type);
    if (img->channels < 1 || img->channels > 4)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "mipmaps: %s has %u channels (1 to 4)", what, img->channels);
    if (!img->pixels) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "mipmaps: %s has no pixels", what);
    return KILN_OK;
}

static kiln_status check_params(kiln_context *ctx, const kiln_mip_params *p, uint32_t w, uint32_t h, uint32_t *levels)
{
    if ((unsigned)p->filter > KILN_MIP_FILTER_MITCHELL)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "mipmaps: unknown filter %d", (int)p->filter);
    if ((unsigned)p->edge > KILN_MIP_EDGE_WRAP)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "mipmaps: unknown edge mode %d", (int)p->edge);
    if ((unsigned)p->color > KILN_MIP_COLOR_LINEAR)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "mipmaps: unknown colour space %d", (int)p->color);
    if ((unsigned)p->alpha > KILN_MIP_ALPHA_PREMULTIPLIED)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "mipmaps: unknown alpha mode %d", (int)p->alpha);
    if (!(p->alpha_coverage_ref >= 0.0f && p->alpha_coverage_ref < 1.0f))
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT,
                          "mipmaps: alpha coverage reference %g is outside (0, 1) (0 turns it off)",
                          (double)p->alpha_coverage_ref);
    if (p->normal_map && p->color == KILN_MIP_COLOR_SRGB)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "mipmaps: a normal map is linear data; it cannot be sRGB");
    if ((unsigned)p->strategy > KILN_MIP_STRATEGY_BASELINE)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "mipmaps: unknown GPU strategy %d", (int)p->strategy);
    uint32_t maxl = kiln_mip_level_count(w, h);
    if (p->levels > maxl)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "mipmaps: %u levels requested but a %ux%u image has at most %u",
                          p->levels, w, h, maxl);
    *levels = p->levels ? p->levels : maxl;
    return KILN_OK;
}

/* AUTO colour space: sRGB for U8 images tagged srgb (not normal maps); `force_linear` for formats
 * that cannot be sRGB (R8, RG8). */
static int resolve_srgb(const kiln_mip_params *p, const kiln_image *img, int force_linear)
{
    if (p->normal_map) return 0;
    if (p->color == KILN_MIP_COLOR_SRGB) return 1;
    if (p->color == KILN_MIP_COLOR_LINEAR || force_linear) return 0;
    return img->type == KILN_PIXEL_U8 && img->srgb;
}

static void resolve_cfg(cfg *cf, const kiln_mip_params *p, const kiln_image *img, int srgb)
{
    memset(cf, 0, sizeof *cf);
    cf->filter = p->filter;
    cf->edge = p->edge;
    cf->srgb = srgb;
    cf->normal = p->normal_map != 0;
    cf->normal_unorm = cf->normal && img->type != KILN_PIXEL_F32;
    cf->recon_z = cf->normal && img->channels < 3;
    cf->weighted = !cf->normal && p->alpha == KILN_MIP_ALPHA_WEIGHTED && (img->channels == 2 || img->channels == 4) &&
                   kiln__mip_base_has_alpha(img);
    cf->coverage_ref = p->alpha_coverage_ref;
}

static sink_kind kind_of(kiln_pixel_type t)
{
    return t == KILN_PIXEL_U8 ? SINK_U8 : t == KILN_PIXEL_U16 ? SINK_U16 : SINK_F32;
}

/* ---------------------------------------------------------------- backend dispatch (GPU) */

/* The GPU path (src/gpu/gpu_mip.c) for levels 1.. of `count` images whose sinks are
 * sinks[i * levels + l]. Returns 1 when the GPU handled them (*st is its status; also an error such as
 * backend VULKAN without a device or an unsupported explicit strategy), 0 when the CPU should run
 * the chain (backend CPU, AUTO without a device, or what the GPU path does not cover under strategy
 * AUTO). Level 0 is always written by the CPU (run_chain with one level). */
static int try_gpu(kiln_context *ctx, const kiln_mip_params *p, const kiln_image *images, uint32_t count,
                   uint32_t levels, const sink *sinks, kiln_status *st)
{
    *st = KILN_OK;
    if (levels < 2) return 0;
    kiln_status gs = KILN_OK;
    int want = kiln__gpu_wanted(ctx, &gs);
    if (gs != KILN_OK) {
        *st = gs;
        return 1;
    }
    if (!want) return 0;
    const int auto_strategy = p->strategy == KILN_MIP_STRATEGY_AUTO;
    const char *why = NULL;
    const int u16 = images[0].type == KILN_PIXEL_U16;
    if (sinks[0].comps != 4) why = "R8 and RG8 outputs are made on the CPU";
    else if (u16 && ((p->alpha_coverage_ref > 0.0f && count != 1) || (p->normal_map && (sinks[0].kind != SINK_U16 || count != 1))))
        why = "16-bit alpha coverage of several images and 16-bit normal maps into other outputs are filtered on the CPU";
    else if (u16 && (p->strategy == KILN_MIP_STRATEGY_BASELINE || (p->strategy == KILN_MIP_STRATEGY_BLIT && count != 1)))
        why = "16-bit images: not with the baseline strategy, nor several with the blit strategy";
    else if (u16 && sinks[0].kind == SINK_U16 && count != 1) why = "16-bit outputs of several images are made on the CPU";
    else if (!u16 && sinks[0].kind == SINK_U16) why = "16-bit unorm outputs of non-16-bit images are made on the CPU";
    if (why) {
        if (auto_strategy) {
            if (ctx->params.verbose) fprintf(stderr, "kiln: mipmaps on the CPU: %s\n", why);
            return 0;
        }
        *st = kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "mipmaps: no GPU strategy for this request: %s", why);
        return 1;
    }
    uint8_t *weighted = kiln__malloc(ctx, count);
    uint8_t **dst = kiln__calloc(ctx, (size_t)count * levels, sizeof *dst);
    /* 16-bit images (helper mip16): the GPU filters the float chain of the base decoded by the CPU's own
     * decoder (so decode_srgb = 0: the floats are linear), like a float image */
    /* (helper mip16b) one 16-bit image into 16-bit levels: kiln__gpu_mip16_generate takes the image itself and
     * decodes it (on the device unless KILN_GPU_MIP16_DEVICE_DECODE=0) */
    /* (helper mipfall) also into RGBA8 / RGBA16F / RGBA32F, and with alpha coverage: one 16-bit image always */
    const int raw16 = u16 && count == 1;
    kiln_image *dec = u16 && !raw16 ? kiln__calloc(ctx, count, sizeof *dec) : NULL;
    const int srgb = resolve_srgb(p, &images[0], 0);
    if (!weighted || !dst || (u16 && !raw16 && !dec)) {
        free(weighted);
        free(dst);
        free(dec);
        *st = KILN_ERR_OUT_OF_MEMORY;
        return 1;
    }
    kiln_status r = KILN_OK;
    for (uint32_t i = 0; i < count; i++) {
        cfg cf;
        resolve_cfg(&cf, p, &images[i], srgb);
        weighted[i] = (uint8_t)cf.weighted;
        for (uint32_t l = 0; l < levels; l++) dst[(size_t)i * levels + l] = sinks[(size_t)i * levels + l].data;
        if (u16 && !raw16 && r == KILN_OK) r = kiln__mip_decode_f32(ctx, &images[i], srgb, &dec[i]);
    }
    kiln__gpu_mip_job job = {.images = u16 && !raw16 ? dec : images, .count = count, .levels = levels,
                             .decode_srgb = u16 && !raw16 ? 0 : srgb, .out_srgb = sinks[0].srgb, .out_kind = (int)sinks[0].kind,
                             .weighted = weighted, .dst = dst, .strategy = (int)p->strategy, .filter = (int)p->filter,
                             .edge = (int)p->edge, .normal_map = p->normal_map != 0,
                             .alpha_coverage_ref = p->alpha_coverage_ref};
    if (r == KILN_OK && raw16) {
        double ms = 0.0;
        r = kiln__gpu_mip16_generate(ctx, &job, &ms);
        if (r == KILN_OK) ctx->last_gpu_ms = ms;
    } else if (r == KILN_OK) {
        r = kiln__gpu_mip(ctx, &job);
    }
    for (uint32_t i = 0; u16 && !raw16 && i < count; i++) kiln_image_free(&dec[i]);
    free(dec);
    free(weighted);
    free(dst);
    if (r == KILN_ERR_UNSUPPORTED && auto_strategy) {
        if (ctx->params.verbose) fprintf(stderr, "kiln: mipmaps on the CPU: %s\n", kiln_last_error(ctx));
        kiln__clear_error(ctx);
        return 0;
    }
    *st = r;
    return 1;
}

/* ---------------------------------------------------------------- public API */

kiln_status kiln_mip_generate(kiln_context *ctx, const kiln_image *base, const kiln_mip_params *params,
                              kiln_image *levels_out, uint32_t *level_count)
{
    kiln__clear_error(ctx);
    if (!level_count) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "mipmaps: level_count is NULL");
    uint32_t capacity = *level_count;
    *level_count = 0;
    KILN_TRY(check_image(ctx, base, "base image"));
    kiln_mip_params defaults;
    if (!params) {
        kiln_mip_params_init(&defaults);
        params = &defaults;
    }
    uint32_t levels;
    KILN_TRY(check_params(ctx, params, base->width, base->height, &levels));
    if (!levels_out || capacity < levels)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "mipmaps: levels_out has room for %u images but %ux%u needs %u",
                          levels_out ? capacity : 0, base->width, base->height, levels);
    memset(levels_out, 0, levels * sizeof *levels_out);
    cfg cf;
    resolve_cfg(&cf, params, base, resolve_srgb(params, base, 0));
    sink sinks[KILN_MAX_LEVELS];
    memset(sinks, 0, sizeof sinks);
    kiln_status st = KILN_OK;
    for (uint32_t l = 0; l < levels && st == KILN_OK; l++) {
        st = kiln_image_alloc(ctx, &levels_out[l], kiln_level_dim(base->width, l), kiln_level_dim(base->height, l),
                              base->type);
        if (st != KILN_OK) break;
        levels_out[l].channels = base->channels;
        levels_out[l].srgb = base->srgb;
        levels_out[l].hdr = base->hdr;
        sinks[l] = (sink){.data = levels_out[l].pixels, .kind = kind_of(base->type), .comps = 4, .srgb = cf.srgb};
    }
    if (st == KILN_OK) {
        if (try_gpu(ctx, params, base, 1, levels, sinks, &st)) {
            if (st == KILN_OK) st = run_chain(ctx, base, &cf, 1, sinks, 0.0f, 1.0f); /* level 0 */
        } else if (st == KILN_OK) {
            st = run_chain(ctx, base, &cf, levels, sinks, 0.0f, 1.0f);
        }
    }
    if (st != KILN_OK) {
        for (uint32_t l = 0; l < levels; l++) kiln_image_free(&levels_out[l]);
        return st;
    }
    *level_count = levels;
    return KILN_OK;
}

kiln_status kiln_mip_texture_layers(kiln_context *ctx, const kiln_image *images, uint32_t layers, uint32_t faces,
                                    int is_array, const kiln_mip_params *params, kiln_format format, kiln_texture *out)
{
    kiln__clear_error(ctx);
    if (!out) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "mipmaps: output texture is NULL");
    memset(out, 0, sizeof *out);
    if (!images) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "mipmaps: images is NULL");
    if (layers == 0 || layers > 2048)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "mipmaps: %u layers (1 to 2048)", layers);
    if (faces != 1 && faces != 6)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "mipmaps: faces must be 1 or 6, not %u", faces);
    uint32_t count = layers * faces;
    KILN_TRY(check_image(ctx, &images[0], "image 0"));
    for (uint32_t i = 1; i < count; i++) {
        char what[32];
        snprintf(what, sizeof what, "image %u", i);
        KILN_TRY(check_image(ctx, &images[i], what));
        if (images[i].width != images[0].width || images[i].height != images[0].height || images[i].type != images[0].type)
            return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT,
                              "mipmaps: image %u is %ux%u (pixel type %d) but image 0 is %ux%u (pixel type %d)", i,
                              images[i].width, images[i].height, (int)images[i].type, images[0].width, images[0].height,
                              (int)images[0].type);
    }
    kiln_mip_params defaults;
    if (!params) {
        kiln_mip_params_init(&defaults);
        params = &defaults;
    }
    uint32_t levels;
    KILN_TRY(check_params(ctx, params, images[0].width, images[0].height, &levels));

    sink proto = {0};
    int srgb;
    switch (format) {
    case KILN_FORMAT_RGBA8_UNORM:
    case KILN_FORMAT_RGBA8_SRGB:
        srgb = resolve_srgb(params, &images[0], 0);
        format = srgb ? KILN_FORMAT_RGBA8_SRGB : KILN_FORMAT_RGBA8_UNORM;
        proto = (sink){.kind = SINK_U8, .comps = 4, .srgb = srgb};
        break;
    case KILN_FORMAT_R8_UNORM:
    case KILN_FORMAT_RG8_UNORM:
        srgb = resolve_srgb(params, &images[0], 1);
        proto = (sink){.kind = SINK_U8, .comps = format == KILN_FORMAT_R8_UNORM ? 1u : 2u, .srgb = srgb};
        break;
    case KILN_FORMAT_RGBA16F:
    case KILN_FORMAT_RGBA32F:
        srgb = resolve_srgb(params, &images[0], 0);
        proto = (sink){.kind = format == KILN_FORMAT_RGBA16F ? SINK_F16 : SINK_F32, .comps = 4, .srgb = 0};
        break;
    default: {
        const kiln_format_info *fi = kiln_format_get_info(format);
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                          "mipmaps: format %s is not an uncompressed format kiln_mip_texture makes (rgba8, rgba16f, "
                          "rgba32f, r8, rg8); compress the levels with kiln_encode_image",
                          fi ? fi->name : "(unknown)");
    }
    }
    KILN_TRY(kiln_texture_alloc(ctx, out, format, images[0].width, images[0].height, levels, layers, faces));
    out->is_array = is_array ? 1 : 0;
    out->premultiplied = params->alpha == KILN_MIP_ALPHA_PREMULTIPLIED;
    kiln_status st = KILN_OK;
    /* the GPU path: every image in one batch (levels >= 1), then level 0 of each on the CPU */
    sink *all = kiln__calloc(ctx, (size_t)count * levels, sizeof *all);
    if (!all) {
        kiln_texture_free(out);
        return KILN_ERR_OUT_OF_MEMORY;
    }
    for (uint32_t i = 0; i < count && st == KILN_OK; i++)
        for (uint32_t l = 0; l < levels; l++) {
            all[(size_t)i * levels + l] = proto;
            all[(size_t)i * levels + l].data = kiln_texture_image(out, l, i / faces, i % faces, NULL);
            if (!all[(size_t)i * levels + l].data)
                st = kiln__fail(ctx, KILN_ERR_INTERNAL, "mipmaps: no storage for level %u layer %u face %u", l, i / faces,
                                i % faces);
        }
    int on_gpu = st == KILN_OK && try_gpu(ctx, params, images, count, levels, all, &st);
    free(all);
    for (uint32_t i = 0; i < count && st == KILN_OK; i++) {
        uint32_t layer = i / faces, face = i % faces;
        sink sinks[KILN_MAX_LEVELS];
        memset(sinks, 0, sizeof sinks);
        for (uint32_t l = 0; l < levels; l++) {
            sinks[l] = proto;
            sinks[l].data = kiln_texture_image(out, l, layer, face, NULL);
            if (!sinks[l].data) {
                st = kiln__fail(ctx, KILN_ERR_INTERNAL, "mipmaps: no storage for level %u layer %u face %u", l, layer, face);
                break;
            }
        }
        if (st != KILN_OK) break;
        cfg cf;
        resolve_cfg(&cf, params, &images[i], srgb);
        st = run_chain(ctx, &images[i], &cf, on_gpu ? 1 : levels, sinks, (float)i / (float)count,
                       (float)(i + 1) / (float)count);
    }
    if (st != KILN_OK) kiln_texture_free(out);
    return st;
}

kiln_status kiln_mip_texture(kiln_context *ctx, const kiln_image *base, const kiln_mip_params *params,
                             kiln_format uncompressed_format, kiln_texture *out)
{
    if (!base) {
        kiln__clear_error(ctx);
        if (out) memset(out, 0, sizeof *out);
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "mipmaps: base image is NULL");
    }
    return kiln_mip_texture_layers(ctx, base, 1, 1, 0, params, uncompressed_format, out);
}

/* filters.c - mipmap kernels, per-axis tap tables and the alpha-coverage scale search.
 * The exact rules are in mip.h (rules 5, 6 and 8). */
#include "mip/mip.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KILN_PI 3.14159265358979323846

uint32_t kiln__mip_box_taps(uint32_t src, uint32_t x, uint32_t index[3], float weight[3])
{
    if (src <= 1) {
        index[0] = 0;
        weight[0] = 1.0f;
        return 1;
    }
    if ((src & 1u) == 0) {
        index[0] = 2 * x;
        index[1] = 2 * x + 1;
        weight[0] = 0.5f;
        weight[1] = 0.5f;
        return 2;
    }
    /* src = 2n + 1: output x covers [x * src / n, (x + 1) * src / n), i.e. the whole texel 2x+1 (n/src of
     * the interval), the part (n - x)/src of texel 2x and (x + 1)/src of texel 2x+2. */
    uint32_t n = src / 2;
    float d = (float)src; /* src <= 65536: exact */
    index[0] = 2 * x;
    index[1] = 2 * x + 1;
    index[2] = 2 * x + 2;
    weight[0] = (float)(n - x) / d;
    weight[1] = (float)n / d;
    weight[2] = (float)(x + 1) / d;
    return 3;
}

static double sinc(double x) { return fabs(x) < 1e-9 ? 1.0 : sin(x) / x; }

/* Modified Bessel function of the first kind, order 0 (power series; converges fast for x <= 4). */
static double bessel_i0(double x)
{
    double sum = 1.0, term = 1.0, q = x * x / 4.0;
    for (int k = 1; k < 64; k++) {
        term *= q / ((double)k * (double)k);
        sum += term;
        if (term < sum * 1e-17) break;
    }
    return sum;
}

double kiln__mip_kernel_support(kiln_mip_filter filter)
{
    switch (filter) {
    case KILN_MIP_FILTER_BOX: return 0.5;
    case KILN_MIP_FILTER_KAISER: return 3.0;
    case KILN_MIP_FILTER_LANCZOS3: return 3.0;
    case KILN_MIP_FILTER_MITCHELL: return 2.0;
    }
    return 0.0;
}

/* NVTT's Kaiser defaults: width w = 3, alpha = 4, stretch = 1 */
#define KAISER_W 3.0
#define KAISER_ALPHA 4.0
#define KAISER_STRETCH 1.0

/* i0_alpha = bessel_i0(KAISER_ALPHA), passed in so table builds compute it once */
static double kernel_eval(kiln_mip_filter filter, double x, double i0_alpha)
{
    double ax = fabs(x);
    switch (filter) {
    case KILN_MIP_FILTER_BOX: return ax <= 0.5 ? 1.0 : 0.0;
    case KILN_MIP_FILTER_KAISER: {
        double t = x / KAISER_W;
        if (1.0 - t * t < 0.0) return 0.0;
        return sinc(KILN_PI * x * KAISER_STRETCH) * bessel_i0(KAISER_ALPHA * sqrt(1.0 - t * t)) / i0_alpha;
    }
    case KILN_MIP_FILTER_LANCZOS3:
        if (ax >= 3.0) return 0.0;
        return sinc(KILN_PI * x) * sinc(KILN_PI * x / 3.0);
    case KILN_MIP_FILTER_MITCHELL: {
        const double B = 1.0 / 3.0, C = 1.0 / 3.0;
        if (ax < 1.0)
            return ((12.0 - 9.0 * B - 6.0 * C) * ax * ax * ax + (-18.0 + 12.0 * B + 6.0 * C) * ax * ax + (6.0 - 2.0 * B)) / 6.0;
        if (ax < 2.0)
            return ((-B - 6.0 * C) * ax * ax * ax + (6.0 * B + 30.0 * C) * ax * ax + (-12.0 * B - 48.0 * C) * ax +
                    (8.0 * B + 24.0 * C)) / 6.0;
        return 0.0;
    }
    }
    return 0.0;
}

double kiln__mip_kernel(kiln_mip_filter filter, double x) { return kernel_eval(filter, x, bessel_i0(KAISER_ALPHA)); }

void kiln__mip_axis_free(kiln__mip_axis *axis)
{
    if (!axis) return;
    free(axis->first);
    free(axis->index);
    free(axis->weight);
    memset(axis, 0, sizeof *axis);
}

static uint32_t map_edge(int64_t i, uint32_t size, kiln_mip_edge edge)
{
    if (i >= 0 && i < (int64_t)size) return (uint32_t)i;
    if (edge == KILN_MIP_EDGE_WRAP) {
        int64_t m = i % (int64_t)size;
        if (m < 0) m += size;
        return (uint32_t)m;
    }
    return i < 0 ? 0u : size - 1;
}

#define KILN_MIP_SUBSAMPLES 32

typedef struct raw_job {
    double *raw;
    uint32_t *raw_n;
    uint32_t max_taps;
    kiln_mip_filter filter;
    double scale, h, i0_alpha;
} raw_job;

/* Raw weights of output o (row o of raw): box-integrated kernel over each source texel of the window. */
static void raw_rows_fn(void *user, size_t begin, size_t end, uint32_t worker)
{
    const raw_job *j = user;
    (void)worker;
    for (size_t o = begin; o < end; o++) {
        double c = ((double)o + 0.5) * j->scale;
        int64_t lo = (int64_t)floor(c - j->h), hi = (int64_t)ceil(c + j->h);
        uint32_t n = (uint32_t)(hi - lo);
        if (n > j->max_taps) n = j->max_taps; /* cannot happen: max_taps >= 2h + 2 */
        double *r = j->raw + o * j->max_taps;
        for (uint32_t k = 0; k < n; k++) {
            double sum = 0.0, i = (double)(lo + (int64_t)k);
            for (int q = 0; q < KILN_MIP_SUBSAMPLES; q++) {
                double p = i + ((double)q + 0.5) / KILN_MIP_SUBSAMPLES;
                sum += kernel_eval(j->filter, (p - c) / j->scale, j->i0_alpha);
            }
            r[k] = sum / KILN_MIP_SUBSAMPLES;
        }
        j->raw_n[o] = n;
    }
}

kiln_status kiln__mip_axis_build(kiln_context *ctx, kiln__mip_axis *axis, uint32_t src, kiln_mip_filter filter,
                                 kiln_mip_edge edge, float progress)
{
    memset(axis, 0, sizeof *axis);
    if (src == 0 || src > KILN_MAX_DIMENSION)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "mipmap axis of size %u", src);
    uint32_t dst = src > 1 ? src / 2 : 1;
    double scale = (double)src / (double)dst;
    int wide = src > 1 && filter != KILN_MIP_FILTER_BOX;
    uint32_t max_taps;
    if (src == 1) max_taps = 1;
    else if (!wide) max_taps = (src & 1u) ? 3 : 2;
    else max_taps = (uint32_t)ceil(2.0 * kiln__mip_kernel_support(filter) * scale) + 2;
    axis->src = src;
    axis->dst = dst;
    axis->first = kiln__calloc(ctx, (size_t)dst + 1, sizeof *axis->first);
    axis->index = kiln__calloc(ctx, (size_t)dst * max_taps, sizeof *axis->index);
    axis->weight = kiln__calloc(ctx, (size_t)dst * max_taps, sizeof *axis->weight);
    /* raw (unnormalised) weights: one row for even sizes, the first half of the outputs for odd ones */
    size_t raw_rows = !wide ? 1 : (src & 1u) ? (size_t)dst / 2 + 2 : 1; /* + a spare row */
    double *raw = kiln__calloc(ctx, raw_rows * max_taps, sizeof *raw);
    uint32_t *raw_n = kiln__calloc(ctx, raw_rows, sizeof *raw_n);
    if (!axis->first || !axis->index || !axis->weight || !raw || !raw_n) {
        free(raw);
        free(raw_n);
        kiln__mip_axis_free(axis);
        return KILN_ERR_OUT_OF_MEMORY;
    }
    const double i0_alpha = bessel_i0(KAISER_ALPHA);
    const double h = kiln__mip_kernel_support(filter) * scale;
    if (wide) {
        /* raw weights of the outputs that are computed (not copied): output 0 for even sizes, the
         * first half for odd ones; rows are independent, so they are made in parallel */
        raw_job rj = {.raw = raw, .raw_n = raw_n, .max_taps = max_taps, .filter = filter, .scale = scale, .h = h,
                      .i0_alpha = i0_alpha};
        size_t rows = (src & 1u) ? (size_t)(dst - 1) / 2 + 1 : 1;
        kiln_status st = kiln__parallel_for_progress(ctx, rows, 8, raw_rows_fn, &rj, progress, progress);
        if (st != KILN_OK) {
            free(raw);
            free(raw_n);
            kiln__mip_axis_free(axis);
            return st;
        }
    }
    uint32_t pos = 0, widest = 0;
    for (uint32_t o = 0; o < dst; o++) {
        axis->first[o] = pos;
        if (!wide) {
            uint32_t idx[3];
            float wt[3];
            uint32_t t = kiln__mip_box_taps(src, o, idx, wt);
            for (uint32_t k = 0; k < t; k++) {
                axis->index[pos] = idx[k];
                axis->weight[pos] = wt[k];
                pos++;
            }
            if (t > widest) widest = t;
            continue;
        }
        double c = ((double)o + 0.5) * scale;
        int64_t lo = (int64_t)floor(c - h), hi = (int64_t)ceil(c + h);
        uint32_t n = (uint32_t)(hi - lo);
        if (n > max_taps) n = max_taps; /* cannot happen: max_taps >= 2h + 2 */
        const double *w;
        uint32_t mirror = dst - 1 - o;
        if ((src & 1u) == 0 && o > 0) {
            /* even size: c - lo is the same for every output, so are the weights */
            w = raw;
            n = raw_n[0];
        } else if ((src & 1u) && mirror < o) {
            /* odd size: output dst-1-o is the mirror image of output o (centre src - c, window
             * [src - hi, src - lo)): the same weights reversed, so results are exactly symmetric */
            double *m = raw + (size_t)mirror * max_taps;
            double *r = raw + (size_t)(raw_rows - 1) * max_taps; /* spare row */
            n = raw_n[mirror];
            for (uint32_t k = 0; k < n; k++) r[k] = m[n - 1 - k];
            w = r;
        } else {
            w = raw + ((src & 1u) ? (size_t)o : 0) * max_taps; /* made by raw_rows_fn */
            n = raw_n[(src & 1u) ? o : 0];
        }
        double total = 0.0;
        for (uint32_t k = 0; k < n; k++) total += w[k];
        if (!(total > 0.0)) { /* cannot happen for these kernels */
            free(raw);
            free(raw_n);
            kiln__mip_axis_free(axis);
            return kiln__fail(ctx, KILN_ERR_INTERNAL, "mipmap kernel has no weight at output %u of %u", o, dst);
        }
        uint32_t kept = 0;
        for (uint32_t k = 0; k < n; k++) {
            if (w[k] == 0.0) continue;
            axis->index[pos] = map_edge(lo + (int64_t)k, src, edge);
            axis->weight[pos] = (float)(w[k] / total);
            pos++;
            kept++;
        }
        if (kept > widest) widest = kept;
    }
    axis->first[dst] = pos;
    axis->max_taps = widest;
    free(raw);
    free(raw_n);
    return KILN_OK;
}

/* ---------------------------------------------------------------- alpha coverage */

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

/* Smallest fp32 s >= 0 with fl(s * v) >= thr (v > 0, thr > 0); +inf when none is finite. */
static float smallest_scale(float v, float thr)
{
    double guess = (double)thr / (double)v;
    float s = guess > 3.0e38 ? INFINITY : (float)guess;
    for (int i = 0; i < 64 && s > 0.0f; i++) {
        float p = nextafterf(s, 0.0f);
        float prod = p * v;
        if (prod >= thr) s = p;
        else break;
    }
    for (int i = 0; i < 64 && isfinite(s); i++) {
        float prod = s * v;
        if (prod >= thr) break;
        s = nextafterf(s, INFINITY);
    }
    return s;
}

/* Picks the fp32 value of [lo, hi) closest to 1. */
static float pick(float lo, float hi)
{
    if (lo <= 1.0f && 1.0f < hi) return 1.0f;
    if (1.0f < lo) return lo;
    return nextafterf(hi, 0.0f);
}

/* The bucket of hist[0 .. top] (scanned from the top) that holds the k-th largest entry: the first
 * index i (downwards) with acc + hist[i] >= k, where *acc is the count above i (index 0 when none). */
uint32_t kiln__mip_hist_select(const uint32_t *hist, uint32_t top, size_t k, size_t *acc_out)
{
    size_t acc = 0;
    uint32_t i = top;
    for (;; i--) {
        if (acc + hist[i] >= k) break;
        acc += hist[i];
        if (i == 0) break;
    }
    *acc_out = acc;
    return i;
}

/* k-th largest (1-based) of n non-negative fp32 bit patterns, by two 16-bit histogram passes. */
static uint32_t kth_largest(const uint32_t *bits, size_t n, size_t k, uint32_t *hist)
{
    memset(hist, 0, 65536 * sizeof *hist);
    for (size_t i = 0; i < n; i++) hist[bits[i] >> 16]++;
    size_t acc = 0;
    uint32_t hi = kiln__mip_hist_select(hist, 65535, k, &acc);
    size_t rank = k - acc; /* rank inside bucket `hi`, from the top */
    memset(hist, 0, 65536 * sizeof *hist);
    for (size_t i = 0; i < n; i++)
        if ((bits[i] >> 16) == hi) hist[bits[i] & 0xffffu]++;
    size_t acc2 = 0;
    uint32_t lo = kiln__mip_hist_select(hist, 65535, rank, &acc2);
    return hi << 16 | lo;
}

/* The decisions of kiln__mip_coverage_scale that need only the count of positive (clamped) alphas and
 * their maximum's bits: 1 with *scale set when they decide, else 0 with *target clamped to positive. */
int kiln__mip_coverage_early(size_t positive, uint32_t vmax, size_t *target, float thr, float *scale)
{
    if (positive == 0 || !(thr > 0.0f)) { /* nothing can change */
        *scale = 1.0f;
        return 1;
    }
    if (*target > positive) *target = positive;
    if (*target == 0) {
        /* nothing may pass: s < smallest_scale(vmax) */
        float s_hi = smallest_scale(bitsf(vmax), thr);
        *scale = pick(0.0f, s_hi);
        return 1;
    }
    return 0;
}

/* The rest, from the target-th largest clamped alpha's bits vk, the counts >= vk and > vk, the largest
 * bits below vk (0 when none) and the smallest above it (0xffffffff when none). */
float kiln__mip_coverage_final(size_t target, float thr, uint32_t vk, size_t count_ge, size_t count_gt, uint32_t below,
                               uint32_t above)
{
    float s_k = smallest_scale(bitsf(vk), thr);
    /* candidate A: exactly the count_ge texels >= vk pass, for s in [s_k, s_below) */
    float a_lo = s_k, a_hi = below ? smallest_scale(bitsf(below), thr) : INFINITY;
    /* candidate B: the count_gt texels > vk pass, for s in [s_above, s_k) */
    float b_lo = count_gt ? smallest_scale(bitsf(above), thr) : 0.0f, b_hi = s_k;
    int a_ok = a_lo < a_hi, b_ok = b_lo < b_hi;
    if (!a_ok && !b_ok) return a_lo;
    if (!b_ok) return pick(a_lo, a_hi);
    if (!a_ok) return pick(b_lo, b_hi);
    size_t da = count_ge - target, db = target - count_gt;
    if (da < db) return pick(a_lo, a_hi);
    if (db < da) return pick(b_lo, b_hi);
    if (b_lo <= 1.0f && 1.0f < b_hi) return 1.0f;
    return pick(a_lo, a_hi);
}

float kiln__mip_coverage_scale(const float *alpha, size_t stride, size_t n, size_t target, float thr, uint32_t *scratch)
{
    uint32_t *bits = scratch, *hist = scratch + n;
    size_t positive = 0;
    uint32_t vmax = 0;
    for (size_t i = 0; i < n; i++) {
        float a = alpha[i * stride];
        a = a > 0.0f ? (a < 1.0f ? a : 1.0f) : 0.0f; /* NaN -> 0 */
        bits[i] = fbits(a);
        if (bits[i]) positive++;
        if (bits[i] > vmax) vmax = bits[i];
    }
    float early;
    if (kiln__mip_coverage_early(positive, vmax, &target, thr, &early)) return early;
    uint32_t vk = kth_largest(bits, n, target, hist);
    size_t count_ge = 0, count_gt = 0;
    uint32_t below = 0, above = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        uint32_t b = bits[i];
        if (b >= vk) count_ge++;
        if (b > vk) {
            count_gt++;
            if (b < above) above = b;
        } else if (b < vk && b > below) {
            below = b;
        }
    }
    return kiln__mip_coverage_final(target, thr, vk, count_ge, count_gt, below, above);
}

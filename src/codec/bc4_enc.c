/* bc4_enc.c - BC4 (one channel), BC5 (two BC4 channels) and the BC4-style alpha of BC3, UNORM and
 * SNORM. The error is the sum of squared differences under kiln's decoder (bc.c: D3D10 integer
 * ramps that truncate, toward zero for SNORM).
 *
 * A block is two endpoints a0, a1 and a 3-bit index per texel. a0 > a1 selects eight values (a0, a1
 * and six interpolants); a0 <= a1 selects six values plus the fixed minimum and maximum (0 and 255,
 * or -127 and 127). Qualities:
 *   fast   - min/max endpoints in the eight-value mode; the six-value mode when the block touches the
 *            extremes (then min/max of the other texels).
 *   normal - both modes from min/max, each refined by least squares on its indices (two rounds).
 *   high   - normal plus a local search of +-2 around both endpoints of the best pair.
 *   max    - exhaustive branch-and-bound over every endpoint pair of both modes. It is exact: pairs
 *            are skipped only through lower bounds that are provably >= the best error found so far
 *            (the squared distance of texels outside [lo, hi] to the range, which no palette of that
 *            pair can beat), and a pair's evaluation stops only once its partial error reaches the
 *            best. tests/unit/test_bc_encode.c checks the result against a brute force over all
 *            256 x 256 endpoint byte pairs through kiln's decoder.
 * SNORM endpoints stay in [-127, 127]: the byte -128 decodes as -127 and never gives a palette that
 * a pair in range cannot give, so nothing is lost.
 */
#include "codec/codec.h"

#include <math.h>
#include <string.h>

typedef struct bc4_range {
    int lo, hi; /* value range: 0..255 or -127..127 */
} bc4_range;

/* The palette of endpoint pair (a, b) exactly as bc.c decodes it (a, b already in range). */
static inline void bc4_palette(int a, int b, bc4_range r, int pal[8])
{
    pal[0] = a;
    pal[1] = b;
    if (a > b) {
        for (int i = 2; i < 8; i++) pal[i] = ((8 - i) * a + (i - 1) * b) / 7;
    } else {
        for (int i = 2; i < 6; i++) pal[i] = ((6 - i) * a + (i - 1) * b) / 5;
        pal[6] = r.lo;
        pal[7] = r.hi;
    }
}

static inline int sq(int x) { return x * x; }

/* Best index of value v in pal (first one on ties) and its squared error. */
static inline int best_index(const int pal[8], int v, int *err)
{
    int bi = 0, be = sq(v - pal[0]);
    for (int i = 1; i < 8; i++) {
        int e = sq(v - pal[i]);
        if (e < be) {
            be = e;
            bi = i;
        }
    }
    *err = be;
    return bi;
}

static uint32_t block_error(const int v[16], const int pal[8])
{
    uint32_t total = 0;
    for (int t = 0; t < 16; t++) {
        int e;
        best_index(pal, v[t], &e);
        total += (uint32_t)e;
    }
    return total;
}

static uint32_t pair_error(const int v[16], int a, int b, bc4_range r)
{
    int pal[8];
    bc4_palette(a, b, r, pal);
    return block_error(v, pal);
}

static void pack(const int v[16], int a, int b, bc4_range r, uint8_t out[8])
{
    int pal[8];
    bc4_palette(a, b, r, pal);
    uint64_t bits = 0;
    for (int t = 0; t < 16; t++) {
        int e;
        uint64_t i = (uint64_t)best_index(pal, v[t], &e);
        bits |= i << (3 * t);
    }
    out[0] = (uint8_t)(a & 0xff);
    out[1] = (uint8_t)(b & 0xff);
    for (int k = 0; k < 6; k++) out[2 + k] = (uint8_t)(bits >> (8 * k));
}

typedef struct bc4_best {
    uint32_t err;
    int a, b;
} bc4_best;

static inline void consider(bc4_best *best, const int v[16], int a, int b, bc4_range r)
{
    if (a < r.lo || a > r.hi || b < r.lo || b > r.hi) return;
    uint32_t e = pair_error(v, a, b, r);
    if (e < best->err) {
        best->err = e;
        best->a = a;
        best->b = b;
    }
}

static inline int clampi(int x, int lo, int hi) { return x < lo ? lo : x > hi ? hi : x; }

/* Least-squares endpoints for the current indices of pair (a, b); returns 0 when degenerate. Only the
 * interpolating entries take part (in the six-value mode the fixed min/max entries are constants). */
static int refit(const int v[16], int a, int b, bc4_range r, int *na, int *nb)
{
    int pal[8];
    bc4_palette(a, b, r, pal);
    int eight = a > b;
    double s_aa = 0, s_bb = 0, s_ab = 0, s_ax = 0, s_bx = 0;
    for (int t = 0; t < 16; t++) {
        int e;
        int i = best_index(pal, v[t], &e);
        double wa, wb; /* value = wa * a + wb * b (ideal, without truncation) */
        if (i == 0) wa = 1, wb = 0;
        else if (i == 1) wa = 0, wb = 1;
        else if (eight) wa = (8 - i) / 7.0, wb = (i - 1) / 7.0;
        else if (i < 6) wa = (6 - i) / 5.0, wb = (i - 1) / 5.0;
        else continue;
        s_aa += wa * wa;
        s_bb += wb * wb;
        s_ab += wa * wb;
        s_ax += wa * v[t];
        s_bx += wb * v[t];
    }
    double det = s_aa * s_bb - s_ab * s_ab;
    if (det < 1e-9) return 0;
    double fa = (s_ax * s_bb - s_bx * s_ab) / det;
    double fb = (s_bx * s_aa - s_ax * s_ab) / det;
    /* round half away from zero, then clamp */
    int ia = (int)(fa < 0 ? fa - 0.5 : fa + 0.5), ib = (int)(fb < 0 ? fb - 0.5 : fb + 0.5);
    *na = clampi(ia, r.lo, r.hi);
    *nb = clampi(ib, r.lo, r.hi);
    return 1;
}

/* Puts a pair into the requested mode's order (eight: a > b; six: a <= b). Returns 0 when the
 * eight-value mode is impossible (a == b). */
static int order_pair(int *a, int *b, int eight)
{
    if (eight) {
        if (*a == *b) return 0;
        if (*a < *b) {
            int t = *a;
            *a = *b;
            *b = t;
        }
    } else if (*a > *b) {
        int t = *a;
        *a = *b;
        *b = t;
    }
    return 1;
}

/* Heuristic search: fills best. */
static void heuristic(const int v[16], bc4_range r, kiln_quality q, bc4_best *best)
{
    int mn = v[0], mx = v[0];
    for (int t = 1; t < 16; t++) {
        if (v[t] < mn) mn = v[t];
        if (v[t] > mx) mx = v[t];
    }
    /* min/max of the texels that are not at the range extremes (for the six-value mode) */
    int imn = r.hi, imx = r.lo, inner = 0;
    for (int t = 0; t < 16; t++)
        if (v[t] != r.lo && v[t] != r.hi) {
            if (v[t] < imn) imn = v[t];
            if (v[t] > imx) imx = v[t];
            inner = 1;
        }
    if (!inner) imn = imx = mn;

    best->err = UINT32_MAX;
    best->a = mn;
    best->b = mn;
    if (mn == mx) { /* flat: exact */
        consider(best, v, mn, mn, r);
        return;
    }
    consider(best, v, mx, mn, r);                   /* eight-value mode */
    if (best->err == 0) return; /* nothing later can replace it (strict improvement only) */
    if (q == KILN_QUALITY_FAST) {
        if (mn == r.lo || mx == r.hi) consider(best, v, imn, imx, r); /* six-value mode */
        return;
    }
    consider(best, v, imn, imx, r);
    consider(best, v, mn, mx, r); /* six-value over the whole range */
    if (best->err == 0) return;
    /* least-squares refinement of both modes */
    for (int eight = 0; eight < 2; eight++) {
        int a = eight ? mx : imn, b = eight ? mn : imx;
        for (int round = 0; round < 2; round++) {
            int na, nb;
            if (!refit(v, a, b, r, &na, &nb)) break;
            if (!order_pair(&na, &nb, eight)) break;
            if (na == a && nb == b) break;
            a = na;
            b = nb;
            consider(best, v, a, b, r);
        }
    }
    if (q >= KILN_QUALITY_HIGH) {
        /* local search around the best pair, repeated while it improves */
        for (int iter = 0; iter < 4; iter++) {
            int a0 = best->a, b0 = best->b;
            for (int da = -2; da <= 2; da++)
                for (int db = -2; db <= 2; db++)
                    if (da || db) consider(best, v, a0 + da, b0 + db, r);
            if (best->a == a0 && best->b == b0) break;
        }
    }
}

/* ---------------------------------------------------------------- exact search */

typedef struct distinct {
    int n;
    int val[16], cnt[16]; /* in evaluation order: extremes first */
    int sorted[16], scnt[16];
    double emin[9]; /* emin[k]: the smallest squared error of any k real-valued levels (1-D k-means) */
} distinct;

/* Optimal k-level quantisation of the sorted values (dynamic programming over contiguous groups). */
static void kmeans_bounds(distinct *d)
{
    const int n = d->n;
    double pc[17], ps[17], pq[17];
    pc[0] = ps[0] = pq[0] = 0;
    for (int i = 0; i < n; i++) {
        pc[i + 1] = pc[i] + d->scnt[i];
        ps[i + 1] = ps[i] + (double)d->scnt[i] * d->sorted[i];
        pq[i + 1] = pq[i] + (double)d->scnt[i] * d->sorted[i] * d->sorted[i];
    }
    /* cost of one level for values [i, j): sum (x - mean)^2 */
#define GROUP(i, j) ((pq[j] - pq[i]) - (ps[j] - ps[i]) * (ps[j] - ps[i]) / (pc[j] - pc[i]))
    double e[17];
    for (int j = 1; j <= n; j++) e[j] = GROUP(0, j);
    d->emin[0] = INFINITY;
    d->emin[1] = e[n];
    for (int k = 2; k <= 8; k++) {
        double ne[17];
        for (int j = 1; j <= n; j++) {
            double b = e[j];
            for (int i = 1; i < j; i++) {
                double c = e[i] + GROUP(i, j);
                if (c < b) b = c;
            }
            ne[j] = b;
        }
        memcpy(e, ne, sizeof e);
        d->emin[k] = e[n];
    }
#undef GROUP
}

static void make_distinct(const int v[16], distinct *d)
{
    int s[16];
    memcpy(s, v, sizeof s);
    for (int i = 1; i < 16; i++) { /* insertion sort */
        int x = s[i], j = i - 1;
        while (j >= 0 && s[j] > x) {
            s[j + 1] = s[j];
            j--;
        }
        s[j + 1] = x;
    }
    int n = 0;
    for (int i = 0; i < 16; i++) {
        if (n > 0 && d->sorted[n - 1] == s[i]) {
            d->scnt[n - 1]++;
        } else {
            d->sorted[n] = s[i];
            d->scnt[n] = 1;
            n++;
        }
    }
    d->n = n;
    /* evaluation order: max, min, then alternate inwards (extremes reject bad pairs soonest) */
    int lo = 0, hi = n - 1, k = 0;
    while (lo <= hi) {
        d->val[k] = d->sorted[hi];
        d->cnt[k++] = d->scnt[hi];
        if (lo < hi) {
            d->val[k] = d->sorted[lo];
            d->cnt[k++] = d->scnt[lo];
        }
        lo++;
        hi--;
    }
}

/* ---- 16-lane vectors (GCC/Clang vector extensions): the search runs 16 values of hi at once ---- */

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#pragma clang diagnostic ignored "-Wpsabi"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
#define VI static inline __attribute__((always_inline))
typedef float vf __attribute__((vector_size(64)));
typedef int32_t vi __attribute__((vector_size(64)));
typedef int32_t vi8 __attribute__((vector_size(32)));
typedef int32_t vi4 __attribute__((vector_size(16)));
static const vf k_lanef = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

VI vf vmin(vf a, vf b) { return (vf)(((vi)a & (a < b)) | ((vi)b & ~(a < b))); }
VI int vany(vi v)
{
    vi8 s1 = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) | __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
    vi4 s2 = __builtin_shufflevector(s1, s1, 0, 1, 2, 3) | __builtin_shufflevector(s1, s1, 4, 5, 6, 7);
    return ((s2[0] | s2[1]) | (s2[2] | s2[3])) != 0;
}
/* C's integer division (truncating toward zero) of integers |x| <= 1785 by 7 or 5, in floats: the
 * quotient is at least 1/7 away from the next integer, far more than the rounding error, so a nudge of
 * 1e-4 away from zero before truncating gives the exact result. */
VI vf vdiv_trunc(vf num, float inv, int is_signed)
{
    vf q = num * inv;
    if (is_signed) q += (vf)(((vi)((vf){0} + 1e-4f)) | ((vi)num & (int32_t)0x80000000)); /* copysign(1e-4, num) */
    else q += 1e-4f;
    return __builtin_convertvector(__builtin_convertvector(q, vi), vf);
}

/* Exhaustive search of one mode. eight: pairs (a = hi, b = lo) with lo < hi; six: (a = lo, b = hi)
 * with lo <= hi. Each lo runs the hi values whose lower bound can still beat the best, 16 at a time. */
VI void exact_mode_body(const distinct *d, bc4_range r, int eight, bc4_best *best)
{
    const int span = r.hi - r.lo + 1, is_signed = r.lo < 0;
    /* ol[lo - r.lo]: error of the texels below lo, which no palette of the pair can bring closer than
     * lo (eight values) or than min(lo, the range minimum) (six values); oh: the same above hi. */
    uint32_t ol[256], oh[256];
    for (int i = 0; i < span; i++) {
        int lo = r.lo + i;
        uint32_t sl = 0, sh = 0;
        for (int k = 0; k < d->n; k++) {
            int x = d->sorted[k];
            if (x < lo) {
                int dl = lo - x;
                if (!eight && x - r.lo < dl) dl = x - r.lo;
                sl += (uint32_t)(sq(dl) * d->scnt[k]);
            } else {
                break;
            }
        }
        for (int k = d->n - 1; k >= 0; k--) {
            int x = d->sorted[k];
            if (x > lo) { /* lo used as hi here */
                int dh = x - lo;
                if (!eight && r.hi - x < dh) dh = r.hi - x;
                sh += (uint32_t)(sq(dh) * d->scnt[k]);
            } else {
                break;
            }
        }
        ol[i] = sl;
        oh[i] = sh;
    }
    vf xv[16], cv[16];
    for (int k = 0; k < d->n; k++) {
        xv[k] = (vf){0} + (float)d->val[k];
        cv[k] = (vf){0} + (float)d->cnt[k];
    }
    const vf vlo_r = (vf){0} + (float)r.lo, vhi_r = (vf){0} + (float)r.hi;
    /* Spacing bound: consecutive palette entries of a pair are at least g = floor(span / 7) (or / 5)
     * apart, so at most floor(w / g) + 1 of them fall inside the texels' range [mn, mx] of width w;
     * with the nearest entry below and above (and the fixed 6-value mode extremes when a texel sits on
     * them) no more than K levels serve the texels, and no palette beats emin[K]. The bound grows with
     * the span, so the first chunk (smallest span) that fails it ends the run over hi. SNORM ramps
     * truncate toward zero, which can put the two entries next to zero closer than g (entries -3, 0,
     * 1, 4 for g = 2): there at most floor((w + 1) / g) + 1 lie in the range (checked over every pair). */
    const int mn = d->sorted[0], mx = d->sorted[d->n - 1], w = mx - mn + is_signed;
    const int extra = 3 + (!eight && mn == r.lo) + (!eight && mx == r.hi);
    for (int lo = r.lo; lo <= r.hi; lo++) {
        const uint32_t bl = ol[lo - r.lo];
        if (bl >= best->err) break; /* ol grows with lo */
        /* the smallest hi whose bound is below the best (oh falls as hi grows) */
        int hstart = eight ? lo + 1 : lo;
        while (hstart <= r.hi && bl + oh[hstart - r.lo] >= best->err) hstart++;
        const float flo = (float)lo;
        for (int base = hstart; base <= r.hi; base += 16) {
            const int g = (base - lo) / (eight ? 7 : 5);
            if (g > 0) {
                int levels = w / g + extra;
                /* integer errors: a palette can only win with an error <= best - 1 */
                if (levels < 8 && d->emin[levels] > (double)best->err - 1.0 + 1e-6) break;
            }
            const vf hv = (float)base + k_lanef;
            vf p[8];
            if (eight) {
                p[0] = hv;
                p[1] = (vf){0} + flo;
                for (int i = 2; i < 8; i++) p[i] = vdiv_trunc((float)(8 - i) * hv + (float)(i - 1) * flo, 1.0f / 7.0f, is_signed);
            } else {
                p[0] = (vf){0} + flo;
                p[1] = hv;
                for (int i = 2; i < 6; i++) p[i] = vdiv_trunc((float)(6 - i) * flo + (float)(i - 1) * hv, 1.0f / 5.0f, is_signed);
                p[6] = vlo_r;
                p[7] = vhi_r;
            }
            const float limit = (float)best->err;
            vf err = (vf){0} + (float)bl * 0.0f;
            int alive = 1;
            for (int k = 0; k < d->n; k++) {
                vf e = (xv[k] - p[0]) * (xv[k] - p[0]);
                for (int i = 1; i < 8; i++) e = vmin(e, (xv[k] - p[i]) * (xv[k] - p[i]));
                err += e * cv[k];
                if (k > 0 && !vany(err < limit)) {
                    alive = 0;
                    break;
                }
            }
            if (!alive || !vany(err < limit)) continue;
            /* the best lane (the lowest hi among equals); lanes past the range are out */
            for (int l = 0; l < 16 && base + l <= r.hi; l++) {
                if (err[l] < (float)best->err) {
                    best->err = (uint32_t)err[l];
                    best->a = eight ? base + l : lo;
                    best->b = eight ? lo : base + l;
                }
            }
        }
    }
}

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define KILN_BC4_MULTI 1
__attribute__((target("avx512f"))) static void exact_mode_avx512(const distinct *d, bc4_range r, int eight, bc4_best *best)
{
    exact_mode_body(d, r, eight, best);
}
__attribute__((target("avx2"))) static void exact_mode_avx2(const distinct *d, bc4_range r, int eight, bc4_best *best)
{
    exact_mode_body(d, r, eight, best);
}
#endif
static void exact_mode_base(const distinct *d, bc4_range r, int eight, bc4_best *best) { exact_mode_body(d, r, eight, best); }

/* Every instruction set gives the same result (integer-valued floats, exact operations). */
static void exact_mode(const distinct *d, bc4_range r, int eight, bc4_best *best)
{
#ifdef KILN_BC4_MULTI
    if (__builtin_cpu_supports("avx512f")) {
        exact_mode_avx512(d, r, eight, best);
        return;
    }
    if (__builtin_cpu_supports("avx2")) {
        exact_mode_avx2(d, r, eight, best);
        return;
    }
#endif
    exact_mode_base(d, r, eight, best);
}

uint32_t kiln__enc_bc4_channel(const int v[16], int is_signed, kiln_quality quality, uint8_t out[8])
{
    bc4_range r = is_signed ? (bc4_range){-127, 127} : (bc4_range){0, 255};
    int w[16];
    for (int t = 0; t < 16; t++) w[t] = clampi(v[t], r.lo, r.hi);
    bc4_best best;
    heuristic(w, r, quality == KILN_QUALITY_MAX ? KILN_QUALITY_HIGH : quality, &best);
    if (quality == KILN_QUALITY_MAX && best.err > 0) {
        distinct d;
        make_distinct(w, &d);
        kmeans_bounds(&d);
        exact_mode(&d, r, 1, &best);
        exact_mode(&d, r, 0, &best);
    }
    pack(w, best.a, best.b, r, out);
    return best.err;
}

/* ---------------------------------------------------------------- dithering */

/* --dither: keeps the endpoints the search chose and re-picks the indices with Floyd-Steinberg error
 * diffusion inside the block (raster order; 7/16 right, 3/16 down-left, 5/16 down, 1/16 down-right, in
 * 1/16 units; error that would leave the block is dropped). Smooth gradients then alternate between
 * neighbouring palette values instead of banding; the squared error is usually a little higher. */
static void redither(const int v[16], int is_signed, uint8_t out[8])
{
    bc4_range r = is_signed ? (bc4_range){-127, 127} : (bc4_range){0, 255};
    int a = is_signed ? (int)(int8_t)out[0] : out[0], b = is_signed ? (int)(int8_t)out[1] : out[1];
    a = clampi(a, r.lo, r.hi); /* SNORM -128 decodes as -127 */
    b = clampi(b, r.lo, r.hi);
    int pal[8];
    bc4_palette(a, b, r, pal);
    int carry[16] = {0};
    uint64_t bits = 0;
    for (int t = 0; t < 16; t++) {
        int x = t & 3, y = t >> 2;
        int target = clampi(v[t], r.lo, r.hi) * 16 + carry[t];
        int bi = 0, be = -1;
        for (int i = 0; i < 8; i++) {
            int d = target - pal[i] * 16;
            if (d < 0) d = -d;
            if (be < 0 || d < be) {
                be = d;
                bi = i;
            }
        }
        int err = target - pal[bi] * 16;
        bits |= (uint64_t)bi << (3 * t);
        if (x < 3) carry[t + 1] += err * 7 / 16;
        if (y < 3) {
            if (x > 0) carry[t + 3] += err * 3 / 16;
            carry[t + 4] += err * 5 / 16;
            if (x < 3) carry[t + 5] += err / 16;
        }
    }
    for (int k = 0; k < 6; k++) out[2 + k] = (uint8_t)(bits >> (8 * k));
}

/* ---------------------------------------------------------------- block encoders */

static void channel_values(const kiln_block *src, int ch, int is_signed, int v[16])
{
    if (!is_signed) {
        for (int t = 0; t < 16; t++) v[t] = src->rgba8[t * 4 + ch];
        return;
    }
    for (int t = 0; t < 16; t++) {
        float f = src->f[t * 4 + ch];
        if (!(f >= -1.0f)) f = -1.0f; /* also NaN */
        if (f > 1.0f) f = 1.0f;
        float s = f * 127.0f;
        v[t] = (int)(s < 0 ? s - 0.5f : s + 0.5f);
    }
}

void kiln__enc_bc4(const kiln_block *src, uint8_t *out, const kiln_encode_params *params)
{
    const kiln_format_info *fi = kiln_format_get_info(params->format);
    int is_signed = fi && (fi->flags & KILN_FF_SIGNED);
    int v[16];
    channel_values(src, 0, is_signed, v);
    kiln__enc_bc4_channel(v, is_signed, params->quality, out);
    if (params->dither) redither(v, is_signed, out);
}

void kiln__enc_bc5(const kiln_block *src, uint8_t *out, const kiln_encode_params *params)
{
    const kiln_format_info *fi = kiln_format_get_info(params->format);
    int is_signed = fi && (fi->flags & KILN_FF_SIGNED);
    int v[16];
    for (int ch = 0; ch < 2; ch++) {
        channel_values(src, ch, is_signed, v);
        kiln__enc_bc4_channel(v, is_signed, params->quality, out + 8 * ch);
        if (params->dither) redither(v, is_signed, out + 8 * ch);
    }
}

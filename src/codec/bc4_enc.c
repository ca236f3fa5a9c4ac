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
    if (q == KILN_QUALITY_FAST) {
        if (mn == r.lo || mx == r.hi) consider(best, v, imn, imx, r); /* six-value mode */
        return;
    }
    consider(best, v, imn, imx, r);
    consider(best, v, mn, mx, r); /* six-value over the whole range */
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
} distinct;

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

/* Error of palette pal over the distinct values, stopping as soon as it reaches limit. */
static inline uint32_t eval_limit(const distinct *d, const int pal[8], uint32_t limit)
{
    uint32_t total = 0;
    for (int k = 0; k < d->n; k++) {
        int x = d->val[k];
        int e = sq(x - pal[0]);
        for (int i = 1; i < 8; i++) {
            int f = sq(x - pal[i]);
            e = f < e ? f : e;
        }
        total += (uint32_t)(e * d->cnt[k]);
        if (total >= limit) return total;
    }
    return total;
}

/* Exhaustive search of one mode. eight: pairs (a = hi, b = lo) with lo < hi; six: (a = lo, b = hi)
 * with lo <= hi. */
static void exact_mode(const distinct *d, bc4_range r, int eight, bc4_best *best)
{
    const int span = r.hi - r.lo + 1;
    uint32_t ol[256], oh[256]; /* lower bounds from texels below lo / above hi */
    for (int i = 0; i < span; i++) {
        int lo = r.lo + i;
        uint32_t sl = 0, sh = 0;
        for (int k = 0; k < d->n; k++) {
            int x = d->sorted[k];
            if (x < lo) {
                int dl = lo - x;
                if (!eight && x - r.lo < dl) dl = x - r.lo;
                sl += (uint32_t)(sq(dl) * d->scnt[k]);
            }
            if (x > lo) { /* lo used as hi here */
                int dh = x - lo;
                if (!eight && r.hi - x < dh) dh = r.hi - x;
                sh += (uint32_t)(sq(dh) * d->scnt[k]);
            }
        }
        ol[i] = sl;
        oh[i] = sh;
    }
    int pal[8];
    for (int lo = r.lo; lo <= r.hi; lo++) {
        uint32_t bl = ol[lo - r.lo];
        if (bl >= best->err) break; /* ol grows with lo */
        int hmin = eight ? lo + 1 : lo;
        for (int hi = r.hi; hi >= hmin; hi--) {
            uint32_t bound = bl + oh[hi - r.lo];
            if (bound >= best->err) break; /* oh grows as hi falls */
            int a = eight ? hi : lo, b = eight ? lo : hi;
            bc4_palette(a, b, r, pal);
            uint32_t e = eval_limit(d, pal, best->err);
            if (e < best->err) {
                best->err = e;
                best->a = a;
                best->b = b;
            }
        }
    }
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
        exact_mode(&d, r, 1, &best);
        exact_mode(&d, r, 0, &best);
    }
    pack(w, best.a, best.b, r, out);
    return best.err;
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
}

void kiln__enc_bc5(const kiln_block *src, uint8_t *out, const kiln_encode_params *params)
{
    const kiln_format_info *fi = kiln_format_get_info(params->format);
    int is_signed = fi && (fi->flags & KILN_FF_SIGNED);
    int v[16];
    channel_values(src, 0, is_signed, v);
    kiln__enc_bc4_channel(v, is_signed, params->quality, out);
    channel_values(src, 1, is_signed, v);
    kiln__enc_bc4_channel(v, is_signed, params->quality, out + 8);
}

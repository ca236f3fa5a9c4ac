/* eac_enc.c - EAC encoders: R11 / RG11 (unsigned and signed) and the 8-bit alpha of ETC2 RGBA8.
 *
 * Decoded value of pixel p (Khronos Data Format Specification, EAC):
 *   alpha8:  clamp(base + mod[t][i] * m, 0, 255), m in 1..15 (an encoder must not write m = 0)
 *   R11 u:   clamp(8 * base + 4 + mod[t][i] * (m ? 8m : 1), 0, 2047), base 0..255
 *   R11 s:   clamp(8 * base + mod[t][i] * (m ? 8m : 1), -1023, 1023), base -127..127 (-128 is never
 *            written: it decodes as -127)
 * Error metric: squared difference in the decoded integer domain against the exact source value, kept in
 * integers by scaling: value v stands for v * scale and each target is source * scale in that domain
 * (alpha8: a8 vs v; unsigned R11: the 16-bit source s16 is s16 * 2047 / 65535 in 11-bit units, so the
 * target is s16 * 2047 and the scale 65535; signed R11: f * 1023 in 11-bit units, held in 1/65536 units).
 *
 * Exact search (high / max): branch and bound over every (table, multiplier). For a bound E (the best
 * error so far), a base b can only beat it if EVERY pixel alone has error < E, i.e. if some level
 * clamp(c(b) + off_i) lies within sqrt(E) of the pixel. For each pixel that gives a union of at most 8
 * base intervals; their intersection over the pixels (a 256-bit mask, extremes first) leaves the few
 * bases worth evaluating, each with early exit. Only the strongest few conditions are intersected (the
 * extreme values, then quarters and halves of the sorted values): intersecting more costs more than the
 * bases it removes, and a superset of candidates cannot change the optimum. Interval lists that would
 * overflow widen their last interval (again a superset). Nothing that could win is ever skipped, so the result is
 * the exact optimum (the unit test checks this against a brute force through kiln's decoder).
 * Normal: the same exact search restricted to multipliers within 2 of each table's range estimate.
 * Fast: the range estimate alone (each table, estimated multiplier and base +-1).
 */
#include "codec/etc_enc.h"

#include <math.h>
#include <string.h>



/* Per table, the pixel indices ordered by increasing modifier. */
static const uint8_t eac_sorted[16][8] = {
    {3, 2, 1, 0, 4, 5, 6, 7}, {3, 2, 1, 0, 4, 5, 6, 7}, {3, 2, 1, 0, 4, 5, 6, 7}, {3, 2, 1, 0, 4, 5, 6, 7},
    {3, 2, 1, 0, 4, 5, 6, 7}, {3, 2, 1, 0, 4, 5, 6, 7}, {3, 2, 1, 0, 4, 5, 6, 7}, {3, 2, 1, 0, 4, 5, 6, 7},
    {3, 2, 1, 0, 4, 5, 6, 7}, {3, 2, 1, 0, 4, 5, 6, 7}, {3, 2, 1, 0, 4, 5, 6, 7}, {3, 2, 1, 0, 4, 5, 6, 7},
    {3, 2, 1, 0, 4, 5, 6, 7}, {3, 2, 1, 0, 4, 5, 6, 7}, {3, 2, 1, 0, 4, 5, 6, 7}, {3, 2, 1, 0, 4, 5, 6, 7}};

typedef struct eac_kind {
    int bmin, bmax; /* base codeword range */
    int step, c0;   /* c(b) = step * b + c0 */
    int vmin, vmax; /* clamp range of decoded values */
    int mmin;       /* smallest multiplier allowed */
} eac_kind;

static const eac_kind kinds[3] = {
    {0, 255, 1, 0, 0, 255, 1},         /* alpha8 */
    {0, 255, 8, 4, 0, 2047, 0},        /* unsigned R11 */
    {-127, 127, 8, 0, -1023, 1023, 0}, /* signed R11 */
};

static int64_t fdiv(int64_t a, int64_t b) /* floor(a / b), b > 0 */
{
    int64_t q = a / b;
    if (a % b != 0 && a < 0) q--;
    return q;
}
static int64_t cdiv(int64_t a, int64_t b) { return -fdiv(-a, b); }

static void offsets(int kind, int t, int m, int off[8])
{
    int f = kind == 0 ? m : (m ? 8 * m : 1);
    for (int i = 0; i < 8; i++) off[i] = kiln__eac_modifiers[t][i] * f;
}

static void levels(const eac_kind *k, int b, const int off[8], int lv[8])
{
    int c = k->step * b + k->c0;
    for (int i = 0; i < 8; i++) {
        int v = c + off[i];
        lv[i] = v < k->vmin ? k->vmin : (v > k->vmax ? k->vmax : v);
    }
}

/* Error of the best index per pixel; stops early once >= limit. */
static uint64_t eval_levels(const eac_target *tg, const int lv[8], uint64_t limit, uint8_t idx[16])
{
    int64_t L[8];
    for (int i = 0; i < 8; i++) L[i] = (int64_t)lv[i] * tg->scale;
    uint64_t e = 0;
    for (int p = 0; p < 16; p++) {
        uint64_t be = UINT64_MAX;
        int bi = 0;
        for (int i = 0; i < 8; i++) {
            int64_t d = tg->t[p] - L[i];
            uint64_t ed = (uint64_t)(d * d);
            if (ed < be) {
                be = ed;
                bi = i;
            }
        }
        if (idx) idx[p] = (uint8_t)bi;
        e += be;
        if (e >= limit) return e;
    }
    return e;
}

typedef struct eac_best {
    uint64_t err;
    int b, t, m;
} eac_best;

static void try_one(const eac_target *tg, const eac_kind *k, int b, int t, int m, eac_best *best)
{
    if (b < k->bmin || b > k->bmax) return;
    int off[8], lv[8];
    offsets(tg->kind, t, m, off);
    levels(k, b, off, lv);
    uint64_t e = eval_levels(tg, lv, best->err, NULL);
    if (e < best->err) {
        best->err = e;
        best->b = b;
        best->t = t;
        best->m = m;
    }
}

static uint64_t isqrt_u64(uint64_t v)
{
    uint64_t r = (uint64_t)sqrt((double)v);
    while (r > 0 && r * r > v) r--;
    while ((r + 1) * (r + 1) <= v) r++;
    return r;
}

/* floor(a / 2^sh) for |a| < 2^24, without relying on signed shifts */
static inline int floor_shift(int a, int sh) { return ((a + (1 << 24)) >> sh) - (1 << (24 - sh)); }

/* Exact search over the given (t, m) pairs: every base that could beat best->err is evaluated. */
/* A necessary condition: the `count` pixels with targets in [lo, hi] (scaled) each have error >= the
 * squared distance of that interval to the nearest level, so some level must lie within
 * isqrt((best - 1) / count) of the interval. */
/* conditions intersected per (table, multiplier); candidate base intervals kept */
#define EAC_NCOND 5
#define EAC_NIV 24
typedef struct eac_cond {
    int64_t lo, hi;
    int count;
} eac_cond;

static void exact_search(const eac_target *tg, const eac_kind *k, const eac_cond *conds, int npix, const uint8_t *tm_ok,
                         eac_best *best)
{
    const int sh = k->step == 8 ? 3 : 0;
    int plo[40], phi[40]; /* per condition: decoded values that satisfy it */
    uint64_t r_for = 0;
    for (int m = k->mmin; m < 16; m++) {
        for (int t = 0; t < 16; t++) {
            if (best->err == 0) return;
            if (tm_ok && !tm_ok[t * 16 + m]) continue;
            if (best->err != r_for) {
                for (int oi = 0; oi < npix; oi++) {
                    int64_t R = (int64_t)isqrt_u64((best->err - 1) / (uint64_t)conds[oi].count);
                    int64_t lo = cdiv(conds[oi].lo - R, tg->scale), hi = fdiv(conds[oi].hi + R, tg->scale);
                    plo[oi] = lo < -4096 ? -4096 : (int)lo;
                    phi[oi] = hi > 4096 ? 4096 : (int)hi;
                }
                r_for = best->err;
            }
            int off[8];
            offsets(tg->kind, t, m, off);
            int maxgap = 0;
            for (int j = 1; j < 8; j++) {
                int g = off[eac_sorted[t][j]] - off[eac_sorted[t][j - 1]];
                maxgap = g > maxgap ? g : maxgap;
            }
            maxgap += k->step; /* the base moves in steps too */
            /* candidate bases as sorted disjoint intervals, intersected condition by condition */
            int ca[EAC_NIV], cb[EAC_NIV], nc = 0;
            for (int oi = 0; oi < npix; oi++) {
                const int lo = plo[oi], hi = phi[oi];
                if (lo > k->vmax || hi < k->vmin) {
                    nc = 0;
                    break;
                }
                const int lo_inf = lo <= k->vmin, hi_inf = hi >= k->vmax;
                int ua[8], ub[8], nu = 0;
                if (hi - lo >= maxgap) {
                    /* the window is wider than every gap between levels: one interval, bounded by the
                     * lowest level not above hi and the highest not below lo */
                    int blo = lo_inf ? k->bmin : -floor_shift(-(lo - off[eac_sorted[t][7]] - k->c0), sh);
                    int bhi = hi_inf ? k->bmax : floor_shift(hi - off[eac_sorted[t][0]] - k->c0, sh);
                    if (blo < k->bmin) blo = k->bmin;
                    if (bhi > k->bmax) bhi = k->bmax;
                    if (blo <= bhi) {
                        ua[0] = blo;
                        ub[0] = bhi;
                        nu = 1;
                    }
                } else for (int j = 7; j >= 0; j--) { /* decreasing offsets: increasing bases */
                    const int i = eac_sorted[t][j];
                    /* c(b) + off in [lo, hi] (unbounded sides where the clamp reaches the pixel) */
                    int blo = lo_inf ? k->bmin : -floor_shift(-(lo - off[i] - k->c0), sh);
                    int bhi = hi_inf ? k->bmax : floor_shift(hi - off[i] - k->c0, sh);
                    if (blo < k->bmin) blo = k->bmin;
                    if (bhi > k->bmax) bhi = k->bmax;
                    if (blo > bhi) continue;
                    if (nu && blo <= ub[nu - 1] + 1) {
                        if (bhi > ub[nu - 1]) ub[nu - 1] = bhi;
                    } else {
                        ua[nu] = blo;
                        ub[nu] = bhi;
                        nu++;
                    }
                }
                if (oi == 0) {
                    memcpy(ca, ua, sizeof(int) * (size_t)nu);
                    memcpy(cb, ub, sizeof(int) * (size_t)nu);
                    nc = nu;
                } else {
                    int na[EAC_NIV], nbb[EAC_NIV], nn = 0, x = 0, y = 0;
                    while (x < nc && y < nu) {
                        int lo2 = ca[x] > ua[y] ? ca[x] : ua[y], hi2 = cb[x] < ub[y] ? cb[x] : ub[y];
                        if (lo2 <= hi2) {
                            if (nn < EAC_NIV) {
                                na[nn] = lo2;
                                nbb[nn] = hi2;
                                nn++;
                            } else {
                                nbb[nn - 1] = hi2; /* full: widen the last interval (a superset stays exact) */
                            }
                        }
                        if (cb[x] < ub[y])
                            x++;
                        else
                            y++;
                    }
                    memcpy(ca, na, sizeof(int) * (size_t)nn);
                    memcpy(cb, nbb, sizeof(int) * (size_t)nn);
                    nc = nn;
                }
                if (!nc) break;
            }
            for (int ci = 0; ci < nc; ci++) {
                for (int b = ca[ci]; b <= cb[ci]; b++) {
                    int lv[8];
                    levels(k, b, off, lv);
                    uint64_t e = eval_levels(tg, lv, best->err, NULL);
                    if (e < best->err) {
                        best->err = e;
                        best->b = b;
                        best->t = t;
                        best->m = m;
                    }
                }
            }
        }
    }
}

/* Range estimate: per table, the multiplier whose span fits the value range and the base that
 * centres it. est_m[t] receives the estimate. */
static void estimate(const eac_target *tg, const eac_kind *k, int brad, int mrad, eac_best *best, int est_m[16])
{
    int64_t tmin = tg->t[0], tmax = tg->t[0];
    for (int p = 1; p < 16; p++) {
        tmin = tg->t[p] < tmin ? tg->t[p] : tmin;
        tmax = tg->t[p] > tmax ? tg->t[p] : tmax;
    }
    double vmin = (double)tmin / tg->scale, vmax = (double)tmax / tg->scale;
    double range = vmax - vmin, mid = 0.5 * (vmin + vmax);
    for (int t = 0; t < 16; t++) {
        int span = kiln__eac_modifiers[t][7] - kiln__eac_modifiers[t][3];
        double unit = tg->kind == 0 ? 1.0 : 8.0;
        int m0 = (int)floor(range / (span * unit) + 0.5);
        if (m0 < k->mmin) m0 = k->mmin;
        if (m0 > 15) m0 = 15;
        if (tg->kind != 0 && m0 == 0 && range > span) m0 = 1;
        est_m[t] = m0;
        for (int m = m0 - mrad; m <= m0 + mrad; m++) {
            if (m < k->mmin || m > 15) continue;
            int off[8];
            offsets(tg->kind, t, m, off);
            double centre = 0.5 * (off[3] + off[7]);
            int b0 = (int)floor((mid - centre - k->c0) / k->step + 0.5);
            for (int b = b0 - brad; b <= b0 + brad; b++) try_one(tg, k, b, t, m, best);
        }
    }
}

static uint64_t write_block(const eac_target *tg, const eac_kind *k, const eac_best *best, int dither, uint8_t out[8])
{
    int off[8], lv[8];
    offsets(tg->kind, best->t, best->m, off);
    levels(k, best->b, off, lv);
    uint8_t idx[16];
    uint64_t e = eval_levels(tg, lv, UINT64_MAX, idx);
    if (dither) {
        /* Floyd-Steinberg inside the block over the chosen levels */
        double carry[16] = {0};
        e = 0;
        for (int p = 0; p < 16; p++) {
            double want = (double)tg->t[p] + carry[p];
            double lo = (double)k->vmin * tg->scale, hi = (double)k->vmax * tg->scale;
            want = want < lo ? lo : (want > hi ? hi : want);
            int bi = 0;
            double bd = 0;
            for (int i = 0; i < 8; i++) {
                double d = fabs(want - (double)lv[i] * tg->scale);
                if (i == 0 || d < bd) {
                    bd = d;
                    bi = i;
                }
            }
            idx[p] = (uint8_t)bi;
            int64_t d = tg->t[p] - (int64_t)lv[bi] * tg->scale;
            e += (uint64_t)(d * d);
            double r = want - (double)lv[bi] * tg->scale;
            int x = p & 3, y = p >> 2;
            if (x < 3) carry[p + 1] += r * 7 / 16;
            if (y < 3) {
                if (x > 0) carry[p + 3] += r * 3 / 16;
                carry[p + 4] += r * 5 / 16;
                if (x < 3) carry[p + 5] += r * 1 / 16;
            }
        }
    }
    uint64_t v = (uint64_t)(uint8_t)(int8_t)best->b << 56 | (uint64_t)best->m << 52 | (uint64_t)best->t << 48;
    for (int p = 0; p < 16; p++) {
        int j = (p & 3) * 4 + (p >> 2);
        v |= (uint64_t)idx[p] << (45 - 3 * j);
    }
    for (int i = 0; i < 8; i++) out[i] = (uint8_t)(v >> (56 - 8 * i));
    return e;
}

uint64_t kiln__eac_encode_channel(const eac_target *tg, int quality, int dither, uint8_t out[8])
{
    const eac_kind *k = &kinds[tg->kind];
    eac_best best = {UINT64_MAX, k->bmin < 0 ? 0 : k->bmin, 0, k->mmin};
    int est_m[16];
    estimate(tg, k, quality == KILN_QUALITY_FAST ? 1 : 0, quality == KILN_QUALITY_FAST ? 0 : 1, &best, est_m);
    if (quality >= KILN_QUALITY_NORMAL && best.err > 0) {
        /* conditions: the whole block, its halves and quarters (sorted values), then every distinct
         * value with its multiplicity, extremes first */
        int64_t v[16];
        for (int p = 0; p < 16; p++) {
            int64_t x = tg->t[p];
            int j = p;
            while (j > 0 && v[j - 1] > x) {
                v[j] = v[j - 1];
                j--;
            }
            v[j] = x;
        }
        eac_cond order[40];
        int n = 0;
        /* the extreme values first (narrowest windows), then the quarters and halves; further
         * conditions cost more to intersect than the few extra bases they remove (every surviving
         * base is evaluated exactly, so fewer conditions never change the result) */
        int i0 = 0, i1 = 15;
        while (i0 < 15 && v[i0 + 1] == v[0]) i0++;
        while (i1 > 0 && v[i1 - 1] == v[15]) i1--;
        order[n++] = (eac_cond){v[0], v[0], i0 + 1};
        if (v[15] != v[0]) order[n++] = (eac_cond){v[15], v[15], 16 - i1};
        for (int h = 0; h < 4; h++) order[n++] = (eac_cond){v[h * 4], v[h * 4 + 3], 4};
        for (int h = 0; h < 2; h++) order[n++] = (eac_cond){v[h * 8], v[h * 8 + 7], 8};
        if (n > EAC_NCOND) n = EAC_NCOND;
        if (quality == KILN_QUALITY_NORMAL) {
            uint8_t ok[256];
            memset(ok, 0, sizeof ok);
            for (int t = 0; t < 16; t++)
                for (int m = est_m[t] - 2; m <= est_m[t] + 2; m++)
                    if (m >= 0 && m < 16) ok[t * 16 + m] = 1;
            exact_search(tg, k, order, n, ok, &best);
        } else {
            exact_search(tg, k, order, n, NULL, &best);
        }
    }
    return write_block(tg, k, &best, dither, out);
}

/* ---------------------------------------------------------------- targets */

void kiln__eac_target_alpha8(eac_target *tg, const kiln_block *blk, int channel)
{
    tg->kind = 0;
    tg->scale = 1;
    for (int p = 0; p < 16; p++) tg->t[p] = blk->rgba8[p * 4 + channel];
}

void kiln__eac_target_u11(eac_target *tg, const kiln_block *blk, int channel)
{
    tg->kind = 1;
    tg->scale = 65535;
    for (int p = 0; p < 16; p++) tg->t[p] = (int64_t)blk->rgba16[p * 4 + channel] * 2047;
}

void kiln__eac_target_s11(eac_target *tg, const kiln_block *blk, int channel)
{
    tg->kind = 2;
    tg->scale = 65536;
    for (int p = 0; p < 16; p++) {
        float f = blk->f[p * 4 + channel];
        if (!(f >= -1.0f)) f = f > 0 ? 1.0f : -1.0f; /* also NaN -> -1 */
        if (f > 1.0f) f = 1.0f;
        tg->t[p] = llround((double)f * 1023.0 * 65536.0);
    }
}

/* ---------------------------------------------------------------- block encoder entries */

static int is_signed(kiln_format f)
{
    const kiln_format_info *fi = kiln_format_get_info(f);
    return fi && (fi->flags & KILN_FF_SIGNED);
}

void kiln__enc_eac_r11(const kiln_block *blk, uint8_t *out, const kiln_encode_params *params)
{
    eac_target tg;
    if (is_signed(params->format))
        kiln__eac_target_s11(&tg, blk, 0);
    else
        kiln__eac_target_u11(&tg, blk, 0);
    kiln__eac_encode_channel(&tg, params->quality, params->dither, out);
}

void kiln__enc_eac_rg11(const kiln_block *blk, uint8_t *out, const kiln_encode_params *params)
{
    int s = is_signed(params->format);
    for (int ch = 0; ch < 2; ch++) {
        eac_target tg;
        if (s)
            kiln__eac_target_s11(&tg, blk, ch);
        else
            kiln__eac_target_u11(&tg, blk, ch);
        kiln__eac_encode_channel(&tg, params->quality, params->dither, out + 8 * ch);
    }
}

/* bc6h_enc.c - BC6H encoder (UF16 and SF16): every one of the 14 modes and all 32 two-subset
 * partitions, plus a CPU model of the GPURealTimeBC6H design (the seed design betsy ships).
 *
 * Input handling (documented in docs/PERFORMANCE.md, "BC6H"):
 *   - NaN -> 0 (the encode driver already maps NaN to 0 for F32 images; done again here);
 *   - +Inf and values above 65504 -> 65504 (the largest finite half); -Inf and values below -65504
 *     -> -65504 (SF) ;
 *   - UF16: negatives (and -0) -> 0;  SF16: -0 -> 0;
 *   - every value is rounded to the nearest half (round to nearest even) first: that half is the
 *     target the encoder tries to reproduce.
 *
 * Domains. The decoder (bc6h.c) unquantizes an endpoint q of EPB bits to a 16-bit value U(q),
 * interpolates ((64 - w) * U(a) + w * U(b) + 32) >> 6 and "finishes" with * 31 >> 6 (UF) or * 31 >> 5
 * (SF, on the magnitude), giving a half bit pattern. So a decoded half is (nearly) linear in the
 * unquantized endpoints, and the encoder fits lines in that "unquantized" domain (u = half * 64/31 for
 * UF, * 32/31 for SF), then measures errors exactly by running the decoder's integer arithmetic.
 *
 * Error metric, per texel channel: (ln(1 + |y|) - ln(1 + |x|))^2 (signed for SF: the RMSLE the issue
 * measures, as GPURealTimeBC6H computes it) plus MU (0.03) times the squared difference in half ULPs
 * scaled to the same units (ln 2 / 1024 per ULP): the second term keeps some relative precision below
 * 1.0, where ln(1 + v) is flat, for tone mapping at high exposures. Fits (principal axis, least
 * squares) work in the unquantized domain weighted by this metric's linearisation at the target.
 *
 * Qualities (candidates = mode x partition; all are measured exactly; the best K are refined):
 *   fast   - one subset only (modes 3, 7, 11, 15), principal-axis fit, one least-squares pass.
 *   normal - + the 10 two-subset modes on the 4 partitions whose principal-axis fit leaves the least
 *            residual; the best 2 candidates refined (least squares x2, +-1 local search).
 *   high   - 12 partitions, best 4 refined (least squares x3, +-1 local search).
 *   max    - all 32 partitions x all 14 modes measured, best 12 refined (least squares x4, +-2 local
 *            search, repeated while it improves).
 * Refinement works on the quantized endpoints themselves, inside each mode's range limits: endpoint
 * precision, and for the transformed (delta) modes the signed delta width of E1..E3 relative to E0
 * (no reliance on the decoder's wrap-around). Anchor texels only take indices with a zero top bit
 * (endpoints are oriented so that this costs nothing in the usual case).
 *
 * Everything is per block, integer or float arithmetic in a fixed order: the bytes do not depend on
 * the thread count.
 */
#include "codec/bc_tables.h"
#include "codec/codec.h"
#include "codec/bc6h_modes.h"

#ifndef BC6H_MU
#define BC6H_MU 0.03f /* see the error metric above */
#endif
#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- mode table
 * Khronos table-bptcblockformat, shared with the decoder (bc6h_modes.h); tests/unit/test_bc6h_encode.c
 * checks every mode's packing against kiln__bc6h_unpack. */

typedef span espan;
typedef bc6h_mode emode;
#define emodes kiln__bc6h_modes
#define FEND END

static int mode_index(int value)
{
    for (int i = 0; i < 14; i++)
        if (emodes[i].value == value) return i;
    return -1;
}

/* ---------------------------------------------------------------- decoder arithmetic */

static int32_t unq(int32_t x, int epb, int sf)
{
    if (!sf) {
        if (epb >= 15) return x;
        if (x == 0) return 0;
        if (x == (int32_t)((1u << epb) - 1u)) return 0xFFFF;
        return (int32_t)((((uint32_t)x << 15) + 0x4000u) >> (epb - 1));
    }
    if (epb >= 16) return x;
    int neg = x < 0;
    uint32_t mag = (uint32_t)(neg ? -x : x);
    int32_t r;
    if (mag == 0) r = 0;
    else if (mag >= (1u << (epb - 1)) - 1u) r = 0x7FFF;
    else r = (int32_t)(((mag << 15) + 0x4000u) >> (epb - 1));
    return neg ? -r : r;
}

static inline int32_t floor_div64(int32_t v) { return v >= 0 ? v / 64 : -((-v + 63) / 64); }

/* The decoded half as a signed integer (SF: sign-magnitude -> signed). */
static inline int32_t finish_x(int32_t v, int sf)
{
    if (!sf) return (int32_t)(((uint32_t)v * 31u) >> 6);
    if (v < 0) return -(int32_t)(((uint32_t)(-v) * 31u) >> 5);
    return (int32_t)(((uint32_t)v * 31u) >> 5);
}

static inline int32_t interp(int32_t a, int32_t b, int w) { return floor_div64((64 - w) * a + w * b + 32); }

/* ---------------------------------------------------------------- block state */

typedef struct enc {
    int sf;
    int32_t x[16][3]; /* target halves, signed */
    float u[16][3];   /* targets in the unquantized domain */
    float w[16][3];   /* fitting weights (the error's linearisation at the target) */
    float L[16][3];   /* targets as sign(v) ln(1 + |v|) */
} enc;

/* The error of one channel: (ln(1 + |y|) - ln(1 + |x|))^2 with signs, plus MU times the squared
 * difference in half ULPs scaled to the same units (ln 2 / 1024 per ULP, the log step of a half
 * above 1), which keeps relative precision in values below 1 where ln(1 + v) is flat. */
#define MU_LN2SQ (BC6H_MU * 0.480453014f)
#define ULP_K2 (MU_LN2SQ / 1048576.0f)
static inline float slog(int32_t x)
{
    float v = log1pf(kiln__half_to_float((uint16_t)(x < 0 ? -x : x)));
    return x < 0 ? -v : v;
}
static inline float chan_cost(float lp, float lt, int32_t px, int32_t xt)
{
    float dl = lp - lt, d = (float)(px - xt);
    return dl * dl + ULP_K2 * d * d;
}

static uint16_t to_half(float v, int sf)
{
    if (v != v) v = 0.0f;
    if (!sf && v < 0.0f) v = 0.0f;
    if (v > 65504.0f) v = 65504.0f;
    if (v < -65504.0f) v = -65504.0f;
    uint16_t h = kiln__float_to_half(v);
    if (h == 0x8000u) h = 0;
    return h;
}

static void enc_init(enc *E, const float *rgba, int sf)
{
    E->sf = sf;
    const float k = sf ? 32.0f / 31.0f : 64.0f / 31.0f;
    for (int t = 0; t < 16; t++)
        for (int c = 0; c < 3; c++) {
            uint16_t h = to_half(rgba[t * 4 + c], sf);
            int32_t mag = h & 0x7FFF;
            int32_t x = (h & 0x8000u) ? -mag : mag;
            E->x[t][c] = x;
            E->u[t][c] = x == 0 ? 0.0f : (x > 0 ? ((float)x + 0.5f) * k : ((float)x - 0.5f) * k);
            int e = (mag >> 10) & 31;
            float step = ldexpf(1.0f, (e == 0 ? 1 : e) - 25);
            float v = fabsf(kiln__half_to_float((uint16_t)mag));
            float wv = step * 1024.0f / (1.0f + v);
            E->w[t][c] = wv * wv + MU_LN2SQ;
            E->L[t][c] = slog(x);
        }
}

/* For the GPU encoder (src/gpu/gpu_encode_bc6h.c): this file's log term and fitting weight of every
 * half magnitude below 0x7C00 (slog[m], w[m], as enc_init computes them) and its float constants
 * (ULP_K2, 1e-12f, 64/31, 32/31, 1/3), so that the GPU's arithmetic starts from the same values. */
void kiln__bc6h_enc_tables(float *slog_mag, float *w_mag, float consts[5]);
void kiln__bc6h_enc_tables(float *slog_mag, float *w_mag, float consts[5])
{
    for (int32_t mag = 0; mag < 0x7C00; mag++) {
        int e = (mag >> 10) & 31;
        float step = ldexpf(1.0f, (e == 0 ? 1 : e) - 25);
        float v = fabsf(kiln__half_to_float((uint16_t)mag));
        float wv = step * 1024.0f / (1.0f + v);
        w_mag[mag] = wv * wv + MU_LN2SQ;
        slog_mag[mag] = slog(mag);
    }
    consts[0] = ULP_K2;
    consts[1] = 1e-12f;
    consts[2] = 64.0f / 31.0f;
    consts[3] = 32.0f / 31.0f;
    consts[4] = 1.0f / 3.0f;
}

static void q_range(const emode *m, int sf, int32_t *lo, int32_t *hi)
{
    if (!sf) {
        *lo = 0;
        *hi = (int32_t)((1u << m->epb) - 1u);
    } else {
        *hi = (int32_t)((1u << (m->epb - 1)) - 1u);
        *lo = -*hi;
    }
}

static int valid_q(const emode *m, int sf, const int32_t q[4][3])
{
    const int nep = m->pb ? 4 : 2;
    int32_t lo, hi;
    q_range(m, sf, &lo, &hi);
    for (int e = 0; e < nep; e++)
        for (int c = 0; c < 3; c++) {
            if (q[e][c] < lo || q[e][c] > hi) return 0;
            if (m->transformed && e > 0) {
                int32_t d = q[e][c] - q[0][c];
                int32_t dl = -(int32_t)(1u << (m->delta[c] - 1));
                if (d < dl || d > -dl - 1) return 0;
            }
        }
    return 1;
}

/* Palettes of both subsets: pal[s][i][c]. */
static void palettes(const enc *E, const emode *m, const int32_t q[4][3], int32_t pal[2][16][3])
{
    const int ns = m->pb ? 2 : 1, ib = ns == 2 ? 3 : 4, n = 1 << ib;
    const uint8_t *W = kiln__bptc_weights((unsigned)ib);
    for (int s = 0; s < ns; s++)
        for (int c = 0; c < 3; c++) {
            int32_t a = unq(q[2 * s][c], m->epb, E->sf), b = unq(q[2 * s + 1][c], m->epb, E->sf);
            for (int i = 0; i < n; i++) pal[s][i][c] = finish_x(interp(a, b, W[i]), E->sf);
        }
}

/* Best index per texel for fixed endpoints (anchors limited to the lower half); the error. */
static float assign(const enc *E, const emode *m, int part, const int32_t q[4][3], uint8_t idx[16])
{
    int32_t pal[2][16][3];
    palettes(E, m, q, pal);
    const unsigned ns = m->pb ? 2u : 1u;
    const int n = ns == 2 ? 8 : 16;
    float lp[2][16][3];
    for (unsigned s = 0; s < ns; s++)
        for (int i = 0; i < n; i++)
            for (int c = 0; c < 3; c++) lp[s][i][c] = slog(pal[s][i][c]);
    float total = 0.0f;
    for (unsigned t = 0; t < 16; t++) {
        unsigned s = kiln__bptc_subset(ns, (unsigned)part, t);
        int lim = kiln__bptc_is_anchor(ns, (unsigned)part, t) ? n / 2 : n;
        float best = INFINITY;
        int bi = 0;
        for (int i = 0; i < lim; i++) {
            float e = 0.0f;
            for (int c = 0; c < 3; c++) e += chan_cost(lp[s][i][c], E->L[t][c], pal[s][i][c], E->x[t][c]);
            if (e < best) {
                best = e;
                bi = i;
            }
        }
        idx[t] = (uint8_t)bi;
        total += best;
    }
    return total;
}

/* The error of channel c for fixed indices. */
static float chan_err(const enc *E, const emode *m, int part, const int32_t q[4][3], int c, const uint8_t idx[16])
{
    const unsigned ns = m->pb ? 2u : 1u;
    const uint8_t *W = kiln__bptc_weights(ns == 2 ? 3u : 4u);
    int32_t a[2], b[2];
    for (unsigned s = 0; s < ns; s++) {
        a[s] = unq(q[2 * s][c], m->epb, E->sf);
        b[s] = unq(q[2 * s + 1][c], m->epb, E->sf);
    }
    float total = 0.0f;
    for (unsigned t = 0; t < 16; t++) {
        unsigned s = kiln__bptc_subset(ns, (unsigned)part, t);
        int32_t px = finish_x(interp(a[s], b[s], W[idx[t]]), E->sf);
        total += chan_cost(slog(px), E->L[t][c], px, E->x[t][c]);
    }
    return total;
}

/* Nearest endpoint value to u in [lo, hi]. */
static int32_t quant1(float u, const emode *m, int sf, int32_t lo, int32_t hi)
{
    if (u > 70000.0f) u = 70000.0f;
    if (u < -70000.0f) u = -70000.0f;
    if (u != u) u = 0.0f;
    int32_t q0 = (int32_t)floorf(u * ldexpf(1.0f, m->epb - 16));
    int32_t best = lo;
    float bd = INFINITY;
    for (int32_t q = q0 - 1; q <= q0 + 1; q++) {
        int32_t qq = q < lo ? lo : q > hi ? hi : q;
        float d = fabsf((float)unq(qq, m->epb, sf) - u);
        if (d < bd) {
            bd = d;
            best = qq;
        }
    }
    return best;
}

/* Float endpoints (unquantized domain) to valid quantized ones: nearest values, then the deltas
 * clamped into their range for the transformed modes. */
static void quantize(const enc *E, const emode *m, const float ef[4][3], int32_t q[4][3])
{
    const int nep = m->pb ? 4 : 2;
    int32_t lo, hi;
    q_range(m, E->sf, &lo, &hi);
    memset(q, 0, sizeof(int32_t) * 12);
    for (int e = 0; e < nep; e++)
        for (int c = 0; c < 3; c++) q[e][c] = quant1(ef[e][c], m, E->sf, lo, hi);
    if (m->transformed)
        for (int e = 1; e < nep; e++)
            for (int c = 0; c < 3; c++) {
                int32_t dl = -(int32_t)(1u << (m->delta[c] - 1)), dh = -dl - 1;
                int32_t l = q[0][c] + dl, h = q[0][c] + dh;
                if (l < lo) l = lo;
                if (h > hi) h = hi;
                if (q[e][c] < l) q[e][c] = l;
                if (q[e][c] > h) q[e][c] = h;
            }
}

/* Principal-axis fit of subset s; returns the weighted residual off the line. ef0/ef1: endpoints
 * oriented so that the anchor is nearer ef0. */
static float fit_subset(const enc *E, unsigned ns, unsigned part, unsigned s, float ef0[3], float ef1[3])
{
    float sw = 0.0f, mean[3] = {0, 0, 0};
    float tw[16];
    for (unsigned t = 0; t < 16; t++) {
        tw[t] = 0.0f;
        if (kiln__bptc_subset(ns, part, t) != s) continue;
        tw[t] = (E->w[t][0] + E->w[t][1] + E->w[t][2]) * (1.0f / 3.0f) + 1e-12f;
        sw += tw[t];
        for (int c = 0; c < 3; c++) mean[c] += tw[t] * E->u[t][c];
    }
    for (int c = 0; c < 3; c++) mean[c] /= sw;
    float cov[6] = {0, 0, 0, 0, 0, 0};
    for (unsigned t = 0; t < 16; t++) {
        if (tw[t] == 0.0f) continue;
        float d0 = E->u[t][0] - mean[0], d1 = E->u[t][1] - mean[1], d2 = E->u[t][2] - mean[2];
        cov[0] += tw[t] * d0 * d0;
        cov[1] += tw[t] * d0 * d1;
        cov[2] += tw[t] * d0 * d2;
        cov[3] += tw[t] * d1 * d1;
        cov[4] += tw[t] * d1 * d2;
        cov[5] += tw[t] * d2 * d2;
    }
    /* power iteration from the row with the largest diagonal */
    float ax[3];
    if (cov[0] >= cov[3] && cov[0] >= cov[5]) ax[0] = cov[0], ax[1] = cov[1], ax[2] = cov[2];
    else if (cov[3] >= cov[5]) ax[0] = cov[1], ax[1] = cov[3], ax[2] = cov[4];
    else ax[0] = cov[2], ax[1] = cov[4], ax[2] = cov[5];
    for (int it = 0; it < 8; it++) {
        float n0 = cov[0] * ax[0] + cov[1] * ax[1] + cov[2] * ax[2];
        float n1 = cov[1] * ax[0] + cov[3] * ax[1] + cov[4] * ax[2];
        float n2 = cov[2] * ax[0] + cov[4] * ax[1] + cov[5] * ax[2];
        float len = fmaxf(fabsf(n0), fmaxf(fabsf(n1), fabsf(n2)));
        if (!(len > 0.0f)) break;
        ax[0] = n0 / len, ax[1] = n1 / len, ax[2] = n2 / len;
    }
    float len = sqrtf(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);
    if (len > 0.0f) ax[0] /= len, ax[1] /= len, ax[2] /= len;
    else ax[0] = ax[1] = ax[2] = 0.0f;
    float tmin = INFINITY, tmax = -INFINITY, resid = 0.0f, tanchor = 0.0f;
    unsigned anchor = s == 0 ? 0u : kiln__bptc_anchor2[part];
    for (unsigned t = 0; t < 16; t++) {
        if (tw[t] == 0.0f) continue;
        float d0 = E->u[t][0] - mean[0], d1 = E->u[t][1] - mean[1], d2 = E->u[t][2] - mean[2];
        float p = d0 * ax[0] + d1 * ax[1] + d2 * ax[2];
        float r = d0 * d0 + d1 * d1 + d2 * d2 - p * p;
        resid += tw[t] * (r > 0.0f ? r : 0.0f);
        if (p < tmin) tmin = p;
        if (p > tmax) tmax = p;
        if (t == anchor) tanchor = p;
    }
    if (tanchor - tmin > tmax - tanchor) {
        float tmp = tmin;
        tmin = tmax;
        tmax = tmp;
    }
    for (int c = 0; c < 3; c++) {
        ef0[c] = mean[c] + ax[c] * tmin;
        ef1[c] = mean[c] + ax[c] * tmax;
    }
    return resid;
}

/* Weighted least squares endpoints (unquantized domain) for fixed indices. */
static void ls_fit(const enc *E, const emode *m, int part, const uint8_t idx[16], float ef[4][3])
{
    const unsigned ns = m->pb ? 2u : 1u;
    const uint8_t *W = kiln__bptc_weights(ns == 2 ? 3u : 4u);
    for (unsigned s = 0; s < ns; s++)
        for (int c = 0; c < 3; c++) {
            double aa = 0, ab = 0, bb = 0, ax = 0, bx = 0, sw = 0, sx = 0;
            for (unsigned t = 0; t < 16; t++) {
                if (kiln__bptc_subset(ns, (unsigned)part, t) != s) continue;
                double w = (double)E->w[t][c] + 1e-12, be = W[idx[t]] / 64.0, al = 1.0 - be, u = E->u[t][c];
                aa += w * al * al;
                ab += w * al * be;
                bb += w * be * be;
                ax += w * al * u;
                bx += w * be * u;
                sw += w;
                sx += w * u;
            }
            double det = aa * bb - ab * ab;
            if (det > 1e-9 * (aa * bb) && det > 0.0) {
                ef[2 * s][c] = (float)((ax * bb - bx * ab) / det);
                ef[2 * s + 1][c] = (float)((bx * aa - ax * ab) / det);
            } else {
                ef[2 * s][c] = ef[2 * s + 1][c] = (float)(sx / sw);
            }
        }
}

/* ---------------------------------------------------------------- candidates */

typedef struct cand {
    int mi, part;
    int32_t q[4][3];
    uint8_t idx[16];
    float err;
} cand;

/* Transformed modes: the other way to meet the delta limits - move E0 (per channel) as little as
 * possible so that E1..E3 fit around it unchanged, or, when their spread is wider than the window,
 * centre the window on them and clamp. Returns 0 when nothing had to change. */
static int recentre(const enc *E, const emode *m, const float ef[4][3], int32_t q[4][3])
{
    const int nep = m->pb ? 4 : 2;
    int32_t lo, hi, raw[4][3];
    q_range(m, E->sf, &lo, &hi);
    for (int e = 0; e < nep; e++)
        for (int c = 0; c < 3; c++) raw[e][c] = quant1(ef[e][c], m, E->sf, lo, hi);
    int changed = 0;
    for (int c = 0; c < 3; c++) {
        int32_t dl = -(int32_t)(1u << (m->delta[c] - 1)), dh = -dl - 1;
        int32_t omin = raw[1][c], omax = raw[1][c];
        for (int e = 2; e < nep; e++) {
            if (raw[e][c] < omin) omin = raw[e][c];
            if (raw[e][c] > omax) omax = raw[e][c];
        }
        int32_t a = omax - dh, b = omin - dl, e0 = raw[0][c];
        if (a <= b) e0 = e0 < a ? a : e0 > b ? b : e0;
        else e0 = (a + b) / 2;
        if (e0 < lo) e0 = lo;
        if (e0 > hi) e0 = hi;
        if (e0 != raw[0][c]) changed = 1;
        q[0][c] = e0;
        for (int e = 1; e < nep; e++) {
            int32_t l = e0 + dl < lo ? lo : e0 + dl, h = e0 + dh > hi ? hi : e0 + dh;
            q[e][c] = raw[e][c] < l ? l : raw[e][c] > h ? h : raw[e][c];
        }
    }
    return changed;
}

static void cand_make(const enc *E, int mi, int part, const float ef[4][3], cand *c)
{
    const emode *m = &emodes[mi];
    c->mi = mi;
    c->part = part;
    quantize(E, m, ef, c->q);
    c->err = assign(E, m, part, c->q, c->idx);
    if (m->transformed) {
        cand n = *c;
        if (recentre(E, m, ef, n.q)) {
            n.err = assign(E, m, part, n.q, n.idx);
            if (n.err < c->err) *c = n;
        }
    }
}

static void refine(const enc *E, cand *c, int ls_iters, int radius)
{
    const emode *m = &emodes[c->mi];
    const int nep = m->pb ? 4 : 2;
    for (int it = 0; it < ls_iters; it++) {
        float ef[4][3];
        ls_fit(E, m, c->part, c->idx, ef);
        cand n;
        cand_make(E, c->mi, c->part, (const float(*)[3])ef, &n);
        if (!(n.err < c->err)) break;
        *c = n;
    }
    if (radius <= 0) return;
    for (int round = 0; round < 4; round++) {
        cand n = *c;
        for (int ch = 0; ch < 3; ch++) {
            float ce = chan_err(E, m, n.part, n.q, ch, n.idx);
            for (int pass = 0; pass < 3; pass++) {
                int improved = 0;
                for (int e = 0; e < nep; e++)
                    for (int d = -radius; d <= radius; d++) {
                        if (!d) continue;
                        int32_t old = n.q[e][ch];
                        n.q[e][ch] = old + d;
                        float ne;
                        if (valid_q(m, E->sf, (const int32_t(*)[3])n.q) &&
                            (ne = chan_err(E, m, n.part, n.q, ch, n.idx)) < ce) {
                            ce = ne;
                            improved = 1;
                        } else {
                            n.q[e][ch] = old;
                        }
                    }
                if (!improved) break;
            }
        }
        n.err = assign(E, m, n.part, n.q, n.idx);
        if (!(n.err < c->err)) break;
        *c = n;
    }
}

/* Keeps the k best candidates (ties: the earlier one) sorted by error. */
static void keep_best(cand *list, int *count, int k, const cand *c)
{
    int n = *count;
    if (n == k && !(c->err < list[n - 1].err)) return;
    int pos = n < k ? n : k - 1;
    while (pos > 0 && c->err < list[pos - 1].err) {
        list[pos] = list[pos - 1];
        pos--;
    }
    list[pos] = *c;
    if (n < k) *count = n + 1;
}

typedef struct qcfg {
    int partitions, keep, ls_iters, radius;
} qcfg;

static const qcfg qcfgs[4] = {
    {0, 1, 1, 0},   /* fast */
    {4, 2, 2, 1},   /* normal */
    {12, 4, 3, 1},  /* high */
    {32, 12, 4, 2}, /* max */
};

/* The best candidate; only_mode >= 0 restricts the search to one mode (tests). */
static void search(const enc *E, int quality, int only_mode, cand *best)
{
    qcfg cfg = qcfgs[quality < 0 ? 0 : quality > 3 ? 3 : quality];
    int only_mi = only_mode >= 0 ? mode_index(only_mode) : -1;
    if (only_mi >= 0 && emodes[only_mi].pb) {
        if (cfg.partitions == 0) cfg.partitions = 4;
    }
    cand list[16];
    int count = 0;

    float ef[4][3];
    memset(ef, 0, sizeof ef);
    fit_subset(E, 1, 0, 0, ef[0], ef[1]);
    for (int mi = 10; mi < 14; mi++) {
        if (only_mi >= 0 && mi != only_mi) continue;
        cand c;
        cand_make(E, mi, 0, (const float(*)[3])ef, &c);
        keep_best(list, &count, cfg.keep, &c);
    }

    if (cfg.partitions > 0 && (only_mi < 0 || emodes[only_mi].pb)) {
        float pef[32][4][3], resid[32];
        int order[32];
        for (int p = 0; p < 32; p++) {
            resid[p] = fit_subset(E, 2, (unsigned)p, 0, pef[p][0], pef[p][1]) +
                       fit_subset(E, 2, (unsigned)p, 1, pef[p][2], pef[p][3]);
            order[p] = p;
        }
        /* partitions by residual (stable: ties keep the lower number) */
        for (int i = 1; i < 32; i++) {
            int v = order[i], j = i;
            while (j > 0 && resid[v] < resid[order[j - 1]]) {
                order[j] = order[j - 1];
                j--;
            }
            order[j] = v;
        }
        for (int k = 0; k < cfg.partitions; k++) {
            int p = order[k];
            for (int mi = 0; mi < 10; mi++) {
                if (only_mi >= 0 && mi != only_mi) continue;
                cand c;
                cand_make(E, mi, p, (const float(*)[3])pef[p], &c);
                keep_best(list, &count, cfg.keep, &c);
            }
        }
    }
    *best = list[0];
    for (int i = 0; i < count; i++) {
        refine(E, &list[i], cfg.ls_iters, cfg.radius);
        if (list[i].err < best->err) *best = list[i];
    }
}

/* ---------------------------------------------------------------- packing */

static void put_bits(uint64_t q[2], unsigned *pos, uint32_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++, (*pos)++)
        if ((v >> i) & 1u) q[*pos >> 6] |= 1ull << (*pos & 63u);
}

int kiln__bc6h_pack(int mode, int partition, const int32_t ep[4][3], const uint8_t idx[16], int is_signed,
                    uint8_t out[16])
{
    int mi = mode_index(mode);
    if (mi < 0) return 0;
    const emode *m = &emodes[mi];
    const unsigned ns = m->pb ? 2u : 1u, ib = ns == 2 ? 3u : 4u;
    if (ns == 1 && partition != 0) return 0;
    if (partition < 0 || partition > 31) return 0;
    if (!valid_q(m, is_signed, ep)) return 0;
    for (unsigned t = 0; t < 16; t++) {
        unsigned lim = kiln__bptc_is_anchor(ns, (unsigned)partition, t) ? 1u << (ib - 1) : 1u << ib;
        if (idx[t] >= lim) return 0;
    }
    uint32_t f[FEND] = {0};
    const uint32_t emask = (uint32_t)((1u << m->epb) - 1u);
    for (unsigned e = 0; e < 2 * ns; e++)
        for (int c = 0; c < 3; c++) {
            if (e == 0 || !m->transformed) f[e * 3 + c] = (uint32_t)ep[e][c] & emask;
            else f[e * 3 + c] = (uint32_t)(ep[e][c] - ep[0][c]) & ((1u << m->delta[c]) - 1u);
        }
    f[PB] = (uint32_t)partition;
    f[MB] = m->value;
    uint64_t q[2] = {0, 0};
    unsigned pos = 0;
    for (const espan *s = m->spans; s->field != FEND; s++) {
        if (s->a >= s->b) {
            unsigned n = s->a - s->b + 1u;
            put_bits(q, &pos, f[s->field] >> s->b, n);
        } else {
            for (unsigned bit = s->b + 1; bit-- > s->a;) put_bits(q, &pos, f[s->field] >> bit, 1);
        }
    }
    for (unsigned t = 0; t < 16; t++) {
        unsigned n = ib - (unsigned)kiln__bptc_is_anchor(ns, (unsigned)partition, t);
        put_bits(q, &pos, idx[t], n);
    }
    for (int i = 0; i < 8; i++) {
        out[i] = (uint8_t)(q[0] >> (8 * i));
        out[i + 8] = (uint8_t)(q[1] >> (8 * i));
    }
    return 1;
}

static void pack_cand(const enc *E, const cand *c, uint8_t out[16])
{
    if (!kiln__bc6h_pack(emodes[c->mi].value, c->part, (const int32_t(*)[3])c->q, c->idx, E->sf, out))
        memset(out, 0, 16); /* not reached: candidates are valid by construction */
}

/* ---------------------------------------------------------------- entry points */

float kiln__enc_bc6h_rgb(const float rgba[64], int is_signed, int quality, int only_mode, uint8_t out[16])
{
    enc E;
    enc_init(&E, rgba, is_signed);
    cand best;
    search(&E, quality, only_mode, &best);
    pack_cand(&E, &best, out);
    return best.err;
}

void kiln__enc_bc6h(const kiln_block *src, uint8_t *out, const kiln_encode_params *params)
{
    int sf = params->format == KILN_FORMAT_BC6H_SFLOAT;
    (void)kiln__enc_bc6h_rgb(src->f, sf, (int)params->quality, -1, out);
}

/* ---------------------------------------------------------------- the seed design (CPU model)
 * GPURealTimeBC6H (Narkowicz), the BC6H encoder betsy ships, re-expressed here: UF16 only (negative
 * inputs clamp to 0 here too), luminance-weighted MSLE in log2(1 + x). Fast: one subset, mode 3 (D3D
 * "mode 11", 10-bit endpoints) from the colour bounding box inset by up to 1/32 of its log2 extent,
 * one least-squares pass on indices taken along the box diagonal in half-bit space. Quality: also
 * the partition whose per-subset bounding-box lines leave the least squared distance, encoded in
 * modes 1 (D3D "mode 2", 7 bits + 6-bit deltas) and 14 (D3D "mode 6", 9 bits + 5-bit deltas) with
 * truncating quantization and clamped deltas; the lowest MSLE of the three wins. The MSLE is computed
 * here with kiln's exact decoder (the HLSL uses an approximate unquantize); degenerate directions
 * (zero-extent boxes), which divide by zero in the HLSL, take index 0 here. */

static float h16(float v) { return (float)kiln__float_to_half(v); }
static float f16(float bits)
{
    if (bits < 0.0f) bits = 0.0f;
    if (bits > 65504.0f) bits = 65504.0f;
    return kiln__half_to_float((uint16_t)bits);
}

static unsigned seed_index(float pos, float p0, float p1, int bits)
{
    if (p1 == p0) return 0;
    float r = (pos - p0) / (p1 - p0);
    float v = bits == 4 ? r * 14.93333f + 0.03333f + 0.5f : r * 6.98182f + 0.00909f + 0.5f;
    float hi = bits == 4 ? 15.0f : 7.0f;
    v = v < 0.0f ? 0.0f : v > hi ? hi : v;
    return (unsigned)v;
}

static float seed_msle(const float tex[16][3], const uint8_t block[16])
{
    uint16_t h[48];
    kiln__dec_bc6h_half(block, 0, h);
    static const float lw[3] = {0.299f, 0.587f, 0.114f};
    float e = 0.0f;
    for (int t = 0; t < 16; t++)
        for (int c = 0; c < 3; c++) {
            float d = log2f((kiln__half_to_float(h[t * 3 + c]) + 1.0f) / (tex[t][c] + 1.0f));
            e += lw[c] * d * d;
        }
    return e;
}

/* Least squares on the diagonal indices of a subset (mask of texels), in half-bit space. */
static void seed_optimize(const float tex[16][3], uint32_t mask, int bits, float mn[3], float mx[3], int clamp_box,
                          const float bmn[3], const float bmx[3])
{
    float dir[3], sum = 0.0f;
    for (int c = 0; c < 3; c++) dir[c] = mx[c] - mn[c], sum += dir[c];
    if (!(sum > 0.0f)) return;
    for (int c = 0; c < 3; c++) dir[c] /= sum;
    float p0 = h16(mn[0] * dir[0] + mn[1] * dir[1] + mn[2] * dir[2]);
    float p1 = h16(mx[0] * dir[0] + mx[1] * dir[1] + mx[2] * dir[2]);
    float at[3] = {0, 0, 0}, bt[3] = {0, 0, 0}, ab = 0, aa = 0, bb = 0;
    const float top = bits == 4 ? 15.0f : 7.0f;
    for (int t = 0; t < 16; t++) {
        if (!((mask >> t) & 1u)) continue;
        float pos = h16(tex[t][0] * dir[0] + tex[t][1] * dir[1] + tex[t][2] * dir[2]);
        float be = (float)seed_index(pos, p0, p1, bits) / top, al = 1.0f - be;
        for (int c = 0; c < 3; c++) {
            float hv = h16(tex[t][c]);
            at[c] += al * hv;
            bt[c] += be * hv;
        }
        ab += al * be;
        aa += al * al;
        bb += be * be;
    }
    float det = aa * bb - ab * ab;
    if (fabsf(det) > 0.00001f) {
        float r = 1.0f / det;
        for (int c = 0; c < 3; c++) {
            float a = f16(r * (at[c] * bb - bt[c] * ab));
            float b = f16(r * (bt[c] * aa - at[c] * ab));
            if (clamp_box) {
                a = a < bmn[c] ? bmn[c] : a > bmx[c] ? bmx[c] : a;
                b = b < bmn[c] ? bmn[c] : b > bmx[c] ? bmx[c] : b;
            }
            mn[c] = a;
            mx[c] = b;
        }
    }
}

static float seed_p1(const float tex[16][3], uint8_t out[16])
{
    float mn[3], mx[3];
    for (int c = 0; c < 3; c++) {
        mn[c] = mx[c] = tex[0][c];
        for (int t = 1; t < 16; t++) mn[c] = fminf(mn[c], tex[t][c]), mx[c] = fmaxf(mx[c], tex[t][c]);
    }
    float bmn[3] = {mn[0], mn[1], mn[2]}, bmx[3] = {mx[0], mx[1], mx[2]};
    for (int c = 0; c < 3; c++) { /* inset in log2(1 + x) by up to 1/32 of the extent */
        float rmn = mx[c], rmx = mn[c];
        for (int t = 0; t < 16; t++) {
            if (tex[t][c] != mn[c]) rmn = fminf(rmn, tex[t][c]);
            if (tex[t][c] != mx[c]) rmx = fmaxf(rmx, tex[t][c]);
        }
        float lmn = log2f(mn[c] + 1.0f), lmx = log2f(mx[c] + 1.0f);
        float ext = (lmx - lmn) * (1.0f / 32.0f);
        lmn += fminf(log2f(rmn + 1.0f) - lmn, ext);
        lmx -= fminf(lmx - log2f(rmx + 1.0f), ext);
        mn[c] = exp2f(lmn) - 1.0f;
        mx[c] = exp2f(lmx) - 1.0f;
    }
    seed_optimize(tex, 0xFFFFu, 4, mn, mx, 1, bmn, bmx);
    float dir[3], sum = 0.0f;
    for (int c = 0; c < 3; c++) dir[c] = mx[c] - mn[c], sum += dir[c];
    for (int c = 0; c < 3; c++) dir[c] = sum > 0.0f ? dir[c] / sum : 0.0f;
    int32_t ep[4][3] = {{0}};
    for (int c = 0; c < 3; c++) {
        ep[0][c] = (int32_t)(h16(mn[c]) * 1024.0f / 31744.0f);
        ep[1][c] = (int32_t)(h16(mx[c]) * 1024.0f / 31744.0f);
    }
    float p0 = h16(mn[0] * dir[0] + mn[1] * dir[1] + mn[2] * dir[2]);
    float p1 = h16(mx[0] * dir[0] + mx[1] * dir[1] + mx[2] * dir[2]);
    float pf = h16(tex[0][0] * dir[0] + tex[0][1] * dir[1] + tex[0][2] * dir[2]);
    if (seed_index(pf, p0, p1, 4) > 7) {
        float tp = p0;
        p0 = p1;
        p1 = tp;
        for (int c = 0; c < 3; c++) {
            int32_t ti = ep[0][c];
            ep[0][c] = ep[1][c];
            ep[1][c] = ti;
        }
    }
    uint8_t idx[16];
    for (int t = 0; t < 16; t++)
        idx[t] = (uint8_t)seed_index(h16(tex[t][0] * dir[0] + tex[t][1] * dir[1] + tex[t][2] * dir[2]), p0, p1, 4);
    if (idx[0] > 7) idx[0] = 7;
    if (!kiln__bc6h_pack(3, 0, (const int32_t(*)[3])ep, idx, 0, out)) return INFINITY;
    return seed_msle(tex, out);
}

static void seed_boxes(const float tex[16][3], int part, float mn[2][3], float mx[2][3])
{
    for (int s = 0; s < 2; s++)
        for (int c = 0; c < 3; c++) mn[s][c] = 65504.0f, mx[s][c] = 0.0f;
    for (unsigned t = 0; t < 16; t++) {
        unsigned s = kiln__bptc_subset(2, (unsigned)part, t);
        for (int c = 0; c < 3; c++) mn[s][c] = fminf(mn[s][c], tex[t][c]), mx[s][c] = fmaxf(mx[s][c], tex[t][c]);
    }
}

static float seed_pattern_score(const float tex[16][3], int part)
{
    float mn[2][3], mx[2][3], dir[2][3];
    seed_boxes(tex, part, mn, mx);
    for (int s = 0; s < 2; s++) {
        float l = 0.0f;
        for (int c = 0; c < 3; c++) dir[s][c] = mx[s][c] - mn[s][c], l += dir[s][c] * dir[s][c];
        l = sqrtf(l);
        for (int c = 0; c < 3; c++) dir[s][c] = l > 0.0f ? dir[s][c] / l : 0.0f;
    }
    float score = 0.0f;
    for (unsigned t = 0; t < 16; t++) {
        unsigned s = kiln__bptc_subset(2, (unsigned)part, t);
        float w[3], d = 0.0f;
        for (int c = 0; c < 3; c++) w[c] = tex[t][c] - mn[s][c], d += w[c] * dir[s][c];
        for (int c = 0; c < 3; c++) {
            float x = w[c] - d * dir[s][c];
            score += x * x;
        }
    }
    return score;
}

static float seed_p2(const float tex[16][3], int part, uint8_t out[16])
{
    float mn[2][3], mx[2][3];
    seed_boxes(tex, part, mn, mx);
    const uint32_t m1 = kiln__bptc_p2[part], m0 = ~m1 & 0xFFFFu;
    seed_optimize(tex, m0, 3, mn[0], mx[0], 0, NULL, NULL);
    seed_optimize(tex, m1, 3, mn[1], mx[1], 0, NULL, NULL);
    float dir[2][3], p0[2], p1[2];
    for (int s = 0; s < 2; s++) {
        float sum = 0.0f;
        for (int c = 0; c < 3; c++) dir[s][c] = mx[s][c] - mn[s][c], sum += dir[s][c];
        for (int c = 0; c < 3; c++) dir[s][c] = sum > 0.0f ? dir[s][c] / sum : 0.0f;
        p0[s] = h16(mn[s][0] * dir[s][0] + mn[s][1] * dir[s][1] + mn[s][2] * dir[s][2]);
        p1[s] = h16(mx[s][0] * dir[s][0] + mx[s][1] * dir[s][1] + mx[s][2] * dir[s][2]);
        unsigned anchor = s == 0 ? 0u : kiln__bptc_anchor2[part];
        const float *a = tex[anchor];
        if (seed_index(h16(a[0] * dir[s][0] + a[1] * dir[s][1] + a[2] * dir[s][2]), p0[s], p1[s], 3) > 3) {
            float tp = p0[s];
            p0[s] = p1[s];
            p1[s] = tp;
            for (int c = 0; c < 3; c++) {
                float tc = mn[s][c];
                mn[s][c] = mx[s][c];
                mx[s][c] = tc;
            }
        }
    }
    uint8_t idx[16];
    for (unsigned t = 0; t < 16; t++) {
        unsigned s = kiln__bptc_subset(2, (unsigned)part, t);
        idx[t] = (uint8_t)seed_index(h16(tex[t][0] * dir[s][0] + tex[t][1] * dir[s][1] + tex[t][2] * dir[s][2]), p0[s],
                                     p1[s], 3);
        if (kiln__bptc_is_anchor(2, (unsigned)part, t) && idx[t] > 3) idx[t] = 3;
    }
    float best = INFINITY;
    static const int mode_of[2] = {1, 14};
    static const float scale[2] = {128.0f, 512.0f};
    static const int32_t dmax[2] = {31, 15};
    for (int k = 0; k < 2; k++) {
        int32_t ep[4][3];
        const float *src[4] = {mn[0], mx[0], mn[1], mx[1]};
        for (int e = 0; e < 4; e++)
            for (int c = 0; c < 3; c++) ep[e][c] = (int32_t)floorf(h16(src[e][c]) * scale[k] / 31744.0f);
        for (int e = 1; e < 4; e++)
            for (int c = 0; c < 3; c++) {
                int32_t d = ep[e][c] - ep[0][c];
                d = d < -dmax[k] ? -dmax[k] : d > dmax[k] ? dmax[k] : d;
                ep[e][c] = ep[0][c] + d;
            }
        uint8_t blk[16];
        if (!kiln__bc6h_pack(mode_of[k], part, (const int32_t(*)[3])ep, idx, 0, blk)) continue;
        float e = seed_msle(tex, blk);
        if (e < best) {
            best = e;
            memcpy(out, blk, 16);
        }
    }
    return best;
}

void kiln__enc_bc6h_seed(const float rgba[64], int quality, uint8_t out[16])
{
    float tex[16][3];
    memset(out, 0, 16);
    for (int t = 0; t < 16; t++)
        for (int c = 0; c < 3; c++) tex[t][c] = kiln__half_to_float(to_half(rgba[t * 4 + c], 0));
    float best = seed_p1(tex, out);
    if (quality) {
        int bp = 0;
        float bs = seed_pattern_score(tex, 0);
        for (int p = 1; p < 32; p++) {
            float s = seed_pattern_score(tex, p);
            if (s < bs) bs = s, bp = p;
        }
        uint8_t blk[16] = {0};
        float e = seed_p2(tex, bp, blk);
        if (e < best) memcpy(out, blk, 16);
    }
}

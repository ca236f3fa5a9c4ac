/* etc_enc_fast.c - the FAST quality level of ETC1 and ETC2 RGB (also the colour of ETC2 RGBA), for
 * opaque blocks without dithering (RGB A1, dithering: the generic path in etc1_enc.c / etc2_enc.c).
 * This is the per-block form (one block: kiln__enc_etc1 / kiln__enc_etc2_rgb); the encode driver runs the
 * same algorithm 16 blocks at a time, one block per vector lane (etc_enc_batch.c), with the same bytes.
 *
 * Block-level algorithm (integer only; the same bytes on every CPU, the AVX2 build included):
 *  1. Moments: per 2x2 quadrant the channel sums and sums of squares; per pixel the weighted luma
 *     kx = w . x (w = 1,1,1 or the perceptual weights, W = sum w).
 *  2. ETC1 candidates, per flip (0: 2x4 halves side by side, 1: 4x2 stacked): the half means (rounded)
 *     quantised to 555; differential when the two fit the 3-bit delta, else both quantised to 444
 *     (individual). Per half and table t the error is modelled EXACTLY for an unclamped palette:
 *        E_t = sum_p |x_p - b|^2_w + sum_p min(W a_t^2 - 2 a_t |q_p|, W b_t^2 - 2 b_t |q_p|),
 *     q_p = kx_p - w . b (b = expanded base); the first term comes from the moments, the second is
 *     one 8-lane vector (the 8 tables) per pixel. The table of each half is the argmin, the flip the
 *     one with the lower sum (ties: flip 0, lowest table).
 *  3. Selectors: an unclamped half (every palette entry inside 0..255) takes them in closed form from
 *     q_p (+-b when 2|q_p| > W (a + b), sign of q_p, ties to +a / -a) and its error is E_t; a clamped
 *     half is evaluated pixel by pixel against the 4 clamped colours (nearest, first minimum).
 *  4. ETC2 only - planar: the least-squares plane of each channel in closed form (s = sum c,
 *     sx = sum (2x - 3) c, sy = sum (2y - 3) c: O = (5s - 3sx - 3sy) / 80, H = (5s + 5sx - 3sy) / 80,
 *     V = (5s - 3sx + 5sy) / 80), each rounded to its 6/7/6-bit level, exact clamped error. Tried only
 *     when the plane's residual sum c^2 - s^2/16 - sx^2/80 - sy^2/80 (weighted; a lower bound of the
 *     planar error up to rounding) is below the ETC1 error.
 *  5. ETC2 only - T/H: only when the error so far exceeds ETC_FAST_TH_ERR = 150 per pixel (squared,
 *     summed over R+G+B, scaled by W / 3); then the generic FAST T/H search of etc2_enc.c (one principal-axis split plus
 *     2 Lloyd steps, both roles, every distance) and the lowest error wins.
 */
#include "codec/etc_enc.h"

#include <string.h>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define ETCF_X86 1
#endif

typedef int32_t v8i __attribute__((vector_size(32)));

/* (macros: functions passing 32-byte vectors by value would change the ABI without AVX) */
#define HSUM8(v) ((v)[0] + (v)[1] + (v)[2] + (v)[3] + (v)[4] + (v)[5] + (v)[6] + (v)[7])
#define SPLAT8(x) ((v8i){(x), (x), (x), (x), (x), (x), (x), (x)})
#define HALF_CH(dst, f, flip, h, ch) memcpy(&(dst), ((flip) ? (f)->c[ch] : (f)->cm[ch]) + 8 * (h), sizeof(dst))

/* Selector bit (1 << j, j = x * 4 + y) of lane i of half h: flip 0 keeps the pixels column-major (lane
 * i of half h is j = 8h + i), flip 1 row-major (lane i of half h is pixel p = 8h + i). */
static const int32_t lane_bit[2][2][8] = {
    {{1 << 0, 1 << 1, 1 << 2, 1 << 3, 1 << 4, 1 << 5, 1 << 6, 1 << 7},
     {1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12, 1 << 13, 1 << 14, 1 << 15}},
    {{1 << 0, 1 << 4, 1 << 8, 1 << 12, 1 << 1, 1 << 5, 1 << 9, 1 << 13},
     {1 << 2, 1 << 6, 1 << 10, 1 << 14, 1 << 3, 1 << 7, 1 << 11, 1 << 15}},
};

/* Per table: W a^2, 2a, W b^2, 2b for W = 3 (uniform weights) and W = 128 (perceptual). */
static const int32_t tab_consts[2][4][8] = {
    {{12, 75, 243, 507, 972, 1728, 3267, 6627}, {4, 10, 18, 26, 36, 48, 66, 94}, {192, 867, 2523, 5292, 10800, 19200, 33708, 100467}, {16, 34, 58, 84, 120, 160, 212, 366}},
    {{512, 3200, 10368, 21632, 41472, 73728, 139392, 282752}, {4, 10, 18, 26, 36, 48, 66, 94}, {8192, 36992, 107648, 225792, 460800, 819200, 1438208, 4286592}, {16, 34, 58, 84, 120, 160, 212, 366}},
};

typedef struct fblk {
    int32_t c[3][16];      /* channel-major pixels, row-major order (p = 4y + x) */
    int32_t cm[3][16];     /* the same, column-major (j = 4x + y) */
    int32_t kx[2][16];     /* w . x, [0] column-major, [1] row-major */
    int32_t qs[4][3];      /* quadrant sums (qx + 2 qy) */
    int32_t qq[4][3];      /* quadrant sums of squares */
    int w[3], W;
    v8i ca, a2, cb, b2;    /* per table: W a^2, 2a, W b^2, 2b */
} fblk;

typedef uint32_t v16u __attribute__((vector_size(64)));

/* Best table and exact unclamped error of one half (8 pixels) with expanded base b. */
static inline __attribute__((always_inline)) int32_t half_model(const fblk *f, int flip, int h, const int32_t sum[3],
                                                                const int32_t sq[3], const int b[3], int *table)
{
    int32_t base = 0;
    for (int ch = 0; ch < 3; ch++) base += f->w[ch] * (sq[ch] - 2 * b[ch] * sum[ch] + 8 * b[ch] * b[ch]);
    const int32_t K = f->w[0] * b[0] + f->w[1] * b[1] + f->w[2] * b[2];
    const int32_t *kx = f->kx[flip] + 8 * h;
    v8i acc = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) {
        int32_t q = kx[i] - K;
        q = q < 0 ? -q : q;
        v8i ea = f->ca - f->a2 * q, eb = f->cb - f->b2 * q;
        v8i m = ea < eb;
        acc += (ea & m) | (eb & ~m);
    }
    int bt = 0;
    int32_t be = acc[0];
#pragma GCC unroll 8
    for (int t = 1; t < 8; t++)
        if (acc[t] < be) {
            be = acc[t];
            bt = t;
        }
    *table = bt;
    return base + be;
}

/* Selectors of one half as bit masks (msb, lsb at bit j); returns the half's exact error. */
static inline __attribute__((always_inline)) int32_t half_select(const fblk *f, int flip, int h, const int b[3], int t,
                                                                 int32_t model, uint32_t *msb, uint32_t *lsb)
{
    const int a = kiln__etc_modifiers[t][0], bb = kiln__etc_modifiers[t][1];
    int lo = b[0] < b[1] ? b[0] : b[1], hi = b[0] > b[1] ? b[0] : b[1];
    lo = lo < b[2] ? lo : b[2];
    hi = hi > b[2] ? hi : b[2];
    v8i bit;
    memcpy(&bit, lane_bit[flip][h], sizeof bit);
    if (lo - bb >= 0 && hi + bb <= 255) {
        /* unclamped: +-b when 2|q| > W (a + b), the sign of q picks + or - (q = 0: +a) */
        const int32_t K = f->w[0] * b[0] + f->w[1] * b[1] + f->w[2] * b[2];
        v8i q;
        memcpy(&q, f->kx[flip] + 8 * h, sizeof q);
        q -= K;
        v8i neg = q < 0;
        v8i aq = (q ^ neg) - neg;
        const int32_t thr = f->W * (a + bb);
        v8i big = 2 * aq > SPLAT8(thr);
        v8i mb = neg & bit, lb = big & bit;
        *msb |= (uint32_t)HSUM8(mb);
        *lsb |= (uint32_t)HSUM8(lb);
        return model;
    }
    /* clamped: nearest of the 4 clamped colours, first minimum */
    v8i best = SPLAT8(INT32_MAX), idx = SPLAT8(0);
    v8i r, g, bl;
    HALF_CH(r, f, flip, h, 0);
    HALF_CH(g, f, flip, h, 1);
    HALF_CH(bl, f, flip, h, 2);
    for (int k = 0; k < 4; k++) {
        const int m = kiln__etc_modifiers[t][k];
        v8i d0 = r - etc_clamp255(b[0] + m), d1 = g - etc_clamp255(b[1] + m), d2 = bl - etc_clamp255(b[2] + m);
        v8i e = f->W == 3 ? d0 * d0 + d1 * d1 + d2 * d2 : f->w[0] * d0 * d0 + f->w[1] * d1 * d1 + f->w[2] * d2 * d2;
        v8i lt = e < best;
        best = (e & lt) | (best & ~lt);
        idx = (SPLAT8(k) & lt) | (idx & ~lt);
    }
    v8i mb = (idx >> 1) * bit, lb = (idx & 1) * bit;
    *msb |= (uint32_t)HSUM8(mb);
    *lsb |= (uint32_t)HSUM8(lb);
    return HSUM8(best);
}

/* Planar from the closed-form fit; returns the exact error (weighted). */
static inline __attribute__((always_inline)) uint32_t planar_fast(const fblk *f, const int32_t s[3], const int32_t sx[3],
                                                                  const int32_t sy[3], etc_sol *out)
{
    static const int32_t px_x[16] = {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3};
    static const int32_t px_y[16] = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3};
    uint32_t total = 0;
    for (int ch = 0; ch < 3; ch++) {
        const int maxl = ch == 1 ? 127 : 63;
        const int32_t num[3] = {5 * s[ch] - 3 * sx[ch] - 3 * sy[ch], 5 * s[ch] + 5 * sx[ch] - 3 * sy[ch],
                                5 * s[ch] - 3 * sx[ch] + 5 * sy[ch]};
        int e8[3];
        for (int i = 0; i < 3; i++) {
            /* round(num / 80 * maxl / 255) with floor division */
            int32_t n2 = 2 * num[i] * maxl + 80 * 255, d2 = 2 * 80 * 255;
            int32_t l = n2 >= 0 ? n2 / d2 : -((-n2 + d2 - 1) / d2);
            l = l < 0 ? 0 : (l > maxl ? maxl : l);
            out->p[i][ch] = l;
            e8[i] = ch == 1 ? etc_x7(l) : etc_x6(l);
        }
        const int o = e8[0], dh = e8[1] - e8[0], dv = e8[2] - e8[0];
        v8i acc = SPLAT8(0);
        for (int hh = 0; hh < 2; hh++) {
            v8i x, y, c;
            memcpy(&x, px_x + 8 * hh, sizeof x);
            memcpy(&y, px_y + 8 * hh, sizeof y);
            memcpy(&c, f->c[ch] + 8 * hh, sizeof c);
            v8i t = x * dh + y * dv + (4 * o + 2 + 2048);
            t = (t >> 2) - 512;
            t &= ~(t < 0);
            v8i over = t > 255;
            t = (t & ~over) | (SPLAT8(255) & over);
            v8i d = t - c;
            acc += d * d;
        }
        total += (uint32_t)HSUM8(acc) * (uint32_t)f->w[ch];
    }
    return total;
}

/* Encodes an opaque block. Returns 1 when T/H should be tried (then *sol holds the ETC1 / planar
 * result); else 0 with the block in out (ETC1 modes) or in *sol (planar: sol->mode says). */
static inline __attribute__((always_inline)) int fast_body(const kiln_block *blk, const int w[3], int etc2, etc_sol *sol,
                                                           uint8_t out[8])
{
    fblk f;
    f.w[0] = w[0];
    f.w[1] = w[1];
    f.w[2] = w[2];
    f.W = w[0] + w[1] + w[2];
    {
        uint32_t pr[16], pc[16];
        memcpy(pr, blk->rgba8, sizeof pr);
#pragma GCC unroll 16
        for (int p = 0; p < 16; p++) pc[(p & 3) * 4 + (p >> 2)] = pr[p];
        v16u vr, vc;
        memcpy(&vr, pr, sizeof vr);
        memcpy(&vc, pc, sizeof vc);
        v16u r = vr & 255, g = vr >> 8 & 255, b = vr >> 16 & 255;
        v16u rc = vc & 255, gc = vc >> 8 & 255, bc = vc >> 16 & 255;
        v16u k = r * (uint32_t)w[0] + g * (uint32_t)w[1] + b * (uint32_t)w[2];
        v16u kc = rc * (uint32_t)w[0] + gc * (uint32_t)w[1] + bc * (uint32_t)w[2];
        memcpy(f.c[0], &r, sizeof r);
        memcpy(f.c[1], &g, sizeof g);
        memcpy(f.c[2], &b, sizeof b);
        memcpy(f.cm[0], &rc, sizeof rc);
        memcpy(f.cm[1], &gc, sizeof gc);
        memcpy(f.cm[2], &bc, sizeof bc);
        memcpy(f.kx[1], &k, sizeof k);
        memcpy(f.kx[0], &kc, sizeof kc);
    }
    {
        const int32_t(*tc)[8] = tab_consts[f.W == 3 ? 0 : 1]; /* the caller's weights sum to 3 or 128 */
        memcpy(&f.ca, tc[0], sizeof f.ca);
        memcpy(&f.a2, tc[1], sizeof f.a2);
        memcpy(&f.cb, tc[2], sizeof f.cb);
        memcpy(&f.b2, tc[3], sizeof f.b2);
    }
#pragma GCC unroll 4
    for (int qd = 0; qd < 4; qd++) {
        const int x0 = (qd & 1) * 2, y0 = (qd >> 1) * 2;
#pragma GCC unroll 3
        for (int ch = 0; ch < 3; ch++) {
            int32_t s = 0, q = 0;
            for (int y = y0; y < y0 + 2; y++)
                for (int x = x0; x < x0 + 2; x++) {
                    int32_t v = f.c[ch][y * 4 + x];
                    s += v;
                    q += v * v;
                }
            f.qs[qd][ch] = s;
            f.qq[qd][ch] = q;
        }
    }
    /* quadrant pairs of each half: flip 0 = left (0, 2) / right (1, 3); flip 1 = top (0, 1) / bottom (2, 3) */
    static const uint8_t hq[2][2][2] = {{{0, 2}, {1, 3}}, {{0, 1}, {2, 3}}};
    int32_t best = INT32_MAX;
    int bflip = 0, fitsb = 1, bq[2][3] = {{0}}, bt[2] = {0, 0}, bb[2][3] = {{0}};
    int32_t bmodel[2] = {0, 0};
    for (int flip = 0; flip < 2; flip++) {
        int32_t sum[2][3], sq[2][3];
        int q5[2][3], q4[2][3];
        for (int h = 0; h < 2; h++)
            for (int ch = 0; ch < 3; ch++) {
                sum[h][ch] = f.qs[hq[flip][h][0]][ch] + f.qs[hq[flip][h][1]][ch];
                sq[h][ch] = f.qq[hq[flip][h][0]][ch] + f.qq[hq[flip][h][1]][ch];
                int m = (sum[h][ch] + 4) >> 3;
                q5[h][ch] = kiln__etc_q5[m];
                q4[h][ch] = kiln__etc_q4[m];
            }
        int fits = 1;
        for (int ch = 0; ch < 3; ch++) {
            int d = q5[1][ch] - q5[0][ch];
            fits &= d >= -4 && d <= 3;
        }
        int32_t e = 0, model[2];
        int tb[2], b8[2][3];
        for (int h = 0; h < 2; h++) {
            for (int ch = 0; ch < 3; ch++) b8[h][ch] = fits ? etc_x5(q5[h][ch]) : etc_x4(q4[h][ch]);
            model[h] = half_model(&f, flip, h, sum[h], sq[h], b8[h], &tb[h]);
            e += model[h];
        }
        if (e < best) {
            best = e;
            bflip = flip;
            fitsb = fits;
            for (int h = 0; h < 2; h++) {
                for (int ch = 0; ch < 3; ch++) {
                    bq[h][ch] = fits ? q5[h][ch] : q4[h][ch];
                    bb[h][ch] = b8[h][ch];
                }
                bt[h] = tb[h];
                bmodel[h] = model[h];
            }
        }
    }
    uint32_t msb = 0, lsb = 0, err = 0;
    for (int h = 0; h < 2; h++) err += (uint32_t)half_select(&f, bflip, h, bb[h], bt[h], bmodel[h], &msb, &lsb);
    /* pack the ETC1 block (kiln__etc_pack's layout) */
    uint64_t v;
    if (fitsb) {
        v = (uint64_t)1 << 33;
        for (int ch = 0; ch < 3; ch++)
            v |= (uint64_t)bq[0][ch] << (59 - 8 * ch) | (uint64_t)((bq[1][ch] - bq[0][ch]) & 7) << (56 - 8 * ch);
    } else {
        v = (uint64_t)bq[0][0] << 60 | (uint64_t)bq[1][0] << 56 | (uint64_t)bq[0][1] << 52 | (uint64_t)bq[1][1] << 48 |
            (uint64_t)bq[0][2] << 44 | (uint64_t)bq[1][2] << 40;
    }
    v |= (uint64_t)bt[0] << 37 | (uint64_t)bt[1] << 34 | (uint64_t)bflip << 32 | (uint64_t)msb << 16 | lsb;
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v);
    memcpy(out, &v, 8);
#else
    for (int i = 0; i < 8; i++) out[i] = (uint8_t)(v >> (56 - 8 * i));
#endif
    sol->err = err;
    sol->mode = fitsb ? ETC_MODE_DIFF : ETC_MODE_INDIV;
    if (!etc2 || err == 0) return 0;

    /* planar, when the least-squares residual leaves room */
    int32_t s[3], sx[3], sy[3];
    int64_t resid = 0;
    for (int ch = 0; ch < 3; ch++) {
        int32_t a = 0, bx = 0, by = 0, q = 0;
#pragma GCC unroll 16
        for (int p = 0; p < 16; p++) {
            int32_t vv = f.c[ch][p];
            a += vv;
            bx += (2 * (p & 3) - 3) * vv;
            by += (2 * (p >> 2) - 3) * vv;
        }
        for (int qd = 0; qd < 4; qd++) q += f.qq[qd][ch];
        s[ch] = a;
        sx[ch] = bx;
        sy[ch] = by;
        /* 80 * residual = 80 sum c^2 - 5 s^2 - sx^2 - sy^2 */
        resid += (int64_t)w[ch] * (80 * (int64_t)q - 5 * (int64_t)a * a - (int64_t)bx * bx - (int64_t)by * by);
    }
    if (resid < 80 * (int64_t)err) {
        etc_sol pl;
        uint32_t pe = planar_fast(&f, s, sx, sy, &pl);
        if (pe < err) {
            sol->mode = ETC_MODE_PLANAR;
            memcpy(sol->p, pl.p, sizeof sol->p);
            sol->err = err = pe;
            if (err == 0) return 0;
        }
    }
    if (err > ETC_FAST_TH_ERR * 16u * (uint32_t)f.W / 3u) {
        if (sol->mode != ETC_MODE_PLANAR) {
            /* the generic T/H search compares against a complete solution */
            sol->flip = bflip;
            for (int h = 0; h < 2; h++) {
                memcpy(sol->c[h], bq[h], sizeof sol->c[h]);
                sol->table[h] = bt[h];
            }
            for (int p = 0; p < 16; p++) {
                int j = (p & 3) * 4 + (p >> 2);
                sol->sel[p] = (uint8_t)((msb >> j & 1) << 1 | (lsb >> j & 1));
            }
        }
        return 1;
    }
    return 0;
}

static int fast_generic(const kiln_block *blk, const int w[3], int etc2, etc_sol *sol, uint8_t out[8])
{
    return fast_body(blk, w, etc2, sol, out);
}

#ifdef ETCF_X86
__attribute__((target("avx2"))) static int fast_avx2(const kiln_block *blk, const int w[3], int etc2, etc_sol *sol,
                                                     uint8_t out[8])
{
    return fast_body(blk, w, etc2, sol, out);
}
#endif

int kiln__etc_fast_opaque(const kiln_block *blk, const kiln_encode_params *params, int etc2, uint8_t out[8])
{
    static const int wu[3] = {1, 1, 1}, wp[3] = {ETC_PW_R, ETC_PW_G, ETC_PW_B};
    const int *w = params->perceptual ? wp : wu;
    etc_sol sol;
    int th;
#ifdef ETCF_X86
    if (__builtin_cpu_supports("avx2"))
        th = fast_avx2(blk, w, etc2, &sol, out);
    else
#endif
        th = fast_generic(blk, w, etc2, &sol, out);
    if (th) {
        etc_src src;
        kiln__etc_src_init(&src, blk, params, 0);
        etc_sol t = sol; /* T/H must beat sol.err */
        kiln__etc2_th_search(&src, &t);
        if (t.err < sol.err) {
            sol = t;
            kiln__etc_reselect(&sol, &src, 0);
        }
        if (sol.mode != ETC_MODE_DIFF && sol.mode != ETC_MODE_INDIV) kiln__etc_pack(&sol, &src, out);
    } else if (sol.mode == ETC_MODE_PLANAR) {
        etc_src src;
        src.transparent = 0;
        kiln__etc_pack(&sol, &src, out);
    }
    return 1;
}

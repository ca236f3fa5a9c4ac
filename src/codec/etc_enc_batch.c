/* etc_enc_batch.c - the FAST quality level of ETC1 and ETC2 RGB, 16 blocks at once (one block per
 * vector lane; GCC/Clang vector extensions, integer only, compiled for AVX2 and for the x86-64
 * baseline and picked at run time: the same bytes from both, and the same bytes as the per-block
 * code in etc_enc_fast.c, whose header documents the block algorithm step by step).
 *
 * Per lane (block) the batch runs steps 1-4 of etc_enc_fast.c exactly: 2x2 quadrant moments, per flip
 * the half means quantised to 555 (differential) or 444 (individual), the exact unclamped error model
 * of all 8 tables for both halves (sum_i min(ea_i, eb_i) as sum_i eb_i + sum_i min(ea_i - eb_i, 0)), the
 * lower flip, then the selectors (closed form for an unclamped half, nearest of the 4 clamped colours
 * otherwise) and the packed ETC1 block; for ETC2 also the closed-form planar fit with its exact error
 * (levels by a float estimate of the rounded quotient, corrected in integers), taken under the same
 * residual test and comparison as the per-block code.
 * Lanes go back to the per-block encoder (kiln__etc_fast_opaque, identical result by construction) when:
 *  - dithering is on (every block; the batch is registered for ETC1 / ETC2 RGB only, which have no
 *    alpha: RGB A1 and RGBA keep the per-block encoders);
 *  - ETC2 only: the best ETC1 / planar error exceeds the T/H threshold ETC_FAST_TH_ERR (step 5): those
 *    lanes are re-encoded in full by the per-block code (ETC1, planar and the T/H search).
 * Machine detail: lanes are 8 x int32 (one AVX2 register; 2 x 8 per batch); comparisons are written
 * as (a - b) >> 31 because GCC lowers a too-wide vector comparison element by element.
 * A single block (kiln__enc_etc1 / kiln__enc_etc2_rgb) keeps the per-block code; the driver's grouping
 * never changes the bytes.
 */
#include "codec/etc_enc.h"

#include <string.h>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define ETCB_X86 1
#endif

typedef int32_t vb __attribute__((vector_size(32))); /* 8 lanes: one AVX2 register */
typedef float vbf __attribute__((vector_size(32)));
#define VB static inline __attribute__((always_inline))
#define BSPLAT(x) ((vb){(x), (x), (x), (x), (x), (x), (x), (x)})
#define BSEL(m, a, b) (((a) & (m)) | ((b) & ~(m))) /* m ? a : b (m: all ones / zero per lane) */
/* a < b as a lane mask, for |a - b| < 2^31 (every use below). Written with a subtraction and an
 * arithmetic shift: GCC lowers a 16-lane integer comparison element by element where the target has
 * no 512-bit compare (AVX2, SSE2), which was 4x slower than the per-block code. */
#define BLT(a, b) (((a) - (b)) >> 31)
#define BLOAD(v, p) memcpy(&(v), (p), sizeof(vb))
#define BSTORE(p, v) memcpy((p), &(v), sizeof(vb))

/* Per-lane results of the ETC1 stage. */
typedef struct etcb_out {
    int32_t q[2][3][16]; /* quantised half colours (5-bit both absolute, or 4-bit) */
    int32_t t[2][16];    /* tables */
    int32_t flip[16], fits[16], msb[16], lsb[16], err[16];
    int32_t s[3][16], sx[3][16], sy[3][16], sq[3][16]; /* planar moments (ETC2) */
    int32_t pl[3][3][16]; /* planar O, H, V levels [point][channel] (ETC2) */
    int32_t perr[16];     /* planar error (ETC2) */
} etcb_out;

/* Per-lane table lookups (the tables are small; a scalar loop per lane). */
#define BLOOKUP(dst, tab, idx)                                                                                       \
    do {                                                                                                             \
        int32_t i_[8], o_[8];                                                                                        \
        BSTORE(i_, idx);                                                                                             \
        for (int l_ = 0; l_ < 8; l_++) o_[l_] = (tab)[i_[l_]];                                                       \
        BLOAD(dst, o_);                                                                                              \
    } while (0)

/* Lanes off .. off + 7 of c: [pixel (row-major)][lane], RGBA8 words (R in the low byte); w: channel
 * weights (sum W = 3 or 128). */
VB void etcb_body(const uint32_t c[16][16], int off, const int w[3], int etc2, etcb_out *o)
{
    const int W = w[0] + w[1] + w[2];
    vb px[3][16], kx[16];
    for (int p = 0; p < 16; p++) {
        vb v;
        BLOAD(v, c[p] + off);
        for (int ch = 0; ch < 3; ch++) px[ch][p] = (v >> (8 * ch)) & 255;
        kx[p] = px[0][p] * w[0] + px[1][p] * w[1] + px[2][p] * w[2];
    }
    /* quadrant moments, quadrant qd = qx + 2 qy */
    vb qs[4][3], qq[4][3];
    for (int qd = 0; qd < 4; qd++) {
        const int x0 = (qd & 1) * 2, y0 = (qd >> 1) * 2;
        for (int ch = 0; ch < 3; ch++) {
            vb s = BSPLAT(0), q = BSPLAT(0);
            for (int y = y0; y < y0 + 2; y++)
                for (int x = x0; x < x0 + 2; x++) {
                    vb v = px[ch][y * 4 + x];
                    s += v;
                    q += v * v;
                }
            qs[qd][ch] = s;
            qq[qd][ch] = q;
        }
    }
    /* per table: W a^2, 2a, W b^2, 2b */
    int32_t ca[8], a2[8], cb[8], b2[8];
    for (int t = 0; t < 8; t++) {
        const int a = kiln__etc_modifiers[t][0], b = kiln__etc_modifiers[t][1];
        ca[t] = W * a * a;
        a2[t] = 2 * a;
        cb[t] = W * b * b;
        b2[t] = 2 * b;
    }
    static const uint8_t hq[2][2][2] = {{{0, 2}, {1, 3}}, {{0, 1}, {2, 3}}};
    /* pixels of each half: flip 0 = columns 0-1 / 2-3, flip 1 = rows 0-1 / 2-3 */
    static const uint8_t hp[2][2][8] = {{{0, 1, 4, 5, 8, 9, 12, 13}, {2, 3, 6, 7, 10, 11, 14, 15}},
                                        {{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11, 12, 13, 14, 15}}};
    vb best = BSPLAT(INT32_MAX), bflip = BSPLAT(0), bfits = BSPLAT(0);
    vb bq[2][3], bb[2][3], bt[2], bmodel[2];
    for (int h = 0; h < 2; h++) {
        for (int ch = 0; ch < 3; ch++) bq[h][ch] = bb[h][ch] = BSPLAT(0);
        bt[h] = bmodel[h] = BSPLAT(0);
    }
    for (int flip = 0; flip < 2; flip++) {
        vb q5[2][3], q4[2][3], b8[2][3], sum[2][3], sq[2][3];
        vb fits = BSPLAT(-1);
        for (int h = 0; h < 2; h++)
            for (int ch = 0; ch < 3; ch++) {
                sum[h][ch] = qs[hq[flip][h][0]][ch] + qs[hq[flip][h][1]][ch];
                sq[h][ch] = qq[hq[flip][h][0]][ch] + qq[hq[flip][h][1]][ch];
                vb m = (sum[h][ch] + 4) >> 3;
                BLOOKUP(q5[h][ch], kiln__etc_q5, m);
                BLOOKUP(q4[h][ch], kiln__etc_q4, m);
            }
        for (int ch = 0; ch < 3; ch++) {
            vb d = q5[1][ch] - q5[0][ch];
            fits &= ~(BLT(d, BSPLAT(-4)) | BLT(BSPLAT(3), d));
        }
        vb model[2], tb[2];
        for (int h = 0; h < 2; h++) {
            vb base = BSPLAT(0), K = BSPLAT(0);
            for (int ch = 0; ch < 3; ch++) {
                vb x5 = (q5[h][ch] << 3) | (q5[h][ch] >> 2), x4 = (q4[h][ch] << 4) | q4[h][ch];
                vb b = BSEL(fits, x5, x4);
                b8[h][ch] = b;
                base += w[ch] * (sq[h][ch] - 2 * b * sum[h][ch] + 8 * b * b);
                K += w[ch] * b;
            }
            vb aq[8], saq = BSPLAT(0);
            for (int i = 0; i < 8; i++) {
                vb q = kx[hp[flip][h][i]] - K;
                vb n = q >> 31;
                aq[i] = (q ^ n) - n;
                saq += aq[i];
            }
            vb be = BSPLAT(0), bi = BSPLAT(0);
            for (int t = 0; t < 8; t++) {
                /* sum_i min(ea_i, eb_i) = sum_i eb_i + sum_i min(ea_i - eb_i, 0), eb_i = W b^2 - 2b |q_i| */
                vb acc = 8 * cb[t] - b2[t] * saq;
                for (int i = 0; i < 8; i++) {
                    vb dd = (ca[t] - cb[t]) - (a2[t] - b2[t]) * aq[i];
                    acc += dd & (dd >> 31);
                }
                if (t == 0) {
                    be = acc;
                } else {
                    vb lt = BLT(acc, be);
                    be = BSEL(lt, acc, be);
                    bi = BSEL(lt, BSPLAT(t), bi);
                }
            }
            tb[h] = bi;
            model[h] = base + be;
        }
        vb e = model[0] + model[1];
        vb better = BLT(e, best);
        best = BSEL(better, e, best);
        bflip = BSEL(better, BSPLAT(flip), bflip);
        bfits = BSEL(better, fits, bfits);
        for (int h = 0; h < 2; h++) {
            for (int ch = 0; ch < 3; ch++) {
                bq[h][ch] = BSEL(better, BSEL(fits, q5[h][ch], q4[h][ch]), bq[h][ch]);
                bb[h][ch] = BSEL(better, b8[h][ch], bb[h][ch]);
            }
            bt[h] = BSEL(better, tb[h], bt[h]);
            bmodel[h] = BSEL(better, model[h], bmodel[h]);
        }
    }
    /* selectors: per half the modifiers, whether the palette is unclamped, the luma threshold */
    vb mod[2][4], unc[2], K[2], thr[2];
    for (int h = 0; h < 2; h++) {
        int32_t ti[8], mm[4][8];
        BSTORE(ti, bt[h]);
        for (int l = 0; l < 8; l++)
            for (int k = 0; k < 4; k++) mm[k][l] = kiln__etc_modifiers[ti[l]][k];
        for (int k = 0; k < 4; k++) BLOAD(mod[h][k], mm[k]);
        vb lo = bb[h][0], hi = bb[h][0];
        for (int ch = 1; ch < 3; ch++) {
            lo = BSEL(BLT(bb[h][ch], lo), bb[h][ch], lo);
            hi = BSEL(BLT(hi, bb[h][ch]), bb[h][ch], hi);
        }
        unc[h] = ~((lo - mod[h][1]) >> 31) & ~BLT(BSPLAT(255), hi + mod[h][1]);
        K[h] = bb[h][0] * w[0] + bb[h][1] * w[1] + bb[h][2] * w[2];
        thr[h] = W * (mod[h][0] + mod[h][1]);
    }
    vb allunc = unc[0] & unc[1];
    int anyclamped = 0;
    {
        int32_t u[8];
        BSTORE(u, allunc);
        for (int l = 0; l < 8; l++) anyclamped |= !u[l];
    }
    vb msb = BSPLAT(0), lsb = BSPLAT(0), cerr[2] = {BSPLAT(0), BSPLAT(0)};
    for (int p = 0; p < 16; p++) {
        const int x = p & 3, y = p >> 2;
        const int32_t bit = 1 << (x * 4 + y);
        /* this pixel's half per lane: flip 0 -> x >> 1, flip 1 -> y >> 1 */
        vb in1 = BSEL(-bflip, BSPLAT(-(y >> 1)), BSPLAT(-(x >> 1)));
        vb q = kx[p] - BSEL(in1, K[1], K[0]);
        vb neg = q >> 31;
        vb aq = (q ^ neg) - neg;
        vb big = BLT(BSEL(in1, thr[1], thr[0]), 2 * aq);
        vb um = neg, ul = big;
        if (anyclamped) {
            vb bestd = BSPLAT(INT32_MAX), idx = BSPLAT(0);
            for (int k = 0; k < 4; k++) {
                vb m = BSEL(in1, mod[1][k], mod[0][k]);
                vb e = BSPLAT(0);
                for (int ch = 0; ch < 3; ch++) {
                    vb v = BSEL(in1, bb[1][ch], bb[0][ch]) + m;
                    v &= ~(v >> 31);
                    v = BSEL(BLT(BSPLAT(255), v), BSPLAT(255), v);
                    vb d = px[ch][p] - v;
                    e += w[ch] * d * d;
                }
                vb lt = BLT(e, bestd);
                bestd = BSEL(lt, e, bestd);
                idx = BSEL(lt, BSPLAT(k), idx);
            }
            vb cl = ~BSEL(in1, unc[1], unc[0]);
            um = BSEL(cl, -(idx >> 1), um);
            ul = BSEL(cl, -(idx & 1), ul);
            cerr[0] += bestd & ~in1;
            cerr[1] += bestd & in1;
        }
        msb |= um & bit;
        lsb |= ul & bit;
    }
    vb err = BSEL(unc[0], bmodel[0], cerr[0]) + BSEL(unc[1], bmodel[1], cerr[1]);
    for (int h = 0; h < 2; h++) {
        for (int ch = 0; ch < 3; ch++) BSTORE(o->q[h][ch] + off, bq[h][ch]);
        BSTORE(o->t[h] + off, bt[h]);
    }
    BSTORE(o->flip + off, bflip);
    BSTORE(o->fits + off, bfits);
    BSTORE(o->msb + off, msb);
    BSTORE(o->lsb + off, lsb);
    BSTORE(o->err + off, err);
    if (!etc2) return;
    for (int ch = 0; ch < 3; ch++) {
        vb s = BSPLAT(0), sx = BSPLAT(0), sy = BSPLAT(0), sq = BSPLAT(0);
        for (int p = 0; p < 16; p++) {
            s += px[ch][p];
            sx += (2 * (p & 3) - 3) * px[ch][p];
            sy += (2 * (p >> 2) - 3) * px[ch][p];
        }
        for (int qd = 0; qd < 4; qd++) sq += qq[qd][ch];
        BSTORE(o->s[ch] + off, s);
        BSTORE(o->sx[ch] + off, sx);
        BSTORE(o->sy[ch] + off, sy);
        BSTORE(o->sq[ch] + off, sq);
    }
    /* planar from the closed-form fit (etc_enc_fast.c planar_fast): each point round(num / 80 * maxl / 255)
     * as floor((2 num maxl + 80 * 255) / (2 * 80 * 255)): a float estimate corrected in integers (exact) */
    vb pe = BSPLAT(0);
    for (int ch = 0; ch < 3; ch++) {
        vb s = BSPLAT(0), sx = BSPLAT(0), sy = BSPLAT(0);
        BLOAD(s, o->s[ch] + off);
        BLOAD(sx, o->sx[ch] + off);
        BLOAD(sy, o->sy[ch] + off);
        const int maxl = ch == 1 ? 127 : 63, d2 = 2 * 80 * 255;
        const vb num[3] = {5 * s - 3 * sx - 3 * sy, 5 * s + 5 * sx - 3 * sy, 5 * s - 3 * sx + 5 * sy};
        vb e8[3];
        for (int i = 0; i < 3; i++) {
            vb n2 = 2 * maxl * num[i] + 80 * 255;
            vb l = __builtin_convertvector(__builtin_convertvector(n2, vbf) * (1.0f / (float)d2), vb);
            l += BLT(n2, l * d2);          /* l d2 > n2: one down */
            l -= BLT(l * d2 + (d2 - 1), n2); /* (l + 1) d2 <= n2: one up */
            l &= ~(l >> 31);
            l = BSEL(BLT(BSPLAT(maxl), l), BSPLAT(maxl), l);
            BSTORE(o->pl[i][ch] + off, l);
            e8[i] = ch == 1 ? (l << 1) | (l >> 6) : (l << 2) | (l >> 4);
        }
        const vb dh = e8[1] - e8[0], dv = e8[2] - e8[0], o4 = 4 * e8[0] + (2 + 2048);
        vb acc = BSPLAT(0);
        for (int p = 0; p < 16; p++) {
            vb t = ((p & 3) * dh + (p >> 2) * dv + o4) >> 2;
            t -= 512;
            t &= ~(t >> 31);
            t = BSEL(BLT(BSPLAT(255), t), BSPLAT(255), t);
            vb d = t - px[ch][p];
            acc += d * d;
        }
        pe += acc * w[ch];
    }
    BSTORE(o->perr + off, pe);
}

static void etcb_generic(const uint32_t c[16][16], int nl, const int w[3], int etc2, etcb_out *o)
{
    for (int off = 0; off < nl; off += 8) etcb_body(c, off, w, etc2, o);
}

#ifdef ETCB_X86
__attribute__((target("avx2"))) static void etcb_avx2(const uint32_t c[16][16], int nl, const int w[3], int etc2,
                                                      etcb_out *o)
{
    for (int off = 0; off < nl; off += 8) etcb_body(c, off, w, etc2, o);
}
#endif

/* ETC1 word of lane l (kiln__etc_pack's layout), big-endian into out. */
static void etcb_pack(const etcb_out *o, int l, uint8_t out[8])
{
    uint64_t v;
    if (o->fits[l]) {
        v = (uint64_t)1 << 33;
        for (int ch = 0; ch < 3; ch++)
            v |= (uint64_t)o->q[0][ch][l] << (59 - 8 * ch) | (uint64_t)((o->q[1][ch][l] - o->q[0][ch][l]) & 7)
                                                                  << (56 - 8 * ch);
    } else {
        v = (uint64_t)o->q[0][0][l] << 60 | (uint64_t)o->q[1][0][l] << 56 | (uint64_t)o->q[0][1][l] << 52 |
            (uint64_t)o->q[1][1][l] << 48 | (uint64_t)o->q[0][2][l] << 44 | (uint64_t)o->q[1][2][l] << 40;
    }
    v |= (uint64_t)o->t[0][l] << 37 | (uint64_t)o->t[1][l] << 34 | (uint64_t)o->flip[l] << 32 |
         (uint64_t)(uint32_t)o->msb[l] << 16 | (uint32_t)o->lsb[l];
    for (int i = 0; i < 8; i++) out[i] = (uint8_t)(v >> (56 - 8 * i));
}

/* ETC2 only (etc_enc_fast.c steps 4-5): 0 = the ETC1 block stands, 1 = planar (written to out), 2 = T/H
 * may win: the per-block code decides. */
static int etcb_etc2(const etcb_out *o, int l, const int w[3], uint8_t out[8])
{
    uint32_t err = (uint32_t)o->err[l];
    if (err == 0) return 0;
    const uint32_t W = (uint32_t)(w[0] + w[1] + w[2]);
    int64_t resid = 0;
    for (int ch = 0; ch < 3; ch++) {
        const int64_t a = o->s[ch][l], bx = o->sx[ch][l], by = o->sy[ch][l];
        resid += (int64_t)w[ch] * (80 * (int64_t)o->sq[ch][l] - 5 * a * a - bx * bx - by * by);
    }
    int planar = 0;
    if (resid < 80 * (int64_t)err && (uint32_t)o->perr[l] < err) {
        planar = 1;
        err = (uint32_t)o->perr[l];
    }
    if (err != 0 && err > ETC_FAST_TH_ERR * 16u * W / 3u) return 2;
    if (!planar) return 0;
    etc_sol sol;
    etc_src src;
    memset(&sol, 0, sizeof sol);
    memset(&src, 0, sizeof src);
    sol.mode = ETC_MODE_PLANAR;
    for (int i = 0; i < 3; i++)
        for (int ch = 0; ch < 3; ch++) sol.p[i][ch] = o->pl[i][ch][l];
    sol.err = err;
    kiln__etc_pack(&sol, &src, out);
    return 1;
}

void kiln__etc_batch_run(const kiln_block *src, int n, uint8_t *out, const kiln_encode_params *params, int etc2,
                         int isa)
{
    static const int wu[3] = {1, 1, 1}, wp[3] = {ETC_PW_R, ETC_PW_G, ETC_PW_B};
    const int *w = params->perceptual ? wp : wu;
    uint32_t c[16][16];
    etcb_out o;
    for (int l = 0; l < 16; l++) {
        const uint8_t *px = src[l < n ? l : 0].rgba8; /* unused lanes: a copy of block 0 */
        for (int p = 0; p < 16; p++)
            c[p][l] = (uint32_t)px[4 * p] | (uint32_t)px[4 * p + 1] << 8 | (uint32_t)px[4 * p + 2] << 16;
    }
#ifdef ETCB_X86
    if (isa != 0 && __builtin_cpu_supports("avx2"))
        etcb_avx2(c, n, w, etc2, &o);
    else
#endif
        etcb_generic(c, n, w, etc2, &o);
    for (int i = 0; i < n; i++) {
        uint8_t *d = out + (size_t)i * 8;
        const int k = etc2 ? etcb_etc2(&o, i, w, d) : 0;
        if (k == 0) etcb_pack(&o, i, d);
        else if (k == 2) kiln__etc_fast_opaque(&src[i], params, 1, d);
    }
}

static void batch_etc1(const kiln_block *src, int n, uint8_t *out, const kiln_encode_params *params)
{
    if (params->dither) {
        for (int i = 0; i < n; i++) kiln__enc_etc1(&src[i], out + (size_t)i * 8, params);
        return;
    }
    kiln__etc_batch_run(src, n, out, params, 0, -1);
}

static void batch_etc2_rgb(const kiln_block *src, int n, uint8_t *out, const kiln_encode_params *params)
{
    if (params->dither) {
        for (int i = 0; i < n; i++) kiln__enc_etc2_rgb(&src[i], out + (size_t)i * 8, params);
        return;
    }
    kiln__etc_batch_run(src, n, out, params, 1, -1);
}

kiln_batch_encode_fn kiln__etc_batch_encoder(kiln_format format, kiln_quality quality)
{
    if (quality != KILN_QUALITY_FAST) return NULL;
    switch (format) {
    case KILN_FORMAT_ETC1_UNORM:
    case KILN_FORMAT_ETC1_SRGB: return batch_etc1;
    case KILN_FORMAT_ETC2_RGB8_UNORM:
    case KILN_FORMAT_ETC2_RGB8_SRGB: return batch_etc2_rgb;
    default: return NULL;
    }
}

/* etc1_enc.c - ETC1 encoder (individual and differential modes, both flips) and the helpers every ETC
 * colour encoder shares: palettes, packing, exact errors, selector re-choice with optional dithering.
 *
 * Base-colour search (per sub-block, per quantisation 444 / 555). Without clamping, the error of base
 * colour c with table t is exactly
 *     sum_p |x_p - c|^2_w  +  G_t(w . c),   G_t(K) = sum_p min_m (W m^2 - 2 m |w . x_p - K|)
 * (W = sum of the channel weights, m the table's modifiers +-a, +-b): the first term is O(1) from the
 * sub-block's moments and the second depends on the base only through its weighted luma K, so it is
 * computed once per K for all 8 tables and cached. The search walks the "staircase" of quantised colours
 * nearest to the line mean + k(1,1,1) (k over a quality-dependent range), ranks them with this model,
 * and evaluates the best few exactly: tables whose palette does not clamp use the closed form, clamped
 * tables are evaluated pixel by pixel (with early exit). Differential mode pairs the two sub-blocks'
 * candidate lists and, when the free optima do not fit the 3-bit delta, searches one sub-block inside
 * the delta box of the other's best candidates. Individual mode takes each sub-block's best 444 colour.
 * Effort (staircase range, candidates evaluated exactly, box searches) grows with kiln_quality.
 * Speed (exact, the same results as the plain loops): the staircase starts from round(mean) + k, with
 * levels from the shared tables kiln__etc_q5 / _q4, and at step 1 jumps straight to the next k where a
 * channel's level changes; G_t(K) for the 8 tables and the clamped-palette error of 8 pixels are one
 * AVX2 vector each when the CPU has it (same integers as the scalar code, chosen at run time).
 * Quality FAST does no search at all: quantised half-block means, differential when they fit the delta
 * else individual, table by the luma model, one selector pass against the clamped palettes. Opaque
 * blocks without dithering take the vectorised version in etc_enc_fast.c (the driver: 16 blocks at once,
 * one per lane, in etc_enc_batch.c; same bytes); kiln__etc1_fast (at the end
 * of this file) is the scalar reference (RGB A1, dithering), with the same bytes (tested).
 */
#include "codec/etc_enc.h"

#include <string.h>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define ETC_HAVE_AVX2_G 1 /* sub_g has an AVX2 path, chosen at run time (same integers) */
#endif


/* ---------------------------------------------------------------- shared helpers */

static int sub_of(int flip, int p) { return flip ? (p >> 2) >= 2 : (p & 3) >= 2; }

void kiln__etc_palette(const etc_sol *s, const etc_src *src, int p, int pal[4][3], int valid[4])
{
    for (int k = 0; k < 4; k++) valid[k] = 1;
    if (s->mode == ETC_MODE_INDIV || s->mode == ETC_MODE_DIFF) {
        int sb = sub_of(s->flip, p);
        int base[3];
        for (int ch = 0; ch < 3; ch++) base[ch] = s->mode == ETC_MODE_INDIV ? etc_x4(s->c[sb][ch]) : etc_x5(s->c[sb][ch]);
        const int16_t *m = kiln__etc_modifiers[s->table[sb]];
        for (int k = 0; k < 4; k++) {
            int mod = m[k];
            if (src->transparent && (k & 1) == 0) mod = 0; /* A1 non-opaque: +-a become 0, 2 transparent */
            for (int ch = 0; ch < 3; ch++) pal[k][ch] = etc_clamp255(base[ch] + mod);
        }
    } else if (s->mode == ETC_MODE_T || s->mode == ETC_MODE_H) {
        int d = kiln__etc_distances[s->table[0]];
        for (int ch = 0; ch < 3; ch++) {
            int a = etc_x4(s->c[0][ch]), b = etc_x4(s->c[1][ch]);
            if (s->mode == ETC_MODE_T) {
                pal[0][ch] = a;
                pal[1][ch] = etc_clamp255(b + d);
                pal[2][ch] = b;
                pal[3][ch] = etc_clamp255(b - d);
            } else {
                pal[0][ch] = etc_clamp255(a + d);
                pal[1][ch] = etc_clamp255(a - d);
                pal[2][ch] = etc_clamp255(b + d);
                pal[3][ch] = etc_clamp255(b - d);
            }
        }
    } else {
        for (int k = 0; k < 4; k++) {
            valid[k] = 0;
            pal[k][0] = pal[k][1] = pal[k][2] = 0;
        }
        return;
    }
    if (src->transparent) valid[2] = 0;
}

/* Planar: decoded colour of pixel p. */
static void planar_pixel(const etc_sol *s, int p, int out[3])
{
    int x = p & 3, y = p >> 2;
    for (int ch = 0; ch < 3; ch++) {
        int o, h, v;
        if (ch == 1) {
            o = etc_x7(s->p[0][1]);
            h = etc_x7(s->p[1][1]);
            v = etc_x7(s->p[2][1]);
        } else {
            o = etc_x6(s->p[0][ch]);
            h = etc_x6(s->p[1][ch]);
            v = etc_x6(s->p[2][ch]);
        }
        int t = x * (h - o) + y * (v - o) + 4 * o + 2; /* >= -1528 */
        out[ch] = etc_clamp255(((t + 2048) >> 2) - 512);
    }
}

static inline uint32_t werr(const int *w, const int *a, const int *b)
{
    int d0 = a[0] - b[0], d1 = a[1] - b[1], d2 = a[2] - b[2];
    return (uint32_t)(w[0] * d0 * d0 + w[1] * d1 * d1 + w[2] * d2 * d2);
}

uint32_t kiln__etc_sol_error(const etc_sol *s, const etc_src *src)
{
    uint32_t e = 0;
    for (int p = 0; p < 16; p++) {
        if (!src->opaque[p]) continue;
        if (s->mode == ETC_MODE_PLANAR) {
            int c[3];
            planar_pixel(s, p, c);
            e += werr(src->w, src->c[p], c);
        } else {
            int pal[4][3], valid[4];
            kiln__etc_palette(s, src, p, pal, valid);
            e += werr(src->w, src->c[p], pal[s->sel[p] & 3]);
        }
    }
    return e;
}

void kiln__etc_reselect(etc_sol *s, const etc_src *src, int dither)
{
    if (s->mode == ETC_MODE_PLANAR) {
        s->err = kiln__etc_sol_error(s, src);
        return;
    }
    int carry[16][3];
    memset(carry, 0, sizeof carry);
    uint32_t e = 0;
    for (int p = 0; p < 16; p++) {
        if (!src->opaque[p]) {
            s->sel[p] = 2; /* transparent */
            continue;
        }
        int pal[4][3], valid[4], tgt[3];
        kiln__etc_palette(s, src, p, pal, valid);
        for (int ch = 0; ch < 3; ch++) {
            /* carried error is kept in 1/16 units */
            int v = src->c[p][ch] + (dither ? (carry[p][ch] >= 0 ? (carry[p][ch] + 8) >> 4 : -((-carry[p][ch] + 8) >> 4)) : 0);
            tgt[ch] = etc_clamp255(v);
        }
        int bk = -1;
        uint32_t be = UINT32_MAX;
        for (int k = 0; k < 4; k++) {
            if (!valid[k]) continue;
            uint32_t ek = werr(src->w, tgt, pal[k]);
            if (ek < be) {
                be = ek;
                bk = k;
            }
        }
        s->sel[p] = (uint8_t)bk;
        e += werr(src->w, src->c[p], pal[bk]);
        if (dither) {
            int x = p & 3, y = p >> 2;
            for (int ch = 0; ch < 3; ch++) {
                int r = tgt[ch] - pal[bk][ch];
                if (x < 3) carry[p + 1][ch] += r * 7;
                if (y < 3) {
                    if (x > 0) carry[p + 3][ch] += r * 3;
                    carry[p + 4][ch] += r * 5;
                    if (x < 3) carry[p + 5][ch] += r * 1;
                }
            }
        }
    }
    s->err = e;
}

static int sext3(int v) { return v >= 4 ? v - 8 : v; }

void kiln__etc_pack(const etc_sol *s, const etc_src *src, uint8_t out[8])
{
    uint64_t v = 0;
    uint64_t opaque_bit = src->transparent ? 0 : 1;
    switch (s->mode) {
    case ETC_MODE_INDIV:
        v = (uint64_t)s->c[0][0] << 60 | (uint64_t)s->c[1][0] << 56 | (uint64_t)s->c[0][1] << 52 |
            (uint64_t)s->c[1][1] << 48 | (uint64_t)s->c[0][2] << 44 | (uint64_t)s->c[1][2] << 40 |
            (uint64_t)s->table[0] << 37 | (uint64_t)s->table[1] << 34 | (uint64_t)s->flip << 32;
        break;
    case ETC_MODE_DIFF:
        for (int ch = 0; ch < 3; ch++) {
            int d = s->c[1][ch] - s->c[0][ch];
            v |= (uint64_t)s->c[0][ch] << (59 - 8 * ch) | (uint64_t)(d & 7) << (56 - 8 * ch);
        }
        v |= (uint64_t)s->table[0] << 37 | (uint64_t)s->table[1] << 34 | opaque_bit << 33 | (uint64_t)s->flip << 32;
        break;
    case ETC_MODE_T: {
        int r = s->c[0][0], ra = r >> 2, rb = r & 3, d = s->table[0];
        /* R + dR must leave [0, 31]: underflow when possible, else overflow */
        uint64_t force = (ra + rb < 4) ? ((uint64_t)1 << 58) : ((uint64_t)7 << 61);
        v = force | (uint64_t)ra << 59 | (uint64_t)rb << 56 | (uint64_t)s->c[0][1] << 52 | (uint64_t)s->c[0][2] << 48 |
            (uint64_t)s->c[1][0] << 44 | (uint64_t)s->c[1][1] << 40 | (uint64_t)s->c[1][2] << 36 |
            (uint64_t)(d >> 1) << 34 | opaque_bit << 33 | (uint64_t)(d & 1) << 32;
        break;
    }
    case ETC_MODE_H: {
        int r0 = s->c[0][0], g0 = s->c[0][1], b0 = s->c[0][2], d = s->table[0];
        int g1a = g0 >> 1, g1b = g0 & 1, b1a = b0 >> 3, b1b = (b0 >> 1) & 3, b1c = b0 & 1;
        v = (uint64_t)r0 << 59 | (uint64_t)g1a << 56 | (uint64_t)g1b << 52 | (uint64_t)b1a << 51 | (uint64_t)b1b << 48 |
            (uint64_t)b1c << 47 | (uint64_t)s->c[1][0] << 43 | (uint64_t)(s->c[1][1] >> 1) << 40 |
            (uint64_t)(s->c[1][1] & 1) << 39 | (uint64_t)s->c[1][2] << 35 | (uint64_t)(d >> 2) << 34 |
            opaque_bit << 33 | (uint64_t)((d >> 1) & 1) << 32;
        if (r0 + sext3(g1a) < 0) v |= (uint64_t)1 << 63;   /* R must not overflow (that would be T) */
        int x = (g1b << 1) | b1a;                          /* G must overflow */
        v |= (x + b1b < 4) ? ((uint64_t)1 << 50) : ((uint64_t)7 << 53);
        break;
    }
    case ETC_MODE_PLANAR: {
        int ro = s->p[0][0], go = s->p[0][1], bo = s->p[0][2];
        int rh = s->p[1][0], gh = s->p[1][1], bh = s->p[1][2];
        int rv = s->p[2][0], gv = s->p[2][1], bv = s->p[2][2];
        int go1 = go >> 6, go2 = go & 63, bo1 = bo >> 5, bo2 = (bo >> 3) & 3, bo3a = (bo >> 1) & 3, bo3b = bo & 1;
        v = (uint64_t)ro << 57 | (uint64_t)go1 << 56 | (uint64_t)go2 << 49 | (uint64_t)bo1 << 48 | (uint64_t)bo2 << 43 |
            (uint64_t)bo3a << 40 | (uint64_t)bo3b << 39 | (uint64_t)(rh >> 1) << 34 | (uint64_t)1 << 33 |
            (uint64_t)(rh & 1) << 32 | (uint64_t)gh << 25 | (uint64_t)(bh >> 5) << 24 | (uint64_t)(bh & 31) << 19 |
            (uint64_t)(rv >> 3) << 16 | (uint64_t)(rv & 7) << 13 | (uint64_t)(gv >> 2) << 8 | (uint64_t)(gv & 3) << 6 |
            (uint64_t)bv;
        if ((ro >> 2) + sext3(((ro & 3) << 1) | go1) < 0) v |= (uint64_t)1 << 63;  /* no R overflow */
        if ((go2 >> 2) + sext3(((go2 & 3) << 1) | bo1) < 0) v |= (uint64_t)1 << 55; /* no G overflow */
        v |= (bo2 + bo3a < 4) ? ((uint64_t)1 << 42) : ((uint64_t)7 << 45);       /* B overflows */
        break;
    }
    default:
        break;
    }
    if (s->mode != ETC_MODE_PLANAR) {
        for (int p = 0; p < 16; p++) {
            int j = (p & 3) * 4 + (p >> 2);
            v |= (uint64_t)(s->sel[p] >> 1) << (16 + j) | (uint64_t)(s->sel[p] & 1) << j;
        }
    }
    for (int i = 0; i < 8; i++) out[i] = (uint8_t)(v >> (56 - 8 * i));
}

void kiln__etc_src_init(etc_src *src, const kiln_block *blk, const kiln_encode_params *params, int a1)
{
    memset(src, 0, sizeof *src);
    for (int p = 0; p < 16; p++) {
        for (int ch = 0; ch < 3; ch++) src->c[p][ch] = blk->rgba8[p * 4 + ch];
        src->opaque[p] = a1 ? blk->rgba8[p * 4 + 3] >= params->alpha_threshold : 1;
        src->nopaque += src->opaque[p];
    }
    if (params->perceptual) {
        src->w[0] = ETC_PW_R;
        src->w[1] = ETC_PW_G;
        src->w[2] = ETC_PW_B;
    } else {
        src->w[0] = src->w[1] = src->w[2] = 1;
    }
    src->quality = params->quality;
    src->a1 = a1;
    src->transparent = a1 && src->nopaque < 16;
}

/* ---------------------------------------------------------------- sub-block search */

#define GCACHE 64

typedef struct gentry {
    int32_t key; /* K + 1, 0 = empty */
    int32_t gmin;
    int32_t g[8];
} gentry;

typedef struct etc_sub {
    int n;
    int px[8][3];
    int32_t pxc[3][8]; /* the same pixels channel-major (the vector paths; n == 8) */
    int kx[8];        /* w . x_p */
    int sum[3];
    int64_t sq[3];    /* sum of squares per channel */
    double mean[3];
    int transparent;
    int32_t ca[8], a2[8], cb[8], b2[8]; /* per-table constants of the luma term */
    gentry gc[GCACHE];
    int avx2;          /* the CPU has AVX2 (sub_g's vector path) */
} etc_sub;

typedef struct sub_cand {
    uint32_t err;
    uint8_t q[3];
    uint8_t t;
} sub_cand;

#define SUB_CAP 16

typedef struct sub_list {
    int n;
    sub_cand c[SUB_CAP];
} sub_list;

static void sub_build(etc_sub *sb, const etc_src *src, int flip, int half)
{
    sb->n = 0;
    for (int ch = 0; ch < 3; ch++) {
        sb->sum[ch] = 0;
        sb->sq[ch] = 0;
    }
    for (int i = 0; i < GCACHE; i++) sb->gc[i].key = 0;
    for (int p = 0; p < 16; p++) {
        if (sub_of(flip, p) != half || !src->opaque[p]) continue;
        for (int ch = 0; ch < 3; ch++) {
            sb->px[sb->n][ch] = src->c[p][ch];
            sb->pxc[ch][sb->n] = src->c[p][ch];
            sb->sum[ch] += src->c[p][ch];
            sb->sq[ch] += src->c[p][ch] * src->c[p][ch];
        }
        sb->kx[sb->n] = src->w[0] * src->c[p][0] + src->w[1] * src->c[p][1] + src->w[2] * src->c[p][2];
        sb->n++;
    }
    sb->transparent = src->transparent;
#ifdef ETC_HAVE_AVX2_G
    sb->avx2 = __builtin_cpu_supports("avx2");
#else
    sb->avx2 = 0;
#endif
    const int W = src->w[0] + src->w[1] + src->w[2];
    for (int t = 0; t < 8; t++) {
        const int a = kiln__etc_modifiers[t][0], b = kiln__etc_modifiers[t][1];
        /* A1 non-opaque: the +-a entries are 0 */
        sb->ca[t] = sb->transparent ? 0 : W * a * a;
        sb->a2[t] = sb->transparent ? 0 : 2 * a;
        sb->cb[t] = W * b * b;
        sb->b2[t] = 2 * b;
    }
    for (int ch = 0; ch < 3; ch++) sb->mean[ch] = sb->n ? (double)sb->sum[ch] / sb->n : 0;
}

#ifdef ETC_HAVE_AVX2_G
/* G_t(K) for the 8 tables as the lanes of one AVX2 vector (same integers as the scalar loop). */
typedef int32_t etc_v8i __attribute__((vector_size(32)));
__attribute__((target("avx2"))) static void sub_g_avx2(const etc_sub *sb, int K, int32_t e[8])
{
    etc_v8i ca, a2, cb, b2, acc = {0, 0, 0, 0, 0, 0, 0, 0};
    memcpy(&ca, sb->ca, sizeof ca);
    memcpy(&a2, sb->a2, sizeof a2);
    memcpy(&cb, sb->cb, sizeof cb);
    memcpy(&b2, sb->b2, sizeof b2);
    for (int i = 0; i < sb->n; i++) {
        int q = sb->kx[i] - K;
        const int32_t aq = q < 0 ? -q : q;
        etc_v8i ea = ca - a2 * aq, eb = cb - b2 * aq;
        etc_v8i lt = ea < eb;
        acc += (ea & lt) | (eb & ~lt);
    }
    memcpy(e, &acc, 8 * sizeof *e);
}

/* Exact error of 8 pixels against the np colours pal (nearest each), all lanes at once. */
__attribute__((target("avx2"))) static uint32_t sub_clamped_avx2(const etc_sub *sb, const int *w, const int pal[4][3],
                                                                 int np)
{
    etc_v8i r, g, b, best = {INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX};
    memcpy(&r, sb->pxc[0], sizeof r);
    memcpy(&g, sb->pxc[1], sizeof g);
    memcpy(&b, sb->pxc[2], sizeof b);
    for (int j = 0; j < np; j++) {
        etc_v8i d0 = r - pal[j][0], d1 = g - pal[j][1], d2 = b - pal[j][2];
        etc_v8i e = w[0] * d0 * d0 + w[1] * d1 * d1 + w[2] * d2 * d2;
        etc_v8i lt = e < best;
        best = (e & lt) | (best & ~lt);
    }
    return (uint32_t)(best[0] + best[1] + best[2] + best[3] + best[4] + best[5] + best[6] + best[7]);
}
#endif

/* Luma part of the unclamped error, per table: G_t(K) = sum_p min_m (W m^2 - 2 m |Kx_p - K|). With it,
 * the exact unclamped error of base colour c and table t is |x - c|^2_w summed + G_t(w . c). */
static const gentry *sub_g(etc_sub *sb, int K)
{
    gentry *ge = &sb->gc[K & (GCACHE - 1)];
    if (ge->key == K + 1) return ge;
    int32_t e[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#ifdef ETC_HAVE_AVX2_G
    if (sb->avx2)
        sub_g_avx2(sb, K, e);
    else
#endif
    for (int i = 0; i < sb->n; i++) {
        int q = sb->kx[i] - K;
        const int32_t aq = q < 0 ? -q : q;
        for (int t = 0; t < 8; t++) {
            int32_t ea = sb->ca[t] - sb->a2[t] * aq, eb = sb->cb[t] - sb->b2[t] * aq;
            e[t] += ea < eb ? ea : eb;
        }
    }
    int32_t m = e[0];
    for (int t = 0; t < 8; t++) {
        ge->g[t] = e[t];
        m = e[t] < m ? e[t] : m;
    }
    ge->gmin = m;
    ge->key = K + 1;
    return ge;
}

/* sum_p |x_p - b|^2_w, exactly. */
static uint32_t sub_base_sq(const etc_sub *sb, const int *w, const int b[3])
{
    int64_t s = 0;
    for (int ch = 0; ch < 3; ch++) s += w[ch] * (sb->sq[ch] - 2 * (int64_t)b[ch] * sb->sum[ch] + (int64_t)sb->n * b[ch] * b[ch]);
    return (uint32_t)s;
}

/* Exact (clamped) best error over the tables for base colour b (8-bit expanded); *table gets the table.
 * Unclamped tables use the closed form; clamped ones are evaluated pixel by pixel with early exit. */
static uint32_t sub_best(etc_sub *sb, const etc_src *src, const int b[3], int *table)
{
    const int *w = src->w;
    const int K = w[0] * b[0] + w[1] * b[1] + w[2] * b[2];
    const gentry *ge = sub_g(sb, K);
    const uint32_t base_sq = sub_base_sq(sb, w, b);
    int lo = b[0] < b[1] ? b[0] : b[1], hi = b[0] > b[1] ? b[0] : b[1];
    lo = lo < b[2] ? lo : b[2];
    hi = hi > b[2] ? hi : b[2];
    uint32_t best = UINT32_MAX;
    int bt = 0, nclamped = 0;
    int clamped[8];
    for (int t = 0; t < 8; t++) {
        const int mb = kiln__etc_modifiers[t][1];
        if (lo - mb >= 0 && hi + mb <= 255) {
            uint32_t e = (uint32_t)((int64_t)base_sq + ge->g[t]); /* no clamping: exact closed form */
            if (e < best) {
                best = e;
                bt = t;
            }
        } else {
            clamped[nclamped++] = t;
        }
    }
    for (int k = 0; k < nclamped; k++) {
        const int t = clamped[k];
        int pal[4][3], np = 0;
        for (int j = 0; j < 4; j++) {
            int mod = kiln__etc_modifiers[t][j];
            if (src->transparent) {
                if (j == 2) continue;
                if (j == 0) mod = 0;
            }
            for (int ch = 0; ch < 3; ch++) pal[np][ch] = etc_clamp255(b[ch] + mod);
            np++;
        }
        uint32_t e = 0;
#ifdef ETC_HAVE_AVX2_G
        if (sb->avx2 && sb->n == 8)
            e = sub_clamped_avx2(sb, w, pal, np);
        else
#endif
        for (int i = 0; i < sb->n && e <= best; i++) { /* (<=: a tie is only taken on the full sum) */
            uint32_t be = werr(w, sb->px[i], pal[0]);
            for (int j = 1; j < np; j++) {
                uint32_t ej = werr(w, sb->px[i], pal[j]);
                be = ej < be ? ej : be;
            }
            e += be;
        }
        if (e < best || (e == best && t < bt)) {
            best = e;
            bt = t;
        }
    }
    *table = bt;
    return best;
}

static int expand_q(int v, int bits) { return bits == 4 ? etc_x4(v) : etc_x5(v); }

/* Nearest quantised level (by expanded value) of an integer 8-bit value (may lie outside 0..255). */
static inline int quant_near(int v, int bits)
{
    if (v <= 0) return 0;
    if (bits == 4) return v >= 255 ? 15 : (v + 8) / 17;
    if (v >= 255) return 31;
    int l = (v * 31 + 127) / 255, best = l, bd = etc_x5(l) - v;
    bd = bd < 0 ? -bd : bd;
    if (l > 0) {
        int d = v - etc_x5(l - 1);
        if (d < bd) {
            bd = d;
            best = l - 1;
        }
    }
    if (l < 31) {
        int d = etc_x5(l + 1) - v;
        if (d < bd) best = l + 1;
    }
    return best;
}

typedef struct search_effort {
    int k_range, k_step; /* staircase: offsets -k..k along the grey axis */
    int neigh;           /* neighbourhood of each staircase colour: 0 none, 1 = +-1 per channel, 2 = cube */
    int top;             /* candidates evaluated exactly (clamping, every table) */
    int box_top;         /* differential: candidates whose delta box is searched */
    int box_exact;       /* candidates evaluated exactly per box search */
} search_effort;

static void effort_for(int quality, search_effort *e)
{
    switch (quality) {
    case KILN_QUALITY_FAST: *e = (search_effort){0, 1, 0, 1, 1, 1}; break;
    case KILN_QUALITY_NORMAL: *e = (search_effort){8, 2, 0, 2, 1, 1}; break;
    case KILN_QUALITY_HIGH: *e = (search_effort){16, 2, 0, 2, 1, 1}; break;
    default: *e = (search_effort){32, 1, 0, 4, 2, 2}; break;
    }
}

typedef struct model_top {
    int n, cap;
    double e[SUB_CAP];
    uint8_t q[SUB_CAP][3];
} model_top;

static void top_insert(model_top *t, double e, const int q[3])
{
    for (int i = 0; i < t->n; i++)
        if (t->q[i][0] == q[0] && t->q[i][1] == q[1] && t->q[i][2] == q[2]) return;
    if (t->n == t->cap && e >= t->e[t->n - 1]) return;
    int i = t->n < t->cap ? t->n++ : t->n - 1;
    while (i > 0 && t->e[i - 1] > e) {
        t->e[i] = t->e[i - 1];
        memcpy(t->q[i], t->q[i - 1], 3);
        i--;
    }
    t->e[i] = e;
    t->q[i][0] = (uint8_t)q[0];
    t->q[i][1] = (uint8_t)q[1];
    t->q[i][2] = (uint8_t)q[2];
}

static const int8_t neigh7[7][3] = {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};

/* Ranks colours near the grey line through the mean by the unclamped model, evaluates the best `top`
 * exactly and writes them to l sorted by exact error. lo / hi bound the colours (NULL: full range). */
static void sub_search(sub_list *l, etc_sub *sb, const etc_src *src, int bits, const search_effort *ef,
                       const int *lo, const int *hi, int top)
{
    l->n = 0;
    if (sb->n == 0) {
        l->n = 1;
        memset(&l->c[0], 0, sizeof l->c[0]);
        for (int ch = 0; ch < 3; ch++) l->c[0].q[ch] = (uint8_t)(lo ? lo[ch] : 0);
        return;
    }
    const int *w = src->w;
    const int maxl = (1 << bits) - 1;
    int blo[3], bhi[3];
    for (int ch = 0; ch < 3; ch++) {
        blo[ch] = lo ? lo[ch] : 0;
        bhi[ch] = hi ? hi[ch] : maxl;
    }
    model_top mt;
    mt.n = 0;
    mt.cap = top < SUB_CAP ? top : SUB_CAP;
    int prev[3] = {-1, -1, -1};
    int nn = ef->neigh == 0 ? 1 : (ef->neigh == 1 ? 7 : 27);
    /* round(mean + k) = round(mean) + k for integer k */
    int m0[3];
    for (int ch = 0; ch < 3; ch++) m0[ch] = (2 * sb->sum[ch] + sb->n) / (2 * sb->n);
    const uint8_t *qt = bits == 4 ? kiln__etc_q4 : kiln__etc_q5;
    const uint16_t *qfirst = bits == 4 ? kiln__etc_q4_first : kiln__etc_q5_first;
    for (int k = -ef->k_range; k <= ef->k_range;) {
        int s[3];
        /* next k: with step 1, jump straight to the next k where some channel's level changes (the
         * colours in between repeat the current one and would be skipped below anyway) */
        int nk = k + ef->k_step;
        if (ef->k_step == 1) {
            nk = ef->k_range + 1;
            for (int ch = 0; ch < 3; ch++) {
                int v = m0[ch] + k, next;
                if (v >= 255)
                    continue;
                next = qfirst[qt[v < 0 ? 0 : v] + 1];
                nk = next - m0[ch] < nk ? next - m0[ch] : nk;
            }
        }
        const int kc = k;
        k = nk;
        for (int ch = 0; ch < 3; ch++) {
            int v = m0[ch] + kc;
            s[ch] = qt[v < 0 ? 0 : (v > 255 ? 255 : v)];
            s[ch] = s[ch] < blo[ch] ? blo[ch] : (s[ch] > bhi[ch] ? bhi[ch] : s[ch]);
        }
        if (s[0] == prev[0] && s[1] == prev[1] && s[2] == prev[2]) continue;
        memcpy(prev, s, sizeof prev);
        for (int j = 0; j < nn; j++) {
            int c[3];
            if (ef->neigh == 2) {
                c[0] = s[0] + j % 3 - 1;
                c[1] = s[1] + (j / 3) % 3 - 1;
                c[2] = s[2] + j / 9 - 1;
            } else {
                for (int ch = 0; ch < 3; ch++) c[ch] = s[ch] + neigh7[j][ch];
            }
            if (c[0] < blo[0] || c[0] > bhi[0] || c[1] < blo[1] || c[1] > bhi[1] || c[2] < blo[2] || c[2] > bhi[2])
                continue;
            int e8[3] = {expand_q(c[0], bits), expand_q(c[1], bits), expand_q(c[2], bits)};
            double d = 0;
            for (int ch = 0; ch < 3; ch++) {
                double u = sb->sum[ch] - (double)sb->n * e8[ch];
                d += w[ch] * u * u;
            }
            int K = w[0] * e8[0] + w[1] * e8[1] + w[2] * e8[2];
            top_insert(&mt, d / sb->n + sub_g(sb, K)->gmin, c);
        }
    }
    for (int i = 0; i < mt.n; i++) {
        int b[3] = {expand_q(mt.q[i][0], bits), expand_q(mt.q[i][1], bits), expand_q(mt.q[i][2], bits)};
        int bt;
        uint32_t be = sub_best(sb, src, b, &bt);
        sub_cand cd = {be, {mt.q[i][0], mt.q[i][1], mt.q[i][2]}, (uint8_t)bt};
        int j = l->n++;
        while (j > 0 && l->c[j - 1].err > cd.err) {
            l->c[j] = l->c[j - 1];
            j--;
        }
        l->c[j] = cd;
    }
}

static int delta_ok(const sub_cand *a, const sub_cand *b)
{
    for (int ch = 0; ch < 3; ch++) {
        int d = b->q[ch] - a->q[ch];
        if (d < -4 || d > 3) return 0;
    }
    return 1;
}

static void consider(etc_sol *best, int mode, int flip, const sub_cand *a, const sub_cand *b)
{
    uint32_t e = a->err + b->err;
    if (e >= best->err) return;
    best->err = e;
    best->mode = mode;
    best->flip = flip;
    for (int ch = 0; ch < 3; ch++) {
        best->c[0][ch] = a->q[ch];
        best->c[1][ch] = b->q[ch];
    }
    best->table[0] = a->t;
    best->table[1] = b->t;
}

static void diff_search(etc_sub *s0, etc_sub *s1, const etc_src *src, int flip, const search_effort *ef,
                        etc_sol *best)
{
    sub_list l0, l1;
    if (s0->n == 0 || s1->n == 0) {
        /* a sub-block without opaque pixels takes the other one's colour */
        etc_sub *full = s0->n ? s0 : s1;
        sub_list lf;
        sub_search(&lf, full, src, 5, ef, NULL, NULL, 1);
        sub_cand empty = lf.c[0];
        empty.err = 0;
        empty.t = 0;
        if (s0->n)
            consider(best, ETC_MODE_DIFF, flip, &lf.c[0], &empty);
        else
            consider(best, ETC_MODE_DIFF, flip, &empty, &lf.c[0]);
        return;
    }
    sub_search(&l0, s0, src, 5, ef, NULL, NULL, ef->top);
    sub_search(&l1, s1, src, 5, ef, NULL, NULL, ef->top);
    if (l0.c[0].err + l1.c[0].err >= best->err) return;
    int found = 0;
    for (int i = 0; i < l0.n; i++)
        for (int j = 0; j < l1.n; j++) {
            if (!delta_ok(&l0.c[i], &l1.c[j])) continue;
            consider(best, ETC_MODE_DIFF, flip, &l0.c[i], &l1.c[j]);
            if (i == 0 && j == 0) found = 1;
        }
    if (found) return; /* both free optima fit: nothing better exists among the candidates */
    for (int side = 0; side < 2; side++) {
        const sub_list *la = side ? &l1 : &l0;
        etc_sub *sb = side ? s0 : s1;
        uint32_t other_free = side ? l0.c[0].err : l1.c[0].err;
        for (int k = 0; k < ef->box_top && k < la->n; k++) {
            const sub_cand *a = &la->c[k];
            if (a->err + other_free >= best->err) continue;
            int lo[3], hi[3];
            for (int ch = 0; ch < 3; ch++) {
                lo[ch] = side == 0 ? a->q[ch] - 4 : a->q[ch] - 3; /* q1 - q0 in [-4, 3] */
                hi[ch] = side == 0 ? a->q[ch] + 3 : a->q[ch] + 4;
                lo[ch] = lo[ch] < 0 ? 0 : lo[ch];
                hi[ch] = hi[ch] > 31 ? 31 : hi[ch];
            }
            sub_list bl;
            sub_search(&bl, sb, src, 5, ef, lo, hi, ef->box_exact);
            if (side == 0)
                consider(best, ETC_MODE_DIFF, flip, a, &bl.c[0]);
            else
                consider(best, ETC_MODE_DIFF, flip, &bl.c[0], a);
        }
    }
}

void kiln__etc1_search(const etc_src *src, etc_sol *best)
{
    search_effort ef;
    effort_for(src->quality, &ef);
    memset(best, 0, sizeof *best);
    best->err = UINT32_MAX;
    best->mode = ETC_MODE_DIFF;
    for (int flip = 0; flip < 2; flip++) {
        etc_sub s0, s1;
        sub_build(&s0, src, flip, 0);
        sub_build(&s1, src, flip, 1);
        if (!src->a1) {
            sub_list l0, l1;
            sub_search(&l0, &s0, src, 4, &ef, NULL, NULL, ef.top);
            sub_search(&l1, &s1, src, 4, &ef, NULL, NULL, ef.top);
            consider(best, ETC_MODE_INDIV, flip, &l0.c[0], &l1.c[0]);
        }
        diff_search(&s0, &s1, src, flip, &ef, best);
    }
    kiln__etc_reselect(best, src, 0);
}

/* ---------------------------------------------------------------- block encoder entry */

void kiln__enc_etc1(const kiln_block *blk, uint8_t *out, const kiln_encode_params *params)
{
    if (params->quality == KILN_QUALITY_FAST && !params->dither) {
        kiln__etc_fast_opaque(blk, params, 0, out);
        return;
    }
    etc_src src;
    etc_sol sol;
    kiln__etc_src_init(&src, blk, params, 0);
    if (src.quality == KILN_QUALITY_FAST)
        kiln__etc1_fast(&src, &sol);
    else
        kiln__etc1_search(&src, &sol);
    if (params->dither) kiln__etc_reselect(&sol, &src, 1);
    kiln__etc_pack(&sol, &src, out);
}

/* ---------------------------------------------------------------- fast path (quality FAST)
 *
 * etcpak-style: per flip and half, the base is the quantised mean colour (differential when the two
 * 555 means fit the 3-bit delta, else individual 444); the table is chosen with the exact unclamped
 * error model G_t (luma only, 8 pixels x 8 tables, branch-free so it vectorises); the selectors are
 * then chosen once against the real (clamped) palettes. No iterative search. */

/* G_t(K) for 8 tables at once: e[t] = sum_i min(ca - a2 |kx_i - K|, cb - b2 |kx_i - K|). */
static void fast_tables(const int32_t *kx, int n, int K, int W, int32_t e[8])
{
    int32_t aq[8];
    for (int i = 0; i < 8; i++) {
        int32_t q = i < n ? kx[i] - K : 0;
        aq[i] = q < 0 ? -q : q;
    }
    for (int t = 0; t < 8; t++) {
        const int32_t a = kiln__etc_modifiers[t][0], b = kiln__etc_modifiers[t][1];
        const int32_t ca = W * a * a, cb = W * b * b, a2 = 2 * a, b2 = 2 * b;
        int32_t s = 0;
        for (int i = 0; i < 8; i++) {
            int32_t ea = ca - a2 * aq[i], eb = cb - b2 * aq[i];
            s += (i < n) ? (ea < eb ? ea : eb) : 0;
        }
        e[t] = s;
    }
}

typedef struct fast_half {
    int n;
    int sum[3];
    int64_t sq[3];
    int32_t kx[8];
} fast_half;

/* Best table and modelled error of one half for the expanded base b. */
static uint32_t fast_half_eval(const fast_half *h, const int *w, const int b[3], int *table)
{
    if (h->n == 0) {
        *table = 0;
        return 0;
    }
    const int W = w[0] + w[1] + w[2];
    int64_t base = 0;
    for (int ch = 0; ch < 3; ch++) base += w[ch] * (h->sq[ch] - 2 * (int64_t)b[ch] * h->sum[ch] + (int64_t)h->n * b[ch] * b[ch]);
    int32_t e[8];
    fast_tables(h->kx, h->n, w[0] * b[0] + w[1] * b[1] + w[2] * b[2], W, e);
    int bt = 0;
    for (int t = 1; t < 8; t++)
        if (e[t] < e[bt]) bt = t;
    *table = bt;
    int64_t r = base + e[bt];
    return r < 0 ? 0 : (uint32_t)r;
}

void kiln__etc1_fast(const etc_src *src, etc_sol *best)
{
    memset(best, 0, sizeof *best);
    best->err = UINT32_MAX;
    best->mode = ETC_MODE_DIFF;
    const int *w = src->w;
    for (int flip = 0; flip < 2; flip++) {
        fast_half h[2];
        memset(h, 0, sizeof h);
        for (int p = 0; p < 16; p++) {
            if (!src->opaque[p]) continue;
            fast_half *hh = &h[sub_of(flip, p)];
            for (int ch = 0; ch < 3; ch++) {
                hh->sum[ch] += src->c[p][ch];
                hh->sq[ch] += src->c[p][ch] * src->c[p][ch];
            }
            hh->kx[hh->n++] = w[0] * src->c[p][0] + w[1] * src->c[p][1] + w[2] * src->c[p][2];
        }
        int q5[2][3], q4[2][3];
        for (int s = 0; s < 2; s++)
            for (int ch = 0; ch < 3; ch++) {
                int m = h[s].n ? (2 * h[s].sum[ch] + h[s].n) / (2 * h[s].n) : 0;
                q5[s][ch] = quant_near(m, 5);
                q4[s][ch] = quant_near(m, 4);
            }
        for (int ch = 0; ch < 3; ch++) { /* an empty half takes the other's colour */
            if (!h[0].n) q5[0][ch] = q5[1][ch], q4[0][ch] = q4[1][ch];
            if (!h[1].n) q5[1][ch] = q5[0][ch], q4[1][ch] = q4[0][ch];
        }
        int fits = 1;
        for (int ch = 0; ch < 3; ch++) {
            int d = q5[1][ch] - q5[0][ch];
            if (d < -4 || d > 3) fits = 0;
        }
        if (!fits && src->a1) {
            /* no individual mode: pull the second colour into the delta box of the first */
            for (int ch = 0; ch < 3; ch++) {
                int d = q5[1][ch] - q5[0][ch];
                q5[1][ch] = q5[0][ch] + (d < -4 ? -4 : (d > 3 ? 3 : d));
            }
            fits = 1;
        }
        int mode = fits ? ETC_MODE_DIFF : ETC_MODE_INDIV;
        uint32_t e = 0;
        int tb[2];
        for (int s = 0; s < 2; s++) {
            const int *q = fits ? q5[s] : q4[s];
            int b[3] = {expand_q(q[0], fits ? 5 : 4), expand_q(q[1], fits ? 5 : 4), expand_q(q[2], fits ? 5 : 4)};
            e += fast_half_eval(&h[s], w, b, &tb[s]);
        }
        if (e < best->err) {
            best->err = e;
            best->mode = mode;
            best->flip = flip;
            for (int s = 0; s < 2; s++) {
                memcpy(best->c[s], fits ? q5[s] : q4[s], sizeof best->c[s]);
                best->table[s] = tb[s];
            }
        }
    }
    kiln__etc_select_fast(best, src);
}

/* Nearest palette entry per pixel for individual / differential solutions (palettes built once). */
void kiln__etc_select_fast(etc_sol *s, const etc_src *src)
{
    if (s->mode != ETC_MODE_INDIV && s->mode != ETC_MODE_DIFF) {
        kiln__etc_reselect(s, src, 0);
        return;
    }
    int pal[2][4][3], valid[2][4];
    for (int sb = 0; sb < 2; sb++) {
        int p0 = s->flip ? (sb ? 8 : 0) : (sb ? 2 : 0);
        kiln__etc_palette(s, src, p0, pal[sb], valid[sb]);
    }
    uint32_t e = 0;
    for (int p = 0; p < 16; p++) {
        if (!src->opaque[p]) {
            s->sel[p] = 2;
            continue;
        }
        int sb = sub_of(s->flip, p), bk = -1;
        uint32_t be = UINT32_MAX;
        for (int k = 0; k < 4; k++) {
            if (!valid[sb][k]) continue;
            uint32_t ek = werr(src->w, src->c[p], pal[sb][k]);
            if (ek < be) {
                be = ek;
                bk = k;
            }
        }
        s->sel[p] = (uint8_t)bk;
        e += be;
    }
    s->err = e;
}

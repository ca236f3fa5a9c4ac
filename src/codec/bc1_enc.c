/* bc1_enc.c - BC1 colour blocks (BC1 RGB, BC1 RGBA with punch-through alpha, and the colour half of
 * BC2/BC3), scored exactly under kiln's decoder (bc.c): 565 endpoints widened by bit replication,
 * interpolants (2a+b)/3, (a+2b)/3 or (a+b)/2 in integers, truncating.
 *
 * Qualities:
 *   fast   - principal axis (power iteration on the covariance), the extreme texels along it as
 *            endpoints, then two least-squares refits on the indices (stb_dxt's high-quality
 *            refinement), every index choice and score on the real decoded palette; near-flat blocks
 *            also try the exact single-colour pair of their mean.
 *   normal - fast with more refits, the three-colour mode and the single-colour pair of the mean.
 *   high   - cluster fit (Simon Brown; Castano's "High Quality DXT Compression using CUDA"): texels
 *            ordered along the principal axis, every ordered 4-cluster partition (weights 1, 2/3,
 *            1/3, 0) and 3-cluster partition (1, 1/2, 0) solved by least squares from running sums,
 *            scored after 565 quantisation with the hardware's bit expansion; the best partition of
 *            each mode is re-indexed exactly and refined per channel.
 *   max    - cluster fit twice (the second time along the axis of the first result's endpoints); the
 *            best few partitions of each mode go through least-squares refits and then alternating
 *            exact steps: per channel, the best quantised endpoint pair within +-2 of the current one
 *            for the current indices (the channels are independent once the indices are fixed), then
 *            the best indices for those endpoints, until nothing improves.
 * A flat block gets the exact best 565 pair (all modes) from tables (bc1_enc_tables.h).
 * Error: sum over texels of w_r dr^2 + w_g dg^2 + w_b db^2 (weights 1, or perceptual); texels with
 * alpha 0 count nothing when params->alpha_cutout; BC1 RGBA texels below params->alpha_threshold are
 * transparent (three-colour mode, index 3) and count nothing either.
 * Dithering (params->dither) diffuses each texel's quantisation error to its unvisited neighbours in
 * the block (Floyd-Steinberg weights) when choosing the final indices.
 *
 * Speed: the per-block work is written on 16-lane float vectors (GCC/Clang vector extensions; one lane
 * per texel, or per partition in the cluster fit). The encoder is compiled three times - for AVX-512,
 * AVX2 and the x86-64 baseline - and picked at run time; every lane does the same IEEE operations in
 * the same order in all three (no FMA contraction), so the output bytes do not depend on the CPU.
 */
#include "codec/codec.h"
#include "codec/bc1_enc_tables.h"

#include <math.h>
#include <string.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#pragma clang diagnostic ignored "-Wpsabi"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

#define VI static inline __attribute__((always_inline))

/* ---------------------------------------------------------------- 16-lane vectors */

typedef float vf __attribute__((vector_size(64)));
typedef int32_t vi __attribute__((vector_size(64)));

VI vf vload(const float *p)
{
    vf v;
    memcpy(&v, p, sizeof v);
    return v;
}
VI void vstore(float *p, vf v) { memcpy(p, &v, sizeof v); }
VI vf vset1(float x) { return (vf){0} + x; }
VI vf vsel(vi m, vf a, vf b) { return (vf)(((vi)a & m) | ((vi)b & ~m)); }
VI vi vseli(vi m, vi a, vi b) { return (a & m) | (b & ~m); }
/* round to nearest even for |x| < 2^22, with two additions (the same in every lane width) */
VI vf vround(vf x) { return (x + 12582912.0f) - 12582912.0f; }
static inline float sround(float x)
{
    float t = x + 12582912.0f;
    return t - 12582912.0f;
}
typedef float vf8 __attribute__((vector_size(32)));
typedef float vf4 __attribute__((vector_size(16)));
typedef int32_t vi8 __attribute__((vector_size(32)));
typedef int32_t vi4 __attribute__((vector_size(16)));
/* lane sum in a fixed order: ((v0+v1)+(v2+v3)) + ((v4+v5)+(v6+v7)) + ... (a pairwise tree) */
VI float vhsum(vf v)
{
    vf8 s1 = __builtin_shufflevector(v, v, 0, 2, 4, 6, 8, 10, 12, 14) +
             __builtin_shufflevector(v, v, 1, 3, 5, 7, 9, 11, 13, 15);
    vf4 s2 = __builtin_shufflevector(s1, s1, 0, 2, 4, 6) + __builtin_shufflevector(s1, s1, 1, 3, 5, 7);
    return (s2[0] + s2[1]) + (s2[2] + s2[3]);
}
/* lane OR */
VI uint32_t vhor(vi v)
{
    vi8 s1 = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) | __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
    vi4 s2 = __builtin_shufflevector(s1, s1, 0, 1, 2, 3) | __builtin_shufflevector(s1, s1, 4, 5, 6, 7);
    return (uint32_t)((s2[0] | s2[1]) | (s2[2] | s2[3]));
}
static const vi k_lane = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

/* ---------------------------------------------------------------- block state */

enum { BC1_OPAQUE = 0, BC1_PUNCH = 1, BC1_FOUR_ANY = 2 };

typedef struct bc1_in {
    float r[16], g[16], b[16];    /* texel colours, 0..255 */
    float sr[16], sg[16], sb[16]; /* the same scaled by sqrt(channel weight), for distances */
    float w[16];                  /* 1: counts in the error, 0: does not */
    uint32_t tbits;               /* index 3 (0b11) at every transparent texel */
    int any_transp;
    int kind;          /* BC1_OPAQUE: 4-colour (c0 > c1) or 3-colour without index 3;
                          BC1_PUNCH: the same, 3-colour only when a texel is transparent;
                          BC1_FOUR_ANY: BC2/BC3, always 4-colour interpolation, any endpoint order */
    float cw[3], sw[3]; /* channel weights and their square roots */
    int dither;
    kiln_quality quality;
    int n;             /* texels that count */
    float x[16][3];    /* those texels, compacted */
} bc1_in;

typedef struct bc1_sol {
    uint16_t c0, c1;
    uint32_t idx;
    float err;
    int four; /* interpolation the decoder uses: 1 four-colour, 0 three-colour */
} bc1_sol;

static inline int expand5(int q) { return q << 3 | q >> 2; }
static inline int expand6(int q) { return q << 2 | q >> 4; }
static inline int clampi(int x, int lo, int hi) { return x < lo ? lo : x > hi ? hi : x; }
static inline uint16_t pack565(int r, int g, int b) { return (uint16_t)(r << 11 | g << 5 | b); }
static inline void unpack565(uint16_t c, int q[3])
{
    q[0] = c >> 11 & 31;
    q[1] = c >> 5 & 63;
    q[2] = c & 31;
}

/* Palette (8-bit) of two 565 endpoints with four- or three-colour interpolation, as bc.c decodes. */
VI void palette(uint16_t c0, uint16_t c1, int four, int pal[4][3])
{
    int q0[3], q1[3];
    unpack565(c0, q0);
    unpack565(c1, q1);
    for (int ch = 0; ch < 3; ch++) {
        int a = ch == 1 ? expand6(q0[ch]) : expand5(q0[ch]);
        int b = ch == 1 ? expand6(q1[ch]) : expand5(q1[ch]);
        pal[0][ch] = a;
        pal[1][ch] = b;
        if (four) {
            pal[2][ch] = (2 * a + b) / 3;
            pal[3][ch] = (a + 2 * b) / 3;
        } else {
            pal[2][ch] = (a + b) / 2;
            pal[3][ch] = 0;
        }
    }
}

/* Best indices for endpoints (c0, c1) with the given interpolation (first entry on ties); returns
 * the error. Transparent texels get index 3. */
VI float select_indices(const bc1_in *in, uint16_t c0, uint16_t c1, int four, uint32_t *idx_out)
{
    int pal[4][3];
    palette(c0, c1, four, pal);
    const vf r = vload(in->sr), g = vload(in->sg), b = vload(in->sb);
    vf best = vset1(0.0f);
    vi bi = {0};
    const int ne = four ? 4 : 3;
    for (int e = 0; e < ne; e++) {
        vf dr = r - (float)pal[e][0] * in->sw[0];
        vf dg = g - (float)pal[e][1] * in->sw[1];
        vf db = b - (float)pal[e][2] * in->sw[2];
        vf d = (dr * dr + dg * dg) + db * db;
        if (e == 0) {
            best = d;
        } else {
            vi m = d < best;
            best = vsel(m, d, best);
            bi = vseli(m, (vi){0} + e, bi);
        }
    }
    float err = vhsum(best * vload(in->w));
    uint32_t idx = vhor(bi << (k_lane + k_lane));
    /* transparent texels: index 3 */
    idx = (idx & ~in->tbits) | in->tbits;
    *idx_out = idx;
    return err;
}

/* The same with Floyd-Steinberg diffusion of the error inside the block (for dithering). */
static float select_indices_dither(const bc1_in *in, uint16_t c0, uint16_t c1, int four, uint32_t *idx_out)
{
    int pal[4][3];
    palette(c0, c1, four, pal);
    const int ne = four ? 4 : 3;
    float work[16][3];
    for (int t = 0; t < 16; t++) {
        work[t][0] = in->r[t];
        work[t][1] = in->g[t];
        work[t][2] = in->b[t];
    }
    uint32_t idx = 0;
    float total = 0.0f;
    for (int t = 0; t < 16; t++) {
        if (in->tbits >> (2 * t) & 1u) continue;
        float x[3];
        for (int ch = 0; ch < 3; ch++) {
            float v = work[t][ch];
            x[ch] = v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v;
        }
        int bi = 0;
        float be = 0.0f;
        for (int i = 0; i < ne; i++) {
            float e = 0.0f;
            for (int ch = 0; ch < 3; ch++) e += in->cw[ch] * (x[ch] - (float)pal[i][ch]) * (x[ch] - (float)pal[i][ch]);
            if (i == 0 || e < be) {
                be = e;
                bi = i;
            }
        }
        idx |= (uint32_t)bi << (2 * t);
        float src[3] = {in->r[t], in->g[t], in->b[t]};
        for (int ch = 0; ch < 3; ch++)
            total += in->w[t] * in->cw[ch] * (src[ch] - (float)pal[bi][ch]) * (src[ch] - (float)pal[bi][ch]);
        int tx = t & 3, ty = t >> 2;
        for (int ch = 0; ch < 3; ch++) {
            float e = x[ch] - (float)pal[bi][ch];
            if (tx < 3) work[t + 1][ch] += e * (7.0f / 16.0f);
            if (ty < 3) {
                if (tx > 0) work[t + 3][ch] += e * (3.0f / 16.0f);
                work[t + 4][ch] += e * (5.0f / 16.0f);
                if (tx < 3) work[t + 5][ch] += e * (1.0f / 16.0f);
            }
        }
    }
    *idx_out = idx | in->tbits;
    return total;
}

/* Scores endpoints given in any order for a mode: puts them in the order the decoder needs (four-
 * colour: c0 > c1, three-colour: c0 <= c1; swapping keeps every decoded colour), picks exact indices,
 * and keeps the better of *best and the result. */
VI void try_endpoints(const bc1_in *in, uint16_t c0, uint16_t c1, int four, bc1_sol *best)
{
    bc1_sol s;
    s.four = four;
    if (in->kind == BC1_FOUR_ANY) s.four = 1;
    else if (in->any_transp || c0 == c1) s.four = 0; /* equal endpoints: all entries equal anyway */
    s.c0 = c0;
    s.c1 = c1;
    if (in->kind != BC1_FOUR_ANY && (s.four ? c0 < c1 : c0 > c1)) {
        s.c0 = c1;
        s.c1 = c0;
    }
    s.err = select_indices(in, s.c0, s.c1, s.four, &s.idx);
    if (s.err < best->err) *best = s;
}

/* ---------------------------------------------------------------- quantisation */

static inline float clamp255(float v) { return v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v; }
static inline int quant5(float v) { return clampi((int)(clamp255(v) * (31.0f / 255.0f) + 0.5f), 0, 31); }
static inline int quant6(float v) { return clampi((int)(clamp255(v) * (63.0f / 255.0f) + 0.5f), 0, 63); }
static inline uint16_t quant565(const float c[3]) { return pack565(quant5(c[0]), quant6(c[1]), quant5(c[2])); }

/* ---------------------------------------------------------------- flat blocks */

/* Exact optimum for a block whose counted texels all have colour v (8-bit values). */
VI void flat_solution(const bc1_in *in, const int v[3], bc1_sol *best)
{
    /* an endpoint itself: the nearest 565 colour */
    uint16_t cn = pack565(k_bc1_near_5[v[0]][0], k_bc1_near_6[v[1]][0], k_bc1_near_5[v[2]][0]);
    try_endpoints(in, cn, cn, 0, best);
    /* four-colour 2/3 interpolant */
    if (!in->any_transp) {
        uint16_t a = pack565(k_bc1_match4_5[v[0]][0], k_bc1_match4_6[v[1]][0], k_bc1_match4_5[v[2]][0]);
        uint16_t b = pack565(k_bc1_match4_5[v[0]][1], k_bc1_match4_6[v[1]][1], k_bc1_match4_5[v[2]][1]);
        try_endpoints(in, a, b, 1, best);
    }
    /* three-colour midpoint */
    if (in->kind != BC1_FOUR_ANY) {
        uint16_t a = pack565(k_bc1_match3_5[v[0]][0], k_bc1_match3_6[v[1]][0], k_bc1_match3_5[v[2]][0]);
        uint16_t b = pack565(k_bc1_match3_5[v[0]][1], k_bc1_match3_6[v[1]][1], k_bc1_match3_5[v[2]][1]);
        try_endpoints(in, a, b, 0, best);
    }
}

VI void mean_flat(const bc1_in *in, const float mean[3], bc1_sol *best)
{
    int v8[3];
    for (int ch = 0; ch < 3; ch++) v8[ch] = (int)(clamp255(mean[ch]) + 0.5f);
    flat_solution(in, v8, best);
}

/* ---------------------------------------------------------------- principal axis */

VI void principal_axis(const bc1_in *in, float mean[3], float axis[3], float *spread)
{
    const vf w = vload(in->w);
    const vf r = vload(in->r), g = vload(in->g), b = vload(in->b);
    const float inv = 1.0f / (float)in->n;
    float m[3] = {vhsum(r * w) * inv, vhsum(g * w) * inv, vhsum(b * w) * inv};
    /* covariance in channel-weighted space (weights applied after the sums) */
    vf d0 = (r - m[0]) * w, d1 = (g - m[1]) * w, d2 = (b - m[2]) * w;
    float c[6];
    c[0] = vhsum(d0 * d0) * in->cw[0];
    c[1] = vhsum(d0 * d1) * (in->sw[0] * in->sw[1]);
    c[2] = vhsum(d0 * d2) * (in->sw[0] * in->sw[2]);
    c[3] = vhsum(d1 * d1) * in->cw[1];
    c[4] = vhsum(d1 * d2) * (in->sw[1] * in->sw[2]);
    c[5] = vhsum(d2 * d2) * in->cw[2];
    *spread = (c[0] + c[3]) + c[5]; /* weighted squared distance to the mean */
    /* power iteration from the row with the largest diagonal */
    float v[3];
    if (c[0] >= c[3] && c[0] >= c[5]) v[0] = c[0], v[1] = c[1], v[2] = c[2];
    else if (c[3] >= c[5]) v[0] = c[1], v[1] = c[3], v[2] = c[4];
    else v[0] = c[2], v[1] = c[4], v[2] = c[5];
    for (int it = 0; it < 6; it++) {
        float w0 = c[0] * v[0] + c[1] * v[1] + c[2] * v[2];
        float w1 = c[1] * v[0] + c[3] * v[1] + c[4] * v[2];
        float w2 = c[2] * v[0] + c[4] * v[1] + c[5] * v[2];
        float mx = fabsf(w0);
        if (fabsf(w1) > mx) mx = fabsf(w1);
        if (fabsf(w2) > mx) mx = fabsf(w2);
        if (!(mx > 0.0f)) break;
        float rc = 1.0f / mx;
        v[0] = w0 * rc;
        v[1] = w1 * rc;
        v[2] = w2 * rc;
    }
    if (!(fabsf(v[0]) + fabsf(v[1]) + fabsf(v[2]) > 0.0f)) v[0] = v[1] = v[2] = 1.0f;
    for (int ch = 0; ch < 3; ch++) {
        mean[ch] = m[ch];
        axis[ch] = v[ch] * in->sw[ch]; /* back to colour space */
    }
}

/* ---------------------------------------------------------------- least-squares refit */

/* Endpoints minimising the (ideal-interpolation) squared error for the indices of s. Returns 0 when
 * the system is degenerate (all counted texels on one index). */
VI int refit(const bc1_in *in, const bc1_sol *s, float a[3], float b[3])
{
    static const float k_a4[4] = {1.0f, 0.0f, 2.0f / 3.0f, 1.0f / 3.0f};
    static const float k_a3[4] = {1.0f, 0.0f, 0.5f, 0.0f};
    const float *tab = s->four ? k_a4 : k_a3;
    float wa_l[16], wt_l[16];
    for (int t = 0; t < 16; t++) {
        unsigned i = s->idx >> (2 * t) & 3u;
        wa_l[t] = tab[i];
        wt_l[t] = (!s->four && i == 3) ? 0.0f : in->w[t];
    }
    const vf wt = vload(wt_l), wa = vload(wa_l) * wt, wb = (1.0f - vload(wa_l)) * wt;
    float aa = vhsum(wa * wa), bb = vhsum(wb * wb), ab = vhsum(wa * wb);
    /* wt is 0/1, so wa*wa already carries it once; wa*wb too */
    const vf r = vload(in->r), g = vload(in->g), bl = vload(in->b);
    float ax[3] = {vhsum(wa * r), vhsum(wa * g), vhsum(wa * bl)};
    float bx[3] = {vhsum(wb * r), vhsum(wb * g), vhsum(wb * bl)};
    float det = aa * bb - ab * ab;
    if (!(det > 1e-6f)) return 0;
    float rc = 1.0f / det;
    for (int ch = 0; ch < 3; ch++) {
        a[ch] = (ax[ch] * bb - bx[ch] * ab) * rc;
        b[ch] = (bx[ch] * aa - ax[ch] * ab) * rc;
    }
    return 1;
}

/* Repeated refits of *s while they help. */
VI void refine_ls(const bc1_in *in, bc1_sol *s, int rounds)
{
    for (int r = 0; r < rounds; r++) {
        float a[3], b[3];
        if (!refit(in, s, a, b)) return;
        bc1_sol t;
        t.err = INFINITY;
        try_endpoints(in, quant565(a), quant565(b), s->four, &t);
        if (!(t.err < s->err)) return;
        *s = t;
    }
}

/* ---------------------------------------------------------------- exact per-channel refinement */

/* For fixed indices the error splits into channels. For each channel, the quantised endpoint pair
 * within +-radius (1 or 2) of the current one that minimises that channel's error under the exact
 * decoder (the window's pairs run in the lanes; the first best in window order wins). Returns 1 when
 * the endpoints changed. */
VI int channel_step(const bc1_in *in, bc1_sol *s, int radius)
{
    const vf w = vload(in->w);
    float fcnt[4], fsum[4][3];
    {
        const vf r = vload(in->r), g = vload(in->g), b = vload(in->b);
        const vf iv = __builtin_convertvector((((vi){0} + (int32_t)s->idx) >> (k_lane + k_lane)) & 3, vf);
        for (int i = 0; i < 4; i++) {
            vf c = vsel(iv == (float)i, w, vset1(0.0f));
            fcnt[i] = vhsum(c);
            fsum[i][0] = vhsum(c * r);
            fsum[i][1] = vhsum(c * g);
            fsum[i][2] = vhsum(c * b);
        }
    }
    const int side = 2 * radius + 1, combos = side * side;
    /* lane l: a = q0 + l / side - radius, b = q1 + l % side - radius (two vectors for radius 2) */
    int q0[3], q1[3], nq[2][3];
    unpack565(s->c0, q0);
    unpack565(s->c1, q1);
    int changed = 0;
    for (int ch = 0; ch < 3; ch++) {
        const float top = ch == 1 ? 63.0f : 31.0f;
        float best = INFINITY;
        int bl = -1;
        for (int base = 0; base < combos; base += 16) {
            vf lane = __builtin_convertvector(k_lane + base, vf);
            vf da = vround((lane + 0.5f) * (1.0f / (float)side) - 0.5f); /* floor(lane / side) */
            vf db = lane - da * (float)side;
            vf qa = (float)q0[ch] + da - (float)radius, qb = (float)q1[ch] + db - (float)radius;
            vi ok = (qa >= 0.0f) & (qa <= top) & (qb >= 0.0f) & (qb <= top) & (lane < (float)combos);
            vf ea, eb;
            if (ch == 1) {
                ea = qa * 4.0f + vround(qa * 0.0625f - 0.46875f);
                eb = qb * 4.0f + vround(qb * 0.0625f - 0.46875f);
            } else {
                ea = qa * 8.0f + vround(qa * 0.25f - 0.375f);
                eb = qb * 8.0f + vround(qb * 0.25f - 0.375f);
            }
            vf p2, p3;
            if (s->four) { /* floor(x / 3) for integers x <= 765 */
                p2 = vround((ea + ea + eb) * (1.0f / 3.0f) - 0.3332f);
                p3 = vround((ea + eb + eb) * (1.0f / 3.0f) - 0.3332f);
            } else {
                p2 = vround((ea + eb) * 0.5f - 0.25f);
                p3 = vset1(0.0f);
            }
            /* sum over texels of (p - x)^2 = n p^2 - 2 p S + const */
            vf e = ((ea * (fcnt[0] * ea - 2.0f * fsum[0][ch]) + eb * (fcnt[1] * eb - 2.0f * fsum[1][ch])) +
                    p2 * (fcnt[2] * p2 - 2.0f * fsum[2][ch])) + p3 * (fcnt[3] * p3 - 2.0f * fsum[3][ch]);
            e = vsel(ok, e, vset1(INFINITY));
            for (int l = 0; l < 16 && base + l < combos; l++)
                if (e[l] < best) best = e[l], bl = base + l;
        }
        nq[0][ch] = bl < 0 ? q0[ch] : q0[ch] + bl / side - radius;
        nq[1][ch] = bl < 0 ? q1[ch] : q1[ch] + bl % side - radius;
        if (nq[0][ch] != q0[ch] || nq[1][ch] != q1[ch]) changed = 1;
    }
    if (!changed) return 0;
    s->c0 = pack565(nq[0][0], nq[0][1], nq[0][2]);
    s->c1 = pack565(nq[1][0], nq[1][1], nq[1][2]);
    return 1;
}

/* Alternates channel_step and exact index selection while the error falls (so it ends). */
VI void refine_exact(const bc1_in *in, bc1_sol *s, int radius, int max_iter)
{
    for (int it = 0; it < max_iter; it++) {
        bc1_sol t = *s;
        if (!channel_step(in, &t, radius)) return;
        bc1_sol n;
        n.err = INFINITY;
        try_endpoints(in, t.c0, t.c1, t.four, &n);
        if (!(n.err < s->err)) return;
        *s = n;
    }
}

/* ---------------------------------------------------------------- cluster fit */

typedef struct cf_order {
    int n;
    float x[16][3];           /* counted texels sorted along the axis */
    float pre[17][3];         /* prefix sums */
    float tot[3];
    /* n == 16, in grid units (x * 31/255 for R and B, x * 63/255 for G): channel-major prefix sums
     * scaled by 1/3 (4 clusters) and 1/2 (3 clusters), padded for 16-lane loads, q3[ch][(j,k)] =
     * p3[j] + p3[k] in k_cf4_qoff order, and the totals */
    float p3[3][17 + 16], p2[3][17 + 16];
    float q3[3][153 + 16];
    float gtot[3];
} cf_order;

static const float k_grid[3] = {31.0f / 255.0f, 63.0f / 255.0f, 31.0f / 255.0f};

VI void cf_sort(const bc1_in *in, const float axis[3], cf_order *o)
{
    const int n = in->n;
    int ord[16];
    if (n == 16) {
        /* Batcher's odd-even merge sort (63 comparators, branch-free) on keys that order like the
         * projections and break ties by texel index, so the order is the stable one */
        uint64_t u[16];
        for (int t = 0; t < 16; t++) {
            float f = (in->x[t][0] * axis[0] + in->x[t][1] * axis[1] + in->x[t][2] * axis[2]) + 0.0f; /* -0 -> +0 */
            uint32_t b;
            memcpy(&b, &f, 4);
            b = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
            u[t] = (uint64_t)b << 4 | (uint64_t)t;
        }
#define CE(i, j)                                                                                            \
    {                                                                                                       \
        uint64_t lo = u[i] < u[j] ? u[i] : u[j], hi = u[i] < u[j] ? u[j] : u[i];                            \
        u[i] = lo;                                                                                          \
        u[j] = hi;                                                                                          \
    }
        CE(0, 1) CE(2, 3) CE(0, 2) CE(1, 3) CE(1, 2) CE(4, 5) CE(6, 7) CE(4, 6) CE(5, 7) CE(5, 6) CE(0, 4)
        CE(2, 6) CE(2, 4) CE(1, 5) CE(3, 7) CE(3, 5) CE(1, 2) CE(3, 4) CE(5, 6) CE(8, 9) CE(10, 11) CE(8, 10)
        CE(9, 11) CE(9, 10) CE(12, 13) CE(14, 15) CE(12, 14) CE(13, 15) CE(13, 14) CE(8, 12) CE(10, 14)
        CE(10, 12) CE(9, 13) CE(11, 15) CE(11, 13) CE(9, 10) CE(11, 12) CE(13, 14) CE(0, 8) CE(4, 12) CE(4, 8)
        CE(2, 10) CE(6, 14) CE(6, 10) CE(2, 4) CE(6, 8) CE(10, 12) CE(1, 9) CE(5, 13) CE(5, 9) CE(3, 11)
        CE(7, 15) CE(7, 11) CE(3, 5) CE(7, 9) CE(11, 13) CE(1, 2) CE(3, 4) CE(5, 6) CE(7, 8) CE(9, 10)
        CE(11, 12) CE(13, 14)
#undef CE
        for (int t = 0; t < 16; t++) ord[t] = (int)(u[t] & 15u);
    } else {
        float key[16];
        for (int i = 0; i < n; i++) {
            key[i] = in->x[i][0] * axis[0] + in->x[i][1] * axis[1] + in->x[i][2] * axis[2];
            ord[i] = i;
        }
        for (int i = 1; i < n; i++) { /* stable insertion sort */
            int k = ord[i];
            float kv = key[k];
            int j = i - 1;
            while (j >= 0 && key[ord[j]] > kv) {
                ord[j + 1] = ord[j];
                j--;
            }
            ord[j + 1] = k;
        }
    }
    o->n = n;
    for (int ch = 0; ch < 3; ch++) o->pre[0][ch] = 0.0f;
    for (int i = 0; i < n; i++)
        for (int ch = 0; ch < 3; ch++) {
            o->x[i][ch] = in->x[ord[i]][ch];
            o->pre[i + 1][ch] = o->pre[i][ch] + o->x[i][ch];
        }
    for (int ch = 0; ch < 3; ch++) o->tot[ch] = o->pre[n][ch];
    if (n != 16) return;
    for (int ch = 0; ch < 3; ch++) {
        const float g = k_grid[ch];
        for (int i = 0; i < 17; i++) {
            float pg = o->pre[i][ch] * g;
            o->p3[ch][i] = pg * (1.0f / 3.0f);
            o->p2[ch][i] = pg * 0.5f;
        }
        o->gtot[ch] = o->tot[ch] * g;
        for (int i = 17; i < 33; i++) o->p3[ch][i] = o->p2[ch][i] = 0.0f;
        /* q3 row j starts at k_cf4_qoff[j]; a 16-lane store per row, in order (later rows overwrite
         * the overhang of earlier ones; the last overhang lands in the padding) */
        for (int j = 0; j < 17; j++)
            vstore(&o->q3[ch][k_cf4_qoff[j]], o->p3[ch][j] + vload(&o->p3[ch][j]));
    }
}

typedef struct cf_pick {
    float err;
    int entry; /* vector * 16 + lane */
} cf_pick;

VI void pick_insert(cf_pick *list, int *count, int k, float err, int entry)
{
    int n = *count;
    if (n == k && !(err < list[n - 1].err)) return;
    int pos = n < k ? n : k - 1;
    while (pos > 0 && err < list[pos - 1].err) {
        list[pos] = list[pos - 1];
        pos--;
    }
    list[pos].err = err;
    list[pos].entry = entry;
    if (n < k) *count = n + 1;
}

/* The cluster-fit kernel, once per instruction set (see bc1_enc_cf.h). */
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define KILN_BC1_MULTI 1
#include <immintrin.h>
#define CF_NAME cf16_avx512
#define CF_TARGET __attribute__((target("avx512f"), noinline))
#define CF_MIN(a, b) ((vf)_mm512_min_ps((__m512)(a), (__m512)(b)))
#define CF_MAX(a, b) ((vf)_mm512_max_ps((__m512)(a), (__m512)(b)))
#define CF_ROUND(x) ((vf)_mm512_roundscale_ps((__m512)(x), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC))
#include "codec/bc1_enc_cf.h"
#undef CF_NAME
#undef CF_TARGET
#undef CF_MIN
#undef CF_MAX
#undef CF_ROUND
#define CF_LO(a) ((__m256)__builtin_shufflevector((a), (a), 0, 1, 2, 3, 4, 5, 6, 7))
#define CF_HI(a) ((__m256)__builtin_shufflevector((a), (a), 8, 9, 10, 11, 12, 13, 14, 15))
#define CF_JOIN(l, h) ((vf)__builtin_shufflevector((vf8)(l), (vf8)(h), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
#define CF_NAME cf16_avx2
#define CF_TARGET __attribute__((target("avx2"), noinline))
#define CF_MIN(a, b) CF_JOIN(_mm256_min_ps(CF_LO(a), CF_LO(b)), _mm256_min_ps(CF_HI(a), CF_HI(b)))
#define CF_MAX(a, b) CF_JOIN(_mm256_max_ps(CF_LO(a), CF_LO(b)), _mm256_max_ps(CF_HI(a), CF_HI(b)))
#define CF_ROUND(x)                                                                                          \
    CF_JOIN(_mm256_round_ps(CF_LO(x), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),                       \
            _mm256_round_ps(CF_HI(x), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC))
#include "codec/bc1_enc_cf.h"
#undef CF_NAME
#undef CF_TARGET
#undef CF_MIN
#undef CF_MAX
#undef CF_ROUND
#endif
#define CF_NAME cf16_base
#define CF_TARGET __attribute__((noinline))
#define CF_MIN(a, b) ((vf)(((vi)(a) & ((a) < (b))) | ((vi)(b) & ~((a) < (b)))))
#define CF_MAX(a, b) ((vf)(((vi)(a) & ((a) > (b))) | ((vi)(b) & ~((a) > (b)))))
#define CF_ROUND(x) (((x) + 12582912.0f) - 12582912.0f)
#include "codec/bc1_enc_cf.h"
#undef CF_NAME
#undef CF_TARGET
#undef CF_MIN
#undef CF_MAX
#undef CF_ROUND

/* Endpoints (565) of a table entry, recomputed in scalar code with the same operations. */
static void cf16_endpoints(const cf_order *o, int four, int entry, uint16_t *ca, uint16_t *cb)
{
    const float(*t)[16] = four ? k_cf4[entry / 16] : k_cf3[entry / 16];
    int l = entry % 16;
    int qa[3], qb[3];
    for (int ch = 0; ch < 3; ch++) {
        float ax;
        if (four) {
            int i = k_cf4_ijk[entry][0], j = k_cf4_ijk[entry][1], k = k_cf4_ijk[entry][2];
            ax = o->p3[ch][i] + (o->p3[ch][j] + o->p3[ch][k]);
        } else {
            int i = k_cf3_ij[entry][0], j = k_cf3_ij[entry][1];
            ax = o->p2[ch][i] + o->p2[ch][j];
        }
        const float top = ch == 1 ? 63.0f : 31.0f;
        float a = ax * t[3][l] - o->gtot[ch] * t[4][l];
        float b = o->gtot[ch] * t[5][l] - ax * t[6][l];
        a = a < 0.0f ? 0.0f : a > top ? top : a;
        b = b < 0.0f ? 0.0f : b > top ? top : b;
        qa[ch] = (int)sround(a);
        qb[ch] = (int)sround(b);
    }
    *ca = pack565(qa[0], qa[1], qa[2]);
    *cb = pack565(qb[0], qb[1], qb[2]);
}

/* Fewer than 16 counted texels (alpha cut-out or punch-through): the same search in scalar code. */
typedef struct cf_cand {
    float err;
    uint16_t ca, cb;
} cf_cand;

static void cand_push(cf_cand *list, int *count, int k, const cf_cand *c)
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

static inline int squant5(float v)
{
    float c = v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v;
    return (int)sround(c * (31.0f / 255.0f));
}
static inline int squant6(float v)
{
    float c = v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v;
    return (int)sround(c * (63.0f / 255.0f));
}

static void cf_small_solve(const cf_order *o, const float cw[3], const float ax[3], float A, float B, float C,
                           cf_cand *out)
{
    float det = A * B - C * C;
    float rc = 1.0f / det;
    float err = 0.0f;
    int qa[3], qb[3];
    for (int ch = 0; ch < 3; ch++) {
        float bx = o->tot[ch] - ax[ch];
        float a = (ax[ch] * B - bx * C) * rc;
        float b = (bx * A - ax[ch] * C) * rc;
        qa[ch] = ch == 1 ? squant6(a) : squant5(a);
        qb[ch] = ch == 1 ? squant6(b) : squant5(b);
        float ea = (float)(ch == 1 ? expand6(qa[ch]) : expand5(qa[ch]));
        float eb = (float)(ch == 1 ? expand6(qb[ch]) : expand5(qb[ch]));
        err += cw[ch] * (ea * (ea * A + 2.0f * (eb * C - ax[ch])) + eb * (eb * B - 2.0f * bx));
    }
    out->err = err;
    out->ca = pack565(qa[0], qa[1], qa[2]);
    out->cb = pack565(qb[0], qb[1], qb[2]);
}

static void cf_small(const cf_order *o, const float cw[3], int four, cf_cand *list, int *count, int k)
{
    const int n = o->n;
    for (int i = 0; i <= n; i++)
        for (int j = i; j <= n; j++) {
            if (!four) {
                int c0 = i, c1 = j - i, c2 = n - j;
                if (c0 == n || c1 == n || c2 == n) continue;
                float ax[3];
                for (int ch = 0; ch < 3; ch++) ax[ch] = (o->pre[i][ch] + o->pre[j][ch]) * 0.5f;
                cf_cand c;
                cf_small_solve(o, cw, ax, (float)c0 + 0.25f * (float)c1, (float)c2 + 0.25f * (float)c1,
                               0.25f * (float)c1, &c);
                cand_push(list, count, k, &c);
                continue;
            }
            for (int m = j; m <= n; m++) {
                int c0 = i, c1 = j - i, c2 = m - j, c3 = n - m;
                if (c0 == n || c1 == n || c2 == n || c3 == n) continue;
                float A = (float)c0 + (4.0f / 9.0f) * (float)c1 + (1.0f / 9.0f) * (float)c2;
                float B = (float)c3 + (4.0f / 9.0f) * (float)c2 + (1.0f / 9.0f) * (float)c1;
                float C = (2.0f / 9.0f) * (float)(c1 + c2);
                float ax[3];
                for (int ch = 0; ch < 3; ch++) ax[ch] = (o->pre[i][ch] + o->pre[j][ch] + o->pre[m][ch]) * (1.0f / 3.0f);
                cf_cand c;
                cf_small_solve(o, cw, ax, A, B, C, &c);
                cand_push(list, count, k, &c);
            }
        }
}

/* The k best partitions of a mode as endpoint pairs. */
/* isa: 2 AVX-512, 1 AVX2, 0 baseline (a constant after inlining into encode_<isa>). */
VI int cf16_dispatch(int isa, const cf_order *o, const float cw[3], int four, cf_pick *l, int k)
{
    float wg[3];
    for (int ch = 0; ch < 3; ch++) wg[ch] = cw[ch] / (k_grid[ch] * k_grid[ch]);
#ifdef KILN_BC1_MULTI
    if (isa == 2) return cf16_avx512(o, wg, four, l, k);
    if (isa == 1) return cf16_avx2(o, wg, four, l, k);
#endif
    (void)isa;
    return cf16_base(o, wg, four, l, k);
}

VI int cluster_candidates(int isa, const bc1_in *in, const cf_order *o, int four, cf_cand *out, int k)
{
    int count = 0;
    if (o->n == 16) {
        cf_pick picks[4];
        int np = cf16_dispatch(isa, o, in->cw, four, picks, k);
        for (int c = 0; c < np; c++) {
            out[count].err = picks[c].err;
            cf16_endpoints(o, four, picks[c].entry, &out[count].ca, &out[count].cb);
            count++;
        }
    } else {
        cf_small(o, in->cw, four, out, &count, k);
    }
    return count;
}

/* ---------------------------------------------------------------- the encoder paths */

VI void encode_fast(const bc1_in *in, bc1_sol *best, int rounds)
{
    float mean[3], axis[3], spread;
    principal_axis(in, mean, axis, &spread);
    const vf p = vload(in->r) * axis[0] + vload(in->g) * axis[1] + vload(in->b) * axis[2];
    int lo = -1, hi = -1;
    float plo = 0.0f, phi = 0.0f;
    for (int t = 0; t < 16; t++) {
        if (in->w[t] == 0.0f) continue;
        if (lo < 0 || p[t] < plo) plo = p[t], lo = t;
        if (hi < 0 || p[t] > phi) phi = p[t], hi = t;
    }
    float chi[3] = {in->r[hi], in->g[hi], in->b[hi]}, clo[3] = {in->r[lo], in->g[lo], in->b[lo]};
    uint16_t ehi = quant565(chi), elo = quant565(clo);
    bc1_sol s;
    s.err = INFINITY;
    int four = !in->any_transp;
    try_endpoints(in, ehi, elo, four, &s);
    refine_ls(in, &s, rounds);
    if (s.err < best->err) *best = s;
    if (in->quality >= KILN_QUALITY_NORMAL && four && in->kind != BC1_FOUR_ANY) {
        bc1_sol t;
        t.err = INFINITY;
        try_endpoints(in, ehi, elo, 0, &t);
        refine_ls(in, &t, rounds);
        if (t.err < best->err) *best = t;
    }
    /* near-flat blocks: the exact pair for the mean colour (worth a try only when the texels are close
     * to their mean compared with the error so far) */
    if (best->c0 == best->c1 || (in->quality >= KILN_QUALITY_NORMAL && spread < 2.0f * best->err))
        mean_flat(in, mean, best);
}

VI void encode_cluster(int isa, const bc1_in *in, bc1_sol *best)
{
    const int is_max = in->quality == KILN_QUALITY_MAX;
    const int k = is_max ? 3 : 1;
    float mean[3], axis[3], spread;
    principal_axis(in, mean, axis, &spread);
    const int passes = is_max ? 2 : 1;
    for (int pass = 0; pass < passes; pass++) {
        cf_order o;
        cf_sort(in, axis, &o);
        for (int four = 1; four >= 0; four--) {
            if (four && in->any_transp) continue;
            if (!four && in->kind == BC1_FOUR_ANY) continue;
            cf_cand list[4];
            int count = cluster_candidates(isa, in, &o, four, list, k);
            for (int c = 0; c < count; c++) {
                bc1_sol s;
                s.err = INFINITY;
                try_endpoints(in, list[c].ca, list[c].cb, four, &s);
                if (is_max) {
                    refine_ls(in, &s, 2);
                    refine_exact(in, &s, 2, 8);
                } else {
                    refine_exact(in, &s, 1, 1);
                }
                if (s.err < best->err) *best = s;
            }
        }
        if (pass + 1 < passes) {
            /* the next pass orders the texels along the best endpoints */
            int pal[4][3];
            palette(best->c0, best->c1, 1, pal);
            float d[3] = {(float)(pal[0][0] - pal[1][0]), (float)(pal[0][1] - pal[1][1]), (float)(pal[0][2] - pal[1][2])};
            if (!(fabsf(d[0]) + fabsf(d[1]) + fabsf(d[2]) > 0.0f)) break;
            memcpy(axis, d, sizeof d);
        }
    }
    if (!(best->err < INFINITY)) encode_fast(in, best, 1); /* no partition had rank 2 */
    if (spread < 2.0f * best->err) mean_flat(in, mean, best);
}

/* The whole block; compiled once per instruction set. */
VI void encode_body(int isa, const bc1_in *in, bc1_sol *out)
{
    bc1_sol best;
    best.err = INFINITY;
    best.c0 = best.c1 = 0;
    best.idx = 0;
    best.four = 0;
    if (in->n == 0) {
        try_endpoints(in, 0, 0, 0, &best); /* nothing counts: black, transparent texels at index 3 */
    } else {
        int flat = 1;
        for (int i = 1; i < in->n && flat; i++)
            if (in->x[i][0] != in->x[0][0] || in->x[i][1] != in->x[0][1] || in->x[i][2] != in->x[0][2]) flat = 0;
        int v8[3];
        for (int ch = 0; ch < 3; ch++) v8[ch] = (int)(in->x[0][ch] + 0.5f);
        if (flat && in->x[0][0] == (float)v8[0] && in->x[0][1] == (float)v8[1] && in->x[0][2] == (float)v8[2]) {
            flat_solution(in, v8, &best);
        } else if (in->quality <= KILN_QUALITY_NORMAL) {
            encode_fast(in, &best, in->quality == KILN_QUALITY_FAST ? 2 : 3);
        } else {
            encode_cluster(isa, in, &best);
        }
    }
    *out = best;
}

#ifdef KILN_BC1_MULTI
__attribute__((target("avx512f"))) static void encode_avx512(const bc1_in *in, bc1_sol *out) { encode_body(2, in, out); }
__attribute__((target("avx2"))) static void encode_avx2(const bc1_in *in, bc1_sol *out) { encode_body(1, in, out); }
#endif
static void encode_generic(const bc1_in *in, bc1_sol *out) { encode_body(0, in, out); }

static void encode_dispatch(const bc1_in *in, bc1_sol *out)
{
#ifdef KILN_BC1_MULTI
    if (__builtin_cpu_supports("avx512f")) {
        encode_avx512(in, out);
        return;
    }
    if (__builtin_cpu_supports("avx2")) {
        encode_avx2(in, out);
        return;
    }
#endif
    encode_generic(in, out);
}

/* ---------------------------------------------------------------- entry points */

static void setup(const kiln_block *src, const kiln_encode_params *params, int kind, bc1_in *in)
{
    memset(in, 0, sizeof *in);
    in->kind = kind;
    in->quality = params->quality;
    in->dither = params->dither;
    if (params->perceptual) {
        in->cw[0] = 0.299f * 3.0f;
        in->cw[1] = 0.587f * 3.0f;
        in->cw[2] = 0.114f * 3.0f;
    } else {
        in->cw[0] = in->cw[1] = in->cw[2] = 1.0f;
    }
    for (int ch = 0; ch < 3; ch++) in->sw[ch] = sqrtf(in->cw[ch]);
    for (int t = 0; t < 16; t++) {
        in->r[t] = (float)src->rgba16[t * 4 + 0] * (255.0f / 65535.0f);
        in->g[t] = (float)src->rgba16[t * 4 + 1] * (255.0f / 65535.0f);
        in->b[t] = (float)src->rgba16[t * 4 + 2] * (255.0f / 65535.0f);
        in->sr[t] = in->r[t] * in->sw[0];
        in->sg[t] = in->g[t] * in->sw[1];
        in->sb[t] = in->b[t] * in->sw[2];
        uint8_t a = src->rgba8[t * 4 + 3];
        in->w[t] = 1.0f;
        if (kind == BC1_PUNCH && a < params->alpha_threshold) {
            in->tbits |= 3u << (2 * t);
            in->any_transp = 1;
            in->w[t] = 0.0f;
        }
        if (params->alpha_cutout && a == 0) in->w[t] = 0.0f;
        if (in->w[t] != 0.0f) {
            in->x[in->n][0] = in->r[t];
            in->x[in->n][1] = in->g[t];
            in->x[in->n][2] = in->b[t];
            in->n++;
        }
    }
}

static void finish(const bc1_in *in, bc1_sol *best, uint8_t out[8])
{
    if (in->dither) {
        /* dithered indices for the chosen endpoints (the decoder's mode stays the same) */
        int four = in->kind == BC1_FOUR_ANY ? 1 : best->c0 > best->c1;
        select_indices_dither(in, best->c0, best->c1, four, &best->idx);
    }
    out[0] = (uint8_t)(best->c0 & 0xff);
    out[1] = (uint8_t)(best->c0 >> 8);
    out[2] = (uint8_t)(best->c1 & 0xff);
    out[3] = (uint8_t)(best->c1 >> 8);
    out[4] = (uint8_t)(best->idx & 0xff);
    out[5] = (uint8_t)(best->idx >> 8 & 0xff);
    out[6] = (uint8_t)(best->idx >> 16 & 0xff);
    out[7] = (uint8_t)(best->idx >> 24);
}

static void encode_colour(const kiln_block *src, const kiln_encode_params *params, int kind, uint8_t out[8])
{
    bc1_in in;
    setup(src, params, kind, &in);
    bc1_sol best;
    encode_dispatch(&in, &best);
    finish(&in, &best, out);
}

void kiln__enc_bc1(const kiln_block *src, uint8_t *out, const kiln_encode_params *params)
{
    const kiln_format_info *fi = kiln_format_get_info(params->format);
    int punch = fi && (fi->flags & KILN_FF_ALPHA1);
    encode_colour(src, params, punch ? BC1_PUNCH : BC1_OPAQUE, out);
}

void kiln__enc_bc2(const kiln_block *src, uint8_t *out, const kiln_encode_params *params)
{
    for (int t = 0; t < 16; t += 2) {
        unsigned a0 = ((unsigned)src->rgba8[t * 4 + 3] * 15u + 127u) / 255u;
        unsigned a1 = ((unsigned)src->rgba8[(t + 1) * 4 + 3] * 15u + 127u) / 255u;
        out[t >> 1] = (uint8_t)(a0 | a1 << 4);
    }
    encode_colour(src, params, BC1_FOUR_ANY, out + 8);
}

void kiln__enc_bc3(const kiln_block *src, uint8_t *out, const kiln_encode_params *params)
{
    int a[16];
    for (int t = 0; t < 16; t++) a[t] = src->rgba8[t * 4 + 3];
    kiln__enc_bc4_channel(a, 0, params->quality, out);
    encode_colour(src, params, BC1_FOUR_ANY, out + 8);
}

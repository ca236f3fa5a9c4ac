/* etc2_enc.c - ETC2 RGB8 / RGB8A1 / RGBA8 encoders: the ETC1 modes (etc1_enc.c) plus T, H and planar;
 * the lowest error wins.
 *
 * Planar: the decoded colour is linear in O, H, V per channel, so a least-squares fit of the 16 pixels
 *   gives the unquantised optimum; each channel is then quantised (6-7-6 bits) by trying the levels
 *   around the fit (2 or 3 per value, every combination) with the exact clamped decode. At high/max the
 *   fit is repeated without the worst-fitting pixels (betsy's "origin/corner" variants that ignore an
 *   outlier, refined by regression) and the best quantised result kept. Channels are independent.
 * T / H: candidate pixel partitions come from splits along the principal axis (best splits by 2-means
 *   error) refined by Lloyd iterations; each group's mean is quantised to 444 and every distance table
 *   is tried with both roles (T: which group is the single colour). The best candidates are refined by
 *   recomputing the centres from the chosen selectors (mean of pixel - modifier) and, at max, by +-1
 *   steps per channel. Unclamped palette entries use the closed form |x-c|^2 -+ 2d(w.(x-c)) + W d^2;
 *   clamped ones are evaluated exactly.
 * Fast: opaque blocks go to etc_enc_fast.c (vectorised; its header documents the block algorithm; the
 *   driver runs ETC2 RGB FAST as 16-block batches, etc_enc_batch.c, same bytes); with dithering its block's
 *   selectors are then re-picked (kiln__enc_etc2_rgb). Here (RGB A1): the no-search ETC1 path (kiln__etc1_fast), planar from
 *   the closed-form fit (radius 0), and T/H only for blocks whose error stays above 150 per pixel (mean
 *   squared over R+G+B).
 * Pruning (normal / high / max; none of it changes a result except through palette clamping):
 *   - planar is skipped when the least-squares residual of the best unquantised plane (a lower bound of
 *     any planar block's error up to clamping) already reaches the best ETC1 error;
 *   - T/H is skipped when the smaller eigenvalue of the pixels' scatter in the plane normal to the grey
 *     axis (a lower bound of any two-grey-lines palette, hence of T and H, up to clamping) reaches the
 *     best error so far;
 *   - each T/H candidate (colour pair, mode, distance) stops summing pixels as soon as the sum reaches
 *     the best candidate so far, and skips a distance outright when its palettes do not clamp and the
 *     pair's line bound (each pixel's distance to the nearer grey line through a centre) reaches it;
 *   - the result of T/H must beat the ETC1 / planar error to be taken (as before).
 * RGB A1: pixels with alpha < alpha_threshold are transparent; if any is, the opaque bit is 0 and only
 *   differential (modifiers 0/+b/-b), T and H (selector 2 = transparent) are available; otherwise the
 *   block is an ETC2 RGB block without the individual mode.
 * RGBA: ETC2 RGB colour + EAC 8-bit alpha (eac_enc.c).
 */
#include "codec/etc_enc.h"

#include <math.h>
#include <string.h>

static inline uint32_t werr3(const int *w, const int *a, const int *b)
{
    int d0 = a[0] - b[0], d1 = a[1] - b[1], d2 = a[2] - b[2];
    return (uint32_t)(w[0] * d0 * d0 + w[1] * d1 * d1 + w[2] * d2 * d2);
}

/* ---------------------------------------------------------------- planar */

/* Least squares fit of O, H, V (8-bit domain, unquantised) of one channel over the pixels in mask. */
static int planar_fit(const etc_src *src, int ch, uint32_t mask, double out[3])
{
    double A[3][3] = {{0}}, b[3] = {0};
    for (int p = 0; p < 16; p++) {
        if (!(mask >> p & 1)) continue;
        double x = (p & 3) / 4.0, y = (p >> 2) / 4.0;
        double f[3] = {1.0 - x - y, x, y};
        for (int i = 0; i < 3; i++) {
            b[i] += f[i] * src->c[p][ch];
            for (int j = 0; j < 3; j++) A[i][j] += f[i] * f[j];
        }
    }
    /* Cramer's rule */
    double det = A[0][0] * (A[1][1] * A[2][2] - A[1][2] * A[2][1]) - A[0][1] * (A[1][0] * A[2][2] - A[1][2] * A[2][0]) +
                 A[0][2] * (A[1][0] * A[2][1] - A[1][1] * A[2][0]);
    if (fabs(det) < 1e-9) return 0;
    for (int k = 0; k < 3; k++) {
        double M[3][3];
        memcpy(M, A, sizeof M);
        for (int i = 0; i < 3; i++) M[i][k] = b[i];
        out[k] = (M[0][0] * (M[1][1] * M[2][2] - M[1][2] * M[2][1]) - M[0][1] * (M[1][0] * M[2][2] - M[1][2] * M[2][0]) +
                  M[0][2] * (M[1][0] * M[2][1] - M[1][1] * M[2][0])) /
                 det;
    }
    return 1;
}

/* The same fit over all 16 pixels in closed form: with the grid symmetric about (1.5, 1.5) the slopes
 * are sum((x - 1.5) c) / 20 (and y alike), O = mean - 1.5 (gx + gy), H = O + 4 gx, V = O + 4 gy. */
static void planar_fit_full(const etc_src *src, int ch, double out[3])
{
    int s = 0, sx = 0, sy = 0;
    for (int p = 0; p < 16; p++) {
        int c = src->c[p][ch];
        s += c;
        sx += (2 * (p & 3) - 3) * c;
        sy += (2 * (p >> 2) - 3) * c;
    }
    double gx = sx / 40.0, gy = sy / 40.0, o = s / 16.0 - 1.5 * (gx + gy);
    out[0] = o;
    out[1] = o + 4 * gx;
    out[2] = o + 4 * gy;
}

static int planar_expand(int ch, int v) { return ch == 1 ? etc_x7(v) : etc_x6(v); }

/* Squared (unweighted) error of one channel for quantised o, h, v. */
static uint32_t planar_chan_err(const etc_src *src, int ch, int qo, int qh, int qv, uint32_t limit)
{
    int o = planar_expand(ch, qo), h = planar_expand(ch, qh), v = planar_expand(ch, qv);
    uint32_t e = 0;
    for (int y = 0; y < 4; y++) {
        for (int x = 0; x < 4; x++) {
            int t = x * (h - o) + y * (v - o) + 4 * o + 2;
            int d = etc_clamp255(((t + 2048) >> 2) - 512) - src->c[y * 4 + x][ch];
            e += (uint32_t)(d * d);
        }
        if (e >= limit) return e;
    }
    return e;
}

static int planar_quant_near(int ch, double v)
{
    int maxl = ch == 1 ? 127 : 63;
    int l = (int)floor(v * maxl / 255.0 + 0.5);
    return l < 0 ? 0 : (l > maxl ? maxl : l);
}

/* Best quantisation of one channel around the fit; updates best values / error. */
static void planar_quantise(const etc_src *src, int ch, const double fit[3], int radius, int q[3], uint32_t *best)
{
    int maxl = ch == 1 ? 127 : 63;
    int c[3];
    for (int i = 0; i < 3; i++) c[i] = planar_quant_near(ch, fit[i]);
    for (int a = -radius; a <= radius; a++)
        for (int b = -radius; b <= radius; b++)
            for (int d = -radius; d <= radius; d++) {
                int qo = c[0] + a, qh = c[1] + b, qv = c[2] + d;
                if (qo < 0 || qo > maxl || qh < 0 || qh > maxl || qv < 0 || qv > maxl) continue;
                uint32_t e = planar_chan_err(src, ch, qo, qh, qv, *best);
                if (e < *best) {
                    *best = e;
                    q[0] = qo;
                    q[1] = qh;
                    q[2] = qv;
                }
            }
}

static void planar_search(const etc_src *src, etc_sol *out)
{
    memset(out, 0, sizeof *out);
    out->mode = ETC_MODE_PLANAR;
    int q = src->quality;
    int radius = q >= KILN_QUALITY_HIGH ? 1 : (q == KILN_QUALITY_NORMAL ? 1 : 0);
    uint32_t total = 0;
    for (int ch = 0; ch < 3; ch++) {
        double fit[3];
        uint32_t best = UINT32_MAX;
        int qq[3] = {0, 0, 0};
        if (q == KILN_QUALITY_FAST)
            planar_fit_full(src, ch, fit);
        else if (!planar_fit(src, ch, 0xFFFFu, fit))
            fit[0] = fit[1] = fit[2] = 0;
        planar_quantise(src, ch, fit, radius, qq, &best);
        if (q >= KILN_QUALITY_HIGH && best > 0) {
            /* outlier-robust variants: drop the worst-fitting pixel(s) and refit */
            uint32_t mask = 0xFFFFu;
            int drops = q == KILN_QUALITY_MAX ? 2 : 1;
            for (int k = 0; k < drops; k++) {
                int worst = -1;
                double we = -1;
                for (int p = 0; p < 16; p++) {
                    if (!(mask >> p & 1)) continue;
                    double x = (p & 3) / 4.0, y = (p >> 2) / 4.0;
                    double v = fit[0] * (1 - x - y) + fit[1] * x + fit[2] * y - src->c[p][ch];
                    if (v * v > we) {
                        we = v * v;
                        worst = p;
                    }
                }
                mask &= ~(1u << worst);
                if (!planar_fit(src, ch, mask, fit)) break;
                planar_quantise(src, ch, fit, radius, qq, &best);
            }
        }
        for (int i = 0; i < 3; i++) out->p[i][ch] = qq[i];
        total += best * (uint32_t)src->w[ch];
    }
    out->err = total;
}

/* ---------------------------------------------------------------- T and H */

/* Per-pixel data relative to one centre colour: base = |x - c|^2_w, q = w.(x - c). */
typedef struct center_pre {
    int c[3];
    int32_t base[16];
    int32_t q[16];
} center_pre;

static void center_init(center_pre *cp, const etc_src *src, const int c8[3])
{
    const int *w = src->w;
    memcpy(cp->c, c8, sizeof cp->c);
    for (int p = 0; p < 16; p++) {
        int u0 = src->c[p][0] - c8[0], u1 = src->c[p][1] - c8[1], u2 = src->c[p][2] - c8[2];
        cp->base[p] = w[0] * u0 * u0 + w[1] * u1 * u1 + w[2] * u2 * u2;
        cp->q[p] = w[0] * u0 + w[1] * u1 + w[2] * u2;
    }
}

enum { OPT_PLUS = 1, OPT_ZERO = 2, OPT_MINUS = 4 };

/* One centre at one distance: which of c + d, c - d stay unclamped, and the clamped colours. */
typedef struct center_d {
    int opts, plus_free, minus_free, d;
    int cplus[3], cminus[3];
    int32_t wd2;
} center_d;

static void center_d_init(center_d *cd, const center_pre *cp, const etc_src *src, int d, int opts)
{
    int lo = cp->c[0], hi = cp->c[0];
    for (int ch = 1; ch < 3; ch++) {
        lo = cp->c[ch] < lo ? cp->c[ch] : lo;
        hi = cp->c[ch] > hi ? cp->c[ch] : hi;
    }
    cd->opts = opts;
    cd->d = d;
    cd->plus_free = hi + d <= 255;
    cd->minus_free = lo - d >= 0;
    for (int ch = 0; ch < 3; ch++) {
        cd->cplus[ch] = etc_clamp255(cp->c[ch] + d);
        cd->cminus[ch] = etc_clamp255(cp->c[ch] - d);
    }
    cd->wd2 = (src->w[0] + src->w[1] + src->w[2]) * d * d;
}

/* The error of pixel p against the nearest of the centre's options (clamp(c + option * d)). */
static inline uint32_t center_pix(const center_pre *cp, const center_d *cd, const etc_src *src, int p)
{
    uint32_t best = UINT32_MAX;
    if (cd->opts & OPT_ZERO) best = (uint32_t)cp->base[p];
    if (cd->opts & OPT_PLUS) {
        uint32_t e = cd->plus_free ? (uint32_t)(cp->base[p] - 2 * cd->d * cp->q[p] + cd->wd2)
                                   : werr3(src->w, src->c[p], cd->cplus);
        best = e < best ? e : best;
    }
    if (cd->opts & OPT_MINUS) {
        uint32_t e = cd->minus_free ? (uint32_t)(cp->base[p] + 2 * cd->d * cp->q[p] + cd->wd2)
                                    : werr3(src->w, src->c[p], cd->cminus);
        best = e < best ? e : best;
    }
    return best;
}

static int quant4(double v)
{
    int l = (int)floor(v / 17.0 + 0.5);
    return l < 0 ? 0 : (l > 15 ? 15 : l);
}

static int pack12(const int c[3]) { return c[0] << 8 | c[1] << 4 | c[2]; }

/* Evaluates T (roles: c0 single) or H with quantised colours a, b over every distance; updates best.
 * The pixel sum stops as soon as it cannot beat best (exact: only strictly lower errors are taken). */
static void th_eval(const etc_src *src, int mode, const int a[3], const int b[3], etc_sol *best)
{
    int a8[3], b8[3];
    for (int ch = 0; ch < 3; ch++) {
        a8[ch] = etc_x4(a[ch]);
        b8[ch] = etc_x4(b[ch]);
    }
    center_pre ca, cb;
    center_init(&ca, src, a8);
    center_init(&cb, src, b8);
    int opt_a, opt_b;
    if (mode == ETC_MODE_T) {
        opt_a = OPT_ZERO;
        opt_b = src->transparent ? (OPT_PLUS | OPT_MINUS) : (OPT_PLUS | OPT_ZERO | OPT_MINUS);
    } else {
        opt_a = OPT_PLUS | OPT_MINUS;
        opt_b = src->transparent ? OPT_MINUS : (OPT_PLUS | OPT_MINUS);
    }
    /* Lower bound for every distance whose palette does not clamp: each entry lies on the grey line
     * through its centre (T: the single colour is the centre itself), so a pixel errs at least its
     * distance to the nearer line, W |x - c|^2_w - (w . (x - c))^2 (scaled by W). Exact. */
    const int64_t W = src->w[0] + src->w[1] + src->w[2];
    int64_t lb = 0;
    {
        for (int p = 0; p < 16; p++) {
            if (!src->opaque[p]) continue;
            int64_t la = W * ca.base[p] - (mode == ETC_MODE_T ? 0 : (int64_t)ca.q[p] * ca.q[p]);
            int64_t lbb = W * cb.base[p] - (int64_t)cb.q[p] * cb.q[p];
            lb += la < lbb ? la : lbb;
        }
    }
    int pa = pack12(a), pb = pack12(b);
    for (int di = 0; di < 8; di++) {
        if (mode == ETC_MODE_H && ((pa >= pb) != (di & 1))) continue; /* distance LSB is (c0 >= c1) */
        int d = kiln__etc_distances[di];
        center_d da, db;
        center_d_init(&da, &ca, src, d, opt_a);
        center_d_init(&db, &cb, src, d, opt_b);
        const uint32_t limit = best->err;
        if (lb >= W * (int64_t)limit && (mode == ETC_MODE_T || (da.plus_free && da.minus_free)) && db.plus_free &&
            db.minus_free)
            continue;
        uint32_t e = 0;
        for (int p = 0; p < 16 && e < limit; p++) {
            if (!src->opaque[p]) continue;
            uint32_t ea = center_pix(&ca, &da, src, p), eb = center_pix(&cb, &db, src, p);
            e += ea < eb ? ea : eb;
        }
        if (e < best->err) {
            best->err = e;
            best->mode = mode;
            memcpy(best->c[0], a, sizeof best->c[0]);
            memcpy(best->c[1], b, sizeof best->c[1]);
            best->table[0] = di;
        }
    }
}

/* H with unordered colours: the order is forced by the distance LSB, so try both. */
static void h_eval(const etc_src *src, const int a[3], const int b[3], etc_sol *best)
{
    th_eval(src, ETC_MODE_H, a, b, best);
    if (pack12(a) != pack12(b) || src->transparent) th_eval(src, ETC_MODE_H, b, a, best);
}

/* Recomputes the centres from the selectors a solution implies (mean of pixel - modifier). */
static void th_recenter(const etc_src *src, const etc_sol *s, int a[3], int b[3])
{
    etc_sol t = *s;
    kiln__etc_reselect(&t, src, 0);
    int d = kiln__etc_distances[s->table[0]];
    double sa[3] = {0}, sb[3] = {0};
    int na = 0, nb = 0;
    for (int p = 0; p < 16; p++) {
        if (!src->opaque[p]) continue;
        int sel = t.sel[p], off, grp;
        if (s->mode == ETC_MODE_T) {
            grp = sel == 0 ? 0 : 1;
            off = sel == 1 ? d : (sel == 3 ? -d : 0);
        } else {
            grp = sel < 2 ? 0 : 1;
            off = (sel & 1) ? -d : d;
        }
        for (int ch = 0; ch < 3; ch++) (grp ? sb : sa)[ch] += src->c[p][ch] - off;
        if (grp)
            nb++;
        else
            na++;
    }
    for (int ch = 0; ch < 3; ch++) {
        a[ch] = na ? quant4(sa[ch] / na) : s->c[0][ch];
        b[ch] = nb ? quant4(sb[ch] / nb) : s->c[1][ch];
    }
}

/* Principal axis (power iteration on the covariance) of the opaque pixels. */
static void principal_axis(const etc_src *src, const double mean[3], double axis[3])
{
    double cov[6] = {0};
    for (int p = 0; p < 16; p++) {
        if (!src->opaque[p]) continue;
        double u[3] = {src->c[p][0] - mean[0], src->c[p][1] - mean[1], src->c[p][2] - mean[2]};
        cov[0] += u[0] * u[0];
        cov[1] += u[0] * u[1];
        cov[2] += u[0] * u[2];
        cov[3] += u[1] * u[1];
        cov[4] += u[1] * u[2];
        cov[5] += u[2] * u[2];
    }
    double v[3] = {1, 1, 1};
    for (int it = 0; it < 8; it++) {
        double n[3] = {cov[0] * v[0] + cov[1] * v[1] + cov[2] * v[2], cov[1] * v[0] + cov[3] * v[1] + cov[4] * v[2],
                       cov[2] * v[0] + cov[4] * v[1] + cov[5] * v[2]};
        double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        if (len < 1e-12) break;
        for (int i = 0; i < 3; i++) v[i] = n[i] / len;
    }
    memcpy(axis, v, sizeof v);
}

typedef struct th_part {
    uint32_t mask; /* group B membership (opaque pixels) */
    double sse;
} th_part;

static void group_means(const etc_src *src, uint32_t mask, double ma[3], double mb[3])
{
    double sa[3] = {0}, sb[3] = {0};
    int na = 0, nb = 0;
    for (int p = 0; p < 16; p++) {
        if (!src->opaque[p]) continue;
        int g = mask >> p & 1;
        for (int ch = 0; ch < 3; ch++) (g ? sb : sa)[ch] += src->c[p][ch];
        if (g)
            nb++;
        else
            na++;
    }
    for (int ch = 0; ch < 3; ch++) {
        ma[ch] = na ? sa[ch] / na : 0;
        mb[ch] = nb ? sb[ch] / nb : ma[ch];
        if (!na) ma[ch] = mb[ch];
    }
}

/* Lloyd iterations of 2-means from a partition. */
static uint32_t lloyd(const etc_src *src, uint32_t mask, int iters)
{
    for (int it = 0; it < iters; it++) {
        double ma[3], mb[3];
        group_means(src, mask, ma, mb);
        uint32_t nm = 0;
        for (int p = 0; p < 16; p++) {
            if (!src->opaque[p]) continue;
            double da = 0, db = 0;
            for (int ch = 0; ch < 3; ch++) {
                double x = src->c[p][ch];
                da += src->w[ch] * (x - ma[ch]) * (x - ma[ch]);
                db += src->w[ch] * (x - mb[ch]) * (x - mb[ch]);
            }
            if (db < da) nm |= 1u << p;
        }
        if (nm == mask) break;
        mask = nm;
    }
    return mask;
}

void kiln__etc2_th_search(const etc_src *src, etc_sol *best)
{
    int q = src->quality;
    int nparts = q == KILN_QUALITY_FAST ? 1 : (q == KILN_QUALITY_NORMAL ? 2 : (q == KILN_QUALITY_HIGH ? 3 : 5));
    int recenter = q == KILN_QUALITY_FAST ? 0 : (q == KILN_QUALITY_MAX ? 3 : 1);
    int idx[16], n = 0;
    double mean[3] = {0, 0, 0};
    for (int p = 0; p < 16; p++)
        if (src->opaque[p]) {
            idx[n++] = p;
            for (int ch = 0; ch < 3; ch++) mean[ch] += src->c[p][ch];
        }
    if (n == 0) return;
    for (int ch = 0; ch < 3; ch++) mean[ch] /= n;
    double axis[3];
    principal_axis(src, mean, axis);
    double proj[16];
    for (int i = 0; i < n; i++) {
        int p = idx[i];
        proj[i] = (src->c[p][0] - mean[0]) * axis[0] + (src->c[p][1] - mean[1]) * axis[1] + (src->c[p][2] - mean[2]) * axis[2];
    }
    /* sort pixel ids by projection (insertion sort, stable) */
    for (int i = 1; i < n; i++) {
        double pv = proj[i];
        int pi = idx[i], j = i;
        while (j > 0 && proj[j - 1] > pv) {
            proj[j] = proj[j - 1];
            idx[j] = idx[j - 1];
            j--;
        }
        proj[j] = pv;
        idx[j] = pi;
    }
    /* every split point, scored by the 2-means SSE */
    th_part parts[16];
    int np = 0;
    for (int s = 1; s < n || (n == 1 && s == 1); s++) {
        uint32_t mask = 0;
        for (int i = s; i < n; i++) mask |= 1u << idx[i];
        double ma[3], mb[3], sse = 0;
        group_means(src, mask, ma, mb);
        for (int i = 0; i < n; i++) {
            int p = idx[i];
            const double *m = (mask >> p & 1) ? mb : ma;
            for (int ch = 0; ch < 3; ch++) sse += src->w[ch] * (src->c[p][ch] - m[ch]) * (src->c[p][ch] - m[ch]);
        }
        parts[np].mask = mask;
        parts[np].sse = sse;
        np++;
        if (n == 1) break;
    }
    /* best splits first (stable) */
    for (int i = 1; i < np; i++) {
        th_part t = parts[i];
        int j = i;
        while (j > 0 && parts[j - 1].sse > t.sse) {
            parts[j] = parts[j - 1];
            j--;
        }
        parts[j] = t;
    }
    uint32_t tried[24], keys[24];
    int ntried = 0;
    int limit = nparts < np ? nparts : np;
    for (int k = 0; k < limit + 1; k++) {
        uint32_t mask;
        if (k < limit)
            mask = parts[k].mask;
        else
            mask = lloyd(src, parts[0].mask, q == KILN_QUALITY_FAST ? 2 : 6);
        int dup = 0;
        for (int i = 0; i < ntried; i++) dup |= tried[i] == mask;
        if (dup) continue;
        double ma[3], mb[3];
        group_means(src, mask, ma, mb);
        int a[3], b[3];
        for (int ch = 0; ch < 3; ch++) {
            a[ch] = quant4(ma[ch]);
            b[ch] = quant4(mb[ch]);
        }
        /* a partition's local search depends only on its quantised centres (a, b), in that order (it starts from
         * UINT32_MAX): one whose (a, b) repeats an earlier partition's repeats that result, which was already offered to
         * best (taken if lower; best only decreases), so it cannot change best and is skipped. Exact (the GPU pass does the
         * same: enc_etc2_th.glsl DEDUP); equal masks give equal (a, b). */
        const uint32_t key = (uint32_t)pack12(a) << 12 | (uint32_t)pack12(b);
        for (int i = 0; i < ntried; i++) dup |= keys[i] == key;
        if (dup) continue;
        keys[ntried] = key;
        tried[ntried++] = mask;
        etc_sol local = *best;
        /* every partition's best T/H candidate is refined, even one that starts above the best so
         * far (logos and flat colours gain from that; pruning it cost 0.25 dB on such images) */
        local.err = UINT32_MAX;
        th_eval(src, ETC_MODE_T, a, b, &local);
        th_eval(src, ETC_MODE_T, b, a, &local);
        h_eval(src, a, b, &local);
        /* refinement: centres from the selectors */
        for (int r = 0; r < recenter && local.err > 0 && (local.mode == ETC_MODE_T || local.mode == ETC_MODE_H); r++) {
            uint32_t before = local.err;
            int na[3], nb[3];
            th_recenter(src, &local, na, nb);
            /* the local best's colours again (T: in that order; H: either, since an H solution comes from an h_eval,
             * which tried both): the round would only re-evaluate candidates already evaluated against this local
             * search's non-increasing error, find nothing lower and stop the loop. Exact (enc_etc2_th.glsl RECENT). */
            if ((!memcmp(na, local.c[0], sizeof na) && !memcmp(nb, local.c[1], sizeof nb)) ||
                (local.mode == ETC_MODE_H && !memcmp(na, local.c[1], sizeof na) && !memcmp(nb, local.c[0], sizeof nb)))
                break;
            if (local.mode == ETC_MODE_T)
                th_eval(src, ETC_MODE_T, na, nb, &local);
            else
                h_eval(src, na, nb, &local);
            if (local.err >= before) break;
        }
        if (local.err < best->err && (local.mode == ETC_MODE_T || local.mode == ETC_MODE_H)) *best = local;
    }
    /* max: +-1 per channel of either colour around the best T/H solution */
    if (q == KILN_QUALITY_MAX && (best->mode == ETC_MODE_T || best->mode == ETC_MODE_H) && best->err > 0) {
        for (int round = 0; round < 2; round++) {
            uint32_t before = best->err;
            etc_sol cur = *best;
            for (int which = 0; which < 2; which++)
                for (int ch = 0; ch < 3; ch++)
                    for (int s = -1; s <= 1; s += 2) {
                        int a[3], b[3];
                        memcpy(a, cur.c[0], sizeof a);
                        memcpy(b, cur.c[1], sizeof b);
                        int *v = which ? &b[ch] : &a[ch];
                        *v += s;
                        if (*v < 0 || *v > 15) continue;
                        if (cur.mode == ETC_MODE_T)
                            th_eval(src, ETC_MODE_T, a, b, best);
                        else
                            h_eval(src, a, b, best);
                    }
            if (best->err >= before) break;
        }
    }
}

/* ---------------------------------------------------------------- lower bounds (pruning) */

/* Least-squares residual of the best unquantised plane over the 16 pixels, weighted: every planar
 * block (quantised, rounded) errs at least this much up to its clamping, so planar is skipped when this
 * already reaches the best error (near-exact pruning). */
static double planar_bound(const etc_src *src)
{
    double r = 0;
    for (int ch = 0; ch < 3; ch++) {
        double s = 0, sx = 0, sy = 0, q = 0;
        for (int p = 0; p < 16; p++) {
            double c = src->c[p][ch];
            s += c;
            sx += (2 * (p & 3) - 3) * c;
            sy += (2 * (p >> 2) - 3) * c;
            q += c * c;
        }
        double res = q - s * s / 16 - sx * sx / 80 - sy * sy / 80;
        r += src->w[ch] * (res > 0 ? res : 0);
    }
    return r;
}

/* Lower bound of the T / H error: the (unclamped) T/H colours lie on two lines parallel to the grey
 * axis, so the error is at least the 2-means cost of the pixels projected onto the plane normal to
 * it (weighted metric), which is at least the smaller eigenvalue of their 2x2 scatter (the spectral
 * relaxation of 2-means). Clamped palette entries leave the lines, so this prunes near-exactly. */
static double th_bound(const etc_src *src)
{
    double sw[3], y[16][3], m[3] = {0, 0, 0};
    int n = 0;
    for (int ch = 0; ch < 3; ch++) sw[ch] = sqrt((double)src->w[ch]);
    double ul = sqrt(sw[0] * sw[0] + sw[1] * sw[1] + sw[2] * sw[2]);
    double u[3] = {sw[0] / ul, sw[1] / ul, sw[2] / ul};
    for (int p = 0; p < 16; p++) {
        if (!src->opaque[p]) continue;
        double v[3], d = 0;
        for (int ch = 0; ch < 3; ch++) {
            v[ch] = sw[ch] * src->c[p][ch];
            d += v[ch] * u[ch];
        }
        for (int ch = 0; ch < 3; ch++) {
            y[n][ch] = v[ch] - d * u[ch];
            m[ch] += y[n][ch];
        }
        n++;
    }
    if (n < 3) return 0;
    double S[3][3] = {{0}};
    for (int i = 0; i < n; i++)
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) S[a][b] += (y[i][a] - m[a] / n) * (y[i][b] - m[b] / n);
    /* eigenvalues 0 (along u), l1 >= l2: l1 + l2 = trace, l1 l2 = sum of the principal 2x2 minors */
    double t = S[0][0] + S[1][1] + S[2][2];
    double pm = S[0][0] * S[1][1] - S[0][1] * S[1][0] + S[0][0] * S[2][2] - S[0][2] * S[2][0] + S[1][1] * S[2][2] -
                S[1][2] * S[2][1];
    double disc = t * t - 4 * pm;
    double l2 = (t - sqrt(disc > 0 ? disc : 0)) / 2;
    return l2 > 0 ? l2 * 0.999 : 0;
}

/* ---------------------------------------------------------------- search driver */

/* The ETC1 modes and planar: the state the T / H pass starts from (the GPU's passes split here). */
void kiln__etc2_search_pre_th(const etc_src *src, etc_sol *best)
{
    if (src->quality == KILN_QUALITY_FAST && !src->transparent)
        kiln__etc1_fast(src, best);
    else
        kiln__etc1_search(src, best);
    if (best->err == 0) return;
    if (!src->transparent && (src->quality == KILN_QUALITY_FAST || planar_bound(src) < (double)best->err)) {
        etc_sol p;
        planar_search(src, &p);
        if (p.err < best->err) *best = p;
    }
}

/* T / H after the ETC1 modes and planar (nothing when best->err is 0: the gate is never below 0). */
void kiln__etc2_search_th(const etc_src *src, etc_sol *best)
{
    /* T/H: below max only for blocks the other modes leave with a noticeable error (mean squared
     * error per pixel over R+G+B above 150 / 24 / 8 at fast / normal / high) */
    static const uint32_t th_gate[4] = {150, 24, 8, 0};
    uint32_t gate = th_gate[src->quality & 3] * (uint32_t)src->nopaque * (uint32_t)(src->w[0] + src->w[1] + src->w[2]) / 3;
    if (best->err > gate && (src->quality == KILN_QUALITY_FAST || th_bound(src) < (double)best->err)) {
        etc_sol th = *best;
        /* T/H must beat the error so far: the search prunes every candidate sum at it */
        kiln__etc2_th_search(src, &th);
        if (th.err < best->err) {
            *best = th;
            kiln__etc_reselect(best, src, 0);
        }
    }
}

void kiln__etc2_search(const etc_src *src, etc_sol *best)
{
    kiln__etc2_search_pre_th(src, best);
    kiln__etc2_search_th(src, best);
}

/* ---------------------------------------------------------------- block encoder entries */

/* The solution of an ETC2 RGB block (opaque: bit 33 is the differential bit), selectors included, for
 * re-picking the selectors: kiln__etc_pack of it gives the block back. Planar: only the mode. */
static inline int etc_sext3(uint64_t v) { return (int)(v & 3u) - (int)(v & 4u); }

static void etc2_rgb_unpack(const uint8_t b[8], etc_sol *s)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | b[i];
    memset(s, 0, sizeof *s);
    if (!(v >> 33 & 1)) {
        s->mode = ETC_MODE_INDIV;
        for (int ch = 0; ch < 3; ch++) {
            s->c[0][ch] = (int)(v >> (60 - 8 * ch) & 15);
            s->c[1][ch] = (int)(v >> (56 - 8 * ch) & 15);
        }
    } else {
        int base[3], d[3];
        for (int ch = 0; ch < 3; ch++) {
            base[ch] = (int)(v >> (59 - 8 * ch) & 31);
            d[ch] = etc_sext3(v >> (56 - 8 * ch));
        }
        if (base[0] + d[0] < 0 || base[0] + d[0] > 31) {
            s->mode = ETC_MODE_T;
            s->c[0][0] = (int)((v >> 59 & 3) << 2 | (v >> 56 & 3));
            s->c[0][1] = (int)(v >> 52 & 15);
            s->c[0][2] = (int)(v >> 48 & 15);
            s->c[1][0] = (int)(v >> 44 & 15);
            s->c[1][1] = (int)(v >> 40 & 15);
            s->c[1][2] = (int)(v >> 36 & 15);
            s->table[0] = (int)((v >> 34 & 3) << 1 | (v >> 32 & 1));
        } else if (base[1] + d[1] < 0 || base[1] + d[1] > 31) {
            s->mode = ETC_MODE_H;
            s->c[0][0] = (int)(v >> 59 & 15);
            s->c[0][1] = (int)((v >> 56 & 7) << 1 | (v >> 52 & 1));
            s->c[0][2] = (int)((v >> 51 & 1) << 3 | (v >> 48 & 3) << 1 | (v >> 47 & 1));
            s->c[1][0] = (int)(v >> 43 & 15);
            s->c[1][1] = (int)((v >> 40 & 7) << 1 | (v >> 39 & 1));
            s->c[1][2] = (int)(v >> 35 & 15);
            const int k0 = s->c[0][0] << 8 | s->c[0][1] << 4 | s->c[0][2];
            const int k1 = s->c[1][0] << 8 | s->c[1][1] << 4 | s->c[1][2];
            s->table[0] = (int)((v >> 34 & 1) << 2 | (v >> 32 & 1) << 1) | (k0 >= k1 ? 1 : 0);
        } else if (base[2] + d[2] < 0 || base[2] + d[2] > 31) {
            s->mode = ETC_MODE_PLANAR;
            return;
        } else {
            s->mode = ETC_MODE_DIFF;
            for (int ch = 0; ch < 3; ch++) {
                s->c[0][ch] = base[ch];
                s->c[1][ch] = base[ch] + d[ch];
            }
        }
    }
    if (s->mode == ETC_MODE_INDIV || s->mode == ETC_MODE_DIFF) {
        s->table[0] = (int)(v >> 37 & 7);
        s->table[1] = (int)(v >> 34 & 7);
        s->flip = (int)(v >> 32 & 1);
    }
    for (int p = 0; p < 16; p++) {
        const int j = (p & 3) * 4 + (p >> 2);
        s->sel[p] = (uint8_t)((v >> (16 + j) & 1) << 1 | (v >> j & 1));
    }
}

void kiln__enc_etc2_rgb(const kiln_block *blk, uint8_t *out, const kiln_encode_params *params)
{
    if (params->quality == KILN_QUALITY_FAST) {
        kiln__etc_fast_opaque(blk, params, 1, out);
        if (!params->dither) return;
        /* dithering re-picks the selectors of the fast path's block (helper ditherfix): kiln__etc2_search at
         * FAST rounds its planar fit in doubles and tries planar without the residual gate, so a few of its
         * blocks were not the fast path's, and dithering changed the mode / planar colours, not only the
         * selectors (the GPU, enc_etc1.comp + enc_etc_dither.comp, dithers the fast path's block) */
        etc_src src;
        etc_sol sol;
        kiln__etc_src_init(&src, blk, params, 0);
        etc2_rgb_unpack(out, &sol);
        if (sol.mode == ETC_MODE_PLANAR) return;
        kiln__etc_reselect(&sol, &src, 1);
        kiln__etc_pack(&sol, &src, out);
        return;
    }
    etc_src src;
    etc_sol sol;
    kiln__etc_src_init(&src, blk, params, 0);
    kiln__etc2_search(&src, &sol);
    if (params->dither) kiln__etc_reselect(&sol, &src, 1);
    kiln__etc_pack(&sol, &src, out);
}

void kiln__enc_etc2_rgb_a1(const kiln_block *blk, uint8_t *out, const kiln_encode_params *params)
{
    etc_src src;
    etc_sol sol;
    kiln__etc_src_init(&src, blk, params, 1);
    if (src.nopaque == 0) {
        /* fully transparent: differential, every selector 2 */
        memset(&sol, 0, sizeof sol);
        sol.mode = ETC_MODE_DIFF;
        memset(sol.sel, 2, sizeof sol.sel);
    } else {
        kiln__etc2_search(&src, &sol);
        if (params->dither) kiln__etc_reselect(&sol, &src, 1);
    }
    kiln__etc_pack(&sol, &src, out);
}

void kiln__enc_etc2_rgba(const kiln_block *blk, uint8_t *out, const kiln_encode_params *params)
{
    eac_target tg;
    kiln__eac_target_alpha8(&tg, blk, 3);
    kiln__eac_encode_channel(&tg, params->quality, params->dither, out);
    kiln__enc_etc2_rgb(blk, out + 8, params);
}

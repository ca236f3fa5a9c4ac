/* metrics.c - kiln_compare: PSNR, SSIM, max error, normal-map angle, HDR RMSE/RMSLE.
 *
 * Definitions (N = width * height, C = channels compared = max of the two images' `channels`,
 * colour channels = the first min(C, 3) of R, G, B):
 *  - Units: when both images are U8 (or both U16) differences are taken in integer code values
 *    (peak 255 or 65535), otherwise in [0,1] floats (U8 / 255, U16 / 65535, F32 as is; peak 1). When
 *    either image is HDR (`hdr` = 1) F32 values are used raw. So two U8 images give the usual
 *    PSNR = 10 log10(255^2 / MSE) with MSE in 8-bit units.
 *  - psnr[c] = 10 log10(peak^2 / MSE_c) for c < C, INFINITY when MSE_c = 0, NAN for channels not
 *    compared. psnr_rgb / mse_rgb use the mean squared error over the colour channels together.
 *  - max_error: largest |difference| over the compared channels, in the units above.
 *  - ssim: mean SSIM over every 8x8 window position (stride 1, uniform weights; the window shrinks to
 *    the image when it is smaller), of the luma Y = 0.299 R + 0.587 G + 0.114 B of the [0,1] (or raw
 *    HDR) values when C >= 3, else of R; Wang et al. constants C1 = (0.01)^2, C2 = (0.03)^2 for a
 *    dynamic range of 1; population (1/64) variances.
 *  - normal_angle_mean: xyz = 2 * rgb - 1 per image (z = sqrt(max(0, 1 - x^2 - y^2)) for an image whose
 *    `channels` is 2, e.g. a BC5 decode), both normalised, mean angle in degrees over the pixels where
 *    both vectors are non-zero (0 when there is none). NAN when C < 2.
 *  - rmse = sqrt(mse over the colour channels) in [0,1] (or raw HDR) units; rmsle = sqrt(mean over the
 *    colour channels of (ln(1 + x) - ln(1 + y))^2) with x, y clamped below at 0 first.
 * Every row (and every SSIM window row) is summed on its own and the rows are added in order, so the
 * results are the same for any thread count. */
#include "core/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct row_sums {
    double sq[4];
    double max_err;
    double ang_sum;
    double ang_n;
    double log_sq;
} row_sums;

typedef struct cmp_job {
    const kiln_image *a, *b;
    uint32_t w, h, nch, ncol;
    int int_units;
    row_sums *rows;
    /* SSIM */
    float *ya, *yb;
    uint32_t ww, wh;
    double *ssim_rows;
    double *scratch; /* 5 * w doubles per worker */
} cmp_job;

/* value in the comparison units */
static inline double unit_value(const kiln_image *im, size_t i, int int_units)
{
    switch (im->type) {
    case KILN_PIXEL_U8: return int_units ? (double)((const uint8_t *)im->pixels)[i] : ((const uint8_t *)im->pixels)[i] / 255.0;
    case KILN_PIXEL_U16:
        return int_units ? (double)((const uint16_t *)im->pixels)[i] : ((const uint16_t *)im->pixels)[i] / 65535.0;
    default: return ((const float *)im->pixels)[i];
    }
}

/* value in [0,1] (raw for F32) */
static inline double norm_value(const kiln_image *im, size_t i) { return unit_value(im, i, 0); }

static int normal_of(const kiln_image *im, size_t i, double n[3])
{
    n[0] = 2.0 * norm_value(im, i) - 1.0;
    n[1] = 2.0 * norm_value(im, i + 1) - 1.0;
    if (im->channels == 2) {
        double z2 = 1.0 - n[0] * n[0] - n[1] * n[1];
        n[2] = z2 > 0.0 ? sqrt(z2) : 0.0;
    } else {
        n[2] = 2.0 * norm_value(im, i + 2) - 1.0;
    }
    double l = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (!(l > 1e-12)) return 0;
    n[0] /= l;
    n[1] /= l;
    n[2] /= l;
    return 1;
}

static void rows_range(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    cmp_job *j = user;
    for (size_t y = begin; y < end; y++) {
        row_sums r;
        memset(&r, 0, sizeof r);
        for (size_t x = 0; x < j->w; x++) {
            size_t i = (y * j->w + x) * 4;
            for (uint32_t c = 0; c < j->nch; c++) {
                double d = unit_value(j->a, i + c, j->int_units) - unit_value(j->b, i + c, j->int_units);
                r.sq[c] += d * d;
                double ad = fabs(d);
                if (isnan(ad) || ad > r.max_err) r.max_err = ad; /* NaN sticks */
            }
            for (uint32_t c = 0; c < j->ncol; c++) {
                double va = fmax(norm_value(j->a, i + c), 0.0), vb = fmax(norm_value(j->b, i + c), 0.0);
                double d = log1p(va) - log1p(vb);
                r.log_sq += d * d;
            }
            if (j->nch >= 2) {
                double na[3], nb[3];
                if (normal_of(j->a, i, na) && normal_of(j->b, i, nb)) {
                    double dot = na[0] * nb[0] + na[1] * nb[1] + na[2] * nb[2];
                    dot = dot > 1.0 ? 1.0 : dot < -1.0 ? -1.0 : dot;
                    r.ang_sum += acos(dot) * (180.0 / 3.14159265358979323846);
                    r.ang_n += 1.0;
                }
            }
        }
        j->rows[y] = r;
    }
}

static void luma_range(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    cmp_job *j = user;
    for (size_t y = begin; y < end; y++) {
        for (size_t x = 0; x < j->w; x++) {
            size_t p = y * j->w + x, i = p * 4;
            if (j->nch >= 3) {
                j->ya[p] = (float)(0.299 * norm_value(j->a, i) + 0.587 * norm_value(j->a, i + 1) +
                                   0.114 * norm_value(j->a, i + 2));
                j->yb[p] = (float)(0.299 * norm_value(j->b, i) + 0.587 * norm_value(j->b, i + 1) +
                                   0.114 * norm_value(j->b, i + 2));
            } else {
                j->ya[p] = (float)norm_value(j->a, i);
                j->yb[p] = (float)norm_value(j->b, i);
            }
        }
    }
}

static void ssim_range(void *user, size_t begin, size_t end, uint32_t worker)
{
    cmp_job *j = user;
    const double c1 = 0.01 * 0.01, c2 = 0.03 * 0.03;
    double *col = j->scratch + (size_t)worker * 5 * j->w;
    const double inv = 1.0 / ((double)j->ww * j->wh);
    for (size_t y0 = begin; y0 < end; y0++) {
        for (size_t x = 0; x < j->w; x++) {
            double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
            for (size_t k = 0; k < j->wh; k++) {
                double va = j->ya[(y0 + k) * j->w + x], vb = j->yb[(y0 + k) * j->w + x];
                sa += va;
                sb += vb;
                saa += va * va;
                sbb += vb * vb;
                sab += va * vb;
            }
            col[x * 5 + 0] = sa;
            col[x * 5 + 1] = sb;
            col[x * 5 + 2] = saa;
            col[x * 5 + 3] = sbb;
            col[x * 5 + 4] = sab;
        }
        double total = 0.0;
        for (size_t x0 = 0; x0 + j->ww <= j->w; x0++) {
            double s[5] = {0, 0, 0, 0, 0};
            for (size_t k = 0; k < j->ww; k++)
                for (int q = 0; q < 5; q++) s[q] += col[(x0 + k) * 5 + q];
            double ma = s[0] * inv, mb = s[1] * inv;
            double va = s[2] * inv - ma * ma, vb = s[3] * inv - mb * mb, cov = s[4] * inv - ma * mb;
            total += ((2.0 * ma * mb + c1) * (2.0 * cov + c2)) / ((ma * ma + mb * mb + c1) * (va + vb + c2));
        }
        j->ssim_rows[y0] = total;
    }
}

static kiln_status check_input(kiln_context *ctx, const kiln_image *im, char which)
{
    if (!im || !im->pixels) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_compare: image %c is NULL or empty", which);
    if (im->type != KILN_PIXEL_U8 && im->type != KILN_PIXEL_U16 && im->type != KILN_PIXEL_F32)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_compare: image %c has a bad pixel type %d", which,
                          (int)im->type);
    if (im->width == 0 || im->height == 0 || (uint64_t)im->width * im->height > KILN_MAX_PIXELS)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_compare: image %c has a bad size %ux%u", which,
                          im->width, im->height);
    return KILN_OK;
}

static double psnr_of(double mse, double peak) { return mse == 0.0 ? INFINITY : 10.0 * log10(peak * peak / mse); }

kiln_status kiln_compare(kiln_context *ctx, const kiln_image *a, const kiln_image *b, kiln_metrics *out)
{
    if (!ctx) return KILN_ERR_INVALID_ARGUMENT;
    kiln__clear_error(ctx);
    if (!out) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_compare: output is NULL");
    memset(out, 0, sizeof *out);
    KILN_TRY(check_input(ctx, a, 'A'));
    KILN_TRY(check_input(ctx, b, 'B'));
    if (a->width != b->width || a->height != b->height)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_compare: image sizes differ (%ux%u and %ux%u)", a->width,
                          a->height, b->width, b->height);
    cmp_job j;
    memset(&j, 0, sizeof j);
    j.a = a;
    j.b = b;
    j.w = a->width;
    j.h = a->height;
    uint32_t ca = a->channels ? a->channels : 4, cb = b->channels ? b->channels : 4;
    j.nch = ca > cb ? ca : cb;
    if (j.nch > 4) j.nch = 4;
    j.ncol = j.nch < 3 ? j.nch : 3;
    int hdr = a->hdr || b->hdr;
    j.int_units = !hdr && a->type == b->type && a->type != KILN_PIXEL_F32;
    double peak = !j.int_units ? 1.0 : a->type == KILN_PIXEL_U8 ? 255.0 : 65535.0;
    size_t n = (size_t)j.w * j.h;
    j.ww = j.w < 8 ? j.w : 8;
    j.wh = j.h < 8 ? j.h : 8;
    size_t wrows = j.h - j.wh + 1;
    uint32_t threads = kiln_context_threads(ctx);
    j.rows = kiln__malloc(ctx, (size_t)j.h * sizeof *j.rows);
    j.ya = kiln__malloc(ctx, n * sizeof(float));
    j.yb = kiln__malloc(ctx, n * sizeof(float));
    j.ssim_rows = kiln__malloc(ctx, wrows * sizeof(double));
    j.scratch = kiln__malloc(ctx, (size_t)threads * 5 * j.w * sizeof(double));
    kiln_status st = KILN_OK;
    if (!j.rows || !j.ya || !j.yb || !j.ssim_rows || !j.scratch) st = KILN_ERR_OUT_OF_MEMORY;
    if (st == KILN_OK) st = kiln__parallel_for_progress(ctx, j.h, 8, rows_range, &j, 0.0f, 0.4f);
    if (st == KILN_OK) st = kiln__parallel_for_progress(ctx, j.h, 16, luma_range, &j, 0.4f, 0.5f);
    if (st == KILN_OK) st = kiln__parallel_for_progress(ctx, wrows, 4, ssim_range, &j, 0.5f, 1.0f);
    if (st == KILN_OK) {
        row_sums t;
        memset(&t, 0, sizeof t);
        for (size_t y = 0; y < j.h; y++) {
            const row_sums *r = &j.rows[y];
            for (int c = 0; c < 4; c++) t.sq[c] += r->sq[c];
            if (isnan(r->max_err) || r->max_err > t.max_err) t.max_err = r->max_err;
            t.ang_sum += r->ang_sum;
            t.ang_n += r->ang_n;
            t.log_sq += r->log_sq;
        }
        double ssim = 0.0;
        for (size_t y = 0; y < wrows; y++) ssim += j.ssim_rows[y];
        double nd = (double)n;
        double sq_col = 0.0;
        for (uint32_t c = 0; c < 4; c++) {
            out->psnr[c] = c < j.nch ? psnr_of(t.sq[c] / nd, peak) : NAN;
            if (c < j.ncol) sq_col += t.sq[c];
        }
        out->psnr_alpha = out->psnr[3];
        out->mse_rgb = sq_col / (nd * j.ncol);
        out->psnr_rgb = psnr_of(out->mse_rgb, peak);
        out->ssim = ssim / ((double)wrows * (double)(j.w - j.ww + 1));
        out->max_error = t.max_err;
        out->normal_angle_mean = j.nch < 2 ? NAN : t.ang_n > 0 ? t.ang_sum / t.ang_n : 0.0;
        out->rmse = sqrt(out->mse_rgb) / peak;
        out->rmsle = sqrt(t.log_sq / (nd * j.ncol));
        out->hdr = hdr;
    }
    free(j.rows);
    free(j.ya);
    free(j.yb);
    free(j.ssim_rows);
    free(j.scratch);
    return st;
}

/* test_metrics.c - kiln_compare against hand-computed values and a naive SSIM reference. */
#include "support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define assert_double_equal(a, b, eps)                                                                       \
    do {                                                                                                     \
        double a_ = (a), b_ = (b);                                                                           \
        if (!(fabs(a_ - b_) <= (eps))) fail_msg("%s = %.17g, expected %.17g (eps %g)", #a, a_, b_, (double)(eps)); \
    } while (0)

static kiln_image make(kiln_context *ctx, uint32_t w, uint32_t h, kiln_pixel_type t, uint32_t channels)
{
    kiln_image im;
    assert_int_equal(kiln_image_alloc(ctx, &im, w, h, t), KILN_OK);
    im.channels = channels;
    return im;
}

static double psnr_db(double peak, double mse) { return 10.0 * log10(peak * peak / mse); }

static void hand_computed_psnr(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    kiln_image a = make(ctx, 2, 1, KILN_PIXEL_U8, 4), b = make(ctx, 2, 1, KILN_PIXEL_U8, 4);
    const uint8_t pa[8] = {10, 20, 30, 255, 0, 0, 0, 255}, pb[8] = {12, 20, 27, 255, 0, 1, 0, 250};
    memcpy(a.pixels, pa, 8);
    memcpy(b.pixels, pb, 8);
    kiln_metrics m;
    assert_int_equal(kiln_compare(ctx, &a, &b, &m), KILN_OK);
    /* squared errors: R 4, G 1, B 9, A 25 over 2 pixels */
    assert_double_equal(m.psnr[0], psnr_db(255, 2.0), 1e-9);
    assert_double_equal(m.psnr[1], psnr_db(255, 0.5), 1e-9);
    assert_double_equal(m.psnr[2], psnr_db(255, 4.5), 1e-9);
    assert_double_equal(m.psnr[3], psnr_db(255, 12.5), 1e-9);
    assert_double_equal(m.psnr_alpha, m.psnr[3], 0);
    assert_double_equal(m.mse_rgb, 14.0 / 6.0, 1e-12);
    assert_double_equal(m.psnr_rgb, psnr_db(255, 14.0 / 6.0), 1e-9);
    assert_double_equal(m.max_error, 5.0, 0);
    assert_double_equal(m.rmse, sqrt(14.0 / 6.0) / 255.0, 1e-12);
    assert_int_equal(m.hdr, 0);
    kiln_image_free(&a);
    kiln_image_free(&b);
    kiln_context_free(ctx);
}

static void constant_offset(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(2, KILN_BACKEND_CPU);
    kt_rng r;
    kt_rng_seed(&r, 3);
    const uint32_t W = 67, H = 45;
    kiln_image a = make(ctx, W, H, KILN_PIXEL_U8, 4), b = make(ctx, W, H, KILN_PIXEL_U8, 4);
    uint8_t *pa = a.pixels, *pb = b.pixels;
    for (size_t i = 0; i < (size_t)W * H * 4; i++) {
        pa[i] = (uint8_t)(kt_rng_u32(&r) % 251);
        pb[i] = (uint8_t)((i % 4 == 3) ? pa[i] : pa[i] + 3);
    }
    kiln_metrics m;
    assert_int_equal(kiln_compare(ctx, &a, &b, &m), KILN_OK);
    for (int c = 0; c < 3; c++) assert_double_equal(m.psnr[c], psnr_db(255, 9.0), 1e-9);
    assert_double_equal(m.psnr_rgb, 38.588378514285, 1e-9); /* 10 log10(255^2 / 9) */
    assert_true(isinf(m.psnr[3]) && m.psnr[3] > 0);
    assert_double_equal(m.mse_rgb, 9.0, 0);
    assert_double_equal(m.max_error, 3.0, 0);

    /* an offset in G only */
    for (size_t i = 0; i < (size_t)W * H * 4; i++) pb[i] = (uint8_t)((i % 4 == 1) ? pa[i] + 3 : pa[i]);
    assert_int_equal(kiln_compare(ctx, &a, &b, &m), KILN_OK);
    assert_true(isinf(m.psnr[0]) && isinf(m.psnr[2]));
    assert_double_equal(m.psnr[1], psnr_db(255, 9.0), 1e-9);
    assert_double_equal(m.psnr_rgb, psnr_db(255, 3.0), 1e-9);

    /* only R is compared for one-channel images */
    a.channels = b.channels = 1;
    assert_int_equal(kiln_compare(ctx, &a, &b, &m), KILN_OK);
    assert_true(isinf(m.psnr_rgb));
    assert_true(isinf(m.psnr[0]));
    assert_true(isnan(m.psnr[1]) && isnan(m.psnr[2]) && isnan(m.psnr[3]));
    assert_double_equal(m.max_error, 0.0, 0);
    /* channels compared = the larger count */
    b.channels = 3;
    assert_int_equal(kiln_compare(ctx, &a, &b, &m), KILN_OK);
    assert_double_equal(m.psnr[1], psnr_db(255, 9.0), 1e-9);
    assert_true(isnan(m.psnr[3]));

    /* 16-bit: offset 257 = one 8-bit step */
    kiln_image c = make(ctx, W, H, KILN_PIXEL_U16, 3), d = make(ctx, W, H, KILN_PIXEL_U16, 3);
    uint16_t *pc = c.pixels, *pd = d.pixels;
    for (size_t i = 0; i < (size_t)W * H * 4; i++) {
        pc[i] = (uint16_t)(kt_rng_u32(&r) % 60000);
        pd[i] = (uint16_t)(pc[i] + 257);
    }
    assert_int_equal(kiln_compare(ctx, &c, &d, &m), KILN_OK);
    assert_double_equal(m.psnr_rgb, 20.0 * log10(255.0), 1e-9);
    assert_double_equal(m.max_error, 257.0, 0);
    /* mixed types compare in [0,1]: U8 against F32 = U8/255 + 0.01 */
    kiln_image f = make(ctx, W, H, KILN_PIXEL_F32, 4);
    float *pf = f.pixels;
    for (size_t i = 0; i < (size_t)W * H * 4; i++) pf[i] = (float)(pa[i] / 255.0 + ((i % 4 == 3) ? 0.0 : 0.01));
    assert_int_equal(kiln_compare(ctx, &a, &f, &m), KILN_OK);
    assert_double_equal(m.psnr_rgb, 40.0, 1e-4);
    assert_double_equal(m.max_error, 0.01, 1e-6);
    kiln_image_free(&f);
    kiln_image_free(&c);
    kiln_image_free(&d);
    kiln_image_free(&a);
    kiln_image_free(&b);
    kiln_context_free(ctx);
}

/* naive SSIM: every 8x8 window position, uniform weights, BT.601 luma, [0,1] units */
static double ssim_reference(const kiln_image *a, const kiln_image *b)
{
    uint32_t W = a->width, H = a->height, ww = W < 8 ? W : 8, wh = H < 8 ? H : 8;
    double *ya = malloc(sizeof(double) * W * H), *yb = malloc(sizeof(double) * W * H);
    for (size_t i = 0; i < (size_t)W * H; i++) {
        const uint8_t *p = (const uint8_t *)a->pixels + i * 4, *q = (const uint8_t *)b->pixels + i * 4;
        ya[i] = (0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2]) / 255.0;
        yb[i] = (0.299 * q[0] + 0.587 * q[1] + 0.114 * q[2]) / 255.0;
    }
    const double c1 = 1e-4, c2 = 9e-4, n = (double)ww * wh;
    double total = 0;
    int count = 0;
    for (uint32_t y0 = 0; y0 + wh <= H; y0++)
        for (uint32_t x0 = 0; x0 + ww <= W; x0++) {
            double ma = 0, mb = 0;
            for (uint32_t y = y0; y < y0 + wh; y++)
                for (uint32_t x = x0; x < x0 + ww; x++) {
                    ma += ya[y * W + x];
                    mb += yb[y * W + x];
                }
            ma /= n;
            mb /= n;
            double va = 0, vb = 0, cov = 0;
            for (uint32_t y = y0; y < y0 + wh; y++)
                for (uint32_t x = x0; x < x0 + ww; x++) {
                    double da = ya[y * W + x] - ma, db = yb[y * W + x] - mb;
                    va += da * da;
                    vb += db * db;
                    cov += da * db;
                }
            va /= n;
            vb /= n;
            cov /= n;
            total += (2 * ma * mb + c1) * (2 * cov + c2) / ((ma * ma + mb * mb + c1) * (va + vb + c2));
            count++;
        }
    free(ya);
    free(yb);
    return total / count;
}

static void ssim(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(3, KILN_BACKEND_CPU);
    kt_rng r;
    kt_rng_seed(&r, 8);
    const uint32_t sizes[][2] = {{23, 17}, {8, 8}, {5, 3}, {40, 9}};
    for (size_t s = 0; s < 4; s++) {
        uint32_t W = sizes[s][0], H = sizes[s][1];
        kiln_image a = make(ctx, W, H, KILN_PIXEL_U8, 3), b = make(ctx, W, H, KILN_PIXEL_U8, 3);
        uint8_t *pa = a.pixels, *pb = b.pixels;
        for (size_t i = 0; i < (size_t)W * H * 4; i++) {
            pa[i] = (uint8_t)((i / 4 % W) * 9 + (kt_rng_u32(&r) & 15));
            int v = pa[i] + (int)(kt_rng_u32(&r) % 41) - 20;
            pb[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
        kiln_metrics m;
        assert_int_equal(kiln_compare(ctx, &a, &b, &m), KILN_OK);
        double ref = ssim_reference(&a, &b);
        assert_double_equal(m.ssim, ref, 1e-5);
        assert_true(m.ssim < 0.999);
        assert_int_equal(kiln_compare(ctx, &a, &a, &m), KILN_OK);
        assert_true(m.ssim == 1.0); /* identical: exactly 1 */
        assert_true(isinf(m.psnr_rgb));
        assert_double_equal(m.max_error, 0, 0);
        kiln_image_free(&a);
        kiln_image_free(&b);
    }
    /* two flat images: SSIM = (2 ma mb + C1) / (ma^2 + mb^2 + C1) */
    kiln_image f = make(ctx, 16, 16, KILN_PIXEL_F32, 1), g = make(ctx, 16, 16, KILN_PIXEL_F32, 1);
    for (size_t i = 0; i < 16 * 16 * 4; i++) {
        ((float *)f.pixels)[i] = 0.5f;
        ((float *)g.pixels)[i] = 0.625f;
    }
    kiln_metrics m;
    assert_int_equal(kiln_compare(ctx, &f, &g, &m), KILN_OK);
    assert_double_equal(m.ssim, (2 * 0.5 * 0.625 + 1e-4) / (0.25 + 0.390625 + 1e-4), 1e-9);
    assert_double_equal(m.psnr_rgb, psnr_db(1.0, 0.015625), 1e-9);
    kiln_image_free(&f);
    kiln_image_free(&g);
    kiln_context_free(ctx);
}

static void hdr_errors(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(2, KILN_BACKEND_CPU);
    kiln_image a = make(ctx, 10, 10, KILN_PIXEL_F32, 3), b = make(ctx, 10, 10, KILN_PIXEL_F32, 3);
    a.hdr = b.hdr = 1;
    float *pa = a.pixels, *pb = b.pixels;
    const double e1 = exp(1.0) - 1.0;
    for (size_t i = 0; i < 100; i++)
        for (int c = 0; c < 4; c++) {
            pa[i * 4 + (size_t)c] = c == 3 ? 1.0f : 1.0f;
            pb[i * 4 + (size_t)c] = c == 3 ? 1.0f : (float)e1;
        }
    kiln_metrics m;
    assert_int_equal(kiln_compare(ctx, &a, &b, &m), KILN_OK);
    assert_int_equal(m.hdr, 1);
    double d = log(2.0) - log1p((float)e1);
    assert_double_equal(m.rmsle, fabs(d), 1e-9); /* |ln 2 - 1| */
    assert_double_equal(m.rmsle, 1.0 - log(2.0), 1e-7);
    assert_double_equal(m.rmse, (float)e1 - 1.0, 1e-9);
    /* negative values are clamped to 0 before the logarithm; half the samples differ */
    for (size_t i = 0; i < 100; i++)
        for (int c = 0; c < 3; c++) {
            pa[i * 4 + (size_t)c] = (i & 1) ? -5.0f : 3.0f;
            pb[i * 4 + (size_t)c] = (i & 1) ? 0.0f : 3.0f;
        }
    assert_int_equal(kiln_compare(ctx, &a, &b, &m), KILN_OK);
    assert_double_equal(m.rmsle, 0.0, 0);
    assert_double_equal(m.rmse, sqrt(25.0 / 2.0), 1e-9); /* raw values: RMSE sees the -5 */
    assert_double_equal(m.max_error, 5.0, 0);
    for (size_t i = 0; i < 100; i++)
        for (int c = 0; c < 3; c++) {
            pa[i * 4 + (size_t)c] = 100.0f;
            pb[i * 4 + (size_t)c] = (c == 1) ? 50.0f : 100.0f;
        }
    assert_int_equal(kiln_compare(ctx, &a, &b, &m), KILN_OK);
    assert_double_equal(m.rmsle, sqrt(pow(log(101.0) - log(51.0), 2) / 3.0), 1e-9);
    kiln_image_free(&a);
    kiln_image_free(&b);
    kiln_context_free(ctx);
}

static void normals(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(2, KILN_BACKEND_CPU);
    const double th = 10.0 * 3.14159265358979323846 / 180.0;
    kiln_image a = make(ctx, 9, 7, KILN_PIXEL_F32, 3), b = make(ctx, 9, 7, KILN_PIXEL_F32, 3);
    float *pa = a.pixels, *pb = b.pixels;
    for (size_t i = 0; i < 63; i++) {
        pa[i * 4 + 0] = 0.5f;
        pa[i * 4 + 1] = 0.5f;
        pa[i * 4 + 2] = 1.0f;
        pa[i * 4 + 3] = 1.0f;
        pb[i * 4 + 0] = (float)(0.5 + 0.5 * sin(th));
        pb[i * 4 + 1] = 0.5f;
        pb[i * 4 + 2] = (float)(0.5 + 0.5 * cos(th));
        pb[i * 4 + 3] = 1.0f;
    }
    kiln_metrics m;
    assert_int_equal(kiln_compare(ctx, &a, &b, &m), KILN_OK);
    assert_double_equal(m.normal_angle_mean, 10.0, 1e-4);
    /* a two-channel image (BC5-like): z is rebuilt from x and y */
    for (size_t i = 0; i < 63; i++) pb[i * 4 + 2] = 0.0f;
    b.channels = 2;
    assert_int_equal(kiln_compare(ctx, &a, &b, &m), KILN_OK);
    assert_double_equal(m.normal_angle_mean, 10.0, 1e-4);
    assert_int_equal(kiln_compare(ctx, &a, &a, &m), KILN_OK);
    assert_double_equal(m.normal_angle_mean, 0.0, 1e-6);
    a.channels = b.channels = 1;
    assert_int_equal(kiln_compare(ctx, &a, &b, &m), KILN_OK);
    assert_true(isnan(m.normal_angle_mean));
    kiln_image_free(&a);
    kiln_image_free(&b);
    kiln_context_free(ctx);
}

static void thread_count_independent(void **state)
{
    (void)state;
    kt_rng r;
    kt_rng_seed(&r, 77);
    kiln_context *c1 = kt_context(1, KILN_BACKEND_CPU);
    const uint32_t W = 301, H = 203;
    for (int t = 0; t < 3; t++) {
        kiln_pixel_type type = t == 0 ? KILN_PIXEL_U8 : t == 1 ? KILN_PIXEL_U16 : KILN_PIXEL_F32;
        kiln_image a = make(c1, W, H, type, 4), b = make(c1, W, H, type, 4);
        kt_rng_bytes(&r, a.pixels, (size_t)W * H * 4 * type);
        memcpy(b.pixels, a.pixels, (size_t)W * H * 4 * type);
        if (type == KILN_PIXEL_F32) {
            float *pa = a.pixels, *pb = b.pixels;
            for (size_t i = 0; i < (size_t)W * H * 4; i++) {
                pa[i] = (float)(kt_rng_u32(&r) / 4294967296.0);
                pb[i] = pa[i] + (float)((kt_rng_u32(&r) % 100) * 1e-4);
            }
        } else {
            uint8_t *pb = b.pixels;
            for (size_t i = 0; i < (size_t)W * H * 4 * type; i += 7) pb[i] ^= (uint8_t)(kt_rng_u32(&r) & 7);
        }
        kiln_metrics ref;
        assert_int_equal(kiln_compare(c1, &a, &b, &ref), KILN_OK);
        const uint32_t threads[] = {2, 3, 7, 16};
        for (int k = 0; k < 4; k++) {
            kiln_context *cn = kt_context(threads[k], KILN_BACKEND_CPU);
            kiln_metrics m;
            assert_int_equal(kiln_compare(cn, &a, &b, &m), KILN_OK);
            assert_memory_equal(&m, &ref, sizeof m);
            kiln_context_free(cn);
        }
        kiln_image_free(&a);
        kiln_image_free(&b);
    }
    kiln_context_free(c1);
}

static void bad_arguments(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    kiln_image a = make(ctx, 4, 4, KILN_PIXEL_U8, 4), b = make(ctx, 4, 5, KILN_PIXEL_U8, 4);
    kiln_metrics m;
    assert_int_equal(kiln_compare(ctx, &a, &b, &m), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(kiln_last_error(ctx), "4x4"));
    assert_non_null(strstr(kiln_last_error(ctx), "4x5"));
    assert_int_equal(kiln_compare(ctx, &a, NULL, &m), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_compare(ctx, &a, &a, NULL), KILN_ERR_INVALID_ARGUMENT);
    kiln_image_free(&a);
    kiln_image_free(&b);
    kiln_context_free(ctx);
}

/* real data: a testdata image against a slightly perturbed copy */
static void real_image(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(0, KILN_BACKEND_CPU);
    kiln_image a, b;
    assert_int_equal(kiln_image_load(ctx, kt_testdata("ldr/stk_generic_rock_a_512.png"), &a), KILN_OK);
    assert_int_equal(kiln_image_load(ctx, kt_testdata("ldr/stk_generic_rock_a_512.png"), &b), KILN_OK);
    uint8_t *p = b.pixels;
    double sq = 0;
    for (size_t i = 0; i < (size_t)a.width * a.height; i++)
        for (int c = 0; c < 3; c++) {
            int v = p[i * 4 + (size_t)c], nv = (i + (size_t)c) % 5 == 0 ? (v < 128 ? v + 4 : v - 4) : v;
            sq += (double)(nv - v) * (nv - v);
            p[i * 4 + (size_t)c] = (uint8_t)nv;
        }
    kiln_metrics m;
    assert_int_equal(kiln_compare(ctx, &a, &b, &m), KILN_OK);
    double mse = sq / (3.0 * a.width * a.height);
    assert_double_equal(m.psnr_rgb, psnr_db(255, mse), 1e-9);
    assert_true(m.ssim > 0.9 && m.ssim < 1.0);
    assert_double_equal(m.max_error, 4.0, 0);
    kiln_image_free(&a);
    kiln_image_free(&b);
    kiln_context_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hand_computed_psnr), cmocka_unit_test(constant_offset), cmocka_unit_test(ssim),
        cmocka_unit_test(hdr_errors),         cmocka_unit_test(normals),         cmocka_unit_test(thread_count_independent),
        cmocka_unit_test(bad_arguments),      cmocka_unit_test(real_image),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

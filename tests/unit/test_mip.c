/* test_mip.c - the CPU mipmap reference: hand-worked box/NP2 values, an independent area-overlap
 * reference, energy conservation, sRGB, alpha weighting, alpha coverage, normal maps, quality
 * filters, edge modes, every size class, thread determinism, textures and bad arguments. */
#include "support.h"
#include "mip/mip.h"
#include "image/color.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

static kiln_context *g_ctx;

#define assert_near(a, b, eps)                                                                               \
    do {                                                                                                     \
        double a_ = (a), b_ = (b);                                                                           \
        if (!(fabs(a_ - b_) <= (eps))) {                                                                     \
            fprintf(stderr, "%s:%d: %s = %.10g, expected %.10g (+- %g)\n", __FILE__, __LINE__, #a, a_, b_,   \
                    (double)(eps));                                                                          \
            fail();                                                                                          \
        }                                                                                                    \
    } while (0)

static int setup(void **state)
{
    (void)state;
    g_ctx = kt_context(0, KILN_BACKEND_CPU);
    return g_ctx ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    kiln_context_free(g_ctx);
    return 0;
}

static kiln_image mk(uint32_t w, uint32_t h, kiln_pixel_type t, uint32_t channels, int srgb)
{
    kiln_image img;
    assert_int_equal(kiln_image_alloc(g_ctx, &img, w, h, t), KILN_OK);
    img.channels = channels;
    img.srgb = srgb;
    return img;
}

static float *fpx(const kiln_image *img, uint32_t x, uint32_t y) { return (float *)img->pixels + ((size_t)y * img->width + x) * 4; }
static uint8_t *bpx(const kiln_image *img, uint32_t x, uint32_t y)
{
    return (uint8_t *)img->pixels + ((size_t)y * img->width + x) * 4;
}

typedef struct chain {
    kiln_image lv[KILN_MAX_LEVELS];
    uint32_t n;
} chain;

static kiln_status gen(kiln_context *ctx, const kiln_image *base, const kiln_mip_params *p, chain *c)
{
    c->n = KILN_MAX_LEVELS;
    return kiln_mip_generate(ctx, base, p, c->lv, &c->n);
}

static void chain_free(chain *c)
{
    for (uint32_t i = 0; i < c->n; i++) kiln_image_free(&c->lv[i]);
    c->n = 0;
}

static kiln_mip_params params(kiln_mip_filter f, kiln_mip_color color)
{
    kiln_mip_params p;
    kiln_mip_params_init(&p);
    p.filter = f;
    p.color = color;
    return p;
}

static float frand(kt_rng *r) { return (float)(kt_rng_u32(r) >> 8) / 16777216.0f; }

/* ---------------------------------------------------------------- box taps, hand-worked values */

static void box_taps_formula(void **state)
{
    (void)state;
    uint32_t idx[3];
    float w[3];
    /* D = 5 (n = 2): x = 0 -> (2/5, 2/5, 1/5) on 0..2; x = 1 -> (1/5, 2/5, 2/5) on 2..4 */
    assert_int_equal(kiln__mip_box_taps(5, 0, idx, w), 3);
    assert_int_equal(idx[0], 0);
    assert_int_equal(idx[2], 2);
    assert_true(w[0] == 2.0f / 5.0f && w[1] == 2.0f / 5.0f && w[2] == 1.0f / 5.0f);
    assert_int_equal(kiln__mip_box_taps(5, 1, idx, w), 3);
    assert_int_equal(idx[0], 2);
    assert_int_equal(idx[2], 4);
    assert_true(w[0] == 1.0f / 5.0f && w[1] == 2.0f / 5.0f && w[2] == 2.0f / 5.0f);
    /* D = 3: (1/3, 1/3, 1/3); D = 4: (1/2, 1/2); D = 1: identity */
    assert_int_equal(kiln__mip_box_taps(3, 0, idx, w), 3);
    assert_true(w[0] == 1.0f / 3.0f && w[1] == 1.0f / 3.0f && w[2] == 1.0f / 3.0f);
    assert_int_equal(kiln__mip_box_taps(4, 1, idx, w), 2);
    assert_true(idx[0] == 2 && idx[1] == 3 && w[0] == 0.5f && w[1] == 0.5f);
    assert_int_equal(kiln__mip_box_taps(1, 0, idx, w), 1);
    assert_true(idx[0] == 0 && w[0] == 1.0f);
    /* every source texel of an odd axis gets total weight n / D */
    for (uint32_t D = 3; D < 200; D += 2) {
        uint32_t n = D / 2;
        double *tot = calloc(D, sizeof *tot);
        for (uint32_t x = 0; x < n; x++) {
            uint32_t t = kiln__mip_box_taps(D, x, idx, w);
            double s = 0;
            for (uint32_t k = 0; k < t; k++) {
                assert_true(idx[k] < D);
                tot[idx[k]] += w[k];
                s += w[k];
            }
            assert_true(fabs(s - 1.0) < 1e-6);
        }
        for (uint32_t i = 0; i < D; i++) assert_true(fabs(tot[i] - (double)n / D) < 1e-6);
        free(tot);
    }
}

static void box_2x2_u8_hand(void **state)
{
    (void)state;
    kiln_image b = mk(2, 2, KILN_PIXEL_U8, 4, 0);
    const uint8_t px[4][4] = {{0, 10, 255, 255}, {1, 20, 255, 255}, {2, 30, 0, 255}, {4, 41, 1, 255}};
    memcpy(b.pixels, px, sizeof px);
    kiln_mip_params p = params(KILN_MIP_FILTER_BOX, KILN_MIP_COLOR_LINEAR);
    chain c;
    assert_int_equal(gen(g_ctx, &b, &p, &c), KILN_OK);
    assert_int_equal(c.n, 2);
    assert_memory_equal(c.lv[0].pixels, b.pixels, 16);
    /* (0+1+2+4)/4 = 1.75 -> 2; (10+20+30+41)/4 = 25.25 -> 25; (255+255+0+1)/4 = 127.75 -> 128 */
    const uint8_t *o = c.lv[1].pixels;
    assert_int_equal(o[0], 2);
    assert_int_equal(o[1], 25);
    assert_int_equal(o[2], 128);
    assert_int_equal(o[3], 255);
    chain_free(&c);
    /* sRGB: black and white average to linear 0.5 = sRGB 0.7354 -> 187.5 ... -> 188 (gamma-space: 128) */
    kiln_image s = mk(2, 2, KILN_PIXEL_U8, 4, 1);
    const uint8_t chk[4][4] = {{0, 0, 0, 255}, {255, 255, 255, 255}, {255, 255, 255, 255}, {0, 0, 0, 255}};
    memcpy(s.pixels, chk, sizeof chk);
    kiln_mip_params_init(&p);
    assert_int_equal(gen(g_ctx, &s, &p, &c), KILN_OK);
    o = c.lv[1].pixels;
    assert_int_equal(o[0], 188);
    assert_int_equal(o[1], 188);
    assert_int_equal(o[2], 188);
    assert_int_equal(o[3], 255);
    chain_free(&c);
    p.color = KILN_MIP_COLOR_LINEAR;
    assert_int_equal(gen(g_ctx, &s, &p, &c), KILN_OK);
    assert_int_equal(((uint8_t *)c.lv[1].pixels)[0], 128); /* 127.5 in exact terms: float 0.5f * 255 = 127.5 -> 128 */
    chain_free(&c);
    kiln_image_free(&s);
    kiln_image_free(&b);
}

/* R = x + 10y, G = x^2 + y, B = 3 - x, A = 1 in F32. */
static kiln_image poly_image(uint32_t w, uint32_t h)
{
    kiln_image img = mk(w, h, KILN_PIXEL_F32, 4, 0);
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            float *t = fpx(&img, x, y);
            t[0] = (float)x + 10.0f * (float)y;
            t[1] = (float)(x * x) + (float)y;
            t[2] = 3.0f - (float)x;
            t[3] = 1.0f;
        }
    return img;
}

static void box_np2_hand(void **state)
{
    (void)state;
    kiln_mip_params p = params(KILN_MIP_FILTER_BOX, KILN_MIP_COLOR_LINEAR);
    chain c;
    /* 3x3 -> 1x1 (D = 3 on both axes: weights 1/3 each), i.e. the mean over x, y in 0..2:
     * R = x + 10y -> 1 + 10 = 11; G = x^2 + y -> 5/3 + 1 = 8/3; B = 3 - x -> 2 */
    kiln_image b = poly_image(3, 3);
    assert_int_equal(gen(g_ctx, &b, &p, &c), KILN_OK);
    assert_int_equal(c.n, 2);
    assert_int_equal(c.lv[1].width, 1);
    assert_near(fpx(&c.lv[1], 0, 0)[0], 11.0f, 1e-5);
    assert_near(fpx(&c.lv[1], 0, 0)[1], 8.0f / 3.0f, 1e-5);
    assert_near(fpx(&c.lv[1], 0, 0)[2], 2.0f, 1e-5);
    chain_free(&c);
    kiln_image_free(&b);

    /* 3x1 -> 1x1: R = (0 + 1 + 2)/3 = 1, G = (0 + 1 + 4)/3 = 5/3 */
    b = poly_image(3, 1);
    assert_int_equal(gen(g_ctx, &b, &p, &c), KILN_OK);
    assert_int_equal(c.n, 2);
    assert_true(c.lv[1].width == 1 && c.lv[1].height == 1);
    assert_near(fpx(&c.lv[1], 0, 0)[0], 1.0f, 1e-6);
    assert_near(fpx(&c.lv[1], 0, 0)[1], 5.0f / 3.0f, 1e-6);
    chain_free(&c);
    kiln_image_free(&b);

    /* 5x3 -> 2x1 -> 1x1. x axis D = 5: out 0 = 2/5 s0 + 2/5 s1 + 1/5 s2, out 1 = 1/5 s2 + 2/5 s3 + 2/5 s4;
     * y axis D = 3: 1/3 each.
     *   R = x + 10y: out0 = (0.4*0 + 0.4*1 + 0.2*2) + 10 = 10.8; out1 = (0.2*2 + 0.4*3 + 0.4*4) + 10 = 13.2
     *   G = x^2 + y: out0 = (0 + 0.4 + 0.8) + 1 = 2.2;          out1 = (0.8 + 3.6 + 6.4) + 1 = 11.8
     *   level 2 (2x1 -> 1x1, even): R = 12 (= mean x 2 + mean 10y 10), G = 7 (= mean x^2 6 + 1) */
    b = poly_image(5, 3);
    assert_int_equal(gen(g_ctx, &b, &p, &c), KILN_OK);
    assert_int_equal(c.n, 3);
    assert_true(c.lv[1].width == 2 && c.lv[1].height == 1 && c.lv[2].width == 1 && c.lv[2].height == 1);
    assert_near(fpx(&c.lv[1], 0, 0)[0], 10.8f, 1e-5);
    assert_near(fpx(&c.lv[1], 1, 0)[0], 13.2f, 1e-5);
    assert_near(fpx(&c.lv[1], 0, 0)[1], 2.2f, 1e-5);
    assert_near(fpx(&c.lv[1], 1, 0)[1], 11.8f, 1e-5);
    assert_near(fpx(&c.lv[1], 0, 0)[2], 3.0f - 0.8f, 1e-5);
    assert_near(fpx(&c.lv[2], 0, 0)[0], 12.0f, 1e-5);
    assert_near(fpx(&c.lv[2], 0, 0)[1], 7.0f, 1e-5);
    assert_near(fpx(&c.lv[2], 0, 0)[2], 1.0f, 1e-5);
    chain_free(&c);
    kiln_image_free(&b);
}

/* ---------------------------------------------------------------- independent reference */

/* Overlap length of [a0, a1) and [b0, b1). */
static double overlap(double a0, double a1, double b0, double b1)
{
    double lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
    return hi > lo ? hi - lo : 0.0;
}

/* One box level in double, defined geometrically: output (x, y) covers the source rectangle
 * [x*sw/dw, (x+1)*sw/dw) x [y*sh/dh, (y+1)*sh/dh); every source texel contributes its overlap area.
 * weighted: colour = sum(area a c) / sum(area a) (else plain average). */
static void ref_box_level(const double *src, uint32_t sw, uint32_t sh, double *dst, uint32_t dw, uint32_t dh, int weighted)
{
    double fx = (double)sw / dw, fy = (double)sh / dh;
    for (uint32_t y = 0; y < dh; y++)
        for (uint32_t x = 0; x < dw; x++) {
            double acc[8] = {0};
            for (uint32_t j = 0; j < sh; j++) {
                double oy = overlap(y * fy, (y + 1) * fy, j, j + 1.0);
                if (oy == 0) continue;
                for (uint32_t i = 0; i < sw; i++) {
                    double o = oy * overlap(x * fx, (x + 1) * fx, i, i + 1.0);
                    if (o == 0) continue;
                    const double *s = src + ((size_t)j * sw + i) * 4;
                    for (int c = 0; c < 3; c++) {
                        acc[c] += o * s[3] * s[c];
                        acc[4 + c] += o * s[c];
                    }
                    acc[3] += o * s[3];
                    acc[7] += o;
                }
            }
            double *d = dst + ((size_t)y * dw + x) * 4;
            for (int c = 0; c < 3; c++) d[c] = weighted ? (acc[3] > 0 ? acc[c] / acc[3] : acc[4 + c] / acc[7]) : acc[4 + c] / acc[7];
            d[3] = acc[3] / acc[7];
        }
}

static void box_matches_area_reference(void **state)
{
    (void)state;
    const uint32_t sizes[][2] = {{7, 5}, {5, 9}, {3, 3}, {13, 6}, {1, 7}, {9, 1}, {6, 11}, {2, 3}, {31, 17}};
    kt_rng r;
    kt_rng_seed(&r, 42);
    for (int weighted = 0; weighted < 2; weighted++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            uint32_t w = sizes[si][0], h = sizes[si][1];
            kiln_image b = mk(w, h, KILN_PIXEL_F32, 4, 0);
            double *ref = malloc((size_t)w * h * 4 * sizeof(double));
            for (size_t i = 0; i < (size_t)w * h * 4; i++) {
                float v = frand(&r);
                if (i % 4 == 3) v = weighted ? (i % 12 == 3 ? 0.0f : v) : 1.0f; /* some fully transparent texels */
                ((float *)b.pixels)[i] = v;
                ref[i] = v;
            }
            kiln_mip_params p = params(KILN_MIP_FILTER_BOX, KILN_MIP_COLOR_LINEAR);
            p.alpha = weighted ? KILN_MIP_ALPHA_WEIGHTED : KILN_MIP_ALPHA_SEPARATE;
            chain c;
            assert_int_equal(gen(g_ctx, &b, &p, &c), KILN_OK);
            assert_int_equal(c.n, kiln_mip_level_count(w, h));
            uint32_t sw = w, sh = h;
            for (uint32_t l = 1; l < c.n; l++) {
                uint32_t dw = kiln_level_dim(w, l), dh = kiln_level_dim(h, l);
                double *nref = malloc((size_t)dw * dh * 4 * sizeof(double));
                ref_box_level(ref, sw, sh, nref, dw, dh, weighted);
                for (size_t i = 0; i < (size_t)dw * dh * 4; i++) {
                    double got = ((float *)c.lv[l].pixels)[i];
                    if (fabs(got - nref[i]) > 2e-6) {
                        fprintf(stderr, "size %ux%u level %u value %zu: %.9f vs reference %.9f\n", w, h, l, i, got, nref[i]);
                        fail();
                    }
                }
                free(ref);
                ref = nref;
                sw = dw;
                sh = dh;
            }
            free(ref);
            chain_free(&c);
            kiln_image_free(&b);
        }
}

/* ---------------------------------------------------------------- energy conservation */

static void mean4(const kiln_image *img, double m[4])
{
    size_t n = (size_t)img->width * img->height;
    for (int c = 0; c < 4; c++) m[c] = 0;
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 4; c++) m[c] += ((const float *)img->pixels)[i * 4 + c];
    for (int c = 0; c < 4; c++) m[c] /= (double)n;
}

static void box_energy_f32(void **state)
{
    (void)state;
    const uint32_t sizes[][2] = {{7, 5}, {13, 8}, {31, 57}, {64, 33}, {1, 9}, {17, 1}, {2, 3}, {255, 129}, {128, 64}};
    kt_rng r;
    kt_rng_seed(&r, 7);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        uint32_t w = sizes[si][0], h = sizes[si][1];
        kiln_image b = mk(w, h, KILN_PIXEL_F32, 4, 0);
        for (size_t i = 0; i < (size_t)w * h * 4; i++) ((float *)b.pixels)[i] = i % 4 == 3 ? 1.0f : frand(&r);
        kiln_mip_params p = params(KILN_MIP_FILTER_BOX, KILN_MIP_COLOR_LINEAR);
        chain c;
        assert_int_equal(gen(g_ctx, &b, &p, &c), KILN_OK);
        double m0[4], m[4];
        mean4(&b, m0);
        for (uint32_t l = 1; l < c.n; l++) {
            mean4(&c.lv[l], m);
            for (int ch = 0; ch < 4; ch++)
                if (fabs(m[ch] - m0[ch]) > 2e-6) {
                    fprintf(stderr, "%ux%u level %u channel %d: mean %.9f vs base %.9f\n", w, h, l, ch, m[ch], m0[ch]);
                    fail();
                }
        }
        chain_free(&c);
        kiln_image_free(&b);
    }
}

/* U8 sRGB with a constant alpha < 1 (alpha-weighted path), as an RGBA32F texture: the stored levels are
 * the linear fp32 chain, whose mean must equal the base's mean in linear light. */
static void box_energy_srgb_linear_light(void **state)
{
    (void)state;
    const uint32_t sizes[][2] = {{37, 23}, {64, 64}, {5, 3}, {100, 7}};
    kt_rng r;
    kt_rng_seed(&r, 99);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        uint32_t w = sizes[si][0], h = sizes[si][1];
        kiln_image b = mk(w, h, KILN_PIXEL_U8, 4, 1);
        uint8_t *px = b.pixels;
        double m0[4] = {0};
        for (size_t i = 0; i < (size_t)w * h; i++) {
            kt_rng_bytes(&r, px + i * 4, 3);
            px[i * 4 + 3] = 200;
            for (int c = 0; c < 3; c++) m0[c] += kiln__srgb8_to_linear_table[px[i * 4 + c]];
        }
        for (int c = 0; c < 3; c++) m0[c] /= (double)w * h;
        kiln_mip_params p;
        kiln_mip_params_init(&p);
        kiln_texture t;
        assert_int_equal(kiln_mip_texture(g_ctx, &b, &p, KILN_FORMAT_RGBA32F, &t), KILN_OK);
        assert_int_equal(t.levels, kiln_mip_level_count(w, h));
        for (uint32_t l = 0; l < t.levels; l++) {
            size_t sz;
            const float *d = (const float *)kiln_texture_image(&t, l, 0, 0, &sz);
            assert_non_null(d);
            size_t n = sz / 16;
            double m[3] = {0};
            for (size_t i = 0; i < n; i++) {
                for (int c = 0; c < 3; c++) m[c] += d[i * 4 + c];
                assert_near(d[i * 4 + 3], 200.0f / 255.0f, 1e-6);
            }
            for (int c = 0; c < 3; c++) assert_true(fabs(m[c] / (double)n - m0[c]) < 2e-6);
        }
        kiln_texture_free(&t);
        kiln_image_free(&b);
    }
}

/* ---------------------------------------------------------------- sRGB */

static void srgb_constant_stays_exact(void **state)
{
    (void)state;
    const kiln_mip_filter filters[] = {KILN_MIP_FILTER_BOX, KILN_MIP_FILTER_KAISER, KILN_MIP_FILTER_MITCHELL};
    for (size_t f = 0; f < 3; f++)
        for (int v = 0; v < 256; v++) {
            kiln_image b = mk(5, 3, KILN_PIXEL_U8, 4, 1);
            for (size_t i = 0; i < 15; i++) {
                uint8_t *t = (uint8_t *)b.pixels + i * 4;
                t[0] = (uint8_t)v;
                t[1] = (uint8_t)(255 - v);
                t[2] = (uint8_t)(v * 7);
                t[3] = (uint8_t)(v | 1);
            }
            kiln_mip_params p = params(filters[f], KILN_MIP_COLOR_AUTO);
            p.edge = v & 1 ? KILN_MIP_EDGE_WRAP : KILN_MIP_EDGE_CLAMP;
            chain c;
            assert_int_equal(gen(g_ctx, &b, &p, &c), KILN_OK);
            for (uint32_t l = 0; l < c.n; l++)
                for (size_t i = 0; i < (size_t)c.lv[l].width * c.lv[l].height; i++)
                    assert_memory_equal((uint8_t *)c.lv[l].pixels + i * 4, b.pixels, 4);
            chain_free(&c);
            kiln_image_free(&b);
        }
}

/* 16-bit: constants stay exact at every level, sRGB (explicit; AUTO is linear for U16) and linear */
static void u16_constant_stays_exact(void **state)
{
    (void)state;
    const uint16_t vals[] = {0, 1, 2, 257, 1000, 4095, 12345, 32767, 32768, 50000, 65534, 65535};
    for (int color = KILN_MIP_COLOR_SRGB; color <= KILN_MIP_COLOR_LINEAR; color++)
        for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
            kiln_image b = mk(7, 5, KILN_PIXEL_U16, 4, 0);
            for (size_t t = 0; t < 35; t++) {
                uint16_t *p = (uint16_t *)b.pixels + t * 4;
                p[0] = vals[i];
                p[1] = (uint16_t)(65535 - vals[i]);
                p[2] = vals[(i + 3) % 12];
                p[3] = 65535;
            }
            kiln_mip_params p = params(KILN_MIP_FILTER_BOX, (kiln_mip_color)color);
            chain c;
            assert_int_equal(gen(g_ctx, &b, &p, &c), KILN_OK);
            for (uint32_t l = 0; l < c.n; l++) {
                assert_int_equal(c.lv[l].type, KILN_PIXEL_U16);
                for (size_t t = 0; t < (size_t)c.lv[l].width * c.lv[l].height; t++)
                    assert_memory_equal((uint16_t *)c.lv[l].pixels + t * 4, b.pixels, 8);
            }
            chain_free(&c);
            kiln_image_free(&b);
        }
}

/* The bucketed encoder in mip.h must equal color.h's binary search for every float: checked on a
 * dense sweep of [0, 1.25] plus +-3 ulps around every decision point. */
static void fast_quantisers_are_exact(void **state)
{
    (void)state;
    kiln__mip_srgb8 *t = malloc(sizeof *t);
    kiln__mip_srgb8_init(t);
    assert_true(t->count <= sizeof t->start);
    assert_int_equal(t->max_steps, 1); /* the branch-free single step is enough */
    float one25 = 1.25f;
    uint32_t hi;
    memcpy(&hi, &one25, sizeof hi);
    for (uint32_t b = 0; b <= hi; b += 211) {
        float x;
        memcpy(&x, &b, sizeof x);
        assert_int_equal(kiln__mip_srgb8_encode(t, x), kiln__linear_to_srgb8(x));
    }
    for (int k = 0; k < 255; k++) {
        float x = kiln__srgb8_thresholds[k];
        for (int i = 0; i < 3; i++) x = nextafterf(x, 0.0f);
        for (int i = 0; i < 7; i++, x = nextafterf(x, 2.0f))
            assert_int_equal(kiln__mip_srgb8_encode(t, x), kiln__linear_to_srgb8(x));
    }
    const float specials[] = {-1.0f, -0.0f, 0.0f, 1.0f, 2.0f, INFINITY, -INFINITY, NAN};
    for (int i = 0; i < 8; i++) {
        assert_int_equal(kiln__mip_srgb8_encode(t, specials[i]), kiln__linear_to_srgb8(specials[i]));
        assert_int_equal(kiln__mip_unorm8(specials[i]), kiln__float_to_unorm8(specials[i]));
    }
    /* the inlined unorm8 equals color.h's, also around every rounding point (k + 0.5) / 255 */
    for (uint32_t b = 0; b <= hi; b += 211) {
        float x;
        memcpy(&x, &b, sizeof x);
        assert_int_equal(kiln__mip_unorm8(x), kiln__float_to_unorm8(x));
    }
    for (int k = 0; k < 255; k++) {
        float x = (float)((k + 0.5) / 255.0);
        for (int i = 0; i < 3; i++) x = nextafterf(x, 0.0f);
        for (int i = 0; i < 7; i++, x = nextafterf(x, 2.0f)) assert_int_equal(kiln__mip_unorm8(x), kiln__float_to_unorm8(x));
    }
    free(t);
}

/* ---------------------------------------------------------------- alpha */

static void alpha_weighted_no_bleed(void **state)
{
    (void)state;
    /* transparent red next to opaque green */
    kiln_image b = mk(2, 1, KILN_PIXEL_U8, 4, 1);
    const uint8_t px[2][4] = {{255, 0, 0, 0}, {0, 255, 0, 255}};
    memcpy(b.pixels, px, sizeof px);
    kiln_mip_params p;
    kiln_mip_params_init(&p);
    chain c;
    assert_int_equal(gen(g_ctx, &b, &p, &c), KILN_OK);
    const uint8_t *o = c.lv[1].pixels;
    assert_int_equal(o[0], 0);
    assert_int_equal(o[1], 255);
    assert_int_equal(o[2], 0);
    assert_int_equal(o[3], 128); /* 0.5 * 255 = 127.5, round half up */
    chain_free(&c);
    /* the same with unrelated alpha: colour bleeds (sRGB average of red and green: 188, 188, 0) */
    p.alpha = KILN_MIP_ALPHA_SEPARATE;
    assert_int_equal(gen(g_ctx, &b, &p, &c), KILN_OK);
    o = c.lv[1].pixels;
    assert_int_equal(o[0], 188);
    assert_int_equal(o[1], 188);
    assert_int_equal(o[2], 0);
    assert_int_equal(o[3], 128);
    chain_free(&c);
    /* fully transparent footprint keeps its plain average colour */
    const uint8_t px2[2][4] = {{255, 0, 0, 0}, {0, 0, 255, 0}};
    memcpy(b.pixels, px2, sizeof px2);
    p.alpha = KILN_MIP_ALPHA_WEIGHTED;
    assert_int_equal(gen(g_ctx, &b, &p, &c), KILN_OK);
    o = c.lv[1].pixels;
    assert_int_equal(o[0], 188);
    assert_int_equal(o[1], 0);
    assert_int_equal(o[2], 188);
    assert_int_equal(o[3], 0);
    chain_free(&c);
    /* a 3x1 NP2 row (1/3 each): red a = 0, green a = 1, blue a = 0.4 (102):
     * A = 1.4/3 -> 119; colour = (0, 1/1.4, 0.4/1.4) = (0, 182.14, 72.86) -> (0, 182, 73) */
    kiln_image b3 = mk(3, 1, KILN_PIXEL_U8, 4, 0);
    const uint8_t px3[3][4] = {{255, 0, 0, 0}, {0, 255, 0, 255}, {0, 0, 255, 102}};
    memcpy(b3.pixels, px3, sizeof px3);
    p.color = KILN_MIP_COLOR_LINEAR;
    assert_int_equal(gen(g_ctx, &b3, &p, &c), KILN_OK);
    o = c.lv[1].pixels;
    assert_int_equal(o[0], 0);
    assert_int_equal(o[1], 182);
    assert_int_equal(o[2], 73);
    assert_int_equal(o[3], 119);
    chain_free(&c);
    kiln_image_free(&b3);
    kiln_image_free(&b);
}

static double coverage_u8(const kiln_image *img, float ref)
{
    size_t n = (size_t)img->width * img->height, k = 0;
    for (size_t i = 0; i < n; i++) k += ((uint8_t *)img->pixels)[i * 4 + 3] / 255.0 > ref;
    return (double)k / n;
}

static double coverage_f32(const kiln_image *img, float ref)
{
    size_t n = (size_t)img->width * img->height, k = 0;
    for (size_t i = 0; i < n; i++) k += ((float *)img->pixels)[i * 4 + 3] > ref;
    return (double)k / n;
}

static void alpha_coverage_preserved(void **state)
{
    (void)state;
    /* F32, continuous alpha (no ties): every level within 1 / levelpixels of the base coverage */
    const uint32_t sizes[][2] = {{64, 64}, {45, 31}, {100, 3}};
    const float refs[] = {0.5f, 0.2f, 0.85f};
    kt_rng r;
    kt_rng_seed(&r, 5);
    for (size_t si = 0; si < 3; si++)
        for (size_t ri = 0; ri < 3; ri++) {
            uint32_t w = sizes[si][0], h = sizes[si][1];
            kiln_image b = mk(w, h, KILN_PIXEL_F32, 4, 0);
            for (uint32_t y = 0; y < h; y++)
                for (uint32_t x = 0; x < w; x++) {
                    float *t = fpx(&b, x, y);
                    t[0] = t[1] = t[2] = 0.5f;
                    float blob = 0.5f + 0.5f * sinf((float)x * 0.4f) * cosf((float)y * 0.3f);
                    t[3] = 0.8f * blob * blob + 0.2f * frand(&r);
                }
            kiln_mip_params p = params(KILN_MIP_FILTER_BOX, KILN_MIP_COLOR_LINEAR);
            p.alpha_coverage_ref = refs[ri];
            chain c;
            assert_int_equal(gen(g_ctx, &b, &p, &c), KILN_OK);
            double c0 = coverage_f32(&b, refs[ri]);
            for (uint32_t l = 1; l < c.n; l++) {
                double n = (double)c.lv[l].width * c.lv[l].height;
                double cl = coverage_f32(&c.lv[l], refs[ri]);
                if (fabs(cl - c0) > 1.0 / n + 1e-12) {
                    fprintf(stderr, "%ux%u ref %.2f level %u: coverage %.5f vs base %.5f\n", w, h, refs[ri], l, cl, c0);
                    fail();
                }
            }
            chain_free(&c);
            kiln_image_free(&b);
        }

    /* U8 foliage: thin opaque lines on transparent; plain filtering loses the lines at ref 0.5 */
    kiln_image f = mk(64, 64, KILN_PIXEL_U8, 4, 1);
    for (uint32_t y = 0; y < 64; y++)
        for (uint32_t x = 0; x < 64; x++) {
            uint8_t *t = bpx(&f, x, y);
            t[0] = 40;
            t[1] = 160;
            t[2] = 30;
            t[3] = (x * 7 + y * 3) % 11 < 3 ? 255 : (uint8_t)((x * 5 + y) % 40);
        }
    double c0 = coverage_u8(&f, 0.5f);
    kiln_mip_params p;
    kiln_mip_params_init(&p);
    chain plain, kept;
    assert_int_equal(gen(g_ctx, &f, &p, &plain), KILN_OK);
    p.alpha_coverage_ref = 0.5f;
    assert_int_equal(gen(g_ctx, &f, &p, &kept), KILN_OK);
    double worst_plain = 0, worst_kept = 0;
    for (uint32_t l = 1; l < 6; l++) { /* 32x32 .. 2x2 */
        double dp = fabs(coverage_u8(&plain.lv[l], 0.5f) - c0), dk = fabs(coverage_u8(&kept.lv[l], 0.5f) - c0);
        double n = (double)kept.lv[l].width * kept.lv[l].height;
        /* this periodic pattern has many texels of equal alpha (ties move together), so allow 0.5% */
        assert_true(dk <= (1.0 / n > 0.005 ? 1.0 / n : 0.005) + 1e-12);
        if (dp > worst_plain) worst_plain = dp;
        if (l <= 3 && dk > worst_kept) worst_kept = dk; /* 32x32 .. 8x8 */
        /* colour is untouched by the coverage pass */
        assert_memory_equal(plain.lv[l].pixels, kept.lv[l].pixels, 3);
    }
    assert_true(worst_plain > 0.2); /* the problem is real ... */
    assert_true(worst_kept < 0.02); /* ... and solved */
    chain_free(&plain);
    chain_free(&kept);
    kiln_image_free(&f);
}

/* ---------------------------------------------------------------- normal maps */

static void normal_maps_renormalised(void **state)
{
    (void)state;
    kt_rng r;
    kt_rng_seed(&r, 11);
    kiln_image bf = mk(37, 29, KILN_PIXEL_F32, 3, 0);
    kiln_image bu = mk(37, 29, KILN_PIXEL_U8, 3, 0);
    for (size_t i = 0; i < 37 * 29; i++) {
        float v[3];
        double len;
        do {
            for (int c = 0; c < 3; c++) v[c] = 2.0f * frand(&r) - 1.0f;
            v[2] = fabsf(v[2]) + 0.2f;
            len = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        } while (len < 0.1);
        float *t = (float *)bf.pixels + i * 4;
        uint8_t *u = (uint8_t *)bu.pixels + i * 4;
        for (int c = 0; c < 3; c++) {
            t[c] = (float)(v[c] / len);
            u[c] = kiln__float_to_unorm8(0.5f * t[c] + 0.5f);
        }
        t[3] = 1.0f;
        u[3] = 255;
    }
    kiln_mip_params p;
    kiln_mip_params_init(&p);
    p.normal_map = 1;
    p.filter = KILN_MIP_FILTER_KAISER;
    chain cf, cu;
    assert_int_equal(gen(g_ctx, &bf, &p, &cf), KILN_OK);
    assert_int_equal(gen(g_ctx, &bu, &p, &cu), KILN_OK);
    for (uint32_t l = 1; l < cf.n; l++) {
        size_t n = (size_t)cf.lv[l].width * cf.lv[l].height;
        for (size_t i = 0; i < n; i++) {
            const float *t = (const float *)cf.lv[l].pixels + i * 4;
            assert_near(sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]), 1.0, 1e-5);
            const uint8_t *u = (const uint8_t *)cu.lv[l].pixels + i * 4;
            double x = u[0] / 127.5 - 1, y = u[1] / 127.5 - 1, z = u[2] / 127.5 - 1;
            assert_near(sqrt(x * x + y * y + z * z), 1.0, 0.01);
        }
    }
    chain_free(&cf);
    chain_free(&cu);
    kiln_image_free(&bf);
    kiln_image_free(&bu);

    /* direction: (1,0,0) and (0,1,0) -> (sqrt 1/2, sqrt 1/2, 0) */
    kiln_image d = mk(2, 1, KILN_PIXEL_F32, 3, 0);
    float *t = d.pixels;
    t[0] = 1, t[1] = 0, t[2] = 0, t[3] = 1, t[4] = 0, t[5] = 1, t[6] = 0, t[7] = 1;
    p.filter = KILN_MIP_FILTER_BOX;
    assert_int_equal(gen(g_ctx, &d, &p, &cf), KILN_OK);
    t = cf.lv[1].pixels;
    assert_near(t[0], sqrt(0.5), 1e-6);
    assert_near(t[1], sqrt(0.5), 1e-6);
    assert_near(t[2], 0.0, 1e-6);
    chain_free(&cf);
    /* two-channel normals get z = sqrt(1 - x^2 - y^2): (0.6, 0) and (-0.6, 0) -> z 0.8 each -> (0, 0, 1) */
    d.channels = 2;
    t = d.pixels;
    t[0] = 0.6f, t[1] = 0, t[2] = 0, t[4] = -0.6f, t[5] = 0, t[6] = 0;
    assert_int_equal(gen(g_ctx, &d, &p, &cf), KILN_OK);
    t = cf.lv[1].pixels;
    assert_near(t[0], 0.0, 1e-6);
    assert_near(t[2], 1.0, 1e-6);
    chain_free(&cf);
    kiln_image_free(&d);
}

/* ---------------------------------------------------------------- quality filters */

/* I0 by numerical integration (1/pi) int_0^pi exp(x cos t) dt: independent of the series in filters.c */
static double i0_integral(double x)
{
    const int n = 20000;
    double s = 0;
    for (int i = 0; i < n; i++) s += exp(x * cos(M_PI * (i + 0.5) / n));
    return s / n;
}

static void quality_kernels(void **state)
{
    (void)state;
    assert_near(kiln__mip_kernel(KILN_MIP_FILTER_KAISER, 0.0), 1.0, 1e-12);
    double x = 0.5, k = sin(M_PI * x) / (M_PI * x) * i0_integral(4.0 * sqrt(1 - x * x / 9)) / i0_integral(4.0);
    assert_near(kiln__mip_kernel(KILN_MIP_FILTER_KAISER, 0.5), k, 1e-9);
    x = 2.25;
    k = sin(M_PI * x) / (M_PI * x) * i0_integral(4.0 * sqrt(1 - x * x / 9)) / i0_integral(4.0);
    assert_near(kiln__mip_kernel(KILN_MIP_FILTER_KAISER, -2.25), k, 1e-9);
    assert_near(kiln__mip_kernel(KILN_MIP_FILTER_KAISER, 3.0), 0.0, 1e-12);
    assert_near(kiln__mip_kernel(KILN_MIP_FILTER_LANCZOS3, 0.0), 1.0, 1e-12);
    assert_near(kiln__mip_kernel(KILN_MIP_FILTER_LANCZOS3, 1.0), 0.0, 1e-12);
    assert_near(kiln__mip_kernel(KILN_MIP_FILTER_LANCZOS3, 1.5), -1.0 / (0.75 * M_PI * M_PI), 1e-12);
    assert_near(kiln__mip_kernel(KILN_MIP_FILTER_MITCHELL, 0.0), 8.0 / 9.0, 1e-12);
    assert_near(kiln__mip_kernel(KILN_MIP_FILTER_MITCHELL, 1.0), 1.0 / 18.0, 1e-12);
    assert_near(kiln__mip_kernel(KILN_MIP_FILTER_MITCHELL, -2.0), 0.0, 1e-12);
    /* Mitchell integrates to 1 */
    double s = 0;
    for (int i = 0; i < 4000; i++) s += kiln__mip_kernel(KILN_MIP_FILTER_MITCHELL, -2.0 + (i + 0.5) / 1000.0) / 1000.0;
    assert_near(s, 1.0, 1e-6);

    /* tap tables: 2:1 Kaiser/Lanczos-3 -> 12 taps, Mitchell -> 8, weights sum to 1, symmetric */
    const kiln_mip_filter fl[] = {KILN_MIP_FILTER_KAISER, KILN_MIP_FILTER_LANCZOS3, KILN_MIP_FILTER_MITCHELL};
    const uint32_t taps[] = {12, 12, 8};
    for (int f = 0; f < 3; f++) {
        kiln__mip_axis a;
        assert_int_equal(kiln__mip_axis_build(g_ctx, &a, 64, fl[f], KILN_MIP_EDGE_WRAP, 0.0f), KILN_OK);
        assert_int_equal(a.dst, 32);
        assert_int_equal(a.max_taps, taps[f]);
        for (uint32_t o = 0; o < 32; o++) {
            uint32_t k0 = a.first[o], k1 = a.first[o + 1];
            assert_int_equal(k1 - k0, taps[f]);
            double sum = 0;
            for (uint32_t k = k0; k < k1; k++) sum += a.weight[k];
            assert_near(sum, 1.0, 1e-6);
            for (uint32_t k = 0; k < k1 - k0; k++) assert_true(a.weight[k0 + k] == a.weight[k1 - 1 - k]);
            assert_int_equal(a.index[k0], (2 * o + 64 - taps[f] / 2 + 1) % 64);
        }
        kiln__mip_axis_free(&a);
        /* 3 -> 1 (scale 3) and 1 -> 1 */
        assert_int_equal(kiln__mip_axis_build(g_ctx, &a, 3, fl[f], KILN_MIP_EDGE_CLAMP, 0.0f), KILN_OK);
        double sum = 0;
        for (uint32_t k = a.first[0]; k < a.first[1]; k++) {
            assert_true(a.index[k] < 3);
            sum += a.weight[k];
        }
        assert_near(sum, 1.0, 1e-6);
        kiln__mip_axis_free(&a);
        assert_int_equal(kiln__mip_axis_build(g_ctx, &a, 1, fl[f], KILN_MIP_EDGE_CLAMP, 0.0f), KILN_OK);
        assert_true(a.dst == 1 && a.first[1] == 1 && a.index[0] == 0 && a.weight[0] == 1.0f);
        kiln__mip_axis_free(&a);
    }
}

static void quality_filters_properties(void **state)
{
    (void)state;
    const kiln_mip_filter fl[] = {KILN_MIP_FILTER_BOX, KILN_MIP_FILTER_KAISER, KILN_MIP_FILTER_LANCZOS3,
                                  KILN_MIP_FILTER_MITCHELL};
    kt_rng r;
    kt_rng_seed(&r, 3);
    for (int f = 0; f < 4; f++) {
        /* constants stay constant (clamp and wrap, odd sizes) */
        for (int e = 0; e < 2; e++) {
            kiln_image b = mk(23, 9, KILN_PIXEL_F32, 4, 0);
            for (size_t i = 0; i < 23 * 9 * 4; i++) ((float *)b.pixels)[i] = (float)(i % 4) * 0.25f + 0.1f;
            kiln_mip_params p = params(fl[f], KILN_MIP_COLOR_LINEAR);
            p.edge = (kiln_mip_edge)e;
            chain c;
            assert_int_equal(gen(g_ctx, &b, &p, &c), KILN_OK);
            for (uint32_t l = 1; l < c.n; l++)
                for (size_t i = 0; i < (size_t)c.lv[l].width * c.lv[l].height * 4; i++)
                    assert_near(((float *)c.lv[l].pixels)[i], (float)(i % 4) * 0.25f + 0.1f, 2e-6);
            chain_free(&c);
            kiln_image_free(&b);
        }
        /* power-of-two + wrap: every source texel gets the same total weight, so means are preserved */
        kiln_image b = mk(32, 16, KILN_PIXEL_F32, 4, 0);
        for (size_t i = 0; i < 32 * 16 * 4; i++) ((float *)b.pixels)[i] = i % 4 == 3 ? 1.0f : frand(&r);
        kiln_mip_params p = params(fl[f], KILN_MIP_COLOR_LINEAR);
        p.edge = KILN_MIP_EDGE_WRAP;
        chain c;
        assert_int_equal(gen(g_ctx, &b, &p, &c), KILN_OK);
        double m0[4], m[4];
        mean4(&b, m0);
        for (uint32_t l = 1; l < c.n; l++) {
            mean4(&c.lv[l], m);
            for (int ch = 0; ch < 4; ch++) assert_true(fabs(m[ch] - m0[ch]) < 1e-5);
        }
        chain_free(&c);
        kiln_image_free(&b);
        /* mirror symmetry (clamp): filtering a mirrored image gives the mirrored result */
        const uint32_t sz[][2] = {{12, 10}, {11, 9}};
        for (int s = 0; s < 2; s++) {
            uint32_t w = sz[s][0], h = sz[s][1];
            kiln_image a = mk(w, h, KILN_PIXEL_F32, 4, 0), m2 = mk(w, h, KILN_PIXEL_F32, 4, 0);
            for (uint32_t y = 0; y < h; y++)
                for (uint32_t x = 0; x < w; x++)
                    for (int ch = 0; ch < 4; ch++) fpx(&a, x, y)[ch] = fpx(&m2, w - 1 - x, y)[ch] = frand(&r);
            chain ca, cm;
            p.edge = KILN_MIP_EDGE_CLAMP;
            p.alpha = KILN_MIP_ALPHA_SEPARATE;
            assert_int_equal(gen(g_ctx, &a, &p, &ca), KILN_OK);
            assert_int_equal(gen(g_ctx, &m2, &p, &cm), KILN_OK);
            const kiln_image *la = &ca.lv[1], *lm = &cm.lv[1];
            for (uint32_t y = 0; y < la->height; y++)
                for (uint32_t x = 0; x < la->width; x++)
                    for (int ch = 0; ch < 4; ch++)
                        assert_near(fpx(la, x, y)[ch], fpx(lm, la->width - 1 - x, y)[ch], 1e-6);
            chain_free(&ca);
            chain_free(&cm);
            kiln_image_free(&a);
            kiln_image_free(&m2);
        }
    }
}

/* interior = outputs whose taps (before edge mapping) stay inside [0, D) */
static int interior(uint32_t D, uint32_t x, kiln_mip_filter f)
{
    uint32_t n = D / 2;
    double s = (double)D / n, c = (x + 0.5) * s, h = kiln__mip_kernel_support(f) * s;
    return floor(c - h) >= 0 && ceil(c + h) <= D;
}

static void wrap_and_clamp_differ_only_at_edges(void **state)
{
    (void)state;
    const uint32_t sz[][2] = {{32, 32}, {33, 20}};
    const kiln_mip_filter fl[] = {KILN_MIP_FILTER_KAISER, KILN_MIP_FILTER_LANCZOS3, KILN_MIP_FILTER_MITCHELL};
    kt_rng r;
    kt_rng_seed(&r, 17);
    for (int s = 0; s < 2; s++)
        for (int f = 0; f < 3; f++) {
            uint32_t w = sz[s][0], h = sz[s][1];
            kiln_image b = mk(w, h, KILN_PIXEL_F32, 4, 0);
            for (size_t i = 0; i < (size_t)w * h * 4; i++) ((float *)b.pixels)[i] = frand(&r);
            kiln_mip_params p = params(fl[f], KILN_MIP_COLOR_LINEAR);
            p.alpha = KILN_MIP_ALPHA_SEPARATE;
            chain cc, cw;
            assert_int_equal(gen(g_ctx, &b, &p, &cc), KILN_OK);
            p.edge = KILN_MIP_EDGE_WRAP;
            assert_int_equal(gen(g_ctx, &b, &p, &cw), KILN_OK);
            const kiln_image *a = &cc.lv[1], *bw = &cw.lv[1];
            int inner = 0, edge_diff = 0;
            for (uint32_t y = 0; y < a->height; y++)
                for (uint32_t x = 0; x < a->width; x++) {
                    int same = !memcmp(fpx(a, x, y), fpx(bw, x, y), 16);
                    if (interior(w, x, fl[f]) && interior(h, y, fl[f])) {
                        assert_true(same);
                        inner++;
                    } else if (!same) {
                        edge_diff++;
                    }
                }
            assert_true(inner > 0);
            assert_true(edge_diff > 0);
            /* box never reads outside: wrap == clamp bit for bit */
            chain bc, bw2;
            p.filter = KILN_MIP_FILTER_BOX;
            assert_int_equal(gen(g_ctx, &b, &p, &bw2), KILN_OK);
            p.edge = KILN_MIP_EDGE_CLAMP;
            assert_int_equal(gen(g_ctx, &b, &p, &bc), KILN_OK);
            for (uint32_t l = 0; l < bc.n; l++)
                assert_memory_equal(bc.lv[l].pixels, bw2.lv[l].pixels, (size_t)bc.lv[l].width * bc.lv[l].height * 16);
            chain_free(&bc);
            chain_free(&bw2);
            chain_free(&cc);
            chain_free(&cw);
            kiln_image_free(&b);
        }
}

/* ---------------------------------------------------------------- sizes */

static void every_size_class(void **state)
{
    (void)state;
    const uint32_t sizes[][2] = {{1, 1}, {1, 37}, {37, 1}, {3, 5}, {2047, 2047}, {4095, 4095}, {16384, 4}, {4, 16384}, {1920, 1080}};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        uint32_t w = sizes[si][0], h = sizes[si][1];
        kiln_image b = mk(w, h, KILN_PIXEL_U8, 4, 0);
        uint8_t *px = b.pixels;
        double mean = 0;
        for (uint32_t y = 0; y < h; y++)
            for (uint32_t x = 0; x < w; x++) {
                uint8_t *t = px + ((size_t)y * w + x) * 4;
                t[0] = (uint8_t)(x * 13 + y * 7);
                t[1] = (uint8_t)((x ^ y) * 3);
                t[2] = (uint8_t)(x * y);
                t[3] = 255;
                mean += t[0];
            }
        mean /= (double)w * h * 255.0;
        kiln_mip_params p = params(KILN_MIP_FILTER_BOX, KILN_MIP_COLOR_LINEAR);
        chain c;
        assert_int_equal(gen(g_ctx, &b, &p, &c), KILN_OK);
        uint32_t expect = 1, m = w > h ? w : h;
        while (m > 1) m >>= 1, expect++;
        assert_int_equal(c.n, expect);
        assert_int_equal(kiln_mip_level_count(w, h), expect);
        for (uint32_t l = 0; l < c.n; l++) {
            assert_int_equal(c.lv[l].width, w >> l ? w >> l : 1);
            assert_int_equal(c.lv[l].height, h >> l ? h >> l : 1);
            assert_int_equal(c.lv[l].type, KILN_PIXEL_U8);
        }
        assert_true(c.lv[c.n - 1].width == 1 && c.lv[c.n - 1].height == 1);
        /* energy: the 1x1 level is the base mean, rounded once */
        double last = ((uint8_t *)c.lv[c.n - 1].pixels)[0];
        assert_true(fabs(last - mean * 255.0) <= 0.5 + 1e-3);
        chain_free(&c);
        kiln_image_free(&b);
    }
}

/* ---------------------------------------------------------------- determinism */

static uint64_t chain_hash(const chain *c)
{
    uint64_t h = 0;
    for (uint32_t l = 0; l < c->n; l++)
        h = h * 31 + kt_hash(c->lv[l].pixels, (size_t)c->lv[l].width * c->lv[l].height * 4 * c->lv[l].type);
    return h;
}

static void thread_count_determinism(void **state)
{
    (void)state;
    kt_rng r;
    kt_rng_seed(&r, 2024);
    kiln_image b = mk(137, 61, KILN_PIXEL_U8, 4, 1);
    kt_rng_bytes(&r, b.pixels, 137 * 61 * 4);
    const uint32_t threads[] = {1, 2, 3, 5};
    /* box, linear: pure fp32 adds and multiplies -> a golden hash, valid on any IEEE-754 platform */
    uint64_t golden = 0, quality = 0;
    for (int t = 0; t < 4; t++) {
        kiln_context *ctx = kt_context(threads[t], KILN_BACKEND_CPU);
        assert_non_null(ctx);
        kiln_mip_params p = params(KILN_MIP_FILTER_BOX, KILN_MIP_COLOR_LINEAR);
        chain c;
        assert_int_equal(gen(ctx, &b, &p, &c), KILN_OK);
        uint64_t h = chain_hash(&c);
        chain_free(&c);
        if (t == 0) golden = h;
        assert_true(h == golden);
        /* Kaiser, sRGB, alpha-weighted, coverage: same bytes for every thread count */
        p = params(KILN_MIP_FILTER_KAISER, KILN_MIP_COLOR_AUTO);
        p.alpha_coverage_ref = 0.3f;
        p.edge = KILN_MIP_EDGE_WRAP;
        assert_int_equal(gen(ctx, &b, &p, &c), KILN_OK);
        h = chain_hash(&c);
        chain_free(&c);
        if (t == 0) quality = h;
        assert_true(h == quality);
        kiln_context_free(ctx);
    }
    if (golden != 0x9f6b95da371afc83ull) fprintf(stderr, "box chain hash 0x%016llx\n", (unsigned long long)golden);
    assert_true(golden == 0x9f6b95da371afc83ull);
    kiln_image_free(&b);
}

/* ---------------------------------------------------------------- textures */

static void textures(void **state)
{
    (void)state;
    kt_rng r;
    kt_rng_seed(&r, 77);
    kiln_image b = mk(19, 12, KILN_PIXEL_U8, 4, 1);
    kt_rng_bytes(&r, b.pixels, 19 * 12 * 4);
    kiln_mip_params p;
    kiln_mip_params_init(&p);
    chain c;
    assert_int_equal(gen(g_ctx, &b, &p, &c), KILN_OK);
    kiln_texture t;
    /* RGBA8: the variant follows the colour space; data equals the image chain */
    assert_int_equal(kiln_mip_texture(g_ctx, &b, &p, KILN_FORMAT_RGBA8_UNORM, &t), KILN_OK);
    assert_int_equal(t.format, KILN_FORMAT_RGBA8_SRGB);
    assert_int_equal(t.levels, c.n);
    for (uint32_t l = 0; l < c.n; l++) {
        size_t sz;
        uint8_t *d = kiln_texture_image(&t, l, 0, 0, &sz);
        assert_int_equal(sz, (size_t)c.lv[l].width * c.lv[l].height * 4);
        assert_memory_equal(d, c.lv[l].pixels, sz);
    }
    kiln_texture_free(&t);
    chain_free(&c);
    /* R8 / RG8: linear under AUTO; level 0 is the R (and G) channel exactly; levels match the linear chain */
    kiln_mip_params lin = p;
    lin.color = KILN_MIP_COLOR_LINEAR;
    assert_int_equal(gen(g_ctx, &b, &lin, &c), KILN_OK);
    for (int comps = 1; comps <= 2; comps++) {
        assert_int_equal(kiln_mip_texture(g_ctx, &b, &p, comps == 1 ? KILN_FORMAT_R8_UNORM : KILN_FORMAT_RG8_UNORM, &t),
                         KILN_OK);
        for (uint32_t l = 0; l < c.n; l++) {
            size_t sz;
            uint8_t *d = kiln_texture_image(&t, l, 0, 0, &sz);
            size_t n = (size_t)c.lv[l].width * c.lv[l].height;
            assert_int_equal(sz, n * comps);
            for (size_t i = 0; i < n; i++)
                for (int k = 0; k < comps; k++) assert_int_equal(d[i * comps + k], ((uint8_t *)c.lv[l].pixels)[i * 4 + k]);
        }
        kiln_texture_free(&t);
    }
    chain_free(&c);
    /* RGBA16F / RGBA32F hold linear values: a black/white sRGB checker averages to exactly 0.5 */
    kiln_image k = mk(2, 2, KILN_PIXEL_U8, 4, 1);
    const uint8_t chk[4][4] = {{0, 0, 0, 255}, {255, 255, 255, 255}, {255, 255, 255, 255}, {0, 0, 0, 255}};
    memcpy(k.pixels, chk, sizeof chk);
    assert_int_equal(kiln_mip_texture(g_ctx, &k, &p, KILN_FORMAT_RGBA16F, &t), KILN_OK);
    const uint16_t *h0 = (const uint16_t *)kiln_texture_image(&t, 0, 0, 0, NULL);
    const uint16_t *h1 = (const uint16_t *)kiln_texture_image(&t, 1, 0, 0, NULL);
    assert_true(h0[0] == 0x0000 && h0[3] == 0x3c00 && h0[4] == 0x3c00);
    assert_true(h1[0] == 0x3800 && h1[1] == 0x3800 && h1[2] == 0x3800 && h1[3] == 0x3c00);
    kiln_texture_free(&t);
    assert_int_equal(kiln_mip_texture(g_ctx, &k, &p, KILN_FORMAT_RGBA32F, &t), KILN_OK);
    const float *f1 = (const float *)kiln_texture_image(&t, 1, 0, 0, NULL);
    assert_true(f1[0] == 0.5f && f1[3] == 1.0f);
    kiln_texture_free(&t);
    kiln_image_free(&k);
    /* compressed formats are refused */
    assert_int_equal(kiln_mip_texture(g_ctx, &b, &p, KILN_FORMAT_BC7_UNORM, &t), KILN_ERR_UNSUPPORTED);
    assert_non_null(strstr(kiln_last_error(g_ctx), "bc7"));
    assert_null(t.data);

    /* arrays and cube maps: each image equals its own chain */
    kiln_image faces[6];
    for (int i = 0; i < 6; i++) {
        faces[i] = mk(16, 16, KILN_PIXEL_U8, 4, 1);
        kt_rng_bytes(&r, faces[i].pixels, 16 * 16 * 4);
    }
    p.alpha = KILN_MIP_ALPHA_PREMULTIPLIED;
    assert_int_equal(kiln_mip_texture_layers(g_ctx, faces, 1, 6, 0, &p, KILN_FORMAT_RGBA8_SRGB, &t), KILN_OK);
    assert_true(t.faces == 6 && t.layers == 1 && t.levels == 5 && t.premultiplied == 1 && t.is_array == 0);
    kiln_texture t2;
    assert_int_equal(kiln_mip_texture_layers(g_ctx, faces, 3, 1, 1, &p, KILN_FORMAT_RGBA8_SRGB, &t2), KILN_OK);
    assert_true(t2.faces == 1 && t2.layers == 3 && t2.is_array == 1);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(gen(g_ctx, &faces[i], &p, &c), KILN_OK);
        for (uint32_t l = 0; l < c.n; l++) {
            size_t sz;
            uint8_t *d = kiln_texture_image(&t, l, 0, (uint32_t)i, &sz);
            assert_memory_equal(d, c.lv[l].pixels, sz);
            if (i < 3) {
                d = kiln_texture_image(&t2, l, (uint32_t)i, 0, &sz);
                assert_memory_equal(d, c.lv[l].pixels, sz);
            }
        }
        chain_free(&c);
    }
    kiln_texture_free(&t);
    kiln_texture_free(&t2);
    /* mismatched sizes, bad face counts, non-square cubes */
    kiln_image odd = mk(16, 8, KILN_PIXEL_U8, 4, 1);
    kiln_image mixed[2] = {faces[0], odd};
    assert_int_equal(kiln_mip_texture_layers(g_ctx, mixed, 2, 1, 1, &p, KILN_FORMAT_RGBA8_SRGB, &t), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(kiln_last_error(g_ctx), "image 1"));
    assert_int_equal(kiln_mip_texture_layers(g_ctx, faces, 1, 3, 0, &p, KILN_FORMAT_RGBA8_SRGB, &t), KILN_ERR_INVALID_ARGUMENT);
    kiln_image rect[6];
    for (int i = 0; i < 6; i++) rect[i] = odd;
    assert_int_equal(kiln_mip_texture_layers(g_ctx, rect, 1, 6, 0, &p, KILN_FORMAT_RGBA8_SRGB, &t), KILN_ERR_INVALID_ARGUMENT);
    kiln_image_free(&odd);
    for (int i = 0; i < 6; i++) kiln_image_free(&faces[i]);

    /* level 0 through the conversion path: U16 -> RGBA8 is round(v / 257) */
    kiln_image u = mk(7, 3, KILN_PIXEL_U16, 4, 0);
    for (size_t i = 0; i < 7 * 3 * 4; i++) ((uint16_t *)u.pixels)[i] = (uint16_t)(kt_rng_u32(&r));
    assert_int_equal(kiln_mip_texture(g_ctx, &u, NULL, KILN_FORMAT_RGBA8_UNORM, &t), KILN_OK);
    assert_int_equal(t.format, KILN_FORMAT_RGBA8_UNORM);
    const uint8_t *d0 = kiln_texture_image(&t, 0, 0, 0, NULL);
    for (size_t i = 0; i < 7 * 3 * 4; i++) assert_int_equal(d0[i], kiln__unorm16_to_unorm8(((uint16_t *)u.pixels)[i]));
    kiln_texture_free(&t);
    kiln_image_free(&u);
    kiln_image_free(&b);
}

/* ---------------------------------------------------------------- bad arguments, cancel */

static int cancel_cb(void *user, float f)
{
    (void)f;
    int *calls = user;
    return ++*calls >= 2;
}

static void bad_arguments(void **state)
{
    (void)state;
    kiln_image b = mk(4, 4, KILN_PIXEL_U8, 4, 1);
    kiln_mip_params p;
    kiln_mip_params_init(&p);
    chain c;
    /* too many levels */
    p.levels = 4;
    assert_int_equal(gen(g_ctx, &b, &p, &c), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(c.n, 0);
    assert_non_null(strstr(kiln_last_error(g_ctx), "at most 3"));
    p.levels = 2;
    assert_int_equal(gen(g_ctx, &b, &p, &c), KILN_OK);
    assert_int_equal(c.n, 2);
    chain_free(&c);
    p.levels = 0;
    /* too few slots */
    kiln_image two[2];
    uint32_t n = 2;
    assert_int_equal(kiln_mip_generate(g_ctx, &b, &p, two, &n), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(n, 0);
    assert_int_equal(kiln_mip_generate(g_ctx, &b, &p, NULL, &n), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_mip_generate(g_ctx, &b, &p, two, NULL), KILN_ERR_INVALID_ARGUMENT);
    /* 0x0, NULL pixels, bad type, too large, bad channels */
    kiln_image z = b;
    z.width = z.height = 0;
    assert_int_equal(gen(g_ctx, &z, &p, &c), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(kiln_last_error(g_ctx), "0x0"));
    z = b;
    z.pixels = NULL;
    assert_int_equal(gen(g_ctx, &z, &p, &c), KILN_ERR_INVALID_ARGUMENT);
    z = b;
    z.type = (kiln_pixel_type)3;
    assert_int_equal(gen(g_ctx, &z, &p, &c), KILN_ERR_INVALID_ARGUMENT);
    z = b;
    z.width = 70000;
    assert_int_equal(gen(g_ctx, &z, &p, &c), KILN_ERR_TOO_LARGE);
    z = b;
    z.channels = 0;
    assert_int_equal(gen(g_ctx, &z, &p, &c), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(gen(g_ctx, NULL, &p, &c), KILN_ERR_INVALID_ARGUMENT);
    /* bad parameters */
    kiln_mip_params q = p;
    q.filter = (kiln_mip_filter)9;
    assert_int_equal(gen(g_ctx, &b, &q, &c), KILN_ERR_INVALID_ARGUMENT);
    q = p;
    q.edge = (kiln_mip_edge)5;
    assert_int_equal(gen(g_ctx, &b, &q, &c), KILN_ERR_INVALID_ARGUMENT);
    const float refs[] = {1.0f, 1.5f, -0.1f, NAN};
    for (int i = 0; i < 4; i++) {
        q = p;
        q.alpha_coverage_ref = refs[i];
        assert_int_equal(gen(g_ctx, &b, &q, &c), KILN_ERR_INVALID_ARGUMENT);
    }
    q = p;
    q.normal_map = 1;
    q.color = KILN_MIP_COLOR_SRGB;
    assert_int_equal(gen(g_ctx, &b, &q, &c), KILN_ERR_INVALID_ARGUMENT);
    /* NULL params = defaults */
    assert_int_equal(gen(g_ctx, &b, NULL, &c), KILN_OK);
    assert_int_equal(c.n, 3);
    chain_free(&c);
    kiln_texture t;
    assert_int_equal(kiln_mip_texture(g_ctx, NULL, &p, KILN_FORMAT_RGBA8_UNORM, &t), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_mip_texture(g_ctx, &b, &p, KILN_FORMAT_RGBA8_UNORM, NULL), KILN_ERR_INVALID_ARGUMENT);
    kiln_image_free(&b);

    /* cancel through the progress callback: no result, no leak */
    int calls = 0;
    kiln_context_params cp;
    kiln_context_params_init(&cp);
    cp.threads = 2;
    cp.backend = KILN_BACKEND_CPU;
    cp.progress = cancel_cb;
    cp.progress_user = &calls;
    kiln_context *ctx;
    assert_int_equal(kiln_context_create(&cp, &ctx), KILN_OK);
    kiln_image big = mk(512, 512, KILN_PIXEL_U8, 4, 1);
    assert_int_equal(gen(ctx, &big, &p, &c), KILN_ERR_CANCELLED);
    assert_int_equal(c.n, 0);
    assert_int_equal(kiln_mip_texture(ctx, &big, &p, KILN_FORMAT_RGBA16F, &t), KILN_ERR_CANCELLED);
    assert_null(t.data);
    kiln_image_free(&big);
    kiln_context_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(box_taps_formula),
        cmocka_unit_test(box_2x2_u8_hand),
        cmocka_unit_test(box_np2_hand),
        cmocka_unit_test(box_matches_area_reference),
        cmocka_unit_test(box_energy_f32),
        cmocka_unit_test(box_energy_srgb_linear_light),
        cmocka_unit_test(srgb_constant_stays_exact),
        cmocka_unit_test(fast_quantisers_are_exact),
        cmocka_unit_test(u16_constant_stays_exact),
        cmocka_unit_test(alpha_weighted_no_bleed),
        cmocka_unit_test(alpha_coverage_preserved),
        cmocka_unit_test(normal_maps_renormalised),
        cmocka_unit_test(quality_kernels),
        cmocka_unit_test(quality_filters_properties),
        cmocka_unit_test(wrap_and_clamp_differ_only_at_edges),
        cmocka_unit_test(every_size_class),
        cmocka_unit_test(thread_count_determinism),
        cmocka_unit_test(textures),
        cmocka_unit_test(bad_arguments),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/* judge.c - the blurred-RGB metric of issue #7's flame judgement, shared by the GPU flame tests and the flame
 * benches: RGB of an RGBA8 image blurred by a separable Gaussian (sigma 1.5, radius 4, edges clamped), and the
 * PSNR (peak 255) between two such planes. */
#include "flame/flame.h"

#include <math.h>
#include <stdlib.h>

float *kiln__flame_blurred_rgb(const kiln_image *img)
{
    const uint32_t w = img->width, h = img->height;
    const size_t n = (size_t)w * h;
    if (img->type != KILN_PIXEL_U8 || n == 0 || n > SIZE_MAX / (3 * sizeof(float))) return NULL;
    float *a = malloc(sizeof(float) * 3 * n), *t = malloc(sizeof(float) * 3 * n);
    if (!a || !t) {
        free(a);
        free(t);
        return NULL;
    }
    const uint8_t *p = img->pixels;
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) a[i * 3 + c] = p[i * 4 + c];
    float k[9], sum = 0;
    for (int i = -4; i <= 4; i++) sum += k[i + 4] = expf(-(float)(i * i) / (2.0f * 1.5f * 1.5f));
    for (int i = 0; i < 9; i++) k[i] /= sum;
    for (int pass = 0; pass < 2; pass++) {
        float *src = pass ? t : a, *dst = pass ? a : t;
        for (uint32_t y = 0; y < h; y++)
            for (uint32_t x = 0; x < w; x++)
                for (int c = 0; c < 3; c++) {
                    float v = 0;
                    for (int i = -4; i <= 4; i++) {
                        int xx = (int)x + (pass ? 0 : i), yy = (int)y + (pass ? i : 0);
                        xx = xx < 0 ? 0 : xx >= (int)w ? (int)w - 1 : xx;
                        yy = yy < 0 ? 0 : yy >= (int)h ? (int)h - 1 : yy;
                        v += k[i + 4] * src[((size_t)yy * w + xx) * 3 + c];
                    }
                    dst[((size_t)y * w + x) * 3 + c] = v;
                }
    }
    free(t);
    return a;
}

double kiln__flame_psnr_rgb(const float *x, const float *y, size_t n)
{
    double se = 0;
    for (size_t i = 0; i < n; i++) se += (double)(x[i] - y[i]) * (x[i] - y[i]);
    double mse = n ? se / (double)n : 0.0;
    return mse <= 0 ? 99.0 : 10.0 * log10(255.0 * 255.0 / mse);
}

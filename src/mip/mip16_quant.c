/* mip16_quant.c - the 16-bit quantisers' decision points for the GPU mip paths (helper mip16; declared in
 * src/gpu/gpu_mip16_api.h; here, not in src/gpu, so that builds without Vulkan and the tests have them). */
#include "gpu/gpu_mip16_api.h"
#include "image/color.h"

#include <math.h>

/* Decision points. kiln__float_to_unorm16(x) = (uint16_t)((double)x * 65535 + 0.5) (an exact product), so
 * its code is >= k iff x >= (k - 0.5) / 65535. kiln__linear_to_srgb16(x) settles v until
 * decode((v - 0.5) / 65535) <= x < decode((v + 0.5) / 65535) (color.c, decode = srgb_decode_d, monotone),
 * so its code is >= k iff (double)x >= d_k = srgb_decode_d((k - 0.5) / 65535): the same expression here,
 * evaluated by the same libm. t[k] = the smallest float x with (double)x >= d_k (for sRGB) or
 * x * 65535 >= k - 0.5 (exact in double). x <= 0, NaN: 0 and x >= 1: 65535 on both sides. test_gpu_mip16.c
 * (thresholds) checks both floats around every decision point against the CPU functions. */
static void table(float *t, int srgb)
{
    t[0] = -INFINITY;
    for (uint32_t k = 1; k < 65536; k++) {
        const double c = ((double)k - 0.5) / 65535.0;
        const double d = srgb ? (c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)) : c;
        float f = (float)d;
        if (srgb) {
            while ((double)f < d) f = nextafterf(f, 2.0f);
            while ((double)nextafterf(f, 0.0f) >= d) f = nextafterf(f, 0.0f);
        } else {
            while ((double)f * 65535.0 < (double)k - 0.5) f = nextafterf(f, 2.0f);
            while ((double)nextafterf(f, 0.0f) * 65535.0 >= (double)k - 0.5) f = nextafterf(f, 0.0f);
        }
        t[k] = f;
    }
}

void kiln__gpu_mip16_thresholds(float *t, int srgb)
{
    table(t, srgb);
    table(t + 65536, 0);
}

/* the code of v is k iff t[k] <= v < t[k + 1] (t[0] = -inf; above 65535 nothing) */
static int code_is(const float *t, float v, uint32_t k) { return v >= t[k] && (k == 65535 || v < t[k + 1]); }

int kiln__gpu_mip16_roundtrip(const float *t, int srgb)
{
    for (uint32_t v = 0; v < 65536; v++) {
        const float a = (float)v / 65535.0f;
        const float lin = srgb ? kiln__srgb16_to_linear((uint16_t)v) : a;
        if (!code_is(t, lin, v) || !code_is(t + 65536, a, v)) return 0;
    }
    return 1;
}


/* mip.h - the CPU mipmap reference (internal). The public API is the "mipmaps" section of kiln.h;
 * this header exposes the pieces that tests and the GPU mipmap strategies are checked against.
 *
 * ARITHMETIC CONTRACT (what "the CPU reference" computes, precisely)
 *
 *  1. Geometry. levels = floor(log2(max(W, H))) + 1; level l is max(1, W >> l) x max(1, H >> l).
 *
 *  2. Level chain. Level l+1 is filtered from level l held in fp32 *before* any quantisation or
 *     post-pass: the float chain is never rounded to the output type, renormalised or coverage-
 *     scaled. Output level l = post(quantise(chain_l)). Level 0 of the output is the input itself
 *     (converted to the output type when that differs: decode then re-encode, which is the identity
 *     for equal types).
 *
 *  3. Values in the chain are linear fp32 RGBA, straight (not premultiplied) colour:
 *       U8  colour: sRGB mode kiln__srgb8_to_linear_table[v]; linear mode (float)v / 255.0f
 *       U16 colour: sRGB mode kiln__srgb16_to_linear(v);     linear mode (float)v / 65535.0f
 *       F32 colour: as stored (sRGB mode: kiln__srgb_to_linear, which clamps to [0,1])
 *       alpha is never converted (v / 255, v / 65535 or as stored).
 *     Normal maps (U8/U16): n = 2 * v - 1 per channel in fp32, z = sqrt(max(0, 1 - x^2 - y^2))
 *     when the image has fewer than 3 channels; F32 normal maps are used as stored (signed).
 *
 *  4. Separable filtering, VERTICAL FIRST, fp32, fixed order. With per-axis tap lists
 *     (iy_k, wy_k), k = 0..Ty-1 and (ix_j, wx_j), j = 0..Tx-1 (ascending source index before edge
 *     mapping), every channel c of output (x, y) is
 *        t(i)     = ((wy_0 * s(iy_0, i) + wy_1 * s(iy_1, i)) + wy_2 * s(iy_2, i)) ...   (left to right)
 *        out(x,y) = ((wx_0 * t(ix_0)    + wx_1 * t(ix_1))    + wx_2 * t(ix_2)) ...
 *     each * and + rounded to fp32 (ISO C mode: no contraction into FMA).
 *
 *  5. Box (default) taps per axis, source size D, output index x (kiln__mip_box_taps):
 *        D = 1          : i = x,               w = 1
 *        D even         : i = 2x, 2x+1,        w = 0.5f, 0.5f
 *        D = 2n+1 (odd) : i = 2x, 2x+1, 2x+2,  w = (float)(n-x)/(float)(2n+1), (float)n/(float)(2n+1),
 *                                                (float)(x+1)/(float)(2n+1)   (each a correctly
 *                                                rounded fp32 division)
 *     Output x covers the source interval [x*D/n, (x+1)*D/n); each weight is the fraction of that
 *     interval covered by one source texel. Every source texel receives total weight n/(2n+1)
 *     = n/D (even: 1/2), so sum(out) * D/n = sum(src): the mean of every level equals the mean of
 *     the level above (proof in test_mip.c: box_energy_*). Box never reads outside the image, so
 *     the edge mode does not matter for it.
 *
 *  6. Quality filters (Kaiser, Lanczos-3, Mitchell) are applied LEVEL BY LEVEL (each level from
 *     the float level above), like NVTT: the work stays 4/3 of one pass, the structure (and halo
 *     analysis) is the same as the box chain and the GPU strategies, and a cascade of 2:1 low-pass
 *     steps is close to the direct filter while each step's kernel stays 12-13 taps wide (direct
 *     evaluation from the base would need 6 * 2^l taps at level l). Taps (kiln__mip_axis_build):
 *        scale s = D / n (2 for even D), centre c = (x + 0.5) * s  (source texel i spans [i, i+1))
 *        half-width h = support * s; taps i = floor(c - h) .. ceil(c + h) - 1
 *        w_i = mean over 32 box sub-samples of k(((i + (q + 0.5) / 32) - c) / s), q = 0..31
 *        normalised by their sum (all in double), then rounded to fp32; zero weights are dropped;
 *        out-of-range i is mapped by the edge mode (clamp: to [0, D-1]; wrap: modulo D) after the
 *        weights are computed. Even D: every output has the same phase, so output 0's raw weights
 *        serve all outputs. Odd D: output n-1-x uses output x's raw weights reversed (its mirror
 *        image), for x < n-1-x, so the filter is exactly symmetric.
 *     k: Kaiser (NVTT defaults) sinc(pi x) * I0(4 sqrt(1 - (x/3)^2)) / I0(4), |x| < 3;
 *        Lanczos-3 sinc(pi x) sinc(pi x / 3), |x| < 3; Mitchell-Netravali B = C = 1/3, |x| < 2.
 *     D = 1 is always the identity.
 *
 *  7. Alpha. WEIGHTED (default, images with an alpha channel that is not all 1): the filter runs on
 *     (a*r, a*g, a*b, a) (products in fp32, formed before the vertical pass) and, alongside, on the
 *     plain (r, g, b); then A = sum(w a) and colour =
 *     sum(w a c) / A when A > eps (box: eps = 0, any positive A; ringing filters: eps = 1/256),
 *     else sum(w c) (fully transparent footprints keep their average colour). This equals
 *     premultiply -> filter -> unpremultiply of the chain. SEPARATE and PREMULTIPLIED filter the
 *     four channels independently. Normal maps never weight by alpha.
 *
 *     The CPU code caches prepared source rows per worker and uses packed SIMD for the element-wise
 *     vertical pass; neither changes a single operation above, so results are the same bits for any
 *     thread count, chunking or vector width.
 *
 *  8. Post-passes on output levels >= 1 (never on the chain): normal renormalisation
 *     n / |n| (|n| computed in fp32; (0,0,1) when |n| < 1e-20), re-encoded as 0.5 n + 0.5 for
 *     unorm inputs; alpha coverage scaling alpha' = min(1, s * clamp(a, 0, 1)) (kiln__mip_coverage_scale).
 *
 *  9. Quantisation (color.h): U8 sRGB kiln__linear_to_srgb8 (correctly rounded), U8 linear and
 *     alpha kiln__float_to_unorm8 = floor(clamp(v) * 255 + 0.5) with the product in double (round
 *     half up, exact); U16 likewise with 65535 (sRGB: kiln__linear_to_srgb16); F32 as is (sRGB mode:
 *     kiln__linear_to_srgb, clamped to [0,1]); F16 kiln__float_to_half (round to nearest even).
 *     Float outputs are not clamped: ringing filters may leave the input range there.
 *
 * GPU CONTRACT. A GPU strategy matches this reference when every 8-bit output value is within
 * +-1 LSB (GPU pow() and bilinear-weight quantisation make 0 LSB unrealistic; notes/mipmaps.md 2),
 * with the same geometry, the same NP2 footprints and sRGB decode -> linear filter -> encode.
 * Generate the reference with kiln_mip_generate (images) or kiln_mip_texture (the texture layout a
 * GPU path fills).
 */
#ifndef KILN_MIP_H
#define KILN_MIP_H

#include "core/internal.h"

#include <string.h>

/* Exact box taps of one axis (rule 5): writes up to 3 source indices and weights, returns the tap
 * count (1, 2 or 3). src_size >= 1, x < max(1, src_size / 2). */
uint32_t kiln__mip_box_taps(uint32_t src_size, uint32_t x, uint32_t index[3], float weight[3]);
/* 1 when some texel of an RGBA image has alpha below 1 (rule 7: then colour is alpha-weighted). */
int kiln__mip_base_has_alpha(const kiln_image *img);
/* Alpha coverage (rule 8): the smallest fp32 x in (0, 1] whose stored value is > ref, for stored kind
 * 1 U8, 2 U16, 3 F16, 4 F32 (the value an alpha test sees); and the base texels whose stored alpha is > ref. */
float kiln__mip_alpha_pass_threshold(int kind, float ref);
size_t kiln__mip_base_coverage(const kiln_image *img, float ref);

/* The base decoded as the CPU chain reads it (rule 3 without the normal-map mapping): a linear RGBA32F
 * image of img's size and channels (the GPU paths filter 16-bit images from it; helper mip16). */
kiln_status kiln__mip_decode_f32(kiln_context *ctx, const kiln_image *img, int srgb, kiln_image *out);

/* The continuous kernels (rule 6), in units of output texels, not normalised; 0 outside the
 * support. kiln__mip_kernel_support gives the half-width (box: 0.5). */
double kiln__mip_kernel(kiln_mip_filter filter, double x);
double kiln__mip_kernel_support(kiln_mip_filter filter);

/* Tap table of one axis for one level: output o uses index[first[o] .. first[o+1]) with the same
 * weights. Box uses kiln__mip_box_taps; the others rule 6 (raw weights made on the context's
 * threads; `progress` is the fraction reported meanwhile, the caller's current position). */
typedef struct kiln__mip_axis {
    uint32_t src, dst;
    uint32_t max_taps;
    uint32_t *first;  /* dst + 1 entries */
    uint32_t *index;  /* source indices, edge mode applied */
    float *weight;
} kiln__mip_axis;

kiln_status kiln__mip_axis_build(kiln_context *ctx, kiln__mip_axis *axis, uint32_t src_size, kiln_mip_filter filter,
                                 kiln_mip_edge edge, float progress);
void kiln__mip_axis_free(kiln__mip_axis *axis);

/* Alpha-coverage scale for one level (rule 8). alpha[i * stride], i < n, are the level's alpha
 * values (any floats; clamped to [0,1] inside), `target` is the number of texels that should pass. `threshold`
 * is the smallest fp32 x in [0,1] whose stored (quantised) value passes the alpha test, so a texel
 * passes iff min(1, s * a) >= threshold. Returns the fp32 scale s whose pass count is closest to
 * `target` (ties: the candidate whose interval holds 1, else the larger count), chosen as close to
 * 1 as that count allows. `scratch` holds n + 65536 uint32_t. Deterministic, O(n). */
float kiln__mip_coverage_scale(const float *alpha, size_t stride, size_t n, size_t target, float threshold,
                               uint32_t *scratch);
/* Its steps, for callers that count on a device (src/gpu/gpu_mip_alpha.c, helper alphacov): the bucket
 * of hist[0 .. top] (scanned downwards) holding the k-th largest entry (*acc: the count above it); the
 * decision from the positive count and the largest clamped alpha's bits alone (1 and *scale when it
 * decides, else *target clamped to positive); the rest from the target-th largest clamped alpha's bits vk,
 * the counts >= vk and > vk, the largest bits below vk (0: none) and the smallest above (0xffffffff). */
uint32_t kiln__mip_hist_select(const uint32_t *hist, uint32_t top, size_t k, size_t *acc);
int kiln__mip_coverage_early(size_t positive, uint32_t vmax, size_t *target, float threshold, float *scale);
float kiln__mip_coverage_final(size_t target, float threshold, uint32_t vk, size_t count_ge, size_t count_gt,
                               uint32_t below, uint32_t above);

/* Exact, faster form of kiln__linear_to_srgb8 (color.h): a table indexed by the float's exponent and
 * top 8 mantissa bits gives the code at the start of the bucket, then at most a step or two over
 * kiln__srgb8_thresholds. Same result for every float (test_mip.c checks it against color.h). */
#define KILN_MIP_SRGB8_SHIFT 15
typedef struct kiln__mip_srgb8 {
    uint32_t base;       /* bucket of the first threshold */
    uint32_t count;      /* buckets up to 1.0f */
    uint32_t max_steps;  /* most thresholds inside one bucket (1 for this table; checked at init) */
    float thr[256];      /* kiln__srgb8_thresholds, then +inf */
    uint8_t start[4096]; /* code at the lowest float of each bucket */
} kiln__mip_srgb8;

void kiln__mip_srgb8_init(kiln__mip_srgb8 *t);

static inline uint8_t kiln__mip_srgb8_encode(const kiln__mip_srgb8 *t, float x)
{
    if (!(x >= t->thr[0])) return 0; /* also NaN */
    if (x >= 1.0f) return 255;
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    uint32_t k = t->start[(b >> KILN_MIP_SRGB8_SHIFT) - t->base];
    k += x >= t->thr[k]; /* branch-free: a bucket holds at most one decision point */
    if (t->max_steps > 1)
        while (x >= t->thr[k]) k++;
    return (uint8_t)k;
}

/* kiln__float_to_unorm8 (color.h) inlined for the hot quantisation loop; test_mip.c checks they agree. */
static inline uint8_t kiln__mip_unorm8(float v)
{
    if (!(v > 0.0f)) return 0;
    if (v >= 1.0f) return 255;
    return (uint8_t)((double)v * 255.0 + 0.5);
}

#endif

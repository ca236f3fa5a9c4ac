/* gpu_mip16_api.h - the 16-bit mip entry point mip.c calls (helper mip16; no Vulkan types, so the
 * stub build has it too: src/gpu/stub/gpu_mip16_stub.c). */
#ifndef KILN_GPU_MIP16_API_H
#define KILN_GPU_MIP16_API_H

#include "gpu/gpu.h"

#define KILN_GPU_MIP16_THR_FLOATS 131072u /* colour [0, 65536), alpha [65536, 131072) */

/* The decision points of the 16-bit quantisers (colour: kiln__linear_to_srgb16 when srgb, else
 * kiln__float_to_unorm16; alpha: kiln__float_to_unorm16): t[k] (1 <= k <= 65535) is the smallest float
 * whose code is >= k, t[0] = -inf (unused). Built from the CPU functions themselves. */
void kiln__gpu_mip16_thresholds(float *t, int srgb);
/* 1 when every 16-bit value survives decode (mip.c: v / 65535.0f, or kiln__srgb16_to_linear) and
 * re-quantisation through the thresholds t unchanged (level 0 of a device-resident encode is converted
 * from the decoded base). */
int kiln__gpu_mip16_roundtrip(const float *t, int srgb);

/* kiln_mip_generate of ONE 16-bit image into 16-bit levels on the GPU: job->images[0] is the 16-bit image itself
 * (helper mip16b: decoded on the device by mip16_decode.comp through the CPU decoder's tables, or on the host with
 * KILN_GPU_MIP16_DEVICE_DECODE=0; job->decode_srgb: its colour is sRGB) or the base decoded to linear RGBA32F by
 * mip.c (kiln__mip_decode_f32; job->decode_srgb 0; no normal maps), job->out_srgb the sRGB flag of the 16-bit
 * levels (colour kiln__linear_to_srgb16, else kiln__float_to_unorm16), job->out_kind 2; levels 1.. of dst[l] are
 * written as RGBA16 (mip.c SINK_U16). The mip pass (gpu_mip.c / gpu_mip_filter.c, any strategy but blit and
 * baseline; normal maps of the 16-bit image: n = 2v - 1, 0.5 n + 0.5 as mip.c) writes the float chain on the
 * device; shaders/mip16_convert.comp quantises it there; only the 16-bit levels are downloaded.
 * *device_ms: kernel time. Helper mipfall: also out_kind 1 / 3 / 4 (RGBA8, RGBA16F, RGBA32F levels of the raw image,
 * written from the chain on the device), alpha coverage (raw image; scaled on the device, gpu_mip_alpha.c) and the
 * blit strategy (box, no coverage: the host-decoded base blitted as RGBA32F). KILN_ERR_UNSUPPORTED for the rest
 * (baseline, blit with coverage or another filter, normal maps or sRGB into float outputs). */
kiln_status kiln__gpu_mip16_generate(kiln_context *ctx, const kiln__gpu_mip_job *job, double *device_ms);

#endif

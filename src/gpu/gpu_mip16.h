/* gpu_mip16.h - 16-bit sources on the GPU mip paths (helper mip16, issue 5; src/gpu/gpu_mip16.c,
 * shaders/mip16_convert.comp). A 16-bit image is filtered on the device as the float chain the CPU
 * filters (mip.c decodes the base with its own decoder: kiln__mip_decode_f32), and
 * mip16_convert.comp quantises each level exactly as mip.c's SINK_U16 does, then writes either the
 * RGBA16 texels (kiln_mip_generate) or the words the 8-bit encoders read for a 16-bit image
 * (kiln_encode_mips, gpu_mip_encode.c). */
#ifndef KILN_GPU_MIP16_H
#define KILN_GPU_MIP16_H

#include "gpu/vk.h"
#include "gpu/gpu_mip16_api.h"

kiln_status kiln__gpu_mip16_pipeline(kiln_context *ctx, kiln_gpu *gpu, const kiln_vk_pipeline **out);
/* One level of n RGBA32F texels -> words (mip16_convert.comp `mode`, nch, flags bit 0: signed_map, bit 1: sRGB colour). */
kiln_status kiln__gpu_mip16_record(kiln_context *ctx, kiln_vk_cmd *cmd, const kiln_vk_pipeline *pipe,
                                   const kiln_vk_binding *texels, const kiln_vk_binding *words,
                                   const kiln_vk_binding *thr, uint32_t n, uint32_t mode, uint32_t nch, uint32_t flags);

#endif

/* gpu_mip16.h - 16-bit sources on the GPU mip paths (helper mip16, issue 5; src/gpu/gpu_mip16.c,
 * shaders/mip16_convert.comp). A 16-bit image is filtered on the device as the float chain the CPU
 * filters (the base decoded as mip.c decodes it: on the device through the CPU decoder's tables,
 * mip16_decode.comp, or on the host by kiln__mip_decode_f32), and mip16_convert.comp quantises each
 * level exactly as mip.c's SINK_U16 does, then writes either the RGBA16 texels (kiln_mip_generate) or
 * the words the encoders read for a 16-bit image (kiln_encode_mips, gpu_mip_encode.c; BC6H: fetch_texel's
 * floats, mode 7; BC6H from an 8-bit image: mode 8 on the RGBA8 chain, helper mip16b). */
#ifndef KILN_GPU_MIP16_H
#define KILN_GPU_MIP16_H

#include "gpu/vk.h"
#include "gpu/gpu_mip16_api.h"
#include "gpu/gpu_mip.h"

/* kiln__gpu_mip16_thresholds(t, srgb) (KILN_GPU_MIP16_THR_FLOATS floats), built once per device and kept in
 * gpu; *roundtrip = kiln__gpu_mip16_roundtrip of them. NULL (with a failure) when out of memory. */
const float *kiln__gpu_mip16_cached_thresholds(kiln_context *ctx, kiln_gpu *gpu, int srgb, int *roundtrip);
kiln_status kiln__gpu_mip16_pipeline(kiln_context *ctx, kiln_gpu *gpu, const kiln_vk_pipeline **out);
/* One level of n RGBA32F texels -> words (mip16_convert.comp `mode`, nch, flags bit 0: signed_map, bit 1: sRGB colour). */
kiln_status kiln__gpu_mip16_record(kiln_context *ctx, kiln_vk_cmd *cmd, const kiln_vk_pipeline *pipe,
                                   const kiln_vk_binding *texels, const kiln_vk_binding *words,
                                   const kiln_vk_binding *thr, uint32_t n, uint32_t mode, uint32_t nch, uint32_t flags);

/* The 16-bit base decoded on the device (helper mip16dev): shaders/mip16_decode.comp writes the RGBA32F base
 * kiln__mip_decode_f32 makes (colour kiln__srgb16_to_linear or v / 65535.0f, alpha v / 65535.0f: a function of
 * each 16-bit value alone) from the uploaded RGBA16 texels, through tables the CPU functions fill: bit for
 * bit the host decode, with half the bytes uploaded and no host float copy. The device-resident encoder
 * (gpu_mip_encode.c) and kiln__gpu_mip16_generate use it for every filter (mip16b) unless
 * KILN_GPU_MIP16_DEVICE_DECODE=0 (the host decode). */
typedef struct kiln__gpu_mip16_dec {
    kiln_gpu *gpu;
    const kiln_vk_pipeline *pipe;
    kiln_vk_io texels, lut;
    uint32_t n;
} kiln__gpu_mip16_dec;

/* KILN_GPU_MIP16_DEVICE_DECODE: 0 gives 0 (the host decode), 2 gives 2 (testing aid: the tables decode every
 * colour value to 0, so a test sees that the device decode ran), anything else 1. */
int kiln__gpu_mip16_device_decode(void);
/* Copies img's RGBA16 texels and the decode tables (srgb: sRGB colour) into host-visible buffers. */
kiln_status kiln__gpu_mip16_dec_prepare(kiln_context *ctx, kiln_gpu *gpu, const kiln_image *img, int srgb,
                                        kiln__gpu_mip16_dec *dec);
/* Records the uploads of both buffers (before the mip pass's timed section). */
void kiln__gpu_mip16_dec_upload(kiln_vk_cmd *cmd, kiln__gpu_mip16_dec *dec);
/* A kiln__gpu_mip_fill_fn (user: the prepared and uploaded kiln__gpu_mip16_dec): decodes into `in`. */
kiln_status kiln__gpu_mip16_dec_fill(kiln_context *ctx, kiln_vk_cmd *cmd, VkBuffer in, void *user);
void kiln__gpu_mip16_dec_free(kiln__gpu_mip16_dec *dec);

/* The quality filters and normal maps (gpu_mip_filter.c, shaders/mip_filter.comp) on a 16-bit source, recorded as
 * kiln__gpu_mip_filter_record does (helper mip16b): job->images the decoded base (KILN_PIXEL_F32, sizes and type;
 * pixels read only when fill is NULL), fill (kiln__gpu_mip16_dec_fill) writes it on the device instead of an
 * upload; unorm16 (normal maps): the base is a decoded unorm image, so the filter reads n = 2v - 1 (and z from x, y
 * for fewer than 3 channels) and writes 0.5 n + 0.5, as mip.c does for a 16-bit normal map (cfg.normal_unorm). */
kiln_status kiln__gpu_mip16_filter_record(kiln_context *ctx, kiln_gpu *gpu, const kiln__gpu_mip_job *job,
                                          uint32_t align_bytes, kiln_vk_cmd *cmd, VkQueryPool qp, kiln__gpu_mip_dev *dev,
                                          kiln__gpu_mip_fill_fn fill, void *user, int unorm16);

#endif

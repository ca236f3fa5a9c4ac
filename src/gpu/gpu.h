/* gpu.h - what the rest of kiln sees of the Vulkan backend. No Vulkan types here: src/gpu is the only
 * code that includes <vulkan/vulkan.h>. When kiln is built without Vulkan, src/gpu/stub implements
 * this header by reporting that no device exists. */
#ifndef KILN_GPU_H
#define KILN_GPU_H

#include "core/internal.h"

/* Resolves the context's backend. Returns 1 when work should go to the GPU: backend VULKAN (device
 * created, else KILN_ERR_NO_DEVICE is recorded and *status set), or AUTO with a usable device. With
 * AUTO and no device it returns 0 and, when verbose, says why on stderr (the CPU fallback). */
int kiln__gpu_wanted(kiln_context *ctx, kiln_status *status);

/* Creates (once) and returns the context's GPU. */
kiln_status kiln__gpu_get(kiln_context *ctx, kiln_gpu **out);
void kiln__gpu_destroy(kiln_gpu *gpu);

/* Decodes one image of a block-compressed texture with the decode compute shaders; the output is
 * identical to the CPU decoders'. KILN_ERR_UNSUPPORTED for uncompressed formats. */
kiln_status kiln__gpu_decode(kiln_context *ctx, const kiln_texture *tex, uint32_t level, uint32_t layer,
                             uint32_t face, kiln_image *out);

/* Encodes one image of a block-compressed format on the GPU into dst (kiln_format_image_size bytes),
 * padding by edge replication as the CPU driver does. src/gpu/gpu_encode.c routes by format family
 * to gpu_encode_bc.c (BC1-BC5), gpu_encode_etc.c (ETC1/ETC2/EAC) and gpu_encode_bc6h.c. Returns
 * KILN_ERR_UNSUPPORTED (with a message) when the format/quality has no GPU encoder: the AUTO backend
 * then encodes on the CPU. subgroup_size 0 lets the driver choose, else pipelines require that size.
 * params->gpu_strategy selects kiln's design (0) or the seed design (1). Sets ctx->last_gpu_ms. */
kiln_status kiln__gpu_encode(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                             uint32_t subgroup_size, uint8_t *dst, size_t dst_size);

/* ---- test and bench hooks (src/gpu; the stub reports no device) ---- */

/* Warnings and errors the Vulkan validation layer reported on ctx's device so far (validation runs
 * when the environment has KILN_VK_VALIDATION=1 at context GPU creation), and whether it is on. */
uint32_t kiln__gpu_validation_messages(kiln_context *ctx);
int kiln__gpu_validation_active(kiln_context *ctx);

/* 1 when device `index` (kiln_gpu_list order) is a CPU implementation such as lavapipe, which AUTO
 * skips unless KILN_ALLOW_CPU_VULKAN=1. */
int kiln__gpu_device_is_cpu(kiln_context *ctx, uint32_t index);

/* kiln__gpu_decode on raw blocks: `size` bytes holding the blocks of a width x height image of
 * `format`; `out` is allocated as kiln_decode does. subgroup_size 0 lets the driver choose, else the
 * pipeline requires that size (KILN_ERR_UNSUPPORTED unless it is in kiln__gpu_subgroup_sizes). */
kiln_status kiln__gpu_decode_blocks(kiln_context *ctx, kiln_format format, const uint8_t *blocks, size_t size,
                                    uint32_t width, uint32_t height, uint32_t subgroup_size, kiln_image *out);
/* Bit mask of the subgroup sizes pipelines can require on ctx's device (bit n = size 2^n); 0 when
 * the device cannot control subgroup sizes or there is no device. */
uint32_t kiln__gpu_subgroup_sizes(kiln_context *ctx);

/* Samples a block-compressed image through the device's texture unit: a VkImage of the format's
 * VkFormat (pass a UNORM format for sRGB data: the decoding is the same), read with texelFetch
 * (VK_FILTER_NEAREST) in a compute shader. `blocks` holds kiln_format_image_size(format, width,
 * height) bytes; `out` receives width * height RGBA floats. KILN_ERR_UNSUPPORTED when the device
 * cannot sample the format. An independent check of kiln's own decoders. */
kiln_status kiln__gpu_sample_blocks(kiln_context *ctx, kiln_format format, const uint8_t *blocks, uint32_t width,
                                    uint32_t height, float *out);

#endif

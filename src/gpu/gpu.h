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

#endif

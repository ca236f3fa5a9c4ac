/* gpu_encode.h - the GPU encoders by format family (internal to src/gpu). Each has the contract of
 * kiln__gpu_encode in gpu.h: KILN_ERR_UNSUPPORTED (with a message) for what it cannot encode. */
#ifndef KILN_GPU_ENCODE_H
#define KILN_GPU_ENCODE_H

#include "gpu/gpu.h"

kiln_status kiln__gpu_encode_bc(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                                uint32_t subgroup_size, uint8_t *dst, size_t dst_size);
kiln_status kiln__gpu_encode_etc(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                                 uint32_t subgroup_size, uint8_t *dst, size_t dst_size);
kiln_status kiln__gpu_encode_bc6h(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                                  uint32_t subgroup_size, uint8_t *dst, size_t dst_size);

#endif

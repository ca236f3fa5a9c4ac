/* gpu_encode_etc2_seed.h - the ETC2 colour seed design on the GPU (betsy; issue 4): gpu_strategy 1 for ETC2 RGB
 * and the colour half of ETC2 RGBA. See gpu_encode_etc2_seed.c. */
#ifndef KILN_GPU_ENCODE_ETC2_SEED_H
#define KILN_GPU_ENCODE_ETC2_SEED_H

#include "kiln/kiln.h"

#include <stddef.h>
#include <stdint.h>

/* Encodes the ETC2 RGB colour blocks of img (any pixel type; the CPU driver's 8-bit view) with betsy's design:
 * the 8 bytes of block i (row-major, (w + 3) / 4 blocks per row) go to dst + i * stride + off. params: quality
 * (the ETC1 seed's search radius), subgroup_size: 0 or a size to require. The preload / direct-read
 * specialisation constant of every pass comes from the environment, KILN_GPU_ETC_PRELOAD=0/1 (default 1), as
 * for the other seed shaders. *ms: the kernel time of the one submission. KILN_ERR_UNSUPPORTED when the device
 * cannot run workgroups of 960 invocations or the image exceeds its storage buffer range. */
kiln_status kiln__gpu_etc2_seed_colour(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                                       uint32_t subgroup_size, uint8_t *dst, size_t stride, size_t off, double *ms);

#endif

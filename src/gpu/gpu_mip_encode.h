/* gpu_mip_encode.h - mip chain + encode on the GPU with the chain kept on the device (owner mipdev;
 * src/gpu/gpu_mip_encode.c, issue #5). No Vulkan types: encode.c and the tests include it. Without
 * Vulkan, src/gpu/stub/gpu_mip_encode_stub.c reports that no device exists. */
#ifndef KILN_GPU_MIP_ENCODE_H
#define KILN_GPU_MIP_ENCODE_H

#include "gpu/gpu.h"

/* kiln_encode_mips on the GPU in one submission: the base image goes up once, the mip pass
 * (src/gpu/gpu_mip.c tiled box strategies or gpu_mip_filter.c quality filters) writes the levels into
 * a device buffer, the BC encoders read every level there (level 0 from the uploaded base), and only
 * the compressed blocks come back (plus, for blocks the GPU encoder hands to the CPU encoder, those
 * blocks' 16 texels, gathered on the device). `mip` has its colour space resolved as kiln_encode_mips
 * does. Allocates *out (levels as mip->levels, 0 = full chain) on success. The bytes are those of
 * kiln_mip_generate + kiln_encode_image on the same context. KILN_ERR_UNSUPPORTED (with a message) for
 * what this path does not cover: formats other than BC1, BC1a, BC3, BC4, BC5, EAC R11 / RG11,
 * ETC1 (every quality), ETC2 RGB / RGBA at FAST (8-bit images; gpu_mip_encode_etc.h) and BC6H (float
 * images, linear chain); float images (BC1-BC5, ETC and EAC from a float chain: a conversion pass on
 * the device, helper mipres2) and 16-bit images (the same from the decoded base's float chain,
 * quantised to 16 bits on the device, helper mip16; not 16-bit normal maps or blit); alpha coverage
 * with a strategy other than auto / per-level (with those it is scaled on the device: gpu_mip_alpha.c);
 * the blit strategy with a
 * non-box filter (the box blit chain is kept on the device too); dithering; bc1_black;
 * KILN_GPU_MIP_RESIDENT=0 in the environment (a testing and bench aid). The caller then takes the
 * host path. */
kiln_status kiln__gpu_encode_mips(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                                  const kiln_mip_params *mip, kiln_texture *out);

/* What the device-resident path did on ctx's device so far (tests, bench/, --verbose). */
typedef struct kiln__gpu_mip_encode_stats {
    uint64_t runs;            /* kiln__gpu_encode_mips calls that completed on the device */
    uint64_t levels;          /* levels encoded from device memory (level 0 included) */
    uint64_t fallback_blocks; /* blocks whose 16 texels came back for the CPU encoder */
    double mip_ms, encode_ms; /* kernel time of the last run: mip pass, encode + gather passes */
} kiln__gpu_mip_encode_stats;

/* Zeroes *out when ctx has no device. */
void kiln__gpu_mip_encode_stats_get(kiln_context *ctx, kiln__gpu_mip_encode_stats *out);

#endif

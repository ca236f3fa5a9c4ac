/* gpu_mip_alpha.h - alpha coverage on the GPU mip paths, device-resident (helper alphacov, issue 5;
 * src/gpu/gpu_mip_alpha.c, shaders/mip_alpha.comp). No Vulkan types (tests include it); the device
 * interface is gpu_mip_alpha_vk.h. Without Vulkan, src/gpu/stub/gpu_mip_alpha_stub.c zeroes the stats. */
#ifndef KILN_GPU_MIP_ALPHA_H
#define KILN_GPU_MIP_ALPHA_H

#include "gpu/gpu.h"

/* What the device-resident alpha-coverage passes did on ctx's device so far (tests, --verbose). */
typedef struct kiln__gpu_mip_alpha_stats {
    uint64_t runs;        /* chains whose alpha coverage was scaled on the device */
    uint64_t levels;      /* levels scaled there (over every texture) */
    uint64_t hist_levels; /* of those, levels whose scale came from device histograms (the rest: small
                           * levels whose alpha values were read back, a few KiB each) */
} kiln__gpu_mip_alpha_stats;

/* Zeroes *out when ctx has no device. */
void kiln__gpu_mip_alpha_stats_get(kiln_context *ctx, kiln__gpu_mip_alpha_stats *out);

#endif

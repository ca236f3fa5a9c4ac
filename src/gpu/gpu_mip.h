/* gpu_mip.h - between gpu_mip.c and gpu_mip_blit.c (the blit strategy: VkImage + vkCmdBlitImage). */
#ifndef KILN_GPU_MIP_H
#define KILN_GPU_MIP_H

#include "gpu/vk.h"

/* The blit chain for job (RGBA8 in -> RGBA8 out in one colour space, or F32 -> F32 linear): levels
 * 1..L-1 into job->dst. *ms: the timed blit chain. KILN_ERR_UNSUPPORTED (message) when the queue has
 * no graphics capability or the format cannot be blitted with a linear filter. */
kiln_status kiln__gpu_mip_blit(kiln_context *ctx, kiln_gpu *gpu, const kiln__gpu_mip_job *job, double *ms);

/* Bench: `count` layers of w x h RGBA8 sRGB from the device buffer `texels` (w * h * 4 * count bytes),
 * `runs` cold (the 256 MiB `evict` buffer written first) then `runs` warm: ms[0 .. 2 runs - 1]. */
kiln_status kiln__gpu_mip_blit_bench(kiln_context *ctx, kiln_gpu *gpu, uint32_t w, uint32_t h, uint32_t count,
                                     VkBuffer texels, VkBuffer evict, uint32_t runs, double *ms);

/* The quality filters, normal maps and alpha coverage (gpu_mip_filter.c, shaders/mip_filter.comp):
 * job->filter is not the box, job->normal_map or job->alpha_coverage_ref is set. Strategies AUTO and
 * PER_LEVEL only (else UNSUPPORTED). */
kiln_status kiln__gpu_mip_filter(kiln_context *ctx, kiln_gpu *gpu, const kiln__gpu_mip_job *job);

#endif

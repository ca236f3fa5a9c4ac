/* gpu_etc_ring.h - the pipelined GPU encoder of ETC1 / ETC2 / EAC (helper etcring; the design is in
 * src/gpu/gpu_encode_etc_ring.inc, included at the end of gpu_encode_etc.c). kiln__gpu_bc_ring_probe and
 * kiln__gpu_bc_ring (gpu_batch.h) route these formats here, so kiln_encode_batch and kiln__gpu_encode take it.
 * No Vulkan types. */
#ifndef KILN_GPU_ETC_RING_H
#define KILN_GPU_ETC_RING_H

#include "gpu/gpu_batch.h"

/* KILN__GPU_RING_MAX_FMT (formats of one ring call at most) and the jobs' segments: gpu_batch.h */

/* 1 when format is one of the ETC / EAC formats (the ones this ring may take). */
int kiln__gpu_etc_ring_format(kiln_format format);

/* KILN_OK when kiln__gpu_etc_ring can encode img in params->format, else KILN_ERR_UNSUPPORTED with a
 * message (those go through kiln__gpu_encode_etc, the synchronous path) or another failure. Taken:
 * kiln's strategy (gpu_strategy 0) without dithering, every ETC / EAC format and quality (ETC2 above FAST
 * and RGB A1 need 64-bit shader floats and the GPU T / H pass). KILN_GPU_ETC_RING=0 in the environment:
 * none (the synchronous path, for A/B in bench/ and tests). */
kiln_status kiln__gpu_etc_ring_probe(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params);

/* As kiln__gpu_bc_ring for the formats kiln__gpu_etc_ring_probe accepts: the bytes of kiln__gpu_encode_etc,
 * ctx->last_gpu_ms = the kernel time summed over every job. */
kiln_status kiln__gpu_etc_ring(kiln_context *ctx, kiln__gpu_image_source *src, const kiln_encode_params *params,
                               uint32_t nfmt, uint32_t subgroup_size);

/* The ring's per-device slots (buffers, command buffers, fences, queries), kept between calls in the BC
 * ring's device cache (gpu_encode_bc_ring.inc); freed with it. */
struct kiln__gpu_etc_ring_cache;
struct kiln_gpu;
void kiln__gpu_etc_ring_cache_free(struct kiln_gpu *gpu, struct kiln__gpu_etc_ring_cache *c);
/* The cache's slot for the ETC ring's slots (creates the device cache if needed); NULL on failure
 * (out of memory, reported). */
struct kiln__gpu_etc_ring_cache **kiln__gpu_enc_cache_etc(kiln_context *ctx, struct kiln_gpu *gpu);

#endif

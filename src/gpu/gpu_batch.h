/* gpu_batch.h - pipelined GPU encoding of several images and formats (owner gpuio; see
 * src/gpu/gpu_encode_bc_ring.inc for the design). No Vulkan types. Without Vulkan,
 * src/gpu/stub/gpu_batch_stub.c reports that no device exists. */
#ifndef KILN_GPU_BATCH_H
#define KILN_GPU_BATCH_H

#include "gpu/gpu.h"

/* A stream of images: next() returns 0 when there are no more, else sets *img and dst[0 .. nfmt-1]
 * (each kiln_format_image_size bytes of that image in params[f].format). It is called from the
 * encoding thread only, while earlier images may still be on the GPU. */
typedef struct kiln__gpu_image_source {
    int (*next)(void *user, const kiln_image **img, uint8_t **dst);
    void *user;
    uint64_t total_blocks; /* blocks of all images x formats, for kiln__progress; 0 = unknown (none) */
    _Atomic uint64_t *done_blocks; /* NULL, or where the ring adds the blocks x formats of each job it has
                                    * finished (kiln_encode_batch's split: the GPU side's pace) */
} kiln__gpu_image_source;

/* KILN_OK when kiln__gpu_bc_ring can encode images of img's pixel type and size class in
 * params->format on ctx's device, else KILN_ERR_UNSUPPORTED (with a message) or another failure. */
kiln_status kiln__gpu_bc_ring_probe(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params);

/* Encodes every image of src into the nfmt (1..8) formats of params (BC1, BC1a, BC3, BC4, BC5, and the
 * ETC / EAC formats, which it hands to the ETC ring of gpu_encode_etc_ring.inc: the formats
 * kiln__gpu_bc_ring_probe accepts), with up to 3 block-row batches in flight; the formats of
 * one image whose shader input is the same share one upload. The bytes are kiln__gpu_encode_sync's.
 * Sets ctx->last_gpu_ms (kernel time, summed over the batches). */
kiln_status kiln__gpu_bc_ring(kiln_context *ctx, kiln__gpu_image_source *src, const kiln_encode_params *params,
                              uint32_t nfmt, uint32_t subgroup_size);

/* The synchronous encoders (one submission and wait per batch), as before the pipelined path:
 * the reference tests and bench/ compare kiln__gpu_encode (pipelined for BC and ETC/EAC formats) with. */
kiln_status kiln__gpu_encode_sync(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                                  uint32_t subgroup_size, uint8_t *dst, size_t dst_size);

#endif

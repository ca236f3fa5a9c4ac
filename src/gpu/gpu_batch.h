/* gpu_batch.h - pipelined GPU encoding of several images and formats (owner gpuio; see
 * src/gpu/gpu_encode_bc_ring.inc for the design). No Vulkan types. Without Vulkan,
 * src/gpu/stub/gpu_batch_stub.c reports that no device exists. */
#ifndef KILN_GPU_BATCH_H
#define KILN_GPU_BATCH_H

#include "gpu/gpu.h"

#include <stdlib.h>

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

/* ---------------------------------------------------------------- jobs of several images (both rings)
 * kiln__gpu_bc_ring (gpu_encode_bc_ring.inc) and kiln__gpu_etc_ring (gpu_encode_etc_ring.inc) cut the images of a
 * source into jobs the same way: a job is an image's next block rows, and when those are the image's last and leave
 * room, the next images of the same width and pixel type stacked block row under block row (segments), every image
 * but a job's last a multiple of 4 rows high, so that no block reads another image's texels and the shaders
 * replicate edges at the same rows: the bytes are those of one job per image (helper split, 2026-11-27: on the H200
 * one 512^2 image a job left the ring host-bound; 16 a job: bc1 fast 256 images 44-47 -> 30-31 ms). */

/* formats of one ring call at most */
#define KILN__GPU_RING_MAX_FMT 8
/* images a job may hold (KILN_RING_PACK=1..64 lowers it; 1: one image a job) */
#define KILN__RING_MAX_SEG 64

/* One image's part of a job: its block rows [r0, r0 + nrows) (texel rows y0.., ty of them) at block row jrow of
 * the job. */
typedef struct kiln__ring_seg {
    const kiln_image *img;
    uint8_t *dst[KILN__GPU_RING_MAX_FMT]; /* the image's destinations of the job's formats */
    uint32_t r0, nrows, y0, ty, jrow;
} kiln__ring_seg;

/* A job's segments. */
typedef struct kiln__ring_segs {
    uint32_t nrows, ty; /* block rows and texel rows of all segments */
    uint32_t nseg;
    kiln__ring_seg seg[KILN__RING_MAX_SEG];
} kiln__ring_segs;

/* The image being cut into jobs: its destinations (one per format of the ring call) and its next block row. */
typedef struct kiln__ring_cursor {
    const kiln_image *img; /* NULL: none (the source is done) */
    uint8_t *dst[KILN__GPU_RING_MAX_FMT];
    uint32_t r0;
} kiln__ring_cursor;

/* A ring's start of the next image (it sets the cursor: img, dst, r0 = 0); *one_group = 1 when every format of the
 * call reads the same upload of it (only such images share a job). */
typedef kiln_status (*kiln__ring_start_fn)(void *ring, const kiln_image *img, uint8_t *const *dst, int *one_group);

/* KILN_RING_PACK (1..KILN__RING_MAX_SEG, default KILN__RING_MAX_SEG). */
static inline uint32_t kiln__ring_pack(void)
{
    uint32_t pack = KILN__RING_MAX_SEG;
    const char *e = getenv("KILN_RING_PACK");
    if (e && e[0] >= '1' && e[0] <= '9') pack = (uint32_t)strtoul(e, NULL, 10);
    return pack > KILN__RING_MAX_SEG ? KILN__RING_MAX_SEG : pack;
}

/* Cuts a job of at most rows block rows into js: the cursor's image's next rows; then, while the image is done, it is
 * a multiple of 4 rows high, the job has room and holds fewer than pack images, and the call's formats are one upload
 * group (one_group), the source's next images (start() sets them up) if of the image's width and pixel type (else the
 * next job begins with it). The job's formats are fsel[0 .. nf-1] (indices into the cursor's dst). *img_done = 1 when
 * the cursor's image was cut to its end (the ring moves to its next upload group). rows >= 1. */
static inline kiln_status kiln__ring_cut(kiln__ring_segs *js, kiln__ring_cursor *cur, const uint32_t *fsel, uint32_t nf,
                                         size_t rows, uint32_t pack, int one_group, kiln__gpu_image_source *src,
                                         kiln__ring_start_fn start, void *ring, int *img_done)
{
    const uint32_t w = cur->img->width;
    const kiln_pixel_type type = cur->img->type;
    js->nrows = js->ty = js->nseg = 0;
    *img_done = 0;
    for (;;) {
        const uint32_t ih = cur->img->height, iby = (ih + 3) / 4;
        kiln__ring_seg *sg = &js->seg[js->nseg++];
        sg->img = cur->img;
        for (uint32_t i = 0; i < nf; i++) sg->dst[i] = cur->dst[fsel[i]];
        sg->r0 = cur->r0;
        sg->nrows = iby - cur->r0 < rows - js->nrows ? iby - cur->r0 : (uint32_t)(rows - js->nrows);
        sg->y0 = sg->r0 * 4;
        sg->ty = ih - sg->y0 < sg->nrows * 4 ? ih - sg->y0 : sg->nrows * 4;
        sg->jrow = js->nrows;
        js->nrows += sg->nrows;
        js->ty += sg->ty;
        cur->r0 += sg->nrows;
        *img_done = cur->r0 >= iby;
        if (*img_done) cur->r0 = 0;
        if (pack <= 1 || js->nseg >= pack || js->nseg >= KILN__RING_MAX_SEG || !one_group || !*img_done ||
            js->nrows >= rows || ih % 4 != 0 || !src)
            break;
        const kiln_image *ni = NULL;
        uint8_t *nd[KILN__GPU_RING_MAX_FMT];
        if (!src->next(src->user, &ni, nd)) {
            cur->img = NULL;
            break;
        }
        *img_done = 0;
        KILN_TRY(start(ring, ni, nd, &one_group));
        if (ni->width != w || ni->type != type || !one_group) break; /* the next job begins with it */
    }
    return KILN_OK;
}

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

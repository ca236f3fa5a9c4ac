/* gpu_encode.c - kiln__gpu_encode: routes an encode to the GPU encoder of the format's family. BC1-BC5
 * go through the pipelined encoder (gpu_encode_bc_ring.inc: block-row batches overlap upload, kernels
 * and download) unless the environment has KILN_GPU_SYNC=1; kiln__gpu_encode_sync is the synchronous
 * path (one submission and wait per batch) that tests and bench/ compare with. */
#include "gpu/gpu_batch.h"
#include "gpu/gpu_encode.h"

#include <stdlib.h>

kiln_status kiln__gpu_encode_sync(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                                  uint32_t subgroup_size, uint8_t *dst, size_t dst_size)
{
    const kiln_format_info *fi = kiln_format_get_info(params->format);
    if (!fi) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_encode: unknown format %d", (int)params->format);
    if (params->bc1_black &&
        (fi->format == KILN_FORMAT_BC1_RGB_UNORM || fi->format == KILN_FORMAT_BC1_RGB_SRGB) &&
        params->quality != KILN_QUALITY_FAST)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s with bc1_black (--bc1-black) has no GPU encoder", fi->name);
    switch (fi->format) {
    case KILN_FORMAT_BC1_RGB_UNORM: case KILN_FORMAT_BC1_RGB_SRGB:
    case KILN_FORMAT_BC1_RGBA_UNORM: case KILN_FORMAT_BC1_RGBA_SRGB:
    case KILN_FORMAT_BC3_UNORM: case KILN_FORMAT_BC3_SRGB:
    case KILN_FORMAT_BC4_UNORM: case KILN_FORMAT_BC4_SNORM:
    case KILN_FORMAT_BC5_UNORM: case KILN_FORMAT_BC5_SNORM:
        return kiln__gpu_encode_bc(ctx, img, params, subgroup_size, dst, dst_size);
    case KILN_FORMAT_ETC1_UNORM: case KILN_FORMAT_ETC1_SRGB:
    case KILN_FORMAT_ETC2_RGB8_UNORM: case KILN_FORMAT_ETC2_RGB8_SRGB:
    case KILN_FORMAT_ETC2_RGB8A1_UNORM: case KILN_FORMAT_ETC2_RGB8A1_SRGB:
    case KILN_FORMAT_ETC2_RGBA8_UNORM: case KILN_FORMAT_ETC2_RGBA8_SRGB:
    case KILN_FORMAT_EAC_R11_UNORM: case KILN_FORMAT_EAC_R11_SNORM:
    case KILN_FORMAT_EAC_RG11_UNORM: case KILN_FORMAT_EAC_RG11_SNORM:
        return kiln__gpu_encode_etc(ctx, img, params, subgroup_size, dst, dst_size);
    case KILN_FORMAT_BC6H_UFLOAT: case KILN_FORMAT_BC6H_SFLOAT:
        return kiln__gpu_encode_bc6h(ctx, img, params, subgroup_size, dst, dst_size);
    default:
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s has no GPU encoder", fi->name);
    }
}

typedef struct one_image {
    const kiln_image *img;
    uint8_t *dst;
    int done;
} one_image;

static int one_next(void *user, const kiln_image **img, uint8_t **dst)
{
    one_image *o = user;
    if (o->done) return 0;
    o->done = 1;
    *img = o->img;
    dst[0] = o->dst;
    return 1;
}

kiln_status kiln__gpu_encode(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                             uint32_t subgroup_size, uint8_t *dst, size_t dst_size)
{
    const char *sync = getenv("KILN_GPU_SYNC");
    if (sync && sync[0] == '1') return kiln__gpu_encode_sync(ctx, img, params, subgroup_size, dst, dst_size);
    const kiln_format_info *fi = kiln_format_get_info(params->format);
    if (!fi || !img || !img->pixels || img->width == 0 || img->height == 0)
        return kiln__gpu_encode_sync(ctx, img, params, subgroup_size, dst, dst_size); /* reports the problem */
    const size_t need = kiln_format_image_size(fi->format, img->width, img->height);
    if (need == 0 || !dst || dst_size < need)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "GPU encode: %ux%u %s needs %zu bytes, the buffer holds %zu",
                          img->width, img->height, fi->name, need, dst ? dst_size : (size_t)0);
    kiln_status st = kiln__gpu_bc_ring_probe(ctx, img, params);
    if (st == KILN_ERR_UNSUPPORTED) {
        kiln__clear_error(ctx);
        return kiln__gpu_encode_sync(ctx, img, params, subgroup_size, dst, dst_size);
    }
    if (st != KILN_OK) return st;
    one_image o = {img, dst, 0};
    kiln__gpu_image_source src = {one_next, &o, (uint64_t)((img->width + 3) / 4) * ((img->height + 3) / 4), NULL};
    return kiln__gpu_bc_ring(ctx, &src, params, 1, subgroup_size);
}

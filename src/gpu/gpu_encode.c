/* gpu_encode.c - kiln__gpu_encode: routes an encode to the GPU encoder of the format's family. */
#include "gpu/gpu_encode.h"

kiln_status kiln__gpu_encode(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
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

/* gpu_encode_bc6h.c - PLACEHOLDER: being written (GPU encoders). Reports UNSUPPORTED until then. */
#include "gpu/gpu_encode.h"

kiln_status kiln__gpu_encode_bc6h(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                                uint32_t subgroup_size, uint8_t *dst, size_t dst_size)
{
    (void)img; (void)subgroup_size; (void)dst; (void)dst_size;
    return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s has no GPU encoder yet",
                      kiln_format_get_info(params->format)->name);
}

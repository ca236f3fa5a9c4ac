/* gpu_batch_stub.c - gpu_batch.h when kiln is built without Vulkan: there is never a device. */
#include "gpu/gpu_batch.h"

kiln_status kiln__gpu_bc_ring_probe(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params)
{
    (void)img;
    (void)params;
    return kiln__fail(ctx, KILN_ERR_NO_DEVICE, "kiln was built without the Vulkan backend");
}

kiln_status kiln__gpu_bc_ring(kiln_context *ctx, kiln__gpu_image_source *src, const kiln_encode_params *params,
                              uint32_t nfmt, uint32_t subgroup_size)
{
    (void)src;
    (void)params;
    (void)nfmt;
    (void)subgroup_size;
    return kiln__fail(ctx, KILN_ERR_NO_DEVICE, "kiln was built without the Vulkan backend");
}

kiln_status kiln__gpu_encode_sync(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                                  uint32_t subgroup_size, uint8_t *dst, size_t dst_size)
{
    return kiln__gpu_encode(ctx, img, params, subgroup_size, dst, dst_size);
}

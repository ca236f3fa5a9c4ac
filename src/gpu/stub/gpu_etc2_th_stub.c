/* gpu_etc2_th_stub.c - kiln__gpu_etc2_th without the Vulkan backend: no device. */
#include "gpu/gpu_etc2_th.h"

#include "core/internal.h"

kiln_status kiln__gpu_etc2_th(kiln_context *ctx, const uint8_t *rgba8, uint32_t w, uint32_t h,
                              const kiln_encode_params *params, int a1, uint32_t subgroup_size,
                              kiln_etc2_gpu_block *blocks, double *ms)
{
    (void)rgba8, (void)w, (void)h, (void)params, (void)a1, (void)subgroup_size, (void)blocks, (void)ms;
    return kiln__fail(ctx, KILN_ERR_NO_DEVICE, "kiln was built without the Vulkan backend (ETC2 T/H pass)");
}

/* gpu_mip16_stub.c - kiln__gpu_mip16_generate without the Vulkan backend (helper mip16). */
#include "gpu/gpu_mip16_api.h"

kiln_status kiln__gpu_mip16_generate(kiln_context *ctx, const kiln__gpu_mip_job *job, double *device_ms)
{
    (void)job;
    if (device_ms) *device_ms = 0.0;
    return kiln__fail(ctx, KILN_ERR_NO_DEVICE, "kiln was built without the Vulkan backend");
}

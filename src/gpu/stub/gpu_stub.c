/* gpu_stub.c - the GPU interface when kiln is built without Vulkan: there is never a device. */
#include "gpu/gpu.h"

#include <stdio.h>

int kiln__gpu_wanted(kiln_context *ctx, kiln_status *status)
{
    if (status) *status = KILN_OK;
    if (ctx->params.backend == KILN_BACKEND_VULKAN) {
        if (status) *status = kiln__fail(ctx, KILN_ERR_NO_DEVICE, "kiln was built without the Vulkan backend");
        return 0;
    }
    ctx->resolved = KILN_BACKEND_CPU;
    return 0;
}

kiln_status kiln__gpu_get(kiln_context *ctx, kiln_gpu **out)
{
    *out = NULL;
    return kiln__fail(ctx, KILN_ERR_NO_DEVICE, "kiln was built without the Vulkan backend");
}

void kiln__gpu_destroy(kiln_gpu *gpu) { (void)gpu; }

kiln_status kiln__gpu_decode(kiln_context *ctx, const kiln_texture *tex, uint32_t level, uint32_t layer,
                             uint32_t face, kiln_image *out)
{
    return kiln__fail(ctx, KILN_ERR_NO_DEVICE, "kiln was built without the Vulkan backend");
}

kiln_status kiln_gpu_list(kiln_context *ctx, kiln_gpu_info *infos, uint32_t capacity, uint32_t *count)
{
    if (count) *count = 0;
    return KILN_OK;
}

kiln_backend kiln_context_backend(kiln_context *ctx)
{
    return KILN_BACKEND_CPU;
}

const kiln_gpu_info *kiln_context_gpu(kiln_context *ctx) { return NULL; }

/* gpu_mip_encode_stub.c - gpu_mip_encode.h when kiln is built without Vulkan: there is never a device,
 * so kiln_encode_mips always takes the host path. */
#include "gpu/gpu_mip_encode.h"

#include <string.h>

kiln_status kiln__gpu_encode_mips(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                                  const kiln_mip_params *mip, kiln_texture *out)
{
    (void)img;
    (void)params;
    (void)mip;
    (void)out;
    return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "kiln was built without the Vulkan backend");
}

void kiln__gpu_mip_encode_stats_get(kiln_context *ctx, kiln__gpu_mip_encode_stats *out)
{
    (void)ctx;
    if (out) memset(out, 0, sizeof *out);
}

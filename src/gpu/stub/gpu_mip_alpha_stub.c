/* gpu_mip_alpha_stub.c - kiln__gpu_mip_alpha_stats_get without the Vulkan backend (helper alphacov). */
#include "gpu/gpu_mip_alpha.h"

#include <string.h>

void kiln__gpu_mip_alpha_stats_get(kiln_context *ctx, kiln__gpu_mip_alpha_stats *out)
{
    (void)ctx;
    if (out) memset(out, 0, sizeof *out);
}

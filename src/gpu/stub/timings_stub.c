/* timings_stub.c - kiln_timings.h without Vulkan: no device, so no GPU phases and no pipeline cache. */
#include "core/internal.h"
#include "kiln/kiln_timings.h"

#include <string.h>

kiln_status kiln_context_gpu_timings(kiln_context *ctx, kiln_gpu_timings *out)
{
    if (!ctx || !out) return KILN_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    return KILN_OK;
}

kiln_status kiln_context_save_pipeline_cache(kiln_context *ctx)
{
    return ctx ? KILN_OK : KILN_ERR_INVALID_ARGUMENT;
}

/* gpu_flame_entry.c - kiln__flame_iterate_gpu, the GPU chaos game's entry point declared in flame.h
 * (owner: flamegpu). Its presence makes CMake define KILN_FLAME_GPU for src/flame/render.c. The work is
 * done by kiln__flame_iterate_gpu_ex (src/gpu/gpu_flame.c in Vulkan builds; src/gpu/stub/gpu_stub.c,
 * which reports KILN_ERR_NO_DEVICE, otherwise). Backend rules:
 *   VULKAN: a missing device is KILN_ERR_NO_DEVICE, a genome the GPU path cannot take is
 *           KILN_ERR_UNSUPPORTED (both errors for the caller).
 *   AUTO:   the device kiln__gpu_wanted accepts (CPU implementations such as lavapipe only with
 *           KILN_ALLOW_CPU_VULKAN=1); when there is none, or the GPU path cannot take the genome,
 *           KILN_ERR_NO_DEVICE so that kiln_flame_render falls back to the CPU chaos game (the reason
 *           is printed when the context is verbose). */
#include "flame/gpu_flame.h"
#include "gpu/gpu.h"

#include <stdio.h>

kiln_status kiln__flame_iterate_gpu(kiln_context *ctx, const kiln_flame *flame, const kiln_flame_setup *setup,
                                    kiln_flame_hist *hist)
{
    const int aut = ctx->params.backend == KILN_BACKEND_AUTO;
    if (ctx->params.backend != KILN_BACKEND_VULKAN) {
        kiln_status st = KILN_OK;
        if (!kiln__gpu_wanted(ctx, &st)) {
            if (st != KILN_OK) return st;
            return kiln__fail(ctx, KILN_ERR_NO_DEVICE, "flame \"%s\": no Vulkan device for the GPU renderer",
                              flame ? flame->name : "");
        }
    }
    kiln_status st = kiln__flame_iterate_gpu_ex(ctx, flame, setup, NULL, hist, NULL);
    if (st == KILN_ERR_UNSUPPORTED && aut) {
        char why[sizeof ctx->error];
        snprintf(why, sizeof why, "%s", kiln_last_error(ctx));
        if (ctx->params.verbose) fprintf(stderr, "kiln: %s; rendering on the CPU\n", why);
        return kiln__fail(ctx, KILN_ERR_NO_DEVICE, "GPU flame renderer: %s", why);
    }
    return st;
}

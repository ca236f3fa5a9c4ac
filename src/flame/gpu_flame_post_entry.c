/* gpu_flame_post_entry.c - kiln__flame_render_gpu (owner: flamepost): the whole flame on the GPU,
 * chaos game (src/gpu/gpu_flame.c) and post-processing (src/gpu/gpu_flame_post.c), with the histogram
 * kept on the device. Same backend rules as kiln__flame_iterate_gpu (src/flame/gpu_flame_entry.c):
 *   VULKAN: no device is KILN_ERR_NO_DEVICE, a genome the GPU path cannot take KILN_ERR_UNSUPPORTED.
 *   AUTO:   only a device kiln__gpu_wanted accepts; when there is none, or the GPU path cannot take
 *           the genome, KILN_ERR_NO_DEVICE so that kiln_flame_render renders on the CPU.
 * Built in every configuration (the chaos game's stub reports KILN_ERR_NO_DEVICE without Vulkan). */
#include "flame/gpu_flame.h"
#include "gpu/gpu.h"

#include <stdio.h>
#include <string.h>

kiln_status kiln__flame_render_gpu(kiln_context *ctx, const kiln_flame *flame, const kiln_flame_setup *setup,
                                   kiln_image *out)
{
    if (!out) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln__flame_render_gpu: out is NULL");
    memset(out, 0, sizeof *out);
    const int aut = ctx->params.backend == KILN_BACKEND_AUTO;
    if (ctx->params.backend != KILN_BACKEND_VULKAN) {
        kiln_status st = KILN_OK;
        if (!kiln__gpu_wanted(ctx, &st)) {
            if (st != KILN_OK) return st;
            return kiln__fail(ctx, KILN_ERR_NO_DEVICE, "flame \"%s\": no Vulkan device for the GPU renderer",
                              flame ? flame->name : "");
        }
    }
    kiln_flame_gpu_opts o;
    memset(&o, 0, sizeof o);
    o.post_out = out;
    kiln_flame_hist hist;
    memset(&hist, 0, sizeof hist);
    kiln_status st = kiln__flame_iterate_gpu_ex(ctx, flame, setup, &o, &hist, NULL);
    kiln__flame_hist_free(&hist); /* empty when post_out is honoured */
    if (st != KILN_OK) kiln_image_free(out);
    if (st == KILN_ERR_UNSUPPORTED && aut) {
        char why[sizeof ctx->error];
        snprintf(why, sizeof why, "%s", kiln_last_error(ctx));
        if (ctx->params.verbose) fprintf(stderr, "kiln: %s; rendering on the CPU\n", why);
        return kiln__fail(ctx, KILN_ERR_NO_DEVICE, "GPU flame renderer: %s", why);
    }
    if (st == KILN_OK && !out->pixels)
        return kiln__fail(ctx, KILN_ERR_GPU, "flame \"%s\": the GPU renderer returned no image", flame->name);
    return st;
}

/* gpu_stub.c - the GPU interface when kiln is built without Vulkan: there is never a device. */
#include "gpu/gpu.h"

#include <stdio.h>

int kiln__gpu_wanted(kiln_context *ctx, kiln_status *status)
{
    if (status) *status = KILN_OK;
    if (ctx->params.backend == KILN_BACKEND_CPU) {
        ctx->resolved = KILN_BACKEND_CPU;
        return 0;
    }
    /* as in src/gpu/vk_device.c: an explicit device index that does not exist is an error */
    if (ctx->params.device_index >= 0) {
        kiln_status st = kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT,
                                    "Vulkan device %d does not exist: kiln was built without the Vulkan backend",
                                    ctx->params.device_index);
        if (status) *status = st;
        return 0;
    }
    if (ctx->params.backend == KILN_BACKEND_VULKAN) {
        kiln_status st = kiln__fail(ctx, KILN_ERR_NO_DEVICE,
                                    "no Vulkan device found: kiln was built without the Vulkan backend "
                                    "(rebuild with -DKILN_VULKAN=ON) or use --backend cpu");
        if (status) *status = st;
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
    if (out) out->pixels = NULL;
    return kiln__fail(ctx, KILN_ERR_NO_DEVICE, "kiln was built without the Vulkan backend");
}

kiln_status kiln__gpu_encode(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                             uint32_t subgroup_size, uint8_t *dst, size_t dst_size)
{
    (void)img; (void)params; (void)subgroup_size; (void)dst; (void)dst_size;
    return kiln__fail(ctx, KILN_ERR_NO_DEVICE, "kiln was built without the Vulkan backend");
}

kiln_status kiln_gpu_list(kiln_context *ctx, kiln_gpu_info *infos, uint32_t capacity, uint32_t *count)
{
    if (count) *count = 0;
    if (!ctx) return KILN_ERR_INVALID_ARGUMENT;
    kiln__clear_error(ctx);
    if (!count) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_gpu_list: count is NULL");
    if (capacity > 0 && !infos) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_gpu_list: infos is NULL");
    return KILN_OK;
}

kiln_backend kiln_context_backend(kiln_context *ctx)
{
    return KILN_BACKEND_CPU;
}

const kiln_gpu_info *kiln_context_gpu(kiln_context *ctx) { return NULL; }

uint32_t kiln__gpu_validation_messages(kiln_context *ctx) { return 0; }

int kiln__gpu_validation_active(kiln_context *ctx) { return 0; }

kiln_status kiln__gpu_decode_blocks(kiln_context *ctx, kiln_format format, const uint8_t *blocks, size_t size,
                                    uint32_t width, uint32_t height, uint32_t subgroup_size, kiln_image *out)
{
    return kiln__fail(ctx, KILN_ERR_NO_DEVICE, "kiln was built without the Vulkan backend");
}

uint32_t kiln__gpu_subgroup_sizes(kiln_context *ctx) { return 0; }

kiln_status kiln__gpu_sample_blocks(kiln_context *ctx, kiln_format format, const uint8_t *blocks, uint32_t width,
                                    uint32_t height, float *out)
{
    return kiln__fail(ctx, KILN_ERR_NO_DEVICE, "kiln was built without the Vulkan backend");
}

int kiln__gpu_device_is_cpu(kiln_context *ctx, uint32_t index) { return 0; }

kiln_status kiln__gpu_mip(kiln_context *ctx, const kiln__gpu_mip_job *job)
{
    (void)job;
    return kiln__fail(ctx, KILN_ERR_NO_DEVICE, "kiln was built without the Vulkan backend");
}

kiln_status kiln__gpu_mip_bench(kiln_context *ctx, uint32_t w, uint32_t h, uint32_t count, int alpha,
                                const int *strategies, uint32_t nstrat, uint32_t runs, double *ms, double *copy_ms,
                                double *bytes_moved)
{
    (void)w; (void)h; (void)count; (void)alpha; (void)strategies; (void)nstrat; (void)runs; (void)ms; (void)copy_ms;
    (void)bytes_moved;
    return kiln__fail(ctx, KILN_ERR_NO_DEVICE, "kiln was built without the Vulkan backend");
}

/* ---- fractal flames (owner: flamegpu; src/flame/gpu_flame.h) ---- */
#include "flame/gpu_flame.h"

#include <string.h>

kiln_status kiln__flame_iterate_gpu_ex(kiln_context *ctx, const kiln_flame *flame, const kiln_flame_setup *setup,
                                       const kiln_flame_gpu_opts *opts, kiln_flame_hist *hist,
                                       kiln_flame_gpu_stats *stats)
{
    (void)flame; (void)setup; (void)opts; (void)stats;
    if (hist) memset(hist, 0, sizeof *hist);
    return kiln__fail(ctx, KILN_ERR_NO_DEVICE, "kiln was built without the Vulkan backend");
}

/* ---- flame post-processing (owner: flamepost; src/flame/gpu_flame.h) ---- */
kiln_status kiln__flame_post_gpu(kiln_context *ctx, const kiln_flame *flame, const kiln_flame_setup *setup,
                                 const kiln_flame_hist *hist, kiln_image *out, kiln_flame_post_stats *stats)
{
    (void)flame; (void)setup; (void)hist; (void)stats;
    if (out) memset(out, 0, sizeof *out);
    return kiln__fail(ctx, KILN_ERR_NO_DEVICE, "kiln was built without the Vulkan backend");
}

/* vk.h's kiln_vk_pipeline_stats (the tests call it): without Vulkan there are no pipelines */
struct kiln_vk_pipeline;
kiln_status kiln_vk_pipeline_stats(kiln_context *ctx, kiln_gpu *gpu, const struct kiln_vk_pipeline *pipe, char *buf, size_t size,
                                   uint32_t *nstats);
kiln_status kiln_vk_pipeline_stats(kiln_context *ctx, kiln_gpu *gpu, const struct kiln_vk_pipeline *pipe, char *buf, size_t size,
                                   uint32_t *nstats)
{
    (void)gpu;
    (void)pipe;
    if (nstats) *nstats = 0;
    if (buf && size) buf[0] = 0;
    return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "pipeline statistics: kiln was built without the Vulkan backend");
}

/* gpu_encode_etc.c's test hook (tests/unit/test_gpu_etc2_seed.c calls it) */
kiln_status kiln__gpu_encode_etc2_alpha(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                                        uint32_t subgroup_size, uint8_t *dst, size_t dst_size);
kiln_status kiln__gpu_encode_etc2_alpha(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                                        uint32_t subgroup_size, uint8_t *dst, size_t dst_size)
{
    (void)img;
    (void)params;
    (void)subgroup_size;
    (void)dst;
    (void)dst_size;
    return kiln__fail(ctx, KILN_ERR_NO_DEVICE, "GPU ETC2 alpha encode: kiln was built without the Vulkan backend");
}

/* gpu_mip.h's plan-inspection aid (bench/gpu_mip.c, tests): no GPU plans without the Vulkan backend */
uint32_t kiln__gpu_mip_plan_dispatches(uint32_t W, uint32_t H, uint32_t L, uint32_t count, int strategy, char *desc,
                                       size_t desc_size);
uint32_t kiln__gpu_mip_plan_dispatches(uint32_t W, uint32_t H, uint32_t L, uint32_t count, int strategy, char *desc,
                                       size_t desc_size)
{
    (void)W, (void)H, (void)L, (void)count, (void)strategy;
    if (desc && desc_size) desc[0] = 0;
    return 0;
}

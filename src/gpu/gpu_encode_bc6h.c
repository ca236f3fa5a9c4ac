/* gpu_encode_bc6h.c - BC6H encoding on the GPU.
 *
 * gpu_strategy 1 (seed): GPURealTimeBC6H as betsy ships it, shaders/enc_bc6h_seed.comp, one
 *   invocation per block; fast -> its "fast" preset (mode 3 only), normal/high/max -> its "quality"
 *   preset (+ the best bounding-box partition in modes 1 and 14). UF16 only, as the original: SF16 is
 *   KILN_ERR_UNSUPPORTED (AUTO then encodes on the CPU).
 * gpu_strategy 0 (kiln): shaders/enc_bc6h.comp, UF16 and SF16, quality fast only: four invocations
 *   per block try the one-subset modes in parallel (the CPU's fast search, src/codec/bc6h_enc.c), a
 *   shared-memory min-reduction picks the CPU's winner, which gets the CPU's least-squares pass.
 *   normal/high/max have no kiln GPU design yet: KILN_ERR_UNSUPPORTED, so AUTO uses the CPU encoder.
 *
 * The image goes up as RGBA float rows in batches of block rows that fit the device's storage-buffer
 * range; each batch's blocks come back in order. Kernel time of all batches: ctx->last_gpu_ms. */
#include "gpu/gpu_encode.h"
#include "gpu/vk.h"

#include <stdlib.h>
#include <string.h>

#define BC6H_LOCAL_SIZE 64u
#define BC6H_BATCH_MAX (256u << 20)

#define BC6H_KILN_LANES 4u /* invocations per block in enc_bc6h.comp (its LANES) */

static kiln_status run_shader(kiln_context *ctx, const kiln_image *img, const char *shader, uint32_t spec,
                              uint32_t lanes, uint32_t subgroup_size, uint8_t *dst)
{
    kiln_gpu *gpu;
    KILN_TRY(kiln__gpu_get(ctx, &gpu));
    const kiln_vk_pipeline *pipe;
    kiln_vk_pipeline_desc desc = {
        .shader = shader,
        .local_size = BC6H_LOCAL_SIZE,
        .spec = &spec,
        .nspec = 1,
        .nbindings = 2,
        .push_size = 16,
        .subgroup_size = subgroup_size,
    };
    KILN_TRY(kiln_vk_pipeline_get(ctx, gpu, &desc, &pipe));

    const uint32_t w = img->width, h = img->height, bx = (w + 3) / 4, by = (h + 3) / 4;
    const size_t in_row = (size_t)w * 4 * 16; /* four texel rows of RGBA float */
    const size_t out_row = (size_t)bx * 16;
    size_t limit = gpu->props.limits.maxStorageBufferRange;
    if (limit > BC6H_BATCH_MAX) limit = BC6H_BATCH_MAX;
    const char *dbg = getenv("KILN_GPU_BATCH_BYTES"); /* testing aid: force small batches */
    if (dbg && strtoull(dbg, NULL, 10) > 0 && strtoull(dbg, NULL, 10) < limit) limit = (size_t)strtoull(dbg, NULL, 10);
    size_t rows = limit / in_row;
    if (rows == 0)
        return kiln__fail(ctx, KILN_ERR_TOO_LARGE, "BC6H GPU encode: a block row of %u texels (%zu bytes) exceeds the device's buffer range (%zu)",
                          w, in_row, limit);
    if (rows > by) rows = by;
    kiln_vk_io in, out;
    memset(&in, 0, sizeof in);
    memset(&out, 0, sizeof out);
    kiln_status st = kiln_vk_io_create(ctx, gpu, rows * in_row, 0, &in);
    if (st == KILN_OK) st = kiln_vk_io_create(ctx, gpu, rows * out_row, 1, &out);
    double total_ms = 0.0;
    for (uint32_t r0 = 0; st == KILN_OK && r0 < by; r0 += (uint32_t)rows) {
        uint32_t nrows = by - r0 < rows ? by - r0 : (uint32_t)rows;
        uint32_t texel_rows = h - r0 * 4 < nrows * 4 ? h - r0 * 4 : nrows * 4;
        size_t in_bytes = (size_t)texel_rows * w * 16, out_bytes = nrows * out_row;
        /* F32 images are RGBA floats already: the rows go up as they are */
        memcpy(kiln_vk_io_map(&in), (const uint8_t *)img->pixels + (size_t)r0 * 4 * w * 16, in_bytes);
        st = kiln_vk_buffer_flush(ctx, gpu, in.direct ? &in.dev : &in.staging);
        if (st != KILN_OK) break;
        kiln_vk_cmd cmd;
        st = kiln_vk_cmd_begin(ctx, gpu, 1, &cmd);
        if (st != KILN_OK) break;
        kiln_vk_cmd_upload(&cmd, &in, in_bytes);
        kiln_vk_cmd_timestamp(&cmd, 0);
        uint32_t push[4] = {bx, nrows, w, texel_rows};
        kiln_vk_binding b[2] = {{.buffer = in.dev.buffer, .range = in_bytes}, {.buffer = out.dev.buffer, .range = out_bytes}};
        st = kiln_vk_cmd_dispatch_linear(ctx, &cmd, pipe, b, push, (uint64_t)bx * nrows * lanes);
        kiln_vk_cmd_timestamp(&cmd, 1);
        kiln_vk_cmd_download(&cmd, &out, out_bytes);
        double ms = 0.0;
        if (st == KILN_OK) st = kiln_vk_cmd_submit(ctx, &cmd, &ms);
        kiln_vk_cmd_free(&cmd);
        total_ms += ms;
        if (st == KILN_OK) st = kiln_vk_buffer_invalidate(ctx, gpu, out.direct ? &out.dev : &out.staging);
        if (st == KILN_OK) memcpy(dst + (size_t)r0 * out_row, kiln_vk_io_map(&out), out_bytes);
        if (st == KILN_OK) st = kiln__progress(ctx, (float)(r0 + nrows) / (float)by);
    }
    kiln_vk_io_destroy(gpu, &in);
    kiln_vk_io_destroy(gpu, &out);
    if (st == KILN_OK) ctx->last_gpu_ms = total_ms;
    return st;
}

kiln_status kiln__gpu_encode_bc6h(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                                  uint32_t subgroup_size, uint8_t *dst, size_t dst_size)
{
    const kiln_format_info *fi = kiln_format_get_info(params->format);
    static const char *qn[4] = {"fast", "normal", "high", "max"};
    const char *q = (unsigned)params->quality < 4u ? qn[params->quality] : "?";
    const int kiln_design = params->gpu_strategy == 0;
    if ((params->gpu_strategy != 0 && params->gpu_strategy != 1) || (kiln_design && params->quality != KILN_QUALITY_FAST))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s at quality %s has no kiln GPU encoder yet (kiln's GPU design covers quality fast; the seed strategy has one for BC6H UF16)",
                          fi->name, q);
    if (params->format != KILN_FORMAT_BC6H_UFLOAT && params->format != KILN_FORMAT_BC6H_SFLOAT)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "BC6H GPU encode: %s is not a BC6H format", fi->name);
    if (!kiln_design && params->format != KILN_FORMAT_BC6H_UFLOAT)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "the seed GPU design (GPURealTimeBC6H) encodes BC6H UF16 only, not %s",
                          fi->name);
    if (!img || !img->pixels || img->type != KILN_PIXEL_F32)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "BC6H GPU encode: needs a float (HDR) image; this one is %s",
                          img && img->type == KILN_PIXEL_U8 ? "8-bit" : "16-bit");
    size_t need = kiln_format_image_size(params->format, img->width, img->height);
    if (need == 0 || !dst || dst_size < need)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "BC6H GPU encode: %ux%u needs %zu bytes, the buffer holds %zu",
                          img->width, img->height, need, dst ? dst_size : (size_t)0);
    if (kiln_design)
        return run_shader(ctx, img, "enc_bc6h", params->format == KILN_FORMAT_BC6H_SFLOAT ? 1u : 0u, BC6H_KILN_LANES,
                          subgroup_size, dst);
    return run_shader(ctx, img, "enc_bc6h_seed", params->quality == KILN_QUALITY_FAST ? 0u : 1u, 1u, subgroup_size, dst);
}

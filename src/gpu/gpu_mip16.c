/* gpu_mip16.c - 16-bit sources on the GPU mip paths (helper mip16, issue 5). See gpu_mip16.h and
 * gpu_mip16_api.h. Exactness: the chain is mip.c's float chain of the decoded base (the GPU float mip
 * pass matches the CPU bit for bit on float images); mip16_convert.comp quantises with the CPU's
 * unorm16 arithmetic (fp64, exact) and, for sRGB colour, against the decision points of
 * kiln__linear_to_srgb16 (src/mip/mip16_quant.c). */
#include "gpu/gpu_mip16.h"
#include "gpu/gpu_mip16_api.h"
#include "gpu/gpu_mip.h"
#include "gpu/gpu_mip_alpha_vk.h"
#include "image/color.h"
#include "mip/mip.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const float *kiln__gpu_mip16_cached_thresholds(kiln_context *ctx, kiln_gpu *gpu, int srgb, int *roundtrip)
{
    const int k = srgb ? 1 : 0;
    if (!gpu->mip16_thr[k]) {
        float *t = kiln__malloc(ctx, (size_t)KILN_GPU_MIP16_THR_FLOATS * sizeof *t);
        if (!t) return NULL;
        kiln__gpu_mip16_thresholds(t, k);
        gpu->mip16_roundtrip[k] = kiln__gpu_mip16_roundtrip(t, k);
        gpu->mip16_thr[k] = t;
    }
    if (roundtrip) *roundtrip = gpu->mip16_roundtrip[k];
    return gpu->mip16_thr[k];
}

kiln_status kiln__gpu_mip16_pipeline(kiln_context *ctx, kiln_gpu *gpu, const kiln_vk_pipeline **out)
{
    VkPhysicalDeviceFeatures f;
    vkGetPhysicalDeviceFeatures(gpu->physical, &f);
    if (!f.shaderFloat64)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "16-bit GPU mipmaps: mip16_convert.comp needs shaderFloat64");
    kiln_vk_pipeline_desc d = {.shader = "mip16_convert", .local_size = 64, .nbindings = 3, .push_size = 4 * 4};
    return kiln_vk_pipeline_get(ctx, gpu, &d, out);
}

kiln_status kiln__gpu_mip16_record(kiln_context *ctx, kiln_vk_cmd *cmd, const kiln_vk_pipeline *pipe,
                                   const kiln_vk_binding *texels, const kiln_vk_binding *words,
                                   const kiln_vk_binding *thr, uint32_t n, uint32_t mode, uint32_t nch, uint32_t flags)
{
    const kiln_vk_binding b[3] = {*texels, *words, *thr};
    const uint32_t push[4] = {n, mode, nch, flags};
    return kiln_vk_cmd_dispatch_linear(ctx, cmd, pipe, b, push, n);
}

/* Helper mipfall: besides 16-bit levels (out_kind 2), one raw 16-bit image into RGBA8 (1), RGBA16F (3) or RGBA32F
 * (4) levels (kiln_mip_texture; before, mip.c decoded the base on the host and ran kiln__gpu_mip on it): the base
 * decoded on the device, the float chain, then gpu_mip_alpha.c's pass 2 writes RGBA8 / RGBA16F from it (sRGB8
 * colour when out_srgb; kiln__float_to_half) and RGBA32F is the chain itself (copied out); and alpha coverage
 * (alpha_coverage_ref > 0, raw image only: the base coverage counts its 16-bit alpha as mip.c does) for every kind:
 * counted and scaled on the device (16-bit levels: alpha' patched into the float chain, then mip16_convert.comp
 * quantises it as mip.c's U16 sink). */
kiln_status kiln__gpu_mip16_generate(kiln_context *ctx, const kiln__gpu_mip_job *job, double *device_ms)
{
    if (device_ms) *device_ms = 0.0;
    if (!job || !job->images || job->count != 1 || !job->dst || job->out_kind < 1 || job->out_kind > 4)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "16-bit GPU mipmaps: one image into RGBA8, RGBA16, RGBA16F or RGBA32F");
    if (job->strategy == KILN_MIP_STRATEGY_BASELINE)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "16-bit GPU mipmaps: not with the baseline strategy");
    /* blit (helper mipfall): the base decoded on the host to linear RGBA32F, vkCmdBlitImage's chain in
     * R32G32B32A32_SFLOAT (gpu_mip_blit.c), then the same conversions; the box filter only, no coverage (as 8-bit) */
    const int blit = job->strategy == KILN_MIP_STRATEGY_BLIT;
    if (blit && (job->filter != KILN_MIP_FILTER_BOX || job->normal_map || job->alpha_coverage_ref > 0.0f ||
                 job->images[0].type != KILN_PIXEL_U16))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                          "16-bit GPU mipmaps: the blit strategy filters a 16-bit image with a box, without alpha coverage");
    const kiln_image *b0 = &job->images[0];
    /* the raw 16-bit image (helper mip16b: decoded here, on the device unless KILN_GPU_MIP16_DEVICE_DECODE=0) or
     * the base mip.c decoded (F32, decode_srgb 0; no normal maps: their mapping needs the unorm source) */
    const int raw = b0->type == KILN_PIXEL_U16;
    const int kind = job->out_kind, cov = job->alpha_coverage_ref > 0.0f;
    if ((!raw && (b0->type != KILN_PIXEL_F32 || job->decode_srgb || job->normal_map)) || (job->normal_map && job->out_srgb))
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "16-bit GPU mipmaps: a 16-bit image or its decoded base");
    if (!raw && (kind != 2 || cov))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "16-bit GPU mipmaps: other outputs and alpha coverage take the raw image");
    if (kind != 2 && (job->normal_map || ((kind == 3 || kind == 4) && job->out_srgb)))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                          "16-bit GPU mipmaps: normal maps and sRGB float outputs of 16-bit images are made on the CPU");
    if (cov && !(job->alpha_coverage_ref < 1.0f))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "16-bit GPU mipmaps: alpha coverage reference %g",
                          (double)job->alpha_coverage_ref);
    const uint32_t W = b0->width, H = b0->height, L = job->levels;
    if (L < 2 || L > KILN_GPU_MIP_MAX_LEVELS || L > kiln_mip_level_count(W, H))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "16-bit GPU mipmaps: %u levels", L);
    kiln_gpu *gpu;
    KILN_TRY(kiln__gpu_get(ctx, &gpu));
    const kiln_vk_pipeline *conv = NULL;
    if (kind == 2) KILN_TRY(kiln__gpu_mip16_pipeline(ctx, gpu, &conv));
    const VkDeviceSize bpt = kind == 1 ? 4 : kind == 4 ? 16 : 8;
    VkDeviceSize align = gpu->props.limits.minStorageBufferOffsetAlignment;
    if (align < 16) align = 16;
    VkDeviceSize off[KILN_GPU_MIP_MAX_LEVELS], bytes = 0;
    for (uint32_t l = 1; l < L; l++) {
        off[l] = bytes;
        bytes += (VkDeviceSize)kiln_level_dim(W, l) * kiln_level_dim(H, l) * bpt;
        bytes = (bytes + align - 1) / align * align;
    }
    if (bytes > gpu->props.limits.maxStorageBufferRange)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "16-bit GPU mipmaps: %ux%u exceeds %s's storage range", W, H,
                          gpu->props.deviceName);
    kiln__gpu_mip_job fj = *job;
    fj.out_kind = 4; /* the float chain on the device */
    fj.out_srgb = 0;
    fj.dst = NULL;
    fj.decode_srgb = 0;
    fj.alpha_coverage_ref = 0.0f; /* (gpu_mip_alpha.c below) */
    kiln_vk_io outb = {0}, tab = {0};
    kiln__gpu_mip_dev md;
    memset(&md, 0, sizeof md);
    kiln__gpu_mip_alpha a;
    memset(&a, 0, sizeof a);
    kiln_vk_cmd cmd;
    memset(&cmd, 0, sizeof cmd);
    /* raw: the decoded base (sizes only when the device decodes it) */
    kiln_image fimg;
    memset(&fimg, 0, sizeof fimg);
    kiln__gpu_mip16_dec dec;
    memset(&dec, 0, sizeof dec);
    const int devdec = raw && !blit && kiln__gpu_mip16_device_decode();
    const int filt = job->filter != KILN_MIP_FILTER_BOX || job->normal_map;
    kiln_status st = KILN_OK;
    if (raw && devdec) {
        fimg.width = W;
        fimg.height = H;
        fimg.type = KILN_PIXEL_F32;
        fimg.channels = b0->channels;
        fimg.hdr = b0->hdr;
        st = kiln__gpu_mip16_dec_prepare(ctx, gpu, b0, job->decode_srgb, &dec);
    } else if (raw) {
        st = kiln__mip_decode_f32(ctx, b0, job->decode_srgb, &fimg);
    }
    if (raw) fj.images = &fimg;
    if (st == KILN_OK) st = kiln_vk_io_create(ctx, gpu, bytes, 1, &outb);
    if (st == KILN_OK && kind == 2) st = kiln_vk_io_create(ctx, gpu, (VkDeviceSize)KILN_GPU_MIP16_THR_FLOATS * 4, 0, &tab);
    if (st == KILN_OK && kind == 2) {
        const float *t = kiln__gpu_mip16_cached_thresholds(ctx, gpu, job->out_srgb, NULL);
        if (!t) st = KILN_ERR_OUT_OF_MEMORY;
        else {
            memcpy(kiln_vk_io_map(&tab), t, (size_t)KILN_GPU_MIP16_THR_FLOATS * sizeof *t);
            st = kiln_vk_buffer_flush(ctx, gpu, tab.direct ? &tab.dev : &tab.staging);
        }
    }
    double ms = 0.0, ms2 = 0.0;
    if (st == KILN_OK) st = kiln_vk_cmd_begin(ctx, gpu, KILN_GPU_MIP_MAX_DISPATCHES(L) + L + 2, &cmd);
    if (st == KILN_OK) {
        kiln__gpu_mip_poison(cmd.cb, (VkBuffer[]){outb.dev.buffer}, 1); /* testing aid */
        if (kind == 2) kiln_vk_cmd_upload(&cmd, &tab, 0);
        if (devdec) kiln__gpu_mip16_dec_upload(&cmd, &dec);
        kiln_vk_cmd_timestamp(&cmd, 0);
        if (blit) /* (the host-decoded base uploaded by gpu_mip_blit.c) */
            st = kiln__gpu_mip_blit_record(ctx, gpu, &fj, (uint32_t)align, &cmd, VK_NULL_HANDLE, &md);
        else if (raw && filt) /* quality filters, normal maps (n = 2v - 1 of the decoded unorm base, 0.5 n + 0.5 out) */
            st = kiln__gpu_mip16_filter_record(ctx, gpu, &fj, (uint32_t)align, &cmd, VK_NULL_HANDLE, &md,
                                               devdec ? kiln__gpu_mip16_dec_fill : NULL, devdec ? &dec : NULL,
                                               job->normal_map);
        else if (devdec)
            st = kiln__gpu_mip_record_fill(ctx, gpu, &fj, (uint32_t)align, &cmd, VK_NULL_HANDLE, &md,
                                           kiln__gpu_mip16_dec_fill, &dec);
        else
            st = kiln__gpu_mip_record(ctx, gpu, &fj, (uint32_t)align, &cmd, VK_NULL_HANDLE, &md);
        /* the chain's levels for gpu_mip_alpha.c: alpha coverage (any kind) or the RGBA8 / RGBA16F conversion */
        if (st == KILN_OK && (cov || kind == 1 || kind == 3)) {
            st = kiln__gpu_mip_alpha_init(ctx, gpu, &a, L - 1);
            uint64_t cov0 = 0;
            if (st == KILN_OK && cov) st = kiln__gpu_mip_alpha_base_coverage(ctx, b0, job->alpha_coverage_ref, &cov0);
            if (st == KILN_OK) {
                const uint64_t n0 = (uint64_t)W * H;
                /* mip.c: the threshold of the sink kind (1 U8, 2 U16, 3 F16, 4 F32) */
                a.thr = cov ? kiln__mip_alpha_pass_threshold(kind, job->alpha_coverage_ref) : 0.0f;
                a.mode = kind == 1 ? KILN_GPU_MIP_ALPHA_CONVERT_U8 : kind == 3 ? KILN_GPU_MIP_ALPHA_CONVERT_F16
                                                                              : KILN_GPU_MIP_ALPHA_PATCH_F32;
                a.srgb = kind == 1 && job->out_srgb;
                a.chain = md.out;
                a.out = kind == 1 || kind == 3 ? outb.dev.buffer : md.out;
                for (uint32_t l = 1; l < L; l++) {
                    kiln__gpu_mip_alpha_pair *q = &a.pairs[l - 1];
                    q->n = kiln_level_dim(W, l) * kiln_level_dim(H, l);
                    q->chain_vec4 = md.off[l] / 16;
                    q->out_word = a.out == md.out ? md.off[l] / 4 : off[l] / 4;
                    q->target = cov ? (2 * cov0 * q->n + n0) / (2 * n0) : 0; /* round(cov0 * n / n0), as run_chain */
                }
                st = kiln__gpu_mip_alpha_prepare(ctx, &a);
            }
        }
        if (st == KILN_OK && cov) {
            kiln_vk_cmd_timestamp(&cmd, 1);
            /* submits the mip pass with the counting pass; cmd begun anew with pass 2 recorded, a barrier after it */
            st = kiln__gpu_mip_alpha_run(ctx, &a, &cmd, L + 2, &ms);
        } else if (st == KILN_OK && (kind == 1 || kind == 3)) {
            st = kiln__gpu_mip_alpha_convert(ctx, &a, &cmd);
        } else if (st == KILN_OK) {
            kiln_vk_cmd_barrier(&cmd);
        }
        const kiln_vk_binding tb = {.buffer = tab.dev.buffer, .range = (VkDeviceSize)KILN_GPU_MIP16_THR_FLOATS * 4};
        for (uint32_t l = 1; l < L && st == KILN_OK && kind == 2; l++) {
            const uint32_t n = kiln_level_dim(W, l) * kiln_level_dim(H, l);
            const kiln_vk_binding src = {.buffer = md.out, .offset = md.off[l], .range = (VkDeviceSize)n * 16};
            const kiln_vk_binding dst = {.buffer = outb.dev.buffer, .offset = off[l], .range = (VkDeviceSize)n * 8};
            st = kiln__gpu_mip16_record(ctx, &cmd, conv, &src, &dst, &tb, n, 6u, 4u, job->out_srgb ? 2u : 0u);
        }
        if (st == KILN_OK && kind == 4) { /* RGBA32F: the chain's levels (alpha' patched in place) */
            /* (the chain: compute writes, or the blit's image -> buffer copies) */
            VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                                  .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                                  .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT};
            vkCmdPipelineBarrier(cmd.cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                                 VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
            VkBufferCopy regions[KILN_GPU_MIP_MAX_LEVELS];
            for (uint32_t l = 1; l < L; l++)
                regions[l - 1] = (VkBufferCopy){md.off[l], off[l], (VkDeviceSize)kiln_level_dim(W, l) * kiln_level_dim(H, l) * 16};
            vkCmdCopyBuffer(cmd.cb, md.out, outb.dev.buffer, L - 1, regions);
            VkMemoryBarrier hb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                                  .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_HOST_READ_BIT};
            vkCmdPipelineBarrier(cmd.cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                                 0, 1, &hb, 0, NULL, 0, NULL);
        }
        if (st == KILN_OK) {
            if (!cov) kiln_vk_cmd_timestamp(&cmd, 1);
            kiln_vk_cmd_download(&cmd, &outb, bytes);
            st = kiln_vk_cmd_submit(ctx, &cmd, &ms2);
            if (device_ms) *device_ms = ms + ms2;
        }
    }
    kiln_vk_cmd_free(&cmd);
    if (st == KILN_OK) st = kiln_vk_buffer_invalidate(ctx, gpu, outb.direct ? &outb.dev : &outb.staging);
    if (st == KILN_OK) {
        const uint8_t *src = kiln_vk_io_map(&outb);
        for (uint32_t l = 1; l < L; l++)
            memcpy(job->dst[l], src + off[l], (size_t)kiln_level_dim(W, l) * kiln_level_dim(H, l) * bpt);
        if (ctx->params.verbose)
            fprintf(stderr, "kiln: 16-bit mipmaps on %s (%s): %sfloat chain%s and %s on the device\n", gpu->props.deviceName,
                    md.what, devdec ? "base decoded, " : "", cov ? ", alpha coverage" : "",
                    kind == 2   ? "16-bit quantisation"
                    : kind == 1 ? "RGBA8 quantisation"
                    : kind == 3 ? "RGBA16F conversion"
                                : "RGBA32F levels");
    }
    kiln__gpu_mip_alpha_free(&a);
    kiln__gpu_mip_dev_free(&md);
    kiln__gpu_mip16_dec_free(&dec);
    kiln_image_free(&fimg);
    kiln_vk_io_destroy(gpu, &outb);
    kiln_vk_io_destroy(gpu, &tab);
    return st;
}

/* ---- the 16-bit base decoded on the device (helper mip16dev; gpu_mip16.h) ---- */

int kiln__gpu_mip16_device_decode(void)
{
    const char *e = getenv("KILN_GPU_MIP16_DEVICE_DECODE");
    if (e && (e[0] == '0' || e[0] == '2') && e[1] == 0) return e[0] - '0';
    return 1;
}

typedef struct dec_rows_job {
    uint8_t *dst;
    const uint8_t *src;
    size_t row;
} dec_rows_job;

static void dec_copy_rows(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    const dec_rows_job *c = user;
    memcpy(c->dst + begin * c->row, c->src + begin * c->row, (end - begin) * c->row);
}

kiln_status kiln__gpu_mip16_dec_prepare(kiln_context *ctx, kiln_gpu *gpu, const kiln_image *img, int srgb,
                                        kiln__gpu_mip16_dec *dec)
{
    memset(dec, 0, sizeof *dec);
    dec->gpu = gpu;
    if (!img || img->type != KILN_PIXEL_U16 || !img->pixels || img->width == 0 || img->height == 0)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "16-bit device decode: not a 16-bit image");
    const uint64_t n = (uint64_t)img->width * img->height;
    if (n > UINT32_MAX / 2 || n * 16 > gpu->props.limits.maxStorageBufferRange)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "16-bit device decode: %ux%u exceeds %s's storage range",
                          img->width, img->height, gpu->props.deviceName);
    dec->n = (uint32_t)n;
    kiln_vk_pipeline_desc d = {.shader = "mip16_decode", .local_size = 64, .nbindings = 3, .push_size = 4};
    KILN_TRY(kiln_vk_pipeline_get(ctx, gpu, &d, &dec->pipe));
    kiln_status st = kiln_vk_io_create(ctx, gpu, (VkDeviceSize)n * 8, 0, &dec->texels);
    if (st == KILN_OK) st = kiln_vk_io_create(ctx, gpu, (VkDeviceSize)2 * 65536 * 4, 0, &dec->lut);
    if (st == KILN_OK) { /* mip.c decode_row, KILN_PIXEL_U16, value by value */
        float *t = kiln_vk_io_map(&dec->lut);
        const int wrong = kiln__gpu_mip16_device_decode() == 2; /* testing aid: black colour */
        for (uint32_t v = 0; v < 65536; v++) {
            t[v] = wrong ? 0.0f : srgb ? kiln__srgb16_to_linear((uint16_t)v) : (float)v / 65535.0f;
            t[65536 + v] = (float)v / 65535.0f;
        }
        st = kiln_vk_buffer_flush(ctx, gpu, dec->lut.direct ? &dec->lut.dev : &dec->lut.staging);
    }
    if (st == KILN_OK) {
        dec_rows_job cj = {kiln_vk_io_map(&dec->texels), img->pixels, (size_t)img->width * 8};
        st = kiln__parallel_for(ctx, img->height, 64, dec_copy_rows, &cj);
    }
    if (st == KILN_OK) st = kiln_vk_buffer_flush(ctx, gpu, dec->texels.direct ? &dec->texels.dev : &dec->texels.staging);
    if (st != KILN_OK) kiln__gpu_mip16_dec_free(dec);
    return st;
}

kiln_status kiln__gpu_mip16_dec_fill(kiln_context *ctx, kiln_vk_cmd *cmd, VkBuffer in, void *user)
{
    kiln__gpu_mip16_dec *dec = user;
    if (!dec || !dec->pipe || !in) return kiln__fail(ctx, KILN_ERR_INTERNAL, "16-bit device decode: not prepared");
    const kiln_vk_binding b[3] = {{.buffer = dec->texels.dev.buffer, .range = (VkDeviceSize)dec->n * 8},
                                  {.buffer = in, .range = (VkDeviceSize)dec->n * 16},
                                  {.buffer = dec->lut.dev.buffer, .range = (VkDeviceSize)2 * 65536 * 4}};
    const uint32_t push[1] = {dec->n};
    return kiln_vk_cmd_dispatch_linear(ctx, cmd, dec->pipe, b, push, dec->n);
}

void kiln__gpu_mip16_dec_upload(kiln_vk_cmd *cmd, kiln__gpu_mip16_dec *dec)
{
    kiln_vk_cmd_upload(cmd, &dec->texels, 0);
    kiln_vk_cmd_upload(cmd, &dec->lut, 0);
}

void kiln__gpu_mip16_dec_free(kiln__gpu_mip16_dec *dec)
{
    if (!dec) return;
    if (dec->gpu) {
        kiln_vk_io_destroy(dec->gpu, &dec->texels);
        kiln_vk_io_destroy(dec->gpu, &dec->lut);
    }
    memset(dec, 0, sizeof *dec);
}

/* gpu_mip_blit.c - the `blit` mipmap strategy: the classic vkCmdBlitImage chain (vulkan-tutorial,
 * stripe2933/mipmap): one VkImage with every level (array layers = the images of a batch), level
 * l-1 blitted to level l with VK_FILTER_LINEAR, a layout transition per level. Needs a queue with
 * graphics capability (vkCmdBlitImage) and BLIT_SRC/BLIT_DST/linear-filter support for the format.
 *
 * What the hardware blit computes is NOT the CPU reference everywhere: on even axes a linear 2:1
 * blit samples at the shared corner of 2x2 texels, i.e. the exact box (sRGB formats are filtered
 * after decoding, within the implementation's precision); on ODD axes it samples at (x + 0.5) * D/n,
 * a 2-tap bilinear footprint instead of the 3-tap NP2 kernel, and it never weights colour by alpha.
 * So `blit` matches the CPU within 1 LSB only for opaque images whose levels are all even (powers of
 * two); tests check exactly that and document the rest (notes/mipmaps.md: up to 218 LSB on NP2).
 * kiln__gpu_mip_blit_record (helper mipres2, issue 5): the same chain recorded into gpu_mip_encode.c's
 * command buffer, the levels copied image -> buffer on the device for the encoders (end of file). */
#include "gpu/gpu_mip.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct blit_img {
    VkImage image;
    VkDeviceMemory memory;
} blit_img;

static void blit_img_free(kiln_gpu *gpu, blit_img *b)
{
    if (b->image) vkDestroyImage(gpu->device, b->image, NULL);
    if (b->memory) vkFreeMemory(gpu->device, b->memory, NULL);
    memset(b, 0, sizeof *b);
}

/* Transfer-stage layout transition of levels [level, level + nlevels) (blit chains only use transfers). */
static void barrier_levels(VkCommandBuffer cb, VkImage image, uint32_t level, uint32_t nlevels, uint32_t layers,
                           VkImageLayout from, VkImageLayout to, VkAccessFlags src, VkAccessFlags dst)
{
    kiln_vk_image_barrier(cb, image, level, nlevels, layers, from, to, src, dst,
                          VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT);
}

static kiln_status blit_create(kiln_context *ctx, kiln_gpu *gpu, VkFormat f, uint32_t w, uint32_t h, uint32_t levels,
                               uint32_t layers, blit_img *out)
{
    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(gpu->physical, &nq, NULL);
    VkQueueFamilyProperties *q = kiln__calloc(ctx, nq ? nq : 1, sizeof *q);
    if (!q) return KILN_ERR_OUT_OF_MEMORY;
    vkGetPhysicalDeviceQueueFamilyProperties(gpu->physical, &nq, q);
    int graphics = gpu->queue_family < nq && (q[gpu->queue_family].queueFlags & VK_QUEUE_GRAPHICS_BIT);
    free(q);
    if (!graphics)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                          "GPU mipmaps: the blit strategy needs a graphics queue; %s's queue family %u is compute-only",
                          gpu->props.deviceName, gpu->queue_family);
    VkFormatProperties fp;
    vkGetPhysicalDeviceFormatProperties(gpu->physical, f, &fp);
    VkFormatFeatureFlags need = VK_FORMAT_FEATURE_BLIT_SRC_BIT | VK_FORMAT_FEATURE_BLIT_DST_BIT |
                                VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT;
    if ((fp.optimalTilingFeatures & need) != need)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "GPU mipmaps: %s cannot blit VkFormat %d with a linear filter",
                          gpu->props.deviceName, (int)f);
    VkImageCreateInfo ici = {
        .sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO,
        .imageType = VK_IMAGE_TYPE_2D,
        .format = f,
        .extent = {w, h, 1},
        .mipLevels = levels,
        .arrayLayers = layers,
        .samples = VK_SAMPLE_COUNT_1_BIT,
        .tiling = VK_IMAGE_TILING_OPTIMAL,
        .usage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
        .initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
    };
    VkImageFormatProperties ifp;
    if (vkGetPhysicalDeviceImageFormatProperties(gpu->physical, f, VK_IMAGE_TYPE_2D, VK_IMAGE_TILING_OPTIMAL, ici.usage, 0,
                                                 &ifp) != VK_SUCCESS ||
        ifp.maxExtent.width < w || ifp.maxExtent.height < h || ifp.maxArrayLayers < layers || ifp.maxMipLevels < levels)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "GPU mipmaps: %s cannot make a %ux%u image of %u layers for blits",
                          gpu->props.deviceName, w, h, layers);
    KILN_VK_TRY(ctx, vkCreateImage, (gpu->device, &ici, NULL, &out->image));
    KILN_TRY(kiln_vk_image_memory(ctx, gpu, out->image, "the GPU mipmaps' blit image", &out->memory));
    return KILN_OK;
}

/* Level 0 from `src` (all layers), then the blit chain; level L-1 ends in TRANSFER_SRC_OPTIMAL like the others. */
static void record_chain(kiln_vk_cmd *cmd, VkImage image, VkBuffer src, uint32_t w, uint32_t h, uint32_t L,
                         uint32_t layers, int upload, int timed)
{
    VkCommandBuffer cb = cmd->cb;
    if (upload) {
        barrier_levels(cb, image, 0, L, layers, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 0,
                       VK_ACCESS_TRANSFER_WRITE_BIT);
        VkBufferImageCopy region = {.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, layers}, .imageExtent = {w, h, 1}};
        vkCmdCopyBufferToImage(cb, src, image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
    } else {
        /* repeated bench runs: level 0 stays, levels 1.. are rewritten */
        barrier_levels(cb, image, 0, 1, layers, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                       VK_ACCESS_TRANSFER_READ_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
        if (L > 1)
            barrier_levels(cb, image, 1, L - 1, layers, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                           VK_ACCESS_TRANSFER_READ_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
    }
    if (timed) kiln_vk_cmd_timestamp(cmd, 0);
    for (uint32_t l = 1; l < L; l++) {
        barrier_levels(cb, image, l - 1, 1, layers, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                       VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_TRANSFER_READ_BIT);
        VkImageBlit b = {
            .srcSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, l - 1, 0, layers},
            .srcOffsets = {{0, 0, 0}, {(int32_t)kiln_level_dim(w, l - 1), (int32_t)kiln_level_dim(h, l - 1), 1}},
            .dstSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, l, 0, layers},
            .dstOffsets = {{0, 0, 0}, {(int32_t)kiln_level_dim(w, l), (int32_t)kiln_level_dim(h, l), 1}},
        };
        vkCmdBlitImage(cb, image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &b,
                       VK_FILTER_LINEAR);
    }
    barrier_levels(cb, image, L - 1, 1, layers, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                   VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_TRANSFER_READ_BIT);
    if (timed) kiln_vk_cmd_timestamp(cmd, 1);
}

/* The blit image's format for job: it keeps the input format (RGBA8 in one colour space, linear RGBA32F). */
static kiln_status blit_format(kiln_context *ctx, const kiln__gpu_mip_job *job, VkFormat *f, size_t *bpt)
{
    const kiln_image *b0 = &job->images[0];
    if (b0->type == KILN_PIXEL_U8 && job->out_kind == 1 && job->decode_srgb == job->out_srgb) {
        *f = job->out_srgb ? VK_FORMAT_R8G8B8A8_SRGB : VK_FORMAT_R8G8B8A8_UNORM;
        *bpt = 4;
    } else if (b0->type == KILN_PIXEL_F32 && job->out_kind == 4 && !job->decode_srgb && !job->out_srgb) {
        *f = VK_FORMAT_R32G32B32A32_SFLOAT;
        *bpt = 16;
    } else {
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                          "GPU mipmaps: the blit strategy keeps the input format (RGBA8 -> RGBA8 in one colour space, or "
                          "linear RGBA32F -> RGBA32F)");
    }
    return KILN_OK;
}

kiln_status kiln__gpu_mip_blit(kiln_context *ctx, kiln_gpu *gpu, const kiln__gpu_mip_job *job, double *ms)
{
    const kiln_image *b0 = &job->images[0];
    const uint32_t W = b0->width, H = b0->height, L = job->levels, n = job->count;
    VkFormat f;
    size_t bpt;
    KILN_TRY(blit_format(ctx, job, &f, &bpt));
    size_t lvl_bytes[64], total = 0;
    for (uint32_t l = 0; l < L; l++) {
        lvl_bytes[l] = (size_t)kiln_level_dim(W, l) * kiln_level_dim(H, l) * bpt * n;
        total += lvl_bytes[l];
    }
    blit_img img = {0};
    kiln_vk_io in, out;
    memset(&in, 0, sizeof in);
    memset(&out, 0, sizeof out);
    kiln_vk_cmd cmd;
    memset(&cmd, 0, sizeof cmd);
    kiln_status st = blit_create(ctx, gpu, f, W, H, L, n, &img);
    if (st == KILN_OK) st = kiln_vk_io_create(ctx, gpu, lvl_bytes[0], 0, &in);
    if (st == KILN_OK) st = kiln_vk_io_create(ctx, gpu, total - lvl_bytes[0], 1, &out);
    if (st == KILN_OK) {
        uint8_t *m = kiln_vk_io_map(&in);
        size_t one = lvl_bytes[0] / n;
        for (uint32_t i = 0; i < n; i++) memcpy(m + i * one, job->images[i].pixels, one);
        st = kiln_vk_buffer_flush(ctx, gpu, in.direct ? &in.dev : &in.staging);
    }
    if (st == KILN_OK) st = kiln_vk_cmd_begin(ctx, gpu, 1, &cmd);
    if (st == KILN_OK) {
        kiln_vk_cmd_upload(&cmd, &in, 0);
        record_chain(&cmd, img.image, in.dev.buffer, W, H, L, n, 1, 1);
        VkDeviceSize off = 0;
        for (uint32_t l = 1; l < L; l++) {
            VkBufferImageCopy region = {.bufferOffset = off,
                                        .imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, l, 0, n},
                                        .imageExtent = {kiln_level_dim(W, l), kiln_level_dim(H, l), 1}};
            vkCmdCopyImageToBuffer(cmd.cb, img.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, out.dev.buffer, 1, &region);
            off += lvl_bytes[l];
        }
        /* transfer writes -> (staging copy / host) */
        VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                              .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                              .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_HOST_READ_BIT};
        vkCmdPipelineBarrier(cmd.cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                             0, 1, &mb, 0, NULL, 0, NULL);
        if (!out.direct) {
            VkBufferCopy region = {0, 0, total - lvl_bytes[0]};
            vkCmdCopyBuffer(cmd.cb, out.dev.buffer, out.staging.buffer, 1, &region);
            VkMemoryBarrier hb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                                  .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                                  .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
            vkCmdPipelineBarrier(cmd.cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &hb, 0, NULL, 0,
                                 NULL);
        }
        st = kiln_vk_cmd_submit(ctx, &cmd, ms);
    }
    kiln_vk_cmd_free(&cmd);
    if (st == KILN_OK) st = kiln_vk_buffer_invalidate(ctx, gpu, out.direct ? &out.dev : &out.staging);
    if (st == KILN_OK) {
        const uint8_t *src = kiln_vk_io_map(&out);
        size_t off = 0;
        for (uint32_t l = 1; l < L; l++) {
            size_t one = lvl_bytes[l] / n;
            for (uint32_t i = 0; i < n; i++) memcpy(job->dst[(size_t)i * L + l], src + off + i * one, one);
            off += lvl_bytes[l];
        }
    }
    kiln_vk_io_destroy(gpu, &in);
    kiln_vk_io_destroy(gpu, &out);
    blit_img_free(gpu, &img);
    return st;
}

kiln_status kiln__gpu_mip_blit_bench(kiln_context *ctx, kiln_gpu *gpu, uint32_t w, uint32_t h, uint32_t count,
                                     VkBuffer texels, VkBuffer evict, uint32_t runs, double *ms)
{
    const uint32_t L = kiln_mip_level_count(w, h);
    blit_img img = {0};
    kiln_status st = blit_create(ctx, gpu, VK_FORMAT_R8G8B8A8_SRGB, w, h, L, count, &img);
    for (uint32_t i = 0; i <= 2 * runs && st == KILN_OK; i++) {
        int cold = i >= 1 && i <= runs;
        kiln_vk_cmd cmd;
        st = kiln_vk_cmd_begin(ctx, gpu, 1, &cmd);
        if (st != KILN_OK) break;
        if (cold) {
            vkCmdFillBuffer(cmd.cb, evict, 0, VK_WHOLE_SIZE, i);
            VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                                  .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                                  .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
            vkCmdPipelineBarrier(cmd.cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, NULL,
                                 0, NULL);
        }
        record_chain(&cmd, img.image, texels, w, h, L, count, i == 0, 1);
        double t = 0.0;
        st = kiln_vk_cmd_submit(ctx, &cmd, &t);
        kiln_vk_cmd_free(&cmd);
        if (st == KILN_OK && i >= 1) ms[i - 1] = t;
    }
    blit_img_free(gpu, &img);
    return st;
}

/* ---------------------------------------------------------------- device-resident chains (helper mipres2)
 * kiln__gpu_mip_blit_record (gpu_mip.h): the chain of kiln__gpu_mip_blit for one image, recorded into the
 * caller's command buffer (gpu_mip_encode.c), the levels copied image -> buffer on the device into the
 * layout the encoders read (tight rows, level l at dev->off[l]) instead of down to the host. The bytes
 * are kiln__gpu_mip_blit's: the same image format, upload, blits and tight copies. */

typedef struct blit_run {
    blit_img img;
    kiln_vk_io in;
    kiln_vk_buffer out;
} blit_run;

static void blit_run_free(kiln_gpu *gpu, void *run)
{
    blit_run *r = run;
    kiln_vk_io_destroy(gpu, &r->in);
    kiln_vk_buffer_destroy(gpu, &r->out);
    blit_img_free(gpu, &r->img);
    free(r);
}

kiln_status kiln__gpu_mip_blit_record(kiln_context *ctx, kiln_gpu *gpu, const kiln__gpu_mip_job *job, uint32_t align_bytes,
                                      kiln_vk_cmd *cmd, VkQueryPool qp, kiln__gpu_mip_dev *dev)
{
    memset(dev, 0, sizeof *dev);
    dev->gpu = gpu;
    if (!job || !job->images || job->count != 1)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "device-resident GPU mipmaps: the blit chain is recorded for one image");
    const kiln_image *b0 = &job->images[0];
    const uint32_t W = b0->width, H = b0->height, L = job->levels;
    if (L < 2 || L > KILN_GPU_MIP_MAX_LEVELS || L > kiln_mip_level_count(W, H))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "device-resident GPU mipmaps: %u levels for %ux%u", L, W, H);
    if (align_bytes == 0 || align_bytes % 4 != 0 || (align_bytes & (align_bytes - 1)) != 0)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "GPU mipmaps: level alignment %u", align_bytes);
    VkFormat f;
    size_t bpt;
    KILN_TRY(blit_format(ctx, job, &f, &bpt));
    /* level l at an offset aligned for both the encoders' bindings and the copy (a multiple of bpt) */
    const VkDeviceSize a = align_bytes > bpt ? align_bytes : bpt, base = (VkDeviceSize)W * H * bpt;
    VkDeviceSize total = 0;
    for (uint32_t l = 1; l < L; l++) {
        dev->off[l] = total;
        total = (total + (VkDeviceSize)kiln_level_dim(W, l) * kiln_level_dim(H, l) * bpt + a - 1) / a * a;
    }
    const VkDeviceSize range = gpu->props.limits.maxStorageBufferRange;
    if (base > range || total > range)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "device-resident GPU mipmaps: a %ux%u chain exceeds %s's storage range", W,
                          H, gpu->props.deviceName);
    blit_run *r = kiln__calloc(ctx, 1, sizeof *r);
    if (!r) return KILN_ERR_OUT_OF_MEMORY;
    dev->run = r;
    dev->free_run = blit_run_free;
    KILN_TRY(blit_create(ctx, gpu, f, W, H, L, 1, &r->img));
    KILN_TRY(kiln_vk_io_create(ctx, gpu, base, 0, &r->in));
    KILN_TRY(kiln_vk_buffer_create(ctx, gpu, total, KILN_VK_MEM_DEVICE, &r->out));
    memcpy(kiln_vk_io_map(&r->in), b0->pixels, (size_t)base);
    KILN_TRY(kiln_vk_buffer_flush(ctx, gpu, r->in.direct ? &r->in.dev : &r->in.staging));
    VkCommandBuffer cb = cmd->cb;
    kiln_vk_cmd_upload(cmd, &r->in, 0);
    /* the staged copy (when staged) -> the copy into the image */
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
    if (qp) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp, 0);
    kiln__gpu_mip_poison(cb, &r->out.buffer, 1); /* testing aid */
    record_chain(cmd, r->img.image, r->in.dev.buffer, W, H, L, 1, 1, 0);
    for (uint32_t l = 1; l < L; l++) {
        VkBufferImageCopy region = {.bufferOffset = dev->off[l],
                                    .imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, l, 0, 1},
                                    .imageExtent = {kiln_level_dim(W, l), kiln_level_dim(H, l), 1}};
        vkCmdCopyImageToBuffer(cb, r->img.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, r->out.buffer, 1, &region);
    }
    kiln_vk_cmd_transfer_to_compute(cb);
    dev->in = r->in.dev.buffer;
    dev->out = r->out.buffer;
    dev->image_stride = total;
    dev->dispatches = 0;
    snprintf(dev->what, sizeof dev->what, "box filter, strategy blit (vkCmdBlitImage, %u blits)", L - 1);
    return KILN_OK;
}

/* gpu_sample.c - kiln__gpu_sample_blocks: decode blocks with the device's texture unit (a VkImage of
 * the compressed format read by shaders/sample_fetch.comp), an independent check of kiln's decoders. */
#include "gpu/vk.h"

#include <string.h>

typedef struct sample_state {
    VkImage image;
    VkDeviceMemory memory;
    VkImageView view;
    VkSampler sampler;
    kiln_vk_buffer upload;
    kiln_vk_io out;
    kiln_vk_cmd cmd;
} sample_state;

static void sample_cleanup(kiln_gpu *gpu, sample_state *s)
{
    kiln_vk_cmd_free(&s->cmd);
    kiln_vk_io_destroy(gpu, &s->out);
    kiln_vk_buffer_destroy(gpu, &s->upload);
    if (s->sampler) vkDestroySampler(gpu->device, s->sampler, NULL);
    if (s->view) vkDestroyImageView(gpu->device, s->view, NULL);
    if (s->image) vkDestroyImage(gpu->device, s->image, NULL);
    if (s->memory) vkFreeMemory(gpu->device, s->memory, NULL);
}

static kiln_status sample_run(kiln_context *ctx, kiln_gpu *gpu, sample_state *s, VkFormat vkf, const kiln_format_info *fi,
                              const uint8_t *blocks, size_t bytes, uint32_t width, uint32_t height, float *out)
{
    VkImageCreateInfo ici = {
        .sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO,
        .imageType = VK_IMAGE_TYPE_2D,
        .format = vkf,
        .extent = {width, height, 1},
        .mipLevels = 1,
        .arrayLayers = 1,
        .samples = VK_SAMPLE_COUNT_1_BIT,
        .tiling = VK_IMAGE_TILING_OPTIMAL,
        .usage = VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
        .initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
    };
    KILN_VK_TRY(ctx, vkCreateImage, (gpu->device, &ici, NULL, &s->image));
    KILN_TRY(kiln_vk_image_memory(ctx, gpu, s->image, fi->vk_name, &s->memory));
    VkImageViewCreateInfo vci = {
        .sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO,
        .image = s->image,
        .viewType = VK_IMAGE_VIEW_TYPE_2D,
        .format = vkf,
        .subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1},
    };
    KILN_VK_TRY(ctx, vkCreateImageView, (gpu->device, &vci, NULL, &s->view));
    VkSamplerCreateInfo sci = {
        .sType = VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO,
        .magFilter = VK_FILTER_NEAREST,
        .minFilter = VK_FILTER_NEAREST,
        .mipmapMode = VK_SAMPLER_MIPMAP_MODE_NEAREST,
        .addressModeU = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE,
        .addressModeV = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE,
        .addressModeW = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE,
        .maxLod = 0.0f,
    };
    KILN_VK_TRY(ctx, vkCreateSampler, (gpu->device, &sci, NULL, &s->sampler));

    KILN_TRY(kiln_vk_buffer_create(ctx, gpu, bytes, KILN_VK_MEM_UPLOAD, &s->upload));
    memcpy(s->upload.mapped, blocks, bytes);
    KILN_TRY(kiln_vk_buffer_flush(ctx, gpu, &s->upload));
    size_t out_bytes = (size_t)width * height * 16;
    KILN_TRY(kiln_vk_io_create(ctx, gpu, out_bytes, 1, &s->out));

    static const VkDescriptorType types[2] = {VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER};
    kiln_vk_pipeline_desc desc = {.shader = "sample_fetch", .local_size = 64, .nbindings = 2, .types = types, .push_size = 8};
    const kiln_vk_pipeline *pipe;
    KILN_TRY(kiln_vk_pipeline_get(ctx, gpu, &desc, &pipe));

    KILN_TRY(kiln_vk_cmd_begin(ctx, gpu, 1, &s->cmd));
    VkCommandBuffer cb = s->cmd.cb;
    kiln_vk_image_barrier(cb, s->image, 0, 1, 1, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 0, VK_ACCESS_TRANSFER_WRITE_BIT,
                  VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT);
    VkBufferImageCopy region = {
        .bufferOffset = 0,
        .imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1},
        .imageExtent = {width, height, 1},
    };
    vkCmdCopyBufferToImage(cb, s->upload.buffer, s->image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
    kiln_vk_image_barrier(cb, s->image, 0, 1, 1, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                  VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_SHADER_READ_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                  VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
    kiln_vk_binding b[2] = {
        {.view = s->view, .sampler = s->sampler, .layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL},
        {.buffer = s->out.dev.buffer},
    };
    uint32_t push[2] = {width, height};
    KILN_TRY(kiln_vk_cmd_dispatch_linear(ctx, &s->cmd, pipe, b, push, (uint64_t)width * height));
    kiln_vk_cmd_download(&s->cmd, &s->out, out_bytes);
    KILN_TRY(kiln_vk_cmd_submit(ctx, &s->cmd, NULL));
    KILN_TRY(kiln_vk_buffer_invalidate(ctx, gpu, s->out.direct ? &s->out.dev : &s->out.staging));
    memcpy(out, kiln_vk_io_map(&s->out), out_bytes);
    return KILN_OK;
}

kiln_status kiln__gpu_sample_blocks(kiln_context *ctx, kiln_format format, const uint8_t *blocks, uint32_t width,
                                    uint32_t height, float *out)
{
    const kiln_format_info *fi = kiln_format_get_info(format);
    if (!fi || !(fi->flags & KILN_FF_COMPRESSED))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "sampling checks cover block-compressed formats only");
    if (!blocks || !out || width == 0 || height == 0 || width > 16384 || height > 16384)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "bad arguments to kiln__gpu_sample_blocks");
    kiln_gpu *gpu;
    KILN_TRY(kiln__gpu_get(ctx, &gpu));
    /* sRGB formats decode exactly like their UNORM twin (VkFormat - 1) before the transfer function */
    VkFormat vkf = (VkFormat)((fi->flags & KILN_FF_SRGB) ? fi->vk_format - 1 : fi->vk_format);
    VkFormatProperties fp;
    vkGetPhysicalDeviceFormatProperties(gpu->physical, vkf, &fp);
    int enabled = (fi->dfd_model == 161) ? gpu->phys[gpu->chosen].info.etc2_sampling : gpu->phys[gpu->chosen].info.bc_sampling;
    if (!enabled || !(fp.optimalTilingFeatures & VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s cannot sample %s", gpu->phys[gpu->chosen].info.name, fi->vk_name);
    sample_state s;
    memset(&s, 0, sizeof s);
    kiln_status st = sample_run(ctx, gpu, &s, vkf, fi, blocks, kiln_format_image_size(format, width, height), width, height, out);
    sample_cleanup(gpu, &s);
    return st;
}

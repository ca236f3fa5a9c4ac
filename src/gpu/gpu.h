/* gpu.h - what the rest of kiln sees of the Vulkan backend. No Vulkan types here: src/gpu is the only
 * code that includes <vulkan/vulkan.h>. When kiln is built without Vulkan, src/gpu/stub implements
 * this header by reporting that no device exists. */
#ifndef KILN_GPU_H
#define KILN_GPU_H

#include "core/internal.h"

/* Resolves the context's backend. Returns 1 when work should go to the GPU: backend VULKAN (device
 * created, else KILN_ERR_NO_DEVICE is recorded and *status set), or AUTO with a usable device. With
 * AUTO and no device it returns 0 and, when verbose, says why on stderr (the CPU fallback). */
int kiln__gpu_wanted(kiln_context *ctx, kiln_status *status);

/* Creates (once) and returns the context's GPU. */
kiln_status kiln__gpu_get(kiln_context *ctx, kiln_gpu **out);
void kiln__gpu_destroy(kiln_gpu *gpu);

/* Decodes one image of a block-compressed texture with the decode compute shaders; the output is
 * identical to the CPU decoders'. KILN_ERR_UNSUPPORTED for uncompressed formats. */
kiln_status kiln__gpu_decode(kiln_context *ctx, const kiln_texture *tex, uint32_t level, uint32_t layer,
                             uint32_t face, kiln_image *out);

/* Encodes one image of a block-compressed format on the GPU into dst (kiln_format_image_size bytes),
 * padding by edge replication as the CPU driver does. src/gpu/gpu_encode.c routes by format family
 * to gpu_encode_bc.c (BC1-BC5), gpu_encode_etc.c (ETC1/ETC2/EAC) and gpu_encode_bc6h.c. Returns
 * KILN_ERR_UNSUPPORTED (with a message) when the format/quality has no GPU encoder: the AUTO backend
 * then encodes on the CPU. subgroup_size 0 lets the driver choose, else pipelines require that size.
 * params->gpu_strategy selects kiln's design (0) or the seed design (1). Sets ctx->last_gpu_ms. */
kiln_status kiln__gpu_encode(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                             uint32_t subgroup_size, uint8_t *dst, size_t dst_size);

/* Mipmap chains on the GPU (src/gpu/gpu_mip.c, owner gpumip). `count` images of one size and pixel
 * type (U8 or F32, 4 components stored); levels 1 .. levels-1 of image i are written to
 * dst[i * levels + l] (dst[i * levels] is not touched: level 0 stays the caller's), tightly packed
 * RGBA texels of out_kind (1 = U8, 3 = F16, 4 = F32; the mip.c sink kinds). decode_srgb: colour of
 * the base is sRGB (decoded on read); out_srgb: colour is sRGB-encoded on write; weighted[i]: image
 * i is alpha-weighted (mip.h rule 7). strategy: a kiln_mip_strategy (AUTO = single-pass);
 * subgroup_size 0 = the driver's choice. KILN_ERR_UNSUPPORTED (with a message) for what the GPU
 * path does not do; the caller may then use the CPU. Sets ctx->last_gpu_ms (kernel time). */
typedef struct kiln__gpu_mip_job {
    const kiln_image *images;
    uint32_t count;
    uint32_t levels;
    int decode_srgb, out_srgb;
    int out_kind;
    const uint8_t *weighted;
    uint8_t *const *dst;
    int strategy;
    uint32_t subgroup_size;
    /* the quality filters (src/gpu/gpu_mip_filter.c, owner mipfilters): a kiln_mip_filter and
     * kiln_mip_edge (0 = box, clamp), and normal_map (mip.h rules 3 and 8; never alpha-weighted) */
    int filter, edge, normal_map;
    float alpha_coverage_ref; /* > 0: alpha-coverage scaling (mip.h rule 8), also for the box filter */
} kiln__gpu_mip_job;

kiln_status kiln__gpu_mip(kiln_context *ctx, const kiln__gpu_mip_job *job);

/* Bench hook (bench/gpu_mip.c): `count` synthetic RGBA8 sRGB images of w x h (alpha = 1: varying
 * alpha, so colour is alpha-weighted; else opaque) are uploaded once and kept on the device; each of
 * strategies[0 .. nstrat-1] then runs `runs` times with the L2 cache cold (a 256 MiB scratch buffer
 * written before each run) and `runs` times warm: ms[(s * 2 + 0) * runs + r] cold,
 * ms[(s * 2 + 1) * runs + r] warm (kernel time from timestamps, ms; a strategy that fails gets -1).
 * *bytes_moved = bytes of level 0 read + levels 1..L-1 written (RGBA8, all images); *copy_ms = the
 * fastest of `runs` cold vkCmdCopyBuffer of *bytes_moved / 2 bytes (which reads and writes
 * *bytes_moved bytes in all). */
kiln_status kiln__gpu_mip_bench(kiln_context *ctx, uint32_t w, uint32_t h, uint32_t count, int alpha,
                                const int *strategies, uint32_t nstrat, uint32_t runs, double *ms, double *copy_ms,
                                double *bytes_moved);

/* ---- test and bench hooks (src/gpu; the stub reports no device) ---- */

/* Warnings and errors the Vulkan validation layer reported on ctx's device so far (validation runs
 * when the environment has KILN_VK_VALIDATION=1 at context GPU creation), and whether it is on. */
uint32_t kiln__gpu_validation_messages(kiln_context *ctx);
int kiln__gpu_validation_active(kiln_context *ctx);

/* 1 when device `index` (kiln_gpu_list order) is a CPU implementation such as lavapipe, which AUTO
 * skips unless KILN_ALLOW_CPU_VULKAN=1. */
int kiln__gpu_device_is_cpu(kiln_context *ctx, uint32_t index);

/* kiln__gpu_decode on raw blocks: `size` bytes holding the blocks of a width x height image of
 * `format`; `out` is allocated as kiln_decode does. subgroup_size 0 lets the driver choose, else the
 * pipeline requires that size (KILN_ERR_UNSUPPORTED unless it is in kiln__gpu_subgroup_sizes). */
kiln_status kiln__gpu_decode_blocks(kiln_context *ctx, kiln_format format, const uint8_t *blocks, size_t size,
                                    uint32_t width, uint32_t height, uint32_t subgroup_size, kiln_image *out);
/* Bit mask of the subgroup sizes pipelines can require on ctx's device (bit n = size 2^n); 0 when
 * the device cannot control subgroup sizes or there is no device. */
uint32_t kiln__gpu_subgroup_sizes(kiln_context *ctx);

/* Samples a block-compressed image through the device's texture unit: a VkImage of the format's
 * VkFormat (pass a UNORM format for sRGB data: the decoding is the same), read with texelFetch
 * (VK_FILTER_NEAREST) in a compute shader. `blocks` holds kiln_format_image_size(format, width,
 * height) bytes; `out` receives width * height RGBA floats. KILN_ERR_UNSUPPORTED when the device
 * cannot sample the format. An independent check of kiln's own decoders. */
kiln_status kiln__gpu_sample_blocks(kiln_context *ctx, kiln_format format, const uint8_t *blocks, uint32_t width,
                                    uint32_t height, float *out);

#endif

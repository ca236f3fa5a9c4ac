/* gpu_mip.h - between gpu_mip.c and gpu_mip_blit.c (the blit strategy: VkImage + vkCmdBlitImage). */
#ifndef KILN_GPU_MIP_H
#define KILN_GPU_MIP_H

#include "gpu/vk.h"

/* kiln__gpu_mip_bench (gpu.h): a strategy or'ed with GENERAL runs without the fast box path (the general
 * path alone, as KILN_GPU_MIP_FAST=0 does for everything), with EVEN only with its even stages
 * (shaders/mip_fast.comp; as KILN_GPU_MIP_FAST=1). */
#define KILN__GPU_MIP_BENCH_GENERAL 0x100
#define KILN__GPU_MIP_BENCH_EVEN 0x200

/* The blit chain for job (RGBA8 in -> RGBA8 out in one colour space, or F32 -> F32 linear): levels
 * 1..L-1 into job->dst. *ms: the timed blit chain. KILN_ERR_UNSUPPORTED (message) when the queue has
 * no graphics capability or the format cannot be blitted with a linear filter. */
kiln_status kiln__gpu_mip_blit(kiln_context *ctx, kiln_gpu *gpu, const kiln__gpu_mip_job *job, double *ms);

/* Bench: `count` layers of w x h RGBA8 sRGB from the device buffer `texels` (w * h * 4 * count bytes),
 * `runs` cold (the 256 MiB `evict` buffer written first) then `runs` warm: ms[0 .. 2 runs - 1]. */
kiln_status kiln__gpu_mip_blit_bench(kiln_context *ctx, kiln_gpu *gpu, uint32_t w, uint32_t h, uint32_t count,
                                     VkBuffer texels, VkBuffer evict, uint32_t runs, double *ms);

/* The quality filters, normal maps and alpha coverage (gpu_mip_filter.c, shaders/mip_filter.comp):
 * job->filter is not the box, job->normal_map or job->alpha_coverage_ref is set. Strategies AUTO and
 * PER_LEVEL only (else UNSUPPORTED). */
kiln_status kiln__gpu_mip_filter(kiln_context *ctx, kiln_gpu *gpu, const kiln__gpu_mip_job *job);

/* ---- device-resident chains (gpu_mip_encode.c: the levels feed the encoders without leaving the device) ----
 * kiln__gpu_mip_record uploads job's base images and records the mip pass into `cmd` (begun by the caller
 * with room for KILN_GPU_MIP_MAX_DISPATCHES(levels) more dispatches; qp: when not VK_NULL_HANDLE, query 0
 * gets a timestamp after the uploads, before the first dispatch). The caller records the compute barrier
 * before anything reads dev->out (work on dev->in alone may run beside the last mip dispatch); the
 * quantised levels 1..L-1 of image z are then in dev->out at z * image_stride + off[l] (offsets multiples
 * of align_bytes, a power of two >= 4), the base images in dev->in (as uploaded). Nothing is downloaded
 * and job->dst is not used. Box filter: the tiled strategies (not blit); quality filters and normal maps:
 * gpu_mip_filter.c; alpha coverage (a host post-pass) is KILN_ERR_UNSUPPORTED. The buffers live until
 * kiln__gpu_mip_dev_free (after the command completed). */
#define KILN_GPU_MIP_MAX_LEVELS 32
#define KILN_GPU_MIP_MAX_DISPATCHES(levels) (2u * (levels) + 2u)
typedef struct kiln__gpu_mip_dev {
    kiln_gpu *gpu;
    VkBuffer in, out;
    VkDeviceSize off[KILN_GPU_MIP_MAX_LEVELS];
    VkDeviceSize image_stride;
    uint32_t dispatches;
    char what[96]; /* "box filter, strategy auto", "kaiser filter", ... (messages) */
    void *run;     /* owned resources */
    void (*free_run)(kiln_gpu *gpu, void *run);
} kiln__gpu_mip_dev;

kiln_status kiln__gpu_mip_record(kiln_context *ctx, kiln_gpu *gpu, const kiln__gpu_mip_job *job, uint32_t align_bytes,
                                 kiln_vk_cmd *cmd, VkQueryPool qp, kiln__gpu_mip_dev *dev);
/* kiln__gpu_mip_record with the base made on the device (helper mip16dev: gpu_mip16.c decodes a 16-bit base
 * there): box filter only (else KILN_ERR_UNSUPPORTED); job->images give sizes and type but their pixels are
 * not read; fill(ctx, cmd, in, user) records the commands that write the base images into `in` (the buffer
 * dev->in becomes) after the mip pass's uploads; a compute barrier follows before the mip pass. */
typedef kiln_status (*kiln__gpu_mip_fill_fn)(kiln_context *ctx, kiln_vk_cmd *cmd, VkBuffer in, void *user);
kiln_status kiln__gpu_mip_record_fill(kiln_context *ctx, kiln_gpu *gpu, const kiln__gpu_mip_job *job,
                                      uint32_t align_bytes, kiln_vk_cmd *cmd, VkQueryPool qp, kiln__gpu_mip_dev *dev,
                                      kiln__gpu_mip_fill_fn fill, void *user);
kiln_status kiln__gpu_mip_filter_record(kiln_context *ctx, kiln_gpu *gpu, const kiln__gpu_mip_job *job,
                                        uint32_t align_bytes, kiln_vk_cmd *cmd, VkQueryPool qp, kiln__gpu_mip_dev *dev);
/* The blit strategy's chain recorded the same way (gpu_mip_blit.c, helper mipres2): the base uploaded into
 * dev->in, copied into a VkImage, the vkCmdBlitImage chain, then levels 1..L-1 copied image -> buffer into
 * dev->out at aligned offsets, followed by a transfer -> compute barrier. No dispatches. */
kiln_status kiln__gpu_mip_blit_record(kiln_context *ctx, kiln_gpu *gpu, const kiln__gpu_mip_job *job, uint32_t align_bytes,
                                      kiln_vk_cmd *cmd, VkQueryPool qp, kiln__gpu_mip_dev *dev);
void kiln__gpu_mip_dev_free(kiln__gpu_mip_dev *dev);
/* KILN_GPU_MIP_POISON=1 (testing aid): records 0xAB fills of bufs (VK_NULL_HANDLE skipped) and a barrier. */
void kiln__gpu_mip_poison(VkCommandBuffer cb, const VkBuffer *bufs, uint32_t n);
/* The mip shaders' lookup table (mip_common.glsl binding 4): byte decode (sRGB when decode_srgb), byte / 255,
 * the exact sRGB8 encoder's thresholds, the exact unorm8 encoder's decision points (each + inf at 255). */
void kiln__gpu_mip_lut(float l[1024], int decode_srgb);
/* Testing aid (helper spone): the number of dispatches the box-filter plan of `strategy` records for `count` W x H
 * images of L levels under the current environment (KILN_GPU_MIP_FAST, ...), no device needed; desc (may be NULL)
 * gets the plan ("E6+E6c", as KILN_GPU_MIP_PLAN prints it). 0 for blit, baseline and bad arguments. */
uint32_t kiln__gpu_mip_plan_dispatches(uint32_t W, uint32_t H, uint32_t L, uint32_t count, int strategy, char *desc,
                                       size_t desc_size);

/* ---- the BC encoders on device-resident RGBA8 texels (gpu_mip_encode_bc.inc, inside gpu_encode_bc.c) ----
 * kiln__gpu_bc_dev_plan: the passes of params' format (BC1, BC1a, BC3, BC4, BC5; the shaders, spec
 * constants and push constants of kiln__gpu_encode_bc for an 8-bit image), else KILN_ERR_UNSUPPORTED.
 * kiln__gpu_bc_dev_tables fills binding 3 (table_words words). kiln__gpu_bc_dev_record records the
 * passes of one w x h level: texels (w * h RGBA8 words), blocks (written), flags (fallback: 1 = a bit
 * per block, 2 = a word per block: the blocks the CPU encoder must redo) and tables. */
typedef struct kiln__gpu_bc_dev {
    const kiln_vk_pipeline *pipe[2];
    uint32_t items_per_block[2];
    uint32_t npass;
    int fallback;            /* 0 none, 1 bit per block, 2 word per block */
    int table_kind;          /* 0 none, 1 single-colour tables, 2 cluster-fit tables */
    uint32_t table_words;    /* >= 1 */
    uint32_t block_bytes;
    uint32_t flags_word;
    float sw[3];
    int prepared_words;      /* float levels (mipres2): 0 RGBA8 words; 1 BC4/BC5 channel bytes; 2 BC1/BC3 2 words */
    int channel_kind;        /* prepared_words 1: 0 unsigned, 1 signed channel values */
} kiln__gpu_bc_dev;

/* type: the pixel type of the levels (KILN_PIXEL_U8: RGBA8 words; KILN_PIXEL_F32: the words the host would
 * prepare from a float image, made on the device by shaders/mip_enc_convert.comp, INPUT_U8 = 0) */
kiln_status kiln__gpu_bc_dev_plan(kiln_context *ctx, kiln_gpu *gpu, const kiln_encode_params *params, uint32_t w,
                                  uint32_t h, kiln_pixel_type type, uint32_t subgroup_size, kiln__gpu_bc_dev *out);
void kiln__gpu_bc_dev_tables(const kiln__gpu_bc_dev *plan, uint32_t *words);
kiln_status kiln__gpu_bc_dev_record(kiln_context *ctx, kiln_vk_cmd *cmd, const kiln__gpu_bc_dev *plan, uint32_t w,
                                    uint32_t h, const kiln_vk_binding *texels, const kiln_vk_binding *blocks,
                                    const kiln_vk_binding *flags, const kiln_vk_binding *tables);

/* ---- BC6H on device-resident RGBA32F texels (gpu_mip_encode_bc6h.inc, inside gpu_encode_bc6h.c) ----
 * The shader kiln__gpu_encode_bc6h picks for params (defaults only), its push constants and, when
 * has_table, binding 2 (table_words words from kiln__gpu_bc6h_dev_table). record: one w x h level
 * (texels: w * h RGBA floats; blocks: 16 bytes each). */
typedef struct kiln__gpu_bc6h_dev {
    const kiln_vk_pipeline *pipe;
    uint32_t spec, lanes, qcfg[4];
    int has_table;
    uint32_t table_words;
} kiln__gpu_bc6h_dev;

kiln_status kiln__gpu_bc6h_dev_plan(kiln_context *ctx, kiln_gpu *gpu, const kiln_encode_params *params,
                                    uint32_t subgroup_size, kiln__gpu_bc6h_dev *out);
void kiln__gpu_bc6h_dev_table(uint32_t *words);
kiln_status kiln__gpu_bc6h_dev_record(kiln_context *ctx, kiln_vk_cmd *cmd, const kiln__gpu_bc6h_dev *plan, uint32_t w,
                                      uint32_t h, const kiln_vk_binding *texels, const kiln_vk_binding *blocks,
                                      const kiln_vk_binding *table);

#endif

/* gpu_etc2_th.h - the ETC2 T / H pass on the GPU (shaders/enc_etc2_th.comp, gpu_etc2_th.c).
 *
 * The GPU ETC2 RGB / RGBA / RGB A1 encoders above FAST run the CPU's kiln__etc2_search as passes:
 * ETC1 modes (enc_etc1_q.comp), then planar, then this T / H pass. Between passes every block is a
 * kiln_etc2_gpu_block: the best solution so far, packed, and its weighted error. */
#ifndef KILN_GPU_ETC2_TH_H
#define KILN_GPU_ETC2_TH_H

#include "kiln/kiln.h"

#include <stdint.h>

typedef struct kiln_etc2_gpu_block {
    uint32_t err;      /* weighted squared error of bytes[] (etc_sol.err of the CPU search) */
    uint32_t flags;    /* reserved, 0 */
    uint8_t bytes[8];  /* the packed 8-byte ETC2 colour block (kiln__etc_pack) */
} kiln_etc2_gpu_block;

/* For each 4x4 block (row-major block order, (w + 3) / 4 blocks per row) of the RGBA8 image `rgba8`
 * (w x h, edge pixels replicated into partial blocks as the CPU driver does): exactly what
 * kiln__etc2_search does after the ETC1 and planar modes - the T/H gate, the th_bound pruning, the T/H
 * search pruned at blocks[i].err, and if it finds a lower error the reselect and pack - writing
 * blocks[i].bytes and blocks[i].err. params: quality, perceptual weights, and for a1 = 1 (ETC2 RGB A1)
 * the alpha threshold that makes pixels transparent. Bit-identical to the CPU. *ms: GPU kernel time. */
kiln_status kiln__gpu_etc2_th(kiln_context *ctx, const uint8_t *rgba8, uint32_t w, uint32_t h,
                              const kiln_encode_params *params, int a1, uint32_t subgroup_size,
                              kiln_etc2_gpu_block *blocks, double *ms);

/* The same pass on buffers already on the device (gpu_mip_encode_etc.inc: the mip chain + encode path keeps
 * the level's texels and the block states where the earlier passes wrote them). kiln__gpu_etc2_th_plan_make:
 * the pipelines and the push constants of kiln__gpu_etc2_th (same checks, shader choice and constants), the
 * level's size aside. kiln__gpu_etc2_th_record records one dispatch of a w x h level: phase 2 (reset the
 * list), then after a compute barrier phase 0 (gate and bound), then after another phase 1 (search), as
 * kiln__gpu_etc2_th does. b[4]: the texels (w * h RGBA8 words), the incoming kiln_etc2_gpu_block array, the
 * outgoing one (every block written; not the same memory as the incoming; with plan.prep phase 0 also leaves the
 * listed blocks' partitions there for phase 1), the list ((nblocks + 1) words). */
struct kiln_vk_pipeline;
struct kiln_vk_cmd;
struct kiln_vk_binding;
typedef struct kiln__gpu_etc2_th_plan {
    const struct kiln_vk_pipeline *pipe[3]; /* by PHASE: 0 gate, 1 search, 2 reset */
    uint32_t push[24];                      /* gpu_etc2_th.c's th_push; words 0..3 (the size) per level */
    uint32_t lanes;                         /* invocations per block of the search (KILN_GPU_ETC2_TH_LANES) */
    uint32_t prep;                          /* 1: the gate also writes the listed blocks' partitions (lanes build) */
    uint32_t flat, fastpix, check, cache;   /* the search variants (KILN_GPU_ETC2_TH_FLAT / _FASTPIX / _CHECK / _CACHE) */
    uint32_t packed;                        /* KILN_GPU_ETC2_TH_PACKED: the pixels packed (gate and search) */
    uint32_t smem;                          /* KILN_GPU_ETC2_TH_SMEM: th_eval's centre data in shared memory */
    uint32_t pool;                          /* KILN_GPU_ETC2_TH_POOL: the search of a workgroup's blocks pooled (max) */
} kiln__gpu_etc2_th_plan;

kiln_status kiln__gpu_etc2_th_plan_make(kiln_context *ctx, const kiln_encode_params *params, int a1, uint32_t subgroup_size,
                                        kiln__gpu_etc2_th_plan *out);
kiln_status kiln__gpu_etc2_th_record(kiln_context *ctx, struct kiln_vk_cmd *cmd, const kiln__gpu_etc2_th_plan *plan,
                                     uint32_t phase, uint32_t w, uint32_t h, const struct kiln_vk_binding *b);

#endif

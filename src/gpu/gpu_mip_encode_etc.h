/* gpu_mip_encode_etc.h - the ETC family's encoders on device-resident RGBA8 texels (owner mipetc, issue #5;
 * defined in gpu_mip_encode_etc.inc, included at the end of gpu_encode_etc.c; used by gpu_mip_encode.c).
 *
 * kiln__gpu_etc_dev_plan: the passes of params' format on an 8-bit image, as kiln__gpu_encode_etc records
 * them (same shaders, specialisation and push constants), else KILN_ERR_UNSUPPORTED. Kinds:
 *   0 EAC R11 / RG11 unsigned: enc_eac.comp reading the channel bytes of the RGBA8 words; its CPU-flagged
 *     jobs in flags (fallback 1: nch words per block);
 *   1 ETC1 FAST (enc_etc1.comp); 2 ETC1 NORMAL+ (enc_etc1_q.comp); no flags;
 *   5 ETC2 RGB FAST: enc_etc1.comp ETC2 = 1 into scratch (blocks, then its T / H flag words), then
 *     (kiln__gpu_etc_dev_record_post, after a barrier) mip_enc_etc2_stitch.comp copies the blocks into the
 *     blocks binding and the flags into flags (fallback 1), so only blocks come down;
 *   3 ETC2 RGBA FAST: that colour pass into scratch, the EAC alpha pass (enc_eac.comp KIND 0) into the
 *     blocks and flags, then (record_post) mip_enc_etc2_stitch.comp puts the colour in place and ORs the
 *     colour's flags into the alpha's;
 *   4 EAC R11 / RG11 signed: mip_enc_eac_targets.comp looks each texel byte's int32 target up in a
 *     256-entry table (kiln__gpu_etc_dev_table: the CPU's arithmetic) into scratch, a barrier, then
 *     enc_eac.comp KIND 2 INMODE 1; flags as kind 0.
 *   6 ETC2 RGB above FAST and ETC2 RGB A1 at every quality (helper etc2res), gpu_encode_etc.c's
 *     etc2_colour_pass on the device: enc_etc1_q.comp OUT4 = 1 (A1: enc_etc1_q_a1.comp) into state A of
 *     scratch (a kiln_etc2_gpu_block per block) and the T / H list reset; then the phases of
 *     kiln__gpu_etc_dev_record_post, each after a barrier: 0 planar (enc_etc2_planar.comp on state A),
 *     1 the T / H gate (A -> state B, lists the blocks to search), 2 the T / H search (gpu_etc2_th.c's
 *     kiln__gpu_etc2_th_record), 3 mip_enc_etc2_state.comp copies B's packed bytes into the blocks; no flags;
 *   7 ETC2 RGBA above FAST: kind 6's colour (into words 2..3 of each block) plus the EAC alpha pass
 *     (enc_eac.comp KIND 0) into words 0..1 and the flags (fallback 1), as kind 3.
 *   Scratch of kinds 6 / 7, per level: state A, state B (each nb * 16 bytes rounded up to 256, the
 *   largest minStorageBufferOffsetAlignment Vulkan allows), the T / H list ((nb + 1) words).
 * Not covered (host path): KILN_GPU_ETC2_TH=host (the host T / H step), a device without 64-bit floats and
 * integers in shaders, the seed strategy, dithering, 16-bit / float images.
 * kiln__gpu_etc_dev_phases: how many record_post phases the kind has (kinds 3, 5: 1; 6, 7: 4; else 0);
 * gpu_mip_encode.c records phase p of every level after a barrier, p = 0, 1, ...
 * kiln__gpu_etc_dev_record: the encode passes of one w x h level: texels (w * h RGBA8 words), blocks
 * (nb * block_bytes bytes), flags (fallback 1: nb * nch words; else unused), scratch
 * (kiln__gpu_etc_dev_scratch bytes, 0 = unused), tables (table_words words). */
#ifndef KILN_GPU_MIP_ENCODE_ETC_H
#define KILN_GPU_MIP_ENCODE_ETC_H

#include "gpu/gpu_etc2_th.h"
#include "gpu/vk.h"

typedef struct kiln__gpu_etc_dev {
    const kiln_vk_pipeline *pipe;
    const kiln_vk_pipeline *alpha, *stitch; /* kind 3; stitch also kind 5 */
    uint32_t kind;        /* 0 EAC unsigned, 1 ETC1 FAST, 2 ETC1 NORMAL+, 3 ETC2 RGBA FAST, 4 EAC signed,
                             5 ETC2 RGB FAST, 6 ETC2 RGB above FAST / RGB A1, 7 ETC2 RGBA above FAST */
    uint32_t nch;         /* EAC channels per block */
    uint32_t block_bytes; /* the format's */
    uint32_t out_bytes;   /* per block in the blocks binding: block_bytes */
    int fallback;         /* 0 none, 1 nch flag words per block in the flags binding */
    uint32_t tail[5];     /* push constants 4..8 (kind 3: the colour pass's) */
    uint32_t quality;     /* kind 3: the alpha pass's */
    uint32_t table_words; /* >= 1; kind 4: 256 */
    const kiln_vk_pipeline *targets; /* kind 4 */
    uint32_t npass;       /* dispatches per level, all phases */
    uint32_t a1;          /* kinds 6, 7: 1 for ETC2 RGB A1 */
    const kiln_vk_pipeline *planar, *state; /* kinds 6, 7 */
    kiln__gpu_etc2_th_plan th;              /* kinds 6, 7 */
} kiln__gpu_etc_dev;

/* kiln's EAC shader (enc_eac.comp) and its specialisation constant 3 (PRUNE: the spacing bound, default on;
 * KILN_GPU_EAC_PRUNE), as every EAC pass takes them (gpu_encode_etc.c). */
const char *kiln__gpu_eac_shader(uint32_t *spec3);

kiln_status kiln__gpu_etc_dev_plan(kiln_context *ctx, kiln_gpu *gpu, const kiln_encode_params *params,
                                   uint32_t subgroup_size, kiln__gpu_etc_dev *out);
void kiln__gpu_etc_dev_table(const kiln__gpu_etc_dev *plan, uint32_t *words);
uint64_t kiln__gpu_etc_dev_scratch(const kiln__gpu_etc_dev *plan, uint32_t w, uint32_t h);
kiln_status kiln__gpu_etc_dev_record(kiln_context *ctx, kiln_vk_cmd *cmd, const kiln__gpu_etc_dev *plan, uint32_t w,
                                     uint32_t h, const kiln_vk_binding *texels, const kiln_vk_binding *blocks,
                                     const kiln_vk_binding *flags, const kiln_vk_binding *scratch,
                                     const kiln_vk_binding *tables);
uint32_t kiln__gpu_etc_dev_phases(const kiln__gpu_etc_dev *plan);
kiln_status kiln__gpu_etc_dev_record_post(kiln_context *ctx, kiln_vk_cmd *cmd, const kiln__gpu_etc_dev *plan,
                                          uint32_t phase, uint32_t w, uint32_t h, const kiln_vk_binding *texels,
                                          const kiln_vk_binding *blocks, const kiln_vk_binding *flags,
                                          const kiln_vk_binding *scratch);

#endif

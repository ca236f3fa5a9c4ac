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
 * Not covered (host path): ETC2 RGB / RGBA above FAST and ETC2 RGB A1 (their T / H pass reads host
 * pixels), the seed strategy, dithering, 16-bit / float images.
 * kiln__gpu_etc_dev_record: the encode passes of one w x h level: texels (w * h RGBA8 words), blocks
 * (nb * block_bytes bytes), flags (fallback 1: nb * nch words; else unused), scratch
 * (kiln__gpu_etc_dev_scratch bytes, 0 = unused), tables (table_words words). */
#ifndef KILN_GPU_MIP_ENCODE_ETC_H
#define KILN_GPU_MIP_ENCODE_ETC_H

#include "gpu/vk.h"

typedef struct kiln__gpu_etc_dev {
    const kiln_vk_pipeline *pipe;
    const kiln_vk_pipeline *alpha, *stitch; /* kind 3; stitch also kind 5 */
    uint32_t kind;        /* 0 EAC unsigned, 1 ETC1 FAST, 2 ETC1 NORMAL+, 3 ETC2 RGBA FAST, 4 EAC signed,
                             5 ETC2 RGB FAST */
    uint32_t nch;         /* EAC channels per block */
    uint32_t block_bytes; /* the format's */
    uint32_t out_bytes;   /* per block in the blocks binding: block_bytes */
    int fallback;         /* 0 none, 1 nch flag words per block in the flags binding */
    uint32_t tail[5];     /* push constants 4..8 (kind 3: the colour pass's) */
    uint32_t quality;     /* kind 3: the alpha pass's */
    uint32_t table_words; /* >= 1; kind 4: 256 */
    const kiln_vk_pipeline *targets; /* kind 4 */
} kiln__gpu_etc_dev;

kiln_status kiln__gpu_etc_dev_plan(kiln_context *ctx, kiln_gpu *gpu, const kiln_encode_params *params,
                                   uint32_t subgroup_size, kiln__gpu_etc_dev *out);
void kiln__gpu_etc_dev_table(const kiln__gpu_etc_dev *plan, uint32_t *words);
uint64_t kiln__gpu_etc_dev_scratch(const kiln__gpu_etc_dev *plan, uint32_t w, uint32_t h);
kiln_status kiln__gpu_etc_dev_record(kiln_context *ctx, kiln_vk_cmd *cmd, const kiln__gpu_etc_dev *plan, uint32_t w,
                                     uint32_t h, const kiln_vk_binding *texels, const kiln_vk_binding *blocks,
                                     const kiln_vk_binding *flags, const kiln_vk_binding *scratch,
                                     const kiln_vk_binding *tables);
kiln_status kiln__gpu_etc_dev_record_post(kiln_context *ctx, kiln_vk_cmd *cmd, const kiln__gpu_etc_dev *plan, uint32_t w,
                                          uint32_t h, const kiln_vk_binding *blocks, const kiln_vk_binding *flags,
                                          const kiln_vk_binding *scratch);

#endif

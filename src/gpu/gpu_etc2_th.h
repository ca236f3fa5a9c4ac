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

#endif

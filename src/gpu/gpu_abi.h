/* gpu_abi.h - numbers shared by the C host code and the GLSL shaders (included by both: keep it to
 * #defines). The decode shaders take their variant as specialisation constant 1 and their workgroup
 * size as specialisation constant 0 (see vk.h). */
#ifndef KILN_GPU_ABI_H
#define KILN_GPU_ABI_H

/* Workgroup size the decoders are built with unless the host asks otherwise. */
#define KILN_DEC_LOCAL_SIZE 64

/* decode_bc.comp variants */
#define KILN_DEC_BC1_RGB 0
#define KILN_DEC_BC1_RGBA 1
#define KILN_DEC_BC2 2
#define KILN_DEC_BC3 3
#define KILN_DEC_BC4U 4
#define KILN_DEC_BC4S 5
#define KILN_DEC_BC5U 6
#define KILN_DEC_BC5S 7

/* decode_bc6h.comp variants */
#define KILN_DEC_BC6H_UF 0
#define KILN_DEC_BC6H_SF 1

/* decode_etc.comp variants */
#define KILN_DEC_ETC2_RGB 0
#define KILN_DEC_ETC2_RGB_A1 1
#define KILN_DEC_ETC2_RGBA 2
#define KILN_DEC_EAC_R11U 3
#define KILN_DEC_EAC_R11S 4
#define KILN_DEC_EAC_RG11U 5
#define KILN_DEC_EAC_RG11S 6

/* Bindings of every decode shader: 0 = blocks (read), 1 = texels (written), 2 = tables (read). */
#define KILN_DEC_BINDINGS 3

/* Push constants of every decode shader: 4 x uint32, in this order.
 *   blocks_x  blocks per row
 *   blocks_y  block rows in this dispatch
 *   width     output texels per row (the image width: the last block column is clipped)
 *   height    output rows in this dispatch (the last block row is clipped)
 * Input: the blocks as uint words (8-byte blocks = 2 words, 16-byte = 4), rows of blocks_x blocks.
 * Output: width x height texels, row-major, tightly packed: 1 word per texel for U8 (R in the low
 * byte), 2 for U16 (R | G << 16, B | A << 16), 4 for F32 (float bits). */
#define KILN_DEC_PUSH_WORDS 4

/* The decoders' lookup tables live in one storage buffer (binding 2 of every decoder), uploaded once
 * per device by gpu_decode.c from shaders/bptc_tables.glsl and etc_tables.glsl (files that are valid
 * GLSL and C): word offsets below. Constant arrays indexed per texel inside the shaders were copied
 * into per-thread memory (NVIDIA: ETC2 and EAC decodes 10x slower than BC1) and compiled slowly
 * on lavapipe; a buffer avoids both. */
#define KILN_TAB_P2 0          /* 64: BPTC two-subset partitions, bit t = subset of texel t */
#define KILN_TAB_P3 64         /* 64: BPTC three-subset partitions, 2 bits per texel */
#define KILN_TAB_A2 128        /* 64: anchor of subset 1, two subsets */
#define KILN_TAB_A3B 192       /* 64: anchor of subset 1, three subsets */
#define KILN_TAB_A3C 256       /* 64: anchor of subset 2, three subsets */
#define KILN_TAB_W2 320        /* 4: BPTC weights for 2-bit indices */
#define KILN_TAB_W3 324        /* 8 */
#define KILN_TAB_W4 332        /* 16 */
#define KILN_TAB_BC6_MODE 348  /* 14: BC6H mode: regions | transformed << 4 | endpoint bits << 8 | delta bits R, G, B << 16, 20, 24 */
#define KILN_TAB_ETC_MOD 362   /* 32: ETC1 intensity modifiers (int) */
#define KILN_TAB_ETC_DIST 394  /* 8: ETC2 T/H distances */
#define KILN_TAB_EAC_MOD 402   /* 128: EAC modifiers (int) */
#define KILN_TAB_WORDS 530

#endif

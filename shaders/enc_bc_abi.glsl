/* enc_bc_abi.glsl - numbers shared by src/gpu/gpu_encode_bc.c and the BC encode shaders
 * (shaders/enc_bc*.comp). Valid C and GLSL: #defines only.
 *
 * Specialisation constants of every BC encode shader (constant 0 is the workgroup size, see vk.h):
 *   1 VARIANT   KILN_EBC_* below
 *   2 QUALITY   kiln_quality (0 fast .. 3 max) where the code depends on it at compile time (the
 *               host sets 0 elsewhere; the quality is also in the push constants)
 *   3 INPUT_U8  1: the input is the image's RGBA8 texels (1 word each); 0: texels prepared by the host
 *               (1 word for BC4/BC5: channel values as bytes; 2 words for BC1/BC3: R16 | G16 << 16,
 *               B16 | A8 << 16)
 *   4 PRELOAD   seed shaders: 1 = texels staged in shared memory first, 0 = read from the buffer
 *               whenever needed
 *
 * Bindings: 0 = input texels (read), 1 = output blocks (written, as uint words), 2 = fallback bits
 * (BC1 kiln: bit b set = block b must be encoded by the CPU encoder; written whole words), 3 = read-only
 * tables from bc1_enc_tables.h (enc_bc1_cf: cluster-fit factors; enc_bc1: single-colour pairs). */
#ifndef KILN_ENC_BC_ABI
#define KILN_ENC_BC_ABI

/* BC4-style channel tasks (enc_bc4*.comp) */
#define KILN_EBC_BC4U 0
#define KILN_EBC_BC4S 1
#define KILN_EBC_BC5U 2
#define KILN_EBC_BC5S 3
#define KILN_EBC_BC3A 4 /* the alpha half of BC3 */
/* BC1 colour (enc_bc1*.comp) */
#define KILN_EBC_BC1 0   /* opaque BC1 */
#define KILN_EBC_BC1A 1  /* punch-through alpha */
#define KILN_EBC_BC3C 2  /* the colour half of BC3: four-colour interpolation, any endpoint order */

/* Workgroup sizes */
#define KILN_EBC_LOCAL 64     /* one invocation per task */
#define KILN_EBC_CF_LOCAL 64  /* enc_bc1_cf_seed: one workgroup per block (the paper's best size) */

/* Push constants: 8 words
 *   0 blocks_x    blocks per row
 *   1 blocks_y    block rows in this dispatch
 *   2 width       texels per input row
 *   3 height      texel rows in this dispatch's input (the last is replicated below)
 *   4 flags       alpha threshold (bits 0-7) | perceptual << 8 | alpha cut-out << 9 | quality << 10
 *   5..7 sw       square roots of the channel weights (float bits; 1.0 unless perceptual) */
#define KILN_EBC_PUSH_WORDS 8

#endif

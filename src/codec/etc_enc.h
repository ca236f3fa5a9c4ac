/* etc_enc.h - internals shared by the ETC1 / ETC2 / EAC encoders (etc1_enc.c, etc2_enc.c, eac_enc.c).
 *
 * Conventions (Khronos Data Format Specification, "ETC2 Compressed Texture Image Formats"):
 *  - a block is a 64-bit big-endian word; pixel (x, y) of the 4x4 block uses index bit j = x * 4 + y
 *    (column-major): for ETC colour blocks the selector's MSB is bit 16 + j and its LSB bit j; EAC blocks
 *    keep 3-bit indices with pixel j at bits 47 - 3j .. 45 - 3j.
 *  - the encoders see pixels in row-major order (p = y * 4 + x), as kiln_block delivers them.
 *  - colour error is the squared RGB difference in 8-bit units, weighted per channel (1,1,1 or the
 *    perceptual weights); it is what every mode search minimises and compares.
 */
#ifndef KILN_ETC_ENC_H
#define KILN_ETC_ENC_H

#include "codec/codec.h"
#include "codec/etc_tables.h"

#include <stdint.h>

/* ETC selector values as stored (MSB, LSB): 0 = +a, 1 = +b, 2 = -a, 3 = -b (ETC1 tables). */
/* T/H distance table. */
/* EAC modifier tables. */

enum { ETC_MODE_INDIV = 0, ETC_MODE_DIFF, ETC_MODE_T, ETC_MODE_H, ETC_MODE_PLANAR };

/* Perceptual weights (sum 128, about 0.299 / 0.587 / 0.114). */
#define ETC_PW_R 38
#define ETC_PW_G 75
#define ETC_PW_B 15

/* The colour content of one block, as the colour searches need it. */
typedef struct etc_src {
    int c[16][3];        /* 8-bit RGB, row-major */
    uint8_t opaque[16];  /* 1 = pixel is encoded; 0 = transparent (RGB A1) and ignored by the error */
    int nopaque;         /* number of opaque pixels */
    int w[3];            /* channel weights */
    int quality;         /* kiln_quality */
    int a1;              /* 1: ETC2 RGB A1 container (no individual mode; opaque bit rules) */
    int transparent;     /* a1 and some pixel is transparent: opaque bit 0, selector 2 = transparent */
} etc_src;

/* One ETC / ETC2 colour block in decoded-field form. */
typedef struct etc_sol {
    int mode;            /* ETC_MODE_* */
    int flip;            /* individual / differential: 0 = 2x4 side by side, 1 = 4x2 stacked */
    int c[2][3];         /* individual: 4-bit; differential: 5-bit (both absolute); T/H: 4-bit, in the
                            decoder's order (T: c[0] is the single colour; H: distance LSB rule holds) */
    int table[2];        /* individual / differential: codewords; T/H: table[0] = distance index */
    int p[3][3];         /* planar O, H, V: 6-7-6 bits */
    uint8_t sel[16];     /* selectors, row-major (ignored by planar) */
    uint32_t err;        /* weighted squared error */
} etc_sol;

/* Expand quantised values to 8 bits. */
static inline int etc_x4(int v) { return (v << 4) | v; }
static inline int etc_x5(int v) { return (v << 3) | (v >> 2); }
static inline int etc_x6(int v) { return (v << 2) | (v >> 4); }
static inline int etc_x7(int v) { return (v << 1) | (v >> 6); }
static inline int etc_clamp255(int v) { return v < 0 ? 0 : (v > 255 ? 255 : v); }

/* The four colours selectable by pixel p (row-major) of a solution; valid[k] = 0 where the selector is
 * not usable (the transparent selector 2 of a non-opaque A1 block). Planar has no palette. */
void kiln__etc_palette(const etc_sol *s, const etc_src *src, int p, int pal[4][3], int valid[4]);
/* Packs a solution into 8 bytes (big-endian). src->a1 / src->transparent give the opaque bit. */
void kiln__etc_pack(const etc_sol *s, const etc_src *src, uint8_t out[8]);
/* Exact weighted error of a solution (re-derived from its fields and selectors). */
uint32_t kiln__etc_sol_error(const etc_sol *s, const etc_src *src);
/* Re-chooses each selector as the nearest valid palette colour (or, with dither, by error diffusion
 * inside the block) and updates err. Planar blocks are left alone. */
void kiln__etc_reselect(etc_sol *s, const etc_src *src, int dither);

/* Fills an etc_src from a kiln_block. */
void kiln__etc_src_init(etc_src *src, const kiln_block *blk, const kiln_encode_params *params, int a1);

/* ETC1 modes: best individual / differential solution (individual skipped for src->a1). */
void kiln__etc1_search(const etc_src *src, etc_sol *best);
/* ETC1 modes, fast path (quality FAST): quantised half-block means, table by the luma model, one
 * selector pass; no search. */
void kiln__etc1_fast(const etc_src *src, etc_sol *best);
/* Selectors of an individual / differential solution against its palettes (others: reselect). */
void kiln__etc_select_fast(etc_sol *s, const etc_src *src);
/* ETC2 colour: the ETC1 modes plus T, H and planar (planar skipped for transparent A1 blocks). */
void kiln__etc2_search(const etc_src *src, etc_sol *best);

/* EAC: one channel of 16 values. kind: 0 = 8-bit alpha (targets 0..255), 1 = unsigned R11, 2 = signed
 * R11. Targets are in the decoded domain scaled by `scale` (see eac_enc.c); returns the error in those
 * squared units and writes the 8-byte block. */
typedef struct eac_target {
    int kind;
    int64_t t[16];       /* target value * scale for each pixel (row-major) */
    int64_t scale;       /* decoded integer value v corresponds to v * scale */
} eac_target;
uint64_t kiln__eac_encode_channel(const eac_target *tg, int quality, int dither, uint8_t out[8]);
/* Builds EAC targets from a kiln_block channel. */
void kiln__eac_target_alpha8(eac_target *tg, const kiln_block *blk, int channel);
void kiln__eac_target_u11(eac_target *tg, const kiln_block *blk, int channel);
void kiln__eac_target_s11(eac_target *tg, const kiln_block *blk, int channel);

#endif

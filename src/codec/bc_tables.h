/* bc_tables.h - the BPTC (BC6H / BC7) tables, in one place so the CPU codecs and the GLSL port share
 * one reviewed copy: partitions, anchor indices and interpolation weights.
 *
 * Source: Khronos Data Format Specification, "BPTC Compressed Texture Image Formats" (derived from
 * the OpenGL 4.4 / ARB_texture_compression_bptc text), tables bptcP2subset, bptcP3subset,
 * bptcA2index, bptcA32index, bptcA33index and BPTCInterpolation. Texel numbering is y-major:
 * texel = y * 4 + x, the same order as the index bits.
 *
 * BC6H uses the first 32 two-subset partitions (and their anchors); BC7 uses all 64 two- and
 * three-subset partitions. Texel 0 is always the anchor of subset 0.
 */
#ifndef KILN_BC_TABLES_H
#define KILN_BC_TABLES_H

#include <stdint.h>

/* Two-subset partitions: bit t of kiln__bptc_p2[p] is the subset (0/1) of texel t. */
extern const uint16_t kiln__bptc_p2[64];
/* Three-subset partitions: subset (0..2) of each texel, written out row by row as in the spec. */
extern const uint8_t kiln__bptc_p3[64][16];
/* Anchor texel of subset 1 in two-subset partitions (table A2). */
extern const uint8_t kiln__bptc_anchor2[64];
/* Anchor texels of subsets 1 and 2 in three-subset partitions (tables A3a / A3b). */
extern const uint8_t kiln__bptc_anchor3_1[64];
extern const uint8_t kiln__bptc_anchor3_2[64];
/* Interpolation weights (out of 64) for 2-, 3- and 4-bit indices. */
extern const uint8_t kiln__bptc_weights2[4];
extern const uint8_t kiln__bptc_weights3[8];
extern const uint8_t kiln__bptc_weights4[16];

/* Weight table for an index of `bits` bits (2, 3 or 4). */
static inline const uint8_t *kiln__bptc_weights(unsigned bits)
{
    return bits == 2 ? kiln__bptc_weights2 : bits == 3 ? kiln__bptc_weights3 : kiln__bptc_weights4;
}

/* Subset of texel t (0..15) for a block with ns subsets (1..3) and partition p (0..63). */
static inline unsigned kiln__bptc_subset(unsigned ns, unsigned p, unsigned t)
{
    if (ns == 2) return (kiln__bptc_p2[p] >> t) & 1u;
    if (ns == 3) return kiln__bptc_p3[p][t];
    return 0;
}

/* 1 when texel t is an anchor (its index is stored with one bit less). */
static inline int kiln__bptc_is_anchor(unsigned ns, unsigned p, unsigned t)
{
    if (t == 0) return 1;
    if (ns == 2) return t == kiln__bptc_anchor2[p];
    if (ns == 3) return t == kiln__bptc_anchor3_1[p] || t == kiln__bptc_anchor3_2[p];
    return 0;
}

/* ---- reading a 128-bit little-endian block ---- */
static inline void kiln__bptc_load(const uint8_t b[16], uint64_t q[2])
{
    q[0] = q[1] = 0;
    for (int i = 7; i >= 0; i--) {
        q[0] = q[0] << 8 | b[i];
        q[1] = q[1] << 8 | b[i + 8];
    }
}

/* n (0..32) bits starting at bit pos; pos + n <= 128 */
static inline uint32_t kiln__bptc_bits(const uint64_t q[2], unsigned pos, unsigned n)
{
    uint64_t v;
    if (pos >= 64) v = q[1] >> (pos - 64);
    else if (pos == 0) v = q[0];
    else v = q[0] >> pos | q[1] << (64 - pos);
    return (uint32_t)(v & ((1ull << n) - 1u));
}

/* ---- BC6H block inspection (bc6h.c), for tests, tools and the encoders ----
 * Unpacks a BC6H block's endpoints after sign extension and the inverse delta transform, but before
 * unquantization. Returns the number of subsets (1 or 2), or 0 for a reserved mode. *mode gets the
 * mode number as the Khronos spec writes it (0, 1, 2, 6, 10, ..., 30, 3, 7, 11, 15), *partition the
 * partition (0 for one subset), *epb the endpoint precision in bits. ep[s*2+e][c]: subset s,
 * endpoint e, channel c (RGB). *wrapped_negative is set to 1 when, in a transformed mode of the signed
 * format, a delta-coded endpoint (E1..E3) is negative after the wrap and the second sign extension
 * (a case some third-party decoders get wrong; the Pillow interop test uses it). */
typedef struct kiln_bc6h_info {
    int mode;
    int partition;
    int subsets;
    int epb;
    int transformed;
    int wrapped_negative;
    int32_t ep[4][3];
} kiln_bc6h_info;
int kiln__bc6h_unpack(const uint8_t block[16], int is_signed, kiln_bc6h_info *info);

#endif

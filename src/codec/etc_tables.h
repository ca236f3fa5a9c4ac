/* etc_tables.h - the constant tables of ETC1 / ETC2 / EAC and a few bit-level helpers, shared by the CPU
 * decoders (etc.c), the encoders and the GPU code (which may mirror these tables in GLSL).
 *
 * Reference: Khronos Data Format Specification 1.3, chapter "ETC2 Compressed Texture Image Formats"
 * (derived from the OpenGL 4.5 / ES 3.0 specification, section "ETC Compressed Texture Image Formats").
 * Table names below quote the spec's table anchors.
 *
 * Bit conventions (spec, "int64bit"): an 8-byte block q0..q7 is the BIG-endian 64-bit integer
 * 256*(...(256*q0 + q1)...) + q7; "bit 63" is the top bit of q0.
 *
 * Texel indexing inside a block: the spec names texels a..p COLUMN-major (a = (0,0), b = (0,1), ...,
 * e = (1,0)); the texel at (x, y) has spec index k = x * 4 + y. kiln's codec contract is row-major
 * (y * 4 + x), so every decoder converts.
 */
#ifndef KILN_ETC_TABLES_H
#define KILN_ETC_TABLES_H

#include <stdint.h>

/* ETC1/ETC2 intensity modifiers (Table-etc2-modifiers), ordered by PIXEL INDEX VALUE (msb << 1 | lsb)
 * as in Table-etc2-pixelindices: 0 -> +a, 1 -> +b, 2 -> -a, 3 -> -b. */
extern const int16_t kiln__etc_modifiers[8][4];

/* Punch-through (ETC2 RGB8A1) with the opaque bit unset (Table-etc2punch-modifiers-b and
 * Table-etc2punch-pixelindices-b): the small modifiers are 0; index 2 is transparent black anyway. */
extern const int16_t kiln__etc_modifiers_nonopaque[8][4];

/* T and H mode distances (Table-etc2-distancetable). */
extern const uint8_t kiln__etc_distances[8];

/* EAC modifiers (Table-etc2eac-modifiers), by table index then 3-bit pixel index; shared by the
 * ETC2 RGBA8 alpha channel and R11/RG11 (unsigned and signed). */
extern const int8_t kiln__eac_modifiers[16][8];

/* The mode of an ETC2 RGB (or RGB8A1) colour block, chosen as in the spec's "mode selection" (bit 33 =
 * diff bit; then overflow of R+dR -> T, of G+dG -> H, of B+dB -> planar). With punchthrough != 0, bit 33 is
 * the opaque bit and there is no individual mode. */
typedef enum kiln_etc_mode {
    KILN_ETC_MODE_INDIVIDUAL = 0,
    KILN_ETC_MODE_DIFFERENTIAL = 1,
    KILN_ETC_MODE_T = 2,
    KILN_ETC_MODE_H = 3,
    KILN_ETC_MODE_PLANAR = 4,
} kiln_etc_mode;

kiln_etc_mode kiln__etc_mode(const uint8_t block8[8], int punchthrough);

/* Decodes an ETC2 colour block (8 bytes) to 16 RGBA8 texels, row-major. punchthrough = 0: RGB ETC2 (alpha
 * 255); punchthrough = 1: RGB ETC2 with punch-through alpha (bit 33 is the opaque bit). */
void kiln__dec_etc2_colors(const uint8_t *block8, uint8_t out[64], int punchthrough);

/* Bit replication used by ETC: 4 -> 8 (x * 17), 5 -> 8, 6 -> 8, 7 -> 8 bits. */
static inline int kiln__etc_ext4(int v) { return (v << 4) | v; }
static inline int kiln__etc_ext5(int v) { return (v << 3) | (v >> 2); }
static inline int kiln__etc_ext6(int v) { return (v << 2) | (v >> 4); }
static inline int kiln__etc_ext7(int v) { return (v << 1) | (v >> 6); }

/* 11-bit EAC to 16 bits (spec: "(x << 5) + (x >> 6)" unsigned; sign-magnitude replication for signed). */
static inline uint16_t kiln__eac_u11_to_u16(int v) { return (uint16_t)((v << 5) | (v >> 6)); }
static inline int16_t kiln__eac_s11_to_s16(int v)
{
    int m = v < 0 ? -v : v;
    m = (m << 5) | (m >> 5);
    return (int16_t)(v < 0 ? -m : m);
}

#endif

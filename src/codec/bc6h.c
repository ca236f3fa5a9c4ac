/* bc6h.c - BC6H block decoder (UF16 and SF16), all 14 modes, written from the Khronos Data Format
 * Specification (BPTC, "BC6H"):
 *   1. the mode is the low 2 bits when they are 0 or 1, else the low 5 bits; 19, 23, 27 and 31 are
 *      reserved and decode to (0, 0, 0, 1);
 *   2. endpoint and partition bits are scattered as listed in table-bptcblockformat (transcribed
 *      below span by span, LSB first; "reversed" spans such as R0^10..15 store the highest bit first);
 *   3. sign extension: E0 when the format is signed; E1..E3 when the format is signed or the mode is
 *      transformed (to the delta width in transformed modes);
 *   4. transformed modes: Ei = (E0 + Ei) & ((1 << EPB) - 1), sign-extended again for SF16;
 *   5. unquantize (UF16: 0 -> 0, max -> 0xFFFF, else ((x << 15) + 0x4000) >> (EPB - 1);
 *      SF16 on the magnitude: 0 -> 0, >= 2^(EPB-1) - 1 -> 0x7FFF, else the same formula, sign
 *      restored; EPB 16 keeps the value);
 *   6. interpolate ((64 - w) * a + w * b + 32) >> 6 (an arithmetic shift: floor for negatives);
 *   7. finish: UF16 (x * 31) >> 6; SF16 x < 0 ? ((-x * 31) >> 5) | 0x8000 : (x * 31) >> 5.
 * The result is a half-float bit pattern per channel; kiln__dec_bc6h_* convert it exactly to float.
 */
#include "codec/bc_tables.h"
#include "codec/codec.h"
#include "codec/bc6h_modes.h"

#include <string.h>

#define S(f, a, b) {f, a, b}
#define M2 {MB, 1, 0}
#define M5 {MB, 4, 0}
#define SEND {END, 0, 0}

/* Khronos table-bptcblockformat, in table order. */
const bc6h_mode kiln__bc6h_modes[14] = {
    {0, 1, 5, 10, {5, 5, 5},
     {M2, S(G2, 4, 4), S(B2, 4, 4), S(B3, 4, 4), S(R0, 9, 0), S(G0, 9, 0), S(B0, 9, 0), S(R1, 4, 0),
      S(G3, 4, 4), S(G2, 3, 0), S(G1, 4, 0), S(B3, 0, 0), S(G3, 3, 0), S(B1, 4, 0), S(B3, 1, 1), S(B2, 3, 0),
      S(R2, 4, 0), S(B3, 2, 2), S(R3, 4, 0), S(B3, 3, 3), S(PB, 4, 0), SEND}},
    {1, 1, 5, 7, {6, 6, 6},
     {M2, S(G2, 5, 5), S(G3, 4, 4), S(G3, 5, 5), S(R0, 6, 0), S(B3, 0, 0), S(B3, 1, 1), S(B2, 4, 4),
      S(G0, 6, 0), S(B2, 5, 5), S(B3, 2, 2), S(G2, 4, 4), S(B0, 6, 0), S(B3, 3, 3), S(B3, 5, 5), S(B3, 4, 4),
      S(R1, 5, 0), S(G2, 3, 0), S(G1, 5, 0), S(G3, 3, 0), S(B1, 5, 0), S(B2, 3, 0), S(R2, 5, 0),
      S(R3, 5, 0), S(PB, 4, 0), SEND}},
    {2, 1, 5, 11, {5, 4, 4},
     {M5, S(R0, 9, 0), S(G0, 9, 0), S(B0, 9, 0), S(R1, 4, 0), S(R0, 10, 10), S(G2, 3, 0), S(G1, 3, 0),
      S(G0, 10, 10), S(B3, 0, 0), S(G3, 3, 0), S(B1, 3, 0), S(B0, 10, 10), S(B3, 1, 1), S(B2, 3, 0),
      S(R2, 4, 0), S(B3, 2, 2), S(R3, 4, 0), S(B3, 3, 3), S(PB, 4, 0), SEND}},
    {6, 1, 5, 11, {4, 5, 4},
     {M5, S(R0, 9, 0), S(G0, 9, 0), S(B0, 9, 0), S(R1, 3, 0), S(R0, 10, 10), S(G3, 4, 4), S(G2, 3, 0),
      S(G1, 4, 0), S(G0, 10, 10), S(G3, 3, 0), S(B1, 3, 0), S(B0, 10, 10), S(B3, 1, 1), S(B2, 3, 0),
      S(R2, 3, 0), S(B3, 0, 0), S(B3, 2, 2), S(R3, 3, 0), S(G2, 4, 4), S(B3, 3, 3), S(PB, 4, 0), SEND}},
    {10, 1, 5, 11, {4, 4, 5},
     {M5, S(R0, 9, 0), S(G0, 9, 0), S(B0, 9, 0), S(R1, 3, 0), S(R0, 10, 10), S(B2, 4, 4), S(G2, 3, 0),
      S(G1, 3, 0), S(G0, 10, 10), S(B3, 0, 0), S(G3, 3, 0), S(B1, 4, 0), S(B0, 10, 10), S(B2, 3, 0),
      S(R2, 3, 0), S(B3, 1, 1), S(B3, 2, 2), S(R3, 3, 0), S(B3, 4, 4), S(B3, 3, 3), S(PB, 4, 0), SEND}},
    {14, 1, 5, 9, {5, 5, 5},
     {M5, S(R0, 8, 0), S(B2, 4, 4), S(G0, 8, 0), S(G2, 4, 4), S(B0, 8, 0), S(B3, 4, 4), S(R1, 4, 0),
      S(G3, 4, 4), S(G2, 3, 0), S(G1, 4, 0), S(B3, 0, 0), S(G3, 3, 0), S(B1, 4, 0), S(B3, 1, 1), S(B2, 3, 0),
      S(R2, 4, 0), S(B3, 2, 2), S(R3, 4, 0), S(B3, 3, 3), S(PB, 4, 0), SEND}},
    {18, 1, 5, 8, {6, 5, 5},
     {M5, S(R0, 7, 0), S(G3, 4, 4), S(B2, 4, 4), S(G0, 7, 0), S(B3, 2, 2), S(G2, 4, 4), S(B0, 7, 0),
      S(B3, 3, 3), S(B3, 4, 4), S(R1, 5, 0), S(G2, 3, 0), S(G1, 4, 0), S(B3, 0, 0), S(G3, 3, 0), S(B1, 4, 0),
      S(B3, 1, 1), S(B2, 3, 0), S(R2, 5, 0), S(R3, 5, 0), S(PB, 4, 0), SEND}},
    {22, 1, 5, 8, {5, 6, 5},
     {M5, S(R0, 7, 0), S(B3, 0, 0), S(B2, 4, 4), S(G0, 7, 0), S(G2, 5, 5), S(G2, 4, 4), S(B0, 7, 0),
      S(G3, 5, 5), S(B3, 4, 4), S(R1, 4, 0), S(G3, 4, 4), S(G2, 3, 0), S(G1, 5, 0), S(G3, 3, 0), S(B1, 4, 0),
      S(B3, 1, 1), S(B2, 3, 0), S(R2, 4, 0), S(B3, 2, 2), S(R3, 4, 0), S(B3, 3, 3), S(PB, 4, 0), SEND}},
    {26, 1, 5, 8, {5, 5, 6},
     {M5, S(R0, 7, 0), S(B3, 1, 1), S(B2, 4, 4), S(G0, 7, 0), S(B2, 5, 5), S(G2, 4, 4), S(B0, 7, 0),
      S(B3, 5, 5), S(B3, 4, 4), S(R1, 4, 0), S(G3, 4, 4), S(G2, 3, 0), S(G1, 4, 0), S(B3, 0, 0), S(G3, 3, 0),
      S(B1, 5, 0), S(B2, 3, 0), S(R2, 4, 0), S(B3, 2, 2), S(R3, 4, 0), S(B3, 3, 3), S(PB, 4, 0), SEND}},
    {30, 0, 5, 6, {6, 6, 6},
     {M5, S(R0, 5, 0), S(G3, 4, 4), S(B3, 0, 0), S(B3, 1, 1), S(B2, 4, 4), S(G0, 5, 0), S(G2, 5, 5),
      S(B2, 5, 5), S(B3, 2, 2), S(G2, 4, 4), S(B0, 5, 0), S(G3, 5, 5), S(B3, 3, 3), S(B3, 5, 5), S(B3, 4, 4),
      S(R1, 5, 0), S(G2, 3, 0), S(G1, 5, 0), S(G3, 3, 0), S(B1, 5, 0), S(B2, 3, 0), S(R2, 5, 0),
      S(R3, 5, 0), S(PB, 4, 0), SEND}},
    {3, 0, 0, 10, {10, 10, 10},
     {M5, S(R0, 9, 0), S(G0, 9, 0), S(B0, 9, 0), S(R1, 9, 0), S(G1, 9, 0), S(B1, 9, 0), SEND}},
    {7, 1, 0, 11, {9, 9, 9},
     {M5, S(R0, 9, 0), S(G0, 9, 0), S(B0, 9, 0), S(R1, 8, 0), S(R0, 10, 10), S(G1, 8, 0), S(G0, 10, 10),
      S(B1, 8, 0), S(B0, 10, 10), SEND}},
    {11, 1, 0, 12, {8, 8, 8},
     {M5, S(R0, 9, 0), S(G0, 9, 0), S(B0, 9, 0), S(R1, 7, 0), S(R0, 10, 11), S(G1, 7, 0), S(G0, 10, 11),
      S(B1, 7, 0), S(B0, 10, 11), SEND}},
    {15, 1, 0, 16, {4, 4, 4},
     {M5, S(R0, 9, 0), S(G0, 9, 0), S(B0, 9, 0), S(R1, 3, 0), S(R0, 10, 15), S(G1, 3, 0), S(G0, 10, 15),
      S(B1, 3, 0), S(B0, 10, 15), SEND}},
};

#undef S
#undef M2
#undef M5
#undef SEND

/* The mode table entry of a block, NULL for reserved modes. */
static const bc6h_mode *find_mode(const uint8_t *block)
{
    /* kiln__bc6h_modes index + 1 by mode number (0 = reserved); 2-bit modes 0 and 1 repeat every 4 */
    static const uint8_t by_value[32] = {1, 2, 3,  11, 1, 2, 4,  12, 1, 2, 5,  13, 1, 2, 6,  14,
                                         1, 2, 7,  0,  1, 2, 8,  0,  1, 2, 9,  0,  1, 2, 10, 0};
    unsigned i = by_value[block[0] & 31u];
    return i ? &kiln__bc6h_modes[i - 1] : NULL;
}

static inline int32_t sign_extend(int32_t v, unsigned bits)
{
    uint32_t m = 1u << (bits - 1);
    uint32_t x = (uint32_t)v & ((m << 1) - 1u);
    return (int32_t)(x ^ m) - (int32_t)m;
}

int kiln__bc6h_unpack(const uint8_t block[16], int is_signed, kiln_bc6h_info *info)
{
    memset(info, 0, sizeof *info);
    const bc6h_mode *m = find_mode(block);
    if (!m) return 0;
    uint64_t q[2];
    kiln__bptc_load(block, q);
    uint32_t f[END] = {0};
    unsigned pos = 0;
    for (const span *s = m->spans; s->field != END; s++) {
        if (s->a >= s->b) {
            unsigned n = s->a - s->b + 1u;
            f[s->field] |= kiln__bptc_bits(q, pos, n) << s->b;
            pos += n;
        } else {
            for (unsigned bit = s->b + 1; bit-- > s->a;) f[s->field] |= kiln__bptc_bits(q, pos++, 1) << bit;
        }
    }
    info->mode = m->value;
    info->subsets = m->pb ? 2 : 1;
    info->partition = (int)f[PB];
    info->epb = m->epb;
    info->transformed = m->transformed;
    const int nep = 2 * info->subsets;
    const int32_t mask = (int32_t)((1u << m->epb) - 1u);
    for (int e = 0; e < nep; e++) {
        for (int c = 0; c < 3; c++) {
            int32_t v = (int32_t)f[e * 3 + c];
            if (e == 0) {
                if (is_signed) v = sign_extend(v, m->epb);
            } else if (m->transformed) {
                int32_t sum = ((int32_t)f[c] + sign_extend(v, m->delta[c])) & mask;
                v = is_signed ? sign_extend(sum, m->epb) : sum;
                if (v < 0) info->wrapped_negative = 1;
            } else if (is_signed) {
                v = sign_extend(v, m->epb);
            }
            info->ep[e][c] = v;
        }
    }
    return info->subsets;
}

static int32_t unquantize(int32_t x, unsigned epb, int is_signed)
{
    if (!is_signed) {
        if (epb >= 15) return x;
        if (x == 0) return 0;
        if (x == (int32_t)((1u << epb) - 1u)) return 0xFFFF;
        return (int32_t)((((uint32_t)x << 15) + 0x4000u) >> (epb - 1));
    }
    if (epb >= 16) return x;
    int neg = x < 0;
    uint32_t mag = (uint32_t)(neg ? -x : x);
    int32_t unq;
    if (mag == 0) unq = 0;
    else if (mag >= (1u << (epb - 1)) - 1u) unq = 0x7FFF;
    else unq = (int32_t)(((mag << 15) + 0x4000u) >> (epb - 1));
    return neg ? -unq : unq;
}

/* floor(v / 64) without relying on the implementation-defined >> of negative numbers */
static inline int32_t floor_div64(int32_t v) { return v >= 0 ? v / 64 : -((-v + 63) / 64); }

static uint16_t finish(int32_t x, int is_signed)
{
    if (!is_signed) return (uint16_t)(((uint32_t)x * 31u) >> 6);
    if (x < 0) return (uint16_t)((((uint32_t)(-x) * 31u) >> 5) | 0x8000u);
    return (uint16_t)(((uint32_t)x * 31u) >> 5);
}

void kiln__dec_bc6h_half(const uint8_t *block, int is_signed, uint16_t out[48])
{
    kiln_bc6h_info info;
    if (!kiln__bc6h_unpack(block, is_signed, &info)) {
        memset(out, 0, 48 * sizeof out[0]);
        return;
    }
    int32_t unq[4][3];
    for (int e = 0; e < 2 * info.subsets; e++)
        for (int c = 0; c < 3; c++) unq[e][c] = unquantize(info.ep[e][c], (unsigned)info.epb, is_signed);

    const unsigned ns = (unsigned)info.subsets, part = (unsigned)info.partition;
    const unsigned ib = ns == 2 ? 3u : 4u;
    const uint8_t *w = kiln__bptc_weights(ib);
    uint64_t q[2];
    kiln__bptc_load(block, q);
    unsigned pos = ns == 2 ? 82u : 65u;
    for (unsigned t = 0; t < 16; t++) {
        unsigned n = ib - (unsigned)kiln__bptc_is_anchor(ns, part, t);
        unsigned idx = kiln__bptc_bits(q, pos, n);
        pos += n;
        unsigned s = kiln__bptc_subset(ns, part, t);
        int32_t wt = w[idx];
        for (int c = 0; c < 3; c++) {
            int32_t v = floor_div64((64 - wt) * unq[2 * s][c] + wt * unq[2 * s + 1][c] + 32);
            out[t * 3 + c] = finish(v, is_signed);
        }
    }
}

static void dec_float(const uint8_t *block, int is_signed, float *out)
{
    uint16_t h[48];
    kiln__dec_bc6h_half(block, is_signed, h);
    for (int t = 0; t < 16; t++) {
        out[t * 4 + 0] = kiln__half_to_float(h[t * 3 + 0]);
        out[t * 4 + 1] = kiln__half_to_float(h[t * 3 + 1]);
        out[t * 4 + 2] = kiln__half_to_float(h[t * 3 + 2]);
        out[t * 4 + 3] = 1.0f;
    }
}

void kiln__dec_bc6h_uf(const uint8_t *block, void *texels) { dec_float(block, 0, texels); }
void kiln__dec_bc6h_sf(const uint8_t *block, void *texels) { dec_float(block, 1, texels); }

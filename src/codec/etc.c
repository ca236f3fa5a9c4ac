/* etc.c - CPU decoders for ETC1, ETC2 RGB8 / RGB8A1 / RGBA8 and EAC R11 / RG11 (unsigned and signed).
 *
 * Written from the Khronos Data Format Specification 1.3, chapter "ETC2 Compressed Texture Image
 * Formats" (the text of the OpenGL 4.5 specification's "ETC Compressed Texture Image Formats"):
 *   - "Format RGB ETC2": mode selection, individual / differential (ETC1), T, H and planar modes;
 *   - "Format RGBA ETC2": 8-bit EAC alpha, clamp255(base + modifier * multiplier);
 *   - "Format Unsigned R11 EAC" / "Unsigned RG11 EAC": clamp2(base * 8 + 4 + modifier * multiplier * 8),
 *     multiplier 0 meaning 1/8;
 *   - "Format Signed R11 EAC" / "Signed RG11 EAC": clamp2(base * 8 + modifier * multiplier * 8) in
 *     [-1023, 1023], base -128 treated as -127, multiplier 0 meaning 1/8;
 *   - "Format RGB ETC2 with punchthrough alpha": no individual mode, bit 33 = opaque bit, index 2 =
 *     transparent black in differential/T/H when not opaque, zeroed small modifiers, planar always opaque.
 * ETC1 is the subset of RGB ETC2 without T/H/planar (valid ETC1 data never overflows in differential
 * mode), so ETC1 textures are decoded by the ETC2 decoder.
 *
 * Every decoder is a pure function of its input block: any byte pattern decodes (no invalid blocks).
 */
#include "codec/codec.h"
#include "codec/etc_tables.h"


static inline uint64_t load_be64(const uint8_t *b)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = (v << 8) | b[i];
    return v;
}

static inline int clamp_int(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }
static inline int sext3(uint32_t v) { return (int)(v & 3) - (int)(v & 4); } /* 3-bit two's complement */

/* ------------------------------------------------------------------------------------ ETC2 colour */

kiln_etc_mode kiln__etc_mode(const uint8_t block8[8], int punchthrough)
{
    const uint32_t hi = (uint32_t)(load_be64(block8) >> 32); /* bit 32 of int64bit is bit 0 here */
    if (!punchthrough && !((hi >> 1) & 1)) return KILN_ETC_MODE_INDIVIDUAL;
    /* "Mode selection" (Table-etc2-dataformat a): R (63..59) + dR (58..56), G (55..51) + dG (50..48),
     * B (47..43) + dB (42..40); the first sum outside [0, 31] selects T, H or planar. */
    const int r = (int)((hi >> 27) & 31) + sext3(hi >> 24);
    const int g = (int)((hi >> 19) & 31) + sext3(hi >> 16);
    const int b = (int)((hi >> 11) & 31) + sext3(hi >> 8);
    if (r < 0 || r > 31) return KILN_ETC_MODE_T;
    if (g < 0 || g > 31) return KILN_ETC_MODE_H;
    if (b < 0 || b > 31) return KILN_ETC_MODE_PLANAR;
    return KILN_ETC_MODE_DIFFERENTIAL;
}

/* 2-bit pixel index of spec texel k (= x * 4 + y): msb at bit 16 + k, lsb at bit k (Table-etc2-dataformat f). */
static inline int etc_index(uint32_t lo, int k) { return (int)((((lo >> (16 + k)) & 1) << 1) | ((lo >> k) & 1)); }

static inline void put_rgba(uint8_t *t, int r, int g, int b, int a)
{
    t[0] = (uint8_t)r;
    t[1] = (uint8_t)g;
    t[2] = (uint8_t)b;
    t[3] = (uint8_t)a;
}

/* Individual / differential: two sub-blocks, each a base colour plus a per-texel intensity modifier. */
static void etc_subblocks(uint32_t hi, uint32_t lo, const int base[2][3], int punchthrough, int opaque,
                          uint8_t out[64])
{
    const int flip = (int)(hi & 1);
    const int table[2] = {(int)((hi >> 5) & 7), (int)((hi >> 2) & 7)}; /* table1 39..37, table2 36..34 */
    const int16_t(*mods)[4] = (punchthrough && !opaque) ? kiln__etc_modifiers_nonopaque : kiln__etc_modifiers;
    for (int y = 0; y < 4; y++) {
        for (int x = 0; x < 4; x++) {
            uint8_t *t = out + (y * 4 + x) * 4;
            const int idx = etc_index(lo, x * 4 + y);
            if (punchthrough && !opaque && idx == 2) {
                put_rgba(t, 0, 0, 0, 0);
                continue;
            }
            /* flip 0: 2x4 sub-blocks side by side; flip 1: 4x2 sub-blocks on top of each other */
            const int s = flip ? (y >= 2) : (x >= 2);
            const int m = mods[table[s]][idx];
            put_rgba(t, clamp_int(base[s][0] + m, 0, 255), clamp_int(base[s][1] + m, 0, 255),
                     clamp_int(base[s][2] + m, 0, 255), 255);
        }
    }
}

/* T and H: four paint colours selected directly by the 2-bit pixel index. */
static void etc_paint(uint32_t lo, const int paint[4][3], int punchthrough, int opaque, uint8_t out[64])
{
    for (int y = 0; y < 4; y++) {
        for (int x = 0; x < 4; x++) {
            uint8_t *t = out + (y * 4 + x) * 4;
            const int idx = etc_index(lo, x * 4 + y);
            if (punchthrough && !opaque && idx == 2)
                put_rgba(t, 0, 0, 0, 0);
            else
                put_rgba(t, paint[idx][0], paint[idx][1], paint[idx][2], 255);
        }
    }
}

static void set_paint(int p[3], const int c[3], int d)
{
    for (int i = 0; i < 3; i++) p[i] = clamp_int(c[i] + d, 0, 255);
}

void kiln__dec_etc2_colors(const uint8_t *block8, uint8_t out[64], int punchthrough)
{
    const uint64_t v = load_be64(block8);
    const uint32_t hi = (uint32_t)(v >> 32), lo = (uint32_t)v;
    const int opaque = punchthrough ? (int)((hi >> 1) & 1) : 1; /* bit 33 */
    const kiln_etc_mode mode = kiln__etc_mode(block8, punchthrough);

    switch (mode) {
    case KILN_ETC_MODE_INDIVIDUAL: { /* Table-etc2-dataformat b: R1 R2 G1 G2 B1 B2 as 4-bit pairs */
        const int base[2][3] = {
            {kiln__etc_ext4((int)(hi >> 28) & 15), kiln__etc_ext4((int)(hi >> 20) & 15), kiln__etc_ext4((int)(hi >> 12) & 15)},
            {kiln__etc_ext4((int)(hi >> 24) & 15), kiln__etc_ext4((int)(hi >> 16) & 15), kiln__etc_ext4((int)(hi >> 8) & 15)},
        };
        etc_subblocks(hi, lo, base, punchthrough, opaque, out);
        return;
    }
    case KILN_ETC_MODE_DIFFERENTIAL: { /* Table-etc2-dataformat c: 5-bit base + 3-bit signed delta */
        const int r = (int)(hi >> 27) & 31, g = (int)(hi >> 19) & 31, b = (int)(hi >> 11) & 31;
        const int base[2][3] = {
            {kiln__etc_ext5(r), kiln__etc_ext5(g), kiln__etc_ext5(b)},
            {kiln__etc_ext5(r + sext3(hi >> 24)), kiln__etc_ext5(g + sext3(hi >> 16)), kiln__etc_ext5(b + sext3(hi >> 8))},
        };
        etc_subblocks(hi, lo, base, punchthrough, opaque, out);
        return;
    }
    case KILN_ETC_MODE_T: { /* Table-etc2-dataformat d */
        const int c1[3] = {kiln__etc_ext4((int)((((hi >> 27) & 3) << 2) | ((hi >> 24) & 3))),
                           kiln__etc_ext4((int)(hi >> 20) & 15), kiln__etc_ext4((int)(hi >> 16) & 15)};
        const int c2[3] = {kiln__etc_ext4((int)(hi >> 12) & 15), kiln__etc_ext4((int)(hi >> 8) & 15),
                           kiln__etc_ext4((int)(hi >> 4) & 15)};
        const int d = kiln__etc_distances[(((hi >> 2) & 3) << 1) | (hi & 1)]; /* (da << 1) | db */
        int paint[4][3];
        set_paint(paint[0], c1, 0);
        set_paint(paint[1], c2, d);
        set_paint(paint[2], c2, 0);
        set_paint(paint[3], c2, -d);
        etc_paint(lo, paint, punchthrough, opaque, out);
        return;
    }
    case KILN_ETC_MODE_H: { /* Table-etc2-dataformat e */
        const int g1 = (int)((((hi >> 24) & 7) << 1) | ((hi >> 20) & 1));
        const int b1 = (int)((((hi >> 19) & 1) << 3) | ((hi >> 15) & 7));
        const int c1[3] = {kiln__etc_ext4((int)(hi >> 27) & 15), kiln__etc_ext4(g1), kiln__etc_ext4(b1)};
        const int c2[3] = {kiln__etc_ext4((int)(hi >> 11) & 15), kiln__etc_ext4((int)(hi >> 7) & 15),
                           kiln__etc_ext4((int)(hi >> 3) & 15)};
        /* distance index: da (bit 34) msb, db (bit 32) middle, lsb = (base col 1 >= base col 2) with a
         * colour's value (R << 16) + (G << 8) + B */
        const int v1 = (c1[0] << 16) | (c1[1] << 8) | c1[2], v2 = (c2[0] << 16) | (c2[1] << 8) | c2[2];
        const int d = kiln__etc_distances[(((hi >> 2) & 1) << 2) | ((hi & 1) << 1) | (v1 >= v2)];
        int paint[4][3];
        set_paint(paint[0], c1, d);
        set_paint(paint[1], c1, -d);
        set_paint(paint[2], c2, d);
        set_paint(paint[3], c2, -d);
        etc_paint(lo, paint, punchthrough, opaque, out);
        return;
    }
    case KILN_ETC_MODE_PLANAR: { /* Table-etc2-dataformat g; RGB 676 colours O, H, V; always opaque */
        const int ro = kiln__etc_ext6((int)(hi >> 25) & 63);
        const int go = kiln__etc_ext7((int)((((hi >> 24) & 1) << 6) | ((hi >> 17) & 63)));
        const int bo = kiln__etc_ext6((int)((((hi >> 16) & 1) << 5) | (((hi >> 11) & 3) << 3) | ((hi >> 7) & 7)));
        const int rh = kiln__etc_ext6((int)((((hi >> 2) & 31) << 1) | (hi & 1)));
        const int gh = kiln__etc_ext7((int)(lo >> 25) & 127);
        const int bh = kiln__etc_ext6((int)(lo >> 19) & 63);
        const int rv = kiln__etc_ext6((int)(lo >> 13) & 63);
        const int gv = kiln__etc_ext7((int)(lo >> 6) & 127);
        const int bv = kiln__etc_ext6((int)lo & 63);
        for (int y = 0; y < 4; y++) {
            for (int x = 0; x < 4; x++) {
                /* clamp255((x * (H - O) + y * (V - O) + 4 * O + 2) >> 2); arithmetic shift of a possibly
                 * negative sum is floor division, written as such to stay portable */
                int c[3];
                const int o[3] = {ro, go, bo}, h[3] = {rh, gh, bh}, vv[3] = {rv, gv, bv};
                for (int i = 0; i < 3; i++) {
                    int s = x * (h[i] - o[i]) + y * (vv[i] - o[i]) + 4 * o[i] + 2;
                    s = s >= 0 ? s / 4 : -((-s + 3) / 4);
                    c[i] = clamp_int(s, 0, 255);
                }
                put_rgba(out + (y * 4 + x) * 4, c[0], c[1], c[2], 255);
            }
        }
        return;
    }
    }
}

void kiln__dec_etc2_rgb(const uint8_t *block, void *texels) { kiln__dec_etc2_colors(block, texels, 0); }

void kiln__dec_etc2_rgb_a1(const uint8_t *block, void *texels) { kiln__dec_etc2_colors(block, texels, 1); }

/* ------------------------------------------------------------------------------------ EAC */

/* 3-bit index of spec texel k: bits (47 - 3k) .. (45 - 3k), msb first (Table-etc2eac-dataformat b). */
static inline int eac_index(uint64_t v, int k) { return (int)((v >> (45 - 3 * k)) & 7); }

void kiln__dec_eac_alpha8(const uint8_t *block8, uint8_t out[16])
{
    const uint64_t v = load_be64(block8);
    const int base = (int)(v >> 56), mult = (int)(v >> 52) & 15;
    const int8_t *mods = kiln__eac_modifiers[(v >> 48) & 15];
    /* "Format RGBA ETC2": clamp255(base + modifier * multiplier); multiplier 0 really gives 0 here */
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 4; x++) out[y * 4 + x] = (uint8_t)clamp_int(base + mods[eac_index(v, x * 4 + y)] * mult, 0, 255);
}

void kiln__dec_eac_channel_u11(const uint8_t *block8, uint16_t out[16])
{
    const uint64_t v = load_be64(block8);
    const int base = (int)(v >> 56) * 8 + 4, mult = (int)(v >> 52) & 15;
    const int8_t *mods = kiln__eac_modifiers[(v >> 48) & 15];
    for (int y = 0; y < 4; y++) {
        for (int x = 0; x < 4; x++) {
            const int m = mods[eac_index(v, x * 4 + y)];
            /* "Format Unsigned R11 EAC": clamp2(base * 8 + 4 + modifier * multiplier * 8); multiplier 0 -> 1/8 */
            out[y * 4 + x] = (uint16_t)clamp_int(base + (mult ? m * mult * 8 : m), 0, 2047);
        }
    }
}

void kiln__dec_eac_channel_s11(const uint8_t *block8, int16_t out[16])
{
    const uint64_t v = load_be64(block8);
    int base = (int)(int8_t)block8[0];
    if (base == -128) base = -127; /* "-128 is not allowed; ... it must be treated as -127" */
    base *= 8;
    const int mult = (int)(v >> 52) & 15;
    const int8_t *mods = kiln__eac_modifiers[(v >> 48) & 15];
    for (int y = 0; y < 4; y++) {
        for (int x = 0; x < 4; x++) {
            const int m = mods[eac_index(v, x * 4 + y)];
            /* "Format Signed R11 EAC": clamp2(base * 8 + modifier * multiplier * 8) to [-1023, 1023] */
            out[y * 4 + x] = (int16_t)clamp_int(base + (mult ? m * mult * 8 : m), -1023, 1023);
        }
    }
}

void kiln__dec_etc2_rgba(const uint8_t *block, void *texels)
{
    uint8_t *t = texels;
    uint8_t a[16];
    kiln__dec_etc2_colors(block + 8, t, 0); /* int64bitColor = bytes 8..15 */
    kiln__dec_eac_alpha8(block, a);         /* int64bitAlpha = bytes 0..7 */
    for (int i = 0; i < 16; i++) t[i * 4 + 3] = a[i];
}

static void eac_unsigned(const uint8_t *block, void *texels, int channels)
{
    uint16_t *t = texels;
    uint16_t c[2][16];
    for (int ch = 0; ch < channels; ch++) kiln__dec_eac_channel_u11(block + 8 * ch, c[ch]);
    for (int i = 0; i < 16; i++) {
        t[i * 4 + 0] = kiln__eac_u11_to_u16(c[0][i]);
        t[i * 4 + 1] = channels > 1 ? kiln__eac_u11_to_u16(c[1][i]) : 0;
        t[i * 4 + 2] = 0;
        t[i * 4 + 3] = 65535;
    }
}

static void eac_signed(const uint8_t *block, void *texels, int channels)
{
    float *t = texels;
    int16_t c[2][16];
    for (int ch = 0; ch < channels; ch++) kiln__dec_eac_channel_s11(block + 8 * ch, c[ch]);
    for (int i = 0; i < 16; i++) {
        /* values are already in [-1023, 1023], so value / 1023 lies in [-1, 1] */
        t[i * 4 + 0] = (float)c[0][i] / 1023.0f;
        t[i * 4 + 1] = channels > 1 ? (float)c[1][i] / 1023.0f : 0.0f;
        t[i * 4 + 2] = 0.0f;
        t[i * 4 + 3] = 1.0f;
    }
}

void kiln__dec_eac_r11u(const uint8_t *block, void *texels) { eac_unsigned(block, texels, 1); }
void kiln__dec_eac_rg11u(const uint8_t *block, void *texels) { eac_unsigned(block, texels, 2); }
void kiln__dec_eac_r11s(const uint8_t *block, void *texels) { eac_signed(block, texels, 1); }
void kiln__dec_eac_rg11s(const uint8_t *block, void *texels) { eac_signed(block, texels, 2); }

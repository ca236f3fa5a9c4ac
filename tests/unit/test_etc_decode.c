/* test_etc_decode.c - ETC1 / ETC2 / EAC decoders against hand-built blocks whose expected texels were
 * worked out by hand from the Khronos Data Format Specification ("ETC2 Compressed Texture Image Formats").
 * The exhaustive comparison against an independent decoder (Mesa) is test_etc_gl.c. */
#include "support.h"
#include "codec/codec.h"
#include "codec/etc_tables.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- block builders: fields are placed by their spec bit numbers in the big-endian int64bit ---- */

static void put(uint64_t *v, int top_bit, int nbits, uint64_t value)
{
    const int lo = top_bit - nbits + 1;
    const uint64_t mask = ((1ull << nbits) - 1) << lo;
    *v = (*v & ~mask) | ((value << lo) & mask);
}

/* 2-bit ETC pixel index of texel (x, y): spec texel k = 4x + y, msb at bit 16 + k, lsb at bit k */
static void etc_idx(uint64_t *v, int x, int y, int idx)
{
    const int k = x * 4 + y;
    put(v, 16 + k, 1, (uint64_t)(idx >> 1));
    put(v, k, 1, (uint64_t)(idx & 1));
}

/* 3-bit EAC index of texel (x, y): bits 47 - 3k .. 45 - 3k */
static void eac_idx(uint64_t *v, int x, int y, int idx) { put(v, 47 - 3 * (x * 4 + y), 3, (uint64_t)idx); }

static void store(uint64_t v, uint8_t *b)
{
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (56 - 8 * i));
}

static void expect_rgba(const uint8_t got[64], const uint8_t exp[16][4], const char *what)
{
    for (int i = 0; i < 16; i++) {
        if (memcmp(got + i * 4, exp[i], 4) != 0) {
            print_error("%s: texel (%d,%d) is (%d,%d,%d,%d), expected (%d,%d,%d,%d)\n", what, i % 4, i / 4, got[i * 4],
                        got[i * 4 + 1], got[i * 4 + 2], got[i * 4 + 3], exp[i][0], exp[i][1], exp[i][2], exp[i][3]);
            fail();
        }
    }
}

/* ---- individual mode (spec example colours: R1 = 14, G1 = 3, B1 = 8 -> 238, 51, 136) ---- */

static uint64_t individual_block(int flip)
{
    uint64_t v = 0;
    put(&v, 63, 4, 14); /* R1 */
    put(&v, 59, 4, 3);  /* R2 */
    put(&v, 55, 4, 3);  /* G1 */
    put(&v, 51, 4, 8);  /* G2 */
    put(&v, 47, 4, 8);  /* B1 */
    put(&v, 43, 4, 15); /* B2 */
    put(&v, 39, 3, 2);  /* table1: 9 / 29 */
    put(&v, 36, 3, 7);  /* table2: 47 / 183 */
    put(&v, 33, 1, 0);  /* diff bit 0: individual */
    put(&v, 32, 1, (uint64_t)flip);
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 4; x++) etc_idx(&v, x, y, (x + y) & 3);
    return v;
}

static void etc_individual(void **state)
{
    (void)state;
    uint8_t b[8], out[64];
    /* sub-block 1 base (238,51,136), table 2: +9 (247,60,145) +29 (255,80,165) -9 (229,42,127) -29 (209,22,107)
     * sub-block 2 base (51,136,255), table 7: +47 (98,183,255) +183 (234,255,255) -47 (4,89,208) -183 (0,0,72) */
    static const uint8_t side[16][4] = {
        {247, 60, 145, 255}, {255, 80, 165, 255}, {4, 89, 208, 255},   {0, 0, 72, 255},
        {255, 80, 165, 255}, {229, 42, 127, 255}, {0, 0, 72, 255},     {98, 183, 255, 255},
        {229, 42, 127, 255}, {209, 22, 107, 255}, {98, 183, 255, 255}, {234, 255, 255, 255},
        {209, 22, 107, 255}, {247, 60, 145, 255}, {234, 255, 255, 255}, {4, 89, 208, 255},
    };
    static const uint8_t ontop[16][4] = {
        {247, 60, 145, 255}, {255, 80, 165, 255}, {229, 42, 127, 255}, {209, 22, 107, 255},
        {255, 80, 165, 255}, {229, 42, 127, 255}, {209, 22, 107, 255}, {247, 60, 145, 255},
        {4, 89, 208, 255},   {0, 0, 72, 255},     {98, 183, 255, 255}, {234, 255, 255, 255},
        {0, 0, 72, 255},     {98, 183, 255, 255}, {234, 255, 255, 255}, {4, 89, 208, 255},
    };
    store(individual_block(0), b);
    assert_int_equal(kiln__etc_mode(b, 0), KILN_ETC_MODE_INDIVIDUAL);
    kiln__dec_etc2_rgb(b, out);
    expect_rgba(out, side, "individual, flip 0");
    store(individual_block(1), b);
    kiln__dec_etc2_rgb(b, out);
    expect_rgba(out, ontop, "individual, flip 1");
    /* the decoder table says ETC1 and ETC2 RGB share this decoder */
    assert_ptr_equal(kiln__block_decoder(KILN_FORMAT_ETC1_UNORM), kiln__dec_etc2_rgb);
    assert_ptr_equal(kiln__block_decoder(KILN_FORMAT_ETC2_RGB8_SRGB), kiln__dec_etc2_rgb);
}

/* ---- differential mode (spec example: R = 28, dR = -4, G = 4, dG = 2, B = 3, dB = 0) ---- */

static uint64_t differential_block(int opaque_or_diff)
{
    uint64_t v = 0;
    put(&v, 63, 5, 28);
    put(&v, 58, 3, 4); /* dR = 100b = -4 */
    put(&v, 55, 5, 4);
    put(&v, 50, 3, 2);
    put(&v, 47, 5, 3);
    put(&v, 42, 3, 0);
    put(&v, 39, 3, 0); /* table1: 2 / 8 */
    put(&v, 36, 3, 5); /* table2: 24 / 80 */
    put(&v, 33, 1, (uint64_t)opaque_or_diff);
    put(&v, 32, 1, 1); /* flip: rows 0-1 sub-block 1, rows 2-3 sub-block 2 */
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 4; x++) etc_idx(&v, x, y, y); /* row y uses pixel index y */
    return v;
}

static void etc_differential(void **state)
{
    (void)state;
    uint8_t b[8], out[64];
    store(differential_block(1), b);
    assert_int_equal(kiln__etc_mode(b, 0), KILN_ETC_MODE_DIFFERENTIAL);
    /* base 1 = (231,33,24), base 2 = extend5(24, 6, 3) = (198,49,24) (the spec's worked example)
     * row 0: +2, row 1: +8 (sub-block 1); row 2: -24, row 3: -80 (sub-block 2) */
    static const uint8_t exp[16][4] = {
        {233, 35, 26, 255}, {233, 35, 26, 255}, {233, 35, 26, 255}, {233, 35, 26, 255},
        {239, 41, 32, 255}, {239, 41, 32, 255}, {239, 41, 32, 255}, {239, 41, 32, 255},
        {174, 25, 0, 255},  {174, 25, 0, 255},  {174, 25, 0, 255},  {174, 25, 0, 255},
        {118, 0, 0, 255},   {118, 0, 0, 255},   {118, 0, 0, 255},   {118, 0, 0, 255},
    };
    kiln__dec_etc2_rgb(b, out);
    expect_rgba(out, exp, "differential");
    /* RGB8A1 with the opaque bit set decodes exactly like RGB ETC2 */
    kiln__dec_etc2_rgb_a1(b, out);
    expect_rgba(out, exp, "punch-through differential, opaque");
}

static void etc_punchthrough_differential(void **state)
{
    (void)state;
    uint8_t b[8], out[64];
    store(differential_block(0), b); /* bit 33 = 0: individual in RGB ETC2, non-opaque differential in A1 */
    assert_int_equal(kiln__etc_mode(b, 0), KILN_ETC_MODE_INDIVIDUAL);
    assert_int_equal(kiln__etc_mode(b, 1), KILN_ETC_MODE_DIFFERENTIAL);
    /* Table-etc2punch-modifiers-b: index 0 -> 0, 1 -> +b, 2 -> transparent black, 3 -> -b */
    static const uint8_t exp[16][4] = {
        {231, 33, 24, 255}, {231, 33, 24, 255}, {231, 33, 24, 255}, {231, 33, 24, 255},
        {239, 41, 32, 255}, {239, 41, 32, 255}, {239, 41, 32, 255}, {239, 41, 32, 255},
        {0, 0, 0, 0},       {0, 0, 0, 0},       {0, 0, 0, 0},       {0, 0, 0, 0},
        {118, 0, 0, 255},   {118, 0, 0, 255},   {118, 0, 0, 255},   {118, 0, 0, 255},
    };
    kiln__dec_etc2_rgb_a1(b, out);
    expect_rgba(out, exp, "punch-through differential, not opaque");
    /* the same bits as RGB ETC2 are an individual block: R1 = 0xE, R2 = 0x4, G1 = 0x2, G2 = 0x2, B1 = 0x1,
     * B2 = 0x8, table1 0 (2/8), table2 5 (24/80), flip 1 -> base 1 (238,34,17), base 2 (68,34,136) */
    static const uint8_t ind[16][4] = {
        {240, 36, 19, 255}, {240, 36, 19, 255}, {240, 36, 19, 255}, {240, 36, 19, 255},
        {246, 42, 25, 255}, {246, 42, 25, 255}, {246, 42, 25, 255}, {246, 42, 25, 255},
        {44, 10, 112, 255}, {44, 10, 112, 255}, {44, 10, 112, 255}, {44, 10, 112, 255},
        {0, 0, 56, 255},    {0, 0, 56, 255},    {0, 0, 56, 255},    {0, 0, 56, 255},
    };
    kiln__dec_etc2_rgb(b, out);
    expect_rgba(out, ind, "same bits as RGB ETC2 (individual)");
}

/* ---- T mode ---- */

static uint64_t t_block(int bit33)
{
    uint64_t v = 0;
    /* R1 = (R1a << 2) | R1b = (2 << 2) | 3 = 11; R + dR must overflow: bits 63..61 = 111 and bit 58 = 0 give
     * R = 11110b = 30, dR = 011b = 3 -> 33 > 31 */
    put(&v, 63, 3, 7);
    put(&v, 60, 2, 2); /* R1a */
    put(&v, 58, 1, 0);
    put(&v, 57, 2, 3); /* R1b */
    put(&v, 55, 4, 5);  /* G1 -> 85 */
    put(&v, 51, 4, 12); /* B1 -> 204 */
    put(&v, 47, 4, 8);  /* R2 -> 136 */
    put(&v, 43, 4, 0);  /* G2 -> 0 */
    put(&v, 39, 4, 15); /* B2 -> 255 */
    put(&v, 35, 2, 2);  /* da */
    put(&v, 33, 1, (uint64_t)bit33);
    put(&v, 32, 1, 1); /* db: distance index 101b = 5 -> 32 */
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 4; x++) etc_idx(&v, x, y, x); /* column x uses paint colour x */
    return v;
}

static void etc_t_mode(void **state)
{
    (void)state;
    uint8_t b[8], out[64], exp[16][4];
    /* paint 0 = base 1 = (187,85,204); paint 1 = base 2 + 32 = (168,32,255); paint 2 = base 2 = (136,0,255);
     * paint 3 = base 2 - 32 = (104,0,223) */
    static const uint8_t paint[4][4] = {{187, 85, 204, 255}, {168, 32, 255, 255}, {136, 0, 255, 255}, {104, 0, 223, 255}};
    for (int i = 0; i < 16; i++) memcpy(exp[i], paint[i % 4], 4);
    store(t_block(1), b);
    assert_int_equal(kiln__etc_mode(b, 0), KILN_ETC_MODE_T);
    kiln__dec_etc2_rgb(b, out);
    expect_rgba(out, (const uint8_t(*)[4])exp, "T mode");
    kiln__dec_etc2_rgb_a1(b, out);
    expect_rgba(out, (const uint8_t(*)[4])exp, "punch-through T mode, opaque");
    /* not opaque: index 2 is transparent black, the others keep their paint colours */
    store(t_block(0), b);
    assert_int_equal(kiln__etc_mode(b, 1), KILN_ETC_MODE_T);
    for (int y = 0; y < 4; y++) memset(exp[y * 4 + 2], 0, 4);
    kiln__dec_etc2_rgb_a1(b, out);
    expect_rgba(out, (const uint8_t(*)[4])exp, "punch-through T mode, not opaque");
}

/* ---- H mode ---- */

/* H block with base colours given as 4-bit values; the mode bits (R + dR in range, G + dG underflowing) are
 * met by the caller's choice of values and the unused bits given here. */
static uint64_t h_block(int r1, int g1, int b1, int r2, int g2, int b2, int da, int db, int bit33, int bit50)
{
    uint64_t v = 0;
    put(&v, 62, 4, (uint64_t)r1);
    put(&v, 58, 3, (uint64_t)(g1 >> 1)); /* G1a */
    put(&v, 52, 1, (uint64_t)(g1 & 1));  /* G1b */
    put(&v, 51, 1, (uint64_t)(b1 >> 3)); /* B1a */
    put(&v, 50, 1, (uint64_t)bit50);
    put(&v, 49, 3, (uint64_t)(b1 & 7)); /* B1b */
    put(&v, 46, 4, (uint64_t)r2);
    put(&v, 42, 4, (uint64_t)g2);
    put(&v, 38, 4, (uint64_t)b2);
    put(&v, 34, 1, (uint64_t)da);
    put(&v, 33, 1, (uint64_t)bit33);
    put(&v, 32, 1, (uint64_t)db);
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 4; x++) etc_idx(&v, x, y, 3 - y); /* row y uses paint colour 3 - y */
    return v;
}

static void etc_h_mode(void **state)
{
    (void)state;
    uint8_t b[8], out[64], exp[16][4];
    /* base 1 = (9,7,1) -> (153,119,17), base 2 = (4,10,6) -> (68,170,102). Mode: R = 01001b = 9, dR = G1a = 3
     * -> 12 (in range); G = 000 G1b B1a = 00010b = 2, dG = bit50 B1b[2:1] = 1 00b = -4 -> -2: H.
     * base 1 >= base 2 -> lsb 1; da = 1, db = 0 -> index 101b = 5 -> d = 32.
     * paints: (185,151,49) (121,87,0) (100,202,134) (36,138,70) */
    static const uint8_t p1[4][4] = {{185, 151, 49, 255}, {121, 87, 0, 255}, {100, 202, 134, 255}, {36, 138, 70, 255}};
    store(h_block(9, 7, 1, 4, 10, 6, 1, 0, 1, 1), b);
    assert_int_equal(kiln__etc_mode(b, 0), KILN_ETC_MODE_H);
    for (int i = 0; i < 16; i++) memcpy(exp[i], p1[3 - i / 4], 4);
    kiln__dec_etc2_rgb(b, out);
    expect_rgba(out, (const uint8_t(*)[4])exp, "H mode, base 1 >= base 2");

    /* colours swapped: base 1 = (4,10,6) -> (68,170,102), base 2 = (9,7,1) -> (153,119,17). R = 4, dR = G1a =
     * 101b = -3 -> 1; G = 000 0 0 = 0, dG = 1 11b = -1 -> -1: H. base 1 < base 2 -> lsb 0: index 100b = 4 ->
     * d = 23. paints: (91,193,125) (45,147,79) (176,142,40) (130,96,0) */
    static const uint8_t p2[4][4] = {{91, 193, 125, 255}, {45, 147, 79, 255}, {176, 142, 40, 255}, {130, 96, 0, 255}};
    store(h_block(4, 10, 6, 9, 7, 1, 1, 0, 1, 1), b);
    assert_int_equal(kiln__etc_mode(b, 0), KILN_ETC_MODE_H);
    for (int i = 0; i < 16; i++) memcpy(exp[i], p2[3 - i / 4], 4);
    kiln__dec_etc2_rgb(b, out);
    expect_rgba(out, (const uint8_t(*)[4])exp, "H mode, base 1 < base 2");
    /* punch-through, not opaque: row 1 (paint 2) becomes transparent black */
    store(h_block(4, 10, 6, 9, 7, 1, 1, 0, 0, 1), b);
    assert_int_equal(kiln__etc_mode(b, 1), KILN_ETC_MODE_H);
    for (int x = 0; x < 4; x++) memset(exp[4 + x], 0, 4);
    kiln__dec_etc2_rgb_a1(b, out);
    expect_rgba(out, (const uint8_t(*)[4])exp, "punch-through H mode, not opaque");

    /* equal base colours: (R<<16)+(G<<8)+B values are equal, so lsb = 1 (>=). base (4,2,6): R = 4, dR = G1a =
     * 001b -> 5; G = 000 0 0 = 0, dG = 1 11b -> -1: H. da = 0, db = 0 -> index 001b -> d = 6.
     * (68,34,102) +- 6 -> paints (74,40,108) (62,28,96) (74,40,108) (62,28,96) */
    static const uint8_t p3[4][4] = {{74, 40, 108, 255}, {62, 28, 96, 255}, {74, 40, 108, 255}, {62, 28, 96, 255}};
    store(h_block(4, 2, 6, 4, 2, 6, 0, 0, 1, 1), b);
    assert_int_equal(kiln__etc_mode(b, 0), KILN_ETC_MODE_H);
    for (int i = 0; i < 16; i++) memcpy(exp[i], p3[3 - i / 4], 4);
    kiln__dec_etc2_rgb(b, out);
    expect_rgba(out, (const uint8_t(*)[4])exp, "H mode, equal base colours");
}

/* ---- planar mode ---- */

static uint64_t planar_block(int ro, int go, int bo, int rh, int gh, int bh, int rv, int gv, int bv, int bit33)
{
    uint64_t v = 0;
    put(&v, 62, 6, (uint64_t)ro);
    put(&v, 56, 1, (uint64_t)(go >> 6)); /* GO1 */
    put(&v, 54, 6, (uint64_t)(go & 63)); /* GO2 */
    put(&v, 48, 1, (uint64_t)(bo >> 5)); /* BO1 */
    put(&v, 44, 2, (uint64_t)((bo >> 3) & 3)); /* BO2 */
    put(&v, 42, 1, 1);                          /* unused; makes dB negative so that B + dB underflows */
    put(&v, 41, 3, (uint64_t)(bo & 7));         /* BO3 */
    put(&v, 38, 5, (uint64_t)(rh >> 1));        /* RH1 */
    put(&v, 33, 1, (uint64_t)bit33);
    put(&v, 32, 1, (uint64_t)(rh & 1)); /* RH2 */
    put(&v, 31, 7, (uint64_t)gh);
    put(&v, 24, 6, (uint64_t)bh);
    put(&v, 18, 6, (uint64_t)rv);
    put(&v, 12, 7, (uint64_t)gv);
    put(&v, 5, 6, (uint64_t)bv);
    return v;
}

static void etc_planar(void **state)
{
    (void)state;
    uint8_t b[8], out[64];
    /* O = (32,64,42) -> (130,129,170), H = (63,0,21) -> (255,0,85), V = (0,127,42) -> (0,255,170).
     * Mode: R = 0 1000b = 8, dR = 00 GO1 = 1 -> 9; G = 0 0000 = 0, dG = 00 BO1 = 1 -> 1;
     * B = 000 BO2 = 01b = 1, dB = 1 BO3[2:1] = 1 01b = -3 -> -2: planar.
     * R = (125x - 130y + 522) >> 2, G = (-129x + 126y + 518) >> 2, B = (-85x + 682) >> 2 */
    static const uint8_t exp[16][4] = {
        {130, 129, 170, 255}, {161, 97, 149, 255},  {193, 65, 128, 255},  {224, 32, 106, 255},
        {98, 161, 170, 255},  {129, 128, 149, 255}, {160, 96, 128, 255},  {191, 64, 106, 255},
        {65, 192, 170, 255},  {96, 160, 149, 255},  {128, 128, 128, 255}, {159, 95, 106, 255},
        {33, 224, 170, 255},  {64, 191, 149, 255},  {95, 159, 128, 255},  {126, 127, 106, 255},
    };
    store(planar_block(32, 64, 42, 63, 0, 21, 0, 127, 42, 1), b);
    assert_int_equal(kiln__etc_mode(b, 0), KILN_ETC_MODE_PLANAR);
    kiln__dec_etc2_rgb(b, out);
    expect_rgba(out, exp, "planar");
    /* punch-through: planar is always opaque, even with the opaque bit unset */
    store(planar_block(32, 64, 42, 63, 0, 21, 0, 127, 42, 0), b);
    assert_int_equal(kiln__etc_mode(b, 1), KILN_ETC_MODE_PLANAR);
    kiln__dec_etc2_rgb_a1(b, out);
    expect_rgba(out, exp, "punch-through planar, opaque bit unset");

    /* clamping: O = (63,0,42) -> (255,0,170), H = (0,127,42) -> (0,255,170), V = (0,127,42). Mode: R = 01111b =
     * 15, dR = 11 GO1 = 110b = -2 -> 13; G = 0, dG = 00 1 -> 1; B underflows as above.
     * R = clamp((1022 - 255(x+y)) >> 2), G = clamp((255(x+y) + 2) >> 2), B = 170 */
    static const int rs[7] = {255, 191, 128, 64, 0, 0, 0}, gs[7] = {0, 64, 128, 191, 255, 255, 255};
    store(planar_block(63, 0, 42, 0, 127, 42, 0, 127, 42, 1), b);
    assert_int_equal(kiln__etc_mode(b, 0), KILN_ETC_MODE_PLANAR);
    kiln__dec_etc2_rgb(b, out);
    for (int y = 0; y < 4; y++) {
        for (int x = 0; x < 4; x++) {
            const uint8_t *t = out + (y * 4 + x) * 4;
            assert_int_equal(t[0], rs[x + y]);
            assert_int_equal(t[1], gs[x + y]);
            assert_int_equal(t[2], 170);
            assert_int_equal(t[3], 255);
        }
    }
}

/* ---- EAC ---- */

/* base/multiplier/table header plus column-major indices: spec texel k gets index k % 8 */
static uint64_t eac_block(int base, int mult, int table)
{
    uint64_t v = 0;
    put(&v, 63, 8, (uint64_t)base);
    put(&v, 55, 4, (uint64_t)mult);
    put(&v, 51, 4, (uint64_t)table);
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 4; x++) eac_idx(&v, x, y, (x * 4 + y) % 8);
    return v;
}

static uint64_t eac_uniform(int base, int mult, int table, int idx)
{
    uint64_t v = 0;
    put(&v, 63, 8, (uint64_t)base);
    put(&v, 55, 4, (uint64_t)mult);
    put(&v, 51, 4, (uint64_t)table);
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 4; x++) eac_idx(&v, x, y, idx);
    return v;
}

static void eac_unsigned_values(void **state)
{
    (void)state;
    uint8_t b[16];
    uint16_t c[16];
    /* spec worked example: base 103, table 13, pixel index 3 (modifier -10), multiplier 2 -> 828 - 160 = 668 */
    store(eac_uniform(103, 2, 13, 3), b);
    kiln__dec_eac_channel_u11(b, c);
    for (int i = 0; i < 16; i++) assert_int_equal(c[i], 668);
    /* ... and widened to 16 bits, (668 << 5) + (668 >> 6) = 21386 (spec example); G/B 0, A max */
    uint16_t t16[64];
    kiln__dec_eac_r11u(b, t16);
    for (int i = 0; i < 16; i++) {
        assert_int_equal(t16[i * 4], 21386);
        assert_int_equal(t16[i * 4 + 1], 0);
        assert_int_equal(t16[i * 4 + 2], 0);
        assert_int_equal(t16[i * 4 + 3], 65535);
    }
    /* multiplier 0 means 1/8: 828 - 10 = 818 (spec example) */
    store(eac_uniform(103, 0, 13, 3), b);
    kiln__dec_eac_channel_u11(b, c);
    for (int i = 0; i < 16; i++) assert_int_equal(c[i], 818);
    /* clamping: 255 * 8 + 4 + 14 * 15 * 8 -> 2047; 0 * 8 + 4 - 15 * 15 * 8 -> 0 */
    store(eac_uniform(255, 15, 0, 7), b);
    kiln__dec_eac_channel_u11(b, c);
    assert_int_equal(c[5], 2047);
    store(eac_uniform(0, 15, 0, 3), b);
    kiln__dec_eac_channel_u11(b, c);
    assert_int_equal(c[5], 0);
    /* base 255 with modifier 0 stays 2044 (not 1.0, as the spec notes) */
    store(eac_uniform(255, 15, 13, 4), b);
    kiln__dec_eac_channel_u11(b, c);
    assert_int_equal(c[0], 2044);
    /* texel order: base 100, multiplier 0 (1/8), table 13 (-1 -2 -3 -10 0 1 2 9), index of spec texel k = k % 8:
     * columns 0 and 2 take indices 0..3, columns 1 and 3 indices 4..7 */
    static const uint16_t order[16] = {803, 804, 803, 804, 802, 805, 802, 805, 801, 806, 801, 806, 794, 813, 794, 813};
    store(eac_block(100, 0, 13), b);
    kiln__dec_eac_channel_u11(b, c);
    assert_memory_equal(c, order, sizeof order);
    /* RG11: the second 8 bytes are green */
    store(eac_uniform(103, 2, 13, 3), b);
    store(eac_block(100, 0, 13), b + 8);
    kiln__dec_eac_rg11u(b, t16);
    for (int i = 0; i < 16; i++) {
        assert_int_equal(t16[i * 4], 21386);
        assert_int_equal(t16[i * 4 + 1], (order[i] << 5) | (order[i] >> 6));
        assert_int_equal(t16[i * 4 + 2], 0);
        assert_int_equal(t16[i * 4 + 3], 65535);
    }
}

static void eac_signed_values(void **state)
{
    (void)state;
    uint8_t b[16];
    int16_t c[16];
    float f[64];
    /* spec worked example: base 60, table 13, index 3 (-10), multiplier 2 -> 480 - 160 = 320 */
    store(eac_uniform(60, 2, 13, 3), b);
    kiln__dec_eac_channel_s11(b, c);
    for (int i = 0; i < 16; i++) assert_int_equal(c[i], 320);
    kiln__dec_eac_r11s(b, f);
    for (int i = 0; i < 16; i++) {
        assert_true(f[i * 4] == 320.0f / 1023.0f);
        assert_true(f[i * 4 + 1] == 0.0f && f[i * 4 + 2] == 0.0f && f[i * 4 + 3] == 1.0f);
    }
    /* multiplier 0 -> 1/8: 480 - 10 = 470, whose 16-bit widening is 15054 (spec example) */
    store(eac_uniform(60, 0, 13, 3), b);
    kiln__dec_eac_channel_s11(b, c);
    assert_int_equal(c[0], 470);
    assert_int_equal(kiln__eac_s11_to_s16(470), 15054);
    assert_int_equal(kiln__eac_s11_to_s16(-470), -15054);
    assert_int_equal(kiln__eac_u11_to_u16(668), 21386);
    /* base -128 is treated as -127: modifier 0 -> -1016 (as base 0x81 = -127) */
    store(eac_uniform(0x80, 0, 13, 4), b);
    kiln__dec_eac_channel_s11(b, c);
    assert_int_equal(c[0], -1016);
    store(eac_uniform(0x81, 0, 13, 4), b);
    kiln__dec_eac_channel_s11(b, c);
    assert_int_equal(c[0], -1016);
    /* clamping to [-1023, 1023]: -1016 - 10 * 15 * 8 -> -1023; 127 * 8 + 14 * 15 * 8 -> 1023 */
    store(eac_uniform(0x80, 15, 13, 3), b);
    kiln__dec_eac_channel_s11(b, c);
    assert_int_equal(c[0], -1023);
    store(eac_uniform(127, 15, 0, 7), b);
    kiln__dec_eac_channel_s11(b, c);
    assert_int_equal(c[0], 1023);
    /* no +4 in the signed format: base 0, modifier 0 is exactly 0 */
    store(eac_uniform(0, 9, 13, 4), b);
    kiln__dec_eac_channel_s11(b, c);
    assert_int_equal(c[0], 0);
    /* texel order and base -3 (0xFD), multiplier 1: -24 + modifier * 8 */
    static const int16_t order[16] = {-32, -24, -32, -24, -40, -16, -40, -16, -48, -8, -48, -8, -104, 48, -104, 48};
    store(eac_block(0xFD, 1, 13), b);
    kiln__dec_eac_channel_s11(b, c);
    assert_memory_equal(c, order, sizeof order);
    /* RG11 signed: red then green */
    store(eac_uniform(127, 15, 0, 7), b);
    store(eac_block(0xFD, 1, 13), b + 8);
    kiln__dec_eac_rg11s(b, f);
    for (int i = 0; i < 16; i++) {
        assert_true(f[i * 4] == 1.0f);
        assert_true(f[i * 4 + 1] == (float)order[i] / 1023.0f);
        assert_true(f[i * 4 + 2] == 0.0f && f[i * 4 + 3] == 1.0f);
    }
}

static void eac_alpha8_values(void **state)
{
    (void)state;
    uint8_t b[16], a[16];
    /* spec worked example: base 103, table 13, index 3, multiplier 2 -> 103 - 20 = 83 */
    store(eac_uniform(103, 2, 13, 3), b);
    kiln__dec_eac_alpha8(b, a);
    for (int i = 0; i < 16; i++) assert_int_equal(a[i], 83);
    /* multiplier 0 really is 0 for the 8-bit alpha: base only */
    store(eac_uniform(103, 0, 13, 3), b);
    kiln__dec_eac_alpha8(b, a);
    assert_int_equal(a[7], 103);
    /* clamping: 250 + 14 * 15 -> 255, 5 - 15 * 15 -> 0 */
    store(eac_uniform(250, 15, 0, 7), b);
    kiln__dec_eac_alpha8(b, a);
    assert_int_equal(a[0], 255);
    store(eac_uniform(5, 15, 0, 3), b);
    kiln__dec_eac_alpha8(b, a);
    assert_int_equal(a[0], 0);
    /* texel order, base 100, multiplier 1, table 13 */
    static const uint8_t order[16] = {99, 100, 99, 100, 98, 101, 98, 101, 97, 102, 97, 102, 90, 109, 90, 109};
    store(eac_block(100, 1, 13), b);
    kiln__dec_eac_alpha8(b, a);
    assert_memory_equal(a, order, sizeof order);
    /* RGBA8: alpha from bytes 0..7, colour from bytes 8..15 (the differential block) */
    uint8_t t[64], rgb[64];
    store(differential_block(1), b + 8);
    kiln__dec_etc2_rgb(b + 8, rgb);
    kiln__dec_etc2_rgba(b, t);
    for (int i = 0; i < 16; i++) {
        assert_memory_equal(t + i * 4, rgb + i * 4, 3);
        assert_int_equal(t[i * 4 + 3], order[i]);
    }
}

/* ---- properties over random blocks ---- */

static void random_block_properties(void **state)
{
    (void)state;
    kt_rng r;
    kt_rng_seed(&r, 77);
    int modes[2][5] = {{0}};
    for (int n = 0; n < 20000; n++) {
        uint8_t b[16], t[64], t2[64];
        kt_rng_bytes(&r, b, sizeof b);
        modes[0][kiln__etc_mode(b, 0)]++;
        modes[1][kiln__etc_mode(b, 1)]++;
        kiln__dec_etc2_rgb(b, t);
        for (int i = 0; i < 16; i++) assert_int_equal(t[i * 4 + 3], 255);
        /* A1 with the opaque bit set (and RGB's diff bit set) decodes exactly like RGB ETC2 */
        b[3] |= 2;
        kiln__dec_etc2_rgb(b, t);
        kiln__dec_etc2_rgb_a1(b, t2);
        assert_memory_equal(t, t2, 64);
        /* not opaque: alpha is 0 or 255 and alpha 0 means RGB 0 */
        b[3] &= (uint8_t)~2;
        kiln__dec_etc2_rgb_a1(b, t2);
        for (int i = 0; i < 16; i++) {
            assert_true(t2[i * 4 + 3] == 0 || t2[i * 4 + 3] == 255);
            if (t2[i * 4 + 3] == 0) assert_true(t2[i * 4] == 0 && t2[i * 4 + 1] == 0 && t2[i * 4 + 2] == 0);
        }
        /* EAC ranges; the unsigned 16-bit output is the widened 11-bit value */
        uint16_t u[16], u16[64];
        int16_t s[16];
        float f[64];
        kiln__dec_eac_channel_u11(b, u);
        kiln__dec_eac_r11u(b, u16);
        kiln__dec_eac_channel_s11(b, s);
        kiln__dec_eac_r11s(b, f);
        for (int i = 0; i < 16; i++) {
            assert_true(u[i] <= 2047);
            assert_int_equal(u16[i * 4], kiln__eac_u11_to_u16(u[i]));
            assert_int_equal(u16[i * 4] >> 5, u[i]);
            assert_true(s[i] >= -1023 && s[i] <= 1023);
            assert_true(f[i * 4] >= -1.0f && f[i * 4] <= 1.0f);
            assert_true(f[i * 4] == (float)s[i] / 1023.0f);
        }
    }
    /* every mode occurs in random data (T/H/planar each ~3% of blocks with the diff bit set) */
    for (int m = 0; m < 5; m++) assert_true(modes[0][m] > 200);
    assert_int_equal(modes[1][KILN_ETC_MODE_INDIVIDUAL], 0);
}

/* ---- through kiln_decode: a 6x5 EAC R11 texture (partial blocks), decoded type U16 ---- */

static void whole_image_decode(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(2, KILN_BACKEND_CPU);
    assert_non_null(ctx);
    kiln_texture tex;
    memset(&tex, 0, sizeof tex);
    assert_int_equal(kiln_texture_alloc(ctx, &tex, KILN_FORMAT_EAC_R11_UNORM, 6, 5, 1, 1, 1), KILN_OK);
    size_t size = 0;
    uint8_t *data = kiln_texture_image(&tex, 0, 0, 0, &size);
    assert_non_null(data);
    assert_int_equal(size, 4 * 8);
    for (int i = 0; i < 4; i++) store(eac_block(100 + i, 0, 13), data + 8 * i);
    kiln_image img;
    assert_int_equal(kiln_decode(ctx, &tex, 0, 0, 0, &img), KILN_OK);
    assert_int_equal(img.type, KILN_PIXEL_U16);
    assert_int_equal(img.width, 6);
    assert_int_equal(img.height, 5);
    static const int mods[16] = {-1, 0, -1, 0, -2, 1, -2, 1, -3, 2, -3, 2, -10, 9, -10, 9};
    const uint16_t *px = img.pixels;
    for (int y = 0; y < 5; y++) {
        for (int x = 0; x < 6; x++) {
            const int blk = (y / 4) * 2 + x / 4;
            const int v = (100 + blk) * 8 + 4 + mods[(y % 4) * 4 + x % 4];
            assert_int_equal(px[(y * 6 + x) * 4], (v << 5) | (v >> 6));
            assert_int_equal(px[(y * 6 + x) * 4 + 3], 65535);
        }
    }
    kiln_image_free(&img);
    kiln_texture_free(&tex);
    kiln_context_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(etc_individual),
        cmocka_unit_test(etc_differential),
        cmocka_unit_test(etc_punchthrough_differential),
        cmocka_unit_test(etc_t_mode),
        cmocka_unit_test(etc_h_mode),
        cmocka_unit_test(etc_planar),
        cmocka_unit_test(eac_unsigned_values),
        cmocka_unit_test(eac_signed_values),
        cmocka_unit_test(eac_alpha8_values),
        cmocka_unit_test(random_block_properties),
        cmocka_unit_test(whole_image_decode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

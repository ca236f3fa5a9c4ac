/* test_bc_decode.c - BC1..BC7 block decoders on hand-built blocks.
 *
 * Every block here is assembled field by field from the Khronos Data Format Specification's bit
 * layouts (S3TC, RGTC, BPTC tables), with the anchors and partitions needed written out from the
 * spec's tables, and the expected texels were computed by hand from the spec's formulas (bit
 * replication, integer interpolation, unquantization). They do not come from kiln's decoder.
 * Random-block agreement with independent decoders is in tests/interop (libsquish, Pillow).
 */
#include "support.h"

#include "codec/bc_tables.h"
#include "codec/codec.h"

#include <math.h>
#include <string.h>

/* ---- a little bit writer (LSB first, little-endian 128-bit blocks) ---- */
typedef struct bitw {
    uint8_t b[16];
    unsigned pos;
} bitw;

static void bw_put(bitw *w, unsigned n, uint32_t v)
{
    for (unsigned i = 0; i < n; i++, w->pos++)
        if ((v >> i) & 1u) w->b[w->pos >> 3] |= (uint8_t)(1u << (w->pos & 7));
}

static void put_at(uint8_t *blk, unsigned pos, unsigned n, uint32_t v)
{
    for (unsigned i = 0; i < n; i++, pos++)
        if ((v >> i) & 1u) blk[pos >> 3] |= (uint8_t)(1u << (pos & 7));
}

static void expect_rgba(const uint8_t *tex, int t, int r, int g, int b, int a)
{
    const uint8_t *p = tex + t * 4;
    if (p[0] != r || p[1] != g || p[2] != b || p[3] != a) {
        print_error("texel %d: got (%d,%d,%d,%d), expected (%d,%d,%d,%d)\n", t, p[0], p[1], p[2], p[3], r, g, b,
                    a);
        fail();
    }
}

/* ================================================================ BC1 */
/* c0 = 565(20,40,10) = 0xA50A -> (165,162,82); c1 = 565(3,7,30) = 0x18FE -> (24,28,247);
 * four-colour: c2 = ((2*165+24)/3, (2*162+28)/3, (2*82+247)/3) = (118,117,137),
 *              c3 = ((165+2*24)/3, (162+2*28)/3, (82+2*247)/3) = (71,72,192);
 * indices 0,1,2,3 repeated (0xE4 per row). */
static const uint8_t bc1_four[8] = {0x0A, 0xA5, 0xFE, 0x18, 0xE4, 0xE4, 0xE4, 0xE4};
/* endpoints swapped: c0 <= c1 -> three colours: c2 = ((24+165)/2, (28+162)/2, (247+82)/2) = (94,95,164),
 * c3 black */
static const uint8_t bc1_three[8] = {0xFE, 0x18, 0x0A, 0xA5, 0xE4, 0xE4, 0xE4, 0xE4};

static void test_bc1_four_colour(void **state)
{
    (void)state;
    uint8_t t[64];
    kiln__dec_bc1_rgb(bc1_four, t);
    for (int row = 0; row < 4; row++) {
        expect_rgba(t, row * 4 + 0, 165, 162, 82, 255);
        expect_rgba(t, row * 4 + 1, 24, 28, 247, 255);
        expect_rgba(t, row * 4 + 2, 118, 117, 137, 255);
        expect_rgba(t, row * 4 + 3, 71, 72, 192, 255);
    }
    uint8_t ta[64];
    kiln__dec_bc1_rgba(bc1_four, ta);
    assert_memory_equal(t, ta, 64); /* no transparency in four-colour mode */
}

static void test_bc1_three_colour(void **state)
{
    (void)state;
    uint8_t t[64];
    kiln__dec_bc1_rgb(bc1_three, t);
    expect_rgba(t, 0, 24, 28, 247, 255);
    expect_rgba(t, 1, 165, 162, 82, 255);
    expect_rgba(t, 2, 94, 95, 164, 255);
    expect_rgba(t, 3, 0, 0, 0, 255); /* RGB variant: black, opaque */
    kiln__dec_bc1_rgba(bc1_three, t);
    expect_rgba(t, 2, 94, 95, 164, 255);
    expect_rgba(t, 3, 0, 0, 0, 0); /* RGBA variant: transparent black */
    expect_rgba(t, 15, 0, 0, 0, 0);
    /* equal endpoints are three-colour mode too */
    const uint8_t eq[8] = {0x0A, 0xA5, 0x0A, 0xA5, 0xFF, 0, 0, 0};
    kiln__dec_bc1_rgba(eq, t);
    expect_rgba(t, 0, 0, 0, 0, 0);
    expect_rgba(t, 4, 165, 162, 82, 255);
    /* the shared helper: force_four_color ignores the endpoint order */
    kiln__dec_bc1_colors(bc1_three, t, 1, 1);
    expect_rgba(t, 2, 71, 72, 192, 255);
    expect_rgba(t, 3, 118, 117, 137, 255);
    /* white and black extremes: 0xFFFF -> 255 exactly, 0x0000 -> 0 */
    const uint8_t wb[8] = {0xFF, 0xFF, 0x00, 0x00, 0xE4, 0, 0, 0};
    kiln__dec_bc1_rgb(wb, t);
    expect_rgba(t, 0, 255, 255, 255, 255);
    expect_rgba(t, 2, 170, 170, 170, 255); /* (2*255+0)/3 */
    expect_rgba(t, 3, 85, 85, 85, 255);
}

/* ================================================================ BC2 */
static void test_bc2(void **state)
{
    (void)state;
    /* alpha nibble of texel t = t (low nibble first), colour block = bc1_three (c0 <= c1) which BC2
     * must still decode in four-colour mode: c2 = (2*c0+c1)/3 = (71,72,192), c3 = (118,117,137). */
    uint8_t blk[16] = {0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE};
    memcpy(blk + 8, bc1_three, 8);
    uint8_t t[64];
    kiln__dec_bc2(blk, t);
    for (int i = 0; i < 16; i++) assert_int_equal(t[i * 4 + 3], i * 17);
    expect_rgba(t, 0, 24, 28, 247, 0);
    expect_rgba(t, 1, 165, 162, 82, 17);
    expect_rgba(t, 2, 71, 72, 192, 34);
    expect_rgba(t, 3, 118, 117, 137, 51);
}

/* ================================================================ BC3 / BC4 / BC5 */
/* a0 = 200, a1 = 10 (eight values): 200, 10, 1210/7=172, 1020/7=145, 830/7=118, 640/7=91, 450/7=64,
 * 260/7=37. Indices 0..7 then 0..7 again: 3-bit fields 0,1,..,7 = bytes 0x88 0xC6 0xFA. */
static const uint8_t a8[8] = {200, 10, 0x88, 0xC6, 0xFA, 0x88, 0xC6, 0xFA};
static const uint8_t a8_expect[8] = {200, 10, 172, 145, 118, 91, 64, 37};
/* a0 = 10, a1 = 200 (six values): 10, 200, 240/5=48, 430/5=86, 620/5=124, 810/5=162, 0, 255 */
static const uint8_t a6[8] = {10, 200, 0x88, 0xC6, 0xFA, 0x88, 0xC6, 0xFA};
static const uint8_t a6_expect[8] = {10, 200, 48, 86, 124, 162, 0, 255};

static void test_bc3(void **state)
{
    (void)state;
    uint8_t blk[16], t[64];
    memcpy(blk, a8, 8);
    memcpy(blk + 8, bc1_three, 8); /* four-colour regardless of order, like BC2 */
    kiln__dec_bc3(blk, t);
    for (int i = 0; i < 16; i++) assert_int_equal(t[i * 4 + 3], a8_expect[i & 7]);
    expect_rgba(t, 2, 71, 72, 192, 172);
    expect_rgba(t, 3, 118, 117, 137, 145);
    memcpy(blk, a6, 8);
    kiln__dec_bc3(blk, t);
    for (int i = 0; i < 16; i++) assert_int_equal(t[i * 4 + 3], a6_expect[i & 7]);
}

static void test_bc4_unorm(void **state)
{
    (void)state;
    uint8_t t[64], ch[16];
    kiln__dec_bc4u(a8, t);
    for (int i = 0; i < 16; i++) expect_rgba(t, i, a8_expect[i & 7], 0, 0, 255);
    kiln__dec_bc4u(a6, t);
    for (int i = 0; i < 16; i++) expect_rgba(t, i, a6_expect[i & 7], 0, 0, 255);
    kiln__dec_bc4_channel_u(a6, ch);
    for (int i = 0; i < 16; i++) assert_int_equal(ch[i], a6_expect[i & 7]);
}

/* Signed, eight values: raw a0 = 100 > a1 = -128 (read as -127):
 * ((8-i)*100 + (i-1)*-127)/7 truncated toward zero: 473/7=67, 246/7=35, 19/7=2, -208/7=-29,
 * -435/7=-62, -662/7=-94. */
static const uint8_t s8[8] = {100, 0x80, 0x88, 0xC6, 0xFA, 0x88, 0xC6, 0xFA};
static const int s8_expect[8] = {100, -127, 67, 35, 2, -29, -62, -94};
/* Signed, six values: raw a0 = -128 (-> -127) <= a1 = 50: (4*-127+50)/5 = -458/5 = -91, -281/5 = -56,
 * -104/5 = -20, 73/5 = 14, then -127 and 127 (-1.0 and 1.0). */
static const uint8_t s6[8] = {0x80, 50, 0x88, 0xC6, 0xFA, 0x88, 0xC6, 0xFA};
static const int s6_expect[8] = {-127, 50, -91, -56, -20, 14, -127, 127};

static void test_bc4_snorm(void **state)
{
    (void)state;
    int8_t ch[16];
    float f[64];
    kiln__dec_bc4_channel_s(s8, ch);
    for (int i = 0; i < 16; i++) assert_int_equal(ch[i], s8_expect[i & 7]);
    kiln__dec_bc4_channel_s(s6, ch);
    for (int i = 0; i < 16; i++) assert_int_equal(ch[i], s6_expect[i & 7]);
    kiln__dec_bc4s(s8, f);
    for (int i = 0; i < 16; i++) {
        assert_true(f[i * 4 + 0] == (float)s8_expect[i & 7] / 127.0f);
        assert_true(f[i * 4 + 1] == 0.0f && f[i * 4 + 2] == 0.0f && f[i * 4 + 3] == 1.0f);
    }
    assert_true(f[1 * 4] == -1.0f);
    kiln__dec_bc4s(s6, f);
    assert_true(f[6 * 4] == -1.0f && f[7 * 4] == 1.0f);
    /* raw -127 > -128: eight-value mode, but both endpoints read as -127 */
    const uint8_t same[8] = {0x81, 0x80, 0x88, 0xC6, 0xFA, 0x88, 0xC6, 0xFA};
    kiln__dec_bc4_channel_s(same, ch);
    for (int i = 0; i < 16; i++) assert_int_equal(ch[i], -127);
    /* raw -128 < -127: six-value mode; index 7 is +127 */
    const uint8_t six[8] = {0x80, 0x81, 0x88, 0xC6, 0xFA, 0x88, 0xC6, 0xFA};
    kiln__dec_bc4_channel_s(six, ch);
    assert_int_equal(ch[3], -127);
    assert_int_equal(ch[7], 127);
}

static void test_bc5(void **state)
{
    (void)state;
    uint8_t blk[16], t[64];
    memcpy(blk, a8, 8);
    memcpy(blk + 8, a6, 8);
    kiln__dec_bc5u(blk, t);
    for (int i = 0; i < 16; i++) expect_rgba(t, i, a8_expect[i & 7], a6_expect[i & 7], 0, 255);
    float f[64];
    memcpy(blk, s8, 8);
    memcpy(blk + 8, s6, 8);
    kiln__dec_bc5s(blk, f);
    for (int i = 0; i < 16; i++) {
        assert_true(f[i * 4 + 0] == (float)s8_expect[i & 7] / 127.0f);
        assert_true(f[i * 4 + 1] == (float)s6_expect[i & 7] / 127.0f);
        assert_true(f[i * 4 + 2] == 0.0f && f[i * 4 + 3] == 1.0f);
    }
}

/* ================================================================ BC7 */
static void put_list(bitw *w, unsigned n, const unsigned *v, unsigned count)
{
    for (unsigned i = 0; i < count; i++) bw_put(w, n, v[i]);
}

/* indices of `bits` bits, one bit less at the listed anchor texels */
static void put_indices(bitw *w, unsigned bits, const unsigned idx[16], const unsigned *anchors, unsigned na)
{
    for (unsigned t = 0; t < 16; t++) {
        unsigned n = bits;
        for (unsigned a = 0; a < na; a++)
            if (anchors[a] == t) n--;
        bw_put(w, n, idx[t]);
    }
}

static void test_bc7_mode0(void **state)
{
    (void)state;
    /* 3 subsets, partition 13 (rows 0 1 2 2), anchors 0, 5 (table A3a[13]) and 15 (A3b[13]);
     * 4-bit colours + per-endpoint p-bit -> 5 bits -> 8 bits by replication:
     * E0 (255,8,8) E1 (0,247,0) | E2 (8,8,255) E3 (132,132,132) | E4 (24,41,57) E5 (74,90,107) */
    bitw w = {{0}, 0};
    bw_put(&w, 1, 1);
    bw_put(&w, 4, 13);
    put_list(&w, 4, (const unsigned[]){15, 0, 0, 8, 1, 4}, 6);
    put_list(&w, 4, (const unsigned[]){0, 15, 0, 8, 2, 5}, 6);
    put_list(&w, 4, (const unsigned[]){0, 0, 15, 8, 3, 6}, 6);
    put_list(&w, 1, (const unsigned[]){1, 0, 1, 0, 1, 1}, 6);
    const unsigned idx[16] = {0, 7, 3, 4, 7, 2, 0, 7, 1, 5, 6, 1, 2, 3, 4, 3};
    put_indices(&w, 3, idx, (const unsigned[]){0, 5, 15}, 3);
    assert_int_equal(w.pos, 128);
    uint8_t t[64];
    kiln__dec_bc7(w.b, t);
    expect_rgba(t, 0, 255, 8, 8, 255);
    expect_rgba(t, 1, 132, 132, 132, 255);
    expect_rgba(t, 2, 45, 62, 78, 255); /* (37*E4 + 27*E5 + 32) >> 6 */
    expect_rgba(t, 4, 0, 247, 0, 255);
    expect_rgba(t, 5, 43, 43, 220, 255);
    expect_rgba(t, 8, 219, 42, 7, 255);
    expect_rgba(t, 15, 45, 62, 78, 255);
}

static void test_bc7_mode1(void **state)
{
    (void)state;
    /* 2 subsets, partition 35 (0x33CC) whose second anchor is texel 8 (table A2) although texel 2 is
     * the first texel of subset 1; 6-bit colours + shared p-bit per subset -> 7 bits. */
    bitw w = {{0}, 0};
    bw_put(&w, 2, 2);
    bw_put(&w, 6, 35);
    put_list(&w, 6, (const unsigned[]){63, 0, 32, 1}, 4);
    put_list(&w, 6, (const unsigned[]){0, 63, 32, 2}, 4);
    put_list(&w, 6, (const unsigned[]){10, 20, 32, 3}, 4);
    put_list(&w, 1, (const unsigned[]){1, 0}, 2);
    const unsigned idx[16] = {3, 5, 6, 7, 0, 1, 2, 4, 1, 6, 7, 0, 2, 3, 5, 4};
    put_indices(&w, 3, idx, (const unsigned[]){0, 8}, 2);
    assert_int_equal(w.pos, 128);
    uint8_t t[64];
    kiln__dec_bc7(w.b, t);
    /* E0 (255,2,42) E1 (2,255,82) | E2 (129,129,129) E3 (4,8,12) */
    expect_rgba(t, 0, 148, 109, 59, 255);
    expect_rgba(t, 2, 22, 25, 28, 255);
    expect_rgba(t, 3, 4, 8, 12, 255);
    expect_rgba(t, 4, 255, 2, 42, 255);
    expect_rgba(t, 8, 111, 112, 113, 255);
    expect_rgba(t, 15, 109, 148, 65, 255);
}

static void test_bc7_mode2(void **state)
{
    (void)state;
    /* 3 subsets, partition 63 (0111 2011 2201 2220), anchors 0, 3 (A3a[63]) and 8 (A3b[63]);
     * 5-bit colours, 2-bit indices */
    bitw w = {{0}, 0};
    bw_put(&w, 3, 4);
    bw_put(&w, 6, 63);
    put_list(&w, 5, (const unsigned[]){31, 0, 0, 16, 5, 20}, 6);
    put_list(&w, 5, (const unsigned[]){0, 31, 0, 16, 10, 25}, 6);
    put_list(&w, 5, (const unsigned[]){0, 0, 31, 16, 15, 30}, 6);
    const unsigned idx[16] = {1, 2, 3, 1, 3, 2, 0, 1, 1, 2, 3, 0, 0, 1, 2, 3};
    put_indices(&w, 2, idx, (const unsigned[]){0, 3, 8}, 3);
    assert_int_equal(w.pos, 128);
    uint8_t t[64];
    kiln__dec_bc7(w.b, t);
    expect_rgba(t, 0, 171, 84, 0, 255);
    expect_rgba(t, 1, 89, 89, 172, 255);
    expect_rgba(t, 3, 43, 43, 215, 255);
    expect_rgba(t, 4, 165, 206, 247, 255);
    expect_rgba(t, 8, 82, 123, 164, 255);
    expect_rgba(t, 15, 0, 255, 0, 255);
}

static void test_bc7_mode3(void **state)
{
    (void)state;
    /* 2 subsets, partition 0 (0xCCCC, anchor 15); 7-bit colours + per-endpoint p-bit = 8 bits */
    bitw w = {{0}, 0};
    bw_put(&w, 4, 8);
    bw_put(&w, 6, 0);
    put_list(&w, 7, (const unsigned[]){127, 0, 100, 3}, 4);
    put_list(&w, 7, (const unsigned[]){0, 127, 50, 2}, 4);
    put_list(&w, 7, (const unsigned[]){64, 1, 25, 1}, 4);
    put_list(&w, 1, (const unsigned[]){0, 1, 1, 0}, 4);
    const unsigned idx[16] = {1, 0, 2, 3, 3, 1, 0, 2, 2, 3, 1, 0, 0, 2, 3, 1};
    put_indices(&w, 2, idx, (const unsigned[]){0, 15}, 2);
    assert_int_equal(w.pos, 128);
    uint8_t t[64];
    kiln__dec_bc7(w.b, t);
    /* E0 (254,0,128) E1 (1,255,3) | E2 (201,101,51) E3 (6,4,2) */
    expect_rgba(t, 0, 171, 84, 87, 255);
    expect_rgba(t, 1, 254, 0, 128, 255);
    expect_rgba(t, 2, 70, 36, 18, 255);
    expect_rgba(t, 3, 6, 4, 2, 255);
    expect_rgba(t, 15, 137, 69, 35, 255);
}

static void bc7_mode4_block(uint8_t out[16], unsigned rot, unsigned isel)
{
    /* E0 colour (31,0,10) alpha 63, E1 colour (0,31,20) alpha 0 -> (255,0,82,255), (0,255,165,0);
     * primary (2-bit) indices 1,2,0..; secondary (3-bit) indices 3,7,0.. */
    bitw w = {{0}, 0};
    bw_put(&w, 5, 16);
    bw_put(&w, 2, rot);
    bw_put(&w, 1, isel);
    put_list(&w, 5, (const unsigned[]){31, 0, 0, 31, 10, 20}, 6);
    put_list(&w, 6, (const unsigned[]){63, 0}, 2);
    const unsigned i1[16] = {1, 2}, i2[16] = {3, 7};
    put_indices(&w, 2, i1, (const unsigned[]){0}, 1);
    put_indices(&w, 3, i2, (const unsigned[]){0}, 1);
    assert_int_equal(w.pos, 128);
    memcpy(out, w.b, 16);
}

static void test_bc7_mode4(void **state)
{
    (void)state;
    uint8_t blk[16], t[64];
    bc7_mode4_block(blk, 0, 0); /* colour from the 2-bit indices, alpha from the 3-bit ones */
    kiln__dec_bc7(blk, t);
    expect_rgba(t, 0, 171, 84, 109, 147);
    expect_rgba(t, 1, 84, 171, 138, 0);
    expect_rgba(t, 2, 255, 0, 82, 255);
    bc7_mode4_block(blk, 1, 1); /* index selection swaps the roles, rotation 1 swaps R and A */
    kiln__dec_bc7(blk, t);
    expect_rgba(t, 0, 171, 108, 117, 147);
    expect_rgba(t, 1, 84, 255, 165, 0);
    bc7_mode4_block(blk, 2, 0); /* rotation 2 swaps G and A */
    kiln__dec_bc7(blk, t);
    expect_rgba(t, 0, 171, 147, 109, 84);
}

static void test_bc7_mode5(void **state)
{
    (void)state;
    /* colour 7 bits: (127,0,64) -> (255,0,129), (0,127,32) -> (0,255,64); alpha 8 bits 200, 10;
     * rotation 3 swaps B and A */
    bitw w = {{0}, 0};
    bw_put(&w, 6, 32);
    bw_put(&w, 2, 3);
    put_list(&w, 7, (const unsigned[]){127, 0, 0, 127, 64, 32}, 6);
    put_list(&w, 8, (const unsigned[]){200, 10}, 2);
    const unsigned i1[16] = {1, 2}, i2[16] = {1, 3};
    put_indices(&w, 2, i1, (const unsigned[]){0}, 1);
    put_indices(&w, 2, i2, (const unsigned[]){0}, 1);
    assert_int_equal(w.pos, 128);
    uint8_t t[64];
    kiln__dec_bc7(w.b, t);
    expect_rgba(t, 0, 171, 84, 138, 108);
    expect_rgba(t, 1, 84, 171, 10, 85);
    expect_rgba(t, 2, 255, 0, 200, 129);
}

static void test_bc7_mode6(void **state)
{
    (void)state;
    /* 7-bit RGBA + per-endpoint p-bit: E0 (127,0,50,127)|1 -> (255,1,101,255),
     * E1 (0,127,100,0)|0 -> (0,254,200,0); 4-bit indices */
    bitw w = {{0}, 0};
    bw_put(&w, 7, 64);
    put_list(&w, 7, (const unsigned[]){127, 0, 0, 127, 50, 100, 127, 0}, 8);
    put_list(&w, 1, (const unsigned[]){1, 0}, 2);
    const unsigned idx[16] = {5, 15, 0, 8};
    put_indices(&w, 4, idx, (const unsigned[]){0}, 1);
    assert_int_equal(w.pos, 128);
    uint8_t t[64];
    kiln__dec_bc7(w.b, t);
    expect_rgba(t, 0, 171, 84, 133, 171);
    expect_rgba(t, 1, 0, 254, 200, 0);
    expect_rgba(t, 2, 255, 1, 101, 255);
    expect_rgba(t, 3, 120, 135, 154, 120);
}

static void test_bc7_mode7(void **state)
{
    (void)state;
    /* 2 subsets, partition 17 (0x008E, anchor 2); 5-bit RGBA + per-endpoint p-bit -> 6 bits:
     * E0 (255,4,4,255) E1 (0,251,0,0) | E2 (85,166,247,125) E3 (8,16,24,32) */
    bitw w = {{0}, 0};
    bw_put(&w, 8, 128);
    bw_put(&w, 6, 17);
    put_list(&w, 5, (const unsigned[]){31, 0, 10, 1}, 4);
    put_list(&w, 5, (const unsigned[]){0, 31, 20, 2}, 4);
    put_list(&w, 5, (const unsigned[]){0, 0, 30, 3}, 4);
    put_list(&w, 5, (const unsigned[]){31, 0, 15, 4}, 4);
    put_list(&w, 1, (const unsigned[]){1, 0, 1, 0}, 4);
    const unsigned idx[16] = {1, 3, 1, 2, 0, 1, 2, 3};
    put_indices(&w, 2, idx, (const unsigned[]){0, 2}, 2);
    assert_int_equal(w.pos, 128);
    uint8_t t[64];
    kiln__dec_bc7(w.b, t);
    expect_rgba(t, 0, 171, 85, 3, 171);
    expect_rgba(t, 1, 8, 16, 24, 32);
    expect_rgba(t, 2, 60, 117, 174, 94);
    expect_rgba(t, 3, 33, 65, 97, 63);
    expect_rgba(t, 4, 255, 4, 4, 255);
    expect_rgba(t, 7, 8, 16, 24, 32);
}

static void test_bc7_reserved(void **state)
{
    (void)state;
    uint8_t blk[16], t[64];
    kt_rng rng;
    kt_rng_seed(&rng, 7);
    for (int i = 0; i < 100; i++) {
        kt_rng_bytes(&rng, blk, 16);
        blk[0] = 0;
        memset(t, 0xAB, sizeof t);
        kiln__dec_bc7(blk, t);
        for (int k = 0; k < 64; k++) assert_int_equal(t[k], 0);
    }
}

/* ================================================================ BC6H */
static void expect_half(const uint16_t *h, int t, unsigned r, unsigned g, unsigned b)
{
    if (h[t * 3] != r || h[t * 3 + 1] != g || h[t * 3 + 2] != b) {
        print_error("texel %d: got (%04x,%04x,%04x), expected (%04x,%04x,%04x)\n", t, h[t * 3], h[t * 3 + 1],
                    h[t * 3 + 2], r, g, b);
        fail();
    }
}

/* One block per mode: R0 = 37 in the low bits that start at bit 5 in every mode, the raw R1 field
 * (low bits from bit 35 in every mode) = 0b1010, everything else 0, partition 0. Texel 0 has index 0
 * (E0), texel 1 the largest index (E1), texel 4 index 3 of 3 bits (w 27) or 9 of 4 bits (w 38).
 * R1 = 10 is +10 for delta widths >= 5 but -6 for the 4-bit deltas of modes 6, 10 and 15, and the raw
 * value in the untransformed modes 30 and 3; in SF16, mode 30's 6-bit E0 = 37 is -27.
 * Expected halves: computed from the spec's unquantize / interpolate / finish formulas. */
typedef struct bc6_case {
    unsigned mode;
    unsigned e0, e1, mid;
} bc6_case;

static const bc6_case bc6_uf_cases[14] = {
    {0, 0x048A, 0x05C0, 0x050D},  {1, 0x2454, 0x2E04, 0x286A},  {2, 0x0245, 0x02E0, 0x0286},
    {6, 0x0245, 0x01E8, 0x021E},  {10, 0x0245, 0x01E8, 0x021E}, {14, 0x0915, 0x0B81, 0x0A1A},
    {18, 0x122A, 0x1702, 0x1435}, {22, 0x122A, 0x1702, 0x1435}, {26, 0x122A, 0x1702, 0x1435},
    {30, 0x48A8, 0x1458, 0x3296}, {3, 0x048A, 0x0145, 0x0299},  {7, 0x0245, 0x02E0, 0x02A1},
    {11, 0x0122, 0x0170, 0x0150}, {15, 0x0011, 0x000F, 0x000F},
};
static const bc6_case bc6_sf_cases[14] = {
    {0, 0x0915, 0x0B81, 0x0A1A},  {1, 0x48A8, 0x5C08, 0x50D4},  {2, 0x048A, 0x05C0, 0x050D},
    {6, 0x048A, 0x03D0, 0x043C},  {10, 0x048A, 0x03D0, 0x043C}, {14, 0x122A, 0x1702, 0x1435},
    {18, 0x2454, 0x2E04, 0x286A}, {22, 0x2454, 0x2E04, 0x286A}, {26, 0x2454, 0x2E04, 0x286A},
    {30, 0xEA90, 0x28B0, 0xAC71}, {3, 0x0915, 0x028B, 0x0533},  {7, 0x048A, 0x05C0, 0x0542},
    {11, 0x0245, 0x02E0, 0x02A1}, {15, 0x0023, 0x001E, 0x001F},
};

static void bc6_case_block(unsigned mode, uint8_t blk[16])
{
    memset(blk, 0, 16);
    put_at(blk, 0, mode < 2 ? 2 : 5, mode);
    put_at(blk, 5, 6, 37);
    put_at(blk, 35, 4, 10);
    int two = (mode & 3) != 3;
    if (two) {
        put_at(blk, 82 + 2, 3, 7);         /* texel 1 */
        put_at(blk, 82 + 2 + 9, 3, 3);     /* texel 4 */
    } else {
        put_at(blk, 65 + 3, 4, 15);        /* texel 1 */
        put_at(blk, 65 + 3 + 12, 4, 9);    /* texel 4 */
    }
}

static void test_bc6h_each_mode(void **state)
{
    (void)state;
    uint8_t blk[16];
    uint16_t h[48];
    for (int s = 0; s < 2; s++) {
        const bc6_case *cases = s ? bc6_sf_cases : bc6_uf_cases;
        for (int i = 0; i < 14; i++) {
            bc6_case_block(cases[i].mode, blk);
            kiln__dec_bc6h_half(blk, s, h);
            kiln_bc6h_info info;
            assert_int_equal(kiln__bc6h_unpack(blk, s, &info), (cases[i].mode & 3) == 3 ? 1 : 2);
            assert_int_equal(info.mode, (int)cases[i].mode);
            expect_half(h, 0, cases[i].e0, 0, 0);
            expect_half(h, 1, cases[i].e1, 0, 0);
            expect_half(h, 4, cases[i].mid, 0, 0);
            expect_half(h, 5, cases[i].e0, 0, 0);
        }
    }
}

static void test_bc6h_mode3(void **state)
{
    (void)state;
    /* one subset, 10-bit endpoints, untransformed: R0 0, G0 1023, B0 512, R1 100, G1 1, B1 1000.
     * UF16: unq 0, 0xFFFF, 32800 / 6432, 96, 64032 (((x << 15) + 0x4000) >> 9) then * 31 >> 6.
     * SF16: G0 = -1, B0 = -512 (magnitude >= 511 -> -0x7FFF), B1 = -24. */
    uint8_t blk[16] = {0};
    put_at(blk, 0, 5, 3);
    put_at(blk, 5, 10, 0);
    put_at(blk, 15, 10, 1023);
    put_at(blk, 25, 10, 512);
    put_at(blk, 35, 10, 100);
    put_at(blk, 45, 10, 1);
    put_at(blk, 55, 10, 1000);
    put_at(blk, 65 + 3, 4, 15); /* texel 1 */
    put_at(blk, 65 + 7, 4, 8);  /* texel 2: w 34 */
    uint16_t h[48];
    kiln__dec_bc6h_half(blk, 0, h);
    expect_half(h, 0, 0x0000, 0x7BFF, 0x3E0F);
    expect_half(h, 1, 0x0C2B, 0x002E, 0x7927);
    expect_half(h, 2, 0x0677, 0x3A38, 0x5D74);
    kiln__dec_bc6h_half(blk, 1, h);
    expect_half(h, 0, 0x0000, 0x805D, 0xFBFF);
    expect_half(h, 1, 0x1857, 0x005D, 0x85EF);
    expect_half(h, 2, 0x0CEE, 0x0005, 0xBD46); /* floor((30*-32767 + 34*-1568 + 32) / 64) = -16192 */
    float f[64];
    kiln__dec_bc6h_sf(blk, f);
    assert_true(f[1] == kiln__half_to_float(0x805D));
    assert_true(f[2] == -65504.0f); /* 0xFBFF */
    assert_true(f[3] == 1.0f);
}

static void test_bc6h_mode0_transform(void **state)
{
    (void)state;
    /* mode 0, partition 0 (subset 1 = columns 2, 3; anchor 15): E0 = (500, 1000, 5), deltas
     * E1 = (+15, -16, -16), E2 = (-3, 0, 0), E3 = (+1, 0, 0), each field at its Khronos position. */
    uint8_t blk[16] = {0};
    put_at(blk, 5, 10, 500);   /* R0 */
    put_at(blk, 15, 10, 1000); /* G0 */
    put_at(blk, 25, 10, 5);    /* B0 */
    put_at(blk, 35, 5, 15);    /* R1 */
    put_at(blk, 45, 5, 16);    /* G1 = -16 */
    put_at(blk, 55, 5, 16);    /* B1 = -16 */
    put_at(blk, 65, 5, 29);    /* R2 = -3 */
    put_at(blk, 71, 5, 1);     /* R3 = +1 */
    /* indices: texel 0 = 0 (2 bits), 1 = 7, 2 = 0, 3 = 7, 15 = 3 (2 bits, anchor) */
    put_at(blk, 84, 3, 7);
    put_at(blk, 90, 3, 7);
    put_at(blk, 82 + 2 + 14 * 3, 2, 3); /* texels 1..14 have 3 bits each */
    uint16_t h[48];
    /* UF16: E1 = (515, 984, (5 - 16) & 1023 = 1013), E2 = (497, 1000, 5), E3 = (501, 1000, 5) */
    kiln__dec_bc6h_half(blk, 0, h);
    expect_half(h, 0, 0x3C9B, 0x7927, 0x00AA);
    expect_half(h, 1, 0x3E6C, 0x7737, 0x7ABA);
    expect_half(h, 2, 0x3C3E, 0x7927, 0x00AA);
    expect_half(h, 3, 0x3CBA, 0x7927, 0x00AA);
    expect_half(h, 15, 0x3C72, 0x7927, 0x00AA);
    /* SF16: E0 = (500, -24, 5); the wrapped sums are sign-extended again: E1 = (515 -> -509, -40, -11) */
    kiln__dec_bc6h_half(blk, 1, h);
    expect_half(h, 0, 0x7937, 0x85EF, 0x0155);
    expect_half(h, 1, 0xFB65, 0x89CF, 0x82C9);
    expect_half(h, 2, 0x787D, 0x85EF, 0x0155);
    expect_half(h, 3, 0x7975, 0x85EF, 0x0155);
    expect_half(h, 15, 0x78E5, 0x85EF, 0x0155);
    kiln_bc6h_info info;
    assert_int_equal(kiln__bc6h_unpack(blk, 1, &info), 2);
    assert_int_equal(info.ep[1][0], -509);
    assert_int_equal(info.wrapped_negative, 1);
}

static void test_bc6h_reversed_bits(void **state)
{
    (void)state;
    uint8_t blk[16];
    uint16_t h[48];
    /* mode 15: R0^10..15 is stored reversed at bits 39..44 (bit 39 = R0^15). R0 = 0x8123,
     * G0 = 0x3C00 (G0^13..10 at bits 51..54), B0 = 0x0400 (B0^10 at bit 64); deltas R +7, G -8. */
    memset(blk, 0, 16);
    put_at(blk, 0, 5, 15);
    put_at(blk, 5, 10, 0x123);
    put_at(blk, 39, 1, 1);
    put_at(blk, 51, 4, 0xF);
    put_at(blk, 64, 1, 1);
    put_at(blk, 35, 4, 7);
    put_at(blk, 45, 4, 8);
    put_at(blk, 65 + 3, 4, 15);
    kiln__dec_bc6h_half(blk, 0, h);
    expect_half(h, 0, 0x3E8C, 0x1D10, 0x01F0);
    expect_half(h, 1, 0x3E90, 0x1D0C, 0x01F0);
    kiln__dec_bc6h_half(blk, 1, h); /* 16-bit endpoints are two's complement: 0x8123 = -32477 */
    expect_half(h, 0, 0xFAE6, 0x3A20, 0x03E0);
    expect_half(h, 1, 0xFADF, 0x3A18, 0x03E0);
    /* mode 11: bit 43 is R0^11 (reversed pair), bit 44 R0^10 */
    memset(blk, 0, 16);
    put_at(blk, 0, 5, 11);
    put_at(blk, 43, 1, 1);
    kiln__dec_bc6h_half(blk, 0, h);
    expect_half(h, 0, 0x3E03, 0, 0); /* R0 = 2048 of 12 bits */
    /* mode 7: bit 44 is R0^10 */
    memset(blk, 0, 16);
    put_at(blk, 0, 5, 7);
    put_at(blk, 44, 1, 1);
    kiln__dec_bc6h_half(blk, 0, h);
    expect_half(h, 0, 0x3E07, 0, 0); /* R0 = 1024 of 11 bits */
}

static void test_bc6h_reserved(void **state)
{
    (void)state;
    const unsigned reserved[4] = {19, 23, 27, 31};
    uint8_t blk[16];
    uint16_t h[48];
    float f[64];
    kt_rng rng;
    kt_rng_seed(&rng, 19);
    for (int i = 0; i < 4; i++) {
        for (int k = 0; k < 50; k++) {
            kt_rng_bytes(&rng, blk, 16);
            blk[0] = (uint8_t)((blk[0] & 0xE0) | reserved[i]);
            kiln__dec_bc6h_half(blk, k & 1, h);
            for (int j = 0; j < 48; j++) assert_int_equal(h[j], 0);
            kiln_bc6h_info info;
            assert_int_equal(kiln__bc6h_unpack(blk, k & 1, &info), 0);
            (k & 1 ? kiln__dec_bc6h_sf : kiln__dec_bc6h_uf)(blk, f);
            for (int t = 0; t < 16; t++) {
                assert_true(f[t * 4] == 0.0f && f[t * 4 + 1] == 0.0f && f[t * 4 + 2] == 0.0f);
                assert_true(f[t * 4 + 3] == 1.0f);
            }
        }
    }
}

/* ================================================================ tables and robustness */
static void test_bptc_tables(void **state)
{
    (void)state;
    for (unsigned p = 0; p < 64; p++) {
        assert_int_equal(kiln__bptc_subset(2, p, 0), 0);
        assert_int_equal(kiln__bptc_subset(3, p, 0), 0);
        assert_int_equal(kiln__bptc_subset(2, p, kiln__bptc_anchor2[p]), 1);
        assert_int_equal(kiln__bptc_subset(3, p, kiln__bptc_anchor3_1[p]), 1);
        assert_int_equal(kiln__bptc_subset(3, p, kiln__bptc_anchor3_2[p]), 2);
        unsigned n2[2] = {0}, n3[3] = {0};
        for (unsigned t = 0; t < 16; t++) {
            n2[kiln__bptc_subset(2, p, t)]++;
            assert_true(kiln__bptc_p3[p][t] < 3);
            n3[kiln__bptc_p3[p][t]]++;
        }
        assert_true(n2[1] > 0 && n3[1] > 0 && n3[2] > 0);
    }
    for (unsigned i = 0; i < 4; i++) assert_int_equal(kiln__bptc_weights2[i] + kiln__bptc_weights2[3 - i], 64);
    for (unsigned i = 0; i < 8; i++) assert_int_equal(kiln__bptc_weights3[i] + kiln__bptc_weights3[7 - i], 64);
    for (unsigned i = 0; i < 16; i++) assert_int_equal(kiln__bptc_weights4[i] + kiln__bptc_weights4[15 - i], 64);
}

/* Any 16 bytes decode without faults (ASan/UBSan) and within range. */
static void test_random_blocks_in_range(void **state)
{
    (void)state;
    kt_rng rng;
    kt_rng_seed(&rng, 1234);
    uint8_t blk[16], t[64];
    float f[64];
    uint16_t h[48];
    for (int i = 0; i < 20000; i++) {
        kt_rng_bytes(&rng, blk, 16);
        kiln__dec_bc1_rgb(blk, t);
        kiln__dec_bc1_rgba(blk, t);
        kiln__dec_bc2(blk, t);
        kiln__dec_bc3(blk, t);
        kiln__dec_bc4u(blk, t);
        kiln__dec_bc5u(blk, t);
        kiln__dec_bc7(blk, t);
        kiln__dec_bc4s(blk, f);
        for (int k = 0; k < 64; k++) assert_true(f[k] >= -1.0f && f[k] <= 1.0f);
        kiln__dec_bc5s(blk, f);
        for (int k = 0; k < 64; k++) assert_true(f[k] >= -1.0f && f[k] <= 1.0f);
        kiln__dec_bc6h_half(blk, 0, h);
        for (int k = 0; k < 48; k++) assert_true(h[k] <= 0x7BFF); /* [0, 65504] */
        kiln__dec_bc6h_half(blk, 1, h);
        for (int k = 0; k < 48; k++) assert_true((h[k] & 0x7FFF) <= 0x7C00); /* finite or -inf */
        kiln__dec_bc6h_uf(blk, f);
        for (int k = 0; k < 64; k++) assert_false(isnan(f[k]));
    }
}

/* The decoder table routes every BC format to these functions. */
static void test_decoder_table(void **state)
{
    (void)state;
    assert_ptr_equal(kiln__block_decoder(KILN_FORMAT_BC1_RGB_UNORM), kiln__dec_bc1_rgb);
    assert_ptr_equal(kiln__block_decoder(KILN_FORMAT_BC1_RGBA_SRGB), kiln__dec_bc1_rgba);
    assert_ptr_equal(kiln__block_decoder(KILN_FORMAT_BC4_SNORM), kiln__dec_bc4s);
    assert_ptr_equal(kiln__block_decoder(KILN_FORMAT_BC6H_SFLOAT), kiln__dec_bc6h_sf);
    assert_ptr_equal(kiln__block_decoder(KILN_FORMAT_BC7_SRGB), kiln__dec_bc7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bc1_four_colour),
        cmocka_unit_test(test_bc1_three_colour),
        cmocka_unit_test(test_bc2),
        cmocka_unit_test(test_bc3),
        cmocka_unit_test(test_bc4_unorm),
        cmocka_unit_test(test_bc4_snorm),
        cmocka_unit_test(test_bc5),
        cmocka_unit_test(test_bc7_mode0),
        cmocka_unit_test(test_bc7_mode1),
        cmocka_unit_test(test_bc7_mode2),
        cmocka_unit_test(test_bc7_mode3),
        cmocka_unit_test(test_bc7_mode4),
        cmocka_unit_test(test_bc7_mode5),
        cmocka_unit_test(test_bc7_mode6),
        cmocka_unit_test(test_bc7_mode7),
        cmocka_unit_test(test_bc7_reserved),
        cmocka_unit_test(test_bc6h_each_mode),
        cmocka_unit_test(test_bc6h_mode3),
        cmocka_unit_test(test_bc6h_mode0_transform),
        cmocka_unit_test(test_bc6h_reversed_bits),
        cmocka_unit_test(test_bc6h_reserved),
        cmocka_unit_test(test_bptc_tables),
        cmocka_unit_test(test_random_blocks_in_range),
        cmocka_unit_test(test_decoder_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

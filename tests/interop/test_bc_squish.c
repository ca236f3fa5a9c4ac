/* test_bc_squish.c - kiln's BC1..BC5 decoders against libsquish's decoder (an independent
 * implementation of the same D3D10 reference rounding: 565 bit replication, (2a+b)/3, (a+b)/2 and
 * ((8-i)a + (i-1)b)/7 style integer truncation), exactly, texel by texel.
 *
 * Blocks: 100000 random blocks per format, plus blocks produced by real encoders (libsquish's range
 * and cluster fit, stb_dxt) from the test images.
 *
 * Known convention differences, handled here:
 *   - libsquish decodes DXT1 index 3 of three-colour blocks as transparent black: compared with
 *     kiln's BC1 RGBA decoder; kiln's BC1 RGB decoder must give the same RGB with alpha 255.
 *   - libsquish 1.15 cannot decode BC4/BC5 (the flags fall back to a colour block). Its DXT5 alpha
 *     decoder is the same algorithm (RGTC's unsigned channel is defined as the BC3 alpha block), so
 *     BC4/BC5 channels are compared with squish's DXT5 alpha of a block holding them as alpha.
 *   - BC4/BC5 SNORM are not supported by libsquish at all: not compared here (see test_bc_decode).
 */
#include "support.h"

#include "codec/codec.h"
#include "squish_shim.h"

#include <stdio.h>
#include <string.h>

#if defined(__GNUC__)
/* stb_image / stb_dxt as private (static) copies: unused ones are fine in this test */
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#endif
#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#include <stb_image.h>
#define STB_DXT_STATIC
#define STB_DXT_IMPLEMENTATION
#include <stb_dxt.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#define RANDOM_BLOCKS 100000

typedef struct tally {
    long blocks;
    long texels_differ;
    long squish_transparent; /* BC1: three-colour index 3 texels (alpha 0 in squish) */
} tally;

static void report(const char *what, const tally *t)
{
    print_message("%-34s %7ld blocks, %ld differing texels\n", what, t->blocks, t->texels_differ);
    if (t->squish_transparent)
        print_message("%-34s %7ld texels were BC1 three-colour index 3 (squish alpha 0, kiln RGB alpha 255)\n",
                      "", t->squish_transparent);
}

static int count_diff(const uint8_t *a, const uint8_t *b, int stride, int nch)
{
    int n = 0;
    for (int t = 0; t < 16; t++)
        if (memcmp(a + t * stride, b + t * stride, (size_t)nch) != 0) n++;
    return n;
}

static void cmp_bc1(const uint8_t blk[8], tally *t)
{
    uint8_t sq[64], k[64], kr[64];
    kt_squish_decompress(sq, blk, KT_SQUISH_DXT1);
    kiln__dec_bc1_rgba(blk, k);
    kiln__dec_bc1_rgb(blk, kr);
    int d = count_diff(sq, k, 4, 4);
    for (int i = 0; i < 16; i++) {
        if (memcmp(sq + i * 4, kr + i * 4, 3) != 0 || kr[i * 4 + 3] != 255) d++;
        if (sq[i * 4 + 3] == 0) t->squish_transparent++;
    }
    t->texels_differ += d;
    t->blocks++;
}

static void cmp_bc2(const uint8_t blk[16], tally *t)
{
    uint8_t sq[64], k[64];
    kt_squish_decompress(sq, blk, KT_SQUISH_DXT3);
    kiln__dec_bc2(blk, k);
    t->texels_differ += count_diff(sq, k, 4, 4);
    t->blocks++;
}

static void cmp_bc3(const uint8_t blk[16], tally *t)
{
    uint8_t sq[64], k[64];
    kt_squish_decompress(sq, blk, KT_SQUISH_DXT5);
    kiln__dec_bc3(blk, k);
    t->texels_differ += count_diff(sq, k, 4, 4);
    t->blocks++;
}

/* squish's DXT5 alpha decoder on an 8-byte BC4 channel block */
static void squish_channel(const uint8_t ch[8], uint8_t out[16])
{
    uint8_t dxt5[16] = {0}, rgba[64];
    memcpy(dxt5, ch, 8);
    kt_squish_decompress(rgba, dxt5, KT_SQUISH_DXT5);
    for (int i = 0; i < 16; i++) out[i] = rgba[i * 4 + 3];
}

static void cmp_bc4(const uint8_t blk[8], tally *t)
{
    uint8_t sq[16], k[64];
    squish_channel(blk, sq);
    kiln__dec_bc4u(blk, k);
    int d = 0;
    for (int i = 0; i < 16; i++)
        if (k[i * 4] != sq[i] || k[i * 4 + 1] != 0 || k[i * 4 + 2] != 0 || k[i * 4 + 3] != 255) d++;
    t->texels_differ += d;
    t->blocks++;
}

static void cmp_bc5(const uint8_t blk[16], tally *t)
{
    uint8_t sr[16], sg[16], k[64];
    squish_channel(blk, sr);
    squish_channel(blk + 8, sg);
    kiln__dec_bc5u(blk, k);
    int d = 0;
    for (int i = 0; i < 16; i++)
        if (k[i * 4] != sr[i] || k[i * 4 + 1] != sg[i] || k[i * 4 + 2] != 0 || k[i * 4 + 3] != 255) d++;
    t->texels_differ += d;
    t->blocks++;
}

static void test_random_blocks(void **state)
{
    (void)state;
    kt_rng rng;
    kt_rng_seed(&rng, 20240607);
    tally t1 = {0}, t2 = {0}, t3 = {0}, t4 = {0}, t5 = {0};
    uint8_t blk[16];
    for (int i = 0; i < RANDOM_BLOCKS; i++) {
        kt_rng_bytes(&rng, blk, 16);
        /* a quarter of the BC1 blocks with equal endpoints (three-colour mode edge) */
        if ((i & 3) == 0) memcpy(blk + 2, blk, 2);
        cmp_bc1(blk, &t1);
        cmp_bc4(blk, &t4);
        kt_rng_bytes(&rng, blk, 16);
        cmp_bc2(blk, &t2);
        cmp_bc3(blk, &t3);
        cmp_bc5(blk, &t5);
    }
    report("random BC1 (squish DXT1)", &t1);
    report("random BC2 (squish DXT3)", &t2);
    report("random BC3 (squish DXT5)", &t3);
    report("random BC4 (squish DXT5 alpha)", &t4);
    report("random BC5 (squish DXT5 alpha x2)", &t5);
    assert_int_equal(t1.texels_differ, 0);
    assert_int_equal(t2.texels_differ, 0);
    assert_int_equal(t3.texels_differ, 0);
    assert_int_equal(t4.texels_differ, 0);
    assert_int_equal(t5.texels_differ, 0);
    /* the random set really exercised three-colour blocks */
    assert_true(t1.squish_transparent > 0);
}

typedef struct img {
    int w, h;
    uint8_t *px; /* RGBA8 */
} img;

static int load_png(const char *rel, img *im)
{
    int n = 0;
    im->px = stbi_load(kt_testdata(rel), &im->w, &im->h, &n, 4);
    if (!im->px) {
        print_message("cannot load %s: %s\n", kt_testdata(rel), stbi_failure_reason());
        return 0;
    }
    return 1;
}

static void get_block(const img *im, int bx, int by, uint8_t rgba[64])
{
    for (int y = 0; y < 4; y++) {
        int sy = by * 4 + y < im->h ? by * 4 + y : im->h - 1;
        for (int x = 0; x < 4; x++) {
            int sx = bx * 4 + x < im->w ? bx * 4 + x : im->w - 1;
            memcpy(rgba + (y * 4 + x) * 4, im->px + ((size_t)sy * (size_t)im->w + (size_t)sx) * 4, 4);
        }
    }
}

static void test_encoder_blocks(void **state)
{
    (void)state;
    static const char *const images[] = {
        "ldr/Sara_Head_Diff_256_rgba.png",
        "ldr/stktex_directionSign_a_256_rgba.png",
        "ldr/supertuxkart_16_rgba.png",
        "ldr/gimp_qube1_tiny_31x57.png",
        "normal/stk_generic_rock_a_Normal_512_rgba.png",
        "grey/stk_displace_512_grey.png",
    };
    tally sq1r = {0}, sq1c = {0}, sq2 = {0}, sq3 = {0}, sq4 = {0}, sq5 = {0};
    tally st1 = {0}, st3 = {0}, st4 = {0}, st5 = {0};
    int loaded = 0;
    for (size_t i = 0; i < sizeof images / sizeof images[0]; i++) {
        img im;
        if (!load_png(images[i], &im)) continue;
        loaded++;
        const int bw = (im.w + 3) / 4, bh = (im.h + 3) / 4;
        int n = 0;
        for (int by = 0; by < bh; by++) {
            for (int bx = 0; bx < bw; bx++, n++) {
                uint8_t rgba[64], blk[16], ch[16 + 32]; /* R for BC4, then RG pairs for BC5 */
                get_block(&im, bx, by, rgba);
                kt_squish_compress(rgba, blk, KT_SQUISH_DXT1, KT_SQUISH_RANGE_FIT);
                cmp_bc1(blk, &sq1r);
                if ((n & 3) == 0) { /* cluster fit is slow: a quarter of the blocks */
                    kt_squish_compress(rgba, blk, KT_SQUISH_DXT1, KT_SQUISH_CLUSTER_FIT);
                    cmp_bc1(blk, &sq1c);
                }
                kt_squish_compress(rgba, blk, KT_SQUISH_DXT3, KT_SQUISH_RANGE_FIT);
                cmp_bc2(blk, &sq2);
                kt_squish_compress(rgba, blk, KT_SQUISH_DXT5, KT_SQUISH_RANGE_FIT);
                cmp_bc3(blk, &sq3);
                kt_squish_compress(rgba, blk, KT_SQUISH_BC4, KT_SQUISH_RANGE_FIT);
                cmp_bc4(blk, &sq4);
                kt_squish_compress(rgba, blk, KT_SQUISH_BC5, KT_SQUISH_RANGE_FIT);
                cmp_bc5(blk, &sq5);
                stb_compress_dxt_block(blk, rgba, 0, STB_DXT_NORMAL);
                cmp_bc1(blk, &st1);
                stb_compress_dxt_block(blk, rgba, 1, STB_DXT_HIGHQUAL);
                cmp_bc3(blk, &st3);
                for (int t = 0; t < 16; t++) {
                    ch[t] = rgba[t * 4];
                    ch[16 + t * 2] = rgba[t * 4];
                    ch[16 + t * 2 + 1] = rgba[t * 4 + 1];
                }
                stb_compress_bc4_block(blk, ch);
                cmp_bc4(blk, &st4);
                stb_compress_bc5_block(blk, ch + 16);
                cmp_bc5(blk, &st5);
            }
        }
        stbi_image_free(im.px);
    }
    if (!loaded) skip();
    report("squish DXT1 range fit", &sq1r);
    report("squish DXT1 cluster fit", &sq1c);
    report("squish DXT3", &sq2);
    report("squish DXT5", &sq3);
    report("squish BC4", &sq4);
    report("squish BC5", &sq5);
    report("stb_dxt DXT1", &st1);
    report("stb_dxt DXT5 (high quality)", &st3);
    report("stb_dxt BC4", &st4);
    report("stb_dxt BC5", &st5);
    const tally *all[] = {&sq1r, &sq1c, &sq2, &sq3, &sq4, &sq5, &st1, &st3, &st4, &st5};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        assert_true(all[i]->blocks > 0);
        assert_int_equal(all[i]->texels_differ, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_blocks),
        cmocka_unit_test(test_encoder_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

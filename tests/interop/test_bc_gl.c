/* test_bc_gl.c - kiln's BC1..BC7 decoders against Mesa's (desktop OpenGL through a surfaceless EGL
 * context: llvmpipe here), an independent implementation. Random blocks are uploaded with
 * glCompressedTexImage2D and read back with glGetTexImage.
 *   - BC7 (RGBA8) and BC6H UF16/SF16 (RGBA float, i.e. every half-float bit pattern at full
 *     precision): exact, all modes and partitions, reserved modes included.
 *   - BC1/BC2/BC3/BC4/BC5 UNORM (RGBA8) and BC4/BC5 SNORM (float): llvmpipe's S3TC/RGTC decoding
 *     rounds interpolated values differently from the D3D10 integer-truncation convention that kiln,
 *     libsquish and Pillow share (test_bc_squish, pillow_bc.sh agree exactly), so interpolated values
 *     are compared within one unit and every value that needs no interpolation (endpoints, BC1 black,
 *     six-value-mode extremes, BC2 alpha) must be exact. SNORM endpoints of -128: kiln (D3D10) reads
 *     -127, Mesa interpolates with -128 (both decode the endpoint itself to -1.0).
 * The EGL/GL plumbing is tests/interop/etc/mesa_gl.c (shared with the ETC interop test).
 * Skipped when no surfaceless EGL + desktop GL 4.x is available.
 */
#include "support.h"

#include "codec/codec.h"
#include "mesa_gl.h"

#include <GL/gl.h>
#include <GL/glext.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCKS_X 64 /* texture width 256 */

static kt_gl *gl;

static int setup(void **state)
{
    (void)state;
    char msg[256] = "";
    gl = kt_gl_open(msg, sizeof msg);
    if (!gl) print_message("no GL: %s\n", msg);
    else print_message("decoder under comparison: %s\n", kt_gl_renderer(gl));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    kt_gl_close(gl);
    gl = NULL;
    return 0;
}

/* random blocks; BC7 and BC6H get their mode chosen uniformly (plus some reserved ones) */
static void make_blocks(kt_rng *rng, int kind, uint8_t *blocks, size_t n, size_t bsize)
{
    static const uint8_t bc6_modes[18] = {0, 1, 2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31};
    kt_rng_bytes(rng, blocks, n * bsize);
    for (size_t i = 0; i < n; i++) {
        uint8_t *b = blocks + i * bsize;
        if (kind == 7) {
            unsigned m = (unsigned)(i % 9); /* 8: reserved (first byte 0) */
            b[0] = m == 8 ? 0 : (uint8_t)((b[0] & ~((2u << m) - 1u) & 0xFFu) | (1u << m));
        } else if (kind == 6) {
            unsigned mv = bc6_modes[i % 18];
            b[0] = (uint8_t)(mv < 2 ? (b[0] & 0xFCu) | mv : (b[0] & 0xE0u) | mv);
        }
    }
}

/* Uploads n blocks as a (BLOCKS_X*4) x (n/BLOCKS_X*4) texture and reads it back. */
static void *gl_decode(unsigned ifmt, const uint8_t *blocks, size_t n, size_t bsize, unsigned rfmt, unsigned rtype,
                       size_t texel_bytes)
{
    const int w = BLOCKS_X * 4, h = (int)(n / BLOCKS_X) * 4;
    void *out = malloc((size_t)w * (size_t)h * texel_bytes);
    assert_non_null(out);
    char msg[256];
    if (kt_gl_decode(gl, ifmt, w, h, blocks, n * bsize, rfmt, rtype, out, msg, sizeof msg) != 0) {
        print_error("%s\n", msg);
        free(out);
        fail();
    }
    return out;
}

/* the GL texel of texel t (row-major) of block i */
static const uint8_t *gl_texel(const void *img, size_t i, int t, size_t texel_bytes)
{
    const size_t w = BLOCKS_X * 4;
    size_t x = (i % BLOCKS_X) * 4 + (size_t)(t & 3), y = (i / BLOCKS_X) * 4 + (size_t)(t >> 2);
    return (const uint8_t *)img + (y * w + x) * texel_bytes;
}

/* ---- S3TC / RGTC: which channels Mesa must reproduce exactly ----
 * llvmpipe decodes S3TC/RGTC through its own sampling code, whose interpolated values differ from the
 * D3D10 integer-truncation convention (that kiln, libsquish and Pillow share exactly) by one unit in
 * either direction. So interpolated values are compared within +-1 unit, and every value that does
 * not involve interpolation must be exact: endpoints (index 0/1), BC1 three-colour black/transparent,
 * BC4-style 0/255 (-1/+1) codes of the six-value mode, BC2 explicit alpha. */
static unsigned bc1_code(const uint8_t *b8, int t)
{
    uint32_t bits = (uint32_t)b8[4] | (uint32_t)b8[5] << 8 | (uint32_t)b8[6] << 16 | (uint32_t)b8[7] << 24;
    return (bits >> (2 * t)) & 3u;
}

static unsigned bc4_code(const uint8_t *b8, int t)
{
    uint64_t bits = 0;
    for (int i = 7; i >= 2; i--) bits = bits << 8 | b8[i];
    return (unsigned)(bits >> (3 * t)) & 7u;
}

static int bc4_exact(const uint8_t *b8, int t, int is_signed)
{
    unsigned code = bc4_code(b8, t);
    int a0 = is_signed ? (int8_t)b8[0] : b8[0], a1 = is_signed ? (int8_t)b8[1] : b8[1];
    return code <= 1 || (a0 <= a1 && code >= 6);
}

/* per channel: 1 when the value needs no interpolation (so must be exact), else 0 */
static void exact_mask(int fmt, const uint8_t *b, int t, int mask[4])
{
    mask[0] = mask[1] = mask[2] = mask[3] = 1;
    switch (fmt) {
    case 1: { /* BC1: four-colour code 2/3 and three-colour code 2 are interpolated */
        unsigned c0 = b[0] | (unsigned)b[1] << 8, c1 = b[2] | (unsigned)b[3] << 8, code = bc1_code(b, t);
        int interp = code == 2 || (code == 3 && c0 > c1);
        mask[0] = mask[1] = mask[2] = !interp;
        break;
    }
    case 2: /* BC2: colour always four-colour; alpha explicit */
        mask[0] = mask[1] = mask[2] = bc1_code(b + 8, t) <= 1;
        break;
    case 3:
        mask[0] = mask[1] = mask[2] = bc1_code(b + 8, t) <= 1;
        mask[3] = bc4_exact(b, t, 0);
        break;
    case 4: mask[0] = bc4_exact(b, t, 0); break;
    case 5:
        mask[0] = bc4_exact(b, t, 0);
        mask[1] = bc4_exact(b + 8, t, 0);
        break;
    default: break;
    }
}

typedef struct u8case {
    const char *name;
    unsigned ifmt;
    size_t bsize;
    int fmt; /* 1..5, 7 */
    kiln_block_decode_fn fn;
} u8case;

static void test_u8_formats(void **state)
{
    (void)state;
    if (!gl) skip();
    static const u8case cases[] = {
        {"BC7 (BPTC UNORM)", GL_COMPRESSED_RGBA_BPTC_UNORM, 16, 7, kiln__dec_bc7},
        {"BC1 RGB (DXT1)", GL_COMPRESSED_RGB_S3TC_DXT1_EXT, 8, 1, kiln__dec_bc1_rgb},
        {"BC1 RGBA (DXT1)", GL_COMPRESSED_RGBA_S3TC_DXT1_EXT, 8, 1, kiln__dec_bc1_rgba},
        {"BC2 (DXT3)", GL_COMPRESSED_RGBA_S3TC_DXT3_EXT, 16, 2, kiln__dec_bc2},
        {"BC3 (DXT5)", GL_COMPRESSED_RGBA_S3TC_DXT5_EXT, 16, 3, kiln__dec_bc3},
        {"BC4 UNORM (RGTC1)", GL_COMPRESSED_RED_RGTC1, 8, 4, kiln__dec_bc4u},
        {"BC5 UNORM (RGTC2)", GL_COMPRESSED_RG_RGTC2, 16, 5, kiln__dec_bc5u},
    };
    const size_t n = BLOCKS_X * 256; /* 16384 blocks */
    kt_rng rng;
    kt_rng_seed(&rng, 0xB7);
    uint8_t *blocks = malloc(n * 16);
    assert_non_null(blocks);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const u8case *k = &cases[c];
        make_blocks(&rng, k->fmt, blocks, n, k->bsize);
        uint8_t *img = gl_decode(k->ifmt, blocks, n, k->bsize, GL_RGBA, GL_UNSIGNED_BYTE, 4);
        long values = 0, equal = 0, exact_values = 0, bad = 0, reserved = 0, shown = 0;
        int maxd[2] = {0, 0}; /* largest interpolated difference: BC1-style colour, BC4-style channel */
        for (size_t i = 0; i < n; i++) {
            const uint8_t *b = blocks + i * k->bsize;
            uint8_t t[64];
            k->fn(b, t);
            if (k->fmt == 7 && b[0] == 0) reserved++;
            for (int j = 0; j < 16; j++) {
                const uint8_t *g = gl_texel(img, i, j, 4);
                int mask[4];
                exact_mask(k->fmt, b, j, mask);
                for (int ch = 0; ch < 4; ch++) {
                    int d = abs((int)g[ch] - (int)t[j * 4 + ch]);
                    /* BC4-style channels (BC3 alpha, BC4/BC5): llvmpipe's 1/7 and 1/5 weights are off
                     * by up to ~1.2 units; BC1-style colours by less than one */
                    int bc4ch = (k->fmt == 3 && ch == 3) || k->fmt == 4 || k->fmt == 5;
                    int tol = mask[ch] ? 0 : bc4ch ? 2 : 1;
                    values++;
                    equal += d == 0;
                    exact_values += mask[ch];
                    if (!mask[ch] && d > maxd[bc4ch]) maxd[bc4ch] = d;
                    if (d > tol) {
                        bad++;
                        if (shown++ < 5)
                            print_message("  %s block %zu texel %d channel %d: kiln %d mesa %d (%s)\n", k->name, i, j,
                                          ch, t[j * 4 + ch], g[ch], mask[ch] ? "must be exact" : "interpolated");
                    }
                }
            }
        }
        if (k->fmt == 7)
            print_message("%-18s %zu random blocks (%ld reserved: all 0): %ld of %ld channel values equal, %ld bad\n",
                          k->name, n, reserved, equal, values, bad);
        else
            print_message("%-18s %zu random blocks: %ld of %ld channel values equal; the %ld non-interpolated "
                          "ones %s; interpolated: largest difference %d (colour) / %d (BC4-style); %ld bad\n",
                          k->name, n, equal, values, exact_values, bad ? "checked" : "all exact", maxd[0], maxd[1],
                          bad);
        free(img);
        assert_int_equal(bad, 0);
        if (k->fmt == 7) assert_int_equal(equal, values);
    }
    free(blocks);
}

static void test_snorm_formats(void **state)
{
    (void)state;
    if (!gl) skip();
    const size_t n = BLOCKS_X * 256;
    kt_rng rng;
    kt_rng_seed(&rng, 0xB4);
    uint8_t *blocks = malloc(n * 16);
    assert_non_null(blocks);
    for (int two = 0; two < 2; two++) {
        const size_t bsize = two ? 16 : 8;
        make_blocks(&rng, 0, blocks, n, bsize);
        /* a third of the blocks get a -128 endpoint, the convention difference */
        for (size_t i = 0; i < n; i += 3) blocks[i * bsize + (i & 1)] = 0x80;
        float *img = gl_decode(two ? GL_COMPRESSED_SIGNED_RG_RGTC2 : GL_COMPRESSED_SIGNED_RED_RGTC1, blocks, n, bsize,
                               GL_RGBA, GL_FLOAT, 16);
        long values = 0, equal = 0, exact_values = 0, bad = 0, shown = 0, m128 = 0;
        float maxd = 0.0f;
        for (size_t i = 0; i < n; i++) {
            const uint8_t *b = blocks + i * bsize;
            float t[64];
            (two ? kiln__dec_bc5s : kiln__dec_bc4s)(b, t);
            for (int j = 0; j < 16; j++) {
                float g[4];
                memcpy(g, gl_texel(img, i, j, 16), 16);
                for (int ch = 0; ch < 4; ch++) {
                    int exact = 1;
                    int has128 = 0;
                    if (ch < 1 + two) {
                        const uint8_t *h = b + 8 * ch;
                        exact = bc4_exact(h, j, 1);
                        has128 = h[0] == 0x80 || h[1] == 0x80;
                    }
                    /* Mesa converts v * (1.0f / 127) where kiln divides v / 127.0f: up to 1 ulp apart
                     * on exact values; interpolated ones: two units of 1/127 (llvmpipe's weights), three
                     * when Mesa interpolates with a -128 endpoint */
                    float tol = exact ? 1.5e-7f : (has128 ? 3.0f : 2.0f) / 127.0f + 1e-6f;
                    float d = g[ch] > t[j * 4 + ch] ? g[ch] - t[j * 4 + ch] : t[j * 4 + ch] - g[ch];
                    values++;
                    equal += d == 0.0f;
                    exact_values += exact;
                    m128 += has128 && !exact;
                    if (!exact && d * 127.0f > maxd) maxd = d * 127.0f;
                    if (d > tol) {
                        bad++;
                        if (shown++ < 5)
                            print_message("  block %zu texel %d channel %d: kiln %.9g mesa %.9g (%s)\n", i, j, ch,
                                          t[j * 4 + ch], g[ch], exact ? "must be exact" : "interpolated");
                    }
                }
            }
        }
        print_message("%-18s %zu random blocks: %ld of %ld channel values equal (bitwise); the %ld "
                      "non-interpolated ones %s (within 1 ulp: v*(1/127) vs v/127); interpolated: largest "
                      "difference %.2f/127 (%ld of them from a -128 endpoint, which kiln reads as -127); %ld bad\n",
                      two ? "BC5 SNORM (RGTC2)" : "BC4 SNORM (RGTC1)", n, equal, values, exact_values,
                      bad ? "checked" : "agree", (double)maxd, m128, bad);
        free(img);
        assert_int_equal(bad, 0);
    }
    free(blocks);
}

static void test_bc6h(void **state)
{
    (void)state;
    if (!gl) skip();
    const size_t n = BLOCKS_X * 512; /* 32768 blocks */
    kt_rng rng;
    kt_rng_seed(&rng, 0xB6);
    uint8_t *blocks = malloc(n * 16);
    assert_non_null(blocks);
    for (int s = 0; s < 2; s++) {
        make_blocks(&rng, 6, blocks, n, 16);
        float *img = gl_decode(s ? GL_COMPRESSED_RGB_BPTC_SIGNED_FLOAT : GL_COMPRESSED_RGB_BPTC_UNSIGNED_FLOAT, blocks,
                               n, 16, GL_RGBA, GL_FLOAT, 16);
        long differ = 0, shown = 0, reserved = 0;
        for (size_t i = 0; i < n; i++) {
            float t[64];
            (s ? kiln__dec_bc6h_sf : kiln__dec_bc6h_uf)(blocks + i * 16, t);
            unsigned mv = blocks[i * 16] & 3u;
            if (mv >= 2) mv = blocks[i * 16] & 31u;
            if (mv == 19 || mv == 23 || mv == 27 || mv == 31) reserved++;
            for (int j = 0; j < 16; j++) {
                float g[4];
                memcpy(g, gl_texel(img, i, j, 16), 16);
                if (memcmp(g, t + j * 4, 16) != 0) {
                    differ++;
                    if (shown++ < 5)
                        print_message("  %s block %zu (mode %u) texel %d: kiln (%.9g,%.9g,%.9g,%g) mesa (%.9g,%.9g,%.9g,%g)\n",
                                      s ? "SF16" : "UF16", i, mv, j, t[j * 4], t[j * 4 + 1], t[j * 4 + 2], t[j * 4 + 3],
                                      g[0], g[1], g[2], g[3]);
                }
            }
        }
        print_message("%-20s %zu random blocks (all 14 modes, %ld reserved): %ld differing texels (bitwise float)\n",
                      s ? "BC6H SF16 (BPTC)" : "BC6H UF16 (BPTC)", n, reserved, differ);
        free(img);
        assert_int_equal(differ, 0);
    }
    free(blocks);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_u8_formats),
        cmocka_unit_test(test_snorm_formats),
        cmocka_unit_test(test_bc6h),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/* test_etc_gl.c - kiln's ETC1/ETC2/EAC decoders against an independent decoder: Mesa's desktop OpenGL through
 * a surfaceless EGL context (llvmpipe). For every format, >= 100k blocks (random bytes, plus blocks crafted to
 * hit every ETC2 mode and the EAC corner cases: multiplier 0, signed base -128, extreme bases) are uploaded
 * with glCompressedTexImage2D as 256x256 textures, read back with glGetTexImage and compared EXACTLY:
 *   ETC2 RGB8 / RGB8A1 / RGBA8 (and ETC1 data as GL_COMPRESSED_RGB8_ETC2): RGBA8 bytes;
 *   EAC R11 / RG11: GL_UNSIGNED_SHORT, which carries the 11-bit value widened as (v << 5) | (v >> 6) - the
 *     11-bit value is v = u16 >> 5 and the widening is checked to be exact;
 *   signed EAC R11 / RG11: GL_SHORT, sign-magnitude widening of the 11-bit value.
 * sRGB variants are not compared: their block decoding is identical (kiln__block_decoder maps them to the
 * same functions).
 *
 * Built with EGL/GL only when CMake finds them (KILN_TEST_HAVE_EGL, block at the end of CMakeLists.txt);
 * otherwise, or when no EGL display can be created, the tests are skipped. Set KILN_REQUIRE_GL=1 to make a
 * missing display a failure instead. */
#include "support.h"
#include "codec/codec.h"
#include "codec/etc_tables.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef KILN_TEST_HAVE_EGL
#include "mesa_gl.h"

#define TEX_DIM 256
#define BLOCKS_PER_UPLOAD ((TEX_DIM / 4) * (TEX_DIM / 4))
#define UPLOADS 26 /* 26 * 4096 = 106496 blocks per format */

typedef struct gl_state {
    kt_gl *gl;
} gl_state;

static int setup(void **state)
{
    static gl_state st;
    char msg[256] = "";
    st.gl = kt_gl_open(msg, sizeof msg);
    if (!st.gl) {
        const char *req = getenv("KILN_REQUIRE_GL");
        fprintf(stderr, "test_etc_gl: no Mesa GL (%s)%s\n", msg, req && *req == '1' ? "" : ": skipping");
        if (req && *req == '1') return -1;
    } else {
        printf("test_etc_gl: %s\n", kt_gl_renderer(st.gl));
    }
    *state = &st;
    return 0;
}

static int teardown(void **state)
{
    gl_state *st = *state;
    if (st) kt_gl_close(st->gl);
    return 0;
}

/* ---- block generation ---- */

/* Random ETC colour block whose mode is `mode` (rejection sampling over the colour header bits). */
static void etc_block_of_mode(kt_rng *r, uint8_t b[8], int mode, int punchthrough)
{
    for (;;) {
        kt_rng_bytes(r, b, 8);
        if ((int)kiln__etc_mode(b, punchthrough) == mode) return;
    }
}

typedef struct gen_stats {
    long modes[2][5]; /* [opaque bit][mode] for colour blocks */
    long h_equal; /* H blocks with equal base colours (distance index lsb from ">=") */
    long eac_mult0, eac_base_m128, eac_base_extreme, eac_blocks;
} gen_stats;

/* An EAC channel block: random, with every 8th block multiplier 0, others with extreme bases. */
static void eac_block(kt_rng *r, uint8_t b[8], long i, gen_stats *gs)
{
    kt_rng_bytes(r, b, 8);
    static const uint8_t bases[] = {0x00, 0xFF, 0x80, 0x81, 0x7F, 0x01, 0xFE};
    switch (i % 8) {
    case 1: b[1] &= 0x0F; break;                          /* multiplier 0 */
    case 3: b[0] = bases[(i / 8) % sizeof bases]; break;  /* extreme base */
    case 5: b[0] = bases[(i / 8) % sizeof bases], b[1] |= 0xF0; break; /* extreme base, multiplier 15 */
    default: break;
    }
    gs->eac_blocks++;
    if ((b[1] >> 4) == 0) gs->eac_mult0++;
    if (b[0] == 0x80) gs->eac_base_m128++;
    if (b[0] == 0x00 || b[0] == 0xFF || b[0] == 0x80 || b[0] == 0x7F) gs->eac_base_extreme++;
}

/* ETC colour block: odd blocks random bytes, even blocks forced to a mode (cycling over all modes). */
static void color_block(kt_rng *r, uint8_t b[8], long i, int punchthrough, int etc1_only, gen_stats *gs)
{
    if (etc1_only) {
        etc_block_of_mode(r, b, (int)(i & 1), 0); /* individual / differential only */
    } else if (i & 1) {
        kt_rng_bytes(r, b, 8);
    } else {
        const int m = punchthrough ? 1 + (int)((i / 2) % 4) : (int)((i / 2) % 5);
        etc_block_of_mode(r, b, m, punchthrough);
        if (m == KILN_ETC_MODE_H && (i / 10) % 4 == 0) {
            /* copy base colour 1 into base colour 2 (bits 46..35); the mode bits stay those of an H block
             * since the B + dB check is not reached */
            uint64_t v = 0;
            for (int k = 0; k < 8; k++) v = (v << 8) | b[k];
            const uint64_t r1 = (v >> 59) & 15, g1 = (((v >> 56) & 7) << 1) | ((v >> 52) & 1);
            const uint64_t b1 = (((v >> 51) & 1) << 3) | ((v >> 47) & 7);
            v = (v & ~(0xFFFull << 35)) | (r1 << 43) | (g1 << 39) | (b1 << 35);
            for (int k = 0; k < 8; k++) b[k] = (uint8_t)(v >> (56 - 8 * k));
            gs->h_equal++;
        }
    }
    const int opaque = (b[3] >> 1) & 1;
    gs->modes[opaque][kiln__etc_mode(b, punchthrough)]++;
}

static void gen_block(kiln_format f, kt_rng *r, uint8_t *b, long i, gen_stats *gs)
{
    switch (f) {
    case KILN_FORMAT_ETC1_UNORM: color_block(r, b, i, 0, 1, gs); break;
    case KILN_FORMAT_ETC2_RGB8_UNORM: color_block(r, b, i, 0, 0, gs); break;
    case KILN_FORMAT_ETC2_RGB8A1_UNORM: color_block(r, b, i, 1, 0, gs); break;
    case KILN_FORMAT_ETC2_RGBA8_UNORM:
        eac_block(r, b, i, gs);
        color_block(r, b + 8, i / 2, 0, 0, gs);
        break;
    case KILN_FORMAT_EAC_RG11_UNORM:
    case KILN_FORMAT_EAC_RG11_SNORM:
        eac_block(r, b, i, gs);
        eac_block(r, b + 8, i + 3, gs);
        break;
    default: eac_block(r, b, i, gs); break;
    }
}

/* ---- comparison ---- */

typedef struct cmp_result {
    long blocks, texels, mismatched_texels, bad_widening;
    char first[512];
} cmp_result;

static void hexblock(char *dst, size_t n, const uint8_t *b, size_t bytes)
{
    size_t o = 0;
    for (size_t i = 0; i < bytes && o + 3 < n; i++) o += (size_t)snprintf(dst + o, n - o, "%02x", b[i]);
}

static void note_mismatch(cmp_result *cr, const uint8_t *blk, size_t bytes, int x, int y, const char *what)
{
    if (cr->mismatched_texels++ == 0) {
        char hex[40];
        hexblock(hex, sizeof hex, blk, bytes);
        snprintf(cr->first, sizeof cr->first, "block %s texel (%d,%d): %s", hex, x, y, what);
    }
}

/* Compares one block's Mesa texels (from the read-back image) with kiln's decoder output. */
static void compare_block(kiln_format f, const kiln_format_info *fi, const uint8_t *blk, const uint8_t *mesa, int bx,
                          int by, size_t texel_bytes, cmp_result *cr)
{
    uint8_t kiln_out[64 * 4];
    kiln__block_decoder(f)(blk, kiln_out);
    cr->blocks++;
    const int is_eac = fi->decoded_type != KILN_PIXEL_U8;
    const int is_signed = (fi->flags & KILN_FF_SIGNED) != 0;
    int16_t s11[2][16];
    if (is_eac && is_signed) {
        kiln__dec_eac_channel_s11(blk, s11[0]);
        if (fi->channels > 1) kiln__dec_eac_channel_s11(blk + 8, s11[1]);
    }
    for (int y = 0; y < 4; y++) {
        for (int x = 0; x < 4; x++) {
            const uint8_t *m = mesa + ((size_t)(by * 4 + y) * TEX_DIM + (size_t)(bx * 4 + x)) * texel_bytes;
            const int t = y * 4 + x;
            char what[160];
            cr->texels++;
            if (!is_eac) {
                const uint8_t *k = kiln_out + t * 4;
                if (memcmp(k, m, 4) != 0) {
                    snprintf(what, sizeof what, "kiln (%d,%d,%d,%d) mesa (%d,%d,%d,%d)", k[0], k[1], k[2], k[3], m[0],
                             m[1], m[2], m[3]);
                    note_mismatch(cr, blk, fi->block_bytes, x, y, what);
                }
                continue;
            }
            for (uint32_t c = 0; c < fi->channels; c++) {
                if (!is_signed) {
                    uint16_t mu;
                    memcpy(&mu, m + 2 * c, 2);
                    const int v11 = mu >> 5; /* Mesa's 16-bit value is the widened 11-bit value */
                    if (kiln__eac_u11_to_u16(v11) != mu) cr->bad_widening++;
                    const uint16_t ku = ((const uint16_t *)(const void *)kiln_out)[t * 4 + c];
                    if (ku != mu) {
                        snprintf(what, sizeof what, "channel %u: kiln %u (11-bit %u) mesa %u (11-bit %d)", c, ku,
                                 ku >> 5, mu, v11);
                        note_mismatch(cr, blk, fi->block_bytes, x, y, what);
                    }
                } else {
                    int16_t ms;
                    memcpy(&ms, m + 2 * c, 2);
                    const int mag = ms < 0 ? -ms : ms;
                    const int v11 = ms < 0 ? -(mag >> 5) : (mag >> 5);
                    if (kiln__eac_s11_to_s16(v11) != ms) cr->bad_widening++;
                    const int k11 = s11[c][t];
                    const float kf = ((const float *)(const void *)kiln_out)[t * 4 + c];
                    if (k11 != v11 || kf != (float)k11 / 1023.0f) {
                        snprintf(what, sizeof what, "channel %u: kiln %d (%.6f) mesa %d (16-bit %d)", c, k11,
                                 (double)kf, v11, ms);
                        note_mismatch(cr, blk, fi->block_bytes, x, y, what);
                    }
                }
            }
        }
    }
}

static void run_format(void **state, kiln_format f, int uploads)
{
    gl_state *st = *state;
    if (!st || !st->gl) skip();
    const kiln_format_info *fi = kiln_format_get_info(f);
    assert_non_null(fi);
    unsigned ifmt = 0, rfmt = 0, rtype = 0;
    size_t texel_bytes = 0;
    assert_true(kt_gl_format(f, &ifmt, &rfmt, &rtype, &texel_bytes));
    const size_t data_size = (size_t)BLOCKS_PER_UPLOAD * fi->block_bytes;
    uint8_t *data = malloc(data_size);
    uint8_t *mesa = malloc((size_t)TEX_DIM * TEX_DIM * texel_bytes);
    assert_non_null(data);
    assert_non_null(mesa);
    kt_rng r;
    kt_rng_seed(&r, 0xE7C0000u + (uint64_t)f);
    gen_stats gs;
    memset(&gs, 0, sizeof gs);
    cmp_result cr;
    memset(&cr, 0, sizeof cr);
    long gi = 0;
    for (int u = 0; u < uploads; u++) {
        for (long i = 0; i < BLOCKS_PER_UPLOAD; i++, gi++) gen_block(f, &r, data + i * fi->block_bytes, gi, &gs);
        char msg[256];
        memset(mesa, 0xCD, (size_t)TEX_DIM * TEX_DIM * texel_bytes);
        if (kt_gl_decode(st->gl, ifmt, TEX_DIM, TEX_DIM, data, data_size, rfmt, rtype, mesa, msg, sizeof msg) != 0) {
            free(data);
            free(mesa);
            fail_msg("%s: %s", fi->name, msg);
        }
        for (int by = 0; by < TEX_DIM / 4; by++)
            for (int bx = 0; bx < TEX_DIM / 4; bx++)
                compare_block(f, fi, data + (size_t)(by * (TEX_DIM / 4) + bx) * fi->block_bytes, mesa, bx, by,
                              texel_bytes, &cr);
    }
    free(data);
    free(mesa);
    printf("%-14s %ld blocks, %ld texels compared, %ld mismatched texels", fi->name, cr.blocks, cr.texels,
           cr.mismatched_texels);
    if (fi->decoded_type == KILN_PIXEL_U8) {
        static const char *names[5] = {"individual", "differential", "T", "H", "planar"};
        printf("; colour modes:");
        for (int m = 0; m < 5; m++) {
            if (fi->flags & KILN_FF_ALPHA1)
                printf(" %s %ld+%ld", names[m], gs.modes[1][m], gs.modes[0][m]);
            else
                printf(" %s %ld", names[m], gs.modes[0][m] + gs.modes[1][m]);
        }
        if (fi->flags & KILN_FF_ALPHA1) printf(" (opaque+non-opaque)");
        printf(", H with equal base colours %ld", gs.h_equal);
    }
    if (gs.eac_blocks)
        printf("; EAC channel blocks %ld: multiplier 0: %ld, base -128 (signed): %ld, base 0/255/127/-128: %ld",
               gs.eac_blocks, gs.eac_mult0, gs.eac_base_m128, gs.eac_base_extreme);
    printf("\n");
    if (cr.mismatched_texels) print_error("%s: first mismatch: %s\n", fi->name, cr.first);
    assert_int_equal(cr.mismatched_texels, 0);
    assert_int_equal(cr.bad_widening, 0);
    assert_true(cr.blocks >= (long)uploads * BLOCKS_PER_UPLOAD);
    /* every mode was exercised (the A1 format both opaque and not) */
    if (f == KILN_FORMAT_ETC2_RGB8_UNORM || f == KILN_FORMAT_ETC2_RGBA8_UNORM)
        for (int m = 0; m < 5; m++) assert_true(gs.modes[0][m] + gs.modes[1][m] > 1000);
    if (f == KILN_FORMAT_ETC2_RGB8A1_UNORM)
        for (int m = 1; m < 5; m++) assert_true(gs.modes[0][m] > 1000 && gs.modes[1][m] > 1000);
    if (fi->decoded_type == KILN_PIXEL_U8 && f != KILN_FORMAT_ETC1_UNORM) assert_true(gs.h_equal > 500);
    if (gs.eac_blocks) assert_true(gs.eac_mult0 > 1000 && gs.eac_base_extreme > 1000);
    if (fi->flags & KILN_FF_SIGNED) assert_true(gs.eac_base_m128 > 100);
}

static void gl_etc1(void **state) { run_format(state, KILN_FORMAT_ETC1_UNORM, 4); }
static void gl_etc2_rgb8(void **state) { run_format(state, KILN_FORMAT_ETC2_RGB8_UNORM, UPLOADS); }
static void gl_etc2_rgb8a1(void **state) { run_format(state, KILN_FORMAT_ETC2_RGB8A1_UNORM, UPLOADS); }
static void gl_etc2_rgba8(void **state) { run_format(state, KILN_FORMAT_ETC2_RGBA8_UNORM, UPLOADS); }
static void gl_eac_r11(void **state) { run_format(state, KILN_FORMAT_EAC_R11_UNORM, UPLOADS); }
static void gl_eac_r11s(void **state) { run_format(state, KILN_FORMAT_EAC_R11_SNORM, UPLOADS); }
static void gl_eac_rg11(void **state) { run_format(state, KILN_FORMAT_EAC_RG11_UNORM, UPLOADS); }
static void gl_eac_rg11s(void **state) { run_format(state, KILN_FORMAT_EAC_RG11_SNORM, UPLOADS); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gl_etc1),     cmocka_unit_test(gl_etc2_rgb8), cmocka_unit_test(gl_etc2_rgb8a1),
        cmocka_unit_test(gl_etc2_rgba8), cmocka_unit_test(gl_eac_r11), cmocka_unit_test(gl_eac_r11s),
        cmocka_unit_test(gl_eac_rg11), cmocka_unit_test(gl_eac_rg11s),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

#else /* no EGL/GL at build time */

static void gl_unavailable(void **state)
{
    (void)state;
    fprintf(stderr, "test_etc_gl: built without EGL/GL (pkg-config egl/gl not found): skipping\n");
    skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(gl_unavailable)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif

/* test_bc_encode.c - the BC1/BC1a/BC2/BC3/BC4/BC5 CPU encoders and the encode driver.
 *
 *  - BC4/BC5 at max are the exact optimum: checked against a brute force over all 256 x 256 endpoint
 *    byte pairs of both modes, with palettes taken from kiln's own decoder (bc.c), on random and real
 *    blocks, UNORM and SNORM.
 *  - The single-colour tables are optimal (brute force), and flat blocks encode to the best pair.
 *  - The three instruction-set variants of the BC1 encoder (AVX-512, AVX2, baseline) give the same bytes.
 *  - PSNR floors per image, format and quality (measured - 0.05 dB), decoded by kiln's decoders.
 *  - Same bytes for 1, 2 and 7 threads, and stored golden hashes per format and quality.
 *  - Edge replication for sizes that are not multiples of 4; alpha / sRGB in KTX2 and DDS; errors.
 */
#include "support.h"
#include "codec/codec.h"
#include "core/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The BC1 encoder itself, for the per-instruction-set comparison: its entry points renamed so they do
 * not clash with the library's copy. */
#define kiln__enc_bc1 kt_enc_bc1_copy
#define kiln__enc_bc2 kt_enc_bc2_copy
#define kiln__enc_bc3 kt_enc_bc3_copy
#define kiln__batch_encoder kt_batch_encoder_copy
#include "../../src/codec/bc1_enc.c"
#undef kiln__batch_encoder
#undef kiln__enc_bc1
#undef kiln__enc_bc2
#undef kiln__enc_bc3

/* ---------------------------------------------------------------- helpers */

static kiln_image load(kiln_context *ctx, const char *rel)
{
    kiln_image img;
    kiln_status st = kiln_image_load(ctx, kt_testdata(rel), &img);
    if (st != KILN_OK) {
        print_error("cannot load %s: %s\n", rel, kiln_last_error(ctx));
        fail();
    }
    assert_int_equal(img.type, KILN_PIXEL_U8);
    return img;
}

/* A w x h crop of img at (x0, y0). */
static kiln_image crop(kiln_context *ctx, const kiln_image *img, uint32_t x0, uint32_t y0, uint32_t w, uint32_t h)
{
    kiln_image c;
    assert_int_equal(kiln_image_alloc(ctx, &c, w, h, KILN_PIXEL_U8), KILN_OK);
    c.channels = img->channels;
    for (uint32_t y = 0; y < h; y++)
        memcpy((uint8_t *)c.pixels + (size_t)y * w * 4, (const uint8_t *)img->pixels + (((size_t)(y0 + y) * img->width) + x0) * 4,
               (size_t)w * 4);
    return c;
}

/* PSNR over the channels in mask between img and the decoded texture. */
static double psnr_tex(kiln_context *ctx, const kiln_image *img, const kiln_texture *tex, int mask)
{
    kiln_image dec;
    assert_int_equal(kiln_decode(ctx, tex, 0, 0, 0, &dec), KILN_OK);
    assert_int_equal(dec.width, img->width);
    assert_int_equal(dec.height, img->height);
    double se = 0, n = 0;
    const uint8_t *a = img->pixels;
    if (dec.type == KILN_PIXEL_U8) {
        const uint8_t *b = dec.pixels;
        for (size_t i = 0; i < (size_t)img->width * img->height; i++)
            for (int c = 0; c < 4; c++)
                if (mask >> c & 1) {
                    double d = (double)a[i * 4 + c] - b[i * 4 + c];
                    se += d * d;
                    n++;
                }
    } else { /* SNORM: compare in [-1, 1] against 2x - 1, scaled to 8-bit units */
        const float *b = dec.pixels;
        for (size_t i = 0; i < (size_t)img->width * img->height; i++)
            for (int c = 0; c < 4; c++)
                if (mask >> c & 1) {
                    double d = ((double)a[i * 4 + c] / 255.0 * 2.0 - 1.0 - b[i * 4 + c]) * 127.5;
                    se += d * d;
                    n++;
                }
    }
    kiln_image_free(&dec);
    return se > 0 ? 10.0 * log10(255.0 * 255.0 / (se / n)) : INFINITY;
}

static void encode_ok(kiln_context *ctx, const kiln_image *img, kiln_format f, kiln_quality q, kiln_texture *tex)
{
    kiln_encode_params p;
    kiln_encode_params_init(&p, f, q);
    kiln_status st = kiln_encode(ctx, img, &p, tex);
    if (st != KILN_OK) {
        print_error("kiln_encode: %s\n", kiln_last_error(ctx));
        fail();
    }
}

/* ---------------------------------------------------------------- BC4 brute force */

/* pal[(a0 << 8 | a1) * 8 + i]: palette entry i of raw endpoint bytes (a0, a1), from kiln's decoder. */
static int16_t *bc4_palettes(int is_signed)
{
    int16_t *pal = malloc(65536 * 8 * sizeof *pal);
    assert_non_null(pal);
    for (int a0 = 0; a0 < 256; a0++)
        for (int a1 = 0; a1 < 256; a1++) {
            uint8_t blk[8] = {(uint8_t)a0, (uint8_t)a1, 0, 0, 0, 0, 0, 0};
            uint64_t bits = 0;
            for (uint64_t t = 0; t < 8; t++) bits |= t << (3 * t); /* texel t gets index t */
            for (int k = 0; k < 6; k++) blk[2 + k] = (uint8_t)(bits >> (8 * k));
            int16_t *p = pal + (a0 << 8 | a1) * 8;
            if (is_signed) {
                int8_t out[16];
                kiln__dec_bc4_channel_s(blk, out);
                for (int i = 0; i < 8; i++) p[i] = out[i];
            } else {
                uint8_t out[16];
                kiln__dec_bc4_channel_u(blk, out);
                for (int i = 0; i < 8; i++) p[i] = out[i];
            }
        }
    return pal;
}

/* The smallest squared error over every endpoint pair (both modes: the pair's order picks it). */
static uint32_t bc4_brute(const int16_t *pal, const int v[16])
{
    int val[16], cnt[16], n = 0;
    for (int t = 0; t < 16; t++) {
        int k = 0;
        while (k < n && val[k] != v[t]) k++;
        if (k == n) val[n] = v[t], cnt[n++] = 0;
        cnt[k]++;
    }
    uint32_t best = UINT32_MAX;
    for (int pr = 0; pr < 65536; pr++) {
        const int16_t *p = pal + pr * 8;
        uint32_t e = 0;
        for (int k = 0; k < n && e < best; k++) {
            int m = 1 << 30;
            for (int i = 0; i < 8; i++) {
                int d = (val[k] - p[i]) * (val[k] - p[i]);
                m = d < m ? d : m;
            }
            e += (uint32_t)(m * cnt[k]);
        }
        if (e < best) best = e;
    }
    return best;
}

/* Squared error of an encoded BC4 block under kiln's decoder. */
static uint32_t bc4_block_error(const uint8_t blk[8], const int v[16], int is_signed)
{
    uint32_t e = 0;
    if (is_signed) {
        int8_t out[16];
        kiln__dec_bc4_channel_s(blk, out);
        for (int t = 0; t < 16; t++) e += (uint32_t)((out[t] - v[t]) * (out[t] - v[t]));
    } else {
        uint8_t out[16];
        kiln__dec_bc4_channel_u(blk, out);
        for (int t = 0; t < 16; t++) e += (uint32_t)((out[t] - v[t]) * (out[t] - v[t]));
    }
    return e;
}

/* Blocks for the exactness test: random kinds, then real data (grey maps and normal-map channels). */
static int bc4_test_blocks(kiln_context *ctx, int is_signed, int (*blocks)[16], int max)
{
    kt_rng r;
    kt_rng_seed(&r, is_signed ? 77 : 42);
    int n = 0;
    const int lo = is_signed ? -127 : 0, span = is_signed ? 255 : 256;
    for (int k = 0; k < 60 && n < max; k++, n++) {
        int kind = k % 6, base = lo + (int)(kt_rng_u32(&r) % (uint32_t)span);
        for (int t = 0; t < 16; t++) {
            int x;
            switch (kind) {
            case 0: x = lo + (int)(kt_rng_u32(&r) % (uint32_t)span); break;            /* noise */
            case 1: x = base + (int)(kt_rng_u32(&r) % 9) - 4; break;                    /* near flat */
            case 2: x = base + t * (int)(kt_rng_u32(&r) % 4); break;                    /* ramp */
            case 3: x = (kt_rng_u32(&r) & 1) ? lo : lo + span - 1; break;               /* extremes */
            case 4: x = (t & 1) ? lo + (int)(kt_rng_u32(&r) % 8) : base; break;         /* near min + mid */
            default: x = (int)(kt_rng_u32(&r) % 4) == 0 ? lo + span - 1 : base + (int)(kt_rng_u32(&r) % 30); break;
            }
            blocks[n][t] = x < lo ? lo : x > lo + span - 1 ? lo + span - 1 : x;
        }
    }
    static const char *files[] = {"grey/stk_displace_512_grey.png", "grey/stk_generic_rock_a_gloss_R_512_grey.png",
                                  "normal/stk_generic_rock_a_Normal_512_rgba.png"};
    for (int f = 0; f < 3; f++) {
        kiln_image img = load(ctx, files[f]);
        kt_rng_seed(&r, (uint64_t)(f + 1) * 1000 + (uint64_t)is_signed);
        for (int k = 0; k < 40 && n < max; k++, n++) {
            uint32_t bx = kt_rng_u32(&r) % (img.width / 4), by = kt_rng_u32(&r) % (img.height / 4);
            int ch = f == 2 ? (int)(k & 1) : 0;
            for (int t = 0; t < 16; t++) {
                int u = ((const uint8_t *)img.pixels)[(((size_t)by * 4 + (size_t)(t >> 2)) * img.width + bx * 4 + (size_t)(t & 3)) * 4 + (size_t)ch];
                blocks[n][t] = is_signed ? (u * 254 + 127) / 255 - 127 : u; /* SNORM: 0..255 onto -127..127 */
            }
        }
        kiln_image_free(&img);
    }
    return n;
}

static void bc4_exact(int is_signed)
{
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    assert_non_null(ctx);
    int16_t *pal = bc4_palettes(is_signed);
    static int blocks[200][16];
    int n = bc4_test_blocks(ctx, is_signed, blocks, 200);
    assert_true(n >= 150);
    for (int b = 0; b < n; b++) {
        uint8_t out[8];
        uint32_t claimed = kiln__enc_bc4_channel(blocks[b], is_signed, KILN_QUALITY_MAX, out);
        uint32_t got = bc4_block_error(out, blocks[b], is_signed);
        uint32_t best = bc4_brute(pal, blocks[b]);
        if (got != best || claimed != got) {
            print_error("block %d (%s): max gives %u (claims %u), brute force %u\n", b, is_signed ? "snorm" : "unorm", got,
                        claimed, best);
            fail();
        }
        /* the other qualities never beat the optimum and report their error honestly */
        for (int q = KILN_QUALITY_FAST; q < KILN_QUALITY_MAX; q++) {
            uint32_t c = kiln__enc_bc4_channel(blocks[b], is_signed, (kiln_quality)q, out);
            assert_int_equal(c, bc4_block_error(out, blocks[b], is_signed));
            assert_true(c >= best);
        }
    }
    free(pal);
    kiln_context_free(ctx);
}

static void bc4_max_is_optimal_unorm(void **state)
{
    (void)state;
    bc4_exact(0);
}

static void bc4_max_is_optimal_snorm(void **state)
{
    (void)state;
    bc4_exact(1);
}

/* BC5 is two BC4 channels; BC3's alpha is BC4's. */
static void bc5_bc3_use_bc4(void **state)
{
    (void)state;
    kt_rng r;
    kt_rng_seed(&r, 5);
    for (int it = 0; it < 50; it++) {
        kiln_block b;
        kt_rng_bytes(&r, b.rgba8, sizeof b.rgba8);
        for (int i = 0; i < 64; i++) {
            b.rgba16[i] = (uint16_t)(b.rgba8[i] * 257);
            b.f[i] = (float)b.rgba8[i] / 255.0f * 2.0f - 1.0f; /* as the driver fills SNORM targets */
        }
        for (int q = 0; q < 4; q++) {
            kiln_encode_params p;
            kiln_encode_params_init(&p, KILN_FORMAT_BC5_UNORM, (kiln_quality)q);
            uint8_t bc5[16], ch[8];
            kiln__enc_bc5(&b, bc5, &p);
            int v[16];
            for (int c = 0; c < 2; c++) {
                for (int t = 0; t < 16; t++) v[t] = b.rgba8[t * 4 + c];
                kiln__enc_bc4_channel(v, 0, (kiln_quality)q, ch);
                assert_memory_equal(bc5 + 8 * c, ch, 8);
            }
            p.format = KILN_FORMAT_BC5_SNORM;
            kiln__enc_bc5(&b, bc5, &p);
            for (int c = 0; c < 2; c++) {
                for (int t = 0; t < 16; t++) v[t] = (int)lrintf(b.f[t * 4 + c] * 127.0f);
                kiln__enc_bc4_channel(v, 1, (kiln_quality)q, ch);
                assert_memory_equal(bc5 + 8 * c, ch, 8);
            }
            p.format = KILN_FORMAT_BC3_UNORM;
            uint8_t bc3[16];
            kiln__enc_bc3(&b, bc3, &p);
            for (int t = 0; t < 16; t++) v[t] = b.rgba8[t * 4 + 3];
            kiln__enc_bc4_channel(v, 0, (kiln_quality)q, ch);
            assert_memory_equal(bc3, ch, 8);
        }
    }
}

/* --dither on BC4/BC5: the same endpoints, indices re-picked with error diffusion, so the block's
 * decoded mean follows the source's mean more closely on smooth gradients (less banding). */
static void bc4_dither(void **state)
{
    (void)state;
    kt_rng r;
    kt_rng_seed(&r, 44);
    double mean_err[2] = {0, 0};
    int changed = 0;
    for (int it = 0; it < 400; it++) {
        kiln_block b;
        memset(&b, 0, sizeof b);
        int base = (int)(kt_rng_u32(&r) % 160), gx = (int)(kt_rng_u32(&r) % 9), gy = (int)(kt_rng_u32(&r) % 9);
        for (int t = 0; t < 16; t++)
            for (int c = 0; c < 4; c++) b.rgba8[t * 4 + c] = (uint8_t)(base + gx * (t & 3) + gy * (t >> 2) + (c == 1 ? 7 : 0));
        for (int d = 0; d < 2; d++) {
            kiln_encode_params p;
            kiln_encode_params_init(&p, KILN_FORMAT_BC5_UNORM, KILN_QUALITY_FAST);
            p.dither = d;
            uint8_t out[16], plain[16];
            kiln__enc_bc5(&b, out, &p);
            p.dither = 0;
            kiln__enc_bc5(&b, plain, &p);
            assert_memory_equal(out, plain, 2);      /* endpoints kept */
            assert_memory_equal(out + 8, plain + 8, 2);
            if (d && memcmp(out, plain, 16)) changed++;
            uint8_t px[16 * 4]; /* BC5 UNORM decodes to RGBA8 */
            kiln__block_decoder(KILN_FORMAT_BC5_UNORM)(out, px);
            for (int c = 0; c < 2; c++) {
                double src = 0, dec = 0;
                for (int t = 0; t < 16; t++) {
                    src += b.rgba8[t * 4 + c];
                    dec += px[t * 4 + c];
                }
                mean_err[d] += fabs(src - dec) / 16.0;
            }
        }
    }
    print_message("bc4 dither: mean |block mean error| %.4f plain, %.4f dithered; %d of 400 blocks changed\n",
                  mean_err[0] / 800, mean_err[1] / 800, changed);
    assert_true(changed > 100);
    assert_true(mean_err[1] < 0.6 * mean_err[0]);
}

/* ---------------------------------------------------------------- BC1 */

static int expand_bits(int q, int bits) { return bits == 5 ? (q << 3 | q >> 2) : (q << 2 | q >> 4); }

/* The single-colour tables hold optimal pairs (checked by brute force over all pairs). */
static void bc1_tables_are_optimal(void **state)
{
    (void)state;
    for (int bits = 5; bits <= 6; bits++) {
        const uint8_t(*m4)[3] = bits == 5 ? k_bc1_match4_5 : k_bc1_match4_6;
        const uint8_t(*m3)[3] = bits == 5 ? k_bc1_match3_5 : k_bc1_match3_6;
        const uint8_t(*nr)[2] = bits == 5 ? k_bc1_near_5 : k_bc1_near_6;
        const int n = 1 << bits;
        for (int v = 0; v < 256; v++) {
            int b4 = 1 << 20, b3 = 1 << 20, bn = 1 << 20;
            for (int a = 0; a < n; a++) {
                int ea = expand_bits(a, bits);
                bn = abs(ea - v) < bn ? abs(ea - v) : bn;
                for (int b = 0; b < n; b++) {
                    int eb = expand_bits(b, bits);
                    int d4 = abs((2 * ea + eb) / 3 - v), d3 = abs((ea + eb) / 2 - v);
                    b4 = d4 < b4 ? d4 : b4;
                    b3 = d3 < b3 ? d3 : b3;
                }
            }
            int e0 = expand_bits(m4[v][0], bits), e1 = expand_bits(m4[v][1], bits);
            assert_int_equal(abs((2 * e0 + e1) / 3 - v), b4);
            assert_int_equal(m4[v][2], b4);
            e0 = expand_bits(m3[v][0], bits);
            e1 = expand_bits(m3[v][1], bits);
            assert_int_equal(abs((e0 + e1) / 2 - v), b3);
            assert_int_equal(m3[v][2], b3);
            assert_int_equal(abs(expand_bits(nr[v][0], bits) - v), bn);
            assert_int_equal(nr[v][1], bn);
        }
    }
}

static uint32_t bc1_block_error(const uint8_t blk[8], const kiln_block *b, int alpha)
{
    uint8_t out[64];
    if (alpha) kiln__dec_bc1_rgba(blk, out);
    else kiln__dec_bc1_rgb(blk, out);
    uint32_t e = 0;
    for (int t = 0; t < 16; t++)
        for (int c = 0; c < 3; c++) e += (uint32_t)((out[t * 4 + c] - b->rgba8[t * 4 + c]) * (out[t * 4 + c] - b->rgba8[t * 4 + c]));
    return e;
}

/* bc1_black: dark texels may take the three-colour mode's black. The decoded error never exceeds the
 * plain encoding's, dark blocks do use it, and punch-through BC1 ignores the option. */
static void bc1_black(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    kiln_image img = load(ctx, "ldr/Sara_Head_Diff_256_rgba.png");
    kiln_image c = crop(ctx, &img, 0, 0, 128, 128);
    int used = 0, better = 0;
    for (uint32_t by = 0; by < 32; by++)
        for (uint32_t bx = 0; bx < 32; bx++) {
            kiln_block b;
            memset(&b, 0, sizeof b);
            const uint8_t *px = c.pixels;
            for (int t = 0; t < 16; t++)
                for (int ch = 0; ch < 4; ch++) {
                    uint8_t v = px[(((size_t)by * 4 + (t >> 2)) * c.width + bx * 4 + (t & 3)) * 4 + ch];
                    b.rgba8[t * 4 + ch] = ch == 3 ? 255 : v;
                    b.rgba16[t * 4 + ch] = (uint16_t)(b.rgba8[t * 4 + ch] * 257);
                    b.f[t * 4 + ch] = b.rgba8[t * 4 + ch] / 255.0f;
                }
            for (int q = KILN_QUALITY_NORMAL; q <= KILN_QUALITY_MAX; q++) {
                kiln_encode_params p;
                kiln_encode_params_init(&p, KILN_FORMAT_BC1_RGB_UNORM, (kiln_quality)q);
                uint8_t plain[8], black[8];
                kiln__enc_bc1(&b, plain, &p);
                p.bc1_black = 1;
                kiln__enc_bc1(&b, black, &p);
                uint32_t e0 = bc1_block_error(plain, &b, 0), e1 = bc1_block_error(black, &b, 0);
                assert_true(e1 <= e0);
                better += e1 < e0;
                uint16_t c0 = (uint16_t)(black[0] | black[1] << 8), c1 = (uint16_t)(black[2] | black[3] << 8);
                uint32_t idx = (uint32_t)black[4] | (uint32_t)black[5] << 8 | (uint32_t)black[6] << 16 | (uint32_t)black[7] << 24;
                if (c0 <= c1)
                    for (int t = 0; t < 16; t++) used += (idx >> (2 * t) & 3u) == 3u;
                /* punch-through BC1 never takes it: the texels would turn transparent */
                kiln_encode_params pa;
                kiln_encode_params_init(&pa, KILN_FORMAT_BC1_RGBA_UNORM, (kiln_quality)q);
                uint8_t a0[8], a1[8];
                kiln__enc_bc1(&b, a0, &pa);
                pa.bc1_black = 1;
                kiln__enc_bc1(&b, a1, &pa);
                assert_memory_equal(a0, a1, 8);
            }
        }
    print_message("bc1_black: %d block encodings improved, %d texels at black\n", better, used);
    assert_true(better > 20);
    assert_true(used > 100);
    kiln_image_free(&c);
    kiln_image_free(&img);
    kiln_context_free(ctx);
}

static void fill_block(kiln_block *b)
{
    for (int i = 0; i < 64; i++) {
        b->rgba16[i] = (uint16_t)(b->rgba8[i] * 257);
        b->f[i] = (float)b->rgba8[i] / 255.0f;
    }
}

/* A flat block: every quality reaches the exact optimum over every 565 pair, mode and index (computed
 * here per channel by brute force: one index serves all texels, and the channels are independent). */
static void bc1_flat_blocks_are_exact(void **state)
{
    (void)state;
    kt_rng r;
    kt_rng_seed(&r, 9);
    for (int it = 0; it < 300; it++) {
        uint8_t col[3];
        kt_rng_bytes(&r, col, 3);
        kiln_block b;
        for (int t = 0; t < 16; t++) {
            memcpy(b.rgba8 + t * 4, col, 3);
            b.rgba8[t * 4 + 3] = 255;
        }
        fill_block(&b);
        /* best over: an endpoint itself, the four-colour 1/3 point, the three-colour midpoint */
        uint32_t opt = UINT32_MAX;
        for (int mode = 0; mode < 3; mode++) {
            uint32_t tot = 0;
            for (int c = 0; c < 3; c++) {
                int bits = c == 1 ? 6 : 5, best = 1 << 20;
                for (int a = 0; a < (1 << bits); a++)
                    for (int bb = 0; bb < (mode == 0 ? 1 : (1 << bits)); bb++) {
                        int ea = expand_bits(a, bits), eb = expand_bits(bb, bits);
                        int x = mode == 0 ? ea : mode == 1 ? (2 * ea + eb) / 3 : (ea + eb) / 2;
                        int d = (x - col[c]) * (x - col[c]);
                        best = d < best ? d : best;
                    }
                tot += (uint32_t)best;
            }
            opt = 16 * tot < opt ? 16 * tot : opt; /* 16 texels */
        }
        for (int q = 0; q < 4; q++) {
            kiln_encode_params p;
            kiln_encode_params_init(&p, KILN_FORMAT_BC1_RGB_UNORM, (kiln_quality)q);
            uint8_t out[8];
            kiln__enc_bc1(&b, out, &p);
            assert_int_equal(bc1_block_error(out, &b, 0), opt);
        }
    }
}

/* Punch-through alpha: texels below the threshold decode transparent, the others opaque. */
static void bc1a_punch_through(void **state)
{
    (void)state;
    kt_rng r;
    kt_rng_seed(&r, 11);
    for (int it = 0; it < 200; it++) {
        kiln_block b;
        kt_rng_bytes(&r, b.rgba8, sizeof b.rgba8);
        if (it % 4 == 0)
            for (int t = 0; t < 16; t++) b.rgba8[t * 4 + 3] = 255; /* some fully opaque blocks */
        if (it % 4 == 1)
            for (int t = 0; t < 16; t++) b.rgba8[t * 4 + 3] = 0; /* and fully transparent ones */
        fill_block(&b);
        for (int q = 0; q < 4; q++) {
            kiln_encode_params p;
            kiln_encode_params_init(&p, KILN_FORMAT_BC1_RGBA_UNORM, (kiln_quality)q);
            p.alpha_threshold = (uint8_t)(it % 3 == 0 ? 128 : 1 + it % 250);
            uint8_t out[8], dec[64];
            kiln__enc_bc1(&b, out, &p);
            kiln__dec_bc1_rgba(out, dec);
            for (int t = 0; t < 16; t++) assert_int_equal(dec[t * 4 + 3], b.rgba8[t * 4 + 3] < p.alpha_threshold ? 0 : 255);
            /* as opaque BC1 (same blocks), index 3 is never used in three-colour mode */
            p.format = KILN_FORMAT_BC1_RGB_UNORM;
            kiln__enc_bc1(&b, out, &p);
            uint16_t c0 = (uint16_t)(out[0] | out[1] << 8), c1 = (uint16_t)(out[2] | out[3] << 8);
            uint32_t idx = (uint32_t)out[4] | (uint32_t)out[5] << 8 | (uint32_t)out[6] << 16 | (uint32_t)out[7] << 24;
            if (c0 <= c1)
                for (int t = 0; t < 16; t++) assert_true((idx >> (2 * t) & 3u) != 3u);
        }
    }
}

/* Alpha cut-out: the colour of alpha-0 texels is ignored, so the other texels come out at least as well
 * as when the wild colours under alpha 0 pull the endpoints around. */
static uint32_t counted_error(const kiln_block *b, const uint8_t blk[8])
{
    uint8_t dec[64];
    kiln__dec_bc1_rgb(blk, dec);
    uint32_t e = 0;
    for (int t = 0; t < 16; t++)
        if (b->rgba8[t * 4 + 3])
            for (int c = 0; c < 3; c++) e += (uint32_t)((dec[t * 4 + c] - b->rgba8[t * 4 + c]) * (dec[t * 4 + c] - b->rgba8[t * 4 + c]));
    return e;
}

static void bc1_cutout(void **state)
{
    (void)state;
    kt_rng r;
    kt_rng_seed(&r, 12);
    uint64_t with = 0, without = 0;
    for (int it = 0; it < 100; it++) {
        kiln_block b;
        kt_rng_bytes(&r, b.rgba8, sizeof b.rgba8);
        /* alpha 0 on every third texel (wild colours); the rest is a smooth ramp */
        for (int t = 0; t < 16; t++) {
            b.rgba8[t * 4 + 3] = (t % 3 == 0) ? 0 : 255;
            if (t % 3)
                for (int c = 0; c < 3; c++) b.rgba8[t * 4 + c] = (uint8_t)(40 + t * 5 + c * 20 + it % 7);
        }
        fill_block(&b);
        for (int q = 0; q < 4; q++) {
            kiln_encode_params p;
            kiln_encode_params_init(&p, KILN_FORMAT_BC1_RGB_UNORM, (kiln_quality)q);
            uint8_t a[8], n[8];
            p.alpha_cutout = 1;
            kiln__enc_bc1(&b, a, &p);
            p.alpha_cutout = 0;
            kiln__enc_bc1(&b, n, &p);
            uint32_t ea = counted_error(&b, a), en = counted_error(&b, n);
            if (q >= KILN_QUALITY_HIGH) assert_true(ea <= en);
            with += ea;
            without += en;
        }
    }
    assert_true(with * 4 < without); /* and much better overall */
}

/* The AVX-512, AVX2 and baseline builds of the BC1 encoder give identical results. */
static void bc1_instruction_sets_agree(void **state)
{
    (void)state;
#ifdef KILN_BC1_MULTI
    int have512 = __builtin_cpu_supports("avx512f"), have2 = __builtin_cpu_supports("avx2");
    if (!have2) skip();
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    kiln_image img = load(ctx, "ldr/stk_generic_rock_a_512.png");
    kiln_image img2 = load(ctx, "ldr/Sara_Head_Diff_256_rgba.png");
    kt_rng r;
    kt_rng_seed(&r, 3);
    for (int it = 0; it < 240; it++) {
        const kiln_image *src = it % 2 ? &img2 : &img;
        uint32_t bx = kt_rng_u32(&r) % (src->width / 4), by = kt_rng_u32(&r) % (src->height / 4);
        kiln_block b;
        for (int t = 0; t < 16; t++)
            memcpy(b.rgba8 + t * 4, (const uint8_t *)src->pixels + (((size_t)by * 4 + (size_t)(t >> 2)) * src->width + bx * 4 + (size_t)(t & 3)) * 4, 4);
        if (it % 5 == 0) kt_rng_bytes(&r, b.rgba8, sizeof b.rgba8);
        fill_block(&b);
        for (int q = 0; q < 4; q++)
            for (int kind = 0; kind < 3; kind++) {
                kiln_encode_params p;
                kiln_encode_params_init(&p, kind == 1 ? KILN_FORMAT_BC1_RGBA_UNORM : KILN_FORMAT_BC1_RGB_UNORM, (kiln_quality)q);
                p.perceptual = it % 3 == 0;
                bc1_in in0, in1, in2;
                bc1_sol s0, s1, s2;
                encode_generic(&b, &p, kind, &in0, &s0);
                encode_avx2(&b, &p, kind, &in1, &s1);
                assert_int_equal(s0.c0, s1.c0);
                assert_int_equal(s0.c1, s1.c1);
                assert_int_equal(s0.idx, s1.idx);
                assert_true(s0.err == s1.err);
                if (have512) {
                    encode_avx512(&b, &p, kind, &in2, &s2);
                    assert_int_equal(s0.c0, s2.c0);
                    assert_int_equal(s0.c1, s2.c1);
                    assert_int_equal(s0.idx, s2.idx);
                    assert_true(s0.err == s2.err);
                }
            }
    }
    kiln_image_free(&img);
    kiln_image_free(&img2);
    kiln_context_free(ctx);
#else
    skip();
#endif
}

/* The fast batch (16 blocks, one per lane) gives the same bytes as one block at a time, whatever the
 * grouping, and its three instruction-set builds agree. */
static void bc1_fast_batch(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    kiln_image img = load(ctx, "ldr/Sara_Head_Diff_256_rgba.png");
    kt_rng r;
    kt_rng_seed(&r, 21);
    static const kiln_format formats[] = {KILN_FORMAT_BC1_RGB_UNORM, KILN_FORMAT_BC1_RGBA_UNORM, KILN_FORMAT_BC3_UNORM};
    for (int it = 0; it < 40; it++) {
        kiln_block b[16];
        for (int i = 0; i < 16; i++) {
            uint32_t bx = kt_rng_u32(&r) % 64, by = kt_rng_u32(&r) % 64;
            for (int t = 0; t < 16; t++)
                memcpy(b[i].rgba8 + t * 4, (const uint8_t *)img.pixels + (((size_t)by * 4 + (size_t)(t >> 2)) * 256 + bx * 4 + (size_t)(t & 3)) * 4, 4);
            if (i == 3) memset(b[i].rgba8, 200, 64);                              /* flat */
            if (i == 5) kt_rng_bytes(&r, b[i].rgba8, 64);                         /* noise */
            if (i == 7) for (int t = 0; t < 64; t++) b[i].rgba8[t] = (uint8_t)(100 + (t & 1)); /* near flat */
            fill_block(&b[i]);
        }
        for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
            kiln_encode_params p;
            kiln_encode_params_init(&p, formats[f], KILN_QUALITY_FAST);
            p.perceptual = it % 4 == 1;
            p.alpha_cutout = it % 5 == 2;
            const size_t bytes = kiln_format_get_info(formats[f])->block_bytes;
            kiln_batch_encode_fn batch = kiln__batch_encoder(formats[f], KILN_QUALITY_FAST);
            kiln_block_encode_fn one = kiln__block_encoder(formats[f]);
            assert_non_null(batch);
            uint8_t all[16 * 16], single[16 * 16], split[16 * 16];
            batch(b, 16, all, &p);
            for (int i = 0; i < 16; i++) one(&b[i], single + i * bytes, &p);
            batch(b, 7, split, &p);
            batch(b + 7, 9, split + 7 * bytes, &p);
            assert_memory_equal(all, single, 16 * bytes);
            assert_memory_equal(all, split, 16 * bytes);
        }
#ifdef KILN_BC1_MULTI
        /* the lanes of the three builds */
        bc1_batch bt;
        bt.four_any = it & 1;
        for (int ch = 0; ch < 3; ch++) bt.cw[ch] = bt.sw[ch] = 1.0f;
        for (int l = 0; l < 16; l++) bt.blk[l] = &b[l];
        bc1_batch_out o0, o1, o2;
        batch_generic(&bt, &o0);
        /* the transposed texels are the blocks' */
        for (int l = 0; l < 16; l++)
            for (int t = 0; t < 16; t++)
                for (int ch = 0; ch < 3; ch++) assert_true(bt.x[ch][t][l] == (float)b[l].rgba8[t * 4 + ch]);
        if (__builtin_cpu_supports("avx2")) {
            batch_avx2(&bt, &o1);
            assert_memory_equal(&o0, &o1, sizeof o0);
        }
        if (__builtin_cpu_supports("avx512f")) {
            batch_avx512(&bt, &o2);
            assert_memory_equal(&o0, &o2, sizeof o0);
        }
#endif
    }
    kiln_image_free(&img);
    kiln_context_free(ctx);
}

/* ---------------------------------------------------------------- images: floors, determinism */

typedef struct floor_row {
    const char *image;
    kiln_format format;
    kiln_quality quality;
    int mask;
    double floor_db; /* measured - 0.05 dB */
} floor_row;

/* Measured on 2026-11-22 with this encoder (tests print the values); each floor is 0.05 dB below. */
static const floor_row k_floors[] = {
    {"ldr/stk_generic_rock_a_512.png", KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_FAST, 7, 34.513 - 0.05},
    {"ldr/stk_generic_rock_a_512.png", KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_NORMAL, 7, 34.548 - 0.05},
    {"ldr/stk_generic_rock_a_512.png", KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_HIGH, 7, 34.945 - 0.05},
    {"ldr/Sara_Head_Diff_256_rgba.png", KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_FAST, 7, 44.860 - 0.05},
    {"ldr/Sara_Head_Diff_256_rgba.png", KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_MAX, 7, 45.763 - 0.05},
    {"ldr/desktopbase_softwaves_crop_1000x600.png", KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_FAST, 7, 47.255 - 0.05},
    {"ldr/desktopbase_softwaves_crop_1000x600.png", KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_HIGH, 7, 50.945 - 0.05},
    {"ldr/stktex_directionSign_a_256_rgba.png", KILN_FORMAT_BC1_RGBA_UNORM, KILN_QUALITY_HIGH, 7, 38.249 - 0.05},
    {"ldr/Sara_Head_Diff_256_rgba.png", KILN_FORMAT_BC3_UNORM, KILN_QUALITY_NORMAL, 15, 44.944 - 0.05},
    {"ldr/city_fern_512_rgba.png", KILN_FORMAT_BC3_UNORM, KILN_QUALITY_HIGH, 15, 41.920 - 0.05},
    {"grey/stk_generic_rock_a_gloss_R_512_grey.png", KILN_FORMAT_BC4_UNORM, KILN_QUALITY_HIGH, 1, 44.570 - 0.05},
    {"grey/stk_displace_512_grey.png", KILN_FORMAT_BC4_UNORM, KILN_QUALITY_FAST, 1, 65.172 - 0.05},
    {"normal/stk_generic_rock_a_Normal_512_rgba.png", KILN_FORMAT_BC5_UNORM, KILN_QUALITY_HIGH, 3, 38.724 - 0.05},
    {"normal/stk_generic_rock_a_Normal_512_rgba.png", KILN_FORMAT_BC5_SNORM, KILN_QUALITY_NORMAL, 3, 38.173 - 0.05},
};

static void psnr_floors(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(0, KILN_BACKEND_CPU);
    assert_non_null(ctx);
    int failed = 0;
    for (size_t i = 0; i < sizeof k_floors / sizeof k_floors[0]; i++) {
        const floor_row *row = &k_floors[i];
        kiln_image img = load(ctx, row->image);
        kiln_texture tex;
        encode_ok(ctx, &img, row->format, row->quality, &tex);
        double db = psnr_tex(ctx, &img, &tex, row->mask);
        print_message("  %-48s %-10s q%d  %.3f dB (floor %.3f)\n", row->image, kiln_format_get_info(row->format)->name,
                      (int)row->quality, db, row->floor_db);
        if (!(db >= row->floor_db)) failed = 1;
        kiln_texture_free(&tex);
        kiln_image_free(&img);
    }
    kiln_context_free(ctx);
    assert_false(failed);
}

/* Same bytes for 1, 2 and 7 threads, and the stored golden hash (FNV-1a 64) of each format and quality.
 * The encoders give the same bytes on every x86 instruction set (bc1_instruction_sets_agree), so these
 * hold on any machine; a change of algorithm has to update them on purpose (the test prints the new
 * ones). */
typedef struct golden_row {
    kiln_format format;
    kiln_quality quality;
    uint64_t hash;
} golden_row;

static const golden_row k_golden[] = {
    {KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_FAST, 0xcac8ff0e4790726aull},
    {KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_NORMAL, 0x4922cd0625b4ee63ull},
    {KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_HIGH, 0x44ebb0f667865848ull},
    {KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_MAX, 0x2e371acb76575fabull},
    {KILN_FORMAT_BC1_RGBA_UNORM, KILN_QUALITY_HIGH, 0x43206e27aa0bd42cull},
    {KILN_FORMAT_BC2_UNORM, KILN_QUALITY_NORMAL, 0x9adbdf9b9e97cc94ull},
    {KILN_FORMAT_BC3_UNORM, KILN_QUALITY_FAST, 0x936a07e7585b7572ull},
    {KILN_FORMAT_BC3_UNORM, KILN_QUALITY_MAX, 0xf8d9a2e22a5a8559ull},
    {KILN_FORMAT_BC4_UNORM, KILN_QUALITY_FAST, 0x92a48c345d3a0c4full},
    {KILN_FORMAT_BC4_UNORM, KILN_QUALITY_NORMAL, 0x53d60931884d2955ull},
    {KILN_FORMAT_BC4_UNORM, KILN_QUALITY_HIGH, 0xc571f3d5fbaf99e4ull},
    {KILN_FORMAT_BC4_UNORM, KILN_QUALITY_MAX, 0xd1e9e02ada244a3dull},
    {KILN_FORMAT_BC4_SNORM, KILN_QUALITY_MAX, 0xad8c3970354f61f9ull},
    {KILN_FORMAT_BC5_UNORM, KILN_QUALITY_HIGH, 0x58e324c79530ca2dull},
    {KILN_FORMAT_BC5_SNORM, KILN_QUALITY_FAST, 0xbae6258c0a3d29e6ull},
};

static void determinism_and_golden(void **state)
{
    (void)state;
    kiln_context *c1 = kt_context(1, KILN_BACKEND_CPU), *c2 = kt_context(2, KILN_BACKEND_CPU),
                 *c7 = kt_context(7, KILN_BACKEND_CPU);
    assert_non_null(c1);
    assert_non_null(c2);
    assert_non_null(c7);
    /* colour and alpha formats: the face, hair and an alpha edge of a character texture; BC4: a crop
     * of a gloss map; BC5: a crop of a normal map */
    static const char *files[3] = {"ldr/Sara_Head_Diff_256_rgba.png", "grey/stk_generic_rock_a_gloss_R_512_grey.png",
                                   "normal/stk_generic_rock_a_Normal_512_rgba.png"};
    kiln_image img[3];
    for (int k = 0; k < 3; k++) {
        kiln_image full = load(c1, files[k]);
        img[k] = crop(c1, &full, 64, 96, 96, 64);
        kiln_image_free(&full);
    }
    int mismatch = 0;
    for (size_t i = 0; i < sizeof k_golden / sizeof k_golden[0]; i++) {
        const kiln_format f = k_golden[i].format;
        const kiln_image *src = &img[f == KILN_FORMAT_BC4_UNORM || f == KILN_FORMAT_BC4_SNORM   ? 1
                                     : f == KILN_FORMAT_BC5_UNORM || f == KILN_FORMAT_BC5_SNORM ? 2
                                                                                                : 0];
        kiln_texture t1, t2, t7;
        encode_ok(c1, src, f, k_golden[i].quality, &t1);
        encode_ok(c2, src, f, k_golden[i].quality, &t2);
        encode_ok(c7, src, f, k_golden[i].quality, &t7);
        uint64_t h1 = kt_hash(t1.data, t1.data_size), h2 = kt_hash(t2.data, t2.data_size), h7 = kt_hash(t7.data, t7.data_size);
        assert_true(h1 == h2);
        assert_true(h1 == h7);
        if (h1 != k_golden[i].hash) {
            print_error("%s q%d: hash 0x%016llx, golden 0x%016llx (output bytes changed; if on purpose, update k_golden)\n",
                        kiln_format_get_info(f)->name, (int)k_golden[i].quality, (unsigned long long)h1,
                        (unsigned long long)k_golden[i].hash);
            mismatch = 1;
        }
        kiln_texture_free(&t1);
        kiln_texture_free(&t2);
        kiln_texture_free(&t7);
    }
    for (int k = 0; k < 3; k++) kiln_image_free(&img[k]);
    kiln_context_free(c1);
    kiln_context_free(c2);
    kiln_context_free(c7);
    assert_false(mismatch);
}

/* ---------------------------------------------------------------- sizes, driver, containers */

/* The w x h image padded to whole blocks by repeating its last column and row. */
static kiln_image pad(kiln_context *ctx, const kiln_image *img)
{
    uint32_t pw = (img->width + 3) & ~3u, ph = (img->height + 3) & ~3u;
    kiln_image p;
    assert_int_equal(kiln_image_alloc(ctx, &p, pw, ph, KILN_PIXEL_U8), KILN_OK);
    for (uint32_t y = 0; y < ph; y++)
        for (uint32_t x = 0; x < pw; x++) {
            uint32_t sx = x < img->width ? x : img->width - 1, sy = y < img->height ? y : img->height - 1;
            memcpy((uint8_t *)p.pixels + ((size_t)y * pw + x) * 4, (const uint8_t *)img->pixels + ((size_t)sy * img->width + sx) * 4, 4);
        }
    return p;
}

static void odd_sizes(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(0, KILN_BACKEND_CPU);
    kiln_image src = load(ctx, "ldr/city_fern_512_rgba.png");
    static const uint32_t sizes[][2] = {{1, 1}, {3, 5}, {5, 3}, {7, 9}, {13, 2}};
    static const kiln_format formats[] = {KILN_FORMAT_BC1_RGB_UNORM, KILN_FORMAT_BC1_RGBA_UNORM, KILN_FORMAT_BC3_UNORM,
                                          KILN_FORMAT_BC4_SNORM, KILN_FORMAT_BC5_UNORM};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        kiln_image img = crop(ctx, &src, 200, 100, sizes[s][0], sizes[s][1]);
        kiln_image padded = pad(ctx, &img);
        for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++)
            for (int q = 0; q < 4; q++) {
                kiln_texture a, b;
                encode_ok(ctx, &img, formats[f], (kiln_quality)q, &a);
                encode_ok(ctx, &padded, formats[f], (kiln_quality)q, &b);
                assert_int_equal(a.data_size, b.data_size);
                assert_memory_equal(a.data, b.data, a.data_size);
                /* decoding gives the right size back */
                kiln_image dec;
                assert_int_equal(kiln_decode(ctx, &a, 0, 0, 0, &dec), KILN_OK);
                assert_int_equal(dec.width, sizes[s][0]);
                assert_int_equal(dec.height, sizes[s][1]);
                kiln_image_free(&dec);
                kiln_texture_free(&a);
                kiln_texture_free(&b);
            }
        kiln_image_free(&img);
        kiln_image_free(&padded);
    }
    kiln_image_free(&src);
    /* a long thin image (one block row) and a 1000x600 photo */
    kiln_image thin;
    assert_int_equal(kiln_image_alloc(ctx, &thin, 16384, 4, KILN_PIXEL_U8), KILN_OK);
    for (uint32_t x = 0; x < 16384; x++)
        for (uint32_t y = 0; y < 4; y++) {
            uint8_t *p = (uint8_t *)thin.pixels + ((size_t)y * 16384 + x) * 4;
            p[0] = (uint8_t)(x >> 6);
            p[1] = (uint8_t)(x * 7 + y * 31);
            p[2] = (uint8_t)(255 - (x >> 6));
            p[3] = 255;
        }
    kiln_texture t;
    encode_ok(ctx, &thin, KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_FAST, &t);
    assert_int_equal(t.data_size, 4096 * 8);
    assert_true(psnr_tex(ctx, &thin, &t, 7) > 25.0);
    kiln_texture_free(&t);
    kiln_image_free(&thin);
    kiln_image photo = load(ctx, "ldr/desktopbase_softwaves_crop_1000x600.png");
    encode_ok(ctx, &photo, KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_NORMAL, &t);
    assert_int_equal(t.data_size, 250 * 150 * 8);
    assert_true(psnr_tex(ctx, &photo, &t, 7) > 45.0);
    kiln_texture_free(&t);
    kiln_image_free(&photo);
    kiln_context_free(ctx);
}

/* Other pixel types: 16-bit and float sources, and the SNORM mapping of 0, 128 and 255. */
static void source_types(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    kiln_image u8 = load(ctx, "ldr/stk_generic_rock_a_512.png");
    kiln_image small = crop(ctx, &u8, 0, 0, 64, 64), u16, f32;
    assert_int_equal(kiln_image_convert(ctx, &small, KILN_PIXEL_U16, &u16), KILN_OK);
    assert_int_equal(kiln_image_convert(ctx, &small, KILN_PIXEL_F32, &f32), KILN_OK);
    for (int q = 0; q < 4; q++) {
        kiln_texture a, b, c;
        encode_ok(ctx, &small, KILN_FORMAT_BC1_RGB_UNORM, (kiln_quality)q, &a);
        encode_ok(ctx, &u16, KILN_FORMAT_BC1_RGB_UNORM, (kiln_quality)q, &b);
        encode_ok(ctx, &f32, KILN_FORMAT_BC1_RGB_UNORM, (kiln_quality)q, &c);
        /* 8-bit values survive both conversions exactly, so the encodings match */
        assert_memory_equal(a.data, b.data, a.data_size);
        assert_memory_equal(a.data, c.data, a.data_size);
        kiln_texture_free(&a);
        kiln_texture_free(&b);
        kiln_texture_free(&c);
    }
    /* SNORM from 8-bit: 0 -> -1, 255 -> +1, 128 -> 0 (2 * 128/255 - 1 = 0.004, rounds to 0) */
    kiln_image flat;
    assert_int_equal(kiln_image_alloc(ctx, &flat, 4, 4, KILN_PIXEL_U8), KILN_OK);
    static const uint8_t vals[3] = {0, 255, 128};
    static const float want[3] = {-1.0f, 1.0f, 0.0f};
    for (int k = 0; k < 3; k++) {
        memset(flat.pixels, vals[k], 64);
        kiln_texture t;
        encode_ok(ctx, &flat, KILN_FORMAT_BC4_SNORM, KILN_QUALITY_FAST, &t);
        kiln_image dec;
        assert_int_equal(kiln_decode(ctx, &t, 0, 0, 0, &dec), KILN_OK);
        for (int i = 0; i < 16; i++) assert_true(((const float *)dec.pixels)[i * 4] == want[k]);
        kiln_image_free(&dec);
        kiln_texture_free(&t);
    }
    kiln_image_free(&flat);
    kiln_image_free(&small);
    kiln_image_free(&u16);
    kiln_image_free(&f32);
    kiln_image_free(&u8);
    kiln_context_free(ctx);
}

static void api_errors(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    kiln_image img;
    assert_int_equal(kiln_image_alloc(ctx, &img, 8, 8, KILN_PIXEL_U8), KILN_OK);
    kiln_encode_params p;
    kiln_encode_params_init(&p, KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_HIGH);
    assert_int_equal(p.alpha_threshold, 128);
    uint8_t buf[32];
    /* too small a buffer */
    assert_int_equal(kiln_encode_image(ctx, &img, &p, buf, 16), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(kiln_last_error(ctx), "32 bytes"));
    assert_int_equal(kiln_encode_image(ctx, &img, &p, buf, 32), KILN_OK);
    /* bad quality, unknown format, a format kiln cannot encode */
    p.quality = (kiln_quality)7;
    assert_int_equal(kiln_encode_image(ctx, &img, &p, buf, 32), KILN_ERR_INVALID_ARGUMENT);
    kiln_encode_params_init(&p, (kiln_format)9999, KILN_QUALITY_FAST);
    assert_int_equal(kiln_encode_image(ctx, &img, &p, buf, 32), KILN_ERR_INVALID_ARGUMENT);
    kiln_texture t;
    if (kiln__block_encoder(KILN_FORMAT_BC6H_UFLOAT) == NULL) {
        kiln_encode_params_init(&p, KILN_FORMAT_BC6H_UFLOAT, KILN_QUALITY_FAST);
        assert_int_equal(kiln_encode(ctx, &img, &p, &t), KILN_ERR_UNSUPPORTED);
        assert_non_null(strstr(kiln_last_error(ctx), "bc6h"));
        assert_null(t.data);
    }
    /* no pixels */
    kiln_image empty;
    memset(&empty, 0, sizeof empty);
    kiln_encode_params_init(&p, KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_FAST);
    assert_int_equal(kiln_encode(ctx, &empty, &p, &t), KILN_ERR_INVALID_ARGUMENT);
    /* uncompressed targets go through the same driver */
    kiln_encode_params_init(&p, KILN_FORMAT_RGBA8_UNORM, KILN_QUALITY_FAST);
    memset(img.pixels, 77, 8 * 8 * 4);
    assert_int_equal(kiln_encode(ctx, &img, &p, &t), KILN_OK);
    assert_int_equal(t.data[0], 77);
    kiln_texture_free(&t);
    kiln_image_free(&img);
    kiln_context_free(ctx);
}

/* Cancellation from the progress callback stops the encode with KILN_ERR_CANCELLED. */
static int cancel_cb(void *user, float f)
{
    (void)user;
    return f > 0.1f;
}

static void cancel(void **state)
{
    (void)state;
    kiln_context_params cp;
    kiln_context_params_init(&cp);
    cp.threads = 2;
    cp.backend = KILN_BACKEND_CPU;
    cp.progress = cancel_cb;
    kiln_context *ctx = NULL;
    assert_int_equal(kiln_context_create(&cp, &ctx), KILN_OK);
    kiln_image img;
    assert_int_equal(kiln_image_alloc(ctx, &img, 1024, 1024, KILN_PIXEL_U8), KILN_OK);
    kiln_encode_params p;
    kiln_encode_params_init(&p, KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_FAST);
    kiln_texture t;
    assert_int_equal(kiln_encode(ctx, &img, &p, &t), KILN_ERR_CANCELLED);
    assert_null(t.data);
    kiln_image_free(&img);
    kiln_context_free(ctx);
}

/* Alpha and sRGB tags survive both containers. */
static void container_tags(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(0, KILN_BACKEND_CPU);
    kiln_image full = load(ctx, "ldr/stktex_directionSign_a_256_rgba.png");
    kiln_image img = crop(ctx, &full, 0, 0, 64, 64);
    static const struct {
        kiln_format f;
        kiln_container c;
        kiln_dds_header h;
        kiln_format back; /* what the file says (DDS cannot tell BC1 RGB from RGBA) */
    } cases[] = {
        {KILN_FORMAT_BC1_RGBA_SRGB, KILN_CONTAINER_KTX2, KILN_DDS_HEADER_AUTO, KILN_FORMAT_BC1_RGBA_SRGB},
        {KILN_FORMAT_BC1_RGB_SRGB, KILN_CONTAINER_KTX2, KILN_DDS_HEADER_AUTO, KILN_FORMAT_BC1_RGB_SRGB},
        {KILN_FORMAT_BC1_RGBA_SRGB, KILN_CONTAINER_DDS, KILN_DDS_HEADER_DX10, KILN_FORMAT_BC1_RGBA_SRGB},
        {KILN_FORMAT_BC1_RGBA_UNORM, KILN_CONTAINER_DDS, KILN_DDS_HEADER_LEGACY, KILN_FORMAT_BC1_RGBA_UNORM},
        {KILN_FORMAT_BC3_SRGB, KILN_CONTAINER_KTX2, KILN_DDS_HEADER_AUTO, KILN_FORMAT_BC3_SRGB},
        {KILN_FORMAT_BC3_SRGB, KILN_CONTAINER_DDS, KILN_DDS_HEADER_AUTO, KILN_FORMAT_BC3_SRGB},
        {KILN_FORMAT_BC4_SNORM, KILN_CONTAINER_DDS, KILN_DDS_HEADER_AUTO, KILN_FORMAT_BC4_SNORM},
        {KILN_FORMAT_BC5_UNORM, KILN_CONTAINER_KTX2, KILN_DDS_HEADER_AUTO, KILN_FORMAT_BC5_UNORM},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kiln_texture t, back;
        encode_ok(ctx, &img, cases[i].f, KILN_QUALITY_FAST, &t);
        kiln_save_params sp;
        kiln_save_params_init(&sp);
        sp.dds_header = cases[i].h;
        uint8_t *bytes = NULL;
        size_t size = 0;
        assert_int_equal(kiln_texture_save_memory(ctx, &t, cases[i].c, &sp, &bytes, &size), KILN_OK);
        assert_int_equal(kiln_texture_load_memory(ctx, bytes, size, &back), KILN_OK);
        assert_int_equal(back.format, cases[i].back);
        assert_int_equal(back.level_size[0], t.level_size[0]);
        assert_memory_equal(back.data + back.level_offset[0], t.data, t.level_size[0]);
        /* alpha decodes as encoded: transparent sign edges stay transparent in BC1a */
        if (cases[i].f == KILN_FORMAT_BC1_RGBA_SRGB) {
            kiln_image dec;
            assert_int_equal(kiln_decode(ctx, &back, 0, 0, 0, &dec), KILN_OK);
            for (size_t p = 0; p < 64 * 64; p++) {
                uint8_t a = ((const uint8_t *)img.pixels)[p * 4 + 3];
                assert_int_equal(((const uint8_t *)dec.pixels)[p * 4 + 3], a < 128 ? 0 : 255);
            }
            kiln_image_free(&dec);
        }
        kiln_free(bytes);
        kiln_texture_free(&back);
        kiln_texture_free(&t);
    }
    kiln_image_free(&img);
    kiln_image_free(&full);
    kiln_context_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bc4_max_is_optimal_unorm),
        cmocka_unit_test(bc4_max_is_optimal_snorm),
        cmocka_unit_test(bc5_bc3_use_bc4),
        cmocka_unit_test(bc4_dither),
        cmocka_unit_test(bc1_black),
        cmocka_unit_test(bc1_tables_are_optimal),
        cmocka_unit_test(bc1_flat_blocks_are_exact),
        cmocka_unit_test(bc1a_punch_through),
        cmocka_unit_test(bc1_cutout),
        cmocka_unit_test(bc1_instruction_sets_agree),
        cmocka_unit_test(bc1_fast_batch),
        cmocka_unit_test(psnr_floors),
        cmocka_unit_test(determinism_and_golden),
        cmocka_unit_test(odd_sizes),
        cmocka_unit_test(source_types),
        cmocka_unit_test(api_errors),
        cmocka_unit_test(cancel),
        cmocka_unit_test(container_tags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_image.c - image loading and saving (PNG, JPEG, TGA, BMP, Radiance HDR, OpenEXR), pixel type
 * conversion and the sRGB helpers. Independent references: libpng's own reader, stb_image's HDR
 * decoder, stb_image_write (to produce JPEG/TGA/BMP inputs), double-precision sRGB maths. */
#include "support.h"
#include "core/internal.h"
#include "image/color.h"
#include "image/image_io.h"

#include <dirent.h>
#include <math.h>
#include <openexr.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <stb/stb_image.h>
#include <stb/stb_image_write.h>

#ifdef KILN_HAVE_OPENEXR_CXX
#include <ImfCRgbaFile.h>
#endif

/* ---------------------------------------------------------------- helpers -------------------- */

static uint8_t *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    rewind(f);
    uint8_t *d = malloc((size_t)len + 1);
    if (d && fread(d, 1, (size_t)len, f) != (size_t)len) {
        free(d);
        d = NULL;
    }
    fclose(f);
    *n = (size_t)len;
    return d;
}

static int file_exists(const char *path) { return access(path, F_OK) == 0; }

/* value of channel c of pixel i as a double in the image's raw units */
static double px(const kiln_image *im, size_t i, int c)
{
    size_t k = i * 4 + (size_t)c;
    switch (im->type) {
    case KILN_PIXEL_U8: return ((const uint8_t *)im->pixels)[k];
    case KILN_PIXEL_U16: return ((const uint16_t *)im->pixels)[k];
    default: return ((const float *)im->pixels)[k];
    }
}

static size_t img_bytes(const kiln_image *im) { return (size_t)im->width * im->height * 4 * (size_t)im->type; }

typedef struct membuf {
    uint8_t *data;
    size_t size, cap;
} membuf;

static void membuf_write(void *ctx, void *data, int size)
{
    membuf *m = ctx;
    if (m->size + (size_t)size > m->cap) {
        m->cap = (m->size + (size_t)size) * 2;
        m->data = realloc(m->data, m->cap);
    }
    memcpy(m->data + m->size, data, (size_t)size);
    m->size += (size_t)size;
}

/* A deterministic RGBA8 test picture with gradients and noise. */
static uint8_t *make_rgba8(uint32_t w, uint32_t h, uint64_t seed)
{
    kt_rng r;
    kt_rng_seed(&r, seed);
    uint8_t *p = malloc((size_t)w * h * 4);
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            uint8_t *q = p + ((size_t)y * w + x) * 4;
            q[0] = (uint8_t)(x * 255 / (w > 1 ? w - 1 : 1));
            q[1] = (uint8_t)(y * 255 / (h > 1 ? h - 1 : 1));
            q[2] = (uint8_t)(kt_rng_u32(&r) & 0x3f) + 96;
            q[3] = (uint8_t)(255 - (x + y) % 64);
        }
    return p;
}

/* ---------------------------------------------------------------- independent PNG reader ----- */

typedef struct ref_png {
    const uint8_t *data;
    size_t size, pos;
    uint32_t w, h;
    int depth, channels;
    uint16_t *pixels; /* w*h*channels samples */
} ref_png;

static void ref_read_cb(png_structp p, png_bytep out, size_t n)
{
    ref_png *r = png_get_io_ptr(p);
    if (n > r->size - r->pos) png_error(p, "eof");
    memcpy(out, r->data + r->pos, n);
    r->pos += n;
}

static int ref_png_run(png_structp png, png_infop info, ref_png *r, png_bytep *volatile *rows_out)
{
    if (setjmp(png_jmpbuf(png))) return 0;
    png_set_read_fn(png, r, ref_read_cb);
    png_read_info(png, info);
    png_set_expand(png); /* palette -> RGB, tRNS -> alpha, low-bit grey -> 8 bit; 16 bit stays */
    png_read_update_info(png, info);
    r->w = png_get_image_width(png, info);
    r->h = png_get_image_height(png, info);
    r->depth = png_get_bit_depth(png, info);
    r->channels = png_get_channels(png, info);
    size_t rb = png_get_rowbytes(png, info);
    png_bytep *rows = calloc(r->h, sizeof *rows);
    *rows_out = rows;
    for (uint32_t y = 0; y < r->h; y++) rows[y] = malloc(rb);
    png_read_image(png, rows);
    r->pixels = malloc((size_t)r->w * r->h * (size_t)r->channels * 2);
    for (uint32_t y = 0; y < r->h; y++)
        for (size_t i = 0; i < (size_t)r->w * (size_t)r->channels; i++)
            r->pixels[(size_t)y * r->w * (size_t)r->channels + i] =
                r->depth == 16 ? (uint16_t)(rows[y][2 * i] << 8 | rows[y][2 * i + 1]) : rows[y][i];
    return 1;
}

static int ref_png_load(const uint8_t *d, size_t n, ref_png *r)
{
    memset(r, 0, sizeof *r);
    r->data = d;
    r->size = n;
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    png_bytep *volatile rows = NULL;
    int ok = ref_png_run(png, info, r, &rows);
    if (rows)
        for (uint32_t y = 0; y < r->h; y++) free(rows[y]);
    free((void *)rows);
    png_destroy_read_struct(&png, &info, NULL);
    return ok;
}

/* kiln's RGBA image against libpng's samples (grey replicated, missing alpha = max) */
static void check_against_ref_png(const kiln_image *im, const uint8_t *d, size_t n)
{
    ref_png r;
    assert_true(ref_png_load(d, n, &r));
    assert_int_equal(r.w, im->width);
    assert_int_equal(r.h, im->height);
    assert_int_equal(r.channels, im->channels);
    assert_int_equal(r.depth == 16 ? KILN_PIXEL_U16 : KILN_PIXEL_U8, im->type);
    double maxv = r.depth == 16 ? 65535 : 255;
    for (size_t i = 0; i < (size_t)r.w * r.h; i++) {
        const uint16_t *s = r.pixels + i * (size_t)r.channels;
        double e[4];
        switch (r.channels) {
        case 1: e[0] = e[1] = e[2] = s[0]; e[3] = maxv; break;
        case 2: e[0] = e[1] = e[2] = s[0]; e[3] = s[1]; break;
        case 3: e[0] = s[0]; e[1] = s[1]; e[2] = s[2]; e[3] = maxv; break;
        default: e[0] = s[0]; e[1] = s[1]; e[2] = s[2]; e[3] = s[3]; break;
        }
        for (int c = 0; c < 4; c++)
            if (px(im, i, c) != e[c]) fail_msg("pixel %zu channel %d: kiln %g, libpng %g", i, c, px(im, i, c), e[c]);
    }
    free(r.pixels);
}

/* ---------------------------------------------------------------- sRGB helpers --------------- */

static double dec_d(double c) { return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4); }
static double enc_d(double l) { return l <= 0.04045 / 12.92 ? l * 12.92 : 1.055 * pow(l, 1.0 / 2.4) - 0.055; }

static void srgb_tables(void **state)
{
    (void)state;
    int exact = 0;
    for (int v = 0; v < 256; v++) {
        float t = kiln__srgb8_to_linear_table[v], ref = (float)dec_d(v / 255.0);
        assert_true(fabsf(t - ref) <= nextafterf(ref, 2.0f) - ref); /* within one ulp of double maths */
        exact += t == ref;
        assert_int_equal(kiln__linear_to_srgb8(t), v); /* exact round trip */
        if (v > 0) assert_true(t > kiln__srgb8_to_linear_table[v - 1]);
    }
    assert_true(exact >= 250);
    assert_true(kiln__srgb8_to_linear_table[0] == 0.0f && kiln__srgb8_to_linear_table[255] == 1.0f);
    for (int k = 0; k < 255; k++) {
        float t = kiln__srgb8_thresholds[k];
        /* t is the first float whose encoding reaches k + 0.5 */
        assert_true(enc_d(t) * 255.0 >= k + 0.5 - 1e-9);
        assert_true(enc_d(nextafterf(t, 0.0f)) * 255.0 < k + 0.5 + 1e-9);
    }
    kt_rng r;
    kt_rng_seed(&r, 7);
    for (int i = 0; i < 200000; i++) {
        float x = (float)(kt_rng_u32(&r) / 4294967296.0);
        if (i & 1) x = x * x * x; /* more samples in the dark end */
        double e = enc_d(x) * 255.0;
        if (fabs(e - floor(e) - 0.5) < 1e-7) continue; /* too close to a tie to judge in double */
        assert_int_equal(kiln__linear_to_srgb8(x), (int)floor(e + 0.5));
        double e16 = enc_d(x) * 65535.0;
        if (fabs(e16 - floor(e16) - 0.5) < 1e-6) continue;
        assert_int_equal(kiln__linear_to_srgb16(x), (int)floor(e16 + 0.5));
    }
    assert_int_equal(kiln__linear_to_srgb8(-1.0f), 0);
    assert_int_equal(kiln__linear_to_srgb8(NAN), 0);
    assert_int_equal(kiln__linear_to_srgb8(7.0f), 255);
    assert_int_equal(kiln__linear_to_srgb16(2.0f), 65535);
    for (int v = 0; v < 65536; v += 7) assert_int_equal(kiln__linear_to_srgb16(kiln__srgb16_to_linear((uint16_t)v)), v);
    assert_int_equal(kiln__float_to_unorm8(0.5f), 128);
    assert_int_equal(kiln__float_to_unorm8(NAN), 0);
    assert_int_equal(kiln__float_to_unorm8(-3.0f), 0);
    assert_int_equal(kiln__float_to_unorm8(1e9f), 255);
    assert_int_equal(kiln__float_to_unorm8(nextafterf(0.5f / 255.0f, 0.0f)), 0);
    assert_int_equal(kiln__float_to_unorm8(0.5f / 255.0f + 1e-7f), 1);
    assert_int_equal(kiln__float_to_unorm16(1.0f), 65535);
    for (int v = 0; v < 65536; v++) assert_int_equal(kiln__unorm16_to_unorm8((uint16_t)v), (int)floor(v / 257.0 + 0.5));
    assert_float_equal(kiln__linear_to_srgb(kiln__srgb_to_linear(0.25f)), 0.25f, 1e-6);
}

/* ---------------------------------------------------------------- test data ------------------ */

static const struct {
    const char *path;
    uint32_t w, h, channels;
    kiln_pixel_type type;
} k_files[] = {
    {"ldr/Sara_Head_Diff_256_rgba.png", 256, 256, 4, KILN_PIXEL_U8},
    {"ldr/city_fern_512_rgba.png", 512, 512, 4, KILN_PIXEL_U8},
    {"ldr/desktopbase_softwaves_crop_1000x600.png", 1000, 600, 3, KILN_PIXEL_U8},
    {"ldr/gimp_qube1_tiny_31x57.png", 31, 57, 3, KILN_PIXEL_U8},
    {"ldr/gimp_stone33_tileable_156.png", 156, 156, 3, KILN_PIXEL_U8},
    {"ldr/stk_generic_grassB_1024.png", 1024, 1024, 3, KILN_PIXEL_U8},
    {"ldr/stk_generic_rock_a_512.png", 512, 512, 3, KILN_PIXEL_U8},
    {"ldr/stkflag_TCPLogo_a_1024x512_rgba.png", 1024, 512, 4, KILN_PIXEL_U8},
    {"ldr/stktex_directionSign_a_256_rgba.png", 256, 256, 4, KILN_PIXEL_U8},
    {"ldr/stktex_generic_WoodB_1024.png", 1024, 1024, 3, KILN_PIXEL_U8},
    {"ldr/supertuxkart_16_rgba.png", 16, 16, 4, KILN_PIXEL_U8},
    {"normal/hd_palmTreeBark_a_Normal_256x1024_rgba.png", 256, 1024, 4, KILN_PIXEL_U8},
    {"normal/stk_generic_rock_a_Normal_512_rgba.png", 512, 512, 4, KILN_PIXEL_U8},
    {"normal/stk_solarPanel_a_Normal_1024.png", 1024, 1024, 3, KILN_PIXEL_U8},
    {"grey/stk_displace_512_grey.png", 512, 512, 1, KILN_PIXEL_U8},
    {"grey/stk_generic_rock_a_gloss_R_512_grey.png", 512, 512, 1, KILN_PIXEL_U8},
    {"hdr/blender_city_1024x512.exr", 1024, 512, 3, KILN_PIXEL_F32},
    {"hdr/blender_sunset_1024x512.exr", 1024, 512, 3, KILN_PIXEL_F32},
    {"hdr/qtcreator_preview_landscape_256x128.hdr", 256, 128, 3, KILN_PIXEL_F32},
    {"hdr/qtcreator_preview_studio_256x128.hdr", 256, 128, 3, KILN_PIXEL_F32},
};

static void load_testdata(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(0, KILN_BACKEND_CPU);
    assert_non_null(ctx);
    for (size_t f = 0; f < sizeof k_files / sizeof k_files[0]; f++) {
        const char *path = kt_testdata(k_files[f].path);
        if (!file_exists(path)) fail_msg("test data missing: %s", path);
        kiln_image img;
        kiln_status st = kiln_image_load(ctx, path, &img);
        if (st != KILN_OK) fail_msg("%s: %s", path, kiln_last_error(ctx));
        assert_int_equal(img.width, k_files[f].w);
        assert_int_equal(img.height, k_files[f].h);
        assert_int_equal(img.channels, k_files[f].channels);
        assert_int_equal(img.type, k_files[f].type);
        int hdr = k_files[f].type == KILN_PIXEL_F32;
        assert_int_equal(img.hdr, hdr);
        assert_int_equal(img.srgb, !hdr && img.channels >= 3);
        size_t n = (size_t)img.width * img.height;
        if (hdr) {
            double sum = 0, maxv = 0;
            for (size_t i = 0; i < n; i++) {
                for (int c = 0; c < 3; c++) {
                    double v = px(&img, i, c);
                    assert_true(isfinite(v));
                    sum += v;
                    if (v > maxv) maxv = v;
                }
                assert_true(px(&img, i, 3) == 1.0);
            }
            double mean = sum / (3.0 * n);
            assert_true(mean > 0.01 && mean < 100.0);
            if (strstr(k_files[f].path, "sunset")) assert_true(maxv > 100.0); /* the sun */
        } else {
            size_t dn;
            uint8_t *d = read_all(path, &dn);
            assert_non_null(d);
            check_against_ref_png(&img, d, dn); /* every pixel against libpng */
            if (dn < 100000) { /* the same bytes through load_memory */
                kiln_image m;
                assert_int_equal(kiln_image_load_memory(ctx, d, dn, &m), KILN_OK);
                assert_memory_equal(m.pixels, img.pixels, img_bytes(&img));
                kiln_image_free(&m);
            }
            free(d);
        }
        kiln_image_free(&img);
    }
    kiln_context_free(ctx);
}

/* kiln's Radiance decoder against stb_image's (same conversion, so bit-identical) */
static void hdr_matches_stb(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    const char *names[] = {"hdr/qtcreator_preview_landscape_256x128.hdr", "hdr/qtcreator_preview_studio_256x128.hdr"};
    for (int f = 0; f < 2; f++) {
        size_t n;
        uint8_t *d = read_all(kt_testdata(names[f]), &n);
        assert_non_null(d);
        kiln_image img;
        assert_int_equal(kiln_image_load_memory(ctx, d, n, &img), KILN_OK);
        int w, h, c;
        float *ref = stbi_loadf_from_memory(d, (int)n, &w, &h, &c, 4);
        assert_non_null(ref);
        assert_int_equal(w, img.width);
        assert_int_equal(h, img.height);
        assert_memory_equal(ref, img.pixels, (size_t)w * h * 16);
        stbi_image_free(ref);
        kiln_image_free(&img);
        free(d);
    }
    kiln_context_free(ctx);
}

/* The DWAB files go through the C++ reader; their values re-saved as float EXR (Core) read back equal. */
static void exr_testdata_roundtrip(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(0, KILN_BACKEND_CPU);
    kiln_image a, b;
    assert_int_equal(kiln_image_load(ctx, kt_testdata("hdr/blender_city_1024x512.exr"), &a), KILN_OK);
    char path[4096];
    snprintf(path, sizeof path, "%s", kt_tmp("city_float.exr"));
    assert_int_equal(kiln_image_save(ctx, &a, path, KILN_SAVE_EXR_FLOAT), KILN_OK);
    assert_int_equal(kiln_image_load(ctx, path, &b), KILN_OK);
    assert_int_equal(b.channels, 3);
    assert_memory_equal(a.pixels, b.pixels, img_bytes(&a));
    kiln_image_free(&b);
    /* DWA output is half precision: saving as half is lossless too */
    assert_int_equal(kiln_image_save(ctx, &a, path, 0), KILN_OK);
    assert_int_equal(kiln_image_load(ctx, path, &b), KILN_OK);
    assert_memory_equal(a.pixels, b.pixels, img_bytes(&a));
    for (size_t i = 0; i < (size_t)a.width * a.height * 4; i++) {
        float v = ((float *)a.pixels)[i];
        assert_true(kiln__half_to_float(kiln__float_to_half(v)) == v);
    }
    kiln_image_free(&b);
    kiln_image_free(&a);
    unlink(path);
    kiln_context_free(ctx);
}

/* ---------------------------------------------------------------- PNG round trips ------------ */

static void png_roundtrip(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(2, KILN_BACKEND_CPU);
    kt_rng r;
    kt_rng_seed(&r, 42);
    for (int t = 0; t < 2; t++) {
        kiln_pixel_type type = t ? KILN_PIXEL_U16 : KILN_PIXEL_U8;
        for (uint32_t ch = 1; ch <= 4; ch++) {
            kiln_image img;
            assert_int_equal(kiln_image_alloc(ctx, &img, 37, 23, type), KILN_OK);
            kt_rng_bytes(&r, img.pixels, img_bytes(&img));
            img.channels = ch;
            img.srgb = ch >= 3;
            char path[4096];
            snprintf(path, sizeof path, "%s", kt_tmp("rt.png"));
            assert_int_equal(kiln_image_save(ctx, &img, path, 0), KILN_OK);
            size_t n;
            uint8_t *d = read_all(path, &n);
            assert_non_null(d);
            kiln_image back;
            assert_int_equal(kiln_image_load(ctx, path, &back), KILN_OK);
            assert_int_equal(back.type, type);   /* 16-bit stays 16-bit */
            assert_int_equal(back.channels, ch);
            double maxv = t ? 65535 : 255;
            for (size_t i = 0; i < 37 * 23; i++) {
                double e[4];
                switch (ch) {
                case 1: e[0] = e[1] = e[2] = px(&img, i, 0); e[3] = maxv; break;
                case 2: e[0] = e[1] = e[2] = px(&img, i, 0); e[3] = px(&img, i, 3); break;
                case 3: for (int c = 0; c < 3; c++) e[c] = px(&img, i, c); e[3] = maxv; break;
                default: for (int c = 0; c < 4; c++) e[c] = px(&img, i, c); break;
                }
                for (int c = 0; c < 4; c++) assert_true(px(&back, i, c) == e[c]);
            }
            check_against_ref_png(&back, d, n); /* libpng reads the same samples */
            free(d);
            kiln_image_free(&back);
            kiln_image_free(&img);
            unlink(path);
        }
    }
    /* F32 -> clamped 16-bit */
    kiln_image f;
    assert_int_equal(kiln_image_alloc(ctx, &f, 2, 1, KILN_PIXEL_F32), KILN_OK);
    float vals[8] = {-1.0f, 0.5f, 2.0f, NAN, 1.0f, 0.0f, 1.0f / 65535.0f, 0.25f};
    memcpy(f.pixels, vals, sizeof vals);
    char path[4096];
    snprintf(path, sizeof path, "%s", kt_tmp("f32.png"));
    assert_int_equal(kiln_image_save(ctx, &f, path, 0), KILN_OK);
    kiln_image back;
    assert_int_equal(kiln_image_load(ctx, path, &back), KILN_OK);
    assert_int_equal(back.type, KILN_PIXEL_U16);
    const uint16_t expect[8] = {0, 32768, 65535, 0, 65535, 0, 1, 16384};
    assert_memory_equal(back.pixels, expect, sizeof expect);
    kiln_image_free(&back);
    kiln_image_free(&f);
    unlink(path);
    kiln_context_free(ctx);
}

/* ---------------------------------------------------------------- EXR round trips ------------ */

static kiln_status exr_mem(kiln_context *ctx, const kiln_image *img, int comp, int full, uint32_t tw, uint32_t th,
                           uint8_t **out, size_t *n)
{
    kiln__exr_options o = {comp, full, tw, th};
    return kiln__exr_encode(ctx, img, &o, "test.exr", out, n);
}

static void exr_roundtrip(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(3, KILN_BACKEND_CPU);
    kt_rng r;
    kt_rng_seed(&r, 99);
    kiln_image img;
    const uint32_t W = 53, H = 41;
    assert_int_equal(kiln_image_alloc(ctx, &img, W, H, KILN_PIXEL_F32), KILN_OK);
    float *p = img.pixels;
    for (size_t i = 0; i < (size_t)W * H * 4; i++) {
        double u = kt_rng_u32(&r) / 4294967296.0;
        p[i] = (float)((i % 7 == 0) ? (u - 0.5) * 4000.0 : (i % 3 == 0) ? -u : u * 8.0);
    }
    for (size_t i = 0; i < 40; i++) p[i] = (float)(i / 4) * 0.25f; /* a flat run for RLE */
    img.hdr = 1;
    static const int comps[] = {EXR_COMPRESSION_NONE, EXR_COMPRESSION_RLE, EXR_COMPRESSION_ZIPS, EXR_COMPRESSION_ZIP,
                                EXR_COMPRESSION_PIZ, EXR_COMPRESSION_PXR24, EXR_COMPRESSION_B44,
                                EXR_COMPRESSION_B44A};
    for (size_t ci = 0; ci < sizeof comps / sizeof comps[0]; ci++) {
        for (int full = 0; full < 2; full++) {
            for (int tiled = 0; tiled < 2; tiled++) {
                /* OpenEXRCore 3.1.5 writes B44 edge tiles larger than raw, which its reader rejects */
                if (tiled && (comps[ci] == EXR_COMPRESSION_B44 || comps[ci] == EXR_COMPRESSION_B44A)) continue;
                for (uint32_t ch = 1; ch <= 4; ch++) {
                    int comp = comps[ci];
                    img.channels = ch;
                    uint8_t *d;
                    size_t n;
                    kiln_status st = exr_mem(ctx, &img, comp, full, tiled ? 16 : 0, tiled ? 8 : 0, &d, &n);
                    if (st != KILN_OK) fail_msg("compression %d: %s", comp, kiln_last_error(ctx));
                    kiln_image back;
                    st = kiln_image_load_memory(ctx, d, n, &back);
                    if (st != KILN_OK) fail_msg("compression %d tiled %d: %s", comp, tiled, kiln_last_error(ctx));
                    assert_int_equal(back.width, W);
                    assert_int_equal(back.height, H);
                    assert_int_equal(back.channels, ch);
                    assert_int_equal(back.hdr, 1);
                    /* B44 only compresses HALF channels; PXR24 only loses FLOAT precision */
                    int lossy = ((comp == EXR_COMPRESSION_B44 || comp == EXR_COMPRESSION_B44A) && !full) ||
                                (comp == EXR_COMPRESSION_PXR24 && full);
                    const float *q = back.pixels;
                    for (size_t i = 0; i < (size_t)W * H; i++) {
                        for (int c = 0; c < 4; c++) {
                            float src;
                            if (ch <= 2) src = c < 3 ? p[i * 4] : ch == 2 ? p[i * 4 + 3] : 1.0f;
                            else src = c < 3 ? p[i * 4 + (size_t)c] : ch == 4 ? p[i * 4 + 3] : 1.0f;
                            float want = full ? src : kiln__half_to_float(kiln__float_to_half(src));
                            float got = q[i * 4 + (size_t)c];
                            /* lossy on this noisy, high-range data: checked on a smooth image below */
                            if (!lossy && got != want) {
                                fail_msg("comp %d full %d tiled %d ch %u px %zu c %d: %g != %g", comp, full, tiled, ch,
                                         i, c, got, want);
                            }
                        }
                    }
                    kiln_image_free(&back);
                    free(d);
                }
            }
        }
    }
    /* the lossy ones stay close on a smooth image */
    for (size_t i = 0; i < (size_t)W * H; i++)
        for (int c = 0; c < 4; c++) p[i * 4 + (size_t)c] = 0.5f + (float)((i % W) + (i / W) * (c + 1)) / 64.0f;
    img.channels = 4;
    static const int lossy_comps[3][2] = {{EXR_COMPRESSION_B44, 0}, {EXR_COMPRESSION_B44A, 0}, {EXR_COMPRESSION_PXR24, 1}};
    for (int k = 0; k < 3; k++) {
        uint8_t *d;
        size_t n;
        kiln_image back;
        assert_int_equal(exr_mem(ctx, &img, lossy_comps[k][0], lossy_comps[k][1], 0, 0, &d, &n), KILN_OK);
        assert_int_equal(kiln_image_load_memory(ctx, d, n, &back), KILN_OK);
        for (size_t i = 0; i < (size_t)W * H * 4; i++)
            assert_true(fabsf(((float *)back.pixels)[i] - p[i]) <= 0.01f * p[i]);
        kiln_image_free(&back);
        free(d);
    }
    /* DWA cannot be written with OpenEXRCore 3.1: a clear error, no crash */
    uint8_t *d = NULL;
    size_t n = 0;
    img.channels = 3;
    assert_int_not_equal(exr_mem(ctx, &img, EXR_COMPRESSION_DWAA, 0, 0, 0, &d, &n), KILN_OK);
    assert_null(d);
    kiln_image_free(&img);
    kiln_context_free(ctx);
}

/* U8/U16 sRGB images are linearised into EXR; alpha is not */
static void exr_from_ldr(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    kiln_image img, back;
    assert_int_equal(kiln_image_alloc(ctx, &img, 16, 16, KILN_PIXEL_U8), KILN_OK);
    uint8_t *p = img.pixels;
    for (int i = 0; i < 256 * 4; i++) p[i] = (uint8_t)(i / 4 + (i % 4) * 7);
    img.channels = 4;
    img.srgb = 1;
    uint8_t *d;
    size_t n;
    assert_int_equal(exr_mem(ctx, &img, EXR_COMPRESSION_ZIP, 1, 0, 0, &d, &n), KILN_OK);
    assert_int_equal(kiln_image_load_memory(ctx, d, n, &back), KILN_OK);
    const float *q = back.pixels;
    for (int i = 0; i < 256 * 4; i++) {
        float want = (i % 4 == 3) ? p[i] / 255.0f : kiln__srgb8_to_linear(p[i]);
        assert_true(q[i] == want);
    }
    assert_int_equal(back.srgb, 0);
    kiln_image_free(&back);
    free(d);
    img.srgb = 0; /* linear data: plain scaling */
    assert_int_equal(exr_mem(ctx, &img, EXR_COMPRESSION_ZIP, 1, 0, 0, &d, &n), KILN_OK);
    assert_int_equal(kiln_image_load_memory(ctx, d, n, &back), KILN_OK);
    q = back.pixels;
    for (int i = 0; i < 256 * 4; i++) assert_true(q[i] == p[i] / 255.0f);
    kiln_image_free(&back);
    free(d);
    kiln_image_free(&img);
    kiln_context_free(ctx);
}

/* ---------------------------------------------------------------- other LDR formats ---------- */

static void jpeg_tga_bmp(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    const uint32_t W = 45, H = 30;
    uint8_t *src = make_rgba8(W, H, 5);
    /* TGA (RLE) and BMP are lossless: exact pixels; 3 and 4 channels */
    for (int comp = 3; comp <= 4; comp++) {
        uint8_t *rgb = malloc((size_t)W * H * (size_t)comp);
        for (size_t i = 0; i < (size_t)W * H; i++) memcpy(rgb + i * (size_t)comp, src + i * 4, (size_t)comp);
        for (int fmt = 0; fmt < 2; fmt++) {
            membuf m = {0};
            if (fmt == 0) assert_true(stbi_write_tga_to_func(membuf_write, &m, W, H, comp, rgb));
            else assert_true(stbi_write_bmp_to_func(membuf_write, &m, W, H, comp, rgb));
            kiln_image img;
            kiln_status st = kiln_image_load_memory(ctx, m.data, m.size, &img);
            if (st != KILN_OK) fail_msg("%s: %s", fmt ? "BMP" : "TGA", kiln_last_error(ctx));
            assert_int_equal(img.width, W);
            assert_int_equal(img.height, H);
            assert_int_equal(img.type, KILN_PIXEL_U8);
            if (fmt == 0) assert_int_equal(img.channels, (uint32_t)comp);
            const uint8_t *q = img.pixels;
            for (size_t i = 0; i < (size_t)W * H; i++)
                for (int c = 0; c < 4; c++)
                    assert_int_equal(q[i * 4 + (size_t)c], c < comp ? src[i * 4 + (size_t)c] : 255);
            kiln_image_free(&img);
            free(m.data);
        }
        free(rgb);
    }
    /* JPEG (lossy): close to the source */
    membuf m = {0};
    uint8_t *rgb = malloc((size_t)W * H * 3);
    for (size_t i = 0; i < (size_t)W * H; i++) memcpy(rgb + i * 3, src + i * 4, 3);
    assert_true(stbi_write_jpg_to_func(membuf_write, &m, W, H, 3, rgb, 95));
    kiln_image img, ref;
    assert_int_equal(kiln_image_load_memory(ctx, m.data, m.size, &img), KILN_OK);
    assert_int_equal(img.channels, 3);
    assert_int_equal(img.srgb, 1);
    assert_int_equal(kiln_image_alloc(ctx, &ref, W, H, KILN_PIXEL_U8), KILN_OK);
    memcpy(ref.pixels, src, (size_t)W * H * 4);
    ref.channels = 3;
    kiln_metrics met;
    assert_int_equal(kiln_compare(ctx, &ref, &img, &met), KILN_OK);
    assert_true(met.psnr_rgb > 30.0);
    kiln_image_free(&ref);
    kiln_image_free(&img);
    free(m.data);
    free(rgb);
    free(src);
    kiln_context_free(ctx);
}

/* ---------------------------------------------------------------- bad input ------------------ */

/* Every proper prefix of a valid file must fail cleanly (or, never, decode to something else). */
static void check_truncations(kiln_context *ctx, const char *what, const uint8_t *d, size_t n, size_t max_points)
{
    kiln_image full;
    kiln_status st = kiln_image_load_memory(ctx, d, n, &full);
    if (st != KILN_OK) fail_msg("%s: the complete file fails: %s", what, kiln_last_error(ctx));
    size_t step = n <= max_points ? 1 : n / max_points;
    for (size_t len = 0; len < n; len += (len < 64 ? 1 : step)) {
        uint8_t *copy = malloc(len ? len : 1); /* exact-size copy so ASan sees over-reads */
        memcpy(copy, d, len);
        kiln_image img;
        st = kiln_image_load_memory(ctx, copy, len, &img);
        if (st == KILN_OK) fail_msg("%s truncated to %zu of %zu bytes was accepted", what, len, n);
        assert_true(st == KILN_ERR_CORRUPT || st == KILN_ERR_UNSUPPORTED || st == KILN_ERR_TOO_LARGE);
        assert_true(strlen(kiln_last_error(ctx)) > 0);
        assert_null(img.pixels);
        free(copy);
    }
    kiln_image_free(&full);
}

static void truncated_files(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(2, KILN_BACKEND_CPU);
    size_t n;
    uint8_t *d;
    const char *files[] = {"ldr/supertuxkart_16_rgba.png", "ldr/gimp_qube1_tiny_31x57.png",
                           "hdr/qtcreator_preview_studio_256x128.hdr"};
    for (int f = 0; f < 3; f++) {
        d = read_all(kt_testdata(files[f]), &n);
        assert_non_null(d);
        check_truncations(ctx, files[f], d, n, 600);
        free(d);
    }
    d = read_all(kt_testdata("hdr/blender_sunset_1024x512.exr"), &n);
    assert_non_null(d);
    check_truncations(ctx, "DWAB EXR", d, n, 40);
    free(d);

    uint8_t *src = make_rgba8(31, 19, 11);
    membuf m = {0};
    assert_true(stbi_write_jpg_to_func(membuf_write, &m, 31, 19, 4, src, 90));
    check_truncations(ctx, "JPEG", m.data, m.size, 5000);
    m.size = 0;
    assert_true(stbi_write_tga_to_func(membuf_write, &m, 31, 19, 4, src));
    check_truncations(ctx, "TGA", m.data, m.size, 5000);
    m.size = 0;
    assert_true(stbi_write_bmp_to_func(membuf_write, &m, 31, 19, 3, src));
    check_truncations(ctx, "BMP", m.data, m.size, 5000);
    free(m.data);

    kiln_image img;
    assert_int_equal(kiln_image_alloc(ctx, &img, 31, 19, KILN_PIXEL_U8), KILN_OK);
    memcpy(img.pixels, src, 31 * 19 * 4);
    uint8_t *e;
    size_t en;
    assert_int_equal(exr_mem(ctx, &img, EXR_COMPRESSION_ZIP, 0, 0, 0, &e, &en), KILN_OK);
    check_truncations(ctx, "EXR scanline ZIP", e, en, 5000);
    free(e);
    assert_int_equal(exr_mem(ctx, &img, EXR_COMPRESSION_PIZ, 0, 8, 8, &e, &en), KILN_OK);
    check_truncations(ctx, "EXR tiled PIZ", e, en, 5000);
    free(e);
    uint8_t *pngd;
    size_t pngn;
    img.channels = 4;
    assert_int_equal(kiln__png_encode(ctx, &img, "t.png", &pngd, &pngn), KILN_OK);
    check_truncations(ctx, "PNG (kiln)", pngd, pngn, 5000);
    free(pngd);
    kiln_image_free(&img);
    free(src);
    kiln_context_free(ctx);
}

static void random_bytes(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(2, KILN_BACKEND_CPU);
    static const struct {
        const char *magic;
        size_t len;
    } prefixes[] = {
        {"", 0},
        {"\x89PNG\r\n\x1a\n", 8},
        {"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\0\x10\0\0\0\x10\x08\x06\0\0\0\0\0\0\0", 33},
        {"\xff\xd8\xff\xe0", 4},
        {"BM", 2},
        {"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 8 +X 16\n", 46},
        {"\x76\x2f\x31\x01\x02\0\0\0", 8},
        {"\0\0\x02\0\0\0\0\0\0\0\0\0\x04\0\x04\0\x20\0", 18},
        {"\0\0\x0a\0\0\0\0\0\0\0\0\0\x10\0\x10\0\x18\0", 18},
    };
    kt_rng r;
    kt_rng_seed(&r, 1234);
    for (size_t p = 0; p < sizeof prefixes / sizeof prefixes[0]; p++) {
        int accepted = 0;
        for (int k = 0; k < 300; k++) {
            size_t len = prefixes[p].len + kt_rng_u32(&r) % 3000;
            uint8_t *d = malloc(len ? len : 1);
            kt_rng_bytes(&r, d, len);
            memcpy(d, prefixes[p].magic, prefixes[p].len);
            kiln_image img;
            kiln_status st = kiln_image_load_memory(ctx, d, len, &img);
            if (st == KILN_OK) { /* headerless TGA and flat Radiance data can be valid: then a sane image */
                accepted++;
                assert_true(img.width > 0 && img.height > 0 && img.pixels);
                kiln_image_free(&img);
            } else {
                assert_true(strlen(kiln_last_error(ctx)) > 0);
                assert_null(img.pixels);
            }
            free(d);
        }
        /* PNG, JPEG, BMP and EXR bodies of random bytes never decode */
        if (p >= 1 && p <= 4) assert_int_equal(accepted, 0);
        if (p == 6) assert_int_equal(accepted, 0);
    }
    kiln_context_free(ctx);
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void huge_headers(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    kiln_image img;
    /* a real PNG with its IHDR rewritten (CRC left wrong: kiln must stop before reading further) */
    size_t n;
    uint8_t *d = read_all(kt_testdata("ldr/supertuxkart_16_rgba.png"), &n);
    assert_non_null(d);
    const uint32_t dims[][2] = {{0x80000000u, 0x80000000u}, {0x80000000u, 1}, {65537, 1}, {65536, 65536}, {40000, 40000}};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
        put_be32(d + 16, dims[i][0]);
        put_be32(d + 20, dims[i][1]);
        assert_int_equal(kiln_image_load_memory(ctx, d, n, &img), KILN_ERR_TOO_LARGE);
        assert_non_null(strstr(kiln_last_error(ctx), "limit"));
    }
    put_be32(d + 16, 0);
    put_be32(d + 20, 0);
    assert_int_equal(kiln_image_load_memory(ctx, d, n, &img), KILN_ERR_CORRUPT);
    /* plausible dimensions the data cannot hold */
    put_be32(d + 16, 30000);
    put_be32(d + 20, 30000);
    assert_int_equal(kiln_image_load_memory(ctx, d, n, &img), KILN_ERR_CORRUPT);
    free(d);

    /* Radiance */
    const char *hdr = "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 100000 +X 100000\n";
    assert_int_equal(kiln_image_load_memory(ctx, hdr, strlen(hdr), &img), KILN_ERR_TOO_LARGE);
    hdr = "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 99999999999 +X 8\n";
    assert_int_equal(kiln_image_load_memory(ctx, hdr, strlen(hdr), &img), KILN_ERR_UNSUPPORTED);
    hdr = "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 4000 +X 4000\n\x02\x02\x0f\xa0";
    assert_int_equal(kiln_image_load_memory(ctx, hdr, strlen(hdr), &img), KILN_ERR_CORRUPT);
    /* a zero-length run (stb_image 2.27 loops forever on it) */
    uint8_t zr[64];
    const char *h2 = "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 1 +X 8\n";
    size_t hl = strlen(h2);
    memcpy(zr, h2, hl);
    memcpy(zr + hl, "\x02\x02\x00\x08\x00\x00\x00\x00", 8);
    assert_int_equal(kiln_image_load_memory(ctx, zr, hl + 8, &img), KILN_ERR_CORRUPT);

    /* JPEG frame header claiming 65535 x 65535 */
    uint8_t *src = make_rgba8(8, 8, 3);
    membuf m = {0};
    assert_true(stbi_write_jpg_to_func(membuf_write, &m, 8, 8, 3, src, 90));
    for (size_t i = 2; i + 9 < m.size; i++)
        if (m.data[i] == 0xff && m.data[i + 1] == 0xc0) {
            m.data[i + 5] = m.data[i + 6] = m.data[i + 7] = m.data[i + 8] = 0xff;
            break;
        }
    assert_int_equal(kiln_image_load_memory(ctx, m.data, m.size, &img), KILN_ERR_TOO_LARGE);
    free(m.data);

    /* EXR data window of 100000 x 1 */
    kiln_image small;
    assert_int_equal(kiln_image_alloc(ctx, &small, 4, 4, KILN_PIXEL_F32), KILN_OK);
    uint8_t *e;
    size_t en;
    assert_int_equal(exr_mem(ctx, &small, EXR_COMPRESSION_ZIP, 0, 0, 0, &e, &en), KILN_OK);
    uint8_t *dw = NULL;
    for (size_t i = 0; i + 20 < en; i++)
        if (!memcmp(e + i, "dataWindow\0box2i\0", 17)) dw = e + i + 17 + 4;
    assert_non_null(dw);
    int32_t box[4] = {0, 0, 99999, 0};
    memcpy(dw, box, 16); /* little endian host */
    kiln_status st = kiln_image_load_memory(ctx, e, en, &img);
    assert_true(st == KILN_ERR_TOO_LARGE || st == KILN_ERR_CORRUPT);
    box[2] = 1 << 30;
    box[3] = 1 << 30;
    memcpy(dw, box, 16);
    st = kiln_image_load_memory(ctx, e, en, &img);
    assert_true(st == KILN_ERR_TOO_LARGE || st == KILN_ERR_CORRUPT);
    free(e);
    kiln_image_free(&small);
    free(src);
    kiln_context_free(ctx);
}

static void load_errors(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    kiln_image img;
    assert_int_equal(kiln_image_load(ctx, "/nonexistent/dir/x.png", &img), KILN_ERR_IO);
    assert_non_null(strstr(kiln_last_error(ctx), "/nonexistent/dir/x.png"));
    assert_int_equal(kiln_image_load_memory(ctx, "", 0, &img), KILN_ERR_CORRUPT);
    assert_int_equal(kiln_image_load_memory(ctx, "GIF89a\x01\0\x01\0\0\0\0;", 14, &img), KILN_ERR_UNSUPPORTED);
    assert_non_null(strstr(kiln_last_error(ctx), "GIF"));
    assert_int_equal(kiln_image_load_memory(ctx, "hello, world", 12, &img), KILN_ERR_UNSUPPORTED);
    assert_int_equal(kiln_image_load_memory(ctx, NULL, 10, &img), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_image_load_memory(NULL, "P6", 2, &img), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_image_load(NULL, "x.png", &img), KILN_ERR_INVALID_ARGUMENT);
    kiln_context_free(ctx);
}

static int count_tmp_files(const char *dir, const char *prefix)
{
    DIR *dd = opendir(dir);
    int k = 0;
    if (!dd) return 0;
    struct dirent *e;
    while ((e = readdir(dd)))
        if (!strncmp(e->d_name, prefix, strlen(prefix)) && strstr(e->d_name, ".tmp-")) k++;
    closedir(dd);
    return k;
}

static void save_errors(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    kiln_image img;
    assert_int_equal(kiln_image_alloc(ctx, &img, 8, 8, KILN_PIXEL_U8), KILN_OK);
    assert_int_equal(kiln_image_save(ctx, &img, "/nonexistent-kiln-dir/out.png", 0), KILN_ERR_IO);
    assert_non_null(strstr(kiln_last_error(ctx), "/nonexistent-kiln-dir/out.png"));
    assert_false(file_exists("/nonexistent-kiln-dir/out.png"));
    char path[4096];
    snprintf(path, sizeof path, "%s", kt_tmp("out.bmp"));
    assert_int_equal(kiln_image_save(ctx, &img, path, 0), KILN_ERR_UNSUPPORTED);
    assert_non_null(strstr(kiln_last_error(ctx), ".png"));
    assert_non_null(strstr(kiln_last_error(ctx), ".exr"));
    assert_false(file_exists(path));
    /* the target is a directory: rename fails, the temporary is removed */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", kt_tmp("adir.png"));
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(kiln_image_save(ctx, &img, dir, 0), KILN_ERR_IO);
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", dir);
    char *slash = strrchr(parent, '/');
    *slash = 0;
    assert_int_equal(count_tmp_files(parent, slash + 1), 0);
    rmdir(dir);
    assert_int_equal(kiln_image_save(ctx, &img, "x.png", 0x80), KILN_ERR_INVALID_ARGUMENT);
    kiln_image_free(&img);
    kiln_context_free(ctx);
}

/* ---------------------------------------------------------------- conversion ----------------- */

static void convert(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(2, KILN_BACKEND_CPU);
    kiln_image a, b, c;
    assert_int_equal(kiln_image_alloc(ctx, &a, 64, 4, KILN_PIXEL_U8), KILN_OK);
    uint8_t *p = a.pixels;
    for (int i = 0; i < 64 * 4 * 4; i++) p[i] = (uint8_t)i;
    a.channels = 3;
    a.srgb = 1;
    assert_int_equal(kiln_image_convert(ctx, &a, KILN_PIXEL_U16, &b), KILN_OK);
    assert_int_equal(b.channels, 3);
    assert_int_equal(b.srgb, 1);
    for (int i = 0; i < 64 * 16; i++) assert_int_equal(((uint16_t *)b.pixels)[i], p[i] * 257);
    assert_int_equal(kiln_image_convert(ctx, &b, KILN_PIXEL_U8, &c), KILN_OK);
    assert_memory_equal(c.pixels, a.pixels, 64 * 16);
    kiln_image_free(&c);
    assert_int_equal(kiln_image_convert(ctx, &a, KILN_PIXEL_F32, &c), KILN_OK);
    for (int i = 0; i < 64 * 16; i++) assert_true(((float *)c.pixels)[i] == p[i] / 255.0f);
    /* in place back to U8 */
    assert_int_equal(kiln_image_convert(ctx, &c, KILN_PIXEL_U8, &c), KILN_OK);
    assert_int_equal(c.type, KILN_PIXEL_U8);
    assert_memory_equal(c.pixels, a.pixels, 64 * 16);
    kiln_image_free(&c);
    /* rounding at the edges */
    uint16_t *q = b.pixels;
    q[0] = 128;   /* 0.498 -> 0 */
    q[1] = 129;   /* 0.502 -> 1 */
    q[2] = 65535;
    q[3] = 385;   /* 1.498 -> 1 */
    q[4] = 386;   /* 1.502 -> 2 */
    assert_int_equal(kiln_image_convert(ctx, &b, KILN_PIXEL_U8, &c), KILN_OK);
    const uint8_t *r8 = c.pixels;
    assert_int_equal(r8[0], 0);
    assert_int_equal(r8[1], 1);
    assert_int_equal(r8[2], 255);
    assert_int_equal(r8[3], 1);
    assert_int_equal(r8[4], 2);
    kiln_image_free(&c);
    kiln_image f;
    assert_int_equal(kiln_image_alloc(ctx, &f, 4, 1, KILN_PIXEL_F32), KILN_OK);
    float fv[16] = {-0.5f, 0.0f, 0.25f, 1.5f, NAN, 1.0f, 0.5f / 255.0f - 1e-6f, 0.5f / 255.0f + 1e-6f,
                    0.5f, 0.999f, 1.0f / 65535.0f, 0.2f, 2.0f, 0.1f, 0.9f, 1.0f};
    memcpy(f.pixels, fv, sizeof fv);
    f.hdr = 1;
    assert_int_equal(kiln_image_convert(ctx, &f, KILN_PIXEL_U8, &c), KILN_OK);
    assert_int_equal(c.hdr, 0);
    /* 0.9f is 0.899999976: 229.49999 rounds down */
    const uint8_t want8[16] = {0, 0, 64, 255, 0, 255, 0, 1, 128, 255, 0, 51, 255, 26, 229, 255};
    assert_memory_equal(c.pixels, want8, 16);
    kiln_image_free(&c);
    assert_int_equal(kiln_image_convert(ctx, &f, KILN_PIXEL_U16, &c), KILN_OK);
    assert_int_equal(((uint16_t *)c.pixels)[10], 1);
    assert_int_equal(((uint16_t *)c.pixels)[8], 32768);
    assert_int_equal(((uint16_t *)c.pixels)[3], 65535);
    kiln_image_free(&c);
    assert_int_equal(kiln_image_convert(ctx, &f, KILN_PIXEL_F32, &c), KILN_OK);
    assert_int_equal(c.hdr, 1);
    assert_int_equal(memcmp(c.pixels, f.pixels, sizeof fv), 0);
    kiln_image_free(&c);
    assert_int_equal(kiln_image_convert(ctx, &f, (kiln_pixel_type)3, &c), KILN_ERR_INVALID_ARGUMENT);
    kiln_image_free(&f);
    kiln_image_free(&a);
    kiln_image_free(&b);
    kiln_context_free(ctx);
}

/* the EXR reader decodes chunks in parallel: the result must not depend on the thread count */
static void exr_threads(void **state)
{
    (void)state;
    kiln_context *c1 = kt_context(1, KILN_BACKEND_CPU), *c4 = kt_context(4, KILN_BACKEND_CPU);
    kiln_image img, a, b;
    assert_int_equal(kiln_image_load(c1, kt_testdata("hdr/qtcreator_preview_landscape_256x128.hdr"), &img), KILN_OK);
    uint8_t *e;
    size_t en;
    assert_int_equal(exr_mem(c1, &img, EXR_COMPRESSION_PIZ, 0, 0, 0, &e, &en), KILN_OK);
    assert_int_equal(kiln_image_load_memory(c1, e, en, &a), KILN_OK);
    assert_int_equal(kiln_image_load_memory(c4, e, en, &b), KILN_OK);
    assert_memory_equal(a.pixels, b.pixels, img_bytes(&a));
    kiln_image_free(&a);
    kiln_image_free(&b);
    free(e);
    kiln_image_free(&img);
    kiln_context_free(c1);
    kiln_context_free(c4);
}

#ifdef KILN_HAVE_OPENEXR_CXX
/* Files written by the OpenEXR C++ library (an independent writer, every compression, a data window
 * that does not start at 0) must read as the C++ library reads them. */
static void exr_written_by_cxx(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(2, KILN_BACKEND_CPU);
    const int W = 61, H = 37, X0 = -3, Y0 = 5;
    ImfRgba *src = malloc(sizeof(ImfRgba) * W * H), *ref = malloc(sizeof(ImfRgba) * W * H);
    kt_rng r;
    kt_rng_seed(&r, 17);
    for (int i = 0; i < W * H; i++) {
        int x = i % W, y = i / W;
        ImfFloatToHalf((float)x / W * 2.0f + (float)(kt_rng_u32(&r) % 8) / 64.0f, &src[i].r);
        ImfFloatToHalf((float)y / H, &src[i].g);
        ImfFloatToHalf(0.25f + (float)((x * y) % 7) / 16.0f, &src[i].b);
        ImfFloatToHalf((float)((x + y) % 5) / 4.0f, &src[i].a);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s", kt_tmp("cxx.exr"));
    /* base pointer for the data window origin, computed without out-of-range pointer arithmetic */
    uintptr_t off = (uintptr_t)(((intptr_t)X0 + (intptr_t)Y0 * W) * (intptr_t)sizeof(ImfRgba));
    for (int comp = IMF_NO_COMPRESSION; comp <= IMF_DWAB_COMPRESSION; comp++) {
        for (int mode = 0; mode < 3; mode++) {
            int chans = mode == 0 ? IMF_WRITE_RGBA : mode == 1 ? IMF_WRITE_RGB : IMF_WRITE_YA;
            ImfHeader *hd = ImfNewHeader();
            ImfHeaderSetDataWindow(hd, X0, Y0, X0 + W - 1, Y0 + H - 1);
            ImfHeaderSetDisplayWindow(hd, 0, 0, 99, 99);
            ImfHeaderSetCompression(hd, comp);
            ImfOutputFile *o = ImfOpenOutputFile(path, hd, chans);
            ImfDeleteHeader(hd);
            assert_non_null(o);
            assert_true(ImfOutputSetFrameBuffer(o, (const ImfRgba *)((uintptr_t)src - off), 1, (size_t)W));
            assert_true(ImfOutputWritePixels(o, H));
            assert_true(ImfCloseOutputFile(o));
            /* the C++ library's own decode is the reference */
            ImfInputFile *in = ImfOpenInputFile(path);
            assert_non_null(in);
            assert_true(ImfInputSetFrameBuffer(in, (ImfRgba *)((uintptr_t)ref - off), 1, (size_t)W));
            assert_true(ImfInputReadPixels(in, Y0, Y0 + H - 1));
            ImfCloseInputFile(in);
            kiln_image img;
            kiln_status st = kiln_image_load(ctx, path, &img);
            if (st != KILN_OK) fail_msg("compression %d mode %d: %s", comp, mode, kiln_last_error(ctx));
            assert_int_equal(img.width, W);
            assert_int_equal(img.height, H);
            assert_int_equal(img.channels, mode == 0 ? 4 : mode == 1 ? 3 : 2);
            const float *q = img.pixels;
            for (int i = 0; i < W * H; i++) {
                const uint16_t *h = (const uint16_t *)&ref[i];
                for (int c = 0; c < 4; c++) {
                    float want = kiln__half_to_float(h[c]);
                    if (q[i * 4 + c] != want)
                        fail_msg("compression %d mode %d pixel %d channel %d: kiln %g, OpenEXR C++ %g", comp, mode, i,
                                 c, q[i * 4 + c], want);
                }
                if (mode == 0 && comp <= IMF_PXR24_COMPRESSION) /* lossless for half: the values written */
                    assert_memory_equal(&ref[i], &src[i], sizeof(ImfRgba));
            }
            kiln_image_free(&img);
        }
    }
    /* luminance + subsampled chroma: the Core path reads Y as grey and must skip RY/BY cleanly */
    ImfHeader *hd = ImfNewHeader();
    ImfHeaderSetDataWindow(hd, 0, 0, 63, 31);
    ImfHeaderSetDisplayWindow(hd, 0, 0, 63, 31);
    ImfHeaderSetCompression(hd, IMF_ZIP_COMPRESSION);
    ImfOutputFile *o = ImfOpenOutputFile(path, hd, IMF_WRITE_YC);
    ImfDeleteHeader(hd);
    assert_non_null(o);
    assert_true(ImfOutputSetFrameBuffer(o, src, 1, 64));
    assert_true(ImfOutputWritePixels(o, 32));
    assert_true(ImfCloseOutputFile(o));
    kiln_image img;
    assert_int_equal(kiln_image_load(ctx, path, &img), KILN_OK);
    assert_int_equal(img.channels, 1);
    for (int i = 0; i < 64 * 32; i++) {
        const float *q = (const float *)img.pixels + i * 4;
        assert_true(isfinite(q[0]) && q[0] == q[1] && q[1] == q[2] && q[3] == 1.0f);
    }
    kiln_image_free(&img);
    unlink(path);
    free(src);
    free(ref);
    kiln_context_free(ctx);
}
#endif

/* ---------------------------------------------------------------- fast readers vs stb_image -- */

/* kiln's own BMP path and the libpng PNG path (KILN_PNG_LIBPNG=1) against stb_image (KILN_BMP_FAST=0 / default):
 * the same pixels, channels and flags, from memory and (BMP: rows read on 4 threads) from a file;
 * the same status where either fails. */
static void load_both_ways_ref(kiln_context *ctx, kiln_context *ctx4, const uint8_t *d, size_t n, const uint8_t *ref,
                               size_t nref, const char *var, const char *what)
{
    /* var=0 (BMP) or unset (PNG): stb_image; then kiln's path (unset / var=1) */
    kiln_image a, b;
    const int png = !strcmp(var, "KILN_PNG_LIBPNG");
    if (!png) setenv(var, "0", 1);
    kiln_status sb = kiln_image_load_memory(ctx, ref, nref, &b);
    if (png) setenv(var, "1", 1);
    else unsetenv(var);
    kiln_status sa = kiln_image_load_memory(ctx, d, n, &a);
    if (sa != sb) fail_msg("%s: status %d, stb_image's %d (%s)", what, sa, sb, kiln_last_error(ctx));
    if (png && sa != KILN_OK) unsetenv(var);
    if (sa == KILN_OK) {
        assert_int_equal(a.width, b.width);
        assert_int_equal(a.height, b.height);
        assert_int_equal(a.type, b.type);
        assert_int_equal(a.channels, b.channels);
        assert_int_equal(a.srgb, b.srgb);
        if (memcmp(a.pixels, b.pixels, img_bytes(&a))) fail_msg("%s: pixels differ from stb_image's", what);
        char path[4096];
        snprintf(path, sizeof path, "%s", kt_tmp("fast.img"));
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(d, 1, n, f), n);
        fclose(f);
        kiln_image c;
        assert_int_equal(kiln_image_load(ctx4, path, &c), KILN_OK);
        if (memcmp(c.pixels, b.pixels, img_bytes(&b)) || c.channels != b.channels)
            fail_msg("%s: file path differs from stb_image", what);
        kiln_image_free(&c);
        if (png) unsetenv(var);
        unlink(path);
        kiln_image_free(&a);
        kiln_image_free(&b);
    }
}

static void load_both_ways(kiln_context *ctx, kiln_context *ctx4, const uint8_t *d, size_t n, const char *var,
                           const char *what)
{
    load_both_ways_ref(ctx, ctx4, d, n, d, n, var, what);
}

static void put_le(uint8_t *p, uint32_t v, int bytes)
{
    for (int i = 0; i < bytes; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void png_w_cb(png_structp p, png_bytep d, size_t n) { membuf_write(png_get_io_ptr(p), d, (int)n); }
static void png_w_flush(png_structp p) { (void)p; }

/* A PNG of colour type ct, depth, optional tRNS and Adam7, samples from the rng. */
static int write_png_variant(membuf *m, uint32_t w, uint32_t h, int ct, int depth, int trns, int il, kt_rng *r)
{
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    static const int samples[7] = {1, 0, 3, 1, 2, 0, 4};
    size_t rb = ((size_t)w * (size_t)samples[ct] * (size_t)depth + 7) / 8;
    uint8_t *rows = malloc(rb * h);
    png_bytep *rp = malloc(sizeof *rp * h);
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(rows);
        free(rp);
        return 0;
    }
    png_set_write_fn(png, m, png_w_cb, png_w_flush);
    png_set_IHDR(png, info, w, h, depth, ct, il ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    kt_rng_bytes(r, rows, rb * h);
    png_color pal[16];
    png_byte palpha[16];
    png_color_16 tc;
    memset(&tc, 0, sizeof tc);
    if (ct == 3) {
        for (int i = 0; i < 16; i++) pal[i].red = (png_byte)(i * 16), pal[i].green = (png_byte)(255 - i * 9), pal[i].blue = (png_byte)(i * 5), palpha[i] = (png_byte)(i * 17);
        png_set_PLTE(png, info, pal, 1 << (depth > 4 ? 4 : depth));
        /* indices within the palette */
        if (depth == 8)
            for (size_t i = 0; i < rb * h; i++) rows[i] &= 15;
        if (trns) png_set_tRNS(png, info, palpha, 1 << (depth > 4 ? 3 : depth - 1), NULL);
    } else if (trns) {
        /* a colour that occurs: the first pixel's */
        const int mx = (1 << depth) - 1;
        if (depth == 16) tc.gray = tc.red = (png_uint_16)(rows[0] << 8 | rows[1]);
        else if (depth == 8) tc.gray = tc.red = rows[0];
        else tc.gray = (png_uint_16)((rows[0] >> (8 - depth)) & mx);
        if (ct == 2) {
            tc.green = depth == 16 ? (png_uint_16)(rows[2] << 8 | rows[3]) : rows[1];
            tc.blue = depth == 16 ? (png_uint_16)(rows[4] << 8 | rows[5]) : rows[2];
        }
        png_set_tRNS(png, info, NULL, 0, &tc);
    }
    png_write_info(png, info);
    for (uint32_t y = 0; y < h; y++) rp[y] = rows + rb * y;
    png_write_image(png, rp);
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    free(rows);
    free(rp);
    return 1;
}

static void fast_readers_match_stb(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU), *ctx4 = kt_context(4, KILN_BACKEND_CPU);
    kt_rng r;
    kt_rng_seed(&r, 7);
    /* BMP: 24-bit (BITMAPCOREHEADER, INFO, V5) and 32-bit BI_RGB, bottom-up and top-down, padded rows,
     * 32-bit alpha varied and all zero; 300 rows so the file path's rows span several chunks */
    static const uint32_t hszs[] = {12, 40, 108, 124};
    static const uint32_t widths[] = {1, 7, 130};
    for (size_t hi = 0; hi < 4; hi++)
        for (int bpp = 24; bpp <= 32; bpp += 8)
            for (int down = 0; down < 2; down++)
                for (size_t wi = 0; wi < 3; wi++)
                    for (int zero_a = 0; zero_a < 2; zero_a++) {
                        const uint32_t hsz = hszs[hi], w = widths[wi], h = wi == 2 ? 300 : 5;
                        if ((hsz == 12 && (bpp == 32 || down)) || (bpp == 24 && zero_a)) continue;
                        const size_t stride = ((size_t)w * (size_t)bpp / 8 + 3) & ~(size_t)3, off = 14 + hsz;
                        const size_t n = off + stride * h;
                        uint8_t *d = calloc(1, n);
                        d[0] = 'B', d[1] = 'M';
                        put_le(d + 2, (uint32_t)n, 4);
                        put_le(d + 10, (uint32_t)off, 4);
                        put_le(d + 14, hsz, 4);
                        if (hsz == 12) {
                            put_le(d + 18, w, 2), put_le(d + 20, h, 2), put_le(d + 22, 1, 2), put_le(d + 24, (uint32_t)bpp, 2);
                        } else {
                            put_le(d + 18, w, 4), put_le(d + 22, down ? (uint32_t)-(int32_t)h : h, 4);
                            put_le(d + 26, 1, 2), put_le(d + 28, (uint32_t)bpp, 2);
                        }
                        kt_rng_bytes(&r, d + off, stride * h);
                        if (zero_a)
                            for (size_t y = 0; y < h; y++)
                                for (size_t x = 0; x < w; x++) d[off + y * stride + x * 4 + 3] = 0;
                        char what[96];
                        snprintf(what, sizeof what, "BMP hsz %u bpp %d %s w %u%s", hsz, bpp, down ? "top-down" : "bottom-up",
                                 w, zero_a ? " alpha 0" : "");
                        if (down) {
                            /* stb_image 2.27 rejects top-down BMPs (its info call returns the negative height):
                             * the reference is the same picture stored bottom-up */
                            uint8_t *up = malloc(n);
                            memcpy(up, d, off);
                            put_le(up + 22, h, 4);
                            for (size_t y = 0; y < h; y++) memcpy(up + off + y * stride, d + off + (h - 1 - y) * stride, stride);
                            load_both_ways_ref(ctx, ctx4, d, n, up, n, "KILN_BMP_FAST", what);
                            free(up);
                        } else {
                            load_both_ways(ctx, ctx4, d, n, "KILN_BMP_FAST", what);
                        }
                        /* not taken by the fast path (stb_image decides): planes 2, a gap before the pixels */
                        if (hsz == 40 && wi == 1) {
                            put_le(d + 26, 2, 2);
                            load_both_ways(ctx, ctx4, d, n, "KILN_BMP_FAST", "BMP planes 2");
                            put_le(d + 26, 1, 2);
                            put_le(d + 10, (uint32_t)off - 2, 4);
                            load_both_ways(ctx, ctx4, d, n, "KILN_BMP_FAST", "BMP offset inside the header");
                        }
                        free(d);
                    }
    /* PNG: every colour type and depth, with and without tRNS, Adam7 */
    static const int cts[] = {0, 2, 3, 4, 6};
    for (size_t ci = 0; ci < 5; ci++)
        for (int depth = 1; depth <= 16; depth *= 2)
            for (int trns = 0; trns < 2; trns++)
                for (int il = 0; il < 2; il++) {
                    const int ct = cts[ci];
                    if ((ct == 3 && depth == 16) || (ct != 0 && ct != 3 && depth < 8) || (trns && (ct == 4 || ct == 6)))
                        continue;
                    membuf m = {0};
                    assert_true(write_png_variant(&m, 19, 11, ct, depth, trns, il, &r));
                    char what[96];
                    snprintf(what, sizeof what, "PNG type %d depth %d%s%s", ct, depth, trns ? " tRNS" : "", il ? " Adam7" : "");
                    load_both_ways(ctx, ctx4, m.data, m.size, "KILN_PNG_LIBPNG", what);
                    /* a broken CRC and a truncated IDAT: the same result as stb_image's */
                    m.data[29] ^= 0x55; /* IHDR's CRC */
                    load_both_ways(ctx, ctx4, m.data, m.size, "KILN_PNG_LIBPNG", "PNG bad CRC");
                    m.data[29] ^= 0x55;
                    free(m.data);
                }
    kiln_context_free(ctx4);
    kiln_context_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(srgb_tables),       cmocka_unit_test(load_testdata),  cmocka_unit_test(hdr_matches_stb),
        cmocka_unit_test(exr_testdata_roundtrip), cmocka_unit_test(png_roundtrip), cmocka_unit_test(exr_roundtrip),
        cmocka_unit_test(exr_from_ldr),      cmocka_unit_test(jpeg_tga_bmp),   cmocka_unit_test(truncated_files),
        cmocka_unit_test(random_bytes),      cmocka_unit_test(huge_headers),   cmocka_unit_test(load_errors),
        cmocka_unit_test(save_errors),       cmocka_unit_test(convert),        cmocka_unit_test(exr_threads),
        cmocka_unit_test(fast_readers_match_stb),
#ifdef KILN_HAVE_OPENEXR_CXX
        cmocka_unit_test(exr_written_by_cxx),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

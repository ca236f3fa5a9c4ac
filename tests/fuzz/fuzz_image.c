/* fuzz_image.c - libFuzzer target for kiln_image_load_memory (PNG, JPEG, TGA, BMP, Radiance HDR,
 * OpenEXR). Images that load are also checked for sanity and, when small, written to PNG and EXR in
 * memory and read back (PNG must round-trip exactly).
 *
 * stb_image's implementation is compiled into this target from the Debian header (the same 2.27
 * source as libstb.a), so libFuzzer gets coverage and ASan sees stb_image's own memory accesses;
 * the object's definitions take precedence over libstb.a's at link time.
 *
 * Seeds: with KILN_FUZZ_WRITE_SEEDS=DIR, LLVMFuzzerInitialize writes small files of every input kind
 * into DIR (OpenEXR with each compression kiln can write, scanline and tiled; PNG 8/16-bit; JPEG, TGA,
 * BMP from stb_image_write; Radiance RLE and flat). tests/fuzz/run.sh uses them.
 *
 * build: cmake -S . -B build-fuzz -DKILN_FUZZ=ON -DCMAKE_C_COMPILER=clang -DKILN_TESTS=OFF
 *        cmake --build build-fuzz --target fuzz_image
 * run:   tests/fuzz/run.sh build-fuzz 60, or ./build-fuzz/fuzz_image -max_len=65536 CORPUS SEEDS */
#include "kiln/kiln.h"
#include "image/image_io.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stb/stb_image_write.h>

#ifndef KILN_FUZZ_LIBSTB
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Weverything"
#endif
#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>
#if defined(__clang__)
#pragma clang diagnostic pop
#endif
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static kiln_context *fuzz_context(void)
{
    static kiln_context *ctx; /* the harness may keep state; the library does not */
    if (!ctx) {
        kiln_context_params p;
        kiln_context_params_init(&p);
        p.threads = 2; /* exercises the parallel EXR chunk decoder */
        p.backend = KILN_BACKEND_CPU;
        if (kiln_context_create(&p, &ctx) != KILN_OK) abort();
    }
    return ctx;
}

static const char *g_seed_dir;

static void seed_file(const char *name, const void *data, size_t size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", g_seed_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(data, 1, size, f);
    fclose(f);
}

typedef struct seed_buf {
    uint8_t data[1 << 16];
    size_t size;
} seed_buf;

static void seed_write(void *user, void *data, int size)
{
    seed_buf *b = user;
    if (size > 0 && b->size + (size_t)size <= sizeof b->data) {
        memcpy(b->data + b->size, data, (size_t)size);
        b->size += (size_t)size;
    }
}

static void write_seeds(void)
{
    kiln_context *ctx = fuzz_context();
    kiln_image img;
    if (kiln_image_alloc(ctx, &img, 13, 9, KILN_PIXEL_F32) != KILN_OK) return;
    float *p = img.pixels;
    for (int i = 0; i < 13 * 9 * 4; i++) p[i] = (float)((i * 37) % 17) / 8.0f;
    for (int comp = 0; comp <= 7; comp++)
        for (int tiled = 0; tiled < 2; tiled++)
            for (uint32_t ch = 1; ch <= 4; ch += 3) {
                if (tiled && comp >= 6) continue; /* OpenEXRCore 3.1.5 writes B44 edge tiles its reader rejects */
                img.channels = ch;
                kiln__exr_options o = {comp, comp & 1, tiled ? 4u : 0u, tiled ? 4u : 0u};
                uint8_t *d;
                size_t n;
                if (kiln__exr_encode(ctx, &img, &o, "seed", &d, &n) == KILN_OK) {
                    char name[64];
                    snprintf(name, sizeof name, "kiln-c%d-t%d-ch%u.exr", comp, tiled, ch);
                    seed_file(name, d, n);
                    free(d);
                }
            }
    kiln_image u8, u16;
    if (kiln_image_convert(ctx, &img, KILN_PIXEL_U8, &u8) == KILN_OK) {
        for (uint32_t ch = 1; ch <= 4; ch++) {
            uint8_t *d;
            size_t n;
            u8.channels = ch;
            if (kiln__png_encode(ctx, &u8, "seed", &d, &n) == KILN_OK) {
                char name[64];
                snprintf(name, sizeof name, "kiln-8bit-ch%u.png", ch);
                seed_file(name, d, n);
                free(d);
            }
        }
        static seed_buf b;
        b.size = 0;
        if (stbi_write_jpg_to_func(seed_write, &b, 13, 9, 4, u8.pixels, 80)) seed_file("stbw.jpg", b.data, b.size);
        b.size = 0;
        if (stbi_write_jpg_to_func(seed_write, &b, 13, 9, 1, u8.pixels, 80)) seed_file("stbw-grey.jpg", b.data, b.size);
        b.size = 0;
        if (stbi_write_tga_to_func(seed_write, &b, 13, 9, 4, u8.pixels)) seed_file("stbw.tga", b.data, b.size);
        b.size = 0;
        if (stbi_write_bmp_to_func(seed_write, &b, 13, 9, 3, u8.pixels)) seed_file("stbw.bmp", b.data, b.size);
        /* 32-bit BI_RGB, top-down (kiln's own BMP path; stb_image_write makes V4 bitfields for 4 channels) */
        static uint8_t bmp32[54 + 13 * 9 * 4];
        memset(bmp32, 0, 54);
        static const uint8_t bmp_head[] = {'B', 'M', sizeof bmp32 & 255, sizeof bmp32 >> 8, 0, 0, 0, 0, 0, 0, 54, 0, 0, 0,
                                           40, 0, 0, 0, 13, 0, 0, 0, 0xf7, 0xff, 0xff, 0xff, 1, 0, 32, 0};
        memcpy(bmp32, bmp_head, sizeof bmp_head);
        const uint8_t *px8 = u8.pixels;
        for (size_t i = 0; i < 13 * 9; i++) {
            bmp32[54 + i * 4] = px8[i * 4 + 2];
            bmp32[54 + i * 4 + 1] = px8[i * 4 + 1];
            bmp32[54 + i * 4 + 2] = px8[i * 4];
            bmp32[54 + i * 4 + 3] = px8[i * 4 + 3];
        }
        seed_file("bi-rgb32-topdown.bmp", bmp32, sizeof bmp32);
        kiln_image_free(&u8);
    }
    if (kiln_image_convert(ctx, &img, KILN_PIXEL_U16, &u16) == KILN_OK) {
        uint8_t *d;
        size_t n;
        u16.channels = 3;
        if (kiln__png_encode(ctx, &u16, "seed", &d, &n) == KILN_OK) {
            seed_file("kiln-16bit.png", d, n);
            free(d);
        }
        kiln_image_free(&u16);
    }
    kiln_image_free(&img);
    /* Radiance: one run-length scanline layout and one flat */
    static uint8_t hdr[512];
    size_t n = (size_t)snprintf((char *)hdr, sizeof hdr, "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 2 +X 16\n");
    for (int y = 0; y < 2; y++) {
        const uint8_t line[4] = {2, 2, 0, 16};
        memcpy(hdr + n, line, 4);
        n += 4;
        for (int c = 0; c < 4; c++) {
            hdr[n++] = 128 + 8; /* a run of 8 */
            hdr[n++] = (uint8_t)(c == 3 ? 129 : 40 * c + y);
            hdr[n++] = 8; /* 8 literal bytes */
            for (int x = 0; x < 8; x++) hdr[n++] = (uint8_t)(x * 16 + c);
        }
    }
    seed_file("rle.hdr", hdr, n);
    n = (size_t)snprintf((char *)hdr, sizeof hdr, "#?RGBE\nFORMAT=32-bit_rle_rgbe\n\n-Y 3 +X 5\n");
    for (int i = 0; i < 60; i++) hdr[n++] = (uint8_t)(i * 7 + 128);
    seed_file("flat.hdr", hdr, n);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    g_seed_dir = getenv("KILN_FUZZ_WRITE_SEEDS");
    if (g_seed_dir && *g_seed_dir) write_seeds();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kiln_context *ctx = fuzz_context();
    /* PNG: stb_image (the default) for even sizes, the opt-in libpng path (KILN_PNG_LIBPNG=1) for odd */
    setenv("KILN_PNG_LIBPNG", (size & 1) ? "1" : "0", 1);
    kiln_image img;
    if (kiln_image_load_memory(ctx, data, size, &img) != KILN_OK) {
        if (img.pixels || !kiln_last_error(ctx)[0]) abort(); /* failures leave nothing and say why */
        return 0;
    }
    if (!img.pixels || img.width == 0 || img.height == 0 || img.channels < 1 || img.channels > 4) abort();
    if ((uint64_t)img.width * img.height <= 65536) {
        uint8_t *buf = NULL;
        size_t n = 0;
        if (kiln__png_encode(ctx, &img, "fuzz.png", &buf, &n) == KILN_OK) {
            kiln_image back;
            if (kiln_image_load_memory(ctx, buf, n, &back) != KILN_OK) abort();
            /* loaders replicate grey into G and B and set a missing alpha to max, so PNG round-trips */
            if (img.type != KILN_PIXEL_F32 &&
                (back.type != img.type || memcmp(back.pixels, img.pixels, (size_t)img.width * img.height * 4 * img.type)))
                abort();
            kiln_image_free(&back);
            free(buf);
        }
        kiln__exr_options o = {3 /* ZIP */, 1, 0, 0};
        if (kiln__exr_encode(ctx, &img, &o, "fuzz.exr", &buf, &n) == KILN_OK) {
            kiln_image back;
            if (kiln_image_load_memory(ctx, buf, n, &back) != KILN_OK) abort();
            kiln_image_free(&back);
            free(buf);
        }
    }
    kiln_image_free(&img);
    return 0;
}

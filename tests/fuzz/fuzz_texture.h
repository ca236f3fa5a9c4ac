/* fuzz_texture.h - shared body of the container fuzz targets fuzz_ktx2.c, fuzz_dds.c and fuzz_ktx1.c.
 *
 * Each target forces its container's identifier onto the input (so every mutation exercises that
 * parser), then runs kiln_texture_load_memory and kiln_validate_memory, and when the texture loads:
 * kiln_describe_memory (text and JSON), and a save/load round trip through KTX2 (and DDS when the format
 * has a DXGI number) that must reproduce the data exactly (abort otherwise).
 *
 * Seeds: with KILN_FUZZ_WRITE_SEEDS=DIR in the environment, LLVMFuzzerInitialize writes small kiln-made
 * files of the target's container into DIR (tests/fuzz/run.sh does this with -runs=0). */
#ifndef KILN_FUZZ_TEXTURE_H
#define KILN_FUZZ_TEXTURE_H

#include "kiln/kiln.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static kiln_context *fuzz_context(void)
{
    static kiln_context *ctx; /* the harness keeps state; the library does not */
    if (!ctx) {
        kiln_context_params p;
        kiln_context_params_init(&p);
        p.threads = 1;
        p.backend = KILN_BACKEND_CPU;
        if (kiln_context_create(&p, &ctx) != KILN_OK) abort();
    }
    return ctx;
}

static void fuzz_ignore_report(void *user, int severity, const char *message)
{
    (void)user;
    (void)severity;
    if (!message || !message[0]) abort(); /* every report must say something */
}

static int fuzz_same(const kiln_texture *a, const kiln_texture *b)
{
    if (a->width != b->width || a->height != b->height || a->levels != b->levels || a->layers != b->layers ||
        a->faces != b->faces || a->data_size != b->data_size)
        return 0;
    for (uint32_t l = 0; l < a->levels; l++)
        if (a->level_size[l] != b->level_size[l] ||
            memcmp(a->data + a->level_offset[l], b->data + b->level_offset[l], a->level_size[l]))
            return 0;
    return 1;
}

static void fuzz_round_trip(kiln_context *ctx, const kiln_texture *t, kiln_container c)
{
    uint8_t *buf = NULL;
    size_t n = 0;
    kiln_save_params p;
    kiln_save_params_init(&p);
    kiln_status st = kiln_texture_save_memory(ctx, t, c, &p, &buf, &n);
    if (st != KILN_OK) {
        if (c == KILN_CONTAINER_DDS && st == KILN_ERR_UNSUPPORTED) return; /* ETC/EAC, 3-D arrays: no DDS form */
        if (c == KILN_CONTAINER_KTX2 && st == KILN_ERR_INVALID_ARGUMENT && strstr(kiln_last_error(ctx), "key/value"))
            return; /* the input's metadata is not valid KTX2 metadata (refused with a message) */
        fprintf(stderr, "re-saving a loaded texture failed: %s\n", kiln_last_error(ctx));
        abort();
    }
    if (kiln_validate_memory(ctx, buf, n, NULL, NULL) != KILN_OK) {
        fprintf(stderr, "kiln's own output does not validate: %s\n", kiln_last_error(ctx));
        abort();
    }
    kiln_texture back;
    if (kiln_texture_load_memory(ctx, buf, n, &back) != KILN_OK || !fuzz_same(t, &back)) {
        fprintf(stderr, "round trip changed the texture: %s\n", kiln_last_error(ctx));
        abort();
    }
    kiln_texture_free(&back);
    kiln_free(buf);
}

static void fuzz_one(const uint8_t *data, size_t size, const uint8_t *magic, size_t magic_len)
{
    kiln_context *ctx = fuzz_context();
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) return;
    memcpy(copy, data, size);
    if (size >= magic_len) memcpy(copy, magic, magic_len);
    kiln_texture t;
    kiln_status st = kiln_texture_load_memory(ctx, copy, size, &t);
    if (st != KILN_OK && !kiln_last_error(ctx)[0]) abort(); /* every failure explains itself */
    kiln_validate_memory(ctx, copy, size, fuzz_ignore_report, NULL);
    char *text = NULL;
    if (kiln_describe_memory(ctx, copy, size, &text) == KILN_OK) kiln_free(text);
    if (st == KILN_OK) {
        if (kiln_describe_memory_json(ctx, copy, size, &text) == KILN_OK) kiln_free(text);
        if (t.data_size <= (1u << 20)) {
            fuzz_round_trip(ctx, &t, KILN_CONTAINER_KTX2);
            fuzz_round_trip(ctx, &t, KILN_CONTAINER_DDS);
        }
        kiln_texture_free(&t);
    }
    free(copy);
}

/* ---- seeds */

static void fuzz_write(const char *dir, const char *name, const uint8_t *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(p, 1, n, f);
    fclose(f);
}

/* Small textures of a spread of formats and shapes, saved in container c (KTX2 or DDS). */
__attribute__((unused)) static void fuzz_seed_textures(const char *dir, kiln_container c)
{
    kiln_context *ctx = fuzz_context();
    static const struct {
        kiln_format f;
        uint32_t w, h, levels, layers, faces;
        int zstd, dx10, premultiplied;
    } v[] = {
        {KILN_FORMAT_BC1_RGB_UNORM, 13, 7, 0, 1, 1, 0, 0, 0},  {KILN_FORMAT_BC1_RGBA_UNORM, 4, 4, 1, 1, 1, 0, 1, 0},
        {KILN_FORMAT_BC3_UNORM, 8, 8, 0, 1, 6, 3, 0, 1},       {KILN_FORMAT_BC4_SNORM, 5, 3, 2, 3, 1, 0, 1, 0},
        {KILN_FORMAT_BC5_UNORM, 8, 4, 0, 1, 1, 1, 0, 0},       {KILN_FORMAT_BC6H_SFLOAT, 4, 4, 1, 1, 1, 0, 1, 0},
        {KILN_FORMAT_BC7_SRGB, 12, 8, 0, 2, 1, 19, 1, 0},      {KILN_FORMAT_ETC2_RGBA8_SRGB, 8, 8, 0, 1, 1, 0, 0, 0},
        {KILN_FORMAT_EAC_RG11_SNORM, 4, 8, 0, 1, 1, 2, 0, 0},  {KILN_FORMAT_ETC1_UNORM, 16, 4, 0, 1, 1, 0, 0, 0},
        {KILN_FORMAT_R8_UNORM, 3, 5, 0, 1, 1, 0, 0, 0},        {KILN_FORMAT_RG8_UNORM, 2, 2, 1, 1, 1, 0, 1, 0},
        {KILN_FORMAT_RGBA8_UNORM, 3, 3, 0, 1, 1, 0, 0, 0},     {KILN_FORMAT_RGBA8_SRGB, 2, 1, 0, 1, 1, 0, 1, 0},
        {KILN_FORMAT_RGBA16F, 2, 2, 0, 1, 1, 5, 0, 0},         {KILN_FORMAT_RGBA32F, 1, 1, 1, 1, 1, 0, 0, 0},
    };
    uint32_t seed = 12345;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        kiln_texture t;
        if (kiln_texture_alloc(ctx, &t, v[i].f, v[i].w, v[i].h, v[i].levels, v[i].layers, v[i].faces) != KILN_OK) continue;
        for (size_t b = 0; b < t.data_size; b++) {
            seed = seed * 1664525u + 1013904223u;
            t.data[b] = (uint8_t)(seed >> 24);
        }
        t.is_array = v[i].layers > 1;
        t.premultiplied = v[i].premultiplied;
        if (i % 3 == 0) kiln_texture_set_kv(ctx, &t, "KTXorientation", "rd");
        kiln_save_params p;
        kiln_save_params_init(&p);
        if (c == KILN_CONTAINER_KTX2) p.zstd_level = v[i].zstd;
        p.dds_header = v[i].dx10 ? KILN_DDS_HEADER_DX10 : KILN_DDS_HEADER_AUTO;
        uint8_t *buf = NULL;
        size_t n = 0;
        if (kiln_texture_save_memory(ctx, &t, c, &p, &buf, &n) == KILN_OK) {
            char name[64];
            snprintf(name, sizeof name, "seed-%02zu.%s", i, c == KILN_CONTAINER_DDS ? "dds" : "ktx2");
            fuzz_write(dir, name, buf, n);
            kiln_free(buf);
        }
        kiln_texture_free(&t);
    }
}

#endif

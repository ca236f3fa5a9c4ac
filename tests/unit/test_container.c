/* test_container.c - KTX2 / DDS / KTX 1 containers: round trips of every format (mips, cube maps,
 * arrays, zstd, legacy and DX10 DDS), DFD words against the reference table in
 * shared/notes/containers.md (transcribed here independently of src/container/dfd.c), a hand-built
 * KTX2 file, golden hashes of written files, KTX 1 files built by hand in both byte orders, corrupt
 * inputs (every truncation, flipped bytes, absurd sizes, bad offsets, unknown formats), validation
 * and descriptions. */
#include "support.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

/* Golden values of golden_hashes() (FNV-1a 64 of the written files). */
#define GOLDEN_KTX2_SIZE 432
#define GOLDEN_KTX2_HASH 0xef87caf11ba20b53ull
#define GOLDEN_DDS_SIZE 288
#define GOLDEN_DDS_HASH 0x7fb58941449c72d5ull
#define GOLDEN_DX10_SIZE 308
#define GOLDEN_DX10_HASH 0x8b4dca4dc4694a19ull

/* ---------------------------------------------------------------- helpers */

static bool contains(const uint8_t *p, size_t n, const char *s)
{
    size_t k = strlen(s);
    for (size_t i = 0; i + k <= n; i++)
        if (!memcmp(p + i, s, k)) return true;
    return false;
}


static uint32_t rd32(const uint8_t *p) { return p[0] | (p[1] << 8) | (p[2] << 16) | ((uint32_t)p[3] << 24); }
static uint64_t rd64(const uint8_t *p) { return rd32(p) | ((uint64_t)rd32(p + 4) << 32); }
static void wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}
static void wr64(uint8_t *p, uint64_t v)
{
    wr32(p, (uint32_t)v);
    wr32(p + 4, (uint32_t)(v >> 32));
}

static void make_tex(kiln_context *ctx, kiln_texture *t, kiln_format f, uint32_t w, uint32_t h, uint32_t levels,
                     uint32_t layers, uint32_t faces, uint64_t seed)
{
    assert_int_equal(kiln_texture_alloc(ctx, t, f, w, h, levels, layers, faces), KILN_OK);
    kt_rng r;
    kt_rng_seed(&r, seed);
    kt_rng_bytes(&r, t->data, t->data_size);
    t->is_array = layers > 1;
}

static kiln_format ktx2_expected_format(kiln_format f)
{
    if (f == KILN_FORMAT_ETC1_UNORM) return KILN_FORMAT_ETC2_RGB8_UNORM;
    if (f == KILN_FORMAT_ETC1_SRGB) return KILN_FORMAT_ETC2_RGB8_SRGB;
    return f;
}

static void assert_same(const kiln_texture *a, const kiln_texture *b, kiln_format expect_format)
{
    assert_int_equal(b->format, expect_format);
    assert_int_equal(a->width, b->width);
    assert_int_equal(a->height, b->height);
    assert_int_equal(a->depth ? a->depth : 1, b->depth);
    assert_int_equal(a->layers, b->layers);
    assert_int_equal(a->faces, b->faces);
    assert_int_equal(a->levels, b->levels);
    assert_int_equal(a->is_array, b->is_array);
    assert_int_equal(a->premultiplied, b->premultiplied);
    assert_int_equal(a->data_size, b->data_size);
    for (uint32_t l = 0; l < a->levels; l++) {
        assert_int_equal(a->level_size[l], b->level_size[l]);
        assert_memory_equal(a->data + a->level_offset[l], b->data + b->level_offset[l], a->level_size[l]);
    }
}

typedef struct counts {
    int errors, warnings;
    char first[512];
} counts;

static void count_report(void *user, int severity, const char *msg)
{
    counts *c = user;
    if (severity >= 2) {
        if (!c->errors) snprintf(c->first, sizeof c->first, "%s", msg);
        c->errors++;
    } else {
        c->warnings++;
    }
}

static counts validate(kiln_context *ctx, const uint8_t *p, size_t n)
{
    counts c = {0, 0, ""};
    kiln_status st = kiln_validate_memory(ctx, p, n, count_report, &c);
    assert_int_equal(st == KILN_OK, c.errors == 0);
    return c;
}

static void expect_valid(kiln_context *ctx, const uint8_t *p, size_t n)
{
    counts c = validate(ctx, p, n);
    if (c.errors) fprintf(stderr, "unexpected validation error: %s\n", c.first);
    assert_int_equal(c.errors, 0);
}

static void save(kiln_context *ctx, const kiln_texture *t, kiln_container c, int zstd, kiln_dds_header hdr,
                 uint8_t **out, size_t *n)
{
    kiln_save_params p;
    kiln_save_params_init(&p);
    p.zstd_level = zstd;
    p.dds_header = hdr;
    kiln_status st = kiln_texture_save_memory(ctx, t, c, &p, out, n);
    if (st != KILN_OK) fprintf(stderr, "save failed: %s\n", kiln_last_error(ctx));
    assert_int_equal(st, KILN_OK);
}

/* ---------------------------------------------------------------- DFD reference (notes §1.3) */

typedef struct dfd_ref {
    kiln_format f;
    uint32_t w2, bytes, ns;
    uint32_t s[4][3]; /* word0, lower, upper */
} dfd_ref;

#define U 0u, 0xFFFFFFFFu
#define S 0x80000000u, 0x7FFFFFFFu
#define UF 0u, 0x3F800000u
#define SF 0xBF800000u, 0x3F800000u
#define U8 0u, 255u
static const dfd_ref k_dfd[] = {
    {KILN_FORMAT_BC1_RGB_UNORM, 0x00010180, 8, 1, {{0x003F0000, U}}},
    {KILN_FORMAT_BC1_RGB_SRGB, 0x00020180, 8, 1, {{0x003F0000, U}}},
    {KILN_FORMAT_BC1_RGBA_UNORM, 0x00010180, 8, 1, {{0x013F0000, U}}},
    {KILN_FORMAT_BC1_RGBA_SRGB, 0x00020180, 8, 1, {{0x013F0000, U}}},
    {KILN_FORMAT_BC2_UNORM, 0x00010181, 16, 2, {{0x0F3F0000, U}, {0x003F0040, U}}},
    {KILN_FORMAT_BC2_SRGB, 0x00020181, 16, 2, {{0x1F3F0000, U}, {0x003F0040, U}}},
    {KILN_FORMAT_BC3_UNORM, 0x00010182, 16, 2, {{0x0F3F0000, U}, {0x003F0040, U}}},
    {KILN_FORMAT_BC3_SRGB, 0x00020182, 16, 2, {{0x1F3F0000, U}, {0x003F0040, U}}},
    {KILN_FORMAT_BC4_UNORM, 0x00010183, 8, 1, {{0x003F0000, U}}},
    {KILN_FORMAT_BC4_SNORM, 0x00010183, 8, 1, {{0x403F0000, S}}},
    {KILN_FORMAT_BC5_UNORM, 0x00010184, 16, 2, {{0x003F0000, U}, {0x013F0040, U}}},
    {KILN_FORMAT_BC5_SNORM, 0x00010184, 16, 2, {{0x403F0000, S}, {0x413F0040, S}}},
    {KILN_FORMAT_BC6H_UFLOAT, 0x00010185, 16, 1, {{0x807F0000, UF}}},
    {KILN_FORMAT_BC6H_SFLOAT, 0x00010185, 16, 1, {{0xC07F0000, SF}}},
    {KILN_FORMAT_BC7_UNORM, 0x00010186, 16, 1, {{0x007F0000, U}}},
    {KILN_FORMAT_BC7_SRGB, 0x00020186, 16, 1, {{0x007F0000, U}}},
    {KILN_FORMAT_ETC1_UNORM, 0x000101A1, 8, 1, {{0x023F0000, U}}},
    {KILN_FORMAT_ETC1_SRGB, 0x000201A1, 8, 1, {{0x023F0000, U}}},
    {KILN_FORMAT_ETC2_RGB8_UNORM, 0x000101A1, 8, 1, {{0x023F0000, U}}},
    {KILN_FORMAT_ETC2_RGB8_SRGB, 0x000201A1, 8, 1, {{0x023F0000, U}}},
    {KILN_FORMAT_ETC2_RGB8A1_UNORM, 0x000101A1, 8, 2, {{0x023F0000, U}, {0x0F3F0000, U}}},
    {KILN_FORMAT_ETC2_RGB8A1_SRGB, 0x000201A1, 8, 2, {{0x023F0000, U}, {0x1F3F0000, U}}},
    {KILN_FORMAT_ETC2_RGBA8_UNORM, 0x000101A1, 16, 2, {{0x0F3F0000, U}, {0x023F0040, U}}},
    {KILN_FORMAT_ETC2_RGBA8_SRGB, 0x000201A1, 16, 2, {{0x1F3F0000, U}, {0x023F0040, U}}},
    {KILN_FORMAT_EAC_R11_UNORM, 0x000101A1, 8, 1, {{0x003F0000, U}}},
    {KILN_FORMAT_EAC_R11_SNORM, 0x000101A1, 8, 1, {{0x403F0000, S}}},
    {KILN_FORMAT_EAC_RG11_UNORM, 0x000101A1, 16, 2, {{0x003F0000, U}, {0x013F0040, U}}},
    {KILN_FORMAT_EAC_RG11_SNORM, 0x000101A1, 16, 2, {{0x403F0000, S}, {0x413F0040, S}}},
    {KILN_FORMAT_R8_UNORM, 0x00010101, 1, 1, {{0x00070000, U8}}},
    {KILN_FORMAT_RG8_UNORM, 0x00010101, 2, 2, {{0x00070000, U8}, {0x01070008, U8}}},
    {KILN_FORMAT_RGBA8_UNORM, 0x00010101, 4, 4, {{0x00070000, U8}, {0x01070008, U8}, {0x02070010, U8}, {0x0F070018, U8}}},
    {KILN_FORMAT_RGBA8_SRGB, 0x00020101, 4, 4, {{0x00070000, U8}, {0x01070008, U8}, {0x02070010, U8}, {0x1F070018, U8}}},
    {KILN_FORMAT_RGBA16F, 0x00010101, 8, 4, {{0xC00F0000, SF}, {0xC10F0010, SF}, {0xC20F0020, SF}, {0xCF0F0030, SF}}},
    {KILN_FORMAT_RGBA32F, 0x00010101, 16, 4, {{0xC01F0000, SF}, {0xC11F0020, SF}, {0xC21F0040, SF}, {0xCF1F0060, SF}}},
};
#undef U
#undef S
#undef UF
#undef SF
#undef U8

static void dfd_words_match_reference(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    assert_int_equal(sizeof k_dfd / sizeof k_dfd[0], KILN_FORMAT_COUNT - 1); /* every format of the table */
    for (size_t i = 0; i < sizeof k_dfd / sizeof k_dfd[0]; i++) {
        const dfd_ref *r = &k_dfd[i];
        const kiln_format_info *fi = kiln_format_get_info(r->f);
        for (int pm = 0; pm < 2; pm++) {
            kiln_texture t;
            make_tex(ctx, &t, r->f, 8, 8, 1, 1, 1, 7);
            t.premultiplied = pm;
            uint8_t *buf;
            size_t n;
            save(ctx, &t, KILN_CONTAINER_KTX2, 0, KILN_DDS_HEADER_AUTO, &buf, &n);
            uint32_t vk = rd32(buf + 12);
            assert_int_equal(vk, fi->vk_format);
            uint32_t dfd_off = rd32(buf + 48), dfd_len = rd32(buf + 52);
            assert_int_equal(dfd_off, 80 + 24);
            assert_int_equal(dfd_len, 28 + 16 * r->ns);
            const uint8_t *d = buf + dfd_off;
            assert_int_equal(rd32(d), dfd_len);                        /* dfdTotalSize */
            assert_int_equal(rd32(d + 4), 0);                          /* Khronos, basic */
            assert_int_equal(rd32(d + 8), 2 | ((24 + 16 * r->ns) << 16)); /* version 2, block size */
            assert_int_equal(rd32(d + 12), r->w2 | ((uint32_t)pm << 24));
            assert_int_equal(rd32(d + 16), (fi->flags & KILN_FF_COMPRESSED) ? 0x0303u : 0u);
            assert_int_equal(rd32(d + 20), r->bytes);
            assert_int_equal(rd32(d + 24), 0);
            for (uint32_t s = 0; s < r->ns; s++) {
                const uint8_t *sp = d + 28 + 16 * s;
                assert_int_equal(rd32(sp), r->s[s][0]);
                assert_int_equal(rd32(sp + 4), 0);
                assert_int_equal(rd32(sp + 8), r->s[s][1]);
                assert_int_equal(rd32(sp + 12), r->s[s][2]);
            }
            /* typeSize */
            assert_int_equal(rd32(buf + 16), (r->f == KILN_FORMAT_RGBA16F) ? 2u : (r->f == KILN_FORMAT_RGBA32F) ? 4u : 1u);
            kiln_texture back;
            assert_int_equal(kiln_texture_load_memory(ctx, buf, n, &back), KILN_OK);
            assert_int_equal(back.premultiplied, pm);
            kiln_texture_free(&back);
            kiln_free(buf);
            kiln_texture_free(&t);
        }
    }
    kiln_context_free(ctx);
}

/* ---------------------------------------------------------------- KTX2 round trips */

static void ktx2_round_trip_all_formats(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(2, KILN_BACKEND_CPU);
    static const uint32_t sizes[][2] = {{1, 1}, {3, 5}, {13, 7}, {16, 16}};
    uint64_t seed = 1;
    for (int f = 1; f < KILN_FORMAT_COUNT; f++) {
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            for (int variant = 0; variant < 4; variant++) {
                /* 0: full chain; 1: one level, zstd; 2: cube map, full chain, zstd; 3: array of 3, partial chain */
                uint32_t w = sizes[s][0], h = sizes[s][1], layers = 1, faces = 1, levels = 0;
                int zstd = 0;
                if (variant == 1) levels = 1, zstd = 3;
                if (variant == 2) {
                    if (w != h) continue;
                    faces = 6, zstd = 1;
                }
                if (variant == 3) layers = 3, levels = w > 2 || h > 2 ? 2 : 1;
                kiln_texture t;
                make_tex(ctx, &t, (kiln_format)f, w, h, levels, layers, faces, seed++);
                uint8_t *buf;
                size_t n;
                save(ctx, &t, KILN_CONTAINER_KTX2, zstd, KILN_DDS_HEADER_AUTO, &buf, &n);
                counts c = validate(ctx, buf, n);
                if (c.errors || c.warnings)
                    fprintf(stderr, "%s %ux%u variant %d: %d errors %d warnings: %s\n",
                            kiln_format_get_info((kiln_format)f)->name, w, h, variant, c.errors, c.warnings, c.first);
                assert_int_equal(c.errors, 0);
                assert_int_equal(c.warnings, 0);
                kiln_texture back;
                kiln_status st = kiln_texture_load_memory(ctx, buf, n, &back);
                if (st) fprintf(stderr, "%s\n", kiln_last_error(ctx));
                assert_int_equal(st, KILN_OK);
                assert_same(&t, &back, ktx2_expected_format((kiln_format)f));
                /* KTXwriter (+ KTXwriterScParams with zstd) */
                assert_int_equal(back.kv_count, zstd ? 2u : 1u);
                assert_string_equal(back.kv[0].key, "KTXwriter");
                assert_string_equal((const char *)back.kv[0].value, "kiln " KILN_VERSION_STRING);
                if (zstd) {
                    char want[32];
                    snprintf(want, sizeof want, "--zstd %d", zstd);
                    assert_string_equal(back.kv[1].key, "KTXwriterScParams");
                    assert_string_equal((const char *)back.kv[1].value, want);
                }
                /* levels: smallest first, lcm(block, 4) aligned without zstd */
                uint32_t L = t.levels;
                const kiln_format_info *fi = kiln_format_get_info((kiln_format)f);
                uint32_t align = fi->block_bytes % 4 == 0 ? fi->block_bytes : 4;
                if (fi->block_bytes == 8 || fi->block_bytes == 16) align = fi->block_bytes;
                for (uint32_t l = 0; l < L; l++) {
                    uint64_t off = rd64(buf + 80 + 24 * l), len = rd64(buf + 80 + 24 * l + 8);
                    if (!zstd) assert_int_equal(off % align, 0);
                    if (l + 1 < L) assert_true(rd64(buf + 80 + 24 * (l + 1)) < off);
                    if (l == 0) assert_int_equal(off + len, n); /* base level last, no trailing bytes */
                }
                kiln_texture_free(&back);
                kiln_free(buf);
                kiln_texture_free(&t);
            }
        }
    }
    kiln_context_free(ctx);
}

static void ktx2_hand_built_bc1(void **state)
{
    /* A 4x4 BC1 RGB texture with one level, built here byte by byte from the KTX2 specification. */
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    kiln_texture t;
    make_tex(ctx, &t, KILN_FORMAT_BC1_RGB_UNORM, 4, 4, 1, 1, 1, 99);
    uint8_t *buf;
    size_t n;
    save(ctx, &t, KILN_CONTAINER_KTX2, 0, KILN_DDS_HEADER_AUTO, &buf, &n);
    uint8_t want[256];
    memset(want, 0, sizeof want);
    static const uint8_t id[12] = {0xAB, 'K', 'T', 'X', ' ', '2', '0', 0xBB, '\r', '\n', 0x1A, '\n'};
    memcpy(want, id, 12);
    wr32(want + 12, 131); /* VK_FORMAT_BC1_RGB_UNORM_BLOCK */
    wr32(want + 16, 1);
    wr32(want + 20, 4);
    wr32(want + 24, 4);
    wr32(want + 36, 1);  /* faceCount */
    wr32(want + 40, 1);  /* levelCount */
    wr32(want + 48, 104); /* dfdByteOffset = 80 + 24 */
    wr32(want + 52, 44);
    wr32(want + 56, 148);
    /* KVD: "KTXwriter\0kiln 0.1.0\0" = 10 + 11 = 21 bytes, padded to 24, + 4 = 28 */
    wr32(want + 60, 28);
    size_t data_off = 176; /* 148 + 28, already 8-aligned */
    wr64(want + 80, data_off);
    wr64(want + 88, 8);
    wr64(want + 96, 8);
    uint32_t dfd[11] = {44, 0, 2 | (40 << 16), 0x00010180, 0x0303, 8, 0, 0x003F0000, 0, 0, 0xFFFFFFFFu};
    for (int i = 0; i < 11; i++) wr32(want + 104 + 4 * i, dfd[i]);
    wr32(want + 148, 21);
    memcpy(want + 152, "KTXwriter\0kiln " KILN_VERSION_STRING, 21);
    memcpy(want + data_off, t.data, 8);
    assert_int_equal(n, data_off + 8);
    assert_memory_equal(buf, want, n);
    kiln_free(buf);
    kiln_texture_free(&t);
    kiln_context_free(ctx);
}

static void ktx2_key_values(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    kiln_texture t;
    make_tex(ctx, &t, KILN_FORMAT_BC5_UNORM, 8, 8, 0, 1, 1, 5);
    assert_int_equal(kiln_texture_set_kv(ctx, &t, "KTXswizzle", "rg01"), KILN_OK);
    assert_int_equal(kiln_texture_set_kv(ctx, &t, "KTXorientation", "rd"), KILN_OK);
    assert_int_equal(kiln_texture_set_kv(ctx, &t, "KTXwriter", "someone else"), KILN_OK); /* replaced */
    assert_int_equal(kiln_texture_set_kv(ctx, &t, "myapp.note", "hello"), KILN_OK);
    uint8_t *buf;
    size_t n;
    save(ctx, &t, KILN_CONTAINER_KTX2, 0, KILN_DDS_HEADER_AUTO, &buf, &n);
    counts c = validate(ctx, buf, n);
    assert_int_equal(c.errors, 0);
    kiln_texture back;
    assert_int_equal(kiln_texture_load_memory(ctx, buf, n, &back), KILN_OK);
    assert_int_equal(back.kv_count, 4);
    assert_string_equal(back.kv[0].key, "KTXorientation");
    assert_string_equal(back.kv[1].key, "KTXswizzle");
    assert_string_equal((const char *)back.kv[1].value, "rg01");
    assert_int_equal(back.kv[1].value_size, 5);
    assert_string_equal(back.kv[2].key, "KTXwriter");
    assert_string_equal((const char *)back.kv[2].value, "kiln " KILN_VERSION_STRING);
    assert_string_equal(back.kv[3].key, "myapp.note");
    /* describe shows the pairs, the DFD and the levels */
    char *text = NULL;
    assert_int_equal(kiln_describe_memory(ctx, buf, n, &text), KILN_OK);
    assert_non_null(strstr(text, "vkFormat: 141"));
    assert_non_null(strstr(text, "VK_FORMAT_BC5_UNORM_BLOCK"));
    assert_non_null(strstr(text, "key: KTXswizzle"));
    assert_non_null(strstr(text, "value: rg01"));
    assert_non_null(strstr(text, "colorModelName: BC5"));
    assert_non_null(strstr(text, "0x013F0040"));
    assert_non_null(strstr(text, "uncompressedByteLength: 64"));
    kiln_free(text);
    assert_int_equal(kiln_describe_memory_json(ctx, buf, n, &text), KILN_OK);
    assert_int_equal(text[0], '{');
    assert_non_null(strstr(text, "\"vkFormat\": 141"));
    assert_non_null(strstr(text, "\"key\": \"myapp.note\""));
    int depth = 0;
    for (const char *p = text; *p; p++) depth += (*p == '{' || *p == '[') - (*p == '}' || *p == ']');
    assert_int_equal(depth, 0);
    kiln_free(text);
    kiln_texture_free(&back);
    kiln_free(buf);
    /* metadata that would make an invalid file is refused with a message */
    assert_int_equal(kiln_texture_set_kv(ctx, &t, "KTXbogus", "x"), KILN_OK);
    assert_int_equal(kiln_texture_save_memory(ctx, &t, KILN_CONTAINER_KTX2, NULL, &buf, &n), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(kiln_last_error(ctx), "KTXbogus"));
    kiln_texture_free(&t);
    make_tex(ctx, &t, KILN_FORMAT_BC5_UNORM, 8, 8, 0, 1, 1, 5);
    assert_int_equal(kiln_texture_set_kv(ctx, &t, "KTXswizzle", "rgbx"), KILN_OK);
    assert_int_equal(kiln_texture_save_memory(ctx, &t, KILN_CONTAINER_KTX2, NULL, &buf, &n), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(kiln_last_error(ctx), "KTXswizzle"));
    kiln_texture_free(&t);
    kiln_context_free(ctx);
}

/* Other valid KTX2 files: bytesPlane 0 (old supercompression convention), several zstd frames in one
 * level, unsorted key/value data (loads sorted, fails validation). */
static void ktx2_other_valid_files(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    kiln_texture t;
    make_tex(ctx, &t, KILN_FORMAT_BC7_UNORM, 16, 8, 1, 1, 1, 11);
    uint8_t *buf;
    size_t n;
    save(ctx, &t, KILN_CONTAINER_KTX2, 5, KILN_DDS_HEADER_AUTO, &buf, &n);
    /* bytesPlane0 = 0 */
    uint32_t dfd_off = rd32(buf + 48);
    assert_int_equal(buf[dfd_off + 4 + 16], 16);
    buf[dfd_off + 4 + 16] = 0;
    counts c = validate(ctx, buf, n);
    assert_int_equal(c.errors, 0);
    assert_true(c.warnings >= 1);
    kiln_texture back;
    assert_int_equal(kiln_texture_load_memory(ctx, buf, n, &back), KILN_OK);
    assert_same(&t, &back, KILN_FORMAT_BC7_UNORM);
    kiln_texture_free(&back);
    /* level 0 as two frames */
    uint64_t off = rd64(buf + 80);
    size_t half = t.level_size[0] / 2;
    uint8_t f1[512], f2[512];
    size_t n1 = ZSTD_compress(f1, sizeof f1, t.data, half, 1);
    size_t n2 = ZSTD_compress(f2, sizeof f2, t.data + half, t.level_size[0] - half, 1);
    assert_false(ZSTD_isError(n1) || ZSTD_isError(n2));
    size_t m = off + n1 + n2;
    uint8_t *two = malloc(m);
    memcpy(two, buf, off);
    memcpy(two + off, f1, n1);
    memcpy(two + off + n1, f2, n2);
    wr64(two + 88, n1 + n2);
    expect_valid(ctx, two, m);
    assert_int_equal(kiln_texture_load_memory(ctx, two, m, &back), KILN_OK);
    assert_same(&t, &back, KILN_FORMAT_BC7_UNORM);
    kiln_texture_free(&back);
    /* a frame whose content size disagrees */
    wr64(two + 96, t.level_size[0] + 16);
    assert_int_equal(kiln_texture_load_memory(ctx, two, m, &back), KILN_ERR_CORRUPT);
    free(two);
    kiln_free(buf);

    /* unsorted KVD: swap two entries by hand */
    assert_int_equal(kiln_texture_set_kv(ctx, &t, "b", "2"), KILN_OK);
    assert_int_equal(kiln_texture_set_kv(ctx, &t, "a", "1"), KILN_OK);
    save(ctx, &t, KILN_CONTAINER_KTX2, 0, KILN_DDS_HEADER_AUTO, &buf, &n);
    uint32_t kvd = rd32(buf + 56);
    /* entries "KTXwriter", "a", "b": each "a\0" "1\0" = 4 bytes -> entry 8 bytes */
    uint8_t *ea = buf + kvd + 4 + 24, *eb = ea + 8;
    assert_int_equal(rd32(ea), 4);
    assert_int_equal(ea[4], 'a');
    uint8_t tmp[8];
    memcpy(tmp, ea, 8);
    memcpy(ea, eb, 8);
    memcpy(eb, tmp, 8);
    c = validate(ctx, buf, n);
    assert_true(c.errors >= 1);
    assert_non_null(strstr(c.first, "sorted"));
    assert_int_equal(kiln_texture_load_memory(ctx, buf, n, &back), KILN_OK);
    assert_string_equal(back.kv[0].key, "KTXwriter");
    assert_string_equal(back.kv[1].key, "a");
    assert_string_equal(back.kv[2].key, "b");
    kiln_texture_free(&back);
    kiln_free(buf);
    kiln_texture_free(&t);
    kiln_context_free(ctx);
}

/* ---------------------------------------------------------------- DDS */

static void dds_round_trip_all_formats(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    uint64_t seed = 100;
    for (int f = 1; f < KILN_FORMAT_COUNT; f++) {
        const kiln_format_info *fi = kiln_format_get_info((kiln_format)f);
        for (int variant = 0; variant < 5; variant++) {
            /* 0: 13x7 full chain; 1: 1x1; 2: cube 8x8 full chain; 3: array of 2 (DX10 only); 4: premultiplied */
            uint32_t w = 13, h = 7, layers = 1, faces = 1, levels = 0;
            if (variant == 1) w = h = 1;
            if (variant == 2) w = h = 8, faces = 6;
            if (variant == 3) w = 3, h = 5, layers = 2;
            if (variant == 4 && fi->channels < 4) continue; /* premultiplied needs alpha (DX10 BC1 RGB is alpha mode 3) */
            kiln_texture t;
            make_tex(ctx, &t, (kiln_format)f, w, h, levels, layers, faces, seed++);
            if (variant == 4) t.premultiplied = 1;
            for (int hdr = 0; hdr < 3; hdr++) {
                uint8_t *buf = NULL;
                size_t n = 0;
                kiln_save_params p;
                kiln_save_params_init(&p);
                p.dds_header = (kiln_dds_header)hdr;
                kiln_status st = kiln_texture_save_memory(ctx, &t, KILN_CONTAINER_DDS, &p, &buf, &n);
                if (!fi->dxgi_format) {
                    assert_int_equal(st, KILN_ERR_UNSUPPORTED);
                    assert_non_null(strstr(kiln_last_error(ctx), "DDS has no ETC/EAC formats; use .ktx2"));
                    continue;
                }
                bool legacy_ok = fi->fourcc[0] || f == KILN_FORMAT_RGBA8_UNORM || f == KILN_FORMAT_RGBA16F ||
                                 f == KILN_FORMAT_RGBA32F || f == KILN_FORMAT_R8_UNORM || f == KILN_FORMAT_RG8_UNORM;
                if (variant == 3) legacy_ok = false;
                if (variant == 4 && f != KILN_FORMAT_BC2_UNORM && f != KILN_FORMAT_BC3_UNORM) legacy_ok = false;
                if (hdr == KILN_DDS_HEADER_LEGACY && !legacy_ok) {
                    assert_int_equal(st, KILN_ERR_UNSUPPORTED);
                    assert_non_null(strstr(kiln_last_error(ctx), "legacy"));
                    continue;
                }
                if (st != KILN_OK) fprintf(stderr, "%s: %s\n", fi->name, kiln_last_error(ctx));
                assert_int_equal(st, KILN_OK);
                bool dx10 = rd32(buf + 84) == 0x30315844u;
                bool auto_legacy = (fi->fourcc[0] || f == KILN_FORMAT_RGBA8_UNORM || f == KILN_FORMAT_RGBA16F ||
                                    f == KILN_FORMAT_RGBA32F) && variant != 3 && variant != 4;
                if (hdr == KILN_DDS_HEADER_DX10) assert_true(dx10);
                if (hdr == KILN_DDS_HEADER_LEGACY) assert_false(dx10);
                if (hdr == KILN_DDS_HEADER_AUTO) assert_int_equal(dx10, !auto_legacy);
                if (dx10) assert_int_equal(rd32(buf + 128), fi->dxgi_format);
                if (!dx10 && fi->fourcc[0] && variant != 4) assert_memory_equal(buf + 84, fi->fourcc, 4);
                counts c = validate(ctx, buf, n);
                if (c.errors || c.warnings) fprintf(stderr, "%s: %s\n", fi->name, c.first);
                assert_int_equal(c.errors, 0);
                assert_int_equal(c.warnings, 0);
                kiln_texture back;
                st = kiln_texture_load_memory(ctx, buf, n, &back);
                if (st) fprintf(stderr, "%s\n", kiln_last_error(ctx));
                assert_int_equal(st, KILN_OK);
                /* legacy "DXT1" is BC1 with 1-bit alpha to every DDS reader (see dds.c) */
                kiln_format want = (!dx10 && f == KILN_FORMAT_BC1_RGB_UNORM) ? KILN_FORMAT_BC1_RGBA_UNORM : (kiln_format)f;
                assert_same(&t, &back, want);
                kiln_texture_free(&back);
                kiln_free(buf);
            }
            kiln_texture_free(&t);
        }
    }
    kiln_context_free(ctx);
}

static void dds_header_fields(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    kiln_texture t;
    make_tex(ctx, &t, KILN_FORMAT_BC1_RGB_UNORM, 31, 57, 0, 1, 1, 3);
    uint8_t *buf;
    size_t n;
    save(ctx, &t, KILN_CONTAINER_DDS, 0, KILN_DDS_HEADER_AUTO, &buf, &n);
    assert_memory_equal(buf, "DDS ", 4);
    assert_int_equal(rd32(buf + 4), 124);
    assert_int_equal(rd32(buf + 8), 0x1007 | 0x20000 | 0x80000);
    assert_int_equal(rd32(buf + 12), 57);
    assert_int_equal(rd32(buf + 16), 31);
    assert_int_equal(rd32(buf + 20), 8 * 15 * 8); /* top level bytes */
    assert_int_equal(rd32(buf + 28), 6);
    assert_int_equal(rd32(buf + 76), 32);
    assert_int_equal(rd32(buf + 80), 4);
    assert_memory_equal(buf + 84, "DXT1", 4);
    assert_int_equal(rd32(buf + 108), 0x401008);
    assert_int_equal(rd32(buf + 112), 0);
    assert_int_equal(n, 128 + t.data_size);
    /* DDS order = KTX order for a single image chain */
    assert_memory_equal(buf + 128, t.data, t.data_size);
    kiln_free(buf);
    kiln_texture_free(&t);

    /* a cube map array: per layer, per face, all levels largest first */
    make_tex(ctx, &t, KILN_FORMAT_BC7_SRGB, 8, 8, 0, 2, 6, 4);
    save(ctx, &t, KILN_CONTAINER_DDS, 0, KILN_DDS_HEADER_AUTO, &buf, &n);
    assert_memory_equal(buf + 84, "DX10", 4);
    assert_int_equal(rd32(buf + 128), 99);
    assert_int_equal(rd32(buf + 132), 3);
    assert_int_equal(rd32(buf + 136), 4);
    assert_int_equal(rd32(buf + 140), 2);
    assert_int_equal(rd32(buf + 144), 1);
    assert_int_equal(rd32(buf + 112), 0xFE00);
    size_t pos = 148;
    for (uint32_t layer = 0; layer < 2; layer++)
        for (uint32_t face = 0; face < 6; face++)
            for (uint32_t l = 0; l < t.levels; l++) {
                size_t sz;
                const uint8_t *img = kiln_texture_image(&t, l, layer, face, &sz);
                assert_non_null(img);
                assert_memory_equal(buf + pos, img, sz);
                pos += sz;
            }
    assert_int_equal(pos, n);
    kiln_free(buf);
    kiln_texture_free(&t);

    /* DX10 BC1: alpha mode opaque reads back as BC1 RGB, straight as BC1 RGBA */
    make_tex(ctx, &t, KILN_FORMAT_BC1_RGB_SRGB, 4, 4, 1, 1, 1, 5);
    save(ctx, &t, KILN_CONTAINER_DDS, 0, KILN_DDS_HEADER_AUTO, &buf, &n);
    assert_int_equal(rd32(buf + 144), 3);
    wr32(buf + 144, 0);
    kiln_texture back;
    assert_int_equal(kiln_texture_load_memory(ctx, buf, n, &back), KILN_OK);
    assert_int_equal(back.format, KILN_FORMAT_BC1_RGBA_SRGB);
    kiln_texture_free(&back);
    kiln_free(buf);
    kiln_texture_free(&t);
    kiln_context_free(ctx);
}

/* DDS files as other tools write them: BGRA / BGRX / BGR masks, L8, A8L8, BC4U/BC5U, typeless DXGI. */
static void dds_foreign_layouts(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    uint8_t f[128 + 20 + 3 * 2 * 4];
    struct {
        uint32_t flags, bits, mask[4];
        uint32_t bpp;
        kiln_format want;
        uint8_t pix[4]; /* expected first pixel from source bytes 10 20 30 40 */
    } cases[] = {
        {0x41, 32, {0x00FF0000, 0x0000FF00, 0x000000FF, 0xFF000000}, 4, KILN_FORMAT_RGBA8_UNORM, {30, 20, 10, 40}},
        {0x40, 32, {0x00FF0000, 0x0000FF00, 0x000000FF, 0}, 4, KILN_FORMAT_RGBA8_UNORM, {30, 20, 10, 255}},
        {0x40, 24, {0x00FF0000, 0x0000FF00, 0x000000FF, 0}, 3, KILN_FORMAT_RGBA8_UNORM, {30, 20, 10, 255}},
        {0x20000, 8, {0xFF, 0, 0, 0}, 1, KILN_FORMAT_R8_UNORM, {10, 0, 0, 0}},
        {0x20001, 16, {0xFF, 0, 0, 0xFF00}, 2, KILN_FORMAT_RGBA8_UNORM, {10, 10, 10, 20}},
        {0x40, 16, {0xFF, 0xFF00, 0, 0}, 2, KILN_FORMAT_RG8_UNORM, {10, 20, 0, 0}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memset(f, 0, sizeof f);
        memcpy(f, "DDS ", 4);
        wr32(f + 4, 124);
        wr32(f + 8, 0x100F);
        wr32(f + 12, 2); /* 3 wide, 2 high */
        wr32(f + 16, 3);
        wr32(f + 20, 3 * cases[i].bpp);
        wr32(f + 76, 32);
        wr32(f + 80, cases[i].flags);
        wr32(f + 88, cases[i].bits);
        for (int c = 0; c < 4; c++) wr32(f + 92 + 4 * c, cases[i].mask[c]);
        wr32(f + 108, 0x1000);
        size_t n = 128 + 6 * cases[i].bpp;
        for (size_t b = 128; b < n; b++) f[b] = (uint8_t)(10 * (1 + (b - 128) % cases[i].bpp));
        expect_valid(ctx, f, n);
        kiln_texture t;
        assert_int_equal(kiln_texture_load_memory(ctx, f, n, &t), KILN_OK);
        assert_int_equal(t.format, cases[i].want);
        const kiln_format_info *fi = kiln_format_get_info(t.format);
        assert_memory_equal(t.data, cases[i].pix, fi->block_bytes);
        assert_memory_equal(t.data + 5 * fi->block_bytes, cases[i].pix, fi->block_bytes); /* last pixel */
        kiln_texture_free(&t);
        /* one byte short */
        assert_int_equal(kiln_texture_load_memory(ctx, f, n - 1, &t), KILN_ERR_CORRUPT);
    }
    /* BC4U / BC5U FourCCs and typeless DXGI */
    kiln_texture t;
    make_tex(ctx, &t, KILN_FORMAT_BC5_UNORM, 8, 4, 1, 1, 1, 9);
    uint8_t *buf;
    size_t n;
    save(ctx, &t, KILN_CONTAINER_DDS, 0, KILN_DDS_HEADER_AUTO, &buf, &n);
    memcpy(buf + 84, "BC5U", 4);
    kiln_texture back;
    assert_int_equal(kiln_texture_load_memory(ctx, buf, n, &back), KILN_OK);
    assert_same(&t, &back, KILN_FORMAT_BC5_UNORM);
    kiln_texture_free(&back);
    memcpy(buf + 84, "XYZW", 4);
    assert_int_equal(kiln_texture_load_memory(ctx, buf, n, &back), KILN_ERR_UNSUPPORTED);
    assert_non_null(strstr(kiln_last_error(ctx), "XYZW"));
    kiln_free(buf);
    save(ctx, &t, KILN_CONTAINER_DDS, 0, KILN_DDS_HEADER_DX10, &buf, &n);
    wr32(buf + 128, 82); /* BC5_TYPELESS */
    assert_int_equal(kiln_texture_load_memory(ctx, buf, n, &back), KILN_OK);
    assert_same(&t, &back, KILN_FORMAT_BC5_UNORM);
    kiln_texture_free(&back);
    wr32(buf + 128, 999);
    assert_int_equal(kiln_texture_load_memory(ctx, buf, n, &back), KILN_ERR_UNSUPPORTED);
    assert_non_null(strstr(kiln_last_error(ctx), "999"));
    kiln_free(buf);
    kiln_texture_free(&t);
    kiln_context_free(ctx);
}

/* ---------------------------------------------------------------- KTX 1 */

typedef struct k1w {
    uint8_t b[4096];
    size_t n;
    int be;
} k1w;

static void k1_u32(k1w *w, uint32_t v)
{
    if (w->be) v = __builtin_bswap32(v);
    wr32(w->b + w->n, v);
    w->n += 4;
}

static void k1_header(k1w *w, uint32_t type, uint32_t tsize, uint32_t fmt, uint32_t ifmt, uint32_t base, uint32_t wd,
                      uint32_t ht, uint32_t elements, uint32_t faces, uint32_t levels, uint32_t kvd)
{
    static const uint8_t id[12] = {0xAB, 'K', 'T', 'X', ' ', '1', '1', 0xBB, '\r', '\n', 0x1A, '\n'};
    memcpy(w->b, id, 12);
    w->n = 12;
    k1_u32(w, 0x04030201);
    k1_u32(w, type);
    k1_u32(w, tsize);
    k1_u32(w, fmt);
    k1_u32(w, ifmt);
    k1_u32(w, base);
    k1_u32(w, wd);
    k1_u32(w, ht);
    k1_u32(w, 0);
    k1_u32(w, elements);
    k1_u32(w, faces);
    k1_u32(w, levels);
    k1_u32(w, kvd);
}

static void ktx1_files(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    kt_rng r;
    kt_rng_seed(&r, 42);
    for (int be = 0; be < 2; be++) {
        /* ETC1 8x4 with 4 levels and one key/value pair (as etc2comp / PVRTexTool write) */
        k1w w = {{0}, 0, be};
        k1_header(&w, 0, 1, 0, 0x8D64, 0x1907, 8, 4, 0, 1, 4, 28);
        k1_u32(&w, 23);
        memcpy(w.b + w.n, "KTXorientation\0S=r,T=d\0", 24);
        w.n += 24; /* 23 bytes + 1 padding */
        uint8_t blocks[8 * 2 + 8 * 3];
        kt_rng_bytes(&r, blocks, sizeof blocks);
        size_t bo = 0;
        uint32_t sizes[4] = {16, 8, 8, 8};
        for (int l = 0; l < 4; l++) {
            k1_u32(&w, sizes[l]);
            memcpy(w.b + w.n, blocks + bo, sizes[l]);
            w.n += sizes[l];
            bo += sizes[l];
        }
        expect_valid(ctx, w.b, w.n);
        kiln_texture t;
        kiln_status st = kiln_texture_load_memory(ctx, w.b, w.n, &t);
        if (st) fprintf(stderr, "%s\n", kiln_last_error(ctx));
        assert_int_equal(st, KILN_OK);
        assert_int_equal(t.format, KILN_FORMAT_ETC1_UNORM);
        assert_int_equal(t.levels, 4);
        assert_int_equal(t.width, 8);
        assert_memory_equal(t.data, blocks, sizeof blocks);
        assert_int_equal(t.kv_count, 1);
        assert_string_equal(t.kv[0].key, "KTXorientation");
        assert_string_equal((const char *)t.kv[0].value, "rd"); /* translated from "S=r,T=d" */
        /* re-save as KTX2: vkFormat 147 */
        uint8_t *buf;
        size_t n;
        save(ctx, &t, KILN_CONTAINER_KTX2, 0, KILN_DDS_HEADER_AUTO, &buf, &n);
        assert_int_equal(rd32(buf + 12), 147);
        kiln_free(buf);
        kiln_texture_free(&t);
        for (size_t cut = 0; cut < w.n; cut++) {
            assert_int_not_equal(kiln_texture_load_memory(ctx, w.b, cut, &t), KILN_OK);
            assert_true(strlen(kiln_last_error(ctx)) > 0);
            assert_int_not_equal(kiln_validate_memory(ctx, w.b, cut, NULL, NULL), KILN_OK);
        }

        /* R8 3x2: rows padded to 4 bytes */
        k1w u = {{0}, 0, be};
        k1_header(&u, 0x1401, 1, 0x1903, 0x8229, 0x1903, 3, 2, 0, 1, 1, 0);
        k1_u32(&u, 8);
        uint8_t rows[8] = {1, 2, 3, 0, 4, 5, 6, 0};
        memcpy(u.b + u.n, rows, 8);
        u.n += 8;
        expect_valid(ctx, u.b, u.n);
        assert_int_equal(kiln_texture_load_memory(ctx, u.b, u.n, &t), KILN_OK);
        assert_int_equal(t.format, KILN_FORMAT_R8_UNORM);
        assert_int_equal(t.data_size, 6);
        static const uint8_t packed[6] = {1, 2, 3, 4, 5, 6};
        assert_memory_equal(t.data, packed, 6);
        kiln_texture_free(&t);

        /* RGBA16F 1x1: element byte order follows the file */
        k1w hf = {{0}, 0, be};
        k1_header(&hf, 0x140B, 2, 0x1908, 0x881A, 0x1908, 1, 1, 0, 1, 1, 0);
        k1_u32(&hf, 8);
        uint16_t halves[4] = {0x3C00, 0x4000, 0xBC00, 0x0001}; /* 1, 2, -1, tiny */
        for (int i = 0; i < 4; i++) {
            uint16_t v = be ? (uint16_t)((halves[i] >> 8) | (halves[i] << 8)) : halves[i];
            memcpy(hf.b + hf.n, &v, 2);
            hf.n += 2;
        }
        assert_int_equal(kiln_texture_load_memory(ctx, hf.b, hf.n, &t), KILN_OK);
        assert_int_equal(t.format, KILN_FORMAT_RGBA16F);
        for (int i = 0; i < 4; i++) assert_int_equal(t.data[2 * i] | (t.data[2 * i + 1] << 8), halves[i]);
        kiln_texture_free(&t);

        /* BC3 cube map 4x4: imageSize is one face; six faces */
        k1w cb = {{0}, 0, be};
        k1_header(&cb, 0, 1, 0, 0x83F3, 0x1908, 4, 4, 0, 6, 1, 0);
        k1_u32(&cb, 16);
        uint8_t faces[96];
        kt_rng_bytes(&r, faces, sizeof faces);
        memcpy(cb.b + cb.n, faces, 96);
        cb.n += 96;
        expect_valid(ctx, cb.b, cb.n);
        assert_int_equal(kiln_texture_load_memory(ctx, cb.b, cb.n, &t), KILN_OK);
        assert_int_equal(t.format, KILN_FORMAT_BC3_UNORM);
        assert_int_equal(t.faces, 6);
        assert_memory_equal(t.data, faces, 96);
        kiln_texture_free(&t);
        /* imageSize covering all faces is wrong for a non-array cube map */
        wr32(cb.b + 64, be ? __builtin_bswap32(96) : 96);
        assert_int_equal(kiln_texture_load_memory(ctx, cb.b, cb.n, &t), KILN_ERR_CORRUPT);
    }
    /* unknown glInternalFormat; bad endianness */
    k1w x = {{0}, 0, 0};
    k1_header(&x, 0, 1, 0, 0x1234, 0, 4, 4, 0, 1, 1, 0);
    k1_u32(&x, 8);
    x.n += 8;
    kiln_texture t;
    assert_int_equal(kiln_texture_load_memory(ctx, x.b, x.n, &t), KILN_ERR_UNSUPPORTED);
    assert_non_null(strstr(kiln_last_error(ctx), "0x1234"));
    wr32(x.b + 12, 0x11223344);
    assert_int_equal(kiln_texture_load_memory(ctx, x.b, x.n, &t), KILN_ERR_CORRUPT);
    /* KTX 1 is not written */
    kiln_texture s;
    make_tex(ctx, &s, KILN_FORMAT_BC1_RGB_UNORM, 4, 4, 1, 1, 1, 1);
    uint8_t *buf = NULL;
    size_t n = 0;
    assert_int_equal(kiln_texture_save_memory(ctx, &s, KILN_CONTAINER_KTX1, NULL, &buf, &n), KILN_ERR_UNSUPPORTED);
    assert_non_null(strstr(kiln_last_error(ctx), "ktx2"));
    kiln_texture_free(&s);
    kiln_context_free(ctx);
}

/* ---------------------------------------------------------------- golden bytes */

static void golden_hashes(void **state)
{
    /* The exact bytes kiln writes must never change silently. If a change is intended, update the
     * hashes (the failure message prints the new ones) and say why in the commit. */
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    kiln_texture t;
    make_tex(ctx, &t, KILN_FORMAT_BC7_SRGB, 12, 8, 0, 1, 1, 2024);
    assert_int_equal(kiln_texture_set_kv(ctx, &t, "KTXorientation", "rd"), KILN_OK);
    uint8_t *buf;
    size_t n;
    save(ctx, &t, KILN_CONTAINER_KTX2, 0, KILN_DDS_HEADER_AUTO, &buf, &n);
    uint64_t h_ktx2 = kt_hash(buf, n);
    size_t n_ktx2 = n;
    kiln_free(buf);
    kiln_texture_free(&t);
    make_tex(ctx, &t, KILN_FORMAT_BC3_UNORM, 12, 8, 0, 1, 1, 2025);
    save(ctx, &t, KILN_CONTAINER_DDS, 0, KILN_DDS_HEADER_AUTO, &buf, &n);
    uint64_t h_dds = kt_hash(buf, n);
    size_t n_dds = n;
    kiln_free(buf);
    save(ctx, &t, KILN_CONTAINER_DDS, 0, KILN_DDS_HEADER_DX10, &buf, &n);
    uint64_t h_dx10 = kt_hash(buf, n);
    size_t n_dx10 = n;
    kiln_free(buf);
    kiln_texture_free(&t);
    if (h_ktx2 != GOLDEN_KTX2_HASH || h_dds != GOLDEN_DDS_HASH || h_dx10 != GOLDEN_DX10_HASH)
        fprintf(stderr, "golden: ktx2 %zu 0x%016llxull dds %zu 0x%016llxull dx10 %zu 0x%016llxull\n", n_ktx2,
            (unsigned long long)h_ktx2, n_dds, (unsigned long long)h_dds, n_dx10, (unsigned long long)h_dx10);
    assert_int_equal(n_ktx2, GOLDEN_KTX2_SIZE);
    assert_int_equal(h_ktx2, GOLDEN_KTX2_HASH);
    assert_int_equal(n_dds, GOLDEN_DDS_SIZE);
    assert_int_equal(h_dds, GOLDEN_DDS_HASH);
    assert_int_equal(n_dx10, GOLDEN_DX10_SIZE);
    assert_int_equal(h_dx10, GOLDEN_DX10_HASH);
    kiln_context_free(ctx);
}

/* ---------------------------------------------------------------- corrupt inputs */

static void truncations_and_flips(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    kiln_texture t;
    make_tex(ctx, &t, KILN_FORMAT_BC1_RGBA_UNORM, 8, 8, 0, 1, 1, 77);
    assert_int_equal(kiln_texture_set_kv(ctx, &t, "KTXorientation", "rd"), KILN_OK);
    for (int kind = 0; kind < 4; kind++) {
        /* 0: KTX2; 1: KTX2 + zstd; 2: DDS legacy; 3: DDS DX10 */
        uint8_t *buf;
        size_t n;
        if (kind < 2) save(ctx, &t, KILN_CONTAINER_KTX2, kind ? 3 : 0, KILN_DDS_HEADER_AUTO, &buf, &n);
        else save(ctx, &t, KILN_CONTAINER_DDS, 0, kind == 2 ? KILN_DDS_HEADER_LEGACY : KILN_DDS_HEADER_DX10, &buf, &n);
        expect_valid(ctx, buf, n);
        kiln_texture back;
        for (size_t cut = 0; cut < n; cut++) {
            kiln_status st = kiln_texture_load_memory(ctx, buf, cut, &back);
            assert_int_not_equal(st, KILN_OK);
            assert_true(strlen(kiln_last_error(ctx)) > 0);
            counts c = validate(ctx, buf, cut);
            assert_true(c.errors > 0);
            char *text = NULL;
            if (kiln_describe_memory(ctx, buf, cut, &text) == KILN_OK) kiln_free(text);
        }
        /* trailing bytes: KTX2 is strict (error), DDS warns */
        uint8_t *longer = malloc(n + 3);
        memcpy(longer, buf, n);
        memset(longer + n, 0, 3);
        counts c = validate(ctx, longer, n + 3);
        if (kind < 2) assert_true(c.errors > 0);
        else assert_true(c.errors == 0 && c.warnings > 0);
        free(longer);
        /* flipped bytes */
        size_t meta_end = kind < 2 ? (size_t)rd64(buf + 80 + 24 * (t.levels - 1)) : (kind == 2 ? 128 : 148);
        for (size_t i = 0; i < meta_end; i++) {
            buf[i] ^= 0xFF;
            c = validate(ctx, buf, n);
            if (kind < 2 && c.errors == 0) fprintf(stderr, "flip of byte %zu not detected\n", i);
            if (kind < 2) assert_true(c.errors > 0); /* KTX2: every metadata byte matters */
            if (kiln_texture_load_memory(ctx, buf, n, &back) == KILN_OK) kiln_texture_free(&back);
            else assert_true(strlen(kiln_last_error(ctx)) > 0);
            char *text = NULL;
            if (kiln_describe_memory_json(ctx, buf, n, &text) == KILN_OK) kiln_free(text);
            buf[i] ^= 0xFF;
        }
        kiln_free(buf);
    }
    kiln_texture_free(&t);
    kiln_context_free(ctx);
}

static void absurd_headers(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    kiln_texture t, back;
    make_tex(ctx, &t, KILN_FORMAT_BC3_UNORM, 8, 8, 0, 1, 1, 8);
    uint8_t *k2, *dd;
    size_t nk, nd;
    save(ctx, &t, KILN_CONTAINER_KTX2, 0, KILN_DDS_HEADER_AUTO, &k2, &nk);
    save(ctx, &t, KILN_CONTAINER_DDS, 0, KILN_DDS_HEADER_DX10, &dd, &nd);
    uint8_t *c = malloc(nk > nd ? nk : nd);
#define KTX2_CASE(OFF, VAL, WANT, TEXT)                                                                       \
    do {                                                                                                     \
        memcpy(c, k2, nk);                                                                                   \
        wr32(c + (OFF), (VAL));                                                                              \
        assert_int_equal(kiln_texture_load_memory(ctx, c, nk, &back), (WANT));                               \
        assert_non_null(strstr(kiln_last_error(ctx), (TEXT)));                                               \
        assert_true(validate(ctx, c, nk).errors > 0);                                                        \
    } while (0)
    KTX2_CASE(20, 1u << 31, KILN_ERR_TOO_LARGE, "exceeds");              /* 2^31 wide */
    KTX2_CASE(20, 0, KILN_ERR_CORRUPT, "pixelWidth is 0");
    KTX2_CASE(24, 0, KILN_ERR_CORRUPT, "pixelHeight is 0");
    KTX2_CASE(20, 65537, KILN_ERR_TOO_LARGE, "exceeds");                  /* over the per-side limit */
    KTX2_CASE(12, 1000, KILN_ERR_UNSUPPORTED, "vkFormat 1000");
    KTX2_CASE(12, 0, KILN_ERR_UNSUPPORTED, "vkFormat 0");
    KTX2_CASE(40, 0, KILN_ERR_CORRUPT, "levelCount is 0");
    KTX2_CASE(40, 40, KILN_ERR_CORRUPT, "levelCount 40");
    KTX2_CASE(40, 5, KILN_ERR_CORRUPT, "mip levels");                     /* 8x8 has 4 */
    KTX2_CASE(36, 2, KILN_ERR_CORRUPT, "faces");
    KTX2_CASE(32, 3000, KILN_ERR_TOO_LARGE, "layers");
    KTX2_CASE(32, 2, KILN_ERR_CORRUPT, "uncompressedByteLength");
    KTX2_CASE(44, 1, KILN_ERR_UNSUPPORTED, "BasisLZ");
    KTX2_CASE(44, 77, KILN_ERR_CORRUPT, "supercompressionScheme 77");
    KTX2_CASE(80, 0xFFFFFF00u, KILN_ERR_CORRUPT, "extends past the end"); /* level 0 offset */
    KTX2_CASE(84, 0xFFFFFFFFu, KILN_ERR_CORRUPT, "extends past the end");
    KTX2_CASE(88, 3, KILN_ERR_CORRUPT, "byteLength");
    KTX2_CASE(80, 4, KILN_ERR_CORRUPT, "inside the header");
    KTX2_CASE(60, 0xFFFF, KILN_ERR_CORRUPT, "key/value data");
    KTX2_CASE(52, 0x7FFFFFFF, KILN_ERR_CORRUPT, "DFD");
#undef KTX2_CASE
#define DDS_CASE(OFF, VAL, WANT, TEXT)                                                                        \
    do {                                                                                                     \
        memcpy(c, dd, nd);                                                                                   \
        wr32(c + (OFF), (VAL));                                                                              \
        assert_int_equal(kiln_texture_load_memory(ctx, c, nd, &back), (WANT));                               \
        assert_non_null(strstr(kiln_last_error(ctx), (TEXT)));                                               \
        assert_true(validate(ctx, c, nd).errors > 0);                                                        \
    } while (0)
    DDS_CASE(16, 1u << 31, KILN_ERR_TOO_LARGE, "exceeds");
    DDS_CASE(12, 0, KILN_ERR_CORRUPT, "empty");
    DDS_CASE(28, 40, KILN_ERR_CORRUPT, "mipMapCount 40");
    DDS_CASE(28, 6, KILN_ERR_CORRUPT, "mip levels");
    DDS_CASE(4, 123, KILN_ERR_CORRUPT, "124");
    DDS_CASE(128, 999, KILN_ERR_UNSUPPORTED, "DXGI format 999");
    DDS_CASE(140, 0, KILN_ERR_CORRUPT, "arraySize is 0");
    DDS_CASE(140, 5, KILN_ERR_CORRUPT, "needs");
    DDS_CASE(140, 100000, KILN_ERR_TOO_LARGE, "layers");
    DDS_CASE(132, 9, KILN_ERR_CORRUPT, "resourceDimension");
#undef DDS_CASE
    /* not a texture at all */
    assert_int_equal(kiln_texture_load_memory(ctx, "hello world, not a texture", 26, &back), KILN_ERR_CORRUPT);
    assert_non_null(strstr(kiln_last_error(ctx), "not a KTX2, KTX or DDS file"));
    assert_int_equal(kiln_texture_load_memory(ctx, "", 0, &back), KILN_ERR_CORRUPT);
    assert_int_equal(validate(ctx, (const uint8_t *)"DDS", 3).errors, 1);
    free(c);
    kiln_free(k2);
    kiln_free(dd);
    kiln_texture_free(&t);
    kiln_context_free(ctx);
}

static void validator_names_dfd_field(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    kiln_texture t;
    make_tex(ctx, &t, KILN_FORMAT_BC3_SRGB, 8, 8, 1, 1, 1, 12);
    uint8_t *buf;
    size_t n;
    save(ctx, &t, KILN_CONTAINER_KTX2, 0, KILN_DDS_HEADER_AUTO, &buf, &n);
    uint32_t d = rd32(buf + 48);
    struct {
        size_t off;
        uint32_t val;
        const char *text;
    } cases[] = {
        {d + 4 + 8, 0x00010182, "transferFunction"},     /* sRGB format with a linear transfer */
        {d + 4 + 8, 0x00020181, "colorModel is 129"},    /* BC2 model */
        {d + 4 + 12, 0x0707, "texelBlockDimension"},
        {d + 4 + 16, 8, "bytesPlane0 is 8"},
        {d + 4 + 24, 0x0F3F0000, "channelType is 0x0F"}, /* sRGB alpha without LINEAR */
        {d + 4 + 24, 0x1F3F0008, "bitOffset"},
        {d + 4 + 40, 0x003F0000, "bitOffset"},
        {d + 4 + 36, 0xFFFF, "sampleUpper"},
        {d + 4 + 32, 1, "sampleLower"},
        {d + 4 + 28, 1, "samplePosition"},
        {d + 4 + 4, 2 | (24u << 16), "descriptorBlockSize"},
        {d, 12, "dfdTotalSize"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t *c = malloc(n);
        memcpy(c, buf, n);
        wr32(c + cases[i].off, cases[i].val);
        counts r = validate(ctx, c, n);
        if (!strstr(r.first, cases[i].text)) fprintf(stderr, "case %zu: '%s'\n", i, r.first);
        assert_true(r.errors > 0);
        assert_non_null(strstr(r.first, cases[i].text));
        free(c);
    }
    kiln_free(buf);
    kiln_texture_free(&t);
    kiln_context_free(ctx);
}

/* ---------------------------------------------------------------- API details */

static void save_params_and_files(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    kiln_texture t, back;
    make_tex(ctx, &t, KILN_FORMAT_BC4_UNORM, 9, 9, 0, 1, 1, 13);
    kiln_save_params p;
    kiln_save_params_init(&p);
    assert_int_equal(p.container, KILN_CONTAINER_AUTO);
    assert_int_equal(p.zstd_level, 0);
    assert_int_equal(p.dds_header, KILN_DDS_HEADER_AUTO);
    const char *names[] = {"a.ktx2", "b.dds", "c.ktx"};
    for (int i = 0; i < 3; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s", kt_tmp(names[i]));
        assert_int_equal(kiln_texture_save(ctx, &t, path, &p), KILN_OK);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        uint8_t magic[4];
        assert_int_equal(fread(magic, 1, 4, f), 4);
        fclose(f);
        assert_int_equal(magic[0], i == 1 ? 'D' : 0xAB);
        assert_int_equal(kiln_texture_load(ctx, path, &back), KILN_OK);
        assert_same(&t, &back, KILN_FORMAT_BC4_UNORM);
        kiln_texture_free(&back);
        remove(path);
    }
    assert_int_equal(kiln_texture_save(ctx, &t, kt_tmp("x.png"), &p), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_texture_load(ctx, kt_tmp("does-not-exist.ktx2"), &back), KILN_ERR_IO);
    p.zstd_level = 23;
    uint8_t *buf;
    size_t n;
    assert_int_equal(kiln_texture_save_memory(ctx, &t, KILN_CONTAINER_KTX2, &p, &buf, &n), KILN_ERR_INVALID_ARGUMENT);
    p.zstd_level = 3;
    assert_int_equal(kiln_texture_save_memory(ctx, &t, KILN_CONTAINER_DDS, &p, &buf, &n), KILN_ERR_INVALID_ARGUMENT);
    /* an inconsistent texture is refused */
    t.level_size[1]++;
    assert_int_equal(kiln_texture_save_memory(ctx, &t, KILN_CONTAINER_KTX2, NULL, &buf, &n), KILN_ERR_INVALID_ARGUMENT);
    t.level_size[1]--;
    /* zstd output is the same for any thread count */
    kiln_context *c4 = kt_context(4, KILN_BACKEND_CPU);
    uint8_t *b1, *b4;
    size_t n1, n4;
    save(ctx, &t, KILN_CONTAINER_KTX2, 19, KILN_DDS_HEADER_AUTO, &b1, &n1);
    save(c4, &t, KILN_CONTAINER_KTX2, 19, KILN_DDS_HEADER_AUTO, &b4, &n4);
    assert_int_equal(n1, n4);
    assert_memory_equal(b1, b4, n1);
    assert_true(contains(b1, n1, "--zstd 19"));
    kiln_free(b1);
    kiln_free(b4);
    kiln_context_free(c4);
    kiln_texture_free(&t);
    kiln_context_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dfd_words_match_reference),
        cmocka_unit_test(ktx2_round_trip_all_formats),
        cmocka_unit_test(ktx2_hand_built_bc1),
        cmocka_unit_test(ktx2_key_values),
        cmocka_unit_test(ktx2_other_valid_files),
        cmocka_unit_test(dds_round_trip_all_formats),
        cmocka_unit_test(dds_header_fields),
        cmocka_unit_test(dds_foreign_layouts),
        cmocka_unit_test(ktx1_files),
        cmocka_unit_test(golden_hashes),
        cmocka_unit_test(truncations_and_flips),
        cmocka_unit_test(absurd_headers),
        cmocka_unit_test(validator_names_dfd_field),
        cmocka_unit_test(save_params_and_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

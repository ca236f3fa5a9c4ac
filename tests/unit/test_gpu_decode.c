/* test_gpu_decode.c - the GPU block decoders (shaders/decode_*.comp) against the CPU decoders
 * (src/codec): for every block format of the format table, random blocks, blocks crafted to hit
 * every mode, odd image sizes, blocks from real textures (when kiln can encode them), several
 * batches and every subgroup size the device lets us require. The results must be bit-identical.
 * Runs with the Vulkan validation layer on (KILN_VK_VALIDATION=1) and asserts it reported nothing.
 * Skipped when there is no Vulkan device at all (lavapipe counts: the backend is forced to VULKAN). */
#include "support.h"
#include "gpu/gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const kiln_format all_formats[] = {
#define X(ID, ...) KILN_FORMAT_##ID,
    KILN_FORMAT_TABLE(X)
#undef X
};
#define NFORMATS (sizeof all_formats / sizeof all_formats[0])

typedef kt_gpu_fixture fixture;

static int is_bc6h(kiln_format f) { return f == KILN_FORMAT_BC6H_UFLOAT || f == KILN_FORMAT_BC6H_SFLOAT; }
static int is_bc7(kiln_format f) { return f == KILN_FORMAT_BC7_UNORM || f == KILN_FORMAT_BC7_SRGB; }
static int is_etc_color(kiln_format f)
{
    return (f >= KILN_FORMAT_ETC1_UNORM && f <= KILN_FORMAT_ETC2_RGBA8_SRGB);
}
static int is_eac(kiln_format f) { return f >= KILN_FORMAT_EAC_R11_UNORM && f <= KILN_FORMAT_EAC_RG11_SNORM; }

/* ETC colour block mode: 0 individual, 1 differential, 2 T, 3 H, 4 planar (punch-through formats have
 * no individual mode: their "diff" bit is the opaque flag). */
static int etc_mode(const uint8_t *b, int punch)
{
    if (!punch && !(b[3] & 2)) return 0;
    int r = b[0] >> 3, g = b[1] >> 3, bl = b[2] >> 3;
    int dr = (int)((b[0] & 7) ^ 4) - 4, dg = (int)((b[1] & 7) ^ 4) - 4, db = (int)((b[2] & 7) ^ 4) - 4;
    if (r + dr < 0 || r + dr > 31) return 2;
    if (g + dg < 0 || g + dg > 31) return 3;
    if (bl + db < 0 || bl + db > 31) return 4;
    return 1;
}

/* Random blocks, then, block by block, steered into every mode the format has. */
static void craft_blocks(kt_rng *rng, kiln_format f, uint8_t *data, size_t nblocks)
{
    const kiln_format_info *fi = kiln_format_get_info(f);
    const size_t bb = fi->block_bytes;
    kt_rng_bytes(rng, data, nblocks * bb);
    static const uint8_t bc6_modes[18] = {0, 1, 2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31};
    for (size_t i = 0; i < nblocks; i++) {
        uint8_t *b = data + i * bb;
        if (is_bc7(f)) {
            unsigned m = i % 9; /* 8: no mode bit in the first byte (invalid block) */
            b[0] = m == 8 ? 0 : (uint8_t)((b[0] & ~((2u << m) - 1)) | (1u << m));
        } else if (is_bc6h(f)) {
            unsigned m = bc6_modes[i % 18];
            b[0] = m < 2 ? (uint8_t)((b[0] & ~3u) | m) : (uint8_t)((b[0] & ~31u) | m);
        } else if (is_etc_color(f)) {
            int punch = (fi->flags & KILN_FF_ALPHA1) != 0;
            uint8_t *c = b + (bb == 16 ? 8 : 0);
            int want = (int)(i % 5);
            if (punch && want == 0) want = 1;
            for (int tries = 0; tries < 1000 && etc_mode(c, punch) != want; tries++) kt_rng_bytes(rng, c, 8);
            if (punch && (i / 5) % 2) c[3] &= (uint8_t)~2u; /* half transparent-capable */
            if (bb == 16 && i % 7 == 0) b[1] &= 0x0f;      /* EAC alpha multiplier 0 */
        } else if (is_eac(f)) {
            if (i % 4 == 0) b[1] &= 0x0f;                  /* multiplier 0 */
            if (i % 6 == 1) b[0] = 0x80;                   /* base -128 (signed) / 128 */
            if (bb == 16 && i % 5 == 2) b[9] &= 0x0f;
            if (bb == 16 && i % 6 == 3) b[8] = 0x80;
        } else if (f == KILN_FORMAT_BC4_SNORM || f == KILN_FORMAT_BC5_SNORM) {
            if (i % 5 == 0) b[0] = 0x80;                   /* -128 endpoints */
            if (i % 5 == 1) b[1] = 0x80;
            if (i % 5 == 2) b[0] = b[1];
            if (i % 5 == 3) { b[0] = 0x81; b[1] = 0x80; } /* -127 > -128 raw, equal once -128 reads -127 */
            if (i % 5 == 4) { b[0] = 0x80; b[1] = 0x81; }
            if (bb == 16 && i % 3 == 0) { b[8] = 0x81; b[9] = 0x80; }
        } else if (f == KILN_FORMAT_BC4_UNORM || f == KILN_FORMAT_BC5_UNORM || f == KILN_FORMAT_BC3_UNORM ||
                   f == KILN_FORMAT_BC3_SRGB) {
            if (i % 4 == 0) b[0] = b[1];
            if (i % 4 == 1 && b[0] > b[1]) { uint8_t t = b[0]; b[0] = b[1]; b[1] = t; }
        } else { /* BC1 colour block (last 8 bytes): equal and ordered endpoints */
            uint8_t *c = b + bb - 8;
            if (i % 4 == 0) { c[2] = c[0]; c[3] = c[1]; }
            if (i % 4 == 1) { c[2] = (uint8_t)(c[0] + 1); c[3] = c[1]; }
        }
    }
}

/* Decodes tex (level 0) on both backends and requires identical bytes. */
static void compare_texture(fixture *fx, const kiln_texture *tex, const char *what)
{
    const kiln_format_info *fi = kiln_format_get_info(tex->format);
    kiln_image g, c;
    kiln_status st = kiln_decode(fx->gpu, tex, 0, 0, 0, &g);
    if (st != KILN_OK) fail_msg("%s %s %ux%u: GPU decode failed: %s", fi->name, what, tex->width, tex->height, kiln_last_error(fx->gpu));
    assert_true(kiln_last_gpu_ms(fx->gpu) >= 0.0);
    st = kiln_decode(fx->cpu, tex, 0, 0, 0, &c);
    if (st != KILN_OK) fail_msg("%s: CPU decode failed: %s", fi->name, kiln_last_error(fx->cpu));
    assert_true(kiln_last_gpu_ms(fx->cpu) < 0.0);
    assert_int_equal(g.width, c.width);
    assert_int_equal(g.height, c.height);
    assert_int_equal(g.type, c.type);
    assert_int_equal(g.channels, c.channels);
    assert_int_equal(g.srgb, c.srgb);
    size_t esz = (size_t)g.type, n = (size_t)g.width * g.height * 4;
    if (memcmp(g.pixels, c.pixels, n * esz) != 0) {
        size_t i = 0;
        while (memcmp((uint8_t *)g.pixels + i * esz, (uint8_t *)c.pixels + i * esz, esz) == 0) i++;
        uint32_t x = (uint32_t)(i / 4 % g.width), y = (uint32_t)(i / 4 / g.width);
        size_t bi = (size_t)(y / 4) * ((tex->width + 3) / 4) + x / 4;
        char hex[40] = "";
        for (uint32_t k = 0; k < fi->block_bytes; k++) snprintf(hex + 2 * k, 3, "%02x", tex->data[bi * fi->block_bytes + k]);
        double gv, cv;
        if (g.type == KILN_PIXEL_U8) gv = ((uint8_t *)g.pixels)[i], cv = ((uint8_t *)c.pixels)[i];
        else if (g.type == KILN_PIXEL_U16) gv = ((uint16_t *)g.pixels)[i], cv = ((uint16_t *)c.pixels)[i];
        else gv = ((float *)g.pixels)[i], cv = ((float *)c.pixels)[i];
        kiln_image_free(&g);
        kiln_image_free(&c);
        fail_msg("%s %s %ux%u: GPU and CPU differ at texel (%u,%u) channel %zu: GPU %.9g, CPU %.9g (block %zu = %s)",
                 fi->name, what, tex->width, tex->height, x, y, i % 4, gv, cv, bi, hex);
    }
    kiln_image_free(&g);
    kiln_image_free(&c);
}

static void random_and_crafted_blocks(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    static const uint32_t sizes[][2] = {{64, 64}, {13, 7}, {1, 1}, {4, 4}, {6, 21}};
    kt_rng rng;
    kt_rng_seed(&rng, 7);
    int formats = 0;
    for (size_t k = 0; k < NFORMATS; k++) {
        const kiln_format_info *fi = kiln_format_get_info(all_formats[k]);
        if (!(fi->flags & KILN_FF_COMPRESSED)) continue;
        formats++;
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            kiln_texture tex;
            assert_int_equal(kiln_texture_alloc(fx->cpu, &tex, fi->format, sizes[s][0], sizes[s][1], 1, 1, 1), KILN_OK);
            size_t nblocks = tex.data_size / fi->block_bytes;
            if (s % 2 == 0) kt_rng_bytes(&rng, tex.data, tex.data_size);
            else craft_blocks(&rng, fi->format, tex.data, nblocks);
            compare_texture(fx, &tex, s % 2 == 0 ? "random blocks" : "crafted blocks");
            if (s == 0) { /* the 64x64 image once more with every mode crafted */
                craft_blocks(&rng, fi->format, tex.data, nblocks);
                compare_texture(fx, &tex, "crafted blocks");
            }
            kiln_texture_free(&tex);
        }
    }
    assert_true(formats >= 28);
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

/* A texture with several levels decodes each level on the GPU like the CPU does. */
static void mip_levels_and_layers(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 11);
    kiln_texture tex;
    assert_int_equal(kiln_texture_alloc(fx->cpu, &tex, KILN_FORMAT_BC7_UNORM, 37, 19, 0, 2, 1), KILN_OK);
    craft_blocks(&rng, KILN_FORMAT_BC7_UNORM, tex.data, tex.data_size / 16);
    for (uint32_t level = 0; level < tex.levels; level++)
        for (uint32_t layer = 0; layer < 2; layer++) {
            kiln_image g, c;
            assert_int_equal(kiln_decode(fx->gpu, &tex, level, layer, 0, &g), KILN_OK);
            assert_int_equal(kiln_decode(fx->cpu, &tex, level, layer, 0, &c), KILN_OK);
            assert_int_equal(g.width, kiln_level_dim(37, level));
            assert_int_equal(g.height, kiln_level_dim(19, level));
            assert_memory_equal(g.pixels, c.pixels, (size_t)g.width * g.height * 4);
            kiln_image_free(&g);
            kiln_image_free(&c);
        }
    kiln_image img;
    assert_int_equal(kiln_decode(fx->gpu, &tex, tex.levels, 0, 0, &img), KILN_ERR_INVALID_ARGUMENT);
    kiln_texture_free(&tex);
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

/* Small batches (several submissions per image) and every subgroup size the device can require. */
static void batches_and_subgroup_sizes(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kt_rng rng;
    kt_rng_seed(&rng, 5);
    static const kiln_format fmts[] = {KILN_FORMAT_BC1_RGBA_UNORM, KILN_FORMAT_BC6H_SFLOAT, KILN_FORMAT_BC7_UNORM,
                                       KILN_FORMAT_ETC2_RGBA8_UNORM, KILN_FORMAT_EAC_RG11_UNORM, KILN_FORMAT_BC5_SNORM};
    const uint32_t w = 29, h = 45;
    for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++) {
        const kiln_format_info *fi = kiln_format_get_info(fmts[k]);
        size_t size = kiln_format_image_size(fmts[k], w, h);
        uint8_t *blocks = malloc(size);
        assert_non_null(blocks);
        craft_blocks(&rng, fmts[k], blocks, size / fi->block_bytes);
        kiln_texture tex;
        assert_int_equal(kiln_texture_alloc(fx->cpu, &tex, fmts[k], w, h, 1, 1, 1), KILN_OK);
        memcpy(tex.data, blocks, size);
        kiln_image ref;
        assert_int_equal(kiln_decode(fx->cpu, &tex, 0, 0, 0, &ref), KILN_OK);
        size_t bytes = (size_t)w * h * 4 * (size_t)ref.type;

        /* 3 block rows per batch: 4 submissions for 12 block rows */
        size_t row_bytes = (size_t)w * 4 * 4 * (size_t)ref.type;
        char env[32];
        snprintf(env, sizeof env, "%zu", 3 * row_bytes);
        setenv("KILN_GPU_BATCH_BYTES", env, 1);
        kiln_image g;
        kiln_status st = kiln__gpu_decode_blocks(fx->gpu, fmts[k], blocks, size, w, h, 0, &g);
        unsetenv("KILN_GPU_BATCH_BYTES");
        if (st != KILN_OK) fail_msg("%s batched: %s", fi->name, kiln_last_error(fx->gpu));
        assert_memory_equal(g.pixels, ref.pixels, bytes);
        kiln_image_free(&g);

        /* each required size is a new pipeline (a slow compile on lavapipe): the BPTC and ETC shaders */
        uint32_t sizes = (k == 2 || k == 3) ? kiln__gpu_subgroup_sizes(fx->gpu) : 0;
        for (uint32_t sg = 1; sg <= 128; sg <<= 1) {
            if (!(sizes & sg)) continue;
            st = kiln__gpu_decode_blocks(fx->gpu, fmts[k], blocks, size, w, h, sg, &g);
            if (st != KILN_OK) fail_msg("%s subgroup %u: %s", fi->name, sg, kiln_last_error(fx->gpu));
            assert_memory_equal(g.pixels, ref.pixels, bytes);
            kiln_image_free(&g);
        }
        /* a subgroup size no device offers is refused cleanly */
        assert_int_equal(kiln__gpu_decode_blocks(fx->gpu, fmts[k], blocks, size, w, h, 3, &g), KILN_ERR_UNSUPPORTED);
        /* too few bytes */
        assert_int_equal(kiln__gpu_decode_blocks(fx->gpu, fmts[k], blocks, size - 1, w, h, 0, &g), KILN_ERR_CORRUPT);
        kiln_image_free(&ref);
        kiln_texture_free(&tex);
        free(blocks);
    }
    if (kiln__gpu_subgroup_sizes(fx->gpu) == 0) print_message("note: the device cannot require subgroup sizes\n");
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

/* Blocks from real textures, through kiln's own encoders (formats kiln cannot encode yet are noted). */
static void real_texture_blocks(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    static const char *ldr = "ldr/gimp_qube1_tiny_31x57.png";
    static const char *hdr = "hdr/qtcreator_preview_studio_256x128.hdr";
    kiln_image src_ldr, src_hdr;
    int have_ldr = kiln_image_load(fx->cpu, kt_testdata(ldr), &src_ldr) == KILN_OK;
    int have_hdr = kiln_image_load(fx->cpu, kt_testdata(hdr), &src_hdr) == KILN_OK;
    if (!have_ldr) print_message("note: cannot load %s (%s): real-texture blocks not tested\n", ldr, kiln_last_error(fx->cpu));
    int tested = 0, missing = 0;
    for (size_t k = 0; k < NFORMATS && have_ldr; k++) {
        const kiln_format_info *fi = kiln_format_get_info(all_formats[k]);
        if (!(fi->flags & KILN_FF_COMPRESSED)) continue;
        const kiln_image *src = is_bc6h(fi->format) && have_hdr ? &src_hdr : &src_ldr;
        kiln_encode_params ep;
        kiln_encode_params_init(&ep, fi->format, KILN_QUALITY_FAST);
        kiln_texture tex;
        kiln_status st = kiln_encode(fx->cpu, src, &ep, &tex);
        if (st == KILN_ERR_UNSUPPORTED) {
            missing++;
            continue;
        }
        if (st != KILN_OK) fail_msg("encoding %s as %s: %s", ldr, fi->name, kiln_last_error(fx->cpu));
        compare_texture(fx, &tex, "real texture");
        kiln_texture_free(&tex);
        tested++;
    }
    if (missing) print_message("note: %d block formats have no encoder yet; their real-texture blocks were not tested\n", missing);
    print_message("real-texture blocks compared for %d formats\n", tested);
    if (have_ldr) kiln_image_free(&src_ldr);
    if (have_hdr) kiln_image_free(&src_hdr);
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

static void validation_layer_ran(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    assert_int_equal(kt_gpu_validation_messages(fx->gpu), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_and_crafted_blocks),
        cmocka_unit_test(mip_levels_and_layers),
        cmocka_unit_test(batches_and_subgroup_sizes),
        cmocka_unit_test(real_texture_blocks),
        cmocka_unit_test(validation_layer_ran),
    };
    return cmocka_run_group_tests(tests, kt_gpu_setup_1thread, kt_gpu_teardown);
}

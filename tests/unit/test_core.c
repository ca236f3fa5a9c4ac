/* test_core.c - format table, contexts, thread pool determinism, half floats, texture geometry. */
#include "support.h"
#include "core/internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void formats_table_is_consistent(void **state)
{
    (void)state;
    for (int f = 1; f < KILN_FORMAT_COUNT; f++) {
        const kiln_format_info *t = kiln_format_get_info((kiln_format)f);
        assert_non_null(t);
        assert_int_equal(t->format, f);
        assert_true(t->block_bytes > 0);
        /* the full name and the Vulkan name resolve (ETC1 rows share ETC2's Vulkan name) */
        assert_int_equal(kiln_format_from_name(t->name), f);
        if (!(t->flags & KILN_FF_ETC1)) {
            assert_int_equal(kiln_format_from_vk(t->vk_format), f);
            char vk[64];
            snprintf(vk, sizeof vk, "VK_FORMAT_%s", t->vk_name);
            assert_int_equal(kiln_format_from_name(vk), f);
        }
        if (t->dxgi_format && f != KILN_FORMAT_BC1_RGB_UNORM && f != KILN_FORMAT_BC1_RGB_SRGB)
            assert_int_equal(kiln_format_from_dxgi(t->dxgi_format), f);
    }
    assert_null(kiln_format_get_info(KILN_FORMAT_UNDEFINED));
    assert_null(kiln_format_get_info(KILN_FORMAT_COUNT));
}

static void format_names(void **state)
{
    (void)state;
    assert_int_equal(kiln_format_from_name("bc1"), KILN_FORMAT_BC1_RGB_UNORM);
    assert_int_equal(kiln_format_from_name("BC7-SRGB"), KILN_FORMAT_BC7_SRGB);
    assert_int_equal(kiln_format_from_name("bc4-snorm"), KILN_FORMAT_BC4_SNORM);
    assert_int_equal(kiln_format_from_name("DXGI_FORMAT_BC7_UNORM_SRGB"), KILN_FORMAT_BC7_SRGB);
    assert_int_equal(kiln_format_from_name("BC3_UNORM"), KILN_FORMAT_BC3_UNORM);
    assert_int_equal(kiln_format_from_name("DXT5"), KILN_FORMAT_BC3_UNORM);
    assert_int_equal(kiln_format_from_name("VK_FORMAT_ETC2_R8G8B8_UNORM_BLOCK"), KILN_FORMAT_ETC2_RGB8_UNORM);
    assert_int_equal(kiln_format_from_name("etc1"), KILN_FORMAT_ETC1_UNORM);
    assert_int_equal(kiln_format_from_name("bc6h-sf"), KILN_FORMAT_BC6H_SFLOAT);
    assert_int_equal(kiln_format_from_name("nonsense"), KILN_FORMAT_UNDEFINED);
    assert_int_equal(kiln_format_from_cli("bc1", KILN_FF_SRGB), KILN_FORMAT_BC1_RGB_SRGB);
    assert_int_equal(kiln_format_from_cli("eac-rg11", KILN_FF_SIGNED), KILN_FORMAT_EAC_RG11_SNORM);
    assert_int_equal(kiln_format_from_cli("rgba16f", 0), KILN_FORMAT_RGBA16F);
    assert_int_equal(kiln_format_from_cli("etc2-rgba", KILN_FF_SIGNED), KILN_FORMAT_UNDEFINED);
}

static void image_sizes(void **state)
{
    (void)state;
    assert_int_equal(kiln_format_image_size(KILN_FORMAT_BC1_RGB_UNORM, 1, 1), 8);
    assert_int_equal(kiln_format_image_size(KILN_FORMAT_BC7_UNORM, 5, 3), 32);
    assert_int_equal(kiln_format_image_size(KILN_FORMAT_RGBA16F, 3, 5), 120);
    assert_int_equal(kiln_format_image_size(KILN_FORMAT_BC1_RGB_UNORM, 0, 4), 0);
}

static void texture_geometry(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    kiln_texture t;
    assert_int_equal(kiln_texture_alloc(ctx, &t, KILN_FORMAT_BC1_RGB_UNORM, 13, 5, 0, 1, 1), KILN_OK);
    assert_int_equal(t.levels, 4); /* 13x5, 6x2, 3x1, 1x1 */
    assert_int_equal(t.level_size[0], 4 * 2 * 8);
    assert_int_equal(t.level_size[3], 8);
    size_t sz;
    assert_non_null(kiln_texture_image(&t, 3, 0, 0, &sz));
    assert_null(kiln_texture_image(&t, 4, 0, 0, &sz));
    assert_int_equal(kiln_texture_set_kv(ctx, &t, "b", "2"), KILN_OK);
    assert_int_equal(kiln_texture_set_kv(ctx, &t, "a", "1"), KILN_OK);
    assert_string_equal(t.kv[0].key, "a");
    kiln_texture_free(&t);
    assert_int_equal(kiln_texture_alloc(ctx, &t, KILN_FORMAT_BC1_RGB_UNORM, 1u << 31, 4, 1, 1, 1), KILN_ERR_TOO_LARGE);
    assert_true(strlen(kiln_last_error(ctx)) > 0);
    assert_int_equal(kiln_texture_alloc(ctx, &t, KILN_FORMAT_BC1_RGB_UNORM, 0, 0, 1, 1, 1), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_texture_alloc(ctx, &t, KILN_FORMAT_BC1_RGB_UNORM, 4, 4, 5, 1, 1), KILN_ERR_INVALID_ARGUMENT);
    kiln_context_free(ctx);
}

static void fill(void *user, size_t b, size_t e, uint32_t worker)
{
    uint32_t *out = user;
    for (size_t i = b; i < e; i++) out[i] = (uint32_t)(i * 2654435761u) ^ (uint32_t)(i >> 3);
}

static void parallel_for_is_deterministic(void **state)
{
    (void)state;
    enum { N = 100003 };
    static uint32_t a[N], b[N];
    kiln_context *c1 = kt_context(1, KILN_BACKEND_CPU), *c8 = kt_context(8, KILN_BACKEND_CPU);
    assert_int_equal(kiln_context_threads(c8), 8);
    for (int rep = 0; rep < 20; rep++) {
        memset(a, 0, sizeof a);
        memset(b, 0, sizeof b);
        assert_int_equal(kiln__parallel_for(c1, N, 97, fill, a), KILN_OK);
        assert_int_equal(kiln__parallel_for(c8, N, 1 + rep, fill, b), KILN_OK);
        assert_memory_equal(a, b, sizeof a);
    }
    kiln_context_free(c1);
    kiln_context_free(c8);
}

static int cancel_at_half(void *user, float f) { return f > 0.5f; }

static void cancel_works(void **state)
{
    (void)state;
    enum { N = 10000 };
    static uint32_t a[N];
    kiln_context_params p;
    kiln_context_params_init(&p);
    p.threads = 2;
    p.progress = cancel_at_half;
    kiln_context *ctx;
    assert_int_equal(kiln_context_create(&p, &ctx), KILN_OK);
    assert_int_equal(kiln__parallel_for(ctx, N, 10, fill, a), KILN_ERR_CANCELLED);
    kiln_context_free(ctx);
}

static void half_floats(void **state)
{
    (void)state;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = kiln__half_to_float((uint16_t)h);
        if (isnan(f)) continue;
        assert_int_equal(kiln__float_to_half(f), h);
    }
    assert_true(kiln__half_to_float(0x3c00) == 1.0f);
    assert_int_equal(kiln__float_to_half(65520.0f), 0x7c00);   /* rounds to inf */
    assert_int_equal(kiln__float_to_half(65519.0f), 0x7bff);
    assert_int_equal(kiln__float_to_half(1e-8f), 0);
}

static void status_strings(void **state)
{
    (void)state;
    for (int s = 0; s <= KILN_ERR_INTERNAL; s++) assert_true(strlen(kiln_status_string((kiln_status)s)) > 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(formats_table_is_consistent), cmocka_unit_test(format_names),
        cmocka_unit_test(image_sizes),                 cmocka_unit_test(texture_geometry),
        cmocka_unit_test(parallel_for_is_deterministic), cmocka_unit_test(cancel_works),
        cmocka_unit_test(half_floats),                 cmocka_unit_test(status_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

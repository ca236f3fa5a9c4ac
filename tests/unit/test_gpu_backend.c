/* test_gpu_backend.c - backend resolution and device choice (src/gpu/vk_device.c):
 *  - AUTO uses a real GPU when one exists, else the CPU silently; a CPU Vulkan implementation
 *    (lavapipe) only with KILN_ALLOW_CPU_VULKAN=1;
 *  - VULKAN works on any device (lavapipe included) and fails with KILN_ERR_NO_DEVICE and a clear
 *    message when there is none (simulated by pointing the loader at a driver list that does not exist);
 *  - a device index that does not exist is a clear KILN_ERR_INVALID_ARGUMENT;
 *  - kiln_gpu_list, kiln_context_backend, kiln_context_gpu, kiln_last_gpu_ms. */
#include "support.h"
#include "gpu/gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static kiln_context *context(kiln_backend backend, int device_index)
{
    kiln_context_params p;
    kiln_context_params_init(&p);
    p.threads = 1;
    p.backend = backend;
    p.device_index = device_index;
    kiln_context *ctx = NULL;
    assert_int_equal(kiln_context_create(&p, &ctx), KILN_OK);
    return ctx;
}

/* A 9x6 BC1 texture of random blocks. */
static void small_texture(kiln_texture *tex)
{
    kiln_context *ctx = context(KILN_BACKEND_CPU, -1);
    assert_int_equal(kiln_texture_alloc(ctx, tex, KILN_FORMAT_BC1_RGBA_UNORM, 9, 6, 1, 1, 1), KILN_OK);
    kt_rng rng;
    kt_rng_seed(&rng, 3);
    kt_rng_bytes(&rng, tex->data, tex->data_size);
    kiln_context_free(ctx);
}

static uint32_t device_count(void)
{
    kiln_context *ctx = context(KILN_BACKEND_CPU, -1);
    uint32_t n = 0;
    assert_int_equal(kiln_gpu_list(ctx, NULL, 0, &n), KILN_OK);
    kiln_context_free(ctx);
    return n;
}

static int setup(void **state)
{
    setenv("KILN_VK_VALIDATION", "1", 1);
    unsetenv("KILN_ALLOW_CPU_VULKAN");
    return 0;
}

static void gpu_list_arguments(void **state)
{
    kiln_context *ctx = context(KILN_BACKEND_AUTO, -1);
    uint32_t n = 99;
    assert_int_equal(kiln_gpu_list(ctx, NULL, 0, NULL), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_gpu_list(ctx, NULL, 3, &n), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(n, 0);
    assert_int_equal(kiln_gpu_list(ctx, NULL, 0, &n), KILN_OK);
    kiln_gpu_info infos[16];
    memset(infos, 0, sizeof infos);
    uint32_t m = 0;
    assert_int_equal(kiln_gpu_list(ctx, infos, 16, &m), KILN_OK);
    assert_int_equal(m, n);
    for (uint32_t i = 0; i < m && i < 16; i++) {
        assert_true(infos[i].name[0] != 0);
        assert_true(infos[i].driver[0] != 0);
        assert_true(infos[i].api_version >= (1u << 22 | 1u << 12)); /* Vulkan 1.1 */
        assert_true(infos[i].subgroup_size >= 1);
        print_message("device %u: %s (%s), subgroup %u, BC %d, ETC2 %d, %s\n", i, infos[i].name, infos[i].driver,
                      infos[i].subgroup_size, infos[i].bc_sampling, infos[i].etc2_sampling,
                      kiln__gpu_device_is_cpu(ctx, i) ? "CPU implementation" : infos[i].discrete ? "discrete" : "integrated/virtual");
    }
    if (m > 1) { /* capacity smaller than the list: fills what fits, reports the total */
        kiln_gpu_info one;
        uint32_t c = 0;
        assert_int_equal(kiln_gpu_list(ctx, &one, 1, &c), KILN_OK);
        assert_int_equal(c, m);
        assert_string_equal(one.name, infos[0].name);
    }
    /* listing does not pick a backend: AUTO resolves on demand */
    kiln_context_free(ctx);
}

static void auto_uses_a_real_gpu_or_the_cpu(void **state)
{
    kiln_context *ctx = context(KILN_BACKEND_AUTO, -1);
    uint32_t n = 0;
    assert_int_equal(kiln_gpu_list(ctx, NULL, 0, &n), KILN_OK);
    int real = 0;
    for (uint32_t i = 0; i < n; i++) real |= !kiln__gpu_device_is_cpu(ctx, i);
    kiln_texture tex;
    small_texture(&tex);
    kiln_image img;
    assert_int_equal(kiln_decode(ctx, &tex, 0, 0, 0, &img), KILN_OK);
    assert_string_equal(kiln_last_error(ctx), "");
    kiln_image_free(&img);
    if (real) {
        assert_int_equal(kiln_context_backend(ctx), KILN_BACKEND_VULKAN);
        assert_non_null(kiln_context_gpu(ctx));
        assert_true(kiln_last_gpu_ms(ctx) >= 0.0);
    } else {
        assert_int_equal(kiln_context_backend(ctx), KILN_BACKEND_CPU);
        assert_null(kiln_context_gpu(ctx));
        assert_true(kiln_last_gpu_ms(ctx) < 0.0);
    }
    kiln_context_free(ctx);

    /* KILN_ALLOW_CPU_VULKAN=1 lets AUTO take a CPU implementation too */
    if (n > 0) {
        setenv("KILN_ALLOW_CPU_VULKAN", "1", 1);
        ctx = context(KILN_BACKEND_AUTO, -1);
        assert_int_equal(kiln_context_backend(ctx), KILN_BACKEND_VULKAN);
        assert_non_null(kiln_context_gpu(ctx));
        assert_int_equal(kiln_decode(ctx, &tex, 0, 0, 0, &img), KILN_OK);
        assert_true(kiln_last_gpu_ms(ctx) >= 0.0);
        kiln_image_free(&img);
        assert_int_equal(kiln__gpu_validation_messages(ctx), 0);
        kiln_context_free(ctx);
        unsetenv("KILN_ALLOW_CPU_VULKAN");
    }
    kiln_texture_free(&tex);
}

static void explicit_vulkan_works_on_any_device(void **state)
{
    if (device_count() == 0) skip();
    kiln_context *ctx = context(KILN_BACKEND_VULKAN, -1);
    kiln_context *cpu = context(KILN_BACKEND_CPU, -1);
    assert_int_equal(kiln_context_backend(ctx), KILN_BACKEND_VULKAN);
    const kiln_gpu_info *info = kiln_context_gpu(ctx);
    assert_non_null(info);
    kiln_gpu_info first;
    uint32_t n = 0;
    assert_int_equal(kiln_gpu_list(ctx, &first, 1, &n), KILN_OK);
    assert_string_equal(info->name, first.name); /* the first (fastest) device */
    kiln_texture tex;
    small_texture(&tex);
    kiln_image g, c;
    assert_int_equal(kiln_decode(ctx, &tex, 0, 0, 0, &g), KILN_OK);
    assert_true(kiln_last_gpu_ms(ctx) >= 0.0);
    assert_int_equal(kiln_decode(cpu, &tex, 0, 0, 0, &c), KILN_OK);
    assert_true(kiln_last_gpu_ms(cpu) < 0.0);
    assert_int_equal(kiln_context_backend(cpu), KILN_BACKEND_CPU);
    assert_null(kiln_context_gpu(cpu));
    assert_memory_equal(g.pixels, c.pixels, (size_t)9 * 6 * 4);
    /* uncompressed formats decode on the CPU whatever the backend */
    kiln_texture raw;
    assert_int_equal(kiln_texture_alloc(ctx, &raw, KILN_FORMAT_RGBA8_UNORM, 3, 3, 1, 1, 1), KILN_OK);
    kiln_image r;
    assert_int_equal(kiln_decode(ctx, &raw, 0, 0, 0, &r), KILN_OK);
    assert_true(kiln_last_gpu_ms(ctx) < 0.0);
    kiln_image_free(&r);
    kiln_texture_free(&raw);
    kiln_image_free(&g);
    kiln_image_free(&c);
    kiln_texture_free(&tex);
    assert_int_equal(kiln__gpu_validation_messages(ctx), 0);
    kiln_context_free(ctx);
    kiln_context_free(cpu);
}

static void bad_device_index_is_a_clear_error(void **state)
{
    uint32_t n = device_count();
    kiln_texture tex;
    small_texture(&tex);
    static const kiln_backend backends[2] = {KILN_BACKEND_VULKAN, KILN_BACKEND_AUTO};
    for (int b = 0; b < 2; b++) {
        kiln_context *ctx = context(backends[b], (int)n + 3);
        kiln_image img;
        assert_int_equal(kiln_decode(ctx, &tex, 0, 0, 0, &img), KILN_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(kiln_last_error(ctx), "does not exist"));
        assert_null(img.pixels);
        kiln_context_free(ctx);
    }
    /* an explicit index selects that device even under AUTO (a CPU implementation included) */
    if (n > 0) {
        kiln_context *ctx = context(KILN_BACKEND_AUTO, (int)n - 1);
        assert_int_equal(kiln_context_backend(ctx), KILN_BACKEND_VULKAN);
        kiln_gpu_info infos[16];
        uint32_t m = 0;
        assert_int_equal(kiln_gpu_list(ctx, infos, 16, &m), KILN_OK);
        if (n <= 16) assert_string_equal(kiln_context_gpu(ctx)->name, infos[n - 1].name);
        kiln_context_free(ctx);
    }
    /* CPU ignores the device index */
    kiln_context *ctx = context(KILN_BACKEND_CPU, 42);
    kiln_image img;
    assert_int_equal(kiln_decode(ctx, &tex, 0, 0, 0, &img), KILN_OK);
    kiln_image_free(&img);
    kiln_context_free(ctx);
    kiln_texture_free(&tex);
}

/* No driver at all: the loader is pointed at a driver list that does not exist. */
static void no_device_fallback_and_error(void **state)
{
    const char *vars[2] = {"VK_DRIVER_FILES", "VK_ICD_FILENAMES"};
    char *saved[2];
    for (int i = 0; i < 2; i++) {
        const char *v = getenv(vars[i]);
        saved[i] = v ? strdup(v) : NULL;
        setenv(vars[i], "/nonexistent/kiln_no_driver.json", 1);
    }
    kiln_texture tex;
    small_texture(&tex);

    kiln_context *ctx = context(KILN_BACKEND_AUTO, -1);
    uint32_t n = 7;
    assert_int_equal(kiln_gpu_list(ctx, NULL, 0, &n), KILN_OK);
    assert_int_equal(n, 0);
    kiln_image img;
    assert_int_equal(kiln_decode(ctx, &tex, 0, 0, 0, &img), KILN_OK); /* silent CPU fallback */
    assert_string_equal(kiln_last_error(ctx), "");
    assert_int_equal(kiln_context_backend(ctx), KILN_BACKEND_CPU);
    assert_null(kiln_context_gpu(ctx));
    kiln_image_free(&img);
    kiln_context_free(ctx);

    ctx = context(KILN_BACKEND_VULKAN, -1);
    assert_int_equal(kiln_decode(ctx, &tex, 0, 0, 0, &img), KILN_ERR_NO_DEVICE);
    print_message("VULKAN without a device: %s\n", kiln_last_error(ctx));
    assert_non_null(strstr(kiln_last_error(ctx), "no Vulkan device found: "));
    assert_non_null(strstr(kiln_last_error(ctx), " or use --backend cpu"));
    assert_null(img.pixels);
    /* asked again: the same error, no crash */
    assert_int_equal(kiln_decode(ctx, &tex, 0, 0, 0, &img), KILN_ERR_NO_DEVICE);
    kiln_context_free(ctx);

    for (int i = 0; i < 2; i++) {
        if (saved[i]) setenv(vars[i], saved[i], 1);
        else unsetenv(vars[i]);
        free(saved[i]);
    }
    kiln_texture_free(&tex);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gpu_list_arguments),
        cmocka_unit_test(auto_uses_a_real_gpu_or_the_cpu),
        cmocka_unit_test(explicit_vulkan_works_on_any_device),
        cmocka_unit_test(bad_device_index_is_a_clear_error),
        cmocka_unit_test(no_device_fallback_and_error),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}

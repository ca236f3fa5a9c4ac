/* test_auto_estimate.c - `auto`'s choice for a whole job (src/core/estimate.c, kiln_timings.h): the CPU
 * estimate scales with texels and threads and grows with quality, sRGB / SNORM rows share their base's
 * rates, a format without a rate gives no estimate (and never the CPU by this rule); a small fast job goes to
 * the CPU, a large slow one to the GPU; KILN_GPU_START_MS moves the boundary (0: never the CPU); reading the
 * inputs hides up to the whole device start; a device start learned in <cache dir>/device-start replaces the
 * default when quicker (written only when it moves by more than 10 %). No Vulkan device is involved. */
#include "support.h"

#include "core/internal.h"
#include "kiln/kiln_timings.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int setup(void **state)
{
    (void)state;
    unsetenv("KILN_GPU_START_MS");
    setenv("KILN_PIPELINE_CACHE", "0", 1); /* no learned device start from the user's cache directory */
    return 0;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* <cache dir>/device-start: a start this machine measured replaces the default when it is quicker */
static void learned_start(void **state)
{
    (void)state;
    const double def = kiln_gpu_start_estimate_ms();
    char dir[1024], path[1100], buf[64];
    snprintf(dir, sizeof dir, "%s/auto-test.XXXXXX", KILN_BINARY_DIR);
    if (!mkdtemp(dir)) {
        snprintf(dir, sizeof dir, "/tmp/auto-test.XXXXXX");
        assert_non_null(mkdtemp(dir));
    }
    snprintf(path, sizeof path, "%s/device-start", dir);
    unsetenv("KILN_PIPELINE_CACHE");
    setenv("KILN_PIPELINE_CACHE_DIR", dir, 1);
    assert_true(kiln_gpu_start_estimate_ms() == def); /* no file */
    put(path, "kiln-device-start 1 40.5\n");
    assert_true(kiln_gpu_start_estimate_ms() == 40.5);
    setenv("KILN_GPU_START_MS", "7", 1); /* the variable wins */
    assert_true(kiln_gpu_start_estimate_ms() == 7.0);
    unsetenv("KILN_GPU_START_MS");
    put(path, "kiln-device-start 1 4000\n"); /* slower than the default: the default */
    assert_true(kiln_gpu_start_estimate_ms() == def);
    put(path, "kiln-device-start 1 x\n");
    assert_true(kiln_gpu_start_estimate_ms() == def);
    put(path, "something else 1 40\n");
    assert_true(kiln_gpu_start_estimate_ms() == def);
    /* recorded: written, kept within 10 %, rewritten beyond */
    remove(path);
    kiln__record_gpu_start(50.0);
    assert_true(kiln_gpu_start_estimate_ms() == 50.0);
    kiln__record_gpu_start(52.0);
    assert_true(kiln_gpu_start_estimate_ms() == 50.0);
    kiln__record_gpu_start(80.0);
    assert_true(kiln_gpu_start_estimate_ms() == 80.0);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    assert_string_equal(buf, "kiln-device-start 1 80.0\n");
    setenv("KILN_PIPELINE_CACHE", "0", 1); /* off: neither read nor written */
    assert_true(kiln_gpu_start_estimate_ms() == def);
    kiln__record_gpu_start(30.0);
    unsetenv("KILN_PIPELINE_CACHE");
    assert_true(kiln_gpu_start_estimate_ms() == 80.0);
    remove(path);
    assert_int_equal(rmdir(dir), 0);
    unsetenv("KILN_PIPELINE_CACHE_DIR");
    setenv("KILN_PIPELINE_CACHE", "0", 1);
}

static void cpu_estimate_scales(void **state)
{
    (void)state;
    const double px = 1024.0 * 1024.0;
    const double a = kiln_cpu_encode_estimate_ms(KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_FAST, px, 16);
    assert_true(a > 0.0);
    assert_true(fabs(kiln_cpu_encode_estimate_ms(KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_FAST, 4 * px, 16) - 4 * a) < 1e-9 * a);
    assert_true(fabs(kiln_cpu_encode_estimate_ms(KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_FAST, px, 8) - 2 * a) < 1e-9 * a);
    assert_true(kiln_cpu_encode_estimate_ms(KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_FAST, px, 0) > 0.0); /* all cores */
    assert_true(kiln_cpu_encode_estimate_ms(KILN_FORMAT_BC1_RGB_SRGB, KILN_QUALITY_FAST, px, 16) == a);
    assert_true(kiln_cpu_encode_estimate_ms(KILN_FORMAT_BC4_SNORM, KILN_QUALITY_HIGH, px, 16) ==
                kiln_cpu_encode_estimate_ms(KILN_FORMAT_BC4_UNORM, KILN_QUALITY_HIGH, px, 16));
    const kiln_format fs[] = {KILN_FORMAT_BC1_RGB_UNORM, KILN_FORMAT_BC4_UNORM, KILN_FORMAT_BC5_UNORM,
                              KILN_FORMAT_ETC1_UNORM, KILN_FORMAT_ETC2_RGB8_UNORM, KILN_FORMAT_ETC2_RGBA8_UNORM,
                              KILN_FORMAT_EAC_R11_UNORM, KILN_FORMAT_BC6H_UFLOAT};
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++) {
        const double fast = kiln_cpu_encode_estimate_ms(fs[i], KILN_QUALITY_FAST, px, 16);
        const double normal = kiln_cpu_encode_estimate_ms(fs[i], KILN_QUALITY_NORMAL, px, 16);
        assert_true(fast > 0.0);
        assert_true(normal > fast);
    }
    /* no rate (BC7 has no encoder), a bad quality, negative texels: no estimate */
    assert_true(kiln_cpu_encode_estimate_ms(KILN_FORMAT_BC7_UNORM, KILN_QUALITY_FAST, px, 16) < 0.0);
    assert_true(kiln_cpu_encode_estimate_ms(KILN_FORMAT_BC1_RGB_UNORM, (kiln_quality)7, px, 16) < 0.0);
    assert_true(kiln_cpu_encode_estimate_ms(KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_FAST, -1.0, 16) < 0.0);
}

static void choice(void **state)
{
    (void)state;
    kiln_auto_estimate e;
    const kiln_format bc1 = KILN_FORMAT_BC1_RGB_UNORM, etc2 = KILN_FORMAT_ETC2_RGB8_UNORM;
    /* one 512^2 image at fast: done on 16 threads long before a device is up */
    assert_int_equal(kiln_auto_choose(&bc1, 1, KILN_QUALITY_FAST, 512.0 * 512, 16, 0.0, &e), 1);
    assert_true(e.cpu && e.cpu_ms > 0.0 && e.cpu_ms <= e.gpu_ms && e.gpu_start_ms > 0.0 && e.gpu_ms >= e.gpu_start_ms);
    /* 4096^2 at etc2-rgb max: seconds on the CPU, the GPU */
    assert_int_equal(kiln_auto_choose(&etc2, 1, KILN_QUALITY_MAX, 4096.0 * 4096, 16, 0.0, &e), 0);
    assert_true(!e.cpu && e.cpu_ms > e.gpu_ms);
    /* several formats add up; fewer threads make the CPU slower */
    kiln_auto_estimate one, two;
    const kiln_format pair[] = {bc1, etc2};
    kiln_auto_choose(&bc1, 1, KILN_QUALITY_NORMAL, 2048.0 * 2048, 16, 0.0, &one);
    kiln_auto_choose(pair, 2, KILN_QUALITY_NORMAL, 2048.0 * 2048, 16, 0.0, &two);
    assert_true(two.cpu_ms > one.cpu_ms && two.gpu_ms > one.gpu_ms);
    kiln_auto_estimate t16, t1;
    kiln_auto_choose(&etc2, 1, KILN_QUALITY_FAST, 512.0 * 512, 16, 0.0, &t16);
    const int c1 = kiln_auto_choose(&etc2, 1, KILN_QUALITY_FAST, 512.0 * 512, 1, 0.0, &t1);
    assert_true(t1.cpu_ms > t16.cpu_ms && c1 == (t1.cpu_ms <= t1.gpu_ms));
    /* work both paths do while the device starts (reading) hides up to the whole start, no more */
    kiln_auto_estimate o0, o1, o2;
    kiln_auto_choose(&bc1, 1, KILN_QUALITY_FAST, 8192.0 * 8192, 16, 0.0, &o0);
    kiln_auto_choose(&bc1, 1, KILN_QUALITY_FAST, 8192.0 * 8192, 16, o0.gpu_start_ms, &o1);
    const int c2 = kiln_auto_choose(&bc1, 1, KILN_QUALITY_FAST, 8192.0 * 8192, 16, 1e9, &o2);
    assert_true(fabs(o1.gpu_ms - (o0.gpu_ms - o0.gpu_start_ms)) < 1e-6 && o2.gpu_ms == o1.gpu_ms);
    assert_true(o1.cpu_ms == o0.cpu_ms && c2 == (o2.cpu_ms <= o2.gpu_ms));
    /* a format without a rate: no estimate, so not the CPU by this rule */
    const kiln_format bc7 = KILN_FORMAT_BC7_UNORM;
    assert_int_equal(kiln_auto_choose(&bc7, 1, KILN_QUALITY_FAST, 16.0, 16, 0.0, &e), 0);
    assert_true(e.cpu_ms < 0.0);
    assert_int_equal(kiln_auto_choose(&bc1, 0, KILN_QUALITY_FAST, 16.0, 16, 0.0, NULL), 0);
    assert_int_equal(kiln_auto_choose(&bc1, 1, KILN_QUALITY_FAST, 0.0, 16, 0.0, NULL), 0);
    /* KILN_GPU_START_MS: 0 = an instant device (never the CPU); large = the CPU; malformed = the default */
    const double def = kiln_gpu_start_estimate_ms();
    setenv("KILN_GPU_START_MS", "0", 1);
    assert_true(kiln_gpu_start_estimate_ms() == 0.0);
    assert_int_equal(kiln_auto_choose(&bc1, 1, KILN_QUALITY_FAST, 16.0, 16, 0.0, &e), 0);
    setenv("KILN_GPU_START_MS", "1e6", 1);
    assert_int_equal(kiln_auto_choose(&etc2, 1, KILN_QUALITY_MAX, 4096.0 * 4096, 16, 0.0, &e), 1);
    assert_true(e.gpu_start_ms == 1e6);
    setenv("KILN_GPU_START_MS", "12x", 1);
    assert_true(kiln_gpu_start_estimate_ms() == def);
    setenv("KILN_GPU_START_MS", "-5", 1);
    assert_true(kiln_gpu_start_estimate_ms() == def);
    unsetenv("KILN_GPU_START_MS");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(cpu_estimate_scales, setup),
        cmocka_unit_test_setup(choice, setup),
        cmocka_unit_test_setup(learned_start, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

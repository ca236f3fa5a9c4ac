/* test_gpu_etc_ring.c - the pipelined ETC / EAC encoder (src/gpu/gpu_encode_etc_ring.inc, helper etcring):
 *  - batch_equals_cpu: kiln_encode_batch of images of different sizes (odd ones, 1x1, a partial last block
 *    row and column) into ETC1, ETC2 RGB, ETC2 RGBA, EAC R11 and EAC RG11 (and the signed EACs) at fast and
 *    normal (and ETC2 RGB A1), all formats in one call: every texture equals the CPU's byte for byte; every
 *    format must take the ring (kiln__gpu_bc_ring_probe); also with tiny row batches (several jobs per image, the last
 *    one a partial block row), with ETC2's T / H on the host (KILN_GPU_ETC2_TH=host), from float and 16-bit
 *    sources (ETC2 RGBA's alpha from the 8-bit view), with BC1 and ETC1 in one call (the two rings one after the other), and through
 *    kiln_encode_image (a single image takes the ring too).
 *  - last_gpu_ms_sums_batch: kiln_last_gpu_ms after a batch is the kernel time of all of its images, on
 *    the ring and on the synchronous path (KILN_GPU_ETC_RING=0): a batch of 8 copies of an image reports
 *    more than 3x the least time of one copy alone (one image's time, the old behaviour, fails that) and
 *    at most 4x the sum of the copies alone (double counting fails that). No absolute time is asserted. The
 *    ring runs one image a job here (KILN_RING_PACK=1): stacked into one job, 8 small copies take one
 *    dispatch, barely longer than one copy alone (0.034 against 0.031 ms on an H200), so the sum over jobs
 *    would not be what is tested. Then, with the default, 8 crops of one width stacked into one job: the CPU's
 *    bytes (ETC1, EAC R11, ETC2 RGB).
 * Validation layer on; asserts it reported nothing. Skipped without a Vulkan device. */
#include "support.h"
#include "core/internal.h"
#include "gpu/gpu_batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fixture {
    kiln_context *gpu;
    kiln_context *cpu;
    kiln_image rock;
    int have_rock;
} fixture;

static int setup(void **state)
{
    static fixture f;
    memset(&f, 0, sizeof f);
    if (kt_gpu_contexts(&f.gpu, &f.cpu, 2)) return -1;
    if (f.gpu) f.have_rock = kiln_image_load(f.cpu, kt_testdata("ldr/stktex_directionSign_a_256_rgba.png"), &f.rock) == KILN_OK;
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (f->have_rock) kiln_image_free(&f->rock);
    kiln_context_free(f->gpu);
    kiln_context_free(f->cpu);
    return 0;
}

/* A w x h crop of the test texture (or random texels) at (ox, oy), of the given pixel type; alpha varies. */
static void make_image(fixture *fx, kiln_image *img, kiln_pixel_type type, uint32_t w, uint32_t h, uint32_t ox, uint32_t oy,
                       kt_rng *rng)
{
    assert_int_equal(kiln_image_alloc(fx->cpu, img, w, h, type), KILN_OK);
    img->channels = 4;
    kt_fill_crop(img, fx->have_rock ? &fx->rock : NULL, ox, oy, 1, rng);
}

/* Blocks built for EAC's flagged jobs (test_gpu_encode_etc.c's make_crafted): flat, random two values, two
 * values with min + max = 255 and a small range (the CPU range estimate's double rounding boundary, which the
 * shader hands to the CPU), that plus values between, random. */
static void make_crafted(fixture *fx, kiln_image *img, uint32_t w, uint32_t h, kt_rng *rng)
{
    assert_int_equal(kiln_image_alloc(fx->cpu, img, w, h, KILN_PIXEL_U8), KILN_OK);
    img->channels = 4;
    kt_fill_crafted_blocks(img->pixels, w, h, rng);
}

#define NIMG 6
static const uint32_t sizes[NIMG][2] = {{37, 29}, {64, 64}, {1, 1}, {5, 3}, {128, 21}, {90, 77}};

static void make_set(fixture *fx, kiln_image *imgs, kiln_pixel_type type, uint64_t seed)
{
    kt_rng rng;
    kt_rng_seed(&rng, seed);
    for (int i = 0; i < NIMG; i++) make_image(fx, &imgs[i], type, sizes[i][0], sizes[i][1], 17u * (uint32_t)i, 11u * (uint32_t)i, &rng);
}

static void free_set(kiln_image *imgs)
{
    for (int i = 0; i < NIMG; i++) kiln_image_free(&imgs[i]);
}

/* kiln_encode_batch of imgs into the formats on the GPU and the CPU: every texture the same bytes. ring: the
 * formats must take the pipelined path. */
static void batch_vs_cpu(fixture *fx, const kiln_image *imgs, const kiln_format *fmts, uint32_t nf, kiln_quality q, int ring,
                         const char *what)
{
    kiln_encode_params ep[8];
    for (uint32_t f = 0; f < nf; f++) kiln_encode_params_init(&ep[f], fmts[f], q);
    if (ring)
        for (uint32_t f = 0; f < nf; f++)
            for (int i = 0; i < NIMG; i++) {
                kiln_status ps = kiln__gpu_bc_ring_probe(fx->gpu, &imgs[i], &ep[f]);
                if (ps != KILN_OK)
                    fail_msg("%s: %s q%d image %d does not take the ring: %s", what, kiln_format_get_info(fmts[f])->name, (int)q, i,
                             kiln_last_error(fx->gpu));
            }
    kiln_texture tg[NIMG * 8], tc[NIMG * 8];
    kiln_status st = kiln_encode_batch(fx->gpu, imgs, NIMG, ep, nf, 0, tg);
    if (st != KILN_OK) fail_msg("%s: GPU batch: %s", what, kiln_last_error(fx->gpu));
    assert_int_equal(kiln_encode_batch(fx->cpu, imgs, NIMG, ep, nf, 0, tc), KILN_OK);
    for (int i = 0; i < NIMG; i++)
        for (uint32_t f = 0; f < nf; f++) {
            size_t sg = 0, sc = 0;
            const uint8_t *g = kiln_texture_image(&tg[(size_t)i * nf + f], 0, 0, 0, &sg);
            const uint8_t *c = kiln_texture_image(&tc[(size_t)i * nf + f], 0, 0, 0, &sc);
            assert_int_equal(sg, sc);
            if (memcmp(g, c, sc) != 0) {
                size_t b = 0;
                while (g[b] == c[b]) b++;
                fail_msg("%s: %s q%d image %d (%ux%u) differs from the CPU at byte %zu", what, kiln_format_get_info(fmts[f])->name,
                         (int)q, i, imgs[i].width, imgs[i].height, b);
            }
        }
    for (size_t t = 0; t < (size_t)NIMG * nf; t++) {
        kiln_texture_free(&tg[t]);
        kiln_texture_free(&tc[t]);
    }
}

static const kiln_format all_fmts[] = {KILN_FORMAT_ETC1_UNORM, KILN_FORMAT_ETC2_RGB8_UNORM, KILN_FORMAT_ETC2_RGBA8_UNORM,
                                       KILN_FORMAT_EAC_R11_UNORM, KILN_FORMAT_EAC_RG11_UNORM, KILN_FORMAT_EAC_R11_SNORM,
                                       KILN_FORMAT_EAC_RG11_SNORM, KILN_FORMAT_ETC2_RGB8A1_UNORM};

static void batch_equals_cpu(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kiln_image imgs[NIMG];
    make_set(fx, imgs, KILN_PIXEL_U8, 1);
    /* every format on the ring, at fast and normal */
    batch_vs_cpu(fx, imgs, all_fmts, 8, KILN_QUALITY_FAST, 1, "u8");
    batch_vs_cpu(fx, imgs, all_fmts, 8, KILN_QUALITY_NORMAL, 1, "u8");
    /* several jobs per image: 2 block rows of the widest image per job */
    setenv("KILN_GPU_BATCH_BYTES", "4096", 1);
    batch_vs_cpu(fx, imgs, all_fmts, 8, KILN_QUALITY_FAST, 1, "small batches");
    const kiln_format en[] = {KILN_FORMAT_ETC1_UNORM, KILN_FORMAT_EAC_RG11_SNORM, KILN_FORMAT_ETC2_RGBA8_UNORM};
    batch_vs_cpu(fx, imgs, en, 3, KILN_QUALITY_NORMAL, 1, "small batches");
    unsetenv("KILN_GPU_BATCH_BYTES");
    /* ETC2's T / H on the host */
    setenv("KILN_GPU_ETC2_TH", "host", 1);
    batch_vs_cpu(fx, imgs, all_fmts, 3, KILN_QUALITY_FAST, 1, "host T/H");
    unsetenv("KILN_GPU_ETC2_TH");
    /* BC1 and ETC1 / EAC in one call */
    const kiln_format mixed[] = {KILN_FORMAT_BC1_RGB_UNORM, KILN_FORMAT_ETC1_UNORM, KILN_FORMAT_BC4_UNORM, KILN_FORMAT_EAC_R11_UNORM};
    batch_vs_cpu(fx, imgs, mixed, 4, KILN_QUALITY_FAST, 1, "mixed");
    /* a single image through kiln_encode_image */
    for (int f = 0; f < 5; f++) {
        kiln_encode_params ep;
        kiln_encode_params_init(&ep, all_fmts[f], KILN_QUALITY_FAST);
        size_t n = kiln_format_image_size(all_fmts[f], imgs[5].width, imgs[5].height);
        uint8_t *g = malloc(n), *c = malloc(n);
        assert_non_null(g);
        assert_non_null(c);
        assert_int_equal(kiln_encode_image(fx->gpu, &imgs[5], &ep, g, n), KILN_OK);
        assert_int_equal(kiln_encode_image(fx->cpu, &imgs[5], &ep, c, n), KILN_OK);
        assert_memory_equal(g, c, n);
        free(g);
        free(c);
    }
    free_set(imgs);
    /* EAC jobs the shader hands to the CPU (crafted blocks), in the ring's parallel fix-up */
    {
        kt_rng rng;
        kt_rng_seed(&rng, 5);
        for (int i = 0; i < NIMG; i++) make_crafted(fx, &imgs[i], sizes[i][0] + 40u, sizes[i][1] + 30u, &rng);
        const kiln_format eac[] = {KILN_FORMAT_EAC_R11_UNORM, KILN_FORMAT_EAC_RG11_UNORM, KILN_FORMAT_EAC_R11_SNORM,
                                   KILN_FORMAT_ETC2_RGBA8_UNORM};
        batch_vs_cpu(fx, imgs, eac, 4, KILN_QUALITY_FAST, 1, "crafted");
        batch_vs_cpu(fx, imgs, eac, 4, KILN_QUALITY_HIGH, 1, "crafted");
        free_set(imgs);
    }
    /* wider sources: every format takes the ring from 16-bit and float texels too */
    const kiln_format wide[] = {KILN_FORMAT_ETC1_UNORM, KILN_FORMAT_ETC2_RGB8_UNORM, KILN_FORMAT_ETC2_RGBA8_UNORM,
                                KILN_FORMAT_EAC_R11_UNORM, KILN_FORMAT_EAC_RG11_SNORM};
    make_set(fx, imgs, KILN_PIXEL_F32, 2);
    batch_vs_cpu(fx, imgs, wide, 5, KILN_QUALITY_FAST, 1, "f32");
    batch_vs_cpu(fx, imgs, wide, 3, KILN_QUALITY_HIGH, 1, "f32");
    setenv("KILN_GPU_ETC2_TH", "host", 1);
    batch_vs_cpu(fx, imgs, wide, 3, KILN_QUALITY_FAST, 1, "f32 host T/H");
    unsetenv("KILN_GPU_ETC2_TH");
    free_set(imgs);
    make_set(fx, imgs, KILN_PIXEL_U16, 3);
    batch_vs_cpu(fx, imgs, wide, 5, KILN_QUALITY_FAST, 1, "u16");
    free_set(imgs);
}

/* The batch's kiln_last_gpu_ms against its images' own. */
static void sums_for(fixture *fx, kiln_format fmt, const char *what)
{
    enum { N = 8 };
    kiln_image img;
    kt_rng rng;
    kt_rng_seed(&rng, 4);
    make_image(fx, &img, KILN_PIXEL_U8, 96, 96, 3, 5, &rng);
    kiln_image imgs[N];
    for (int i = 0; i < N; i++) imgs[i] = img;
    kiln_encode_params ep;
    kiln_encode_params_init(&ep, fmt, KILN_QUALITY_FAST);
    size_t n = kiln_format_image_size(fmt, img.width, img.height);
    uint8_t *dst = malloc(n);
    assert_non_null(dst);
    double least = 1e30, sum = 0.0;
    for (int i = 0; i < N; i++) {
        assert_int_equal(kiln_encode_image(fx->gpu, &img, &ep, dst, n), KILN_OK);
        double ms = kiln_last_gpu_ms(fx->gpu);
        assert_true(ms > 0.0);
        if (ms < least) least = ms;
        sum += ms;
    }
    free(dst);
    /* the least of three batches: on lavapipe the "GPU" is the loaded CI host, and one batch measured 61 ms against
     * the singles' 12.2 (ASan run, fresh clone, 2-core box, 2026-11-28 04:26 UTC) */
    double batch = 1e30;
    for (int r = 0; r < 3; r++) {
        kiln_texture tex[N];
        assert_int_equal(kiln_encode_batch(fx->gpu, imgs, N, &ep, 1, 0, tex), KILN_OK);
        double ms = kiln_last_gpu_ms(fx->gpu);
        if (ms < batch) batch = ms;
        for (int i = 0; i < N; i++) kiln_texture_free(&tex[i]);
    }
    kiln_image_free(&img);
    if (!(batch > 3.0 * least && batch <= 4.0 * sum))
        fail_msg("%s %s: batch of %d reports %.3f ms; one image alone %.3f ms at least, the %d alone %.3f ms in all", what,
                 kiln_format_get_info(fmt)->name, N, batch, least, N, sum);
}

/* The ring's default stacks images of one width into one job: 8 different crops 96 wide (heights 44..100, whole
 * block rows, the last one 33 rows: a job may end on a partial block row) must each hold the CPU's bytes (a stacked
 * job's offsets into the input, the output and the flagged-block lists). */
static void stacked_equals_cpu(fixture *fx, kiln_format fmt)
{
    enum { N = 8 };
    kiln_image imgs[N];
    kt_rng rng;
    kt_rng_seed(&rng, 5);
    for (int i = 0; i < N; i++)
        make_image(fx, &imgs[i], KILN_PIXEL_U8, 96, i == N - 1 ? 33 : 44 + 8 * (uint32_t)i, 3 + 7 * (uint32_t)i, 5 + 11 * (uint32_t)i, &rng);
    kiln_encode_params ep;
    kiln_encode_params_init(&ep, fmt, KILN_QUALITY_FAST);
    kiln_texture tex[N];
    assert_int_equal(kiln_encode_batch(fx->gpu, imgs, N, &ep, 1, 0, tex), KILN_OK);
    for (int i = 0; i < N; i++) {
        size_t n = kiln_format_image_size(fmt, imgs[i].width, imgs[i].height), size = 0;
        uint8_t *dst = malloc(n);
        assert_non_null(dst);
        assert_int_equal(kiln_encode_image(fx->cpu, &imgs[i], &ep, dst, n), KILN_OK);
        const uint8_t *t = kiln_texture_image(&tex[i], 0, 0, 0, &size);
        assert_int_equal(size, n);
        if (memcmp(t, dst, n)) fail_msg("ring %s: image %d of a stacked job differs from the CPU's", kiln_format_get_info(fmt)->name, i);
        free(dst);
        kiln_texture_free(&tex[i]);
        kiln_image_free(&imgs[i]);
    }
}

static void last_gpu_ms_sums_batch(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    double probe;
    {
        kiln_image img;
        kt_rng rng;
        kt_rng_seed(&rng, 9);
        make_image(fx, &img, KILN_PIXEL_U8, 8, 8, 0, 0, &rng);
        kiln_encode_params ep;
        kiln_encode_params_init(&ep, KILN_FORMAT_ETC1_UNORM, KILN_QUALITY_FAST);
        uint8_t out[32];
        assert_int_equal(kiln_encode_image(fx->gpu, &img, &ep, out, sizeof out), KILN_OK);
        probe = kiln_last_gpu_ms(fx->gpu);
        kiln_image_free(&img);
    }
    if (probe < 0.0) skip(); /* the device has no timestamps */
    const kiln_format fmts[] = {KILN_FORMAT_ETC1_UNORM, KILN_FORMAT_EAC_R11_UNORM, KILN_FORMAT_ETC2_RGB8_UNORM};
    setenv("KILN_RING_PACK", "1", 1);
    for (int f = 0; f < 3; f++) sums_for(fx, fmts[f], "ring");
    unsetenv("KILN_RING_PACK");
    setenv("KILN_RING_STAGED", "1", 1); /* and through the staged upload (gpu_ring_host.h) */
    for (int f = 0; f < 3; f++) stacked_equals_cpu(fx, fmts[f]);
    unsetenv("KILN_RING_STAGED");
    setenv("KILN_GPU_ETC_RING", "0", 1);
    for (int f = 0; f < 3; f++) sums_for(fx, fmts[f], "sync");
    unsetenv("KILN_GPU_ETC_RING");
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
        cmocka_unit_test(batch_equals_cpu),
        cmocka_unit_test(last_gpu_ms_sums_batch),
        cmocka_unit_test(validation_layer_ran),
    };
    if (getenv("KILN_TEST_FILTER")) cmocka_set_test_filter(getenv("KILN_TEST_FILTER"));
    return cmocka_run_group_tests(tests, setup, teardown);
}

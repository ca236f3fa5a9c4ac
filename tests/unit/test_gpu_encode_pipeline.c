/* test_gpu_encode_pipeline.c - the pipelined GPU encode path (src/gpu/gpu_encode_bc_ring.inc) and
 * kiln_encode_batch (src/codec/encode.c), on the Vulkan device (lavapipe in CI):
 *   - kiln__gpu_encode (pipelined for BC1-BC5) gives the bytes of the synchronous path
 *     (kiln__gpu_encode_sync) and of the CPU encoder, with KILN_GPU_BATCH_BYTES forcing many
 *     block-row batches (so 3 are in flight), for 8-bit, 16-bit and float sources;
 *   - kiln_encode_batch over images of different sizes and pixel types, each into several formats
 *     at once (BC formats sharing one upload, a format with a synchronous GPU encoder or none, an
 *     uncompressed one), with and without KILN_ENCODE_BATCH_SPLIT (CPU + GPU), equals kiln_encode
 *     on the CPU for every image and format; and on a CPU-only context;
 *   - several small images of one width stacked into one job (KILN_RING_PACK), in the BC and the ETC / EAC
 *     rings, 8-bit (blocks the CPU encodes: cluster-fit fallbacks, crafted EAC blocks) and float sources, alone
 *     and split (the CPU side takes images from the back of the queue): the CPU's bytes;
 *   - bad arguments; the validation layer reports nothing.
 * Skipped when there is no Vulkan device. */
#include "support.h"
#include "gpu/gpu.h"
#include "gpu/gpu_batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NIMG 7

typedef struct fixture {
    kiln_context *gpu;
    kiln_context *cpu;
    kiln_context *autox; /* AUTO with lavapipe allowed: formats without a GPU encoder go to the CPU */
    kiln_image img[NIMG];
} fixture;

static void random_image(kt_rng *rng, uint32_t w, uint32_t h, kiln_pixel_type type, int smooth, kiln_image *out)
{
    assert_int_equal(kiln_image_alloc(NULL, out, w, h, type), KILN_OK);
    out->channels = 4;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            for (int c = 0; c < 4; c++) {
                uint32_t r = kt_rng_u32(rng);
                /* smooth gradients with noise, some flat blocks and transparent texels */
                float v = smooth ? (float)((x * (c + 1) + y * (3 - c)) % 256) / 255.0f + (float)(r % 9) / 2550.0f
                                 : (float)(r % 256) / 255.0f;
                if (smooth && ((x / 4 + y / 4) % 7) == 0) v = (float)c * 0.25f;
                if (c == 3 && (r >> 12) % 5 == 0) v = 0.0f;
                if (v > 1.0f) v = 1.0f;
                size_t i = ((size_t)y * w + x) * 4 + (size_t)c;
                if (type == KILN_PIXEL_U8) ((uint8_t *)out->pixels)[i] = (uint8_t)(v * 255.0f + 0.5f);
                else if (type == KILN_PIXEL_U16) ((uint16_t *)out->pixels)[i] = (uint16_t)(v * 65535.0f + 0.5f);
                else ((float *)out->pixels)[i] = v;
            }
}

static int setup(void **state)
{
    static fixture f;
    memset(&f, 0, sizeof f);
    if (kt_gpu_contexts(&f.gpu, &f.cpu, 2)) return -1;
    if (f.gpu) {
        setenv("KILN_ALLOW_CPU_VULKAN", "1", 1);
        f.autox = kt_context(2, KILN_BACKEND_AUTO);
        if (!f.autox) return -1;
        kt_rng rng;
        kt_rng_seed(&rng, 7);
        random_image(&rng, 130, 97, KILN_PIXEL_U8, 1, &f.img[0]);
        random_image(&rng, 64, 64, KILN_PIXEL_U8, 0, &f.img[1]);
        random_image(&rng, 1, 1, KILN_PIXEL_U8, 0, &f.img[2]);
        random_image(&rng, 13, 7, KILN_PIXEL_U8, 1, &f.img[3]);
        random_image(&rng, 37, 45, KILN_PIXEL_U16, 1, &f.img[4]);
        random_image(&rng, 29, 18, KILN_PIXEL_F32, 1, &f.img[5]);
        kiln_image src;
        if (kiln_image_load(f.cpu, kt_testdata("ldr/gimp_stone33_tileable_156.png"), &src) == KILN_OK) f.img[6] = src;
        else random_image(&rng, 156, 156, KILN_PIXEL_U8, 1, &f.img[6]);
    }
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < NIMG; i++) kiln_image_free(&f->img[i]);
    kiln_context_free(f->gpu);
    kiln_context_free(f->cpu);
    kiln_context_free(f->autox);
    return 0;
}

static const char *fname(kiln_format f) { return kiln_format_get_info(f)->name; }

/* kiln__gpu_encode (pipelined) == kiln__gpu_encode_sync == CPU, with batch_bytes (0 = default). */
static void check_three(fixture *fx, const kiln_image *img, const kiln_encode_params *ep, size_t batch_bytes)
{
    size_t size = kiln_format_image_size(ep->format, img->width, img->height);
    uint8_t *c = malloc(size), *s = malloc(size), *p = malloc(size);
    assert_non_null(c);
    assert_non_null(s);
    assert_non_null(p);
    memset(s, 0xAB, size);
    memset(p, 0xCD, size);
    assert_int_equal(kiln_encode_image(fx->cpu, img, ep, c, size), KILN_OK);
    char env[32];
    snprintf(env, sizeof env, "%zu", batch_bytes);
    if (batch_bytes) setenv("KILN_GPU_BATCH_BYTES", env, 1);
    kiln_status st = kiln__gpu_encode_sync(fx->gpu, img, ep, 0, s, size);
    if (st != KILN_OK) fail_msg("sync %s: %s", fname(ep->format), kiln_last_error(fx->gpu));
    st = kiln__gpu_encode(fx->gpu, img, ep, 0, p, size);
    if (st != KILN_OK) fail_msg("pipelined %s: %s", fname(ep->format), kiln_last_error(fx->gpu));
    unsetenv("KILN_GPU_BATCH_BYTES");
    if (memcmp(c, s, size)) fail_msg("%s q%d %ux%u: synchronous GPU differs from the CPU", fname(ep->format), (int)ep->quality, img->width, img->height);
    if (memcmp(s, p, size))
        fail_msg("%s q%d %ux%u batch %zu: pipelined differs from synchronous", fname(ep->format), (int)ep->quality,
                 img->width, img->height, batch_bytes);
    free(c);
    free(s);
    free(p);
}

/* With KILN_GPU_SKIP_FALLBACK=1 the blocks the device flags for the CPU keep whatever the device buffer held (not
 * the CPU's bytes): every block the synchronous path encoded on the device (its bytes equal the CPU's) must also
 * have been encoded on the device by the pipelined path, and some must be. So a pipelined path that hands blocks
 * to the CPU that the device should have encoded (a wrong table or flag layout) fails, although the CPU's
 * re-encoding would hide it in check_three. */
static void check_device_bytes(fixture *fx, const kiln_image *img, const kiln_encode_params *ep, size_t batch_bytes)
{
    const kiln_format_info *fi = kiln_format_get_info(ep->format);
    size_t size = kiln_format_image_size(ep->format, img->width, img->height);
    uint8_t *c = malloc(size), *s = malloc(size), *p = malloc(size);
    assert_non_null(c);
    assert_non_null(s);
    assert_non_null(p);
    assert_int_equal(kiln_encode_image(fx->cpu, img, ep, c, size), KILN_OK);
    char env[32];
    snprintf(env, sizeof env, "%zu", batch_bytes);
    if (batch_bytes) setenv("KILN_GPU_BATCH_BYTES", env, 1);
    setenv("KILN_GPU_SKIP_FALLBACK", "1", 1);
    kiln_status st = kiln__gpu_encode_sync(fx->gpu, img, ep, 0, s, size);
    if (st == KILN_OK) st = kiln__gpu_encode(fx->gpu, img, ep, 0, p, size);
    unsetenv("KILN_GPU_SKIP_FALLBACK");
    unsetenv("KILN_GPU_BATCH_BYTES");
    if (st != KILN_OK) fail_msg("%s: %s", fname(ep->format), kiln_last_error(fx->gpu));
    size_t on_device = 0;
    for (size_t o = 0; o < size; o += fi->block_bytes) {
        const int sync_dev = memcmp(s + o, c + o, fi->block_bytes) == 0, pipe_dev = memcmp(p + o, c + o, fi->block_bytes) == 0;
        if (sync_dev && !pipe_dev)
            fail_msg("%s q%d %ux%u batch %zu: block %zu encoded on the device by the synchronous path, not by the pipelined one",
                     fname(ep->format), (int)ep->quality, img->width, img->height, batch_bytes, o / fi->block_bytes);
        on_device += pipe_dev;
    }
    if (on_device == 0)
        fail_msg("%s q%d %ux%u: no block encoded on the device", fname(ep->format), (int)ep->quality, img->width, img->height);
    free(c);
    free(s);
    free(p);
}

static const kiln_format ring_formats[] = {KILN_FORMAT_BC1_RGB_UNORM, KILN_FORMAT_BC1_RGBA_UNORM, KILN_FORMAT_BC3_SRGB,
                                           KILN_FORMAT_BC4_UNORM, KILN_FORMAT_BC5_SNORM};

static void pipelined_equals_sync(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    for (size_t k = 0; k < sizeof ring_formats / sizeof ring_formats[0]; k++)
        for (int q = KILN_QUALITY_FAST; q <= KILN_QUALITY_NORMAL; q++)
            for (int i = 0; i < NIMG; i++) {
                kiln_encode_params ep;
                kiln_encode_params_init(&ep, ring_formats[k], (kiln_quality)q);
                if (i == 0) ep.perceptual = 1;
                /* one block row of 130 wide RGBA8 (or two-word) input is 2-4 KiB: 4096 bytes gives
                 * one or two block rows per batch, so the 25 block rows are many batches in flight */
                check_three(fx, &fx->img[i], &ep, i % 2 ? 4096 : 0);
            }
    /* the cluster fit (BC1 / BC1a / BC3 colour at high and max: factor tables, a fallback word per block, the split's
     * refine pass after a barrier): an image at max with perceptual weights against the synchronous path and the
     * CPU, a photograph at high in batches of one block row (4096 bytes: 39 batches through the 3 slots) for the
     * device's own bytes (lavapipe time: ~8 s of CPU more in all) */
    static const kiln_format cf_formats[] = {KILN_FORMAT_BC1_RGBA_UNORM, KILN_FORMAT_BC3_SRGB};
    for (size_t k = 0; k < sizeof cf_formats / sizeof cf_formats[0]; k++) {
        kiln_encode_params ep;
        kiln_encode_params_init(&ep, cf_formats[k], KILN_QUALITY_MAX);
        ep.perceptual = 1;
        check_three(fx, &fx->img[0], &ep, 0);
        kiln_encode_params_init(&ep, cf_formats[k], KILN_QUALITY_HIGH);
        check_device_bytes(fx, &fx->img[6], &ep, 4096);
    }
    /* BC4 / BC5 max in several kernels (the list of blocks the heuristic may not have solved in binding 2, its count
     * zeroed per job), in jobs of a few block rows (4 jobs here; 3 block rows per batch on the synchronous path) */
    static const kiln_format max_formats[] = {KILN_FORMAT_BC4_UNORM, KILN_FORMAT_BC5_SNORM};
    for (size_t k = 0; k < sizeof max_formats / sizeof max_formats[0]; k++) {
        kiln_encode_params ep;
        kiln_encode_params_init(&ep, max_formats[k], KILN_QUALITY_MAX);
        check_three(fx, &fx->img[0], &ep, 16384);
    }
    /* more batches than slots on a real image, at the smallest batch */
    kiln_encode_params ep;
    kiln_encode_params_init(&ep, KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_FAST);
    check_three(fx, &fx->img[6], &ep, 10000); /* one block row of 156 x 16 bytes per batch */
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

/* kiln_encode_batch on ctx == kiln_encode on the CPU for every image and format. */
static void check_batch(fixture *fx, kiln_context *ctx, const kiln_encode_params *ep, uint32_t nf, uint32_t flags,
                        const char *what)
{
    kiln_texture out[NIMG * 8];
    kiln_status st = kiln_encode_batch(ctx, fx->img, NIMG, ep, nf, flags, out);
    if (st != KILN_OK) fail_msg("%s: %s", what, kiln_last_error(ctx));
    for (uint32_t i = 0; i < NIMG; i++)
        for (uint32_t f = 0; f < nf; f++) {
            kiln_texture ref;
            assert_int_equal(kiln_encode(fx->cpu, &fx->img[i], &ep[f], &ref), KILN_OK);
            const kiln_texture *t = &out[i * nf + f];
            size_t a = 0, b = 0;
            const uint8_t *pa = kiln_texture_image((kiln_texture *)t, 0, 0, 0, &a);
            const uint8_t *pb = kiln_texture_image(&ref, 0, 0, 0, &b);
            assert_int_equal(t->format, ep[f].format);
            assert_int_equal(t->width, fx->img[i].width);
            assert_int_equal(t->height, fx->img[i].height);
            if (a != b || memcmp(pa, pb, a))
                fail_msg("%s: image %u (%ux%u) %s differs from the CPU", what, i, fx->img[i].width, fx->img[i].height,
                         fname(ep[f].format));
            kiln_texture_free(&ref);
        }
    for (uint32_t t = 0; t < NIMG * nf; t++) kiln_texture_free(&out[t]);
}

static void batch_formats_and_split(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    static const kiln_format fmts[] = {KILN_FORMAT_BC1_RGB_UNORM, KILN_FORMAT_BC4_UNORM, KILN_FORMAT_BC5_UNORM,
                                       KILN_FORMAT_BC3_UNORM, KILN_FORMAT_EAC_R11_UNORM, KILN_FORMAT_BC2_UNORM,
                                       KILN_FORMAT_RGBA8_UNORM};
    const uint32_t nf = sizeof fmts / sizeof fmts[0];
    kiln_encode_params ep[8];
    for (uint32_t f = 0; f < nf; f++) kiln_encode_params_init(&ep[f], fmts[f], f == 1 ? KILN_QUALITY_NORMAL : KILN_QUALITY_FAST);
    setenv("KILN_GPU_BATCH_BYTES", "8192", 1);
    check_batch(fx, fx->autox, ep, nf, 0, "batch, GPU (AUTO)");
    check_batch(fx, fx->autox, ep, nf, KILN_ENCODE_BATCH_SPLIT, "batch, split (AUTO)");
    assert_int_equal(kiln_context_backend(fx->autox), KILN_BACKEND_VULKAN);
    check_batch(fx, fx->gpu, ep, 4, 0, "batch, GPU (VULKAN)");
    check_batch(fx, fx->gpu, ep, nf, KILN_ENCODE_BATCH_SPLIT, "batch, split");
    unsetenv("KILN_GPU_BATCH_BYTES");
    check_batch(fx, fx->gpu, ep, 2, KILN_ENCODE_BATCH_SPLIT, "batch, split, default batches");
    /* the CPU side dropping out once the GPU side's pace is known (any GPU rate exceeds a lead of 0) and running
     * at the lowest priority: the GPU side takes every image left, the bytes stay the CPU's */
    setenv("KILN_SPLIT_GPU_LEAD", "0", 1);
    setenv("KILN_SPLIT_NICE", "19", 1);
    check_batch(fx, fx->gpu, ep, nf, KILN_ENCODE_BATCH_SPLIT, "batch, split, CPU side drops out");
    unsetenv("KILN_SPLIT_GPU_LEAD");
    unsetenv("KILN_SPLIT_NICE");
    check_batch(fx, fx->cpu, ep, nf, KILN_ENCODE_BATCH_SPLIT, "batch, CPU context");
    /* a format with no GPU encoder at all: everything goes to the CPU */
    kiln_encode_params bc2;
    kiln_encode_params_init(&bc2, KILN_FORMAT_BC2_UNORM, KILN_QUALITY_FAST);
    check_batch(fx, fx->gpu, &bc2, 1, KILN_ENCODE_BATCH_SPLIT, "batch, bc2 split");
    /* VULKAN without split: a format without a GPU encoder fails as kiln_encode does */
    kiln_texture out[NIMG];
    assert_int_equal(kiln_encode_batch(fx->gpu, fx->img, NIMG, &bc2, 1, 0, out), KILN_ERR_UNSUPPORTED);
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
    assert_int_equal(kiln__gpu_validation_messages(fx->autox), 0);
}

/* Images of one width (36: a partial block column) and heights that end a job's stack (7, 9: not a multiple of
 * 4) or not, through jobs of 4 images at most and 7 block rows (KILN_GPU_BATCH_BYTES; an image may also span
 * two jobs): every format's bytes the CPU's, alone and split. The u8 images through the rings' staged input
 * (KILN_RING_STAGED=1: a host staging buffer copied before the kernels, gpu_ring_host.h; discrete devices stage
 * prepared words and ETC1 fast), the f32 ones as the device does by default. */
static void packed_jobs(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    enum { NP = 12 };
    static const uint32_t hs[NP] = {8, 12, 7, 20, 4, 16, 9, 8, 24, 4, 12, 5};
    /* per source type, formats whose pipelines the tests above made (lavapipe with the validation layer takes a
     * second or two a new pipeline): u8 the cluster fit's fallback word a block (blocks flagged), BC3, EAC's CPU
     * fix-ups (crafted blocks); f32 prepared words (BC1's two, BC4's one), EAC from int32 targets. The split for
     * the first and the last format of each. */
    enum { NF = 3 };
    static const kiln_format fmts[2][NF] = {{KILN_FORMAT_BC1_RGBA_UNORM, KILN_FORMAT_BC3_UNORM, KILN_FORMAT_EAC_R11_UNORM},
                                            {KILN_FORMAT_BC1_RGB_UNORM, KILN_FORMAT_BC4_UNORM, KILN_FORMAT_EAC_R11_UNORM}};
    static const kiln_quality qs[2][NF] = {{KILN_QUALITY_HIGH, KILN_QUALITY_FAST, KILN_QUALITY_FAST},
                                           {KILN_QUALITY_FAST, KILN_QUALITY_NORMAL, KILN_QUALITY_FAST}};
    kiln_image img[NP];
    kt_rng rng;
    kt_rng_seed(&rng, 11);
    setenv("KILN_RING_PACK", "4", 1);
    setenv("KILN_GPU_BATCH_BYTES", "4096", 1);
    for (int type = 0; type < 2; type++) {
        if (type == 0) setenv("KILN_RING_STAGED", "1", 1);
        else unsetenv("KILN_RING_STAGED");
        for (int i = 0; i < NP; i++) {
            if (type == 0) {
                assert_int_equal(kiln_image_alloc(NULL, &img[i], 36, hs[i], KILN_PIXEL_U8), KILN_OK);
                img[i].channels = 4;
                kt_fill_crafted_blocks(img[i].pixels, 36, hs[i], &rng);
            } else {
                random_image(&rng, 36, hs[i], KILN_PIXEL_F32, 1, &img[i]);
            }
        }
        for (uint32_t f = 0; f < NF; f++)
            for (uint32_t flags = 0; flags <= (f == 0 || f == NF - 1 ? KILN_ENCODE_BATCH_SPLIT : 0u); flags += KILN_ENCODE_BATCH_SPLIT) {
                kiln_encode_params ep;
                kiln_encode_params_init(&ep, fmts[type][f], qs[type][f]);
                kiln_texture out[NP];
                kiln_status st = kiln_encode_batch(fx->gpu, img, NP, &ep, 1, flags, out);
                if (st != KILN_OK) fail_msg("packed %s: %s", fname(fmts[type][f]), kiln_last_error(fx->gpu));
                for (int i = 0; i < NP; i++) {
                    kiln_texture ref;
                    assert_int_equal(kiln_encode(fx->cpu, &img[i], &ep, &ref), KILN_OK);
                    size_t a = 0, b = 0;
                    const uint8_t *pa = kiln_texture_image(&out[i], 0, 0, 0, &a), *pb = kiln_texture_image(&ref, 0, 0, 0, &b);
                    if (a != b || memcmp(pa, pb, a))
                        fail_msg("packed %s %s%s: image %d (36x%u) differs from the CPU", type ? "f32" : "u8", fname(fmts[type][f]),
                                 flags ? " split" : "", i, hs[i]);
                    kiln_texture_free(&ref);
                    kiln_texture_free(&out[i]);
                }
            }
        for (int i = 0; i < NP; i++) kiln_image_free(&img[i]);
    }
    unsetenv("KILN_RING_PACK");
    unsetenv("KILN_GPU_BATCH_BYTES");
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

static void bad_arguments(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    kiln_encode_params ep[9];
    for (int f = 0; f < 9; f++) kiln_encode_params_init(&ep[f], KILN_FORMAT_BC1_RGB_UNORM, KILN_QUALITY_FAST);
    kiln_texture out[NIMG * 9];
    assert_int_equal(kiln_encode_batch(fx->gpu, fx->img, NIMG, ep, 0, 0, out), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_encode_batch(fx->gpu, fx->img, NIMG, ep, 9, 0, out), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_encode_batch(fx->gpu, fx->img, NIMG, ep, 1, 0x80, out), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_encode_batch(fx->gpu, NULL, 1, ep, 1, 0, out), KILN_ERR_INVALID_ARGUMENT);
    assert_true(strlen(kiln_last_error(fx->gpu)) > 0);
    assert_int_equal(kiln_encode_batch(fx->gpu, fx->img, 0, ep, 1, 0, out), KILN_OK); /* nothing to do */
    kiln_image empty = fx->img[0];
    empty.width = 0;
    assert_int_equal(kiln_encode_batch(fx->gpu, &empty, 1, ep, 1, 0, out), KILN_ERR_INVALID_ARGUMENT);
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
        cmocka_unit_test(pipelined_equals_sync),
        cmocka_unit_test(batch_formats_and_split),
        cmocka_unit_test(packed_jobs),
        cmocka_unit_test(bad_arguments),
        cmocka_unit_test(validation_layer_ran),
    };
    if (getenv("KILN_TEST_FILTER")) cmocka_set_test_filter(getenv("KILN_TEST_FILTER"));
    return cmocka_run_group_tests(tests, setup, teardown);
}

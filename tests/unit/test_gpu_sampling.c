/* test_gpu_sampling.c - an INDEPENDENT check of kiln's CPU BC decoders: the same blocks are uploaded
 * into VkImages of each BC format and read back with texelFetch through the Vulkan device's own
 * texture decoding (lavapipe in CI: Mesa's util/format code), then compared with kiln_decode on the
 * CPU backend:
 *   BC6H (UF, SF) and BC7: exact (float bits; round(x * 255) for UNORM);
 *   BC1-BC5: within 2 of 255 (or of 127 for SNORM): Mesa interpolates with a fixed-point shortcut
 *   that can be up to 1.6 LSB off the exact D3D10 interpolation, so texels that differ are counted
 *   and reported. Hardware GPUs get 8: NVIDIA's H100 (driver 580.159) interpolates BC4/BC5 with
 *   6-bit weights (about 9/64, 18/64, 28/64 ... where D3D10 has 1/7, 2/7, 3/7 ...): measured up to
 *   6/255 (BC5 UNORM) and 8/127 (BC5 SNORM) away from the reference on random blocks.
 * sRGB formats are sampled through their UNORM VkFormat (same block decoding). ETC2/EAC sampling is
 * not offered by lavapipe; Mesa GL checks those elsewhere. Skipped without a Vulkan device or BC
 * sampling support. */
#include "support.h"
#include "gpu/gpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const kiln_format all_formats[] = {
#define X(ID, ...) KILN_FORMAT_##ID,
    KILN_FORMAT_TABLE(X)
#undef X
};
#define NFORMATS (sizeof all_formats / sizeof all_formats[0])

typedef struct fixture {
    kiln_context *gpu;
    kiln_context *cpu;
    int bc;
    int tolerance; /* BC1-BC5, in 1/255 (1/127 for SNORM) */
} fixture;

static int setup(void **state)
{
    setenv("KILN_VK_VALIDATION", "1", 1);
    static fixture f;
    memset(&f, 0, sizeof f);
    if (kt_have_vulkan()) {
        f.gpu = kt_context(1, KILN_BACKEND_VULKAN);
        f.cpu = kt_context(1, KILN_BACKEND_CPU);
        if (!f.gpu || !f.cpu) return -1;
        const kiln_gpu_info *info = kiln_context_gpu(f.gpu);
        f.bc = info && info->bc_sampling;
        f.tolerance = kiln__gpu_device_is_cpu(f.gpu, 0) && !info->discrete ? 2 : 8;
        if (info) print_message("sampling with %s (%s)\n", info->name, info->driver);
    }
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    kiln_context_free(f->gpu);
    kiln_context_free(f->cpu);
    return 0;
}

/* The BC family: KTX2 colour models BC1A (128) .. BC7 (134) in the format table. */
static int is_bc_family(const kiln_format_info *fi) { return fi->dfd_model >= 128 && fi->dfd_model <= 134; }

/* Random blocks with every BC6H/BC7 mode, BC1 equal/ordered endpoints, BC4 both ramps and -128. */
static void fill_blocks(kt_rng *rng, const kiln_format_info *fi, uint8_t *data, size_t nblocks, int crafted)
{
    const size_t bb = fi->block_bytes;
    kt_rng_bytes(rng, data, nblocks * bb);
    if (!crafted) return;
    static const uint8_t bc6_modes[18] = {0, 1, 2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31};
    for (size_t i = 0; i < nblocks; i++) {
        uint8_t *b = data + i * bb;
        switch (fi->dfd_model) {
        case 134: { /* BC7 */
            unsigned m = i % 9;
            b[0] = m == 8 ? 0 : (uint8_t)((b[0] & ~((2u << m) - 1)) | (1u << m));
            break;
        }
        case 133: { /* BC6H */
            unsigned m = bc6_modes[i % 18];
            b[0] = m < 2 ? (uint8_t)((b[0] & ~3u) | m) : (uint8_t)((b[0] & ~31u) | m);
            break;
        }
        case 131:
        case 132: /* BC4, BC5: the other ramp, equal endpoints, -128 */
            if (i % 4 == 0) b[0] = b[1];
            if (i % 4 == 1 && (int8_t)b[0] > (int8_t)b[1]) { uint8_t t = b[0]; b[0] = b[1]; b[1] = t; }
            if (i % 4 == 2) b[0] = 0x80;
            if (bb == 16 && i % 3 == 0) b[9] = b[8];
            break;
        default: { /* BC1-BC3: colour block in the last 8 bytes */
            uint8_t *c = b + bb - 8;
            if (i % 4 == 0) { c[2] = c[0]; c[3] = c[1]; }
            if (i % 4 == 1) { c[2] = (uint8_t)(c[0] + 1); c[3] = c[1]; }
            if (bb == 16 && fi->dfd_model == 130 && i % 5 == 0) b[1] = b[0]; /* BC3 alpha: equal */
            break;
        }
        }
    }
}

typedef struct tally {
    size_t texels, differing, channels_differing;
    double max_diff;
} tally;

/* Compares one image; returns the number of channels beyond the tolerance. */
static size_t compare(const kiln_format_info *fi, const kiln_image *cpu, const float *s, int tolerance, tally *t)
{
    size_t bad = 0, n = (size_t)cpu->width * cpu->height;
    int exact = fi->dfd_model == 133 || fi->dfd_model == 134;
    for (size_t i = 0; i < n; i++) {
        int texel_differs = 0;
        for (int c = 0; c < 4; c++) {
            double d;
            if (fi->dfd_model == 133) { /* BC6H: float bits */
                uint32_t a, b;
                memcpy(&a, &((const float *)cpu->pixels)[i * 4 + c], 4);
                memcpy(&b, &s[i * 4 + c], 4);
                d = a != b;
            } else if (cpu->type == KILN_PIXEL_U8) {
                d = fabs((double)((const uint8_t *)cpu->pixels)[i * 4 + c] - floor(s[i * 4 + c] * 255.0 + 0.5));
            } else { /* SNORM as float */
                d = fabs(floor(((const float *)cpu->pixels)[i * 4 + c] * 127.0 + 0.5) - floor(s[i * 4 + c] * 127.0 + 0.5));
            }
            if (d > 0) {
                texel_differs = 1;
                t->channels_differing++;
            }
            if (d > t->max_diff) t->max_diff = d;
            if (exact ? d > 0 : d > tolerance) {
                if (bad == 0)
                    print_message("%s: texel (%zu,%zu) channel %d: kiln %.9g, device %.9g\n", fi->name, i % cpu->width,
                                  i / cpu->width, c,
                                  cpu->type == KILN_PIXEL_U8 ? ((const uint8_t *)cpu->pixels)[i * 4 + c] / 255.0
                                                             : ((const float *)cpu->pixels)[i * 4 + c],
                                  s[i * 4 + c]);
                bad++;
            }
        }
        t->texels++;
        t->differing += texel_differs;
    }
    return bad;
}

static void bc_formats_match_device_sampling(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu || !fx->bc) skip();
    static const uint32_t sizes[][3] = {{32, 32, 0}, {32, 32, 1}, {13, 7, 1}, {5, 5, 0}};
    kt_rng rng;
    kt_rng_seed(&rng, 1234);
    int formats = 0;
    size_t failures = 0;
    for (size_t k = 0; k < NFORMATS; k++) {
        const kiln_format_info *fi = kiln_format_get_info(all_formats[k]);
        if (!(fi->flags & KILN_FF_COMPRESSED) || !is_bc_family(fi)) continue;
        formats++;
        tally t = {0};
        size_t bad = 0;
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            uint32_t w = sizes[s][0], h = sizes[s][1];
            kiln_texture tex;
            assert_int_equal(kiln_texture_alloc(fx->cpu, &tex, fi->format, w, h, 1, 1, 1), KILN_OK);
            fill_blocks(&rng, fi, tex.data, tex.data_size / fi->block_bytes, (int)sizes[s][2]);
            kiln_image cpu;
            if (kiln_decode(fx->cpu, &tex, 0, 0, 0, &cpu) != KILN_OK) fail_msg("%s: %s", fi->name, kiln_last_error(fx->cpu));
            float *sampled = malloc((size_t)w * h * 16);
            assert_non_null(sampled);
            kiln_status st = kiln__gpu_sample_blocks(fx->gpu, fi->format, tex.data, w, h, sampled);
            if (st != KILN_OK) fail_msg("%s: sampling failed: %s", fi->name, kiln_last_error(fx->gpu));
            bad += compare(fi, &cpu, sampled, fx->tolerance, &t);
            /* the comparison is not vacuous: the decoded image has many different values */
            if (s == 0) {
                size_t distinct = 0;
                for (size_t i = 1; i < (size_t)w * h * 4 && distinct < 20; i++)
                    distinct += memcmp((uint8_t *)cpu.pixels + i * cpu.type, (uint8_t *)cpu.pixels + (i - 1) * cpu.type,
                                       cpu.type) != 0;
                assert_true(distinct >= 20);
            }
            free(sampled);
            kiln_image_free(&cpu);
            kiln_texture_free(&tex);
        }
        print_message("%-10s %5zu texels, %4zu differ from the device (%zu channels, max %g%s, tolerance %d)%s\n",
                      fi->name, t.texels,
                      t.differing, t.channels_differing, t.max_diff,
                      fi->dfd_model == 133 ? " bits" : (fi->flags & KILN_FF_SIGNED ? "/127" : "/255"),
                      fi->dfd_model >= 133 ? 0 : fx->tolerance, bad ? "  <-- beyond tolerance" : "");
        failures += bad;
    }
    assert_int_equal(formats, 16);
    assert_int_equal(failures, 0);
    assert_int_equal(kiln__gpu_validation_messages(fx->gpu), 0);
}

/* Unsupported requests fail cleanly. */
static void sampling_refuses_what_it_cannot_do(void **state)
{
    fixture *fx = *state;
    if (!fx->gpu) skip();
    uint8_t blocks[16] = {0};
    float out[16 * 4];
    assert_int_equal(kiln__gpu_sample_blocks(fx->gpu, KILN_FORMAT_RGBA8_UNORM, blocks, 4, 4, out), KILN_ERR_UNSUPPORTED);
    const kiln_gpu_info *info = kiln_context_gpu(fx->gpu);
    kiln_status st = kiln__gpu_sample_blocks(fx->gpu, KILN_FORMAT_ETC2_RGB8_UNORM, blocks, 4, 4, out);
    if (info && info->etc2_sampling) assert_int_equal(st, KILN_OK);
    else assert_int_equal(st, KILN_ERR_UNSUPPORTED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bc_formats_match_device_sampling),
        cmocka_unit_test(sampling_refuses_what_it_cannot_do),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

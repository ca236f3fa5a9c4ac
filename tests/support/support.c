#include "support.h"
#include "gpu/gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void kt_rng_seed(kt_rng *r, uint64_t seed) { r->s = seed ? seed * 0x9E3779B97F4A7C15ull : 0x1234567ull; }

uint32_t kt_rng_u32(kt_rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return (uint32_t)((r->s * 0x2545F4914F6CDD1Dull) >> 32);
}

void kt_rng_bytes(kt_rng *r, void *dst, size_t n)
{
    uint8_t *d = dst;
    for (size_t i = 0; i < n; i++) d[i] = (uint8_t)kt_rng_u32(r);
}

kiln_context *kt_context(uint32_t threads, kiln_backend backend)
{
    kiln_context_params p;
    kiln_context_params_init(&p);
    p.threads = threads;
    p.backend = backend;
    kiln_context *ctx = NULL;
    if (kiln_context_create(&p, &ctx) != KILN_OK) return NULL;
    return ctx;
}

const char *kt_testdata(const char *relative)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", KILN_TESTDATA, relative);
    return buf;
}

const char *kt_tmp(const char *name)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/test-tmp", KILN_BINARY_DIR);
    static int made;
    if (!made) {
        char mk[4200];
        snprintf(mk, sizeof mk, "mkdir -p '%s/test-tmp'", KILN_BINARY_DIR);
        if (system(mk) != 0) fprintf(stderr, "cannot create %s\n", buf);
        made = 1;
    }
    snprintf(buf, sizeof buf, "%s/test-tmp/%d-%s", KILN_BINARY_DIR, (int)getpid(), name);
    return buf;
}

uint64_t kt_hash(const void *data, size_t size)
{
    const uint8_t *p = data;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

typedef struct kt_ref {
    uint64_t hash;
    uint32_t w, h, type, channels, srgb, hdr;
    int params[8];
    size_t size;
    uint8_t *bytes;
} kt_ref;

#define KT_REF_MAX 512
#define KT_REF_BYTES (256u << 20)
static kt_ref kt_refs[KT_REF_MAX]; /* test-process memo, oldest first */
static size_t kt_nrefs, kt_ref_bytes;

static void kt_ref_key(const kiln_image *img, const kiln_encode_params *ep, kt_ref *k)
{
    memset(k, 0, sizeof *k);
    k->hash = kt_hash(img->pixels, (size_t)img->width * img->height * 4u * (size_t)img->type);
    k->w = img->width, k->h = img->height, k->type = (uint32_t)img->type, k->channels = img->channels;
    k->srgb = (uint32_t)img->srgb, k->hdr = (uint32_t)img->hdr;
    const int p[8] = {(int)ep->format, (int)ep->quality, ep->perceptual,   ep->dither, ep->alpha_threshold,
                      ep->alpha_cutout, ep->gpu_strategy, ep->bc1_black};
    memcpy(k->params, p, sizeof p);
}

kiln_status kt_encode_cpu_cached(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *ep, uint8_t *dst,
                                 size_t size)
{
    if (!img || !img->pixels || !ep || !dst) return kiln_encode_image(ctx, img, ep, dst, size);
    kt_ref k;
    kt_ref_key(img, ep, &k);
    for (size_t i = 0; i < kt_nrefs; i++) {
        const kt_ref *r = &kt_refs[i];
        if (r->hash == k.hash && r->w == k.w && r->h == k.h && r->type == k.type && r->channels == k.channels &&
            r->srgb == k.srgb && r->hdr == k.hdr && memcmp(r->params, k.params, sizeof k.params) == 0 && r->size == size) {
            memcpy(dst, r->bytes, size);
            return KILN_OK;
        }
    }
    kiln_status st = kiln_encode_image(ctx, img, ep, dst, size);
    if (st != KILN_OK || size > KT_REF_BYTES) return st;
    while (kt_nrefs > 0 && (kt_nrefs == KT_REF_MAX || kt_ref_bytes + size > KT_REF_BYTES)) {
        kt_ref_bytes -= kt_refs[0].size;
        free(kt_refs[0].bytes);
        memmove(kt_refs, kt_refs + 1, (kt_nrefs - 1) * sizeof *kt_refs);
        kt_nrefs--;
    }
    k.bytes = malloc(size);
    if (!k.bytes) return st;
    memcpy(k.bytes, dst, size);
    k.size = size;
    kt_refs[kt_nrefs++] = k;
    kt_ref_bytes += size;
    return st;
}

int kt_sanitized(void)
{
#ifdef KILN_TEST_SANITIZED
    return 1;
#else
    return 0;
#endif
}

int kt_gpu_light(void)
{
    const char *e = getenv("KILN_TEST_GPU_LIGHT");
    if (e && *e) return strcmp(e, "0") != 0;
    return kt_sanitized();
}

uint32_t kt_subgroup_sizes_multi(kiln_context *gpu)
{
    const uint32_t s = kiln__gpu_subgroup_sizes(gpu);
    return (s & (s - 1u)) ? s : 0u;
}

int kt_have_vulkan(void)
{
    kiln_context *ctx = kt_context(1, KILN_BACKEND_AUTO);
    if (!ctx) return 0;
    uint32_t n = 0;
    kiln_gpu_list(ctx, NULL, 0, &n);
    kiln_context_free(ctx);
    return n > 0;
}

int kt_gpu_contexts(kiln_context **gpu, kiln_context **cpu, uint32_t cpu_threads)
{
    /* KILN_TEST_VK_VALIDATION=0: without the layer (scripts/test.sh, sanitised build only; see support.h) */
    const char *tv = getenv("KILN_TEST_VK_VALIDATION");
    if (tv && strcmp(tv, "0") == 0)
        unsetenv("KILN_VK_VALIDATION");
    else
        setenv("KILN_VK_VALIDATION", "1", 1);
    *gpu = *cpu = NULL;
    if (!kt_have_vulkan()) return 0;
    *gpu = kt_context(2, KILN_BACKEND_VULKAN);
    *cpu = kt_context(cpu_threads, KILN_BACKEND_CPU);
    return *gpu && *cpu ? 0 : -1;
}

static kt_gpu_fixture kt_fixture;

static int kt_gpu_setup_n(void **state, uint32_t cpu_threads)
{
    memset(&kt_fixture, 0, sizeof kt_fixture);
    if (kt_gpu_contexts(&kt_fixture.gpu, &kt_fixture.cpu, cpu_threads)) return -1;
    *state = &kt_fixture;
    return 0;
}

int kt_gpu_setup(void **state) { return kt_gpu_setup_n(state, 2); }
int kt_gpu_setup_1thread(void **state) { return kt_gpu_setup_n(state, 1); }

int kt_gpu_teardown(void **state)
{
    kt_gpu_fixture *f = *state;
    kiln_context_free(f->gpu);
    kiln_context_free(f->cpu);
    f->gpu = f->cpu = NULL;
    return 0;
}

uint32_t kt_gpu_validation_messages(kiln_context *gpu)
{
    uint32_t n = kiln__gpu_validation_messages(gpu);
    if (!kiln__gpu_validation_active(gpu))
        printf("note: VK_LAYER_KHRONOS_validation is not installed: validation was not checked\n");
    else
        printf("validation layer active: %u messages\n", n);
    return n;
}

void kt_mip_test_image(kt_rng *rng, int mode, uint32_t w, uint32_t h, kiln_image *img)
{
    memset(img, 0, sizeof *img);
    img->width = w;
    img->height = h;
    img->channels = 4;
    size_t n = (size_t)w * h;
    if (mode == KT_MIP_F32_ALPHA) {
        img->type = KILN_PIXEL_F32;
        float *p = malloc(n * 16);
        if (!p) abort();
        for (size_t i = 0; i < n * 4; i++) {
            uint32_t r = kt_rng_u32(rng);
            p[i] = (float)(r % 100001) / 100000.0f;
            if (i % 4 == 3 && r % 7 == 0) p[i] = 0.0f; /* transparent texels */
        }
        img->pixels = p;
    } else {
        img->type = KILN_PIXEL_U8;
        img->srgb = mode == KT_MIP_SRGB_ALPHA;
        uint8_t *p = malloc(n * 4);
        if (!p) abort();
        kt_rng_bytes(rng, p, n * 4);
        for (size_t i = 0; i < n; i++) {
            if (mode == KT_MIP_LINEAR_OPAQUE) p[i * 4 + 3] = 255;
            else if (p[i * 4 + 3] % 5 == 0) p[i * 4 + 3] = 0;
            else if (p[i * 4 + 3] % 5 == 1) p[i * 4 + 3] = 255;
        }
        img->pixels = p;
    }
}

void kt_fill_crafted_blocks(uint8_t *px, uint32_t w, uint32_t h, kt_rng *rng)
{
    for (uint32_t by = 0; by < (h + 3) / 4; by++)
        for (uint32_t bx = 0; bx < (w + 3) / 4; bx++) {
            uint32_t kind = kt_rng_u32(rng) % 5;
            uint8_t a[4], b[4];
            for (int c = 0; c < 4; c++) {
                a[c] = (uint8_t)kt_rng_u32(rng);
                uint32_t d = kt_rng_u32(rng) % 40u;
                if (kind == 2 || kind == 3) a[c] = (uint8_t)(128u - 1u - d / 2u - kt_rng_u32(rng) % 3u);
                b[c] = kind == 0 ? a[c] : (kind == 1 ? (uint8_t)kt_rng_u32(rng) : (uint8_t)(255u - a[c]));
            }
            for (uint32_t y = by * 4; y < by * 4 + 4 && y < h; y++)
                for (uint32_t x = bx * 4; x < bx * 4 + 4 && x < w; x++)
                    for (int c = 0; c < 4; c++) {
                        uint8_t v = (kt_rng_u32(rng) & 1) ? a[c] : b[c];
                        if (kind == 3 && (kt_rng_u32(rng) % 3 == 0)) v = (uint8_t)(a[c] + kt_rng_u32(rng) % (uint32_t)(b[c] - a[c] + 1));
                        if (kind == 4) v = (uint8_t)kt_rng_u32(rng);
                        px[((size_t)y * w + x) * 4 + (size_t)c] = v;
                    }
        }
}

void kt_fill_crop(kiln_image *img, const kiln_image *src, uint32_t ox, uint32_t oy, int alpha_noise, kt_rng *rng)
{
    const uint32_t w = img->width, h = img->height;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            for (int c = 0; c < 4; c++) {
                uint32_t v8 = src ? ((const uint8_t *)src->pixels)[(((size_t)(oy + y) % src->height) * src->width +
                                                                    (ox + x) % src->width) * 4 + (size_t)c]
                                  : kt_rng_u32(rng) & 255u;
                if (alpha_noise && c == 3 && ((x / 4 + y / 4) % 3) == 0) v8 = kt_rng_u32(rng) & 255u;
                size_t i = ((size_t)y * w + x) * 4 + (size_t)c;
                if (img->type == KILN_PIXEL_U8) ((uint8_t *)img->pixels)[i] = (uint8_t)v8;
                else if (img->type == KILN_PIXEL_U16) ((uint16_t *)img->pixels)[i] = (uint16_t)(v8 * 257u + kt_rng_u32(rng) % 200u);
                else ((float *)img->pixels)[i] = (float)v8 / 255.0f * 1.2f - 0.1f + (float)(kt_rng_u32(rng) % 1000u) * 1e-6f;
            }
}

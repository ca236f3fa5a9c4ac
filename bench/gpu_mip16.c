/* gpu_mip16.c - kiln_encode_mips on the GPU for the sources helper mip16b made device-resident (issue 5): 16-bit
 * normal maps (--normal), BC6H from 16-bit and 8-bit images, the quality filters from a 16-bit base decoded on the
 * device. Per case: wall ms min / median of --runs (after one warm-up run) of
 *   host      KILN_GPU_MIP_RESIDENT=0: kiln_mip_generate (GPU where it can, else CPU), levels downloaded, then
 *             kiln_encode_image per level (BC6H from 8/16-bit images: the CPU BC6H encoder there)
 *   resident  src/gpu/gpu_mip_encode.c, one submission (kernel ms: mip + encode passes, timestamps)
 *   resident-hostdec  the same with KILN_GPU_MIP16_DEVICE_DECODE=0 (16-bit cases: the host decodes the base)
 * and whether the bytes equal the host path's (BC6H from 8/16-bit: n/a, the host path encodes BC6H on the CPU).
 * Exit 1 when a resident run does not take the resident path or bytes differ where they must not.
 *
 * usage: gpu_mip16 [--size WxH] [--runs N] [--cases a,b,...] [--verbose] (the library's per-run lines on stderr)
 *   cases: normal-bc5 (16-bit normal map, box, BC5), normal-kaiser-bc5, bc6h-u16 (box, BC6H UF16 fast),
 *          kaiser-bc1 (16-bit, Kaiser, BC1 sRGB normal), kaiser-bc6h-u16, bc6h-u8 (8-bit, box, BC6H fast);
 *          helper mipfall's (--alpha-coverage 0.5 on a smooth alpha): cov-pyramid-bc3, cov-subgroup-bc3, cov-sp-bc3
 *          (8-bit, BC3 normal, that strategy), cov-auto-bc3 (the strategy resident before), cov-bc3-u16,
 *          cov-bc6h-u8, cov-bc6h-u16 (BC6H fast: the resident path skips the coverage passes, BC6H has no alpha),
 *          blit-bc3-u16 (16-bit, the blit strategy: the host-decoded base blitted as RGBA32F), cov-bc5 (8-bit BC5 with
 *          coverage: a format without alpha, the coverage passes skipped)
 * Default 4096x4096, 3 runs, every case. Lavapipe is accepted (KILN_ALLOW_CPU_VULKAN=1 is set). */
#include "core/internal.h"
#include "gpu/gpu.h"
#include "gpu/gpu_mip_encode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void stats(double *v, int n, double *mn, double *med)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    *mn = n ? v[0] : -1.0;
    *med = n ? (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2])) : -1.0;
}

typedef struct bcase {
    const char *name;
    int u16, normal, filter;
    kiln_format format;
    kiln_quality quality;
    int strategy;   /* kiln_mip_strategy (0: auto) */
    float coverage; /* --alpha-coverage (0: off); the image then has a smooth alpha */
} bcase;

static const bcase cases[] = {
    {"normal-bc5", 1, 1, KILN_MIP_FILTER_BOX, KILN_FORMAT_BC5_UNORM, KILN_QUALITY_NORMAL, 0, 0.0f},
    {"normal-kaiser-bc5", 1, 1, KILN_MIP_FILTER_KAISER, KILN_FORMAT_BC5_UNORM, KILN_QUALITY_NORMAL, 0, 0.0f},
    {"bc6h-u16", 1, 0, KILN_MIP_FILTER_BOX, KILN_FORMAT_BC6H_UFLOAT, KILN_QUALITY_FAST, 0, 0.0f},
    {"kaiser-bc1", 1, 0, KILN_MIP_FILTER_KAISER, KILN_FORMAT_BC1_RGB_SRGB, KILN_QUALITY_NORMAL, 0, 0.0f},
    {"kaiser-bc6h-u16", 1, 0, KILN_MIP_FILTER_KAISER, KILN_FORMAT_BC6H_UFLOAT, KILN_QUALITY_FAST, 0, 0.0f},
    {"bc6h-u8", 0, 0, KILN_MIP_FILTER_BOX, KILN_FORMAT_BC6H_UFLOAT, KILN_QUALITY_FAST, 0, 0.0f},
    /* helper mipfall: before, the host path (and for explicit strategies with coverage an error on the GPU) */
    {"cov-pyramid-bc3", 0, 0, KILN_MIP_FILTER_BOX, KILN_FORMAT_BC3_UNORM, KILN_QUALITY_NORMAL, KILN_MIP_STRATEGY_PYRAMID, 0.5f},
    {"cov-subgroup-bc3", 0, 0, KILN_MIP_FILTER_BOX, KILN_FORMAT_BC3_UNORM, KILN_QUALITY_NORMAL, KILN_MIP_STRATEGY_SUBGROUP, 0.5f},
    {"cov-sp-bc3", 0, 0, KILN_MIP_FILTER_BOX, KILN_FORMAT_BC3_UNORM, KILN_QUALITY_NORMAL, KILN_MIP_STRATEGY_SINGLE_PASS, 0.5f},
    {"cov-auto-bc3", 0, 0, KILN_MIP_FILTER_BOX, KILN_FORMAT_BC3_UNORM, KILN_QUALITY_NORMAL, 0, 0.5f},
    {"cov-bc3-u16", 1, 0, KILN_MIP_FILTER_BOX, KILN_FORMAT_BC3_UNORM, KILN_QUALITY_NORMAL, 0, 0.5f},
    {"blit-bc3-u16", 1, 0, KILN_MIP_FILTER_BOX, KILN_FORMAT_BC3_UNORM, KILN_QUALITY_NORMAL, KILN_MIP_STRATEGY_BLIT, 0.0f},
    {"cov-bc5", 0, 0, KILN_MIP_FILTER_BOX, KILN_FORMAT_BC5_UNORM, KILN_QUALITY_NORMAL, 0, 0.5f},
    {"cov-bc6h-u8", 0, 0, KILN_MIP_FILTER_BOX, KILN_FORMAT_BC6H_UFLOAT, KILN_QUALITY_FAST, 0, 0.5f},
    {"cov-bc6h-u16", 1, 0, KILN_MIP_FILTER_BOX, KILN_FORMAT_BC6H_UFLOAT, KILN_QUALITY_FAST, 0, 0.5f},
};

/* Synthetic texels: 16-bit normal maps get unit normals of a bumpy surface (x, y, z mapped to 0.5 n + 0.5);
 * other images flat 8x8 patches and hashed noise (as bench/gpu_mip.c --16bit). */
static int synth(uint32_t w, uint32_t h, int u16, int normal, int alpha, kiln_image *img)
{
    if (kiln_image_alloc(NULL, img, w, h, u16 ? KILN_PIXEL_U16 : KILN_PIXEL_U8) != KILN_OK) return -1;
    img->channels = 4;
    img->srgb = !u16 && !normal;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            size_t i = (size_t)y * w + x;
            uint32_t v = (uint32_t)i * 2654435761u;
            v ^= v >> 15;
            if (((x / 8) + (y / 8)) % 3 == 0) v = (((x / 8) * 2654435761u) ^ ((y / 8) * 40503u)) | 0xff000000u;
            if (normal) {
                double nx = 0.4 * sin(x * 0.05) + 0.1 * (double)(v & 255u) / 255.0, ny = 0.4 * cos(y * 0.07);
                double nz = sqrt(fmax(0.0, 1.0 - nx * nx - ny * ny));
                uint16_t *p = (uint16_t *)img->pixels + i * 4;
                p[0] = (uint16_t)((0.5 * nx + 0.5) * 65535.0 + 0.5);
                p[1] = (uint16_t)((0.5 * ny + 0.5) * 65535.0 + 0.5);
                p[2] = (uint16_t)((0.5 * nz + 0.5) * 65535.0 + 0.5);
                p[3] = 65535;
            } else if (u16) {
                uint16_t *p = (uint16_t *)img->pixels + i * 4;
                uint32_t lo = (uint32_t)i * 40503u;
                for (int c = 0; c < 4; c++) p[c] = (uint16_t)(((v >> (8 * c)) & 255u) << 8 | ((lo >> (8 * c)) & 255u));
                p[3] = alpha ? (uint16_t)(32767.5 + 32767.0 * sin(x * 0.011) * cos(y * 0.017)) : 65535;
            } else {
                v |= 0xff000000u;
                if (alpha) v = (v & 0xffffffu) | (uint32_t)(127.5 + 127.0 * sin(x * 0.011) * cos(y * 0.017)) << 24;
                memcpy((uint8_t *)img->pixels + i * 4, &v, 4);
            }
        }
    return 0;
}

static int same(const kiln_texture *a, const kiln_texture *b)
{
    if (a->levels != b->levels) return 0;
    for (uint32_t l = 0; l < a->levels; l++) {
        size_t sa = 0, sb = 0;
        const uint8_t *pa = kiln_texture_image(a, l, 0, 0, &sa), *pb = kiln_texture_image(b, l, 0, 0, &sb);
        if (sa != sb || memcmp(pa, pb, sa) != 0) return 0;
    }
    return 1;
}

/* path 0 host, 1 resident, 2 resident with the host decode */
static kiln_status run_once(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *ep,
                            const kiln_mip_params *mp, int path, kiln_texture *out, double *ms, double *kernel)
{
    if (path == 0) setenv("KILN_GPU_MIP_RESIDENT", "0", 1);
    if (path == 2) setenv("KILN_GPU_MIP16_DEVICE_DECODE", "0", 1);
    kiln__gpu_mip_encode_stats s0, s1;
    kiln__gpu_mip_encode_stats_get(ctx, &s0);
    double t0 = wall_ms();
    kiln_status st = kiln_encode_mips(ctx, img, ep, mp, out);
    *ms = wall_ms() - t0;
    kiln__gpu_mip_encode_stats_get(ctx, &s1);
    unsetenv("KILN_GPU_MIP_RESIDENT");
    unsetenv("KILN_GPU_MIP16_DEVICE_DECODE");
    *kernel = s1.mip_ms + s1.encode_ms;
    if (st == KILN_OK && path != 0 && s1.runs != s0.runs + 1) {
        fprintf(stderr, "gpu_mip16: the resident path was not taken\n");
        return KILN_ERR_UNSUPPORTED;
    }
    return st;
}

int main(int argc, char **argv)
{
    uint32_t W = 4096, H = 4096, runs = 3;
    const char *want = NULL;
    int verbose = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--size") && next && sscanf(next, "%ux%u", &W, &H) == 2) i++;
        else if (!strcmp(a, "--runs") && next) runs = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--cases") && next) want = argv[++i];
        else if (!strcmp(a, "--verbose")) verbose = 1;
        else {
            fprintf(stderr, "usage: gpu_mip16 [--size WxH] [--runs N] [--cases a,b,...] [--verbose]\n");
            return 2;
        }
    }
    if (runs < 1) runs = 1;
    if (runs > 50) runs = 50;
    setenv("KILN_ALLOW_CPU_VULKAN", "1", 1);
    kiln_context_params cp;
    kiln_context_params_init(&cp);
    cp.verbose = verbose;
    kiln_context *ctx = NULL;
    if (kiln_context_create(&cp, &ctx) != KILN_OK || !ctx) return 1;
    const kiln_gpu_info *gi = kiln_context_gpu(ctx);
    if (!gi) {
        fprintf(stderr, "gpu_mip16: no Vulkan device\n");
        kiln_context_free(ctx);
        return 77;
    }
    time_t now = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    printf("# kiln_encode_mips, helper mip16b's resident cases: %s (%s), %s, %ux%u, %u runs\n\n", gi->name, gi->driver,
           date, W, H, runs);
    printf("| case | format | path | wall min | wall med | kernel ms (resident) | same bytes as host |\n"
           "|---|---|---|---|---|---|---|\n");
    int rc = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const bcase *k = &cases[c];
        if (want) {
            const char *p = strstr(want, k->name);
            size_t n = strlen(k->name);
            if (!p || (p != want && p[-1] != ',') || (p[n] != 0 && p[n] != ',')) continue;
        }
        kiln_image img;
        if (synth(W, H, k->u16, k->normal, k->coverage > 0.0f, &img)) return 1;
        kiln_encode_params ep;
        kiln_encode_params_init(&ep, k->format, k->quality);
        kiln_mip_params mp;
        kiln_mip_params_init(&mp);
        mp.normal_map = k->normal;
        mp.filter = (kiln_mip_filter)k->filter;
        mp.strategy = (kiln_mip_strategy)k->strategy;
        mp.alpha_coverage_ref = k->coverage;
        const kiln_format_info *fi = kiln_format_get_info(k->format);
        const int bc6h_int = k->format == KILN_FORMAT_BC6H_UFLOAT || k->format == KILN_FORMAT_BC6H_SFLOAT;
        kiln_texture ref;
        memset(&ref, 0, sizeof ref);
        for (int path = 0; path < (k->u16 ? 3 : 2); path++) {
            double t[50], kern = -1.0, best = 1e30;
            kiln_texture got;
            memset(&got, 0, sizeof got);
            kiln_status st = KILN_OK;
            for (uint32_t r = 0; r <= runs && st == KILN_OK; r++) {
                double ms = 0.0, kk = 0.0;
                kiln_texture_free(&got);
                st = run_once(ctx, &img, &ep, &mp, path, &got, &ms, &kk);
                if (r == 0) continue;
                t[r - 1] = ms;
                if (ms < best) best = ms, kern = kk;
            }
            static const char *pn[] = {"host (KILN_GPU_MIP_RESIDENT=0)", "resident", "resident, host decode"};
            if (st != KILN_OK) {
                printf("| %s | %s | %s | (failed: %s) | | | |\n", k->name, fi->name, pn[path], kiln_last_error(ctx));
                rc = 1;
                kiln_texture_free(&got);
                continue;
            }
            double mn, med;
            stats(t, (int)runs, &mn, &med);
            const char *eq = "-";
            if (path == 0) {
                ref = got;
                memset(&got, 0, sizeof got);
            } else if (bc6h_int) {
                eq = "n/a (host: CPU BC6H)";
            } else {
                eq = same(&ref, &got) ? "yes" : "NO";
                if (eq[0] == 'N') rc = 1;
            }
            if (path == 0) printf("| %s | %s | %s | %.1f | %.1f | - | - |\n", k->name, fi->name, pn[path], mn, med);
            else printf("| | | %s | %.1f | %.1f | %.2f | %s |\n", pn[path], mn, med, kern, eq);
            fflush(stdout);
            kiln_texture_free(&got);
        }
        kiln_texture_free(&ref);
        kiln_image_free(&img);
    }
    kiln_context_free(ctx);
    return rc;
}

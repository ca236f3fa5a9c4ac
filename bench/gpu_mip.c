/* gpu_mip.c - speed of the GPU mipmap strategies (src/gpu/gpu_mip.c) on synthetic RGBA8 sRGB images
 * kept on the device (kiln__gpu_mip_bench): for each size and strategy, the kernel time (Vulkan
 * timestamps) min and median over --runs with the L2 cache cold (a 256 MiB buffer written before each
 * run) and warm (back-to-back), the ratio to `baseline` (reads level 0, writes every level without
 * reducing: the practical speed of light) and to `blit` (the vkCmdBlitImage chain), and the speed of
 * light from a measured vkCmdCopyBuffer moving the same bytes (read level 0 + write levels 1..L-1):
 * SoL = copy time, eff = SoL / cold min; `dispatches` = the strategy's plan (kiln__gpu_mip_plan_dispatches:
 * single-pass is 1 for every size; KILN_GPU_MIP_PLAN=1 prints the plans on stderr).
 *
 * usage: gpu_mip [--runs N] [--sizes WxH[xCOUNT],...] [--strategies a,b,...] [--alpha] [--device N] [--quick]
 *                [--check]
 * Strategy names per-level, subgroup, pyramid use the fast box path (shaders/mip_fast.comp on even levels,
 * mip_fast_level.comp on odd ones and the tail) unless KILN_GPU_MIP_FAST=0 (or =1: even levels only);
 * NAME-general runs the general path alone (the pre-fast kernels) and NAME-even only the even stages, so
 * one run compares them.
 * --check instead compares every strategy (kiln_mip_texture_layers on the GPU) with the CPU reference
 * on synthetic alpha-weighted sRGB images of the same sizes and prints the worst difference (exit 1 when
 * a strategy other than blit is more than 1 LSB off): the real-GPU test of the single pass's ordering.
 * Default sizes: the list (1920x1080 2560x1440 3840x2160 2048^2 4096^2 8192^2 2047^2 4095^2
 * 3095x990 1080x4096 and 256 textures of 256^2 in one batch), runs 10, every strategy. --quick: a
 * few small sizes, 2 runs (a smoke test for lavapipe). Prints a markdown table.
 * --filter kaiser,lanczos3,mitchell[,box] [--wrap] instead times the quality filters (src/gpu/gpu_mip_filter.c)
 * through kiln_mip_texture_layers on synthetic alpha-weighted sRGB images: GPU kernel time (timestamps,
 * warm: min / median of --runs), the whole GPU call (upload, kernels, download; host wall time, min),
 * the CPU reference's wall time (one run, all cores) and the worst difference to it in LSB (contract
 * <= 1; exit 1 when over). Default sizes there: 1920x1080 2048^2 4096^2 4095^2 and 64 x 256^2.
 * --encode bc1,bc3,... [--quality fast|normal|high|max] [--filter F] [--image PATH] instead times
 * kiln_encode_mips (issue #5): the host path (KILN_GPU_MIP_RESIDENT=0: kiln_mip_generate on the GPU,
 * levels downloaded, then kiln_encode_image per level, each uploading its level) against the
 * device-resident path (src/gpu/gpu_mip_encode.c: one submission, only blocks come back): wall time
 * (min / median of --runs after one warm-up), kernel time (host path: the mip pass + every level's
 * encode; resident: mip + encode passes, timestamps), blocks the CPU encoder redid, and whether the
 * bytes are the same (exit 1 when not). Default size 4096x4096 (synthetic RGBA8 sRGB texels: flat 8x8
 * patches and noise with varying alpha; --image loads a file instead). bc6h/bc6h-sf get float texels;
 * --float gives every format float texels in [0, 1] (a float chain into the 8-bit encoders: the device
 * conversion pass), --16bit gives them RGBA16 texels (helper mip16: the float chain of the decoded base,
 * quantised to 16 bits and converted on the device; the host path's kiln_mip_generate makes 16-bit levels
 * on the GPU too), --mip-strategy S (e.g. blit) the mip strategy of both paths, --alpha-coverage R the alpha-test
 * coverage reference of both (helper alphacov: scaled on the device by the resident path).
 * Lavapipe is accepted (KILN_ALLOW_CPU_VULKAN semantics: the backend is forced to Vulkan). */
#include "core/internal.h"
#include "gpu/gpu.h"
#include "gpu/gpu_mip.h"
#include "gpu/gpu_mip_encode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* min and median of the n values >= 0 of v (sorted in place); -1 when none */
static void stats(double *v, int n, double *mn, double *med)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    int k = 0;
    while (k < n && v[k] < 0.0) k++;
    double *p = v + k;
    int m = n - k;
    if (m <= 0) {
        *mn = *med = -1.0;
        return;
    }
    *mn = p[0];
    *med = m % 2 ? p[m / 2] : 0.5 * (p[m / 2 - 1] + p[m / 2]);
}

static const char *const names[] = {"auto", "blit", "per-level", "subgroup", "pyramid", "single-pass", "baseline"};

/* "per-level-general", "pyramid-general", ...: the strategy without the fast box path (as KILN_GPU_MIP_FAST=0
 * runs it); "pyramid-even", ...: only its even stages (shaders/mip_fast.comp, as KILN_GPU_MIP_FAST=1); the
 * plain name: as the environment says (all of the fast path unless KILN_GPU_MIP_FAST is 0 or 1). */
#define GPU_MIP_VARIANTS (KILN__GPU_MIP_BENCH_GENERAL | KILN__GPU_MIP_BENCH_EVEN)
static const char *sname(int s, char *buf, size_t n)
{
    int b = s & ~GPU_MIP_VARIANTS;
    snprintf(buf, n, "%s%s", b >= 0 && b < 7 ? names[b] : "?",
             (s & KILN__GPU_MIP_BENCH_GENERAL) ? "-general" : (s & KILN__GPU_MIP_BENCH_EVEN) ? "-even" : "");
    return buf;
}

/* Dispatches of strategy s's plan for `count` w x h images (gpu_mip.c kiln__gpu_mip_plan_dispatches under the
 * variant's KILN_GPU_MIP_FAST): baseline 1, blit "-" (vkCmdBlitImage, no dispatch). */
static const char *disp_of(int s, uint32_t w, uint32_t h, uint32_t count, char *buf, size_t n)
{
    const int b = s & ~GPU_MIP_VARIANTS;
    if (b == KILN_MIP_STRATEGY_BLIT) return "-";
    if (b == KILN_MIP_STRATEGY_BASELINE) return "1";
    const char *env = getenv("KILN_GPU_MIP_FAST");
    char saved[16] = "";
    if (env) snprintf(saved, sizeof saved, "%s", env);
    if (s & KILN__GPU_MIP_BENCH_GENERAL) setenv("KILN_GPU_MIP_FAST", "0", 1);
    if (s & KILN__GPU_MIP_BENCH_EVEN) setenv("KILN_GPU_MIP_FAST", "1", 1);
    snprintf(buf, n, "%u", kiln__gpu_mip_plan_dispatches(w, h, kiln_mip_level_count(w, h), count, b, NULL, 0));
    if (env) setenv("KILN_GPU_MIP_FAST", saved, 1);
    else unsetenv("KILN_GPU_MIP_FAST");
    return buf;
}

/* --check: every strategy through kiln_mip_texture_layers on the GPU against the CPU reference on a
 * synthetic sRGB image with varying alpha (alpha-weighted path), all layers of a batch; prints the
 * worst difference in LSB per strategy (the contract: <= 1, blit excepted). */
static int check_size(kiln_context *gpu, kiln_context *cpu, uint32_t w, uint32_t h, uint32_t count, const int *strategies,
                      uint32_t nstrat)
{
    kiln_image *imgs = calloc(count, sizeof *imgs);
    if (!imgs) return 1;
    int rc = 0;
    for (uint32_t i = 0; i < count; i++) {
        if (kiln_image_alloc(cpu, &imgs[i], w, h, KILN_PIXEL_U8) != KILN_OK) {
            rc = 1;
            count = i;
            break;
        }
        imgs[i].channels = 4;
        imgs[i].srgb = 1;
        uint32_t *px = imgs[i].pixels;
        for (uint64_t k = 0; k < (uint64_t)w * h; k++) {
            uint32_t v = (uint32_t)(k + (uint64_t)i * 7919u) * 2654435761u;
            v ^= v >> 13;
            v *= 0x5bd1e995u;
            v ^= v >> 15;
            if ((v >> 24) < 40) v &= 0x00ffffffu; /* some fully transparent texels */
            px[k] = v;
        }
    }
    kiln_mip_params mp;
    kiln_mip_params_init(&mp);
    kiln_texture ref;
    memset(&ref, 0, sizeof ref);
    if (rc == 0 && kiln_mip_texture_layers(cpu, imgs, count, 1, count > 1, &mp, KILN_FORMAT_RGBA8_SRGB, &ref) != KILN_OK) {
        printf("| %ux%u x%u | CPU reference failed: %s |\n", w, h, count, kiln_last_error(cpu));
        rc = 1;
    }
    for (uint32_t s = 0; s < nstrat && rc == 0; s++) {
        if (strategies[s] == KILN_MIP_STRATEGY_BASELINE) continue;
        char nb[48];
        const char *env = getenv("KILN_GPU_MIP_FAST");
        char saved[16] = "";
        if (env) snprintf(saved, sizeof saved, "%s", env);
        if (strategies[s] & KILN__GPU_MIP_BENCH_GENERAL) setenv("KILN_GPU_MIP_FAST", "0", 1);
        if (strategies[s] & KILN__GPU_MIP_BENCH_EVEN) setenv("KILN_GPU_MIP_FAST", "1", 1);
        mp.strategy = (kiln_mip_strategy)(strategies[s] & ~GPU_MIP_VARIANTS);
        kiln_texture t;
        kiln_status ts = kiln_mip_texture_layers(gpu, imgs, count, 1, count > 1, &mp, KILN_FORMAT_RGBA8_SRGB, &t);
        if (saved[0]) setenv("KILN_GPU_MIP_FAST", saved, 1);
        else unsetenv("KILN_GPU_MIP_FAST");
        if (ts != KILN_OK) {
            printf("| %ux%u x%u | %s | failed: %s |\n", w, h, count, sname(strategies[s], nb, sizeof nb),
                   kiln_last_error(gpu));
            rc = 1;
            continue;
        }
        int worst = 0;
        size_t off1 = 0;
        for (size_t k = 0; k < t.data_size && k < ref.data_size; k++) {
            int d = abs((int)t.data[k] - (int)ref.data[k]);
            if (d > worst) worst = d;
            off1 += d == 1;
        }
        int ok = t.data_size == ref.data_size && (worst <= 1 || strategies[s] == KILN_MIP_STRATEGY_BLIT);
        printf("| %ux%u x%u | %s | worst %d LSB, %zu values off by 1 | %s |\n", w, h, count,
               sname(strategies[s], nb, sizeof nb), worst,
               off1, ok ? "ok" : (strategies[s] == KILN_MIP_STRATEGY_BLIT ? "blit: inexact" : "FAIL"));
        if (!ok) rc = 1;
        kiln_texture_free(&t);
    }
    kiln_texture_free(&ref);
    for (uint32_t i = 0; i < count; i++) kiln_image_free(&imgs[i]);
    free(imgs);
    fflush(stdout);
    return rc;
}

typedef struct size_item {
    uint32_t w, h, count;
} size_item;

static const size_item default_sizes[] = {{1920, 1080, 1}, {2560, 1440, 1}, {3840, 2160, 1}, {2048, 2048, 1},
                                          {4096, 4096, 1}, {8192, 8192, 1}, {2047, 2047, 1}, {4095, 4095, 1},
                                          {3095, 990, 1},  {1080, 4096, 1}, {256, 256, 256}};
static const size_item quick_sizes[] = {{64, 64, 1}, {255, 129, 1}, {256, 256, 4}};

/* ---- --filter: the quality filters (gpu_mip_filter.c) against the CPU reference ---- */

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static const char *const filter_names[] = {"box", "kaiser", "lanczos3", "mitchell"};

/* Synthetic sRGB RGBA8 images with varying alpha and some fully transparent texels (as check_size). */
static kiln_image *filter_images(kiln_context *cpu, uint32_t w, uint32_t h, uint32_t count)
{
    kiln_image *imgs = calloc(count, sizeof *imgs);
    if (!imgs) return NULL;
    for (uint32_t i = 0; i < count; i++) {
        if (kiln_image_alloc(cpu, &imgs[i], w, h, KILN_PIXEL_U8) != KILN_OK) {
            for (uint32_t k = 0; k < i; k++) kiln_image_free(&imgs[k]);
            free(imgs);
            return NULL;
        }
        imgs[i].channels = 4;
        imgs[i].srgb = 1;
        uint32_t *px = imgs[i].pixels;
        for (uint64_t k = 0; k < (uint64_t)w * h; k++) {
            /* smooth gradients plus noise, so the filters see both edges and flat areas */
            uint32_t v = (uint32_t)(k + (uint64_t)i * 7919u) * 2654435761u;
            v ^= v >> 13;
            v *= 0x5bd1e995u;
            v ^= v >> 15;
            uint32_t x = (uint32_t)(k % w), y = (uint32_t)(k / w);
            uint32_t r = (x * 255u / w + (v & 31u)) & 255u, g = (y * 255u / h + ((v >> 5) & 31u)) & 255u;
            uint32_t b = (v >> 10) & 255u, a = (v >> 24) < 40 ? 0u : 128u + ((v >> 18) & 127u);
            px[k] = r | g << 8 | b << 16 | a << 24;
        }
    }
    return imgs;
}

static int bench_filters(kiln_context *gpu, uint32_t threads, const size_item *sizes, size_t nsizes, const int *filters,
                         int nfilters, int wrap, uint32_t runs)
{
    kiln_context_params cc;
    kiln_context_params_init(&cc);
    cc.backend = KILN_BACKEND_CPU;
    cc.threads = threads;
    kiln_context *cpu = NULL;
    if (kiln_context_create(&cc, &cpu) != KILN_OK) return 1;
    const kiln_gpu_info *gi = kiln_context_gpu(gpu);
    time_t now = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    printf("# kiln GPU mipmap quality filters: %s (%s), %s\n\n", gi ? gi->name : "?", gi ? gi->driver : "?", date);
    printf("RGBA8 sRGB, alpha-weighted, edge %s, full chains through kiln_mip_texture_layers (all layers in one batch). "
           "GPU kernel = Vulkan timestamps around the 2 dispatches per level (warm, %u runs); GPU call = host wall time "
           "of the whole call (upload, kernels, download, copies; min); CPU = the CPU reference on %u threads (one run); "
           "worst = largest GPU-CPU difference over every level (contract <= 1 LSB).\n\n",
           wrap ? "wrap" : "clamp", runs, kiln_context_threads(cpu));
    printf("| size | filter | GPU kernel min ms | GPU kernel med ms | GPU call min ms | CPU ms | CPU / GPU call | worst LSB | "
           "values off by 1 |\n|---|---|---|---|---|---|---|---|---|\n");
    int rc = 0;
    double *ms = calloc(runs, sizeof *ms);
    if (!ms) {
        kiln_context_free(cpu);
        return 1;
    }
    for (size_t si = 0; si < nsizes; si++) {
        const size_item *sz = &sizes[si];
        char label[64];
        if (sz->count > 1) snprintf(label, sizeof label, "%u x %ux%u", sz->count, sz->w, sz->h);
        else snprintf(label, sizeof label, "%ux%u", sz->w, sz->h);
        kiln_image *imgs = filter_images(cpu, sz->w, sz->h, sz->count);
        if (!imgs) {
            printf("| %s | - | out of memory |\n", label);
            rc = 1;
            continue;
        }
        for (int f = 0; f < nfilters; f++) {
            kiln_mip_params mp;
            kiln_mip_params_init(&mp);
            mp.filter = (kiln_mip_filter)filters[f];
            mp.edge = wrap ? KILN_MIP_EDGE_WRAP : KILN_MIP_EDGE_CLAMP;
            mp.strategy = KILN_MIP_STRATEGY_PER_LEVEL; /* box: the per-level compute path; others: the filter path */
            kiln_texture ref, t;
            memset(&ref, 0, sizeof ref);
            memset(&t, 0, sizeof t);
            double c0 = now_ms();
            kiln_status st = kiln_mip_texture_layers(cpu, imgs, sz->count, 1, sz->count > 1, &mp, KILN_FORMAT_RGBA8_SRGB,
                                                     &ref);
            double cpu_ms = now_ms() - c0;
            if (st != KILN_OK) {
                printf("| %s | %s | CPU failed: %s |\n", f == 0 ? label : "", filter_names[filters[f]],
                       kiln_last_error(cpu));
                rc = 1;
                continue;
            }
            double call_min = -1.0;
            for (uint32_t r = 0; r <= runs && st == KILN_OK; r++) { /* run 0: warm-up (pipeline creation) */
                kiln_texture_free(&t);
                double g0 = now_ms();
                st = kiln_mip_texture_layers(gpu, imgs, sz->count, 1, sz->count > 1, &mp, KILN_FORMAT_RGBA8_SRGB, &t);
                double call = now_ms() - g0;
                if (st == KILN_OK && r >= 1) {
                    ms[r - 1] = gpu->last_gpu_ms;
                    if (call_min < 0.0 || call < call_min) call_min = call;
                }
            }
            if (st != KILN_OK) {
                printf("| %s | %s | GPU failed: %s |\n", f == 0 ? label : "", filter_names[filters[f]],
                       kiln_last_error(gpu));
                kiln_texture_free(&ref);
                rc = 1;
                continue;
            }
            int worst = 0;
            size_t off1 = 0;
            for (size_t k = 0; k < t.data_size && k < ref.data_size; k++) {
                int d = abs((int)t.data[k] - (int)ref.data[k]);
                if (d > worst) worst = d;
                off1 += d == 1;
            }
            if (t.data_size != ref.data_size || worst > 1) rc = 1;
            double kmin, kmed;
            stats(ms, (int)runs, &kmin, &kmed);
            printf("| %s | %s | %.3f | %.3f | %.1f | %.1f | %.1fx | %d%s | %zu |\n", f == 0 ? label : "",
                   filter_names[filters[f]], kmin, kmed, call_min, cpu_ms, call_min > 0.0 ? cpu_ms / call_min : 0.0, worst,
                   worst > 1 ? " FAIL" : "", off1);
            fflush(stdout);
            kiln_texture_free(&t);
            kiln_texture_free(&ref);
        }
        for (uint32_t i = 0; i < sz->count; i++) kiln_image_free(&imgs[i]);
        free(imgs);
    }
    free(ms);
    kiln_context_free(cpu);
    printf("\n%s\n", rc ? "SOME FILTER RUNS FAILED OR EXCEEDED 1 LSB" : "all filter runs within 1 LSB of the CPU");
    return rc;
}

static const size_item filter_sizes[] = {{1920, 1080, 1}, {2048, 2048, 1}, {4096, 4096, 1}, {4095, 4095, 1}, {256, 256, 64}};

static int parse_strategy(const char *s)
{
    for (int i = 0; i < 7; i++) {
        if (!strcmp(s, names[i])) return i;
        size_t n = strlen(names[i]);
        if (i >= KILN_MIP_STRATEGY_PER_LEVEL && i <= KILN_MIP_STRATEGY_PYRAMID && !strncmp(s, names[i], n)) {
            if (!strcmp(s + n, "-general")) return i | KILN__GPU_MIP_BENCH_GENERAL;
            if (!strcmp(s + n, "-even")) return i | KILN__GPU_MIP_BENCH_EVEN;
        }
    }
    return -1;
}

/* ---------------------------------------------------------------- --encode: issue #5 */

static double wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int synth_image(uint32_t w, uint32_t h, int f32, kiln_image *img)
{
    if (kiln_image_alloc(NULL, img, w, h, f32 == 3 ? KILN_PIXEL_U16 : f32 ? KILN_PIXEL_F32 : KILN_PIXEL_U8) != KILN_OK)
        return -1;
    img->channels = 4;
    img->srgb = !f32;
    img->hdr = f32 && f32 != 3;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            size_t i = (size_t)y * w + x;
            uint32_t v = (uint32_t)i * 2654435761u;
            v ^= v >> 15;
            if (((x / 8) + (y / 8)) % 3 == 0) v = (((x / 8) * 2654435761u) ^ ((y / 8) * 40503u)) | 0xff000000u;
            if (f32 == 3) { /* --16bit: the bytes in the high half, other bits of the hash in the low */
                uint16_t *p = (uint16_t *)img->pixels + i * 4;
                uint32_t lo = (uint32_t)i * 40503u;
                for (int c = 0; c < 4; c++) p[c] = (uint16_t)(((v >> (8 * c)) & 255u) << 8 | ((lo >> (8 * c)) & 255u));
                if (((x / 8) + (y / 8)) % 3 == 0) p[3] = 65535;
            } else if (f32) {
                float *p = (float *)img->pixels + i * 4;
                for (int c = 0; c < 3; c++) p[c] = (float)((v >> (8 * c)) & 255u) / (f32 == 2 ? 255.0f : 32.0f);
                p[3] = 1.0f;
            } else {
                memcpy((uint8_t *)img->pixels + i * 4, &v, 4);
            }
        }
    return 0;
}

/* One kiln_encode_mips through the host path, done step by step as encode.c does it, to time its
 * kernels: kiln_mip_generate (GPU mip pass, levels downloaded), then kiln_encode_image per level. */
static kiln_status host_path(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *ep,
                             const kiln_mip_params *mp, kiln_texture *out, double *kernel_ms)
{
    const kiln_format_info *fi = kiln_format_get_info(ep->format);
    kiln_image lv[KILN_MAX_LEVELS];
    uint32_t n = KILN_MAX_LEVELS;
    *kernel_ms = 0.0;
    kiln_status st = kiln_mip_generate(ctx, img, mp, lv, &n);
    if (st != KILN_OK) return st;
    *kernel_ms += kiln_last_gpu_ms(ctx);
    st = kiln_texture_alloc(ctx, out, fi->format, img->width, img->height, n, 1, 1);
    for (uint32_t l = 0; l < n && st == KILN_OK; l++) {
        size_t size = 0;
        uint8_t *d = kiln_texture_image(out, l, 0, 0, &size);
        st = kiln_encode_image(ctx, &lv[l], ep, d, size);
        if (st == KILN_OK && kiln_last_gpu_ms(ctx) > 0.0) *kernel_ms += kiln_last_gpu_ms(ctx);
    }
    for (uint32_t l = 0; l < n; l++) kiln_image_free(&lv[l]);
    return st;
}

static int bench_encode(kiln_context *ctx, const size_item *sizes, size_t nsizes, const char *formats, const char *image,
                        int quality, int filter, uint32_t runs, int enc_float, int enc_u16, int enc_strategy,
                        float coverage)
{
    static const char *qn[] = {"fast", "normal", "high", "max"};
    const kiln_gpu_info *gi = kiln_context_gpu(ctx);
    time_t now = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    printf("# kiln compress --mips on the GPU: host path vs device-resident chain (issue #5): %s (%s), %s\n\n",
           gi ? gi->name : "?", gi ? gi->driver : "?", date);
    printf("kiln_encode_mips, %s filter, quality %s, full chain; wall ms min / median of %u runs after a warm-up; kernel ms "
           "(timestamps) of the fastest run: host path = mip pass + each level's encode, resident = mip + encode/gather.\n\n",
           filter_names[filter], qn[quality], runs);
    printf("| image | format | path | wall min | wall med | kernel ms | blocks to CPU | same bytes |\n|---|---|---|---|---|---|---|---|\n");
    int rc = 0;
    char *dup = strdup(formats), *save = NULL;
    for (size_t si = 0; si < (image ? 1 : nsizes); si++) {
        for (char *t = strtok_r(si == 0 ? dup : NULL, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            kiln_format fmt = kiln_format_from_name(t);
            const kiln_format_info *fi = kiln_format_get_info(fmt);
            if (!fi) {
                fprintf(stderr, "gpu_mip: unknown format '%s'\n", t);
                free(dup);
                return 2;
            }
            /* --float (mipres2): float texels in [0, 1] for the 8-bit formats too (the float-chain conversion) */
            const int f32 = fmt == KILN_FORMAT_BC6H_UFLOAT || fmt == KILN_FORMAT_BC6H_SFLOAT ? 1 : enc_float ? 2 : enc_u16 ? 3 : 0;
            kiln_image img;
            char label[128];
            if (image) {
                if (kiln_image_load(ctx, image, &img) != KILN_OK) {
                    fprintf(stderr, "gpu_mip: %s\n", kiln_last_error(ctx));
                    free(dup);
                    return 1;
                }
                snprintf(label, sizeof label, "%s %ux%u", image, img.width, img.height);
            } else {
                if (synth_image(sizes[si].w, sizes[si].h, f32, &img)) {
                    free(dup);
                    return 1;
                }
                snprintf(label, sizeof label, "synthetic %ux%u%s", img.width, img.height, f32 == 2 ? " float" : f32 == 3 ? " 16-bit" : "");
            }
            kiln_encode_params ep;
            kiln_encode_params_init(&ep, fmt, (kiln_quality)quality);
            kiln_mip_params mp;
            kiln_mip_params_init(&mp);
            mp.filter = (kiln_mip_filter)filter;
            mp.strategy = (kiln_mip_strategy)enc_strategy; /* --mip-strategy (mipres2): e.g. blit */
            mp.alpha_coverage_ref = coverage; /* --alpha-coverage R (alphacov): scaled on the device when resident */
            if (coverage > 0.0f) {
                size_t n = strlen(label);
                snprintf(label + n, sizeof label - n, " cov %g", (double)coverage);
            }
            if (enc_strategy != KILN_MIP_STRATEGY_AUTO) {
                size_t n = strlen(label);
                snprintf(label + n, sizeof label - n, " %s", names[enc_strategy]);
            }
            /* as kiln_encode_mips resolves the colour space */
            mp.color = (fi->flags & KILN_FF_SRGB) && !img.hdr ? KILN_MIP_COLOR_SRGB : KILN_MIP_COLOR_LINEAR;
            kiln_texture ref, got;
            memset(&ref, 0, sizeof ref);
            memset(&got, 0, sizeof got);
            double hw[1000], rw[1000], hk = -1.0, rk = -1.0, hbest = 1e30, rbest = 1e30;
            uint64_t fallback = 0;
            kiln_status st = KILN_OK;
            for (uint32_t r = 0; r <= runs && st == KILN_OK; r++) {
                kiln_texture_free(&ref);
                kiln_texture_free(&got);
                double k = 0.0, t0 = wall_ms();
                st = host_path(ctx, &img, &ep, &mp, &ref, &k);
                double t1 = wall_ms();
                if (st != KILN_OK) break;
                kiln__gpu_mip_encode_stats s0, s1;
                kiln__gpu_mip_encode_stats_get(ctx, &s0);
                double t2 = wall_ms();
                st = kiln_encode_mips(ctx, &img, &ep, &mp, &got);
                double t3 = wall_ms();
                kiln__gpu_mip_encode_stats_get(ctx, &s1);
                if (st != KILN_OK) break;
                if (s1.runs != s0.runs + 1) {
                    fprintf(stderr, "gpu_mip: %s did not take the device-resident path\n", fi->name);
                    st = KILN_ERR_UNSUPPORTED;
                    break;
                }
                if (r == 0) continue; /* warm-up: pipelines, allocations */
                hw[r - 1] = t1 - t0;
                rw[r - 1] = t3 - t2;
                if (t1 - t0 < hbest) hbest = t1 - t0, hk = k;
                if (t3 - t2 < rbest) rbest = t3 - t2, rk = s1.mip_ms + s1.encode_ms;
                fallback = s1.fallback_blocks - s0.fallback_blocks;
            }
            if (st != KILN_OK) {
                printf("| %s | %s | (failed: %s) | | | | | |\n", label, fi->name, kiln_last_error(ctx));
                rc = 1;
            } else {
                int same = ref.levels == got.levels;
                for (uint32_t l = 0; same && l < ref.levels; l++) {
                    size_t sa = 0, sb = 0;
                    const uint8_t *a = kiln_texture_image(&ref, l, 0, 0, &sa), *b = kiln_texture_image(&got, l, 0, 0, &sb);
                    same = sa == sb && memcmp(a, b, sa) == 0;
                }
                if (!same) rc = 1;
                double hmin, hmed, rmin, rmed;
                stats(hw, (int)runs, &hmin, &hmed);
                stats(rw, (int)runs, &rmin, &rmed);
                printf("| %s | %s | host (levels down and up) | %.1f | %.1f | %.2f | - | |\n", label, fi->name, hmin, hmed, hk);
                printf("| | | device-resident | %.1f | %.1f | %.2f | %llu | %s |\n", rmin, rmed, rk,
                       (unsigned long long)fallback, same ? "yes" : "NO");
            }
            fflush(stdout);
            kiln_texture_free(&ref);
            kiln_texture_free(&got);
            kiln_image_free(&img);
        }
        free(dup);
        dup = strdup(formats);
        save = NULL;
    }
    free(dup);
    return rc;
}

int main(int argc, char **argv)
{
    uint32_t runs = 10;
    int alpha = 0, device = -1, quick = 0, check = 0, wrap = 0, filters[8], nfilters = 0, quality = KILN_QUALITY_HIGH;
    const char *encode = NULL, *image = NULL;
    int enc_float = 0, enc_u16 = 0, enc_strategy = KILN_MIP_STRATEGY_AUTO; /* --encode: --float, --mip-strategy NAME */
    float enc_coverage = 0.0f; /* --encode: --alpha-coverage R */
    size_item sizes[64];
    size_t nsizes = 0;
    int strategies[16] = {KILN_MIP_STRATEGY_BASELINE, KILN_MIP_STRATEGY_BLIT, KILN_MIP_STRATEGY_PER_LEVEL,
                         KILN_MIP_STRATEGY_SUBGROUP, KILN_MIP_STRATEGY_PYRAMID, KILN_MIP_STRATEGY_SINGLE_PASS};
    uint32_t nstrat = 6;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--runs") && next) {
            runs = (uint32_t)strtoul(next, NULL, 10);
            i++;
        } else if (!strcmp(a, "--encode") && next) {
            encode = next;
            i++;
        } else if (!strcmp(a, "--float")) {
            enc_float = 1;
        } else if (!strcmp(a, "--16bit")) {
            enc_u16 = 1;
        } else if (!strcmp(a, "--alpha-coverage") && next) {
            enc_coverage = strtof(next, NULL);
            if (!(enc_coverage > 0.0f && enc_coverage < 1.0f)) {
                fprintf(stderr, "gpu_mip: --alpha-coverage '%s' (a reference in (0, 1))\n", next);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--mip-strategy") && next) {
            enc_strategy = parse_strategy(next);
            if (enc_strategy < 0 || enc_strategy >= KILN_MIP_STRATEGY_BASELINE) {
                fprintf(stderr, "gpu_mip: --mip-strategy '%s' (auto, blit, per-level, subgroup, pyramid, single-pass)\n", next);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--image") && next) {
            image = next;
            i++;
        } else if (!strcmp(a, "--quality") && next) {
            quality = !strcmp(next, "fast") ? 0 : !strcmp(next, "normal") ? 1 : !strcmp(next, "max") ? 3 : 2;
            i++;
        } else if (!strcmp(a, "--alpha")) {
            alpha = 1;
        } else if (!strcmp(a, "--check")) {
            check = 1;
        } else if (!strcmp(a, "--quick")) {
            quick = 1;
        } else if (!strcmp(a, "--wrap")) {
            wrap = 1;
        } else if (!strcmp(a, "--filter") && next) {
            char *dup = strdup(next), *save = NULL;
            for (char *t = strtok_r(dup, ",", &save); t && nfilters < 8; t = strtok_r(NULL, ",", &save)) {
                int f = -1;
                for (int k = 0; k < 4; k++)
                    if (!strcmp(t, filter_names[k])) f = k;
                if (f < 0) {
                    fprintf(stderr, "gpu_mip: unknown filter '%s' (box, kaiser, lanczos3, mitchell)\n", t);
                    free(dup);
                    return 2;
                }
                filters[nfilters++] = f;
            }
            free(dup);
            i++;
        } else if (!strcmp(a, "--device") && next) {
            device = atoi(next);
            i++;
        } else if (!strcmp(a, "--sizes") && next) {
            char *dup = strdup(next), *save = NULL;
            for (char *t = strtok_r(dup, ",", &save); t && nsizes < 64; t = strtok_r(NULL, ",", &save)) {
                size_item s = {0, 0, 1};
                if (sscanf(t, "%ux%ux%u", &s.w, &s.h, &s.count) < 2 || !s.w || !s.h || !s.count) {
                    fprintf(stderr, "gpu_mip: bad size '%s' (WxH or WxHxCOUNT)\n", t);
                    free(dup);
                    return 2;
                }
                sizes[nsizes++] = s;
            }
            free(dup);
            i++;
        } else if (!strcmp(a, "--strategies") && next) {
            char *dup = strdup(next), *save = NULL;
            nstrat = 0;
            /* baseline and blit always first: the ratios need them */
            strategies[nstrat++] = KILN_MIP_STRATEGY_BASELINE;
            strategies[nstrat++] = KILN_MIP_STRATEGY_BLIT;
            for (char *t = strtok_r(dup, ",", &save); t && nstrat < 16; t = strtok_r(NULL, ",", &save)) {
                int s = parse_strategy(t);
                if (s < 0) {
                    fprintf(stderr, "gpu_mip: unknown strategy '%s'\n", t);
                    free(dup);
                    return 2;
                }
                if (s != KILN_MIP_STRATEGY_BASELINE && s != KILN_MIP_STRATEGY_BLIT) strategies[nstrat++] = s;
            }
            free(dup);
            i++;
        } else {
            fprintf(stderr, "usage: gpu_mip [--runs N] [--sizes WxH[xCOUNT],...] [--strategies a,b,...] [--alpha] "
                            "[--device N] [--quick] [--check] [--filter kaiser,lanczos3,mitchell,box [--wrap]] "
                            "[--encode bc1,bc3,... [--quality Q] [--image PATH] [--float | --16bit] [--mip-strategy S] [--alpha-coverage R]]\n");
            return 2;
        }
    }
    if (runs == 0 || runs > 1000) runs = 10;
    if (nsizes == 0 && nfilters > 0 && !quick) {
        nsizes = sizeof filter_sizes / sizeof *filter_sizes;
        memcpy(sizes, filter_sizes, sizeof filter_sizes);
    }
    if (nsizes == 0) {
        const size_item *src = quick ? quick_sizes : default_sizes;
        nsizes = quick ? sizeof quick_sizes / sizeof *src : sizeof default_sizes / sizeof *src;
        memcpy(sizes, src, nsizes * sizeof *src);
        if (quick) runs = 2;
    }
    setenv("KILN_ALLOW_CPU_VULKAN", "1", 1);
    kiln_context_params cp;
    kiln_context_params_init(&cp);
    cp.backend = KILN_BACKEND_VULKAN;
    cp.device_index = device;
    kiln_context *ctx = NULL;
    if (kiln_context_create(&cp, &ctx) != KILN_OK || !ctx) {
        fprintf(stderr, "gpu_mip: no context\n");
        return 1;
    }
    kiln_status st0;
    if (!kiln__gpu_wanted(ctx, &st0) || st0 != KILN_OK) {
        fprintf(stderr, "gpu_mip: no Vulkan device: %s\n", kiln_last_error(ctx));
        kiln_context_free(ctx);
        return 77;
    }
    if (encode) {
        if (runs > 999) runs = 999;
        size_item def = {4096, 4096, 1};
        if (nsizes == 0 || quick) {
            if (quick) def.w = def.h = 256;
            sizes[0] = def;
            nsizes = 1;
        }
        int rc = bench_encode(ctx, sizes, nsizes, encode, image, quality, nfilters ? filters[0] : 0, quick ? 2 : runs, enc_float, enc_u16,
                              enc_strategy, enc_coverage);
        kiln_context_free(ctx);
        return rc;
    }
    if (nfilters > 0) {
        int rc = bench_filters(ctx, 0, sizes, nsizes, filters, nfilters, wrap, runs);
        kiln_context_free(ctx);
        return rc;
    }
    if (check) {
        kiln_context_params cc;
        kiln_context_params_init(&cc);
        cc.backend = KILN_BACKEND_CPU;
        kiln_context *cpu = NULL;
        if (kiln_context_create(&cc, &cpu) != KILN_OK) return 1;
        const kiln_gpu_info *g = kiln_context_gpu(ctx);
        printf("# kiln GPU mipmaps vs the CPU reference on %s (RGBA8 sRGB, alpha-weighted)\n\n", g ? g->name : "?");
        printf("| size | strategy | difference | verdict |\n|---|---|---|---|\n");
        int rc = 0;
        for (size_t si = 0; si < nsizes; si++)
            rc |= check_size(ctx, cpu, sizes[si].w, sizes[si].h, sizes[si].count, strategies, nstrat);
        kiln_context_free(cpu);
        kiln_context_free(ctx);
        printf("\n%s\n", rc ? "SOME CHECKS FAILED" : "all strategies within 1 LSB (blit excepted)");
        return rc;
    }
    const kiln_gpu_info *gi = kiln_context_gpu(ctx);
    time_t now = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    printf("# kiln GPU mipmaps: %s (%s), %s\n\n", gi ? gi->name : "?", gi ? gi->driver : "?", date);
    printf("RGBA8 sRGB, %s, box filter, full chains; kernel time in us (Vulkan timestamps), %u runs cold (L2 flushed by a "
           "256 MiB write) and %u warm; SoL = vkCmdCopyBuffer moving the same bytes (cold min); eff = SoL / cold min; "
           "ratios compare cold minima; blit is inexact on odd sizes. Fast box path: %s; NAME-general = "
           "the strategy without it, NAME-even = with its even stages only.\n\n",
           alpha ? "alpha-weighted" : "opaque", runs, runs,
           getenv("KILN_GPU_MIP_FAST") && getenv("KILN_GPU_MIP_FAST")[0] == '0' ? "off (KILN_GPU_MIP_FAST=0)"
           : getenv("KILN_GPU_MIP_FAST") && !strcmp(getenv("KILN_GPU_MIP_FAST"), "1") ? "even levels only (KILN_GPU_MIP_FAST=1)"
                                                                                  : "on");
    printf("| size | MB moved | SoL us | strategy | dispatches | cold min | cold med | warm min | warm med | x baseline | x blit "
           "| eff |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    double *ms = calloc((size_t)nstrat * 2 * runs, sizeof *ms);
    if (!ms) return 1;
    int rc = 0;
    for (size_t si = 0; si < nsizes; si++) {
        const size_item *sz = &sizes[si];
        double copy_ms = -1.0, bytes = 0.0;
        kiln_status st = kiln__gpu_mip_bench(ctx, sz->w, sz->h, sz->count, alpha, strategies, nstrat, runs, ms, &copy_ms,
                                             &bytes);
        char label[64];
        if (sz->count > 1) snprintf(label, sizeof label, "%u x %ux%u", sz->count, sz->w, sz->h);
        else snprintf(label, sizeof label, "%ux%u", sz->w, sz->h);
        if (st != KILN_OK) {
            printf("| %s | - | - | (failed: %s) | | | | | | | | |\n", label, kiln_last_error(ctx));
            rc = 1;
            continue;
        }
        double base_min = -1.0, blit_min = -1.0;
        for (uint32_t s = 0; s < nstrat; s++) {
            double cmin, cmed, wmin, wmed;
            stats(ms + (size_t)s * 2 * runs, (int)runs, &cmin, &cmed);
            stats(ms + ((size_t)s * 2 + 1) * runs, (int)runs, &wmin, &wmed);
            if (strategies[s] == KILN_MIP_STRATEGY_BASELINE) base_min = cmin;
            if (strategies[s] == KILN_MIP_STRATEGY_BLIT) blit_min = cmin;
            char ratio[32] = "-", eff[32] = "-", rblit[32] = "-";
            if (blit_min > 0.0 && cmin > 0.0) snprintf(rblit, sizeof rblit, "%.2f", cmin / blit_min);
            if (base_min > 0.0 && cmin > 0.0) snprintf(ratio, sizeof ratio, "%.2f", cmin / base_min);
            if (copy_ms > 0.0 && cmin > 0.0) snprintf(eff, sizeof eff, "%.0f%%", 100.0 * copy_ms / cmin);
            char db[16];
            const char *disp = disp_of(strategies[s], sz->w, sz->h, sz->count, db, sizeof db);
            if (cmin < 0.0) {
                char nb[48];
                printf("| %s | %.2f | %.1f | %s | %s | n/a | | | | | | |\n", s == 0 ? label : "", bytes / 1e6,
                       copy_ms * 1e3, sname(strategies[s], nb, sizeof nb), disp);
                continue;
            }
            char nb[48];
            printf("| %s | %.2f | %.1f | %s | %s | %.1f | %.1f | %.1f | %.1f | %s | %s | %s |\n", s == 0 ? label : "",
                   bytes / 1e6, copy_ms * 1e3, sname(strategies[s], nb, sizeof nb), disp, cmin * 1e3, cmed * 1e3,
                   wmin * 1e3, wmed * 1e3, ratio, rblit, eff);
        }
        fflush(stdout);
    }
    free(ms);
    kiln_context_free(ctx);
    return rc;
}

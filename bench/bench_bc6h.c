/* bench_bc6h.c - quality and speed of kiln's BC6H encoders on the HDR test images.
 *
 * usage: bench_bc6h [--testdata DIR] [--threads N] [--crop N] [--sf] [--gpu] [--no-cpu]
 *                   [--qualities fast,normal,high,max]
 *                   [--gpu-size N [--reps R] [--stripe B] [--exact] [--old] [--seed] [--both]
 *                    [--lanes 4,8,16] [--formats uf,sf,...] [--no-rmsle]] [--pipeline-stats]
 *
 * --formats LIST (with --gpu-size; helper bc6hsplit): one table per entry of the comma-separated list of uf (UF16) and
 *   sf (SF16), in that order, in one process (e.g. sf,uf,sf: is a table slower because it is the second one of the
 *   process, or because of its format?); --no-rmsle: no whole-image RMSLE (the column shows -1; saves seconds per row
 *   at 4096^2 where only times and the bytes' hash are wanted);
 * --pipeline-stats: = KILN_VK_PIPELINE_STATS=1: every pipeline created prints the driver's statistics
 *   (VK_KHR_pipeline_executable_properties: registers, spills, shared memory, ...) to stderr, where the
 *   device offers them (not lavapipe, Mesa 22.3);
 * --variants "NAME:KILN_X=V KILN_Y=W;NAME2:...": with --gpu-size, instead of the quality rows: the fast
 *   row once (if --qualities has fast), then one quality-high row per variant, named NAME, with its KILN_*
 *   variables set for that row (a variable the caller has set is left as it is); with --both for UF16 then
 *   SF16. One process, so the variants share the image and the device (e.g. the profiling aid
 *   KILN_BC6H_HIGH_STOP=1..5 per row);
 * --gpu-size N: instead, the GPU throughput table: an N x N image tiled from the four test images
 *   (one per quadrant, repeated), kiln's GPU encoder (strategy kiln) at each quality, R timed runs
 *   (default 7, after warm-up runs of >= 300 ms kernel time): kernel time min / median (Vulkan timestamps, kiln_last_gpu_ms)
 *   and Gpix/s from each; RMSLE of the whole GPU result; and against the CPU encoder at the same
 *   quality on the first B block rows (default 8: the CPU is slow at max): the fraction of
 *   bit-identical blocks and both RMSLEs on that stripe. Column "x fast": the row's min kernel time
 *   over quality fast's (enc_bc6h.comp), the lavapipe proxy for the H100 cost. "proc ms": the least
 *   process CPU time of one timed run (host side; on lavapipe it includes the shader's execution on
 *   the CPU, a measure that a loaded machine disturbs less than wall time), "xf proc" its ratio to
 *   fast's. Column "bytes FNV-1a": a 64-bit FNV-1a hash of the row's whole output (variants that must give
 *   the same bytes, e.g. KILN_BC6H_HIGH_OPT, show the same hash), followed by "unstable" when the timed runs did not
 *   all give the same bytes (a race). Quality high is the
 *   GPU-native encoder (enc_bc6h_h.comp, one invocation per block); --exact adds the row high-exact
 *   (KILN_BC6H_GPU_EXACT=1: the CPU-exact port enc_bc6h_q.comp at high), --old the row high-h4 (the
 *   first GPU-native design enc_bc6h_h4.comp, KILN_BC6H_HIGH_DESIGN=4), --seed the row seed-high (the
 *   seed design GPURealTimeBC6H at high, UF16 only: a calibration point between devices; its stripe
 *   columns compare with kiln's CPU high); --both prints the SF16 table after the UF16 one; --lanes
 *   4,8,16 adds the rows high-l4, high-l8, high-l16 after high (the several-lanes design
 *   enc_bc6h_hl.comp, KILN_BC6H_HIGH_DESIGN=lanes with KILN_BC6H_HIGH_LANES=4, 8, 16). The row high
 *   runs with the caller's KILN_BC6H_HIGH_DESIGN / KILN_BC6H_HIGH_LANES / KILN_BC6H_HIGH_CFG (the
 *   default design when unset); the other rows set what they need and restore the caller's values.
 *
 * Rows, per image:
 *   cpu-<quality>      kiln's CPU encoder (kiln_encode_image, CPU backend, N threads; default all)
 *   seed-cpu-fast      the CPU model of the seed design (GPURealTimeBC6H as betsy ships it, in
 *   seed-cpu-quality   src/codec/bc6h_enc.c), one thread
 *   gpu-kiln-<q>,      with --gpu: the Vulkan encoders (backend VULKAN, gpu_strategy 0 = kiln, 1 = seed),
 *   gpu-seed-<q>       "n/a" where kiln has no GPU encoder for that strategy/quality
 * Columns: RMSE (linear), RMSLE (sqrt of the mean over R, G, B of (ln(1+x) - ln(1+y))^2, as
 * kiln_compare and GPURealTimeBC6H compute it), PSNR after tone mapping at exposures -2, 0, +2 (tone
 * map: t(v) = 255 * clamp((v * 2^EV)^(1/2.2), 0, 1), the exposure + gamma 2.2 + clamp used by the
 * BC6H literature; PSNR over R, G, B with peak 255, unrounded), Mpix/s (wall time of the encode call,
 * or the kernel time reported by kiln_last_gpu_ms for GPU rows) and Mpix/cpu-s (pixels per second of
 * process CPU time: per-core speed, robust on a shared machine; = Mpix/s for GPU rows). Every output is decoded by kiln's
 * CPU BC6H decoder. The last lines give the mean RMSLE per encoder over the images and the issue's
 * target: kiln max vs the seed design's quality mode.
 */
#include "codec/codec.h"
#include "core/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef KILN_TESTDATA
#define KILN_TESTDATA "../shared/testdata"
#endif

static const char *k_images[] = {
    "hdr/blender_city_1024x512.exr",
    "hdr/blender_sunset_1024x512.exr",
    "hdr/qtcreator_preview_landscape_256x128.hdr",
    "hdr/qtcreator_preview_studio_256x128.hdr",
};
#define NIMG 4
#define MAXROWS 16

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double tone_psnr(const kiln_image *a, const kiln_image *b, double ev)
{
    const float *pa = a->pixels, *pb = b->pixels;
    const size_t n = (size_t)a->width * a->height;
    const double k = pow(2.0, ev);
    double se = 0.0;
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) {
            double x = pa[i * 4 + c], y = pb[i * 4 + c];
            if (!(x == x)) x = 0.0; /* NaN */
            double tx = 255.0 * fmin(1.0, pow(fmax(0.0, x * k), 1.0 / 2.2));
            double ty = 255.0 * fmin(1.0, pow(fmax(0.0, y * k), 1.0 / 2.2));
            se += (tx - ty) * (tx - ty);
        }
    double mse = se / (double)(n * 3);
    return mse > 0.0 ? 10.0 * log10(255.0 * 255.0 / mse) : INFINITY;
}

typedef struct row {
    char name[32];
    double rmsle_sum;
    int count;
} row;

static void report(kiln_context *ctx, const char *image, const char *name, const kiln_image *src, kiln_format fmt,
                   const uint8_t *data, size_t size, double mpix, double mpix_cpu, row *r)
{
    kiln_texture tex;
    kiln_image dec;
    memset(&dec, 0, sizeof dec);
    if (kiln_texture_alloc(ctx, &tex, fmt, src->width, src->height, 1, 1, 1) != KILN_OK) {
        printf("%s\t%s\terror: %s\n", image, name, kiln_last_error(ctx));
        return;
    }
    size_t tsize = 0;
    uint8_t *dst = kiln_texture_image(&tex, 0, 0, 0, &tsize);
    if (!dst || tsize != size) {
        printf("%s\t%s\terror: texture size\n", image, name);
        kiln_texture_free(&tex);
        return;
    }
    memcpy(dst, data, size);
    kiln_metrics m;
    if (kiln_decode(ctx, &tex, 0, 0, 0, &dec) != KILN_OK || kiln_compare(ctx, src, &dec, &m) != KILN_OK) {
        printf("%s\t%s\terror: %s\n", image, name, kiln_last_error(ctx));
    } else {
        printf("%-44s %-18s %10.4f %9.5f %8.2f %8.2f %8.2f %9.3f %9.3f\n", image, name, m.rmse, m.rmsle,
               tone_psnr(src, &dec, -2.0), tone_psnr(src, &dec, 0.0), tone_psnr(src, &dec, 2.0), mpix, mpix_cpu);
        r->rmsle_sum += m.rmsle;
        r->count++;
    }
    kiln_image_free(&dec);
    kiln_texture_free(&tex);
}

static row *find_row(row *rows, int *n, const char *name)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp(rows[i].name, name)) return &rows[i];
    if (*n == MAXROWS) return &rows[MAXROWS - 1];
    row *r = &rows[(*n)++];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    return r;
}

/* Crops img to at most n x n from its centre (in place: a new image replaces it). */
static int crop(kiln_context *ctx, kiln_image *img, uint32_t n)
{
    if (!n || (img->width <= n && img->height <= n)) return 1;
    uint32_t w = img->width < n ? img->width : n, h = img->height < n ? img->height : n;
    uint32_t x0 = (img->width - w) / 2, y0 = (img->height - h) / 2;
    kiln_image c;
    if (kiln_image_alloc(ctx, &c, w, h, KILN_PIXEL_F32) != KILN_OK) return 0;
    c.channels = img->channels;
    c.hdr = img->hdr;
    for (uint32_t y = 0; y < h; y++)
        memcpy((float *)c.pixels + (size_t)y * w * 4, (const float *)img->pixels + ((size_t)(y0 + y) * img->width + x0) * 4,
               (size_t)w * 16);
    kiln_image_free(img);
    *img = c;
    return 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double image_rmsle(kiln_context *ctx, const kiln_image *src, kiln_format fmt, const uint8_t *data, size_t size)
{
    kiln_texture tex;
    kiln_image dec;
    kiln_metrics m;
    double r = -1.0;
    if (kiln_texture_alloc(ctx, &tex, fmt, src->width, src->height, 1, 1, 1) != KILN_OK) return r;
    size_t tsize = 0;
    uint8_t *dst = kiln_texture_image(&tex, 0, 0, 0, &tsize);
    if (dst && tsize == size) {
        memcpy(dst, data, size);
        if (kiln_decode(ctx, &tex, 0, 0, 0, &dec) == KILN_OK) {
            if (kiln_compare(ctx, src, &dec, &m) == KILN_OK) r = m.rmsle;
            kiln_image_free(&dec);
        }
    }
    kiln_texture_free(&tex);
    return r;
}

static void restore_env(const char *name, int had, const char *value)
{
    if (had) setenv(name, value, 1);
    else unsetenv(name);
}

/* 64-bit FNV-1a of a buffer (column "bytes FNV-1a") */
static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* The GPU throughput table (--gpu-size). */
static int gpu_big(kiln_context *ctx, kiln_context *gctx, const char *testdata, kiln_format fmt, const int qon[4],
                   uint32_t n, int reps, uint32_t stripe, int with_exact /* rows: 1 exact, 2 old, 4 seed */,
                   int lanes_mask /* rows high-l4, -l8, -l16: bits 0, 1, 2 */, const char *label /* --variants: the row's name */,
                   int header, double fast_ref[2] /* in/out: fast's min kernel ms and process ms (0: none yet) */)
{
    static const char *qname[4] = {"fast", "normal", "high", "max"};
    kiln_image src[NIMG], big, top;
    int nsrc = 0;
    for (int ii = 0; ii < NIMG; ii++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", testdata, k_images[ii]);
        if (kiln_image_load(ctx, path, &src[nsrc]) != KILN_OK || src[nsrc].type != KILN_PIXEL_F32) {
            fprintf(stderr, "bench_bc6h: %s\n", kiln_last_error(ctx));
            return 1;
        }
        nsrc++;
    }
    if (kiln_image_alloc(ctx, &big, n, n, KILN_PIXEL_F32) != KILN_OK) return 1;
    big.channels = 3;
    big.hdr = 1;
    for (uint32_t y = 0; y < n; y++)
        for (uint32_t x = 0; x < n; x++) {
            const kiln_image *s = &src[((y >= n / 2) * 2 + (x >= n / 2)) % nsrc];
            memcpy((float *)big.pixels + ((size_t)y * n + x) * 4,
                   (const float *)s->pixels + ((size_t)(y % s->height) * s->width + x % s->width) * 4, 16);
        }
    const uint32_t bx = (n + 3) / 4, by = (n + 3) / 4;
    if (stripe > by) stripe = by;
    /* --stripe 0: no CPU check (the top image keeps one block row, unused) */
    const uint32_t top_h = (stripe ? stripe : 1u) * 4 < n ? (stripe ? stripe : 1u) * 4 : n;
    if (kiln_image_alloc(ctx, &top, n, top_h, KILN_PIXEL_F32) != KILN_OK) {
        fprintf(stderr, "bench_bc6h: %s\n", kiln_last_error(ctx));
        return 1;
    }
    top.channels = 3;
    top.hdr = 1;
    memcpy(top.pixels, big.pixels, (size_t)top.width * top.height * 16);
    size_t size = kiln_format_image_size(fmt, n, n), tsize = kiln_format_image_size(fmt, top.width, top.height);
    uint8_t *out = malloc(size), *cpu = malloc(tsize);
    double *ms = malloc(sizeof(double) * (size_t)(reps > 0 ? reps : 1));
    if (!out || !cpu || !ms) return 1;
    if (header) {
        printf("# bench_bc6h --gpu-size %u: %s, %ux%u tiled from the test images, kiln GPU encoder, %d timed runs; "
               "CPU check on the first %u block rows (%u CPU threads)\n",
               n, fmt == KILN_FORMAT_BC6H_SFLOAT ? "BC6H_SFLOAT" : "BC6H_UFLOAT", n, n, reps, stripe,
               kiln_context_threads(ctx));
        printf("%-10s %10s %10s %9s %9s %8s %10s %9s %12s %12s %10s %8s %16s\n", label ? "variant" : "quality", "min ms", "median ms",
               "Gpix/s", "Gpix/s-md", "x fast", "RMSLE", "identical", "stripe-GPU", "stripe-CPU", "proc ms", "xf proc", "bytes FNV-1a");
    }
    const double gpix = (double)n * n * 1e-9;
    double fast_ms = fast_ref[0], fast_cpu = fast_ref[1];
    /* rows: fast, normal, high (GPU-native), high-l4/-l8/-l16 (KILN_BC6H_HIGH_DESIGN=lanes, with
     * --lanes), high-h4 (KILN_BC6H_HIGH_DESIGN=4, with --old), high-exact (KILN_BC6H_GPU_EXACT=1, with
     * --exact), max, seed-high (gpu_strategy 1 at high, with --seed) */
    char env_design[64] = "", env_lanes[64] = ""; /* the caller's, restored after each row */
    const int had_design = getenv("KILN_BC6H_HIGH_DESIGN") != NULL, had_lanes = getenv("KILN_BC6H_HIGH_LANES") != NULL;
    if (had_design) snprintf(env_design, sizeof env_design, "%s", getenv("KILN_BC6H_HIGH_DESIGN"));
    if (had_lanes) snprintf(env_lanes, sizeof env_lanes, "%s", getenv("KILN_BC6H_HIGH_LANES"));
    static const int order[10] = {0, 1, 2, 7, 8, 9, 3, 4, 5, 6};
    for (int oi = 0; oi < 10; oi++) {
        const int row = order[oi];
        static const int rq[10] = {0, 1, 2, 2, 2, 3, 2, 2, 2, 2};
        static const char *lname[3] = {"high-l4", "high-l8", "high-l16"}, *lval[3] = {"4", "8", "16"};
        const int q = rq[row], old = row == 3, exact = row == 4, seed = row == 6, ml = row >= 7 ? row - 7 : -1;
        if (!qon[q] || (old && !(with_exact & 2)) || (exact && !(with_exact & 1)) || (seed && !(with_exact & 4)) ||
            (ml >= 0 && !(lanes_mask & (1 << ml))))
            continue;
        const char *rname = old ? "high-h4" : exact ? "high-exact" : seed ? "seed-high" : ml >= 0 ? lname[ml] : label && q == 2 ? label : qname[q];
        if (exact) setenv("KILN_BC6H_GPU_EXACT", "1", 1);
        if (old) setenv("KILN_BC6H_HIGH_DESIGN", "4", 1);
        if (ml >= 0) {
            setenv("KILN_BC6H_HIGH_DESIGN", "lanes", 1);
            setenv("KILN_BC6H_HIGH_LANES", lval[ml], 1);
        }
        kiln_encode_params ep;
        kiln_encode_params_init(&ep, fmt, (kiln_quality)q);
        ep.gpu_strategy = seed ? 1 : 0;
        kiln_status st = kiln_encode_image(gctx, &big, &ep, out, size); /* warm-up (pipeline compile) */
        /* then keep the GPU busy for >= 300 ms of kernel time (at most 40 runs) before timing: on the H100
         * (2026-11-25) rows timed right after the host's work (RMSLE, CPU stripe) often ran 2-4x slow, the
         * clocks not yet up */
        double warm = 0.0;
        for (int wi = 0; st == KILN_OK && wi < 40 && warm < 300.0; wi++) {
            st = kiln_encode_image(gctx, &big, &ep, out, size);
            warm += kiln_last_gpu_ms(gctx) > 0.0 ? kiln_last_gpu_ms(gctx) : 300.0;
        }
        if (st != KILN_OK) {
            unsetenv("KILN_BC6H_GPU_EXACT");
            restore_env("KILN_BC6H_HIGH_DESIGN", had_design, env_design);
            restore_env("KILN_BC6H_HIGH_LANES", had_lanes, env_lanes);
            printf("%-10s %s: %s\n", rname, st == KILN_ERR_UNSUPPORTED ? "n/a" : "error", kiln_last_error(gctx));
            continue;
        }
        int done = 0, unstable = 0;
        double cpu_min = 0.0;
        uint64_t hash0 = 0;
        for (int r = 0; r < reps; r++) {
            double c0 = cpu_s();
            if (kiln_encode_image(gctx, &big, &ep, out, size) != KILN_OK) break;
            double c = (cpu_s() - c0) * 1e3;
            if (!done || c < cpu_min) cpu_min = c;
            ms[done++] = kiln_last_gpu_ms(gctx);
            /* every timed run's bytes against the first's (helper bc6hk): a race between invocations would show as runs
             * that differ ("unstable" after the hash column) */
            const uint64_t hr = fnv1a(out, size);
            if (done == 1) hash0 = hr;
            else if (hr != hash0) unstable = 1;
        }
        if (!done) {
            printf("%-10s error: %s\n", rname, kiln_last_error(gctx));
            continue;
        }
        qsort(ms, (size_t)done, sizeof *ms, cmp_double);
        double mn = ms[0], md = done % 2 ? ms[done / 2] : 0.5 * (ms[done / 2 - 1] + ms[done / 2]);
        /* the profiling aid KILN_BC6H_HIGH_STOP writes no blocks worth measuring: no whole-image RMSLE (-1) */
        const char *stop_env = getenv("KILN_BC6H_HIGH_STOP");
        double rm = (q == 2 && stop_env && *stop_env && strcmp(stop_env, "0")) || getenv("BENCH_BC6H_NO_RMSLE") ? -1.0
                                                                                                : image_rmsle(ctx, &big, fmt, out, size);
        /* the CPU encoder at the same quality on the stripe; the GPU's first blocks are the same blocks */
        if (q == 0) fast_ms = fast_ref[0] = mn;
        double rg = -1.0, rc = -1.0;
        size_t same = 0, nb = (size_t)bx * stripe;
        unsetenv("KILN_BC6H_GPU_EXACT");
        restore_env("KILN_BC6H_HIGH_DESIGN", had_design, env_design);
        restore_env("KILN_BC6H_HIGH_LANES", had_lanes, env_lanes);
        ep.gpu_strategy = 0; /* the CPU encoder at the same quality (the seed row too) */
        if (stripe && kiln_encode_image(ctx, &top, &ep, cpu, tsize) == KILN_OK) {
            for (size_t i = 0; i < nb; i++) same += memcmp(out + i * 16, cpu + i * 16, 16) == 0;
            rg = image_rmsle(ctx, &top, fmt, out, tsize);
            rc = image_rmsle(ctx, &top, fmt, cpu, tsize);
        }
        if (q == 0) fast_cpu = fast_ref[1] = cpu_min;
        /* a hash of the whole output: variants that must give the same bytes show the same hash */
        const uint64_t hash = fnv1a(out, size);
        printf("%-10s %10.3f %10.3f %9.3f %9.3f %8.2f %10.6f %8.2f%% %12.6f %12.6f %10.1f %8.2f %016llx%s\n", rname, mn, md,
               mn > 0 ? gpix / (mn * 1e-3) : 0.0, md > 0 ? gpix / (md * 1e-3) : 0.0, fast_ms > 0 ? mn / fast_ms : 0.0, rm,
               nb ? 100.0 * (double)same / (double)nb : 0.0, rg, rc, cpu_min, fast_cpu > 0 ? cpu_min / fast_cpu : 0.0,
               (unsigned long long)hash, unstable ? " unstable" : "");
        fflush(stdout);
    }
    free(out);
    free(cpu);
    free(ms);
    kiln_image_free(&top);
    kiln_image_free(&big);
    for (int i = 0; i < nsrc; i++) kiln_image_free(&src[i]);
    return 0;
}

int main(int argc, char **argv)
{
    const char *testdata = KILN_TESTDATA;
    uint32_t threads = 0, crop_n = 0;
    int sf = 0, gpu = 0, cpu = 1, reps = 7;
    uint32_t big_n = 0, stripe = 8;
    int with_exact = 0, both = 0, lanes_mask = 0;
    const char *variants = NULL, *formats = NULL;
    const char *quals = "fast,normal,high,max";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--testdata") && i + 1 < argc) testdata = argv[++i];
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--crop") && i + 1 < argc) crop_n = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--qualities") && i + 1 < argc) quals = argv[++i];
        else if (!strcmp(argv[i], "--sf")) sf = 1;
        else if (!strcmp(argv[i], "--gpu")) gpu = 1;
        else if (!strcmp(argv[i], "--no-cpu")) cpu = 0;
        else if (!strcmp(argv[i], "--gpu-size") && i + 1 < argc) big_n = (uint32_t)atoi(argv[++i]), gpu = 1;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--stripe") && i + 1 < argc) stripe = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--exact")) with_exact |= 1;
        else if (!strcmp(argv[i], "--old")) with_exact |= 2;
        else if (!strcmp(argv[i], "--seed")) with_exact |= 4;
        else if (!strcmp(argv[i], "--both")) both = 1;
        else if (!strcmp(argv[i], "--pipeline-stats")) setenv("KILN_VK_PIPELINE_STATS", "1", 1);
        else if (!strcmp(argv[i], "--variants") && i + 1 < argc) variants = argv[++i];
        else if (!strcmp(argv[i], "--formats") && i + 1 < argc) formats = argv[++i];
        else if (!strcmp(argv[i], "--no-rmsle")) setenv("BENCH_BC6H_NO_RMSLE", "1", 1);
        else if (!strcmp(argv[i], "--lanes") && i + 1 < argc) {
            char list[64];
            snprintf(list, sizeof list, "%s", argv[++i]);
            for (char *t = strtok(list, ","); t; t = strtok(NULL, ","))
                lanes_mask |= !strcmp(t, "4") ? 1 : !strcmp(t, "8") ? 2 : !strcmp(t, "16") ? 4 : 0;
        }
        else {
            fprintf(stderr, "usage: bench_bc6h [--testdata DIR] [--threads N] [--crop N] [--sf] [--gpu] [--no-cpu] "
                            "[--qualities fast,normal,high,max] [--gpu-size N [--reps R] [--stripe B] [--exact] [--old] [--seed] [--both] "
                            "[--lanes 4,8,16] [--formats uf,sf,...] [--no-rmsle]] [--pipeline-stats] [--variants \"NAME:KILN_X=V KILN_Y=W;...\"]\n");
            return 2;
        }
    }
    static const char *qname[4] = {"fast", "normal", "high", "max"};
    int qon[4];
    for (int q = 0; q < 4; q++) qon[q] = strstr(quals, qname[q]) != NULL;
    const kiln_format fmt = sf ? KILN_FORMAT_BC6H_SFLOAT : KILN_FORMAT_BC6H_UFLOAT;

    kiln_context_params cp;
    kiln_context_params_init(&cp);
    cp.threads = threads;
    cp.backend = KILN_BACKEND_CPU;
    kiln_context *ctx = NULL;
    if (kiln_context_create(&cp, &ctx) != KILN_OK) return 1;
    kiln_context *gctx = NULL;
    if (gpu) {
        kiln_context_params gp = cp;
        gp.backend = KILN_BACKEND_VULKAN;
        if (kiln_context_create(&gp, &gctx) != KILN_OK) {
            fprintf(stderr, "bench_bc6h: no Vulkan device; GPU rows skipped\n");
            gctx = NULL;
        }
    }
    if (big_n && variants) { /* --variants: one high row per variant, its KILN_* variables set for it */
        int rc = gctx ? 0 : 1;
        const int qhigh[4] = {0, 0, 1, 0};
        for (int f = 0; f < (both && !sf ? 2 : 1) && rc == 0; f++) {
            const kiln_format vf = f ? KILN_FORMAT_BC6H_SFLOAT : fmt;
            char list[2048];
            snprintf(list, sizeof list, "%s", variants);
            int first = 1;
            double fref[2] = {0.0, 0.0};
            for (char *save = NULL, *v = strtok_r(list, ";", &save); v && rc == 0; v = strtok_r(NULL, ";", &save)) {
                char *colon = strchr(v, ':');
                char *vars = colon ? colon + 1 : v;
                if (colon) *colon = 0;
                char names[8][64];
                int nv = 0;
                for (char *s2 = NULL, *kv = strtok_r(vars, " ", &s2); kv && nv < 8; kv = strtok_r(NULL, " ", &s2)) {
                    char *eq = strchr(kv, '=');
                    if (!eq || strncmp(kv, "KILN_", 5) != 0) continue;
                    *eq = 0;
                    snprintf(names[nv], sizeof names[nv], "%s", kv);
                    if (getenv(kv)) continue; /* the caller's value wins: not touched */
                    setenv(kv, eq + 1, 1);
                    nv++;
                }
                if (first && qon[0]) /* the fast row once, for "x fast" */
                    rc = gpu_big(ctx, gctx, testdata, vf, (const int[4]){1, 0, 0, 0}, big_n, reps < 1 ? 1 : reps, stripe, 0, 0, NULL, 1, fref);
                if (rc == 0)
                    rc = gpu_big(ctx, gctx, testdata, vf, qhigh, big_n, reps < 1 ? 1 : reps, stripe, 0, 0, v, first && !qon[0], fref);
                for (int i = 0; i < nv; i++) unsetenv(names[i]);
                first = 0;
            }
        }
        kiln_context_free(gctx);
        kiln_context_free(ctx);
        return rc;
    }
    if (big_n && formats) { /* --formats: one table per entry, in this order, in this process */
        char list[256];
        snprintf(list, sizeof list, "%s", formats);
        int rc = gctx ? 0 : 1;
        for (char *save = NULL, *t = strtok_r(list, ",", &save); t && rc == 0; t = strtok_r(NULL, ",", &save)) {
            if (strcmp(t, "uf") != 0 && strcmp(t, "sf") != 0) {
                fprintf(stderr, "bench_bc6h: --formats %s: a comma-separated list of uf and sf\n", formats);
                rc = 2;
                break;
            }
            double fref[2] = {0.0, 0.0};
            rc = gpu_big(ctx, gctx, testdata, t[0] == 's' ? KILN_FORMAT_BC6H_SFLOAT : KILN_FORMAT_BC6H_UFLOAT, qon, big_n,
                         reps < 1 ? 1 : reps, stripe, with_exact, lanes_mask, NULL, 1, fref);
        }
        kiln_context_free(gctx);
        kiln_context_free(ctx);
        return rc;
    }
    if (big_n) {
        double fref[2] = {0.0, 0.0}, fref_sf[2] = {0.0, 0.0};
        int rc = gctx ? gpu_big(ctx, gctx, testdata, fmt, qon, big_n, reps < 1 ? 1 : reps, stripe, with_exact, lanes_mask, NULL, 1, fref) : 1;
        if (rc == 0 && both && !sf)
            rc = gpu_big(ctx, gctx, testdata, KILN_FORMAT_BC6H_SFLOAT, qon, big_n, reps < 1 ? 1 : reps, stripe, with_exact, lanes_mask,
                         NULL, 1, fref_sf);
        kiln_context_free(gctx);
        kiln_context_free(ctx);
        return rc;
    }
    printf("# bench_bc6h: %s, %u CPU threads, crop %u\n", sf ? "BC6H_SFLOAT" : "BC6H_UFLOAT",
           kiln_context_threads(ctx), crop_n);
    printf("%-44s %-18s %10s %9s %8s %8s %8s %9s %9s\n", "image", "encoder", "RMSE", "RMSLE", "PSNR-2", "PSNR0", "PSNR+2",
           "Mpix/s", "Mpix/cpu-s");
    row rows[MAXROWS];
    int nrows = 0;
    for (int ii = 0; ii < NIMG; ii++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", testdata, k_images[ii]);
        kiln_image img;
        if (kiln_image_load(ctx, path, &img) != KILN_OK) {
            fprintf(stderr, "bench_bc6h: %s\n", kiln_last_error(ctx));
            continue;
        }
        if (img.type != KILN_PIXEL_F32 || !crop(ctx, &img, crop_n)) {
            kiln_image_free(&img);
            continue;
        }
        const char *name = strrchr(k_images[ii], '/') + 1;
        size_t size = kiln_format_image_size(fmt, img.width, img.height);
        uint8_t *out = malloc(size);
        if (!out) return 1;
        const double mp = (double)img.width * img.height * 1e-6;
        for (int q = 0; q < 4 && cpu; q++) {
            if (!qon[q]) continue;
            kiln_encode_params ep;
            kiln_encode_params_init(&ep, fmt, (kiln_quality)q);
            double t0 = now_s(), c0 = cpu_s();
            kiln_status st = kiln_encode_image(ctx, &img, &ep, out, size);
            double t = now_s() - t0, ct = cpu_s() - c0;
            char rn[32];
            snprintf(rn, sizeof rn, "cpu-%s", qname[q]);
            if (st != KILN_OK) printf("%s\t%s\terror: %s\n", name, rn, kiln_last_error(ctx));
            else report(ctx, name, rn, &img, fmt, out, size, mp / t, mp / ct, find_row(rows, &nrows, rn));
        }
        for (int sq = 0; sq < 2 && cpu && !sf; sq++) {
            const uint32_t bx = (img.width + 3) / 4, by = (img.height + 3) / 4;
            double t0 = now_s(), c0 = cpu_s();
            for (uint32_t y = 0; y < by; y++)
                for (uint32_t x = 0; x < bx; x++) {
                    float blk[64];
                    for (uint32_t t = 0; t < 16; t++) {
                        uint32_t sx = x * 4 + t % 4, sy = y * 4 + t / 4;
                        if (sx >= img.width) sx = img.width - 1;
                        if (sy >= img.height) sy = img.height - 1;
                        memcpy(blk + t * 4, (const float *)img.pixels + ((size_t)sy * img.width + sx) * 4, 16);
                    }
                    kiln__enc_bc6h_seed(blk, sq, out + ((size_t)y * bx + x) * 16);
                }
            double t = now_s() - t0, ct = cpu_s() - c0;
            const char *rn = sq ? "seed-cpu-quality" : "seed-cpu-fast";
            report(ctx, name, rn, &img, fmt, out, size, mp / t, mp / ct, find_row(rows, &nrows, rn));
        }
        for (int strat = 0; strat < 2 && gctx; strat++)
            for (int q = 0; q < 4; q++) {
                if (!qon[q]) continue;
                kiln_encode_params ep;
                kiln_encode_params_init(&ep, fmt, (kiln_quality)q);
                ep.gpu_strategy = strat;
                char rn[32];
                snprintf(rn, sizeof rn, "gpu-%s-%s", strat ? "seed" : "kiln", qname[q]);
                kiln_status st = kiln_encode_image(gctx, &img, &ep, out, size);
                if (st == KILN_ERR_UNSUPPORTED) {
                    printf("%-44s %-18s n/a (%s)\n", name, rn, kiln_last_error(gctx));
                    continue;
                }
                if (st != KILN_OK) {
                    printf("%-44s %-18s error: %s\n", name, rn, kiln_last_error(gctx));
                    continue;
                }
                double best_ms = kiln_last_gpu_ms(gctx);
                for (int rep = 0; rep < 4; rep++) { /* kernel time: best of five */
                    if (kiln_encode_image(gctx, &img, &ep, out, size) != KILN_OK) break;
                    double ms = kiln_last_gpu_ms(gctx);
                    if (ms > 0.0 && (best_ms <= 0.0 || ms < best_ms)) best_ms = ms;
                }
                double gmp = best_ms > 0.0 ? mp / (best_ms * 1e-3) : 0.0;
                report(ctx, name, rn, &img, fmt, out, size, gmp, gmp, find_row(rows, &nrows, rn));
            }
        free(out);
        kiln_image_free(&img);
    }
    printf("\n# mean RMSLE over the images\n");
    double seedq = 0.0, kmax = 0.0, gkmax = 0.0;
    for (int i = 0; i < nrows; i++) {
        double m = rows[i].count ? rows[i].rmsle_sum / rows[i].count : 0.0;
        printf("%-18s %9.5f (%d images)\n", rows[i].name, m, rows[i].count);
        if (!strcmp(rows[i].name, "seed-cpu-quality")) seedq = m;
        if (!strcmp(rows[i].name, "gpu-seed-max") || !strcmp(rows[i].name, "gpu-seed-high")) seedq = seedq > 0.0 ? seedq : m;
        if (!strcmp(rows[i].name, "cpu-max")) kmax = m;
        if (!strcmp(rows[i].name, "gpu-kiln-max")) gkmax = m;
    }
    if (seedq > 0.0 && kmax > 0.0)
        printf("# target: kiln cpu-max RMSLE %.5f vs seed quality %.5f: %.1f%% lower (issue: >= 15%%)\n", kmax, seedq,
               100.0 * (1.0 - kmax / seedq));
    if (seedq > 0.0 && gkmax > 0.0)
        printf("# target: kiln gpu-max RMSLE %.5f vs seed quality %.5f: %.1f%% lower\n", gkmax, seedq,
               100.0 * (1.0 - gkmax / seedq));
    kiln_context_free(gctx);
    kiln_context_free(ctx);
    return 0;
}

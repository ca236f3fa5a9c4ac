/* gpu_encode.c - speed and quality of kiln's GPU encoders (any block format: BC, ETC, EAC, ...) next
 * to the CPU encoders, for a list of formats x qualities x GPU strategies.
 *
 * usage: gpu_encode [--image FILE | --size N] [--formats a,b,...] [--qualities fast,normal,high,max]
 *                   [--strategies kiln,seed] [--runs N] [--cpu-runs N] [--batch N] [--batch-size N]
 *                   [--device N] [--threads N] [--tmp DIR] [--no-cpu] [--pipeline] [--write-batch DIR] [--dither]
 *
 * Source: --image FILE (any format kiln loads), else a synthetic N x N RGBA8 texture (default 4096:
 * gradients, noise, edges, varying alpha), deterministic.
 * Per format x quality x strategy it reports
 *   - kernel: Vulkan timestamps around the encode dispatches (kiln_last_gpu_ms), min and median of
 *     --runs (default 10) after one warm-up encode, and the rate in Mpixel/s (median);
 *   - wall: kiln_encode_image on a VULKAN context (upload, kernel, download, any CPU fallback blocks),
 *     median; f2f: wall plus writing the blocks to a file in --tmp (the source is already in memory:
 *     loading is listed once, separately);
 *   - batch: --batch images (default 0 = off) of --batch-size^2 (default 512) cut from the source,
 *     encoded one after the other: total kernel and wall time, Mpixel/s;
 *   - PSNR of the GPU result against the source over the format's channels (RGB for BC1a / ETC2 A1;
 *     SNORM decoded values are mapped back to [0, 1]), through kiln's CPU decoder;
 *   - the CPU encoder at the same settings (all cores unless --threads): median wall of --cpu-runs
 *     (default 3) and its PSNR; "same" when the GPU bytes equal the CPU bytes.
 * --pipeline adds a second table (owner gpuio): file-to-file time (encode + writing every output file
 * to --tmp, source in memory; median of --runs, after a warm-up) of the --size image and of the
 * --batch images, per format x quality (kiln strategy), for: "sync" (the synchronous GPU path,
 * KILN_GPU_SYNC=1, one image after another), "pipelined" (kiln_encode_image one image after another:
 * the block-row batches of one image overlap), "batch" (kiln_encode_batch: images overlap too),
 * "both" (kiln_encode_batch with KILN_ENCODE_BATCH_SPLIT: CPU threads and the GPU share the images)
 * and "cpu" (kiln_encode_batch on the CPU context); and one row "all" that encodes every format of
 * --formats at one quality from one upload per image (kiln_encode_batch with all formats) next to the
 * sum of the per-format batch rows. --write-batch DIR writes the batch images as DIR/img_NNNN.png (for
 * timing the CLI: kiln compress DIR/img_0*.png -f bc1 -o OUT/ --backend vulkan|both|cpu) and exits.
 * Rows the GPU cannot encode print "n/a" with the reason. Prints a markdown table (stdout) headed by
 * the device, driver, date and settings. Runs from a prebuilt binary: the SPIR-V is embedded. */
#include "core/internal.h"
#include "gpu/gpu.h"

#include "gpu_bench_util.h" /* timing, lists, crops, PSNR, file writes (shared with gpu_batch_rows.c) */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Deterministic texture: smooth gradients, a band of noise, hard edges, flat patches, varying alpha. */
static int synthetic(uint32_t n, kiln_image *img)
{
    if (kiln_image_alloc(NULL, img, n, n, KILN_PIXEL_U8) != KILN_OK) return -1;
    img->channels = 4;
    uint8_t *p = img->pixels;
    for (uint32_t y = 0; y < n; y++)
        for (uint32_t x = 0; x < n; x++) {
            uint8_t *t = p + ((size_t)y * n + x) * 4;
            float fx = (float)x / (float)n, fy = (float)y / (float)n;
            uint32_t h = hash32(y * 65537u + x);
            float r = 127.5f + 127.5f * sinf(fx * 25.0f + fy * 7.0f);
            float g = 255.0f * fy;
            float b = 127.5f + 127.5f * cosf(fy * 31.0f - fx * 11.0f);
            uint32_t cell = ((x / 64) + (y / 64)) % 4;
            if (cell == 1) { r += (float)(h & 63) - 32.0f; g += (float)(h >> 8 & 63) - 32.0f; }
            if (cell == 2) { r = (x / 16 + y / 16) % 2 ? 230.0f : 20.0f; b = 255.0f - r; }
            if (cell == 3 && (x / 32 + y / 32) % 3 == 0) { r = 90.0f; g = 160.0f; b = 40.0f; }
            float a = (x / 128 + y / 128) % 5 == 0 ? ((h >> 16) & 1 ? 0.0f : 255.0f) : 255.0f * (0.5f + 0.5f * sinf(fx * 9.0f));
            float v[4] = {r, g, b, a};
            for (int c = 0; c < 4; c++) t[c] = (uint8_t)(v[c] < 0 ? 0 : v[c] > 255 ? 255 : v[c] + 0.5f);
        }
    return 0;
}

/* ---------------------------------------------------------------- --pipeline (owner gpuio) */

enum { PM_SYNC, PM_PIPELINED, PM_BATCH, PM_BOTH, PM_CPU, PM_COUNT };
static const char *const pm_name[PM_COUNT] = {"sync", "pipelined", "batch", "both", "cpu"};

/* One timed file-to-file run of n images x nf formats in mode m: encode, then write every output
 * file. Returns ms (< 0 on failure); out[i * nf + f] keeps the textures (caller frees). */
static double pipeline_run(kiln_context *gpu, kiln_context *both, kiln_context *cpu, int m, const kiln_image *imgs,
                           uint32_t n, const kiln_encode_params *ep, uint32_t nf, kiln_texture *out, const char *tmpdir)
{
    double t0 = now_ms();
    kiln_status st = KILN_OK;
    if (m == PM_SYNC || m == PM_PIPELINED) {
        if (m == PM_SYNC) setenv("KILN_GPU_SYNC", "1", 1);
        for (uint32_t i = 0; i < n && st == KILN_OK; i++)
            for (uint32_t f = 0; f < nf && st == KILN_OK; f++) st = kiln_encode(gpu, &imgs[i], &ep[f], &out[i * nf + f]);
        unsetenv("KILN_GPU_SYNC");
    } else {
        kiln_context *ctx = m == PM_CPU ? cpu : m == PM_BOTH ? both : gpu;
        st = kiln_encode_batch(ctx, imgs, n, ep, nf, m == PM_BOTH ? KILN_ENCODE_BATCH_SPLIT : 0, out);
    }
    if (st != KILN_OK) {
        fprintf(stderr, "gpu_encode: %s: %s\n", pm_name[m],
                kiln_last_error(m == PM_CPU ? cpu : m == PM_BOTH ? both : gpu));
        return -1.0;
    }
    char path[1024];
    for (uint32_t t = 0; t < n * nf; t++) {
        size_t size = 0;
        const uint8_t *d = kiln_texture_image(&out[t], 0, 0, 0, &size);
        snprintf(path, sizeof path, "%s/kiln_pipe_%d_%u.bin", tmpdir, (int)getpid(), t);
        write_file(path, d, size);
    }
    double ms = now_ms() - t0;
    for (uint32_t t = 0; t < n * nf; t++) {
        snprintf(path, sizeof path, "%s/kiln_pipe_%d_%u.bin", tmpdir, (int)getpid(), t);
        remove(path);
    }
    return ms;
}

/* Times every mode (median of runs) into ms[PM_COUNT]; *same: every mode gave the bytes of "cpu". */
static int pipeline_modes(kiln_context *gpu, kiln_context *both, kiln_context *cpu, const kiln_image *imgs, uint32_t n,
                          const kiln_encode_params *ep, uint32_t nf, int runs, const char *tmpdir, double *ms, int *same)
{
    kiln_texture *ref = calloc((size_t)n * nf, sizeof *ref), *out = calloc((size_t)n * nf, sizeof *out);
    double *t = malloc(sizeof *t * (size_t)runs);
    if (!ref || !out || !t) return -1;
    *same = 1;
    if (pipeline_run(gpu, both, cpu, PM_CPU, imgs, n, ep, nf, ref, tmpdir) < 0) return -1;
    for (int m = 0; m < PM_COUNT; m++) {
        ms[m] = -1.0;
        int ok = 1;
        for (int r = -1; r < runs && ok; r++) { /* r = -1: warm-up, also the byte check */
            double v = pipeline_run(gpu, both, cpu, m, imgs, n, ep, nf, out, tmpdir);
            ok = v >= 0;
            if (ok && r >= 0) t[r] = v;
            for (uint32_t k = 0; ok && k < n * nf; k++) {
                size_t a = 0, b = 0;
                const uint8_t *pa = kiln_texture_image(&out[k], 0, 0, 0, &a), *pb = kiln_texture_image(&ref[k], 0, 0, 0, &b);
                if (r < 0 && (a != b || memcmp(pa, pb, a))) *same = 0;
            }
            for (uint32_t k = 0; ok && k < n * nf; k++) kiln_texture_free(&out[k]);
        }
        if (ok) ms[m] = median(t, runs);
    }
    for (uint32_t k = 0; k < n * nf; k++) kiln_texture_free(&ref[k]);
    free(ref);
    free(out);
    free(t);
    return 0;
}

static void pipeline_row(const char *what, const char *fmt, const char *q, double mpix, const double *ms, int same)
{
    printf("| %s | %s | %s |", what, fmt, q);
    double best_gpu = -1.0;
    for (int m = 0; m < PM_COUNT; m++) {
        if (ms[m] < 0) printf(" n/a |");
        else printf(" %.1f |", ms[m]);
        if (m != PM_CPU && ms[m] >= 0 && (best_gpu < 0 || ms[m] < best_gpu)) best_gpu = ms[m];
    }
    printf(" %.0f | %.2fx | %s |\n", best_gpu > 0 ? mpix / (best_gpu / 1e3) : 0.0,
           best_gpu > 0 && ms[PM_CPU] > 0 ? ms[PM_CPU] / best_gpu : 0.0, same ? "same" : "DIFFER");
    fflush(stdout);
}

static int pipeline_table(kiln_context *gpu, kiln_context *cpu, int device, uint32_t threads, const kiln_image *src,
                          const kiln_image *bimg, int batch, const char *formats, const char *qualities, int runs,
                          const char *tmpdir)
{
    kiln_context_params p;
    kiln_context_params_init(&p);
    p.backend = KILN_BACKEND_VULKAN;
    p.device_index = device;
    p.threads = threads;
    kiln_context *both = NULL;
    if (kiln_context_create(&p, &both) != KILN_OK) return -1;
    printf("\n### File to file: synchronous vs pipelined vs batch vs both (ms, median of %d; encode + write every output)\n\n", runs);
    printf("| images | format | quality | sync ms | pipelined ms | batch ms | both ms | cpu ms | best GPU Mpix/s | cpu / best | bytes |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    char fname[64], qname[32], what[64];
    kiln_encode_params all[8];
    uint32_t nall = 0;
    for (int qi = 0; list_item(qualities, qi, qname, sizeof qname); qi++) {
        kiln_quality q = parse_quality(qname);
        if ((int)q < 0) continue;
        double sum_batch[PM_COUNT] = {0};
        nall = 0;
        for (int fi_ = 0; list_item(formats, fi_, fname, sizeof fname); fi_++) {
            kiln_format f = kiln_format_from_name(fname);
            const kiln_format_info *fi = kiln_format_get_info(f);
            if (!fi || !(fi->flags & KILN_FF_COMPRESSED)) continue;
            kiln_encode_params ep;
            kiln_encode_params_init(&ep, f, q);
            if (nall < 8) all[nall++] = ep;
            double ms[PM_COUNT];
            int same = 0;
            snprintf(what, sizeof what, "1 x %ux%u", src->width, src->height);
            if (pipeline_modes(gpu, both, cpu, src, 1, &ep, 1, runs, tmpdir, ms, &same)) return -1;
            pipeline_row(what, fi->name, qname, (double)src->width * src->height / 1e6, ms, same);
            if (batch > 0) {
                snprintf(what, sizeof what, "%d x %ux%u", batch, bimg[0].width, bimg[0].height);
                if (pipeline_modes(gpu, both, cpu, bimg, (uint32_t)batch, &ep, 1, runs, tmpdir, ms, &same)) return -1;
                pipeline_row(what, fi->name, qname, (double)batch * bimg[0].width * bimg[0].height / 1e6, ms, same);
                for (int m = 0; m < PM_COUNT; m++) sum_batch[m] += ms[m] < 0 || sum_batch[m] < 0 ? -1e30 : ms[m];
            }
        }
        if (batch > 0 && nall > 1) {
            double ms[PM_COUNT];
            int same = 0;
            snprintf(what, sizeof what, "%d x %ux%u", batch, bimg[0].width, bimg[0].height);
            if (pipeline_modes(gpu, both, cpu, bimg, (uint32_t)batch, all, nall, runs, tmpdir, ms, &same)) return -1;
            pipeline_row(what, "all (one call)", qname, (double)nall * batch * bimg[0].width * bimg[0].height / 1e6, ms, same);
            for (int m = 0; m < PM_COUNT; m++) if (sum_batch[m] < 0) sum_batch[m] = -1.0;
            pipeline_row(what, "sum of the rows above", qname, (double)nall * batch * bimg[0].width * bimg[0].height / 1e6,
                         sum_batch, 1);
        }
    }
    kiln_context_free(both);
    return 0;
}

int main(int argc, char **argv)
{
    uint32_t size = 4096, batch_size = 512;
    int runs = 10, cpu_runs = 3, batch = 0, device = -1, threads = 0, do_cpu = 1;
    const char *formats = "bc1,bc3,bc4,bc5", *qualities = "fast,normal,high,max", *strategies = "kiln,seed";
    const char *image = NULL, *tmpdir = NULL, *write_batch = NULL;
    int pipeline = 0, dither = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--size") && v) size = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--image") && v) image = argv[++i];
        else if (!strcmp(a, "--formats") && v) formats = argv[++i];
        else if (!strcmp(a, "--qualities") && v) qualities = argv[++i];
        else if (!strcmp(a, "--strategies") && v) strategies = argv[++i];
        else if (!strcmp(a, "--runs") && v) runs = atoi(argv[++i]);
        else if (!strcmp(a, "--cpu-runs") && v) cpu_runs = atoi(argv[++i]);
        else if (!strcmp(a, "--batch") && v) batch = atoi(argv[++i]);
        else if (!strcmp(a, "--batch-size") && v) batch_size = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--device") && v) device = atoi(argv[++i]);
        else if (!strcmp(a, "--threads") && v) threads = atoi(argv[++i]);
        else if (!strcmp(a, "--tmp") && v) tmpdir = argv[++i];
        else if (!strcmp(a, "--no-cpu")) do_cpu = 0;
        else if (!strcmp(a, "--pipeline")) pipeline = 1;
        else if (!strcmp(a, "--dither")) dither = 1; /* params->dither on both sides (helper gpudither) */
        else if (!strcmp(a, "--write-batch") && v) write_batch = argv[++i];
        else {
            int help = !strcmp(a, "--help") || !strcmp(a, "-h");
            fprintf(stderr, "usage: %s [--image FILE | --size N] [--formats a,b] [--qualities fast,normal,high,max] "
                            "[--strategies kiln,seed] [--runs N] [--cpu-runs N] [--batch N] [--batch-size N] "
                            "[--device N] [--threads N] [--tmp DIR] [--no-cpu] [--pipeline] [--write-batch DIR] [--dither]\n", argv[0]);
            return help ? 0 : 2;
        }
    }
    if (size == 0 || size > 16384 || runs < 1 || runs > 1000 || cpu_runs < 1 || batch < 0 || batch > 4096 ||
        batch_size == 0 || batch_size > 8192 || threads < 0) {
        fprintf(stderr, "gpu_encode: bad settings\n");
        return 2;
    }
    if (!tmpdir) tmpdir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

    kiln_context *gpu = NULL, *cpu = NULL;
    if (!open_contexts("gpu_encode", device, threads, &gpu, &cpu)) return 1;

    kiln_image src;
    double load_ms = 0.0;
    if (image) {
        double t0 = now_ms();
        if (kiln_image_load(cpu, image, &src) != KILN_OK) {
            fprintf(stderr, "gpu_encode: %s\n", kiln_last_error(cpu));
            return 3;
        }
        load_ms = now_ms() - t0;
    } else if (synthetic(size, &src) != 0) {
        fprintf(stderr, "gpu_encode: out of memory\n");
        return 1;
    }
    kiln_image *bimg = NULL;
    if (batch > 0) {
        bimg = calloc((size_t)batch, sizeof *bimg);
        if (!bimg) return 1;
        for (int k = 0; k < batch; k++)
            if (crop(&src, (uint32_t)k * 251u * 4u, (uint32_t)k * 137u * 4u, batch_size, batch_size, &bimg[k]) != 0) return 1;
    }

    if (write_batch) {
        char path[1024];
        for (int k = 0; k < batch; k++) {
            snprintf(path, sizeof path, "%s/img_%04d.png", write_batch, k);
            if (kiln_image_save(cpu, &bimg[k], path, 0) != KILN_OK) {
                fprintf(stderr, "gpu_encode: %s\n", kiln_last_error(cpu));
                return 3;
            }
        }
        printf("wrote %d images of %u^2 to %s\n", batch, batch_size, write_batch);
        return 0;
    }
    const kiln_gpu_info *info = kiln_context_gpu(gpu);
    if (!info) {
        fprintf(stderr, "gpu_encode: %s\n", kiln_last_error(gpu)[0] ? kiln_last_error(gpu) : "no Vulkan device");
        return 5;
    }
    time_t now = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    char host[128] = "?";
    gethostname(host, sizeof host - 1);
    printf("## kiln GPU encode bench\n\n");
    printf("- date: %s, host: %s, CPU threads: %u\n", date, host, kiln_context_threads(cpu));
    printf("- source: %s (%ux%u)%s\n", image ? image : "synthetic", src.width, src.height, image ? "" : " RGBA8");
    if (image) printf("- source load: %.1f ms (once; not in f2f)\n", load_ms);
    printf("- runs: %d (kernel, wall), CPU runs: %d, batch: %d x %u^2\n", runs, cpu_runs, batch, batch_size);
    printf("- device: %s (Vulkan %u.%u.%u, subgroup %u), driver: %s\n", info->name, info->api_version >> 22,
           (info->api_version >> 12) & 1023u, info->api_version & 4095u, info->subgroup_size, info->driver);
    {
        const char *bc4max = getenv("KILN_GPU_BC4_MAX"); /* BC4/BC5/BC3-alpha max: pool (the only design left) */
        const char *bc4wg = getenv("KILN_GPU_BC4_POOL_WG"), *bc4sp = getenv("KILN_GPU_BC4_SPLIT");
        printf("- BC4-style max design: KILN_GPU_BC4_MAX=%s, KILN_GPU_BC4_POOL_WG=%s, KILN_GPU_BC4_SPLIT=%s\n",
               bc4max && bc4max[0] ? bc4max : "default", bc4wg && bc4wg[0] ? bc4wg : "default",
               bc4sp && bc4sp[0] ? bc4sp : "default");
        const char *eacp = getenv("KILN_GPU_EAC_PRUNE"); /* EAC kiln design pruning (enc_eac.comp PRUNE) */
        printf("- EAC prune variant: %s\n", eacp && eacp[0] >= '0' && eacp[0] <= '3' && !eacp[1] ? eacp : "2 (default)");
        /* BC1/BC3 high/max cluster fit (helper bc1split): design, design-3 code variant, workgroup */
        const char *cfd = getenv("KILN_GPU_CF_DESIGN"), *cfo = getenv("KILN_GPU_CF_OPT"), *cfl = getenv("KILN_GPU_CF_LOCAL");
        printf("- BC1 cluster fit: design %s, KILN_GPU_CF_OPT %s, KILN_GPU_CF_LOCAL %s\n", cfd && cfd[0] ? cfd : "default",
               cfo && cfo[0] ? cfo : "default", cfl && cfl[0] ? cfl : "default");
    }
    printf("- command:");
    for (int i = 0; i < argc; i++) printf(" %s", argv[i]);
    printf("\n\n");

    printf("| format | quality | strategy | kernel min ms | kernel med ms | kernel Mpix/s | wall med ms | f2f med ms | "
           "wall Mpix/s | batch kernel ms | batch wall ms | batch Mpix/s | PSNR GPU | CPU ms | CPU PSNR | bytes |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    fflush(stdout);
    const double mpix = (double)src.width * src.height / 1e6;
    const double bmpix = (double)batch * batch_size * batch_size / 1e6;
    char fname[64], qname[32], sname[32];
    for (int fi_ = 0; list_item(formats, fi_, fname, sizeof fname); fi_++) {
        kiln_format f = kiln_format_from_name(fname);
        const kiln_format_info *fi = kiln_format_get_info(f);
        if (!fi || !(fi->flags & KILN_FF_COMPRESSED)) {
            fprintf(stderr, "gpu_encode: %s is not a block format\n", fname);
            continue;
        }
        size_t bytes = kiln_format_image_size(f, src.width, src.height);
        uint8_t *g = malloc(bytes), *c = malloc(bytes);
        if (!g || !c) return 1;
        for (int qi = 0; list_item(qualities, qi, qname, sizeof qname); qi++) {
            kiln_quality q = parse_quality(qname);
            if ((int)q < 0) {
                fprintf(stderr, "gpu_encode: unknown quality %s\n", qname);
                continue;
            }
            /* CPU once per format x quality */
            double cpu_ms = NAN, cpu_psnr = NAN;
            int have_cpu = 0;
            kiln_encode_params ep;
            kiln_encode_params_init(&ep, f, q);
            ep.dither = dither;
            if (do_cpu) {
                double *ct = malloc(sizeof *ct * (size_t)cpu_runs);
                if (!ct) return 1;
                int ok = 1;
                for (int r = 0; r < cpu_runs && ok; r++) {
                    double t0 = now_ms();
                    ok = kiln_encode_image(cpu, &src, &ep, c, bytes) == KILN_OK;
                    ct[r] = now_ms() - t0;
                }
                if (ok) {
                    cpu_ms = median(ct, cpu_runs);
                    cpu_psnr = psnr_blocks(cpu, &src, f, c);
                    have_cpu = 1;
                }
                free(ct);
            }
            for (int si = 0; list_item(strategies, si, sname, sizeof sname); si++) {
                ep.gpu_strategy = !strcmp(sname, "seed") ? 1 : 0;
                kiln_status st = kiln_encode_image(gpu, &src, &ep, g, bytes); /* warm-up: pipelines */
                if (st != KILN_OK) {
                    printf("| %s | %s | %s | n/a: %s |||||||||||||\n", fi->name, qname, sname, kiln_last_error(gpu));
                    fflush(stdout);
                    continue;
                }
                double *kt = malloc(sizeof *kt * (size_t)runs), *wt = malloc(sizeof *wt * (size_t)runs),
                       *ft = malloc(sizeof *ft * (size_t)runs);
                if (!kt || !wt || !ft) return 1;
                char path[512];
                snprintf(path, sizeof path, "%s/kiln_gpu_encode_%d.bin", tmpdir, (int)getpid());
                for (int r = 0; r < runs && st == KILN_OK; r++) {
                    double t0 = now_ms();
                    st = kiln_encode_image(gpu, &src, &ep, g, bytes);
                    double t1 = now_ms();
                    kt[r] = kiln_last_gpu_ms(gpu);
                    wt[r] = t1 - t0;
                    write_file(path, g, bytes);
                    ft[r] = now_ms() - t0;
                }
                remove(path);
                double kmin = minimum(kt, runs), kmed = median(kt, runs), wmed = median(wt, runs), fmed = median(ft, runs);
                double bk = 0.0, bw = 0.0;
                if (batch > 0) {
                    size_t bb = kiln_format_image_size(f, batch_size, batch_size);
                    uint8_t *bout = malloc(bb);
                    if (!bout) return 1;
                    double t0 = now_ms();
                    for (int k = 0; k < batch && st == KILN_OK; k++) {
                        st = kiln_encode_image(gpu, &bimg[k], &ep, bout, bb);
                        bk += kiln_last_gpu_ms(gpu);
                    }
                    bw = now_ms() - t0;
                    free(bout);
                }
                double gp = psnr_blocks(cpu, &src, f, g);
                int same = have_cpu && memcmp(g, c, bytes) == 0;
                if (have_cpu && !same && getenv("KILN_BENCH_DIFF")) { /* debugging: the first differing blocks */
                    size_t bsz = kiln_format_image_size(f, 4, 4), nd = 0;
                    for (size_t o = 0; o < bytes && nd < 8; o += bsz)
                        if (memcmp(g + o, c + o, bsz) != 0) printf("block %zu differs: GPU %08x%08x CPU %08x%08x\n", o / bsz, ((const uint32_t *)(g + o))[0],
                                   ((const uint32_t *)(g + o))[1], ((const uint32_t *)(c + o))[0], ((const uint32_t *)(c + o))[1]), nd++;
                }
                char cpu_col[64] = "-", cpsnr_col[32] = "-", batch_cols[96] = "- | - | -";
                if (have_cpu) {
                    snprintf(cpu_col, sizeof cpu_col, "%.1f", cpu_ms);
                    snprintf(cpsnr_col, sizeof cpsnr_col, "%.3f", cpu_psnr);
                }
                if (batch > 0)
                    snprintf(batch_cols, sizeof batch_cols, "%.2f | %.1f | %.0f", bk, bw, bmpix / (bk / 1e3));
                printf("| %s | %s | %s | %.3f | %.3f | %.0f | %.1f | %.1f | %.0f | %s | %.3f | %s | %s | %s |\n", fi->name, qname, sname,
                       kmin, kmed, mpix / (kmed / 1e3), wmed, fmed, mpix / (wmed / 1e3), batch_cols, gp, cpu_col, cpsnr_col,
                       same ? "same" : have_cpu ? "differ" : "-");
                fflush(stdout);
                free(kt);
                free(wt);
                free(ft);
                if (st != KILN_OK) fprintf(stderr, "gpu_encode: %s: %s\n", fi->name, kiln_last_error(gpu));
            }
        }
        free(g);
        free(c);
    }
    if (pipeline && pipeline_table(gpu, cpu, device, (uint32_t)threads, &src, bimg, batch, formats, qualities, runs, tmpdir))
        return 1;
    for (int k = 0; k < batch; k++) kiln_image_free(&bimg[k]);
    free(bimg);
    kiln_image_free(&src);
    kiln_context_free(gpu);
    kiln_context_free(cpu);
    return 0;
}

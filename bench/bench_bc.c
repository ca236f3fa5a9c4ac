/* bench_bc.c - quality and speed of kiln's BC1/BC3/BC4/BC5 CPU encoders against the peers Debian
 * ships: stb_dxt (normal and high-quality modes) and libsquish (range fit, cluster fit; through the
 * C shim of tests/interop when libsquish-dev is installed). Every output is decoded by kiln's own
 * decoder (D3D10 reference rounding) and compared with the source.
 *
 * usage: bench_bc [--testdata DIR] [--formats bc1,bc3,bc4,bc5] [--min-time S] [--quick] [--no-peers]
 *                 [--kiln-modes fast,normal,high,max,fast+dither,high+dither,high+black,max+black]
 *        bench_bc --psnr FILE.dds|.ktx2 REF.png [r|rg|rgb|rgba]
 *        bench_bc --red-to-grey SRC.png DST.png | --size IMAGE
 * Prints one tab-separated line per (format, tool, mode):
 *   ROW <format> <tool> <mode> <psnr image 1> ... <psnr image n> <mean psnr> <Mpix/s 1 thread> <Mpix/s all>
 * preceded by "IMAGES <format> <name 1> ... <name n>". bench/run_bench.sh turns this into tables and a
 * plot. Single-thread speed is pixels / CPU time of the encoding thread (robust on a shared machine);
 * all-thread speed is pixels / wall time with one worker per online CPU; each is the fastest of at least
 * three runs (and of as many as fit in --min-time seconds, default 0.3).
 * --psnr decodes a texture with kiln and prints the PSNR against a reference image (used by
 * run_bench.sh for command-line peers such as nvcompress).
 */
#include "codec/codec.h"
#include "core/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#endif
#define STB_DXT_STATIC
#define STB_DXT_IMPLEMENTATION
#include <stb/stb_dxt.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#ifdef KILN_HAVE_SQUISH
#include "squish_shim.h"
#endif

#ifndef KILN_TESTDATA
#define KILN_TESTDATA "../shared/testdata"
#endif

/* ---------------------------------------------------------------- image sets */

/* The BC1 reference set: seven colour textures and one normal map (all 8-bit). */
static const char *k_colour_set[] = {
    "ldr/stk_generic_rock_a_512.png",        "ldr/stktex_generic_WoodB_1024.png",
    "ldr/stk_generic_grassB_1024.png",       "ldr/Sara_Head_Diff_256_rgba.png",
    "ldr/city_fern_512_rgba.png",            "ldr/desktopbase_softwaves_crop_1000x600.png",
    "ldr/stktex_directionSign_a_256_rgba.png", "normal/stk_generic_rock_a_Normal_512_rgba.png",
};
/* BC4: the two grey maps plus the red channel of the colour set. */
static const char *k_grey_set[] = {
    "grey/stk_displace_512_grey.png", "grey/stk_generic_rock_a_gloss_R_512_grey.png",
};
/* BC5: normal maps (R, G). */
static const char *k_normal_set[] = {
    "normal/stk_generic_rock_a_Normal_512_rgba.png", "normal/stk_solarPanel_a_Normal_1024.png",
    "normal/hd_palmTreeBark_a_Normal_256x1024_rgba.png",
};
/* BC3: textures with real alpha. */
static const char *k_alpha_set[] = {
    "ldr/Sara_Head_Diff_256_rgba.png", "ldr/city_fern_512_rgba.png", "ldr/stktex_directionSign_a_256_rgba.png",
    "ldr/stkflag_TCPLogo_a_1024x512_rgba.png",
};

#define MAX_IMAGES 16

typedef struct bench_set {
    const char *format_name;
    kiln_format format;
    int n;
    const char *names[MAX_IMAGES];
    kiln_image img[MAX_IMAGES];
    int channel_mask; /* channels compared: bit c */
} bench_set;

/* ---------------------------------------------------------------- timing */

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---------------------------------------------------------------- encoders under test */

typedef enum tool_kind { TOOL_KILN, TOOL_STB, TOOL_SQUISH } tool_kind;
#define KILN_BENCH_DITHER 0x100 /* kiln rows: quality | this = with --dither */
#define KILN_BENCH_BLACK 0x200  /* kiln rows: quality | this = with bc1_black (BC1 only) */

typedef struct tool {
    tool_kind kind;
    const char *name, *mode;
    int param; /* kiln: quality; stb: mode flags; squish: fit */
} tool;

typedef struct peer_job {
    const tool *t;
    const kiln_image *img;
    kiln_format format;
    uint8_t *dst;
    uint32_t bx;
} peer_job;

static void gather(const kiln_image *img, uint32_t bx, uint32_t by, uint8_t rgba[64])
{
    const uint8_t *px = img->pixels;
    for (uint32_t y = 0; y < 4; y++)
        for (uint32_t x = 0; x < 4; x++) {
            uint32_t sx = bx * 4 + x, sy = by * 4 + y;
            if (sx >= img->width) sx = img->width - 1;
            if (sy >= img->height) sy = img->height - 1;
            memcpy(rgba + (y * 4 + x) * 4, px + ((size_t)sy * img->width + sx) * 4, 4);
        }
}

static void peer_rows(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    const peer_job *j = user;
    const kiln_format_info *fi = kiln_format_get_info(j->format);
    for (size_t by = begin; by < end; by++)
        for (uint32_t bx = 0; bx < j->bx; bx++) {
            uint8_t rgba[64];
            gather(j->img, bx, (uint32_t)by, rgba);
            uint8_t *o = j->dst + ((size_t)by * j->bx + bx) * fi->block_bytes;
            if (j->t->kind == TOOL_STB) {
                if (j->format == KILN_FORMAT_BC4_UNORM) {
                    uint8_t r[16];
                    for (int t = 0; t < 16; t++) r[t] = rgba[t * 4];
                    stb_compress_bc4_block(o, r);
                } else if (j->format == KILN_FORMAT_BC5_UNORM) {
                    uint8_t rg[32];
                    for (int t = 0; t < 16; t++) rg[t * 2] = rgba[t * 4], rg[t * 2 + 1] = rgba[t * 4 + 1];
                    stb_compress_bc5_block(o, rg);
                } else {
                    if (j->format == KILN_FORMAT_BC1_RGB_UNORM)
                        for (int t = 0; t < 16; t++) rgba[t * 4 + 3] = 255;
                    stb_compress_dxt_block(o, rgba, j->format == KILN_FORMAT_BC3_UNORM, j->t->param);
                }
            }
#ifdef KILN_HAVE_SQUISH
            else if (j->t->kind == TOOL_SQUISH) {
                int f = j->format == KILN_FORMAT_BC4_UNORM   ? KT_SQUISH_BC4
                        : j->format == KILN_FORMAT_BC5_UNORM ? KT_SQUISH_BC5
                        : j->format == KILN_FORMAT_BC3_UNORM ? KT_SQUISH_DXT5
                                                             : KT_SQUISH_DXT1;
                if (j->format == KILN_FORMAT_BC1_RGB_UNORM)
                    for (int t = 0; t < 16; t++) rgba[t * 4 + 3] = 255;
                kt_squish_compress(rgba, o, f, j->t->param);
            }
#endif
        }
}

/* Encodes img with tool t into dst using ctx's threads; returns the seconds taken (CPU time of this
 * thread when single, wall time otherwise). */
static double run_tool(kiln_context *ctx, const tool *t, const kiln_image *img, kiln_format format, uint8_t *dst,
                       size_t size, int single)
{
    double t0 = single ? thread_cpu_s() : wall_s();
    if (t->kind == TOOL_KILN) {
        kiln_encode_params p;
        kiln_encode_params_init(&p, format, (kiln_quality)(t->param & 0xff));
        p.dither = (t->param & KILN_BENCH_DITHER) != 0;
        p.bc1_black = (t->param & KILN_BENCH_BLACK) != 0;
        kiln_status st = kiln_encode_image(ctx, img, &p, dst, size);
        if (st != KILN_OK) {
            fprintf(stderr, "bench_bc: kiln_encode_image: %s\n", kiln_last_error(ctx));
            exit(1);
        }
    } else {
        peer_job j = {t, img, format, dst, (img->width + 3) / 4};
        kiln__parallel_for(ctx, (img->height + 3) / 4, 1, peer_rows, &j);
    }
    return (single ? thread_cpu_s() : wall_s()) - t0;
}

/* ---------------------------------------------------------------- quality */

static double psnr_of(kiln_context *ctx, const kiln_image *ref, kiln_format format, const uint8_t *data, size_t size,
                      int mask)
{
    kiln_texture tex;
    if (kiln_texture_alloc(ctx, &tex, format, ref->width, ref->height, 1, 1, 1) != KILN_OK) return NAN;
    memcpy(tex.data, data, size);
    kiln_image dec;
    double psnr = NAN;
    if (kiln_decode(ctx, &tex, 0, 0, 0, &dec) == KILN_OK) {
        const uint8_t *a = ref->pixels, *b = dec.pixels;
        double se = 0;
        size_t n = (size_t)ref->width * ref->height, cnt = 0;
        for (size_t i = 0; i < n; i++)
            for (int c = 0; c < 4; c++)
                if (mask >> c & 1) {
                    double d = (double)a[i * 4 + c] - (double)b[i * 4 + c];
                    se += d * d;
                    cnt++;
                }
        double mse = se / (double)cnt;
        psnr = mse > 0 ? 10.0 * log10(255.0 * 255.0 / mse) : INFINITY;
        kiln_image_free(&dec);
    }
    kiln_texture_free(&tex);
    return psnr;
}

/* ---------------------------------------------------------------- driver */

/* 1 when the comma-separated list names mode exactly. */
static int has_mode(const char *list, const char *mode)
{
    size_t n = strlen(mode);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, mode, n)) return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

static int load_set(kiln_context *ctx, const char *dir, bench_set *s, const char **names, int n, int red_only)
{
    for (int i = 0; i < n && s->n < MAX_IMAGES; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        kiln_image img, u8;
        if (kiln_image_load(ctx, path, &img) != KILN_OK) {
            fprintf(stderr, "bench_bc: %s\n", kiln_last_error(ctx));
            return -1;
        }
        if (img.type != KILN_PIXEL_U8) {
            kiln_status st = kiln_image_convert(ctx, &img, KILN_PIXEL_U8, &u8);
            kiln_image_free(&img);
            if (st != KILN_OK) return -1;
            img = u8;
        }
        if (red_only) { /* BC4 reads R */
            uint8_t *p = img.pixels;
            for (size_t k = 0; k < (size_t)img.width * img.height; k++) p[k * 4 + 1] = p[k * 4 + 2] = p[k * 4];
        }
        const char *base = strrchr(names[i], '/');
        s->names[s->n] = base ? base + 1 : names[i];
        s->img[s->n++] = img;
    }
    return 0;
}

static int psnr_command(const char *file, const char *ref, const char *chans)
{
    kiln_context *ctx = NULL;
    if (kiln_context_create(NULL, &ctx) != KILN_OK) return 1;
    kiln_texture tex;
    kiln_image img, dec;
    int mask = 7;
    if (chans) mask = !strcmp(chans, "r") ? 1 : !strcmp(chans, "rg") ? 3 : !strcmp(chans, "rgba") ? 15 : 7;
    if (kiln_texture_load(ctx, file, &tex) != KILN_OK || kiln_image_load(ctx, ref, &img) != KILN_OK ||
        kiln_decode(ctx, &tex, 0, 0, 0, &dec) != KILN_OK) {
        fprintf(stderr, "bench_bc: %s\n", kiln_last_error(ctx));
        kiln_context_free(ctx);
        return 1;
    }
    if (dec.type != KILN_PIXEL_U8 || img.type != KILN_PIXEL_U8 || dec.width != img.width || dec.height != img.height) {
        fprintf(stderr, "bench_bc: %s and %s differ in size or type\n", file, ref);
        return 1;
    }
    const uint8_t *a = img.pixels, *b = dec.pixels;
    double se = 0;
    size_t n = (size_t)img.width * img.height, cnt = 0;
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 4; c++)
            if (mask >> c & 1) {
                double d = (double)a[i * 4 + c] - (double)b[i * 4 + c];
                se += d * d;
                cnt++;
            }
    printf("%.3f\n", 10.0 * log10(255.0 * 255.0 / (se / (double)cnt)));
    kiln_image_free(&img);
    kiln_image_free(&dec);
    kiln_texture_free(&tex);
    kiln_context_free(ctx);
    return 0;
}

/* --red-to-grey SRC DST: writes SRC's red channel into all four channels of DST (for peers that need a
 * one-channel input); --size FILE: prints width * height. */
static int tool_command(const char *what, const char *src, const char *dst)
{
    kiln_context *ctx = NULL;
    if (kiln_context_create(NULL, &ctx) != KILN_OK) return 1;
    kiln_image img;
    int rc = 1;
    if (kiln_image_load(ctx, src, &img) == KILN_OK) {
        if (!strcmp(what, "--size")) {
            printf("%llu\n", (unsigned long long)img.width * img.height);
            rc = 0;
        } else if (img.type == KILN_PIXEL_U8) {
            uint8_t *p = img.pixels;
            for (size_t k = 0; k < (size_t)img.width * img.height; k++) p[k * 4 + 1] = p[k * 4 + 2] = p[k * 4 + 3] = p[k * 4];
            img.channels = 4;
            rc = kiln_image_save(ctx, &img, dst, 0) == KILN_OK ? 0 : 1;
        }
        kiln_image_free(&img);
    }
    if (rc) fprintf(stderr, "bench_bc: %s\n", kiln_last_error(ctx));
    kiln_context_free(ctx);
    return rc;
}

int main(int argc, char **argv)
{
    const char *dir = KILN_TESTDATA;
    const char *formats = "bc1,bc3,bc4,bc5";
    double min_time = 0.3;
    int quick = 0, peers = 1;
    const char *kiln_modes = "fast,normal,high,max,fast+dither,high+dither,high+black,max+black";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--testdata") && i + 1 < argc) dir = argv[++i];
        else if (!strcmp(argv[i], "--formats") && i + 1 < argc) formats = argv[++i];
        else if (!strcmp(argv[i], "--min-time") && i + 1 < argc) min_time = atof(argv[++i]);
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--kiln-modes") && i + 1 < argc) kiln_modes = argv[++i];
        else if (!strcmp(argv[i], "--no-peers")) peers = 0;
        else if (!strcmp(argv[i], "--psnr") && i + 2 < argc) return psnr_command(argv[i + 1], argv[i + 2], i + 3 < argc ? argv[i + 3] : NULL);
        else if (!strcmp(argv[i], "--red-to-grey") && i + 2 < argc) return tool_command(argv[i], argv[i + 1], argv[i + 2]);
        else if (!strcmp(argv[i], "--size") && i + 1 < argc) return tool_command(argv[i], argv[i + 1], NULL);
        else {
            fprintf(stderr, "usage: bench_bc [--testdata DIR] [--formats bc1,bc3,bc4,bc5] [--min-time S] [--quick] "
                            "[--no-peers] [--kiln-modes fast,normal,high,max,fast+dither,high+dither,high+black,max+black] | --psnr FILE REF.png [r|rg|rgb|rgba] | "
                            "--red-to-grey SRC DST | --size IMAGE\n");
            return 2;
        }
    }
    kiln_context_params cp;
    kiln_context_params_init(&cp);
    cp.backend = KILN_BACKEND_CPU;
    cp.threads = 1;
    kiln_context *ctx1 = NULL, *ctxn = NULL;
    if (kiln_context_create(&cp, &ctx1) != KILN_OK) return 1;
    cp.threads = 0;
    if (kiln_context_create(&cp, &ctxn) != KILN_OK) return 1;

    static const tool kiln_tools[] = {
        {TOOL_KILN, "kiln", "fast", KILN_QUALITY_FAST},
        {TOOL_KILN, "kiln", "normal", KILN_QUALITY_NORMAL},
        {TOOL_KILN, "kiln", "high", KILN_QUALITY_HIGH},
        {TOOL_KILN, "kiln", "max", KILN_QUALITY_MAX},
        {TOOL_KILN, "kiln", "fast+dither", KILN_QUALITY_FAST | KILN_BENCH_DITHER},
        {TOOL_KILN, "kiln", "high+dither", KILN_QUALITY_HIGH | KILN_BENCH_DITHER},
        {TOOL_KILN, "kiln", "high+black", KILN_QUALITY_HIGH | KILN_BENCH_BLACK},
        {TOOL_KILN, "kiln", "max+black", KILN_QUALITY_MAX | KILN_BENCH_BLACK},
    };
    static const tool peer_tools[] = {
        {TOOL_STB, "stb_dxt", "normal", STB_DXT_NORMAL},
        {TOOL_STB, "stb_dxt", "highqual", STB_DXT_HIGHQUAL},
#ifdef KILN_HAVE_SQUISH
        {TOOL_SQUISH, "libsquish", "rangefit", KT_SQUISH_RANGE_FIT},
        {TOOL_SQUISH, "libsquish", "clusterfit", KT_SQUISH_CLUSTER_FIT},
#endif
    };

    bench_set sets[4];
    int nsets = 0;
    memset(sets, 0, sizeof sets);
    if (strstr(formats, "bc1")) {
        bench_set *s = &sets[nsets++];
        s->format_name = "bc1";
        s->format = KILN_FORMAT_BC1_RGB_UNORM;
        s->channel_mask = 7;
        if (load_set(ctx1, dir, s, k_colour_set, 8, 0)) return 1;
    }
    if (strstr(formats, "bc3")) {
        bench_set *s = &sets[nsets++];
        s->format_name = "bc3";
        s->format = KILN_FORMAT_BC3_UNORM;
        s->channel_mask = 15;
        if (load_set(ctx1, dir, s, k_alpha_set, 4, 0)) return 1;
    }
    if (strstr(formats, "bc4")) {
        bench_set *s = &sets[nsets++];
        s->format_name = "bc4";
        s->format = KILN_FORMAT_BC4_UNORM;
        s->channel_mask = 1;
        if (load_set(ctx1, dir, s, k_grey_set, 2, 1) || load_set(ctx1, dir, s, k_colour_set, 8, 1)) return 1;
    }
    if (strstr(formats, "bc5")) {
        bench_set *s = &sets[nsets++];
        s->format_name = "bc5";
        s->format = KILN_FORMAT_BC5_UNORM;
        s->channel_mask = 3;
        if (load_set(ctx1, dir, s, k_normal_set, 3, 0)) return 1;
    }

    for (int si = 0; si < nsets; si++) {
        bench_set *s = &sets[si];
        printf("IMAGES\t%s", s->format_name);
        for (int i = 0; i < s->n; i++) printf("\t%s", s->names[i]);
        printf("\n");
        fflush(stdout);
        const int nkiln = (int)(sizeof kiln_tools / sizeof kiln_tools[0]);
        int ntools = nkiln + (peers ? (int)(sizeof peer_tools / sizeof peer_tools[0]) : 0);
        for (int ti = 0; ti < ntools; ti++) {
            const tool *t = ti < nkiln ? &kiln_tools[ti] : &peer_tools[ti - nkiln];
            if (quick && t->kind == TOOL_KILN && t->param == KILN_QUALITY_MAX && s->format == KILN_FORMAT_BC1_RGB_UNORM)
                continue;
            if (t->kind == TOOL_KILN && !has_mode(kiln_modes, t->mode)) continue;
            if (t->kind == TOOL_KILN && (t->param & KILN_BENCH_BLACK) && s->format != KILN_FORMAT_BC1_RGB_UNORM)
                continue; /* bc1_black is a BC1 RGB option */
            if (t->kind == TOOL_STB && t->param == STB_DXT_HIGHQUAL &&
                (s->format == KILN_FORMAT_BC4_UNORM || s->format == KILN_FORMAT_BC5_UNORM))
                continue; /* stb_dxt's BC4/BC5 have one mode */
            double psnr[MAX_IMAGES], sum = 0, pix = 0, t1 = 0, tn = 0;
            for (int i = 0; i < s->n; i++) {
                const kiln_image *img = &s->img[i];
                size_t size = kiln_format_image_size(s->format, img->width, img->height);
                uint8_t *dst = malloc(size);
                if (!dst) return 1;
                /* the fastest of runs adding up to min_time (at least 3): the code's speed, not other
                 * jobs' interference on a shared machine */
                double el = 0, best = INFINITY;
                int reps = 0;
                do {
                    double d = run_tool(ctx1, t, img, s->format, dst, size, 1);
                    best = d < best ? d : best;
                    el += d;
                    reps++;
                } while ((el < min_time || reps < 3) && reps < 200);
                t1 += best;
                el = 0;
                reps = 0;
                best = INFINITY;
                do {
                    double d = run_tool(ctxn, t, img, s->format, dst, size, 0);
                    best = d < best ? d : best;
                    el += d;
                    reps++;
                } while ((el < min_time || reps < 3) && reps < 200);
                tn += best;
                psnr[i] = psnr_of(ctx1, img, s->format, dst, size, s->channel_mask);
                sum += psnr[i];
                pix += (double)img->width * img->height;
                free(dst);
            }
            printf("ROW\t%s\t%s\t%s", s->format_name, t->name, t->mode);
            for (int i = 0; i < s->n; i++) printf("\t%.3f", psnr[i]);
            printf("\t%.3f\t%.3f\t%.3f\n", sum / s->n, pix / t1 / 1e6, pix / tn / 1e6);
            fflush(stdout);
        }
        for (int i = 0; i < s->n; i++) kiln_image_free(&s->img[i]);
    }
    kiln_context_free(ctx1);
    kiln_context_free(ctxn);
    return 0;
}

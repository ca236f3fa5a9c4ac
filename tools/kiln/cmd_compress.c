/* cmd_compress.c - `kiln compress IN... -f FORMAT[,FORMAT...] [options] -o OUT`: load images, optionally
 * build their mip chains, encode every level (on the GPU when one is present and the format has a GPU
 * encoder, else on all CPU cores), write KTX2 or DDS files atomically. Several inputs and formats go
 * through kiln_encode_batch (the GPU overlaps the images' uploads, kernels and downloads; the formats
 * of one image share its upload; --backend both splits the images between the CPU and the GPU); the
 * output name is then a template ({name}, {fmt}) or a directory. */
#include "cli.h"
#include "kiln/kiln_timings.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void help(void)
{
    printf("usage: kiln compress IN... -f FORMAT[,FORMAT...] [options] -o OUT.ktx2|OUT.dds|TEMPLATE|DIR/\n\n"
           "Encodes images (PNG, JPEG, TGA, BMP, HDR, EXR) into textures: one level, or with --mips\n"
           "the whole chain. The output is deterministic: the same bytes for any thread count.\n"
           "Several inputs and/or formats: -o is a template with {name} (the input's file name without\n"
           "directory and extension) and {fmt} (the format's name, e.g. bc1-srgb), e.g.\n"
           "  kiln compress a.png b.png -f bc1,etc2-rgb -o out/{name}_{fmt}.ktx2\n"
           "or a directory (ending in / or existing): DIR/{name}.ktx2, or DIR/{name}_{fmt}.ktx2 for\n"
           "several formats. On the GPU, images and formats of one run share uploads and overlap.\n\n"
           "  -f, --format F[,F..]  bc1, bc1a, bc2, bc3, bc4, bc5, etc1, etc2-rgb, etc2-rgb-a1, etc2-rgba,\n"
           "                        eac-r11, eac-rg11, r8, rg8, rgba8, rgba16f, rgba32f; or a full name\n"
           "                        (bc1-srgb, bc4-snorm), a Vulkan or DXGI name, or DXT1/DXT5/ATI2...\n"
           "                        ('kiln formats' lists them all)\n"
           "  -q, --quality Q       fast, normal, high (default) or max\n"
           "  --srgb                tag the texture sRGB (the _SRGB variant of the format)\n"
           "  --linear              tag it linear UNORM (the default, as texconv and ktx create do:\n"
           "                        kiln never guesses the transfer function from the input file)\n"
           "  --snorm               the signed variant (bc4, bc5, eac-r11, eac-rg11): [0,1] maps to [-1,1]\n"
           "  --perceptual          weight colour errors by luminance (0.299 R, 0.587 G, 0.114 B)\n"
           "  --dither              error diffusion inside each block against banding\n"
           "  --bc1-black           bc1 (RGB), -q normal and up: dark texels may use the three-colour mode's\n"
           "                        black, as rgbcx does (higher PSNR on dark images). Only where alpha is\n"
           "                        ignored: Vulkan's BC1_RGB formats return 1, DDS/DXGI BC1 readers 0\n"
           "  --alpha-threshold T   bc1a / etc2-rgb-a1: alpha below T (0..255, default 128) is transparent\n"
           "  --alpha-cutout        ignore the colour of texels whose alpha is 0\n"
           "  --mips [N]            make a mip chain and encode every level: N levels including the base\n"
           "                        (default: the full chain down to 1x1). Filtering is in linear light\n"
           "                        for --srgb formats, on the stored values otherwise; the exact box\n"
           "                        filter by default (any size, odd ones included). With --mips:\n"
           "    --filter F          box, kaiser, lanczos3, mitchell     --wrap | --clamp (edges)\n"
           "    --alpha M           weighted (default), separate, premultiplied\n"
           "    --alpha-coverage R  keep the alpha-test coverage at reference R on every level\n"
           "    --normal            normal map: renormalised on every level\n"
           "    --mip-strategy S    on the GPU: auto (pyramid), per-level, subgroup, pyramid, single-pass, blit\n"
           "  --zstd N              KTX2: zstd supercompression level 1..22 (default: none)\n"
           "  --dx10, --dx9         DDS: force the DX10 or the legacy header (default: legacy where possible)\n"
           "  -o, --output F        output file; .ktx2 (or .ktx) writes KTX2, .dds writes DDS\n"
           "  -j, --threads N       worker threads (0 = all cores, the default)\n"
           "  --backend B           auto (default: a real GPU when present and the format has a GPU encoder,\n"
           "                        else the CPU; a job the CPU should finish before a GPU device could\n"
           "                        even start - estimated from its texels, formats and quality - stays on\n"
           "                        the CPU: KILN_GPU_START_MS=0 turns that off), cpu, vulkan (always the\n"
           "                        GPU; fails if no device or no GPU encoder), or\n"
           "                        both: the CPU and the GPU encode the images of a batch side by side\n"
           "                        (formats without a GPU encoder run on the CPU; the same bytes; with\n"
           "                        --mips it acts as auto); the CPU starts on the first images (a large\n"
           "                        one in strips, the device takes the rest) while the GPU device starts;\n"
           "                        a job auto would keep on the CPU runs on the CPU alone\n"
           "  --device N            the Vulkan device to use ('kiln devices' lists them)\n"
           "  --gpu-strategy S      kiln (default) or seed (the betsy / cluster-fit paper designs, for comparison)\n"
           "  --progress auto|always|never   progress bar on stderr (auto: when it is a terminal)\n"
           "  --quiet               no summary line\n"
           "  --timings             the time of each phase on stderr (read, device start, pipelines, encode,\n"
           "                        write, teardown; also KILN_TIMINGS=1). Pipelines are cached on disk, a file\n"
           "                        each, in $XDG_CACHE_HOME/kiln/pipelines (or ~/.cache/kiln/pipelines; at most\n"
           "                        KILN_PIPELINE_CACHE_MAX_MB, default 64); KILN_PIPELINE_CACHE=0 turns that off\n"
           "  -h, --help            this text\n\n"
           "exit codes: 0 ok, 1 failure, 2 bad command line, 3 cannot read or write a file,\n"
           "            4 unsupported or corrupt input, 6 cancelled\n");
}

static int parse_quality(const char *s, kiln_quality *q)
{
    if (!strcasecmp(s, "fast") || !strcmp(s, "0")) *q = KILN_QUALITY_FAST;
    else if (!strcasecmp(s, "normal") || !strcmp(s, "1")) *q = KILN_QUALITY_NORMAL;
    else if (!strcasecmp(s, "high") || !strcmp(s, "2")) *q = KILN_QUALITY_HIGH;
    else if (!strcasecmp(s, "max") || !strcmp(s, "3")) *q = KILN_QUALITY_MAX;
    else return -1;
    return 0;
}

static const char *quality_name(kiln_quality q)
{
    static const char *names[] = {"fast", "normal", "high", "max"};
    return (unsigned)q < 4 ? names[q] : "?";
}

static const char *extension(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash)) return "";
    return dot;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define MAX_FORMATS 8

/* The output path of input `in` in format `fmt` (see help()); -1 when it does not fit. */
static int output_path(const char *tmpl, int dir_mode, int nfmt, const char *in, const char *fmt, char *out, size_t cap)
{
    const char *slash = strrchr(in, '/');
    const char *base = slash ? slash + 1 : in;
    const char *dot = strrchr(base, '.');
    size_t blen = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    int n;
    if (dir_mode) {
        size_t tl = strlen(tmpl);
        int sep = tl > 0 && tmpl[tl - 1] != '/';
        n = nfmt > 1 ? snprintf(out, cap, "%s%s%.*s_%s.ktx2", tmpl, sep ? "/" : "", (int)blen, base, fmt)
                     : snprintf(out, cap, "%s%s%.*s.ktx2", tmpl, sep ? "/" : "", (int)blen, base);
        return n < 0 || (size_t)n >= cap ? -1 : 0;
    }
    size_t o = 0;
    for (const char *t = tmpl; *t;) {
        const char *rep = NULL;
        size_t rlen = 0, skip = 1;
        if (!strncmp(t, "{name}", 6)) rep = base, rlen = blen, skip = 6;
        else if (!strncmp(t, "{fmt}", 5)) rep = fmt, rlen = strlen(fmt), skip = 5;
        else rep = t, rlen = 1;
        if (o + rlen + 1 > cap) return -1;
        memcpy(out + o, rep, rlen);
        o += rlen;
        t += skip;
    }
    out[o] = 0;
    return 0;
}

static int is_directory(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* Loads inputs[0 .. n-1] into imgs on up to `threads` threads (each with its own one-thread CPU
 * context); on failure the first failing input is loaded again on ctx for its message. */
typedef struct load_job {
    const char **inputs;
    kiln_image *imgs;
    kiln_status *status;
    uint32_t n;
    atomic_uint next;
} load_job;

static void *load_worker(void *user)
{
    load_job *j = user;
    kiln_context_params cp;
    kiln_context_params_init(&cp);
    cp.threads = 1;
    cp.backend = KILN_BACKEND_CPU;
    kiln_context *lc = NULL;
    kiln_status cst = kiln_context_create(&cp, &lc);
    for (;;) {
        uint32_t i = atomic_fetch_add(&j->next, 1u);
        if (i >= j->n) break;
        j->status[i] = cst == KILN_OK ? kiln_image_load(lc, j->inputs[i], &j->imgs[i]) : cst;
    }
    kiln_context_free(lc);
    return NULL;
}

static kiln_status load_images(kiln_context *ctx, const char **inputs, uint32_t n, kiln_image *imgs, uint32_t threads)
{
    kiln_status status[64];
    if (n > 64 || n < 2 || threads < 2) {
        for (uint32_t i = 0; i < n; i++) {
            kiln_status st = kiln_image_load(ctx, inputs[i], &imgs[i]);
            if (st != KILN_OK) return st;
        }
        return KILN_OK;
    }
    load_job j = {inputs, imgs, status, n, 0};
    atomic_init(&j.next, 0u);
    pthread_t th[16];
    uint32_t nt = threads < n ? threads : n, started = 0;
    if (nt > 16) nt = 16;
    for (uint32_t t = 0; t < nt; t++) {
        status[t] = KILN_OK;
        if (pthread_create(&th[started], NULL, load_worker, &j) == 0) started++;
    }
    load_worker(&j); /* this thread helps, and finishes the queue if no thread started */
    for (uint32_t t = 0; t < started; t++) pthread_join(th[t], NULL);
    for (uint32_t i = 0; i < n; i++)
        if (status[i] != KILN_OK) {
            for (uint32_t k = 0; k < n; k++) kiln_image_free(&imgs[k]);
            return kiln_image_load(ctx, inputs[i], &imgs[i]); /* the message, on ctx */
        }
    return KILN_OK;
}

/* The device start on its own thread while the first images load: the Vulkan instance and device,
 * then (unless KILN_WARMUP=0) one small synthetic image encoded exactly as the job will encode, so the
 * pipelines the job needs (and only those) are created meanwhile too. ctx is this thread's alone until
 * it is joined; the synthetic image's output is thrown away, so the job's bytes do not change. */
typedef struct warm_job {
    kiln_context *ctx;
    const kiln_encode_params *eps;
    uint32_t nfmt;
    int mips, fp;
    const kiln_mip_params *mp;
    double t0, t_device, t_done; /* seconds (now_s) */
    int warmed;
    atomic_int done;              /* set when the thread is about to end */
    atomic_int stop;              /* set by the caller: no warm-up needed any more */
} warm_job;

static void *warm_gpu(void *user)
{
    warm_job *w = user;
    w->t0 = now_s();
    kiln_backend b = kiln_context_backend(w->ctx);
    w->t_device = now_s();
    const char *env = getenv("KILN_WARMUP");
    if (b == KILN_BACKEND_VULKAN && !(env && !strcmp(env, "0")) && !atomic_load(&w->stop)) {
        kiln_image img;
        enum { W = 64 };
        if (kiln_image_alloc(w->ctx, &img, W, W, w->fp ? KILN_PIXEL_F32 : KILN_PIXEL_U8) == KILN_OK) {
            uint32_t h = 0x9e3779b9u;
            for (uint32_t i = 0; i < W * W * 4; i++) {
                h ^= h << 13, h ^= h >> 17, h ^= h << 5;
                uint32_t x = (i / 4) % W, y = (i / 4) / W, c = i % 4;
                /* left half noise, right half smooth; alpha: opaque, cut-out and graded blocks */
                uint32_t v = x < W / 2 ? (h >> 24) : (x * 4 + y * 2 + c * 40) & 255;
                if (c == 3) v = y < W / 4 ? 255 : y < W / 2 ? ((h >> 20) & 1) * 255 : (x * 4) & 255;
                if (w->fp) ((float *)img.pixels)[i] = (float)v / 255.0f;
                else ((uint8_t *)img.pixels)[i] = (uint8_t)v;
            }
            img.channels = 4;
            kiln_texture tex[MAX_FORMATS];
            memset(tex, 0, sizeof tex);
            if (w->mips) {
                for (uint32_t f = 0; f < w->nfmt; f++) {
                    if (kiln_encode_mips(w->ctx, &img, &w->eps[f], w->mp, &tex[f]) == KILN_OK) w->warmed++;
                    kiln_texture_free(&tex[f]);
                }
            } else if (kiln_encode_batch(w->ctx, &img, 1, w->eps, w->nfmt, 0, tex) == KILN_OK) {
                w->warmed = (int)w->nfmt;
                for (uint32_t f = 0; f < w->nfmt; f++) kiln_texture_free(&tex[f]);
            }
            kiln_image_free(&img);
        }
    }
    w->t_done = now_s();
    atomic_store(&w->done, 1);
    return NULL;
}

/* The device's teardown (pipeline cache save, kiln_context_free: ~45 ms on the H100) on a thread of its
 * own while the last chunk's files are written (KILN_TEARDOWN_OVERLAP=0: no). */
typedef struct teardown_job {
    kiln_context *ctx;
    double save_s, free_s;
} teardown_job;

static void *teardown_main(void *user)
{
    teardown_job *t = user;
    const double t0 = now_s();
    (void)kiln_context_save_pipeline_cache(t->ctx);
    const double t1 = now_s();
    kiln_context_free(t->ctx);
    t->save_s = t1 - t0;
    t->free_s = now_s() - t1;
    return NULL;
}

/* A chunk's output files written on up to `threads` threads (each with its own CPU context),
 * outputs in any order; status[k] per output. Several files written at once overlap their system calls
 * (create, write, rename: ~0.3 ms a file on the H100 host); KILN_PARALLEL_WRITE=0: one by one. */
typedef struct write_job {
    kiln_texture *tex;
    const char *const *paths; /* per output */
    const kiln_save_params *sp;
    kiln_status *status;
    uint32_t n, worker_threads; /* each worker's context: the threads / workers (zstd runs levels in parallel) */
    atomic_uint next;
} write_job;

static void *write_worker(void *user)
{
    write_job *j = user;
    kiln_context_params cp;
    kiln_context_params_init(&cp);
    cp.threads = j->worker_threads;
    cp.backend = KILN_BACKEND_CPU;
    kiln_context *wc = NULL;
    kiln_status cst = kiln_context_create(&cp, &wc);
    for (;;) {
        uint32_t k = atomic_fetch_add(&j->next, 1u);
        if (k >= j->n) break;
        if (cst != KILN_OK) {
            j->status[k] = cst;
            continue;
        }
        kiln_save_params sp = *j->sp;
        sp.container = !strcasecmp(extension(j->paths[k]), ".dds") ? KILN_CONTAINER_DDS : KILN_CONTAINER_KTX2;
        j->status[k] = kiln_texture_save(wc, &j->tex[k], j->paths[k], &sp);
    }
    kiln_context_free(wc);
    return NULL;
}

/* Returns 0 when every output was written; else the first failing output's index + 1 (status[] has
 * each output's; the caller saves the failed ones again on its own context, in order, for the message). */
static uint32_t write_parallel(kiln_texture *tex, const char *const *paths, uint32_t n, const kiln_save_params *sp,
                               kiln_status *status, uint32_t threads)
{
    pthread_t th[32];
    uint32_t nt = threads < n ? threads : n, started = 0;
    if (nt > 32) nt = 32;
    write_job j = {tex, paths, sp, status, n, threads / nt > 1 ? threads / nt : 1, 0};
    atomic_init(&j.next, 0u);
    for (uint32_t t = 1; t < nt; t++)
        if (pthread_create(&th[started], NULL, write_worker, &j) == 0) started++;
    write_worker(&j); /* this thread writes too, and finishes the queue if no thread started */
    for (uint32_t t = 0; t < started; t++) pthread_join(th[t], NULL);
    for (uint32_t k = 0; k < n; k++)
        if (status[k] != KILN_OK) return k + 1;
    return 0;
}

/* The next chunk's loading, on its own thread (and its own context for the message). */
typedef struct prefetch_job {
    kiln_context *ctx;
    const char **inputs;
    uint32_t n, threads;
    kiln_image *imgs;
    kiln_status st;
} prefetch_job;

static void *prefetch_main(void *user)
{
    prefetch_job *p = user;
    p->st = load_images(p->ctx, p->inputs, p->n, p->imgs, p->threads);
    return NULL;
}

/* Rows [y0, y1) of img (y0 a multiple of every format's block height) encoded on ctx into the matching
 * block rows of out[0 .. nfmt-1] (allocated here for the whole image when y0 == 0): blocks are encoded
 * independently, so the bytes are those of encoding the whole image at once. --backend both uses it to
 * encode a large image in strips on the CPU while the device starts, and the rest on the GPU. */
static kiln_status encode_rows(kiln_context *ctx, const kiln_image *img, uint32_t y0, uint32_t y1,
                               const kiln_encode_params *eps, uint32_t nfmt, kiln_texture *out)
{
    kiln_texture part[MAX_FORMATS];
    kiln_image view = *img;
    view.pixels = (uint8_t *)img->pixels + (size_t)y0 * img->width * 4 * (size_t)img->type;
    view.height = y1 - y0;
    kiln_status st = KILN_OK;
    for (uint32_t f = 0; f < nfmt && st == KILN_OK && y0 == 0; f++)
        st = kiln_texture_alloc(ctx, &out[f], eps[f].format, img->width, img->height, 1, 1, 1);
    if (st == KILN_OK) st = kiln_encode_batch(ctx, &view, 1, eps, nfmt, 0, part);
    for (uint32_t f = 0; f < nfmt && st == KILN_OK; f++) {
        const kiln_format_info *fi = kiln_format_get_info(eps[f].format);
        size_t full = 0, psz = 0;
        uint8_t *dst = kiln_texture_image(&out[f], 0, 0, 0, &full);
        const uint8_t *src = kiln_texture_image(&part[f], 0, 0, 0, &psz);
        const size_t brows = (img->height + fi->block_height - 1) / fi->block_height, row = full / brows;
        memcpy(dst + (size_t)(y0 / fi->block_height) * row, src, psz);
    }
    if (st == KILN_OK)
        for (uint32_t f = 0; f < nfmt; f++) kiln_texture_free(&part[f]);
    return st;
}

/* An input's width and height from its header alone (PNG, BMP, JPEG, TGA, Radiance HDR, OpenEXR), for
 * `auto`'s estimate before anything is decoded; 0 on success, -1 when the header is not understood (the
 * estimate is then skipped: the device starts as before). */
static uint32_t be16(const uint8_t *p) { return (uint32_t)p[0] << 8 | p[1]; }
static uint32_t le16(const uint8_t *p) { return (uint32_t)p[1] << 8 | p[0]; }
static uint32_t be32(const uint8_t *p) { return be16(p) << 16 | be16(p + 2); }
static uint32_t le32(const uint8_t *p) { return le16(p + 2) << 16 | le16(p); }

static int peek_size(const char *path, uint32_t *w, uint32_t *h, int *png)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    uint8_t b[4096];
    size_t n = fread(b, 1, sizeof b, f);
    int r = -1;
    *w = *h = 0;
    *png = 0;
    if (n >= 24 && !memcmp(b, "\x89PNG\r\n\x1a\n", 8) && !memcmp(b + 12, "IHDR", 4)) {
        *w = be32(b + 16), *h = be32(b + 20), r = 0;
        *png = 1;
    } else if (n >= 26 && b[0] == 'B' && b[1] == 'M') {
        if (le32(b + 14) == 12) *w = le16(b + 18), *h = le16(b + 20);
        else *w = le32(b + 18), *h = le32(b + 22);
        if (*h & 0x80000000u) *h = 0u - *h; /* top-down */
        r = 0;
    } else if (n >= 4 && b[0] == 0xff && b[1] == 0xd8) { /* JPEG: walk the segments to the frame header */
        long off = 2;
        for (int seg = 0; seg < 256 && r; seg++) {
            uint8_t m[9];
            if (fseek(f, off, SEEK_SET) || fread(m, 1, 9, f) != 9 || m[0] != 0xff) break;
            if (m[1] == 0xff) { off++; continue; } /* fill byte */
            if (m[1] >= 0xc0 && m[1] <= 0xcf && m[1] != 0xc4 && m[1] != 0xc8 && m[1] != 0xcc) {
                *h = be16(m + 5), *w = be16(m + 7), r = 0;
                break;
            }
            if (m[1] == 0xd8 || (m[1] >= 0xd0 && m[1] <= 0xd7) || m[1] == 0x01) off += 2;
            else off += 2 + (long)be16(m + 2);
        }
    } else if (n >= 11 && (!memcmp(b, "#?RADIANCE", 10) || !memcmp(b, "#?RGBE", 6))) {
        const uint8_t *end = b + n;
        for (const uint8_t *p = b; p + 1 < end; p++)
            if (p[0] == '\n' && p[1] == '\n') { /* the resolution line follows the blank line */
                char line[64];
                size_t k = 0;
                for (p += 2; p < end && *p != '\n' && k + 1 < sizeof line; p++) line[k++] = (char)*p;
                line[k] = 0;
                char a1[3], a2[3];
                unsigned v1, v2;
                if (sscanf(line, "%2s %u %2s %u", a1, &v1, a2, &v2) == 4) {
                    if (a1[1] == 'Y') *h = v1, *w = v2;
                    else *w = v1, *h = v2;
                    r = 0;
                }
                break;
            }
    } else if (n >= 8 && b[0] == 0x76 && b[1] == 0x2f && b[2] == 0x31 && b[3] == 0x01) { /* OpenEXR attributes */
        size_t o = 8;
        while (o < n && b[o]) {
            const char *name = (const char *)b + o;
            const size_t nl = strnlen(name, n - o);
            if (o + nl + 1 >= n) break;
            const char *type = (const char *)b + o + nl + 1;
            const size_t tl = strnlen(type, n - (o + nl + 1));
            const size_t v = o + nl + 1 + tl + 1;
            if (v + 4 > n) break;
            const uint32_t size = le32(b + v);
            if (!strcmp(name, "dataWindow") && !strcmp(type, "box2i") && size == 16 && v + 20 <= n) {
                const int32_t x0 = (int32_t)le32(b + v + 4), y0 = (int32_t)le32(b + v + 8);
                const int32_t x1 = (int32_t)le32(b + v + 12), y1 = (int32_t)le32(b + v + 16);
                if (x1 >= x0 && y1 >= y0) *w = (uint32_t)(x1 - x0) + 1u, *h = (uint32_t)(y1 - y0) + 1u, r = 0;
                break;
            }
            o = v + 4 + size;
        }
    } else if (n >= 18 && !strcasecmp(extension(path), ".tga")) {
        *w = le16(b + 12), *h = le16(b + 14), r = 0;
    }
    fclose(f);
    return r == 0 && *w && *h ? 0 : -1;
}

int kiln_cmd_compress(int argc, char **argv)
{
    static const char *cmd = "compress";
    kiln_cli_common c;
    kiln_cli_common_init(&c);
    const char *outp = NULL, *fmt_name = NULL;
    const char **inputs = calloc((size_t)argc, sizeof *inputs);
    if (!inputs) return kiln_cli_usage_error(cmd, "out of memory"), KILN_EXIT_FAILURE;
    uint32_t ninputs = 0;
    kiln_quality quality = KILN_QUALITY_HIGH;
    int srgb = 0, linear = 0, snorm = 0, perceptual = 0, dither = 0, cutout = 0, both = 0;
    unsigned threshold = 128, zstd = 0;
    kiln_dds_header dds = KILN_DDS_HEADER_AUTO;
    int mips = 0, gpu_strategy = 0, bc1_black = 0, timings = 0;
    const double t_start = now_s();
    {
        const char *tv = getenv("KILN_TIMINGS");
        timings = tv && !strcmp(tv, "1");
    }
    unsigned mip_levels = 0;
    kiln_mip_params mp;
    kiln_mip_params_init(&mp);
    int rc = KILN_EXIT_OK;
#define USAGE(...)                                                                                           \
    do {                                                                                                     \
        rc = kiln_cli_usage_error(cmd, __VA_ARGS__);                                                         \
        goto done_args;                                                                                      \
    } while (0)

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help();
            free(inputs);
            return KILN_EXIT_OK;
        }
        /* --backend both: this command's own (the CPU and the GPU side by side) */
        if ((!strcmp(a, "--backend") && i + 1 < argc && !strcmp(argv[i + 1], "both")) || !strcmp(a, "--backend=both")) {
            both = 1;
            c.ctx_params.backend = KILN_BACKEND_AUTO;
            if (a[9] != '=') i++;
            continue;
        }
        int r = kiln_cli_common_option(&c, argc, argv, &i);
        if (r < 0) {
            rc = KILN_EXIT_USAGE;
            goto done_args;
        }
        if (r > 0) {
            if (!strncmp(a, "--backend", 9)) both = 0;
            continue;
        }
        r = kiln_cli_mip_option(cmd, &mp, argc, argv, &i);
        if (r < 0) {
            rc = KILN_EXIT_USAGE;
            goto done_args;
        }
        if (r > 0) {
            mips |= 2; /* a mip option was given: checked against --mips below */
            continue;
        }
        if (!strcmp(a, "--mips") || !strcmp(a, "--mipmaps")) {
            mips |= 1;
            /* the count is optional: a following plain number is it */
            if (i + 1 < argc && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9') {
                if (kiln_cli_parse_u32(argv[i + 1], &mip_levels)) USAGE("--mips takes a level count, not '%s'", argv[i + 1]);
                i++;
            }
            continue;
        }
        if (!strcmp(a, "--gpu-strategy")) {
            if (i + 1 >= argc) USAGE("--gpu-strategy needs kiln or seed");
            const char *v = argv[++i];
            if (!strcmp(v, "kiln")) gpu_strategy = 0;
            else if (!strcmp(v, "seed")) gpu_strategy = 1;
            else USAGE("unknown GPU strategy '%s' (kiln or seed)", v);
            continue;
        }
        const char *val = NULL;
        int takes = !strcmp(a, "-f") || !strcmp(a, "--format") || !strcmp(a, "-q") || !strcmp(a, "--quality") ||
                    !strcmp(a, "-o") || !strcmp(a, "--output") || !strcmp(a, "--alpha-threshold") ||
                    !strcmp(a, "--zstd");
        if (takes) {
            if (i + 1 >= argc) USAGE("%s needs a value (see kiln compress --help)", a);
            val = argv[++i];
        }
        if (!strcmp(a, "-f") || !strcmp(a, "--format")) fmt_name = val;
        else if (!strcmp(a, "-o") || !strcmp(a, "--output")) outp = val;
        else if (!strcmp(a, "-q") || !strcmp(a, "--quality")) {
            if (parse_quality(val, &quality)) USAGE("unknown quality '%s' (fast, normal, high or max)", val);
        } else if (!strcmp(a, "--alpha-threshold")) {
            if (kiln_cli_parse_u32(val, &threshold) || threshold > 255)
                USAGE("--alpha-threshold needs a value from 0 to 255, not '%s'", val);
        } else if (!strcmp(a, "--zstd")) {
            if (kiln_cli_parse_u32(val, &zstd) || zstd < 1 || zstd > 22) USAGE("--zstd needs a level from 1 to 22, not '%s'", val);
        } else if (!strcmp(a, "--srgb")) srgb = 1;
        else if (!strcmp(a, "--linear")) linear = 1;
        else if (!strcmp(a, "--snorm")) snorm = 1;
        else if (!strcmp(a, "--perceptual")) perceptual = 1;
        else if (!strcmp(a, "--dither")) dither = 1;
        else if (!strcmp(a, "--timings")) timings = 1;
        else if (!strcmp(a, "--bc1-black")) bc1_black = 1;
        else if (!strcmp(a, "--alpha-cutout")) cutout = 1;
        else if (!strcmp(a, "--dx10")) dds = KILN_DDS_HEADER_DX10;
        else if (!strcmp(a, "--dx9")) dds = KILN_DDS_HEADER_LEGACY;
        else if (a[0] == '-' && a[1]) USAGE("unknown option '%s' (see kiln compress --help)", a);
        else inputs[ninputs++] = a;
    }
done_args:
#undef USAGE
    if (rc != KILN_EXIT_OK) {
        free(inputs);
        return rc;
    }
    kiln_format formats[MAX_FORMATS];
    const kiln_format_info *fis[MAX_FORMATS];
    uint32_t nfmt = 0;
    char *out_names = NULL;
    kiln_context *ctx = NULL, *early_ctx = NULL;
    /* abandon: every output is written while the device is still starting (--backend both): exit without
     * waiting for it. fast_exit (KILN_FAST_EXIT=1): exit without tearing the device down. Both leave the
     * clean-up to the operating system (outputs are complete files by then; the pipeline cache is saved
     * first when there is one) */
    int abandon = 0, fast_exit = 0;
    kiln_auto_estimate auto_est; /* auto's estimate (auto_tried), and whether it chose the CPU */
    memset(&auto_est, 0, sizeof auto_est);
    int auto_tried = 0, auto_cpu = 0;
    /* --timings: phase times (s), and the device thread's job */
    double tm_read = 0.0, tm_wait = 0.0, tm_write = 0.0, tm_encode = 0.0, tm_load_wait = 0.0;
    double tm_kernel = 0.0, tm_early = 0.0, tm_rest = 0.0;
    uint32_t early_strips = 0, rest_rows = 0; /* --backend both: strips of a large image on the CPU, rows left */
    int kernel_known = 0;
    uint32_t early_images = 0;
    warm_job wj;
    memset(&wj, 0, sizeof wj);
    kiln_gpu_timings gt;
    memset(&gt, 0, sizeof gt);
    teardown_job td = {NULL, 0.0, 0.0};
    pthread_t td_thread;
    int td_started = 0;
    kiln_context *wctx = NULL; /* writes the last chunk's files while ctx is torn down */
    {
        const char *fx = getenv("KILN_FAST_EXIT");
        fast_exit = fx && !strcmp(fx, "1");
    }
    prefetch_job pf;
    memset(&pf, 0, sizeof pf);
    int write_par = 1;
    {
        const char *pw = getenv("KILN_PARALLEL_WRITE");
        write_par = !(pw && !strcmp(pw, "0"));
    }
#define FAIL_USAGE(...)                                                                                      \
    do {                                                                                                     \
        rc = kiln_cli_usage_error(cmd, __VA_ARGS__);                                                         \
        goto cleanup;                                                                                        \
    } while (0)
    if (!ninputs) FAIL_USAGE("no input image (see kiln compress --help)");
    if (!fmt_name) FAIL_USAGE("no format: give -f FORMAT (e.g. -f bc1; 'kiln formats' lists them)");
    if (!outp) FAIL_USAGE("no output: give -o OUT.ktx2 or -o OUT.dds");
    if (srgb && linear) FAIL_USAGE("--srgb and --linear contradict each other");
    if (srgb && snorm) FAIL_USAGE("--srgb and --snorm contradict each other");

    /* formats: any names, comma-separated, then the variant flags on each */
    for (const char *p = fmt_name;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char one[128];
        if (len == 0 || len >= sizeof one) FAIL_USAGE("bad format list '%s' (e.g. -f bc1,etc2-rgb)", fmt_name);
        if (nfmt == MAX_FORMATS) FAIL_USAGE("at most %d formats at once", MAX_FORMATS);
        memcpy(one, p, len);
        one[len] = 0;
        kiln_format format = kiln_format_from_name(one);
        if (format == KILN_FORMAT_UNDEFINED) FAIL_USAGE("unknown format '%s' ('kiln formats' lists the names)", one);
        const kiln_format_info *fi = kiln_format_get_info(format);
        if (srgb || linear || snorm) {
            uint32_t flags = fi->flags & (KILN_FF_SRGB | KILN_FF_SIGNED);
            if (srgb) flags = (flags & ~KILN_FF_SIGNED) | KILN_FF_SRGB;
            if (linear) flags &= ~KILN_FF_SRGB;
            if (snorm) flags = (flags & ~KILN_FF_SRGB) | KILN_FF_SIGNED;
            kiln_format v = kiln_format_from_cli(fi->cli_base, flags);
            if (v == KILN_FORMAT_UNDEFINED)
                FAIL_USAGE("%s has no %s variant", fi->cli_base, srgb ? "sRGB" : snorm ? "signed (SNORM)" : "linear");
            format = v;
            fi = kiln_format_get_info(format);
        }
        for (uint32_t k = 0; k < nfmt; k++)
            if (formats[k] == format) FAIL_USAGE("format %s is given twice", fi->name);
        if (bc1_black && fi->format != KILN_FORMAT_BC1_RGB_UNORM && fi->format != KILN_FORMAT_BC1_RGB_SRGB)
            FAIL_USAGE("--bc1-black applies to bc1 (RGB) only, not %s", fi->name);
        formats[nfmt] = format;
        fis[nfmt++] = fi;
        if (!comma) break;
        p = comma + 1;
    }

    /* outputs: one file, a template or a directory */
    const size_t ncap = 4096;
    const uint32_t nout = ninputs * nfmt;
    size_t tl = strlen(outp);
    int dir_mode = (tl > 0 && outp[tl - 1] == '/') || is_directory(outp);
    if (!dir_mode && ninputs > 1 && !strstr(outp, "{name}"))
        FAIL_USAGE("%u inputs: -o needs {name} (e.g. -o out/{name}.ktx2) or a directory", ninputs);
    if (!dir_mode && nfmt > 1 && !strstr(outp, "{fmt}"))
        FAIL_USAGE("%u formats: -o needs {fmt} (e.g. -o {name}_{fmt}.ktx2) or a directory", nfmt);
    out_names = calloc(nout, ncap);
    if (!out_names) FAIL_USAGE("out of memory");
    int any_dds = 0, any_ktx = 0;
    for (uint32_t i = 0; i < ninputs; i++)
        for (uint32_t f = 0; f < nfmt; f++) {
            char *o = out_names + ((size_t)i * nfmt + f) * ncap;
            if (output_path(outp, dir_mode, nfmt, inputs[i], fis[f]->name, o, ncap))
                FAIL_USAGE("output name for %s is too long", inputs[i]);
            const char *ext = extension(o);
            int is_dds = !strcasecmp(ext, ".dds");
            if (!is_dds && strcasecmp(ext, ".ktx2") && strcasecmp(ext, ".ktx"))
                FAIL_USAGE("%s: the output must end in .ktx2, .ktx or .dds", o);
            if (is_dds && fis[f]->dxgi_format == 0)
                FAIL_USAGE("%s: DDS cannot hold %s (DXGI has no such format); write a .ktx2 file", o, fis[f]->name);
            any_dds |= is_dds;
            any_ktx |= !is_dds;
            for (uint32_t k = 0; k < i * nfmt + f; k++)
                if (!strcmp(out_names + (size_t)k * ncap, o)) FAIL_USAGE("two outputs would both be written to %s", o);
        }
    if (any_dds && zstd) FAIL_USAGE("--zstd applies to KTX2 output only");
    if (any_ktx && dds != KILN_DDS_HEADER_AUTO) FAIL_USAGE("--dx10/--dx9 apply to DDS output only");
    if (mips == 2) FAIL_USAGE("--filter, --wrap, --alpha, --alpha-coverage, --normal and --mip-strategy need --mips");
    if (mips && mp.normal_map && srgb) FAIL_USAGE("--normal and --srgb contradict each other");
    mp.levels = mip_levels;

    /* auto (and both): a job the CPU is expected to finish before a Vulkan device could even be up runs
     * on the CPU, and no device is started (kiln_auto_choose, kiln_timings.h: measured CPU rates against
     * the device start; the texels from the headers of the first 16 inputs, extrapolated to all of them).
     * Reading PNGs (stb_image, one image a thread: ~26 ns a texel on the H100 host, 6.6-7.4 ms per 512^2)
     * hides that much of the device start on the GPU path. Not with --device N or --gpu-strategy seed (the
     * GPU was asked for); --backend vulkan is never changed; KILN_GPU_START_MS=0: off */
    if (c.ctx_params.backend == KILN_BACKEND_AUTO && c.ctx_params.device_index < 0 && gpu_strategy == 0) {
        double texels = 0.0, png_texels = 0.0;
        uint32_t peeked = 0, npng = 0;
        for (uint32_t i = 0; i < ninputs && i < 16; i++) {
            uint32_t w = 0, h = 0;
            int png = 0;
            if (peek_size(inputs[i], &w, &h, &png)) {
                peeked = 0;
                break;
            }
            texels += (double)w * h;
            if (png) png_texels += (double)w * h, npng++;
            peeked++;
        }
        if (peeked) {
            const double scale = (double)ninputs / peeked;
            texels *= scale;
            if (mips) texels *= 4.0 / 3.0;
            const long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
            const double thr = c.ctx_params.threads ? (double)c.ctx_params.threads : ncpu > 0 ? (double)ncpu : 1.0;
            const double readers = npng ? (npng * scale < thr ? npng * scale : thr) : 1.0;
            const double read_ms = png_texels * scale * 26e-6 / readers;
            auto_tried = 1;
            if (kiln_auto_choose(formats, nfmt, quality, texels, c.ctx_params.threads, read_ms, &auto_est)) {
                auto_cpu = 1;
                c.ctx_params.backend = KILN_BACKEND_CPU;
                both = 0;
                if (c.ctx_params.verbose)
                    fprintf(stderr, "kiln: auto: the CPU should finish in ~%.0f ms, before a Vulkan device would (~%.0f ms "
                                    "with its start): running on the CPU (--backend vulkan uses the GPU)\n",
                            auto_est.cpu_ms, auto_est.gpu_ms);
            }
        }
    }
    ctx = kiln_cli_context(&c, cmd);
    if (!ctx) {
        rc = KILN_EXIT_FAILURE;
        goto cleanup;
    }
    kiln_encode_params eps[MAX_FORMATS];
    for (uint32_t f = 0; f < nfmt; f++) {
        kiln_encode_params *ep = &eps[f];
        kiln_encode_params_init(ep, formats[f], quality);
        ep->perceptual = perceptual;
        ep->dither = dither;
        ep->alpha_threshold = (uint8_t)threshold;
        ep->alpha_cutout = cutout;
        ep->gpu_strategy = gpu_strategy;
        ep->bc1_black = bc1_black;
    }
    kiln_save_params sp;
    kiln_save_params_init(&sp);
    sp.zstd_level = (int)zstd;
    sp.dds_header = dds;

    /* images in chunks (bounded memory): load, encode the chunk (kiln_encode_batch, or per image
     * with --mips), write every output; the next chunk loads on another thread meanwhile */
    /* the first chunk grows to FIRST_IMAGES (and twice chunk_bytes) while the device is still starting
     * (KILN_LOAD_AHEAD=0: no): loading more is better than waiting */
    enum { CHUNK_IMAGES = 64, FIRST_IMAGES = 256 };
    const size_t chunk_bytes = (size_t)512 << 20;
    kiln_image bufs[2][FIRST_IMAGES];
    memset(bufs, 0, sizeof bufs);
    kiln_image *imgs = bufs[0], *next_imgs = bufs[1];
    kiln_texture *tex = calloc((size_t)FIRST_IMAGES * nfmt, sizeof *tex);
    kiln_status st = tex ? KILN_OK : KILN_ERR_OUT_OF_MEMORY;
    kiln_context *err_ctx = ctx; /* where the failure's message is */
    double total_secs = 0.0, total_pix = 0.0;
    uint32_t written = 0, want = 1, n = 0;
    {
        /* all threads: the first image is read on it (a large BMP's rows are converted in parallel) */
        kiln_context_params cp;
        kiln_context_params_init(&cp);
        cp.threads = kiln_context_threads(ctx);
        cp.backend = KILN_BACKEND_CPU;
        if (st == KILN_OK && kiln_context_create(&cp, &pf.ctx) != KILN_OK) st = KILN_ERR_OUT_OF_MEMORY;
    }
    pf.threads = kiln_context_threads(ctx);
    /* the Vulkan device starts (driver start-up: up to a second), and the job's pipelines are created,
     * while the first chunk loads */
    pthread_t warm;
    wj.ctx = ctx;
    wj.eps = eps;
    wj.nfmt = nfmt;
    wj.mips = mips;
    wj.mp = &mp;
    atomic_init(&wj.done, 0);
    atomic_init(&wj.stop, 0);
    {
        const char *ext0 = extension(inputs[0]);
        wj.fp = !strcasecmp(ext0, ".exr") || !strcasecmp(ext0, ".hdr");
    }
    uint32_t pre = 0; /* images of the first chunk encoded on the CPU while the device started (both) */
    uint32_t strip_y = 0; /* image `pre`: rows encoded in strips so far */
    /* KILN_EARLY_STRIPS: 0 = whole images only; ROWS[:MAX] (tests) = strips of ROWS rows (rounded up to 16)
     * for any image of 2 strips or more, and at most MAX strips before the CPU stops and waits for the device */
    int strips = 1;
    uint32_t strip_rows = 0, strip_max = UINT32_MAX;
    {
        const char *es = getenv("KILN_EARLY_STRIPS");
        if (es && !strcmp(es, "0")) strips = 0;
        else if (es && es[0] >= '1' && es[0] <= '9') {
            char *end = NULL;
            unsigned long r = strtoul(es, &end, 10);
            strip_rows = r > 65536 ? 65536u : ((uint32_t)r + 15u) & ~15u;
            if (end && *end == ':') strip_max = (uint32_t)strtoul(end + 1, NULL, 10);
        }
    }
    const double t_load0 = now_s();
    int warming = st == KILN_OK && c.ctx_params.backend != KILN_BACKEND_CPU &&
                  pthread_create(&warm, NULL, warm_gpu, &wj) == 0;
    /* the first chunk (on the loader's context while ctx is busy): its size from the first image's */
    if (st == KILN_OK) {
        st = kiln_image_load(pf.ctx, inputs[0], &imgs[0]);
        if (st != KILN_OK) err_ctx = pf.ctx;
    }
    if (st == KILN_OK) {
        size_t per = (size_t)imgs[0].width * imgs[0].height * 4 * (size_t)imgs[0].type;
        want = (uint32_t)(chunk_bytes / (per ? per : 1));
        if (want < 1) want = 1;
        if (want > CHUNK_IMAGES) want = CHUNK_IMAGES;
        n = want < ninputs ? want : ninputs;
        if (n > 1) st = load_images(pf.ctx, inputs + 1, n - 1, imgs + 1, pf.threads);
        if (st != KILN_OK) {
            kiln_image_free(&imgs[0]);
            err_ctx = pf.ctx;
        }
        const char *la = getenv("KILN_LOAD_AHEAD"), *ec = getenv("KILN_EARLY_CPU");
        const int load_ahead = !(la && !strcmp(la, "0"));
        size_t cap = (2 * chunk_bytes) / (per ? per : 1);
        if (cap > FIRST_IMAGES) cap = FIRST_IMAGES;
        /* --backend both: the CPU encodes images while the device starts (only formats whose GPU encoder
         * gives the CPU's bytes: kiln's strategy, not BC6H), then the split batch takes the rest */
        int early = both && !mips && gpu_strategy == 0 && !(ec && !strcmp(ec, "0"));
        for (uint32_t f = 0; f < nfmt; f++)
            if (formats[f] == KILN_FORMAT_BC6H_UFLOAT || formats[f] == KILN_FORMAT_BC6H_SFLOAT) early = 0;
        while (st == KILN_OK && warming && !atomic_load(&wj.done)) {
            /* the early encode only when every input is loaded (one image, or a batch in its first chunk): the
             * decoding of the inputs left is CPU work whatever the backend, the early encode only moves work the device
             * would do. H100 2026-11-27, 256 PNGs of 512^2 at bc1 normal, --backend both: early encode first 493-518 ms;
             * loading ahead first, then the early encode 346-400; no early encode (KILN_EARLY_CPU=0) 286-338, the GPU
             * alone 275-292; one 4096^2 BMP at bc1 high: both 215-222, CPU 229-254, GPU 254-276 */
            const int can_load = load_ahead && n < cap && n < ninputs;
            if (early && pre < n && n >= ninputs) {
                const double te = now_s();
                if (!early_ctx) {
                    kiln_context_params cp = c.ctx_params;
                    cp.backend = KILN_BACKEND_CPU;
                    cp.progress = NULL;
                    cp.threads = pf.threads; /* the device thread mostly waits in the driver */
                    const char *et = getenv("KILN_EARLY_THREADS"); /* bench: the early CPU's threads */
                    if (et && et[0] >= '1' && et[0] <= '9') cp.threads = (uint32_t)strtoul(et, NULL, 10);
                    if (kiln_context_create(&cp, &early_ctx) != KILN_OK) {
                        early = 0;
                        continue;
                    }
                }
                /* a large image in strips (KILN_EARLY_STRIPS=0: whole): the device may come up
                 * meanwhile; the GPU then takes the rest of the image (below) */
                const kiln_image *im = &imgs[pre];
                if (early_strips >= strip_max) {
                    early = 0; /* (tests) the device takes the rest */
                    continue;
                }
                if (strips && (strip_rows ? im->height >= 2 * strip_rows
                                          : im->height >= 256 && (uint64_t)im->width * im->height >= (1u << 20))) {
                    uint32_t s = strip_rows ? strip_rows : (im->height / 32 + 15) & ~15u;
                    uint32_t y1 = strip_y + (s < 16 ? 16 : !strip_rows && s < 64 ? 64 : s);
                    if (y1 > im->height) y1 = im->height;
                    st = encode_rows(early_ctx, im, strip_y, y1, eps, nfmt, &tex[(size_t)pre * nfmt]);
                    strip_y = y1;
                    early_strips++;
                } else {
                    st = kiln_encode_batch(early_ctx, im, 1, eps, nfmt, 0, &tex[(size_t)pre * nfmt]);
                    strip_y = im->height;
                }
                if (st != KILN_OK) {
                    if (strip_y > 0) for (uint32_t f = 0; f < nfmt; f++) kiln_texture_free(&tex[(size_t)pre * nfmt + f]);
                    strip_y = 0;
                    err_ctx = early_ctx;
                    for (size_t t = 0; t < (size_t)pre * nfmt; t++) kiln_texture_free(&tex[t]);
                    for (uint32_t i = 0; i < n; i++) kiln_image_free(&imgs[i]);
                    pre = 0;
                    break;
                }
                if (strip_y >= im->height) {
                    pre++;
                    strip_y = 0;
                }
                tm_early += now_s() - te;
                continue;
            }
            if (!can_load) break;
            uint32_t m = (uint32_t)(cap - n) < ninputs - n ? (uint32_t)(cap - n) : ninputs - n;
            /* steps of 3 images a thread (load_images takes at most 64): small enough to stop soon after
             * the device is ready, large enough that one slow image (or a core the device thread holds)
             * does not idle the other threads at each step's join, as steps of 1 a thread did (H100:
             * 256 PNGs read in 190-205 ms where the decoding alone is ~115 ms on 16 threads) */
            const char *lsv = getenv("KILN_LOAD_STEP"); /* images a thread per step (bench: 1 = before) */
            const uint32_t per = lsv && lsv[0] >= '1' && lsv[0] <= '4' && !lsv[1] ? (uint32_t)(lsv[0] - '0') : 3;
            uint32_t step = pf.threads * per < 64 ? pf.threads * per : 64;
            if (m > step) m = step;
            st = load_images(pf.ctx, inputs + n, m, imgs + n, pf.threads);
            if (st != KILN_OK) {
                for (size_t t = 0; t < (size_t)pre * nfmt; t++) kiln_texture_free(&tex[t]);
                for (uint32_t i = 0; i < n; i++) kiln_image_free(&imgs[i]);
                err_ctx = pf.ctx;
            } else {
                n += m;
            }
        }
    }
    tm_read = now_s() - t_load0;
    /* the device thread is joined before ctx is used (a failure is reported on ctx by the encode itself);
     * a first chunk the CPU encoded whole is written meanwhile (on early_ctx) */
#define JOIN_WARM()                                                                                          \
    do {                                                                                                     \
        if (warming) {                                                                                       \
            const double tw = now_s();                                                                       \
            pthread_join(warm, NULL);                                                                        \
            warming = 0;                                                                                     \
            tm_wait += now_s() - tw;                                                                         \
        }                                                                                                    \
    } while (0)
    if (!(st == KILN_OK && n && pre == n && early_ctx)) JOIN_WARM();
    for (uint32_t i0 = 0; i0 < ninputs && st == KILN_OK;) {
        const uint32_t i1 = i0 + n, n1 = ninputs - i1 < want ? ninputs - i1 : want;
        pthread_t th;
        int threaded = 0;
        if (n1) {
            pf.inputs = inputs + i1;
            pf.n = n1;
            pf.imgs = next_imgs;
            pf.st = KILN_OK;
            threaded = pthread_create(&th, NULL, prefetch_main, &pf) == 0;
        }
        if (mips || n > pre) JOIN_WARM();
        double t0 = now_s();
        int batch_called = 0;
        if (mips) {
            for (uint32_t i = 0; i < n && st == KILN_OK; i++)
                for (uint32_t f = 0; f < nfmt && st == KILN_OK; f++)
                    st = kiln_encode_mips(ctx, &imgs[i], &eps[f], &mp, &tex[i * nfmt + f]);
        } else {
            if (strip_y > 0 && n > pre) { /* the rest of an image begun in strips on the CPU: on the device */
                const double tr = now_s();
                st = encode_rows(ctx, &imgs[pre], strip_y, imgs[pre].height, eps, nfmt, &tex[(size_t)pre * nfmt]);
                tm_rest += now_s() - tr;
                if (st != KILN_OK)
                    for (uint32_t f = 0; f < nfmt; f++) kiln_texture_free(&tex[(size_t)pre * nfmt + f]);
                rest_rows = imgs[pre].height - strip_y;
                strip_y = 0;
                pre++;
                batch_called = 1;
            }
            if (st == KILN_OK && n > pre) {
                st = kiln_encode_batch(ctx, imgs + pre, n - pre, eps, nfmt, both ? KILN_ENCODE_BATCH_SPLIT : 0,
                                       tex + (size_t)pre * nfmt);
                batch_called = 1;
            }
            if (st == KILN_OK && pre) early_images += pre;
            pre = 0;
        }
        double secs = now_s() - t0 + (i0 == 0 ? tm_early : 0.0);
        total_secs += secs;
        tm_encode += secs;
        if (st == KILN_OK && (mips || batch_called) && kiln_last_gpu_ms(ctx) >= 0.0) {
            tm_kernel += kiln_last_gpu_ms(ctx);
            kernel_known = 1;
        }
        const double t_w0 = now_s();
        /* what the summary lines need of ctx, read before it may be torn down */
        const kiln_gpu_info *gi0 = warming ? NULL : kiln_context_gpu(ctx);
        char gname[sizeof gi0->name];
        snprintf(gname, sizeof gname, "%s", gi0 ? gi0->name : "");
        const double gms = warming ? -1.0 : kiln_last_gpu_ms(ctx);
        const uint32_t cthreads = kiln_context_threads(warming ? early_ctx : ctx);
        if (st == KILN_OK && n1 == 0 && !warming && gi0 && !fast_exit && !td_started) {
            const char *tov = getenv("KILN_TEARDOWN_OVERLAP");
            kiln_context_params cp = c.ctx_params;
            cp.backend = KILN_BACKEND_CPU;
            cp.progress = NULL;
            cp.threads = pf.threads;
            if (!(tov && !strcmp(tov, "0")) && kiln_context_create(&cp, &wctx) == KILN_OK) {
                if (timings) kiln_context_gpu_timings(ctx, &gt);
                td.ctx = ctx;
                if (pthread_create(&td_thread, NULL, teardown_main, &td) == 0) {
                    td_started = 1;
                    ctx = NULL; /* the thread's now */
                } else {
                    td.ctx = NULL;
                }
            }
        }
        double chunk_pix = 0.0;
        for (uint32_t i = 0; i < n && st == KILN_OK; i++)
            for (uint32_t f = 0; f < nfmt; f++)
                for (uint32_t l = 0; l < tex[i * nfmt + f].levels; l++)
                    chunk_pix += (double)kiln_level_dim(imgs[i].width, l) * kiln_level_dim(imgs[i].height, l);
        total_pix += chunk_pix;
        /* several outputs: written on all threads first (wst: each one's status), then the loop below
         * reports them in order (and saves a failed one again on save_ctx for its message) */
        uint32_t par_n = 0;
        kiln_status *wst = NULL;
        if (st == KILN_OK && n * nfmt > 1 && pf.threads > 1 && write_par) {
            par_n = n * nfmt;
            const char **paths = malloc(sizeof *paths * par_n);
            wst = malloc(sizeof *wst * par_n);
            if (paths && wst) {
                for (uint32_t k = 0; k < par_n; k++) paths[k] = out_names + ((size_t)i0 * nfmt + k) * ncap;
                (void)write_parallel(tex, paths, par_n, &sp, wst, pf.threads);
            } else {
                par_n = 0;
            }
            free(paths);
        }
        for (uint32_t i = 0; i < n && st == KILN_OK; i++)
            for (uint32_t f = 0; f < nfmt && st == KILN_OK; f++) {
                const char *o = out_names + ((size_t)(i0 + i) * nfmt + f) * ncap;
                sp.container = !strcasecmp(extension(o), ".dds") ? KILN_CONTAINER_DDS : KILN_CONTAINER_KTX2;
                kiln_texture *t = &tex[i * nfmt + f];
                /* ctx is the device thread's until joined, the teardown thread's after the last encode */
                kiln_context *save_ctx = warming ? early_ctx : td_started ? wctx : ctx;
                if (!par_n || wst[i * nfmt + f] != KILN_OK) st = kiln_texture_save(save_ctx, t, o, &sp);
                if (st != KILN_OK) {
                    err_ctx = save_ctx;
                    break;
                }
                written++;
                if (!c.quiet) {
                    char where[300];
                    if (warming)
                        snprintf(where, sizeof where, "CPU, %u threads, while the GPU started", cthreads);
                    else if ((mips || batch_called) && gms >= 0.0 && gname[0])
                        snprintf(where, sizeof where, "GPU %s%s, kernels %.3f ms", gname, both ? " + CPU" : "", gms);
                    else
                        snprintf(where, sizeof where, "CPU, %u thread%s", cthreads, cthreads == 1 ? "" : "s");
                    printf("%s: %ux%u -> %s (%s, %s, %u level%s), %.3f s, %.2f Mpix/s, %s\n", inputs[i0 + i], imgs[i].width,
                           imgs[i].height, o, fis[f]->name, quality_name(quality), t->levels, t->levels == 1 ? "" : "s", secs,
                           secs > 0 ? chunk_pix / secs / 1e6 : 0.0, where);
                }
            }
        free(wst);
        tm_write += now_s() - t_w0;
        for (uint32_t t = 0; t < n * nfmt; t++) kiln_texture_free(&tex[t]);
        for (uint32_t i = 0; i < n; i++) kiln_image_free(&imgs[i]);
        if (n1) {
            const double tl0 = now_s();
            if (threaded) pthread_join(th, NULL);
            else prefetch_main(&pf);
            tm_load_wait += now_s() - tl0;
            if (pf.st != KILN_OK && st == KILN_OK) {
                st = pf.st;
                err_ctx = pf.ctx;
            } else if (pf.st == KILN_OK && st != KILN_OK) {
                for (uint32_t i = 0; i < n1; i++) kiln_image_free(&next_imgs[i]);
            }
        }
        kiln_image *sw = imgs;
        imgs = next_imgs;
        next_imgs = sw;
        i0 = i1;
        n = n1;
    }
    atomic_store(&wj.stop, 1); /* all encoded: a device still starting skips its warm-up */
    {
        const char *fx = getenv("KILN_FAST_EXIT");
        abandon = st == KILN_OK && warming && !atomic_load(&wj.done) && !(fx && !strcmp(fx, "0"));
    }
    if (!abandon) JOIN_WARM();
#undef JOIN_WARM
    free(tex);
    if (st != KILN_OK) {
        rc = kiln_cli_fail(cmd, err_ctx, st);
    } else {
        kiln_cli_progress_done();
        if (!c.quiet && nout > 1)
            printf("%u files written, encoding %.3f s, %.2f Mpix/s\n", written, total_secs,
                   total_secs > 0 ? total_pix / total_secs / 1e6 : 0.0);
        rc = KILN_EXIT_OK;
    }
cleanup:
#undef FAIL_USAGE
    kiln_context_free(pf.ctx);
    kiln_context_free(early_ctx);
    double tm_save = 0.0, tm_free = 0.0;
    if (td_started) {
        const double tj = now_s();
        pthread_join(td_thread, NULL);
        tm_free = now_s() - tj; /* what the teardown added after the writes */
        tm_save = td.save_s;
    }
    kiln_context_free(wctx);
    if ((timings || fast_exit || abandon) && (ctx || td_started) && rc == KILN_EXIT_OK) {
        const double ts0 = now_s();
        /* else kiln_context_free does it (timed apart here); not while the device thread has ctx */
        if (!abandon && ctx) (void)kiln_context_save_pipeline_cache(ctx);
        if (!td_started) tm_save = now_s() - ts0;
        if (!abandon && ctx) kiln_context_gpu_timings(ctx, &gt);
        const double tf0 = now_s();
        if (!abandon && !fast_exit && ctx) {
            kiln_context_free(ctx);
            ctx = NULL;
        }
        if (!td_started) tm_free = now_s() - tf0;
        const double tm_total = now_s() - t_start;
        static const char *cache_states[] = {"off", "new", "loaded", "rejected"};
        if (timings) {
        fprintf(stderr, "kiln timings (ms, this process from argument parsing; %s):\n",
                gt.instance_ms > 0.0 || abandon ? "the device starts on a thread beside the read" : "no Vulkan device");
        if (auto_tried)
            fprintf(stderr, "  %-14s %9.2f  (CPU encode estimated; the GPU: %.2f = device start %.2f - %.2f hidden by the "
                    "read + teardown + transfers; %s)\n", "auto estimate", auto_est.cpu_ms, auto_est.gpu_ms,
                    auto_est.gpu_start_ms, auto_est.hidden_ms,
                    auto_cpu ? "the CPU was chosen, no device started" : "the device was started");
        fprintf(stderr, "  %-14s %9.2f\n", "read+decode", tm_read * 1e3);
        fprintf(stderr, "  %-14s %9.2f  (instance %.2f + device %.2f, beside the read)\n", "device start",
                gt.instance_ms + gt.device_ms, gt.instance_ms, gt.device_ms);
        fprintf(stderr, "  %-14s %9.2f  (loader queries %.2f, vkCreateInstance %.2f, vkEnumeratePhysicalDevices %.2f, "
                "properties %.2f)\n", "  instance", gt.instance_ms, gt.instance_query_ms, gt.instance_create_ms,
                gt.enumerate_ms, gt.describe_ms);
        fprintf(stderr, "  %-14s %9.2f  (features %.2f, vkCreateDevice %.2f, pool + pipeline cache + queries %.2f)\n",
                "  device", gt.device_ms, gt.device_query_ms, gt.device_create_ms, gt.device_rest_ms);
        fprintf(stderr, "  %-14s %9.2f  (%u created; warm-up encode %s)\n", "pipelines", gt.pipeline_ms, gt.pipelines,
                abandon ? "not waited for" : wj.warmed ? "on the device thread" : "not run");
        if (abandon)
            fprintf(stderr, "  %-14s %9.2f  (device thread: still starting at the end, not waited for)\n", "device wait", 0.0);
        else
            fprintf(stderr, "  %-14s %9.2f  (device thread: %.2f start, %.2f warm-up)\n", "device wait", tm_wait * 1e3,
                    wj.t0 > 0.0 ? (wj.t_device - wj.t0) * 1e3 : 0.0, wj.t0 > 0.0 ? (wj.t_done - wj.t_device) * 1e3 : 0.0);
        if (kernel_known)
            fprintf(stderr, "  %-14s %9.2f  (kernels %.2f; buffers %.2f in %u; the rest: upload, download, host)\n", "encode",
                    tm_encode * 1e3, tm_kernel, gt.alloc_ms, gt.allocs);
        else
            fprintf(stderr, "  %-14s %9.2f  (CPU)\n", "encode", tm_encode * 1e3);
        fprintf(stderr, "  %-14s %9.2f  (%u image%s on the CPU while the device started: --backend both; in encode;"
                " %u strips, the last image's other %u rows on the device in %.2f ms)\n",
                "early cpu", tm_early * 1e3, early_images, early_images == 1 ? "" : "s", early_strips, rest_rows,
                tm_rest * 1e3);
        fprintf(stderr, "  %-14s %9.2f\n", "later reads", tm_load_wait * 1e3);
        fprintf(stderr, "  %-14s %9.2f\n", "write", tm_write * 1e3);
        fprintf(stderr, "  %-14s %9.2f  (pipeline cache)\n", "cache save", tm_save * 1e3);
        if (td_started)
            fprintf(stderr, "  %-14s %9.2f  (device and context destruction: %.2f on a thread beside the write; the rest)\n",
                    "teardown", tm_free * 1e3, td.free_s * 1e3);
        else
            fprintf(stderr, "  %-14s %9.2f  (device and context destruction%s)\n", "teardown", tm_free * 1e3,
                    abandon ? ": skipped, the device was still starting" : fast_exit ? ": skipped (KILN_FAST_EXIT=1)" : "");
        fprintf(stderr, "  %-14s %9.2f\n", "total", tm_total * 1e3);
        fprintf(stderr, "pipeline cache: %s", cache_states[(unsigned)gt.cache_state < 4 ? gt.cache_state : 0]);
        if (gt.cache_state != KILN_PIPELINE_CACHE_OFF)
            fprintf(stderr, ", %u pipeline file%s read (%llu bytes), %u written", gt.cache_files_loaded,
                    gt.cache_files_loaded == 1 ? "" : "s", (unsigned long long)gt.cache_bytes, gt.cache_files_written);
        if (gt.cache_path[0]) fprintf(stderr, ", %s", gt.cache_path);
        if (gt.cache_note[0]) fprintf(stderr, " (%s)", gt.cache_note);
        fprintf(stderr, "\n");
        }
    }
    if ((abandon || fast_exit) && ctx && rc == KILN_EXIT_OK) {
        fflush(stdout);
        fflush(stderr);
        _exit(rc); /* see abandon / fast_exit above */
    }
    kiln_context_free(ctx);
    free(out_names);
    free(inputs);
    return rc;
}

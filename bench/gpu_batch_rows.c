/* gpu_batch_rows.c - issue 4's "batch of 256 textures of 512^2" rows for every GPU format and quality
 * (helper batchrows): one markdown table, a row per format x quality x GPU strategy.
 *
 * usage: gpu_batch_rows [--testdata DIR] [--count N] [--size S] [--formats a,b,...] [--qualities fast,...]
 *                       [--strategies kiln,seed] [--runs N] [--row-budget-s S] [--time-limit-s S]
 *                       [--cpu-runs N] [--cpu-count N]
 *                       [--no-cpu] [--psnr-images N] [--device N] [--threads N] [--tmp DIR]
 *
 * Images: --count (default 256) crops of --size^2 (default 512) cut, wrapping around (tiled), from the
 * test images: LDR formats from DIR/ldr and DIR/normal (PNGs of at least 128 px a side, in name order,
 * image k from file k mod n at an offset that moves with k), BC6H from DIR/hdr (.exr, .hdr; float).
 * DIR defaults to ../shared/testdata, then shared/testdata, then /work/shared/testdata.
 * Per row (median / min over --runs, default 3, after one warm-up encode of one image; a row whose first
 * run takes long runs fewer times so that it stays within --row-budget-s, default 4 s):
 *   - kernel: Vulkan timestamps summed over the batch's images, min and median over the runs, Gpix/s
 *     from the min. "ring" rows (kiln_encode_batch takes the pipelined, overlapped encoder): the batch's
 *     own kiln_last_gpu_ms (summed over its jobs); "sync" rows (image by image: upload, encode, download,
 *     wait): the batch's kiln_last_gpu_ms too (summed over its images), and an extra pass of
 *     kiln_encode_image per image on a VULKAN context, whose wall is "1-by-1".
 *     Blocks a GPU encoder hands back to the CPU (ETC2 fast's T/H blocks on the synchronous path or with
 *     KILN_GPU_ETC2_TH=host, ...) are not in it; on the ring ETC2 fast finishes them on the GPU (in it).
 *     ETC/EAC take the ring since helper etcring; KILN_GPU_ETC_RING=0 in the environment: the old
 *     synchronous path (image by image), for A/B rows;
 *   - batch: wall of kiln_encode_batch (the images in memory, the outputs in memory), min and median;
 *     f2f: batch plus writing every output (raw blocks) to a file in --tmp, median; Mpix/s from f2f;
 *   - CPU: kiln_encode_batch on a CPU context (all host threads unless --threads), median of --cpu-runs
 *     (default 1) over the first --cpu-count images (default 16: the CPU's high/max take minutes for 256;
 *     fewer than --count: the time is scaled to the whole batch and marked ~; "same" covers those images);
 *     "CPU/f2f" = CPU ms over the GPU's f2f ms;
 *   - PSNR of the GPU and CPU results over the first --psnr-images (default 16) images (format's
 *     channels, as bench/gpu_encode.c; "-" for BC6H), and "same" when every GPU output equals the CPU's.
 * --time-limit-s S: rows that would start after S seconds print "skipped" (the table stays complete).
 * Rows the GPU cannot encode print "n/a" with the reason. Runs from a prebuilt binary (SPIR-V embedded). */
#include "core/internal.h"
#include "gpu/gpu_batch.h"

#include "gpu_bench_util.h"

#include <dirent.h>
#include <unistd.h>

#define MAX_SRC 64

typedef struct src_set {
    kiln_image img[MAX_SRC];
    char name[MAX_SRC][64];
    int n;
} src_set;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int has_ext(const char *name, const char *const *exts)
{
    size_t n = strlen(name);
    for (; *exts; exts++) {
        size_t e = strlen(*exts);
        if (n > e && strcasecmp(name + n - e, *exts) == 0) return 1;
    }
    return 0;
}

/* Loads the images of dir with one of exts (at least min_side a side) into s, in name order. */
static void load_dir(kiln_context *cpu, const char *dir, const char *const *exts, uint32_t min_side, src_set *s)
{
    DIR *d = opendir(dir);
    if (!d) return;
    char *names[256];
    int nn = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && nn < 256)
        if (e->d_name[0] != '.' && has_ext(e->d_name, exts)) names[nn++] = strdup(e->d_name);
    closedir(d);
    qsort(names, (size_t)nn, sizeof *names, cmp_str);
    for (int i = 0; i < nn; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        kiln_image im;
        if (s->n < MAX_SRC && names[i] && kiln_image_load(cpu, path, &im) == KILN_OK) {
            if (im.width >= min_side && im.height >= min_side) {
                s->img[s->n] = im;
                snprintf(s->name[s->n], sizeof s->name[0], "%s", names[i]);
                s->n++;
            } else {
                kiln_image_free(&im);
            }
        }
        free(names[i]);
    }
}

/* count crops of size^2 from the images of s (wrapping). */
static kiln_image *make_batch(const src_set *s, uint32_t count, uint32_t size)
{
    kiln_image *b = calloc(count, sizeof *b);
    if (!b) return NULL;
    for (uint32_t k = 0; k < count; k++) {
        const kiln_image *src = &s->img[k % (uint32_t)s->n];
        uint32_t round = k / (uint32_t)s->n;
        if (crop(src, round * 131u * 4u, round * 197u * 4u, size, size, &b[k]) != 0) return NULL;
    }
    return b;
}

static void free_textures(kiln_texture *t, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) kiln_texture_free(&t[i]);
}

typedef struct settings {
    uint32_t count, size, cpu_count, psnr_images;
    int runs, cpu_runs, do_cpu;
    double row_budget_ms, time_limit_ms; /* time_limit_ms: 0 = none */
    const char *tmpdir;
} settings;

/* One GPU row (format x quality x strategy); ref: the CPU's textures (cpu_count of them) or NULL. */
static void gpu_row(kiln_context *gpu, kiln_context *cpu, const settings *s, const kiln_image *imgs,
                    const kiln_encode_params *ep, const char *qname, const char *sname, const kiln_texture *ref,
                    double cpu_ms, int cpu_scaled, double cpu_psnr)
{
    const kiln_format_info *fi = kiln_format_get_info(ep->format);
    const uint32_t n = s->count;
    const double mpix = (double)n * s->size * s->size / 1e6;
    size_t bytes = kiln_format_image_size(ep->format, s->size, s->size);
    uint8_t *buf = malloc(bytes);
    kiln_texture *out = calloc(n, sizeof *out);
    double kt[64], ot[64], bt[64], ft[64];
    if (!buf || !out) {
        printf("| %s | %s | %s | n/a: out of memory |||||||||||||||\n", fi->name, qname, sname);
        free(buf);
        free(out);
        return;
    }
    kiln_status st = kiln_encode_image(gpu, &imgs[0], ep, buf, bytes); /* warm-up: pipelines, buffers */
    if (st != KILN_OK) {
        printf("| %s | %s | %s | n/a: %s |||||||||||||||\n", fi->name, qname, sname, kiln_last_error(gpu));
        fflush(stdout);
        free(buf);
        free(out);
        return;
    }
    /* the batch takes the pipelined encoder when every image is accepted (kiln_encode_batch) */
    int ring = 1;
    for (uint32_t i = 0; i < n && ring; i++) ring = kiln__gpu_bc_ring_probe(gpu, &imgs[i], ep) == KILN_OK;
    kiln__clear_error(gpu);
    const char *path = ring ? "ring" : "sync";
    int runs = s->runs > 64 ? 64 : s->runs, same = -1;
    double gse = 0.0, gcount = 0.0;
    char fpath[1024];
    for (int r = 0; r < runs && st == KILN_OK; r++) {
        double t0 = 0.0, t1 = 0.0, k = 0.0;
        if (!ring) { /* the 1-by-1 wall: kiln_encode_image per image (its kernel sum checks the batch's) */
            t0 = now_ms();
            for (uint32_t i = 0; i < n && st == KILN_OK; i++) {
                st = kiln_encode_image(gpu, &imgs[i], ep, buf, bytes);
                double g = kiln_last_gpu_ms(gpu);
                k += g > 0.0 ? g : 0.0;
            }
            t1 = now_ms();
            if (st != KILN_OK) break;
        }
        ot[r] = t1 - t0;
        t0 = now_ms();
        st = kiln_encode_batch(gpu, imgs, n, ep, 1, 0, out);
        t1 = now_ms();
        if (st != KILN_OK) break;
        /* kiln_encode_batch's kiln_last_gpu_ms: summed over its jobs (ring) or images (sync; helper syncbatch) */
        kt[r] = kiln_last_gpu_ms(gpu) >= 0.0 ? kiln_last_gpu_ms(gpu) : k;
        for (uint32_t i = 0; i < n; i++) {
            size_t size = 0;
            const uint8_t *d = kiln_texture_image(&out[i], 0, 0, 0, &size);
            snprintf(fpath, sizeof fpath, "%s/kiln_rows_%d_%u.bin", s->tmpdir, (int)getpid(), i);
            write_file(fpath, d, size);
        }
        double t2 = now_ms();
        bt[r] = t1 - t0;
        ft[r] = t2 - t0;
        for (uint32_t i = 0; i < n; i++) {
            snprintf(fpath, sizeof fpath, "%s/kiln_rows_%d_%u.bin", s->tmpdir, (int)getpid(), i);
            remove(fpath);
        }
        if (r == 0) {
            if (ref) {
                same = 1;
                for (uint32_t i = 0; i < s->cpu_count && i < n; i++) {
                    size_t a = 0, b = 0;
                    const uint8_t *pa = kiln_texture_image(&out[i], 0, 0, 0, &a), *pb = kiln_texture_image(&ref[i], 0, 0, 0, &b);
                    if (a != b || memcmp(pa, pb, a)) same = 0;
                }
            }
            if (!(fi->flags & KILN_FF_FLOAT))
                for (uint32_t i = 0; i < s->psnr_images && i < n; i++) {
                    size_t a = 0;
                    const uint8_t *pa = kiln_texture_image(&out[i], 0, 0, 0, &a);
                    sse_blocks(cpu, &imgs[i], ep->format, pa, &gse, &gcount);
                }
            /* a long row runs fewer times */
            double per_run = ot[0] + ft[0];
            if (per_run * runs > s->row_budget_ms) {
                int fit = (int)(s->row_budget_ms / (per_run > 1.0 ? per_run : 1.0));
                runs = fit < 1 ? 1 : fit;
            }
        }
        free_textures(out, n);
    }
    if (st != KILN_OK) {
        printf("| %s | %s | %s | n/a: %s |||||||||||||||\n", fi->name, qname, sname, kiln_last_error(gpu));
        fflush(stdout);
        free_textures(out, n);
        free(buf);
        free(out);
        return;
    }
    double kmin = minimum(kt, runs), kmed = median(kt, runs), omed = median(ot, runs);
    char one_col[32] = "-";
    if (!ring) snprintf(one_col, sizeof one_col, "%.1f", omed);
    double bmin = minimum(bt, runs), bmed = median(bt, runs), fmed = median(ft, runs);
    char cpu_col[48] = "-", ratio_col[32] = "-", gp[32] = "-", cp[32] = "-";
    if (cpu_ms >= 0.0) {
        snprintf(cpu_col, sizeof cpu_col, "%s%.1f", cpu_scaled ? "~" : "", cpu_ms);
        snprintf(ratio_col, sizeof ratio_col, "%.2fx", cpu_ms / fmed);
    }
    if (gcount > 0.0) snprintf(gp, sizeof gp, "%.3f", psnr_of(gse, gcount));
    if (cpu_psnr == cpu_psnr) snprintf(cp, sizeof cp, "%.3f", cpu_psnr);
    printf("| %s | %s | %s | %s | %d | %.3f | %.3f | %.3f | %s | %.1f | %.1f | %.1f | %.0f | %s | %s | %s | %s | %s |\n",
           fi->name, qname, sname, path, runs, kmin, kmed, kmin > 0.0 ? mpix / kmin /* Mpix per ms = Gpix/s */ : 0.0, one_col, bmin, bmed, fmed,
           mpix / (fmed / 1e3), cpu_col, ratio_col, gp, cp, same < 0 ? "-" : same ? "same" : "differ");
    fflush(stdout);
    free(buf);
    free(out);
}

static const char *const default_formats =
    "bc1,bc1a,bc3,bc4,bc4-snorm,bc5,bc5-snorm,etc1,etc2-rgb,etc2-rgba,etc2-rgb-a1,eac-r11,eac-r11-snorm,eac-rg11,"
    "eac-rg11-snorm,bc6h,bc6h-sf";

int main(int argc, char **argv)
{
    settings s = {256, 512, 0, 16, 3, 1, 1, 4000.0, 0.0, NULL};
    int device = -1, threads = 0, cpu_count = -1;
    const char *formats = default_formats, *qualities = "fast,normal,high,max", *strategies = "kiln,seed";
    const char *testdata = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--testdata") && v) testdata = argv[++i];
        else if (!strcmp(a, "--count") && v) s.count = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--size") && v) s.size = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--formats") && v) formats = argv[++i];
        else if (!strcmp(a, "--qualities") && v) qualities = argv[++i];
        else if (!strcmp(a, "--strategies") && v) strategies = argv[++i];
        else if (!strcmp(a, "--runs") && v) s.runs = atoi(argv[++i]);
        else if (!strcmp(a, "--row-budget-s") && v) s.row_budget_ms = atof(argv[++i]) * 1e3;
        else if (!strcmp(a, "--time-limit-s") && v) s.time_limit_ms = atof(argv[++i]) * 1e3;
        else if (!strcmp(a, "--cpu-runs") && v) s.cpu_runs = atoi(argv[++i]);
        else if (!strcmp(a, "--cpu-count") && v) cpu_count = atoi(argv[++i]);
        else if (!strcmp(a, "--no-cpu")) s.do_cpu = 0;
        else if (!strcmp(a, "--psnr-images") && v) s.psnr_images = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--device") && v) device = atoi(argv[++i]);
        else if (!strcmp(a, "--threads") && v) threads = atoi(argv[++i]);
        else if (!strcmp(a, "--tmp") && v) s.tmpdir = argv[++i];
        else {
            int help = !strcmp(a, "--help") || !strcmp(a, "-h");
            fprintf(stderr, "usage: %s [--testdata DIR] [--count N] [--size S] [--formats a,b] [--qualities fast,normal,high,max] "
                            "[--strategies kiln,seed] [--runs N] [--row-budget-s S] [--time-limit-s S] [--cpu-runs N] [--cpu-count N] [--no-cpu] "
                            "[--psnr-images N] [--device N] [--threads N] [--tmp DIR]\n", argv[0]);
            return help ? 0 : 2;
        }
    }
    if (s.count == 0 || s.count > 4096 || s.size == 0 || s.size > 8192 || s.runs < 1 || s.runs > 64 || s.cpu_runs < 1 ||
        s.cpu_runs > 64 || threads < 0 || s.row_budget_ms <= 0.0 || cpu_count == 0 || cpu_count > (int)s.count) {
        fprintf(stderr, "gpu_batch_rows: bad settings\n");
        return 2;
    }
    s.cpu_count = cpu_count < 0 ? (s.count < 16 ? s.count : 16u) : (uint32_t)cpu_count;
    if (!s.tmpdir) s.tmpdir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

    kiln_context *gpu = NULL, *cpu = NULL;
    if (!open_contexts("gpu_batch_rows", device, threads, &gpu, &cpu)) return 1;
    const kiln_gpu_info *info = kiln_context_gpu(gpu);
    if (!info) {
        fprintf(stderr, "gpu_batch_rows: %s\n", kiln_last_error(gpu)[0] ? kiln_last_error(gpu) : "no Vulkan device");
        return 5;
    }

    /* the test images */
    static const char *const tries[] = {"../shared/testdata", "shared/testdata", "/work/shared/testdata"};
    char dir[1024];
    static src_set ldr, hdr;
    static const char *const png[] = {".png", NULL}, *const hdrx[] = {".exr", ".hdr", NULL};
    for (int t = 0; t < 3 && ldr.n == 0; t++) {
        const char *base = testdata ? testdata : tries[t];
        snprintf(dir, sizeof dir, "%s/ldr", base);
        load_dir(cpu, dir, png, 128, &ldr);
        snprintf(dir, sizeof dir, "%s/normal", base);
        load_dir(cpu, dir, png, 128, &ldr);
        snprintf(dir, sizeof dir, "%s/hdr", base);
        load_dir(cpu, dir, hdrx, 64, &hdr);
        if (ldr.n) testdata = base;
        if (testdata && !ldr.n) break;
    }
    if (!ldr.n) {
        fprintf(stderr, "gpu_batch_rows: no test images (ldr/*.png) under %s; pass --testdata DIR\n",
                testdata ? testdata : "../shared/testdata, shared/testdata or /work/shared/testdata");
        return 3;
    }
    kiln_image *lb = make_batch(&ldr, s.count, s.size), *hb = hdr.n ? make_batch(&hdr, s.count, s.size) : NULL;
    if (!lb || (hdr.n && !hb)) {
        fprintf(stderr, "gpu_batch_rows: out of memory\n");
        return 1;
    }

    time_t now = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    char host[128] = "?";
    gethostname(host, sizeof host - 1);
    printf("## kiln GPU batch rows: %u x %u^2 per format x quality\n\n", s.count, s.size);
    printf("- date: %s, host: %s, CPU threads: %u\n", date, host, kiln_context_threads(cpu));
    printf("- device: %s (Vulkan %u.%u.%u, subgroup %u), driver: %s\n", info->name, info->api_version >> 22,
           (info->api_version >> 12) & 1023u, info->api_version & 4095u, info->subgroup_size, info->driver);
    printf("- images: %s/{ldr,normal} (%d PNGs >= 128 px) for LDR formats, %s/hdr (%d) for BC6H; crops of %u^2, tiled\n",
           testdata, ldr.n, testdata, hdr.n, s.size);
    printf("- runs: %d (fewer where one run passes the %.0f s row budget: column \"runs\"), CPU runs: %d over %u images%s\n",
           s.runs, s.row_budget_ms / 1e3, s.cpu_runs, s.cpu_count, s.cpu_count < s.count ? " (scaled: ~)" : "");
    printf("- kernel = timestamps summed over the images (ring: the batch's own; sync: a kiln_encode_image per image, whose wall is "
           "1-by-1); batch = kiln_encode_batch wall (in memory); f2f = batch + writing every output file; Gpix/s from "
           "kernel min, Mpix/s from f2f; path ring = pipelined (overlapped), sync = image by image\n");
    printf("- command:");
    for (int i = 0; i < argc; i++) printf(" %s", argv[i]);
    printf("\n\n");
    printf("| format | quality | strategy | path | runs | kernel min ms | kernel med ms | kernel Gpix/s | 1-by-1 med ms | "
           "batch min ms | batch med ms | f2f med ms | f2f Mpix/s | CPU ms | CPU/f2f | PSNR GPU | PSNR CPU | bytes |\n");
    printf("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    fflush(stdout);

    const double t_start = now_ms();
    char fname[64], qname[32], sname[32];
    for (int fi_ = 0; list_item(formats, fi_, fname, sizeof fname); fi_++) {
        kiln_format f = kiln_format_from_name(fname);
        const kiln_format_info *fi = kiln_format_get_info(f);
        if (!fi || !(fi->flags & KILN_FF_COMPRESSED)) {
            fprintf(stderr, "gpu_batch_rows: %s is not a block format\n", fname);
            continue;
        }
        const kiln_image *imgs = (fi->flags & KILN_FF_FLOAT) ? hb : lb;
        if (!imgs) {
            printf("| %s | - | - | n/a: no HDR test images |||||||||||||||\n", fi->name);
            continue;
        }
        for (int qi = 0; list_item(qualities, qi, qname, sizeof qname); qi++) {
            kiln_quality q = parse_quality(qname);
            if ((int)q < 0) {
                fprintf(stderr, "gpu_batch_rows: unknown quality %s\n", qname);
                continue;
            }
            kiln_encode_params ep;
            kiln_encode_params_init(&ep, f, q);
            if (s.time_limit_ms > 0.0 && now_ms() - t_start > s.time_limit_ms) {
                printf("| %s | %s | - | skipped: past --time-limit-s |||||||||||||||\n", fi->name, qname);
                fflush(stdout);
                continue;
            }
            /* the CPU path once per format x quality */
            kiln_texture *ref = NULL;
            double cpu_ms = -1.0, cpu_psnr = NAN;
            if (s.do_cpu) {
                ref = calloc(s.cpu_count, sizeof *ref);
                double ct[64];
                int ok = ref != NULL;
                for (int r = 0; r < s.cpu_runs && ok; r++) {
                    if (r) free_textures(ref, s.cpu_count);
                    double t0 = now_ms();
                    ok = kiln_encode_batch(cpu, imgs, s.cpu_count, &ep, 1, 0, ref) == KILN_OK;
                    ct[r] = now_ms() - t0;
                }
                if (ok) {
                    cpu_ms = median(ct, s.cpu_runs) * (double)s.count / (double)s.cpu_count;
                    if (!(fi->flags & KILN_FF_FLOAT)) {
                        double se = 0.0, n = 0.0;
                        for (uint32_t i = 0; i < s.psnr_images && i < s.cpu_count; i++) {
                            size_t a = 0;
                            const uint8_t *d = kiln_texture_image(&ref[i], 0, 0, 0, &a);
                            sse_blocks(cpu, &imgs[i], f, d, &se, &n);
                        }
                        cpu_psnr = psnr_of(se, n);
                    }
                } else {
                    fprintf(stderr, "gpu_batch_rows: CPU %s %s: %s\n", fi->name, qname, kiln_last_error(cpu));
                    free(ref);
                    ref = NULL;
                }
            }
            for (int si = 0; list_item(strategies, si, sname, sizeof sname); si++) {
                if (!strcmp(sname, "none")) { /* --strategies none: the CPU column only */
                    printf("| %s | %s | none | - | - | - | - | - | - | - | - | - | - | %s%.1f | - | - | %.3f | - |\n", fi->name,
                           qname, s.cpu_count < s.count ? "~" : "", cpu_ms, cpu_psnr == cpu_psnr ? cpu_psnr : 0.0);
                    fflush(stdout);
                    continue;
                }
                ep.gpu_strategy = !strcmp(sname, "seed") ? 1 : 0;
                gpu_row(gpu, cpu, &s, imgs, &ep, qname, sname, ref, cpu_ms, s.cpu_count < s.count, cpu_psnr);
            }
            if (ref) {
                free_textures(ref, s.cpu_count);
                free(ref);
            }
        }
    }
    printf("\n- total bench time: %.1f s\n", (now_ms() - t_start) / 1e3);
    for (uint32_t k = 0; k < s.count; k++) {
        kiln_image_free(&lb[k]);
        if (hb) kiln_image_free(&hb[k]);
    }
    free(lb);
    free(hb);
    for (int i = 0; i < ldr.n; i++) kiln_image_free(&ldr.img[i]);
    for (int i = 0; i < hdr.n; i++) kiln_image_free(&hdr.img[i]);
    kiln_context_free(gpu);
    kiln_context_free(cpu);
    return 0;
}

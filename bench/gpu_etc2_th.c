/* gpu_etc2_th.c - bench of the GPU ETC2 T / H pass (src/gpu/gpu_etc2_th.c, shaders/enc_etc2_th.comp).
 *
 *   gpu_etc2_th [--size N] [--runs R] [--threads T] [--quality 0-3] [--a1] [--perceptual] [--check B]
 *               [--lanes L[:P],...] [image.png]
 *
 * The image (default ../shared/testdata/ldr/stk_generic_rock_a_512.png, mirrored-tiled to N x N, default 4096)
 * gets the CPU's state before T / H (kiln__etc2_search_pre_th: ETC1 modes + planar, on T threads), then the
 * GPU pass runs R times (default 5) after a warm-up, each from that state: kernel ms (Vulkan timestamps) min and
 * median, blocks above the quality's gate / improved, and "== CPU": the first B blocks (default 16384) compared
 * with the CPU's kiln__etc2_search_th (bytes and error); one row per build of the shader: "rolled"
 * (enc_etc2_th.comp, the default) and "unrolled" (enc_etc2_th_unroll.comp, KILN_GPU_ETC2_TH_UNROLL=1). --a1: ETC2 RGB A1 with a random alpha (1 pixel in 8 below
 * the threshold). --lanes: instead of those two rows, one row per configuration of the search (unrolled build):
 * L invocations per block (KILN_GPU_ETC2_TH_LANES) and P (KILN_GPU_ETC2_TH_PREP: 1 the gate writes the partitions,
 * 0 every lane sorts; left out: the library's default for L), e.g. --lanes 1,1:1 (since 2026-11-26 the library accepts
 * L = 1 only: more lanes per block lost on the H100 and were removed). KILN_GPU_ETC2_TH_POOL=0|1 in the environment picks
 * the one-invocation search or the pooled one (the default at max) for "--cfg default".
 * --cfg F:X:C:K[:P[:W[:S]]],...: instead, one row per search variant (helper etc2max; 1 lane, the gate's partitions): F
 * (KILN_GPU_ETC2_TH_FLAT, the state-machine search), X (KILN_GPU_ETC2_TH_FASTPIX, closed-form pixel errors), C
 * (KILN_GPU_ETC2_TH_CHECK, the limit test every C pixels), K (KILN_GPU_ETC2_TH_CACHE, centre data reused), P (KILN_GPU_ETC2_TH_PACKED, packed pixels), W (KILN_GPU_ETC2_TH_WG, workgroup size), S (KILN_GPU_ETC2_TH_SMEM, centre data in shared memory; P, W, S left out: the defaults), e.g.
 * --cfg 0:0:1:0,1:1:1:1,1:1:4:1; the entry "gate" times the gate
 * pass alone (KILN_GPU_ETC2_TH_BENCH_GATE_ONLY=1; its "== CPU" says "-"), "default" the library's defaults. */
#include "codec/etc_enc.h"
#include "core/internal.h"
#include "gpu/gpu_etc2_th.h"
#include "kiln/kiln.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_bench_util.h"

typedef struct job {
    const uint8_t *px;
    uint32_t w, h, bx;
    const kiln_encode_params *params;
    int a1, post;
    kiln_etc2_gpu_block *out;
} job;

static void block_state(const job *j, size_t i, kiln_etc2_gpu_block *o)
{
    kiln_block blk;
    memset(&blk, 0, sizeof blk);
    const uint32_t x0 = (uint32_t)(i % j->bx) * 4, y0 = (uint32_t)(i / j->bx) * 4;
    for (uint32_t p = 0; p < 16; p++) {
        uint32_t x = x0 + (p & 3), y = y0 + (p >> 2);
        x = x < j->w ? x : j->w - 1;
        y = y < j->h ? y : j->h - 1;
        memcpy(blk.rgba8 + p * 4, j->px + ((size_t)y * j->w + x) * 4, 4);
    }
    etc_src src;
    etc_sol sol;
    kiln__etc_src_init(&src, &blk, j->params, j->a1);
    memset(&sol, 0, sizeof sol);
    memset(o, 0, sizeof *o);
    if (j->a1 && src.nopaque == 0) {
        sol.mode = ETC_MODE_DIFF;
        memset(sol.sel, 2, sizeof sol.sel);
    } else {
        kiln__etc2_search_pre_th(&src, &sol);
        if (j->post) kiln__etc2_search_th(&src, &sol);
    }
    kiln__etc_pack(&sol, &src, o->bytes);
    o->err = sol.err;
}

static void states(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    const job *j = user;
    for (size_t i = begin; i < end; i++) block_state(j, i, &j->out[i]);
}

int main(int argc, char **argv)
{
    uint32_t n = 4096, threads = 0, check = 16384;
    int runs = 5, only_q = -1, a1 = 0, perceptual = 0;
    const char *path = NULL;
    /* --lanes: up to 16 configurations "L" or "L:P" */
    char lanes_v[16][8], prep_v[16][4];
    int ncfg = 0;
    /* --cfg: up to 16 search variants "F:X:C:K", "gate" or "default" */
    char cfg_v[16][16];
    int nvar = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cfg") && i + 1 < argc) {
            const char *c = argv[++i];
            while (*c && nvar < 16) {
                size_t len = strcspn(c, ",");
                if (len == 0 || len >= sizeof cfg_v[0]) break;
                memcpy(cfg_v[nvar], c, len);
                cfg_v[nvar][len] = 0;
                nvar++;
                c += len;
                if (*c == ',') c++;
            }
            continue;
        }
        if (!strcmp(argv[i], "--lanes") && i + 1 < argc) {
            const char *c = argv[++i];
            while (*c && ncfg < 16) {
                size_t len = strcspn(c, ","), colon = strcspn(c, ":");
                if (len == 0 || len >= 8) break;
                size_t ll = colon < len ? colon : len;
                memcpy(lanes_v[ncfg], c, ll);
                lanes_v[ncfg][ll] = 0;
                prep_v[ncfg][0] = 0;
                if (colon < len && len - colon - 1 < 4) {
                    memcpy(prep_v[ncfg], c + colon + 1, len - colon - 1);
                    prep_v[ncfg][len - colon - 1] = 0;
                }
                ncfg++;
                c += len;
                if (*c == ',') c++;
            }
            continue;
        }
        if (!strcmp(argv[i], "--size") && i + 1 < argc) n = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--quality") && i + 1 < argc) only_q = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--check") && i + 1 < argc) check = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--a1")) a1 = 1;
        else if (!strcmp(argv[i], "--perceptual")) perceptual = 1;
        else if (argv[i][0] != '-') path = argv[i];
        else {
            fprintf(stderr, "usage: %s [--size N] [--runs R] [--threads T] [--quality 0-3] [--a1] [--perceptual] [--check B] "
                            "[--lanes L[:P],...] [--cfg F:X:C:K|gate|default,...] [image.png]\n",
                    argv[0]);
            return 2;
        }
    }
    if (runs < 1) runs = 1;
    if (n < 4 || n > 16384) n = 4096;
    kiln_context_params gp;
    kiln_context_params_init(&gp);
    gp.backend = KILN_BACKEND_VULKAN;
    gp.threads = threads;
    kiln_context *g = NULL;
    if (kiln_context_create(&gp, &g) != KILN_OK) {
        fprintf(stderr, "cannot create a Vulkan context\n");
        return 1;
    }
    kiln_image src;
    const char *tries[] = {path, "../shared/testdata/ldr/stk_generic_rock_a_512.png", "shared/testdata/ldr/stk_generic_rock_a_512.png",
                           "/work/shared/testdata/ldr/stk_generic_rock_a_512.png"};
    int loaded = 0;
    for (size_t i = 0; i < 4 && !loaded; i++)
        if (tries[i] && kiln_image_load(g, tries[i], &src) == KILN_OK) {
            if (src.type == KILN_PIXEL_U8) { /* stored as RGBA whatever the channel count */
                loaded = 1;
                path = tries[i];
            } else {
                kiln_image_free(&src);
            }
        }
    if (!loaded) {
        fprintf(stderr, "cannot load an 8-bit RGBA image (give one)\n");
        return 1;
    }
    const uint32_t bx = (n + 3) / 4;
    const size_t nblocks = (size_t)bx * bx;
    uint8_t *px = malloc((size_t)n * n * 4);
    kiln_etc2_gpu_block *pre = malloc(nblocks * sizeof *pre), *run = malloc(nblocks * sizeof *run);
    kiln_etc2_gpu_block *post = malloc((size_t)check * sizeof *post);
    double *ms = calloc((size_t)runs, sizeof *ms);
    if (!px || !pre || !run || !post || !ms) return 1;
    uint32_t s = 12345;
    for (uint32_t y = 0; y < n; y++)
        for (uint32_t x = 0; x < n; x++) {
            uint32_t sx = x % (2 * src.width), sy = y % (2 * src.height);
            if (sx >= src.width) sx = 2 * src.width - 1 - sx;
            if (sy >= src.height) sy = 2 * src.height - 1 - sy;
            uint8_t *d = px + ((size_t)y * n + x) * 4;
            memcpy(d, (const uint8_t *)src.pixels + ((size_t)sy * src.width + sx) * 4, 4);
            if (a1) {
                s = s * 1664525u + 1013904223u;
                d[3] = (s >> 29) == 0 ? 0 : 255;
            }
        }
    kiln_gpu_info info;
    memset(&info, 0, sizeof info);
    uint32_t count = 0;
    kiln_gpu_list(g, &info, 1, &count);
    printf("ETC2 %s T/H pass, %s tiled to %ux%u (%zu blocks), perceptual %d, %d runs, device: %s\n\n", a1 ? "RGB A1" : "RGB",
           path, n, n, nblocks, perceptual, runs, count ? info.name : "?");
    printf("| quality | shader | CPU pre-state s | err above gate | improved | kernel ms min | kernel ms median | Mblocks/s (median) | == CPU (first %u) |\n",
           check);
    printf("|---|---|---|---|---|---|---|---|---|\n");
    static const char *qn[] = {"fast", "normal", "high", "max"};
    for (int q = KILN_QUALITY_FAST; q <= KILN_QUALITY_MAX; q++) {
        if (only_q >= 0 && q != only_q) continue;
        kiln_encode_params params;
        kiln_encode_params_init(&params, a1 ? KILN_FORMAT_ETC2_RGB8A1_UNORM : KILN_FORMAT_ETC2_RGB8_UNORM, (kiln_quality)q);
        params.perceptual = perceptual;
        job j = {px, n, n, bx, &params, a1, 0, pre};
        double t0 = now_ms();
        if (kiln__parallel_for(g, nblocks, 256, states, &j) != KILN_OK) return 1;
        double pre_s = (now_ms() - t0) / 1e3;
        uint32_t nc = check < nblocks ? check : (uint32_t)nblocks;
        job jp = {px, n, n, bx, &params, a1, 1, post};
        if (kiln__parallel_for(g, nc, 64, states, &jp) != KILN_OK) return 1;
        const int nrows = nvar ? nvar : (ncfg ? ncfg : 2);
        for (int variant = 0; variant < nrows; variant++) {
            char vn[96];
            int gate_only = 0;
            unsetenv("KILN_GPU_ETC2_TH_BENCH_GATE_ONLY");
            if (nvar) {
                const char *v = cfg_v[variant];
                unsetenv("KILN_GPU_ETC2_TH_UNROLL");
                unsetenv("KILN_GPU_ETC2_TH_LANES");
                unsetenv("KILN_GPU_ETC2_TH_PREP");
                unsetenv("KILN_GPU_ETC2_TH_FLAT");
                unsetenv("KILN_GPU_ETC2_TH_FASTPIX");
                unsetenv("KILN_GPU_ETC2_TH_CHECK");
                unsetenv("KILN_GPU_ETC2_TH_CACHE");
                unsetenv("KILN_GPU_ETC2_TH_PACKED");
                unsetenv("KILN_GPU_ETC2_TH_WG");
                unsetenv("KILN_GPU_ETC2_TH_SMEM");
                if (!strcmp(v, "gate")) {
                    setenv("KILN_GPU_ETC2_TH_BENCH_GATE_ONLY", "1", 1);
                    gate_only = 1;
                    snprintf(vn, sizeof vn, "gate pass alone");
                } else if (!strcmp(v, "default")) {
                    snprintf(vn, sizeof vn, "library default");
                } else {
                    char f[4] = "", x[4] = "", c[4] = "", k[4] = "", pk[4] = "-", wg[4] = "-", sm[4] = "-";
                    if (sscanf(v, "%3[0-9]:%3[0-9]:%3[0-9]:%3[0-9]:%3[0-9]:%3[0-9]:%3[0-9]", f, x, c, k, pk, wg, sm) < 4) {
                        printf("| %s | %s | bad --cfg entry (F:X:C:K, gate or default) |\n", qn[q], v);
                        continue;
                    }
                    setenv("KILN_GPU_ETC2_TH_FLAT", f, 1);
                    setenv("KILN_GPU_ETC2_TH_FASTPIX", x, 1);
                    setenv("KILN_GPU_ETC2_TH_CHECK", c, 1);
                    setenv("KILN_GPU_ETC2_TH_CACHE", k, 1);
                    if (pk[0] != '-') setenv("KILN_GPU_ETC2_TH_PACKED", pk, 1);
                    if (wg[0] != '-') setenv("KILN_GPU_ETC2_TH_WG", wg, 1);
                    if (sm[0] != '-') setenv("KILN_GPU_ETC2_TH_SMEM", sm, 1);
                    snprintf(vn, sizeof vn, "flat %s fastpix %s check %s cache %s packed %s wg %s smem %s", f, x, c, k, pk, wg, sm);
                }
            } else if (ncfg) {
                setenv("KILN_GPU_ETC2_TH_UNROLL", "1", 1);
                setenv("KILN_GPU_ETC2_TH_LANES", lanes_v[variant], 1);
                if (prep_v[variant][0]) setenv("KILN_GPU_ETC2_TH_PREP", prep_v[variant], 1);
                else unsetenv("KILN_GPU_ETC2_TH_PREP");
                snprintf(vn, sizeof vn, "lanes %.7s%s%.3s", lanes_v[variant], prep_v[variant][0] ? " prep " : "", prep_v[variant]);
            } else {
                setenv("KILN_GPU_ETC2_TH_UNROLL", variant ? "1" : "0", 1);
                snprintf(vn, sizeof vn, "%s", variant ? "unrolled" : "rolled");
            }
            int failed = 0;
            for (int r = -1; r < runs && !failed; r++) {
                memcpy(run, pre, nblocks * sizeof *run);
                double t = 0.0;
                if (kiln__gpu_etc2_th(g, px, n, n, &params, a1, 0, run, &t) != KILN_OK) {
                    printf("| %s | %s | GPU pass failed: %s |\n", qn[q], vn, kiln_last_error(g));
                    failed = 1;
                }
                if (r >= 0) ms[r] = t;
            }
            if (failed) continue;
            size_t improved = 0;
            for (size_t i = 0; i < nblocks; i++) improved += run[i].err < pre[i].err;
            /* gated in: blocks whose error is above the quality's gate (th_bound not counted) */
            size_t same = 0;
            for (uint32_t i = 0; i < nc; i++) same += !memcmp(&run[i], &post[i], sizeof *post);
            qsort(ms, (size_t)runs, sizeof *ms, cmp_double);
            static const uint32_t gate_q[4] = {150, 24, 8, 0};
            uint32_t wsum = perceptual ? 128u : 3u;
            size_t gated = 0;
            for (size_t i = 0; i < nblocks; i++) gated += pre[i].err > gate_q[q] * 16u * wsum / 3u;
            double med = ms[runs / 2];
            if (gate_only)
                printf("| %s | %s | %.1f | %zu | - | %.2f | %.2f | %.2f | - |\n", qn[q], vn, pre_s, gated, ms[0], med,
                       med > 0 ? (double)nblocks / med / 1e3 : 0.0);
            else
                printf("| %s | %s | %.1f | %zu | %zu | %.2f | %.2f | %.2f | %s (%zu/%u) |\n", qn[q], vn, pre_s, gated, improved,
                       ms[0], med, med > 0 ? (double)nblocks / med / 1e3 : 0.0, same == nc ? "yes" : "NO", same, nc);
            fflush(stdout);
        }
    }
    free(px), free(pre), free(run), free(post), free(ms);
    kiln_image_free(&src);
    kiln_context_free(g);
    return 0;
}

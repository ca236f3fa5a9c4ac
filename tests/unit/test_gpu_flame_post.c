/* test_gpu_flame_post.c - the GPU flame post-processing (src/gpu/gpu_flame_post.c, shaders
 * flame_de_prep.comp, flame_de_gather.comp, flame_tonemap.comp) against the CPU tone map
 * (kiln__flame_tonemap): the SAME histogram, computed once by the CPU chaos game, goes through both.
 *
 * Tolerance, and why: the CPU works in double, the GPU in float (sums of the DE gather and the
 * spatial filter, log1p, pow, the HSV round trip of highlight power). The DE filter index, the one
 * discrete choice that could flip a whole kernel, is exact (host threshold table from the CPU's own
 * rule, see flame_de_prep.comp). What remains is a relative error of a few 1e-7 on each channel
 * before the final truncation to 8 bits ((uint8_t)a, not rounding): a channel changes only when its
 * exact value lies within ~1e-4 of an integer, so at most 1 step and for a small fraction of the
 * channels (measured here on lavapipe: none at all in most cases). Asserted: max |diff| <= 1 per
 * channel, at most 0.5 % of the channels differ (at least 2 allowed for tiny images), alpha is 255 as
 * on the CPU. One exception, counted apart: with highlight_power >= 0 a clipped pixel's largest
 * channel is 255 in exact arithmetic (newls = 255 / maxc, then newls * maxc / 255 through HSV and
 * back, times 255); the CPU's double rounding lands just below it for some maxc and truncates to 254
 * (flam3 does the same), the GPU gets 255. Those channels (CPU 254, GPU 255; ~1 % of the channels in
 * the deliberately over-bright case below) are allowed up to 5 % of the channels, only when
 * highlight_power >= 0. Each case also asserts that the image is not flat (a broken pass cannot pass by writing
 * the background everywhere), that the CPU and GPU images have the same mean within 0.01, and the
 * end-to-end case that kiln_flame_render on the Vulkan backend (histogram kept on the device;
 * supersample 1 and 2) equals the GPU chaos game's downloaded histogram through the CPU tone map within
 * the same bound, that the post_out path is deterministic, and that the AUTO backend without an
 * accepted device (lavapipe without KILN_ALLOW_CPU_VULKAN) renders bit for bit as the CPU backend.
 * Cases: the testdata genomes (estimator_radius 9) at odd sizes, supersample 1, 2 and 3, DE off,
 * background colour, highlight power >= 0 (HSV path) and in (-1, 0), vibrancy < 1, other spatial
 * filters (negative lobes), estimator_minimum / curve. Validation layer on: 0 messages. Skipped
 * without a Vulkan device (lavapipe counts). */
#include "support.h"
#include "flame/gpu_flame.h"
#include "gpu/gpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef kt_gpu_fixture fixture;

static char *slurp(const char *rel, size_t *n)
{
    FILE *fp = fopen(kt_testdata(rel), "rb");
    if (!fp) return NULL;
    char *buf = malloc(1 << 20);
    assert_non_null(buf);
    *n = fread(buf, 1, (1 << 20) - 1, fp);
    fclose(fp);
    buf[*n] = 0;
    return buf;
}

static kiln_flame *load(kiln_context *ctx, const char *rel, uint32_t *count)
{
    size_t n = 0;
    char *buf = slurp(rel, &n);
    if (!buf) {
        fprintf(stderr, "missing %s\n", rel);
        return NULL;
    }
    kiln_flame *fl = NULL;
    kiln_status st = kiln__flame_parse(ctx, buf, n, rel, &fl, count);
    free(buf);
    if (st != KILN_OK) fprintf(stderr, "%s: %s\n", rel, kiln_last_error(ctx));
    assert_int_equal(st, KILN_OK);
    return fl;
}

typedef struct diff {
    int maxd;
    size_t ndiff, nch;
    size_t nclip; /* CPU 254, GPU 255 (see the header) */
    double mean_a, mean_b;
    int flat_a;
} diff;

static diff compare(const kiln_image *a, const kiln_image *b)
{
    diff d = {0, 0, 0, 0, 0, 0, 1};
    assert_int_equal(a->width, b->width);
    assert_int_equal(a->height, b->height);
    assert_int_equal(a->type, KILN_PIXEL_U8);
    assert_int_equal(b->type, KILN_PIXEL_U8);
    assert_int_equal(a->channels, b->channels);
    const uint8_t *p = a->pixels, *q = b->pixels;
    const size_t n = (size_t)a->width * a->height;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(p[4 * i + 3], q[4 * i + 3]);
        for (int c = 0; c < 3; c++) {
            int e = abs((int)p[4 * i + c] - (int)q[4 * i + c]);
            if (e > d.maxd) d.maxd = e;
            if (e && getenv("KFP_DEBUG") && d.ndiff < 12)
                printf("  pixel %zu channel %d: %d vs %d (pixel %d %d %d / %d %d %d)\n", i, c, p[4 * i + c], q[4 * i + c],
                       p[4 * i], p[4 * i + 1], p[4 * i + 2], q[4 * i], q[4 * i + 1], q[4 * i + 2]);
            d.ndiff += e != 0;
            d.nclip += p[4 * i + c] == 254 && q[4 * i + c] == 255;
            d.mean_a += p[4 * i + c];
            d.mean_b += q[4 * i + c];
            if (p[4 * i + c] != p[c]) d.flat_a = 0;
        }
    }
    d.nch = 3 * n;
    d.mean_a /= (double)d.nch;
    d.mean_b /= (double)d.nch;
    return d;
}

static void assert_close(const diff *d, const char *what, int highlight)
{
    size_t allowed = d->nch / 200;
    if (allowed < 2) allowed = 2;
    printf("%-44s max|diff| %d, %zu of %zu channels differ (%.4f %%; %zu clipped 254/255), mean %.3f / %.3f\n", what,
           d->maxd, d->ndiff, d->nch, 100.0 * (double)d->ndiff / (double)d->nch, d->nclip, d->mean_a, d->mean_b);
    fflush(stdout);
    assert_false(d->flat_a);
    assert_true(d->maxd <= 1);
    assert_true(d->ndiff - (highlight ? d->nclip : 0) <= allowed);
    assert_true(d->nclip <= d->nch / 20);
    assert_true(fabs(d->mean_a - d->mean_b) <= 0.01 + (highlight ? (double)d->nclip / (double)d->nch : 0.0));
}

/* One case: CPU histogram once, CPU tone map and GPU post of it, compared. Returns the largest
 * bucket count A / 255 of the histogram (DE's filtered counts reach about that). */
static double one(fixture *f, const kiln_flame *fl, uint32_t w, uint32_t h, uint32_t ss, double q, const char *what)
{
    kiln_flame_render_opts o;
    memset(&o, 0, sizeof o);
    o.width = w;
    o.height = h;
    o.supersample = ss;
    o.quality = q;
    o.seed = 5;
    kiln_flame_setup su;
    assert_int_equal(kiln__flame_setup(f->cpu, fl, &o, &su), KILN_OK);
    kiln_flame_hist hist;
    assert_int_equal(kiln__flame_iterate_cpu(f->cpu, fl, &su, &hist), KILN_OK);
    double amax = 0;
    for (size_t i = 0; i < (size_t)hist.width * hist.height; i++)
        if (hist.rgba[4 * i + 3] / 255.0 > amax) amax = hist.rgba[4 * i + 3] / 255.0;
    kiln_image ci, gi;
    assert_int_equal(kiln__flame_tonemap(f->cpu, fl, &su, &hist, &ci), KILN_OK);
    kiln_flame_post_stats ps;
    memset(&ps, 0, sizeof ps);
    ps.split = (w & 1) != 0; /* both submission modes */
    kiln_status st = kiln__flame_post_gpu(f->gpu, fl, &su, &hist, &gi, &ps);
    if (st != KILN_OK) fprintf(stderr, "%s: %s\n", what, kiln_last_error(f->gpu));
    assert_int_equal(st, KILN_OK);
    assert_int_equal(gi.channels, 3);
    assert_int_equal(gi.srgb, 1);
    char buf[160];
    snprintf(buf, sizeof buf, "%s %ux%u ss%u q%g R%u", what, w, h, ss, q, ps.de_reach);
    diff d = compare(&ci, &gi);
    assert_close(&d, buf, fl->highlight_power >= 0);
    if (fl->estimator_radius > 0) assert_true(ps.de_reach > 0);
    kiln_image_free(&ci);
    kiln_image_free(&gi);
    kiln__flame_hist_free(&hist);
    assert_int_equal(kiln__gpu_validation_messages(f->gpu), 0);
    return amax;
}

static const char *files[] = {"flam3/gen_random_s1001.flam3", "flam3/gen_symm2_s1003.flam3",
                              "flam3/gen_cross_s1005.flam3",  "flam3/gen_sym3_s1002.flam3",
                              "flam3/gen_mutate_s1004.flam3", "flam3/flam3utils_test.flam3"};

/* every testdata genome as it is, odd and even sizes, supersample 1 and 2 */
static void test_genomes(void **state)
{
    fixture *f = *state;
    if (!f->gpu) skip();
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        uint32_t count = 0;
        kiln_flame *fl = load(f->cpu, files[i], &count);
        if (!fl) continue;
        one(f, &fl[0], 97, 71, 1, 40, files[i] + 6);
        one(f, &fl[0], 64, 48, 2, 20, files[i] + 6);
        kiln__flame_free_all(fl, count);
    }
}

/* tone-map parameters varied on one genome */
static void test_variations(void **state)
{
    fixture *f = *state;
    if (!f->gpu) skip();
    uint32_t count = 0;
    kiln_flame *fl = load(f->cpu, "flam3/gen_random_s1001.flam3", &count);
    if (!fl) skip();
    kiln_flame *g = &fl[0];
    const kiln_flame keep = *g;

    g->estimator_radius = 0;
    one(f, g, 81, 59, 1, 30, "DE off");
    one(f, g, 81, 59, 2, 10, "DE off");
    *g = keep;

    g->background[0] = 0.2;
    g->background[1] = 0.45;
    g->background[2] = 0.9;
    one(f, g, 75, 53, 1, 30, "background");
    *g = keep;

    g->highlight_power = 1.0; /* HSV path where the colour clips */
    g->brightness = 40;
    one(f, g, 75, 53, 1, 60, "highlight_power 1, bright");
    g->highlight_power = 0.0;
    one(f, g, 75, 53, 1, 60, "highlight_power 0, bright");
    g->highlight_power = -0.4;
    one(f, g, 75, 53, 1, 60, "highlight_power -0.4, bright");
    *g = keep;

    g->vibrancy = 0.35;
    g->gamma = 2.2;
    g->gamma_threshold = 0.05;
    one(f, g, 75, 53, 1, 30, "vibrancy 0.35, gamma 2.2");
    *g = keep;

    g->filter_shape = KILN_FLAME_FILTER_LANCZOS3; /* negative lobes */
    g->filter = 1.0;
    one(f, g, 61, 45, 1, 30, "lanczos3 filter 1.0");
    g->filter_shape = KILN_FLAME_FILTER_MITCHELL;
    one(f, g, 61, 45, 2, 15, "mitchell filter 1.0");
    *g = keep;

    g->estimator_radius = 5;
    g->estimator_minimum = 1;
    g->estimator_curve = 0.6;
    one(f, g, 67, 49, 3, 8, "DE 5/1/0.6");
    *g = keep;

    /* reach 27: the gather's source tile (16 + 54)^2 words exceeds its 16 KiB of shared memory, so this
     * runs its global-memory variant */
    one(f, g, 45, 33, 3, 6, "ss3 (gather without shared tile)");

    /* radius 9, curve 0.4: filters 100..109 are picked by 100 + floor(pow(fs - 100, 0.4)) */
    assert_true(one(f, g, 79, 57, 1, 400, "dense (fs > 100)") > 120.0);
    kiln__flame_free_all(fl, count);
}

/* kiln_flame_render on the Vulkan backend (histogram kept on the device) against the GPU chaos
 * game's downloaded histogram through the CPU tone map: the chaos game is deterministic (integer
 * accumulation), so only the post-processing differs. Then the AUTO backend's fallback. */
static void test_end_to_end(void **state)
{
    fixture *f = *state;
    if (!f->gpu) skip();
    size_t n = 0;
    char *xml = slurp("flam3/gen_symm2_s1003.flam3", &n);
    if (!xml) skip();
    kiln_flames *fs = NULL;
    assert_int_equal(kiln_flames_load_memory(f->gpu, xml, n, &fs), KILN_OK);
    free(xml);
    uint32_t count = 0;
    kiln_flame *fl = load(f->cpu, "flam3/gen_symm2_s1003.flam3", &count);
    assert_non_null(fl);
    kiln_flame_params p;
    kiln_flame_params_init(&p);
    p.width = 91;
    p.height = 67;
    p.quality = 30;
    p.seed = 9;
    p.backend = KILN_BACKEND_VULKAN;
    for (uint32_t ss = 1; ss <= 2; ss++) {
        p.supersample = ss;
        kiln_image e2e;
        kiln_status st = kiln_flame_render(f->gpu, fs, 0, &p, &e2e);
        if (st != KILN_OK) fprintf(stderr, "render: %s\n", kiln_last_error(f->gpu));
        assert_int_equal(st, KILN_OK);

        /* the same render with the histogram downloaded and tone-mapped on the CPU */
        kiln_flame_render_opts o = {p.width, p.height, p.quality, ss, p.seed, 0};
        kiln_flame_setup su;
        assert_int_equal(kiln__flame_setup(f->gpu, &fl[0], &o, &su), KILN_OK);
        kiln_flame_hist hist;
        assert_int_equal(kiln__flame_iterate_gpu_ex(f->gpu, &fl[0], &su, NULL, &hist, NULL), KILN_OK);
        kiln_image ref;
        assert_int_equal(kiln__flame_tonemap(f->cpu, &fl[0], &su, &hist, &ref), KILN_OK);
        diff d = compare(&ref, &e2e);
        char what[96];
        snprintf(what, sizeof what, "kiln_flame_render vulkan vs GPU hist + CPU, ss%u", ss);
        assert_close(&d, what, fl[0].highlight_power >= 0);
        kiln_image_free(&ref);
        kiln__flame_hist_free(&hist);

        /* the GPU path with post_out through the options, as kiln_flame_render runs it */
        kiln_image via;
        kiln_flame_post_stats ps;
        memset(&ps, 0, sizeof ps);
        kiln_flame_gpu_opts go;
        memset(&go, 0, sizeof go);
        go.post_out = &via;
        go.post_stats = &ps;
        assert_int_equal(kiln__flame_iterate_gpu_ex(f->gpu, &fl[0], &su, &go, &hist, NULL), KILN_OK);
        assert_null(hist.rgba);
        assert_true(ps.total_ms > 0);
        assert_memory_equal(via.pixels, e2e.pixels, (size_t)via.width * via.height * 4); /* deterministic */
        kiln_image_free(&via);
        kiln_image_free(&e2e);
    }

    /* AUTO without KILN_ALLOW_CPU_VULKAN: lavapipe is not wanted, the CPU renders, bit for bit as the
     * CPU backend does */
    if (!getenv("KILN_ALLOW_CPU_VULKAN")) {
        kiln_context *ac = kt_context(2, KILN_BACKEND_AUTO);
        assert_non_null(ac);
        p.backend = KILN_BACKEND_AUTO;
        kiln_image a, c;
        assert_int_equal(kiln_flame_render(ac, fs, 0, &p, &a), KILN_OK);
        p.backend = KILN_BACKEND_CPU;
        assert_int_equal(kiln_flame_render(f->cpu, fs, 0, &p, &c), KILN_OK);
        /* only where AUTO resolved to the CPU (on a machine with a real GPU it takes the GPU) */
        if (kiln_context_backend(ac) == KILN_BACKEND_CPU)
            assert_memory_equal(a.pixels, c.pixels, (size_t)a.width * a.height * 4);
        kiln_image_free(&a);
        kiln_image_free(&c);
        kiln_context_free(ac);
    }
    kiln__flame_free_all(fl, count);
    kiln_flames_free(fs);
    printf("validation layer %s, %u messages\n", kiln__gpu_validation_active(f->gpu) ? "on" : "off",
           kiln__gpu_validation_messages(f->gpu));
    assert_int_equal(kiln__gpu_validation_messages(f->gpu), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_genomes),
        cmocka_unit_test(test_variations),
        cmocka_unit_test(test_end_to_end),
    };
    /* experiments: KFP_ONLY=NAME runs the tests whose name contains NAME */
    if (getenv("KFP_ONLY")) {
        struct CMUnitTest sel[3];
        size_t n = 0;
        for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
            if (strstr(tests[i].name, getenv("KFP_ONLY"))) sel[n++] = tests[i];
        return _cmocka_run_group_tests("test_gpu_flame_post", sel, n, kt_gpu_setup, kt_gpu_teardown);
    }
    return cmocka_run_group_tests(tests, kt_gpu_setup, kt_gpu_teardown);
}

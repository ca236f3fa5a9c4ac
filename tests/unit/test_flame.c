/* test_flame.c - the flame parser, variations, chaos game and tone map (no flam3 needed):
 * flam3's variation table, variation formulas against independent evaluations of flam3's
 * conventions, parser defaults and structure, exact histogram counts, determinism for any thread
 * count, and bad genomes (clear errors, no crash or hang). The statistical comparison with
 * flam3-render is test_flame_vs_flam3.c. */
#include "support.h"

#include "flame/flame.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static kiln_status parse(kiln_context *ctx, const char *xml, kiln_flame **f, uint32_t *n)
{
    return kiln__flame_parse(ctx, xml, strlen(xml), "test", f, n);
}

/* ---------------------------------------------------------------- table --------------------- */

/* flam3 3.1.1's flam3_variation_names, in order */
static const char *const flam3_names[] = {
    "linear", "sinusoidal", "spherical", "swirl", "horseshoe", "polar", "handkerchief", "heart", "disc", "spiral",
    "hyperbolic", "diamond", "ex", "julia", "bent", "waves", "fisheye", "popcorn", "exponential", "power",
    "cosine", "rings", "fan", "blob", "pdj", "fan2", "rings2", "eyefish", "bubble", "cylinder", "perspective",
    "noise", "julian", "juliascope", "blur", "gaussian_blur", "radial_blur", "pie", "ngon", "curl", "rectangles",
    "arch", "tangent", "square", "rays", "blade", "secant2", "twintrian", "cross", "disc2", "super_shape",
    "flower", "conic", "parabola", "bent2", "bipolar", "boarders", "butterfly", "cell", "cpow", "curve", "edisc",
    "elliptic", "escher", "foci", "lazysusan", "loonie", "pre_blur", "modulus", "oscilloscope", "polar2",
    "popcorn2", "scry", "separation", "split", "splits", "stripes", "wedge", "wedge_julia", "wedge_sph", "whorl",
    "waves2", "exp", "log", "sin", "cos", "tan", "sec", "csc", "cot", "sinh", "cosh", "tanh", "sech", "csch",
    "coth", "auger", "flux", "mobius"};

static void test_table(void **state)
{
    (void)state;
    assert_int_equal(sizeof flam3_names / sizeof flam3_names[0], KILN_FLAME_NVARS);
    int params = 0;
    for (int i = 0; i < KILN_FLAME_NVARS; i++) {
        const kiln_flame_var_info *vi = kiln__flame_var_info(i);
        assert_non_null(vi);
        assert_string_equal(vi->name, flam3_names[i]);
        assert_int_equal(kiln__flame_var_lookup(flam3_names[i]), i);
        for (uint32_t k = 0; k < vi->nparams; k++) {
            int v = -1, idx = -1;
            assert_true(kiln__flame_param_lookup(vi->param_names[k], &v, &idx));
            assert_int_equal(v, i);
            assert_int_equal(idx, (int)k);
        }
        params += (int)vi->nparams;
    }
    assert_null(kiln__flame_var_info(KILN_FLAME_NVARS));
    assert_int_equal(kiln__flame_var_lookup("no_such_variation"), -1);
    /* the X-macro agrees */
#define X(I, N, P, S) assert_int_equal(kiln__flame_var_info(I)->nparams, P);
    KILN_FLAME_VARIATIONS(X)
#undef X
    assert_int_equal(params, 109); /* 39 parametric variations, 109 parameters */
    int parametric = 0;
    for (int i = 0; i < KILN_FLAME_NVARS; i++) parametric += kiln__flame_var_info(i)->nparams > 0;
    assert_int_equal(parametric, 39);
    /* a few of flam3's defaults */
    const kiln_flame_var_info *pie = kiln__flame_var_info(KILN_FLAME_VAR_pie);
    assert_true(pie->param_defaults[0] == 6.0 && pie->param_defaults[2] == 0.5);
    const kiln_flame_var_info *osc = kiln__flame_var_info(KILN_FLAME_VAR_oscilloscope);
    assert_true(fabs(osc->param_defaults[1] - M_PI) < 1e-15);
}

/* ---------------------------------------------------------------- variations ---------------- */

static void one_var(kiln_flame_xform *xf, int v, double w)
{
    memset(xf, 0, sizeof *xf);
    kiln__flame_params_default(xf);
    xf->c[0][0] = xf->c[1][1] = 1.0;
    xf->post[0][0] = xf->post[1][1] = 1.0;
    xf->opacity = 1;
    xf->var[v] = w;
    xf->active[0] = (uint8_t)v;
    xf->nactive = 1;
}

static void apply(kiln_flame_xform *xf, double x, double y, double *qx, double *qy)
{
    kiln_flame_xform_pre pre;
    kiln__flame_xform_precalc(xf, &pre);
    kiln_flame_rng rng;
    kiln__flame_rng_seed(&rng, 1, 0);
    double p[2] = {x, y}, q[2];
    assert_int_equal(kiln__flame_apply_xform(xf, &pre, p, q, &rng), 0);
    *qx = q[0];
    *qy = q[1];
}

static void test_variations(void **state)
{
    (void)state;
    kiln_flame_xform xf;
    double qx, qy, x = 0.3, y = -0.7, r2 = x * x + y * y, r = sqrt(r2);
    const double tol = 1e-12;
    /* spherical: w (x, y) / (r^2 + EPS) */
    one_var(&xf, KILN_FLAME_VAR_spherical, 0.5);
    apply(&xf, x, y, &qx, &qy);
    assert_true(fabs(qx - 0.5 * x / (r2 + 1e-10)) < tol && fabs(qy - 0.5 * y / (r2 + 1e-10)) < tol);
    /* polar: flam3's angle is atan2(x, y) */
    one_var(&xf, KILN_FLAME_VAR_polar, 1.0);
    apply(&xf, x, y, &qx, &qy);
    assert_true(fabs(qx - atan2(x, y) / M_PI) < tol && fabs(qy - (r - 1)) < tol);
    /* fisheye: output swapped (r*y, r*x) with r = 2w/(r+1) */
    one_var(&xf, KILN_FLAME_VAR_fisheye, 1.0);
    apply(&xf, x, y, &qx, &qy);
    assert_true(fabs(qx - 2 / (r + 1) * y) < tol && fabs(qy - 2 / (r + 1) * x) < tol);
    /* eyefish: not swapped */
    one_var(&xf, KILN_FLAME_VAR_eyefish, 1.0);
    apply(&xf, x, y, &qx, &qy);
    assert_true(fabs(qx - 2 / (r + 1) * x) < tol && fabs(qy - 2 / (r + 1) * y) < tol);
    /* hyperbolic: sina = x / r, cosa = y / r */
    one_var(&xf, KILN_FLAME_VAR_hyperbolic, 1.0);
    apply(&xf, x, y, &qx, &qy);
    assert_true(fabs(qx - (x / r) / (r + 1e-10)) < tol && fabs(qy - (y / r) * (r + 1e-10)) < tol);
    /* swirl */
    one_var(&xf, KILN_FLAME_VAR_swirl, 1.0);
    apply(&xf, x, y, &qx, &qy);
    assert_true(fabs(qx - (sin(r2) * x - cos(r2) * y)) < tol && fabs(qy - (cos(r2) * x + sin(r2) * y)) < tol);
    /* heart: angle atan2(x, y) times r */
    one_var(&xf, KILN_FLAME_VAR_heart, 1.0);
    apply(&xf, x, y, &qx, &qy);
    double a = r * atan2(x, y);
    assert_true(fabs(qx - r * sin(a)) < tol && fabs(qy + r * cos(a)) < tol);
    /* log: atan2(y, x) */
    one_var(&xf, KILN_FLAME_VAR_log, 1.0);
    apply(&xf, x, y, &qx, &qy);
    assert_true(fabs(qx - 0.5 * log(r2)) < tol && fabs(qy - atan2(y, x)) < tol);
    /* waves reads the affine: x + c10 sin(y / (c20^2 + EPS)) */
    one_var(&xf, KILN_FLAME_VAR_waves, 1.0);
    xf.c[1][0] = 0.2;
    xf.c[1][1] = 0.1;
    xf.c[2][0] = 0.5;
    xf.c[2][1] = 0.4;
    double tx = x + 0.2 * y + 0.5, ty = 0.1 * y + 0.4;
    apply(&xf, x, y, &qx, &qy);
    assert_true(fabs(qx - (tx + 0.2 * sin(ty / (0.25 + 1e-10)))) < tol);
    assert_true(fabs(qy - (ty + 0.1 * sin(tx / (0.16 + 1e-10)))) < tol);
    /* mobius with a = 1, d = 1: identity */
    one_var(&xf, KILN_FLAME_VAR_mobius, 1.0);
    xf.params[KILN_FLAME_VAR_mobius][0] = 1;
    xf.params[KILN_FLAME_VAR_mobius][6] = 1;
    apply(&xf, x, y, &qx, &qy);
    assert_true(fabs(qx - x) < tol && fabs(qy - y) < tol);
    /* every variation evaluates without crashing at a few points, with defaults and odd values */
    kiln_flame_rng rng;
    kiln__flame_rng_seed(&rng, 7, 0);
    for (int v = 0; v < KILN_FLAME_NVARS; v++) {
        for (int t = 0; t < 50; t++) {
            one_var(&xf, v, t % 5 == 0 ? -0.5 : 0.8);
            if (t % 7 == 3)
                for (int k = 0; k < KILN_FLAME_MAX_PARAMS; k++) xf.params[v][k] = kiln__flame_rng_11(&rng) * 3;
            kiln_flame_xform_pre pre;
            kiln__flame_xform_precalc(&xf, &pre);
            double p[2] = {t == 0 ? 0.0 : kiln__flame_rng_11(&rng) * 2, t == 0 ? 0.0 : kiln__flame_rng_11(&rng) * 2};
            double q[2];
            int bad = kiln__flame_apply_xform(&xf, &pre, p, q, &rng);
            /* a bad value is replaced by a random point in [-1, 1] */
            assert_true(isfinite(q[0]) && isfinite(q[1]));
            if (bad) assert_true(fabs(q[0]) <= 1 && fabs(q[1]) <= 1);
        }
    }
}

/* ---------------------------------------------------------------- parser -------------------- */

static void test_parse_structure(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(1, KILN_BACKEND_CPU);
    kiln_flame *f;
    uint32_t n;
    const char *xml =
        "<doc><flames><flame size=\"64 48\" name=\"a b\" quality=\"5\">"
        "<finalxform color=\"0.5\" spherical=\"1\" coefs=\"1 0 0 1 0 0\"/>"
        "<symmetry kind=\"-2\"/>"
        "<xform weight=\"0.5\" color=\"0\" linear=\"1\" coefs=\"0.5 0 0 0.5 0 0\" chaos=\"1 0 2\"/>"
        "<xform weight=\"0.5\" coefs=\"0.5 0 0 0.5 0.5 0\" post=\"1 0 0 1 0.1 0\" symmetry=\"0.5\"/>"
        "<color index=\"0\" rgb=\"255 0 0\"/><color index=\"255\" rgba=\"0 0 255 127.5\"/>"
        "<edit><flame size=\"1 1\"/></edit>"
        "</flame></flames><flame name=\"second\"><xform weight=\"1\" linear=\"1\" coefs=\"1 0 0 1 0 0\"/>"
        "<palette count=\"2\" format=\"RGB\">ff0000 00ff00</palette></flame></doc>";
    assert_int_equal(parse(ctx, xml, &f, &n), KILN_OK);
    assert_int_equal(n, 2);
    kiln_flame *a = &f[0];
    assert_string_equal(a->name, "a b");
    assert_int_equal(a->width, 64);
    assert_true(a->quality == 5 && a->pixels_per_unit == 50 && a->estimator_radius == 9 && a->gamma == 4);
    /* symmetry -2: mirror + one rotation by pi, added where the element is; then 2 xforms; final last */
    assert_int_equal(a->num_xforms, 5);
    assert_int_equal(a->final_xform, 4);
    assert_true(a->xforms[0].c[0][0] == -1 && a->xforms[0].weight == 1 && a->xforms[0].color == 1);
    assert_true(a->xforms[1].c[0][0] == -1 && a->xforms[1].c[1][1] == -1 && a->xforms[1].color == 0);
    assert_true(a->xforms[2].var[0] == 1 && a->xforms[2].weight == 0.5);
    /* an xform without variations maps to (0,0): no active variation */
    assert_int_equal(a->xforms[3].nactive, 0);
    assert_true(a->xforms[3].has_post && !a->xforms[2].has_post);
    assert_true(fabs(a->xforms[3].color_speed - 0.25) < 1e-15); /* symmetry 0.5 -> (1 - 0.5) / 2 */
    assert_true(a->xforms[4].var[KILN_FLAME_VAR_spherical] == 1 && a->xforms[4].var[0] == 0);
    /* chaos row of standard xform 2 */
    assert_non_null(a->chaos);
    assert_true(a->chaos[2 * 5 + 0] == 1 && a->chaos[2 * 5 + 1] == 0 && a->chaos[2 * 5 + 2] == 2);
    assert_true(a->chaos[0] == 1);
    /* palette: <color> premultiplied, missing entries interpolated */
    assert_true(a->palette[0][0] == 1.0f && a->palette[0][3] == 1.0f);
    assert_true(fabs(a->palette[255][2] - 0.5) < 1e-6 && fabs(a->palette[255][3] - 0.5) < 1e-6);
    assert_true(fabs(a->palette[128][0] - 127.0 / 255.0) < 1e-5);
    kiln_flame *b = &f[1];
    assert_int_equal(b->width, 100);
    assert_true(b->palette[0][0] == 1.0f && b->palette[1][1] == 1.0f);
    assert_null(b->chaos);
    kiln__flame_free_all(f, n);
    kiln_context_free(ctx);
}

typedef struct {
    const char *xml;
    kiln_status status;
    const char *needle; /* part of the message */
} bad_case;

static void test_bad_genomes(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(2, KILN_BACKEND_CPU);
    const bad_case cases[] = {
        {"", KILN_ERR_CORRUPT, "malformed XML"},
        {"<flame size=\"10 10\"><xform weight=\"1\" linear=\"1\"/>", KILN_ERR_CORRUPT, "malformed XML"},
        {"<flame size=\"10 10\"><xform weight=\"1\" linear=\"1\"></flame>", KILN_ERR_CORRUPT, "malformed XML"},
        {"<notaflame/>", KILN_ERR_CORRUPT, "no <flame>"},
        {"<flame size=\"10 10\"><xform weight=\"1\" frobnicate=\"1\"/></flame>", KILN_ERR_CORRUPT, "frobnicate"},
        {"<flame size=\"10 10\"><xform weight=\"1\" linear=\"1\" coefs=\"nan 0 0 1 0 0\"/></flame>", KILN_ERR_CORRUPT, "coefs"},
        {"<flame size=\"10 10\"><xform weight=\"1\" linear=\"1\" coefs=\"1e300 0 0 1 0 0\"/></flame>", KILN_ERR_CORRUPT, "coefs"},
        {"<flame size=\"10 10\"><xform weight=\"1\" linear=\"1\" coefs=\"1 0 0 1 0\"/></flame>", KILN_ERR_CORRUPT, "coefs"},
        {"<flame size=\"10 10\"><xform weight=\"1\" linear=\"inf\"/></flame>", KILN_ERR_CORRUPT, "linear"},
        {"<flame size=\"10 10\"><xform weight=\"0\" linear=\"1\"/><xform weight=\"0\" spherical=\"1\"/></flame>", KILN_ERR_CORRUPT, "positive weight"},
        {"<flame size=\"10 10\"><xform weight=\"-1\" linear=\"1\"/></flame>", KILN_ERR_CORRUPT, "weight"},
        {"<flame size=\"10 10\"></flame>", KILN_ERR_CORRUPT, "no xform"},
        {"<flame size=\"0 10\"><xform weight=\"1\" linear=\"1\"/></flame>", KILN_ERR_CORRUPT, "size"},
        {"<flame size=\"100000000 10\"><xform weight=\"1\" linear=\"1\"/></flame>", KILN_ERR_CORRUPT, "size"},
        {"<flame size=\"10\"><xform weight=\"1\" linear=\"1\"/></flame>", KILN_ERR_CORRUPT, "size"},
        {"<flame quality=\"1e300\"><xform weight=\"1\" linear=\"1\"/></flame>", KILN_ERR_CORRUPT, "quality"},
        {"<flame quality=\"-4\"><xform weight=\"1\" linear=\"1\"/></flame>", KILN_ERR_CORRUPT, "quality"},
        {"<flame supersample=\"1000\"><xform weight=\"1\" linear=\"1\"/></flame>", KILN_ERR_CORRUPT, "supersample"},
        {"<flame scale=\"0\"><xform weight=\"1\" linear=\"1\"/></flame>", KILN_ERR_CORRUPT, "scale"},
        {"<flame estimator_radius=\"1e9\"><xform weight=\"1\" linear=\"1\"/></flame>", KILN_ERR_CORRUPT, "estimator"},
        {"<flame size=\"10 10\"><finalxform weight=\"1\" linear=\"1\"/><xform weight=\"1\" linear=\"1\"/></flame>", KILN_ERR_CORRUPT, "finalxform"},
        {"<flame size=\"10 10\"><finalxform linear=\"1\"/><finalxform linear=\"1\"/><xform weight=\"1\" linear=\"1\"/></flame>", KILN_ERR_CORRUPT, "finalxform"},
        {"<flame size=\"10 10\"><xform weight=\"1\" linear=\"1\" chaos=\"-1\"/></flame>", KILN_ERR_CORRUPT, "chaos"},
        {"<flame size=\"10 10\"><xform weight=\"1\" linear=\"1\" chaos=\"0\"/></flame>", KILN_ERR_CORRUPT, "chaos"},
        {"<flame size=\"10 10\"><xform weight=\"1\" linear=\"1\"/><palette count=\"2\" format=\"RGB\">ff00zz 000000</palette></flame>", KILN_ERR_CORRUPT, "hexadecimal"},
        {"<flame size=\"10 10\"><xform weight=\"1\" linear=\"1\"/><palette count=\"300\" format=\"RGB\">ff0000</palette></flame>", KILN_ERR_CORRUPT, "count"},
        {"<flame size=\"10 10\"><xform weight=\"1\" linear=\"1\"/><color index=\"256\" rgb=\"1 2 3\"/></flame>", KILN_ERR_CORRUPT, "index"},
        {"<flame size=\"10 10\"><xform weight=\"1\" linear=\"1\"/><color index=\"3\" rgb=\"1e300 2 3\"/></flame>", KILN_ERR_CORRUPT, "components"},
        {"<flame size=\"10 10\"><xform weight=\"1\" linear=\"1\"/><color index=\"3\" rgba=\"1 2 3 -5\"/></flame>", KILN_ERR_CORRUPT, "components"},
        {"<flame size=\"10 10\"><xform weight=\"1\" linear=\"1\"/><colors count=\"2\" data=\"00ff0000\"/></flame>", KILN_ERR_CORRUPT, "hexadecimal"},
        {"<flame size=\"10 10\"><xform/></flame>", KILN_ERR_CORRUPT, "no attributes"},
        {"<flame size=\"10 10\"><xform weight=\"1\" linear=\"1\"/><symmetry kind=\"100000\"/></flame>", KILN_ERR_CORRUPT, "kind"},
        {"<!DOCTYPE a [<!ENTITY x \"xxxxxxxxxx\"><!ENTITY y \"&x;&x;&x;&x;&x;&x;&x;&x;&x;&x;\">"
         "<!ENTITY z \"&y;&y;&y;&y;&y;&y;&y;&y;&y;&y;\"><!ENTITY w \"&z;&z;&z;&z;&z;&z;&z;&z;&z;&z;\">"
         "<!ENTITY v \"&w;&w;&w;&w;&w;&w;&w;&w;&w;&w;\"><!ENTITY u \"&v;&v;&v;&v;&v;&v;&v;&v;&v;&v;\">]>"
         "<flame name=\"&u;&u;&u;&u;&u;&u;&u;&u;\"><xform weight=\"1\" linear=\"1\"/></flame>", KILN_ERR_CORRUPT, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kiln_flame *f = (kiln_flame *)1;
        uint32_t n = 99;
        kiln_status st = parse(ctx, cases[i].xml, &f, &n);
        if (st != cases[i].status || !strstr(kiln_last_error(ctx), cases[i].needle))
            print_message("case %zu: status %d, message \"%s\"\n", i, (int)st, kiln_last_error(ctx));
        assert_int_equal(st, cases[i].status);
        assert_true(strlen(kiln_last_error(ctx)) > 0);
        assert_non_null(strstr(kiln_last_error(ctx), cases[i].needle));
        assert_null(f);
        assert_int_equal(n, 0);
    }
    /* through the public API: render-time limits */
    kiln_flames *fl = NULL;
    const char *ok = "<flame size=\"8 8\" quality=\"1\"><xform weight=\"1\" linear=\"0.5\"/></flame>";
    assert_int_equal(kiln_flames_load_memory(ctx, ok, strlen(ok), &fl), KILN_OK);
    kiln_flame_params p;
    kiln_flame_params_init(&p);
    kiln_image img;
    p.quality = 1e7; /* absurd */
    assert_int_equal(kiln_flame_render(ctx, fl, 0, &p, &img), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(kiln_last_error(ctx), "quality"));
    p.quality = 1e6;
    p.width = 60000;
    p.height = 60000; /* 3.6e9 pixels */
    assert_int_equal(kiln_flame_render(ctx, fl, 0, &p, &img), KILN_ERR_TOO_LARGE);
    p.width = p.height = 2000; /* 4e12 samples */
    assert_int_equal(kiln_flame_render(ctx, fl, 0, &p, &img), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(kiln_last_error(ctx), "samples"));
    p.width = p.height = 0;
    p.supersample = 17;
    assert_int_equal(kiln_flame_render(ctx, fl, 0, &p, &img), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_flame_render(ctx, fl, 1, NULL, &img), KILN_ERR_INVALID_ARGUMENT);
    p.supersample = 0;
    p.quality = 0;
    assert_int_equal(kiln_flame_render(ctx, fl, 0, &p, &img), KILN_OK);
    kiln_image_free(&img);
    kiln_flames_free(fl);
    /* a filter or density estimator that would take hours: refused at render time */
    const char *slow[2] = {"<flame size=\"8 8\" filter=\"100\"><xform weight=\"1\" linear=\"0.5\"/></flame>",
                           "<flame size=\"8 8\" estimator_radius=\"30\" supersample=\"4\"><xform weight=\"1\" linear=\"0.5\"/></flame>"};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(kiln_flames_load_memory(ctx, slow[i], strlen(slow[i]), &fl), KILN_OK);
        assert_int_equal(kiln_flame_render(ctx, fl, 0, NULL, &img), KILN_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(kiln_last_error(ctx), i == 0 ? "taps" : "estimator_radius"));
        kiln_flames_free(fl);
    }
    assert_int_equal(kiln_flames_load(ctx, "/nonexistent/x.flam3", &fl), KILN_ERR_IO);
    kiln_context_free(ctx);
}

/* ---------------------------------------------------------------- chaos game ---------------- */

/* Every point maps to (0.01, 0.01) (linear weight 0, post offset): all samples land in one bucket
 * and each adds exactly 255 * palette (vis 1), so the histogram is known exactly. */
static void test_exact_histogram(void **state)
{
    (void)state;
    kiln_context *ctx = kt_context(2, KILN_BACKEND_CPU);
    const char *xml = "<flame size=\"10 10\" scale=\"10\" quality=\"3\" filter=\"0\" estimator_radius=\"0\">"
                      "<xform weight=\"1\" color=\"0\" color_speed=\"1\" coefs=\"1 0 0 1 0 0\" post=\"1 0 0 1 0.01 0.01\"/>"
                      "<colors count=\"1\" data=\"00804020\"/></flame>";
    kiln_flame *f;
    uint32_t n;
    assert_int_equal(parse(ctx, xml, &f, &n), KILN_OK);
    kiln_flame_render_opts o = {0, 0, 0, 0, 5, 0};
    kiln_flame_setup su;
    assert_int_equal(kiln__flame_setup(ctx, &f[0], &o, &su), KILN_OK);
    assert_int_equal(su.nsamples, 300);
    assert_int_equal(su.hist_w, 10); /* filter 0 -> 1 tap, no gutter, no DE */
    kiln_flame_hist h;
    assert_int_equal(kiln__flame_iterate_cpu(ctx, &f[0], &su, &h), KILN_OK);
    /* world (0.01, 0.01) -> bucket (5, 5): x = (0.01 + 0.5) * 10 = 5.1 */
    const float *b = h.rgba + 4 * (5 * 10 + 5);
    /* palette entry 0 = 0x80/255 etc. (all 256 entries, interpolated from one colour) */
    assert_true(b[0] == 300.0f * 128 && b[1] == 300.0f * 64 && b[2] == 300.0f * 32 && b[3] == 300.0f * 255);
    double total = 0;
    for (size_t i = 0; i < 100; i++) total += h.rgba[4 * i + 3];
    assert_true(total == 300.0 * 255);
    assert_int_equal(h.samples_plotted, 300);
    /* tone map of that bucket: alpha = k1 ln(1 + k2 c3) / 255, gamma 4, vibrancy 1 */
    kiln_image img;
    assert_int_equal(kiln__flame_tonemap(ctx, &f[0], &su, &h, &img), KILN_OK);
    double k1 = 4 * 255 * 268.0 / 256, area = 100 / 100.0, k2 = 1 / (area * 255 * 3);
    double c3 = 300.0 * 255, acc3 = k1 * log(1 + c3 * k2), tmp = acc3 / 255;
    double alpha = pow(tmp, 0.25), ls = 256 * alpha / tmp;
    double lsc = ls * acc3 / c3; /* colour scale */
    const uint8_t *px = (const uint8_t *)img.pixels + 4 * (5 * 10 + 5);
    double expect[3] = {300.0 * 128 * lsc / 255, 300.0 * 64 * lsc / 255, 300.0 * 32 * lsc / 255};
    for (int c = 0; c < 3; c++) {
        double e = expect[c] > 255 ? 255 : expect[c];
        assert_int_equal(px[c], (int)e);
    }
    const uint8_t *px0 = img.pixels;
    assert_true(px0[0] == 0 && px0[1] == 0 && px0[2] == 0 && px0[3] == 255);
    kiln_image_free(&img);
    kiln__flame_hist_free(&h);
    kiln__flame_free_all(f, n);
    kiln_context_free(ctx);
}

static void test_determinism(void **state)
{
    (void)state;
    const char *xml = "<flame size=\"48 36\" scale=\"20\" quality=\"8\" supersample=\"2\" rotate=\"30\">"
                      "<xform weight=\"0.6\" color=\"0\" julia=\"0.5\" spherical=\"0.5\" coefs=\"0.7 0.2 -0.3 0.6 0.1 0\"/>"
                      "<xform weight=\"0.4\" color=\"1\" linear=\"1\" gaussian_blur=\"0.1\" coefs=\"0.5 0 0 0.5 0.4 0.2\" chaos=\"2 1\"/>"
                      "<finalxform color=\"0.5\" color_speed=\"0.2\" opacity=\"0.7\" swirl=\"1\" coefs=\"1 0 0 1 0 0\"/>"
                      "<color index=\"0\" rgb=\"255 200 0\"/><color index=\"255\" rgb=\"0 50 255\"/></flame>";
    uint64_t hashes[3];
    const uint32_t threads[3] = {1, 2, 3};
    for (int t = 0; t < 3; t++) {
        kiln_context *ctx = kt_context(threads[t], KILN_BACKEND_CPU);
        kiln_flames *fl;
        assert_int_equal(kiln_flames_load_memory(ctx, xml, strlen(xml), &fl), KILN_OK);
        kiln_flame_params p;
        kiln_flame_params_init(&p);
        p.seed = 42;
        kiln_image img;
        assert_int_equal(kiln_flame_render(ctx, fl, 0, &p, &img), KILN_OK);
        assert_int_equal(img.width, 48);
        hashes[t] = kt_hash(img.pixels, (size_t)img.width * img.height * 4);
        /* not black */
        size_t lit = 0;
        for (size_t i = 0; i < (size_t)48 * 36; i++) lit += ((uint8_t *)img.pixels)[4 * i + 1] > 0;
        assert_true(lit > 100);
        kiln_image_free(&img);
        /* another seed gives another image */
        if (t == 0) {
            p.seed = 43;
            assert_int_equal(kiln_flame_render(ctx, fl, 0, &p, &img), KILN_OK);
            assert_true(kt_hash(img.pixels, (size_t)img.width * img.height * 4) != hashes[0]);
            kiln_image_free(&img);
        }
        kiln_flames_free(fl);
        kiln_context_free(ctx);
    }
    assert_true(hashes[0] == hashes[1] && hashes[1] == hashes[2]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_variations),
        cmocka_unit_test(test_parse_structure),
        cmocka_unit_test(test_bad_genomes),
        cmocka_unit_test(test_exact_histogram),
        cmocka_unit_test(test_determinism),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

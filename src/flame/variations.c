/* variations.c - flam3 3.1.1's 99 variations, its xform application rule and the RNG.
 * Written from the behaviour of flam3 (angles atan2(x, y), sina = x / r, fisheye swapped, EPS guards,
 * the bad-value rule); see /work/shared/notes/flame.md section 6. */
#include "flame/flame.h"

#include <math.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#define K_PI_2 1.57079632679489661923
#define K_PI_4 0.78539816339744830962
#define K_1_PI 0.31830988618379067154
#define K_2_PI 0.63661977236758134308
#define EPS KILN_FLAME_EPS

/* ---------------------------------------------------------------- table ----------------------- */


/* Parameter attribute names and flam3's defaults (initialize_xforms). */
typedef struct {
    int var;
    int index;
    const char *name;
    double def;
} param_default;

static const param_default param_defaults[] = {
    {23, 0, "blob_low", 0}, {23, 1, "blob_high", 1}, {23, 2, "blob_waves", 1},
    {24, 0, "pdj_a", 0}, {24, 1, "pdj_b", 0}, {24, 2, "pdj_c", 0}, {24, 3, "pdj_d", 0},
    {25, 0, "fan2_x", 0}, {25, 1, "fan2_y", 0},
    {26, 0, "rings2_val", 0},
    {30, 0, "perspective_angle", 0}, {30, 1, "perspective_dist", 0},
    {32, 0, "julian_power", 1}, {32, 1, "julian_dist", 1},
    {33, 0, "juliascope_power", 1}, {33, 1, "juliascope_dist", 1},
    {36, 0, "radial_blur_angle", 0},
    {37, 0, "pie_slices", 6}, {37, 1, "pie_rotation", 0}, {37, 2, "pie_thickness", 0.5},
    {38, 0, "ngon_sides", 5}, {38, 1, "ngon_power", 3}, {38, 2, "ngon_circle", 1}, {38, 3, "ngon_corners", 2},
    {39, 0, "curl_c1", 1}, {39, 1, "curl_c2", 0},
    {40, 0, "rectangles_x", 1}, {40, 1, "rectangles_y", 1},
    {49, 0, "disc2_rot", 0}, {49, 1, "disc2_twist", 0},
    {50, 0, "super_shape_rnd", 0}, {50, 1, "super_shape_m", 0}, {50, 2, "super_shape_n1", 1},
    {50, 3, "super_shape_n2", 1}, {50, 4, "super_shape_n3", 1}, {50, 5, "super_shape_holes", 0},
    {51, 0, "flower_petals", 0}, {51, 1, "flower_holes", 0},
    {52, 0, "conic_eccentricity", 1}, {52, 1, "conic_holes", 0},
    {53, 0, "parabola_height", 0}, {53, 1, "parabola_width", 0},
    {54, 0, "bent2_x", 1}, {54, 1, "bent2_y", 1},
    {55, 0, "bipolar_shift", 0},
    {58, 0, "cell_size", 1},
    {59, 0, "cpow_r", 1}, {59, 1, "cpow_i", 0}, {59, 2, "cpow_power", 1},
    {60, 0, "curve_xamp", 0}, {60, 1, "curve_yamp", 0}, {60, 2, "curve_xlength", 1}, {60, 3, "curve_ylength", 1},
    {63, 0, "escher_beta", 0},
    {65, 0, "lazysusan_spin", 0}, {65, 1, "lazysusan_space", 0}, {65, 2, "lazysusan_twist", 0},
    {65, 3, "lazysusan_x", 0}, {65, 4, "lazysusan_y", 0},
    {68, 0, "modulus_x", 0}, {68, 1, "modulus_y", 0},
    {69, 0, "oscilloscope_separation", 1}, {69, 1, "oscilloscope_frequency", M_PI},
    {69, 2, "oscilloscope_amplitude", 1}, {69, 3, "oscilloscope_damping", 0},
    {71, 0, "popcorn2_x", 0}, {71, 1, "popcorn2_y", 0}, {71, 2, "popcorn2_c", 0},
    {73, 0, "separation_x", 0}, {73, 1, "separation_xinside", 0}, {73, 2, "separation_y", 0},
    {73, 3, "separation_yinside", 0},
    {74, 0, "split_xsize", 0}, {74, 1, "split_ysize", 0},
    {75, 0, "splits_x", 0}, {75, 1, "splits_y", 0},
    {76, 0, "stripes_space", 0}, {76, 1, "stripes_warp", 0},
    {77, 0, "wedge_angle", 0}, {77, 1, "wedge_hole", 0}, {77, 2, "wedge_count", 1}, {77, 3, "wedge_swirl", 0},
    {78, 0, "wedge_julia_angle", 0}, {78, 1, "wedge_julia_count", 1}, {78, 2, "wedge_julia_power", 1},
    {78, 3, "wedge_julia_dist", 0},
    {79, 0, "wedge_sph_angle", 0}, {79, 1, "wedge_sph_count", 1}, {79, 2, "wedge_sph_hole", 0},
    {79, 3, "wedge_sph_swirl", 0},
    {80, 0, "whorl_inside", 0}, {80, 1, "whorl_outside", 0},
    {81, 0, "waves2_freqx", 0}, {81, 1, "waves2_scalex", 0}, {81, 2, "waves2_freqy", 0}, {81, 3, "waves2_scaley", 0},
    {96, 0, "auger_freq", 1}, {96, 1, "auger_weight", 0.5}, {96, 2, "auger_sym", 0}, {96, 3, "auger_scale", 1},
    {97, 0, "flux_spread", 0},
    {98, 0, "mobius_re_a", 0}, {98, 1, "mobius_im_a", 0}, {98, 2, "mobius_re_b", 0}, {98, 3, "mobius_im_b", 0},
    {98, 4, "mobius_re_c", 0}, {98, 5, "mobius_im_c", 0}, {98, 6, "mobius_re_d", 0}, {98, 7, "mobius_im_d", 0},
};

/* Names, parameter names and defaults (the parameter names match the X-macro strings; test_flame
 * checks that). */
static const kiln_flame_var_info full_table[KILN_FLAME_NVARS] = {
    [0] = {"linear", 0, {0}, {0}},
    [1] = {"sinusoidal", 0, {0}, {0}},
    [2] = {"spherical", 0, {0}, {0}},
    [3] = {"swirl", 0, {0}, {0}},
    [4] = {"horseshoe", 0, {0}, {0}},
    [5] = {"polar", 0, {0}, {0}},
    [6] = {"handkerchief", 0, {0}, {0}},
    [7] = {"heart", 0, {0}, {0}},
    [8] = {"disc", 0, {0}, {0}},
    [9] = {"spiral", 0, {0}, {0}},
    [10] = {"hyperbolic", 0, {0}, {0}},
    [11] = {"diamond", 0, {0}, {0}},
    [12] = {"ex", 0, {0}, {0}},
    [13] = {"julia", 0, {0}, {0}},
    [14] = {"bent", 0, {0}, {0}},
    [15] = {"waves", 0, {0}, {0}},
    [16] = {"fisheye", 0, {0}, {0}},
    [17] = {"popcorn", 0, {0}, {0}},
    [18] = {"exponential", 0, {0}, {0}},
    [19] = {"power", 0, {0}, {0}},
    [20] = {"cosine", 0, {0}, {0}},
    [21] = {"rings", 0, {0}, {0}},
    [22] = {"fan", 0, {0}, {0}},
    [23] = {"blob", 3, {"blob_low", "blob_high", "blob_waves"}, {0, 1, 1}},
    [24] = {"pdj", 4, {"pdj_a", "pdj_b", "pdj_c", "pdj_d"}, {0, 0, 0, 0}},
    [25] = {"fan2", 2, {"fan2_x", "fan2_y"}, {0, 0}},
    [26] = {"rings2", 1, {"rings2_val"}, {0}},
    [27] = {"eyefish", 0, {0}, {0}},
    [28] = {"bubble", 0, {0}, {0}},
    [29] = {"cylinder", 0, {0}, {0}},
    [30] = {"perspective", 2, {"perspective_angle", "perspective_dist"}, {0, 0}},
    [31] = {"noise", 0, {0}, {0}},
    [32] = {"julian", 2, {"julian_power", "julian_dist"}, {1, 1}},
    [33] = {"juliascope", 2, {"juliascope_power", "juliascope_dist"}, {1, 1}},
    [34] = {"blur", 0, {0}, {0}},
    [35] = {"gaussian_blur", 0, {0}, {0}},
    [36] = {"radial_blur", 1, {"radial_blur_angle"}, {0}},
    [37] = {"pie", 3, {"pie_slices", "pie_rotation", "pie_thickness"}, {6, 0, 0.5}},
    [38] = {"ngon", 4, {"ngon_sides", "ngon_power", "ngon_circle", "ngon_corners"}, {5, 3, 1, 2}},
    [39] = {"curl", 2, {"curl_c1", "curl_c2"}, {1, 0}},
    [40] = {"rectangles", 2, {"rectangles_x", "rectangles_y"}, {1, 1}},
    [41] = {"arch", 0, {0}, {0}},
    [42] = {"tangent", 0, {0}, {0}},
    [43] = {"square", 0, {0}, {0}},
    [44] = {"rays", 0, {0}, {0}},
    [45] = {"blade", 0, {0}, {0}},
    [46] = {"secant2", 0, {0}, {0}},
    [47] = {"twintrian", 0, {0}, {0}},
    [48] = {"cross", 0, {0}, {0}},
    [49] = {"disc2", 2, {"disc2_rot", "disc2_twist"}, {0, 0}},
    [50] = {"super_shape", 6, {"super_shape_rnd", "super_shape_m", "super_shape_n1", "super_shape_n2", "super_shape_n3", "super_shape_holes"}, {0, 0, 1, 1, 1, 0}},
    [51] = {"flower", 2, {"flower_petals", "flower_holes"}, {0, 0}},
    [52] = {"conic", 2, {"conic_eccentricity", "conic_holes"}, {1, 0}},
    [53] = {"parabola", 2, {"parabola_height", "parabola_width"}, {0, 0}},
    [54] = {"bent2", 2, {"bent2_x", "bent2_y"}, {1, 1}},
    [55] = {"bipolar", 1, {"bipolar_shift"}, {0}},
    [56] = {"boarders", 0, {0}, {0}},
    [57] = {"butterfly", 0, {0}, {0}},
    [58] = {"cell", 1, {"cell_size"}, {1}},
    [59] = {"cpow", 3, {"cpow_r", "cpow_i", "cpow_power"}, {1, 0, 1}},
    [60] = {"curve", 4, {"curve_xamp", "curve_yamp", "curve_xlength", "curve_ylength"}, {0, 0, 1, 1}},
    [61] = {"edisc", 0, {0}, {0}},
    [62] = {"elliptic", 0, {0}, {0}},
    [63] = {"escher", 1, {"escher_beta"}, {0}},
    [64] = {"foci", 0, {0}, {0}},
    [65] = {"lazysusan", 5, {"lazysusan_spin", "lazysusan_space", "lazysusan_twist", "lazysusan_x", "lazysusan_y"}, {0, 0, 0, 0, 0}},
    [66] = {"loonie", 0, {0}, {0}},
    [67] = {"pre_blur", 0, {0}, {0}},
    [68] = {"modulus", 2, {"modulus_x", "modulus_y"}, {0, 0}},
    [69] = {"oscilloscope", 4, {"oscilloscope_separation", "oscilloscope_frequency", "oscilloscope_amplitude", "oscilloscope_damping"}, {1, M_PI, 1, 0}},
    [70] = {"polar2", 0, {0}, {0}},
    [71] = {"popcorn2", 3, {"popcorn2_x", "popcorn2_y", "popcorn2_c"}, {0, 0, 0}},
    [72] = {"scry", 0, {0}, {0}},
    [73] = {"separation", 4, {"separation_x", "separation_xinside", "separation_y", "separation_yinside"}, {0, 0, 0, 0}},
    [74] = {"split", 2, {"split_xsize", "split_ysize"}, {0, 0}},
    [75] = {"splits", 2, {"splits_x", "splits_y"}, {0, 0}},
    [76] = {"stripes", 2, {"stripes_space", "stripes_warp"}, {0, 0}},
    [77] = {"wedge", 4, {"wedge_angle", "wedge_hole", "wedge_count", "wedge_swirl"}, {0, 0, 1, 0}},
    [78] = {"wedge_julia", 4, {"wedge_julia_angle", "wedge_julia_count", "wedge_julia_power", "wedge_julia_dist"}, {0, 1, 1, 0}},
    [79] = {"wedge_sph", 4, {"wedge_sph_angle", "wedge_sph_count", "wedge_sph_hole", "wedge_sph_swirl"}, {0, 1, 0, 0}},
    [80] = {"whorl", 2, {"whorl_inside", "whorl_outside"}, {0, 0}},
    [81] = {"waves2", 4, {"waves2_freqx", "waves2_scalex", "waves2_freqy", "waves2_scaley"}, {0, 0, 0, 0}},
    [82] = {"exp", 0, {0}, {0}},
    [83] = {"log", 0, {0}, {0}},
    [84] = {"sin", 0, {0}, {0}},
    [85] = {"cos", 0, {0}, {0}},
    [86] = {"tan", 0, {0}, {0}},
    [87] = {"sec", 0, {0}, {0}},
    [88] = {"csc", 0, {0}, {0}},
    [89] = {"cot", 0, {0}, {0}},
    [90] = {"sinh", 0, {0}, {0}},
    [91] = {"cosh", 0, {0}, {0}},
    [92] = {"tanh", 0, {0}, {0}},
    [93] = {"sech", 0, {0}, {0}},
    [94] = {"csch", 0, {0}, {0}},
    [95] = {"coth", 0, {0}, {0}},
    [96] = {"auger", 4, {"auger_freq", "auger_weight", "auger_sym", "auger_scale"}, {1, 0.5, 0, 1}},
    [97] = {"flux", 1, {"flux_spread"}, {0}},
    [98] = {"mobius", 8, {"mobius_re_a", "mobius_im_a", "mobius_re_b", "mobius_im_b", "mobius_re_c", "mobius_im_c", "mobius_re_d", "mobius_im_d"}, {0, 0, 0, 0, 0, 0, 0, 0}},
};

const kiln_flame_var_info *kiln__flame_var_info(int i)
{
    if (i < 0 || i >= KILN_FLAME_NVARS) return NULL;
    return &full_table[i];
}

int kiln__flame_var_lookup(const char *name)
{
    for (int i = 0; i < KILN_FLAME_NVARS; i++)
        if (strcmp(full_table[i].name, name) == 0) return i;
    return -1;
}

int kiln__flame_param_lookup(const char *name, int *var, int *index)
{
    for (size_t k = 0; k < sizeof param_defaults / sizeof param_defaults[0]; k++) {
        if (strcmp(param_defaults[k].name, name) == 0) {
            *var = param_defaults[k].var;
            *index = param_defaults[k].index;
            return 1;
        }
    }
    return 0;
}

void kiln__flame_params_default(kiln_flame_xform *xf)
{
    memset(xf->params, 0, sizeof xf->params);
    for (size_t k = 0; k < sizeof param_defaults / sizeof param_defaults[0]; k++)
        xf->params[param_defaults[k].var][param_defaults[k].index] = param_defaults[k].def;
}


/* ---------------------------------------------------------------- RNG ------------------------- */

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void kiln__flame_rng_seed(kiln_flame_rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t s = seed ^ (stream * 0xD1B54A32D192ED03ull + 0x8CB92BA72F3D8DD7ull);
    for (int i = 0; i < 4; i++) r->s[i] = splitmix(&s);
    if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3])) r->s[0] = 1;
}

uint64_t kiln__flame_rng_next(kiln_flame_rng *r)
{
    uint64_t *s = r->s;
    const uint64_t result = rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double kiln__flame_rng_01(kiln_flame_rng *r) { return (double)(kiln__flame_rng_next(r) >> 11) * 0x1.0p-53; }
double kiln__flame_rng_11(kiln_flame_rng *r) { return kiln__flame_rng_01(r) * 2.0 - 1.0; }

/* ---------------------------------------------------------------- precalc --------------------- */

void kiln__flame_xform_precalc(const kiln_flame_xform *xf, kiln_flame_xform_pre *pre)
{
    memset(pre, 0, sizeof *pre);
    const double(*P)[KILN_FLAME_MAX_PARAMS] = xf->params;
    double ang = P[KILN_FLAME_VAR_perspective][0] * M_PI / 2.0;
    pre->persp_vsin = sin(ang);
    pre->persp_vfcos = P[KILN_FLAME_VAR_perspective][1] * cos(ang);
    pre->julian_rN = fabs(P[KILN_FLAME_VAR_julian][0]);
    pre->julian_cn = P[KILN_FLAME_VAR_julian][1] / P[KILN_FLAME_VAR_julian][0] / 2.0;
    pre->juliascope_rN = fabs(P[KILN_FLAME_VAR_juliascope][0]);
    pre->juliascope_cn = P[KILN_FLAME_VAR_juliascope][1] / P[KILN_FLAME_VAR_juliascope][0] / 2.0;
    pre->wedge_julia_cf = 1.0 - P[KILN_FLAME_VAR_wedge_julia][0] * P[KILN_FLAME_VAR_wedge_julia][1] * K_1_PI * 0.5;
    pre->wedge_julia_rN = fabs(P[KILN_FLAME_VAR_wedge_julia][2]);
    pre->wedge_julia_cn = P[KILN_FLAME_VAR_wedge_julia][3] / P[KILN_FLAME_VAR_wedge_julia][2] / 2.0;
    pre->radial_spinvar = sin(P[KILN_FLAME_VAR_radial_blur][0] * M_PI / 2.0);
    pre->radial_zoomvar = cos(P[KILN_FLAME_VAR_radial_blur][0] * M_PI / 2.0);
    pre->waves_dx2 = 1.0 / (xf->c[2][0] * xf->c[2][0] + EPS);
    pre->waves_dy2 = 1.0 / (xf->c[2][1] * xf->c[2][1] + EPS);
    double add = P[KILN_FLAME_VAR_disc2][1];
    pre->disc2_timespi = P[KILN_FLAME_VAR_disc2][0] * M_PI;
    pre->disc2_sinadd = sin(add);
    pre->disc2_cosadd = cos(add) - 1.0;
    if (add > 2 * M_PI) {
        double k = 1 + add - 2 * M_PI;
        pre->disc2_cosadd *= k;
        pre->disc2_sinadd *= k;
    }
    if (add < -2 * M_PI) {
        double k = 1 + add + 2 * M_PI;
        pre->disc2_cosadd *= k;
        pre->disc2_sinadd *= k;
    }
    pre->super_shape_pm_4 = P[KILN_FLAME_VAR_super_shape][1] / 4.0;
    pre->super_shape_pneg1_n1 = -1.0 / P[KILN_FLAME_VAR_super_shape][2];
    pre->vis = xf->opacity == 0.0 ? 0.0 : pow(10.0, -log(1.0 / xf->opacity) / log(2.0));

    for (uint32_t k = 0; k < xf->nactive; k++) {
        switch (xf->active[k]) {
        case KILN_FLAME_VAR_polar: case KILN_FLAME_VAR_handkerchief: case KILN_FLAME_VAR_heart:
        case KILN_FLAME_VAR_disc: case KILN_FLAME_VAR_ex: case KILN_FLAME_VAR_julia: case KILN_FLAME_VAR_fan:
        case KILN_FLAME_VAR_fan2: case KILN_FLAME_VAR_disc2: case KILN_FLAME_VAR_polar2:
            pre->need_atan_xy = 1;
            break;
        case KILN_FLAME_VAR_blob:
            pre->need_atan_xy = 1;
            pre->need_angles = 1;
            break;
        case KILN_FLAME_VAR_spiral: case KILN_FLAME_VAR_hyperbolic: case KILN_FLAME_VAR_diamond:
        case KILN_FLAME_VAR_power: case KILN_FLAME_VAR_rings: case KILN_FLAME_VAR_rings2:
            pre->need_angles = 1;
            break;
        case KILN_FLAME_VAR_julian: case KILN_FLAME_VAR_juliascope: case KILN_FLAME_VAR_radial_blur:
        case KILN_FLAME_VAR_ngon: case KILN_FLAME_VAR_super_shape: case KILN_FLAME_VAR_flower:
        case KILN_FLAME_VAR_conic: case KILN_FLAME_VAR_cpow: case KILN_FLAME_VAR_escher: case KILN_FLAME_VAR_wedge:
        case KILN_FLAME_VAR_wedge_julia: case KILN_FLAME_VAR_wedge_sph: case KILN_FLAME_VAR_whorl:
        case KILN_FLAME_VAR_log:
            pre->need_atan_yx = 1;
            break;
        case KILN_FLAME_VAR_pre_blur:
            pre->pre_blur = xf->var[KILN_FLAME_VAR_pre_blur];
            break;
        default:
            break;
        }
    }
}

/* ---------------------------------------------------------------- apply ----------------------- */

static inline int badvalue(double x) { return (x != x) || (x > 1e10) || (x < -1e10); }

/* flam3's (int) casts of doubles, with x86's result (INT_MIN) where C leaves an out-of-range value
 * undefined, so huge parameters behave as in flam3 on x86 without undefined behaviour here. */
static inline int toint(double v) { return (v > -2147483649.0 && v < 2147483648.0) ? (int)v : INT32_MIN; }

#define R01() kiln__flame_rng_01(rng)
#define PRM(v, k) (xf->params[KILN_FLAME_VAR_##v][k])

int kiln__flame_apply_xform(const kiln_flame_xform *xf, const kiln_flame_xform_pre *pre, const double p[2],
                            double q[2], kiln_flame_rng *rng)
{
    double tx = xf->c[0][0] * p[0] + xf->c[1][0] * p[1] + xf->c[2][0];
    double ty = xf->c[0][1] * p[0] + xf->c[1][1] * p[1] + xf->c[2][1];

    if (pre->pre_blur != 0.0) {
        double g = pre->pre_blur * (R01() + R01() + R01() + R01() - 2.0);
        double a = R01() * 2.0 * M_PI;
        tx += g * cos(a);
        ty += g * sin(a);
    }

    const double sumsq = tx * tx + ty * ty;
    const double sq = sqrt(sumsq);
    double atan_xy = 0, sina = 0, cosa = 0, atan_yx = 0;
    if (pre->need_atan_xy) atan_xy = atan2(tx, ty);
    if (pre->need_angles) {
        sina = tx / sq;
        cosa = ty / sq;
    }
    if (pre->need_atan_yx) atan_yx = atan2(ty, tx);

    double p0 = 0.0, p1 = 0.0;
    for (uint32_t k = 0; k < xf->nactive; k++) {
        const int v = xf->active[k];
        const double w = xf->var[v];
        switch (v) {
        case KILN_FLAME_VAR_linear:
            p0 += w * tx;
            p1 += w * ty;
            break;
        case KILN_FLAME_VAR_sinusoidal:
            p0 += w * sin(tx);
            p1 += w * sin(ty);
            break;
        case KILN_FLAME_VAR_spherical: {
            double r2 = w / (sumsq + EPS);
            p0 += r2 * tx;
            p1 += r2 * ty;
        } break;
        case KILN_FLAME_VAR_swirl: {
            double c1 = sin(sumsq), c2 = cos(sumsq);
            p0 += w * (c1 * tx - c2 * ty);
            p1 += w * (c2 * tx + c1 * ty);
        } break;
        case KILN_FLAME_VAR_horseshoe: {
            double r = w / (sq + EPS);
            p0 += (tx - ty) * (tx + ty) * r;
            p1 += 2.0 * tx * ty * r;
        } break;
        case KILN_FLAME_VAR_polar:
            p0 += w * atan_xy * K_1_PI;
            p1 += w * (sq - 1.0);
            break;
        case KILN_FLAME_VAR_handkerchief:
            p0 += w * sq * sin(atan_xy + sq);
            p1 += w * sq * cos(atan_xy - sq);
            break;
        case KILN_FLAME_VAR_heart: {
            double a = sq * atan_xy, r = w * sq;
            p0 += r * sin(a);
            p1 += (-r) * cos(a);
        } break;
        case KILN_FLAME_VAR_disc: {
            double a = atan_xy * K_1_PI, r = M_PI * sq;
            p0 += w * sin(r) * a;
            p1 += w * cos(r) * a;
        } break;
        case KILN_FLAME_VAR_spiral: {
            double r = sq + EPS, r1 = w / r;
            p0 += r1 * (cosa + sin(r));
            p1 += r1 * (sina - cos(r));
        } break;
        case KILN_FLAME_VAR_hyperbolic: {
            double r = sq + EPS;
            p0 += w * sina / r;
            p1 += w * cosa * r;
        } break;
        case KILN_FLAME_VAR_diamond:
            p0 += w * sina * cos(sq);
            p1 += w * cosa * sin(sq);
            break;
        case KILN_FLAME_VAR_ex: {
            double n0 = sin(atan_xy + sq), n1 = cos(atan_xy - sq);
            double m0 = n0 * n0 * n0 * sq, m1 = n1 * n1 * n1 * sq;
            p0 += w * (m0 + m1);
            p1 += w * (m0 - m1);
        } break;
        case KILN_FLAME_VAR_julia: {
            double a = 0.5 * atan_xy;
            if (kiln__flame_rng_next(rng) & 1) a += M_PI;
            double r = w * sqrt(sq);
            p0 += r * cos(a);
            p1 += r * sin(a);
        } break;
        case KILN_FLAME_VAR_bent: {
            double nx = tx, ny = ty;
            if (nx < 0.0) nx = nx * 2.0;
            if (ny < 0.0) ny = ny / 2.0;
            p0 += w * nx;
            p1 += w * ny;
        } break;
        case KILN_FLAME_VAR_waves:
            p0 += w * (tx + xf->c[1][0] * sin(ty * pre->waves_dx2));
            p1 += w * (ty + xf->c[1][1] * sin(tx * pre->waves_dy2));
            break;
        case KILN_FLAME_VAR_fisheye: {
            double r = 2 * w / (sq + 1);
            p0 += r * ty;
            p1 += r * tx;
        } break;
        case KILN_FLAME_VAR_popcorn:
            p0 += w * (tx + xf->c[2][0] * sin(tan(3 * ty)));
            p1 += w * (ty + xf->c[2][1] * sin(tan(3 * tx)));
            break;
        case KILN_FLAME_VAR_exponential: {
            double dx = w * exp(tx - 1.0), dy = M_PI * ty;
            p0 += dx * cos(dy);
            p1 += dx * sin(dy);
        } break;
        case KILN_FLAME_VAR_power: {
            double r = w * pow(sq, sina);
            p0 += r * cosa;
            p1 += r * sina;
        } break;
        case KILN_FLAME_VAR_cosine: {
            double a = tx * M_PI;
            p0 += w * cos(a) * cosh(ty);
            p1 += w * -sin(a) * sinh(ty);
        } break;
        case KILN_FLAME_VAR_rings: {
            double dx = xf->c[2][0] * xf->c[2][0] + EPS;
            double r = w * (fmod(sq + dx, 2 * dx) - dx + sq * (1 - dx));
            p0 += r * cosa;
            p1 += r * sina;
        } break;
        case KILN_FLAME_VAR_fan: {
            double dx = M_PI * (xf->c[2][0] * xf->c[2][0] + EPS), dy = xf->c[2][1], dx2 = 0.5 * dx;
            double a = atan_xy, r = w * sq;
            a += (fmod(a + dy, dx) > dx2) ? -dx2 : dx2;
            p0 += r * cos(a);
            p1 += r * sin(a);
        } break;
        case KILN_FLAME_VAR_blob: {
            double lo = PRM(blob, 0), hi = PRM(blob, 1), waves = PRM(blob, 2);
            double r = sq * (lo + (hi - lo) * (0.5 + 0.5 * sin(waves * atan_xy)));
            p0 += w * sina * r;
            p1 += w * cosa * r;
        } break;
        case KILN_FLAME_VAR_pdj:
            p0 += w * (sin(PRM(pdj, 0) * ty) - cos(PRM(pdj, 1) * tx));
            p1 += w * (sin(PRM(pdj, 2) * tx) - cos(PRM(pdj, 3) * ty));
            break;
        case KILN_FLAME_VAR_fan2: {
            double dy = PRM(fan2, 1), dx = M_PI * (PRM(fan2, 0) * PRM(fan2, 0) + EPS), dx2 = 0.5 * dx;
            double a = atan_xy, r = w * sq;
            double t = a + dy - dx * toint((a + dy) / dx);
            a = (t > dx2) ? a - dx2 : a + dx2;
            p0 += r * sin(a);
            p1 += r * cos(a);
        } break;
        case KILN_FLAME_VAR_rings2: {
            double r = sq, dx = PRM(rings2, 0) * PRM(rings2, 0) + EPS;
            r += -2.0 * dx * toint((r + dx) / (2.0 * dx)) + r * (1.0 - dx);
            p0 += w * sina * r;
            p1 += w * cosa * r;
        } break;
        case KILN_FLAME_VAR_eyefish: {
            double r = (w * 2.0) / (sq + 1.0);
            p0 += r * tx;
            p1 += r * ty;
        } break;
        case KILN_FLAME_VAR_bubble: {
            double r = w / (0.25 * sumsq + 1);
            p0 += r * tx;
            p1 += r * ty;
        } break;
        case KILN_FLAME_VAR_cylinder:
            p0 += w * sin(tx);
            p1 += w * ty;
            break;
        case KILN_FLAME_VAR_perspective: {
            double dist = PRM(perspective, 1);
            double t = 1.0 / (dist - ty * pre->persp_vsin);
            p0 += w * dist * tx * t;
            p1 += w * pre->persp_vfcos * ty * t;
        } break;
        case KILN_FLAME_VAR_noise: {
            double a = R01() * 2 * M_PI, r = w * R01();
            p0 += tx * r * cos(a);
            p1 += ty * r * sin(a);
        } break;
        case KILN_FLAME_VAR_julian: {
            int t_rnd = toint(trunc(pre->julian_rN * R01()));
            double a = (atan_yx + 2 * M_PI * t_rnd) / PRM(julian, 0);
            double r = w * pow(sumsq, pre->julian_cn);
            p0 += r * cos(a);
            p1 += r * sin(a);
        } break;
        case KILN_FLAME_VAR_juliascope: {
            int t_rnd = toint(trunc(pre->juliascope_rN * R01()));
            double a;
            if ((t_rnd & 1) == 0)
                a = (2 * M_PI * t_rnd + atan_yx) / PRM(juliascope, 0);
            else
                a = (2 * M_PI * t_rnd - atan_yx) / PRM(juliascope, 0);
            double r = w * pow(sumsq, pre->juliascope_cn);
            p0 += r * cos(a);
            p1 += r * sin(a);
        } break;
        case KILN_FLAME_VAR_blur: {
            double a = R01() * 2 * M_PI, r = w * R01();
            p0 += r * cos(a);
            p1 += r * sin(a);
        } break;
        case KILN_FLAME_VAR_gaussian_blur: {
            double a = R01() * 2 * M_PI;
            double r = w * (R01() + R01() + R01() + R01() - 2.0);
            p0 += r * cos(a);
            p1 += r * sin(a);
        } break;
        case KILN_FLAME_VAR_radial_blur: {
            double g = w * (R01() + R01() + R01() + R01() - 2.0);
            double a = atan_yx + pre->radial_spinvar * g;
            double rz = pre->radial_zoomvar * g - 1;
            p0 += sq * cos(a) + rz * tx;
            p1 += sq * sin(a) + rz * ty;
        } break;
        case KILN_FLAME_VAR_pie: {
            double slices = PRM(pie, 0);
            int sl = toint(R01() * slices + 0.5);
            double a = PRM(pie, 1) + 2.0 * M_PI * (sl + R01() * PRM(pie, 2)) / slices;
            double r = w * R01();
            p0 += r * cos(a);
            p1 += r * sin(a);
        } break;
        case KILN_FLAME_VAR_ngon: {
            double rf = pow(sumsq, PRM(ngon, 1) / 2.0);
            double b = 2 * M_PI / PRM(ngon, 0);
            double phi = atan_yx - (b * floor(atan_yx / b));
            if (phi > b / 2) phi -= b;
            double amp = PRM(ngon, 3) * (1.0 / (cos(phi) + EPS) - 1.0) + PRM(ngon, 2);
            amp /= (rf + EPS);
            p0 += w * tx * amp;
            p1 += w * ty * amp;
        } break;
        case KILN_FLAME_VAR_curl: {
            double c1 = PRM(curl, 0), c2 = PRM(curl, 1);
            double re = 1.0 + c1 * tx + c2 * (tx * tx - ty * ty);
            double im = c1 * ty + 2.0 * c2 * tx * ty;
            double r = w / (re * re + im * im);
            p0 += (tx * re + ty * im) * r;
            p1 += (ty * re - tx * im) * r;
        } break;
        case KILN_FLAME_VAR_rectangles: {
            double rx = PRM(rectangles, 0), ry = PRM(rectangles, 1);
            p0 += rx == 0 ? w * tx : w * ((2 * floor(tx / rx) + 1) * rx - tx);
            p1 += ry == 0 ? w * ty : w * ((2 * floor(ty / ry) + 1) * ry - ty);
        } break;
        case KILN_FLAME_VAR_arch: {
            double a = R01() * w * M_PI, s = sin(a), c = cos(a);
            p0 += w * s;
            p1 += w * (s * s) / c;
        } break;
        case KILN_FLAME_VAR_tangent:
            p0 += w * sin(tx) / cos(ty);
            p1 += w * tan(ty);
            break;
        case KILN_FLAME_VAR_square: {
            double a = R01() - 0.5;
            double b = R01() - 0.5;
            p0 += w * a;
            p1 += w * b;
        } break;
        case KILN_FLAME_VAR_rays: {
            double a = w * R01() * M_PI;
            double r = w / (sumsq + EPS);
            double tr = w * tan(a) * r;
            p0 += tr * cos(tx);
            p1 += tr * sin(ty);
        } break;
        case KILN_FLAME_VAR_blade: {
            double r = R01() * w * sq, s = sin(r), c = cos(r);
            p0 += w * tx * (c + s);
            p1 += w * tx * (c - s);
        } break;
        case KILN_FLAME_VAR_secant2: {
            double cr = cos(w * sq), icr = 1.0 / cr;
            p0 += w * tx;
            p1 += cr < 0 ? w * (icr + 1) : w * (icr - 1);
        } break;
        case KILN_FLAME_VAR_twintrian: {
            double r = R01() * w * sq, s = sin(r), c = cos(r);
            double diff = log10(s * s) + c;
            if (badvalue(diff)) diff = -30.0;
            p0 += w * tx * diff;
            p1 += w * tx * (diff - s * M_PI);
        } break;
        case KILN_FLAME_VAR_cross: {
            double s = tx * tx - ty * ty;
            double r = w * sqrt(1.0 / (s * s + EPS));
            p0 += tx * r;
            p1 += ty * r;
        } break;
        case KILN_FLAME_VAR_disc2: {
            double t = pre->disc2_timespi * (tx + ty);
            double r = w * atan_xy / M_PI;
            p0 += (sin(t) + pre->disc2_cosadd) * r;
            p1 += (cos(t) + pre->disc2_sinadd) * r;
        } break;
        case KILN_FLAME_VAR_super_shape: {
            double theta = pre->super_shape_pm_4 * atan_yx + K_PI_4;
            double t1 = pow(fabs(cos(theta)), PRM(super_shape, 3));
            double t2 = pow(fabs(sin(theta)), PRM(super_shape, 4));
            double rnd = PRM(super_shape, 0);
            double r = w * ((rnd * R01() + (1.0 - rnd) * sq) - PRM(super_shape, 5)) *
                       pow(t1 + t2, pre->super_shape_pneg1_n1) / sq;
            p0 += r * tx;
            p1 += r * ty;
        } break;
        case KILN_FLAME_VAR_flower: {
            double r = w * (R01() - PRM(flower, 1)) * cos(PRM(flower, 0) * atan_yx) / sq;
            p0 += r * tx;
            p1 += r * ty;
        } break;
        case KILN_FLAME_VAR_conic: {
            double ct = tx / sq, e = PRM(conic, 0);
            double r = w * (R01() - PRM(conic, 1)) * e / (1 + e * ct) / sq;
            p0 += r * tx;
            p1 += r * ty;
        } break;
        case KILN_FLAME_VAR_parabola: {
            double s = sin(sq), c = cos(sq);
            double a = R01();
            double b = R01();
            p0 += PRM(parabola, 0) * w * s * s * a;
            p1 += PRM(parabola, 1) * w * c * b;
        } break;
        case KILN_FLAME_VAR_bent2: {
            double nx = tx, ny = ty;
            if (nx < 0.0) nx = nx * PRM(bent2, 0);
            if (ny < 0.0) ny = ny * PRM(bent2, 1);
            p0 += w * nx;
            p1 += w * ny;
        } break;
        case KILN_FLAME_VAR_bipolar: {
            double t = sumsq + 1, x2 = 2 * tx;
            double ps = -K_PI_2 * PRM(bipolar, 0);
            double y = 0.5 * atan2(2.0 * ty, sumsq - 1.0) + ps;
            if (y > K_PI_2)
                y = -K_PI_2 + fmod(y + K_PI_2, M_PI);
            else if (y < -K_PI_2)
                y = K_PI_2 - fmod(K_PI_2 - y, M_PI);
            p0 += w * 0.25 * K_2_PI * log((t + x2) / (t - x2));
            p1 += w * K_2_PI * y;
        } break;
        case KILN_FLAME_VAR_boarders: {
            double rX = rint(tx), rY = rint(ty), oX = tx - rX, oY = ty - rY;
            if (R01() >= 0.75) {
                p0 += w * (oX * 0.5 + rX);
                p1 += w * (oY * 0.5 + rY);
            } else if (fabs(oX) >= fabs(oY)) {
                if (oX >= 0.0) {
                    p0 += w * (oX * 0.5 + rX + 0.25);
                    p1 += w * (oY * 0.5 + rY + 0.25 * oY / oX);
                } else {
                    p0 += w * (oX * 0.5 + rX - 0.25);
                    p1 += w * (oY * 0.5 + rY - 0.25 * oY / oX);
                }
            } else {
                if (oY >= 0.0) {
                    p1 += w * (oY * 0.5 + rY + 0.25);
                    p0 += w * (oX * 0.5 + rX + oX / oY * 0.25);
                } else {
                    p1 += w * (oY * 0.5 + rY - 0.25);
                    p0 += w * (oX * 0.5 + rX - oX / oY * 0.25);
                }
            }
        } break;
        case KILN_FLAME_VAR_butterfly: {
            double wx = w * 1.3029400317411197908970256609023;
            double y2 = ty * 2.0;
            double r = wx * sqrt(fabs(ty * tx) / (EPS + tx * tx + y2 * y2));
            p0 += r * tx;
            p1 += r * y2;
        } break;
        case KILN_FLAME_VAR_cell: {
            double cs = PRM(cell, 0), inv = 1.0 / cs;
            double fx = floor(tx * inv), fy = floor(ty * inv);
            /* flam3 converts to int; keep the value range sane before the conversion */
            if (!(fabs(fx) < 1e9) || !(fabs(fy) < 1e9)) {
                p0 = NAN;
                break;
            }
            int x = (int)fx, y = (int)fy;
            double dx = tx - x * cs, dy = ty - y * cs;
            if (y >= 0) {
                y *= 2;
                x = x >= 0 ? x * 2 : -(2 * x + 1);
            } else {
                y = -(2 * y + 1);
                x = x >= 0 ? x * 2 : -(2 * x + 1);
            }
            p0 += w * (dx + x * cs);
            p1 -= w * (dy + y * cs);
        } break;
        case KILN_FLAME_VAR_cpow: {
            double a = atan_yx, lnr = 0.5 * log(sumsq), pw = PRM(cpow, 2);
            double va = 2.0 * M_PI / pw, vc = PRM(cpow, 0) / pw, vd = PRM(cpow, 1) / pw;
            double ang = vc * a + vd * lnr + va * floor(pw * R01());
            double m = w * exp(vc * lnr - vd * a);
            p0 += m * cos(ang);
            p1 += m * sin(ang);
        } break;
        case KILN_FLAME_VAR_curve: {
            double xl = PRM(curve, 2) * PRM(curve, 2), yl = PRM(curve, 3) * PRM(curve, 3);
            if (xl < 1E-20) xl = 1E-20;
            if (yl < 1E-20) yl = 1E-20;
            p0 += w * (tx + PRM(curve, 0) * exp(-ty * ty / xl));
            p1 += w * (ty + PRM(curve, 1) * exp(-tx * tx / yl));
        } break;
        case KILN_FLAME_VAR_edisc: {
            double tmp = sumsq + 1.0, tmp2 = 2.0 * tx;
            double r1 = sqrt(tmp + tmp2), r2 = sqrt(tmp - tmp2);
            double xmax = (r1 + r2) * 0.5;
            double a1 = log(xmax + sqrt(xmax - 1.0));
            double a2 = -acos(tx / xmax);
            double ww = w / 11.57034632;
            double snv = sin(a1), csv = cos(a1);
            double snhu = sinh(a2), cshu = cosh(a2);
            if (ty > 0.0) snv = -snv;
            p0 += ww * cshu * csv;
            p1 += ww * snhu * snv;
        } break;
        case KILN_FLAME_VAR_elliptic: {
            double tmp = sumsq + 1.0, x2 = 2.0 * tx;
            double xmax = 0.5 * (sqrt(tmp + x2) + sqrt(tmp - x2));
            double a = tx / xmax, b = 1.0 - a * a, ssx = xmax - 1.0;
            double ww = w / K_PI_2;
            b = b < 0 ? 0 : sqrt(b);
            ssx = ssx < 0 ? 0 : sqrt(ssx);
            p0 += ww * atan2(a, b);
            if (ty > 0)
                p1 += ww * log(xmax + ssx);
            else
                p1 -= ww * log(xmax + ssx);
        } break;
        case KILN_FLAME_VAR_escher: {
            double a = atan_yx, lnr = 0.5 * log(sumsq);
            double seb = sin(PRM(escher, 0)), ceb = cos(PRM(escher, 0));
            double vc = 0.5 * (1.0 + ceb), vd = 0.5 * seb;
            double m = w * exp(vc * lnr - vd * a), n = vc * a + vd * lnr;
            p0 += m * cos(n);
            p1 += m * sin(n);
        } break;
        case KILN_FLAME_VAR_foci: {
            double expx = exp(tx) * 0.5, expnx = 0.25 / expx;
            double sn = sin(ty), cn = cos(ty);
            double tmp = w / (expx + expnx - cn);
            p0 += tmp * (expx - expnx);
            p1 += tmp * sn;
        } break;
        case KILN_FLAME_VAR_lazysusan: {
            double lx = PRM(lazysusan, 3), ly = PRM(lazysusan, 4);
            double x = tx - lx, y = ty + ly;
            double r = sqrt(x * x + y * y);
            if (r < w) {
                double a = atan2(y, x) + PRM(lazysusan, 0) + PRM(lazysusan, 2) * (w - r);
                r = w * r;
                p0 += r * cos(a) + lx;
                p1 += r * sin(a) - ly;
            } else {
                r = w * (1.0 + PRM(lazysusan, 1) / r);
                p0 += r * x + lx;
                p1 += r * y - ly;
            }
        } break;
        case KILN_FLAME_VAR_loonie: {
            double w2 = w * w;
            if (sumsq < w2) {
                double r = w * sqrt(w2 / sumsq - 1.0);
                p0 += r * tx;
                p1 += r * ty;
            } else {
                p0 += w * tx;
                p1 += w * ty;
            }
        } break;
        case KILN_FLAME_VAR_pre_blur:
            break; /* applied before the sum */
        case KILN_FLAME_VAR_modulus: {
            double mx = PRM(modulus, 0), my = PRM(modulus, 1), xr = 2 * mx, yr = 2 * my;
            if (tx > mx)
                p0 += w * (-mx + fmod(tx + mx, xr));
            else if (tx < -mx)
                p0 += w * (mx - fmod(mx - tx, xr));
            else
                p0 += w * tx;
            if (ty > my)
                p1 += w * (-my + fmod(ty + my, yr));
            else if (ty < -my)
                p1 += w * (my - fmod(my - ty, yr));
            else
                p1 += w * ty;
        } break;
        case KILN_FLAME_VAR_oscilloscope: {
            double tpf = 2 * M_PI * PRM(oscilloscope, 1), t;
            double amp = PRM(oscilloscope, 2), sep = PRM(oscilloscope, 0), damp = PRM(oscilloscope, 3);
            if (damp == 0.0)
                t = amp * cos(tpf * tx) + sep;
            else
                t = amp * exp(-fabs(tx) * damp) * cos(tpf * tx) + sep;
            p0 += w * tx;
            if (fabs(ty) <= t)
                p1 -= w * ty;
            else
                p1 += w * ty;
        } break;
        case KILN_FLAME_VAR_polar2: {
            double p2v = w / M_PI;
            p0 += p2v * atan_xy;
            p1 += p2v / 2.0 * log(sumsq);
        } break;
        case KILN_FLAME_VAR_popcorn2:
            p0 += w * (tx + PRM(popcorn2, 0) * sin(tan(ty * PRM(popcorn2, 2))));
            p1 += w * (ty + PRM(popcorn2, 1) * sin(tan(tx * PRM(popcorn2, 2))));
            break;
        case KILN_FLAME_VAR_scry: {
            double r = 1.0 / (sq * (sumsq + 1.0 / (w + EPS)));
            p0 += tx * r;
            p1 += ty * r;
        } break;
        case KILN_FLAME_VAR_separation: {
            double sx2 = PRM(separation, 0) * PRM(separation, 0), sy2 = PRM(separation, 2) * PRM(separation, 2);
            if (tx > 0.0)
                p0 += w * (sqrt(tx * tx + sx2) - tx * PRM(separation, 1));
            else
                p0 -= w * (sqrt(tx * tx + sx2) + tx * PRM(separation, 1));
            if (ty > 0.0)
                p1 += w * (sqrt(ty * ty + sy2) - ty * PRM(separation, 3));
            else
                p1 -= w * (sqrt(ty * ty + sy2) + ty * PRM(separation, 3));
        } break;
        case KILN_FLAME_VAR_split:
            if (cos(tx * PRM(split, 0) * M_PI) >= 0)
                p1 += w * ty;
            else
                p1 -= w * ty;
            if (cos(ty * PRM(split, 1) * M_PI) >= 0)
                p0 += w * tx;
            else
                p0 -= w * tx;
            break;
        case KILN_FLAME_VAR_splits:
            p0 += tx >= 0 ? w * (tx + PRM(splits, 0)) : w * (tx - PRM(splits, 0));
            p1 += ty >= 0 ? w * (ty + PRM(splits, 1)) : w * (ty - PRM(splits, 1));
            break;
        case KILN_FLAME_VAR_stripes: {
            double rx = floor(tx + 0.5), ox = tx - rx;
            p0 += w * (ox * (1.0 - PRM(stripes, 0)) + rx);
            p1 += w * (ty + ox * ox * PRM(stripes, 1));
        } break;
        case KILN_FLAME_VAR_wedge: {
            double ang = PRM(wedge, 0), cnt = PRM(wedge, 2);
            double r = sq, a = atan_yx + PRM(wedge, 3) * r;
            double c = floor((cnt * a + M_PI) * K_1_PI * 0.5);
            double cf = 1 - ang * cnt * K_1_PI * 0.5;
            a = a * cf + c * ang;
            r = w * (r + PRM(wedge, 1));
            p0 += r * cos(a);
            p1 += r * sin(a);
        } break;
        case KILN_FLAME_VAR_wedge_julia: {
            double r = w * pow(sumsq, pre->wedge_julia_cn);
            int t_rnd = toint(pre->wedge_julia_rN * R01());
            double a = (atan_yx + 2 * M_PI * t_rnd) / PRM(wedge_julia, 2);
            double c = floor((PRM(wedge_julia, 1) * a + M_PI) * K_1_PI * 0.5);
            a = a * pre->wedge_julia_cf + c * PRM(wedge_julia, 0);
            p0 += r * cos(a);
            p1 += r * sin(a);
        } break;
        case KILN_FLAME_VAR_wedge_sph: {
            double ang = PRM(wedge_sph, 0), cnt = PRM(wedge_sph, 1);
            double r = 1.0 / (sq + EPS), a = atan_yx + PRM(wedge_sph, 3) * r;
            double c = floor((cnt * a + M_PI) * K_1_PI * 0.5);
            double cf = 1 - ang * cnt * K_1_PI * 0.5;
            a = a * cf + c * ang;
            r = w * (r + PRM(wedge_sph, 2));
            p0 += r * cos(a);
            p1 += r * sin(a);
        } break;
        case KILN_FLAME_VAR_whorl: {
            double r = sq, a;
            if (r < w)
                a = atan_yx + PRM(whorl, 0) / (w - r);
            else
                a = atan_yx + PRM(whorl, 1) / (w - r);
            p0 += w * r * cos(a);
            p1 += w * r * sin(a);
        } break;
        case KILN_FLAME_VAR_waves2:
            p0 += w * (tx + PRM(waves2, 1) * sin(ty * PRM(waves2, 0)));
            p1 += w * (ty + PRM(waves2, 3) * sin(tx * PRM(waves2, 2)));
            break;
        case KILN_FLAME_VAR_exp: {
            double e = exp(tx);
            p0 += w * e * cos(ty);
            p1 += w * e * sin(ty);
        } break;
        case KILN_FLAME_VAR_log:
            p0 += w * 0.5 * log(sumsq);
            p1 += w * atan_yx;
            break;
        case KILN_FLAME_VAR_sin:
            p0 += w * sin(tx) * cosh(ty);
            p1 += w * cos(tx) * sinh(ty);
            break;
        case KILN_FLAME_VAR_cos:
            p0 += w * cos(tx) * cosh(ty);
            p1 -= w * sin(tx) * sinh(ty);
            break;
        case KILN_FLAME_VAR_tan: {
            double den = 1.0 / (cos(2 * tx) + cosh(2.0 * ty));
            p0 += w * den * sin(2 * tx);
            p1 += w * den * sinh(2.0 * ty);
        } break;
        case KILN_FLAME_VAR_sec: {
            double den = 2.0 / (cos(2 * tx) + cosh(2 * ty));
            p0 += w * den * cos(tx) * cosh(ty);
            p1 += w * den * sin(tx) * sinh(ty);
        } break;
        case KILN_FLAME_VAR_csc: {
            double den = 2.0 / (cosh(2.0 * ty) - cos(2.0 * tx));
            p0 += w * den * sin(tx) * cosh(ty);
            p1 -= w * den * cos(tx) * sinh(ty);
        } break;
        case KILN_FLAME_VAR_cot: {
            double den = 1.0 / (cosh(2.0 * ty) - cos(2.0 * tx));
            p0 += w * den * sin(2.0 * tx);
            p1 += w * den * -1 * sinh(2.0 * ty);
        } break;
        case KILN_FLAME_VAR_sinh:
            p0 += w * sinh(tx) * cos(ty);
            p1 += w * cosh(tx) * sin(ty);
            break;
        case KILN_FLAME_VAR_cosh:
            p0 += w * cosh(tx) * cos(ty);
            p1 += w * sinh(tx) * sin(ty);
            break;
        case KILN_FLAME_VAR_tanh: {
            double den = 1.0 / (cos(2.0 * ty) + cosh(2.0 * tx));
            p0 += w * den * sinh(2.0 * tx);
            p1 += w * den * sin(2.0 * ty);
        } break;
        case KILN_FLAME_VAR_sech: {
            double den = 2.0 / (cos(2.0 * ty) + cosh(2.0 * tx));
            p0 += w * den * cos(ty) * cosh(tx);
            p1 -= w * den * sin(ty) * sinh(tx);
        } break;
        case KILN_FLAME_VAR_csch: {
            double den = 2.0 / (cosh(2.0 * tx) - cos(2.0 * ty));
            p0 += w * den * sinh(tx) * cos(ty);
            p1 -= w * den * cosh(tx) * sin(ty);
        } break;
        case KILN_FLAME_VAR_coth: {
            double den = 1.0 / (cosh(2.0 * tx) - cos(2.0 * ty));
            p0 += w * den * sinh(2.0 * tx);
            p1 += w * den * sin(2.0 * ty);
        } break;
        case KILN_FLAME_VAR_auger: {
            double fr = PRM(auger, 0), aw = PRM(auger, 1), sym = PRM(auger, 2), sc = PRM(auger, 3);
            double s = sin(fr * tx), t = sin(fr * ty);
            double dy = ty + aw * (sc * s / 2.0 + fabs(ty) * s);
            double dx = tx + aw * (sc * t / 2.0 + fabs(tx) * t);
            p0 += w * (tx + sym * (dx - tx));
            p1 += w * dy;
        } break;
        case KILN_FLAME_VAR_flux: {
            double xpw = tx + w, xmw = tx - w;
            double avgr = w * (2 + PRM(flux, 0)) * sqrt(sqrt(ty * ty + xpw * xpw) / sqrt(ty * ty + xmw * xmw));
            double avga = (atan2(ty, xmw) - atan2(ty, xpw)) * 0.5;
            p0 += avgr * cos(avga);
            p1 += avgr * sin(avga);
        } break;
        case KILN_FLAME_VAR_mobius: {
            double ra = PRM(mobius, 0), ia = PRM(mobius, 1), rb = PRM(mobius, 2), ib = PRM(mobius, 3);
            double rc = PRM(mobius, 4), ic = PRM(mobius, 5), rd = PRM(mobius, 6), id = PRM(mobius, 7);
            double re_u = ra * tx - ia * ty + rb, im_u = ra * ty + ia * tx + ib;
            double re_v = rc * tx - ic * ty + rd, im_v = rc * ty + ic * tx + id;
            double rad = w / (re_v * re_v + im_v * im_v);
            p0 += rad * (re_u * re_v + im_u * im_v);
            p1 += rad * (im_u * re_v - re_u * im_v);
        } break;
        default:
            break;
        }
    }

    if (xf->has_post) {
        q[0] = xf->post[0][0] * p0 + xf->post[1][0] * p1 + xf->post[2][0];
        q[1] = xf->post[0][1] * p0 + xf->post[1][1] * p1 + xf->post[2][1];
    } else {
        q[0] = p0;
        q[1] = p1;
    }
    if (badvalue(q[0]) || badvalue(q[1])) {
        q[0] = kiln__flame_rng_11(rng);
        q[1] = kiln__flame_rng_11(rng);
        return 1;
    }
    return 0;
}

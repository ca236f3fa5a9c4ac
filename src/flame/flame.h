/* flame.h - fractal flames (flam3 3.1 genomes): data structures, the variation table and the
 * internal API shared by the CPU renderer (src/flame, files not named gpu_) and the GPU renderer (gpu_ files).
 * Not installed. The public entry points are in include/kiln/kiln.h ("flames").
 *
 * Pipeline:   kiln__flame_parse  ->  kiln__flame_setup  ->  (CPU: kiln__flame_iterate_cpu |
 *             GPU: its own chaos game)  ->  kiln_flame_hist  ->  kiln__flame_tonemap  ->  kiln_image
 * Every renderer produces the same histogram (kiln_flame_hist, flam3's bucket layout and scale) and
 * shares kiln__flame_tonemap (density estimation, spatial filter, final colour), so only the chaos
 * game differs between backends. See docs/FLAME.md and /work/shared/notes/flame.md. */
#ifndef KILN_FLAME_H
#define KILN_FLAME_H

#include "core/internal.h"

#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- variations ------------------ */

/* X(INDEX, NAME, NPARAMS, "PARAM NAMES") - flam3 3.1.1's 99 variations in flam3's order. NAME is the
 * XML attribute; PARAM NAMES are the XML attribute names of its parameters separated by single
 * spaces, in the order they are stored in kiln_flame_xform.params[INDEX][0..NPARAMS-1]. The parser also
 * accepts flam3's aliases (Re_A .. Im_D for mobius, oscope_* for oscilloscope). */
#define KILN_FLAME_VARIATIONS(X)                                                                              \
    X(0, linear, 0, "")                                                                                       \
    X(1, sinusoidal, 0, "")                                                                                   \
    X(2, spherical, 0, "")                                                                                    \
    X(3, swirl, 0, "")                                                                                        \
    X(4, horseshoe, 0, "")                                                                                    \
    X(5, polar, 0, "")                                                                                        \
    X(6, handkerchief, 0, "")                                                                                 \
    X(7, heart, 0, "")                                                                                        \
    X(8, disc, 0, "")                                                                                         \
    X(9, spiral, 0, "")                                                                                       \
    X(10, hyperbolic, 0, "")                                                                                  \
    X(11, diamond, 0, "")                                                                                     \
    X(12, ex, 0, "")                                                                                          \
    X(13, julia, 0, "")                                                                                       \
    X(14, bent, 0, "")                                                                                        \
    X(15, waves, 0, "")                                                                                       \
    X(16, fisheye, 0, "")                                                                                     \
    X(17, popcorn, 0, "")                                                                                     \
    X(18, exponential, 0, "")                                                                                 \
    X(19, power, 0, "")                                                                                       \
    X(20, cosine, 0, "")                                                                                      \
    X(21, rings, 0, "")                                                                                       \
    X(22, fan, 0, "")                                                                                         \
    X(23, blob, 3, "blob_low blob_high blob_waves")                                                           \
    X(24, pdj, 4, "pdj_a pdj_b pdj_c pdj_d")                                                                  \
    X(25, fan2, 2, "fan2_x fan2_y")                                                                           \
    X(26, rings2, 1, "rings2_val")                                                                            \
    X(27, eyefish, 0, "")                                                                                     \
    X(28, bubble, 0, "")                                                                                      \
    X(29, cylinder, 0, "")                                                                                    \
    X(30, perspective, 2, "perspective_angle perspective_dist")                                               \
    X(31, noise, 0, "")                                                                                       \
    X(32, julian, 2, "julian_power julian_dist")                                                              \
    X(33, juliascope, 2, "juliascope_power juliascope_dist")                                                  \
    X(34, blur, 0, "")                                                                                        \
    X(35, gaussian_blur, 0, "")                                                                               \
    X(36, radial_blur, 1, "radial_blur_angle")                                                                \
    X(37, pie, 3, "pie_slices pie_rotation pie_thickness")                                                    \
    X(38, ngon, 4, "ngon_sides ngon_power ngon_circle ngon_corners")                                          \
    X(39, curl, 2, "curl_c1 curl_c2")                                                                         \
    X(40, rectangles, 2, "rectangles_x rectangles_y")                                                         \
    X(41, arch, 0, "")                                                                                        \
    X(42, tangent, 0, "")                                                                                     \
    X(43, square, 0, "")                                                                                      \
    X(44, rays, 0, "")                                                                                        \
    X(45, blade, 0, "")                                                                                       \
    X(46, secant2, 0, "")                                                                                     \
    X(47, twintrian, 0, "")                                                                                   \
    X(48, cross, 0, "")                                                                                       \
    X(49, disc2, 2, "disc2_rot disc2_twist")                                                                  \
    X(50, super_shape, 6, "super_shape_rnd super_shape_m super_shape_n1 super_shape_n2 super_shape_n3 "     \
                          "super_shape_holes")                                                                \
    X(51, flower, 2, "flower_petals flower_holes")                                                            \
    X(52, conic, 2, "conic_eccentricity conic_holes")                                                         \
    X(53, parabola, 2, "parabola_height parabola_width")                                                      \
    X(54, bent2, 2, "bent2_x bent2_y")                                                                        \
    X(55, bipolar, 1, "bipolar_shift")                                                                        \
    X(56, boarders, 0, "")                                                                                    \
    X(57, butterfly, 0, "")                                                                                   \
    X(58, cell, 1, "cell_size")                                                                               \
    X(59, cpow, 3, "cpow_r cpow_i cpow_power")                                                                \
    X(60, curve, 4, "curve_xamp curve_yamp curve_xlength curve_ylength")                                      \
    X(61, edisc, 0, "")                                                                                       \
    X(62, elliptic, 0, "")                                                                                    \
    X(63, escher, 1, "escher_beta")                                                                           \
    X(64, foci, 0, "")                                                                                        \
    X(65, lazysusan, 5, "lazysusan_spin lazysusan_space lazysusan_twist lazysusan_x lazysusan_y")             \
    X(66, loonie, 0, "")                                                                                      \
    X(67, pre_blur, 0, "")                                                                                    \
    X(68, modulus, 2, "modulus_x modulus_y")                                                                  \
    X(69, oscilloscope, 4, "oscilloscope_separation oscilloscope_frequency oscilloscope_amplitude "           \
                           "oscilloscope_damping")                                                            \
    X(70, polar2, 0, "")                                                                                      \
    X(71, popcorn2, 3, "popcorn2_x popcorn2_y popcorn2_c")                                                    \
    X(72, scry, 0, "")                                                                                        \
    X(73, separation, 4, "separation_x separation_xinside separation_y separation_yinside")                   \
    X(74, split, 2, "split_xsize split_ysize")                                                                \
    X(75, splits, 2, "splits_x splits_y")                                                                     \
    X(76, stripes, 2, "stripes_space stripes_warp")                                                           \
    X(77, wedge, 4, "wedge_angle wedge_hole wedge_count wedge_swirl")                                         \
    X(78, wedge_julia, 4, "wedge_julia_angle wedge_julia_count wedge_julia_power wedge_julia_dist")           \
    X(79, wedge_sph, 4, "wedge_sph_angle wedge_sph_count wedge_sph_hole wedge_sph_swirl")                     \
    X(80, whorl, 2, "whorl_inside whorl_outside")                                                             \
    X(81, waves2, 4, "waves2_freqx waves2_scalex waves2_freqy waves2_scaley")                                 \
    X(82, exp, 0, "")                                                                                         \
    X(83, log, 0, "")                                                                                         \
    X(84, sin, 0, "")                                                                                         \
    X(85, cos, 0, "")                                                                                         \
    X(86, tan, 0, "")                                                                                         \
    X(87, sec, 0, "")                                                                                         \
    X(88, csc, 0, "")                                                                                         \
    X(89, cot, 0, "")                                                                                         \
    X(90, sinh, 0, "")                                                                                        \
    X(91, cosh, 0, "")                                                                                        \
    X(92, tanh, 0, "")                                                                                        \
    X(93, sech, 0, "")                                                                                        \
    X(94, csch, 0, "")                                                                                        \
    X(95, coth, 0, "")                                                                                        \
    X(96, auger, 4, "auger_freq auger_weight auger_sym auger_scale")                                          \
    X(97, flux, 1, "flux_spread")                                                                             \
    X(98, mobius, 8, "mobius_re_a mobius_im_a mobius_re_b mobius_im_b mobius_re_c mobius_im_c mobius_re_d mobius_im_d")

enum {
#define KILN_FLAME_X_ENUM(I, N, P, S) KILN_FLAME_VAR_##N = I,
    KILN_FLAME_VARIATIONS(KILN_FLAME_X_ENUM)
#undef KILN_FLAME_X_ENUM
    KILN_FLAME_NVARS = 99
};

#define KILN_FLAME_MAX_PARAMS 8    /* most parameters of one variation (mobius) */
#define KILN_FLAME_MAX_XFORMS 128  /* xforms per flame, final xform included (flam3 has no limit) */
#define KILN_FLAME_EPS 1e-10       /* flam3's EPS */

typedef struct kiln_flame_var_info {
    const char *name;
    uint32_t nparams;
    const char *param_names[KILN_FLAME_MAX_PARAMS]; /* full attribute names, e.g. "blob_low" */
    double param_defaults[KILN_FLAME_MAX_PARAMS];   /* flam3's defaults */
} kiln_flame_var_info;

/* Table entry for variation i (0..98), NULL otherwise; and the index for a name (-1 when unknown). */
const kiln_flame_var_info *kiln__flame_var_info(int i);
int kiln__flame_var_lookup(const char *name);

struct kiln_flame_xform;
/* A parameter attribute name ("blob_low") to (variation, index); 0 when unknown. */
int kiln__flame_param_lookup(const char *name, int *var, int *index);
/* Sets every variation parameter of xf to flam3's default. */
void kiln__flame_params_default(struct kiln_flame_xform *xf);

/* ---------------------------------------------------------------- genome ---------------------- */

typedef struct kiln_flame_xform {
    double weight;       /* selection weight >= 0 (ignored for the final xform) */
    double color;        /* palette coordinate [0, 1] */
    double color_speed;  /* flam3 3.1 "color_speed" (old "symmetry" s -> (1 - s) / 2), default 0.5 */
    double opacity;      /* 0..1; the plotted visibility is opacity^log2(10) (flam3's adjust_percentage) */
    double animate;      /* parsed and kept; stills ignore it */
    /* affine: x' = c[0][0] x + c[1][0] y + c[2][0];  y' = c[0][1] x + c[1][1] y + c[2][1]
     * (XML coefs="a d b e c f" = c[0][0] c[0][1] c[1][0] c[1][1] c[2][0] c[2][1]) */
    double c[3][2];
    double post[3][2];   /* post affine, identity when absent */
    int has_post;        /* post is not the identity */
    double var[KILN_FLAME_NVARS];                          /* variation weights (0 = off; may be < 0) */
    double params[KILN_FLAME_NVARS][KILN_FLAME_MAX_PARAMS]; /* variation parameters (defaults filled) */
    /* derived by the parser: the variations with non-zero weight, in index order (pre_blur included) */
    uint8_t active[KILN_FLAME_NVARS];
    uint32_t nactive;
} kiln_flame_xform;

typedef enum kiln_flame_filter_shape { /* flam3's order and names */
    KILN_FLAME_FILTER_GAUSSIAN = 0, KILN_FLAME_FILTER_HERMITE, KILN_FLAME_FILTER_BOX, KILN_FLAME_FILTER_TRIANGLE,
    KILN_FLAME_FILTER_BELL, KILN_FLAME_FILTER_BSPLINE, KILN_FLAME_FILTER_MITCHELL, KILN_FLAME_FILTER_BLACKMAN,
    KILN_FLAME_FILTER_CATROM, KILN_FLAME_FILTER_HANNING, KILN_FLAME_FILTER_HAMMING, KILN_FLAME_FILTER_LANCZOS3,
    KILN_FLAME_FILTER_LANCZOS2, KILN_FLAME_FILTER_QUADRATIC
} kiln_flame_filter_shape;

typedef struct kiln_flame {
    char name[72];
    /* camera */
    uint32_t width, height;     /* size="W H", default 100 100 */
    double center[2];           /* world point at the image centre (and rotation centre) */
    double pixels_per_unit;     /* scale, default 50 */
    double zoom;                /* ppu x 2^zoom and samples x 4^zoom */
    double rotate;              /* degrees */
    /* sampling */
    uint32_t supersample;       /* supersample / oversample, default 1 */
    double quality;             /* samples per output pixel (x 4^zoom), default 1 */
    uint32_t passes;            /* batches (legacy), default 1 */
    uint32_t temporal_samples;  /* parsed; stills use 1 as flam3-render does */
    /* spatial filter */
    double filter;              /* filter radius, default 0.5 (flam3 clamps nothing; < 0 is an error) */
    kiln_flame_filter_shape filter_shape;
    /* density estimation (radius 0 = off) */
    double estimator_radius, estimator_minimum, estimator_curve; /* 9, 0, 0.4 */
    /* tone map */
    double brightness;          /* 4 */
    double contrast;            /* 1 (flam3 ignores it for rendering; kept) */
    double gamma;               /* 4 */
    double gamma_threshold;     /* 0.01 */
    double vibrancy;            /* 1 */
    double highlight_power;     /* -1 = off */
    double background[3];       /* 0..1 */
    int earlyclip;              /* 0 */
    /* palette: 256 RGBA entries in 0..1, RGB premultiplied by alpha as flam3 does at parse */
    int palette_index;          /* palette="N" as given, -1 when absent */
    double hue;                 /* hue rotation in turns (applied to library palettes only) */
    int palette_linear;         /* palette_mode="linear" (default "step") */
    float palette[256][4];
    /* xforms: xforms[0 .. num_xforms-1], the final xform (if any) is the last one */
    kiln_flame_xform *xforms;
    uint32_t num_xforms;        /* including the final xform */
    int final_xform;            /* index of the final xform (== num_xforms - 1) or -1 */
    /* xaos: chaos[i * num_xforms + j] multiplies xform j's weight when xform i was the previous one
     * (rows/columns of the final xform unused); NULL when the genome has no chaos (all 1) */
    double *chaos;
} kiln_flame;

/* Parses every <flame> element (at any depth) of an XML document. *flames is an array of *count
 * flames allocated here (free with kiln__flame_free_all). `name` labels error messages. Fails with
 * KILN_ERR_CORRUPT on malformed XML, unknown variations or attributes flam3 rejects, non-finite or
 * absurd values (|coef| > 1e10, size 0 or > KILN_MAX_DIMENSION, quality <= 0 or > 1e6, ...), and
 * when the document holds no flame. Palette="N" needs flam3-palettes.xml (looked up in
 * $flam3_palettes, /usr/share/flam3/flam3-palettes.xml); KILN_ERR_UNSUPPORTED when it is missing. */
kiln_status kiln__flame_parse(kiln_context *ctx, const char *xml, size_t size, const char *name, kiln_flame **flames,
                              uint32_t *count);
void kiln__flame_free(kiln_flame *flame);                  /* frees the contents, not the struct */
void kiln__flame_free_all(kiln_flame *flames, uint32_t count); /* frees contents and the array */

/* ---------------------------------------------------------------- render setup ---------------- */

typedef struct kiln_flame_render_opts {
    uint32_t width, height;     /* 0 = the genome's size; otherwise scale is adjusted like flam3-render's
                                   (ppu x width / genome width) so the framing stays the same */
    double quality;             /* <= 0: the genome's quality */
    uint32_t supersample;       /* 0: the genome's */
    uint64_t seed;
    uint32_t threads_hint;      /* unused by the CPU path (deterministic for any thread count) */
} kiln_flame_render_opts;

/* Geometry and constants derived from a genome + options (flam3's rect.c set-up). */
typedef struct kiln_flame_setup {
    uint32_t out_w, out_h;      /* output image */
    uint32_t ss;                /* supersample */
    uint32_t hist_w, hist_h;    /* histogram = ss*out + 2*gutter */
    uint32_t gutter;            /* gutter width in histogram cells */
    int filter_width;           /* spatial filter taps per axis */
    double ppu;                 /* pixels per unit after zoom (output pixels) */
    double bounds[4];           /* world xmin, ymin, xmax, ymax of the histogram */
    double to_hist[2];          /* histogram cells per world unit, x and y */
    double rot_cos, rot_sin;    /* camera rotation (rotate about center) */
    int rotated;                /* rotate != 0 */
    double quality;             /* effective quality */
    uint64_t nsamples;          /* quality * 4^zoom * out_w * out_h (flam3's sample count) */
    double k1, k2;              /* log-density constants (notes section 4) */
    uint64_t seed;
} kiln_flame_setup;

kiln_status kiln__flame_setup(kiln_context *ctx, const kiln_flame *flame, const kiln_flame_render_opts *opts,
                              kiln_flame_setup *out);

/* ---------------------------------------------------------------- histogram ------------------- */

/* The accumulator: hist_w x hist_h buckets, 4 floats each (R, G, B, A) in flam3's scale: every plotted
 * sample adds vis * palette[c] * 255 (RGB premultiplied, A = vis * 255 * palette alpha). Row 0 is the
 * minimum world y. */
typedef struct kiln_flame_hist {
    uint32_t width, height;
    float *rgba;
    uint64_t samples_plotted;   /* statistics */
    uint64_t bad_values;
} kiln_flame_hist;

kiln_status kiln__flame_hist_alloc(kiln_context *ctx, kiln_flame_hist *hist, uint32_t width, uint32_t height);
void kiln__flame_hist_free(kiln_flame_hist *hist);

/* The CPU chaos game: nsamples points (after fuse) into hist (allocated here to setup's histogram
 * size). Multithreaded through kiln__parallel_for; the result is the same for any thread count. */
kiln_status kiln__flame_iterate_cpu(kiln_context *ctx, const kiln_flame *flame, const kiln_flame_setup *setup,
                                    kiln_flame_hist *hist);

/* The GPU chaos game (a src/flame/gpu_NAME.c file, owned by the GPU renderer): fills hist exactly as
 * kiln__flame_iterate_cpu does (same size, same scale: vis * 255 * palette per sample), so the shared
 * tone map applies. Returns KILN_ERR_NO_DEVICE when no Vulkan device is usable (kiln_flame_render then
 * falls back to the CPU under KILN_BACKEND_AUTO). kiln_flame_render calls it only when the build has a
 * a src/flame/gpu_NAME.c file (CMake defines KILN_FLAME_GPU=1 then), so the GPU file must always define it
 * (a stub returning KILN_ERR_NO_DEVICE when Vulkan is off). */
kiln_status kiln__flame_iterate_gpu(kiln_context *ctx, const kiln_flame *flame, const kiln_flame_setup *setup,
                                    kiln_flame_hist *hist);

/* Density estimation (or the plain log scale when estimator_radius is 0), spatial filter and
 * downsample, gamma / vibrancy / highlight power / background: flam3's rect.c. Writes an RGBA U8
 * image (alpha 255: flam3-render's default, no transparency) of setup->out_w x out_h, allocated here. */
kiln_status kiln__flame_tonemap(kiln_context *ctx, const kiln_flame *flame, const kiln_flame_setup *setup,
                                const kiln_flame_hist *hist, kiln_image *out);

/* Issue #7's blurred-RGB metric (src/flame/judge.c), shared by the GPU flame tests and benches: the RGB of an
 * RGBA8 image blurred by a separable Gaussian (sigma 1.5, radius 4, edges clamped) as 3 * w * h floats
 * (malloc'd; NULL when not RGBA8 or out of memory), and the PSNR (peak 255) of two such planes. */
float *kiln__flame_blurred_rgb(const kiln_image *img);
double kiln__flame_psnr_rgb(const float *x, const float *y, size_t n);

/* Tone-map tables shared by kiln__flame_tonemap and the GPU post passes (src/gpu/gpu_flame_post.c), so
 * both use the very same numbers. Density estimation: filters 0..max_index, filter k has radius
 * widths[k] and coefs[k * kernel_size + jj * (jj + 1) / 2 + ii] for the offsets (+-ii, +-jj) and
 * (+-jj, +-ii), 0 <= ii <= jj <= ceil(widths[k]) - 1 (flam3's triangular layout). */
typedef struct kiln_flame_de {
    double *coefs, *widths;
    int kernel_size, max_index, half;
    double max_filtered_counts;
} kiln_flame_de;
kiln_status kiln__flame_de_make(kiln_context *ctx, const kiln_flame *flame, uint32_t ss, kiln_flame_de *de);
void kiln__flame_de_free(kiln_flame_de *de);
/* The filter a bucket with filtered count fs (its (ss/2*2+1)^2 box of A / 255, x (ss/(ss+1))^2 for
 * even ss) gets: flam3's rule, clamped to 0..max_index. */
int kiln__flame_de_index(const kiln_flame_de *de, double curve, double fs);
/* The normalised spatial filter: setup->filter_width^2 doubles, filter[i + j * fw] (free with free). */
kiln_status kiln__flame_spatial_kernel(kiln_context *ctx, const kiln_flame *flame, const kiln_flame_setup *setup,
                                       double **filter);

/* ---------------------------------------------------------------- variations / iteration ------- */

/* Per-xform values precomputed from the parameters (flam3's xform_precalc), shared by the CPU
 * iterator; the GPU may use it too. */
typedef struct kiln_flame_xform_pre {
    double persp_vsin, persp_vfcos;
    double julian_rN, julian_cn, juliascope_rN, juliascope_cn;
    double wedge_julia_rN, wedge_julia_cn, wedge_julia_cf;
    double radial_spinvar, radial_zoomvar;
    double waves_dx2, waves_dy2;
    double disc2_sinadd, disc2_cosadd, disc2_timespi;
    double super_shape_pm_4, super_shape_pneg1_n1;
    double vis;                 /* opacity^log2(10), 0 for opacity 0 */
    int need_atan_xy;           /* some active variation reads atan2(tx, ty) */
    int need_angles;            /* ... sina = tx / r, cosa = ty / r */
    int need_atan_yx;           /* ... atan2(ty, tx) */
    double pre_blur;            /* pre_blur weight (0 = none); applied to (tx, ty) before the others */
} kiln_flame_xform_pre;

void kiln__flame_xform_precalc(const kiln_flame_xform *xf, kiln_flame_xform_pre *pre);

/* A small RNG state for the variations that draw random numbers (one per thread / stream). */
typedef struct kiln_flame_rng {
    uint64_t s[4];
} kiln_flame_rng;
void kiln__flame_rng_seed(kiln_flame_rng *r, uint64_t seed, uint64_t stream);
uint64_t kiln__flame_rng_next(kiln_flame_rng *r);
double kiln__flame_rng_01(kiln_flame_rng *r);   /* [0, 1) */
double kiln__flame_rng_11(kiln_flame_rng *r);   /* [-1, 1) */

/* Applies xform xf (affine, variations, post affine) to point p (x, y); writes the result to q.
 * Returns 0 when the result is good, 1 for a bad value (NaN or |x|,|y| > 1e10: flam3's rule). */
int kiln__flame_apply_xform(const kiln_flame_xform *xf, const kiln_flame_xform_pre *pre, const double p[2],
                            double q[2], kiln_flame_rng *rng);

#endif

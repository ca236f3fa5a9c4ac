/* render.c - the CPU flame renderer: set-up (flam3's rect.c camera and gutters), the chaos game
 * (flam3_iterate rules), density estimation, spatial filter and final colour; and the public API.
 *
 * Determinism: the nsamples samples are cut into sub-batches of SUB_BATCH samples (flam3's
 * sub_batch_size, each starting from a fresh random point with FUSE iterations). Sub-batch k draws
 * from its own RNG stream seeded by (seed, k), so the sample stream does not depend on the thread
 * count; every worker adds into its own integer histogram (flam3's bits=33 buckets: each add is
 * truncated to an integer) and integer sums do not depend on the order. */
#include "flame/flame.h"
#if defined(KILN_FLAME_GPU)
#include "flame/gpu_flame.h" /* kiln__flame_render_gpu */
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define SUB_BATCH 10000
#define FUSE 15
#define GRAIN 16384           /* xform selection table size (flam3's CHOOSE_XFORM_GRAIN) */
#define DE_THRESH 100
#define PREFILTER_WHITE 255.0
#define WHITE_LEVEL 255.0
#define MAX_SAMPLES 1e12      /* beyond this a render would take many hours: refused as absurd */
#define MAX_FILTER_TAPS 48    /* spatial filter taps per axis (flam3 default: 3..5) */
#define MAX_DE_RADIUS 64      /* estimator_radius x supersample, in histogram cells */
#define MAX_HIST_CELLS (1ull << 31)

static const char *label(const kiln_flame *f) { return f->name[0] ? f->name : "(unnamed)"; }

/* ---------------------------------------------------------------- filters ------------------- */

static const double spatial_support[14] = {1.5, 1.0, 0.5, 1.0, 1.5, 2.0, 2.0, 1.0, 2.0, 1.0, 1.0, 3.0, 2.0, 1.5};

static double sinc(double x)
{
    x *= M_PI;
    return x != 0 ? sin(x) / x : 1.0;
}

static double gaussian(double x) { return exp(-2.0 * x * x) * sqrt(2.0 / M_PI); }

static double spatial_filter(int k, double t)
{
    double tt;
    switch (k) {
    case KILN_FLAME_FILTER_GAUSSIAN: return gaussian(t);
    case KILN_FLAME_FILTER_HERMITE:
        t = fabs(t);
        return t < 1.0 ? (2.0 * t - 3.0) * t * t + 1.0 : 0.0;
    case KILN_FLAME_FILTER_BOX: return (t > -0.5 && t <= 0.5) ? 1.0 : 0.0;
    case KILN_FLAME_FILTER_TRIANGLE:
        t = fabs(t);
        return t < 1.0 ? 1.0 - t : 0.0;
    case KILN_FLAME_FILTER_BELL:
        t = fabs(t);
        if (t < .5) return .75 - t * t;
        if (t < 1.5) {
            t = t - 1.5;
            return .5 * t * t;
        }
        return 0.0;
    case KILN_FLAME_FILTER_BSPLINE:
        t = fabs(t);
        if (t < 1) {
            tt = t * t;
            return .5 * tt * t - tt + 2.0 / 3.0;
        }
        if (t < 2) {
            t = 2 - t;
            return (1.0 / 6.0) * t * t * t;
        }
        return 0.0;
    case KILN_FLAME_FILTER_MITCHELL: {
        const double b = 1.0 / 3.0, c = 1.0 / 3.0;
        tt = t * t;
        t = fabs(t);
        if (t < 1.0)
            return (((12.0 - 9.0 * b - 6.0 * c) * (t * tt)) + ((-18.0 + 12.0 * b + 6.0 * c) * tt) + (6.0 - 2 * b)) / 6.0;
        if (t < 2.0)
            return (((-1.0 * b - 6.0 * c) * (t * tt)) + ((6.0 * b + 30.0 * c) * tt) + ((-12.0 * b - 48.0 * c) * t) +
                    (8.0 * b + 24 * c)) / 6.0;
        return 0.0;
    }
    case KILN_FLAME_FILTER_BLACKMAN: return sinc(t) * (0.42 + 0.5 * cos(M_PI * t) + 0.08 * cos(2 * M_PI * t));
    case KILN_FLAME_FILTER_CATROM:
        if (t < -2.0) return 0.0;
        if (t < -1.0) return 0.5 * (4.0 + t * (8.0 + t * (5.0 + t)));
        if (t < 0.0) return 0.5 * (2.0 + t * t * (-5.0 - 3.0 * t));
        if (t < 1.0) return 0.5 * (2.0 + t * t * (-5.0 + 3.0 * t));
        if (t < 2.0) return 0.5 * (4.0 + t * (-8.0 + t * (5.0 - t)));
        return 0.0;
    case KILN_FLAME_FILTER_HANNING: return sinc(t) * (0.5 + 0.5 * cos(M_PI * t));
    case KILN_FLAME_FILTER_HAMMING: return sinc(t) * (0.54 + 0.46 * cos(M_PI * t));
    case KILN_FLAME_FILTER_LANCZOS3: return (fabs(t) < 3.0 ? sinc(t) * sinc(t / 3.0) : 0.0) * sinc(t / 3.0);
    case KILN_FLAME_FILTER_LANCZOS2: return (fabs(t) < 2.0 ? sinc(t) * sinc(t / 2.0) : 0.0) * sinc(t / 2.0);
    case KILN_FLAME_FILTER_QUADRATIC:
        if (t < -1.5) return 0.0;
        if (t < -0.5) return 0.5 * (t + 1.5) * (t + 1.5);
        if (t < 0.5) return 0.75 - t * t;
        if (t < 1.5) return 0.5 * (t - 1.5) * (t - 1.5);
        return 0.0;
    default: return gaussian(t);
    }
}

static int filter_width_of(const kiln_flame *f, uint32_t ss)
{
    double supp = spatial_support[f->filter_shape];
    double fw = 2.0 * supp * ss * f->filter;
    int fwidth = (int)fw + 1;
    if ((fwidth ^ (int)ss) & 1) fwidth++;
    if (fwidth < (int)ss) fwidth = (int)ss; /* flam3 would read outside its gutter */
    return fwidth;
}

/* ---------------------------------------------------------------- set-up -------------------- */

kiln_status kiln__flame_setup(kiln_context *ctx, const kiln_flame *flame, const kiln_flame_render_opts *opts,
                              kiln_flame_setup *out)
{
    memset(out, 0, sizeof *out);
    uint32_t W = flame->width, H = flame->height;
    double ppu = flame->pixels_per_unit;
    if (opts && (opts->width || opts->height)) {
        if (opts->width && opts->height) {
            W = opts->width;
            H = opts->height;
        } else if (opts->width) {
            W = opts->width;
            H = (uint32_t)fmax(1.0, floor((double)flame->height * W / flame->width + 0.5));
        } else {
            H = opts->height;
            W = (uint32_t)fmax(1.0, floor((double)flame->width * H / flame->height + 0.5));
        }
        ppu *= (double)W / flame->width;
    }
    if (W == 0 || H == 0 || W > KILN_MAX_DIMENSION || H > KILN_MAX_DIMENSION || (uint64_t)W * H > KILN_MAX_PIXELS)
        return kiln__fail(ctx, KILN_ERR_TOO_LARGE,
                          "flame \"%s\": size %ux%u is out of range (1..%u per side, at most %llu pixels)",
                          label(flame), W, H, KILN_MAX_DIMENSION, (unsigned long long)KILN_MAX_PIXELS);
    uint32_t ss = opts && opts->supersample ? opts->supersample : flame->supersample;
    if (ss < 1 || ss > 16)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "flame \"%s\": supersample %u is out of range [1, 16]",
                          label(flame), ss);
    double quality = opts && opts->quality > 0 ? opts->quality : flame->quality;
    if (!(quality > 0) || !isfinite(quality) || quality > 1e6)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "flame \"%s\": quality %g is out of range (0, 1e6]",
                          label(flame), quality);
    double scale = pow(2.0, flame->zoom);
    double ppux = ppu * scale;
    double sample_density = quality * scale * scale;
    double nsamples = sample_density * (double)W * (double)H;
    if (!(nsamples >= 1) || nsamples > MAX_SAMPLES)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT,
                          "flame \"%s\": %ux%u at quality %g, zoom %g asks for %.3g samples (1 .. %.0e allowed)",
                          label(flame), W, H, quality, flame->zoom, nsamples, MAX_SAMPLES);
    if (!(ppux > 0) || !isfinite(ppux))
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "flame \"%s\": bad scale %g", label(flame), ppux);

    int fwidth = filter_width_of(flame, ss);
    if (fwidth > MAX_FILTER_TAPS)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT,
                          "flame \"%s\": spatial filter %g at supersample %u needs %d taps (at most %d)", label(flame),
                          flame->filter, ss, fwidth, MAX_FILTER_TAPS);
    if (flame->estimator_radius * ss > MAX_DE_RADIUS)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT,
                          "flame \"%s\": estimator_radius %g at supersample %u exceeds %d histogram cells", label(flame),
                          flame->estimator_radius, ss, MAX_DE_RADIUS);
    int gutter = (fwidth - (int)ss) / 2;
    int de_fw = (int)ceil(flame->estimator_radius) * (int)ss;
    if (de_fw > 0) de_fw += (int)ss - 1;
    if (de_fw > gutter) gutter = de_fw;
    uint64_t hw = (uint64_t)ss * W + 2u * (uint64_t)gutter, hh = (uint64_t)ss * H + 2u * (uint64_t)gutter;
    if (hw > 4u * KILN_MAX_DIMENSION || hh > 4u * KILN_MAX_DIMENSION || hw * hh > MAX_HIST_CELLS)
        return kiln__fail(ctx, KILN_ERR_TOO_LARGE, "flame \"%s\": histogram %llux%llu (size %ux%u, supersample %u) is too large",
                          label(flame), (unsigned long long)hw, (unsigned long long)hh, W, H, ss);

    out->out_w = W;
    out->out_h = H;
    out->ss = ss;
    out->hist_w = (uint32_t)hw;
    out->hist_h = (uint32_t)hh;
    out->gutter = (uint32_t)gutter;
    out->filter_width = fwidth;
    out->ppu = ppux;
    double t0 = (double)gutter / (ss * ppux);
    double corner0 = flame->center[0] - W / ppux / 2.0;
    double corner1 = flame->center[1] - H / ppux / 2.0;
    out->bounds[0] = corner0 - t0;
    out->bounds[1] = corner1 - t0;
    out->bounds[2] = corner0 + W / ppux + t0;
    out->bounds[3] = corner1 + H / ppux + t0;
    out->to_hist[0] = hw / (out->bounds[2] - out->bounds[0]);
    out->to_hist[1] = hh / (out->bounds[3] - out->bounds[1]);
    double th = flame->rotate * 2 * M_PI / 360.0;
    out->rot_cos = cos(th);
    out->rot_sin = sin(th);
    out->rotated = flame->rotate != 0.0;
    out->quality = quality;
    out->nsamples = (uint64_t)nsamples;
    out->k1 = flame->brightness * PREFILTER_WHITE * 268.0 / 256.0;
    double area = (double)W * H / (ppux * ppux);
    out->k2 = (double)(ss * ss) / (area * WHITE_LEVEL * sample_density);
    out->seed = opts ? opts->seed : 0;
    return KILN_OK;
}

kiln_status kiln__flame_hist_alloc(kiln_context *ctx, kiln_flame_hist *hist, uint32_t width, uint32_t height)
{
    memset(hist, 0, sizeof *hist);
    size_t n;
    if (!kiln__mul_size((size_t)width, (size_t)height, &n) || !kiln__mul_size(n, 4 * sizeof(float), &n))
        return kiln__fail(ctx, KILN_ERR_TOO_LARGE, "flame histogram %ux%u is too large", width, height);
    hist->rgba = kiln__calloc(ctx, 1, n);
    if (!hist->rgba) return KILN_ERR_OUT_OF_MEMORY;
    hist->width = width;
    hist->height = height;
    return KILN_OK;
}

void kiln__flame_hist_free(kiln_flame_hist *hist)
{
    if (!hist) return;
    free(hist->rgba);
    hist->rgba = NULL;
}

/* ---------------------------------------------------------------- chaos game ---------------- */

typedef struct {
    const kiln_flame *flame;
    const kiln_flame_setup *setup;
    kiln_flame_xform_pre *pre;
    uint16_t *table;           /* rows x GRAIN */
    int chaos;                 /* selection row = previous xform + 1 */
    double dmap[256][4];
    uint32_t dmapi[256][4];
    uint32_t **whist;          /* per worker: 4 uint32 per bucket */
    uint64_t *wbad, *wplot;    /* per worker statistics */
    uint64_t nsub;
} iter_job;

static kiln_status build_table(kiln_context *ctx, const kiln_flame *f, int row_xf, uint16_t *t)
{
    uint32_t nstd = f->num_xforms - (f->final_xform >= 0);
    double dr = 0;
    for (uint32_t i = 0; i < nstd; i++) {
        double d = f->xforms[i].weight;
        if (row_xf >= 0 && f->chaos) d *= f->chaos[(size_t)row_xf * f->num_xforms + i];
        dr += d;
    }
    if (!(dr > 0)) {
        /* unreachable row (its xform has weight 0): use the plain weights */
        if (row_xf >= 0) return build_table(ctx, f, -1, t);
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "flame \"%s\": no xform to iterate", label(f));
    }
    dr /= GRAIN;
    uint32_t j = 0;
    double w0 = f->xforms[0].weight;
    if (row_xf >= 0 && f->chaos) w0 *= f->chaos[(size_t)row_xf * f->num_xforms];
    double tt = w0, r = 0;
    for (int i = 0; i < GRAIN; i++) {
        while (r >= tt && j + 1 < nstd) {
            j++;
            double d = f->xforms[j].weight;
            if (row_xf >= 0 && f->chaos) d *= f->chaos[(size_t)row_xf * f->num_xforms + j];
            tt += d;
        }
        t[i] = (uint16_t)j;
        r += dr;
    }
    return KILN_OK;
}

/* saturating add, as flam3's bump_no_overflow */
static inline void bump(uint32_t *b, const uint32_t add[4])
{
    for (int k = 0; k < 4; k++) {
        uint32_t s = b[k] + add[k];
        b[k] = s < b[k] ? UINT32_MAX : s;
    }
}

static void iter_range(void *user, size_t begin, size_t end, uint32_t worker)
{
    iter_job *job = user;
    const kiln_flame *f = job->flame;
    const kiln_flame_setup *su = job->setup;
    uint32_t *h = job->whist[worker];
    const uint32_t hw = su->hist_w, hh = su->hist_h;
    const double b0 = su->bounds[0], b1 = su->bounds[1], b2 = su->bounds[2], b3 = su->bounds[3];
    const double ws0 = su->to_hist[0], hs1 = su->to_hist[1];
    const double wb0 = ws0 * b0, hb1 = hs1 * b1;
    const double cx = f->center[0], cy = f->center[1], rc = su->rot_cos, rs = su->rot_sin;
    const int rotated = su->rotated, linear = f->palette_linear;
    const int fin = f->final_xform;
    const double fin_op = fin >= 0 ? f->xforms[fin].opacity : 0;
    uint64_t bad = 0, plotted = 0;
    uint32_t *pend = NULL, padd[4] = {0, 0, 0, 0};

    for (size_t sb = begin; sb < end; sb++) {
        kiln_flame_rng rng;
        kiln__flame_rng_seed(&rng, su->seed, sb);
        uint64_t n64 = su->nsamples - (uint64_t)sb * SUB_BATCH;
        int n = n64 < SUB_BATCH ? (int)n64 : SUB_BATCH;
        double p[2], pc, pv, q[2];
        p[0] = kiln__flame_rng_11(&rng);
        p[1] = kiln__flame_rng_11(&rng);
        pc = kiln__flame_rng_01(&rng);
        pv = kiln__flame_rng_01(&rng);
        int consec = 0, lastxf = 0;
        for (int i = -FUSE; i < n; i++) {
            int row = job->chaos ? lastxf : 0;
            int fn = job->table[(size_t)row * GRAIN + (kiln__flame_rng_next(&rng) & (GRAIN - 1))];
            const kiln_flame_xform *xf = &f->xforms[fn];
            double qc = xf->color_speed * xf->color + (1.0 - xf->color_speed) * pc;
            double qv = job->pre[fn].vis;
            if (kiln__flame_apply_xform(xf, &job->pre[fn], p, q, &rng)) {
                consec++;
                bad++;
                if (consec < 5) {
                    p[0] = q[0];
                    p[1] = q[1];
                    pc = qc;
                    pv = qv;
                    i--;
                    continue;
                }
                consec = 0;
            } else {
                consec = 0;
            }
            lastxf = fn + 1;
            p[0] = q[0];
            p[1] = q[1];
            pc = qc;
            pv = qv;
            double x = p[0], y = p[1], c = pc;
            if (fin >= 0 && (fin_op == 1.0 || kiln__flame_rng_01(&rng) < fin_op)) {
                const kiln_flame_xform *fx = &f->xforms[fin];
                double fq[2];
                kiln__flame_apply_xform(fx, &job->pre[fin], p, fq, &rng);
                x = fq[0];
                y = fq[1];
                c = fx->color_speed * fx->color + (1.0 - fx->color_speed) * pc;
            }
            if (i < 0) continue;
            if (rotated) {
                double dx = x - cx, dy = y - cy;
                x = dx * rc - dy * rs + cx;
                y = dx * rs + dy * rc + cy;
            }
            if (!(x >= b0 && y >= b1 && x <= b2 && y <= b3)) continue;
            if (pv == 0) continue;
            int ix = (int)(ws0 * x - wb0), iy = (int)(hs1 * y - hb1);
            if (ix >= (int)hw) ix = (int)hw - 1;
            if (iy >= (int)hh) iy = (int)hh - 1;
            if (ix < 0) ix = 0;
            if (iy < 0) iy = 0;
            uint32_t *b = h + 4 * ((size_t)iy * hw + (size_t)ix);
            double dc = c * 256.0;
            uint32_t add[4];
            if (!linear) {
                int ci = dc < 0 ? 0 : dc >= 255 ? 255 : (int)dc;
                if (pv == 1.0) {
                    for (int k = 0; k < 4; k++) add[k] = job->dmapi[ci][k];
                } else {
                    for (int k = 0; k < 4; k++) add[k] = (uint32_t)(pv * job->dmap[ci][k]);
                }
            } else {
                int ci;
                double fr;
                if (dc < 0) {
                    ci = 0;
                    fr = 0;
                } else if (dc >= 255) {
                    ci = 254;
                    fr = 1.0;
                } else {
                    ci = (int)dc;
                    fr = dc - ci;
                }
                for (int k = 0; k < 4; k++)
                    add[k] = (uint32_t)(pv * (job->dmap[ci][k] * (1.0 - fr) + job->dmap[ci + 1][k] * fr));
            }
            /* the add is done one plotted sample later: the bucket's cache line is prefetched now and
             * arrives while the next point is computed (integer adds: the order does not matter) */
            __builtin_prefetch(b, 1, 0);
            if (pend) bump(pend, padd);
            pend = b;
            memcpy(padd, add, sizeof padd);
            plotted++;
        }
        if (pend) bump(pend, padd);
        pend = NULL;
    }
    job->wbad[worker] += bad;
    job->wplot[worker] += plotted;
}

kiln_status kiln__flame_iterate_cpu(kiln_context *ctx, const kiln_flame *flame, const kiln_flame_setup *setup,
                                    kiln_flame_hist *hist)
{
    kiln_status st = KILN_OK;
    memset(hist, 0, sizeof *hist);
    uint32_t threads = kiln_context_threads(ctx);
    if (threads < 1) threads = 1;
    uint32_t nstd = flame->num_xforms - (flame->final_xform >= 0);
    size_t cells = (size_t)setup->hist_w * setup->hist_h;
    size_t wbytes;
    if (!kiln__mul_size(cells, 4 * sizeof(uint32_t), &wbytes))
        return kiln__fail(ctx, KILN_ERR_TOO_LARGE, "flame histogram is too large");

    iter_job *job = kiln__calloc(ctx, 1, sizeof *job);
    if (!job) return KILN_ERR_OUT_OF_MEMORY;
    job->flame = flame;
    job->setup = setup;
    job->chaos = flame->chaos != NULL;
    size_t rows = job->chaos ? (size_t)nstd + 1 : 1;
    job->table = kiln__calloc(ctx, rows * GRAIN, sizeof(uint16_t));
    job->pre = kiln__calloc(ctx, flame->num_xforms, sizeof(kiln_flame_xform_pre));
    job->whist = kiln__calloc(ctx, threads, sizeof(uint32_t *));
    job->wbad = kiln__calloc(ctx, threads, sizeof(uint64_t));
    job->wplot = kiln__calloc(ctx, threads, sizeof(uint64_t));
    if (!job->table || !job->pre || !job->whist || !job->wbad || !job->wplot) {
        st = KILN_ERR_OUT_OF_MEMORY;
        goto done;
    }
    for (uint32_t t = 0; t < threads; t++) {
        job->whist[t] = kiln__calloc(ctx, 1, wbytes);
        if (!job->whist[t]) {
            st = kiln__fail(ctx, KILN_ERR_OUT_OF_MEMORY, "flame \"%s\": out of memory for %u histograms of %ux%u",
                            label(flame), threads, setup->hist_w, setup->hist_h);
            goto done;
        }
    }
    st = build_table(ctx, flame, -1, job->table);
    for (size_t r = 1; st == KILN_OK && r < rows; r++) st = build_table(ctx, flame, (int)r - 1, job->table + r * GRAIN);
    if (st != KILN_OK) goto done;
    for (uint32_t i = 0; i < flame->num_xforms; i++) kiln__flame_xform_precalc(&flame->xforms[i], &job->pre[i]);
    for (int j = 0; j < 256; j++)
        for (int k = 0; k < 4; k++) {
            double v = (double)flame->palette[j][k] * WHITE_LEVEL;
            job->dmap[j][k] = v > 0 ? (v < WHITE_LEVEL ? v : WHITE_LEVEL) : 0.0; /* the parser keeps 0..1 */
            job->dmapi[j][k] = (uint32_t)job->dmap[j][k];
        }
    job->nsub = (setup->nsamples + SUB_BATCH - 1) / SUB_BATCH;
    st = kiln__parallel_for_progress(ctx, (size_t)job->nsub, 1, iter_range, job, 0.0f, 0.9f);
    if (st != KILN_OK) goto done;

    st = kiln__flame_hist_alloc(ctx, hist, setup->hist_w, setup->hist_h);
    if (st != KILN_OK) goto done;
    for (size_t i = 0; i < cells * 4; i++) {
        uint64_t s = 0;
        for (uint32_t t = 0; t < threads; t++) s += job->whist[t][i];
        hist->rgba[i] = (float)s;
    }
    for (uint32_t t = 0; t < threads; t++) {
        hist->bad_values += job->wbad[t];
        hist->samples_plotted += job->wplot[t];
    }
done:
    if (job->whist)
        for (uint32_t t = 0; t < threads; t++) free(job->whist[t]);
    free(job->whist);
    free(job->wbad);
    free(job->wplot);
    free(job->table);
    free(job->pre);
    free(job);
    if (st != KILN_OK) kiln__flame_hist_free(hist);
    return st;
}

/* ---------------------------------------------------------------- tone map ------------------ */

typedef kiln_flame_de de_filters; /* flame.h */

static kiln_status make_de(kiln_context *ctx, const kiln_flame *f, uint32_t ss, de_filters *de)
{
    memset(de, 0, sizeof *de);
    double curve = f->estimator_curve;
    double cmax = f->estimator_radius * ss + 1, cmin = f->estimator_minimum * ss + 1;
    if (!(curve > 0)) return kiln__fail(ctx, KILN_ERR_CORRUPT, "flame \"%s\": estimator_curve must be > 0", label(f));
    if (cmax < cmin)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "flame \"%s\": estimator_radius %g is below estimator_minimum %g",
                          label(f), f->estimator_radius, f->estimator_minimum);
    double nd = pow(cmax / cmin, 1.0 / curve);
    if (!(nd <= 1e7))
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "flame \"%s\": density estimation needs too many filters (%g)", label(f), nd);
    int num = (int)ceil(nd), max_ind;
    if (num > DE_THRESH) {
        max_ind = (int)ceil(DE_THRESH + pow(num - DE_THRESH, curve)) + 1;
        de->max_filtered_counts = (int)pow((double)(max_ind - DE_THRESH), 1.0 / curve) + DE_THRESH;
    } else {
        max_ind = num;
        de->max_filtered_counts = max_ind;
    }
    int row = (int)(2 * ceil(cmax) - 1), half = (row - 1) / 2;
    de->kernel_size = (half + 1) * (2 + half) / 2;
    de->half = half;
    if ((double)max_ind * de->kernel_size > 8e6)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "flame \"%s\": density estimation radius %g (supersample %u) is too large",
                          label(f), f->estimator_radius, ss);
    de->coefs = kiln__calloc(ctx, (size_t)max_ind * de->kernel_size, sizeof(double));
    de->widths = kiln__calloc(ctx, (size_t)max_ind, sizeof(double));
    if (!de->coefs || !de->widths) {
        free(de->coefs);
        free(de->widths);
        return KILN_ERR_OUT_OF_MEMORY;
    }
    de->max_index = 0;
    for (int fl = 0; fl < max_ind; fl++) {
        double h;
        if (fl < DE_THRESH)
            h = cmax / pow(fl + 1, curve);
        else
            h = cmax / pow(pow(fl - DE_THRESH, 1.0 / curve) + DE_THRESH + 1, curve);
        if (h <= cmin) {
            h = cmin;
            de->max_index = fl;
        }
        de->widths[fl] = h;
        double sum = 0;
        for (int j = -half; j <= half; j++)
            for (int k = -half; k <= half; k++) {
                double d = sqrt((double)(j * j + k * k)) / h;
                if (d <= 1.0) sum += gaussian(1.5 * d);
            }
        int ci = fl * de->kernel_size;
        for (int j = 0; j <= half; j++)
            for (int k = 0; k <= j; k++) {
                double d = sqrt((double)(j * j + k * k)) / h;
                de->coefs[ci++] = d > 1.0 ? 0.0 : gaussian(1.5 * d) / sum;
            }
        if (de->max_index > 0) break;
    }
    if (de->max_index == 0) de->max_index = max_ind - 1;
    return KILN_OK;
}

kiln_status kiln__flame_de_make(kiln_context *ctx, const kiln_flame *flame, uint32_t ss, kiln_flame_de *de)
{
    return make_de(ctx, flame, ss, de);
}

void kiln__flame_de_free(kiln_flame_de *de)
{
    if (!de) return;
    free(de->coefs);
    free(de->widths);
    de->coefs = de->widths = NULL;
}

int kiln__flame_de_index(const kiln_flame_de *de, double curve, double fs)
{
    int idx;
    if (fs > de->max_filtered_counts)
        idx = de->max_index;
    else if (fs <= DE_THRESH)
        idx = (int)ceil(fs) - 1;
    else
        idx = DE_THRESH + (int)floor(pow(fs - DE_THRESH, curve));
    if (idx > de->max_index) idx = de->max_index;
    if (idx < 0) idx = 0;
    return idx;
}

/* acc holds rows [y0, y1) of the full accumulator */
static inline void acc_add(double *acc, int w, int y0, int y1, int x, int y, const double c[4])
{
    if (x < 0 || y < y0 || x >= w || y >= y1) return;
    double *a = acc + 4 * ((size_t)(y - y0) * w + x);
    a[0] += c[0];
    a[1] += c[1];
    a[2] += c[2];
    a[3] += c[3];
}

/* Density estimation of source rows [r0, r1) scattered into acc, which holds rows [y0, y1) (the band
 * plus the kernel radius, clipped to the histogram). */
static void density_estimation(const kiln_flame *f, const kiln_flame_setup *su, const de_filters *de,
                               const float *b, double *acc, int r0, int r1, int y0, int y1)
{
    const int ss = (int)su->ss, w = (int)su->hist_w, h = (int)su->hist_h, sh = ss / 2;
    const double scfact = pow(ss / (ss + 1.0), 2.0);
    const double k1 = su->k1, k2 = su->k2, curve = f->estimator_curve;
    if (r0 < ss - 1) r0 = ss - 1;
    if (r1 > h - (ss - 1)) r1 = h - (ss - 1);
    for (int j = r0; j < r1; j++) {
        for (int i = ss - 1; i < w - (ss - 1); i++) {
            const float *bb = b + 4 * ((size_t)j * w + i);
            if (bb[3] == 0) continue;
            double fs = 0;
            for (int jj = -sh; jj <= sh; jj++)
                for (int ii = -sh; ii <= sh; ii++) fs += b[4 * ((size_t)(j + jj) * w + (i + ii)) + 3] / 255.0;
            if (!(ss & 1)) fs *= scfact;
            int idx = kiln__flame_de_index(de, curve, fs);
            int ci = idx * de->kernel_size;
            int afw = (int)ceil(de->widths[idx]) - 1;
            double c3 = bb[3];
            double lsb = k1 * log(1.0 + c3 * k2) / c3;
            for (int jj = 0; jj <= afw; jj++) {
                for (int ii = 0; ii <= jj; ii++, ci++) {
                    double coef = de->coefs[ci];
                    if (coef == 0.0) continue;
                    double ls = coef * lsb;
                    double c[4] = {bb[0] * ls, bb[1] * ls, bb[2] * ls, bb[3] * ls};
                    if (jj == 0 && ii == 0) {
                        acc_add(acc, w, y0, y1, i, j, c);
                    } else if (ii == 0) {
                        acc_add(acc, w, y0, y1, i + jj, j, c);
                        acc_add(acc, w, y0, y1, i - jj, j, c);
                        acc_add(acc, w, y0, y1, i, j + jj, c);
                        acc_add(acc, w, y0, y1, i, j - jj, c);
                    } else if (jj == ii) {
                        acc_add(acc, w, y0, y1, i + ii, j + jj, c);
                        acc_add(acc, w, y0, y1, i - ii, j + jj, c);
                        acc_add(acc, w, y0, y1, i + ii, j - jj, c);
                        acc_add(acc, w, y0, y1, i - ii, j - jj, c);
                    } else {
                        acc_add(acc, w, y0, y1, i + ii, j + jj, c);
                        acc_add(acc, w, y0, y1, i - ii, j + jj, c);
                        acc_add(acc, w, y0, y1, i + ii, j - jj, c);
                        acc_add(acc, w, y0, y1, i - ii, j - jj, c);
                        acc_add(acc, w, y0, y1, i + jj, j + ii, c);
                        acc_add(acc, w, y0, y1, i - jj, j + ii, c);
                        acc_add(acc, w, y0, y1, i + jj, j - ii, c);
                        acc_add(acc, w, y0, y1, i - jj, j - ii, c);
                    }
                }
            }
        }
    }
}

/* Density estimation in fixed bands of rows (independent of the thread count): each band scatters into
 * its own buffer (band rows +- the kernel radius), then every accumulator row sums the bands covering
 * it in band order, so the result is the same for any thread count. */
typedef struct {
    const kiln_flame *f;
    const kiln_flame_setup *su;
    const de_filters *de;
    const float *b;
    double **bufs;
    double *acc;
    int band_rows, nbands, radius;
} de_job;

static void de_band_range(const de_job *job, int k, int *r0, int *r1, int *y0, int *y1)
{
    int h = (int)job->su->hist_h;
    *r0 = k * job->band_rows;
    *r1 = *r0 + job->band_rows < h ? *r0 + job->band_rows : h;
    *y0 = *r0 - job->radius > 0 ? *r0 - job->radius : 0;
    *y1 = *r1 + job->radius < h ? *r1 + job->radius : h;
}

static void de_bands(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    de_job *job = user;
    for (size_t k = begin; k < end; k++) {
        int r0, r1, y0, y1;
        de_band_range(job, (int)k, &r0, &r1, &y0, &y1);
        density_estimation(job->f, job->su, job->de, job->b, job->bufs[k], r0, r1, y0, y1);
    }
}

static void de_merge(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    de_job *job = user;
    const size_t w4 = 4 * (size_t)job->su->hist_w;
    for (size_t y = begin; y < end; y++) {
        double *dst = job->acc + y * w4;
        for (int k = 0; k < job->nbands; k++) {
            int r0, r1, y0, y1;
            de_band_range(job, k, &r0, &r1, &y0, &y1);
            if ((int)y < y0 || (int)y >= y1) continue;
            const double *src = job->bufs[k] + (y - (size_t)y0) * w4;
            for (size_t i = 0; i < w4; i++) dst[i] += src[i];
        }
    }
}

static kiln_status de_parallel(kiln_context *ctx, const kiln_flame *f, const kiln_flame_setup *su,
                               const de_filters *de, const float *b, double *acc)
{
    int h = (int)su->hist_h;
    de_job job = {f, su, de, b, NULL, acc, 0, 0, de->half + 1};
    job.band_rows = (h + 15) / 16;
    if (job.band_rows < 32) job.band_rows = 32;
    job.nbands = (h + job.band_rows - 1) / job.band_rows;
    job.bufs = kiln__calloc(ctx, (size_t)job.nbands, sizeof(double *));
    if (!job.bufs) return KILN_ERR_OUT_OF_MEMORY;
    kiln_status st = KILN_OK;
    for (int k = 0; k < job.nbands && st == KILN_OK; k++) {
        int r0, r1, y0, y1;
        de_band_range(&job, k, &r0, &r1, &y0, &y1);
        job.bufs[k] = kiln__calloc(ctx, (size_t)(y1 - y0) * su->hist_w, 4 * sizeof(double));
        if (!job.bufs[k]) st = KILN_ERR_OUT_OF_MEMORY;
    }
    if (st == KILN_OK) st = kiln__parallel_for(ctx, (size_t)job.nbands, 1, de_bands, &job);
    if (st == KILN_OK) st = kiln__parallel_for(ctx, (size_t)h, 16, de_merge, &job);
    for (int k = 0; k < job.nbands; k++) free(job.bufs[k]);
    free(job.bufs);
    return st;
}

static double calc_alpha(double density, double gamma, double linrange)
{
    if (density <= 0) return 0;
    if (density < linrange) {
        double frac = density / linrange;
        return (1.0 - frac) * density * (pow(linrange, gamma) / linrange) + frac * pow(density, gamma);
    }
    return pow(density, gamma);
}

void kiln__flame_hsv2rgb(const double *hsv, double *rgb);
void kiln__flame_rgb2hsv(const double *rgb, double *hsv);

static void calc_newrgb(const double *cbuf, double ls, double highpow, double *newrgb)
{
    if (ls == 0.0 || (cbuf[0] == 0.0 && cbuf[1] == 0.0 && cbuf[2] == 0.0)) {
        newrgb[0] = newrgb[1] = newrgb[2] = 0.0;
        return;
    }
    double maxa = -1.0, maxc = 0;
    for (int k = 0; k < 3; k++) {
        double a = ls * (cbuf[k] / PREFILTER_WHITE);
        if (a > maxa) {
            maxa = a;
            maxc = cbuf[k] / PREFILTER_WHITE;
        }
    }
    if (maxa > 255 && highpow >= 0.0) {
        double newls = 255.0 / maxc, lsratio = pow(newls / ls, highpow), hsv[3];
        for (int k = 0; k < 3; k++) newrgb[k] = newls * (cbuf[k] / PREFILTER_WHITE) / 255.0;
        kiln__flame_rgb2hsv(newrgb, hsv);
        hsv[1] *= lsratio;
        kiln__flame_hsv2rgb(hsv, newrgb);
        for (int k = 0; k < 3; k++) newrgb[k] *= 255.0;
    } else {
        double newls = 255.0 / maxc, adj = -highpow;
        if (adj > 1) adj = 1;
        if (maxa <= 255) adj = 1.0;
        for (int k = 0; k < 3; k++) newrgb[k] = ((1.0 - adj) * newls + adj * ls) * (cbuf[k] / PREFILTER_WHITE);
    }
}

typedef struct {
    const kiln_flame *flame;
    const kiln_flame_setup *setup;
    const double *acc;
    const double *filter;
    int fw, offset;
    uint8_t *out;
} final_job;

static void final_rows(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    final_job *job = user;
    const kiln_flame *f = job->flame;
    const kiln_flame_setup *su = job->setup;
    const int fw = job->fw, ss = (int)su->ss, aw = (int)su->hist_w;
    const double g = 1.0 / f->gamma, linrange = f->gamma_threshold, vib = f->vibrancy;
    const double highpow = f->highlight_power;
    double bg[3];
    for (int k = 0; k < 3; k++) bg[k] = f->background[k] * 256.0;
    for (size_t j = begin; j < end; j++) {
        int y = job->offset + (int)j * ss;
        uint8_t *row = job->out + (size_t)j * su->out_w * 4;
        for (uint32_t i = 0; i < su->out_w; i++) {
            int x = job->offset + (int)i * ss;
            double t[4] = {0, 0, 0, 0};
            for (int jj = 0; jj < fw; jj++) {
                const double *a = job->acc + 4 * ((size_t)(y + jj) * aw + x);
                for (int ii = 0; ii < fw; ii++) {
                    double k = job->filter[ii + jj * fw];
                    t[0] += k * a[4 * ii + 0];
                    t[1] += k * a[4 * ii + 1];
                    t[2] += k * a[4 * ii + 2];
                    t[3] += k * a[4 * ii + 3];
                }
            }
            double alpha, ls, tmp = t[3] / PREFILTER_WHITE, newrgb[3];
            if (t[3] <= 0) {
                alpha = 0.0;
                ls = 0.0;
            } else {
                alpha = calc_alpha(tmp, g, linrange);
                ls = vib * 256.0 * alpha / tmp;
                if (alpha < 0.0) alpha = 0.0;
                if (alpha > 1.0) alpha = 1.0;
            }
            calc_newrgb(t, ls, highpow, newrgb);
            for (int k = 0; k < 3; k++) {
                double a = newrgb[k];
                if (vib != 1.0) a += (1.0 - vib) * 256.0 * pow(t[k] / PREFILTER_WHITE, g);
                a += (1.0 - alpha) * bg[k];
                if (!(a > 0)) a = 0; /* also maps NaN to 0 */
                if (a > 255) a = 255;
                row[4 * i + k] = (uint8_t)a;
            }
            row[4 * i + 3] = 255;
        }
    }
}

/* spatial filter kernel (flam3_create_spatial_filter, pixel aspect 1): fw x fw, normalised */
static kiln_status spatial_kernel(kiln_context *ctx, const kiln_flame *flame, const kiln_flame_setup *setup,
                                  double *filter)
{
    const int fw = setup->filter_width;
    double supp = spatial_support[flame->filter_shape];
    double fwd = 2.0 * supp * setup->ss * flame->filter;
    double adjust = fwd > 0.0 ? supp * fw / fwd : 1.0;
    double sum = 0;
    for (int i = 0; i < fw; i++)
        for (int j = 0; j < fw; j++) {
            double ii = ((2.0 * i + 1.0) / fw - 1.0) * adjust, jj = ((2.0 * j + 1.0) / fw - 1.0) * adjust;
            filter[i + j * fw] = spatial_filter(flame->filter_shape, ii) * spatial_filter(flame->filter_shape, jj);
            sum += filter[i + j * fw];
        }
    if (!(sum != 0.0) || !isfinite(sum))
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "flame \"%s\": spatial filter %g is too small", label(flame), flame->filter);
    for (int i = 0; i < fw * fw; i++) filter[i] /= sum;
    return KILN_OK;
}

kiln_status kiln__flame_spatial_kernel(kiln_context *ctx, const kiln_flame *flame, const kiln_flame_setup *setup,
                                       double **filter)
{
    *filter = NULL;
    if (setup->filter_width < 1 || setup->filter_width > MAX_FILTER_TAPS)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "flame \"%s\": bad filter width %d", label(flame),
                          setup->filter_width);
    double *f = kiln__calloc(ctx, (size_t)setup->filter_width * setup->filter_width, sizeof(double));
    if (!f) return KILN_ERR_OUT_OF_MEMORY;
    kiln_status st = spatial_kernel(ctx, flame, setup, f);
    if (st != KILN_OK) {
        free(f);
        return st;
    }
    *filter = f;
    return KILN_OK;
}

kiln_status kiln__flame_tonemap(kiln_context *ctx, const kiln_flame *flame, const kiln_flame_setup *setup,
                                const kiln_flame_hist *hist, kiln_image *out)
{
    kiln_status st;
    memset(out, 0, sizeof *out);
    if (!hist || !hist->rgba || hist->width != setup->hist_w || hist->height != setup->hist_h)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "flame tone map: histogram does not match the set-up");
    size_t cells = (size_t)setup->hist_w * setup->hist_h;
    double *acc = kiln__calloc(ctx, cells, 4 * sizeof(double));
    int fw = setup->filter_width;
    double *filter = kiln__calloc(ctx, (size_t)fw * fw, sizeof(double));
    if (!acc || !filter) {
        free(acc);
        free(filter);
        return KILN_ERR_OUT_OF_MEMORY;
    }
    const float *b = hist->rgba;
    if (flame->estimator_radius > 0) {
        de_filters de;
        st = make_de(ctx, flame, setup->ss, &de);
        if (st != KILN_OK) {
            free(acc);
            free(filter);
            return st;
        }
        st = de_parallel(ctx, flame, setup, &de, b, acc);
        free(de.coefs);
        free(de.widths);
        if (st != KILN_OK) {
            free(acc);
            free(filter);
            return st;
        }
    } else {
        for (size_t i = 0; i < cells; i++) {
            double c3 = b[4 * i + 3];
            if (c3 == 0.0) continue;
            double ls = setup->k1 * log(1.0 + c3 * setup->k2) / c3;
            for (int k = 0; k < 4; k++) acc[4 * i + k] = b[4 * i + k] * ls;
        }
    }
    if ((st = kiln__progress(ctx, 0.95f)) != KILN_OK) {
        free(acc);
        free(filter);
        return st;
    }

    if ((st = spatial_kernel(ctx, flame, setup, filter)) != KILN_OK) {
        free(acc);
        free(filter);
        return st;
    }

    st = kiln_image_alloc(ctx, out, setup->out_w, setup->out_h, KILN_PIXEL_U8);
    if (st != KILN_OK) {
        free(acc);
        free(filter);
        return st;
    }
    out->channels = 3;
    out->srgb = 1;
    final_job job = {flame, setup, acc, filter, fw, (int)setup->gutter - (fw - (int)setup->ss) / 2, out->pixels};
    st = kiln__parallel_for(ctx, setup->out_h, 8, final_rows, &job);
    free(acc);
    free(filter);
    if (st != KILN_OK) kiln_image_free(out);
    return st;
}

/* ---------------------------------------------------------------- public API ---------------- */

struct kiln_flames {
    kiln_flame *flames;
    uint32_t count;
};

kiln_status kiln_flames_load_memory(kiln_context *ctx, const void *data, size_t size, kiln_flames **out)
{
    if (!out) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_flames_load_memory: out is NULL");
    *out = NULL;
    if (!data && size) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_flames_load_memory: data is NULL");
    kiln__clear_error(ctx);
    kiln_flames *f = kiln__calloc(ctx, 1, sizeof *f);
    if (!f) return KILN_ERR_OUT_OF_MEMORY;
    kiln_status st = kiln__flame_parse(ctx, data, size, "<memory>", &f->flames, &f->count);
    if (st != KILN_OK) {
        free(f);
        return st;
    }
    *out = f;
    return KILN_OK;
}

kiln_status kiln_flames_load(kiln_context *ctx, const char *path, kiln_flames **out)
{
    if (!out || !path) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_flames_load: NULL argument");
    *out = NULL;
    kiln__clear_error(ctx);
    uint8_t *data = NULL;
    size_t size = 0;
    KILN_TRY(kiln__read_file(ctx, path, &data, &size));
    kiln_flames *f = kiln__calloc(ctx, 1, sizeof *f);
    if (!f) {
        free(data);
        return KILN_ERR_OUT_OF_MEMORY;
    }
    kiln_status st = kiln__flame_parse(ctx, (const char *)data, size, path, &f->flames, &f->count);
    free(data);
    if (st != KILN_OK) {
        free(f);
        return st;
    }
    *out = f;
    return KILN_OK;
}

uint32_t kiln_flames_count(const kiln_flames *flames) { return flames ? flames->count : 0; }

const char *kiln_flames_name(const kiln_flames *flames, uint32_t index)
{
    if (!flames || index >= flames->count) return NULL;
    return flames->flames[index].name;
}

void kiln_flames_size(const kiln_flames *flames, uint32_t index, uint32_t *width, uint32_t *height)
{
    uint32_t w = 0, h = 0;
    if (flames && index < flames->count) {
        w = flames->flames[index].width;
        h = flames->flames[index].height;
    }
    if (width) *width = w;
    if (height) *height = h;
}

void kiln_flames_free(kiln_flames *flames)
{
    if (!flames) return;
    kiln__flame_free_all(flames->flames, flames->count);
    free(flames);
}

void kiln_flame_params_init(kiln_flame_params *params)
{
    if (!params) return;
    memset(params, 0, sizeof *params);
    params->backend = KILN_BACKEND_AUTO;
}

kiln_status kiln_flame_render(kiln_context *ctx, const kiln_flames *flames, uint32_t index,
                              const kiln_flame_params *params, kiln_image *out)
{
    if (!out) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_flame_render: out is NULL");
    memset(out, 0, sizeof *out);
    if (!flames) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_flame_render: flames is NULL");
    if (index >= flames->count)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "flame index %u is out of range (the file has %u flames)",
                          index, flames->count);
    kiln__clear_error(ctx);
    kiln_flame_params def;
    if (!params) {
        kiln_flame_params_init(&def);
        params = &def;
    }
    const kiln_flame *f = &flames->flames[index];
    kiln_flame_render_opts o = {params->width, params->height, params->quality, params->supersample, params->seed, 0};
    kiln_flame_setup su;
    KILN_TRY(kiln__flame_setup(ctx, f, &o, &su));
    kiln_backend be = params->backend != KILN_BACKEND_AUTO ? params->backend : ctx->params.backend;
    kiln_flame_hist hist;
    kiln_status st = KILN_ERR_NO_DEVICE;
#if defined(KILN_FLAME_GPU)
    if (be != KILN_BACKEND_CPU) {
        /* the whole render on the GPU: chaos game, DE, filter and tone map (src/flame/gpu_flame.h) */
        st = kiln__flame_render_gpu(ctx, f, &su, out);
        if (st == KILN_OK) {
            st = kiln__progress(ctx, 1.0f);
            if (st != KILN_OK) kiln_image_free(out);
            return st;
        }
        if (be == KILN_BACKEND_VULKAN || st != KILN_ERR_NO_DEVICE) return st;
        kiln__clear_error(ctx);
    }
#else
    if (be == KILN_BACKEND_VULKAN)
        return kiln__fail(ctx, KILN_ERR_NO_DEVICE, "flame \"%s\": this build has no GPU flame renderer", label(f));
#endif
    if (st != KILN_OK) KILN_TRY(kiln__flame_iterate_cpu(ctx, f, &su, &hist));
    st = kiln__flame_tonemap(ctx, f, &su, &hist, out);
    kiln__flame_hist_free(&hist);
    if (st == KILN_OK) st = kiln__progress(ctx, 1.0f);
    if (st != KILN_OK) kiln_image_free(out);
    return st;
}

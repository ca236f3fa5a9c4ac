/* parse.c - flam3 3.1 genome parser (expat). Follows flam3's parser.c rules and defaults
 * (clear_cp / initialize_xforms), with kiln's limits for absurd values; see docs/FLAME.md. */
#include "flame/flame.h"

#include <ctype.h>
#include <errno.h>
#include <expat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define MAX_COEF 1e10     /* |coefficient| above this is rejected (flam3's bad-value threshold) */
#define MAX_QUALITY 1e6
#define MAX_SUPERSAMPLE 16
#define MAX_FLAMES 4096

typedef struct {
    int from, to;
    double value;
} chaos_entry;

typedef struct {
    kiln_context *ctx;
    const char *name;
    XML_Parser xp;
    kiln_status st;
    /* results */
    kiln_flame *flames;
    uint32_t count, cap;
    /* current flame */
    int in_flame;
    int depth, flame_depth;
    kiln_flame cur;
    kiln_flame_xform *xf; /* document order, final included */
    uint32_t nxf, xcap;
    int final_pos;        /* position of the final xform in xf, -1 */
    int num_std;          /* standard xforms so far */
    int solo;
    chaos_entry *chaos;
    size_t nchaos, chaos_cap;
    int pal_index[256];
    /* <palette> text */
    int in_palette;
    int pal_count, pal_chan;
    char *text;
    size_t tlen, tcap;
} pstate;

static int failed(pstate *s) { return s->st != KILN_OK; }

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void perr(pstate *s, kiln_status st, const char *fmt, ...)
{
    if (failed(s)) return;
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    unsigned long line = s->xp ? (unsigned long)XML_GetCurrentLineNumber(s->xp) : 0;
    s->st = kiln__fail(s->ctx, st, "%s: line %lu: flame %u: %s", s->name, line, s->count, msg);
    if (s->xp) XML_StopParser(s->xp, XML_FALSE);
}

/* ---------------------------------------------------------------- numbers ------------------- */

static int parse_double(pstate *s, const char *attr, const char *v, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    while (end != v && isspace((unsigned char)*end)) end++;
    if (end == v || *end != 0 || errno == ERANGE || !isfinite(d)) {
        perr(s, KILN_ERR_CORRUPT, "attribute %s=\"%.60s\" is not a finite number", attr, v);
        return 0;
    }
    *out = d;
    return 1;
}

static int parse_int(pstate *s, const char *attr, const char *v, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long d = strtol(v, &end, 10);
    while (end != v && isspace((unsigned char)*end)) end++;
    if (end == v || *end != 0 || errno == ERANGE || d < lo || d > hi) {
        perr(s, KILN_ERR_CORRUPT, "attribute %s=\"%.60s\" is not an integer in [%ld, %ld]", attr, v, lo, hi);
        return 0;
    }
    *out = (int)d;
    return 1;
}

/* Exactly n whitespace-separated finite numbers. */
static int parse_doubles(pstate *s, const char *attr, const char *v, double *out, int n)
{
    const char *p = v;
    for (int i = 0; i < n; i++) {
        char *end;
        errno = 0;
        double d = strtod(p, &end);
        if (end == p || errno == ERANGE || !isfinite(d)) {
            perr(s, KILN_ERR_CORRUPT, "attribute %s=\"%.60s\" needs %d finite numbers", attr, v, n);
            return 0;
        }
        out[i] = d;
        p = end;
    }
    while (isspace((unsigned char)*p)) p++;
    if (*p) {
        perr(s, KILN_ERR_CORRUPT, "attribute %s=\"%.60s\" has extra characters", attr, v);
        return 0;
    }
    return 1;
}

static int check_range(pstate *s, const char *attr, double v, double lo, double hi)
{
    if (!(v >= lo && v <= hi)) {
        perr(s, KILN_ERR_CORRUPT, "attribute %s=%g is out of range [%g, %g]", attr, v, lo, hi);
        return 0;
    }
    return 1;
}

/* ---------------------------------------------------------------- defaults ------------------ */

static void flame_defaults(kiln_flame *f)
{
    memset(f, 0, sizeof *f);
    f->width = 100;
    f->height = 100;
    f->pixels_per_unit = 50;
    f->supersample = 1;
    f->quality = 1;
    f->passes = 1;
    f->temporal_samples = 1000;
    f->filter = 0.5;
    f->filter_shape = KILN_FLAME_FILTER_GAUSSIAN;
    f->estimator_radius = 9;
    f->estimator_minimum = 0;
    f->estimator_curve = 0.4;
    f->brightness = 4;
    f->contrast = 1;
    f->gamma = 4;
    f->gamma_threshold = 0.01;
    f->vibrancy = 1;
    f->highlight_power = -1;
    f->palette_index = -1;
    f->final_xform = -1;
}

static void xform_defaults(kiln_flame_xform *x, uint32_t position)
{
    memset(x, 0, sizeof *x);
    x->weight = 0;
    x->color_speed = 0.5;
    x->animate = 1;
    x->color = (double)(position & 1);
    x->opacity = 1;
    x->c[0][0] = 1;
    x->c[1][1] = 1;
    x->post[0][0] = 1;
    x->post[1][1] = 1;
    kiln__flame_params_default(x);
}

static kiln_flame_xform *add_xform(pstate *s)
{
    if (s->nxf >= KILN_FLAME_MAX_XFORMS) {
        perr(s, KILN_ERR_CORRUPT, "more than %d xforms", KILN_FLAME_MAX_XFORMS);
        return NULL;
    }
    if (s->nxf == s->xcap) {
        uint32_t nc = s->xcap ? s->xcap * 2 : 8;
        kiln_flame_xform *n = realloc(s->xf, (size_t)nc * sizeof *n);
        if (!n) {
            perr(s, KILN_ERR_OUT_OF_MEMORY, "out of memory for xforms");
            return NULL;
        }
        s->xf = n;
        s->xcap = nc;
    }
    kiln_flame_xform *x = &s->xf[s->nxf];
    xform_defaults(x, s->nxf);
    s->nxf++;
    return x;
}

/* ---------------------------------------------------------------- palettes ------------------ */

static void rgb2hsv(const double *rgb, double *hsv)
{
    double rd = rgb[0], gd = rgb[1], bd = rgb[2], max, min, h = 0, sat;
    max = rd >= gd ? (rd >= bd ? rd : bd) : (gd >= bd ? gd : bd);
    min = rd <= gd ? (rd <= bd ? rd : bd) : (gd <= bd ? gd : bd);
    double del = max - min;
    sat = max != 0.0 ? del / max : 0.0;
    if (sat != 0.0) {
        double rc = (max - rd) / del, gc = (max - gd) / del, bc = (max - bd) / del;
        if (rd == max)
            h = bc - gc;
        else if (gd == max)
            h = 2 + rc - bc;
        else if (bd == max)
            h = 4 + gc - rc;
        if (h < 0) h += 6;
    }
    hsv[0] = h;
    hsv[1] = sat;
    hsv[2] = max;
}

void kiln__flame_hsv2rgb(const double *hsv, double *rgb);
void kiln__flame_hsv2rgb(const double *hsv, double *rgb)
{
    double h = hsv[0], sat = hsv[1], v = hsv[2];
    h = fmod(h, 6.0);
    if (h < 0) h += 6.0;
    int j = (int)floor(h);
    double f = h - j, p = v * (1 - sat), q = v * (1 - sat * f), t = v * (1 - sat * (1 - f));
    double r, g, b;
    switch (j) {
    case 1: r = q; g = v; b = p; break;
    case 2: r = p; g = v; b = t; break;
    case 3: r = p; g = q; b = v; break;
    case 4: r = t; g = p; b = v; break;
    case 5: r = v; g = p; b = q; break;
    default: r = v; g = t; b = p; break;
    }
    rgb[0] = r;
    rgb[1] = g;
    rgb[2] = b;
}

void kiln__flame_rgb2hsv(const double *rgb, double *hsv);
void kiln__flame_rgb2hsv(const double *rgb, double *hsv) { rgb2hsv(rgb, hsv); }

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int hexbyte(const char *p)
{
    int a = hexval((unsigned char)p[0]);
    if (a < 0) return -1;
    int b = hexval((unsigned char)p[1]);
    if (b < 0) return -1;
    return a * 16 + b;
}

/* flam3_parse_hexformat_colors: chan 3 = RRGGBB, 4 = RRGGBBAA, -4 = 00RRGGBB. Not premultiplied. */
static int parse_hex_colors(pstate *s, const char *str, int count, int chan)
{
    if (count < 0 || count > 256) {
        perr(s, KILN_ERR_CORRUPT, "palette count %d is out of range [0, 256]", count);
        return 0;
    }
    const char *p = str;
    while (isspace((unsigned char)*p)) p++;
    for (int i = 0; i < count; i++) {
        int rgba[4] = {0, 0, 0, 255};
        const char *q = p;
        if (chan == -4) {
            if (q[0] != '0' || q[1] != '0') goto bad;
            q += 2;
        }
        for (int k = 0; k < (chan == 4 ? 4 : 3); k++) {
            if (!q[0] || !q[1]) goto bad;
            int v = hexbyte(q);
            if (v < 0) goto bad;
            rgba[k] = v;
            q += 2;
        }
        p = q;
        while (isspace((unsigned char)*p)) p++;
        for (int k = 0; k < 4; k++) s->cur.palette[i][k] = (float)(rgba[k] / 255.0);
        s->pal_index[i] = i;
        continue;
    bad:
        perr(s, KILN_ERR_CORRUPT, "bad hexadecimal colour data at colour %d", i);
        return 0;
    }
    while (isspace((unsigned char)*p)) p++;
    if (*p) {
        perr(s, KILN_ERR_CORRUPT, "extra data after %d hexadecimal colours", count);
        return 0;
    }
    return 1;
}

/* flam3_interp_missing_colors */
static void interp_missing(pstate *s)
{
    float(*pal)[4] = s->cur.palette;
    int *idx = s->pal_index;
    int minix = -1, maxix = -1;
    for (int i = 0; i < 256; i++)
        if (idx[i] >= 0) {
            minix = i;
            break;
        }
    if (minix < 0) {
        for (int i = 0; i < 256; i++) idx[i] = i;
        return;
    }
    for (int i = 255; i >= 0; i--)
        if (idx[i] >= 0) {
            maxix = i;
            break;
        }
    int wrapmin = minix + 256, wrapmax = maxix - 256;
    int i = 0;
    while (i < 256) {
        if (idx[i] < 0) {
            int str = i, enr = i, intl = i - 1, colorli = intl, intr = i + 1, colorri = intr;
            while (i < 256 && idx[i] < 0) {
                enr = i;
                intr = i + 1;
                colorri = intr;
                i++;
            }
            if (intl == -1) {
                intl = wrapmax;
                colorli = maxix;
            }
            if (intr == 256) {
                intr = wrapmin;
                colorri = minix;
            }
            for (int j = str; j <= enr; j++) {
                double prcr = (j - intl) / (double)(intr - intl);
                for (int k = 0; k < 4; k++)
                    pal[j][k] = (float)(pal[colorli][k] * (1.0 - prcr) + pal[colorri][k] * prcr);
                idx[j] = j;
            }
            i = colorri + 1;
        } else {
            i++;
        }
    }
}

/* Library palettes (flam3-palettes.xml): <palette number="N" data="00RRGGBB..."/> */
typedef struct {
    int want;
    int found;
    int bad;
    unsigned char rgb[256][3];
} libpal;

static void XMLCALL libpal_start(void *user, const XML_Char *el, const XML_Char **attr)
{
    libpal *lp = user;
    if (lp->found || strcmp(el, "palette") != 0) return;
    const char *num = NULL, *data = NULL;
    for (int i = 0; attr[i]; i += 2) {
        if (!strcmp(attr[i], "number")) num = attr[i + 1];
        if (!strcmp(attr[i], "data")) data = attr[i + 1];
    }
    if (!num || !data || atoi(num) != lp->want) return;
    const char *p = data;
    for (int c = 0; c < 256; c++) {
        while (isspace((unsigned char)*p)) p++;
        if (p[0] != '0' || p[1] != '0') {
            lp->bad = 1;
            return;
        }
        p += 2;
        for (int k = 0; k < 3; k++) {
            if (!p[0] || !p[1]) {
                lp->bad = 1;
                return;
            }
            int v = hexbyte(p);
            if (v < 0) {
                lp->bad = 1;
                return;
            }
            lp->rgb[c][k] = (unsigned char)v;
            p += 2;
        }
    }
    lp->found = 1;
}

static void load_library_palette(pstate *s)
{
    const char *env = getenv("flam3_palettes");
    const char *path = env && *env ? env : "/usr/share/flam3/flam3-palettes.xml";
    uint8_t *data = NULL;
    size_t size = 0;
    if (kiln__read_file(s->ctx, path, &data, &size) != KILN_OK) {
        perr(s, KILN_ERR_UNSUPPORTED, "palette=\"%d\" needs flam3's palette library %s, which cannot be read",
             s->cur.palette_index, path);
        return;
    }
    libpal *lp = calloc(1, sizeof *lp);
    XML_Parser p = XML_ParserCreate(NULL);
    if (!lp || !p) {
        free(lp);
        if (p) XML_ParserFree(p);
        free(data);
        perr(s, KILN_ERR_OUT_OF_MEMORY, "out of memory reading %s", path);
        return;
    }
    lp->want = s->cur.palette_index;
    XML_SetUserData(p, lp);
    XML_SetElementHandler(p, libpal_start, NULL);
    int ok = size <= (size_t)INT32_MAX && XML_Parse(p, (const char *)data, (int)size, 1) == XML_STATUS_OK;
    XML_ParserFree(p);
    free(data);
    if (!ok || lp->bad) {
        perr(s, KILN_ERR_CORRUPT, "palette library %s is malformed", path);
    } else if (!lp->found) {
        perr(s, KILN_ERR_CORRUPT, "palette %d is not in %s", s->cur.palette_index, path);
    } else {
        for (int i = 0; i < 256; i++) {
            double rgb[3], hsv[3];
            for (int k = 0; k < 3; k++) rgb[k] = lp->rgb[i][k] / 255.0;
            rgb2hsv(rgb, hsv);
            hsv[0] += s->cur.hue * 6.0;
            kiln__flame_hsv2rgb(hsv, rgb);
            for (int k = 0; k < 3; k++) s->cur.palette[i][k] = (float)rgb[k];
            s->cur.palette[i][3] = 1.0f;
            s->pal_index[i] = i;
        }
    }
    free(lp);
}

/* ---------------------------------------------------------------- symmetry ------------------ */

static double round6(double x) { return 1e-6 * (double)(long long)(x * 1e6); }

static void add_symmetry(pstate *s, int sym)
{
    if (sym == 0 || sym == 1) return;
    if (sym < -1000 || sym > 1000) {
        perr(s, KILN_ERR_CORRUPT, "symmetry kind %d is out of range [-1000, 1000]", sym);
        return;
    }
    if (sym < 0) {
        kiln_flame_xform *x = add_xform(s);
        if (!x) return;
        x->weight = 1;
        x->color_speed = 0;
        x->animate = 0;
        x->var[0] = 1;
        x->color = 1;
        x->c[0][0] = -1;
        x->c[0][1] = 0;
        x->c[1][0] = 0;
        x->c[1][1] = 1;
        s->num_std++;
        sym = -sym;
    }
    double a = 2 * M_PI / sym;
    for (int k = 1; k < sym; k++) {
        kiln_flame_xform *x = add_xform(s);
        if (!x) return;
        x->weight = 1;
        x->color_speed = 0;
        x->animate = 0;
        x->var[0] = 1;
        x->color = sym < 3 ? 0.0 : (k - 1.0) / (sym - 2.0);
        x->c[0][0] = round6(cos(k * a));
        x->c[0][1] = round6(sin(k * a));
        x->c[1][0] = round6(-x->c[0][1]);
        x->c[1][1] = x->c[0][0];
        s->num_std++;
    }
}

/* ---------------------------------------------------------------- elements ------------------ */

static void flame_attrs(pstate *s, const XML_Char **attr)
{
    kiln_flame *f = &s->cur;
    if (!attr[0]) {
        perr(s, KILN_ERR_CORRUPT, "<flame> element has no attributes");
        return;
    }
    for (int i = 0; attr[i] && !failed(s); i += 2) {
        const char *k = attr[i], *v = attr[i + 1];
        double d[3];
        int n;
        if (!strcmp(k, "name")) {
            snprintf(f->name, sizeof f->name, "%s", v);
        } else if (!strcmp(k, "palette")) {
            if (parse_int(s, k, v, 0, 1000000, &n)) f->palette_index = n;
        } else if (!strcmp(k, "size")) {
            int w, h;
            char extra[2];
            if (sscanf(v, "%d %d%1s", &w, &h, extra) != 2 || w < 1 || h < 1 || (uint32_t)w > KILN_MAX_DIMENSION ||
                (uint32_t)h > KILN_MAX_DIMENSION || (uint64_t)w * (uint64_t)h > KILN_MAX_PIXELS) {
                perr(s, KILN_ERR_CORRUPT, "invalid size \"%.60s\" (1..%u per side, at most %llu pixels)", v,
                     KILN_MAX_DIMENSION, (unsigned long long)KILN_MAX_PIXELS);
            } else {
                f->width = (uint32_t)w;
                f->height = (uint32_t)h;
            }
        } else if (!strcmp(k, "center")) {
            if (parse_doubles(s, k, v, d, 2) && check_range(s, k, fabs(d[0]) + fabs(d[1]), 0, 1e10)) {
                f->center[0] = d[0];
                f->center[1] = d[1];
            }
        } else if (!strcmp(k, "scale")) {
            if (parse_double(s, k, v, &d[0]) && check_range(s, k, d[0], 1e-10, 1e10)) f->pixels_per_unit = d[0];
        } else if (!strcmp(k, "rotate")) {
            if (parse_double(s, k, v, &d[0]) && check_range(s, k, d[0], -1e9, 1e9)) f->rotate = d[0];
        } else if (!strcmp(k, "zoom")) {
            if (parse_double(s, k, v, &d[0]) && check_range(s, k, d[0], -30, 10)) f->zoom = d[0];
        } else if (!strcmp(k, "oversample") || !strcmp(k, "supersample")) {
            if (parse_int(s, k, v, 1, MAX_SUPERSAMPLE, &n)) f->supersample = (uint32_t)n;
        } else if (!strcmp(k, "filter")) {
            if (parse_double(s, k, v, &d[0]) && check_range(s, k, d[0], 0, 100)) f->filter = d[0];
        } else if (!strcmp(k, "filter_shape")) {
            static const char *const shapes[] = {"gaussian", "hermite", "box", "triangle", "bell",
                                                 "bspline", "mitchell", "blackman", "catrom", "hanning",
                                                 "hamming", "lanczos3", "lanczos2", "quadratic"};
            f->filter_shape = KILN_FLAME_FILTER_GAUSSIAN; /* flam3: unknown -> gaussian */
            for (int j = 0; j < 14; j++)
                if (!strcmp(v, shapes[j])) f->filter_shape = (kiln_flame_filter_shape)j;
        } else if (!strcmp(k, "palette_mode")) {
            f->palette_linear = !strcmp(v, "linear");
        } else if (!strcmp(k, "quality")) {
            if (parse_double(s, k, v, &d[0]) && check_range(s, k, d[0], 1e-9, MAX_QUALITY)) f->quality = d[0];
        } else if (!strcmp(k, "passes")) {
            if (parse_int(s, k, v, 1, 1000, &n)) f->passes = (uint32_t)n;
        } else if (!strcmp(k, "temporal_samples")) {
            if (parse_int(s, k, v, 1, 1000000, &n)) f->temporal_samples = (uint32_t)n;
        } else if (!strcmp(k, "background")) {
            if (parse_doubles(s, k, v, d, 3) && check_range(s, k, fabs(d[0]) + fabs(d[1]) + fabs(d[2]), 0, 1e6))
                for (int j = 0; j < 3; j++) f->background[j] = d[j];
        } else if (!strcmp(k, "brightness")) {
            if (parse_double(s, k, v, &d[0]) && check_range(s, k, d[0], 0, 1e6)) f->brightness = d[0];
        } else if (!strcmp(k, "contrast")) {
            if (parse_double(s, k, v, &d[0])) f->contrast = d[0]; /* flam3 ignores it */
        } else if (!strcmp(k, "gamma")) {
            if (parse_double(s, k, v, &d[0]) && check_range(s, k, d[0], 1e-6, 1e6)) f->gamma = d[0];
        } else if (!strcmp(k, "highlight_power")) {
            if (parse_double(s, k, v, &d[0]) && check_range(s, k, d[0], -1e6, 1e6)) f->highlight_power = d[0];
        } else if (!strcmp(k, "vibrancy")) {
            if (parse_double(s, k, v, &d[0]) && check_range(s, k, d[0], -1e6, 1e6)) f->vibrancy = d[0];
        } else if (!strcmp(k, "hue")) {
            if (parse_double(s, k, v, &d[0])) f->hue = fmod(d[0], 1.0);
        } else if (!strcmp(k, "estimator_radius")) {
            if (parse_double(s, k, v, &d[0]) && check_range(s, k, d[0], 0, 1000)) f->estimator_radius = d[0];
        } else if (!strcmp(k, "estimator_minimum")) {
            if (parse_double(s, k, v, &d[0]) && check_range(s, k, d[0], 0, 1000)) f->estimator_minimum = d[0];
        } else if (!strcmp(k, "estimator_curve")) {
            if (parse_double(s, k, v, &d[0]) && check_range(s, k, d[0], 1e-3, 1e3)) f->estimator_curve = d[0];
        } else if (!strcmp(k, "gamma_threshold")) {
            if (parse_double(s, k, v, &d[0]) && check_range(s, k, d[0], 0, 1e6)) f->gamma_threshold = d[0];
        } else if (!strcmp(k, "soloxform")) {
            if (parse_double(s, k, v, &d[0])) s->solo = (int)fmax(-1.0, fmin(d[0], 1e6));
        } else if (!strcmp(k, "temporal_filter_width") || !strcmp(k, "temporal_filter_exp") || !strcmp(k, "time")) {
            parse_double(s, k, v, &d[0]); /* animation only: validated, unused for stills */
        }
        /* interpolation, palette_interpolation, interpolation_type, temporal_filter_type, version, url,
         * nick, notes and any other attribute: flam3 ignores them for rendering; so does kiln. */
    }
}

static void xform_attrs(pstate *s, kiln_flame_xform *x, const XML_Char **attr, int is_final, int std_index)
{
    if (!attr[0]) {
        perr(s, KILN_ERR_CORRUPT, "<%s> element has no attributes", is_final ? "finalxform" : "xform");
        return;
    }
    int weight_given = 0;
    for (int i = 0; attr[i] && !failed(s); i += 2) {
        const char *k = attr[i], *v = attr[i + 1];
        double d;
        int pv, pi;
        if (!strcmp(k, "weight")) {
            if (parse_double(s, k, v, &d) && check_range(s, k, d, 0, 1e10)) {
                x->weight = d;
                weight_given = d != 0.0;
            }
        } else if (!strcmp(k, "symmetry")) {
            if (parse_double(s, k, v, &d)) {
                x->color_speed = (1.0 - d) / 2.0;
                x->animate = d > 0 ? 0 : 1;
            }
        } else if (!strcmp(k, "color_speed")) {
            if (parse_double(s, k, v, &d)) x->color_speed = d;
        } else if (!strcmp(k, "animate")) {
            if (parse_double(s, k, v, &d)) x->animate = d;
        } else if (!strcmp(k, "color")) {
            /* one or two numbers; flam3 uses the first */
            char *end, *end2;
            double c = strtod(v, &end);
            int ok = end != v && isfinite(c);
            if (ok) {
                double c2 = strtod(end, &end2);
                if (end2 != end) {
                    ok = isfinite(c2);
                    end = end2;
                }
                while (isspace((unsigned char)*end)) end++;
                ok = ok && *end == 0;
            }
            if (!ok)
                perr(s, KILN_ERR_CORRUPT, "malformed xform color \"%.60s\"", v);
            else
                x->color = c;
        } else if (!strcmp(k, "var1")) {
            int j;
            if (parse_int(s, k, v, 0, KILN_FLAME_NVARS - 1, &j)) {
                memset(x->var, 0, sizeof x->var);
                x->var[j] = 1.0;
            }
        } else if (!strcmp(k, "var")) {
            double vv[KILN_FLAME_NVARS];
            if (parse_doubles(s, k, v, vv, KILN_FLAME_NVARS)) {
                for (int j = 0; j < KILN_FLAME_NVARS; j++)
                    if (check_range(s, k, vv[j], -MAX_COEF, MAX_COEF)) x->var[j] = vv[j];
            }
        } else if (!strcmp(k, "chaos")) {
            if (is_final) continue; /* flam3 stores it against the standard index; unused for the final */
            const char *p = v;
            int to = 0;
            while (*p && !failed(s)) {
                while (isspace((unsigned char)*p)) p++;
                if (!*p) break;
                char *end;
                errno = 0;
                double c = strtod(p, &end);
                if (end == p || !isfinite(c) || c < 0 || c > 1e10) {
                    perr(s, KILN_ERR_CORRUPT, "chaos=\"%.60s\": entries must be finite and non-negative", v);
                    break;
                }
                p = end;
                if (c != 1.0) {
                    if (s->nchaos == s->chaos_cap) {
                        size_t nc = s->chaos_cap ? s->chaos_cap * 2 : 16;
                        if (nc > 1u << 20) {
                            perr(s, KILN_ERR_CORRUPT, "too many chaos entries");
                            break;
                        }
                        chaos_entry *n = realloc(s->chaos, nc * sizeof *n);
                        if (!n) {
                            perr(s, KILN_ERR_OUT_OF_MEMORY, "out of memory for chaos");
                            break;
                        }
                        s->chaos = n;
                        s->chaos_cap = nc;
                    }
                    s->chaos[s->nchaos++] = (chaos_entry){std_index, to, c};
                }
                to++;
            }
        } else if (!strcmp(k, "plotmode")) {
            if (!strcmp(v, "off")) x->opacity = 0.0;
        } else if (!strcmp(k, "opacity")) {
            if (parse_double(s, k, v, &d) && check_range(s, k, d, 0, 1)) x->opacity = d;
        } else if (!strcmp(k, "coefs") || !strcmp(k, "post")) {
            double c[6];
            if (parse_doubles(s, k, v, c, 6)) {
                for (int j = 0; j < 6; j++) check_range(s, k, c[j], -MAX_COEF, MAX_COEF);
                double(*m)[2] = !strcmp(k, "coefs") ? x->c : x->post;
                for (int j = 0; j < 6; j++) m[j / 2][j % 2] = c[j];
            }
        } else if (!strcmp(k, "motion_frequency") || !strcmp(k, "motion_function")) {
            perr(s, KILN_ERR_CORRUPT, "motion parameters (%s) are not allowed in xforms", k);
        } else if (!strcmp(k, "name")) {
            /* xform names (Apophysis) carry no rendering meaning */
        } else if (kiln__flame_param_lookup(k, &pv, &pi)) {
            if (parse_double(s, k, v, &d) && check_range(s, k, d, -MAX_COEF, MAX_COEF)) {
                if (pv == KILN_FLAME_VAR_super_shape && pi == 0) d = d < 0 ? 0 : d > 1 ? 1 : d;
                x->params[pv][pi] = d;
            }
        } else {
            /* aliases */
            static const char *const mob[8] = {"Re_A", "Im_A", "Re_B", "Im_B", "Re_C", "Im_C", "Re_D", "Im_D"};
            static const char *const osc[4] = {"oscope_separation", "oscope_frequency", "oscope_amplitude",
                                               "oscope_damping"};
            int handled = 0;
            for (int j = 0; j < 8 && !handled; j++)
                if (!strcmp(k, mob[j])) {
                    handled = 1;
                    if (parse_double(s, k, v, &d) && check_range(s, k, d, -MAX_COEF, MAX_COEF))
                        x->params[KILN_FLAME_VAR_mobius][j] = d;
                }
            for (int j = 0; j < 4 && !handled; j++)
                if (!strcmp(k, osc[j])) {
                    handled = 1;
                    if (parse_double(s, k, v, &d) && check_range(s, k, d, -MAX_COEF, MAX_COEF))
                        x->params[KILN_FLAME_VAR_oscilloscope][j] = d;
                }
            if (handled) continue;
            int var = kiln__flame_var_lookup(k);
            if (var < 0) {
                perr(s, KILN_ERR_CORRUPT, "unknown variation or xform attribute \"%.60s\"", k);
            } else if (parse_double(s, k, v, &d) && check_range(s, k, d, -MAX_COEF, MAX_COEF)) {
                x->var[var] = d;
            }
        }
    }
    if (!failed(s) && is_final && weight_given) perr(s, KILN_ERR_CORRUPT, "a <finalxform> must not have a weight");
}

static void XMLCALL on_start(void *user, const XML_Char *el, const XML_Char **attr)
{
    pstate *s = user;
    s->depth++;
    if (failed(s)) return;
    if (!s->in_flame) {
        if (strcmp(el, "flame") != 0) return;
        if (s->count >= MAX_FLAMES) {
            perr(s, KILN_ERR_CORRUPT, "more than %d flames", MAX_FLAMES);
            return;
        }
        s->in_flame = 1;
        s->flame_depth = s->depth;
        flame_defaults(&s->cur);
        s->nxf = 0;
        s->final_pos = -1;
        s->num_std = 0;
        s->solo = -1;
        s->nchaos = 0;
        for (int i = 0; i < 256; i++) s->pal_index[i] = -1;
        flame_attrs(s, attr);
        return;
    }
    if (s->depth != s->flame_depth + 1) return; /* grandchildren: <motion>, <edit> contents... */
    if (!strcmp(el, "xform") || !strcmp(el, "finalxform")) {
        int is_final = !strcmp(el, "finalxform");
        if (is_final && s->final_pos >= 0) {
            perr(s, KILN_ERR_CORRUPT, "more than one <finalxform>");
            return;
        }
        kiln_flame_xform *x = add_xform(s);
        if (!x) return;
        x->var[0] = 0.0;
        int std_index = s->num_std;
        if (is_final)
            s->final_pos = (int)(s->nxf - 1);
        else
            s->num_std++;
        xform_attrs(s, x, attr, is_final, std_index);
    } else if (!strcmp(el, "color")) {
        int index = -1;
        double r = 0, g = 0, b = 0, a = 0, t[4];
        if (!attr[0]) {
            perr(s, KILN_ERR_CORRUPT, "<color> element has no attributes");
            return;
        }
        for (int i = 0; attr[i] && !failed(s); i += 2) {
            a = 255.0; /* flam3 resets alpha for every attribute */
            if (!strcmp(attr[i], "index")) {
                parse_int(s, "index", attr[i + 1], 0, 255, &index);
            } else if (!strcmp(attr[i], "rgb")) {
                if (parse_doubles(s, "rgb", attr[i + 1], t, 3)) {
                    r = t[0];
                    g = t[1];
                    b = t[2];
                }
            } else if (!strcmp(attr[i], "rgba")) {
                if (parse_doubles(s, "rgba", attr[i + 1], t, 4)) {
                    r = t[0];
                    g = t[1];
                    b = t[2];
                    a = t[3];
                }
            } else if (!strcmp(attr[i], "a")) {
                parse_double(s, "a", attr[i + 1], &a);
            } else {
                perr(s, KILN_ERR_CORRUPT, "unknown <color> attribute \"%.60s\"", attr[i]);
            }
        }
        if (failed(s)) return;
        if (index < 0 || index > 255) {
            perr(s, KILN_ERR_CORRUPT, "<color> element with a bad or missing index");
            return;
        }
        if (!(r >= 0 && r <= 255 && g >= 0 && g <= 255 && b >= 0 && b <= 255 && a >= 0 && a <= 255)) {
            perr(s, KILN_ERR_CORRUPT, "<color index=\"%d\">: components must be in [0, 255]", index);
            return;
        }
        s->cur.palette[index][3] = (float)(a / 255.0);
        s->cur.palette[index][0] = (float)(a / 255.0 * r / 255.0);
        s->cur.palette[index][1] = (float)(a / 255.0 * g / 255.0);
        s->cur.palette[index][2] = (float)(a / 255.0 * b / 255.0);
        s->pal_index[index] = index;
    } else if (!strcmp(el, "colors")) {
        int count = -1;
        const char *data = NULL;
        for (int i = 0; attr[i] && !failed(s); i += 2) {
            if (!strcmp(attr[i], "count"))
                parse_int(s, "count", attr[i + 1], 0, 256, &count);
            else if (!strcmp(attr[i], "data"))
                data = attr[i + 1];
            else
                perr(s, KILN_ERR_CORRUPT, "unknown <colors> attribute \"%.60s\"", attr[i]);
        }
        if (failed(s)) return;
        if (count < 0 || !data) {
            perr(s, KILN_ERR_CORRUPT, "<colors> needs count and data");
            return;
        }
        parse_hex_colors(s, data, count, -4);
    } else if (!strcmp(el, "palette")) {
        int count = -1, chan = 0, old = 0;
        for (int i = 0; attr[i] && !failed(s); i += 2) {
            const char *k = attr[i];
            if (!strcmp(k, "count")) {
                parse_int(s, k, attr[i + 1], 0, 256, &count);
            } else if (!strcmp(k, "format")) {
                if (!strcmp(attr[i + 1], "RGB"))
                    chan = 3;
                else if (!strcmp(attr[i + 1], "RGBA"))
                    chan = 4;
                else
                    perr(s, KILN_ERR_CORRUPT, "unknown palette format \"%.20s\"", attr[i + 1]);
            } else if (!strcmp(k, "index0") || !strcmp(k, "index1") || !strcmp(k, "hue0") || !strcmp(k, "hue1") ||
                       !strcmp(k, "blend")) {
                old = 1;
            } else {
                perr(s, KILN_ERR_CORRUPT, "unknown <palette> attribute \"%.60s\"", k);
            }
        }
        if (failed(s)) return;
        if (old) {
            perr(s, KILN_ERR_UNSUPPORTED, "old-style <palette index0=...> blends are not supported");
            return;
        }
        if (count < 0 || chan == 0) {
            perr(s, KILN_ERR_CORRUPT, "<palette> needs count and format");
            return;
        }
        s->in_palette = 1;
        s->pal_count = count;
        s->pal_chan = chan;
        s->tlen = 0;
    } else if (!strcmp(el, "symmetry")) {
        int kind = 0;
        if (!attr[0]) {
            perr(s, KILN_ERR_CORRUPT, "<symmetry> element has no attributes");
            return;
        }
        for (int i = 0; attr[i] && !failed(s); i += 2) {
            if (!strcmp(attr[i], "kind"))
                parse_int(s, "kind", attr[i + 1], -1000, 1000, &kind);
            else
                perr(s, KILN_ERR_CORRUPT, "unknown <symmetry> attribute \"%.60s\"", attr[i]);
        }
        if (!failed(s)) add_symmetry(s, kind);
    }
    /* <edit> and anything else: ignored, as flam3 does */
}

static void XMLCALL on_text(void *user, const XML_Char *txt, int len)
{
    pstate *s = user;
    if (failed(s) || !s->in_palette || len <= 0) return;
    if (s->tlen + (size_t)len + 1 > s->tcap) {
        size_t nc = (s->tlen + (size_t)len + 1) * 2;
        if (nc > (64u << 20)) {
            perr(s, KILN_ERR_CORRUPT, "palette text too long");
            return;
        }
        char *n = realloc(s->text, nc);
        if (!n) {
            perr(s, KILN_ERR_OUT_OF_MEMORY, "out of memory for palette text");
            return;
        }
        s->text = n;
        s->tcap = nc;
    }
    memcpy(s->text + s->tlen, txt, (size_t)len);
    s->tlen += (size_t)len;
    s->text[s->tlen] = 0;
}

static void finish_flame(pstate *s)
{
    kiln_flame *f = &s->cur;
    if (s->cur.palette_index >= 0) load_library_palette(s);
    if (failed(s)) return;
    interp_missing(s);

    uint32_t n = s->nxf;
    if (n == 0 || (s->final_pos >= 0 && n == 1)) {
        perr(s, KILN_ERR_CORRUPT, "the flame has no xform");
        return;
    }
    if (s->solo >= 0)
        for (uint32_t i = 0, k = 0; i < n; i++) {
            if ((int)i == s->final_pos) continue;
            if ((int)k != s->solo) s->xf[i].opacity = 0.0;
            k++;
        }
    kiln_flame_xform *xs = calloc(n, sizeof *xs);
    if (!xs) {
        perr(s, KILN_ERR_OUT_OF_MEMORY, "out of memory for %u xforms", n);
        return;
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        if ((int)i != s->final_pos) xs[k++] = s->xf[i];
    if (s->final_pos >= 0) xs[k++] = s->xf[s->final_pos];
    uint32_t nstd = n - (s->final_pos >= 0);
    double total = 0;
    for (uint32_t i = 0; i < n; i++) {
        kiln_flame_xform *x = &xs[i];
        x->nactive = 0;
        for (int v = 0; v < KILN_FLAME_NVARS; v++)
            if (x->var[v] != 0.0) x->active[x->nactive++] = (uint8_t)v;
        x->has_post = !(x->post[0][0] == 1 && x->post[0][1] == 0 && x->post[1][0] == 0 && x->post[1][1] == 1 &&
                        x->post[2][0] == 0 && x->post[2][1] == 0);
        if (i < nstd) total += x->weight;
    }
    if (!(total > 0)) {
        free(xs);
        perr(s, KILN_ERR_CORRUPT, "no xform has a positive weight (nothing to iterate)");
        return;
    }
    double *chaos = NULL;
    if (s->nchaos) {
        chaos = malloc((size_t)n * n * sizeof *chaos);
        if (!chaos) {
            free(xs);
            perr(s, KILN_ERR_OUT_OF_MEMORY, "out of memory for chaos");
            return;
        }
        for (size_t i = 0; i < (size_t)n * n; i++) chaos[i] = 1.0;
        for (size_t i = 0; i < s->nchaos; i++) {
            chaos_entry e = s->chaos[i];
            if (e.from >= 0 && (uint32_t)e.from < nstd && e.to >= 0 && (uint32_t)e.to < nstd)
                chaos[(size_t)e.from * n + (size_t)e.to] = e.value;
        }
        /* every row the chaos game may use must keep a positive total weight */
        for (uint32_t r = 0; r < nstd; r++) {
            double t = 0;
            for (uint32_t j = 0; j < nstd; j++) t += xs[j].weight * chaos[(size_t)r * n + j];
            if (!(t > 0) && xs[r].weight > 0) {
                free(xs);
                free(chaos);
                perr(s, KILN_ERR_CORRUPT, "chaos row of xform %u leaves no xform to pick", r);
                return;
            }
        }
    }
    f->xforms = xs;
    f->num_xforms = n;
    f->final_xform = s->final_pos >= 0 ? (int)n - 1 : -1;
    f->chaos = chaos;

    if (s->count == s->cap) {
        uint32_t nc = s->cap ? s->cap * 2 : 4;
        kiln_flame *nf = realloc(s->flames, (size_t)nc * sizeof *nf);
        if (!nf) {
            kiln__flame_free(f);
            perr(s, KILN_ERR_OUT_OF_MEMORY, "out of memory for flames");
            return;
        }
        s->flames = nf;
        s->cap = nc;
    }
    s->flames[s->count++] = *f;
    memset(f, 0, sizeof *f);
}

static void XMLCALL on_end(void *user, const XML_Char *el)
{
    pstate *s = user;
    (void)el;
    if (!failed(s) && s->in_flame) {
        if (s->in_palette && s->depth == s->flame_depth + 1) {
            s->in_palette = 0;
            parse_hex_colors(s, s->text ? s->text : "", s->pal_count, s->pal_chan);
        } else if (s->depth == s->flame_depth) {
            s->in_flame = 0;
            finish_flame(s);
        }
    }
    s->depth--;
}

void kiln__flame_free(kiln_flame *flame)
{
    if (!flame) return;
    free(flame->xforms);
    free(flame->chaos);
    flame->xforms = NULL;
    flame->chaos = NULL;
}

void kiln__flame_free_all(kiln_flame *flames, uint32_t count)
{
    if (!flames) return;
    for (uint32_t i = 0; i < count; i++) kiln__flame_free(&flames[i]);
    free(flames);
}

kiln_status kiln__flame_parse(kiln_context *ctx, const char *xml, size_t size, const char *name, kiln_flame **flames,
                              uint32_t *count)
{
    if (!flames || !count || (!xml && size)) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "flame parse: NULL argument");
    *flames = NULL;
    *count = 0;
    if (!name) name = "<memory>";
    if (size > (size_t)INT32_MAX) return kiln__fail(ctx, KILN_ERR_TOO_LARGE, "%s: genome file of %zu bytes is too large", name, size);
    pstate *s = calloc(1, sizeof *s);
    if (!s) return kiln__fail(ctx, KILN_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
    s->ctx = ctx;
    s->name = name;
    s->xp = XML_ParserCreate(NULL);
    if (!s->xp) {
        free(s);
        return kiln__fail(ctx, KILN_ERR_OUT_OF_MEMORY, "%s: cannot create an XML parser", name);
    }
    XML_SetUserData(s->xp, s);
    XML_SetElementHandler(s->xp, on_start, on_end);
    XML_SetCharacterDataHandler(s->xp, on_text);
    enum XML_Status xs = XML_Parse(s->xp, xml ? xml : "", (int)size, 1);
    if (xs != XML_STATUS_OK && !failed(s)) {
        s->st = kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: line %lu: malformed XML: %s", name,
                           (unsigned long)XML_GetCurrentLineNumber(s->xp), XML_ErrorString(XML_GetErrorCode(s->xp)));
    }
    if (!failed(s) && s->count == 0) s->st = kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: no <flame> element found", name);
    kiln_status st = s->st;
    if (st == KILN_OK) {
        *flames = s->flames;
        *count = s->count;
    } else {
        kiln__flame_free_all(s->flames, s->count);
    }
    kiln__flame_free(&s->cur);
    XML_ParserFree(s->xp);
    free(s->xf);
    free(s->chaos);
    free(s->text);
    free(s);
    return st;
}

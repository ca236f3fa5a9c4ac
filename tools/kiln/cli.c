/* cli.c - options, errors and progress shared by the subcommands. */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int g_progress_drawn;
static double g_progress_last;

void kiln_cli_common_init(kiln_cli_common *c)
{
    memset(c, 0, sizeof *c);
    kiln_context_params_init(&c->ctx_params);
    c->progress = -1;
}

int kiln_cli_parse_u32(const char *s, unsigned *out)
{
    if (!s || !*s) return -1;
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (*end || v > 0xffffffffUL || s[0] == '-') return -1;
    *out = (unsigned)v;
    return 0;
}

static const char *optval(int argc, char **argv, int *i, const char *name)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (!strncmp(a, name, n) && a[n] == '=') return a + n + 1;
    if (*i + 1 >= argc) return NULL;
    return argv[++*i];
}

static int is_opt(const char *a, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(a, name, n) && (a[n] == 0 || a[n] == '=');
}

int kiln_cli_common_option(kiln_cli_common *c, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    if (is_opt(a, "--backend")) {
        const char *v = optval(argc, argv, i, "--backend");
        if (!v) return kiln_cli_usage_error("", "--backend needs a value: auto, cpu or vulkan"), -1;
        if (!strcmp(v, "auto")) c->ctx_params.backend = KILN_BACKEND_AUTO;
        else if (!strcmp(v, "cpu")) c->ctx_params.backend = KILN_BACKEND_CPU;
        else if (!strcmp(v, "vulkan") || !strcmp(v, "gpu")) c->ctx_params.backend = KILN_BACKEND_VULKAN;
        else return kiln_cli_usage_error("", "unknown backend '%s' (auto, cpu or vulkan)", v), -1;
        return 1;
    }
    if (is_opt(a, "--device")) {
        const char *v = optval(argc, argv, i, "--device");
        unsigned n;
        if (!v || kiln_cli_parse_u32(v, &n)) return kiln_cli_usage_error("", "--device needs a device index"), -1;
        c->ctx_params.device_index = (int)n;
        if (c->ctx_params.backend == KILN_BACKEND_AUTO) c->ctx_params.backend = KILN_BACKEND_VULKAN;
        return 1;
    }
    if (is_opt(a, "--threads") || !strcmp(a, "-j")) {
        const char *v = a[1] == 'j' ? (*i + 1 < argc ? argv[++*i] : NULL) : optval(argc, argv, i, "--threads");
        unsigned n;
        if (!v || kiln_cli_parse_u32(v, &n) || n > 1024)
            return kiln_cli_usage_error("", "--threads needs a count from 0 (all cores) to 1024"), -1;
        c->ctx_params.threads = n;
        return 1;
    }
    if (!strcmp(a, "--quiet") || !strcmp(a, "-q!")) {
        c->quiet = 1;
        c->progress = 0;
        return 1;
    }
    if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
        c->ctx_params.verbose = 1;
        return 1;
    }
    if (is_opt(a, "--progress")) {
        const char *v = optval(argc, argv, i, "--progress");
        if (!v) return kiln_cli_usage_error("", "--progress needs auto, always or never"), -1;
        if (!strcmp(v, "auto")) c->progress = -1;
        else if (!strcmp(v, "always")) c->progress = 1;
        else if (!strcmp(v, "never")) c->progress = 0;
        else return kiln_cli_usage_error("", "unknown --progress value '%s'", v), -1;
        return 1;
    }
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int progress_cb(void *user, float fraction)
{
    const char *cmd = user;
    double t = now_s();
    if (fraction < 1.0f && t - g_progress_last < 0.1) return 0; /* ~10 Hz */
    g_progress_last = t;
    int pct = (int)(fraction * 100.0f + 0.5f);
    if (pct > 100) pct = 100;
    int bar = pct / 4;
    fprintf(stderr, "\rkiln %s [%.*s%*s] %3d%%", cmd, bar, "#########################", 25 - bar, "", pct);
    fflush(stderr);
    g_progress_drawn = 1;
    return 0;
}

void kiln_cli_progress_done(void)
{
    if (g_progress_drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        g_progress_drawn = 0;
    }
}

kiln_context *kiln_cli_context(kiln_cli_common *c, const char *cmd)
{
    int show = c->progress == 1 || (c->progress == -1 && isatty(2));
    if (show) {
        c->ctx_params.progress = progress_cb;
        c->ctx_params.progress_user = (void *)cmd;
    }
    kiln_context *ctx = NULL;
    kiln_status st = kiln_context_create(&c->ctx_params, &ctx);
    if (st != KILN_OK) {
        fprintf(stderr, "kiln %s: cannot create a context: %s\n", cmd, kiln_status_string(st));
        return NULL;
    }
    return ctx;
}

int kiln_cli_exit_code(kiln_status st)
{
    switch (st) {
    case KILN_OK: return KILN_EXIT_OK;
    case KILN_ERR_INVALID_ARGUMENT: return KILN_EXIT_USAGE;
    case KILN_ERR_IO: return KILN_EXIT_IO;
    case KILN_ERR_CORRUPT:
    case KILN_ERR_UNSUPPORTED:
    case KILN_ERR_TOO_LARGE: return KILN_EXIT_BAD_INPUT;
    case KILN_ERR_NO_DEVICE:
    case KILN_ERR_GPU: return KILN_EXIT_NO_DEVICE;
    case KILN_ERR_CANCELLED: return KILN_EXIT_CANCELLED;
    default: return KILN_EXIT_FAILURE;
    }
}

int kiln_cli_fail(const char *cmd, kiln_context *ctx, kiln_status st)
{
    kiln_cli_progress_done();
    const char *msg = ctx ? kiln_last_error(ctx) : "";
    if (!msg || !*msg) msg = kiln_status_string(st);
    fprintf(stderr, "kiln %s: %s\n", cmd, msg);
    return kiln_cli_exit_code(st);
}

int kiln_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "kiln%s%s: ", *cmd ? " " : "", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return KILN_EXIT_USAGE;
}

int kiln_cli_read_file(const char *path, uint8_t **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return errno ? errno : EIO;
    size_t cap = 1 << 16, n = 0;
    uint8_t *p = malloc(cap);
    while (p) {
        n += fread(p + n, 1, cap - n, f);
        if (n < cap) break;
        if (cap > (SIZE_MAX >> 2)) {
            free(p);
            p = NULL;
            break;
        }
        uint8_t *q = realloc(p, cap * 2);
        if (!q) {
            free(p);
            p = NULL;
            break;
        }
        p = q;
        cap *= 2;
    }
    int err = ferror(f) ? EIO : 0;
    fclose(f);
    if (!p) return ENOMEM;
    if (err) {
        free(p);
        return err;
    }
    *data = p;
    *size = n;
    return 0;
}

int kiln_cli_mip_option(const char *cmd, kiln_mip_params *mp, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    const char *next = *i + 1 < argc ? argv[*i + 1] : NULL;
    if (!strcmp(a, "--filter") || !strcmp(a, "--mip-filter")) {
        if (!next) return kiln_cli_usage_error(cmd, "%s needs box, kaiser, lanczos3 or mitchell", a), -1;
        if (!strcmp(next, "box")) mp->filter = KILN_MIP_FILTER_BOX;
        else if (!strcmp(next, "kaiser")) mp->filter = KILN_MIP_FILTER_KAISER;
        else if (!strcmp(next, "lanczos3") || !strcmp(next, "lanczos")) mp->filter = KILN_MIP_FILTER_LANCZOS3;
        else if (!strcmp(next, "mitchell")) mp->filter = KILN_MIP_FILTER_MITCHELL;
        else return kiln_cli_usage_error(cmd, "unknown filter '%s' (box, kaiser, lanczos3, mitchell)", next), -1;
        (*i)++;
        return 1;
    }
    if (!strcmp(a, "--wrap")) mp->edge = KILN_MIP_EDGE_WRAP;
    else if (!strcmp(a, "--clamp")) mp->edge = KILN_MIP_EDGE_CLAMP;
    else if (!strcmp(a, "--normal") || !strcmp(a, "--normal-map")) mp->normal_map = 1;
    else if (!strcmp(a, "--alpha")) {
        if (!next) return kiln_cli_usage_error(cmd, "--alpha needs weighted, separate or premultiplied"), -1;
        if (!strcmp(next, "weighted") || !strcmp(next, "straight")) mp->alpha = KILN_MIP_ALPHA_WEIGHTED;
        else if (!strcmp(next, "separate")) mp->alpha = KILN_MIP_ALPHA_SEPARATE;
        else if (!strcmp(next, "premultiplied")) mp->alpha = KILN_MIP_ALPHA_PREMULTIPLIED;
        else return kiln_cli_usage_error(cmd, "unknown alpha mode '%s' (weighted, separate, premultiplied)", next), -1;
        (*i)++;
    } else if (!strcmp(a, "--mip-strategy")) {
        static const char *const names[] = {"auto", "blit", "per-level", "subgroup", "pyramid", "single-pass"};
        int found = -1;
        for (int k = 0; next && k < 6; k++)
            if (!strcmp(next, names[k])) found = k;
        if (found < 0)
            return kiln_cli_usage_error(cmd, "--mip-strategy needs auto, per-level, subgroup, pyramid, single-pass or blit%s%s%s",
                                        next ? " (not '" : "", next ? next : "", next ? "')" : ""), -1;
        mp->strategy = (kiln_mip_strategy)found;
        (*i)++;
    } else if (!strcmp(a, "--alpha-coverage") || !strcmp(a, "--keep-coverage")) {
        char *end = NULL;
        float v = next ? strtof(next, &end) : 0.0f;
        if (!next || !*next || *end || !(v > 0.0f && v < 1.0f))
            return kiln_cli_usage_error(cmd, "%s needs a reference alpha between 0 and 1 (exclusive)", a), -1;
        mp->alpha_coverage_ref = v;
        (*i)++;
    } else
        return 0;
    return 1;
}

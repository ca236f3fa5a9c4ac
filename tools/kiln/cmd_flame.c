/* cmd_flame.c - `kiln flame`: render flam3 genomes to PNG, or straight into a (compressed) texture. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void help(FILE *f)
{
    fprintf(f,
            "usage: kiln flame GENOME.flam3 [options] -o OUT.png|OUT.exr|OUT.ktx2|OUT.dds\n\n"
            "Renders fractal flames (flam3 3.1 genomes, as flam3-render does) into an image, or with -f into\n"
            "a texture. A file with several <flame> elements renders them all (OUT_0000.png, OUT_0001.png, ...)\n"
            "unless --index picks one.\n\n"
            "  -o, --output FILE     output: .png / .exr image, or .ktx2 / .dds texture (needs -f)\n"
            "  --size WxH            output size (default: the genome's; the framing is kept: the scale\n"
            "                        follows the width); W alone keeps the aspect ratio\n"
            "  --quality N           samples per output pixel (default: the genome's quality)\n"
            "  --supersample N       histogram supersampling 1..16 (default: the genome's)\n"
            "  --seed S              random seed (default 1); same seed = same image for any thread count\n"
            "  --index I             render only flame I (0-based)\n"
            "  -f, --format F        encode into a texture of format F (bc1, bc7, etc2-rgb, rgba8, ...;\n"
            "                        the sRGB variant unless --linear)\n"
            "  --linear              keep the linear (UNORM) variant of the format\n"
            "  --mips [N]            with -f: a mip chain (N levels, default the full chain)\n"
            "  --encode-quality Q    with -f: fast, normal, high (default) or max\n"
            "  --backend B           auto, cpu or vulkan (the GPU chaos game when built with it)\n"
            "  -j, --threads N       worker threads (0 = one per CPU)\n"
            "  --quiet               no summary line\n");
}

static int parse_size(const char *s, unsigned *w, unsigned *h)
{
    char *end;
    unsigned long a = strtoul(s, &end, 10);
    if (end == s || a == 0 || a > KILN_MAX_DIMENSION) return 1;
    if (*end == 0) {
        *w = (unsigned)a;
        *h = 0;
        return 0;
    }
    if (*end != 'x' && *end != 'X') return 1;
    const char *p = end + 1;
    unsigned long b = strtoul(p, &end, 10);
    if (end == p || *end || b == 0 || b > KILN_MAX_DIMENSION) return 1;
    *w = (unsigned)a;
    *h = (unsigned)b;
    return 0;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    if (a < b) return 0;
    for (size_t i = 0; i < b; i++) {
        char c = s[a - b + i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != suffix[i]) return 0;
    }
    return 1;
}

/* OUT.png + 3 -> OUT_0003.png */
static void numbered(char *dst, size_t cap, const char *path, uint32_t index)
{
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    if (!dot || (slash && dot < slash)) dot = path + strlen(path);
    snprintf(dst, cap, "%.*s_%04u%s", (int)(dot - path), path, index, dot);
}

static int parse_encode_quality(const char *s, kiln_quality *q)
{
    if (!strcmp(s, "fast")) *q = KILN_QUALITY_FAST;
    else if (!strcmp(s, "normal")) *q = KILN_QUALITY_NORMAL;
    else if (!strcmp(s, "high")) *q = KILN_QUALITY_HIGH;
    else if (!strcmp(s, "max")) *q = KILN_QUALITY_MAX;
    else return 1;
    return 0;
}

int kiln_cmd_flame(int argc, char **argv)
{
    const char *cmd = "flame";
    kiln_cli_common c;
    kiln_cli_common_init(&c);
    const char *in = NULL, *outp = NULL, *fmt_name = NULL;
    unsigned w = 0, h = 0, ss = 0, index = 0, mip_levels = 0;
    int have_index = 0, mips = 0, linear = 0;
    double quality = 0;
    unsigned long long seed = 1;
    kiln_quality eq = KILN_QUALITY_HIGH;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            help(stdout);
            return KILN_EXIT_OK;
        }
        int r = kiln_cli_common_option(&c, argc, argv, &i);
        if (r < 0) return KILN_EXIT_USAGE;
        if (r > 0) continue;
        if (!strcmp(a, "--linear")) {
            linear = 1;
            continue;
        }
        if (!strcmp(a, "--mips")) {
            mips = 1;
            if (i + 1 < argc && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9') {
                if (kiln_cli_parse_u32(argv[i + 1], &mip_levels) || mip_levels == 0)
                    return kiln_cli_usage_error(cmd, "--mips takes a level count, not '%s'", argv[i + 1]);
                i++;
            }
            continue;
        }
        int takes = !strcmp(a, "-o") || !strcmp(a, "--output") || !strcmp(a, "--size") || !strcmp(a, "--quality") ||
                    !strcmp(a, "--supersample") || !strcmp(a, "--seed") || !strcmp(a, "--index") ||
                    !strcmp(a, "-f") || !strcmp(a, "--format") || !strcmp(a, "--encode-quality");
        if (takes) {
            if (i + 1 >= argc) return kiln_cli_usage_error(cmd, "%s needs a value", a);
            const char *v = argv[++i];
            if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
                outp = v;
            } else if (!strcmp(a, "--size")) {
                if (parse_size(v, &w, &h)) return kiln_cli_usage_error(cmd, "--size takes WxH (1..%u), not '%s'", KILN_MAX_DIMENSION, v);
            } else if (!strcmp(a, "--quality")) {
                char *end;
                quality = strtod(v, &end);
                if (end == v || *end || !(quality > 0) || quality > 1e6)
                    return kiln_cli_usage_error(cmd, "--quality takes samples per pixel in (0, 1e6], not '%s'", v);
            } else if (!strcmp(a, "--supersample")) {
                if (kiln_cli_parse_u32(v, &ss) || ss < 1 || ss > 16)
                    return kiln_cli_usage_error(cmd, "--supersample takes 1..16, not '%s'", v);
            } else if (!strcmp(a, "--seed")) {
                char *end;
                seed = strtoull(v, &end, 0);
                if (end == v || *end) return kiln_cli_usage_error(cmd, "--seed takes an integer, not '%s'", v);
            } else if (!strcmp(a, "--index")) {
                if (kiln_cli_parse_u32(v, &index)) return kiln_cli_usage_error(cmd, "--index takes a number, not '%s'", v);
                have_index = 1;
            } else if (!strcmp(a, "-f") || !strcmp(a, "--format")) {
                fmt_name = v;
            } else if (parse_encode_quality(v, &eq)) {
                return kiln_cli_usage_error(cmd, "unknown encode quality '%s' (fast, normal, high or max)", v);
            }
            continue;
        }
        if (a[0] == '-' && a[1]) return kiln_cli_usage_error(cmd, "unknown option '%s' (see kiln flame --help)", a);
        if (in) return kiln_cli_usage_error(cmd, "more than one genome file ('%s' and '%s')", in, a);
        in = a;
    }
    if (!in) return kiln_cli_usage_error(cmd, "no genome file (usage: kiln flame GENOME.flam3 -o OUT.png)");
    if (!outp) return kiln_cli_usage_error(cmd, "no output: give -o OUT.png or -o OUT.ktx2 with -f FORMAT");
    int is_tex = ends_with(outp, ".ktx2") || ends_with(outp, ".ktx") || ends_with(outp, ".dds");
    if (is_tex && !fmt_name) return kiln_cli_usage_error(cmd, "%s is a texture: give -f FORMAT", outp);
    if (!is_tex && fmt_name) return kiln_cli_usage_error(cmd, "-f needs a .ktx2 or .dds output, not %s", outp);
    if (!is_tex && !ends_with(outp, ".png") && !ends_with(outp, ".exr"))
        return kiln_cli_usage_error(cmd, "output %s: use .png, .exr, .ktx2 or .dds", outp);
    if (mips && !fmt_name) return kiln_cli_usage_error(cmd, "--mips needs -f FORMAT and a texture output");

    kiln_format format = KILN_FORMAT_UNDEFINED;
    if (fmt_name) {
        format = kiln_format_from_name(fmt_name);
        if (format == KILN_FORMAT_UNDEFINED)
            return kiln_cli_usage_error(cmd, "unknown format '%s' ('kiln formats' lists the names)", fmt_name);
        const kiln_format_info *fi = kiln_format_get_info(format);
        if (!linear && !(fi->flags & (KILN_FF_SRGB | KILN_FF_SIGNED | KILN_FF_FLOAT))) {
            kiln_format v = kiln_format_from_cli(fi->cli_base, KILN_FF_SRGB);
            if (v != KILN_FORMAT_UNDEFINED) format = v;
        }
        if (linear && (fi->flags & KILN_FF_SRGB)) {
            kiln_format v = kiln_format_from_cli(fi->cli_base, 0);
            if (v != KILN_FORMAT_UNDEFINED) format = v;
        }
    }

    kiln_context *ctx = kiln_cli_context(&c, cmd);
    if (!ctx) return KILN_EXIT_FAILURE;
    kiln_flames *fl = NULL;
    kiln_status st = kiln_flames_load(ctx, in, &fl);
    if (st != KILN_OK) {
        int rc = kiln_cli_fail(cmd, ctx, st);
        kiln_context_free(ctx);
        return rc;
    }
    uint32_t n = kiln_flames_count(fl);
    if (have_index && index >= n) {
        kiln_flames_free(fl);
        kiln_context_free(ctx);
        return kiln_cli_usage_error(cmd, "--index %u: %s has %u flame%s", index, in, n, n == 1 ? "" : "s");
    }
    uint32_t first = have_index ? index : 0, last = have_index ? index + 1 : n;
    int rc = KILN_EXIT_OK;
    for (uint32_t k = first; k < last && rc == KILN_EXIT_OK; k++) {
        char path[4096];
        if (last - first > 1)
            numbered(path, sizeof path, outp, k);
        else
            snprintf(path, sizeof path, "%s", outp);
        kiln_flame_params fp;
        kiln_flame_params_init(&fp);
        fp.width = w;
        fp.height = h;
        fp.quality = quality;
        fp.supersample = ss;
        fp.seed = seed;
        kiln_image img;
        memset(&img, 0, sizeof img);
        double t0 = now_s();
        st = kiln_flame_render(ctx, fl, k, &fp, &img);
        double t1 = now_s();
        if (st == KILN_OK) {
            if (!is_tex) {
                st = kiln_image_save(ctx, &img, path, 0);
            } else {
                kiln_texture tex;
                memset(&tex, 0, sizeof tex);
                const kiln_format_info *fi = kiln_format_get_info(format);
                if (fi->flags & KILN_FF_COMPRESSED) {
                    kiln_encode_params ep;
                    kiln_encode_params_init(&ep, format, eq);
                    if (mips) {
                        kiln_mip_params mp;
                        kiln_mip_params_init(&mp);
                        mp.levels = mip_levels;
                        st = kiln_encode_mips(ctx, &img, &ep, &mp, &tex);
                    } else {
                        st = kiln_encode(ctx, &img, &ep, &tex);
                    }
                } else {
                    kiln_mip_params mp;
                    kiln_mip_params_init(&mp);
                    mp.levels = mips ? mip_levels : 1;
                    st = kiln_mip_texture(ctx, &img, &mp, format, &tex);
                }
                if (st == KILN_OK) {
                    kiln_save_params sp;
                    kiln_save_params_init(&sp);
                    st = kiln_texture_save(ctx, &tex, path, &sp);
                }
                kiln_texture_free(&tex);
            }
        }
        if (st != KILN_OK) {
            rc = kiln_cli_fail(cmd, ctx, st);
        } else {
            kiln_cli_progress_done();
            if (!c.quiet) {
                double secs = t1 - t0;
                printf("%s [%u]: %ux%u -> %s, %.3f s render, %u thread%s\n", in, k, img.width, img.height, path, secs,
                       kiln_context_threads(ctx), kiln_context_threads(ctx) == 1 ? "" : "s");
            }
        }
        kiln_image_free(&img);
    }
    kiln_flames_free(fl);
    kiln_context_free(ctx);
    return rc;
}

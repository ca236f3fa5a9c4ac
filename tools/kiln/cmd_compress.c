/* cmd_compress.c - `kiln compress IN -f FORMAT [options] -o OUT.ktx2|OUT.dds`: load an image, optionally
 * build its mip chain, encode every level (on the GPU when one is present and the format has a GPU
 * encoder, else on all CPU cores), write a KTX2 or DDS file atomically. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static void help(void)
{
    printf("usage: kiln compress IN -f FORMAT [options] -o OUT.ktx2|OUT.dds\n\n"
           "Encodes an image (PNG, JPEG, TGA, BMP, HDR, EXR) into a texture: one level, or with --mips\n"
           "the whole chain. The output is deterministic: the same bytes for any thread count.\n\n"
           "  -f, --format F        bc1, bc1a, bc2, bc3, bc4, bc5, etc1, etc2-rgb, etc2-rgb-a1, etc2-rgba,\n"
           "                        eac-r11, eac-rg11, r8, rg8, rgba8, rgba16f, rgba32f; or a full name\n"
           "                        (bc1-srgb, bc4-snorm), a Vulkan or DXGI name, or DXT1/DXT5/ATI2...\n"
           "                        ('kiln formats' lists them all)\n"
           "  -q, --quality Q       fast, normal, high (default) or max\n"
           "  --srgb                tag the texture sRGB (the _SRGB variant of the format)\n"
           "  --linear              tag it linear UNORM (the default, as texconv and ktx create do:\n"
           "                        kiln never guesses the transfer function from the input file)\n"
           "  --snorm               the signed variant (bc4, bc5, eac-r11, eac-rg11): [0,1] maps to [-1,1]\n"
           "  --perceptual          weight colour errors by luminance (0.299 R, 0.587 G, 0.114 B)\n"
           "  --dither              error diffusion inside each block against banding\n"
           "  --bc1-black           bc1 (RGB), -q normal and up: dark texels may use the three-colour mode's\n"
           "                        black, as rgbcx does (higher PSNR on dark images). Only where alpha is\n"
           "                        ignored: Vulkan's BC1_RGB formats return 1, DDS/DXGI BC1 readers 0\n"
           "  --alpha-threshold T   bc1a / etc2-rgb-a1: alpha below T (0..255, default 128) is transparent\n"
           "  --alpha-cutout        ignore the colour of texels whose alpha is 0\n"
           "  --mips [N]            make a mip chain and encode every level: N levels including the base\n"
           "                        (default: the full chain down to 1x1). Filtering is in linear light\n"
           "                        for --srgb formats, on the stored values otherwise; the exact box\n"
           "                        filter by default (any size, odd ones included). With --mips:\n"
           "    --filter F          box, kaiser, lanczos3, mitchell     --wrap | --clamp (edges)\n"
           "    --alpha M           weighted (default), separate, premultiplied\n"
           "    --alpha-coverage R  keep the alpha-test coverage at reference R on every level\n"
           "    --normal            normal map: renormalised on every level\n"
           "    --mip-strategy S    on the GPU: auto (single-pass), per-level, subgroup, pyramid, blit\n"
           "  --zstd N              KTX2: zstd supercompression level 1..22 (default: none)\n"
           "  --dx10, --dx9         DDS: force the DX10 or the legacy header (default: legacy where possible)\n"
           "  -o, --output F        output file; .ktx2 (or .ktx) writes KTX2, .dds writes DDS\n"
           "  -j, --threads N       worker threads (0 = all cores, the default)\n"
           "  --backend B           auto (default: a real GPU when present and the format has a GPU encoder,\n"
           "                        else the CPU), cpu, or vulkan (fails if no device or no GPU encoder)\n"
           "  --device N            the Vulkan device to use ('kiln devices' lists them)\n"
           "  --gpu-strategy S      kiln (default) or seed (the betsy / cluster-fit paper designs, for comparison)\n"
           "  --progress auto|always|never   progress bar on stderr (auto: when it is a terminal)\n"
           "  --quiet               no summary line\n"
           "  -h, --help            this text\n\n"
           "exit codes: 0 ok, 1 failure, 2 bad command line, 3 cannot read or write a file,\n"
           "            4 unsupported or corrupt input, 6 cancelled\n");
}

static int parse_quality(const char *s, kiln_quality *q)
{
    if (!strcasecmp(s, "fast") || !strcmp(s, "0")) *q = KILN_QUALITY_FAST;
    else if (!strcasecmp(s, "normal") || !strcmp(s, "1")) *q = KILN_QUALITY_NORMAL;
    else if (!strcasecmp(s, "high") || !strcmp(s, "2")) *q = KILN_QUALITY_HIGH;
    else if (!strcasecmp(s, "max") || !strcmp(s, "3")) *q = KILN_QUALITY_MAX;
    else return -1;
    return 0;
}

static const char *quality_name(kiln_quality q)
{
    static const char *names[] = {"fast", "normal", "high", "max"};
    return (unsigned)q < 4 ? names[q] : "?";
}

static const char *extension(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash)) return "";
    return dot;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int kiln_cmd_compress(int argc, char **argv)
{
    static const char *cmd = "compress";
    kiln_cli_common c;
    kiln_cli_common_init(&c);
    const char *in = NULL, *outp = NULL, *fmt_name = NULL;
    kiln_quality quality = KILN_QUALITY_HIGH;
    int srgb = 0, linear = 0, snorm = 0, perceptual = 0, dither = 0, cutout = 0;
    unsigned threshold = 128, zstd = 0;
    kiln_dds_header dds = KILN_DDS_HEADER_AUTO;
    int mips = 0, gpu_strategy = 0, bc1_black = 0;
    unsigned mip_levels = 0;
    kiln_mip_params mp;
    kiln_mip_params_init(&mp);

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help();
            return KILN_EXIT_OK;
        }
        int r = kiln_cli_common_option(&c, argc, argv, &i);
        if (r < 0) return KILN_EXIT_USAGE;
        if (r > 0) continue;
        r = kiln_cli_mip_option(cmd, &mp, argc, argv, &i);
        if (r < 0) return KILN_EXIT_USAGE;
        if (r > 0) {
            mips |= 2; /* a mip option was given: checked against --mips below */
            continue;
        }
        if (!strcmp(a, "--mips") || !strcmp(a, "--mipmaps")) {
            mips |= 1;
            /* the count is optional: a following plain number is it */
            if (i + 1 < argc && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9') {
                if (kiln_cli_parse_u32(argv[i + 1], &mip_levels))
                    return kiln_cli_usage_error(cmd, "--mips takes a level count, not '%s'", argv[i + 1]);
                i++;
            }
            continue;
        }
        if (!strcmp(a, "--gpu-strategy")) {
            if (i + 1 >= argc) return kiln_cli_usage_error(cmd, "--gpu-strategy needs kiln or seed");
            const char *v = argv[++i];
            if (!strcmp(v, "kiln")) gpu_strategy = 0;
            else if (!strcmp(v, "seed")) gpu_strategy = 1;
            else return kiln_cli_usage_error(cmd, "unknown GPU strategy '%s' (kiln or seed)", v);
            continue;
        }
        const char *val = NULL;
        int takes = !strcmp(a, "-f") || !strcmp(a, "--format") || !strcmp(a, "-q") || !strcmp(a, "--quality") ||
                    !strcmp(a, "-o") || !strcmp(a, "--output") || !strcmp(a, "--alpha-threshold") ||
                    !strcmp(a, "--zstd");
        if (takes) {
            if (i + 1 >= argc) return kiln_cli_usage_error(cmd, "%s needs a value (see kiln compress --help)", a);
            val = argv[++i];
        }
        if (!strcmp(a, "-f") || !strcmp(a, "--format")) fmt_name = val;
        else if (!strcmp(a, "-o") || !strcmp(a, "--output")) outp = val;
        else if (!strcmp(a, "-q") || !strcmp(a, "--quality")) {
            if (parse_quality(val, &quality))
                return kiln_cli_usage_error(cmd, "unknown quality '%s' (fast, normal, high or max)", val);
        } else if (!strcmp(a, "--alpha-threshold")) {
            if (kiln_cli_parse_u32(val, &threshold) || threshold > 255)
                return kiln_cli_usage_error(cmd, "--alpha-threshold needs a value from 0 to 255, not '%s'", val);
        } else if (!strcmp(a, "--zstd")) {
            if (kiln_cli_parse_u32(val, &zstd) || zstd < 1 || zstd > 22)
                return kiln_cli_usage_error(cmd, "--zstd needs a level from 1 to 22, not '%s'", val);
        } else if (!strcmp(a, "--srgb")) srgb = 1;
        else if (!strcmp(a, "--linear")) linear = 1;
        else if (!strcmp(a, "--snorm")) snorm = 1;
        else if (!strcmp(a, "--perceptual")) perceptual = 1;
        else if (!strcmp(a, "--dither")) dither = 1;
        else if (!strcmp(a, "--bc1-black")) bc1_black = 1;
        else if (!strcmp(a, "--alpha-cutout")) cutout = 1;
        else if (!strcmp(a, "--dx10")) dds = KILN_DDS_HEADER_DX10;
        else if (!strcmp(a, "--dx9")) dds = KILN_DDS_HEADER_LEGACY;
        else if (a[0] == '-' && a[1]) return kiln_cli_usage_error(cmd, "unknown option '%s' (see kiln compress --help)", a);
        else if (!in) in = a;
        else return kiln_cli_usage_error(cmd, "more than one input ('%s' and '%s')", in, a);
    }
    if (!in) return kiln_cli_usage_error(cmd, "no input image (see kiln compress --help)");
    if (!fmt_name) return kiln_cli_usage_error(cmd, "no format: give -f FORMAT (e.g. -f bc1; 'kiln formats' lists them)");
    if (!outp) return kiln_cli_usage_error(cmd, "no output: give -o OUT.ktx2 or -o OUT.dds");
    if (srgb && linear) return kiln_cli_usage_error(cmd, "--srgb and --linear contradict each other");
    if (srgb && snorm) return kiln_cli_usage_error(cmd, "--srgb and --snorm contradict each other");

    /* format: any name, then the variant flags */
    kiln_format format = kiln_format_from_name(fmt_name);
    if (format == KILN_FORMAT_UNDEFINED)
        return kiln_cli_usage_error(cmd, "unknown format '%s' ('kiln formats' lists the names)", fmt_name);
    const kiln_format_info *fi = kiln_format_get_info(format);
    if (srgb || linear || snorm) {
        uint32_t flags = fi->flags & (KILN_FF_SRGB | KILN_FF_SIGNED);
        if (srgb) flags = (flags & ~KILN_FF_SIGNED) | KILN_FF_SRGB;
        if (linear) flags &= ~KILN_FF_SRGB;
        if (snorm) flags = (flags & ~KILN_FF_SRGB) | KILN_FF_SIGNED;
        kiln_format v = kiln_format_from_cli(fi->cli_base, flags);
        if (v == KILN_FORMAT_UNDEFINED)
            return kiln_cli_usage_error(cmd, "%s has no %s variant", fi->cli_base,
                                        srgb ? "sRGB" : snorm ? "signed (SNORM)" : "linear");
        format = v;
        fi = kiln_format_get_info(format);
    }

    const char *ext = extension(outp);
    int is_dds = !strcasecmp(ext, ".dds");
    if (!is_dds && strcasecmp(ext, ".ktx2") && strcasecmp(ext, ".ktx"))
        return kiln_cli_usage_error(cmd, "%s: the output must end in .ktx2, .ktx or .dds", outp);
    if (is_dds && fi->dxgi_format == 0)
        return kiln_cli_usage_error(cmd, "%s: DDS cannot hold %s (DXGI has no such format); write a .ktx2 file",
                                    outp, fi->name);
    if (is_dds && zstd) return kiln_cli_usage_error(cmd, "--zstd applies to KTX2 output only");
    if (!is_dds && dds != KILN_DDS_HEADER_AUTO) return kiln_cli_usage_error(cmd, "--dx10/--dx9 apply to DDS output only");
    if (bc1_black && fi->format != KILN_FORMAT_BC1_RGB_UNORM && fi->format != KILN_FORMAT_BC1_RGB_SRGB)
        return kiln_cli_usage_error(cmd, "--bc1-black applies to bc1 (RGB) only, not %s", fi->name);
    if (mips == 2) return kiln_cli_usage_error(cmd, "--filter, --wrap, --alpha, --alpha-coverage, --normal and --mip-strategy need --mips");
    if (mips && mp.normal_map && srgb) return kiln_cli_usage_error(cmd, "--normal and --srgb contradict each other");
    mp.levels = mip_levels;

    kiln_context *ctx = kiln_cli_context(&c, cmd);
    if (!ctx) return KILN_EXIT_FAILURE;
    kiln_image img;
    memset(&img, 0, sizeof img);
    kiln_texture tex;
    memset(&tex, 0, sizeof tex);
    double t0 = now_s(), t1 = t0;
    kiln_status st = kiln_image_load(ctx, in, &img);
    if (st == KILN_OK) {
        kiln_encode_params ep;
        kiln_encode_params_init(&ep, format, quality);
        ep.perceptual = perceptual;
        ep.dither = dither;
        ep.alpha_threshold = (uint8_t)threshold;
        ep.alpha_cutout = cutout;
        ep.gpu_strategy = gpu_strategy;
        ep.bc1_black = bc1_black;
        t0 = now_s();
        if (mips) st = kiln_encode_mips(ctx, &img, &ep, &mp, &tex);
        else st = kiln_encode(ctx, &img, &ep, &tex);
        t1 = now_s();
    }
    if (st == KILN_OK) {
        kiln_save_params sp;
        kiln_save_params_init(&sp);
        sp.container = is_dds ? KILN_CONTAINER_DDS : KILN_CONTAINER_KTX2;
        sp.zstd_level = (int)zstd;
        sp.dds_header = dds;
        st = kiln_texture_save(ctx, &tex, outp, &sp);
    }
    int rc;
    if (st != KILN_OK) {
        rc = kiln_cli_fail(cmd, ctx, st);
    } else {
        kiln_cli_progress_done();
        if (!c.quiet) {
            double secs = t1 - t0;
            char where[300];
            const kiln_gpu_info *gi = kiln_context_gpu(ctx);
            if (kiln_last_gpu_ms(ctx) >= 0.0 && gi)
                snprintf(where, sizeof where, "GPU %s, kernels %.3f ms", gi->name, kiln_last_gpu_ms(ctx));
            else
                snprintf(where, sizeof where, "CPU, %u thread%s", kiln_context_threads(ctx),
                         kiln_context_threads(ctx) == 1 ? "" : "s");
            double pix = 0.0;
            for (uint32_t l = 0; l < tex.levels; l++)
                pix += (double)kiln_level_dim(img.width, l) * kiln_level_dim(img.height, l);
            printf("%s: %ux%u -> %s (%s, %s, %u level%s), %.3f s, %.2f Mpix/s, %s\n", in, img.width, img.height,
                   outp, fi->name, quality_name(quality), tex.levels, tex.levels == 1 ? "" : "s", secs,
                   secs > 0 ? pix / secs / 1e6 : 0.0, where);
        }
        rc = KILN_EXIT_OK;
    }
    kiln_texture_free(&tex);
    kiln_image_free(&img);
    kiln_context_free(ctx);
    return rc;
}

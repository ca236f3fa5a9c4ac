/* cmd_mip.c - `kiln mip IN... -o OUT.ktx2|OUT.dds [options]`: an uncompressed texture with all mip levels,
 * made by kiln_mip_texture_layers: the CPU reference, or the GPU strategies (--backend, --mip-strategy). */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
    printf("usage: kiln mip IN [IN...] -o OUT.ktx2|OUT.dds [options]\n\n"
           "Builds the whole mipmap chain of an image (or of the layers / faces of an array or cube map)\n"
           "into an uncompressed KTX2 or DDS texture. Filtering runs in linear light on fp32 values; the\n"
           "default box filter is exact for every size (2x2 on even sizes, the 3-tap NP2 kernel on odd).\n\n"
           "  -o, --output F          output texture (.ktx2, .ktx or .dds)\n"
           "  -f, --format F          rgba8 (default for 8-bit inputs), rgba16f (default for 16-bit and\n"
           "                          HDR inputs), rgba32f, r8, rg8\n"
           "  -m, --levels N          levels including the base (0 = full chain down to 1x1, default)\n"
           "  --filter F              box (default), kaiser (NVTT: width 3, alpha 4), lanczos3, mitchell\n"
           "  --clamp | --wrap        edge mode of the wide filters (default clamp; box never reads outside)\n"
           "  --srgb | --linear       colour space (default: sRGB for 8-bit colour images, linear for 16-bit,\n"
           "                          HDR, --normal, r8 and rg8)\n"
           "  --alpha M               weighted (default: colour weighted by alpha, no bleeding from\n"
           "                          transparent texels), separate (alpha is data), premultiplied\n"
           "  --alpha-coverage REF    keep the fraction of texels with alpha > REF (0 < REF < 1) equal to\n"
           "                          the base level's on every level (alpha-tested foliage)\n"
           "  --normal                tangent-space normal map: linear, renormalised on every level\n"
           "  --array                 the inputs are the layers of a texture array\n"
           "  --cube                  the inputs are cube faces +X -X +Y -Y +Z -Z (6 per cube; with --array\n"
           "                          a cube-map array)\n"
           "  --zstd N                KTX2 zstd supercompression level 1..22 (default none)\n"
           "  --backend auto|cpu|vulkan  where the chain is made (default auto: the GPU when a real one is\n"
           "                          present; vulkan: the GPU, lavapipe included); --device N picks one\n"
           "  --mip-strategy S        GPU strategy: auto (pyramid's fast plan), per-level, subgroup, pyramid,\n"
           "                          single-pass (every level in one dispatch), blit (vkCmdBlitImage:\n"
           "                          inexact on odd sizes, no alpha weighting, keeps the input\n"
           "                          format). The GPU covers the box filter,\n"
           "                          and with auto / per-level the other filters, --normal and\n"
           "                          --alpha-coverage (not r8/rg8, 16-bit inputs); under auto anything\n"
           "                          else runs on the CPU, an explicit strategy then fails\n"
           "  -j N, --quiet, --verbose, --progress auto|always|never\n");
}

int kiln_cmd_mip(int argc, char **argv)
{
    kiln_cli_common c;
    kiln_cli_common_init(&c);
    kiln_mip_params mp;
    kiln_mip_params_init(&mp);
    const char *outp = NULL, *fmt_name = NULL;
    const char **inputs = calloc((size_t)argc, sizeof *inputs);
    if (!inputs) return KILN_EXIT_FAILURE;
    unsigned n_in = 0, zstd = 0;
    int cube = 0, array = 0, rc = KILN_EXIT_OK;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help();
            free(inputs);
            return KILN_EXIT_OK;
        }
        int r = kiln_cli_common_option(&c, argc, argv, &i);
        if (r < 0) {
            rc = KILN_EXIT_USAGE;
            goto out;
        }
        if (r > 0) continue;
        r = kiln_cli_mip_option("mip", &mp, argc, argv, &i);
        if (r < 0) {
            rc = KILN_EXIT_USAGE;
            goto out;
        }
        if (r > 0) continue;
        if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (!next) {
                rc = kiln_cli_usage_error("mip", "%s needs a file name", a);
                goto out;
            }
            outp = argv[++i];
        } else if (!strcmp(a, "-f") || !strcmp(a, "--format")) {
            if (!next) {
                rc = kiln_cli_usage_error("mip", "%s needs a format: rgba8, rgba16f, rgba32f, r8 or rg8", a);
                goto out;
            }
            fmt_name = argv[++i];
        } else if (!strcmp(a, "-m") || !strcmp(a, "--levels")) {
            unsigned v;
            if (!next || kiln_cli_parse_u32(next, &v)) {
                rc = kiln_cli_usage_error("mip", "%s needs a level count (0 = full chain)", a);
                goto out;
            }
            mp.levels = v;
            i++;
        } else if (!strcmp(a, "--srgb")) {
            mp.color = KILN_MIP_COLOR_SRGB;
        } else if (!strcmp(a, "--linear")) {
            mp.color = KILN_MIP_COLOR_LINEAR;
        } else if (!strcmp(a, "--array")) {
            array = 1;
        } else if (!strcmp(a, "--cube")) {
            cube = 1;
        } else if (!strcmp(a, "--zstd")) {
            if (!next || kiln_cli_parse_u32(next, &zstd) || zstd < 1 || zstd > 22) {
                rc = kiln_cli_usage_error("mip", "--zstd needs a level from 1 to 22");
                goto out;
            }
            i++;
        } else if (a[0] == '-' && a[1]) {
            rc = kiln_cli_usage_error("mip", "unknown option '%s' (see kiln mip --help)", a);
            goto out;
        } else {
            inputs[n_in++] = a;
        }
    }
    if (n_in == 0) {
        rc = kiln_cli_usage_error("mip", "no input image (see kiln mip --help)");
        goto out;
    }
    if (!outp) {
        rc = kiln_cli_usage_error("mip", "no output: give -o OUT.ktx2 or -o OUT.dds");
        goto out;
    }
    if (mp.normal_map && mp.color == KILN_MIP_COLOR_SRGB) {
        rc = kiln_cli_usage_error("mip", "--normal and --srgb exclude each other (normal maps are linear data)");
        goto out;
    }
    uint32_t faces = cube ? 6 : 1;
    if (cube && n_in % 6) {
        rc = kiln_cli_usage_error("mip", "--cube needs 6 faces per cube map, got %u input(s)", n_in);
        goto out;
    }
    if (!cube && !array && n_in > 1) {
        rc = kiln_cli_usage_error("mip", "%u inputs: add --array (layers) or --cube (faces)", n_in);
        goto out;
    }
    if (cube && !array && n_in != 6) {
        rc = kiln_cli_usage_error("mip", "--cube takes exactly 6 inputs; add --array for a cube-map array");
        goto out;
    }
    kiln_format fmt = KILN_FORMAT_UNDEFINED;
    if (fmt_name) {
        if (!strcmp(fmt_name, "rgba8") || !strcmp(fmt_name, "rgba8-srgb")) fmt = KILN_FORMAT_RGBA8_UNORM;
        else if (!strcmp(fmt_name, "rgba16f")) fmt = KILN_FORMAT_RGBA16F;
        else if (!strcmp(fmt_name, "rgba32f")) fmt = KILN_FORMAT_RGBA32F;
        else if (!strcmp(fmt_name, "r8")) fmt = KILN_FORMAT_R8_UNORM;
        else if (!strcmp(fmt_name, "rg8")) fmt = KILN_FORMAT_RG8_UNORM;
        else {
            rc = kiln_cli_usage_error("mip", "kiln mip writes rgba8, rgba16f, rgba32f, r8 or rg8, not '%s' "
                                              "(compress mip levels with kiln compress)", fmt_name);
            goto out;
        }
    }

    kiln_context *ctx = kiln_cli_context(&c, "mip");
    if (!ctx) {
        rc = KILN_EXIT_FAILURE;
        goto out;
    }
    kiln_image *imgs = calloc(n_in, sizeof *imgs);
    kiln_texture tex;
    memset(&tex, 0, sizeof tex);
    kiln_status st = imgs ? KILN_OK : KILN_ERR_OUT_OF_MEMORY;
    for (unsigned k = 0; k < n_in && st == KILN_OK; k++) st = kiln_image_load(ctx, inputs[k], &imgs[k]);
    if (st == KILN_OK) {
        if (fmt == KILN_FORMAT_UNDEFINED) fmt = imgs[0].type == KILN_PIXEL_U8 ? KILN_FORMAT_RGBA8_UNORM : KILN_FORMAT_RGBA16F;
        st = kiln_mip_texture_layers(ctx, imgs, n_in / faces, faces, array, &mp, fmt, &tex);
    }
    if (st == KILN_OK) {
        kiln_save_params sp;
        kiln_save_params_init(&sp);
        sp.zstd_level = (int)zstd;
        st = kiln_texture_save(ctx, &tex, outp, &sp);
    }
    if (st == KILN_OK) {
        kiln_cli_progress_done();
        if (!c.quiet) {
            const kiln_format_info *fi = kiln_format_get_info(tex.format);
            static const char *const filters[] = {"box", "kaiser", "lanczos3", "mitchell"};
            printf("%s: %ux%u, %u level%s, %s (%s filter%s), %u layer%s x %u face%s\n", outp, tex.width, tex.height,
                   tex.levels, tex.levels == 1 ? "" : "s", fi ? fi->vk_name : "?", filters[mp.filter],
                   mp.filter != KILN_MIP_FILTER_BOX ? (mp.edge == KILN_MIP_EDGE_WRAP ? ", wrap" : ", clamp") : "",
                   tex.layers, tex.layers == 1 ? "" : "s", tex.faces, tex.faces == 1 ? "" : "s");
        }
        rc = KILN_EXIT_OK;
    } else {
        rc = kiln_cli_fail("mip", ctx, st);
    }
    kiln_cli_progress_done();
    kiln_texture_free(&tex);
    if (imgs)
        for (unsigned k = 0; k < n_in; k++) kiln_image_free(&imgs[k]);
    free(imgs);
    kiln_context_free(ctx);
out:
    free(inputs);
    return rc;
}

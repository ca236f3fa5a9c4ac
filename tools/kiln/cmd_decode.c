/* cmd_decode.c - `kiln decode IN [--level N] [--layer N] [--face N] -o OUT.png|OUT.exr` */
#include "cli.h"

#include <string.h>

static void help(void)
{
    printf("usage: kiln decode IN.ktx2|IN.ktx|IN.dds [options] -o OUT.png|OUT.exr\n\n"
           "Decodes one image of a texture. 8-bit formats give an 8-bit PNG; unsigned EAC a 16-bit PNG;\n"
           "BC6H, SNORM and float formats need .exr (or are clamped to [0,1] in a 16-bit PNG).\n\n"
           "  --level N       mip level (default 0)\n"
           "  --layer N       array layer (default 0)\n"
           "  --face N        cube face 0..5 (default 0)\n"
           "  -o, --output F  output image\n"
           "  --backend auto|cpu|vulkan, --device N, -j N, --quiet, --progress auto|always|never\n");
}

int kiln_cmd_decode(int argc, char **argv)
{
    kiln_cli_common c;
    kiln_cli_common_init(&c);
    const char *in = NULL, *outp = NULL;
    unsigned level = 0, layer = 0, face = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help();
            return KILN_EXIT_OK;
        }
        int r = kiln_cli_common_option(&c, argc, argv, &i);
        if (r < 0) return KILN_EXIT_USAGE;
        if (r > 0) continue;
        unsigned *target = !strcmp(a, "--level") ? &level : !strcmp(a, "--layer") ? &layer : !strcmp(a, "--face") ? &face : NULL;
        if (target) {
            if (i + 1 >= argc || kiln_cli_parse_u32(argv[i + 1], target))
                return kiln_cli_usage_error("decode", "%s needs a non-negative number", a);
            i++;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (i + 1 >= argc) return kiln_cli_usage_error("decode", "%s needs a file name", a);
            outp = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            return kiln_cli_usage_error("decode", "unknown option '%s' (see kiln decode --help)", a);
        } else if (!in) {
            in = a;
        } else {
            return kiln_cli_usage_error("decode", "more than one input ('%s' and '%s')", in, a);
        }
    }
    if (!in) return kiln_cli_usage_error("decode", "no input texture (see kiln decode --help)");
    if (!outp) return kiln_cli_usage_error("decode", "no output: give -o OUT.png or -o OUT.exr");

    kiln_context *ctx = kiln_cli_context(&c, "decode");
    if (!ctx) return KILN_EXIT_FAILURE;
    kiln_texture tex;
    memset(&tex, 0, sizeof tex);
    kiln_image img;
    memset(&img, 0, sizeof img);
    kiln_status st = kiln_texture_load(ctx, in, &tex);
    if (st == KILN_OK) st = kiln_decode(ctx, &tex, level, layer, face, &img);
    if (st == KILN_OK) st = kiln_image_save(ctx, &img, outp, 0);
    int rc = st == KILN_OK ? KILN_EXIT_OK : kiln_cli_fail("decode", ctx, st);
    kiln_cli_progress_done();
    kiln_image_free(&img);
    kiln_texture_free(&tex);
    kiln_context_free(ctx);
    return rc;
}

/* cmd_compare.c - `kiln compare A B [--json] [--channels N] [--normal]` */
#include "cli.h"

#include <math.h>
#include <string.h>

static void help(void)
{
    printf("usage: kiln compare A B [options]\n\n"
           "Measures how far B is from A. A and B are images (PNG, JPEG, TGA, BMP, Radiance HDR, OpenEXR) or\n"
           "textures (KTX2, KTX, DDS: level 0, layer 0, face 0 is decoded). Both must have the same size.\n\n"
           "  --json          print one JSON object instead of one line per metric; infinite or\n"
           "                  undefined values are null (PSNR of identical channels: null, identical: true)\n"
           "  --channels N    compare N channels: 1 = R, 2 = RG, 3 = RGB, 4 = RGBA (default: the larger\n"
           "                  channel count of the two inputs)\n"
           "  --normal        also print the mean angle between the normals xyz = 2 * rgb - 1 (degrees;\n"
           "                  z is rebuilt from x and y for two-channel inputs such as BC5)\n"
           "  --backend auto|cpu|vulkan, --device N, -j N, --quiet, --progress auto|always|never\n\n"
           "Metrics: PSNR over RGB and per channel (peak 255 for two 8-bit inputs, 65535 for two 16-bit\n"
           "inputs, 1.0 otherwise), MSE over RGB in the same units, SSIM of the luma (8x8 windows), the\n"
           "largest channel difference, and for HDR inputs RMSE and RMSLE over RGB.\n"
           "Exit status: 0 compared, 2 bad command line, 3 a file cannot be read, 4 bad input (also when\n"
           "the sizes differ).\n");
}

static int is_texture(const char *path)
{
    unsigned char m[12];
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = fread(m, 1, sizeof m, f);
    fclose(f);
    static const unsigned char ktx2[12] = {0xAB, 'K', 'T', 'X', ' ', '2', '0', 0xBB, '\r', '\n', 0x1A, '\n'};
    static const unsigned char ktx1[12] = {0xAB, 'K', 'T', 'X', ' ', '1', '1', 0xBB, '\r', '\n', 0x1A, '\n'};
    if (n == 12 && (!memcmp(m, ktx2, 12) || !memcmp(m, ktx1, 12))) return 1;
    return n >= 4 && !memcmp(m, "DDS ", 4);
}

static kiln_status load_input(kiln_context *ctx, const char *path, kiln_image *img)
{
    if (!is_texture(path)) return kiln_image_load(ctx, path, img);
    kiln_texture tex;
    memset(&tex, 0, sizeof tex);
    kiln_status st = kiln_texture_load(ctx, path, &tex);
    if (st == KILN_OK) st = kiln_decode(ctx, &tex, 0, 0, 0, img);
    kiln_texture_free(&tex);
    return st;
}

static const char *type_name(kiln_pixel_type t)
{
    return t == KILN_PIXEL_U8 ? "8-bit" : t == KILN_PIXEL_U16 ? "16-bit" : "float";
}

static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

static void json_number(double v)
{
    if (isfinite(v)) printf("%.10g", v);
    else printf("null");
}

static void human_db(const char *label, double v)
{
    if (isnan(v)) printf("%-16s -\n", label);
    else if (isinf(v)) printf("%-16s inf (identical)\n", label);
    else printf("%-16s %.4f dB\n", label, v);
}

int kiln_cmd_compare(int argc, char **argv)
{
    kiln_cli_common c;
    kiln_cli_common_init(&c);
    const char *in[2] = {NULL, NULL};
    int json = 0, normal = 0;
    unsigned channels = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help();
            return KILN_EXIT_OK;
        }
        int r = kiln_cli_common_option(&c, argc, argv, &i);
        if (r < 0) return KILN_EXIT_USAGE;
        if (r > 0) continue;
        if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--normal")) {
            normal = 1;
        } else if (!strcmp(a, "--channels") || !strncmp(a, "--channels=", 11)) {
            const char *v = a[10] == '=' ? a + 11 : i + 1 < argc ? argv[++i] : NULL;
            if (!v || kiln_cli_parse_u32(v, &channels) || channels < 1 || channels > 4)
                return kiln_cli_usage_error("compare", "--channels needs 1, 2, 3 or 4");
        } else if (a[0] == '-' && a[1]) {
            return kiln_cli_usage_error("compare", "unknown option '%s' (see kiln compare --help)", a);
        } else if (!in[0]) {
            in[0] = a;
        } else if (!in[1]) {
            in[1] = a;
        } else {
            return kiln_cli_usage_error("compare", "more than two inputs ('%s')", a);
        }
    }
    if (!in[1]) return kiln_cli_usage_error("compare", "needs two inputs A and B (see kiln compare --help)");

    kiln_context *ctx = kiln_cli_context(&c, "compare");
    if (!ctx) return KILN_EXIT_FAILURE;
    kiln_image img[2];
    memset(img, 0, sizeof img);
    kiln_metrics m;
    memset(&m, 0, sizeof m);
    int rc = KILN_EXIT_OK;
    kiln_status st = KILN_OK;
    for (int k = 0; k < 2 && st == KILN_OK; k++) st = load_input(ctx, in[k], &img[k]);
    if (st != KILN_OK) {
        rc = kiln_cli_fail("compare", ctx, st);
        goto done;
    }
    if (img[0].width != img[1].width || img[0].height != img[1].height) {
        kiln_cli_progress_done();
        fprintf(stderr, "kiln compare: sizes differ: %s is %ux%u, %s is %ux%u\n", in[0], img[0].width, img[0].height,
                in[1], img[1].width, img[1].height);
        rc = KILN_EXIT_BAD_INPUT;
        goto done;
    }
    if (channels) img[0].channels = img[1].channels = channels;
    st = kiln_compare(ctx, &img[0], &img[1], &m);
    kiln_cli_progress_done();
    if (st != KILN_OK) {
        rc = kiln_cli_fail("compare", ctx, st);
        goto done;
    }
    unsigned nch = img[0].channels > img[1].channels ? img[0].channels : img[1].channels;
    if (nch < 1) nch = 1;
    if (nch > 4) nch = 4;
    double peak = m.hdr || img[0].type != img[1].type || img[0].type == KILN_PIXEL_F32 ? 1.0
                  : img[0].type == KILN_PIXEL_U8                                     ? 255.0
                                                                                     : 65535.0;
    if (json) {
        printf("{\"a\": ");
        json_string(in[0]);
        printf(", \"b\": ");
        json_string(in[1]);
        printf(", \"width\": %u, \"height\": %u, \"channels\": %u, \"hdr\": %s, \"identical\": %s, \"peak\": ",
               img[0].width, img[0].height, nch, m.hdr ? "true" : "false", m.max_error == 0.0 ? "true" : "false");
        json_number(peak);
        printf(", \"psnr_rgb\": ");
        json_number(m.psnr_rgb);
        printf(", \"psnr\": [");
        for (int k = 0; k < 4; k++) {
            if (k) printf(", ");
            json_number(m.psnr[k]);
        }
        printf("], \"psnr_alpha\": ");
        json_number(m.psnr_alpha);
        printf(", \"mse_rgb\": ");
        json_number(m.mse_rgb);
        printf(", \"ssim\": ");
        json_number(m.ssim);
        printf(", \"max_error\": ");
        json_number(m.max_error);
        printf(", \"normal_angle_mean\": ");
        json_number(m.normal_angle_mean);
        printf(", \"rmse\": ");
        json_number(m.rmse);
        printf(", \"rmsle\": ");
        json_number(m.rmsle);
        printf("}\n");
    } else {
        static const char *const cn[5] = {"", "R", "RG", "RGB", "RGBA"};
        if (!c.quiet)
            for (int k = 0; k < 2; k++)
                printf("%-16s %s: %ux%u, %u channels, %s%s%s\n", k ? "B" : "A", in[k], img[k].width, img[k].height,
                       img[k].channels, type_name(img[k].type), img[k].srgb ? ", sRGB" : "", img[k].hdr ? ", HDR" : "");
        printf("%-16s %u (%s)\n", "channels", nch, cn[nch]);
        human_db(nch >= 3 ? "PSNR RGB" : nch == 2 ? "PSNR RG" : "PSNR R", m.psnr_rgb);
        static const char *const pn[4] = {"PSNR R", "PSNR G", "PSNR B", "PSNR A"};
        for (unsigned k = 0; k < nch && nch > 1; k++) human_db(pn[k], m.psnr[k]);
        printf("%-16s %.6g (peak %g)\n", "MSE RGB", m.mse_rgb, peak);
        printf("%-16s %.6f\n", "SSIM", m.ssim);
        printf("%-16s %.6g (of %g)\n", "max error", m.max_error, peak);
        if (normal) {
            if (isnan(m.normal_angle_mean)) printf("%-16s - (needs 2 or more channels)\n", "normal angle");
            else printf("%-16s %.4f degrees (mean)\n", "normal angle", m.normal_angle_mean);
        }
        if (m.hdr) {
            printf("%-16s %.6g\n", "RMSE", m.rmse);
            printf("%-16s %.6g\n", "RMSLE", m.rmsle);
        }
    }
done:
    kiln_image_free(&img[0]);
    kiln_image_free(&img[1]);
    kiln_context_free(ctx);
    return rc;
}

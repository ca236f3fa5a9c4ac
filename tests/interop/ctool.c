/* ctool.c - helper for the container interop scripts (built as kiln_ctool in the build tree).
 *
 *   kiln_ctool gen DIR           writes DIR/<format>[-mips|-zstd|-cube|-array].ktx2 for every format of the
 *                                table (random blocks, deterministic) and DIR/<format>-{legacy,dx10}.dds for
 *                                every DDS-capable format, plus DIR/list.txt (one file per line)
 *   kiln_ctool convert IN OUT [--zstd N] [--dx10|--legacy]
 *                                re-containers a texture (KTX2 / KTX / DDS in, .ktx2 / .dds out)
 *   kiln_ctool same A B          exit 0 when two textures load to the same format, geometry and bytes
 *   kiln_ctool decode IN OUT     kiln_decode of level 0, layer 0, face 0 as raw RGBA pixels of the format's
 *                                decoded type (u8, u16 or f32, little-endian); prints "W H TYPE"
 */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ctool_fail(kiln_context *ctx, const char *what)
{
    fprintf(stderr, "kiln_ctool: %s: %s\n", what, kiln_last_error(ctx));
    return 1;
}

static int gen(kiln_context *ctx, const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/list.txt", dir);
    FILE *list = fopen(path, "w");
    if (!list) return 1;
    kt_rng r;
    kt_rng_seed(&r, 4242);
    for (int f = 1; f < KILN_FORMAT_COUNT; f++) {
        const kiln_format_info *fi = kiln_format_get_info((kiln_format)f);
        static const struct { const char *suffix; uint32_t w, h, levels, layers, faces; int zstd; } v[] = {
            {"", 13, 7, 1, 1, 1, 0},       {"-mips", 13, 7, 0, 1, 1, 0}, {"-zstd", 16, 12, 0, 1, 1, 19},
            {"-cube", 8, 8, 0, 1, 6, 0},    {"-array", 5, 3, 2, 3, 1, 0}, {"-1x1", 1, 1, 1, 1, 1, 0},
        };
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
            kiln_texture t;
            if (kiln_texture_alloc(ctx, &t, (kiln_format)f, v[i].w, v[i].h, v[i].levels, v[i].layers, v[i].faces))
                return ctool_fail(ctx, "alloc");
            kt_rng_bytes(&r, t.data, t.data_size);
            if (f == KILN_FORMAT_BC7_UNORM || f == KILN_FORMAT_BC7_SRGB) /* no invalid (mode 8) blocks: */
                for (size_t b = 0; b < t.data_size; b += 16) /* readers disagree on their alpha */
                    if (!t.data[b]) t.data[b] = 0x40;
            t.is_array = v[i].layers > 1;
            if (i == 1) kiln_texture_set_kv(ctx, &t, "KTXorientation", "rd");
            kiln_save_params p;
            kiln_save_params_init(&p);
            p.zstd_level = v[i].zstd;
            snprintf(path, sizeof path, "%s/%s%s.ktx2", dir, fi->name, v[i].suffix);
            if (kiln_texture_save(ctx, &t, path, &p)) return ctool_fail(ctx, path);
            fprintf(list, "%s\n", path);
            if (fi->dxgi_format && i < 2) {
                for (int hdr = 0; hdr < 2; hdr++) {
                    p.zstd_level = 0;
                    p.dds_header = hdr ? KILN_DDS_HEADER_DX10 : KILN_DDS_HEADER_LEGACY;
                    snprintf(path, sizeof path, "%s/%s%s-%s.dds", dir, fi->name, v[i].suffix, hdr ? "dx10" : "legacy");
                    kiln_status st = kiln_texture_save(ctx, &t, path, &p);
                    if (st == KILN_ERR_UNSUPPORTED) continue; /* no legacy form */
                    if (st) return ctool_fail(ctx, path);
                    fprintf(list, "%s\n", path);
                }
            }
            kiln_texture_free(&t);
        }
    }
    fclose(list);
    return 0;
}

int main(int argc, char **argv)
{
    kiln_context *ctx = kt_context(0, KILN_BACKEND_CPU);
    if (!ctx) return 1;
    int rc = 2;
    if (argc == 3 && !strcmp(argv[1], "gen")) {
        rc = gen(ctx, argv[2]);
    } else if (argc >= 4 && !strcmp(argv[1], "convert")) {
        kiln_save_params p;
        kiln_save_params_init(&p);
        for (int i = 4; i < argc; i++) {
            if (!strcmp(argv[i], "--zstd") && i + 1 < argc) p.zstd_level = atoi(argv[++i]);
            else if (!strcmp(argv[i], "--dx10")) p.dds_header = KILN_DDS_HEADER_DX10;
            else if (!strcmp(argv[i], "--legacy")) p.dds_header = KILN_DDS_HEADER_LEGACY;
        }
        kiln_texture t;
        if (kiln_texture_load(ctx, argv[2], &t)) rc = ctool_fail(ctx, argv[2]);
        else {
            rc = kiln_texture_save(ctx, &t, argv[3], &p) ? ctool_fail(ctx, argv[3]) : 0;
            kiln_texture_free(&t);
        }
    } else if (argc == 4 && !strcmp(argv[1], "same")) {
        kiln_texture a, b;
        rc = 1;
        if (kiln_texture_load(ctx, argv[2], &a)) ctool_fail(ctx, argv[2]);
        else {
            if (kiln_texture_load(ctx, argv[3], &b)) ctool_fail(ctx, argv[3]);
            else {
                rc = !(a.format == b.format && a.width == b.width && a.height == b.height && a.levels == b.levels &&
                       a.layers == b.layers && a.faces == b.faces && a.data_size == b.data_size &&
                       !memcmp(a.data, b.data, a.data_size));
                if (rc) fprintf(stderr, "kiln_ctool: %s and %s differ\n", argv[2], argv[3]);
                kiln_texture_free(&b);
            }
            kiln_texture_free(&a);
        }
    } else if (argc == 4 && !strcmp(argv[1], "decode")) {
        kiln_texture t;
        kiln_image img;
        rc = 1;
        if (kiln_texture_load(ctx, argv[2], &t)) ctool_fail(ctx, argv[2]);
        else {
            if (kiln_decode(ctx, &t, 0, 0, 0, &img)) ctool_fail(ctx, "decode");
            else {
                FILE *f = fopen(argv[3], "wb");
                size_t n = (size_t)img.width * img.height * 4 * img.type;
                if (f && fwrite(img.pixels, 1, n, f) == n) rc = 0;
                if (f) fclose(f);
                printf("%u %u %s\n", img.width, img.height, img.type == KILN_PIXEL_U8 ? "u8" : img.type == KILN_PIXEL_U16 ? "u16" : "f32");
                kiln_image_free(&img);
            }
            kiln_texture_free(&t);
        }
    } else {
        fprintf(stderr, "usage: kiln_ctool gen DIR | convert IN OUT [--zstd N] [--dx10|--legacy] | same A B | decode IN OUT\n");
    }
    kiln_context_free(ctx);
    return rc;
}

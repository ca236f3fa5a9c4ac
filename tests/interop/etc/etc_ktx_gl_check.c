/* etc_ktx_gl_check.c - decodes the level 0 of KTX 1 files holding ETC1/ETC2/EAC data (as written by etc2comp's
 * EtcTool) with kiln and with Mesa's desktop GL (surfaceless EGL) and compares the texels exactly.
 *
 *   etc_ktx_gl_check FILE.ktx...
 *
 * kiln decodes twice: block by block with its block decoders, and through the public API
 * (kiln_texture_load + kiln_decode) when kiln can load the file. Exit status: 0 all equal, 1 a mismatch or a
 * bad file, 77 no EGL display (skip). Used by tests/interop/etc_etctool.sh. */
#include "mesa_gl.h"
#include "codec/codec.h"
#include "codec/etc_tables.h"

#include <GL/gl.h>
#include <GL/glext.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GL_ETC1_RGB8_OES
#define GL_ETC1_RGB8_OES 0x8D64
#endif

static uint32_t rd32(const uint8_t *p, int swap)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return swap ? __builtin_bswap32(v) : v;
}

static kiln_format format_from_gl(uint32_t ifmt)
{
    switch (ifmt) {
    case GL_ETC1_RGB8_OES: return KILN_FORMAT_ETC1_UNORM;
    case GL_COMPRESSED_RGB8_ETC2: return KILN_FORMAT_ETC2_RGB8_UNORM;
    case GL_COMPRESSED_SRGB8_ETC2: return KILN_FORMAT_ETC2_RGB8_SRGB;
    case GL_COMPRESSED_RGB8_PUNCHTHROUGH_ALPHA1_ETC2: return KILN_FORMAT_ETC2_RGB8A1_UNORM;
    case GL_COMPRESSED_SRGB8_PUNCHTHROUGH_ALPHA1_ETC2: return KILN_FORMAT_ETC2_RGB8A1_SRGB;
    case GL_COMPRESSED_RGBA8_ETC2_EAC: return KILN_FORMAT_ETC2_RGBA8_UNORM;
    case GL_COMPRESSED_SRGB8_ALPHA8_ETC2_EAC: return KILN_FORMAT_ETC2_RGBA8_SRGB;
    case GL_COMPRESSED_R11_EAC: return KILN_FORMAT_EAC_R11_UNORM;
    case GL_COMPRESSED_SIGNED_R11_EAC: return KILN_FORMAT_EAC_R11_SNORM;
    case GL_COMPRESSED_RG11_EAC: return KILN_FORMAT_EAC_RG11_UNORM;
    case GL_COMPRESSED_SIGNED_RG11_EAC: return KILN_FORMAT_EAC_RG11_SNORM;
    default: return KILN_FORMAT_UNDEFINED;
    }
}

/* Compares one texel channel set of kiln's decoded texel (decoded_type of fi) with Mesa's read-back texel.
 * Returns 1 when equal; fills what otherwise. */
static int texel_equal(const kiln_format_info *fi, const void *kiln_texel, const uint8_t *mesa, char *what, size_t n)
{
    if (fi->decoded_type == KILN_PIXEL_U8) {
        const uint8_t *k = kiln_texel;
        if (memcmp(k, mesa, 4) == 0) return 1;
        snprintf(what, n, "kiln (%d,%d,%d,%d) mesa (%d,%d,%d,%d)", k[0], k[1], k[2], k[3], mesa[0], mesa[1], mesa[2],
                 mesa[3]);
        return 0;
    }
    for (uint32_t c = 0; c < fi->channels; c++) {
        if (fi->decoded_type == KILN_PIXEL_U16) {
            uint16_t m;
            memcpy(&m, mesa + 2 * c, 2);
            const uint16_t k = ((const uint16_t *)kiln_texel)[c];
            if (k != m) {
                snprintf(what, n, "channel %u: kiln %u mesa %u", c, k, m);
                return 0;
            }
        } else {
            int16_t m;
            memcpy(&m, mesa + 2 * c, 2);
            const int mag = m < 0 ? -m : m;
            const int v11 = m < 0 ? -(mag >> 5) : mag >> 5;
            const float k = ((const float *)kiln_texel)[c];
            if (kiln__eac_s11_to_s16(v11) != m || k != (float)v11 / 1023.0f) {
                snprintf(what, n, "channel %u: kiln %.6f mesa %d (11-bit %d)", c, (double)k, m, v11);
                return 0;
            }
        }
    }
    return 1;
}

static int check_file(kt_gl *gl, const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        fprintf(stderr, "%s: cannot open\n", path);
        return 1;
    }
    fseek(fp, 0, SEEK_END);
    long fsz = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    if (fsz < 68 || fsz > (1l << 30)) {
        fclose(fp);
        fprintf(stderr, "%s: not a KTX 1 file (size %ld)\n", path, fsz);
        return 1;
    }
    uint8_t *file = malloc((size_t)fsz);
    if (!file || fread(file, 1, (size_t)fsz, fp) != (size_t)fsz) {
        fclose(fp);
        free(file);
        fprintf(stderr, "%s: read error\n", path);
        return 1;
    }
    fclose(fp);
    static const uint8_t ident[12] = {0xAB, 'K', 'T', 'X', ' ', '1', '1', 0xBB, '\r', '\n', 0x1A, '\n'};
    int rc = 1;
    uint8_t *mesa = NULL;
    if (memcmp(file, ident, 12) != 0) {
        fprintf(stderr, "%s: not a KTX 1 file\n", path);
        goto done;
    }
    const int swap = rd32(file + 12, 0) != 0x04030201u;
    const uint32_t ifmt = rd32(file + 28, swap), w = rd32(file + 36, swap), h = rd32(file + 40, swap);
    const uint32_t kvbytes = rd32(file + 60, swap);
    const kiln_format f = format_from_gl(ifmt);
    const kiln_format_info *fi = kiln_format_get_info(f);
    if (!fi) {
        fprintf(stderr, "%s: glInternalFormat 0x%x is not an ETC/EAC format\n", path, ifmt);
        goto done;
    }
    if (w == 0 || h == 0 || w > 16384 || h > 16384 || (uint64_t)64 + kvbytes + 4 > (uint64_t)fsz) {
        fprintf(stderr, "%s: bad header (%ux%u, %u bytes of key/value data)\n", path, w, h, kvbytes);
        goto done;
    }
    const size_t off = 64 + (size_t)kvbytes;
    const uint32_t image_size = rd32(file + off, swap);
    const uint32_t bw = (w + 3) / 4, bh = (h + 3) / 4;
    const size_t need = (size_t)bw * bh * fi->block_bytes;
    if (image_size != need || off + 4 + need > (size_t)fsz) {
        fprintf(stderr, "%s: level 0 holds %u bytes, %ux%u %s needs %zu\n", path, image_size, w, h, fi->name, need);
        goto done;
    }
    const uint8_t *blocks = file + off + 4;

    unsigned gfmt, rfmt, rtype;
    size_t tb;
    if (!kt_gl_format(f, &gfmt, &rfmt, &rtype, &tb)) goto done;
    mesa = malloc((size_t)w * h * tb);
    char msg[256];
    if (!mesa || kt_gl_decode(gl, gfmt, (int)w, (int)h, blocks, need, rfmt, rtype, mesa, msg, sizeof msg) != 0) {
        fprintf(stderr, "%s: Mesa decode failed: %s\n", path, mesa ? msg : "out of memory");
        goto done;
    }

    /* 1. block decoders */
    const size_t esz = (size_t)fi->decoded_type;
    long mism = 0, texels = 0, modes[2][5] = {{0}};
    char first[300] = "";
    uint8_t out[64 * 4];
    for (uint32_t by = 0; by < bh; by++) {
        for (uint32_t bx = 0; bx < bw; bx++) {
            const uint8_t *blk = blocks + ((size_t)by * bw + bx) * fi->block_bytes;
            kiln__block_decoder(f)(blk, out);
            if (fi->decoded_type == KILN_PIXEL_U8) {
                const uint8_t *cb = fi->block_bytes == 16 ? blk + 8 : blk;
                const int a1 = (fi->flags & KILN_FF_ALPHA1) != 0;
                modes[(cb[3] >> 1) & 1][kiln__etc_mode(cb, a1)]++;
            }
            for (uint32_t y = 0; y < 4 && by * 4 + y < h; y++) {
                for (uint32_t x = 0; x < 4 && bx * 4 + x < w; x++) {
                    char what[200];
                    texels++;
                    const uint8_t *m = mesa + ((size_t)(by * 4 + y) * w + bx * 4 + x) * tb;
                    if (!texel_equal(fi, out + (y * 4 + x) * 4 * esz, m, what, sizeof what) && mism++ == 0)
                        snprintf(first, sizeof first, "texel (%u,%u): %s", bx * 4 + x, by * 4 + y, what);
                }
            }
        }
    }
    printf("%s: %s %ux%u, %u blocks, %ld texels, block decoders vs Mesa: %ld mismatches", path, fi->name, w, h, bw * bh,
           texels, mism);
    if (fi->decoded_type == KILN_PIXEL_U8)
        printf(" [modes individual %ld, differential %ld, T %ld, H %ld, planar %ld; bit 33 clear in %ld]",
               modes[0][0] + modes[1][0], modes[0][1] + modes[1][1], modes[0][2] + modes[1][2],
               modes[0][3] + modes[1][3], modes[0][4] + modes[1][4],
               modes[0][0] + modes[0][1] + modes[0][2] + modes[0][3] + modes[0][4]);
    printf("\n");
    if (mism) fprintf(stderr, "%s: first mismatch %s\n", path, first);

    /* 2. the public API, when kiln can load the file */
    kiln_context *ctx = NULL;
    kiln_context_params p;
    kiln_context_params_init(&p);
    p.backend = KILN_BACKEND_CPU;
    long mism2 = -1;
    if (kiln_context_create(&p, &ctx) == KILN_OK) {
        kiln_texture tex;
        kiln_image img;
        memset(&tex, 0, sizeof tex);
        memset(&img, 0, sizeof img);
        if (kiln_texture_load(ctx, path, &tex) != KILN_OK) {
            printf("%s: note: kiln_texture_load failed (%s): public API not compared\n", path, kiln_last_error(ctx));
        } else if (kiln_decode(ctx, &tex, 0, 0, 0, &img) != KILN_OK) {
            fprintf(stderr, "%s: kiln_decode failed: %s\n", path, kiln_last_error(ctx));
            mism2 = 1;
        } else if (img.width != w || img.height != h || img.type != fi->decoded_type) {
            fprintf(stderr, "%s: kiln_decode gave %ux%u type %d\n", path, img.width, img.height, (int)img.type);
            mism2 = 1;
        } else {
            mism2 = 0;
            for (size_t i = 0; i < (size_t)w * h; i++) {
                char what[200];
                if (!texel_equal(fi, (const uint8_t *)img.pixels + i * 4 * esz, mesa + i * tb, what, sizeof what) &&
                    mism2++ == 0)
                    fprintf(stderr, "%s: kiln_decode vs Mesa, first mismatch at (%zu,%zu): %s\n", path, i % w, i / w,
                            what);
            }
            printf("%s: kiln_texture_load + kiln_decode vs Mesa: %ld mismatches\n", path, mism2);
        }
        kiln_image_free(&img);
        kiln_texture_free(&tex);
        kiln_context_free(ctx);
    }
    rc = (mism == 0 && mism2 <= 0) ? 0 : 1;
done:
    free(mesa);
    free(file);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE.ktx...\n", argv[0]);
        return 2;
    }
    char msg[256];
    kt_gl *gl = kt_gl_open(msg, sizeof msg);
    if (!gl) {
        fprintf(stderr, "no Mesa GL: %s\n", msg);
        return 77;
    }
    printf("%s\n", kt_gl_renderer(gl));
    int rc = 0;
    for (int i = 1; i < argc; i++) rc |= check_file(gl, argv[i]);
    kt_gl_close(gl);
    return rc;
}

/* dds.c - DirectDraw Surface: reader, writer, validator, describer (layout: DirectXTex DDS.h).
 *
 * Header policy of the writer (kiln_save_params.dds_header):
 *   AUTO    the legacy header wherever the format allows it, as texconv does, else DX10:
 *             BC1 "DXT1" (BC1 RGBA adds DDPF_ALPHAPIXELS), BC2 "DXT3",
 *             BC3 "DXT5", BC4 UNORM "ATI1", BC4 SNORM "BC4S", BC5 UNORM "ATI2", BC5 SNORM "BC5S"
 *             (the FOURCC column of the format table: ATI1/ATI2 rather than BC4U/BC5U because more
 *             Linux readers know them: Pillow, ImageMagick, nvtt), RGBA8 UNORM as 32-bit RGBA masks,
 *             RGBA16F and RGBA32F as D3DFMT FourCCs 113 and 116. sRGB formats, BC6H, BC7, R8 and RG8,
 *             arrays (more than one layer) and premultiplied alpha use DX10.
 *   DX10    always the DX10 extension (DXGI number from the format table; arraySize = layers; cube maps
 *           set TEXTURECUBE; miscFlags2 records the alpha mode: 2 premultiplied, 1 straight for formats
 *           with alpha, 3 opaque for those without - a DX10 BC1 with alpha mode 3 reads back as BC1 RGB).
 *   LEGACY  always the legacy header; additionally R8 as L8 luminance, RG8 as 16-bit R/G masks and
 *           premultiplied BC2/BC3 as "DXT2"/"DXT4". A format or texture that needs DX10 fails with
 *           KILN_ERR_UNSUPPORTED.
 * ETC/EAC formats have no DXGI equivalent and are refused ("DDS has no ETC/EAC formats; use .ktx2").
 *
 * BC1 and DDS: DXGI has a single BC1 format whose 3-colour-mode index 3 is transparent black, and legacy
 * "DXT1" files say nothing either (nvcompress -bc1a sets no flag), so every reader of DDS (Direct3D,
 * DirectXTex, Pillow) sees BC1 with 1-bit alpha. kiln therefore reads "DXT1" and DXGI BC1 as BC1 RGBA; only
 * a DX10 BC1 whose alpha mode is 3 (opaque) - what kiln writes for BC1 RGB - reads back as BC1 RGB. A BC1
 * RGB texture written with the legacy header reads back as BC1 RGBA (same blocks).
 *
 * Data order differs from kiln_texture: DDS stores, for each array layer and each face (+X -X +Y -Y +Z
 * -Z), all levels largest first; kiln stores per level all layers and faces. Both directions convert.
 * The reader also takes DXT2/DXT4 (premultiplied), BC4U/BC5U, typeless BC DXGI numbers, DX10 BGRA8 and
 * any byte-aligned RGB/luminance mask layout of 8-32 bits (BGRA, BGRX, BGR, L8, A8L8 ...), converted to
 * R8, RG8 or RGBA8. */
#include "container/container.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DDS_MAGIC 0x20534444u
#define HDR_SIZE 128u
#define DX10_SIZE 20u

#define DDSD_CAPS 0x1u
#define DDSD_HEIGHT 0x2u
#define DDSD_WIDTH 0x4u
#define DDSD_PITCH 0x8u
#define DDSD_PIXELFORMAT 0x1000u
#define DDSD_MIPMAPCOUNT 0x20000u
#define DDSD_LINEARSIZE 0x80000u
#define DDSD_DEPTH 0x800000u
#define DDSD_REQUIRED (DDSD_CAPS | DDSD_HEIGHT | DDSD_WIDTH | DDSD_PIXELFORMAT)

#define DDPF_ALPHAPIXELS 0x1u
#define DDPF_ALPHA 0x2u
#define DDPF_FOURCC 0x4u
#define DDPF_RGB 0x40u
#define DDPF_YUV 0x200u
#define DDPF_LUMINANCE 0x20000u

#define DDSCAPS_COMPLEX 0x8u
#define DDSCAPS_TEXTURE 0x1000u
#define DDSCAPS_MIPMAP 0x400000u
#define DDSCAPS2_CUBEMAP 0x200u
#define DDSCAPS2_ALLFACES 0xFC00u
#define DDSCAPS2_VOLUME 0x200000u

#define DIM_1D 2u
#define DIM_2D 3u
#define DIM_3D 4u
#define MISC_TEXTURECUBE 0x4u
#define ALPHA_UNKNOWN 0u
#define ALPHA_STRAIGHT 1u
#define ALPHA_PREMULTIPLIED 2u
#define ALPHA_OPAQUE 3u
#define ALPHA_CUSTOM 4u

#define FOURCC(a, b, c, d) ((uint32_t)(a) | ((uint32_t)(b) << 8) | ((uint32_t)(c) << 16) | ((uint32_t)(d) << 24))
#define FCC_DX10 FOURCC('D', 'X', '1', '0')
#define FCC_RGBA16F 113u
#define FCC_RGBA32F 116u

static uint32_t fourcc_of(const char *s) { return FOURCC(s[0], s[1], s[2], s[3]); }

static void fourcc_str(uint32_t v, char out[16])
{
    bool printable = true;
    for (int i = 0; i < 4; i++) {
        uint8_t c = (uint8_t)(v >> (8 * i));
        if (c < 0x20 || c > 0x7E) printable = false;
    }
    if (printable)
        snprintf(out, 16, "%c%c%c%c", (char)v, (char)(v >> 8), (char)(v >> 16), (char)(v >> 24));
    else
        snprintf(out, 16, "%u", v);
}

/* ================================================================ header parsing */

typedef struct dds {
    uint32_t size, flags, height, width, pitch, depth, mips;
    uint32_t pf_size, pf_flags, fourcc, bits, mask[4];
    uint32_t caps, caps2;
    bool dx10;
    uint32_t dxgi, dim, misc, array_size, misc2;
    size_t data_off;
} dds;

static void parse(const uint8_t *p, size_t n, dds *h)
{
    memset(h, 0, sizeof *h);
    h->size = kiln__rd32(p + 4);
    h->flags = kiln__rd32(p + 8);
    h->height = kiln__rd32(p + 12);
    h->width = kiln__rd32(p + 16);
    h->pitch = kiln__rd32(p + 20);
    h->depth = kiln__rd32(p + 24);
    h->mips = kiln__rd32(p + 28);
    h->pf_size = kiln__rd32(p + 76);
    h->pf_flags = kiln__rd32(p + 80);
    h->fourcc = kiln__rd32(p + 84);
    h->bits = kiln__rd32(p + 88);
    for (int i = 0; i < 4; i++) h->mask[i] = kiln__rd32(p + 92 + 4 * i);
    h->caps = kiln__rd32(p + 108);
    h->caps2 = kiln__rd32(p + 112);
    h->data_off = HDR_SIZE;
    if ((h->pf_flags & DDPF_FOURCC) && h->fourcc == FCC_DX10) {
        h->dx10 = true;
        if (n >= HDR_SIZE + DX10_SIZE) {
            h->dxgi = kiln__rd32(p + 128);
            h->dim = kiln__rd32(p + 132);
            h->misc = kiln__rd32(p + 136);
            h->array_size = kiln__rd32(p + 140);
            h->misc2 = kiln__rd32(p + 144);
        }
        h->data_off = HDR_SIZE + DX10_SIZE;
    }
}

/* How the file's pixels map to a kiln format. */
typedef struct pixfmt {
    kiln_format format;
    bool direct;      /* bytes copied as they are */
    uint32_t bpp;     /* source bytes per pixel (masked formats) */
    int idx[4];       /* source byte of R, G, B, A (-1: fill) */
    uint8_t fill[4];
    bool premultiplied;
    const char *why;  /* why unsupported (format UNDEFINED) */
} pixfmt;

static int mask_byte(uint32_t m, uint32_t bytes)
{
    for (uint32_t i = 0; i < bytes; i++)
        if (m == 0xFFu << (8 * i)) return (int)i;
    return -2; /* not a whole byte */
}

static kiln_format dxgi_to_format(uint32_t dxgi, bool *bgra)
{
    *bgra = false;
    switch (dxgi) {
    case 70: return KILN_FORMAT_BC1_RGBA_UNORM; /* typeless */
    case 73: return KILN_FORMAT_BC2_UNORM;
    case 76: return KILN_FORMAT_BC3_UNORM;
    case 79: return KILN_FORMAT_BC4_UNORM;
    case 82: return KILN_FORMAT_BC5_UNORM;
    case 94: return KILN_FORMAT_BC6H_UFLOAT;
    case 97: return KILN_FORMAT_BC7_UNORM;
    case 27: return KILN_FORMAT_RGBA8_UNORM;
    case 87: *bgra = true; return KILN_FORMAT_RGBA8_UNORM;
    case 91: *bgra = true; return KILN_FORMAT_RGBA8_SRGB;
    default: return kiln_format_from_dxgi(dxgi);
    }
}

static void pixel_format(const dds *h, pixfmt *pf)
{
    memset(pf, 0, sizeof *pf);
    pf->direct = true;
    pf->why = "";
    if (h->dx10) {
        bool bgra;
        pf->format = dxgi_to_format(h->dxgi, &bgra);
        if (!pf->format) {
            pf->why = "DXGI format not supported";
            return;
        }
        if (bgra) {
            pf->direct = false;
            pf->bpp = 4;
            pf->idx[0] = 2, pf->idx[1] = 1, pf->idx[2] = 0, pf->idx[3] = 3;
        }
        uint32_t am = h->misc2 & 7;
        if (am == ALPHA_PREMULTIPLIED) pf->premultiplied = true;
        if (am == ALPHA_OPAQUE && pf->format == KILN_FORMAT_BC1_RGBA_UNORM) pf->format = KILN_FORMAT_BC1_RGB_UNORM;
        if (am == ALPHA_OPAQUE && pf->format == KILN_FORMAT_BC1_RGBA_SRGB) pf->format = KILN_FORMAT_BC1_RGB_SRGB;
        return;
    }
    if (h->pf_flags & DDPF_FOURCC) {
        static const struct { const char *cc; kiln_format f; bool pm; } map[] = {
            {"DXT1", KILN_FORMAT_BC1_RGBA_UNORM, false}, {"DXT2", KILN_FORMAT_BC2_UNORM, true},
            {"DXT3", KILN_FORMAT_BC2_UNORM, false},     {"DXT4", KILN_FORMAT_BC3_UNORM, true},
            {"DXT5", KILN_FORMAT_BC3_UNORM, false},     {"ATI1", KILN_FORMAT_BC4_UNORM, false},
            {"BC4U", KILN_FORMAT_BC4_UNORM, false},     {"BC4S", KILN_FORMAT_BC4_SNORM, false},
            {"ATI2", KILN_FORMAT_BC5_UNORM, false},     {"BC5U", KILN_FORMAT_BC5_UNORM, false},
            {"BC5S", KILN_FORMAT_BC5_SNORM, false},
        };
        for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
            if (h->fourcc == fourcc_of(map[i].cc)) {
                pf->format = map[i].f;
                pf->premultiplied = map[i].pm;
                return;
            }
        if (h->fourcc == FCC_RGBA16F) pf->format = KILN_FORMAT_RGBA16F;
        else if (h->fourcc == FCC_RGBA32F) pf->format = KILN_FORMAT_RGBA32F;
        else pf->why = "FourCC not supported";
        return;
    }
    bool rgb = (h->pf_flags & DDPF_RGB) != 0, lum = (h->pf_flags & DDPF_LUMINANCE) != 0;
    bool alpha = (h->pf_flags & (DDPF_ALPHAPIXELS | DDPF_ALPHA)) != 0;
    if (!rgb && !lum) {
        pf->why = (h->pf_flags & DDPF_ALPHA) ? "alpha-only pixel formats are not supported"
                  : (h->pf_flags & DDPF_YUV) ? "YUV pixel formats are not supported"
                                             : "the pixel format has neither FOURCC, RGB nor LUMINANCE set";
        return;
    }
    if (h->bits != 8 && h->bits != 16 && h->bits != 24 && h->bits != 32) {
        pf->why = "RGBBitCount must be 8, 16, 24 or 32";
        return;
    }
    uint32_t bytes = h->bits / 8;
    int idx[4];
    for (int c = 0; c < 4; c++) {
        uint32_t m = h->mask[c];
        if (c == 3 && !alpha) m = 0;
        if (lum && (c == 1 || c == 2)) m = 0;
        idx[c] = m ? mask_byte(m, bytes) : -1;
        if (idx[c] == -2) {
            pf->why = "channel masks that are not whole bytes (e.g. 5:6:5, 10:10:10:2) are not supported";
            return;
        }
    }
    if (idx[0] < 0 && !(lum && idx[3] >= 0)) {
        pf->why = "the pixel format has no red or luminance channel";
        return;
    }
    pf->direct = false;
    pf->bpp = bytes;
    pf->fill[3] = 255;
    if (lum) {
        idx[1] = idx[2] = idx[0];
        pf->format = idx[3] >= 0 ? KILN_FORMAT_RGBA8_UNORM : KILN_FORMAT_R8_UNORM;
    } else if (idx[1] < 0 && idx[2] < 0 && idx[3] < 0) {
        pf->format = KILN_FORMAT_R8_UNORM;
    } else if (idx[2] < 0 && idx[3] < 0) {
        pf->format = KILN_FORMAT_RG8_UNORM;
    } else {
        pf->format = KILN_FORMAT_RGBA8_UNORM;
    }
    memcpy(pf->idx, idx, sizeof idx);
    /* a pure copy when the source already is the destination layout */
    const kiln_format_info *fi = kiln_format_get_info(pf->format);
    bool same = bytes == fi->block_bytes;
    for (uint32_t c = 0; c < fi->channels && same; c++)
        if (idx[c] != (int)c) same = false;
    if (same) pf->direct = true;
}

/* Source bytes of one image (one slice of one level). 0 on overflow. */
static size_t src_image_size(const pixfmt *pf, uint32_t w, uint32_t h)
{
    if (pf->direct) return kiln_format_image_size(pf->format, w, h);
    size_t n;
    if (!kiln__mul_size((size_t)w * h, pf->bpp, &n)) return 0;
    return n;
}

typedef struct geom {
    uint32_t w, h, d, layers, faces, levels;
    bool is_array;
    const char *err; /* NULL when fine */
} geom;

static void geometry(const dds *h, geom *g)
{
    memset(g, 0, sizeof *g);
    g->w = h->width;
    g->h = h->height;
    g->d = 1;
    g->layers = 1;
    g->faces = 1;
    g->levels = ((h->flags & DDSD_MIPMAPCOUNT) && h->mips) ? h->mips : 1;
    if (h->dx10) {
        if (h->array_size == 0) g->err = "DX10 arraySize is 0";
        g->layers = h->array_size;
        g->is_array = h->array_size > 1;
        if (h->dim == DIM_1D) {
            if (g->h > 1) g->err = "a 1-D texture must have height 1";
            g->h = 1;
        } else if (h->dim == DIM_3D) {
            g->d = h->depth ? h->depth : 1;
            if (h->array_size > 1) g->err = "3-D textures cannot be arrays";
        } else if (h->dim != DIM_2D) {
            g->err = "DX10 resourceDimension must be 2 (1-D), 3 (2-D) or 4 (3-D)";
        }
        if (h->misc & MISC_TEXTURECUBE) {
            if (h->dim != DIM_2D) g->err = "a cube map must be a 2-D resource";
            g->faces = 6;
        }
        return;
    }
    if (h->caps2 & DDSCAPS2_CUBEMAP) {
        if ((h->caps2 & DDSCAPS2_ALLFACES) != DDSCAPS2_ALLFACES) g->err = "cube maps without all six faces are not supported";
        g->faces = 6;
    }
    if (h->caps2 & DDSCAPS2_VOLUME) {
        if (!(h->flags & DDSD_DEPTH) || h->depth == 0) g->err = "a volume texture needs DDSD_DEPTH and a depth";
        g->d = h->depth ? h->depth : 1;
    }
}

/* ================================================================ reader */

typedef struct conv {
    const pixfmt *pf;
    uint32_t dst_bytes, dst_channels;
} conv;

static void convert(const conv *c, const uint8_t *src, uint8_t *dst, size_t pixels)
{
    const pixfmt *pf = c->pf;
    for (size_t i = 0; i < pixels; i++) {
        const uint8_t *s = src + i * pf->bpp;
        uint8_t *d = dst + i * c->dst_bytes;
        for (uint32_t ch = 0; ch < c->dst_channels; ch++) d[ch] = pf->idx[ch] >= 0 ? s[pf->idx[ch]] : pf->fill[ch];
    }
}

kiln_status kiln__dds_load(kiln_context *ctx, const char *name, const uint8_t *p, size_t size, kiln_texture *out)
{
    if (size < HDR_SIZE)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: %zu bytes, shorter than the %u-byte DDS header", name, size, HDR_SIZE);
    dds h;
    parse(p, size, &h);
    if (h.size != 124 || h.pf_size != 32)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: DDS header size is %u and pixel format size %u (must be 124 and 32)",
                          name, h.size, h.pf_size);
    if (h.dx10 && size < HDR_SIZE + DX10_SIZE)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: the file ends inside the DX10 header (%zu bytes)", name, size);
    pixfmt pf;
    pixel_format(&h, &pf);
    if (!pf.format) {
        char cc[16];
        fourcc_str(h.fourcc, cc);
        if (h.dx10)
            return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: DXGI format %u is not supported", name, h.dxgi);
        if (h.pf_flags & DDPF_FOURCC)
            return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: FourCC '%s' is not supported", name, cc);
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: pixel format (flags 0x%X, %u bits, masks %08X %08X %08X %08X) "
                          "is not supported: %s", name, h.pf_flags, h.bits, h.mask[0], h.mask[1], h.mask[2], h.mask[3],
                          pf.why);
    }
    geom g;
    geometry(&h, &g);
    if (g.err) return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: %s", name, g.err);
    if (g.levels > KILN_MAX_LEVELS)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: mipMapCount %u is more than any texture can have", name, g.levels);
    KILN_TRY(kiln__texture_geometry(ctx, name, out, pf.format, g.w, g.h, g.d, g.layers, g.faces, g.levels));
    out->is_array = g.is_array;
    out->premultiplied = pf.premultiplied;
    /* the file must hold every image before anything is allocated */
    size_t need = 0;
    for (uint32_t l = 0; l < g.levels; l++) {
        size_t img = src_image_size(&pf, kiln_level_dim(g.w, l), kiln_level_dim(g.h, l)), lv;
        if (!img || !kiln__mul_size(img, kiln_level_dim(g.d, l), &lv) ||
            !kiln__mul_size(lv, (size_t)g.layers * g.faces, &lv) || !kiln__add_size(need, lv, &need))
            return kiln__fail(ctx, KILN_ERR_TOO_LARGE, "%s: data size overflows", name);
    }
    size_t avail = size - h.data_off;
    if (need > avail)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: a %ux%u %s texture with %u level(s), %u layer(s) and %u face(s) "
                          "needs %zu bytes of data but the file has %zu", name, g.w, g.h,
                          kiln_format_get_info(pf.format)->name, g.levels, g.layers, g.faces, need, avail);
    out->data = kiln__malloc(ctx, out->data_size);
    if (!out->data) return KILN_ERR_OUT_OF_MEMORY;
    const kiln_format_info *fi = kiln_format_get_info(pf.format);
    conv c = {&pf, fi->block_bytes, fi->channels};
    const uint8_t *src = p + h.data_off;
    for (uint32_t layer = 0; layer < g.layers; layer++)
        for (uint32_t face = 0; face < g.faces; face++)
            for (uint32_t l = 0; l < g.levels; l++) {
                uint32_t lw = kiln_level_dim(g.w, l), lh = kiln_level_dim(g.h, l), ld = kiln_level_dim(g.d, l);
                size_t dst_img = kiln_format_image_size(pf.format, lw, lh) * ld;
                size_t src_img = src_image_size(&pf, lw, lh) * ld;
                uint8_t *dst = out->data + out->level_offset[l] + ((size_t)layer * g.faces + face) * dst_img;
                if (pf.direct) memcpy(dst, src, src_img);
                else convert(&c, src, dst, (size_t)lw * lh * ld);
                src += src_img;
            }
    return KILN_OK;
}

/* ================================================================ writer */

typedef struct legacy {
    uint32_t flags, fourcc, bits, mask[4];
} legacy;

/* The legacy pixel format for a texture; false (with *why) when the legacy header cannot express it.
 * `forced`: the caller asked for LEGACY, which also allows the forms texconv writes only with -dx9. */
static bool legacy_format(const kiln_texture *tex, bool forced, legacy *lg, const char **why)
{
    const kiln_format_info *fi = kiln_format_get_info(tex->format);
    memset(lg, 0, sizeof *lg);
    uint32_t layers = tex->layers ? tex->layers : 1;
    if (layers > 1 || tex->is_array) {
        *why = "arrays need the DX10 header";
        return false;
    }
    if (tex->premultiplied && !forced) {
        *why = "premultiplied alpha is recorded in the DX10 header";
        return false;
    }
    if (fi->fourcc[0]) {
        lg->flags = DDPF_FOURCC;
        lg->fourcc = fourcc_of(fi->fourcc);
        if (fi->flags & KILN_FF_ALPHA1) lg->flags |= DDPF_ALPHAPIXELS;
        if (tex->premultiplied) {
            if (tex->format == KILN_FORMAT_BC2_UNORM) lg->fourcc = fourcc_of("DXT2");
            else if (tex->format == KILN_FORMAT_BC3_UNORM) lg->fourcc = fourcc_of("DXT4");
            else {
                *why = "only BC2 and BC3 have premultiplied legacy FourCCs (DXT2, DXT4)";
                return false;
            }
        }
        return true;
    }
    if (tex->premultiplied) {
        *why = "only BC2 and BC3 have premultiplied legacy FourCCs (DXT2, DXT4)";
        return false;
    }
    switch (tex->format) {
    case KILN_FORMAT_RGBA8_UNORM:
        lg->flags = DDPF_RGB | DDPF_ALPHAPIXELS;
        lg->bits = 32;
        lg->mask[0] = 0xFF, lg->mask[1] = 0xFF00, lg->mask[2] = 0xFF0000, lg->mask[3] = 0xFF000000u;
        return true;
    case KILN_FORMAT_RGBA16F:
        lg->flags = DDPF_FOURCC;
        lg->fourcc = FCC_RGBA16F;
        return true;
    case KILN_FORMAT_RGBA32F:
        lg->flags = DDPF_FOURCC;
        lg->fourcc = FCC_RGBA32F;
        return true;
    case KILN_FORMAT_R8_UNORM:
        if (!forced) break;
        lg->flags = DDPF_LUMINANCE;
        lg->bits = 8;
        lg->mask[0] = 0xFF;
        return true;
    case KILN_FORMAT_RG8_UNORM:
        if (!forced) break;
        lg->flags = DDPF_RGB;
        lg->bits = 16;
        lg->mask[0] = 0xFF, lg->mask[1] = 0xFF00;
        return true;
    default: break;
    }
    *why = (fi->flags & KILN_FF_SRGB) ? "sRGB formats need the DX10 header"
           : (fi->flags & KILN_FF_COMPRESSED) ? "BC6H and BC7 need the DX10 header"
                                                : "this format needs the DX10 header";
    return false;
}

kiln_status kiln__dds_save(kiln_context *ctx, const kiln_texture *tex, kiln_dds_header choice, kiln__buf *b)
{
    const kiln_format_info *fi = kiln_format_get_info(tex->format);
    if (!fi->dxgi_format)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: DDS has no ETC/EAC formats; use .ktx2", fi->name);
    uint32_t depth = tex->depth ? tex->depth : 1;
    uint32_t layers = tex->layers ? tex->layers : 1;
    bool cube = tex->faces == 6, volume = depth > 1;
    if (volume && layers > 1)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: DDS cannot store an array of 3-D textures (%u layers of "
                          "depth %u); use .ktx2", fi->name, layers, depth);
    legacy lg;
    const char *why = "";
    bool use_legacy = false;
    if (choice == KILN_DDS_HEADER_LEGACY) {
        if (!legacy_format(tex, true, &lg, &why))
            return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: cannot write a legacy (DX9) DDS header: %s; use the DX10 "
                              "header", fi->name, why);
        use_legacy = true;
    } else if (choice == KILN_DDS_HEADER_AUTO) {
        use_legacy = legacy_format(tex, false, &lg, &why);
    }
    bool compressed = (fi->flags & KILN_FF_COMPRESSED) != 0;
    uint8_t hdr[HDR_SIZE + DX10_SIZE];
    memset(hdr, 0, sizeof hdr);
    kiln__set32(hdr, DDS_MAGIC);
    kiln__set32(hdr + 4, 124);
    uint32_t flags = DDSD_REQUIRED | DDSD_MIPMAPCOUNT | (compressed ? DDSD_LINEARSIZE : DDSD_PITCH) |
                     (volume ? DDSD_DEPTH : 0);
    kiln__set32(hdr + 8, flags);
    kiln__set32(hdr + 12, tex->height);
    kiln__set32(hdr + 16, tex->width);
    size_t top = kiln_format_image_size(tex->format, tex->width, tex->height);
    uint64_t pitch = compressed ? top : (uint64_t)tex->width * fi->block_bytes;
    kiln__set32(hdr + 20, pitch > 0xFFFFFFFFu ? 0 : (uint32_t)pitch);
    kiln__set32(hdr + 24, volume ? depth : 0);
    kiln__set32(hdr + 28, tex->levels);
    kiln__set32(hdr + 76, 32);
    if (use_legacy) {
        kiln__set32(hdr + 80, lg.flags);
        kiln__set32(hdr + 84, lg.fourcc);
        kiln__set32(hdr + 88, lg.bits);
        for (int i = 0; i < 4; i++) kiln__set32(hdr + 92 + 4 * i, lg.mask[i]);
    } else {
        kiln__set32(hdr + 80, DDPF_FOURCC);
        kiln__set32(hdr + 84, FCC_DX10);
    }
    uint32_t caps = DDSCAPS_TEXTURE | (tex->levels > 1 ? DDSCAPS_COMPLEX | DDSCAPS_MIPMAP : 0) |
                    (cube || volume ? DDSCAPS_COMPLEX : 0);
    uint32_t caps2 = (cube ? DDSCAPS2_CUBEMAP | DDSCAPS2_ALLFACES : 0) | (volume ? DDSCAPS2_VOLUME : 0);
    kiln__set32(hdr + 108, caps);
    kiln__set32(hdr + 112, caps2);
    size_t hdr_size = HDR_SIZE;
    if (!use_legacy) {
        uint32_t alpha = tex->premultiplied ? ALPHA_PREMULTIPLIED : fi->channels == 4 ? ALPHA_STRAIGHT : ALPHA_OPAQUE;
        kiln__set32(hdr + 128, fi->dxgi_format);
        kiln__set32(hdr + 132, volume ? DIM_3D : DIM_2D);
        kiln__set32(hdr + 136, cube ? MISC_TEXTURECUBE : 0);
        kiln__set32(hdr + 140, layers);
        kiln__set32(hdr + 144, alpha);
        hdr_size += DX10_SIZE;
    }
    kiln__buf_put(b, hdr, hdr_size);
    for (uint32_t layer = 0; layer < layers; layer++)
        for (uint32_t face = 0; face < tex->faces; face++)
            for (uint32_t l = 0; l < tex->levels; l++) {
                size_t img = kiln_format_image_size(tex->format, kiln_level_dim(tex->width, l),
                                                    kiln_level_dim(tex->height, l)) *
                             kiln_level_dim(depth, l);
                kiln__buf_put(b, tex->data + tex->level_offset[l] + ((size_t)layer * tex->faces + face) * img, img);
            }
    if (b->oom) return kiln__fail(ctx, KILN_ERR_OUT_OF_MEMORY, "out of memory writing DDS");
    return KILN_OK;
}

/* ================================================================ validator */

void kiln__dds_validate(kiln_context *ctx, const uint8_t *p, size_t size, kiln__report *r)
{
    (void)ctx;
    if (size < HDR_SIZE) {
        kiln__rep(r, KILN__ERR, "header: file is %zu bytes, shorter than the %u-byte DDS header", size, HDR_SIZE);
        return;
    }
    dds h;
    parse(p, size, &h);
    if (h.size != 124) kiln__rep(r, KILN__ERR, "header: size is %u but must be 124", h.size);
    if (h.pf_size != 32) kiln__rep(r, KILN__ERR, "header: pixel format size is %u but must be 32", h.pf_size);
    if ((h.flags & DDSD_REQUIRED) != DDSD_REQUIRED)
        kiln__rep(r, KILN__WARN, "header: flags 0x%08X lack some of CAPS|HEIGHT|WIDTH|PIXELFORMAT (0x1007)", h.flags);
    if (!(h.caps & DDSCAPS_TEXTURE)) kiln__rep(r, KILN__WARN, "header: caps 0x%08X lack DDSCAPS_TEXTURE (0x1000)", h.caps);
    if (h.width == 0 || h.height == 0) kiln__rep(r, KILN__ERR, "header: size %ux%u is empty", h.width, h.height);
    if (h.width > KILN_MAX_DIMENSION || h.height > KILN_MAX_DIMENSION ||
        (uint64_t)h.width * h.height > KILN_MAX_PIXELS)
        kiln__rep(r, KILN__ERR, "header: %ux%u exceeds kiln's limits (%u per side, %llu pixels)", h.width, h.height,
                  KILN_MAX_DIMENSION, (unsigned long long)KILN_MAX_PIXELS);
    if (h.dx10 && size < HDR_SIZE + DX10_SIZE) {
        kiln__rep(r, KILN__ERR, "header: FourCC is DX10 but the file ends (%zu bytes) inside the 20-byte DX10 header", size);
        return;
    }
    if ((h.pf_flags & DDPF_FOURCC) && (h.pf_flags & (DDPF_RGB | DDPF_LUMINANCE)))
        kiln__rep(r, KILN__ERR, "pixel format: flags 0x%08X set FOURCC together with RGB/LUMINANCE", h.pf_flags);
    pixfmt pf;
    pixel_format(&h, &pf);
    char cc[16];
    fourcc_str(h.fourcc, cc);
    if (!pf.format) {
        if (h.dx10) kiln__rep(r, KILN__ERR, "DX10: DXGI format %u is not supported by kiln", h.dxgi);
        else if (h.pf_flags & DDPF_FOURCC) kiln__rep(r, KILN__ERR, "pixel format: FourCC '%s' is not supported by kiln", cc);
        else kiln__rep(r, KILN__ERR, "pixel format: %s", pf.why);
    }
    if (h.dx10) {
        if (h.dim != DIM_1D && h.dim != DIM_2D && h.dim != DIM_3D)
            kiln__rep(r, KILN__ERR, "DX10: resourceDimension is %u but must be 2 (1-D), 3 (2-D) or 4 (3-D)", h.dim);
        if (h.array_size == 0) kiln__rep(r, KILN__ERR, "DX10: arraySize is 0 but must be at least 1");
        if (h.misc & ~MISC_TEXTURECUBE) kiln__rep(r, KILN__WARN, "DX10: miscFlag 0x%X has unknown bits", h.misc);
        if ((h.misc2 & 7) > ALPHA_CUSTOM)
            kiln__rep(r, KILN__ERR, "DX10: alpha mode %u in miscFlags2 is not 0-4", h.misc2 & 7);
        if ((h.misc & MISC_TEXTURECUBE) && h.dim != DIM_2D)
            kiln__rep(r, KILN__ERR, "DX10: TEXTURECUBE is set but resourceDimension is %u, not 3 (2-D)", h.dim);
        if ((h.misc & MISC_TEXTURECUBE) && h.width != h.height)
            kiln__rep(r, KILN__ERR, "DX10: cube map faces must be square, not %ux%u", h.width, h.height);
        if (h.dim == DIM_3D && h.array_size > 1) kiln__rep(r, KILN__ERR, "DX10: 3-D textures cannot be arrays");
        if (h.dim == DIM_1D && h.height != 1) kiln__rep(r, KILN__ERR, "DX10: a 1-D texture has height %u, not 1", h.height);
        if (h.array_size > 2048) kiln__rep(r, KILN__ERR, "DX10: arraySize %u exceeds kiln's limit of 2048", h.array_size);
    } else {
        if ((h.caps2 & DDSCAPS2_CUBEMAP) && (h.caps2 & DDSCAPS2_ALLFACES) != DDSCAPS2_ALLFACES)
            kiln__rep(r, KILN__ERR, "caps2: cube map 0x%08X without all six faces is not supported", h.caps2);
        if ((h.caps2 & DDSCAPS2_CUBEMAP) && h.width != h.height)
            kiln__rep(r, KILN__ERR, "caps2: cube map faces must be square, not %ux%u", h.width, h.height);
    }
    if ((h.caps2 & DDSCAPS2_VOLUME) && !(h.flags & DDSD_DEPTH))
        kiln__rep(r, KILN__ERR, "header: caps2 marks a volume texture but flags lack DDSD_DEPTH (0x800000)");
    if ((h.flags & DDSD_DEPTH) && h.depth == 0) kiln__rep(r, KILN__ERR, "header: DDSD_DEPTH is set but depth is 0");
    if (h.mips > 1 && !(h.flags & DDSD_MIPMAPCOUNT))
        kiln__rep(r, KILN__WARN, "header: mipMapCount is %u but DDSD_MIPMAPCOUNT (0x20000) is not set; readers see one "
                  "level", h.mips);
    geom g;
    geometry(&h, &g);
    if (g.err) {
        kiln__rep(r, KILN__ERR, "geometry: %s", g.err);
        return;
    }
    uint32_t maxl = kiln__full_chain(g.w, g.h, g.d);
    if (g.levels > maxl) {
        kiln__rep(r, KILN__ERR, "header: mipMapCount is %u but a %ux%ux%u texture has at most %u levels", g.levels, g.w,
                  g.h, g.d, maxl);
        return;
    }
    if (g.levels > 1 && !(h.caps & DDSCAPS_MIPMAP))
        kiln__rep(r, KILN__WARN, "header: %u levels but caps lack DDSCAPS_MIPMAP (0x400000)", g.levels);
    if (!pf.format || g.w == 0 || g.h == 0 || g.w > KILN_MAX_DIMENSION || g.h > KILN_MAX_DIMENSION) return;
    const kiln_format_info *fi = kiln_format_get_info(pf.format);
    bool compressed = (fi->flags & KILN_FF_COMPRESSED) != 0;
    uint64_t top = src_image_size(&pf, g.w, g.h);
    uint64_t pitch = compressed ? top : (uint64_t)g.w * (pf.direct ? fi->block_bytes : pf.bpp);
    if (h.flags & DDSD_LINEARSIZE) {
        if (!compressed) kiln__rep(r, KILN__WARN, "header: DDSD_LINEARSIZE is set for an uncompressed format");
        else if (h.pitch != top)
            kiln__rep(r, KILN__ERR, "header: pitchOrLinearSize is %u but the top level of %s %ux%u is %llu bytes", h.pitch,
                      fi->name, g.w, g.h, (unsigned long long)top);
    } else if (h.flags & DDSD_PITCH) {
        if (compressed) kiln__rep(r, KILN__WARN, "header: DDSD_PITCH is set for a block-compressed format");
        else if (h.pitch != pitch)
            kiln__rep(r, KILN__ERR, "header: pitchOrLinearSize is %u but a row of %s %u wide is %llu bytes", h.pitch,
                      fi->name, g.w, (unsigned long long)pitch);
    } else {
        kiln__rep(r, KILN__WARN, "header: neither DDSD_PITCH nor DDSD_LINEARSIZE is set");
    }
    uint64_t need = 0;
    for (uint32_t l = 0; l < g.levels; l++)
        need += (uint64_t)src_image_size(&pf, kiln_level_dim(g.w, l), kiln_level_dim(g.h, l)) * kiln_level_dim(g.d, l);
    need *= (uint64_t)g.layers * g.faces;
    uint64_t avail = size - h.data_off;
    if (need > avail)
        kiln__rep(r, KILN__ERR, "data: %u level(s) x %u layer(s) x %u face(s) of %s %ux%u need %llu bytes but the file "
                  "holds %llu after the header", g.levels, g.layers, g.faces, fi->name, g.w, g.h,
                  (unsigned long long)need, (unsigned long long)avail);
    else if (need < avail)
        kiln__rep(r, KILN__WARN, "data: %llu bytes of trailing data after the last image",
                  (unsigned long long)(avail - need));
}

/* ================================================================ describe */

typedef struct flagname {
    uint32_t bit;
    const char *name;
} flagname;

static void flag_names(kiln__desc *d, const char *key, uint32_t v, const flagname *t, size_t n)
{
    kiln__d_arr(d, key);
    for (size_t i = 0; i < n; i++)
        if ((v & t[i].bit) == t[i].bit && t[i].bit) kiln__d_s(d, NULL, t[i].name);
    kiln__d_end(d);
}

void kiln__dds_describe(const uint8_t *p, size_t size, kiln__desc *d)
{
    kiln__d_s(d, "container", "DDS");
    if (size < HDR_SIZE) {
        kiln__d_s(d, "error", "file is shorter than the 128-byte header");
        return;
    }
    dds h;
    parse(p, size, &h);
    static const flagname hf[] = {{DDSD_CAPS, "CAPS"}, {DDSD_HEIGHT, "HEIGHT"}, {DDSD_WIDTH, "WIDTH"},
                                  {DDSD_PITCH, "PITCH"}, {DDSD_PIXELFORMAT, "PIXELFORMAT"},
                                  {DDSD_MIPMAPCOUNT, "MIPMAPCOUNT"}, {DDSD_LINEARSIZE, "LINEARSIZE"},
                                  {DDSD_DEPTH, "DEPTH"}};
    static const flagname pff[] = {{DDPF_ALPHAPIXELS, "ALPHAPIXELS"}, {DDPF_ALPHA, "ALPHA"}, {DDPF_FOURCC, "FOURCC"},
                                   {DDPF_RGB, "RGB"}, {DDPF_YUV, "YUV"}, {DDPF_LUMINANCE, "LUMINANCE"}};
    static const flagname cf[] = {{DDSCAPS_COMPLEX, "COMPLEX"}, {DDSCAPS_TEXTURE, "TEXTURE"}, {DDSCAPS_MIPMAP, "MIPMAP"}};
    static const flagname c2f[] = {{DDSCAPS2_CUBEMAP, "CUBEMAP"}, {0x400, "POSITIVEX"}, {0x800, "NEGATIVEX"},
                                   {0x1000, "POSITIVEY"}, {0x2000, "NEGATIVEY"}, {0x4000, "POSITIVEZ"},
                                   {0x8000, "NEGATIVEZ"}, {DDSCAPS2_VOLUME, "VOLUME"}};
    kiln__d_obj(d, "header");
    kiln__d_u(d, "size", h.size);
    kiln__d_x(d, "flags", h.flags, 8);
    flag_names(d, "flagNames", h.flags, hf, sizeof hf / sizeof hf[0]);
    kiln__d_u(d, "height", h.height);
    kiln__d_u(d, "width", h.width);
    kiln__d_u(d, "pitchOrLinearSize", h.pitch);
    kiln__d_u(d, "depth", h.depth);
    kiln__d_u(d, "mipMapCount", h.mips);
    kiln__d_obj(d, "pixelFormat");
    kiln__d_u(d, "size", h.pf_size);
    kiln__d_x(d, "flags", h.pf_flags, 8);
    flag_names(d, "flagNames", h.pf_flags, pff, sizeof pff / sizeof pff[0]);
    char cc[16];
    fourcc_str(h.fourcc, cc);
    kiln__d_s(d, "fourCC", h.fourcc ? cc : "");
    kiln__d_u(d, "RGBBitCount", h.bits);
    kiln__d_x(d, "RBitMask", h.mask[0], 8);
    kiln__d_x(d, "GBitMask", h.mask[1], 8);
    kiln__d_x(d, "BBitMask", h.mask[2], 8);
    kiln__d_x(d, "ABitMask", h.mask[3], 8);
    kiln__d_end(d);
    kiln__d_x(d, "caps", h.caps, 8);
    flag_names(d, "capsNames", h.caps, cf, sizeof cf / sizeof cf[0]);
    kiln__d_x(d, "caps2", h.caps2, 8);
    flag_names(d, "caps2Names", h.caps2, c2f, sizeof c2f / sizeof c2f[0]);
    kiln__d_end(d);
    if (h.dx10) {
        kiln__d_obj(d, "dx10");
        if (size < HDR_SIZE + DX10_SIZE) {
            kiln__d_s(d, "error", "the file ends inside the DX10 header");
        } else {
            bool bgra;
            kiln_format f = dxgi_to_format(h.dxgi, &bgra);
            const kiln_format_info *fi = kiln_format_get_info(f);
            static const char *dims[] = {"UNKNOWN", "BUFFER", "TEXTURE1D", "TEXTURE2D", "TEXTURE3D"};
            static const char *am[] = {"UNKNOWN", "STRAIGHT", "PREMULTIPLIED", "OPAQUE", "CUSTOM"};
            kiln__d_u(d, "dxgiFormat", h.dxgi);
            kiln__d_s(d, "dxgiFormatName", bgra ? (h.dxgi == 87 ? "B8G8R8A8_UNORM" : "B8G8R8A8_UNORM_SRGB")
                                          : fi && fi->dxgi_format == h.dxgi ? fi->dxgi_name
                                          : fi ? "typeless" : "unknown");
            kiln__d_u(d, "resourceDimension", h.dim);
            kiln__d_s(d, "resourceDimensionName", h.dim < 5 ? dims[h.dim] : "invalid");
            kiln__d_x(d, "miscFlag", h.misc, 8);
            kiln__d_b(d, "textureCube", (h.misc & MISC_TEXTURECUBE) != 0);
            kiln__d_u(d, "arraySize", h.array_size);
            kiln__d_x(d, "miscFlags2", h.misc2, 8);
            kiln__d_s(d, "alphaMode", (h.misc2 & 7) < 5 ? am[h.misc2 & 7] : "invalid");
        }
        kiln__d_end(d);
    }
    pixfmt pf;
    pixel_format(&h, &pf);
    const kiln_format_info *fi = kiln_format_get_info(pf.format);
    kiln__d_s(d, "format", fi ? fi->name : "unsupported");
    if (!fi) {
        kiln__d_s(d, "formatProblem", pf.why);
        return;
    }
    kiln__d_s(d, "alpha", pf.premultiplied ? "premultiplied" : "straight");
    kiln__d_u(d, "dataOffset", h.data_off);
    geom g;
    geometry(&h, &g);
    if (g.err) {
        kiln__d_s(d, "error", g.err);
        return;
    }
    kiln__d_u(d, "layers", g.layers);
    kiln__d_u(d, "faces", g.faces);
    kiln__d_u(d, "levels", g.levels);
    if (g.levels > 32 || g.w == 0 || g.h == 0) return;
    uint64_t slice = 0;
    kiln__d_arr(d, "levelsOfFirstImage");
    for (uint32_t l = 0; l < g.levels; l++) {
        uint32_t lw = kiln_level_dim(g.w, l), lh = kiln_level_dim(g.h, l), ld = kiln_level_dim(g.d, l);
        uint64_t img = (uint64_t)src_image_size(&pf, lw, lh) * ld;
        kiln__d_obj(d, NULL);
        kiln__d_u(d, "level", l);
        kiln__d_u(d, "width", lw);
        kiln__d_u(d, "height", lh);
        if (g.d > 1) kiln__d_u(d, "depth", ld);
        kiln__d_u(d, "byteOffset", h.data_off + slice);
        kiln__d_u(d, "byteLength", img);
        kiln__d_end(d);
        slice += img;
    }
    kiln__d_end(d);
    kiln__d_u(d, "bytesPerImageChain", slice);
    kiln__d_u(d, "expectedDataSize", slice * g.layers * g.faces);
    kiln__d_u(d, "actualDataSize", size - h.data_off > size ? 0 : size - h.data_off);
}

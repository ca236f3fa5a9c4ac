/* ktx1.c - KTX 1.1 reader, validator and describer (no writer: kiln writes KTX2).
 *
 * Layout: 12-byte identifier «KTX 11»\r\n\x1A\n; endianness (0x04030201 as written by the writer, so
 * 0x01020304 read little-endian means every u32 must be byte-swapped); glType, glTypeSize, glFormat,
 * glInternalFormat, glBaseInternalFormat, pixelWidth, pixelHeight, pixelDepth, numberOfArrayElements,
 * numberOfFaces, numberOfMipmapLevels, bytesOfKeyValueData; key/value pairs (u32 size, key NUL value,
 * padded to 4; KTXorientation "S=r,T=d" is translated to the KTX2 form "rd", other pairs are kept as
 * they are); then per level a u32 imageSize and the images. For non-array cube maps imageSize is one
 * face and each face is padded to 4 bytes; otherwise imageSize covers the whole level (array elements,
 * faces, z slices). Uncompressed rows are padded to 4 bytes (GL_UNPACK_ALIGNMENT 4); each level is
 * padded to 4 bytes. Images are ordered element, face, slice - the same as kiln_texture.
 *
 * glInternalFormat → kiln format: all S3TC/RGTC/BPTC and ETC1/ETC2/EAC enums, and GL_R8, GL_RG8,
 * GL_RGBA8 (also unsized GL_RGBA + GL_UNSIGNED_BYTE), GL_SRGB8_ALPHA8, GL_RGBA16F, GL_RGBA32F. */
#include "container/container.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const uint8_t kiln__ktx1_id[12] = {0xAB, 'K', 'T', 'X', ' ', '1', '1', 0xBB, '\r', '\n', 0x1A, '\n'};

#define HEADER_SIZE 64u
#define GL_UNSIGNED_BYTE 0x1401u
#define GL_HALF_FLOAT 0x140Bu
#define GL_FLOAT 0x1406u
#define GL_RED 0x1903u
#define GL_RG 0x8227u
#define GL_RGBA 0x1908u

static const struct glmap {
    uint32_t gl;
    kiln_format f;
    const char *name;
} k_gl[] = {
    {0x83F0, KILN_FORMAT_BC1_RGB_UNORM, "GL_COMPRESSED_RGB_S3TC_DXT1_EXT"},
    {0x83F1, KILN_FORMAT_BC1_RGBA_UNORM, "GL_COMPRESSED_RGBA_S3TC_DXT1_EXT"},
    {0x83F2, KILN_FORMAT_BC2_UNORM, "GL_COMPRESSED_RGBA_S3TC_DXT3_EXT"},
    {0x83F3, KILN_FORMAT_BC3_UNORM, "GL_COMPRESSED_RGBA_S3TC_DXT5_EXT"},
    {0x8C4C, KILN_FORMAT_BC1_RGB_SRGB, "GL_COMPRESSED_SRGB_S3TC_DXT1_EXT"},
    {0x8C4D, KILN_FORMAT_BC1_RGBA_SRGB, "GL_COMPRESSED_SRGB_ALPHA_S3TC_DXT1_EXT"},
    {0x8C4E, KILN_FORMAT_BC2_SRGB, "GL_COMPRESSED_SRGB_ALPHA_S3TC_DXT3_EXT"},
    {0x8C4F, KILN_FORMAT_BC3_SRGB, "GL_COMPRESSED_SRGB_ALPHA_S3TC_DXT5_EXT"},
    {0x8DBB, KILN_FORMAT_BC4_UNORM, "GL_COMPRESSED_RED_RGTC1"},
    {0x8DBC, KILN_FORMAT_BC4_SNORM, "GL_COMPRESSED_SIGNED_RED_RGTC1"},
    {0x8DBD, KILN_FORMAT_BC5_UNORM, "GL_COMPRESSED_RG_RGTC2"},
    {0x8DBE, KILN_FORMAT_BC5_SNORM, "GL_COMPRESSED_SIGNED_RG_RGTC2"},
    {0x8E8C, KILN_FORMAT_BC7_UNORM, "GL_COMPRESSED_RGBA_BPTC_UNORM"},
    {0x8E8D, KILN_FORMAT_BC7_SRGB, "GL_COMPRESSED_SRGB_ALPHA_BPTC_UNORM"},
    {0x8E8E, KILN_FORMAT_BC6H_SFLOAT, "GL_COMPRESSED_RGB_BPTC_SIGNED_FLOAT"},
    {0x8E8F, KILN_FORMAT_BC6H_UFLOAT, "GL_COMPRESSED_RGB_BPTC_UNSIGNED_FLOAT"},
    {0x8D64, KILN_FORMAT_ETC1_UNORM, "GL_ETC1_RGB8_OES"},
    {0x9270, KILN_FORMAT_EAC_R11_UNORM, "GL_COMPRESSED_R11_EAC"},
    {0x9271, KILN_FORMAT_EAC_R11_SNORM, "GL_COMPRESSED_SIGNED_R11_EAC"},
    {0x9272, KILN_FORMAT_EAC_RG11_UNORM, "GL_COMPRESSED_RG11_EAC"},
    {0x9273, KILN_FORMAT_EAC_RG11_SNORM, "GL_COMPRESSED_SIGNED_RG11_EAC"},
    {0x9274, KILN_FORMAT_ETC2_RGB8_UNORM, "GL_COMPRESSED_RGB8_ETC2"},
    {0x9275, KILN_FORMAT_ETC2_RGB8_SRGB, "GL_COMPRESSED_SRGB8_ETC2"},
    {0x9276, KILN_FORMAT_ETC2_RGB8A1_UNORM, "GL_COMPRESSED_RGB8_PUNCHTHROUGH_ALPHA1_ETC2"},
    {0x9277, KILN_FORMAT_ETC2_RGB8A1_SRGB, "GL_COMPRESSED_SRGB8_PUNCHTHROUGH_ALPHA1_ETC2"},
    {0x9278, KILN_FORMAT_ETC2_RGBA8_UNORM, "GL_COMPRESSED_RGBA8_ETC2_EAC"},
    {0x9279, KILN_FORMAT_ETC2_RGBA8_SRGB, "GL_COMPRESSED_SRGB8_ALPHA8_ETC2_EAC"},
    {0x8229, KILN_FORMAT_R8_UNORM, "GL_R8"},
    {0x822B, KILN_FORMAT_RG8_UNORM, "GL_RG8"},
    {0x8058, KILN_FORMAT_RGBA8_UNORM, "GL_RGBA8"},
    {0x8C43, KILN_FORMAT_RGBA8_SRGB, "GL_SRGB8_ALPHA8"},
    {0x881A, KILN_FORMAT_RGBA16F, "GL_RGBA16F"},
    {0x8814, KILN_FORMAT_RGBA32F, "GL_RGBA32F"},
};

static const struct glmap *gl_lookup(uint32_t internal, uint32_t format, uint32_t type)
{
    for (size_t i = 0; i < sizeof k_gl / sizeof k_gl[0]; i++)
        if (k_gl[i].gl == internal) return &k_gl[i];
    static const struct glmap rgba = {GL_RGBA, KILN_FORMAT_RGBA8_UNORM, "GL_RGBA"};
    if (internal == GL_RGBA && format == GL_RGBA && type == GL_UNSIGNED_BYTE) return &rgba;
    return NULL;
}

typedef struct k1 {
    bool swap;
    uint32_t endianness;
    uint32_t gl_type, gl_type_size, gl_format, gl_internal, gl_base, w, h, d, elements, faces, levels, kvd_len;
} k1;

static void parse_header(const uint8_t *p, k1 *h)
{
    h->endianness = kiln__rd32(p + 12);
    h->swap = h->endianness == 0x01020304u;
    uint32_t v[12];
    for (int i = 0; i < 12; i++) {
        v[i] = kiln__rd32(p + 16 + 4 * i);
        if (h->swap) v[i] = kiln__bswap32(v[i]);
    }
    h->gl_type = v[0], h->gl_type_size = v[1], h->gl_format = v[2], h->gl_internal = v[3], h->gl_base = v[4];
    h->w = v[5], h->h = v[6], h->d = v[7], h->elements = v[8], h->faces = v[9], h->levels = v[10], h->kvd_len = v[11];
}

static uint32_t rd(const k1 *h, const uint8_t *p)
{
    uint32_t v = kiln__rd32(p);
    return h->swap ? kiln__bswap32(v) : v;
}

static size_t pad4(size_t n) { return (n + 3) & ~(size_t)3; }

/* Bytes of one image (one face / element / slice) of a level as KTX 1 stores it: compressed images are
 * whole blocks; uncompressed rows are padded to 4 bytes. 0 on overflow. */
static size_t k1_image_size(const kiln_format_info *fi, uint32_t w, uint32_t h)
{
    if (fi->flags & KILN_FF_COMPRESSED) return kiln_format_image_size(fi->format, w, h);
    size_t row = pad4((size_t)w * fi->block_bytes), n;
    if (!kiln__mul_size(row, h, &n)) return 0;
    return n;
}

/* "S=r,T=d" or "S=r,T=d,R=i" (any order of the letters' values) to "rd" / "rdi"; false when malformed. */
static bool ktx1_orientation(const uint8_t *v, uint32_t n, char out[4])
{
    char s[16];
    if (n == 0 || n > sizeof s || v[n - 1] != 0) return false;
    memcpy(s, v, n);
    char a, b, c;
    int k = 0;
    if (sscanf(s, "S=%c,T=%c,R=%c%n", &a, &b, &c, &k) == 3 && k == (int)strlen(s)) {
        if (!strchr("rl", a) || !strchr("du", b) || !strchr("oi", c)) return false;
        out[0] = a, out[1] = b, out[2] = c, out[3] = 0;
        return true;
    }
    k = 0;
    if (sscanf(s, "S=%c,T=%c%n", &a, &b, &k) == 2 && k == (int)strlen(s)) {
        if (!strchr("rl", a) || !strchr("du", b)) return false;
        out[0] = a, out[1] = b, out[2] = 0;
        return true;
    }
    return false;
}

static kiln_status read_kvd(kiln_context *ctx, const char *name, const k1 *h, const uint8_t *p, uint32_t n,
                            kiln_texture *tex)
{
    uint32_t off = 0;
    while (n - off >= 4) {
        uint32_t len = rd(h, p + off);
        if (len > n - off - 4)
            return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: key/value entry at offset %u claims %u bytes but only %u are "
                              "left", name, off, len, n - off - 4);
        const uint8_t *e = p + off + 4;
        const uint8_t *nul = memchr(e, 0, len);
        if (nul && nul != e) {
            uint32_t klen = (uint32_t)(nul - e);
            const uint8_t *v = nul + 1;
            uint32_t vn = len - klen - 1;
            if (!strcmp((const char *)e, "KTXorientation")) {
                /* KTX 1 writes "S=r,T=d[,R=i]"; kiln's metadata follows KTX2 ("rd[i]") */
                char o[4];
                if (ktx1_orientation(v, vn, o)) KILN_TRY(kiln__texture_add_kv(ctx, tex, "KTXorientation",
                                                                              (const uint8_t *)o, (uint32_t)strlen(o) + 1));
            } else {
                KILN_TRY(kiln__texture_add_kv(ctx, tex, (const char *)e, v, vn));
            }
        }
        uint64_t next = (uint64_t)off + 4 + pad4(len);
        if (next > n) break;
        off = (uint32_t)next;
    }
    kiln__texture_sort_kv(tex);
    return KILN_OK;
}

kiln_status kiln__ktx1_load(kiln_context *ctx, const char *name, const uint8_t *p, size_t size, kiln_texture *out)
{
    if (size < HEADER_SIZE)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: %zu bytes, shorter than the %u-byte KTX header", name, size,
                          HEADER_SIZE);
    k1 h;
    parse_header(p, &h);
    if (h.endianness != 0x04030201u && !h.swap)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: endianness field is 0x%08X (must be 0x04030201)", name, h.endianness);
    const struct glmap *m = gl_lookup(h.gl_internal, h.gl_format, h.gl_type);
    if (!m)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: glInternalFormat 0x%04X is not a format kiln supports", name,
                          h.gl_internal);
    const kiln_format_info *fi = kiln_format_get_info(m->f);
    bool compressed = (fi->flags & KILN_FF_COMPRESSED) != 0;
    if (h.w == 0) return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: pixelWidth is 0", name);
    if (h.levels == 0 && compressed)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: numberOfMipmapLevels is 0 for the block-compressed %s", name,
                          fi->name);
    if (h.levels > KILN_MAX_LEVELS)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: numberOfMipmapLevels %u is more than any texture can have", name,
                          h.levels);
    uint32_t levels = h.levels ? h.levels : 1;
    uint32_t layers = h.elements ? h.elements : 1;
    KILN_TRY(kiln__texture_geometry(ctx, name, out, m->f, h.w, h.h ? h.h : 1, h.d ? h.d : 1, layers, h.faces, levels));
    out->is_array = h.elements > 0;
    if (h.kvd_len > size - HEADER_SIZE)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: bytesOfKeyValueData %u extends past the end of the file", name,
                          h.kvd_len);
    if (out->data_size > size)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: a %ux%u %s texture needs %zu bytes of data; the file has only %zu",
                          name, h.w, h.h, fi->name, out->data_size, size);
    KILN_TRY(read_kvd(ctx, name, &h, p + HEADER_SIZE, h.kvd_len, out));
    /* walk the levels once to check every size before allocating */
    bool cube_faces = h.faces == 6 && h.elements == 0;
    size_t off = HEADER_SIZE + (size_t)h.kvd_len;
    size_t offs[KILN_MAX_LEVELS];
    for (uint32_t l = 0; l < levels; l++) {
        uint32_t lw = kiln_level_dim(out->width, l), lh = kiln_level_dim(out->height, l);
        uint32_t ld = kiln_level_dim(out->depth, l);
        size_t img = k1_image_size(fi, lw, lh), per_image = img * ld; /* one face/element: slices */
        size_t want = cube_faces ? per_image : per_image * layers * h.faces;
        if (size - off < 4)
            return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: the file ends before the imageSize of level %u", name, l);
        uint32_t image_size = rd(&h, p + off);
        off += 4;
        if (image_size != want)
            return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: level %u imageSize is %u but a %ux%u level of %s needs %zu", name,
                              l, image_size, lw, lh, fi->name, want);
        size_t total = cube_faces ? pad4(want) * 6 : pad4(want);
        if (total > size - off)
            return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: level %u (%zu bytes at offset %zu) extends past the end of the "
                              "file (%zu bytes)", name, l, total, off, size);
        offs[l] = off;
        off += total;
    }
    out->data = kiln__malloc(ctx, out->data_size);
    if (!out->data) return KILN_ERR_OUT_OF_MEMORY;
    uint32_t swap_size = (h.swap && !compressed && (h.gl_type_size == 2 || h.gl_type_size == 4)) ? h.gl_type_size : 0;
    for (uint32_t l = 0; l < levels; l++) {
        uint32_t lw = kiln_level_dim(out->width, l), lh = kiln_level_dim(out->height, l);
        uint32_t ld = kiln_level_dim(out->depth, l);
        size_t img = k1_image_size(fi, lw, lh);
        size_t packed_row = compressed ? 0 : (size_t)lw * fi->block_bytes, row = pad4(packed_row);
        size_t dst_img = kiln_format_image_size(m->f, lw, lh);
        const uint8_t *src = p + offs[l];
        uint8_t *dst = out->data + out->level_offset[l];
        size_t images = (size_t)layers * h.faces * ld;
        for (size_t i = 0; i < images; i++) {
            const uint8_t *s = src;
            if (cube_faces) s = src + (i / ld) * pad4(img * ld) + (i % ld) * img;
            else s = src + i * img;
            uint8_t *dd = dst + i * dst_img;
            if (compressed || row == packed_row) memcpy(dd, s, dst_img);
            else
                for (uint32_t y = 0; y < lh; y++) memcpy(dd + y * packed_row, s + y * row, packed_row);
        }
        if (swap_size == 2)
            for (size_t i = 0; i + 1 < out->level_size[l]; i += 2) {
                uint8_t t = dst[i];
                dst[i] = dst[i + 1];
                dst[i + 1] = t;
            }
        else if (swap_size == 4)
            for (size_t i = 0; i + 3 < out->level_size[l]; i += 4) kiln__set32(dst + i, kiln__bswap32(kiln__rd32(dst + i)));
    }
    return KILN_OK;
}

/* ================================================================ validator */

void kiln__ktx1_validate(kiln_context *ctx, const uint8_t *p, size_t size, kiln__report *r)
{
    (void)ctx;
    if (size < HEADER_SIZE) {
        kiln__rep(r, KILN__ERR, "header: file is %zu bytes, shorter than the %u-byte KTX header", size, HEADER_SIZE);
        return;
    }
    k1 h;
    parse_header(p, &h);
    if (h.endianness != 0x04030201u && !h.swap) {
        kiln__rep(r, KILN__ERR, "header: endianness is 0x%08X but must be 0x04030201 (either byte order)", h.endianness);
        return;
    }
    const struct glmap *m = gl_lookup(h.gl_internal, h.gl_format, h.gl_type);
    const kiln_format_info *fi = m ? kiln_format_get_info(m->f) : NULL;
    bool compressed = fi && (fi->flags & KILN_FF_COMPRESSED);
    if (!m) kiln__rep(r, KILN__ERR, "header: glInternalFormat 0x%04X is not supported by kiln", h.gl_internal);
    if (compressed && (h.gl_type != 0 || h.gl_format != 0))
        kiln__rep(r, KILN__ERR, "header: glType 0x%X and glFormat 0x%X must be 0 for the compressed %s", h.gl_type,
                  h.gl_format, m->name);
    if (compressed && h.gl_type_size != 1)
        kiln__rep(r, KILN__ERR, "header: glTypeSize is %u but must be 1 for compressed formats", h.gl_type_size);
    if (fi && !compressed) {
        uint32_t type = (fi->flags & KILN_FF_FLOAT) ? (fi->block_bytes == 8 ? GL_HALF_FLOAT : GL_FLOAT) : GL_UNSIGNED_BYTE;
        uint32_t format = fi->channels == 1 ? GL_RED : fi->channels == 2 ? GL_RG : GL_RGBA;
        uint32_t tsize = fi->block_bytes / fi->channels;
        if (h.gl_type != type) kiln__rep(r, KILN__ERR, "header: glType is 0x%X but %s needs 0x%X", h.gl_type, m->name, type);
        if (h.gl_format != format)
            kiln__rep(r, KILN__ERR, "header: glFormat is 0x%X but %s needs 0x%X", h.gl_format, m->name, format);
        if (h.gl_type_size != tsize)
            kiln__rep(r, KILN__ERR, "header: glTypeSize is %u but %s needs %u", h.gl_type_size, m->name, tsize);
    }
    if (h.w == 0) kiln__rep(r, KILN__ERR, "header: pixelWidth is 0");
    if (h.h == 0 && h.d != 0) kiln__rep(r, KILN__ERR, "header: pixelHeight is 0 but pixelDepth is %u", h.d);
    if (h.h == 0 && compressed) kiln__rep(r, KILN__ERR, "header: pixelHeight is 0 for a compressed format");
    if (h.faces != 1 && h.faces != 6) kiln__rep(r, KILN__ERR, "header: numberOfFaces is %u but must be 1 or 6", h.faces);
    if (h.faces == 6 && (h.w != h.h || h.d != 0))
        kiln__rep(r, KILN__ERR, "header: cube map faces must be square and 2-D, not %ux%ux%u", h.w, h.h, h.d);
    uint32_t maxl = kiln__full_chain(h.w, h.h, h.d);
    if (h.levels > maxl)
        kiln__rep(r, KILN__ERR, "header: numberOfMipmapLevels is %u but a %ux%ux%u texture has at most %u", h.levels,
                  h.w, h.h, h.d, maxl);
    if (h.levels == 0 && compressed)
        kiln__rep(r, KILN__ERR, "header: numberOfMipmapLevels is 0 (generate) for a compressed format");
    if (h.kvd_len % 4) kiln__rep(r, KILN__ERR, "header: bytesOfKeyValueData %u is not a multiple of 4", h.kvd_len);
    if (h.kvd_len > size - HEADER_SIZE) {
        kiln__rep(r, KILN__ERR, "KVD: bytesOfKeyValueData %u extends past the end of the file", h.kvd_len);
        return;
    }
    /* key/value entries */
    const uint8_t *k = p + HEADER_SIZE;
    uint32_t off = 0;
    while (off < h.kvd_len) {
        if (h.kvd_len - off < 4) {
            kiln__rep(r, KILN__ERR, "KVD: %u stray bytes at the end", h.kvd_len - off);
            break;
        }
        uint32_t len = rd(&h, k + off);
        if (len > h.kvd_len - off - 4) {
            kiln__rep(r, KILN__ERR, "KVD: entry at offset %u claims %u bytes but only %u are left", off, len,
                      h.kvd_len - off - 4);
            break;
        }
        if (!memchr(k + off + 4, 0, len)) kiln__rep(r, KILN__ERR, "KVD: entry at offset %u has no NUL after its key", off);
        uint64_t next = (uint64_t)off + 4 + pad4(len);
        if (next > h.kvd_len) {
            kiln__rep(r, KILN__ERR, "KVD: the padding of the entry at offset %u runs past bytesOfKeyValueData", off);
            break;
        }
        off = (uint32_t)next;
    }
    if (!fi || h.w == 0 || h.levels > maxl || (h.faces != 1 && h.faces != 6) || h.w > KILN_MAX_DIMENSION ||
        h.h > KILN_MAX_DIMENSION || h.d > KILN_MAX_DIMENSION || h.elements > 2048)
        return;
    uint32_t levels = h.levels ? h.levels : 1, layers = h.elements ? h.elements : 1;
    bool cube_faces = h.faces == 6 && h.elements == 0;
    uint64_t pos = HEADER_SIZE + (uint64_t)h.kvd_len;
    for (uint32_t l = 0; l < levels; l++) {
        uint32_t lw = kiln_level_dim(h.w, l), lh = kiln_level_dim(h.h ? h.h : 1, l), ld = kiln_level_dim(h.d ? h.d : 1, l);
        uint64_t img = (uint64_t)k1_image_size(fi, lw, lh) * ld;
        uint64_t want = cube_faces ? img : img * layers * h.faces;
        if (size - pos < 4) {
            kiln__rep(r, KILN__ERR, "level %u: the file ends before its imageSize", l);
            return;
        }
        uint32_t is = rd(&h, p + pos);
        if (is != want)
            kiln__rep(r, KILN__ERR, "level %u: imageSize is %u but a %ux%u level of %s needs %llu", l, is, lw, lh, m->name,
                      (unsigned long long)want);
        pos += 4;
        uint64_t total = cube_faces ? ((want + 3) & ~3ull) * 6 : (want + 3) & ~3ull;
        if (total > size - pos) {
            kiln__rep(r, KILN__ERR, "level %u: %llu bytes at offset %llu extend past the end of the file (%zu bytes)", l,
                      (unsigned long long)total, (unsigned long long)pos, size);
            return;
        }
        pos += total;
    }
    if (pos < size) kiln__rep(r, KILN__WARN, "file: %llu bytes of trailing data", (unsigned long long)(size - pos));
}

/* ================================================================ describe */

void kiln__ktx1_describe(const uint8_t *p, size_t size, kiln__desc *d)
{
    kiln__d_s(d, "container", "KTX1");
    if (size < HEADER_SIZE) {
        kiln__d_s(d, "error", "file is shorter than the 64-byte header");
        return;
    }
    k1 h;
    parse_header(p, &h);
    const struct glmap *m = gl_lookup(h.gl_internal, h.gl_format, h.gl_type);
    kiln__d_obj(d, "header");
    kiln__d_x(d, "endianness", h.endianness, 8);
    kiln__d_s(d, "byteOrder", h.swap ? "big-endian" : h.endianness == 0x04030201u ? "little-endian" : "invalid");
    kiln__d_x(d, "glType", h.gl_type, 4);
    kiln__d_u(d, "glTypeSize", h.gl_type_size);
    kiln__d_x(d, "glFormat", h.gl_format, 4);
    kiln__d_x(d, "glInternalFormat", h.gl_internal, 4);
    kiln__d_s(d, "glInternalFormatName", m ? m->name : "unknown");
    kiln__d_x(d, "glBaseInternalFormat", h.gl_base, 4);
    kiln__d_u(d, "pixelWidth", h.w);
    kiln__d_u(d, "pixelHeight", h.h);
    kiln__d_u(d, "pixelDepth", h.d);
    kiln__d_u(d, "numberOfArrayElements", h.elements);
    kiln__d_u(d, "numberOfFaces", h.faces);
    kiln__d_u(d, "numberOfMipmapLevels", h.levels);
    kiln__d_u(d, "bytesOfKeyValueData", h.kvd_len);
    kiln__d_end(d);
    kiln__d_s(d, "format", m ? kiln_format_get_info(m->f)->name : "unsupported");
    kiln__d_arr(d, "keyValueData");
    uint32_t kvd = h.kvd_len <= size - HEADER_SIZE ? h.kvd_len : 0, off = 0;
    const uint8_t *k = p + HEADER_SIZE;
    while (kvd - off >= 4) {
        uint32_t len = rd(&h, k + off);
        if (len > kvd - off - 4) break;
        const uint8_t *e = k + off + 4, *nul = memchr(e, 0, len);
        if (!nul) break;
        kiln__d_obj(d, NULL);
        kiln__d_s(d, "key", (const char *)e);
        kiln__d_bytes(d, "value", nul + 1, len - (size_t)(nul - e) - 1);
        kiln__d_end(d);
        uint64_t next = (uint64_t)off + 4 + pad4(len);
        if (next > kvd) break;
        off = (uint32_t)next;
    }
    kiln__d_end(d);
    kiln__d_arr(d, "levels");
    uint64_t pos = HEADER_SIZE + (uint64_t)kvd;
    bool cube_faces = h.faces == 6 && h.elements == 0;
    uint32_t n = h.levels ? h.levels : 1;
    for (uint32_t l = 0; l < n && l < 32 && size - pos >= 4; l++) {
        uint32_t is = rd(&h, p + pos);
        kiln__d_obj(d, NULL);
        kiln__d_u(d, "level", l);
        kiln__d_u(d, "width", kiln_level_dim(h.w, l));
        kiln__d_u(d, "height", kiln_level_dim(h.h ? h.h : 1, l));
        kiln__d_u(d, "imageSize", is);
        kiln__d_u(d, "dataOffset", pos + 4);
        kiln__d_end(d);
        uint64_t total = cube_faces ? (((uint64_t)is + 3) & ~3ull) * 6 : ((uint64_t)is + 3) & ~3ull;
        if (total > size - pos - 4) break;
        pos += 4 + total;
    }
    kiln__d_end(d);
}

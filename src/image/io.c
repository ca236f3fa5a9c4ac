/* io.c - reading and writing image files.
 *
 * Input:  PNG, JPEG, TGA and BMP are decoded by stb_image (uncompressed 24/32-bit BMPs by kiln
 *         itself, PNG by libpng with KILN_PNG_LIBPNG=1, both giving stb_image's pixels: see their
 *         sections), but only after kiln has walked the file itself: the walk gives the dimensions
 *         (checked against kiln's limits before anything is allocated), catches truncation (stb_image
 *         silently zero-fills truncated JPEG, TGA and BMP data) and rejects sizes the compressed data
 *         cannot possibly hold. Radiance HDR has its own decoder here: stb_image 2.27 loops forever on
 *         a zero run length and reads uninitialised bytes from truncated files; the conversion is the
 *         same as stb_image's (c * 2^(e-136)).
 *         OpenEXR goes through OpenEXRCore (the C API), reading from memory, chunks in parallel.
 * Output: PNG through libpng, OpenEXR through OpenEXRCore, both serialised in memory and then written
 *         atomically with kiln__write_file_atomic.
 * stb_image's global settings (flip, unpremultiply, ...) are never touched. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif
#include "image/image_io.h"
#include "image/color.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openexr.h>
#include <png.h>
#include <stb/stb_image.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef KILN_HAVE_OPENEXR_CXX
#include <ImfCRgbaFile.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

#define MEMORY_NAME "image in memory"

/* ---------------------------------------------------------------- small helpers -------------- */

static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static uint32_t le16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t le32(const uint8_t *p) { return le16(p) | le16(p + 2) << 16; }

static kiln_status check_dims(kiln_context *ctx, const char *name, const char *what, uint64_t w, uint64_t h)
{
    if (w == 0 || h == 0)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: %s image has no pixels (%llux%llu)", name, what,
                          (unsigned long long)w, (unsigned long long)h);
    if (w > KILN_MAX_DIMENSION || h > KILN_MAX_DIMENSION || w * h > KILN_MAX_PIXELS)
        return kiln__fail(ctx, KILN_ERR_TOO_LARGE,
                          "%s: %s image of %llux%llu pixels exceeds kiln's limit (%u per side, %llu pixels)", name,
                          what, (unsigned long long)w, (unsigned long long)h, KILN_MAX_DIMENSION,
                          (unsigned long long)KILN_MAX_PIXELS);
    return KILN_OK;
}

static size_t image_bytes(const kiln_image *img)
{
    return (size_t)img->width * img->height * 4 * (size_t)img->type;
}

/* ---------------------------------------------------------------- format detection ----------- */

typedef enum file_kind { K_UNKNOWN, K_PNG, K_JPEG, K_BMP, K_TGA, K_HDR, K_EXR } file_kind;

static const char *kind_name(file_kind k)
{
    switch (k) {
    case K_PNG: return "PNG";
    case K_JPEG: return "JPEG";
    case K_BMP: return "BMP";
    case K_TGA: return "TGA";
    case K_HDR: return "Radiance HDR";
    case K_EXR: return "OpenEXR";
    default: return "unknown";
    }
}

static int starts(const uint8_t *d, size_t n, const char *magic, size_t m) { return n >= m && !memcmp(d, magic, m); }

static file_kind sniff(const uint8_t *d, size_t n, const char **other)
{
    *other = NULL;
    if (starts(d, n, "\x89PNG\r\n\x1a\n", 8)) return K_PNG;
    if (starts(d, n, "\xff\xd8", 2)) return K_JPEG;
    if (starts(d, n, "BM", 2)) return K_BMP;
    if (starts(d, n, "#?RADIANCE\n", 11) || starts(d, n, "#?RGBE\n", 7)) return K_HDR;
    if (starts(d, n, "\x76\x2f\x31\x01", 4)) return K_EXR;
    /* formats stb_image would take but kiln does not offer (none of them is a plausible TGA header) */
    if (starts(d, n, "GIF8", 4)) *other = "GIF";
    else if (starts(d, n, "8BPS", 4)) *other = "PSD";
    else if (starts(d, n, "\x53\x80\xf6\x34", 4)) *other = "Softimage PIC";
    else if (starts(d, n, "P5", 2) || starts(d, n, "P6", 2)) *other = "PNM";
    else if (starts(d, n, "RIFF", 4)) *other = "RIFF (WebP?)";
    if (*other) return K_UNKNOWN;
    return K_TGA; /* TGA has no magic number; tga_probe decides */
}

/* ---------------------------------------------------------------- probes --------------------- */

typedef struct probe {
    uint32_t w, h;
    uint32_t channels; /* 0: take stb_image's */
    int is16;
} probe;

static kiln_status png_probe(kiln_context *ctx, const char *name, const uint8_t *d, size_t n, probe *pr)
{
    size_t pos = 8;
    int have_ihdr = 0, trns = 0;
    unsigned depth = 0, ct = 0;
    uint64_t idat = 0;
    for (;;) {
        if (n - pos < 12)
            return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: PNG is truncated (%zu bytes, no IEND chunk)", name, n);
        uint32_t len = be32(d + pos);
        const uint8_t *type = d + pos + 4, *c = d + pos + 8;
        if (len > 0x7fffffffu)
            return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: PNG chunk at byte %zu has an invalid length", name, pos);
        if ((uint64_t)len + 12 > n - pos)
            return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: PNG is truncated (chunk '%.4s' of %u bytes at byte %zu)",
                              name, (const char *)type, len, pos);
        if (!have_ihdr) {
            if (!memcmp(type, "CgBI", 4)) { /* Apple's variant: stb_image accepts it before IHDR */
                pos += 12 + (size_t)len;
                continue;
            }
            if (memcmp(type, "IHDR", 4) || len != 13)
                return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: PNG does not start with an IHDR chunk", name);
            uint32_t w = be32(c), h = be32(c + 4);
            depth = c[8];
            ct = c[9];
            KILN_TRY(check_dims(ctx, name, "PNG", w, h));
            int ok = (ct == 0 && (depth == 1 || depth == 2 || depth == 4 || depth == 8 || depth == 16)) ||
                     (ct == 3 && (depth == 1 || depth == 2 || depth == 4 || depth == 8)) ||
                     ((ct == 2 || ct == 4 || ct == 6) && (depth == 8 || depth == 16));
            if (!ok)
                return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: PNG colour type %u with bit depth %u is invalid", name,
                                  ct, depth);
            if (c[10] != 0 || c[11] != 0 || c[12] > 1)
                return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: PNG has an invalid compression, filter or interlace method",
                                  name);
            pr->w = w;
            pr->h = h;
            have_ihdr = 1;
        } else if (!memcmp(type, "IDAT", 4)) {
            idat += len;
        } else if (!memcmp(type, "tRNS", 4)) {
            trns = 1;
        } else if (!memcmp(type, "IEND", 4)) {
            break;
        }
        pos += 12 + (size_t)len;
    }
    static const unsigned samples[7] = {1, 0, 3, 1, 2, 0, 4};
    uint64_t row = ((uint64_t)pr->w * depth * samples[ct] + 7) / 8 + 1;
    /* deflate cannot expand data more than 1032 times (a 258-byte match in 2 bits) */
    if (row * pr->h > idat * 1040 + 4096)
        return kiln__fail(ctx, KILN_ERR_CORRUPT,
                          "%s: PNG image data (%llu bytes) is too short for %ux%u pixels (truncated or corrupt)", name,
                          (unsigned long long)idat, pr->w, pr->h);
    static const unsigned chans[7] = {1, 0, 3, 3, 2, 0, 4};
    pr->channels = chans[ct] + (trns && ct != 4 && ct != 6 ? 1u : 0u); /* a tRNS chunk adds alpha */
    pr->is16 = depth == 16;
    return KILN_OK;
}

/* Walks the JPEG segments up to EOI. Besides sizes and truncation it checks the tables and headers
 * stb_image 2.27 trusts too much: a Huffman table with more than 256 codes overflows its arrays (fixed
 * upstream in 2.28), and scans may use tables that were never defined. */
static kiln_status jpeg_probe(kiln_context *ctx, const char *name, const uint8_t *d, size_t n, probe *pr)
{
    size_t pos = 2;
    unsigned sof = 0, scans = 0, ncomp = 0;
    uint8_t comp_id[4] = {0};
    uint8_t huff[2][4] = {{0}}; /* [class][id] defined */
    uint64_t entropy = 0;
#define JPEG_BAD(what) kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: JPEG %s (segment at byte %zu)", name, what, pos - 2)
    for (;;) {
        while (pos + 1 < n && d[pos] == 0xff && d[pos + 1] == 0xff) pos++; /* fill bytes */
        if (pos + 2 > n)
            return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: JPEG is truncated (no end-of-image marker in %zu bytes)",
                              name, n);
        if (d[pos] != 0xff)
            return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: JPEG has garbage where a marker belongs (byte %zu)", name, pos);
        unsigned m = d[pos + 1];
        pos += 2;
        if (m == 0xd9) break;                                 /* EOI */
        if ((m >= 0xd0 && m <= 0xd7) || m == 0x01) continue; /* stand-alone markers */
        if (m == 0xd8 || m == 0x00) return JPEG_BAD("has an unexpected marker");
        if (n - pos < 2) return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: JPEG is truncated (marker 0x%02X)", name, m);
        uint32_t len = (uint32_t)d[pos] << 8 | d[pos + 1];
        if (len < 2 || len > n - pos) return JPEG_BAD("segment is truncated or has a bad length");
        const uint8_t *s = d + pos + 2;
        size_t sl = len - 2;
        if (m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc) { /* SOFn */
            if (m > 0xc2)
                return kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                                  "%s: JPEG process 0x%02X (lossless, hierarchical or arithmetic) is not supported",
                                  name, m);
            if (sof) return JPEG_BAD("has two frame headers");
            if (sl < 6) return JPEG_BAD("frame header is too short");
            if (s[0] != 8)
                return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: %u-bit JPEG is not supported (only 8-bit)", name, s[0]);
            pr->h = (uint32_t)s[1] << 8 | s[2];
            pr->w = (uint32_t)s[3] << 8 | s[4];
            ncomp = s[5];
            if (ncomp != 1 && ncomp != 3 && ncomp != 4) return JPEG_BAD("frame has an unsupported component count");
            if (sl != 6 + 3 * (size_t)ncomp) return JPEG_BAD("frame header has a bad length");
            for (unsigned c = 0; c < ncomp; c++) {
                const uint8_t *cs = s + 6 + 3 * c;
                unsigned hs = cs[1] >> 4, vs = cs[1] & 15;
                if (hs < 1 || hs > 4 || vs < 1 || vs > 4 || cs[2] > 3) return JPEG_BAD("frame has a bad component");
                comp_id[c] = cs[0];
            }
            if (pr->h == 0)
                return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: JPEG defines its height later (DNL): not supported", name);
            KILN_TRY(check_dims(ctx, name, "JPEG", pr->w, pr->h));
            sof = m;
        } else if (m == 0xc4) { /* DHT */
            size_t q = 0;
            while (q < sl) {
                if (sl - q < 17) return JPEG_BAD("Huffman table is truncated");
                unsigned tc = s[q] >> 4, th = s[q] & 15, count = 0;
                if (tc > 1 || th > 3) return JPEG_BAD("Huffman table has a bad class or id");
                for (int i = 1; i <= 16; i++) count += s[q + (size_t)i];
                if (count > 256 || sl - q - 17 < count) return JPEG_BAD("Huffman table has too many codes");
                huff[tc][th] = 1;
                q += 17 + count;
            }
        } else if (m == 0xda) { /* SOS */
            if (!sof) return JPEG_BAD("scan comes before the frame header");
            if (++scans > 256) return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: JPEG has more than 256 scans", name);
            unsigned ns = sl ? s[0] : 0;
            if (ns < 1 || ns > 4 || ns > ncomp || sl != 4 + 2 * (size_t)ns) return JPEG_BAD("scan header is invalid");
            unsigned ss = s[1 + 2 * ns], ah = s[3 + 2 * ns] >> 4;
            for (unsigned k = 0; k < ns; k++) {
                unsigned id = s[1 + 2 * k], td = s[2 + 2 * k] >> 4, ta = s[2 + 2 * k] & 15;
                int found = 0;
                for (unsigned c = 0; c < ncomp; c++) found |= comp_id[c] == id;
                if (!found || td > 3 || ta > 3) return JPEG_BAD("scan names an unknown component or table");
                int need_dc = sof != 0xc2 || (ss == 0 && ah == 0), need_ac = sof != 0xc2 || ss != 0;
                if ((need_dc && !huff[0][td]) || (need_ac && !huff[1][ta]))
                    return JPEG_BAD("scan uses an undefined Huffman table");
            }
        }
        pos += len;
        if (m == 0xda) { /* entropy-coded data follows, up to the next real marker */
            size_t start = pos;
            for (;;) {
                if (pos + 1 >= n)
                    return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: JPEG is truncated inside scan %u", name, scans);
                if (d[pos] == 0xff && d[pos + 1] != 0x00 && !(d[pos + 1] >= 0xd0 && d[pos + 1] <= 0xd7)) break;
                pos += d[pos] == 0xff ? 2 : 1;
            }
            entropy += pos - start;
        }
    }
#undef JPEG_BAD
    if (!sof || scans == 0)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: JPEG has no %s", name, sof ? "scan" : "frame header");
    /* every 8x8 block of the full-resolution component costs at least one bit in its first scan */
    uint64_t blocks = (uint64_t)((pr->w + 7) / 8) * ((pr->h + 7) / 8);
    if (blocks > entropy * 8 + 64)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: JPEG data (%llu bytes) is too short for %ux%u pixels", name,
                          (unsigned long long)entropy, pr->w, pr->h);
    return KILN_OK;
}

static kiln_status bmp_probe(kiln_context *ctx, const char *name, const uint8_t *d, size_t n, probe *pr)
{
    if (n < 26) return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: BMP header is truncated", name);
    uint32_t off = le32(d + 10), hsz = le32(d + 14);
    int64_t w, h;
    uint32_t bpp, comp = 0;
    if (hsz == 12) {
        w = le16(d + 18);
        h = le16(d + 20);
        bpp = le16(d + 24);
    } else if (hsz == 40 || hsz == 56 || hsz == 108 || hsz == 124) {
        if (n < 14 + (size_t)hsz) return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: BMP header is truncated", name);
        w = (int32_t)le32(d + 18);
        h = (int32_t)le32(d + 22);
        bpp = le16(d + 28);
        comp = le32(d + 30);
    } else {
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: BMP header of %u bytes is not supported", name, hsz);
    }
    if (comp != 0 && comp != 3)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: BMP compression %u (RLE/JPEG/PNG) is not supported", name, comp);
    if (bpp != 1 && bpp != 4 && bpp != 8 && bpp != 16 && bpp != 24 && bpp != 32)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: BMP with %u bits per pixel is not supported", name, bpp);
    if (h < 0) h = -h;
    if (w <= 0) return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: BMP width %lld is invalid", name, (long long)w);
    KILN_TRY(check_dims(ctx, name, "BMP", (uint64_t)w, (uint64_t)h));
    uint64_t stride = ((uint64_t)w * bpp + 31) / 32 * 4;
    if (off < 14 + hsz || (uint64_t)off + stride * (uint64_t)h > n)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: BMP pixel data is truncated (%zu bytes, %llu needed)", name, n,
                          (unsigned long long)((uint64_t)off + stride * (uint64_t)h));
    pr->w = (uint32_t)w;
    pr->h = (uint32_t)h;
    return KILN_OK;
}

static kiln_status tga_probe(kiln_context *ctx, const char *name, const uint8_t *d, size_t n, probe *pr,
                             const char *other)
{
#define NOT_AN_IMAGE "%s: not a recognised image (kiln reads PNG, JPEG, TGA, BMP, Radiance HDR and OpenEXR)"
    if (other)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                          "%s: %s images are not supported (kiln reads PNG, JPEG, TGA, BMP, Radiance HDR and OpenEXR)",
                          name, other);
    if (n < 18) return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, NOT_AN_IMAGE, name);
    unsigned idlen = d[0], cmtype = d[1], type = d[2], cmbpp = d[7], bpp = d[16];
    uint32_t cmfirst = le16(d + 3), cmlen = le16(d + 5), w = le16(d + 12), h = le16(d + 14);
    int indexed = type == 1 || type == 9, rle = type >= 9;
    if (cmtype > 1 || !(type == 1 || type == 2 || type == 3 || type == 9 || type == 10 || type == 11) ||
        (indexed && cmtype != 1))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, NOT_AN_IMAGE, name);
    if (indexed ? (bpp != 8 && bpp != 16) || !(cmbpp == 15 || cmbpp == 16 || cmbpp == 24 || cmbpp == 32)
                : !(bpp == 8 || bpp == 15 || bpp == 16 || bpp == 24 || bpp == 32))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: TGA with %u bits per pixel is not supported", name, bpp);
    KILN_TRY(check_dims(ctx, name, "TGA", w, h));
    uint64_t pos = 18 + (uint64_t)idlen;
    if (indexed) pos += cmfirst + (uint64_t)cmlen * ((cmbpp + 7) / 8);
    uint64_t pb = (bpp + 7) / 8, left = (uint64_t)w * h;
    if (!rle) {
        pos += left * pb;
    } else {
        while (left > 0) {
            if (pos >= n) break;
            unsigned cmd = d[pos++];
            uint64_t cnt = (cmd & 127u) + 1;
            if (cnt > left) cnt = left;
            pos += (cmd & 128u) ? pb : cnt * pb;
            left -= cnt;
        }
        if (left > 0) pos = (uint64_t)n + 1;
    }
    if (pos > n) return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: TGA pixel data is truncated (%zu bytes)", name, n);
    pr->w = w;
    pr->h = h;
    return KILN_OK;
}

/* ---------------------------------------------------------------- stb_image ------------------ */

static kiln_status stb_fail(kiln_context *ctx, const char *name, file_kind k)
{
    const char *why = stbi_failure_reason();
    if (!why) why = "unknown error";
    kiln_status st = KILN_ERR_CORRUPT;
    if (!strcmp(why, "outofmem")) st = KILN_ERR_OUT_OF_MEMORY;
    else if (strstr(why, "too large") || strstr(why, "large")) st = KILN_ERR_TOO_LARGE;
    else if (!strcmp(why, "unknown image type")) st = KILN_ERR_UNSUPPORTED;
    return kiln__fail(ctx, st, "%s: cannot decode %s: %s", name, kind_name(k), why);
}

static kiln_status stb_decode(kiln_context *ctx, const char *name, file_kind k, const uint8_t *d, size_t n,
                              const probe *pr, kiln_image *out)
{
    if (n > INT_MAX) return kiln__fail(ctx, KILN_ERR_TOO_LARGE, "%s: %s file over 2 GiB", name, kind_name(k));
    int w, h, comp;
    if (!stbi_info_from_memory(d, (int)n, &w, &h, &comp)) return stb_fail(ctx, name, k);
    if ((uint32_t)w != pr->w || (uint32_t)h != pr->h)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: %s header is inconsistent (%ux%u or %dx%d?)", name, kind_name(k),
                          pr->w, pr->h, w, h);
    int w2 = 0, h2 = 0, c2 = 0;
    void *px = pr->is16 ? (void *)stbi_load_16_from_memory(d, (int)n, &w2, &h2, &c2, 4)
                        : (void *)stbi_load_from_memory(d, (int)n, &w2, &h2, &c2, 4);
    if (!px) return stb_fail(ctx, name, k);
    if (w2 != w || h2 != h) {
        stbi_image_free(px);
        return kiln__fail(ctx, KILN_ERR_INTERNAL, "%s: stb_image returned %dx%d for a %dx%d image", name, w2, h2, w, h);
    }
    kiln_status st = kiln_image_alloc(ctx, out, (uint32_t)w, (uint32_t)h, pr->is16 ? KILN_PIXEL_U16 : KILN_PIXEL_U8);
    if (st != KILN_OK) {
        stbi_image_free(px);
        return st;
    }
    memcpy(out->pixels, px, image_bytes(out));
    stbi_image_free(px);
    uint32_t ch = pr->channels ? pr->channels : (uint32_t)c2;
    out->channels = ch < 1 ? 1 : ch > 4 ? 4 : ch;
    out->srgb = out->channels >= 3; /* colour images are sRGB; grey maps are usually data */
    out->hdr = 0;
    return KILN_OK;
}

/* ---------------------------------------------------------------- PNG through libpng ----------- */

/* KILN_PNG_LIBPNG=1 (opt-in): PNGs are decoded by libpng into the image's rows directly (1.4-1.75x less
 * CPU time than stb_image on this project's 2-core AVX-512 box, but 1.2x more on the H100 host, so stb_image
 * stays the default; docs/PERFORMANCE.md, helper f2f2), with the transforms that give stb_image's result: palette -> RGB(A), grey of 1/2/4
 * bits scaled to 8, tRNS -> alpha (0 where the pixel equals the tRNS colour), grey -> RGB, a filler
 * alpha of the maximum value, 16-bit samples in host order; gamma, colour profiles and text are not
 * read (stb_image ignores them too), CRCs and the zlib checksum are not checked (stb_image does not).
 * Anything libpng reports (an error, or a warning: chunks out of place, out-of-range tRNS, extra data,
 * palette indices past the palette ...) and Apple's CgBI variant go to stb_image as before, so a file
 * decodes to the same pixels, and fails with the same message, as with stb_image alone. */
typedef struct png_mem {
    const uint8_t *d;
    size_t n, pos;
    int warned; /* libpng reported something (an out-of-place or out-of-range chunk, extra data ...) */
} png_mem;

static void png_mem_read(png_structp p, png_bytep out, size_t n)
{
    png_mem *m = png_get_io_ptr(p);
    if (n > m->n - m->pos) png_error(p, "truncated");
    memcpy(out, m->d + m->pos, n);
    m->pos += n;
}

static void png_read_error_cb(png_structp p, png_const_charp msg)
{
    (void)msg;
    png_longjmp(p, 1);
}

static void png_read_warning_cb(png_structp p, png_const_charp msg)
{
    (void)msg;
    png_mem *m = png_get_error_ptr(p);
    if (m) m->warned = 1;
}

/* Everything libpng may longjmp out of lives here (rows is allocated by the caller). */
static int png_libpng_rows(png_structp png, png_infop info, png_mem *m, const probe *pr, uint8_t *px, png_bytep *rows)
{
    if (setjmp(png_jmpbuf(png))) return 0;
    png_set_read_fn(png, m, png_mem_read);
    png_set_crc_action(png, PNG_CRC_QUIET_USE, PNG_CRC_QUIET_USE);
#ifdef PNG_IGNORE_ADLER32
    png_set_option(png, PNG_IGNORE_ADLER32, PNG_OPTION_ON);
#endif
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, NULL, -1); /* all but IHDR PLTE tRNS IDAT IEND */
    png_read_info(png, info);
    png_uint_32 w = 0, h = 0;
    int depth = 0, ct = 0, il = 0;
    png_get_IHDR(png, info, &w, &h, &depth, &ct, &il, NULL, NULL);
    if (w != pr->w || h != pr->h || (depth == 16) != (pr->is16 != 0)) return 0;
    png_set_expand(png); /* palette -> RGB, grey < 8 bits -> 8, tRNS -> alpha */
    png_set_gray_to_rgb(png);
    png_set_filler(png, depth == 16 ? 0xffff : 0xff, PNG_FILLER_AFTER);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (depth == 16) png_set_swap(png); /* PNG is big-endian; kiln's U16 samples are the host's */
#endif
    if (il) png_set_interlace_handling(png);
    png_read_update_info(png, info);
    const size_t rb = (size_t)w * 4 * (depth == 16 ? 2 : 1);
    if (png_get_rowbytes(png, info) != rb) return 0;
    for (png_uint_32 y = 0; y < h; y++) rows[y] = px + (size_t)y * rb;
    png_read_image(png, rows);
    png_read_end(png, NULL); /* the rest: extra data, chunks out of place, palette indices out of range */
    return !m->warned;
}

/* 1: decoded into out; 0: not (out untouched, no message): the caller takes stb_image's route. */
static int png_libpng_decode(kiln_context *ctx, const uint8_t *d, size_t n, const probe *pr, kiln_image *out)
{
    const char *env = getenv("KILN_PNG_LIBPNG");
    if (!(env && !strcmp(env, "1"))) return 0;
    if (n >= 16 && !memcmp(d + 12, "CgBI", 4)) return 0; /* Apple's variant: stb_image's */
    png_bytep *rows = malloc(sizeof *rows * pr->h);
    if (!rows) return 0;
    kiln_image img;
    if (kiln_image_alloc(ctx, &img, pr->w, pr->h, pr->is16 ? KILN_PIXEL_U16 : KILN_PIXEL_U8) != KILN_OK) {
        kiln__clear_error(ctx);
        free(rows);
        return 0;
    }
    png_mem m = {d, n, 8, 0};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &m, png_read_error_cb, png_read_warning_cb);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    int ok = 0;
    if (png && info) {
        png_set_sig_bytes(png, 8);
        ok = png_libpng_rows(png, info, &m, pr, img.pixels, rows);
    }
    png_destroy_read_struct(png ? &png : NULL, info ? &info : NULL, NULL);
    free(rows);
    if (!ok) {
        kiln_image_free(&img);
        return 0;
    }
    img.channels = pr->channels < 1 ? 1 : pr->channels > 4 ? 4 : pr->channels;
    img.srgb = img.channels >= 3;
    img.hdr = 0;
    *out = img;
    return 1;
}

/* ---------------------------------------------------------------- BMP, fast path ------------- */

/* Uncompressed 24-bit BMPs and 32-bit BI_RGB ones (what image tools write), decoded without stb_image:
 * the rows are converted on the context's threads, straight from the file (pread, a small buffer per
 * thread) or from memory, into the image. Everything else, and any header stb_image would reject (planes
 * != 1, pixel data not right after the header), goes through stb_image as before; the result is the same
 * as stb_image's: RGBA8, bottom-up rows flipped, alpha 255 for 24-bit, and for 32-bit an alpha channel
 * that is 0 everywhere read as 255 everywhere (stb_image's rule); channels 3 (24-bit) or 4 (32-bit).
 * KILN_BMP_FAST=0: stb_image for every BMP (comparison). */
typedef struct bmp_fast {
    uint32_t w, h, bpp; /* bpp 24 or 32 */
    uint64_t off, stride;
    int flip; /* bottom-up rows (positive height) */
} bmp_fast;

/* d: the file's first `avail` bytes (>= 14 + header size is checked); bmp_probe has accepted the file. */
static int bmp_fast_eligible(const uint8_t *d, size_t avail, const probe *pr, bmp_fast *bf)
{
    const char *env = getenv("KILN_BMP_FAST");
    if (env && !strcmp(env, "0")) return 0;
    if (avail < 26 || d[0] != 'B' || d[1] != 'M') return 0;
    uint32_t off = le32(d + 10), hsz = le32(d + 14);
    if (avail < 14 + (size_t)hsz) return 0;
    uint32_t planes, bpp, comp = 0;
    int flip;
    if (hsz == 12) {
        planes = le16(d + 22);
        bpp = le16(d + 24);
        flip = 1; /* unsigned height: always bottom-up */
        if (bpp != 24) return 0;
    } else if (hsz == 40 || hsz == 56 || hsz == 108 || hsz == 124) {
        planes = le16(d + 26);
        bpp = le16(d + 28);
        comp = le32(d + 30);
        flip = (int32_t)le32(d + 22) > 0;
        if (bpp != 24 && bpp != 32) return 0;
    } else {
        return 0;
    }
    if (planes != 1 || comp != 0 || off != 14 + hsz) return 0;
    bf->w = pr->w;
    bf->h = pr->h;
    bf->bpp = bpp;
    bf->off = off;
    bf->stride = ((uint64_t)pr->w * bpp + 31) / 32 * 4;
    bf->flip = flip;
    return 1;
}

typedef struct bmp_fast_job {
    const bmp_fast *bf;
    const uint8_t *mem; /* the whole file, or NULL: read from fd */
    int fd;
    uint8_t *scratch; /* per worker: rows_per * stride bytes (fd only) */
    size_t scratch_bytes;
    uint8_t *px;
    atomic_uint alpha_or;
    atomic_int failed; /* errno of a failed or short read (EIO for a short one) */
} bmp_fast_job;

static void bmp_fast_rows(void *user, size_t begin, size_t end, uint32_t worker)
{
    bmp_fast_job *j = user;
    const bmp_fast *bf = j->bf;
    const uint64_t stride = bf->stride;
    /* the file rows of output rows [begin, end): one contiguous range */
    const uint64_t r0 = bf->flip ? bf->h - end : begin, nr = end - begin;
    const uint8_t *src;
    if (j->mem) {
        src = j->mem + bf->off + r0 * stride;
    } else {
        uint8_t *buf = j->scratch + (size_t)worker * j->scratch_bytes;
        size_t want = (size_t)(nr * stride), got = 0;
        const off_t at = (off_t)(bf->off + r0 * stride);
        while (got < want) {
            ssize_t r = pread(j->fd, buf + got, want - got, at + (off_t)got);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) {
                int expected = 0;
                atomic_compare_exchange_strong(&j->failed, &expected, r < 0 ? errno : EIO);
                return;
            }
            got += (size_t)r;
        }
        src = buf;
    }
    unsigned aor = 0;
    for (uint64_t k = 0; k < nr; k++) {
        const uint64_t y = bf->flip ? end - 1 - k : begin + k; /* output row of file row r0 + k */
        const uint8_t *s = src + k * stride;
        uint8_t *o = j->px + (size_t)y * bf->w * 4;
        if (bf->bpp == 24) {
            for (uint32_t x = 0; x < bf->w; x++, s += 3, o += 4) {
                o[0] = s[2];
                o[1] = s[1];
                o[2] = s[0];
                o[3] = 255;
            }
        } else {
            for (uint32_t x = 0; x < bf->w; x++, s += 4, o += 4) {
                o[0] = s[2];
                o[1] = s[1];
                o[2] = s[0];
                o[3] = s[3];
                aor |= s[3];
            }
        }
    }
    if (aor) atomic_fetch_or(&j->alpha_or, aor);
}

/* mem: the whole file (n bytes), or NULL and fd open on it (its size n was checked by bmp_probe). */
static kiln_status bmp_fast_decode(kiln_context *ctx, const char *name, const bmp_fast *bf, const uint8_t *mem, int fd,
                                   kiln_image *out)
{
    KILN_TRY(kiln_image_alloc(ctx, out, bf->w, bf->h, KILN_PIXEL_U8));
    bmp_fast_job j;
    memset(&j, 0, sizeof j);
    j.bf = bf;
    j.mem = mem;
    j.fd = fd;
    j.px = out->pixels;
    atomic_init(&j.alpha_or, 0u);
    atomic_init(&j.failed, 0);
    /* ~256 KiB of file per chunk: enough work per chunk, the scratch rows stay in the cache */
    size_t rows = (size_t)((256u << 10) / bf->stride);
    if (rows < 1) rows = 1;
    if (!mem) {
        j.scratch_bytes = rows * (size_t)bf->stride;
        j.scratch = kiln__malloc(ctx, j.scratch_bytes * kiln_context_threads(ctx));
        if (!j.scratch) return KILN_ERR_OUT_OF_MEMORY;
    }
    kiln_status st = kiln__parallel_for(ctx, bf->h, rows, bmp_fast_rows, &j);
    free(j.scratch);
    if (st != KILN_OK) return st;
    int err = atomic_load(&j.failed);
    if (err)
        return kiln__fail(ctx, KILN_ERR_IO, "%s: read error: %s", name,
                          err == EIO ? "the file is shorter than when it was opened" : strerror(err));
    if (bf->bpp == 32 && atomic_load(&j.alpha_or) == 0) { /* stb_image: all-zero alpha means no alpha */
        uint8_t *p = out->pixels;
        for (size_t i = 0, np = (size_t)bf->w * bf->h; i < np; i++) p[i * 4 + 3] = 255;
    }
    out->channels = bf->bpp == 32 ? 4 : 3;
    out->srgb = 1;
    out->hdr = 0;
    return KILN_OK;
}

/* kiln_image_load's route for a BMP the fast path takes: only the header is read first. Returns 1 (and
 * *st) when it handled the file, 0 when the caller should read and decode the file as before. */
static int bmp_fast_file(kiln_context *ctx, const char *path, kiln_image *out, kiln_status *st)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO: no wait for a writer here */
    if (fd < 0) return 0;
    struct stat sb;
    uint8_t head[256];
    int handled = 0;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size >= (off_t)sizeof head &&
        (unsigned long long)sb.st_size <= (4ull << 30)) {
        size_t got = 0;
        while (got < sizeof head) {
            ssize_t r = pread(fd, head + got, sizeof head - got, (off_t)got);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            got += (size_t)r;
        }
        probe pr;
        memset(&pr, 0, sizeof pr);
        bmp_fast bf;
        /* bmp_probe reads at most 14 + 124 bytes of the header; n is the file's size for its checks */
        if (got == sizeof head && head[0] == 'B' && head[1] == 'M' &&
            bmp_probe(ctx, path, head, (size_t)sb.st_size, &pr) == KILN_OK &&
            bmp_fast_eligible(head, got, &pr, &bf)) {
            handled = 1;
            *st = bmp_fast_decode(ctx, path, &bf, NULL, fd, out);
        } else {
            kiln__clear_error(ctx); /* the usual route reports the probe's failure again */
        }
    }
    close(fd);
    return handled;
}

/* ---------------------------------------------------------------- Radiance HDR --------------- */

/* One header line starting at *pos (without the '\n'); returns its length or -1 at the end of data. */
static long hdr_line(const uint8_t *d, size_t n, size_t *pos, char *buf, size_t cap)
{
    if (*pos >= n) return -1;
    size_t i = *pos, len = 0;
    while (i < n && d[i] != '\n') {
        if (len + 1 < cap) buf[len++] = (char)d[i];
        i++;
    }
    if (i >= n) return -1; /* a header line must end with '\n' */
    buf[len] = 0;
    *pos = i + 1;
    return (long)len;
}

static int parse_dim(const char **s, uint32_t *out)
{
    const char *p = *s;
    uint64_t v = 0;
    if (*p < '0' || *p > '9') return 0;
    while (*p >= '0' && *p <= '9') {
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > 0xffffffffu) return 0;
        p++;
    }
    *out = (uint32_t)v;
    *s = p;
    return 1;
}

static void rgbe_to_float(float *dst, const uint8_t *rgbe)
{
    if (rgbe[3]) {
        float f = ldexpf(1.0f, (int)rgbe[3] - (128 + 8)); /* as stb_image: no +0.5 bias */
        dst[0] = rgbe[0] * f;
        dst[1] = rgbe[1] * f;
        dst[2] = rgbe[2] * f;
    } else {
        dst[0] = dst[1] = dst[2] = 0.0f;
    }
    dst[3] = 1.0f;
}

static kiln_status hdr_decode(kiln_context *ctx, const char *name, const uint8_t *d, size_t n, kiln_image *out)
{
    char line[256];
    size_t pos = 0;
    hdr_line(d, n, &pos, line, sizeof line); /* "#?RADIANCE" / "#?RGBE", checked by sniff */
    int format_ok = 0;
    for (unsigned lines = 0;; lines++) {
        long len = hdr_line(d, n, &pos, line, sizeof line);
        if (len < 0) return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: Radiance header is truncated", name);
        if (len == 0) break;
        if (lines > 10000) return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: Radiance header is too long", name);
        if (!strncmp(line, "FORMAT=", 7)) {
            if (strcmp(line, "FORMAT=32-bit_rle_rgbe"))
                return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: Radiance %s is not supported (only 32-bit_rle_rgbe)",
                                  name, line);
            format_ok = 1;
        }
    }
    if (!format_ok) return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: Radiance file without FORMAT=32-bit_rle_rgbe", name);
    if (hdr_line(d, n, &pos, line, sizeof line) < 0)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: Radiance resolution line is missing", name);
    const char *s = line;
    uint32_t w, h;
    if (strncmp(s, "-Y ", 3))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: Radiance orientation '%s' is not supported (only -Y H +X W)",
                          name, line);
    s += 3;
    if (!parse_dim(&s, &h) || strncmp(s, " +X ", 4))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: Radiance resolution '%s' is not supported (only -Y H +X W)",
                          name, line);
    s += 4;
    if (!parse_dim(&s, &w) || (*s && *s != ' ' && *s != '\r'))
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: bad Radiance resolution line '%s'", name, line);
    KILN_TRY(check_dims(ctx, name, "Radiance HDR", w, h));
    /* each pixel needs at least 2/127 bytes per component in run-length data */
    if ((uint64_t)w * h > (uint64_t)(n - pos) * 16 + 1024)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: Radiance data (%zu bytes) is too short for %ux%u pixels", name,
                          n - pos, w, h);
    KILN_TRY(kiln_image_alloc(ctx, out, w, h, KILN_PIXEL_F32));
    out->channels = 3;
    out->hdr = 1;
    out->srgb = 0;
    float *px = out->pixels;
    uint8_t *scan = kiln__malloc(ctx, (size_t)w * 4);
    if (!scan) return KILN_ERR_OUT_OF_MEMORY;
    kiln_status st = KILN_OK;
    for (uint32_t y = 0; y < h && st == KILN_OK; y++) {
        float *row = px + (size_t)y * w * 4;
        int flat = w < 8 || w > 32767;
        if (!flat) {
            if (n - pos < 4) {
                st = kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: Radiance data is truncated at scanline %u of %u", name, y, h);
                break;
            }
            const uint8_t *b = d + pos;
            if (b[0] != 2 || b[1] != 2 || (b[2] & 0x80)) {
                flat = 1; /* not run-length encoded: the rest of the image is flat RGBE */
            } else {
                if (((uint32_t)b[2] << 8 | b[3]) != w) {
                    st = kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: Radiance scanline %u has the wrong length", name, y);
                    break;
                }
                pos += 4;
                for (int k = 0; k < 4 && st == KILN_OK; k++) {
                    uint32_t i = 0;
                    while (i < w) {
                        if (pos >= n) {
                            st = kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: Radiance data is truncated at scanline %u of %u",
                                            name, y, h);
                            break;
                        }
                        uint32_t cnt = d[pos++];
                        if (cnt > 128) {
                            cnt -= 128;
                            if (cnt > w - i || pos >= n) {
                                st = kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: bad run length in Radiance scanline %u", name, y);
                                break;
                            }
                            uint8_t v = d[pos++];
                            for (uint32_t z = 0; z < cnt; z++) scan[(i++) * 4 + k] = v;
                        } else {
                            if (cnt == 0 || cnt > w - i || cnt > n - pos) {
                                st = kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: bad or truncated run in Radiance scanline %u",
                                                name, y);
                                break;
                            }
                            for (uint32_t z = 0; z < cnt; z++) scan[(i++) * 4 + k] = d[pos++];
                        }
                    }
                }
                if (st != KILN_OK) break;
                for (uint32_t x = 0; x < w; x++) rgbe_to_float(row + (size_t)x * 4, scan + (size_t)x * 4);
                continue;
            }
        }
        /* flat pixels from (0, y) to the end of the image */
        uint64_t need = (uint64_t)(h - y) * w * 4;
        if (need > n - pos) {
            st = kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: Radiance data is truncated (%zu of %llu bytes)", name, n - pos,
                            (unsigned long long)need);
            break;
        }
        for (uint64_t i = 0; i < (uint64_t)(h - y) * w; i++) rgbe_to_float(row + i * 4, d + pos + i * 4);
        pos += (size_t)need;
        break;
    }
    free(scan);
    return st;
}

/* ---------------------------------------------------------------- OpenEXR: streams ----------- */

typedef struct exr_stream {
    const uint8_t *data; /* reading */
    size_t size;
    uint8_t *out;        /* writing */
    size_t out_size, out_cap;
    int oom;
    int record;          /* the error callback records only while 1 (never during parallel decoding) */
    char msg[256];
} exr_stream;

static void exr_error_cb(exr_const_context_t c, exr_result_t code, const char *msg)
{
    void *ud = NULL;
    if (!c || exr_get_user_data(c, &ud) != EXR_ERR_SUCCESS || !ud) return;
    exr_stream *s = ud;
    if (!s->record || s->msg[0]) return;
    snprintf(s->msg, sizeof s->msg, "%s", msg ? msg : exr_get_default_error_message(code));
}

static int64_t exr_read_cb(exr_const_context_t c, void *ud, void *buf, uint64_t sz, uint64_t off,
                           exr_stream_error_func_ptr_t err)
{
    (void)c;
    (void)err;
    const exr_stream *s = ud;
    if (off >= s->size) return 0;
    uint64_t k = s->size - off < sz ? s->size - off : sz;
    memcpy(buf, s->data + off, (size_t)k);
    return (int64_t)k;
}

static int64_t exr_size_cb(exr_const_context_t c, void *ud)
{
    (void)c;
    return (int64_t)((const exr_stream *)ud)->size;
}

static int64_t exr_write_cb(exr_const_context_t c, void *ud, const void *buf, uint64_t sz, uint64_t off,
                            exr_stream_error_func_ptr_t err)
{
    (void)c;
    (void)err;
    exr_stream *s = ud;
    uint64_t end = off + sz;
    if (end < off || end > ((uint64_t)1 << 40)) return -1;
    if (end > s->out_cap) {
        size_t cap = s->out_cap ? s->out_cap : 65536;
        while (cap < end) cap *= 2;
        uint8_t *p = realloc(s->out, cap);
        if (!p) {
            s->oom = 1;
            return -1;
        }
        if (cap > s->out_cap) memset(p + s->out_cap, 0, cap - s->out_cap);
        s->out = p;
        s->out_cap = cap;
    }
    memcpy(s->out + off, buf, (size_t)sz);
    if (end > s->out_size) s->out_size = (size_t)end;
    return (int64_t)sz;
}

static kiln_status exr_status(exr_result_t rv)
{
    switch (rv) {
    case EXR_ERR_OUT_OF_MEMORY: return KILN_ERR_OUT_OF_MEMORY;
    case EXR_ERR_FEATURE_NOT_IMPLEMENTED: return KILN_ERR_UNSUPPORTED;
    default: return KILN_ERR_CORRUPT;
    }
}

static kiln_status exr_fail(kiln_context *ctx, const char *name, exr_stream *s, exr_result_t rv, const char *what)
{
    const char *detail = s->msg[0] ? s->msg : exr_get_default_error_message(rv);
    return kiln__fail(ctx, exr_status(rv), "%s: OpenEXR %s: %s", name, what, detail);
}

/* ---------------------------------------------------------------- OpenEXR: reading ----------- */

enum { SLOT_R, SLOT_G, SLOT_B, SLOT_A, SLOT_Y, SLOT_COUNT };

typedef struct exr_read_job {
    exr_context_t f;
    int part;
    int tiled;
    uint32_t w, h;
    int32_t tw, th, ntx;       /* tiles */
    int32_t min_x, min_y;
    const exr_chunk_info_t *chunks;
    exr_result_t *results;
    exr_decode_pipeline_t *pipes; /* one per worker */
    uint8_t *pipe_ready;
    const char *slot_names[SLOT_COUNT]; /* exact channel names chosen for each slot, NULL when absent */
    float *pixels;
} exr_read_job;

static int slot_of(const exr_read_job *j, const char *name)
{
    for (int s = 0; s < SLOT_COUNT; s++)
        if (j->slot_names[s] && !strcmp(j->slot_names[s], name)) return s;
    return -1;
}

static exr_result_t exr_decode_chunk(exr_read_job *j, size_t i, uint32_t worker)
{
    const exr_chunk_info_t *ci = &j->chunks[i];
    exr_decode_pipeline_t *dp = &j->pipes[worker];
    exr_result_t rv;
    int64_t x0, y0;
    if (j->tiled) {
        x0 = (int64_t)(i % (size_t)j->ntx) * j->tw;
        y0 = (int64_t)(i / (size_t)j->ntx) * j->th;
    } else {
        x0 = 0;
        y0 = (int64_t)ci->start_y - j->min_y;
    }
    if (x0 < 0 || y0 < 0 || ci->width <= 0 || ci->height <= 0 || x0 + ci->width > (int64_t)j->w ||
        y0 + ci->height > (int64_t)j->h)
        return EXR_ERR_CORRUPT_CHUNK;
    if (!j->pipe_ready[worker]) {
        rv = exr_decoding_initialize(j->f, j->part, ci, dp);
        if (rv != EXR_ERR_SUCCESS) return rv;
        j->pipe_ready[worker] = 1;
    } else {
        rv = exr_decoding_update(j->f, j->part, ci, dp);
        if (rv != EXR_ERR_SUCCESS) return rv;
    }
    /* Core's pipeline reads and decompresses; its unpack step is replaced by kiln's own (below):
     * OpenEXRCore 3.1.5's fast half->float paths for interleaved RGBA outputs swap the channels. The
     * pointers and strides only steer the routine choice (no direct read: pixel stride != size). */
    float *base = j->pixels + ((size_t)y0 * j->w + (size_t)x0) * 4;
    for (int c = 0; c < dp->channel_count; c++) {
        exr_coding_channel_info_t *ch = &dp->channels[c];
        int s = slot_of(j, ch->channel_name);
        if (s >= 0 && (ch->height != ci->height || ch->width != ci->width)) return EXR_ERR_CORRUPT_CHUNK;
        ch->decode_to_ptr = (uint8_t *)base;
        ch->user_pixel_stride = 16;
        ch->user_line_stride = (int32_t)(j->w * 16);
        ch->user_data_type = ch->data_type;
        ch->user_bytes_per_element = ch->bytes_per_element;
    }
    rv = exr_decoding_choose_default_routines(j->f, j->part, dp);
    if (rv != EXR_ERR_SUCCESS) return rv;
    dp->unpack_and_convert_fn = NULL;
    rv = exr_decoding_run(j->f, j->part, dp);
    if (rv != EXR_ERR_SUCCESS) return rv;
    /* unpacked layout: for each line, for each channel (file order), width values, little endian */
    const uint8_t *src = dp->unpacked_buffer;
    uint64_t avail = dp->chunk.unpacked_size, pos = 0;
    if (!src) return EXR_ERR_CORRUPT_CHUNK;
    for (int32_t line = 0; line < ci->height; line++) {
        int32_t y = ci->start_y + line;
        float *row = base + (size_t)line * j->w * 4;
        for (int c = 0; c < dp->channel_count; c++) {
            const exr_coding_channel_info_t *ch = &dp->channels[c];
            if (ch->height == 0 || ch->width <= 0) continue;
            if (ch->y_samples > 1 && (y % ch->y_samples) != 0) continue;
            uint64_t bytes = (uint64_t)ch->width * (uint64_t)ch->bytes_per_element;
            if (bytes > avail - pos) return EXR_ERR_CORRUPT_CHUNK;
            int s = slot_of(j, ch->channel_name);
            if (s >= 0) {
                const uint8_t *p = src + pos;
                float *dst = row + (s == SLOT_Y ? SLOT_R : s);
                for (int32_t x = 0; x < ch->width; x++) {
                    float v;
                    if (ch->data_type == EXR_PIXEL_HALF) {
                        v = kiln__half_to_float((uint16_t)(p[0] | p[1] << 8));
                        p += 2;
                    } else {
                        uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
                        if (ch->data_type == EXR_PIXEL_FLOAT) memcpy(&v, &u, 4);
                        else v = (float)u;
                        p += 4;
                    }
                    dst[(size_t)x * 4] = v;
                }
            }
            pos += bytes;
        }
    }
    return EXR_ERR_SUCCESS;
}

static void exr_decode_range(void *user, size_t begin, size_t end, uint32_t worker)
{
    exr_read_job *j = user;
    for (size_t i = begin; i < end; i++) j->results[i] = exr_decode_chunk(j, i, worker);
}

typedef struct exr_fill_job {
    float *pixels;
    uint32_t w;
    int have[SLOT_COUNT];
} exr_fill_job;

static void exr_fill_range(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    exr_fill_job *j = user;
    for (size_t y = begin; y < end; y++) {
        float *p = j->pixels + y * j->w * 4;
        for (uint32_t x = 0; x < j->w; x++, p += 4) {
            if (j->have[SLOT_Y] && !j->have[SLOT_R] && !j->have[SLOT_G] && !j->have[SLOT_B]) p[1] = p[2] = p[0];
            if (!j->have[SLOT_A]) p[3] = 1.0f;
        }
    }
}

/* compression ratio that no valid chunk can exceed (unpacked / packed), generous */
static uint64_t exr_max_ratio(exr_compression_t c)
{
    switch (c) {
    case EXR_COMPRESSION_NONE: return 1;
    case EXR_COMPRESSION_RLE: return 65;
    case EXR_COMPRESSION_B44:
    case EXR_COMPRESSION_B44A: return 12;
    case EXR_COMPRESSION_ZIPS:
    case EXR_COMPRESSION_ZIP:
    case EXR_COMPRESSION_PIZ: return 1100;
    case EXR_COMPRESSION_PXR24: return 1500;
    default: return (uint64_t)1 << 17; /* DWAA/DWAB: RLE + zlib stages compound */
    }
}


#ifdef KILN_HAVE_OPENEXR_CXX
/* OpenEXRCore 3.1 cannot decompress DWAA/DWAB ("not yet implemented in C"), so those parts are read
 * by the OpenEXR C++ library through its C interface (ImfCRgbaFile.h). That interface only opens
 * files by name: the bytes go into an anonymous memory file (memfd) opened as /proc/self/fd/N.
 * It returns half floats, which loses nothing for DWA's lossy DCT channels (their output is half
 * precision even when the channel is FLOAT); FLOAT channels DWA stores losslessly (A, other names) are
 * rounded to half. Only part 0 and the channels R, G, B, A, Y (with RY/BY) are read. */
static kiln_status exr_decode_cxx(kiln_context *ctx, const char *name, const uint8_t *d, size_t n, int32_t min_x,
                                  int32_t min_y, uint32_t w, uint32_t h, kiln_image *out)
{
    int fd = memfd_create("kiln-exr", MFD_CLOEXEC);
    if (fd < 0) return kiln__fail(ctx, KILN_ERR_IO, "%s: cannot create a memory file for the OpenEXR C++ reader", name);
    size_t done = 0;
    while (done < n) {
        ssize_t k = write(fd, d + done, n - done);
        if (k <= 0) {
            close(fd);
            return kiln__fail(ctx, KILN_ERR_IO, "%s: cannot fill the memory file for the OpenEXR C++ reader", name);
        }
        done += (size_t)k;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    kiln_status st = KILN_OK;
    ImfRgba *buf = NULL;
    ImfInputFile *in = ImfOpenInputFile(path);
    if (!in) {
        st = kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: OpenEXR (C++ reader): %s", name, ImfErrorMessage());
        goto out;
    }
    int x0, y0, x1, y1;
    ImfHeaderDataWindow(ImfInputHeader(in), &x0, &y0, &x1, &y1);
    if (x0 != min_x || y0 != min_y || (int64_t)x1 - x0 + 1 != (int64_t)w || (int64_t)y1 - y0 + 1 != (int64_t)h) {
        st = kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: OpenEXR readers disagree about the data window", name);
        goto out;
    }
    int mask = ImfInputChannels(in);
    if (!(mask & (IMF_WRITE_RGBA | IMF_WRITE_Y))) {
        st = kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: OpenEXR DWA part has no R, G, B, A or Y channel", name);
        goto out;
    }
    buf = kiln__malloc(ctx, (size_t)w * h * 8);
    if (!buf) {
        st = KILN_ERR_OUT_OF_MEMORY;
        goto out;
    }
    /* base such that base + x + y * w is pixel (x, y) of the data window (integer maths: no UB) */
    uintptr_t base = (uintptr_t)buf - (uintptr_t)(((intptr_t)x0 + (intptr_t)y0 * (intptr_t)w) * 8);
    if (!ImfInputSetFrameBuffer(in, (ImfRgba *)base, 1, w) || !ImfInputReadPixels(in, y0, y1)) {
        st = kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: OpenEXR (C++ reader): %s", name, ImfErrorMessage());
        goto out;
    }
    if ((st = kiln_image_alloc(ctx, out, w, h, KILN_PIXEL_F32)) != KILN_OK) goto out;
    const uint16_t *hv = (const uint16_t *)buf; /* ImfRgba is four halves: r, g, b, a */
    float *px = out->pixels;
    for (size_t i = 0; i < (size_t)w * h * 4; i++) px[i] = kiln__half_to_float(hv[i]);
    /* luminance/chroma files come back as colour through this interface */
    int colour = (mask & (IMF_WRITE_RGB | IMF_WRITE_C)) != 0, alpha = (mask & IMF_WRITE_A) != 0;
    out->channels = colour ? (alpha ? 4 : 3) : (mask & IMF_WRITE_Y) ? (alpha ? 2 : 1) : 4;
    out->hdr = 1;
    out->srgb = 0;
out:
    free(buf);
    if (in) ImfCloseInputFile(in);
    close(fd);
    return st;
}
#endif

static kiln_status exr_decode_file(kiln_context *ctx, const char *name, const uint8_t *d, size_t n, kiln_image *out)
{
    exr_stream s;
    memset(&s, 0, sizeof s);
    s.data = d;
    s.size = n;
    s.record = 1;
    exr_context_initializer_t init = EXR_DEFAULT_CONTEXT_INITIALIZER;
    init.error_handler_fn = exr_error_cb;
    init.user_data = &s;
    init.read_fn = exr_read_cb;
    init.size_fn = exr_size_cb;
    init.flags = EXR_CONTEXT_FLAG_DISABLE_CHUNK_RECONSTRUCTION;
    exr_context_t f = NULL;
    exr_result_t rv = exr_start_read(&f, name, &init);
    if (rv != EXR_ERR_SUCCESS) {
        kiln_status st = exr_fail(ctx, name, &s, rv, "header");
        exr_finish(&f);
        return st;
    }
    kiln_status st = KILN_OK;
    exr_read_job job;
    memset(&job, 0, sizeof job);
    job.f = f;
    exr_chunk_info_t *chunks = NULL;
    exr_result_t *results = NULL;
    size_t nchunks = 0;
    uint32_t nthreads = kiln_context_threads(ctx);

    /* the first part holding a flat (not deep) image */
    int parts = 0, part = -1;
    exr_storage_t storage = EXR_STORAGE_SCANLINE;
    if ((rv = exr_get_count(f, &parts)) != EXR_ERR_SUCCESS) {
        st = exr_fail(ctx, name, &s, rv, "part count");
        goto done;
    }
    for (int p = 0; p < parts; p++) {
        if (exr_get_storage(f, p, &storage) == EXR_ERR_SUCCESS &&
            (storage == EXR_STORAGE_SCANLINE || storage == EXR_STORAGE_TILED)) {
            part = p;
            break;
        }
    }
    if (part < 0) {
        st = kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: OpenEXR file has only deep parts (not supported)", name);
        goto done;
    }
    job.part = part;
    job.tiled = storage == EXR_STORAGE_TILED;
    exr_attr_box2i_t dw;
    if ((rv = exr_get_data_window(f, part, &dw)) != EXR_ERR_SUCCESS) {
        st = exr_fail(ctx, name, &s, rv, "data window");
        goto done;
    }
    int64_t w64 = (int64_t)dw.max.x - dw.min.x + 1, h64 = (int64_t)dw.max.y - dw.min.y + 1;
    if (w64 <= 0 || h64 <= 0) {
        st = kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: OpenEXR data window is empty", name);
        goto done;
    }
    if ((st = check_dims(ctx, name, "OpenEXR", (uint64_t)w64, (uint64_t)h64)) != KILN_OK) goto done;
    job.w = (uint32_t)w64;
    job.h = (uint32_t)h64;
    job.min_x = dw.min.x;
    job.min_y = dw.min.y;

    /* channels */
    const exr_attr_chlist_t *cl = NULL;
    if ((rv = exr_get_channels(f, part, &cl)) != EXR_ERR_SUCCESS || !cl) {
        st = exr_fail(ctx, name, &s, rv ? rv : EXR_ERR_MISSING_REQ_ATTR, "channel list");
        goto done;
    }
    static const char *const slot_name[SLOT_COUNT] = {"R", "G", "B", "A", "Y"};
    for (int pass = 0; pass < 2; pass++) { /* exact names first, then the first layer's "x.R" names */
        int found = 0;
        for (int sidx = 0; sidx < SLOT_COUNT; sidx++) found |= job.slot_names[sidx] != NULL;
        if (found) break;
        for (int c = 0; c < cl->num_channels; c++) {
            const char *cn = cl->entries[c].name.str;
            if (!cn) continue;
            for (int sidx = 0; sidx < SLOT_COUNT; sidx++) {
                const char *dot = strrchr(cn, '.');
                int match = pass == 0 ? !strcmp(cn, slot_name[sidx]) : (dot && !strcmp(dot + 1, slot_name[sidx]));
                if (match && !job.slot_names[sidx]) job.slot_names[sidx] = cn;
            }
        }
    }
    if (!job.slot_names[SLOT_R] && !job.slot_names[SLOT_G] && !job.slot_names[SLOT_B] && !job.slot_names[SLOT_Y] &&
        !job.slot_names[SLOT_A]) {
        if (cl->num_channels == 1 && cl->entries[0].name.str) {
            job.slot_names[SLOT_Y] = cl->entries[0].name.str; /* a lone channel (Z, ...) becomes grey */
        } else {
            char list[160] = "";
            for (int c = 0; c < cl->num_channels && c < 8; c++) {
                size_t l = strlen(list);
                snprintf(list + l, sizeof list - l, "%s%s", c ? ", " : "", cl->entries[c].name.str ? cl->entries[c].name.str : "?");
            }
            st = kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: OpenEXR has no R, G, B, A or Y channel (channels: %s)",
                            name, list);
            goto done;
        }
    }
    if (job.slot_names[SLOT_R] || job.slot_names[SLOT_G] || job.slot_names[SLOT_B]) job.slot_names[SLOT_Y] = NULL;
    for (int c = 0; c < cl->num_channels; c++) {
        const exr_attr_chlist_entry_t *e = &cl->entries[c];
        if (e->name.str && slot_of(&job, e->name.str) >= 0 && (e->x_sampling != 1 || e->y_sampling != 1)) {
            st = kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: OpenEXR channel %s is subsampled (%dx%d): not supported", name,
                            e->name.str, e->x_sampling, e->y_sampling);
            goto done;
        }
    }

    /* chunk table: every chunk is looked up (and checked) before the image is allocated */
    if (job.tiled) {
        uint32_t tw = 0, th = 0;
        exr_tile_level_mode_t lm;
        exr_tile_round_mode_t rm;
        int32_t lw = 0, lh = 0;
        if ((rv = exr_get_tile_descriptor(f, part, &tw, &th, &lm, &rm)) != EXR_ERR_SUCCESS ||
            (rv = exr_get_level_sizes(f, part, 0, 0, &lw, &lh)) != EXR_ERR_SUCCESS) {
            st = exr_fail(ctx, name, &s, rv, "tile description");
            goto done;
        }
        if (tw == 0 || th == 0 || tw > KILN_MAX_DIMENSION || th > KILN_MAX_DIMENSION || (uint32_t)lw != job.w ||
            (uint32_t)lh != job.h) {
            st = kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: OpenEXR tiles of %ux%u do not fit a %ux%u image", name, tw, th,
                            job.w, job.h);
            goto done;
        }
        job.tw = (int32_t)tw;
        job.th = (int32_t)th;
        job.ntx = (int32_t)((job.w + tw - 1) / tw);
        nchunks = (size_t)job.ntx * ((job.h + th - 1) / th);
    } else {
        int32_t lpc = 0;
        if ((rv = exr_get_scanlines_per_chunk(f, part, &lpc)) != EXR_ERR_SUCCESS || lpc <= 0) {
            st = exr_fail(ctx, name, &s, rv ? rv : EXR_ERR_INVALID_ATTR, "scanlines per chunk");
            goto done;
        }
        nchunks = (job.h + (uint32_t)lpc - 1) / (uint32_t)lpc;
        job.th = lpc;
    }
    if (nchunks > n / 8) { /* the offset table alone needs 8 bytes per chunk */
        st = kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: OpenEXR file of %zu bytes cannot hold %zu chunks", name, n, nchunks);
        goto done;
    }
    chunks = kiln__calloc(ctx, nchunks, sizeof *chunks);
    results = kiln__calloc(ctx, nchunks, sizeof *results);
    if (!chunks || !results) {
        st = KILN_ERR_OUT_OF_MEMORY;
        goto done;
    }
    exr_compression_t comp = EXR_COMPRESSION_NONE;
    exr_get_compression(f, part, &comp);
    uint64_t packed = 0, unpacked = 0;
    for (size_t i = 0; i < nchunks; i++) {
        if (job.tiled)
            rv = exr_read_tile_chunk_info(f, part, (int)(i % (size_t)job.ntx), (int)(i / (size_t)job.ntx), 0, 0, &chunks[i]);
        else
            rv = exr_read_scanline_chunk_info(f, part, job.min_y + (int)(i * (size_t)job.th), &chunks[i]);
        if (rv != EXR_ERR_SUCCESS) {
            char what[64];
            snprintf(what, sizeof what, "chunk %zu of %zu", i, nchunks);
            st = exr_fail(ctx, name, &s, rv, what);
            goto done;
        }
        const exr_chunk_info_t *ci = &chunks[i];
        if (ci->data_offset > n || ci->packed_size > n - ci->data_offset) {
            st = kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: OpenEXR chunk %zu extends past the end of the file", name, i);
            goto done;
        }
        packed += ci->packed_size;
        unpacked += ci->unpacked_size;
    }
    if (packed > n || unpacked > packed * exr_max_ratio(comp) + 65536) {
        st = kiln__fail(ctx, KILN_ERR_CORRUPT,
                        "%s: OpenEXR chunks (%llu bytes) cannot hold the %llu bytes a %ux%u image needs", name,
                        (unsigned long long)packed, (unsigned long long)unpacked, job.w, job.h);
        goto done;
    }

    if (comp == EXR_COMPRESSION_DWAA || comp == EXR_COMPRESSION_DWAB) {
#ifdef KILN_HAVE_OPENEXR_CXX
        if (part != 0) {
            st = kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: OpenEXR DWA compression is only read in part 0", name);
            goto done;
        }
        st = exr_decode_cxx(ctx, name, d, n, job.min_x, job.min_y, job.w, job.h, out);
#else
        st = kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                        "%s: OpenEXR DWA compression needs the OpenEXR C++ library (OpenEXRCore 3.1 cannot decode it)",
                        name);
#endif
        goto done;
    }

    if ((st = kiln_image_alloc(ctx, out, job.w, job.h, KILN_PIXEL_F32)) != KILN_OK) goto done;
    job.pixels = out->pixels;
    job.chunks = chunks;
    job.results = results;
    job.pipes = kiln__calloc(ctx, nthreads, sizeof *job.pipes);
    job.pipe_ready = kiln__calloc(ctx, nthreads, 1);
    if (!job.pipes || !job.pipe_ready) {
        st = KILN_ERR_OUT_OF_MEMORY;
        goto done;
    }
    s.record = 0; /* the callback may now run on several threads at once */
    st = kiln__parallel_for(ctx, nchunks, 1, exr_decode_range, &job);
    for (uint32_t t = 0; t < nthreads; t++)
        if (job.pipe_ready[t]) exr_decoding_destroy(f, &job.pipes[t]);
    if (st != KILN_OK) goto done;
    for (size_t i = 0; i < nchunks; i++) {
        if (results[i] != EXR_ERR_SUCCESS) {
            char what[96];
            snprintf(what, sizeof what, "decoding chunk %zu of %zu (%s compression)", i, nchunks,
                     comp == EXR_COMPRESSION_DWAB   ? "DWAB"
                     : comp == EXR_COMPRESSION_DWAA ? "DWAA"
                     : comp == EXR_COMPRESSION_PIZ  ? "PIZ"
                                                    : "its");
            st = exr_fail(ctx, name, &s, results[i], what);
            goto done;
        }
    }
    exr_fill_job fill;
    memset(&fill, 0, sizeof fill);
    fill.pixels = out->pixels;
    fill.w = job.w;
    for (int sidx = 0; sidx < SLOT_COUNT; sidx++) fill.have[sidx] = job.slot_names[sidx] != NULL;
    if ((st = kiln__parallel_for(ctx, job.h, 64, exr_fill_range, &fill)) != KILN_OK) goto done;
    int rgb = fill.have[SLOT_R] || fill.have[SLOT_G] || fill.have[SLOT_B];
    out->channels = rgb ? (fill.have[SLOT_A] ? 4 : 3) : fill.have[SLOT_Y] ? (fill.have[SLOT_A] ? 2 : 1) : 4;
    out->hdr = 1;
    out->srgb = 0;
done:
    free(job.pipes);
    free(job.pipe_ready);
    free(chunks);
    free(results);
    exr_finish(&f);
    return st;
}

/* ---------------------------------------------------------------- loading -------------------- */

static kiln_status load_any(kiln_context *ctx, const char *name, const uint8_t *d, size_t n, kiln_image *out)
{
    if (n == 0) return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: empty file", name);
    const char *other;
    file_kind k = sniff(d, n, &other);
    probe pr;
    memset(&pr, 0, sizeof pr);
    switch (k) {
    case K_EXR: return exr_decode_file(ctx, name, d, n, out);
    case K_HDR: return hdr_decode(ctx, name, d, n, out);
    case K_PNG:
        KILN_TRY(png_probe(ctx, name, d, n, &pr));
        if (png_libpng_decode(ctx, d, n, &pr, out)) return KILN_OK;
        break;
    case K_JPEG: KILN_TRY(jpeg_probe(ctx, name, d, n, &pr)); break;
    case K_BMP: {
        KILN_TRY(bmp_probe(ctx, name, d, n, &pr));
        bmp_fast bf;
        if (bmp_fast_eligible(d, n, &pr, &bf)) return bmp_fast_decode(ctx, name, &bf, d, -1, out);
        break;
    }
    default: KILN_TRY(tga_probe(ctx, name, d, n, &pr, other)); k = K_TGA; break;
    }
    return stb_decode(ctx, name, k, d, n, &pr, out);
}

kiln_status kiln_image_load_memory(kiln_context *ctx, const void *data, size_t size, kiln_image *out)
{
    if (!ctx) return KILN_ERR_INVALID_ARGUMENT;
    kiln__clear_error(ctx);
    if (!out) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_image_load_memory: output image is NULL");
    memset(out, 0, sizeof *out);
    if (!data && size) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_image_load_memory: data is NULL");
    kiln_status st = load_any(ctx, MEMORY_NAME, data, size, out);
    if (st != KILN_OK) kiln_image_free(out);
    return st;
}

kiln_status kiln_image_load(kiln_context *ctx, const char *path, kiln_image *out)
{
    if (!ctx) return KILN_ERR_INVALID_ARGUMENT;
    kiln__clear_error(ctx);
    if (!out) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_image_load: output image is NULL");
    memset(out, 0, sizeof *out);
    if (!path) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_image_load: path is NULL");
    kiln_status fst = KILN_OK;
    if (bmp_fast_file(ctx, path, out, &fst)) {
        if (fst != KILN_OK) kiln_image_free(out);
        return fst;
    }
    uint8_t *d = NULL;
    size_t n = 0;
    KILN_TRY(kiln__read_file(ctx, path, &d, &n));
    kiln_status st = load_any(ctx, path, d, n, out);
    free(d);
    if (st != KILN_OK) kiln_image_free(out);
    return st;
}

/* ---------------------------------------------------------------- conversion ----------------- */

static kiln_status check_image(kiln_context *ctx, const kiln_image *img, const char *what)
{
    if (!img || !img->pixels) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "%s: image is NULL or empty", what);
    if (img->type != KILN_PIXEL_U8 && img->type != KILN_PIXEL_U16 && img->type != KILN_PIXEL_F32)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "%s: bad pixel type %d", what, (int)img->type);
    if (img->width == 0 || img->height == 0 || img->width > KILN_MAX_DIMENSION || img->height > KILN_MAX_DIMENSION ||
        (uint64_t)img->width * img->height > KILN_MAX_PIXELS)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "%s: bad image size %ux%u", what, img->width, img->height);
    return KILN_OK;
}

typedef struct convert_job {
    const kiln_image *src;
    kiln_image *dst;
} convert_job;

static void convert_range(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    convert_job *j = user;
    size_t row = (size_t)j->src->width * 4;
    for (size_t y = begin; y < end; y++) {
        size_t o = y * row;
        switch (j->src->type * 8 + j->dst->type) {
        case KILN_PIXEL_U8 * 8 + KILN_PIXEL_U16: {
            const uint8_t *s = (const uint8_t *)j->src->pixels + o;
            uint16_t *d = (uint16_t *)j->dst->pixels + o;
            for (size_t i = 0; i < row; i++) d[i] = (uint16_t)(s[i] * 257u);
            break;
        }
        case KILN_PIXEL_U8 * 8 + KILN_PIXEL_F32: {
            const uint8_t *s = (const uint8_t *)j->src->pixels + o;
            float *d = (float *)j->dst->pixels + o;
            for (size_t i = 0; i < row; i++) d[i] = s[i] / 255.0f;
            break;
        }
        case KILN_PIXEL_U16 * 8 + KILN_PIXEL_U8: {
            const uint16_t *s = (const uint16_t *)j->src->pixels + o;
            uint8_t *d = (uint8_t *)j->dst->pixels + o;
            for (size_t i = 0; i < row; i++) d[i] = kiln__unorm16_to_unorm8(s[i]);
            break;
        }
        case KILN_PIXEL_U16 * 8 + KILN_PIXEL_F32: {
            const uint16_t *s = (const uint16_t *)j->src->pixels + o;
            float *d = (float *)j->dst->pixels + o;
            for (size_t i = 0; i < row; i++) d[i] = s[i] / 65535.0f;
            break;
        }
        case KILN_PIXEL_F32 * 8 + KILN_PIXEL_U8: {
            const float *s = (const float *)j->src->pixels + o;
            uint8_t *d = (uint8_t *)j->dst->pixels + o;
            for (size_t i = 0; i < row; i++) d[i] = kiln__float_to_unorm8(s[i]);
            break;
        }
        case KILN_PIXEL_F32 * 8 + KILN_PIXEL_U16: {
            const float *s = (const float *)j->src->pixels + o;
            uint16_t *d = (uint16_t *)j->dst->pixels + o;
            for (size_t i = 0; i < row; i++) d[i] = kiln__float_to_unorm16(s[i]);
            break;
        }
        default: /* same type */
            memcpy((uint8_t *)j->dst->pixels + o * j->src->type, (const uint8_t *)j->src->pixels + o * j->src->type,
                   row * j->src->type);
            break;
        }
    }
}

kiln_status kiln_image_convert(kiln_context *ctx, const kiln_image *src, kiln_pixel_type type, kiln_image *dst)
{
    if (!ctx) return KILN_ERR_INVALID_ARGUMENT;
    kiln__clear_error(ctx);
    KILN_TRY(check_image(ctx, src, "kiln_image_convert"));
    if (!dst) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_image_convert: destination is NULL");
    if (type != KILN_PIXEL_U8 && type != KILN_PIXEL_U16 && type != KILN_PIXEL_F32)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_image_convert: bad pixel type %d", (int)type);
    kiln_image tmp;
    KILN_TRY(kiln_image_alloc(ctx, &tmp, src->width, src->height, type));
    tmp.channels = src->channels;
    tmp.srgb = src->srgb;
    tmp.hdr = type == KILN_PIXEL_F32 ? src->hdr : 0;
    convert_job j = {src, &tmp};
    kiln_status st = kiln__parallel_for(ctx, src->height, 16, convert_range, &j);
    if (st != KILN_OK) {
        kiln_image_free(&tmp);
        return st;
    }
    if (dst == src) kiln_image_free(dst); /* in-place conversion */
    *dst = tmp;
    return KILN_OK;
}

/* ---------------------------------------------------------------- PNG output ----------------- */

typedef struct png_out {
    uint8_t *data;
    size_t size, cap;
    char msg[200];
} png_out;

static void png_write_cb(png_structp p, png_bytep d, size_t n)
{
    png_out *o = png_get_io_ptr(p);
    if (n > SIZE_MAX - o->size) png_error(p, "output too large");
    if (o->size + n > o->cap) {
        size_t cap = o->cap ? o->cap : 65536;
        while (cap < o->size + n) {
            if (cap > SIZE_MAX / 2) png_error(p, "output too large");
            cap *= 2;
        }
        uint8_t *q = realloc(o->data, cap);
        if (!q) png_error(p, "out of memory");
        o->data = q;
        o->cap = cap;
    }
    memcpy(o->data + o->size, d, n);
    o->size += n;
}

static void png_flush_cb(png_structp p) { (void)p; }

static void png_error_cb(png_structp p, png_const_charp msg)
{
    png_out *o = png_get_error_ptr(p);
    if (o && !o->msg[0]) snprintf(o->msg, sizeof o->msg, "%s", msg ? msg : "libpng error");
    png_longjmp(p, 1);
}

static void png_warning_cb(png_structp p, png_const_charp msg)
{
    (void)p;
    (void)msg;
}

typedef struct png_state {
    png_structp png;
    png_infop info;
    uint8_t *row;
} png_state;

/* Everything libpng may longjmp out of lives here, so nothing local is clobbered. */
static int png_encode_rows(png_state *ps, const kiln_image *img, int depth, int color_type, uint32_t ch)
{
    if (setjmp(png_jmpbuf(ps->png))) return 0;
    png_set_write_fn(ps->png, png_get_io_ptr(ps->png), png_write_cb, png_flush_cb);
    png_set_IHDR(ps->png, ps->info, img->width, img->height, depth, color_type, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (img->srgb) png_set_sRGB(ps->png, ps->info, PNG_sRGB_INTENT_PERCEPTUAL);
    png_set_compression_level(ps->png, 3); /* ~4x faster than the default 6 for a few % more bytes */
    png_write_info(ps->png, ps->info);
    static const uint32_t map[5][4] = {{0}, {0}, {0, 3}, {0, 1, 2}, {0, 1, 2, 3}};
    size_t w = img->width;
    for (uint32_t y = 0; y < img->height; y++) {
        size_t o = (size_t)y * w * 4;
        uint8_t *r = ps->row;
        if (img->type == KILN_PIXEL_U8) {
            const uint8_t *s = (const uint8_t *)img->pixels + o;
            for (size_t x = 0; x < w; x++, s += 4)
                for (uint32_t c = 0; c < ch; c++) *r++ = s[map[ch][c]];
        } else {
            for (size_t x = 0; x < w; x++) {
                for (uint32_t c = 0; c < ch; c++) {
                    size_t i = o + x * 4 + map[ch][c];
                    uint16_t v = img->type == KILN_PIXEL_U16 ? ((const uint16_t *)img->pixels)[i]
                                                            : kiln__float_to_unorm16(((const float *)img->pixels)[i]);
                    *r++ = (uint8_t)(v >> 8);
                    *r++ = (uint8_t)v;
                }
            }
        }
        png_write_row(ps->png, ps->row);
    }
    png_write_end(ps->png, ps->info);
    return 1;
}

kiln_status kiln__png_encode(kiln_context *ctx, const kiln_image *img, const char *name, uint8_t **out, size_t *out_size)
{
    *out = NULL;
    *out_size = 0;
    KILN_TRY(check_image(ctx, img, name));
    uint32_t ch = img->channels < 1 ? 1 : img->channels > 4 ? 4 : img->channels;
    static const int types[5] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                 PNG_COLOR_TYPE_RGB_ALPHA};
    int depth = img->type == KILN_PIXEL_U8 ? 8 : 16;
    png_out o;
    memset(&o, 0, sizeof o);
    png_state ps = {NULL, NULL, NULL};
    ps.row = kiln__malloc(ctx, (size_t)img->width * ch * (size_t)(depth / 8));
    if (!ps.row) return KILN_ERR_OUT_OF_MEMORY;
    ps.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &o, png_error_cb, png_warning_cb);
    if (ps.png) ps.info = png_create_info_struct(ps.png);
    if (!ps.png || !ps.info) {
        png_destroy_write_struct(&ps.png, &ps.info);
        free(ps.row);
        return kiln__fail(ctx, KILN_ERR_OUT_OF_MEMORY, "%s: cannot create a libpng writer", name);
    }
    png_set_write_fn(ps.png, &o, png_write_cb, png_flush_cb);
    int ok = png_encode_rows(&ps, img, depth, types[ch], ch);
    png_destroy_write_struct(&ps.png, &ps.info);
    free(ps.row);
    if (!ok) {
        free(o.data);
        return kiln__fail(ctx, strstr(o.msg, "memory") ? KILN_ERR_OUT_OF_MEMORY : KILN_ERR_INTERNAL,
                          "%s: PNG encoding failed: %s", name, o.msg);
    }
    *out = o.data;
    *out_size = o.size;
    return KILN_OK;
}

/* ---------------------------------------------------------------- EXR output ----------------- */

typedef struct linear_job {
    const kiln_image *src;
    float *dst;
} linear_job;

static void linear_range(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    linear_job *j = user;
    const kiln_image *s = j->src;
    size_t row = (size_t)s->width * 4;
    for (size_t y = begin; y < end; y++) {
        float *d = j->dst + y * row;
        for (size_t i = 0; i < row; i++) {
            size_t k = y * row + i;
            int colour = s->srgb && (i & 3) != 3;
            float v;
            if (s->type == KILN_PIXEL_U8) {
                uint8_t b = ((const uint8_t *)s->pixels)[k];
                v = colour ? kiln__srgb8_to_linear(b) : b / 255.0f;
            } else if (s->type == KILN_PIXEL_U16) {
                uint16_t b = ((const uint16_t *)s->pixels)[k];
                v = colour ? kiln__srgb16_to_linear(b) : b / 65535.0f;
            } else {
                v = ((const float *)s->pixels)[k];
                if (colour) v = kiln__srgb_to_linear(v);
            }
            d[i] = v;
        }
    }
}

/* Chunks are packed and compressed in parallel (each into its own buffer: the pipeline's write step
 * is replaced by a copy), then written in chunk order, so the file is the same for any thread count. */
typedef struct exr_enc_slot {
    uint8_t *data;
    size_t size;
} exr_enc_slot;

typedef struct exr_enc_job {
    exr_context_t f;
    int part;
    const float *px;
    uint32_t width;
    const exr_chunk_info_t *infos;
    uint32_t tw, th, ntx; /* chunk grid: tiles, or full-width bands of th scanlines */
    exr_enc_slot *chunks;
    exr_result_t *results;
    exr_encode_pipeline_t *pipes;
    exr_enc_slot *current; /* per worker */
    uint8_t *ready;
} exr_enc_job;

static exr_result_t exr_capture_write(exr_encode_pipeline_t *ep)
{
    exr_enc_slot *slot = ep->encoding_user_data;
    slot->size = (size_t)ep->compressed_bytes;
    slot->data = malloc(slot->size ? slot->size : 1);
    if (!slot->data) return EXR_ERR_OUT_OF_MEMORY;
    if (slot->size) memcpy(slot->data, ep->compressed_buffer, slot->size);
    return EXR_ERR_SUCCESS;
}

static exr_result_t exr_encode_chunk(exr_enc_job *j, size_t i, uint32_t worker)
{
    exr_encode_pipeline_t *ep = &j->pipes[worker];
    const exr_chunk_info_t *ci = &j->infos[i];
    exr_result_t rv;
    if (!j->ready[worker]) {
        rv = exr_encoding_initialize(j->f, j->part, ci, ep);
        if (rv != EXR_ERR_SUCCESS) return rv;
        j->ready[worker] = 1;
    } else {
        rv = exr_encoding_update(j->f, j->part, ci, ep);
        if (rv != EXR_ERR_SUCCESS) return rv;
    }
    size_t tx = i % j->ntx, ty = i / j->ntx;
    const float *base = j->px + (ty * j->th * (size_t)j->width + tx * j->tw) * 4;
    for (int c = 0; c < ep->channel_count; c++) {
        exr_coding_channel_info_t *cc = &ep->channels[c];
        const char *cn = cc->channel_name;
        int slot = cn[0] == 'A' ? 3 : cn[0] == 'G' ? 1 : cn[0] == 'B' ? 2 : 0; /* R and Y read R */
        cc->encode_from_ptr = (const uint8_t *)(base + slot);
        cc->user_pixel_stride = 16;
        cc->user_line_stride = (int32_t)(j->width * 16);
        cc->user_data_type = EXR_PIXEL_FLOAT;
        cc->user_bytes_per_element = 4;
    }
    rv = exr_encoding_choose_default_routines(j->f, j->part, ep);
    if (rv != EXR_ERR_SUCCESS) return rv;
    ep->yield_until_ready_fn = NULL;
    ep->write_fn = exr_capture_write;
    ep->encoding_user_data = &j->chunks[i];
    return exr_encoding_run(j->f, j->part, ep);
}

static void exr_encode_range(void *user, size_t begin, size_t end, uint32_t worker)
{
    exr_enc_job *j = user;
    for (size_t i = begin; i < end; i++) j->results[i] = exr_encode_chunk(j, i, worker);
}

kiln_status kiln__exr_encode(kiln_context *ctx, const kiln_image *img, const kiln__exr_options *opt, const char *name,
                             uint8_t **out, size_t *out_size)
{
    *out = NULL;
    *out_size = 0;
    KILN_TRY(check_image(ctx, img, name));
    if (img->width > INT32_MAX || img->height > INT32_MAX || opt->compression < 0 ||
        opt->compression >= EXR_COMPRESSION_LAST_TYPE || (opt->tile_w && !opt->tile_h))
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "%s: bad OpenEXR options", name);
    uint32_t ch = img->channels < 1 ? 1 : img->channels > 4 ? 4 : img->channels;
    uint32_t nthreads = kiln_context_threads(ctx);
    const float *px = img->pixels;
    float *conv = NULL;
    if (img->type != KILN_PIXEL_F32 || img->srgb) {
        size_t count = (size_t)img->width * img->height * 4;
        conv = kiln__malloc(ctx, count * sizeof(float));
        if (!conv) return KILN_ERR_OUT_OF_MEMORY;
        linear_job lj = {img, conv};
        kiln_status st = kiln__parallel_for(ctx, img->height, 16, linear_range, &lj);
        if (st != KILN_OK) {
            free(conv);
            return st;
        }
        px = conv;
    }
    exr_stream s;
    memset(&s, 0, sizeof s);
    s.record = 1;
    exr_context_initializer_t init = EXR_DEFAULT_CONTEXT_INITIALIZER;
    init.error_handler_fn = exr_error_cb;
    init.user_data = &s;
    init.write_fn = exr_write_cb;
    exr_context_t f = NULL;
    exr_enc_job j;
    memset(&j, 0, sizeof j);
    size_t nchunks = 0;
    kiln_status st = KILN_OK;
    const char *what = "start";
    int part = 0;
    exr_result_t rv = exr_start_write(&f, name, EXR_WRITE_FILE_DIRECTLY, &init);
    if (rv == EXR_ERR_SUCCESS) {
        what = "part";
        rv = exr_add_part(f, NULL, opt->tile_w ? EXR_STORAGE_TILED : EXR_STORAGE_SCANLINE, &part);
    }
    if (rv == EXR_ERR_SUCCESS)
        rv = exr_initialize_required_attr_simple(f, part, (int32_t)img->width, (int32_t)img->height,
                                                 (exr_compression_t)opt->compression);
    if (rv == EXR_ERR_SUCCESS) rv = exr_set_zip_compression_level(f, part, 4); /* the C++ library's default */
    if (rv == EXR_ERR_SUCCESS && opt->tile_w)
        rv = exr_set_tile_descriptor(f, part, opt->tile_w, opt->tile_h, EXR_TILE_ONE_LEVEL, EXR_TILE_ROUND_DOWN);
    static const char *const names[5][4] = {{0}, {"Y"}, {"Y", "A"}, {"R", "G", "B"}, {"R", "G", "B", "A"}};
    exr_pixel_type_t pt = opt->full_float ? EXR_PIXEL_FLOAT : EXR_PIXEL_HALF;
    for (uint32_t c = 0; c < ch && rv == EXR_ERR_SUCCESS; c++) {
        what = "channels";
        rv = exr_add_channel(f, part, names[ch][c], pt,
                             names[ch][c][0] == 'A' ? EXR_PERCEPTUALLY_LINEAR : EXR_PERCEPTUALLY_LOGARITHMIC, 1, 1);
    }
    if (rv == EXR_ERR_SUCCESS) {
        what = "header";
        rv = exr_write_header(f);
    }
    int32_t lpc = 1;
    if (rv == EXR_ERR_SUCCESS && !opt->tile_w) rv = exr_get_scanlines_per_chunk(f, part, &lpc);
    if (rv == EXR_ERR_SUCCESS) {
        j.f = f;
        j.part = part;
        j.px = px;
        j.width = img->width;
        j.tw = opt->tile_w ? opt->tile_w : img->width;
        j.th = opt->tile_w ? opt->tile_h : (uint32_t)lpc;
        j.ntx = (img->width + j.tw - 1) / j.tw;
        nchunks = (size_t)j.ntx * ((img->height + j.th - 1) / j.th);
        exr_chunk_info_t *infos = kiln__calloc(ctx, nchunks, sizeof *infos);
        j.infos = infos;
        j.chunks = kiln__calloc(ctx, nchunks, sizeof *j.chunks);
        j.results = kiln__calloc(ctx, nchunks, sizeof *j.results);
        j.pipes = kiln__calloc(ctx, nthreads, sizeof *j.pipes);
        j.ready = kiln__calloc(ctx, nthreads, 1);
        if (!infos || !j.chunks || !j.results || !j.pipes || !j.ready) st = KILN_ERR_OUT_OF_MEMORY;
        what = "chunk table";
        for (size_t i = 0; i < nchunks && st == KILN_OK && rv == EXR_ERR_SUCCESS; i++) {
            if (opt->tile_w) rv = exr_write_tile_chunk_info(f, part, (int)(i % j.ntx), (int)(i / j.ntx), 0, 0, &infos[i]);
            else rv = exr_write_scanline_chunk_info(f, part, (int)(i * j.th), &infos[i]);
        }
    }
    if (rv == EXR_ERR_SUCCESS && st == KILN_OK) {
        s.record = 0; /* the callback may run on several threads */
        st = kiln__parallel_for(ctx, nchunks, 1, exr_encode_range, &j);
        s.record = 1;
        what = "encoding";
        for (size_t i = 0; i < nchunks && st == KILN_OK && rv == EXR_ERR_SUCCESS; i++) rv = j.results[i];
        what = "writing";
        for (size_t i = 0; i < nchunks && st == KILN_OK && rv == EXR_ERR_SUCCESS; i++) {
            const exr_chunk_info_t *ci = &j.infos[i];
            if (opt->tile_w)
                rv = exr_write_tile_chunk(f, part, ci->start_x, ci->start_y, 0, 0, j.chunks[i].data, j.chunks[i].size);
            else
                rv = exr_write_scanline_chunk(f, part, ci->start_y, j.chunks[i].data, j.chunks[i].size);
        }
    }
    if (j.pipes)
        for (uint32_t t = 0; t < nthreads; t++)
            if (j.ready[t]) exr_encoding_destroy(f, &j.pipes[t]);
    if (j.chunks)
        for (size_t i = 0; i < nchunks; i++) free(j.chunks[i].data);
    free(j.chunks);
    free((void *)j.infos);
    free(j.results);
    free(j.pipes);
    free(j.ready);
    exr_result_t frv = exr_finish(&f);
    if (rv == EXR_ERR_SUCCESS && frv != EXR_ERR_SUCCESS) {
        rv = frv;
        what = "finish";
    }
    free(conv);
    if (st != KILN_OK || rv != EXR_ERR_SUCCESS || s.oom) {
        free(s.out);
        if (st != KILN_OK) return st;
        if (s.oom || rv == EXR_ERR_OUT_OF_MEMORY)
            return kiln__fail(ctx, KILN_ERR_OUT_OF_MEMORY, "%s: out of memory writing OpenEXR", name);
        return kiln__fail(ctx, KILN_ERR_INTERNAL, "%s: OpenEXR writing failed (%s): %s", name, what,
                          s.msg[0] ? s.msg : exr_get_default_error_message(rv));
    }
    *out = s.out;
    *out_size = s.out_size;
    return KILN_OK;
}

/* ---------------------------------------------------------------- saving --------------------- */

static int has_ext(const char *path, const char *ext)
{
    size_t n = strlen(path), e = strlen(ext);
    return n > e && !strcasecmp(path + n - e, ext);
}

kiln_status kiln_image_save(kiln_context *ctx, const kiln_image *img, const char *path, uint32_t flags)
{
    if (!ctx) return KILN_ERR_INVALID_ARGUMENT;
    kiln__clear_error(ctx);
    if (!path || !*path) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_image_save: path is empty");
    if (flags & ~KILN_SAVE_EXR_FLOAT)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "%s: unknown save flags 0x%x", path, flags);
    KILN_TRY(check_image(ctx, img, path));
    uint8_t *buf = NULL;
    size_t size = 0;
    if (has_ext(path, ".png")) {
        KILN_TRY(kiln__png_encode(ctx, img, path, &buf, &size));
    } else if (has_ext(path, ".exr")) {
        kiln__exr_options o = {EXR_COMPRESSION_ZIP, (flags & KILN_SAVE_EXR_FLOAT) != 0, 0, 0};
        KILN_TRY(kiln__exr_encode(ctx, img, &o, path, &buf, &size));
    } else {
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: unknown image extension (kiln writes .png and .exr)", path);
    }
    kiln_status st = kiln__write_file_atomic(ctx, path, buf, size);
    free(buf);
    return st;
}

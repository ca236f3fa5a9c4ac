/* ktx2.c - KTX 2.0: reader, writer (optional Zstandard supercompression, scheme 2), strict validator
 * and describer.
 *
 * Writer layout (what ktx-parse's write() reproduces byte for byte): 80-byte header, level index
 * (entry 0 = base level), DFD built from the format table (dfd.c), key/value data sorted by key with
 * KTXwriter = "kiln <version>" (and KTXwriterScParams = "--zstd N" when supercompressed), then the level
 * data smallest level first. Without supercompression every level starts on lcm(block bytes, 4) with
 * zero padding (in practice only before the first, smallest level); with zstd each level is one
 * independent frame and there is no padding. ETC1 textures are written as VK_FORMAT_ETC2_R8G8B8_*
 * (ETC1 blocks are valid ETC2 RGB8 blocks); they load back as ETC2 RGB8.
 *
 * Reader: everything the writer writes plus other valid files (either bytesPlane convention for
 * supercompressed files, several zstd frames per level, skippable frames, any key/value data, 1-D and
 * 3-D textures). Every offset and length is checked against the file size before use, level sizes
 * against the format and geometry, dimensions against kiln's limits before allocating; zstd content
 * sizes are checked against uncompressedByteLength before and after decompressing. */
#include "container/container.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

const uint8_t kiln__ktx2_id[12] = {0xAB, 'K', 'T', 'X', ' ', '2', '0', 0xBB, '\r', '\n', 0x1A, '\n'};

#define HEADER_SIZE 80u
#define INDEX_ENTRY 24u
#define SCHEME_NONE 0u
#define SCHEME_BASISLZ 1u
#define SCHEME_ZSTD 2u
#define SCHEME_ZLIB 3u
/* A zstd block of at most 128 KiB costs at least 4 bytes (RLE), so no level can expand by more. */
#define ZSTD_MAX_RATIO 32768u

typedef struct k2 {
    uint32_t vk, type_size, w, h, d, layers, faces, levels, scheme;
    uint32_t dfd_off, dfd_len, kvd_off, kvd_len;
    uint64_t sgd_off, sgd_len;
    uint32_t nindex; /* max(1, levels) */
} k2;

static void parse_header(const uint8_t *p, k2 *h)
{
    h->vk = kiln__rd32(p + 12);
    h->type_size = kiln__rd32(p + 16);
    h->w = kiln__rd32(p + 20);
    h->h = kiln__rd32(p + 24);
    h->d = kiln__rd32(p + 28);
    h->layers = kiln__rd32(p + 32);
    h->faces = kiln__rd32(p + 36);
    h->levels = kiln__rd32(p + 40);
    h->scheme = kiln__rd32(p + 44);
    h->dfd_off = kiln__rd32(p + 48);
    h->dfd_len = kiln__rd32(p + 52);
    h->kvd_off = kiln__rd32(p + 56);
    h->kvd_len = kiln__rd32(p + 60);
    h->sgd_off = kiln__rd64(p + 64);
    h->sgd_len = kiln__rd64(p + 72);
    h->nindex = h->levels ? h->levels : 1;
}

static void index_entry(const uint8_t *p, uint32_t i, uint64_t *off, uint64_t *len, uint64_t *ulen)
{
    const uint8_t *e = p + HEADER_SIZE + (size_t)INDEX_ENTRY * i;
    *off = kiln__rd64(e);
    *len = kiln__rd64(e + 8);
    *ulen = kiln__rd64(e + 16);
}

static const char *scheme_name(uint32_t s)
{
    switch (s) {
    case SCHEME_NONE: return "NONE";
    case SCHEME_BASISLZ: return "BASISLZ";
    case SCHEME_ZSTD: return "ZSTD";
    case SCHEME_ZLIB: return "ZLIB";
    default: return s >= 0x10000 ? "vendor" : "invalid";
    }
}

static uint32_t lcm4(uint32_t a)
{
    uint32_t x = a, y = 4;
    while (y) {
        uint32_t t = x % y;
        x = y;
        y = t;
    }
    return a / x * 4;
}

/* Sums the content sizes of the zstd frames in [src, src+n). Returns -1 when a frame is malformed,
 * 1 when some frame does not record its size, 0 when *total is exact. */
static int zstd_content_size(const uint8_t *src, size_t n, uint64_t *total)
{
    *total = 0;
    int unknown = 0;
    if (n == 0) return -1;
    while (n) {
        size_t fsz = ZSTD_findFrameCompressedSize(src, n);
        if (ZSTD_isError(fsz) || fsz == 0 || fsz > n) return -1;
        unsigned long long c = ZSTD_getFrameContentSize(src, fsz);
        if (c == ZSTD_CONTENTSIZE_ERROR) return -1;
        if (c == ZSTD_CONTENTSIZE_UNKNOWN) unknown = 1;
        else if (__builtin_add_overflow(*total, (uint64_t)c, total)) return -1;
        src += fsz;
        n -= fsz;
    }
    return unknown;
}

/* Decompresses one level into dst of exactly `want` bytes; message into err on failure. */
static bool zstd_level(ZSTD_DCtx *dctx, const uint8_t *src, size_t n, uint8_t *dst, size_t want, char *err,
                       size_t errn)
{
    uint64_t content;
    int r = zstd_content_size(src, n, &content);
    if (r < 0) {
        snprintf(err, errn, "is not a sequence of valid zstd frames");
        return false;
    }
    if (r == 0 && content != want) {
        snprintf(err, errn, "holds zstd frames of %llu bytes but uncompressedByteLength is %zu",
                 (unsigned long long)content, want);
        return false;
    }
    size_t got = ZSTD_decompressDCtx(dctx, dst, want, src, n);
    if (ZSTD_isError(got)) {
        snprintf(err, errn, "does not decompress: %s", ZSTD_getErrorName(got));
        return false;
    }
    if (got != want) {
        snprintf(err, errn, "decompresses to %zu bytes but uncompressedByteLength is %zu", got, want);
        return false;
    }
    return true;
}

/* ================================================================ reader */

static kiln_status read_kvd(kiln_context *ctx, const char *name, const uint8_t *p, uint32_t n, kiln_texture *tex)
{
    uint32_t off = 0;
    while (off < n) {
        if (n - off < 4)
            return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: key/value data ends with %u stray bytes", name, n - off);
        uint32_t len = kiln__rd32(p + off);
        if (len > n - off - 4)
            return kiln__fail(ctx, KILN_ERR_CORRUPT,
                              "%s: key/value entry at offset %u claims %u bytes but only %u are left", name, off, len,
                              n - off - 4);
        const uint8_t *e = p + off + 4;
        const uint8_t *nul = memchr(e, 0, len);
        if (!nul || nul == e)
            return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: key/value entry at offset %u has %s", name, off,
                              nul ? "an empty key" : "no NUL after its key");
        uint32_t klen = (uint32_t)(nul - e);
        KILN_TRY(kiln__texture_add_kv(ctx, tex, (const char *)e, nul + 1, len - klen - 1));
        uint32_t adv = 4 + len;
        adv += (4 - (len & 3)) & 3;
        if (adv > n - off) break; /* the last entry's padding may be missing */
        off += adv;
    }
    kiln__texture_sort_kv(tex);
    return KILN_OK;
}

kiln_status kiln__ktx2_load(kiln_context *ctx, const char *name, const uint8_t *p, size_t size, kiln_texture *out)
{
    if (size < HEADER_SIZE)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: %zu bytes, shorter than the %u-byte KTX2 header", name, size,
                          HEADER_SIZE);
    k2 h;
    parse_header(p, &h);
    kiln_format f = kiln_format_from_vk(h.vk);
    if (h.scheme == SCHEME_BASISLZ)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: BasisLZ supercompression (ETC1S) is not supported", name);
    if (h.scheme == SCHEME_ZLIB)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: zlib supercompression is not supported (kiln reads zstd)", name);
    if (h.scheme != SCHEME_NONE && h.scheme != SCHEME_ZSTD)
        return kiln__fail(ctx, h.scheme >= 0x10000 ? KILN_ERR_UNSUPPORTED : KILN_ERR_CORRUPT,
                          "%s: unknown supercompressionScheme %u", name, h.scheme);
    if (f == KILN_FORMAT_UNDEFINED)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: vkFormat %u%s is not a format kiln supports", name, h.vk,
                          h.vk == 0 ? " (VK_FORMAT_UNDEFINED)" : "");
    const kiln_format_info *fi = kiln_format_get_info(f);
    bool compressed = (fi->flags & KILN_FF_COMPRESSED) != 0;
    if (h.w == 0) return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: pixelWidth is 0", name);
    if (h.h == 0 && (compressed || h.d != 0))
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: pixelHeight is 0 but the texture is %s", name,
                          compressed ? "block-compressed" : "3-D");
    if (h.levels == 0 && compressed)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: levelCount is 0 (generate mipmaps at load), which is not allowed "
                          "for the block-compressed %s", name, fi->name);
    if (h.levels > KILN_MAX_LEVELS)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: levelCount %u is more than any texture can have", name, h.levels);
    if (h.faces == 6 && h.d != 0) return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: a cube map cannot be 3-D", name);
    uint64_t index_end = HEADER_SIZE + (uint64_t)INDEX_ENTRY * h.nindex;
    if (index_end > size)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: the level index (%u entries) extends past the end of the file (%zu "
                          "bytes)", name, h.nindex, size);
    kiln_status st = kiln__texture_geometry(ctx, name, out, f, h.w, h.h ? h.h : 1, h.d ? h.d : 1,
                                            h.layers ? h.layers : 1, h.faces, h.nindex);
    if (st != KILN_OK) return st;
    out->is_array = h.layers > 0;
    if (out->data_size > (uint64_t)size * (h.scheme == SCHEME_ZSTD ? ZSTD_MAX_RATIO : 1))
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: a %ux%u %s texture needs %zu bytes of data; the file has only %zu",
                          name, h.w, h.h, fi->name, out->data_size, size);
    for (uint32_t l = 0; l < h.nindex; l++) {
        uint64_t off, len, ulen;
        index_entry(p, l, &off, &len, &ulen);
        if (!kiln__in_bounds(off, len, size))
            return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: level %u (offset %llu, %llu bytes) extends past the end of the "
                              "file (%zu bytes)", name, l, (unsigned long long)off, (unsigned long long)len, size);
        if (off < index_end)
            return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: level %u starts at offset %llu, inside the header", name, l,
                              (unsigned long long)off);
        if (ulen != out->level_size[l])
            return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: level %u uncompressedByteLength is %llu but a %ux%u level of %s "
                              "needs %zu", name, l, (unsigned long long)ulen, kiln_level_dim(h.w, l),
                              kiln_level_dim(h.h ? h.h : 1, l), fi->name, out->level_size[l]);
        if (h.scheme == SCHEME_NONE && len != ulen)
            return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: level %u byteLength is %llu but uncompressedByteLength is %llu",
                              name, l, (unsigned long long)len, (unsigned long long)ulen);
        if (h.scheme == SCHEME_ZSTD && (len == 0 || ulen / ZSTD_MAX_RATIO > len))
            return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: level %u: %llu bytes of zstd data cannot hold %llu bytes", name,
                              l, (unsigned long long)len, (unsigned long long)ulen);
    }
    if (h.dfd_len) {
        if (!kiln__in_bounds(h.dfd_off, h.dfd_len, size))
            return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: the DFD (offset %u, %u bytes) extends past the end of the file",
                              name, h.dfd_off, h.dfd_len);
        if (h.dfd_len >= 16) out->premultiplied = (p[h.dfd_off + 4 + 11] & 1) != 0;
    }
    if (h.kvd_len) {
        if (!kiln__in_bounds(h.kvd_off, h.kvd_len, size))
            return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: the key/value data (offset %u, %u bytes) extends past the end "
                              "of the file", name, h.kvd_off, h.kvd_len);
        KILN_TRY(read_kvd(ctx, name, p + h.kvd_off, h.kvd_len, out));
    }
    out->data = kiln__malloc(ctx, out->data_size);
    if (!out->data) return KILN_ERR_OUT_OF_MEMORY;
    ZSTD_DCtx *dctx = NULL;
    if (h.scheme == SCHEME_ZSTD) {
        dctx = ZSTD_createDCtx();
        if (!dctx) return kiln__fail(ctx, KILN_ERR_OUT_OF_MEMORY, "%s: cannot create a zstd context", name);
    }
    for (uint32_t l = 0; l < h.nindex; l++) {
        uint64_t off, len, ulen;
        index_entry(p, l, &off, &len, &ulen);
        if (h.scheme == SCHEME_NONE) {
            memcpy(out->data + out->level_offset[l], p + off, out->level_size[l]);
            continue;
        }
        char err[160];
        if (!zstd_level(dctx, p + off, (size_t)len, out->data + out->level_offset[l], out->level_size[l], err, sizeof err)) {
            ZSTD_freeDCtx(dctx);
            return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: level %u %s", name, l, err);
        }
    }
    ZSTD_freeDCtx(dctx);
    return KILN_OK;
}

/* ================================================================ writer */

static void validate_kvd(kiln__report *r, const uint8_t *p, uint32_t n, const k2 *h);

typedef struct zjob {
    const kiln_texture *tex;
    int level;
    uint8_t *out[KILN_MAX_LEVELS];
    size_t out_size[KILN_MAX_LEVELS];
    size_t err[KILN_MAX_LEVELS];
} zjob;

static void zstd_fn(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    zjob *j = user;
    for (size_t l = begin; l < end; l++) {
        const uint8_t *src = j->tex->data + j->tex->level_offset[l];
        size_t n = j->tex->level_size[l];
        size_t cap = ZSTD_compressBound(n);
        j->out[l] = malloc(cap ? cap : 1);
        if (!j->out[l]) {
            j->err[l] = (size_t)-1;
            continue;
        }
        size_t r = ZSTD_compress(j->out[l], cap, src, n, j->level);
        if (ZSTD_isError(r)) j->err[l] = r;
        else j->out_size[l] = r;
    }
}

typedef struct kvp {
    const char *key;
    const uint8_t *value;
    uint32_t size;
} kvp;

static int kvp_cmp(const void *a, const void *b) { return strcmp(((const kvp *)a)->key, ((const kvp *)b)->key); }

kiln_status kiln__ktx2_save(kiln_context *ctx, const kiln_texture *tex, int zstd_level, kiln__buf *b)
{
    const kiln_format_info *fi = kiln_format_get_info(tex->format);
    uint32_t dfd[KILN_DFD_MAX_WORDS];
    uint32_t dfd_words = kiln__dfd_build(tex->format, tex->premultiplied, dfd);
    if (!dfd_words) return kiln__fail(ctx, KILN_ERR_INTERNAL, "no DFD for format %s", fi->name);
    uint32_t levels = tex->levels;
    uint32_t depth = tex->depth ? tex->depth : 1;
    uint32_t layers = tex->layers ? tex->layers : 1;

    /* key/value pairs: KTXwriter (+ KTXwriterScParams) replace any the texture carries */
    char writer[] = "kiln " KILN_VERSION_STRING;
    char scparams[32];
    snprintf(scparams, sizeof scparams, "--zstd %d", zstd_level);
    kvp *kv = malloc(((size_t)tex->kv_count + 2) * sizeof *kv);
    if (!kv) return kiln__fail(ctx, KILN_ERR_OUT_OF_MEMORY, "out of memory");
    uint32_t nkv = 0;
    kv[nkv++] = (kvp){"KTXwriter", (const uint8_t *)writer, (uint32_t)sizeof writer};
    if (zstd_level) kv[nkv++] = (kvp){"KTXwriterScParams", (const uint8_t *)scparams, (uint32_t)strlen(scparams) + 1};
    for (uint32_t i = 0; i < tex->kv_count; i++) {
        const kiln_kv *e = &tex->kv[i];
        if (!strcmp(e->key, "KTXwriter") || !strcmp(e->key, "KTXwriterScParams")) continue;
        kv[nkv++] = (kvp){e->key, e->value, e->value_size};
    }
    qsort(kv, nkv, sizeof *kv, kvp_cmp);
    for (uint32_t i = 1; i < nkv; i++)
        if (!strcmp(kv[i - 1].key, kv[i].key)) {
            kiln_status st = kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "key '%s' appears twice in the texture's "
                                        "key/value data", kv[i].key);
            free(kv);
            return st;
        }
    kiln__buf kvd = {0};
    for (uint32_t i = 0; i < nkv; i++) {
        size_t klen = strlen(kv[i].key);
        uint64_t len = (uint64_t)klen + 1 + kv[i].size;
        if (len > 0x7FFFFFFF) {
            kiln_status st = kiln__fail(ctx, KILN_ERR_TOO_LARGE, "key/value pair '%s' is too large", kv[i].key);
            free(kv);
            kiln__buf_free(&kvd);
            return st;
        }
        kiln__buf_u32(&kvd, (uint32_t)len);
        kiln__buf_put(&kvd, kv[i].key, klen + 1);
        kiln__buf_put(&kvd, kv[i].value, kv[i].size);
        kiln__buf_zero(&kvd, (4 - (len & 3)) & 3);
    }
    free(kv);
    if (kvd.oom || kvd.n > 0xFFFFFFFFu) {
        kiln__buf_free(&kvd);
        return kiln__fail(ctx, KILN_ERR_OUT_OF_MEMORY, "out of memory building key/value data");
    }
    {
        /* the texture's own pairs must make valid KTX2 metadata (reserved KTX keys, their values) */
        k2 hh;
        memset(&hh, 0, sizeof hh);
        hh.vk = fi->vk_format;
        hh.h = tex->height;
        hh.d = depth > 1 ? depth : 0;
        hh.layers = (tex->is_array || layers > 1) ? layers : 0;
        hh.faces = tex->faces;
        kiln__report rep = {NULL, NULL, 0, 0, {0}};
        validate_kvd(&rep, kvd.p, (uint32_t)kvd.n, &hh);
        if (rep.errors) {
            kiln__buf_free(&kvd);
            return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "the texture's key/value data cannot be written: %s",
                              rep.first_error);
        }
    }

    /* supercompress each level independently (in parallel; each level's bytes depend only on it) */
    zjob job;
    memset(&job, 0, sizeof job);
    job.tex = tex;
    job.level = zstd_level;
    if (zstd_level) {
        kiln_status st = kiln__parallel_for(ctx, levels, 1, zstd_fn, &job);
        for (uint32_t l = 0; l < levels && st == KILN_OK; l++)
            if (job.err[l])
                st = kiln__fail(ctx, job.err[l] == (size_t)-1 ? KILN_ERR_OUT_OF_MEMORY : KILN_ERR_INTERNAL,
                                "zstd compression of level %u failed: %s", l,
                                job.err[l] == (size_t)-1 ? "out of memory" : ZSTD_getErrorName(job.err[l]));
        if (st != KILN_OK) {
            for (uint32_t l = 0; l < levels; l++) free(job.out[l]);
            kiln__buf_free(&kvd);
            return st;
        }
    }

    uint32_t dfd_off = HEADER_SIZE + INDEX_ENTRY * levels;
    uint32_t dfd_len = dfd_words * 4;
    uint32_t kvd_off = dfd_off + dfd_len;
    uint32_t kvd_len = (uint32_t)kvd.n;
    uint8_t hdr[HEADER_SIZE];
    memcpy(hdr, kiln__ktx2_id, 12);
    kiln__set32(hdr + 12, fi->vk_format);
    kiln__set32(hdr + 16, fi->ktx2_type_size);
    kiln__set32(hdr + 20, tex->width);
    kiln__set32(hdr + 24, tex->height);
    kiln__set32(hdr + 28, depth > 1 ? depth : 0);
    kiln__set32(hdr + 32, (tex->is_array || layers > 1) ? layers : 0);
    kiln__set32(hdr + 36, tex->faces);
    kiln__set32(hdr + 40, levels);
    kiln__set32(hdr + 44, zstd_level ? SCHEME_ZSTD : SCHEME_NONE);
    kiln__set32(hdr + 48, dfd_off);
    kiln__set32(hdr + 52, dfd_len);
    kiln__set32(hdr + 56, kvd_len ? kvd_off : 0);
    kiln__set32(hdr + 60, kvd_len);
    kiln__set64(hdr + 64, 0);
    kiln__set64(hdr + 72, 0);
    kiln__buf_put(b, hdr, sizeof hdr);
    size_t index_at = b->n;
    kiln__buf_zero(b, (size_t)INDEX_ENTRY * levels);
    for (uint32_t i = 0; i < dfd_words; i++) kiln__buf_u32(b, dfd[i]);
    kiln__buf_put(b, kvd.p, kvd.n);
    kiln__buf_free(&kvd);
    uint32_t align = zstd_level ? 1 : lcm4(fi->block_bytes);
    uint64_t offs[KILN_MAX_LEVELS], lens[KILN_MAX_LEVELS];
    for (uint32_t i = levels; i-- > 0;) {
        if (b->n % align) kiln__buf_zero(b, align - b->n % align);
        offs[i] = b->n;
        if (zstd_level) {
            kiln__buf_put(b, job.out[i], job.out_size[i]);
            lens[i] = job.out_size[i];
        } else {
            kiln__buf_put(b, tex->data + tex->level_offset[i], tex->level_size[i]);
            lens[i] = tex->level_size[i];
        }
    }
    for (uint32_t l = 0; l < levels; l++) free(job.out[l]);
    if (b->oom) return kiln__fail(ctx, KILN_ERR_OUT_OF_MEMORY, "out of memory writing KTX2");
    for (uint32_t l = 0; l < levels; l++) {
        uint8_t *e = b->p + index_at + (size_t)INDEX_ENTRY * l;
        kiln__set64(e, offs[l]);
        kiln__set64(e + 8, lens[l]);
        kiln__set64(e + 16, tex->level_size[l]);
    }
    return KILN_OK;
}

/* ================================================================ validator */

static bool utf8_ok(const uint8_t *s, size_t n, size_t *bad)
{
    for (size_t i = 0; i < n;) {
        uint8_t c = s[i];
        size_t k;
        if (c < 0x80) k = 0;
        else if ((c & 0xE0) == 0xC0) k = 1;
        else if ((c & 0xF0) == 0xE0) k = 2;
        else if ((c & 0xF8) == 0xF0) k = 3;
        else {
            *bad = i;
            return false;
        }
        if (k > n - i - 1) {
            *bad = i;
            return false;
        }
        for (size_t j = 1; j <= k; j++)
            if ((s[i + j] & 0xC0) != 0x80) {
                *bad = i;
                return false;
            }
        i += k + 1;
    }
    return true;
}

static void check_string_value(kiln__report *r, const char *key, const uint8_t *v, uint32_t n)
{
    size_t bad;
    if (n == 0 || v[n - 1] != 0) kiln__rep(r, KILN__ERR, "KVD: %s value is missing its NUL terminator", key);
    else if (!utf8_ok(v, n - 1, &bad)) kiln__rep(r, KILN__ERR, "KVD: %s value has invalid UTF-8 at byte %zu", key, bad);
}

static void validate_kvd(kiln__report *r, const uint8_t *p, uint32_t n, const k2 *h)
{
    uint32_t off = 0, count = 0;
    char prev[256] = "";
    bool have_prev = false, unsorted = false, writer = false, scparams = false;
    while (off < n) {
        if (n - off < 6) {
            kiln__rep(r, KILN__ERR, "KVD: %u bytes left at offset %u, too few for another entry (at least 6)", n - off, off);
            return;
        }
        uint32_t len = kiln__rd32(p + off);
        if (len < 2) {
            kiln__rep(r, KILN__ERR, "KVD: entry at offset %u has keyAndValueByteLength %u (at least 2)", off, len);
            return;
        }
        if (len > n - off - 4) {
            kiln__rep(r, KILN__ERR, "KVD: entry at offset %u has keyAndValueByteLength %u but only %u bytes are left",
                      off, len, n - off - 4);
            return;
        }
        const uint8_t *e = p + off + 4;
        const uint8_t *nul = memchr(e, 0, len);
        if (!nul) {
            kiln__rep(r, KILN__ERR, "KVD: entry at offset %u has no NUL terminating its key", off);
            return;
        }
        size_t klen = (size_t)(nul - e);
        char key[256];
        snprintf(key, sizeof key, "%.*s", (int)(klen < 255 ? klen : 255), (const char *)e);
        const uint8_t *v = nul + 1;
        uint32_t vn = len - (uint32_t)klen - 1;
        size_t bad;
        if (klen == 0) kiln__rep(r, KILN__ERR, "KVD: entry at offset %u has an empty key", off);
        else if (klen >= 3 && e[0] == 0xEF && e[1] == 0xBB && e[2] == 0xBF)
            kiln__rep(r, KILN__ERR, "KVD: key at offset %u starts with a byte order mark", off);
        else if (!utf8_ok(e, klen, &bad)) kiln__rep(r, KILN__ERR, "KVD: key \"%s\" has invalid UTF-8 at byte %zu", key, bad);
        if (have_prev) {
            int c = strcmp(prev, key);
            if (c == 0) kiln__rep(r, KILN__ERR, "KVD: key \"%s\" appears more than once", key);
            else if (c > 0 && !unsorted) {
                kiln__rep(r, KILN__ERR, "KVD: entries are not sorted by key (\"%s\" comes after \"%s\")", key, prev);
                unsorted = true;
            }
        }
        snprintf(prev, sizeof prev, "%s", key);
        have_prev = true;
        count++;
        /* known keys */
        if (!strcmp(key, "KTXwriter")) {
            writer = true;
            check_string_value(r, key, v, vn);
        } else if (!strcmp(key, "KTXwriterScParams")) {
            scparams = true;
            check_string_value(r, key, v, vn);
        } else if (!strcmp(key, "KTXorientation")) {
            uint32_t dims = h->d ? 3 : h->h ? 2 : 1;
            if (vn == 0 || v[vn - 1] != 0) kiln__rep(r, KILN__ERR, "KVD: KTXorientation value is missing its NUL terminator");
            else if (vn - 1 != dims)
                kiln__rep(r, KILN__ERR, "KVD: KTXorientation \"%.*s\" has %u dimensions but the texture has %u",
                          (int)(vn - 1), (const char *)v, vn - 1, dims);
            else {
                static const char *ok[3] = {"rl", "du", "oi"};
                for (uint32_t i = 0; i < dims; i++)
                    if (!v[i] || !strchr(ok[i], v[i])) {
                        kiln__rep(r, KILN__ERR, "KVD: KTXorientation dimension %u is '%c' but must be '%c' or '%c'", i,
                                  v[i] >= 0x20 && v[i] < 0x7F ? v[i] : '?', ok[i][0], ok[i][1]);
                        break;
                    }
            }
        } else if (!strcmp(key, "KTXswizzle")) {
            if (vn != 5) kiln__rep(r, KILN__ERR, "KVD: KTXswizzle value is %u bytes but must be 5 (4 + NUL)", vn);
            else if (v[4] != 0) kiln__rep(r, KILN__ERR, "KVD: KTXswizzle value is missing its NUL terminator");
            else
                for (int i = 0; i < 4; i++)
                    if (!v[i] || !strchr("rgba01", v[i])) {
                        kiln__rep(r, KILN__ERR, "KVD: KTXswizzle character %d is not one of rgba01", i);
                        break;
                    }
        } else if (!strcmp(key, "KTXglFormat") || !strcmp(key, "KTXdxgiFormat__") || !strcmp(key, "KTXmetalPixelFormat")) {
            if (h->vk != 0)
                kiln__rep(r, KILN__ERR, "KVD: %s is present but vkFormat is %u; it is only allowed with VK_FORMAT_UNDEFINED",
                          key, h->vk);
        } else if (!strcmp(key, "KTXcubemapIncomplete")) {
            if (vn != 1) kiln__rep(r, KILN__ERR, "KVD: KTXcubemapIncomplete value is %u bytes but must be 1", vn);
            else if (v[0] & 0xC0) kiln__rep(r, KILN__ERR, "KVD: KTXcubemapIncomplete has one of its two high bits set");
            else if (!(v[0] & 0x3F)) kiln__rep(r, KILN__ERR, "KVD: KTXcubemapIncomplete marks no face present");
            if (h->faces != 1) kiln__rep(r, KILN__ERR, "KVD: KTXcubemapIncomplete needs faceCount 1, not %u", h->faces);
        } else if (!strcmp(key, "KTXanimData")) {
            if (vn != 12) kiln__rep(r, KILN__ERR, "KVD: KTXanimData value is %u bytes but must be 12", vn);
            if (h->layers == 0) kiln__rep(r, KILN__ERR, "KVD: KTXanimData needs an array texture (layerCount > 0)");
        } else if (!strcmp(key, "KTXastcDecodeMode")) {
            kiln__rep(r, KILN__WARN, "KVD: KTXastcDecodeMode has no effect on non-ASTC formats");
        } else if (!strncmp(key, "KTX", 3) || !strncmp(key, "ktx", 3)) {
            kiln__rep(r, KILN__ERR, "KVD: key \"%s\" uses the reserved KTX/ktx prefix but is not a key the specification "
                      "defines", key);
        }
        uint32_t pad = (4 - (len & 3)) & 3;
        uint32_t end = off + 4 + len;
        if (pad > n - end) {
            kiln__rep(r, KILN__ERR, "KVD: kvdByteLength %u ends inside the padding of entry \"%s\" (entries are padded to "
                      "4 bytes and the padding is counted)", n, key);
            return;
        }
        for (uint32_t i = 0; i < pad; i++)
            if (p[end + i]) {
                kiln__rep(r, KILN__ERR, "KVD: padding byte after entry \"%s\" is 0x%02X but must be 0", key, p[end + i]);
                break;
            }
        off = end + pad;
    }
    if (scparams && !writer) kiln__rep(r, KILN__ERR, "KVD: KTXwriterScParams is present without KTXwriter");
    if (!writer) kiln__rep(r, KILN__WARN, "KVD: KTXwriter is missing; writers are strongly urged to identify themselves");
    (void)count;
}

void kiln__ktx2_validate(kiln_context *ctx, const uint8_t *p, size_t size, kiln__report *r)
{
    (void)ctx;
    if (size < HEADER_SIZE) {
        kiln__rep(r, KILN__ERR, "header: file is %zu bytes, shorter than the %u-byte KTX2 header", size, HEADER_SIZE);
        return;
    }
    k2 h;
    parse_header(p, &h);
    kiln_format f = kiln_format_from_vk(h.vk);
    const kiln_format_info *fi = kiln_format_get_info(f);
    bool compressed = fi && (fi->flags & KILN_FF_COMPRESSED);

    /* ---- header fields */
    if (h.scheme == SCHEME_BASISLZ && h.vk != 0)
        kiln__rep(r, KILN__ERR, "header: vkFormat is %u but BasisLZ supercompression needs VK_FORMAT_UNDEFINED", h.vk);
    if (!fi)
        kiln__rep(r, KILN__ERR, "header: vkFormat %u%s is not supported by kiln (level sizes and DFD cannot be checked)",
                  h.vk, h.vk == 0 ? " (VK_FORMAT_UNDEFINED)" : "");
    if (fi && h.type_size != fi->ktx2_type_size)
        kiln__rep(r, KILN__ERR, "header: typeSize is %u but VK_FORMAT_%s needs %u", h.type_size, fi->vk_name,
                  fi->ktx2_type_size);
    if (h.w == 0) kiln__rep(r, KILN__ERR, "header: pixelWidth is 0; textures must have a width");
    if (h.h == 0 && compressed)
        kiln__rep(r, KILN__ERR, "header: pixelHeight is 0 but VK_FORMAT_%s is block-compressed", fi->vk_name);
    if (h.h == 0 && h.d != 0) kiln__rep(r, KILN__ERR, "header: pixelHeight is 0 but pixelDepth is %u", h.d);
    if (h.faces != 1 && h.faces != 6)
        kiln__rep(r, KILN__ERR, "header: faceCount is %u but must be 6 (cube maps) or 1", h.faces);
    if (h.faces == 6 && h.w != h.h)
        kiln__rep(r, KILN__ERR, "header: cube map with pixelWidth %u and pixelHeight %u; they must be equal", h.w, h.h);
    if (h.faces == 6 && h.d != 0) kiln__rep(r, KILN__ERR, "header: pixelDepth is %u but cube maps must have 0", h.d);
    if (h.d != 0 && h.layers != 0) kiln__rep(r, KILN__WARN, "header: 3-D array texture; no graphics API supports these");
    uint32_t maxl = kiln__full_chain(h.w, h.h, h.d);
    if (h.levels > maxl)
        kiln__rep(r, KILN__ERR, "header: levelCount is %u but a %ux%ux%u texture has at most %u levels", h.levels, h.w,
                  h.h, h.d, maxl);
    if (h.levels == 0 && compressed)
        kiln__rep(r, KILN__ERR, "header: levelCount is 0 but it must not be 0 for the block-compressed VK_FORMAT_%s",
                  fi->vk_name);
    if (h.scheme == SCHEME_BASISLZ)
        kiln__rep(r, KILN__ERR, "header: supercompressionScheme 1 (BasisLZ) is not supported by kiln");
    else if (h.scheme == SCHEME_ZLIB)
        kiln__rep(r, KILN__ERR, "header: supercompressionScheme 3 (zlib) is valid but kiln cannot decompress it");
    else if (h.scheme >= 0x10000)
        kiln__rep(r, KILN__WARN, "header: supercompressionScheme 0x%X is in the vendor range; cannot validate", h.scheme);
    else if (h.scheme != SCHEME_NONE && h.scheme != SCHEME_ZSTD)
        kiln__rep(r, KILN__ERR, "header: supercompressionScheme %u is not a value the specification defines", h.scheme);
    if (h.w > KILN_MAX_DIMENSION || h.h > KILN_MAX_DIMENSION || h.d > KILN_MAX_DIMENSION ||
        (uint64_t)h.w * (h.h ? h.h : 1) * (h.d ? h.d : 1) > KILN_MAX_PIXELS)
        kiln__rep(r, KILN__ERR, "header: %ux%ux%u exceeds kiln's limits (%u per side, %llu pixels)", h.w, h.h, h.d,
                  KILN_MAX_DIMENSION, (unsigned long long)KILN_MAX_PIXELS);

    /* ---- index and section offsets */
    if (h.levels > 64) {
        kiln__rep(r, KILN__ERR, "index: levelCount %u is absurd; the level index is not checked", h.levels);
        return;
    }
    uint64_t index_end = HEADER_SIZE + (uint64_t)INDEX_ENTRY * h.nindex;
    if (index_end > size) {
        kiln__rep(r, KILN__ERR, "index: the level index (%u entries) ends at %llu, past the end of the file (%zu bytes)",
                  h.nindex, (unsigned long long)index_end, size);
        return;
    }
    bool dfd_ok = false;
    if (h.dfd_off == 0 || h.dfd_len == 0)
        kiln__rep(r, KILN__ERR, "index: the DFD is mandatory but dfdByteOffset is %u and dfdByteLength is %u", h.dfd_off,
                  h.dfd_len);
    else if (h.dfd_off != index_end)
        kiln__rep(r, KILN__ERR, "index: dfdByteOffset is %u but the DFD must immediately follow the level index at %llu",
                  h.dfd_off, (unsigned long long)index_end);
    if (h.dfd_len && !kiln__in_bounds(h.dfd_off, h.dfd_len, size))
        kiln__rep(r, KILN__ERR, "index: the DFD (offset %u, %u bytes) extends past the end of the file (%zu bytes)",
                  h.dfd_off, h.dfd_len, size);
    else if (h.dfd_len)
        dfd_ok = true;
    uint64_t section_end = (uint64_t)h.dfd_off + h.dfd_len;
    if (h.kvd_len == 0) {
        if (h.kvd_off != 0) kiln__rep(r, KILN__ERR, "index: kvdByteOffset is %u but must be 0 when kvdByteLength is 0", h.kvd_off);
        kiln__rep(r, KILN__WARN, "KVD: there is no key/value data, so KTXwriter is missing");
    } else {
        if (h.kvd_off != section_end)
            kiln__rep(r, KILN__ERR, "index: kvdByteOffset is %u but the key/value data must immediately follow the DFD at "
                      "%llu", h.kvd_off, (unsigned long long)section_end);
        if (!kiln__in_bounds(h.kvd_off, h.kvd_len, size))
            kiln__rep(r, KILN__ERR, "index: the key/value data (offset %u, %u bytes) extends past the end of the file",
                      h.kvd_off, h.kvd_len);
        else
            validate_kvd(r, p + h.kvd_off, h.kvd_len, &h);
        section_end = (uint64_t)h.kvd_off + h.kvd_len;
    }
    if (h.sgd_len == 0) {
        if (h.sgd_off != 0)
            kiln__rep(r, KILN__ERR, "index: sgdByteOffset is %llu but must be 0 when sgdByteLength is 0",
                      (unsigned long long)h.sgd_off);
        if (h.scheme == SCHEME_BASISLZ)
            kiln__rep(r, KILN__ERR, "index: sgdByteLength is 0 but BasisLZ needs supercompression global data");
    } else {
        if (h.scheme != SCHEME_BASISLZ)
            kiln__rep(r, KILN__ERR, "index: sgdByteLength is %llu but supercompressionScheme %u (%s) has no global data",
                      (unsigned long long)h.sgd_len, h.scheme, scheme_name(h.scheme));
        uint64_t want = (section_end + 7) & ~(uint64_t)7;
        if (h.sgd_off != want)
            kiln__rep(r, KILN__ERR, "index: sgdByteOffset is %llu but must be %llu (the next 8-byte boundary)",
                      (unsigned long long)h.sgd_off, (unsigned long long)want);
        if (!kiln__in_bounds(h.sgd_off, h.sgd_len, size))
            kiln__rep(r, KILN__ERR, "index: the global data (offset %llu, %llu bytes) extends past the end of the file",
                      (unsigned long long)h.sgd_off, (unsigned long long)h.sgd_len);
        section_end = h.sgd_off + h.sgd_len;
    }

    /* ---- DFD */
    if (dfd_ok) kiln__dfd_validate(r, p + h.dfd_off, h.dfd_len, f, h.vk, h.scheme);

    /* ---- levels */
    bool known = fi && h.w && (h.h || !compressed) && (h.faces == 1 || h.faces == 6) && h.levels <= maxl &&
                 h.w <= KILN_MAX_DIMENSION && h.h <= KILN_MAX_DIMENSION && h.d <= KILN_MAX_DIMENSION;
    uint32_t align = (h.scheme == SCHEME_NONE && fi) ? lcm4(fi->block_bytes) : 1;
    uint64_t expect_off = section_end;
    uint64_t last_end = 0;
    ZSTD_DCtx *dctx = NULL;
    for (uint32_t i = h.nindex; i-- > 0;) {
        uint64_t off, len, ulen;
        index_entry(p, i, &off, &len, &ulen);
        size_t want = 0;
        if (known)
            want = kiln__level_bytes(f, h.w, h.h ? h.h : 1, h.d ? h.d : 1, h.layers ? h.layers : 1, h.faces, i);
        if (known && want && ulen != want)
            kiln__rep(r, KILN__ERR, "level %u: uncompressedByteLength is %llu but a %ux%u level of VK_FORMAT_%s needs %zu",
                      i, (unsigned long long)ulen, kiln_level_dim(h.w, i), kiln_level_dim(h.h ? h.h : 1, i),
                      fi->vk_name, want);
        if (h.scheme == SCHEME_NONE && len != ulen)
            kiln__rep(r, KILN__ERR, "level %u: byteLength %llu differs from uncompressedByteLength %llu without "
                      "supercompression", i, (unsigned long long)len, (unsigned long long)ulen);
        if (h.scheme == SCHEME_NONE && align > 1 && off % align)
            kiln__rep(r, KILN__ERR, "level %u: byteOffset %llu is not aligned to lcm(texel block size, 4) = %u", i,
                      (unsigned long long)off, align);
        uint64_t aligned = (expect_off + align - 1) / align * align;
        if (off != aligned)
            kiln__rep(r, KILN__ERR, "level %u: byteOffset is %llu but the levels must be packed smallest first, so it "
                      "must be %llu", i, (unsigned long long)off, (unsigned long long)aligned);
        else
            for (uint64_t q = expect_off; q < aligned && q < size; q++)
                if (p[q]) {
                    kiln__rep(r, KILN__WARN, "level %u: padding byte at %llu is 0x%02X, not 0", i, (unsigned long long)q,
                              p[q]);
                    break;
                }
        if (!kiln__in_bounds(off, len, size)) {
            kiln__rep(r, KILN__ERR, "level %u: data (offset %llu, %llu bytes) extends past the end of the file (%zu bytes)",
                      i, (unsigned long long)off, (unsigned long long)len, size);
            continue;
        }
        if (i + 1 < h.nindex && off < last_end)
            kiln__rep(r, KILN__ERR, "level %u: data at %llu overlaps or precedes level %u; levels must be stored "
                      "smallest first", i, (unsigned long long)off, i + 1);
        if (off < section_end)
            kiln__rep(r, KILN__ERR, "level %u: data at %llu overlaps the header, DFD or key/value data", i,
                      (unsigned long long)off);
        expect_off = off + len;
        last_end = off + len;
        if (h.scheme == SCHEME_ZSTD && known && want && ulen == want) {
            if (ulen / ZSTD_MAX_RATIO > len) {
                kiln__rep(r, KILN__ERR, "level %u: %llu bytes of zstd data cannot hold %llu bytes", i,
                          (unsigned long long)len, (unsigned long long)ulen);
                continue;
            }
            if (!dctx) dctx = ZSTD_createDCtx();
            uint8_t *tmp = malloc(want);
            char err[160];
            if (!dctx || !tmp) kiln__rep(r, KILN__ERR, "level %u: out of memory while decompressing", i);
            else if (!zstd_level(dctx, p + off, (size_t)len, tmp, want, err, sizeof err))
                kiln__rep(r, KILN__ERR, "level %u: %s", i, err);
            free(tmp);
        }
    }
    ZSTD_freeDCtx(dctx);
    if (last_end && last_end < size)
        kiln__rep(r, KILN__ERR, "file: %llu bytes of trailing data after the last level (ends at %llu, file is %zu bytes)",
                  (unsigned long long)(size - last_end), (unsigned long long)last_end, size);
}

/* ================================================================ describe */

void kiln__ktx2_describe(const uint8_t *p, size_t size, kiln__desc *d)
{
    kiln__d_s(d, "container", "KTX2");
    if (size < HEADER_SIZE) {
        kiln__d_s(d, "error", "file is shorter than the 80-byte header");
        return;
    }
    k2 h;
    parse_header(p, &h);
    kiln_format f = kiln_format_from_vk(h.vk);
    const kiln_format_info *fi = kiln_format_get_info(f);
    kiln__d_obj(d, "header");
    kiln__d_u(d, "vkFormat", h.vk);
    char vkname[64];
    snprintf(vkname, sizeof vkname, "%s%s", fi ? "VK_FORMAT_" : "", fi ? fi->vk_name : (h.vk ? "unknown" : "VK_FORMAT_UNDEFINED"));
    kiln__d_s(d, "vkFormatName", vkname);
    kiln__d_u(d, "typeSize", h.type_size);
    kiln__d_u(d, "pixelWidth", h.w);
    kiln__d_u(d, "pixelHeight", h.h);
    kiln__d_u(d, "pixelDepth", h.d);
    kiln__d_u(d, "layerCount", h.layers);
    kiln__d_u(d, "faceCount", h.faces);
    kiln__d_u(d, "levelCount", h.levels);
    kiln__d_u(d, "supercompressionScheme", h.scheme);
    kiln__d_s(d, "supercompressionSchemeName", scheme_name(h.scheme));
    kiln__d_u(d, "dfdByteOffset", h.dfd_off);
    kiln__d_u(d, "dfdByteLength", h.dfd_len);
    kiln__d_u(d, "kvdByteOffset", h.kvd_off);
    kiln__d_u(d, "kvdByteLength", h.kvd_len);
    kiln__d_u(d, "sgdByteOffset", h.sgd_off);
    kiln__d_u(d, "sgdByteLength", h.sgd_len);
    kiln__d_end(d);
    kiln__d_s(d, "format", fi ? fi->name : "unknown");
    const char *type = h.faces == 6 ? (h.layers ? "cube map array" : "cube map")
                       : h.d ? (h.layers ? "3-D array" : "3-D")
                       : h.h == 0 ? (h.layers ? "1-D array" : "1-D")
                                  : (h.layers ? "2-D array" : "2-D");
    kiln__d_s(d, "textureType", type);
    kiln__d_arr(d, "levels");
    uint32_t shown = h.nindex > 64 ? 0 : h.nindex;
    if (HEADER_SIZE + (uint64_t)INDEX_ENTRY * shown > size) shown = (uint32_t)((size - HEADER_SIZE) / INDEX_ENTRY);
    for (uint32_t i = 0; i < shown; i++) {
        uint64_t off, len, ulen;
        index_entry(p, i, &off, &len, &ulen);
        kiln__d_obj(d, NULL);
        kiln__d_u(d, "level", i);
        kiln__d_u(d, "width", kiln_level_dim(h.w, i));
        kiln__d_u(d, "height", kiln_level_dim(h.h ? h.h : 1, i));
        if (h.d) kiln__d_u(d, "depth", kiln_level_dim(h.d, i));
        kiln__d_u(d, "byteOffset", off);
        kiln__d_u(d, "byteLength", len);
        kiln__d_u(d, "uncompressedByteLength", ulen);
        if (!kiln__in_bounds(off, len, size)) kiln__d_s(d, "error", "extends past the end of the file");
        kiln__d_end(d);
    }
    kiln__d_end(d);
    if (h.dfd_len && kiln__in_bounds(h.dfd_off, h.dfd_len, size)) kiln__dfd_describe(d, p + h.dfd_off, h.dfd_len);
    kiln__d_arr(d, "keyValueData");
    if (h.kvd_len && kiln__in_bounds(h.kvd_off, h.kvd_len, size)) {
        const uint8_t *k = p + h.kvd_off;
        uint32_t n = h.kvd_len, off = 0;
        while (n - off >= 4) {
            uint32_t len = kiln__rd32(k + off);
            if (len > n - off - 4) break;
            const uint8_t *e = k + off + 4;
            const uint8_t *nul = memchr(e, 0, len);
            if (!nul) break;
            kiln__d_obj(d, NULL);
            kiln__d_s(d, "key", (const char *)e);
            kiln__d_bytes(d, "value", nul + 1, len - (size_t)(nul - e) - 1);
            kiln__d_end(d);
            uint64_t next = (uint64_t)off + 4 + len + ((4 - (len & 3)) & 3);
            if (next > n) break;
            off = (uint32_t)next;
        }
    }
    kiln__d_end(d);
}

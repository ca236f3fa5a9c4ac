/* container.c - texture containers: dispatch of load/save/validate/describe to KTX2 (ktx2.c), KTX 1
 * (ktx1.c) and DDS (dds.c) by content or extension; byte buffers, validation reports, the describe
 * emitter (YAML-like text or JSON from one code path) and texture geometry helpers. */
#include "container/container.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ================================================================ byte buffers */

static bool buf_reserve(kiln__buf *b, size_t extra)
{
    if (b->oom) return false;
    size_t need;
    if (!kiln__add_size(b->n, extra, &need)) {
        b->oom = 1;
        return false;
    }
    if (need <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need) {
        if (cap > SIZE_MAX / 2) {
            cap = need;
            break;
        }
        cap *= 2;
    }
    uint8_t *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

void kiln__buf_put(kiln__buf *b, const void *data, size_t n)
{
    if (n == 0 || !buf_reserve(b, n)) return;
    memcpy(b->p + b->n, data, n);
    b->n += n;
}

void kiln__buf_zero(kiln__buf *b, size_t n)
{
    if (n == 0 || !buf_reserve(b, n)) return;
    memset(b->p + b->n, 0, n);
    b->n += n;
}

void kiln__buf_u32(kiln__buf *b, uint32_t v)
{
    uint8_t t[4];
    kiln__set32(t, v);
    kiln__buf_put(b, t, 4);
}

void kiln__buf_u64(kiln__buf *b, uint64_t v)
{
    uint8_t t[8];
    kiln__set64(t, v);
    kiln__buf_put(b, t, 8);
}

void kiln__buf_printf(kiln__buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) {
        kiln__buf_put(b, small, (size_t)n);
        return;
    }
    if (!buf_reserve(b, (size_t)n + 1)) return;
    va_start(ap, fmt);
    vsnprintf((char *)b->p + b->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
}

void kiln__buf_free(kiln__buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* ================================================================ validation reports */

void kiln__rep(kiln__report *r, int severity, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (severity >= KILN__ERR) {
        if (r->errors == 0) snprintf(r->first_error, sizeof r->first_error, "%.500s", msg);
        r->errors++;
    } else {
        r->warnings++;
    }
    if (r->fn) r->fn(r->user, severity, msg);
}

/* ================================================================ describe emitter */

static void d_indent(kiln__desc *d, int depth)
{
    for (int i = 0; i < depth; i++) kiln__buf_put(d->b, "  ", 2);
}

static bool utf8_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n = *p < 0x80 ? 0 : (*p & 0xE0) == 0xC0 ? 1 : (*p & 0xF0) == 0xE0 ? 2 : (*p & 0xF8) == 0xF0 ? 3 : -1;
        if (n < 0) return false;
        p++;
        for (int i = 0; i < n; i++, p++)
            if ((*p & 0xC0) != 0x80) return false;
    }
    return true;
}

static void d_string(kiln__desc *d, const char *s)
{
    bool utf8 = utf8_valid(s);
    if (d->json) kiln__buf_put(d->b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned c = *p;
        if (d->json) {
            if (c == '"' || c == '\\') kiln__buf_printf(d->b, "\\%c", c);
            else if (c < 0x20 || c == 0x7F || (c >= 0x80 && !utf8)) kiln__buf_printf(d->b, "\\u%04x", c);
            else kiln__buf_put(d->b, p, 1);
        } else {
            if (c < 0x20 || c == 0x7F || (c >= 0x80 && !utf8)) kiln__buf_printf(d->b, "\\x%02x", c);
            else kiln__buf_put(d->b, p, 1);
        }
    }
    if (d->json) kiln__buf_put(d->b, "\"", 1);
}

/* Starts a member. JSON: comma, newline, indent and "key": (no key inside arrays). Text (YAML-like):
 * indent, "- " for array elements (and for the first member of an object inside an array), "key". */
static void d_key(kiln__desc *d, const char *key, bool container)
{
    int depth = d->depth;
    if (d->json) {
        if (depth > 0) {
            if (!d->first[depth]) kiln__buf_put(d->b, ",", 1);
            kiln__buf_put(d->b, "\n", 1);
            d_indent(d, depth);
        }
        d->first[depth] = false;
        if (key && !d->array[depth]) {
            d_string(d, key);
            kiln__buf_put(d->b, ": ", 2);
        }
        return;
    }
    d->first[depth] = false;
    if (d->array[depth]) {
        d_indent(d, depth - 1);
        kiln__buf_put(d->b, container ? "-\n" : "- ", 2 + container);
        return;
    }
    if (d->dash) {
        d_indent(d, depth - 2);
        kiln__buf_put(d->b, "- ", 2);
        d->dash = false;
    } else {
        d_indent(d, depth - 1);
    }
    d_string(d, key ? key : "?");
    kiln__buf_put(d->b, container ? ":\n" : ": ", 2);
}

static void d_open(kiln__desc *d, const char *key, bool array)
{
    if (d->depth == 0) {
        if (d->json) kiln__buf_put(d->b, array ? "[" : "{", 1);
    } else if (d->json) {
        d_key(d, key, true);
        kiln__buf_put(d->b, array ? "[" : "{", 1);
    } else if (d->array[d->depth] && !array) {
        d->first[d->depth] = false;
        d->dash = true; /* the object's first member carries the "- " */
    } else {
        d_key(d, key, true);
    }
    if (d->depth < 31) d->depth++;
    d->first[d->depth] = true;
    d->array[d->depth] = array;
}

void kiln__d_obj(kiln__desc *d, const char *key) { d_open(d, key, false); }
void kiln__d_arr(kiln__desc *d, const char *key) { d_open(d, key, true); }

void kiln__d_end(kiln__desc *d)
{
    if (d->depth == 0) return;
    bool array = d->array[d->depth];
    bool empty = d->first[d->depth];
    d->depth--;
    if (d->json) {
        if (!empty) {
            kiln__buf_put(d->b, "\n", 1);
            d_indent(d, d->depth);
        }
        kiln__buf_put(d->b, array ? "]" : "}", 1);
        if (d->depth == 0) kiln__buf_put(d->b, "\n", 1);
    } else {
        if (empty && array) {
            d_indent(d, d->depth);
            kiln__buf_put(d->b, "[]\n", 3);
        }
        d->dash = false;
    }
}

static void d_scalar_end(kiln__desc *d)
{
    if (!d->json) kiln__buf_put(d->b, "\n", 1);
}

void kiln__d_u(kiln__desc *d, const char *key, uint64_t v)
{
    d_key(d, key, false);
    kiln__buf_printf(d->b, "%llu", (unsigned long long)v);
    d_scalar_end(d);
}

void kiln__d_i(kiln__desc *d, const char *key, int64_t v)
{
    d_key(d, key, false);
    kiln__buf_printf(d->b, "%lld", (long long)v);
    d_scalar_end(d);
}

void kiln__d_x(kiln__desc *d, const char *key, uint64_t v, int digits)
{
    d_key(d, key, false);
    if (d->json) kiln__buf_printf(d->b, "%llu", (unsigned long long)v);
    else kiln__buf_printf(d->b, "0x%0*llX", digits, (unsigned long long)v);
    d_scalar_end(d);
}

void kiln__d_s(kiln__desc *d, const char *key, const char *s)
{
    d_key(d, key, false);
    d_string(d, s ? s : "");
    d_scalar_end(d);
}

void kiln__d_b(kiln__desc *d, const char *key, bool v)
{
    d_key(d, key, false);
    kiln__buf_printf(d->b, "%s", v ? "true" : "false");
    d_scalar_end(d);
}

void kiln__d_f(kiln__desc *d, const char *key, double v)
{
    d_key(d, key, false);
    kiln__buf_printf(d->b, "%.9g", v);
    d_scalar_end(d);
}

void kiln__d_bytes(kiln__desc *d, const char *key, const uint8_t *p, size_t n)
{
    bool text = n > 0 && p[n - 1] == 0;
    for (size_t i = 0; text && i + 1 < n; i++)
        if (p[i] == 0 || p[i] < 0x09) text = false;
    if (text) {
        kiln__d_s(d, key, (const char *)p);
        return;
    }
    d_key(d, key, false);
    if (d->json) kiln__buf_put(d->b, "\"", 1);
    else kiln__buf_put(d->b, "hex ", 4);
    size_t shown = n > 256 ? 256 : n;
    for (size_t i = 0; i < shown; i++) kiln__buf_printf(d->b, "%02x", p[i]);
    if (shown < n) kiln__buf_printf(d->b, "... (%zu bytes)", n);
    if (d->json) kiln__buf_put(d->b, "\"", 1);
    d_scalar_end(d);
}

/* ================================================================ geometry */

uint32_t kiln__full_chain(uint32_t w, uint32_t h, uint32_t d)
{
    uint32_t m = w > h ? w : h;
    if (d > m) m = d;
    uint32_t n = 1;
    while (m > 1) {
        m >>= 1;
        n++;
    }
    return n;
}

size_t kiln__level_bytes(kiln_format f, uint32_t w, uint32_t h, uint32_t d, uint32_t layers, uint32_t faces,
                         uint32_t level)
{
    size_t img = kiln_format_image_size(f, kiln_level_dim(w, level), kiln_level_dim(h, level));
    size_t out;
    if (img == 0 || !kiln__mul_size(img, kiln_level_dim(d ? d : 1, level), &out) ||
        !kiln__mul_size(out, layers, &out) || !kiln__mul_size(out, faces, &out))
        return 0;
    return out;
}

kiln_status kiln__texture_geometry(kiln_context *ctx, const char *name, kiln_texture *tex, kiln_format f, uint32_t w,
                                   uint32_t h, uint32_t d, uint32_t layers, uint32_t faces, uint32_t levels)
{
    memset(tex, 0, sizeof *tex);
    if (!kiln_format_get_info(f)) return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: unknown format %d", name, (int)f);
    if (w == 0 || h == 0 || d == 0)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: texture size %ux%ux%u is empty", name, w, h, d);
    if (w > KILN_MAX_DIMENSION || h > KILN_MAX_DIMENSION || d > KILN_MAX_DIMENSION ||
        (uint64_t)w * h > KILN_MAX_PIXELS || (uint64_t)w * h * d > KILN_MAX_PIXELS)
        return kiln__fail(ctx, KILN_ERR_TOO_LARGE,
                          "%s: texture size %ux%ux%u exceeds kiln's limit (%u per side, %llu pixels)", name, w, h, d,
                          KILN_MAX_DIMENSION, (unsigned long long)KILN_MAX_PIXELS);
    if (layers == 0 || layers > 2048)
        return kiln__fail(ctx, layers ? KILN_ERR_TOO_LARGE : KILN_ERR_CORRUPT,
                          "%s: %u layers (kiln accepts 1 to 2048)", name, layers);
    if (faces != 1 && faces != 6) return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: %u faces (must be 1 or 6)", name, faces);
    if (faces == 6 && (w != h || d != 1))
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: cube map faces must be square 2-D images, not %ux%ux%u", name, w,
                          h, d);
    uint32_t maxl = kiln__full_chain(w, h, d);
    if (levels == 0 || levels > maxl)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: %u mip levels, but a %ux%ux%u texture has 1 to %u", name, levels,
                          w, h, d, maxl);
    size_t total = 0;
    for (uint32_t l = 0; l < levels; l++) {
        size_t lv = kiln__level_bytes(f, w, h, d, layers, faces, l);
        if (lv == 0 || !kiln__add_size(total, lv, &total))
            return kiln__fail(ctx, KILN_ERR_TOO_LARGE, "%s: texture data size overflows", name);
        tex->level_offset[l] = total - lv;
        tex->level_size[l] = lv;
    }
    tex->format = f;
    tex->width = w;
    tex->height = h;
    tex->depth = d;
    tex->layers = layers;
    tex->faces = faces;
    tex->levels = levels;
    tex->data_size = total;
    return KILN_OK;
}

kiln_status kiln__texture_check(kiln_context *ctx, const kiln_texture *tex)
{
    if (!tex) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "texture is NULL");
    const kiln_format_info *fi = kiln_format_get_info(tex->format);
    if (!fi) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "texture has an unknown format %d", (int)tex->format);
    uint32_t depth = tex->depth ? tex->depth : 1;
    uint32_t layers = tex->layers ? tex->layers : 1;
    if (tex->width == 0 || tex->height == 0 || tex->width > KILN_MAX_DIMENSION || tex->height > KILN_MAX_DIMENSION ||
        depth > KILN_MAX_DIMENSION)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "texture size %ux%ux%u is out of range", tex->width,
                          tex->height, depth);
    if (tex->faces != 1 && tex->faces != 6)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "texture has %u faces (must be 1 or 6)", tex->faces);
    if (tex->faces == 6 && (tex->width != tex->height || depth != 1))
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "cube map faces must be square, not %ux%u", tex->width,
                          tex->height);
    uint32_t maxl = kiln__full_chain(tex->width, tex->height, depth);
    if (tex->levels == 0 || tex->levels > maxl || tex->levels > KILN_MAX_LEVELS)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "texture has %u levels; a %ux%ux%u texture has 1 to %u",
                          tex->levels, tex->width, tex->height, depth, maxl);
    if (!tex->data) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "texture has no data");
    for (uint32_t l = 0; l < tex->levels; l++) {
        size_t want = kiln__level_bytes(tex->format, tex->width, tex->height, depth, layers, tex->faces, l);
        if (want == 0 || tex->level_size[l] != want)
            return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "texture level %u holds %zu bytes but %s %ux%u needs %zu", l,
                              tex->level_size[l], fi->name, kiln_level_dim(tex->width, l),
                              kiln_level_dim(tex->height, l), want);
        if (!kiln__in_bounds(tex->level_offset[l], tex->level_size[l], tex->data_size))
            return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "texture level %u lies outside the data (%zu bytes)", l,
                              tex->data_size);
    }
    for (uint32_t i = 0; i < tex->kv_count; i++)
        if (!tex->kv || !tex->kv[i].key || !tex->kv[i].key[0] || (tex->kv[i].value_size && !tex->kv[i].value))
            return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "texture key/value pair %u is malformed", i);
    return KILN_OK;
}

kiln_status kiln__texture_add_kv(kiln_context *ctx, kiln_texture *tex, const char *key, const uint8_t *value,
                                 uint32_t value_size)
{
    if ((tex->kv_count & (tex->kv_count - 1)) == 0) { /* grow at powers of two */
        size_t cap = tex->kv_count ? (size_t)tex->kv_count * 2 : 4;
        kiln_kv *n = realloc(tex->kv, cap * sizeof *n);
        if (!n) return kiln__fail(ctx, KILN_ERR_OUT_OF_MEMORY, "out of memory reading key/value data");
        tex->kv = n;
    }
    char *k = strdup(key);
    uint8_t *v = malloc(value_size ? value_size : 1);
    if (!k || !v) {
        free(k);
        free(v);
        return kiln__fail(ctx, KILN_ERR_OUT_OF_MEMORY, "out of memory reading key/value data");
    }
    if (value_size) memcpy(v, value, value_size);
    tex->kv[tex->kv_count].key = k;
    tex->kv[tex->kv_count].value = v;
    tex->kv[tex->kv_count].value_size = value_size;
    tex->kv_count++;
    return KILN_OK;
}

static int kv_cmp(const void *a, const void *b)
{
    const kiln_kv *x = a, *y = b;
    return strcmp(x->key, y->key);
}

void kiln__texture_sort_kv(kiln_texture *tex)
{
    if (tex->kv_count < 2) return;
    uint32_t n = tex->kv_count;
    bool sorted = true;
    for (uint32_t i = 1; i < n && sorted; i++)
        if (strcmp(tex->kv[i - 1].key, tex->kv[i].key) >= 0) sorted = false;
    if (sorted) return;
    /* stable merge sort by key */
    kiln_kv *tmp = malloc((size_t)n * sizeof *tmp);
    if (!tmp) {
        qsort(tex->kv, n, sizeof *tex->kv, kv_cmp); /* not stable, but still sorted */
    } else {
        for (uint32_t width = 1; width < n; width *= 2) {
            for (uint32_t lo = 0; lo < n; lo += 2 * width) {
                uint32_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
                uint32_t i = lo, j = mid, k = lo;
                while (i < mid && j < hi) tmp[k++] = strcmp(tex->kv[j].key, tex->kv[i].key) < 0 ? tex->kv[j++] : tex->kv[i++];
                while (i < mid) tmp[k++] = tex->kv[i++];
                while (j < hi) tmp[k++] = tex->kv[j++];
            }
            memcpy(tex->kv, tmp, (size_t)n * sizeof *tmp);
        }
        free(tmp);
    }
    /* drop later duplicates (the first occurrence in the file wins) */
    uint32_t out = 1;
    for (uint32_t i = 1; i < n; i++) {
        if (strcmp(tex->kv[out - 1].key, tex->kv[i].key) == 0) {
            free(tex->kv[i].key);
            free(tex->kv[i].value);
        } else {
            tex->kv[out++] = tex->kv[i];
        }
    }
    tex->kv_count = out;
}

/* ================================================================ dispatch */

typedef enum { KIND_NONE, KIND_KTX2, KIND_KTX1, KIND_DDS } file_kind;

static file_kind detect(const uint8_t *p, size_t n)
{
    if (n >= 12 && memcmp(p, kiln__ktx2_id, 12) == 0) return KIND_KTX2;
    if (n >= 12 && memcmp(p, kiln__ktx1_id, 12) == 0) return KIND_KTX1;
    if (n >= 4 && memcmp(p, "DDS ", 4) == 0) return KIND_DDS;
    return KIND_NONE;
}

void kiln_save_params_init(kiln_save_params *params)
{
    if (!params) return;
    memset(params, 0, sizeof *params);
    params->container = KILN_CONTAINER_AUTO;
    params->zstd_level = 0;
    params->dds_header = KILN_DDS_HEADER_AUTO;
}

static kiln_status load_named(kiln_context *ctx, const char *name, const uint8_t *p, size_t n, kiln_texture *out)
{
    memset(out, 0, sizeof *out);
    switch (detect(p, n)) {
    case KIND_KTX2: return kiln__ktx2_load(ctx, name, p, n, out);
    case KIND_KTX1: return kiln__ktx1_load(ctx, name, p, n, out);
    case KIND_DDS: return kiln__dds_load(ctx, name, p, n, out);
    default: break;
    }
    if (n >= 4 && p[0] == 0xAB && p[1] == 'K' && p[2] == 'T' && p[3] == 'X')
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: KTX identifier is damaged or of an unknown version", name);
    return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: not a KTX2, KTX or DDS file (%zu bytes, no known identifier)", name, n);
}

kiln_status kiln_texture_load_memory(kiln_context *ctx, const void *data, size_t size, kiln_texture *out)
{
    kiln__clear_error(ctx);
    if (!out) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "output texture is NULL");
    memset(out, 0, sizeof *out);
    if (!data && size) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "data is NULL");
    kiln_status st = load_named(ctx, "<memory>", data, size, out);
    if (st != KILN_OK) kiln_texture_free(out);
    return st;
}

kiln_status kiln_texture_load(kiln_context *ctx, const char *path, kiln_texture *out)
{
    kiln__clear_error(ctx);
    if (!out || !path) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "path or output texture is NULL");
    memset(out, 0, sizeof *out);
    uint8_t *data = NULL;
    size_t size = 0;
    KILN_TRY(kiln__read_file(ctx, path, &data, &size));
    kiln_status st = load_named(ctx, path, data, size, out);
    free(data);
    if (st != KILN_OK) kiln_texture_free(out);
    return st;
}

static kiln_status save_buf(kiln_context *ctx, const kiln_texture *tex, kiln_container c, const kiln_save_params *p,
                            kiln__buf *b)
{
    kiln_save_params defaults;
    if (!p) {
        kiln_save_params_init(&defaults);
        p = &defaults;
    }
    if (p->zstd_level < 0 || p->zstd_level > 22)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "zstd level %d is out of range (0 = none, 1 to 22)",
                          p->zstd_level);
    if (p->dds_header != KILN_DDS_HEADER_AUTO && p->dds_header != KILN_DDS_HEADER_DX10 &&
        p->dds_header != KILN_DDS_HEADER_LEGACY)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "unknown DDS header choice %d", (int)p->dds_header);
    KILN_TRY(kiln__texture_check(ctx, tex));
    switch (c) {
    case KILN_CONTAINER_AUTO:
    case KILN_CONTAINER_KTX2: return kiln__ktx2_save(ctx, tex, p->zstd_level, b);
    case KILN_CONTAINER_DDS:
        if (p->zstd_level)
            return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "zstd supercompression (level %d) needs a KTX2 container, "
                              "not DDS", p->zstd_level);
        return kiln__dds_save(ctx, tex, p->dds_header, b);
    case KILN_CONTAINER_KTX1:
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "kiln reads KTX 1 files but does not write them; write KTX2 (.ktx2)");
    }
    return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "unknown container %d", (int)c);
}

kiln_status kiln_texture_save_memory(kiln_context *ctx, const kiln_texture *tex, kiln_container container,
                                     const kiln_save_params *params, uint8_t **out, size_t *out_size)
{
    kiln__clear_error(ctx);
    if (!out || !out_size) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "output pointers are NULL");
    *out = NULL;
    *out_size = 0;
    kiln__buf b = {0};
    kiln_status st = save_buf(ctx, tex, container, params, &b);
    if (st == KILN_OK && b.oom) st = kiln__fail(ctx, KILN_ERR_OUT_OF_MEMORY, "out of memory serialising the texture");
    if (st != KILN_OK) {
        kiln__buf_free(&b);
        return st;
    }
    *out = b.p;
    *out_size = b.n;
    return KILN_OK;
}

static const char *extension(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash)) return "";
    return dot + 1;
}

kiln_status kiln_texture_save(kiln_context *ctx, const kiln_texture *tex, const char *path,
                              const kiln_save_params *params)
{
    kiln__clear_error(ctx);
    if (!path) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "path is NULL");
    kiln_container c = params ? params->container : KILN_CONTAINER_AUTO;
    if (c == KILN_CONTAINER_AUTO) {
        const char *ext = extension(path);
        if (!strcasecmp(ext, "ktx2") || !strcasecmp(ext, "ktx")) c = KILN_CONTAINER_KTX2;
        else if (!strcasecmp(ext, "dds")) c = KILN_CONTAINER_DDS;
        else
            return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT,
                              "%s: cannot tell the container from the extension '%s' (use .ktx2 or .dds)", path, ext);
    }
    kiln__buf b = {0};
    kiln_status st = save_buf(ctx, tex, c, params, &b);
    if (st == KILN_OK && b.oom) st = kiln__fail(ctx, KILN_ERR_OUT_OF_MEMORY, "%s: out of memory serialising", path);
    if (st == KILN_OK) st = kiln__write_file_atomic(ctx, path, b.p, b.n);
    kiln__buf_free(&b);
    return st;
}


kiln_status kiln_validate_memory(kiln_context *ctx, const void *data, size_t size, kiln_report_fn report, void *user)
{
    kiln__clear_error(ctx);
    if (!data && size) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "data is NULL");
    kiln__report r = {report, user, 0, 0, {0}};
    const uint8_t *p = data;
    file_kind kind = detect(p, size);
    switch (kind) {
    case KIND_KTX2: kiln__ktx2_validate(ctx, p, size, &r); break;
    case KIND_KTX1: kiln__ktx1_validate(ctx, p, size, &r); break;
    case KIND_DDS: kiln__dds_validate(ctx, p, size, &r); break;
    default:
        if (size >= 12 && p[0] == 0xAB && p[1] == 'K' && p[2] == 'T' && p[3] == 'X')
            kiln__rep(&r, KILN__ERR, "identifier: the KTX identifier is damaged or of an unknown version "
                                     "(expected «KTX 20»\\r\\n\\x1A\\n or «KTX 11»\\r\\n\\x1A\\n)");
        else
            kiln__rep(&r, KILN__ERR, "identifier: not a KTX2, KTX or DDS file (%zu bytes, no known identifier)", size);
        break;
    }
    if (r.errors == 0 && kind != KIND_NONE) {
        /* the structure is valid: kiln must also be able to load it */
        kiln_texture t;
        kiln_status st = load_named(ctx, "file", p, size, &t);
        if (st != KILN_OK) kiln__rep(&r, KILN__ERR, "load: %s", kiln_last_error(ctx));
        kiln_texture_free(&t);
        kiln__clear_error(ctx);
    }
    if (r.errors)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%u error(s), %u warning(s); first: %s", r.errors, r.warnings,
                          r.first_error);
    return KILN_OK;
}

static kiln_status describe(kiln_context *ctx, const void *data, size_t size, int json, char **out_text)
{
    kiln__clear_error(ctx);
    if (!out_text) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "output pointer is NULL");
    *out_text = NULL;
    if (!data && size) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "data is NULL");
    const uint8_t *p = data;
    file_kind kind = detect(p, size);
    if (kind == KIND_NONE)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "not a KTX2, KTX or DDS file (%zu bytes, no known identifier)", size);
    kiln__buf b = {0};
    kiln__desc d = {0};
    d.b = &b;
    d.json = json;
    kiln__d_obj(&d, NULL);
    kiln__d_u(&d, "fileSize", size);
    switch (kind) {
    case KIND_KTX2: kiln__ktx2_describe(p, size, &d); break;
    case KIND_KTX1: kiln__ktx1_describe(p, size, &d); break;
    case KIND_DDS: kiln__dds_describe(p, size, &d); break;
    default: break;
    }
    while (d.depth > 0) kiln__d_end(&d);
    kiln__buf_put(&b, "", 1);
    if (b.oom) {
        kiln__buf_free(&b);
        return kiln__fail(ctx, KILN_ERR_OUT_OF_MEMORY, "out of memory describing the file");
    }
    *out_text = (char *)b.p;
    return KILN_OK;
}

kiln_status kiln_describe_memory(kiln_context *ctx, const void *data, size_t size, char **out_text)
{
    return describe(ctx, data, size, 0, out_text);
}

kiln_status kiln_describe_memory_json(kiln_context *ctx, const void *data, size_t size, char **out_json)
{
    return describe(ctx, data, size, 1, out_json);
}

/* container.h - what the container modules (KTX2, KTX 1, DDS, DFD) share. Not installed.
 *
 * container.c  dispatch (load/save/validate/describe), byte buffers, the description emitter
 * ktx2.c       KTX 2.0 reader, writer (optional zstd supercompression), validator, describer
 * dfd.c        Khronos Basic Data Format Descriptor: built from the format table, decoded for humans
 * dds.c        DDS reader, writer (legacy or DX10 header), validator, describer
 * ktx1.c       KTX 1.1 reader (both endiannesses), validator, describer
 *
 * Every reader takes a display name (a path or "<memory>") that prefixes its error messages, checks
 * every offset and length against the input size before use and checks sizes against kiln's limits
 * before allocating. */
#ifndef KILN_CONTAINER_H
#define KILN_CONTAINER_H

#include "core/internal.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

/* ---- little-endian access ---- */
static inline uint16_t kiln__rd16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t kiln__rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t kiln__rd64(const uint8_t *p) { return (uint64_t)kiln__rd32(p) | ((uint64_t)kiln__rd32(p + 4) << 32); }
static inline uint32_t kiln__bswap32(uint32_t v) { return __builtin_bswap32(v); }

/* True when [off, off + len) lies inside [0, size), overflow-safe. */
static inline bool kiln__in_bounds(uint64_t off, uint64_t len, size_t size)
{
    return off <= (uint64_t)size && len <= (uint64_t)size - off;
}

/* ---- growable byte buffer; allocation failures are sticky (check .oom once at the end) ---- */
typedef struct kiln__buf {
    uint8_t *p;
    size_t n, cap;
    int oom;
} kiln__buf;

void kiln__buf_put(kiln__buf *b, const void *data, size_t n);
void kiln__buf_zero(kiln__buf *b, size_t n);
void kiln__buf_u32(kiln__buf *b, uint32_t v);
void kiln__buf_u64(kiln__buf *b, uint64_t v);
void kiln__buf_printf(kiln__buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void kiln__buf_free(kiln__buf *b);
static inline void kiln__set32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static inline void kiln__set64(uint8_t *p, uint64_t v)
{
    kiln__set32(p, (uint32_t)v);
    kiln__set32(p + 4, (uint32_t)(v >> 32));
}

/* ---- validation reports ---- */
typedef struct kiln__report {
    kiln_report_fn fn;
    void *user;
    uint32_t errors, warnings;
    char first_error[512];
} kiln__report;

void kiln__rep(kiln__report *r, int severity, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
#define KILN__ERR 2
#define KILN__WARN 1

/* ---- descriptions: one code path renders as YAML-like text or as JSON ---- */
typedef struct kiln__desc {
    kiln__buf *b;
    int json;
    int depth;
    bool first[32];    /* no member printed yet at this depth (JSON commas) */
    bool array[32];    /* the container at this depth is an array */
    bool dash;         /* text: next key line starts an array element ("- ") */
} kiln__desc;

void kiln__d_obj(kiln__desc *d, const char *key);  /* begins an object (key NULL inside arrays) */
void kiln__d_arr(kiln__desc *d, const char *key);  /* begins an array */
void kiln__d_end(kiln__desc *d);                   /* ends the innermost object or array */
void kiln__d_u(kiln__desc *d, const char *key, uint64_t v);
void kiln__d_i(kiln__desc *d, const char *key, int64_t v);
void kiln__d_x(kiln__desc *d, const char *key, uint64_t v, int digits); /* hex in text, number in JSON */
void kiln__d_s(kiln__desc *d, const char *key, const char *s);
void kiln__d_b(kiln__desc *d, const char *key, bool v);
void kiln__d_f(kiln__desc *d, const char *key, double v);
/* Byte string: printable NUL-terminated text as a string, anything else as hex. */
void kiln__d_bytes(kiln__desc *d, const char *key, const uint8_t *p, size_t n);

/* ---- geometry shared by the readers and writers ---- */
/* Size in bytes of one level of a texture: image(w_l, h_l) * depth_l * layers * faces. 0 on overflow. */
size_t kiln__level_bytes(kiln_format f, uint32_t w, uint32_t h, uint32_t d, uint32_t layers, uint32_t faces,
                         uint32_t level);
/* Number of levels of a full chain for the largest of w, h, d. */
uint32_t kiln__full_chain(uint32_t w, uint32_t h, uint32_t d);
/* Checks dimensions against kiln's limits (KILN_ERR_TOO_LARGE) and fills tex geometry + level sizes
 * (no allocation). layers >= 1, faces 1 or 6, depth >= 1. */
kiln_status kiln__texture_geometry(kiln_context *ctx, const char *name, kiln_texture *tex, kiln_format f, uint32_t w,
                                   uint32_t h, uint32_t d, uint32_t layers, uint32_t faces, uint32_t levels);
/* Checks that a caller's texture is self-consistent before a writer serialises it. */
kiln_status kiln__texture_check(kiln_context *ctx, const kiln_texture *tex);
/* Reads key/value pairs into tex->kv (sorted, duplicates after the first dropped). Takes ownership of
 * nothing; copies. */
kiln_status kiln__texture_add_kv(kiln_context *ctx, kiln_texture *tex, const char *key, const uint8_t *value,
                                 uint32_t value_size);
void kiln__texture_sort_kv(kiln_texture *tex);

/* ---- DFD (dfd.c) ---- */
#define KILN_DFD_MAX_WORDS (7 + 4 * 4)
/* Builds the DFD kiln writes for a format: words[0] = dfdTotalSize, then the basic descriptor block.
 * Returns the word count (0 for a bad format). */
uint32_t kiln__dfd_build(kiln_format f, int premultiplied, uint32_t words[KILN_DFD_MAX_WORDS]);
/* Names for describe output ("" when unknown). */
const char *kiln__dfd_model_name(uint32_t model);
const char *kiln__dfd_primaries_name(uint32_t p);
const char *kiln__dfd_transfer_name(uint32_t t);
const char *kiln__dfd_channel_name(uint32_t model, uint32_t channel);
/* Describes a DFD (dfdTotalSize included) of n bytes. */
void kiln__dfd_describe(kiln__desc *d, const uint8_t *dfd, size_t n);
/* Validates a DFD against the one expected for vkFormat (via the format table). */
void kiln__dfd_validate(kiln__report *r, const uint8_t *dfd, size_t n, kiln_format f, uint32_t vk_format,
                        uint32_t scheme);

/* ---- containers ---- */
extern const uint8_t kiln__ktx2_id[12];
extern const uint8_t kiln__ktx1_id[12];

kiln_status kiln__ktx2_load(kiln_context *ctx, const char *name, const uint8_t *data, size_t size, kiln_texture *out);
kiln_status kiln__ktx2_save(kiln_context *ctx, const kiln_texture *tex, int zstd_level, kiln__buf *out);
void kiln__ktx2_validate(kiln_context *ctx, const uint8_t *data, size_t size, kiln__report *r);
void kiln__ktx2_describe(const uint8_t *data, size_t size, kiln__desc *d);

kiln_status kiln__dds_load(kiln_context *ctx, const char *name, const uint8_t *data, size_t size, kiln_texture *out);
kiln_status kiln__dds_save(kiln_context *ctx, const kiln_texture *tex, kiln_dds_header header, kiln__buf *out);
void kiln__dds_validate(kiln_context *ctx, const uint8_t *data, size_t size, kiln__report *r);
void kiln__dds_describe(const uint8_t *data, size_t size, kiln__desc *d);

kiln_status kiln__ktx1_load(kiln_context *ctx, const char *name, const uint8_t *data, size_t size, kiln_texture *out);
void kiln__ktx1_validate(kiln_context *ctx, const uint8_t *data, size_t size, kiln__report *r);
void kiln__ktx1_describe(const uint8_t *data, size_t size, kiln__desc *d);

#endif

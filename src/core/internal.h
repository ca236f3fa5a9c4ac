/* internal.h - what every kiln module shares: the context, error recording, threads, checked sizes.
 * Not installed. Vulkan types never appear here (src/gpu keeps them to itself). */
#ifndef KILN_INTERNAL_H
#define KILN_INTERNAL_H

#include "kiln/kiln.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct kiln_pool kiln_pool;
typedef struct kiln_gpu kiln_gpu; /* defined in src/gpu */

struct kiln_context {
    kiln_context_params params;
    uint32_t threads;
    kiln_pool *pool;
    atomic_int cancel;
    char error[1024];
    /* GPU state, created lazily by kiln__gpu_get() */
    kiln_gpu *gpu;
    int gpu_tried;          /* 1 once creation was attempted */
    kiln_backend resolved;  /* CPU or VULKAN after AUTO resolution; AUTO until resolved */
    double last_gpu_ms;
};

/* Records a formatted message for ctx (when non-NULL) and returns status. Use on every failure path:
 *   return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s: level %u is truncated", name, level); */
kiln_status kiln__fail(kiln_context *ctx, kiln_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void kiln__clear_error(kiln_context *ctx);

#define KILN_TRY(expr)                                                                                       \
    do {                                                                                                     \
        kiln_status kiln__st = (expr);                                                                       \
        if (kiln__st != KILN_OK) return kiln__st;                                                            \
    } while (0)

/* Checked arithmetic: return false on overflow. */
static inline bool kiln__mul_size(size_t a, size_t b, size_t *out) { return !__builtin_mul_overflow(a, b, out); }
static inline bool kiln__add_size(size_t a, size_t b, size_t *out) { return !__builtin_add_overflow(a, b, out); }

/* Allocation that records an OUT_OF_MEMORY message on failure. */
void *kiln__malloc(kiln_context *ctx, size_t size);
void *kiln__calloc(kiln_context *ctx, size_t count, size_t size);

/* ---- threads ----
 * kiln__parallel_for runs fn(user, begin, end, worker) over [0, count) split into chunks of `grain`
 * items. Work items must be independent; chunk boundaries never affect results, so output is the same
 * for any thread count. `worker` is in [0, kiln_context_threads(ctx)) and lets callers use per-thread
 * scratch. Returns KILN_ERR_CANCELLED when the context was cancelled or the progress callback asked to
 * stop (progress is reported from the calling thread only, as completed/count scaled into
 * [progress_lo, progress_hi]). */
typedef void (*kiln_range_fn)(void *user, size_t begin, size_t end, uint32_t worker);
kiln_status kiln__parallel_for(kiln_context *ctx, size_t count, size_t grain, kiln_range_fn fn, void *user);
kiln_status kiln__parallel_for_progress(kiln_context *ctx, size_t count, size_t grain, kiln_range_fn fn, void *user,
                                        float progress_lo, float progress_hi);
/* Reports progress; returns KILN_ERR_CANCELLED if the callback or kiln_cancel asked to stop. */
kiln_status kiln__progress(kiln_context *ctx, float fraction);
bool kiln__cancelled(kiln_context *ctx);

/* nice > 0: the pool's threads run at that nice value (Linux; elsewhere ignored): the CPU side of a
 * split batch yields to the GPU side's host work. */
kiln_pool *kiln__pool_create(uint32_t threads, int nice);
/* Lowers the calling thread's scheduling priority to `nice` (> 0; Linux, best effort). */
void kiln__thread_set_nice(int nice);
/* kiln_context_create whose worker threads run at scheduling nice value `nice` (see kiln__pool_create). */
kiln_status kiln__context_create_nice(const kiln_context_params *params, int nice, kiln_context **out);
void kiln__pool_destroy(kiln_pool *pool);

/* ---- half floats (IEEE 754 binary16) ---- */
float kiln__half_to_float(uint16_t h);
uint16_t kiln__float_to_half(float f); /* round to nearest even; overflow to inf; NaN kept */

/* ---- files ---- */
/* Reads a whole file (limit: 4 GiB). */
kiln_status kiln__read_file(kiln_context *ctx, const char *path, uint8_t **data, size_t *size);
/* Writes atomically: path.tmp-XXXXXX then rename; removes the temporary on failure. */
kiln_status kiln__write_file_atomic(kiln_context *ctx, const char *path, const void *data, size_t size);
/* kiln's cache directory (no trailing slash): $KILN_PIPELINE_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else
 * $HOME/.cache/kiln; 0 when off (KILN_PIPELINE_CACHE=0) or unknown (src/core/estimate.c). */
int kiln__cache_dir(char *dir, size_t cap);
/* The device start a GPU run measured (ms), kept in <cache dir>/device-start for `auto`'s estimate. */
void kiln__record_gpu_start(double ms);

#endif

/* context.c - contexts, status strings, error messages, allocation, files. */
#include "core/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *kiln_status_string(kiln_status status)
{
    switch (status) {
    case KILN_OK: return "success";
    case KILN_ERR_INVALID_ARGUMENT: return "invalid argument";
    case KILN_ERR_OUT_OF_MEMORY: return "out of memory";
    case KILN_ERR_IO: return "input/output error";
    case KILN_ERR_CORRUPT: return "corrupt or truncated data";
    case KILN_ERR_UNSUPPORTED: return "unsupported feature or format";
    case KILN_ERR_TOO_LARGE: return "size exceeds kiln's limits";
    case KILN_ERR_CANCELLED: return "cancelled";
    case KILN_ERR_NO_DEVICE: return "no usable Vulkan device";
    case KILN_ERR_GPU: return "Vulkan error";
    case KILN_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}

kiln_status kiln__fail(kiln_context *ctx, kiln_status status, const char *fmt, ...)
{
    if (ctx) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ctx->error, sizeof ctx->error, fmt, ap);
        va_end(ap);
    }
    return status;
}

void kiln__clear_error(kiln_context *ctx)
{
    if (ctx) {
        ctx->error[0] = 0;
        atomic_store(&ctx->cancel, 0);
    }
}

const char *kiln_last_error(const kiln_context *ctx) { return ctx ? ctx->error : ""; }

void *kiln__malloc(kiln_context *ctx, size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p) kiln__fail(ctx, KILN_ERR_OUT_OF_MEMORY, "out of memory allocating %zu bytes", size);
    return p;
}

void *kiln__calloc(kiln_context *ctx, size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) kiln__fail(ctx, KILN_ERR_OUT_OF_MEMORY, "out of memory allocating %zu x %zu bytes", count, size);
    return p;
}

void kiln_free(void *p) { free(p); }

void kiln_context_params_init(kiln_context_params *params)
{
    if (!params) return;
    memset(params, 0, sizeof *params);
    params->threads = 0;
    params->backend = KILN_BACKEND_AUTO;
    params->device_index = -1;
}

kiln_status kiln_context_create(const kiln_context_params *params, kiln_context **out)
{
    return kiln__context_create_nice(params, 0, out);
}

kiln_status kiln__context_create_nice(const kiln_context_params *params, int nice, kiln_context **out)
{
    if (!out) return KILN_ERR_INVALID_ARGUMENT;
    *out = NULL;
    kiln_context_params p;
    if (params) p = *params;
    else kiln_context_params_init(&p);
    if (p.backend != KILN_BACKEND_AUTO && p.backend != KILN_BACKEND_CPU && p.backend != KILN_BACKEND_VULKAN)
        return KILN_ERR_INVALID_ARGUMENT;
    if (p.threads > 1024) return KILN_ERR_INVALID_ARGUMENT;
    kiln_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return KILN_ERR_OUT_OF_MEMORY;
    ctx->params = p;
    uint32_t n = p.threads;
    if (n == 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        n = c > 0 ? (uint32_t)(c > 256 ? 256 : c) : 1;
    }
    ctx->threads = n;
    atomic_init(&ctx->cancel, 0);
    ctx->resolved = p.backend == KILN_BACKEND_CPU ? KILN_BACKEND_CPU : KILN_BACKEND_AUTO;
    ctx->last_gpu_ms = -1.0;
    if (n > 1) {
        ctx->pool = kiln__pool_create(n, nice);
        if (!ctx->pool) {
            free(ctx);
            return KILN_ERR_OUT_OF_MEMORY;
        }
    }
    *out = ctx;
    return KILN_OK;
}

/* Provided by src/gpu (a stub when kiln is built without Vulkan). */
void kiln__gpu_destroy(kiln_gpu *gpu);

void kiln_context_free(kiln_context *ctx)
{
    if (!ctx) return;
    if (ctx->gpu) kiln__gpu_destroy(ctx->gpu);
    kiln__pool_destroy(ctx->pool);
    free(ctx);
}

uint32_t kiln_context_threads(const kiln_context *ctx) { return ctx ? ctx->threads : 1; }

void kiln_cancel(kiln_context *ctx)
{
    if (ctx) atomic_store(&ctx->cancel, 1);
}

bool kiln__cancelled(kiln_context *ctx) { return ctx && atomic_load(&ctx->cancel) != 0; }

kiln_status kiln__progress(kiln_context *ctx, float fraction)
{
    if (!ctx) return KILN_OK;
    if (ctx->params.progress && ctx->params.progress(ctx->params.progress_user, fraction))
        atomic_store(&ctx->cancel, 1);
    if (atomic_load(&ctx->cancel)) return kiln__fail(ctx, KILN_ERR_CANCELLED, "cancelled");
    return KILN_OK;
}

double kiln_last_gpu_ms(const kiln_context *ctx) { return ctx ? ctx->last_gpu_ms : -1.0; }

/* ---- files ---- */

kiln_status kiln__read_file(kiln_context *ctx, const char *path, uint8_t **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return kiln__fail(ctx, KILN_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return kiln__fail(ctx, KILN_ERR_IO, "%s: cannot seek (not a regular file?)", path);
    }
    long len = ftell(f);
    if (len < 0) {
        fclose(f);
        return kiln__fail(ctx, KILN_ERR_IO, "%s: cannot determine size", path);
    }
    if ((unsigned long long)len > (4ull << 30)) {
        fclose(f);
        return kiln__fail(ctx, KILN_ERR_TOO_LARGE, "%s: file larger than 4 GiB", path);
    }
    rewind(f);
    uint8_t *buf = kiln__malloc(ctx, (size_t)len + 1);
    if (!buf) {
        fclose(f);
        return KILN_ERR_OUT_OF_MEMORY;
    }
    size_t got = fread(buf, 1, (size_t)len, f);
    int err = ferror(f);
    fclose(f);
    if (err || got != (size_t)len) {
        free(buf);
        return kiln__fail(ctx, KILN_ERR_IO, "%s: read error", path);
    }
    buf[len] = 0;
    *data = buf;
    *size = (size_t)len;
    return KILN_OK;
}

kiln_status kiln__write_file_atomic(kiln_context *ctx, const char *path, const void *data, size_t size)
{
    size_t n = strlen(path);
    char *tmp = kiln__malloc(ctx, n + 16);
    if (!tmp) return KILN_ERR_OUT_OF_MEMORY;
    memcpy(tmp, path, n);
    /* path.tmp-XXXXXX created with O_EXCL and mode 0666, so the kernel applies the umask: no umask()
     * round trip (process-wide, racy when several threads write files at once, as the CLI does) */
    int fd = -1;
    for (unsigned attempt = 0; attempt < 64; attempt++) {
        static const char digits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t r = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^ (uint64_t)getpid() << 40 ^
                     (uint64_t)(uintptr_t)&attempt * 0x9e3779b97f4a7c15ull ^ (uint64_t)attempt * 0xbf58476d1ce4e5b9ull;
        r ^= r >> 31;
        r *= 0x94d049bb133111ebull;
        r ^= r >> 29;
        memcpy(tmp + n, ".tmp-", 5);
        for (int i = 0; i < 6; i++, r /= 62) tmp[n + 5 + i] = digits[r % 62];
        tmp[n + 11] = 0;
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST) break;
    }
    if (fd < 0) {
        kiln_status st = kiln__fail(ctx, KILN_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
        free(tmp);
        return st;
    }
    const uint8_t *p = data;
    size_t left = size;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR) continue;
            kiln_status st = kiln__fail(ctx, KILN_ERR_IO, "%s: write failed: %s", path, strerror(errno));
            close(fd);
            unlink(tmp);
            free(tmp);
            return st;
        }
        p += w;
        left -= (size_t)w;
    }
    if (close(fd) != 0) {
        kiln_status st = kiln__fail(ctx, KILN_ERR_IO, "%s: write failed: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return st;
    }
    if (rename(tmp, path) != 0) {
        kiln_status st = kiln__fail(ctx, KILN_ERR_IO, "%s: cannot rename into place: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return st;
    }
    free(tmp);
    return KILN_OK;
}

/* vk_pcache.c - the Vulkan pipeline cache on disk (see include/kiln/kiln_timings.h), and the context's GPU
 * phase times.
 *
 * File layout (all integers little-endian):
 *   0  "KILNPC1\0"        magic
 *   8  u64 n              bytes of Vulkan data that follow
 *  16  u64 FNV-1a 64      of those n bytes
 *  24  n bytes            vkGetPipelineCacheData's output, which starts with VkPipelineCacheHeaderVersionOne
 *                         (u32 headerSize >= 32, u32 headerVersion = 1, u32 vendorID, u32 deviceID,
 *                         u8 pipelineCacheUUID[16]; least significant byte first whatever the host)
 * A file that fails any check is ignored (the driver gets no initial data) and replaced at the next save.
 * Written with kiln__write_file_atomic (temporary file + rename): readers never see half a file. */
#include "gpu/vk.h"
#include "kiln/kiln_timings.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define PC_MAGIC "KILNPC1"
#define PC_HEAD 24u
#define PC_MAX_BYTES ((uint64_t)512 << 20)

double kiln__vk_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}


static uint64_t fnv1a64(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static uint32_t rd32(const uint8_t *p) { return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }
static void wr64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* The cache directory (no trailing slash) into dir; 0 when the cache is off. */
static int cache_dir(char *dir, size_t cap) { return kiln__cache_dir(dir, cap); }

/* mkdir -p (0700 for what it creates); 0 on success */
static int make_dirs(char *path)
{
    struct stat sb;
    if (stat(path, &sb) == 0) return S_ISDIR(sb.st_mode) ? 0 : -1;
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        int r = mkdir(path, 0700);
        *p = '/';
        if (r != 0 && errno != EEXIST) return -1;
    }
    return mkdir(path, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

/* Checks a file's bytes against the device; returns the Vulkan data (inside buf) or NULL with *why. */
static const uint8_t *check_file(const kiln_gpu *gpu, const uint8_t *buf, size_t size, size_t *n, const char **why)
{
    *n = 0;
    if (size < PC_HEAD || memcmp(buf, PC_MAGIC, 8)) return *why = "not a kiln pipeline cache file", NULL;
    uint64_t len = rd64(buf + 8);
    if (len != size - PC_HEAD || len > PC_MAX_BYTES) return *why = "truncated or wrong length", NULL;
    if (len < 32) return *why = "too short for a Vulkan pipeline cache header", NULL;
    const uint8_t *d = buf + PC_HEAD;
    if (fnv1a64(d, (size_t)len) != rd64(buf + 16)) return *why = "checksum mismatch", NULL;
    uint32_t hsize = rd32(d), hver = rd32(d + 4), vendor = rd32(d + 8), device = rd32(d + 12);
    if (hsize < 32 || hsize > len) return *why = "bad Vulkan pipeline cache header size", NULL;
    if (hver != VK_PIPELINE_CACHE_HEADER_VERSION_ONE) return *why = "unknown Vulkan pipeline cache header version", NULL;
    if (vendor != gpu->props.vendorID || device != gpu->props.deviceID) return *why = "from another device", NULL;
    if (memcmp(d + 16, gpu->props.pipelineCacheUUID, VK_UUID_SIZE)) return *why = "from another driver (cache UUID)", NULL;
    *n = (size_t)len;
    return d;
}

void kiln__vk_pcache_load(kiln_gpu *gpu, void **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    gpu->pcache_path[0] = 0;
    gpu->pcache_note[0] = 0;
    gpu->pcache_state = KILN_PIPELINE_CACHE_OFF;
    gpu->pcache_loaded = gpu->pcache_file_bytes = 0;
    char dir[900];
    if (!cache_dir(dir, sizeof dir)) return;
    char uuid[2 * VK_UUID_SIZE + 1];
    for (unsigned i = 0; i < VK_UUID_SIZE; i++) snprintf(uuid + 2 * i, 3, "%02x", gpu->props.pipelineCacheUUID[i]);
    int n = snprintf(gpu->pcache_path, sizeof gpu->pcache_path, "%s/pipelines-%04x-%04x-%08x-%s.bin", dir,
                     gpu->props.vendorID & 0xffff, gpu->props.deviceID & 0xffff, gpu->props.driverVersion, uuid);
    if (n <= 0 || (size_t)n >= sizeof gpu->pcache_path) {
        gpu->pcache_path[0] = 0;
        return;
    }
    gpu->pcache_state = KILN_PIPELINE_CACHE_NEW;
    struct stat sb;
    if (stat(gpu->pcache_path, &sb) != 0) return; /* no file yet */
    if (!S_ISREG(sb.st_mode) || (uint64_t)sb.st_size > PC_MAX_BYTES + PC_HEAD) {
        gpu->pcache_state = KILN_PIPELINE_CACHE_REJECTED;
        snprintf(gpu->pcache_note, sizeof gpu->pcache_note, "not a regular file, or too large");
        return;
    }
    uint8_t *buf = NULL;
    size_t len = 0;
    if (kiln__read_file(NULL, gpu->pcache_path, &buf, &len) != KILN_OK) {
        gpu->pcache_state = KILN_PIPELINE_CACHE_REJECTED;
        snprintf(gpu->pcache_note, sizeof gpu->pcache_note, "cannot read the file");
        return;
    }
    const char *why = NULL;
    size_t dn = 0;
    const uint8_t *d = check_file(gpu, buf, len, &dn, &why);
    if (!d) {
        gpu->pcache_state = KILN_PIPELINE_CACHE_REJECTED;
        snprintf(gpu->pcache_note, sizeof gpu->pcache_note, "%s", why);
        free(buf);
        return;
    }
    memmove(buf, d, dn);
    *data = buf;
    *size = dn;
    gpu->pcache_state = KILN_PIPELINE_CACHE_LOADED;
    gpu->pcache_loaded = gpu->pcache_file_bytes = dn;
}

kiln_status kiln__vk_pcache_save(kiln_context *ctx, kiln_gpu *gpu)
{
    if (!gpu || !gpu->device || !gpu->cache || !gpu->pcache_path[0]) return KILN_OK;
    size_t n = 0;
    if (vkGetPipelineCacheData(gpu->device, gpu->cache, &n, NULL) != VK_SUCCESS || n < 32) return KILN_OK;
    /* unchanged (the driver found every pipeline in the loaded data), or nothing created: keep the file */
    if (gpu->pcache_file_bytes && n == gpu->pcache_file_bytes) return KILN_OK;
    if (gpu->t_pipelines == 0) return KILN_OK;
    if (n > PC_MAX_BYTES) return KILN_OK;
    double t0 = kiln__vk_now_ms();
    uint8_t *buf = malloc(PC_HEAD + n);
    if (!buf) return kiln__fail(ctx, KILN_ERR_OUT_OF_MEMORY, "out of memory saving the pipeline cache (%zu bytes)", n);
    size_t got = n;
    VkResult r = vkGetPipelineCacheData(gpu->device, gpu->cache, &got, buf + PC_HEAD);
    if (r != VK_SUCCESS || got < 32) { /* VK_INCOMPLETE: it grew meanwhile (another thread); skip this time */
        free(buf);
        return KILN_OK;
    }
    memcpy(buf, PC_MAGIC, 8);
    wr64(buf + 8, got);
    wr64(buf + 16, fnv1a64(buf + PC_HEAD, got));
    char dir[sizeof gpu->pcache_path];
    snprintf(dir, sizeof dir, "%s", gpu->pcache_path);
    char *slash = strrchr(dir, '/');
    kiln_status st = KILN_OK;
    if (slash && slash != dir) *slash = 0;
    if (slash && slash != dir && make_dirs(dir) != 0) {
        const int e = errno;
        snprintf(gpu->pcache_note, sizeof gpu->pcache_note, "cannot create the cache directory: %.80s", strerror(e));
        st = kiln__fail(ctx, KILN_ERR_IO, "pipeline cache: cannot create the directory %s: %s", dir, strerror(e));
    } else {
        st = kiln__write_file_atomic(ctx, gpu->pcache_path, buf, PC_HEAD + got);
        if (st == KILN_OK) gpu->pcache_file_bytes = got;
        else snprintf(gpu->pcache_note, sizeof gpu->pcache_note, "cannot write the file");
    }
    free(buf);
    gpu->t_cache_save_ms = kiln__vk_now_ms() - t0;
    return st;
}

kiln_status kiln_context_gpu_timings(kiln_context *ctx, kiln_gpu_timings *out)
{
    if (!ctx || !out) return KILN_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    const kiln_gpu *gpu = ctx->gpu;
    if (!gpu) return KILN_OK;
    out->instance_ms = gpu->t_instance_ms;
    out->device_ms = gpu->t_device_ms;
    out->pipeline_ms = gpu->t_pipeline_ms;
    out->pipelines = gpu->t_pipelines;
    out->alloc_ms = gpu->t_alloc_ms;
    out->allocs = gpu->t_allocs;
    out->cache_save_ms = gpu->t_cache_save_ms;
    out->instance_query_ms = gpu->t_start_steps[KILN_VK_STEP_QUERY];
    out->instance_create_ms = gpu->t_start_steps[KILN_VK_STEP_CREATE_INSTANCE];
    out->enumerate_ms = gpu->t_start_steps[KILN_VK_STEP_ENUMERATE];
    out->describe_ms = gpu->t_start_steps[KILN_VK_STEP_DESCRIBE];
    out->device_query_ms = gpu->t_start_steps[KILN_VK_STEP_DEVICE_QUERY];
    out->device_create_ms = gpu->t_start_steps[KILN_VK_STEP_CREATE_DEVICE];
    out->device_rest_ms = gpu->t_device_ms - out->device_query_ms - out->device_create_ms;
    if (out->device_rest_ms < 0.0) out->device_rest_ms = 0.0;
    out->cache_state = (kiln_pipeline_cache_state)gpu->pcache_state;
    out->cache_bytes = gpu->pcache_loaded;
    snprintf(out->cache_path, sizeof out->cache_path, "%s", gpu->pcache_path);
    snprintf(out->cache_note, sizeof out->cache_note, "%s", gpu->pcache_note);
    return KILN_OK;
}

kiln_status kiln_context_save_pipeline_cache(kiln_context *ctx)
{
    if (!ctx) return KILN_ERR_INVALID_ARGUMENT;
    kiln__clear_error(ctx);
    const kiln_gpu *gpu = ctx->gpu;
    const kiln_status st = kiln__vk_pcache_save(ctx, ctx->gpu); /* (creates the directory) */
    /* what this device's start cost (instance, device, pipelines), for `auto`'s next estimate; a GPU's
     * only (not a CPU implementation such as lavapipe, which auto does not use) */
    if (gpu && gpu->device && gpu->chosen >= 0 && gpu->t_instance_ms > 0.0 &&
        gpu->phys[gpu->chosen].type != VK_PHYSICAL_DEVICE_TYPE_CPU)
        kiln__record_gpu_start(gpu->t_instance_ms + gpu->t_device_ms + gpu->t_pipeline_ms);
    return st;
}

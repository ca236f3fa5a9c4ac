/* vk_pcache.c - the Vulkan pipeline cache on disk (see include/kiln/kiln_timings.h), one small file per
 * pipeline, and the context's GPU phase times.
 *
 * Why one file per pipeline: a single file holding every pipeline ever made grows to 16 MB on the H100
 * (NVIDIA 580) and costs 42-132 ms to read, check and hand to vkCreatePipelineCache at every device start,
 * more than the 20-30 ms of compilation it saves once NVIDIA's own shader disk cache is warm, for a job that
 * needs 1-5 pipelines. Now a pipeline's file is read when that pipeline is created (kiln_vk_pipeline_get),
 * into a VkPipelineCache of its own, and written when it was not there (or the driver's data grew).
 *
 * Where: <cache dir>/pipelines/VVVV-DDDD-<driver version>-<pipelineCacheUUID>-<key>.bin, <key> = FNV-1a 64
 * of the SPIR-V and everything else the pipeline is created from (workgroup size, specialisation constants,
 * bindings, push constant size, required subgroup size, flags). Files are written atomically (a temporary
 * file renamed into place: concurrent processes see a whole file or none). A file read is touched when older
 * than an hour, so the oldest modification time is the least recently used: after each write the directory
 * is kept under $KILN_PIPELINE_CACHE_MAX_MB (default 64) by removing the oldest files, temporary files over
 * an hour old and the single-file caches of earlier kiln versions (<cache dir>/pipelines-*.bin). A missing
 * or read-only directory only costs compile time (the note says why nothing was written).
 *
 * File layout (all integers little-endian):
 *   0  "KILNPC2\0"        magic
 *   8  u64 n              bytes of Vulkan data that follow
 *  16  u64 FNV-1a 64      of those n bytes
 *  24  u64 key            the pipeline's key (as in the name)
 *  32  n bytes            vkGetPipelineCacheData's output, which starts with VkPipelineCacheHeaderVersionOne
 *                         (u32 headerSize >= 32, u32 headerVersion = 1, u32 vendorID, u32 deviceID,
 *                         u8 pipelineCacheUUID[16]; least significant byte first whatever the host)
 * A file that fails any check is ignored (the driver gets no initial data) and replaced. Initial data from
 * another pipeline could only cost a compile: drivers key their caches themselves. */
#include "gpu/vk.h"
#include "kiln/kiln_timings.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PC_MAGIC "KILNPC2"
#define PC_HEAD 32u
#define PC_MAX_BYTES ((uint64_t)64 << 20) /* one pipeline's data */
#define PC_DEFAULT_MAX_MB 64.0
#define PC_TOUCH_AGE_S 3600 /* a file read is touched (LRU) when older than this */
#define PC_TMP_AGE_S 3600   /* a temporary file this old was left by a process that died */

double kiln__vk_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static uint64_t fnv1a64_step(uint64_t h, const void *data, size_t n)
{
    const uint8_t *p = data;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t fnv1a64(const uint8_t *p, size_t n) { return fnv1a64_step(0xcbf29ce484222325ull, p, n); }

static uint32_t rd32(const uint8_t *p) { return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }
static void wr64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

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

/* Checks a file's bytes against the device and the key; returns the Vulkan data (inside buf) or NULL with *why. */
static const uint8_t *check_file(const kiln_gpu *gpu, uint64_t key, const uint8_t *buf, size_t size, size_t *n,
                                 const char **why)
{
    *n = 0;
    if (size < PC_HEAD || memcmp(buf, PC_MAGIC, 8)) return *why = "not a kiln pipeline cache file", NULL;
    uint64_t len = rd64(buf + 8);
    if (len != size - PC_HEAD || len > PC_MAX_BYTES) return *why = "truncated or wrong length", NULL;
    if (len < 32) return *why = "too short for a Vulkan pipeline cache header", NULL;
    if (rd64(buf + 24) != key) return *why = "another pipeline's file (key)", NULL;
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
    /* no file is read here any more: each pipeline's own file is read when it is created */
    *data = NULL;
    *size = 0;
    gpu->pcache_path[0] = 0;
    gpu->pcache_prefix[0] = 0;
    gpu->pcache_note[0] = 0;
    gpu->pcache_state = KILN_PIPELINE_CACHE_OFF;
    gpu->pcache_loaded = gpu->pcache_file_bytes = 0;
    gpu->pcache_files_loaded = gpu->pcache_files_written = 0;
    char dir[900];
    if (!kiln__cache_dir(dir, sizeof dir)) return;
    char uuid[2 * VK_UUID_SIZE + 1];
    for (unsigned i = 0; i < VK_UUID_SIZE; i++) snprintf(uuid + 2 * i, 3, "%02x", gpu->props.pipelineCacheUUID[i]);
    int n = snprintf(gpu->pcache_path, sizeof gpu->pcache_path, "%s/pipelines", dir);
    int m = snprintf(gpu->pcache_prefix, sizeof gpu->pcache_prefix, "%04x-%04x-%08x-%s", gpu->props.vendorID & 0xffff,
                     gpu->props.deviceID & 0xffff, gpu->props.driverVersion, uuid);
    if (n <= 0 || (size_t)n + 64 + (size_t)m >= sizeof gpu->pcache_path || m <= 0 || (size_t)m >= sizeof gpu->pcache_prefix) {
        gpu->pcache_path[0] = gpu->pcache_prefix[0] = 0;
        return;
    }
    gpu->pcache_state = KILN_PIPELINE_CACHE_NEW;
}

static int file_path(const kiln_gpu *gpu, uint64_t key, char *path, size_t cap)
{
    int n = snprintf(path, cap, "%s/%s-%016llx.bin", gpu->pcache_path, gpu->pcache_prefix, (unsigned long long)key);
    return n > 0 && (size_t)n < cap;
}

uint64_t kiln__vk_pcache_key(const kiln_gpu *gpu, const kiln_vk_pipeline *p, const void *code, size_t code_size,
                             uint32_t flags)
{
    uint64_t h = fnv1a64_step(0xcbf29ce484222325ull, "kiln-pipeline-1", 15);
    h = fnv1a64_step(h, code, code_size);
    uint32_t v[8 + KILN_VK_MAX_SPEC + KILN_VK_MAX_BINDINGS];
    uint32_t k = 0;
    v[k++] = (uint32_t)code_size;
    v[k++] = p->local_size;
    v[k++] = p->nspec;
    for (uint32_t i = 0; i < p->nspec; i++) v[k++] = p->spec[i];
    v[k++] = p->nbindings;
    for (uint32_t i = 0; i < p->nbindings; i++) v[k++] = (uint32_t)p->types[i];
    v[k++] = p->push_size;
    v[k++] = p->subgroup_size;
    v[k++] = (uint32_t)p->full_subgroups;
    v[k++] = flags;
    (void)gpu;
    return fnv1a64_step(h, v, (size_t)k * sizeof v[0]);
}

/* The file's data, checked (malloc'd, the Vulkan part only), or NULL: no file, or rejected (state + note). */
static uint8_t *read_checked(kiln_gpu *gpu, uint64_t key, const char *path, size_t *dn)
{
    *dn = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL; /* no file yet (or unreadable: treated the same, a compile) */
    struct stat sb;
    const char *why = NULL;
    uint8_t *buf = NULL;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size > PC_MAX_BYTES + PC_HEAD) {
        why = "not a regular file, or too large";
    } else if (!(buf = malloc((size_t)sb.st_size + 1))) {
        why = "out of memory";
    } else {
        size_t got = 0;
        while (got < (size_t)sb.st_size) {
            ssize_t r = read(fd, buf + got, (size_t)sb.st_size - got);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            got += (size_t)r;
        }
        size_t n = 0;
        const uint8_t *d = got == (size_t)sb.st_size ? check_file(gpu, key, buf, got, &n, &why) : NULL;
        if (got != (size_t)sb.st_size) why = "cannot read the file";
        if (d) {
            memmove(buf, d, n);
            *dn = n;
            /* least recently used = oldest modification time (eviction); touched at most once an hour */
            if (sb.st_mtime < time(NULL) - PC_TOUCH_AGE_S) (void)futimens(fd, NULL);
        }
    }
    close(fd);
    if (*dn) return buf;
    free(buf);
    gpu->pcache_state = KILN_PIPELINE_CACHE_REJECTED;
    snprintf(gpu->pcache_note, sizeof gpu->pcache_note, "%s", why ? why : "rejected");
    return NULL;
}

VkPipelineCache kiln__vk_pcache_open(kiln_gpu *gpu, uint64_t key, size_t *loaded)
{
    *loaded = 0;
    if (!gpu->pcache_path[0] || !gpu->device) return VK_NULL_HANDLE;
    char path[sizeof gpu->pcache_path + 128];
    if (!file_path(gpu, key, path, sizeof path)) return VK_NULL_HANDLE;
    size_t n = 0;
    uint8_t *data = read_checked(gpu, key, path, &n);
    VkPipelineCacheCreateInfo pcci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO, .initialDataSize = n,
                                      .pInitialData = data};
    VkPipelineCache c = VK_NULL_HANDLE;
    VkResult r = vkCreatePipelineCache(gpu->device, &pcci, NULL, &c);
    if (r != VK_SUCCESS && data) { /* the driver refused the data: start empty */
        gpu->pcache_state = KILN_PIPELINE_CACHE_REJECTED;
        snprintf(gpu->pcache_note, sizeof gpu->pcache_note, "the driver refused the data (%s)", kiln_vk_result_name(r));
        pcci.initialDataSize = 0;
        pcci.pInitialData = NULL;
        n = 0;
        r = vkCreatePipelineCache(gpu->device, &pcci, NULL, &c);
    }
    free(data);
    if (r != VK_SUCCESS) return VK_NULL_HANDLE;
    if (n) {
        *loaded = n;
        gpu->pcache_loaded += n;
        gpu->pcache_files_loaded++;
        if (gpu->pcache_state == KILN_PIPELINE_CACHE_NEW) gpu->pcache_state = KILN_PIPELINE_CACHE_LOADED;
    }
    return c;
}

typedef struct pc_entry {
    time_t mtime;
    uint64_t size;
    char name[256];
} pc_entry;

static int by_age(const void *a, const void *b)
{
    const pc_entry *x = a, *y = b;
    if (x->mtime != y->mtime) return x->mtime < y->mtime ? -1 : 1;
    return strcmp(x->name, y->name);
}

static double max_bytes(void)
{
    const char *e = getenv("KILN_PIPELINE_CACHE_MAX_MB");
    if (e && e[0]) {
        char *end = NULL;
        const double v = strtod(e, &end);
        if (end && end != e && !*end && v > 0.0 && v < 1e7) return v * 1048576.0;
    }
    return PC_DEFAULT_MAX_MB * 1048576.0;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* After a write: the directory kept under the size limit (oldest files first, never `keep`), stale temporary
 * files and earlier versions' single-file caches (<cache dir>/pipelines-*.bin) removed. Best effort. */
static void evict(kiln_gpu *gpu, const char *keep)
{
    const double limit = max_bytes();
    const time_t now = time(NULL);
    char path[sizeof gpu->pcache_path + 300];
    /* the single-file caches of earlier versions, next to the directory */
    char parent[sizeof gpu->pcache_path];
    snprintf(parent, sizeof parent, "%s", gpu->pcache_path);
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent) {
        *slash = 0;
        DIR *d = opendir(parent);
        struct dirent *e;
        while (d && (e = readdir(d)))
            if (!strncmp(e->d_name, "pipelines-", 10) && ends_with(e->d_name, ".bin") &&
                snprintf(path, sizeof path, "%s/%s", parent, e->d_name) < (int)sizeof path)
                (void)unlink(path);
        if (d) closedir(d);
    }
    DIR *d = opendir(gpu->pcache_path);
    if (!d) return;
    size_t n = 0, cap = 0;
    pc_entry *v = NULL;
    double total = 0.0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof v[0].name) continue;
        if (snprintf(path, sizeof path, "%s/%s", gpu->pcache_path, e->d_name) >= (int)sizeof path) continue;
        struct stat sb;
        if (lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
        if (strstr(e->d_name, ".bin.tmp-")) { /* a writer that died (or is writing now: then it is young) */
            if (sb.st_mtime < now - PC_TMP_AGE_S) (void)unlink(path);
            continue;
        }
        if (!ends_with(e->d_name, ".bin")) continue;
        total += (double)sb.st_size;
        if (!strcmp(e->d_name, keep)) continue;
        if (n == cap) {
            size_t nc = cap ? 2 * cap : 256;
            pc_entry *nv = realloc(v, nc * sizeof *nv);
            if (!nv) break;
            v = nv;
            cap = nc;
        }
        v[n].mtime = sb.st_mtime;
        v[n].size = (uint64_t)sb.st_size;
        snprintf(v[n].name, sizeof v[n].name, "%s", e->d_name);
        n++;
    }
    closedir(d);
    if (total > limit && n) {
        qsort(v, n, sizeof *v, by_age);
        for (size_t i = 0; i < n && total > limit; i++)
            if (snprintf(path, sizeof path, "%s/%s", gpu->pcache_path, v[i].name) < (int)sizeof path &&
                (unlink(path) == 0 || errno == ENOENT))
                total -= (double)v[i].size;
    }
    free(v);
}

void kiln__vk_pcache_close(kiln_gpu *gpu, VkPipelineCache c, uint64_t key, size_t loaded, int created)
{
    if (c == VK_NULL_HANDLE) return;
    size_t n = 0;
    uint8_t *buf = NULL;
    /* written when the file was missing or rejected, or when the driver's data grew (it compiled anyway) */
    if (created && vkGetPipelineCacheData(gpu->device, c, &n, NULL) == VK_SUCCESS && n >= 32 && n <= PC_MAX_BYTES &&
        n != loaded && (buf = malloc(PC_HEAD + n))) {
        size_t got = n;
        char path[sizeof gpu->pcache_path + 128];
        if (vkGetPipelineCacheData(gpu->device, c, &got, buf + PC_HEAD) == VK_SUCCESS && got >= 32 &&
            file_path(gpu, key, path, sizeof path)) {
            const double t0 = kiln__vk_now_ms();
            memcpy(buf, PC_MAGIC, 8);
            wr64(buf + 8, got);
            wr64(buf + 16, fnv1a64(buf + PC_HEAD, got));
            wr64(buf + 24, key);
            char dir[sizeof gpu->pcache_path];
            snprintf(dir, sizeof dir, "%s", gpu->pcache_path);
            if (make_dirs(dir) != 0) {
                snprintf(gpu->pcache_note, sizeof gpu->pcache_note, "cannot create the cache directory: %.80s",
                         strerror(errno));
            } else if (kiln__write_file_atomic(NULL, path, buf, PC_HEAD + got) != KILN_OK) {
                snprintf(gpu->pcache_note, sizeof gpu->pcache_note, "cannot write a pipeline's file: %.80s", strerror(errno));
            } else {
                gpu->pcache_files_written++;
                gpu->pcache_file_bytes += got;
                evict(gpu, strrchr(path, '/') + 1);
            }
            gpu->t_cache_save_ms += kiln__vk_now_ms() - t0;
        }
        free(buf);
    }
    vkDestroyPipelineCache(gpu->device, c, NULL);
}

kiln_status kiln__vk_pcache_save(kiln_context *ctx, kiln_gpu *gpu)
{
    (void)ctx;
    (void)gpu; /* each pipeline's file is written when the pipeline is created (kiln__vk_pcache_close) */
    return KILN_OK;
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
    out->cache_files_loaded = gpu->pcache_files_loaded;
    out->cache_files_written = gpu->pcache_files_written;
    snprintf(out->cache_path, sizeof out->cache_path, "%s", gpu->pcache_path);
    snprintf(out->cache_note, sizeof out->cache_note, "%s", gpu->pcache_note);
    return KILN_OK;
}

kiln_status kiln_context_save_pipeline_cache(kiln_context *ctx)
{
    if (!ctx) return KILN_ERR_INVALID_ARGUMENT;
    kiln__clear_error(ctx);
    const kiln_gpu *gpu = ctx->gpu;
    const kiln_status st = kiln__vk_pcache_save(ctx, ctx->gpu);
    /* what this device's start cost (instance, device, pipelines), for `auto`'s next estimate; a GPU's
     * only (not a CPU implementation such as lavapipe, which auto does not use) */
    if (gpu && gpu->device && gpu->chosen >= 0 && gpu->t_instance_ms > 0.0 &&
        gpu->phys[gpu->chosen].type != VK_PHYSICAL_DEVICE_TYPE_CPU)
        kiln__record_gpu_start(gpu->t_instance_ms + gpu->t_device_ms + gpu->t_pipeline_ms);
    return st;
}

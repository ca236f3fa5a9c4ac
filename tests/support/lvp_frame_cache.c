/* lvp_frame_cache.c - a preload for the sanitised test run only (KILN_SANITIZE): the large blocks that Mesa's
 * lavapipe / llvmpipe allocate and free again and again are kept for reuse instead of going back to
 * AddressSanitizer's allocator.
 *
 * Why: Debian 12's lavapipe (Mesa 22.3) allocates, for every compute workgroup, coroutine frames with
 * posix_memalign(4096, ~100 KB - 1 MB), and, for every dispatch or copy, blocks of 0.5-2.5 MB with malloc; it frees
 * them right after. glibc reuses that memory; ASan's allocator maps every block of 128 KB or more afresh (mmap,
 * shadow, munmap), so each one costs hundreds of page faults, ~10 us each on these virtual machines.
 * test_gpu_mip's light run took 176 s under ASan (134 s of it in the kernel, 2.9 million page faults in its first
 * 40 s) against 17.5 s in the Release build (2026-11-28, 2-core development box, Debian 12, Mesa 22.3.6).
 *
 * Scope: only allocations of at least 128 KB whose caller is code in libvulkan_lvp.so or swrast_dri.so, and only in a
 * process with ASan. Every other allocation, kiln's own included, goes to ASan unchanged, so kiln's code keeps its
 * full checking. A cached block stays allocated in ASan's eyes; it is reachable from this module's table, so
 * LeakSanitizer does not report it. Blocks come in power-of-two sizes, 4096-byte aligned.
 *
 * It also keeps the two drivers loaded: dlclose() of libvulkan_lvp.so or swrast_dri.so (the Vulkan loader's and
 * libEGL's, at the end of a process) returns 0 and leaves them mapped. Mesa 22.3 leaks a few bytes from one-time
 * initialisers, and LeakSanitizer can name (and tests/lsan.supp suppress) frames only of modules still mapped at exit.
 * The drivers used to be preloaded for that, which made every process of the tests' scripts (grep, python3, cmp, and
 * kiln runs that never create a Vulkan instance) load libLLVM, ~0.2-0.6 s each.
 * This file is built without sanitizer instrumentation and preloaded first (CMakeLists.txt). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SLOTS 4096                   /* blocks ever taken for the drivers (a power of two); beyond SLOTS / 2, no caching */
#define MIN_LOG 17                   /* 128 KB: smaller blocks come from ASan's size-class allocator, which reuses them */
#define MAX_LOG 34                   /* 16 GB */
#define CAP_BYTES ((size_t)2 << 30) /* at most this much held for the drivers */
#define SITES 256                    /* call sites remembered (return addresses) */

typedef struct {
    _Atomic(uintptr_t) ptr; /* 0: empty (never reset: blocks are never given back) */
    int log;                /* the block holds 1 << log bytes */
    int in_use;
    int next_free; /* next slot of the same size while not in use, -1: none */
} slot;

static slot g_slots[SLOTS];
static int g_free_head[MAX_LOG + 1];
static int g_heads_ready;
static _Atomic int g_count;
static size_t g_bytes;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(uintptr_t) g_site[SITES]; /* return address | 1 if in a driver; 0: empty */

/* The allocator underneath: ASan's (its interceptors are exported under these names), else glibc's, in a process
 * without ASan (the interop tests preload the drivers into helper programs too). No dlsym: it allocates and frees
 * before a preload's constructor can run. */
extern void *__interceptor_malloc(size_t) __attribute__((weak));
extern void *__interceptor_calloc(size_t, size_t) __attribute__((weak));
extern void *__interceptor_realloc(void *, size_t) __attribute__((weak));
extern int __interceptor_posix_memalign(void **, size_t, size_t) __attribute__((weak));
extern void *__interceptor_aligned_alloc(size_t, size_t) __attribute__((weak));
extern void __interceptor_free(void *) __attribute__((weak));
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static int asan(void)
{
    return __interceptor_malloc && __interceptor_calloc && __interceptor_realloc && __interceptor_posix_memalign &&
           __interceptor_free;
}

static size_t hash_ptr(uintptr_t p)
{
    return (size_t)((p >> 12) * 0x9E3779B97F4A7C15ull >> 20) & (SLOTS - 1);
}

static slot *find(uintptr_t p)
{
    size_t h = hash_ptr(p);
    for (size_t i = 0; i < SLOTS; i++) {
        slot *s = &g_slots[(h + i) & (SLOTS - 1)];
        uintptr_t q = atomic_load_explicit(&s->ptr, memory_order_acquire);
        if (q == p)
            return s;
        if (q == 0)
            return NULL;
    }
    return NULL;
}

/* whether a loaded module's path names one of the two drivers */
static int driver_path(const char *path)
{
    return path && (strstr(path, "libvulkan_lvp") || strstr(path, "swrast_dri"));
}

/* whether the code at return address a is in one of the two drivers (dladdr once per call site) */
static int from_driver(uintptr_t a)
{
    size_t h = (size_t)((a * 0x9E3779B97F4A7C15ull) >> 56) & (SITES - 1);
    for (size_t i = 0; i < SITES; i++) {
        uintptr_t e = atomic_load_explicit(&g_site[(h + i) & (SITES - 1)], memory_order_acquire);
        if (e == 0)
            break;
        if ((e & ~(uintptr_t)1) == (a & ~(uintptr_t)1))
            return (int)(e & 1);
    }
    Dl_info info;
    int drv = dladdr((void *)a, &info) && driver_path(info.dli_fname);
    for (size_t i = 0; i < SITES; i++) {
        uintptr_t zero = 0, mine = (a & ~(uintptr_t)1) | (uintptr_t)drv;
        if (atomic_compare_exchange_strong(&g_site[(h + i) & (SITES - 1)], &zero, mine) || zero == mine)
            break;
    }
    return drv;
}

static int size_log(size_t n)
{
    int l = MIN_LOG;
    while (l <= MAX_LOG && ((size_t)1 << l) < n)
        l++;
    return l;
}

/* a block of at least n bytes for the drivers, 4096-byte aligned, or NULL: the caller then asks ASan itself */
static void *take(size_t n)
{
    int l = size_log(n);
    if (l > MAX_LOG)
        return NULL;
    void *p = NULL;
    pthread_mutex_lock(&g_lock);
    if (!g_heads_ready) {
        for (int i = 0; i <= MAX_LOG; i++)
            g_free_head[i] = -1;
        g_heads_ready = 1;
    }
    int i = g_free_head[l];
    if (i >= 0) {
        slot *s = &g_slots[i];
        g_free_head[l] = s->next_free;
        s->in_use = 1;
        p = (void *)atomic_load_explicit(&s->ptr, memory_order_relaxed);
    } else if (atomic_load(&g_count) < SLOTS / 2 && g_bytes + ((size_t)1 << l) <= CAP_BYTES &&
               __interceptor_posix_memalign(&p, 4096, (size_t)1 << l) == 0) {
        size_t h = hash_ptr((uintptr_t)p);
        for (size_t k = 0; k < SLOTS; k++) {
            slot *s = &g_slots[(h + k) & (SLOTS - 1)];
            if (atomic_load_explicit(&s->ptr, memory_order_relaxed) == 0) {
                s->log = l;
                s->in_use = 1;
                s->next_free = -1;
                atomic_store_explicit(&s->ptr, (uintptr_t)p, memory_order_release);
                atomic_fetch_add(&g_count, 1);
                g_bytes += (size_t)1 << l;
                break;
            }
        }
    } else {
        p = NULL;
    }
    pthread_mutex_unlock(&g_lock);
    return p;
}

static void give(slot *s)
{
    pthread_mutex_lock(&g_lock);
    s->in_use = 0;
    s->next_free = g_free_head[s->log];
    g_free_head[s->log] = (int)(s - g_slots);
    pthread_mutex_unlock(&g_lock);
}

static slot *mine(void *p)
{
    return p && atomic_load_explicit(&g_count, memory_order_acquire) > 0 ? find((uintptr_t)p) : NULL;
}

/* the interposed functions are exported whatever the build's default visibility */
#define EXPORT __attribute__((visibility("default")))

#define ELIGIBLE(n) (asan() && (n) >= ((size_t)1 << MIN_LOG) && from_driver((uintptr_t)__builtin_return_address(0)))

EXPORT void *malloc(size_t n)
{
    void *p = ELIGIBLE(n) ? take(n) : NULL;
    if (p)
        return p;
    return __interceptor_malloc ? __interceptor_malloc(n) : __libc_malloc(n);
}

EXPORT void *calloc(size_t k, size_t n)
{
    size_t total;
    if (!__builtin_mul_overflow(k, n, &total) && ELIGIBLE(total)) {
        void *p = take(total);
        if (p)
            return memset(p, 0, total);
    }
    return __interceptor_calloc ? __interceptor_calloc(k, n) : __libc_calloc(k, n);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    if (align <= 4096 && ELIGIBLE(n)) {
        void *p = take(n);
        if (p) {
            *out = p;
            return 0;
        }
    }
    if (__interceptor_posix_memalign)
        return __interceptor_posix_memalign(out, align, n);
    if (align < sizeof(void *) || (align & (align - 1)))
        return EINVAL;
    void *p = __libc_memalign(align, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
    if (align <= 4096 && ELIGIBLE(n)) {
        void *p = take(n);
        if (p)
            return p;
    }
    if (__interceptor_aligned_alloc)
        return __interceptor_aligned_alloc(align, n);
    return __libc_memalign(align, n);
}

EXPORT void *realloc(void *old, size_t n)
{
    slot *s = mine(old);
    if (!s)
        return __interceptor_realloc ? __interceptor_realloc(old, n) : __libc_realloc(old, n);
    size_t have = (size_t)1 << s->log;
    if (n <= have && n > 0)
        return old;
    void *p = n ? take(n) : NULL;
    if (!p && n)
        p = __interceptor_malloc(n);
    if (!p && n)
        return NULL; /* old stays valid, as realloc promises */
    if (p)
        memcpy(p, old, n < have ? n : have);
    give(s);
    return p;
}

EXPORT void free(void *p)
{
    slot *s = mine(p);
    if (s) {
        give(s);
        return;
    }
    if (__interceptor_free)
        __interceptor_free(p);
    else
        __libc_free(p);
}

/* dlclose: the drivers stay loaded (header comment); any other library is closed as usual */
EXPORT int dlclose(void *handle)
{
    static int (*real_dlclose)(void *);
    struct link_map *lm = NULL;
    void *volatile h = handle; /* declared nonnull, but a NULL must still reach the real dlclose's error */
    if (h && dlinfo(handle, RTLD_DI_LINKMAP, &lm) == 0 && lm && driver_path(lm->l_name))
        return 0;
    if (!real_dlclose)
        real_dlclose = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
    return real_dlclose ? real_dlclose(handle) : -1;
}

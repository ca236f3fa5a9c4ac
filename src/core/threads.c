/* threads.c - the context's thread pool and a deterministic parallel-for.
 * Workers pull chunk indices from an atomic counter; every chunk writes only its own outputs, so the
 * result never depends on which thread ran which chunk or how many threads there are. */
#include "core/internal.h"

#include <pthread.h>
#include <stdlib.h>
#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

typedef struct job {
    kiln_range_fn fn;
    void *user;
    size_t count, grain, chunks;
    atomic_size_t next;
    atomic_size_t done;
    atomic_int *cancel;
} job;

struct kiln_pool {
    pthread_mutex_t mu;
    pthread_cond_t wake, idle;
    pthread_t *threads;
    uint32_t n;          /* worker threads (the caller is worker 0, pool threads are 1..n) */
    job *current;
    uint64_t generation;
    uint32_t busy;
    int quit;
    int nice;            /* > 0: the workers lower their scheduling priority to this nice value */
};

typedef struct worker_arg {
    kiln_pool *pool;
    uint32_t index;
} worker_arg;

static void run_chunks(job *j, uint32_t worker)
{
    for (;;) {
        if (atomic_load(j->cancel)) {
            /* claim everything left so the caller stops waiting */
            size_t c = atomic_fetch_add(&j->next, 1);
            if (c >= j->chunks) return;
            atomic_fetch_add(&j->done, 1);
            continue;
        }
        size_t c = atomic_fetch_add(&j->next, 1);
        if (c >= j->chunks) return;
        size_t b = c * j->grain;
        size_t e = b + j->grain;
        if (e > j->count) e = j->count;
        j->fn(j->user, b, e, worker);
        atomic_fetch_add(&j->done, 1);
    }
}

void kiln__thread_set_nice(int nice)
{
#if defined(__linux__)
    /* Linux keeps a nice value per thread; raising it needs no privilege. Best effort: a failure only
     * leaves the thread at its priority. */
    if (nice > 0) (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice > 19 ? 19 : nice);
#else
    (void)nice;
#endif
}

static void *worker_main(void *p)
{
    worker_arg *wa = p;
    kiln_pool *pool = wa->pool;
    uint32_t index = wa->index;
    free(wa);
    kiln__thread_set_nice(pool->nice);
    uint64_t seen = 0;
    pthread_mutex_lock(&pool->mu);
    for (;;) {
        while (!pool->quit && (pool->current == NULL || pool->generation == seen))
            pthread_cond_wait(&pool->wake, &pool->mu);
        if (pool->quit) break;
        seen = pool->generation;
        job *j = pool->current;
        pool->busy++;
        pthread_mutex_unlock(&pool->mu);
        run_chunks(j, index);
        pthread_mutex_lock(&pool->mu);
        pool->busy--;
        if (pool->busy == 0) pthread_cond_broadcast(&pool->idle);
    }
    pthread_mutex_unlock(&pool->mu);
    return NULL;
}

kiln_pool *kiln__pool_create(uint32_t threads, int nice)
{
    kiln_pool *pool = calloc(1, sizeof *pool);
    if (!pool) return NULL;
    pool->nice = nice;
    pthread_mutex_init(&pool->mu, NULL);
    pthread_cond_init(&pool->wake, NULL);
    pthread_cond_init(&pool->idle, NULL);
    uint32_t extra = threads > 1 ? threads - 1 : 0;
    pool->threads = calloc(extra ? extra : 1, sizeof(pthread_t));
    if (!pool->threads) {
        free(pool);
        return NULL;
    }
    for (uint32_t i = 0; i < extra; i++) {
        worker_arg *wa = malloc(sizeof *wa);
        if (!wa) break;
        wa->pool = pool;
        wa->index = i + 1;
        if (pthread_create(&pool->threads[i], NULL, worker_main, wa) != 0) {
            free(wa);
            break;
        }
        pool->n++;
    }
    return pool;
}

void kiln__pool_destroy(kiln_pool *pool)
{
    if (!pool) return;
    pthread_mutex_lock(&pool->mu);
    pool->quit = 1;
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->mu);
    for (uint32_t i = 0; i < pool->n; i++) pthread_join(pool->threads[i], NULL);
    pthread_cond_destroy(&pool->wake);
    pthread_cond_destroy(&pool->idle);
    pthread_mutex_destroy(&pool->mu);
    free(pool->threads);
    free(pool);
}

kiln_status kiln__parallel_for_progress(kiln_context *ctx, size_t count, size_t grain, kiln_range_fn fn, void *user,
                                        float lo, float hi)
{
    if (count == 0) return KILN_OK;
    if (grain == 0) grain = 1;
    job j;
    j.fn = fn;
    j.user = user;
    j.count = count;
    j.grain = grain;
    j.chunks = (count + grain - 1) / grain;
    atomic_init(&j.next, 0);
    atomic_init(&j.done, 0);
    j.cancel = &ctx->cancel;
    kiln_pool *pool = ctx->pool;
    int report = ctx->params.progress != NULL;
    if (pool && pool->n > 0 && j.chunks > 1) {
        pthread_mutex_lock(&pool->mu);
        pool->current = &j;
        pool->generation++;
        pthread_cond_broadcast(&pool->wake);
        pthread_mutex_unlock(&pool->mu);
    } else {
        pool = NULL;
    }
    /* The caller works too (worker 0), reporting progress between its chunks. */
    for (;;) {
        if (atomic_load(&ctx->cancel)) {
            size_t c = atomic_fetch_add(&j.next, 1);
            if (c >= j.chunks) break;
            atomic_fetch_add(&j.done, 1);
            continue;
        }
        size_t c = atomic_fetch_add(&j.next, 1);
        if (c >= j.chunks) break;
        size_t b = c * grain, e = b + grain;
        if (e > count) e = count;
        fn(user, b, e, 0);
        atomic_fetch_add(&j.done, 1);
        if (report) {
            float f = lo + (hi - lo) * (float)atomic_load(&j.done) / (float)j.chunks;
            if (ctx->params.progress(ctx->params.progress_user, f)) atomic_store(&ctx->cancel, 1);
        }
    }
    if (pool) {
        pthread_mutex_lock(&pool->mu);
        while (pool->busy > 0 || atomic_load(&j.done) < j.chunks) {
            if (pool->busy == 0) break; /* workers that never woke: nothing left for them */
            pthread_cond_wait(&pool->idle, &pool->mu);
        }
        pool->current = NULL;
        pthread_mutex_unlock(&pool->mu);
    }
    if (atomic_load(&ctx->cancel)) return kiln__fail(ctx, KILN_ERR_CANCELLED, "cancelled");
    return KILN_OK;
}

kiln_status kiln__parallel_for(kiln_context *ctx, size_t count, size_t grain, kiln_range_fn fn, void *user)
{
    return kiln__parallel_for_progress(ctx, count, grain, fn, user, 0.0f, 1.0f);
}

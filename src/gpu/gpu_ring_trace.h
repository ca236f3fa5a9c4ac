/* gpu_ring_trace.h - where a pipelined ring's time goes (KILN_RING_TRACE=1: a summary line per ring call on
 * stderr; 2: also a line per job). Used by gpu_encode_bc_ring.inc and gpu_encode_etc_ring.inc (helper split,
 * issue 4). Host phases from CLOCK_MONOTONIC, the device's from the slot's timestamps: the first command of
 * a job's command buffer (top), the kernels' start and end, and the end of its downloads (bottom). */
#ifndef KILN_GPU_RING_TRACE_H
#define KILN_GPU_RING_TRACE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { KRT_NEXT, KRT_PREP, KRT_SUBMIT, KRT_WAIT, KRT_COPY, KRT_FALLBACK, KRT_N };

typedef struct kiln__ring_trace {
    int on;               /* 0, 1 (summary) or 2 (each job too) */
    double t0, t_phase;   /* ring start; the current phase's start */
    double ms[KRT_N];     /* host ms per phase */
    uint64_t jobs, images, in_bytes, blocked; /* blocked: fence waits that found the job unfinished */
    double gpu_busy, gpu_kernel, gpu_gap, gpu_first, gpu_last; /* device ms; gpu_last: bottom of the last job */
    double gpu_bot_prev;  /* device ms of the previous job's bottom (-1: none) */
    double blocks_ms;     /* part of copy-out: the blocks' copy alone (BC ring) */
} kiln__ring_trace;

static inline double kiln__ring_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline void kiln__ring_trace_init(kiln__ring_trace *t)
{
    const char *e = getenv("KILN_RING_TRACE");
    for (int i = 0; i < KRT_N; i++) t->ms[i] = 0.0;
    t->on = e && (e[0] == '1' || e[0] == '2') ? e[0] - '0' : 0;
    t->jobs = t->images = t->in_bytes = t->blocked = 0;
    t->gpu_busy = t->gpu_kernel = t->gpu_gap = t->gpu_first = t->gpu_last = 0.0;
    t->gpu_bot_prev = -1.0;
    t->blocks_ms = 0.0;
    t->t0 = t->t_phase = t->on ? kiln__ring_now_ms() : 0.0;
}

/* Ends the current phase (its time goes to phase p) and starts the next one. */
static inline void kiln__ring_trace_mark(kiln__ring_trace *t, int p)
{
    if (!t->on) return;
    double n = kiln__ring_now_ms();
    t->ms[p] += n - t->t_phase;
    t->t_phase = n;
}

/* A finished job's four device timestamps (ticks masked to the device's valid bits), in ms. */
static inline void kiln__ring_trace_gpu(kiln__ring_trace *t, const uint64_t ts[4], uint64_t mask, double period_ns,
                                        uint64_t job, uint64_t bytes)
{
    if (!t->on) return;
    static const double ns = 1e-6;
    const double top = (double)(ts[0] & mask) * period_ns * ns, k0 = (double)(ts[1] & mask) * period_ns * ns;
    const double k1 = (double)(ts[2] & mask) * period_ns * ns, bot = (double)(ts[3] & mask) * period_ns * ns;
    if (t->gpu_bot_prev < 0.0) t->gpu_first = top;
    else if (top > t->gpu_bot_prev) t->gpu_gap += top - t->gpu_bot_prev;
    t->gpu_busy += bot - top;
    t->gpu_kernel += k1 - k0;
    t->gpu_bot_prev = bot;
    t->gpu_last = bot;
    t->jobs++;
    t->in_bytes += bytes;
    if (t->on == 2)
        fprintf(stderr, "kiln ring job %llu: %.1f KiB, device top %.3f upload %.3f kernels %.3f download %.3f ms\n",
                (unsigned long long)job, (double)bytes / 1024.0, top - t->gpu_first, k0 - top, k1 - k0, bot - k1);
}

static inline void kiln__ring_trace_report(const kiln__ring_trace *t, const char *ring, uint32_t slots)
{
    if (!t->on) return;
    const double wall = kiln__ring_now_ms() - t->t0;
    fprintf(stderr,
            "kiln ring trace (%s, %u slots): %llu jobs, %llu images, %.1f MiB in, wall %.2f ms: next %.2f, prep %.2f, "
            "submit %.2f, wait %.2f (%llu blocked), copy-out %.2f, fallback %.2f; device busy %.2f (kernels %.2f), "
            "idle between jobs %.2f, first top to last bottom %.2f ms; blocks' copy %.2f ms\n",
            ring, slots, (unsigned long long)t->jobs, (unsigned long long)t->images, (double)t->in_bytes / 1048576.0, wall,
            t->ms[KRT_NEXT], t->ms[KRT_PREP], t->ms[KRT_SUBMIT], t->ms[KRT_WAIT], (unsigned long long)t->blocked,
            t->ms[KRT_COPY], t->ms[KRT_FALLBACK], t->gpu_busy, t->gpu_kernel, t->gpu_gap, t->gpu_last - t->gpu_first,
            t->blocks_ms);
}

#endif

/* gpu_flame.h - the Vulkan flame renderer's extra entry points (owner: flamegpu). The main entry point,
 * kiln__flame_iterate_gpu(ctx, flame, setup, hist), is declared in src/flame/flame.h and defined in
 * src/flame/gpu_flame_entry.c (backend resolution: AUTO falls back with KILN_ERR_NO_DEVICE); it calls
 * kiln__flame_iterate_gpu_ex below, defined by src/gpu/gpu_flame.c in Vulkan builds and by
 * src/gpu/stub/gpu_stub.c (KILN_ERR_NO_DEVICE) otherwise.
 *
 * What it does: the chaos game of shaders/flame_iterate.comp (warp-uniform xform choice honouring
 * xaos, ring shuffle between subgroups, flam3's fuse / bad-value / final-xform rules, packed 32-bit
 * integer accumulation with exact carry counters), then shaders/flame_flush.comp converts the
 * accumulator to flam3's float bucket scale; the histogram it returns is the one
 * kiln__flame_iterate_cpu produces (setup->hist_w x hist_h, RGBA, vis * 255 * palette per sample),
 * ready for kiln__flame_tonemap. Kernel time lands in ctx->last_gpu_ms.
 *
 * Status: KILN_ERR_NO_DEVICE (no usable Vulkan device), KILN_ERR_UNSUPPORTED (the genome or size is
 * beyond the GPU path: more than 128 xforms, a xaos row with zero total weight, a histogram larger
 * than the device's buffers; the AUTO backend then renders on the CPU), KILN_ERR_CANCELLED. */
#ifndef KILN_GPU_FLAME_H
#define KILN_GPU_FLAME_H

#include "flame/flame.h"

typedef struct kiln_flame_gpu_opts {
    uint32_t subgroup_size; /* 0: the device's default size (required, with full subgroups, when the
                               device can control it); else a size from kiln__gpu_subgroup_sizes */
    uint32_t workgroups;    /* 0: automatic (2048 on discrete GPUs, 8 on CPU devices) */
    uint32_t max_rounds;    /* iterations per invocation per launch; 0: automatic */
    uint32_t fuse;          /* rounds before plotting starts; 0: 20 (flam3 uses 15 per 10k samples) */
    uint32_t min_rounds;    /* fewest plotted rounds per invocation: small renders run fewer workgroups;
                               0: 1024 (flam3 plots 10,000 samples per fuse) */
    int per_lane_choice;    /* comparison mode: every invocation draws its own xform (divergent) */
    int no_shuffle;         /* comparison mode: points stay in their subgroup */
} kiln_flame_gpu_opts;

typedef struct kiln_flame_gpu_stats {
    double kernel_ms;       /* GPU time of the chaos-game dispatches (timestamps) */
    double flush_ms;        /* GPU time of the accumulator flush */
    uint32_t launches;
    uint32_t subgroup_size; /* the size the pipeline required (0: driver's choice) */
    uint32_t local_size, workgroups;
    uint64_t samples;       /* counted samples (flam3's definition: after fuse, retries excluded) */
    uint64_t bad_values;
} kiln_flame_gpu_stats;

/* kiln__flame_iterate_gpu with options (NULL = defaults) and statistics (may be NULL). */
kiln_status kiln__flame_iterate_gpu_ex(kiln_context *ctx, const kiln_flame *flame, const kiln_flame_setup *setup,
                                       const kiln_flame_gpu_opts *opts, kiln_flame_hist *hist,
                                       kiln_flame_gpu_stats *stats);

#endif

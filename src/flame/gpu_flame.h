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
    /* Opt-in modes beyond the notes' design (owner: flameideas; docs/FLAME.md "Beyond the notes' design").
     * At most one of hot_tile, sat_level, chroma_2x2 may be set (KILN_ERR_UNSUPPORTED otherwise). */
    int hot_tile;           /* hot-tile shared-memory histogram: after launch 0 the host picks the
                               tile_w x tile_h window with the most mass; later launches accumulate
                               it per workgroup in shared memory (exact: same integer sums) */
    uint32_t tile_w, tile_h;/* hot tile size in buckets; 0: 32 x 32 */
    double sat_level;       /* > 0: saturated buckets: a bucket whose log density
                               k1 / 255 * ln(1 + A * k2) (the tone map's pre-gamma alpha) has reached
                               sat_level stops taking atomics (checked through its A wrap counter) */
    uint32_t sat_thin_log2; /* with sat_level: 0 skip such samples; 1..8 keep one in 2^k at 2^k times
                               the weight (unbiased thinning) */
    int chroma_2x2;         /* subsampled chroma: Y = R + G + B and A per bucket, R and B per 2x2 block */
    /* GPU post-processing (owner: flamepost; src/gpu/gpu_flame_post.c): when post_out is set, the
     * histogram stays on the device and density estimation, spatial filter and tone map run there
     * (kiln__flame_post_gpu_dev); *post_out receives the image, `hist` is returned empty. */
    kiln_image *post_out;
    struct kiln_flame_post_stats *post_stats; /* may be NULL */
} kiln_flame_gpu_opts;

typedef struct kiln_flame_gpu_stats {
    double kernel_ms;       /* GPU time of the chaos-game dispatches (timestamps) */
    double flush_ms;        /* GPU time of the accumulator flush */
    uint32_t launches;
    uint32_t subgroup_size; /* the size the pipeline required (0: driver's choice) */
    uint32_t local_size, workgroups;
    uint64_t samples;       /* counted samples (flam3's definition: after fuse, retries excluded) */
    uint64_t bad_values;
    int32_t tile_x, tile_y; /* hot_tile: the tile's origin in buckets (-1: no tile was used) */
    uint64_t accum_bytes;   /* device bytes of the integer accumulator (packed words + carry counters) */
} kiln_flame_gpu_stats;

/* kiln__flame_iterate_gpu with options (NULL = defaults) and statistics (may be NULL). */
kiln_status kiln__flame_iterate_gpu_ex(kiln_context *ctx, const kiln_flame *flame, const kiln_flame_setup *setup,
                                       const kiln_flame_gpu_opts *opts, kiln_flame_hist *hist,
                                       kiln_flame_gpu_stats *stats);

/* ---------------------------------------------------------------- GPU post-processing (owner: flamepost)
 * Density estimation, spatial filter and tone map on the device (src/gpu/gpu_flame_post.c, shaders
 * flame_de_prep.comp, flame_de_gather.comp, flame_tonemap.comp): the same image kiln__flame_tonemap
 * computes (RGBA U8, channels 3, alpha 255), from float arithmetic instead of double (at most 1 apart
 * per channel, nearly every pixel equal: tests/unit/test_gpu_flame_post.c). DE is a gather: every
 * bucket sums, in a fixed order, the sources whose kernel reaches it, so the result is deterministic.
 * Status: KILN_ERR_NO_DEVICE without Vulkan, KILN_ERR_UNSUPPORTED when a buffer exceeds the device's
 * storage buffer range. GPU time in ctx->last_gpu_ms (the _dev variant leaves it to its caller). */
typedef struct kiln_flame_post_stats {
    int split;              /* in: submit and time every pass separately (bench); else one submission */
    int no_shared;          /* in: the gather reads its sources from the buffer, not a shared tile (bench) */
    double prep_ms, de_ms, tonemap_ms; /* per pass (split only; de_ms 0 without DE) */
    double total_ms;        /* GPU time of the passes (timestamps) */
    uint32_t de_reach;      /* gather window reach R in buckets (0: estimator_radius 0) */
} kiln_flame_post_stats;

/* Post-processes a host histogram (uploads it first; for tests and the bench). */
kiln_status kiln__flame_post_gpu(kiln_context *ctx, const kiln_flame *flame, const kiln_flame_setup *setup,
                                 const kiln_flame_hist *hist, kiln_image *out, kiln_flame_post_stats *stats);

/* Post-processes the float histogram already in device buffer *hist_dev (setup->hist_w x hist_h vec4,
 * written by earlier submissions on the context's device, e.g. flame_flush.comp). Vulkan builds only. */
struct kiln_vk_buffer;
kiln_status kiln__flame_post_gpu_dev(kiln_context *ctx, const kiln_flame *flame, const kiln_flame_setup *setup,
                                     const struct kiln_vk_buffer *hist_dev, kiln_image *out,
                                     kiln_flame_post_stats *stats);

/* The whole render on the GPU (chaos game + post-processing, no histogram download) with the backend
 * rules of kiln__flame_iterate_gpu (src/flame/gpu_flame_post_entry.c): KILN_ERR_NO_DEVICE under AUTO
 * when there is no device or the genome is beyond the GPU path, so the caller falls back to the CPU. */
kiln_status kiln__flame_render_gpu(kiln_context *ctx, const kiln_flame *flame, const kiln_flame_setup *setup,
                                   kiln_image *out);

#endif

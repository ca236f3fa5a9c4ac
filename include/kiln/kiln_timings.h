/* kiln_timings.h - where a context's fixed GPU costs go, and the on-disk Vulkan pipeline cache.
 * (A separate header so that kiln.h, included by every file of kiln, stays unchanged; it may be folded
 * into kiln.h.)
 *
 * The pipeline cache: when a context creates its Vulkan device it loads the driver's pipeline cache
 * from a file, and when the device is destroyed (kiln_context_free) it writes the cache back if it grew,
 * atomically (a temporary file renamed into place), so the next process skips most shader compilation.
 * The file is <dir>/pipelines-VVVV-DDDD-<driver version>-<pipelineCacheUUID>.bin with <dir>:
 *   $KILN_PIPELINE_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else $HOME/.cache/kiln.
 * KILN_PIPELINE_CACHE=0 in the environment turns it off (nothing is read or written). A file whose
 * kiln header, checksum or Vulkan pipeline cache header (VkPipelineCacheHeaderVersionOne: version,
 * vendor, device, pipelineCacheUUID) does not match the device is ignored and later replaced; it never
 * changes the encoded bytes, only how long pipeline creation takes. */
#ifndef KILN_TIMINGS_H
#define KILN_TIMINGS_H

#include "kiln/kiln.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kiln_pipeline_cache_state {
    KILN_PIPELINE_CACHE_OFF = 0,      /* KILN_PIPELINE_CACHE=0, no cache directory, or no device yet */
    KILN_PIPELINE_CACHE_NEW = 1,      /* no file yet: the cache starts empty (written at kiln_context_free) */
    KILN_PIPELINE_CACHE_LOADED = 2,   /* the file was valid and handed to the driver */
    KILN_PIPELINE_CACHE_REJECTED = 3  /* the file was corrupt or from another device / driver: ignored */
} kiln_pipeline_cache_state;

typedef struct kiln_gpu_timings {
    double instance_ms;      /* Vulkan instance creation and device enumeration */
    double device_ms;        /* vkCreateDevice, command pool, queries, pipeline cache load */
    double pipeline_ms;      /* compute pipeline creation, summed over the pipelines created */
    uint32_t pipelines;      /* pipelines created so far */
    double alloc_ms;         /* buffer creation, memory allocation and mapping, summed */
    uint32_t allocs;         /* buffers created */
    double cache_save_ms;    /* the last pipeline cache write (kiln_context_save_pipeline_cache) */
    kiln_pipeline_cache_state cache_state;
    uint64_t cache_bytes;    /* bytes of pipeline cache data loaded from the file */
    char cache_path[1024];   /* the cache file ("" when off) */
    char cache_note[160];    /* why a file was rejected or could not be written ("" when fine) */
    /* the device start's steps (0 when not run): instance_ms = instance_query_ms + instance_create_ms +
     * enumerate_ms + describe_ms (loader queries before vkCreateInstance, vkCreateInstance: the loader loads
     * the drivers, vkEnumeratePhysicalDevices, each device's properties); device_ms = device_query_ms +
     * device_create_ms (vkCreateDevice) + device_rest_ms (command pool, pipeline cache file, query pool) */
    double instance_query_ms, instance_create_ms, enumerate_ms, describe_ms;
    double device_query_ms, device_create_ms, device_rest_ms;
} kiln_gpu_timings;

/* Fills *out with the context's GPU phase times so far (zeros and KILN_PIPELINE_CACHE_OFF when the
 * context has no device). Never creates the device. */
KILN_API kiln_status kiln_context_gpu_timings(kiln_context *ctx, kiln_gpu_timings *out);

/* Writes the device's pipeline cache to its file now if it holds data the file does not (else does
 * nothing); kiln_context_free does the same. KILN_OK also when the cache is off or there is no device. */
KILN_API kiln_status kiln_context_save_pipeline_cache(kiln_context *ctx);

/* ---- `auto` for a whole job: does the CPU finish before a GPU could? ----
 * A Vulkan device costs a fixed start (instance, device, pipelines: 150-200 ms with NVIDIA's driver on
 * the H100, docs/PERFORMANCE.md) before its first block, and its transfers cost about as much per texel as
 * the CPU's fastest encoders on 16 threads. kiln's CLI (`--backend auto`, the default, and `both`) asks
 * kiln_auto_choose before it starts the device; `--backend vulkan` always uses the GPU.
 *
 * kiln_cpu_encode_estimate_ms: the CPU encoder's expected time for `texels` texels of one format at one
 * quality on `threads` threads (0 = one per online CPU), from rates measured on 16 threads and scaled
 * linearly; negative when kiln has no rate for the format. kiln_gpu_start_estimate_ms: the device start
 * assumed, $KILN_GPU_START_MS when set (a number of ms; 0: assume an instant start, so `auto` always
 * tries the GPU as before), else the measured default. */
KILN_API double kiln_cpu_encode_estimate_ms(kiln_format format, kiln_quality quality, double texels, uint32_t threads);
KILN_API double kiln_gpu_start_estimate_ms(void);

typedef struct kiln_auto_estimate {
    double cpu_ms;       /* every format on the CPU; negative when a format has no rate (then cpu = 0) */
    double gpu_start_ms; /* kiln_gpu_start_estimate_ms() */
    double hidden_ms;    /* the part of it overlap_ms hides */
    double gpu_ms;       /* the device start not hidden by overlap_ms, the teardown after the last write,
                            and every format's texels through the device (transfers) */
    int cpu;             /* 1: cpu_ms <= gpu_ms (and gpu_start_ms > 0): the CPU is expected to finish first */
} kiln_auto_estimate;

/* 1 when a job of `texels` texels (all images, all mip levels) in each of formats[0 .. nformats-1] at
 * `quality` is expected to end sooner on the CPU than on a GPU that has to start first; overlap_ms: work
 * both paths do anyway while the device would start (the CLI: its estimate of reading the inputs), which
 * hides that much of the start. *out (may be NULL) gets the numbers. The rule compares
 *   cpu_ms  <=  max(0, device start - overlap_ms) + teardown + texels x formats x transfer cost. */
KILN_API int kiln_auto_choose(const kiln_format *formats, uint32_t nformats, kiln_quality quality, double texels,
                              uint32_t threads, double overlap_ms, kiln_auto_estimate *out);

#ifdef __cplusplus
}
#endif

#endif

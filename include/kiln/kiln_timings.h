/* kiln_timings.h - where a context's fixed GPU costs go, and the on-disk Vulkan pipeline cache.
 * (A separate header so that kiln.h, included by every file of kiln, stays unchanged; it may be folded
 * into kiln.h.)
 *
 * The pipeline cache: one small file per compute pipeline, read when a context creates that pipeline
 * (only the job's pipelines are read, not every pipeline ever made) and written when it was not there,
 * atomically (a temporary file renamed into place), so the next process skips most shader compilation:
 * <dir>/pipelines/VVVV-DDDD-<driver version>-<pipelineCacheUUID>-<key>.bin (key: a hash of the shader
 * and its specialisation) with <dir>:
 *   $KILN_PIPELINE_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else $HOME/.cache/kiln.
 * The directory is kept under $KILN_PIPELINE_CACHE_MAX_MB (default 64) by removing the least recently
 * used files after a write (and the single 16 MB-sized files earlier versions wrote, <dir>/pipelines-*.bin).
 * KILN_PIPELINE_CACHE=0 in the environment turns it off (nothing is read or written). A file whose
 * kiln header, key, checksum or Vulkan pipeline cache header (VkPipelineCacheHeaderVersionOne: version,
 * vendor, device, pipelineCacheUUID) does not match is ignored and replaced; a directory that cannot be
 * written only costs compile time. It never changes the encoded bytes, only how long pipeline creation
 * takes. */
#ifndef KILN_TIMINGS_H
#define KILN_TIMINGS_H

#include "kiln/kiln.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kiln_pipeline_cache_state {
    KILN_PIPELINE_CACHE_OFF = 0,      /* KILN_PIPELINE_CACHE=0, no cache directory, or no device yet */
    KILN_PIPELINE_CACHE_NEW = 1,      /* on, no pipeline's file read (yet): files are written as pipelines are made */
    KILN_PIPELINE_CACHE_LOADED = 2,   /* pipeline files were valid and handed to the driver (cache_files_loaded) */
    KILN_PIPELINE_CACHE_REJECTED = 3  /* a file was corrupt or from another device / driver: ignored, replaced */
} kiln_pipeline_cache_state;

typedef struct kiln_gpu_timings {
    double instance_ms;      /* Vulkan instance creation and device enumeration */
    double device_ms;        /* vkCreateDevice, command pool, queries, pipeline cache load */
    double pipeline_ms;      /* compute pipeline creation, summed over the pipelines created */
    uint32_t pipelines;      /* pipelines created so far */
    double alloc_ms;         /* buffer creation, memory allocation and mapping, summed */
    uint32_t allocs;         /* buffers created */
    double cache_save_ms;    /* pipeline files written (at pipeline creation), summed */
    kiln_pipeline_cache_state cache_state;
    uint64_t cache_bytes;    /* bytes of pipeline cache data loaded from the pipelines' files */
    char cache_path[1024];   /* the cache's pipelines directory ("" when off) */
    char cache_note[160];    /* why a file was rejected or could not be written ("" when fine) */
    /* the device start's steps (0 when not run): instance_ms = instance_query_ms + instance_create_ms +
     * enumerate_ms + describe_ms (loader queries before vkCreateInstance, vkCreateInstance: the loader loads
     * the drivers, vkEnumeratePhysicalDevices, each device's properties); device_ms = device_query_ms +
     * device_create_ms (vkCreateDevice) + device_rest_ms (command pool, pipeline cache file, query pool) */
    double instance_query_ms, instance_create_ms, enumerate_ms, describe_ms;
    double device_query_ms, device_create_ms, device_rest_ms;
    uint32_t cache_files_loaded;  /* pipelines whose file was read and handed to the driver */
    uint32_t cache_files_written; /* pipeline files written (missing, rejected, or the driver compiled anyway) */
} kiln_gpu_timings;

/* Fills *out with the context's GPU phase times so far (zeros and KILN_PIPELINE_CACHE_OFF when the
 * context has no device). Never creates the device. */
KILN_API kiln_status kiln_context_gpu_timings(kiln_context *ctx, kiln_gpu_timings *out);

/* Pipeline files are written when the pipelines are created, so this only records the device start for
 * `auto` (<dir>/device-start). KILN_OK also when the cache is off or there is no device. */
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

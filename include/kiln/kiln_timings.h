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
} kiln_gpu_timings;

/* Fills *out with the context's GPU phase times so far (zeros and KILN_PIPELINE_CACHE_OFF when the
 * context has no device). Never creates the device. */
KILN_API kiln_status kiln_context_gpu_timings(kiln_context *ctx, kiln_gpu_timings *out);

/* Writes the device's pipeline cache to its file now if it holds data the file does not (else does
 * nothing); kiln_context_free does the same. KILN_OK also when the cache is off or there is no device. */
KILN_API kiln_status kiln_context_save_pipeline_cache(kiln_context *ctx);

#ifdef __cplusplus
}
#endif

#endif

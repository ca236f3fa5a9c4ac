/* vk.h - kiln's small internal Vulkan compute runtime. Only files in src/gpu include it (it is the
 * only header of kiln that pulls in <vulkan/vulkan.h>).
 *
 * The pieces, in the order a kernel uses them:
 *   kiln__gpu_get(ctx, &gpu)             the context's device (created once; see gpu.h)
 *   kiln_vk_pipeline_get(...)            a compute pipeline from an embedded SPIR-V blob (shaders/NAME.comp)
 *                                        with push constants, N bindings (storage buffers by default) and
 *                                        specialisation constants; cached per device
 *   kiln_vk_buffer_create / kiln_vk_io   buffers: device-local storage, host upload/download staging, or
 *                                        "io" buffers that are mapped directly when the device memory is
 *                                        host-visible (UMA, lavapipe) and staged otherwise
 *   kiln_vk_cmd_begin ... _submit        one-shot command buffer: uploads, timestamps, dispatches
 *                                        (descriptor sets come from a per-command pool), barriers,
 *                                        downloads; submit waits and returns the kernel time in ms
 *
 * Conventions for shaders: specialisation constant 0 is the workgroup size x (local_size_x_id = 0),
 * user constants start at id 1. A shader with a fixed local_size_x ignores constant 0, and the
 * pipeline description's local_size must then equal it (dispatch sizes are computed from it). Dispatches over a linear range use kiln_vk_cmd_dispatch_linear, which
 * splits the group count over x and y: the shader's linear index is
 *   (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x
 * and invocations past the end must return.
 *
 * Every VkResult failure becomes KILN_ERR_GPU with the call's name and the result's name. */
#ifndef KILN_VK_H
#define KILN_VK_H

#include <vulkan/vulkan.h>

#include "gpu/gpu.h"

#define KILN_VK_MAX_BINDINGS 8
#define KILN_VK_MAX_SPEC 8
#define KILN_VK_MAX_PIPELINES 256
#define KILN_VK_MAX_DEVICES 16

/* Records "NAME failed: VK_ERROR_..." and returns KILN_ERR_GPU; KILN_OK for VK_SUCCESS. */
kiln_status kiln_vk_check(kiln_context *ctx, VkResult r, const char *name);
const char *kiln_vk_result_name(VkResult r);
#define KILN_VK_TRY(ctx, fn, args) KILN_TRY(kiln_vk_check((ctx), fn args, #fn))

/* ---- device ---- */

typedef struct kiln_vk_physical {
    VkPhysicalDevice handle;
    kiln_gpu_info info;
    VkPhysicalDeviceType type;
    uint32_t compute_family;
    uint32_t enum_index; /* position in vkEnumeratePhysicalDevices (tie-break of the sort) */
} kiln_vk_physical;

typedef struct kiln_vk_pipeline {
    char shader[64];
    uint32_t spec[KILN_VK_MAX_SPEC];
    uint32_t nspec;
    uint32_t local_size;
    uint32_t nbindings;
    VkDescriptorType types[KILN_VK_MAX_BINDINGS];
    uint32_t push_size;
    uint32_t subgroup_size;
    int full_subgroups;
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    VkPipeline pipeline;
} kiln_vk_pipeline;

/* steps of the device start (vk_device.c), reported by kiln_context_gpu_timings */
enum {
    KILN_VK_STEP_QUERY,           /* loader queries before vkCreateInstance */
    KILN_VK_STEP_CREATE_INSTANCE, /* vkCreateInstance (the loader loads the drivers) */
    KILN_VK_STEP_ENUMERATE,       /* vkEnumeratePhysicalDevices */
    KILN_VK_STEP_DESCRIBE,        /* properties, features and queues of each device */
    KILN_VK_STEP_DEVICE_QUERY,    /* the chosen device's features before vkCreateDevice */
    KILN_VK_STEP_CREATE_DEVICE,   /* vkCreateDevice */
    KILN_VK_STEPS
};

struct kiln_gpu {
    /* instance level */
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    int validation;              /* VK_LAYER_KHRONOS_validation is on */
    atomic_uint validation_msgs; /* warnings + errors reported by the debug messenger */
    kiln_vk_physical phys[KILN_VK_MAX_DEVICES];
    uint32_t nphys;              /* usable devices, sorted fastest first */
    char unusable[512];          /* why devices were skipped (for messages) */
    /* device level (device == VK_NULL_HANDLE until created) */
    int chosen;                  /* index into phys */
    VkPhysicalDevice physical;
    VkDevice device;
    VkQueue queue;
    uint32_t queue_family;
    VkCommandPool cmd_pool;
    VkPipelineCache cache;
    VkQueryPool timestamps;      /* 2 queries; VK_NULL_HANDLE when the queue cannot time */
    VkPhysicalDeviceProperties props;
    VkPhysicalDeviceMemoryProperties mem;
    float timestamp_period;      /* ns per tick */
    uint32_t timestamp_bits;     /* valid bits of the queue's timestamps */
    int discrete;
    /* subgroup size control (VK_EXT_subgroup_size_control or Vulkan 1.3), when enabled */
    int size_control, full_subgroups;
    uint32_t min_subgroup, max_subgroup;
    /* VK_KHR_pipeline_executable_properties enabled (KILN_VK_PIPELINE_STATS=1 when the device was created
     * and the device offers it): pipelines are created with VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR
     * and their statistics printed to stderr (kiln_vk_pipeline_stats) */
    int exec_stats;
    /* the 16-bit quantisers' decision points (kiln__gpu_mip16_thresholds; [0] linear, [1] sRGB colour), built
     * on first use by kiln__gpu_mip16_cached_thresholds, with their round-trip verdicts (1 ok, 0 not) */
    float *mip16_thr[2];
    int mip16_roundtrip[2];
    kiln_vk_pipeline pipelines[KILN_VK_MAX_PIPELINES];
    uint32_t npipelines;
    /* scratch reused by the decoders (grown on demand) and their table buffer (gpu_abi.h) */
    struct kiln_vk_io *dec_in, *dec_out;
    struct kiln_vk_io *dec_tables;
    /* the pipelined encoder's slot buffers and queries (gpu_encode_bc_ring.inc), kept between calls */
    struct kiln_vk_enc_cache *enc_cache;
    /* device-resident mip + encode (gpu_mip_encode.c): runs, levels, fallback blocks; kernel ms of the
     * last run's mip pass and encode passes (kiln__gpu_mip_encode_stats_get) */
    uint64_t mip_enc_count[3];
    double mip_enc_ms[2];
    /* alpha coverage scaled on the device (gpu_mip_alpha.c): runs, levels, levels decided by histograms
     * (kiln__gpu_mip_alpha_stats_get) */
    uint64_t mip_alpha_count[3];
    /* phase times (kiln_context_gpu_timings, include/kiln/kiln_timings.h) and the on-disk pipeline cache
     * (vk_pcache.c): its directory ("" = off) and the device's file name prefix, state, bytes loaded, bytes
     * written, pipeline files loaded and written */
    double t_instance_ms, t_device_ms, t_pipeline_ms, t_alloc_ms, t_cache_save_ms;
    double t_start_origin, t_start_steps[KILN_VK_STEPS]; /* the device start's steps (kiln_gpu_timings) */
    uint32_t t_pipelines, t_allocs;
    char pcache_path[1024];
    char pcache_prefix[80];
    char pcache_note[160];
    int pcache_state;
    uint64_t pcache_loaded, pcache_file_bytes;
    uint32_t pcache_files_loaded, pcache_files_written;
};

/* The on-disk pipeline cache, one file per pipeline (vk_pcache.c): kiln__vk_pcache_load is called by
 * create_device (sets the directory and state; reads nothing, *data = NULL); kiln_vk_pipeline_get computes
 * the pipeline's key, opens a VkPipelineCache of its own from the pipeline's file (VK_NULL_HANDLE when the
 * cache is off: use gpu->cache), creates the pipeline with it and closes it (writing the file when it was
 * missing, rejected or the driver's data grew; `created` 0: write nothing). kiln__vk_pcache_save: nothing
 * left to write (kept for the device's destruction). */
void kiln__vk_pcache_load(kiln_gpu *gpu, void **data, size_t *size);
uint64_t kiln__vk_pcache_key(const kiln_gpu *gpu, const kiln_vk_pipeline *p, const void *code, size_t code_size,
                             uint32_t flags);
VkPipelineCache kiln__vk_pcache_open(kiln_gpu *gpu, uint64_t key, size_t *loaded);
void kiln__vk_pcache_close(kiln_gpu *gpu, VkPipelineCache c, uint64_t key, size_t loaded, int created);
kiln_status kiln__vk_pcache_save(kiln_context *ctx, kiln_gpu *gpu);
double kiln__vk_now_ms(void);

/* Frees gpu->enc_cache (idle by then); called by the device's destruction. */
void kiln__gpu_enc_cache_free(kiln_gpu *gpu);

/* Warnings and errors counted by the validation messenger so far (0 when validation is off). */
uint32_t kiln_vk_validation_count(const kiln_gpu *gpu);

/* 1 when pipelines may require subgroup size `size` (a power of two in the device's range). */
int kiln_vk_subgroup_size_ok(const kiln_gpu *gpu, uint32_t size);

/* ---- pipelines ---- */

typedef struct kiln_vk_pipeline_desc {
    const char *shader;        /* blob name: the shaders/NAME.comp file name without .comp */
    uint32_t local_size;       /* workgroup size x (specialisation constant 0); 0 = 64 */
    const uint32_t *spec;      /* specialisation constants 1..nspec */
    uint32_t nspec;
    uint32_t nbindings;        /* bindings 0..n-1 of set 0 */
    const VkDescriptorType *types; /* per binding; NULL = all VK_DESCRIPTOR_TYPE_STORAGE_BUFFER */
    uint32_t push_size;        /* bytes of push constants (multiple of 4, <= 128) */
    uint32_t subgroup_size;    /* 0 = the driver's choice, else required (see kiln_vk_subgroup_size_ok) */
    int full_subgroups;        /* require full subgroups (needs computeFullSubgroups) */
} kiln_vk_pipeline_desc;

/* Finds or creates the pipeline; the pointer stays valid as long as the device. */
kiln_status kiln_vk_pipeline_get(kiln_context *ctx, kiln_gpu *gpu, const kiln_vk_pipeline_desc *desc,
                                 const kiln_vk_pipeline **out);

/* The driver's statistics of a pipeline's executables (VK_KHR_pipeline_executable_properties: register
 * count, spills, shared memory, ... whatever it reports) as text, one "shader: executable: name = value"
 * line each, into buf (truncated to size; may be NULL with size 0); *nstats = the statistics found.
 * KILN_ERR_UNSUPPORTED when gpu->exec_stats is 0 (KILN_VK_PIPELINE_STATS=1 was not set when the device
 * was created, or the device lacks the extension). With gpu->exec_stats, kiln_vk_pipeline_get prints
 * them to stderr when it creates a pipeline. */
kiln_status kiln_vk_pipeline_stats(kiln_context *ctx, kiln_gpu *gpu, const kiln_vk_pipeline *pipe, char *buf, size_t size,
                                   uint32_t *nstats);

/* ---- buffers ---- */

typedef enum kiln_vk_mem {
    KILN_VK_MEM_DEVICE = 0, /* device-local storage buffer */
    KILN_VK_MEM_UPLOAD,     /* host-visible, written by the CPU, read by transfers or shaders */
    KILN_VK_MEM_DOWNLOAD,   /* host-visible (cached when offered), written by transfers or shaders */
    KILN_VK_MEM_DIRECT_IN,  /* device-local and host-visible: shaders read what the CPU wrote */
    KILN_VK_MEM_DIRECT_OUT  /* device-local, host-visible and cached: the CPU reads what shaders wrote */
} kiln_vk_mem;

typedef struct kiln_vk_buffer {
    VkBuffer buffer;
    VkDeviceMemory memory;
    VkDeviceSize size;
    void *mapped;            /* host pointer for host-visible memory, else NULL */
    VkMemoryPropertyFlags flags;
} kiln_vk_buffer;

/* Creates a buffer usable as storage buffer and transfer source/destination. DIRECT kinds fail with
 * KILN_ERR_UNSUPPORTED (no message) when the device has no such memory. */
kiln_status kiln_vk_buffer_create(kiln_context *ctx, kiln_gpu *gpu, VkDeviceSize size, kiln_vk_mem kind,
                                  kiln_vk_buffer *out);
void kiln_vk_buffer_destroy(kiln_gpu *gpu, kiln_vk_buffer *buf); /* accepts zeroed buffers */
/* Makes host writes visible to the device / device writes visible to the host (non-coherent memory). */
kiln_status kiln_vk_buffer_flush(kiln_context *ctx, kiln_gpu *gpu, kiln_vk_buffer *buf);
kiln_status kiln_vk_buffer_invalidate(kiln_context *ctx, kiln_gpu *gpu, kiln_vk_buffer *buf);

/* A storage buffer the host fills (input) or reads (output): mapped directly when the device offers
 * suitable memory, else a device-local buffer plus a staging buffer and copies recorded by
 * kiln_vk_cmd_upload / kiln_vk_cmd_download. */
typedef struct kiln_vk_io {
    kiln_vk_buffer dev;     /* what shaders bind */
    kiln_vk_buffer staging; /* zeroed when direct */
    int output;
    int direct;
} kiln_vk_io;

kiln_status kiln_vk_io_create(kiln_context *ctx, kiln_gpu *gpu, VkDeviceSize size, int output, kiln_vk_io *io);
void kiln_vk_io_destroy(kiln_gpu *gpu, kiln_vk_io *io);
/* Keeps *io at least `size` bytes (recreates it when smaller). */
kiln_status kiln_vk_io_ensure(kiln_context *ctx, kiln_gpu *gpu, VkDeviceSize size, int output, kiln_vk_io *io);
void *kiln_vk_io_map(kiln_vk_io *io);

/* ---- images (texture sampling, blit chains) ---- */

/* Allocates memory for `image` (a device-local type when one fits, else any type that does), binds it
 * and returns it in *memory (free with vkFreeMemory). `what` names the image in the failure message. */
kiln_status kiln_vk_image_memory(kiln_context *ctx, kiln_gpu *gpu, VkImage image, const char *what,
                                 VkDeviceMemory *memory);
/* One layout transition of levels [level, level + nlevels) of layers [0, layers) of a colour image. */
void kiln_vk_image_barrier(VkCommandBuffer cb, VkImage image, uint32_t level, uint32_t nlevels, uint32_t layers,
                           VkImageLayout from, VkImageLayout to, VkAccessFlags src, VkAccessFlags dst,
                           VkPipelineStageFlags src_stage, VkPipelineStageFlags dst_stage);

/* ---- commands ---- */

typedef struct kiln_vk_binding {
    VkBuffer buffer;         /* storage buffers */
    VkDeviceSize offset, range; /* range 0 = VK_WHOLE_SIZE */
    VkImageView view;        /* combined image samplers / storage images */
    VkSampler sampler;
    VkImageLayout layout;
} kiln_vk_binding;

typedef struct kiln_vk_cmd {
    kiln_gpu *gpu;
    VkCommandBuffer cb;
    VkDescriptorPool pool;
    VkFence fence;
    uint32_t max_sets, used_sets;
    int timed;               /* timestamps were written */
    double host_t0;
} kiln_vk_cmd;

/* Starts recording; max_dispatches bounds the descriptor sets the command may allocate. */
kiln_status kiln_vk_cmd_begin(kiln_context *ctx, kiln_gpu *gpu, uint32_t max_dispatches, kiln_vk_cmd *cmd);
/* Records the start (end = 0) or end (end = 1) timestamp of the timed section. */
void kiln_vk_cmd_timestamp(kiln_vk_cmd *cmd, int end);
/* Binds the pipeline, a fresh descriptor set for `bindings` (pipeline->nbindings entries) and the push
 * constants, then dispatches gx * gy * gz workgroups. */
kiln_status kiln_vk_cmd_dispatch(kiln_context *ctx, kiln_vk_cmd *cmd, const kiln_vk_pipeline *p,
                                 const kiln_vk_binding *bindings, const void *push, uint32_t gx, uint32_t gy,
                                 uint32_t gz);
/* Dispatches ceil(items / local_size) workgroups over x and y (see the linear index above). */
kiln_status kiln_vk_cmd_dispatch_linear(kiln_context *ctx, kiln_vk_cmd *cmd, const kiln_vk_pipeline *p,
                                        const kiln_vk_binding *bindings, const void *push, uint64_t items);
/* Compute writes -> compute reads (and transfers) of later commands. */
void kiln_vk_cmd_barrier(kiln_vk_cmd *cmd);
/* Transfer writes (fills, copies) -> compute shader reads and writes. */
void kiln_vk_cmd_transfer_to_compute(VkCommandBuffer cb);
/* Copies staging -> device buffer (when staged) and makes the data visible to shaders. */
void kiln_vk_cmd_upload(kiln_vk_cmd *cmd, kiln_vk_io *io, VkDeviceSize size);
/* Makes shader writes visible to the host, copying device -> staging when staged. */
void kiln_vk_cmd_download(kiln_vk_cmd *cmd, kiln_vk_io *io, VkDeviceSize size);
/* Ends, submits, waits (polling kiln_cancel; the GPU work is always waited for) and reads the
 * timestamps: *gpu_ms is the timed section in ms (host wall time of the submission when the queue has
 * no timestamps). Returns KILN_ERR_CANCELLED when cancelled meanwhile. */
kiln_status kiln_vk_cmd_submit(kiln_context *ctx, kiln_vk_cmd *cmd, double *gpu_ms);
void kiln_vk_cmd_free(kiln_vk_cmd *cmd); /* accepts zeroed commands; after submit or on failure */

/* Workgroup count for items: ceil(items / local). */
static inline uint64_t kiln_vk_groups(uint64_t items, uint32_t local) { return (items + local - 1) / local; }

#endif

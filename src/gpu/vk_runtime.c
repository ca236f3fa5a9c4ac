/* vk_runtime.c - buffers, pipelines and one-shot command submission (see vk.h). */
#include "gpu/vk.h"
#include "gpu/shaders.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- memory ---- */

static int find_memory_type(const kiln_gpu *gpu, uint32_t type_bits, VkMemoryPropertyFlags required,
                            VkMemoryPropertyFlags preferred)
{
    for (int pass = 0; pass < 2; pass++) {
        VkMemoryPropertyFlags want = pass == 0 ? required | preferred : required;
        for (uint32_t i = 0; i < gpu->mem.memoryTypeCount; i++)
            if ((type_bits & (1u << i)) && (gpu->mem.memoryTypes[i].propertyFlags & want) == want) return (int)i;
    }
    return -1;
}

static kiln_status buffer_create(kiln_context *ctx, kiln_gpu *gpu, VkDeviceSize size, kiln_vk_mem kind,
                                 kiln_vk_buffer *out);

/* timed for kiln_context_gpu_timings */
kiln_status kiln_vk_buffer_create(kiln_context *ctx, kiln_gpu *gpu, VkDeviceSize size, kiln_vk_mem kind,
                                  kiln_vk_buffer *out)
{
    const double t0 = kiln__vk_now_ms();
    kiln_status st = buffer_create(ctx, gpu, size, kind, out);
    gpu->t_alloc_ms += kiln__vk_now_ms() - t0;
    gpu->t_allocs++;
    return st;
}

static kiln_status buffer_create(kiln_context *ctx, kiln_gpu *gpu, VkDeviceSize size, kiln_vk_mem kind,
                                 kiln_vk_buffer *out)
{
    memset(out, 0, sizeof *out);
    if (size == 0) size = 4;
    VkMemoryPropertyFlags required = 0, preferred = 0;
    switch (kind) {
    case KILN_VK_MEM_DEVICE: preferred = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT; break;
    case KILN_VK_MEM_UPLOAD:
        required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
        preferred = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        break;
    case KILN_VK_MEM_DOWNLOAD:
        required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
        preferred = VK_MEMORY_PROPERTY_HOST_CACHED_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        break;
    case KILN_VK_MEM_DIRECT_IN:
        required = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
        preferred = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        break;
    case KILN_VK_MEM_DIRECT_OUT:
        required = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
        preferred = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        break;
    }
    VkBufferCreateInfo bci = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = size,
        .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    KILN_VK_TRY(ctx, vkCreateBuffer, (gpu->device, &bci, NULL, &out->buffer));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(gpu->device, out->buffer, &req);
    int type = find_memory_type(gpu, req.memoryTypeBits, required, preferred);
    if (type < 0) {
        vkDestroyBuffer(gpu->device, out->buffer, NULL);
        out->buffer = VK_NULL_HANDLE;
        if (kind == KILN_VK_MEM_DIRECT_IN || kind == KILN_VK_MEM_DIRECT_OUT) return KILN_ERR_UNSUPPORTED;
        return kiln__fail(ctx, KILN_ERR_GPU, "no suitable Vulkan memory type for a %llu-byte buffer",
                          (unsigned long long)size);
    }
    VkMemoryAllocateInfo mai = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .allocationSize = req.size,
        .memoryTypeIndex = (uint32_t)type,
    };
    VkResult r = vkAllocateMemory(gpu->device, &mai, NULL, &out->memory);
    if (r != VK_SUCCESS) {
        vkDestroyBuffer(gpu->device, out->buffer, NULL);
        memset(out, 0, sizeof *out);
        return kiln__fail(ctx, KILN_ERR_GPU, "vkAllocateMemory failed: %s (%llu bytes)", kiln_vk_result_name(r),
                          (unsigned long long)req.size);
    }
    out->size = size;
    out->flags = gpu->mem.memoryTypes[type].propertyFlags;
    r = vkBindBufferMemory(gpu->device, out->buffer, out->memory, 0);
    if (r == VK_SUCCESS && (out->flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
        r = vkMapMemory(gpu->device, out->memory, 0, VK_WHOLE_SIZE, 0, &out->mapped);
    if (r != VK_SUCCESS) {
        kiln_vk_buffer_destroy(gpu, out);
        return kiln__fail(ctx, KILN_ERR_GPU, "vkBindBufferMemory/vkMapMemory failed: %s", kiln_vk_result_name(r));
    }
    return KILN_OK;
}

void kiln_vk_buffer_destroy(kiln_gpu *gpu, kiln_vk_buffer *buf)
{
    if (!buf || !gpu || !gpu->device) return;
    if (buf->buffer) vkDestroyBuffer(gpu->device, buf->buffer, NULL);
    if (buf->memory) vkFreeMemory(gpu->device, buf->memory, NULL); /* unmaps */
    memset(buf, 0, sizeof *buf);
}

kiln_status kiln_vk_buffer_flush(kiln_context *ctx, kiln_gpu *gpu, kiln_vk_buffer *buf)
{
    if (!buf->mapped || (buf->flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) return KILN_OK;
    VkMappedMemoryRange range = {.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, .memory = buf->memory, .size = VK_WHOLE_SIZE};
    KILN_VK_TRY(ctx, vkFlushMappedMemoryRanges, (gpu->device, 1, &range));
    return KILN_OK;
}

kiln_status kiln_vk_buffer_invalidate(kiln_context *ctx, kiln_gpu *gpu, kiln_vk_buffer *buf)
{
    if (!buf->mapped || (buf->flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) return KILN_OK;
    VkMappedMemoryRange range = {.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, .memory = buf->memory, .size = VK_WHOLE_SIZE};
    KILN_VK_TRY(ctx, vkInvalidateMappedMemoryRanges, (gpu->device, 1, &range));
    return KILN_OK;
}

/* Discrete GPUs whose device-local memory the host can map in full (resizable BAR: a DEVICE_LOCAL |
 * HOST_VISIBLE type on a heap of >= 1 GiB): the host writes inputs straight into device memory (no
 * staging buffer, no copy command; KILN_VK_DIRECT_UPLOAD=0: staged). Outputs stay staged: host reads of
 * device memory over PCIe are slow. Measured on the H100 (docs/PERFORMANCE.md, helper f2f): a 4096^2
 * BC1 fast encode 37.0 -> 18.8 ms, most of it the pinned staging buffers' allocation (23.4 -> 6.2 ms). */
static int direct_upload(const kiln_gpu *gpu)
{
    const char *v = getenv("KILN_VK_DIRECT_UPLOAD");
    if (v && !strcmp(v, "0")) return 0;
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    for (uint32_t i = 0; i < gpu->mem.memoryTypeCount; i++)
        if ((gpu->mem.memoryTypes[i].propertyFlags & want) == want &&
            gpu->mem.memoryHeaps[gpu->mem.memoryTypes[i].heapIndex].size >= ((VkDeviceSize)1 << 30))
            return 1;
    return 0;
}

kiln_status kiln_vk_io_create(kiln_context *ctx, kiln_gpu *gpu, VkDeviceSize size, int output, kiln_vk_io *io)
{
    memset(io, 0, sizeof *io);
    io->output = output;
    if (gpu->discrete && !output && ctx && direct_upload(gpu)) {
        char saved[sizeof ctx->error];
        memcpy(saved, ctx->error, sizeof saved);
        if (kiln_vk_buffer_create(ctx, gpu, size, KILN_VK_MEM_DIRECT_IN, &io->dev) == KILN_OK) {
            io->direct = 1;
            return KILN_OK;
        }
        memcpy(ctx->error, saved, sizeof saved); /* no such memory left: staged as usual */
    }
    /* Unified memory (integrated GPUs, lavapipe): shaders use the mapped buffer directly. Discrete
     * GPUs read and write their own memory, and the host goes through staging buffers. */
    if (!gpu->discrete) {
        kiln_status st = kiln_vk_buffer_create(ctx, gpu, size, output ? KILN_VK_MEM_DIRECT_OUT : KILN_VK_MEM_DIRECT_IN, &io->dev);
        if (st == KILN_OK) {
            io->direct = 1;
            return KILN_OK;
        }
        if (st != KILN_ERR_UNSUPPORTED) return st;
    }
    KILN_TRY(kiln_vk_buffer_create(ctx, gpu, size, KILN_VK_MEM_DEVICE, &io->dev));
    kiln_status st = kiln_vk_buffer_create(ctx, gpu, size, output ? KILN_VK_MEM_DOWNLOAD : KILN_VK_MEM_UPLOAD, &io->staging);
    if (st != KILN_OK) kiln_vk_buffer_destroy(gpu, &io->dev);
    return st;
}

void kiln_vk_io_destroy(kiln_gpu *gpu, kiln_vk_io *io)
{
    if (!io) return;
    kiln_vk_buffer_destroy(gpu, &io->dev);
    kiln_vk_buffer_destroy(gpu, &io->staging);
}

kiln_status kiln_vk_io_ensure(kiln_context *ctx, kiln_gpu *gpu, VkDeviceSize size, int output, kiln_vk_io *io)
{
    if (io->dev.buffer && io->dev.size >= size && io->output == output) return KILN_OK;
    kiln_vk_io_destroy(gpu, io);
    return kiln_vk_io_create(ctx, gpu, size, output, io);
}

void *kiln_vk_io_map(kiln_vk_io *io) { return io->direct ? io->dev.mapped : io->staging.mapped; }

/* ---- pipelines ---- */

static const kiln_shader_blob *find_blob(const char *name)
{
    for (const kiln_shader_blob *b = kiln_shader_blobs; b->name; b++)
        if (!strcmp(b->name, name)) return b;
    return NULL;
}

static int same_desc(const kiln_vk_pipeline *p, const kiln_vk_pipeline_desc *d, uint32_t local)
{
    if (strcmp(p->shader, d->shader) || p->nspec != d->nspec || p->local_size != local || p->nbindings != d->nbindings ||
        p->push_size != d->push_size || p->subgroup_size != d->subgroup_size || p->full_subgroups != (d->full_subgroups != 0))
        return 0;
    for (uint32_t i = 0; i < d->nspec; i++)
        if (p->spec[i] != d->spec[i]) return 0;
    for (uint32_t i = 0; i < d->nbindings; i++)
        if (p->types[i] != (d->types ? d->types[i] : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER)) return 0;
    return 1;
}

static kiln_status pipeline_get(kiln_context *ctx, kiln_gpu *gpu, const kiln_vk_pipeline_desc *d,
                                const kiln_vk_pipeline **out);

/* pipelines are created on first use only (lazily: a job creates what it dispatches); creation is timed
 * for kiln_context_gpu_timings */
kiln_status kiln_vk_pipeline_get(kiln_context *ctx, kiln_gpu *gpu, const kiln_vk_pipeline_desc *d,
                                 const kiln_vk_pipeline **out)
{
    const uint32_t before = gpu->npipelines;
    const double t0 = kiln__vk_now_ms();
    kiln_status st = pipeline_get(ctx, gpu, d, out);
    if (gpu->npipelines != before) {
        gpu->t_pipeline_ms += kiln__vk_now_ms() - t0;
        gpu->t_pipelines++;
    }
    return st;
}

static kiln_status pipeline_get(kiln_context *ctx, kiln_gpu *gpu, const kiln_vk_pipeline_desc *d,
                                const kiln_vk_pipeline **out)
{
    *out = NULL;
    uint32_t local = d->local_size ? d->local_size : 64;
    if (!d->shader || strlen(d->shader) >= sizeof gpu->pipelines[0].shader || d->nspec > KILN_VK_MAX_SPEC ||
        d->nbindings > KILN_VK_MAX_BINDINGS || d->push_size > 128 || (d->push_size & 3))
        return kiln__fail(ctx, KILN_ERR_INTERNAL, "bad pipeline description for shader %s", d->shader ? d->shader : "(null)");
    for (uint32_t i = 0; i < gpu->npipelines; i++)
        if (same_desc(&gpu->pipelines[i], d, local)) {
            *out = &gpu->pipelines[i];
            return KILN_OK;
        }
    if (gpu->npipelines >= KILN_VK_MAX_PIPELINES)
        return kiln__fail(ctx, KILN_ERR_INTERNAL, "too many Vulkan pipelines (limit %d)", KILN_VK_MAX_PIPELINES);
    if (local > gpu->props.limits.maxComputeWorkGroupSize[0] || local > gpu->props.limits.maxComputeWorkGroupInvocations)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "workgroup size %u exceeds the device's limit", local);
    if (d->subgroup_size && !kiln_vk_subgroup_size_ok(gpu, d->subgroup_size))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "the device cannot run %s with subgroup size %u", d->shader,
                          d->subgroup_size);
    if (d->full_subgroups && !gpu->full_subgroups)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "the device cannot require full subgroups (computeFullSubgroups)");
    const kiln_shader_blob *blob = find_blob(d->shader);
    if (!blob) return kiln__fail(ctx, KILN_ERR_INTERNAL, "shader %s is not embedded in this build", d->shader);

    kiln_vk_pipeline *p = &gpu->pipelines[gpu->npipelines];
    memset(p, 0, sizeof *p);
    snprintf(p->shader, sizeof p->shader, "%s", d->shader);
    p->nspec = d->nspec;
    for (uint32_t i = 0; i < d->nspec; i++) p->spec[i] = d->spec[i];
    p->local_size = local;
    p->nbindings = d->nbindings;
    p->push_size = d->push_size;
    p->subgroup_size = d->subgroup_size;
    p->full_subgroups = d->full_subgroups != 0;

    VkDescriptorSetLayoutBinding b[KILN_VK_MAX_BINDINGS];
    for (uint32_t i = 0; i < d->nbindings; i++) {
        p->types[i] = d->types ? d->types[i] : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        b[i] = (VkDescriptorSetLayoutBinding){
            .binding = i, .descriptorType = p->types[i], .descriptorCount = 1, .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    }
    VkDescriptorSetLayoutCreateInfo dslci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, .bindingCount = d->nbindings, .pBindings = b};
    VkShaderModule module = VK_NULL_HANDLE;
    kiln_status st = kiln_vk_check(ctx, vkCreateDescriptorSetLayout(gpu->device, &dslci, NULL, &p->set_layout),
                                   "vkCreateDescriptorSetLayout");
    if (st == KILN_OK) {
        VkPushConstantRange pcr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = d->push_size};
        VkPipelineLayoutCreateInfo plci = {
            .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
            .setLayoutCount = 1,
            .pSetLayouts = &p->set_layout,
            .pushConstantRangeCount = d->push_size ? 1 : 0,
            .pPushConstantRanges = &pcr,
        };
        st = kiln_vk_check(ctx, vkCreatePipelineLayout(gpu->device, &plci, NULL, &p->layout), "vkCreatePipelineLayout");
    }
    if (st == KILN_OK) {
        VkShaderModuleCreateInfo smci = {
            .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = blob->size, .pCode = blob->code};
        st = kiln_vk_check(ctx, vkCreateShaderModule(gpu->device, &smci, NULL, &module), "vkCreateShaderModule");
    }
    if (st == KILN_OK) {
        uint32_t values[KILN_VK_MAX_SPEC + 1];
        VkSpecializationMapEntry map[KILN_VK_MAX_SPEC + 1];
        values[0] = local;
        for (uint32_t i = 0; i < d->nspec; i++) values[i + 1] = d->spec[i];
        for (uint32_t i = 0; i <= d->nspec; i++)
            map[i] = (VkSpecializationMapEntry){.constantID = i, .offset = i * 4, .size = 4};
        VkSpecializationInfo si = {
            .mapEntryCount = d->nspec + 1, .pMapEntries = map, .dataSize = (d->nspec + 1) * 4, .pData = values};
        VkPipelineShaderStageRequiredSubgroupSizeCreateInfo rss = {
            .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO,
            .requiredSubgroupSize = d->subgroup_size,
        };
        VkComputePipelineCreateInfo cpci = {
            .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
            .flags = gpu->exec_stats ? VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR : 0,
            .stage =
                {
                    .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                    .pNext = d->subgroup_size ? &rss : NULL,
                    .flags = d->full_subgroups ? VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT : 0,
                    .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                    .module = module,
                    .pName = "main",
                    .pSpecializationInfo = &si,
                },
            .layout = p->layout,
        };
        /* the pipeline's own cache from its file (vk_pcache.c), written back when it was not there */
        const uint64_t key = kiln__vk_pcache_key(gpu, p, blob->code, blob->size, (uint32_t)cpci.flags);
        size_t loaded = 0;
        VkPipelineCache pc = kiln__vk_pcache_open(gpu, key, &loaded);
        st = kiln_vk_check(ctx, vkCreateComputePipelines(gpu->device, pc ? pc : gpu->cache, 1, &cpci, NULL, &p->pipeline),
                           "vkCreateComputePipelines");
        kiln__vk_pcache_close(gpu, pc, key, loaded, st == KILN_OK);
        if (st != KILN_OK)
            kiln__fail(ctx, st, "vkCreateComputePipelines failed for shader %s (%s)", d->shader, kiln_last_error(ctx));
    }
    if (module) vkDestroyShaderModule(gpu->device, module, NULL);
    if (st != KILN_OK) {
        if (p->layout) vkDestroyPipelineLayout(gpu->device, p->layout, NULL);
        if (p->set_layout) vkDestroyDescriptorSetLayout(gpu->device, p->set_layout, NULL);
        memset(p, 0, sizeof *p);
        return st;
    }
    gpu->npipelines++;
    *out = p;
    if (gpu->exec_stats) { /* KILN_VK_PIPELINE_STATS=1 (vk_device.c): the driver's statistics to stderr */
        char text[4096];
        uint32_t n = 0;
        char spec[96] = "";
        size_t o = 0;
        for (uint32_t i = 0; i < p->nspec && o < sizeof spec; i++)
            o += (size_t)snprintf(spec + o, sizeof spec - o, "%s%u", i ? "," : "", p->spec[i]);
        if (kiln_vk_pipeline_stats(ctx, gpu, p, text, sizeof text, &n) == KILN_OK)
            fprintf(stderr, "# pipeline stats: %s (local size %u, spec %s, subgroup %u): %u statistics\n%s", p->shader,
                    p->local_size, p->nspec ? spec : "-", p->subgroup_size, n, text);
        else
            fprintf(stderr, "# pipeline stats: %s: %s\n", p->shader, kiln_last_error(ctx));
    }
    return KILN_OK;
}

/* appends to buf (always terminated) */
static void stats_append(char *buf, size_t size, size_t *used, const char *fmt, ...)
{
    if (!buf || size == 0 || *used >= size - 1) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *used, size - *used, fmt, ap);
    va_end(ap);
    if (n > 0) *used = *used + (size_t)n < size - 1 ? *used + (size_t)n : size - 1;
}

kiln_status kiln_vk_pipeline_stats(kiln_context *ctx, kiln_gpu *gpu, const kiln_vk_pipeline *pipe, char *buf, size_t size,
                                   uint32_t *nstats)
{
    *nstats = 0;
    if (buf && size) buf[0] = 0;
    if (!gpu->exec_stats || !pipe || !pipe->pipeline)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                          "pipeline statistics need VK_KHR_pipeline_executable_properties and KILN_VK_PIPELINE_STATS=1 when "
                          "the device is created");
    PFN_vkGetPipelineExecutablePropertiesKHR get_props =
        (PFN_vkGetPipelineExecutablePropertiesKHR)vkGetDeviceProcAddr(gpu->device, "vkGetPipelineExecutablePropertiesKHR");
    PFN_vkGetPipelineExecutableStatisticsKHR get_stats =
        (PFN_vkGetPipelineExecutableStatisticsKHR)vkGetDeviceProcAddr(gpu->device, "vkGetPipelineExecutableStatisticsKHR");
    if (!get_props || !get_stats)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "the driver does not export vkGetPipelineExecutable*KHR");
    VkPipelineInfoKHR pi = {.sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, .pipeline = pipe->pipeline};
    uint32_t ne = 0;
    KILN_VK_TRY(ctx, get_props, (gpu->device, &pi, &ne, NULL));
    if (ne > 16) ne = 16;
    VkPipelineExecutablePropertiesKHR ep[16];
    for (uint32_t i = 0; i < ne; i++) ep[i] = (VkPipelineExecutablePropertiesKHR){.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR};
    if (ne) {
        VkResult r = get_props(gpu->device, &pi, &ne, ep);
        if (r != VK_SUCCESS && r != VK_INCOMPLETE) return kiln_vk_check(ctx, r, "vkGetPipelineExecutablePropertiesKHR");
    }
    size_t used = 0;
    for (uint32_t e = 0; e < ne; e++) {
        VkPipelineExecutableInfoKHR ei = {.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR, .pipeline = pipe->pipeline, .executableIndex = e};
        uint32_t ns = 0;
        KILN_VK_TRY(ctx, get_stats, (gpu->device, &ei, &ns, NULL));
        if (ns > 64) ns = 64;
        VkPipelineExecutableStatisticKHR st[64];
        for (uint32_t i = 0; i < ns; i++) st[i] = (VkPipelineExecutableStatisticKHR){.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR};
        if (ns) {
            VkResult r = get_stats(gpu->device, &ei, &ns, st);
            if (r != VK_SUCCESS && r != VK_INCOMPLETE) return kiln_vk_check(ctx, r, "vkGetPipelineExecutableStatisticsKHR");
        }
        for (uint32_t i = 0; i < ns; i++) {
            stats_append(buf, size, &used, "  %s: %s (subgroup %u): %s = ", pipe->shader, ep[e].name, ep[e].subgroupSize, st[i].name);
            switch (st[i].format) {
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
                stats_append(buf, size, &used, "%s\n", st[i].value.b32 ? "true" : "false");
                break;
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
                stats_append(buf, size, &used, "%lld\n", (long long)st[i].value.i64);
                break;
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
                stats_append(buf, size, &used, "%llu\n", (unsigned long long)st[i].value.u64);
                break;
            default:
                stats_append(buf, size, &used, "%g\n", st[i].value.f64);
                break;
            }
        }
        *nstats += ns;
    }
    return KILN_OK;
}

/* ---- commands ---- */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

kiln_status kiln_vk_cmd_begin(kiln_context *ctx, kiln_gpu *gpu, uint32_t max_dispatches, kiln_vk_cmd *cmd)
{
    memset(cmd, 0, sizeof *cmd);
    cmd->gpu = gpu;
    if (max_dispatches == 0) max_dispatches = 1;
    cmd->max_sets = max_dispatches;
    VkCommandBufferAllocateInfo cbai = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = gpu->cmd_pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    kiln_status st = kiln_vk_check(ctx, vkAllocateCommandBuffers(gpu->device, &cbai, &cmd->cb), "vkAllocateCommandBuffers");
    if (st == KILN_OK) {
        VkDescriptorPoolSize sizes[3] = {
            {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, max_dispatches * KILN_VK_MAX_BINDINGS},
            {VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, max_dispatches * 2},
            {VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, max_dispatches * 2},
        };
        VkDescriptorPoolCreateInfo dpci = {
            .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, .maxSets = max_dispatches, .poolSizeCount = 3, .pPoolSizes = sizes};
        st = kiln_vk_check(ctx, vkCreateDescriptorPool(gpu->device, &dpci, NULL, &cmd->pool), "vkCreateDescriptorPool");
    }
    if (st == KILN_OK) {
        VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        st = kiln_vk_check(ctx, vkCreateFence(gpu->device, &fci, NULL, &cmd->fence), "vkCreateFence");
    }
    if (st == KILN_OK) {
        VkCommandBufferBeginInfo bi = {
            .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
        st = kiln_vk_check(ctx, vkBeginCommandBuffer(cmd->cb, &bi), "vkBeginCommandBuffer");
    }
    if (st != KILN_OK) {
        kiln_vk_cmd_free(cmd);
        return st;
    }
    if (gpu->timestamps) vkCmdResetQueryPool(cmd->cb, gpu->timestamps, 0, 2);
    return KILN_OK;
}

void kiln_vk_cmd_timestamp(kiln_vk_cmd *cmd, int end)
{
    /* BOTTOM_OF_PIPE: written once every earlier command has completed, so the start excludes the
     * uploads recorded before it and the end includes the whole of the dispatches. */
    if (cmd->gpu->timestamps) {
        vkCmdWriteTimestamp(cmd->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, cmd->gpu->timestamps, end ? 1 : 0);
        if (end) cmd->timed = 1;
    }
}

kiln_status kiln_vk_cmd_dispatch(kiln_context *ctx, kiln_vk_cmd *cmd, const kiln_vk_pipeline *p,
                                 const kiln_vk_binding *bindings, const void *push, uint32_t gx, uint32_t gy, uint32_t gz)
{
    kiln_gpu *gpu = cmd->gpu;
    if (cmd->used_sets >= cmd->max_sets)
        return kiln__fail(ctx, KILN_ERR_INTERNAL, "more dispatches than the command was created for (%u)", cmd->max_sets);
    const uint32_t *maxc = gpu->props.limits.maxComputeWorkGroupCount;
    if (gx > maxc[0] || gy > maxc[1] || gz > maxc[2])
        return kiln__fail(ctx, KILN_ERR_TOO_LARGE, "dispatch of %ux%ux%u workgroups exceeds the device's limit %ux%ux%u", gx,
                          gy, gz, maxc[0], maxc[1], maxc[2]);
    VkDescriptorSet set;
    VkDescriptorSetAllocateInfo dsai = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, .descriptorPool = cmd->pool, .descriptorSetCount = 1,
        .pSetLayouts = &p->set_layout};
    KILN_VK_TRY(ctx, vkAllocateDescriptorSets, (gpu->device, &dsai, &set));
    cmd->used_sets++;
    VkWriteDescriptorSet w[KILN_VK_MAX_BINDINGS];
    VkDescriptorBufferInfo bi[KILN_VK_MAX_BINDINGS];
    VkDescriptorImageInfo ii[KILN_VK_MAX_BINDINGS];
    for (uint32_t i = 0; i < p->nbindings; i++) {
        w[i] = (VkWriteDescriptorSet){
            .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = set, .dstBinding = i, .descriptorCount = 1,
            .descriptorType = p->types[i]};
        if (p->types[i] == VK_DESCRIPTOR_TYPE_STORAGE_BUFFER || p->types[i] == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER) {
            bi[i] = (VkDescriptorBufferInfo){
                bindings[i].buffer, bindings[i].offset, bindings[i].range ? bindings[i].range : VK_WHOLE_SIZE};
            w[i].pBufferInfo = &bi[i];
        } else {
            ii[i] = (VkDescriptorImageInfo){bindings[i].sampler, bindings[i].view, bindings[i].layout};
            w[i].pImageInfo = &ii[i];
        }
    }
    vkUpdateDescriptorSets(gpu->device, p->nbindings, w, 0, NULL);
    vkCmdBindPipeline(cmd->cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->pipeline);
    vkCmdBindDescriptorSets(cmd->cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->layout, 0, 1, &set, 0, NULL);
    if (p->push_size) vkCmdPushConstants(cmd->cb, p->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, p->push_size, push);
    vkCmdDispatch(cmd->cb, gx, gy, gz);
    return KILN_OK;
}

kiln_status kiln_vk_cmd_dispatch_linear(kiln_context *ctx, kiln_vk_cmd *cmd, const kiln_vk_pipeline *p,
                                        const kiln_vk_binding *bindings, const void *push, uint64_t items)
{
    uint64_t groups = kiln_vk_groups(items, p->local_size);
    if (groups == 0) return KILN_OK;
    uint64_t maxx = cmd->gpu->props.limits.maxComputeWorkGroupCount[0];
    uint64_t gx = groups < maxx ? groups : maxx;
    uint64_t gy = (groups + gx - 1) / gx;
    if (gy > cmd->gpu->props.limits.maxComputeWorkGroupCount[1])
        return kiln__fail(ctx, KILN_ERR_TOO_LARGE, "%llu work items are too many for one dispatch", (unsigned long long)items);
    return kiln_vk_cmd_dispatch(ctx, cmd, p, bindings, push, (uint32_t)gx, (uint32_t)gy, 1);
}

static void memory_barrier(VkCommandBuffer cb, VkPipelineStageFlags src_stage, VkAccessFlags src,
                           VkPipelineStageFlags dst_stage, VkAccessFlags dst)
{
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = src, .dstAccessMask = dst};
    vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 1, &mb, 0, NULL, 0, NULL);
}

void kiln_vk_cmd_transfer_to_compute(VkCommandBuffer cb)
{
    memory_barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                   VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
}

void kiln_vk_cmd_barrier(kiln_vk_cmd *cmd)
{
    memory_barrier(cmd->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                   VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT);
}

void kiln_vk_cmd_upload(kiln_vk_cmd *cmd, kiln_vk_io *io, VkDeviceSize size)
{
    if (io->direct) return; /* vkQueueSubmit makes host writes to mapped memory visible */
    VkBufferCopy region = {0, 0, size ? size : io->dev.size};
    vkCmdCopyBuffer(cmd->cb, io->staging.buffer, io->dev.buffer, 1, &region);
    memory_barrier(cmd->cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                   VK_ACCESS_SHADER_READ_BIT);
}

void kiln_vk_cmd_download(kiln_vk_cmd *cmd, kiln_vk_io *io, VkDeviceSize size)
{
    if (io->direct) {
        memory_barrier(cmd->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                       VK_ACCESS_HOST_READ_BIT);
        return;
    }
    memory_barrier(cmd->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                   VK_ACCESS_TRANSFER_READ_BIT);
    VkBufferCopy region = {0, 0, size ? size : io->dev.size};
    vkCmdCopyBuffer(cmd->cb, io->dev.buffer, io->staging.buffer, 1, &region);
    memory_barrier(cmd->cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                   VK_ACCESS_HOST_READ_BIT);
}

kiln_status kiln_vk_cmd_submit(kiln_context *ctx, kiln_vk_cmd *cmd, double *gpu_ms)
{
    kiln_gpu *gpu = cmd->gpu;
    if (gpu_ms) *gpu_ms = 0.0;
    KILN_VK_TRY(ctx, vkEndCommandBuffer, (cmd->cb));
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cmd->cb};
    double t0 = now_ms();
    KILN_VK_TRY(ctx, vkQueueSubmit, (gpu->queue, 1, &si, cmd->fence));
    int cancelled = 0;
    for (;;) {
        VkResult r = vkWaitForFences(gpu->device, 1, &cmd->fence, VK_TRUE, 100u * 1000u * 1000u);
        if (r == VK_SUCCESS) break;
        if (r != VK_TIMEOUT) return kiln_vk_check(ctx, r, "vkWaitForFences");
        if (kiln__cancelled(ctx)) cancelled = 1; /* the GPU cannot be interrupted: wait, then report */
    }
    double host = now_ms() - t0;
    if (gpu_ms) {
        *gpu_ms = host;
        if (cmd->timed) {
            uint64_t ts[2];
            VkResult r = vkGetQueryPoolResults(gpu->device, gpu->timestamps, 0, 2, sizeof ts, ts, sizeof ts[0],
                                               VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
            if (r != VK_SUCCESS) return kiln_vk_check(ctx, r, "vkGetQueryPoolResults");
            uint64_t mask = gpu->timestamp_bits >= 64 ? ~0ull : (1ull << gpu->timestamp_bits) - 1;
            uint64_t ticks = (ts[1] - ts[0]) & mask;
            *gpu_ms = (double)ticks * gpu->timestamp_period / 1e6;
        }
    }
    if (cancelled || kiln__cancelled(ctx)) return kiln__fail(ctx, KILN_ERR_CANCELLED, "cancelled");
    return KILN_OK;
}

void kiln_vk_cmd_free(kiln_vk_cmd *cmd)
{
    if (!cmd || !cmd->gpu) return;
    kiln_gpu *gpu = cmd->gpu;
    if (cmd->fence) vkDestroyFence(gpu->device, cmd->fence, NULL);
    if (cmd->pool) vkDestroyDescriptorPool(gpu->device, cmd->pool, NULL);
    if (cmd->cb) vkFreeCommandBuffers(gpu->device, gpu->cmd_pool, 1, &cmd->cb);
    memset(cmd, 0, sizeof *cmd);
}

/* ---------------------------------------------------------------- images */

kiln_status kiln_vk_image_memory(kiln_context *ctx, kiln_gpu *gpu, VkImage image, const char *what,
                                 VkDeviceMemory *memory)
{
    VkMemoryRequirements req;
    vkGetImageMemoryRequirements(gpu->device, image, &req);
    int type = -1;
    for (int pass = 0; pass < 2 && type < 0; pass++)
        for (uint32_t i = 0; i < gpu->mem.memoryTypeCount && type < 0; i++)
            if ((req.memoryTypeBits & (1u << i)) &&
                (pass == 1 || (gpu->mem.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)))
                type = (int)i;
    if (type < 0) return kiln__fail(ctx, KILN_ERR_GPU, "no memory type of %s can hold %s", gpu->props.deviceName, what);
    VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size,
                                .memoryTypeIndex = (uint32_t)type};
    KILN_VK_TRY(ctx, vkAllocateMemory, (gpu->device, &mai, NULL, memory));
    return kiln_vk_check(ctx, vkBindImageMemory(gpu->device, image, *memory, 0), "vkBindImageMemory");
}

void kiln_vk_image_barrier(VkCommandBuffer cb, VkImage image, uint32_t level, uint32_t nlevels, uint32_t layers,
                           VkImageLayout from, VkImageLayout to, VkAccessFlags src, VkAccessFlags dst,
                           VkPipelineStageFlags src_stage, VkPipelineStageFlags dst_stage)
{
    VkImageMemoryBarrier b = {
        .sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
        .srcAccessMask = src,
        .dstAccessMask = dst,
        .oldLayout = from,
        .newLayout = to,
        .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
        .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
        .image = image,
        .subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, level, nlevels, 0, layers},
    };
    vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 0, NULL, 0, NULL, 1, &b);
}

/* vk_device.c - the Vulkan instance, device enumeration and choice, device creation and the backend
 * resolution behind kiln__gpu_wanted (see gpu.h and kiln.h's kiln_backend).
 *
 * Device order (kiln_gpu_list, --device N): discrete, integrated, virtual, other, CPU; ties keep the
 * loader's enumeration order. AUTO takes the first; a CPU implementation (lavapipe) only when the
 * backend is VULKAN or KILN_ALLOW_CPU_VULKAN=1, because kiln's own CPU path is faster than lavapipe.
 * KILN_VK_VALIDATION=1 enables VK_LAYER_KHRONOS_validation with a debug messenger that prints and
 * counts warnings and errors (kiln__gpu_validation_messages). */
#include "gpu/vk.h"
#include "kiln/kiln_timings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *kiln_vk_result_name(VkResult r)
{
    switch (r) {
#define R(x) case x: return #x;
        R(VK_SUCCESS) R(VK_NOT_READY) R(VK_TIMEOUT) R(VK_EVENT_SET) R(VK_EVENT_RESET) R(VK_INCOMPLETE)
        R(VK_ERROR_OUT_OF_HOST_MEMORY) R(VK_ERROR_OUT_OF_DEVICE_MEMORY) R(VK_ERROR_INITIALIZATION_FAILED)
        R(VK_ERROR_DEVICE_LOST) R(VK_ERROR_MEMORY_MAP_FAILED) R(VK_ERROR_LAYER_NOT_PRESENT)
        R(VK_ERROR_EXTENSION_NOT_PRESENT) R(VK_ERROR_FEATURE_NOT_PRESENT) R(VK_ERROR_INCOMPATIBLE_DRIVER)
        R(VK_ERROR_TOO_MANY_OBJECTS) R(VK_ERROR_FORMAT_NOT_SUPPORTED) R(VK_ERROR_FRAGMENTED_POOL)
        R(VK_ERROR_UNKNOWN) R(VK_ERROR_OUT_OF_POOL_MEMORY) R(VK_ERROR_INVALID_EXTERNAL_HANDLE)
        R(VK_ERROR_FRAGMENTATION) R(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS) R(VK_PIPELINE_COMPILE_REQUIRED)
#undef R
    default: return "VkResult (unknown)";
    }
}

kiln_status kiln_vk_check(kiln_context *ctx, VkResult r, const char *name)
{
    if (r == VK_SUCCESS) return KILN_OK;
    return kiln__fail(ctx, KILN_ERR_GPU, "%s failed: %s (%d)", name, kiln_vk_result_name(r), (int)r);
}

static int env_is_1(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] == '1' && v[1] == 0;
}

/* ---- validation messenger ---- */

static VKAPI_ATTR VkBool32 VKAPI_CALL debug_messenger(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                      VkDebugUtilsMessageTypeFlagsEXT types,
                                                      const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
    kiln_gpu *gpu = user;
    if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
        atomic_fetch_add(&gpu->validation_msgs, 1u);
        const char *kind = (types & VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT)    ? "validation"
                           : (types & VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT) ? "performance"
                                                                                       : "loader/driver";
        fprintf(stderr, "kiln: Vulkan %s %s: %s\n", kind,
                severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error" : "warning",
                data && data->pMessage ? data->pMessage : "(no message)");
    }
    return VK_FALSE;
}

uint32_t kiln_vk_validation_count(const kiln_gpu *gpu)
{
    return gpu ? atomic_load(&((kiln_gpu *)gpu)->validation_msgs) : 0;
}

static int has_layer(const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || n == 0) return 0;
    VkLayerProperties *l = calloc(n, sizeof *l);
    if (!l) return 0;
    int found = 0;
    if (vkEnumerateInstanceLayerProperties(&n, l) == VK_SUCCESS)
        for (uint32_t i = 0; i < n; i++)
            if (!strcmp(l[i].layerName, name)) found = 1;
    free(l);
    return found;
}

static int has_instance_ext(const char *layer, const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateInstanceExtensionProperties(layer, &n, NULL) != VK_SUCCESS || n == 0) return 0;
    VkExtensionProperties *e = calloc(n, sizeof *e);
    if (!e) return 0;
    int found = 0;
    if (vkEnumerateInstanceExtensionProperties(layer, &n, e) == VK_SUCCESS)
        for (uint32_t i = 0; i < n; i++)
            if (!strcmp(e[i].extensionName, name)) found = 1;
    free(e);
    return found;
}

static int has_device_ext(VkPhysicalDevice pd, const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS || n == 0) return 0;
    VkExtensionProperties *e = calloc(n, sizeof *e);
    if (!e) return 0;
    int found = 0;
    if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, e) == VK_SUCCESS)
        for (uint32_t i = 0; i < n; i++)
            if (!strcmp(e[i].extensionName, name)) found = 1;
    free(e);
    return found;
}

/* ---- enumeration ---- */

static int type_rank(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 4;
    default: return 3;
    }
}

static void driver_string(char *dst, size_t n, const VkPhysicalDeviceProperties *p, const VkPhysicalDeviceDriverProperties *d,
                          int have_driver_props)
{
    uint32_t v = p->driverVersion;
    if (have_driver_props && d->driverName[0]) {
        snprintf(dst, n, "%.120s %.120s", d->driverName, d->driverInfo);
        return;
    }
    if (p->vendorID == 0x10de) /* NVIDIA: 10.8.8.6 bits */
        snprintf(dst, n, "driver %u.%u.%u.%u", (v >> 22) & 0x3ff, (v >> 14) & 0xff, (v >> 6) & 0xff, v & 0x3f);
    else
        snprintf(dst, n, "driver %u.%u.%u", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v));
}

static void add_unusable(kiln_gpu *gpu, const char *name, const char *why)
{
    size_t len = strlen(gpu->unusable);
    snprintf(gpu->unusable + len, sizeof gpu->unusable - len, "%s%s (%s)", len ? "; " : "", name, why);
}

static void describe_physical(kiln_gpu *gpu, VkPhysicalDevice pd, uint32_t enum_index, uint32_t instance_api)
{
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(pd, &p);
    if (VK_API_VERSION_MAJOR(p.apiVersion) == 1 && VK_API_VERSION_MINOR(p.apiVersion) < 1) {
        add_unusable(gpu, p.deviceName, "Vulkan 1.0 only; kiln needs 1.1");
        return;
    }
    uint32_t api = p.apiVersion < instance_api ? p.apiVersion : instance_api;
    int have_driver = api >= VK_API_VERSION_1_2 || has_device_ext(pd, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
    VkPhysicalDeviceDriverProperties drv = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceSubgroupProperties sg = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    if (have_driver) sg.pNext = &drv;
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sg};
    vkGetPhysicalDeviceProperties2(pd, &p2);
    VkPhysicalDeviceFeatures f;
    vkGetPhysicalDeviceFeatures(pd, &f);

    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, NULL);
    VkQueueFamilyProperties q[32];
    if (nq > 32) nq = 32;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, q);
    uint32_t fam = UINT32_MAX;
    for (uint32_t i = 0; i < nq && fam == UINT32_MAX; i++) /* prefer a family that can time */
        if ((q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && q[i].queueCount > 0 && q[i].timestampValidBits > 0) fam = i;
    for (uint32_t i = 0; i < nq && fam == UINT32_MAX; i++)
        if ((q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && q[i].queueCount > 0) fam = i;
    if (fam == UINT32_MAX) {
        add_unusable(gpu, p.deviceName, "no compute queue");
        return;
    }
    if (gpu->nphys >= KILN_VK_MAX_DEVICES) return;
    kiln_vk_physical *d = &gpu->phys[gpu->nphys++];
    memset(d, 0, sizeof *d);
    d->handle = pd;
    d->type = p.deviceType;
    d->compute_family = fam;
    d->enum_index = enum_index;
    snprintf(d->info.name, sizeof d->info.name, "%s", p.deviceName);
    driver_string(d->info.driver, sizeof d->info.driver, &p, &drv, have_driver);
    d->info.vendor_id = p.vendorID;
    d->info.device_id = p.deviceID;
    d->info.api_version = p.apiVersion;
    d->info.subgroup_size = sg.subgroupSize;
    d->info.discrete = p.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
    d->info.bc_sampling = f.textureCompressionBC == VK_TRUE;
    d->info.etc2_sampling = f.textureCompressionETC2 == VK_TRUE;
}

static int phys_cmp(const void *a, const void *b)
{
    const kiln_vk_physical *x = a, *y = b;
    int rx = type_rank(x->type), ry = type_rank(y->type);
    if (rx != ry) return rx - ry;
    return x->enum_index < y->enum_index ? -1 : x->enum_index > y->enum_index;
}

static kiln_status gpu_instance_create(kiln_context *ctx, kiln_gpu *gpu);

/* Creates ctx->gpu with the instance and the sorted device list. A missing driver is not an error:
 * the list is then empty. */
static kiln_status gpu_instance(kiln_context *ctx)
{
    if (ctx->gpu) return KILN_OK;
    kiln_gpu *gpu = kiln__calloc(ctx, 1, sizeof *gpu);
    if (!gpu) return KILN_ERR_OUT_OF_MEMORY;
    atomic_init(&gpu->validation_msgs, 0u);
    gpu->chosen = -1;
    ctx->gpu = gpu;
    const double t0 = kiln__vk_now_ms();
    gpu->t_start_origin = t0;
    kiln_status st = gpu_instance_create(ctx, gpu);
    gpu->t_instance_ms = kiln__vk_now_ms() - t0;
    return st;
}

static kiln_status gpu_instance_create(kiln_context *ctx, kiln_gpu *gpu)
{
    uint32_t loader_api = VK_API_VERSION_1_0;
    if (vkEnumerateInstanceVersion(&loader_api) != VK_SUCCESS) loader_api = VK_API_VERSION_1_0;
    if (loader_api < VK_API_VERSION_1_1) {
        snprintf(gpu->unusable, sizeof gpu->unusable, "the Vulkan loader supports Vulkan 1.0 only; kiln needs 1.1");
        return KILN_OK;
    }
    uint32_t api = loader_api < VK_API_VERSION_1_3 ? loader_api : VK_API_VERSION_1_3;

    const char *layers[1];
    const char *exts[2];
    uint32_t nlayers = 0, nexts = 0;
    VkInstanceCreateFlags flags = 0;
    VkDebugUtilsMessengerCreateInfoEXT dbg = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
        .pfnUserCallback = debug_messenger,
        .pUserData = gpu,
    };
    int want_validation = env_is_1("KILN_VK_VALIDATION");
    if (want_validation) {
        if (has_layer("VK_LAYER_KHRONOS_validation") &&
            (has_instance_ext(NULL, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) ||
             has_instance_ext("VK_LAYER_KHRONOS_validation", VK_EXT_DEBUG_UTILS_EXTENSION_NAME))) {
            layers[nlayers++] = "VK_LAYER_KHRONOS_validation";
            exts[nexts++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
            gpu->validation = 1;
        } else {
            fprintf(stderr, "kiln: KILN_VK_VALIDATION=1 but VK_LAYER_KHRONOS_validation (with %s) is not installed "
                            "(Debian: vulkan-validationlayers)\n", VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
        }
    }
#ifdef VK_KHR_portability_enumeration
    if (has_instance_ext(NULL, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
        exts[nexts++] = VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME;
        flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
    }
#endif
    VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "kiln",
        .applicationVersion = VK_MAKE_API_VERSION(0, KILN_VERSION_MAJOR, KILN_VERSION_MINOR, KILN_VERSION_PATCH),
        .pEngineName = "kiln",
        .engineVersion = VK_MAKE_API_VERSION(0, KILN_VERSION_MAJOR, KILN_VERSION_MINOR, KILN_VERSION_PATCH),
        .apiVersion = api,
    };
    VkInstanceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pNext = gpu->validation ? &dbg : NULL,
        .flags = flags,
        .pApplicationInfo = &app,
        .enabledLayerCount = nlayers,
        .ppEnabledLayerNames = layers,
        .enabledExtensionCount = nexts,
        .ppEnabledExtensionNames = exts,
    };
    double ts = kiln__vk_now_ms();
    gpu->t_start_steps[KILN_VK_STEP_QUERY] = ts - gpu->t_start_origin;
    VkResult r = vkCreateInstance(&ci, NULL, &gpu->instance);
    gpu->t_start_steps[KILN_VK_STEP_CREATE_INSTANCE] = kiln__vk_now_ms() - ts;
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER || r == VK_ERROR_INITIALIZATION_FAILED || r == VK_ERROR_LAYER_NOT_PRESENT ||
        r == VK_ERROR_EXTENSION_NOT_PRESENT) {
        gpu->instance = VK_NULL_HANDLE;
        gpu->validation = 0;
        snprintf(gpu->unusable, sizeof gpu->unusable, "vkCreateInstance failed: %s", kiln_vk_result_name(r));
        return KILN_OK;
    }
    if (r != VK_SUCCESS) {
        gpu->instance = VK_NULL_HANDLE;
        return kiln_vk_check(ctx, r, "vkCreateInstance");
    }
    if (gpu->validation) {
        PFN_vkCreateDebugUtilsMessengerEXT create =
            (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(gpu->instance, "vkCreateDebugUtilsMessengerEXT");
        if (!create || create(gpu->instance, &dbg, NULL, &gpu->messenger) != VK_SUCCESS) {
            gpu->messenger = VK_NULL_HANDLE;
            fprintf(stderr, "kiln: cannot create the Vulkan debug messenger\n");
        }
    }

    ts = kiln__vk_now_ms();
    uint32_t n = 0;
    r = vkEnumeratePhysicalDevices(gpu->instance, &n, NULL);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) return kiln_vk_check(ctx, r, "vkEnumeratePhysicalDevices");
    if (n == 0) return KILN_OK;
    VkPhysicalDevice *pds = kiln__calloc(ctx, n, sizeof *pds);
    if (!pds) return KILN_ERR_OUT_OF_MEMORY;
    r = vkEnumeratePhysicalDevices(gpu->instance, &n, pds);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        free(pds);
        return kiln_vk_check(ctx, r, "vkEnumeratePhysicalDevices");
    }
    const double td = kiln__vk_now_ms();
    gpu->t_start_steps[KILN_VK_STEP_ENUMERATE] = td - ts;
    for (uint32_t i = 0; i < n; i++) describe_physical(gpu, pds[i], i, api);
    free(pds);
    qsort(gpu->phys, gpu->nphys, sizeof gpu->phys[0], phys_cmp);
    gpu->t_start_steps[KILN_VK_STEP_DESCRIBE] = kiln__vk_now_ms() - td;
    return KILN_OK;
}

/* ---- device ---- */

static void destroy_device_level(kiln_gpu *gpu)
{
    if (!gpu->device) return;
    vkDeviceWaitIdle(gpu->device);
    kiln_vk_io_destroy(gpu, gpu->dec_in);
    kiln_vk_io_destroy(gpu, gpu->dec_out);
    kiln_vk_io_destroy(gpu, gpu->dec_tables);
    free(gpu->dec_in);
    free(gpu->dec_out);
    free(gpu->dec_tables);
    gpu->dec_in = gpu->dec_out = NULL;
    gpu->dec_tables = NULL;
    kiln__gpu_enc_cache_free(gpu);
    for (uint32_t i = 0; i < gpu->npipelines; i++) {
        kiln_vk_pipeline *p = &gpu->pipelines[i];
        vkDestroyPipeline(gpu->device, p->pipeline, NULL);
        vkDestroyPipelineLayout(gpu->device, p->layout, NULL);
        vkDestroyDescriptorSetLayout(gpu->device, p->set_layout, NULL);
    }
    gpu->npipelines = 0;
    if (gpu->cache) (void)kiln__vk_pcache_save(NULL, gpu); /* best effort: a failure only costs compile time later */
    if (gpu->timestamps) vkDestroyQueryPool(gpu->device, gpu->timestamps, NULL);
    if (gpu->cache) vkDestroyPipelineCache(gpu->device, gpu->cache, NULL);
    if (gpu->cmd_pool) vkDestroyCommandPool(gpu->device, gpu->cmd_pool, NULL);
    vkDestroyDevice(gpu->device, NULL);
    gpu->timestamps = VK_NULL_HANDLE;
    gpu->cache = VK_NULL_HANDLE;
    gpu->cmd_pool = VK_NULL_HANDLE;
    gpu->device = VK_NULL_HANDLE;
}

static kiln_status create_device(kiln_context *ctx, kiln_gpu *gpu, int index)
{
    const kiln_vk_physical *ph = &gpu->phys[index];
    VkPhysicalDevice pd = ph->handle;
    gpu->chosen = index;
    gpu->physical = pd;
    gpu->queue_family = ph->compute_family;
    gpu->discrete = ph->info.discrete;
    vkGetPhysicalDeviceProperties(pd, &gpu->props);
    vkGetPhysicalDeviceMemoryProperties(pd, &gpu->mem);
    uint32_t api = gpu->props.apiVersion;

    /* subgroup size control: core in 1.3, else the extension */
    int sc_ext = 0, sc_core = 0;
    if (api >= VK_API_VERSION_1_3) sc_core = 1;
    else if (has_device_ext(pd, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME)) sc_ext = 1;
    VkPhysicalDeviceSubgroupSizeControlFeatures scf = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
    VkPhysicalDeviceSubgroupSizeControlProperties scp = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    if (sc_core || sc_ext) {
        f2.pNext = &scf;
        VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &scp};
        vkGetPhysicalDeviceProperties2(pd, &p2);
    }
    /* 16-bit float arithmetic (enc_bc4_max_pool_h.comp, BC4 max option bit 29; helper bc4n): core in 1.2 */
    VkPhysicalDeviceShaderFloat16Int8Features f16 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
    if (api >= VK_API_VERSION_1_2) {
        f16.pNext = f2.pNext;
        f2.pNext = &f16;
    }
    vkGetPhysicalDeviceFeatures2(pd, &f2);

    VkPhysicalDeviceFeatures want = {0};
    want.shaderInt64 = f2.features.shaderInt64;
    want.shaderInt16 = f2.features.shaderInt16;
    want.shaderFloat64 = f2.features.shaderFloat64;   /* GPU encoders: correctly rounded divisions (gpu_encode_bc.c) */
    want.textureCompressionBC = f2.features.textureCompressionBC;     /* for sampling checks */
    want.textureCompressionETC2 = f2.features.textureCompressionETC2;
    VkPhysicalDeviceSubgroupSizeControlFeatures scf_on = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
    const char *exts[3];
    uint32_t nexts = 0;
    void *chain = NULL;
    if ((sc_core || sc_ext) && scf.subgroupSizeControl && (scp.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT)) {
        scf_on.subgroupSizeControl = VK_TRUE;
        scf_on.computeFullSubgroups = scf.computeFullSubgroups;
        chain = &scf_on;
        if (sc_ext) exts[nexts++] = VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME;
        gpu->size_control = 1;
        gpu->full_subgroups = scf.computeFullSubgroups == VK_TRUE;
        gpu->min_subgroup = scp.minSubgroupSize;
        gpu->max_subgroup = scp.maxSubgroupSize;
    }
    /* KILN_VK_PIPELINE_STATS=1: the driver's per-pipeline statistics (VK_KHR_pipeline_executable_properties)
     * when offered; kiln_vk_pipeline_get prints them (vk_runtime.c) */
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pef = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
    gpu->exec_stats = 0;
    if (env_is_1("KILN_VK_PIPELINE_STATS") && has_device_ext(pd, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME)) {
        VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR q = {
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
        VkPhysicalDeviceFeatures2 qf = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &q};
        vkGetPhysicalDeviceFeatures2(pd, &qf);
        if (q.pipelineExecutableInfo) {
            pef.pipelineExecutableInfo = VK_TRUE;
            pef.pNext = chain;
            chain = &pef;
            exts[nexts++] = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
            gpu->exec_stats = 1;
        }
    }
    VkPhysicalDeviceShaderFloat16Int8Features f16_on = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
    if (f16.shaderFloat16) {
        f16_on.shaderFloat16 = VK_TRUE;
        f16_on.pNext = chain;
        chain = &f16_on;
    }
    if (env_is_1("KILN_VK_PIPELINE_STATS") && !gpu->exec_stats)
        fprintf(stderr, "kiln: KILN_VK_PIPELINE_STATS=1: %s does not offer %s: no pipeline statistics\n", gpu->props.deviceName,
                VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = gpu->queue_family,
        .queueCount = 1,
        .pQueuePriorities = &prio,
    };
    VkDeviceCreateInfo dci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .pNext = chain,
        .queueCreateInfoCount = 1,
        .pQueueCreateInfos = &qci,
        .enabledExtensionCount = nexts,
        .ppEnabledExtensionNames = exts,
        .pEnabledFeatures = &want,
    };
    double ts = kiln__vk_now_ms();
    gpu->t_start_steps[KILN_VK_STEP_DEVICE_QUERY] = ts - gpu->t_start_origin;
    KILN_VK_TRY(ctx, vkCreateDevice, (pd, &dci, NULL, &gpu->device));
    gpu->t_start_steps[KILN_VK_STEP_CREATE_DEVICE] = kiln__vk_now_ms() - ts;
    vkGetDeviceQueue(gpu->device, gpu->queue_family, 0, &gpu->queue);

    VkCommandPoolCreateInfo cpci = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT | VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
        .queueFamilyIndex = gpu->queue_family,
    };
    KILN_VK_TRY(ctx, vkCreateCommandPool, (gpu->device, &cpci, NULL, &gpu->cmd_pool));
    /* the on-disk pipeline cache: one file per pipeline, read as pipelines are created (vk_pcache.c); the
     * device's own cache (gpu->cache) starts empty and serves only when that is off */
    void *pc_data = NULL;
    size_t pc_size = 0;
    kiln__vk_pcache_load(gpu, &pc_data, &pc_size);
    VkPipelineCacheCreateInfo pcci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO, .initialDataSize = pc_size,
                                      .pInitialData = pc_data};
    VkResult pr = vkCreatePipelineCache(gpu->device, &pcci, NULL, &gpu->cache);
    if (pr != VK_SUCCESS && pc_data) { /* the driver refused the data: start empty */
        gpu->pcache_state = KILN_PIPELINE_CACHE_REJECTED;
        gpu->pcache_loaded = gpu->pcache_file_bytes = 0;
        snprintf(gpu->pcache_note, sizeof gpu->pcache_note, "the driver refused the data (%s)", kiln_vk_result_name(pr));
        pcci.initialDataSize = 0;
        pcci.pInitialData = NULL;
        pr = vkCreatePipelineCache(gpu->device, &pcci, NULL, &gpu->cache);
    }
    free(pc_data);
    KILN_TRY(kiln_vk_check(ctx, pr, "vkCreatePipelineCache"));

    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, NULL);
    VkQueueFamilyProperties q[32];
    if (nq > 32) nq = 32;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, q);
    gpu->timestamp_bits = gpu->queue_family < nq ? q[gpu->queue_family].timestampValidBits : 0;
    gpu->timestamp_period = gpu->props.limits.timestampPeriod;
    if (gpu->timestamp_bits > 0 && gpu->timestamp_period > 0.0f) {
        VkQueryPoolCreateInfo qpci = {
            .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
            .queryType = VK_QUERY_TYPE_TIMESTAMP,
            .queryCount = 2,
        };
        KILN_VK_TRY(ctx, vkCreateQueryPool, (gpu->device, &qpci, NULL, &gpu->timestamps));
    }
    return KILN_OK;
}

static kiln_status no_device(kiln_context *ctx, kiln_gpu *gpu)
{
    if (gpu->unusable[0])
        return kiln__fail(ctx, KILN_ERR_NO_DEVICE,
                          "no Vulkan device found: install a Vulkan driver (e.g. mesa-vulkan-drivers) or use --backend cpu "
                          "(skipped: %s)", gpu->unusable);
    return kiln__fail(ctx, KILN_ERR_NO_DEVICE,
                      "no Vulkan device found: install a Vulkan driver (e.g. mesa-vulkan-drivers) or use --backend cpu");
}

kiln_status kiln__gpu_get(kiln_context *ctx, kiln_gpu **out)
{
    *out = NULL;
    if (ctx->gpu && ctx->gpu->device) {
        *out = ctx->gpu;
        return KILN_OK;
    }
    KILN_TRY(gpu_instance(ctx));
    kiln_gpu *gpu = ctx->gpu;
    int index = ctx->params.device_index;
    if (index >= 0) {
        if ((uint32_t)index >= gpu->nphys)
            return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT,
                              "Vulkan device %d does not exist: kiln sees %u device%s (`kiln devices` lists them)", index,
                              gpu->nphys, gpu->nphys == 1 ? "" : "s");
    } else {
        if (gpu->nphys == 0) return no_device(ctx, gpu);
        index = 0;
        if (gpu->phys[0].type == VK_PHYSICAL_DEVICE_TYPE_CPU && ctx->params.backend != KILN_BACKEND_VULKAN &&
            !env_is_1("KILN_ALLOW_CPU_VULKAN"))
            return kiln__fail(ctx, KILN_ERR_NO_DEVICE,
                              "only a CPU Vulkan implementation was found (%s), which is slower than kiln's CPU path; "
                              "use --backend vulkan or KILN_ALLOW_CPU_VULKAN=1 to use it anyway",
                              gpu->phys[0].info.name);
    }
    if (ctx->gpu_tried)
        return kiln__fail(ctx, KILN_ERR_GPU, "Vulkan device %d (%s) could not be initialised earlier", index,
                          gpu->phys[index].info.name);
    ctx->gpu_tried = 1;
    const double t0 = kiln__vk_now_ms();
    gpu->t_start_origin = t0;
    kiln_status st = create_device(ctx, gpu, index);
    gpu->t_device_ms = kiln__vk_now_ms() - t0;
    if (st != KILN_OK) {
        char msg[sizeof ctx->error];
        snprintf(msg, sizeof msg, "%s", ctx->error);
        destroy_device_level(gpu);
        gpu->chosen = -1;
        return kiln__fail(ctx, st, "Vulkan device %d (%s): %s", index, gpu->phys[index].info.name, msg);
    }
    if (ctx->params.verbose)
        fprintf(stderr, "kiln: using Vulkan device %d: %s (%s)%s\n", index, gpu->phys[index].info.name,
                gpu->phys[index].info.driver, gpu->validation ? ", validation on" : "");
    *out = gpu;
    return KILN_OK;
}

void kiln__gpu_destroy(kiln_gpu *gpu)
{
    if (!gpu) return;
    destroy_device_level(gpu);
    free(gpu->mip16_thr[0]);
    free(gpu->mip16_thr[1]);
    if (gpu->messenger) {
        PFN_vkDestroyDebugUtilsMessengerEXT destroy =
            (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(gpu->instance, "vkDestroyDebugUtilsMessengerEXT");
        if (destroy) destroy(gpu->instance, gpu->messenger, NULL);
    }
    if (gpu->instance) vkDestroyInstance(gpu->instance, NULL);
    free(gpu);
}

int kiln__gpu_wanted(kiln_context *ctx, kiln_status *status)
{
    if (status) *status = KILN_OK;
    if (ctx->params.backend == KILN_BACKEND_CPU) {
        ctx->resolved = KILN_BACKEND_CPU;
        return 0;
    }
    if (ctx->resolved == KILN_BACKEND_VULKAN && ctx->gpu && ctx->gpu->device) return 1;
    if (ctx->resolved == KILN_BACKEND_CPU) return 0; /* AUTO fell back before */
    kiln_gpu *gpu = NULL;
    kiln_status st = kiln__gpu_get(ctx, &gpu);
    if (st == KILN_OK) {
        ctx->resolved = KILN_BACKEND_VULKAN;
        return 1;
    }
    /* explicit requests fail: backend VULKAN, or a device index that does not exist */
    if (ctx->params.backend == KILN_BACKEND_VULKAN || st == KILN_ERR_INVALID_ARGUMENT) {
        if (status) *status = st;
        return 0;
    }
    if (st == KILN_ERR_OUT_OF_MEMORY || st == KILN_ERR_CANCELLED) {
        if (status) *status = st;
        return 0;
    }
    if (ctx->params.verbose) fprintf(stderr, "kiln: %s; running on the CPU\n", ctx->error);
    ctx->error[0] = 0;
    ctx->resolved = KILN_BACKEND_CPU;
    return 0;
}

kiln_status kiln_gpu_list(kiln_context *ctx, kiln_gpu_info *infos, uint32_t capacity, uint32_t *count)
{
    if (count) *count = 0;
    if (!ctx) return KILN_ERR_INVALID_ARGUMENT;
    kiln__clear_error(ctx);
    if (!count) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_gpu_list: count is NULL");
    if (capacity > 0 && !infos) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_gpu_list: infos is NULL");
    KILN_TRY(gpu_instance(ctx));
    for (uint32_t i = 0; i < ctx->gpu->nphys && i < capacity; i++) infos[i] = ctx->gpu->phys[i].info;
    *count = ctx->gpu->nphys;
    return KILN_OK;
}

kiln_backend kiln_context_backend(kiln_context *ctx)
{
    if (!ctx) return KILN_BACKEND_CPU;
    if (ctx->resolved == KILN_BACKEND_AUTO) {
        kiln_status st;
        if (!kiln__gpu_wanted(ctx, &st)) return KILN_BACKEND_CPU;
    }
    return ctx->resolved == KILN_BACKEND_VULKAN ? KILN_BACKEND_VULKAN : KILN_BACKEND_CPU;
}

const kiln_gpu_info *kiln_context_gpu(kiln_context *ctx)
{
    if (kiln_context_backend(ctx) != KILN_BACKEND_VULKAN) return NULL;
    return &ctx->gpu->phys[ctx->gpu->chosen].info;
}

uint32_t kiln__gpu_validation_messages(kiln_context *ctx)
{
    return ctx && ctx->gpu ? kiln_vk_validation_count(ctx->gpu) : 0;
}

int kiln__gpu_validation_active(kiln_context *ctx)
{
    return ctx && ctx->gpu && ctx->gpu->validation;
}

int kiln_vk_subgroup_size_ok(const kiln_gpu *gpu, uint32_t size)
{
    return gpu->size_control && size >= gpu->min_subgroup && size <= gpu->max_subgroup && (size & (size - 1)) == 0;
}

int kiln__gpu_device_is_cpu(kiln_context *ctx, uint32_t index)
{
    if (!ctx || gpu_instance(ctx) != KILN_OK || index >= ctx->gpu->nphys) return 0;
    return ctx->gpu->phys[index].type == VK_PHYSICAL_DEVICE_TYPE_CPU;
}

/* f2f_vkstart.c - where a Vulkan device start goes, step by step, with the raw API (issue 4, helper f2f3):
 * the same calls as kiln's src/gpu/vk_device.c (instance, enumeration, device with kiln's features, command
 * pool, pipeline cache, query pool) and then what an encode's first moments do (a small mapped buffer, a
 * 64 MiB device-local host-visible buffer written by the host, two submits), each step timed on its own.
 *   f2f_vkstart [ext=0|1] [destroy=0|1] [busy=0|1] [feat=0|1]
 * ext=1 (default): vkEnumerateInstanceExtensionProperties before vkCreateInstance (kiln did that to find
 *   VK_KHR_portability_enumeration; the loader loads and unloads every driver for it);
 * destroy=1 (default): tear everything down, timed; 0: _exit(0) with the device alive (as KILN_FAST_EXIT);
 * feat=0: vkCreateDevice with no features and no subgroup-size-control chain (1, default: kiln's);
 * busy=1: a page-fault-heavy CPU job (malloc + touch 512 MiB on all cores but one, as an encode + write do)
 *   timed alone, then again beside the device start (on a thread), to see what the start costs the rest.
 * Per step: ms, minor page faults of the process, threads, and the shared libraries mapped by the step. */
#include <vulkan/vulkan.h>

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* ---- libraries mapped so far (from /proc/self/maps) ---- */
#define MAX_LIBS 512
static char seen[MAX_LIBS][160];
static int nseen;

static void new_libs(char *out, size_t cap)
{
    out[0] = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return;
    char line[1024];
    size_t o = 0;
    int added = 0;
    while (fgets(line, sizeof line, f)) {
        char *path = strchr(line, '/');
        if (!path || !strstr(path, ".so")) continue;
        path[strcspn(path, "\n")] = 0;
        const char *base = strrchr(path, '/') + 1;
        int found = 0;
        for (int i = 0; i < nseen && !found; i++) found = !strcmp(seen[i], base);
        if (found || nseen >= MAX_LIBS) continue;
        snprintf(seen[nseen++], sizeof seen[0], "%s", base);
        if (added++ < 12 && o + strlen(base) + 2 < cap) o += (size_t)snprintf(out + o, cap - o, "%s%s", o ? " " : "", base);
    }
    if (added > 12 && o + 16 < cap) snprintf(out + o, cap - o, " (+%d more)", added - 12);
    fclose(f);
}

static int threads_now(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

static long minflt(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

typedef struct step_clock {
    double t;
    long flt;
    int quiet; /* 1 while the device starts beside the busy job: no /proc reads in between */
} step_clock;

static void step(step_clock *c, const char *name, VkResult r)
{
    const double t = now_ms();
    const long f = minflt();
    if (!c->quiet) {
        char libs[600];
        new_libs(libs, sizeof libs);
        printf("step %-16s %8.2f ms  minflt %6ld  threads %2d  %s%s%s\n", name, t - c->t, f - c->flt, threads_now(),
               r != VK_SUCCESS ? "FAILED " : "", libs[0] ? "libs: " : "", libs);
    }
    c->t = now_ms();
    c->flt = minflt();
}

/* ---- the device start ---- */
typedef struct vk_state {
    int ext, quiet, feat;
    VkInstance inst;
    VkPhysicalDevice pd;
    VkDevice dev;
    VkQueue q;
    uint32_t fam;
    VkCommandPool pool;
    VkPipelineCache cache;
    VkQueryPool qp;
    VkBuffer small, big;
    VkDeviceMemory small_mem, big_mem;
    char name[256];
    double total_ms;
    int ok;
} vk_state;

static int mem_type(const VkPhysicalDeviceMemoryProperties *m, uint32_t bits, VkMemoryPropertyFlags want)
{
    for (uint32_t i = 0; i < m->memoryTypeCount; i++)
        if ((bits & (1u << i)) && (m->memoryTypes[i].propertyFlags & want) == want) return (int)i;
    return -1;
}

static VkResult buffer(vk_state *s, const VkPhysicalDeviceMemoryProperties *m, VkDeviceSize size, VkMemoryPropertyFlags want,
                       VkMemoryPropertyFlags fallback, VkBuffer *b, VkDeviceMemory *mem, void **map)
{
    VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = size,
                              .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                       VK_BUFFER_USAGE_TRANSFER_SRC_BIT};
    VkResult r = vkCreateBuffer(s->dev, &bci, NULL, b);
    if (r != VK_SUCCESS) return r;
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(s->dev, *b, &req);
    int t = mem_type(m, req.memoryTypeBits, want);
    if (t < 0) t = mem_type(m, req.memoryTypeBits, fallback);
    if (t < 0) return VK_ERROR_FEATURE_NOT_PRESENT;
    VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size,
                                .memoryTypeIndex = (uint32_t)t};
    r = vkAllocateMemory(s->dev, &mai, NULL, mem);
    if (r == VK_SUCCESS) r = vkBindBufferMemory(s->dev, *b, *mem, 0);
    if (r == VK_SUCCESS) r = vkMapMemory(s->dev, *mem, 0, VK_WHOLE_SIZE, 0, map);
    return r;
}

static VkResult submit(vk_state *s)
{
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = s->pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
    VkCommandBuffer cb;
    VkResult r = vkAllocateCommandBuffers(s->dev, &ai, &cb);
    if (r != VK_SUCCESS) return r;
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    vkBeginCommandBuffer(cb, &bi);
    if (s->qp) {
        vkCmdResetQueryPool(cb, s->qp, 0, 2);
        vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, s->qp, 0);
    }
    vkCmdFillBuffer(cb, s->big, 0, VK_WHOLE_SIZE, 0x01020304u);
    if (s->qp) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, s->qp, 1);
    vkEndCommandBuffer(cb);
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    r = vkCreateFence(s->dev, &fci, NULL, &fence);
    if (r != VK_SUCCESS) return r;
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
    r = vkQueueSubmit(s->q, 1, &si, fence);
    if (r == VK_SUCCESS) r = vkWaitForFences(s->dev, 1, &fence, VK_TRUE, UINT64_MAX);
    vkDestroyFence(s->dev, fence, NULL);
    vkFreeCommandBuffers(s->dev, s->pool, 1, &cb);
    return r;
}

static void *vk_start(void *user)
{
    vk_state *s = user;
    step_clock c = {now_ms(), minflt(), s->quiet};
    const double t0 = c.t;
    uint32_t api = VK_API_VERSION_1_0;
    VkResult r = vkEnumerateInstanceVersion(&api);
    step(&c, "version", r);
    const char *exts[1];
    uint32_t nexts = 0;
    VkInstanceCreateFlags flags = 0;
    if (s->ext) {
        uint32_t n = 0;
        r = vkEnumerateInstanceExtensionProperties(NULL, &n, NULL);
        VkExtensionProperties *e = calloc(n ? n : 1, sizeof *e);
        if (r == VK_SUCCESS) r = vkEnumerateInstanceExtensionProperties(NULL, &n, e);
        for (uint32_t i = 0; i < n; i++)
            if (!strcmp(e[i].extensionName, "VK_KHR_portability_enumeration")) {
                exts[nexts++] = "VK_KHR_portability_enumeration";
                flags |= 0x00000001; /* VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR */
            }
        free(e);
        step(&c, "instance-ext-enum", r);
    }
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "f2f_vkstart",
                             .apiVersion = api < VK_API_VERSION_1_3 ? api : VK_API_VERSION_1_3};
    VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .flags = flags, .pApplicationInfo = &app,
                               .enabledExtensionCount = nexts, .ppEnabledExtensionNames = exts};
    r = vkCreateInstance(&ci, NULL, &s->inst);
    step(&c, "create-instance", r);
    if (r != VK_SUCCESS) return NULL;
    uint32_t n = 0;
    r = vkEnumeratePhysicalDevices(s->inst, &n, NULL);
    VkPhysicalDevice pds[16];
    if (n > 16) n = 16;
    if (r == VK_SUCCESS || r == VK_INCOMPLETE) r = vkEnumeratePhysicalDevices(s->inst, &n, pds);
    step(&c, "enum-physical", r == VK_INCOMPLETE ? VK_SUCCESS : r);
    if (n == 0) return NULL;
    /* kiln's choice: discrete first */
    int best = 0, best_rank = 99;
    for (uint32_t i = 0; i < n; i++) {
        VkPhysicalDeviceSubgroupProperties sg = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
        VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sg};
        vkGetPhysicalDeviceProperties2(pds[i], &p2);
        VkPhysicalDeviceFeatures f;
        vkGetPhysicalDeviceFeatures(pds[i], &f);
        uint32_t nq = 0;
        vkGetPhysicalDeviceQueueFamilyProperties(pds[i], &nq, NULL);
        int rank = p2.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU     ? 0
                   : p2.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ? 1
                   : p2.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU            ? 4
                                                                                        : 3;
        if (!s->quiet) printf("  device %u: %s (type %d, subgroup %u)\n", i, p2.properties.deviceName, p2.properties.deviceType,
                              sg.subgroupSize);
        if (rank < best_rank) best = (int)i, best_rank = rank, snprintf(s->name, sizeof s->name, "%s", p2.properties.deviceName);
    }
    s->pd = pds[best];
    VkQueueFamilyProperties qf[32];
    uint32_t nq = 32;
    vkGetPhysicalDeviceQueueFamilyProperties(s->pd, &nq, qf);
    s->fam = 0;
    for (uint32_t i = 0; i < nq; i++)
        if ((qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && qf[i].timestampValidBits) {
            s->fam = i;
            break;
        }
    VkPhysicalDeviceMemoryProperties mem;
    vkGetPhysicalDeviceMemoryProperties(s->pd, &mem);
    VkPhysicalDeviceSubgroupSizeControlFeatures scf = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &scf};
    vkGetPhysicalDeviceFeatures2(s->pd, &f2);
    step(&c, "describe", VK_SUCCESS);
    VkPhysicalDeviceFeatures want = {0};
    want.shaderInt64 = f2.features.shaderInt64;
    want.shaderInt16 = f2.features.shaderInt16;
    want.shaderFloat64 = f2.features.shaderFloat64;
    want.textureCompressionBC = f2.features.textureCompressionBC;
    want.textureCompressionETC2 = f2.features.textureCompressionETC2;
    VkPhysicalDeviceSubgroupSizeControlFeatures on = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES,
                                                      .subgroupSizeControl = scf.subgroupSizeControl,
                                                      .computeFullSubgroups = scf.computeFullSubgroups};
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = s->fam,
                                   .queueCount = 1, .pQueuePriorities = &prio};
    VkPhysicalDeviceFeatures none = {0};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                              .pNext = scf.subgroupSizeControl && s->feat ? &on : NULL,
                              .queueCreateInfoCount = 1, .pQueueCreateInfos = &qci, .pEnabledFeatures = s->feat ? &want : &none};
    r = vkCreateDevice(s->pd, &dci, NULL, &s->dev);
    step(&c, "create-device", r);
    if (r != VK_SUCCESS) return NULL;
    vkGetDeviceQueue(s->dev, s->fam, 0, &s->q);
    VkCommandPoolCreateInfo cpci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                    .flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT |
                                             VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                    .queueFamilyIndex = s->fam};
    r = vkCreateCommandPool(s->dev, &cpci, NULL, &s->pool);
    step(&c, "queue+cmd-pool", r);
    VkPipelineCacheCreateInfo pcci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    r = vkCreatePipelineCache(s->dev, &pcci, NULL, &s->cache);
    step(&c, "pipeline-cache", r);
    VkQueryPoolCreateInfo qpci = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                  .queryCount = 2};
    r = vkCreateQueryPool(s->dev, &qpci, NULL, &s->qp);
    step(&c, "query-pool", r);
    void *map = NULL;
    r = buffer(s, &mem, 64 << 10, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
               VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, &s->small, &s->small_mem, &map);
    step(&c, "buffer-64KiB", r);
    r = buffer(s, &mem, 64 << 20, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
               VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, &s->big, &s->big_mem, &map);
    step(&c, "buffer-64MiB", r);
    if (r == VK_SUCCESS && map) memset(map, 7, 64 << 20);
    step(&c, "host-write-64MiB", VK_SUCCESS);
    r = submit(s);
    step(&c, "first-submit", r);
    r = submit(s);
    step(&c, "second-submit", r);
    s->total_ms = now_ms() - t0;
    s->ok = 1;
    return NULL;
}

static void vk_destroy(vk_state *s)
{
    step_clock c = {now_ms(), minflt(), 0};
    const double t0 = c.t;
    if (s->dev) {
        vkDeviceWaitIdle(s->dev);
        vkDestroyBuffer(s->dev, s->small, NULL);
        vkFreeMemory(s->dev, s->small_mem, NULL);
        vkDestroyBuffer(s->dev, s->big, NULL);
        vkFreeMemory(s->dev, s->big_mem, NULL);
        step(&c, "destroy-buffers", VK_SUCCESS);
        vkDestroyQueryPool(s->dev, s->qp, NULL);
        vkDestroyPipelineCache(s->dev, s->cache, NULL);
        vkDestroyCommandPool(s->dev, s->pool, NULL);
        vkDestroyDevice(s->dev, NULL);
        step(&c, "destroy-device", VK_SUCCESS);
    }
    if (s->inst) vkDestroyInstance(s->inst, NULL);
    step(&c, "destroy-instance", VK_SUCCESS);
    printf("teardown total %.2f ms\n", now_ms() - t0);
}

/* ---- a page-fault-heavy CPU job on all cores but one ---- */
typedef struct busy_job {
    size_t bytes;
} busy_job;

static void *busy_worker(void *user)
{
    busy_job *b = user;
    for (int rep = 0; rep < 4; rep++) {
        volatile uint8_t *p = malloc(b->bytes / 4); /* volatile: the stores (and the malloc) stay */
        if (!p) return NULL;
        for (size_t i = 0; i < b->bytes / 4; i += 4096) p[i] = (uint8_t)i;
        free((void *)p); /* glibc: large blocks are munmap'ed: the next round faults again */
    }
    return NULL;
}

static double busy_run(int nthreads, size_t bytes_total)
{
    pthread_t th[256];
    busy_job b = {bytes_total / (size_t)nthreads};
    const double t0 = now_ms();
    int started = 0;
    for (int i = 0; i < nthreads && i < 256; i++)
        if (pthread_create(&th[started], NULL, busy_worker, &b) == 0) started++;
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    return now_ms() - t0;
}

int main(int argc, char **argv)
{
    int ext = 1, destroy = 1, busy = 0, feat = 1;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "ext=", 4)) ext = atoi(argv[i] + 4);
        else if (!strncmp(argv[i], "destroy=", 8)) destroy = atoi(argv[i] + 8);
        else if (!strncmp(argv[i], "busy=", 5)) busy = atoi(argv[i] + 5);
        else if (!strncmp(argv[i], "feat=", 5)) feat = atoi(argv[i] + 5);
        else {
            fprintf(stderr, "usage: f2f_vkstart [ext=0|1] [destroy=0|1] [busy=0|1] [feat=0|1]\n");
            return 2;
        }
    }
    char libs[600];
    new_libs(libs, sizeof libs); /* what the process mapped before main: the baseline */
    vk_state s;
    memset(&s, 0, sizeof s);
    s.ext = ext;
    s.feat = feat;
    const double t0 = now_ms();
    if (busy) {
        const int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
        const int nb = cores > 2 ? cores - 1 : 1;
        const size_t bytes = (size_t)512 << 20;
        double alone[3];
        for (int i = 0; i < 3; i++) alone[i] = busy_run(nb, bytes);
        s.quiet = 1;
        pthread_t th;
        const double tb = now_ms();
        int started = pthread_create(&th, NULL, vk_start, &s) == 0;
        const double beside = busy_run(nb, bytes);
        const double tbusy = now_ms() - tb;
        if (started) pthread_join(th, NULL);
        printf("busy: %d threads touching 512 MiB: alone %.2f %.2f %.2f ms; beside the device start %.2f ms (device start %.2f "
               "ms, %s; both done after %.2f ms)\n",
               nb, alone[0], alone[1], alone[2], beside, s.total_ms, s.name, now_ms() - tb);
        (void)tbusy;
    } else {
        vk_start(&s);
        printf("device start total %.2f ms (%s), ext=%d\n", s.total_ms, s.name, ext);
    }
    fflush(stdout);
    if (!destroy) _exit(0);
    vk_destroy(&s);
    printf("process total in main %.2f ms\n", now_ms() - t0);
    return s.ok ? 0 : 1;
}

/* gpu_encode_etc2_seed.c - the ETC2 colour seed design (betsy, ../shared/seeds/betsy-how-it-works.md; issue 4):
 * gpu_strategy 1 for ETC2 RGB and the colour half of ETC2 RGBA (the alpha half is the EAC seed, gpu_encode_etc.c).
 *
 * One submission, five kinds of dispatch over the image's RGBA8 texels (edge texels replicated):
 *   1. ETC1 modes: shaders/enc_etc1_seed.comp, betsy's 4 invocations per block (flip x individual /
 *      differential), the ETC1 seed as it is (quality = its search radius);
 *   2. planar: shaders/enc_etc2_seed_planar.comp, 16 invocations per block (4 origins x 2 x 2 H / V texel
 *      choices, each extrapolated and by linear regression), shared-memory reduction;
 *   3. T/H pass 1: shaders/enc_etc2_seed_kmeans.comp, the 120 endpoint pairs of a block by k-means, 120
 *      invocations per block, 8 blocks per workgroup of 960;
 *   4. T/H pass 2: shaders/enc_etc2_seed_th.comp, 960 invocations per block (120 pairs x 8 distances, T both
 *      ways and H in the same invocation), parallel reduction in shared memory;
 *      3 and 4 run in chunks of at most 65536 blocks so the pair buffer stays at 30 MB (KILN_GPU_ETC2_SEED_CHUNK=N
 *      in the environment: N, for the tests);
 *   5. select: shaders/enc_etc2_seed_select.comp, one invocation per block keeps the lowest error of the ETC1,
 *      T/H and planar winners (ties in that order) and writes the block.
 * The error everywhere is betsy's: plain squared RGB difference (params->perceptual is not used). Every shader
 * has the specialisation constant PRELOAD (1: texels staged in shared memory, or registers for the select
 * pass; 0: read from the source buffer at every use), chosen by KILN_GPU_ETC_PRELOAD=0/1 (default 1); both give
 * the same bytes (tests/unit/test_gpu_etc2_seed.c). */
#include "gpu/gpu_encode_etc2_seed.h"

#include "gpu/gpu_encode.h"
#include "gpu/vk.h"

#include <stdlib.h>
#include <string.h>

#define SEED_CHUNK 65536u /* blocks per k-means / T/H dispatch pair: 120 words each in the pair buffer */

/* The 8-bit view the CPU driver's blocks see (encode.c fetch_texel; gpu_encode_etc.c fetch_px). */
typedef struct rgba8_view {
    const kiln_image *img;
    uint8_t *out;
} rgba8_view;

static void view_rows(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    const rgba8_view *v = user;
    const size_t w = v->img->width;
    for (size_t i = begin * w * 4; i < end * w * 4; i++) {
        uint8_t o;
        if (v->img->type == KILN_PIXEL_U16) {
            o = (uint8_t)(((uint32_t)((const uint16_t *)v->img->pixels)[i] * 255u + 32767u) / 65535u);
        } else {
            float f = ((const float *)v->img->pixels)[i];
            f = f != f ? 0.0f : f < 0.0f ? 0.0f : f > 1.0f ? 1.0f : f;
            o = (uint8_t)(f * 255.0f + 0.5f);
        }
        v->out[i] = o;
    }
}

typedef struct seed_push {
    uint32_t width, height, bx, nblocks, block0, nchunk, pad0, pad1;
} seed_push;

kiln_status kiln__gpu_etc2_seed_colour(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                                       uint32_t subgroup_size, uint8_t *dst, size_t stride, size_t off, double *ms_out)
{
    if (!img || !img->pixels || img->width == 0 || img->height == 0 || !params || !dst || stride < 8 || off + 8 > stride)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "GPU ETC2 seed colour: empty image, no parameters or a bad layout");
    if (params->dither)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "the seed ETC2 design does not dither; --backend auto encodes it on the CPU");
    kiln_gpu *gpu;
    KILN_TRY(kiln__gpu_get(ctx, &gpu));
    const VkPhysicalDeviceLimits *lim = &gpu->props.limits;
    if (lim->maxComputeWorkGroupInvocations < 960 || lim->maxComputeWorkGroupSize[0] < 960)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "the seed ETC2 design needs workgroups of 960 invocations; %s allows %u",
                          gpu->props.deviceName, lim->maxComputeWorkGroupInvocations);
    if (subgroup_size && gpu->size_control) {
        /* a required subgroup size must leave room for 960 invocations in maxComputeWorkgroupSubgroups subgroups */
        VkPhysicalDeviceSubgroupSizeControlPropertiesEXT sc = {
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES_EXT};
        VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sc};
        vkGetPhysicalDeviceProperties2(gpu->physical, &p2);
        if ((uint64_t)subgroup_size * sc.maxComputeWorkgroupSubgroups < 960u)
            return kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                              "the seed ETC2 design's workgroups of 960 invocations cannot run in subgroups of %u on %s "
                              "(at most %u subgroups per workgroup)",
                              subgroup_size, gpu->props.deviceName, sc.maxComputeWorkgroupSubgroups);
    }
    int preload = 1;
    const char *pe = getenv("KILN_GPU_ETC_PRELOAD");
    if (pe && pe[0] == '0') preload = 0;

    const uint32_t w = img->width, h = img->height, bx = (w + 3) / 4, by = (h + 3) / 4;
    const uint64_t nblocks = (uint64_t)bx * by;
    /* KILN_GPU_ETC2_SEED_CHUNK=N: N blocks per chunk instead (tests: many chunks on a small image) */
    uint64_t cmax = SEED_CHUNK;
    const char *ce = getenv("KILN_GPU_ETC2_SEED_CHUNK");
    if (ce && atoi(ce) > 0 && (uint64_t)atoi(ce) < cmax) cmax = (uint64_t)atoi(ce);
    const uint64_t chunk = nblocks < cmax ? nblocks : cmax, nchunks = (nblocks + chunk - 1) / chunk;
    const uint64_t in_bytes = (uint64_t)w * h * 4u, etc1_bytes = nblocks * 8u, cand_bytes = nblocks * 32u,
                   pair_bytes = chunk * 480u;
    const uint64_t range = lim->maxStorageBufferRange;
    if (in_bytes > range || cand_bytes > range || pair_bytes > range || nblocks > UINT32_MAX / 64u || in_bytes > SIZE_MAX ||
        nblocks > (SIZE_MAX - off) / stride)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                          "GPU ETC2 seed of %ux%u: %llu bytes of input exceed the device's storage buffer range (%llu)", w, h,
                          (unsigned long long)in_bytes, (unsigned long long)range);

    const uint32_t spec[1] = {(uint32_t)preload};
    const kiln_vk_pipeline *pe1, *pp, *pk, *pt, *ps;
    kiln_vk_pipeline_desc d = {.local_size = 64, .spec = spec, .nspec = 1, .subgroup_size = subgroup_size};
    d.shader = "enc_etc1_seed";
    d.nbindings = 2;
    d.push_size = 5 * 4;
    KILN_TRY(kiln_vk_pipeline_get(ctx, gpu, &d, &pe1));
    d.push_size = sizeof(seed_push);
    d.shader = "enc_etc2_seed_planar";
    KILN_TRY(kiln_vk_pipeline_get(ctx, gpu, &d, &pp));
    d.shader = "enc_etc2_seed_select";
    d.nbindings = 4;
    KILN_TRY(kiln_vk_pipeline_get(ctx, gpu, &d, &ps));
    d.local_size = 960;
    d.shader = "enc_etc2_seed_kmeans";
    d.nbindings = 2;
    KILN_TRY(kiln_vk_pipeline_get(ctx, gpu, &d, &pk));
    d.shader = "enc_etc2_seed_th";
    d.nbindings = 3;
    KILN_TRY(kiln_vk_pipeline_get(ctx, gpu, &d, &pt));

    kiln_vk_io in, out;
    kiln_vk_buffer etc1, cand, pairs;
    memset(&in, 0, sizeof in);
    memset(&out, 0, sizeof out);
    memset(&etc1, 0, sizeof etc1);
    memset(&cand, 0, sizeof cand);
    memset(&pairs, 0, sizeof pairs);
    kiln_vk_cmd cmd;
    memset(&cmd, 0, sizeof cmd);
    kiln_status st = kiln_vk_io_create(ctx, gpu, in_bytes, 0, &in);
    if (st == KILN_OK) st = kiln_vk_io_create(ctx, gpu, etc1_bytes, 1, &out);
    if (st == KILN_OK) st = kiln_vk_buffer_create(ctx, gpu, etc1_bytes, KILN_VK_MEM_DEVICE, &etc1);
    if (st == KILN_OK) st = kiln_vk_buffer_create(ctx, gpu, cand_bytes, KILN_VK_MEM_DEVICE, &cand);
    if (st == KILN_OK) st = kiln_vk_buffer_create(ctx, gpu, pair_bytes, KILN_VK_MEM_DEVICE, &pairs);
    if (st == KILN_OK) {
        if (img->type == KILN_PIXEL_U8) {
            memcpy(kiln_vk_io_map(&in), img->pixels, (size_t)in_bytes);
        } else {
            rgba8_view v = {img, kiln_vk_io_map(&in)};
            st = kiln__parallel_for(ctx, h, 16, view_rows, &v);
        }
    }
    if (st == KILN_OK) st = kiln_vk_buffer_flush(ctx, gpu, in.direct ? &in.dev : &in.staging);
    if (st == KILN_OK) st = kiln_vk_cmd_begin(ctx, gpu, (uint32_t)(3u + 2u * nchunks), &cmd);
    double ms = 0.0;
    if (st == KILN_OK) {
        kiln_vk_cmd_upload(&cmd, &in, in_bytes);
        kiln_vk_cmd_timestamp(&cmd, 0);
        const uint32_t push1[5] = {w, h, bx, (uint32_t)nblocks, (uint32_t)params->quality};
        seed_push push = {w, h, bx, (uint32_t)nblocks, 0, 0, 0, 0};
        kiln_vk_binding b1[2] = {{.buffer = in.dev.buffer, .range = in_bytes}, {.buffer = etc1.buffer, .range = etc1_bytes}};
        kiln_vk_binding bp[2] = {{.buffer = in.dev.buffer, .range = in_bytes}, {.buffer = cand.buffer, .range = cand_bytes}};
        kiln_vk_binding bk[2] = {{.buffer = in.dev.buffer, .range = in_bytes}, {.buffer = pairs.buffer, .range = pair_bytes}};
        kiln_vk_binding bt[3] = {{.buffer = in.dev.buffer, .range = in_bytes},
                                 {.buffer = pairs.buffer, .range = pair_bytes},
                                 {.buffer = cand.buffer, .range = cand_bytes}};
        kiln_vk_binding bs[4] = {{.buffer = in.dev.buffer, .range = in_bytes},
                                 {.buffer = etc1.buffer, .range = etc1_bytes},
                                 {.buffer = cand.buffer, .range = cand_bytes},
                                 {.buffer = out.dev.buffer, .range = etc1_bytes}};
        /* ETC1: 4 invocations per block; planar: 16 (they write other buffers / words than the T/H passes) */
        st = kiln_vk_cmd_dispatch_linear(ctx, &cmd, pe1, b1, push1, (nblocks + 15u) / 16u * 64u);
        if (st == KILN_OK) st = kiln_vk_cmd_dispatch_linear(ctx, &cmd, pp, bp, &push, nblocks * 16u);
        for (uint64_t c = 0; c < nchunks && st == KILN_OK; c++) {
            push.block0 = (uint32_t)(c * chunk);
            push.nchunk = (uint32_t)(nblocks - c * chunk < chunk ? nblocks - c * chunk : chunk);
            /* k-means: 120 invocations per block, 8 blocks per workgroup; T/H: a workgroup of 960 per block */
            st = kiln_vk_cmd_dispatch_linear(ctx, &cmd, pk, bk, &push, ((uint64_t)push.nchunk + 7u) / 8u * 960u);
            kiln_vk_cmd_barrier(&cmd);
            if (st == KILN_OK) st = kiln_vk_cmd_dispatch_linear(ctx, &cmd, pt, bt, &push, (uint64_t)push.nchunk * 960u);
            kiln_vk_cmd_barrier(&cmd); /* the next chunk's k-means rewrites the pairs */
        }
        if (st == KILN_OK) st = kiln_vk_cmd_dispatch_linear(ctx, &cmd, ps, bs, &push, nblocks);
        kiln_vk_cmd_timestamp(&cmd, 1);
        kiln_vk_cmd_download(&cmd, &out, etc1_bytes);
        if (st == KILN_OK) st = kiln_vk_cmd_submit(ctx, &cmd, &ms);
    }
    kiln_vk_cmd_free(&cmd);
    if (st == KILN_OK) st = kiln_vk_buffer_invalidate(ctx, gpu, out.direct ? &out.dev : &out.staging);
    if (st == KILN_OK) {
        const uint8_t *o = kiln_vk_io_map(&out);
        if (stride == 8 && off == 0)
            memcpy(dst, o, (size_t)etc1_bytes);
        else
            for (uint64_t i = 0; i < nblocks; i++) memcpy(dst + i * stride + off, o + i * 8u, 8);
    }
    kiln_vk_io_destroy(gpu, &in);
    kiln_vk_io_destroy(gpu, &out);
    kiln_vk_buffer_destroy(gpu, &etc1);
    kiln_vk_buffer_destroy(gpu, &cand);
    kiln_vk_buffer_destroy(gpu, &pairs);
    if (st == KILN_OK) *ms_out = ms;
    return st;
}

/* gpu_etc2_th.c - the ETC2 T / H pass on the GPU (shaders/enc_etc2_th.comp); see gpu_etc2_th.h.
 *
 * Three dispatches (one invocation per block each): reset a list, then the gate and th_bound of every block,
 * which lists the blocks to search (the others are copied through), then the search of the listed blocks only,
 * so the subgroups of the search are dense. The shader replays the CPU's kiln__etc2_search_th
 * (src/codec/etc2_enc.c) - the gate by quality, the th_bound pruning, the T / H search pruned at the incoming
 * error, and on improvement the reselect and pack - with the same integer operations and the CPU's double
 * operations in the same order (precise, no contraction, correctly rounded division and square root; see the
 * shader's header). Needs shaderFloat64 and shaderInt64 (else KILN_ERR_UNSUPPORTED).
 *
 * Buffers: the RGBA8 image (binding 0), the incoming kiln_etc2_gpu_block array (binding 1), the outgoing
 * one (binding 2; every block is written, changed or not) and the list (binding 3, device-only: a count and
 * block indices; its order depends on the atomics, the bytes do not). th_bound's per-weight constants (sqrt of the
 * channel weights and the unit grey axis) are computed here with the CPU's operations and passed as the
 * doubles' bits. The default shader is enc_etc2_th_unroll.comp: th_eval's pixel loops unrolled (H100, 2026-11-25,
 * bench/gpu_etc2_th 4096^2: normal 37.6 ms vs 54.5 rolled, high 37.8 vs 43.1, fast and max equal);
 * KILN_GPU_ETC2_TH_UNROLL=0 in the environment picks enc_etc2_th.comp, the same code rolled (bench/gpu_etc2_th
 * compares both; the tests check both).
 *
 * kiln__gpu_etc2_th_plan_make / _record: the same pipelines, push constants and dispatches on buffers already on
 * the device (the mip chain + encode path, gpu_mip_encode_etc.inc, helper etc2res); kiln__gpu_etc2_th records its
 * three dispatches through them, so both paths run the same code.
 *
 * The default (helper thlanes, issue 4): the gate (phase 0, enc_etc2_th_lanes.comp) also computes a listed block's
 * partitions (the double-precision part of the search: principal axis, 2-means costs, Lloyd) into its outgoing state,
 * and the search (phase 1, enc_etc2_th_lanes.comp) reads them before it writes the block (KILN_GPU_ETC2_TH_PREP=1;
 * H100 4096^2 max: T/H 82.9 ms vs 103.4, normal 13.6 vs 20.2). KILN_GPU_ETC2_TH_PREP=0: the one-invocation design
 * (enc_etc2_th_unroll.comp / enc_etc2_th.comp, each invocation sorts its block's pixels itself). KILN_GPU_ETC2_TH_LANES=L
 * (2, 4, 8, 16) ran the search with L lanes per block, reduced through shared memory; slower on the H100
 * (docs/PERFORMANCE.md), removed (helper etc2th, 2026-11-26: the knob accepts 1 only, the shader code is gone too).
 * Same bytes in every configuration (test_gpu_etc2_th's lane_counts).
 *
 * Search variants (helper etc2max, issue 4; the shader's header says what each does; same bytes in every combination,
 * test_gpu_etc2_th's search_variants): KILN_GPU_ETC2_TH_FLAT (the one-lane search over the gate's partitions as one
 * state-machine loop of th_eval calls), _FASTPIX (closed-form pixel errors), _CHECK (the limit test every C pixels),
 * _CACHE (centre data reused), _PACKED (packed pixels, gate and search), _WG (workgroup size, one lane); the defaults
 * are the TH_*_DEFAULT below (bench/gpu_etc2_th --cfg measures them).
 *
 * The pooled search (helper etc2th, issue 4; KILN_GPU_ETC2_TH_POOL, the default at max): a workgroup's blocks share their
 * partition searches (in stages: first eval set, then one stage per recentring round) and max's +-1 neighbours over all
 * its invocations (the shader's th_pool); H100 4096^2 max: T/H 22.0 ms vs 47.2. The pool's eval sets run fused (helper etc2m,
 * 2026-11-27: the shader's eval_set_fused, one pass over the pixels for the set's T / H candidates; ETC2 RGB 4096^2 whole
 * encoder max 36.91 -> 29.32 ms with workgroup 64 and, at max, PACKED; high 26.32 -> 17.33; RGB A1 max 33.37 -> 27.65; same
 * bytes). */
#include "gpu/gpu_etc2_th.h"

#include "codec/etc_enc.h"
#include "gpu/vk.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(kiln_etc2_gpu_block) == 16, "kiln_etc2_gpu_block is 4 words on the GPU");

typedef struct th_push {
    uint32_t width, height, blocks_x, nblocks;
    uint32_t w[3], quality;
    uint32_t a1, alpha_threshold, zero, pad;
    uint32_t sw[3][2]; /* doubles as (low word, high word): GLSL packDouble2x32 order */
    uint32_t su[3][2];
} th_push;

static void put_double(uint32_t out[2], double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    out[0] = (uint32_t)u;
    out[1] = (uint32_t)(u >> 32);
}

_Static_assert(sizeof(th_push) == sizeof(((kiln__gpu_etc2_th_plan *)0)->push), "th_push is the plan's push words");

/* The workgroup size of the T / H pipelines with SMEM (enc_etc2_th.glsl sizes its shared memory by 64) */
#define TH_LANES_WG 64u
/* KILN_GPU_ETC2_TH_LANES / _PREP unset: invocations per block of the search, the gate computes the partitions
 * (H100, 2026-11-25: 1:1 fastest of 1:0, 1:1, 2:1, 4:1, 8:1, 16:1, 4:0, 8:0 at max, high and normal) */
#define TH_LANES_DEFAULT 1u
#define TH_PREP_DEFAULT 1u
/* The search variants of enc_etc2_th_lanes.comp (helper etc2max; the shader's header says what they do; same bytes):
 * KILN_GPU_ETC2_TH_FLAT=0|1 (1 lane with the gate's partitions only), KILN_GPU_ETC2_TH_FASTPIX=0|1,
 * KILN_GPU_ETC2_TH_CHECK=1|2|4|8|16, KILN_GPU_ETC2_TH_CACHE=0|1, KILN_GPU_ETC2_TH_PACKED=0|1 (also the gate),
 * KILN_GPU_ETC2_TH_WG=32|64|128|256 (the workgroup size of every pipeline of the pass; with 1 lane only),
 * KILN_GPU_ETC2_TH_SMEM=0|1 (th_eval's centre data in shared memory; workgroup size 64). */
/* Defaults from the H200 run of 2026-11-26 02:10 UTC (bench/gpu_etc2_th --size 4096 --quality 3 --cfg ..., T/H pass alone, rock
 * tiled, kernel min ms): before 84.86; FASTPIX alone 69.63 (the fastest measured); FLAT alone 72.78; CACHE alone 90.41;
 * PACKED alone 87.76; FLAT + FASTPIX + CACHE 85.08 and at high 32.27 vs 23.45 before (the search pipeline then needs 255
 * registers, 242 before: the combinations spill). Lead's H200 run of 02:46 UTC, same command: max default (FASTPIX) 69.47,
 * old code 85.39, FASTPIX + workgroup 128 65.94, FLAT + FASTPIX 76.90, SMEM 86.22; high (--quality 2): FASTPIX 29.55 vs old
 * code 23.67: so FASTPIX at max only (and workgroup 128 there, until the pooled search's eval sets were fused: H100 2026-11-27
 * 07:54 UTC, ETC2 RGB max 4096^2 whole encoder 30.13 / 30.10 ms at 128 vs 29.13 / 29.13 at 64 with a first, opaque-only
 * version at 183 registers; 08:15 UTC, the final one at 205: 30.76 / 30.75 vs 29.81 / 29.87: 64 everywhere now; helper etc2m). */
#define TH_FLAT_DEFAULT 0u
#define TH_FASTPIX_DEFAULT 1u
#define TH_CHECK_DEFAULT 1u
#define TH_CACHE_DEFAULT 0u
#define TH_PACKED_DEFAULT 0u
/* at max PACKED since the pool's eval sets are fused (helper etc2m; H100 2026-11-27 08:15 UTC, ETC2 RGB max 4096^2 whole
 * encoder: 29.37 / 29.40, 29.32 / 29.41 ms vs 29.81 / 29.87, 29.87 / 29.87 unpacked; search 205 -> 159 registers, gate 128 -> 80) */
#define TH_PACKED_MAX_DEFAULT 1u
#define TH_WG_DEFAULT 64u
#define TH_SMEM_DEFAULT 0u
/* KILN_GPU_ETC2_TH_POOL=0|1 (helper etc2th): the search's partitions (in stages: first eval set, then one stage per
 * recentring round) and max's +-1 neighbours of a workgroup's blocks pooled over its invocations (the shader's th_pool).
 * H100, 2026-11-26 15:08 UTC, T/H pass alone at max, rock 4096^2: 47.24 ms before (one invocation per block), 22.03 pooled
 * in stages (29.52 pooled without the stages, 30.32 / 25.91 with the pixels read from shared memory: removed); at max. */
#define TH_POOL_DEFAULT 1u /* at high and max: H100 2026-11-26 19:18 UTC, ETC2 RGB high 4096^2 27.32 ms vs 30.66 / 30.52 */
/* Exact work reductions (helper etc2fast, issue 4; the shader's header says why each gives the same bytes):
 * KILN_GPU_ETC2_TH_DEDUP=0|1 (the gate marks partitions whose quantised centres repeat an earlier one's as duplicates;
 * needs the gate's partitions, PREP = 1), KILN_GPU_ETC2_TH_RECENT=0|1 (a recentring round that gives the local best's
 * colours again stops the recentring instead of re-evaluating them). */
#define TH_DEDUP_DEFAULT 1u /* at max (below: 0) */
#define TH_RECENT_DEFAULT 1u /* at max (below: 0) */

/* an environment knob: unset or empty -> def; else one of the `n` allowed values (kiln status on anything else) */
static kiln_status env_choice(kiln_context *ctx, const char *name, const uint32_t *allowed, size_t n, uint32_t def, uint32_t *out)
{
    *out = def;
    const char *e = getenv(name);
    if (!e || !e[0]) return KILN_OK;
    char *end = NULL;
    unsigned long v = strtoul(e, &end, 10);
    for (size_t i = 0; i < n && !*end; i++)
        if (v == allowed[i]) {
            *out = (uint32_t)v;
            return KILN_OK;
        }
    return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "%s=%s: not one of the allowed values (%u..%u)", name, e, allowed[0],
                      allowed[n - 1]);
}

kiln_status kiln__gpu_etc2_th_plan_make(kiln_context *ctx, const kiln_encode_params *params, int a1, uint32_t subgroup_size,
                                        kiln__gpu_etc2_th_plan *out)
{
    memset(out, 0, sizeof *out);
    if (!params)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "GPU ETC2 T/H pass: no parameters");
    if (params->quality < KILN_QUALITY_FAST || params->quality > KILN_QUALITY_MAX)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "GPU ETC2 T/H pass: unknown quality %d", (int)params->quality);
    kiln_gpu *gpu;
    KILN_TRY(kiln__gpu_get(ctx, &gpu));
    VkPhysicalDeviceFeatures f;
    vkGetPhysicalDeviceFeatures(gpu->physical, &f);
    if (!f.shaderFloat64 || !f.shaderInt64)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                          "the GPU ETC2 T/H pass needs 64-bit floats and integers in shaders; %s lacks %s", gpu->props.deviceName,
                          !f.shaderFloat64 ? "shaderFloat64" : "shaderInt64");

    th_push push;
    memset(&push, 0, sizeof push);
    int wt[3];
    if (params->perceptual) {
        wt[0] = ETC_PW_R;
        wt[1] = ETC_PW_G;
        wt[2] = ETC_PW_B;
    } else {
        wt[0] = wt[1] = wt[2] = 1;
    }
    /* th_bound's constants, with its operations (etc2_enc.c) */
    double sw[3];
    for (int ch = 0; ch < 3; ch++) sw[ch] = sqrt((double)wt[ch]);
    double ul = sqrt(sw[0] * sw[0] + sw[1] * sw[1] + sw[2] * sw[2]);
    for (int ch = 0; ch < 3; ch++) {
        push.w[ch] = (uint32_t)wt[ch];
        put_double(push.sw[ch], sw[ch]);
        put_double(push.su[ch], sw[ch] / ul);
    }
    push.quality = (uint32_t)params->quality;
    push.a1 = a1 ? 1u : 0u;
    push.alpha_threshold = params->alpha_threshold;

    /* KILN_GPU_ETC2_TH_UNROLL=0: the build of the shader with th_eval's pixel loops rolled (same bytes; bench/) */
    const char *ue = getenv("KILN_GPU_ETC2_TH_UNROLL");
    const char *shader = ue && ue[0] == '0' ? "enc_etc2_th" : "enc_etc2_th_unroll";
    /* KILN_GPU_ETC2_TH_LANES=L: the search with L invocations per block (enc_etc2_th_lanes.comp), 1 = one per block */
    /* At FAST the partition pre-pass costs more than the search it feeds (H100 2026-11-25 19:00 UTC, T/H pass
     * alone at 4096^2: 1.62 ms without, 15.64 ms with it), so the default keeps it for the higher qualities. */
    uint32_t lanes = TH_LANES_DEFAULT, prep = params->quality > KILN_QUALITY_FAST ? TH_PREP_DEFAULT : 0u;
    const char *le = getenv("KILN_GPU_ETC2_TH_LANES");
    if (le && le[0]) {
        char *end = NULL;
        unsigned long v = strtoul(le, &end, 10);
        /* 2, 4, 8, 16 lanes per block lost on the H100 (1:1 82.9 ms vs 92.6-187.5 at max, 2026-11-25) and their lavapipe
         * tests cost CI time: removed (helper etc2th, 2026-11-26; the shader's LANES > 1 code is no longer reached) */
        if (*end || v != 1)
            return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT,
                              "KILN_GPU_ETC2_TH_LANES=%s: expected 1 (several lanes per block were removed: slower)", le);
        lanes = (uint32_t)v;
        prep = lanes > 1;
    }
    /* KILN_GPU_ETC2_TH_PREP=1: the gate computes the partitions, the lanes search loads them (also with one lane);
     * 0: every lane sorts the pixels itself (lanes > 1; one lane: the one-invocation shader). Unset: 1 when
     * KILN_GPU_ETC2_TH_LANES > 1 is set, 0 when it is 1, TH_PREP_DEFAULT when neither is set. */
    const char *pe = getenv("KILN_GPU_ETC2_TH_PREP");
    if (pe && pe[0]) {
        if ((pe[0] != '0' && pe[0] != '1') || pe[1])
            return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "KILN_GPU_ETC2_TH_PREP=%s: expected 0 or 1", pe);
        prep = pe[0] == '1';
    }
    static const uint32_t bits[2] = {0, 1}, checks[5] = {1, 2, 4, 8, 16}, wgs[4] = {32, 64, 128, 256};
    uint32_t flat, fastpix, check, cache, packed, wg, smem;
    KILN_TRY(env_choice(ctx, "KILN_GPU_ETC2_TH_FLAT", bits, 2, TH_FLAT_DEFAULT, &flat));
    KILN_TRY(env_choice(ctx, "KILN_GPU_ETC2_TH_FASTPIX", bits, 2, params->quality >= KILN_QUALITY_MAX ? TH_FASTPIX_DEFAULT : 0u,
                        &fastpix));
    KILN_TRY(env_choice(ctx, "KILN_GPU_ETC2_TH_CHECK", checks, 5, TH_CHECK_DEFAULT, &check));
    KILN_TRY(env_choice(ctx, "KILN_GPU_ETC2_TH_CACHE", bits, 2, TH_CACHE_DEFAULT, &cache));
    KILN_TRY(env_choice(ctx, "KILN_GPU_ETC2_TH_PACKED", bits, 2,
                        params->quality >= KILN_QUALITY_MAX ? TH_PACKED_MAX_DEFAULT : TH_PACKED_DEFAULT, &packed));
    KILN_TRY(env_choice(ctx, "KILN_GPU_ETC2_TH_WG", wgs, 4, TH_WG_DEFAULT, &wg));
    KILN_TRY(env_choice(ctx, "KILN_GPU_ETC2_TH_SMEM", bits, 2, TH_SMEM_DEFAULT, &smem));
    uint32_t pool;
    KILN_TRY(env_choice(ctx, "KILN_GPU_ETC2_TH_POOL", bits, 2, params->quality >= KILN_QUALITY_HIGH ? TH_POOL_DEFAULT : 0u, &pool));
    uint32_t dedup, recent;
    /* on at max only: at high the whole ETC2 RGB encoder ran 46.2 ms with them vs 42.0 without (H100, 2026-11-26
     * 08:42 UTC, 4096^2), at max 86.9 vs 107.0 */
    const int th_max = params->quality >= KILN_QUALITY_MAX;
    KILN_TRY(env_choice(ctx, "KILN_GPU_ETC2_TH_DEDUP", bits, 2, th_max ? TH_DEDUP_DEFAULT : 0u, &dedup));
    KILN_TRY(env_choice(ctx, "KILN_GPU_ETC2_TH_RECENT", bits, 2, th_max ? TH_RECENT_DEFAULT : 0u, &recent));
    if (lanes != 1 || smem) wg = TH_LANES_WG; /* the lanes search and SMEM size their shared memory by TH_LANES_WG */
    if (lanes != 1 || !prep) flat = 0; /* the flat search is the one-lane search over the gate's partitions */
    /* the pool: one lane over the gate's partitions, not with FLAT or SMEM; its shared memory (28 KiB at 128) caps the
     * workgroup at 128 */
    if (lanes != 1 || !prep || flat || smem) pool = 0;
    if (pool && wg > 128) wg = 128;
    out->lanes = lanes;
    out->prep = prep;
    out->flat = flat;
    out->fastpix = fastpix;
    out->check = check;
    out->cache = cache;
    out->packed = packed;
    out->smem = smem;
    out->pool = pool;
    const int lanes_shader = lanes > 1 || prep;
    for (uint32_t ph = 0; ph < 3; ph++) {
        /* the gate: one pipeline whatever the lanes and search variants */
        /* constant 7: CACHE | SMEM << 1 | DEDUP << 2 (gate and search) | RECENT << 3 | POOL << 4 (search) */
        const uint32_t bits7 = (ph == 1 ? (cache | smem << 1 | recent << 3 | pool << 4) : 0u) | (ph < 2 ? dedup << 2 : 0u);
        const uint32_t spec[8] = {ph, ph == 1 ? lanes : 1u, prep, ph == 1 ? flat : 0u, ph == 1 ? fastpix : 0u,
                                  ph == 1 ? check : 1u, bits7, packed};
        const int many = lanes_shader && (ph == 1 || (ph == 0 && prep));
        kiln_vk_pipeline_desc desc = {
            .shader = many ? "enc_etc2_th_lanes" : shader,
            .local_size = wg,
            .spec = spec,
            .nspec = 8, /* the rolled / unrolled builds declare PHASE, FASTPIX and CHECK only; the rest is ignored */
            .nbindings = 4,
            .push_size = sizeof push,
            .subgroup_size = subgroup_size,
        };
        KILN_TRY(kiln_vk_pipeline_get(ctx, gpu, &desc, &out->pipe[ph]));
    }
    memcpy(out->push, &push, sizeof push);
    return KILN_OK;
}

kiln_status kiln__gpu_etc2_th_record(kiln_context *ctx, struct kiln_vk_cmd *cmd, const kiln__gpu_etc2_th_plan *plan,
                                     uint32_t phase, uint32_t w, uint32_t h, const struct kiln_vk_binding *b)
{
    const uint64_t bx = ((uint64_t)w + 3) / 4, by = ((uint64_t)h + 3) / 4, nblocks = bx * by;
    if (phase > 2 || w == 0 || h == 0 || nblocks > UINT32_MAX / 64u)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "GPU ETC2 T/H pass: phase %u of %ux%u", phase, w, h);
    th_push push;
    memcpy(&push, plan->push, sizeof push);
    push.width = w;
    push.height = h;
    push.blocks_x = (uint32_t)bx;
    push.nblocks = (uint32_t)nblocks;
    /* reset: one invocation; gate: one per block; search: lanes per block, those past the listed count
     * return at once (lanes > 1: idle through the barriers) */
    const uint64_t items = phase == 2 ? 1u : (phase == 1 ? nblocks * plan->lanes : nblocks);
    return kiln_vk_cmd_dispatch_linear(ctx, cmd, plan->pipe[phase], b, &push, items);
}

kiln_status kiln__gpu_etc2_th(kiln_context *ctx, const uint8_t *rgba8, uint32_t w, uint32_t h,
                              const kiln_encode_params *params, int a1, uint32_t subgroup_size,
                              kiln_etc2_gpu_block *blocks, double *ms)
{
    if (!rgba8 || !params || !blocks || w == 0 || h == 0)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "GPU ETC2 T/H pass: empty image, no parameters or no blocks");
    kiln__gpu_etc2_th_plan plan;
    KILN_TRY(kiln__gpu_etc2_th_plan_make(ctx, params, a1, subgroup_size, &plan));
    kiln_gpu *gpu;
    KILN_TRY(kiln__gpu_get(ctx, &gpu));

    const uint64_t bx = ((uint64_t)w + 3) / 4, by = ((uint64_t)h + 3) / 4, nblocks = bx * by;
    const uint64_t in_bytes = (uint64_t)w * h * 4u, blk_bytes = nblocks * sizeof(kiln_etc2_gpu_block);
    const uint64_t range = gpu->props.limits.maxStorageBufferRange;
    const uint64_t list_bytes = (nblocks + 1) * 4u;
    if (in_bytes > range || blk_bytes > range || list_bytes > range || nblocks > UINT32_MAX / 64u || in_bytes > SIZE_MAX ||
        blk_bytes > SIZE_MAX)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                          "GPU ETC2 T/H pass of %ux%u: %llu bytes of input exceed the device's storage buffer range (%llu)", w,
                          h, (unsigned long long)in_bytes, (unsigned long long)range);

    kiln_vk_io in, bin, bout;
    kiln_vk_buffer list;
    memset(&list, 0, sizeof list);
    memset(&in, 0, sizeof in);
    memset(&bin, 0, sizeof bin);
    memset(&bout, 0, sizeof bout);
    kiln_vk_cmd cmd;
    memset(&cmd, 0, sizeof cmd);
    kiln_status st = kiln_vk_io_create(ctx, gpu, in_bytes, 0, &in);
    if (st == KILN_OK) st = kiln_vk_io_create(ctx, gpu, blk_bytes, 0, &bin);
    if (st == KILN_OK) st = kiln_vk_io_create(ctx, gpu, blk_bytes, 1, &bout);
    if (st == KILN_OK) st = kiln_vk_buffer_create(ctx, gpu, list_bytes, KILN_VK_MEM_DEVICE, &list);
    if (st == KILN_OK) {
        memcpy(kiln_vk_io_map(&in), rgba8, (size_t)in_bytes);
        memcpy(kiln_vk_io_map(&bin), blocks, (size_t)blk_bytes);
        st = kiln_vk_buffer_flush(ctx, gpu, in.direct ? &in.dev : &in.staging);
    }
    if (st == KILN_OK) st = kiln_vk_buffer_flush(ctx, gpu, bin.direct ? &bin.dev : &bin.staging);
    if (st == KILN_OK) st = kiln_vk_cmd_begin(ctx, gpu, 3, &cmd);
    double t = 0.0;
    if (st == KILN_OK) {
        kiln_vk_cmd_upload(&cmd, &in, in_bytes);
        kiln_vk_cmd_upload(&cmd, &bin, blk_bytes);
        kiln_vk_cmd_timestamp(&cmd, 0);
        kiln_vk_binding b[4] = {{.buffer = in.dev.buffer, .range = in_bytes},
                                {.buffer = bin.dev.buffer, .range = blk_bytes},
                                {.buffer = bout.dev.buffer, .range = blk_bytes},
                                {.buffer = list.buffer, .range = list_bytes}};
        st = kiln__gpu_etc2_th_record(ctx, &cmd, &plan, 2, w, h, b);
        kiln_vk_cmd_barrier(&cmd);
        if (st == KILN_OK) st = kiln__gpu_etc2_th_record(ctx, &cmd, &plan, 0, w, h, b);
        kiln_vk_cmd_barrier(&cmd);
        /* KILN_GPU_ETC2_TH_BENCH_GATE_ONLY=1 (bench/gpu_etc2_th's "gate" row only: the gate pass's time; the listed blocks
         * are left unfinished, so the bytes are wrong) */
        const char *go = getenv("KILN_GPU_ETC2_TH_BENCH_GATE_ONLY");
        if (st == KILN_OK && !(go && go[0] == '1')) st = kiln__gpu_etc2_th_record(ctx, &cmd, &plan, 1, w, h, b);
        kiln_vk_cmd_timestamp(&cmd, 1);
        kiln_vk_cmd_download(&cmd, &bout, blk_bytes);
        if (st == KILN_OK) st = kiln_vk_cmd_submit(ctx, &cmd, &t);
    }
    kiln_vk_cmd_free(&cmd);
    if (st == KILN_OK) st = kiln_vk_buffer_invalidate(ctx, gpu, bout.direct ? &bout.dev : &bout.staging);
    if (st == KILN_OK) memcpy(blocks, kiln_vk_io_map(&bout), (size_t)blk_bytes);
    kiln_vk_io_destroy(gpu, &in);
    kiln_vk_io_destroy(gpu, &bin);
    kiln_vk_io_destroy(gpu, &bout);
    kiln_vk_buffer_destroy(gpu, &list);
    if (st == KILN_OK && ms) *ms = t;
    return st;
}

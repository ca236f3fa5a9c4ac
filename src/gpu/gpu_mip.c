/* gpu_mip.c - mipmap chains on the GPU (Vulkan compute), the strategies of kiln_mip_strategy:
 *
 *   per-level    one dispatch (+ barrier) per level, one invocation per output texel
 *   subgroup     stages of up to 5 levels (chunked from the 1x1 end, as stripe2933/mipmap), the first
 *                levels of each stage reduced with subgroupShuffleXor (any subgroup size, no lane order
 *                assumed), the rest through shared memory; stages where level l0+1 does not tile into
 *                16 x 16 blocks (odd sizes) cannot shuffle and take at most 3 levels
 *   pyramid      nvpro_pyramid's schedule: a "fast" stage of M <= 6 levels when both sides are divisible
 *                by 2^M (M >= 2; shuffles when the stage allows it), else a "general" stage of 2 levels
 *                (tiles of 16 x 16 with the 3-tap kernel and a recomputed 1-texel halo)
 *   single-pass  every level of every texture in ONE dispatch, any size and batch. On the fast box path
 *                (default; sp_one, shaders/mip_one.comp): the pyramid's fast stages (even stages of mip_fast.comp /
 *                mip_fast2.comp, odd levels of mip_fast_level.comp, their bodies copied); the dispatch is the first
 *                stage's, every later tile is made by the workgroup that completes its last input tile (per-tile
 *                arrival counters, release/acquire fences, counters reset by their last user; nothing waits); a
 *                one-stage plan is its own one dispatch. The chain ends in a tail stage (the levels from the first
 *                of <= 256 texels in shared memory; KILN_GPU_MIP_SP_TAIL=N sets N, 0 = none); mip_fast2.comp stages
 *                are chained only with KILN_GPU_MIP_EVEN2=1 (see even2_one). KILN_GPU_MIP_SP_HYBRID=1 (tuning aid): the
 *                older hybrid (sp_fuse: the tail fused into the pyramid plan's first small stage, 1-5 dispatches).
 *                KILN_GPU_MIP_FAST=0 or 1: ONE dispatch on the general path, stages as above run by the same
 *                workgroups, the last workgroup to finish the tiles a later-stage tile depends on continues with
 *                it (per-tile arrival counters, release/acquire fences; shaders/mip_tile.comp)
 *   auto         pyramid while the fast box path is on (below), else single-pass
 *   baseline     (bench only) reads the base once and writes every level without reducing
 *   blit         the vkCmdBlitImage chain (gpu_mip_blit.c): exact only on even levels, no alpha weighting
 *
 * All real strategies run the same exact arithmetic (shaders/mip_tile.comp, mip_common.glsl): box
 * taps of src/mip/mip.h rule 5 for every size (2 taps even, 3 taps odd), vertical pass first, alpha
 * weighting of rule 7, sRGB decode by the CPU's table and the exact threshold encoder, fp32 chain
 * (levels read by a later stage are kept in fp32 in the `chain` buffer, never re-read from the
 * quantised output). They differ in how levels are grouped into dispatches and reduced.
 *
 * The fast box path (per-level, subgroup, pyramid, auto; KILN_GPU_MIP_FAST, see make_plan) runs the same
 * arithmetic in leaner kernels: even stages with the levels in between kept in registers / shared memory
 * (shaders/mip_fast.comp), odd levels one texel per invocation without region bookkeeping and the last small
 * levels in one workgroup per texture (shaders/mip_fast_level.comp). Same bytes as mip_tile.comp.
 *
 * Data stays in storage buffers: the base images (RGBA8 words or RGBA32F) in, the quantised levels
 * 1..L-1 of every image out (tightly packed, level after level). A batch (kiln_mip_texture_layers,
 * the bench's 256 textures) is one set of dispatches with z = image. kiln__gpu_mip_record (gpu_mip.h)
 * records the same passes into a caller's command buffer and leaves the levels on the device, each at an
 * aligned offset, for the encoders of gpu_mip_encode.c (kiln_encode_mips, issue 5). */
#include "gpu/gpu_mip.h"
#include "image/color.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* job table layout: shaders/mip_common.glsl */
#define P_LEVEL 8u
#define P_STAGE 136u
#define P_TEX 392u
#define MIPF_DECODE_SRGB 1u
#define MIPF_IN_F32 2u
#define MIPF_OUT_F16 4u
#define MIPF_OUT_F32 8u
#define MIPF_OUT_SRGB 16u

#define MIP_LOCAL 256u
#define MIP_SH_A 1296u /* shared texels of mip_tile.comp */
#define MIP_SH_B 400u
#define MIP_MAX_LEVELS 32u
#define MIP_BINDINGS 6u
#define MIP_MAX_TEXTURES 16384u

typedef struct mip_stage {
    uint32_t l0, K, T, ntx, nty, ctr_off, shuffle, write_chain;
    int fast; /* MIP_FAST_*: 0 shaders/mip_tile.comp, else the fast box path */
    int sp;   /* single pass (shaders/mip_sp.comp): 1 this stage, then the tail; 2 the tail alone; 3 this stage,
               * the odd-level stages after it (4: no dispatch of their own) and the tail (KILN_GPU_MIP_SP_CHAIN) */
} mip_stage;

typedef struct mip_plan {
    uint32_t L, w[MIP_MAX_LEVELS], h[MIP_MAX_LEVELS];
    mip_stage st[MIP_MAX_LEVELS];
    uint32_t nst;
    int one; /* sp_one: every stage in the first stage's dispatch (shaders/mip_one.comp) */
} mip_plan;

static uint32_t tile_of(uint32_t K) { return K >= 6 ? 1u : 16u >> (K - 1); }

static uint32_t div_up(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

/* Worst-case region sizes of a stage (mip_tile.comp regions()) fit the shared arrays. */
static int stage_fits(const mip_plan *p, uint32_t l0, uint32_t K)
{
    uint32_t T = tile_of(K), t = l0 + K;
    uint32_t rx = T < p->w[t] ? T : p->w[t], ry = T < p->h[t] ? T : p->h[t];
    for (uint32_t k = K - 1; k >= 1; k--) {
        uint32_t m = l0 + k;
        rx = p->w[m] == 1 ? 1 : 2 * rx + (p->w[m] & 1);
        ry = p->h[m] == 1 ? 1 : 2 * ry + (p->h[m] & 1);
        if (rx > p->w[m]) rx = p->w[m];
        if (ry > p->h[m]) ry = p->h[m];
        if ((uint64_t)rx * ry > ((k & 1) ? MIP_SH_A : MIP_SH_B)) return 0;
    }
    return 1;
}

/* Shuffle levels are possible: level l0+1 tiles into exact 16 x 16 blocks (so levels l0+1 .. l0+4 are even). */
static int stage_clean(const mip_plan *p, uint32_t l0, uint32_t K)
{
    return K >= 2 && K <= 5 && p->w[l0 + 1] % 16 == 0 && p->h[l0 + 1] % 16 == 0;
}

static void add_stage(mip_plan *p, uint32_t l0, uint32_t K, int shuffle)
{
    mip_stage *s = &p->st[p->nst++];
    memset(s, 0, sizeof *s);
    s->l0 = l0;
    s->K = K;
    s->T = tile_of(K);
    s->ntx = div_up(p->w[l0 + K], s->T);
    s->nty = div_up(p->h[l0 + K], s->T);
    s->shuffle = shuffle && stage_clean(p, l0, K) ? K - 1 : 0;
}

static uint32_t fit_k(const mip_plan *p, uint32_t l0, uint32_t K)
{
    while (K > 1 && !stage_fits(p, l0, K)) K--;
    return K;
}

/* The fast box path for per-level, subgroup and pyramid (same bytes as the general path):
 *   MIP_FAST_EVEN   shaders/mip_fast.comp: K <= 6 levels that halve both axes exactly, 64 x 64 tiles of
 *                   level l0, the levels in between in registers / shared memory (per-level: K = 1)
 *   MIP_FAST_LEVEL  shaders/mip_fast_level.comp mode 0: one level of any parity (odd axes: 3 taps)
 *   MIP_FAST_TAIL   mip_fast_level.comp mode 1: every remaining level in one workgroup per texture, once the
 *                   next level has at most MIP_TAIL_TEXELS texels (not for per-level: one dispatch per level)
 *   MIP_FAST_LEVEL2 mip_fast_level.comp mode 2: two levels of any parity (subgroup, pyramid; odd_pairs)
 *   MIP_FAST_EVEN2  shaders/mip_fast2.comp: MIP_FAST_EVEN for levels of >= MIP_EVEN2_TEXELS texels with one
 *                   level-(l0+1) texel per invocation (32 x 32 tiles, K <= 5): the H100 (2026-11-25) showed
 *                   mip_fast.comp latency-bound there (4x fewer invocations than the baseline's)
 * KILN_GPU_MIP_FAST=0: the general path alone (mip_tile.comp); =1: the even stages (MIP_FAST_EVEN, _EVEN2)
 * only, odd levels on the general path; unset or anything else: all of them. Stage parameters reach the fast
 * shaders as push constants (fast_push). */
#define MIP_FAST_EVEN 1
#define MIP_FAST_LEVEL 2
#define MIP_FAST_TAIL 3
#define MIP_FAST_LEVEL2 4 /* mip_fast_level.comp mode 2: two levels of any parity, level l0+1 in shared memory */
#define MIP_FAST_EVEN2 5  /* shaders/mip_fast2.comp: an even stage (K <= 5) with one level-(l0+1) texel per invocation */
#define MIP_EVEN2_TEXELS 65536u
/* ... and below MIP_EVEN2_MAX_TEXELS (level texels x batch count) in multi-level stages: H100 2026-11-25 18:32
 * UTC (lead), pyramid cold min: mip_fast2 won at 1920x1080 (86.3 vs 95.3 us) but lost from 2048^2 up (77.0 vs 59.5; 4096^2 193.3 vs 141.1;
 * 256 x 256^2 184.0 vs 138.8); per-level (one level per stage) keeps it at every size (4096^2 186.3 vs 211.4). */
#define MIP_EVEN2_MAX_TEXELS 4194304u
#define MIP_FAST_PUSH 96u /* bytes of the fast shaders' push constants (fast_push) */
#define MIP_TAIL_TEXELS 0u /* H100 2026-11-25: the one-workgroup tail lost to one dispatch per level */

/* Subgroup / pyramid make odd levels two at a time (MIP_FAST_LEVEL2: 16 x 16 tiles of level l0+2, level l0+1 in
 * shared memory with a recomputed 1-texel halo, never in the fp32 chain) when level l0+1 has at most
 * MIP_PAIR_TEXELS texels (the small levels, where the H100 showed one dispatch per level costing more than the
 * work), else one dispatch per odd level (MIP_FAST_LEVEL). KILN_GPU_MIP_O2 (tuning aid): 0 never, 1 always. */
/* H100 2026-11-25 18:32 UTC (lead), pyramid cold min, pairs never / from 512^2 / always: 1920x1080 87.4 / 86.3 /
 * 95.3 us, 2047^2 131.8 / 143.0 / 139.5, 4095^2 352.3 / 362.2 / 374.0, 3095x990 130.7 / 140.1 / 131.7: never. */
#define MIP_PAIR_TEXELS 0u
static uint64_t odd_pairs(void)
{
    const char *e = getenv("KILN_GPU_MIP_O2");
    return e && e[0] == '0' ? 0 : e && e[0] == '1' ? UINT64_MAX : MIP_PAIR_TEXELS;
}

/* KILN_GPU_MIP_EVEN2=0 (tuning aid): every even stage on mip_fast.comp (2 x 2 level-(l0+1) texels per
 * invocation, as measured on the H100 on 2026-11-25) instead of mip_fast2.comp on large levels. */
static int even2_enabled(void)
{
    const char *e = getenv("KILN_GPU_MIP_EVEN2");
    return !(e && e[0] == '0');
}

/* The one-dispatch single pass chains mip_fast.comp's even stages only, unless KILN_GPU_MIP_EVEN2=1: H200 2026-11-26
 * 05:25 UTC (lead, `KILN_GPU_MIP_SP_TAIL=256 [KILN_GPU_MIP_EVEN2=0] gpu_mip --runs 10 --strategies
 * baseline,pyramid,single-pass`, cold min us): 1920x1080 313.5 with an mip_fast2.comp first stage in the chain, 76.2
 * without (pyramid 83.1-85.0); 2560x1440 77.2 without (pyramid 89.7), 3840x2160 114.2 (pyramid 118.3). */
static int even2_one(void)
{
    const char *e = getenv("KILN_GPU_MIP_EVEN2");
    return e && e[0] == '1';
}

/* KILN_GPU_MIP_TAIL=N (tuning aid): the tail starts once the next level has at most N texels (default
 * MIP_TAIL_TEXELS; 0 = no tail). */
static uint64_t tail_texels(void)
{
    const char *e = getenv("KILN_GPU_MIP_TAIL");
    return e && e[0] >= '0' && e[0] <= '9' ? strtoull(e, NULL, 10) : MIP_TAIL_TEXELS;
}

static int fast_enabled(void)
{
    const char *e = getenv("KILN_GPU_MIP_FAST");
    return e && e[0] == '0' ? 0 : e && e[0] == '1' && e[1] == 0 ? 1 : 2;
}

/* Number of exact halvings of both axes from level l0, at most `cap`: the fast stage's K. */
static uint32_t even_steps(const mip_plan *p, uint32_t l0, uint32_t cap)
{
    uint32_t M = 0;
    while (M < cap && p->w[l0] % (2u << M) == 0 && p->h[l0] % (2u << M) == 0) M++;
    return M;
}

/* The single pass on the fast box path (KILN_GPU_MIP_FAST unset or 2): the pyramid's fast plan (no odd pairs,
 * no mip_fast_level tail) cut after the first stage whose last level e is followed by a level of at most
 * sp_cap() texels; that stage runs on shaders/mip_sp.comp and its last-arriving workgroup per texture makes
 * levels e+1 .. L-1 in shared memory (one dispatch for the tail instead of one per level). When level 1 is
 * already that small and the first stage does not end the chain: one workgroup per texture makes every level
 * (mode 2). MIP_SP_CAP = mip_sp.comp's SP_CAP (shared arrays of SP_CAP + SP_CAP / 2 vec4s).
 * KILN_GPU_MIP_SP_TAIL=N (tuning aid, N <= MIP_SP_CAP): the tail starts at a level of at most N texels. */
#define MIP_SP_CAP 1024u
static uint64_t sp_cap(void)
{
    const char *e = getenv("KILN_GPU_MIP_SP_TAIL");
    uint64_t n = e && e[0] >= '0' && e[0] <= '9' ? strtoull(e, NULL, 10) : MIP_SP_CAP;
    return n < MIP_SP_CAP ? n : MIP_SP_CAP;
}

/* KILN_GPU_MIP_SP_CHAIN (tuning aid, off by default until timed on a real GPU): 1 = the odd-level (MIP_FAST_LEVEL)
 * stages before the fused one run in the same dispatch as it and the stage before them (per-tile arrival counters:
 * the workgroup that completes a tile's inputs makes it), an mip_fast2.comp stage staying a dispatch of its own;
 * 2 = the same with that stage made by mip_fast.comp's kernel inside the chain (one dispatch for 1920x1080). */
static int sp_chain(void)
{
    const char *e = getenv("KILN_GPU_MIP_SP_CHAIN");
    return e && (e[0] == '1' || e[0] == '2') && e[1] == 0 ? e[0] - '0' : 0;
}

/* The tail is fused only into a stage of at most MIP_SP_FUSE_WG workgroups (all textures): H100 2026-11-25 21:06
 * UTC (lead, mipsp script): fused into a large even stage it cost more than the dispatch it saves (4096^2 E6s6
 * 333.5 us vs pyramid E6+E6 ~143; 256 x 256^2 E6s2 147.2 vs 139.6: mip_sp.comp's larger footprint in the big
 * stage), while fused into the small odd stages it won (3095x990 123.8 us vs pyramid 130.7 and blit 126.1). */
#define MIP_SP_FUSE_WG 256u

/* the whole chain as one tail stage: one workgroup per texture makes every level in shared memory (mip_sp.comp mode 2) */
static void tail_only(mip_plan *p)
{
    mip_stage *s = &p->st[0];
    memset(s, 0, sizeof *s);
    s->K = p->L - 1;
    s->ntx = s->nty = 1;
    s->fast = MIP_FAST_LEVEL;
    s->sp = 2;
    p->nst = 1;
}

static void sp_fuse(mip_plan *p, uint64_t cap, int chain, uint32_t count)
{
    if (p->nst == 0) return;
    const uint32_t L = p->L;
    if ((uint64_t)p->w[1] * p->h[1] <= cap && p->st[0].l0 + p->st[0].K < L - 1) {
        tail_only(p);
        return;
    }
    for (uint32_t i = 0; i < p->nst; i++) {
        mip_stage *s = &p->st[i];
        const uint32_t e = s->l0 + s->K;
        if (e + 1 >= L || (uint64_t)p->w[e + 1] * p->h[e + 1] > cap) continue;
        /* not into a six-level even stage: on the H100 (2026-11-25 21:32 UTC) 8192^2 ran E6+E6s1 in 1272 us
         * against the pyramid's E6+E6+E1 in 461 */
        if ((s->fast == MIP_FAST_EVEN || s->fast == MIP_FAST_EVEN2) && s->K > 5) continue;
        if ((uint64_t)s->ntx * s->nty * count > MIP_SP_FUSE_WG) return; /* the pyramid's plan from here on */
        if (s->fast == MIP_FAST_EVEN2) { /* mip_sp.comp carries mip_fast.comp's even stage (K <= 5 here) */
            s->fast = MIP_FAST_EVEN;
            s->T = 64u >> s->K;
            s->ntx = div_up(p->w[s->l0], 64);
            s->nty = div_up(p->h[s->l0], 64);
        }
        s->sp = 1;
        p->nst = i + 1;
        uint32_t g = i;
        while (chain && g > 0 && p->st[g].fast == MIP_FAST_LEVEL) g--;
        if (g < i && p->st[g].fast == MIP_FAST_EVEN2) {
            if (chain == 2) {
                mip_stage *f = &p->st[g];
                f->fast = MIP_FAST_EVEN;
                f->T = 64u >> f->K;
                f->ntx = div_up(p->w[f->l0], 64);
                f->nty = div_up(p->h[f->l0], 64);
            } else {
                g++;
            }
        }
        if (g < i && (p->st[g].fast == MIP_FAST_EVEN || p->st[g].fast == MIP_FAST_LEVEL)) {
            p->st[g].sp = 3;
            for (uint32_t k = g + 1; k <= i; k++) p->st[k].sp = 4;
        }
        return;
    }
}

/* KILN_GPU_MIP_SP_HYBRID=1 (tuning aid, for the bench's comparison): single-pass as the hybrid of helper mipsp
 * (sp_fuse above: 1 to 5 dispatches, the pyramid's plan where nothing fuses); unset: ONE dispatch (sp_one). */
static int sp_hybrid(void)
{
    const char *e = getenv("KILN_GPU_MIP_SP_HYBRID");
    return e && e[0] == '1' && e[1] == 0;
}

/* The one-dispatch single pass's tail (a stage of sp_one's chain): levels l0+1 .. L-1 of one texture in shared memory
 * (mip_sp.comp tail()), made by the workgroup that completes the last tile of level l0. */
#define MIP_FAST_SPTAIL 6
/* The tail starts at the first stage end whose next level has at most MIP_SP_ONE_TAIL texels (KILN_GPU_MIP_SP_TAIL
 * overrides, at most MIP_SP_CAP; 0: no tail, every level chained). H200 2026-11-26 05:25 UTC (lead; the chain without
 * mip_fast2.comp stages, even2_one), cold min us, tail at <= 256 texels / none: rows of the same run with a normal
 * baseline: 1920x1080 76.2 (none, with fast2: 103.5), 2047^2 172.1, 256 x 256^2 152.1; tail at <= 1024 with fast2:
 * 1920x1080 90.6. Earlier (04:26, helper spone's build, fast2 in the chain) the tail had looked slower: 392.9 vs 102.0. */
#define MIP_SP_ONE_TAIL 256u

/* KILN_GPU_MIP_SPEC_UNION=1 (test aid: tests/unit/test_gpu_mip*.c, lavapipe's LLVM compile time in CI): mip_one.comp
 * with the bodies of the default plans' stage kinds (mip_fast.comp's, mip_fast_level.comp's, the tail) compiled in
 * whatever the plan chains (the largest plans' specialisation), and the hybrid's mip_sp.comp with its shared arrays at
 * MIP_SP_CAP, so that the plans of all sizes share one pipeline per (shader, mode, chain) instead of one per tail size
 * and set of chained kinds. The same code paths and arithmetic; only the code and arrays the plan does not need. */
static int spec_union(void)
{
    const char *e = getenv("KILN_GPU_MIP_SPEC_UNION");
    return e && e[0] == '1' && e[1] == 0;
}

static uint64_t sp_one_cap(void)
{
    const char *e = getenv("KILN_GPU_MIP_SP_TAIL");
    return e && e[0] >= '0' && e[0] <= '9' ? sp_cap() : MIP_SP_ONE_TAIL;
}

/* The single pass in ONE dispatch for every size and batch (helper spone, 2026-11-26): the pyramid's fast plan (no odd
 * pairs, no mip_fast_level tail) cut after the first stage whose next level has at most `cap` texels, then the tail
 * stage (MIP_FAST_SPTAIL; cap 0, the default: no tail). Every stage after the first is made inside the first stage's
 * dispatch (shaders/mip_one.comp): a workgroup that finishes a tile of stage s increments the arrival counter of every
 * stage-(s+1) tile whose input footprint overlaps its output (mip_one.comp cons_range, the same function on both
 * sides); the one that
 * brings a counter to its target makes that tile (release / acquire fences, the counter reset by that workgroup:
 * nothing ever waits). Stages: first sp = 3 (the dispatch), the rest sp = 4 (in it), their kinds (MIP_FAST_*) in job
 * stage word 6. Level 1 at most `cap` texels: one workgroup per texture makes every level (mip_sp.comp mode 2); a plan
 * of one stage is already one dispatch (mip_fast / mip_fast2 / mip_fast_level) and stays. */
static void sp_one(mip_plan *p, uint64_t cap)
{
    if (p->nst <= 1) return;
    const uint32_t L = p->L;
    if ((uint64_t)p->w[1] * p->h[1] <= cap) {
        tail_only(p);
        return;
    }
    uint32_t i = 0;
    while (i + 1 < p->nst) {
        const uint32_t e = p->st[i].l0 + p->st[i].K;
        if ((uint64_t)p->w[e + 1] * p->h[e + 1] <= cap) break;
        i++;
    }
    const uint32_t e = p->st[i].l0 + p->st[i].K;
    p->nst = i + 1;
    if (e + 1 < L) {
        mip_stage *t = &p->st[p->nst++];
        memset(t, 0, sizeof *t);
        t->l0 = e;
        t->K = L - 1 - e;
        t->ntx = t->nty = 1;
        t->fast = MIP_FAST_SPTAIL;
    }
    p->one = 1;
    p->st[0].sp = 3;
    for (uint32_t k = 1; k < p->nst; k++) p->st[k].sp = 4;
}

static void make_plan(mip_plan *p, uint32_t W, uint32_t H, uint32_t L, int strategy, int shuffles, int fast,
                      uint32_t count)
{
    memset(p, 0, sizeof *p);
    p->L = L;
    for (uint32_t m = 0; m < L; m++) {
        p->w[m] = kiln_level_dim(W, m);
        p->h[m] = kiln_level_dim(H, m);
    }
    uint32_t l0 = 0;
    const int sp = fast >= 2 && strategy == KILN_MIP_STRATEGY_SINGLE_PASS; /* sp_fuse */
    const int fast_ok = sp || (fast && (strategy == KILN_MIP_STRATEGY_PER_LEVEL ||
                                        strategy == KILN_MIP_STRATEGY_SUBGROUP || strategy == KILN_MIP_STRATEGY_PYRAMID));
    const uint64_t tail = fast_ok && !sp ? tail_texels() : 0;
    const uint64_t pairs = fast_ok && !sp ? odd_pairs() : 0;
    const int even2 = fast_ok && (sp && !sp_hybrid() ? even2_one() : even2_enabled());
    while (l0 + 1 < L) {
        uint32_t rem = L - 1 - l0, K = 1;
        int shuf = 0;
        if (fast_ok) {
            const int per_level = strategy == KILN_MIP_STRATEGY_PER_LEVEL;
            uint32_t M = even_steps(p, l0, per_level ? 1u : rem < 6 ? rem : 6u);
            int kind = 0;
            if (M >= 1 && (M == rem || per_level)) kind = MIP_FAST_EVEN;
            else if (fast >= 2 && !per_level && (uint64_t)p->w[l0 + 1] * p->h[l0 + 1] <= tail) kind = MIP_FAST_TAIL;
            else if (M >= 1) kind = MIP_FAST_EVEN;
            else if (fast >= 2 && !per_level && rem >= 2 && (uint64_t)p->w[l0 + 1] * p->h[l0 + 1] <= pairs)
                kind = MIP_FAST_LEVEL2;
            else if (fast >= 2) kind = MIP_FAST_LEVEL;
            if (kind == MIP_FAST_EVEN && even2 && (uint64_t)p->w[l0] * p->h[l0] >= MIP_EVEN2_TEXELS &&
                (per_level || (uint64_t)p->w[l0] * p->h[l0] * count < MIP_EVEN2_MAX_TEXELS)) {
                kind = MIP_FAST_EVEN2;
                if (M > 5) M = 5;
            }
            if (kind) {
                mip_stage *s = &p->st[p->nst++];
                memset(s, 0, sizeof *s);
                s->l0 = l0;
                const int ev = kind == MIP_FAST_EVEN || kind == MIP_FAST_EVEN2;
                const uint32_t te = kind == MIP_FAST_EVEN ? 64u : 32u; /* an even stage's tile edge at level l0 */
                s->K = ev ? M : kind == MIP_FAST_TAIL ? rem : kind == MIP_FAST_LEVEL2 ? 2 : 1;
                s->T = ev ? te >> M : kind == MIP_FAST_TAIL ? 0u : 16u;
                s->ntx = ev ? div_up(p->w[l0], te) : kind == MIP_FAST_TAIL ? 1 : div_up(p->w[l0 + s->K], 16);
                s->nty = ev ? div_up(p->h[l0], te) : kind == MIP_FAST_TAIL ? 1 : div_up(p->h[l0 + s->K], 16);
                s->fast = kind;
                l0 += s->K;
                continue;
            }
        }
        switch (strategy) {
        case KILN_MIP_STRATEGY_PER_LEVEL: K = 1; break;
        case KILN_MIP_STRATEGY_SUBGROUP:
            K = (l0 == 0 && rem % 5) ? rem % 5 : 5;
            if (K > rem) K = rem;
            if (!stage_clean(p, l0, K) && K > 3) K = 3; /* no shuffles here: keep the recomputed halo small */
            shuf = 1;
            break;
        case KILN_MIP_STRATEGY_PYRAMID: {
            uint32_t M = 0;
            while (M < 6 && p->w[l0] % (2u << M) == 0 && p->h[l0] % (2u << M) == 0) M++;
            if (M >= 2) {
                K = M; /* fast stage */
                shuf = 1;
            } else {
                K = 2; /* general stage */
            }
            break;
        }
        default: /* single-pass, AUTO */
            if (stage_clean(p, l0, rem < 5 ? rem : 5) || (rem >= 5 && stage_clean(p, l0, 5))) K = 5;
            else K = 3;
            shuf = 1;
            break;
        }
        if (K > rem) K = rem;
        K = fit_k(p, l0, K);
        add_stage(p, l0, K, shuf && shuffles);
        l0 += K;
    }
    if (sp && sp_hybrid()) sp_fuse(p, sp_cap(), sp_chain(), count);
    else if (sp) sp_one(p, sp_one_cap());
    for (uint32_t s = 0; s + 1 < p->nst; s++) p->st[s].write_chain = 1;
    if (p->nst && !p->one && (p->st[p->nst - 1].sp == 1 || p->st[p->nst - 1].sp == 4))
        p->st[p->nst - 1].write_chain = 1; /* the tail reads it */
}

/* ---------------------------------------------------------------- buffers and recording */

typedef struct mip_run {
    kiln_gpu *gpu;
    mip_plan plan;
    uint32_t count, W, H;
    uint32_t in_words, out_words, chain_vec4, ctr_words; /* per texture (ctr: all) */
    uint32_t *table;                                     /* job table, table_words */
    uint32_t table_words;
    kiln_vk_io prm, in, out, lut;
    kiln_vk_buffer chain, ctr;
    const kiln_vk_pipeline *tile, *base, *fast, *fast_level, *fast2, *sp;
    int ctr_fresh; /* the counters are new: zero them once (mip_sp.comp resets its own after use) */
} mip_run;

static void run_free(mip_run *r)
{
    if (r->gpu) {
        kiln_vk_io_destroy(r->gpu, &r->prm);
        kiln_vk_io_destroy(r->gpu, &r->in);
        kiln_vk_io_destroy(r->gpu, &r->out);
        kiln_vk_io_destroy(r->gpu, &r->lut);
        kiln_vk_buffer_destroy(r->gpu, &r->chain);
        kiln_vk_buffer_destroy(r->gpu, &r->ctr);
    }
    free(r->table);
    memset(r, 0, sizeof *r);
}

static kiln_status io_flush(kiln_context *ctx, kiln_gpu *gpu, kiln_vk_io *io)
{
    return kiln_vk_buffer_flush(ctx, gpu, io->direct ? &io->dev : &io->staging);
}

static kiln_status check_range(kiln_context *ctx, const kiln_gpu *gpu, uint64_t bytes, const char *what, uint32_t W,
                               uint32_t H, uint32_t count)
{
    if (bytes > gpu->props.limits.maxStorageBufferRange || bytes >= ((uint64_t)1 << 34))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                          "GPU mipmaps: the %s of %u image(s) of %ux%u needs %llu bytes, over %s's storage-buffer range "
                          "(%u bytes)",
                          what, count, W, H, (unsigned long long)bytes, gpu->props.deviceName,
                          gpu->props.limits.maxStorageBufferRange);
    return KILN_OK;
}

/* The smallest float f with f * 255 >= k + 0.5 exactly (the product of a float and 255 is exact in
 * double): kiln__float_to_unorm8(f) > k from there on. */
static float unorm8_threshold(int k)
{
    double edge = k + 0.5;
    float f = (float)(edge / 255.0);
    while ((double)f * 255.0 < edge) f = nextafterf(f, 2.0f);
    for (;;) {
        float p = nextafterf(f, 0.0f);
        if ((double)p * 255.0 < edge) break;
        f = p;
    }
    return f;
}

void kiln__gpu_mip_lut(float l[1024], int decode_srgb)
{
    for (int v = 0; v < 256; v++) {
        l[v] = decode_srgb ? kiln__srgb8_to_linear((uint8_t)v) : (float)v / 255.0f;
        l[256 + v] = (float)v / 255.0f;
        l[512 + v] = v < 255 ? kiln__srgb8_thresholds[v] : INFINITY;
        l[768 + v] = v < 255 ? unorm8_threshold(v) : INFINITY;
    }
}

/* Plans `strategy`, builds the job table and creates every buffer but the input. */
static kiln_status run_prepare(kiln_context *ctx, mip_run *r, int strategy, uint32_t flags, const uint8_t *weighted,
                               uint32_t subgroup_size, uint32_t align_words, int device_out, int fast)
{
    kiln_gpu *gpu = r->gpu;
    const uint32_t wpt = (flags & MIPF_OUT_F32) ? 4 : (flags & MIPF_OUT_F16) ? 2 : 1;
    const int baseline = strategy == KILN_MIP_STRATEGY_BASELINE;
    if (r->count > MIP_MAX_TEXTURES || r->count > gpu->props.limits.maxComputeWorkGroupCount[2])
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "GPU mipmaps: %u images in one batch (at most %u)", r->count,
                          MIP_MAX_TEXTURES);
    make_plan(&r->plan, r->W, r->H, r->plan.L, strategy, gpu->full_subgroups, fast, r->count);
    mip_plan *p = &r->plan;
    r->table_words = P_TEX + r->count;
    free(r->table);
    r->table = kiln__calloc(ctx, r->table_words, sizeof(uint32_t));
    if (!r->table) return KILN_ERR_OUT_OF_MEMORY;
    uint32_t *t = r->table;
    uint64_t out_w = 0, chain_v = 0, ctr_w = 0;
    for (uint32_t m = 0; m < p->L; m++) {
        t[P_LEVEL + 4 * m] = p->w[m];
        t[P_LEVEL + 4 * m + 1] = p->h[m];
        if (m >= 1) {
            t[P_LEVEL + 4 * m + 3] = (uint32_t)out_w;
            out_w += (uint64_t)p->w[m] * p->h[m] * wpt;
            /* device-resident encoding binds each level at its offset: keep offsets aligned */
            if (align_words > 1) out_w = (out_w + align_words - 1) / align_words * align_words;
        }
    }
    for (uint32_t s = 0; s < p->nst; s++) {
        mip_stage *st = &p->st[s];
        if (st->write_chain) {
            uint32_t top = st->l0 + st->K;
            t[P_LEVEL + 4 * top + 2] = (uint32_t)chain_v;
            chain_v += (uint64_t)p->w[top] * p->h[top];
        }
        if (st->fast == MIP_FAST_TAIL) /* the tail passes every level but its last through the chain */
            for (uint32_t m = st->l0 + 1; m < st->l0 + st->K; m++) {
                t[P_LEVEL + 4 * m + 2] = (uint32_t)chain_v;
                chain_v += (uint64_t)p->w[m] * p->h[m];
            }
        if (s >= 1) {
            st->ctr_off = (uint32_t)ctr_w;
            ctr_w += (uint64_t)st->ntx * st->nty * r->count;
        }
        uint32_t *sw = &t[P_STAGE + 8 * s];
        sw[0] = st->l0;
        sw[1] = st->K;
        sw[2] = st->T;
        sw[3] = st->ntx;
        sw[4] = st->nty;
        sw[5] = st->ctr_off;
        sw[6] = p->one ? (uint32_t)st->fast : st->shuffle; /* sp_one: the stage's kind (mip_sp.comp) */
        sw[7] = st->write_chain;
    }
    if (p->nst && p->st[p->nst - 1].sp) { /* mip_sp.comp: the tail's arrival counter per texture (job word 7) */
        t[7] = (uint32_t)ctr_w;
        ctr_w += r->count;
    }
    r->in_words = (uint32_t)((uint64_t)r->W * r->H * ((flags & MIPF_IN_F32) ? 4 : 1));
    r->out_words = (uint32_t)out_w;
    r->chain_vec4 = (uint32_t)chain_v;
    r->ctr_words = (uint32_t)ctr_w;
    t[0] = p->L;
    t[1] = r->count;
    t[2] = flags;
    t[3] = baseline ? 0 : p->nst;
    t[4] = r->W * r->H;
    t[5] = r->chain_vec4;
    t[6] = r->out_words;
    for (uint32_t z = 0; z < r->count; z++) t[P_TEX + z] = weighted ? weighted[z] != 0 : 0;

    uint64_t out_bytes = out_w * 4 * r->count, chain_bytes = chain_v * 16 * r->count, ctr_bytes = ctr_w * 4;
    KILN_TRY(check_range(ctx, gpu, out_bytes, "output levels", r->W, r->H, r->count));
    KILN_TRY(check_range(ctx, gpu, chain_bytes, "fp32 chain", r->W, r->H, r->count));
    KILN_TRY(check_range(ctx, gpu, ctr_bytes, "counters", r->W, r->H, r->count));

    kiln_vk_io_destroy(gpu, &r->prm);
    kiln_vk_io_destroy(gpu, &r->out);
    kiln_vk_buffer_destroy(gpu, &r->chain);
    kiln_vk_buffer_destroy(gpu, &r->ctr);
    KILN_TRY(kiln_vk_io_create(ctx, gpu, (VkDeviceSize)r->table_words * 4, 0, &r->prm));
    memcpy(kiln_vk_io_map(&r->prm), r->table, (size_t)r->table_words * 4);
    KILN_TRY(io_flush(ctx, gpu, &r->prm));
    if (device_out) /* read in place by later passes, never downloaded: no staging buffer */
        KILN_TRY(kiln_vk_buffer_create(ctx, gpu, out_bytes ? out_bytes : 16, KILN_VK_MEM_DEVICE, &r->out.dev));
    else
        KILN_TRY(kiln_vk_io_create(ctx, gpu, out_bytes ? out_bytes : 16, 1, &r->out));
    KILN_TRY(kiln_vk_buffer_create(ctx, gpu, chain_bytes ? chain_bytes : 16, KILN_VK_MEM_DEVICE, &r->chain));
    KILN_TRY(kiln_vk_buffer_create(ctx, gpu, ctr_bytes ? ctr_bytes : 16, KILN_VK_MEM_DEVICE, &r->ctr));
    r->ctr_fresh = 1;
    if (!r->lut.dev.buffer) {
        KILN_TRY(kiln_vk_io_create(ctx, gpu, 1024 * 4, 0, &r->lut));
        float *l = kiln_vk_io_map(&r->lut);
        kiln__gpu_mip_lut(l, (flags & MIPF_DECODE_SRGB) != 0);
        KILN_TRY(io_flush(ctx, gpu, &r->lut));
    }
    if (baseline) {
        uint32_t zero = 0;
        kiln_vk_pipeline_desc d = {.shader = "mip_baseline", .local_size = MIP_LOCAL, .spec = &zero, .nspec = 0,
                                   .nbindings = MIP_BINDINGS, .push_size = 8, .subgroup_size = subgroup_size};
        KILN_TRY(kiln_vk_pipeline_get(ctx, gpu, &d, &r->base));
    } else {
        kiln_vk_pipeline_desc d = {.shader = "mip_tile", .local_size = MIP_LOCAL, .nbindings = MIP_BINDINGS,
                                   .push_size = 8, .subgroup_size = subgroup_size,
                                   .full_subgroups = gpu->full_subgroups};
        KILN_TRY(kiln_vk_pipeline_get(ctx, gpu, &d, &r->tile));
        int any_even = 0, any_level = 0, any_even2 = 0;
        if (p->one) { /* shaders/mip_one.comp: the first stage's kind, shared sizes for the tail (if any) */
            const mip_stage *fs = &p->st[0], *ls = &p->st[p->nst - 1];
            uint32_t spec[5] = {fs->fast == MIP_FAST_EVEN ? 0u : fs->fast == MIP_FAST_EVEN2 ? 3u : 1u, 256u, 0u, 2u, 0u};
            if (ls->fast == MIP_FAST_SPTAIL)
                while (spec[1] < p->w[ls->l0 + 1] * p->h[ls->l0 + 1]) spec[1] *= 2; /* <= MIP_SP_CAP (sp_one_cap) */
            spec[2] = spec[1] / 2;
            for (uint32_t s = 1; s < p->nst; s++) spec[4] |= 1u << p->st[s].fast; /* SP_KINDS: the chained kinds */
            if (spec_union()) /* the default plans' kinds (mip_fast2.comp's only where the plan has it: opt-in) */
                spec[4] |= 1u << MIP_FAST_EVEN | 1u << MIP_FAST_LEVEL | 1u << MIP_FAST_SPTAIL;
            kiln_vk_pipeline_desc f = {.shader = "mip_one", .local_size = MIP_LOCAL, .spec = spec, .nspec = 5,
                                       .nbindings = MIP_BINDINGS, .push_size = MIP_FAST_PUSH,
                                       .subgroup_size = subgroup_size};
            KILN_TRY(kiln_vk_pipeline_get(ctx, gpu, &f, &r->sp));
        } else if (p->nst && p->st[p->nst - 1].sp) { /* mip_sp.comp: mode, shared sizes, chain (spec constants 1..4) */
            const mip_stage *ls = &p->st[p->nst - 1], *fs = ls;
            while (fs->sp == 4) fs--; /* the chain's first stage */
            const uint32_t m1 = ls->sp == 2 ? 1u : ls->l0 + ls->K + 1;
            uint32_t spec[4] = {ls->sp == 2 ? 2u : fs->fast == MIP_FAST_EVEN ? 0u : 1u, 256u, 0u, fs->sp == 3};
            while (spec[1] < p->w[m1] * p->h[m1]) spec[1] *= 2; /* <= MIP_SP_CAP (sp_fuse) */
            if (spec_union()) spec[1] = MIP_SP_CAP;
            spec[2] = spec[1] / 2;
            kiln_vk_pipeline_desc f = {.shader = "mip_sp", .local_size = MIP_LOCAL, .spec = spec, .nspec = 4,
                                       .nbindings = MIP_BINDINGS, .push_size = MIP_FAST_PUSH,
                                       .subgroup_size = subgroup_size};
            KILN_TRY(kiln_vk_pipeline_get(ctx, gpu, &f, &r->sp));
        }
        for (uint32_t s = 0; s < p->nst; s++) {
            if (p->st[s].sp) continue;
            any_even2 |= p->st[s].fast == MIP_FAST_EVEN2;
            any_even |= p->st[s].fast == MIP_FAST_EVEN;
            any_level |= p->st[s].fast == MIP_FAST_LEVEL || p->st[s].fast == MIP_FAST_TAIL || p->st[s].fast == MIP_FAST_LEVEL2;
        }
        if (any_even) {
            kiln_vk_pipeline_desc f = {.shader = "mip_fast", .local_size = MIP_LOCAL, .nbindings = MIP_BINDINGS,
                                       .push_size = MIP_FAST_PUSH, .subgroup_size = subgroup_size};
            KILN_TRY(kiln_vk_pipeline_get(ctx, gpu, &f, &r->fast));
        }
        if (any_even2) {
            kiln_vk_pipeline_desc f = {.shader = "mip_fast2", .local_size = MIP_LOCAL, .nbindings = MIP_BINDINGS,
                                       .push_size = MIP_FAST_PUSH, .subgroup_size = subgroup_size};
            KILN_TRY(kiln_vk_pipeline_get(ctx, gpu, &f, &r->fast2));
        }
        if (any_level) {
            kiln_vk_pipeline_desc f = {.shader = "mip_fast_level", .local_size = MIP_LOCAL,
                                       .nbindings = MIP_BINDINGS, .push_size = MIP_FAST_PUSH,
                                       .subgroup_size = subgroup_size};
            KILN_TRY(kiln_vk_pipeline_get(ctx, gpu, &f, &r->fast_level));
        }
    }
    return KILN_OK;
}

/* The fast shaders' push constants (mip_fast_common.glsl Push): words 0, 1 are set by the caller. */
static void fast_push(const mip_run *r, const mip_stage *st, uint32_t *w)
{
    const uint32_t *t = r->table;
    const uint32_t l0 = st->l0, top = st->l0 + st->K;
    w[2] = l0;
    w[3] = st->K;
    w[4] = st->ntx;
    w[5] = st->nty;
    w[6] = st->write_chain;
    w[7] = t[2];
    w[8] = r->W;
    w[9] = r->H;
    w[10] = t[P_LEVEL + 4 * l0 + 2];
    w[11] = t[P_LEVEL + 4 * top + 2];
    w[12] = t[4];
    w[13] = t[5];
    w[14] = t[6];
    w[15] = 0;
    for (uint32_t i = 0; i < 8; i++) w[16 + i] = l0 + 1 + i < r->plan.L ? t[P_LEVEL + 4 * (l0 + 1 + i) + 3] : 0;
}

static kiln_status run_record(kiln_context *ctx, kiln_vk_cmd *cmd, mip_run *r, int strategy)
{
    kiln_vk_binding b[MIP_BINDINGS] = {{.buffer = r->prm.dev.buffer}, {.buffer = r->in.dev.buffer},
                                       {.buffer = r->chain.buffer},   {.buffer = r->out.dev.buffer},
                                       {.buffer = r->lut.dev.buffer}, {.buffer = r->ctr.buffer}};
    const mip_plan *p = &r->plan;
    if (strategy == KILN_MIP_STRATEGY_BASELINE) {
        uint32_t texels = p->w[1] * p->h[1];
        uint32_t push[2] = {texels, texels * r->count};
        return kiln_vk_cmd_dispatch_linear(ctx, cmd, r->base, b, push, (uint64_t)texels * r->count);
    }
    const int sp = p->nst && p->st[p->nst - 1].sp; /* single pass on the fast path: sp_fuse */
    const int single = !sp && p->nst && !p->st[0].fast && /* mip_tile.comp's single pass (KILN_GPU_MIP_FAST=0, 1) */
                       (strategy == KILN_MIP_STRATEGY_SINGLE_PASS || strategy == KILN_MIP_STRATEGY_AUTO);
    if ((single && p->nst > 1) || (sp && r->ctr_fresh)) {
        vkCmdFillBuffer(cmd->cb, r->ctr.buffer, 0, VK_WHOLE_SIZE, 0);
        kiln_vk_cmd_transfer_to_compute(cmd->cb);
    }
    if (sp) r->ctr_fresh = 0;
    for (uint32_t s = 0; s < p->nst; s++) {
        const mip_stage *st = &p->st[s];
        uint32_t tiles = st->ntx * st->nty;
        uint32_t gx = tiles < 65535 ? tiles : 65535, gy = div_up(tiles, gx);
        uint32_t push[MIP_FAST_PUSH / 4] = {s, single ? 1u : st->fast == MIP_FAST_TAIL ? 1u : st->fast == MIP_FAST_LEVEL2 ? 2u : 0u};
        if (st->fast) fast_push(r, st, push);
        if (st->sp == 4) continue; /* made inside the chain's dispatch */
        if (st->sp) /* mip_sp.comp's mode */
            push[1] = st->sp == 2 ? 2u : st->fast == MIP_FAST_EVEN ? 0u : st->fast == MIP_FAST_EVEN2 ? 3u : 1u;
        if (st->sp == 3) push[15] = p->nst - 1;                                        /* the chain's last stage */
        const kiln_vk_pipeline *pipe = st->sp                       ? r->sp
                                       : st->fast == MIP_FAST_EVEN    ? r->fast
                                       : st->fast == MIP_FAST_EVEN2 ? r->fast2
                                       : st->fast                   ? r->fast_level
                                                                    : r->tile;
        KILN_TRY(kiln_vk_cmd_dispatch(ctx, cmd, pipe, b, push, gx, gy, r->count));
        if (single) break;
        if (s + 1 < p->nst && p->st[s + 1].sp != 4) kiln_vk_cmd_barrier(cmd);
    }
    return KILN_OK;
}

/* "E6+O+T5": the stages (E even, O odd level, T tail of the fast path; G general with its level count). */
static void plan_desc(const mip_plan *p, char *out, size_t n)
{
    size_t k = 0;
    out[0] = 0;
    for (uint32_t s = 0; s < p->nst && k + 8 < n; s++) {
        const mip_stage *st = &p->st[s];
        int w = snprintf(out + k, n - k, "%s%s%u", s ? "+" : "",
                         st->fast == MIP_FAST_EVEN    ? "E"
                         : st->fast == MIP_FAST_EVEN2 ? "F"
                         : st->fast == MIP_FAST_LEVEL ? "O"
                         : st->fast == MIP_FAST_LEVEL2 ? "P"
                         : st->fast == MIP_FAST_TAIL  ? "T"
                         : st->fast == MIP_FAST_SPTAIL ? "t"
                                                      : "G",
                         st->K);
        if (w >= 0 && p->one) { /* one dispatch: "c" on every stage made inside the first one's dispatch */
            if (s && k + (size_t)w + 8 < n) w += snprintf(out + k + (size_t)w, n - k - (size_t)w, "c");
        } else if (w >= 0 && st->sp && k + (size_t)w + 8 < n) /* single pass: "s" + the tail's levels ("S": tail alone) */
            w += st->sp == 3 || (st->sp == 4 && s + 1 < p->nst) /* "c": in the chain's dispatch */
                     ? snprintf(out + k + (size_t)w, n - k - (size_t)w, "c")
                     : snprintf(out + k + (size_t)w, n - k - (size_t)w, "%s%u", st->sp == 2 ? "S" : "s",
                                st->sp == 2 ? st->K : p->L - 1 - (st->l0 + st->K));
        if (w < 0) break;
        k += (size_t)w;
    }
}

/* Dispatches of a plan: the general single pass (mip_tile.comp) is one, the rest one per stage (those made inside
 * another stage's dispatch excepted). */
static uint32_t plan_count(const mip_plan *p, int strategy)
{
    const int sp = p->nst && p->st[p->nst - 1].sp;
    if (!sp && p->nst && !p->st[0].fast &&
        (strategy == KILN_MIP_STRATEGY_SINGLE_PASS || strategy == KILN_MIP_STRATEGY_AUTO))
        return 1u;
    uint32_t n = 0;
    for (uint32_t s = 0; s < p->nst; s++) n += p->st[s].sp != 4;
    return n;
}

static uint32_t plan_dispatches(const mip_run *r, int strategy) { return plan_count(&r->plan, strategy); }

static int strategy_known(int s) { return s >= KILN_MIP_STRATEGY_AUTO && s <= KILN_MIP_STRATEGY_BASELINE; }

/* AUTO runs the pyramid plan while the fast box path is on (far faster than the single pass, which
 * serialises its tail), else the single pass as before. */
static int resolve_strategy(int s, int fast)
{
    return s == KILN_MIP_STRATEGY_AUTO && fast ? KILN_MIP_STRATEGY_PYRAMID : s;
}

uint32_t kiln__gpu_mip_plan_dispatches(uint32_t W, uint32_t H, uint32_t L, uint32_t count, int strategy, char *desc,
                                       size_t desc_size)
{
    if (desc && desc_size) desc[0] = 0;
    if (W == 0 || H == 0 || L < 2 || L > MIP_MAX_LEVELS || L > kiln_mip_level_count(W, H) || count == 0 ||
        !strategy_known(strategy) || strategy == KILN_MIP_STRATEGY_BASELINE || strategy == KILN_MIP_STRATEGY_BLIT)
        return 0;
    mip_plan *p = malloc(sizeof *p);
    if (!p) return 0;
    const int fast = fast_enabled(), rs = resolve_strategy(strategy, fast);
    make_plan(p, W, H, L, rs, 1, fast, count);
    if (desc && desc_size) plan_desc(p, desc, desc_size);
    const uint32_t n = plan_count(p, rs);
    free(p);
    return n;
}

static const char *strategy_name(int s)
{
    static const char *names[] = {"auto", "blit", "per-level", "subgroup", "pyramid", "single-pass", "baseline"};
    return strategy_known(s) ? names[s] : "?";
}

typedef struct copy_out_job {
    const kiln__gpu_mip_job *job;
    const uint8_t *src;
    const mip_run *r;
    size_t bpt;
} copy_out_job;

static void copy_out(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    const copy_out_job *c = user;
    const mip_run *r = c->r;
    for (size_t i = begin; i < end; i++) {
        uint32_t z = (uint32_t)(i / (r->plan.L - 1)), m = (uint32_t)(i % (r->plan.L - 1)) + 1;
        size_t off = ((size_t)z * r->out_words + r->table[P_LEVEL + 4 * m + 3]) * 4;
        memcpy(c->job->dst[(size_t)z * c->job->levels + m], c->src + off,
               (size_t)r->plan.w[m] * r->plan.h[m] * c->bpt);
    }
}

kiln_status kiln__gpu_mip(kiln_context *ctx, const kiln__gpu_mip_job *job)
{
    if (!job || !job->images || job->count == 0 || !job->dst)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "GPU mipmaps: empty job");
    if (!strategy_known(job->strategy))
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "GPU mipmaps: unknown strategy %d", job->strategy);
    if (job->strategy == KILN_MIP_STRATEGY_BASELINE)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                          "GPU mipmaps: the baseline strategy writes wrong levels on purpose (bench/gpu_mip only)");
    const kiln_image *b0 = &job->images[0];
    if (b0->type != KILN_PIXEL_U8 && b0->type != KILN_PIXEL_F32)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "GPU mipmaps: %u-bit images are made on the CPU (GPU: 8-bit and float)",
                          (unsigned)b0->type * 8);
    if (job->out_kind != 1 && job->out_kind != 3 && job->out_kind != 4)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "GPU mipmaps: output kind %d (GPU: RGBA8, RGBA16F, RGBA32F)",
                          job->out_kind);
    if (job->levels == 0 || job->levels > MIP_MAX_LEVELS || job->levels > kiln_mip_level_count(b0->width, b0->height))
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "GPU mipmaps: %u levels for %ux%u", job->levels, b0->width,
                          b0->height);
    for (uint32_t i = 1; i < job->count; i++)
        if (job->images[i].width != b0->width || job->images[i].height != b0->height || job->images[i].type != b0->type)
            return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "GPU mipmaps: image %u differs in size or type from image 0", i);
    ctx->last_gpu_ms = 0.0;
    if (job->levels == 1) return KILN_OK;

    kiln_gpu *gpu;
    KILN_TRY(kiln__gpu_get(ctx, &gpu));
    if (job->filter != KILN_MIP_FILTER_BOX || job->normal_map || job->alpha_coverage_ref > 0.0f)
        return kiln__gpu_mip_filter(ctx, gpu, job);
    if (job->strategy == KILN_MIP_STRATEGY_BLIT) {
        double bms = 0.0;
        KILN_TRY(kiln__gpu_mip_blit(ctx, gpu, job, &bms));
        if (ctx->params.verbose)
            fprintf(stderr, "kiln: mipmaps on %s, strategy blit: %u blits, %.3f ms\n", gpu->props.deviceName,
                    job->levels - 1, bms);
        ctx->last_gpu_ms = bms;
        return KILN_OK;
    }
    mip_run r;
    memset(&r, 0, sizeof r);
    r.gpu = gpu;
    r.count = job->count;
    r.W = b0->width;
    r.H = b0->height;
    r.plan.L = job->levels;
    uint32_t flags = (job->decode_srgb ? MIPF_DECODE_SRGB : 0) | (b0->type == KILN_PIXEL_F32 ? MIPF_IN_F32 : 0) |
                     (job->out_kind == 3 ? MIPF_OUT_F16 : job->out_kind == 4 ? MIPF_OUT_F32 : 0) |
                     (job->out_srgb && job->out_kind != 3 ? MIPF_OUT_SRGB : 0);
    size_t texel_bytes = b0->type == KILN_PIXEL_F32 ? 16 : 4;
    size_t img_bytes = (size_t)r.W * r.H * texel_bytes;
    kiln_status st = check_range(ctx, gpu, (uint64_t)img_bytes * r.count, "base images", r.W, r.H, r.count);
    const int fast = fast_enabled(), strategy = resolve_strategy(job->strategy, fast);
    if (st == KILN_OK) st = run_prepare(ctx, &r, strategy, flags, job->weighted, job->subgroup_size, 1, 0,
                                             fast);
    if (st == KILN_OK) st = kiln_vk_io_create(ctx, gpu, (VkDeviceSize)img_bytes * r.count, 0, &r.in);
    if (st == KILN_OK) {
        uint8_t *m = kiln_vk_io_map(&r.in);
        for (uint32_t i = 0; i < r.count; i++) memcpy(m + i * img_bytes, job->images[i].pixels, img_bytes);
        st = io_flush(ctx, gpu, &r.in);
    }
    kiln_vk_cmd cmd;
    memset(&cmd, 0, sizeof cmd);
    double ms = 0.0;
    if (st == KILN_OK) st = kiln_vk_cmd_begin(ctx, gpu, r.plan.nst + 1, &cmd);
    if (st == KILN_OK) {
        kiln_vk_cmd_upload(&cmd, &r.prm, 0);
        kiln_vk_cmd_upload(&cmd, &r.lut, 0);
        kiln_vk_cmd_upload(&cmd, &r.in, 0);
        kiln_vk_cmd_timestamp(&cmd, 0);
        st = run_record(ctx, &cmd, &r, strategy);
        kiln_vk_cmd_timestamp(&cmd, 1);
        kiln_vk_cmd_download(&cmd, &r.out, 0);
        if (st == KILN_OK) st = kiln_vk_cmd_submit(ctx, &cmd, &ms);
    }
    kiln_vk_cmd_free(&cmd);
    /* KILN_GPU_MIP_RESUBMIT=1 (testing aid, helper mip16b: test_gpu_mip single_pass_resubmit): the same run
     * submitted again on the same buffers, output and fp32 chain filled with 0xAB bytes first, the counters not zeroed
     * again (mip_sp.comp's self-reset must have left them at 0); the levels returned are the second run's */
    const char *resub = getenv("KILN_GPU_MIP_RESUBMIT");
    if (st == KILN_OK && resub && resub[0] == '1') {
        st = kiln_vk_cmd_begin(ctx, gpu, r.plan.nst + 1, &cmd);
        if (st == KILN_OK) {
            vkCmdFillBuffer(cmd.cb, r.out.dev.buffer, 0, VK_WHOLE_SIZE, 0xABABABABu);
            vkCmdFillBuffer(cmd.cb, r.chain.buffer, 0, VK_WHOLE_SIZE, 0xABABABABu);
            kiln_vk_cmd_transfer_to_compute(cmd.cb);
            st = run_record(ctx, &cmd, &r, strategy);
            kiln_vk_cmd_download(&cmd, &r.out, 0);
            if (st == KILN_OK) st = kiln_vk_cmd_submit(ctx, &cmd, NULL);
        }
        kiln_vk_cmd_free(&cmd);
    }
    if (st == KILN_OK) st = kiln_vk_buffer_invalidate(ctx, gpu, r.out.direct ? &r.out.dev : &r.out.staging);
    if (st == KILN_OK) {
        copy_out_job c = {.job = job, .src = kiln_vk_io_map(&r.out), .r = &r,
                          .bpt = job->out_kind == 1 ? 4 : job->out_kind == 3 ? 8 : 16};
        st = kiln__parallel_for(ctx, (size_t)r.count * (r.plan.L - 1), 1, copy_out, &c);
    }
    if (st == KILN_OK && ctx->params.verbose) {
        char desc[256];
        plan_desc(&r.plan, desc, sizeof desc);
        fprintf(stderr, "kiln: mipmaps on %s, strategy %s: %u dispatch(es) (%s), %.3f ms kernel time\n",
                gpu->props.deviceName, strategy_name(job->strategy),
                plan_dispatches(&r, strategy),
                desc, ms);
    }
    run_free(&r);
    if (st == KILN_OK) ctx->last_gpu_ms = ms;
    return st;
}

/* ---------------------------------------------------------------- device-resident chains */

typedef struct copy_rows_job {
    uint8_t *dst;
    const uint8_t *src;
    size_t row;
} copy_rows_job;

static void copy_rows(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    const copy_rows_job *c = user;
    memcpy(c->dst + begin * c->row, c->src + begin * c->row, (end - begin) * c->row);
}

/* KILN_GPU_MIP_POISON=1 (a testing aid for the device-resident path): fills the given device buffers
 * with 0xAB bytes before use, as uninitialised memory on a discrete GPU may hold, then a barrier that
 * orders the fills before later transfers (the counters' zero fill) and shaders. */
void kiln__gpu_mip_poison(VkCommandBuffer cb, const VkBuffer *bufs, uint32_t n)
{
    const char *env = getenv("KILN_GPU_MIP_POISON");
    if (!env || env[0] != '1') return;
    for (uint32_t i = 0; i < n; i++)
        if (bufs[i]) vkCmdFillBuffer(cb, bufs[i], 0, VK_WHOLE_SIZE, 0xABABABABu);
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT |
                                           VK_ACCESS_SHADER_WRITE_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, NULL, 0,
                         NULL);
}

static void run_free_cb(kiln_gpu *gpu, void *run)
{
    (void)gpu;
    run_free(run);
    free(run);
}

void kiln__gpu_mip_dev_free(kiln__gpu_mip_dev *dev)
{
    if (dev && dev->run && dev->free_run) dev->free_run(dev->gpu, dev->run);
    if (dev) memset(dev, 0, sizeof *dev);
}

static kiln_status mip_record(kiln_context *ctx, kiln_gpu *gpu, const kiln__gpu_mip_job *job, uint32_t align_bytes,
                              kiln_vk_cmd *cmd, VkQueryPool qp, kiln__gpu_mip_dev *dev, kiln__gpu_mip_fill_fn fill,
                              void *user);

kiln_status kiln__gpu_mip_record(kiln_context *ctx, kiln_gpu *gpu, const kiln__gpu_mip_job *job, uint32_t align_bytes,
                                 kiln_vk_cmd *cmd, VkQueryPool qp, kiln__gpu_mip_dev *dev)
{
    return mip_record(ctx, gpu, job, align_bytes, cmd, qp, dev, NULL, NULL);
}

kiln_status kiln__gpu_mip_record_fill(kiln_context *ctx, kiln_gpu *gpu, const kiln__gpu_mip_job *job,
                                      uint32_t align_bytes, kiln_vk_cmd *cmd, VkQueryPool qp, kiln__gpu_mip_dev *dev,
                                      kiln__gpu_mip_fill_fn fill, void *user)
{
    if (!fill) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "GPU mipmaps: no fill for the base");
    return mip_record(ctx, gpu, job, align_bytes, cmd, qp, dev, fill, user);
}

static kiln_status mip_record(kiln_context *ctx, kiln_gpu *gpu, const kiln__gpu_mip_job *job, uint32_t align_bytes,
                              kiln_vk_cmd *cmd, VkQueryPool qp, kiln__gpu_mip_dev *dev, kiln__gpu_mip_fill_fn fill,
                              void *user)
{
    memset(dev, 0, sizeof *dev);
    dev->gpu = gpu;
    if (!job || !job->images || job->count == 0 || !strategy_known(job->strategy) ||
        job->strategy == KILN_MIP_STRATEGY_BASELINE || job->strategy == KILN_MIP_STRATEGY_BLIT)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "device-resident GPU mipmaps: strategy %s is not recorded here",
                          job ? strategy_name(job->strategy) : "?");
    const kiln_image *b0 = &job->images[0];
    if (b0->type != KILN_PIXEL_U8 && b0->type != KILN_PIXEL_F32)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "device-resident GPU mipmaps: 8-bit and float images only");
    if (job->out_kind != 1 && job->out_kind != 3 && job->out_kind != 4)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "device-resident GPU mipmaps: output kind %d", job->out_kind);
    if (job->levels < 2 || job->levels > MIP_MAX_LEVELS || job->levels > kiln_mip_level_count(b0->width, b0->height))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "device-resident GPU mipmaps: %u levels for %ux%u", job->levels,
                          b0->width, b0->height);
    for (uint32_t i = 1; i < job->count; i++)
        if (job->images[i].width != b0->width || job->images[i].height != b0->height || job->images[i].type != b0->type)
            return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "GPU mipmaps: image %u differs in size or type from image 0", i);
    if (align_bytes == 0 || align_bytes % 4 != 0 || (align_bytes & (align_bytes - 1)) != 0)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "GPU mipmaps: level alignment %u", align_bytes);
    if ((job->filter != KILN_MIP_FILTER_BOX || job->normal_map || job->alpha_coverage_ref > 0.0f) && fill)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "device-resident GPU mipmaps: a base made on the device, box filter only");
    if (job->filter != KILN_MIP_FILTER_BOX || job->normal_map || job->alpha_coverage_ref > 0.0f)
        return kiln__gpu_mip_filter_record(ctx, gpu, job, align_bytes, cmd, qp, dev);

    mip_run *r = kiln__calloc(ctx, 1, sizeof *r);
    if (!r) return KILN_ERR_OUT_OF_MEMORY;
    r->gpu = gpu;
    r->count = job->count;
    r->W = b0->width;
    r->H = b0->height;
    r->plan.L = job->levels;
    dev->run = r;
    dev->free_run = run_free_cb;
    uint32_t flags = (job->decode_srgb ? MIPF_DECODE_SRGB : 0) | (b0->type == KILN_PIXEL_F32 ? MIPF_IN_F32 : 0) |
                     (job->out_kind == 3 ? MIPF_OUT_F16 : job->out_kind == 4 ? MIPF_OUT_F32 : 0) |
                     (job->out_srgb && job->out_kind != 3 ? MIPF_OUT_SRGB : 0);
    size_t img_bytes = (size_t)r->W * r->H * (b0->type == KILN_PIXEL_F32 ? 16 : 4);
    KILN_TRY(check_range(ctx, gpu, (uint64_t)img_bytes * r->count, "base images", r->W, r->H, r->count));
    const int fast = fast_enabled(), strategy = resolve_strategy(job->strategy, fast);
    KILN_TRY(run_prepare(ctx, r, strategy, flags, job->weighted, job->subgroup_size, align_bytes / 4, 1, fast));
    if (fill) KILN_TRY(kiln_vk_buffer_create(ctx, gpu, (VkDeviceSize)img_bytes * r->count, KILN_VK_MEM_DEVICE, &r->in.dev));
    else KILN_TRY(kiln_vk_io_create(ctx, gpu, (VkDeviceSize)img_bytes * r->count, 0, &r->in));
    uint8_t *m = fill ? NULL : kiln_vk_io_map(&r->in);
    for (uint32_t i = 0; i < r->count && !fill; i++) {
        copy_rows_job cj = {m + i * img_bytes, job->images[i].pixels, img_bytes / r->H};
        KILN_TRY(kiln__parallel_for(ctx, r->H, 64, copy_rows, &cj)); /* the base into mapped memory */
    }
    if (!fill) KILN_TRY(io_flush(ctx, gpu, &r->in));
    kiln_vk_cmd_upload(cmd, &r->prm, 0);
    kiln_vk_cmd_upload(cmd, &r->lut, 0);
    if (!fill) kiln_vk_cmd_upload(cmd, &r->in, 0);
    if (qp) vkCmdWriteTimestamp(cmd->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp, 0);
    if (fill) { /* the base written on the device (mip16dev; inside the timed section) */
        KILN_TRY(fill(ctx, cmd, r->in.dev.buffer, user));
        kiln_vk_cmd_barrier(cmd);
    }
    kiln__gpu_mip_poison(cmd->cb, (VkBuffer[]){r->out.dev.buffer, r->chain.buffer, r->ctr.buffer}, 3);
    KILN_TRY(run_record(ctx, cmd, r, strategy));
    dev->in = r->in.dev.buffer;
    dev->out = r->out.dev.buffer;
    dev->image_stride = (VkDeviceSize)r->out_words * 4;
    for (uint32_t l = 1; l < job->levels; l++) dev->off[l] = (VkDeviceSize)r->table[P_LEVEL + 4 * l + 3] * 4;
    dev->dispatches = plan_dispatches(r, strategy);
    snprintf(dev->what, sizeof dev->what, "box filter, strategy %s", strategy_name(job->strategy));
    return KILN_OK;
}

/* ---------------------------------------------------------------- bench hook */

#define MIP_EVICT_BYTES ((VkDeviceSize)256 << 20)

static void compute_after_transfer_and_compute(VkCommandBuffer cb)
{
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                           VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
}

kiln_status kiln__gpu_mip_bench(kiln_context *ctx, uint32_t w, uint32_t h, uint32_t count, int alpha,
                                const int *strategies, uint32_t nstrat, uint32_t runs, double *ms, double *copy_ms,
                                double *bytes_moved)
{
    if (w == 0 || h == 0 || count == 0 || runs == 0 || !strategies || !ms || !copy_ms || !bytes_moved ||
        (uint64_t)w * h > KILN_MAX_PIXELS)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "mip bench: bad arguments");
    kiln_gpu *gpu;
    KILN_TRY(kiln__gpu_get(ctx, &gpu));
    const uint32_t L = kiln_mip_level_count(w, h);
    double moved = (double)w * h * 4;
    for (uint32_t l = 1; l < L; l++) moved += (double)kiln_level_dim(w, l) * kiln_level_dim(h, l) * 4;
    moved *= count;
    *bytes_moved = moved;
    const uint64_t img_bytes = (uint64_t)w * h * 4;
    kiln_status st = check_range(ctx, gpu, img_bytes * count, "base images", w, h, count);
    if (st != KILN_OK) return st;

    mip_run r;
    memset(&r, 0, sizeof r);
    r.gpu = gpu;
    r.count = count;
    r.W = w;
    r.H = h;
    uint8_t *weighted = kiln__calloc(ctx, count, 1);
    kiln_vk_buffer evict = {0}, csrc = {0}, cdst = {0};
    VkDeviceSize half = (VkDeviceSize)(moved / 2) & ~(VkDeviceSize)3;
    if (!weighted) return KILN_ERR_OUT_OF_MEMORY;
    memset(weighted, alpha ? 1 : 0, count);
    st = kiln_vk_io_create(ctx, gpu, img_bytes * count, 0, &r.in);
    if (st == KILN_OK) {
        /* synthetic texels: a hash of the position (colour), alpha 255 or a hash when `alpha` */
        uint32_t *px = kiln_vk_io_map(&r.in);
        for (uint64_t i = 0; i < (uint64_t)w * h * count; i++) {
            uint32_t v = (uint32_t)i * 2654435761u;
            v ^= v >> 15;
            px[i] = alpha ? v : (v | 0xff000000u);
        }
        st = io_flush(ctx, gpu, &r.in);
    }
    if (st == KILN_OK) st = kiln_vk_buffer_create(ctx, gpu, MIP_EVICT_BYTES, KILN_VK_MEM_DEVICE, &evict);
    if (st == KILN_OK) st = kiln_vk_buffer_create(ctx, gpu, half ? half : 4, KILN_VK_MEM_DEVICE, &csrc);
    if (st == KILN_OK) st = kiln_vk_buffer_create(ctx, gpu, half ? half : 4, KILN_VK_MEM_DEVICE, &cdst);
    if (st == KILN_OK && !r.in.direct) { /* the base images, once */
        kiln_vk_cmd cmd;
        st = kiln_vk_cmd_begin(ctx, gpu, 1, &cmd);
        if (st == KILN_OK) {
            kiln_vk_cmd_upload(&cmd, &r.in, 0);
            st = kiln_vk_cmd_submit(ctx, &cmd, NULL);
        }
        kiln_vk_cmd_free(&cmd);
    }
    for (uint32_t s = 0; s < nstrat && st == KILN_OK; s++) {
        for (uint32_t i = 0; i < 2 * runs; i++) ms[(size_t)s * 2 * runs + i] = -1.0;
        if (strategies[s] == KILN_MIP_STRATEGY_BLIT) {
            kiln_status bs = kiln__gpu_mip_blit_bench(ctx, gpu, w, h, count, r.in.dev.buffer, evict.buffer, runs,
                                                      ms + (size_t)s * 2 * runs);
            if (bs == KILN_ERR_UNSUPPORTED) kiln__clear_error(ctx);
            else st = bs;
            continue;
        }
        r.plan.L = L;
        const int strat = strategies[s] & ~(KILN__GPU_MIP_BENCH_GENERAL | KILN__GPU_MIP_BENCH_EVEN);
        const int fast = (strategies[s] & KILN__GPU_MIP_BENCH_GENERAL) ? 0
                         : (strategies[s] & KILN__GPU_MIP_BENCH_EVEN) ? 1
                                                                       : fast_enabled();
        const int rstrat = resolve_strategy(strat, fast);
        kiln_status ps = run_prepare(ctx, &r, rstrat, MIPF_DECODE_SRGB | MIPF_OUT_SRGB, weighted, 0, 1, 0, fast);
        if (ps != KILN_OK) {
            if (ps == KILN_ERR_UNSUPPORTED) {
                kiln__clear_error(ctx);
                continue;
            }
            st = ps;
            break;
        }
        if (getenv("KILN_GPU_MIP_PLAN")) { /* tuning aid: the plan timed */
            char desc[256];
            plan_desc(&r.plan, desc, sizeof desc);
            fprintf(stderr, "gpu_mip plan %ux%u x%u %s%s: %s (%u dispatches)\n", w, h, count, strategy_name(strat),
                    fast ? "" : " (general)", desc, plan_dispatches(&r, rstrat));
        }
        /* one warm-up run (uploads), then runs cold and runs warm */
        for (uint32_t i = 0; i <= 2 * runs && st == KILN_OK; i++) {
            int cold = i >= 1 && i <= runs;
            kiln_vk_cmd cmd;
            st = kiln_vk_cmd_begin(ctx, gpu, r.plan.nst + 1, &cmd);
            if (st != KILN_OK) break;
            if (i == 0) {
                kiln_vk_cmd_upload(&cmd, &r.prm, 0);
                kiln_vk_cmd_upload(&cmd, &r.lut, 0);
            }
            if (cold) {
                vkCmdFillBuffer(cmd.cb, evict.buffer, 0, VK_WHOLE_SIZE, (uint32_t)i);
                compute_after_transfer_and_compute(cmd.cb);
            }
            kiln_vk_cmd_timestamp(&cmd, 0);
            st = run_record(ctx, &cmd, &r, rstrat);
            kiln_vk_cmd_timestamp(&cmd, 1);
            double t = 0.0;
            if (st == KILN_OK) st = kiln_vk_cmd_submit(ctx, &cmd, &t);
            kiln_vk_cmd_free(&cmd);
            if (st == KILN_OK && i >= 1) ms[(size_t)s * 2 * runs + (i - 1)] = t;
        }
    }
    /* copy bandwidth: `half` bytes read + `half` written, L2 cold */
    *copy_ms = -1.0;
    for (uint32_t i = 0; i < runs && st == KILN_OK && half; i++) {
        kiln_vk_cmd cmd;
        st = kiln_vk_cmd_begin(ctx, gpu, 1, &cmd);
        if (st != KILN_OK) break;
        vkCmdFillBuffer(cmd.cb, evict.buffer, 0, VK_WHOLE_SIZE, i);
        compute_after_transfer_and_compute(cmd.cb);
        kiln_vk_cmd_timestamp(&cmd, 0);
        VkBufferCopy region = {0, 0, half};
        vkCmdCopyBuffer(cmd.cb, csrc.buffer, cdst.buffer, 1, &region);
        kiln_vk_cmd_timestamp(&cmd, 1);
        double t = 0.0;
        st = kiln_vk_cmd_submit(ctx, &cmd, &t);
        kiln_vk_cmd_free(&cmd);
        if (st == KILN_OK && (*copy_ms < 0.0 || t < *copy_ms)) *copy_ms = t;
    }
    kiln_vk_buffer_destroy(gpu, &evict);
    kiln_vk_buffer_destroy(gpu, &csrc);
    kiln_vk_buffer_destroy(gpu, &cdst);
    free(weighted);
    run_free(&r);
    return st;
}

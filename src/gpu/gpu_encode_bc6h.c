/* gpu_encode_bc6h.c - BC6H encoding on the GPU.
 *
 * gpu_strategy 1 (seed): GPURealTimeBC6H as betsy ships it, shaders/enc_bc6h_seed.comp, one
 *   invocation per block; fast -> its "fast" preset (mode 3 only), normal/high/max -> its "quality"
 *   preset (+ the best bounding-box partition in modes 1 and 14). UF16 only, as the original: SF16 is
 *   KILN_ERR_UNSUPPORTED (AUTO then encodes on the CPU).
 * gpu_strategy 0 (kiln), UF16 and SF16, the CPU encoder's searches (src/codec/bc6h_enc.c):
 *   fast: shaders/enc_bc6h.comp, four invocations per block try the one-subset modes in parallel, a
 *   shared-memory min-reduction picks the CPU's winner, which gets the CPU's least-squares pass.
 *   high (default): GPU-native, float only: rank the 32 partitions by a moment residual, fit the
 *   best P, score the (filtered) candidates cheaply (projection indices, linearised error), measure
 *   the best K (+ the best one-subset one) with the exact metric on the palette entries around each
 *   projection, give the best R of them L least-squares passes (run_high; docs/PERFORMANCE.md states
 *   its tolerance against the CPU). shaders/enc_bc6h_hl.comp by default (8 invocations per block,
 *   helper bc6hlanes); KILN_BC6H_HIGH_DESIGN=1: shaders/enc_bc6h_h.comp (one invocation per block,
 *   the same search); KILN_BC6H_HIGH_SPLIT=1: enc_bc6h_hl's code in two kernels (enc_bc6h_ha.comp scores and
 *   measures, enc_bc6h_hb.comp refines and packs; the same bytes; BC6H_HL_SPLIT; by default kernel A is
 *   enc_bc6h_haw.comp at 16 lanes per block, BC6H_HL_AWIDE; profiling aid KILN_BC6H_HIGH_PROF); KILN_BC6H_HIGH_DESIGN=4: the first GPU-native design,
 *   enc_bc6h_h4.comp (4 invocations per block). KILN_BC6H_GPU_EXACT=1 (not "0") selects the exact
 *   port below at high instead.
 *   normal/max (and high with KILN_BC6H_GPU_EXACT=1): shaders/enc_bc6h_q.comp, 8 / 8 / 16 invocations
 *   per block: partition fits and
 *   ranking, every (mode, partition) candidate of the CPU's search spread over the lanes, the CPU's k best by
 *   rank counting in shared memory, refined in parallel, the CPU's winner. Its arithmetic follows the
 *   CPU's (a table of the CPU's log terms and weights per half, binding 2; correctly rounded divisions,
 *   double least squares), so it needs shaderFloat64 (else KILN_ERR_UNSUPPORTED: AUTO uses the CPU).
 *
 * The image goes up as RGBA float rows in batches of block rows that fit the device's storage-buffer
 * range; each batch's blocks come back in order. Kernel time of all batches: ctx->last_gpu_ms. */
#include "gpu/gpu_encode.h"
#include "gpu/vk.h"
#include "codec/bc6h_modes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* host wall time in ms (KILN_BC6H_TRACE) */
static double bc6h_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

#define BC6H_LOCAL_SIZE 64u
#define BC6H_BATCH_MAX (256u << 20)

#define BC6H_KILN_LANES 4u /* invocations per block in enc_bc6h.comp (its LANES) */
/* invocations per block in enc_bc6h_q.comp (its LANES, a push constant) per quality: few lanes per
 * block keep most of them busy while the kept candidates are refined (2 / 4 / 12 of them); 64 / lanes
 * blocks per workgroup x candidates must fit its shared ERRS (1296): 8 x 44, 8 x 124, 4 x 324 */
static const uint32_t bc6h_q_lanes[4] = {0, 8, 8, 16};

/* enc_bc6h_h.comp (quality high, GPU-native, one invocation per block) defaults: partitions fitted
 * and tried (of the 32 ranked by a moment residual), candidates measured exactly (<= its MAXK),
 * least-squares passes, candidates given them (<= its MAXR); docs/PERFORMANCE.md has the measured
 * alternatives. enc_bc6h_h4.comp (the first design, KILN_BC6H_HIGH_DESIGN=4): 4 invocations per
 * block, at most 4 kept, its defaults 4, 4, 3. */
#define BC6H_HIGH_PARTS 4u
#define BC6H_HIGH_KEEP 4u
#define BC6H_HIGH_LS 6u
#define BC6H_HIGH_REFINE 2u /* of the K, the best R (by exact error) get the L passes */
#define BC6H_HIGH_MAXK 8u
#define BC6H_HIGH_MAXR 4u
#define BC6H_HIGH4_LANES 4u
/* enc_bc6h_hl.comp (KILN_BC6H_HIGH_DESIGN=lanes, the default): invocations per block (its LANES; 4, 8
 * or 16), at most 4 partitions and 4 kept (its MAXP, MAXK); its defaults P, K, L, R = 4, 4, 3, 2
 * (H100, 2026-11-25: 8 lanes and 3 passes were the fastest setting within test_gpu_bc6h's bounds;
 * docs/PERFORMANCE.md, "GPU high, several lanes per block") */
#define BC6H_HIGH_DEFAULT_LANES 1 /* 1: the default at high is enc_bc6h_hl.comp (0: enc_bc6h_h.comp) */
#define BC6H_HL_LANES 8u
#define BC6H_HL_MAXP 4u
#define BC6H_HL_MAXK 4u
/* its two-step sums of the least-squares normal equations (KILN_BC6H_HIGH_SUM2=1; the same bytes) */
#define BC6H_HL_SUM2 0u
/* its workgroup: BPW blocks (8; 4 at 16 lanes; KILN_BC6H_HIGH_BPW) x LANES invocations */
#define BC6H_HL_BPW(lanes) ((lanes) >= 16u ? 4u : 8u)
static const uint32_t bc6h_hl_cfg[4] = {4, 4, 3, 2}; /* P, K, L, R */
#define BC6H_HL_NSPEC 8u /* enc_bc6h_hl.comp's specialisation constants 1..8 */
/* its code variants (OPT, a bit mask; the same bytes): 7 = unrolled rank counts + per-component sums +
 * enc_bc6h_hr.comp. H100 2026-11-25 21:33 UTC (bench_bc6h --gpu-size 4096 --reps 7 --qualities high
 * --pipeline-stats, one process per setting): UF16 33.8-34.1 -> 30.7 ms, SF16 37.4-37.5 -> 33.7 ms, registers
 * 192 -> 160 (docs/PERFORMANCE.md) */
/* bit 13 (BAL3, helper bc6hk: phase 3's recentred variants strided over all lanes) gave the same bytes but 28.3 vs 24.0 ms
 * (H100 2026-11-26 15:57 UTC, UF16 4096^2, its shared arrays alone made kernel A 4.03 -> 5.00 ms at 2048^2): removed */
#define BC6H_HL_OPT 4103u /* 7 + bit 12 (MERGE3: phase 3's ranking by merging the lanes' sorted lists; helper bc6hhigh): the
 * same bytes (only comparisons change; H100 2026-11-26 11:50 UTC, bench_bc6h --gpu-size 4096: UF16 edcb1298385ffbb3, SF16
 * fab77cab94836203 as OPT 7), kernel A at 16 lanes 90 instead of 106 registers, kernel min 24.12 vs 25.11 ms (one run each) */
/* the OPT bits that act only in phases 1-4 (kernel A of the split): 0 rank loops, 5 LEAN3, 6 LINE, 7 PAIR3, 8 RANKV, 9 PAIR1,
 * 12 MERGE3; kernel B is compiled without them (the same code: one pipeline for every kernel A variant; helper bc6hk) */
#define BC6H_HL_OPT_A_ONLY (1u | 32u | 64u | 128u | 256u | 512u | 4096u | 8192u | 16384u | 32768u)
/* kernel B's default OPT (two kernels; KILN_BC6H_HIGH_OPT_B overrides it, and KILN_BC6H_HIGH_OPT sets both when OPT_B is
 * unset): BC6H_HL_OPT + bit 10 (NE2: the refinement's normal equations summed after the palette search) since helper bc6hk,
 * H100 2026-11-26 (bench_bc6h --gpu-size 4096 --sf, one process per row): the same bytes (SF16 fab77cab94836203), kernel B
 * 158 -> 114 registers, 24.48 ms (the fastest SF16 row of that run; the default's own SF16 row ran at a dropped clock).
 * Bit 11 (AROLL) alone gives other SF16 bytes there (95718d8ae035e7d3), bit 3 (REFSH) the same bytes but 24.81 ms */
#define BC6H_HL_OPT_B (BC6H_HL_OPT | 1024u)
/* kernel A's default OPT in two kernels (KILN_BC6H_HIGH_OPT overrides it; the one kernel and the device-resident mip path keep
 * BC6H_HL_OPT): + bits 13 (BAL4), 14 (U4), 15 (U4B) since helper bc6hk, H100 2026-11-26 ~19:2x UTC (bench_bc6h --gpu-size 4096,
 * one process per row): the same bytes; with the lean shaders (BC6H_HL_LEANSH) UF16 24.15-24.20 -> 18.32 / 18.35 ms, SF16
 * 24.65 / 24.67 -> 19.39 / 19.41 (measured with kernel B's EXITB, since removed: alone +0.1 ms); alone (non-lean) BAL4
 * 24.18 -> 23.19 ms, U4 23.75, U4B 23.77. Bit 14 (U4) dropped again 2026-11-27 (lead; H100, bench_bc6h --gpu-size 4096
 * --reps 5, one process per row, 04:05 UTC, same bytes): with the lean shaders and BAL4 it costs time: OPT 61447 -> 45063
 * UF16 18.17 -> 17.79 ms, SF16 19.22 -> 18.69 (U4B off as well, 12295: 18.01 / 18.95; U4B alone off, 28679: 18.43 / 19.88) */
/* + bits 11 (AROLL: kernel A's exact index choice in a rolled texel loop; kernel B keeps BC6H_HL_OPT_B), 5 (LEAN3) and 14 (U4)
 * again since helper bc6hm, H100 2026-11-27 05:08-05:31 UTC (bench_bc6h --gpu-size 4096 --reps 5, one process per row): the
 * same bytes UF16 and SF16. With the blocks per workgroup below (BC6H_HL_BPW_A, _B): UF16 17.79 -> 16.46 ms, SF16 18.66-18.70 ->
 * 16.73 (kernel A 104 / 103 registers); without U4 (47143, 82 / 80 registers) 16.67 / 16.88; AROLL alone (4-block
 * workgroups) UF16 17.82 -> 17.48 */
#define BC6H_HL_OPT_A (BC6H_HL_OPT | 32u | 2048u | 8192u | 16384u | 32768u)
/* the two kernels' blocks per workgroup when KILN_BC6H_HIGH_BPW / _BPW_B are unset, at the default 8 lanes (kernel A at 16
 * lanes, AWIDE=1): kernel A 8 blocks (128 invocations; was 4), kernel B 4 blocks (32 invocations; was 8), since helper bc6hm
 * (H100 2026-11-27, same command, kernel A OPT 45063: kernel B at 4 alone UF16 17.82 -> 17.51 ms, kernel A at 8 alone
 * 17.12-17.15, both 16.82; the same bytes). The former setting: KILN_BC6H_HIGH_BPW=8 (kernel A 4, kernel B 8) */
#define BC6H_HL_BPW_A 8u
#define BC6H_HL_BPW_B 4u
/* the two kernels' lean shaders (enc_bc6h_hawl / enc_bc6h_hbl, KILN_BC6H_HIGH_LEANSH: less shared memory per workgroup, the
 * same bytes) by default since helper bc6hk (same run: kernel A 11744 -> 8160 bytes, kernel B 20672 -> 15680; UF16 24.18 ->
 * 18.89 ms alone, kernel A lean only 20.99, kernel B lean only 22.07): 3 = both where they apply (kernel A: AWIDE), falling
 * back to the plain shaders where an OPT bit needs their arrays (LINE in kernel A, REFSH / RECOMP in kernel B) */
#define BC6H_HL_LEANSH 3
#define BC6H_HL_SPAN 2u  /* its mode filter's precision span (PREC_SPAN) */
/* GPU high in two kernels (KILN_BC6H_HIGH_SPLIT; helper bc6hsplit, 2026-11-26): kernel A (enc_bc6h_ha.comp: phases
 * 0-4, the choice of the jobs to refine) hands BC6H_HO_WORDS words per refined job and block (enc_bc6h_hl.glsl's
 * HO_REC) to kernel B (enc_bc6h_hb.comp: phases 5-6); the same bytes. 1 here makes it the default of the host path
 * (the device-resident mip path, gpu_mip_encode_bc6h.inc, keeps the one-kernel encoder: the same bytes). Default
 * since the H200 run of 2026-11-26 05:10 UTC (bench_bc6h --gpu-size 4096 --qualities high, one process per row,
 * UF16 kernel min: one kernel 30.43 / 30.50 ms, two kernels 28.86 / 28.74 (OPT 1031), same bytes) */
#define BC6H_HL_SPLIT 1
#define BC6H_HO_WORDS 16u
/* kernel variants of the two kernels (helper bc6hfast, 2026-11-26; each the same bytes, see run_high): the default of
 * KILN_BC6H_HIGH_AWIDE (kernel A enc_bc6h_haw at 16 lanes; used only at 8 lanes and R = 2). (KILN_BC6H_HIGH_TRIM,
 * enc_bc6h_hat / _hbt, and KILN_BC6H_HIGH_AUNROLL, enc_bc6h_hau, lost on the H100 and were removed by helper bc6hk,
 * 2026-11-27; the lean shaders, KILN_BC6H_HIGH_LEANSH, trim more) */
/* 16 (2: 32) lanes per block in kernel A by default since the H100 run of 2026-11-26 08:05 UTC (bench_bc6h --gpu-size 4096
 * --qualities high, one process per row, kernel min: UF16 28.83 / 28.82 -> 25.10 ms, SF16 28.66 -> 25.63 ms, the same
 * bytes); KILN_BC6H_HIGH_AWIDE=0: the 8-lane kernel A */
#define BC6H_HL_AWIDE 1
/* enc_bc6h_hl.comp's default specialisation constants (run_high without knobs; the device-resident path
 * gpu_mip_encode_bc6h.inc uses the same) */
static void bc6h_hl_default_spec(uint32_t sf, uint32_t spec[BC6H_HL_NSPEC])
{
    spec[0] = BC6H_HL_LANES;
    spec[1] = bc6h_hl_cfg[3];
    spec[2] = sf;
    spec[3] = BC6H_HL_SUM2;
    spec[4] = BC6H_HL_BPW(BC6H_HL_LANES);
    spec[5] = 0;
    spec[6] = BC6H_HL_SPAN;
    spec[7] = BC6H_HL_OPT;
}
/* enc_bc6h_hl.comp's shared memory per block for the OPT bits 3, 4 and 6 (s_qf, s_nix, s_fe, s_lmm; always declared) */
static size_t bc6h_hl_shared_extra(uint32_t lanes, uint32_t rg)
{
    return rg * 12u * 4u + lanes * 8u + (BC6H_HL_MAXK + 1u) * 4u + lanes * 8u; /* declared whatever the bits */
}
/* enc_bc6h_hl.comp or, with OPT bit 2, enc_bc6h_hr.comp (the same code with its texel loops rolled) */
static const char *bc6h_hl_shader(uint32_t opt) { return (opt & 4u) ? "enc_bc6h_hr" : "enc_bc6h_hl"; }
#define BC6H_HIGH4_PARTS 4u
#define BC6H_HIGH4_KEEP 4u
#define BC6H_HIGH4_LS 3u

/* enc_bc6h_q.comp's table (binding 2; the offsets are its T_* constants) */
#define BC6H_T_W 31744u
#define BC6H_T_MODE 63488u
#define BC6H_T_SPAN (BC6H_T_MODE + 14u * 8u)
#define BC6H_T_CONST (BC6H_T_SPAN + 14u * 28u)
#define BC6H_T_POS (BC6H_T_CONST + 5u) /* enc_bc6h_hl.comp: each span's first bit in the block (~0: none) */
#define BC6H_T_WORDS (BC6H_T_POS + 14u * 28u)

/* the CPU encoder's tables (src/codec/bc6h_enc.c) */
void kiln__bc6h_enc_tables(float *slog_mag, float *w_mag, float consts[5]);

/* quality -> partitions, kept candidates, least-squares passes, local search radius: the CPU's qcfgs */
static const uint32_t bc6h_qcfg[4][4] = {{0, 1, 1, 0}, {4, 2, 2, 1}, {12, 4, 3, 1}, {32, 12, 4, 2}};

static void fill_table(uint32_t *t)
{
    float *f = (float *)t;
    kiln__bc6h_enc_tables(f, f + BC6H_T_W, f + BC6H_T_CONST);
    for (uint32_t mi = 0; mi < 14; mi++) {
        const bc6h_mode *m = &kiln__bc6h_modes[mi];
        uint32_t *d = t + BC6H_T_MODE + mi * 8u;
        d[0] = m->value;
        d[1] = m->transformed;
        d[2] = m->pb ? 2u : 1u;
        d[3] = m->epb;
        d[4] = m->delta[0];
        d[5] = m->delta[1];
        d[6] = m->delta[2];
        d[7] = 0;
        uint32_t pos = 0;
        for (uint32_t k = 0; k < 28; k++) {
            const span *sp = &m->spans[k];
            t[BC6H_T_SPAN + mi * 28u + k] = (uint32_t)sp->field | (uint32_t)sp->a << 8 | (uint32_t)sp->b << 16;
            if (sp->field == END) pos = UINT32_MAX; /* the end of the list and what follows */
            t[BC6H_T_POS + mi * 28u + k] = pos;
            if (pos != UINT32_MAX) pos += (uint32_t)(sp->a >= sp->b ? sp->a - sp->b + 1 : sp->b - sp->a + 1);
        }
    }
}

static kiln_status run_shader(kiln_context *ctx, const kiln_image *img, const char *shader, const char *shader_b, uint32_t spec,
                              uint32_t lanes, const uint32_t *qcfg, const uint32_t *hl_spec, int split, uint32_t lanes_a,
                              uint32_t subgroup_size, uint8_t *dst)
{
    /* qcfg != NULL: enc_bc6h_q.comp (push: the four words below + sf, partitions, keep, ls, radius,
     * 0, lanes; binding 2: the table); hl_spec != NULL: enc_bc6h_hl.comp's specialisation constants
     * (lanes per block, refined jobs, sf, two-step sums, blocks per workgroup, stop after phase, span, opt; with split
     * a ninth entry: kernel B's opt); split > 0 (with hl_spec): GPU high in two kernels, enc_bc6h_ha.comp then enc_bc6h_hb.comp (split blocks per workgroup) in one
     * command buffer with a barrier between them, the hand-off (BC6H_HO_WORDS per refined job and block) in a
     * device-local buffer */
    kiln_gpu *gpu;
    KILN_TRY(kiln__gpu_get(ctx, &gpu));
    if (!hl_spec) split = 0;
    /* profiling aid KILN_BC6H_HIGH_PROF=SEQ (two kernels only; helper bc6hfast, 2026-11-26): the kernels dispatched
     * in this order between the timestamps, SEQ 1-4 letters a (kernel A) and b (kernel B), a barrier between them;
     * both kernels are idempotent (A reads the texels, writes the hand-off; B reads both, writes the blocks), so "aab"
     * and "abb" give the default's bytes and their kernel time minus the default's is one more kernel A / B; "a"
     * writes no blocks (the output is whatever the buffer held) */
    const char *prof = "ab";
    const char *penv = getenv("KILN_BC6H_HIGH_PROF");
    if (split && penv && *penv) {
        size_t n = strlen(penv);
        if (n > 4 || strspn(penv, "ab") != n || penv[0] != 'a')
            return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "KILN_BC6H_HIGH_PROF=%s: 1-4 letters a / b, the first an a", penv);
        prof = penv;
    }
    const kiln_vk_pipeline *pipe, *pipe_b = NULL;
    /* split with lanes_a (KILN_BC6H_HIGH_AWIDE): kernel A at lanes_a lanes per block, the same workgroup size */
    uint32_t spec_a[BC6H_HL_NSPEC];
    if (!split || !lanes_a) lanes_a = lanes;
    if (hl_spec) {
        memcpy(spec_a, hl_spec, sizeof spec_a);
        if (lanes_a != lanes) {
            spec_a[0] = lanes_a;
            spec_a[4] = hl_spec[4] * lanes / lanes_a >= 2u ? hl_spec[4] * lanes / lanes_a : 2u;
        }
    }
    kiln_vk_pipeline_desc desc = {
        .shader = shader, /* split: kernel A's shader (enc_bc6h_ha; enc_bc6h_haw / _hawl: KILN_BC6H_HIGH_AWIDE / _LEANSH) */
        .local_size = hl_spec ? spec_a[0] * spec_a[4] : BC6H_LOCAL_SIZE,
        .spec = hl_spec ? spec_a : &spec,
        .nspec = hl_spec ? BC6H_HL_NSPEC : qcfg ? 0 : 1,
        .nbindings = split ? 4 : qcfg ? 3 : 2,
        .push_size = qcfg ? 44 : 16,
        .subgroup_size = subgroup_size,
    };
    KILN_TRY(kiln_vk_pipeline_get(ctx, gpu, &desc, &pipe));
    if (split) {
        uint32_t spec_b[BC6H_HL_NSPEC];
        memcpy(spec_b, hl_spec, sizeof spec_b);
        spec_b[4] = (uint32_t)split;
        /* kernel B's OPT (KILN_BC6H_HIGH_OPT_B; a split caller's ninth entry) without the bits that act only in kernel A's
         * phases 1-4: the same code, so one pipeline for every kernel A variant (fewer compiles; helper bc6hk) */
        spec_b[7] = hl_spec[BC6H_HL_NSPEC] & ~BC6H_HL_OPT_A_ONLY;
        desc.shader = shader_b ? shader_b : "enc_bc6h_hb";
        desc.spec = spec_b;
        desc.local_size = hl_spec[0] * spec_b[4];
        KILN_TRY(kiln_vk_pipeline_get(ctx, gpu, &desc, &pipe_b));
    }

    const uint32_t w = img->width, h = img->height, bx = (w + 3) / 4, by = (h + 3) / 4;
    const size_t in_row = (size_t)w * 4 * 16; /* four texel rows of RGBA float */
    const size_t out_row = (size_t)bx * 16;
    /* the hand-off of a block row (split): BC6H_HO_WORDS words per refined job (hl_spec[1]) and block */
    const size_t ho_row = split ? (size_t)bx * hl_spec[1] * BC6H_HO_WORDS * 4u : 0;
    size_t limit = gpu->props.limits.maxStorageBufferRange;
    if (limit > BC6H_BATCH_MAX) limit = BC6H_BATCH_MAX;
    const char *dbg = getenv("KILN_GPU_BATCH_BYTES"); /* testing aid: force small batches */
    if (dbg && strtoull(dbg, NULL, 10) > 0 && strtoull(dbg, NULL, 10) < limit) limit = (size_t)strtoull(dbg, NULL, 10);
    size_t rows = limit / in_row;
    if (rows == 0)
        return kiln__fail(ctx, KILN_ERR_TOO_LARGE, "BC6H GPU encode: a block row of %u texels (%zu bytes) exceeds the device's buffer range (%zu)",
                          w, in_row, limit);
    if (split && limit / ho_row < rows) rows = limit / ho_row;
    if (rows == 0)
        return kiln__fail(ctx, KILN_ERR_TOO_LARGE, "BC6H GPU encode: the hand-off of a block row of %u texels (%zu bytes) exceeds the device's buffer range (%zu)",
                          w, ho_row, limit);
    if (rows > by) rows = by;
    kiln_vk_io in, out, tab;
    kiln_vk_buffer hand;
    memset(&in, 0, sizeof in);
    memset(&out, 0, sizeof out);
    memset(&tab, 0, sizeof tab);
    memset(&hand, 0, sizeof hand);
    const size_t tab_bytes = (size_t)BC6H_T_WORDS * 4;
    /* diagnostic aid KILN_BC6H_TRACE=1: one stderr line per batch (the buffers' memory properties, the host's
     * allocation and submission times, the kernel time): tells a slower kernel from slower host work between runs */
    const char *trace_env = getenv("KILN_BC6H_TRACE");
    const int trace = trace_env && *trace_env && strcmp(trace_env, "0") != 0;
    const double t_alloc = trace ? bc6h_wall_ms() : 0.0;
    kiln_status st = kiln_vk_io_create(ctx, gpu, rows * in_row, 0, &in);
    if (st == KILN_OK && split) st = kiln_vk_buffer_create(ctx, gpu, rows * ho_row, KILN_VK_MEM_DEVICE, &hand);
    if (st == KILN_OK) st = kiln_vk_io_create(ctx, gpu, rows * out_row, 1, &out);
    if (st == KILN_OK && qcfg) {
        st = kiln_vk_io_create(ctx, gpu, tab_bytes, 0, &tab);
        if (st == KILN_OK) {
            fill_table((uint32_t *)kiln_vk_io_map(&tab));
            st = kiln_vk_buffer_flush(ctx, gpu, tab.direct ? &tab.dev : &tab.staging);
        }
    }
    double total_ms = 0.0;
    for (uint32_t r0 = 0; st == KILN_OK && r0 < by; r0 += (uint32_t)rows) {
        uint32_t nrows = by - r0 < rows ? by - r0 : (uint32_t)rows;
        uint32_t texel_rows = h - r0 * 4 < nrows * 4 ? h - r0 * 4 : nrows * 4;
        size_t in_bytes = (size_t)texel_rows * w * 16, out_bytes = nrows * out_row;
        /* F32 images are RGBA floats already: the rows go up as they are */
        memcpy(kiln_vk_io_map(&in), (const uint8_t *)img->pixels + (size_t)r0 * 4 * w * 16, in_bytes);
        st = kiln_vk_buffer_flush(ctx, gpu, in.direct ? &in.dev : &in.staging);
        if (st != KILN_OK) break;
        kiln_vk_cmd cmd;
        st = kiln_vk_cmd_begin(ctx, gpu, split ? (uint32_t)strlen(prof) : 1u, &cmd);
        if (st != KILN_OK) break;
        kiln_vk_cmd_upload(&cmd, &in, in_bytes);
        if (qcfg) kiln_vk_cmd_upload(&cmd, &tab, tab_bytes);
        kiln_vk_cmd_timestamp(&cmd, 0);
        /* [9]: the shader's runtime zero; [10]: its lanes per block */
        uint32_t push[11] = {bx, nrows, w, texel_rows, spec, 0, 0, 0, 0, 0, lanes};
        if (qcfg) memcpy(push + 5, qcfg, 4 * sizeof *qcfg);
        kiln_vk_binding b[4] = {{.buffer = in.dev.buffer, .range = in_bytes},
                                {.buffer = out.dev.buffer, .range = out_bytes},
                                {.buffer = tab.dev.buffer, .range = tab_bytes},
                                {.buffer = hand.buffer, .range = nrows * ho_row}};
        if (split && !strchr(prof, 'b')) { /* profiling aid without kernel B: nothing writes the blocks, so zeros, not a
                                               * previous call's blocks, come back */
            vkCmdFillBuffer(cmd.cb, out.dev.buffer, 0, VK_WHOLE_SIZE, 0);
            kiln_vk_cmd_transfer_to_compute(cmd.cb);
        }
        if (!split)
            st = kiln_vk_cmd_dispatch_linear(ctx, &cmd, pipe, b, push, (uint64_t)bx * nrows * lanes);
        /* split: kernel A then (after a barrier) kernel B, which reads kernel A's hand-off; KILN_BC6H_HIGH_PROF: the
         * sequence of kernels instead (profiling aid) */
        for (const char *k = split ? prof : ""; st == KILN_OK && *k; k++) {
            if (k != prof) kiln_vk_cmd_barrier(&cmd);
            st = kiln_vk_cmd_dispatch_linear(ctx, &cmd, *k == 'a' ? pipe : pipe_b, b, push,
                                             (uint64_t)bx * nrows * (*k == 'a' ? lanes_a : lanes));
        }
        kiln_vk_cmd_timestamp(&cmd, 1);
        kiln_vk_cmd_download(&cmd, &out, out_bytes);
        double ms = 0.0;
        const double t_sub = trace ? bc6h_wall_ms() : 0.0;
        if (st == KILN_OK) st = kiln_vk_cmd_submit(ctx, &cmd, &ms);
        kiln_vk_cmd_free(&cmd);
        if (trace)
            fprintf(stderr,
                    "# bc6h trace: %s%s rows %u-%u: in %s flags 0x%x, out %s flags 0x%x, hand-off flags 0x%x; buffers created %.1f ms "
                    "before the submission; submit + wait %.2f ms wall, kernel %.3f ms\n",
                    desc.shader, split ? " (two kernels)" : "", r0, r0 + nrows, in.direct ? "direct" : "staged",
                    (unsigned)in.dev.flags, out.direct ? "direct" : "staged", (unsigned)out.dev.flags, (unsigned)hand.flags,
                    t_sub - t_alloc, bc6h_wall_ms() - t_sub, ms);
        total_ms += ms;
        if (st == KILN_OK) st = kiln_vk_buffer_invalidate(ctx, gpu, out.direct ? &out.dev : &out.staging);
        if (st == KILN_OK) memcpy(dst + (size_t)r0 * out_row, kiln_vk_io_map(&out), out_bytes);
        if (st == KILN_OK) st = kiln__progress(ctx, (float)(r0 + nrows) / (float)by);
    }
    kiln_vk_io_destroy(gpu, &in);
    kiln_vk_io_destroy(gpu, &out);
    kiln_vk_io_destroy(gpu, &tab);
    kiln_vk_buffer_destroy(gpu, &hand);
    if (st == KILN_OK) ctx->last_gpu_ms = total_ms;
    return st;
}

/* quality high, GPU-native. KILN_BC6H_HIGH_DESIGN selects the shader:
 *   "1" or "1lane": shaders/enc_bc6h_h.comp, one invocation per block;
 *   "lanes" (the default, BC6H_HIGH_DEFAULT_LANES): shaders/enc_bc6h_hl.comp, the same search spread
 *            over KILN_BC6H_HIGH_LANES = 4, 8 or 16 invocations per block (default BC6H_HL_LANES),
 *            its defaults bc6h_hl_cfg; KILN_BC6H_HIGH_SUM2=1: the refinement's sums in two steps (the
 *            same bytes);
 *   "4": the first design, shaders/enc_bc6h_h4.comp (4 invocations per block; kept to compare).
 * "lanes" also reads KILN_BC6H_HIGH_BPW (blocks per workgroup), KILN_BC6H_HIGH_SPAN (the mode filter's
 * precision span), KILN_BC6H_HIGH_OPT (code variants, the same bytes; bit 2: enc_bc6h_hr.comp, the texel
 * loops rolled) and the profiling aid KILN_BC6H_HIGH_STOP (stop after a phase; wrong output).
 * Tuning aid: KILN_BC6H_HIGH_CFG="P,K,L[,R]" (P <= 8 partitions (4 for "lanes"), 1 <= K <= 8 kept
 * (4 for the first design and for "lanes"), L <= 8 passes, 1 <= R <= 4 of the kept given them (1, 2
 * or 4 and <= the lanes for "lanes"); no R for the first design). */
/* a 0..max switch from the environment: unset or empty keeps *v; anything but one digit 0..max is refused */
static kiln_status env_switch(kiln_context *ctx, const char *name, int max, const char *use, int *v)
{
    const char *e = getenv(name);
    if (!e || !*e) return KILN_OK;
    if (e[0] < '0' || e[0] > '0' + max || e[1]) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "%s=%s: use %s", name, e, use);
    *v = e[0] - '0';
    return KILN_OK;
}

static kiln_status run_high(kiln_context *ctx, const kiln_image *img, uint32_t sf, uint32_t subgroup_size, uint8_t *dst)
{
    const char *design = getenv("KILN_BC6H_HIGH_DESIGN");
    int first = 0, multi = BC6H_HIGH_DEFAULT_LANES;
    if (design && *design) {
        multi = 0;
        if (strcmp(design, "4") == 0) first = 1;
        else if (strcmp(design, "lanes") == 0) multi = 1;
        else if (strcmp(design, "1") != 0 && strcmp(design, "1lane") != 0)
            return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT,
                              "KILN_BC6H_HIGH_DESIGN=%s: use lanes (several invocations per block, the default), 1 or "
                              "1lane (one invocation per block) or 4 (the first design)",
                              design);
    }
    uint32_t lanes = BC6H_HL_LANES, sum2 = BC6H_HL_SUM2;
    const char *senv = getenv("KILN_BC6H_HIGH_SUM2");
    if (multi && senv && *senv) {
        if (strcmp(senv, "0") != 0 && strcmp(senv, "1") != 0)
            return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "KILN_BC6H_HIGH_SUM2=%s: use 0 or 1", senv);
        sum2 = senv[0] == '1';
    }
    const char *lenv = getenv("KILN_BC6H_HIGH_LANES");
    if (multi && lenv && *lenv) {
        if (strcmp(lenv, "4") != 0 && strcmp(lenv, "8") != 0 && strcmp(lenv, "16") != 0)
            return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "KILN_BC6H_HIGH_LANES=%s: use 4, 8 or 16", lenv);
        lanes = (uint32_t)strtoul(lenv, NULL, 10);
    }
    const uint32_t maxk = first ? BC6H_HIGH4_LANES : multi ? BC6H_HL_MAXK : BC6H_HIGH_MAXK;
    uint32_t cfg[4] = {BC6H_HIGH_PARTS, BC6H_HIGH_KEEP, BC6H_HIGH_LS, BC6H_HIGH_REFINE};
    if (multi) memcpy(cfg, bc6h_hl_cfg, sizeof cfg);
    if (first) { /* the first design's own defaults (as measured on the H100, 2026-11-25) */
        cfg[0] = BC6H_HIGH4_PARTS;
        cfg[1] = BC6H_HIGH4_KEEP;
        cfg[2] = BC6H_HIGH4_LS;
        cfg[3] = 0;
    }
    const char *env = getenv("KILN_BC6H_HIGH_CFG");
    if (env && *env) {
        unsigned p, k, l, r = cfg[3];
        int n = sscanf(env, "%u,%u,%u,%u", &p, &k, &l, &r);
        const unsigned maxp = multi ? BC6H_HL_MAXP : 8u;
        if ((n != 3 && !(n == 4 && !first)) || p > maxp || k < 1 || k > maxk || l > 8 ||
            (n == 4 && (r < 1 || r > BC6H_HIGH_MAXR)) || (multi && (r == 3 || r > lanes)))
            return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT,
                              "KILN_BC6H_HIGH_CFG=%s: use P,K,L%s with P <= %u, 1 <= K <= %u, L <= 8%s", env,
                              first ? "" : "[,R]", maxp, maxk, first ? "" : multi ? ", R = 1, 2 or 4 (<= the lanes)" : ", 1 <= R <= 4");
        cfg[0] = p;
        cfg[1] = k;
        cfg[2] = l;
        cfg[3] = r;
    }
    if (first) return run_shader(ctx, img, "enc_bc6h_h4", NULL, sf, BC6H_HIGH4_LANES, cfg, NULL, 0, 0, subgroup_size, dst);
    if (multi) {
        /* KILN_BC6H_HIGH_BPW: blocks per workgroup (2..32, a power of two; 32 <= BPW x lanes <= 512; its
         * shared memory within the device's limit); KILN_BC6H_HIGH_STOP=N (1..5): profiling aid, the
         * encoder stops after phase N (wrong output; enc_bc6h_hl.comp) */
        uint32_t bpw = BC6H_HL_BPW(lanes), stop = 0;
        const char *benv = getenv("KILN_BC6H_HIGH_BPW");
        if (benv && *benv) {
            unsigned long v = strtoul(benv, NULL, 10);
            if (v < 2 || v > 32 || (v & (v - 1)) || v * lanes < 32 || v * lanes > 512)
                return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT,
                                  "KILN_BC6H_HIGH_BPW=%s: use a power of two 2..32 with 32 <= it x the lanes (%u) <= 512", benv, lanes);
            bpw = (uint32_t)v;
        }
        const char *tenv = getenv("KILN_BC6H_HIGH_STOP");
        if (tenv && *tenv) {
            if (tenv[0] < '0' || tenv[0] > '5' || tenv[1])
                return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "KILN_BC6H_HIGH_STOP=%s: use 0..5", tenv);
            stop = (uint32_t)(tenv[0] - '0');
        }
        /* KILN_BC6H_HIGH_SPAN=0..4: the mode filter's precision span (transformed modes scored when at most
         * that many endpoint bits below the most precise one that fits) */
        uint32_t span = BC6H_HL_SPAN;
        const char *penv = getenv("KILN_BC6H_HIGH_SPAN");
        if (penv && *penv) {
            if (penv[0] < '0' || penv[0] > '4' || penv[1])
                return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "KILN_BC6H_HIGH_SPAN=%s: use 0..4", penv);
            span = (uint32_t)(penv[0] - '0');
        }
        /* KILN_BC6H_HIGH_OPT=mask: enc_bc6h_hl.comp's code variants (OPT; the same bytes): bit 0 the rank
         * counts unrolled, bit 1 the refinement's per-component sums, bit 2 enc_bc6h_hr.comp (texel loops
         * rolled); with bit 1: bit 3 the refinement's best state in shared memory (REFSH), bit 4 its sums
         * recomputed per component from the texels and indices (RECOMP; 111 instead of 160 registers on the
         * NVIDIA H200, but other bytes there for SF16); bit 5 the cheap scores' lean lists
         * (LEAN3); bit 6 the line's fit from phase 1's moments, its projections over the lanes (LINE); bit 7
         * two cheap scores per pass over the texels (PAIR3); bit 8 rank counts reading each entry once (RANKV);
         * bit 9 two partitions' moments per pass over the texels (PAIR1); bit 10 the exact index choice's normal
         * equations summed in a second loop over the texels (NE2: fewer live values in the refinement); bit 11 the exact
         * index choice's texel loop (and the refinement's first normal equations) rolled (AROLL; helper bc6hfast); bit 12 phase
         * 3's block ranking by merging the lanes' sorted lists (MERGE3; helper bc6hhigh); bit 13 phase 4's last round of one job
         * spread over all lane groups (BAL4; helper bc6hk); bit 14 the cheap scores' texel loop in unrolled steps of 4 (U4; helper bc6hk), bit 15 the same for phases 1 and 2's
         * texel loops (U4B) (bits 16 / 17, the same in steps of 8, lost on the H100: removed, helper bc6hk 2026-11-27) */
        uint32_t opt = BC6H_HL_OPT;
        const char *oenv = getenv("KILN_BC6H_HIGH_OPT");
        if (oenv && *oenv) {
            char *end = NULL;
            unsigned long v = strtoul(oenv, &end, 0);
            if (!end || *end || v > 65535)
                return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "KILN_BC6H_HIGH_OPT=%s: use a bit mask 0..65535", oenv);
            opt = (uint32_t)v;
        }
        /* the shader's shared memory (enc_bc6h_hl.comp's declarations) */
        const uint32_t g = lanes / cfg[3], transpose = sum2 && g >= 4u;
        const size_t per_block = 3u * 16u * 16u + (BC6H_HL_MAXP + 1u) * 12u * 4u + (BC6H_HL_MAXP + 1u) * 4u + BC6H_HL_MAXP * 4u +
                                 lanes * 8u * 16u + (BC6H_HL_MAXK + 1u) * 4u + (BC6H_HL_MAXK + 1u) * 12u * 4u +
                                 (BC6H_HL_MAXK + 1u) * g * 8u + 16u + cfg[3] * 12u * 4u + 16u + (transpose ? cfg[3] * 8u * 16u : 16u) +
                                 bc6h_hl_shared_extra(lanes, cfg[3]);
        kiln_gpu *gpu;
        KILN_TRY(kiln__gpu_get(ctx, &gpu));
        if (256u + per_block * bpw > gpu->props.limits.maxComputeSharedMemorySize)
            return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT,
                              "BC6H high: %u blocks per workgroup at %u lanes need %zu bytes of shared memory, the device offers %u",
                              bpw, lanes, 256u + per_block * bpw, gpu->props.limits.maxComputeSharedMemorySize);
        /* KILN_BC6H_HIGH_OPT_B=mask (two kernels; helper bc6hhigh, 2026-11-26): kernel B's code variants (default: BC6H_HL_OPT_B,
         * or OPT when KILN_BC6H_HIGH_OPT is set),
         * e.g. its register-lean bits (3 REFSH, 10 NE2, 11 AROLL) without changing kernel A's code; meant to give the same
         * bytes, but 3087 (those three) gave other SF16 bytes on the NVIDIA H100 (2026-11-26; UF16 the same) */
        uint32_t opt_b = oenv && *oenv ? opt : BC6H_HL_OPT_B;
        const char *obenv = getenv("KILN_BC6H_HIGH_OPT_B");
        if (obenv && *obenv) {
            char *end = NULL;
            unsigned long v = strtoul(obenv, &end, 0);
            if (!end || *end || v > 65535)
                return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "KILN_BC6H_HIGH_OPT_B=%s: use a bit mask 0..65535", obenv);
            opt_b = (uint32_t)v;
        }
        /* the specialisation constants, + kernel B's OPT (run_shader reads it with the split) */
        uint32_t hl_spec[BC6H_HL_NSPEC + 1u] = {lanes, cfg[3], sf, sum2, bpw, stop, span, opt, opt_b};
        /* KILN_BC6H_HIGH_SPLIT=0/1: the one-kernel encoder or the two kernels (enc_bc6h_ha.comp + enc_bc6h_hb.comp,
         * always with the texel loops rolled, as OPT bit 2; the same bytes); default BC6H_HL_SPLIT */
        int split = BC6H_HL_SPLIT;
        KILN_TRY(env_switch(ctx, "KILN_BC6H_HIGH_SPLIT", 1, "0 (one kernel) or 1 (two kernels)", &split));
        /* (with KILN_BC6H_HIGH_PROF=a, kernel A alone, STOP 1..4 stops kernel A after that phase: its phase profile) */
        const char *penv_a = getenv("KILN_BC6H_HIGH_PROF");
        if (split && stop && !(stop <= 4u && penv_a && strcmp(penv_a, "a") == 0))
            return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT,
                              "KILN_BC6H_HIGH_STOP=%u: not with KILN_BC6H_HIGH_SPLIT=1 (but 1..4 with KILN_BC6H_HIGH_PROF=a)", stop);
        /* KILN_BC6H_HIGH_BPW_B: kernel B's blocks per workgroup (default: BC6H_HL_BPW_B at 8 lanes without KILN_BC6H_HIGH_BPW,
         * else BPW; the same bounds) */
        uint32_t bpw_b = lanes == 8u && !(benv && *benv) ? BC6H_HL_BPW_B : bpw;
        const char *bbenv = getenv("KILN_BC6H_HIGH_BPW_B");
        if (split && bbenv && *bbenv) {
            unsigned long v = strtoul(bbenv, NULL, 10);
            if (v < 2 || v > 32 || (v & (v - 1)) || v * lanes < 32 || v * lanes > 512 ||
                256u + per_block * v > gpu->props.limits.maxComputeSharedMemorySize)
                return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT,
                                  "KILN_BC6H_HIGH_BPW_B=%s: use a power of two 2..32 with 32 <= it x the lanes (%u) <= 512 and its "
                                  "shared memory (%zu bytes per block) within the device's %u", bbenv, lanes, per_block,
                                  gpu->props.limits.maxComputeSharedMemorySize);
            bpw_b = (uint32_t)v;
        }
        /* KILN_BC6H_HIGH_AWIDE=1 (the default, BC6H_HL_AWIDE; two kernels at 8 lanes and R = 2, the defaults; helper
         * bc6hfast): kernel A is enc_bc6h_haw.comp at 16 lanes per block (4 blocks per workgroup), its exact measure in
         * groups of 4 lanes as the 8-lane kernel's (the same partial sums; 4 jobs at once instead of 2); =2: at 32 lanes
         * (2 blocks per workgroup, all 5 jobs at once); =0: enc_bc6h_ha.comp at 8 lanes */
        int awide = split && lanes == 8u && cfg[3] == 2u ? BC6H_HL_AWIDE : 0; /* the default where it applies */
        KILN_TRY(env_switch(ctx, "KILN_BC6H_HIGH_AWIDE", 3, "0, 1 (16 lanes), 2 (32 lanes) or 3 (20 lanes)", &awide));
        if (awide && (!split || lanes != 8u || cfg[3] != 2u))
            return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "KILN_BC6H_HIGH_AWIDE=%d: only with two kernels, 8 lanes and R = 2", awide);
        /* =3 (helper bc6hhigh, 2026-11-26): kernel A at 20 lanes per block (3 blocks per workgroup of 60), so its exact
         * measure's 5 lane groups of 4 measure all K + 1 = 5 jobs at once; the bits that assume 32 / lanes partitions per
         * lane (RANKV, PAIR1) are refused there */
        if (awide == 3 && (opt & (256u | 512u)))
            return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT,
                              "KILN_BC6H_HIGH_AWIDE=3 (20 lanes): not with KILN_BC6H_HIGH_OPT bits 8 (RANKV) or 9 (PAIR1)");
        /* KILN_BC6H_HIGH_LEANSH=1 / 2 / 3 (two kernels; helper bc6hk, 2026-11-26): kernel A (1; with AWIDE only) / kernel B (2) /
         * both (3) with less shared memory per workgroup (enc_bc6h_hawl.comp / enc_bc6h_hbl.comp: s_red as uvec2 in kernel A,
         * the logs' x in s_W.w, no arrays for the OPT bits 3, 4, 6: refused there); the same arithmetic */
        /* kernel A's default OPT in two kernels: BC6H_HL_OPT_A (KILN_BC6H_HIGH_OPT unset) */
        if (split && !(oenv && *oenv)) {
            opt = BC6H_HL_OPT_A;
            hl_spec[7] = opt;
        }
        /* the default: BC6H_HL_LEANSH where it applies (two kernels; kernel A with AWIDE) and no OPT bit needs the plain
         * shaders' arrays */
        int leansh = split ? BC6H_HL_LEANSH & (awide ? 3 : 2) : 0;
        if ((opt & 64u) != 0u) leansh &= 2;
        if ((opt_b & 2u) && (opt_b & 24u)) leansh &= 1;
        KILN_TRY(env_switch(ctx, "KILN_BC6H_HIGH_LEANSH", 3, "0, 1 (kernel A), 2 (kernel B) or 3 (both)", &leansh));
        if (leansh && (!split || ((leansh & 1) && !awide)))
            return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT,
                              "KILN_BC6H_HIGH_LEANSH=%d: only with two kernels, kernel A (1, 3) with AWIDE", leansh);
        if (((leansh & 1) && (opt & 64u)) || ((leansh & 2) && (opt_b & 2u) && (opt_b & 24u)))
            return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT,
                              "KILN_BC6H_HIGH_LEANSH=%d: not with KILN_BC6H_HIGH_OPT bit 6 (LINE) in kernel A or bits 3, 4 (REFSH, RECOMP) in "
                              "kernel B", leansh);
        /* kernel A's blocks per workgroup at 16 lanes (AWIDE=1) without KILN_BC6H_HIGH_BPW: BC6H_HL_BPW_A (hl_spec[4] counts
         * 8-lane blocks: run_shader halves it for kernel A), where the device's shared memory holds them (16 lanes per block:
         * at most per_block + 512 bytes, the plain kernel A's 2936 included) */
        if (split && awide == 1 && !(benv && *benv) &&
            256u + (per_block + 512u) * BC6H_HL_BPW_A <= gpu->props.limits.maxComputeSharedMemorySize)
            hl_spec[4] = 2u * BC6H_HL_BPW_A;
        const char *shader = !split ? bc6h_hl_shader(opt)
                             : awide ? ((leansh & 1) ? "enc_bc6h_hawl" : "enc_bc6h_haw")
                                     : "enc_bc6h_ha";
        return run_shader(ctx, img, shader, (leansh & 2) ? "enc_bc6h_hbl" : "enc_bc6h_hb", sf, lanes, cfg, hl_spec,
                          split ? (int)bpw_b : 0,
                          awide == 3 ? 20u : awide ? 8u << awide : 0u, subgroup_size, dst);
    }
    return run_shader(ctx, img, "enc_bc6h_h", NULL, sf, 1u, cfg, NULL, 0, 0, subgroup_size, dst);
}

kiln_status kiln__gpu_encode_bc6h(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                                  uint32_t subgroup_size, uint8_t *dst, size_t dst_size)
{
    const kiln_format_info *fi = kiln_format_get_info(params->format);
    static const char *qn[4] = {"fast", "normal", "high", "max"};
    const char *q = (unsigned)params->quality < 4u ? qn[params->quality] : "?";
    const int kiln_design = params->gpu_strategy == 0;
    if ((params->gpu_strategy != 0 && params->gpu_strategy != 1) || (unsigned)params->quality > 3u)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s at quality %s, GPU strategy %d has no GPU encoder", fi->name, q,
                          (int)params->gpu_strategy);
    if (params->format != KILN_FORMAT_BC6H_UFLOAT && params->format != KILN_FORMAT_BC6H_SFLOAT)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "BC6H GPU encode: %s is not a BC6H format", fi->name);
    if (!kiln_design && params->format != KILN_FORMAT_BC6H_UFLOAT)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "the seed GPU design (GPURealTimeBC6H) encodes BC6H UF16 only, not %s",
                          fi->name);
    if (!img || !img->pixels || img->type != KILN_PIXEL_F32)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "BC6H GPU encode: needs a float (HDR) image; this one is %s",
                          img && img->type == KILN_PIXEL_U8 ? "8-bit" : "16-bit");
    size_t need = kiln_format_image_size(params->format, img->width, img->height);
    if (need == 0 || !dst || dst_size < need)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "BC6H GPU encode: %ux%u needs %zu bytes, the buffer holds %zu",
                          img->width, img->height, need, dst ? dst_size : (size_t)0);
    const uint32_t sf = params->format == KILN_FORMAT_BC6H_SFLOAT ? 1u : 0u;
    if (kiln_design && params->quality == KILN_QUALITY_FAST)
        return run_shader(ctx, img, "enc_bc6h", NULL, sf, BC6H_KILN_LANES, NULL, NULL, 0, 0, subgroup_size, dst);
    if (kiln_design && params->quality == KILN_QUALITY_HIGH) {
        /* GPU-native high unless KILN_BC6H_GPU_EXACT is set (not "0"): then the CPU-exact port */
        const char *ex = getenv("KILN_BC6H_GPU_EXACT");
        if (!ex || !*ex || strcmp(ex, "0") == 0) return run_high(ctx, img, sf, subgroup_size, dst);
    }
    if (kiln_design) {
        kiln_gpu *gpu;
        KILN_TRY(kiln__gpu_get(ctx, &gpu));
        VkPhysicalDeviceFeatures f;
        vkGetPhysicalDeviceFeatures(gpu->physical, &f);
        if (f.shaderFloat64 != VK_TRUE)
            return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s at quality %s: kiln's GPU encoder needs shaderFloat64, which this device lacks",
                              fi->name, q);
        uint32_t lanes = bc6h_q_lanes[params->quality];
        /* tuning aid: KILN_BC6H_GPU_LANES = 8, 16 or 32 invocations per block (the same bytes) */
        const char *env = getenv("KILN_BC6H_GPU_LANES");
        if (env && *env) {
            unsigned long v = strtoul(env, NULL, 10);
            const uint32_t ncand = 4u + bc6h_qcfg[params->quality][0] * 10u;
            if ((v != 8 && v != 16 && v != 32) || (64u / v) * ncand > 1296u || v < bc6h_qcfg[params->quality][1])
                return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT,
                                  "KILN_BC6H_GPU_LANES=%s: use 8, 16 or 32 (at least 16 at quality max)", env);
            lanes = (uint32_t)v;
        }
        return run_shader(ctx, img, "enc_bc6h_q", NULL, sf, lanes, bc6h_qcfg[params->quality], NULL, 0, 0, subgroup_size, dst);
    }
    return run_shader(ctx, img, "enc_bc6h_seed", NULL, params->quality == KILN_QUALITY_FAST ? 0u : 1u, 1u, NULL, NULL, 0, 0, subgroup_size, dst);
}

/* float texels already on the device: the mip chain + encode path (owner mipdev, src/gpu/gpu_mip_encode.c) */
#include "gpu/gpu_mip_encode_bc6h.inc"

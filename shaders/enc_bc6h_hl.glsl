// enc_bc6h_hl.glsl - the body of enc_bc6h_hl.comp (see there); included by enc_bc6h_hl.comp (texel loops
// unrolled) and enc_bc6h_hr.comp (HL_ROLLED: the 16-texel loops of the partition residuals, the fits and the
// cheap scores kept as loops: a smaller program; KILN_BC6H_HIGH_OPT bit 2). The same arithmetic either way.
// HL_SPLIT 1 / 2 (enc_bc6h_ha.comp / enc_bc6h_hb.comp, KILN_BC6H_HIGH_SPLIT=1): the same code cut in two kernels after
// phase 4's choice of the jobs to refine; their state goes through a device buffer (binding 3, HO_REC below).
#ifdef HL_ROLLED
// a bound the compiler cannot see (16 + the push constant zero, 0 at run time): the loops stay loops, so the
// driver's compiler cannot hoist all 16 texels' loads (the NVIDIA H100 allocated 192 registers to the unrolled
// program, 10 warps per SM; it ignores [[dont_unroll]] alone)
#define TEXEL_LOOP [[dont_unroll]]
#define TEXEL_N (16u + pc.zero)
#else
#define TEXEL_LOOP [[unroll]]
#define TEXEL_N 16u
#endif
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x_id = 0) in; // = BPW x LANES: BPW blocks per workgroup
layout(constant_id = 1) const uint LANES = 8u; // invocations per block: 4, 8 or 16 (kernel A enc_bc6h_haw: 16, 20 or 32)
layout(constant_id = 2) const uint RG = 2u;    // jobs given the least-squares passes (groups): 1, 2, 4; <= LANES
layout(constant_id = 3) const bool SF = false;  // BC6H SF16 (= the push constant sf)
layout(constant_id = 4) const bool SUM2 = false; // two-step sums in the refinement (TRANSPOSE below)
layout(constant_id = 5) const uint BPW = 8u;     // blocks per workgroup (local size = BPW x LANES)
// profiling aid (KILN_BC6H_HIGH_STOP=N, wrong output): 0 = the whole encoder; N = 1..5: stop after phase N
// (1: texels + partition ranking, 2: + fits and mode filter, 3: + cheap scores and their ranking, 4: + the
// exact measure, 5: + the least-squares passes), writing a value that depends on the phase's results
layout(constant_id = 6) const uint STOP = 0u;
// the mode filter: transformed modes more than PREC_SPAN endpoint bits less precise than the most precise
// one that fits are not scored (KILN_BC6H_HIGH_SPAN)
layout(constant_id = 7) const uint PREC_SPAN = 2u;
// code variants (KILN_BC6H_HIGH_OPT, a bit mask; the same bytes): bit 0: the rank-counting loops unrolled;
// bit 1: the refinement's per-component sums (LSC below)
layout(constant_id = 8) const uint OPT = 0u;

layout(push_constant) uniform Push {
    uint blocks_x;   // blocks per row
    uint block_rows; // block rows in this batch
    uint width;      // texels per row
    uint rows;       // texel rows in this batch's input
    uint sf;         // 1: BC6H SF16
    uint partitions; // partitions fitted and tried (by residual rank), <= MAXP
    uint keep;       // candidates measured exactly, <= MAXK
    uint ls_iters;   // least-squares passes of the best RG
    uint radius;     // = RG (checked by the host)
    uint zero;       // 0 (the runtime zero: enc_bc6h_hr.comp's loop bounds)
    uint lanes;      // = LANES
} pc;

layout(std430, binding = 0) readonly buffer Src { vec4 px[]; } src;
layout(std430, binding = 1) writeonly buffer Dst { uvec4 blk[]; } dst;
layout(std430, binding = 2) readonly buffer Tab { uint t[]; } tab;
// HL_SPLIT (enc_bc6h_ha.comp = 1, enc_bc6h_hb.comp = 2; 0: the one-kernel encoder): kernel A writes, kernel B
// reads the hand-off: per block RG records of HO_REC words (the jobs given the least-squares passes): word 0 the
// job's code (slot | mode << 4 | variant << 8) | partition << 12 | job << 20 | 1 << 23 when the job is only to be
// packed (no job was chosen: every measured error infinite; job 0 wins unrefined, as in the one-kernel encoder;
// record 0) (~0: no job), 1 its measured error, 2..13 its 12 quantized endpoints, 14..15 its 16 indices (texel t at
// bits 4 t of the 64)
#ifndef HL_SPLIT
#define HL_SPLIT 0
#endif
#ifndef HL_LEANSH
#define HL_LEANSH 0 // enc_bc6h_hawl.comp / enc_bc6h_hbl.comp: 1 (less shared memory; see the shared arrays)
#endif
#if HL_SPLIT == 1
layout(std430, binding = 3) writeonly buffer Hand { uint h[]; } ho;
#elif HL_SPLIT == 2
layout(std430, binding = 3) readonly buffer Hand { uint h[]; } ho;
#endif
const uint HO_REC = 16u;

#include "bptc_tables.glsl"

const uint T_SPAN = 63488u + 14u * 8u; // the bit spans in the table (as enc_bc6h_q.comp)
const uint T_POS = T_SPAN + 14u * 28u + 5u; // each span's first bit (gpu_encode_bc6h.c: BC6H_T_POS)
const uint MAXP = 4u, MAXK = 4u, MAXJ = MAXK + 1u; // P <= 4, K <= 4 (shared memory per block)
const float FIT_SLACK = 2.0;
const int NEXACT = 3;
const int FIT_POWER = 8;
#define BC6H_SF SF
#include "enc_bc6h_hcommon.glsl"

#ifdef HL_GFIX
// enc_bc6h_haw.comp (KILN_BC6H_HIGH_AWIDE=1; helper bc6hfast): kernel A at LANES = 16 with the lane groups of phase 4 at
// HL_GFIX lanes (kernel B's G at its 8 lanes), MG = LANES / G groups measuring jobs at once, so each job's partial errors
// and indices are those of the 8-lane kernel A (the same texels per lane, summed in the same order)
const uint NL = LANES, G = HL_GFIX, TPL = 16u / G;
#else
const uint NL = LANES, G = LANES / RG, TPL = 16u / G;
#endif
const uint MG = NL / G; // lane groups in phase 4's exact measure (= RG but with HL_GFIX)
const uint NRED = 8u; // vec4 per lane in a reduction: 30 least-squares sums + the error
// with SUM2, groups of 4 or more lanes sum a pass's partials in two steps (lane gl the items gl, gl + G, ...;
// then every lane reads the totals: 2 NRED + NRED / G reads instead of G x NRED; one barrier more);
// the same additions in the same order either way
// OPT bit 1 (LSC): in the refinement each lane sums only the error and the 5 sums of each of its components
// (the same additions in the same order; no 32-value totals per lane); SUM2 is then ignored
const bool LSC = (OPT & 2u) != 0u;
const bool TRANSPOSE = SUM2 && G >= 4u && !LSC;
// OPT bit 3 (REFSH, with LSC): the refinement keeps its best state in shared memory instead of registers (the
// best quantized endpoints in s_jq, this lane's best indices in s_jix, the last pass's in s_nix, the measured
// errors in s_fe): fewer live values across the exact index choice
#if HL_LEANSH
const bool REFSH = false; // (not with HL_LEANSH: refused by the host)
#else
const bool REFSH = (OPT & 10u) == 10u; // bits 1 and 3
#endif
// OPT bit 4 (RECOMP, with LSC): the refinement's lanes recompute the 5 sums of each of their components from the
// texels and the pass's indices (s_jix / s_nix) instead of every lane accumulating 30 normal-equation sums in the
// exact index choice; the same additions in the same order (partials per lane gl of the group, then summed in
// lane order): the same bytes on lavapipe, but NOT on the NVIDIA H200 for SF16 (2026-11-26; UF16 the same): the
// driver may contract the recomputed products differently, so it stays off by default
#if HL_LEANSH
const bool RECOMP = false; // (not with HL_LEANSH: refused by the host)
#else
const bool RECOMP = (OPT & 18u) == 18u; // bits 1 and 4
#endif
// OPT bit 5 (LEAN3): the cheap scores keep key and code of a listed candidate in one integer and re-read the
// fitted endpoints per variant (fewer live values in phase 3)
const bool LEAN3 = (OPT & 32u) != 0u;
// OPT bit 6 (LINE): the one-subset line's fit from phase 1's moments of the whole block (the same sums as
// fit_subset's first pass over all texels), its axis in every lane, its projections strided over the lanes and
// their min / max combined by lane 0 (exact): the 2P subset fits of phase 2 take one round at 8 lanes, not two
#if HL_LEANSH
const bool LINE = false; // (not with HL_LEANSH: refused by the host)
#else
const bool LINE = (OPT & 64u) != 0u;
#endif
// OPT bit 7 (PAIR3): the cheap scores of a lane's candidates n and n + NL in one pass over the texels (each
// texel's target and weights read once from shared memory for both; each error computed as approx_err does),
// listed in the same order
const bool PAIR3 = (OPT & 128u) != 0u;
// OPT bit 8 (RANKV): the rank counts of phases 1 and 3 read each compared entry once for all of the lane's
// entries (32 shared loads per lane instead of 32 per entry); the same comparisons
const bool RANKV = (OPT & 256u) != 0u;
// OPT bit 9 (PAIR1): the moments of partitions p and p + NL in one pass over the texels (each texel read once
// for both; the same arithmetic per partition)
const bool PAIR1 = (OPT & 512u) != 0u;
// OPT bit 10 (NE2; helper bc6hsplit): assign_part adds the normal equations of its texels after the exact index
// choice, in a second loop over the same texels (ne_add, the same order: the same sums), so that the 30 sums are
// not live during the palette search (the refinement's register peak). Kernel B's default since helper bc6hk (2026-11-26:
// the same bytes on the NVIDIA H100, UF16 and SF16; kernel B 158 -> 114 registers)
const bool NE2 = (OPT & 1024u) != 0u;
// OPT bit 11 (AROLL; helper bc6hfast, 2026-11-26): the texel loops of assign_part (the exact index choice: kernel A's
// measure, kernel B's passes) and of the refinement's first normal equations kept as loops (bound TPL + the runtime
// zero) instead of unrolled: the same arithmetic per texel in the same order, fewer live values. NOT the same bytes on the
// NVIDIA H100 for SF16 in kernel B (helper bc6hk, 2026-11-26: OPT_B 6151 alone gives 95718d8ae035e7d3 on the 4096^2 bench
// image, the same hash as 3087; NE2 and REFSH alone keep fab77cab94836203): the rolled loop compiles to other rounding
const bool AROLL = (OPT & 2048u) != 0u;
// OPT bit 12 (MERGE3; helper bc6hhigh, 2026-11-26): phase 3's block ranking by merging the lanes' lists instead of rank
// counting. Each lane's list is sorted by (error, key) (insertions are strict, keys increase in insertion order, keys are
// unique), so the block's best K are the first K of the merged lists: lanes ln < NL / 4 merge lists 4 ln .. 4 ln + 3 into
// their first MAXK entries, then lane 0 merges those (NL / 4 lists); the same total order as the rank counts, so the same
// jobs in the same order (the rank counts compare every entry with all NL x MAXK: 16 x the work at 16 lanes)
const bool MERGE3 = (OPT & 4096u) != 0u;
// OPT bit 13 (BAL3; helper bc6hk, 2026-11-26) was phase 3 in two passes (the recentred variants strided over all lanes):
// the same bytes, but 28.3 vs 24.0 ms (UF16 4096^2, H100): removed.
// OPT bit 13 is now BAL4 (helper bc6hk, 2026-11-26, second session): phase 4's last round when it has one job (K + 1 = 5
// jobs on MG = 4 groups: job 4 alone on group 0, the other groups idle) spread over all MG groups: lane (grp, gl) chooses
// the indices of texels gl + G i, i = grp, grp + MG, ... (the same per-texel code, ASSIGN_CORE), stashes each texel's
// error and index in shared memory, and group 0's lane gl sums its texels' errors in the order assign_part does
// (i = 0, 1, ...): the same partial errors and indices, one barrier more. Kernel A / the one kernel, phase 4 only
const bool BAL4 = (OPT & 8192u) != 0u;
// OPT bit 14 (U4; helper bc6hk, 2026-11-26): approx_err's texel loop (phase 3, the cheap scores) in rolled steps of 4 texels
// unrolled (the rolled loop waits for each texel's shared loads; the full unroll of kernel A cost registers): the same
// arithmetic per texel, summed in the same order. Kernel A / the one kernel, phase 3 only
const bool U4 = (OPT & 16384u) != 0u;
// OPT bit 15 (U4B; helper bc6hk): the same for phase 1's moment loops (the block's, each partition's) and fit_subset's two
// texel loops (phase 2). Kernel A / the one kernel
const bool U4B = (OPT & 32768u) != 0u;
// (OPT bit 16, EXITB: the refinement's pass loop ended when no group of the workgroup refined any more; the same bytes, but
// 24.27 vs 24.18 ms UF16, 24.77 vs 24.66 SF16 on the H100, 2026-11-26 19:2x: removed)
// (OPT bits 16 U8 / 17 U8B, helper bc6hk 2026-11-27: U4's / U4B's loops in rolled steps of 8 texels; same bytes, but on the
// H100 UF16 18.78 (U8) / 18.35 (U8B) vs 18.13 ms: removed)
// a texel loop in rolled steps of 4 unrolled texels (U4, U4B): TEXEL_LOOP4 { const uint t = ...; body }
#define TEXEL_LOOP4 [[dont_unroll]] for (uint t4 = 0u; t4 < TEXEL_N; t4 += 4u) [[unroll]] for (uint j4 = 0u; j4 < 4u; j4++)
// HL_LEANSH (enc_bc6h_hawl.comp / enc_bc6h_hbl.comp, KILN_BC6H_HIGH_LEANSH; helper bc6hk, 2026-11-26): less shared memory
// per workgroup, the same arithmetic. Both kernels: the arrays of the OPT bits 3, 4 and 6 (REFSH, RECOMP, LINE; refused by
// the host) one entry per block, a texel's log's x in s_W.w (s_W.w was unused) and its y, z in s_Lyz (vec2) instead of a
// vec4 s_L. Kernel A (at 16 or more lanes): s_red as uvec2 (float bits; a list entry's key << 9 | code in .y) instead of
// vec4: 8 instead of 16 bytes per entry

// HL_TRIM (enc_bc6h_haw.comp / enc_bc6h_hawl.comp; once also enc_bc6h_hat / _hbt, KILN_BC6H_HIGH_TRIM, removed; helper bc6hfast, 2026-11-26): each kernel of the
// split declares the arrays only the other kernel uses with one entry per block (kernel A: the refinement's s_qn, s_rerr,
// s_tot, s_qf, s_nix; kernel B: the search's s_ef, s_todo, s_fe, s_lmm): less shared memory per workgroup, the same code
#ifndef HL_TRIM
#define HL_TRIM 0
#endif
#if HL_TRIM && HL_SPLIT == 1
#define TRIM_A(n) 1u
#else
#define TRIM_A(n) (n)
#endif
#if HL_TRIM && HL_SPLIT == 2
#define TRIM_B(n) 1u
#else
#define TRIM_B(n) (n)
#endif
shared uint s_p2[32], s_a2[32];    // the two-subset partitions and their second anchors
// per block of the workgroup ([item][block]: the lanes of a warp that read the same item of
// different blocks hit different banks)
shared vec4 s_U[16][BPW];                 // targets minus texel 0's (xyz), mean fitting weight (w)
shared vec4 s_W[16][BPW];                 // per-channel fitting weights (HL_LEANSH: .w = the log's x)
#if HL_LEANSH && HL_SPLIT == 2
shared float s_Lz[16][BPW];               // lean kernel B: the log's z (its y in s_U.w: kernel B has no use for the weight)
#elif HL_LEANSH
shared vec2 s_Lyz[16][BPW];               // the log's y, z
#else
shared vec4 s_L[16][BPW];                 // sign(v) ln(1 + |v|) of the targets
#endif
shared float s_ef[TRIM_B((MAXP + 1u) * 12u)][BPW]; // fitted endpoints (absolute) per slot: [slot * 12 + e * 3 + c]
shared uint s_todo[TRIM_B(MAXP + 1u)][BPW];       // per slot: the modes to score (filter)
shared uint s_ord[MAXP][BPW];             // the ranked partitions
#if HL_SPLIT == 1 && HL_LEANSH
// lean kernel A: entry i .x a float's bits (phase 1: residual i; phase 3: list entry i's error; phase 4: endpoint value 2 i,
// .y 2 i + 1; the partial errors at 30 + job * G + gl; BAL4's stash at 30 + MAXJ * G + texel), .y a list entry's key << 9 | code
shared uvec2 s_red[LANES * 5u][BPW];
#elif HL_SPLIT == 1
// kernel A: only phases 1-4 (32 residuals, then 5 NL list entries, then <= 20 items): less shared memory
shared vec4 s_red[LANES > 8u ? LANES * 5u : 40u][BPW];
#else
shared vec4 s_red[LANES * NRED][BPW];     // reductions and lists (phase-dependent)
#endif
#if HL_LEANSH && HL_SPLIT == 2
// lean kernel B: the refined jobs' state by group (a job's storage index: the group that refines it; see sj, ws in main)
shared uint s_jc[RG][BPW];
shared int s_jq[RG * 12u][BPW];
shared uvec2 s_jix[RG * (LANES / RG)][BPW];
#else
shared uint s_jc[MAXJ][BPW];              // the jobs' codes (slot | mode << 4 | variant << 8)
shared int s_jq[MAXJ * 12u][BPW];         // the jobs' quantized endpoints [job * 12 + e * 3 + c]
#endif
#if HL_LEANSH && HL_SPLIT == 2
#elif defined(HL_GFIX)
shared uvec2 s_jix[MAXJ * G][BPW]; // the jobs' indices, per lane of a group
#else
shared uvec2 s_jix[MAXJ * (LANES / RG)][BPW]; // the jobs' indices, per lane of a group
#endif
shared float s_rerr[TRIM_A(4u)][BPW];              // the refined jobs' errors
shared int s_qn[TRIM_A(RG * 12u)][BPW];           // per group: the nearest quantized endpoints of a pass
shared uint s_out[4][BPW];                // the block, ORed from the lanes' parts
shared vec4 s_tot[TRIM_A(TRANSPOSE ? RG * NRED : 1u)][BPW]; // per group: the summed reduction (TRANSPOSE)
// (always declared: glslang's optimizer rejects these sizes as specialisation-constant expressions)
#if HL_LEANSH
shared int s_qf[1][BPW];
shared uvec2 s_nix[1][BPW];
shared float s_fe[1][BPW];
shared vec2 s_lmm[1][BPW];
#else
shared int s_qf[TRIM_A(RG * 12u)][BPW]; // per group: the last pass's quantized endpoints (REFSH)
shared uvec2 s_nix[TRIM_A(LANES)][BPW]; // per lane: the last pass's indices (REFSH, RECOMP)
shared float s_fe[TRIM_B(MAXJ)][BPW];   // the measured jobs' errors (REFSH)
shared vec2 s_lmm[TRIM_B(LANES)][BPW];  // per lane: min and max of the line's projections of its texels (LINE)
#endif

uint B; // this invocation's block in the workgroup

// a texel's logs (HL_LEANSH: s_W.w and s_Lyz)
vec3 texel_log(uint t)
{
#if HL_LEANSH && HL_SPLIT == 2
    return vec3(s_W[t][B].w, s_U[t][B].w, s_Lz[t][B]);
#elif HL_LEANSH
    return vec3(s_W[t][B].w, s_Lyz[t][B]);
#else
    return s_L[t][B].xyz;
#endif
}
// kernel A's s_red by use (HL_LEANSH: uvec2 entries): a float at entry i (phase 1's residuals), a list entry (value, key,
// code), phase 4's quantized endpoint value i (of 60), phase 4's partial error j, BAL4's stash of texel t (error, index)
#if HL_SPLIT == 1 && HL_LEANSH
float red_x(uint i) { return uintBitsToFloat(s_red[i][B].x); }
void red_set_x(uint i, float v) { s_red[i][B].x = floatBitsToUint(v); }
vec3 red_ent(uint i)
{
    const uvec2 e = s_red[i][B];
    return vec3(uintBitsToFloat(e.x), float(e.y >> 9), float(e.y & 511u));
}
void red_set_ent(uint i, vec3 v) { s_red[i][B] = uvec2(floatBitsToUint(v.x), uint(v.y) << 9 | uint(v.z)); }
int red_q(uint i) { return int(s_red[i / 2u][B][i % 2u]); }
void red_set_q(uint i, int v) { s_red[i / 2u][B][i % 2u] = uint(v); }
float red_pe(uint j) { return uintBitsToFloat(s_red[30u + j][B].x); }
void red_set_pe(uint j, float v) { s_red[30u + j][B].x = floatBitsToUint(v); }
vec2 red_st(uint t) { const uvec2 e = s_red[30u + MAXJ * G + t][B]; return vec2(uintBitsToFloat(e.x), float(e.y)); }
void red_set_st(uint t, float e, int bi) { s_red[30u + MAXJ * G + t][B] = uvec2(floatBitsToUint(e), uint(bi)); }
#elif HL_SPLIT != 2
float red_x(uint i) { return s_red[i][B].x; }
void red_set_x(uint i, float v) { s_red[i][B].x = v; }
vec3 red_ent(uint i) { return s_red[i][B].xyz; }
void red_set_ent(uint i, vec3 v) { s_red[i][B].xyz = v; }
int red_q(uint i) { return int(s_red[i / 3u][B][1u + i % 3u]); }
void red_set_q(uint i, int v) { s_red[i / 3u][B][1u + i % 3u] = float(v); }
float red_pe(uint j) { return s_red[j][B].x; }
void red_set_pe(uint j, float v) { s_red[j][B].x = v; }
// BAL4's stash: entries MAXJ * G + t (after phase 4's items; kernel A at 8 lanes has 40 entries, MAXJ * G + 16 <= 36)
vec2 red_st(uint t) { return s_red[MAXJ * G + t][B].xy; }
void red_set_st(uint t, float e, int bi) { s_red[MAXJ * G + t][B].xy = vec2(e, float(bi)); }
#endif

// a texel's half values (the CPU's input policy: NaN -> 0, UF16 negatives -> 0, clamped, -0 -> 0)
// and its target in the unquantized domain
vec3 load_target(uint x, uint y, out ivec3 xv)
{
    const float kf = BC6H_SF ? 32.0 / 31.0 : 64.0 / 31.0;
    vec3 v = src.px[y * pc.width + x].rgb, u;
    [[unroll]] for (int c = 0; c < 3; c++) {
        float f = v[c];
        if (isnan(f)) f = 0.0;
        if (!BC6H_SF && f < 0.0) f = 0.0;
        f = clamp(f, -65504.0, 65504.0);
        uint h = packHalf2x16(vec2(f, 0.0)) & 0xFFFFu;
        if (h == 0x8000u) h = 0u;
        int mag = int(h & 0x7FFFu);
        xv[c] = (h & 0x8000u) != 0u ? -mag : mag;
        u[c] = xv[c] == 0 ? 0.0 : (xv[c] > 0 ? (float(xv[c]) + 0.5) * kf : (float(xv[c]) - 0.5) * kf);
    }
    return u;
}

// the per-channel fitting weights (the metric's linearisation), their mean, the logs of a texel
void texel_weights(ivec3 xv, out vec3 w, out vec3 l, out float tw)
{
    tw = 0.0;
    [[unroll]] for (int c = 0; c < 3; c++) {
        int mag = abs(xv[c]);
        int e = (mag >> 10) & 31;
        float step = exp2(float((e == 0 ? 1 : e) - 25));
        float wv = step * 1024.0 / (1.0 + abs(half_val(mag)));
        w[c] = wv * wv + MU_LN2SQ;
        tw += w[c];
    }
    l = slog3(xv);
    tw = tw * (1.0 / 3.0) + 1e-12;
}

// the weighted residual of a subset off its principal axis from its moments: trace - top eigenvalue
float resid(float sw, vec3 s1, float c[6])
{
    if (!(sw > 0.0)) return 0.0;
    vec3 m = s1 / sw;
    float a0 = c[0] - s1.x * m.x, a1 = c[1] - s1.x * m.y, a2 = c[2] - s1.x * m.z;
    float a3 = c[3] - s1.y * m.y, a4 = c[4] - s1.y * m.z, a5 = c[5] - s1.z * m.z;
    vec3 ax;
    if (a0 >= a3 && a0 >= a5) ax = vec3(a0, a1, a2);
    else if (a3 >= a5) ax = vec3(a1, a3, a4);
    else ax = vec3(a2, a4, a5);
    [[unroll]] for (int it = 0; it < 3; it++) {
        vec3 nv = vec3(a0 * ax.x + a1 * ax.y + a2 * ax.z, a1 * ax.x + a3 * ax.y + a4 * ax.z, a2 * ax.x + a4 * ax.y + a5 * ax.z);
        float len = max(abs(nv.x), max(abs(nv.y), abs(nv.z)));
        ax = len > 0.0 ? nv / len : ax;
    }
    float l2 = dot(ax, ax);
    vec3 cx = vec3(a0 * ax.x + a1 * ax.y + a2 * ax.z, a1 * ax.x + a3 * ax.y + a4 * ax.z, a2 * ax.x + a4 * ax.y + a5 * ax.z);
    float lam = l2 > 0.0 ? dot(ax, cx) / l2 : 0.0;
    return max(a0 + a3 + a5 - lam, 0.0);
}

// the weighted mean and the unit principal axis of a subset from its sums (weights, weighted targets,
// weighted products)
void fit_axis(float sw, vec3 s, float m[6], out vec3 mean, out vec3 ax)
{
    mean = s / sw;
    float c0 = m[0] - s.x * mean.x, c1 = m[1] - s.x * mean.y, c2 = m[2] - s.x * mean.z;
    float c3 = m[3] - s.y * mean.y, c4 = m[4] - s.y * mean.z, c5 = m[5] - s.z * mean.z;
    if (c0 >= c3 && c0 >= c5) ax = vec3(c0, c1, c2);
    else if (c3 >= c5) ax = vec3(c1, c3, c4);
    else ax = vec3(c2, c4, c5);
    [[unroll]] for (int it = 0; it < FIT_POWER; it++) {
        vec3 nv = vec3(c0 * ax.x + c1 * ax.y + c2 * ax.z, c1 * ax.x + c3 * ax.y + c4 * ax.z, c2 * ax.x + c4 * ax.y + c5 * ax.z);
        float len = max(abs(nv.x), max(abs(nv.y), abs(nv.z)));
        ax = len > 0.0 ? nv * (1.0 / len) : ax;
    }
    float len = length(ax);
    ax = len > 0.0 ? ax / len : vec3(0.0);
}

// principal-axis fit of the texels in mask, endpoints (centred) oriented so the anchor is nearer e0
// one texel's terms of a subset's moments (fit_subset, phase 1's partitions): weight ut.w when texel t is in bits, else 0
void moment_texel(vec4 ut, uint bits, uint t, inout float sw, inout vec3 s, inout float m[6])
{
    float v = ((bits >> t) & 1u) != 0u ? ut.w : 0.0;
    vec3 vd = v * ut.xyz;
    sw += v;
    s += vd;
    m[0] += vd.x * ut.x;
    m[1] += vd.x * ut.y;
    m[2] += vd.x * ut.z;
    m[3] += vd.y * ut.y;
    m[4] += vd.y * ut.z;
    m[5] += vd.z * ut.z;
}

void fit_subset(uint mask, uint anchor, out vec3 e0, out vec3 e1)
{
    float sw = 0.0;
    vec3 s = vec3(0.0);
    float m[6] = float[6](0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
#define FIT_TEXEL moment_texel(s_U[t][B], mask, t, sw, s, m);
    if (U4B)
        TEXEL_LOOP4 {
            const uint t = t4 + j4;
            FIT_TEXEL
        }
    else
        TEXEL_LOOP for (uint t = 0u; t < TEXEL_N; t++) {
            FIT_TEXEL
        }
    vec3 mean, ax;
    fit_axis(sw, s, m, mean, ax);
    float tmin = 1.0 / 0.0, tmax = -1.0 / 0.0, tanchor = 0.0;
#define PROJ_TEXEL \
        float p = dot(s_U[t][B].xyz - mean, ax); \
        bool in_ = ((mask >> t) & 1u) != 0u; \
        tmin = in_ ? min(tmin, p) : tmin; \
        tmax = in_ ? max(tmax, p) : tmax; \
        if (t == anchor) tanchor = p;
    if (U4B)
        TEXEL_LOOP4 {
            const uint t = t4 + j4;
            PROJ_TEXEL
        }
    else
        TEXEL_LOOP for (uint t = 0u; t < TEXEL_N; t++) {
            PROJ_TEXEL
        }
    if (tanchor - tmin > tmax - tanchor) {
        float tmp = tmin;
        tmin = tmax;
        tmax = tmp;
    }
    e0 = mean + ax * tmin;
    e1 = mean + ax * tmax;
}

// cheap error of quantized endpoints (enc_bc6h_h.comp's approx_err)
float approx_err(uint mi, uint bits, ivec3 q[4], vec3 u0)
{
    const bool two = mi < 10u;
    const uint epb = m_epb(mi);
    const float n1 = two ? 7.0 : 15.0;
    vec3 a0 = vec3(unq3(q[0], epb)), a1 = vec3(unq3(q[2], epb));
    vec3 d0 = vec3(unq3(q[1], epb)) - a0, d1 = vec3(unq3(q[3], epb)) - a1;
    a0 -= u0;
    a1 -= u0;
    float dd0 = dot(d0, d0), dd1 = dot(d1, d1);
    float i0 = dd0 > 0.0 ? n1 / dd0 : 0.0, i1 = dd1 > 0.0 ? n1 / dd1 : 0.0;
    float total = 0.0;
#define APPROX_TEXEL \
        bool s1 = ((bits >> t) & 1u) != 0u; \
        vec3 a = s1 ? a1 : a0, d = s1 ? d1 : d0; \
        vec3 ut = s_U[t][B].xyz; \
        float ic = clamp(round(dot(ut - a, d) * (s1 ? i1 : i0)), 0.0, n1); \
        vec3 r = a + d * (ic / n1) - ut; \
        total += dot(s_W[t][B].xyz, r * r);
    if (U4)
        TEXEL_LOOP4 {
            const uint t = t4 + j4;
            APPROX_TEXEL
        }
    else
        TEXEL_LOOP for (uint t = 0u; t < TEXEL_N; t++) {
            APPROX_TEXEL
        }
    return total;
}

// approx_err's set-up: the unquantized endpoints relative to u0, the segments, the index scales
void approx_setup(uint mi, ivec3 q[4], vec3 u0, out vec3 a0, out vec3 a1, out vec3 d0, out vec3 d1, out float i0, out float i1,
                  out float n1)
{
    const bool two = mi < 10u;
    const uint epb = m_epb(mi);
    n1 = two ? 7.0 : 15.0;
    a0 = vec3(unq3(q[0], epb));
    a1 = vec3(unq3(q[2], epb));
    d0 = vec3(unq3(q[1], epb)) - a0;
    d1 = vec3(unq3(q[3], epb)) - a1;
    a0 -= u0;
    a1 -= u0;
    float dd0 = dot(d0, d0), dd1 = dot(d1, d1);
    i0 = dd0 > 0.0 ? n1 / dd0 : 0.0;
    i1 = dd1 > 0.0 ? n1 / dd1 : 0.0;
}

// PAIR3: approx_err of two candidates (A, B) in one pass over the texels (the same arithmetic per candidate)
void approx_err2(uint miA, uint bitsA, ivec3 qA[4], uint miB, uint bitsB, ivec3 qB[4], vec3 u0, out float eA, out float eB)
{
    vec3 a0A, a1A, d0A, d1A, a0B, a1B, d0B, d1B;
    float i0A, i1A, n1A, i0B, i1B, n1B;
    approx_setup(miA, qA, u0, a0A, a1A, d0A, d1A, i0A, i1A, n1A);
    approx_setup(miB, qB, u0, a0B, a1B, d0B, d1B, i0B, i1B, n1B);
    float tA = 0.0, tB = 0.0;
    TEXEL_LOOP for (uint t = 0u; t < TEXEL_N; t++) {
        vec3 ut = s_U[t][B].xyz, wt = s_W[t][B].xyz;
        {
            bool s1 = ((bitsA >> t) & 1u) != 0u;
            vec3 a = s1 ? a1A : a0A, d = s1 ? d1A : d0A;
            float ic = clamp(round(dot(ut - a, d) * (s1 ? i1A : i0A)), 0.0, n1A);
            vec3 r = a + d * (ic / n1A) - ut;
            tA += dot(wt, r * r);
        }
        {
            bool s1 = ((bitsB >> t) & 1u) != 0u;
            vec3 a = s1 ? a1B : a0B, d = s1 ? d1B : d0B;
            float ic = clamp(round(dot(ut - a, d) * (s1 ? i1B : i0B)), 0.0, n1B);
            vec3 r = a + d * (ic / n1B) - ut;
            tB += dot(wt, r * r);
        }
    }
    eA = tA;
    eB = tB;
}

// PAIR3: candidate n of phase 3 (slots in order, modes in order within a slot): false past the last
bool cand_decode(uint n, uint parts, out uint slot, out uint mi)
{
    uint base = 0u;
    slot = 0u;
    mi = 10u;
    for (uint sl = 0u; sl <= parts; sl++) {
        uint todo = s_todo[sl][B];
        const uint cnt = bitCount(todo);
        if (n < base + cnt) {
            for (uint r = n - base; r > 0u; r--) todo &= todo - 1u;
            slot = sl;
            mi = (sl > 0u ? 0u : 10u) + uint(findLSB(todo));
            return true;
        }
        base += cnt;
    }
    return false;
}

// PAIR3: a scored candidate into the lane's lists (phase 3's insertion, the same comparisons)
void list_add(float e, uint n2v, uint vc, bool two, inout float kv[MAXK], inout uint kk[MAXK], inout uint kc[MAXK], inout float lv,
              inout uint lk, inout uint lc)
{
    uint vk = LEAN3 ? n2v << 12 | vc : n2v;
    if (!two && e < lv) {
        lv = e;
        lk = LEAN3 ? vk >> 12 : vk;
        lc = vc;
    }
    [[unroll]] for (uint i = 0u; i < MAXK; i++) {
        bool lt = e < kv[i];
        float f = kv[i];
        uint fk = kk[i], fc = kc[i];
        kv[i] = lt ? e : kv[i];
        kk[i] = lt ? vk : kk[i];
        e = lt ? f : e;
        vk = lt ? fk : vk;
        if (!LEAN3) {
            kc[i] = lt ? vc : kc[i];
            vc = lt ? fc : vc;
        }
    }
}

// The least squares' normal equations, per subset and channel: ne[0..4] = aa, ab, bb, ax, bx of subset 0,
// ne[5..9] those of subset 1. ne_add adds one texel's terms (weight wt, target ut, in subset s1, with index
// weight be / 64); ne_pack lays the 30 sums and an error out as the NRED vec4 of a reduction.
void ne_add(inout vec3 ne[10], bool s1, vec3 wt, vec3 ut, bool two, int bi)
{
    float be = float(weight(two, bi)) / 64.0, al = 1.0 - be;
    vec3 w0 = s1 ? vec3(0.0) : wt, w1 = s1 ? wt : vec3(0.0);
    vec3 wu0 = w0 * ut, wu1 = w1 * ut;
    ne[0] += w0 * (al * al);
    ne[1] += w0 * (al * be);
    ne[2] += w0 * (be * be);
    ne[3] += wu0 * al;
    ne[4] += wu0 * be;
    ne[5] += w1 * (al * al);
    ne[6] += w1 * (al * be);
    ne[7] += w1 * (be * be);
    ne[8] += wu1 * al;
    ne[9] += wu1 * be;
}

void ne_pack(vec3 ne[10], float err, out vec4 r[NRED])
{
    r[0] = vec4(ne[0], ne[1].x);
    r[1] = vec4(ne[1].yz, ne[2].xy);
    r[2] = vec4(ne[2].z, ne[3]);
    r[3] = vec4(ne[4], ne[5].x);
    r[4] = vec4(ne[5].yz, ne[6].xy);
    r[5] = vec4(ne[6].z, ne[7]);
    r[6] = vec4(ne[8], ne[9].x);
    r[7] = vec4(ne[9].yz, 0.0, err);
}

// the body of assign_part's texel loop (texel gl + G i), one copy for the unrolled and the rolled loop (AROLL) and BAL4's
// spread last round (assign_tail): ASSIGN_CORE the texel's exact index choice (best, bi), ASSIGN_TEXEL with its sums
#define ASSIGN_CORE(i) \
        const uint t = gl + G * i; \
        bool s1 = ((bits >> t) & 1u) != 0u; \
        ivec3 a = s1 ? a1 : a0, b = s1 ? b1 : b0; \
        int lim = (t == 0u || (two && t == anc)) ? n1 / 2 : n1; \
        vec3 wt = s_W[t][B].xyz, ut = s_U[t][B].xyz; \
        vec3 fd = s1 ? fd1 : fd0, wd = wt * fd; \
        float den = dot(wd, fd); \
        float tp = den > 0.0 ? dot(ut - (s1 ? fa1 : fa0), wd) * (float(n1) / den) : 0.0; \
        int ic = clamp(int(round(tp)), 0, lim); \
        int alt = clamp(tp > float(ic) ? ic + 1 : ic - 1, 0, lim); \
        ivec3 xt = ivec3(trunc((ut + u0) * k)); \
        vec3 lt = texel_log(t); \
        float best = 1.0 / 0.0; \
        int bi = 0; \
        [[unroll]] for (int j = 0; j < NEXACT; j++) { \
            int ii = j == 0 ? ic : j == 1 ? alt : clamp(2 * ic - alt, 0, lim); \
            ivec3 pv = interp3(a, b, weight(two, ii)); \
            vec3 dl = slog3(pv) - lt, dx = vec3(pv - xt); \
            float e = dot(dl, dl) + ULP_K2 * dot(dx, dx); \
            if (e < best) { \
                best = e; \
                bi = ii; \
            } \
        }
#define ASSIGN_TEXEL(i) \
        ASSIGN_CORE(i) \
        idx[i / 8u] |= uint(bi) << (4u * (i % 8u)); \
        total += best; \
        if (!NE2) ne_add(ne, s1, wt, ut, two, bi);

// exact index choice (enc_bc6h_h.comp's assign) on this lane's texels gl, gl + G, ...: the partial
// error, the indices (4 bits per texel, texel gl + G i at bit 4 i of idx[i / 8]) and, for those
// indices, the partial normal equations of the least squares (per subset and channel: aa, ab, bb, ax,
// bx in r[0..9]); r[7].w: the error
void assign_part(uint mi, uint bits, uint anc, ivec3 q[4], vec3 u0, uint gl, out uvec2 idx, out vec4 r[NRED])
{
    const bool two = mi < 10u;
    const uint epb = m_epb(mi);
    const int n1 = two ? 7 : 15;
    ivec3 a0 = unq3(q[0], epb), b0 = unq3(q[1], epb), a1 = unq3(q[2], epb), b1 = unq3(q[3], epb);
    vec3 fa0 = vec3(a0) - u0, fd0 = vec3(b0 - a0), fa1 = vec3(a1) - u0, fd1 = vec3(b1 - a1);
    const float k = BC6H_SF ? 31.0 / 32.0 : 31.0 / 64.0;
    float total = 0.0;
    vec3 ne[10];
    [[unroll]] for (uint k = 0u; k < 10u; k++) ne[k] = vec3(0.0);
    idx = uvec2(0u);
    if (AROLL) { // OPT bit 11: the texel loop kept as a loop (bound + the runtime zero)
        [[dont_unroll]] for (uint i = 0u; i < TPL + pc.zero; i++) {
            ASSIGN_TEXEL(i)
        }
    } else
        [[unroll]] for (uint i = 0u; i < TPL; i++) {
            ASSIGN_TEXEL(i)
        }
    if (NE2) // a loop the compiler keeps (bound + the runtime zero): the search's values are dead here
        for (uint i = 0u; i < TPL + pc.zero; i++) {
            const uint t = gl + G * i;
            ne_add(ne, ((bits >> t) & 1u) != 0u, s_W[t][B].xyz, s_U[t][B].xyz, two, int((idx[i / 8u] >> (4u * (i % 8u))) & 15u));
        }
    ne_pack(ne, total, r);
}

#if HL_SPLIT != 2
// BAL4: assign_part's exact index choice of this lane's texels gl + G i, i = grp, grp + MG, ... (< TPL), each texel's error
// and index stashed (red_set_st); group 0 sums them (assign_sum)
void assign_tail(uint mi, uint bits, uint anc, ivec3 q[4], vec3 u0, uint gl, uint grp)
{
    const bool two = mi < 10u;
    const uint epb = m_epb(mi);
    const int n1 = two ? 7 : 15;
    ivec3 a0 = unq3(q[0], epb), b0 = unq3(q[1], epb), a1 = unq3(q[2], epb), b1 = unq3(q[3], epb);
    vec3 fa0 = vec3(a0) - u0, fd0 = vec3(b0 - a0), fa1 = vec3(a1) - u0, fd1 = vec3(b1 - a1);
    const float k = BC6H_SF ? 31.0 / 32.0 : 31.0 / 64.0;
    for (uint i = grp; i < TPL; i += MG) {
        ASSIGN_CORE(i)
        red_set_st(t, best, bi);
    }
}
// BAL4: group 0's lane gl: the partial error and indices of its texels from the stash, summed as assign_part does
float assign_sum(uint gl, out uvec2 idx)
{
    float total = 0.0;
    idx = uvec2(0u);
    [[unroll]] for (uint i = 0u; i < TPL; i++) {
        const vec2 st = red_st(gl + G * i);
        idx[i / 8u] |= uint(st.y) << (4u * (i % 8u));
        total += st.x;
    }
    return total;
}
#endif

// the least-squares endpoints (absolute) from the summed normal equations (enc_bc6h_h.comp's ls_fit)
void ls_solve(vec4 r[NRED], vec3 u0, out vec3 ef[4])
{
    vec3 aa[2], ab[2], bb[2], ax[2], bx[2];
    aa[0] = r[0].xyz;
    ab[0] = vec3(r[0].w, r[1].xy);
    bb[0] = vec3(r[1].zw, r[2].x);
    ax[0] = r[2].yzw;
    bx[0] = r[3].xyz;
    aa[1] = vec3(r[3].w, r[4].xy);
    ab[1] = vec3(r[4].zw, r[5].x);
    bb[1] = r[5].yzw;
    ax[1] = r[6].xyz;
    bx[1] = vec3(r[6].w, r[7].xy);
    [[unroll]] for (int s = 0; s < 2; s++) {
        vec3 sw = aa[s] + 2.0 * ab[s] + bb[s], sx = ax[s] + bx[s];
        vec3 det = aa[s] * bb[s] - ab[s] * ab[s];
        vec3 mean = sx / max(sw, vec3(1e-30));
        bvec3 ok = bvec3(det.x > 1e-6 * (aa[s].x * bb[s].x) && det.x > 0.0, det.y > 1e-6 * (aa[s].y * bb[s].y) && det.y > 0.0,
                         det.z > 1e-6 * (aa[s].z * bb[s].z) && det.z > 0.0);
        vec3 rd = 1.0 / det;
        vec3 e0 = mix(mean, (ax[s] * bb[s] - bx[s] * ab[s]) * rd, ok);
        vec3 e1 = mix(mean, (bx[s] * aa[s] - ax[s] * ab[s]) * rd, ok);
        ef[2 * s] = e0 + u0;
        ef[2 * s + 1] = e1 + u0;
    }
}

// v (n bits, n <= 16, no higher bits set) into the 128-bit block at bit pos (no dynamic indexing)
void put_at(inout uvec4 o, uint pos, uint v, uint n)
{
    const uint w = pos >> 5, sh = pos & 31u;
    const uint lo = v << sh, hi = sh == 0u ? 0u : v >> (32u - sh);
    o.x |= w == 0u ? lo : 0u;
    o.y |= w == 1u ? lo : w == 0u ? hi : 0u;
    o.z |= w == 2u ? lo : w == 1u ? hi : 0u;
    o.w |= w == 3u ? lo : w == 2u ? hi : 0u;
}

// this lane's part of the block (the lanes' parts are ORed): the mode's header spans ln, ln + NL, ...
// (fields and bit runs from the table, binding 2, as enc_bc6h_h.comp; each span's first bit from
// T_POS), then the indices of texels ln, ln + NL, ... (the job's, from s_jix)
uvec4 pack_part(uint mi, uint part, ivec3 q[4], uint job, uint ln)
{
    const bool two = mi < 10u;
    const uint emask = (1u << m_epb(mi)) - 1u;
    const ivec3 dlt = m_delta(mi);
    uint f[14];
    [[unroll]] for (uint e = 0u; e < 4u; e++)
        [[unroll]] for (uint c = 0u; c < 3u; c++) {
            uint v = 0u;
            if (e < 2u || two) v = e == 0u || !m_tr(mi) ? uint(q[e][c]) & emask : uint(q[e][c] - q[0][c]) & ((1u << uint(dlt[c])) - 1u);
            f[e * 3u + c] = v;
        }
    f[12] = part;
    f[13] = M_VALUE[mi];
    uvec4 o = uvec4(0u);
    for (uint s = ln; s < 28u; s += NL) {
        const uint sp = tab.t[T_SPAN + mi * 28u + s];
        const uint fld = sp & 255u, a = (sp >> 8) & 255u, b = sp >> 16, pos = tab.t[T_POS + mi * 28u + s];
        if (pos == 0xFFFFFFFFu) break; // the list's end (and every span after it)
        uint fv = 0u;
        [[unroll]] for (uint k = 0u; k < 14u; k++) fv = fld == k ? f[k] : fv;
        const uint n = a >= b ? a - b + 1u : b - a + 1u;
        const uint v = a >= b ? fv >> b : bitfieldReverse(fv >> a) >> (32u - n);
        put_at(o, pos, v & ((1u << n) - 1u), n);
    }
    const uint anc = two ? s_a2[part] : 0u;
    for (uint t = ln; t < 16u; t += NL) {
        const uint i = t / G;
        const uvec2 ix = s_jix[job * G + t % G][B];
        const bool fix = t == 0u || (two && t == anc);
        const uint n = (two ? 3u : 4u) - (fix ? 1u : 0u);
        // texel 0 and the anchor have one bit less
        const uint pos = t == 0u ? (two ? 82u : 65u) : two ? 82u + 3u * t - 1u - (t > anc ? 1u : 0u) : 65u + 4u * t - 1u;
        put_at(o, pos, (ix[i / 8u] >> (4u * (i % 8u))) & 15u, n);
    }
    return o;
}

vec3 get_ef(uint slot, uint e)
{
    uint o = slot * 12u + e * 3u;
    return vec3(s_ef[o][B], s_ef[o + 1u][B], s_ef[o + 2u][B]);
}
void put_ef(uint slot, uint e, vec3 v)
{
    uint o = slot * 12u + e * 3u;
    s_ef[o][B] = v.x;
    s_ef[o + 1u][B] = v.y;
    s_ef[o + 2u][B] = v.z;
}
void get_q(uint job, out ivec3 q[4])
{
    [[unroll]] for (uint e = 0u; e < 4u; e++)
        q[e] = ivec3(s_jq[job * 12u + e * 3u][B], s_jq[job * 12u + e * 3u + 1u][B], s_jq[job * 12u + e * 3u + 2u][B]);
}
void put_q(uint job, ivec3 q[4])
{
    [[unroll]] for (uint e = 0u; e < 4u; e++)
        [[unroll]] for (uint c = 0u; c < 3u; c++) s_jq[job * 12u + e * 3u + c][B] = q[e][c];
}

// a job's slot, partition, mode, variant from its code
void decode_job(uint code, out uint slot, out uint part, out uint mi, out uint var)
{
    slot = code & 15u;
    mi = (code >> 4) & 15u;
    var = code >> 8;
    part = slot == 0u ? 0u : s_ord[slot - 1u][B];
}

// PAIR3: the recentred variant (1) of a candidate whose nearest quantization (variant 0) clamped a delta
void score_var1(uint n, uint slot, uint mi, vec3 u0, inout float kv[MAXK], inout uint kk[MAXK], inout uint kc[MAXK], inout float lv,
                inout uint lk, inout uint lc)
{
    const bool two = slot > 0u;
    vec3 ef[4];
    [[unroll]] for (uint e = 0u; e < 4u; e++) ef[e] = get_ef(slot, e);
    ivec3 q[4];
    if (!quantize(mi, ef, 1u, false, q)) return;
    float e = approx_err(mi, two ? s_p2[s_ord[slot - 1u][B]] : 0u, q, u0);
    list_add(e, n * 2u + 1u, slot | mi << 4 | 1u << 8, two, kv, kk, kc, lv, lk, lc);
}

#if HL_SPLIT != 2
// MERGE3: the first MAXK entries (by (x, y)) of M sorted lists of MAXK entries at s_red[base + k * stride + i], k < M, i < MAXK
// (M <= 8); out[i].xyz = entry i's value, key, code
void merge_lists(uint base, uint stride, uint M, out vec3 outv[MAXK])
{
    uint pos[8];
    vec3 head[8];
    [[unroll]] for (uint k = 0u; k < 8u; k++) {
        pos[k] = 0u;
        head[k] = k < M ? red_ent(base + k * stride) : vec3(1.0 / 0.0, 1e30, 0.0);
    }
    [[unroll]] for (uint i = 0u; i < MAXK; i++) {
        uint bk = 0u;
        vec3 bv = head[0];
        [[unroll]] for (uint k = 1u; k < 8u; k++)
            if (k < M && (head[k].x < bv.x || (head[k].x == bv.x && head[k].y < bv.y))) {
                bv = head[k];
                bk = k;
            }
        outv[i] = bv;
        [[unroll]] for (uint k = 0u; k < 8u; k++)
            if (k == bk) {
                pos[k]++;
                head[k] = pos[k] < MAXK ? red_ent(base + k * stride + pos[k]) : vec3(1.0 / 0.0, 1e30, 0.0);
            }
    }
}

#endif

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    const uint b = lid / NL, ln = lid % NL, grp = ln / G, gl = ln % G;
    B = b;
    const uint blk = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * BPW + b;
    if (lid < 32u) {
        s_p2[lid] = BPTC_P2[lid];
        s_a2[lid] = BPTC_A2[lid];
    }
    if (ln < 4u) s_out[ln][b] = 0u;
    // invocations past the last block encode the last block again and store nothing
    const bool live = blk < pc.blocks_x * pc.block_rows;
    const uint blkc = min(blk, pc.blocks_x * pc.block_rows - 1u);
    const uint parts = min(pc.partitions, MAXP);
    const uint nkeep = min(max(pc.keep, 1u), MAXK);
    const uint njobs = nkeep + 1u;

    // 0. the texels
    const uint bx = blkc % pc.blocks_x, by = blkc / pc.blocks_x;
    ivec3 x0;
    const vec3 u0 = load_target(min(bx * 4u, pc.width - 1u), min(by * 4u, pc.rows - 1u), x0);
    for (uint t = ln; t < 16u; t += NL) {
        uint x = min(bx * 4u + (t & 3u), pc.width - 1u), y = min(by * 4u + (t >> 2), pc.rows - 1u);
        ivec3 xv;
        vec3 u = load_target(x, y, xv), w, l;
        float tw;
        texel_weights(xv, w, l, tw);
#if HL_LEANSH && HL_SPLIT == 2
        s_U[t][b] = vec4(u - u0, l.y);
        s_W[t][b] = vec4(w, l.x);
        s_Lz[t][b] = l.z;
#elif HL_LEANSH
        s_U[t][b] = vec4(u - u0, tw);
        s_W[t][b] = vec4(w, l.x);
        s_Lyz[t][b] = l.yz;
#else
        s_U[t][b] = vec4(u - u0, tw);
        s_W[t][b] = vec4(w, 0.0);
        s_L[t][b] = vec4(l, 0.0);
#endif
    }
    barrier();

#if HL_SPLIT != 2
    // 1. the partitions' residuals (lane ln: ln, ln + NL, ...), the best P by rank counting
    // (LINE: the line's mean and axis from the block's moments, in every lane)
    vec3 lmean = vec3(0.0), lax = vec3(0.0);
    if (parts > 0u || LINE) {
        float swt = 0.0, mt[6] = float[6](0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        vec3 st = vec3(0.0);
#define MT_TEXEL \
            vec4 ut = s_U[t][b]; \
            vec3 vd = ut.w * ut.xyz; \
            swt += ut.w; \
            st += vd; \
            mt[0] += vd.x * ut.x; \
            mt[1] += vd.x * ut.y; \
            mt[2] += vd.x * ut.z; \
            mt[3] += vd.y * ut.y; \
            mt[4] += vd.y * ut.z; \
            mt[5] += vd.z * ut.z;
        if (U4B)
            TEXEL_LOOP4 {
                const uint t = t4 + j4;
                MT_TEXEL
            }
        else
            TEXEL_LOOP for (uint t = 0u; t < TEXEL_N; t++) {
                MT_TEXEL
            }
        if (LINE) fit_axis(swt, st, mt, lmean, lax);
        if (parts > 0u && PAIR1)
        for (uint p = ln; p < 32u; p += 2u * NL) { // partitions p and p + NL (32 / NL is even)
            const uint pB = p + NL;
            uint bits = s_p2[p], bitsB = s_p2[pB];
            float sw1 = 0.0, m1[6] = float[6](0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
            float sw1B = 0.0, m1B[6] = float[6](0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
            vec3 s11 = vec3(0.0), s11B = vec3(0.0);
            TEXEL_LOOP for (uint t = 0u; t < TEXEL_N; t++) {
                vec4 ut = s_U[t][b];
                {
                    float v = ((bits >> t) & 1u) != 0u ? ut.w : 0.0;
                    vec3 vd = v * ut.xyz;
                    sw1 += v;
                    s11 += vd;
                    m1[0] += vd.x * ut.x;
                    m1[1] += vd.x * ut.y;
                    m1[2] += vd.x * ut.z;
                    m1[3] += vd.y * ut.y;
                    m1[4] += vd.y * ut.z;
                    m1[5] += vd.z * ut.z;
                }
                {
                    float v = ((bitsB >> t) & 1u) != 0u ? ut.w : 0.0;
                    vec3 vd = v * ut.xyz;
                    sw1B += v;
                    s11B += vd;
                    m1B[0] += vd.x * ut.x;
                    m1B[1] += vd.x * ut.y;
                    m1B[2] += vd.x * ut.z;
                    m1B[3] += vd.y * ut.y;
                    m1B[4] += vd.y * ut.z;
                    m1B[5] += vd.z * ut.z;
                }
            }
            float m0[6], m0B[6];
            [[unroll]] for (int i = 0; i < 6; i++) {
                m0[i] = mt[i] - m1[i];
                m0B[i] = mt[i] - m1B[i];
            }
            float v = resid(swt - sw1, st - s11, m0) + resid(sw1, s11, m1);
            red_set_x(p, isnan(v) ? 1.0 / 0.0 : v);
            float vB = resid(swt - sw1B, st - s11B, m0B) + resid(sw1B, s11B, m1B);
            red_set_x(pB, isnan(vB) ? 1.0 / 0.0 : vB);
        }
        else
        if (parts > 0u)
        for (uint p = ln; p < 32u; p += NL) {
            uint bits = s_p2[p];
            float sw1 = 0.0, m1[6] = float[6](0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
            vec3 s11 = vec3(0.0);
#define P1_TEXEL moment_texel(s_U[t][b], bits, t, sw1, s11, m1);
            if (U4B)
                TEXEL_LOOP4 {
                    const uint t = t4 + j4;
                    P1_TEXEL
                }
            else
                TEXEL_LOOP for (uint t = 0u; t < TEXEL_N; t++) {
                    P1_TEXEL
                }
            float m0[6];
            [[unroll]] for (int i = 0; i < 6; i++) m0[i] = mt[i] - m1[i];
            float v = resid(swt - sw1, st - s11, m0) + resid(sw1, s11, m1);
            red_set_x(p, isnan(v) ? 1.0 / 0.0 : v);
        }
    }
    barrier();
    if (parts > 0u && RANKV) { // the lane's partitions ln + NL i, i < 32 / NL (<= 8)
        const uint NP = 32u / NL;
        float v[8];
        uint rk[8];
        [[unroll]] for (uint i = 0u; i < 8u; i++) {
            v[i] = i < NP ? red_x(ln + NL * i) : 0.0;
            rk[i] = 0u;
        }
        [[unroll]] for (uint q = 0u; q < 32u; q++) {
            float o = red_x(q);
            [[unroll]] for (uint i = 0u; i < 8u; i++)
                if (i < NP) rk[i] += (o < v[i] || (o == v[i] && q < ln + NL * i)) ? 1u : 0u;
        }
        [[unroll]] for (uint i = 0u; i < 8u; i++)
            if (i < NP && rk[i] < parts) s_ord[rk[i]][b] = ln + NL * i;
    } else if (parts > 0u)
        for (uint p = ln; p < 32u; p += NL) {
            float v = red_x(p);
            uint rank = 0u;
            if ((OPT & 1u) != 0u) {
                [[unroll]] for (uint q = 0u; q < 32u; q++) {
                    float o = red_x(q);
                    rank += (o < v || (o == v && q < p)) ? 1u : 0u;
                }
            } else
                for (uint q = 0u; q < 32u; q++) {
                    float o = red_x(q);
                    rank += (o < v || (o == v && q < p)) ? 1u : 0u;
                }
            if (rank < parts) s_ord[rank][b] = p;
        }
    barrier();
    if (STOP == 1u) {
        if (ln == 0u && live) dst.blk[blk] = uvec4(s_ord[0][b], floatBitsToUint(s_U[5][b].x), 0u, 0u);
        return;
    }

    // 2. the fits: job 0 the line, job 1 + 2 (s - 1) + k subset k of slot s
    for (uint j = LINE ? ln + 1u : ln; j < 1u + 2u * parts; j += NL) {
        const uint slot = j == 0u ? 0u : (j + 1u) / 2u, k = j == 0u ? 0u : (j + 1u) % 2u;
        const uint part = slot == 0u ? 0u : s_ord[slot - 1u][b];
        const uint mask = slot == 0u ? 0xFFFFu : k == 1u ? s_p2[part] : ~s_p2[part] & 0xFFFFu;
        vec3 e0, e1;
        fit_subset(mask, k == 1u ? s_a2[part] : 0u, e0, e1);
        put_ef(slot, 2u * k, e0 + u0);
        put_ef(slot, 2u * k + 1u, e1 + u0);
        if (slot == 0u) {
            put_ef(0u, 2u, u0);
            put_ef(0u, 3u, u0);
        }
    }
    float ltanchor = 0.0; // LINE: texel 0's projection (lane 0)
    if (LINE) {
        float tmin = 1.0 / 0.0, tmax = -1.0 / 0.0;
        for (uint t = ln; t < 16u; t += NL) {
            float p = dot(s_U[t][b].xyz - lmean, lax);
            tmin = min(tmin, p);
            tmax = max(tmax, p);
            if (t == 0u) ltanchor = p;
        }
        s_lmm[ln][b] = vec2(tmin, tmax);
    }
    barrier();
    // the mode filter of slots ln, ln + NL, ...
    for (uint sl = ln; sl <= parts; sl += NL) {
        const bool two = sl > 0u;
        if (LINE && sl == 0u) { // the line's endpoints (lane 0): min / max over the lanes' projections
            float tmin = 1.0 / 0.0, tmax = -1.0 / 0.0;
            for (uint l = 0u; l < NL; l++) {
                vec2 mm = s_lmm[l][b];
                tmin = min(tmin, mm.x);
                tmax = max(tmax, mm.y);
            }
            if (ltanchor - tmin > tmax - ltanchor) {
                float tmp = tmin;
                tmin = tmax;
                tmax = tmp;
            }
            vec3 e0 = lmean + lax * tmin, e1 = lmean + lax * tmax;
            put_ef(0u, 0u, e0 + u0);
            put_ef(0u, 1u, e1 + u0);
            put_ef(0u, 2u, u0);
            put_ef(0u, 3u, u0);
        }
        vec3 ef[4];
        [[unroll]] for (uint e = 0u; e < 4u; e++) ef[e] = get_ef(sl, e);
        const uint m0 = two ? 0u : 10u, nm = two ? 10u : 4u;
        uint best = 0u, ok = 0u;
        for (uint o = 0u; o < nm; o++)
            if (m_tr(m0 + o) && fits(m0 + o, ef)) {
                best = max(best, m_epb(m0 + o));
                ok |= 1u << o;
            }
        uint todo = 0u;
        for (uint o = 0u; o < nm; o++)
            if (!m_tr(m0 + o) || (((ok >> o) & 1u) != 0u && m_epb(m0 + o) + PREC_SPAN >= best)) todo |= 1u << o;
        s_todo[sl][b] = todo;
    }
    barrier();
    if (STOP == 2u) {
        if (ln == 0u && live) dst.blk[blk] = uvec4(s_todo[0][b], s_todo[parts][b], floatBitsToUint(s_ef[13][b]), 0u);
        return;
    }

    // 3. the cheap scores: candidate n (slots in order, modes in order within a slot) on lane n % NL;
    // keys n * 2 + variant order them as enc_bc6h_h.comp's scoring loop
    float kv[MAXK];
    uint kk[MAXK], kc[MAXK];
    [[unroll]] for (uint i = 0u; i < MAXK; i++) {
        kv[i] = 1.0 / 0.0;
        kk[i] = 0x100000u + ln * MAXK + i; // empty: after every candidate, unique
        kc[i] = 10u << 4;                  // mode 3 on the line: only used if nothing was scored
        // LEAN3: key << 12 | code (keys < 2^20, codes < 2^9; empty keys 2^19 + ...: the same order)
        if (LEAN3) kk[i] = (0x80000u + ln * MAXK + i) << 12 | 10u << 4;
    }
    float lv = 1.0 / 0.0;
    uint lk = 0x100000u + NL * MAXK + ln, lc = 10u << 4;
    if (PAIR3) { // candidates n and n + NL of this lane together (variant 0 in one pass), listed in order
        for (uint n = ln;; n += 2u * NL) {
            uint slA, miA, slB, miB;
            if (!cand_decode(n, parts, slA, miA)) break;
            const bool okB = cand_decode(n + NL, parts, slB, miB);
            if (!okB) {
                slB = slA;
                miB = miA;
            }
            const bool twoA = slA > 0u, twoB = slB > 0u;
            const uint bitsA = twoA ? s_p2[s_ord[slA - 1u][b]] : 0u, bitsB = twoB ? s_p2[s_ord[slB - 1u][b]] : 0u;
            ivec3 qA[4], qB[4];
            vec3 ef[4];
            [[unroll]] for (uint e = 0u; e < 4u; e++) ef[e] = get_ef(slA, e);
            const bool chA = quantize(miA, ef, 0u, false, qA);
            [[unroll]] for (uint e = 0u; e < 4u; e++) ef[e] = get_ef(slB, e);
            const bool chB = quantize(miB, ef, 0u, false, qB);
            float eA, eB;
            approx_err2(miA, bitsA, qA, miB, bitsB, qB, u0, eA, eB);
            list_add(eA, n * 2u, slA | miA << 4, twoA, kv, kk, kc, lv, lk, lc);
            if (chA) score_var1(n, slA, miA, u0, kv, kk, kc, lv, lk, lc);
            if (okB) {
                list_add(eB, (n + NL) * 2u, slB | miB << 4, twoB, kv, kk, kc, lv, lk, lc);
                if (chB) score_var1(n + NL, slB, miB, u0, kv, kk, kc, lv, lk, lc);
            }
        }
    } else {
        uint slot = 0u, base = 0u, cnt = bitCount(s_todo[0][b]);
        for (uint n = ln;; n += NL) {
            while (slot <= parts && n >= base + cnt) {
                base += cnt;
                slot++;
                cnt = slot <= parts ? bitCount(s_todo[slot][b]) : 0u;
            }
            if (slot > parts) break;
            uint todo = s_todo[slot][b];
            for (uint r = n - base; r > 0u; r--) todo &= todo - 1u;
            const bool two = slot > 0u;
            const uint mi = (two ? 0u : 10u) + uint(findLSB(todo));
            const uint part = two ? s_ord[slot - 1u][b] : 0u;
            const uint bits = two ? s_p2[part] : 0u;
            vec3 ef[4];
            if (!LEAN3) [[unroll]] for (uint e = 0u; e < 4u; e++) ef[e] = get_ef(slot, e);
            for (uint var = 0u; var < 2u; var++) {
                if (LEAN3) [[unroll]] for (uint e = 0u; e < 4u; e++) ef[e] = get_ef(slot, e);
                ivec3 q[4];
                bool ch = quantize(mi, ef, var, false, q);
                if (var == 1u && !ch) break;
                float e = approx_err(mi, bits, q, u0);
                list_add(e, n * 2u + var, slot | mi << 4 | var << 8, two, kv, kk, kc, lv, lk, lc);
                if (var == 0u && !ch) break;
            }
        }
    }
    // the lanes' lists: entry ln * MAXK + i, then the line entries at NL * MAXK + ln
    // (keys and codes as floats: exact integers below 2^24)
    [[unroll]] for (uint i = 0u; i < MAXK; i++)
        red_set_ent(ln * MAXK + i, LEAN3 ? vec3(kv[i], float(kk[i] >> 12), float(kk[i] & 4095u)) : vec3(kv[i], float(kk[i]), float(kc[i])));
    red_set_ent(NL * MAXK + ln, vec3(lv, float(lk), float(lc)));
    barrier();
    if (MERGE3) { // the lanes' sorted lists merged: lanes ln < NL / 4 four lists each, then lane 0 those NL / 4
        const uint NM = NL >= 4u ? NL / 4u : 1u, PER = NL / NM;
        vec3 mo[MAXK];
        if (ln < NM) { // only this lane reads its lists: their first MAXK entries become its merged list
            merge_lists(ln * PER * MAXK, MAXK, PER, mo);
            [[unroll]] for (uint i = 0u; i < MAXK; i++) red_set_ent(ln * PER * MAXK + i, mo[i]);
        }
        barrier();
        if (ln == 0u) {
            merge_lists(0u, PER * MAXK, NM, mo);
            [[unroll]] for (uint i = 0u; i < MAXK; i++)
                if (i < nkeep) s_jc[i][b] = (mo[i].x < 1.0 / 0.0 || i == 0u) ? uint(mo[i].z) : 0xFFFFu;
        }
    } else if (RANKV) { // the lane's entries ln + NL k, k < MAXK
        vec2 me[MAXK];
        uint rk[MAXK];
        [[unroll]] for (uint k = 0u; k < MAXK; k++) {
            me[k] = red_ent(ln + NL * k).xy;
            rk[k] = 0u;
        }
        [[unroll]] for (uint j = 0u; j < NL * MAXK; j++) {
            vec2 o = red_ent(j).xy;
            [[unroll]] for (uint k = 0u; k < MAXK; k++) rk[k] += (o.x < me[k].x || (o.x == me[k].x && o.y < me[k].y)) ? 1u : 0u;
        }
        [[unroll]] for (uint k = 0u; k < MAXK; k++)
            if (rk[k] < nkeep) {
                vec3 e = red_ent(ln + NL * k);
                s_jc[rk[k]][b] = (e.x < 1.0 / 0.0 || rk[k] == 0u) ? uint(e.z) : 0xFFFFu;
            }
    } else
    for (uint i = ln; i < NL * MAXK; i += NL) {
        vec3 me = red_ent(i);
        uint rank = 0u;
        if ((OPT & 1u) != 0u) {
            [[unroll]] for (uint j = 0u; j < NL * MAXK; j++) {
                vec2 o = red_ent(j).xy;
                rank += (o.x < me.x || (o.x == me.x && o.y < me.y)) ? 1u : 0u;
            }
        } else
            for (uint j = 0u; j < NL * MAXK; j++) {
                vec3 o = red_ent(j);
                rank += (o.x < me.x || (o.x == me.x && o.y < me.y)) ? 1u : 0u;
            }
        // an empty entry (no candidate) is a job only as job 0 (the line's mode 3, as enc_bc6h_h.comp)
        if (rank < nkeep) s_jc[rank][b] = (me.x < 1.0 / 0.0 || rank == 0u) ? uint(me.z) : 0xFFFFu;
    }
    if (ln == 0u) {
        vec3 bst = red_ent(NL * MAXK);
        for (uint j = 1u; j < NL; j++) {
            vec3 o = red_ent(NL * MAXK + j);
            if (o.x < bst.x || (o.x == bst.x && o.y < bst.y)) bst = o;
        }
        s_jc[nkeep][b] = uint(bst.z);
    }
    barrier();
    if (STOP == 3u) {
        if (ln == 0u && live) dst.blk[blk] = uvec4(s_jc[0][b], s_jc[1][b], s_jc[nkeep][b], 0u);
        return;
    }

    // 4. the jobs measured exactly. The nearest quantized endpoints of every job's, component i of
    // job j (i = e * 3 + c) on lane (12 j + i) % NL, as floats (exact) at s_red[(12 j + i) / 3][1 + (12
    // j + i) % 3]; then job r * MG + grp in round r, lane gl its texels; partial errors at
    // s_red[job * G + gl].x
    for (uint i = ln; i < njobs * 12u; i += NL) {
        const uint job = i / 12u, e = (i % 12u) / 3u, c = i % 3u, code = s_jc[job][b];
        int v = 0;
        if (code != 0xFFFFu) {
            uint slot, part, mi, var;
            decode_job(code, slot, part, mi, var);
            const uint epb = m_epb(mi);
            if (e < 2u || mi < 10u) v = quant1(s_ef[slot * 12u + e * 3u + c][b], epb, q_lo(epb), q_hi(epb), true);
        }
        red_set_q(i, v);
    }
    barrier();
    // BAL4: a last round of one job spread over the MG groups (assign_tail)
    const bool tail = BAL4 && MG > 1u && njobs % MG == 1u;
    const uint rounds = tail ? njobs / MG : (njobs + MG - 1u) / MG;
    for (uint r = 0u; r < rounds; r++) {
        const uint job = r * MG + grp;
        if (job >= njobs) continue;
        const uint code = s_jc[job][b];
        float e = 1.0 / 0.0;
        uvec2 idx = uvec2(0u);
        if (code != 0xFFFFu) {
            uint slot, part, mi, var;
            decode_job(code, slot, part, mi, var);
            const bool two = mi < 10u;
            ivec3 q[4];
            [[unroll]] for (uint k = 0u; k < 12u; k++) {
                const uint i = job * 12u + k;
                q[k / 3u][k % 3u] = red_q(i);
            }
            quantize_fit(mi, var, q);
            vec4 rr[NRED];
            assign_part(mi, two ? s_p2[part] : 0u, two ? s_a2[part] : 0u, q, u0, gl, idx, rr);
            e = rr[7].w;
            if (gl == 0u) put_q(job, q);
        }
        red_set_pe(job * G + gl, e);
        s_jix[job * G + gl][b] = idx;
    }
    if (tail) { // uniform (push constants)
        const uint job = njobs - 1u, code = s_jc[job][b];
        if (code != 0xFFFFu) {
            uint slot, part, mi, var;
            decode_job(code, slot, part, mi, var);
            const bool two = mi < 10u;
            ivec3 q[4];
            [[unroll]] for (uint k = 0u; k < 12u; k++) q[k / 3u][k % 3u] = red_q(job * 12u + k);
            quantize_fit(mi, var, q);
            assign_tail(mi, two ? s_p2[part] : 0u, two ? s_a2[part] : 0u, q, u0, gl, grp);
            if (ln == 0u) put_q(job, q);
        }
        barrier();
        if (grp == 0u) {
            float e = 1.0 / 0.0;
            uvec2 idx = uvec2(0u);
            if (code != 0xFFFFu) e = assign_sum(gl, idx);
            red_set_pe(job * G + gl, e);
            s_jix[job * G + gl][b] = idx;
        }
    }
    barrier();
    float fe[MAXJ];
    [[unroll]] for (uint j = 0u; j < MAXJ; j++) {
        fe[j] = 1.0 / 0.0;
        if (j < njobs) {
            float s = 0.0;
            for (uint g = 0u; g < G; g++) s += red_pe(j * G + g);
            fe[j] = s;
        }
    }
    if (REFSH && ln == 0u)
        [[unroll]] for (uint j = 0u; j < MAXJ; j++) s_fe[j][b] = fe[j];
    if (STOP == 4u) {
        if (ln == 0u && live) dst.blk[blk] = uvec4(floatBitsToUint(fe[0]), floatBitsToUint(fe[1]), floatBitsToUint(fe[MAXJ - 1u]), s_jix[0][b].x);
        return;
    }
    // 5. the best RG of the measured jobs (ties: the earlier job); group grp refines the grp-th
    // (job numbers packed 8 bits per group, 255: none; loops unrolled: fe stays in registers)
    uint rjobs = 0u;
    uint myjob = 0xFFFFu;
    float myerr = 1.0 / 0.0;
    {
        uint taken = 0u;
        [[unroll]] for (uint g = 0u; g < 4u; g++) {
            float bv = 1.0 / 0.0;
            uint bj = 255u;
            [[unroll]] for (uint j = 0u; j < MAXJ; j++)
                if (j < njobs && ((taken >> j) & 1u) == 0u && fe[j] < bv) {
                    bv = fe[j];
                    bj = j;
                }
            if (g >= RG) bj = 255u;
            if (bj != 255u) taken |= 1u << bj;
            rjobs |= bj << (8u * g);
            if (g == grp && bj != 255u) {
                myjob = bj;
                myerr = bv;
            }
        }
    }
#else
    // kernel B: kernel A's hand-off for this block, the state the one-kernel encoder has here for the jobs that get the
    // least-squares passes (the others never win: each refined job's error is at most its measured error, which is below
    // theirs or equal with an earlier job; when no job was chosen, job 0 wins unrefined: record 0 carries it, flagged)
    float fe[MAXJ];
    [[unroll]] for (uint j = 0u; j < MAXJ; j++) fe[j] = 1.0 / 0.0;
    uint rjobs = 0u, myjob = 0xFFFFu;
    float myerr = 1.0 / 0.0;
    const uint hbase = blkc * RG * HO_REC;
    [[unroll]] for (uint g = 0u; g < 4u; g++) {
        const uint w0 = g < RG ? ho.h[hbase + g * HO_REC] : 0xFFFFFFFFu;
        rjobs |= (w0 == 0xFFFFFFFFu || (w0 & 0x800000u) != 0u ? 255u : (w0 >> 20) & 7u) << (8u * g);
    }
    {
        const uint rb = hbase + grp * HO_REC, w0 = ho.h[rb];
        if (w0 != 0xFFFFFFFFu) {
            const uint jn = (w0 >> 20) & 7u;
            if ((w0 & 0x800000u) == 0u) { // else only packed (job 0, fe[0] infinite like every other)
                myjob = jn;
                myerr = uintBitsToFloat(ho.h[rb + 1u]);
            }
            const uint code = w0 & 0xFFFu, slot = code & 15u;
#if HL_LEANSH
            const uint js = grp; // lean kernel B: stored by group
#else
            const uint js = jn;
#endif
            if (gl == 0u) {
                s_jc[js][b] = code;
                if (slot > 0u) s_ord[slot - 1u][b] = (w0 >> 12) & 31u; // the groups' slots: the same partition
                for (uint k = 0u; k < 12u; k++) s_jq[js * 12u + k][b] = int(ho.h[rb + 2u + k]);
            }
            const uint i0 = ho.h[rb + 14u], i1 = ho.h[rb + 15u];
            uvec2 idx = uvec2(0u);
            [[unroll]] for (uint i = 0u; i < TPL; i++) {
                const uint t = gl + G * i;
                idx[i / 8u] |= (((t < 8u ? i0 : i1) >> (4u * (t % 8u))) & 15u) << (4u * (i % 8u));
            }
            s_jix[js * G + gl][b] = idx;
        }
    }
#endif
#if HL_SPLIT == 1
    // kernel A: the hand-off, words gl, gl + G, ... of group grp's record (enc_bc6h_hb.comp reads it)
    {
        // no job chosen (every measured error infinite): record 0 carries job 0, flagged to be packed as it is
        const bool none = (rjobs & 255u) == 255u;
        const uint j = none && grp == 0u ? 0u : (rjobs >> (8u * grp)) & 255u, rb = blk * RG * HO_REC + grp * HO_REC;
        for (uint k = gl; k < HO_REC; k += G) {
            uint v = 0xFFFFFFFFu;
            if (j != 255u) {
                if (k == 0u) {
                    const uint code = s_jc[j][b], slot = code & 15u;
                    v = code | (slot == 0u ? 0u : s_ord[slot - 1u][b]) << 12 | j << 20 | (none ? 0x800000u : 0u);
                } else if (k == 1u)
                    v = floatBitsToUint(myerr);
                else if (k < 14u)
                    v = uint(s_jq[j * 12u + k - 2u][b]);
                else {
                    v = 0u;
                    for (uint tt = 0u; tt < 8u; tt++) {
                        const uint t = 8u * (k - 14u) + tt, i = t / G;
                        const uvec2 ix = s_jix[j * G + t % G][b];
                        v |= ((ix[i / 8u] >> (4u * (i % 8u))) & 15u) << (4u * tt);
                    }
                }
            }
#ifdef HL_GFIX
            if (live && grp < RG) ho.h[rb + k] = v; // the groups past RG hand nothing over
#else
            if (live) ho.h[rb + k] = v;
#endif
        }
    }
#else
    const uint nls = pc.ls_iters;
    barrier(); // the partial errors are read: s_red is the reduction buffer from here
    {
        const bool act = myjob != 0xFFFFu;
#if HL_LEANSH && HL_SPLIT == 2
        const uint sj = grp; // lean kernel B: the job's state stored by group
#else
        const uint sj = myjob;
#endif
        const uint code = act ? s_jc[sj][b] : 10u << 4;
        uint slot, part, mi, var;
        decode_job(code, slot, part, mi, var);
        const bool two = mi < 10u;
        const uint bits = two ? s_p2[part] : 0u, anc = two ? s_a2[part] : 0u;
        float err = myerr;
        // REFSH: the best indices stay in s_jix, the best endpoints in s_jq (not in registers)
        uvec2 cidx = act && !REFSH ? s_jix[sj * G + gl][b] : uvec2(0u);
        ivec3 cq[4], q[4];
        [[unroll]] for (uint k = 0u; k < 4u; k++) cq[k] = ivec3(0);
        if (!REFSH) get_q(act ? sj : 0u, cq);
        [[unroll]] for (uint k = 0u; k < 4u; k++) q[k] = cq[k];
        // the normal equations of the job's indices (this lane's texels), as assign_part sums them
        // (RECOMP: summed per component in the first pass instead)
        if (!RECOMP) {
            vec3 ne[10];
            [[unroll]] for (uint k = 0u; k < 10u; k++) ne[k] = vec3(0.0);
            const uvec2 ix0 = REFSH ? (act ? s_jix[sj * G + gl][b] : uvec2(0u)) : cidx;
            if (AROLL) // OPT bit 11: a loop (bound + the runtime zero)
                [[dont_unroll]] for (uint i = 0u; i < TPL + pc.zero; i++) {
                    const uint t = gl + G * i;
                    ne_add(ne, ((bits >> t) & 1u) != 0u, s_W[t][b].xyz, s_U[t][b].xyz, two,
                           int((ix0[i / 8u] >> (4u * (i % 8u))) & 15u));
                }
            else
                [[unroll]] for (uint i = 0u; i < TPL; i++) {
                    const uint t = gl + G * i;
                    ne_add(ne, ((bits >> t) & 1u) != 0u, s_W[t][b].xyz, s_U[t][b].xyz, two,
                           int((ix0[i / 8u] >> (4u * (i % 8u))) & 15u));
                }
            vec4 rr[NRED];
            ne_pack(ne, 0.0, rr);
            [[unroll]] for (uint k = 0u; k < NRED; k++) s_red[ln * NRED + k][b] = rr[k];
        }
        bool stop = !act;
        uvec2 nidx = uvec2(0u);
        // uniform trip count (barriers); a group whose pass did not lower the error skips the rest
        // of its work (stop is the same in all its lanes: the same sums in the same order)
        vec4 tot[NRED];
        for (uint it = 0u; it <= nls; it++) {
            barrier();
            if (LSC) { // each lane sums only what it needs: the error and its components' 5 sums (OPT bit 1)
                if (!stop && it > 0u) {
                    float terr = 0.0;
                    for (uint g = 0u; g < G; g++) terr += s_red[(grp * G + g) * NRED + 7u][b].w;
                    bool take = terr < err; // the previous pass: kept while it lowers the error
                    stop = !take;
                    err = take ? terr : err;
                    if (REFSH) { // the pass's indices (own slot) and endpoints (the group's) become the best
                        if (take) {
                            s_jix[sj * G + gl][b] = s_nix[ln][b];
                            if (gl == 0u) [[unroll]] for (uint k = 0u; k < 12u; k++) s_jq[sj * 12u + k][b] = s_qf[grp * 12u + k][b];
                        }
                    } else {
                        cidx = take ? nidx : cidx;
                        [[unroll]] for (uint k = 0u; k < 4u; k++) cq[k] = take ? q[k] : cq[k];
                    }
                }
                if (it == nls) break; // uniform: nls is a push constant
                if (!stop) {
                    const uint epb = m_epb(mi);
                    for (uint k = gl; k < 12u; k += G) {
                        const uint e = k / 3u, c = k % 3u, f0 = 15u * (e / 2u) + c;
                        // aa, ab, bb, ax, bx of subset e / 2, channel c: flat items f0 + 3 i of the partials
                        float v[5] = float[5](0.0, 0.0, 0.0, 0.0, 0.0);
                        if (RECOMP) { // lane g's partial (its texels g, g + G, ... as ne_add), then summed in lane order
                            const bool sub1 = e >= 2u;
                            for (uint g = 0u; g < G; g++) {
                                const uvec2 ix = it == 0u ? s_jix[sj * G + g][b] : s_nix[grp * G + g][b];
                                float p[5] = float[5](0.0, 0.0, 0.0, 0.0, 0.0);
                                [[unroll]] for (uint i = 0u; i < TPL; i++) {
                                    const uint t = g + G * i;
                                    const bool s1 = ((bits >> t) & 1u) != 0u;
                                    const int bi = int((ix[i / 8u] >> (4u * (i % 8u))) & 15u);
                                    float be = float(weight(two, bi)) / 64.0, al = 1.0 - be;
                                    float w = s1 == sub1 ? s_W[t][b][c] : 0.0;
                                    float wu = w * s_U[t][b][c];
                                    p[0] += w * (al * al);
                                    p[1] += w * (al * be);
                                    p[2] += w * (be * be);
                                    p[3] += wu * al;
                                    p[4] += wu * be;
                                }
                                [[unroll]] for (uint i = 0u; i < 5u; i++) v[i] += p[i];
                            }
                        } else
                            for (uint g = 0u; g < G; g++) {
                                const uint base = (grp * G + g) * NRED;
                                [[unroll]] for (uint i = 0u; i < 5u; i++) {
                                    const uint f = f0 + 3u * i;
                                    v[i] += s_red[base + f / 4u][b][f % 4u];
                                }
                            }
                        const float aa = v[0], ab = v[1], bb = v[2], ax = v[3], bx = v[4];
                        // ls_solve for one subset and channel (the same expressions)
                        float sw = aa + 2.0 * ab + bb, sx = ax + bx;
                        float det = aa * bb - ab * ab;
                        float mean = sx / max(sw, 1e-30);
                        bool ok = det > 1e-6 * (aa * bb) && det > 0.0;
                        float rd = 1.0 / det;
                        float ev = (e & 1u) == 0u ? (ok ? (ax * bb - bx * ab) * rd : mean) : (ok ? (bx * aa - ax * ab) * rd : mean);
                        float u = (ev + 0.0) + (c == 0u ? u0.x : c == 1u ? u0.y : u0.z);
                        s_qn[grp * 12u + k][b] = e < 2u || two ? quant1(u, epb, q_lo(epb), q_hi(epb), true) : 0;
                    }
                }
                barrier();
                if (!stop) {
                    [[unroll]] for (uint k = 0u; k < 12u; k++) q[k / 3u][k % 3u] = s_qn[grp * 12u + k][b];
                    quantize_fit(mi, var, q);
                    vec4 rr[NRED];
                    assign_part(mi, bits, anc, q, u0, gl, nidx, rr);
                    if (RECOMP) // only the error: the sums are recomputed (the normal equations are dead code)
                        s_red[ln * NRED + 7u][b] = vec4(0.0, 0.0, 0.0, rr[7].w);
                    else
                        [[unroll]] for (uint k = 0u; k < NRED; k++) s_red[ln * NRED + k][b] = rr[k];
                    if (REFSH || RECOMP) s_nix[ln][b] = nidx;
                    if (REFSH && gl == 0u) [[unroll]] for (uint k = 0u; k < 12u; k++) s_qf[grp * 12u + k][b] = q[k / 3u][k % 3u];
                }
                continue;
            }
            if (TRANSPOSE) { // lane gl sums items gl, gl + G, ... over the group's lanes (in lane order)
                if (!stop)
                    for (uint k = gl; k < NRED; k += G) {
                        vec4 acc = vec4(0.0);
                        for (uint g = 0u; g < G; g++) acc += s_red[(grp * G + g) * NRED + k][b];
                        s_tot[grp * NRED + k][b] = acc;
                    }
                barrier();
            }
            if (!stop) {
                if (TRANSPOSE) {
                    [[unroll]] for (uint k = 0u; k < NRED; k++) tot[k] = s_tot[grp * NRED + k][b];
                } else {
                    [[unroll]] for (uint k = 0u; k < NRED; k++) tot[k] = vec4(0.0);
                    for (uint g = 0u; g < G; g++)
                        [[unroll]] for (uint k = 0u; k < NRED; k++) tot[k] += s_red[(grp * G + g) * NRED + k][b];
                }
                if (it > 0u) { // the previous pass: kept while it lowers the error
                    bool take = tot[7].w < err;
                    stop = !take;
                    err = take ? tot[7].w : err;
                    cidx = take ? nidx : cidx;
                    [[unroll]] for (uint k = 0u; k < 4u; k++) cq[k] = take ? q[k] : cq[k];
                }
            }
            if (it == nls) break; // uniform: nls is a push constant
            if (!stop) {
                vec3 ef[4];
                ls_solve(tot, vec3(0.0), ef);
                [[unroll]] for (uint k = 0u; k < 4u; k++) ef[k] += u0;
                // the nearest values, components gl, gl + G, ... of 12 on this lane
                const uint epb = m_epb(mi);
                for (uint k = gl; k < 12u; k += G) {
                    const uint e = k / 3u, c = k % 3u; // selects, not a dynamically indexed array
                    vec3 ev = e == 0u ? ef[0] : e == 1u ? ef[1] : e == 2u ? ef[2] : ef[3];
                    float u = c == 0u ? ev.x : c == 1u ? ev.y : ev.z;
                    s_qn[grp * 12u + k][b] = e < 2u || two ? quant1(u, epb, q_lo(epb), q_hi(epb), true) : 0;
                }
            }
            barrier();
            if (!stop) {
                [[unroll]] for (uint k = 0u; k < 12u; k++) q[k / 3u][k % 3u] = s_qn[grp * 12u + k][b];
                quantize_fit(mi, var, q);
                vec4 rr[NRED];
                assign_part(mi, bits, anc, q, u0, gl, nidx, rr);
                [[unroll]] for (uint k = 0u; k < NRED; k++) s_red[ln * NRED + k][b] = rr[k];
            }
        }
        // the refined job's result replaces its first measure (its error is never higher)
        if (act) {
            if (!REFSH) {
                s_jix[sj * G + gl][b] = cidx;
                if (gl == 0u) put_q(sj, cq);
            }
            if (gl == 0u) s_rerr[grp][b] = err;
        }
    }
    barrier();
    if (STOP == 5u) {
        if (ln == 0u && live) dst.blk[blk] = uvec4(floatBitsToUint(s_rerr[0][b]), s_jix[0][b].x, uint(s_jq[3][b]), 0u);
        return;
    }
    // 6. the lowest error (ties: the earlier job; every lane finds the same), packed by all lanes
    if (REFSH && HL_SPLIT == 0)
        [[unroll]] for (uint j = 0u; j < MAXJ; j++) fe[j] = s_fe[j][b];
    [[unroll]] for (uint g = 0u; g < 4u; g++) {
        const uint j = (rjobs >> (8u * g)) & 255u;
        const float e = g < RG ? s_rerr[min(g, RG - 1u)][b] : 0.0;
        [[unroll]] for (uint k = 0u; k < MAXJ; k++)
            if (k == j) fe[k] = e;
    }
    uint wj = 0u;
    float wv = fe[0];
    [[unroll]] for (uint j = 1u; j < MAXJ; j++)
        if (j < njobs && fe[j] < wv) {
            wv = fe[j];
            wj = j;
        }
    {
        uint slot, part, mi, var;
        uint ws = wj; // the winner's storage index
#if HL_LEANSH && HL_SPLIT == 2
        ws = 0u; // lean kernel B: the group that refined it (none refined: job 0, record 0, group 0)
        [[unroll]] for (uint g = 0u; g < 4u; g++)
            if (g < RG && ((rjobs >> (8u * g)) & 255u) == wj) ws = g;
#endif
        decode_job(s_jc[ws][b], slot, part, mi, var);
        ivec3 q[4];
        get_q(ws, q);
        uvec4 o = pack_part(mi, part, q, ws, ln);
        [[unroll]] for (uint k = 0u; k < 4u; k++)
            if (o[k] != 0u) atomicOr(s_out[k][b], o[k]);
    }
    barrier();
    if (ln == 0u && live) dst.blk[blk] = uvec4(s_out[0][b], s_out[1][b], s_out[2][b], s_out[3][b]);
#endif
}

// enc_bc4_max_pool.comp - BC4 / BC5 / BC3-alpha channels at max quality, kiln strategy (helper
// bc4lanes): a quadtree search over the endpoint plane with the cells of a workgroup's channel tasks (one
// per invocation) in one shared pool, so that every invocation works on some task's cell while cells are
// left, instead of each invocation walking its own task's tree (the former enc_bc4_max.comp, removed with
// the first design enc_bc4_max_v1.comp by helper bc4k: both lost on the H100; there a warp waited for its
// slowest lane).
// The bound: a cell is a range [l1, l2] of the low endpoint times a range [h1, h2] of the high one
// (eight-value mode: the pairs a = hi > b = lo; six-value mode: a = lo <= b = hi), clipped to the pairs
// that exist. Every palette entry is a non-decreasing function of both endpoints (the D3D10 ramps
// truncate toward zero, which is monotonic), so over the cell entry i stays inside [p_i(l1, h1),
// p_i(l2, h2)], and a texel x costs at least its squared distance to the nearest of these eight
// intervals; the sum is a lower bound of every pair's error in the cell and, for a one-pair cell, that
// pair's error. With it bc4_enc.c's spacing bound for the cell's smallest span (at most K palette
// entries can serve the texels, and no K levels beat the optimal K-level quantisation of the values), and
// for the six-value mode a floor over all its pairs (six_floor).
// The same bytes as bc4_enc.c's exhaustive branch-and-bound, and nothing depends on the subgroup size,
// on the order of the lanes or on timing.
//
// 1. Each invocation takes one task: the high heuristic (enc_bc4.glsl, bc4_enc.c heuristic()) gives
//    H and the pair (ha, hb); H = 0 (or no task) pushes nothing. Otherwise the distinct values with
//    counts (extremes first), the k-means spacing bounds emin[1..8] and H go to shared memory, and the
//    task's two root cells (the eight- and the six-value mode's (low, high) planes), bounded, to the pool
//    where they survive: the stack holds only cells that survived their bound.
// 2. Rounds, all invocations of the workgroup together (two barriers a round): every invocation pops one
//    cell from the top of the shared stack (LIFO, so the search stays close to depth first), bounds each
//    of its non-empty quarters (the interval bound and the spacing bound above, the limit
//    L = min(H, E + 1) read from the task's shared best E) and pushes those that survive and are not one
//    pair (helper bc4m: one pop, its stack traffic and its round's barriers for up to four bounds, where
//    each pop bounded the popped cell alone; nearly the same cells are bounded, a quarter against the
//    limit at its parent's pop: +1.6 % on the bench image, simulated). A one-pair cell that survives
//    has its exact error e < L: it is folded into the task's best by atomicMin of (e << 17 | key),
//    key = mode << 16 | lo << 8 | hi (the CPU's scan order: eight-value pairs by (lo, hi), then six-value
//    ones). Pairs of the minimal error e* < H are never dropped (every bound of theirs is <= e* < L, as
//    E >= e*), so the minimum of the packed words is (e*, the lowest key of error e*): the CPU's pick
//    whatever the order of the work; the heuristic's pair stays when nothing is below H (the CPU replaces
//    it only on a strict improvement). The packing needs e < 2^15: recorded errors are below H, and H <=
//    the error of the eight-value pair (max, min) <= 16 * 19^2 = 5776 (consecutive entries at most
//    ceil(255 / 7) + 1 apart, so every texel lies within 19 of one).
//    When the stack (CAP entries; the specialisation constant 5 makes it smaller for the tests) has no
//    room for four quarters from every invocation, nothing is pushed that round: an invocation that
//    popped a cell walks the cell's subtree itself from its first quarter, depth first without a stack
//    (the cell's corner and level say where to go next), one cell a round (same bounds, same atomicMin,
//    so the same result), and puts back the cells it pops meanwhile. (A walk of the whole subtree inside
//    one round left whole SIMD groups of such workgroups without output on lavapipe, Mesa 22.3.6; the
//    same logic replayed in C was exact.)
// 3. Each invocation packs its task with the best pair (or the heuristic's).
#include "enc_bc_common.glsl"
layout(local_size_x_id = 0) in;
// constant_id 5: bits 0-13 the stack entries used (0: all CAP; tests make it small to exercise the
// overflow path); bit 14 (bench, wrong bytes): step 1 only, no search; bit 22 (bench): the heuristic
// without its return at error 0 (the former code; the same bytes)
layout(constant_id = 5) const uint POOL_OPT = 0;
#define BC4_ZERO_EXIT ((POOL_OPT & 4194304u) == 0u)
#include "enc_bc4.glsl"

const uint CAP_LIMIT = POOL_OPT & 16383u;
const bool NO_SEARCH = (POOL_OPT & 16384u) != 0u;
// bit 16 (the default, KILN_EBC_BC4_POOL_OPT): step 1 without dynamically indexed arrays (a sorting
// network, the distinct values written straight to shared memory, the k-means DP over the 16 sorted values
// unrolled; helper bc4max); bit 17 (bench): no spacing bound (emin = 0: valid, only weaker)
const bool S1_REGS = (POOL_OPT & 65536u) != 0u;
const bool NO_SPACING = (POOL_OPT & 131072u) != 0u;
// bit 18 (helper bc4k): with bit 16, the DP's rows 2..6 in a loop that is not unrolled (the same rows;
// unrolled they are ~600 copies of the inner step); bit 19: the cell bound takes two values an iteration
// (slot n holds a count-0 value) and divides unsigned ramps without sign fixes. Bits 16 + 18 + 19 are the
// default (H100: bc4 4096^2 max 15.32 -> 11.52 ms, see gpu_encode_bc.c)
const bool DP_ROLLED = (POOL_OPT & 262144u) != 0u;
const bool CB_TWO = (POOL_OPT & 524288u) != 0u;
// bit 20 (with bit 19): the cell bound over all 16 value slots unrolled, without the early stop (slots
// n..15 hold count-0 values): independent loads and no loop control, more work when a cell dies early
const bool CB_ALL = (POOL_OPT & 1048576u) != 0u;
// bit 21 (with bit 16): the k-means DP not unrolled at all, its prefix sums and rows in the invocation's
// 32 words of the stack (free until the root cells are pushed, after a barrier): few registers in step 1.
// (The H100's compiler gave the whole kernel 220 registers with the unrolled DP, 168 with bit 18: it keeps
// the DP's group costs, which do not depend on the row, in registers; 4 / 6 workgroups an SM.)
const bool DP_SHARED = (POOL_OPT & 2097152u) != 0u;
// bit 23 (helper bc4s; the host sets it with the pre-pass): the tasks come from the list enc_bc4.comp's
// pre-pass (MAX_LIST) wrote to binding 2 (word 0 the count, then (task, H) word pairs from word 2): those
// whose heuristic error H is above 0, packed, so the search's workgroups are full and this kernel runs no
// heuristic (fewer registers); a workgroup past the list's end returns at once. The pre-pass wrote every
// block with the heuristic's pair; only a task with a pair strictly below H is written here.
const bool FROM_LIST = (POOL_OPT & 8388608u) != 0u;
// bits 24 / 25 (with 23 and 16; helper bc4s, KILN_GPU_BC4_SPLIT=2): step 1 and the search in two kernels over
// the list, so that the search's registers are not the k-means DP's. Bit 24: step 1 only, one list entry
// per invocation, no pool: the task's record (16 words at word 2 + 2 T + 16 i, T = the channel tasks of the
// dispatch: the 16 value slots as 16-bit halves value | count << 8, emin[1..7], meta) to binding 2. Bit 25:
// the search, reading the records into shared memory instead of running step 1.
const bool S1_OUT = (POOL_OPT & 16777216u) != 0u;
const bool S1_IN = (POOL_OPT & 33554432u) != 0u;

// one task per invocation in step 1; the workgroup size (64 or 128; the task's index in a cell has 8
// bits) is the host's choice, the stack 32 entries per invocation (128: 31 KB of shared memory)
const uint WG = gl_WorkGroupSize.x;
// (bit 27, helper bc4s: 16 entries an invocation, the host's default with the list (bits 23-25); H100: faster
// than 32 or 64 there (fewer cells in breadth), while fewer entries used of 32 (KILN_GPU_BC4_POOL_CAP) were slower)
const uint CAP = gl_WorkGroupSize.x * ((POOL_OPT & 134217728u) != 0u ? 16u : 32u);
// bit 29 (helper bc4n; the host sets it where the device has shaderFloat16, with enc_bc4_max_pool_h.comp, which
// defines BC4_F16): the cell bound on two values at once in 16-bit floats over doubled coordinates: entry i's
// interval over the cell as centre C = pmin + pmax and width W = pmax - pmin, a value 2x at distance
// max(|2x - C| - W, 0) / 2 (three operations an entry for two values instead of four for one; every quantity an
// integer of at most 764 in magnitude, so exact), all 16 value slots at once (eight pairs; the slots past n hold
// count 0; helper bc4t, formerly four an iteration with an early stop), the values in s_x16, their counts in s_c16;
// and the spacing bound's quotient in floats.
const bool CB_F16 = (POOL_OPT & 536870912u) != 0u;
// bit 31 (helper bc4n; the host's default with the split): the cell's entry ranges without a branch on the mode (a
// warp holds cells of both): the eight-value ramp (a = high, b = low, / 7) and the six-value one (a = low, b = high,
// / 5) as ((k - i) a + (i - 1) b) / D, the quotients by multiplication: floor(n / 7) = n 2341 >> 14 and
// floor(n / 5) = n 3277 >> 14 for 0 <= n <= 1785 (checked over all n; SNORM: |n| and the sign)
const bool UNIF = (POOL_OPT & 2147483648u) != 0u;
// bit 30 (helper bc4t; the host's default with bit 29): the cell bounded without a branch (visit_nb: the clip's and the
// spacing bound's tests after the cell bound, so that the bound's loads do not wait for emin's; H100 2026-11-27 14:16
// UTC: bc4 4096^2 max 5.79 -> 5.39 ms alone, 4.64 with the 16 values at once of bit 29)
const bool SPC_LATE = (POOL_OPT & 1073741824u) != 0u;
#define EMPTY 0xffffffffu
#define NO_BEST 0xffffffffu

// (s_val: not with bit 29 in the search kernel (bit 25), which keeps only s_x16 + s_c16)
shared uint s_val[WG * 17u * (1u - ((POOL_OPT >> 29u) & (POOL_OPT >> 25u) & 1u)) + 1u]; // task * 17 + k: (value - R_LO) | count << 16, extremes first
shared float s_emin[WG * 9u]; // task * 9 + k: emin[k], k = 3..8; k = 1, 2: the six-value mode's for 7, 8 (six_floor)
shared uint s_meta[WG];       // n | w << 8 | (min == R_LO) << 20 | (max == R_HI) << 21
shared uint s_H[WG];
shared uint s_best[WG];       // min of (error << 17 | key), NO_BEST: none below H
#ifdef BC4_F16
shared uint s_x16[WG * 9u]; // task * 9 + j: values 2j, 2j + 1 as 16-bit floats of 2 value
shared uint s_c16[WG * 9u]; // the counts of those values, 16 bits each
#endif
#ifdef BC4_F16
uint g_x16[8], g_c16[8]; // the task being bounded: s_x16 / s_c16 in registers (load_vals), read by cell_bound
uint g_H, g_meta;         // and its s_H, s_meta (read by visit_nb)
#endif
shared uint s_stk[CAP];       // cells: task | mode << 8 | lev << 9 | r0 << 13 | c0 << 21
shared uint s_push[2];
shared uint s_walk;

uint cap_used() { return (CAP_LIMIT == 0u || CAP_LIMIT > CAP) ? CAP : CAP_LIMIT; }

// The cell [R_LO + r0, + side) x [R_LO + c0, + side) of mode (eight: high > low; six: high >= low),
// clipped to the pairs that exist; false when empty.
bool clip(bool eight, int lev, int r0, int c0, out int l1, out int l2, out int h1, out int h2)
{
    const int side = 1 << lev;
    l1 = R_LO + r0;
    l2 = min(R_LO + r0 + side - 1, R_HI);
    h1 = R_LO + c0;
    h2 = min(R_LO + c0 + side - 1, R_HI);
    if (eight) { h1 = max(h1, l1 + 1); l2 = min(l2, h2 - 1); }
    else { h1 = max(h1, l1); l2 = min(l2, h2); }
    return l1 <= l2 && h1 <= h2;
}

// s += the squared distance of value slot k of task tl to the nearest entry interval [pmin[i], pmax[i]] times its
// count (cell_bound's integer loops)
#define VALUE_COST(k) { \
    const uint pk = s_val[tl * 17u + uint(k)]; \
    const int x = int(pk & 0xffffu) + R_LO; \
    int d = max(pmin[0] - x, x - pmax[0]); \
    [[unroll]] for (int i = 1; i < 8; i++) d = min(d, max(pmin[i] - x, x - pmax[i])); \
    d = max(d, 0); \
    s += uint(d * d) * (pk >> 16u); \
}

// Lower bound (stops at lim) of the error of every pair in the clipped cell (the interval bound over
// the task's values in shared memory).
uint cell_bound(bool eight, int l1, int l2, int h1, int h2, uint tl, int n, uint lim)
{
    int pmin[8], pmax[8];
    if (UNIF) {
        const int a1 = eight ? h1 : l1, a2 = eight ? h2 : l2, b1 = eight ? l1 : h1, b2 = eight ? l2 : h2;
        const int k0 = eight ? 8 : 6;
        const uint M = eight ? 2341u : 3277u;
        pmin[0] = a1; pmax[0] = a2;
        pmin[1] = b1; pmax[1] = b2;
        [[unroll]] for (int i = 2; i < 8; i++) {
            const int ca = k0 - i, cb = i - 1;
            const int n1 = ca * a1 + cb * b1, n2 = ca * a2 + cb * b2;
            int q1, q2;
            if (SIGNED_CH) {
                q1 = int((uint(abs(n1)) * M) >> 14u);
                q2 = int((uint(abs(n2)) * M) >> 14u);
                q1 = n1 < 0 ? -q1 : q1;
                q2 = n2 < 0 ? -q2 : q2;
            } else {
                q1 = int((uint(n1) * M) >> 14u);
                q2 = int((uint(n2) * M) >> 14u);
            }
            if (i >= 6) { // six values: the range's extremes
                q1 = eight ? q1 : (i == 6 ? R_LO : R_HI);
                q2 = eight ? q2 : (i == 6 ? R_LO : R_HI);
            }
            pmin[i] = q1;
            pmax[i] = q2;
        }
    } else if (eight) {
        pmin[0] = h1; pmax[0] = h2;
        pmin[1] = l1; pmax[1] = l2;
        [[unroll]] for (int i = 2; i < 8; i++) {
            if (CB_TWO && !SIGNED_CH) { // non-negative numerators: C's division is the unsigned one
                pmin[i] = int(uint((8 - i) * h1 + (i - 1) * l1) / 7u);
                pmax[i] = int(uint((8 - i) * h2 + (i - 1) * l2) / 7u);
            } else {
                pmin[i] = tdiv((8 - i) * h1 + (i - 1) * l1, 7);
                pmax[i] = tdiv((8 - i) * h2 + (i - 1) * l2, 7);
            }
        }
    } else {
        pmin[0] = l1; pmax[0] = l2;
        pmin[1] = h1; pmax[1] = h2;
        [[unroll]] for (int i = 2; i < 6; i++) {
            if (CB_TWO && !SIGNED_CH) {
                pmin[i] = int(uint((6 - i) * l1 + (i - 1) * h1) / 5u);
                pmax[i] = int(uint((6 - i) * l2 + (i - 1) * h2) / 5u);
            } else {
                pmin[i] = tdiv((6 - i) * l1 + (i - 1) * h1, 5);
                pmax[i] = tdiv((6 - i) * l2 + (i - 1) * h2, 5);
            }
        }
        pmin[6] = R_LO; pmax[6] = R_LO;
        pmin[7] = R_HI; pmax[7] = R_HI;
    }
#ifdef BC4_F16
    if (CB_F16) {
        // (an integer j of -512 .. 511 is the 16-bit float 1536 + j, bits 0x6400 + 512 + j, minus 1536; the doubled
        // distance m (even, 0 .. 510) back to an integer as the low bits of 1024 + m; the sum of m^2 count, 4 times
        // the error, in integers)
        f16vec2 C2[8], W2[8];
        [[unroll]] for (int i = 0; i < 8; i++) {
            C2[i] = unpackFloat2x16(uint(0x6400 + 512 + pmin[i] + pmax[i]) * 0x10001u) - f16vec2(1536.0hf);
            W2[i] = unpackFloat2x16(uint(0x6400 + 512 + pmax[i] - pmin[i]) * 0x10001u) - f16vec2(1536.0hf);
        }
        // all 16 value slots at once (helper bc4t; the slots past n hold count 0): no early stop and no loop, so the
        // values' loads wait only for the task's index, and eight independent chains (H100 2026-11-27 14:16 UTC, with
        // bit 30: bc4 4096^2 max 5.79 -> 4.64 ms; eight values an iteration 5.02, the entries' min as a tree or
        // (C, W) in one register: no gain)
        uint part[8];
        [[unroll]] for (uint h = 0u; h < 8u; h++) {
            const f16vec2 X = unpackFloat2x16(g_x16[h]);
            f16vec2 m = abs(X - C2[0]) - W2[0];
            [[unroll]] for (int i = 1; i < 8; i++) m = min(m, abs(X - C2[i]) - W2[i]);
            const uint mb = packFloat2x16(max(m, f16vec2(0.0hf)) + f16vec2(1024.0hf));
            const uint m0 = mb & 1023u, m1 = (mb >> 16u) & 1023u, cw = g_c16[h];
            part[h] = m0 * m0 * (cw & 65535u) + m1 * m1 * (cw >> 16u);
        }
        const uint s4 = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
        return s4 >> 2u;
    }
#endif
    uint s = 0u;
    if (CB_TWO && CB_ALL) {
        [[unroll]] for (int k = 0; k < 16; k++) VALUE_COST(k)
        return s;
    }
    if (CB_TWO) {
        for (int k = 0; k < n && s < lim; k += 2) {
            const uint pk0 = s_val[tl * 17u + uint(k)], pk1 = s_val[tl * 17u + uint(k) + 1u];
            const int x0 = int(pk0 & 0xffffu) + R_LO, x1 = int(pk1 & 0xffffu) + R_LO;
            int d0 = max(pmin[0] - x0, x0 - pmax[0]), d1 = max(pmin[0] - x1, x1 - pmax[0]);
            [[unroll]] for (int i = 1; i < 8; i++) {
                d0 = min(d0, max(pmin[i] - x0, x0 - pmax[i]));
                d1 = min(d1, max(pmin[i] - x1, x1 - pmax[i]));
            }
            d0 = max(d0, 0);
            d1 = max(d1, 0);
            s += uint(d0 * d0) * (pk0 >> 16u) + uint(d1 * d1) * (pk1 >> 16u);
        }
        return s;
    }
    for (int k = 0; k < n && s < lim; k++) VALUE_COST(k)
    return s;
}

// The spacing bound's slot of s_emin for a cell of the mode whose smallest span gives g (g <= 0: none) and at most
// lv >= 3 serving levels: emin[min(lv, 8)] (emin[8] = 0 never prunes); the six-value mode reads slots 1, 2 for 7, 8,
// which also hold its floor f6 (six_floor; slots 1, 2 are free: lv >= 3)
uint spc_slot(bool eight, int g, int lv)
{
    const uint k = g > 0 ? uint(min(lv, 8)) : 8u;
    return !eight && k >= 7u ? k - 6u : k;
}

// The six-value mode's floor (helper bc4): its palette is six ramp entries and the fixed R_LO, R_HI. A pair whose
// texels all take ramp entries has at most six levels, so an error >= emin[6]; one whose texel x takes R_LO or R_HI
// pays at least (x - R_LO)^2 or (R_HI - x)^2, so at least D = min(mn - R_LO, R_HI - mx)^2 (mn, mx: the least and
// largest value). f6 = min(emin[6], D) bounds every six-value pair's error; slots 1 and 2 (levels 7 and 8 of the
// six-value spacing bound, and the cells without it) hold max(emin[7], f6) and f6. u0, u1: the largest and least
// value minus R_LO. (Bench image 4096^2, simulator: 440 -> 409 cells a task for bc4, 495 -> 452 for bc5's second
// channel; the whole six-value tree is cut at its root for 29 % of the tasks.)
void six_floor(uint tl, uint u0, uint u1)
{
    const int d = min(int(u1), (R_HI - R_LO) - int(u0));
    const float f6 = min(s_emin[tl * 9u + 6u], float(d * d));
    s_emin[tl * 9u + 1u] = max(s_emin[tl * 9u + 7u], f6);
    s_emin[tl * 9u + 2u] = f6;
}

// Bit 30 (helper bc4t): the cell (mode, lev, r0, c0) of task tl bounded without a branch (the clip's test and
// the spacing bound's after the cell bound, so that the bound's loads wait only for the task's index; an empty cell
// is bounded and dropped; emin[8] = 0 never prunes). True: the cell survives and has quarters to visit; leafw: a
// surviving one-pair cell's (error << 17 | key) for the task's best, else NO_BEST.
bool visit_nb(uint tl, int mode, int lev, int r0, int c0, out uint leafw)
{
    const bool eight = mode == 0;
    int l1, l2, h1, h2;
    const bool ok = clip(eight, lev, r0, c0, l1, l2, h1, h2);
#ifdef BC4_F16
    const uint lim = min(g_H, (s_best[tl] >> 17u) + 1u);
    const uint meta = g_meta;
#else
    const uint lim = min(s_H[tl], (s_best[tl] >> 17u) + 1u);
    const uint meta = s_meta[tl];
#endif
    // (g by multiplication, floor(n / 7) = n 2341 >> 14, floor(n / 5) = n 3277 >> 14 for 0 <= n <= 1785 (as
    // cell_bound's bit 31); a negative span difference gives 0 where C gives g <= 0: the same tests below)
    const int g = int((uint(max(h1 - l2, 0)) * (eight ? 2341u : 3277u)) >> 14u);
    const int w = int((meta >> 8u) & 511u);
    const int extra = 3 + (eight ? 0 : int((meta >> 20u) & 1u) + int((meta >> 21u) & 1u));
    const int lv = int((float(w) + 0.5) * (1.0 / float(max(g, 1)))) + extra;
    const bool spc = s_emin[tl * 9u + spc_slot(eight, g, lv)] > float(lim - 1u);
    const uint bnd = cell_bound(eight, l1, l2, h1, h2, tl, int(meta & 255u), lim);
    const bool live = ok && !spc && bnd < lim, one = l1 == l2 && h1 == h2;
    const uint key = (uint(mode) << 16u) | (uint(l1 - R_LO) << 8u) | uint(h1 - R_LO);
    leafw = live && one ? (bnd << 17u) | key : NO_BEST;
    return live && !one;
}

// Bit 29: task tl's value slots into g_x16 / g_c16, its H and meta into g_H, g_meta, once for the quarters of a
// popped cell instead of once a bound (H100 2026-11-27 22:07 UTC, bc4 4096^2 max: the quarters in a loop 3.70 ms,
// + the slots in registers and visit_nb's g by multiplication 3.54, + the quarters unrolled 3.29; main 4.37)
void load_vals(uint tl)
{
#ifdef BC4_F16
    [[unroll]] for (uint h = 0u; h < 8u; h++) {
        g_x16[h] = s_x16[tl * 9u + h];
        g_c16[h] = s_c16[tl * 9u + h];
    }
    g_H = s_H[tl];
    g_meta = s_meta[tl];
#endif
}

// Bounds the cell (mode, lev, r0, c0) of task tl; a surviving one-pair cell is folded into the task's
// best. True: the cell survives and has quarters to visit.
bool visit(uint tl, int mode, int lev, int r0, int c0)
{
    if (SPC_LATE) {
        uint leafw;
        const bool d = visit_nb(tl, mode, lev, r0, c0, leafw);
        if (leafw != NO_BEST) atomicMin(s_best[tl], leafw);
        return d;
    }
    const bool eight = mode == 0;
    int l1, l2, h1, h2;
    if (!clip(eight, lev, r0, c0, l1, l2, h1, h2)) return false;
    const uint bst = s_best[tl];
    const uint lim = min(s_H[tl], (bst >> 17u) + 1u);
    const uint meta = s_meta[tl];
    const int n = int(meta & 255u);
    // spacing bound with the cell's smallest span (bc4_enc.c)
    const int g = (h1 - l2) / (eight ? 7 : 5);
    if (g > 0) {
        const int w = int((meta >> 8u) & 511u);
        const int extra = 3 + (eight ? 0 : int((meta >> 20u) & 1u) + int((meta >> 21u) & 1u));
        // (bit 29: the quotient in floats, exact: (w + 1/2) / g is at least 1 / (2 g) from an integer)
        const int lv = (CB_F16 ? int((float(w) + 0.5) * (1.0 / float(g))) : w / g) + extra;
        if (s_emin[tl * 9u + spc_slot(eight, g, lv)] > float(lim - 1u)) return false;
    } else if (!eight && s_emin[tl * 9u + 2u] > float(lim - 1u)) {
        return false;
    }
    const uint bnd = cell_bound(eight, l1, l2, h1, h2, tl, n, lim);
    if (bnd >= lim) return false;
    if (l1 == l2 && h1 == h2) { // one pair: bnd is its error
        const uint key = (uint(mode) << 16u) | (uint(l1 - R_LO) << 8u) | uint(h1 - R_LO);
        atomicMin(s_best[tl], (bnd << 17u) | key);
        return false;
    }
    return true;
}

// Step 1 of a task with H > 0 from its 16 values, without dynamically indexed arrays (every index a
// constant once the loops are unrolled): the values sorted by Batcher's odd-even merge network (63
// compare-exchanges), the distinct values and their counts written straight to s_val in the evaluation
// order, and the k-means bounds emin[1..7] by the DP of step 1 run over the 16 sorted values with their
// repeats (a partition may then split equal values, which gives no cost below the optimum, and the
// optimum itself, a partition into runs of the sorted distinct values, is among them: the same minimum);
// the last row (7 levels) only for all 16 values. The group cost of values [i, j) is
// (c * sum x^2 - (sum x)^2) / c with c = j - i a constant: an exact integer (< 2^24, so exact as a float)
// times the float reciprocal of c; a few roundings of relative size 2^-24, well inside the 2^-12 the
// bounds give away (emin x (1 - 1/4096)). Any valid lower bounds keep the result exact: the bounds only
// decide which cells are skipped, never which pair wins.
#define CE(a, b) { const int lo_ = min(s[a], s[b]); s[b] = max(s[a], s[b]); s[a] = lo_; }
void step1_regs(int v[16], uint lid)
{
    int s[16];
    [[unroll]] for (int t = 0; t < 16; t++) s[t] = v[t];
    CE(0, 1) CE(2, 3) CE(4, 5) CE(6, 7) CE(8, 9) CE(10, 11) CE(12, 13) CE(14, 15) CE(0, 2) CE(1, 3)
    CE(4, 6) CE(5, 7) CE(8, 10) CE(9, 11) CE(12, 14) CE(13, 15) CE(1, 2) CE(5, 6) CE(9, 10) CE(13, 14)
    CE(0, 4) CE(1, 5) CE(2, 6) CE(3, 7) CE(8, 12) CE(9, 13) CE(10, 14) CE(11, 15) CE(2, 4) CE(3, 5)
    CE(10, 12) CE(11, 13) CE(1, 2) CE(3, 4) CE(5, 6) CE(9, 10) CE(11, 12) CE(13, 14) CE(0, 8) CE(1, 9)
    CE(2, 10) CE(3, 11) CE(4, 12) CE(5, 13) CE(6, 14) CE(7, 15) CE(4, 8) CE(5, 9) CE(6, 10) CE(7, 11)
    CE(2, 4) CE(3, 5) CE(6, 8) CE(7, 9) CE(10, 12) CE(11, 13) CE(1, 2) CE(3, 4) CE(5, 6) CE(7, 8)
    CE(9, 10) CE(11, 12) CE(13, 14)
    int n = 1;
    [[unroll]] for (int i = 1; i < 16; i++) n += s[i] != s[i - 1] ? 1 : 0;
    // distinct value j (ascending) goes to evaluation slot 2 (n - 1 - j) (the upper half: max first)
    // or 2 j + 1 (the lower half), i.e. max, min, then alternately inwards
    {
        int j = n, next = 16;
        [[unroll]] for (int i = 15; i >= 0; i--) {
            if (i == 0 || s[i] != s[i - 1]) {
                j--;
                const int k = j >= (n >> 1) ? 2 * (n - 1 - j) : 2 * j + 1;
                s_val[lid * 17u + uint(k)] = uint(s[i] - R_LO) | (uint(next - i) << 16u);
                next = i;
            }
        }
    }
    for (int k = n; k < (CB_ALL ? 16 : min(n + 1, 16)); k++) s_val[lid * 17u + uint(k)] = 0u; // count 0 (bits 19, 20)
    const int w = s[15] - s[0] + (SIGNED_CH ? 1 : 0);
    s_meta[lid] = uint(n) | (uint(w) << 8u) | (s[0] == R_LO ? 1u << 20u : 0u) | (s[15] == R_HI ? 1u << 21u : 0u);
    float emin[8];
    [[unroll]] for (int k = 0; k < 8; k++) emin[k] = 0.0;
    if (!NO_SPACING) {
        if (DP_SHARED) {
            // word j - 1 of the invocation's 32: P[j] | Q[j] << 12 of the values minus R_LO (the group
            // costs do not change with a shift: the same exact integers; P < 4096, Q < 2^20); word
            // 16 + j - 1: E[j] of the current row. Rows 2..6 whole, row 7 at j = 16.
            const uint sb = lid * 32u;
            {
                int pp = 0, qq = 0;
                [[unroll]] for (int i = 0; i < 16; i++) {
                    const int u = s[i] - R_LO;
                    pp += u;
                    qq += u * u;
                    s_stk[sb + uint(i)] = uint(pp) | (uint(qq) << 12u);
                    s_stk[sb + 16u + uint(i)] = floatBitsToUint(float((i + 1) * qq - pp * pp) * (1.0 / float(i + 1)));
                }
            }
            const float emin1 = uintBitsToFloat(s_stk[sb + 31u]); // row 1 at j = 16
            [[dont_unroll]] for (int k = 2; k <= 7; k++) {
                const int jlo = k == 7 ? 16 : 2;
                [[dont_unroll]] for (int j = 16; j >= jlo; j--) {
                    const uint pqj = s_stk[sb + uint(j - 1)];
                    const int pj = int(pqj & 4095u), qj = int(pqj >> 12u);
                    float b = uintBitsToFloat(s_stk[sb + 16u + uint(j - 1)]);
                    [[dont_unroll]] for (int i = 1; i < j; i++) {
                        const uint pqi = s_stk[sb + uint(i - 1)];
                        const int ds = pj - int(pqi & 4095u), dq = qj - int(pqi >> 12u);
                        b = min(b, uintBitsToFloat(s_stk[sb + 16u + uint(i - 1)]) + float((j - i) * dq - ds * ds) / float(j - i));
                    }
                    s_stk[sb + 16u + uint(j - 1)] = floatBitsToUint(b);
                }
                s_emin[lid * 9u + uint(k)] = uintBitsToFloat(s_stk[sb + 31u]) * (1.0 - 1.0 / 4096.0);
            }
            s_emin[lid * 9u + 1u] = emin1 * (1.0 - 1.0 / 4096.0);
            s_emin[lid * 9u + 8u] = 0.0;
            return;
        }
        int P[17], Q[17];
        P[0] = 0;
        Q[0] = 0;
        [[unroll]] for (int i = 0; i < 16; i++) {
            P[i + 1] = P[i] + s[i];
            Q[i + 1] = Q[i] + s[i] * s[i];
        }
        float E[17]; // row k - 1: E[j] the least error of k - 1 levels over the first j sorted values
        E[0] = 0.0;
        [[unroll]] for (int j = 1; j <= 16; j++) E[j] = float(j * Q[j] - P[j] * P[j]) * (1.0 / float(j));
        emin[1] = E[16];
        if (DP_ROLLED) {
            // rows 2..6 in a loop (rolled: one copy of the row's code), row 7 at j = 16 after it; the
            // same operations as below, emin[2..7] straight to shared memory
            [[dont_unroll]] for (int k = 2; k <= 6; k++) {
                [[unroll]] for (int j = 16; j >= 2; j--) {
                    float b = E[j];
                    [[unroll]] for (int i = 1; i < j; i++) {
                        const int dq = Q[j] - Q[i], ds = P[j] - P[i];
                        b = min(b, E[i] + float((j - i) * dq - ds * ds) * (1.0 / float(j - i)));
                    }
                    E[j] = b;
                }
                s_emin[lid * 9u + uint(k)] = E[16] * (1.0 - 1.0 / 4096.0);
            }
            float b7 = E[16];
            [[unroll]] for (int i = 1; i < 16; i++) {
                const int dq = Q[16] - Q[i], ds = P[16] - P[i];
                b7 = min(b7, E[i] + float((16 - i) * dq - ds * ds) * (1.0 / float(16 - i)));
            }
            s_emin[lid * 9u + 1u] = emin[1] * (1.0 - 1.0 / 4096.0);
            s_emin[lid * 9u + 7u] = b7 * (1.0 - 1.0 / 4096.0);
            s_emin[lid * 9u + 8u] = 0.0;
            return;
        }
        [[unroll]] for (int k = 2; k <= 7; k++) {
            // rows 2..6 whole (row k + 1 reads every column of row k), row 7 only at j = 16
            [[unroll]] for (int j = 16; j >= 2; j--) {
                if (k == 7 && j != 16) continue;
                float b = E[j];
                [[unroll]] for (int i = 1; i < j; i++) {
                    const int dq = Q[j] - Q[i], ds = P[j] - P[i];
                    b = min(b, E[i] + float((j - i) * dq - ds * ds) * (1.0 / float(j - i)));
                }
                E[j] = b; // descending j: E[i < j] still hold row k - 1
            }
            emin[k] = E[16];
        }
        [[unroll]] for (int k = 1; k < 8; k++) emin[k] *= 1.0 - 1.0 / 4096.0;
    }
    [[unroll]] for (int k = 1; k < 8; k++) s_emin[lid * 9u + uint(k)] = emin[k];
    s_emin[lid * 9u + 8u] = 0.0;
}

// Bit 25: slot lid's task from its step-1 record at word rec of binding 2 (the value slots, emin[1..7], meta).
void load_slot(uint lid, uint rec)
{
    if (!CB_F16) [[unroll]] for (uint k = 0u; k < 8u; k++) {
        const uint w = fb.words[rec + k];
        s_val[lid * 17u + 2u * k] = (w & 255u) | (((w >> 8u) & 255u) << 16u);
        s_val[lid * 17u + 2u * k + 1u] = ((w >> 16u) & 255u) | ((w >> 24u) << 16u);
    }
    [[unroll]] for (uint k = 1u; k < 8u; k++) s_emin[lid * 9u + k] = uintBitsToFloat(fb.words[rec + 7u + k]);
    s_emin[lid * 9u + 8u] = 0.0;
    s_meta[lid] = fb.words[rec + 15u];
#ifdef BC4_F16
    if (CB_F16) { // bit 29: value slots 2 j, 2 j + 1 as 16-bit floats of twice the value, their counts
        [[unroll]] for (uint j = 0u; j < 8u; j++) {
            const uint w = fb.words[rec + j];
            const vec2 x2 = vec2(float(2 * (int(w & 255u) + R_LO)), float(2 * (int((w >> 16u) & 255u) + R_LO)));
            s_x16[lid * 9u + j] = packFloat2x16(f16vec2(x2));
            s_c16[lid * 9u + j] = ((w >> 8u) & 255u) | ((w >> 24u) << 16u);
        }
    }
#endif
    const uint w0 = fb.words[rec];
    six_floor(lid, w0 & 255u, (w0 >> 16u) & 255u);
}

uint cell_item(uint tl, int mode, int lev, int r0, int c0)
{
    return tl | (uint(mode) << 8u) | (uint(lev) << 9u) | (uint(r0) << 13u) | (uint(c0) << 21u);
}

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    uint task = group_linear() * WG + lid;
    const uint nblocks = pc.blocks_x * pc.blocks_y;
    bool valid = task < nblocks * TASK_CHANNELS;
    uint H = 0u;
    int ha = 0, hb = 0;
    if (FROM_LIST) {
        const uint cnt = fb.words[0], first = group_linear() * WG;
        if (first >= cnt) return; // the same in every invocation of the workgroup
        valid = first + lid < cnt;
        if (valid) {
            task = fb.words[2u + 2u * (first + lid)];
            H = fb.words[3u + 2u * (first + lid)];
        }
    }
    const uint b = task / TASK_CHANNELS, ch = task % TASK_CHANNELS;
    const uint rec = 2u + 2u * nblocks * TASK_CHANNELS + 16u * (group_linear() * WG + lid); // bits 24 / 25
    if (S1_OUT) { // no barriers: each invocation its own task (the list ends within the workgroup: returns)
        if (!valid) return;
        int v[16];
        for (uint t = 0u; t < 16u; t++) v[t] = bc4_value(b, t, ch);
        step1_regs(v, lid);
        const uint meta = s_meta[lid], n = meta & 255u;
        [[unroll]] for (uint k = 0u; k < 8u; k++) {
            const uint p0 = 2u * k < n ? s_val[lid * 17u + 2u * k] : 0u;
            const uint p1 = 2u * k + 1u < n ? s_val[lid * 17u + 2u * k + 1u] : 0u;
            fb.words[rec + k] = (p0 & 255u) | ((p0 >> 16u) << 8u) | ((p1 & 255u) << 16u) | ((p1 >> 16u) << 24u);
        }
        [[unroll]] for (uint k = 1u; k < 8u; k++) fb.words[rec + 7u + k] = floatBitsToUint(s_emin[lid * 9u + k]);
        fb.words[rec + 15u] = meta;
        return;
    }
    if (valid && S1_IN) {
        load_slot(lid, rec);
    } else if (valid) {
        int v[16];
        for (uint t = 0u; t < 16u; t++) v[t] = bc4_value(b, t, ch);
        if (!FROM_LIST) {
            Best h = heuristic(v, Q_HIGH);
            H = h.err;
            ha = h.a;
            hb = h.b;
        }
        if (H > 0u && S1_REGS) {
            step1_regs(v, lid);
        } else if (H > 0u) {
            int s[16];
            for (int t = 0; t < 16; t++) s[t] = v[t];
            for (int i = 1; i < 16; i++) {
                int x = s[i], j = i - 1;
                while (j >= 0 && s[j] > x) { s[j + 1] = s[j]; j--; }
                s[j + 1] = x;
            }
            int dv[16], dc[16];
            int n = 0;
            for (int i = 0; i < 16; i++) {
                if (n > 0 && dv[n - 1] == s[i]) dc[n - 1]++;
                else { dv[n] = s[i]; dc[n] = 1; n++; }
            }
            // evaluation order: max, min, then alternately inwards
            for (int k = 0; k < n; k++) {
                int j = (k & 1) == 0 ? n - 1 - (k >> 1) : (k >> 1);
                s_val[lid * 17u + uint(k)] = uint(dv[j] - R_LO) | (uint(dc[j]) << 16u);
            }
            for (int k = n; k < (CB_ALL ? 16 : min(n + 1, 16)); k++) s_val[lid * 17u + uint(k)] = 0u; // count 0 (bits 19, 20)
            // k-means spacing bounds (the former enc_bc4_max.comp's)
            float emin[9];
            {
                int pcn[17], psum[17], psq[17];
                pcn[0] = 0; psum[0] = 0; psq[0] = 0;
                for (int i = 0; i < n; i++) {
                    pcn[i + 1] = pcn[i] + dc[i];
                    psum[i + 1] = psum[i] + dc[i] * dv[i];
                    psq[i + 1] = psq[i] + dc[i] * dv[i] * dv[i];
                }
                // E[k][j]: the smallest error of k + 1 levels for the first j values. The group cost of
                // values (i, j] is computed once and serves every k (the same sums, and min is exact, so
                // the same emin as k-by-k passes (the former enc_bc4_max.comp), checked in C on 2e6 blocks); the
                // spacing bound reads emin[3..7] only, so no 8-level row.
                float E[7][17];
                for (int j = 1; j <= n; j++) {
                    const int cj = pcn[j], sj = psum[j], qj = psq[j];
                    float acc[7];
                    acc[0] = float(cj * qj - sj * sj) / float(cj);
                    [[unroll]] for (int k = 1; k < 7; k++) acc[k] = F_INF;
                    for (int i = 1; i < j; i++) {
                        const int c = cj - pcn[i], sx = sj - psum[i];
                        const float g = float(c * (qj - psq[i]) - sx * sx) / float(c);
                        [[unroll]] for (int k = 1; k < 7; k++) {
                            precise float cst = E[k - 1][i] + g;
                            acc[k] = min(acc[k], cst);
                        }
                    }
                    [[unroll]] for (int k = 1; k < 7; k++) acc[k] = min(acc[k], acc[k - 1]);
                    [[unroll]] for (int k = 0; k < 7; k++) E[k][j] = acc[k];
                }
                emin[0] = F_INF;
                [[unroll]] for (int k = 1; k <= 7; k++) emin[k] = E[k - 1][n];
                emin[8] = 0.0; // (a valid bound; not read)
                for (int k = 1; k <= 8; k++) emin[k] *= 1.0 - 1.0 / 4096.0;
            }
            for (int k = 1; k <= 8; k++) s_emin[lid * 9u + uint(k)] = emin[k];
            const int w = dv[n - 1] - dv[0] + (SIGNED_CH ? 1 : 0);
            s_meta[lid] = uint(n) | (uint(w) << 8u) | (dv[0] == R_LO ? 1u << 20u : 0u) | (dv[n - 1] == R_HI ? 1u << 21u : 0u);
        }
    }
    if (DP_SHARED && S1_REGS && !NO_SPACING) { // step 1's scratch in s_stk: everyone done before the pushes
        memoryBarrierShared();
        barrier();
    }
#ifdef BC4_F16
    if (CB_F16 && !S1_IN && valid && H > 0u) { // bit 29: slot k's value and count from s_val (bit 25: load_slot)
        [[unroll]] for (uint j = 0u; j < 8u; j++) {
            vec2 x2;
            uint cw = 0u;
            [[unroll]] for (uint h = 0u; h < 2u; h++) {
                const uint k = 2u * j + h;
                const uint pk = k < (s_meta[lid] & 255u) ? s_val[lid * 17u + k] : 0u; // (slots from n on: count 0)
                const int val = int(pk & 0xffffu) + R_LO;
                const uint cnt = pk >> 16u;
                x2[h] = float(2 * val);
                cw |= cnt << (16u * h);
            }
            s_x16[lid * 9u + j] = packFloat2x16(f16vec2(x2));
            s_c16[lid * 9u + j] = cw;
        }
    }
#endif
    if (!S1_IN && valid && H > 0u) six_floor(lid, s_val[lid * 17u] & 0xffffu, s_val[lid * 17u + 1u] & 0xffffu);
    s_H[lid] = H;
    s_best[lid] = NO_BEST;
    // the roots bounded here: the stack holds cells that survived their bound (each pop bounds its quarters)
    const bool root = H > 0u && !NO_SEARCH;
    if (root) load_vals(lid);
    s_stk[2u * lid] = root && visit(lid, 0, 8, 0, 0) ? cell_item(lid, 0, 8, 0, 0) : EMPTY;
    s_stk[2u * lid + 1u] = root && visit(lid, 1, 8, 0, 0) ? cell_item(lid, 1, 8, 0, 0) : EMPTY;

    // the rounds: t cells on the stack (the same value in every invocation), pushes of round r counted
    // in s_push[r & 1] (reset by invocation 0 in round r, read by everyone in round r + 1). Without room
    // for every invocation's four quarters an invocation walks its cell's subtree itself, one cell a
    // round (the walk's cursor: wlev, wr, wc under the root at level wlev0); a walking invocation puts
    // back the cell it popped. s_walk counts the walking invocations.
    const uint capl = cap_used();
    uint t = NO_SEARCH ? 0u : 2u * WG, base = 0u;
    bool walking = false;
    uint wtl = 0u;
    int wmode = 0, wlev0 = 0, wlev = 0, wr = 0, wc = 0;
    if (lid == 0u) s_walk = 0u;
    for (uint r = 0u;; r++) {
        memoryBarrierShared();
        barrier();
        if (r > 0u) t = base + s_push[(r - 1u) & 1u];
        if (t == 0u && s_walk == 0u) break;
        const uint take = min(t, WG);
        base = t - take;
        if (lid == 0u) s_push[r & 1u] = 0u;
        const uint item = lid < take ? s_stk[t - 1u - lid] : EMPTY;
        memoryBarrierShared();
        barrier();
        // (pushes: at most 4 per invocation with room, else only the walkers' cells put back, <= take)
        const bool room = base + 4u * WG <= capl;
        if (walking && item != EMPTY) s_stk[base + atomicAdd(s_push[r & 1u], 1u)] = item;
        if (walking) {
            load_vals(wtl);
            if (visit(wtl, wmode, wlev, wr, wc)) { wlev--; continue; } // first quarter: the same corner
            for (;;) { // the next quarter of the parent (order (r, c) = 00, 01, 10, 11), else up
                if (wlev == wlev0) { walking = false; break; }
                const int sd = 1 << wlev;
                const bool rb = (wr & sd) != 0, cb = (wc & sd) != 0;
                if (!cb) { wc += sd; break; }
                if (!rb) { wc -= sd; wr += sd; break; }
                wr -= sd;
                wc -= sd;
                wlev++;
            }
            if (!walking) atomicAdd(s_walk, 0xffffffffu);
            continue;
        }
        if (item == EMPTY) continue;
        const uint tl = item & 255u;
        const int mode = int((item >> 8u) & 1u), lev = int((item >> 9u) & 15u);
        const int r0 = int((item >> 13u) & 255u), c0 = int((item >> 21u) & 255u);
        if (!room) { // walk the subtree from its first quarter on
            walking = true;
            wtl = tl;
            wmode = mode;
            wlev0 = lev;
            wlev = lev - 1;
            wr = r0;
            wc = c0;
            atomicAdd(s_walk, 1u);
            continue;
        }
        // the popped cell survived its bound: bound its quarters here (one pop's overhead for up to four bounds;
        // a one-pair quarter is folded into the best by visit) and push those that survive; unrolled: four
        // independent bound chains (H100: 3.29 ms vs 3.54 in a loop, 103 registers vs 91)
        const int sd = 1 << (lev - 1);
        uint mask = 0u;
        load_vals(tl);
        [[unroll]] for (int q = 0; q < 4; q++) {
            const int rr = r0 + ((q & 2) != 0 ? sd : 0), cc = c0 + ((q & 1) != 0 ? sd : 0);
            if (visit(tl, mode, lev - 1, rr, cc)) mask |= 1u << uint(q);
        }
        if (mask == 0u) continue;
        uint p = base + atomicAdd(s_push[r & 1u], uint(bitCount(mask)));
        [[unroll]] for (int q = 0; q < 4; q++) {
            if ((mask & (1u << uint(q))) == 0u) continue;
            const int rr = r0 + ((q & 2) != 0 ? sd : 0), cc = c0 + ((q & 1) != 0 ? sd : 0);
            s_stk[p++] = cell_item(tl, mode, lev - 1, rr, cc);
        }
    }
    if (!valid) return;
    int a = ha, bb = hb;
    const uint bk = s_best[lid];
    if (FROM_LIST && bk == NO_BEST) return; // the pre-pass's block stands
    if (bk != NO_BEST) { // a pair strictly below H
        const int lo = int((bk >> 8u) & 255u) + R_LO, hi = int(bk & 255u) + R_LO;
        if (((bk >> 16u) & 1u) == 0u) { a = hi; bb = lo; }
        else { a = lo; bb = hi; }
    }
    int v[16];
    for (uint tt = 0u; tt < 16u; tt++) v[tt] = bc4_value(b, tt, ch);
    uvec2 wd = bc4_pack(v, a, bb);
    uint o = bc4_out_word(b, ch);
    dst.words[o] = wd.x;
    dst.words[o + 1u] = wd.y;
}

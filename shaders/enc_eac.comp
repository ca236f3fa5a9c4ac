#version 450
#extension GL_EXT_control_flow_attributes : require
// enc_eac.comp - kiln's EAC encoder (R11 / RG11 unsigned and signed, ETC2 RGBA alpha): the output is
// bit-identical to src/codec/eac_enc.c at the same quality, tie-breaking included.
//
// What the CPU encoder returns (eac_enc.c): first a range estimate (per table, in table order, the
// estimated multiplier +-1 with the centred base (normal, high, max) or the estimated multiplier
// with the centred base +-1 (fast)) keeps its first strict minimum; then (normal and above) an exact
// search over multipliers (outer), tables, bases (inner) replaces it only on a strictly smaller
// error. So the result is the estimate when its error equals the optimum of the searched set S, else
// the first (m, t, b) of S in that order with the optimal error.
//
// Design: 4 jobs per workgroup of 64, 16 lanes per job. The prelude: the targets sorted by rank through
// shared memory, lb0 (below), the prefix sums of the spacing bound, the range estimate (lane = table) in
// exact integer arithmetic (see the flags in enc_etc_eac.glsl for the one case where the CPU's doubles can
// round either way), the spacing bound's k-means DP (only where a job of the workgroup searches). The exact
// search: the job's (table, multiplier) units go to its 16 lanes from a shared counter (the next unit to
// whichever lane is free); a unit is skipped by the gap bound (pairs of targets against the table's smallest
// gap between levels) or the spacing bound, else its candidate bases are taken 32 at a time as a bit mask over
// one window per distinct target (the smallest, the largest, then the others middle-out): a target of
// multiplicity c >= 2 (and each extreme) needs some level within sqrt(bound / c), and of the single targets
// at most one may be farther than sqrt(bound / 2) from every level (two such pixels alone exceed the bound);
// within the hull of the extremes' windows. The windows are kept in base units (per bound, in shared memory)
// so that a level's bits are one shift of the window's run of ones (wmask). Only the mask's bases are
// evaluated (increasing base; the nearest level by three midpoint tests), the evaluation stops once the error
// exceeds the bound (tested every second pixel). Every rule is exact AND keeps ties. The lanes' (error, (m, t, b)) minima are reduced in shared memory, and the block's
// indices are chosen one pixel per lane.
// Ties (issue #4): keeping ties makes flat and near-flat channels expensive (alpha 255 everywhere: hundreds
// of (m, t, b) reach error 0, and the estimate finds none since its centred base overflows 255). Exact
// cuts: no level set beats lb0 = the sum over the targets of the squared distance to the nearest
// representable value (11-bit kinds: targets fall between integer levels), so a candidate with error lb0 is
// optimal: no search after an estimate at lb0, and the smallest key found with error lb0 (shared per job)
// removes every larger key; past a lane's own best key only a strictly smaller error can win (the bound
// drops to tb - 1).
// History (H100 4096^2, R11 max): lane = table with two window conditions 77.4 ms; + POOL, LB and the spacing
// bound once per job 62.3 (helper eacm); + masks over 8 windows, rank sort, lazy DP, the DP's reciprocals,
// the level counts from per-table spans 42.4 (helper eacn, 2026-11-27); the earlier variants (the CPU's five
// conditions, lane = table, the window union) were removed by helper eacp, whose 16 windows at sqrt(bound / 2)
// with one miss, per-job windows in base units (one shift per level), the pairwise exit test, the parallel lb0 and
// block write, 32-bit divisions in the estimate and 32-bit alpha errors took it to 27.5-27.9 ms (main's binary
// 42.4 in the same run; RG11 max 87.5 -> 57.1-57.7; same bytes; docs/PERFORMANCE.md). Helper eac: the gap bound,
// one window per distinct target (middle-out), the midpoint nearest level and less shared memory (the kernel
// slows with every KB: the windows' targets by sorted position, lb0's terms in 32 bits, the estimated multiplier
// beside the flag, the spans in bytes): 20.8 ms, see docs/PERFORMANCE.md. Helper eacl: the job's bound and tie key
// published only when they drop and read with plain loads (19.5), no spacing prefix sums, the modifiers in bytes, the
// prelude's targets and lb0 terms in s_key / s_ja (19.15 ms; 4064 B shared as the driver reports it, was 5016).
// Helper eacw: the DP's group costs once per lane, the last midpoint as lo + hi (see docs/PERFORMANCE.md).
layout(local_size_x = 64) in;
// The quality is a push constant (one pipeline for all four). PRUNE (specialisation constant 3): bit 1 = the
// spacing bound (high and max only: at normal it costs more than it saves on the H100): a (table, multiplier)
// whose levels are so far apart that at most K of them can serve the targets is skipped when the optimal
// K-level quantisation of the targets (1-D k-means, computed once per job) already exceeds the bound. Exact;
// KILN_GPU_EAC_PRUNE (gpu_encode_etc.c) = 0 / 2 without / with it (the default; 1 and 3 read as 0 and 2).
// Bit 9 (profiling aid, KILN_GPU_EAC_PROF=1; not exact): no exact search (the estimate's blocks: the prelude).
layout(constant_id = 3) const int PRUNE = 0;
const bool SPACING = (PRUNE & 2) != 0;
const bool PROF_NOSEARCH = (PRUNE & 512) != 0;

#define EAC_PACKED_MODS // the modifiers as bytes (s_modp below), not enc_etc_eac.glsl's s_mod
#include "enc_etc_eac.glsl"

layout(std430, binding = 2) writeonly buffer Flags { uint w[]; } flags;

const uint64_t UMAX = 0xffffffffffffffffUL;

// Shared memory is kept small (the kernel slows with every KB on the H100): in the prelude s_key holds the targets
// (each lane keeps its own in a register) and s_ja lb0's terms (both rewritten only after the barriers that end
// their reads).
shared uint s_modp[32];   // the EAC modifiers as signed bytes: modifier i of table t in byte (t * 8 + i) & 3 of word (t * 8 + i) >> 2
shared uint64_t s_err[64];
shared uint s_key[64];    // prelude: each lane's target; then each lane's key
shared uint s_amb[64];    // each lane's (table's) ambiguity flag (bit 0) and estimated multiplier (bits 1..4); then the indices
shared uint s_bound[4]; // per job: an upper bound of the best error found so far, in units of 2^BSHIFT
shared uint s_zkey[4];  // per job: the smallest key found with error lb0 (0xffffffff: none yet)
shared uint s_next[4];  // per job, the next (table, rank) unit of the exact search
shared float s_dp[128];    // SPACING: the DP's two rows (64 each: job slot * 16 + j - 1)
shared float s_emin[32];   // SPACING: per job, emin[k] at slot * 8 + k - 1
shared uint s_msp[32];     // per table t, byte r - 2 (r = 2..8) of words 2 t, 2 t + 1: the smallest span of r consecutive sorted modifiers
shared int s_srt[64];      // each job's targets, sorted
shared uint s_any;         // some job of the workgroup runs the exact search
shared int s_ja[64];       // per job and window w, at slot * 16 + w: the lowest b + k_i in the window (see wmask);
                           // prelude: each lane's squared distance to the nearest representable value (lb0; <= 2^30)
shared int s_jh[64];       // and 31 - the highest
shared uint s_jwb[4];      // per job: the bound (units of 2^BSHIFT) its windows were computed for
shared uint s_dw[64];      // per job and window w, at slot * 16 + w: the sorted position of its target (bits 0..3),
                           // the radius divisor (4..8: the multiplicity, 2 under the one-miss rule), 512 without that rule
shared uint s_nw[4];       // per job, the number of windows (distinct targets)

// Modifier i (0..7) of table t at index t * 8 + i.
int emod(int idx) { return bitfieldExtract(int(s_modp[idx >> 2]), 8 * (idx & 3), 8); }

// Errors of the 11-bit kinds reach 2^58: the shared bound keeps them rounded up to 2^26 units (about
// 1.6% of one squared 11-bit step), the 8-bit alpha exactly.
const int BSHIFT = KIND == 0 ? 0 : 26;
uint bound_units(uint64_t e) { return e >= (0xffffffffUL << BSHIFT) ? 0xffffffffu : uint((e + ((1UL << BSHIFT) - 1UL)) >> BSHIFT); }
uint64_t bound_value(uint u) { return u == 0xffffffffu ? 0xffffffffffffffffUL : uint64_t(u) << BSHIFT; }

int fdivstep(int a) { return STEP == 1 ? a : (a >> 3); }
int cdivstep(int a) { return STEP == 1 ? a : -((-a) >> 3); }

// Error of base b with offsets off[], stopping once it exceeds limit, tested every second pixel (helper eacp:
// H100 R11 max -6 %; the pixel loop written out: T is indexed by constants only). The nearest level by three
// midpoint tests (helper eac: H100 R11 max -8 %, was a minimum over the 8 levels); the last midpoint is lo + hi of the
// chosen pair (helper eacw: was one of 4 precomputed sums by 3 selects; H100 R11 max -2.7 %).
uint64_t eval_b(int T[16], int b, int off[8], uint64_t limit)
{
    int L[8];
    int c = STEP * b + C0;
    uint64_t e = 0;
    // the levels in increasing order (off[3] < off[2] < off[1] < off[0] < off[4] < ... < off[7]; clamping keeps
    // the order), the nearest found by three midpoint tests (2 x against the sum of two neighbours; |x| < 2^28)
    for (int i = 0; i < 8; i++) L[i] = eac_level(c, off[i < 4 ? 3 - i : i]);
    const int p34 = L[3] + L[4], p12 = L[1] + L[2], p56 = L[5] + L[6];
#define EVS(p) { const int x = T[p], x2 = 2 * x; const bool h = x2 > p34, q = x2 > (h ? p56 : p12); \
    const int lo = h ? (q ? L[6] : L[4]) : (q ? L[2] : L[0]), hi = h ? (q ? L[7] : L[5]) : (q ? L[3] : L[1]); \
    const int ps = lo + hi; const uint d = uint(abs(x - (x2 > ps ? hi : lo))); \
    e += uint64_t(d) * uint64_t(d); }
#define EVS2(p) EVS(p) EVS(p + 1) if (e > limit) return e;
    EVS2(0) EVS2(2) EVS2(4) EVS2(6) EVS2(8) EVS2(10) EVS2(12) EVS2(14)
#undef EVS2
#undef EVS
    return e;
}

// The same for the alpha (KIND 0: errors < 16 * 255^2 < 2^21) in 32-bit integers.
uint64_t eval_b32(int T[16], int b, int off[8], uint64_t limit)
{
    int L[8];
    for (int i = 0; i < 8; i++) L[i] = clamp(b + off[i], 0, 255);
    const uint lim = uint(min(limit, 0xffffffffUL));
    uint e = 0u;
#define EVQ(p) { int md = abs(T[p] - L[0]); for (int i = 1; i < 8; i++) md = min(md, abs(T[p] - L[i])); e += uint(md * md); }
#define EVQ2(p) EVQ(p) EVQ(p + 1) if (e > lim) return uint64_t(e);
    EVQ2(0) EVQ2(2) EVQ2(4) EVQ2(6) EVQ2(8) EVQ2(10) EVQ2(12) EVQ2(14)
#undef EVQ2
#undef EVQ
    return uint64_t(e);
}

// The mask word of bases cs + j (bit j) with some level i in a window: level i of base b decodes to
// STEP * (b + k_i) + C0 (+ r_i in 0..7 at m = 0 for the 11-bit kinds, where off_i = 8 k_i + r_i), so it lies in the
// window [wl, wh] (open at VMIN / VMAX: clamped levels) iff b + k_i is in [A, Bq] (at m = 0: in [A - 1, Bq] is
// necessary, a superset); a = A - cs (- 1 at m = 0), h = 31 - Bq + cs.
uint wmask(int a, int h, int kk[8])
{
    uint mw = 0u;
    // the window's width - 1 in bases: 31 - h - a = Bq - A (+ 1 at m = 0)
    const int wdt = 31 - h - a;
    if (wdt <= 31) {
        // bits [a - k_i, a - k_i + wdt]: the run at bits 32.. shifted right by 32 - a + k_i (clamped to 0..63: a
        // run entirely above the word gives 0, entirely below at most bit 0: a superset)
        if (wdt >= 0) {
            const uint64_t run = ((2UL << uint(wdt)) - 1UL) << 32;
            const int s0 = 32 - a;
            for (int i = 0; i < 8; i++) mw |= uint(run >> uint(clamp(s0 + kk[i], 0, 63)));
        }
    } else {
        // wider windows (large bounds, windows open at a range end): two clamps, two shifts per level (an
        // interval outside the word gives bit 0 or 31: a superset)
        for (int i = 0; i < 8; i++)
            mw |= (0xffffffffu >> uint(clamp(h + kk[i], 0, 31))) & (0xffffffffu << uint(clamp(a - kk[i], 0, 31)));
    }
    return mw;
}

uint lexkey(int m, int t, int b) { return (uint(m) << 12) | (uint(t) << 8) | uint(b - BMIN); }

// The decoded values [lo, hi] of a target window [x - R, x + R] (scaled), clamped to +-4096.
int win_lo(int lo) { return clamp(lo >= 0 ? (lo + SCALE - 1) / SCALE : -((-lo) / SCALE), -4096, 4096); }
int win_hi(int hi) { return clamp(hi >= 0 ? hi / SCALE : -((SCALE - 1 - hi) / SCALE), -4096, 4096); }

// The window radius (scaled) of `count` pixels that together may take the error B: a pixel farther than it from
// every level has error > B / count (rounded up; the float roundings are covered by the 0.1 % margin; R >= 2^30
// opens the window: |targets| < 2^28 and |window ends| <= 4096 * SCALE < 2^28, 32-bit arithmetic throughout).
int win_radius(uint64_t B, float count) { return B >= (1UL << 58) ? (1 << 30) : min(int(sqrt(float(B) / count) * 1.001) + 2, 1 << 30); }

// Window w of a job (x: the target, R: the radius) in base units: A = the lowest b + k_i whose level is in the
// window, Bq the highest (open at VMIN / VMAX: clamped levels; see wmask).
void job_window(uint slot, int w, int x, int R)
{
    const int wl = win_lo(x - R), wh = win_hi(x + R);
    s_ja[slot * 16u + uint(w)] = wl <= VMIN ? -(1 << 20) : cdivstep(wl - C0);
    s_jh[slot * 16u + uint(w)] = 31 - (wh >= VMAX ? (1 << 20) : fdivstep(wh - C0));
}

// Window w of a job at bound B: its target, with the radius of its multiplicity (or of the one-miss rule).
void job_window_d(uint slot, uint w, uint64_t B)
{
    const uint dw = s_dw[slot * 16u + w];
    job_window(slot, int(w), s_srt[slot * 16u + (dw & 15u)], win_radius(B, float((dw >> 4u) & 31u)));
}

// The spacing bound's emin[k] (SPACING, high / max), one column per lane; contains barriers (call in uniform flow).
const float RCP[17] = float[17](0.0, 1.0, 1.0 / 2.0, 1.0 / 3.0, 1.0 / 4.0, 1.0 / 5.0, 1.0 / 6.0, 1.0 / 7.0, 1.0 / 8.0, 1.0 / 9.0,
                                1.0 / 10.0, 1.0 / 11.0, 1.0 / 12.0, 1.0 / 13.0, 1.0 / 14.0, 1.0 / 15.0, 1.0 / 16.0);
// The floats' relative error: the conversion of N, the reciprocal and the product (3 ulp), then at most 7 sums of
// non-negative terms (7 ulp; Vulkan rounds float additions and products correctly): < 2^-20, covered by the factor
// 1 - 2^-16 (helper eac: floats instead of doubles, 640 B less shared memory).
const float EMIN_SAFE = 1.0 - 1.0 / 65536.0;
void spacing_dp(uint lid, uint slot, uint lane)
{
    // emin[k] <= the smallest error of k real levels for the targets (optimal 1-D k-means by dynamic
    // programming over contiguous groups of the sorted targets), one column per lane: row k holds the
    // best error of <= k groups of the sorted targets 0..j-1, emin[k] = row k at j = 16. A group's cost
    // is N / c with N = c * sum(t^2) - sum(t)^2 exact in 64-bit integers (|t| < 2^28, c <= 16), computed as
    // N * (1 / c) (the unrolled loops make c a constant index into RCP) in floats, whose relative error is
    // covered by EMIN_SAFE (above). Row 8 is never read (the bound takes K < 8 levels).
    const uint j = lane + 1u, sb = slot * 16u;
    barrier();
    // G[c - 1]: the cost of the last group of c sorted targets j - c .. j - 1 (c < j), once per lane in registers, the
    // same floats for every row (helper eacw: they were recomputed for each of the 6 rows; H100 prelude 3.13 -> 2.41 ms)
    float G[15];
    float e1 = 0.0;
    int64_t sy = 0;
    uint64_t qy = 0UL;
    [[unroll]] for (uint c = 1u; c <= 16u; c++) {
        float g = 0.0;
        if (c <= j) {
            const int64_t v = int64_t(s_srt[sb + j - c]);
            sy += v;
            qy += uint64_t(v * v);
            g = float(uint64_t(c) * qy - uint64_t(sy * sy)) * RCP[c];
        }
        if (c < 16u) G[c - 1u] = g;
        if (c == j) e1 = g;
    }
    s_dp[lid] = e1;
    if (j == 16u) s_emin[slot * 8u] = e1 * EMIN_SAFE;
    barrier();
    for (uint k = 2u; k <= 7u; k++) {
        const uint rd = (k & 1u) * 64u, wr = 64u - rd;
        float bst = s_dp[rd + lid];
        [[unroll]] for (uint c = 1u; c < 16u; c++)
            if (c < j) bst = min(bst, s_dp[rd + sb + j - c - 1u] + G[c - 1u]);
        s_dp[wr + lid] = bst;
        if (j == 16u) s_emin[slot * 8u + k - 1u] = bst * EMIN_SAFE;
        barrier();
    }
}

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    const uint slot = lid >> 4u, lane = lid & 15u;
    const uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    const uint job = wg * 4u + slot;
    const bool live = job < pc.njobs;
    const int QUALITY = pc.quality;
    const int MRAD = QUALITY == 0 ? 0 : 1, BRAD = QUALITY == 0 ? 1 : 0;
    if (lid < 32u)
        s_modp[lid] = (uint(EAC_MOD[lid * 4u]) & 255u) | ((uint(EAC_MOD[lid * 4u + 1u]) & 255u) << 8u) |
                      ((uint(EAC_MOD[lid * 4u + 2u]) & 255u) << 16u) | (uint(EAC_MOD[lid * 4u + 3u]) << 24u);
    const int own = live ? eac_target(job, lane) : 0; // this lane's target
    s_key[lid] = uint(own);
    barrier();
    if (QUALITY >= 1 && lid < 16u) {
        // the gap bound's and the level count's per-table smallest spans of r consecutive sorted modifiers (< 30)
        int so[8];
        for (int i = 0; i < 8; i++) so[i] = emod(int(lid) * 8 + (i < 4 ? 3 - i : i)); // increasing
        uint pk[2] = uint[2](0u, 0u);
        for (int r = 2; r <= 8; r++) {
            int sp = so[r - 1] - so[0];
            for (int i = 1; i + r <= 8; i++) sp = min(sp, so[i + r - 1] - so[i]);
            pk[(r - 2) >> 2] |= uint(sp) << (8u * uint((r - 2) & 3));
        }
        s_msp[lid * 2u] = pk[0];
        s_msp[lid * 2u + 1u] = pk[1];
    }
    if (live) {
        {
            // lb0's term of this lane's target
            int x = own, n = x >= 0 ? x / SCALE : -((SCALE - 1 - x) / SCALE);
            uint d = uint(min(abs(x - clamp(n, VMIN, VMAX) * SCALE), abs(x - clamp(n + 1, VMIN, VMAX) * SCALE)));
            s_ja[lid] = int(d * d);
        }
        // rank sort: each lane counts the targets below its own (ties by position)
        int v = own;
        uint r = 0u;
        for (uint p = 0u; p < 16u; p++) {
            int w = int(s_key[slot * 16u + p]);
            r += (w < v || (w == v && p < lane)) ? 1u : 0u;
        }
        s_srt[slot * 16u + r] = v;
    }
    barrier();

    int T[16];
    int TE[16]; // the evaluation order (below), indexed by constants only
    int tmin = 0, tmax = 0, cmin = 0, cmax = 0;
    uint64_t lb0 = 0UL; // a lower bound of every candidate's error
    if (live) {
        for (int p = 0; p < 16; p++) T[p] = s_srt[slot * 16u + uint(p)];
        tmin = T[0];
        tmax = T[15];
        for (int p = 0; p < 16; p++) {
            cmin += T[p] == tmin ? 1 : 0;
            cmax += T[p] == tmax ? 1 : 0;
        }
        for (int p = 0; p < 16; p++) lb0 += uint64_t(uint(s_ja[slot * 16u + uint(p)]));
        if (QUALITY >= 1) {
            // one window per distinct target (helper eac): the smallest, the largest, then the others middle-out
            // (nd / 2, nd / 2 - 1, nd / 2 + 1, ...); lane = sorted position, the first of each run writes its window
            const int v = s_srt[slot * 16u + lane];
            uint j = 0u, nd = 0u, c = 0u;
            for (uint q = 0u; q < 16u; q++) {
                const int wq = s_srt[slot * 16u + q];
                const uint st = (q == 0u || s_srt[slot * 16u + q - 1u] != wq) ? 1u : 0u;
                nd += st;
                j += q <= lane ? st : 0u;
                c += wq == v ? 1u : 0u;
            }
            j -= 1u;
            if (lane == 0u || s_srt[slot * 16u + lane - 1u] != v) {
                const int d = int(j) - int(nd / 2u);
                const uint w = j == 0u ? 0u : (j + 1u == nd ? 1u : 2u + uint(d >= 0 ? 2 * d : -2 * d - 1));
                s_dw[slot * 16u + w] = lane | ((c >= 2u || w < 2u) ? (c << 4u) | 512u : 32u);
            }
            if (lane == 0u) s_nw[slot] = nd;
        }
        // evaluation order for early exits: the extremes first, then inwards (the error is a sum of
        // integers: any order gives the same value)
        int U[16];
        for (int i = 0; i < 8; i++) {
            U[2 * i] = T[i];
            U[2 * i + 1] = T[15 - i];
        }
        T = U;
        TE = U;
    }

    // ---- the range estimate, lane = table
    const int t = int(lane);
    int mods[8];
    for (int i = 0; i < 8; i++) mods[i] = emod(t * 8 + i);
    int est_m = 0;
    uint64_t be = UMAX;
    uint bk = 0xffffffffu, amb = 0u;
    if (live) {
        int64_t D = int64_t(tmax) - int64_t(tmin);
        int span = mods[7] - mods[3];
        int64_t S = int64_t(SCALE) * span * (KIND == 0 ? 1 : 8);
        // the CPU's floor(range / (span * unit) + 0.5) in doubles equals this: its exact value is never
        // within the doubles' error of a half (unsigned R11) or is exactly representable (the others)
        // (32-bit divisions, helper eacp: D < 2^27, S < 2^24, |N| < 2^30, den < 2^21: the same quotients)
        int m0 = (2 * int(D) + int(S)) / (2 * int(S));
        m0 = clamp(m0, MMIN, 15);
        if (KIND != 0 && m0 == 0 && D > int64_t(span) * SCALE) m0 = 1;
        est_m = m0;
        for (int m = m0 - MRAD; m <= m0 + MRAD; m++) {
            if (m < MMIN || m > 15) continue;
            int f = eac_factor(m), off[8];
            for (int i = 0; i < 8; i++) off[i] = mods[i] * f;
            int64_t den = 2 * int64_t(SCALE) * STEP;
            int64_t N = int64_t(tmin) + tmax - int64_t(SCALE) * (off[3] + off[7] + 2 * C0) + int64_t(SCALE) * STEP;
            int b0 = int(N) >= 0 ? int(N) / int(den) : -((int(den) - 1 - int(N)) / int(den));
            // The CPU computes b0 = floor((mid - centre - c0) / step + 0.5) in doubles. The exact value is
            // a fraction with a small denominator, so the doubles' tiny errors can only matter when it is
            // an integer exactly. Alpha and signed targets (scale 1, 65536) make every double operation
            // exact; unsigned R11 (scale 65535) is exact only when min and max are 0 or 65535 in 16 bits.
            // Otherwise, on an exact integer, the doubles may land either side: flag the job.
            if (KIND == 1 && b0 * int(den) == int(N) && (tmin % 65535 != 0 || tmax % 65535 != 0)) amb = 1u;
            for (int b = b0 - BRAD; b <= b0 + BRAD; b++) {
                if (b < BMIN || b > BMAX) continue;
                uint64_t e = eval_b(TE, b, off, be);
                if (e < be) {
                    be = e;
                    bk = lexkey(m, t, b);
                }
            }
        }
    }
    s_err[lid] = be;
    s_key[lid] = bk;
    s_amb[lid] = amb | (uint(est_m) << 1u);
    if (lane == 0u) {
        s_bound[slot] = 0xffffffffu;
        s_zkey[slot] = 0xffffffffu;
        s_next[slot] = 0u;
    }
    if (lid == 0u) s_any = 0u;
    barrier();
    // the first strict minimum in table order
    uint64_t e_est = UMAX;
    uint k_est = lexkey(MMIN, 0, BMIN < 0 ? 0 : BMIN);
    for (uint i = 0u; i < 16u; i++) {
        uint64_t e = s_err[slot * 16u + i];
        if (e < e_est) {
            e_est = e;
            k_est = s_key[slot * 16u + i];
        }
        amb |= s_amb[slot * 16u + i] & 1u;
    }
    if (live && lane == 0u && QUALITY >= 1 && e_est > lb0) s_any = 1u;
    if (live && QUALITY >= 1) {
        // the job's pixel windows at the estimate's error, window w = lane
        const uint w = lane;
        if (w < s_nw[slot]) job_window_d(slot, w, e_est);
        if (lane == 0u) s_jwb[slot] = bound_units(e_est);
    }
    barrier();
    // the spacing DP after the estimate, and only where a job of the workgroup searches (normal: the DP costs
    // more than it saves on the H100)
    if (SPACING && QUALITY >= 2 && s_any != 0u) spacing_dp(lid, slot, lane);

    // ---- the exact search: the job's (table, multiplier) units to whichever of its lanes is free
    uint64_t tb = UMAX;
    uint tk = 0xffffffffu;
    const bool search = live && QUALITY >= 1 && e_est > lb0 && !PROF_NOSEARCH;
    if (search) {
        uint64_t rfor = 0;
        bool have = false;
        int lo0 = 0, hi0 = 0, lo1 = 0, hi1 = 0; // the extremes' windows: the decoded values some level must take
        const int nw = int(s_nw[slot]);
        uint hw = 0u; // the windows without the one-miss rule (bit w)
        for (int w = 0; w < nw; w++) hw |= (s_dw[slot * 16u + uint(w)] & 512u) != 0u ? 1u << uint(w) : 0u;
        uint pub_b = 0xffffffffu, pub_z = 0xffffffffu; // the bound (units) and tie key this lane last published
        // multipliers from the estimate outwards: good bounds early (ties resolve by key, not order)
        const uint NUNITS = QUALITY == 1 ? 80u : 496u; // 16 tables x ranks 0..4 (normal) / 0..30
        for (;;) {
            uint u = atomicAdd(s_next[slot], 1u);
            if (u >= NUNITS) break;
            const int t = int(u & 15u), em = int(s_amb[slot * 16u + (u & 15u)] >> 1u);
            const int r = int(u >> 4u);
            const int m = em + ((r & 1) != 0 ? (r + 1) >> 1 : -(r >> 1));
            if (m < MMIN || m > 15) continue;
            if (QUALITY == 1 && abs(m - em) > 2) continue;
            // Ties: a candidate wins only with a smaller error, or the same error and a smaller key. Once
            // some lane has error lb0 at key zk, every key above zk is out (flat or near-flat channels have
            // hundreds of zero-error (m, t, b): without this each lane evaluated all of them).
            // The lane publishes its bound and tie key only when they dropped since it last did (one atomicMin each)
            // and reads the job's with plain loads: a stale read gives a larger bound / key, still exact since every
            // rule keeps ties and the lane's own best (tb, tk) is kept privately (helper eacl: 2 shared atomics
            // fewer per unit).
            uint zk = tb == lb0 ? tk : 0xffffffffu;
            const uint ub = bound_units(tb);
            if (ub < pub_b) {
                atomicMin(s_bound[slot], ub);
                pub_b = ub;
            }
            if (zk < pub_z) {
                atomicMin(s_zkey[slot], zk);
                pub_z = zk;
            }
            uint64_t B = min(min(e_est, tb), bound_value(s_bound[slot]));
            zk = min(zk, s_zkey[slot]);
            if (zk < lexkey(m, t, BMIN)) continue;
            // every key of this (t, m) is above the lane's best key: only a strictly smaller error wins
            // (tb > lb0 here, else zk <= tk would have skipped it)
            // the windows keep the bound before this rule, recomputed only when the bound drops below 15 / 16 of the
            // one they were computed for (windows for a larger bound are a superset: exact)
            const uint64_t Bw = B;
            if (lexkey(m, t, BMIN) > tk) B = min(B, tb - 1UL);
            if (!have || Bw < rfor - (rfor >> 4)) {
                have = true;
                // the extremes' windows of this lane (the hull below)
                lo0 = win_lo(tmin - win_radius(Bw, float(cmin)));
                hi0 = win_hi(tmin + win_radius(Bw, float(cmin)));
                lo1 = win_lo(tmax - win_radius(Bw, float(cmax)));
                hi1 = win_hi(tmax + win_radius(Bw, float(cmax)));
                rfor = Bw;
                // the job's windows, when they were computed for a bound more than 1 / 16 above: by the lane that
                // lowers s_jwb. Any window computed for a bound >= the optimum keeps every candidate that can win
                // (ties included), so lanes may read them while another lane rewrites them.
                const uint ub = bound_units(Bw), jw = s_jwb[slot];
                if (ub < jw - (jw >> 4) && atomicMin(s_jwb[slot], ub) > ub) {
                    for (int w = 0; w < nw; w++) job_window_d(slot, uint(w), Bw);
                }
            }
            int f = eac_factor(m), off[8];
            for (int i = 0; i < 8; i++) off[i] = emod(t * 8 + i) * f;
            {
                // the gap bound: two targets x < y served by levels of one base are served by two equal levels or by
                // two levels at least dl apart (dl = the table's smallest gap between modifiers times the factor),
                // so the pair's error is >= e^2 / 2 with e = min(y - x, max(dl - (y - x), 0)); summed over the pairs
                // (smallest, largest), (2nd smallest, 2nd largest), ... Clamped levels break the gaps, but a pixel on a
                // clamped level alone has error > B when both range ends are more than sqrt(B) from the targets.
                const uint64_t lo2 = uint64_t(tmin - VMIN * SCALE), hi2 = uint64_t(VMAX * SCALE - tmax);
                if (lo2 * lo2 > B && hi2 * hi2 > B) {
                    const int dl = int(s_msp[t * 2] & 255u) * f * SCALE;
                    uint64_t pb = 0UL;
                    for (int p = 0; p < 8; p++) {
                        const int d = TE[2 * p + 1] - TE[2 * p], e = min(d, max(dl - d, 0));
                        pb += uint64_t(e) * uint64_t(e);
                    }
                    if ((pb >> 1) > B) continue;
                }
            }
            if (SPACING && QUALITY >= 2) {
                // the most levels of this (t, m) inside the targets' range: the longest run of sorted
                // offsets spanning <= the range (off[3] < off[2] < off[1] < off[0] < off[4] < ... < off[7]),
                // plus the nearest level below and above, plus a clamped level on a range end; spans are
                // multiples of the factor f (> 0): the largest r with its smallest span in range
                int mc = 1;
                const int64_t D = int64_t(tmax) - int64_t(tmin);
                const uint sp0 = s_msp[t * 2], sp1 = s_msp[t * 2 + 1];
                for (int r = 2; r <= 8; r++)
                    if (int64_t(int(((r < 6 ? sp0 : sp1) >> (8u * uint((r - 2) & 3))) & 255u) * f) * SCALE <= D) mc = r;
                int K = mc + 2 + (tmin <= VMIN * SCALE ? 1 : 0) + (tmax >= VMAX * SCALE ? 1 : 0);
                if (K < 8 && double(s_emin[slot * 8u + uint(K) - 1u]) > double(B)) continue;
            }
            if (hi0 < VMIN || lo0 > VMAX || hi1 < VMIN || lo1 > VMAX) continue;
            // the hull of the extremes' windows (the largest target's lowest base, the smallest's highest)
            const int hlo = lo1 <= VMIN ? BMIN : max(BMIN, cdivstep(lo1 - off[7] - C0));
            const int hhi = hi0 >= VMAX ? BMAX : min(BMAX, fdivstep(hi0 - off[3] - C0));
            // the level shifts k_i (see wmask)
            int kk[8];
            for (int i = 0; i < 8; i++) kk[i] = STEP == 1 ? off[i] : (m != 0 ? emod(t * 8 + i) * m : (emod(t * 8 + i) >> 3));
            const int adjm = STEP != 1 && m == 0 ? 1 : 0;
            bool stop = false;
            for (int cs = hlo; cs <= hhi && !stop; cs += 32) {
                const int ce = min(cs + 31, hhi);
                uint mask = 0xffffffffu >> uint(31 - (ce - cs));
                // the bases whose levels reach both extremes' windows and all windows 2.. but one
                uint ones = 0u, twos = 0u; // the bases with >= 1 / >= 2 pixels outside their windows 2..
                for (int w = 0; w < nw; w++) {
                    if (mask == 0u) break;
                    const uint mw = wmask(s_ja[slot * 16u + uint(w)] - cs - adjm, s_jh[slot * 16u + uint(w)] + cs, kk);
                    if (((hw >> uint(w)) & 1u) == 0u) {
                        twos |= ones & ~mw;
                        ones |= ~mw;
                        mask &= ~twos;
                    } else {
                        mask &= mw;
                    }
                }
                // bases increase through the loops: once a key passes zk, nothing further can win
                while (mask != 0u) {
                    const int b = cs + findLSB(mask);
                    mask &= mask - 1u;
                    uint k = lexkey(m, t, b);
                    if (k > zk) {
                        stop = true;
                        break;
                    }
                    uint64_t lim = k < tk ? min(B, tb) : min(B, tb - 1UL); // tb > lb0 here: else zk = tk < k
                    uint64_t e = KIND == 0 ? eval_b32(TE, b, off, lim) : eval_b(TE, b, off, lim);
                    if (e <= lim && (e < tb || k < tk)) {
                        tb = e;
                        tk = k;
                        if (e == lb0) zk = k;
                    }
                }
            }
        }
    }
    s_err[lid] = tb;
    s_key[lid] = tk;
    barrier();
    // every lane takes the job's result and the nearest-level index of its own pixel (the first index of the
    // smallest error, as the CPU does); lane 0 packs the 16 indices
    uint64_t e_s = UMAX;
    uint k_s = 0xffffffffu;
    for (uint i = 0u; i < 16u; i++) {
        uint64_t e = s_err[slot * 16u + i];
        uint k = s_key[slot * 16u + i];
        if (e < e_s || (e == e_s && k < k_s)) {
            e_s = e;
            k_s = k;
        }
    }
    const uint k = (QUALITY >= 1 && e_est > lb0 && e_s < e_est) ? k_s : k_est;
    const int b = int(k & 255u) + BMIN, tt = int((k >> 8u) & 15u), m = int(k >> 12u);
    if (live) {
        const int f = eac_factor(m), c = STEP * b + C0, x = own;
        uint bd = uint(abs(x - eac_level(c, emod(tt * 8) * f)));
        uint bi = 0u;
        for (int i = 1; i < 8; i++) {
            uint d = uint(abs(x - eac_level(c, emod(tt * 8 + i) * f)));
            if (d < bd) {
                bd = d;
                bi = uint(i);
            }
        }
        s_amb[lid] = bi;
    }
    barrier();
    if (live && lane == 0u) {
        uint64_t v = (uint64_t(uint(b) & 255u) << 56) | (uint64_t(m) << 52) | (uint64_t(tt) << 48);
        for (int p = 0; p < 16; p++) {
            int j = (p & 3) * 4 + (p >> 2);
            v |= uint64_t(s_amb[slot * 16u + uint(p)]) << (45 - 3 * j);
        }
        uint block = job / pc.nch, ch = job % pc.nch;
        uint o = block * pc.out_stride + pc.out_off + 2u * ch;
        uint hi = uint(v >> 32), lo = uint(v);
        dst.w[o] = (hi >> 24u) | ((hi >> 8u) & 0xff00u) | ((hi << 8u) & 0xff0000u) | (hi << 24u);
        dst.w[o + 1u] = (lo >> 24u) | ((lo >> 8u) & 0xff00u) | ((lo << 8u) & 0xff0000u) | (lo << 24u);
        flags.w[job] = amb;
    }
}

#version 450
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
// Design: 4 jobs per workgroup of 64, 16 lanes per job, lane = table. The estimate is computed in
// exact integer arithmetic (see the flags in enc_etc_eac.glsl for the one case where the CPU's
// doubles can round either way). In the exact phase each lane searches its table over all
// multipliers with pruning that stays exact AND keeps ties: a base survives when it could reach an
// error <= the bound (the estimate's error, then the lane's best), from two necessary conditions:
// the smallest target needs a level within sqrt(bound / its count) (a union of 8 base intervals,
// one per level) and so does the largest (their hull); the evaluation stops once the error exceeds
// the bound. (Default since helper eacn: MASK below, the same condition for 8 targets, as bit masks.)
// The lanes' (error, (m, t, b)) minima are reduced in shared memory.
// Ties (issue #4): keeping ties makes flat and near-flat channels expensive (alpha 255 everywhere: hundreds
// of (m, t, b) reach error 0, and the estimate finds none since its centred base overflows 255). Exact
// cuts: the smallest key found with error 0 (shared per job) removes every larger key, and past a lane's
// own best key only a strictly smaller error can win (the bound drops to tb - 1).
layout(local_size_x = 64) in;
// The quality is a push constant (one pipeline for all four). PRUNE (specialisation constant 3):
// bit 0 clear = two conditions (the hull of the largest target's level windows and the union of the
// smallest's), set = five conditions intersected as the CPU does (fewer evaluations, more interval
// work); bit 1 = the spacing bound (high and max): a (table, multiplier) whose levels are so far apart
// that at most K of them can serve the targets is skipped when the optimal K-level quantisation of the
// targets (1-D k-means, computed once per job) already exceeds the bound. All exact; bench/gpu_encode_etc.c
// measures 0 and 1 (2 and 3 at high / max); KILN_GPU_EAC_PRUNE (gpu_encode_etc.c) replaces bits 0 and 1.
layout(constant_id = 3) const int PRUNE = 0;
const bool FIVE = (PRUNE & 1) != 0;
const bool SPACING = (PRUNE & 2) != 0;
// bit 2 (POOL): the exact search's (table, multiplier) pairs of a job go to its 16 lanes from a shared counter
// (the next pair to whichever lane is free) instead of lane = table. Bit 3 (LB): no level set beats lb0 = the
// sum over the targets of the squared distance to the nearest representable value (11-bit kinds: targets fall
// between integer levels), so a candidate with error lb0 is optimal and the tie cuts that error 0 allows (no
// search after the estimate, no key above the smallest key found) hold at lb0. Both exact; with SPACING the
// k-means DP runs once per job, one column per lane (helper eacm, 2026-11-27: the DP in every lane cost more
// than the bound saved on the H100). gpu_encode_etc.c sets 2 | 4 | 8 by default (KILN_GPU_EAC_OPT: A/B).
const bool POOL = (PRUNE & 4) != 0;
const bool LB = (PRUNE & 8) != 0;
// helper eacn (2026-11-27, H100 4096^2: R11 max 64.5 -> 42.4 ms, RG11 max 133.0 -> 87.4, same bytes; each bit
// measured off in turn: MASK 11.8 ms, RSORT 3.7, DPRCP 3.2, DPLAZY 0.8, MCT 0.0 (H200: 0.3); KILN_GPU_EAC_X
// replaces bits 4.., default all on; KILN_GPU_EAC_X=0 = the search as before):
// bit 4 MCT: the spacing bound's level count from per-table smallest spans (7 compares instead of 28 pairs);
// bit 5 RSORT: the targets sorted by rank through shared memory (no insertion sort in a private array);
// bit 6 DPLAZY: the spacing DP after the estimate, and only where a job of the workgroup searches;
// bit 7 MASK (without FIVE): a (t, m)'s candidate bases 32 at a time as a bit mask, ANDed over the level windows
// of 8 single targets (extremes first: each target needs a level within sqrt(bound / its count)), then only the
// mask's bases evaluated (was: the smallest target's window union within the largest's hull);
// bit 8 DPRCP: the DP without its unused last row, dividing by the group size as a multiplication by its reciprocal.
// bit 9 (profiling aid, not exact; off by default): no exact search (the estimate's blocks: the prelude's time).
const bool MCT = (PRUNE & 16) != 0;
const bool RSORT = (PRUNE & 32) != 0;
const bool DPLAZY = (PRUNE & 64) != 0;
const bool MASKW = (PRUNE & 129) == 128;
const bool DPRCP = (PRUNE & 256) != 0;
const bool PROF_NOSEARCH = (PRUNE & 512) != 0;
const int NWM = 8; // MASK: windows

#include "enc_etc_eac.glsl"

layout(std430, binding = 2) writeonly buffer Flags { uint w[]; } flags;

const uint64_t UMAX = 0xffffffffffffffffUL;

shared int s_tgt[64];
shared uint64_t s_err[64];
shared uint s_key[64];
shared uint s_amb[64];
shared uint s_bound[4]; // per job: an upper bound of the best error found so far, in units of 2^BSHIFT
shared uint s_zkey[4];  // per job: the smallest key found with error 0 (0xffffffff: none yet)
shared uint s_next[4];  // POOL: per job, the next (table, rank) unit of the exact search
shared int s_estm[64];  // POOL: each lane's (table's) estimated multiplier
shared int64_t s_ps[68];   // SPACING: per job, prefix sums of the sorted targets (17 each)
shared uint64_t s_pq[68];  // SPACING: and of their squares
shared double s_dp[128];   // SPACING: the DP's two rows (64 each: job slot * 16 + j - 1)
shared double s_emin[32];  // SPACING: per job, emin[k] at slot * 8 + k - 1
shared int s_msp[128];     // MCT: per table t, at t * 8 + r - 2 (r = 2..8): the smallest span of r consecutive sorted modifiers
shared int s_srt[64];      // RSORT: each job's targets, sorted
shared uint s_any;         // DPLAZY: some job of the workgroup runs the exact search

// Errors of the 11-bit kinds reach 2^58: the shared bound keeps them rounded up to 2^26 units (about
// 1.6% of one squared 11-bit step), the 8-bit alpha exactly.
const int BSHIFT = KIND == 0 ? 0 : 26;
uint bound_units(uint64_t e) { return e >= (0xffffffffUL << BSHIFT) ? 0xffffffffu : uint((e + ((1UL << BSHIFT) - 1UL)) >> BSHIFT); }
uint64_t bound_value(uint u) { return u == 0xffffffffu ? 0xffffffffffffffffUL : uint64_t(u) << BSHIFT; }

int64_t fdiv64(int64_t a, int64_t d) { return a >= 0 ? a / d : -((-a + d - 1) / d); }
int fdivstep(int a) { return STEP == 1 ? a : (a >> 3); }
int cdivstep(int a) { return STEP == 1 ? a : -((-a) >> 3); }

// Error of base b with offsets off[], stopping once it exceeds limit (the pixel loop written out: H100 R11 max
// -1 %, helper eacm 2026-11-27; T is indexed by constants only).
uint64_t eval_b(int T[16], int b, int off[8], uint64_t limit)
{
    int L[8];
    int c = STEP * b + C0;
    for (int i = 0; i < 8; i++) L[i] = eac_level(c, off[i]);
    uint64_t e = 0;
#define EVP(p) e += eac_pixel_err(T[p], L); if (e > limit) return e;
    EVP(0) EVP(1) EVP(2) EVP(3) EVP(4) EVP(5) EVP(6) EVP(7)
    EVP(8) EVP(9) EVP(10) EVP(11) EVP(12) EVP(13) EVP(14)
#undef EVP
    return e + eac_pixel_err(T[15], L);
}

// Pruning conditions intersected per (table, multiplier), and candidate base intervals kept.
#define NCOND 5
#define NIV 8

uint lexkey(int m, int t, int b) { return (uint(m) << 12) | (uint(t) << 8) | uint(b - BMIN); }

// The spacing bound's emin[k] (SPACING, high / max), one column per lane; contains barriers (call in uniform flow).
const double RCP[16] = double[16](0.0LF, 1.0LF, 1.0LF / 2.0LF, 1.0LF / 3.0LF, 1.0LF / 4.0LF, 1.0LF / 5.0LF, 1.0LF / 6.0LF, 1.0LF / 7.0LF,
                                  1.0LF / 8.0LF, 1.0LF / 9.0LF, 1.0LF / 10.0LF, 1.0LF / 11.0LF, 1.0LF / 12.0LF, 1.0LF / 13.0LF,
                                  1.0LF / 14.0LF, 1.0LF / 15.0LF);
void spacing_dp(uint lid, uint slot, uint lane)
{
    // emin[k] <= the smallest error of k real levels for the targets (optimal 1-D k-means by dynamic
    // programming over contiguous groups of the sorted targets), one column per lane: row k holds the
    // best error of <= k groups of the sorted targets 0..j-1, emin[k] = row k at j = 16. A group's cost
    // is N / c with N = c * sum(t^2) - sum(t)^2 exact in 64-bit integers (|t| < 2^28, c <= 16); the
    // doubles' relative error (a few 2^-53) is covered by the factor 1 - 2^-30.
    const uint j = lane + 1u, jb = slot * 17u;
    barrier();
    int64_t sx = s_ps[jb + j];
    double e = double(uint64_t(j) * s_pq[jb + j] - uint64_t(sx * sx)) / double(j);
    s_dp[lid] = e;
    if (j == 16u) s_emin[slot * 8u] = e * (1.0LF - 1.0LF / 1073741824.0LF);
    barrier();
    // DPRCP: row 8 is never read (the bound takes K < 8 levels); the group size c runs over the lanes in step (a
    // uniform index into RCP), and N / c is N * (1 / c) rounded (two more roundings of 2^-53: covered as above)
    for (uint k = 2u; k <= (DPRCP ? 7u : 8u); k++) {
        const uint rd = (k & 1u) * 64u, wr = 64u - rd;
        double bst = s_dp[rd + lid];
        if (DPRCP) {
            for (uint c = 1u; c < j; c++) {
                const uint i = j - c;
                int64_t sy = s_ps[jb + j] - s_ps[jb + i];
                bst = min(bst, s_dp[rd + slot * 16u + i - 1u] + double(uint64_t(c) * (s_pq[jb + j] - s_pq[jb + i]) - uint64_t(sy * sy)) * RCP[c]);
            }
        } else {
            for (uint i = 1u; i < j; i++) {
                int64_t sy = s_ps[jb + j] - s_ps[jb + i];
                uint64_t c = uint64_t(j - i);
                bst = min(bst, s_dp[rd + slot * 16u + i - 1u] + double(c * (s_pq[jb + j] - s_pq[jb + i]) - uint64_t(sy * sy)) / double(c));
            }
        }
        s_dp[wr + lid] = bst;
        if (j == 16u) s_emin[slot * 8u + k - 1u] = bst * (1.0LF - 1.0LF / 1073741824.0LF);
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
    eac_load_mods(lid, 64u);
    if (live) s_tgt[lid] = eac_target(job, lane);
    barrier();
    if (MCT && SPACING && QUALITY >= 2 && lid < 16u) {
        int so[8];
        for (int i = 0; i < 8; i++) so[i] = s_mod[lid * 8u + uint(i < 4 ? 3 - i : i)]; // increasing
        for (int r = 2; r <= 8; r++) {
            int sp = so[r - 1] - so[0];
            for (int i = 1; i + r <= 8; i++) sp = min(sp, so[i + r - 1] - so[i]);
            s_msp[lid * 8u + uint(r - 2)] = sp;
        }
    }
    if (MCT) barrier();
    if (RSORT) {
        if (live) {
            int v = s_tgt[lid];
            uint r = 0u;
            for (uint p = 0u; p < 16u; p++) {
                int w = s_tgt[slot * 16u + p];
                r += (w < v || (w == v && p < lane)) ? 1u : 0u;
            }
            s_srt[slot * 16u + r] = v;
        }
        barrier();
    }

    int T[16];
    int TE[16]; // the evaluation order (below), indexed by constants only
    int tmin = 0, tmax = 0, cmin = 0, cmax = 0;
    int clo[NCOND], chi[NCOND], ccount[NCOND]; // the pruning conditions (see below)
    uint64_t lb0 = 0UL;                         // LB: a lower bound of every candidate's error
    if (live) {
        for (int p = 0; p < 16; p++) T[p] = RSORT ? s_srt[slot * 16u + uint(p)] : s_tgt[slot * 16u + uint(p)];
        tmin = T[0];
        tmax = T[0];
        for (int p = 1; p < 16; p++) {
            tmin = min(tmin, T[p]);
            tmax = max(tmax, T[p]);
        }
        for (int p = 0; p < 16; p++) {
            cmin += T[p] == tmin ? 1 : 0;
            cmax += T[p] == tmax ? 1 : 0;
        }
        // evaluation order for early exits: sorted, then extremes first (the error is a sum of
        // integers: any order gives the same value)
        for (int i = 1; i < (RSORT ? 0 : 16); i++) {
            int v = T[i], j = i;
            while (j > 0 && T[j - 1] > v) {
                T[j] = T[j - 1];
                j--;
            }
            T[j] = v;
        }
        if (LB) {
            for (int p = 0; p < 16; p++) {
                int x = T[p], n = x >= 0 ? x / SCALE : -((SCALE - 1 - x) / SCALE);
                uint d = uint(min(abs(x - clamp(n, VMIN, VMAX) * SCALE), abs(x - clamp(n + 1, VMIN, VMAX) * SCALE)));
                lb0 += uint64_t(d) * uint64_t(d);
            }
        }
        // conditions, as the CPU orders them: the smallest value (with its multiplicity), the largest,
        // then the first three quarters of the sorted values
        clo[0] = tmin; chi[0] = tmin; ccount[0] = cmin;
        clo[1] = tmax; chi[1] = tmax; ccount[1] = cmax;
        for (int q = 0; q < NCOND - 2; q++) {
            clo[2 + q] = T[4 * q];
            chi[2 + q] = T[4 * q + 3];
            ccount[2 + q] = 4;
        }
        if (SPACING && QUALITY >= 2) {
            int64_t sj = 0;
            uint64_t qj = 0UL;
            for (int i = 0; i < 16; i++)
                if (i <= int(lane)) {
                    sj += int64_t(T[i]);
                    qj += uint64_t(int64_t(T[i]) * int64_t(T[i]));
                }
            s_ps[slot * 17u + lane + 1u] = sj;
            s_pq[slot * 17u + lane + 1u] = qj;
            if (lane == 0u) {
                s_ps[slot * 17u] = 0;
                s_pq[slot * 17u] = 0UL;
            }
        }
        int U[16];
        for (int i = 0; i < 8; i++) {
            U[2 * i] = T[i];
            U[2 * i + 1] = T[15 - i];
        }
        T = U;
        TE = U;
    }
    if (SPACING && QUALITY >= 2 && !DPLAZY) spacing_dp(lid, slot, lane); // (normal: the DP costs more than it saves on the H100)

    // ---- the range estimate, lane = table
    const int t = int(lane);
    int mods[8];
    for (int i = 0; i < 8; i++) mods[i] = s_mod[t * 8 + i];
    int est_m = 0;
    uint64_t be = UMAX;
    uint bk = 0xffffffffu, amb = 0u;
    if (live) {
        int64_t D = int64_t(tmax) - int64_t(tmin);
        int span = mods[7] - mods[3];
        int64_t S = int64_t(SCALE) * span * (KIND == 0 ? 1 : 8);
        // the CPU's floor(range / (span * unit) + 0.5) in doubles equals this: its exact value is never
        // within the doubles' error of a half (unsigned R11) or is exactly representable (the others)
        int m0 = int((2 * D + S) / (2 * S));
        m0 = clamp(m0, MMIN, 15);
        if (KIND != 0 && m0 == 0 && D > int64_t(span) * SCALE) m0 = 1;
        est_m = m0;
        for (int m = m0 - MRAD; m <= m0 + MRAD; m++) {
            if (m < MMIN || m > 15) continue;
            int f = eac_factor(m), off[8];
            for (int i = 0; i < 8; i++) off[i] = mods[i] * f;
            int64_t den = 2 * int64_t(SCALE) * STEP;
            int64_t N = int64_t(tmin) + tmax - int64_t(SCALE) * (off[3] + off[7] + 2 * C0) + int64_t(SCALE) * STEP;
            int b0 = int(fdiv64(N, den));
            // The CPU computes b0 = floor((mid - centre - c0) / step + 0.5) in doubles. The exact value is
            // a fraction with a small denominator, so the doubles' tiny errors can only matter when it is
            // an integer exactly. Alpha and signed targets (scale 1, 65536) make every double operation
            // exact; unsigned R11 (scale 65535) is exact only when min and max are 0 or 65535 in 16 bits.
            // Otherwise, on an exact integer, the doubles may land either side: flag the job.
            if (KIND == 1 && int64_t(b0) * den == N && (tmin % 65535 != 0 || tmax % 65535 != 0)) amb = 1u;
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
    s_amb[lid] = amb;
    if (POOL) s_estm[lid] = est_m;
    if (lane == 0u) {
        s_bound[slot] = 0xffffffffu;
        s_zkey[slot] = 0xffffffffu;
        s_next[slot] = 0u;
    }
    if (DPLAZY && lid == 0u) s_any = 0u;
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
        amb |= s_amb[slot * 16u + i];
    }
    if (DPLAZY && live && lane == 0u && QUALITY >= 1 && e_est > lb0) s_any = 1u;
    barrier();
    if (DPLAZY && SPACING && QUALITY >= 2 && s_any != 0u) spacing_dp(lid, slot, lane);

    // ---- the exact search, lane = table, every multiplier (normal: the estimate's +-2)
    uint64_t tb = UMAX;
    uint tk = 0xffffffffu;
    const bool search = live && QUALITY >= 1 && e_est > lb0 && !PROF_NOSEARCH;
    if (search) {
        uint64_t rfor = 0;
        bool have = false;
        int wlo[NCOND], whi[NCOND]; // per condition: the decoded values some level must take
        int rone = 0;             // MASK: the window radius of one pixel
        // multipliers from the estimate outwards: good bounds early (ties resolve by key, not order)
        const uint NUNITS = QUALITY == 1 ? 80u : 496u; // POOL: 16 tables x ranks 0..4 (normal) / 0..30
        for (int n = 0;; n++) {
            int t = int(lane), em = est_m, m;
            if (POOL) {
                uint u = atomicAdd(s_next[slot], 1u);
                if (u >= NUNITS) break;
                t = int(u & 15u);
                em = s_estm[slot * 16u + (u & 15u)];
                int r = int(u >> 4u);
                m = em + ((r & 1) != 0 ? (r + 1) >> 1 : -(r >> 1));
            } else {
                if (n >= 32) break;
                m = est_m + ((n & 1) != 0 ? (n + 1) >> 1 : -(n >> 1));
            }
            if (m < MMIN || m > 15) continue;
            if (QUALITY == 1 && abs(m - em) > 2) continue;
            uint64_t B = min(min(e_est, tb), bound_value(atomicMin(s_bound[slot], bound_units(tb))));
            // Ties: a candidate wins only with a smaller error, or the same error and a smaller key. Once
            // some lane has error 0 at key zk, every key above zk is out (flat or near-flat channels have
            // hundreds of zero-error (m, t, b): without this each lane evaluated all of them).
            uint zk = tb == lb0 ? tk : 0xffffffffu;
            zk = min(zk, atomicMin(s_zkey[slot], zk));
            if (zk < lexkey(m, t, BMIN)) continue;
            // every key of this (t, m) is above the lane's best key: only a strictly smaller error wins
            // (tb > 0 here, else zk <= tk would have skipped it)
            // the windows keep the bound before this rule (a superset: recomputed only when the bound drops)
            const uint64_t Bw = B;
            if (lexkey(m, t, BMIN) > tk) B = min(B, tb - 1UL);
            if (!have || Bw != rfor) {
                have = true;
                for (int k = 0; k < (FIVE ? NCOND : 2); k++) {
                    // `count` pixels in [lo, hi] each with error >= dist^2: dist <= sqrt(Bw / count), rounded up
                    // (the float roundings are covered by the 0.1 % margin); R >= 2^30 opens the window (|clo|,
                    // |chi| < 2^28 and |window ends| <= 4096 * SCALE < 2^28: 32-bit arithmetic throughout)
                    int R = Bw >= (1UL << 58) ? (1 << 30) : min(int(sqrt(float(Bw) / float(ccount[k])) * 1.001) + 2, 1 << 30);
                    int lo = clo[k] - R, hi = chi[k] + R;
                    wlo[k] = clamp(lo >= 0 ? (lo + SCALE - 1) / SCALE : -((-lo) / SCALE), -4096, 4096);
                    whi[k] = clamp(hi >= 0 ? hi / SCALE : -((SCALE - 1 - hi) / SCALE), -4096, 4096);
                }
                if (MASKW) rone = Bw >= (1UL << 58) ? (1 << 30) : min(int(sqrt(float(Bw)) * 1.001) + 2, 1 << 30);
                rfor = Bw;
            }
            int f = eac_factor(m), off[8];
            for (int i = 0; i < 8; i++) off[i] = (POOL ? s_mod[t * 8 + i] : mods[i]) * f;
            if (SPACING && QUALITY >= 2) {
                // the most levels of this (t, m) inside the targets' range: the longest run of sorted
                // offsets spanning <= the range (off[3] < off[2] < off[1] < off[0] < off[4] < ... < off[7]),
                // plus the nearest level below and above, plus a clamped level on a range end
                int mc = 1;
                if (MCT) {
                    // spans are multiples of the factor f (> 0): the largest r with its smallest span in range
                    const int64_t D = int64_t(tmax) - int64_t(tmin);
                    for (int r = 2; r <= 8; r++)
                        if (int64_t(s_msp[t * 8 + r - 2] * f) * SCALE <= D) mc = r;
                } else {
                    for (int i = 0; i < 8; i++) {
                        int oi = off[i < 4 ? 3 - i : i];
                        for (int j = i + 1; j < 8; j++) {
                            int oj = off[j < 4 ? 3 - j : j];
                            if (int64_t(oj - oi) * SCALE <= int64_t(tmax) - int64_t(tmin)) mc = max(mc, j - i + 1);
                        }
                    }
                }
                int K = mc + 2 + (tmin <= VMIN * SCALE ? 1 : 0) + (tmax >= VMAX * SCALE ? 1 : 0);
                if (K < 8 && s_emin[slot * 8u + uint(K) - 1u] > double(B)) continue;
            }
            if (!FIVE) {
                int lo0 = wlo[0], hi0 = whi[0], lo1 = wlo[1], hi1 = whi[1];
                if (hi0 < VMIN || lo0 > VMAX || hi1 < VMIN || lo1 > VMAX) continue;
                if (MASKW) {
                    // the hull of the extremes' windows (the largest target's lowest base, the smallest's highest)
                    const int hlo = lo1 <= VMIN ? BMIN : max(BMIN, cdivstep(lo1 - off[7] - C0));
                    const int hhi = hi0 >= VMAX ? BMAX : min(BMAX, fdivstep(hi0 - off[3] - C0));
                    bool stop = false;
                    for (int cs = hlo; cs <= hhi && !stop; cs += 32) {
                        const int ce = min(cs + 31, hhi);
                        uint mask = 0xffffffffu >> uint(31 - (ce - cs));
                        for (int w = 0; w < NWM; w++) {
                            if (mask == 0u) break;
                            int wl, wh;
                            if (w < 2) {
                                wl = w == 0 ? lo0 : lo1;
                                wh = w == 0 ? hi0 : hi1;
                            } else {
                                int lo = TE[w] - rone, hi = TE[w] + rone;
                                wl = clamp(lo >= 0 ? (lo + SCALE - 1) / SCALE : -((-lo) / SCALE), -4096, 4096);
                                wh = clamp(hi >= 0 ? hi / SCALE : -((SCALE - 1 - hi) / SCALE), -4096, 4096);
                            }
                            uint mw = 0u;
                            for (int i = 0; i < 8; i++) {
                                int x0 = wl <= VMIN ? BMIN : cdivstep(wl - off[i] - C0);
                                int x1 = wh >= VMAX ? BMAX : fdivstep(wh - off[i] - C0);
                                x0 = max(x0, cs);
                                x1 = min(x1, ce);
                                if (x0 <= x1) mw |= (0xffffffffu >> uint(31 - (x1 - x0))) << uint(x0 - cs);
                            }
                            mask &= mw;
                        }
                        while (mask != 0u) {
                            const int b = cs + findLSB(mask);
                            mask &= mask - 1u;
                            uint k = lexkey(m, t, b);
                            if (k > zk) {
                                stop = true;
                                break;
                            }
                            uint64_t lim = k < tk ? min(B, tb) : min(B, tb - 1UL); // tb > lb0 here: else zk = tk < k
                            uint64_t e = eval_b(TE, b, off, lim);
                            if (e <= lim && (e < tb || k < tk)) {
                                tb = e;
                                tk = k;
                                if (e == lb0) zk = k;
                            }
                        }
                    }
                    continue;
                }
                // hull of the bases that put some level within the largest target's window
                int hlo = lo1 <= VMIN ? BMIN : max(BMIN, cdivstep(lo1 - off[7] - C0));
                int hhi = hi1 >= VMAX ? BMAX : min(BMAX, fdivstep(hi1 - off[3] - C0));
                // the smallest target's window, level by level in decreasing offset (increasing base)
                // bases increase through the loops: once a key passes zk, nothing further can win
                int next = hlo;
                for (int jj = 0; jj < 8 && next <= hhi; jj++) {
                    int i = jj < 4 ? 7 - jj : jj - 4;
                    int blo = lo0 <= VMIN ? BMIN : cdivstep(lo0 - off[i] - C0);
                    int bhi = hi0 >= VMAX ? BMAX : fdivstep(hi0 - off[i] - C0);
                    blo = max(blo, next);
                    bhi = min(bhi, hhi);
                    for (int b = blo; b <= bhi; b++) {
                        uint k = lexkey(m, t, b);
                        if (k > zk) {
                            bhi = hhi;
                            break;
                        }
                        uint64_t lim = k < tk ? min(B, tb) : min(B, tb - 1UL); // tb > lb0 here: else zk = tk < k
                        uint64_t e = eval_b(TE, b, off, lim);
                        if (e <= lim && (e < tb || k < tk)) {
                            tb = e;
                            tk = k;
                            if (e == lb0) zk = k;
                        }
                    }
                    next = max(next, bhi + 1);
                }
                continue;
            }
            // candidate bases: sorted disjoint intervals, intersected condition by condition
            int ca[NIV], cb[NIV], nc = 0;
            for (int k = 0; k < NCOND; k++) {
                int lo = wlo[k], hi = whi[k];
                if (lo > VMAX || hi < VMIN) {
                    nc = 0;
                    break;
                }
                bool lo_inf = lo <= VMIN, hi_inf = hi >= VMAX;
                int ua[8], ub[8], nu = 0;
                for (int jj = 0; jj < 8; jj++) { // decreasing offsets: increasing bases
                    int i = jj < 4 ? 7 - jj : jj - 4;
                    int blo = lo_inf ? BMIN : max(BMIN, cdivstep(lo - off[i] - C0));
                    int bhi = hi_inf ? BMAX : min(BMAX, fdivstep(hi - off[i] - C0));
                    if (blo > bhi) continue;
                    if (nu > 0 && blo <= ub[nu - 1] + 1) {
                        ub[nu - 1] = max(ub[nu - 1], bhi);
                    } else {
                        ua[nu] = blo;
                        ub[nu] = bhi;
                        nu++;
                    }
                }
                if (k == 0) {
                    for (int x = 0; x < nu; x++) {
                        ca[x] = ua[x];
                        cb[x] = ub[x];
                    }
                    nc = nu;
                } else {
                    int na[NIV], nb[NIV], nn = 0, x = 0, y = 0;
                    while (x < nc && y < nu) {
                        int l2 = max(ca[x], ua[y]), h2 = min(cb[x], ub[y]);
                        if (l2 <= h2) {
                            if (nn < NIV) {
                                na[nn] = l2;
                                nb[nn] = h2;
                                nn++;
                            } else {
                                nb[nn - 1] = h2; // full: widen the last interval (a superset stays exact)
                            }
                        }
                        if (cb[x] < ub[y]) x++;
                        else y++;
                    }
                    for (int z = 0; z < nn; z++) {
                        ca[z] = na[z];
                        cb[z] = nb[z];
                    }
                    nc = nn;
                }
                if (nc == 0) break;
            }
            // sorted intervals, increasing bases: once a key passes zk, nothing further can win
            for (int ci = 0; ci < nc; ci++) {
                for (int b = ca[ci]; b <= cb[ci]; b++) {
                    uint k = lexkey(m, t, b);
                    if (k > zk) {
                        ci = nc;
                        break;
                    }
                    uint64_t lim = k < tk ? min(B, tb) : min(B, tb - 1UL); // tb > lb0 here: else zk = tk < k
                    uint64_t e = eval_b(TE, b, off, lim);
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
    if (live && lane == 0u) {
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
        uint k = (QUALITY >= 1 && e_est > lb0 && e_s < e_est) ? k_s : k_est;
        for (int p = 0; p < 16; p++) T[p] = s_tgt[slot * 16u + uint(p)];
        eac_write(job, T, int(k & 255u) + BMIN, int((k >> 8u) & 15u), int(k >> 12u));
        flags.w[job] = amb;
    }
}

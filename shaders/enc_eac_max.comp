#version 450
// enc_eac_max.comp - kiln's EAC encoder above fast with the exact search spread over the job's lanes
// (issue #4, helper eacmax): bit-identical to src/codec/eac_enc.c and to enc_eac.comp at the same quality,
// tie-breaking included (see enc_eac.comp's header for what the CPU returns: the range estimate unless a
// strictly smaller error exists in the searched set S, else the first (m, t, b) of S in scan order with the
// optimal error, i.e. the smallest key (m << 12 | t << 8 | b - BMIN) among the optimal candidates).
//
// Same layout as enc_eac.comp (4 jobs per workgroup of 64, 16 lanes per job), same estimate (lane = table).
// The exact search (normal and above) runs in phases, each ending at a barrier:
//  1. seed: every lane evaluates, for each (its table, m) of S, the base that centres the levels on the
//     targets' range (clamped to the base range): 16 candidates of S per lane, exact errors, so the job's
//     bound B0 = min(estimate, seeds) is an error some candidate of S reaches.
//  2. windows: a base can reach an error <= B0 only if every pruning condition holds (enc_eac.comp: the
//     smallest and the largest target with their multiplicities, then the quarters of the sorted targets,
//     count c pixels in [lo, hi] => some level within sqrt(B0 / c) of [lo, hi]); per (t, m) of S the
//     intersection of the conditions' base intervals (a superset when more than NIV intervals are needed) is
//     appended to the job's list in shared memory (atomic slot: the list's order does not matter). Every
//     candidate with error <= B0, hence every optimal one, is in the list.
//  3. prefix sums of the intervals' base counts; lane l then evaluates bases [l N / 16, (l + 1) N / 16) of
//     the list (N: bases listed), so the lanes share the work evenly whatever the (t, m) it came from.
//     Evaluations stop early at the job's best error so far (a shared 32-bit bound rounded up, so ties are
//     kept), and a lane's own rule keeps the smallest key among equal errors; keys above the smallest
//     zero-error key found are skipped (nothing can beat an error of 0).
//  4. the lanes' (error, key) minima are reduced exactly, as in enc_eac.comp.
// A (t, m) whose intervals do not fit the list (CAP per job) is searched by its own lane in phase 2 (same
// rules). MODE (specialisation constant 3): bit 0 = five conditions (else the smallest and largest target
// only), bit 1 = three seeds per (t, m) (the centred base +-1), bit 2 = eight conditions (both halves and
// all four quarters too), bit 3 = every (t, m) searched by its own lane (tests: the overflow path), bit 4 =
// CAP 512 instead of 256, bit 5 = the job's shared bound and zero-error key read once per interval
// (any stale value is still a valid bound; a lane publishes its own improvements at once) instead of per base. Evaluations run over the distinct target values with their multiplicities.
// Nothing depends on the subgroup size or the lane order: the result is the minimum of (error, key) over a
// superset of S's optima.
layout(local_size_x = 64) in;
layout(constant_id = 3) const int MODE = 1;
const bool FIVE = (MODE & 1) != 0;
const bool SEED3 = (MODE & 2) != 0;
const bool EIGHT = (MODE & 4) != 0;
const bool OWN = (MODE & 8) != 0;
const bool BIGCAP = (MODE & 16) != 0;
const bool CACHED = (MODE & 32) != 0;

#include "enc_etc_eac.glsl"

layout(std430, binding = 2) writeonly buffer Flags { uint w[]; } flags;

const uint64_t UMAX = 0xffffffffffffffffUL;

#define NCOND 8
#define NIV 8
const int CAP = (MODE & 16) != 0 ? 512 : 256; // list entries per job (MODE bit 4: 512)

shared int s_tgt[64];
shared uint64_t s_err[64];
shared uint s_key[64];
shared uint s_amb[64];
shared uint s_bound[4]; // per job: an upper bound of the best error found so far, in units of 2^BSHIFT
shared uint s_zkey[4];  // per job: the smallest key found with error 0 (0xffffffff: none yet)
shared uint s_n[4];     // per job: intervals listed
shared int s_win[4 * 2 * NCOND];
shared uint s_iv[4 * CAP];  // per job: m << 20 | t << 16 | (lo - BMIN) << 8 | (hi - BMIN)
shared uint s_cum[4 * CAP]; // per job: bases listed before interval i
shared uint s_part[64];
shared int s_srt[64];          // per job: the distinct targets in evaluation order (extremes first)
shared int s_wt[64];           // and their multiplicities (0: past the last)
shared uint s_jn[4];           // per job: bases listed
shared uint64_t s_re[4 * 64];  // per job, per lane of the workgroup: the lane's best error for that job
shared uint s_rk[4 * 64];      // and its key

const int BSHIFT = KIND == 0 ? 0 : 26;
uint bound_units(uint64_t e) { return e >= (0xffffffffUL << BSHIFT) ? 0xffffffffu : uint((e + ((1UL << BSHIFT) - 1UL)) >> BSHIFT); }
uint64_t bound_value(uint u) { return u == 0xffffffffu ? 0xffffffffffffffffUL : uint64_t(u) << BSHIFT; }

int64_t fdiv64(int64_t a, int64_t d) { return a >= 0 ? a / d : -((-a + d - 1) / d); }
int64_t cdiv64(int64_t a, int64_t d) { return -fdiv64(-a, d); }
int fdivstep(int a) { return STEP == 1 ? a : (a >> 3); }
int cdivstep(int a) { return STEP == 1 ? a : -((-a) >> 3); }

// Error of base b: the distinct targets T[p] with their multiplicities W[p] (W = 0 ends the list), stopping
// once the sum exceeds limit (a sum of integers: the order does not change the value).
uint64_t eval_b(int T[16], int W[16], int b, int off[8], uint64_t limit)
{
    int L[8];
    int c = STEP * b + C0;
    for (int i = 0; i < 8; i++) L[i] = eac_level(c, off[i]);
    uint64_t e = 0;
    for (int p = 0; p < 16; p++) {
        if (W[p] == 0) break;
        uint md = uint(abs(T[p] - L[0]));
        for (int i = 1; i < 8; i++) md = min(md, uint(abs(T[p] - L[i])));
        e += uint64_t(md * uint(W[p])) * uint64_t(md); // md < 2^28, W <= 16
        if (e > limit) return e;
    }
    return e;
}

int64_t rbound(uint64_t v)
{
    if (v >= (1UL << 58)) return int64_t(1) << 40;
    return int64_t(sqrt(float(v)) * 1.001) + 2;
}

uint lexkey(int m, int t, int b) { return (uint(m) << 12) | (uint(t) << 8) | uint(b - BMIN); }

// One candidate of the lane: evaluated unless it cannot win; (tb, tk) keeps the lane's smallest (error, key).
// CACHED: zkc / Bc are the job's zero-error key and bound read at the interval's start.
void try_base(int T[16], int W[16], int off[8], int m, int t, int b, uint slot, uint zkc, uint64_t Bc, inout uint64_t tb,
              inout uint tk)
{
    uint k = lexkey(m, t, b);
    uint zk = CACHED ? zkc : atomicMin(s_zkey[slot], tb == 0UL ? tk : 0xffffffffu);
    if (tb == 0UL) zk = min(zk, tk);
    if (k > zk) return;
    uint64_t B = CACHED ? Bc : bound_value(atomicMin(s_bound[slot], bound_units(tb)));
    // past the lane's own best key only a strictly smaller error wins (tb > 0 here: else zk <= tk < k)
    uint64_t lim = k < tk ? min(B, tb) : min(B, tb - 1UL);
    uint64_t e = eval_b(T, W, b, off, lim);
    if (e <= lim && (e < tb || k < tk)) {
        tb = e;
        tk = k;
        if (CACHED) {
            atomicMin(s_bound[slot], bound_units(e));
            if (e == 0UL) atomicMin(s_zkey[slot], k);
        }
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

    int T[16], W[16];
    int tmin = 0, tmax = 0, cmin = 0, cmax = 0;
    int clo[NCOND], chi[NCOND], ccount[NCOND];
    if (live) {
        for (int p = 0; p < 16; p++) T[p] = s_tgt[slot * 16u + uint(p)];
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
        for (int i = 1; i < 16; i++) {
            int v = T[i], j = i;
            while (j > 0 && T[j - 1] > v) {
                T[j] = T[j - 1];
                j--;
            }
            T[j] = v;
        }
        clo[0] = tmin; chi[0] = tmin; ccount[0] = cmin;
        clo[1] = tmax; chi[1] = tmax; ccount[1] = cmax;
        for (int q = 0; q < 4; q++) {
            clo[2 + q] = T[4 * q];
            chi[2 + q] = T[4 * q + 3];
            ccount[2 + q] = 4;
        }
        for (int h = 0; h < 2; h++) {
            clo[6 + h] = T[8 * h];
            chi[6 + h] = T[8 * h + 7];
            ccount[6 + h] = 8;
        }
        // distinct values with multiplicities, then extremes first: D[0], D[nd - 1], D[1], D[nd - 2], ...
        int D[16], C[16], nd = 0;
        for (int p = 0; p < 16; p++) {
            if (p == 0 || T[p] != T[p - 1]) {
                D[nd] = T[p];
                C[nd] = 1;
                nd++;
            } else {
                C[nd - 1]++;
            }
        }
        for (int i = 0; i < 16; i++) {
            int k = clamp((i & 1) == 0 ? i >> 1 : nd - 1 - (i >> 1), 0, 15);
            T[i] = i < nd ? D[k] : 0;
            W[i] = i < nd ? C[k] : 0;
        }
        s_srt[lid] = T[lane];
        s_wt[lid] = W[lane];
    }

    // ---- the range estimate, lane = table (as enc_eac.comp)
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
            if (KIND == 1 && int64_t(b0) * den == N && (tmin % 65535 != 0 || tmax % 65535 != 0)) amb = 1u;
            for (int b = b0 - BRAD; b <= b0 + BRAD; b++) {
                if (b < BMIN || b > BMAX) continue;
                uint64_t e = eval_b(T, W, b, off, be);
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
    if (lane == 0u) {
        s_bound[slot] = 0xffffffffu;
        s_zkey[slot] = 0xffffffffu;
        s_n[slot] = 0u;
    }
    barrier();
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
    const bool search = live && QUALITY >= 1 && e_est > 0;

    // ---- 1. seeds: per (t, m) of S the centred base, clamped
    uint64_t tb = UMAX;
    uint tk = 0xffffffffu;
    if (search) {
        for (int m = MMIN; m < 16; m++) {
            if (QUALITY == 1 && abs(m - est_m) > 2) continue;
            int f = eac_factor(m), off[8];
            for (int i = 0; i < 8; i++) off[i] = mods[i] * f;
            int64_t N = int64_t(tmin) + tmax - int64_t(SCALE) * (off[3] + off[7] + 2 * C0) + int64_t(SCALE) * STEP;
            int bc = int(fdiv64(N, 2 * int64_t(SCALE) * STEP));
            for (int d = SEED3 ? -1 : 0; d <= (SEED3 ? 1 : 0); d++) {
                int b0 = clamp(bc + d, BMIN, BMAX);
                uint64_t lim = min(e_est, tb);
                uint64_t e = eval_b(T, W, b0, off, lim);
                uint k = lexkey(m, t, b0);
                if (e <= lim && (e < tb || (e == tb && k < tk))) {
                    tb = e;
                    tk = k;
                }
            }
        }
        atomicMin(s_bound[slot], bound_units(min(tb, e_est)));
        if (tb == 0UL) atomicMin(s_zkey[slot], tk);
    }
    barrier();

    // ---- 2. windows of the conditions at the job's bound (lanes 0..NCOND-1), then the candidate intervals
    const int NC = EIGHT ? 8 : FIVE ? 5 : 2;
    if (search && int(lane) < NC) {
        uint64_t B = bound_value(s_bound[slot]);
        for (int k = 0; k < NC; k++) {
            if (k != int(lane)) continue;
            int64_t R = rbound(B / uint64_t(ccount[k]));
            s_win[slot * 2u * NCOND + 2u * uint(k)] = int(clamp(cdiv64(int64_t(clo[k]) - R, SCALE), -4096L, 4096L));
            s_win[slot * 2u * NCOND + 2u * uint(k) + 1u] = int(clamp(fdiv64(int64_t(chi[k]) + R, SCALE), -4096L, 4096L));
        }
    }
    barrier();
    if (search) {
        for (int m = MMIN; m < 16; m++) {
            if (QUALITY == 1 && abs(m - est_m) > 2) continue;
            int f = eac_factor(m), off[8];
            for (int i = 0; i < 8; i++) off[i] = mods[i] * f;
            int ca[NIV], cb[NIV], nc = 0;
            for (int k = 0; k < NC; k++) {
                int lo = s_win[slot * 2u * NCOND + 2u * uint(k)], hi = s_win[slot * 2u * NCOND + 2u * uint(k) + 1u];
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
            if (nc == 0) continue;
            // the intervals that find no room in the list (at or past CAP) are searched by this lane
            uint at = OWN ? uint(CAP) : atomicAdd(s_n[slot], uint(nc));
            for (int ci = 0; ci < nc; ci++) {
                if (at + uint(ci) < uint(CAP)) {
                    s_iv[slot * uint(CAP) + at + uint(ci)] =
                        (uint(m) << 20) | (uint(t) << 16) | (uint(ca[ci] - BMIN) << 8) | uint(cb[ci] - BMIN);
                } else {
                    uint zkc = CACHED ? atomicMin(s_zkey[slot], 0xffffffffu) : 0u;
                    uint64_t Bc = CACHED ? bound_value(atomicMin(s_bound[slot], 0xffffffffu)) : 0UL;
                    for (int b = ca[ci]; b <= cb[ci]; b++) try_base(T, W, off, m, t, b, slot, zkc, Bc, tb, tk);
                }
            }
        }
    }
    barrier();

    // ---- 3. prefix sums of the listed bases, then each of the workgroup's 64 lanes takes its share of the
    // four jobs' bases (job after job), so the jobs of a workgroup share the work too
    for (uint j = 0u; j < 4u; j++) {
        s_re[j * 64u + lid] = j == slot ? tb : UMAX;
        s_rk[j * 64u + lid] = j == slot ? tk : 0xffffffffu;
    }
    const uint n = min(s_n[slot], uint(CAP));
    const uint seg = (n + 15u) >> 4u;
    uint run = 0u;
    for (uint i = lane * seg; i < min(n, lane * seg + seg); i++) {
        uint v = s_iv[slot * uint(CAP) + i];
        run += ((v & 255u) - ((v >> 8u) & 255u)) + 1u;
    }
    s_part[lid] = run;
    barrier();
    {
        uint before = 0u, total = 0u;
        for (uint l = 0u; l < 16u; l++) {
            uint v = s_part[slot * 16u + l];
            before += l < lane ? v : 0u;
            total += v;
        }
        for (uint i = lane * seg; i < min(n, lane * seg + seg); i++) {
            uint v = s_iv[slot * uint(CAP) + i];
            s_cum[slot * uint(CAP) + i] = before;
            before += ((v & 255u) - ((v >> 8u) & 255u)) + 1u;
        }
        if (lane == 0u) s_jn[slot] = total;
    }
    barrier();
    {
        uint jt[4], all = 0u;
        for (uint j = 0u; j < 4u; j++) {
            jt[j] = s_jn[j];
            all += jt[j];
        }
        uint first = (all * lid) >> 6u, last = (all * (lid + 1u)) >> 6u;
        if (first < last) {
            uint jj = 0u;
            while (first >= jt[jj]) {
                first -= jt[jj];
                jj++;
            }
            uint left = last - ((all * lid) >> 6u);
            // the last interval of job jj starting at or before `first`
            const uint nj = min(s_n[jj], uint(CAP));
            uint lo = 0u, hi = nj - 1u;
            while (lo < hi) {
                uint mid = (lo + hi + 1u) >> 1u;
                if (s_cum[jj * uint(CAP) + mid] <= first) lo = mid;
                else hi = mid - 1u;
            }
            uint i = lo, pos = first - s_cum[jj * uint(CAP) + lo];
            uint64_t jb = s_re[jj * 64u + lid];
            uint jk = s_rk[jj * 64u + lid];
            int TJ[16], WJ[16];
            for (int p = 0; p < 16; p++) {
                TJ[p] = s_srt[jj * 16u + uint(p)];
                WJ[p] = s_wt[jj * 16u + uint(p)];
            }
            while (left > 0u) {
                if (i >= min(s_n[jj], uint(CAP))) { // next job with bases listed
                    s_re[jj * 64u + lid] = jb;
                    s_rk[jj * 64u + lid] = jk;
                    jj++;
                    while (jt[jj] == 0u) jj++;
                    i = 0u;
                    jb = s_re[jj * 64u + lid];
                    jk = s_rk[jj * 64u + lid];
                    for (int p = 0; p < 16; p++) {
                        TJ[p] = s_srt[jj * 16u + uint(p)];
                        WJ[p] = s_wt[jj * 16u + uint(p)];
                    }
                }
                uint v = s_iv[jj * uint(CAP) + i];
                int m = int(v >> 20u), ti = int((v >> 16u) & 15u);
                int blo = int((v >> 8u) & 255u) + BMIN, bhi = int(v & 255u) + BMIN;
                int f = eac_factor(m), off[8];
                for (int q = 0; q < 8; q++) off[q] = s_mod[ti * 8 + q] * f;
                uint zkc = CACHED ? atomicMin(s_zkey[jj], 0xffffffffu) : 0u;
                uint64_t Bc = CACHED ? bound_value(atomicMin(s_bound[jj], 0xffffffffu)) : 0UL;
                for (int b = blo + int(pos); b <= bhi && left > 0u; b++) {
                    try_base(TJ, WJ, off, m, ti, b, jj, zkc, Bc, jb, jk);
                    left--;
                }
                pos = 0u;
                i++;
            }
            s_re[jj * 64u + lid] = jb;
            s_rk[jj * 64u + lid] = jk;
        }
    }
    barrier();
    if (live && lane == 0u) {
        uint64_t e_s = UMAX;
        uint k_s = 0xffffffffu;
        for (uint i = 0u; i < 64u; i++) {
            uint64_t e = s_re[slot * 64u + i];
            uint k = s_rk[slot * 64u + i];
            if (e < e_s || (e == e_s && k < k_s)) {
                e_s = e;
                k_s = k;
            }
        }
        uint k = (QUALITY >= 1 && e_est > 0 && e_s < e_est) ? k_s : k_est;
        for (int p = 0; p < 16; p++) T[p] = s_tgt[slot * 16u + uint(p)];
        eac_write(job, T, int(k & 255u) + BMIN, int((k >> 8u) & 15u), int(k >> 12u));
        flags.w[job] = amb;
    }
}

// enc_etc1_q.glsl - the body of enc_etc1_q.comp (ETC1 modes, opaque) and enc_etc1_q_a1.comp (ETC1 modes
// of ETC2 RGB A1, ETC_A1 = 1: needs 64-bit floats). Kiln's GPU design of the CPU's ETC1 search at
// qualities NORMAL, HIGH and MAX (and, for RGB A1, FAST), bit-identical to the CPU (src/codec/etc1_enc.c
// kiln__etc1_search, no dithering): the same staircase walk, the same model ranking, the same exact
// errors and every tie-break of top_insert, sub_best, consider and the selector re-choice.
// Model ranking: the CPU compares the double d / n + G_min. For n = 8 (opaque halves) that is compared
// here as the exact integer d + 8 G_min (same order: d an integer, the double sum exact); RGB A1 halves
// have n = 0..8 opaque pixels, so enc_etc1_q_a1 computes the CPU's double, with a correctly rounded
// division (etc_div.glsl).
//
// 8 invocations per block, 8 blocks per workgroup of 64:
//  1. invocation r = 4 flip + 2 diff + half runs the sub-block search of its half for its flip and its
//     quantisation (individual 444 / differential 555) and leaves the exactly evaluated candidate list
//     (up to 4, sorted by exact error) in shared memory;
//  2. invocation r = 4 flip + 2 side + k runs, speculatively, the differential delta-box search of
//     candidate k of list `side` (the CPU runs it only when the free optima do not fit and the bound
//     allows: whether it is used is decided in step 3, which sees the same numbers the CPU sees);
//  3. invocation 0 of the block replays the CPU's sequence (flip 0 individual, flip 0 differential with
//     its pruning, flip 1 ...) on the lists, re-chooses the selectors (nearest of the 4 clamped colours,
//     first minimum) and writes the block.
// RGB A1 (ETC_A1): no individual mode. A block with a pixel whose alpha is below the threshold is
// "transparent": only its opaque pixels count (a half may have fewer than 8, or none: the CPU's
// diff_search special case), the +-a modifiers become 0, selector 2 is the transparent one, the opaque
// bit is 0; a block with no opaque pixel is the CPU's fixed block. RGB A1 at FAST: transparent blocks
// take the search with FAST effort, the others the CPU's kiln__etc1_fast (invocation 0, step 3).
// Step 2 with BOXSKIP (specialisation constant 2, helper etc2max; gpu_encode_etc.c KILN_GPU_ETC1_BOXSKIP): the
// CPU runs few of the 8 box searches (at max on real images 1-6 %: the free optima fit, the flip is pruned, or
// the candidate cannot beat the best), so each block's invocations first replay step 3 without the box results
// (they only lower the best error: the replayed best is an upper bound of the CPU's at every point, so a box
// search the CPU runs passes the replayed tests; exact superset) and run only the box searches that pass.
// BOXSKIP 1: each invocation runs its own (if it passes); 2: the passing searches of the workgroup are listed
// in shared memory and run by its first invocations (whole subgroups without one skip step 2). The workgroup
// size is specialisation constant 0 (a multiple of 8; gpu_encode_etc.c asks for 256 with BOXSKIP 2: one
// subgroup then runs the ~15 listed searches of 32 blocks on rock at max, where 64 kept one busy per 8 blocks).
// Barriers only (no subgroup operations): correct for every subgroup size. The fixed 8-wide loops are
// unrolled (lavapipe caps the loop iterations of an invocation, see enc_etc1_seed.comp).
// Input (binding 0): the image's RGBA8 words. Output (binding 1): OUT4 = 0: 2 words per block (the
// big-endian bytes); OUT4 = 1 (ETC2): 4 words per block, gpu_etc2_th.h's kiln_etc2_gpu_block (the
// error etc_sol.err of the chosen solution, flags 0, the bytes), which enc_etc2_planar.comp continues.
layout(local_size_x_id = 0) in;                // the workgroup size (vk.h), a multiple of 8; 64 by default
layout(constant_id = 1) const uint OUT4 = 0u;
layout(constant_id = 2) const uint BOXSKIP = 0u; // step 2: 0 every box search, 1 / 2 the needed ones (above)
// TOPFIX (constant 3, KILN_GPU_ETC1_TOPFIX): 1 = sub_search's two sorted lists (the model's top and the exact
// errors) kept with constant indices only (each insertion as a rank and a select per slot, unrolled), so that
// they can stay in registers; the same order as the insertion loops (stable: a new entry after equal ones).
// Lavapipe runs it ~5x faster; the H100 ~20 % slower (its compiler keeps the lists in registers already): off.
layout(constant_id = 3) const uint TOPFIX = 0u;
// Step 3 (helper etc2th): every invocation of a block replays the CPU's sequence (the same values) and re-chooses the
// selectors of 2 of the 16 pixels; invocation 0 ORs / sums the 8 parts (H100 2026-11-26 19:18 UTC, ETC2 RGB max 4096^2:
// 37.67 vs 37.81 ms with invocation 0 alone; the walks of step 1 / the box searches of step 2 split over two invocations
// lost: 39.45-45.16 ms, removed). Same bytes.
const uint WG = gl_WorkGroupSize.x;

layout(push_constant) uniform Push {
    uint width, height; // image size
    uint bx;            // blocks per row
    uint nblocks;
    int w0, w1, w2;     // channel weights (1,1,1 or the perceptual 38,75,15)
    int quality;        // kiln_quality: 1 normal, 2 high, 3 max (RGB A1: also 0 fast)
    uint athr;          // RGB A1: alpha below this is transparent
} pc;

layout(std430, binding = 0) readonly buffer Src { uint w[]; } src;
layout(std430, binding = 1) writeonly buffer Dst { uint w[]; } dst;

#include "etc_tables.glsl"
#if ETC_A1
#include "etc_div.glsl"
#define SCORE double
#define HN hn  // opaque pixels of the half being searched
#define TR tr  // the block has a transparent pixel
#else
#define SCORE int
#define HN 8
#define TR false
#endif

// First 8-bit value of each level (kiln__etc_q5_first / _q4_first), then 256.
const int Q5_FIRST[33] = int[33](0, 5, 13, 21, 29, 38, 46, 54, 62, 70, 79, 87, 95, 103, 112, 120, 128, 136, 144, 153,
                                 161, 169, 177, 186, 194, 202, 210, 218, 227, 235, 243, 251, 256);
const int Q4_FIRST[17] = int[17](0, 9, 26, 43, 60, 77, 94, 111, 128, 145, 162, 179, 196, 213, 230, 247, 256);

shared uint s_px[WG * 2u];
shared uint s_le[WG * 4u]; // candidate lists: exact error
shared uint s_lq[WG * 4u]; //                  colour (3 x 5 bits) | table << 15
shared int s_ln[WG];
shared uint s_be[WG];     // box searches: best exact error (0xffffffff: not run)
shared uint s_bq[WG];
shared uint s_njob;       // BOXSKIP 2: the box searches to run (invocation ids)
shared uint s_job[WG];
// step 3: per invocation its 2 pixels' selector bits and error
shared uint s_slo[WG], s_ser[WG];

ivec3 rgb(uint v) { return ivec3(int(v & 255u), int((v >> 8u) & 255u), int((v >> 16u) & 255u)); }

// Row-major pixel index of the i-th texel (0..7) of half s (the CPU's order: p ascending).
uint half_px(int flip, int s, int i)
{
    return flip == 0 ? uint((i >> 1) * 4 + 2 * s + (i & 1)) : uint((2 * s + (i >> 2)) * 4 + (i & 3));
}

int qlev(int v, int bits) { return bits == 4 ? (v * 15 + 127) / 255 : (v * 31 + 127) / 255; }
int xq(int v, int bits) { return bits == 4 ? (v << 4) | v : (v << 3) | (v >> 2); }
ivec3 xq3(ivec3 q, int bits) { return ivec3(xq(q.x, bits), xq(q.y, bits), xq(q.z, bits)); }

// The half being searched (one invocation's private copy): its hn pixels (the opaque ones, in order).
ivec3 hpx[8];
int hkx[8];
int hn;
ivec3 hsum, hsq;
ivec3 wt;
int W;
uint omask;  // opaque pixels of the block (all 16 unless ETC_A1)
bool tr;     // ETC_A1 and some pixel is transparent

// Opaque pixels of half s of flip.
int half_count(int flip, int s)
{
    int n = 0;
    [[unroll]] for (int i = 0; i < 8; i++) n += int((omask >> half_px(flip, s, i)) & 1u);
    return n;
}

void load_half(uint base, int flip, int h)
{
    hsum = ivec3(0);
    hsq = ivec3(0);
    hn = 0;
    [[unroll]] for (int i = 0; i < 8; i++) {
        const uint p = half_px(flip, h, i);
#if ETC_A1
        hpx[i] = ivec3(0);
        hkx[i] = 0;
        if (((omask >> p) & 1u) == 0u) continue;
        ivec3 c = rgb(s_px[base + p]);
        hpx[hn] = c;
        hkx[hn] = wt.x * c.x + wt.y * c.y + wt.z * c.z;
#else
        ivec3 c = rgb(s_px[base + p]);
        hpx[i] = c;
        hkx[i] = wt.x * c.x + wt.y * c.y + wt.z * c.z;
#endif
        hsum += c;
        hsq += c * c;
        hn++;
    }
}

// G_t(K) of the 8 tables into g; returns their minimum. (Transparent A1: the +-a entries are 0.)
int half_g(int K, out int g[8])
{
    [[unroll]] for (int t = 0; t < 8; t++) g[t] = 0;
    [[unroll]] for (int i = 0; i < 8; i++) {
        if (i >= HN) break;
        const int aq = abs(hkx[i] - K);
        [[unroll]] for (int t = 0; t < 8; t++) {
            const int a = ETC_MOD[t * 4], b = ETC_MOD[t * 4 + 1];
            const int ea = TR ? 0 : W * a * a - 2 * a * aq;
            g[t] += min(ea, W * b * b - 2 * b * aq);
        }
    }
    int m = g[0];
    [[unroll]] for (int t = 1; t < 8; t++) m = min(m, g[t]);
    return m;
}

// sub_best: exact best error over the tables of base b (8-bit); table in tb.
uint sub_best(ivec3 b, out int tb)
{
    const int K = wt.x * b.x + wt.y * b.y + wt.z * b.z;
    int g[8];
    half_g(K, g);
    ivec3 bs = hsq - 2 * b * hsum + HN * b * b;
    const int base_sq = wt.x * bs.x + wt.y * bs.y + wt.z * bs.z;
    const int lo = min(b.x, min(b.y, b.z)), hi = max(b.x, max(b.y, b.z));
    uint best = 0xffffffffu;
    tb = 0;
    [[unroll]] for (int t = 0; t < 8; t++) {
        const int mb = ETC_MOD[t * 4 + 1];
        if (lo - mb >= 0 && hi + mb <= 255) {
            uint e = uint(base_sq + g[t]);
            if (e < best) {
                best = e;
                tb = t;
            }
        }
    }
    [[unroll]] for (int t = 0; t < 8; t++) {
        const int mb = ETC_MOD[t * 4 + 1];
        if (lo - mb >= 0 && hi + mb <= 255) continue;
        ivec3 pal[4];
        [[unroll]] for (int j = 0; j < 4; j++) {
            const int mod = (TR && j == 0) ? 0 : ETC_MOD[t * 4 + j];
            pal[j] = clamp(b + ivec3(mod), ivec3(0), ivec3(255));
        }
        uint e = 0u; // stops once above the best, as the CPU's loop (such a table is not taken either way; helper etc2th)
        [[unroll]] for (int i = 0; i < 8; i++) {
            if (i >= HN || e > best) break;
            uint be = 0xffffffffu;
            [[unroll]] for (int j = 0; j < 4; j++) {
                if (TR && j == 2) continue;
                ivec3 d = hpx[i] - pal[j];
                be = min(be, uint(wt.x * d.x * d.x + wt.y * d.y * d.y + wt.z * d.z * d.z));
            }
            e += be;
        }
        if (e < best || (e == best && t < tb)) {
            best = e;
            tb = t;
        }
    }
    return best;
}

// top_insert (etc1_enc.c): s with its model score into the sorted top list me / mq (mn entries, at most cap): a stable
// insertion (after equal scores), nothing when s is already listed or the list is full and score is not below its last.
void top_insert(SCORE score, ivec3 s, int cap, inout SCORE me[4], inout ivec3 mq[4], inout int mn)
{
    if (TOPFIX != 0u) {
        // rank = entries not above score (the list is sorted); rank == cap: not taken (full, score >= last)
        bool dup = false;
        int rank = 0;
        [[unroll]] for (int i = 0; i < 4; i++) {
            dup = dup || (i < mn && mq[i] == s);
            rank += (i < mn && me[i] <= score) ? 1 : 0;
        }
        if (dup || rank >= cap) return;
        [[unroll]] for (int i = 3; i >= 1; i--) {
            if (i > rank) {
                me[i] = me[i - 1];
                mq[i] = mq[i - 1];
            }
        }
        [[unroll]] for (int i = 0; i < 4; i++) {
            if (i == rank) {
                me[i] = score;
                mq[i] = s;
            }
        }
        mn = min(mn + 1, cap);
        return;
    }
    bool dup = false;
    for (int i = 0; i < mn; i++) dup = dup || mq[i] == s;
    if (dup) return;
    if (mn == cap && score >= me[mn - 1]) return;
    int i = mn < cap ? mn++ : mn - 1;
    while (i > 0 && me[i - 1] > score) {
        me[i] = me[i - 1];
        mq[i] = mq[i - 1];
        i--;
    }
    me[i] = score;
    mq[i] = s;
}

// the staircase point of offset k: the quantised colour of the half's rounded mean m0 + k, clamped to the box
ivec3 walk_point(int bits, ivec3 m0, int k, ivec3 blo, ivec3 bhi)
{
    ivec3 s;
    for (int ch = 0; ch < 3; ch++) s[ch] = qlev(clamp(m0[ch] + k, 0, 255), bits);
    return clamp(s, blo, bhi);
}

// The staircase walk over the offsets k0..k1 (k0 a point of the walk's grid), each new colour into the model top list;
// prev: the colour of the walk's point before k0 (ivec3(-1): none). The colours of the walk never repeat after they
// change (each channel's level is monotone in k), so the whole walk equals its two halves walked in order.
void walk(int bits, ivec3 blo, ivec3 bhi, int k0, int k1, int kstep, ivec3 prev, int cap, inout SCORE me[4],
          inout ivec3 mq[4], inout int mn)
{
    const ivec3 m0 = (2 * hsum + ivec3(HN)) / (2 * HN);
    for (int k = k0; k <= k1;) {
        int nk = k + kstep;
        if (kstep == 1) {
            nk = k1 + 1;
            for (int ch = 0; ch < 3; ch++) {
                const int v = m0[ch] + k;
                if (v >= 255) continue;
                const int l = qlev(max(v, 0), bits) + 1;
                const int next = bits == 4 ? Q4_FIRST[l] : Q5_FIRST[l];
                nk = min(nk, next - m0[ch]);
            }
        }
        const int kc = k;
        k = nk;
        const ivec3 s = walk_point(bits, m0, kc, blo, bhi);
        if (s == prev) continue;
        prev = s;
        const ivec3 e8 = xq3(s, bits);
        const ivec3 u = hsum - HN * e8;
        const int d = wt.x * u.x * u.x + wt.y * u.y * u.y + wt.z * u.z * u.z;
        int g[8];
        const int gmin = half_g(wt.x * e8.x + wt.y * e8.y + wt.z * e8.z, g);
#if ETC_A1
        precise double score = etc_div(double(d), double(HN)) + double(gmin);
#else
        const int score = d + 8 * gmin;
#endif
        top_insert(score, s, cap, me, mq, mn);
    }
}

// sub_search's exact evaluation of the model top list mq[0..mn-1]: the list sorted by exact error into le / lq
// (stable), its length returned.
int exact_list(int bits, ivec3 mq[4], int mn, out uint le[4], out uint lq[4])
{
    int n = 0;
    if (TOPFIX != 0u) {
        [[unroll]] for (int c = 0; c < 4; c++) {
            if (c >= mn) break;
            int t;
            const uint e = sub_best(xq3(mq[c], bits), t);
            const uint qw = uint(mq[c].x) | (uint(mq[c].y) << 5u) | (uint(mq[c].z) << 10u) | (uint(t) << 15u);
            int rank = 0;
            [[unroll]] for (int j = 0; j < 4; j++) rank += (j < n && le[j] <= e) ? 1 : 0;
            [[unroll]] for (int j = 3; j >= 1; j--) {
                if (j > rank) {
                    le[j] = le[j - 1];
                    lq[j] = lq[j - 1];
                }
            }
            [[unroll]] for (int j = 0; j < 4; j++) {
                if (j == rank) {
                    le[j] = e;
                    lq[j] = qw;
                }
            }
            n++;
        }
        return n;
    }
    for (int c = 0; c < mn; c++) {
        int t;
        const uint e = sub_best(xq3(mq[c], bits), t);
        const uint qw = uint(mq[c].x) | (uint(mq[c].y) << 5u) | (uint(mq[c].z) << 10u) | (uint(t) << 15u);
        int j = n++;
        while (j > 0 && le[j - 1] > e) {
            le[j] = le[j - 1];
            lq[j] = lq[j - 1];
            j--;
        }
        le[j] = e;
        lq[j] = qw;
    }
    return n;
}

// sub_search: the staircase walk, the model top list, exact evaluation; the list (sorted by exact error)
// into le / lq, its length returned. An empty half (RGB A1): one candidate, colour blo, error 0.
int sub_search(int bits, ivec3 blo, ivec3 bhi, int krange, int kstep, int top, out uint le[4], out uint lq[4])
{
    if (HN == 0) {
        le[0] = 0u;
        lq[0] = uint(blo.x) | (uint(blo.y) << 5u) | (uint(blo.z) << 10u);
        return 1;
    }
    const int cap = min(top, 4);
    int mn = 0;
    SCORE me[4];
    ivec3 mq[4];
    walk(bits, blo, bhi, -krange, krange, kstep, ivec3(-1), cap, me, mq, mn);
    return exact_list(bits, mq, mn, le, lq);
}

ivec3 qof(uint qw) { return ivec3(int(qw & 31u), int((qw >> 5u) & 31u), int((qw >> 10u) & 31u)); }

bool delta_ok(uint qa, uint qb)
{
    ivec3 d = qof(qb) - qof(qa);
    return all(greaterThanEqual(d, ivec3(-4))) && all(lessThanEqual(d, ivec3(3)));
}

// The best solution so far (invocation 0 of a block).
uint b_err, b_q0, b_q1;
int b_mode, b_flip;

void consider(int mode, int flip, uint ea, uint qa, uint eb, uint qb)
{
    const uint e = ea + eb;
    if (e >= b_err) return;
    b_err = e;
    b_mode = mode;
    b_flip = flip;
    b_q0 = qa;
    b_q1 = qb;
}

uint swap32(uint v) { return (v >> 24u) | ((v >> 8u) & 0xff00u) | ((v << 8u) & 0xff0000u) | (v << 24u); }

#if ETC_A1
// quant_near (etc1_enc.c) for 5 bits: the level whose expanded value is nearest (lowest on ties).
int qnear5(int v)
{
    if (v <= 0) return 0;
    if (v >= 255) return 31;
    const int l = (v * 31 + 127) / 255;
    int best = l, bd = abs(xq(l, 5) - v);
    if (l > 0) {
        const int d = v - xq(l - 1, 5);
        if (d < bd) {
            bd = d;
            best = l - 1;
        }
    }
    if (l < 31) {
        const int d = xq(l + 1, 5) - v;
        if (d < bd) best = l + 1;
    }
    return best;
}

// kiln__etc1_fast for an opaque RGB A1 block (a1: always differential, the second colour pulled into
// the delta box of the first): into b_*.
void etc1_fast_a1(uint base)
{
    for (int flip = 0; flip < 2; flip++) {
        ivec3 q5[2];
        int tb[2];
        uint e = 0u;
        [[unroll]] for (int s = 0; s < 2; s++) {
            ivec3 sum = ivec3(0);
            [[unroll]] for (int i = 0; i < 8; i++) sum += rgb(s_px[base + half_px(flip, s, i)]);
            const ivec3 m = (2 * sum + ivec3(8)) / 16;
            q5[s] = ivec3(qnear5(m.x), qnear5(m.y), qnear5(m.z));
        }
        q5[1] = q5[0] + clamp(q5[1] - q5[0], ivec3(-4), ivec3(3));
        [[unroll]] for (int s = 0; s < 2; s++) {
            const ivec3 b = xq3(q5[s], 5);
            ivec3 sq = ivec3(0), sum = ivec3(0);
            int kx[8];
            [[unroll]] for (int i = 0; i < 8; i++) {
                const ivec3 c = rgb(s_px[base + half_px(flip, s, i)]);
                sum += c;
                sq += c * c;
                kx[i] = wt.x * c.x + wt.y * c.y + wt.z * c.z;
            }
            const ivec3 bs = sq - 2 * b * sum + 8 * b * b;
            const int bsq = wt.x * bs.x + wt.y * bs.y + wt.z * bs.z;
            const int K = wt.x * b.x + wt.y * b.y + wt.z * b.z;
            int et[8];
            [[unroll]] for (int t = 0; t < 8; t++) {
                const int a = ETC_MOD[t * 4], bb = ETC_MOD[t * 4 + 1];
                int acc = 0;
                [[unroll]] for (int i = 0; i < 8; i++) {
                    const int aq = abs(kx[i] - K);
                    acc += min(W * a * a - 2 * a * aq, W * bb * bb - 2 * bb * aq);
                }
                et[t] = acc;
            }
            int bt = 0;
            [[unroll]] for (int t = 1; t < 8; t++)
                if (et[t] < et[bt]) bt = t;
            tb[s] = bt;
            const int r = bsq + et[bt];
            e += uint(max(r, 0));
        }
        if (e < b_err) {
            b_err = e;
            b_mode = 1;
            b_flip = flip;
            b_q0 = uint(q5[0].x) | (uint(q5[0].y) << 5u) | (uint(q5[0].z) << 10u) | (uint(tb[0]) << 15u);
            b_q1 = uint(q5[1].x) | (uint(q5[1].y) << 5u) | (uint(q5[1].z) << 10u) | (uint(tb[1]) << 15u);
        }
    }
}
#endif

// The opaque pixels of the block whose pixels start at s_px[base] (all 16 unless ETC_A1).
uint block_mask(uint base)
{
    uint m = 0xffffu;
#if ETC_A1
    m = 0u;
    for (uint p = 0u; p < 16u; p++)
        if ((s_px[base + p] >> 24u) >= pc.athr) m |= 1u << p;
#endif
    return m;
}

// BOXSKIP: step 3's sequence for the block of invocations g..g+7 up to flip `flip`'s box searches, without the
// box results (they only lower the best error): ub gets the best error then (>= the CPU's), and the result says
// whether the CPU can reach that flip's box searches (not when the free optima's sum reaches ub, nor when they fit).
bool boxes_reached(uint g, int flip, out uint ub)
{
    uint be = 0xffffffffu;
    bool reach = false;
    for (int f = 0; f <= flip; f++) {
        const uint li = g + uint(4 * f), ld = li + 2u;
        reach = false;
        if (ETC_A1 == 0) be = min(be, s_le[li * 4u] + s_le[(li + 1u) * 4u]);
        const int n0 = half_count(f, 0), n1 = half_count(f, 1);
        if (n0 == 0 || n1 == 0) {
            be = min(be, s_le[(n0 != 0 ? ld : ld + 1u) * 4u]);
            continue;
        }
        if (s_le[ld * 4u] + s_le[(ld + 1u) * 4u] >= be) continue;
        bool found = false;
        for (int i = 0; i < s_ln[ld]; i++)
            for (int j = 0; j < s_ln[ld + 1u]; j++) {
                const uint qa = s_lq[ld * 4u + uint(i)], qb = s_lq[(ld + 1u) * 4u + uint(j)];
                if (!delta_ok(qa, qb)) continue;
                be = min(be, s_le[ld * 4u + uint(i)] + s_le[(ld + 1u) * 4u + uint(j)]);
                if (i == 0 && j == 0) found = true;
            }
        reach = !found;
    }
    ub = be;
    return reach;
}

// Step 2's box search of invocation j (flip, side, k from j & 7) into s_be[j] / s_bq[j]; the block's pixels at
// s_px[(j >> 3) * 16], omask / tr already that block's.
void box_search(uint j, int krange, int kstep, int box_exact)
{
    const uint gj = j & ~7u, rj = j & 7u;
    const int flip = int(rj >> 2u), side = int((rj >> 1u) & 1u), k = int(rj & 1u);
    const uint la = gj + uint(4 * flip + 2 + side);
    const ivec3 a = qof(s_lq[la * 4u + uint(k)]);
    ivec3 lo = side == 0 ? a - ivec3(4) : a - ivec3(3);
    ivec3 hi = side == 0 ? a + ivec3(3) : a + ivec3(4);
    lo = max(lo, ivec3(0));
    hi = min(hi, ivec3(31));
    load_half((j >> 3u) * 16u, flip, 1 - side);
    uint le[4], lq[4];
    sub_search(5, lo, hi, krange, kstep, box_exact, le, lq);
    s_be[j] = le[0];
    s_bq[j] = lq[0];
}

// Step 3: the CPU's sequence (flip 0 individual, flip 0 differential with its pruning, flip 1 ...) on the block's lists
// (invocations g..g+7) into b_*.
void replay_seq(uint g, uint base, bool fast_path, int box_top)
{
    b_err = 0xffffffffu;
    b_mode = 1;
    b_flip = 0;
    b_q0 = 0u;
    b_q1 = 0u;
#if ETC_A1
    if (fast_path) etc1_fast_a1(base);
#endif
    for (int flip = 0; flip < 2 && !fast_path; flip++) {
        const uint li = g + uint(4 * flip), ld = li + 2u;
        if (ETC_A1 == 0) consider(0, flip, s_le[li * 4u], s_lq[li * 4u], s_le[(li + 1u) * 4u], s_lq[(li + 1u) * 4u]);
        const int n0 = half_count(flip, 0), n1 = half_count(flip, 1);
        if (n0 == 0 || n1 == 0) {
            // a half without opaque pixels takes the other one's colour, table 0, error 0
            const uint lf = n0 != 0 ? ld : ld + 1u;
            const uint qf = s_lq[lf * 4u];
            if (n0 != 0)
                consider(1, flip, s_le[lf * 4u], qf, 0u, qf & 0x7fffu);
            else
                consider(1, flip, 0u, qf & 0x7fffu, s_le[lf * 4u], qf);
            continue;
        }
        if (s_le[ld * 4u] + s_le[(ld + 1u) * 4u] >= b_err) continue;
        bool found = false;
        for (int i = 0; i < s_ln[ld]; i++)
            for (int j = 0; j < s_ln[ld + 1u]; j++) {
                const uint qa = s_lq[ld * 4u + uint(i)], qb = s_lq[(ld + 1u) * 4u + uint(j)];
                if (!delta_ok(qa, qb)) continue;
                consider(1, flip, s_le[ld * 4u + uint(i)], qa, s_le[(ld + 1u) * 4u + uint(j)], qb);
                if (i == 0 && j == 0) found = true;
            }
        if (found) continue;
        for (int side = 0; side < 2; side++) {
            const uint la = ld + uint(side);
            const uint other_free = s_le[(ld + uint(1 - side)) * 4u];
            for (int k = 0; k < box_top && k < s_ln[la]; k++) {
                const uint ea = s_le[la * 4u + uint(k)], qa = s_lq[la * 4u + uint(k)];
                if (ea + other_free >= b_err) continue;
                const uint bi = g + uint(4 * flip + 2 * side + k);
                if (side == 0)
                    consider(1, flip, ea, qa, s_be[bi], s_bq[bi]);
                else
                    consider(1, flip, s_be[bi], s_bq[bi], ea, qa);
            }
        }
    }
}

// kiln__etc_reselect of the solution b_* for the pixels p0..p1-1: their selector bits (lo) and error
void selectors(uint base, uint p0, uint p1, out uint lo, out uint err)
{
    // reselect: nearest of the 4 clamped colours, first minimum (transparent A1: +-a are 0, selector 2
    // is the transparent pixel's and no other's)
    const int bits = b_mode == 1 ? 5 : 4;
    const ivec3 c0 = xq3(qof(b_q0), bits), c1 = xq3(qof(b_q1), bits);
    const int t0 = int((b_q0 >> 15u) & 7u), t1 = int((b_q1 >> 15u) & 7u);
    lo = 0u;
    err = 0u;
    for (uint p = p0; p < p1; p++) {
        const uint x = p & 3u, y = p >> 2u;
        const uint j = x * 4u + y;
        if (((omask >> p) & 1u) == 0u) {
            lo |= 1u << (16u + j);
            continue;
        }
        const bool h1 = b_flip != 0 ? y >= 2u : x >= 2u;
        const ivec3 c = rgb(s_px[base + p]);
        const ivec3 bc = h1 ? c1 : c0;
        const int t = h1 ? t1 : t0;
        uint be = 0xffffffffu, bk = 0u;
        [[unroll]] for (int k = 0; k < 4; k++) {
            if (TR && k == 2) continue;
            const int mod = (TR && k == 0) ? 0 : ETC_MOD[t * 4 + k];
            ivec3 d = c - clamp(bc + ivec3(mod), ivec3(0), ivec3(255));
            uint e = uint(wt.x * d.x * d.x + wt.y * d.y * d.y + wt.z * d.z * d.z);
            if (e < be) {
                be = e;
                bk = uint(k);
            }
        }
        err += be;
        lo |= ((bk >> 1u) << (16u + j)) | ((bk & 1u) << j);
    }
}

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    const uint g = lid & ~7u;  // first invocation of the block
    const uint r = lid & 7u;
    const uint base = (lid >> 3u) * 16u;
    const uint block = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * (WG / 8u) + (lid >> 3u);
    const bool live = block < pc.nblocks;
    wt = ivec3(pc.w0, pc.w1, pc.w2);
    W = pc.w0 + pc.w1 + pc.w2;
    // effort_for (etc1_enc.c): staircase range / step, top, box_top, box_exact
    const int krange = pc.quality == 0 ? 0 : (pc.quality == 1 ? 8 : (pc.quality == 2 ? 16 : 32));
    const int kstep = (pc.quality >= 3 || pc.quality == 0) ? 1 : 2;
    const int top = pc.quality >= 3 ? 4 : (pc.quality == 0 ? 1 : 2);
    const int box_top = pc.quality >= 3 ? 2 : 1;
    const int box_exact = pc.quality >= 3 ? 2 : 1;
    for (uint i = 0u; i < 2u; i++) {
        const uint p = r * 2u + i;
        if (live) {
            uint x = min((block % pc.bx) * 4u + (p & 3u), pc.width - 1u);
            uint y = min((block / pc.bx) * 4u + (p >> 2u), pc.height - 1u);
            s_px[base + p] = src.w[y * pc.width + x];
        } else {
            s_px[base + p] = 0u;
        }
    }
    if (lid == 0u) s_njob = 0u;
    barrier();
    omask = block_mask(base);
    tr = omask != 0xffffu;
    // RGB A1 at FAST, opaque block: kiln__etc1_fast (step 3), no search
    const bool fast_path = pc.quality == 0 && !tr;

    // ---- 1. the 8 free searches: (flip, individual / differential, half)
    if (!fast_path) {
        const int flip = int(r >> 2u), bits = (r & 2u) != 0u ? 5 : 4, h = int(r & 1u);
        uint le[4], lq[4];
        int n = 0;
        // RGB A1 has no individual mode; a half whose other half is empty is searched with top 1
        if (ETC_A1 == 0 || bits == 5) {
            load_half(base, flip, h);
            const int t = half_count(flip, 1 - h) == 0 ? 1 : top;
            n = sub_search(bits, ivec3(0), ivec3((1 << bits) - 1), krange, kstep, t, le, lq);
        }
        for (int i = 0; i < 4; i++) {
            s_le[lid * 4u + uint(i)] = i < n ? le[i] : 0xffffffffu;
            s_lq[lid * 4u + uint(i)] = i < n ? lq[i] : 0u;
        }
        s_ln[lid] = n;
    }
    barrier();

    // ---- 2. the 8 delta-box searches: (flip, side, k)
    if (!fast_path) {
        const int flip = int(r >> 2u), side = int((r >> 1u) & 1u), k = int(r & 1u);
        const uint la = g + uint(4 * flip + 2 + side); // list of the differential search of half `side`
        bool run = k < box_top && k < s_ln[la] && half_count(flip, 0) > 0 && half_count(flip, 1) > 0;
        if (BOXSKIP != 0u && run) {
            uint ub;
            run = boxes_reached(g, flip, ub) && s_le[la * 4u + uint(k)] + s_le[(g + uint(4 * flip + 3 - side)) * 4u] < ub;
        }
        s_be[lid] = 0xffffffffu;
        s_bq[lid] = 0u;
        if (run) {
            if (BOXSKIP == 2u)
                s_job[atomicAdd(s_njob, 1u)] = lid;
            else
                box_search(lid, krange, kstep, box_exact);
        }
    }
    if (BOXSKIP == 2u) {
        // the listed searches, one per invocation from the first (each with its block's opaque pixels)
        barrier();
        const uint nj = s_njob;
        for (uint i = lid; i < nj; i += WG) {
            const uint j = s_job[i];
            omask = block_mask((j >> 3u) * 16u);
            tr = omask != 0xffffu;
            box_search(j, krange, kstep, box_exact);
        }
        omask = block_mask(base);
        tr = omask != 0xffffu;
    }
    barrier();

    // ---- 3. the CPU's sequence, selectors, pack
    // every invocation of a block replays the sequence (the same values) and takes pixels 2 r, 2 r + 1
    if (live && omask != 0u) {
        replay_seq(g, base, fast_path, box_top);
        uint lo, err;
        selectors(base, 2u * r, 2u * r + 2u, lo, err);
        s_slo[lid] = lo;
        s_ser[lid] = err;
    }
    barrier();
    if (r != 0u || !live) return;
    if (omask == 0u) {
        // RGB A1, no opaque pixel: differential, every selector 2 (transparent), opaque bit 0
        if (OUT4 != 0u) {
            dst.w[block * 4u] = 0u;
            dst.w[block * 4u + 1u] = 0u;
            dst.w[block * 4u + 2u] = 0u;
            dst.w[block * 4u + 3u] = swap32(0xffff0000u);
        } else {
            dst.w[block * 2u] = 0u;
            dst.w[block * 2u + 1u] = swap32(0xffff0000u);
        }
        return;
    }
    uint lo = 0u, err = 0u;
    for (uint i = 0u; i < 8u; i++) {
        lo |= s_slo[g + i];
        err += s_ser[g + i];
    }
    const ivec3 q0 = qof(b_q0), q1 = qof(b_q1);
    const int t0 = int((b_q0 >> 15u) & 7u), t1 = int((b_q1 >> 15u) & 7u);
    uint hi;
    if (b_mode == 1) {
        ivec3 d = q1 - q0;
        hi = (uint(q0.x) << 27) | ((uint(d.x) & 7u) << 24) | (uint(q0.y) << 19) | ((uint(d.y) & 7u) << 16) |
             (uint(q0.z) << 11) | ((uint(d.z) & 7u) << 8) | (TR ? 0u : 2u);
    } else {
        hi = (uint(q0.x) << 28) | (uint(q1.x) << 24) | (uint(q0.y) << 20) | (uint(q1.y) << 16) | (uint(q0.z) << 12) |
             (uint(q1.z) << 8);
    }
    hi |= (uint(t0) << 5) | (uint(t1) << 2) | uint(b_flip);
    if (OUT4 != 0u) {
        dst.w[block * 4u] = err;
        dst.w[block * 4u + 1u] = 0u;
        dst.w[block * 4u + 2u] = swap32(hi);
        dst.w[block * 4u + 3u] = swap32(lo);
    } else {
        dst.w[block * 2u] = swap32(hi);
        dst.w[block * 2u + 1u] = swap32(lo);
    }
}

#version 450
#extension GL_EXT_control_flow_attributes : require
// enc_etc1_q.comp - kiln's GPU design of the ETC1 encoder at qualities NORMAL, HIGH and MAX, bit-identical
// to the CPU's search (src/codec/etc1_enc.c kiln__etc1_search for an opaque block, no dithering): the
// same staircase walk, the same model ranking (the CPU's double d / n + G_min is compared here as the
// exact integer d + 8 G_min: n = 8, d an integer, so the order is the same), the same exact errors and
// every tie-break of top_insert, sub_best, consider and the selector re-choice.
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
// Barriers only (no subgroup operations): correct for every subgroup size. The fixed 8-wide loops are
// unrolled (lavapipe caps the loop iterations of an invocation, see enc_etc1_seed.comp).
// Input (binding 0): the image's RGBA8 words. Output (binding 1): 2 words per block (big-endian bytes).
layout(local_size_x = 64) in;

layout(push_constant) uniform Push {
    uint width, height; // image size
    uint bx;            // blocks per row
    uint nblocks;
    int w0, w1, w2;     // channel weights (1,1,1 or the perceptual 38,75,15)
    int quality;        // kiln_quality: 1 normal, 2 high, 3 max
} pc;

layout(std430, binding = 0) readonly buffer Src { uint w[]; } src;
layout(std430, binding = 1) writeonly buffer Dst { uint w[]; } dst;

#include "etc_tables.glsl"

// First 8-bit value of each level (kiln__etc_q5_first / _q4_first), then 256.
const int Q5_FIRST[33] = int[33](0, 5, 13, 21, 29, 38, 46, 54, 62, 70, 79, 87, 95, 103, 112, 120, 128, 136, 144, 153,
                                 161, 169, 177, 186, 194, 202, 210, 218, 227, 235, 243, 251, 256);
const int Q4_FIRST[17] = int[17](0, 9, 26, 43, 60, 77, 94, 111, 128, 145, 162, 179, 196, 213, 230, 247, 256);

shared uint s_px[128];
shared uint s_le[64 * 4]; // candidate lists: exact error
shared uint s_lq[64 * 4]; //                  colour (3 x 5 bits) | table << 15
shared int s_ln[64];
shared uint s_be[64];     // box searches: best exact error (0xffffffff: not run)
shared uint s_bq[64];

ivec3 rgb(uint v) { return ivec3(int(v & 255u), int((v >> 8u) & 255u), int((v >> 16u) & 255u)); }

// Row-major pixel index of the i-th texel (0..7) of half s (the CPU's order: p ascending).
uint half_px(int flip, int s, int i)
{
    return flip == 0 ? uint((i >> 1) * 4 + 2 * s + (i & 1)) : uint((2 * s + (i >> 2)) * 4 + (i & 3));
}

int qlev(int v, int bits) { return bits == 4 ? (v * 15 + 127) / 255 : (v * 31 + 127) / 255; }
int xq(int v, int bits) { return bits == 4 ? (v << 4) | v : (v << 3) | (v >> 2); }
ivec3 xq3(ivec3 q, int bits) { return ivec3(xq(q.x, bits), xq(q.y, bits), xq(q.z, bits)); }

// The half being searched (one invocation's private copy).
ivec3 hpx[8];
int hkx[8];
ivec3 hsum, hsq;
ivec3 wt;
int W;

void load_half(uint base, int flip, int h)
{
    hsum = ivec3(0);
    hsq = ivec3(0);
    [[unroll]] for (int i = 0; i < 8; i++) {
        ivec3 c = rgb(s_px[base + half_px(flip, h, i)]);
        hpx[i] = c;
        hkx[i] = wt.x * c.x + wt.y * c.y + wt.z * c.z;
        hsum += c;
        hsq += c * c;
    }
}

// G_t(K) of the 8 tables into g; returns their minimum.
int half_g(int K, out int g[8])
{
    [[unroll]] for (int t = 0; t < 8; t++) g[t] = 0;
    [[unroll]] for (int i = 0; i < 8; i++) {
        const int aq = abs(hkx[i] - K);
        [[unroll]] for (int t = 0; t < 8; t++) {
            const int a = ETC_MOD[t * 4], b = ETC_MOD[t * 4 + 1];
            g[t] += min(W * a * a - 2 * a * aq, W * b * b - 2 * b * aq);
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
    ivec3 bs = hsq - 2 * b * hsum + 8 * b * b;
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
        [[unroll]] for (int j = 0; j < 4; j++) pal[j] = clamp(b + ivec3(ETC_MOD[t * 4 + j]), ivec3(0), ivec3(255));
        uint e = 0u;
        [[unroll]] for (int i = 0; i < 8; i++) {
            uint be = 0xffffffffu;
            [[unroll]] for (int j = 0; j < 4; j++) {
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

// sub_search: the staircase walk, the model top list, exact evaluation; the list (sorted by exact error)
// into le / lq, its length returned.
int sub_search(int bits, ivec3 blo, ivec3 bhi, int krange, int kstep, int top, out uint le[4], out uint lq[4])
{
    const int cap = min(top, 4);
    int mn = 0;
    int me[4];
    ivec3 mq[4];
    ivec3 prev = ivec3(-1);
    const ivec3 m0 = (2 * hsum + ivec3(8)) / 16;
    for (int k = -krange; k <= krange;) {
        int nk = k + kstep;
        if (kstep == 1) {
            nk = krange + 1;
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
        ivec3 s;
        for (int ch = 0; ch < 3; ch++) s[ch] = qlev(clamp(m0[ch] + kc, 0, 255), bits);
        s = clamp(s, blo, bhi);
        if (s == prev) continue;
        prev = s;
        const ivec3 e8 = xq3(s, bits);
        const ivec3 u = hsum - 8 * e8;
        const int d = wt.x * u.x * u.x + wt.y * u.y * u.y + wt.z * u.z * u.z;
        int g[8];
        const int score = d + 8 * half_g(wt.x * e8.x + wt.y * e8.y + wt.z * e8.z, g);
        // top_insert
        bool dup = false;
        for (int i = 0; i < mn; i++) dup = dup || mq[i] == s;
        if (dup) continue;
        if (mn == cap && score >= me[mn - 1]) continue;
        int i = mn < cap ? mn++ : mn - 1;
        while (i > 0 && me[i - 1] > score) {
            me[i] = me[i - 1];
            mq[i] = mq[i - 1];
            i--;
        }
        me[i] = score;
        mq[i] = s;
    }
    int n = 0;
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

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    const uint g = lid & ~7u;  // first invocation of the block
    const uint r = lid & 7u;
    const uint base = (lid >> 3u) * 16u;
    const uint block = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 8u + (lid >> 3u);
    const bool live = block < pc.nblocks;
    wt = ivec3(pc.w0, pc.w1, pc.w2);
    W = pc.w0 + pc.w1 + pc.w2;
    // effort_for (etc1_enc.c): staircase range / step, top, box_top, box_exact
    const int krange = pc.quality == 1 ? 8 : (pc.quality == 2 ? 16 : 32);
    const int kstep = pc.quality >= 3 ? 1 : 2;
    const int top = pc.quality >= 3 ? 4 : 2;
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
    barrier();

    // ---- 1. the 8 free searches: (flip, individual / differential, half)
    {
        const int flip = int(r >> 2u), bits = (r & 2u) != 0u ? 5 : 4, h = int(r & 1u);
        load_half(base, flip, h);
        uint le[4], lq[4];
        const int n = sub_search(bits, ivec3(0), ivec3((1 << bits) - 1), krange, kstep, top, le, lq);
        for (int i = 0; i < 4; i++) {
            s_le[lid * 4u + uint(i)] = i < n ? le[i] : 0xffffffffu;
            s_lq[lid * 4u + uint(i)] = i < n ? lq[i] : 0u;
        }
        s_ln[lid] = n;
    }
    barrier();

    // ---- 2. the 8 delta-box searches: (flip, side, k)
    {
        const int flip = int(r >> 2u), side = int((r >> 1u) & 1u), k = int(r & 1u);
        const uint la = g + uint(4 * flip + 2 + side); // list of the differential search of half `side`
        uint be = 0xffffffffu, bq = 0u;
        if (k < box_top && k < s_ln[la]) {
            const ivec3 a = qof(s_lq[la * 4u + uint(k)]);
            ivec3 lo = side == 0 ? a - ivec3(4) : a - ivec3(3);
            ivec3 hi = side == 0 ? a + ivec3(3) : a + ivec3(4);
            lo = max(lo, ivec3(0));
            hi = min(hi, ivec3(31));
            load_half(base, flip, 1 - side);
            uint le[4], lq[4];
            sub_search(5, lo, hi, krange, kstep, box_exact, le, lq);
            be = le[0];
            bq = lq[0];
        }
        s_be[lid] = be;
        s_bq[lid] = bq;
    }
    barrier();

    // ---- 3. the CPU's sequence, selectors, pack
    if (r != 0u || !live) return;
    b_err = 0xffffffffu;
    b_mode = 1;
    b_flip = 0;
    b_q0 = 0u;
    b_q1 = 0u;
    for (int flip = 0; flip < 2; flip++) {
        const uint li = g + uint(4 * flip), ld = li + 2u;
        consider(0, flip, s_le[li * 4u], s_lq[li * 4u], s_le[(li + 1u) * 4u], s_lq[(li + 1u) * 4u]);
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
    // reselect: nearest of the 4 clamped colours, first minimum
    const int bits = b_mode == 1 ? 5 : 4;
    const ivec3 c0 = xq3(qof(b_q0), bits), c1 = xq3(qof(b_q1), bits);
    const int t0 = int((b_q0 >> 15u) & 7u), t1 = int((b_q1 >> 15u) & 7u);
    uint lo = 0u;
    for (uint p = 0u; p < 16u; p++) {
        const uint x = p & 3u, y = p >> 2u;
        const bool h1 = b_flip != 0 ? y >= 2u : x >= 2u;
        const ivec3 c = rgb(s_px[base + p]);
        const ivec3 bc = h1 ? c1 : c0;
        const int t = h1 ? t1 : t0;
        uint be = 0xffffffffu, bk = 0u;
        [[unroll]] for (int k = 0; k < 4; k++) {
            ivec3 d = c - clamp(bc + ivec3(ETC_MOD[t * 4 + k]), ivec3(0), ivec3(255));
            uint e = uint(wt.x * d.x * d.x + wt.y * d.y * d.y + wt.z * d.z * d.z);
            if (e < be) {
                be = e;
                bk = uint(k);
            }
        }
        const uint j = x * 4u + y;
        lo |= ((bk >> 1u) << (16u + j)) | ((bk & 1u) << j);
    }
    const ivec3 q0 = qof(b_q0), q1 = qof(b_q1);
    uint hi;
    if (b_mode == 1) {
        ivec3 d = q1 - q0;
        hi = (uint(q0.x) << 27) | ((uint(d.x) & 7u) << 24) | (uint(q0.y) << 19) | ((uint(d.y) & 7u) << 16) |
             (uint(q0.z) << 11) | ((uint(d.z) & 7u) << 8) | 2u;
    } else {
        hi = (uint(q0.x) << 28) | (uint(q1.x) << 24) | (uint(q0.y) << 20) | (uint(q1.y) << 16) | (uint(q0.z) << 12) |
             (uint(q1.z) << 8);
    }
    hi |= (uint(t0) << 5) | (uint(t1) << 2) | uint(b_flip);
    dst.w[block * 2u] = swap32(hi);
    dst.w[block * 2u + 1u] = swap32(lo);
}

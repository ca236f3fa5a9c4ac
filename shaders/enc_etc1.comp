#version 450
// enc_etc1.comp - kiln's GPU design of the ETC1 encoder at quality FAST, bit-identical to the CPU's fast
// path (src/codec/etc_enc_fast.c fast_body with etc2 = 0, and its 16-lane twin etc_enc_batch.c): integer
// arithmetic only, the same formulas, the same tie-breaks.
//
// 4 invocations per block, 16 blocks per workgroup of 64 (no invocation idles):
//  1. the block's 16 texels go to shared memory (each invocation loads one row);
//  2. invocation r = 2 flip + h takes half h of configuration `flip` (flip 0: columns 0-1 / 2-3, flip 1:
//     rows 0-1 / 2-3): both halves' means quantised to 555 (differential when the two fit the 3-bit
//     delta) else 444, then the exact unclamped error model of its half for all 8 tables
//     (sum_i min(W a^2 - 2a |k_i - K|, W b^2 - 2b |k_i - K|) + the base term from the moments), the
//     first minimum table, into shared memory;
//  3. min-reduction of the 2 flips (flip 1 only when strictly lower, as the CPU), then invocation r
//     chooses the selectors of row r (closed form for an unclamped half: sign of k - K and 2|k - K| >
//     W (a + b); nearest of the 4 clamped colours, first minimum, for a clamped half);
//  4. the 4 selector words are OR-ed; invocation 0 of the block packs and writes it.
// ETC2 (specialisation constant 1) = 1: ETC2 RGB at quality FAST (fast_body with etc2 = 1): the ETC1
// result's exact error (the model of an unclamped half, the selected colours' error of a clamped one),
// then planar from the closed-form fit when the least-squares residual test passes, kept when strictly
// better; a block whose error still exceeds the T/H threshold (push constant th) is flagged (word
// 2 nblocks + block of the output = the block's error, nonzero; 0 = not flagged) and T / H follows: on
// the host with the CPU's fast path, or on the GPU (etc2_fast_state.comp + the T / H pass, helper
// etcring), so the bytes are the CPU's. The 64-bit quantities of the CPU (residual test)
// are computed as pairs of 32-bit words: no 64-bit integer capability needed.
// Barriers only (no subgroup operations): correct for every subgroup size.
// Input (binding 0): the image's RGBA8 words. Output (binding 1): 2 words per block (big-endian bytes),
// then (ETC2) one flag word per block.
layout(local_size_x = 64) in;
layout(constant_id = 1) const int ETC2 = 0;

layout(push_constant) uniform Push {
    uint width, height; // image size
    uint bx;            // blocks per row
    uint nblocks;
    int w0, w1, w2;     // channel weights (1,1,1 or the perceptual 38,75,15)
    uint th;            // ETC2: the T/H threshold on the block's error (ETC_FAST_TH_ERR * 16 * W / 3)
} pc;

layout(std430, binding = 0) readonly buffer Src { uint w[]; } src;
layout(std430, binding = 1) writeonly buffer Dst { uint w[]; } dst;

#include "etc_tables.glsl"

shared uint s_px[256];
shared int s_model[64];
shared uint s_half[64]; // quantised colour (3 x 5 bits) | table << 15 | fits << 18
shared uint s_sel[64];
shared uint s_ce[128]; // ETC2: per invocation and half, the error of its clamped-half pixels

uint read_px(uint block, uint p)
{
    uint x = min((block % pc.bx) * 4u + (p & 3u), pc.width - 1u);
    uint y = min((block / pc.bx) * 4u + (p >> 2u), pc.height - 1u);
    return src.w[y * pc.width + x];
}

ivec3 rgb(uint v) { return ivec3(int(v & 255u), int((v >> 8u) & 255u), int((v >> 16u) & 255u)); }

// Row-major pixel index of the i-th texel (0..7) of half s.
uint half_px(int flip, int s, int i)
{
    return flip == 0 ? uint((i >> 1) * 4 + 2 * s + (i & 1)) : uint((2 * s + (i >> 2)) * 4 + (i & 3));
}

// kiln__etc_q5 / _q4 (nearest level by expanded value): round(v * qmax / 255) for 8-bit v.
ivec3 quant(ivec3 m, int qmax) { return (m * qmax + ivec3(127)) / 255; }
ivec3 x4(ivec3 q) { return (q << 4) | q; }
ivec3 x5(ivec3 q) { return (q << 3) | (q >> 2); }

// 64-bit unsigned helpers (x = high, y = low word).
uvec2 mul64(uint a, uint b)
{
    uint hi, lo;
    umulExtended(a, b, hi, lo);
    return uvec2(hi, lo);
}
uvec2 add64(uvec2 a, uvec2 b)
{
    uint carry;
    uint lo = uaddCarry(a.y, b.y, carry);
    return uvec2(a.x + b.x + carry, lo);
}
bool less64(uvec2 a, uvec2 b) { return a.x < b.x || (a.x == b.x && a.y < b.y); }

uint swap32(uint v) { return (v >> 24u) | ((v >> 8u) & 0xff00u) | ((v << 8u) & 0xff0000u) | (v << 24u); }

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    const uint g = lid & ~3u;
    const uint r = lid & 3u;
    const uint block = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 16u + (lid >> 2u);
    const bool live = block < pc.nblocks;
    const ivec3 wt = ivec3(pc.w0, pc.w1, pc.w2);
    const int W = pc.w0 + pc.w1 + pc.w2;
    for (uint i = 0u; i < 4u; i++) s_px[g * 4u + r * 4u + i] = live ? read_px(block, r * 4u + i) : 0u;
    barrier();

    // ---- 2. one half of one flip
    {
        const int flip = int(r >> 1u), h = int(r & 1u);
        ivec3 sum[2], sq[2];
        for (int s = 0; s < 2; s++) {
            sum[s] = ivec3(0);
            sq[s] = ivec3(0);
            for (int i = 0; i < 8; i++) {
                ivec3 c = rgb(s_px[g * 4u + half_px(flip, s, i)]);
                sum[s] += c;
                sq[s] += c * c;
            }
        }
        ivec3 m0 = (sum[0] + ivec3(4)) >> 3, m1 = (sum[1] + ivec3(4)) >> 3;
        ivec3 d = quant(m1, 31) - quant(m0, 31);
        const bool fits = all(greaterThanEqual(d, ivec3(-4))) && all(lessThanEqual(d, ivec3(3)));
        ivec3 qh = fits ? quant(h == 0 ? m0 : m1, 31) : quant(h == 0 ? m0 : m1, 15);
        ivec3 b = fits ? x5(qh) : x4(qh);
        ivec3 su = sum[h], sqq = sq[h];
        ivec3 bt = sqq - 2 * b * su + 8 * b * b;
        int base = wt.x * bt.x + wt.y * bt.y + wt.z * bt.z;
        int K = wt.x * b.x + wt.y * b.y + wt.z * b.z;
        int aq[8];
        for (int i = 0; i < 8; i++) {
            ivec3 c = rgb(s_px[g * 4u + half_px(flip, h, i)]);
            aq[i] = abs(wt.x * c.x + wt.y * c.y + wt.z * c.z - K);
        }
        int be = 0, tb = 0;
        for (int t = 0; t < 8; t++) {
            const int a = ETC_MOD[t * 4], bb = ETC_MOD[t * 4 + 1];
            const int ca = W * a * a, cb = W * bb * bb;
            int acc = 0;
            for (int i = 0; i < 8; i++) acc += min(ca - 2 * a * aq[i], cb - 2 * bb * aq[i]);
            if (t == 0 || acc < be) {
                be = acc;
                tb = t;
            }
        }
        s_model[lid] = base + be;
        s_half[lid] = uint(qh.x) | (uint(qh.y) << 5u) | (uint(qh.z) << 10u) | (uint(tb) << 15u) | (fits ? 1u << 18u : 0u);
    }
    barrier();

    // ---- 3. the lower flip (ties: flip 0), the selectors of row r
    const int bflip = (s_model[g + 2u] + s_model[g + 3u] < s_model[g] + s_model[g + 1u]) ? 1 : 0;
    uint hw[2];
    ivec3 b8[2];
    int tab[2], K[2], thr[2];
    bool unc[2];
    for (int h = 0; h < 2; h++) {
        hw[h] = s_half[g + uint(2 * bflip + h)];
        ivec3 q = ivec3(int(hw[h] & 31u), int((hw[h] >> 5u) & 31u), int((hw[h] >> 10u) & 31u));
        b8[h] = (hw[h] & (1u << 18u)) != 0u ? x5(q) : x4(q);
        tab[h] = int((hw[h] >> 15u) & 7u);
        const int a = ETC_MOD[tab[h] * 4], bb = ETC_MOD[tab[h] * 4 + 1];
        int lo = min(b8[h].x, min(b8[h].y, b8[h].z)), hi = max(b8[h].x, max(b8[h].y, b8[h].z));
        unc[h] = lo - bb >= 0 && hi + bb <= 255;
        K[h] = wt.x * b8[h].x + wt.y * b8[h].y + wt.z * b8[h].z;
        thr[h] = W * (a + bb);
    }
    uint sel = 0u, ce0 = 0u, ce1 = 0u;
    for (uint x = 0u; x < 4u; x++) {
        const uint p = r * 4u + x, y = r;
        const int h = int(bflip != 0 ? y >> 1u : x >> 1u);
        const ivec3 c = rgb(s_px[g * 4u + p]);
        uint msb, lsb;
        if (unc[h]) {
            int q = wt.x * c.x + wt.y * c.y + wt.z * c.z - K[h];
            msb = q < 0 ? 1u : 0u;
            lsb = 2 * abs(q) > thr[h] ? 1u : 0u;
        } else {
            int bestd = 0x7fffffff, idx = 0;
            for (int k = 0; k < 4; k++) {
                ivec3 dd = c - clamp(b8[h] + ivec3(ETC_MOD[tab[h] * 4 + k]), ivec3(0), ivec3(255));
                int e = wt.x * dd.x * dd.x + wt.y * dd.y * dd.y + wt.z * dd.z * dd.z;
                if (e < bestd) {
                    bestd = e;
                    idx = k;
                }
            }
            msb = uint(idx) >> 1u;
            lsb = uint(idx) & 1u;
            if (h == 0) ce0 += uint(bestd);
            else ce1 += uint(bestd);
        }
        const uint j = x * 4u + y;
        sel |= (msb << (16u + j)) | (lsb << j);
    }
    s_sel[lid] = sel;
    s_ce[2u * lid] = ce0;
    s_ce[2u * lid + 1u] = ce1;
    barrier();

    // ---- 4. pack
    if (r != 0u || !live) return;
    uint lo = s_sel[g] | s_sel[g + 1u] | s_sel[g + 2u] | s_sel[g + 3u];
    ivec3 q0 = ivec3(int(hw[0] & 31u), int((hw[0] >> 5u) & 31u), int((hw[0] >> 10u) & 31u));
    ivec3 q1 = ivec3(int(hw[1] & 31u), int((hw[1] >> 5u) & 31u), int((hw[1] >> 10u) & 31u));
    uint hi;
    if ((hw[0] & (1u << 18u)) != 0u) {
        ivec3 d = q1 - q0;
        hi = (uint(q0.x) << 27) | ((uint(d.x) & 7u) << 24) | (uint(q0.y) << 19) | ((uint(d.y) & 7u) << 16) |
             (uint(q0.z) << 11) | ((uint(d.z) & 7u) << 8) | 2u;
    } else {
        hi = (uint(q0.x) << 28) | (uint(q1.x) << 24) | (uint(q0.y) << 20) | (uint(q1.y) << 16) | (uint(q0.z) << 12) |
             (uint(q1.z) << 8);
    }
    hi |= (uint(tab[0]) << 5) | (uint(tab[1]) << 2) | uint(bflip);
    uint flag = 0u;
    if (ETC2 != 0) {
        // the ETC1 result's error (half_select's return values, summed as uint32)
        uint err = 0u;
        for (int h = 0; h < 2; h++) {
            uint ch = 0u;
            for (uint i = 0u; i < 4u; i++) ch += s_ce[2u * (g + i) + uint(h)];
            err += unc[h] ? uint(s_model[g + uint(2 * bflip + h)]) : ch;
        }
        if (err != 0u) {
            // planar, when the least-squares residual leaves room: 80 resid < 80 err (64-bit)
            ivec3 a = ivec3(0), bxs = ivec3(0), bys = ivec3(0), q = ivec3(0);
            for (int p = 0; p < 16; p++) {
                ivec3 c = rgb(s_px[g * 4u + uint(p)]);
                a += c;
                bxs += (2 * (p & 3) - 3) * c;
                bys += (2 * (p >> 2) - 3) * c;
                q += c * c;
            }
            uvec2 resid = uvec2(0u);
            for (int c = 0; c < 3; c++) {
                // 80 sum c^2 - 5 s^2 - sx^2 - sy^2 >= 0 (80 x the residual of the fit), < 2^27
                uint rc = uint(80 * q[c] - 5 * a[c] * a[c] - bxs[c] * bxs[c] - bys[c] * bys[c]);
                resid = add64(resid, mul64(uint(wt[c]), rc));
            }
            if (less64(resid, mul64(80u, err))) {
                ivec3 lv[3];
                uint pe = 0u;
                for (int c = 0; c < 3; c++) {
                    const int maxl = c == 1 ? 127 : 63;
                    const int num[3] = int[3](5 * a[c] - 3 * bxs[c] - 3 * bys[c], 5 * a[c] + 5 * bxs[c] - 3 * bys[c],
                                              5 * a[c] - 3 * bxs[c] + 5 * bys[c]);
                    int e8[3];
                    for (int i = 0; i < 3; i++) {
                        const int n2 = 2 * num[i] * maxl + 80 * 255, d2 = 2 * 80 * 255;
                        int l = n2 >= 0 ? n2 / d2 : -((-n2 + d2 - 1) / d2);
                        l = clamp(l, 0, maxl);
                        lv[i][c] = l;
                        e8[i] = c == 1 ? (l << 1) | (l >> 6) : (l << 2) | (l >> 4);
                    }
                    const int o = e8[0], dh = e8[1] - e8[0], dv = e8[2] - e8[0];
                    int acc = 0;
                    for (int p = 0; p < 16; p++) {
                        int t = ((p & 3) * dh + (p >> 2) * dv + (4 * o + 2 + 2048)) >> 2;
                        t = clamp(t - 512, 0, 255);
                        const int d = t - rgb(s_px[g * 4u + uint(p)])[c];
                        acc += d * d;
                    }
                    pe += uint(acc) * uint(wt[c]);
                }
                if (pe < err) {
                    err = pe;
                    // kiln__etc_pack's planar layout, as two 32-bit words
                    const int ro = lv[0].x, go = lv[0].y, bo = lv[0].z, rh = lv[1].x, gh = lv[1].y, bh = lv[1].z;
                    const int rv = lv[2].x, gv = lv[2].y, bv = lv[2].z;
                    const int go1 = go >> 6, go2 = go & 63, bo1 = bo >> 5, bo2 = (bo >> 3) & 3, bo3a = (bo >> 1) & 3,
                              bo3b = bo & 1;
                    hi = (uint(ro) << 25) | (uint(go1) << 24) | (uint(go2) << 17) | (uint(bo1) << 16) |
                         (uint(bo2) << 11) | (uint(bo3a) << 8) | (uint(bo3b) << 7) | (uint(rh >> 1) << 2) | 2u |
                         uint(rh & 1);
                    lo = (uint(gh) << 25) | (uint(bh >> 5) << 24) | (uint(bh & 31) << 19) | (uint(rv >> 3) << 16) |
                         (uint(rv & 7) << 13) | (uint(gv >> 2) << 8) | (uint(gv & 3) << 6) | uint(bv);
                    const int r3 = ((ro & 3) << 1) | go1, g3 = ((go2 & 3) << 1) | bo1;
                    if ((ro >> 2) + (r3 >= 4 ? r3 - 8 : r3) < 0) hi |= 1u << 31;  // no R overflow
                    if ((go2 >> 2) + (g3 >= 4 ? g3 - 8 : g3) < 0) hi |= 1u << 23; // no G overflow
                    hi |= (bo2 + bo3a < 4) ? (1u << 10) : (7u << 13);             // B overflows
                }
            }
            if (err > pc.th) flag = err; // T / H: the block's error (> th, so nonzero; etc2_fast_state.comp)
        }
    }
    dst.w[block * 2u] = swap32(hi);
    dst.w[block * 2u + 1u] = swap32(lo);
    if (ETC2 != 0) dst.w[2u * pc.nblocks + block] = flag;
}

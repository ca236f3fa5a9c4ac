#version 450
// enc_etc2_seed_th.comp - pass 2 of the T/H modes of the ETC2 colour seed design (betsy): one workgroup of 960
// invocations per block, one per (endpoint pair of pass 1, distance index): 120 x 8. Each evaluates, with its
// pair (c0, c1) and distance d, T with c0 single / c1 painted +-d, T the other way round, and H (c0 +-d,
// c1 +-d; invalid when c0 = c1 and d is even, since H stores the distance's low bit as the colours' order);
// texels take the nearest paint colour (first on ties). The best of the three (first on ties) goes into a
// key (error << 10 | invocation); a parallel tree reduction in shared memory (10 steps) finds the smallest
// key, whose invocation packs and writes the block to words 0..3 of the block's candidate record (see
// enc_etc2_seed.glsl).
// PRELOAD (specialisation constant 1): 1 = the 16 texels are staged in shared memory, 0 = every use reads the
// source buffer.
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 960) in;
layout(constant_id = 1) const int PRELOAD = 1;

#include "enc_etc2_seed.glsl"
#include "etc_tables.glsl"

layout(std430, binding = 1) readonly buffer Pairs { uint w[]; } pairs;
layout(std430, binding = 2) writeonly buffer Cand { uint w[]; } cand;

shared uint s_px[16];
shared uint s_key[960];
shared int s_dist[8]; // ETC_DIST: a constant array indexed per invocation would be copied per invocation

ivec3 texel(uint block, uint p) { return rgb_of(PRELOAD != 0 ? s_px[p] : read_px(block, p)); }

ivec3 unpack444(uint v) { return ivec3(int((v >> 8u) & 15u), int((v >> 4u) & 15u), int(v & 15u)) * 17; }

// Error of the 16 texels against the 4 paint colours.
uint paint_err(uint block, ivec3 p0, ivec3 p1, ivec3 p2, ivec3 p3)
{
    uint e = 0u;
    [[unroll]] for (uint p = 0u; p < 16u; p++) {
        ivec3 v = texel(block, p);
        e += uint(min(min(sq3(v - p0), sq3(v - p1)), min(sq3(v - p2), sq3(v - p3))));
    }
    return e;
}

ivec3 sat(ivec3 c) { return clamp(c, ivec3(0), ivec3(255)); }

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    const uint local = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    const bool live = local < pc.nchunk;
    const uint block = pc.block0 + local;
    if (PRELOAD != 0 && live && lid < 16u) s_px[lid] = read_px(block, lid);
    if (lid < 8u) s_dist[lid] = ETC_DIST[lid];
    barrier();

    const uint pair = lid >> 3u;
    const int di = int(lid & 7u);
    uint best = 0xffffffffu;
    int mode = 0; // 0: T (c0 single), 1: T (c1 single), 2: H
    uint pv = 0u;
    if (live) {
        pv = pairs.w[local * 120u + pair];
        const ivec3 c0 = unpack444(pv), c1 = unpack444(pv >> 12u);
        const int d = s_dist[di];
        best = paint_err(block, c0, sat(c1 + d), c1, sat(c1 - d));
        uint e = paint_err(block, c1, sat(c0 + d), c0, sat(c0 - d));
        if (e < best) {
            best = e;
            mode = 1;
        }
        if (!((pv & 0xfffu) == (pv >> 12u) && (di & 1) == 0)) {
            e = paint_err(block, sat(c0 + d), sat(c0 - d), sat(c1 + d), sat(c1 - d));
            if (e < best) {
                best = e;
                mode = 2;
            }
        }
        best = (best << 10u) | lid;
    }
    s_key[lid] = best;
    barrier();
    for (uint s = 512u; s > 0u; s >>= 1u) {
        if (lid < s && lid + s < 960u) s_key[lid] = min(s_key[lid], s_key[lid + s]);
        barrier();
    }
    if (!live || (s_key[0] & 1023u) != lid) return;

    // the winner packs its block
    uint a = pv & 0xfffu, b = pv >> 12u;
    if (mode == 1) {
        uint t = a;
        a = b;
        b = t;
    }
    if (mode == 2 && ((a >= b) != ((di & 1) != 0))) {
        uint t = a;
        a = b;
        b = t;
    }
    const ivec3 qa = ivec3(int(a >> 8u), int((a >> 4u) & 15u), int(a & 15u));
    const ivec3 qb = ivec3(int(b >> 8u), int((b >> 4u) & 15u), int(b & 15u));
    const ivec3 ea = qa * 17, eb = qb * 17;
    const int d = s_dist[di];
    ivec3 pal[4];
    uint hi;
    if (mode == 2) {
        pal[0] = sat(ea + d);
        pal[1] = sat(ea - d);
        hi = pack_h_hi(qa, qb, di);
    } else {
        pal[0] = ea;
        pal[1] = sat(eb + d);
        hi = pack_t_hi(qa, qb, di);
    }
    pal[2] = mode == 2 ? sat(eb + d) : eb;
    pal[3] = sat(eb - d);
    uint lo = 0u, err = 0u;
    for (uint p = 0u; p < 16u; p++) {
        ivec3 v = texel(block, p);
        uint bi = 0u;
        int be = sq3(v - pal[0]);
        for (uint k = 1u; k < 4u; k++) {
            int e = sq3(v - pal[k]);
            if (e < be) {
                be = e;
                bi = k;
            }
        }
        err += uint(be);
        lo |= sel_bits(p, bi);
    }
    cand.w[block * 8u] = err;
    cand.w[block * 8u + 1u] = mode == 2 ? 3u : 2u;
    cand.w[block * 8u + 2u] = swap32(hi);
    cand.w[block * 8u + 3u] = swap32(lo);
}

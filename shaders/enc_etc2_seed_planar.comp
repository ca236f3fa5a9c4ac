#version 450
// enc_etc2_seed_planar.comp - the planar mode of the ETC2 colour seed design (betsy): 16 invocations per block,
// 4 blocks per workgroup of 64. Invocation t picks the origin texel O at (ox, oy) = (t >> 2 & 1, t >> 3) and
// the texels H at (hx, oy), hx = 3 (t & 1 = 0) or 2 (the alternate, for an outlier in the last column), and
// V at (ox, vy), vy = 3 or 2 (t & 2). It tries two planes:
//   - the 3 texels extrapolated: slopes (H - O) / (hx - ox), (V - O) / (vy - oy), the plane's O at (0, 0),
//     H at (4, 0), V at (0, 4);
//   - simple linear regression: the line fitted through texels 0..hx of row oy (slope and value at x = 0)
//     and through texels 0..vy of column ox; O = the mean of the two lines' estimates of (0, 0), H and V
//     from the slopes.
// Exact integer arithmetic (everything in 1/240 units: slopes over 1, 2 or 3 texels and regression over 3
// or 4 are exact), O / H / V rounded to the nearest 6-7-6 levels, the error (betsy's metric, see
// enc_etc2_seed.glsl) from the decoder's formula. Key = error << 5 | t << 1 | plane; a shared-memory tree
// reduction over the block's 16 finds the smallest, whose invocation writes words 4..7 of the block's
// candidate record.
// PRELOAD (specialisation constant 1): 1 = the 16 texels are staged in shared memory, 0 = every use reads the
// source buffer (betsy found direct reads faster for this pass).
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 64) in;
layout(constant_id = 1) const int PRELOAD = 1;

#include "enc_etc2_seed.glsl"

layout(std430, binding = 1) writeonly buffer Cand { uint w[]; } cand;

shared uint s_px[64];
shared uint s_key[64];

ivec3 texel(uint slot, uint block, int x, int y)
{
    uint p = uint(y * 4 + x);
    return rgb_of(PRELOAD != 0 ? s_px[slot * 16u + p] : read_px(block, p));
}

const int D = 240;

// nearest level of n + 1 levels (n = 63 or 127) of a value in 1/240 units, clamped
int qlev(int v, int n) { return (clamp(v, 0, 255 * D) * n * 2 + 255 * D) / (2 * 255 * D); }
ivec3 q676(ivec3 v) { return ivec3(qlev(v.x, 63), qlev(v.y, 127), qlev(v.z, 63)); }

// slope (1/240 units per texel) and value at 0 of the line fitted through n = 3 or 4 texels at 0..n-1
void fit(ivec3 p0, ivec3 p1, ivec3 p2, ivec3 p3, int n, out ivec3 slope, out ivec3 at0)
{
    if (n == 4) {
        slope = 24 * (2 * (p1 + 2 * p2 + 3 * p3) - 3 * (p0 + p1 + p2 + p3)); // 240 * (2 sum(x p) - 3 sum(p)) / 10
        at0 = 60 * (p0 + p1 + p2 + p3) - 3 * slope / 2;                     // mean - 1.5 slope
    } else {
        slope = 120 * (p2 - p0);                                            // 240 * (p2 - p0) / 2
        at0 = 80 * (p0 + p1 + p2) - slope;                                  // mean - slope
    }
}

uint plane_err(uint slot, uint block, ivec3 o, ivec3 h, ivec3 v)
{
    o = x676(o);
    h = x676(h);
    v = x676(v);
    uint e = 0u;
    [[unroll]] for (int y = 0; y < 4; y++)
        [[unroll]] for (int x = 0; x < 4; x++) e += uint(sq3(texel(slot, block, x, y) - planar_px(o, h, v, x, y)));
    return e;
}

// The plane of invocation t, variant k (0 extrapolated, 1 regression), as 6-7-6 levels.
void plane_of(uint slot, uint block, uint t, uint k, out ivec3 qo, out ivec3 qh, out ivec3 qv)
{
    const int ox = int((t >> 2u) & 1u), oy = int(t >> 3u);
    const int hx = (t & 1u) != 0u ? 2 : 3, vy = (t & 2u) != 0u ? 2 : 3;
    ivec3 sx, sy, o;
    if (k == 0u) {
        const ivec3 po = texel(slot, block, ox, oy);
        sx = D * (texel(slot, block, hx, oy) - po) / (hx - ox); // exact: hx - ox is 1, 2 or 3
        sy = D * (texel(slot, block, ox, vy) - po) / (vy - oy);
        o = D * po - ox * sx - oy * sy;
    } else {
        ivec3 r0, c0;
        fit(texel(slot, block, 0, oy), texel(slot, block, 1, oy), texel(slot, block, 2, oy), texel(slot, block, 3, oy),
            hx + 1, sx, r0);
        fit(texel(slot, block, ox, 0), texel(slot, block, ox, 1), texel(slot, block, ox, 2), texel(slot, block, ox, 3),
            vy + 1, sy, c0);
        o = ((r0 - oy * sy) + (c0 - ox * sx)) / 2; // in 1/240 units the mean may round by 1/480: harmless
    }
    qo = q676(o);
    qh = q676(o + 4 * sx);
    qv = q676(o + 4 * sy);
}

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    const uint slot = lid >> 4u, t = lid & 15u;
    const uint block = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 4u + slot;
    const bool live = block < pc.nblocks;
    if (PRELOAD != 0 && live) s_px[lid] = read_px(block, t);
    barrier();
    uint key = 0xffffffffu;
    if (live) {
        for (uint k = 0u; k < 2u; k++) {
            ivec3 qo, qh, qv;
            plane_of(slot, block, t, k, qo, qh, qv);
            key = min(key, (plane_err(slot, block, qo, qh, qv) << 5u) | (t << 1u) | k);
        }
    }
    s_key[lid] = key;
    barrier();
    for (uint s = 8u; s > 0u; s >>= 1u) {
        if (t < s) s_key[lid] = min(s_key[lid], s_key[lid + s]);
        barrier();
    }
    const uint win = s_key[slot * 16u];
    if (!live || ((win >> 1u) & 15u) != t) return;
    ivec3 qo, qh, qv;
    plane_of(slot, block, t, win & 1u, qo, qh, qv);
    const uvec2 hl = pack_planar(qo, qh, qv);
    cand.w[block * 8u + 4u] = win >> 5u;
    cand.w[block * 8u + 5u] = 4u;
    cand.w[block * 8u + 6u] = swap32(hl.x);
    cand.w[block * 8u + 7u] = swap32(hl.y);
}

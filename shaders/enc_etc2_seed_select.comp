#version 450
// enc_etc2_seed_select.comp - the final pass of the ETC2 colour seed design (betsy): one invocation per block
// keeps the best of the three winners: the ETC1 block of enc_etc1_seed.comp (binding 1, 2 words per block; its
// error is computed here by decoding it, betsy's metric), the T/H block and the planar block (binding 2,
// candidate records, see enc_etc2_seed.glsl). Ties go to ETC1, then T/H, then planar. Output (binding 3): the
// block's 2 words.
// PRELOAD (specialisation constant 1): 1 = the 16 texels are loaded into registers first, 0 = every use reads
// the source buffer.
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 64) in;
layout(constant_id = 1) const int PRELOAD = 1;

#include "enc_etc2_seed.glsl"
#include "etc_tables.glsl"

layout(std430, binding = 1) readonly buffer Etc1 { uint w[]; } etc1;
layout(std430, binding = 2) readonly buffer Cand { uint w[]; } cand;
layout(std430, binding = 3) writeonly buffer Dst { uint w[]; } dst;

shared int s_mod[32];

ivec3 x4(ivec3 q) { return q * 17; }
ivec3 x5(ivec3 q) { return (q << 3) | (q >> 2); }

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    const uint block = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 64u + lid;
    if (lid < 32u) s_mod[lid] = ETC_MOD[lid];
    barrier();
    if (block >= pc.nblocks) return;
    uint px[16];
    if (PRELOAD != 0)
        [[unroll]] for (uint p = 0u; p < 16u; p++) px[p] = read_px(block, p);

    // the ETC1 block's error (it is always individual or a valid differential block)
    const uint w0 = etc1.w[block * 2u], w1 = etc1.w[block * 2u + 1u];
    const uint hi = swap32(w0), lo = swap32(w1);
    ivec3 base[2];
    if ((hi & 2u) == 0u) {
        base[0] = x4(ivec3(int(hi >> 28u), int((hi >> 20u) & 15u), int((hi >> 12u) & 15u)));
        base[1] = x4(ivec3(int((hi >> 24u) & 15u), int((hi >> 16u) & 15u), int((hi >> 8u) & 15u)));
    } else {
        ivec3 b = ivec3(int(hi >> 27u), int((hi >> 19u) & 31u), int((hi >> 11u) & 31u));
        ivec3 d = ivec3(sext3(int(hi >> 24u) & 7), sext3(int(hi >> 16u) & 7), sext3(int(hi >> 8u) & 7));
        base[0] = x5(b);
        base[1] = x5(clamp(b + d, ivec3(0), ivec3(31)));
    }
    const int tab[2] = int[2](int((hi >> 5u) & 7u), int((hi >> 2u) & 7u));
    const bool flip = (hi & 1u) != 0u;
    uint e1 = 0u;
    [[unroll]] for (uint p = 0u; p < 16u; p++) {
        const uint x = p & 3u, y = p >> 2u, j = x * 4u + y;
        const uint s = flip ? uint(y >= 2u) : uint(x >= 2u);
        const uint idx = (((lo >> (16u + j)) & 1u) << 1u) | ((lo >> j) & 1u);
        const ivec3 c = clamp(base[s] + s_mod[tab[s] * 4 + int(idx)], ivec3(0), ivec3(255));
        e1 += uint(sq3(rgb_of(PRELOAD != 0 ? px[p] : read_px(block, p)) - c));
    }
    uvec2 best = uvec2(w0, w1);
    uint be = e1;
    if (cand.w[block * 8u] < be) {
        be = cand.w[block * 8u];
        best = uvec2(cand.w[block * 8u + 2u], cand.w[block * 8u + 3u]);
    }
    if (cand.w[block * 8u + 4u] < be) best = uvec2(cand.w[block * 8u + 6u], cand.w[block * 8u + 7u]);
    dst.w[block * 2u] = best.x;
    dst.w[block * 2u + 1u] = best.y;
}

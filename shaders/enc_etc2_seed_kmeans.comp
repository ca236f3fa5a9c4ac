#version 450
// enc_etc2_seed_kmeans.comp - pass 1 of the T/H modes of the ETC2 colour seed design (betsy): the endpoint
// pairs. One invocation per pair (i, j), i < j, of the block's 16 texels: 120 per block, 8 blocks per
// workgroup of 960. Each starts from the two texels quantised to RGB444 and runs k-means with k = 2 (at most
// 20 iterations): texels go to the nearer endpoint (ties to the first), each endpoint moves to its cluster's
// rounded mean quantised to 444; it stops when nothing moves or a cluster empties; when both new endpoints
// coincide only the one that moved farther moves (betsy's rule). Output: the pair as (c0 | c1 << 12), 4-bit
// levels R << 8 | G << 4 | B, at word (block - block0) * 120 + pair of binding 1.
// PRELOAD (specialisation constant 1): 1 = the 8 blocks' texels are staged in shared memory first, 0 = every
// use reads the source buffer (betsy found direct reads faster for this pass).
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 960) in;
layout(constant_id = 1) const int PRELOAD = 1;

#include "enc_etc2_seed.glsl"

layout(std430, binding = 1) writeonly buffer Pairs { uint w[]; } pairs;

shared uint s_px[8 * 16];

ivec3 texel(uint slot, uint block, uint p) { return rgb_of(PRELOAD != 0 ? s_px[slot * 16u + p] : read_px(block, p)); }

// nearest 4-bit level of 8-bit values (levels expand to q * 17)
ivec3 q4(ivec3 c) { return (c + 8) / 17; }

uint pack444(ivec3 q) { return (uint(q.x) << 8u) | (uint(q.y) << 4u) | uint(q.z); }

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    const uint slot = lid / 120u, pair = lid % 120u;
    const uint local = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 8u + slot;
    const bool live = local < pc.nchunk;
    const uint block = pc.block0 + local;
    if (PRELOAD != 0 && live && pair < 16u) s_px[slot * 16u + pair] = read_px(block, pair);
    barrier();
    if (!live) return;

    // pair -> (i, j): pairs (0, 1..15), (1, 2..15), ...
    uint i = 0u, k = pair;
    while (k >= 15u - i) {
        k -= 15u - i;
        i++;
    }
    const uint j = i + 1u + k;
    ivec3 c0 = q4(texel(slot, block, i)), c1 = q4(texel(slot, block, j));
    if (c0 != c1) {
        for (int it = 0; it < 20; it++) {
            ivec3 s0 = ivec3(0), s1 = ivec3(0);
            int n0 = 0, n1 = 0;
            [[unroll]] for (uint p = 0u; p < 16u; p++) {
                ivec3 v = texel(slot, block, p);
                if (sq3(v - c0 * 17) <= sq3(v - c1 * 17)) {
                    s0 += v;
                    n0++;
                } else {
                    s1 += v;
                    n1++;
                }
            }
            if (n0 == 0 || n1 == 0) break;
            ivec3 m0 = q4((s0 + n0 / 2) / n0), m1 = q4((s1 + n1 / 2) / n1);
            if (m0 == c0 && m1 == c1) break;
            if (m0 != m1) {
                c0 = m0;
                c1 = m1;
            } else if (sq3((m0 - c0) * 17) > sq3((m1 - c1) * 17)) {
                c0 = m0;
            } else {
                c1 = m1;
            }
        }
    }
    pairs.w[local * 120u + pair] = pack444(c0) | (pack444(c1) << 12u);
}

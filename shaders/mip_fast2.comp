#version 450
/* mip_fast2.comp - the fast box path's even stage for large levels (src/gpu/gpu_mip.c MIP_FAST_EVEN2):
 * mip_fast.comp with ONE texel of level l0+1 per invocation instead of 2 x 2 (the H100 showed mip_fast.comp
 * latency-bound: 4096^2 at 1.44x the baseline, whose invocations also make one level-1 texel each). Levels
 * l0+1 .. l0+K (1 <= K <= 5) from level l0 when both axes of level l0 are divisible by 2^K.
 *
 * A workgroup of 256 invocations owns a 32 x 32 tile of level l0; invocation (tx, ty) = (lid % 16, lid / 16)
 * reads the 2 x 2 block at (2 tx, 2 ty) (RGBA8: two 8-byte row loads, issued before the barrier that
 * publishes the tables), makes its texel of level l0+1; levels l0+2 .. l0+K go through shared memory
 * (8 x 8 -> 4 x 4 -> 2 x 2 -> 1 x 1, one barrier each). Only the stage's last level goes to the fp32 chain.
 * Arithmetic: mip_tile.comp's reduce4 (mip_fast_common.glsl), so the bytes are the same.
 *
 * Job table and bindings: mip_common.glsl; stage words used: l0, K, tiles in x (of 32 x 32 at level l0),
 * tiles in y, chain write; all of them also in the push constants (mip_fast_common.glsl). */
layout(local_size_x = 256) in;

#include "mip_common.glsl"
#include "mip_div.glsl"

layout(std430, binding = 1) readonly buffer In2 { uvec2 inw2[]; };

#include "mip_fast_common.glsl"

shared vec4 s_a[256];
shared vec4 s_b[64];

void main()
{
    uint ntx = pc.ntx, nty = pc.nty;
    uint tile = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    if (tile >= ntx * nty) return; /* whole workgroup */
    uint lid = gl_LocalInvocationIndex;
    load_lut();

    uint z = gl_WorkGroupID.z;
    uint l0 = pc.l0, K = pc.K, write_chain = pc.write_chain;
    uint flags = pc.flags;
    bool weighted = prm[P_TEX + z] != 0u;
    uint w0 = FW(l0), h0 = FH(l0);
    uint obase = z * pc.tex_out;
    uint tx = lid & 15u, ty = lid >> 4;
    uint TX = (tile % ntx) * 32u, TY = (tile / ntx) * 32u;
    uint X = TX + 2u * tx, Y = TY + 2u * ty; /* this invocation's 2 x 2 block at l0 (whole: w0, h0 even) */
    bool live = X < w0 && Y < h0;
    bool u8 = l0 == 0u && (flags & MIPF_IN_F32) == 0u;
    uvec2 r0 = uvec2(0u), r1 = uvec2(0u);
    vec4 s00 = vec4(0.0), s10 = vec4(0.0), s01 = vec4(0.0), s11 = vec4(0.0);
    if (live) {
        if (u8) { /* z * W * H, Y * w0 and X are even: 8-byte aligned pairs */
            uint b = (z * pc.tex_in + Y * w0 + X) >> 1;
            r0 = inw2[b];
            r1 = inw2[b + (w0 >> 1)];
        } else if (l0 == 0u) {
            uint b = z * pc.tex_in + Y * w0 + X;
            s00 = base_texel(b);
            s10 = base_texel(b + 1u);
            s01 = base_texel(b + w0);
            s11 = base_texel(b + w0 + 1u);
        } else {
            uint b = z * pc.tex_chain + pc.ch_in + Y * w0 + X;
            s00 = chain[b];
            s10 = chain[b + 1u];
            s01 = chain[b + w0];
            s11 = chain[b + w0 + 1u];
        }
    }
    barrier(); /* s_lut */

    uint m1 = l0 + 1u;
    vec4 v = vec4(0.0);
    if (live) {
        if (u8) {
            s00 = dec8(r0.x);
            s10 = dec8(r0.y);
            s01 = dec8(r1.x);
            s11 = dec8(r1.y);
        }
        v = reduce4(s00, s10, s01, s11, weighted);
        uint w1 = FW(m1), x = X >> 1, y = Y >> 1;
        fstore(flags, obase, pc.lout[0], y * w1 + x, v);
        if (K == 1u && write_chain != 0u) chain[z * pc.tex_chain + pc.ch_out + y * w1 + x] = v;
    }
    if (K == 1u) return; /* uniform */
    s_a[lid] = v;
    barrier();

    /* levels l0+2 .. l0+K: grids of edge e = 8, 4, 2, 1 inside the tile, ping-pong s_a (16 x 16, 4 x 4,
     * 1 x 1) / s_b (8 x 8, 2 x 2) */
    for (uint k = 2u; k <= K; k++) {
        uint e = 32u >> k, m = l0 + k;
        bool from_a = (k & 1u) == 0u;
        if (lid < e * e) {
            uint a = lid % e, c = lid / e, e2 = 2u * e;
            uint i00 = (2u * c) * e2 + 2u * a;
            vec4 q00 = from_a ? s_a[i00] : s_b[i00];
            vec4 q10 = from_a ? s_a[i00 + 1u] : s_b[i00 + 1u];
            vec4 q01 = from_a ? s_a[i00 + e2] : s_b[i00 + e2];
            vec4 q11 = from_a ? s_a[i00 + e2 + 1u] : s_b[i00 + e2 + 1u];
            vec4 u = reduce4(q00, q10, q01, q11, weighted);
            uint x = (TX >> k) + a, y = (TY >> k) + c, wm = FW(m);
            if (x < wm && y < FH(m)) {
                fstore(flags, obase, pc.lout[k - 1u], y * wm + x, u);
                if (k == K && write_chain != 0u) chain[z * pc.tex_chain + pc.ch_out + y * wm + x] = u;
            }
            if (from_a) s_b[lid] = u;
            else s_a[lid] = u;
        }
        barrier();
    }
}

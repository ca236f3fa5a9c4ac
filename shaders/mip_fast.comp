#version 450
/* mip_fast.comp - the fast box path of the GPU mip chain (src/gpu/gpu_mip.c, KILN_GPU_MIP_FAST, on by
 * default): one "even" stage makes levels l0+1 .. l0+K (1 <= K <= 6) from level l0 when every one of
 * those steps halves both axes exactly (w[l0] and h[l0] divisible by 2^K; for K = 1 merely even), so
 * every output texel is the plain 2x2 box of CPU rule 5 and no region bookkeeping is needed.
 *
 * A workgroup of 256 invocations owns a 64 x 64 tile of level l0; invocation (tx, ty) = (lid % 16,
 * lid / 16) reads the 4 x 4 block at (4 tx, 4 ty) of the tile (RGBA8: four 16-byte row loads), makes
 * its 2 x 2 texels of level l0+1 and, when K >= 2, their one texel of level l0+2 in registers; levels
 * l0+3 .. l0+K go through shared memory (16 x 16 -> 8 x 8 -> ... -> 1 x 1, one barrier each). Only the
 * stage's last level is written to the fp32 chain (when a later stage reads it); the levels in between
 * never leave the workgroup. The arithmetic is mip_tile.comp's, operation for operation (reduce4: the
 * vertical pass first, `precise`, alpha weighting with the transparent fallback and the correctly rounded
 * division), so the bytes are the same as the general path's. The byte decode and the encoders' decision
 * points (the lut, binding 4) are copied into shared memory once per workgroup.
 *
 * Job table and bindings: mip_common.glsl; the stage words used: l0, K, tiles in x (of 64 x 64 at level
 * l0), tiles in y, chain write; all of them also in the push constants (mip_fast_common.glsl). */
#extension GL_EXT_control_flow_attributes : enable

layout(local_size_x = 256) in;

#include "mip_common.glsl"
#include "mip_div.glsl"

layout(std430, binding = 1) readonly buffer In4 { uvec4 inw4[]; };

#include "mip_fast_common.glsl"

shared vec4 s_a[256];
shared vec4 s_b[64];

/* Level l0+1 texel (x, y) when inside the level: output and, for the stage's last level, the chain. */
void store1(uint flags, uint obase, uint lout, uint x, uint y, uint w1, uint h1, bool top, uint cb, vec4 v)
{
    if (x < w1 && y < h1) {
        fstore(flags, obase, lout, y * w1 + x, v);
        if (top) chain[cb + y * w1 + x] = v;
    }
}

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
    uint X = (tile % ntx) * 64u + 4u * tx, Y = (tile / ntx) * 64u + 4u * ty; /* this invocation's block at l0 */
    bool live = X < w0 && Y < h0;
    /* RGBA8 base in whole 16-byte rows: the raw words are loaded before the barrier (they overlap the table's load) */
    bool rows = live && l0 == 0u && (flags & MIPF_IN_F32) == 0u && (w0 & 3u) == 0u && (h0 & 3u) == 0u;
    uvec4 r0 = uvec4(0u), r1 = uvec4(0u), r2 = uvec4(0u), r3 = uvec4(0u);
    if (rows) {
        uint b = (z * pc.tex_in + Y * w0 + X) >> 2, rs = w0 >> 2; /* z * W * H and w0 are multiples of 4 */
        r0 = inw4[b];
        r1 = inw4[b + rs];
        r2 = inw4[b + 2u * rs];
        r3 = inw4[b + 3u * rs];
    }
    barrier(); /* s_lut */

    vec4 q0, q1, q2, q3; /* level l0+1: (0,0) (1,0) (0,1) (1,1) of the 2 x 2 */
    uint m1 = l0 + 1u, w1 = FW(m1), h1 = FH(m1);
    if (live) {
        vec4 t[16]; /* t[4 * row + col] of the 4 x 4 block */
        uint xc[4], yc[4];
        [[unroll]] for (uint i = 0u; i < 4u; i++) {
            xc[i] = min(X + i, w0 - 1u);
            yc[i] = min(Y + i, h0 - 1u);
        }
        if (rows) {
            t[0] = dec8(r0.x); t[1] = dec8(r0.y); t[2] = dec8(r0.z); t[3] = dec8(r0.w);
            t[4] = dec8(r1.x); t[5] = dec8(r1.y); t[6] = dec8(r1.z); t[7] = dec8(r1.w);
            t[8] = dec8(r2.x); t[9] = dec8(r2.y); t[10] = dec8(r2.z); t[11] = dec8(r2.w);
            t[12] = dec8(r3.x); t[13] = dec8(r3.y); t[14] = dec8(r3.z); t[15] = dec8(r3.w);
        } else if (l0 == 0u && (flags & MIPF_IN_F32) == 0u) {
            uint b = z * pc.tex_in;
            [[unroll]] for (uint r = 0u; r < 4u; r++)
                [[unroll]] for (uint c = 0u; c < 4u; c++) t[4u * r + c] = dec8(inw[b + yc[r] * w0 + xc[c]]);
        } else if (l0 == 0u) {
            uint b = z * pc.tex_in;
            [[unroll]] for (uint r = 0u; r < 4u; r++)
                [[unroll]] for (uint c = 0u; c < 4u; c++) t[4u * r + c] = base_texel(b + yc[r] * w0 + xc[c]);
        } else {
            uint b = z * pc.tex_chain + pc.ch_in;
            [[unroll]] for (uint r = 0u; r < 4u; r++)
                [[unroll]] for (uint c = 0u; c < 4u; c++) t[4u * r + c] = chain[b + yc[r] * w0 + xc[c]];
        }
        q0 = reduce4(t[0], t[1], t[4], t[5], weighted);
        q1 = reduce4(t[2], t[3], t[6], t[7], weighted);
        q2 = reduce4(t[8], t[9], t[12], t[13], weighted);
        q3 = reduce4(t[10], t[11], t[14], t[15], weighted);
        uint lout = pc.lout[0], x1 = X >> 1, y1 = Y >> 1;
        bool top = K == 1u && write_chain != 0u;
        uint cb = z * pc.tex_chain + pc.ch_out;
        store1(flags, obase, lout, x1, y1, w1, h1, top, cb, q0);
        store1(flags, obase, lout, x1 + 1u, y1, w1, h1, top, cb, q1);
        store1(flags, obase, lout, x1, y1 + 1u, w1, h1, top, cb, q2);
        store1(flags, obase, lout, x1 + 1u, y1 + 1u, w1, h1, top, cb, q3);
    }
    if (K == 1u) return; /* uniform */

    /* level l0+2: one texel per live invocation (w[l0] divisible by 4: the block is whole) */
    uint m2 = l0 + 2u;
    vec4 v2 = vec4(0.0);
    if (live) {
        v2 = reduce4(q0, q1, q2, q3, weighted);
        uint x = X >> 2, y = Y >> 2, w2 = FW(m2);
        fstore(flags, obase, pc.lout[1], y * w2 + x, v2);
        if (K == 2u && write_chain != 0u) chain[z * pc.tex_chain + pc.ch_out + y * w2 + x] = v2;
    }
    if (K == 2u) return;
    s_a[lid] = v2;
    barrier();

    /* levels l0+3 .. l0+K: grids of edge e = 8, 4, 2, 1 inside the tile, ping-pong s_a (16 x 16, 4 x 4,
     * 1 x 1) / s_b (8 x 8, 2 x 2) */
    uint TX = (tile % ntx) * 64u, TY = (tile / ntx) * 64u;
    for (uint k = 3u; k <= K; k++) {
        uint e = 64u >> k, m = l0 + k;
        bool from_a = (k & 1u) == 1u;
        if (lid < e * e) {
            uint a = lid % e, c = lid / e, e2 = 2u * e;
            uint i00 = (2u * c) * e2 + 2u * a;
            vec4 s00 = from_a ? s_a[i00] : s_b[i00];
            vec4 s10 = from_a ? s_a[i00 + 1u] : s_b[i00 + 1u];
            vec4 s01 = from_a ? s_a[i00 + e2] : s_b[i00 + e2];
            vec4 s11 = from_a ? s_a[i00 + e2 + 1u] : s_b[i00 + e2 + 1u];
            vec4 v = reduce4(s00, s10, s01, s11, weighted);
            uint x = (TX >> k) + a, y = (TY >> k) + c, wm = FW(m);
            if (x < wm && y < FH(m)) {
                fstore(flags, obase, pc.lout[k - 1u], y * wm + x, v);
                if (k == K && write_chain != 0u) chain[z * pc.tex_chain + pc.ch_out + y * wm + x] = v;
            }
            if (from_a) s_b[lid] = v;
            else s_a[lid] = v;
        }
        barrier();
    }
}

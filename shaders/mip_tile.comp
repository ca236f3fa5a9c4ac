#version 450
/* mip_tile.comp - one "stage" of a mipmap chain (src/gpu/gpu_mip.c): levels l0+1 .. l0+K made from
 * level l0 by a workgroup of 256 invocations per tile of T x T texels of level t = l0+K.
 *
 * For each level m = l0+1 .. t the workgroup computes the REGION of level m its tile depends on:
 * level t's region is the tile; level m's is the set of texels level m+1's region reads (exact box
 * taps: 2 on an even axis, 3 on an odd one (the NP2 kernel), 1 on an axis of size 1), so regions grow
 * by at most one texel to the right/bottom per level on odd axes, and neighbouring workgroups
 * recompute that overlap (as nvpro_pyramid's general pipeline does). Regions of levels < t live in
 * shared memory (ping-pong A/B, sized on the host: gpu_mip.c checks every stage fits). Each texel of
 * every level is WRITTEN (quantised output, and fp32 chain at level t when a later stage reads it) by
 * exactly one workgroup: the one whose "own" range holds it (the tile at level t, its 2:1 preimage
 * below, with the last row/column of an odd axis given to the last tile).
 *
 * Shuffle levels (stage word 6, SHUFFLE > 0; used by the `subgroup` and `pyramid` strategies on stages
 * where level l0+1's region is exactly 16 x 16 and levels l0+1 .. l0+SHUFFLE are even): invocation v =
 * gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID (a bijection on 0..255 with full
 * subgroups) holds the level-(l0+1) texel at the Morton position of v; level l0+1+j is reduced with
 * subgroupShuffleXor by 1<<2j, 2<<2j, 3<<2j, which stays inside a subgroup for 4^(j+1) <= size: the
 * shader takes min(SHUFFLE, log4(gl_SubgroupSize)) levels so, any size 4..256 works, and no relation
 * between gl_SubgroupInvocationID and gl_LocalInvocationIndex is assumed. The remaining levels go
 * through shared memory as above.
 *
 * Single pass (push constant single_pass = 1; one dispatch of stage 0's tiles): when a workgroup has
 * written its tile of stage s (s < last), its invocations make their chain writes available
 * (memoryBarrierBuffer = device-scope release fence; `coherent` buffer), meet at barrier(), and
 * invocation 0 increments the arrival counter of every stage-(s+1) tile whose source region touches
 * this tile. The increment that completes a counter (old == number of tiles that region touches - 1)
 * makes this workgroup continue with that tile, after an acquire fence (memoryBarrierBuffer) and a
 * barrier(). No workgroup ever waits for another (no forward-progress assumption); the last
 * arriver of each region does the work (AMD SPD's idea, per tile instead of one global counter, so
 * the later stages still run on many workgroups and any size works). Tiles won at once go on a small
 * per-workgroup stack. z = texture of a batch (counters per texture). */
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_shuffle : enable

layout(local_size_x = 256) in;

#include "mip_common.glsl"

layout(push_constant) uniform Push {
    uint stage;
    uint single_pass;
} pc;

#define SH_A 1296u /* 36 x 36 */
#define SH_B 400u  /* 20 x 20 (gpu_mip.c MIP_SH_B) */
shared vec4 shA[SH_A];
shared vec4 shB[SH_B];

uint ST(uint s, uint i) { return prm[P_STAGE + 8u * s + i]; }

uint ntaps(uint d) { return d == 1u ? 1u : 2u + (d & 1u); }
uint tap0(uint d, uint x) { return d == 1u ? 0u : 2u * x; }

#include "mip_div.glsl"

void axis_weights(uint d, uint x, out float w0, out float w1, out float w2)
{
    if (d == 1u) {
        w0 = 1.0; w1 = 0.0; w2 = 0.0;
    } else if ((d & 1u) == 0u) {
        w0 = 0.5; w1 = 0.5; w2 = 0.0;
    } else {
        uint n = d >> 1;
        float fd = float(d);
        w0 = div_rn(float(n - x), fd);
        w1 = div_rn(float(n), fd);
        w2 = div_rn(float(x + 1u), fd);
    }
}

/* source modes: 0 the base image, 1 the chain level, 2 shared A, 3 shared B (region origin ox, oy, width rw) */
vec4 fetch(uint mode, uint z, uint ls, uint x, uint y, uvec3 reg)
{
    if (mode == 0u) return base_texel(z * prm[4] + y * LW(0u) + x);
    if (mode == 1u) return chain[z * prm[5] + LCH(ls) + y * LW(ls) + x];
    uint i = (y - reg.y) * reg.z + (x - reg.x);
    return mode == 2u ? shA[i] : shB[i];
}

/* Texel (x, y) of level ls+1 from level ls (CPU rules 4, 5 and 7: vertical pass first, fixed order). */
vec4 reduce(uint mode, uint z, uint ls, uint x, uint y, uvec3 reg, bool weighted)
{
    uint dw = LW(ls), dh = LH(ls);
    uint tx = ntaps(dw), ty = ntaps(dh), x0 = tap0(dw, x), y0 = tap0(dh, y);
    float wx[3], wy[3];
    axis_weights(dw, x, wx[0], wx[1], wx[2]);
    axis_weights(dh, y, wy[0], wy[1], wy[2]);
    precise vec4 o = vec4(0.0), op = vec4(0.0);
    for (uint j = 0u; j < tx; j++) {
        precise vec4 t = vec4(0.0), tp = vec4(0.0);
        for (uint k = 0u; k < ty; k++) {
            vec4 s = fetch(mode, z, ls, x0 + j, y0 + k, reg);
            precise vec4 e = weighted ? vec4(s.a * s.r, s.a * s.g, s.a * s.b, s.a) : s;
            if (k == 0u) {
                t = wy[0] * e;
                tp = wy[0] * s;
            } else {
                t = t + wy[k] * e;
                tp = tp + wy[k] * s;
            }
        }
        if (j == 0u) {
            o = wx[0] * t;
            op = wx[0] * tp;
        } else {
            o = o + wx[j] * t;
            op = op + wx[j] * tp;
        }
    }
    if (weighted) {
        float a = o.a;
        return a > 0.0 ? vec4(div_rn(o.r, a), div_rn(o.g, a), div_rn(o.b, a), a) : vec4(op.rgb, a);
    }
    return o;
}

/* 2x2 box of four texels at (0,0) (1,0) (0,1) (1,1), CPU order (even axes: weights 1/2). */
vec4 reduce4(vec4 s00, vec4 s10, vec4 s01, vec4 s11, bool weighted)
{
    if (!weighted) {
        precise vec4 t0 = 0.5 * s00 + 0.5 * s01;
        precise vec4 t1 = 0.5 * s10 + 0.5 * s11;
        precise vec4 o = 0.5 * t0 + 0.5 * t1;
        return o;
    }
    precise vec4 e00 = vec4(s00.a * s00.rgb, s00.a), e10 = vec4(s10.a * s10.rgb, s10.a);
    precise vec4 e01 = vec4(s01.a * s01.rgb, s01.a), e11 = vec4(s11.a * s11.rgb, s11.a);
    precise vec4 t0 = 0.5 * e00 + 0.5 * e01;
    precise vec4 t1 = 0.5 * e10 + 0.5 * e11;
    precise vec4 o = 0.5 * t0 + 0.5 * t1;
    precise vec4 p0 = 0.5 * s00 + 0.5 * s01;
    precise vec4 p1 = 0.5 * s10 + 0.5 * s11;
    precise vec4 op = 0.5 * p0 + 0.5 * p1;
    float a = o.a;
    return a > 0.0 ? vec4(div_rn(o.r, a), div_rn(o.g, a), div_rn(o.b, a), a) : vec4(op.rgb, a);
}

/* Region (lo.xy, hi.xy) of level l0+k and own range, k = K .. 1. */
uvec4 g_reg[7];
uvec4 g_own[7];

void regions(uint l0, uint K, uint T, uint tile, uint ntx)
{
    uint t = l0 + K;
    uint tx = tile % ntx, ty = tile / ntx;
    uvec4 r = uvec4(tx * T, ty * T, min(tx * T + T, LW(t)), min(ty * T + T, LH(t)));
    g_reg[K] = r;
    g_own[K] = r;
    for (uint k = K - 1u; k >= 1u; k--) {
        uint m = l0 + k, w = LW(m), h = LH(m);
        uvec4 n = g_reg[k + 1u];
        g_reg[k] = uvec4(tap0(w, n.x), tap0(h, n.y), tap0(w, n.z - 1u) + ntaps(w), tap0(h, n.w - 1u) + ntaps(h));
        uvec4 o = g_own[k + 1u];
        g_own[k] = uvec4(w == 1u ? 0u : 2u * o.x, h == 1u ? 0u : 2u * o.y, o.z == LW(m + 1u) ? w : 2u * o.z,
                         o.w == LH(m + 1u) ? h : 2u * o.w);
    }
}

/* Source region of level l0 (what level l0+1's region reads). */
uvec4 source_region(uint l0)
{
    uint w = LW(l0), h = LH(l0);
    uvec4 n = g_reg[1];
    return uvec4(tap0(w, n.x), tap0(h, n.y), tap0(w, n.z - 1u) + ntaps(w), tap0(h, n.w - 1u) + ntaps(h));
}

bool inside(uvec4 r, uint x, uint y) { return x >= r.x && x < r.z && y >= r.y && y < r.w; }

uint morton_x(uint v) { return (v & 1u) | ((v >> 1) & 2u) | ((v >> 2) & 4u) | ((v >> 3) & 8u); }
uint morton_y(uint v) { return ((v >> 1) & 1u) | ((v >> 2) & 2u) | ((v >> 3) & 4u) | ((v >> 4) & 8u); }

void process(uint s, uint tile, uint z)
{
    uint l0 = ST(s, 0u), K = ST(s, 1u), T = ST(s, 2u), ntx = ST(s, 3u);
    uint shuffle = ST(s, 6u), write_chain = ST(s, 7u);
    bool weighted = prm[P_TEX + z] != 0u;
    regions(l0, K, T, tile, ntx);
    uint lid = gl_LocalInvocationIndex;
    uint src_mode = l0 == 0u ? 0u : 1u;
    uvec3 src_reg = uvec3(0u);
    uint kstart = 1u;

    if (shuffle > 0u) {
        /* level l0+1's region is 16 x 16 (the host checked); one texel per invocation */
        uint sl = min(shuffle, uint(findMSB(gl_SubgroupSize)) >> 1);
        uint v = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
        uint mx = morton_x(v), my = morton_y(v);
        uint x = g_reg[1].x + mx, y = g_reg[1].y + my;
        vec4 val = reduce(src_mode, z, l0, x, y, src_reg, weighted);
        store_out(z, l0 + 1u, x, y, val);
        if (K == 1u && write_chain != 0u) chain[z * prm[5] + LCH(l0 + 1u) + y * LW(l0 + 1u) + x] = val;
        for (uint j = 0u; j < sl; j++) {
            uint b = 1u << (2u * j);
            vec4 vx = subgroupShuffleXor(val, b);
            vec4 vy = subgroupShuffleXor(val, 2u * b);
            vec4 vd = subgroupShuffleXor(val, 3u * b);
            uint step = 1u << j; /* texel spacing of level l0+1+j in level-(l0+1) units */
            bool px = (mx & step) != 0u, py = (my & step) != 0u;
            vec4 s00 = px ? (py ? vd : vx) : (py ? vy : val);
            vec4 s10 = px ? (py ? vy : val) : (py ? vd : vx);
            vec4 s01 = px ? (py ? vx : vd) : (py ? val : vy);
            vec4 s11 = px ? (py ? val : vy) : (py ? vx : vd);
            val = reduce4(s00, s10, s01, s11, weighted);
            uint m = l0 + 2u + j;
            uint lx = (mx >> (j + 1u)), ly = (my >> (j + 1u));
            if (((mx | my) & (2u * step - 1u)) == 0u) {
                uint gx = (g_reg[1].x >> (j + 1u)) + lx, gy = (g_reg[1].y >> (j + 1u)) + ly;
                store_out(z, m, gx, gy, val);
                if (m == l0 + K && write_chain != 0u) chain[z * prm[5] + LCH(m) + gy * LW(m) + gx] = val;
            }
        }
        kstart = 2u + sl;
        if (kstart <= K) {
            /* deposit level l0+kstart-1 (region (16 >> sl)^2) where the shared loop expects it */
            uint k = kstart - 1u;
            uint edge = 16u >> sl;
            if (((mx | my) & ((1u << sl) - 1u)) == 0u) {
                uint i = (my >> sl) * edge + (mx >> sl);
                if ((k & 1u) == 1u) shA[i] = val;
                else shB[i] = val;
            }
            barrier();
            src_mode = (k & 1u) == 1u ? 2u : 3u;
            src_reg = uvec3(g_reg[k].xy, g_reg[k].z - g_reg[k].x);
        }
    }

    for (uint k = kstart; k <= K; k++) {
        uint m = l0 + k;
        uvec4 r = g_reg[k];
        uint rw = r.z - r.x, n = rw * (r.w - r.y);
        for (uint i = lid; i < n; i += 256u) {
            uint x = r.x + i % rw, y = r.y + i / rw;
            vec4 v = reduce(src_mode, z, m - 1u, x, y, src_reg, weighted);
            if (k < K) {
                if ((k & 1u) == 1u) shA[i] = v;
                else shB[i] = v;
            }
            if (inside(g_own[k], x, y)) {
                store_out(z, m, x, y, v);
                if (k == K && write_chain != 0u) chain[z * prm[5] + LCH(m) + y * LW(m) + x] = v;
            }
        }
        barrier();
        src_mode = (k & 1u) == 1u ? 2u : 3u;
        src_reg = uvec3(r.xy, rw);
    }
}

shared uint stk_stage[64];
shared uint stk_tile[64];
shared uint stk_n;

void main()
{
    uint z = gl_WorkGroupID.z;
    uint tile = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    uint s = pc.stage;
    if (tile >= ST(s, 3u) * ST(s, 4u)) return; /* whole workgroup */
    process(s, tile, z);
    if (pc.single_pass == 0u) return;

    uint lid = gl_LocalInvocationIndex;
    uint nst = prm[3];
    if (lid == 0u) stk_n = 0u;
    for (;;) {
        if (s + 1u < nst) {
            memoryBarrierBuffer(); /* release this workgroup's chain writes (device scope) */
            barrier();
            if (lid == 0u) {
                uint ps = s + 1u;
                uint l0 = ST(ps, 0u), K = ST(ps, 1u), T = ST(ps, 2u), ntx = ST(ps, 3u), nty = ST(ps, 4u);
                uint Tc = ST(s, 2u), ntxc = ST(s, 3u);
                uint cx = tile % ntxc, cy = tile / ntxc;
                uvec4 child = uvec4(cx * Tc, cy * Tc, min(cx * Tc + Tc, LW(l0)), min(cy * Tc + Tc, LH(l0)));
                uint span = T << K;
                uint px0 = child.x / span, py0 = child.y / span;
                for (uint py = py0 > 0u ? py0 - 1u : 0u; py <= min(py0 + 1u, nty - 1u); py++) {
                    for (uint px = px0 > 0u ? px0 - 1u : 0u; px <= min(px0 + 1u, ntx - 1u); px++) {
                        regions(l0, K, T, py * ntx + px, ntx);
                        uvec4 src = source_region(l0);
                        if (src.x >= child.z || child.x >= src.z || src.y >= child.w || child.y >= src.w) continue;
                        uint need = ((src.z - 1u) / Tc - src.x / Tc + 1u) * ((src.w - 1u) / Tc - src.y / Tc + 1u);
                        uint old = atomicAdd(ctr[ST(ps, 5u) + z * ntx * nty + py * ntx + px], 1u);
                        if (old == need - 1u) {
                            stk_stage[stk_n] = ps;
                            stk_tile[stk_n] = py * ntx + px;
                            stk_n++;
                        }
                    }
                }
                memoryBarrierBuffer(); /* acquire: the other tiles' chain writes */
            }
        }
        barrier();
        uint n = stk_n;
        if (n == 0u) return; /* uniform: read after the barrier */
        s = stk_stage[n - 1u];
        tile = stk_tile[n - 1u];
        barrier();
        if (lid == 0u) stk_n = n - 1u;
        memoryBarrierBuffer();
        process(s, tile, z);
    }
}

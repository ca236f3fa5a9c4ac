#version 450
/* mip_fast_level.comp - the fast box path's general levels (src/gpu/gpu_mip.c, KILN_GPU_MIP_FAST): any
 * parity (the 3-tap NP2 kernel on odd axes, 1 tap on an axis of size 1), the arithmetic of mip_tile.comp's
 * reduce() operation for operation (vertical pass first, `precise`, alpha weighting with the transparent
 * fallback, weights and the weighted division correctly rounded), so the bytes are the same; but no region
 * bookkeeping, no dynamically indexed arrays (local memory), the tables in shared memory.
 *
 * push mode 0 (one level, l0 -> l0+1): one invocation per texel of level l0+1, 16 x 16 tiles (stage words
 *   3, 4 = tiles in x, y); the tile's odd-axis weights are computed once per workgroup into shared memory.
 *   The fp32 chain gets level l0+1 when a later stage reads it (stage word 7).
 * push mode 1 (the tail, levels l0+1 .. l0+K, small): ONE workgroup per texture makes every level in turn,
 *   level by level through the fp32 chain (every tail level has a chain slot; coherent buffer,
 *   memoryBarrierBuffer + barrier between levels, all inside the workgroup) - the last levels cost one
 *   dispatch instead of one each.
 * push mode 2 (two levels l0 -> l0+2, any parity): a workgroup owns a 16 x 16 tile of level l0+2 (stage words
 *   3, 4), makes the region of level l0+1 it reads (at most 33 x 33: a 1-texel halo right / bottom on odd
 *   axes, recomputed by the neighbour as mip_tile.comp does) into shared memory, writes the level-(l0+1)
 *   texels it owns (the 2:1 preimage of its tile, the last row / column of an odd axis to the last tile),
 *   then its tile of l0+2 from shared memory. Level l0+1 never goes through the fp32 chain. */
#extension GL_EXT_control_flow_attributes : enable

layout(local_size_x = 256) in;

#include "mip_common.glsl"
#include "mip_div.glsl"

#include "mip_fast_common.glsl"

shared float s_wx[48];
shared float s_wy[48];
shared float s_w1x[99]; /* mode 2: weights of the level-(l0+1) region's columns / rows */
shared float s_w1y[99];
shared vec4 s_r[1089]; /* mode 2: the level-(l0+1) region, 33 x 33 at most */

uint ntaps(uint d) { return d == 1u ? 1u : 2u + (d & 1u); }
uint tap0(uint d, uint x) { return d == 1u ? 0u : 2u * x; }

/* mip_tile.comp's axis_weights */
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

/* Texel (x, y) of level l0 (width w) as linear fp32: the base decoded, or the chain at offset chin. */
vec4 src_texel(uint flags, uint l0, uint chin, uint z, uint w, uint x, uint y)
{
    if (l0 == 0u) {
        uint i = z * pc.tex_in + y * w + x;
        return (flags & MIPF_IN_F32) == 0u ? dec8(inw[i]) : base_texel(i);
    }
    return chain[z * pc.tex_chain + chin + y * w + x];
}

/* One column of reduce(): the vertical pass over ty taps (the unused ones never enter the sums). */
void column(uint ty, vec3 wy, vec4 s0, vec4 s1, vec4 s2, bool weighted, out vec4 t_out, out vec4 tp_out)
{
    precise vec4 e0 = weighted ? vec4(s0.a * s0.r, s0.a * s0.g, s0.a * s0.b, s0.a) : s0;
    precise vec4 e1 = weighted ? vec4(s1.a * s1.r, s1.a * s1.g, s1.a * s1.b, s1.a) : s1;
    precise vec4 e2 = weighted ? vec4(s2.a * s2.r, s2.a * s2.g, s2.a * s2.b, s2.a) : s2;
    precise vec4 t = wy.x * e0;
    precise vec4 tp = wy.x * s0;
    if (ty > 1u) {
        t = t + wy.y * e1;
        tp = tp + wy.y * s1;
    }
    if (ty > 2u) {
        t = t + wy.z * e2;
        tp = tp + wy.z * s2;
    }
    t_out = t;
    tp_out = tp;
}

/* Texel of level l0+1 from its footprint f[x tap][y tap]: mip_tile.comp's reduce() with the weights passed
 * in, operation for operation, over the tx x ty taps that exist (the others are never read into the sums). */
vec4 combine(uint tx, uint ty, vec3 wx, vec3 wy, vec4 f00, vec4 f01, vec4 f02, vec4 f10, vec4 f11, vec4 f12,
             vec4 f20, vec4 f21, vec4 f22, bool weighted)
{
    vec4 t, tp;
    column(ty, wy, f00, f01, f02, weighted, t, tp);
    precise vec4 o = wx.x * t;
    precise vec4 op = wx.x * tp;
    if (tx > 1u) {
        column(ty, wy, f10, f11, f12, weighted, t, tp);
        o = o + wx.y * t;
        op = op + wx.y * tp;
    }
    if (tx > 2u) {
        column(ty, wy, f20, f21, f22, weighted, t, tp);
        o = o + wx.z * t;
        op = op + wx.z * tp;
    }
    if (weighted) {
        float a = o.a;
        return a > 0.0 ? vec4(div_rn(o.r, a), div_rn(o.g, a), div_rn(o.b, a), a) : vec4(op.rgb, a);
    }
    return o;
}

/* The footprint's coordinates: taps x0, x0+1, x0+2 (clamped into the level, so every address is valid
 * even for invocations outside the level; unused taps never reach the sums). */
#define FOOT(dw, dh, x, y)                                                                                        \
    uint tx = ntaps(dw), ty = ntaps(dh);                                                                          \
    uint xa = min(tap0(dw, x), dw - 1u), xb = min(xa + 1u, dw - 1u), xc = min(xa + 2u, dw - 1u);                 \
    uint ya = min(tap0(dh, y), dh - 1u), yb = min(ya + 1u, dh - 1u), yc = min(ya + 2u, dh - 1u);
#define EACH9(F) F(00, xa, ya) F(01, xa, yb) F(02, xa, yc) F(10, xb, ya) F(11, xb, yb) F(12, xb, yc) \
                 F(20, xc, ya) F(21, xc, yb) F(22, xc, yc)
#define F9 f00, f01, f02, f10, f11, f12, f20, f21, f22

/* Texel (x, y) of level l0+1 (the tail: weights per texel, loads and combine in one go). */
vec4 texel(uint flags, uint l0, uint z, uint x, uint y, vec3 wx, vec3 wy, bool weighted)
{
    uint dw = LW(l0), dh = LH(l0), chin = LCH(l0);
    FOOT(dw, dh, x, y)
#define LOADF(id, xx, yy) vec4 f##id = src_texel(flags, l0, chin, z, dw, xx, yy);
    EACH9(LOADF)
    return combine(tx, ty, wx, wy, F9, weighted);
}

void main()
{
    uint s = pc.stage; /* the tail reads its levels from the job table */
    uint lid = gl_LocalInvocationIndex;
    uint z = gl_WorkGroupID.z;
    uint flags = pc.flags;
    bool weighted = prm[P_TEX + z] != 0u;
    uint obase = z * pc.tex_out;
    uint l0 = pc.l0;

    if (pc.mode == 2u) {
        uint ntx = pc.ntx, nty = pc.nty;
        uint tile = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
        if (tile >= ntx * nty) return; /* whole workgroup */
        load_lut();
        uint m1 = l0 + 1u, m2 = l0 + 2u;
        uint dw = FW(l0), dh = FH(l0), w1 = FW(m1), h1 = FH(m1), w2 = FW(m2), h2 = FH(m2);
        uint X2 = (tile % ntx) * 16u, Y2 = (tile / ntx) * 16u;
        uint X2e = min(X2 + 16u, w2), Y2e = min(Y2 + 16u, h2);
        /* level-(l0+1) region [RX0, RX1) x [RY0, RY1) and the part of it this tile owns */
        uint RX0 = tap0(w1, X2), RX1 = tap0(w1, X2e - 1u) + ntaps(w1);
        uint RY0 = tap0(h1, Y2), RY1 = tap0(h1, Y2e - 1u) + ntaps(h1);
        uint OX0 = w1 == 1u ? 0u : 2u * X2, OX1 = X2e == w2 ? w1 : 2u * X2e;
        uint OY0 = h1 == 1u ? 0u : 2u * Y2, OY1 = Y2e == h2 ? h1 : 2u * Y2e;
        uint rw = RX1 - RX0, n1 = rw * (RY1 - RY0);
        /* weights: lanes 0..32 the region's columns, 64..96 its rows, 128..143 / 160..175 the tile's level-(l0+2) x / y */
        {
            float a, b, c;
            if (lid < 33u && RX0 + lid < RX1) {
                axis_weights(dw, RX0 + lid, a, b, c);
                s_w1x[3u * lid] = a; s_w1x[3u * lid + 1u] = b; s_w1x[3u * lid + 2u] = c;
            }
            uint i = lid - 64u;
            if (lid >= 64u && i < 33u && RY0 + i < RY1) {
                axis_weights(dh, RY0 + i, a, b, c);
                s_w1y[3u * i] = a; s_w1y[3u * i + 1u] = b; s_w1y[3u * i + 2u] = c;
            }
            i = lid - 128u;
            if (lid >= 128u && i < 16u) {
                axis_weights(w1, X2 + i, a, b, c);
                s_wx[3u * i] = a; s_wx[3u * i + 1u] = b; s_wx[3u * i + 2u] = c;
            }
            i = lid - 160u;
            if (lid >= 160u && i < 16u) {
                axis_weights(h1, Y2 + i, a, b, c);
                s_wy[3u * i] = a; s_wy[3u * i + 1u] = b; s_wy[3u * i + 2u] = c;
            }
        }
        barrier();
        for (uint r = lid; r < n1; r += 256u) {
            uint rx = r % rw, ry = r / rw, x = RX0 + rx, y = RY0 + ry;
            FOOT(dw, dh, x, y)
#define LOAD2(id, xx, yy) vec4 f##id = src_texel(flags, l0, pc.ch_in, z, dw, xx, yy);
            EACH9(LOAD2)
            vec4 v = combine(tx, ty, vec3(s_w1x[3u * rx], s_w1x[3u * rx + 1u], s_w1x[3u * rx + 2u]),
                             vec3(s_w1y[3u * ry], s_w1y[3u * ry + 1u], s_w1y[3u * ry + 2u]), F9, weighted);
            s_r[r] = v;
            if (x >= OX0 && x < OX1 && y >= OY0 && y < OY1) fstore(flags, obase, pc.lout[0], y * w1 + x, v);
        }
        barrier();
        uint x = X2 + (lid & 15u), y = Y2 + (lid >> 4);
        if (x >= X2e || y >= Y2e) return;
        {
            uint tx = ntaps(w1), ty = ntaps(h1);
            uint xa = tap0(w1, x) - RX0, xb = min(xa + 1u, rw - 1u), xc = min(xa + 2u, rw - 1u);
            uint ya = tap0(h1, y) - RY0, yb = min(ya + 1u, RY1 - RY0 - 1u), yc = min(ya + 2u, RY1 - RY0 - 1u);
#define LOADS(id, xx, yy) vec4 f##id = s_r[(yy) * rw + (xx)];
            EACH9(LOADS)
            uint ix = 3u * (lid & 15u), iy = 3u * (lid >> 4);
            vec4 v = combine(tx, ty, vec3(s_wx[ix], s_wx[ix + 1u], s_wx[ix + 2u]), vec3(s_wy[iy], s_wy[iy + 1u], s_wy[iy + 2u]),
                             F9, weighted);
            fstore(flags, obase, pc.lout[1], y * w2 + x, v);
            if (pc.write_chain != 0u) chain[z * pc.tex_chain + pc.ch_out + y * w2 + x] = v;
        }
        return;
    }

    if (pc.mode == 0u) {
        uint ntx = pc.ntx, nty = pc.nty;
        uint tile = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
        if (tile >= ntx * nty) return; /* whole workgroup */
        load_lut();
        uint m = l0 + 1u, w = FW(m), h = FH(m);
        uint x = (tile % ntx) * 16u + (lid & 15u), y = (tile / ntx) * 16u + (lid >> 4);
        /* the footprint's loads first: RGBA8 base words raw (decoded after the barrier that publishes the
         * table), chain / float texels as they are; they overlap the table's load and the weights */
        uint dw = FW(l0), dh = FH(l0);
        FOOT(dw, dh, x, y)
        bool u8 = l0 == 0u && (flags & MIPF_IN_F32) == 0u;
        uint bi = z * pc.tex_in;
#define DECLF(id, xx, yy) vec4 f##id = vec4(0.0); uint u##id = 0u;
        EACH9(DECLF)
        if (u8) {
#define LOADU(id, xx, yy) u##id = inw[bi + (yy) * dw + (xx)];
            EACH9(LOADU)
        } else {
#define LOADV(id, xx, yy) f##id = src_texel(flags, l0, pc.ch_in, z, dw, xx, yy);
            EACH9(LOADV)
        }
        if (lid < 32u) { /* the tile's 16 x weights (lanes 0..15) and 16 y weights (16..31) */
            uint i = lid & 15u, c = lid < 16u ? (tile % ntx) * 16u + i : (tile / ntx) * 16u + i;
            float w0, w1, w2;
            axis_weights(lid < 16u ? dw : dh, c, w0, w1, w2);
            if (lid < 16u) {
                s_wx[3u * i] = w0; s_wx[3u * i + 1u] = w1; s_wx[3u * i + 2u] = w2;
            } else {
                s_wy[3u * i] = w0; s_wy[3u * i + 1u] = w1; s_wy[3u * i + 2u] = w2;
            }
        }
        barrier();
        if (x >= w || y >= h) return;
        if (u8) {
#define DECU(id, xx, yy) f##id = dec8(u##id);
            EACH9(DECU)
        }
        uint ix = 3u * (lid & 15u), iy = 3u * (lid >> 4);
        vec4 v = combine(tx, ty, vec3(s_wx[ix], s_wx[ix + 1u], s_wx[ix + 2u]), vec3(s_wy[iy], s_wy[iy + 1u], s_wy[iy + 2u]),
                         F9, weighted);
        fstore(flags, obase, pc.lout[0], y * w + x, v);
        if (pc.write_chain != 0u) chain[z * pc.tex_chain + pc.ch_out + y * w + x] = v;
        return;
    }

    /* the tail: one workgroup per texture */
    load_lut();
    barrier();
    uint K = ST(s, 1u), write_chain = ST(s, 7u);
    for (uint k = 1u; k <= K; k++) {
        uint m = l0 + k, w = LW(m), h = LH(m), n = w * h;
        bool keep = k < K || write_chain != 0u;
        for (uint i = lid; i < n; i += 256u) {
            uint x = i % w, y = i / w;
            vec3 wx, wy;
            axis_weights(LW(m - 1u), x, wx.x, wx.y, wx.z);
            axis_weights(LH(m - 1u), y, wy.x, wy.y, wy.z);
            vec4 v = texel(flags, m - 1u, z, x, y, wx, wy, weighted);
            fstore(flags, obase, LOUT(m), i, v);
            if (keep) chain[z * pc.tex_chain + LCH(m) + i] = v;
        }
        memoryBarrierBuffer();
        barrier();
    }
}

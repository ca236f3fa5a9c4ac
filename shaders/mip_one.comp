#version 450
/* mip_one.comp - the single-pass strategy on the fast box path in ONE dispatch for every size and batch (src/gpu/gpu_mip.c
 * sp_one; helper spone, 2026-11-26). The dispatch is the plan's first stage (SP_MODE 0: mip_fast.comp's even body,
 * 64 x 64 tiles of level l0, K <= 6; 1: mip_fast_level.comp's one odd level, 16 x 16 tiles of level l0+1, the 3-tap
 * NP2 kernel on odd axes; 3: mip_fast2.comp's even body, 32 x 32 tiles of level l0, K <= 5; all copied); EVERY later
 * stage of the plan is made inside it, whatever its kind (job stage word 6, gpu_mip.c MIP_FAST_*: the same three
 * bodies, or the tail stage: levels l0+1 .. L-1 of one texture in shared memory, only with KILN_GPU_MIP_SP_TAIL).
 *
 * Hand-over (no waiting, so no forward-progress assumption): a workgroup that finished a tile of stage s releases its
 * chain writes (memoryBarrierBuffer() by every invocation, device scope, then barrier()); lanes 0..8 look at a 3 x 3
 * window of stage s+1's tiles (arrive()); a consumer tile's footprint in producer tiles (cons_range: 64 or 32 texels
 * of level m for even stages, the 2 or 3 taps of 16 texels for odd ones, the whole level for the tail) decides both
 * who counts and the target, so both sides agree by construction. The arrival that reaches the target resets the
 * counter (the only one still touching it: the next submission finds 0, no fill) and pushes the tile on a shared
 * stack; the workgroup makes its stacked tiles in turn (acquire fence first), then returns. Arithmetic:
 * mip_tile.comp's, operation for operation (reduce4, combine with the correctly rounded weights, the exact encoders),
 * so the bytes are the same as every other path's. No subgroup operations: any subgroup size, no lane order. Job
 * table and bindings: mip_common.glsl; push: mip_fast_common.glsl (the first stage; push word 15 `pad`: the chain's
 * last stage); later stages read the job table. Specialisation constants: gpu_mip.c run_prepare (SP_CAP sizes the
 * tail's shared arrays, SP_KINDS compiles away the bodies of kinds the plan does not chain). Started as a copy of
 * mip_sp.comp (the hybrid's shader, KILN_GPU_MIP_SP_HYBRID=1, left as it was). */
#extension GL_EXT_control_flow_attributes : enable

layout(local_size_x = 256) in;

#include "mip_common.glsl"
#include "mip_div.glsl"

layout(std430, binding = 1) readonly buffer In4 { uvec4 inw4[]; };
layout(std430, binding = 1) readonly buffer In2 { uvec2 inw2[]; };

#include "mip_fast_common.glsl"

/* Specialisation constants (gpu_mip.c run_prepare): the mode (one pipeline each: the other bodies compile away) and
 * the shared arrays' sizes, SP_CAP >= the tail's first level (<= MIP_SP_CAP = 1024), >= 256; SP_CAPB >= SP_CAP / 2,
 * >= 64: small tails keep mip_fast.comp's footprint. */
layout(constant_id = 1) const uint SP_MODE = 0u;
layout(constant_id = 2) const uint SP_CAP = 1024u;
layout(constant_id = 3) const uint SP_CAPB = 512u;
layout(constant_id = 4) const uint SP_CHAIN = 2u; /* always 2 here (mip_sp.comp's numbering: every stage chained) */

/* The kinds of the stages made inside the dispatch (bit 1 << kind): the bodies of the others compile away (registers
 * and shared memory of the first stage's workgroups: those of the kernels it chains) */
layout(constant_id = 5) const uint SP_KINDS = 0xffffffffu;

/* A stage's kind, job stage word 6 (gpu_mip.c MIP_FAST_*) */
#define KIND_EVEN 1u
#define KIND_LEVEL 2u
#define KIND_EVEN2 5u
#define KIND_TAIL 6u

shared vec4 s_ta[SP_CAP];  /* the tail's odd levels; mode 0 also its 16 x 16 grid (mip_fast.comp s_a) */
shared vec4 s_tb[SP_CAPB]; /* the tail's even levels; mode 0 also its 8 x 8 grid (mip_fast.comp s_b) */
shared float s_wx[48];
shared float s_wy[48];
shared uint s_stk[64]; /* (stage << 24 | tile) of consumer tiles this workgroup completed */
shared uint s_stk_n;

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

/* mip_fast_level.comp's column / combine (mip_tile.comp's reduce()), unchanged */
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

#define FOOT(dw, dh, x, y)                                                                                        \
    uint tx = ntaps(dw), ty = ntaps(dh);                                                                          \
    uint xa = min(tap0(dw, x), dw - 1u), xb = min(xa + 1u, dw - 1u), xc = min(xa + 2u, dw - 1u);                 \
    uint ya = min(tap0(dh, y), dh - 1u), yb = min(ya + 1u, dh - 1u), yc = min(ya + 2u, dh - 1u);
#define EACH9(F) F(00, xa, ya) F(01, xa, yb) F(02, xa, yc) F(10, xb, ya) F(11, xb, yb) F(12, xb, yc) \
                 F(20, xc, ya) F(21, xc, yb) F(22, xc, yc)
#define F9 f00, f01, f02, f10, f11, f12, f20, f21, f22

/* ------------------------------------------------------------------ mode 0: mip_fast.comp's even stage */

void store1(uint flags, uint obase, uint lout, uint x, uint y, uint w1, uint h1, bool top, uint cb, vec4 v)
{
    if (x < w1 && y < h1) {
        fstore(flags, obase, lout, y * w1 + x, v);
        if (top) chain[cb + y * w1 + x] = v;
    }
}

/* Word offset of level l0 + k (k >= 1) in a texture's output: the push constants for the dispatch's own stage
 * (`first`), else the job table (a stage made inside the chain). */
uint lout_of(bool first, uint l0, uint k) { return first ? pc.lout[k - 1u] : LOUT(l0 + k); }

/* mip_fast.comp's body for the stage (l0, K, ntx, write_chain, chain offsets ch_in, ch_out) */
void body_even(uint l0, uint K, uint ntx, uint write_chain, uint ch_in, uint ch_out, bool first, uint tile, uint z,
               bool weighted)
{
    uint lid = gl_LocalInvocationIndex;
    uint flags = pc.flags;
    uint w0 = FW(l0), h0 = FH(l0);
    uint obase = z * pc.tex_out;
    uint tx = lid & 15u, ty = lid >> 4;
    uint X = (tile % ntx) * 64u + 4u * tx, Y = (tile / ntx) * 64u + 4u * ty;
    bool live = X < w0 && Y < h0;
    bool rows = live && l0 == 0u && (flags & MIPF_IN_F32) == 0u && (w0 & 3u) == 0u && (h0 & 3u) == 0u;
    uvec4 r0 = uvec4(0u), r1 = uvec4(0u), r2 = uvec4(0u), r3 = uvec4(0u);
    if (rows) {
        uint b = (z * pc.tex_in + Y * w0 + X) >> 2, rs = w0 >> 2;
        r0 = inw4[b];
        r1 = inw4[b + rs];
        r2 = inw4[b + 2u * rs];
        r3 = inw4[b + 3u * rs];
    }
    barrier(); /* s_lut */

    vec4 q0, q1, q2, q3;
    uint m1 = l0 + 1u, w1 = FW(m1), h1 = FH(m1);
    if (live) {
        vec4 t[16];
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
            uint b = z * pc.tex_chain + ch_in;
            [[unroll]] for (uint r = 0u; r < 4u; r++)
                [[unroll]] for (uint c = 0u; c < 4u; c++) t[4u * r + c] = chain[b + yc[r] * w0 + xc[c]];
        }
        q0 = reduce4(t[0], t[1], t[4], t[5], weighted);
        q1 = reduce4(t[2], t[3], t[6], t[7], weighted);
        q2 = reduce4(t[8], t[9], t[12], t[13], weighted);
        q3 = reduce4(t[10], t[11], t[14], t[15], weighted);
        uint lout = lout_of(first, l0, 1u), x1 = X >> 1, y1 = Y >> 1;
        bool top = K == 1u && write_chain != 0u;
        uint cb = z * pc.tex_chain + ch_out;
        store1(flags, obase, lout, x1, y1, w1, h1, top, cb, q0);
        store1(flags, obase, lout, x1 + 1u, y1, w1, h1, top, cb, q1);
        store1(flags, obase, lout, x1, y1 + 1u, w1, h1, top, cb, q2);
        store1(flags, obase, lout, x1 + 1u, y1 + 1u, w1, h1, top, cb, q3);
    }
    if (K == 1u) return; /* uniform */

    uint m2 = l0 + 2u;
    vec4 v2 = vec4(0.0);
    if (live) {
        v2 = reduce4(q0, q1, q2, q3, weighted);
        uint x = X >> 2, y = Y >> 2, w2 = FW(m2);
        fstore(flags, obase, lout_of(first, l0, 2u), y * w2 + x, v2);
        if (K == 2u && write_chain != 0u) chain[z * pc.tex_chain + ch_out + y * w2 + x] = v2;
    }
    if (K == 2u) return;
    s_ta[lid] = v2;
    barrier();

    uint TX = (tile % ntx) * 64u, TY = (tile / ntx) * 64u;
    for (uint k = 3u; k <= K; k++) {
        uint e = 64u >> k, m = l0 + k;
        bool from_a = (k & 1u) == 1u;
        if (lid < e * e) {
            uint a = lid % e, c = lid / e, e2 = 2u * e;
            uint i00 = (2u * c) * e2 + 2u * a;
            vec4 s00 = from_a ? s_ta[i00] : s_tb[i00];
            vec4 s10 = from_a ? s_ta[i00 + 1u] : s_tb[i00 + 1u];
            vec4 s01 = from_a ? s_ta[i00 + e2] : s_tb[i00 + e2];
            vec4 s11 = from_a ? s_ta[i00 + e2 + 1u] : s_tb[i00 + e2 + 1u];
            vec4 v = reduce4(s00, s10, s01, s11, weighted);
            uint x = (TX >> k) + a, y = (TY >> k) + c, wm = FW(m);
            if (x < wm && y < FH(m)) {
                fstore(flags, obase, lout_of(first, l0, k), y * wm + x, v);
                if (k == K && write_chain != 0u) chain[z * pc.tex_chain + ch_out + y * wm + x] = v;
            }
            if (from_a) s_tb[lid] = v;
            else s_ta[lid] = v;
        }
        barrier();
    }
}

/* ------------------------------------------------------------------ mode 3: mip_fast2.comp's even stage */

/* mip_fast2.comp's body (32 x 32 tiles of level l0, one level-(l0+1) texel per invocation, K <= 5) for the stage
 * (l0, K, ntx, write_chain, ch_in, ch_out); s_ta / s_tb serve as its s_a / s_b */
void body_f(uint l0, uint K, uint ntx, uint write_chain, uint ch_in, uint ch_out, bool first, uint tile, uint z,
            bool weighted)
{
    uint lid = gl_LocalInvocationIndex;
    uint flags = pc.flags;
    uint w0 = FW(l0), h0 = FH(l0);
    uint obase = z * pc.tex_out;
    uint tx = lid & 15u, ty = lid >> 4;
    uint TX = (tile % ntx) * 32u, TY = (tile / ntx) * 32u;
    uint X = TX + 2u * tx, Y = TY + 2u * ty;
    bool live = X < w0 && Y < h0;
    bool u8 = l0 == 0u && (flags & MIPF_IN_F32) == 0u;
    uvec2 r0 = uvec2(0u), r1 = uvec2(0u);
    vec4 s00 = vec4(0.0), s10 = vec4(0.0), s01 = vec4(0.0), s11 = vec4(0.0);
    if (live) {
        if (u8) {
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
            uint b = z * pc.tex_chain + ch_in + Y * w0 + X;
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
        fstore(flags, obase, lout_of(first, l0, 1u), y * w1 + x, v);
        if (K == 1u && write_chain != 0u) chain[z * pc.tex_chain + ch_out + y * w1 + x] = v;
    }
    if (K == 1u) return; /* uniform */
    s_ta[lid] = v;
    barrier();
    for (uint k = 2u; k <= K; k++) {
        uint e = 32u >> k, m = l0 + k;
        bool from_a = (k & 1u) == 0u;
        if (lid < e * e) {
            uint a = lid % e, c = lid / e, e2 = 2u * e;
            uint i00 = (2u * c) * e2 + 2u * a;
            vec4 q00 = from_a ? s_ta[i00] : s_tb[i00];
            vec4 q10 = from_a ? s_ta[i00 + 1u] : s_tb[i00 + 1u];
            vec4 q01 = from_a ? s_ta[i00 + e2] : s_tb[i00 + e2];
            vec4 q11 = from_a ? s_ta[i00 + e2 + 1u] : s_tb[i00 + e2 + 1u];
            vec4 u = reduce4(q00, q10, q01, q11, weighted);
            uint x = (TX >> k) + a, y = (TY >> k) + c, wm = FW(m);
            if (x < wm && y < FH(m)) {
                fstore(flags, obase, lout_of(first, l0, k), y * wm + x, u);
                if (k == K && write_chain != 0u) chain[z * pc.tex_chain + ch_out + y * wm + x] = u;
            }
            if (from_a) s_tb[lid] = u;
            else s_ta[lid] = u;
        }
        barrier();
    }
}

/* ------------------------------------------------------------------ mode 1: mip_fast_level.comp mode 0 */

vec4 src_texel(uint flags, uint l0, uint chin, uint z, uint w, uint x, uint y)
{
    if (l0 == 0u) {
        uint i = z * pc.tex_in + y * w + x;
        return (flags & MIPF_IN_F32) == 0u ? dec8(inw[i]) : base_texel(i);
    }
    return chain[z * pc.tex_chain + chin + y * w + x];
}

void body_level(uint l0, uint ntx, uint chin, uint chout, uint lout0, uint write_chain, uint tile, uint z, bool weighted)
{
    uint lid = gl_LocalInvocationIndex;
    uint flags = pc.flags;
    uint obase = z * pc.tex_out;
    uint m = l0 + 1u, w = FW(m), h = FH(m);
    uint x = (tile % ntx) * 16u + (lid & 15u), y = (tile / ntx) * 16u + (lid >> 4);
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
#define LOADV(id, xx, yy) f##id = src_texel(flags, l0, chin, z, dw, xx, yy);
        EACH9(LOADV)
    }
    if (lid < 32u) {
        uint i = lid & 15u, c = lid < 16u ? (tile % ntx) * 16u + i : (tile / ntx) * 16u + i;
        float w0, w1, w2;
        axis_weights(lid < 16u ? dw : dh, c, w0, w1, w2);
        if (lid < 16u) {
            s_wx[3u * i] = w0; s_wx[3u * i + 1u] = w1; s_wx[3u * i + 2u] = w2;
        } else {
            s_wy[3u * i] = w0; s_wy[3u * i + 1u] = w1; s_wy[3u * i + 2u] = w2;
        }
    }
    barrier(); /* s_lut, s_wx, s_wy */
    if (x >= w || y >= h) return;
    if (u8) {
#define DECU(id, xx, yy) f##id = dec8(u##id);
        EACH9(DECU)
    }
    uint ix = 3u * (lid & 15u), iy = 3u * (lid >> 4);
    vec4 v = combine(tx, ty, vec3(s_wx[ix], s_wx[ix + 1u], s_wx[ix + 2u]), vec3(s_wy[iy], s_wy[iy + 1u], s_wy[iy + 2u]),
                     F9, weighted);
    fstore(flags, obase, lout0, y * w + x, v);
    if (write_chain != 0u) chain[z * pc.tex_chain + chout + y * w + x] = v;
}

/* ------------------------------------------------------------------ the tail */

/* Texel i of the tail's source level (width w): 0 the base, 1 the chain at `chin`, 2 s_ta, 3 s_tb. */
vec4 tail_src(uint src, uint z, uint chin, uint w, uint x, uint y)
{
    uint i = y * w + x;
    if (src == 2u) return s_ta[i];
    if (src == 3u) return s_tb[i];
    if (src == 1u) return chain[z * pc.tex_chain + chin + i];
    uint b = z * pc.tex_in + i;
    return (pc.flags & MIPF_IN_F32) == 0u ? dec8(inw[b]) : base_texel(b);
}

/* Levels e+1 .. L-1 of texture z from level e (in the base when e == 0, else in the chain at pc.ch_out). */
void tail(uint e, uint chin, uint z, bool weighted)
{
    uint lid = gl_LocalInvocationIndex;
    uint L = prm[0], flags = pc.flags, obase = z * pc.tex_out;
    uint src = e == 0u ? 0u : 1u;
    for (uint m = e + 1u; m < L; m++) {
        uint dw = FW(m - 1u), dh = FH(m - 1u), w = FW(m), n = w * FH(m), lout = LOUT(m);
        bool to_a = ((m - e) & 1u) == 1u;
        for (uint i = lid; i < n; i += 256u) {
            uint x = i % w, y = i / w;
            vec3 wx, wy;
            axis_weights(dw, x, wx.x, wx.y, wx.z);
            axis_weights(dh, y, wy.x, wy.y, wy.z);
            FOOT(dw, dh, x, y)
#define LOADT(id, xx, yy) vec4 f##id = tail_src(src, z, chin, dw, xx, yy);
            EACH9(LOADT)
            vec4 v = combine(tx, ty, wx, wy, F9, weighted);
            fstore(flags, obase, lout, i, v);
            if (to_a) s_ta[i] = v;
            else s_tb[i] = v;
        }
        barrier();
        src = to_a ? 2u : 3u;
    }
}

/* The producer tiles (edge tp at level m) along one axis that consumer tile c of a stage of `kind`
 * reads, [first, last]; dm = level m's extent along the axis, dn = level m+1's. Both sides use it: the producer to
 * find the counters it increments and each counter's target (the number of producers in the range). */
uvec2 cons_range(uint kind, uint dm, uint dn, uint c, uint tp)
{
    uint lo, hi;
    if (kind == KIND_LEVEL) { /* 16 texels of level m+1: their 2 or 3 taps (a 1-texel halo on odd axes) */
        lo = tap0(dm, 16u * c);
        hi = min(tap0(dm, min(16u * c + 15u, dn - 1u)) + ntaps(dm) - 1u, dm - 1u);
    } else if (kind == KIND_TAIL) { /* the whole level */
        lo = 0u;
        hi = dm - 1u;
    } else { /* an even stage's tile of level m: 64 (mip_fast.comp) or 32 (mip_fast2.comp) texels */
        uint te = kind == KIND_EVEN ? 64u : 32u;
        lo = te * c;
        hi = min(te * c + te - 1u, dm - 1u);
    }
    return uvec2(lo / tp, hi / tp);
}

/* Invocation j < 9 of the workgroup that made tile `tile` of stage s (texture z): the j-th tile of a
 * 3 x 3 window of stage s+1's tiles around the one whose input holds this tile's first texel (a producer tile of
 * edge tp <= 32 feeds at most 2 x 2 of them: odd-level consumers read 32 + 1 texels per 16, even ones 64 or 32 texels
 * aligned to tp); where the consumer's footprint (cons_range) contains this tile, one arrival. The invocation that
 * brings a counter to its target resets it (the only one still touching it: the next submission finds 0) and
 * pushes the tile on the workgroup's stack. */
void arrive(uint s, uint tile, uint z, uint j)
{
    uint c = s + 1u, kind = ST(c, 6u), m = ST(c, 0u), tp = ST(s, 2u), pnx = ST(s, 3u);
    uint cnx = ST(c, 3u), cny = ST(c, 4u), px = tile % pnx, py = tile / pnx;
    uint dm = LW(m), hm = LH(m), dn = LW(m + 1u), hn = LH(m + 1u);
    uint span = kind == KIND_LEVEL ? 32u : kind == KIND_EVEN ? 64u : 32u; /* level-m texels per consumer tile */
    uint cx0 = kind == KIND_TAIL || dm == 1u ? 0u : (px * tp) / span;
    uint cy0 = kind == KIND_TAIL || hm == 1u ? 0u : (py * tp) / span;
    uint cx = cx0 + (j % 3u), cy = cy0 + (j / 3u);
    cx = cx > 0u ? cx - 1u : 0xffffffffu;
    cy = cy > 0u ? cy - 1u : 0xffffffffu;
    if (cx >= cnx || cy >= cny) return;
    uvec2 rx = cons_range(kind, dm, dn, cx, tp), ry = cons_range(kind, hm, hn, cy, tp);
    if (px < rx.x || px > rx.y || py < ry.x || py > ry.y) return;
    uint need = (rx.y - rx.x + 1u) * (ry.y - ry.x + 1u), ct = cy * cnx + cx;
    uint ci = ST(c, 5u) + z * cnx * cny + ct;
    uint old = atomicAdd(ctr[ci], 1u);
    if (old == need - 1u) {
        atomicExchange(ctr[ci], 0u); /* reset for the next use */
        uint k = atomicAdd(s_stk_n, 1u);
        s_stk[k] = c << 24 | ct;
    }
}

void main()
{
    uint lid = gl_LocalInvocationIndex;
    uint z = gl_WorkGroupID.z;
    bool weighted = prm[P_TEX + z] != 0u;
    load_lut();
    uint s = pc.stage, last = pc.pad; /* stages s .. last in this dispatch */
    uint ntiles = pc.ntx * pc.nty;
    uint tile = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    if (tile >= ntiles) return; /* whole workgroup */
    if (SP_MODE == 0u) body_even(pc.l0, pc.K, pc.ntx, pc.write_chain, pc.ch_in, pc.ch_out, true, tile, z, weighted);
    else if (SP_MODE == 3u) body_f(pc.l0, pc.K, pc.ntx, pc.write_chain, pc.ch_in, pc.ch_out, true, tile, z, weighted);
    else body_level(pc.l0, pc.ntx, pc.ch_in, pc.ch_out, pc.lout[0], pc.write_chain, tile, z, weighted);
    if (lid == 0u) s_stk_n = 0u;
    for (;;) {
        memoryBarrierBuffer(); /* release: this invocation's chain writes, device scope */
        barrier();              /* ... of every invocation, before the arrival */
        if (s < last && lid < 9u) arrive(s, tile, z, lid); /* the consumer tiles of stage s+1 this tile feeds */
        barrier();
        if (s_stk_n == 0u) return; /* uniform: read after the barrier */
        uint n = s_stk_n, top = s_stk[n - 1u];
        barrier(); /* every invocation has read the stack before it changes */
        if (lid == 0u) s_stk_n = n - 1u;
        s = top >> 24;
        tile = top & 0xffffffu;
        memoryBarrierBuffer(); /* acquire: the producers' chain writes */
        uint l0 = ST(s, 0u), kind = ST(s, 6u), K = ST(s, 1u), wc = ST(s, 7u);
        if ((SP_KINDS & (1u << KIND_EVEN)) != 0u && kind == KIND_EVEN)
            body_even(l0, K, ST(s, 3u), wc, LCH(l0), LCH(l0 + K), false, tile, z, weighted);
        else if ((SP_KINDS & (1u << KIND_EVEN2)) != 0u && kind == KIND_EVEN2)
            body_f(l0, K, ST(s, 3u), wc, LCH(l0), LCH(l0 + K), false, tile, z, weighted);
        else if ((SP_KINDS & (1u << KIND_LEVEL)) != 0u && kind == KIND_LEVEL)
            body_level(l0, ST(s, 3u), LCH(l0), LCH(l0 + 1u), LOUT(l0 + 1u), wc, tile, z, weighted);
        else if ((SP_KINDS & (1u << KIND_TAIL)) != 0u) /* KIND_TAIL: levels l0+1 .. L-1 */
            tail(l0, LCH(l0), z, weighted);
    }
}

#version 450
/* mip_filter.comp - the quality mipmap filters (Kaiser, Lanczos-3, Mitchell; also box for normal maps)
 * on the GPU (src/gpu/gpu_mip_filter.c): level m is made from the fp32 level m-1 in two dispatches,
 * exactly the CPU reference's operations in the CPU's order (src/mip/mip.h rules 3, 4, 6-9):
 *
 *   pass 0 (vertical)   one invocation per texel (i, y) of the sw x dh intermediate (source width,
 *                       destination height): t = w_0 * e(i, iy_0), t = t + w_k * e(i, iy_k), k = 1..;
 *                       e = (a r, a g, a b, a) plus the plain (r, g, b) when the texture is alpha-
 *                       weighted (two vec4 per intermediate texel then), else the texel itself.
 *   pass 1 (horizontal) one invocation per texel (x, y) of level m: o = w_0 * t(ix_0) + ..., the
 *                       alpha-weighted division (A > eps: colour / A, else the plain sums), the fp32
 *                       chain write (levels read by level m+1), the post-passes (normal
 *                       renormalisation) and the quantised output (mip_common.glsl store_out).
 *
 * The tap tables are kiln__mip_axis_build's (weights computed on the host in double, rounded to
 * fp32, edge mode applied to the indices) uploaded as they are, so both sides sum the same fp32
 * products in the same order; every product and sum is `precise` (no FMA contraction, as the CPU's
 * ISO C code). Divisions and square roots are corrected to the correctly rounded fp32 result (Vulkan
 * allows 2.5 ULP for x / y and inherits sqrt's precision from inversesqrt), so results match the CPU
 * bit for bit wherever the driver's fp32 add and multiply are IEEE (they must be) and denormals do not
 * occur.
 *
 * Bindings 0-4 as mip_common.glsl (chain = the fp32 levels 1..L-2 of every texture, 1..L-1 with
 * MIPF_CHAIN_ALL); binding 5 (`ctr`
 * there) holds the tap tables: word 2m / 2m+1 = offset of level m's x / y axis block; an axis block
 * is first[dst + 1] followed by (source index, fp32 weight bits) pairs. Binding 6: the intermediate.
 * Linear dispatch (vk.h) over texels x textures. */
layout(local_size_x_id = 0) in;

#include "mip_common.glsl"

#define MIPF_NORMAL 32u       /* renormalise xyz of output levels (post-pass) */
#define MIPF_NORMAL_UNORM 64u /* U8 normal map: n = 2v - 1 on read, 0.5 n + 0.5 on write */
#define MIPF_RECON_Z 128u     /* fewer than 3 channels: z = sqrt(max(0, 1 - x^2 - y^2)) on read */
#define MIPF_EPS 256u         /* alpha-weighted division threshold 1/256 (ringing filters), else 0 */
#define MIPF_CHAIN_ALL 512u   /* write the fp32 chain of the last level too (alpha coverage: the host reads it) */

layout(std430, binding = 6) buffer Inter { vec4 inter[]; };

layout(push_constant) uniform Push {
    uint level;  /* destination level m >= 1 */
    uint pass;   /* 0 vertical, 1 horizontal */
    uint per;    /* invocations per texture */
    uint total;  /* per * textures */
    uint stride; /* vec4s per intermediate texel: 1, or 2 when any texture is alpha-weighted */
} pc;

#include "mip_div.glsl"

/* sqrt(x) rounded to nearest, x >= 0: the candidate s near the driver's root whose square is closest
 * to x (exact remainders x - s*s; a tie would need s + ulp/2 to square to a float: impossible). */
float sqrt_rn(float x)
{
    float s = sqrt(x);
    if (s == 0.0 || isinf(s) || isnan(s) || s < 1e-18 || s > 1e18) return s;
    uint sb = floatBitsToUint(s);
    float best = s, rb = abs(residual(x, s, s));
    for (int d = -2; d <= 2; d++) {
        if (d == 0) continue;
        float c = uintBitsToFloat(uint(int(sb) + d));
        float rc = abs(residual(x, c, c));
        if (rc < rb) {
            rb = rc;
            best = c;
        }
    }
    return best;
}

/* ---- the passes ---- */

/* Texel (x, y) of source level s of texture z as linear fp32 RGBA (CPU rule 3, normal-map mapping). */
vec4 source_texel(uint z, uint s, uint x, uint y)
{
    if (s != 0u) return chain[z * prm[5] + LCH(s) + y * LW(s) + x];
    uint flags = prm[2];
    precise vec4 t = base_texel(z * prm[4] + y * LW(0u) + x);
    if ((flags & MIPF_NORMAL_UNORM) != 0u) {
        precise vec3 n = 2.0 * t.xyz - 1.0;
        t.xyz = n;
    }
    if ((flags & MIPF_RECON_Z) != 0u) {
        precise float zz = (1.0 - t.x * t.x) - t.y * t.y;
        t.z = zz > 0.0 ? sqrt_rn(zz) : 0.0;
    }
    return t;
}

void vertical(uint z, uint i, uint y)
{
    uint m = pc.level, s = m - 1u, sw = LW(s), dh = LH(m);
    uint ay = ctr[2u * m + 1u];
    uint k0 = ctr[ay + y], k1 = ctr[ay + y + 1u], taps = ay + dh + 1u;
    bool weighted = prm[P_TEX + z] != 0u;
    precise vec4 t = vec4(0.0), tp = vec4(0.0);
    for (uint k = k0; k < k1; k++) {
        uint iy = ctr[taps + 2u * k];
        float w = uintBitsToFloat(ctr[taps + 2u * k + 1u]);
        vec4 v = source_texel(z, s, i, iy);
        precise vec4 e = weighted ? vec4(v.a * v.r, v.a * v.g, v.a * v.b, v.a) : v;
        if (k == k0) {
            t = w * e;
            tp = w * v;
        } else {
            t = t + w * e;
            tp = tp + w * v;
        }
    }
    uint o = (z * sw * dh + y * sw + i) * pc.stride;
    inter[o] = t;
    if (pc.stride > 1u) inter[o + 1u] = vec4(tp.rgb, 0.0);
}

void horizontal(uint z, uint x, uint y)
{
    uint flags = prm[2];
    uint m = pc.level, sw = LW(m - 1u), dw = LW(m), dh = LH(m);
    uint ax = ctr[2u * m];
    uint k0 = ctr[ax + x], k1 = ctr[ax + x + 1u], taps = ax + dw + 1u;
    bool weighted = prm[P_TEX + z] != 0u;
    uint row = (z * sw * dh + y * sw) * pc.stride;
    precise vec4 o = vec4(0.0), op = vec4(0.0);
    for (uint k = k0; k < k1; k++) {
        uint ix = ctr[taps + 2u * k];
        float w = uintBitsToFloat(ctr[taps + 2u * k + 1u]);
        vec4 t = inter[row + ix * pc.stride];
        vec4 tp = weighted ? inter[row + ix * pc.stride + 1u] : vec4(0.0);
        if (k == k0) {
            o = w * t;
            op = w * tp;
        } else {
            o = o + w * t;
            op = op + w * tp;
        }
    }
    vec4 v = o;
    if (weighted) {
        float a = o.a, eps = (flags & MIPF_EPS) != 0u ? 1.0 / 256.0 : 0.0;
        v = a > eps ? vec4(div_rn(o.r, a), div_rn(o.g, a), div_rn(o.b, a), a) : vec4(op.rgb, a);
    }
    if (m + 1u < prm[0] || (flags & MIPF_CHAIN_ALL) != 0u) chain[z * prm[5] + LCH(m) + y * dw + x] = v;
    if ((flags & MIPF_NORMAL) != 0u) {
        precise float ll = (v.x * v.x + v.y * v.y) + v.z * v.z;
        float len = sqrt_rn(ll);
        if (len > 1e-20) v.xyz = vec3(div_rn(v.x, len), div_rn(v.y, len), div_rn(v.z, len));
        else v.xyz = vec3(0.0, 0.0, 1.0);
        if ((flags & MIPF_NORMAL_UNORM) != 0u) {
            precise vec3 u = 0.5 * v.xyz + 0.5;
            v.xyz = u;
        }
    }
    store_out(z, m, x, y, v);
}

void main()
{
    uint gid = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (gid >= pc.total) return;
    uint z = gid / pc.per, i = gid % pc.per;
    uint m = pc.level;
    if (pc.pass == 0u) {
        uint sw = LW(m - 1u);
        vertical(z, i % sw, i / sw);
    } else {
        uint dw = LW(m);
        horizontal(z, i % dw, i / dw);
    }
}

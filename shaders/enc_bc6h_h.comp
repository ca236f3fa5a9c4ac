#version 450
// enc_bc6h_h.comp - kiln's GPU-native BC6H encoder for quality high (gpu_strategy 0, the default at
// high). ONE invocation per block, no barriers after the table copy, no subgroup operations: any
// subgroup size, no lane order. The previous design (4 invocations per block) is enc_bc6h_h4.comp
// (KILN_BC6H_HIGH_DESIGN=4); the CPU-exact port enc_bc6h_q.comp stays at KILN_BC6H_GPU_EXACT=1.
// Written for registers: the block's targets U (unquantized domain, centred on texel 0) and the
// per-texel fitting weight TW are private arrays only ever indexed inside fully unrolled texel loops;
// what must be indexed dynamically lives in shared memory as per-invocation scratch (the targets'
// logs, the per-channel weights; [item][invocation], no barrier needed); each heavy function has a
// single call site. Push: partitions P, keep K, least-squares passes L, refined R
// (KILN_BC6H_HIGH_CFG="P,K,L[,R]"; defaults in src/gpu/gpu_encode_bc6h.c).
//   1. the one-subset line: principal-axis fit, its 4 modes scored (below);
//   2. all 32 partitions ranked by the weighted residual off both subsets' principal axes, from the
//      subsets' moments (trace - largest eigenvalue, 3 power steps): one pass of 16 texels each;
//   3. the best P partitions fitted (principal axis per subset) and their 10 modes filtered (a
//      transformed mode whose deltas need more than FIT_SLACK x its range, or that is more than
//      PREC_SPAN endpoint bits less precise than the most precise transformed mode that fits, is not
//      scored; direct modes always are);
//   4. cheap score per candidate (approx_err): nearest quantization (+ the CPU's recentred
//      alternative when a delta was clamped), per texel the index nearest its projection onto the
//      quantized segment, error linearised in the unquantized domain (per-channel fitting weight x
//      squared distance); the best K (error, then candidate order) in registers, and the best
//      one-subset candidate apart;
//   5. the K kept and the best one-subset candidate refitted, quantized exactly and measured with
//      the CPU's metric (RMSLE + 0.03 x ULP, anchors in the lower half) on the NEXACT palette entries
//      around each texel's projection (weighted by the metric's linearisation); the best R of those
//      again with L least-squares passes, each kept while it lowers that error; the lowest is packed.
// Quality and cost: docs/PERFORMANCE.md, BC6H, "GPU-native high".
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x = 64) in;

layout(push_constant) uniform Push {
    uint blocks_x;   // blocks per row
    uint block_rows; // block rows in this batch
    uint width;      // texels per row
    uint rows;       // texel rows in this batch's input
    uint sf;         // 1: BC6H SF16
    uint partitions; // partitions fitted and tried (by residual rank), <= MAXP
    uint keep;       // candidates refined exactly, <= MAXK
    uint ls_iters;   // least-squares passes per kept candidate
    uint radius;     // candidates given the least-squares passes, R <= MAXR (0: 1)
    uint zero;       // unused here
    uint lanes;      // 1: one invocation per block
} pc;

layout(std430, binding = 0) readonly buffer Src { vec4 px[]; } src;
layout(std430, binding = 1) writeonly buffer Dst { uvec4 blk[]; } dst;
layout(std430, binding = 2) readonly buffer Tab { uint t[]; } tab;

#include "bptc_tables.glsl"

const uint T_SPAN = 63488u + 14u * 8u; // the bit spans in the table (as enc_bc6h_q.comp)
const uint MAXP = 8u, MAXK = 8u, MAXR = 4u;
const float FIT_SLACK = 2.0;
const uint PREC_SPAN = 2u;
const int NEXACT = 3; // palette entries measured exactly per texel: the nearest, the other bracketing one, the far neighbour
const uint FIRST_LS = 0u; // least-squares passes of every kept candidate before the best R get L
const int FIT_POWER = 8; // power steps of the principal-axis fits (the CPU: 8)
// measured on lavapipe (docs/PERFORMANCE.md): NEXACT = 2, FIT_POWER = 4, SCORE_CHW = 0 (the texel's
// mean weight instead of per channel) each left the synthetic stress image of test_gpu_bc6h above 1.10
// x the CPU high; SCORE_QUAD = 1 (closed-form scores for the fitted indices, no pass per candidate)
// too; FIRST_LS = 1 cost more for little
#define SCORE_CHW 1
#define SCORE_QUAD 0
#define BC6H_SF (pc.sf != 0u)
#include "enc_bc6h_hcommon.glsl"

shared uint s_p2[32], s_a2[32];  // the two-subset partitions and their second anchors
shared float s_L[48][64];        // per invocation: sign(v) ln(1 + |v|) of the targets, [t * 3 + c]
shared float s_W[48][64];        // per invocation: per-channel fitting weights, [t * 3 + c]

vec3 U[16];   // targets in the unquantized domain, minus U0 (indexed only in unrolled loops)
float TW[16]; // per-texel fitting weight (mean of the channels)
vec3 U0;      // texel 0's target
uint LID;

#if !SCORE_QUAD
// cheap error of quantized endpoints (header, step 4)
float approx_err(uint mi, uint bits, ivec3 q[4])
{
    const bool two = mi < 10u;
    const uint epb = m_epb(mi);
    const float n1 = two ? 7.0 : 15.0;
    vec3 a0 = vec3(unq3(q[0], epb)), a1 = vec3(unq3(q[2], epb));
    vec3 d0 = vec3(unq3(q[1], epb)) - a0, d1 = vec3(unq3(q[3], epb)) - a1;
    a0 -= U0;
    a1 -= U0;
    float dd0 = dot(d0, d0), dd1 = dot(d1, d1);
    float i0 = dd0 > 0.0 ? n1 / dd0 : 0.0, i1 = dd1 > 0.0 ? n1 / dd1 : 0.0;
    float total = 0.0;
    [[unroll]] for (uint t = 0u; t < 16u; t++) {
        bool s1 = ((bits >> t) & 1u) != 0u;
        vec3 a = s1 ? a1 : a0, d = s1 ? d1 : d0;
        float ic = clamp(round(dot(U[t] - a, d) * (s1 ? i1 : i0)), 0.0, n1);
        vec3 r = a + d * (ic / n1) - U[t];
#if SCORE_CHW
        vec3 wt = vec3(s_W[t * 3u][LID], s_W[t * 3u + 1u][LID], s_W[t * 3u + 2u][LID]);
        total += dot(wt, r * r);
#else
        total += TW[t] * dot(r, r);
#endif
    }
    return total;
}

#endif

// exact index choice under the CPU's metric for the NEXACT palette entries around each texel's
// projection (anchors in the lower half of their subset's indices); indices packed 4 bits each
float assign(uint mi, uint bits, uint anc, ivec3 q[4], out uvec2 idx)
{
    const bool two = mi < 10u;
    const uint epb = m_epb(mi);
    const int n1 = two ? 7 : 15;
    ivec3 a0 = unq3(q[0], epb), b0 = unq3(q[1], epb), a1 = unq3(q[2], epb), b1 = unq3(q[3], epb);
    vec3 fa0 = vec3(a0) - U0, fd0 = vec3(b0 - a0), fa1 = vec3(a1) - U0, fd1 = vec3(b1 - a1);
    const float k = pc.sf != 0u ? 31.0 / 32.0 : 31.0 / 64.0;
    float total = 0.0;
    idx = uvec2(0u);
    [[unroll]] for (uint t = 0u; t < 16u; t++) {
        bool s1 = ((bits >> t) & 1u) != 0u;
        ivec3 a = s1 ? a1 : a0, b = s1 ? b1 : b0;
        int lim = (t == 0u || (two && t == anc)) ? n1 / 2 : n1;
        // the projection weighted by the metric's linearisation at the target (per channel)
        vec3 wt = vec3(s_W[t * 3u][LID], s_W[t * 3u + 1u][LID], s_W[t * 3u + 2u][LID]);
        vec3 fd = s1 ? fd1 : fd0, wd = wt * fd;
        float den = dot(wd, fd);
        float tp = den > 0.0 ? dot(U[t] - (s1 ? fa1 : fa0), wd) * (float(n1) / den) : 0.0;
        int ic = clamp(int(round(tp)), 0, lim);
        int alt = clamp(tp > float(ic) ? ic + 1 : ic - 1, 0, lim);
        // the target: its half (from U, exact: U = (x +- 0.5) 64/31) and its log
        vec3 ut = U[t] + U0;
        ivec3 xt = ivec3(trunc(ut * k));
        vec3 lt = vec3(s_L[t * 3u][LID], s_L[t * 3u + 1u][LID], s_L[t * 3u + 2u][LID]);
        float best = 1.0 / 0.0;
        int bi = 0;
        [[unroll]] for (int j = 0; j < NEXACT; j++) {
            int i = j == 0 ? ic : j == 1 ? alt : clamp(2 * ic - alt, 0, lim);
            ivec3 pv = interp3(a, b, weight(two, i));
            vec3 dl = slog3(pv) - lt, dx = vec3(pv - xt);
            float e = dot(dl, dl) + ULP_K2 * dot(dx, dx);
            if (e < best) {
                best = e;
                bi = i;
            }
        }
        idx[t / 8u] |= uint(bi) << (4u * (t % 8u));
        total += best;
    }
    return total;
}

// principal-axis fit of the texels in mask, endpoints (centred) oriented so the anchor is nearer e0
void fit_subset(uint mask, uint anchor, out vec3 e0, out vec3 e1)
{
    float sw = 0.0;
    vec3 s = vec3(0.0);
    float m[6] = float[6](0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    [[unroll]] for (uint t = 0u; t < 16u; t++) {
        float v = ((mask >> t) & 1u) != 0u ? TW[t] : 0.0;
        vec3 vd = v * U[t];
        sw += v;
        s += vd;
        m[0] += vd.x * U[t].x;
        m[1] += vd.x * U[t].y;
        m[2] += vd.x * U[t].z;
        m[3] += vd.y * U[t].y;
        m[4] += vd.y * U[t].z;
        m[5] += vd.z * U[t].z;
    }
    vec3 mean = s / sw;
    float c0 = m[0] - s.x * mean.x, c1 = m[1] - s.x * mean.y, c2 = m[2] - s.x * mean.z;
    float c3 = m[3] - s.y * mean.y, c4 = m[4] - s.y * mean.z, c5 = m[5] - s.z * mean.z;
    vec3 ax;
    if (c0 >= c3 && c0 >= c5) ax = vec3(c0, c1, c2);
    else if (c3 >= c5) ax = vec3(c1, c3, c4);
    else ax = vec3(c2, c4, c5);
    [[unroll]] for (int it = 0; it < FIT_POWER; it++) {
        vec3 nv = vec3(c0 * ax.x + c1 * ax.y + c2 * ax.z, c1 * ax.x + c3 * ax.y + c4 * ax.z, c2 * ax.x + c4 * ax.y + c5 * ax.z);
        float len = max(abs(nv.x), max(abs(nv.y), abs(nv.z)));
        ax = len > 0.0 ? nv * (1.0 / len) : ax;
    }
    float len = length(ax);
    ax = len > 0.0 ? ax / len : vec3(0.0);
    float tmin = 1.0 / 0.0, tmax = -1.0 / 0.0, tanchor = 0.0;
    [[unroll]] for (uint t = 0u; t < 16u; t++) {
        float p = dot(U[t] - mean, ax);
        bool in_ = ((mask >> t) & 1u) != 0u;
        tmin = in_ ? min(tmin, p) : tmin;
        tmax = in_ ? max(tmax, p) : tmax;
        if (t == anchor) tanchor = p;
    }
    if (tanchor - tmin > tmax - tanchor) {
        float tmp = tmin;
        tmin = tmax;
        tmax = tmp;
    }
    e0 = mean + ax * tmin;
    e1 = mean + ax * tmax;
}

// both subsets of partition part (two) or the one-subset line, absolute endpoints
void fit_slot(bool two, uint part, out vec3 ef[4])
{
    ef[2] = ef[3] = U0;
    for (uint s = 0u; s < (two ? 2u : 1u); s++) {
        uint mask = !two ? 0xFFFFu : s == 1u ? s_p2[part] : ~s_p2[part] & 0xFFFFu;
        vec3 e0, e1;
        fit_subset(mask, s == 1u ? s_a2[part] : 0u, e0, e1);
        if (s == 0u) {
            ef[0] = e0 + U0;
            ef[1] = e1 + U0;
        } else {
            ef[2] = e0 + U0;
            ef[3] = e1 + U0;
        }
    }
}

// the weighted residual of a subset off its principal axis from its moments: trace - top eigenvalue
float resid(float sw, vec3 s1, float c[6])
{
    if (!(sw > 0.0)) return 0.0;
    vec3 m = s1 / sw;
    float a0 = c[0] - s1.x * m.x, a1 = c[1] - s1.x * m.y, a2 = c[2] - s1.x * m.z;
    float a3 = c[3] - s1.y * m.y, a4 = c[4] - s1.y * m.z, a5 = c[5] - s1.z * m.z;
    vec3 ax;
    if (a0 >= a3 && a0 >= a5) ax = vec3(a0, a1, a2);
    else if (a3 >= a5) ax = vec3(a1, a3, a4);
    else ax = vec3(a2, a4, a5);
    [[unroll]] for (int it = 0; it < 3; it++) {
        vec3 nv = vec3(a0 * ax.x + a1 * ax.y + a2 * ax.z, a1 * ax.x + a3 * ax.y + a4 * ax.z, a2 * ax.x + a4 * ax.y + a5 * ax.z);
        float len = max(abs(nv.x), max(abs(nv.y), abs(nv.z)));
        ax = len > 0.0 ? nv / len : ax;
    }
    float l2 = dot(ax, ax);
    vec3 cx = vec3(a0 * ax.x + a1 * ax.y + a2 * ax.z, a1 * ax.x + a3 * ax.y + a4 * ax.z, a2 * ax.x + a4 * ax.y + a5 * ax.z);
    float lam = l2 > 0.0 ? dot(ax, cx) / l2 : 0.0;
    return max(a0 + a3 + a5 - lam, 0.0);
}

// weighted least squares endpoints (absolute) for fixed indices, per channel weights
void ls_fit(bool two, uint bits, uvec2 idx, out vec3 ef[4])
{
    vec3 aa[2], ab[2], bb[2], ax[2], bx[2], sw[2], sx[2];
    [[unroll]] for (int s = 0; s < 2; s++) {
        aa[s] = ab[s] = bb[s] = ax[s] = bx[s] = sw[s] = sx[s] = vec3(0.0);
    }
    [[unroll]] for (uint t = 0u; t < 16u; t++) {
        vec3 w = vec3(s_W[t * 3u][LID], s_W[t * 3u + 1u][LID], s_W[t * 3u + 2u][LID]);
        float be = float(weight(two, int((idx[t / 8u] >> (4u * (t % 8u))) & 15u))) / 64.0, al = 1.0 - be;
        bool s1 = ((bits >> t) & 1u) != 0u;
        vec3 w0 = s1 ? vec3(0.0) : w, w1 = s1 ? w : vec3(0.0);
        vec3 wu0 = w0 * U[t], wu1 = w1 * U[t];
        aa[0] += w0 * (al * al);
        ab[0] += w0 * (al * be);
        bb[0] += w0 * (be * be);
        ax[0] += wu0 * al;
        bx[0] += wu0 * be;
        sw[0] += w0;
        sx[0] += wu0;
        aa[1] += w1 * (al * al);
        ab[1] += w1 * (al * be);
        bb[1] += w1 * (be * be);
        ax[1] += wu1 * al;
        bx[1] += wu1 * be;
        sw[1] += w1;
        sx[1] += wu1;
    }
    [[unroll]] for (int s = 0; s < 2; s++) {
        vec3 det = aa[s] * bb[s] - ab[s] * ab[s];
        vec3 mean = sx[s] / max(sw[s], vec3(1e-30));
        bvec3 ok = bvec3(det.x > 1e-6 * (aa[s].x * bb[s].x) && det.x > 0.0, det.y > 1e-6 * (aa[s].y * bb[s].y) && det.y > 0.0,
                         det.z > 1e-6 * (aa[s].z * bb[s].z) && det.z > 0.0);
        vec3 rd = 1.0 / det;
        vec3 e0 = mix(mean, (ax[s] * bb[s] - bx[s] * ab[s]) * rd, ok);
        vec3 e1 = mix(mean, (bx[s] * aa[s] - ax[s] * ab[s]) * rd, ok);
        ef[2 * s] = e0 + U0;
        ef[2 * s + 1] = e1 + U0;
    }
}

uvec4 bits_out;
uint bit_pos;
void put_bits(uint v, uint n)
{
    for (uint i = 0u; i < n; i++, bit_pos++)
        if (((v >> i) & 1u) != 0u) bits_out[bit_pos >> 5] |= 1u << (bit_pos & 31u);
}

uvec4 pack(uint mi, uint part, ivec3 q[4], uvec2 idx)
{
    const bool two = mi < 10u;
    uint f[14];
    for (int k = 0; k < 14; k++) f[k] = 0u;
    uint emask = (1u << m_epb(mi)) - 1u;
    const ivec3 dlt = m_delta(mi);
    for (uint e = 0u; e < (two ? 4u : 2u); e++)
        for (int c = 0; c < 3; c++) {
            if (e == 0u || !m_tr(mi)) f[e * 3u + uint(c)] = uint(q[e][c]) & emask;
            else f[e * 3u + uint(c)] = uint(q[e][c] - q[0][c]) & ((1u << uint(dlt[c])) - 1u);
        }
    f[12] = part;
    f[13] = M_VALUE[mi];
    bits_out = uvec4(0u);
    bit_pos = 0u;
    for (uint s = 0u; s < 28u; s++) {
        uint sp = tab.t[T_SPAN + mi * 28u + s];
        uint fld = sp & 255u, a = (sp >> 8) & 255u, b = sp >> 16;
        if (fld >= 14u) break;
        if (a >= b) put_bits(f[fld] >> b, a - b + 1u);
        else
            for (uint bit = b + 1u; bit-- > a;) put_bits(f[fld] >> bit, 1u);
    }
    for (uint t = 0u; t < 16u; t++)
        put_bits((idx[t / 8u] >> (4u * (t % 8u))) & 15u, (two ? 3u : 4u) - ((t == 0u || (two && t == s_a2[part])) ? 1u : 0u));
    return bits_out;
}

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    LID = lid;
    const uint blk = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 64u + lid;
    if (lid < 32u) {
        s_p2[lid] = BPTC_P2[lid];
        s_a2[lid] = BPTC_A2[lid];
    }
    barrier();
    // invocations past the last block encode the last block again and store nothing (no early
    // return: lavapipe gave a different, equally valid, block next to returned invocations)
    const bool live = blk < pc.blocks_x * pc.block_rows;
    const uint blkc = min(blk, pc.blocks_x * pc.block_rows - 1u);
    const uint parts = min(pc.partitions, MAXP);
    const uint nkeep = min(max(pc.keep, 1u), MAXK);

    // the targets (the CPU's input policy), centred on texel 0; logs and weights to scratch
    uint bx = blkc % pc.blocks_x, by = blkc / pc.blocks_x;
    const float kf = pc.sf != 0u ? 32.0 / 31.0 : 64.0 / 31.0;
    [[unroll]] for (uint t = 0u; t < 16u; t++) {
        uint x = min(bx * 4u + (t & 3u), pc.width - 1u), y = min(by * 4u + (t >> 2), pc.rows - 1u);
        vec3 v = src.px[y * pc.width + x].rgb;
        ivec3 xv;
        float tw = 0.0;
        [[unroll]] for (int c = 0; c < 3; c++) {
            float f = v[c];
            if (isnan(f)) f = 0.0;
            if (pc.sf == 0u && f < 0.0) f = 0.0;
            f = clamp(f, -65504.0, 65504.0);
            uint h = packHalf2x16(vec2(f, 0.0)) & 0xFFFFu;
            if (h == 0x8000u) h = 0u;
            int mag = int(h & 0x7FFFu);
            xv[c] = (h & 0x8000u) != 0u ? -mag : mag;
            U[t][c] = xv[c] == 0 ? 0.0 : (xv[c] > 0 ? (float(xv[c]) + 0.5) * kf : (float(xv[c]) - 0.5) * kf);
            int e = (mag >> 10) & 31;
            float step = exp2(float((e == 0 ? 1 : e) - 25));
            float wv = step * 1024.0 / (1.0 + abs(half_val(mag)));
            float wc = wv * wv + MU_LN2SQ;
            s_W[t * 3u + uint(c)][lid] = wc;
            tw += wc;
        }
        vec3 l = slog3(xv);
        s_L[t * 3u][lid] = l.x;
        s_L[t * 3u + 1u][lid] = l.y;
        s_L[t * 3u + 2u][lid] = l.z;
        TW[t] = tw * (1.0 / 3.0) + 1e-12;
    }
    U0 = U[0];
    [[unroll]] for (uint t = 0u; t < 16u; t++) U[t] -= U0;

    // 2. the partitions ranked by residual; the best MAXP (strict <: ties keep the lower number)
    float rv[MAXP];
    uint rp[MAXP];
    [[unroll]] for (uint i = 0u; i < MAXP; i++) {
        rv[i] = 1.0 / 0.0;
        rp[i] = 0u;
    }
    if (parts > 0u) {
        float swt = 0.0, mt[6] = float[6](0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        vec3 st = vec3(0.0);
        [[unroll]] for (uint t = 0u; t < 16u; t++) {
            vec3 vd = TW[t] * U[t];
            swt += TW[t];
            st += vd;
            mt[0] += vd.x * U[t].x;
            mt[1] += vd.x * U[t].y;
            mt[2] += vd.x * U[t].z;
            mt[3] += vd.y * U[t].y;
            mt[4] += vd.y * U[t].z;
            mt[5] += vd.z * U[t].z;
        }
        [[dont_unroll]] for (uint p = 0u; p < 32u; p++) {
            uint bits = s_p2[p];
            float sw1 = 0.0, m1[6] = float[6](0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
            vec3 s11 = vec3(0.0);
            [[unroll]] for (uint t = 0u; t < 16u; t++) {
                float v = ((bits >> t) & 1u) != 0u ? TW[t] : 0.0;
                vec3 vd = v * U[t];
                sw1 += v;
                s11 += vd;
                m1[0] += vd.x * U[t].x;
                m1[1] += vd.x * U[t].y;
                m1[2] += vd.x * U[t].z;
                m1[3] += vd.y * U[t].y;
                m1[4] += vd.y * U[t].z;
                m1[5] += vd.z * U[t].z;
            }
            float m0[6];
            [[unroll]] for (int i = 0; i < 6; i++) m0[i] = mt[i] - m1[i];
            float v = resid(swt - sw1, st - s11, m0) + resid(sw1, s11, m1);
            uint vi = p;
            [[unroll]] for (uint i = 0u; i < MAXP; i++) {
                bool lt = v < rv[i];
                float f = rv[i];
                uint fi = rp[i];
                rv[i] = lt ? v : rv[i];
                rp[i] = lt ? vi : rp[i];
                v = lt ? f : v;
                vi = lt ? fi : vi;
            }
        }
    }
    uvec2 order = uvec2(0u); // the ranked partitions, 8 bits each
    [[unroll]] for (uint i = 0u; i < MAXP; i++) order[i / 4u] |= rp[i] << (8u * (i % 4u));

    // 1, 3, 4. per slot (0: the one-subset line, 1..P: the ranked partitions): fit, filter, score;
    // the best K (err, code = part | mode << 5 | variant << 9) in registers, ties to the earlier
    float kv[MAXK];
    uint kc[MAXK];
    [[unroll]] for (uint i = 0u; i < MAXK; i++) {
        kv[i] = 1.0 / 0.0;
        kc[i] = 10u << 5; // mode 3 on the line: only reached if nothing was scored
    }
    float lv = 1.0 / 0.0;
    uint lc = 10u << 5;
    [[dont_unroll]] for (uint slot = 0u; slot <= parts; slot++) {
        const bool two = slot > 0u;
        const uint part = two ? (order[(slot - 1u) / 4u] >> (8u * ((slot - 1u) % 4u))) & 255u : 0u;
        const uint bits = two ? s_p2[part] : 0u;
        vec3 ef[4];
        fit_slot(two, part, ef);
#if SCORE_QUAD
        // the fitted segments' indices (projection, rounded) and the moments that give any quantized
        // endpoints' error for those indices in closed form (header, step 4)
        vec3 qa[2], qb[2], qc[2], qd[2], qe[2];
        float base = 0.0;
        {
            const float n1 = two ? 7.0 : 15.0;
            vec3 a0 = ef[0] - U0, a1 = ef[2] - U0, d0 = ef[1] - ef[0], d1 = ef[3] - ef[2];
            float dd0 = dot(d0, d0), dd1 = dot(d1, d1);
            float i0 = dd0 > 0.0 ? n1 / dd0 : 0.0, i1 = dd1 > 0.0 ? n1 / dd1 : 0.0;
            [[unroll]] for (int k = 0; k < 2; k++) qa[k] = qb[k] = qc[k] = qd[k] = qe[k] = vec3(0.0);
            [[unroll]] for (uint t = 0u; t < 16u; t++) {
                bool s1 = ((bits >> t) & 1u) != 0u;
                vec3 a = s1 ? a1 : a0, d = s1 ? d1 : d0;
                float be = clamp(round(dot(U[t] - a, d) * (s1 ? i1 : i0)), 0.0, n1) / n1, al = 1.0 - be;
                vec3 r = a + d * be - U[t];
                vec3 wt = vec3(s_W[t * 3u][LID], s_W[t * 3u + 1u][LID], s_W[t * 3u + 2u][LID]);
                vec3 w0 = s1 ? vec3(0.0) : wt, w1 = s1 ? wt : vec3(0.0), wr0 = w0 * r, wr1 = w1 * r;
                base += dot(wt, r * r);
                qa[0] += w0 * (al * al);
                qb[0] += w0 * (al * be);
                qc[0] += w0 * (be * be);
                qd[0] += wr0 * al;
                qe[0] += wr0 * be;
                qa[1] += w1 * (al * al);
                qb[1] += w1 * (al * be);
                qc[1] += w1 * (be * be);
                qd[1] += wr1 * al;
                qe[1] += wr1 * be;
            }
        }
#endif
        const uint m0 = two ? 0u : 10u, nm = two ? 10u : 4u;
        uint best = 0u, ok = 0u;
        for (uint o = 0u; o < nm; o++)
            if (m_tr(m0 + o) && fits(m0 + o, ef)) {
                best = max(best, m_epb(m0 + o));
                ok |= 1u << o;
            }
        uint todo = 0u;
        for (uint o = 0u; o < nm; o++)
            if (!m_tr(m0 + o) || (((ok >> o) & 1u) != 0u && m_epb(m0 + o) + PREC_SPAN >= best)) todo |= 1u << o;
        // the candidates (mode, variant) of this slot, one call site for quantize and approx_err
        uint var = 0u;
        [[dont_unroll]] while (todo != 0u) {
            const uint o = uint(findLSB(todo)), mi = m0 + o;
            ivec3 q[4];
            bool ch = quantize(mi, ef, var, false, q);
            uint code = part | mi << 5 | var << 9;
            // next: the recentred variant when a delta was clamped, else the next mode
            bool again = var == 0u && ch;
            if (var == 1u && !ch) {
                var = 0u;
                todo &= todo - 1u;
                continue;
            }
            var = again ? 1u : 0u;
            if (!again) todo &= todo - 1u;
#if SCORE_QUAD
            // the error for the fitted indices: base + per subset and channel the quadratic form in
            // the endpoints' quantization offsets (da, db)
            float e = base;
            {
                const uint epb = m_epb(mi);
                [[unroll]] for (int k = 0; k < 2; k++) {
                    vec3 da = vec3(unq3(q[2 * k], epb)) - ef[2 * k], db = vec3(unq3(q[2 * k + 1], epb)) - ef[2 * k + 1];
                    if (k == 0 || two)
                        e += dot(qa[k], da * da) + 2.0 * dot(qb[k], da * db) + dot(qc[k], db * db) +
                             2.0 * (dot(qd[k], da) + dot(qe[k], db));
                }
            }
#else
            float e = approx_err(mi, bits, q);
#endif
            uint vc = code;
            if (e < lv) { // the best one-subset candidate is always measured exactly (job K)
                lv = e;
                lc = vc;
            }
            [[unroll]] for (uint i = 0u; i < MAXK; i++) {
                bool lt = e < kv[i];
                float f = kv[i];
                uint fc = kc[i];
                kv[i] = lt ? e : kv[i];
                kc[i] = lt ? vc : kc[i];
                e = lt ? f : e;
                vc = lt ? fc : vc;
            }
        }
    }

    // 5. jobs 0..K-1: each kept candidate refitted, quantized exactly and measured with the exact
    // metric; job K: the same for the best one-subset candidate (where signs or ranges make the
    // linearised scores unreliable, the cheap scores can bury it under two-subset candidates);
    // jobs K+1..K+R: the best R of those again, with L least-squares passes. The lowest
    // error wins (ties: the earlier job). Uniform trip counts, no break (lavapipe gave a different,
    // equally valid, block when neighbouring invocations left a loop at another iteration).
    const uint nref = min(min(max(pc.radius, 1u), MAXR), nkeep);
    float rv2[MAXR];
    uint rc2[MAXR];
    [[unroll]] for (uint i = 0u; i < MAXR; i++) {
        rv2[i] = 1.0 / 0.0;
        rc2[i] = 0u;
    }
    float best_e = 1.0 / 0.0;
    ivec3 bq[4];
    uvec2 bidx = uvec2(0u);
    uint bcode = kc[0];
    [[unroll]] for (int e = 0; e < 4; e++) bq[e] = ivec3(0);
    [[dont_unroll]] for (uint job = 0u; job <= nkeep + nref; job++) {
        const bool first = job <= nkeep, line = job == nkeep;
        const uint code = line ? lc : first ? kc[0] : rc2[0];
        const bool valid = line || (first ? (kv[0] < 1.0 / 0.0 || job == 0u) : rv2[0] < 1.0 / 0.0);
        if (line) {
        } else if (first) {
            [[unroll]] for (uint i = 0u; i + 1u < MAXK; i++) {
                kv[i] = kv[i + 1u];
                kc[i] = kc[i + 1u];
            }
            kv[MAXK - 1u] = 1.0 / 0.0;
        } else {
            [[unroll]] for (uint i = 0u; i + 1u < MAXR; i++) {
                rv2[i] = rv2[i + 1u];
                rc2[i] = rc2[i + 1u];
            }
            rv2[MAXR - 1u] = 1.0 / 0.0;
        }
        const uint part = code & 31u, mi = (code >> 5) & 15u, var = code >> 9;
        const bool two = mi < 10u;
        const uint bits = two ? s_p2[part] : 0u, anc = two ? s_a2[part] : 0u;
        vec3 ef[4];
        fit_slot(two, part, ef);
        float err = 1.0 / 0.0;
        ivec3 cq[4];
        uvec2 cidx = uvec2(0u);
        bool stop = false; // a pass that does not lower the error ends this candidate's refinement
        [[dont_unroll]] for (uint it = 0u; it <= (first ? min(pc.ls_iters, FIRST_LS) : pc.ls_iters); it++) {
            if (it > 0u) ls_fit(two, bits, cidx, ef);
            ivec3 q[4];
            uvec2 idx;
            quantize(mi, ef, var, true, q);
            float e = assign(mi, bits, anc, q, idx);
            bool take = !stop && (it == 0u || e < err);
            stop = !take;
            err = take ? e : err;
            [[unroll]] for (int k = 0; k < 4; k++) cq[k] = take ? q[k] : cq[k];
            cidx = take ? idx : cidx;
        }
        if (valid && err < best_e) {
            best_e = err;
            bq = cq;
            bidx = cidx;
            bcode = code;
        }
        float e = valid && first ? err : 1.0 / 0.0;
        uint vc = code;
        [[unroll]] for (uint i = 0u; i < MAXR; i++) {
            bool lt = e < rv2[i];
            float f = rv2[i];
            uint fc = rc2[i];
            rv2[i] = lt ? e : rv2[i];
            rc2[i] = lt ? vc : rc2[i];
            e = lt ? f : e;
            vc = lt ? fc : vc;
        }
    }
    if (live) dst.blk[blk] = pack((bcode >> 5) & 15u, bcode & 31u, bq, bidx);
}

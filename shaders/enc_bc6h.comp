#version 450
// enc_bc6h.comp - kiln's own BC6H encoder on the GPU (gpu_strategy 0), quality "fast" only.
// The same algorithm as the CPU encoder at quality fast (src/codec/bc6h_enc.c documents it): the
// one-subset modes 3, 7, 11 and 15, each from one principal-axis fit in the unquantized domain,
// nearest quantization (and, for the transformed modes, the "recentre" alternative), exact index
// choice with the decoder's integer arithmetic under the RMSLE + MU * ULP error; the best candidate
// (lowest error, ties to the lower mode as the CPU's candidate order) gets one weighted
// least-squares pass, kept only when it lowers the error.
// Work split: LANES (4) consecutive invocations per block, lane k tries mode table entry 10 + k; the
// min-reduction goes through shared memory (no subgroup operations, no lane-order assumption): correct
// for any subgroup size. Differences to the CPU: float log/log1p and float (not double) least squares,
// so a few blocks can choose differently; test_gpu_bc6h.c bounds the gap (docs/PERFORMANCE.md).
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64) in;
layout(constant_id = 1) const uint SIGNED = 0u;

layout(push_constant) uniform Push {
    uint blocks_x;   // blocks per row
    uint block_rows; // block rows in this batch
    uint width;      // texels per row
    uint rows;       // texel rows in this batch's input
} pc;

layout(std430, binding = 0) readonly buffer Src { vec4 px[]; } src;
layout(std430, binding = 1) writeonly buffer Dst { uvec4 blk[]; } dst;

#include "bptc_tables.glsl"

const uint LANES = 4u;
const float MU_LN2SQ = 0.03 * 0.480453014;
const float ULP_K2 = MU_LN2SQ / 1048576.0;

shared float s_err[64];

// one-subset modes in the CPU's table order (mode table entries 10..13)
const uint M_VALUE[4] = uint[4](3u, 7u, 11u, 15u);
const uint M_EPB[4] = uint[4](10u, 11u, 12u, 16u);
const uint M_DELTA[4] = uint[4](10u, 9u, 8u, 4u);
const bool M_TRANSFORMED[4] = bool[4](false, true, true, true);
// bit spans (field, a, b): field 0..5 = R0 G0 B0 R1 G1 B1, 13 = mode bits; a >= b: bits b..a LSB
// first; a < b: bits b down to a (reversed). 10 spans per mode, mode 3 padded with empty spans (field 15).
const uvec3 SPANS[40] = uvec3[40](
    uvec3(13, 4, 0), uvec3(0, 9, 0), uvec3(1, 9, 0), uvec3(2, 9, 0), uvec3(3, 9, 0), uvec3(4, 9, 0), uvec3(5, 9, 0),
    uvec3(15, 0, 0), uvec3(15, 0, 0), uvec3(15, 0, 0),
    uvec3(13, 4, 0), uvec3(0, 9, 0), uvec3(1, 9, 0), uvec3(2, 9, 0), uvec3(3, 8, 0), uvec3(0, 10, 10), uvec3(4, 8, 0),
    uvec3(1, 10, 10), uvec3(5, 8, 0), uvec3(2, 10, 10),
    uvec3(13, 4, 0), uvec3(0, 9, 0), uvec3(1, 9, 0), uvec3(2, 9, 0), uvec3(3, 7, 0), uvec3(0, 10, 11), uvec3(4, 7, 0),
    uvec3(1, 10, 11), uvec3(5, 7, 0), uvec3(2, 10, 11),
    uvec3(13, 4, 0), uvec3(0, 9, 0), uvec3(1, 9, 0), uvec3(2, 9, 0), uvec3(3, 3, 0), uvec3(0, 10, 15), uvec3(4, 3, 0),
    uvec3(1, 10, 15), uvec3(5, 3, 0), uvec3(2, 10, 15));

// block state (as the CPU's struct enc)
ivec3 X[16]; // target halves, signed
vec3 U[16];  // targets in the unquantized domain
vec3 Wt[16]; // fitting weights
vec3 L[16];  // sign(v) ln(1 + |v|)

float half_val(int mag) { return unpackHalf2x16(uint(mag)).x; }
float log1p_(float v)
{
    float u = 1.0 + v;
    return u == 1.0 ? v : log(u) * (v / (u - 1.0));
}
float slog(int x)
{
    float v = log1p_(half_val(abs(x)));
    return x < 0 ? -v : v;
}

int unq(int x, uint epb)
{
    if (SIGNED == 0u) {
        if (epb >= 15u) return x;
        if (x == 0) return 0;
        if (x == int((1u << epb) - 1u)) return 0xFFFF;
        return int(((uint(x) << 15) + 0x4000u) >> (epb - 1u));
    }
    if (epb >= 16u) return x;
    uint mag = uint(abs(x));
    int r;
    if (mag == 0u) r = 0;
    else if (mag >= (1u << (epb - 1u)) - 1u) r = 0x7FFF;
    else r = int(((mag << 15) + 0x4000u) >> (epb - 1u));
    return x < 0 ? -r : r;
}
int finish_x(int v)
{
    if (SIGNED == 0u) return int((uint(v) * 31u) >> 6);
    if (v < 0) return -int((uint(-v) * 31u) >> 5);
    return int((uint(v) * 31u) >> 5);
}
int interp(int a, int b, uint w) { return ((64 - int(w)) * a + int(w) * b + 32) >> 6; } // arithmetic: floor

void q_range(uint mi, out int lo, out int hi)
{
    if (SIGNED == 0u) {
        lo = 0;
        hi = int((1u << M_EPB[mi]) - 1u);
    } else {
        hi = int((1u << (M_EPB[mi] - 1u)) - 1u);
        lo = -hi;
    }
}

int quant1(float u, uint mi, int lo, int hi)
{
    if (u > 70000.0) u = 70000.0;
    if (u < -70000.0) u = -70000.0;
    if (isnan(u)) u = 0.0;
    int q0 = int(floor(u * exp2(float(int(M_EPB[mi]) - 16))));
    int best = lo;
    float bd = 1.0 / 0.0;
    for (int q = q0 - 1; q <= q0 + 1; q++) {
        int qq = clamp(q, lo, hi);
        float d = abs(float(unq(qq, M_EPB[mi])) - u);
        if (d < bd) {
            bd = d;
            best = qq;
        }
    }
    return best;
}

void quantize(uint mi, vec3 e0, vec3 e1, out ivec3 q0, out ivec3 q1)
{
    int lo, hi;
    q_range(mi, lo, hi);
    for (int c = 0; c < 3; c++) {
        q0[c] = quant1(e0[c], mi, lo, hi);
        q1[c] = quant1(e1[c], mi, lo, hi);
    }
    if (M_TRANSFORMED[mi])
        for (int c = 0; c < 3; c++) {
            int dl = -int(1u << (M_DELTA[mi] - 1u)), dh = -dl - 1;
            int l = max(q0[c] + dl, lo), h = min(q0[c] + dh, hi);
            q1[c] = clamp(q1[c], l, h);
        }
}

// returns true when E0 had to move (the CPU's recentre, one subset)
bool recentre(uint mi, vec3 e0, vec3 e1, out ivec3 q0, out ivec3 q1)
{
    int lo, hi;
    q_range(mi, lo, hi);
    bool changed = false;
    for (int c = 0; c < 3; c++) {
        int r0 = quant1(e0[c], mi, lo, hi), r1 = quant1(e1[c], mi, lo, hi);
        int dl = -int(1u << (M_DELTA[mi] - 1u)), dh = -dl - 1;
        int a = r1 - dh, b = r1 - dl, z = r0;
        if (a <= b) z = clamp(z, a, b);
        else z = (a + b) / 2;
        z = clamp(z, lo, hi);
        if (z != r0) changed = true;
        q0[c] = z;
        int l = max(z + dl, lo), h = min(z + dh, hi);
        q1[c] = clamp(r1, l, h);
    }
    return changed;
}

float assign(uint mi, ivec3 q0, ivec3 q1, out uint idx[16])
{
    ivec3 pal[16];
    vec3 lp[16];
    ivec3 a, b;
    for (int c = 0; c < 3; c++) {
        a[c] = unq(q0[c], M_EPB[mi]);
        b[c] = unq(q1[c], M_EPB[mi]);
    }
    for (uint i = 0u; i < 16u; i++)
        for (int c = 0; c < 3; c++) {
            pal[i][c] = finish_x(interp(a[c], b[c], BPTC_W4[i]));
            lp[i][c] = slog(pal[i][c]);
        }
    float total = 0.0;
    for (uint t = 0u; t < 16u; t++) {
        uint lim = t == 0u ? 8u : 16u;
        float best = 1.0 / 0.0;
        uint bi = 0u;
        for (uint i = 0u; i < lim; i++) {
            float e = 0.0;
            for (int c = 0; c < 3; c++) {
                float dl = lp[i][c] - L[t][c], d = float(pal[i][c] - X[t][c]);
                e += dl * dl + ULP_K2 * d * d;
            }
            if (e < best) {
                best = e;
                bi = i;
            }
        }
        idx[t] = bi;
        total += best;
    }
    return total;
}

float cand_make(uint mi, vec3 e0, vec3 e1, out ivec3 q0, out ivec3 q1, out uint idx[16])
{
    quantize(mi, e0, e1, q0, q1);
    float err = assign(mi, q0, q1, idx);
    if (M_TRANSFORMED[mi]) {
        ivec3 n0, n1;
        uint nidx[16];
        if (recentre(mi, e0, e1, n0, n1)) {
            float ne = assign(mi, n0, n1, nidx);
            if (ne < err) {
                err = ne;
                q0 = n0;
                q1 = n1;
                idx = nidx;
            }
        }
    }
    return err;
}

// principal-axis fit of the whole block (one subset, anchor texel 0 nearer e0)
void fit_block(out vec3 e0, out vec3 e1)
{
    float sw = 0.0;
    vec3 mean = vec3(0.0);
    float tw[16];
    for (uint t = 0u; t < 16u; t++) {
        tw[t] = (Wt[t][0] + Wt[t][1] + Wt[t][2]) * (1.0 / 3.0) + 1e-12;
        sw += tw[t];
        for (int c = 0; c < 3; c++) mean[c] += tw[t] * U[t][c];
    }
    for (int c = 0; c < 3; c++) mean[c] /= sw;
    float cov[6] = float[6](0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    for (uint t = 0u; t < 16u; t++) {
        float d0 = U[t][0] - mean[0], d1 = U[t][1] - mean[1], d2 = U[t][2] - mean[2];
        cov[0] += tw[t] * d0 * d0;
        cov[1] += tw[t] * d0 * d1;
        cov[2] += tw[t] * d0 * d2;
        cov[3] += tw[t] * d1 * d1;
        cov[4] += tw[t] * d1 * d2;
        cov[5] += tw[t] * d2 * d2;
    }
    vec3 ax;
    if (cov[0] >= cov[3] && cov[0] >= cov[5]) ax = vec3(cov[0], cov[1], cov[2]);
    else if (cov[3] >= cov[5]) ax = vec3(cov[1], cov[3], cov[4]);
    else ax = vec3(cov[2], cov[4], cov[5]);
    for (int it = 0; it < 8; it++) {
        float n0 = cov[0] * ax[0] + cov[1] * ax[1] + cov[2] * ax[2];
        float n1 = cov[1] * ax[0] + cov[3] * ax[1] + cov[4] * ax[2];
        float n2 = cov[2] * ax[0] + cov[4] * ax[1] + cov[5] * ax[2];
        float len = max(abs(n0), max(abs(n1), abs(n2)));
        if (!(len > 0.0)) break;
        ax = vec3(n0 / len, n1 / len, n2 / len);
    }
    float len = sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);
    if (len > 0.0) ax = vec3(ax[0] / len, ax[1] / len, ax[2] / len);
    else ax = vec3(0.0);
    float tmin = 1.0 / 0.0, tmax = -1.0 / 0.0, tanchor = 0.0;
    for (uint t = 0u; t < 16u; t++) {
        float d0 = U[t][0] - mean[0], d1 = U[t][1] - mean[1], d2 = U[t][2] - mean[2];
        float p = d0 * ax[0] + d1 * ax[1] + d2 * ax[2];
        if (p < tmin) tmin = p;
        if (p > tmax) tmax = p;
        if (t == 0u) tanchor = p;
    }
    if (tanchor - tmin > tmax - tanchor) {
        float tmp = tmin;
        tmin = tmax;
        tmax = tmp;
    }
    for (int c = 0; c < 3; c++) {
        e0[c] = mean[c] + ax[c] * tmin;
        e1[c] = mean[c] + ax[c] * tmax;
    }
}

void ls_fit(uint idx[16], out vec3 e0, out vec3 e1)
{
    for (int c = 0; c < 3; c++) {
        float aa = 0.0, ab = 0.0, bb = 0.0, ax = 0.0, bx = 0.0, sw = 0.0, sx = 0.0;
        for (uint t = 0u; t < 16u; t++) {
            float w = Wt[t][c] + 1e-12, be = float(BPTC_W4[idx[t]]) / 64.0, al = 1.0 - be, u = U[t][c];
            aa += w * al * al;
            ab += w * al * be;
            bb += w * be * be;
            ax += w * al * u;
            bx += w * be * u;
            sw += w;
            sx += w * u;
        }
        float det = aa * bb - ab * ab;
        if (det > 1e-6 * (aa * bb) && det > 0.0) {
            e0[c] = (ax * bb - bx * ab) / det;
            e1[c] = (bx * aa - ax * ab) / det;
        } else {
            e0[c] = e1[c] = sx / sw;
        }
    }
}

uvec4 bits_out;
uint bit_pos;
void put_bits(uint v, uint n)
{
    for (uint i = 0u; i < n; i++, bit_pos++)
        if (((v >> i) & 1u) != 0u) bits_out[bit_pos >> 5] |= 1u << (bit_pos & 31u);
}

uvec4 pack(uint mi, ivec3 q0, ivec3 q1, uint idx[16])
{
    uint f[16];
    uint emask = (1u << M_EPB[mi]) - 1u; // epb 16: 0xFFFF
    for (int c = 0; c < 3; c++) {
        f[c] = uint(q0[c]) & emask;
        f[3 + c] = M_TRANSFORMED[mi] ? uint(q1[c] - q0[c]) & ((1u << M_DELTA[mi]) - 1u) : uint(q1[c]) & emask;
    }
    for (int k = 6; k < 16; k++) f[k] = 0u;
    f[13] = M_VALUE[mi];
    bits_out = uvec4(0u);
    bit_pos = 0u;
    for (uint s = 0u; s < 10u; s++) {
        uvec3 sp = SPANS[mi * 10u + s];
        if (sp.x == 15u) continue;
        if (sp.y >= sp.z) put_bits(f[sp.x] >> sp.z, sp.y - sp.z + 1u);
        else
            for (uint bit = sp.z + 1u; bit-- > sp.y;) put_bits(f[sp.x] >> bit, 1u);
    }
    for (uint t = 0u; t < 16u; t++) put_bits(idx[t], t == 0u ? 3u : 4u);
    return bits_out;
}

void main()
{
    uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    uint blk = i / LANES, lane = i % LANES;
    bool live = blk < pc.blocks_x * pc.block_rows; // no early return: every invocation reaches the barrier
    ivec3 q0 = ivec3(0), q1 = ivec3(0);
    uint idx[16];
    for (uint t = 0u; t < 16u; t++) idx[t] = 0u;
    float err = 1.0 / 0.0;
    if (live) {
        uint bx = blk % pc.blocks_x, by = blk / pc.blocks_x;
        const float k = SIGNED != 0u ? 32.0 / 31.0 : 64.0 / 31.0;
        for (uint t = 0u; t < 16u; t++) {
            uint x = min(bx * 4u + (t & 3u), pc.width - 1u), y = min(by * 4u + (t >> 2), pc.rows - 1u);
            vec3 v = src.px[y * pc.width + x].rgb;
            for (int c = 0; c < 3; c++) {
                float f = v[c];
                if (isnan(f)) f = 0.0;
                if (SIGNED == 0u && f < 0.0) f = 0.0;
                f = clamp(f, -65504.0, 65504.0);
                uint h = packHalf2x16(vec2(f, 0.0)) & 0xFFFFu;
                if (h == 0x8000u) h = 0u;
                int mag = int(h & 0x7FFFu);
                int xv = (h & 0x8000u) != 0u ? -mag : mag;
                X[t][c] = xv;
                U[t][c] = xv == 0 ? 0.0 : (xv > 0 ? (float(xv) + 0.5) * k : (float(xv) - 0.5) * k);
                int e = (mag >> 10) & 31;
                float step = exp2(float((e == 0 ? 1 : e) - 25));
                float wv = step * 1024.0 / (1.0 + abs(half_val(mag)));
                Wt[t][c] = wv * wv + MU_LN2SQ;
                L[t][c] = slog(xv);
            }
        }
        vec3 e0, e1;
        fit_block(e0, e1);
        err = cand_make(lane, e0, e1, q0, q1, idx);
    }
    s_err[gl_LocalInvocationID.x] = err;
    barrier();
    if (!live) return;
    // the winner: lowest error, ties to the lower mode (the CPU's candidate order)
    uint base = gl_LocalInvocationID.x - lane, win = 0u;
    float we = s_err[base];
    for (uint l = 1u; l < LANES; l++)
        if (s_err[base + l] < we) {
            we = s_err[base + l];
            win = l;
        }
    if (lane != win) return;
    // refinement (quality fast: one least-squares pass, kept when it lowers the error)
    vec3 f0, f1;
    ls_fit(idx, f0, f1);
    ivec3 n0, n1;
    uint nidx[16];
    float ne = cand_make(lane, f0, f1, n0, n1, nidx);
    if (ne < err) {
        q0 = n0;
        q1 = n1;
        idx = nidx;
    }
    dst.blk[blk] = pack(lane, q0, q1, idx);
}

#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// enc_etc2_planar.comp - the planar step of kiln's GPU ETC2 RGB / RGBA / RGB A1 encoders above FAST (and
// of RGB A1 at FAST), bit-identical to the CPU (src/codec/etc2_enc.c kiln__etc2_search: planar_bound,
// planar_search, planar_fit, planar_quantise). It runs after the ETC1 pass (enc_etc1_q.comp /
// enc_etc1_q_a1.comp), on the per-block state both write (gpu_etc2_th.h kiln_etc2_gpu_block: error,
// flags, 8 packed bytes), and replaces a block by its planar encoding when that is strictly better.
// The CPU works in double: so does this shader, operation for operation (`precise`: no contraction
// into fma), with correctly rounded divisions (etc_div.glsl). The least-squares systems are exact in
// double (dyadic rationals of few bits), so only the divisions and the outlier residuals round, and
// they round as the CPU's do.
// 4 invocations per block (one per channel, the 4th idle), 16 blocks per workgroup of 64; barriers
// only (no subgroup operations): correct for every subgroup size.
// Skipped as on the CPU: error 0 after the ETC1 modes, RGB A1 blocks with a transparent pixel, and
// (above FAST) blocks whose planar_bound reaches the ETC1 error.
layout(local_size_x = 64) in;

layout(push_constant) uniform Push {
    uint width, height; // image size
    uint bx;            // blocks per row
    uint nblocks;
    int w0, w1, w2;     // channel weights
    int quality;        // kiln_quality 0..3
    uint a1;            // 1: ETC2 RGB A1 (alpha below athr is transparent)
    uint athr;
} pc;

layout(std430, binding = 0) readonly buffer Src { uint w[]; } src;
layout(std430, binding = 1) buffer Blocks { uint w[]; } blk; // 4 words per block: err, flags, bytes

#include "etc_div.glsl"

shared uint s_px[256];
shared double s_res[64];
shared uint s_best[64];
shared uint s_q[64];

int cv[16]; // this invocation's channel of the 16 pixels (row-major)
int ch;     // its channel

int pexp(int v) { return ch == 1 ? (v << 1) | (v >> 6) : (v << 2) | (v >> 4); }

// planar_chan_err: squared error of the channel for quantised o, h, v, stopping after a row once >= limit.
uint chan_err(int qo, int qh, int qv, uint limit)
{
    const int o = pexp(qo), h = pexp(qh), v = pexp(qv);
    uint e = 0u;
    for (int y = 0; y < 4; y++) {
        [[unroll]] for (int x = 0; x < 4; x++) {
            const int t = x * (h - o) + y * (v - o) + 4 * o + 2;
            const int d = clamp(((t + 2048) >> 2) - 512, 0, 255) - cv[y * 4 + x];
            e += uint(d * d);
        }
        if (e >= limit) return e;
    }
    return e;
}

int quant_near(double v)
{
    const int maxl = ch == 1 ? 127 : 63;
    precise double t = v * double(maxl);
    precise double u = etc_div(t, 255.0LF) + 0.5LF;
    const int l = int(floor(u));
    return clamp(l, 0, maxl);
}

// planar_quantise: the levels around the fit within radius, first strictly better kept.
void quantise(double fit[3], int radius, inout ivec3 q, inout uint best)
{
    const int maxl = ch == 1 ? 127 : 63;
    const ivec3 c = ivec3(quant_near(fit[0]), quant_near(fit[1]), quant_near(fit[2]));
    for (int a = -radius; a <= radius; a++)
        for (int b = -radius; b <= radius; b++)
            for (int d = -radius; d <= radius; d++) {
                const ivec3 s = c + ivec3(a, b, d);
                if (any(lessThan(s, ivec3(0))) || any(greaterThan(s, ivec3(maxl)))) continue;
                const uint e = chan_err(s.x, s.y, s.z, best);
                if (e < best) {
                    best = e;
                    q = s;
                }
            }
}

// planar_fit: least squares O, H, V over the pixels of mask, Cramer's rule (every product exact).
bool fit_mask(uint mask, inout double outv[3])
{
    precise double A[3][3];
    precise double b[3];
    [[unroll]] for (int i = 0; i < 3; i++) {
        b[i] = 0.0LF;
        [[unroll]] for (int j = 0; j < 3; j++) A[i][j] = 0.0LF;
    }
    for (int p = 0; p < 16; p++) {
        if (((mask >> uint(p)) & 1u) == 0u) continue;
        precise double x = double(p & 3) * 0.25LF, y = double(p >> 2) * 0.25LF;
        precise double f[3];
        f[0] = (1.0LF - x) - y;
        f[1] = x;
        f[2] = y;
        [[unroll]] for (int i = 0; i < 3; i++) {
            b[i] = b[i] + f[i] * double(cv[p]);
            [[unroll]] for (int j = 0; j < 3; j++) A[i][j] = A[i][j] + f[i] * f[j];
        }
    }
    precise double det = A[0][0] * (A[1][1] * A[2][2] - A[1][2] * A[2][1]) - A[0][1] * (A[1][0] * A[2][2] - A[1][2] * A[2][0]) +
                         A[0][2] * (A[1][0] * A[2][1] - A[1][1] * A[2][0]);
    if (abs(det) < 1e-9LF) return false;
    [[unroll]] for (int k = 0; k < 3; k++) {
        precise double M[3][3] = A;
        [[unroll]] for (int i = 0; i < 3; i++) M[i][k] = b[i];
        precise double num = M[0][0] * (M[1][1] * M[2][2] - M[1][2] * M[2][1]) - M[0][1] * (M[1][0] * M[2][2] - M[1][2] * M[2][0]) +
                             M[0][2] * (M[1][0] * M[2][1] - M[1][1] * M[2][0]);
        outv[k] = etc_div(num, det);
    }
    return true;
}

uint swap32(uint v) { return (v >> 24u) | ((v >> 8u) & 0xff00u) | ((v << 8u) & 0xff0000u) | (v << 24u); }
int sext3(int v) { return v >= 4 ? v - 8 : v; }

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    const uint r = lid & 3u;
    const uint g = lid & ~3u;
    const uint base = (lid >> 2u) * 16u;
    const uint block = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 16u + (lid >> 2u);
    const bool live = block < pc.nblocks;
    for (uint i = 0u; i < 4u; i++) {
        const uint p = r * 4u + i;
        if (live) {
            const uint x = min((block % pc.bx) * 4u + (p & 3u), pc.width - 1u);
            const uint y = min((block / pc.bx) * 4u + (p >> 2u), pc.height - 1u);
            s_px[base + p] = src.w[y * pc.width + x];
        } else {
            s_px[base + p] = 0u;
        }
    }
    barrier();

    const uint err = live ? blk.w[block * 4u] : 0u;
    bool act = live && err != 0u;
    if (pc.a1 != 0u)
        for (uint p = 0u; p < 16u; p++) act = act && (s_px[base + p] >> 24u) >= pc.athr;
    ch = int(min(r, 2u));
    for (int p = 0; p < 16; p++) cv[p] = int((s_px[base + uint(p)] >> uint(8 * ch)) & 255u);

    // ---- planar_bound: per channel, then summed in the CPU's order
    if (act && r < 3u) {
        int s = 0, sx = 0, sy = 0, q = 0;
        for (int p = 0; p < 16; p++) {
            const int c = cv[p];
            s += c;
            sx += (2 * (p & 3) - 3) * c;
            sy += (2 * (p >> 2) - 3) * c;
            q += c * c;
        }
        precise double res = ((double(q) - double(s * s) * 0.0625LF) - etc_div(double(sx * sx), 80.0LF)) -
                             etc_div(double(sy * sy), 80.0LF);
        s_res[lid] = res > 0.0LF ? res : 0.0LF;
    }
    barrier();
    bool run = act;
    if (act && pc.quality != 0) {
        precise double rb = 0.0LF;
        rb = rb + double(pc.w0) * s_res[g];
        rb = rb + double(pc.w1) * s_res[g + 1u];
        rb = rb + double(pc.w2) * s_res[g + 2u];
        run = rb < double(err);
    }

    // ---- planar_search, one channel per invocation
    if (run && r < 3u) {
        const int qual = pc.quality;
        const int radius = qual == 0 ? 0 : 1;
        precise double fit[3];
        uint best = 0xffffffffu;
        ivec3 qq = ivec3(0);
        if (qual == 0) {
            int s = 0, sx = 0, sy = 0;
            for (int p = 0; p < 16; p++) {
                s += cv[p];
                sx += (2 * (p & 3) - 3) * cv[p];
                sy += (2 * (p >> 2) - 3) * cv[p];
            }
            precise double gx = etc_div(double(sx), 40.0LF), gy = etc_div(double(sy), 40.0LF);
            precise double o = double(s) * 0.0625LF - 1.5LF * (gx + gy);
            fit[0] = o;
            fit[1] = o + 4.0LF * gx;
            fit[2] = o + 4.0LF * gy;
        } else if (!fit_mask(0xffffu, fit)) {
            fit[0] = 0.0LF;
            fit[1] = 0.0LF;
            fit[2] = 0.0LF;
        }
        quantise(fit, radius, qq, best);
        if (qual >= 2 && best > 0u) {
            uint mask = 0xffffu;
            const int drops = qual == 3 ? 2 : 1;
            for (int k = 0; k < drops; k++) {
                int worst = -1;
                double we = -1.0LF;
                for (int p = 0; p < 16; p++) {
                    if (((mask >> uint(p)) & 1u) == 0u) continue;
                    precise double x = double(p & 3) * 0.25LF, y = double(p >> 2) * 0.25LF;
                    precise double v = ((fit[0] * ((1.0LF - x) - y) + fit[1] * x) + fit[2] * y) - double(cv[p]);
                    precise double vv = v * v;
                    if (vv > we) {
                        we = vv;
                        worst = p;
                    }
                }
                mask &= ~(1u << uint(worst));
                if (!fit_mask(mask, fit)) break;
                quantise(fit, radius, qq, best);
            }
        }
        s_best[lid] = best;
        s_q[lid] = uint(qq.x) | (uint(qq.y) << 7u) | (uint(qq.z) << 14u);
    }
    barrier();
    if (!run || r != 0u) return;
    const uint total = s_best[g] * uint(pc.w0) + s_best[g + 1u] * uint(pc.w1) + s_best[g + 2u] * uint(pc.w2);
    if (total >= err) return;
    // kiln__etc_pack, planar
    const uint qr = s_q[g], qg = s_q[g + 1u], qb = s_q[g + 2u];
    const int ro = int(qr & 127u), rh = int((qr >> 7u) & 127u), rv = int((qr >> 14u) & 127u);
    const int go = int(qg & 127u), gh = int((qg >> 7u) & 127u), gv = int((qg >> 14u) & 127u);
    const int bo = int(qb & 127u), bh = int((qb >> 7u) & 127u), bv = int((qb >> 14u) & 127u);
    const int go1 = go >> 6, go2 = go & 63, bo1 = bo >> 5, bo2 = (bo >> 3) & 3, bo3a = (bo >> 1) & 3, bo3b = bo & 1;
    uint hi = (uint(ro) << 25) | (uint(go1) << 24) | (uint(go2) << 17) | (uint(bo1) << 16) | (uint(bo2) << 11) |
              (uint(bo3a) << 8) | (uint(bo3b) << 7) | (uint(rh >> 1) << 2) | 2u | uint(rh & 1);
    const uint lo = (uint(gh) << 25) | (uint(bh >> 5) << 24) | (uint(bh & 31) << 19) | (uint(rv >> 3) << 16) |
                    (uint(rv & 7) << 13) | (uint(gv >> 2) << 8) | (uint(gv & 3) << 6) | uint(bv);
    if ((ro >> 2) + sext3(((ro & 3) << 1) | go1) < 0) hi |= 1u << 31;
    if ((go2 >> 2) + sext3(((go2 & 3) << 1) | bo1) < 0) hi |= 1u << 23;
    hi |= (bo2 + bo3a < 4) ? (1u << 10) : (7u << 13);
    blk.w[block * 4u] = total;
    blk.w[block * 4u + 2u] = swap32(hi);
    blk.w[block * 4u + 3u] = swap32(lo);
}

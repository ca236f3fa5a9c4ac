#version 450
// enc_bc6h_q.comp - kiln's own BC6H encoder on the GPU (gpu_strategy 0) at qualities normal, high and
// max: the CPU encoder's search (src/codec/bc6h_enc.c, search()/refine()), with a group of LANES
// invocations per block (push constant: 8 at normal and high, 16 at max; 64 / LANES blocks per
// workgroup), work strided over the group's lanes:
//   1. the texels (NaN/Inf/negative policy and round-to-nearest-even halves as the CPU);
//   2. the principal-axis fits of both subsets of all 32 partitions (residuals), the one-subset line;
//   3. the partitions ranked by residual (stable: ties to the lower number, as the CPU's sort);
//   4. the candidates - the 4 one-subset modes, then for each of the best PARTITIONS partitions the
//      10 two-subset modes, the CPU's order - are spread over the lanes; each is quantized and its
//      indices chosen exactly (cand_make);
//   5. the KEEP best by (error, candidate number) - the CPU's keep_best list, which keeps the earlier
//      candidate on ties - by rank counting in shared memory;
//   6. lane j refines kept candidate j (least squares, +-RADIUS local search, as the CPU);
//   7. the first kept candidate with the lowest refined error wins (the CPU's final loop).
// Reductions go through shared memory and barriers only: no subgroup operations, no lane order, so
// any subgroup size works. Arithmetic: exact integer palettes; the log term and the fitting weights
// of a half come from a table the host computes with the CPU's own code (binding 2); float
// expressions are `precise`, products rounded separately (mr) and divisions / square roots
// correctly rounded (fdiv_rn, fsqrt_rn), the least squares in double as the CPU: the bytes match the
// CPU's wherever the driver honours that (docs/PERFORMANCE.md, BC6H, states the tolerance).
// Kept lean for lavapipe, which compiles big shaders slowly (everything is inlined there): one call
// site each for make_refine (the candidate and its refinement), chan_err and fit_subset, two for
// assign, loops marked dont_unroll (~5 s to compile on lavapipe; the first, fully inlined and unrolled
// version took 135 s).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x = 64) in;

layout(push_constant) uniform Push {
    uint blocks_x;   // blocks per row
    uint block_rows; // block rows in this batch
    uint width;      // texels per row
    uint rows;       // texel rows in this batch's input
    uint sf;         // 1: BC6H SF16
    uint partitions; // two-subset partitions tried (by residual rank)
    uint keep;       // candidates refined
    uint ls_iters;   // least-squares passes per refinement
    uint radius;     // local search radius
    uint zero;       // 0, unknown to the compiler: see mr() below
    uint lanes;      // invocations per block: 8, 16 or 32 (64 / lanes blocks per workgroup)
} pc;

layout(std430, binding = 0) readonly buffer Src { vec4 px[]; } src;
layout(std430, binding = 1) writeonly buffer Dst { uvec4 blk[]; } dst;
layout(std430, binding = 2) readonly buffer Tab { uint t[]; } tab;

#include "bptc_tables.glsl"

// table layout (src/gpu/gpu_encode_bc6h.c fills it)
const uint T_LOG = 0u;                   // ln(1 + half(m)) for magnitudes m < 31744, float bits
const uint T_W = 31744u;                 // the fitting weight of magnitude m
const uint T_MODE = 63488u;              // 14 x 8: value, transformed, subsets, epb, delta r g b, -
const uint T_SPAN = T_MODE + 14u * 8u;   // 14 x 28 bit spans: field | a << 8 | b << 16; field 14 ends
const uint T_CONST = T_SPAN + 14u * 28u; // ULP_K2, 1e-12f, 64/31, 32/31, 1/3 (C's float values)

// MAXBPW blocks per workgroup at most (lanes >= 8); the candidates' errors of all the workgroup's
// blocks share one array: blocks per workgroup x candidates <= ERRS (the host's lanes per quality:
// normal 8 x 44, high 8 x 124, max 4 x 324)
const uint MAXBPW = 8u, ERRS = 1296u, MAXK = 12u;

shared int s_x[MAXBPW][48];
shared float s_u[MAXBPW][48], s_w[MAXBPW][48], s_l[MAXBPW][48];
shared float s_pef[MAXBPW][33][12]; // [p] two-subset fits, [32] the one-subset fit
shared float s_r2[MAXBPW][64];      // residual of subset s of partition p at [2p + s]
shared uint s_order[MAXBPW][32];
shared float s_err[ERRS];
shared uint s_kept[MAXBPW][MAXK];
shared float s_ferr[MAXBPW][MAXK];

uint sb; // this invocation's block slot in the workgroup
float K2, EPS12;
#define F_INF uintBitsToFloat(0x7f800000u)

// ---------------------------------------------------------------- exact arithmetic
#include "d_step.glsl"
double div_rn(double a, double b)
{
    precise double q = a / b;
    if (q == 0.0LF || isinf(q) || isnan(q)) return q;
    [[dont_unroll]] for (int it = 0; it < 2; it++) {
        double lo = d_step(q, false), hi = d_step(q, true);
        double r = abs(fma(-q, b, a)), rl = abs(fma(-lo, b, a)), rh = abs(fma(-hi, b, a));
        if (rl < r && rl <= rh) q = lo;
        else if (rh < r) q = hi;
        else break;
    }
    return q;
}
float fdiv_rn(float a, float b)
{
    precise float q = float(div_rn(double(a), double(b)));
    if (q == 0.0 || isinf(q) || isnan(q)) return q;
    float lo = uintBitsToFloat(floatBitsToUint(q) - 1u), hi = uintBitsToFloat(floatBitsToUint(q) + 1u);
    precise double r = abs(double(a) - double(q) * double(b));
    precise double rl = abs(double(a) - double(lo) * double(b));
    precise double rh = abs(double(a) - double(hi) * double(b));
    if (rl < r && rl <= rh) return lo;
    if (rh < r) return hi;
    return q;
}
// a vector divided by a scalar, one copy of fdiv_rn (lavapipe compiles big shaders slowly)
vec3 fdiv3(vec3 a, float b)
{
    vec3 r;
    [[dont_unroll]] for (int c = 0; c < 3; c++) r[c] = fdiv_rn(a[c], b);
    return r;
}
// correctly rounded float square root (x >= 0 finite): the midpoints to the neighbours squared are
// exact in double
float fsqrt_rn(float x)
{
    float q = float(sqrt(double(x)));
    if (!(q > 0.0) || isinf(q)) return q;
    [[dont_unroll]] for (int it = 0; it < 2; it++) {
        float hi = uintBitsToFloat(floatBitsToUint(q) + 1u), lo = uintBitsToFloat(floatBitsToUint(q) - 1u);
        precise double mh = (double(q) + double(hi)) * 0.5LF, ml = (double(q) + double(lo)) * 0.5LF;
        if (mh * mh < double(x)) q = hi;
        else if (ml * ml > double(x)) q = lo;
        else break;
    }
    return q;
}
// A product rounded once, as C rounds it: passed through an integer OR with a runtime zero, which no
// compiler can see through, so it cannot be fused into a following addition (lavapipe's LLVM fuses
// fmul + fadd into fma even under NoContraction); costs one integer operation.
float mr(float a, float b)
{
    precise float p = a * b;
    return uintBitsToFloat(floatBitsToUint(p) | pc.zero);
}
double dmr(double a, double b)
{
    precise double p = a * b;
    return packDouble2x32(unpackDouble2x32(p) | uvec2(pc.zero));
}

// ---------------------------------------------------------------- modes and the decoder's arithmetic
struct Mode {
    uint value, tr, ns, epb;
    ivec3 delta;
};
Mode get_mode(uint mi)
{
    uint b = T_MODE + mi * 8u;
    Mode m;
    m.value = tab.t[b];
    m.tr = tab.t[b + 1u];
    m.ns = tab.t[b + 2u];
    m.epb = tab.t[b + 3u];
    m.delta = ivec3(tab.t[b + 4u], tab.t[b + 5u], tab.t[b + 6u]);
    return m;
}
float tlog(int x)
{
    float v = uintBitsToFloat(tab.t[T_LOG + uint(abs(x))]);
    return x < 0 ? -v : v;
}
uint subset(uint ns, uint part, uint t) { return ns == 2u ? (BPTC_P2[part] >> t) & 1u : 0u; }
bool is_anchor(uint ns, uint part, uint t) { return t == 0u || (ns == 2u && t == BPTC_A2[part]); }
uint weight(uint ib, uint i) { return ib == 3u ? BPTC_W3[i] : BPTC_W4[i]; }

int unq(int x, uint epb)
{
    if (pc.sf == 0u) {
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
    if (pc.sf == 0u) return int((uint(v) * 31u) >> 6);
    if (v < 0) return -int((uint(-v) * 31u) >> 5);
    return int((uint(v) * 31u) >> 5);
}
int interp(int a, int b, uint w) { return ((64 - int(w)) * a + int(w) * b + 32) >> 6; } // floor

float chan_cost(float lp, float lt, int px, int xt)
{
    precise float dl = lp - lt;
    float d = float(px - xt);
    precise float r = mr(dl, dl) + mr(mr(K2, d), d);
    return r;
}

void q_range(Mode m, out int lo, out int hi)
{
    if (pc.sf == 0u) {
        lo = 0;
        hi = int((1u << m.epb) - 1u);
    } else {
        hi = int((1u << (m.epb - 1u)) - 1u);
        lo = -hi;
    }
}

bool valid_q(Mode m, ivec3 q[4])
{
    int nep = m.ns == 2u ? 4 : 2, lo, hi;
    q_range(m, lo, hi);
    for (int e = 0; e < nep; e++)
        for (int c = 0; c < 3; c++) {
            if (q[e][c] < lo || q[e][c] > hi) return false;
            if (m.tr != 0u && e > 0) {
                int d = q[e][c] - q[0][c], dl = -(1 << (m.delta[c] - 1));
                if (d < dl || d > -dl - 1) return false;
            }
        }
    return true;
}

// ---------------------------------------------------------------- candidates
// best index per texel for fixed endpoints (anchors in the lower half); the error
float assign(Mode m, uint part, ivec3 q[4], out uint idx[16])
{
    uint ib = m.ns == 2u ? 3u : 4u, n = 1u << ib;
    ivec3 pal[16];
    vec3 lp[16];
    for (uint s = 0u; s < m.ns; s++)
        for (int c = 0; c < 3; c++) {
            int a = unq(q[2u * s][c], m.epb), b = unq(q[2u * s + 1u][c], m.epb);
            [[dont_unroll]] for (uint i = 0u; i < n; i++) {
                int v = finish_x(interp(a, b, weight(ib, i)));
                pal[s * n + i][c] = v;
                lp[s * n + i][c] = tlog(v);
            }
        }
    precise float total = 0.0;
    [[dont_unroll]] for (uint t = 0u; t < 16u; t++) {
        uint s = subset(m.ns, part, t);
        uint lim = is_anchor(m.ns, part, t) ? n / 2u : n;
        float best = F_INF;
        uint bi = 0u;
        [[dont_unroll]] for (uint i = 0u; i < lim; i++) {
            precise float e = 0.0;
            for (int c = 0; c < 3; c++)
                e += chan_cost(lp[s * n + i][c], s_l[sb][t * 3u + c], pal[s * n + i][c], s_x[sb][t * 3u + c]);
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

// the error of channel c for fixed indices
float chan_err(Mode m, uint part, ivec3 q[4], int c, uint idx[16])
{
    uint ib = m.ns == 2u ? 3u : 4u;
    int a[2], b[2];
    for (uint s = 0u; s < 2u; s++) {
        a[s] = s < m.ns ? unq(q[2u * s][c], m.epb) : 0;
        b[s] = s < m.ns ? unq(q[2u * s + 1u][c], m.epb) : 0;
    }
    precise float total = 0.0;
    [[dont_unroll]] for (uint t = 0u; t < 16u; t++) {
        uint s = subset(m.ns, part, t);
        int px = finish_x(interp(a[s], b[s], weight(ib, idx[t])));
        total += chan_cost(tlog(px), s_l[sb][t * 3u + c], px, s_x[sb][t * 3u + c]);
    }
    return total;
}

int quant1(float u, Mode m, int lo, int hi)
{
    if (u > 70000.0) u = 70000.0;
    if (u < -70000.0) u = -70000.0;
    if (isnan(u)) u = 0.0;
    precise float us = u * ldexp(1.0, int(m.epb) - 16);
    int q0 = int(floor(us));
    int best = lo;
    float bd = F_INF;
    for (int q = q0 - 1; q <= q0 + 1; q++) {
        int qq = clamp(q, lo, hi);
        precise float d = abs(float(unq(qq, m.epb)) - u);
        if (d < bd) {
            bd = d;
            best = qq;
        }
    }
    return best;
}

void quantize(Mode m, vec3 ef[4], out ivec3 q[4])
{
    int nep = m.ns == 2u ? 4 : 2, lo, hi;
    q_range(m, lo, hi);
    for (int e = 0; e < 4; e++) q[e] = ivec3(0);
    for (int e = 0; e < nep; e++)
        for (int c = 0; c < 3; c++) q[e][c] = quant1(ef[e][c], m, lo, hi);
    if (m.tr != 0u)
        for (int e = 1; e < nep; e++)
            for (int c = 0; c < 3; c++) {
                int dl = -(1 << (m.delta[c] - 1)), dh = -dl - 1;
                int l = max(q[0][c] + dl, lo), h = min(q[0][c] + dh, hi);
                if (q[e][c] < l) q[e][c] = l;
                if (q[e][c] > h) q[e][c] = h;
            }
}

// transformed modes: E0 moved as little as possible so that E1..E3 fit around it (the CPU's recentre)
bool recentre(Mode m, vec3 ef[4], out ivec3 q[4])
{
    int nep = m.ns == 2u ? 4 : 2, lo, hi;
    q_range(m, lo, hi);
    ivec3 raw[4];
    for (int e = 0; e < 4; e++) {
        raw[e] = ivec3(0);
        q[e] = ivec3(0);
    }
    for (int e = 0; e < nep; e++)
        for (int c = 0; c < 3; c++) raw[e][c] = quant1(ef[e][c], m, lo, hi);
    bool changed = false;
    for (int c = 0; c < 3; c++) {
        int dl = -(1 << (m.delta[c] - 1)), dh = -dl - 1;
        int omin = raw[1][c], omax = raw[1][c];
        for (int e = 2; e < nep; e++) {
            omin = min(omin, raw[e][c]);
            omax = max(omax, raw[e][c]);
        }
        int a = omax - dh, b = omin - dl, e0 = raw[0][c];
        if (a <= b) e0 = clamp(e0, a, b);
        else e0 = (a + b) / 2; // truncating, as C
        e0 = clamp(e0, lo, hi);
        if (e0 != raw[0][c]) changed = true;
        q[0][c] = e0;
        for (int e = 1; e < nep; e++) {
            int l = max(e0 + dl, lo), h = min(e0 + dh, hi);
            q[e][c] = raw[e][c] < l ? l : raw[e][c] > h ? h : raw[e][c];
        }
    }
    return changed;
}

// nearest quantization; transformed modes also the recentred alternative, kept when strictly better
// (one assign() call site: lavapipe compiles big shaders slowly)
float cand_make(uint mi, uint part, vec3 ef[4], out ivec3 q[4], out uint idx[16])
{
    Mode m = get_mode(mi);
    float err = F_INF;
    for (int e = 0; e < 4; e++) q[e] = ivec3(0);
    for (uint t = 0u; t < 16u; t++) idx[t] = 0u;
    [[dont_unroll]] for (uint k = 0u; k < (m.tr != 0u ? 2u : 1u); k++) {
        ivec3 nq[4];
        uint nidx[16];
        if (k == 0u) quantize(m, ef, nq);
        else if (!recentre(m, ef, nq)) break;
        float ne = assign(m, part, nq, nidx);
        if (k == 0u || ne < err) {
            err = ne;
            q = nq;
            idx = nidx;
        }
    }
    return err;
}

// principal-axis fit of subset s; the weighted residual off the line (the CPU's fit_subset)
float fit_subset(uint ns, uint part, uint s, out vec3 e0, out vec3 e1)
{
    const float third = uintBitsToFloat(tab.t[T_CONST + 4u]);
    precise float sw = 0.0;
    precise vec3 mean = vec3(0.0);
    float tw[16];
    [[dont_unroll]] for (uint t = 0u; t < 16u; t++) {
        tw[t] = 0.0;
        if (subset(ns, part, t) != s) continue;
        precise float ws = (s_w[sb][t * 3u] + s_w[sb][t * 3u + 1u]) + s_w[sb][t * 3u + 2u];
        precise float v = mr(ws, third) + EPS12;
        tw[t] = v;
        sw += v;
        for (int c = 0; c < 3; c++) mean[c] += mr(v, s_u[sb][t * 3u + c]);
    }
    mean = fdiv3(mean, sw);
    precise float cov[6] = float[6](0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    [[dont_unroll]] for (uint t = 0u; t < 16u; t++) {
        if (tw[t] == 0.0) continue;
        precise float d0 = s_u[sb][t * 3u] - mean[0], d1 = s_u[sb][t * 3u + 1u] - mean[1], d2 = s_u[sb][t * 3u + 2u] - mean[2];
        cov[0] += mr(mr(tw[t], d0), d0);
        cov[1] += mr(mr(tw[t], d0), d1);
        cov[2] += mr(mr(tw[t], d0), d2);
        cov[3] += mr(mr(tw[t], d1), d1);
        cov[4] += mr(mr(tw[t], d1), d2);
        cov[5] += mr(mr(tw[t], d2), d2);
    }
    vec3 ax;
    if (cov[0] >= cov[3] && cov[0] >= cov[5]) ax = vec3(cov[0], cov[1], cov[2]);
    else if (cov[3] >= cov[5]) ax = vec3(cov[1], cov[3], cov[4]);
    else ax = vec3(cov[2], cov[4], cov[5]);
    for (int it = 0; it < 8; it++) {
        precise float n0 = (mr(cov[0], ax[0]) + mr(cov[1], ax[1])) + mr(cov[2], ax[2]);
        precise float n1 = (mr(cov[1], ax[0]) + mr(cov[3], ax[1])) + mr(cov[4], ax[2]);
        precise float n2 = (mr(cov[2], ax[0]) + mr(cov[4], ax[1])) + mr(cov[5], ax[2]);
        float len = max(abs(n0), max(abs(n1), abs(n2)));
        if (!(len > 0.0)) break;
        ax = fdiv3(vec3(n0, n1, n2), len);
    }
    precise float l2 = (mr(ax[0], ax[0]) + mr(ax[1], ax[1])) + mr(ax[2], ax[2]);
    float len = fsqrt_rn(l2);
    if (len > 0.0) ax = fdiv3(ax, len);
    else ax = vec3(0.0);
    float tmin = F_INF, tmax = -F_INF, tanchor = 0.0;
    precise float resid = 0.0;
    uint anchor = s == 0u ? 0u : BPTC_A2[part];
    [[dont_unroll]] for (uint t = 0u; t < 16u; t++) {
        if (tw[t] == 0.0) continue;
        precise float d0 = s_u[sb][t * 3u] - mean[0], d1 = s_u[sb][t * 3u + 1u] - mean[1], d2 = s_u[sb][t * 3u + 2u] - mean[2];
        precise float p = (mr(d0, ax[0]) + mr(d1, ax[1])) + mr(d2, ax[2]);
        precise float r = ((mr(d0, d0) + mr(d1, d1)) + mr(d2, d2)) - mr(p, p);
        resid += mr(tw[t], r > 0.0 ? r : 0.0);
        if (p < tmin) tmin = p;
        if (p > tmax) tmax = p;
        if (t == anchor) tanchor = p;
    }
    precise float da = tanchor - tmin, db = tmax - tanchor;
    if (da > db) {
        float tmp = tmin;
        tmin = tmax;
        tmax = tmp;
    }
    for (int c = 0; c < 3; c++) {
        precise float a = mean[c] + mr(ax[c], tmin), b = mean[c] + mr(ax[c], tmax);
        e0[c] = a;
        e1[c] = b;
    }
    return resid;
}

// weighted least squares endpoints for fixed indices, in double as the CPU
void ls_fit(Mode m, uint part, uint idx[16], out vec3 ef[4])
{
    uint ib = m.ns == 2u ? 3u : 4u;
    for (int e = 0; e < 4; e++) ef[e] = vec3(0.0);
    for (uint s = 0u; s < m.ns; s++)
        for (int c = 0; c < 3; c++) {
            precise double aa = 0.0LF, ab = 0.0LF, bb = 0.0LF, ax = 0.0LF, bx = 0.0LF, sw = 0.0LF, sx = 0.0LF;
            [[dont_unroll]] for (uint t = 0u; t < 16u; t++) {
                if (subset(m.ns, part, t) != s) continue;
                precise double w = double(s_w[sb][t * 3u + uint(c)]) + 1e-12LF;
                precise double be = double(weight(ib, idx[t])) / 64.0LF, al = 1.0LF - be;
                double u = double(s_u[sb][t * 3u + uint(c)]);
                double wa = dmr(w, al), wb = dmr(w, be);
                aa += dmr(wa, al);
                ab += dmr(wa, be);
                bb += dmr(wb, be);
                ax += dmr(wa, u);
                bx += dmr(wb, u);
                sw += w;
                sx += dmr(w, u);
            }
            precise double det = dmr(aa, bb) - dmr(ab, ab);
            precise double lim = 1e-9LF * (aa * bb);
            if (det > lim && det > 0.0LF) {
                precise double n0 = dmr(ax, bb) - dmr(bx, ab), n1 = dmr(bx, aa) - dmr(ax, ab);
                ef[2u * s][c] = float(div_rn(n0, det));
                ef[2u * s + 1u][c] = float(div_rn(n1, det));
            } else {
                float v = float(div_rn(sx, sw));
                ef[2u * s][c] = v;
                ef[2u * s + 1u][c] = v;
            }
        }
}

// candidate (mi, part) from the fitted endpoints ef, then the CPU's refine(): least-squares passes
// (pass 0 is the candidate itself: one cand_make() call site), then the local search
// (full = false: the candidate only; one call site for all of it)
float make_refine(uint mi, uint part, vec3 ef[4], bool full, out ivec3 q[4], out uint idx[16])
{
    Mode m = get_mode(mi);
    int nep = m.ns == 2u ? 4 : 2;
    float err = F_INF;
    const uint iters = full ? pc.ls_iters : 0u;
    [[dont_unroll]] for (uint it = 0u; it <= iters; it++) {
        if (it > 0u) ls_fit(m, part, idx, ef);
        ivec3 nq[4];
        uint nidx[16];
        float ne = cand_make(mi, part, ef, nq, nidx);
        if (it > 0u && !(ne < err)) break;
        q = nq;
        idx = nidx;
        err = ne;
    }
    int r = int(pc.radius);
    if (!full || r <= 0) return err;
    [[dont_unroll]] for (int round = 0; round < 4; round++) {
        ivec3 nq[4] = q;
        uint nidx[16] = idx;
        [[dont_unroll]] for (int ch = 0; ch < 3; ch++) {
            float ce = F_INF;
            const int span = 2 * r + 1, nj = nep * span;
            [[dont_unroll]] for (int pass = 0; pass < 3; pass++) {
                bool improved = false;
                // j = -1: the current endpoints (the CPU's starting error); then (e, d) in the CPU's order
                [[dont_unroll]] for (int j = pass == 0 ? -1 : 0; j < nj; j++) {
                    int e = j < 0 ? 0 : j / span, d = j < 0 ? 0 : j % span - r;
                    if (j >= 0 && d == 0) continue;
                    int old = nq[e][ch];
                    nq[e][ch] = old + d;
                    bool ok = j < 0 || valid_q(m, nq);
                    float ne = ok ? chan_err(m, part, nq, ch, nidx) : F_INF;
                    if (j < 0) {
                        ce = ne;
                    } else if (ok && ne < ce) {
                        ce = ne;
                        improved = true;
                    } else {
                        nq[e][ch] = old;
                    }
                }
                if (!improved) break;
            }
        }
        float ne = assign(m, part, nq, nidx);
        if (!(ne < err)) break;
        q = nq;
        idx = nidx;
        err = ne;
    }
    return err;
}

// ---------------------------------------------------------------- packing
uvec4 bits_out;
uint bit_pos;
void put_bits(uint v, uint n)
{
    for (uint i = 0u; i < n; i++, bit_pos++)
        if (((v >> i) & 1u) != 0u) bits_out[bit_pos >> 5] |= 1u << (bit_pos & 31u);
}

uvec4 pack(uint mi, uint part, ivec3 q[4], uint idx[16])
{
    Mode m = get_mode(mi);
    uint f[14];
    for (int k = 0; k < 14; k++) f[k] = 0u;
    uint emask = (1u << m.epb) - 1u;
    for (uint e = 0u; e < 2u * m.ns; e++)
        for (int c = 0; c < 3; c++) {
            if (e == 0u || m.tr == 0u) f[e * 3u + uint(c)] = uint(q[e][c]) & emask;
            else f[e * 3u + uint(c)] = uint(q[e][c] - q[0][c]) & ((1u << uint(m.delta[c])) - 1u);
        }
    f[12] = part;
    f[13] = m.value;
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
    uint ib = m.ns == 2u ? 3u : 4u;
    for (uint t = 0u; t < 16u; t++) put_bits(idx[t], ib - (is_anchor(m.ns, part, t) ? 1u : 0u));
    return bits_out;
}

// float -> half, round to nearest even (|f| <= 65504, not NaN), as kiln__float_to_half
uint f2h(float f)
{
    uint b = floatBitsToUint(f), s = (b >> 16) & 0x8000u, a = b & 0x7fffffffu, h;
    if (a >= 0x38800000u) {
        uint r = a & 0x1fffu;
        h = (a >> 13) - 0x1c000u;
        if (r > 0x1000u || (r == 0x1000u && (h & 1u) != 0u)) h++;
    } else {
        h = uint(roundEven(uintBitsToFloat(a) * 16777216.0));
    }
    return s | h;
}

// candidate c: its mode, partition and fitted endpoints (the CPU's candidate order)
void cand_of(uint c, out uint mi, out uint part, out vec3 ef[4])
{
    uint slot = 32u;
    if (c < 4u) {
        mi = 10u + c;
        part = 0u;
    } else {
        mi = (c - 4u) % 10u;
        part = s_order[sb][(c - 4u) / 10u];
        slot = part;
    }
    for (int e = 0; e < 4; e++)
        ef[e] = vec3(s_pef[sb][slot][e * 3], s_pef[sb][slot][e * 3 + 1], s_pef[sb][slot][e * 3 + 2]);
}

void main()
{
    uint lid = gl_LocalInvocationID.x;
    const uint LANES = pc.lanes, BPW = 64u / LANES;
    sb = lid / LANES;
    uint lane = lid % LANES;
    uint blk = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * BPW + sb;
    bool live = blk < pc.blocks_x * pc.block_rows; // no early return: every invocation reaches the barriers
    K2 = uintBitsToFloat(tab.t[T_CONST]);
    EPS12 = uintBitsToFloat(tab.t[T_CONST + 1u]);
    const uint parts = min(pc.partitions, 32u);
    const uint ncand = 4u + parts * 10u;
    const uint nkeep = min(min(min(pc.keep, MAXK), LANES), ncand);
    const uint ebase = sb * ncand; // this block's candidates in s_err

    // 1. texels
    if (live) [[dont_unroll]] for (uint t = lane; t < 16u; t += LANES) {
        uint bx = blk % pc.blocks_x, by = blk / pc.blocks_x;
        uint x = min(bx * 4u + (t & 3u), pc.width - 1u), y = min(by * 4u + (t >> 2), pc.rows - 1u);
        vec3 v = src.px[y * pc.width + x].rgb;
        float k = uintBitsToFloat(tab.t[T_CONST + (pc.sf != 0u ? 3u : 2u)]);
        for (int c = 0; c < 3; c++) {
            float f = v[c];
            if (isnan(f)) f = 0.0;
            if (pc.sf == 0u && f < 0.0) f = 0.0;
            f = clamp(f, -65504.0, 65504.0);
            uint h = f2h(f);
            if (h == 0x8000u) h = 0u;
            int mag = int(h & 0x7FFFu);
            int xv = (h & 0x8000u) != 0u ? -mag : mag;
            precise float up = (float(xv) + 0.5) * k, un = (float(xv) - 0.5) * k;
            s_x[sb][t * 3u + uint(c)] = xv;
            s_u[sb][t * 3u + uint(c)] = xv == 0 ? 0.0 : (xv > 0 ? up : un);
            s_w[sb][t * 3u + uint(c)] = uintBitsToFloat(tab.t[T_W + uint(mag)]);
            s_l[sb][t * 3u + uint(c)] = tlog(xv);
        }
    }
    barrier();

    // 2. fits, strided over the lanes: job j < 64 is subset j % 2 of partition j / 2 (only when
    // partitions are tried; all 32: the ranking needs them), job 64 the one-subset line
    if (live) [[dont_unroll]] for (uint j = parts > 0u ? lane : 64u + lane; j < 65u; j += LANES) {
        vec3 e0, e1;
        uint slot = j < 64u ? j / 2u : 32u, o = j < 64u ? (j % 2u) * 6u : 0u;
        float r = fit_subset(j < 64u ? 2u : 1u, j < 64u ? j / 2u : 0u, j < 64u ? j % 2u : 0u, e0, e1);
        for (int c = 0; c < 3; c++) {
            s_pef[sb][slot][o + uint(c)] = e0[c];
            s_pef[sb][slot][o + 3u + uint(c)] = e1[c];
            if (j == 64u) s_pef[sb][slot][6 + c] = s_pef[sb][slot][9 + c] = 0.0;
        }
        if (j < 64u) s_r2[sb][j] = r;
    }
    barrier();

    // 3. partition ranking by residual (subset 0's + subset 1's, as the CPU; stable: ties to the lower
    // number, as the CPU's insertion sort)
    if (live && parts > 0u) [[dont_unroll]] for (uint p = lane; p < 32u; p += LANES) {
        precise float r = s_r2[sb][2u * p] + s_r2[sb][2u * p + 1u];
        uint rank = 0u;
        for (uint q = 0u; q < 32u; q++) {
            precise float o = s_r2[sb][2u * q] + s_r2[sb][2u * q + 1u];
            if (o < r || (o == r && q < p)) rank++;
        }
        if (rank < parts) s_order[sb][rank] = p;
    }
    barrier();

    // 4. every candidate, strided over the lanes (pass 0); then (pass 1, after 5.) lane j refines kept
    // candidate j: one loop, so that the candidate code is compiled once
    ivec3 q[4];
    uint idx[16];
    uint mi = 0u, part = 0u;
    [[dont_unroll]] for (uint pass = 0u; pass < 2u; pass++) {
        if (live)
            [[dont_unroll]] for (uint c = lane; pass == 0u ? c < ncand : c < nkeep; c += LANES) {
                vec3 ef[4];
                cand_of(pass == 0u ? c : s_kept[sb][c], mi, part, ef);
                float e = make_refine(mi, part, ef, pass == 1u, q, idx);
                if (pass == 0u) s_err[ebase + c] = e;
                else s_ferr[sb][c] = e;
            }
        barrier();
        if (pass == 1u) break;
        // 5. the KEEP best by (error, candidate number)
        if (live)
            for (uint c = lane; c < ncand; c += LANES) {
                float e = s_err[ebase + c];
                uint rank = 0u;
                for (uint o = 0u; o < ncand && rank < nkeep; o++) {
                    float f = s_err[ebase + o];
                    if (f < e || (f == e && o < c)) rank++;
                }
                if (rank < nkeep) s_kept[sb][rank] = c;
            }
        barrier();
    }

    // 7. the winner: the first kept candidate with the lowest refined error
    if (live && lane < nkeep) {
        uint win = 0u;
        float we = s_ferr[sb][0];
        for (uint j = 1u; j < nkeep; j++)
            if (s_ferr[sb][j] < we) {
                we = s_ferr[sb][j];
                win = j;
            }
        if (lane == win) dst.blk[blk] = pack(mi, part, q, idx);
    }
}

#version 450
// enc_bc6h_h4.comp - the first GPU-native BC6H high design (4 invocations per block), kept for
// comparison: selected with KILN_BC6H_HIGH_DESIGN=4 (the default at high is enc_bc6h_h.comp, one
// invocation per block; the CPU-exact port enc_bc6h_q.comp stays selectable with KILN_BC6H_GPU_EXACT=1).
// Float math only (no fp64), written like enc_bc6h.comp (quality fast): LANES (4) consecutive
// invocations per block, each with the block's texels in registers (the CPU's input policy, float
// log1p as enc_bc6h.comp); no constant-array lookups in loops (lavapipe copies a constant array to
// the stack on each dynamically indexed access: mode parameters are packed in integers, the BPTC
// weights computed, the partition masks copied to shared memory once). Push: partitions P, keep K,
// least-squares passes L (src/gpu/gpu_encode_bc6h.c; KILN_BC6H_HIGH_CFG="P,K,L").
//   1. all 32 partitions ranked by a cheap residual, 8 per lane: weighted moments of both subsets
//      (texels centred on texel 0), residual = trace - largest eigenvalue (3 power steps); each lane
//      keeps its best MAXP in registers, the best P by rank counting over the LANES x MAXP survivors
//      (ties to the lower partition number, as the CPU);
//   2. principal-axis fits of both subsets of the P best partitions and the one-subset line;
//   3. a mode filter per fitted partition (transformed modes whose deltas need more than FIT_SLACK x
//      their range, or PREC_SPAN bits less precise than the most precise one that fits, are
//      skipped); the survivors are compacted (bit mask; lane n takes set bits n, n + LANES, ...);
//   4. each surviving candidate quantized (nearest; the CPU's recentred alternative where a delta
//      was clamped) and scored cheaply: per texel the index nearest its projection onto the
//      quantized segment, error linearised in the unquantized domain (sum of fitting weight x
//      squared difference: the fitting weights are the metric's derivative) - no logs, no palette
//      search; each lane keeps its best MAXK, the best K by rank counting over LANES x MAXK;
//   5. lane j refines kept candidate j: exact index choice under the CPU's metric (RMSLE + 0.03 x
//      ULP, anchors in the lower half), then L float least-squares passes, each kept while it lowers
//      the exact error; the lowest exact error (ties to the lower kept rank) is packed.
// Reductions through shared memory and barriers only: any subgroup size, no lane order assumed.
// Quality and cost: docs/PERFORMANCE.md, BC6H, "GPU-native high".
#extension GL_GOOGLE_include_directive : require

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
    uint radius;     // unused here
    uint zero;       // unused here
    uint lanes;      // LANES (4): the host's dispatch size per block
} pc;

layout(std430, binding = 0) readonly buffer Src { vec4 px[]; } src;
layout(std430, binding = 1) writeonly buffer Dst { uvec4 blk[]; } dst;
layout(std430, binding = 2) readonly buffer Tab { uint t[]; } tab;

#include "bptc_tables.glsl"

const uint T_SPAN = 63488u + 14u * 8u; // the bit spans in the table (as enc_bc6h_q.comp)
const uint LANES = 4u, BPW = 64u / LANES, MAXP = 8u, MAXK = 4u;
// the mode filter: a candidate is scored when its mode is direct (6.6.6.6 or the one-subset 10.10)
// or transformed with deltas that fit (FIT_SLACK x the range: recentring) at most PREC_SPAN endpoint
// bits below the most precise transformed mode that fits (measured: the same RMSLE as no filter)
const float FIT_SLACK = 2.0;
const uint PREC_SPAN = 2u;
const uint NB = 0u; // approx_err: neighbours of the projected index also scored (1: no gain measured)
const float MU_LN2SQ = 0.03 * 0.480453014;
const float ULP_K2 = MU_LN2SQ / 1048576.0;

// the 14 modes in the CPU's table order (0..9 two subsets, 10..13 one subset); packed in integers
// (lavapipe copies a constant array to the stack on every dynamically indexed access)
const uint M_VALUE[14] = uint[14](0u, 1u, 2u, 6u, 10u, 14u, 18u, 22u, 26u, 30u, 3u, 7u, 11u, 15u);
const uint M_TRMASK = 0x39FFu; // transformed: all but modes 9 (6.6.6.6) and 10 (mode 3)
// endpoint bits - 6, a nibble per mode: 10 7 11 11 11 9 8 8 8 6 | 10 11 12 16
const uint M_EPB_LO = 0x22355514u, M_EPB_HI = 0xa65402u; // nibbles 0..7 / 8..13 (LSB first)
// delta bits - 4 per channel, a nibble each: channel c of mode mi at nibble (mi * 3 + c) % 8 of word
uint m_epb(uint mi) { return 6u + ((mi < 8u ? M_EPB_LO >> (4u * mi) : M_EPB_HI >> (4u * (mi - 8u))) & 15u); }
bool m_tr(uint mi) { return ((M_TRMASK >> mi) & 1u) != 0u; }
ivec3 m_delta(uint mi)
{
    // per mode r g b: 5 5 5, 6 6 6, 5 4 4, 4 5 4, 4 4 5, 5 5 5, 6 5 5, 5 6 5, 5 5 6, 6 6 6, 10, 9, 8, 4
    const uint D0 = 0x1222111u, D1 = 0x11000100u, D2 = 0x12111211u, D3 = 0x66222211u, D4 = 0x4445556u, D5 = 0x0u;
    uint n = mi * 3u;
    ivec3 r;
    for (uint c = 0u; c < 3u; c++) {
        uint nn = n + c, ww = nn / 8u, bb = (nn % 8u) * 4u;
        uint word = ww == 0u ? D0 : ww == 1u ? D1 : ww == 2u ? D2 : ww == 3u ? D3 : ww == 4u ? D4 : D5;
        r[c] = 4 + int((word >> bb) & 15u);
    }
    return r;
}

shared uint s_p2[32], s_a2[32]; // the two-subset partitions and their second anchors
shared float s_r[BPW][LANES * MAXP]; // each lane's best partitions (residual, number)
shared uint s_rp[BPW][LANES * MAXP];
shared uint s_order[BPW][MAXP];
shared float s_pef[BPW][MAXP + 1u][12]; // [k] both subsets of the k-th best partition, [MAXP] one subset
shared float s_err[BPW][LANES * MAXK]; // each lane's best candidates (error, number | variant << 8)
shared uint s_cv[BPW][LANES * MAXK];
shared uint s_kept[BPW][LANES]; // candidate number | variant << 8
shared uint s_mask[BPW][3];     // the candidates that pass the mode filter, a bit each
shared float s_ferr[BPW][LANES];

ivec3 X[16]; // target halves, signed
vec3 U[16];  // targets in the unquantized domain
vec3 Wt[16]; // fitting weights
vec3 L[16];  // sign(v) ln(1 + |v|)
float TW[16]; // per-texel fitting weight (mean of the channels)

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
// the BPTC index weights, (64 i + 3) / 7 and (64 i + 7) / 15 (= BPTC_W3, BPTC_W4; no table lookups)
uint weight(bool two, uint i) { return two ? ((i & 7u) * 64u + 3u) / 7u : (i * 64u + 7u) / 15u; }

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
int interp(int a, int b, uint w) { return ((64 - int(w)) * a + int(w) * b + 32) >> 6; }

int quant1(float u, uint epb, int lo, int hi)
{
    u = clamp(u, -70000.0, 70000.0);
    if (isnan(u)) u = 0.0;
    int q0 = int(floor(u * exp2(float(int(epb) - 16))));
    int best = lo;
    float bd = 1.0 / 0.0;
    for (int q = q0 - 1; q <= q0 + 1; q++) {
        int qq = clamp(q, lo, hi);
        float d = abs(float(unq(qq, epb)) - u);
        if (d < bd) {
            bd = d;
            best = qq;
        }
    }
    return best;
}

// k = 0: nearest quantization, deltas clamped around E0, true when a delta had to be clamped; k = 1
// (transformed modes): E0 moved as little as possible so that the others fit (the CPU's recentre),
// true when E0 moved (only worth trying when k = 0 clamped: otherwise it changes nothing)
bool quantize(uint mi, vec3 ef[4], uint k, out ivec3 q[4])
{
    const bool two = mi < 10u;
    const uint epb = m_epb(mi);
    int lo = pc.sf == 0u ? 0 : -int((1u << (epb - 1u)) - 1u);
    int hi = pc.sf == 0u ? int((1u << epb) - 1u) : int((1u << (epb - 1u)) - 1u);
    for (int e = 0; e < 4; e++) {
        q[e] = ivec3(0);
        if (e < 2 || two)
            for (int c = 0; c < 3; c++) q[e][c] = quant1(ef[e][c], epb, lo, hi);
    }
    if (!m_tr(mi)) return false;
    bool changed = false;
    for (int c = 0; c < 3; c++) {
        int dl = -(1 << (m_delta(mi)[c] - 1)), dh = -dl - 1;
        int e0 = q[0][c];
        if (k == 1u) {
            int omin = q[1][c], omax = q[1][c];
            if (two) {
                omin = min(omin, min(q[2][c], q[3][c]));
                omax = max(omax, max(q[2][c], q[3][c]));
            }
            int a = omax - dh, b = omin - dl;
            if (a <= b) e0 = clamp(e0, a, b);
            else e0 = (a + b) / 2;
            e0 = clamp(e0, lo, hi);
            if (e0 != q[0][c]) changed = true;
            q[0][c] = e0;
        }
        for (int e = 1; e < 4; e++)
            if (e < 2 || two) {
                int v = clamp(q[e][c], max(e0 + dl, lo), min(e0 + dh, hi));
                if (k == 0u && v != q[e][c]) changed = true;
                q[e][c] = v;
            }
    }
    return changed;
}

// whether transformed mode mi can hold the fitted endpoints' deltas, FIT_SLACK x its range
bool fits(uint mi, vec3 ef[4])
{
    const bool two = mi < 10u;
    vec3 dm = abs(ef[1] - ef[0]);
    if (two) dm = max(dm, max(abs(ef[2] - ef[0]), abs(ef[3] - ef[0])));
    vec3 lim = exp2(vec3(m_delta(mi) - 1) + 16.0 - float(m_epb(mi)));
    return all(lessThanEqual(dm, lim * FIT_SLACK));
}

// cheap error of quantized endpoints (see the header, step 3)
float approx_err(uint mi, uint part, ivec3 q[4])
{
    const bool two = mi < 10u;
    const uint epb = m_epb(mi), bits = two ? s_p2[part] : 0u, anc = two ? s_a2[part] : 0u;
    const int n1 = two ? 7 : 15;
    vec3 a0, d0, a1, d1;
    for (int c = 0; c < 3; c++) {
        a0[c] = float(unq(q[0][c], epb));
        d0[c] = float(unq(q[1][c], epb)) - a0[c];
        a1[c] = float(unq(q[2][c], epb));
        d1[c] = float(unq(q[3][c], epb)) - a1[c];
    }
    float dd0 = dot(d0, d0), dd1 = dot(d1, d1);
    float i0 = dd0 > 0.0 ? float(n1) / dd0 : 0.0, i1 = dd1 > 0.0 ? float(n1) / dd1 : 0.0;
    float total = 0.0;
    for (uint t = 0u; t < 16u; t++) {
        bool s1 = ((bits >> t) & 1u) != 0u;
        vec3 a = s1 ? a1 : a0, d = s1 ? d1 : d0;
        int lim = (t == 0u || (two && t == anc)) ? n1 / 2 : n1;
        int ic = clamp(int(round(dot(U[t] - a, d) * (s1 ? i1 : i0))), 0, lim);
        float best = 1.0 / 0.0;
        for (int j = -int(NB); j <= int(NB); j++) {
            int i = clamp(ic + j, 0, lim);
            vec3 r = a + d * (float(weight(two, uint(i))) * (1.0 / 64.0)) - U[t];
            best = min(best, dot(Wt[t], r * r));
        }
        total += best;
    }
    return total;
}

// exact index choice under the CPU's metric (anchors in the lower half of their subset's indices):
// palette entries 0..7 subset 0, 8..15 subset 1 (two subsets) or 0..15 (one subset)
float assign(uint mi, uint part, ivec3 q[4], out uint idx[16])
{
    const bool two = mi < 10u;
    const uint epb = m_epb(mi), bits = two ? s_p2[part] : 0u, anc = two ? s_a2[part] : 0u;
    ivec3 pal[16];
    vec3 lp[16];
    ivec3 a0, b0, a1, b1;
    for (int c = 0; c < 3; c++) {
        a0[c] = unq(q[0][c], epb);
        b0[c] = unq(q[1][c], epb);
        a1[c] = unq(q[2][c], epb);
        b1[c] = unq(q[3][c], epb);
    }
    for (uint i = 0u; i < 16u; i++) {
        bool hi = two && i >= 8u;
        ivec3 a = hi ? a1 : a0, b = hi ? b1 : b0;
        for (int c = 0; c < 3; c++) {
            pal[i][c] = finish_x(interp(a[c], b[c], weight(two, i)));
            lp[i][c] = slog(pal[i][c]);
        }
    }
    float total = 0.0;
    for (uint t = 0u; t < 16u; t++) {
        uint s = (bits >> t) & 1u;
        uint lim = two ? ((t == 0u || t == anc) ? 4u : 8u) : (t == 0u ? 8u : 16u);
        float best = 1.0 / 0.0;
        uint bi = 0u;
        for (uint i = 0u; i < 16u; i++) {
            if (i >= lim) break;
            ivec3 pv = s != 0u ? pal[min(i + 8u, 15u)] : pal[i];
            vec3 lv = s != 0u ? lp[min(i + 8u, 15u)] : lp[i];
            vec3 dl = lv - L[t], dx = vec3(pv - X[t]);
            float e = dot(dl, dl) + ULP_K2 * dot(dx, dx);
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

// principal-axis fit of subset s of (ns, part), anchor texel nearer e0 (the CPU's fit_subset)
void fit_subset(uint mask, uint anchor, out vec3 e0, out vec3 e1)
{
    float sw = 0.0;
    vec3 mean = vec3(0.0);
    for (uint t = 0u; t < 16u; t++) {
        float v = ((mask >> t) & 1u) != 0u ? TW[t] : 0.0;
        sw += v;
        mean += v * U[t];
    }
    mean /= sw;
    float cov[6] = float[6](0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    for (uint t = 0u; t < 16u; t++) {
        float v = ((mask >> t) & 1u) != 0u ? TW[t] : 0.0;
        vec3 d = U[t] - mean, vd = v * d;
        cov[0] += vd.x * d.x;
        cov[1] += vd.x * d.y;
        cov[2] += vd.x * d.z;
        cov[3] += vd.y * d.y;
        cov[4] += vd.y * d.z;
        cov[5] += vd.z * d.z;
    }
    vec3 ax;
    if (cov[0] >= cov[3] && cov[0] >= cov[5]) ax = vec3(cov[0], cov[1], cov[2]);
    else if (cov[3] >= cov[5]) ax = vec3(cov[1], cov[3], cov[4]);
    else ax = vec3(cov[2], cov[4], cov[5]);
    for (int it = 0; it < 8; it++) {
        vec3 nv = vec3(cov[0] * ax.x + cov[1] * ax.y + cov[2] * ax.z, cov[1] * ax.x + cov[3] * ax.y + cov[4] * ax.z,
                       cov[2] * ax.x + cov[4] * ax.y + cov[5] * ax.z);
        float len = max(abs(nv.x), max(abs(nv.y), abs(nv.z)));
        if (!(len > 0.0)) break;
        ax = nv / len;
    }
    float len = length(ax);
    ax = len > 0.0 ? ax / len : vec3(0.0);
    float tmin = 1.0 / 0.0, tmax = -1.0 / 0.0, tanchor = 0.0;
    for (uint t = 0u; t < 16u; t++) {
        if (((mask >> t) & 1u) == 0u) continue;
        float p = dot(U[t] - mean, ax);
        tmin = min(tmin, p);
        tmax = max(tmax, p);
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
    for (int it = 0; it < 3; it++) {
        vec3 nv = vec3(a0 * ax.x + a1 * ax.y + a2 * ax.z, a1 * ax.x + a3 * ax.y + a4 * ax.z, a2 * ax.x + a4 * ax.y + a5 * ax.z);
        float len = max(abs(nv.x), max(abs(nv.y), abs(nv.z)));
        if (!(len > 0.0)) break;
        ax = nv / len;
    }
    float l2 = dot(ax, ax);
    vec3 cx = vec3(a0 * ax.x + a1 * ax.y + a2 * ax.z, a1 * ax.x + a3 * ax.y + a4 * ax.z, a2 * ax.x + a4 * ax.y + a5 * ax.z);
    float lam = l2 > 0.0 ? dot(ax, cx) / l2 : 0.0;
    return max(a0 + a3 + a5 - lam, 0.0);
}

// weighted least squares endpoints for fixed indices (float), both subsets at once
void ls_fit(uint mi, uint part, uint idx[16], out vec3 ef[4])
{
    const bool two = mi < 10u;
    const uint bits = two ? s_p2[part] : 0u;
    for (uint s = 0u; s < 2u; s++) {
        vec3 aa = vec3(0.0), ab = vec3(0.0), bb = vec3(0.0), ax = vec3(0.0), bx = vec3(0.0), sw = vec3(0.0), sx = vec3(0.0);
        for (uint t = 0u; t < 16u; t++) {
            if (((bits >> t) & 1u) != s) continue;
            vec3 w = Wt[t] + 1e-12;
            float be = float(weight(two, idx[t])) / 64.0, al = 1.0 - be;
            aa += w * (al * al);
            ab += w * (al * be);
            bb += w * (be * be);
            ax += w * al * U[t];
            bx += w * be * U[t];
            sw += w;
            sx += w * U[t];
        }
        vec3 det = aa * bb - ab * ab;
        for (int c = 0; c < 3; c++) {
            if (det[c] > 1e-6 * (aa[c] * bb[c]) && det[c] > 0.0) {
                ef[2u * s][c] = (ax[c] * bb[c] - bx[c] * ab[c]) / det[c];
                ef[2u * s + 1u][c] = (bx[c] * aa[c] - ax[c] * ab[c]) / det[c];
            } else {
                ef[2u * s][c] = ef[2u * s + 1u][c] = sw[c] > 0.0 ? sx[c] / sw[c] : 0.0;
            }
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

uvec4 pack(uint mi, uint part, ivec3 q[4], uint idx[16])
{
    const bool two = mi < 10u;
    uint f[14];
    for (int k = 0; k < 14; k++) f[k] = 0u;
    uint emask = (1u << m_epb(mi)) - 1u;
    for (uint e = 0u; e < (two ? 4u : 2u); e++)
        for (int c = 0; c < 3; c++) {
            if (e == 0u || !m_tr(mi)) f[e * 3u + uint(c)] = uint(q[e][c]) & emask;
            else f[e * 3u + uint(c)] = uint(q[e][c] - q[0][c]) & ((1u << uint(m_delta(mi)[c])) - 1u);
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
        put_bits(idx[t], (two ? 3u : 4u) - ((t == 0u || (two && t == s_a2[part])) ? 1u : 0u));
    return bits_out;
}

void cand_of(uint c, out uint mi, out uint part, out vec3 ef[4])
{
    uint slot = MAXP;
    if (c < 4u) {
        mi = 10u + c;
        part = 0u;
    } else {
        mi = (c - 4u) % 10u;
        slot = (c - 4u) / 10u;
        part = s_order[gl_LocalInvocationID.x / LANES][slot];
    }
    uint sb = gl_LocalInvocationID.x / LANES;
    for (int e = 0; e < 4; e++) ef[e] = vec3(s_pef[sb][slot][e * 3], s_pef[sb][slot][e * 3 + 1], s_pef[sb][slot][e * 3 + 2]);
}

void main()
{
    const uint lid = gl_LocalInvocationID.x, sb = lid / LANES, lane = lid % LANES;
    const uint blk = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * BPW + sb;
    const bool live = blk < pc.blocks_x * pc.block_rows; // no early return: every invocation reaches the barriers
    const uint parts = min(pc.partitions, MAXP);
    const uint ncand = 4u + parts * 10u;
    const uint kmax = min(min(pc.keep, MAXK), ncand);
    if (lid < 32u) {
        s_p2[lid] = BPTC_P2[lid];
        s_a2[lid] = BPTC_A2[lid];
    }
    if (lane < 3u) s_mask[sb][lane] = 0u;
    barrier();

    if (live) {
        uint bx = blk % pc.blocks_x, by = blk / pc.blocks_x;
        const float k = pc.sf != 0u ? 32.0 / 31.0 : 64.0 / 31.0;
        for (uint t = 0u; t < 16u; t++) {
            uint x = min(bx * 4u + (t & 3u), pc.width - 1u), y = min(by * 4u + (t >> 2), pc.rows - 1u);
            vec3 v = src.px[y * pc.width + x].rgb;
            for (int c = 0; c < 3; c++) {
                float f = v[c];
                if (isnan(f)) f = 0.0;
                if (pc.sf == 0u && f < 0.0) f = 0.0;
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
            TW[t] = (Wt[t][0] + Wt[t][1] + Wt[t][2]) * (1.0 / 3.0) + 1e-12;
        }
        // 1. partition residuals, 8 per lane
        // per texel weighted moments about texel 0 (MW, MS, MM) and their totals
        float MW[16], MM[16][6], swt = 0.0, mt[6] = float[6](0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        vec3 MS[16], st = vec3(0.0);
        for (uint t = 0u; t < 16u; t++) {
            vec3 d = U[t] - U[0], vd = TW[t] * d;
            MW[t] = TW[t];
            MS[t] = vd;
            MM[t] = float[6](vd.x * d.x, vd.x * d.y, vd.x * d.z, vd.y * d.y, vd.y * d.z, vd.z * d.z);
            swt += MW[t];
            st += vd;
            for (int i = 0; i < 6; i++) mt[i] += MM[t][i];
        }
        // each lane ranks its 8 partitions into a sorted list of MAXP in registers (strict <: ties
        // keep the lower number, which comes first)
        float tv[MAXP];
        uint ti[MAXP];
        for (uint i = 0u; i < MAXP; i++) {
            tv[i] = 1.0 / 0.0;
            ti[i] = 32u;
        }
        if (parts > 0u)
            for (uint j = 0u; j < 32u / LANES; j++) {
                uint p = lane + j * LANES, bits = s_p2[p];
                float sw1 = 0.0, m1[6] = float[6](0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
                vec3 s11 = vec3(0.0);
                for (uint t = 0u; t < 16u; t++) {
                    float v = ((bits >> t) & 1u) != 0u ? 1.0 : 0.0;
                    sw1 += v * MW[t];
                    s11 += v * MS[t];
                    for (int i = 0; i < 6; i++) m1[i] += v * MM[t][i];
                }
                float m0[6];
                for (int i = 0; i < 6; i++) m0[i] = mt[i] - m1[i];
                float v = resid(swt - sw1, st - s11, m0) + resid(sw1, s11, m1);
                uint vi = p;
                for (uint i = 0u; i < MAXP; i++)
                    if (v < tv[i]) {
                        float f = tv[i];
                        uint fi = ti[i];
                        tv[i] = v;
                        ti[i] = vi;
                        v = f;
                        vi = fi;
                    }
            }
        for (uint i = 0u; i < MAXP; i++) {
            s_r[sb][lane * MAXP + i] = tv[i];
            s_rp[sb][lane * MAXP + i] = ti[i];
        }
    }
    barrier();
    // 2. the best partitions (stable: ties to the lower number); their fits; the one-subset line
    if (live && parts > 0u)
        for (uint i = 0u; i < MAXP; i++) {
            uint j = lane * MAXP + i, p = s_rp[sb][j], rank = 0u;
            float r = s_r[sb][j];
            if (p >= 32u || i >= parts) break;
            for (uint o = 0u; o < LANES * MAXP; o++) {
                float f = s_r[sb][o];
                uint q = s_rp[sb][o];
                if (f < r || (f == r && q < p)) rank++;
            }
            if (rank < parts) s_order[sb][rank] = p;
        }
    barrier();
    if (live)
        for (uint j = lane; j <= 2u * parts; j += LANES) {
            uint slot = j < 2u * parts ? j / 2u : MAXP, s = j % 2u, mask = 0xFFFFu, anchor = 0u;
            if (j < 2u * parts) {
                uint p = s_order[sb][slot];
                mask = s == 1u ? s_p2[p] : ~s_p2[p] & 0xFFFFu;
                anchor = s == 1u ? s_a2[p] : 0u;
            }
            vec3 e0, e1;
            fit_subset(mask, anchor, e0, e1);
            uint o = j < 2u * parts ? s * 6u : 0u;
            for (int c = 0; c < 3; c++) {
                s_pef[sb][slot][o + uint(c)] = e0[c];
                s_pef[sb][slot][o + 3u + uint(c)] = e1[c];
            }
        }
    barrier();
    // the mode filter, a fitted partition (or the one-subset line) per lane
    if (live)
        for (uint k = lane; k <= parts; k += LANES) {
            uint slot = k < parts ? k : MAXP, m0 = k < parts ? 0u : 10u, nm = k < parts ? 10u : 4u;
            uint c0 = k < parts ? 4u + 10u * k : 0u;
            vec3 ef[4];
            for (int e = 0; e < 4; e++)
                ef[e] = vec3(s_pef[sb][slot][e * 3], s_pef[sb][slot][e * 3 + 1], s_pef[sb][slot][e * 3 + 2]);
            uint best = 0u, ok = 0u;
            for (uint o = 0u; o < nm; o++) {
                bool f = m_tr(m0 + o) && fits(m0 + o, ef);
                if (f) {
                    best = max(best, m_epb(m0 + o));
                    ok |= 1u << o;
                }
            }
            for (uint o = 0u; o < nm; o++) {
                if (m_tr(m0 + o) && ((ok >> o) & 1u) == 0u) continue;
                if (m_tr(m0 + o) && m_epb(m0 + o) + PREC_SPAN < best) continue;
                uint c = c0 + o;
                atomicOr(s_mask[sb][c >> 5], 1u << (c & 31u));
            }
        }
    barrier();
    // 3. the filtered candidates, scored cheaply; each lane keeps its best MAXK in registers (strict <: ties
    // keep the lower candidate number, which comes first)
    float kv[MAXK];
    uint kc[MAXK];
    for (uint i = 0u; i < MAXK; i++) {
        kv[i] = 1.0 / 0.0;
        kc[i] = 0xFFFFu;
    }
    const uvec3 fm = uvec3(s_mask[sb][0], s_mask[sb][1], s_mask[sb][2]);
    const uint nf = uint(bitCount(fm.x) + bitCount(fm.y) + bitCount(fm.z));
    const uint nkeep = min(kmax, nf); // the filter may leave fewer candidates than K (small P)
    if (live)
        for (uint n = lane; n < nf; n += LANES) {
            // candidate c: the n-th set bit of the filter mask
            uint r = n, w = 0u;
            if (r >= uint(bitCount(fm.x))) {
                r -= uint(bitCount(fm.x));
                w = 1u;
                if (r >= uint(bitCount(fm.y))) {
                    r -= uint(bitCount(fm.y));
                    w = 2u;
                }
            }
            uint bits = fm[w];
            for (uint i = 0u; i < r; i++) bits &= bits - 1u;
            uint c = w * 32u + uint(findLSB(bits));
            uint mi, part;
            vec3 ef[4];
            cand_of(c, mi, part, ef);
            float e = 1.0 / 0.0;
            uint var = 0u;
            bool more = true;
            for (uint k = 0u; k < 2u && more; k++) {
                ivec3 q[4];
                bool ch = quantize(mi, ef, k, q);
                more = k == 0u && ch;
                if (k == 1u && !ch) break;
                float ek = approx_err(mi, part, q);
                if (ek < e) {
                    e = ek;
                    var = k;
                }
            }
            uint vc = c | var << 8;
            for (uint i = 0u; i < MAXK; i++)
                if (e < kv[i]) {
                    float f = kv[i];
                    uint fc = kc[i];
                    kv[i] = e;
                    kc[i] = vc;
                    e = f;
                    vc = fc;
                }
        }
    for (uint i = 0u; i < MAXK; i++) {
        s_err[sb][lane * MAXK + i] = kv[i];
        s_cv[sb][lane * MAXK + i] = kc[i];
    }
    barrier();
    // 4. the KEEP best by (error, candidate number); lane j refines kept candidate j exactly
    if (live)
        for (uint i = 0u; i < MAXK; i++) {
            uint j = lane * MAXK + i, c = s_cv[sb][j], rank = 0u;
            float e = s_err[sb][j];
            if (c == 0xFFFFu || i >= nkeep) break;
            for (uint o = 0u; o < LANES * MAXK; o++) {
                float f = s_err[sb][o];
                uint oc = s_cv[sb][o];
                if (f < e || (f == e && (oc & 255u) < (c & 255u))) rank++;
            }
            if (rank < nkeep) s_kept[sb][rank] = c;
        }
    barrier();
    ivec3 bq[4];
    uint bidx[16];
    uint mi = 0u, part = 0u;
    if (live && lane < nkeep) {
        vec3 ef[4];
        uint c = s_kept[sb][lane] & 255u, var = s_kept[sb][lane] >> 8;
        cand_of(c, mi, part, ef);
        float err = 1.0 / 0.0;
        for (uint it = 0u; it <= pc.ls_iters; it++) {
            if (it > 0u) ls_fit(mi, part, bidx, ef);
            ivec3 q[4];
            uint idx[16];
            quantize(mi, ef, var, q);
            float e = assign(mi, part, q, idx);
            if (it > 0u && !(e < err)) break;
            err = e;
            bq = q;
            bidx = idx;
        }
        s_ferr[sb][lane] = err;
    }
    barrier();
    // 5. the winner
    if (live && lane < nkeep) {
        uint win = 0u;
        float we = s_ferr[sb][0];
        for (uint j = 1u; j < nkeep; j++)
            if (s_ferr[sb][j] < we) {
                we = s_ferr[sb][j];
                win = j;
            }
        if (lane == win) dst.blk[blk] = pack(mi, part, bq, bidx);
    }
}

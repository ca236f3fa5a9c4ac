#version 450
// enc_bc1_cf2.comp - BC1 / BC1a / BC3-colour at high and max quality, kiln strategy, the same bytes
// as enc_bc1_cf.comp and bc1_enc.c's encode_cluster (same float operations in the same order), but
// with every serial step of enc_bc1_cf.comp that left invocations idle split over the block's
// CF_LANES invocations (specialisation constant 5: 8, 16, 32 or 64; 64 / CF_LANES blocks per
// workgroup of 64). Per block:
//   - texels loaded by all invocations (t = lane, lane + CF_LANES, ...); the first invocation checks
//     the CPU's routing (flat, cut-out) and computes the principal axis (as enc_bc1_cf.comp); the
//     sort keys and each texel's rank (sortable key bits, ties by texel index) again by all
//     invocations; the prefix sums (serial order) by every invocation, each scaling its share;
//   - partition scoring and the merge by (error, entry) as in enc_bc1_cf.comp, but each entry in
//     three 16-byte loads (the table's aligned copy), the prefix sums as vec4, and the four- and
//     three-colour entries in two loops; then invocation c (c < 3) owns candidate c (four-colour
//     best, second, three-colour best) and keeps its solution in registers;
//   - every exact scoring (select_indices) runs as 3 x 16 (candidate, texel) items over all
//     invocations (palette from the owner through shared memory); the owner sums the 16 distances in
//     vhsum's pairwise order and builds the indices;
//   - max: the owner refits (least squares, serial: cheap), then up to 4 rounds of channel_step:
//     the per-index sums as 3 x 4 (candidate, index) items, the 3 x 3 x 5 (candidate, channel, group
//     of 5 window pairs) errors as items that keep their first smallest, and the owner takes the
//     first smallest of each channel over the groups in window order (so the CPU's order, whichever
//     invocation computed an error); the rounds end for the whole workgroup when no candidate in it
//     improved.
// Every product that C rounds before an addition is fm() / fm3() (no fp64 conversions: slow on GPUs),
// except in the refit and the covariance, where they are mr() as in enc_bc1_cf.comp (serial, once per
// block or candidate: cheap). No loop with float arithmetic is [[unroll]]: glslc -O's unroller drops
// the NoContraction decorations (`precise`) of the copies it makes, which left the refit's fm() products
// and sums free to be reassociated and fused by a driver (the likely cause of design 2's other bytes
// than the CPU's at BC1 max on an H100, 2026-11-25); the drivers unroll them keeping NoContraction.
// The rounds are uniform across the workgroup (barriers in uniform control flow); no subgroup
// operations, so any subgroup size and lane order give the same bytes.
#include "enc_bc_common.glsl"
layout(local_size_x_id = 0) in;
#include "enc_bc1.glsl"

// words[0] = four-colour entries n4, words[1] = three-colour entries n3, words[2] = 1.0 (float bits),
// then per entry (four-colour ones first) 9 words: Ah, Bh, C, p1, p2, p3, p4, pen (float bits,
// bc1_enc_cf.h) and i | j << 8 | k << 16 (enc_bc1_cf.comp reads these).
// After those words, from the first 16-byte boundary (uvec4 index g_tab), the same entries again as 3
// uvec4: (Ah, Bh, C, i | j << 8 | k << 16), (p1, p2, p3, p4), (pen, 0, 0, 0): three loads per entry.
layout(std430, binding = 3) readonly buffer CfTab { uvec4 v[]; } cft;

// invocations per block (a power of two, 8..64); the workgroup (64) holds 64 / CF_LANES blocks
layout(constant_id = 5) const uint CF_LANES = 16;
const uint MAXL = 64u, MAXB = 8u; // workgroup size (the host uses 64), blocks per workgroup at 8 lanes
const vec3 TOP = vec3(31.0, 63.0, 31.0);
const uint NW = 96u; // work words per block: 3 x 16 x 2 texel scores, or 3 x 3 x 5 x 2 channel step groups

shared vec3 s_x[16 * MAXB];  // texel colours 0..255
shared vec3 s_sc[16 * MAXB]; // the same times sqrt(channel weight)
shared vec4 s_p3[17 * MAXB], s_p2[17 * MAXB]; // .xyz (vec4: one 16-byte load)
shared vec3 s_gtot[MAXB], s_wg[MAXB], s_tot[MAXB], s_axis[MAXB];
shared float s_tr[MAXB];
shared uint s_ok[MAXB];
shared uint s_key[16 * MAXB]; // sort keys; then (counted flag) before the axis
shared uint s_pos[16 * MAXB]; // texel at each rank
shared float s_le[3u * MAXL]; // per invocation: four-colour best, second, three-colour best
shared uint s_li[3u * MAXL];
shared uint s_cj[3u * MAXB];  // merged candidate entries
shared uint s_cv[3u * MAXB];  // candidate valid (after the merge)
// per candidate: the request of its owner (scoring: endpoints, palette; channel step: indices)
shared uint s_on[3u * MAXB], s_four[3u * MAXB], s_r0[3u * MAXB], s_r1[3u * MAXB], s_ridx[3u * MAXB];
// per candidate 4 words: the palette (scoring; .xyz), or the per-index sums (channel step): the phases
// never overlap (barriers between them)
shared vec4 s_pc[12u * MAXB];
shared float s_w[NW * MAXB];
shared uint s_any[2];
shared float s_se[3u * MAXB];
shared uint s_s0[3u * MAXB], s_s1[3u * MAXB], s_sidx[3u * MAXB];

uint g_slot; // this invocation's block within the workgroup
uint g_tab;  // uvec4 index of the aligned entries
float g_one; // 1.0 from the table buffer (no compiler can fold it)

// The partition search's products, rounded once as C rounds them, cheaper than mr(): the product
// times g_one can be fused into a following addition only as fma(p, 1, c), which rounds as p + c does,
// and a * b itself feeds no addition (a driver fusing despite NoContraction, as lavapipe does, cannot
// change the result). This shader uses them for every product that C rounds before an addition (and
// for the stored ones); mr() where a product reaches quant565's own arithmetic (the refit) and in the
// covariance (see the header).
vec3 fm3(vec3 a, vec3 b)
{
    precise vec3 p = a * b;
    precise vec3 q = p * g_one;
    return q;
}
#define X(t) s_x[g_slot * 16u + uint(t)]
#define SC(t) s_sc[g_slot * 16u + uint(t)]
#define P3(i) s_p3[g_slot * 17u + uint(i)].xyz
#define P2(i) s_p2[g_slot * 17u + uint(i)].xyz
#define CS(c) (g_slot * 3u + uint(c))
#define W(i) s_w[g_slot * NW + uint(i)]

struct Sol { uint c0, c1, idx; float err; bool four; };

bool is_max() { return ((pc.flags >> 10u) & 3u) == Q_MAX; }

// fm3's scalar: a * b rounded once (no double conversions).
float fm(float a, float b)
{
    precise float p = a * b;
    precise float q = p * g_one;
    return q;
}

// select_indices' squared distance (bc1_enc.c's products, then (x + y) + z), with fm3's products.
float dist2(vec3 s, vec3 p)
{
    precise vec3 d = s - p;
    precise vec3 q = fm3(d, d);
    precise float dd = (q.x + q.y) + q.z;
    return dd;
}

// ---------------------------------------------------------------- exact scoring, split over the lanes

// The owner of candidate c asks for try_endpoints(c0, c1, four): the mode and order score() of
// enc_bc1_cf.comp picks, and the palette select_indices builds. Returns the solution to fill.
Sol request_score(uint c, uint c0, uint c1, bool four)
{
    Sol s;
    s.four = four;
    if (FOUR_ANY) s.four = true;
    else if (c0 == c1) s.four = false;
    s.c0 = c0; s.c1 = c1;
    if (!FOUR_ANY && (s.four ? c0 < c1 : c0 > c1)) { s.c0 = c1; s.c1 = c0; }
    s.err = F_INF; s.idx = 0u;
    ivec3 a = expand565(s.c0), bq = expand565(s.c1);
    ivec3 i2, i3;
    if (s.four) { i2 = (2 * a + bq) / 3; i3 = (a + 2 * bq) / 3; }
    else { i2 = (a + bq) / 2; i3 = ivec3(0); }
    const vec3 sw = chan_sw();
    s_pc[4u * CS(c)] = vec4(fm3(vec3(a), sw), 0.0);
    s_pc[4u * CS(c) + 1u] = vec4(fm3(vec3(bq), sw), 0.0);
    s_pc[4u * CS(c) + 2u] = vec4(fm3(vec3(i2), sw), 0.0);
    s_pc[4u * CS(c) + 3u] = vec4(fm3(vec3(i3), sw), 0.0);
    s_four[CS(c)] = s.four ? 1u : 0u;
    s_on[CS(c)] = 1u;
    return s;
}

// Every lane: the (candidate, texel) items t = lane, lane + CF_LANES, ...: the best palette entry
// (first on ties) and its distance, to W(2 * item) / W(2 * item + 1).
void score_items(uint lane)
{
    [[dont_unroll]] for (uint it = lane; it < 48u; it += CF_LANES) {
        uint c = it >> 4u, t = it & 15u;
        if (s_on[CS(c)] == 0u) continue;
        bool four = s_four[CS(c)] != 0u;
        vec3 s = SC(t);
        precise float best = dist2(s, s_pc[4u * CS(c)].xyz);
        uint bi = 0u;
        precise float dd = dist2(s, s_pc[4u * CS(c) + 1u].xyz);
        if (dd < best) { best = dd; bi = 1u; }
        dd = dist2(s, s_pc[4u * CS(c) + 2u].xyz);
        if (dd < best) { best = dd; bi = 2u; }
        if (four) {
            dd = dist2(s, s_pc[4u * CS(c) + 3u].xyz);
            if (dd < best) { best = dd; bi = 3u; }
        }
        W(2u * it) = best;
        W(2u * it + 1u) = float(bi);
    }
}

// The owner: the error (vhsum's pairwise order) and indices of its request.
void collect_score(uint c, inout Sol s)
{
    uint bits = 0u;
    precise float quad[4];
    for (int q = 0; q < 4; q++) {
        precise float d[4];
        for (int u = 0; u < 4; u++) {
            uint t = 4u * uint(q) + uint(u), it = 16u * c + t;
            d[u] = W(2u * it);
            bits |= uint(W(2u * it + 1u)) << (2u * t);
        }
        quad[q] = (d[0] + d[1]) + (d[2] + d[3]);
    }
    s.idx = bits;
    precise float r = (quad[0] + quad[1]) + (quad[2] + quad[3]);
    s.err = r;
}

// refit: the weights of texel t for indices idx, and those weights times the colour.
void rterm(uint idx, bool four, int t, out vec2 w, out vec3 wx)
{
    uint i = (idx >> (2u * uint(t))) & 3u;
    float v;
    if (four) v = i == 0u ? 1.0 : i == 2u ? F_2_3 : i == 3u ? F_1_3 : 0.0;
    else v = i == 0u ? 1.0 : i == 2u ? 0.5 : 0.0;
    w = vec2(v, mr(v, v));
    wx = mr3s(X(t), v);
}

// Least-squares endpoints for the indices of s (vsum8's order: lanes i + 8, then + 4, + 2, + 1).
bool refit(Sol s, out vec3 a, out vec3 b)
{
    precise vec2 xw[2];
    precise vec3 xx[2];
    for (int i = 0; i < 2; i++) {
        precise vec2 ww[2];
        precise vec3 wx[2];
        for (int h = 0; h < 2; h++) {
            int j = i + 2 * h;
            vec2 w0, w1, w2, w3;
            vec3 x0, x1, x2, x3;
            rterm(s.idx, s.four, j, w0, x0);
            rterm(s.idx, s.four, j + 8, w1, x1);
            rterm(s.idx, s.four, j + 4, w2, x2);
            rterm(s.idx, s.four, j + 12, w3, x3);
            ww[h] = (w0 + w1) + (w2 + w3);
            wx[h] = (x0 + x1) + (x2 + x3);
        }
        xw[i] = ww[0] + ww[1];
        xx[i] = wx[0] + wx[1];
    }
    precise vec2 sw2 = xw[0] + xw[1];
    precise vec3 ax = xx[0] + xx[1];
    precise float sa = sw2.x, aa = sw2.y;
    precise float ab = sa - aa, bb = (16.0 - 2.0 * sa) + aa;
    precise float det = mr(aa, bb) - mr(ab, ab);
    a = vec3(0.0); b = vec3(0.0);
    if (!(det > F_1EM3)) return false;
    float rc = fdiv_rn(1.0, det);
    precise vec3 bx = s_tot[g_slot] - ax;
    precise vec3 t5 = mr3s(ax, bb) - mr3s(bx, ab), t6 = mr3s(bx, aa) - mr3s(ax, ab);
    vec3 ra = mr3s(t5, rc), rb = mr3s(t6, rc);
    a = ra; b = rb;
    return true;
}

// ---------------------------------------------------------------- channel_step, split over the lanes

// The owner asks for channel_step's items: indices and endpoints of its solution. (A function: glslang's
// `precise` propagation, followed through these shared words, took minutes on the inline stores.)
void request_step(uint c, uint idx, uint c0, uint c1, bool four)
{
    s_ridx[CS(c)] = idx; s_r0[CS(c)] = c0; s_r1[CS(c)] = c1;
    s_four[CS(c)] = four ? 1u : 0u;
}

// Every lane: the (candidate, index) items: count and colour sums of the texels on that index
// (vhsum order), for the candidates whose owner asked (s_on) with indices s_ridx.
void sum_items(uint lane)
{
    [[dont_unroll]] for (uint it = lane; it < 12u; it += CF_LANES) {
        uint c = it >> 2u, i = it & 3u;
        if (s_on[CS(c)] == 0u) continue;
        uint idx = s_ridx[CS(c)];
        precise vec4 quad[4];
        for (int q = 0; q < 4; q++) {
            precise vec4 d[4];
            for (int u = 0; u < 4; u++) {
                int t = 4 * q + u;
                bool on = ((idx >> (2u * uint(t))) & 3u) == i;
                d[u] = on ? vec4(1.0, X(t)) : vec4(0.0);
            }
            quad[q] = (d[0] + d[1]) + (d[2] + d[3]);
        }
        precise vec4 r = (quad[0] + quad[1]) + (quad[2] + quad[3]);
        s_pc[4u * CS(c) + i] = r;
    }
}

// Every lane: the (candidate, channel, group) items: channel_step's errors (radius 2) of the window
// pairs l = 5 group .. 5 group + 4 (infinity outside the 565 range), the first smallest of them and
// its l (or -1) to W(2 item), W(2 item + 1).
void step_items(uint lane)
{
    [[dont_unroll]] for (uint it = lane; it < 45u; it += CF_LANES) {
        uint c = it / 15u, r = it - 15u * c, ch = r / 5u, g = r - 5u * ch;
        if (s_on[CS(c)] == 0u) continue;
        bool four = s_four[CS(c)] != 0u;
        // channel ch of the endpoints and of the per-index sums, without dynamic component indexing
        uint sh = ch == 0u ? 11u : ch == 1u ? 5u : 0u, mk = ch == 1u ? 63u : 31u;
        int q0 = int((s_r0[CS(c)] >> sh) & mk), q1 = int((s_r1[CS(c)] >> sh) & mk);
        vec4 cs0 = s_pc[4u * CS(c)], cs1 = s_pc[4u * CS(c) + 1u], cs2 = s_pc[4u * CS(c) + 2u], cs3 = s_pc[4u * CS(c) + 3u];
        float top = float(mk);
        float fs0 = ch == 0u ? cs0.y : ch == 1u ? cs0.z : cs0.w, fs1 = ch == 0u ? cs1.y : ch == 1u ? cs1.z : cs1.w;
        float fs2 = ch == 0u ? cs2.y : ch == 1u ? cs2.z : cs2.w, fs3 = ch == 0u ? cs3.y : ch == 1u ? cs3.z : cs3.w;
        // the group shares endpoint a (da = group): its terms once
        int da = int(g);
        float qa = float(q0 + da - 2);
        bool oka = qa >= 0.0 && qa <= top;
        precise float ea;
        if (ch == 1u) ea = qa * 4.0 + roundEven(qa * 0.0625 - 0.46875);
        else ea = qa * 8.0 + roundEven(qa * 0.25 - 0.375);
        precise float g0 = fm(cs0.x, ea) - 2.0 * fs0;
        precise float t0 = fm(ea, g0);
        float best = F_INF;
        int bl = -1;
        [[dont_unroll]] for (int db = 0; db < 5; db++) {
            int l = 5 * da + db;
            float qb = float(q1 + db - 2);
            bool ok = oka && qb >= 0.0 && qb <= top;
            precise float eb;
            if (ch == 1u) eb = qb * 4.0 + roundEven(qb * 0.0625 - 0.46875);
            else eb = qb * 8.0 + roundEven(qb * 0.25 - 0.375);
            precise float p2, p3;
            if (four) {
                precise float u2 = fm(ea + ea + eb, F_1_3) - uintBitsToFloat(0x3eaa9931u);
                precise float u3 = fm(ea + eb + eb, F_1_3) - uintBitsToFloat(0x3eaa9931u);
                p2 = roundEven(u2);
                p3 = roundEven(u3);
            } else {
                precise float u2 = (ea + eb) * 0.5 - 0.25;
                p2 = roundEven(u2);
                p3 = 0.0;
            }
            precise float g1 = fm(cs1.x, eb) - 2.0 * fs1;
            precise float g2 = fm(cs2.x, p2) - 2.0 * fs2, g3 = fm(cs3.x, p3) - 2.0 * fs3;
            precise float e = ((t0 + fm(eb, g1)) + fm(p2, g2)) + fm(p3, g3);
            if (!ok) e = F_INF;
            if (e < best) { best = e; bl = l; }
        }
        W(2u * it) = best;
        W(2u * it + 1u) = float(bl + 1); // small integers: exact, no NaN / denormal bit patterns
    }
}

// The owner: channel_step's new endpoints from the items (the first smallest of each channel in
// window order: groups in order, strict comparisons); false when they did not change.
bool collect_step(uint c, Sol s, out uint c0, out uint c1)
{
    ivec3 q0 = unpack565(s.c0), q1 = unpack565(s.c1), n0 = q0, n1 = q1;
    bool changed = false;
    [[dont_unroll]] for (int ch = 0; ch < 3; ch++) {
        float best = F_INF;
        int bl = -1;
        [[unroll]] for (int g = 0; g < 5; g++) {
            uint it = 15u * c + 5u * uint(ch) + uint(g);
            float e = W(2u * it);
            if (e < best) { best = e; bl = int(W(2u * it + 1u)) - 1; }
        }
        if (bl >= 0) {
            n0[ch] = q0[ch] + bl / 5 - 2;
            n1[ch] = q1[ch] + bl % 5 - 2;
        }
        if (n0[ch] != q0[ch] || n1[ch] != q1[ch]) changed = true;
    }
    c0 = (uint(n0.x) << 11u) | (uint(n0.y) << 5u) | uint(n0.z);
    c1 = (uint(n1.x) << 11u) | (uint(n1.y) << 5u) | uint(n1.z);
    return changed;
}

// ---------------------------------------------------------------- the cluster search

// The search error of table entry e (four-colour when four) and its 565 endpoints (cf16_base's lane
// arithmetic; cf16_endpoints gives the same endpoints).
float cf_eval(uint e, bool four, out uint ca, out uint cb)
{
    uint o = g_tab + 3u * e;
    uvec4 w0 = cft.v[o], w1 = cft.v[o + 1u];
    float Ah = uintBitsToFloat(w0.x), Bh = uintBitsToFloat(w0.y), C = uintBitsToFloat(w0.z);
    float f1 = uintBitsToFloat(w1.x), f2 = uintBitsToFloat(w1.y), f3 = uintBitsToFloat(w1.z), f4 = uintBitsToFloat(w1.w);
    float pen = uintBitsToFloat(cft.v[o + 2u].x);
    uint ix = w0.w;
    uint i = ix & 255u, j = (ix >> 8u) & 255u, k = (ix >> 16u) & 255u;
    precise vec3 ax;
    if (four) ax = P3(i) + (P3(j) + P3(k));
    else ax = P2(i) + P2(j);
    const vec3 gt = s_gtot[g_slot];
    precise vec3 ua = fm3(ax, vec3(f1)) - fm3(gt, vec3(f2));
    precise vec3 ub = fm3(gt, vec3(f3)) - fm3(ax, vec3(f4));
    ua.x = ua.x > 0.0 ? ua.x : 0.0; ua.y = ua.y > 0.0 ? ua.y : 0.0; ua.z = ua.z > 0.0 ? ua.z : 0.0;
    ub.x = ub.x > 0.0 ? ub.x : 0.0; ub.y = ub.y > 0.0 ? ub.y : 0.0; ub.z = ub.z > 0.0 ? ub.z : 0.0;
    ua.x = ua.x < TOP.x ? ua.x : TOP.x; ua.y = ua.y < TOP.y ? ua.y : TOP.y; ua.z = ua.z < TOP.z ? ua.z : TOP.z;
    ub.x = ub.x < TOP.x ? ub.x : TOP.x; ub.y = ub.y < TOP.y ? ub.y : TOP.y; ub.z = ub.z < TOP.z ? ub.z : TOP.z;
    vec3 a = roundEven(ua), b = roundEven(ub);
    precise vec3 in1 = (fm3(a, vec3(Ah)) + fm3(b, vec3(C))) - ax;
    precise vec3 in2 = fm3(b, vec3(Bh)) - (gt - ax);
    precise vec3 ev = fm3(a, in1) + fm3(b, in2);
    const vec3 wg = s_wg[g_slot];
    precise vec3 pw = fm3(wg, ev);
    precise float es = (pw.x + pw.y) + pw.z;
    precise float err = pen + es;
    ivec3 qa = ivec3(a), qb = ivec3(b);
    ca = (uint(qa.x) << 11u) | (uint(qa.y) << 5u) | uint(qa.z);
    cb = (uint(qb.x) << 11u) | (uint(qb.y) << 5u) | uint(qb.z);
    return err;
}

// (e0, i0) before (e1, i1): smaller error, then earlier entry.
bool before(float e0, uint i0, float e1, uint i1) { return e0 < e1 || (e0 == e1 && i0 < i1); }

// The block's first invocation, after every lane loaded its texels (s_key: 1 = counted): false when
// the CPU must encode the block; else the totals, spread and principal axis (enc_bc1_cf.comp).
bool setup_axis()
{
    const vec3 sw = chan_sw(), cw = chan_w();
    bool is_flat = true, counted = true;
    const vec3 first = X(0);
    [[dont_unroll]] for (uint t = 0u; t < 16u; t++) {
        if (s_key[g_slot * 16u + t] == 0u) counted = false;
        if (X(t) != first) is_flat = false;
    }
    if (!counted || is_flat) return false;
    // principal axis (bc1_enc.c principal_axis): totals in vhsum order, covariance in vsum8 order
    precise vec3 quad[4];
    for (int q = 0; q < 4; q++) quad[q] = (X(4 * q) + X(4 * q + 1)) + (X(4 * q + 2) + X(4 * q + 3));
    precise vec3 tot = (quad[0] + quad[1]) + (quad[2] + quad[3]);
    s_tot[g_slot] = tot;
    precise vec3 m = tot * 0.0625;
    precise vec3 xa[2], xb[2];
    for (int i = 0; i < 2; i++) {
        precise vec3 wa[2], wb[2];
        for (int h = 0; h < 2; h++) {
            int j = i + 2 * h;
            precise vec3 ua[4], ub[4];
            for (int r = 0; r < 4; r++) {
                int t = j + (r == 1 ? 8 : r == 2 ? 4 : r == 3 ? 12 : 0);
                precise vec3 d = X(t) - m;
                ua[r] = vec3(mr(d.x, d.x), mr(d.x, d.y), mr(d.x, d.z));
                ub[r] = vec3(mr(d.y, d.y), mr(d.y, d.z), mr(d.z, d.z));
            }
            wa[h] = (ua[0] + ua[1]) + (ua[2] + ua[3]);
            wb[h] = (ub[0] + ub[1]) + (ub[2] + ub[3]);
        }
        xa[i] = wa[0] + wa[1];
        xb[i] = wb[0] + wb[1];
    }
    precise vec3 sa = xa[0] + xa[1], sb = xb[0] + xb[1];
    precise float s01 = sw.x * sw.y, s02 = sw.x * sw.z, s12 = sw.y * sw.z;
    float c00 = fm(sa.x, cw.x), c01 = fm(sa.y, s01), c02 = fm(sa.z, s02);
    float c11 = fm(sb.x, cw.y), c12 = fm(sb.y, s12), c22 = fm(sb.z, cw.z);
    precise float tr = (c00 + c11) + c22;
    s_tr[g_slot] = tr;
    bool r0 = c00 >= c11 && c00 >= c22, r1 = !r0 && c11 >= c22;
    precise float v0 = r0 ? c00 : r1 ? c01 : c02, v1 = r0 ? c01 : r1 ? c11 : c12, v2 = r0 ? c02 : r1 ? c12 : c22;
    [[dont_unroll]] for (int it = 0; it < 2; it++) {
        precise float w0 = (fm(c00, v0) + fm(c01, v1)) + fm(c02, v2);
        precise float w1 = (fm(c01, v0) + fm(c11, v1)) + fm(c12, v2);
        precise float w2 = (fm(c02, v0) + fm(c12, v1)) + fm(c22, v2);
        v0 = w0; v1 = w1; v2 = w2;
    }
    float mx = abs(v0) > abs(v1) ? abs(v0) : abs(v1);
    mx = abs(v2) > mx ? abs(v2) : mx;
    vec3 axis;
    if (!(tr > 0.0) || !(mx > 1e-30) || !(mx < 1e30)) {
        axis = vec3(1.0);
    } else {
        float rm = fdiv_rn(1.0, mx);
        axis = fm3(fm3(vec3(v0, v1, v2), vec3(rm)), sw);
    }
    s_axis[g_slot] = axis;
    return true;
}

// Every invocation of the block: the prefix sums along the ranks (s_pos) in the serial order (each
// invocation adds them all up, so every one holds the same values), in grid units: invocation lane
// scales and stores i = lane, lane + CF_LANES, ...
void setup_prefix(uint lane)
{
    const vec3 grid = vec3(F_31_255, F_63_255, F_31_255);
    precise vec3 pre = vec3(0.0);
    [[dont_unroll]] for (uint i = 0u; i <= 16u; i++) {
        if (i > 0u) pre = pre + X(s_pos[g_slot * 16u + i - 1u]);
        if (i % CF_LANES == lane) {
            vec3 pg = fm3(pre, grid);
            s_p3[g_slot * 17u + i] = vec4(fm3(pg, vec3(F_1_3)), 0.0);
            s_p2[g_slot * 17u + i] = vec4(pg * 0.5, 0.0);
        }
    }
    if (lane == 2u) s_gtot[g_slot] = fm3(pre, grid);
}

// Invocations 3, 4, 5 of the block meanwhile: channel ch = lane - 3 of the weights in grid units.
void setup_wg(uint ch)
{
    const vec3 cw = chan_w();
    const vec3 grid = vec3(F_31_255, F_63_255, F_31_255);
    vec3 g2 = mr3(grid, grid);
    float q = fdiv_rn(ch == 0u ? cw.x : ch == 1u ? cw.y : cw.z, ch == 0u ? g2.x : ch == 1u ? g2.y : g2.z);
    if (ch == 0u) s_wg[g_slot].x = q;
    else if (ch == 1u) s_wg[g_slot].y = q;
    else s_wg[g_slot].z = q;
}

void main()
{
    const uint lid = gl_LocalInvocationID.x, L = CF_LANES, lane = lid % L;
    g_slot = lid / L;
    const uvec4 head = cft.v[0];
    g_one = uintBitsToFloat(head.z);
    g_tab = (3u + 9u * (head.x + head.y) + 3u) / 4u;
    const uint nblocks = pc.blocks_x * pc.blocks_y;
    const uint b = group_linear() * (gl_WorkGroupSize.x / L) + g_slot;
    const bool live = b < nblocks;
    // texels by every lane (s_key: counted flag for now)
    if (live) {
        const vec3 sw = chan_sw();
        const uint thr = pc.flags & 255u;
        const bool cutout = (pc.flags & 512u) != 0u;
        [[dont_unroll]] for (uint t = lane; t < 16u; t += L) {
            vec3 c;
            uint a8;
            load_texel(b, t, c, a8);
            X(t) = c;
            SC(t) = fm3(c, sw);
            s_key[g_slot * 16u + t] = (PUNCH && a8 < thr) || (cutout && a8 == 0u) ? 0u : 1u;
        }
    }
    if (lid == 0u) s_any[0] = 0u;
    barrier();
    if (lane == 0u) s_ok[g_slot] = live && setup_axis() ? 1u : 0u;
    barrier();
    const bool run = s_ok[g_slot] != 0u;
    // sort keys and ranks (cf_sort: sortable key bits, ties by texel index)
    if (run) {
        const vec3 axis = s_axis[g_slot];
        [[dont_unroll]] for (uint t = lane; t < 16u; t += L) {
            vec3 c = X(t);
            precise vec3 pk = fm3(c, axis);
            precise float f = ((pk.x + pk.y) + pk.z) + 0.0;
            uint kb = floatBitsToUint(f);
            s_key[g_slot * 16u + t] = (kb & 0x80000000u) != 0u ? ~kb : (kb | 0x80000000u);
        }
    }
    barrier();
    if (run) {
        [[dont_unroll]] for (uint t = lane; t < 16u; t += L) {
            uint kt = s_key[g_slot * 16u + t], rank = 0u;
            [[unroll]] for (uint u = 0u; u < 16u; u++) {
                uint ku = s_key[g_slot * 16u + u];
                rank += (ku < kt || (ku == kt && u < t)) ? 1u : 0u;
            }
            s_pos[g_slot * 16u + rank] = t;
        }
    }
    barrier();
    if (run) setup_prefix(lane);
    if (run && lane >= 3u && lane < 6u) setup_wg(lane - 3u);
    if (live && !run && lane == 0u) fb.words[b] = 1u;
    barrier();
    // this lane's share of the partitions, in table order
    float e0 = F_INF, e1 = F_INF, e3 = F_INF;
    uint i0 = 0xffffffffu, i1 = 0xffffffffu, i3 = 0xffffffffu;
    if (run) {
        // (which lane scores which entry does not matter: the merge orders by (error, entry))
        const uint n4 = head.x, n3 = FOUR_ANY ? 0u : head.y;
        [[dont_unroll]] for (uint e = lane; e < n4; e += L) {
            uint ca, cb;
            float err = cf_eval(e, true, ca, cb);
            if (err < e0) {
                e1 = e0; i1 = i0; e0 = err; i0 = e;
            } else if (err < e1) {
                e1 = err; i1 = e;
            }
        }
        [[dont_unroll]] for (uint e = n4 + lane; e < n4 + n3; e += L) {
            uint ca, cb;
            float err = cf_eval(e, false, ca, cb);
            if (err < e3) { e3 = err; i3 = e; }
        }
    }
    s_le[3u * lid] = e0; s_li[3u * lid] = i0;
    s_le[3u * lid + 1u] = e1; s_li[3u * lid + 1u] = i1;
    s_le[3u * lid + 2u] = e3; s_li[3u * lid + 2u] = i3;
    barrier();
    if (lane == 0u) {
        float b0 = F_INF, b1 = F_INF, b3 = F_INF;
        uint j0 = 0xffffffffu, j1 = 0xffffffffu, j3 = 0xffffffffu;
        if (run) {
            [[dont_unroll]] for (uint l = g_slot * L; l < g_slot * L + L; l++) {
                [[unroll]] for (uint r = 0u; r < 2u; r++) {
                    float fe = s_le[3u * l + r];
                    uint fi = s_li[3u * l + r];
                    if (before(fe, fi, b0, j0)) { b1 = b0; j1 = j0; b0 = fe; j0 = fi; }
                    else if (before(fe, fi, b1, j1)) { b1 = fe; j1 = fi; }
                }
                float te = s_le[3u * l + 2u];
                uint ti = s_li[3u * l + 2u];
                if (before(te, ti, b3, j3)) { b3 = te; j3 = ti; }
            }
        }
        // the CPU drops candidates at or above 1e29 (penalised rank-1 partitions)
        s_cv[CS(0)] = run && b0 < 1e29 ? 1u : 0u;
        s_cv[CS(1)] = run && is_max() && b1 < 1e29 ? 1u : 0u;
        s_cv[CS(2)] = run && b3 < 1e29 ? 1u : 0u;
        s_cj[CS(0)] = j0; s_cj[CS(1)] = j1; s_cj[CS(2)] = j3;
    }
    barrier();
    // invocation c < 3 owns candidate c: its endpoints, exact indices (max: refit and exact steps)
    const bool own = lane < 3u;
    const uint c = own ? lane : 0u;
    Sol s, t;
    s.c0 = 0u; s.c1 = 0u; s.idx = 0u; s.err = F_INF; s.four = false;
    t = s;
    if (own) {
        if (s_cv[CS(c)] != 0u) {
            uint ca, cb;
            cf_eval(s_cj[CS(c)], c < 2u, ca, cb);
            s = request_score(c, ca, cb, c < 2u);
        } else {
            s_on[CS(c)] = 0u;
        }
    }
    barrier();
    score_items(lane);
    barrier();
    bool act = own && s_cv[CS(c)] != 0u;
    if (act) collect_score(c, s);
    if (is_max()) {
        // refine_ls, one round
        if (own) {
            bool on = false;
            vec3 ra, rb;
            if (act && refit(s, ra, rb)) {
                uint qa = quant565(ra), qb = quant565(rb);
                if (!((qa == s.c0 && qb == s.c1) || (qa == s.c1 && qb == s.c0))) {
                    t = request_score(c, qa, qb, s.four);
                    on = true;
                }
            }
            if (!on) s_on[CS(c)] = 0u;
        }
        barrier();
        score_items(lane);
        barrier();
        if (own && s_on[CS(c)] != 0u) {
            collect_score(c, t);
            if (t.err < s.err) s = t;
        }
        // refine_exact(radius 2, 4 iterations): channel_step, then exact indices while the error falls
        [[dont_unroll]] for (uint it = 0u; it < 4u; it++) {
            if (own) {
                if (act) request_step(c, s.idx, s.c0, s.c1, s.four);
                s_on[CS(c)] = act ? 1u : 0u;
            }
            barrier();
            if (lid == 0u) s_any[(it + 1u) & 1u] = 0u;
            sum_items(lane);
            barrier();
            step_items(lane);
            barrier();
            if (own) {
                bool on = false;
                if (act) {
                    uint n0, n1;
                    if (collect_step(c, s, n0, n1)) {
                        t = request_score(c, n0, n1, s.four);
                        on = true;
                    } else {
                        act = false;
                    }
                }
                if (!on) s_on[CS(c)] = 0u;
            }
            barrier();
            score_items(lane);
            barrier();
            if (act) {
                collect_score(c, t);
                if (t.err < s.err) {
                    s = t;
                    atomicOr(s_any[it & 1u], 1u);
                } else {
                    act = false;
                }
            }
            barrier();
            if (s_any[it & 1u] == 0u) break;
        }
    }
    if (own && s_cv[CS(c)] != 0u) {
        s_se[CS(c)] = s.err; s_s0[CS(c)] = s.c0; s_s1[CS(c)] = s.c1; s_sidx[CS(c)] = s.idx;
    }
    barrier();
    if (run && lane == 0u) {
        float be = F_INF;
        uint c0 = 0u, c1 = 0u, idx = 0u;
        [[dont_unroll]] for (uint k = CS(0); k < CS(3); k++)
            if (s_cv[k] != 0u && s_se[k] < be) { be = s_se[k]; c0 = s_s0[k]; c1 = s_s1[k]; idx = s_sidx[k]; }
        // no rank-2 partition (the CPU's fast fallback), or the spread is below the error (the CPU
        // tries the exact pair of the mean): the CPU encodes the block
        bool cpu = !(be < F_INF) || s_tr[g_slot] < be;
        if (!cpu) write_colour(b, c0, c1, idx);
        fb.words[b] = cpu ? 1u : 0u;
    }
}

#version 450
// enc_bc1.comp - BC1 / BC1a / BC3-colour at fast and normal quality, kiln strategy, one invocation per
// block, with the same float operations in the same order as bc1_enc.c (`precise`, mr() products,
// correctly rounded divisions), so the bytes are identical. Fast: the lane program of bc1_enc.c's
// 16-block batch (batch_body); the blocks the batch hands to the per-block encoder (a texel below the
// alpha threshold or cut out, a flat or degenerate block) run per_block below, the CPU's per-block
// encoder (flat_solution with the single-colour tables at binding 3, encode_fast with two refits,
// mean_flat). Normal: per_block with three refits and the three-colour mode. (bc1_black changes
// nothing at fast: the CPU's batch calls its per-block encoder with kind | 4, which skips try_black;
// normal with bc1_black has no GPU encoder.) No block is given back now: the fallback mask (binding 2)
// stays all zero, the host protocol is kept.
#include "enc_bc_common.glsl"
layout(local_size_x_id = 0) in;
#include "enc_bc1.glsl"

// ALL_PER_BLOCK (specialisation constant 5; 0 by default, which changes nothing): 1 sends every block
// of fast quality through per_block, as bc1_enc.c's fast_batch does when dithering (every block to its
// per-block encoder); gpu_encode_bc.c sets it with params->dither, then enc_bc1_dither.comp re-picks
// the indices (helper gpudither).
layout(constant_id = 5) const uint ALL_PER_BLOCK = 0;

shared uint s_fb[(KILN_EBC_LOCAL + 31) / 32];
// the single-colour tables (flat_solution below)
layout(std430, binding = 3) readonly buffer FlatTab { uint words[]; } ftab;


// Least-squares endpoints for weights alpha (on c0): bc1_enc.c b_refit.
bool b_refit(float alpha[16], vec3 x[16], vec3 tot, out vec3 a, out vec3 bo)
{
    precise float sa = 0.0, saa = 0.0;
    precise vec3 sax = vec3(0.0);
    for (int t = 0; t < 16; t++) {
        sa += alpha[t];
        saa += mr(alpha[t], alpha[t]);
        sax += mr3s(x[t], alpha[t]);
    }
    precise float aa = saa, ab = sa - saa, bb = (16.0 - 2.0 * sa) + saa;
    precise float det = mr(aa, bb) - mr(ab, ab);
    bool ok = det > F_1EM3;
    float rc = fdiv_rn(1.0, ok ? det : 1.0);
    precise vec3 bx = tot - sax;
    precise vec3 u1 = mr3s(sax, bb) - mr3s(bx, ab), u2 = mr3s(bx, aa) - mr3s(sax, ab);
    vec3 ra = mr3s(u1, rc);
    vec3 rb = mr3s(u2, rc);
    a = ra;
    bo = rb;
    return ok;
}

// Exact four-colour indices and error: bc1_enc.c b_select.
float b_select(vec3 sx[16], vec3 sw, uint c0, uint c1, out uint packed)
{
    ivec3 e0 = expand565(c0), e1 = expand565(c1);
    ivec3 i2 = (2 * e0 + e1) / 3, i3 = (e0 + 2 * e1) / 3;
    precise vec3 pal[4];
    pal[0] = mr3(vec3(e0), sw);
    pal[1] = mr3(vec3(e1), sw);
    pal[2] = mr3(vec3(i2), sw);
    pal[3] = mr3(vec3(i3), sw);
    precise float err = 0.0;
    uint bits = 0u;
    for (int t = 0; t < 16; t++) {
        precise float best = 0.0;
        uint bi = 0u;
        [[unroll]] for (int e = 0; e < 4; e++) {
            precise vec3 d = sx[t] - pal[e];
            precise float dd = (mr(d.x, d.x) + mr(d.y, d.y)) + mr(d.z, d.z);
            if (e == 0) best = dd;
            else if (dd < best) { best = dd; bi = uint(e); }
        }
        err += best;
        bits |= bi << (2u * uint(t));
    }
    packed = bits;
    return err;
}

// ---------------------------------------------------------------- normal quality (bc1_enc.c encode_fast
// with three refits, per block). Sums in the CPU's vector orders: vhsum is a pairwise tree over
// neighbouring lanes, vsum8 adds lanes i and i + 8, then i and i + 4, i and i + 2, then the two left.
// Blocks the GPU does not finish (flat blocks and near-flat ones that would try the exact single-
// colour tables, equal endpoints, transparent or cut-out texels) go to the CPU.

float hsum(float v[16])
{
    precise float s1[8], s2[4];
    [[unroll]] for (int i = 0; i < 8; i++) s1[i] = v[2 * i] + v[2 * i + 1];
    [[unroll]] for (int i = 0; i < 4; i++) s2[i] = s1[2 * i] + s1[2 * i + 1];
    precise float r = (s2[0] + s2[1]) + (s2[2] + s2[3]);
    return r;
}

float sum8(float v[16])
{
    precise float u[8], w[4], x[2];
    [[unroll]] for (int i = 0; i < 8; i++) u[i] = v[i] + v[i + 8];
    [[unroll]] for (int i = 0; i < 4; i++) w[i] = u[i] + u[i + 4];
    [[unroll]] for (int i = 0; i < 2; i++) x[i] = w[i] + w[i + 2];
    precise float r = x[0] + x[1];
    return r;
}

struct Sol { uint c0, c1, idx; float err; bool four; };

// The per-block path's block state (bc1_enc.c setup; set by per_block, the defaults of an opaque block
// for the batch path): which texels count (w 0 or 1), index 3 at the transparent texels, how many count.
bool g_cnt[16] = bool[16](true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true);
uint g_tbits = 0u;
bool g_anyt = false;
float g_n = 16.0;

// bc1_enc.c select_indices: the error over the counted texels (g_cnt), index 3 at the transparent ones.
float n_select(vec3 sc[16], vec3 sw, uint c0, uint c1, bool four, out uint idx)
{
    ivec3 a = expand565(c0), bq = expand565(c1);
    ivec3 pal[4];
    pal[0] = a; pal[1] = bq;
    if (four) { pal[2] = (2 * a + bq) / 3; pal[3] = (a + 2 * bq) / 3; }
    else { pal[2] = (a + bq) / 2; pal[3] = ivec3(0); }
    precise vec3 ps[4];
    [[unroll]] for (int e = 0; e < 4; e++) ps[e] = mr3(vec3(pal[e]), sw);
    int ne = four ? 4 : 3;
    precise float best[16];
    idx = 0u;
    for (int t = 0; t < 16; t++) {
        uint bi = 0u;
        for (int e = 0; e < ne; e++) {
            precise vec3 d = sc[t] - ps[e];
            precise float dd = (mr(d.x, d.x) + mr(d.y, d.y)) + mr(d.z, d.z);
            if (e == 0) best[t] = dd;
            else if (dd < best[t]) { best[t] = dd; bi = uint(e); }
        }
        idx |= bi << (2u * uint(t));
        if (!g_cnt[t]) best[t] = 0.0; // best * w
    }
    idx = (idx & ~g_tbits) | g_tbits;
    return hsum(best);
}

void try_endpoints(vec3 sc[16], vec3 sw, uint c0, uint c1, bool four, inout Sol best)
{
    Sol s;
    s.four = four;
    if (FOUR_ANY) s.four = true;
    else if (g_anyt || c0 == c1) s.four = false;
    s.c0 = c0; s.c1 = c1;
    if (!FOUR_ANY && (s.four ? c0 < c1 : c0 > c1)) { s.c0 = c1; s.c1 = c0; }
    s.err = n_select(sc, sw, s.c0, s.c1, s.four, s.idx);
    if (s.err < best.err) best = s;
}

bool n_refit(vec3 x[16], vec3 tot, Sol s, out vec3 a, out vec3 b)
{
    // the weights and their squares as constants (fl(w) and fl(fl(w)^2), by their bits): the products
    // of the per-texel selects must not be folded or fused by the driver
    precise float wa[16], waa[16], w0[16], w1[16], w2[16];
    for (int t = 0; t < 16; t++) {
        uint i = (s.idx >> (2u * uint(t))) & 3u;
        float v, v2;
        if (s.four) {
            v = i == 0u ? 1.0 : i == 2u ? F_2_3 : i == 3u ? F_1_3 : 0.0;
            v2 = i == 0u ? 1.0 : i == 2u ? uintBitsToFloat(0x3ee38e3au) : i == 3u ? uintBitsToFloat(0x3de38e3au) : 0.0;
        } else {
            v = i == 0u ? 1.0 : i == 2u ? 0.5 : 0.0;
            v2 = i == 0u ? 1.0 : i == 2u ? 0.25 : 0.0;
        }
        if (!g_cnt[t]) { v = 0.0; v2 = 0.0; } // wa *= w
        wa[t] = v;
        waa[t] = v2;
        float p0 = mr(v, x[t].x);
        float p1 = mr(v, x[t].y);
        float p2 = mr(v, x[t].z);
        w0[t] = p0; w1[t] = p1; w2[t] = p2;
    }
    precise float sa = sum8(wa), aa = sum8(waa);
    precise vec3 ax = vec3(sum8(w0), sum8(w1), sum8(w2));
    precise float ab = sa - aa, bb = (g_n - 2.0 * sa) + aa;
    precise float det = mr(aa, bb) - mr(ab, ab);
    a = vec3(0.0); b = vec3(0.0);
    if (!(det > F_1EM3)) return false;
    float rc = fdiv_rn(1.0, det);
    precise vec3 bx = tot - ax;
    vec3 t1 = mr3s(ax, bb), t2 = mr3s(bx, ab), t3 = mr3s(bx, aa), t4 = mr3s(ax, ab);
    precise vec3 t5 = t1 - t2, t6 = t3 - t4;
    vec3 ra = mr3s(t5, rc), rb = mr3s(t6, rc);
    a = ra; b = rb;
    return true;
}

void refine_ls(vec3 x[16], vec3 sc[16], vec3 sw, vec3 tot, inout Sol s, int rounds)
{
    for (int r = 0; r < rounds; r++) {
        vec3 a, b;
        if (!n_refit(x, tot, s, a, b)) return;
        uint qa = quant565(a), qb = quant565(b);
        if ((qa == s.c0 && qb == s.c1) || (qa == s.c1 && qb == s.c0)) return;
        Sol t;
        t.err = F_INF; t.c0 = 0u; t.c1 = 0u; t.idx = 0u; t.four = s.four;
        try_endpoints(sc, sw, qa, qb, s.four, t);
        if (!(t.err < s.err)) return;
        s = t;
    }
}

// ---------------------------------------------------------------- flat blocks (bc1_enc.c flat_solution):
// the exact single-colour pairs of bc1_enc_tables.h, uploaded by the host to binding 3: three words per
// 8-bit value v, bytes near_5, near_6, match4_5 (q0, q1), match4_6 (q0, q1), match3_5 (q0, q1),
// match3_6 (q0, q1), then two zero bytes.
uint ftab_byte(int v, uint k) { return (ftab.words[uint(v) * 3u + k / 4u] >> (8u * (k % 4u))) & 255u; }
uint ftab_pair(ivec3 v, uint k5, uint k6) { return (ftab_byte(v.x, k5) << 11u) | (ftab_byte(v.y, k6) << 5u) | ftab_byte(v.z, k5); }

// The three candidate pairs of flat_solution for channel values v (an endpoint itself: the nearest
// 565 colour, alone; the four-colour 2/3 interpolant, not with transparent texels; the three-colour
// midpoint, not for BC3): returns how many, in the CPU's order.
int flat_candidates(ivec3 v, out uint c0[3], out uint c1[3], out bool four[3])
{
    int n = 0;
    c0[0] = ftab_pair(v, 0u, 1u); c1[0] = c0[0]; four[0] = false; n = 1;
    c0[1] = 0u; c1[1] = 0u; four[1] = false; c0[2] = 0u; c1[2] = 0u; four[2] = false;
    if (!g_anyt) { c0[n] = ftab_pair(v, 2u, 4u); c1[n] = ftab_pair(v, 3u, 5u); four[n] = true; n++; }
    if (!FOUR_ANY) { c0[n] = ftab_pair(v, 6u, 8u); c1[n] = ftab_pair(v, 7u, 9u); four[n] = false; n++; }
    return n;
}

// The CPU's per-block encoder (bc1_enc.c encode_body for one block: flat_solution, or encode_fast with
// 2 refits at fast, 3 refits and the three-colour mode at normal, then mean_flat for (near-)flat
// results).
// Every candidate pair runs through one loop (a try_endpoints + refine_ls call site, not unrolled)
// to keep the pipeline small: starting pairs first (each refined, the better kept), then the
// single-colour pairs (flat blocks, or a near-flat result: the mean's), which is the CPU's order.
void per_block(uint b, bool fast)
{
    const vec3 sw = chan_sw(), cw = chan_w();
    const uint thr = pc.flags & 255u;
    const bool cutout = (pc.flags & 512u) != 0u;
    vec3 x[16], sc[16];
    int n = 0, first = -1;
    g_tbits = 0u;
    g_anyt = false;
    for (uint t = 0u; t < 16u; t++) {
        uint a8;
        load_texel(b, t, x[t], a8);
        sc[t] = mr3(x[t], sw);
        g_cnt[t] = true;
        if (PUNCH && a8 < thr) {
            g_tbits |= 3u << (2u * t);
            g_anyt = true;
            g_cnt[t] = false;
        }
        if (cutout && a8 == 0u) g_cnt[t] = false;
        if (g_cnt[t]) {
            if (first < 0) first = int(t);
            n++;
        }
    }
    g_n = float(n);
    Sol best;
    best.err = F_INF; best.c0 = 0u; best.c1 = 0u; best.idx = 0u; best.four = false;
    uint cc0[3], cc1[3];
    bool cfour[3];
    int crounds = 0, nc = 0;
    cc0[0] = 0u; cc1[0] = 0u; cfour[0] = false; cc0[1] = 0u; cc1[1] = 0u; cfour[1] = false;
    cc0[2] = 0u; cc1[2] = 0u; cfour[2] = false;
    bool is_flt = false, general = false;
    ivec3 tv = ivec3(0);
    precise float tr = 0.0;
    precise vec3 tot = vec3(0.0);
    if (n == 0) {
        nc = 1; // nothing counts: black, transparent texels at index 3
    } else {
        bool is_flat_blk = true;
        for (int t = 0; t < 16; t++)
            if (g_cnt[t] && x[t] != x[first]) is_flat_blk = false;
        [[unroll]] for (int ch = 0; ch < 3; ch++) {
            precise float h = x[first][ch] + 0.5;
            tv[ch] = int(h);
        }
        is_flt = is_flat_blk && x[first] == vec3(tv);
        general = !is_flt;
    }
    const int rounds = fast ? 2 : 3;
    vec3 m = vec3(0.0);
    if (general) {
        float r[16], g[16], bl[16];
        for (int t = 0; t < 16; t++) {
            r[t] = g_cnt[t] ? x[t].x : 0.0; g[t] = g_cnt[t] ? x[t].y : 0.0; bl[t] = g_cnt[t] ? x[t].z : 0.0;
        }
        tot = vec3(hsum(r), hsum(g), hsum(bl));
        const float inv = n == 16 ? 0.0625 : fdiv_rn(1.0, float(n));
        m = mr3s(tot, inv);
        float q00[16], q01[16], q02[16], q11[16], q12[16], q22[16];
        for (int t = 0; t < 16; t++) {
            precise vec3 d = x[t] - m;
            if (!g_cnt[t]) d = vec3(0.0);
            float e00 = mr(d.x, d.x), e01 = mr(d.x, d.y), e02 = mr(d.x, d.z), e11 = mr(d.y, d.y), e12 = mr(d.y, d.z), e22 = mr(d.z, d.z);
            q00[t] = e00; q01[t] = e01; q02[t] = e02; q11[t] = e11; q12[t] = e12; q22[t] = e22;
        }
        precise float s01 = sw.x * sw.y, s02 = sw.x * sw.z, s12 = sw.y * sw.z;
        float c00 = mr(sum8(q00), cw.x), c01 = mr(sum8(q01), s01), c02 = mr(sum8(q02), s02);
        float c11 = mr(sum8(q11), cw.y), c12 = mr(sum8(q12), s12), c22 = mr(sum8(q22), cw.z);
        tr = (c00 + c11) + c22;
        bool r0 = c00 >= c11 && c00 >= c22, r1 = !r0 && c11 >= c22;
        precise float v0 = r0 ? c00 : r1 ? c01 : c02, v1 = r0 ? c01 : r1 ? c11 : c12, v2 = r0 ? c02 : r1 ? c12 : c22;
        for (int it = 0; it < 2; it++) {
            precise float w0 = (mr(c00, v0) + mr(c01, v1)) + mr(c02, v2);
            precise float w1 = (mr(c01, v0) + mr(c11, v1)) + mr(c12, v2);
            precise float w2 = (mr(c02, v0) + mr(c12, v1)) + mr(c22, v2);
            v0 = w0; v1 = w1; v2 = w2;
        }
        float mx = abs(v0) > abs(v1) ? abs(v0) : abs(v1);
        mx = abs(v2) > mx ? abs(v2) : mx;
        precise vec3 axis;
        if (!(tr > 0.0) || !(mx > 1e-30) || !(mx < 1e30)) {
            axis = vec3(1.0);
        } else {
            float rm = fdiv_rn(1.0, mx);
            float a0 = mr(v0, rm), a1 = mr(v1, rm), a2 = mr(v2, rm);
            axis = vec3(mr(a0, sw.x), mr(a1, sw.y), mr(a2, sw.z));
        }
        precise float p[16];
        float pmin = F_INF, pmax = -F_INF;
        for (int t = 0; t < 16; t++) {
            p[t] = (mr(x[t].x, axis.x) + mr(x[t].y, axis.y)) + mr(x[t].z, axis.z);
            if (g_cnt[t]) {
                pmin = min(pmin, p[t]);
                pmax = max(pmax, p[t]);
            }
        }
        int lo = 0, hi = 0;
        for (int t = 15; t >= 0; t--) {
            if (g_cnt[t] && p[t] == pmin) lo = t;
            if (g_cnt[t] && p[t] == pmax) hi = t;
        }
        uint ehi = quant565(x[hi]), elo = quant565(x[lo]);
        // starting pairs: at fast (no transparency) the refit of the indices by projection onto the
        // extremes, refined rounds - 1 times, else the extremes (four-colour unless transparent),
        // refined; at normal also the extremes in three-colour mode
        cc0[0] = ehi; cc1[0] = elo; cfour[0] = !g_anyt; crounds = rounds; nc = 1;
        if (fast && !g_anyt) {
            precise float span = pmax - pmin;
            if (span > 0.0) {
                float k3 = fdiv_rn(3.0, span);
                Sol s;
                s.err = F_INF; s.c0 = 0u; s.c1 = 0u; s.four = true; s.idx = 0u;
                for (int t = 0; t < 16; t++) {
                    float tq = mr(p[t] - pmin, k3);
                    uint iv = tq < 0.5 ? 1u : tq < 1.5 ? 3u : tq < 2.5 ? 2u : 0u;
                    s.idx |= iv << (2u * uint(t));
                }
                vec3 a, bq;
                if (n_refit(x, tot, s, a, bq)) {
                    cc0[0] = quant565(a); cc1[0] = quant565(bq); cfour[0] = true; crounds = rounds - 1;
                }
            }
        }
        if (!fast && !g_anyt && !FOUR_ANY) { cc0[1] = ehi; cc1[1] = elo; cfour[1] = false; nc = 2; }
    }
    // phase 0: the starting pairs (refined); phase 1: the single-colour pairs of a flat block, or of
    // the mean of a near-flat result
    [[dont_unroll]] for (int ph = 0; ph < 2; ph++) {
        if (ph == 1) {
            if (general && (best.c0 == best.c1 || (!fast && tr < 2.0 * best.err))) {
                [[unroll]] for (int ch = 0; ch < 3; ch++) {
                    float c = m[ch] < 0.0 ? 0.0 : m[ch] > 255.0 ? 255.0 : m[ch];
                    precise float h = c + 0.5;
                    tv[ch] = int(h);
                }
            } else if (!is_flt) {
                break;
            }
            nc = flat_candidates(tv, cc0, cc1, cfour);
            crounds = 0;
        } else if (is_flt) {
            continue;
        }
        [[dont_unroll]] for (int k = 0; k < nc; k++) {
            Sol s;
            s.err = F_INF; s.c0 = 0u; s.c1 = 0u; s.idx = 0u; s.four = false;
            try_endpoints(sc, sw, cc0[k], cc1[k], cfour[k], s);
            refine_ls(x, sc, sw, tot, s, crounds);
            if (s.err < best.err) best = s;
        }
    }
    write_colour(b, best.c0, best.c1, best.idx);
}

void main()
{
    uint lid = gl_LocalInvocationID.x;
    if (lid < (KILN_EBC_LOCAL + 31) / 32) s_fb[lid] = 0u;
    barrier();
    uint b = group_linear() * KILN_EBC_LOCAL + lid;
    uint nblocks = pc.blocks_x * pc.blocks_y;
    bool pb = b < nblocks && (QUALITY == Q_NORMAL || ALL_PER_BLOCK != 0u); // the per-block path (one call site: a small pipeline)
    if (b < nblocks && QUALITY != Q_NORMAL && ALL_PER_BLOCK == 0u) {
        const vec3 sw = chan_sw(), cw = chan_w();
        const uint thr = pc.flags & 255u;
        const bool cutout = (pc.flags & 512u) != 0u;
        vec3 x[16], sx[16];
        bool eligible = true;
        for (uint t = 0u; t < 16u; t++) {
            uint a8;
            load_texel(b, t, x[t], a8);
            sx[t] = mr3(x[t], sw);
            if ((PUNCH && a8 < thr) || (cutout && a8 == 0u)) eligible = false;
        }
        precise vec3 tot = vec3(0.0);
        for (int t = 0; t < 16; t++) tot += x[t];
        precise vec3 m = tot * 0.0625;
        precise float c00 = 0.0, c01 = 0.0, c02 = 0.0, c11 = 0.0, c12 = 0.0, c22 = 0.0;
        for (int t = 0; t < 16; t++) {
            precise vec3 d = x[t] - m;
            c00 += mr(d.x, d.x);
            c01 += mr(d.x, d.y);
            c02 += mr(d.x, d.z);
            c11 += mr(d.y, d.y);
            c12 += mr(d.y, d.z);
            c22 += mr(d.z, d.z);
        }
        precise float s01 = sw.x * sw.y, s02 = sw.x * sw.z, s12 = sw.y * sw.z;
        c00 = mr(c00, cw.x);
        c01 = mr(c01, s01);
        c02 = mr(c02, s02);
        c11 = mr(c11, cw.y);
        c12 = mr(c12, s12);
        c22 = mr(c22, cw.z);
        precise float trc = (c00 + c11) + c22;
        bool ok = trc > 0.0;
        bool r0 = c00 >= c11 && c00 >= c22, r1 = !r0 && c11 >= c22;
        precise float v0 = r0 ? c00 : r1 ? c01 : c02, v1 = r0 ? c01 : r1 ? c11 : c12, v2 = r0 ? c02 : r1 ? c12 : c22;
        for (int it = 0; it < 2; it++) {
            precise float w0 = (mr(c00, v0) + mr(c01, v1)) + mr(c02, v2);
            precise float w1 = (mr(c01, v0) + mr(c11, v1)) + mr(c12, v2);
            precise float w2 = (mr(c02, v0) + mr(c12, v1)) + mr(c22, v2);
            v0 = w0;
            v1 = w1;
            v2 = w2;
        }
        float ax0 = mr(v0, sw.x), ax1 = mr(v1, sw.y), ax2 = mr(v2, sw.z);
        precise float p[16];
        precise float plo = F_INF, phi = -F_INF;
        for (int t = 0; t < 16; t++) {
            p[t] = (mr(x[t].x, ax0) + mr(x[t].y, ax1)) + mr(x[t].z, ax2);
            plo = p[t] < plo ? p[t] : plo;
            phi = p[t] > phi ? p[t] : phi;
        }
        precise float span = phi - plo;
        ok = ok && span > 0.0;
        float sc = fdiv_rn(3.0, ok ? span : 1.0);
        float alpha[16];
        for (int t = 0; t < 16; t++) {
            float tq = mr(p[t] - plo, sc);
            alpha[t] = tq < 0.5 ? 0.0 : tq < 1.5 ? F_1_3 : tq < 2.5 ? F_2_3 : 1.0;
        }
        vec3 a, bb;
        ok = b_refit(alpha, x, tot, a, bb) && ok;
        uint q0 = quant565(a), q1 = quant565(bb);
        if (!FOUR_ANY) {
            ok = ok && q0 != q1;
            if (q0 < q1) { uint t = q0; q0 = q1; q1 = t; }
        }
        uint idx;
        float err = b_select(sx, sw, q0, q1, idx);
        for (int t = 0; t < 16; t++) {
            uint i = (idx >> (2u * uint(t))) & 3u;
            alpha[t] = i == 0u ? 1.0 : i == 2u ? F_2_3 : i == 3u ? F_1_3 : 0.0;
        }
        bool ok2 = b_refit(alpha, x, tot, a, bb);
        uint n0 = quant565(a), n1 = quant565(bb);
        ok2 = ok2 && !((n0 == q0 && n1 == q1) || (n0 == q1 && n1 == q0));
        if (!FOUR_ANY) {
            ok2 = ok2 && n0 != n1;
            if (n0 < n1) { uint t = n0; n0 = n1; n1 = t; }
        }
        if (ok && ok2) {
            uint idx2;
            float err2 = b_select(sx, sw, n0, n1, idx2);
            if (err2 < err) { q0 = n0; q1 = n1; idx = idx2; }
        }
        if (ok && eligible) write_colour(b, q0, q1, idx);
        else pb = true;
    }
    if (pb) per_block(b, QUALITY != Q_NORMAL);
    barrier();
    uint first = group_linear() * KILN_EBC_LOCAL;
    if (lid < (KILN_EBC_LOCAL + 31) / 32 && first + lid * 32u < nblocks) fb.words[first / 32u + lid] = s_fb[lid];
}

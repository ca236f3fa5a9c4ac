#version 450
// enc_bc1_cf.comp - BC1 / BC1a / BC3-colour at high and max quality, kiln strategy: bc1_enc.c's
// encode_cluster with the same float operations in the same order (`precise`, mr() products,
// correctly rounded divisions), one invocation per block: principal axis (as enc_bc1.comp's normal
// path), texels ranked along it (key bits, ties by texel index: the CPU's stable sort), prefix sums
// in grid units, every valid 4- and 3-cluster partition scored from the CPU's own factor tables
// (enc_bc1_cf_tables.glsl, generated from bc1_enc_tables.h), the first smallest error in table order
// (max: the two best four-colour ones, earlier entries first on ties), exact indices for each; max
// then refines each by one least-squares refit and the alternating exact +-2 endpoint / index steps.
// Blocks the CPU routes elsewhere go to the host through the fallback mask: flat blocks, transparent
// or cut-out texels (fewer than 16 counted texels: cf_small), blocks with no rank-2 partition, and
// blocks whose spread is below the error (they try the exact single-colour pair of the mean).
#include "enc_bc_common.glsl"
layout(local_size_x_id = 0) in;
#include "enc_bc1.glsl"
#include "enc_bc1_cf_tables.glsl"

shared uint s_fb[(KILN_EBC_LOCAL + 31) / 32];

// Sums in the CPU's vector orders (see enc_bc1.comp).
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

// bc1_enc.c select_indices (all 16 texels count).
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
    }
    return hsum(best);
}

void try_endpoints(vec3 sc[16], vec3 sw, uint c0, uint c1, bool four, inout Sol best)
{
    Sol s;
    s.four = four;
    if (FOUR_ANY) s.four = true;
    else if (c0 == c1) s.four = false;
    s.c0 = c0; s.c1 = c1;
    if (!FOUR_ANY && (s.four ? c0 < c1 : c0 > c1)) { s.c0 = c1; s.c1 = c0; }
    s.err = n_select(sc, sw, s.c0, s.c1, s.four, s.idx);
    if (s.err < best.err) best = s;
}

bool n_refit(vec3 x[16], vec3 tot, Sol s, out vec3 a, out vec3 b)
{
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
        wa[t] = v;
        waa[t] = v2;
        float p0 = mr(v, x[t].x);
        float p1 = mr(v, x[t].y);
        float p2 = mr(v, x[t].z);
        w0[t] = p0; w1[t] = p1; w2[t] = p2;
    }
    precise float sa = sum8(wa), aa = sum8(waa);
    precise vec3 ax = vec3(sum8(w0), sum8(w1), sum8(w2));
    precise float ab = sa - aa, bb = (16.0 - 2.0 * sa) + aa;
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

// Round to nearest even (|x| < 2^22) as the CPU's vround: (x + 1.5 * 2^23) - 1.5 * 2^23.
float vround(float x) { return roundEven(x); }

// bc1_enc.c channel_step with radius 2 (25 pairs per channel, first best in window order).
bool channel_step(vec3 x[16], inout Sol s)
{
    precise float fcnt[4];
    precise vec3 fsum[4];
    for (int i = 0; i < 4; i++) {
        float c[16], cr[16], cg[16], cb[16];
        for (int t = 0; t < 16; t++) {
            bool on = ((s.idx >> (2u * uint(t))) & 3u) == uint(i);
            c[t] = on ? 1.0 : 0.0;
            cr[t] = on ? x[t].x : 0.0;
            cg[t] = on ? x[t].y : 0.0;
            cb[t] = on ? x[t].z : 0.0;
        }
        fcnt[i] = hsum(c);
        fsum[i] = vec3(hsum(cr), hsum(cg), hsum(cb));
    }
    ivec3 q0 = unpack565(s.c0), q1 = unpack565(s.c1), n0 = q0, n1 = q1;
    bool changed = false;
    for (int ch = 0; ch < 3; ch++) {
        float top = ch == 1 ? 63.0 : 31.0;
        float best = F_INF;
        int bl = -1;
        float fs0 = fsum[0][ch], fs1 = fsum[1][ch], fs2 = fsum[2][ch], fs3 = fsum[3][ch];
        for (int l = 0; l < 25; l++) {
            int da = l / 5, db = l % 5;
            float qa = float(q0[ch] + da - 2), qb = float(q1[ch] + db - 2);
            bool ok = qa >= 0.0 && qa <= top && qb >= 0.0 && qb <= top;
            precise float ea, eb;
            if (ch == 1) {
                ea = qa * 4.0 + vround(qa * 0.0625 - 0.46875);
                eb = qb * 4.0 + vround(qb * 0.0625 - 0.46875);
            } else {
                ea = qa * 8.0 + vround(qa * 0.25 - 0.375);
                eb = qb * 8.0 + vround(qb * 0.25 - 0.375);
            }
            precise float p2, p3;
            if (s.four) {
                precise float u2 = mr(ea + ea + eb, F_1_3) - uintBitsToFloat(0x3eaa9931u);
                precise float u3 = mr(ea + eb + eb, F_1_3) - uintBitsToFloat(0x3eaa9931u);
                p2 = vround(u2);
                p3 = vround(u3);
            } else {
                precise float u2 = (ea + eb) * 0.5 - 0.25;
                p2 = vround(u2);
                p3 = 0.0;
            }
            precise float g0 = mr(fcnt[0], ea) - 2.0 * fs0, g1 = mr(fcnt[1], eb) - 2.0 * fs1;
            precise float g2 = mr(fcnt[2], p2) - 2.0 * fs2, g3 = mr(fcnt[3], p3) - 2.0 * fs3;
            precise float e = ((mr(ea, g0) + mr(eb, g1)) + mr(p2, g2)) + mr(p3, g3);
            if (!ok) e = F_INF;
            if (e < best) { best = e; bl = l; }
        }
        if (bl >= 0) {
            n0[ch] = q0[ch] + bl / 5 - 2;
            n1[ch] = q1[ch] + bl % 5 - 2;
        }
        if (n0[ch] != q0[ch] || n1[ch] != q1[ch]) changed = true;
    }
    if (!changed) return false;
    s.c0 = (uint(n0.x) << 11u) | (uint(n0.y) << 5u) | uint(n0.z);
    s.c1 = (uint(n1.x) << 11u) | (uint(n1.y) << 5u) | uint(n1.z);
    return true;
}

void refine_exact(vec3 x[16], vec3 sc[16], vec3 sw, inout Sol s)
{
    for (int it = 0; it < 4; it++) {
        Sol t = s;
        if (!channel_step(x, t)) return;
        Sol n;
        n.err = F_INF; n.c0 = 0u; n.c1 = 0u; n.idx = 0u; n.four = t.four;
        try_endpoints(sc, sw, t.c0, t.c1, t.four, n);
        if (!(n.err < s.err)) return;
        s = n;
    }
}

// The partition factors of entry e (CF4 when four) and its 565 endpoints and search error.
void cf_entry(bool four, int e, vec3 p3[17], vec3 p2[17], vec3 gtot, vec3 wg, out float err, out uint ca, out uint cb)
{
    uint base = uint(e) * 8u;
    float Ah, Bh, C, f1, f2, f3, f4, pen;
    precise vec3 ax;
    if (four) {
        Ah = uintBitsToFloat(CF4_F[base]); Bh = uintBitsToFloat(CF4_F[base + 1u]); C = uintBitsToFloat(CF4_F[base + 2u]);
        f1 = uintBitsToFloat(CF4_F[base + 3u]); f2 = uintBitsToFloat(CF4_F[base + 4u]);
        f3 = uintBitsToFloat(CF4_F[base + 5u]); f4 = uintBitsToFloat(CF4_F[base + 6u]); pen = uintBitsToFloat(CF4_F[base + 7u]);
        uint ix = CF4_IX[e];
        int i = int(ix & 255u), j = int((ix >> 8u) & 255u), k = int(ix >> 16u);
        ax = (p3[j] + p3[k]) + p3[i];
    } else {
        Ah = uintBitsToFloat(CF3_F[base]); Bh = uintBitsToFloat(CF3_F[base + 1u]); C = uintBitsToFloat(CF3_F[base + 2u]);
        f1 = uintBitsToFloat(CF3_F[base + 3u]); f2 = uintBitsToFloat(CF3_F[base + 4u]);
        f3 = uintBitsToFloat(CF3_F[base + 5u]); f4 = uintBitsToFloat(CF3_F[base + 6u]); pen = uintBitsToFloat(CF3_F[base + 7u]);
        uint ix = CF3_IX[e];
        int i = int(ix & 255u), j = int((ix >> 8u) & 255u);
        ax = p2[i] + p2[j];
    }
    precise vec3 ev;
    ivec3 qa, qb;
    for (int ch = 0; ch < 3; ch++) {
        float top = ch == 1 ? 63.0 : 31.0;
        precise float ua = mr(ax[ch], f1) - mr(gtot[ch], f2);
        precise float ub = mr(gtot[ch], f3) - mr(ax[ch], f4);
        ua = ua > 0.0 ? ua : 0.0;
        ua = ua < top ? ua : top;
        ub = ub > 0.0 ? ub : 0.0;
        ub = ub < top ? ub : top;
        float a = roundEven(ua), b = roundEven(ub);
        precise float in1 = (mr(a, Ah) + mr(b, C)) - ax[ch];
        precise float in2 = mr(b, Bh) - (gtot[ch] - ax[ch]);
        ev[ch] = mr(a, in1) + mr(b, in2);
        qa[ch] = int(a);
        qb[ch] = int(b);
    }
    precise float es = (mr(wg.x, ev.x) + mr(wg.y, ev.y)) + mr(wg.z, ev.z);
    err = pen + es;
    ca = (uint(qa.x) << 11u) | (uint(qa.y) << 5u) | uint(qa.z);
    cb = (uint(qb.x) << 11u) | (uint(qb.y) << 5u) | uint(qb.z);
}

// Returns false when the block must go to the CPU.
bool cluster_block(uint b)
{
    const vec3 sw = chan_sw(), cw = chan_w();
    const uint thr = pc.flags & 255u;
    const bool cutout = (pc.flags & 512u) != 0u;
    vec3 x[16], sc[16];
    bool is_flat_blk = true;
    for (uint t = 0u; t < 16u; t++) {
        uint a8;
        load_texel(b, t, x[t], a8);
        sc[t] = mr3(x[t], sw);
        if ((PUNCH && a8 < thr) || (cutout && a8 == 0u)) return false;
        if (x[t] != x[0]) is_flat_blk = false;
    }
    if (is_flat_blk) return false;
    // principal axis (bc1_enc.c principal_axis)
    float r[16], g[16], bl[16];
    for (int t = 0; t < 16; t++) { r[t] = x[t].x; g[t] = x[t].y; bl[t] = x[t].z; }
    precise vec3 tot = vec3(hsum(r), hsum(g), hsum(bl));
    precise vec3 m = tot * 0.0625;
    float q00[16], q01[16], q02[16], q11[16], q12[16], q22[16];
    for (int t = 0; t < 16; t++) {
        precise vec3 d = x[t] - m;
        float e00 = mr(d.x, d.x), e01 = mr(d.x, d.y), e02 = mr(d.x, d.z), e11 = mr(d.y, d.y), e12 = mr(d.y, d.z), e22 = mr(d.z, d.z);
        q00[t] = e00; q01[t] = e01; q02[t] = e02; q11[t] = e11; q12[t] = e12; q22[t] = e22;
    }
    precise float s01 = sw.x * sw.y, s02 = sw.x * sw.z, s12 = sw.y * sw.z;
    float c00 = mr(sum8(q00), cw.x), c01 = mr(sum8(q01), s01), c02 = mr(sum8(q02), s02);
    float c11 = mr(sum8(q11), cw.y), c12 = mr(sum8(q12), s12), c22 = mr(sum8(q22), cw.z);
    precise float tr = (c00 + c11) + c22;
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
    // texel order along the axis (bc1_enc.c cf_sort: sortable key bits, ties by texel index)
    uint key[16];
    for (int t = 0; t < 16; t++) {
        precise float f = ((mr(x[t].x, axis.x) + mr(x[t].y, axis.y)) + mr(x[t].z, axis.z)) + 0.0;
        uint kb = floatBitsToUint(f);
        key[t] = (kb & 0x80000000u) != 0u ? ~kb : (kb | 0x80000000u);
    }
    vec3 xs[16];
    for (int t = 0; t < 16; t++) {
        int rank = 0;
        for (int u = 0; u < 16; u++) rank += (key[u] < key[t] || (key[u] == key[t] && u < t)) ? 1 : 0;
        xs[rank] = x[t];
    }
    // prefix sums in grid units
    const vec3 grid = vec3(F_31_255, F_63_255, F_31_255);
    vec3 p3[17], p2[17];
    precise vec3 pre = vec3(0.0);
    for (int i = 0; i <= 16; i++) {
        if (i > 0) pre = pre + xs[i - 1];
        vec3 pg = mr3(pre, grid);
        p3[i] = mr3s(pg, F_1_3);
        p2[i] = pg * 0.5;
    }
    vec3 gtot = mr3(pre, grid);
    vec3 g2 = mr3(grid, grid);
    vec3 wg = vec3(fdiv_rn(cw.x, g2.x), fdiv_rn(cw.y, g2.y), fdiv_rn(cw.z, g2.z));

    const bool is_max = QUALITY == Q_MAX;
    Sol best;
    best.err = F_INF; best.c0 = 0u; best.c1 = 0u; best.idx = 0u; best.four = false;
    // four-colour partitions: the first smallest error (max: the two smallest, earlier first on ties)
    float e0 = F_INF, e1 = F_INF;
    uint a0 = 0u, b0 = 0u, a1 = 0u, b1 = 0u;
    int cnt = 0;
    for (int e = 0; e < CF4_N; e++) {
        float err;
        uint ca, cb;
        cf_entry(true, e, p3, p2, gtot, wg, err, ca, cb);
        if (!(err < 1e29)) continue;
        if (err < e0) {
            e1 = e0; a1 = a0; b1 = b0;
            e0 = err; a0 = ca; b0 = cb;
            cnt++;
        } else if (err < e1) {
            e1 = err; a1 = ca; b1 = cb;
            cnt++;
        }
    }
    int ncand = min(cnt, is_max ? 2 : 1);
    for (int c = 0; c < ncand; c++) {
        Sol s;
        s.err = F_INF; s.c0 = 0u; s.c1 = 0u; s.idx = 0u; s.four = true;
        try_endpoints(sc, sw, c == 0 ? a0 : a1, c == 0 ? b0 : b1, true, s);
        if (is_max) {
            refine_ls(x, sc, sw, tot, s, 1);
            refine_exact(x, sc, sw, s);
        }
        if (s.err < best.err) best = s;
    }
    if (!FOUR_ANY) {
        float be = F_INF;
        uint ba = 0u, bb = 0u;
        for (int e = 0; e < CF3_N; e++) {
            float err;
            uint ca, cb;
            cf_entry(false, e, p3, p2, gtot, wg, err, ca, cb);
            if (err < be) { be = err; ba = ca; bb = cb; }
        }
        if (be < 1e29) {
            Sol s;
            s.err = F_INF; s.c0 = 0u; s.c1 = 0u; s.idx = 0u; s.four = false;
            try_endpoints(sc, sw, ba, bb, false, s);
            if (is_max) {
                refine_ls(x, sc, sw, tot, s, 1);
                refine_exact(x, sc, sw, s);
            }
            if (s.err < best.err) best = s;
        }
    }
    if (!(best.err < F_INF)) return false; // no rank-2 partition: the CPU's fallback
    if (tr < best.err) return false;       // the CPU tries the exact pair of the mean
    write_colour(b, best.c0, best.c1, best.idx);
    return true;
}

void main()
{
    uint lid = gl_LocalInvocationID.x;
    if (lid < (KILN_EBC_LOCAL + 31) / 32) s_fb[lid] = 0u;
    barrier();
    uint b = group_linear() * KILN_EBC_LOCAL + lid;
    uint nblocks = pc.blocks_x * pc.blocks_y;
    if (b < nblocks && !cluster_block(b)) atomicOr(s_fb[lid / 32u], 1u << (lid % 32u));
    barrier();
    uint first = group_linear() * KILN_EBC_LOCAL;
    if (lid < (KILN_EBC_LOCAL + 31) / 32 && first + lid * 32u < nblocks) fb.words[first / 32u + lid] = s_fb[lid];
}

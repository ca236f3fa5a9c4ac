#version 450
// enc_bc4_max.comp - BC4 / BC5 / BC3-alpha channels at max quality, kiln strategy: one invocation per
// channel task (a workgroup holds local_size tasks, so no invocation waits on another), the same
// result as bc4_enc.c's exhaustive branch-and-bound, byte for byte.
//
// 1. The high-quality heuristic of enc_bc4.glsl (bc4_enc.c heuristic()) gives the error H and pair
//    (ha, hb); H = 0 ends the task (the CPU does not search then either).
// 2. Exhaustive search of both modes by a quadtree over the endpoint plane: a cell is a range
//    [l1, l2] of the low endpoint times a range [h1, h2] of the high one (eight-value mode: the pairs
//    a = hi > b = lo; six-value mode: a = lo <= b = hi), clipped to the pairs that exist. Every palette
//    entry is a non-decreasing function of both endpoints (the D3D10 ramps truncate toward zero, which
//    is monotonic), so over the cell entry i stays inside [p_i(l1, h1), p_i(l2, h2)], and a texel x is
//    at least its squared distance to the nearest of these eight intervals from any palette of the
//    cell. Their sum is a lower bound of every pair's error in the cell; for a cell of one pair it is
//    that pair's error itself. With it, bc4_enc.c's spacing bound for the cell's smallest span (at most
//    K palette entries can serve the texels, and no K levels beat the optimal K-level quantisation of
//    the values). A cell is dropped when its bound reaches L = min(H, E + 1), E being the
//    best error found so far; otherwise its four quarters are visited (depth first, without a stack:
//    the cell's corner and level say where to go next). Dropped pairs have error >= H (cannot beat the
//    heuristic, which the CPU replaces only on a strict improvement) or > E (cannot be a first minimum),
//    so nothing that the CPU could pick is skipped; ties at the best error are kept and resolved by the
//    CPU's scan order: key = mode << 16 | lo << 8 | hi (eight-value pairs by (lo, hi), then six-value
//    pairs), lowest key first. The sum over the texels (distinct values with counts, the extremes
//    first) stops once it reaches L.
// 3. The best pair found (it is strictly below H), else the heuristic's, is packed.
// The first design (a workgroup per task, the CPU's lo-by-lo scan) is enc_bc4_max_v1.comp.
#include "enc_bc_common.glsl"
layout(local_size_x_id = 0) in;
#include "enc_bc4.glsl"

// Lower bound (stops at lim) of the error of every pair in the clipped cell [l1, l2] x [h1, h2].
uint cell_bound(bool eight, int l1, int l2, int h1, int h2, int ev[16], int ec[16], int n, uint lim)
{
    int pmin[8], pmax[8];
    if (eight) {
        pmin[0] = h1; pmax[0] = h2;
        pmin[1] = l1; pmax[1] = l2;
        [[unroll]] for (int i = 2; i < 8; i++) {
            pmin[i] = tdiv((8 - i) * h1 + (i - 1) * l1, 7);
            pmax[i] = tdiv((8 - i) * h2 + (i - 1) * l2, 7);
        }
    } else {
        pmin[0] = l1; pmax[0] = l2;
        pmin[1] = h1; pmax[1] = h2;
        [[unroll]] for (int i = 2; i < 6; i++) {
            pmin[i] = tdiv((6 - i) * l1 + (i - 1) * h1, 5);
            pmax[i] = tdiv((6 - i) * l2 + (i - 1) * h2, 5);
        }
        pmin[6] = R_LO; pmax[6] = R_LO;
        pmin[7] = R_HI; pmax[7] = R_HI;
    }
    uint s = 0u;
    [[unroll]] for (int k = 0; k < 16; k++) {
        if (k >= n || s >= lim) break;
        // distance to the nearest interval: max(min_i max(pmin_i - x, x - pmax_i), 0)
        int x = ev[k];
        int d = max(pmin[0] - x, x - pmax[0]);
        [[unroll]] for (int i = 1; i < 8; i++) d = min(d, max(pmin[i] - x, x - pmax[i]));
        d = max(d, 0);
        s += uint(d * d * ec[k]);
    }
    return s;
}

void main()
{
    uint task = group_linear() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    uint nblocks = pc.blocks_x * pc.blocks_y;
    if (task >= nblocks * TASK_CHANNELS) return;
    uint b = task / TASK_CHANNELS, ch = task % TASK_CHANNELS;
    int v[16];
    for (uint t = 0u; t < 16u; t++) v[t] = bc4_value(b, t, ch);
    Best h = heuristic(v, Q_HIGH);
    const uint H = h.err;
    uint ef = 0xffffffffu, bkey = 0xffffffffu;
    if (H > 0u) {
        // distinct values with counts, in the order max, min, then alternately inwards
        int s[16];
        for (int t = 0; t < 16; t++) s[t] = v[t];
        for (int i = 1; i < 16; i++) {
            int x = s[i], j = i - 1;
            while (j >= 0 && s[j] > x) { s[j + 1] = s[j]; j--; }
            s[j + 1] = x;
        }
        int dv[16], dc[16];
        int n = 0;
        for (int i = 0; i < 16; i++) {
            if (n > 0 && dv[n - 1] == s[i]) dc[n - 1]++;
            else { dv[n] = s[i]; dc[n] = 1; n++; }
        }
        // (written with constant indices, so that ev and ec can stay in registers)
        int ev[16], ec[16];
        [[unroll]] for (int k = 0; k < 16; k++) {
            int j = clamp((k & 1) == 0 ? n - 1 - (k >> 1) : (k >> 1), 0, 15);
            ev[k] = k < n ? dv[j] : 0;
            ec[k] = k < n ? dc[j] : 0;
        }
        // Spacing bound (bc4_enc.c): emin[k] <= the smallest error of any k real levels (optimal 1-D
        // k-means over the sorted values, dynamic programming over contiguous groups). A group's cost
        // is N / c with the integer N = c * sum(x^2) - sum(x)^2 (exact: < 2^24); the float sums are
        // scaled by 1 - 2^-12, far more than their rounding (a few 2^-24 relative), so emin stays a
        // lower bound. Compared as emin > lim - 1 (errors are integers).
        float emin[9];
        {
            int pcn[17], psum[17], psq[17];
            pcn[0] = 0; psum[0] = 0; psq[0] = 0;
            for (int i = 0; i < n; i++) {
                pcn[i + 1] = pcn[i] + dc[i];
                psum[i + 1] = psum[i] + dc[i] * dv[i];
                psq[i + 1] = psq[i] + dc[i] * dv[i] * dv[i];
            }
            float e[17];
            for (int j = 1; j <= n; j++) {
                int c = pcn[j], sx = psum[j];
                e[j] = float(c * psq[j] - sx * sx) / float(c);
            }
            emin[0] = F_INF;
            emin[1] = e[n];
            for (int k = 2; k <= 8; k++) {
                // in place from the right: e[j] for k levels needs e[i < j] for k - 1 levels
                for (int j = n; j >= 1; j--) {
                    float bst = e[j];
                    for (int i = 1; i < j; i++) {
                        int c = pcn[j] - pcn[i], sx = psum[j] - psum[i];
                        precise float cst = e[i] + float(c * (psq[j] - psq[i]) - sx * sx) / float(c);
                        bst = min(bst, cst);
                    }
                    e[j] = bst;
                }
                emin[k] = e[n];
            }
            for (int k = 1; k <= 8; k++) emin[k] *= 1.0 - 1.0 / 4096.0;
        }
        // a pair of span S has palette entries >= S / 7 (S / 5) apart, so at most w / g + 1 of them lie
        // in the texels' range [mn, mx] of width w; SNORM ramps truncate toward zero, which can bring
        // two entries next to zero closer: (w + 1) / g + 1 there. With the nearest entries below and
        // above (and the six-value mode's fixed extremes when a texel is on them) no more levels serve.
        const int w = dv[n - 1] - dv[0] + (SIGNED_CH ? 1 : 0);
        for (int mode = 0; mode < 2; mode++) {
            const bool eight = mode == 0;
            const int extra = 3 + ((!eight && dv[0] == R_LO) ? 1 : 0) + ((!eight && dv[n - 1] == R_HI) ? 1 : 0);
            int lev = 8, r0 = 0, c0 = 0; // cell: low endpoints R_LO + r0 .., high R_LO + c0 .., side 1 << lev
            for (;;) {
                const int side = 1 << lev;
                const uint lim = min(H, ef == 0xffffffffu ? ef : ef + 1u);
                int l1 = R_LO + r0, l2 = min(R_LO + r0 + side - 1, R_HI);
                int h1 = R_LO + c0, h2 = min(R_LO + c0 + side - 1, R_HI);
                if (eight) { h1 = max(h1, l1 + 1); l2 = min(l2, h2 - 1); }
                else { h1 = max(h1, l1); l2 = min(l2, h2); }
                bool descend = false;
                bool live = l1 <= l2 && h1 <= h2;
                if (live) { // spacing bound with the cell's smallest span
                    int g = (h1 - l2) / (eight ? 7 : 5);
                    if (g > 0) {
                        int lv = w / g + extra;
                        if (lv < 8 && emin[lv] > float(lim - 1u)) live = false;
                    }
                }
                if (live) {
                    uint bnd = cell_bound(eight, l1, l2, h1, h2, ev, ec, n, lim);
                    if (bnd < lim) {
                        if (l1 == l2 && h1 == h2) { // one pair: bnd is its error
                            uint key = (uint(mode) << 16u) | (uint(l1 - R_LO) << 8u) | uint(h1 - R_LO);
                            if (bnd < ef || (bnd == ef && key < bkey)) { ef = bnd; bkey = key; }
                        } else {
                            descend = true;
                        }
                    }
                }
                if (descend) { lev--; continue; } // first quarter: the same corner
                // next cell: the next quarter of the parent (order (r, c) = 00, 01, 10, 11), else up
                bool done = false;
                for (;;) {
                    if (lev == 8) { done = true; break; }
                    const int sd = 1 << lev;
                    const bool rb = (r0 & sd) != 0, cb = (c0 & sd) != 0;
                    if (!cb) { c0 += sd; break; }
                    if (!rb) { c0 -= sd; r0 += sd; break; }
                    r0 -= sd;
                    c0 -= sd;
                    lev++;
                }
                if (done) break;
            }
        }
    }
    int a = h.a, bb = h.b;
    if (bkey != 0xffffffffu) { // found a pair strictly below H
        int lo = int((bkey >> 8u) & 255u) + R_LO, hi = int(bkey & 255u) + R_LO;
        if ((bkey >> 16u) == 0u) { a = hi; bb = lo; }
        else { a = lo; bb = hi; }
    }
    uvec2 w = bc4_pack(v, a, bb);
    uint o = bc4_out_word(b, ch);
    dst.words[o] = w.x;
    dst.words[o + 1u] = w.y;
}

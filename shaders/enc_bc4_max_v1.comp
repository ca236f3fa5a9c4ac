#version 450
// enc_bc4_max_v1.comp - the first design of BC4 / BC5 / BC3-alpha max quality, kept for comparison
// (KILN_GPU_BC4_MAX=v1; enc_bc4_max.comp is the default): one workgroup per channel task.
// Invocation 0 runs the high-quality heuristic (its error H bounds the search); then the
// workgroup searches every endpoint pair of both modes, invocation i taking lo = R_LO + i, + 64, ...,
// skipping pairs whose lower bounds are >= the best error so far - the texels outside [lo, hi], which
// no palette of the pair reaches, and the spacing bound of bc4_enc.c (a pair whose entries are far
// apart serves the texels with few levels: no better than the optimal k-level quantisation) - and
// stopping a pair's sum once it reaches the best. Each invocation keeps its
// first strictly best pair in the CPU's scan order (eight-value pairs by (lo, hi), then six-value pairs
// by (lo, hi)); a reduction on (error, scan position) gives the first optimum in that order, which
// replaces the heuristic's pair only when strictly better: exactly what bc4_enc.c's branch-and-bound
// returns, so the bytes are identical.
#include "enc_bc_common.glsl"
layout(local_size_x = KILN_EBC_MAX_LOCAL) in;
#include "enc_bc4.glsl"

shared int s_v[16];
shared uint s_herr;
shared int s_ha, s_hb;
shared uint s_err[KILN_EBC_MAX_LOCAL];
shared uint s_key[KILN_EBC_MAX_LOCAL];
shared double s_emin[9];
shared uint s_ol[256], s_oh[256];

void main()
{
    uint task = group_linear();
    uint nblocks = pc.blocks_x * pc.blocks_y;
    if (task >= nblocks * TASK_CHANNELS) return; // uniform per workgroup
    uint b = task / TASK_CHANNELS, ch = task % TASK_CHANNELS;
    uint tid = gl_LocalInvocationID.x;
    if (tid < 16u) s_v[tid] = bc4_value(b, tid, ch);
    barrier();
    int v[16];
    for (int t = 0; t < 16; t++) v[t] = s_v[t];
    if (tid == 0u) {
        Best h = heuristic(v, Q_HIGH);
        s_herr = h.err;
        s_ha = h.a;
        s_hb = h.b;
    }
    // distinct values (sorted) with counts, for the bounds and the sums
    int dv[16], dc[16];
    int n = 0;
    {
        int s[16];
        for (int t = 0; t < 16; t++) s[t] = v[t];
        for (int i = 1; i < 16; i++) {
            int x = s[i], j = i - 1;
            while (j >= 0 && s[j] > x) { s[j + 1] = s[j]; j--; }
            s[j + 1] = x;
        }
        for (int i = 0; i < 16; i++) {
            if (n > 0 && dv[n - 1] == s[i]) dc[n - 1]++;
            else { dv[n] = s[i]; dc[n] = 1; n++; }
        }
    }
    if (tid == 1u) {
        // emin[k]: the smallest squared error of any k real-valued levels for these values (optimal
        // 1-D k-means by dynamic programming over contiguous groups), a lower bound for any palette
        // with at most k useful entries (doubles; compared with a margin, so rounding cannot prune a
        // pair that could win)
        double pcn[17], psum[17], psq[17];
        pcn[0] = 0.0LF; psum[0] = 0.0LF; psq[0] = 0.0LF;
        for (int i = 0; i < n; i++) {
            pcn[i + 1] = pcn[i] + double(dc[i]);
            psum[i + 1] = psum[i] + double(dc[i]) * double(dv[i]);
            psq[i + 1] = psq[i] + double(dc[i]) * double(dv[i]) * double(dv[i]);
        }
        double e[17];
        for (int j = 1; j <= n; j++) e[j] = (psq[j] - psq[0]) - (psum[j] - psum[0]) * (psum[j] - psum[0]) / (pcn[j] - pcn[0]);
        s_emin[0] = 1e300LF;
        s_emin[1] = e[n];
        for (int k = 2; k <= 8; k++) {
            double ne[17];
            for (int j = 1; j <= n; j++) {
                double bst = e[j];
                for (int i = 1; i < j; i++) {
                    double c = e[i] + ((psq[j] - psq[i]) - (psum[j] - psum[i]) * (psum[j] - psum[i]) / (pcn[j] - pcn[i]));
                    bst = min(bst, c);
                }
                ne[j] = bst;
            }
            for (int j = 1; j <= n; j++) e[j] = ne[j];
            s_emin[k] = e[n];
        }
    }
    barrier();
    uint herr = s_herr;
    double emin[9];
    for (int k = 0; k < 9; k++) emin[k] = s_emin[k];
    const int w = dv[n - 1] - dv[0];
    uint best = herr, bkey = 0xffffffffu;
    if (herr > 0u) {
        for (int mode = 0; mode < 2; mode++) {
            bool eight = mode == 0;
            // s_ol[v - R_LO]: error of the texels below v, which no palette with lowest endpoint v gets
            // nearer than v (or the fixed minimum of the six-value mode); s_oh: the same above v
            barrier();
            for (int v0 = int(tid); v0 < R_HI - R_LO + 1; v0 += KILN_EBC_MAX_LOCAL) {
                int vv = R_LO + v0;
                uint sl = 0u, sh = 0u;
                for (int k = 0; k < n; k++) {
                    int x = dv[k];
                    if (x < vv) { int d = vv - x; if (!eight) d = min(d, x - R_LO); sl += uint(d * d * dc[k]); }
                    if (x > vv) { int d = x - vv; if (!eight) d = min(d, R_HI - x); sh += uint(d * d * dc[k]); }
                }
                s_ol[v0] = sl;
                s_oh[v0] = sh;
            }
            barrier();
            for (int lo = R_LO + int(tid); lo <= R_HI; lo += KILN_EBC_MAX_LOCAL) {
                uint ol = s_ol[lo - R_LO];
                if (ol >= best) break; // grows with lo
                // the first hi whose bound can beat the best (s_oh falls as hi grows): binary search
                int h0 = eight ? lo + 1 : lo, h1 = R_HI + 1;
                while (h0 < h1) {
                    int mid = (h0 + h1) >> 1;
                    if (ol + s_oh[mid - R_LO] >= best) h0 = mid + 1;
                    else h1 = mid;
                }
                const int extra = 3 + ((!eight && dv[0] == R_LO) ? 1 : 0) + ((!eight && dv[n - 1] == R_HI) ? 1 : 0);
                for (int hi = h0; hi <= R_HI; hi++) {
                    // spacing bound: entries of the pair are >= g apart, so at most w / g + extra levels
                    // serve the texels; it only grows with hi
                    int g = (hi - lo) / (eight ? 7 : 5);
                    if (g > 0) {
                        int levels = w / g + extra;
                        if (levels < 8 && emin[levels] > double(best) - 1.0LF + 1e-3LF) break;
                    }
                    if (ol + s_oh[hi - R_LO] >= best) continue;
                    int a = eight ? hi : lo, bb = eight ? lo : hi;
                    int pal[8];
                    [[unroll]] for (int i = 0; i < 8; i++) pal[i] = bc4_pal(a, bb, i);
                    uint err = 0u;
                    for (int k = 0; k < n && err < best; k++) {
                        int x = dv[k];
                        int be = (x - pal[0]) * (x - pal[0]);
                        [[unroll]] for (int i = 1; i < 8; i++) be = min(be, (x - pal[i]) * (x - pal[i]));
                        err += uint(be * dc[k]);
                    }
                    if (err < best) {
                        best = err;
                        bkey = (uint(mode) << 16u) | (uint(lo - R_LO) << 8u) | uint(hi - R_LO);
                    }
                }
            }
        }
    }
    s_err[tid] = best;
    s_key[tid] = bkey;
    barrier();
    for (uint s = KILN_EBC_MAX_LOCAL / 2u; s > 0u; s >>= 1u) {
        if (tid < s) {
            uint e2 = s_err[tid + s], k2 = s_key[tid + s];
            if (e2 < s_err[tid] || (e2 == s_err[tid] && k2 < s_key[tid])) {
                s_err[tid] = e2;
                s_key[tid] = k2;
            }
        }
        barrier();
    }
    if (tid == 0u) {
        int a = s_ha, bb = s_hb;
        if (s_err[0] < herr) {
            uint key = s_key[0];
            int lo = int((key >> 8u) & 255u) + R_LO, hi = int(key & 255u) + R_LO;
            if ((key >> 16u) == 0u) { a = hi; bb = lo; }
            else { a = lo; bb = hi; }
        }
        uvec2 w = bc4_pack(v, a, bb);
        uint o = bc4_out_word(b, ch);
        dst.words[o] = w.x;
        dst.words[o + 1u] = w.y;
    }
}

#version 450
// enc_bc1_cf_seed.comp - BC1 / BC1a / BC3-colour at high and max quality, seed strategy: the cluster
// fit of Castano's "High Quality DXT Compression using CUDA" (after Simon Brown's squish), one
// workgroup per block:
//   - 16 invocations read the colours (PRELOAD = 1: into shared memory once; 0: from the buffer at
//     every use);
//   - mean and covariance by parallel reductions, the principal axis by 8 power-iteration steps;
//   - a parallel rank sort of the projections: rank = #{j : p_j < p_t} + #{j < t : p_j == p_t}, which
//     breaks ties by texel number so that the ranks are a permutation (the paper's listing compares
//     entries 6 and 14 twice: not copied);
//   - every order-preserving 4-cluster partition (i <= j <= k: 969) and, unless the format always
//     interpolates four colours, every 3-cluster one (153), split over the 64 invocations: least-
//     squares endpoints from prefix sums, clamped, quantised to 565 with bit replication, and the
//     squared error of that pair under the ideal interpolation;
//   - a parallel min-reduction (ties: the lower partition code), the winner's endpoints ordered for
//     the decoder's mode and exact indices chosen by 16 invocations, merged with atomicOr.
// Punch-through blocks with transparent texels take the one-invocation seed encoder.
#include "enc_bc_common.glsl"
layout(local_size_x = KILN_EBC_CF_LOCAL) in;
#include "enc_bc1.glsl"
#include "enc_bc1_seed.glsl"

const uint WG = KILN_EBC_CF_LOCAL;
shared vec3 s_col[16];
shared vec3 s_sum[16];
shared float s_cov[16][6];
shared vec3 s_axis;
shared float s_proj[16];
shared vec3 s_sorted[16];
shared vec3 s_pre[17];
shared float s_err[WG];
shared uint s_code[WG];
shared uint s_transp, s_idx, s_c0, s_c1;

vec3 colour(uint b, uint t)
{
    if (PRELOAD != 0u) return s_col[t];
    vec3 c;
    uint a8;
    load_texel(b, t, c, a8);
    return c;
}

// Least-squares endpoints of partition code and their quantised 565 values; returns the error (1e30
// when degenerate).
float eval_code(uint code, out uint qa, out uint qb)
{
    bool three = (code >> 15u) != 0u;
    uint i = (code >> 10u) & 31u, j = (code >> 5u) & 31u, k = code & 31u;
    float n0 = float(i), n1 = float(j - i), n2 = float(k - j), n3 = float(16u - k);
    float A, B, C;
    vec3 ax;
    if (three) { // weights 1, 1/2, 0 (k = j)
        A = n0 + 0.25 * n1; B = n3 + 0.25 * n1; C = 0.25 * n1;
        ax = s_pre[i] + 0.5 * (s_pre[j] - s_pre[i]);
    } else {
        A = n0 + (4.0 / 9.0) * n1 + (1.0 / 9.0) * n2;
        B = n3 + (4.0 / 9.0) * n2 + (1.0 / 9.0) * n1;
        C = (2.0 / 9.0) * (n1 + n2);
        ax = s_pre[i] + (2.0 / 3.0) * (s_pre[j] - s_pre[i]) + (1.0 / 3.0) * (s_pre[k] - s_pre[j]);
    }
    vec3 bx = s_pre[16] - ax;
    float det = A * B - C * C;
    qa = 0u; qb = 0u;
    if (det < 1e-4) return 1e30;
    vec3 a = (ax * B - bx * C) / det, b = (bx * A - ax * C) / det;
    a = clamp(a, 0.0, 255.0);
    b = clamp(b, 0.0, 255.0);
    // 565 with bit replication
    uvec3 ra = uvec3(round(a * vec3(31.0, 63.0, 31.0) / 255.0)), rb = uvec3(round(b * vec3(31.0, 63.0, 31.0) / 255.0));
    qa = (ra.x << 11u) | (ra.y << 5u) | ra.z;
    qb = (rb.x << 11u) | (rb.y << 5u) | rb.z;
    vec3 ea = vec3(expand565(qa)), eb = vec3(expand565(qb));
    vec3 e = ea * ea * A + eb * eb * B + 2.0 * ea * eb * C - 2.0 * ea * ax - 2.0 * eb * bx;
    return e.x + e.y + e.z;
}

void main()
{
    uint b = group_linear();
    if (b >= pc.blocks_x * pc.blocks_y) return; // uniform per workgroup
    uint tid = gl_LocalInvocationID.x;
    if (tid == 0u) { s_transp = 0u; s_idx = 0u; }
    barrier();
    if (tid < 16u) {
        vec3 c;
        uint a8;
        load_texel(b, tid, c, a8);
        if (PRELOAD != 0u) s_col[tid] = c;
        if (PUNCH && a8 < (pc.flags & 255u)) atomicOr(s_transp, 1u << tid);
    }
    barrier();
    if (s_transp != 0u) { // punch-through: the one-invocation seed encoder
        if (tid == 0u) {
            uint c0, c1, idx;
            seed_encode(seed_load(b), c0, c1, idx);
            write_colour(b, c0, c1, idx);
        }
        return;
    }
    // mean
    if (tid < 16u) s_sum[tid] = colour(b, tid);
    barrier();
    for (uint s = 8u; s > 0u; s >>= 1u) {
        if (tid < s) s_sum[tid] += s_sum[tid + s];
        barrier();
    }
    vec3 mean = s_sum[0] / 16.0;
    // covariance
    if (tid < 16u) {
        vec3 d = colour(b, tid) - mean;
        s_cov[tid][0] = d.x * d.x; s_cov[tid][1] = d.x * d.y; s_cov[tid][2] = d.x * d.z;
        s_cov[tid][3] = d.y * d.y; s_cov[tid][4] = d.y * d.z; s_cov[tid][5] = d.z * d.z;
    }
    barrier();
    for (uint s = 8u; s > 0u; s >>= 1u) {
        if (tid < s)
            for (int e = 0; e < 6; e++) s_cov[tid][e] += s_cov[tid + s][e];
        barrier();
    }
    if (tid == 0u) { // power method, 8 steps
        vec3 v = vec3(1.0);
        for (int it = 0; it < 8; it++) {
            vec3 w = vec3(s_cov[0][0] * v.x + s_cov[0][1] * v.y + s_cov[0][2] * v.z,
                          s_cov[0][1] * v.x + s_cov[0][3] * v.y + s_cov[0][4] * v.z,
                          s_cov[0][2] * v.x + s_cov[0][4] * v.y + s_cov[0][5] * v.z);
            float m = max(max(abs(w.x), abs(w.y)), abs(w.z));
            if (m < 1e-20) break;
            v = w / m;
        }
        s_axis = v;
    }
    barrier();
    // rank sort of the projections (ties by texel number)
    if (tid < 16u) s_proj[tid] = dot(colour(b, tid), s_axis);
    barrier();
    if (tid < 16u) {
        float p = s_proj[tid];
        uint rank = 0u;
        for (uint j = 0u; j < 16u; j++) {
            float q = s_proj[j];
            if (q < p || (q == p && j < tid)) rank++;
        }
        s_sorted[rank] = colour(b, tid);
    }
    barrier();
    if (tid == 0u) {
        s_pre[0] = vec3(0.0);
        for (uint i = 0u; i < 16u; i++) s_pre[i + 1u] = s_pre[i] + s_sorted[i];
    }
    barrier();
    // the partitions: pairs (i, j) over the invocations; for four clusters every k >= j
    float best = 1e30;
    uint bcode = 0xffffffffu;
    for (uint p = tid; p < 153u; p += WG) {
        uint i = 0u, r = p;
        while (r >= 17u - i) { r -= 17u - i; i++; }
        uint j = i + r;
        for (uint k = j; k <= 16u; k++) {
            uint code = (i << 10u) | (j << 5u) | k, qa, qb;
            float e = eval_code(code, qa, qb);
            if (e < best || (e == best && code < bcode)) { best = e; bcode = code; }
        }
        if (!FOUR_ANY) {
            uint code = (1u << 15u) | (i << 10u) | (j << 5u) | j, qa, qb;
            float e = eval_code(code, qa, qb);
            if (e < best || (e == best && code < bcode)) { best = e; bcode = code; }
        }
    }
    s_err[tid] = best;
    s_code[tid] = bcode;
    barrier();
    for (uint s = WG / 2u; s > 0u; s >>= 1u) {
        if (tid < s) {
            float e2 = s_err[tid + s];
            uint c2 = s_code[tid + s];
            if (e2 < s_err[tid] || (e2 == s_err[tid] && c2 < s_code[tid])) { s_err[tid] = e2; s_code[tid] = c2; }
        }
        barrier();
    }
    if (tid == 0u) {
        uint qa = 0u, qb = 0u;
        if (s_code[0] != 0xffffffffu) eval_code(s_code[0], qa, qb);
        bool three = s_code[0] != 0xffffffffu && (s_code[0] >> 15u) != 0u;
        if (!FOUR_ANY) {
            if ((three && qa > qb) || (!three && qa < qb)) { uint t = qa; qa = qb; qb = t; }
        }
        s_c0 = qa;
        s_c1 = qb;
    }
    barrier();
    uint c0 = s_c0, c1 = s_c1;
    if (tid < 16u) { // exact indices for the winner, one texel per invocation
        bool four = FOUR_ANY || c0 > c1;
        vec3 pal[4];
        seed_palette(c0, c1, four, pal);
        vec3 x = colour(b, tid);
        float be = 1e30;
        uint bi = 0u;
        for (int e = 0; e < (four ? 4 : 3); e++) {
            vec3 d = x - pal[e];
            float dd = dot(d, d);
            if (dd < be) { be = dd; bi = uint(e); }
        }
        atomicOr(s_idx, bi << (2u * tid));
    }
    barrier();
    if (tid == 0u) write_colour(b, c0, c1, s_idx);
}

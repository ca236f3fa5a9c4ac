#version 450
// flame_de_prep.comp - first post pass of the GPU flame renderer (src/gpu/gpu_flame_post.c): per
// histogram bucket, flam3's log scale ls = k1 * log(1 + A * k2) / A and, with density estimation,
// the DE filter index of the bucket (what kiln__flame_tonemap's density_estimation computes per
// source bucket before it scatters), stored with the filter's reach: idx | reach << KFP_REACH_SHIFT.
//
// The filter index is an exact replica of the CPU's double-precision rule (fs = box sum of A / 255,
// times (ss/(ss+1))^2 for even ss; ceil(fs) - 1 below 100, 100 + floor(pow(fs - 100, curve)) above,
// clamped): the host evaluates that rule (kiln__flame_de_index, the CPU's own code) on floats and
// stores, for every index m >= 1, the smallest float box sum S whose index is >= m (thr[m - 1];
// the rule is monotonic in S). Here the index is the number of thresholds <= S (binary search), so a
// float-only device gives the CPU's index whenever the float box sum equals the CPU's double sum:
// always for ss = 1 (one term), and for ss > 1 whenever the box sum is exact in float (the
// histograms of both chaos games hold multiples of 1/KF_UNITS far below 2^24 where it matters:
// fs above max_filtered_counts all map to the last filter).
// log(1 + x) is evaluated as log1p (atanh series below x = 1): log(1 + x) in float loses the low bits
// of x for the small x that sparse buckets at high quality give.
#extension GL_GOOGLE_include_directive : require
#include "flame_post_abi.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

layout(push_constant) uniform Push {
    uint w, h, ss, mode;   // histogram size, supersample, KFP_MODE_*
    float k1, k2;          // log-density constants (kiln_flame_setup)
    uint ntab, pad;        // thresholds (= the last DE filter index)
} pc;

layout(std430, binding = 0) readonly buffer Hist { vec4 hist[]; };
layout(std430, binding = 1) writeonly buffer Prep { vec4 prep[]; };
layout(std430, binding = 2) writeonly buffer Index { uint idxv[]; };
layout(std430, binding = 3) readonly buffer Thr { float thr[]; };
layout(std430, binding = 4) readonly buffer Reach { int reach[]; }; // ceil(width_k) - 1, 0..255

float log1p_acc(float x)
{
    if (x > 1.0) return log(1.0 + x);
    // log(1 + x) = 2 atanh(s), s = x / (2 + x) <= 1/3: 2 s (1 + s^2/3 + s^4/5 + ...), error < 2e-10
    float s = x / (2.0 + x), s2 = s * s;
    float p = 1.0 / 19.0;
    p = p * s2 + 1.0 / 17.0;
    p = p * s2 + 1.0 / 15.0;
    p = p * s2 + 1.0 / 13.0;
    p = p * s2 + 1.0 / 11.0;
    p = p * s2 + 1.0 / 9.0;
    p = p * s2 + 1.0 / 7.0;
    p = p * s2 + 1.0 / 5.0;
    p = p * s2 + 1.0 / 3.0;
    p = p * s2 + 1.0;
    return 2.0 * s * p;
}

void main()
{
    uvec2 q = gl_GlobalInvocationID.xy;
    if (q.x >= pc.w || q.y >= pc.h) return;
    uint i = q.y * pc.w + q.x;
    vec4 b = hist[i];
    float ls = 0.0;
    if (b.w != 0.0) ls = pc.k1 * log1p_acc(b.w * pc.k2) / b.w;
    if (pc.mode == KFP_MODE_LOG) {
        prep[i] = b.w != 0.0 ? b * ls : vec4(0.0);
        return;
    }
    int ss = int(pc.ss), x = int(q.x), y = int(q.y), w = int(pc.w), h = int(pc.h);
    // density_estimation scatters only from [ss-1, w-(ss-1)) x [ss-1, h-(ss-1)), buckets with A != 0
    if (b.w == 0.0 || x < ss - 1 || y < ss - 1 || x >= w - (ss - 1) || y >= h - (ss - 1)) {
        prep[i] = vec4(0.0);
        idxv[i] = KFP_SKIP;
        return;
    }
    int sh = ss / 2;
    float S = 0.0;
    for (int jj = -sh; jj <= sh; jj++)
        for (int ii = -sh; ii <= sh; ii++) S += hist[uint((y + jj) * w + (x + ii))].w;
    uint lo = 0u, hi = pc.ntab;
    while (lo < hi) {
        uint mid = (lo + hi) >> 1;
        if (thr[mid] <= S)
            lo = mid + 1u;
        else
            hi = mid;
    }
    idxv[i] = lo | (uint(reach[lo]) << KFP_REACH_SHIFT);
    prep[i] = b * ls;
}

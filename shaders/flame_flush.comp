#version 450
// flame_flush.comp - turns flame_iterate.comp's packed integer accumulator into flam3's float bucket
// scale and clears it: per bucket, from the two packed words and the four carry counters,
//   R = (w0 & 0xffff) + 65536 * cR          G = (w0 >> 16) + 65536 * cW0 - cR
//   B = (w1 & 0xffff) + 65536 * cB          A = (w1 >> 16) + 65536 * cW1 - cB
// (cR counts the adds that carried out of R into G, cW0 the wraps of word 0; exact integer
// identities), divided by KF_UNITS and ADDED to the float histogram (several flushes may accumulate).
#extension GL_GOOGLE_include_directive : require
#include "flame_abi.glsl"

layout(local_size_x_id = 0) in;

layout(push_constant) uniform Push {
    uint buckets;
} pc;

layout(std430, binding = 0) buffer Hist { uint hist[]; };
layout(std430, binding = 1) buffer Carry { uint carry[]; };
layout(std430, binding = 2) buffer Out { vec4 outv[]; };

void main()
{
    uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (i >= pc.buckets) return;
    uint w0 = hist[2u * i], w1 = hist[2u * i + 1u];
    uvec4 c = uvec4(carry[4u * i], carry[4u * i + 1u], carry[4u * i + 2u], carry[4u * i + 3u]);
    if (w0 == 0u && w1 == 0u && c == uvec4(0u)) return;
    vec4 v;
    v.x = float(w0 & 0xffffu) + 65536.0 * float(c.x);
    v.y = float(w0 >> 16) + 65536.0 * float(c.y) - float(c.x);
    v.z = float(w1 & 0xffffu) + 65536.0 * float(c.z);
    v.w = float(w1 >> 16) + 65536.0 * float(c.w) - float(c.z);
    outv[i] += v * (1.0 / KF_UNITS);
    hist[2u * i] = 0u; hist[2u * i + 1u] = 0u;
    carry[4u * i] = 0u; carry[4u * i + 1u] = 0u; carry[4u * i + 2u] = 0u; carry[4u * i + 3u] = 0u;
}

#version 450
// flame_flush_chroma.comp (owner: flameideas) - the flush of flame_iterate.comp's subsampled-chroma
// accumulator (flag 256): per bucket b one word Y | A << 16 (Y = R + G + B) with carry counters
// 2b (Y carries) and 2b + 1 (wraps); per 2x2 block k one word R | B << 16 at nb + k with carry counters
// 2 (nb + k) and 2 (nb + k) + 1 (nb = buckets). flame_flush.comp's exact identities give the integer
// sums; the block's G is its Y sum minus R and B, and each bucket gets the block's chromaticity scaled
// to its own Y: RGB_b = (R, G, B)_block * Y_b / Y_block (so R + G + B and A of every bucket are exact
// and every block's R, G, B totals are exact). One invocation per block; ADDS to the float histogram
// and clears the accumulator, like flame_flush.comp.
#extension GL_GOOGLE_include_directive : require
#include "flame_abi.glsl"

layout(local_size_x_id = 0) in;

layout(push_constant) uniform Push {
    uint blocks, w, h;
} pc;

layout(std430, binding = 0) buffer Hist { uint hist[]; };
layout(std430, binding = 1) buffer Carry { uint carry[]; };
layout(std430, binding = 2) buffer Out { vec4 outv[]; };

// low and high totals of word i with carry counters 2i, 2i + 1, then cleared
vec2 take(uint i)
{
    uint wd = hist[i], c0 = carry[2u * i], c1 = carry[2u * i + 1u];
    if (wd == 0u && c0 == 0u && c1 == 0u) return vec2(0.0);
    hist[i] = 0u; carry[2u * i] = 0u; carry[2u * i + 1u] = 0u;
    return vec2(float(wd & 0xffffu) + 65536.0 * float(c0), float(wd >> 16) + 65536.0 * float(c1) - float(c0));
}

void main()
{
    uint k = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (k >= pc.blocks) return;
    uint bw = (pc.w + 1u) >> 1;
    uint x0 = (k % bw) * 2u, y0 = (k / bw) * 2u;
    vec2 rb = take(pc.w * pc.h + k);
    vec2 ya[4];
    uint idx[4];
    float ysum = 0.0;
    for (uint j = 0u; j < 4u; j++) {
        uint x = x0 + (j & 1u), y = y0 + (j >> 1);
        idx[j] = 0xffffffffu;
        ya[j] = vec2(0.0);
        if (x < pc.w && y < pc.h) {
            idx[j] = y * pc.w + x;
            ya[j] = take(idx[j]);
            ysum += ya[j].x;
        }
    }
    vec3 rgb = vec3(rb.x, max(ysum - rb.x - rb.y, 0.0), rb.y);
    for (uint j = 0u; j < 4u; j++) {
        if (idx[j] == 0xffffffffu || (ya[j] == vec2(0.0))) continue;
        vec3 c = ysum > 0.0 ? rgb * (ya[j].x / ysum) : vec3(0.0);
        outv[idx[j]] += vec4(c, ya[j].y) * (1.0 / KF_UNITS);
    }
}

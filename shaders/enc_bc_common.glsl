// enc_bc_common.glsl - what the BC encode shaders share: bindings, push constants (enc_bc_abi.glsl),
// texel fetch with edge replication, and the exact arithmetic that lets the GPU reproduce the CPU
// encoders' bytes:
//  - every float/double expression that must round like C is `precise` (no fused multiply-add), and
//    float products that feed additions are computed by mr() (exactly in double, then rounded), since
//    a driver may fuse them anyway (lavapipe does);
//  - divisions go through div_rn (Vulkan allows 2.5 ulp for x / y): the double quotient is corrected
//    to the correctly rounded one from exact fma residuals; a float quotient is the double one rounded
//    to float (correct: a float quotient is never within a double's error of a float midpoint).
// Include after "#version 450".
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "enc_bc_abi.glsl"

layout(constant_id = 1) const uint VARIANT = 0;
layout(constant_id = 2) const uint QUALITY = 0;
layout(constant_id = 3) const uint INPUT_U8 = 1;
layout(constant_id = 4) const uint PRELOAD = 1;

layout(push_constant) uniform Push {
    uint blocks_x;
    uint blocks_y;
    uint width;
    uint height;
    uint flags;
    uint sw0, sw1, sw2;
} pc;

layout(std430, binding = 0) readonly buffer Src { uint words[]; } src;
layout(std430, binding = 1) buffer Dst { uint words[]; } dst;
layout(std430, binding = 2) buffer Fallback { uint words[]; } fb;

const uint Q_FAST = 0u, Q_NORMAL = 1u, Q_HIGH = 2u, Q_MAX = 3u;

// Float constants as C computes them (correctly rounded), by their bits.
#define F_1_255 uintBitsToFloat(0x3b808081u)   // 1.0f / 255.0f
#define F_255_65535 uintBitsToFloat(0x3b7f00ffu) // 255.0f / 65535.0f
#define F_31_255 uintBitsToFloat(0x3df8f8f9u)  // 31.0f / 255.0f
#define F_63_255 uintBitsToFloat(0x3e7cfcfdu)  // 63.0f / 255.0f
#define F_1_3 uintBitsToFloat(0x3eaaaaabu)     // 1.0f / 3.0f
#define F_2_3 uintBitsToFloat(0x3f2aaaabu)     // 2.0f / 3.0f
#define F_1EM3 uintBitsToFloat(0x3a83126fu)    // 1e-3f
#define F_INF uintBitsToFloat(0x7f800000u)

// Linear workgroup index (vk.h: dispatches split over x and y).
uint group_linear() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }

// Word index of texel t (row-major 0..15) of block b in the input (edge-replicated).
uint texel_index(uint b, uint t)
{
    uint bx = b % pc.blocks_x, by = b / pc.blocks_x;
    uint x = min(bx * 4u + (t & 3u), pc.width - 1u);
    uint y = min(by * 4u + (t >> 2u), pc.height - 1u);
    return y * pc.width + x;
}

#include "d_step.glsl"

// Correctly rounded a / b (b != 0, finite operands, no underflow): the candidate with the smallest
// exact residual |a - q b| (fma is exact for these).
double div_rn(double a, double b)
{
    precise double q = a / b;
    if (q == 0.0LF || isinf(q) || isnan(q)) return q;
    [[unroll]] for (int it = 0; it < 2; it++) {
        double lo = d_step(q, false), hi = d_step(q, true);
        double r = abs(fma(-q, b, a)), rl = abs(fma(-lo, b, a)), rh = abs(fma(-hi, b, a));
        if (rl < r && rl <= rh) q = lo;
        else if (rh < r) q = hi;
        else break;
    }
    return q;
}

// The float quotient: the double one converted, then checked against its float neighbours by the
// exact residual (a float times a float is exact in double), so neither the division's nor the
// conversion's rounding matters.
float fdiv_rn(float a, float b)
{
    precise float q = float(div_rn(double(a), double(b)));
    if (q == 0.0 || isinf(q) || isnan(q)) return q;
    float lo = uintBitsToFloat(floatBitsToUint(q) - 1u), hi = uintBitsToFloat(floatBitsToUint(q) + 1u);
    precise double r = abs(double(a) - double(q) * double(b));
    precise double rl = abs(double(a) - double(lo) * double(b));
    precise double rh = abs(double(a) - double(hi) * double(b));
    if (rl < r && rl <= rh) return lo;
    if (rh < r) return hi;
    return q;
}

// A float product rounded once, as C rounds it: computed exactly in double (24 x 24 bits) and then
// converted, so no driver can fuse it into a following addition (lavapipe's LLVM fuses fmul + fadd into
// fma on FMA hardware even when the SPIR-V says NoContraction: 1-ulp differences, a few blocks in 10^4).
float mr(float a, float b) { return float(double(a) * double(b)); }
vec3 mr3(vec3 a, vec3 b) { return vec3(mr(a.x, b.x), mr(a.y, b.y), mr(a.z, b.z)); }
vec3 mr3s(vec3 a, float b) { return vec3(mr(a.x, b), mr(a.y, b), mr(a.z, b)); }

// decode_common.glsl - what every block decoder shares: bindings, push constants, the block index,
// bit extraction and exact integer-only conversions (half -> float bits, n/d -> the correctly
// rounded float). Include after "#version 450"; then define OUT_WORDS and include
// decode_output.glsl for the output side.
//
// One invocation decodes one 4x4 block; a workgroup of KILN_DEC_LOCAL_SIZE invocations stages its
// blocks' texels in shared memory and writes them out together, row by row, so that neighbouring
// invocations store neighbouring words. Barriers only, no subgroup operations: correct for any
// subgroup size and lane order.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "gpu_abi.h"

layout(local_size_x = KILN_DEC_LOCAL_SIZE) in;
layout(constant_id = 1) const uint VARIANT = 0;

layout(push_constant) uniform Push {
    uint blocks_x;
    uint blocks_y;
    uint width;
    uint height;
} pc;

layout(std430, binding = 0) readonly buffer Src { uint words[]; } src;
layout(std430, binding = 1) writeonly buffer Dst { uint words[]; } dst;
layout(std430, binding = 2) readonly buffer Tables { uint t[]; } tab; // see table_lookup.glsl

const uint NO_BLOCK = 0xffffffffu;

// First block of this workgroup (linear over a possibly 2-D grid of workgroups).
uint group_first_block()
{
    return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * KILN_DEC_LOCAL_SIZE;
}

// This invocation's block, NO_BLOCK when past the end.
uint block_index()
{
    uint i = group_first_block() + gl_LocalInvocationID.x;
    return i < pc.blocks_x * pc.blocks_y ? i : NO_BLOCK;
}

uvec2 load_block8(uint bi) { return uvec2(src.words[bi * 2u], src.words[bi * 2u + 1u]); }
uvec4 load_block16(uint bi)
{
    return uvec4(src.words[bi * 4u], src.words[bi * 4u + 1u], src.words[bi * 4u + 2u], src.words[bi * 4u + 3u]);
}

// n bits (n <= 32) at bit position pos of a 64-bit little-endian value (lo word first).
uint bits64(uvec2 v, uint pos, uint n)
{
    uint r;
    if (pos >= 32u) r = v.y >> (pos - 32u);
    else if (pos == 0u) r = v.x;
    else r = (v.x >> pos) | (v.y << (32u - pos));
    return n >= 32u ? r : r & ((1u << n) - 1u);
}

// n bits (n <= 25) at bit position pos of a 128-bit little-endian value.
uint bits128(uvec4 v, uint pos, uint n)
{
    uint w = pos >> 5u, s = pos & 31u;
    uint r = v[w] >> s;
    if (s != 0u && s + n > 32u && w < 3u) r |= v[w + 1u] << (32u - s);
    return r & ((1u << n) - 1u);
}

const uint F32_ONE = 0x3f800000u;

// IEEE binary16 -> binary32 bits, exact for every input (subnormals, infinities, NaNs).
uint half_to_float_bits(uint h)
{
    uint s = (h & 0x8000u) << 16u;
    uint e = (h >> 10u) & 31u;
    uint m = h & 0x3ffu;
    if (e == 0u) {
        if (m == 0u) return s;
        uint p = uint(findMSB(m)); // 0..9
        return s | ((p + 103u) << 23u) | ((m << (23u - p)) & 0x7fffffu);
    }
    if (e == 31u) return s | 0x7f800000u | (m << 13u);
    return s | ((e + 112u) << 23u) | (m << 13u);
}

// Bits of the float nearest to num/den (round to nearest even), i.e. what C computes as
// (float)num / (float)den, for 0 <= num <= den < 2^11. Integer arithmetic only: the Vulkan spec
// allows OpFDiv 2.5 ULP of error. Checked exhaustively against C for every such num and den.
uint div_float_bits(uint num, uint den)
{
    if (num == 0u) return 0u;
    // normalise: n = num << s with den <= n < 2 den, so that n / den is in [1, 2)
    int s = findMSB(den) - findMSB(num);
    uint n = num << uint(s);
    if (n < den) {
        n <<= 1u;
        s++;
    }
    // q = floor(n * 2^24 / den) in [2^24, 2^25), by long division in two 12-bit steps (every
    // intermediate stays below 2^23): 24 mantissa bits (with the implicit 1) and a guard bit
    uint a = n << 12u;
    uint q1 = a / den, r1 = a - q1 * den;
    uint b = r1 << 12u;
    uint q2 = b / den, r2 = b - q2 * den;
    uint q = (q1 << 12u) | q2;
    uint m = q >> 1u;
    if ((q & 1u) != 0u && (r2 != 0u || (m & 1u) != 0u)) m++;
    int e = -s;
    if (m == 0x1000000u) {
        m >>= 1u;
        e++;
    }
    return (uint(e + 127) << 23u) | (m & 0x7fffffu);
}

// v / den as float bits for signed v with |v| <= den.
uint sdiv_float_bits(int v, uint den)
{
    uint b = div_float_bits(uint(abs(v)), den);
    return v < 0 ? b | 0x80000000u : b;
}

// C-style (truncating toward zero) signed division, whatever the platform does for negative operands.
int trunc_div(int a, int b)
{
    int q = abs(a) / b;
    return a < 0 ? -q : q;
}

#version 450
// decode_bc.comp - BC1 (RGB, RGBA), BC2, BC3, BC4 and BC5 (UNORM, SNORM) blocks to texels, bit-identical
// to src/codec/bc.c (D3D10 reference decoding, see codec.h):
//  - 565 endpoints widened by bit replication;
//  - BC1 colours 2/3 = (2a+b)/3, (a+2b)/3, or (a+b)/2 and black in the 3-colour mode, truncating;
//    BC2/BC3 always use the 4-colour interpolation;
//  - BC4/BC5 ramps: 8 values ((8-i)a+(i-1)b)/7 when a > b, else 6 values ((6-i)a+(i-1)b)/5 plus
//    min and max, truncating toward zero; SNORM picks the ramp by comparing the raw signed bytes,
//    then reads an endpoint of -128 as -127, and outputs value / 127.
// Variant (specialisation constant 1): KILN_DEC_BC* in gpu_abi.h.
#include "decode_common.glsl"

const uint OUT_WORDS = (VARIANT == KILN_DEC_BC4S || VARIANT == KILN_DEC_BC5S) ? 4u : 1u;
#include "decode_output.glsl"

uvec3 expand565(uint c)
{
    uint r = (c >> 11u) & 31u, g = (c >> 5u) & 63u, b = c & 31u;
    return uvec3((r << 3u) | (r >> 2u), (g << 2u) | (g >> 4u), (b << 3u) | (b >> 2u));
}

// Colour of index i (0..3) of a BC1 colour block; alpha 0 only for the punch-through black.
uvec4 bc1_color(uvec2 blk, uint i, bool force4, bool punch)
{
    uint c0 = blk.x & 0xffffu, c1 = blk.x >> 16u;
    uvec3 a = expand565(c0), b = expand565(c1);
    if (i == 0u) return uvec4(a, 255u);
    if (i == 1u) return uvec4(b, 255u);
    if (force4 || c0 > c1) {
        if (i == 2u) return uvec4((2u * a + b) / 3u, 255u);
        return uvec4((a + 2u * b) / 3u, 255u);
    }
    if (i == 2u) return uvec4((a + b) / 2u, 255u);
    return uvec4(0u, 0u, 0u, punch ? 0u : 255u);
}

// Unsigned BC4 value of texel t.
uint bc4u_value(uvec2 blk, uint t)
{
    uint a = blk.x & 255u, b = (blk.x >> 8u) & 255u;
    uint i = bits64(blk, 16u + 3u * t, 3u);
    if (i == 0u) return a;
    if (i == 1u) return b;
    if (a > b) return ((8u - i) * a + (i - 1u) * b) / 7u;
    if (i == 6u) return 0u;
    if (i == 7u) return 255u;
    return ((6u - i) * a + (i - 1u) * b) / 5u;
}

// Signed BC4 value of texel t, in [-127, 127].
int bc4s_value(uvec2 blk, uint t)
{
    int ra = int(blk.x << 24u) >> 24, rb = int(blk.x << 16u) >> 24;
    int a = max(ra, -127), b = max(rb, -127);
    int i = int(bits64(blk, 16u + 3u * t, 3u));
    if (i == 0) return a;
    if (i == 1) return b;
    if (ra > rb) return trunc_div((8 - i) * a + (i - 1) * b, 7); // the raw bytes choose the ramp
    if (i == 6) return -127;
    if (i == 7) return 127;
    return trunc_div((6 - i) * a + (i - 1) * b, 5);
}

void decode(uint bi)
{
    bool wide = VARIANT == KILN_DEC_BC2 || VARIANT == KILN_DEC_BC3 || VARIANT == KILN_DEC_BC5U || VARIANT == KILN_DEC_BC5S;
    uvec4 w = wide ? load_block16(bi) : uvec4(load_block8(bi), 0u, 0u);
    [[dont_unroll]] for (uint t = 0u; t < 16u; t++) {
        if (VARIANT == KILN_DEC_BC1_RGB || VARIANT == KILN_DEC_BC1_RGBA) {
            uint i = (w.y >> (2u * t)) & 3u;
            put_u8(t, bc1_color(w.xy, i, false, VARIANT == KILN_DEC_BC1_RGBA));
        } else if (VARIANT == KILN_DEC_BC2) {
            uint i = (w.w >> (2u * t)) & 3u;
            uvec4 c = bc1_color(w.zw, i, true, false);
            c.a = bits64(w.xy, 4u * t, 4u) * 17u;
            put_u8(t, c);
        } else if (VARIANT == KILN_DEC_BC3) {
            uint i = (w.w >> (2u * t)) & 3u;
            uvec4 c = bc1_color(w.zw, i, true, false);
            c.a = bc4u_value(w.xy, t);
            put_u8(t, c);
        } else if (VARIANT == KILN_DEC_BC4U) {
            put_u8(t, uvec4(bc4u_value(w.xy, t), 0u, 0u, 255u));
        } else if (VARIANT == KILN_DEC_BC5U) {
            put_u8(t, uvec4(bc4u_value(w.xy, t), bc4u_value(w.zw, t), 0u, 255u));
        } else if (VARIANT == KILN_DEC_BC4S) {
            put_f32(t, uvec4(sdiv_float_bits(bc4s_value(w.xy, t), 127u), 0u, 0u, F32_ONE));
        } else { // KILN_DEC_BC5S
            put_f32(t, uvec4(sdiv_float_bits(bc4s_value(w.xy, t), 127u), sdiv_float_bits(bc4s_value(w.zw, t), 127u),
                                  0u, F32_ONE));
        }
    }
}

void main()
{
    uint bi = block_index();
    if (bi != NO_BLOCK) decode(bi);
    flush_outputs(bi);
}

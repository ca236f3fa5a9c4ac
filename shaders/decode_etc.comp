#version 450
// decode_etc.comp - ETC1 / ETC2 RGB (individual, differential, T, H, planar), ETC2 RGB A1
// (punch-through), ETC2 RGBA (EAC alpha) and EAC R11 / RG11 (UNORM, SNORM) blocks to texels,
// bit-identical to src/codec/etc.c (see codec.h):
//  - unsigned EAC: the 11-bit value v widened to 16 bits as (v << 5) | (v >> 6);
//  - signed EAC: base codeword -128 is treated as -127, output value / 1023 in [-1, 1].
// ETC blocks are big-endian 64-bit words; pixel indices run down the columns (index = x * 4 + y).
// Variant (specialisation constant 1): KILN_DEC_ETC2_* / KILN_DEC_EAC_* in gpu_abi.h.
#include "decode_common.glsl"
#include "table_lookup.glsl"

const uint OUT_WORDS = (VARIANT == KILN_DEC_EAC_R11S || VARIANT == KILN_DEC_EAC_RG11S) ? 4u : ((VARIANT == KILN_DEC_EAC_R11U || VARIANT == KILN_DEC_EAC_RG11U) ? 2u : 1u);
#include "decode_output.glsl"

uint bswap(uint v)
{
    return (v >> 24u) | ((v >> 8u) & 0xff00u) | ((v << 8u) & 0xff0000u) | (v << 24u);
}

uint ext4(uint v) { return (v << 4u) | v; }
uint ext5(uint v) { return (v << 3u) | (v >> 2u); }
uint ext6(uint v) { return (v << 2u) | (v >> 4u); }
uint ext7(uint v) { return (v << 1u) | (v >> 6u); }
int sext3(uint v) { return int(v << 29u) >> 29; }
uvec3 clamp_rgb(ivec3 c) { return uvec3(clamp(c, ivec3(0), ivec3(255))); }

// One ETC2 colour block (hi = bits 63..32, lo = bits 31..0) at pixel (x, y). With punch-through,
// the "diff" bit is the opaque flag and transparent texels are (0, 0, 0, 0).
uvec4 etc2_color(uint hi, uint lo, uint x, uint y, bool punch)
{
    uint pix = x * 4u + y;
    uint idx = (((lo >> (16u + pix)) & 1u) << 1u) | ((lo >> pix) & 1u);
    bool diffbit = ((hi >> 1u) & 1u) != 0u;
    bool opaque = !punch || diffbit;
    bool flip = (hi & 1u) != 0u;
    uint sub = flip ? (y >= 2u ? 1u : 0u) : (x >= 2u ? 1u : 0u);
    uint table = sub == 0u ? (hi >> 5u) & 7u : (hi >> 2u) & 7u;

    if (!punch && !diffbit) { // individual
        uint sh = sub == 0u ? 4u : 0u;
        ivec3 base = ivec3(ext4((hi >> (24u + sh)) & 15u), ext4((hi >> (16u + sh)) & 15u), ext4((hi >> (8u + sh)) & 15u));
        return uvec4(clamp_rgb(base + etc_modifier(table, idx)), 255u);
    }
    int r = int((hi >> 27u) & 31u), g = int((hi >> 19u) & 31u), b = int((hi >> 11u) & 31u);
    int dr = sext3(hi >> 24u), dg = sext3(hi >> 16u), db = sext3(hi >> 8u);
    if (r + dr < 0 || r + dr > 31) { // T mode
        uvec3 c1 = uvec3(ext4((((hi >> 27u) & 3u) << 2u) | ((hi >> 24u) & 3u)), ext4((hi >> 20u) & 15u), ext4((hi >> 16u) & 15u));
        ivec3 c2 = ivec3(ext4((hi >> 12u) & 15u), ext4((hi >> 8u) & 15u), ext4((hi >> 4u) & 15u));
        int d = etc_distance((((hi >> 2u) & 3u) << 1u) | (hi & 1u));
        if (!opaque && idx == 2u) return uvec4(0u);
        if (idx == 0u) return uvec4(c1, 255u);
        if (idx == 1u) return uvec4(clamp_rgb(c2 + d), 255u);
        if (idx == 2u) return uvec4(uvec3(c2), 255u);
        return uvec4(clamp_rgb(c2 - d), 255u);
    }
    if (g + dg < 0 || g + dg > 31) { // H mode
        uint r1 = (hi >> 27u) & 15u;
        uint g1 = (((hi >> 24u) & 7u) << 1u) | ((hi >> 20u) & 1u);
        uint b1 = (((hi >> 19u) & 1u) << 3u) | ((hi >> 15u) & 7u);
        uint r2 = (hi >> 11u) & 15u, g2 = (hi >> 7u) & 15u, b2 = (hi >> 3u) & 15u;
        ivec3 c1 = ivec3(ext4(r1), ext4(g1), ext4(b1));
        ivec3 c2 = ivec3(ext4(r2), ext4(g2), ext4(b2));
        uint v1 = (r1 << 8u) | (g1 << 4u) | b1, v2 = (r2 << 8u) | (g2 << 4u) | b2;
        int d = etc_distance((((hi >> 2u) & 1u) << 2u) | ((hi & 1u) << 1u) | (v1 >= v2 ? 1u : 0u));
        if (!opaque && idx == 2u) return uvec4(0u);
        if (idx == 0u) return uvec4(clamp_rgb(c1 + d), 255u);
        if (idx == 1u) return uvec4(clamp_rgb(c1 - d), 255u);
        if (idx == 2u) return uvec4(clamp_rgb(c2 + d), 255u);
        return uvec4(clamp_rgb(c2 - d), 255u);
    }
    if (b + db < 0 || b + db > 31) { // planar (always opaque)
        ivec3 o = ivec3(ext6((hi >> 25u) & 63u),
                        ext7((((hi >> 24u) & 1u) << 6u) | ((hi >> 17u) & 63u)),
                        ext6((((hi >> 16u) & 1u) << 5u) | (((hi >> 11u) & 3u) << 3u) | ((hi >> 7u) & 7u)));
        ivec3 h = ivec3(ext6((((hi >> 2u) & 31u) << 1u) | (hi & 1u)), ext7((lo >> 25u) & 127u), ext6((lo >> 19u) & 63u));
        ivec3 v = ivec3(ext6((lo >> 13u) & 63u), ext7((lo >> 6u) & 127u), ext6(lo & 63u));
        ivec3 c = (int(x) * (h - o) + int(y) * (v - o) + 4 * o + 2) >> 2;
        return uvec4(clamp_rgb(c), 255u);
    }
    // differential
    ivec3 base = sub == 0u ? ivec3(ext5(uint(r)), ext5(uint(g)), ext5(uint(b)))
                           : ivec3(ext5(uint(r + dr)), ext5(uint(g + dg)), ext5(uint(b + db)));
    if (!opaque) {
        if (idx == 2u) return uvec4(0u);
        if (idx == 0u) return uvec4(uvec3(base), 255u);
    }
    return uvec4(clamp_rgb(base + etc_modifier(table, idx)), 255u);
}

// EAC: the modifier of pixel (x, y) and the block's fields.
void eac_fields(uint hi, uint lo, uint x, uint y, out uint base, out int mult, out int mod)
{
    base = hi >> 24u;
    mult = int((hi >> 20u) & 15u);
    uint table = (hi >> 16u) & 15u;
    uint pix = x * 4u + y;
    mod = eac_modifier(table, bits64(uvec2(lo, hi), 45u - 3u * pix, 3u));
}

uint eac_alpha8(uint hi, uint lo, uint x, uint y)
{
    uint base;
    int mult, mod;
    eac_fields(hi, lo, x, y, base, mult, mod);
    return uint(clamp(int(base) + mod * mult, 0, 255));
}

uint eac_u11(uint hi, uint lo, uint x, uint y)
{
    uint base;
    int mult, mod;
    eac_fields(hi, lo, x, y, base, mult, mod);
    int v = int(base) * 8 + 4 + (mult != 0 ? mod * mult * 8 : mod);
    return uint(clamp(v, 0, 2047));
}

int eac_s11(uint hi, uint lo, uint x, uint y)
{
    uint base;
    int mult, mod;
    eac_fields(hi, lo, x, y, base, mult, mod);
    int b = max(int(base << 24u) >> 24, -127);
    int v = b * 8 + (mult != 0 ? mod * mult * 8 : mod);
    return clamp(v, -1023, 1023);
}

uint widen11(uint v) { return (v << 5u) | (v >> 6u); }

void decode(uint bi)
{
    bool wide = VARIANT == KILN_DEC_ETC2_RGBA || VARIANT == KILN_DEC_EAC_RG11U || VARIANT == KILN_DEC_EAC_RG11S;
    uvec4 w = wide ? load_block16(bi) : uvec4(load_block8(bi), 0u, 0u);
    uint h0 = bswap(w.x), l0 = bswap(w.y), h1 = bswap(w.z), l1 = bswap(w.w);
    [[dont_unroll]] for (uint t = 0u; t < 16u; t++) {
        uint bx = t & 3u, by = t >> 2u;
        if (VARIANT == KILN_DEC_ETC2_RGB) {
            put_u8(t, etc2_color(h0, l0, bx, by, false));
        } else if (VARIANT == KILN_DEC_ETC2_RGB_A1) {
            put_u8(t, etc2_color(h0, l0, bx, by, true));
        } else if (VARIANT == KILN_DEC_ETC2_RGBA) {
            uvec4 c = etc2_color(h1, l1, bx, by, false);
            c.a = eac_alpha8(h0, l0, bx, by);
            put_u8(t, c);
        } else if (VARIANT == KILN_DEC_EAC_R11U) {
            put_u16(t, uvec4(widen11(eac_u11(h0, l0, bx, by)), 0u, 0u, 65535u));
        } else if (VARIANT == KILN_DEC_EAC_RG11U) {
            put_u16(t, uvec4(widen11(eac_u11(h0, l0, bx, by)), widen11(eac_u11(h1, l1, bx, by)), 0u, 65535u));
        } else if (VARIANT == KILN_DEC_EAC_R11S) {
            put_f32(t, uvec4(sdiv_float_bits(eac_s11(h0, l0, bx, by), 1023u), 0u, 0u, F32_ONE));
        } else { // KILN_DEC_EAC_RG11S
            put_f32(t, uvec4(sdiv_float_bits(eac_s11(h0, l0, bx, by), 1023u),
                                  sdiv_float_bits(eac_s11(h1, l1, bx, by), 1023u), 0u, F32_ONE));
        }
    }
}

void main()
{
    uint bi = block_index();
    if (bi != NO_BLOCK) decode(bi);
    flush_outputs(bi);
}

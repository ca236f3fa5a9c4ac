#version 450
// decode_bc6h.comp - BC6H blocks (UFLOAT and SFLOAT, all 14 modes) to RGBA float, bit-identical to
// src/codec/bc6h.c: the Khronos Data Format Specification's decoding (sign extension, delta
// transform, unquantisation, 6-bit weight interpolation with rounding, finish_unquantize to half)
// in integers, then an exact half -> float widening. Reserved mode numbers decode to (0, 0, 0, 1).
// Variant (specialisation constant 1): KILN_DEC_BC6H_UF or KILN_DEC_BC6H_SF.
#include "decode_common.glsl"
#include "table_lookup.glsl"

const uint OUT_WORDS = 4u;
#include "decode_output.glsl"


const bool SIGNED = VARIANT == KILN_DEC_BC6H_SF;

int sext(uint v, uint bits)
{
    return bits >= 32u ? int(v) : int(v << (32u - bits)) >> int(32u - bits);
}

int unquantize(int x, uint bits)
{
    if (!SIGNED) {
        if (bits >= 15u) return x;
        if (x == 0) return 0;
        if (x == int((1u << bits) - 1u)) return 0xffff;
        return ((x << 15) + 0x4000) >> int(bits - 1u);
    }
    if (bits >= 16u) return x;
    bool neg = x < 0;
    int m = abs(x), r;
    if (m == 0) r = 0;
    else if (m >= int((1u << (bits - 1u)) - 1u)) r = 0x7fff;
    else r = ((m << 15) + 0x4000) >> int(bits - 1u);
    return neg ? -r : r;
}

uint finish_unquantize(int v)
{
    if (!SIGNED) return uint((v * 31) >> 6);
    if (v < 0) return 0x8000u | uint(((-v) * 31) >> 5);
    return uint((v * 31) >> 5);
}

ivec3 sext3(uvec3 v, uvec3 bits)
{
    uvec3 sh = uvec3(32u) - bits;
    return ivec3(v << sh) >> ivec3(sh);
}

ivec3 unquantize3(ivec3 v, uint bits)
{
    return ivec3(unquantize(v.r, bits), unquantize(v.g, bits), unquantize(v.b, bits));
}

// Endpoint from its raw bits w: delta-decoded against the base endpoint w0 when transformed, sign
// extended for SFLOAT, unquantised.
ivec3 endpoint(uvec3 w, uvec3 w0, uint epb, uvec3 dbits, bool transformed)
{
    uvec3 v = transformed ? (w0 + uvec3(sext3(w, dbits))) & uvec3((1u << epb) - 1u) : w;
    ivec3 q = SIGNED ? sext3(v, uvec3(epb)) : ivec3(v);
    return unquantize3(q, epb);
}

void decode(uint bi)
{
    uvec4 blk = load_block16(bi);
    uint m2 = blk.x & 3u, m5 = blk.x & 31u;
    int mode = -1;
    uint pos;
    if (m2 < 2u) {
        mode = int(m2);
        pos = 2u;
    } else {
        pos = 5u;
        if (m2 == 2u) mode = int(m5 >> 2u) + 2;
        else if ((m5 >> 2u) < 4u) mode = int(m5 >> 2u) + 10;
    }
    if (mode < 0) {
        [[dont_unroll]] for (uint t = 0u; t < 16u; t++) {
            put_f32(t, uvec4(0u, 0u, 0u, F32_ONE));
        }
        return;
    }

    // gather the endpoint fields: w0..w3 = endpoints (r, g, b) of region 0 (w0, w1) and 1 (w2, w3).
    // Per mode, the specification's bit layout (Khronos Data Format Specification, BC6H mode
    // table) as runs: G(field, block bit, count, field bit) takes `count` bits from the block into
    // the field starting at `field bit`; R(...) does the same for runs stored highest bit first.
    // Straight-line code with constant positions (a run table compiles slowly on lavapipe).
    uvec3 w0 = uvec3(0u), w1 = uvec3(0u), w2 = uvec3(0u), w3 = uvec3(0u);
#define G(dst, pos, cnt, lo) dst |= bits128(blk, pos, cnt) << lo
#define R(dst, pos, cnt, lo) dst |= (bitfieldReverse(bits128(blk, pos, cnt)) >> (32u - cnt)) << lo
    switch (uint(mode)) {
    case 0u: // mode 00
        G(w2.g, 2u, 1u, 4u); G(w2.b, 3u, 1u, 4u); G(w3.b, 4u, 1u, 4u); G(w0.r, 5u, 10u, 0u); G(w0.g, 15u, 10u, 0u);
        G(w0.b, 25u, 10u, 0u); G(w1.r, 35u, 5u, 0u); G(w3.g, 40u, 1u, 4u); G(w2.g, 41u, 4u, 0u); G(w1.g, 45u, 5u, 0u);
        G(w3.b, 50u, 1u, 0u); G(w3.g, 51u, 4u, 0u); G(w1.b, 55u, 5u, 0u); G(w3.b, 60u, 1u, 1u); G(w2.b, 61u, 4u, 0u);
        G(w2.r, 65u, 5u, 0u); G(w3.b, 70u, 1u, 2u); G(w3.r, 71u, 5u, 0u); G(w3.b, 76u, 1u, 3u);
        break;
    case 1u: // mode 01
        G(w2.g, 2u, 1u, 5u); G(w3.g, 3u, 1u, 4u); G(w3.g, 4u, 1u, 5u); G(w0.r, 5u, 7u, 0u); G(w3.b, 12u, 1u, 0u);
        G(w3.b, 13u, 1u, 1u); G(w2.b, 14u, 1u, 4u); G(w0.g, 15u, 7u, 0u); G(w2.b, 22u, 1u, 5u); G(w3.b, 23u, 1u, 2u);
        G(w2.g, 24u, 1u, 4u); G(w0.b, 25u, 7u, 0u); G(w3.b, 32u, 1u, 3u); G(w3.b, 33u, 1u, 5u); G(w3.b, 34u, 1u, 4u);
        G(w1.r, 35u, 6u, 0u); G(w2.g, 41u, 4u, 0u); G(w1.g, 45u, 6u, 0u); G(w3.g, 51u, 4u, 0u); G(w1.b, 55u, 6u, 0u);
        G(w2.b, 61u, 4u, 0u); G(w2.r, 65u, 6u, 0u); G(w3.r, 71u, 6u, 0u);
        break;
    case 2u: // mode 00010
        G(w0.r, 5u, 10u, 0u); G(w0.g, 15u, 10u, 0u); G(w0.b, 25u, 10u, 0u); G(w1.r, 35u, 5u, 0u);
        G(w0.r, 40u, 1u, 10u); G(w2.g, 41u, 4u, 0u); G(w1.g, 45u, 4u, 0u); G(w0.g, 49u, 1u, 10u);
        G(w3.b, 50u, 1u, 0u); G(w3.g, 51u, 4u, 0u); G(w1.b, 55u, 4u, 0u); G(w0.b, 59u, 1u, 10u); G(w3.b, 60u, 1u, 1u);
        G(w2.b, 61u, 4u, 0u); G(w2.r, 65u, 5u, 0u); G(w3.b, 70u, 1u, 2u); G(w3.r, 71u, 5u, 0u); G(w3.b, 76u, 1u, 3u);
        break;
    case 3u: // mode 00110
        G(w0.r, 5u, 10u, 0u); G(w0.g, 15u, 10u, 0u); G(w0.b, 25u, 10u, 0u); G(w1.r, 35u, 4u, 0u);
        G(w0.r, 39u, 1u, 10u); G(w3.g, 40u, 1u, 4u); G(w2.g, 41u, 4u, 0u); G(w1.g, 45u, 5u, 0u);
        G(w0.g, 50u, 1u, 10u); G(w3.g, 51u, 4u, 0u); G(w1.b, 55u, 4u, 0u); G(w0.b, 59u, 1u, 10u);
        G(w3.b, 60u, 1u, 1u); G(w2.b, 61u, 4u, 0u); G(w2.r, 65u, 4u, 0u); G(w3.b, 69u, 1u, 0u); G(w3.b, 70u, 1u, 2u);
        G(w3.r, 71u, 4u, 0u); G(w2.g, 75u, 1u, 4u); G(w3.b, 76u, 1u, 3u);
        break;
    case 4u: // mode 01010
        G(w0.r, 5u, 10u, 0u); G(w0.g, 15u, 10u, 0u); G(w0.b, 25u, 10u, 0u); G(w1.r, 35u, 4u, 0u);
        G(w0.r, 39u, 1u, 10u); G(w2.b, 40u, 1u, 4u); G(w2.g, 41u, 4u, 0u); G(w1.g, 45u, 4u, 0u);
        G(w0.g, 49u, 1u, 10u); G(w3.b, 50u, 1u, 0u); G(w3.g, 51u, 4u, 0u); G(w1.b, 55u, 5u, 0u);
        G(w0.b, 60u, 1u, 10u); G(w2.b, 61u, 4u, 0u); G(w2.r, 65u, 4u, 0u); G(w3.b, 69u, 1u, 1u); G(w3.b, 70u, 1u, 2u);
        G(w3.r, 71u, 4u, 0u); G(w3.b, 75u, 1u, 4u); G(w3.b, 76u, 1u, 3u);
        break;
    case 5u: // mode 01110
        G(w0.r, 5u, 9u, 0u); G(w2.b, 14u, 1u, 4u); G(w0.g, 15u, 9u, 0u); G(w2.g, 24u, 1u, 4u); G(w0.b, 25u, 9u, 0u);
        G(w3.b, 34u, 1u, 4u); G(w1.r, 35u, 5u, 0u); G(w3.g, 40u, 1u, 4u); G(w2.g, 41u, 4u, 0u); G(w1.g, 45u, 5u, 0u);
        G(w3.b, 50u, 1u, 0u); G(w3.g, 51u, 4u, 0u); G(w1.b, 55u, 5u, 0u); G(w3.b, 60u, 1u, 1u); G(w2.b, 61u, 4u, 0u);
        G(w2.r, 65u, 5u, 0u); G(w3.b, 70u, 1u, 2u); G(w3.r, 71u, 5u, 0u); G(w3.b, 76u, 1u, 3u);
        break;
    case 6u: // mode 10010
        G(w0.r, 5u, 8u, 0u); G(w3.g, 13u, 1u, 4u); G(w2.b, 14u, 1u, 4u); G(w0.g, 15u, 8u, 0u); G(w3.b, 23u, 1u, 2u);
        G(w2.g, 24u, 1u, 4u); G(w0.b, 25u, 8u, 0u); G(w3.b, 33u, 1u, 3u); G(w3.b, 34u, 1u, 4u); G(w1.r, 35u, 6u, 0u);
        G(w2.g, 41u, 4u, 0u); G(w1.g, 45u, 5u, 0u); G(w3.b, 50u, 1u, 0u); G(w3.g, 51u, 4u, 0u); G(w1.b, 55u, 5u, 0u);
        G(w3.b, 60u, 1u, 1u); G(w2.b, 61u, 4u, 0u); G(w2.r, 65u, 6u, 0u); G(w3.r, 71u, 6u, 0u);
        break;
    case 7u: // mode 10110
        G(w0.r, 5u, 8u, 0u); G(w3.b, 13u, 1u, 0u); G(w2.b, 14u, 1u, 4u); G(w0.g, 15u, 8u, 0u); G(w2.g, 23u, 1u, 5u);
        G(w2.g, 24u, 1u, 4u); G(w0.b, 25u, 8u, 0u); G(w3.g, 33u, 1u, 5u); G(w3.b, 34u, 1u, 4u); G(w1.r, 35u, 5u, 0u);
        G(w3.g, 40u, 1u, 4u); G(w2.g, 41u, 4u, 0u); G(w1.g, 45u, 6u, 0u); G(w3.g, 51u, 4u, 0u); G(w1.b, 55u, 5u, 0u);
        G(w3.b, 60u, 1u, 1u); G(w2.b, 61u, 4u, 0u); G(w2.r, 65u, 5u, 0u); G(w3.b, 70u, 1u, 2u); G(w3.r, 71u, 5u, 0u);
        G(w3.b, 76u, 1u, 3u);
        break;
    case 8u: // mode 11010
        G(w0.r, 5u, 8u, 0u); G(w3.b, 13u, 1u, 1u); G(w2.b, 14u, 1u, 4u); G(w0.g, 15u, 8u, 0u); G(w2.b, 23u, 1u, 5u);
        G(w2.g, 24u, 1u, 4u); G(w0.b, 25u, 8u, 0u); G(w3.b, 33u, 1u, 5u); G(w3.b, 34u, 1u, 4u); G(w1.r, 35u, 5u, 0u);
        G(w3.g, 40u, 1u, 4u); G(w2.g, 41u, 4u, 0u); G(w1.g, 45u, 5u, 0u); G(w3.b, 50u, 1u, 0u); G(w3.g, 51u, 4u, 0u);
        G(w1.b, 55u, 6u, 0u); G(w2.b, 61u, 4u, 0u); G(w2.r, 65u, 5u, 0u); G(w3.b, 70u, 1u, 2u); G(w3.r, 71u, 5u, 0u);
        G(w3.b, 76u, 1u, 3u);
        break;
    case 9u: // mode 11110
        G(w0.r, 5u, 6u, 0u); G(w3.g, 11u, 1u, 4u); G(w3.b, 12u, 1u, 0u); G(w3.b, 13u, 1u, 1u); G(w2.b, 14u, 1u, 4u);
        G(w0.g, 15u, 6u, 0u); G(w2.g, 21u, 1u, 5u); G(w2.b, 22u, 1u, 5u); G(w3.b, 23u, 1u, 2u); G(w2.g, 24u, 1u, 4u);
        G(w0.b, 25u, 6u, 0u); G(w3.g, 31u, 1u, 5u); G(w3.b, 32u, 1u, 3u); G(w3.b, 33u, 1u, 5u); G(w3.b, 34u, 1u, 4u);
        G(w1.r, 35u, 6u, 0u); G(w2.g, 41u, 4u, 0u); G(w1.g, 45u, 6u, 0u); G(w3.g, 51u, 4u, 0u); G(w1.b, 55u, 6u, 0u);
        G(w2.b, 61u, 4u, 0u); G(w2.r, 65u, 6u, 0u); G(w3.r, 71u, 6u, 0u);
        break;
    case 10u: // mode 00011
        G(w0.r, 5u, 10u, 0u); G(w0.g, 15u, 10u, 0u); G(w0.b, 25u, 10u, 0u); G(w1.r, 35u, 10u, 0u);
        G(w1.g, 45u, 10u, 0u); G(w1.b, 55u, 10u, 0u);
        break;
    case 11u: // mode 00111
        G(w0.r, 5u, 10u, 0u); G(w0.g, 15u, 10u, 0u); G(w0.b, 25u, 10u, 0u); G(w1.r, 35u, 9u, 0u);
        G(w0.r, 44u, 1u, 10u); G(w1.g, 45u, 9u, 0u); G(w0.g, 54u, 1u, 10u); G(w1.b, 55u, 9u, 0u);
        G(w0.b, 64u, 1u, 10u);
        break;
    case 12u: // mode 01011
        G(w0.r, 5u, 10u, 0u); G(w0.g, 15u, 10u, 0u); G(w0.b, 25u, 10u, 0u); G(w1.r, 35u, 8u, 0u);
        G(w0.r, 43u, 1u, 11u); G(w0.r, 44u, 1u, 10u); G(w1.g, 45u, 8u, 0u); G(w0.g, 53u, 1u, 11u);
        G(w0.g, 54u, 1u, 10u); G(w1.b, 55u, 8u, 0u); G(w0.b, 63u, 1u, 11u); G(w0.b, 64u, 1u, 10u);
        break;
    case 13u: // mode 01111
        G(w0.r, 5u, 10u, 0u); G(w0.g, 15u, 10u, 0u); G(w0.b, 25u, 10u, 0u); G(w1.r, 35u, 4u, 0u);
        R(w0.r, 39u, 6u, 10u); G(w1.g, 45u, 4u, 0u); R(w0.g, 49u, 6u, 10u); G(w1.b, 55u, 4u, 0u);
        R(w0.b, 59u, 6u, 10u);
        break;

    }
#undef G
#undef R

    uint mp = bc6_mode_params(uint(mode)); // see BC6_MODES in bptc_tables.glsl
    uint ns = mp & 15u, epb = (mp >> 8u) & 255u;
    uvec3 dbits = uvec3((mp >> 16u) & 15u, (mp >> 20u) & 15u, (mp >> 24u) & 15u);
    bool transformed = ((mp >> 4u) & 15u) != 0u;
    ivec3 e0 = endpoint(w0, w0, epb, dbits, false);
    ivec3 e1 = endpoint(w1, w0, epb, dbits, transformed);
    ivec3 e2 = endpoint(w2, w0, epb, dbits, transformed);
    ivec3 e3 = endpoint(w3, w0, epb, dbits, transformed);

    uint part = 0u, ib, ipos;
    if (ns == 2u) {
        part = bits128(blk, 77u, 5u);
        ib = 3u;
        ipos = 82u;
    } else {
        ib = 4u;
        ipos = 65u;
    }
    [[dont_unroll]] for (uint t = 0u; t < 16u; t++) {
        uint s = bptc_subset(ns, part, t);
        uint n = bptc_is_anchor(ns, part, t) ? ib - 1u : ib;
        uint idx = bits128(blk, ipos, n);
        ipos += n;
        int w = int(bptc_weight(ib, idx));
        ivec3 a = s == 0u ? e0 : e2, b = s == 0u ? e1 : e3;
        ivec3 v = (a * (64 - w) + b * w + 32) >> 6;
        uvec4 o = uvec4(half_to_float_bits(finish_unquantize(v.r)), half_to_float_bits(finish_unquantize(v.g)),
                        half_to_float_bits(finish_unquantize(v.b)), F32_ONE);
        put_f32(t, o);
    }
}

void main()
{
    uint bi = block_index();
    if (bi != NO_BLOCK) decode(bi);
    flush_outputs(bi);
}

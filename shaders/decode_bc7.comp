#version 450
// decode_bc7.comp - BC7 blocks to RGBA8, bit-identical to src/codec/bc7.c: all 8 modes, every
// partition, rotation and index selection; an invalid block (no mode bit in the first byte) decodes
// to transparent black (0, 0, 0, 0).
#include "decode_common.glsl"
#include "table_lookup.glsl"

const uint OUT_WORDS = 1u;
#include "decode_output.glsl"

// Per mode (0..7), packed 4 bits per mode (mode m in bits 4m..4m+3): subsets, partition bits,
// rotation bits, index-selection bits, colour bits, alpha bits, p-bits per endpoint, shared p-bits
// per subset, index bits, second index bits. Packed constants instead of arrays: no dynamic array
// indexing, which CPU implementations (lavapipe) compile slowly.
const uint M_NS = 0x21112323u;
const uint M_PB = 0x60006664u;
const uint M_RB = 0x00220000u;
const uint M_ISB = 0x00010000u;
const uint M_CB = 0x57757564u;
const uint M_AB = 0x57860000u;
const uint M_EPB = 0x11001001u;
const uint M_SPB = 0x00000010u;
const uint M_IB = 0x24222233u;
const uint M_IB2 = 0x00230000u;

uint mode_field(uint table, uint mode) { return (table >> (4u * mode)) & 15u; }

// Widens an n-bit value (n in 4..8) to 8 bits by replicating its top bits.
uint expand_bits(uint v, uint n)
{
    v <<= 8u - n;
    return (v | (v >> n)) & 255u;
}

uint lerp8(uint e0, uint e1, uint w)
{
    return ((64u - w) * e0 + w * e1 + 32u) >> 6u;
}

// Endpoint e (0 .. 2 * subsets - 1), widened to 8 bits per channel. The endpoint bits are stored
// channel-major (R of every endpoint, then G, B, A), then the p-bits (one per endpoint, or one per
// subset), then the indices.
uvec4 endpoint(uvec4 blk, uint base, uint nep, uint cb, uint ab, uint epb, uint spb, uint e)
{
    uvec4 v;
    v.r = bits128(blk, base + e * cb, cb);
    v.g = bits128(blk, base + (nep + e) * cb, cb);
    v.b = bits128(blk, base + (2u * nep + e) * cb, cb);
    v.a = ab != 0u ? bits128(blk, base + 3u * nep * cb + e * ab, ab) : 255u;
    uint pbase = base + 3u * nep * cb + nep * ab;
    uint cbits = cb, abits = ab;
    if (epb != 0u || spb != 0u) {
        uint p = bits128(blk, pbase + (epb != 0u ? e : e / 2u), 1u);
        v.rgb = (v.rgb << 1u) | p;
        cbits++;
        if (ab != 0u && epb != 0u) { // shared p-bits (mode 1) have no alpha
            v.a = (v.a << 1u) | p;
            abits++;
        }
    }
    v.rgb = uvec3(expand_bits(v.r, cbits), expand_bits(v.g, cbits), expand_bits(v.b, cbits));
    if (ab != 0u) v.a = expand_bits(v.a, abits);
    return v;
}

void decode(uint bi)
{
    uvec4 blk = load_block16(bi);
    uint first = blk.x & 255u;
    if (first == 0u) {
        [[dont_unroll]] for (uint t = 0u; t < 16u; t++) {
            put_u8(t, uvec4(0u));
        }
        return;
    }
    uint mode = uint(findLSB(first));
    uint pos = mode + 1u;
    uint ns = mode_field(M_NS, mode);
    uint part = bits128(blk, pos, mode_field(M_PB, mode));
    pos += mode_field(M_PB, mode);
    uint rotation = bits128(blk, pos, mode_field(M_RB, mode));
    pos += mode_field(M_RB, mode);
    uint isel = bits128(blk, pos, mode_field(M_ISB, mode));
    pos += mode_field(M_ISB, mode);
    uint ep_base = pos;
    uint nep = ns * 2u;
    uint cb = mode_field(M_CB, mode), ab = mode_field(M_AB, mode);
    uint epb = mode_field(M_EPB, mode), spb = mode_field(M_SPB, mode);
    uint ipos = ep_base + 3u * nep * cb + nep * ab + epb * nep + spb * ns; // primary indices
    uint ib = mode_field(M_IB, mode), ib2 = mode_field(M_IB2, mode);
    uint ipos2 = ipos + 16u * ib - ns; // secondary indices (modes 4 and 5)
    [[dont_unroll]] for (uint t = 0u; t < 16u; t++) {
        uint s = bptc_subset(ns, part, t);
        uint n1 = bptc_is_anchor(ns, part, t) ? ib - 1u : ib;
        uint i1 = bits128(blk, ipos, n1);
        ipos += n1;
        uvec4 e0 = endpoint(blk, ep_base, nep, cb, ab, epb, spb, 2u * s);
        uvec4 e1 = endpoint(blk, ep_base, nep, cb, ab, epb, spb, 2u * s + 1u);
        uvec4 c;
        if (ib2 != 0u) {
            uint n2 = t == 0u ? ib2 - 1u : ib2;
            uint i2 = bits128(blk, ipos2, n2);
            ipos2 += n2;
            // isel 0: colour uses the primary (2-bit) indices, alpha the secondary; 1 swaps them
            uint wc = isel == 0u ? bptc_weight(ib, i1) : bptc_weight(ib2, i2);
            uint wa = isel == 0u ? bptc_weight(ib2, i2) : bptc_weight(ib, i1);
            c = uvec4(lerp8(e0.r, e1.r, wc), lerp8(e0.g, e1.g, wc), lerp8(e0.b, e1.b, wc), lerp8(e0.a, e1.a, wa));
        } else {
            uint wc = bptc_weight(ib, i1);
            c = uvec4(lerp8(e0.r, e1.r, wc), lerp8(e0.g, e1.g, wc), lerp8(e0.b, e1.b, wc), lerp8(e0.a, e1.a, wc));
        }
        if (rotation == 1u) c = c.agbr;
        else if (rotation == 2u) c = c.rabg;
        else if (rotation == 3u) c = c.rgab;
        put_u8(t, c);
    }
}

void main()
{
    uint bi = block_index();
    if (bi != NO_BLOCK) decode(bi);
    flush_outputs(bi);
}

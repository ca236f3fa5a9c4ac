// enc_bc1.glsl - BC1 colour helpers shared by the BC1 encode shaders: texel loading (what bc1_enc.c
// reads: 16-bit values scaled to 0..255 in float, and the 8-bit alpha), 565 packing and palettes.
// Needs enc_bc_common.glsl.

const bool FOUR_ANY = VARIANT == KILN_EBC_BC3C;
const bool PUNCH = VARIANT == KILN_EBC_BC1A;
// output words per block and the colour half's first word
const uint C_BLOCK_WORDS = VARIANT == KILN_EBC_BC3C ? 4u : 2u;
const uint C_OFFSET = VARIANT == KILN_EBC_BC3C ? 2u : 0u;

// Channel weights (bc1_enc.c: 1, or 0.299 / 0.587 / 0.114 times 3) and their square roots (host).
vec3 chan_w() { return (pc.flags & 256u) != 0u ? vec3(uintBitsToFloat(0x3f65a1cau), uintBitsToFloat(0x3fe16873u), uintBitsToFloat(0x3eaf1aa0u)) : vec3(1.0); }
vec3 chan_sw() { return vec3(uintBitsToFloat(pc.sw0), uintBitsToFloat(pc.sw1), uintBitsToFloat(pc.sw2)); }

// Colour (0..255 float, as rgba16 * (255/65535)) and 8-bit alpha of texel t of block b.
void load_texel(uint b, uint t, out vec3 c, out uint a8)
{
    uint i = texel_index(b, t);
    uvec4 u16;
    if (INPUT_U8 != 0u) {
        uint w = src.words[i];
        uvec4 u8 = uvec4(w & 255u, (w >> 8u) & 255u, (w >> 16u) & 255u, w >> 24u);
        u16 = u8 * 257u;
        a8 = u8.w;
    } else {
        uint w0 = src.words[2u * i], w1 = src.words[2u * i + 1u];
        u16 = uvec4(w0 & 65535u, w0 >> 16u, w1 & 65535u, 0u);
        a8 = (w1 >> 16u) & 255u;
    }
    c = mr3s(vec3(u16.xyz), F_255_65535);
}

int expand5(int q) { return (q << 3) | (q >> 2); }
int expand6(int q) { return (q << 2) | (q >> 4); }
ivec3 unpack565(uint c) { return ivec3(int((c >> 11u) & 31u), int((c >> 5u) & 63u), int(c & 31u)); }
ivec3 expand565(uint c) { ivec3 q = unpack565(c); return ivec3(expand5(q.x), expand6(q.y), expand5(q.z)); }

// bc1_enc.c b_quant565 / quant565: clamp to [0, 255], (int)(x * 31/255 + 0.5) (63/255 for green).
uint quant565(vec3 a)
{
    precise vec3 c = a;
    c.x = c.x < 0.0 ? 0.0 : c.x; c.y = c.y < 0.0 ? 0.0 : c.y; c.z = c.z < 0.0 ? 0.0 : c.z;
    c.x = c.x > 255.0 ? 255.0 : c.x; c.y = c.y > 255.0 ? 255.0 : c.y; c.z = c.z > 255.0 ? 255.0 : c.z;
    precise float r = c.x * F_31_255 + 0.5, g = c.y * F_63_255 + 0.5, bl = c.z * F_31_255 + 0.5;
    return (uint(int(r)) << 11u) | (uint(int(g)) << 5u) | uint(int(bl));
}

// Output: the colour half of block b.
void write_colour(uint b, uint c0, uint c1, uint idx)
{
    uint o = b * C_BLOCK_WORDS + C_OFFSET;
    dst.words[o] = c0 | (c1 << 16u);
    dst.words[o + 1u] = idx;
}

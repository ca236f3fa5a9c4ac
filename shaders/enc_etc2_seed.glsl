// enc_etc2_seed.glsl - shared part of the ETC2 colour seed design (betsy; issue 4): the push constants, the
// source texels and the block packing of the T, H and planar modes. Included by enc_etc2_seed_kmeans.comp,
// enc_etc2_seed_th.comp, enc_etc2_seed_planar.comp and enc_etc2_seed_select.comp (host: src/gpu/
// gpu_encode_etc2_seed.c).
//
// Error metric (betsy's): the plain squared RGB difference in 8-bit units, summed over the 16 texels, as
// integers (at most 16 * 3 * 255^2 = 3121200 < 2^22, so an error and a 10-bit index fit in one uint key).
// Blocks: 64-bit big-endian words as the Khronos Data Format Specification ("Format RGB ETC2") lays them out;
// hi holds bits 63..32, lo bits 31..0; texel (x, y) uses selector bit j = x * 4 + y (MSB at 16 + j). The
// buffers hold the bytes in file order, so a word is swap32 of hi / lo.
//
// Candidate records (binding "cand" of the T/H, planar and select passes): 8 words per block, words 0..3 the
// T/H winner, 4..7 the planar winner, each {error, mode (2 T, 3 H, 4 planar), swap32(hi), swap32(lo)}.

layout(push_constant) uniform Push {
    uint width, height; // image size
    uint bx;            // blocks per row
    uint nblocks;       // blocks of the image
    uint block0;        // k-means / T/H: first block of this dispatch (the pair buffer holds one chunk)
    uint nchunk;        // k-means / T/H: blocks in this dispatch
    uint pad0, pad1;
} pc;

layout(std430, binding = 0) readonly buffer Src { uint w[]; } src;

// Texel p (row-major, 0..15) of block `block`, edge texels replicated into partial blocks.
uint read_px(uint block, uint p)
{
    uint x = min((block % pc.bx) * 4u + (p & 3u), pc.width - 1u);
    uint y = min((block / pc.bx) * 4u + (p >> 2u), pc.height - 1u);
    return src.w[y * pc.width + x];
}

ivec3 rgb_of(uint v) { return ivec3(int(v & 255u), int((v >> 8u) & 255u), int((v >> 16u) & 255u)); }

int sq3(ivec3 d) { return d.x * d.x + d.y * d.y + d.z * d.z; }

uint swap32(uint v) { return (v >> 24u) | ((v >> 8u) & 0xff00u) | ((v << 8u) & 0xff0000u) | (v << 24u); }

int sext3(int v) { return (v & 3) - (v & 4); }

// Selector bits of texel p (row-major) with 2-bit index idx.
uint sel_bits(uint p, uint idx)
{
    uint j = (p & 3u) * 4u + (p >> 2u);
    return ((idx >> 1u) << (16u + j)) | ((idx & 1u) << j);
}

// hi word of a T block: a = the single colour (paint 0), b = the colour painted with +-d (4-bit levels),
// d the distance index. R + dR is forced outside [0, 31]: underflow when possible, else overflow.
uint pack_t_hi(ivec3 a, ivec3 b, int d)
{
    uint ra = uint(a.x) >> 2u, rb = uint(a.x) & 3u;
    uint force = (ra + rb < 4u) ? (1u << 26u) : (7u << 29u);
    return force | (ra << 27u) | (rb << 24u) | (uint(a.y) << 20u) | (uint(a.z) << 16u) | (uint(b.x) << 12u) |
           (uint(b.y) << 8u) | (uint(b.z) << 4u) | ((uint(d) >> 1u) << 2u) | 2u | (uint(d) & 1u);
}

// hi word of an H block (colours already ordered so that (a >= b) == (d & 1), compared as R << 8 | G << 4 | B):
// R must stay inside [0, 31] (else it would read as T), G must leave it.
uint pack_h_hi(ivec3 a, ivec3 b, int d)
{
    uint r0 = uint(a.x), g0 = uint(a.y), b0 = uint(a.z);
    uint g1a = g0 >> 1u, g1b = g0 & 1u, b1a = b0 >> 3u, b1b = (b0 >> 1u) & 3u, b1c = b0 & 1u;
    uint hi = (r0 << 27u) | (g1a << 24u) | (g1b << 20u) | (b1a << 19u) | (b1b << 16u) | (b1c << 15u) | (uint(b.x) << 11u) |
              ((uint(b.y) >> 1u) << 8u) | ((uint(b.y) & 1u) << 7u) | (uint(b.z) << 3u) | ((uint(d) >> 2u) << 2u) | 2u |
              ((uint(d) >> 1u) & 1u);
    if (int(r0) + sext3(int(g1a)) < 0) hi |= 1u << 31u;
    uint x = (g1b << 1u) | b1a;
    hi |= (x + b1b < 4u) ? (1u << 18u) : (7u << 21u);
    return hi;
}

// Planar: O, H, V as 6-7-6 bit levels; hi and lo words.
uvec2 pack_planar(ivec3 o, ivec3 h, ivec3 v)
{
    uint ro = uint(o.x), go = uint(o.y), bo = uint(o.z);
    uint go1 = go >> 6u, go2 = go & 63u, bo1 = bo >> 5u, bo2 = (bo >> 3u) & 3u, bo3a = (bo >> 1u) & 3u, bo3b = bo & 1u;
    uint hi = (ro << 25u) | (go1 << 24u) | (go2 << 17u) | (bo1 << 16u) | (bo2 << 11u) | (bo3a << 8u) | (bo3b << 7u) |
              ((uint(h.x) >> 1u) << 2u) | 2u | (uint(h.x) & 1u);
    if (int(ro >> 2u) + sext3(int(((ro & 3u) << 1u) | go1)) < 0) hi |= 1u << 31u;   // R must not overflow
    if (int(go2 >> 2u) + sext3(int(((go2 & 3u) << 1u) | bo1)) < 0) hi |= 1u << 23u; // G must not overflow
    hi |= (bo2 + bo3a < 4u) ? (1u << 10u) : (7u << 13u);                             // B must overflow
    uint lo = (uint(h.y) << 25u) | (uint(h.z) << 19u) | (uint(v.x) << 13u) | (uint(v.y) << 6u) | uint(v.z);
    return uvec2(hi, lo);
}

ivec3 x676(ivec3 q) { return ivec3((q.x << 2) | (q.x >> 4), (q.y << 1) | (q.y >> 6), (q.z << 2) | (q.z >> 4)); }

// Decoded planar colour of texel (x, y) from the expanded O, H, V.
ivec3 planar_px(ivec3 o, ivec3 h, ivec3 v, int x, int y)
{
    return clamp((x * (h - o) + y * (v - o) + 4 * o + 2) >> 2, ivec3(0), ivec3(255));
}

#version 450
// enc_etc_dither.comp - params->dither for ETC1 and ETC2 RGB / RGBA colour (kiln strategy, helper
// gpudither): a post-pass over blocks the GPU colour passes finished (equal to the CPU's), one
// invocation per block. The CPU dithers only the final selectors (etc1_enc.c kiln__etc_reselect with
// dither = 1, after the search): mode, colours, tables and flip stay; each opaque pixel's target is
// its colour plus the carried error (kept in 1/16 units, rounded half away from zero), clamped to
// 0..255; the selector is the first palette entry of least weighted squared error (weights 1 or
// ETC_PW_*); the error target - entry is carried 7 right, 3 down-left, 5 down, 1 down-right (in 1/16
// units; what would leave the block is dropped). All integers, so the bytes are the CPU's. This shader
// decodes the mode and palette from the block bits as kiln__etc_palette defines them (ETC1:
// individual / differential; ETC2 = 1 also T and H; planar blocks have no selectors and stay) and
// rewrites the selector half. A1 = 1 (ETC2 RGB A1): there is no individual mode (bit 33 is the opaque
// bit); a block with a pixel below the alpha threshold (bit 33 clear) has modifiers 0 at entries 0 and 2 and
// entry 2 invalid (transparent); its transparent pixels get selector 2 and carry nothing (kiln__etc_palette,
// kiln__etc_reselect with src->transparent / src->opaque).
// Bindings: 0 = the image's RGBA8 words (w x h, edge-replicated reads), 1 = the blocks as the colour
// passes wrote them (words stride * block + off, +1), 2 = the same words with the new selectors.
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ETC2 = 0;
layout(constant_id = 2) const uint A1 = 0;

layout(push_constant) uniform Push {
    uint width, height;
    uint bx;
    uint nblocks;
    uint stride; // words per block (2, or 4 for ETC2 RGBA)
    uint off;    // word offset of the colour half
    int pw0, pw1, pw2;
    uint alpha_threshold; // A1
} pc;

layout(std430, binding = 0) readonly buffer Src { uint w[]; } src;
layout(std430, binding = 1) readonly buffer Blk { uint w[]; } blocks;
layout(std430, binding = 2) writeonly buffer Dst { uint w[]; } dst;

const int MODS[32] = int[32](2, 8, -2, -8, 5, 17, -5, -17, 9, 29, -9, -29, 13, 42, -13, -42,
                             18, 60, -18, -60, 24, 80, -24, -80, 33, 106, -33, -106, 47, 183, -47, -183);
const int DIST[8] = int[8](3, 6, 11, 16, 23, 32, 41, 64);

uint bswap(uint x) { return (x >> 24u) | ((x >> 8u) & 0xff00u) | ((x << 8u) & 0xff0000u) | (x << 24u); }
int x4(int v) { return (v << 4) | v; }
int x5(int v) { return (v << 3) | (v >> 2); }
int sext3(int v) { return v >= 4 ? v - 8 : v; }
int c255(int v) { return clamp(v, 0, 255); }

void main()
{
    uint blk = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (blk >= pc.nblocks) return;
    const uint o = blk * pc.stride + pc.off;
    const uint hi = bswap(blocks.w[o]);
    dst.w[o] = blocks.w[o];
    const bool diff = A1 != 0u || ((hi >> 1u) & 1u) != 0u;
    const bool transparent = A1 != 0u && ((hi >> 1u) & 1u) == 0u;
    const bool flip = (hi & 1u) != 0u;
    // mode 0 individual, 1 differential, 2 T, 3 H, 4 planar
    int mode = diff ? 1 : 0;
    ivec3 c0 = ivec3(0), c1 = ivec3(0);
    if (diff) {
        [[unroll]] for (int ch = 0; ch < 3; ch++) {
            int a = int((hi >> uint(27 - 8 * ch)) & 31u);
            int b = a + sext3(int((hi >> uint(24 - 8 * ch)) & 7u));
            c0[ch] = a;
            c1[ch] = b;
            if (ETC2 != 0u && mode == 1 && (b < 0 || b > 31)) mode = 2 + ch;
        }
    } else {
        [[unroll]] for (int ch = 0; ch < 3; ch++) {
            c0[ch] = int((hi >> uint(28 - 8 * ch)) & 15u);
            c1[ch] = int((hi >> uint(24 - 8 * ch)) & 15u);
        }
    }
    if (mode == 4) { // planar: no selectors
        dst.w[o + 1u] = blocks.w[o + 1u];
        return;
    }
    // the palettes: pal[sub-block][entry] (T / H: one palette for the block, in both slots)
    ivec3 pal[2][4];
    if (mode <= 1) {
        const int tb[2] = int[2](int((hi >> 5u) & 7u), int((hi >> 2u) & 7u));
        [[unroll]] for (int sb = 0; sb < 2; sb++) {
            ivec3 base = sb == 0 ? c0 : c1;
            base = mode == 0 ? ivec3(x4(base.x), x4(base.y), x4(base.z)) : ivec3(x5(base.x), x5(base.y), x5(base.z));
            [[unroll]] for (int k = 0; k < 4; k++) {
                int m = transparent && (k & 1) == 0 ? 0 : MODS[tb[sb] * 4 + k];
                pal[sb][k] = ivec3(c255(base.x + m), c255(base.y + m), c255(base.z + m));
            }
        }
    } else {
        ivec3 a, b;
        int d;
        if (mode == 2) { // T
            a = ivec3(int(((hi >> 27u) & 3u) << 2u | ((hi >> 24u) & 3u)), int((hi >> 20u) & 15u), int((hi >> 16u) & 15u));
            b = ivec3(int((hi >> 12u) & 15u), int((hi >> 8u) & 15u), int((hi >> 4u) & 15u));
            d = DIST[((hi >> 2u) & 3u) << 1u | (hi & 1u)];
        } else { // H
            a = ivec3(int((hi >> 27u) & 15u), int(((hi >> 24u) & 7u) << 1u | ((hi >> 20u) & 1u)),
                      int(((hi >> 19u) & 1u) << 3u | ((hi >> 16u) & 3u) << 1u | ((hi >> 15u) & 1u)));
            b = ivec3(int((hi >> 11u) & 15u), int(((hi >> 8u) & 7u) << 1u | ((hi >> 7u) & 1u)), int((hi >> 3u) & 15u));
            int va = (a.x << 8) | (a.y << 4) | a.z, vb = (b.x << 8) | (b.y << 4) | b.z;
            d = DIST[((hi >> 2u) & 1u) << 2u | (hi & 1u) << 1u | (va >= vb ? 1u : 0u)];
        }
        a = ivec3(x4(a.x), x4(a.y), x4(a.z));
        b = ivec3(x4(b.x), x4(b.y), x4(b.z));
        ivec3 p[4];
        if (mode == 2) {
            p[0] = a;
            p[1] = ivec3(c255(b.x + d), c255(b.y + d), c255(b.z + d));
            p[2] = b;
            p[3] = ivec3(c255(b.x - d), c255(b.y - d), c255(b.z - d));
        } else {
            p[0] = ivec3(c255(a.x + d), c255(a.y + d), c255(a.z + d));
            p[1] = ivec3(c255(a.x - d), c255(a.y - d), c255(a.z - d));
            p[2] = ivec3(c255(b.x + d), c255(b.y + d), c255(b.z + d));
            p[3] = ivec3(c255(b.x - d), c255(b.y - d), c255(b.z - d));
        }
        [[unroll]] for (int k = 0; k < 4; k++) { pal[0][k] = p[k]; pal[1][k] = p[k]; }
    }
    const ivec3 w = ivec3(pc.pw0, pc.pw1, pc.pw2);
    const uint bxx = blk % pc.bx, byy = blk / pc.bx;
    ivec3 carry[16];
    [[unroll]] for (int p = 0; p < 16; p++) carry[p] = ivec3(0);
    uint sel = 0u;
    for (int p = 0; p < 16; p++) {
        const int x = p & 3, y = p >> 2;
        uint px = min(bxx * 4u + uint(x), pc.width - 1u), py = min(byy * 4u + uint(y), pc.height - 1u);
        uint word = src.w[py * pc.width + px];
        if (A1 != 0u && (word >> 24u) < pc.alpha_threshold) { // transparent pixel: selector 2, no carry
            sel |= 1u << uint(16 + x * 4 + y);
            continue;
        }
        ivec3 c = ivec3(int(word & 255u), int((word >> 8u) & 255u), int((word >> 16u) & 255u));
        ivec3 tgt;
        [[unroll]] for (int ch = 0; ch < 3; ch++) {
            int cr = carry[p][ch];
            tgt[ch] = c255(c[ch] + (cr >= 0 ? (cr + 8) >> 4 : -((-cr + 8) >> 4)));
        }
        const int sb = mode >= 2 ? 0 : (flip ? (y >= 2 ? 1 : 0) : (x >= 2 ? 1 : 0));
        int bk = 0;
        uint be = 0xffffffffu;
        [[unroll]] for (int k = 0; k < 4; k++) {
            if (transparent && k == 2) continue; // the transparent entry
            ivec3 dd = tgt - pal[sb][k];
            uint ek = uint(w.x * dd.x * dd.x + w.y * dd.y * dd.y + w.z * dd.z * dd.z);
            if (ek < be) { be = ek; bk = k; }
        }
        const int j = x * 4 + y;
        sel |= (uint(bk) >> 1u) << uint(16 + j) | (uint(bk) & 1u) << uint(j);
        ivec3 r = tgt - pal[sb][bk];
        if (x < 3) carry[p + 1] += r * 7;
        if (y < 3) {
            if (x > 0) carry[p + 3] += r * 3;
            carry[p + 4] += r * 5;
            if (x < 3) carry[p + 5] += r;
        }
    }
    dst.w[o + 1u] = bswap(sel);
}

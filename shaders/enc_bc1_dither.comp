#version 450
// enc_bc1_dither.comp - params->dither for BC1 / BC1a / BC3 colour (kiln strategy, helper gpudither):
// a post-pass after enc_bc1.comp / enc_bc1_cf.comp, one invocation per block. bc1_enc.c dithers only
// in finish(): the endpoints its search chose stay, and select_indices_dither re-picks every index
// with Floyd-Steinberg diffusion of the clamped texel's error inside the block (raster order; 7/16
// right, 3/16 down-left, 5/16 down, 1/16 down-right; what would leave the block is dropped). This
// shader reads the endpoints the encode pass wrote (equal to the CPU's) and repeats that loop with the
// same float operations in the same order: `precise`, products through mr() (no fused multiply-add),
// the palette as bc.c decodes it (four-colour when c0 > c1 or for BC3, else three entries), the
// channel weights of the error (1 or perceptual), first entry on ties. Transparent texels of BC1a
// (alpha below the threshold) keep index 3 and diffuse nothing. Blocks the host re-encodes on the
// CPU (the fallback bits / words) get garbage here and are overwritten, dithered, by the CPU encoder.
#include "enc_bc_common.glsl"
layout(local_size_x_id = 0) in;
#include "enc_bc1.glsl"

void main()
{
    uint b = group_linear() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (b >= pc.blocks_x * pc.blocks_y) return;
    const uint o = b * C_BLOCK_WORDS + C_OFFSET;
    const uint w0 = dst.words[o];
    const uint c0 = w0 & 65535u, c1 = w0 >> 16u;
    const bool four = FOUR_ANY || c0 > c1;
    const int ne = four ? 4 : 3;
    ivec3 e0 = expand565(c0), e1 = expand565(c1);
    ivec3 pal[4];
    pal[0] = e0;
    pal[1] = e1;
    if (four) { pal[2] = (2 * e0 + e1) / 3; pal[3] = (e0 + 2 * e1) / 3; }
    else { pal[2] = (e0 + e1) / 2; pal[3] = ivec3(0); }
    const vec3 cw = chan_w();
    const uint thr = pc.flags & 255u;
    precise vec3 work[16];
    uint tbits = 0u;
    for (uint t = 0u; t < 16u; t++) {
        uint a8;
        vec3 c;
        load_texel(b, t, c, a8);
        work[t] = c;
        if (PUNCH && a8 < thr) tbits |= 3u << (2u * t);
    }
    uint idx = 0u;
    for (int t = 0; t < 16; t++) {
        if (((tbits >> (2u * uint(t))) & 1u) != 0u) continue;
        precise vec3 x;
        [[unroll]] for (int ch = 0; ch < 3; ch++) {
            float v = work[t][ch];
            x[ch] = v < 0.0 ? 0.0 : v > 255.0 ? 255.0 : v;
        }
        int bi = 0;
        precise float be = 0.0;
        for (int i = 0; i < ne; i++) {
            precise float e = 0.0;
            [[unroll]] for (int ch = 0; ch < 3; ch++) {
                precise float d = x[ch] - float(pal[i][ch]);
                e += mr(mr(cw[ch], d), d);
            }
            if (i == 0 || e < be) { be = e; bi = i; }
        }
        idx |= uint(bi) << (2u * uint(t));
        const int tx = t & 3, ty = t >> 2;
        precise vec3 er = x - vec3(pal[bi]);
        if (tx < 3) work[t + 1] += mr3s(er, 0.4375);
        if (ty < 3) {
            if (tx > 0) work[t + 3] += mr3s(er, 0.1875);
            work[t + 4] += mr3s(er, 0.3125);
            if (tx < 3) work[t + 5] += mr3s(er, 0.0625);
        }
    }
    dst.words[o + 1u] = idx | tbits;
}

#version 450
// enc_bc4_dither.comp - params->dither for BC4 / BC5 (UNORM, SNORM; kiln strategy, helper gpudither):
// a post-pass after enc_bc4.comp / enc_bc4_max*.comp, one invocation per channel task (block x
// channel). bc4_enc.c's redither keeps the endpoints the search chose and re-picks the indices with
// Floyd-Steinberg diffusion in 1/16 units, all in integers (raster order; err * 7 / 16 right,
// * 3 / 16 down-left, * 5 / 16 down, / 16 down-right, C division truncating toward zero; first
// index on ties); this shader repeats it on the endpoint bytes the encode pass wrote. The CPU does
// not dither the alpha half of BC3 (kiln__enc_bc3 calls kiln__enc_bc4_channel without it), so
// neither does the GPU: the host never runs this for BC3.
#include "enc_bc_common.glsl"
layout(local_size_x_id = 0) in;
#include "enc_bc4.glsl"

void main()
{
    uint task = group_linear() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    uint nblocks = pc.blocks_x * pc.blocks_y;
    if (task >= nblocks * TASK_CHANNELS) return;
    uint b = task / TASK_CHANNELS, ch = task % TASK_CHANNELS;
    int v[16];
    for (uint t = 0u; t < 16u; t++) v[t] = bc4_value(b, t, ch);
    const uint o = bc4_out_word(b, ch);
    const uint w0 = dst.words[o];
    int a = SIGNED_CH ? int(w0 << 24u) >> 24 : int(w0 & 255u);
    int bb = SIGNED_CH ? int(w0 << 16u) >> 24 : int((w0 >> 8u) & 255u);
    a = clamp(a, R_LO, R_HI); // SNORM -128 decodes as -127
    bb = clamp(bb, R_LO, R_HI);
    int pal[8];
    [[unroll]] for (int i = 0; i < 8; i++) pal[i] = bc4_pal(a, bb, i);
    int carry[16];
    [[unroll]] for (int t = 0; t < 16; t++) carry[t] = 0;
    uint lo = 0u, hi = 0u; // index bits 0..47
    for (int t = 0; t < 16; t++) {
        const int x = t & 3, y = t >> 2;
        const int target = clamp(v[t], R_LO, R_HI) * 16 + carry[t];
        int bi = 0, be = -1;
        [[unroll]] for (int i = 0; i < 8; i++) {
            int d = abs(target - pal[i] * 16);
            if (be < 0 || d < be) { be = d; bi = i; }
        }
        const int err = target - pal[bi] * 16;
        uint pos = 3u * uint(t);
        if (pos < 32u) {
            lo |= uint(bi) << pos;
            if (pos > 29u) hi |= uint(bi) >> (32u - pos);
        } else {
            hi |= uint(bi) << (pos - 32u);
        }
        if (x < 3) carry[t + 1] += tdiv(err * 7, 16);
        if (y < 3) {
            if (x > 0) carry[t + 3] += tdiv(err * 3, 16);
            carry[t + 4] += tdiv(err * 5, 16);
            if (x < 3) carry[t + 5] += tdiv(err, 16);
        }
    }
    dst.words[o] = (w0 & 65535u) | (lo << 16u);
    dst.words[o + 1u] = (lo >> 16u) | (hi << 16u);
}

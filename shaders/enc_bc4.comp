#version 450
// enc_bc4.comp - BC4 / BC5 / BC3-alpha channels at fast, normal and high quality, kiln strategy: one
// invocation per channel task (block x channel), the same search as src/codec/bc4_enc.c, so the bytes
// are identical. Max quality runs enc_bc4_max.comp.
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
    Best best = heuristic(v, (pc.flags >> 10u) & 3u); // quality from the push constants
    uvec2 w = bc4_pack(v, best.a, best.b);
    uint o = bc4_out_word(b, ch);
    dst.words[o] = w.x;
    dst.words[o + 1u] = w.y;
}

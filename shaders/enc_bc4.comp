#version 450
// enc_bc4.comp - BC4 / BC5 / BC3-alpha channels at fast, normal and high quality, kiln strategy: one
// invocation per channel task (block x channel), the same search as src/codec/bc4_enc.c, so the bytes
// are identical. Max quality runs enc_bc4_max_pool.comp, after this shader's pre-pass (MAX_LIST).
#include "enc_bc_common.glsl"
layout(local_size_x_id = 0) in;
// constant_id 5: 1 = the pre-pass of BC4 / BC5 max (helper bc4s): the high heuristic (error H) writes its
// block; a task with H > 0 (not proven optimal: the exact search may still find a pair below H) goes to the
// list in binding 2 (word 0 the count, then (task, H) word pairs from word 2), one atomicAdd per workgroup,
// for enc_bc4_max_pool.comp's list mode (which writes only the tasks it improves).
layout(constant_id = 5) const uint MAX_LIST = 0;
#include "enc_bc4.glsl"

shared uint s_n, s_base;

void main()
{
    uint task = group_linear() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    uint nblocks = pc.blocks_x * pc.blocks_y;
    if (MAX_LIST == 0u) {
        if (task >= nblocks * TASK_CHANNELS) return;
        uint b = task / TASK_CHANNELS, ch = task % TASK_CHANNELS;
        int v[16];
        for (uint t = 0u; t < 16u; t++) v[t] = bc4_value(b, t, ch);
        Best best = heuristic(v, (pc.flags >> 10u) & 3u); // quality from the push constants
        uvec2 w = bc4_pack(v, best.a, best.b);
        uint o = bc4_out_word(b, ch);
        dst.words[o] = w.x;
        dst.words[o + 1u] = w.y;
        return;
    }
    if (gl_LocalInvocationID.x == 0u) s_n = 0u;
    memoryBarrierShared();
    barrier();
    uint err = 0u, slot = 0u;
    if (task < nblocks * TASK_CHANNELS) {
        uint b = task / TASK_CHANNELS, ch = task % TASK_CHANNELS;
        int v[16];
        for (uint t = 0u; t < 16u; t++) v[t] = bc4_value(b, t, ch);
        Best best = heuristic(v, Q_HIGH);
        uvec2 w = bc4_pack(v, best.a, best.b);
        uint o = bc4_out_word(b, ch);
        dst.words[o] = w.x;
        dst.words[o + 1u] = w.y;
        err = best.err;
        if (err > 0u) slot = atomicAdd(s_n, 1u);
    }
    memoryBarrierShared();
    barrier();
    if (gl_LocalInvocationID.x == 0u && s_n > 0u) s_base = atomicAdd(fb.words[0], s_n);
    memoryBarrierShared();
    barrier();
    if (err > 0u) {
        const uint i = 2u + 2u * (s_base + slot);
        fb.words[i] = task;
        fb.words[i + 1u] = err;
    }
}

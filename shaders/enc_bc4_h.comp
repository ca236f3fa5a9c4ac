#version 450
// enc_bc4_h.comp - enc_bc4.comp's BC4 / BC5 max pre-pass (MAX_LIST) with the heuristic's pair errors on two texels
// at once in 16-bit floats (enc_bc4.glsl BC4_PAIR_HALF; helper bc4n): the host's choice where the device has
// shaderFloat16 (without it, or with KILN_GPU_BC4_F16=0: enc_bc4.comp)
#include "enc_bc_common.glsl"
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x_id = 0) in;
layout(constant_id = 5) const uint MAX_LIST = 1;
#define BC4_PAIR_HALF 1
// the local search skips the pairs its last two windows held (enc_bc4.glsl; the same result; H100 2026-11-27 11:46
// UTC, bc4 4096^2 max: 6.421, 6.424 -> 6.400, 6.408 ms)
#define BC4_LS_SKIP true
#include "enc_bc4.glsl"

shared uint s_n, s_base;

void main()
{
    uint task = group_linear() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    uint nblocks = pc.blocks_x * pc.blocks_y;
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

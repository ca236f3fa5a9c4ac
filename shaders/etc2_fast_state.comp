#version 450
// etc2_fast_state.comp - ETC2 RGB / RGBA colour at FAST on the pipelined path (helper etcring,
// src/gpu/gpu_encode_etc_ring.inc): turns enc_etc1.comp's ETC2 = 1 output (2 words per block, then a word per
// block: 0, or the block's error when it is above the T / H threshold) into the T / H pass's kiln_etc2_gpu_block
// states {err, 0, word 0, word 1} (gpu_etc2_th.h). Unflagged blocks get err 0, which the T / H gate never
// passes (the CPU's fast path does not try T / H for them either), so they are copied through; flagged blocks
// carry the error kiln__etc_fast_opaque hands to its T / H search. One invocation per block.
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Colour { uint col[]; };
layout(std430, binding = 1) writeonly buffer State { uvec4 st[]; };

layout(push_constant) uniform Push {
    uint nb; // blocks
} pc;

void main()
{
    uint b = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (b >= pc.nb) return;
    st[b] = uvec4(col[2u * pc.nb + b], 0u, col[2u * b], col[2u * b + 1u]);
}

#version 450
// mip_enc_etc2_state.comp - device-resident mip + encode of ETC2 RGB / RGBA above FAST and ETC2 RGB A1 (helper
// etc2res; src/gpu/gpu_mip_encode_etc.inc): after the ETC1-modes, planar and T / H passes, each block's state
// (gpu_etc2_th.h's kiln_etc2_gpu_block: 4 words, err, flags, the 8 packed bytes) is in binding 0; this puts the
// packed bytes (words 2..3) into words off..off+1 of each stride-word block of binding 1 (RGB and RGB A1: stride 2,
// off 0; RGBA: stride 4, off 2, next to the EAC alpha in words 0..1, the CPU's kiln__enc_etc2_rgba layout), so
// only the blocks come down. One invocation per block.
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer State { uint st[]; };
layout(std430, binding = 1) buffer Blocks { uint blk[]; };

layout(push_constant) uniform Push {
    uint nb;     // blocks of the level
    uint stride; // words per block in binding 1
    uint off;    // the colour's first word in a block
} pc;

void main()
{
    uint b = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (b >= pc.nb) return;
    blk[pc.stride * b + pc.off] = st[4u * b + 2u];
    blk[pc.stride * b + pc.off + 1u] = st[4u * b + 3u];
}

#version 450
// mip_enc_etc2_stitch.comp - device-resident mip + encode of ETC2 RGB / RGBA at FAST (owner mipetc;
// src/gpu/gpu_mip_encode_etc.inc): after the colour pass (enc_etc1.comp ETC2 = 1: 2 words per block into
// binding 0, then its T / H flag word per block) and, for RGBA (merge = 1), the EAC alpha pass
// (enc_eac.comp KIND 0: words 0..1 of each 4-word block of binding 1, its CPU flag word per block in
// binding 2), puts the colour into words off..off+1 of each stride-word block (RGBA: 4 and 2, the CPU's
// kiln__enc_etc2_rgba layout; RGB: 2 and 0) and writes the colour's flag (RGBA: ORed into the alpha's) to
// binding 2, so that the gather (mip_enc_gather.comp, a word per block) sends a block to the CPU encoder
// when a pass asks and only the blocks come down. One invocation per block.
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Colour { uint col[]; };
layout(std430, binding = 1) buffer Blocks { uint blk[]; };
layout(std430, binding = 2) buffer Flags { uint fl[]; };

layout(push_constant) uniform Push {
    uint nb;     // blocks of the level
    uint stride; // words per block in binding 1
    uint off;    // the colour's first word in a block
    uint merge;  // 1: OR the colour's flag into binding 2's, 0: write it
} pc;

void main()
{
    uint b = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (b >= pc.nb) return;
    blk[pc.stride * b + pc.off] = col[2u * b];
    blk[pc.stride * b + pc.off + 1u] = col[2u * b + 1u];
    bool f = col[2u * pc.nb + b] != 0u;
    if (pc.merge != 0u) f = f || fl[b] != 0u;
    fl[b] = f ? 1u : 0u;
}

#version 450
// mip_enc_eac_targets.comp - device-resident mip + encode of signed EAC R11 / RG11 (owner mipetc;
// src/gpu/gpu_mip_encode_etc.inc): the int32 targets enc_eac.comp (KIND 2, INMODE 1) reads, from a level's
// RGBA8 words. A signed target of an 8-bit texel depends only on its byte, so the host computes the 256
// targets with the CPU's own arithmetic (gpu_encode_etc.c target_of, as eac_enc.c) and this pass looks them
// up: targets[i * nch + c] = table[byte c of texel i]. One invocation per texel.
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Texels { uint tex[]; };
layout(std430, binding = 1) writeonly buffer Targets { int tg[]; };
layout(std430, binding = 2) readonly buffer Table { int table[]; };

layout(push_constant) uniform Push {
    uint n;   // texels of the level
    uint nch; // channels per texel (1: R11, 2: RG11)
} pc;

void main()
{
    uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (i >= pc.n) return;
    uint t = tex[i];
    for (uint c = 0u; c < pc.nch; c++) tg[i * pc.nch + c] = table[(t >> (8u * c)) & 255u];
}

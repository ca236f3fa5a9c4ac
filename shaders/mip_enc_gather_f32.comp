#version 450
// mip_enc_gather_f32.comp - mip_enc_gather.comp for a FLOAT chain (owner mipres2; the 8-bit encoders on
// a float image, src/gpu/gpu_mip_encode.c): the same flags and record list, but each record carries the
// block's 16 RGBA32F texels (64 words, as float bits) so that the host fills the kiln_block exactly as
// encode.c's fetch_texel does for a float image (rgba8, rgba16 and f all come from the float).
// Record i (words 1 + 66 i ..): level, block index, 16 x 4 float words. The rest as below.
//
// (mip_enc_gather.comp:) after a BC encode
// pass over a level that is still on the device, gathers the texels of the blocks the pass flagged for
// the CPU encoder (binding 1 from word foff: a bit per block, or fstride words per block, flagged when any
// is nonzero: the cluster fit's word, EAC's word per job, ETC2 RGB FAST's T / H word) into a compact
// list, so that only those blocks' texels come back to the host, never the level. One invocation per
// block. (The 8-bit version's record i: words 1 + 18 i .., 16 RGBA8 texels.) Texels in the CPU's order
// (row-major, edge-replicated at the right and bottom borders, as encode.c's fetch_block).
// Word 0 of binding 2 counts the records (atomicAdd; record order does not matter: the host encodes
// each by its block index).
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Texels { uint tex[]; }; // RGBA32F texels as words
layout(std430, binding = 1) readonly buffer Flags { uint fb[]; };
layout(std430, binding = 2) buffer Records { uint rec[]; };

layout(push_constant) uniform Push {
    uint bx, by, w, h; // blocks per row, block rows, level size
    uint mode;         // 1: bit per block, 2: fstride words per block
    uint level;
    uint capacity;     // records that fit
    uint foff;         // first flag word in binding 1
    uint fstride;      // mode 2: flag words per block (>= 1)
} pc;

void main()
{
    uint b = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (b >= pc.bx * pc.by) return;
    bool flagged = false;
    if (pc.mode == 2u) {
        for (uint k = 0u; k < pc.fstride; k++) flagged = flagged || fb[pc.foff + b * pc.fstride + k] != 0u;
    } else {
        flagged = ((fb[pc.foff + b / 32u] >> (b % 32u)) & 1u) != 0u;
    }
    if (!flagged) return;
    uint i = atomicAdd(rec[0], 1u);
    if (i >= pc.capacity) return;
    uint o = 1u + i * 66u;
    rec[o] = pc.level;
    rec[o + 1u] = b;
    uint x0 = (b % pc.bx) * 4u, y0 = (b / pc.bx) * 4u;
    for (uint t = 0u; t < 16u; t++) {
        uint x = min(x0 + (t & 3u), pc.w - 1u), y = min(y0 + (t >> 2u), pc.h - 1u);
        for (uint c = 0u; c < 4u; c++) rec[o + 2u + t * 4u + c] = tex[(y * pc.w + x) * 4u + c];
    }
}

#version 450
// enc_bc1_seed.comp - BC1 / BC1a / BC3-colour, seed strategy at fast and normal quality: one
// invocation per block (enc_bc1_seed.glsl). PRELOAD has nothing to stage here (one invocation reads
// its own texels once into registers).
#include "enc_bc_common.glsl"
layout(local_size_x_id = 0) in;
#include "enc_bc1.glsl"
#include "enc_bc1_seed.glsl"

void main()
{
    uint b = group_linear() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (b >= pc.blocks_x * pc.blocks_y) return;
    SeedBlock blk = seed_load(b);
    uint c0, c1, idx;
    seed_encode(blk, c0, c1, idx);
    write_colour(b, c0, c1, idx);
}

#version 450
/* mip_baseline.comp - the "speed of light" reference of the mipmap bench (bench/gpu_mip.c), NOT a
 * mipmap generator: one invocation per texel of level 1 reads its 2x2 footprint of the base (clamped),
 * averages it (plain 1/4 weights) and writes that value to level 1 and to every deeper level whose
 * texel it is the top-left corner of. Bytes moved = read level 0 + write levels 1..L-1, once each,
 * which is what any real strategy must move at least; the values of levels >= 2 are deliberately wrong.
 * Linear index over (level-1 texels) x textures (vk.h's linear dispatch). */
layout(local_size_x_id = 0) in;

#include "mip_common.glsl"

layout(push_constant) uniform Push {
    uint texels; /* level-1 texels of one texture */
    uint total;  /* texels * textures */
} pc;

void main()
{
    uint gid = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (gid >= pc.total) return;
    uint z = gid / pc.texels, i = gid % pc.texels;
    uint w1 = LW(1u), x = i % w1, y = i / w1;
    uint w0 = LW(0u), h0 = LH(0u);
    uint x0 = min(2u * x, w0 - 1u), x1 = min(2u * x + 1u, w0 - 1u);
    uint y0 = min(2u * y, h0 - 1u), y1 = min(2u * y + 1u, h0 - 1u);
    uint b = z * prm[4];
    vec4 v = 0.25 * (base_texel(b + y0 * w0 + x0) + base_texel(b + y0 * w0 + x1) + base_texel(b + y1 * w0 + x0) +
                     base_texel(b + y1 * w0 + x1));
    uint L = prm[0];
    for (uint m = 1u; m < L; m++) {
        uint s = m - 1u, mask = (1u << s) - 1u;
        if (((x | y) & mask) != 0u) break;
        uint mx = x >> s, my = y >> s;
        if (mx >= LW(m) || my >= LH(m)) break;
        store_out(z, m, mx, my, v);
    }
}

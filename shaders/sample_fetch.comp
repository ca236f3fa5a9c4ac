#version 450
// sample_fetch.comp - reads every texel of a sampled image with texelFetch (no filtering) into a
// float buffer: the device's own texture decoding, used to check kiln's decoders independently.
layout(local_size_x_id = 0) in;

layout(push_constant) uniform Push {
    uint width;
    uint height;
} pc;

layout(binding = 0) uniform sampler2D tex;
layout(std430, binding = 1) writeonly buffer Dst { vec4 texels[]; } dst;

void main()
{
    uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    uint i = group * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (i >= pc.width * pc.height) return;
    dst.texels[i] = texelFetch(tex, ivec2(int(i % pc.width), int(i / pc.width)), 0);
}

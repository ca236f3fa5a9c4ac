#version 450
// mip16_decode.comp - the 16-bit base decoded on the device (helper mip16dev, issue 5; src/gpu/gpu_mip16.c).
// mip.c's decoder (decode_row, KILN_PIXEL_U16) is a function of each 16-bit value alone: colour
// kiln__srgb16_to_linear(v) (sRGB) or (float)v / 65535.0f, alpha (float)v / 65535.0f. The host fills
// binding 2 with those floats' bits from the CPU functions themselves ([0, 65536) colour, [65536, 131072)
// alpha), so this pass is a table look-up and its floats are the CPU's bit for bit (copied as uints).
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Texels { uint words[]; };  // RGBA16: r | g << 16, b | a << 16
layout(std430, binding = 1) writeonly buffer Base { uvec4 base[]; };  // RGBA32F bits
layout(std430, binding = 2) readonly buffer Lut { uint lut[]; };

layout(push_constant) uniform Push {
    uint n;  // texels
} pc;

void main()
{
    uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    if (i >= pc.n) return;
    uint w0 = words[2u * i], w1 = words[2u * i + 1u];
    base[i] = uvec4(lut[w0 & 0xFFFFu], lut[w0 >> 16], lut[w1 & 0xFFFFu], lut[65536u + (w1 >> 16)]);
}

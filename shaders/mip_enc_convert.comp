#version 450
#extension GL_ARB_gpu_shader_fp64 : require
// mip_enc_convert.comp - device-resident mip + encode from a FLOAT chain (owner mipres2; issue 5;
// src/gpu/gpu_mip_encode.c): turns one level of RGBA32F texels (what the mip pass writes for a float
// image, or the uploaded float base) into exactly the words the 8-bit encoders read when the host
// prepares a float image for them, so the encoder dispatches run unchanged on the device. The
// arithmetic is encode.c's fetch_texel for KILN_PIXEL_F32 (NaN -> 0; u = clamp(v, 0, 1);
// rgba8 = (uint8_t)(u * 255.0f + 0.5f); rgba16 = (uint16_t)(u * 65535.0f + 0.5f); f = v), as the host
// converters copy it (gpu_encode_bc.c texel_values / channel_value / prep_rows, gpu_encode_etc.c
// fetch_px / target_of / rgba8_rows). Float expressions are `precise` (no fused multiply-add: C rounds
// the product, then the sum). A float source never takes the SNORM "2x - 1" mapping (signed_map is for
// non-float sources). No sRGB step: the host converters have none (the chain is already in its colour
// space; the mip pass encoded it). One invocation per texel.
//
// mode (push constant):
//   0 RGBA8 word per texel: the rgba8 bytes (ETC1 / ETC2 colour: rgba8_rows)
//   1 BC4/BC5 unsigned channel bytes: rgba8[0] | rgba8[1] << 8 (prep_rows, 1 word, is_signed 0)
//   2 BC4/BC5 signed channel values: (int)(s +- 0.5f), s = clamp(f, -1, 1) * 127, as bytes (is_signed 1)
//   3 BC1/BC3 two words: rgba16[0] | rgba16[1] << 16, rgba16[2] | rgba8[3] << 16 (prep_rows, 2 words)
//   4 EAC unsigned R11 targets: rgba16[c] * 2047, nch int32 per texel (target_of kind 1)
//   5 EAC signed R11 targets: llround((double)clamp(f, -1, 1) * 1023 * 65536), nch per texel (kind 2)
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Texels { float tex[]; };
layout(std430, binding = 1) writeonly buffer Words { uint words[]; };

layout(push_constant) uniform Push {
    uint n;    // texels of the level
    uint mode; // see above
    uint nch;  // modes 4, 5: channels per texel (1: R11, 2: RG11)
} pc;

float fetch(uint i, uint c)
{
    float v = tex[i * 4u + c];
    return isnan(v) ? 0.0 : v;
}

float unit(float v) { return v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v; }

uint to8(float v)
{
    precise float t = unit(v) * 255.0;
    precise float s = t + 0.5;
    return uint(s);
}

uint to16(float v)
{
    precise float t = unit(v) * 65535.0;
    precise float s = t + 0.5;
    return uint(s);
}

int snorm127(float f)
{
    if (!(f >= -1.0)) f = -1.0;
    if (f > 1.0) f = 1.0;
    precise float s = f * 127.0;
    precise float r = s < 0.0 ? s - 0.5 : s + 0.5;
    return int(r);
}

int signed_target(float v)
{
    if (!(v >= -1.0)) v = v > 0.0 ? 1.0 : -1.0;
    if (v > 1.0) v = 1.0;
    precise double d = double(v) * 1023.0 * 65536.0; // exact: 24 + 10 significant bits
    precise double r = d >= 0.0 ? floor(d + 0.5) : -floor(0.5 - d); // llround: half away from zero
    return int(r);
}

void main()
{
    uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (i >= pc.n) return;
    if (pc.mode == 0u) {
        words[i] = to8(fetch(i, 0u)) | to8(fetch(i, 1u)) << 8 | to8(fetch(i, 2u)) << 16 | to8(fetch(i, 3u)) << 24;
    } else if (pc.mode == 1u) {
        words[i] = to8(fetch(i, 0u)) | to8(fetch(i, 1u)) << 8;
    } else if (pc.mode == 2u) {
        words[i] = (uint(snorm127(fetch(i, 0u))) & 255u) | (uint(snorm127(fetch(i, 1u))) & 255u) << 8;
    } else if (pc.mode == 3u) {
        words[2u * i] = to16(fetch(i, 0u)) | to16(fetch(i, 1u)) << 16;
        words[2u * i + 1u] = to16(fetch(i, 2u)) | to8(fetch(i, 3u)) << 16;
    } else if (pc.mode == 4u) {
        for (uint c = 0u; c < pc.nch; c++) words[i * pc.nch + c] = uint(int(to16(fetch(i, c))) * 2047);
    } else {
        for (uint c = 0u; c < pc.nch; c++) words[i * pc.nch + c] = uint(signed_target(fetch(i, c)));
    }
}

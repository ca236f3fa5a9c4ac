#version 450
#extension GL_ARB_gpu_shader_fp64 : require
// mip16_convert.comp - 16-bit sources on the device (helper mip16; issue 5; src/gpu/gpu_mip16.c and
// src/gpu/gpu_mip_encode.c). The mip pass filters a 16-bit image as the float chain it is on the CPU (the
// base decoded as mip.c's own decoder does: v / 65535.0f or kiln__srgb16_to_linear, mip16_decode.comp); this pass
// quantises one chain level to the 16-bit values the CPU stores (mip.c sink_put SINK_U16: colour
// kiln__linear_to_srgb16 (sRGB) or kiln__float_to_unorm16, alpha kiln__float_to_unorm16) and then, per
// mode, writes what the host would make of that 16-bit level: the packed RGBA16 texels themselves
// (kiln_mip_generate) or the words the 8-bit encoders read when the host prepares a 16-bit image for them
// (gpu_encode_bc.c texel_values / channel_value / prep_rows, gpu_encode_etc.c fetch_px / target_of /
// rgba8_rows for KILN_PIXEL_U16: rgba8 = (p * 255 + 32767) / 65535, rgba16 = p,
// f = (float)p * (1.0f / 65535.0f), then 2f - 1 for SNORM formats (signed_map)).
//
// Quantisation is exact for every float. Unorm (alpha, and colour unless sRGB): the CPU's own arithmetic,
// floor(v * 65535 + 0.5) in double (the product is exact: 24 + 16 bits). sRGB colour: the quantiser is
// monotone, so the code is the number of decision points t[1..65535] (binding 2, built by the host:
// t[k] = the smallest float whose code is >= k) that the value reaches, i.e. the k with
// t[k] <= v < t[k + 1]: found from a pow() guess by a few steps (float compares only), or by a 16-step
// binary search when the guess is more than 8 codes off. NaN and v <= 0 give 0 (as the CPU's); v >= 1 gives 65535.
//
// mode (push constant):
//   0 RGBA8 word per texel (ETC1 / ETC2 colour)
//   1 BC4/BC5 unsigned channel bytes: rgba8[0] | rgba8[1] << 8
//   2 BC4/BC5 signed channel values: (int)(s +- 0.5f), s = clamp(f, -1, 1) * 127, as bytes
//   3 BC1/BC3 two words: rgba16[0] | rgba16[1] << 16, rgba16[2] | rgba8[3] << 16
//   4 EAC unsigned R11 targets: rgba16[c] * 2047, nch int32 per texel
//   5 EAC signed R11 targets: llround((double)clamp(f, -1, 1) * 1023 * 65536), nch per texel
//   6 RGBA16 texels (kiln_mip_generate): p0 | p1 << 16, p2 | p3 << 16
//   7 BC6H from a 16-bit image (helper mip16b): RGBA32F f = (float)p * (1.0f / 65535.0f) per channel (encode.c
//     fetch_texel KILN_PIXEL_U16; no SNORM mapping for float formats), 4 words per texel
//   8 BC6H from an 8-bit image (helper mip16b): binding 0 holds RGBA8 words (the 8-bit mip chain), not floats;
//     RGBA32F f = (float)b * (1.0f / 255.0f) (fetch_texel KILN_PIXEL_U8), 4 words per texel
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Texels { uint texw[]; }; // RGBA32F bits (mode 8: RGBA8 words)
layout(std430, binding = 1) writeonly buffer Words { uint words[]; };
layout(std430, binding = 2) readonly buffer Thresholds { float thr[]; }; // [0, 65536): sRGB colour (the rest: alpha, host-side checks)

layout(push_constant) uniform Push {
    uint n;     // texels of the level
    uint mode;  // see above
    uint nch;   // modes 4, 5: channels per texel (1: R11, 2: RG11)
    uint flags; // bit 0: signed_map (f -> 2f - 1); bit 1: colour is sRGB (kiln__linear_to_srgb16)
} pc;

uint q16(uint i, uint c)
{
    float v = uintBitsToFloat(texw[i * 4u + c]);
    if (c == 3u || (pc.flags & 2u) == 0u) { // kiln__float_to_unorm16
        if (!(v > 0.0)) return 0u;
        if (v >= 1.0) return 65535u;
        precise double d = double(v) * 65535.0 + 0.5; // exact
        return uint(d);
    }
    if (!(v > 0.0)) return 0u;
    if (v >= 1.0) return 65535u;
    // a guess from the GPU's pow (any error only costs steps), then steps until t[k] <= v < t[k + 1]: the
    // code by definition; the binary search if the guess was far off
    float e = v <= 0.0031308 ? v * 12.92 : 1.055 * pow(v, 1.0 / 2.4) - 0.055;
    int g = int(clamp(e, 0.0, 1.0) * 65535.0 + 0.5);
    uint k = uint(clamp(g, 0, 65535));
    for (int it = 0; it < 8; it++) {
        if (k > 0u && v < thr[k]) k--;
        else if (k < 65535u && v >= thr[k + 1u]) k++;
        else return k;
    }
    k = 0u;
    for (uint s = 32768u; s != 0u; s >>= 1)
        if (v >= thr[k + s]) k += s; // k + s <= 65535
    return k;
}

uint to8(uint p) { return (p * 255u + 32767u) / 65535u; }

float unitf(uint p)
{
    precise float f = float(p) * uintBitsToFloat(0x37800080u); // (float)p * (1.0f / 65535.0f)
    if ((pc.flags & 1u) != 0u) {
        precise float g = f * 2.0 - 1.0;
        f = g;
    }
    return f;
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
        words[i] = to8(q16(i, 0u)) | to8(q16(i, 1u)) << 8 | to8(q16(i, 2u)) << 16 | to8(q16(i, 3u)) << 24;
    } else if (pc.mode == 1u) {
        words[i] = to8(q16(i, 0u)) | to8(q16(i, 1u)) << 8;
    } else if (pc.mode == 2u) {
        words[i] = (uint(snorm127(unitf(q16(i, 0u)))) & 255u) | (uint(snorm127(unitf(q16(i, 1u)))) & 255u) << 8;
    } else if (pc.mode == 3u) {
        words[2u * i] = q16(i, 0u) | q16(i, 1u) << 16;
        words[2u * i + 1u] = q16(i, 2u) | to8(q16(i, 3u)) << 16;
    } else if (pc.mode == 4u) {
        for (uint c = 0u; c < pc.nch; c++) words[i * pc.nch + c] = q16(i, c) * 2047u;
    } else if (pc.mode == 5u) {
        for (uint c = 0u; c < pc.nch; c++) words[i * pc.nch + c] = uint(signed_target(unitf(q16(i, c))));
    } else if (pc.mode == 7u) {
        for (uint c = 0u; c < 4u; c++) {
            precise float f = float(q16(i, c)) * uintBitsToFloat(0x37800080u); // (float)p * (1.0f / 65535.0f)
            words[4u * i + c] = floatBitsToUint(f);
        }
    } else if (pc.mode == 8u) {
        uint w = texw[i];
        for (uint c = 0u; c < 4u; c++) {
            precise float f = float((w >> (8u * c)) & 255u) * uintBitsToFloat(0x3b808081u); // (float)b * (1.0f / 255.0f)
            words[4u * i + c] = floatBitsToUint(f);
        }
    } else {
        words[2u * i] = q16(i, 0u) | q16(i, 1u) << 16;
        words[2u * i + 1u] = q16(i, 2u) | q16(i, 3u) << 16;
    }
}

/* mip_common.glsl - shared by shaders/mip_tile.comp and shaders/mip_baseline.comp (GPU mipmaps,
 * src/gpu/gpu_mip.c). The arithmetic follows the CPU reference (src/mip/mip.h rules 3-5, 7, 9).
 *
 * Bindings (all storage buffers):
 *   0 prm   uint[]  the job table (layout below, written by gpu_mip.c: job_table())
 *   1 inw   uint[]  the base images: U8 = one uint per texel (R in the low byte), F32 = 4 words
 *   2 chain vec4[]  fp32 linear chain levels that a later dispatch / workgroup reads (coherent)
 *   3 outw  uint[]  quantised output levels 1..L-1: U8 1 word, F16 2 words, F32 4 words per texel
 *   4 lut   float[] [0,256) colour decode of a byte (sRGB or v/255), [256,512) v/255 (alpha),
 *                   [512,768) kiln__srgb8_thresholds then +inf (the exact sRGB encoder),
 *                   [768,1024) unorm8 decision points then +inf (the exact unorm encoder)
 *   5 ctr   uint[]  single-pass arrival counters (zeroed before the dispatch)
 *
 * Job table words:
 *   0 levels L   1 textures   2 flags (MIPF_*)   3 stages
 *   4 texels per base image   5 vec4s of chain per texture   6 output words per texture   7 -
 *   8 + 4m     level m: width, height, chain offset (vec4s), output offset (words)     m < 32
 *   136 + 8s   stage s: first level l0, levels K, tile edge T (texels of level l0+K), tiles in x,
 *              tiles in y, counter offset, shuffle levels (0 = shared memory only), chain write
 *   392 + z    texture z: 1 when its colour is alpha-weighted (CPU rule 7)
 */
#define MIPF_DECODE_SRGB 1u /* colour of the base is sRGB-encoded */
#define MIPF_IN_F32 2u      /* base texels are 4 floats (else RGBA8) */
#define MIPF_OUT_F16 4u
#define MIPF_OUT_F32 8u
#define MIPF_OUT_SRGB 16u   /* colour channels are sRGB-encoded on output */

#define P_LEVEL 8u
#define P_STAGE 136u
#define P_TEX 392u

layout(std430, binding = 0) readonly buffer Prm { uint prm[]; };
layout(std430, binding = 1) readonly buffer In { uint inw[]; };
layout(std430, binding = 2) coherent buffer Chain { vec4 chain[]; };
layout(std430, binding = 3) writeonly buffer Out { uint outw[]; };
layout(std430, binding = 4) readonly buffer Lut { float lut[]; };
layout(std430, binding = 5) coherent buffer Ctr { uint ctr[]; };

uint LW(uint m) { return prm[P_LEVEL + 4u * m]; }
uint LH(uint m) { return prm[P_LEVEL + 4u * m + 1u]; }
uint LCH(uint m) { return prm[P_LEVEL + 4u * m + 2u]; }
uint LOUT(uint m) { return prm[P_LEVEL + 4u * m + 3u]; }

float srgb_to_linear(float c)
{
    c = clamp(c, 0.0, 1.0);
    return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
}

float linear_to_srgb(float l)
{
    l = clamp(l, 0.0, 1.0);
    return l <= 0.0031308 ? 12.92 * l : 1.055 * pow(l, 1.0 / 2.4) - 0.055;
}

/* Base texel i (index over all textures) as linear fp32 RGBA (CPU rule 3). */
vec4 base_texel(uint i)
{
    uint flags = prm[2];
    if ((flags & MIPF_IN_F32) == 0u) {
        uint v = inw[i];
        return vec4(lut[v & 255u], lut[(v >> 8) & 255u], lut[(v >> 16) & 255u], lut[256u + (v >> 24)]);
    }
    vec4 c = vec4(uintBitsToFloat(inw[4u * i]), uintBitsToFloat(inw[4u * i + 1u]), uintBitsToFloat(inw[4u * i + 2u]),
                  uintBitsToFloat(inw[4u * i + 3u]));
    if ((flags & MIPF_DECODE_SRGB) != 0u) c.rgb = vec3(srgb_to_linear(c.r), srgb_to_linear(c.g), srgb_to_linear(c.b));
    return c;
}

/* kiln__linear_to_srgb8 exactly: the number of thresholds <= x (thr[k] = lut[512 + k], thr[255] = inf).
 * A pow() estimate lands within a step or two of the answer; the loops then walk to the exact code
 * (usually two table reads instead of an 8-step binary search). */
uint enc_srgb8(float x)
{
    if (!(x >= lut[512u])) return 0u;
    if (x >= 1.0) return 255u;
    uint c = uint(clamp(linear_to_srgb(x) * 255.0 + 0.5, 1.0, 255.0)); /* thr[0] <= x, so the code is >= 1 */
    while (c < 255u && lut[512u + c] <= x) c++;
    while (c > 1u && lut[512u + c - 1u] > x) c--;
    return c;
}

/* kiln__float_to_unorm8 exactly (floor(v * 255 + 0.5) with the product in double on the CPU): the
 * number of thresholds <= v, thr[k] = lut[768 + k] = the smallest float >= (k + 0.5) / 255. An fp32
 * estimate, then a walk (the fp32 product alone can round a tie the other way). */
uint enc_unorm8(float v)
{
    if (!(v >= lut[768u])) return 0u;
    if (v >= 1.0) return 255u;
    uint c = uint(clamp(v * 255.0 + 0.5, 1.0, 255.0));
    while (c < 255u && lut[768u + c] <= v) c++;
    while (c > 1u && lut[768u + c - 1u] > v) c--;
    return c;
}

/* Quantises v (CPU rule 9) into output level m, texel (x, y) of texture z. */
void store_out(uint z, uint m, uint x, uint y, vec4 v)
{
    uint flags = prm[2];
    uint t = LOUT(m) + y * LW(m) + x;
    uint base = z * prm[6];
    if ((flags & MIPF_OUT_F32) != 0u) {
        if ((flags & MIPF_OUT_SRGB) != 0u) v.rgb = vec3(linear_to_srgb(v.r), linear_to_srgb(v.g), linear_to_srgb(v.b));
        uint o = base + LOUT(m) + 4u * (y * LW(m) + x);
        outw[o] = floatBitsToUint(v.r);
        outw[o + 1u] = floatBitsToUint(v.g);
        outw[o + 2u] = floatBitsToUint(v.b);
        outw[o + 3u] = floatBitsToUint(v.a);
    } else if ((flags & MIPF_OUT_F16) != 0u) {
        uint o = base + LOUT(m) + 2u * (y * LW(m) + x);
        outw[o] = packHalf2x16(v.rg);
        outw[o + 1u] = packHalf2x16(v.ba);
    } else {
        uint r, g, b;
        if ((flags & MIPF_OUT_SRGB) != 0u) {
            r = enc_srgb8(v.r);
            g = enc_srgb8(v.g);
            b = enc_srgb8(v.b);
        } else {
            r = enc_unorm8(v.r);
            g = enc_unorm8(v.g);
            b = enc_unorm8(v.b);
        }
        outw[base + t] = r | g << 8 | b << 16 | enc_unorm8(v.a) << 24;
    }
}

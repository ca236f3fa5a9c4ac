#version 450
// enc_eac_dither.comp - params->dither for EAC R11 / RG11, unsigned and signed (kiln strategy, helper
// gpudither): a post-pass after enc_eac.comp, one invocation per job (block x channel). eac_enc.c
// dithers only in write_block: the (base, table, multiplier) its search chose stay, and the indices
// are re-picked with Floyd-Steinberg diffusion in doubles (want = target + carry, clamped to the
// scaled range; nearest level, first on ties; r = want - level; r * 7 / 16 right, r * 3 / 16 down-left,
// r * 5 / 16 down, r * 1 / 16 down-right). This shader reads the block enc_eac.comp wrote (equal to the
// CPU's) and repeats the loop in doubles: every product here is exact (integers below 2^53, or a
// scaling by 1/16), additions and subtractions are `precise` and correctly rounded, so no fused
// multiply-add or division rounding can differ from the CPU. Jobs the host re-encodes on the CPU (the
// flags of enc_eac.comp) are overwritten there, dithered. Bindings and push constants: those of
// enc_eac.comp (enc_etc_eac.glsl), but binding 1 is read and written.
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0) in;

layout(constant_id = 1) const int KIND = 1;
layout(constant_id = 2) const int INMODE = 0;

layout(push_constant) uniform Push {
    uint width, height;
    uint bx;
    uint njobs;
    uint nch;
    uint ch0;
    uint out_stride;
    uint out_off;
    int quality;
} pc;

layout(std430, binding = 0) readonly buffer Src { uint w[]; } src;
layout(std430, binding = 1) buffer Dst { uint w[]; } dst;

const int STEP = KIND == 0 ? 1 : 8;
const int C0 = KIND == 1 ? 4 : 0;
const int VMIN = KIND == 2 ? -1023 : 0;
const int VMAX = KIND == 0 ? 255 : (KIND == 1 ? 2047 : 1023);
const int SCALE = KIND == 0 ? 1 : (KIND == 1 ? 65535 : 65536);

#include "etc_tables.glsl"

// enc_etc_eac.glsl eac_target: the target of pixel p of a job, edge-replicated.
int target(uint job, uint p)
{
    uint block = job / pc.nch, ch = job % pc.nch;
    uint x = min((block % pc.bx) * 4u + (p & 3u), pc.width - 1u);
    uint y = min((block / pc.bx) * 4u + (p >> 2u), pc.height - 1u);
    uint pix = y * pc.width + x;
    if (INMODE == 0) {
        int v = int((src.w[pix] >> (8u * (pc.ch0 + ch))) & 255u);
        return KIND == 0 ? v : v * 257 * 2047;
    }
    return int(src.w[pix * pc.nch + ch]);
}

uint bswap(uint x) { return (x >> 24u) | ((x >> 8u) & 0xff00u) | ((x << 8u) & 0xff0000u) | (x << 24u); }

void main()
{
    uint job = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (job >= pc.njobs) return;
    uint block = job / pc.nch, ch = job % pc.nch;
    uint o = block * pc.out_stride + pc.out_off + 2u * ch;
    uint hi = bswap(dst.w[o]);
    // header: base (signed byte for KIND 2), multiplier, table
    int b = KIND == 2 ? int(hi) >> 24 : int(hi >> 24u);
    int m = int((hi >> 20u) & 15u), t = int((hi >> 16u) & 15u);
    int f = KIND == 0 ? m : (m != 0 ? 8 * m : 1);
    int c = STEP * b + C0;
    int L[8]; // scaled levels (exact: below 2^27)
    [[unroll]] for (int i = 0; i < 8; i++) L[i] = clamp(c + EAC_MOD[t * 8 + i] * f, VMIN, VMAX) * SCALE;
    const double lo = double(VMIN * SCALE), hiv = double(VMAX * SCALE);
    precise double carry[16];
    [[unroll]] for (int p = 0; p < 16; p++) carry[p] = 0.0LF;
    uint64_t v = uint64_t(hi & 0xffff0000u) << 32;
    for (int p = 0; p < 16; p++) {
        precise double want = double(target(job, uint(p))) + carry[p];
        want = want < lo ? lo : (want > hiv ? hiv : want);
        int bi = 0;
        precise double bd = 0.0LF;
        for (int i = 0; i < 8; i++) {
            precise double d = abs(want - double(L[i]));
            if (i == 0 || d < bd) {
                bd = d;
                bi = i;
            }
        }
        int j = (p & 3) * 4 + (p >> 2);
        v |= uint64_t(bi) << (45 - 3 * j);
        precise double r = want - double(L[bi]);
        const int x = p & 3, y = p >> 2;
        if (x < 3) carry[p + 1] += (r * 7.0LF) * 0.0625LF;
        if (y < 3) {
            if (x > 0) carry[p + 3] += (r * 3.0LF) * 0.0625LF;
            carry[p + 4] += (r * 5.0LF) * 0.0625LF;
            if (x < 3) carry[p + 5] += r * 0.0625LF;
        }
    }
    dst.w[o] = bswap(uint(v >> 32));
    dst.w[o + 1u] = bswap(uint(v));
}

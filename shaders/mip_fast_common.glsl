/* mip_fast_common.glsl - shared by the fast box path's shaders (mip_fast.comp, mip_fast_level.comp; after
 * mip_common.glsl and mip_div.glsl): the lookup table in shared memory (load_lut: every invocation of the
 * workgroup, then a barrier() by the caller), the byte decode, the exact 8-bit encoders and store_out of
 * mip_common.glsl reading that copy, and mip_tile.comp's reduce4. */
/* Push constants (gpu_mip.c fast_push): the stage's words and the level geometry, so that a workgroup's first
 * loads do not wait on the job table (cold L2 after a flush: one DRAM round trip less per dependent step). */
layout(push_constant) uniform Push {
    uint stage;       /* index into the job table (the tail still reads it) */
    uint mode;        /* mip_fast_level.comp: 0 one level, 1 tail, 2 two levels */
    uint l0, K, ntx, nty, write_chain, flags;
    uint W, H;        /* level 0 */
    uint ch_in;       /* chain offset (vec4) of level l0 (l0 > 0) */
    uint ch_out;      /* chain offset of level l0 + K when write_chain */
    uint tex_in;      /* job word 4: base texels per texture */
    uint tex_chain;   /* job word 5: chain vec4s per texture */
    uint tex_out;     /* job word 6: output words per texture */
    uint pad;
    uint lout[8];     /* LOUT(l0 + 1 + i) */
} pc;

uint FW(uint m) { return max(1u, pc.W >> m); }
uint FH(uint m) { return max(1u, pc.H >> m); }

shared float s_lut[1024];

uint ST(uint s, uint i) { return prm[P_STAGE + 8u * s + i]; }

void load_lut()
{
    for (uint i = gl_LocalInvocationIndex; i < 1024u; i += gl_WorkGroupSize.x) s_lut[i] = lut[i];
}

/* enc_srgb8 / enc_unorm8 of mip_common.glsl, the tables read from shared memory */
uint fenc_srgb8(float x)
{
    if (!(x >= s_lut[512u])) return 0u;
    if (x >= 1.0) return 255u;
    uint c = uint(clamp(linear_to_srgb(x) * 255.0 + 0.5, 1.0, 255.0));
    while (c < 255u && s_lut[512u + c] <= x) c++;
    while (c > 1u && s_lut[512u + c - 1u] > x) c--;
    return c;
}

uint fenc_unorm8(float v)
{
    if (!(v >= s_lut[768u])) return 0u;
    if (v >= 1.0) return 255u;
    uint c = uint(clamp(v * 255.0 + 0.5, 1.0, 255.0));
    while (c < 255u && s_lut[768u + c] <= v) c++;
    while (c > 1u && s_lut[768u + c - 1u] > v) c--;
    return c;
}

vec4 dec8(uint v) { return vec4(s_lut[v & 255u], s_lut[(v >> 8) & 255u], s_lut[(v >> 16) & 255u], s_lut[256u + (v >> 24)]); }

/* mip_tile.comp's reduce4, unchanged */
vec4 reduce4(vec4 s00, vec4 s10, vec4 s01, vec4 s11, bool weighted)
{
    if (!weighted) {
        precise vec4 t0 = 0.5 * s00 + 0.5 * s01;
        precise vec4 t1 = 0.5 * s10 + 0.5 * s11;
        precise vec4 o = 0.5 * t0 + 0.5 * t1;
        return o;
    }
    precise vec4 e00 = vec4(s00.a * s00.rgb, s00.a), e10 = vec4(s10.a * s10.rgb, s10.a);
    precise vec4 e01 = vec4(s01.a * s01.rgb, s01.a), e11 = vec4(s11.a * s11.rgb, s11.a);
    precise vec4 t0 = 0.5 * e00 + 0.5 * e01;
    precise vec4 t1 = 0.5 * e10 + 0.5 * e11;
    precise vec4 o = 0.5 * t0 + 0.5 * t1;
    precise vec4 p0 = 0.5 * s00 + 0.5 * s01;
    precise vec4 p1 = 0.5 * s10 + 0.5 * s11;
    precise vec4 op = 0.5 * p0 + 0.5 * p1;
    float a = o.a;
    return a > 0.0 ? vec4(div_rn(o.r, a), div_rn(o.g, a), div_rn(o.b, a), a) : vec4(op.rgb, a);
}

/* store_out of mip_common.glsl with the shared-memory encoders; o = word offset of the texel's level
 * in this texture's output (LOUT + texel index), flags = the job's flags */
void fstore(uint flags, uint obase, uint lout, uint idx, vec4 v)
{
    if ((flags & MIPF_OUT_F32) != 0u) {
        if ((flags & MIPF_OUT_SRGB) != 0u) v.rgb = vec3(linear_to_srgb(v.r), linear_to_srgb(v.g), linear_to_srgb(v.b));
        uint o = obase + lout + 4u * idx;
        outw[o] = floatBitsToUint(v.r);
        outw[o + 1u] = floatBitsToUint(v.g);
        outw[o + 2u] = floatBitsToUint(v.b);
        outw[o + 3u] = floatBitsToUint(v.a);
    } else if ((flags & MIPF_OUT_F16) != 0u) {
        uint o = obase + lout + 2u * idx;
        outw[o] = packHalf2x16(v.rg);
        outw[o + 1u] = packHalf2x16(v.ba);
    } else {
        uint r, g, b;
        if ((flags & MIPF_OUT_SRGB) != 0u) {
            r = fenc_srgb8(v.r);
            g = fenc_srgb8(v.g);
            b = fenc_srgb8(v.b);
        } else {
            r = fenc_unorm8(v.r);
            g = fenc_unorm8(v.g);
            b = fenc_unorm8(v.b);
        }
        outw[obase + lout + idx] = r | g << 8 | b << 16 | fenc_unorm8(v.a) << 24;
    }
}


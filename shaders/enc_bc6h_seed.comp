#version 450
// enc_bc6h_seed.comp - the seed design for BC6H on the GPU: GPURealTimeBC6H (Narkowicz), the encoder
// betsy ships, one invocation per 4x4 block, BC6H UF16 only. The same algorithm, step for step, as
// the CPU model kiln__enc_bc6h_seed (src/codec/bc6h_enc.c), which documents it:
//   QUALITY 0 ("fast"): mode 3 (D3D "mode 11", 10-bit endpoints, one subset) from the colour box inset
//     in log2(1 + x), one least-squares pass in half-bit space, indices along the box diagonal;
//   QUALITY 1 ("quality"): also the partition whose per-subset box lines leave the least squared
//     distance, in modes 1 and 14 (D3D "mode 2" / "mode 6": 7 bits + 6-bit deltas, 9 bits + 5-bit
//     deltas), truncating quantization, clamped deltas; the lowest luminance-weighted MSLE wins.
// The MSLE is measured with the exact BC6H UF16 integer decoding (as the CPU model does). Results can
// differ from the CPU model where float log2/exp2 or half rounding differ (test_gpu_bc6h.c states the
// tolerance). No subgroup operations, no shared memory: correct for any subgroup size.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint QUALITY = 0u;

layout(push_constant) uniform Push {
    uint blocks_x;   // blocks per row
    uint block_rows; // block rows in this batch
    uint width;      // texels per row
    uint rows;       // texel rows in this batch's input
} pc;

layout(std430, binding = 0) readonly buffer Src { vec4 px[]; } src;
layout(std430, binding = 1) writeonly buffer Dst { uvec4 blk[]; } dst;

#include "bptc_tables.glsl"

vec3 tex[16];

float h16(float v) { return float(packHalf2x16(vec2(v, 0.0)) & 0xffffu); }
float f16(float bits)
{
    if (!(bits >= 0.0)) bits = 0.0;
    if (bits > 65504.0) bits = 65504.0;
    return unpackHalf2x16(uint(bits)).x;
}

uint seed_index(float pos, float p0, float p1, uint bits)
{
    if (p1 == p0) return 0u;
    float r = (pos - p0) / (p1 - p0);
    float v = bits == 4u ? r * 14.93333 + 0.03333 + 0.5 : r * 6.98182 + 0.00909 + 0.5;
    float hi = bits == 4u ? 15.0 : 7.0;
    v = v < 0.0 ? 0.0 : (v > hi ? hi : v);
    return uint(v);
}

uint subset_of(uint part, uint t) { return (BPTC_P2[part] >> t) & 1u; }

// ---- exact UF16 decoding of one texel channel (bc6h.c) ----
int unq(int x, uint epb)
{
    if (x == 0) return 0;
    if (x == int((1u << epb) - 1u)) return 0xffff;
    return ((x << 15) + 0x4000) >> int(epb - 1u);
}
float dec(int a, int b, uint w) // a, b unquantized
{
    int v = ((64 - int(w)) * a + int(w) * b + 32) >> 6; // a, b >= 0 (UF)
    return unpackHalf2x16(uint((v * 31) >> 6)).x;
}

const vec3 LUM = vec3(0.299, 0.587, 0.114);

// MSLE of endpoints ep (quantized, epb bits, subset s uses ep[2s], ep[2s+1]) and indices
float msle(ivec3 ep[4], uint epb, uint ns, uint part, uint idx[16])
{
    float e = 0.0;
    for (uint t = 0u; t < 16u; t++) {
        uint s = ns == 2u ? subset_of(part, t) : 0u;
        uint w = ns == 2u ? BPTC_W3[idx[t]] : BPTC_W4[idx[t]];
        vec3 d;
        for (int c = 0; c < 3; c++) d[c] = dec(unq(ep[2u * s][c], epb), unq(ep[2u * s + 1u][c], epb), w);
        vec3 l = log2((d + 1.0) / (tex[t] + 1.0));
        e += dot(LUM, l * l);
    }
    return e;
}

// ---- packing ----
uvec4 bits_out;
uint bit_pos;
void put(uint v, uint n)
{
    for (uint i = 0u; i < n; i++, bit_pos++)
        if (((v >> i) & 1u) != 0u) bits_out[bit_pos >> 5] |= 1u << (bit_pos & 31u);
}

// fields as in bc6h.c: R0 G0 B0 R1 G1 B1 R2 G2 B2 R3 G3 B3 PB MB; span = field | hi << 8 | lo << 16
#define SP(f, a, b) ((f) | ((a) << 8) | ((b) << 16))
const uint MODE1[25] = uint[25](SP(13, 1, 0), SP(7, 5, 5), SP(10, 4, 4), SP(10, 5, 5), SP(0, 6, 0), SP(11, 0, 0),
    SP(11, 1, 1), SP(8, 4, 4), SP(1, 6, 0), SP(8, 5, 5), SP(11, 2, 2), SP(7, 4, 4), SP(2, 6, 0), SP(11, 3, 3),
    SP(11, 5, 5), SP(11, 4, 4), SP(3, 5, 0), SP(7, 3, 0), SP(4, 5, 0), SP(10, 3, 0), SP(5, 5, 0), SP(8, 3, 0),
    SP(6, 5, 0), SP(9, 5, 0), SP(12, 4, 0));
const uint MODE14[21] = uint[21](SP(13, 4, 0), SP(0, 8, 0), SP(8, 4, 4), SP(1, 8, 0), SP(7, 4, 4), SP(2, 8, 0),
    SP(11, 4, 4), SP(3, 4, 0), SP(10, 4, 4), SP(7, 3, 0), SP(4, 4, 0), SP(11, 0, 0), SP(10, 3, 0), SP(5, 4, 0),
    SP(11, 1, 1), SP(8, 3, 0), SP(6, 4, 0), SP(11, 2, 2), SP(9, 4, 0), SP(11, 3, 3), SP(12, 4, 0));

void put_span(uint sp, uint f[14])
{
    uint field = sp & 0xffu, a = (sp >> 8) & 0xffu, b = sp >> 16;
    put(f[field] >> b, a - b + 1u);
}

void put_indices(uint ns, uint part, uint idx[16])
{
    uint ib = ns == 2u ? 3u : 4u;
    for (uint t = 0u; t < 16u; t++) {
        bool anchor = t == 0u || (ns == 2u && t == BPTC_A2[part]);
        put(idx[t], anchor ? ib - 1u : ib);
    }
}

// ---- fitting ----
void seed_optimize(uint mask, uint bits, inout vec3 mn, inout vec3 mx, bool clamp_box, vec3 bmn, vec3 bmx)
{
    vec3 dir = mx - mn;
    float sum = dir.x + dir.y + dir.z;
    if (!(sum > 0.0)) return;
    dir /= sum;
    float p0 = h16(dot(mn, dir)), p1 = h16(dot(mx, dir));
    vec3 at = vec3(0.0), bt = vec3(0.0);
    float ab = 0.0, aa = 0.0, bb = 0.0;
    float top = bits == 4u ? 15.0 : 7.0;
    for (uint t = 0u; t < 16u; t++) {
        if (((mask >> t) & 1u) == 0u) continue;
        float pos = h16(dot(tex[t], dir));
        float be = float(seed_index(pos, p0, p1, bits)) / top, al = 1.0 - be;
        vec3 hv = vec3(h16(tex[t].x), h16(tex[t].y), h16(tex[t].z));
        at += al * hv;
        bt += be * hv;
        ab += al * be;
        aa += al * al;
        bb += be * be;
    }
    float det = aa * bb - ab * ab;
    if (abs(det) > 0.00001) {
        float r = 1.0 / det;
        for (int c = 0; c < 3; c++) {
            float a = f16(r * (at[c] * bb - bt[c] * ab));
            float b = f16(r * (bt[c] * aa - at[c] * ab));
            if (clamp_box) {
                a = a < bmn[c] ? bmn[c] : (a > bmx[c] ? bmx[c] : a);
                b = b < bmn[c] ? bmn[c] : (b > bmx[c] ? bmx[c] : b);
            }
            mn[c] = a;
            mx[c] = b;
        }
    }
}

float seed_p1(out uvec4 block)
{
    vec3 mn = tex[0], mx = tex[0];
    for (uint t = 1u; t < 16u; t++) {
        mn = min(mn, tex[t]);
        mx = max(mx, tex[t]);
    }
    vec3 bmn = mn, bmx = mx;
    for (int c = 0; c < 3; c++) {
        float rmn = mx[c], rmx = mn[c];
        for (uint t = 0u; t < 16u; t++) {
            if (tex[t][c] != mn[c]) rmn = min(rmn, tex[t][c]);
            if (tex[t][c] != mx[c]) rmx = max(rmx, tex[t][c]);
        }
        float lmn = log2(mn[c] + 1.0), lmx = log2(mx[c] + 1.0);
        float ext = (lmx - lmn) * (1.0 / 32.0);
        lmn += min(log2(rmn + 1.0) - lmn, ext);
        lmx -= min(lmx - log2(rmx + 1.0), ext);
        mn[c] = exp2(lmn) - 1.0;
        mx[c] = exp2(lmx) - 1.0;
    }
    seed_optimize(0xffffu, 4u, mn, mx, true, bmn, bmx);
    vec3 dir = mx - mn;
    float sum = dir.x + dir.y + dir.z;
    dir = sum > 0.0 ? dir / sum : vec3(0.0);
    ivec3 ep[4];
    for (int c = 0; c < 3; c++) {
        ep[0][c] = int(h16(mn[c]) * 1024.0 / 31744.0);
        ep[1][c] = int(h16(mx[c]) * 1024.0 / 31744.0);
    }
    ep[2] = ivec3(0);
    ep[3] = ivec3(0);
    float p0 = h16(dot(mn, dir)), p1 = h16(dot(mx, dir));
    if (seed_index(h16(dot(tex[0], dir)), p0, p1, 4u) > 7u) {
        float tp = p0;
        p0 = p1;
        p1 = tp;
        ivec3 te = ep[0];
        ep[0] = ep[1];
        ep[1] = te;
    }
    uint idx[16];
    for (uint t = 0u; t < 16u; t++) idx[t] = seed_index(h16(dot(tex[t], dir)), p0, p1, 4u);
    if (idx[0] > 7u) idx[0] = 7u;
    block = uvec4(0u);
    for (int c = 0; c < 3; c++)
        if (ep[0][c] < 0 || ep[0][c] > 1023 || ep[1][c] < 0 || ep[1][c] > 1023) return 1e30;
    bits_out = uvec4(0u);
    bit_pos = 0u;
    put(3u, 5u);
    for (int e = 0; e < 2; e++)
        for (int c = 0; c < 3; c++) put(uint(ep[e][c]), 10u);
    put_indices(1u, 0u, idx);
    block = bits_out;
    return msle(ep, 10u, 1u, 0u, idx);
}

float pattern_score(uint part)
{
    vec3 mn[2] = vec3[2](vec3(65504.0), vec3(65504.0)), mx[2] = vec3[2](vec3(0.0), vec3(0.0));
    for (uint t = 0u; t < 16u; t++) {
        uint s = subset_of(part, t);
        mn[s] = min(mn[s], tex[t]);
        mx[s] = max(mx[s], tex[t]);
    }
    vec3 dir[2];
    for (int s = 0; s < 2; s++) {
        vec3 d = mx[s] - mn[s];
        float l = sqrt(dot(d, d));
        dir[s] = l > 0.0 ? d / l : vec3(0.0);
    }
    float score = 0.0;
    for (uint t = 0u; t < 16u; t++) {
        uint s = subset_of(part, t);
        vec3 w = tex[t] - mn[s];
        vec3 x = w - dot(w, dir[s]) * dir[s];
        score += dot(x, x);
    }
    return score;
}

float seed_p2(uint part, out uvec4 block)
{
    vec3 mn[2] = vec3[2](vec3(65504.0), vec3(65504.0)), mx[2] = vec3[2](vec3(0.0), vec3(0.0));
    for (uint t = 0u; t < 16u; t++) {
        uint s = subset_of(part, t);
        mn[s] = min(mn[s], tex[t]);
        mx[s] = max(mx[s], tex[t]);
    }
    uint m1 = BPTC_P2[part], m0 = ~m1 & 0xffffu;
    seed_optimize(m0, 3u, mn[0], mx[0], false, vec3(0.0), vec3(0.0));
    seed_optimize(m1, 3u, mn[1], mx[1], false, vec3(0.0), vec3(0.0));
    vec3 dir[2];
    float p0[2], p1[2];
    for (uint s = 0u; s < 2u; s++) {
        vec3 d = mx[s] - mn[s];
        float sum = d.x + d.y + d.z;
        dir[s] = sum > 0.0 ? d / sum : vec3(0.0);
        p0[s] = h16(dot(mn[s], dir[s]));
        p1[s] = h16(dot(mx[s], dir[s]));
        uint anchor = s == 0u ? 0u : BPTC_A2[part];
        if (seed_index(h16(dot(tex[anchor], dir[s])), p0[s], p1[s], 3u) > 3u) {
            float tp = p0[s];
            p0[s] = p1[s];
            p1[s] = tp;
            vec3 tc = mn[s];
            mn[s] = mx[s];
            mx[s] = tc;
        }
    }
    uint idx[16];
    for (uint t = 0u; t < 16u; t++) {
        uint s = subset_of(part, t);
        idx[t] = seed_index(h16(dot(tex[t], dir[s])), p0[s], p1[s], 3u);
        bool anchor = t == 0u || t == BPTC_A2[part];
        if (anchor && idx[t] > 3u) idx[t] = 3u;
    }
    float best = 1e30;
    block = uvec4(0u);
    for (uint k = 0u; k < 2u; k++) {
        float scale = k == 0u ? 128.0 : 512.0;
        int dmax = k == 0u ? 31 : 15;
        uint epb = k == 0u ? 7u : 9u, db = k == 0u ? 6u : 5u;
        vec3 srcs[4] = vec3[4](mn[0], mx[0], mn[1], mx[1]);
        ivec3 ep[4];
        for (int e = 0; e < 4; e++)
            for (int c = 0; c < 3; c++) ep[e][c] = int(floor(h16(srcs[e][c]) * scale / 31744.0));
        bool ok = true;
        for (int e = 1; e < 4; e++)
            for (int c = 0; c < 3; c++) {
                int d = clamp(ep[e][c] - ep[0][c], -dmax, dmax);
                ep[e][c] = ep[0][c] + d;
            }
        for (int e = 0; e < 4; e++)
            for (int c = 0; c < 3; c++)
                if (ep[e][c] < 0 || ep[e][c] > int((1u << epb) - 1u)) ok = false;
        if (!ok) continue;
        uint f[14];
        for (int e = 0; e < 4; e++)
            for (int c = 0; c < 3; c++)
                f[e * 3 + c] = e == 0 ? uint(ep[0][c]) : uint(ep[e][c] - ep[0][c]) & ((1u << db) - 1u);
        f[12] = part;
        f[13] = k == 0u ? 1u : 14u;
        bits_out = uvec4(0u);
        bit_pos = 0u;
        if (k == 0u)
            for (int i = 0; i < 25; i++) put_span(MODE1[i], f);
        else
            for (int i = 0; i < 21; i++) put_span(MODE14[i], f);
        put_indices(2u, part, idx);
        float e = msle(ep, epb, 2u, part, idx);
        if (e < best) {
            best = e;
            block = bits_out;
        }
    }
    return best;
}

void main()
{
    uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (i >= pc.blocks_x * pc.block_rows) return;
    uint bx = i % pc.blocks_x, by = i / pc.blocks_x;
    for (uint t = 0u; t < 16u; t++) {
        uint x = min(bx * 4u + (t & 3u), pc.width - 1u), y = min(by * 4u + (t >> 2), pc.rows - 1u);
        vec3 v = src.px[y * pc.width + x].rgb;
        for (int c = 0; c < 3; c++) {
            float f = v[c];
            if (isnan(f) || f < 0.0) f = 0.0;
            if (f > 65504.0) f = 65504.0;
            v[c] = unpackHalf2x16(packHalf2x16(vec2(f, 0.0))).x;
        }
        tex[t] = v;
    }
    uvec4 block;
    float best = seed_p1(block);
    if (QUALITY != 0u) {
        uint bp = 0u;
        float bs = pattern_score(0u);
        for (uint p = 1u; p < 32u; p++) {
            float s = pattern_score(p);
            if (s < bs) {
                bs = s;
                bp = p;
            }
        }
        uvec4 b2;
        float e = seed_p2(bp, b2);
        if (e < best) block = b2;
    }
    dst.blk[i] = block;
}

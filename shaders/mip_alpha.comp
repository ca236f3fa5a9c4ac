#version 450
/* mip_alpha.comp - alpha-coverage scaling of GPU mip chains on the device (helper alphacov, issue 5;
 * src/gpu/gpu_mip_alpha.c). The CPU reference is src/mip/mip.c run_chain + src/mip/filters.c
 * kiln__mip_coverage_scale: per output level, b = bits(clamp(a, 0, 1)) (NaN -> 0) of every fp32 chain
 * alpha, the target-th largest b by two 16-bit histogram passes, and alpha' = min(1, s * clamp(a, 0, 1))
 * before quantisation. Everything here works on the bit patterns with integer arithmetic (no float
 * compare, no denormal flush, no FMA contraction can change a result); the host picks s from what
 * passes 0 and 1 count, with filters.c's own code.
 *
 *   pass 0  per level ("pair": texture z, level m): hist[b >> 16] (16384 buckets: b <= 0x3f800000),
 *           the count of b == 0 and the largest b; small levels ("direct") copy their raw alpha bits
 *           instead (the host runs kiln__mip_coverage_scale on them)
 *   pass 1  the 65536-entry histogram of b & 0xffff for b >> 16 == hi (the bucket of the target-th
 *           largest), the largest b of bucket hb and the smallest of bucket ha (the non-empty buckets
 *           next to hi: the neighbours of the k-th largest value when it is alone in its bucket's end)
 *   pass 2  alpha' with the host's scale, quantised into the level's output as the CPU sinks do: mode 0
 *           patches the alpha byte of RGBA8 words, 1 the alpha half of RGBA16F (kiln__float_to_half on the
 *           bits), 2 the alpha float of
 *           RGBA32F texels in place (read from the output itself), 3 writes RGBA8 words from the fp32
 *           chain (colour: the exact sRGB8 / unorm8 encoders of mip_common.glsl; the resident encoder's
 *           8-bit levels), 4 writes RGBA16F texels (2 words) from the fp32 chain, every channel by
 *           kiln__float_to_half on the bits (helper mipfall: the tiled box strategies' coverage chains)
 *
 * With tab[3] bit 1 set (helper mipfall, kiln__gpu_mip_alpha_convert) pass 2 alone converts the chain into
 * the outputs (modes 3 and 4) with alpha unscaled, as a sink without coverage stores it.
 *
 * Bindings: 0 tab (header, pair records, chunk records; layout in gpu_mip_alpha.c), 1 the fp32 chain
 * (vec4 per texel), 2 the outputs (uint words), 3 acc (statistics, histograms, direct alpha bits; zeroed
 * by the host), 4 the mip lut (mip_common.glsl binding 4: [512,768) sRGB8 thresholds, [768,1024) unorm8
 * decision points). One workgroup of 256 invocations per chunk of 4096 texels of one pair; runs of equal
 * keys are summed per invocation and the chunk's first key in shared memory, so flat alpha (0, 1, a
 * constant) costs one global atomic per chunk. Correct for any subgroup size (no subgroup operations). */
layout(local_size_x = 256) in;

#define HDR_WORDS 12u
#define PAIR_WORDS 12u
#define STAT_WORDS 4u
#define PER_THREAD 16u
#define HIST_HI 16384u
#define HIST_LO 65536u
#define NONE 0xffffffffu

layout(std430, binding = 0) readonly buffer Tab { uint tab[]; };
layout(std430, binding = 1) readonly buffer Chain { vec4 chain[]; };
layout(std430, binding = 2) buffer Out { uint outw[]; };
layout(std430, binding = 3) buffer Acc { uint acc[]; };
layout(std430, binding = 4) readonly buffer Lut { float lut[]; };

layout(push_constant) uniform Push { uint pass; } pc;

shared uint s_key, s_cnt, s_zero, s_max, s_max2;

/* clamp(a, 0, 1) as filters.c does it (a > 0 ? min(a, 1) : 0; NaN -> 0), on the bits */
uint clamp_bits(uint u)
{
    if (u >= 0x80000000u || u > 0x7f800000u) return 0u; /* negative, -0, NaN */
    return min(u, 0x3f800000u);
}

/* (hi:lo) >> s, low 32 bits, 0 <= s < 64 */
uint shr64(uint hi, uint lo, int s)
{
    if (s == 0) return lo;
    if (s < 32) return (lo >> uint(s)) | (hi << uint(32 - s));
    return hi >> uint(s - 32);
}

/* fl(x * y) of two non-negative finite fp32 bit patterns, round to nearest even, denormals kept (as the
 * CPU's SSE multiply): the 48-bit product of the significands, rounded at the result's unit */
uint soft_mul(uint x, uint y)
{
    if (x == 0u || y == 0u) return 0u;
    int ex = int(x >> 23), ey = int(y >> 23);
    uint mx = x & 0x7fffffu, my = y & 0x7fffffu;
    if (ex == 0) ex = 1; else mx |= 0x800000u;
    if (ey == 0) ey = 1; else my |= 0x800000u;
    uint hi, lo;
    umulExtended(mx, my, hi, lo); /* P = hi:lo < 2^48, value P * 2^E */
    int nb = hi != 0u ? 32 + findMSB(hi) : findMSB(lo);
    int E = ex + ey - 300;
    int bexp = nb + E + 127;                 /* biased exponent when normal */
    int sh = max(nb - 23, -149 - E);         /* bits below the result's unit */
    uint q;
    if (sh <= 0) {
        q = lo << uint(-sh);                 /* exact (P < 2^24 here) */
    } else {
        if (sh >= 49) return 0u;             /* P < 2^(sh - 1): rounds to 0 */
        q = shr64(hi, lo, sh);
        uint guard = shr64(hi, lo, sh - 1) & 1u;
        int k = sh - 1;
        bool sticky = k == 0 ? false
                      : k < 32 ? (lo & ((1u << uint(k)) - 1u)) != 0u
                      : k == 32 ? lo != 0u
                                : (lo != 0u || (hi & ((1u << uint(k - 32)) - 1u)) != 0u);
        if (guard != 0u && (sticky || (q & 1u) != 0u)) q++;
    }
    return (uint(max(bexp, 1) - 1) << 23) + q; /* a carry into 2^24 (2^23 for denormals) moves the exponent */
}

/* kiln__float_to_half (src/core/half.c) of a non-negative finite fp32 bit pattern <= 1.0: round to nearest
 * even on the bits (packHalf2x16's rounding is the driver's) */
uint f2h(uint x)
{
    int e = int(x >> 23) - 127 + 15;
    uint man = x & 0x7fffffu;
    if (e <= 0) {
        if (e < -10) return 0u;
        man |= 0x800000u;
        uint shift = uint(14 - e);
        uint hm = man >> shift, rem = man & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
        if (rem > halfway || (rem == halfway && (hm & 1u) != 0u)) hm++;
        return hm;
    }
    uint h = (uint(e) << 10) | (man >> 13), rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u) != 0u)) h++;
    return h;
}

/* kiln__float_to_half (src/core/half.c) of any fp32 bit pattern: sign, NaN (quiet, top payload bits), overflow
 * to infinity, fp32 denormals to signed zero, round to nearest even (helper mipfall, mode 4's colour) */
uint f2h_full(uint x)
{
    uint sign = (x >> 16) & 0x8000u, e8 = (x >> 23) & 0xffu, man = x & 0x7fffffu;
    if (e8 == 0xffu) return sign | 0x7c00u | (man != 0u ? 0x200u | (man >> 13) : 0u);
    int e = int(e8) - 127 + 15;
    if (e >= 31) return sign | 0x7c00u;
    if (e <= 0) {
        if (e < -10) return sign;
        man |= 0x800000u;
        uint shift = uint(14 - e);
        uint hm = man >> shift, rem = man & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
        if (rem > halfway || (rem == halfway && (hm & 1u) != 0u)) hm++;
        return sign | hm;
    }
    uint h = sign | (uint(e) << 10) | (man >> 13), rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u) != 0u)) h++;
    return h;
}

/* mip_common.glsl's exact encoders (kiln__linear_to_srgb8, kiln__float_to_unorm8) on the same lut */
float linear_to_srgb(float l)
{
    l = clamp(l, 0.0, 1.0);
    return l <= 0.0031308 ? 12.92 * l : 1.055 * pow(l, 1.0 / 2.4) - 0.055;
}

uint enc_srgb8(float x)
{
    if (!(x >= lut[512u])) return 0u;
    if (x >= 1.0) return 255u;
    uint c = uint(clamp(linear_to_srgb(x) * 255.0 + 0.5, 1.0, 255.0));
    while (c < 255u && lut[512u + c] <= x) c++;
    while (c > 1u && lut[512u + c - 1u] > x) c--;
    return c;
}

uint enc_unorm8(float v)
{
    if (!(v >= lut[768u])) return 0u;
    if (v >= 1.0) return 255u;
    uint c = uint(clamp(v * 255.0 + 0.5, 1.0, 255.0));
    while (c < 255u && lut[768u + c] <= v) c++;
    while (c > 1u && lut[768u + c - 1u] > v) c--;
    return c;
}

void flush_key(uint base, uint key, uint cnt, uint wkey)
{
    if (cnt == 0u) return;
    if (key == wkey) atomicAdd(s_cnt, cnt);
    else atomicAdd(acc[base + key], cnt);
}

void main()
{
    uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    uint lid = gl_LocalInvocationID.x;
    uint nchunks = tab[1];
    if (wg >= nchunks) return; /* whole workgroup: uniform */
    uint coff = tab[5] + 2u * wg;
    uint p = tab[coff], first = tab[coff + 1u];
    uint pr = HDR_WORDS + PAIR_WORDS * p;
    uint cbase = tab[pr], n = tab[pr + 1u], obase = tab[pr + 2u], kind = tab[pr + 3u], slot = tab[pr + 4u];
    uint end = min(n, first + 256u * PER_THREAD);
    uint stat = STAT_WORDS * p;

    if (pc.pass == 2u) {
        uint mode = tab[2];
        uint sbits = tab[pr + 8u], aflags = tab[pr + 9u];
        for (uint i = 0u; i < PER_THREAD; i++) {
            uint t = first + i * 256u + lid;
            if (t >= end) break;
            uint a = mode == 2u ? outw[obase + 4u * t + 3u] : floatBitsToUint(chain[cbase + t].a);
            /* tab[3] bit 1 (helper mipfall, kiln__gpu_mip_alpha_convert): no coverage, alpha as the chain holds it */
            uint r = (tab[3] & 2u) != 0u       ? a
                     : (aflags & 1u) != 0u    ? 0x3f800000u
                                              : min(soft_mul(sbits, clamp_bits(a)), 0x3f800000u);
            if (mode == 0u) {
                uint o = obase + t;
                outw[o] = (outw[o] & 0x00ffffffu) | enc_unorm8(uintBitsToFloat(r)) << 24;
            } else if (mode == 1u) {
                uint o = obase + 2u * t + 1u;
                outw[o] = (outw[o] & 0xffffu) | (f2h(r) << 16);
            } else if (mode == 2u) {
                outw[obase + 4u * t + 3u] = r;
            } else if (mode == 4u) {
                vec4 v = chain[cbase + t];
                uint o = obase + 2u * t;
                outw[o] = f2h_full(floatBitsToUint(v.r)) | f2h_full(floatBitsToUint(v.g)) << 16;
                outw[o + 1u] = f2h_full(floatBitsToUint(v.b)) | f2h_full(r) << 16;
            } else {
                vec4 v = chain[cbase + t];
                uint cr, cg, cb;
                if ((tab[3] & 1u) != 0u) {
                    cr = enc_srgb8(v.r);
                    cg = enc_srgb8(v.g);
                    cb = enc_srgb8(v.b);
                } else {
                    cr = enc_unorm8(v.r);
                    cg = enc_unorm8(v.g);
                    cb = enc_unorm8(v.b);
                }
                outw[obase + t] = cr | cg << 8 | cb << 16 | enc_unorm8(uintBitsToFloat(r)) << 24;
            }
        }
        return;
    }

    if (kind == 1u) { /* direct: the raw alpha bits (pass 0 only) */
        if (pc.pass != 0u) return;
        for (uint i = 0u; i < PER_THREAD; i++) {
            uint t = first + i * 256u + lid;
            if (t >= end) break;
            acc[tab[7] + slot + t] = floatBitsToUint(chain[cbase + t].a);
        }
        return;
    }

    uint hi = tab[pr + 5u], hb = tab[pr + 6u], ha = tab[pr + 7u];
    if (pc.pass == 1u && hi == NONE) return; /* decided after pass 0 */
    uint hbase = pc.pass == 0u ? tab[6] + HIST_HI * slot : tab[8] + HIST_LO * slot;
    /* the chunk's first key (every invocation reads it: no barrier needed before it is used) */
    uint b0 = clamp_bits(floatBitsToUint(chain[cbase + first].a));
    uint wkey = pc.pass == 0u ? b0 >> 16 : ((b0 >> 16) == hi ? (b0 & 0xffffu) : NONE);
    if (lid == 0u) {
        s_cnt = 0u;
        s_zero = 0u;
        s_max = 0u;
        s_max2 = 0u;
    }
    barrier();
    uint key = NONE, cnt = 0u, zeros = 0u, vmax = 0u, vmax2 = 0u;
    for (uint i = 0u; i < PER_THREAD; i++) {
        uint t = first + i * 256u + lid;
        if (t >= end) break;
        uint b = clamp_bits(floatBitsToUint(chain[cbase + t].a));
        uint k;
        if (pc.pass == 0u) {
            k = b >> 16;
            zeros += b == 0u ? 1u : 0u;
            vmax = max(vmax, b);
        } else {
            uint h = b >> 16;
            if (h == hb) vmax = max(vmax, b);
            if (h == ha) vmax2 = max(vmax2, ~b);
            if (h != hi) continue;
            k = b & 0xffffu;
        }
        if (k == key) {
            cnt++;
        } else {
            flush_key(hbase, key, cnt, wkey);
            key = k;
            cnt = 1u;
        }
    }
    flush_key(hbase, key, cnt, wkey);
    if (zeros != 0u) atomicAdd(s_zero, zeros);
    if (vmax != 0u) atomicMax(s_max, vmax);
    if (vmax2 != 0u) atomicMax(s_max2, vmax2);
    barrier();
    if (lid == 0u) {
        if (s_cnt != 0u) atomicAdd(acc[hbase + wkey], s_cnt);
        if (pc.pass == 0u) {
            if (s_zero != 0u) atomicAdd(acc[stat], s_zero);
            if (s_max != 0u) atomicMax(acc[stat + 1u], s_max);
        } else {
            if (s_max != 0u) atomicMax(acc[stat + 2u], s_max);
            if (s_max2 != 0u) atomicMax(acc[stat + 3u], s_max2);
        }
    }
}

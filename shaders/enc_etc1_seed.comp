#version 450
#extension GL_EXT_control_flow_attributes : require
// enc_etc1_seed.comp - the seed design of the ETC1 encoder (betsy): 4 invocations per block, one per
// configuration (flip 0 = two 2x4 halves side by side / flip 1 = two 4x2 halves stacked) x (individual
// 444 / differential 555+333). Each does an rg_etc1-style base colour search for its configuration:
// the half's mean colour quantised, then every base in a cube of radius R around it (R by quality:
// fast 0, normal 1, high / max 2), each with its best intensity table and selectors (plain RGB squared
// error); differential mode keeps the best pair of candidates whose difference fits in 3 bits. A
// shared-memory min-reduction over the 4 (ties: the lowest configuration index) picks the winner, which
// writes the block. 16 blocks per workgroup of 64.
// The fixed inner loops (4 levels, 8 texels, 8 tables) are unrolled: lavapipe (gallivm) caps the
// iterations a shader invocation's loops may run in total (a guard against endless loops, 65535) and
// silently leaves every loop once it is spent. Radius 2 without the unrolling ran past it in the
// individual-mode search and every later loop, the selector loop included, stopped after one
// iteration: the "header right, selector word all zeros" blocks.
// PRELOAD (specialisation constant 1; 0 is the host's local size): 1 = the block's 16 texels are staged in shared memory once,
// 0 = every use reads the source buffer directly.
// Input (binding 0): the image's RGBA8 words. Output (binding 1): 2 words per block (big-endian bytes).
layout(local_size_x = 64) in;
layout(constant_id = 1) const int PRELOAD = 1;

layout(push_constant) uniform Push {
    uint width, height; // image size
    uint bx;            // blocks per row
    uint nblocks;
    int quality;        // kiln_quality
} pc;

layout(std430, binding = 0) readonly buffer Src { uint w[]; } src;
layout(std430, binding = 1) writeonly buffer Dst { uint w[]; } dst;

#include "etc_tables.glsl"

shared uint s_px[256];
shared uint s_err[64];
shared int s_mod[32];

uint block_of(uint lid) { return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 16u + (lid >> 2u); }

uint read_px(uint block, uint p)
{
    uint x = min((block % pc.bx) * 4u + (p & 3u), pc.width - 1u);
    uint y = min((block / pc.bx) * 4u + (p >> 2u), pc.height - 1u);
    return src.w[y * pc.width + x];
}

ivec3 texel(uint lid, uint block, uint p)
{
    uint v = PRELOAD != 0 ? s_px[(lid & ~3u) * 4u + p] : read_px(block, p);
    return ivec3(int(v & 255u), int((v >> 8u) & 255u), int((v >> 16u) & 255u));
}

// Row-major pixel index of the i-th texel (0..7) of half s.
uint half_px(int flip, int s, int i)
{
    return flip == 0 ? uint((i >> 1) * 4 + 2 * s + (i & 1)) : uint((2 * s + (i >> 2)) * 4 + (i & 3));
}

int sq(ivec3 d) { return d.x * d.x + d.y * d.y + d.z * d.z; }

// Error of one texel against base c with table t: the smallest of the 4 levels (first index on ties).
int px_err(ivec3 px, ivec3 c, int t, out int idx)
{
    int be = 0x7fffffff;
    idx = 0;
    [[unroll]] for (int i = 0; i < 4; i++) {
        int m = s_mod[t * 4 + i];
        int e = sq(px - clamp(c + ivec3(m), ivec3(0), ivec3(255)));
        if (e < be) {
            be = e;
            idx = i;
        }
    }
    return be;
}

// Smallest error of half s over the 8 tables for the expanded base c; table in t.
uint half_err(uint lid, uint block, int flip, int s, ivec3 c, out int tbest)
{
    uint best = 0xffffffffu;
    tbest = 0;
    [[unroll]] for (int t = 0; t < 8; t++) {
        uint e = 0u;
        [[unroll]] for (int i = 0; i < 8; i++) {
            int idx;
            e += uint(px_err(texel(lid, block, half_px(flip, s, i)), c, t, idx));
        }
        if (e < best) {
            best = e;
            tbest = t;
        }
    }
    return best;
}

ivec3 expand4(ivec3 q) { return (q << 4) | q; }
ivec3 expand5(ivec3 q) { return (q << 3) | (q >> 2); }

// The largest radius (high / max): the private arrays e0 / e1 of the differential search hold NC errors,
// one per candidate. (They were once sized for radius 1 while radius 2 ran 125 candidates: the writes
// past their end clobbered other private state on lavapipe, which looked like individual-mode blocks
// with an all-zero selector word.)
const int RMAX = 2;
const int NC = (2 * RMAX + 1) * (2 * RMAX + 1) * (2 * RMAX + 1);

ivec3 cand(ivec3 centre, int k, int r, int qmax)
{
    int d = 2 * r + 1;
    return clamp(centre + ivec3(k % d, (k / d) % d, k / (d * d)) - ivec3(r), ivec3(0), ivec3(qmax));
}

uint swap32(uint v) { return (v >> 24u) | ((v >> 8u) & 0xff00u) | ((v << 8u) & 0xff0000u) | (v << 24u); }

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    const uint block = block_of(lid);
    const bool live = block < pc.nblocks;
    const int flip = int(lid & 1u), diff = int((lid >> 1u) & 1u);
    if (lid < 32u) s_mod[lid] = ETC_MOD[lid];
    if (PRELOAD != 0 && live)
        for (uint i = 0u; i < 4u; i++) s_px[(lid & ~3u) * 4u + (lid & 3u) * 4u + i] = read_px(block, (lid & 3u) * 4u + i);
    barrier();

    const int r = pc.quality <= 0 ? 0 : (pc.quality == 1 ? 1 : RMAX);
    const int nc = (2 * r + 1) * (2 * r + 1) * (2 * r + 1);
    const int qmax = diff != 0 ? 31 : 15;
    ivec3 q[2];
    int tb[2];
    uint total = 0xffffffffu;
    if (live) {
        ivec3 centre[2];
        for (int s = 0; s < 2; s++) {
            ivec3 sum = ivec3(0);
            [[unroll]] for (int i = 0; i < 8; i++) sum += texel(lid, block, half_px(flip, s, i));
            // round(mean * qmax / 255) = round(sum * qmax / (8 * 255))
            centre[s] = (sum * qmax + ivec3(1020)) / 2040;
        }
        if (diff == 0) {
            total = 0u;
            for (int s = 0; s < 2; s++) {
                uint be = 0xffffffffu;
                for (int k = 0; k < nc; k++) {
                    ivec3 c = cand(centre[s], k, r, qmax);
                    int t;
                    uint e = half_err(lid, block, flip, s, expand4(c), t);
                    if (e < be) {
                        be = e;
                        q[s] = c;
                        tb[s] = t;
                    }
                }
                total += be;
            }
        } else {
            uint e0[NC], e1[NC];
            for (int k = 0; k < nc; k++) {
                int t;
                e0[k] = half_err(lid, block, flip, 0, expand5(cand(centre[0], k, r, 31)), t);
                e1[k] = half_err(lid, block, flip, 1, expand5(cand(centre[1], k, r, 31)), t);
            }
            int k0 = -1, k1 = -1;
            for (int a = 0; a < nc; a++)
                for (int b = 0; b < nc; b++) {
                    ivec3 d = cand(centre[1], b, r, 31) - cand(centre[0], a, r, 31);
                    if (any(lessThan(d, ivec3(-4))) || any(greaterThan(d, ivec3(3)))) continue;
                    uint e = e0[a] + e1[b];
                    if (k0 < 0 || e < total) {
                        total = e;
                        k0 = a;
                        k1 = b;
                    }
                }
            if (k0 >= 0) {
                q[0] = cand(centre[0], k0, r, 31);
                q[1] = cand(centre[1], k1, r, 31);
            } else {
                // no pair fits: the best first base, the second clamped into its reach
                uint be = 0xffffffffu;
                for (int a = 0; a < nc; a++)
                    if (e0[a] < be) {
                        be = e0[a];
                        k0 = a;
                    }
                q[0] = cand(centre[0], k0, r, 31);
                ivec3 lo = max(q[0] - ivec3(4), ivec3(0)), hi = min(q[0] + ivec3(3), ivec3(31));
                ivec3 c1 = clamp(centre[1], lo, hi);
                uint eb = 0xffffffffu;
                for (int k = 0; k < 8 * 8 * 8; k++) {
                    ivec3 c = clamp(q[0] + ivec3(k & 7, (k >> 3) & 7, k >> 6) - ivec3(4), lo, hi);
                    if (r == 0 && c != c1) continue; // fast: the clamped mean only
                    int t;
                    uint e = half_err(lid, block, flip, 1, expand5(c), t);
                    if (e < eb) {
                        eb = e;
                        q[1] = c;
                    }
                }
                total = be + eb;
            }
            for (int s = 0; s < 2; s++) half_err(lid, block, flip, s, expand5(q[s]), tb[s]);
        }
    }
    s_err[lid] = total;
    barrier();
    if (!live) return;
    // min-reduction over the block's 4 configurations, ties to the lowest configuration
    const uint g = lid & ~3u;
    uint win = g;
    for (uint i = 1u; i < 4u; i++)
        if (s_err[g + i] < s_err[win]) win = g + i;
    if (win != lid) return;

    uint hi;
    if (diff == 0) {
        hi = (uint(q[0].x) << 28) | (uint(q[1].x) << 24) | (uint(q[0].y) << 20) | (uint(q[1].y) << 16) |
             (uint(q[0].z) << 12) | (uint(q[1].z) << 8);
    } else {
        ivec3 d = q[1] - q[0];
        hi = (uint(q[0].x) << 27) | ((uint(d.x) & 7u) << 24) | (uint(q[0].y) << 19) | ((uint(d.y) & 7u) << 16) |
             (uint(q[0].z) << 11) | ((uint(d.z) & 7u) << 8) | 2u;
    }
    hi |= (uint(tb[0]) << 5) | (uint(tb[1]) << 2) | uint(flip);
    uint lo = 0u;
    for (int s = 0; s < 2; s++) {
        ivec3 c = diff != 0 ? expand5(q[s]) : expand4(q[s]);
        for (int i = 0; i < 8; i++) {
            uint p = half_px(flip, s, i);
            int idx;
            px_err(texel(lid, block, p), c, tb[s], idx);
            uint j = (p & 3u) * 4u + (p >> 2u);
            lo |= (uint(idx) & 1u) << j;
            lo |= (uint(idx) >> 1u) << (16u + j);
        }
    }
    dst.w[block * 2u] = swap32(hi);
    dst.w[block * 2u + 1u] = swap32(lo);
}

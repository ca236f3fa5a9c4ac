#version 450
// flame_iterate.comp - the fractal-flame chaos game (flam3's flam3_iterate + rect.c accumulation) with
// the design of /work/shared/notes/flame.md section 8:
//
//  * Warp-uniform transform choice: every round each subgroup draws ONE xform from a counter-based
//    hash of (seed, launch, workgroup, round) and its ring slot - the same value in every lane without
//    any subgroup operation - so all lanes run the same variation code (no divergence); the subgroups
//    of a workgroup sample the weights stratified (see the main loop). The choice
//    is weighted by the xform weights; with xaos (chaos) the subgroup draws from the envelope
//    q_j ~ max_p P(p -> j) and each lane accepts with probability P(prev -> j) / max_p P(p -> j):
//    accepted moves follow flam3's per-point distribution exactly; a rejected lane neither moves
//    nor plots in that round.
//  * Ring shuffle: after every round each point moves to another subgroup through shared memory.
//    Slot (w, l) = (gl_SubgroupID, gl_SubgroupInvocationID) (no lane-order assumption); the point in
//    lane l of subgroup w goes to lane l of subgroup (w + rot(round, l)) mod Wn, rot a hash of (workgroup, round,
//    lane index). For each lane index this is a rotation of the subgroups, so the whole map is a
//    permutation of the workgroup's slots for any subgroup size and count; two points share a
//    subgroup in a round with probability 1/Wn, independently of the rounds before. If the device ever runs
//    partial subgroups (gl_NumSubgroups * gl_SubgroupSize != workgroup size) the slots fall back to
//    the local index (still a permutation). Double-buffered: one barrier per round.
//  * flam3's iteration rules: fuse rounds (not plotted), bad values (NaN or |x|,|y| > 1e10) replaced
//    by a random point and retried up to 4 times without counting, the 5th plotted; the final xform
//    (applied with probability = its opacity) is plotted only, keeping the normal xform's visibility.
//  * Accumulation with 32-bit integer atomics in a packed format: two words per bucket (R | G << 16,
//    B | A << 16) of integers: like flam3 (bits = 33) and the CPU renderer, each sample adds
//    trunc(vis * palette * 255) per channel. atomicAdd returns the old word, so the one add that carries
//    out of a low field, or wraps the word, is known exactly and counted in the bucket's carry
//    counters: nothing overflows silently and flame_flush.comp reconstructs the exact sums in float.
//
// Opt-in modes beyond the notes' design (docs/FLAME.md "Beyond the notes' design"; off by default):
//  * flag 64, hot tile: samples landing in the tile (origin pad0 = x | y << 16, size pad1 = w | h << 16,
//    w * h <= KF_TILE, specialisation constant 1) go to per-channel 32-bit shared-memory sums with shared
//    atomics; at the end of the dispatch the workgroup adds each non-zero tile bucket to the global
//    accumulator once (kf_add_total: exact, carries included), so the integer sums equal the default's.
//  * flag 128, saturated buckets: a bucket whose word-1 wrap counter (A / 65536 units) has reached
//    pad2 & 0xffffff stops taking atomics (pad2 >> 24 == 0), or keeps one sample in 2^(pad2 >> 24) at
//    2^(pad2 >> 24) times the weight (unbiased thinning).
//  * flag 256, subsampled chroma: word b = Y | A << 16 per bucket (Y = R + G + B, carries at 2b, 2b + 1)
//    and one word R | B << 16 per 2x2 block k at hist_w * hist_h + k (carries at 2 * (hist_w * hist_h + k));
//    flame_flush_chroma.comp rebuilds RGB = block chromaticity scaled to the bucket's Y.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#include "flame_abi.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint KF_TILE = 1u; // hot-tile buckets (flag 64)

layout(push_constant) uniform Push {
    uint n;            // normal xforms
    uint final_rec;    // record offset of the final xform, 0 when none
    uint flags;        // 1 xaos, 2 linear palette, 4 rotated, 8 initialise the points,
                       // 16 per-lane xform choice (divergent; for comparisons), 32 no ring shuffle,
                       // 64 hot tile, 128 saturated buckets, 256 subsampled chroma (see above)
    uint rounds;
    uint fuse;         // rounds not plotted (first launch)
    uint seed_lo, seed_hi, launch;
    uint hist_w, hist_h;
    float xmin, ymin, xmax, ymax;
    float sx, sy;      // histogram cells per world unit
    float r00, r01, r10, r11, cx, cy; // camera rotation about (cx, cy)
    float final_opacity;
    uint pad0, pad1, pad2;
} pc;

layout(std430, binding = 0) buffer Points { uvec4 pts[]; };
layout(std430, binding = 1) readonly buffer Xforms { float xf[]; };
layout(std430, binding = 2) readonly buffer Palette { vec4 pal[]; }; // dmap (x 255), then dmapi
layout(std430, binding = 3) buffer Hist { uint hist[]; };            // 2 words per bucket
layout(std430, binding = 4) buffer Carry { uint carry[]; };          // 4 counters per bucket
layout(std430, binding = 5) buffer Counters { uint counters[]; };    // samples, bad values

shared uvec4 ring[2][gl_WorkGroupSize.x];
shared uvec4 tile[KF_TILE]; // hot-tile sums R, G, B, A (flag 64)

// ---------------------------------------------------------------- random numbers
uint kf_hash(uint x)
{
    x ^= x >> 16; x *= 0x7feb352du;
    x ^= x >> 15; x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

uvec4 rng; // xoshiro128** state of this invocation

uint kf_next()
{
    uint r = rng.y * 5u;
    r = ((r << 7) | (r >> 25)) * 9u;
    uint t = rng.y << 9;
    rng.z ^= rng.x; rng.w ^= rng.y; rng.y ^= rng.z; rng.x ^= rng.w;
    rng.z ^= t;
    rng.w = (rng.w << 11) | (rng.w >> 21);
    return r;
}

float kf_rand01() { return float(kf_next() >> 8) * (1.0 / 16777216.0); }
float kf_rand11() { return float(kf_next() >> 8) * (2.0 / 16777216.0) - 1.0; }
float kf_param(uint i) { return xf[i]; }

#include "flame_variations.glsl"

// ---------------------------------------------------------------- one xform (flam3's apply_xform)
// Returns true for a bad value; the point is then a random one, as flam3 does.
bool kf_apply(uint rec, vec3 p, out vec3 q)
{
    float tx = xf[rec + 0u] * p.x + xf[rec + 2u] * p.y + xf[rec + 4u];
    float ty = xf[rec + 1u] * p.x + xf[rec + 3u] * p.y + xf[rec + 5u];
    float s = xf[rec + KF_H_SPEED];
    q.z = s * xf[rec + KF_H_COLOR] + (1.0 - s) * p.z;
    float pb = xf[rec + KF_H_PREBLUR];
    if (pb != 0.0) { // pre_blur acts on (tx, ty) before the precalculation
        float g = pb * (kf_rand01() + kf_rand01() + kf_rand01() + kf_rand01() - 2.0);
        float a = kf_rand01() * 2.0 * KF_PI;
        tx += g * cos(a);
        ty += g * sin(a);
    }
    uint flags = floatBitsToUint(xf[rec + KF_H_FLAGS]);
    kf_pre f;
    f.tx = tx; f.ty = ty;
    f.sumsq = tx * tx + ty * ty;
    f.sqr = sqrt(f.sumsq);
    f.atan_xy = (flags & KF_FLAG_ATAN_XY) != 0u ? kf_atan2(tx, ty) : 0.0;
    f.sina = 0.0; f.cosa = 0.0;
    if ((flags & KF_FLAG_ANGLES) != 0u) { f.sina = tx / f.sqr; f.cosa = ty / f.sqr; }
    f.atan_yx = (flags & KF_FLAG_ATAN_YX) != 0u ? kf_atan2(ty, tx) : 0.0;
    vec2 acc = vec2(0.0);
    uint nv = floatBitsToUint(xf[rec + KF_H_NVARS]);
    for (uint v = 0u; v < nv; v++) {
        uint e = rec + KF_HDR_WORDS + v * KF_VAR_WORDS;
        acc += kf_variation(floatBitsToUint(xf[e]), xf[e + 1u], e, f);
    }
    if ((flags & KF_FLAG_POST) != 0u) {
        uint o = rec + KF_H_POST;
        acc = vec2(xf[o + 0u] * acc.x + xf[o + 2u] * acc.y + xf[o + 4u],
                   xf[o + 1u] * acc.x + xf[o + 3u] * acc.y + xf[o + 5u]);
    }
    q.xy = acc;
    bool bad = isnan(acc.x) || isnan(acc.y) || !(abs(acc.x) <= 1e10) || !(abs(acc.y) <= 1e10);
    if (bad) q.xy = vec2(kf_rand11(), kf_rand11());
    return bad;
}

// ---------------------------------------------------------------- accumulation
void kf_add_word(uint w, uint c, uint lo, uint hi)
{
    uint a = lo | (hi << 16);
    if (a == 0u) return;
    uint old = atomicAdd(hist[w], a);
    if ((old & 0xffffu) + lo >= 0x10000u) atomicAdd(carry[c], 1u);  // carry out of the low field
    if (old + a < old) atomicAdd(carry[c + 1u], 1u);                 // the word wrapped
}

// Adds whole channel totals (any 32-bit values) to word w with carry counters c, c + 1: the multiples
// of 65536 of the low field go straight to its carry counter (each one is +65536 low, -1 high in
// flame_flush.comp's identities, so the high total takes them back), those of the high field to the
// wrap counter; the remainders go through kf_add_word. Exact.
void kf_add_total(uint w, uint c, uint lo, uint hi)
{
    uint qlo = lo >> 16;
    uint hi2 = hi + qlo;
    uint qhi = hi2 >> 16;
    kf_add_word(w, c, lo & 0xffffu, hi2 & 0xffffu);
    if (qlo != 0u) atomicAdd(carry[c], qlo);
    if (qhi != 0u) atomicAdd(carry[c + 1u], qhi);
}

void kf_plot(vec3 p, float vis)
{
    if (vis == 0.0) return;
    float px = p.x, py = p.y;
    if ((pc.flags & 4u) != 0u) {
        float dx = px - pc.cx, dy = py - pc.cy;
        px = dx * pc.r00 + dy * pc.r10 + pc.cx;
        py = dx * pc.r01 + dy * pc.r11 + pc.cy;
    }
    if (!(px >= pc.xmin && py >= pc.ymin && px <= pc.xmax && py <= pc.ymax)) return;
    uint ix = min(uint((px - pc.xmin) * pc.sx), pc.hist_w - 1u);
    uint iy = min(uint((py - pc.ymin) * pc.sy), pc.hist_h - 1u);
    // flam3 (bits = 33) and kiln's CPU renderer add integers: each channel's vis * dmap is truncated
    // (step mode at vis 1 adds the truncated palette dmapi, entries 256..511 of the palette buffer)
    vec4 col;
    if ((pc.flags & 2u) != 0u) { // linear palette mode
        float d = p.z * 256.0;
        int ci;
        float fr;
        if (d < 0.0) { ci = 0; fr = 0.0; }
        else if (d >= 255.0) { ci = 254; fr = 1.0; }
        else { ci = int(d); fr = d - float(ci); }
        col = vis * (pal[ci] * (1.0 - fr) + pal[ci + 1] * fr);
    } else {
        float d = p.z * 256.0;
        int ci = d < 0.0 ? 0 : (d >= 255.0 ? 255 : int(d));
        col = vis == 1.0 ? pal[256 + ci] : vis * pal[ci];
    }
    uvec4 v = uvec4(max(col, vec4(0.0)));
    uint b = iy * pc.hist_w + ix;
    if ((pc.flags & 448u) != 0u) { // opt-in modes
        if ((pc.flags & 64u) != 0u) {
            uint tx = ix - (pc.pad0 & 0xffffu), ty = iy - (pc.pad0 >> 16);
            uint tw = pc.pad1 & 0xffffu;
            if (tx < tw && ty < (pc.pad1 >> 16)) {
                uint t = ty * tw + tx;
                if (v.x != 0u) atomicAdd(tile[t].x, v.x);
                if (v.y != 0u) atomicAdd(tile[t].y, v.y);
                if (v.z != 0u) atomicAdd(tile[t].z, v.z);
                if (v.w != 0u) atomicAdd(tile[t].w, v.w);
                return;
            }
        }
        if ((pc.flags & 128u) != 0u && carry[4u * b + 3u] >= (pc.pad2 & 0xffffffu)) {
            uint k = pc.pad2 >> 24;
            if (k == 0u || (kf_next() >> (32u - k)) != 0u) return;
            v <<= k;
        }
        if ((pc.flags & 256u) != 0u) {
            uint nb = pc.hist_w * pc.hist_h;
            uint blk = nb + (iy >> 1) * ((pc.hist_w + 1u) >> 1) + (ix >> 1);
            kf_add_word(b, 2u * b, v.x + v.y + v.z, v.w);
            kf_add_word(blk, 2u * blk, v.x, v.z);
            return;
        }
    }
    kf_add_word(2u * b, 4u * b, v.x, v.y);
    kf_add_word(2u * b + 1u, 4u * b + 2u, v.z, v.w);
}

// ---------------------------------------------------------------- main loop
void main()
{
    const uint LS = gl_WorkGroupSize.x;
    uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    uint lid = gl_LocalInvocationIndex;
    uint gid = wg * LS + lid;
    uint key = kf_hash(pc.seed_lo ^ kf_hash(pc.launch * 0x9e3779b9u ^ kf_hash(gid)));
    rng = uvec4(kf_hash(key ^ 0x1b873593u), kf_hash(key ^ 0x85ebca6bu), kf_hash(key ^ 0xc2b2ae35u),
                kf_hash(key ^ 0x27d4eb2fu) | 1u);

    // ring slots: (subgroup, lane) when the subgroups are full, else the local index
    uint S = gl_SubgroupSize, Wn = gl_NumSubgroups, w = gl_SubgroupID, l = gl_SubgroupInvocationID;
    if (Wn * S != LS) { Wn = LS / S; w = lid / S; l = lid % S; }
    uint my_slot = w * S + l;
    uint wg_key = kf_hash(pc.seed_lo ^ kf_hash(pc.launch ^ kf_hash(wg + 0x1b56c4e9u)));

    vec3 p;
    uint meta; // previous xform + 1 (0: none) | consecutive bad values << 8
    if ((pc.flags & 8u) != 0u) {
        p = vec3(kf_rand11(), kf_rand11(), kf_rand01());
        meta = 0u;
    } else {
        uvec4 s = pts[gid];
        p = uintBitsToFloat(s.xyz);
        meta = s.w;
    }
    const uint n = pc.n;
    const float total = xf[KF_TAB_CUM + n - 1u];
    const bool xaos = (pc.flags & 1u) != 0u;
    uint samples = 0u, bad_values = 0u;
    if ((pc.flags & 64u) != 0u) { // hot tile: clear the shared sums
        for (uint t = lid; t < KF_TILE; t += LS) tile[t] = uvec4(0u);
        barrier();
    }

    for (uint r = 0u; r < pc.rounds; r++) {
        // the subgroup's xform (same hash in every lane of the subgroup)
        // Stratified across the workgroup: in round r the Wn subgroups take the strata
        // [(k + U) / Wn] of one shared uniform U, k = (w + offset) mod Wn, so the xforms the workgroup
        // runs follow the weights almost exactly (a subgroup's S points share one choice, which alone
        // would multiply the noise of the coarse sub-region masses by S at low sample counts). A
        // point's own stratum is uniform and new every round (the random ring rotation below moves
        // it), so each point still follows flam3's chain exactly.
        uint hr = kf_hash(wg_key + r * 0x9e3779b9u);
        float u = (pc.flags & 16u) != 0u ? kf_rand01() * total // per-lane choice (comparison mode)
                                         : (float((w + hr) % Wn) + float(kf_hash(hr ^ 0x68e31da4u) >> 8) * (1.0 / 16777216.0)) /
                                               float(Wn) * total;
        uint j = 0u;
        while (j + 1u < n && xf[KF_TAB_CUM + j] <= u) j++;
        uint prev = meta & 0xffu;
        bool take = !xaos || kf_rand01() < xf[KF_TAB_ACC + prev * n + j];
        if (take) {
            uint rec = floatBitsToUint(xf[KF_TAB_OFFSETS + j]);
            vec3 q;
            bool counted = true;
            if (kf_apply(rec, p, q)) {
                bad_values++;
                uint consec = (meta >> 8) + 1u;
                if (consec < 5u) { // flam3: retry from the random point, not counted
                    meta = prev | (consec << 8);
                    counted = false;
                } else {
                    meta = prev;
                }
            } else {
                meta = prev;
            }
            p = q;
            if (counted) {
                meta = j + 1u;
                float vis = xf[rec + KF_H_VIS];
                vec3 o = p;
                if (pc.final_rec != 0u && (pc.final_opacity >= 1.0 || kf_rand01() < pc.final_opacity)) {
                    kf_apply(pc.final_rec, p, o); // a bad value plots the random point, as flam3
                }
                if (r >= pc.fuse) {
                    samples++;
                    kf_plot(o, vis);
                }
            }
        }
        // ring shuffle to other subgroups (double-buffered: one barrier per round)
        uint b = r & 1u;
        // every lane index gets its own random rotation of the subgroups each round (the same for all
        // subgroups: a permutation of the slots), so two points share a subgroup - and an xform - with
        // probability 1/Wn per round, independently of earlier rounds (a fixed lane-dependent rotation
        // kept some pairs together every other round at 8 subgroups per workgroup)
        uint rot = kf_hash(wg_key ^ (r * 0x9e3779b9u + l * 0x85ebca6bu)) % Wn;
        uint dest = (pc.flags & 32u) != 0u ? w : (w + rot) % Wn;
        ring[b][dest * S + l] = uvec4(floatBitsToUint(p), meta);
        barrier();
        uvec4 s = ring[b][my_slot];
        p = uintBitsToFloat(s.xyz);
        meta = s.w;
    }
    pts[gid] = uvec4(floatBitsToUint(p), meta);
    if ((pc.flags & 64u) != 0u) { // hot tile: one exact global add per non-zero bucket
        barrier();
        uint tw = pc.pad1 & 0xffffu, tn = tw * (pc.pad1 >> 16);
        for (uint t = lid; t < tn; t += LS) {
            uvec4 a = tile[t];
            if (a == uvec4(0u)) continue;
            uint b = ((pc.pad0 >> 16) + t / tw) * pc.hist_w + (pc.pad0 & 0xffffu) + t % tw;
            kf_add_total(2u * b, 4u * b, a.x, a.y);
            kf_add_total(2u * b + 1u, 4u * b + 2u, a.z, a.w);
        }
    }
    if (samples != 0u) atomicAdd(counters[0], samples);
    if (bad_values != 0u) atomicAdd(counters[1], bad_values);
}

#version 450
// enc_bc1_cf3.comp - BC1 / BC1a / BC3-colour at high and max quality, kiln strategy, cluster-fit
// design 3: ONE invocation per block (a workgroup of 32 or 64 holds as many blocks). The same bytes as
// enc_bc1_cf.comp / enc_bc1_cf2.comp and bc1_enc.c's encode_cluster (same float operations in the same
// order), but the invocation runs the CPU's serial algorithm for its own block:
//   - texels, principal axis, ranks (sortable key bits, ties by texel index), prefix sums in grid units
//     (shared memory, one column per invocation: [row][invocation], so the invocations' accesses never
//     share a bank);
//   - every table entry in table order: all invocations of a subgroup read the same entry (uniform
//     loads of the factor table), each scores it against its own block's prefix sums and keeps its best
//     two four-colour entries (first on ties: strict comparisons in table order = the CPU's pick_insert)
//     and its best three-colour one: no merge, no barrier;
//   - the 2 (high) or 3 (max) candidates in the CPU's order: exact indices, and at max one least-squares
//     refit and the alternating exact +-2 channel steps; the first best is kept.
// Products that C rounds before an addition: fm() / fm3() ((a * b) * one, see enc_bc1_cf.comp), or with
// CF_OPT bit 0 plain `precise` products (only correct where the driver honours NoContraction; tested
// against the CPU bytes on the device). The refit and the covariance keep mr() (fp64), as design 2.
// No loop with float arithmetic is [[unroll]] (glslc -O's unroller drops NoContraction).
// No barriers after the texel load, no subgroup operations: any subgroup size and lane order work (the
// split's per-candidate refine pass, CF_OPT bit 10, has two workgroup barriers in uniform control flow; bit 25's
// classify pass one subgroup ballot and atomic per subgroup, correct for any subgroup size and lane order).
// CF_OPT bit 7 splits the kernel into a search pass and a refine pass (helper bc1split; see below).
#include "enc_bc_common.glsl"
#extension GL_KHR_shader_subgroup_ballot : enable
layout(local_size_x_id = 0) in;
#include "enc_bc1.glsl"

// The same buffer as enc_bc1_cf2.comp: words[0] = n4, words[1] = n3, words[2] = 1.0, then from uvec4
// index g_tab per entry 3 uvec4: (Ah, Bh, C, i | j << 8 | k << 16), (p1, p2, p3, p4), (pen, 0, 0, 0).
layout(std430, binding = 3) readonly buffer CfTab { uvec4 v[]; } cft;

// CF_OPT (the host's KILN_EBC_CF3_OPT_COLOUR_MAX / _HIGH: 142565281 at max since 2026-11-26 11:49 UTC, 24481 at high;
// earlier 33 = bits 0 and 5, measured on an H200 on 2026-11-26;
// KILN_GPU_CF_OPT overrides it; values 1, 2, 4, ... in the host's and the docs' words):
// bit 0: plain precise products in the search and the exact scoring (no `* one`)
// (bits 1-4, 6, 13, 23-26 and 28, opt-in variants that lost on the H100 / H200 or changed nothing: P3(i) hoisting,
// driver unrolling, the exact early exits, min / max clamps, the rolled covariance, 16-byte prefix-sum words, the
// nested searches of helper bc1max: removed by helper bc1k on 2026-11-26 for lavapipe compile time, CI; the host
// refuses them; docs/PERFORMANCE.md has their measurements. Bits 3, 4, 6, 13 and 23 name helper bc1n's variants since
// 2026-11-27, in the defaults: max 184515577, high 33578937 = 24481 + bits 3, 4, 25; see below)
// bit 5: one prefix-sum table in shared memory (P3, then P2 for the three-colour search): 268 instead of 472
//        bytes per block (8-bit sources), for occupancy
// bit 7: split into two passes (helper bc1split): this shader runs twice, a SEARCH pass (setup and the
//        table search, without the refinement's code; on the H200 the search pass still took ~120 registers,
//        the refine pass alone 90) that writes its candidates' 565 endpoint
//        pairs into the block's output words (four-colour best, second best at max) and the fallback word
//        (three-colour best as min | max << 16, never 1; 1 = the CPU encodes the block), and, after a
//        barrier, a REFINE pass (bit 15, set by the host only) that reloads the texels, recomputes the
//        totals and the spread, scores / refines the candidates in the CPU's order and writes the block
// bit 8: 8-bit sources: texels read from the source buffer (cached) instead of shared memory (no s_xp:
//        204 instead of 268 bytes per block in the search with bit 5; none in the refine pass)
// bit 9: the four-colour search scores two entries per iteration (more independent work per iteration;
//        kept in table order, so the same entries are kept)
// bit 10: with bit 7, the refine pass runs one invocation per candidate (3 per block, workgroup 96 = 32
//        blocks: the host's choice); invocation 0 of the block picks the first best of the three after a
//        barrier (the CPU's order), so a block's candidates are refined side by side
// bit 11: the search rounds by (x + 1.5 * 2^23) - 1.5 * 2^23 (two adds) instead of roundEven: exact for the
//        clamped 0 <= x <= 63 (the sum's ulp is 1, round to nearest even); the constant goes through the
//        buffer's 1.0 so that the compiler cannot fold the pair
// bit 12: the search does not load the entries' penalties: every entry the host puts in the buffer has
//        penalty +0 (bc1_enc_tables.h; the host drops the bit otherwise), and +0 + es is what the search
//        computes with the constant 0 as well
// bit 14: with bit 9, four entries per iteration instead of two
// (bit 15: the refine pass, set by the host only)
// Bits 16-22 (helper bc1fast, 2026-11-26; the same bytes, conversions and local arrays out of the hot paths):
// bit 16: 8-bit texels converted to float by (2^23 + byte) - 2^23 (a logic op and an add, exact) instead of
//         an integer-to-float conversion (a quarter-rate pipe on NVIDIA)
// bit 17: the refine pass stages its texels in shared memory even with bit 8
// bit 18: the refine pass computes only the totals and the spread c00 + c11 + c22 (the diagonal: the same
//         operations), with bit 10 one channel per candidate invocation, summed by invocation 0
// bit 19: the exact scoring and the channel steps without dynamically indexed arrays (registers instead of
//         local memory), the steps' per-index sums in one pass over the texels (the same sums, same order)
// bit 20: the refinement's products (refit, the refine pass's covariance) as float products (fm: rounded
//         once like mr's double product converted; no subnormal or overflowing product can occur there)
// bit 21: the channel steps round by (x + 1.5 * 2^23) - 1.5 * 2^23 as bit 11 (|x| < 2^22 there)
// bit 22: the search pass's setup (covariance, axis, ranks, prefix sums) with float products as bit 20
// bit 27: channel_step computes b's five values, validity and error terms fm(eb, fm(n1, eb) - 2 s1) once per
//         channel instead of once per pair (the same operations; 25 -> 5 per channel)
// bit 25 (PRELIST, helper bc1m, 2026-11-27; the same bytes: the blocks are independent, only which invocation does
//         which block changes): the blocks the CPU encodes (flat, uncounted texels) left their invocations idle through
//         the whole search and refinement of their subgroup's other blocks (29 % of the bench's synthetic 4096^2). A
//         first pass (bit 26, CLASSIFY, set by the host) loads each block's texels, flags the blocks the CPU encodes
//         and lists the others after the fallback words: fb.words[nblocks] = their number (the host zeroes it and the
//         unused fb.words[nblocks + 1]), the list from fb.words[nblocks + 2]; the search pass and the refine pass run
//         one invocation per listed block. The list's slots come from one atomic per subgroup (sg_take: ballot, any
//         subgroup size and lane order), so the list's order varies from run to run; the bytes do not.
layout(constant_id = 5) const uint CF_OPT = 0;
const bool SPLIT = (CF_OPT & 128u) != 0u;
const bool REFINE = (CF_OPT & 32768u) != 0u; // the split's second pass (the host adds this bit)
// bit 8, unless bit 17 keeps the refine pass's texels in shared memory
// (integer arithmetic on the spec constants: spirv-opt mishandles some boolean spec-constant operations)
const uint B_REF = (CF_OPT >> 15u) & 1u;
const bool TEX_GLOBAL = (((CF_OPT >> 8u) & 1u) & (1u - (B_REF & (CF_OPT >> 17u)))) != 0u;
const bool FASTCVT = (CF_OPT & 65536u) != 0u;
const bool TR_DIAG = (B_REF & (CF_OPT >> 18u)) != 0u;
const bool NOLOCAL = (CF_OPT & 524288u) != 0u;
const uint B_FMREF = (CF_OPT >> 20u) & 1u;
const uint B_FMSET = ((CF_OPT >> 22u) & 1u) * (INPUT_U8 != 0u ? 1u : 0u);
const bool FM_REF = B_FMREF != 0u; // refit, refine pass covariance
const bool FM_SET = B_FMSET != 0u; // search setup (8-bit sources: no tiny products)
const bool MAGIC_STEP = (CF_OPT & 2097152u) != 0u;
const bool STEP_HOIST = (CF_OPT & 134217728u) != 0u; // bit 27: channel_step's b terms once per channel
const bool MULTI = REFINE && (CF_OPT & 1024u) != 0u; // bit 10: 3 invocations per block in the refine pass
const bool PRELIST = (CF_OPT & 33554432u) != 0u; // bit 25: the passes run over the classify pass's list
const bool CLASSIFY = (CF_OPT & 67108864u) != 0u; // bit 26 (the host's): bit 25's first pass
// Bits 3, 4, 6, 13, 23 (helper bc1n, 2026-11-27; the same bytes; H100 BC1 max 4096^2 5.75 -> 5.45 ms with all five):
// fewer shared-memory load instructions in the search (bit 4: 6 instead of 9 per entry), the three-colour search
// unrolled as the four-colour one (bit 3), and exact shortcuts in the refinement where its values are integers.
const bool S3X4 = (CF_OPT & 8u) != 0u; // bit 3: the three-colour search scores four entries per iteration
const bool XY64 = (CF_OPT & 16u) != 0u; // bit 4: the prefix sums' x and y as one 8-byte shared word per row
const bool PFMA = (CF_OPT & 64u) != 0u; // bit 6 (with 27): channel_step's p2 / p3 by one fma and one add each
const bool ICS = (CF_OPT & 8192u) != 0u && INPUT_U8 != 0u; // bit 13: channel_step's sums in integers (8-bit sources)
const bool USW = (CF_OPT & 8388608u) != 0u && INPUT_U8 != 0u; // bit 23: exact scoring by fma with unit weights (8-bit)
const uint WG = gl_WorkGroupSize.x; // 32 or 64 (the host's choice; shared memory scales with it)
// blocks per workgroup (texel columns); integer arithmetic only (spirv-opt rejects a Select of spec constants here)
const uint COLS = WG / (1u + 2u * ((CF_OPT >> 15u) & (CF_OPT >> 10u) & 1u));
const vec3 TOP = vec3(31.0, 63.0, 31.0);

// texels: 8-bit sources (INPUT_U8) one RGBA8 word each (bc1_enc.c's 0..255 value of an 8-bit channel,
// u * 257 * (255 / 65535) in float, is exactly u: checked for all 256), else the three floats
shared uint s_xp[(INPUT_U8 != 0u && !TEX_GLOBAL) ? 16u * COLS : 1u]; // [t][block]
shared float s_x[INPUT_U8 != 0u ? 1u : 48u * COLS]; // [ch * 16 + t][block]
shared uint s_res[(CF_OPT & 33792u) == 33792u ? 3u * WG : 1u]; // bit 10: per invocation its candidate's error, endpoints, indices
// prefix sums / 3 in grid units (float bits): [ch * 17 + i][invocation]; before them the sort keys (rows
// 0..15); with CF_OPT bit 5, after the four-colour search, the prefix sums / 2 (s_p2 then unused)
// with CF_OPT bit 4: x, y in s_p3xy[i][invocation], z (and the sort keys) in s_p3[i][invocation]
shared uint s_p3[REFINE ? 1u : (XY64 ? 17u : 51u) * WG];
shared uvec2 s_p3xy[(REFINE || !XY64) ? 1u : 17u * WG];
shared uint s_p2[((CF_OPT & 32u) != 0u || REFINE) ? 1u : 51u * WG]; // prefix sums / 2 (float bits)

uint g_lid;
float g_magic; // bit 11: 1.5 * 2^23 (times the buffer's 1.0)
uint g_col; // the block's texel column in shared memory (g_lid, or g_lid / 3 with bit 10)
uint g_tx0, g_ty0; // TEX_GLOBAL: the block's first texel column and row
float g_one;
vec3 g_gtot, g_wg, g_tot;
uint g_pos0, g_pos1; // the texel of each rank, 4 bits each

vec3 X(uint t)
{
    if (INPUT_U8 != 0u) {
        uint w;
        if (TEX_GLOBAL) {
            uint x = min(g_tx0 + (t & 3u), pc.width - 1u), y = min(g_ty0 + (t >> 2u), pc.height - 1u);
            w = src.words[y * pc.width + x];
        } else {
            w = s_xp[t * COLS + g_col];
        }
        if (FASTCVT) {
            precise vec3 v = uintBitsToFloat((uvec3(w, w >> 8u, w >> 16u) & 255u) | 0x4b000000u) - 8388608.0;
            return v;
        }
        return vec3(float(w & 255u), float((w >> 8u) & 255u), float((w >> 16u) & 255u));
    }
    return vec3(s_x[t * COLS + g_col], s_x[(16u + t) * COLS + g_col], s_x[(32u + t) * COLS + g_col]);
}
// the RGBA8 word of texel t (8-bit sources)
uint XW(uint t)
{
    if (TEX_GLOBAL) {
        uint x = min(g_tx0 + (t & 3u), pc.width - 1u), y = min(g_ty0 + (t >> 2u), pc.height - 1u);
        return src.words[y * pc.width + x];
    }
    return s_xp[t * COLS + g_col];
}
vec4 u16f(uint c, uint r, uint g, uint b)
{
    precise vec4 v = uintBitsToFloat(uvec4(c, r, g, b) | 0x4b000000u) - 8388608.0;
    return v;
}
vec3 P3(uint i)
{
    if (XY64) {
        const uvec2 xy = s_p3xy[i * WG + g_lid];
        return uintBitsToFloat(uvec3(xy, s_p3[i * WG + g_lid]));
    }
    return uintBitsToFloat(uvec3(s_p3[i * WG + g_lid], s_p3[(17u + i) * WG + g_lid], s_p3[(34u + i) * WG + g_lid]));
}
// the search's shared table: sort key / prefix-sum row r
void p3_key(uint r, uint k)
{
    s_p3[r * WG + g_lid] = k;
}
uint p3_key_at(uint r) { return s_p3[r * WG + g_lid]; }
void p3_row(uint i, vec3 v)
{
    if (XY64) {
        s_p3xy[i * WG + g_lid] = floatBitsToUint(v.xy);
        s_p3[i * WG + g_lid] = floatBitsToUint(v.z);
        return;
    }
    s_p3[i * WG + g_lid] = floatBitsToUint(v.x); s_p3[(17u + i) * WG + g_lid] = floatBitsToUint(v.y);
    s_p3[(34u + i) * WG + g_lid] = floatBitsToUint(v.z);
}
vec3 P2(uint i)
{
    if ((CF_OPT & 32u) != 0u) return P3(i);
    return uintBitsToFloat(uvec3(s_p2[i * WG + g_lid], s_p2[(17u + i) * WG + g_lid], s_p2[(34u + i) * WG + g_lid]));
}

vec3 fm3(vec3 a, vec3 b)
{
    precise vec3 p = a * b;
    if ((CF_OPT & 1u) != 0u) return p;
    precise vec3 q = p * g_one;
    return q;
}
float fm(float a, float b)
{
    precise float p = a * b;
    if ((CF_OPT & 1u) != 0u) return p;
    precise float q = p * g_one;
    return q;
}

// mr() or, with bits 20 / 22, the float product fm() (the same value for normal operands and results)
float mrx(float a, float b, bool f) { return f ? fm(a, b) : mr(a, b); }
vec3 mr3x(vec3 a, vec3 b, bool f) { return f ? fm3(a, b) : mr3(a, b); }
vec3 mr3sx(vec3 a, float b, bool f) { return f ? fm3(a, vec3(b)) : mr3s(a, b); }

struct Sol { uint c0, c1, idx; float err; bool four; };

bool is_max() { return ((pc.flags >> 10u) & 3u) == Q_MAX; }

// ---------------------------------------------------------------- exact scoring (bc1_enc.c)

float dist2(vec3 s, vec3 p)
{
    precise vec3 d = s - p;
    precise vec3 q = fm3(d, d);
    precise float dd = (q.x + q.y) + q.z;
    return dd;
}

// select_indices' per-texel step: the first best palette entry of texel t and its distance.
float texel_best(uint t, vec3 sw, vec3 p0, vec3 p1, vec3 p2, vec3 p3, bool four, inout uint bits)
{
    vec3 s = fm3(X(t), sw);
    precise float best = dist2(s, p0);
    uint bi = 0u;
    precise float dd = dist2(s, p1);
    if (dd < best) { best = dd; bi = 1u; }
    dd = dist2(s, p2);
    if (dd < best) { best = dd; bi = 2u; }
    if (four) {
        dd = dist2(s, p3);
        if (dd < best) { best = dd; bi = 3u; }
    }
    bits |= bi << (2u * t);
    return best;
}

// CF_OPT bit 23, unit weights (sw = 1, not perceptual) and 8-bit texels: texel_best with every value an integer (texels
// and palette entries 0..255, squares <= 65025, a distance <= 195075, the block's sum < 2^24), so every order of the
// additions and fused or separate products give the same floats: no weight products, the squares summed by fma.
float texel_best_u(uint t, vec3 p0, vec3 p1, vec3 p2, vec3 p3, bool four, inout uint bits)
{
    const vec3 s = X(t);
    vec3 d = s - p0;
    float best = fma(d.x, d.x, fma(d.y, d.y, d.z * d.z));
    uint bi = 0u;
    d = s - p1;
    float dd = fma(d.x, d.x, fma(d.y, d.y, d.z * d.z));
    if (dd < best) { best = dd; bi = 1u; }
    d = s - p2;
    dd = fma(d.x, d.x, fma(d.y, d.y, d.z * d.z));
    if (dd < best) { best = dd; bi = 2u; }
    if (four) {
        d = s - p3;
        dd = fma(d.x, d.x, fma(d.y, d.y, d.z * d.z));
        if (dd < best) { best = dd; bi = 3u; }
    }
    bits |= bi << (2u * t);
    return best;
}

// select_indices: best entry per texel (first on ties), the error summed in vhsum's pairwise order.
float select_indices(uint c0, uint c1, bool four, out uint idx)
{
    if (USW && NOLOCAL && chan_sw() == vec3(1.0)) { // bit 23: see texel_best_u
        ivec3 a = expand565(c0), bq = expand565(c1);
        ivec3 i2, i3;
        if (four) { i2 = (2 * a + bq) / 3; i3 = (a + 2 * bq) / 3; }
        else { i2 = (a + bq) / 2; i3 = ivec3(0); }
        const vec3 p0 = vec3(a), p1 = vec3(bq), p2 = vec3(i2), p3 = vec3(i3);
        uint bits = 0u;
        float h = 0.0;
        [[dont_unroll]] for (uint q = 0u; q < 4u; q++) {
            float d0 = texel_best_u(4u * q, p0, p1, p2, p3, four, bits);
            float d1 = texel_best_u(4u * q + 1u, p0, p1, p2, p3, four, bits);
            float d2 = texel_best_u(4u * q + 2u, p0, p1, p2, p3, four, bits);
            float d3 = texel_best_u(4u * q + 3u, p0, p1, p2, p3, four, bits);
            h = h + ((d0 + d1) + (d2 + d3));
        }
        idx = bits;
        return h;
    }
    if (NOLOCAL) { // bit 19: the same operations without arrays
        ivec3 a = expand565(c0), bq = expand565(c1);
        ivec3 i2, i3;
        if (four) { i2 = (2 * a + bq) / 3; i3 = (a + 2 * bq) / 3; }
        else { i2 = (a + bq) / 2; i3 = ivec3(0); }
        const vec3 sw = chan_sw();
        vec3 p0 = fm3(vec3(a), sw), p1 = fm3(vec3(bq), sw), p2 = fm3(vec3(i2), sw), p3 = fm3(vec3(i3), sw);
        uint bits = 0u;
        precise float h01 = 0.0, h23 = 0.0;
        [[dont_unroll]] for (uint q = 0u; q < 4u; q++) {
            float d0 = texel_best(4u * q, sw, p0, p1, p2, p3, four, bits);
            float d1 = texel_best(4u * q + 1u, sw, p0, p1, p2, p3, four, bits);
            float d2 = texel_best(4u * q + 2u, sw, p0, p1, p2, p3, four, bits);
            float d3 = texel_best(4u * q + 3u, sw, p0, p1, p2, p3, four, bits);
            precise float qs = (d0 + d1) + (d2 + d3);
            if (q == 0u) h01 = qs;
            else if (q == 1u) h01 = h01 + qs;
            else if (q == 2u) h23 = qs;
            else h23 = h23 + qs;
        }
        idx = bits;
        precise float r = h01 + h23;
        return r;
    }
    ivec3 a = expand565(c0), bq = expand565(c1);
    ivec3 i2, i3;
    if (four) { i2 = (2 * a + bq) / 3; i3 = (a + 2 * bq) / 3; }
    else { i2 = (a + bq) / 2; i3 = ivec3(0); }
    const vec3 sw = chan_sw();
    vec3 p0 = fm3(vec3(a), sw), p1 = fm3(vec3(bq), sw), p2 = fm3(vec3(i2), sw), p3 = fm3(vec3(i3), sw);
    uint bits = 0u;
    precise float quad[4];
    [[dont_unroll]] for (int q = 0; q < 4; q++) {
        precise float d[4];
        [[dont_unroll]] for (int u = 0; u < 4; u++) {
            int t = 4 * q + u;
            vec3 s = fm3(X(uint(t)), sw);
            precise float best = dist2(s, p0);
            uint bi = 0u;
            precise float dd = dist2(s, p1);
            if (dd < best) { best = dd; bi = 1u; }
            dd = dist2(s, p2);
            if (dd < best) { best = dd; bi = 2u; }
            if (four) {
                dd = dist2(s, p3);
                if (dd < best) { best = dd; bi = 3u; }
            }
            d[u] = best;
            bits |= bi << (2u * uint(t));
        }
        quad[q] = (d[0] + d[1]) + (d[2] + d[3]);
    }
    idx = bits;
    precise float r = (quad[0] + quad[1]) + (quad[2] + quad[3]);
    return r;
}

// try_endpoints into a fresh solution.
Sol score(uint c0, uint c1, bool four)
{
    Sol s;
    s.four = four;
    if (FOUR_ANY) s.four = true;
    else if (c0 == c1) s.four = false;
    s.c0 = c0; s.c1 = c1;
    if (!FOUR_ANY && (s.four ? c0 < c1 : c0 > c1)) { s.c0 = c1; s.c1 = c0; }
    s.err = select_indices(s.c0, s.c1, s.four, s.idx);
    return s;
}

// refit: the weights of texel t for indices idx, and those weights times the colour.
void rterm(uint idx, bool four, int t, out vec2 w, out vec3 wx)
{
    uint i = (idx >> (2u * uint(t))) & 3u;
    float v;
    if (four) v = i == 0u ? 1.0 : i == 2u ? F_2_3 : i == 3u ? F_1_3 : 0.0;
    else v = i == 0u ? 1.0 : i == 2u ? 0.5 : 0.0;
    w = vec2(v, mrx(v, v, FM_REF));
    wx = mr3sx(X(uint(t)), v, FM_REF);
}

// Least-squares endpoints for the indices of s (vsum8's order: lanes i + 8, then + 4, + 2, + 1).
bool refit(Sol s, out vec3 a, out vec3 b)
{
    precise vec2 xw[2];
    precise vec3 xx[2];
    for (int i = 0; i < 2; i++) {
        precise vec2 ww[2];
        precise vec3 wx[2];
        for (int h = 0; h < 2; h++) {
            int j = i + 2 * h;
            vec2 w0, w1, w2, w3;
            vec3 x0, x1, x2, x3;
            rterm(s.idx, s.four, j, w0, x0);
            rterm(s.idx, s.four, j + 8, w1, x1);
            rterm(s.idx, s.four, j + 4, w2, x2);
            rterm(s.idx, s.four, j + 12, w3, x3);
            ww[h] = (w0 + w1) + (w2 + w3);
            wx[h] = (x0 + x1) + (x2 + x3);
        }
        xw[i] = ww[0] + ww[1];
        xx[i] = wx[0] + wx[1];
    }
    precise vec2 sw2 = xw[0] + xw[1];
    precise vec3 ax = xx[0] + xx[1];
    precise float sa = sw2.x, aa = sw2.y;
    precise float ab = sa - aa, bb = (16.0 - 2.0 * sa) + aa;
    precise float det = mrx(aa, bb, FM_REF) - mrx(ab, ab, FM_REF);
    a = vec3(0.0); b = vec3(0.0);
    if (!(det > F_1EM3)) return false;
    float rc = fdiv_rn(1.0, det);
    precise vec3 bx = g_tot - ax;
    precise vec3 t5 = mr3sx(ax, bb, FM_REF) - mr3sx(bx, ab, FM_REF), t6 = mr3sx(bx, aa, FM_REF) - mr3sx(ax, ab, FM_REF);
    vec3 ra = mr3sx(t5, rc, FM_REF), rb = mr3sx(t6, rc, FM_REF);
    a = ra; b = rb;
    return true;
}

// refine_ls with one round.
void refine_ls(inout Sol s)
{
    vec3 a, b;
    if (!refit(s, a, b)) return;
    uint qa = quant565(a), qb = quant565(b);
    if ((qa == s.c0 && qb == s.c1) || (qa == s.c1 && qb == s.c0)) return;
    Sol t = score(qa, qb, s.four);
    if (t.err < s.err) s = t;
}

// channel_step's per-quad sum for index i (ib: the quad's 4 indices): (d0 + d1) + (d2 + d3), d = x or 0.
vec4 quad_sum(uint ib, uint i, vec4 x0, vec4 x1, vec4 x2, vec4 x3)
{
    vec4 d0 = (ib & 3u) == i ? x0 : vec4(0.0), d1 = ((ib >> 2u) & 3u) == i ? x1 : vec4(0.0);
    vec4 d2 = ((ib >> 4u) & 3u) == i ? x2 : vec4(0.0), d3 = ((ib >> 6u) & 3u) == i ? x3 : vec4(0.0);
    precise vec4 r = (d0 + d1) + (d2 + d3);
    return r;
}

// roundEven, or with bit 21 by the magic adds (|x| < 2^22)
float rnd_step(float x)
{
    if (!MAGIC_STEP) return roundEven(x);
    precise float t = x + g_magic;
    precise float r = t - g_magic;
    return r;
}

// channel_step with radius 2 (25 pairs per channel, first best in window order).
bool channel_step(inout Sol s)
{
    precise vec4 cs[4]; // per index: count, then the colour sums (vhsum order)
    if (ICS) {
        // bit 13 (8-bit sources): every count and colour sum is an integer below 2^24 (16 texels of 0..255), so the
        // float sums in any order are these integer sums: per texel (r | b << 16, g | 1 << 16) summed over the
        // texels with index bit 0 set, bit 1 set, both set, and all; the four indices' sums from those
        const uint lo = s.idx & 0x55555555u, hi = (s.idx >> 1u) & 0x55555555u, both = lo & hi;
        uvec2 al = uvec2(0u), ah = uvec2(0u), ab = uvec2(0u), at = uvec2(0u);
        [[unroll]] for (uint t = 0u; t < 16u; t++) {
            const uint w = XW(t);
            const uvec2 v = uvec2(w & 0x00ff00ffu, ((w >> 8u) & 255u) | 65536u);
            const uint m = 1u << (2u * t);
            at += v;
            if ((lo & m) != 0u) al += v;
            if ((hi & m) != 0u) ah += v;
            if ((both & m) != 0u) ab += v;
        }
        const uvec2 u0 = at - al - ah + ab, u1 = al - ab, u2 = ah - ab, u3 = ab;
        cs[0] = u16f(u0.y >> 16u, u0.x & 65535u, u0.y & 65535u, u0.x >> 16u);
        cs[1] = u16f(u1.y >> 16u, u1.x & 65535u, u1.y & 65535u, u1.x >> 16u);
        cs[2] = u16f(u2.y >> 16u, u2.x & 65535u, u2.y & 65535u, u2.x >> 16u);
        cs[3] = u16f(u3.y >> 16u, u3.x & 65535u, u3.y & 65535u, u3.x >> 16u);
    } else if (NOLOCAL) { // bit 19: one pass over the texels, the same sums in the same order
        precise vec4 h0 = vec4(0.0), h1 = vec4(0.0), h2 = vec4(0.0), h3 = vec4(0.0);
        precise vec4 g0 = vec4(0.0), g1 = vec4(0.0), g2 = vec4(0.0), g3 = vec4(0.0);
        [[dont_unroll]] for (uint q = 0u; q < 4u; q++) {
            const uint ib = (s.idx >> (8u * q)) & 255u;
            vec4 x0 = vec4(1.0, X(4u * q)), x1 = vec4(1.0, X(4u * q + 1u)), x2 = vec4(1.0, X(4u * q + 2u)),
                 x3 = vec4(1.0, X(4u * q + 3u));
            precise vec4 s0 = quad_sum(ib, 0u, x0, x1, x2, x3), s1 = quad_sum(ib, 1u, x0, x1, x2, x3);
            precise vec4 s2 = quad_sum(ib, 2u, x0, x1, x2, x3), s3 = quad_sum(ib, 3u, x0, x1, x2, x3);
            if (q == 0u) { h0 = s0; h1 = s1; h2 = s2; h3 = s3; }
            else if (q == 1u) { h0 = h0 + s0; h1 = h1 + s1; h2 = h2 + s2; h3 = h3 + s3; }
            else if (q == 2u) { g0 = s0; g1 = s1; g2 = s2; g3 = s3; }
            else { g0 = g0 + s0; g1 = g1 + s1; g2 = g2 + s2; g3 = g3 + s3; }
        }
        cs[0] = h0 + g0; cs[1] = h1 + g1; cs[2] = h2 + g2; cs[3] = h3 + g3;
    } else
    [[dont_unroll]] for (uint i = 0u; i < 4u; i++) {
        precise vec4 quad[4];
        for (int q = 0; q < 4; q++) {
            precise vec4 d[4];
            for (int u = 0; u < 4; u++) {
                int t = 4 * q + u;
                bool on = ((s.idx >> (2u * uint(t))) & 3u) == i;
                d[u] = on ? vec4(1.0, X(uint(t))) : vec4(0.0);
            }
            quad[q] = (d[0] + d[1]) + (d[2] + d[3]);
        }
        cs[i] = (quad[0] + quad[1]) + (quad[2] + quad[3]);
    }
    ivec3 q0 = unpack565(s.c0), q1 = unpack565(s.c1), n0 = q0, n1 = q1;
    bool changed = false;
    [[dont_unroll]] for (int ch = 0; ch < 3; ch++) {
        float top = ch == 1 ? 63.0 : 31.0;
        float best = F_INF;
        int bl = -1;
        float fs0 = cs[0][ch + 1], fs1 = cs[1][ch + 1], fs2 = cs[2][ch + 1], fs3 = cs[3][ch + 1];
        if (STEP_HOIST) {
            // bit 27: b's five values, their validity and their error terms once per channel (the same
            // operations as below), the 25 pairs in the same order
#define STEP_B(D) \
            const float qb##D = float(q1[ch] + D - 2); \
            const bool okb##D = qb##D >= 0.0 && qb##D <= top; \
            precise float eb##D; \
            if (ch == 1) eb##D = qb##D * 4.0 + rnd_step(qb##D * 0.0625 - 0.46875); \
            else eb##D = qb##D * 8.0 + rnd_step(qb##D * 0.25 - 0.375); \
            precise float gb##D = fm(cs[1].x, eb##D) - 2.0 * fs1; \
            precise float tb##D = fm(eb##D, gb##D); \
            precise float hb##D = s.four ? (eb##D + eb##D) - 1.0 : eb##D - 0.5;
            STEP_B(0) STEP_B(1) STEP_B(2) STEP_B(3) STEP_B(4)
#undef STEP_B
            [[dont_unroll]] for (int da = 0; da < 5; da++) {
                float qa = float(q0[ch] + da - 2);
                bool oka = qa >= 0.0 && qa <= top;
                precise float ea;
                if (ch == 1) ea = qa * 4.0 + rnd_step(qa * 0.0625 - 0.46875);
                else ea = qa * 8.0 + rnd_step(qa * 0.25 - 0.375);
                precise float g0 = fm(cs[0].x, ea) - 2.0 * fs0;
                precise float t0 = fm(ea, g0);
                precise float ha = (ea + ea) - 1.0;
#define STEP_P(D) { \
                const bool ok = oka && okb##D; \
                precise float p2, p3; \
                if (PFMA) { \
                    /* bit 6: floor(x / 3) = round((x - 1) / 3) and floor(x / 2) = round((x - 0.5) / 2) for */ \
                    /* integers x (ea, eb: integers 0..255 where ok; p2, p3 unused elsewhere), one rounding */ \
                    /* into the magic constant's integer grid (the same value fused or not: checked for */ \
                    /* every x in -40..900) */ \
                    if (s.four) { \
                        precise float v2 = ha + eb##D, v3 = ea + hb##D; \
                        precise float t2 = fma(v2, F_1_3, g_magic), t3 = fma(v3, F_1_3, g_magic); \
                        p2 = t2 - g_magic; \
                        p3 = t3 - g_magic; \
                    } else { \
                        precise float v2 = ea + hb##D; \
                        precise float t2 = fma(v2, 0.5, g_magic); \
                        p2 = t2 - g_magic; \
                        p3 = 0.0; \
                    } \
                } else if (s.four) { \
                    precise float u2 = fm(ea + ea + eb##D, F_1_3) - uintBitsToFloat(0x3eaa9931u); \
                    precise float u3 = fm(ea + eb##D + eb##D, F_1_3) - uintBitsToFloat(0x3eaa9931u); \
                    p2 = rnd_step(u2); \
                    p3 = rnd_step(u3); \
                } else { \
                    precise float u2 = (ea + eb##D) * 0.5 - 0.25; \
                    p2 = rnd_step(u2); \
                    p3 = 0.0; \
                } \
                precise float g2 = fm(cs[2].x, p2) - 2.0 * fs2, g3 = fm(cs[3].x, p3) - 2.0 * fs3; \
                precise float e = ((t0 + tb##D) + fm(p2, g2)) + fm(p3, g3); \
                if (!ok) e = F_INF; \
                if (e < best) { best = e; bl = 5 * da + D; } }
                STEP_P(0) STEP_P(1) STEP_P(2) STEP_P(3) STEP_P(4)
#undef STEP_P
            }
        } else
        [[dont_unroll]] for (int da = 0; da < 5; da++) {
            float qa = float(q0[ch] + da - 2);
            bool oka = qa >= 0.0 && qa <= top;
            precise float ea;
            if (ch == 1) ea = qa * 4.0 + rnd_step(qa * 0.0625 - 0.46875);
            else ea = qa * 8.0 + rnd_step(qa * 0.25 - 0.375);
            precise float g0 = fm(cs[0].x, ea) - 2.0 * fs0;
            precise float t0 = fm(ea, g0);
            [[dont_unroll]] for (int db = 0; db < 5; db++) {
                float qb = float(q1[ch] + db - 2);
                bool ok = oka && qb >= 0.0 && qb <= top;
                precise float eb;
                if (ch == 1) eb = qb * 4.0 + rnd_step(qb * 0.0625 - 0.46875);
                else eb = qb * 8.0 + rnd_step(qb * 0.25 - 0.375);
                precise float p2, p3;
                if (s.four) {
                    precise float u2 = fm(ea + ea + eb, F_1_3) - uintBitsToFloat(0x3eaa9931u);
                    precise float u3 = fm(ea + eb + eb, F_1_3) - uintBitsToFloat(0x3eaa9931u);
                    p2 = rnd_step(u2);
                    p3 = rnd_step(u3);
                } else {
                    precise float u2 = (ea + eb) * 0.5 - 0.25;
                    p2 = rnd_step(u2);
                    p3 = 0.0;
                }
                precise float g1 = fm(cs[1].x, eb) - 2.0 * fs1;
                precise float g2 = fm(cs[2].x, p2) - 2.0 * fs2, g3 = fm(cs[3].x, p3) - 2.0 * fs3;
                precise float e = ((t0 + fm(eb, g1)) + fm(p2, g2)) + fm(p3, g3);
                if (!ok) e = F_INF;
                if (e < best) { best = e; bl = 5 * da + db; }
            }
        }
        if (bl >= 0) {
            n0[ch] = q0[ch] + bl / 5 - 2;
            n1[ch] = q1[ch] + bl % 5 - 2;
        }
        if (n0[ch] != q0[ch] || n1[ch] != q1[ch]) changed = true;
    }
    if (!changed) return false;
    s.c0 = (uint(n0.x) << 11u) | (uint(n0.y) << 5u) | uint(n0.z);
    s.c1 = (uint(n1.x) << 11u) | (uint(n1.y) << 5u) | uint(n1.z);
    return true;
}

// refine_exact(radius 2, 4 iterations).
void refine_exact(inout Sol s)
{
    [[dont_unroll]] for (int it = 0; it < 4; it++) {
        Sol t = s;
        if (!channel_step(t)) return;
        Sol n = score(t.c0, t.c1, t.four);
        if (!(n.err < s.err)) return;
        s = n;
    }
}

// ---------------------------------------------------------------- the cluster search

// The search error of an entry (table words w0, w1, pen) for the partition sums ax (cf16_base's lane
// arithmetic); a, b: the rounded endpoints in grid units.
float cf_err(uvec4 w0, uvec4 w1, float pen, vec3 ax, out vec3 a, out vec3 b)
{
    float Ah = uintBitsToFloat(w0.x), Bh = uintBitsToFloat(w0.y), C = uintBitsToFloat(w0.z);
    float f1 = uintBitsToFloat(w1.x), f2 = uintBitsToFloat(w1.y), f3 = uintBitsToFloat(w1.z), f4 = uintBitsToFloat(w1.w);
    const vec3 gt = g_gtot;
    precise vec3 ua = fm3(ax, vec3(f1)) - fm3(gt, vec3(f2));
    precise vec3 ub = fm3(gt, vec3(f3)) - fm3(ax, vec3(f4));
    ua.x = ua.x > 0.0 ? ua.x : 0.0; ua.y = ua.y > 0.0 ? ua.y : 0.0; ua.z = ua.z > 0.0 ? ua.z : 0.0;
    ub.x = ub.x > 0.0 ? ub.x : 0.0; ub.y = ub.y > 0.0 ? ub.y : 0.0; ub.z = ub.z > 0.0 ? ub.z : 0.0;
    ua.x = ua.x < TOP.x ? ua.x : TOP.x; ua.y = ua.y < TOP.y ? ua.y : TOP.y; ua.z = ua.z < TOP.z ? ua.z : TOP.z;
    ub.x = ub.x < TOP.x ? ub.x : TOP.x; ub.y = ub.y < TOP.y ? ub.y : TOP.y; ub.z = ub.z < TOP.z ? ub.z : TOP.z;
    if ((CF_OPT & 2048u) != 0u) {
        precise vec3 ta = ua + g_magic, tb = ub + g_magic;
        precise vec3 ra = ta - g_magic, rb = tb - g_magic;
        a = ra; b = rb;
    } else {
        a = roundEven(ua); b = roundEven(ub);
    }
    precise vec3 in1 = (fm3(a, vec3(Ah)) + fm3(b, vec3(C))) - ax;
    precise vec3 in2 = fm3(b, vec3(Bh)) - (gt - ax);
    precise vec3 ev = fm3(a, in1) + fm3(b, in2);
    precise vec3 pw = fm3(g_wg, ev);
    precise float es = (pw.x + pw.y) + pw.z;
    precise float err = pen + es;
    return err;
}

uint g_tab;

vec3 entry_ax(uint e, bool four)
{
    uint ix = cft.v[g_tab + 3u * e].w;
    uint i = ix & 255u, j = (ix >> 8u) & 255u, k = (ix >> 16u) & 255u;
    precise vec3 ax;
    if (four) ax = P3(i) + (P3(j) + P3(k));
    else ax = P2(i) + P2(j);
    return ax;
}

// The 565 endpoints of entry e (cf16_endpoints).
void entry_endpoints(uint e, bool four, out uint ca, out uint cb)
{
    uint o = g_tab + 3u * e;
    vec3 a, b;
    cf_err(cft.v[o], cft.v[o + 1u], uintBitsToFloat(cft.v[o + 2u].x), entry_ax(e, four), a, b);
    ivec3 qa = ivec3(a), qb = ivec3(b);
    ca = (uint(qa.x) << 11u) | (uint(qa.y) << 5u) | uint(qa.z);
    cb = (uint(qb.x) << 11u) | (uint(qb.y) << 5u) | uint(qb.z);
}

// Loads the texels of block b (shared memory, or with TEX_GLOBAL only the block's position); false when
// the CPU must encode it (flat, or a texel the CPU does not count).
bool load_block(uint b)
{
    const uint thr = pc.flags & 255u;
    const bool cutout = (pc.flags & 512u) != 0u;
    bool is_flat = true, counted = true;
    vec3 first = vec3(0.0);
    g_tx0 = (b % pc.blocks_x) * 4u;
    g_ty0 = (b / pc.blocks_x) * 4u;
    [[dont_unroll]] for (uint t = 0u; t < 16u; t++) {
        vec3 c;
        uint a8;
        load_texel(b, t, c, a8);
        if (INPUT_U8 != 0u) {
            if (!TEX_GLOBAL) s_xp[t * COLS + g_col] = src.words[texel_index(b, t)];
        } else {
            s_x[t * COLS + g_col] = c.x; s_x[(16u + t) * COLS + g_col] = c.y; s_x[(32u + t) * COLS + g_col] = c.z;
        }
        if ((PUNCH && a8 < thr) || (cutout && a8 == 0u)) counted = false;
        if (t == 0u) first = c;
        else if (c != first) is_flat = false;
    }
    return counted && !is_flat;
}

const bool MRC = ((B_REF & B_FMREF) | ((1u - B_REF) & B_FMSET)) != 0u; // block_cov's products (refine pass: bit 20)
#define MRS(a, b) mrx(a, b, FM_SET)
#define MR3S(a, b) mr3x(a, b, FM_SET)
#define MR3SS(a, b) mr3sx(a, b, FM_SET)

// The block's totals (g_tot) and weighted covariance (cd = c00, c11, c22; co = c01, c02, c12) in
// bc1_enc.c principal_axis's order; returns the spread c00 + c11 + c22.
float block_cov(out vec3 cd, out vec3 co)
{
    const vec3 sw = chan_sw(), cw = chan_w();
    // totals in vhsum order, covariance in vsum8 order
    precise vec3 quad[4];
    for (int q = 0; q < 4; q++) quad[q] = (X(uint(4 * q)) + X(uint(4 * q + 1))) + (X(uint(4 * q + 2)) + X(uint(4 * q + 3)));
    precise vec3 tot = (quad[0] + quad[1]) + (quad[2] + quad[3]);
    g_tot = tot;
    precise vec3 m = tot * 0.0625;
    precise vec3 sa, sb;
    {
        precise vec3 xa[2], xb[2];
        for (int i = 0; i < 2; i++) {
            precise vec3 wa[2], wb[2];
            for (int h = 0; h < 2; h++) {
                int j = i + 2 * h;
                precise vec3 ua[4], ub[4];
                for (int r = 0; r < 4; r++) {
                    int t = j + (r == 1 ? 8 : r == 2 ? 4 : r == 3 ? 12 : 0);
                    precise vec3 d = X(uint(t)) - m;
                    ua[r] = vec3(mrx(d.x, d.x, MRC), mrx(d.x, d.y, MRC), mrx(d.x, d.z, MRC));
                    ub[r] = vec3(mrx(d.y, d.y, MRC), mrx(d.y, d.z, MRC), mrx(d.z, d.z, MRC));
                }
                wa[h] = (ua[0] + ua[1]) + (ua[2] + ua[3]);
                wb[h] = (ub[0] + ub[1]) + (ub[2] + ub[3]);
            }
            xa[i] = wa[0] + wa[1];
            xb[i] = wb[0] + wb[1];
        }
        sa = xa[0] + xa[1]; sb = xb[0] + xb[1];
    }
    precise float s01 = sw.x * sw.y, s02 = sw.x * sw.z, s12 = sw.y * sw.z;
    float c00 = mrx(sa.x, cw.x, MRC), c01 = mrx(sa.y, s01, MRC), c02 = mrx(sa.z, s02, MRC);
    float c11 = mrx(sb.x, cw.y, MRC), c12 = mrx(sb.y, s12, MRC), c22 = mrx(sb.z, cw.z, MRC);
    cd = vec3(c00, c11, c22);
    co = vec3(c01, c02, c12);
    precise float tr = (c00 + c11) + c22;
    return tr;
}

// Bit 18: the totals (g_tot) and the spread c00 + c11 + c22 with block_cov's operations for the diagonal only.
float block_tr()
{
    const vec3 cw = chan_w();
    precise vec3 quad[4];
    for (int q = 0; q < 4; q++) quad[q] = (X(uint(4 * q)) + X(uint(4 * q + 1))) + (X(uint(4 * q + 2)) + X(uint(4 * q + 3)));
    precise vec3 tot = (quad[0] + quad[1]) + (quad[2] + quad[3]);
    g_tot = tot;
    precise vec3 m = tot * 0.0625;
    precise vec3 xs[2];
    for (int i = 0; i < 2; i++) {
        precise vec3 ws[2];
        for (int h = 0; h < 2; h++) {
            int j = i + 2 * h;
            precise vec3 d0 = X(uint(j)) - m, d1 = X(uint(j + 8)) - m, d2 = X(uint(j + 4)) - m, d3 = X(uint(j + 12)) - m;
            precise vec3 u0 = mr3x(d0, d0, MRC), u1 = mr3x(d1, d1, MRC), u2 = mr3x(d2, d2, MRC), u3 = mr3x(d3, d3, MRC);
            ws[h] = (u0 + u1) + (u2 + u3);
        }
        xs[i] = ws[0] + ws[1];
    }
    precise vec3 sd = xs[0] + xs[1];
    vec3 c = mr3x(sd, cw, MRC);
    precise float tr = (c.x + c.y) + c.z;
    return tr;
}

// Loads block b and sets up the search; false when the CPU must encode it. tr: the spread.
bool setup_block(uint b, out float tr_out)
{
    const vec3 sw = chan_sw(), cw = chan_w();
    tr_out = 0.0;
    if (!load_block(b)) return false;
    // principal axis (bc1_enc.c principal_axis)
    vec3 cd, co;
    precise float tr = block_cov(cd, co);
    tr_out = tr;
    float c00 = cd.x, c11 = cd.y, c22 = cd.z, c01 = co.x, c02 = co.y, c12 = co.z;
    bool r0 = c00 >= c11 && c00 >= c22, r1 = !r0 && c11 >= c22;
    precise float v0 = r0 ? c00 : r1 ? c01 : c02, v1 = r0 ? c01 : r1 ? c11 : c12, v2 = r0 ? c02 : r1 ? c12 : c22;
    [[dont_unroll]] for (int it = 0; it < 2; it++) {
        precise float w0 = (MRS(c00, v0) + MRS(c01, v1)) + MRS(c02, v2);
        precise float w1 = (MRS(c01, v0) + MRS(c11, v1)) + MRS(c12, v2);
        precise float w2 = (MRS(c02, v0) + MRS(c12, v1)) + MRS(c22, v2);
        v0 = w0; v1 = w1; v2 = w2;
    }
    float mx = abs(v0) > abs(v1) ? abs(v0) : abs(v1);
    mx = abs(v2) > mx ? abs(v2) : mx;
    vec3 axis;
    if (!(tr > 0.0) || !(mx > 1e-30) || !(mx < 1e30)) {
        axis = vec3(1.0);
    } else {
        float rm = fdiv_rn(1.0, mx);
        axis = MR3S(vec3(MRS(v0, rm), MRS(v1, rm), MRS(v2, rm)), sw);
    }
    // ranks along the axis (cf_sort: sortable key bits, ties by texel index)
    [[dont_unroll]] for (uint t = 0u; t < 16u; t++) {
        vec3 c = X(t);
        precise float f = ((MRS(c.x, axis.x) + MRS(c.y, axis.y)) + MRS(c.z, axis.z)) + 0.0;
        uint kb = floatBitsToUint(f);
        p3_key(t, (kb & 0x80000000u) != 0u ? ~kb : (kb | 0x80000000u));
    }
    // the texel of each rank, 4 bits each, into 2 words
    uint pos0 = 0u, pos1 = 0u;
    g_pos0 = 0u; g_pos1 = 0u;
    [[dont_unroll]] for (uint t = 0u; t < 16u; t++) {
        uint kt = p3_key_at(t), rank = 0u;
        [[dont_unroll]] for (uint u = 0u; u < 16u; u++) {
            uint ku = p3_key_at(u);
            rank += (ku < kt || (ku == kt && u < t)) ? 1u : 0u;
        }
        if (rank < 8u) pos0 |= t << (4u * rank);
        else pos1 |= t << (4u * (rank - 8u));
    }
    // prefix sums in grid units
    const vec3 grid = vec3(F_31_255, F_63_255, F_31_255);
    precise vec3 pre = vec3(0.0);
    [[dont_unroll]] for (uint i = 0u; i <= 16u; i++) {
        if (i > 0u) {
            uint r = i - 1u;
            uint t = ((r < 8u ? pos0 >> (4u * r) : pos1 >> (4u * (r - 8u)))) & 15u;
            pre = pre + X(t);
        }
        vec3 pg = MR3S(pre, grid);
        vec3 p3 = MR3SS(pg, F_1_3), p2 = pg * 0.5;
        p3_row(i, p3);
        if ((CF_OPT & 32u) == 0u) {
            s_p2[i * WG + g_lid] = floatBitsToUint(p2.x); s_p2[(17u + i) * WG + g_lid] = floatBitsToUint(p2.y);
            s_p2[(34u + i) * WG + g_lid] = floatBitsToUint(p2.z);
        }
    }
    g_gtot = MR3S(pre, grid);
    g_pos0 = pos0; g_pos1 = pos1;
    vec3 g2 = MR3S(grid, grid);
    g_wg = vec3(fdiv_rn(cw.x, g2.x), fdiv_rn(cw.y, g2.y), fdiv_rn(cw.z, g2.z));
    return true;
}

// CF_OPT bit 5: the prefix sums / 2 into s_p3 (setup_block's operations), once the four-colour search is done.
void prefix_p2()
{
    const vec3 grid = vec3(F_31_255, F_63_255, F_31_255);
    precise vec3 pre = vec3(0.0);
    [[dont_unroll]] for (uint i = 0u; i <= 16u; i++) {
        if (i > 0u) {
            uint r = i - 1u;
            uint t = ((r < 8u ? g_pos0 >> (4u * r) : g_pos1 >> (4u * (r - 8u)))) & 15u;
            pre = pre + X(t);
        }
        vec3 pg = MR3S(pre, grid);
        vec3 p2 = pg * 0.5;
        p3_row(i, p2);
    }
}

// One four-colour entry e of the search, and
// one three-colour entry: keep the two best / the best, first on ties (entries in table order).
#define SEARCH4 \
    uint o = g_tab + 3u * e; \
    uvec4 w0 = cft.v[o], w1 = cft.v[o + 1u]; \
    float pen = (CF_OPT & 4096u) != 0u ? 0.0 : uintBitsToFloat(cft.v[o + 2u].x); \
    uint ix = w0.w; \
    uint i = ix & 255u, j = (ix >> 8u) & 255u, k = (ix >> 16u) & 255u; \
    precise vec3 ax = P3(i) + (P3(j) + P3(k)); \
    vec3 a, bb; \
    float err = cf_err(w0, w1, pen, ax, a, bb); \
    if (err < e0) { e1 = e0; i1 = i0; e0 = err; i0 = e; } \
    else if (err < e1) { e1 = err; i1 = e; }
#define SEARCH3 \
    uint o = g_tab + 3u * e; \
    uvec4 w0 = cft.v[o], w1 = cft.v[o + 1u]; \
    float pen = (CF_OPT & 4096u) != 0u ? 0.0 : uintBitsToFloat(cft.v[o + 2u].x); \
    uint ix = w0.w; \
    uint i = ix & 255u, j = (ix >> 8u) & 255u; \
    precise vec3 ax = P2(i) + P2(j); \
    vec3 a, bb; \
    float err = cf_err(w0, w1, pen, ax, a, bb); \
    if (err < e3) { e3 = err; i3 = e; }

// CF_OPT bit 9: one four-colour entry's search error (SEARCH4's loads and cf_err, P3(i) loaded each time).
float score4(uint e)
{
    uint o = g_tab + 3u * e;
    uvec4 w0 = cft.v[o], w1 = cft.v[o + 1u];
    float pen = (CF_OPT & 4096u) != 0u ? 0.0 : uintBitsToFloat(cft.v[o + 2u].x);
    uint ix = w0.w;
    uint i = ix & 255u, j = (ix >> 8u) & 255u, k = (ix >> 16u) & 255u;
    precise vec3 ax = P3(i) + (P3(j) + P3(k));
    vec3 a, bb;
    return cf_err(w0, w1, pen, ax, a, bb);
}

// CF_OPT bit 3: one three-colour entry's search error (SEARCH3's loads and cf_err).
float score3(uint e)
{
    uint o = g_tab + 3u * e;
    uvec4 w0 = cft.v[o], w1 = cft.v[o + 1u];
    float pen = (CF_OPT & 4096u) != 0u ? 0.0 : uintBitsToFloat(cft.v[o + 2u].x);
    uint ix = w0.w;
    uint i = ix & 255u, j = (ix >> 8u) & 255u;
    precise vec3 ax = P2(i) + P2(j);
    vec3 a, bb;
    return cf_err(w0, w1, pen, ax, a, bb);
}

// The candidates in the CPU's order (four-colour best, second best at max, three-colour best; ok_c: the
// search found it below 1e29, else the CPU drops it): exact indices, at max refit and the exact steps;
// the first best is written, or the block is flagged for the CPU (none, or the spread below the error:
// the CPU then tries the exact pair of the mean).
void finish_block(uint b, float tr, bvec3 ok, uint ca0, uint cb0, uint ca1, uint cb1, uint ca3, uint cb3)
{
    float be = F_INF;
    uint c0 = 0u, c1 = 0u, idx = 0u;
    [[dont_unroll]] for (uint c = 0u; c < 3u; c++) {
        if (c == 1u && !is_max()) continue;
        if (!ok[c]) continue;
        uint ca = c == 0u ? ca0 : c == 1u ? ca1 : ca3, cb = c == 0u ? cb0 : c == 1u ? cb1 : cb3;
        Sol s = score(ca, cb, c < 2u);
        if (is_max()) {
            refine_ls(s);
            refine_exact(s);
        }
        if (s.err < be) { be = s.err; c0 = s.c0; c1 = s.c1; idx = s.idx; }
    }
    bool cpu = !(be < F_INF) || tr < be;
    if (!cpu) write_colour(b, c0, c1, idx);
    fb.words[b] = cpu ? 1u : 0u;
}

// CF_OPT bit 7, second pass: the candidates the search pass left in the block's words (see bit 7).
void refine_main(uint b)
{
    const uint f = fb.words[b];
    if (f == 1u) return; // flagged by the search pass: stays flagged
    const uint o = b * C_BLOCK_WORDS + C_OFFSET;
    const uint w0 = dst.words[o], w1 = dst.words[o + 1u];
    load_block(b);
    vec3 cd, co;
    float tr = TR_DIAG ? block_tr() : block_cov(cd, co);
    finish_block(b, tr, bvec3(true, true, !FOUR_ANY), w0 & 65535u, w0 >> 16u, w1 & 65535u, w1 >> 16u, f & 65535u,
                 f >> 16u);
}

// CF_OPT bits 7 and 10, second pass: invocation c (0..2) of block b refines candidate c; invocation 0
// picks the first best (strict <, the CPU's candidate order) and writes the block.
void refine_multi_main(uint nblocks)
{
    const uint gi = group_linear() * WG + g_lid, c = gi % 3u;
    uint b = gi / 3u;
    g_col = g_lid / 3u;
    bool live = b < nblocks;
    if (PRELIST) { // bit 25: the listed blocks
        live = b < fb.words[nblocks];
        if (live) b = fb.words[nblocks + 2u + b];
    }
    uint f = 1u, w0 = 0u, w1 = 0u;
    if (live) {
        f = fb.words[b];
        const uint o = b * C_BLOCK_WORDS + C_OFFSET;
        w0 = dst.words[o];
        w1 = dst.words[o + 1u];
    }
    const bool work = live && f != 1u;
    if (work) {
        g_tx0 = (b % pc.blocks_x) * 4u;
        g_ty0 = (b / pc.blocks_x) * 4u;
        if (INPUT_U8 == 0u || !TEX_GLOBAL) {
            [[dont_unroll]] for (uint t = c; t < 16u; t += 3u) {
                vec3 x;
                uint a8;
                load_texel(b, t, x, a8);
                if (INPUT_U8 != 0u) s_xp[t * COLS + g_col] = src.words[texel_index(b, t)];
                else { s_x[t * COLS + g_col] = x.x; s_x[(16u + t) * COLS + g_col] = x.y; s_x[(32u + t) * COLS + g_col] = x.z; }
            }
        }
    }
    memoryBarrierShared();
    barrier();
    float e = F_INF, tr = 0.0;
    uint cc = 0u, ix = 0u;
    if (work) {
        vec3 cd, co;
        tr = TR_DIAG ? block_tr() : block_cov(cd, co);
        if (!(c == 1u && !is_max()) && !(c == 2u && FOUR_ANY)) {
            uint wc = c == 0u ? w0 : c == 1u ? w1 : f;
            Sol s = score(wc & 65535u, wc >> 16u, c < 2u);
            if (is_max()) {
                refine_ls(s);
                refine_exact(s);
            }
            e = s.err;
            cc = s.c0 | (s.c1 << 16u);
            ix = s.idx;
        }
    }
    s_res[g_lid] = floatBitsToUint(e);
    s_res[WG + g_lid] = cc;
    s_res[2u * WG + g_lid] = ix;
    memoryBarrierShared();
    barrier();
    if (!work || c != 0u) return;
    float be = F_INF;
    uint bc = 0u, bi = 0u;
    [[dont_unroll]] for (uint k = 0u; k < 3u; k++) {
        float ek = uintBitsToFloat(s_res[g_lid + k]);
        if (ek < be) { be = ek; bc = s_res[WG + g_lid + k]; bi = s_res[2u * WG + g_lid + k]; }
    }
    bool cpu = !(be < F_INF) || tr < be;
    if (!cpu) write_colour(b, bc & 65535u, bc >> 16u, bi);
    fb.words[b] = cpu ? 1u : 0u;
}

// CF_OPT bit 25: fb.words[w] += 1 for each invocation of the subgroup with want, by one atomic per subgroup (called
// where every invocation of the subgroup runs); each such invocation gets its own old value
uint sg_take(uint w, bool want)
{
    const uvec4 m = subgroupBallot(want);
    const uint n = subgroupBallotBitCount(m);
    uint base = 0u;
    if (n != 0u && subgroupElect()) base = atomicAdd(fb.words[w], n);
    base = subgroupBroadcastFirst(base);
    return base + subgroupBallotExclusiveBitCount(m);
}

// The search (and, without bit 7, the refinement) of block b after setup_block.
void search_block(uint b, float tr, uint n4, uint n3)
{
    // the search: every entry in table order (uniform loads), first smallest kept on ties
    float e0 = F_INF, e1 = F_INF, e3 = F_INF;
    uint i0 = 0u, i1 = 0u, i3 = 0u;
    if ((CF_OPT & 16896u) == 16896u) {
        // bit 14 (with 9): four entries per iteration, kept in table order (e .. e + 3)
        uint e = 0u;
        [[dont_unroll]] for (; e + 3u < n4; e += 4u) {
            float ea = score4(e), eb = score4(e + 1u), ec = score4(e + 2u), ed = score4(e + 3u);
            if (ea < e0) { e1 = e0; i1 = i0; e0 = ea; i0 = e; }
            else if (ea < e1) { e1 = ea; i1 = e; }
            if (eb < e0) { e1 = e0; i1 = i0; e0 = eb; i0 = e + 1u; }
            else if (eb < e1) { e1 = eb; i1 = e + 1u; }
            if (ec < e0) { e1 = e0; i1 = i0; e0 = ec; i0 = e + 2u; }
            else if (ec < e1) { e1 = ec; i1 = e + 2u; }
            if (ed < e0) { e1 = e0; i1 = i0; e0 = ed; i0 = e + 3u; }
            else if (ed < e1) { e1 = ed; i1 = e + 3u; }
        }
        [[dont_unroll]] for (; e < n4; e++) {
            float ea = score4(e);
            if (ea < e0) { e1 = e0; i1 = i0; e0 = ea; i0 = e; }
            else if (ea < e1) { e1 = ea; i1 = e; }
        }
    } else if ((CF_OPT & 512u) != 0u) {
        // two entries per iteration, kept in table order (e, then e + 1)
        uint e = 0u;
        [[dont_unroll]] for (; e + 1u < n4; e += 2u) {
            float ea = score4(e), eb = score4(e + 1u);
            if (ea < e0) { e1 = e0; i1 = i0; e0 = ea; i0 = e; }
            else if (ea < e1) { e1 = ea; i1 = e; }
            if (eb < e0) { e1 = e0; i1 = i0; e0 = eb; i0 = e + 1u; }
            else if (eb < e1) { e1 = eb; i1 = e + 1u; }
        }
        if (e < n4) {
            float ea = score4(e);
            if (ea < e0) { e1 = e0; i1 = i0; e0 = ea; i0 = e; }
            else if (ea < e1) { e1 = ea; i1 = e; }
        }
    } else {
        [[dont_unroll]] for (uint e = 0u; e < n4; e++) { SEARCH4 }
    }
    // the four-colour candidates' endpoints while P3 is there
    uint ca0 = 0u, cb0 = 0u, ca1 = 0u, cb1 = 0u;
    if (e0 < 1e29) entry_endpoints(i0, true, ca0, cb0);
    if (e1 < 1e29 && is_max()) entry_endpoints(i1, true, ca1, cb1);
    if ((CF_OPT & 32u) != 0u && n3 > 0u) prefix_p2();
    if (S3X4) {
        // bit 3: four entries per iteration, kept in table order (e .. e + 3)
        uint e = n4;
        [[dont_unroll]] for (; e + 3u < n4 + n3; e += 4u) {
            float ea = score3(e), eb = score3(e + 1u), ec = score3(e + 2u), ed = score3(e + 3u);
            if (ea < e3) { e3 = ea; i3 = e; }
            if (eb < e3) { e3 = eb; i3 = e + 1u; }
            if (ec < e3) { e3 = ec; i3 = e + 2u; }
            if (ed < e3) { e3 = ed; i3 = e + 3u; }
        }
        [[dont_unroll]] for (; e < n4 + n3; e++) { SEARCH3 }
    } else {
        [[dont_unroll]] for (uint e = n4; e < n4 + n3; e++) { SEARCH3 }
    }
    // the CPU drops candidates at or above 1e29 (penalised rank-1 partitions)
    const bvec3 ok = bvec3(e0 < 1e29, e1 < 1e29, e3 < 1e29);
    if (SPLIT) {
        // the candidates for the refine pass; a block that lacks one of them (never with the tables'
        // entries and finite texels) goes to the CPU, which gives the same bytes
        const bool all = ok.x && (ok.y || !is_max()) && (ok.z || FOUR_ANY);
        uint w3 = 1u;
        if (all) {
            uint ca3 = 0u, cb3 = 0u;
            if (!FOUR_ANY) entry_endpoints(i3, false, ca3, cb3);
            const uint o = b * C_BLOCK_WORDS + C_OFFSET;
            dst.words[o] = ca0 | (cb0 << 16u);
            dst.words[o + 1u] = ca1 | (cb1 << 16u);
            // min | max << 16 (score() orders a three-colour pair so anyway): never 1
            w3 = FOUR_ANY ? 0u : min(ca3, cb3) | (max(ca3, cb3) << 16u);
        }
        fb.words[b] = w3;
        return;
    }
    uint ca3 = 0u, cb3 = 0u;
    if (ok.z) entry_endpoints(i3, false, ca3, cb3);
    finish_block(b, tr, ok, ca0, cb0, ca1, cb1, ca3, cb3);
}

void main()
{
    g_lid = gl_LocalInvocationID.x;
    g_col = g_lid;
    const uvec4 head = cft.v[0];
    g_one = uintBitsToFloat(head.z);
    g_magic = 12582912.0 * g_one;
    g_tab = (3u + 9u * (head.x + head.y) + 3u) / 4u;
    const uint nblocks = pc.blocks_x * pc.blocks_y;
    if (MULTI) {
        refine_multi_main(nblocks);
        return;
    }
    const uint n4 = head.x, n3 = FOUR_ANY ? 0u : head.y;
    if (CLASSIFY) { // bit 25's first pass: one invocation per block, every one reaches sg_take
        const uint b = group_linear() * gl_WorkGroupSize.x + g_lid;
        bool live = false;
        if (b < nblocks) {
            live = load_block(b);
            if (!live) fb.words[b] = 1u;
        }
        const uint p = sg_take(nblocks, live);
        if (live) fb.words[nblocks + 2u + p] = b;
        return;
    }
    uint b = group_linear() * gl_WorkGroupSize.x + g_lid;
    if (PRELIST) { // bit 25: the search and the refine pass over the classify pass's list
        if (b >= fb.words[nblocks]) return;
        b = fb.words[nblocks + 2u + b];
    }
    if (b >= nblocks) return;
    if (REFINE) {
        refine_main(b);
        return;
    }
    float tr;
    if (!setup_block(b, tr)) {
        fb.words[b] = 1u;
        return;
    }
    search_block(b, tr, n4, n3);
}

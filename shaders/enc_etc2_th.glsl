// enc_etc2_th.glsl - the ETC2 T / H pass (src/gpu/gpu_etc2_th.c; compiled as enc_etc2_th.comp and, with th_eval's
// pixel loops unrolled, enc_etc2_th_unroll.comp): for each 4x4 block, exactly what the CPU's
// kiln__etc2_search_th (src/codec/etc2_enc.c) does after the ETC1 and planar modes: the gate by quality, the
// th_bound lower bound, kiln__etc2_th_search pruned at the incoming error and, when it finds a lower error,
// kiln__etc_reselect (no dithering) and kiln__etc_pack. Three dispatches: PHASE 2 resets the list, PHASE 0 runs
// the gate and th_bound of every block (one invocation each) and lists the blocks to search, PHASE 1 searches the
// listed blocks, one invocation each (dense, so few invocations of a subgroup wait on blocks the gate dropped).
// TH_LANES = 1 (enc_etc2_th_lanes.comp): PHASE 0 also computes the partitions, PHASE 1 searches them (th_search_prep,
// th_search_flat, th_pool).
//
// Bit-identical to the CPU: the same integer arithmetic, and the CPU's double arithmetic operation for
// operation in the same order:
//  - every double expression is `precise` and every product that feeds an addition goes through dmul(),
//    which passes it through an integer identity the compiler cannot see through (an XOR with the push
//    constant `zero`), since a driver may fuse a multiply and an add anyway (lavapipe's LLVM does);
//  - divisions go through div_rn / div_int and square roots through sqrt_rn: Vulkan allows double division and
//    square root to be less than correctly rounded; both are corrected from residuals computed without fma
//    (d_resid: Vulkan lets a double fma round twice, and lavapipe's does);
//  - (int) floor(...) and the comparisons are exact.
// Block state: 4 words per block (kiln_etc2_gpu_block: err, flags, the 8 bytes), read from binding 1 and
// written (changed or not) to binding 2.
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_control_flow_attributes : require

// TH_UNROLL_LOOPS = 1 (enc_etc2_th_unroll.comp): th_eval's pixel loops unrolled (its per-pixel arrays can live in
// registers); the same operations in the same order, so the same bytes.
#ifndef TH_LANES
#define TH_LANES 0
#endif
#if TH_UNROLL_LOOPS
#define TH_UNROLL [[unroll]]
#else
#define TH_UNROLL
#endif

layout(local_size_x_id = 0) in;

layout(push_constant) uniform Push {
    uint width;
    uint height;
    uint blocks_x;
    uint nblocks;
    uint w0, w1, w2;
    uint quality;
    uint a1;
    uint alpha_threshold;
    uint zero;   // 0 (the contraction barrier of dmul)
    uint pad;
    uvec2 sw[3]; // th_bound's sqrt((double) w[ch]) and u[ch], as the host computed them (bits)
    uvec2 su[3];
} pc;

layout(std430, binding = 0) readonly buffer Src { uint words[]; } src;
layout(std430, binding = 1) readonly buffer BlocksIn { uint words[]; } bin;
#if TH_LANES // PHASE 0 (PREP = 1) leaves the partitions of a listed block in its outgoing state for the search
layout(std430, binding = 2) buffer BlocksOut { uint words[]; } bout;
#else
layout(std430, binding = 2) writeonly buffer BlocksOut { uint words[]; } bout;
#endif
layout(std430, binding = 3) buffer List { uint words[]; } list; // [0] = count, then block indices

// 2: reset the list; 0: the gate and bound of every block (lists those to search; enc_etc2_th_lanes.comp with
// PREP = 1: and writes their partitions, th_parts); 1: the search of the listed
layout(constant_id = 1) const uint PHASE = 0u;
// Search variants (helper etc2max; gpu_etc2_th.c passes them to every build, KILN_GPU_ETC2_TH_FLAT / _FASTPIX /
// _CHECK; FLAT only to enc_etc2_th_lanes.comp; the defaults here are the original code). All give the CPU's bytes:
//  FLAT = 1 (PREP = 1): th_search_flat, the whole search as one loop of th_eval calls driven by a per-invocation
//    state machine, so the invocations of a subgroup meet at the one th_eval each iteration whatever their partition,
//    recentring round or +-1 neighbour (the nested loops diverge at every level); th_eval's H distance loop runs only the
//    4 distances of the colours' order;
//  FASTPIX = 1: when no palette entry of either centre clamps (the condition of the grey-line bound), a pixel's error is
//    taken in closed form: min over +-d of base -+ 2 d q + W d^2 = base + W d^2 - 2 d |q| (and min with base when 0 is an
//    option), the same integers as center_pix;
//  CHECK = 1, 2, 4, 8, 16: the partial pixel sum is compared with the limit before every CHECK-th pixel only (16: once).
//    Exact: a sum that reaches the limit is not taken whether it stops there or later (all sums stay far below 2^32).
layout(constant_id = 4) const uint FLAT = 0u;
layout(constant_id = 5) const uint FASTPIX = 0u;
layout(constant_id = 6) const uint CHECK = 1u;
//  CACHE = 1: th_eval keeps the two centres' per-pixel data and, when called with the same centres (also swapped: an
//    eval set's T(a, b), T(b, a), H(a, b), H(b, a)), reuses it instead of recomputing it (the same values).
// (constant 7 holds CACHE in bit 0 and SMEM, below, in bit 1: the host passes at most 8 constants)
layout(constant_id = 7) const uint CACHE_BITS = 0u;
const uint CACHE = CACHE_BITS & 1u;
// Exact work reductions (helper etc2fast; bits 2 and 3 of constant 7; KILN_GPU_ETC2_TH_DEDUP / _RECENT; same bytes):
//  DEDUP = 1 (PHASE 0 and 1, PREP = 1): th_parts also marks as a duplicate every partition whose quantised group means (a, b) -
//    in that order - equal an earlier partition's. The CPU's local search of a partition depends only on (a, b) (it
//    starts from an error of UINT32_MAX), so it repeats the earlier one's result L, and that L was already offered to
//    best (taken if lower; best only decreases since): the repeat cannot change best. Equal masks give equal (a, b), so
//    this includes the CPU's duplicate-mask test. PHASE 1 then loops over the partitions to search only (th_search_prep, th_pool).
//    Checked on the CPU's own search (a copy of kiln__etc2_th_search with both rules, 9 test images x normal / high / max x
//    perceptual on / off: every block the same bytes and error); there 33-79 % of the partitions at max repeat an earlier
//    one's (a, b), and 79-96 % of the recentring rounds give the local best's colours again.
//  RECENT = 1 (PHASE 1, eval_partition): a recentring round whose colours equal the local best's (T: the same order;
//    H: either order) re-evaluates only candidates the local search has already evaluated (an H solution comes from an
//    h_eval, which tried both orders), so none is strictly below the local error: the CPU's round finds nothing and its
//    loop stops; the round is skipped and the loop stopped.
const uint DEDUP = (CACHE_BITS >> 2u) & 1u;
const uint RECENT = (CACHE_BITS >> 3u) & 1u;
// POOL = 1 (bit 4 of constant 7; PHASE 1 of enc_etc2_th_lanes.comp with PREP = 1; helper etc2th,
// KILN_GPU_ETC2_TH_POOL, the default at max): the work of a workgroup's blocks pooled over its invocations, see th_pool.
const uint POOL = (CACHE_BITS >> 4u) & 1u;

const int Q_FAST = 0, Q_NORMAL = 1, Q_HIGH = 2, Q_MAX = 3;
const int MODE_NONE = -1, MODE_T = 2, MODE_H = 3;
const int OPT_PLUS = 1, OPT_ZERO = 2, OPT_MINUS = 4;
// double constants as C has them, by their bits
#define D_0_999 packDouble2x32(uvec2(0xd916872bu, 0x3feff7ceu))
#define D_1EM12 packDouble2x32(uvec2(0x812dea11u, 0x3d719799u))
const int DIST[8] = int[8](3, 6, 11, 16, 23, 32, 41, 64);

// ---------------------------------------------------------------- exact double arithmetic

// a * b rounded once, never fused into a following addition.
double dmul(double a, double b)
{
    precise double p = a * b;
    uvec2 u = unpackDouble2x32(p);
    u.x ^= pc.zero;
    return packDouble2x32(u);
}

// d_step: the neighbours of a finite nonzero double (one ulp towards / away from zero)
#include "etc_div.glsl"

// The residual a - q b for q near a / b, by Dekker's exact product q b = p + e (Veltkamp's splits): a - p is exact
// (Sterbenz), and (a - p) - e is rounded once, as fma(-q, b, a) would round it on a device whose fma is fused (exact
// when representable). No fma: Vulkan lets a double fma round twice, and lavapipe's does (Mesa's gallivm lowers it to a
// multiply and an add), which made div_int's correction fail (a grey block's group mean 356 / 6 one ulp low:
// test_gpu_etc2_th grey_split_tie). p and the splits' products go through dmul (fused into the next subtraction they
// would give other values); the four partial products are exact, so fusing them changes nothing.
double d_resid(double a, double q, double b)
{
    precise double p = dmul(q, b);
    precise double t = dmul(134217729.0LF, q);
    precise double qh = t - (t - q);
    precise double ql = q - qh;
    precise double u = dmul(134217729.0LF, b);
    precise double bh = u - (u - b);
    precise double bl = b - bh;
    precise double e = (((qh * bh - p) + qh * bl) + ql * bh) + ql * bl;
    precise double r = (a - p) - e;
    return r;
}

// One step of div_rn: q moves to its neighbour n towards a / b when a / b lies beyond their midpoint, |r| > |b (n - q)| / 2
// with r = a - q b (exact for a faithful q; b (n - q) is exact, n - q being a power of two); true when it moved. No ties:
// a / b is never halfway between two doubles unless b is a power of two, and then q is exact.
bool div_step(double a, double b, inout double q)
{
    const double r = d_resid(a, q, b);
    if (r == 0.0LF) return false;
    const bool above = (r > 0.0LF) == (b > 0.0LF); // the true quotient lies above q
    const double n = d_step(q, above == (q > 0.0LF));
    precise double r2 = 2.0LF * abs(r), gap = abs(b * (n - q));
    if (r2 <= gap) return false;
    q = n;
    return true;
}

// Correctly rounded a / b (b != 0, finite). A quotient that is not the nearest double gets one Newton step (it leaves the
// quotient's error times the division's relative error: within an ulp for a division good to 2^-26; every device kiln
// has met divides correctly, etc_div.glsl) and up to two more steps of an ulp. One residual when the quotient is right.
double div_rn(double a, double b)
{
    precise double q = a / b;
    if (q == 0.0LF || isinf(q) || isnan(q)) return q;
    if (div_step(a, b, q)) {
        q = q + d_resid(a, q, b) / b;
        for (int it = 0; it < 2 && div_step(a, b, q); it++) {}
    }
    return q;
}

// div_int (helper etc2th): the CPU's sum / n of integers (group_means, the mean of sort_on_axis: |sum| <= 16 * 255,
// n = 1..16), correctly rounded, without a division (div_rn: two; H100 2026-11-26 19:18 UTC, gate at max 4096^2 4.69 ->
// 3.98 ms, ETC2 RGB max 38.7 -> 37.8 ms): q1 = s * RN(1 / n), its exact residual r = s - q1 n and q = q1 + r RN(1 / n).
// The residual without fma (helper etcfix; the fma version was wrong on lavapipe, whose double fma rounds twice): q1 =
// hi + lo with hi = q1 less its 5 low mantissa bits, so hi n (at most 48 + 4 bits) and lo n are exact, s - hi n is exact
// (Sterbenz) and so is (s - hi n) - lo n (a multiple of ulp(q1) below 2^11 ulp). The last step rounds twice (r RN(1 / n),
// then the sum) where Markstein's fma rounded once, which changes nothing: s / n is at least ulp / 32 from every midpoint
// between doubles (a nonzero integer over 2 n ulps), far more than the second rounding's error. Checked against
// (double) s / n on the CPU (x86-64, -ffp-contract=off) for every n = 1..16 and |s| <= 2^20: no difference
// (helper etcfix, 2026-11-27; the fma version likewise, helper etc2th, 2026-11-26).
const uvec2 RCP_N[17] = uvec2[17](uvec2(0u, 0u),
    uvec2(0x00000000u, 0x3ff00000u), uvec2(0x00000000u, 0x3fe00000u), uvec2(0x55555555u, 0x3fd55555u), uvec2(0x00000000u, 0x3fd00000u),
    uvec2(0x9999999au, 0x3fc99999u), uvec2(0x55555555u, 0x3fc55555u), uvec2(0x92492492u, 0x3fc24924u), uvec2(0x00000000u, 0x3fc00000u),
    uvec2(0x1c71c71cu, 0x3fbc71c7u), uvec2(0x9999999au, 0x3fb99999u), uvec2(0x745d1746u, 0x3fb745d1u), uvec2(0x55555555u, 0x3fb55555u),
    uvec2(0x13b13b14u, 0x3fb3b13bu), uvec2(0x92492492u, 0x3fb24924u), uvec2(0x11111111u, 0x3fb11111u), uvec2(0x00000000u, 0x3fb00000u));
double div_int(int s, int n)
{
    const double rc = packDouble2x32(RCP_N[n]), ds = double(s);
    const double q1 = dmul(ds, rc);
    uvec2 hb = unpackDouble2x32(q1);
    hb.x &= ~31u;
    const double hi = packDouble2x32(hb), dn = double(n);
    precise double lo = q1 - hi;
    precise double r = (ds - hi * dn) - lo * dn; // exact products: fused or not, the same
    precise double q = q1 + r * rc;              // fused (Markstein) or not, the same (above)
    return q;
}

// One step of sqrt_rn: s moves to its neighbour n towards sqrt(x) when sqrt(x) lies beyond their midpoint; true when it
// moved. sqrt(x) > (s + n) / 2 iff x - s n > (n - s)^2 / 4; x - s n is a multiple of (n - s)^2 (no underflow), so that is
// x - s n > 0 for n above s, and for n below s, x - s n >= (n - s)^2 / 4 iff x - s n > 0 (x = s n, a root below the
// midpoint, moves). x - s n = r - s (n - s) with r = x - s^2 (d_resid: exact, or rounded once as a fused fma would) and
// s (n - s) exact (n - s is a power of two): one residual for both neighbours.
bool sqrt_step(double x, inout double s)
{
    const double r = d_resid(x, s, s), up = d_step(s, true), dn = d_step(s, false);
    precise double tu = r - s * (up - s), td = r + s * (s - dn);
    if (tu > 0.0LF) s = up;
    else if (td <= 0.0LF) s = dn;
    else return false;
    return true;
}

// Correctly rounded sqrt(x), x >= 0 finite: as div_rn, one Newton step (within an ulp from a root good to 2^-27
// relative) and up to two steps of an ulp when the root is not the nearest double.
double sqrt_rn(double x)
{
    precise double s = sqrt(x);
    if (x == 0.0LF || s == 0.0LF || isinf(s) || isnan(s)) return s;
    if (sqrt_step(x, s)) {
        s = s + d_resid(x, s, s) / (2.0LF * s);
        for (int it = 0; it < 2 && sqrt_step(x, s); it++) {}
    }
    return s;
}

// ---------------------------------------------------------------- the block (etc_src)

int C[16][3];
bool OPQ[16];
// PACKED = 1: the block read through CP / OPM instead (fewer live registers): CP[p] = R | G << 8 | B << 16, OPM bit p = OPQ[p]
layout(constant_id = 8) const uint PACKED = 0u;
uint CP[16];
uint OPM;
#define CC(p, ch) (PACKED != 0u ? int(bitfieldExtract(CP[p], 8 * (ch), 8)) : C[p][ch])
#define OP(p) (PACKED != 0u ? ((OPM >> (p)) & 1u) != 0u : OPQ[p])
#if TH_LANES
// POOL = 1: the texels of the workgroup's blocks, [slot * 16 + p] (the block of invocation `slot`; load_block(slot) reads
// them into C / OPQ; reading the pixels from shared memory at every use instead was slower on the H100: 30.3 vs 29.5 ms)
const uint POOL_WG = POOL != 0u ? gl_WorkGroupSize.x : 1u;
shared uint s_pix[POOL_WG * 16u];
#endif
#if TH_LANES
uint CUR_SLOT; // POOL = 1: the slot load_block read (eval_set_fused reads its texels from s_pix)
#endif
int NOP;
int W[3];
int WS; // W[0] + W[1] + W[2]
bool TRANSPARENT;
int QUAL;

// etc_sol of a T / H search (selectors are derived by reselect when needed)
struct Sol {
    int mode;
    ivec3 c0, c1;
    int di;
    uint err;
};

int clamp255(int v) { return v < 0 ? 0 : (v > 255 ? 255 : v); }
int x4(int v) { return (v << 4) | v; }

uint werr3(int p, ivec3 b)
{
    int d0 = CC(p, 0) - b.x, d1 = CC(p, 1) - b.y, d2 = CC(p, 2) - b.z;
    return uint(W[0] * d0 * d0 + W[1] * d1 * d1 + W[2] * d2 * d2);
}

// ---------------------------------------------------------------- T and H (etc2_enc.c th_eval)

int CA_BASE[16], CA_Q[16], CB_BASE[16], CB_Q[16];
int CA_KEY = -1, CB_KEY = -1; // CACHE = 1: pack12 of the colours whose per-pixel data CA_* / CB_* hold (-1: none)
// SMEM = 1 (workgroup size 64): th_eval's per-pixel centre data in shared memory instead (64 fewer live registers),
// [p * 64 + invocation]: consecutive invocations, consecutive words
const uint SMEM = (CACHE_BITS >> 1u) & 1u;
const uint SMEM_N = SMEM != 0u ? 16u * 64u : 1u;
shared int s_cab[SMEM_N], s_caq[SMEM_N], s_cbb[SMEM_N], s_cbq[SMEM_N];
#define SMI(p) (uint(p) * 64u + gl_LocalInvocationID.x)
#define CAB(p) (SMEM != 0u ? s_cab[SMI(p)] : CA_BASE[p])
#define CAQ(p) (SMEM != 0u ? s_caq[SMI(p)] : CA_Q[p])
#define CBB(p) (SMEM != 0u ? s_cbb[SMI(p)] : CB_BASE[p])
#define CBQ(p) (SMEM != 0u ? s_cbq[SMI(p)] : CB_Q[p])
#define SET_CAB(p, v) if (SMEM != 0u) s_cab[SMI(p)] = (v); else CA_BASE[p] = (v)
#define SET_CAQ(p, v) if (SMEM != 0u) s_caq[SMI(p)] = (v); else CA_Q[p] = (v)
#define SET_CBB(p, v) if (SMEM != 0u) s_cbb[SMI(p)] = (v); else CB_BASE[p] = (v)
#define SET_CBQ(p, v) if (SMEM != 0u) s_cbq[SMI(p)] = (v); else CB_Q[p] = (v)

// center_d of one centre at one distance
struct CenterD {
    int opts;
    bool plus_free, minus_free;
    int d;
    ivec3 cplus, cminus;
    int wd2;
};

CenterD center_d_init(ivec3 c, int d, int opts)
{
    CenterD cd;
    int lo = min(min(c.x, c.y), c.z), hi = max(max(c.x, c.y), c.z);
    cd.opts = opts;
    cd.d = d;
    cd.plus_free = hi + d <= 255;
    cd.minus_free = lo - d >= 0;
    cd.cplus = ivec3(clamp255(c.x + d), clamp255(c.y + d), clamp255(c.z + d));
    cd.cminus = ivec3(clamp255(c.x - d), clamp255(c.y - d), clamp255(c.z - d));
    cd.wd2 = WS * d * d;
    return cd;
}

uint center_pix(int base, int q, CenterD cd, int p)
{
    uint best = 0xFFFFFFFFu;
    if ((cd.opts & OPT_ZERO) != 0) best = uint(base);
    if ((cd.opts & OPT_PLUS) != 0) {
        uint e = cd.plus_free ? uint(base - 2 * cd.d * q + cd.wd2) : werr3(p, cd.cplus);
        best = min(e, best);
    }
    if ((cd.opts & OPT_MINUS) != 0) {
        uint e = cd.minus_free ? uint(base + 2 * cd.d * q + cd.wd2) : werr3(p, cd.cminus);
        best = min(e, best);
    }
    return best;
}

int pack12(ivec3 c) { return c.x << 8 | c.y << 4 | c.z; }

void th_eval(int mode, ivec3 a, ivec3 b, inout Sol best)
{
    ivec3 a8 = ivec3(x4(a.x), x4(a.y), x4(a.z)), b8 = ivec3(x4(b.x), x4(b.y), x4(b.z));
    int pa = pack12(a), pb = pack12(b);
    // CACHE = 1: the eval sets try (a, b) and (b, a) with the same two centres: swap the arrays instead of recomputing
    if (CACHE != 0u && pa == CB_KEY && pb == CA_KEY) {
        TH_UNROLL for (int p = 0; p < 16; p++) {
            int t = CAB(p);
            SET_CAB(p, CBB(p));
            SET_CBB(p, t);
            t = CAQ(p);
            SET_CAQ(p, CBQ(p));
            SET_CBQ(p, t);
        }
        CA_KEY = pa;
        CB_KEY = pb;
    } else if (CACHE == 0u || pa != CA_KEY || pb != CB_KEY) {
        TH_UNROLL for (int p = 0; p < 16; p++) {
            int u0 = CC(p, 0) - a8.x, u1 = CC(p, 1) - a8.y, u2 = CC(p, 2) - a8.z;
            SET_CAB(p, W[0] * u0 * u0 + W[1] * u1 * u1 + W[2] * u2 * u2);
            SET_CAQ(p, W[0] * u0 + W[1] * u1 + W[2] * u2);
            u0 = CC(p, 0) - b8.x;
            u1 = CC(p, 1) - b8.y;
            u2 = CC(p, 2) - b8.z;
            SET_CBB(p, W[0] * u0 * u0 + W[1] * u1 * u1 + W[2] * u2 * u2);
            SET_CBQ(p, W[0] * u0 + W[1] * u1 + W[2] * u2);
        }
        CA_KEY = pa;
        CB_KEY = pb;
    }
    int opt_a, opt_b;
    if (mode == MODE_T) {
        opt_a = OPT_ZERO;
        opt_b = TRANSPARENT ? (OPT_PLUS | OPT_MINUS) : (OPT_PLUS | OPT_ZERO | OPT_MINUS);
    } else {
        opt_a = OPT_PLUS | OPT_MINUS;
        opt_b = TRANSPARENT ? OPT_MINUS : (OPT_PLUS | OPT_MINUS);
    }
    const int64_t Wl = int64_t(WS);
    int64_t lb = 0;
    if (FASTPIX != 0u) {
        // the same terms in 32 bits: for the weights gpu_etc2_th.c passes (1, 1, 1 or 38, 75, 15: W <= 128),
        // W |u|^2_w <= 128 * 128 * 255^2 < 2^31 and 0 <= (w . u)^2 <= W |u|^2_w (Cauchy-Schwarz): each term is exact
        TH_UNROLL for (int p = 0; p < 16; p++) {
            if (!OP(p)) continue;
            uint la = uint(WS) * uint(CAB(p)) - (mode == MODE_T ? 0u : uint(CAQ(p) * CAQ(p)));
            uint lbb = uint(WS) * uint(CBB(p)) - uint(CBQ(p) * CBQ(p));
            lb += int64_t(min(la, lbb));
        }
    } else {
        TH_UNROLL for (int p = 0; p < 16; p++) {
            if (!OP(p)) continue;
            int64_t la = Wl * int64_t(CAB(p)) - (mode == MODE_T ? int64_t(0) : int64_t(CAQ(p)) * int64_t(CAQ(p)));
            int64_t lbb = Wl * int64_t(CBB(p)) - int64_t(CBQ(p)) * int64_t(CBQ(p));
            lb += la < lbb ? la : lbb;
        }
    }
    // H: only the distances whose low bit is (pa >= pb). FLAT = 1 visits just those (4 iterations, the same distances in
    // the same order), so H evaluations of either order stay in step; else all 8 with the others skipped
    const int hpar = pa >= pb ? 1 : 0;
    const int nd = FLAT != 0u && mode == MODE_H ? 4 : 8;
    for (int it = 0; it < nd; it++) {
        const int di = FLAT != 0u && mode == MODE_H ? 2 * it + hpar : it;
        if (mode == MODE_H && (hpar != (di & 1))) continue;
        int d = DIST[di];
        CenterD da = center_d_init(a8, d, opt_a);
        CenterD db = center_d_init(b8, d, opt_b);
        const uint limit = best.err;
        const bool allfree = (mode == MODE_T || (da.plus_free && da.minus_free)) && db.plus_free && db.minus_free;
        if (lb >= Wl * int64_t(uint64_t(limit)) && allfree) continue;
        uint e = 0u;
        if (FASTPIX != 0u && allfree) {
            const int d2 = 2 * d, wd2 = da.wd2;
            TH_UNROLL for (int p = 0; p < 16; p++) {
                if ((uint(p) & (CHECK - 1u)) == 0u && e >= limit) break;
                if (!OP(p)) continue;
                int ea = mode == MODE_T ? CAB(p) : CAB(p) + wd2 - d2 * abs(CAQ(p));
                int eb;
                if (mode == MODE_T) {
                    int t = wd2 - d2 * abs(CBQ(p));
                    eb = CBB(p) + (TRANSPARENT ? t : min(t, 0));
                } else {
                    eb = CBB(p) + wd2 + (TRANSPARENT ? d2 * CBQ(p) : -d2 * abs(CBQ(p)));
                }
                e += uint(min(ea, eb));
            }
        } else {
            TH_UNROLL for (int p = 0; p < 16; p++) {
                if ((uint(p) & (CHECK - 1u)) == 0u && e >= limit) break;
                if (!OP(p)) continue;
                uint ea = center_pix(CAB(p), CAQ(p), da, p), eb = center_pix(CBB(p), CBQ(p), db, p);
                e += min(ea, eb);
            }
        }
        if (e < best.err) {
            best.err = e;
            best.mode = mode;
            best.c0 = a;
            best.c1 = b;
            best.di = di;
        }
    }
}

#if TH_LANES
// eval_set_fused (PHASE 1 with POOL = 1; helper etc2m, 2026-11-27): the eval set's th_eval calls - T(a, b), T(b, a), H(a, b), H(b, a) as
// eval_set runs them - from one pass over the block's opaque pixels: for every distance d the whole sums, with
// |.| = werr3, A, B the 8-bit centres, A+ = clamp(A + d), A- = clamp(A - d):
//   T(a, b): sum_p min(|p - A|, |p - B|, |p - B+|, |p - B-|)   (transparent block: no |p - B|, selector 2 is transparent)
//   T(b, a): the same with A and B swapped
//   H(a, b): sum_p min(|p - A+|, |p - A-|, |p - B+|, |p - B-|) (transparent block: no |p - B+|); H(b, a) likewise
// then offered to best in th_eval's order (T(a, b) d = 0..7, T(b, a) d = 0..7, H(a, b) at the distances of its parity,
// H(b, a) at the others), each taken when strictly below best.err. th_eval computes the same values (center_pix: the
// closed form base -+ 2 d q + W d^2 is werr3 of the unclamped colour, used only when that colour is not clamped) but
// stops a sum once it reaches the limit, or skips a distance by the bound lb >= W limit (lb / W <= the sum: the closed
// form's minimum over d); a sum at or above the limit is not taken either way, so the whole sums take the same ones.
// No per-pixel centre arrays (th_eval's CA_* / CB_*, 64 values) and the texels read from s_pix once per set, though the
// sums no longer stop at the limit: the pooled search's registers 242 -> 205 (159 with PACKED, the default at max); H100,
// 2026-11-27 08:15 UTC, ETC2 RGB 4096^2 rock, whole encoder: max 36.91 -> 29.32 ms (workgroup 64, PACKED), high 26.32 ->
// 17.33, RGB A1 max 33.37 -> 27.65.
uint werr_px(ivec3 px, ivec3 c)
{
    const ivec3 u = px - c;
    return uint(W[0] * u.x * u.x + W[1] * u.y * u.y + W[2] * u.z * u.z);
}
// px against the colour c8 +- d (c8's channels within lo..hi; cc = werr_px(px, c8), cq = the weighted sum of px - c8,
// wd2 = WS * d * d, d2 = 2 * d): m = the smaller of the two errors, minus = the error of c8 - d alone
void dist_errs(ivec3 px, ivec3 c8, int lo, int hi, int cc, int cq, int d, int wd2, int d2, out uint m, out uint minus)
{
    if (hi + d <= 255 && lo - d >= 0) {
        m = uint(cc + wd2 - d2 * abs(cq));
        minus = uint(cc + wd2 + d2 * cq);
    } else {
        minus = werr_px(px, ivec3(clamp255(c8.x - d), clamp255(c8.y - d), clamp255(c8.z - d)));
        m = min(werr_px(px, ivec3(clamp255(c8.x + d), clamp255(c8.y + d), clamp255(c8.z + d))), minus);
    }
}
void eval_set_fused(int kind, ivec3 a, ivec3 b, inout Sol best)
{
    const ivec3 a8 = ivec3(x4(a.x), x4(a.y), x4(a.z)), b8 = ivec3(x4(b.x), x4(b.y), x4(b.z));
    const int loA = min(min(a8.x, a8.y), a8.z), hiA = max(max(a8.x, a8.y), a8.z);
    const int loB = min(min(b8.x, b8.y), b8.z), hiB = max(max(b8.x, b8.y), b8.z);
    const bool tr = TRANSPARENT;
    uint t1[8], t2[8], hab[8], hba[8];
    [[unroll]] for (int di = 0; di < 8; di++) {
        t1[di] = 0u;
        t2[di] = 0u;
        hab[di] = 0u;
        hba[di] = 0u;
    }
    for (int p = 0; p < 16; p++) {
        const uint t = s_pix[CUR_SLOT * 16u + uint(p)];
        if (pc.a1 != 0u && (t >> 24) < pc.alpha_threshold) continue; // transparent pixel (load_block's OPQ)
        const ivec3 px = ivec3(int(t & 255u), int((t >> 8) & 255u), int((t >> 16) & 255u));
        const ivec3 ua = px - a8, ub = px - b8;
        const int cab = W[0] * ua.x * ua.x + W[1] * ua.y * ua.y + W[2] * ua.z * ua.z;
        const int caq = W[0] * ua.x + W[1] * ua.y + W[2] * ua.z;
        const int cbb = W[0] * ub.x * ub.x + W[1] * ub.y * ub.y + W[2] * ub.z * ub.z;
        const int cbq = W[0] * ub.x + W[1] * ub.y + W[2] * ub.z;
        const uint m0 = uint(min(cab, cbb));
        const uint za = tr ? uint(cab) : m0, zb = tr ? uint(cbb) : m0; // T's zero options
        [[unroll]] for (int di = 0; di < 8; di++) {
            const int d = DIST[di], wd2 = WS * d * d, d2 = 2 * d;
            uint ma, mb, am, bm; // min over +-d; the -d option alone (transparent H's second colour)
            dist_errs(px, a8, loA, hiA, cab, caq, d, wd2, d2, ma, am);
            dist_errs(px, b8, loB, hiB, cbb, cbq, d, wd2, d2, mb, bm);
            t1[di] += min(za, mb);
            t2[di] += min(zb, ma);
            hab[di] += min(ma, tr ? bm : mb);
            hba[di] += min(mb, tr ? am : ma);
        }
    }
    const int pa = pack12(a), pb = pack12(b);
    // k as eval_set: 0 T(a, b), 1 T(b, a), 2 H(a, b), 3 H(b, a) (not when a == b and the block is opaque)
    const int k0 = kind == MODE_H ? 2 : 0, k1 = kind == MODE_T ? 0 : (pa != pb || tr ? 3 : 2);
    for (int k = k0; k <= k1; k++) {
        const bool swap = (k & 1) != 0;
        const int hpar = (swap ? pb >= pa : pa >= pb) ? 1 : 0;
        [[unroll]] for (int di = 0; di < 8; di++) {
            if (k >= 2 && (di & 1) != hpar) continue;
            const uint e = k == 0 ? t1[di] : (k == 1 ? t2[di] : (k == 2 ? hab[di] : hba[di]));
            if (e < best.err) {
                best.err = e;
                best.mode = k < 2 ? MODE_T : MODE_H;
                best.c0 = swap ? b : a;
                best.c1 = swap ? a : b;
                best.di = di;
            }
        }
    }
}
#endif

// The CPU's sequences of th_eval calls, through one call site (code size: the compiler inlines every call):
// kind 0: th_eval(T, a, b), th_eval(T, b, a), h_eval(a, b); kind MODE_T: th_eval(T, a, b); kind MODE_H: h_eval(a, b),
// where h_eval (H with unordered colours) is th_eval(H, a, b) then, unless a == b opaque, th_eval(H, b, a).
// POOL = 1: eval_set_fused.
void eval_set(int kind, ivec3 a, ivec3 b, inout Sol best)
{
#if TH_LANES
    if (POOL != 0u) { // uniform: a specialisation constant
        eval_set_fused(kind, a, b, best);
        return;
    }
#endif
    int k0 = kind == MODE_H ? 2 : 0, k1 = kind == MODE_T ? 0 : 3;
    for (int k = k0; k <= k1; k++) {
        if (k == 3 && !(pack12(a) != pack12(b) || TRANSPARENT)) break;
        bool swap = (k & 1) != 0;
        th_eval(k < 2 ? MODE_T : MODE_H, swap ? b : a, swap ? a : b, best);
    }
}

// kiln__etc_palette of a T / H solution
void palette(Sol s, out ivec3 pal[4])
{
    int d = DIST[s.di];
    ivec3 a = ivec3(x4(s.c0.x), x4(s.c0.y), x4(s.c0.z)), b = ivec3(x4(s.c1.x), x4(s.c1.y), x4(s.c1.z));
    ivec3 bp = ivec3(clamp255(b.x + d), clamp255(b.y + d), clamp255(b.z + d));
    ivec3 bm = ivec3(clamp255(b.x - d), clamp255(b.y - d), clamp255(b.z - d));
    if (s.mode == MODE_T) {
        pal[0] = a;
        pal[1] = bp;
        pal[2] = b;
        pal[3] = bm;
    } else {
        pal[0] = ivec3(clamp255(a.x + d), clamp255(a.y + d), clamp255(a.z + d));
        pal[1] = ivec3(clamp255(a.x - d), clamp255(a.y - d), clamp255(a.z - d));
        pal[2] = bp;
        pal[3] = bm;
    }
}

// kiln__etc_reselect(s, src, 0) of a T / H solution: selectors (row-major) and the error.
uint reselect(Sol s, out int sel[16])
{
    ivec3 pal[4];
    palette(s, pal);
    uint e = 0u;
    for (int p = 0; p < 16; p++) {
        if (!OP(p)) {
            sel[p] = 2;
            continue;
        }
        int bk = -1;
        uint be = 0xFFFFFFFFu;
        for (int k = 0; k < 4; k++) {
            if (k == 2 && TRANSPARENT) continue;
            uint ek = werr3(p, pal[k]);
            if (ek < be) {
                be = ek;
                bk = k;
            }
        }
        sel[p] = bk;
        e += be;
    }
    return e;
}

int quant4(double v)
{
    precise double t = div_rn(v, 17.0LF) + 0.5LF;
    int l = int(floor(t));
    return l < 0 ? 0 : (l > 15 ? 15 : l);
}

// quant4_ratio (helper etc2th): quant4(div_rn(double(s), double(n))) for integers
// s, n (1 <= n <= 16, |s| < 2^16) - the CPU's quant4(sum / n) of th_recenter and group_means - in integers. The exact
// value x = s / (17 n) + 0.5 = (2 s + 17 n) / (34 n); the CPU's doubles (s / n, then / 17, then + 0.5, each rounded once,
// all below 2^5 in magnitude) stay within 2^-45 of x, while x is at least 1 / (34 n) >= 1 / 544 from every integer
// unless it is one: so floor of the CPU's value is floor(x) except when x is an integer (remainder 0), where the double
// operations run as before. Same bytes, without the two correctly rounded divisions per channel (checked against the
// CPU's expression for every n = 1..16 and s = -20000..20000: no difference). H100, T/H pass at max, 4096^2: 47.2 -> 41.4 ms.
int quant4_ratio(int s, int n)
{
    int num = 2 * s + 17 * n, den = 34 * n;
    int k = num >= 0 ? num / den : -((den - 1 - num) / den); // floor(num / den)
    if (num - k * den == 0) return quant4(div_rn(double(s), double(n)));
    return k < 0 ? 0 : (k > 15 ? 15 : k);
}

// th_recenter: centres from the selectors a solution implies (mean of pixel - modifier)
void th_recenter(Sol s, out ivec3 a, out ivec3 b)
{
    int sel[16];
    reselect(s, sel);
    int d = DIST[s.di];
    ivec3 sa = ivec3(0), sb = ivec3(0); // sums of integers: exact in double as in int
    int na = 0, nb = 0;
    for (int p = 0; p < 16; p++) {
        if (!OP(p)) continue;
        int sl = sel[p], off, grp;
        if (s.mode == MODE_T) {
            grp = sl == 0 ? 0 : 1;
            off = sl == 1 ? d : (sl == 3 ? -d : 0);
        } else {
            grp = sl < 2 ? 0 : 1;
            off = (sl & 1) != 0 ? -d : d;
        }
        ivec3 v = ivec3(CC(p, 0) - off, CC(p, 1) - off, CC(p, 2) - off);
        if (grp != 0) {
            sb += v;
            nb++;
        } else {
            sa += v;
            na++;
        }
    }
    for (int ch = 0; ch < 3; ch++) {
        a[ch] = na != 0 ? quant4_ratio(sa[ch], na) : s.c0[ch];
        b[ch] = nb != 0 ? quant4_ratio(sb[ch], nb) : s.c1[ch];
    }
}

void group_means(uint mask, out double ma[3], out double mb[3])
{
    int sa[3] = int[3](0, 0, 0), sb[3] = int[3](0, 0, 0);
    int na = 0, nb = 0;
    for (int p = 0; p < 16; p++) {
        if (!OP(p)) continue;
        bool g = ((mask >> p) & 1u) != 0u;
        for (int ch = 0; ch < 3; ch++) {
            if (g) sb[ch] += CC(p, ch);
            else sa[ch] += CC(p, ch);
        }
        if (g) nb++;
        else na++;
    }
    for (int ch = 0; ch < 3; ch++) {
        ma[ch] = na != 0 ? div_int(sa[ch], na) : 0.0LF;
        mb[ch] = nb != 0 ? div_int(sb[ch], nb) : ma[ch];
        if (na == 0) ma[ch] = mb[ch];
    }
}

uint lloyd(uint mask, int iters)
{
    for (int it = 0; it < iters; it++) {
        double ma[3], mb[3];
        group_means(mask, ma, mb);
        uint nm = 0u;
        for (int p = 0; p < 16; p++) {
            if (!OP(p)) continue;
            precise double da = 0.0LF, db = 0.0LF;
            for (int ch = 0; ch < 3; ch++) {
                precise double x = double(CC(p, ch));
                precise double xa = x - ma[ch], xb = x - mb[ch];
                da += dmul(dmul(double(W[ch]), xa), xa);
                db += dmul(dmul(double(W[ch]), xb), xb);
            }
            if (db < da) nm |= 1u << p;
        }
        if (nm == mask) break;
        mask = nm;
    }
    return mask;
}

void principal_axis(double mean[3], out double axis[3])
{
    precise double cov[6] = double[6](0.0LF, 0.0LF, 0.0LF, 0.0LF, 0.0LF, 0.0LF);
    for (int p = 0; p < 16; p++) {
        if (!OP(p)) continue;
        precise double u0 = double(CC(p, 0)) - mean[0], u1 = double(CC(p, 1)) - mean[1], u2 = double(CC(p, 2)) - mean[2];
        cov[0] += dmul(u0, u0);
        cov[1] += dmul(u0, u1);
        cov[2] += dmul(u0, u2);
        cov[3] += dmul(u1, u1);
        cov[4] += dmul(u1, u2);
        cov[5] += dmul(u2, u2);
    }
    precise double v[3] = double[3](1.0LF, 1.0LF, 1.0LF);
    for (int it = 0; it < 8; it++) {
        precise double n0 = (dmul(cov[0], v[0]) + dmul(cov[1], v[1])) + dmul(cov[2], v[2]);
        precise double n1 = (dmul(cov[1], v[0]) + dmul(cov[3], v[1])) + dmul(cov[4], v[2]);
        precise double n2 = (dmul(cov[2], v[0]) + dmul(cov[4], v[1])) + dmul(cov[5], v[2]);
        precise double len = sqrt_rn((dmul(n0, n0) + dmul(n1, n1)) + dmul(n2, n2));
        if (len < D_1EM12) break;
        v[0] = div_rn(n0, len);
        v[1] = div_rn(n1, len);
        v[2] = div_rn(n2, len);
    }
    axis = v;
}

// kiln__etc2_th_search's first steps, shared by th_search and th_parts.
// The opaque pixels' indices (the count is returned) and their channel sums.
int opaque_pixels(out int idx[16], out int msum[3])
{
    int n = 0;
    msum = int[3](0, 0, 0);
    for (int p = 0; p < 16; p++)
        if (OP(p)) {
            idx[n++] = p;
            for (int ch = 0; ch < 3; ch++) msum[ch] += CC(p, ch);
        }
    return n;
}

// idx[0..n-1] (n > 0) ordered by their projection on the principal axis through their mean (stable insertion sort)
void sort_on_axis(inout int idx[16], int n, int msum[3])
{
    double mean[3];
    for (int ch = 0; ch < 3; ch++) mean[ch] = div_int(msum[ch], n);
    double axis[3];
    principal_axis(mean, axis);
    precise double proj[16];
    for (int i = 0; i < n; i++) {
        int p = idx[i];
        precise double d0 = double(CC(p, 0)) - mean[0], d1 = double(CC(p, 1)) - mean[1], d2 = double(CC(p, 2)) - mean[2];
        proj[i] = (dmul(d0, axis[0]) + dmul(d1, axis[1])) + dmul(d2, axis[2]);
    }
    for (int i = 1; i < n; i++) {
        double pv = proj[i];
        int pi = idx[i], j = i;
        while (j > 0 && proj[j - 1] > pv) {
            proj[j] = proj[j - 1];
            idx[j] = idx[j - 1];
            j--;
        }
        proj[j] = pv;
        idx[j] = pi;
    }
}

// the weighted squared error of the pixels idx[0..n-1] around the means of mask's two groups
double split_sse(uint mask, int idx[16], int n)
{
    double ma[3], mb[3];
    group_means(mask, ma, mb);
    precise double sse = 0.0LF;
    for (int i = 0; i < n; i++) {
        int p = idx[i];
        bool g = ((mask >> p) & 1u) != 0u;
        for (int ch = 0; ch < 3; ch++) {
            precise double dv = double(CC(p, ch)) - (g ? mb[ch] : ma[ch]);
            sse += dmul(dmul(double(W[ch]), dv), dv);
        }
    }
    return sse;
}

// pmask[0..np-1] stably sorted by psse (insertion sort)
void sort_splits(inout uint pmask[16], inout double psse[16], int np)
{
    for (int i = 1; i < np; i++) {
        uint tm = pmask[i];
        double ts = psse[i];
        int j = i;
        while (j > 0 && psse[j - 1] > ts) {
            pmask[j] = pmask[j - 1];
            psse[j] = psse[j - 1];
            j--;
        }
        pmask[j] = tm;
        psse[j] = ts;
    }
}

// kiln__etc2_th_search's evaluation of one partition: T / H from the quantised group means, then up to
// `recenter` re-centring passes while they lower the error
// the two groups' means of a partition, quantised to 4 bits per channel
void partition_centres(uint mask, out ivec3 a, out ivec3 b)
{
    { // group_means then quant4, in integers (quant4_ratio)
        ivec3 sa = ivec3(0), sb = ivec3(0);
        int na = 0, nb = 0;
        for (int p = 0; p < 16; p++) {
            if (!OP(p)) continue;
            ivec3 c = ivec3(CC(p, 0), CC(p, 1), CC(p, 2));
            if (((mask >> p) & 1u) != 0u) {
                sb += c;
                nb++;
            } else {
                sa += c;
                na++;
            }
        }
        // group_means: an empty group takes the other's means (both empty: 0, quant4(0) = 0)
        for (int ch = 0; ch < 3; ch++) {
            int qa = na != 0 ? quant4_ratio(sa[ch], na) : 0, qb = nb != 0 ? quant4_ratio(sb[ch], nb) : qa;
            a[ch] = na != 0 ? qa : qb;
            b[ch] = qb;
        }
    }
}

Sol eval_partition(uint mask, int recenter)
{
    ivec3 a, b;
    partition_centres(mask, a, b);
    Sol local;
    local.mode = MODE_NONE;
    local.c0 = ivec3(0);
    local.c1 = ivec3(0);
    local.di = 0;
    local.err = 0xFFFFFFFFu;
    eval_set(0, a, b, local);
    for (int r = 0; r < recenter && local.err > 0u && local.mode != MODE_NONE; r++) {
        uint before = local.err;
        ivec3 na, nb;
        th_recenter(local, na, nb);
        if (RECENT != 0u &&
            ((na == local.c0 && nb == local.c1) || (local.mode == MODE_H && na == local.c1 && nb == local.c0)))
            break;
        eval_set(local.mode, na, nb, local);
        if (local.err >= before) break;
    }
    return local;
}

// the splits of the sorted order (group B = idx[s..n-1]; n == 1: the one split, group B empty), stably sorted by
// split_sse; returns their count
int ranked_splits(int idx[16], int n, out uint pmask[16])
{
    double psse[16];
    int np = 0;
    for (int s = 1; s < n || (n == 1 && s == 1); s++) {
        uint mask = 0u;
        for (int i = s; i < n; i++) mask |= 1u << idx[i];
        pmask[np] = mask;
        psse[np] = split_sse(mask, idx, n);
        np++;
        if (n == 1) break;
    }
    sort_splits(pmask, psse, np);
    return np;
}

// kiln__etc2_th_search; best.err is the error to beat, best.mode MODE_NONE until a T / H solution is taken
void th_search(inout Sol best)
{
    int q = QUAL;
    int nparts = q == Q_FAST ? 1 : (q == Q_NORMAL ? 2 : (q == Q_HIGH ? 3 : 5));
    int recenter = q == Q_FAST ? 0 : (q == Q_MAX ? 3 : 1);
    int idx[16];
    int msum[3];
    int n = opaque_pixels(idx, msum);
    if (n == 0) return;
    sort_on_axis(idx, n, msum);
    uint pmask[16];
    int np = ranked_splits(idx, n, pmask);
    uint tried[8];
    int ntried = 0;
    int limit = min(nparts, np);
    for (int k = 0; k < limit + 1; k++) {
        uint mask;
        if (k < limit) mask = pmask[k];
        else mask = lloyd(pmask[0], q == Q_FAST ? 2 : 6);
        bool dup = false;
        for (int i = 0; i < ntried; i++) dup = dup || tried[i] == mask;
        if (dup) continue;
        tried[ntried++] = mask;
        Sol local = eval_partition(mask, recenter);
        if (local.err < best.err && local.mode != MODE_NONE) best = local;
    }
    if (q == Q_MAX && best.mode != MODE_NONE && best.err > 0u) {
        for (int round = 0; round < 2; round++) {
            uint before = best.err;
            Sol cur = best;
            for (int which = 0; which < 2; which++)
                for (int ch = 0; ch < 3; ch++)
                    for (int s = -1; s <= 1; s += 2) {
                        ivec3 a = cur.c0, b = cur.c1;
                        int v = (which != 0 ? b[ch] : a[ch]) + s;
                        if (v < 0 || v > 15) continue;
                        if (which != 0) b[ch] = v;
                        else a[ch] = v;
                        eval_set(cur.mode, a, b, best);
                    }
            if (best.err >= before) break;
        }
    }
}

// th_bound: lower bound of any T / H error (etc2_enc.c), in the CPU's double operations
double th_bound()
{
    double sw[3], u[3];
    for (int ch = 0; ch < 3; ch++) {
        sw[ch] = packDouble2x32(pc.sw[ch]);
        u[ch] = packDouble2x32(pc.su[ch]);
    }
    precise double y[16][3];
    precise double m[3] = double[3](0.0LF, 0.0LF, 0.0LF);
    int n = 0;
    for (int p = 0; p < 16; p++) {
        if (!OP(p)) continue;
        precise double v[3];
        precise double d = 0.0LF;
        for (int ch = 0; ch < 3; ch++) {
            v[ch] = dmul(sw[ch], double(CC(p, ch)));
            d += dmul(v[ch], u[ch]);
        }
        for (int ch = 0; ch < 3; ch++) {
            y[n][ch] = v[ch] - dmul(d, u[ch]);
            m[ch] += y[n][ch];
        }
        n++;
    }
    if (n < 3) return 0.0LF;
    precise double S[3][3];
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) S[a][b] = 0.0LF;
    double dn = double(n);
    // the CPU divides m[a] / n at every use: the same correctly rounded quotient, so computed once here
    double mn[3];
    for (int a = 0; a < 3; a++) mn[a] = div_rn(m[a], dn);
    for (int i = 0; i < n; i++)
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                precise double ya = y[i][a] - mn[a], yb = y[i][b] - mn[b];
                S[a][b] += dmul(ya, yb);
            }
    precise double t = (S[0][0] + S[1][1]) + S[2][2];
    precise double pm = ((((dmul(S[0][0], S[1][1]) - dmul(S[0][1], S[1][0])) + dmul(S[0][0], S[2][2])) - dmul(S[0][2], S[2][0])) +
                         dmul(S[1][1], S[2][2])) - dmul(S[1][2], S[2][1]);
    precise double disc = dmul(t, t) - 4.0LF * pm;
    precise double l2 = (t - sqrt_rn(disc > 0.0LF ? disc : 0.0LF)) * 0.5LF; // / 2, exactly
    return l2 > 0.0LF ? l2 * D_0_999 : 0.0LF;
}

// ---------------------------------------------------------------- kiln__etc_pack of a T / H solution

int sext3(int v) { return v >= 4 ? v - 8 : v; }

void pack(Sol s, int sel[16], out uint hi, out uint lo)
{
    uint opaque_bit = TRANSPARENT ? 0u : 1u;
    int d = s.di;
    hi = 0u;
    lo = 0u;
    if (s.mode == MODE_T) {
        int r = s.c0.x, ra = r >> 2, rb = r & 3;
        // bits 63..32 of the CPU's word: R + dR must leave [0, 31]
        uint force = (ra + rb < 4) ? (1u << 26) : (7u << 29);
        hi = force | uint(ra) << 27 | uint(rb) << 24 | uint(s.c0.y) << 20 | uint(s.c0.z) << 16 | uint(s.c1.x) << 12 |
             uint(s.c1.y) << 8 | uint(s.c1.z) << 4 | uint(d >> 1) << 2 | opaque_bit << 1 | uint(d & 1);
    } else {
        int r0 = s.c0.x, g0 = s.c0.y, b0 = s.c0.z;
        int g1a = g0 >> 1, g1b = g0 & 1, b1a = b0 >> 3, b1b = (b0 >> 1) & 3, b1c = b0 & 1;
        hi = uint(r0) << 27 | uint(g1a) << 24 | uint(g1b) << 20 | uint(b1a) << 19 | uint(b1b) << 16 | uint(b1c) << 15 |
             uint(s.c1.x) << 11 | uint(s.c1.y >> 1) << 8 | uint(s.c1.y & 1) << 7 | uint(s.c1.z) << 3 |
             uint(d >> 2) << 2 | opaque_bit << 1 | uint((d >> 1) & 1);
        if (r0 + sext3(g1a) < 0) hi |= 1u << 31;
        int x = (g1b << 1) | b1a;
        hi |= (x + b1b < 4) ? (1u << 18) : (7u << 21);
    }
    for (int p = 0; p < 16; p++) {
        int j = (p & 3) * 4 + (p >> 2);
        lo |= uint(sel[p] >> 1) << (16 + j) | uint(sel[p] & 1) << j;
    }
}

uint bswap(uint v) { return (v >> 24) | ((v >> 8) & 0xFF00u) | ((v << 8) & 0xFF0000u) | (v << 24); }

// the texel word of pixel p (row-major in the block) of block b, edge texels replicated
uint block_texel(uint b, int p)
{
    uint bx = b % pc.blocks_x, by = b / pc.blocks_x;
    uint x = min(bx * 4u + uint(p & 3), pc.width - 1u), y = min(by * 4u + uint(p >> 2), pc.height - 1u);
    return src.words[y * pc.width + x];
}
void load_block(uint b)
{
    W[0] = int(pc.w0);
    W[1] = int(pc.w1);
    W[2] = int(pc.w2);
    WS = W[0] + W[1] + W[2];
    QUAL = int(pc.quality);
    NOP = 0;
    OPM = 0u;
    for (int p = 0; p < 16; p++) {
#if TH_LANES
        // POOL = 1: b is a slot of the workgroup, whose texels are in s_pix
        uint t = POOL != 0u ? s_pix[b * 16u + uint(p)] : block_texel(b, p);
        CUR_SLOT = b;
#else
        uint t = block_texel(b, p);
#endif
        bool o = pc.a1 == 0u || (t >> 24) >= pc.alpha_threshold;
        if (PACKED != 0u) {
            CP[p] = t & 0xFFFFFFu;
            OPM |= o ? 1u << p : 0u;
        } else {
            C[p][0] = int(t & 255u);
            C[p][1] = int((t >> 8) & 255u);
            C[p][2] = int((t >> 16) & 255u);
            OPQ[p] = o;
        }
        NOP += o ? 1 : 0;
    }
    TRANSPARENT = pc.a1 != 0u && NOP < 16;
}

#if TH_LANES
// ---------------------------------------------------------------- PHASE 0 with the partitions, PHASE 1 over them
// (enc_etc2_th_lanes.comp with PREP = 1, the default above FAST): PHASE 0 (the gate, one invocation per block) also
// computes a listed block's partitions (the principal axis, the split points' costs, their sort, Lloyd, the duplicates)
// into the block's outgoing state (th_parts); PHASE 1 loads them (th_search_prep, th_search_flat or th_pool). (Several
// invocations per block, KILN_GPU_ETC2_TH_LANES = 2..16, and their PREP = 0 variant lost on the H100 and were removed,
// helper etc2th 2026-11-26.)
layout(constant_id = 3) const uint PREP = 1u;

uint sol_pack(Sol s)
{
    return uint(s.mode < 0 ? 0 : s.mode) << 27 | uint(pack12(s.c0)) << 15 | uint(pack12(s.c1)) << 3 | uint(s.di);
}

// PHASE 0 (PREP = 1): kiln__etc2_th_search's partitions k = 0..limit (limit + 1 <= 6; limit is the Lloyd one), 16 bits each,
// into w[0..2]; w[3]: limit + 1 (0: no opaque pixel, no search) | the duplicates (bit 8 + k: k equals an earlier one)
uvec4 th_parts()
{
    int q = QUAL;
    int nparts = q == Q_FAST ? 1 : (q == Q_NORMAL ? 2 : (q == Q_HIGH ? 3 : 5));
    int idx[16];
    int msum[3];
    int n = opaque_pixels(idx, msum);
    if (n == 0) return uvec4(0u);
    sort_on_axis(idx, n, msum);
    uint pmask[16];
    int np = ranked_splits(idx, n, pmask);
    int limit = min(nparts, np);
    uvec4 r = uvec4(0u, 0u, 0u, uint(limit + 1));
    uint keys[6]; // DEDUP: pack12(a) << 12 | pack12(b) of partitions 0..k-1
    for (int k = 0; k < limit + 1; k++) {
        uint mask = k < limit ? pmask[k] : lloyd(pmask[0], q == Q_FAST ? 2 : 6);
        bool dup = false;
        for (int i = 0; i < k; i++) dup = dup || pmask[i] == mask;
        if (DEDUP != 0u) {
            ivec3 a, b;
            partition_centres(mask, a, b);
            keys[k] = uint(pack12(a)) << 12 | uint(pack12(b));
            for (int i = 0; i < k; i++) dup = dup || keys[i] == keys[k];
        }
        if (dup) r.w |= 1u << (8 + k);
        r[k >> 1] |= mask << (16 * (k & 1));
    }
    return r;
}

// kiln__etc2_th_search over the gate's partitions (PREP = 1, one invocation per block): the partitions to search (DEDUP = 1:
// without the duplicates, so the loop runs once per partition searched), the first strictly lowest local result taken if
// below the incoming error (the CPU's order), then max's two +-1 rounds.
void th_search_prep(uint blk, inout Sol best)
{
    int q = QUAL;
    int recenter = q == Q_FAST ? 0 : (q == Q_MAX ? 3 : 1);
    uvec4 pw = uvec4(bout.words[blk * 4u], bout.words[blk * 4u + 1u], bout.words[blk * 4u + 2u], bout.words[blk * 4u + 3u]);
    int cnt = int(pw.w & 7u); // 0: no opaque pixel, no search
    uint todo = (1u << cnt) - 1u;
    if (DEDUP != 0u) todo &= ~(pw.w >> 8);
    Sol lbest;
    lbest.mode = MODE_NONE;
    lbest.c0 = ivec3(0);
    lbest.c1 = ivec3(0);
    lbest.di = 0;
    lbest.err = 0xFFFFFFFFu;
    for (; todo != 0u; todo &= todo - 1u) {
        int k = findLSB(todo);
        if (((pw.w >> (8 + k)) & 1u) != 0u) continue;
        uint mask = (pw[k >> 1] >> (16 * (k & 1))) & 0xFFFFu;
        Sol local = eval_partition(mask, recenter);
        if (local.mode != MODE_NONE && local.err < lbest.err) lbest = local;
    }
    if (lbest.mode != MODE_NONE && lbest.err < best.err) best = lbest;
    if (q == Q_MAX && best.mode != MODE_NONE && best.err > 0u) {
        for (int round = 0; round < 2; round++) {
            uint before = best.err;
            Sol cur = best;
            for (int nx = 0; nx < 12; nx++) {
                int which = nx / 6, ch = (nx % 6) / 2, sg = (nx & 1) != 0 ? 1 : -1;
                ivec3 a = cur.c0, b = cur.c1;
                int v = (which != 0 ? b[ch] : a[ch]) + sg;
                if (v < 0 || v > 15) continue;
                if (which != 0) b[ch] = v;
                else a[ch] = v;
                eval_set(cur.mode, a, b, best);
            }
            if (best.err >= before) break;
        }
    }
}

// FLAT = 1 (PREP = 1): kiln__etc2_th_search as one loop. Each iteration every invocation advances its own
// state machine to its next th_eval (flat_next: the CPU's sequence - per partition the eval set of kind 0, then the
// recentring sets while they lower the error, the partition's result kept if lower; then at max the +-1 neighbours of
// up to two rounds) and all run that th_eval together, into `local` (partitions) or `best` (+-1 rounds), as the CPU
// does. Same calls with the same arguments in the same order per block, so the same result.
int fs_stage;      // 0: the partition's first set, 1: a recentring set, 2: a +-1 neighbour set, 3: next partition
int fs_k, fs_cnt;  // partition index, partitions (limit + 1)
int fs_j, fs_j1;   // next and last entry (0..3: T(a,b), T(b,a), H(a,b), H(b,a)) of the current eval set
ivec3 fs_a, fs_b;  // the current set's colours
int fs_r;          // recentring rounds started
uint fs_before;    // the error before the current recentring set / +-1 round
int fs_round, fs_nx;
Sol fs_cur;        // the +-1 round's centre
Sol fs_local;      // the partition's search
uvec4 fs_pw;       // the gate's partitions

void fs_set(int kind, ivec3 a, ivec3 b)
{
    fs_j = kind == MODE_H ? 2 : 0;
    fs_j1 = kind == MODE_T ? 0 : 3;
    fs_a = a;
    fs_b = b;
}

// advances to the next th_eval (true: mode, ea, eb) or to the end of the search (false); best: the block's result so far
bool flat_next(inout Sol best, out int mode, out ivec3 ea, out ivec3 eb, int recenter)
{
    mode = MODE_T;
    ea = ivec3(0);
    eb = ivec3(0);
    for (;;) {
        if (fs_j <= fs_j1) {
            int k = fs_j;
            if (k == 3 && !(pack12(fs_a) != pack12(fs_b) || TRANSPARENT)) {
                fs_j = 4;
                continue;
            }
            fs_j++;
            bool swap = (k & 1) != 0;
            mode = k < 2 ? MODE_T : MODE_H;
            ea = swap ? fs_b : fs_a;
            eb = swap ? fs_a : fs_b;
            return true;
        }
        if (fs_stage <= 1) { // a partition's set is done: recentre or finish the partition
            bool stop = fs_stage == 1 && fs_local.err >= fs_before;
            if (!stop && fs_r < recenter && fs_local.err > 0u && fs_local.mode != MODE_NONE) {
                fs_before = fs_local.err;
                ivec3 na, nb;
                th_recenter(fs_local, na, nb);
                fs_r++;
                fs_stage = 1;
                fs_set(fs_local.mode, na, nb);
                continue;
            }
            if (fs_local.err < best.err && fs_local.mode != MODE_NONE) best = fs_local;
            fs_stage = 3;
        }
        if (fs_stage == 3) { // the next partition that is not a duplicate, else the +-1 rounds
            fs_k++;
            while (fs_k < fs_cnt && ((fs_pw.w >> (8 + fs_k)) & 1u) != 0u) fs_k++;
            if (fs_k < fs_cnt) {
                uint mask = (fs_pw[fs_k >> 1] >> (16 * (fs_k & 1))) & 0xFFFFu;
                ivec3 a, b;
                partition_centres(mask, a, b);
                fs_local.mode = MODE_NONE;
                fs_local.c0 = ivec3(0);
                fs_local.c1 = ivec3(0);
                fs_local.di = 0;
                fs_local.err = 0xFFFFFFFFu;
                fs_r = 0;
                fs_stage = 0;
                fs_set(0, a, b);
                continue;
            }
            if (!(QUAL == Q_MAX && best.mode != MODE_NONE && best.err > 0u)) return false;
            fs_stage = 2;
            fs_round = 0;
            fs_nx = 0;
            fs_before = best.err;
            fs_cur = best;
        }
        // fs_stage 2: the next valid +-1 neighbour (CPU order: colour, channel, -1 / +1), or the round's end
        if (fs_nx == 12) {
            if (best.err >= fs_before || fs_round == 1) return false;
            fs_round = 1;
            fs_nx = 0;
            fs_before = best.err;
            fs_cur = best;
        }
        int nx = fs_nx++;
        int which = nx / 6, ch = (nx % 6) / 2, sg = (nx & 1) != 0 ? 1 : -1;
        ivec3 a = fs_cur.c0, b = fs_cur.c1;
        int v = (which != 0 ? b[ch] : a[ch]) + sg;
        if (v < 0 || v > 15) continue;
        if (which != 0) b[ch] = v;
        else a[ch] = v;
        fs_set(fs_cur.mode, a, b);
    }
    return false; // not reached
}

void th_search_flat(uint blk, inout Sol best)
{
    int q = QUAL;
    int recenter = q == Q_FAST ? 0 : (q == Q_MAX ? 3 : 1);
    fs_pw = uvec4(bout.words[blk * 4u], bout.words[blk * 4u + 1u], bout.words[blk * 4u + 2u], bout.words[blk * 4u + 3u]);
    fs_cnt = int(fs_pw.w & 7u); // 0: no opaque pixel, no search
    fs_k = -1;
    fs_stage = 3;
    fs_j = 4;
    fs_j1 = 3;
    fs_local.mode = MODE_NONE;
    fs_local.c0 = ivec3(0);
    fs_local.c1 = ivec3(0);
    fs_local.di = 0;
    fs_local.err = 0xFFFFFFFFu;
    if (fs_cnt == 0) return;
    int mode;
    ivec3 ea, eb;
    while (flat_next(best, mode, ea, eb, recenter)) {
        const bool into_best = fs_stage == 2;
        Sol t = into_best ? best : fs_local;
        th_eval(mode, ea, eb, t);
        if (into_best) best = t;
        else fs_local = t;
    }
}
// POOL = 1 (PREP = 1; KILN_GPU_ETC2_TH_POOL): a workgroup takes gl_WorkGroupSize.x consecutive entries of the
// list, one per invocation (its slot), and pools their work so that no invocation idles while another block of its
// subgroup still has partitions to search (one block per invocation runs 1..6 partition searches, a subgroup as many as
// its busiest block):
//  1. every invocation puts its block's texels and the gate's partitions into shared memory and its partitions to
//     search (not duplicates) into the workgroup's item list (an atomic slot: the order of the items varies, the
//     results do not: each is stored by (slot, k));
//  2. the items, round-robin over the invocations: item (slot, k) is the CPU's local search of partition k of the slot's
//     block (eval_partition: from an error of UINT32_MAX, independent of the other partitions on the CPU too), in stages:
//     the first eval set (T(a, b), T(b, a), H both ways) and th_recenter, then one stage per recentring round over the
//     partitions whose CPU loop goes on (pool_keep), so that a subgroup does not wait on its one partition with 3 rounds;
//  3. each invocation offers its block's results to best in the CPU's order (k ascending, taken when strictly lower);
//  4. max, each of the two +-1 rounds: the blocks still improving list themselves with the round's centre; item
//     (block, nx) is neighbour nx (CPU order: colour, channel, -1 / +1) pruned at the round's incoming error (exact: the
//     CPU's running best is never above it, and a pruned candidate is not below it); each block takes its neighbours'
//     results in nx order when strictly lower: the CPU's first strictly lowest;
//  5. each invocation reselects and packs its block as before.
// The barriers are in uniform control flow (invocations past the list take part without a block).
shared uint s_pw[POOL_WG * 4u];              // per slot: the gate's partitions (th_parts)
shared uint s_item[POOL_WG * 6u];            // the items of step 2: slot << 3 | k; step 4: the listed slots
shared uint s_err[POOL_WG * 12u], s_sol[POOL_WG * 12u]; // per (slot, k) [slot * 6 + k] or (slot, nx) [slot * 12 + nx]: the
                                                          // item's error and sol_pack (in step 2 the upper halves hold the
                                                          // recentring rounds' lists)
shared uint s_rc[POOL_WG * 6u];              // step 2: per (slot, k) the recentred colours; step 4: per slot the +-1 round's centre
#define s_cur s_rc
shared uint s_n;                             // the item count
shared uint s_cnt[4];                        // step 2: per recentring round, its list's length
Sol sol_unpack(uint v, uint err)
{
    Sol w;
    int m = int(v >> 27);
    w.mode = m == 0 ? MODE_NONE : m;
    w.c0 = ivec3(int((v >> 23) & 15u), int((v >> 19) & 15u), int((v >> 15) & 15u));
    w.c1 = ivec3(int((v >> 11) & 15u), int((v >> 7) & 15u), int((v >> 3) & 15u));
    w.di = int(v & 7u);
    w.err = err;
    return w;
}
void pool_sync()
{
    memoryBarrierShared();
    barrier();
}
// Step 2: a partition's local search after its eval set (or recentring round r - 1): the result so far into (slot, k) and,
// if the CPU's loop goes on to round r (its condition and the RECENT test), the item onto round r's list with the
// recentred colours. Only the first 3 rounds exist (recenter <= 3).
void pool_keep(uint slot, uint k, Sol local, int r, int recenter)
{
    const uint WG = gl_WorkGroupSize.x;
    s_err[slot * 6u + k] = local.mode != MODE_NONE ? local.err : 0xFFFFFFFFu;
    s_sol[slot * 6u + k] = sol_pack(local);
    if (!(r < recenter && local.err > 0u && local.mode != MODE_NONE)) return;
    ivec3 na, nb;
    th_recenter(local, na, nb);
    if (RECENT != 0u && ((na == local.c0 && nb == local.c1) || (local.mode == MODE_H && na == local.c1 && nb == local.c0)))
        return;
    s_rc[slot * 6u + k] = uint(pack12(na)) << 12 | uint(pack12(nb));
    uint at = atomicAdd(s_cnt[r], 1u);
    if ((r & 1) != 0) s_sol[6u * WG + at] = slot << 3 | k;
    else s_err[6u * WG + at] = slot << 3 | k;
}
// PHASE 1 with POOL = 1; live: the slot has a block (lid); best.err: its incoming error. On return the invocation's
// block is loaded again (C / OPQ).
void th_pool(bool live, uint lid, uint blk, inout Sol best)
{
    const uint WG = gl_WorkGroupSize.x;
    const int q = int(pc.quality); // (QUAL is set by load_block)
    int recenter = q == Q_FAST ? 0 : (q == Q_MAX ? 3 : 1);
    uvec4 pw = uvec4(0u);
    uint todo = 0u;
    if (lid == 0u) s_n = 0u;
    if (lid < 4u) s_cnt[lid] = 0u;
    if (live) {
        for (int p = 0; p < 16; p++) s_pix[lid * 16u + uint(p)] = block_texel(blk, p);
        pw = uvec4(bout.words[blk * 4u], bout.words[blk * 4u + 1u], bout.words[blk * 4u + 2u], bout.words[blk * 4u + 3u]);
        for (uint k = 0u; k < 4u; k++) s_pw[lid * 4u + k] = pw[k];
        // the partitions to search: not a duplicate (the gate marks equal masks and, DEDUP = 1, equal centres)
        todo = ((1u << (pw.w & 7u)) - 1u) & ~(pw.w >> 8);
    }
    pool_sync();
    if (todo != 0u) {
        uint at = atomicAdd(s_n, uint(bitCount(todo)));
        for (uint t = todo; t != 0u; t &= t - 1u) s_item[at++] = lid << 3 | uint(findLSB(t));
    }
    pool_sync();
    // stage 0: the items' first eval sets; stage r = 1..3: recentring round r - 1 of the items on its list (pool_keep). One
    // call site each for eval_set and th_recenter (every call is inlined: code size, compile time)
    for (int r = 0; r <= 3; r++) {
        uint nr = s_n;
        if (r > 0) {
            pool_sync();
            nr = s_cnt[r - 1]; // the same for every invocation: uniform
            if (nr == 0u) break;
        }
        for (uint i = lid; i < nr; i += WG) {
            const uint it = r == 0 ? s_item[i] : ((r & 1) != 0 ? s_err[6u * WG + i] : s_sol[6u * WG + i]);
            const uint slot = it >> 3, k = it & 7u;
            load_block(slot);
            ivec3 a, b;
            Sol local;
            int kind = 0;
            if (r == 0) { // the partition's quantised group means, from an error of UINT32_MAX
                partition_centres((s_pw[slot * 4u + (k >> 1)] >> (16u * (k & 1u))) & 0xFFFFu, a, b);
                local.mode = MODE_NONE;
                local.c0 = ivec3(0);
                local.c1 = ivec3(0);
                local.di = 0;
                local.err = 0xFFFFFFFFu;
            } else { // the local result so far and the recentred colours
                local = sol_unpack(s_sol[slot * 6u + k], s_err[slot * 6u + k]);
                const uint rc = s_rc[slot * 6u + k];
                a = ivec3(int(rc >> 20), int((rc >> 16) & 15u), int((rc >> 12) & 15u));
                b = ivec3(int((rc >> 8) & 15u), int((rc >> 4) & 15u), int(rc & 15u));
                kind = local.mode;
            }
            const uint before = local.err;
            eval_set(kind, a, b, local);
            if (r > 0 && local.err >= before) continue; // the CPU's loop stops; local unchanged (nothing strictly lower)
            pool_keep(slot, k, local, r, recenter);
        }
    }
    pool_sync();
    for (uint t = todo; t != 0u; t &= t - 1u) { // k ascending: the CPU's order
        uint k = uint(findLSB(t)), e = s_err[lid * 6u + k];
        if (e < best.err) best = sol_unpack(s_sol[lid * 6u + k], e);
    }
    if (q == Q_MAX) { // uniform: the push constant
        bool more = live && best.mode != MODE_NONE && best.err > 0u;
        for (uint round = 0u; round < 2u; round++) {
            pool_sync(); // every read of s_n and s_item above done
            if (lid == 0u) s_n = 0u;
            pool_sync();
            if (more) {
                s_item[atomicAdd(s_n, 1u)] = lid;
                s_cur[lid * 2u] = sol_pack(best);
                s_cur[lid * 2u + 1u] = best.err;
            }
            pool_sync();
            const uint n2 = s_n * 12u;
            for (uint i = lid; i < n2; i += WG) {
                const uint slot = s_item[i / 12u];
                const int nx = int(i % 12u);
                Sol cur = sol_unpack(s_cur[slot * 2u], s_cur[slot * 2u + 1u]);
                int which = nx / 6, ch = (nx % 6) / 2, sg = (nx & 1) != 0 ? 1 : -1;
                ivec3 a = cur.c0, b = cur.c1;
                int v = (which != 0 ? b[ch] : a[ch]) + sg;
                uint e = 0xFFFFFFFFu;
                Sol lb = cur;
                if (v >= 0 && v <= 15) {
                    if (which != 0) b[ch] = v;
                    else a[ch] = v;
                    load_block(slot);
                    eval_set(cur.mode, a, b, lb);
                    if (lb.err < cur.err) e = lb.err;
                }
                s_err[slot * 12u + uint(nx)] = e;
                s_sol[slot * 12u + uint(nx)] = sol_pack(lb);
            }
            pool_sync();
            if (more) {
                uint before = best.err;
                for (uint nx = 0u; nx < 12u; nx++) {
                    uint e = s_err[lid * 12u + nx];
                    if (e < best.err) best = sol_unpack(s_sol[lid * 12u + nx], e);
                }
                more = best.err < before;
            }
        }
    }
    if (live) load_block(lid);
}
#endif

void main()
{
    uint gid = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (PHASE == 2u) { // reset the list
        if (gid == 0u) list.words[0] = 0u;
        return;
    }
    if (PHASE == 0u) { // the gate and th_bound: blocks that need the search go to the list, the others are final
        if (gid >= pc.nblocks) return;
        load_block(gid);
        uint err = bin.words[gid * 4u];
        const uint TH_GATE[4] = uint[4](150u, 24u, 8u, 0u);
        uint gate = TH_GATE[QUAL & 3] * uint(NOP) * uint(WS) / 3u;
        if (err > gate && (QUAL == Q_FAST || th_bound() < double(err))) {
            list.words[1u + atomicAdd(list.words[0], 1u)] = gid;
#if TH_LANES
            if (PREP != 0u) { // the partitions for the search, in the block's outgoing state until the search writes it
                uvec4 r = th_parts();
                for (uint k = 0u; k < 4u; k++) bout.words[gid * 4u + k] = r[k];
            }
#endif
        } else {
            for (uint k = 0u; k < 4u; k++) bout.words[gid * 4u + k] = bin.words[gid * 4u + k];
        }
        return;
    }
    // PHASE 1: the search, over the listed blocks (dense: no invocation idles on a gated-out block)
#if TH_LANES
    if (POOL != 0u) { // uniform: a specialisation constant
        const uint first = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x;
        const uint nlist = list.words[0];
        if (first >= nlist) return; // the whole workgroup: no barrier skipped by some only
        const bool live = gid < nlist;
        const uint pb = live ? list.words[1u + gid] : 0u;
        Sol pbest;
        pbest.mode = MODE_NONE;
        pbest.c0 = ivec3(0);
        pbest.c1 = ivec3(0);
        pbest.di = 0;
        pbest.err = live ? bin.words[pb * 4u] : 0u;
        th_pool(live, gl_LocalInvocationID.x, pb, pbest);
        if (!live) return;
        uvec4 pstate = uvec4(bin.words[pb * 4u], bin.words[pb * 4u + 1u], bin.words[pb * 4u + 2u], bin.words[pb * 4u + 3u]);
        if (pbest.err < pstate.x && pbest.mode != MODE_NONE) {
            int sel[16];
            uint e = reselect(pbest, sel);
            uint hi, lo;
            pack(pbest, sel, hi, lo);
            pstate = uvec4(e, pstate.y, bswap(hi), bswap(lo));
        }
        for (uint k = 0u; k < 4u; k++) bout.words[pb * 4u + k] = pstate[k];
        return;
    }
#endif
    if (gid >= list.words[0]) return;
    uint b = list.words[1u + gid];
    load_block(b);
    uvec4 state = uvec4(bin.words[b * 4u], bin.words[b * 4u + 1u], bin.words[b * 4u + 2u], bin.words[b * 4u + 3u]);
    const uint err = state.x;
    Sol best;
    best.mode = MODE_NONE;
    best.c0 = ivec3(0);
    best.c1 = ivec3(0);
    best.di = 0;
    best.err = err;
#if TH_LANES
    if (FLAT != 0u) // uniform: a specialisation constant
        th_search_flat(b, best);
    else
        th_search_prep(b, best);
#else
    th_search(best);
#endif
    if (best.err < err && best.mode != MODE_NONE) {
        int sel[16];
        uint e = reselect(best, sel);
        uint hi, lo;
        pack(best, sel, hi, lo);
        state = uvec4(e, state.y, bswap(hi), bswap(lo));
    }
    bout.words[b * 4u] = state.x;
    bout.words[b * 4u + 1u] = state.y;
    bout.words[b * 4u + 2u] = state.z;
    bout.words[b * 4u + 3u] = state.w;
}

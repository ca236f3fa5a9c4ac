// enc_bc6h_hcommon.glsl - the pieces shared by the GPU-native BC6H high encoders enc_bc6h_h.comp (one
// invocation per block) and enc_bc6h_hl.comp (several lanes per block): the mode parameters packed in
// integers, the log term, the BPTC weights, unquantization and interpolation as the decoder, endpoint
// quantization (nearest + the CPU's recentred alternative) and the mode filter. The includer defines
// BC6H_SF first (true: SF16; a push constant or a specialisation constant).

const float MU_LN2SQ = 0.03 * 0.480453014;
const float ULP_K2 = MU_LN2SQ / 1048576.0;

// the 14 modes in the CPU's table order (0..9 two subsets, 10..13 one subset), packed in integers
const uint M_VALUE[14] = uint[14](0u, 1u, 2u, 6u, 10u, 14u, 18u, 22u, 26u, 30u, 3u, 7u, 11u, 15u);
const uint M_TRMASK = 0x39FFu; // transformed: all but modes 9 (6.6.6.6) and 10 (mode 3)
// endpoint bits - 6, a nibble per mode: 10 7 11 11 11 9 8 8 8 6 | 10 11 12 16
const uint M_EPB_LO = 0x22355514u, M_EPB_HI = 0xa65402u;
uint m_epb(uint mi) { return 6u + ((mi < 8u ? M_EPB_LO >> (4u * mi) : M_EPB_HI >> (4u * (mi - 8u))) & 15u); }
bool m_tr(uint mi) { return ((M_TRMASK >> mi) & 1u) != 0u; }
ivec3 m_delta(uint mi)
{
    // per mode r g b: 5 5 5, 6 6 6, 5 4 4, 4 5 4, 4 4 5, 5 5 5, 6 5 5, 5 6 5, 5 5 6, 6 6 6, 10, 9, 8, 4
    const uint D0 = 0x1222111u, D1 = 0x11000100u, D2 = 0x12111211u, D3 = 0x66222211u, D4 = 0x4445556u, D5 = 0x0u;
    uint n = mi * 3u;
    ivec3 r;
    [[unroll]] for (uint c = 0u; c < 3u; c++) {
        uint nn = n + c, ww = nn / 8u, bb = (nn % 8u) * 4u;
        uint word = ww == 0u ? D0 : ww == 1u ? D1 : ww == 2u ? D2 : ww == 3u ? D3 : ww == 4u ? D4 : D5;
        r[c] = 4 + int((word >> bb) & 15u);
    }
    return r;
}

float half_val(int mag) { return unpackHalf2x16(uint(mag)).x; }
// sign(x) ln(1 + |half x|): log2(1 + v) is enough here (below 2^-11 the ULP term decides)
vec3 slog3(ivec3 x)
{
    // |half| to float with integer operations (exact for normal and subnormal halves)
    vec3 v = uintBitsToFloat(uvec3(abs(x)) << 13) * 5.192296858534828e33; // 2^112
    vec3 l = log2(1.0 + v) * 0.693147181;
    return vec3(x.x < 0 ? -l.x : l.x, x.y < 0 ? -l.y : l.y, x.z < 0 ? -l.z : l.z);
}
// the BPTC index weights, (64 i + 3) / 7 and (64 i + 7) / 15 (= BPTC_W3, BPTC_W4)
int weight(bool two, int i) { return two ? (i * 64 + 3) / 7 : (i * 64 + 7) / 15; }

int unq(int x, uint epb)
{
    if (!BC6H_SF) {
        if (epb >= 15u) return x;
        if (x == 0) return 0;
        if (x == int((1u << epb) - 1u)) return 0xFFFF;
        return int(((uint(x) << 15) + 0x4000u) >> (epb - 1u));
    }
    if (epb >= 16u) return x;
    uint mag = uint(abs(x));
    int r;
    if (mag == 0u) r = 0;
    else if (mag >= (1u << (epb - 1u)) - 1u) r = 0x7FFF;
    else r = int(((mag << 15) + 0x4000u) >> (epb - 1u));
    return x < 0 ? -r : r;
}
ivec3 unq3(ivec3 x, uint epb) { return ivec3(unq(x.x, epb), unq(x.y, epb), unq(x.z, epb)); }
int finish_x(int v)
{
    if (!BC6H_SF) return int((uint(v) * 31u) >> 6);
    if (v < 0) return -int((uint(-v) * 31u) >> 5);
    return int((uint(v) * 31u) >> 5);
}
ivec3 interp3(ivec3 a, ivec3 b, int w)
{
    ivec3 v = ((64 - w) * a + w * b + 32) >> 6;
    return ivec3(finish_x(v.x), finish_x(v.y), finish_x(v.z));
}

// nearest endpoint value to u in [lo, hi]: exact (the decoder's values, as the CPU) or the plain
// floor (scoring)
int quant1(float u, uint epb, int lo, int hi, bool exact)
{
    u = clamp(u, -70000.0, 70000.0);
    if (isnan(u)) u = 0.0;
    int q0 = int(floor(u * exp2(float(int(epb) - 16))));
    if (!exact) return clamp(q0, lo, hi);
    int best = lo;
    float bd = 1.0 / 0.0;
    [[unroll]] for (int q = q0 - 1; q <= q0 + 1; q++) {
        int qq = clamp(q, lo, hi);
        float d = abs(float(unq(qq, epb)) - u);
        if (d < bd) {
            bd = d;
            best = qq;
        }
    }
    return best;
}

// the mode's endpoint range
int q_lo(uint epb) { return !BC6H_SF ? 0 : -int((1u << (epb - 1u)) - 1u); }
int q_hi(uint epb) { return !BC6H_SF ? int((1u << epb) - 1u) : int((1u << (epb - 1u)) - 1u); }

// the second half of quantize: q holds the nearest values; the deltas of a transformed mode made to
// fit (k = 0: clamped around E0, true when one was; k = 1: E0 recentred, true when it moved)
bool quantize_fit(uint mi, uint k, inout ivec3 q[4])
{
    const bool two = mi < 10u;
    const uint epb = m_epb(mi);
    int lo = q_lo(epb), hi = q_hi(epb);
    if (!m_tr(mi)) return false;
    bool changed = false;
    const ivec3 dlt = m_delta(mi);
    [[unroll]] for (int c = 0; c < 3; c++) {
        int dl = -(1 << (dlt[c] - 1)), dh = -dl - 1;
        int e0 = q[0][c];
        if (k == 1u) {
            int omin = q[1][c], omax = q[1][c];
            if (two) {
                omin = min(omin, min(q[2][c], q[3][c]));
                omax = max(omax, max(q[2][c], q[3][c]));
            }
            int a = omax - dh, b = omin - dl;
            if (a <= b) e0 = clamp(e0, a, b);
            else e0 = (a + b) / 2;
            e0 = clamp(e0, lo, hi);
            if (e0 != q[0][c]) changed = true;
            q[0][c] = e0;
        }
        [[unroll]] for (int e = 1; e < 4; e++)
            if (e < 2 || two) {
                int v = clamp(q[e][c], max(e0 + dl, lo), min(e0 + dh, hi));
                if (k == 0u && v != q[e][c]) changed = true;
                q[e][c] = v;
            }
    }
    return changed;
}

// ef: endpoints in the unquantized domain (absolute). k = 0: nearest quantization, deltas clamped
// around E0, true when a delta had to be clamped; k = 1 (transformed modes): E0 moved as little as
// possible so that the others fit (the CPU's recentre), true when E0 moved
bool quantize(uint mi, vec3 ef[4], uint k, bool exact, out ivec3 q[4])
{
    const bool two = mi < 10u;
    const uint epb = m_epb(mi);
    int lo = q_lo(epb), hi = q_hi(epb);
    [[unroll]] for (int e = 0; e < 4; e++) {
        q[e] = ivec3(0);
        if (e < 2 || two)
            [[unroll]] for (int c = 0; c < 3; c++) q[e][c] = quant1(ef[e][c], epb, lo, hi, exact);
    }
    return quantize_fit(mi, k, q);
}

// whether transformed mode mi can hold the fitted endpoints' deltas, FIT_SLACK x its range
bool fits(uint mi, vec3 ef[4])
{
    const bool two = mi < 10u;
    vec3 dm = abs(ef[1] - ef[0]);
    if (two) dm = max(dm, max(abs(ef[2] - ef[0]), abs(ef[3] - ef[0])));
    vec3 lim = exp2(vec3(m_delta(mi) - 1) + 16.0 - float(m_epb(mi)));
    return all(lessThanEqual(dm, lim * FIT_SLACK));
}


// enc_bc4.glsl - one BC4 channel exactly as src/codec/bc4_enc.c encodes it (kiln strategy): the
// heuristic of fast / normal / high, the least-squares refit in (correctly rounded) doubles, and the
// packing. Integer palettes (the D3D10 ramps of bc.c, truncating toward zero), first index on ties.
// Needs enc_bc_common.glsl.

// BC4_ZERO_EXIT: the heuristic returns once its error is 0 (the same result; enc_bc4_max_pool.comp's
// option bit 22 turns it off for timings of the former code)
#ifndef BC4_ZERO_EXIT
#define BC4_ZERO_EXIT true
#endif

const uint TASK_CHANNELS = (VARIANT == KILN_EBC_BC5U || VARIANT == KILN_EBC_BC5S) ? 2u : 1u;
const bool SIGNED_CH = VARIANT == KILN_EBC_BC4S || VARIANT == KILN_EBC_BC5S;
const uint BLOCK_WORDS = VARIANT == KILN_EBC_BC4U || VARIANT == KILN_EBC_BC4S ? 2u : 4u;
const int R_LO = SIGNED_CH ? -127 : 0;
const int R_HI = SIGNED_CH ? 127 : 255;

int tdiv(int a, int b) { int q = abs(a) / b; return a < 0 ? -q : q; }

// Channel value of texel t of block b for this task's channel (what bc4_enc.c's channel_values gives).
int bc4_value(uint b, uint t, uint ch)
{
    uint comp = VARIANT == KILN_EBC_BC3A ? 3u : ch;
    if (VARIANT == KILN_EBC_BC3A && INPUT_U8 == 0u) // prepared BC1 layout: A8 in bits 16..23 of word 1
        return int((src.words[texel_index(b, t) * 2u + 1u] >> 16u) & 255u);
    uint w = src.words[texel_index(b, t)];
    if (INPUT_U8 == 0u) { // prepared: channel values as bytes (two's complement when signed)
        uint by = (w >> (8u * ch)) & 255u;
        return SIGNED_CH ? int(by << 24) >> 24 : int(by);
    }
    uint u = (w >> (8u * comp)) & 255u;
    if (!SIGNED_CH) return int(u);
    float f = mr(float(u), F_1_255);
    precise float g = mr(f, 2.0) - 1.0;
    if (!(g >= -1.0)) g = -1.0;
    if (g > 1.0) g = 1.0;
    float s = mr(g, 127.0);
    precise float r = s < 0.0 ? s - 0.5 : s + 0.5;
    return int(r);
}

int bc4_pal(int a, int b, int i)
{
    if (i == 0) return a;
    if (i == 1) return b;
    if (a > b) return tdiv((8 - i) * a + (i - 1) * b, 7);
    if (i < 6) return tdiv((6 - i) * a + (i - 1) * b, 5);
    return i == 6 ? R_LO : R_HI;
}

#ifdef BC4_PAIR_HALF
f16vec2 g_vh[8]; // texels 2 t, 2 t + 1 of the heuristic's channel (pair_error's 16-bit path)
#endif

// Error of pair (a, b); stops summing once it reaches limit (then only "not below limit" is known,
// which is all consider() asks: the decisions are those of the full sum).
uint pair_error(int v[16], int a, int b, uint limit)
{
    int pal[8];
    [[unroll]] for (int i = 0; i < 8; i++) pal[i] = bc4_pal(a, b, i);
#ifdef BC4_PAIR_HALF
    // (enc_bc4_h.comp) two texels an operation in 16-bit floats: values and entries as 1536 + x (g_vh: heuristic()
    // fills it; bits 0x6400 + 512 + x, exact), so a difference is exact; the least |v - entry| d back to an
    // integer as the low 10 bits of 1024 + d, squared and summed in integers
    f16vec2 ph[8];
    [[unroll]] for (int i = 0; i < 8; i++) ph[i] = unpackFloat2x16(uint(0x6400 + 512 + pal[i]) * 0x10001u);
    uint ht = 0u;
    for (int t = 0; t < 8 && ht < limit; t++) {
        f16vec2 d = abs(g_vh[t] - ph[0]);
        [[unroll]] for (int i = 1; i < 8; i++) d = min(d, abs(g_vh[t] - ph[i]));
        const uint db = packFloat2x16(d + f16vec2(1024.0hf));
        const uint d0 = db & 1023u, d1 = (db >> 16u) & 1023u;
        ht += d0 * d0 + d1 * d1;
    }
    return ht;
#endif
    uint total = 0u;
    for (int t = 0; t < 16 && total < limit; t++) {
        int be = (v[t] - pal[0]) * (v[t] - pal[0]);
        [[unroll]] for (int i = 1; i < 8; i++) be = min(be, (v[t] - pal[i]) * (v[t] - pal[i]));
        total += uint(be);
    }
    return total;
}

struct Best { uint err; int a, b; };

void consider(inout Best best, int v[16], int a, int b)
{
    if (a < R_LO || a > R_HI || b < R_LO || b > R_HI) return;
    uint e = pair_error(v, a, b, best.err);
    if (e < best.err) { best.err = e; best.a = a; best.b = b; }
}

// fl((8-i)/7), fl((i-1)/7) and fl((6-i)/5), fl((i-1)/5) as C computes them in double
const double W7A[8] = double[8](1.0LF, 0.0LF, 0.8571428571428571LF, 0.7142857142857143LF, 0.5714285714285714LF,
                                0.42857142857142855LF, 0.2857142857142857LF, 0.14285714285714285LF);
const double W7B[8] = double[8](0.0LF, 1.0LF, 0.14285714285714285LF, 0.2857142857142857LF, 0.42857142857142855LF,
                                0.5714285714285714LF, 0.7142857142857143LF, 0.8571428571428571LF);
const double W5A[6] = double[6](1.0LF, 0.0LF, 0.8LF, 0.6LF, 0.4LF, 0.2LF);
const double W5B[6] = double[6](0.0LF, 1.0LF, 0.2LF, 0.4LF, 0.6LF, 0.8LF);

// (int) of a double as x86-64 converts it (out of range: INT_MIN), which the C code relies on.
int cvt_x86(double x) { return (x >= 2147483648.0LF || x < -2147483648.0LF || isnan(x)) ? int(0x80000000u) : int(x); }

bool refit(int v[16], int a, int b, out int na, out int nb)
{
    int pal[8];
    [[unroll]] for (int i = 0; i < 8; i++) pal[i] = bc4_pal(a, b, i);
    bool eight = a > b;
    precise double s_aa = 0.0LF, s_bb = 0.0LF, s_ab = 0.0LF, s_ax = 0.0LF, s_bx = 0.0LF;
    for (int t = 0; t < 16; t++) {
        int bi = 0, be = (v[t] - pal[0]) * (v[t] - pal[0]);
        [[unroll]] for (int i = 1; i < 8; i++) {
            int e = (v[t] - pal[i]) * (v[t] - pal[i]);
            if (e < be) { be = e; bi = i; }
        }
        double wa, wb;
        if (eight) { wa = W7A[bi]; wb = W7B[bi]; }
        else if (bi < 6) { wa = W5A[bi]; wb = W5B[bi]; }
        else continue;
        precise double x = double(v[t]);
        s_aa += wa * wa;
        s_bb += wb * wb;
        s_ab += wa * wb;
        s_ax += wa * x;
        s_bx += wb * x;
    }
    precise double det = s_aa * s_bb - s_ab * s_ab;
    na = a; nb = b;
    if (det < 1e-9LF) return false;
    precise double pa = s_ax * s_bb - s_bx * s_ab;
    precise double pb = s_bx * s_aa - s_ax * s_ab;
    precise double fa = div_rn(pa, det);
    precise double fb = div_rn(pb, det);
    precise double ra = fa < 0.0LF ? fa - 0.5LF : fa + 0.5LF;
    precise double rb = fb < 0.0LF ? fb - 0.5LF : fb + 0.5LF;
    na = clamp(cvt_x86(ra), R_LO, R_HI);
    nb = clamp(cvt_x86(rb), R_LO, R_HI);
    return true;
}

bool order_pair(inout int a, inout int b, bool eight)
{
    if (eight) {
        if (a == b) return false;
        if (a < b) { int t = a; a = b; b = t; }
    } else if (a > b) { int t = a; a = b; b = t; }
    return true;
}

// bc4_enc.c heuristic(): q is FAST, NORMAL or HIGH.
Best heuristic(int v[16], uint q)
{
#ifdef BC4_PAIR_HALF
    [[unroll]] for (int t = 0; t < 8; t++) g_vh[t] = unpackFloat2x16(uint(0x6400 + 512 + v[2 * t]) | (uint(0x6400 + 512 + v[2 * t + 1]) << 16u));
#endif
    int mn = v[0], mx = v[0];
    for (int t = 1; t < 16; t++) { mn = min(mn, v[t]); mx = max(mx, v[t]); }
    int imn = R_HI, imx = R_LO;
    bool inner = false;
    for (int t = 0; t < 16; t++)
        if (v[t] != R_LO && v[t] != R_HI) { imn = min(imn, v[t]); imx = max(imx, v[t]); inner = true; }
    if (!inner) { imn = mn; imx = mn; }
    Best best = Best(0xffffffffu, mn, mn);
    if (mn == mx) { consider(best, v, mn, mn); return best; }
    consider(best, v, mx, mn);
    // error 0: no later pair can replace it (strict improvement only), so the rest changes nothing
    if (BC4_ZERO_EXIT && best.err == 0u) return best;
    if (q == Q_FAST) {
        if (mn == R_LO || mx == R_HI) consider(best, v, imn, imx);
        return best;
    }
    consider(best, v, imn, imx);
    consider(best, v, mn, mx);
    if (BC4_ZERO_EXIT && best.err == 0u) return best;
    for (int eight = 0; eight < 2; eight++) {
        int a = eight == 1 ? mx : imn, b = eight == 1 ? mn : imx;
        for (int round = 0; round < 2; round++) {
            int na, nb;
            if (!refit(v, a, b, na, nb)) break;
            if (!order_pair(na, nb, eight == 1)) break;
            if (na == a && nb == b) break;
            a = na; b = nb;
            consider(best, v, a, b);
        }
    }
    if (q >= Q_HIGH) {
#ifdef BC4_LS_SKIP
        // (BC4_LS_SKIP) a pair of the last two iterations' windows is not considered again: its error was not
        // below the best of then, which is not below the best of now, so it could not replace the best (the
        // same result)
        int pa = -1000, pb = -1000, qa = -1000, qb = -1000;
#endif
        for (int iter = 0; iter < 4; iter++) {
            int a0 = best.a, b0 = best.b;
            for (int da = -2; da <= 2; da++)
                for (int db = -2; db <= 2; db++) {
#ifdef BC4_LS_SKIP
                    if (BC4_LS_SKIP && ((abs(a0 + da - pa) <= 2 && abs(b0 + db - pb) <= 2) ||
                                        (abs(a0 + da - qa) <= 2 && abs(b0 + db - qb) <= 2)))
                        continue;
#endif
                    if (da != 0 || db != 0) consider(best, v, a0 + da, b0 + db);
                }
            if (best.a == a0 && best.b == b0) break;
#ifdef BC4_LS_SKIP
            qa = pa;
            qb = pb;
            pa = a0;
            pb = b0;
#endif
        }
    }
    return best;
}

// The 8 bytes of the channel block as two words.
uvec2 bc4_pack(int v[16], int a, int b)
{
    int pal[8];
    [[unroll]] for (int i = 0; i < 8; i++) pal[i] = bc4_pal(a, b, i);
    uint lo = 0u, hi = 0u; // index bits 0..47
    for (int t = 0; t < 16; t++) {
        int bi = 0, be = (v[t] - pal[0]) * (v[t] - pal[0]);
        [[unroll]] for (int i = 1; i < 8; i++) {
            int e = (v[t] - pal[i]) * (v[t] - pal[i]);
            if (e < be) { be = e; bi = i; }
        }
        uint pos = 3u * uint(t);
        if (pos < 32u) {
            lo |= uint(bi) << pos;
            if (pos > 29u) hi |= uint(bi) >> (32u - pos);
        } else {
            hi |= uint(bi) << (pos - 32u);
        }
    }
    uint w0 = (uint(a) & 255u) | ((uint(b) & 255u) << 8u) | (lo << 16u);
    uint w1 = (lo >> 16u) | (hi << 16u);
    return uvec2(w0, w1);
}

// Output word of task channel ch of block b.
uint bc4_out_word(uint b, uint ch) { return b * BLOCK_WORDS + 2u * ch; }

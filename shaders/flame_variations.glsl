// flame_variations.glsl - flam3 3.1.1's 99 variations in GLSL (single precision), numbered as
// src/flame/flame.h's KILN_FLAME_VARIATIONS table, computed as flam3's variations.c computes them:
// its angle conventions (precalc_atan = atan2(tx, ty), sina = tx / r, cosa = ty / r, atanyx =
// atan2(ty, tx)), its EPS guards, C's fmod/rint/trunc semantics, and its quirks (fisheye's swapped
// output, the "non-standard weight" variations). GLSL builtins whose results are undefined where C's
// are defined (pow with a zero base, atan(0, 0), acos/sqrt just outside their domain through
// rounding) go through the helpers below.
//
// The includer defines, before including this file:
//   float kf_param(uint i)   word i of the xform buffer (a variation entry's parameters)
//   float kf_rand01()        a uniform random number in [0, 1) from the invocation's stream
// A variation entry (flame_abi.glsl): id, weight, p0..p7 at +2 (raw parameters in the X-macro's
// order), e0..e5 at +10 (values the host precalculates, named at each variation).
#ifndef FLAME_VARIATIONS_GLSL
#define FLAME_VARIATIONS_GLSL

const float KF_PI = 3.14159265358979323846;
const float KF_EPS = 1e-10;

struct kf_pre {
    float tx, ty;     // affine-transformed point (after pre_blur)
    float sumsq, sqr; // tx^2 + ty^2 and its square root
    float atan_xy;    // atan2(tx, ty)          (flam3: precalc_atan)
    float sina, cosa; // tx / r, ty / r
    float atan_yx;    // atan2(ty, tx)
};

// C fmod: x - trunc(x / y) * y (GLSL mod floors instead)
float kf_fmod(float x, float y) { return x - y * trunc(x / y); }

// C atan2 for the (0, 0) case GLSL leaves undefined
float kf_atan2(float y, float x) { return (x == 0.0 && y == 0.0) ? 0.0 : atan(y, x); }

// C pow for a non-negative base (every flam3 call site): pow(0, y) = 0 (y > 0), 1 (y = 0), inf (y < 0)
float kf_pow(float x, float y)
{
    if (x == 0.0) return y > 0.0 ? 0.0 : (y == 0.0 ? 1.0 : uintBitsToFloat(0x7f800000u));
    return pow(x, y);
}

float kf_nan() { return uintBitsToFloat(0x7fc00000u); }
float kf_sqrt(float x) { return x < 0.0 ? kf_nan() : sqrt(x); }
float kf_log(float x) { return x < 0.0 ? kf_nan() : log(x); } // log(0) = -inf as in C

#define KP(k) kf_param(e + 2u + (k))
#define KE(k) kf_param(e + 10u + (k))

// One variation: returns its contribution (already multiplied by the weight as flam3 does).
// pre_blur (67) is applied by the caller before the precalculation and never reaches this switch.
vec2 kf_variation(uint id, float w, uint e, kf_pre f)
{
    float tx = f.tx, ty = f.ty;
    switch (id) {
    case 0u: return w * vec2(tx, ty);                                        // linear
    case 1u: return w * vec2(sin(tx), sin(ty));                              // sinusoidal
    case 2u: { float r2 = w / (f.sumsq + KF_EPS); return r2 * vec2(tx, ty); } // spherical
    case 3u: {                                                               // swirl
        float c1 = sin(f.sumsq), c2 = cos(f.sumsq);
        return w * vec2(c1 * tx - c2 * ty, c2 * tx + c1 * ty);
    }
    case 4u: { float r = w / (f.sqr + KF_EPS); return vec2((tx - ty) * (tx + ty) * r, 2.0 * tx * ty * r); } // horseshoe
    case 5u: return w * vec2(f.atan_xy / KF_PI, f.sqr - 1.0);                // polar
    case 6u: return w * f.sqr * vec2(sin(f.atan_xy + f.sqr), cos(f.atan_xy - f.sqr)); // handkerchief
    case 7u: { float a = f.sqr * f.atan_xy; float r = w * f.sqr; return vec2(r * sin(a), -r * cos(a)); } // heart
    case 8u: { float a = f.atan_xy / KF_PI; float r = KF_PI * f.sqr; return w * a * vec2(sin(r), cos(r)); } // disc
    case 9u: {                                                               // spiral
        float r = f.sqr + KF_EPS; float r1 = w / r;
        return r1 * vec2(f.cosa + sin(r), f.sina - cos(r));
    }
    case 10u: { float r = f.sqr + KF_EPS; return w * vec2(f.sina / r, f.cosa * r); } // hyperbolic
    case 11u: return w * vec2(f.sina * cos(f.sqr), f.cosa * sin(f.sqr));     // diamond
    case 12u: {                                                              // ex
        float n0 = sin(f.atan_xy + f.sqr), n1 = cos(f.atan_xy - f.sqr);
        float m0 = n0 * n0 * n0 * f.sqr, m1 = n1 * n1 * n1 * f.sqr;
        return w * vec2(m0 + m1, m0 - m1);
    }
    case 13u: {                                                              // julia
        float a = 0.5 * f.atan_xy;
        if (kf_rand01() < 0.5) a += KF_PI;
        float r = w * sqrt(f.sqr);
        return r * vec2(cos(a), sin(a));
    }
    case 14u: {                                                              // bent
        float nx = tx < 0.0 ? tx * 2.0 : tx, ny = ty < 0.0 ? ty / 2.0 : ty;
        return w * vec2(nx, ny);
    }
    case 15u: return w * vec2(tx + KE(0u) * sin(ty * KE(2u)), ty + KE(1u) * sin(tx * KE(3u))); // waves: c10 c11 dx2 dy2
    case 16u: { float r = 2.0 * w / (f.sqr + 1.0); return r * vec2(ty, tx); } // fisheye (swapped, as flam3)
    case 17u: return w * vec2(tx + KE(0u) * sin(tan(3.0 * ty)), ty + KE(1u) * sin(tan(3.0 * tx))); // popcorn: c20 c21
    case 18u: { float dx = w * exp(tx - 1.0), dy = KF_PI * ty; return dx * vec2(cos(dy), sin(dy)); } // exponential
    case 19u: { float r = w * kf_pow(f.sqr, f.sina); return r * vec2(f.cosa, f.sina); } // power
    case 20u: { float a = tx * KF_PI; return w * vec2(cos(a) * cosh(ty), -sin(a) * sinh(ty)); } // cosine
    case 21u: {                                                              // rings: e0 = c20^2 + EPS
        float dx = KE(0u);
        float r = w * (kf_fmod(f.sqr + dx, 2.0 * dx) - dx + f.sqr * (1.0 - dx));
        return r * vec2(f.cosa, f.sina);
    }
    case 22u: {                                                              // fan: e0 = pi (c20^2 + EPS), e1 = c21
        float dx = KE(0u), dy = KE(1u), dx2 = 0.5 * dx;
        float a = f.atan_xy;
        a += (kf_fmod(a + dy, dx) > dx2) ? -dx2 : dx2;
        return w * f.sqr * vec2(cos(a), sin(a));
    }
    case 23u: {                                                              // blob: low high waves
        float r = f.sqr * (KP(0u) + (KP(1u) - KP(0u)) * (0.5 + 0.5 * sin(KP(2u) * f.atan_xy)));
        return w * r * vec2(f.sina, f.cosa);
    }
    case 24u:                                                                // pdj: a b c d
        return w * vec2(sin(KP(0u) * ty) - cos(KP(1u) * tx), sin(KP(2u) * tx) - cos(KP(3u) * ty));
    case 25u: {                                                              // fan2: x y
        float dy = KP(1u), dx = KF_PI * (KP(0u) * KP(0u) + KF_EPS), dx2 = 0.5 * dx;
        float a = f.atan_xy;
        float t = a + dy - dx * trunc((a + dy) / dx);
        a = t > dx2 ? a - dx2 : a + dx2;
        return w * f.sqr * vec2(sin(a), cos(a));
    }
    case 26u: {                                                              // rings2: val
        float r = f.sqr, dx = KP(0u) * KP(0u) + KF_EPS;
        r += -2.0 * dx * trunc((r + dx) / (2.0 * dx)) + r * (1.0 - dx);
        return w * r * vec2(f.sina, f.cosa);
    }
    case 27u: { float r = (w * 2.0) / (f.sqr + 1.0); return r * vec2(tx, ty); } // eyefish
    case 28u: { float r = w / (0.25 * f.sumsq + 1.0); return r * vec2(tx, ty); } // bubble
    case 29u: return w * vec2(sin(tx), ty);                                  // cylinder
    case 30u: {                                                              // perspective: angle dist; e0 vsin e1 vfcos
        float t = 1.0 / (KP(1u) - ty * KE(0u));
        return w * vec2(KP(1u) * tx * t, KE(1u) * ty * t);
    }
    case 31u: {                                                              // noise
        float a = kf_rand01() * 2.0 * KF_PI;
        float r = w * kf_rand01();
        return vec2(tx * r * cos(a), ty * r * sin(a));
    }
    case 32u: {                                                              // julian: power dist; e0 rN e1 cn
        float t = trunc(KE(0u) * kf_rand01());
        float a = (f.atan_yx + 2.0 * KF_PI * t) / KP(0u);
        float r = w * kf_pow(f.sumsq, KE(1u));
        return r * vec2(cos(a), sin(a));
    }
    case 33u: {                                                              // juliascope: power dist; e0 rN e1 cn
        int t = int(trunc(KE(0u) * kf_rand01()));
        float a = ((t & 1) == 0) ? (2.0 * KF_PI * float(t) + f.atan_yx) / KP(0u)
                                 : (2.0 * KF_PI * float(t) - f.atan_yx) / KP(0u);
        float r = w * kf_pow(f.sumsq, KE(1u));
        return r * vec2(cos(a), sin(a));
    }
    case 34u: {                                                              // blur
        float a = kf_rand01() * 2.0 * KF_PI;
        float r = w * kf_rand01();
        return r * vec2(cos(a), sin(a));
    }
    case 35u: {                                                              // gaussian_blur
        float a = kf_rand01() * 2.0 * KF_PI;
        float r = w * (kf_rand01() + kf_rand01() + kf_rand01() + kf_rand01() - 2.0);
        return r * vec2(cos(a), sin(a));
    }
    case 36u: {                                                              // radial_blur: angle; e0 spinvar e1 zoomvar
        float g = w * (kf_rand01() + kf_rand01() + kf_rand01() + kf_rand01() - 2.0);
        float a = f.atan_yx + KE(0u) * g;
        float rz = KE(1u) * g - 1.0;
        return vec2(f.sqr * cos(a) + rz * tx, f.sqr * sin(a) + rz * ty);
    }
    case 37u: {                                                              // pie: slices rotation thickness
        float sl = trunc(kf_rand01() * KP(0u) + 0.5);
        float a = KP(1u) + 2.0 * KF_PI * (sl + kf_rand01() * KP(2u)) / KP(0u);
        float r = w * kf_rand01();
        return r * vec2(cos(a), sin(a));
    }
    case 38u: {                                                              // ngon: sides power circle corners
        float rf = kf_pow(f.sumsq, KP(1u) / 2.0);
        float b = 2.0 * KF_PI / KP(0u);
        float phi = f.atan_yx - b * floor(f.atan_yx / b);
        if (phi > b / 2.0) phi -= b;
        float amp = KP(3u) * (1.0 / (cos(phi) + KF_EPS) - 1.0) + KP(2u);
        amp /= (rf + KF_EPS);
        return w * amp * vec2(tx, ty);
    }
    case 39u: {                                                              // curl: c1 c2
        float re = 1.0 + KP(0u) * tx + KP(1u) * (tx * tx - ty * ty);
        float im = KP(0u) * ty + 2.0 * KP(1u) * tx * ty;
        float r = w / (re * re + im * im);
        return r * vec2(tx * re + ty * im, ty * re - tx * im);
    }
    case 40u: {                                                              // rectangles: x y
        float x = KP(0u), y = KP(1u);
        return w * vec2(x == 0.0 ? tx : (2.0 * floor(tx / x) + 1.0) * x - tx,
                        y == 0.0 ? ty : (2.0 * floor(ty / y) + 1.0) * y - ty);
    }
    case 41u: {                                                              // arch
        float a = kf_rand01() * w * KF_PI;
        float s = sin(a), c = cos(a);
        return w * vec2(s, s * s / c);
    }
    case 42u: return w * vec2(sin(tx) / cos(ty), tan(ty));                   // tangent
    case 43u: return w * vec2(kf_rand01() - 0.5, kf_rand01() - 0.5);         // square
    case 44u: {                                                              // rays
        float a = w * kf_rand01() * KF_PI;
        float r = w / (f.sumsq + KF_EPS);
        float tr = w * tan(a) * r;
        return tr * vec2(cos(tx), sin(ty));
    }
    case 45u: {                                                              // blade
        float r = kf_rand01() * w * f.sqr;
        float s = sin(r), c = cos(r);
        return w * tx * vec2(c + s, c - s);
    }
    case 46u: {                                                              // secant2
        float cr = cos(w * f.sqr), icr = 1.0 / cr;
        return vec2(w * tx, cr < 0.0 ? w * (icr + 1.0) : w * (icr - 1.0));
    }
    case 47u: {                                                              // twintrian
        float r = kf_rand01() * w * f.sqr;
        float s = sin(r), c = cos(r);
        float diff = log(s * s) * 0.43429448190325182 + c;
        if (isnan(diff) || isinf(diff) || abs(diff) > 1e10) diff = -30.0;
        return w * tx * vec2(diff, diff - s * KF_PI);
    }
    case 48u: { float s = tx * tx - ty * ty; float r = w * sqrt(1.0 / (s * s + KF_EPS)); return r * vec2(tx, ty); } // cross
    case 49u: {                                                              // disc2: rot twist; e0 timespi e1 sinadd e2 cosadd
        float t = KE(0u) * (tx + ty);
        float r = w * f.atan_xy / KF_PI;
        return r * vec2(sin(t) + KE(2u), cos(t) + KE(1u));
    }
    case 50u: {                                                              // super_shape: rnd m n1 n2 n3 holes; e0 pm_4 e1 pneg1_n1
        float th = KE(0u) * f.atan_yx + KF_PI / 4.0;
        float t1 = kf_pow(abs(cos(th)), KP(3u));
        float t2 = kf_pow(abs(sin(th)), KP(4u));
        float rnd = KP(0u);
        float r = w * ((rnd * kf_rand01() + (1.0 - rnd) * f.sqr) - KP(5u)) * kf_pow(t1 + t2, KE(1u)) / f.sqr;
        return r * vec2(tx, ty);
    }
    case 51u: {                                                              // flower: petals holes
        float r = w * (kf_rand01() - KP(1u)) * cos(KP(0u) * f.atan_yx) / f.sqr;
        return r * vec2(tx, ty);
    }
    case 52u: {                                                              // conic: eccentricity holes
        float ct = tx / f.sqr;
        float r = w * (kf_rand01() - KP(1u)) * KP(0u) / (1.0 + KP(0u) * ct) / f.sqr;
        return r * vec2(tx, ty);
    }
    case 53u: {                                                              // parabola: height width
        float s = sin(f.sqr), c = cos(f.sqr);
        float a = kf_rand01();
        float b = kf_rand01();
        return vec2(KP(0u) * w * s * s * a, KP(1u) * w * c * b);
    }
    case 54u: {                                                              // bent2: x y
        float nx = tx < 0.0 ? tx * KP(0u) : tx, ny = ty < 0.0 ? ty * KP(1u) : ty;
        return w * vec2(nx, ny);
    }
    case 55u: {                                                              // bipolar: shift
        float t = f.sumsq + 1.0, x2 = 2.0 * tx;
        float ps = -KF_PI / 2.0 * KP(0u);
        float y = 0.5 * kf_atan2(2.0 * ty, f.sumsq - 1.0) + ps;
        if (y > KF_PI / 2.0) y = -KF_PI / 2.0 + kf_fmod(y + KF_PI / 2.0, KF_PI);
        else if (y < -KF_PI / 2.0) y = KF_PI / 2.0 - kf_fmod(KF_PI / 2.0 - y, KF_PI);
        return vec2(w * 0.25 * (2.0 / KF_PI) * kf_log((t + x2) / (t - x2)), w * (2.0 / KF_PI) * y);
    }
    case 56u: {                                                              // boarders
        float rx = roundEven(tx), ry = roundEven(ty);
        float ox = tx - rx, oy = ty - ry;
        if (kf_rand01() >= 0.75) return w * vec2(ox * 0.5 + rx, oy * 0.5 + ry);
        if (abs(ox) >= abs(oy)) {
            if (ox >= 0.0) return w * vec2(ox * 0.5 + rx + 0.25, oy * 0.5 + ry + 0.25 * oy / ox);
            return w * vec2(ox * 0.5 + rx - 0.25, oy * 0.5 + ry - 0.25 * oy / ox);
        }
        if (oy >= 0.0) return w * vec2(ox * 0.5 + rx + ox / oy * 0.25, oy * 0.5 + ry + 0.25);
        return w * vec2(ox * 0.5 + rx - ox / oy * 0.25, oy * 0.5 + ry - 0.25);
    }
    case 57u: {                                                              // butterfly
        float wx = w * 1.3029400317411197908970256609023;
        float y2 = ty * 2.0;
        float r = wx * sqrt(abs(ty * tx) / (KF_EPS + tx * tx + y2 * y2));
        return r * vec2(tx, y2);
    }
    case 58u: {                                                              // cell: size
        float size = KP(0u), inv = 1.0 / size;
        int x = int(floor(tx * inv)), y = int(floor(ty * inv));
        float dx = tx - float(x) * size, dy = ty - float(y) * size;
        if (y >= 0) {
            if (x >= 0) { y *= 2; x *= 2; } else { y *= 2; x = -(2 * x + 1); }
        } else {
            if (x >= 0) { y = -(2 * y + 1); x *= 2; } else { y = -(2 * y + 1); x = -(2 * x + 1); }
        }
        return vec2(w * (dx + float(x) * size), -w * (dy + float(y) * size));
    }
    case 59u: {                                                              // cpow: r i power
        float a = f.atan_yx, lnr = 0.5 * kf_log(f.sumsq);
        float va = 2.0 * KF_PI / KP(2u), vc = KP(0u) / KP(2u), vd = KP(1u) / KP(2u);
        float ang = vc * a + vd * lnr + va * floor(KP(2u) * kf_rand01());
        float m = w * exp(vc * lnr - vd * a);
        return m * vec2(cos(ang), sin(ang));
    }
    case 60u: {                                                              // curve: xamp yamp xlength ylength
        float xl = max(KP(2u) * KP(2u), 1e-20), yl = max(KP(3u) * KP(3u), 1e-20);
        return w * vec2(tx + KP(0u) * exp(-ty * ty / xl), ty + KP(1u) * exp(-tx * tx / yl));
    }
    case 61u: {                                                              // edisc
        float tmp = f.sumsq + 1.0, tmp2 = 2.0 * tx;
        float r1 = kf_sqrt(tmp + tmp2), r2 = kf_sqrt(tmp - tmp2);
        float xmax = (r1 + r2) * 0.5;
        float a1 = kf_log(xmax + kf_sqrt(xmax - 1.0));
        float a2 = -acos(clamp(tx / xmax, -1.0, 1.0));
        float ww = w / 11.57034632;
        float snv = sin(a1), csv = cos(a1);
        if (ty > 0.0) snv = -snv;
        return ww * vec2(cosh(a2) * csv, sinh(a2) * snv);
    }
    case 62u: {                                                              // elliptic
        float tmp = f.sumsq + 1.0, x2 = 2.0 * tx;
        float xmax = 0.5 * (kf_sqrt(tmp + x2) + kf_sqrt(tmp - x2));
        float a = tx / xmax, b = 1.0 - a * a, ssx = xmax - 1.0;
        float ww = w / (KF_PI / 2.0);
        b = b < 0.0 ? 0.0 : sqrt(b);
        ssx = ssx < 0.0 ? 0.0 : sqrt(ssx);
        float l = kf_log(xmax + ssx);
        return vec2(ww * kf_atan2(a, b), ty > 0.0 ? ww * l : -ww * l);
    }
    case 63u: {                                                              // escher: beta
        float a = f.atan_yx, lnr = 0.5 * kf_log(f.sumsq);
        float vc = 0.5 * (1.0 + cos(KP(0u))), vd = 0.5 * sin(KP(0u));
        float m = w * exp(vc * lnr - vd * a), n = vc * a + vd * lnr;
        return m * vec2(cos(n), sin(n));
    }
    case 64u: {                                                              // foci
        float ex = exp(tx) * 0.5, enx = 0.25 / ex;
        float t = w / (ex + enx - cos(ty));
        return t * vec2(ex - enx, sin(ty));
    }
    case 65u: {                                                              // lazysusan: spin space twist x y
        float lx = KP(3u), ly = KP(4u);
        float x = tx - lx, y = ty + ly;
        float r = sqrt(x * x + y * y);
        if (r < w) {
            float a = kf_atan2(y, x) + KP(0u) + KP(2u) * (w - r);
            r = w * r;
            return vec2(r * cos(a) + lx, r * sin(a) - ly);
        }
        r = w * (1.0 + KP(1u) / r);
        return vec2(r * x + lx, r * y - ly);
    }
    case 66u: {                                                              // loonie
        float w2 = w * w;
        if (f.sumsq < w2) { float r = w * kf_sqrt(w2 / f.sumsq - 1.0); return r * vec2(tx, ty); }
        return w * vec2(tx, ty);
    }
    case 68u: {                                                              // modulus: x y
        float mx = KP(0u), my = KP(1u), xr = 2.0 * mx, yr = 2.0 * my;
        float nx = tx > mx ? -mx + kf_fmod(tx + mx, xr) : (tx < -mx ? mx - kf_fmod(mx - tx, xr) : tx);
        float ny = ty > my ? -my + kf_fmod(ty + my, yr) : (ty < -my ? my - kf_fmod(my - ty, yr) : ty);
        return w * vec2(nx, ny);
    }
    case 69u: {                                                              // oscilloscope: separation frequency amplitude damping
        float tpf = 2.0 * KF_PI * KP(1u);
        float t = KP(3u) == 0.0 ? KP(2u) * cos(tpf * tx) + KP(0u)
                                : KP(2u) * exp(-abs(tx) * KP(3u)) * cos(tpf * tx) + KP(0u);
        return abs(ty) <= t ? vec2(w * tx, -w * ty) : w * vec2(tx, ty);
    }
    case 70u: { float p2v = w / KF_PI; return vec2(p2v * f.atan_xy, p2v / 2.0 * kf_log(f.sumsq)); } // polar2
    case 71u:                                                                // popcorn2: x y c
        return w * vec2(tx + KP(0u) * sin(tan(ty * KP(2u))), ty + KP(1u) * sin(tan(tx * KP(2u))));
    case 72u: { float r = 1.0 / (f.sqr * (f.sumsq + 1.0 / (w + KF_EPS))); return r * vec2(tx, ty); } // scry
    case 73u: {                                                              // separation: x xinside y yinside
        float sx2 = KP(0u) * KP(0u), sy2 = KP(2u) * KP(2u);
        float nx = tx > 0.0 ? w * (sqrt(tx * tx + sx2) - tx * KP(1u)) : -w * (sqrt(tx * tx + sx2) + tx * KP(1u));
        float ny = ty > 0.0 ? w * (sqrt(ty * ty + sy2) - ty * KP(3u)) : -w * (sqrt(ty * ty + sy2) + ty * KP(3u));
        return vec2(nx, ny);
    }
    case 74u:                                                                // split: xsize ysize
        return vec2(cos(ty * KP(1u) * KF_PI) >= 0.0 ? w * tx : -w * tx,
                    cos(tx * KP(0u) * KF_PI) >= 0.0 ? w * ty : -w * ty);
    case 75u:                                                                // splits: x y
        return w * vec2(tx >= 0.0 ? tx + KP(0u) : tx - KP(0u), ty >= 0.0 ? ty + KP(1u) : ty - KP(1u));
    case 76u: {                                                              // stripes: space warp
        float rx = floor(tx + 0.5), ox = tx - rx;
        return w * vec2(ox * (1.0 - KP(0u)) + rx, ty + ox * ox * KP(1u));
    }
    case 77u: {                                                              // wedge: angle hole count swirl
        float r = f.sqr;
        float a = f.atan_yx + KP(3u) * r;
        float c = floor((KP(2u) * a + KF_PI) * (1.0 / KF_PI) * 0.5);
        float cf = 1.0 - KP(0u) * KP(2u) * (1.0 / KF_PI) * 0.5;
        a = a * cf + c * KP(0u);
        r = w * (r + KP(1u));
        return r * vec2(cos(a), sin(a));
    }
    case 78u: {                                                              // wedge_julia: angle count power dist; e0 cf e1 rN e2 cn
        float r = w * kf_pow(f.sumsq, KE(2u));
        float t = trunc(KE(1u) * kf_rand01());
        float a = (f.atan_yx + 2.0 * KF_PI * t) / KP(2u);
        float c = floor((KP(1u) * a + KF_PI) * (1.0 / KF_PI) * 0.5);
        a = a * KE(0u) + c * KP(0u);
        return r * vec2(cos(a), sin(a));
    }
    case 79u: {                                                              // wedge_sph: angle count hole swirl
        float r = 1.0 / (f.sqr + KF_EPS);
        float a = f.atan_yx + KP(3u) * r;
        float c = floor((KP(1u) * a + KF_PI) * (1.0 / KF_PI) * 0.5);
        float cf = 1.0 - KP(0u) * KP(1u) * (1.0 / KF_PI) * 0.5;
        a = a * cf + c * KP(0u);
        r = w * (r + KP(2u));
        return r * vec2(cos(a), sin(a));
    }
    case 80u: {                                                              // whorl: inside outside
        float r = f.sqr;
        float a = r < w ? f.atan_yx + KP(0u) / (w - r) : f.atan_yx + KP(1u) / (w - r);
        return w * r * vec2(cos(a), sin(a));
    }
    case 81u:                                                                // waves2: freqx scalex freqy scaley
        return w * vec2(tx + KP(1u) * sin(ty * KP(0u)), ty + KP(3u) * sin(tx * KP(2u)));
    case 82u: { float ex = exp(tx); return w * ex * vec2(cos(ty), sin(ty)); } // exp
    case 83u: return w * vec2(0.5 * kf_log(f.sumsq), f.atan_yx);             // log
    case 84u: return w * vec2(sin(tx) * cosh(ty), cos(tx) * sinh(ty));       // sin
    case 85u: return vec2(w * cos(tx) * cosh(ty), -w * sin(tx) * sinh(ty));  // cos
    case 86u: { float d = 1.0 / (cos(2.0 * tx) + cosh(2.0 * ty)); return w * d * vec2(sin(2.0 * tx), sinh(2.0 * ty)); } // tan
    case 87u: {                                                              // sec
        float d = 2.0 / (cos(2.0 * tx) + cosh(2.0 * ty));
        return w * d * vec2(cos(tx) * cosh(ty), sin(tx) * sinh(ty));
    }
    case 88u: {                                                              // csc
        float d = 2.0 / (cosh(2.0 * ty) - cos(2.0 * tx));
        return vec2(w * d * sin(tx) * cosh(ty), -w * d * cos(tx) * sinh(ty));
    }
    case 89u: { float d = 1.0 / (cosh(2.0 * ty) - cos(2.0 * tx)); return w * d * vec2(sin(2.0 * tx), -sinh(2.0 * ty)); } // cot
    case 90u: return w * vec2(sinh(tx) * cos(ty), cosh(tx) * sin(ty));       // sinh
    case 91u: return w * vec2(cosh(tx) * cos(ty), sinh(tx) * sin(ty));       // cosh
    case 92u: { float d = 1.0 / (cos(2.0 * ty) + cosh(2.0 * tx)); return w * d * vec2(sinh(2.0 * tx), sin(2.0 * ty)); } // tanh
    case 93u: {                                                              // sech
        float d = 2.0 / (cos(2.0 * ty) + cosh(2.0 * tx));
        return vec2(w * d * cos(ty) * cosh(tx), -w * d * sin(ty) * sinh(tx));
    }
    case 94u: {                                                              // csch
        float d = 2.0 / (cosh(2.0 * tx) - cos(2.0 * ty));
        return vec2(w * d * sinh(tx) * cos(ty), -w * d * cosh(tx) * sin(ty));
    }
    case 95u: { float d = 1.0 / (cosh(2.0 * tx) - cos(2.0 * ty)); return w * d * vec2(sinh(2.0 * tx), sin(2.0 * ty)); } // coth
    case 96u: {                                                              // auger: freq weight sym scale
        float s = sin(KP(0u) * tx), t = sin(KP(0u) * ty);
        float dy = ty + KP(1u) * (KP(3u) * s / 2.0 + abs(ty) * s);
        float dx = tx + KP(1u) * (KP(3u) * t / 2.0 + abs(tx) * t);
        return w * vec2(tx + KP(2u) * (dx - tx), dy);
    }
    case 97u: {                                                              // flux: spread
        float xpw = tx + w, xmw = tx - w;
        float avgr = w * (2.0 + KP(0u)) * sqrt(sqrt(ty * ty + xpw * xpw) / sqrt(ty * ty + xmw * xmw));
        float avga = (kf_atan2(ty, xmw) - kf_atan2(ty, xpw)) * 0.5;
        return avgr * vec2(cos(avga), sin(avga));
    }
    case 98u: {                                                              // mobius: re_a im_a re_b im_b re_c im_c re_d im_d
        float reu = KP(0u) * tx - KP(1u) * ty + KP(2u);
        float imu = KP(0u) * ty + KP(1u) * tx + KP(3u);
        float rev = KP(4u) * tx - KP(5u) * ty + KP(6u);
        float imv = KP(4u) * ty + KP(5u) * tx + KP(7u);
        float rad = w / (rev * rev + imv * imv);
        return rad * vec2(reu * rev + imu * imv, imu * rev - reu * imv);
    }
    default: return vec2(0.0);
    }
}

#undef KP
#undef KE

#endif

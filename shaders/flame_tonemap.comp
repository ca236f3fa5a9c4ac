#version 450
// flame_tonemap.comp - last post pass of the GPU flame renderer (src/gpu/gpu_flame_post.c): per output
// pixel, the spatial filter over the density-estimated accumulator (fw x fw taps at
// offset + pixel * ss, weights normalised on the host by the CPU's own kiln__flame_spatial_kernel),
// then flam3's final colour exactly as kiln__flame_tonemap's final_rows does it: calc_alpha (gamma
// with the linear range), calc_newrgb (highlight power, through HSV when >= 0), vibrancy, background,
// clamp and truncation to 8 bits. Float arithmetic where the CPU uses double (see the bound in
// tests/unit/test_gpu_flame_post.c). The CPU's NaN cases (0 * inf in calc_newrgb when the largest
// channel is 0, pow of a negative channel after a filter with negative lobes) are tracked explicitly
// and give 0 as on the CPU, since a GPU need not propagate NaN.
// Output: one uint per pixel, R | G << 8 | B << 16 | 255 << 24 (RGBA8 in memory order).
#extension GL_GOOGLE_include_directive : require
#include "flame_post_abi.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

layout(push_constant) uniform Push {
    uint out_w, out_h, hist_w, ss;
    int fw, offset;
    uint flags, pad0;
    float g, linrange, linpow, vib;   // 1/gamma, gamma_threshold, pow(linrange, g) / linrange, vibrancy
    float highpow, pad1, pad2, pad3;
    vec4 bg;                          // background * 256
} pc;

layout(std430, binding = 0) readonly buffer Acc { vec4 acc[]; };
layout(std430, binding = 1) readonly buffer Filter { float filt[]; };
layout(std430, binding = 2) writeonly buffer Out { uint outp[]; };

vec3 rgb2hsv(vec3 c)
{
    float rd = c.r, gd = c.g, bd = c.b;
    float mx = rd >= gd ? (rd >= bd ? rd : bd) : (gd >= bd ? gd : bd);
    float mn = rd <= gd ? (rd <= bd ? rd : bd) : (gd <= bd ? gd : bd);
    float del = mx - mn, h = 0.0;
    float sat = mx != 0.0 ? del / mx : 0.0;
    if (sat != 0.0) {
        float rc = (mx - rd) / del, gc = (mx - gd) / del, bc = (mx - bd) / del;
        if (rd == mx)
            h = bc - gc;
        else if (gd == mx)
            h = 2.0 + rc - bc;
        else if (bd == mx)
            h = 4.0 + gc - rc;
        if (h < 0.0) h += 6.0;
    }
    return vec3(h, sat, mx);
}

vec3 hsv2rgb(vec3 hsv)
{
    float h = hsv.x, sat = hsv.y, v = hsv.z;
    h = h - 6.0 * trunc(h / 6.0); // fmod
    if (h < 0.0) h += 6.0;
    int j = int(floor(h));
    float f = h - float(j), p = v * (1.0 - sat), q = v * (1.0 - sat * f), t = v * (1.0 - sat * (1.0 - f));
    switch (j) {
    case 1: return vec3(q, v, p);
    case 2: return vec3(p, v, t);
    case 3: return vec3(p, q, v);
    case 4: return vec3(t, p, v);
    case 5: return vec3(v, p, q);
    default: return vec3(v, t, p);
    }
}

void main()
{
    uvec2 q = gl_GlobalInvocationID.xy;
    if (q.x >= pc.out_w || q.y >= pc.out_h) return;
    const int fw = pc.fw, aw = int(pc.hist_w);
    int x = pc.offset + int(q.x * pc.ss), y = pc.offset + int(q.y * pc.ss);
    vec4 t = vec4(0.0);
    for (int jj = 0; jj < fw; jj++) {
        uint base = uint((y + jj) * aw + x);
        for (int ii = 0; ii < fw; ii++) t += filt[ii + jj * fw] * acc[base + uint(ii)];
    }
    const float PW = 255.0;
    float alpha = 0.0, ls = 0.0, tmp = t.w / PW;
    if (t.w > 0.0) {
        // calc_alpha
        if (tmp < pc.linrange) {
            float frac = tmp / pc.linrange;
            alpha = (1.0 - frac) * tmp * pc.linpow + frac * pow(tmp, pc.g);
        } else {
            alpha = pow(tmp, pc.g);
        }
        ls = pc.vib * 256.0 * alpha / tmp;
        alpha = clamp(alpha, 0.0, 1.0);
    }
    // calc_newrgb
    vec3 c = t.rgb / PW, nrgb = vec3(0.0);
    bool nan = false;
    if (!(ls == 0.0 || (t.r == 0.0 && t.g == 0.0 && t.b == 0.0))) {
        float maxa = -1.0, maxc = 0.0;
        for (int k = 0; k < 3; k++) {
            float a = ls * c[k];
            if (a > maxa) {
                maxa = a;
                maxc = c[k];
            }
        }
        if (maxa > 255.0 && (pc.flags & KFP_TM_HIGHPOW) != 0u) {
            float newls = 255.0 / maxc, lsratio = pow(newls / ls, pc.highpow);
            vec3 hsv = rgb2hsv(newls * c / 255.0);
            hsv.y *= lsratio;
            nrgb = hsv2rgb(hsv) * 255.0;
        } else if (maxa <= 255.0) {
            nrgb = ls * c; // adj = 1: (1 - adj) * newls vanishes unless newls is infinite
            if (maxc == 0.0) nan = true;
        } else {
            float newls = 255.0 / maxc, adj = min(-pc.highpow, 1.0);
            nrgb = ((1.0 - adj) * newls + adj * ls) * c;
        }
    }
    uint o = 0xff000000u;
    for (int k = 0; k < 3; k++) {
        float a = nrgb[k];
        bool bad = nan;
        if ((pc.flags & KFP_TM_VIB) != 0u) {
            if (c[k] < 0.0)
                bad = true;
            else if (c[k] > 0.0)
                a += (1.0 - pc.vib) * 256.0 * pow(c[k], pc.g);
        }
        a += (1.0 - alpha) * pc.bg[k];
        if (bad || !(a > 0.0)) a = 0.0;
        if (a > 255.0) a = 255.0;
        o |= uint(a) << (8 * k);
    }
    outp[q.y * pc.out_w + q.x] = o;
}

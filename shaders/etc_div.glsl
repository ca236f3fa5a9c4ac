// etc_div.glsl - correctly rounded double division for the ETC2 GPU passes (enc_etc2_planar.comp,
// enc_etc1_q_a1.comp), which replay the CPU encoder's double arithmetic bit for bit. Vulkan only
// promises single precision for double operations; every device kiln has met divides correctly, but
// the quotient is checked anyway: the exact residual a - q b of the quotient and of its neighbour
// towards the true quotient (Dekker's product, no fma: Vulkan lets fma round twice) picks the nearest,
// ties to even. Needs: + - * correctly rounded, operands finite, no overflow / underflow (the callers'
// values are integers and small dyadic rationals). Include after "#version 450".

#include "d_step.glsl"

// Exact residual a - q b (representable when q is a faithful quotient), by Dekker's product.
double etc_d_resid(double a, double q, double b)
{
    precise double p = q * b;
    precise double t = 134217729.0LF * q;
    precise double qh = t - (t - q);
    precise double ql = q - qh;
    precise double u = 134217729.0LF * b;
    precise double bh = u - (u - b);
    precise double bl = b - bh;
    precise double e = (((qh * bh - p) + qh * bl) + ql * bh) + ql * bl;
    precise double r = (a - p) - e;
    return r;
}

double etc_div(double a, double b)
{
    precise double q = a / b;
    if (q == 0.0LF || isinf(q) || isnan(q)) return q;
    [[unroll]] for (int it = 0; it < 2; it++) {
        const double r = etc_d_resid(a, q, b);
        if (r == 0.0LF) break;
        // the true quotient lies above q when r / b > 0
        const bool above = (r > 0.0LF) == (b > 0.0LF);
        const double n = d_step(q, above == (q > 0.0LF));
        const double rn = etc_d_resid(a, n, b);
        const double ar = abs(r), an = abs(rn);
        if (an < ar || (an == ar && (unpackDouble2x32(n).x & 1u) == 0u)) q = n;
        else break;
    }
    return q;
}

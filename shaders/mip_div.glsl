/* mip_div.glsl - correctly rounded fp32 division for the mip shaders (mip_tile.comp, mip_filter.comp).
 * GLSL's '/' may be 2.5 ulp off (NVIDIA: reciprocal and multiply), which moved some quantised texels by
 * 1 LSB against the CPU reference on an H100 (kiln_encode_mips byte test, 2026-11-25). */

/* ---- exact fp32 helpers (Veltkamp split / Dekker product; every operation rounded once) ---- */

/* a - q * b exactly enough to compare candidates q (q close to a / b, so a - q*b is small). */
float residual(float a, float q, float b)
{
    precise float cq = 4097.0 * q;
    precise float qh = cq - (cq - q);
    precise float ql = q - qh;
    precise float cb = 4097.0 * b;
    precise float bh = cb - (cb - b);
    precise float bl = b - bh;
    precise float p = q * b;
    precise float e = ((qh * bh - p) + qh * bl + ql * bh) + ql * bl; /* q * b = p + e exactly */
    precise float r = (a - p) - e;
    return r;
}

/* a / b rounded to nearest (the quotient of two floats is never a tie): the candidate within 2 ulp of
 * the driver's quotient with the smallest remainder. */
float div_rn(float a, float b)
{
    float q = a / b;
    if (q == 0.0 || isinf(q) || isnan(q) || abs(q) < 1e-30 || abs(q) > 1e30 || abs(b) > 1e30) return q;
    uint qb = floatBitsToUint(q);
    float best = q, rb = abs(residual(a, q, b));
    for (int d = -2; d <= 2; d++) {
        if (d == 0) continue;
        float c = uintBitsToFloat(uint(int(qb) + d));
        float rc = abs(residual(a, c, b));
        if (rc < rb) {
            rb = rc;
            best = c;
        }
    }
    return best;
}

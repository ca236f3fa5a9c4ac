// enc_bc1_seed.glsl - the seed BC1 encoder for one block in one invocation (betsy's BC1 after
// stb_dxt): principal axis by power iteration, the extreme texels along it as endpoints, then
// least-squares refits of the endpoints from the indices while the error falls; exact indices under
// the D3D10 decoder. Punch-through blocks with transparent texels use the three-colour mode (index 3
// transparent). Needs enc_bc_common.glsl and enc_bc1.glsl.

struct SeedBlock {
    vec3 c[16];
    uint transp; // bit t: texel t is transparent (index 3)
};

// Palette of (c0, c1) in the decoder's mode; four: 4-colour interpolation.
void seed_palette(uint c0, uint c1, bool four, out vec3 pal[4])
{
    ivec3 a = expand565(c0), b = expand565(c1);
    pal[0] = vec3(a);
    pal[1] = vec3(b);
    if (four) { pal[2] = vec3((2 * a + b) / 3); pal[3] = vec3((a + 2 * b) / 3); }
    else { pal[2] = vec3((a + b) / 2); pal[3] = vec3(0.0); }
}

// Best indices and error for endpoints (c0, c1); the mode follows the decoder (c0 > c1 or FOUR_ANY:
// four colours).
float seed_select(SeedBlock blk, uint c0, uint c1, out uint idx)
{
    bool four = FOUR_ANY || c0 > c1;
    vec3 pal[4];
    seed_palette(c0, c1, four, pal);
    int ne = (four && blk.transp == 0u) ? 4 : 3;
    float err = 0.0;
    idx = 0u;
    for (uint t = 0u; t < 16u; t++) {
        if ((blk.transp >> t & 1u) != 0u) { idx |= 3u << (2u * t); continue; }
        float be = 1e30;
        uint bi = 0u;
        for (int e = 0; e < ne; e++) {
            vec3 d = blk.c[t] - pal[e];
            float dd = dot(d, d);
            if (dd < be) { be = dd; bi = uint(e); }
        }
        err += be;
        idx |= bi << (2u * t);
    }
    return err;
}

uint seed_q565(vec3 c)
{
    vec3 q = clamp(c, 0.0, 255.0);
    return (uint(q.x * (31.0 / 255.0) + 0.5) << 11u) | (uint(q.y * (63.0 / 255.0) + 0.5) << 5u) | uint(q.z * (31.0 / 255.0) + 0.5);
}

// Orders the endpoints for the mode the block needs (three-colour when a texel is transparent).
void seed_order(SeedBlock blk, inout uint c0, inout uint c1)
{
    bool three = blk.transp != 0u;
    if (FOUR_ANY) return;
    if ((three && c0 > c1) || (!three && c0 < c1)) { uint t = c0; c0 = c1; c1 = t; }
}

void seed_encode(SeedBlock blk, out uint oc0, out uint oc1, out uint oidx)
{
    bool three = blk.transp != 0u && !FOUR_ANY;
    vec3 mean = vec3(0.0);
    float n = 0.0;
    for (uint t = 0u; t < 16u; t++)
        if ((blk.transp >> t & 1u) == 0u) { mean += blk.c[t]; n += 1.0; }
    if (n == 0.0) { oc0 = 0u; oc1 = 0u; oidx = 0xffffffffu; return; }
    mean /= n;
    float c00 = 0.0, c01 = 0.0, c02 = 0.0, c11 = 0.0, c12 = 0.0, c22 = 0.0;
    for (uint t = 0u; t < 16u; t++) {
        if ((blk.transp >> t & 1u) != 0u) continue;
        vec3 d = blk.c[t] - mean;
        c00 += d.x * d.x; c01 += d.x * d.y; c02 += d.x * d.z;
        c11 += d.y * d.y; c12 += d.y * d.z; c22 += d.z * d.z;
    }
    vec3 axis = vec3(0.9, 1.0, 0.7);
    for (int it = 0; it < 4; it++) {
        vec3 w = vec3(c00 * axis.x + c01 * axis.y + c02 * axis.z, c01 * axis.x + c11 * axis.y + c12 * axis.z,
                      c02 * axis.x + c12 * axis.y + c22 * axis.z);
        float m = max(max(abs(w.x), abs(w.y)), abs(w.z));
        if (m < 1e-20) { axis = vec3(1.0); break; }
        axis = w / m;
    }
    float plo = 1e30, phi = -1e30;
    vec3 clo = mean, chi = mean;
    for (uint t = 0u; t < 16u; t++) {
        if ((blk.transp >> t & 1u) != 0u) continue;
        float p = dot(blk.c[t], axis);
        if (p < plo) { plo = p; clo = blk.c[t]; }
        if (p > phi) { phi = p; chi = blk.c[t]; }
    }
    uint c0 = seed_q565(chi), c1 = seed_q565(clo);
    seed_order(blk, c0, c1);
    uint idx;
    float err = seed_select(blk, c0, c1, idx);
    for (int round = 0; round < 2; round++) {
        // least squares on the current indices (ideal weights)
        bool four = !three && (FOUR_ANY || c0 > c1);
        float aa = 0.0, bb = 0.0, ab = 0.0;
        vec3 ax = vec3(0.0), bx = vec3(0.0);
        for (uint t = 0u; t < 16u; t++) {
            if ((blk.transp >> t & 1u) != 0u) continue;
            uint i = (idx >> (2u * t)) & 3u;
            float wa = i == 0u ? 1.0 : i == 1u ? 0.0 : four ? (i == 2u ? 2.0 / 3.0 : 1.0 / 3.0) : 0.5;
            float wb = 1.0 - wa;
            aa += wa * wa; bb += wb * wb; ab += wa * wb;
            ax += wa * blk.c[t]; bx += wb * blk.c[t];
        }
        float det = aa * bb - ab * ab;
        if (abs(det) < 1e-6) break;
        vec3 a = (ax * bb - bx * ab) / det, b2 = (bx * aa - ax * ab) / det;
        uint n0 = seed_q565(a), n1 = seed_q565(b2);
        seed_order(blk, n0, n1);
        if (n0 == c0 && n1 == c1) break;
        uint idx2;
        float err2 = seed_select(blk, n0, n1, idx2);
        if (!(err2 < err)) break;
        c0 = n0; c1 = n1; idx = idx2; err = err2;
    }
    oc0 = c0; oc1 = c1; oidx = idx;
}

SeedBlock seed_load(uint b)
{
    SeedBlock blk;
    blk.transp = 0u;
    uint thr = pc.flags & 255u;
    for (uint t = 0u; t < 16u; t++) {
        uint a8;
        load_texel(b, t, blk.c[t], a8);
        if (PUNCH && a8 < thr) blk.transp |= 1u << t;
    }
    return blk;
}

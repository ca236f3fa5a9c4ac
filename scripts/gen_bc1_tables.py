#!/usr/bin/env python3
"""Writes src/codec/bc1_enc_tables.h: for every 8-bit value v the 565 endpoint pair whose interpolated
colour is closest to v under kiln's BC1 decoder (bit replication, truncating integer interpolation),
and the cluster-fit partition tables (cf_tables below).

  k_bc1_match4_{5,6}[v] = {q0, q1, err}: best |(2*e0 + e1) / 3 - v|   (four-colour index 2)
  k_bc1_match3_{5,6}[v] = {q0, q1, err}: best |(e0 + e1) / 2 - v|     (three-colour index 2)
  k_bc1_near_{5,6}[v]   = {q, err}:      best |e - v|                 (an endpoint itself)

e = q << 3 | q >> 2 (5 bits) or q << 2 | q >> 4 (6 bits). Ties: the first pair in (q0, q1) order with
the smallest |q0 - q1| (keeps endpoints close, which helps neighbouring texels). tests/unit/
test_bc_encode.c recomputes these tables by brute force and compares.
Usage: python3 scripts/gen_bc1_tables.py > src/codec/bc1_enc_tables.h
"""

def expand(q, bits):
    return (q << 3 | q >> 2) if bits == 5 else (q << 2 | q >> 4)

def best_pair(v, bits, interp):
    n = 1 << bits
    best = None
    for q0 in range(n):
        e0 = expand(q0, bits)
        for q1 in range(n):
            e1 = expand(q1, bits)
            x = interp(e0, e1)
            key = (abs(x - v), abs(q0 - q1), q0, q1)
            if best is None or key < best:
                best = key
    return best[2], best[3], best[0]

def near(v, bits):
    n = 1 << bits
    return min(((abs(expand(q, bits) - v), q) for q in range(n)))

def emit(name, rows, width):
    out = ["static const uint8_t %s[256][%d] = {" % (name, width)]
    line = "   "
    for i, r in enumerate(rows):
        item = " {%s}," % ", ".join(str(x) for x in r)
        if len(line) + len(item) > 110:
            out.append(line)
            line = "   "
        line += item
    out.append(line)
    out.append("};")
    return "\n".join(out)

def f32(x):
    import struct
    return struct.unpack("<f", struct.pack("<f", x))[0]

def flit(x):
    if x == 0:
        return "0.0f"
    r = "%.9g" % f32(x)
    if "e" not in r and "." not in r:
        r += ".0"
    return r + "f"

def cf_tables():
    """Cluster-fit partition tables for 16 texels sorted along an axis. The 4-cluster search runs, for
    each i (texels [0, i) in cluster 0), over the pairs (j, k), i <= j <= k <= 16, in the order of the
    per-block array Q[(j, k)] = P[j] + P[k] (j ascending, then k); for a fixed i those pairs are the
    suffix of Q starting at qoff[i]. The 3-cluster search runs over every pair (i, j), i <= j, in Q's
    order (ax = P'[i] + P'[j] with P' the prefix sums / 2), as one flat run. Each group of 16 consecutive entries of one i is one vector:
    A/2, B/2, C (halves of the 2x2 normal matrix A = sum alpha^2, B = sum beta^2, C = sum alpha beta),
    p1..p4 (a = ax p1 - T p2, b = T p3 - ax p4, ax = sum of alpha x, T = sum of x) and pen (1e30 for
    padding and for rank-1 partitions, else 0). Half the error (up to a constant) of endpoints a, b is
    a (a A/2 + b C - ax) + b (b B/2 - bx)."""
    pairs = [(j, k) for j in range(17) for k in range(j, 17)]
    qoff = [pairs.index((i, i)) for i in range(17)]
    vec4, ijk4, start4 = [], [], []
    for i in range(17):
        start4.append(len(vec4))
        ent = [(i, j, k) for (j, k) in pairs if j >= i]
        while len(ent) % 16:
            ent.append(None)
        for v in range(0, len(ent), 16):
            cols = [[] for _ in range(8)]
            for e in ent[v:v + 16]:
                if e is None:
                    vals = [0, 0, 0, 0, 0, 0, 0, 1e30]
                    ijk4.append((0, 0, 0))
                else:
                    ii, j, k = e
                    c0, c1, c2, c3 = ii, j - ii, k - j, 16 - k
                    A = c0 + 4.0 / 9 * c1 + 1.0 / 9 * c2
                    B = c3 + 4.0 / 9 * c2 + 1.0 / 9 * c1
                    C = 2.0 / 9 * (c1 + c2)
                    det = A * B - C * C
                    if max(c0, c1, c2, c3) == 16 or det < 1e-6:
                        vals = [0, 0, 0, 0, 0, 0, 0, 1e30]
                    else:
                        vals = [A / 2, B / 2, C, (B + C) / det, C / det, A / det, (A + C) / det, 0]
                    ijk4.append(e)
                for c in range(8):
                    cols[c].append(vals[c])
            vec4.append(cols)
    start4.append(len(vec4))
    # 3 clusters: every pair (i, j), i <= j, in the same order as Q (one flat run, no per-i rows)
    vec3, ij3, start3 = [], [], [0]
    ent = list(pairs)
    while len(ent) % 16:
        ent.append(None)
    for v in range(0, len(ent), 16):
        cols = [[] for _ in range(8)]
        for e in ent[v:v + 16]:
            if e is None:
                vals = [0, 0, 0, 0, 0, 0, 0, 1e30]
                ij3.append((0, 0))
            else:
                ii, j = e
                c0, c1, c2 = ii, j - ii, 16 - j
                A = c0 + 0.25 * c1
                B = c2 + 0.25 * c1
                C = 0.25 * c1
                det = A * B - C * C
                if max(c0, c1, c2) == 16 or det < 1e-6:
                    vals = [0, 0, 0, 0, 0, 0, 0, 1e30]
                else:
                    vals = [A / 2, B / 2, C, (B + C) / det, C / det, A / det, (A + C) / det, 0]
                ij3.append(e)
            for c in range(8):
                cols[c].append(vals[c])
        vec3.append(cols)
    start3.append(len(vec3))
    start3 += [len(vec3)] * (18 - len(start3))
    out = []
    out.append("/* Cluster fit over 16 texels (see scripts/gen_bc1_tables.py, cf_tables). */")
    out.append("#define KILN_CF4_VECTORS %d" % len(vec4))
    out.append("#define KILN_CF3_VECTORS %d" % len(vec3))
    out.append("static const uint8_t k_cf4_qoff[17] = {%s};" % ", ".join(map(str, qoff)))
    out.append("static const uint16_t k_cf4_start[18] = {%s};" % ", ".join(map(str, start4)))
    out.append("static const uint16_t k_cf3_start[18] = {%s};" % ", ".join(map(str, start3)))
    for name, vec in (("k_cf4", vec4), ("k_cf3", vec3)):
        out.append("static const float %s[%d][8][16] __attribute__((aligned(64))) = {" % (name, len(vec)))
        for cols in vec:
            out.append("  {")
            for c in range(8):
                out.append("    {" + ", ".join(flit(x) for x in cols[c]) + "},")
            out.append("  },")
        out.append("};")
    out.append("static const uint8_t k_cf4_ijk[%d][3] = {" % len(ijk4))
    line = "   "
    for e in ijk4:
        item = " {%d, %d, %d}," % e
        if len(line) + len(item) > 110:
            out.append(line)
            line = "   "
        line += item
    out.append(line)
    out.append("};")
    out.append("static const uint8_t k_cf3_ij[%d][2] = {" % len(ij3))
    line = "   "
    for e in ij3:
        item = " {%d, %d}," % e
        if len(line) + len(item) > 110:
            out.append(line)
            line = "   "
        line += item
    out.append(line)
    out.append("};")
    return "\n".join(out)

def main():
    parts = ["/* bc1_enc_tables.h - generated by scripts/gen_bc1_tables.py; do not edit.",
             " * Optimal single-colour BC1 endpoints per channel value (see the script). */",
             "#ifndef KILN_BC1_ENC_TABLES_H", "#define KILN_BC1_ENC_TABLES_H", "#include <stdint.h>", ""]
    for bits in (5, 6):
        m4 = [best_pair(v, bits, lambda a, b: (2 * a + b) // 3) for v in range(256)]
        m3 = [best_pair(v, bits, lambda a, b: (a + b) // 2) for v in range(256)]
        nr = [(q, e) for (e, q) in (near(v, bits) for v in range(256))]
        parts.append(emit("k_bc1_match4_%d" % bits, m4, 3))
        parts.append(emit("k_bc1_match3_%d" % bits, m3, 3))
        parts.append(emit("k_bc1_near_%d" % bits, nr, 2))
        parts.append("")
    parts.append(cf_tables())
    parts.append("")
    parts.append("#endif")
    print("\n".join(parts))

main()

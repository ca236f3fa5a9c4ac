/* bc1_enc_cf.h - the cluster-fit search kernel of bc1_enc.c, included once per instruction set with
 *   CF_NAME     the function name
 *   CF_TARGET   its attributes (target("avx512f") ...)
 *   CF_MIN(a,b), CF_MAX(a,b)  lane minimum / maximum (a < b ? a : b, a > b ? a : b)
 *   CF_ROUND(x) round to nearest even (|x| < 2^22)
 *   CF_ANY(m)   1 when any lane of the comparison result m is set
 * defined. Everything is written with macros and 16-lane vector expressions inside the one function,
 * so no vector value crosses a function boundary between code compiled for different instruction
 * sets. Every variant performs the same IEEE operations in the same order in every lane, so all give
 * the same result.
 *
 * Searches all 4-cluster (four = 1) or 3-cluster partitions of 16 texels sorted along an axis (tables
 * in bc1_enc_tables.h); returns the k best entries in list (k = 1: the first smallest error in table
 * order; k > 1: the k smallest, earlier entries first on ties). The error of a lane is half the
 * squared error (up to a constant) in grid units of the least-squares endpoints clamped to the 5/6-bit
 * grid and rounded, with the bit replication taken as linear; wg[ch] = channel weight / grid scale^2.
 */
CF_TARGET static int CF_NAME(const cf_order *o, const float wg[3], int four, cf_pick *list, int k)
{
    const float (*tab)[8][16] = four ? k_cf4 : k_cf3;
    const uint16_t *start = four ? k_cf4_start : k_cf3_start;
    const vf zero = (vf){0}, top5 = (vf){0} + 31.0f, top6 = (vf){0} + 63.0f;
    const vf t0 = (vf){0} + o->gtot[0], t1 = (vf){0} + o->gtot[1], t2 = (vf){0} + o->gtot[2];
    int count = 0;
    float thr = INFINITY; /* k > 1: the k-th best so far */
    vf best = (vf){0} + INFINITY;
    vi bcode = {0};
    for (int i = 0; i < 17; i++) {
        const float *q0, *q1, *q2;
        float pi0, pi1, pi2;
        if (four) {
            q0 = &o->q3[0][k_cf4_qoff[i]];
            q1 = &o->q3[1][k_cf4_qoff[i]];
            q2 = &o->q3[2][k_cf4_qoff[i]];
            pi0 = o->p3[0][i];
            pi1 = o->p3[1][i];
            pi2 = o->p3[2][i];
        } else { /* one flat run over every pair (i, j): ax = q2 directly */
            if (i > 0) break;
            q0 = o->q2[0];
            q1 = o->q2[1];
            q2 = o->q2[2];
            pi0 = pi1 = pi2 = 0.0f;
        }
        for (int v = start[i], off = 0; v < start[i + 1]; v++, off += 16) {
            const float (*t)[16] = tab[v];
            vf Ah, Bh, C, p1, p2, p3, p4, pen, ax0, ax1, ax2;
            memcpy(&Ah, t[0], 64);
            memcpy(&Bh, t[1], 64);
            memcpy(&C, t[2], 64);
            memcpy(&p1, t[3], 64);
            memcpy(&p2, t[4], 64);
            memcpy(&p3, t[5], 64);
            memcpy(&p4, t[6], 64);
            memcpy(&pen, t[7], 64);
            memcpy(&ax0, q0 + off, 64);
            memcpy(&ax1, q1 + off, 64);
            memcpy(&ax2, q2 + off, 64);
            if (four) {
                ax0 += pi0;
                ax1 += pi1;
                ax2 += pi2;
            }
#define CF_CHANNEL(e, ax, tt, top)                                                                          \
    vf e;                                                                                                   \
    {                                                                                                       \
        vf a = CF_ROUND(CF_MIN(CF_MAX(ax * p1 - tt * p2, zero), top));                                      \
        vf b = CF_ROUND(CF_MIN(CF_MAX(tt * p3 - ax * p4, zero), top));                                      \
        e = a * ((a * Ah + b * C) - ax) + b * (b * Bh - (tt - ax));                                         \
    }
            CF_CHANNEL(e0, ax0, t0, top5)
            CF_CHANNEL(e1, ax1, t1, top6)
            CF_CHANNEL(e2, ax2, t2, top5)
#undef CF_CHANNEL
            vf err = pen + ((wg[0] * e0 + wg[1] * e1) + wg[2] * e2);
            if (k == 1) {
                vi m = err < best;
                best = (vf)(((vi)err & m) | ((vi)best & ~m));
                bcode = ((k_lane + v * 16) & m) | (bcode & ~m);
            } else if (CF_ANY(err < thr)) {
                float e[16];
                memcpy(e, &err, 64);
                for (int l = 0; l < 16; l++)
                    if (count < k || e[l] < list[count - 1].err) pick_insert(list, &count, k, e[l], v * 16 + l);
                if (count == k) thr = list[k - 1].err;
            }
        }
    }
    if (k == 1) {
        float bl[16];
        int32_t cl[16];
        memcpy(bl, &best, 64);
        memcpy(cl, &bcode, 64);
        float be = bl[0];
        int bc = cl[0];
        for (int l = 1; l < 16; l++)
            if (bl[l] < be || (bl[l] == be && cl[l] < bc)) be = bl[l], bc = cl[l];
        list[0].err = be;
        list[0].entry = bc;
        count = 1;
    }
    while (count > 0 && !(list[count - 1].err < 1e29f)) count--; /* padding / rank-1 rows */
    return count;
}

/* bc7.c - BC7 block decoder, all eight modes, written from the Khronos Data Format Specification
 * (BPTC, "BC7"): partitions and anchors from bc_tables.c, p-bits (per endpoint or shared per
 * subset) appended below the colour bits, expansion to 8 bits by replicating the top bits,
 * interpolation ((64 - w) * e0 + w * e1 + 32) >> 6, the mode 4 index selection bit, the mode 4/5
 * channel rotation, alpha 255 for modes without alpha. A block whose first byte is 0 (no mode bit)
 * is reserved: all channels of all texels are 0.
 */
#include "codec/bc_tables.h"
#include "codec/codec.h"

#include <string.h>

typedef struct bc7_mode {
    uint8_t ns;  /* subsets */
    uint8_t pb;  /* partition bits */
    uint8_t rb;  /* rotation bits */
    uint8_t isb; /* index selection bit */
    uint8_t cb;  /* colour bits per channel per endpoint */
    uint8_t ab;  /* alpha bits per endpoint */
    uint8_t epb; /* 1: one p-bit per endpoint */
    uint8_t spb; /* 1: one p-bit per subset */
    uint8_t ib;  /* primary index bits */
    uint8_t ib2; /* secondary index bits */
} bc7_mode;

/* Khronos table-bptcmodes. */
static const bc7_mode bc7_modes[8] = {
    {3, 4, 0, 0, 4, 0, 1, 0, 3, 0},
    {2, 6, 0, 0, 6, 0, 0, 1, 3, 0},
    {3, 6, 0, 0, 5, 0, 0, 0, 2, 0},
    {2, 6, 0, 0, 7, 0, 1, 0, 2, 0},
    {1, 0, 2, 1, 5, 6, 0, 0, 2, 3},
    {1, 0, 2, 0, 7, 8, 0, 0, 2, 2},
    {1, 0, 0, 0, 7, 7, 1, 0, 4, 0},
    {2, 6, 0, 0, 5, 5, 1, 0, 2, 0},
};

typedef struct bitreader {
    uint64_t q[2];
    unsigned pos;
} bitreader;

/* n <= 8 bits at the current position (never past bit 127 for valid layouts) */
static inline unsigned br_get(bitreader *br, unsigned n)
{
    unsigned v = kiln__bptc_bits(br->q, br->pos, n);
    br->pos += n;
    return v;
}

static inline uint8_t expand_bits(unsigned v, unsigned n)
{
    /* n in [5, 8]: replicate the top bits into the low ones */
    return (uint8_t)((v << (8 - n)) | (v >> (2 * n - 8)));
}

static inline uint8_t interp8(unsigned e0, unsigned e1, unsigned w)
{
    return (uint8_t)(((64 - w) * e0 + w * e1 + 32) >> 6);
}

void kiln__dec_bc7(const uint8_t *block, void *texels)
{
    uint8_t *out = texels;
    unsigned first = block[0];
    if (first == 0) {
        memset(out, 0, 64);
        return;
    }
    unsigned mode = 0;
    while (!(first & (1u << mode))) mode++;
    const bc7_mode *m = &bc7_modes[mode];

    bitreader br;
    kiln__bptc_load(block, br.q);
    br.pos = mode + 1;
    unsigned part = br_get(&br, m->pb);
    unsigned rot = br_get(&br, m->rb);
    unsigned isel = br_get(&br, m->isb);
    const unsigned nep = 2u * m->ns;

    unsigned ep[6][4]; /* endpoint e of subset s is ep[2*s + e] */
    for (unsigned c = 0; c < 3; c++)
        for (unsigned e = 0; e < nep; e++) ep[e][c] = br_get(&br, m->cb);
    for (unsigned e = 0; e < nep; e++) ep[e][3] = m->ab ? br_get(&br, m->ab) : 255u;

    unsigned cbits = m->cb, abits = m->ab;
    if (m->epb || m->spb) {
        unsigned pbit[6];
        if (m->epb) {
            for (unsigned e = 0; e < nep; e++) pbit[e] = br_get(&br, 1);
        } else {
            for (unsigned s = 0; s < m->ns; s++) pbit[2 * s] = pbit[2 * s + 1] = br_get(&br, 1);
        }
        for (unsigned e = 0; e < nep; e++) {
            for (unsigned c = 0; c < 3; c++) ep[e][c] = ep[e][c] << 1 | pbit[e];
            if (m->ab) ep[e][3] = ep[e][3] << 1 | pbit[e];
        }
        cbits++;
        if (m->ab) abits++;
    }
    for (unsigned e = 0; e < nep; e++) {
        for (unsigned c = 0; c < 3; c++) ep[e][c] = expand_bits(ep[e][c], cbits);
        if (m->ab) ep[e][3] = expand_bits(ep[e][3], abits);
    }

    /* primary indices, then the secondary ones (modes 4 and 5) */
    unsigned idx1[16], idx2[16];
    for (unsigned t = 0; t < 16; t++) idx1[t] = br_get(&br, m->ib - (unsigned)kiln__bptc_is_anchor(m->ns, part, t));
    if (m->ib2) {
        for (unsigned t = 0; t < 16; t++) idx2[t] = br_get(&br, m->ib2 - (t == 0 ? 1u : 0u));
    }

    const uint8_t *w1 = kiln__bptc_weights(m->ib);
    const uint8_t *w2 = m->ib2 ? kiln__bptc_weights(m->ib2) : w1;
    for (unsigned t = 0; t < 16; t++) {
        unsigned s = kiln__bptc_subset(m->ns, part, t);
        const unsigned *e0 = ep[2 * s], *e1 = ep[2 * s + 1];
        unsigned wc, wa;
        if (!m->ib2) {
            wc = wa = w1[idx1[t]];
        } else if (isel) {
            wc = w2[idx2[t]];
            wa = w1[idx1[t]];
        } else {
            wc = w1[idx1[t]];
            wa = w2[idx2[t]];
        }
        uint8_t px[4];
        for (unsigned c = 0; c < 3; c++) px[c] = interp8(e0[c], e1[c], wc);
        px[3] = interp8(e0[3], e1[3], wa);
        if (rot) {
            uint8_t tmp = px[3];
            px[3] = px[rot - 1];
            px[rot - 1] = tmp;
        }
        memcpy(out + t * 4, px, 4);
    }
}

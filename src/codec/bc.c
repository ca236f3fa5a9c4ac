/* bc.c - BC1..BC5 block decoders (S3TC / RGTC), written from the Khronos Data Format Specification
 * ("S3TC Compressed Texture Image Formats", "RGTC Compressed Texture Image Formats").
 *
 * Rounding model (the D3D10 reference decoder convention, which libsquish, stb_dxt's decoder side
 * and Pillow also follow for BC1-BC3 and unsigned BC4/BC5):
 *   - 565 endpoints are widened to 8 bits by bit replication: r8 = r5 << 3 | r5 >> 2,
 *     g8 = g6 << 2 | g6 >> 4.
 *   - The interpolated colours are computed per channel on those 8-bit values with integer
 *     division that truncates: c2 = (2*c0 + c1) / 3, c3 = (c0 + 2*c1) / 3 in four-colour mode
 *     (c0 > c1 as 16-bit numbers) and c2 = (c0 + c1) / 2 in three-colour mode (c0 <= c1), where
 *     c3 is black: alpha 0 for BC1 RGBA ("punch-through"), alpha 255 for BC1 RGB.
 *   - BC2 and BC3 colour blocks always use the four-colour interpolation, whatever the endpoint
 *     order. BC2 alpha is the explicit 4-bit value times 17.
 *   - BC3 alpha and BC4/BC5 channels: a0 > a1 selects eight values, a_i = ((8-i)*a0 + (i-1)*a1) / 7
 *     for i = 2..7; otherwise six values, a_i = ((6-i)*a0 + (i-1)*a1) / 5 for i = 2..5, a6 = min
 *     (0 or -127), a7 = max (255 or 127). Integer division truncates (toward zero for SNORM).
 *   - SNORM (BC4/BC5 signed): the mode is chosen by comparing the raw signed bytes a0 > a1; for
 *     interpolation and output an endpoint of -128 is read as -127; the float result is v / 127.0f,
 *     so every output is in [-1, 1].
 * Texels are written row-major (y * 4 + x); U8 outputs are RGBA, missing channels 0, alpha 255.
 */
#include "codec/codec.h"

static inline uint32_t rd16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static inline uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
/* The 48 index bits of a BC4 block (bytes 2..7, little-endian), three per texel. */
static inline uint64_t rd48(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 5; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static void unpack565(uint32_t c, uint8_t out[3])
{
    uint32_t r = (c >> 11) & 31u, g = (c >> 5) & 63u, b = c & 31u;
    out[0] = (uint8_t)(r << 3 | r >> 2);
    out[1] = (uint8_t)(g << 2 | g >> 4);
    out[2] = (uint8_t)(b << 3 | b >> 2);
}

void kiln__dec_bc1_colors(const uint8_t *block8, uint8_t out[64], int force_four_color, int punchthrough_alpha)
{
    uint32_t c0 = rd16(block8), c1 = rd16(block8 + 2), idx = rd32(block8 + 4);
    uint8_t pal[4][4];
    unpack565(c0, pal[0]);
    unpack565(c1, pal[1]);
    pal[0][3] = pal[1][3] = pal[2][3] = pal[3][3] = 255;
    if (force_four_color || c0 > c1) {
        for (int ch = 0; ch < 3; ch++) {
            unsigned a = pal[0][ch], b = pal[1][ch];
            pal[2][ch] = (uint8_t)((2 * a + b) / 3);
            pal[3][ch] = (uint8_t)((a + 2 * b) / 3);
        }
    } else {
        for (int ch = 0; ch < 3; ch++) {
            pal[2][ch] = (uint8_t)((pal[0][ch] + pal[1][ch]) / 2);
            pal[3][ch] = 0;
        }
        if (punchthrough_alpha) pal[3][3] = 0;
    }
    for (int t = 0; t < 16; t++) {
        const uint8_t *p = pal[(idx >> (2 * t)) & 3u];
        out[t * 4 + 0] = p[0];
        out[t * 4 + 1] = p[1];
        out[t * 4 + 2] = p[2];
        out[t * 4 + 3] = p[3];
    }
}

void kiln__dec_bc4_channel_u(const uint8_t *block8, uint8_t out[16])
{
    unsigned a0 = block8[0], a1 = block8[1];
    uint8_t pal[8];
    pal[0] = (uint8_t)a0;
    pal[1] = (uint8_t)a1;
    if (a0 > a1) {
        for (unsigned i = 2; i < 8; i++) pal[i] = (uint8_t)(((8 - i) * a0 + (i - 1) * a1) / 7);
    } else {
        for (unsigned i = 2; i < 6; i++) pal[i] = (uint8_t)(((6 - i) * a0 + (i - 1) * a1) / 5);
        pal[6] = 0;
        pal[7] = 255;
    }
    uint64_t bits = rd48(block8 + 2);
    for (int t = 0; t < 16; t++) out[t] = pal[(bits >> (3 * t)) & 7u];
}

void kiln__dec_bc4_channel_s(const uint8_t *block8, int8_t out[16])
{
    int r0 = (int8_t)block8[0], r1 = (int8_t)block8[1];
    int a0 = r0 < -127 ? -127 : r0, a1 = r1 < -127 ? -127 : r1;
    int pal[8];
    pal[0] = a0;
    pal[1] = a1;
    if (r0 > r1) {
        for (int i = 2; i < 8; i++) pal[i] = ((8 - i) * a0 + (i - 1) * a1) / 7;
    } else {
        for (int i = 2; i < 6; i++) pal[i] = ((6 - i) * a0 + (i - 1) * a1) / 5;
        pal[6] = -127;
        pal[7] = 127;
    }
    uint64_t bits = rd48(block8 + 2);
    for (int t = 0; t < 16; t++) out[t] = (int8_t)pal[(bits >> (3 * t)) & 7u];
}

void kiln__dec_bc1_rgb(const uint8_t *block, void *texels)
{
    kiln__dec_bc1_colors(block, texels, 0, 0);
}

void kiln__dec_bc1_rgba(const uint8_t *block, void *texels)
{
    kiln__dec_bc1_colors(block, texels, 0, 1);
}

void kiln__dec_bc2(const uint8_t *block, void *texels)
{
    uint8_t *out = texels;
    kiln__dec_bc1_colors(block + 8, out, 1, 0);
    for (int t = 0; t < 16; t++) {
        unsigned a = (block[t >> 1] >> ((t & 1) * 4)) & 15u;
        out[t * 4 + 3] = (uint8_t)(a * 17);
    }
}

void kiln__dec_bc3(const uint8_t *block, void *texels)
{
    uint8_t *out = texels;
    uint8_t a[16];
    kiln__dec_bc1_colors(block + 8, out, 1, 0);
    kiln__dec_bc4_channel_u(block, a);
    for (int t = 0; t < 16; t++) out[t * 4 + 3] = a[t];
}

void kiln__dec_bc4u(const uint8_t *block, void *texels)
{
    uint8_t *out = texels;
    uint8_t r[16];
    kiln__dec_bc4_channel_u(block, r);
    for (int t = 0; t < 16; t++) {
        out[t * 4 + 0] = r[t];
        out[t * 4 + 1] = 0;
        out[t * 4 + 2] = 0;
        out[t * 4 + 3] = 255;
    }
}

void kiln__dec_bc4s(const uint8_t *block, void *texels)
{
    float *out = texels;
    int8_t r[16];
    kiln__dec_bc4_channel_s(block, r);
    for (int t = 0; t < 16; t++) {
        out[t * 4 + 0] = (float)r[t] / 127.0f;
        out[t * 4 + 1] = 0.0f;
        out[t * 4 + 2] = 0.0f;
        out[t * 4 + 3] = 1.0f;
    }
}

void kiln__dec_bc5u(const uint8_t *block, void *texels)
{
    uint8_t *out = texels;
    uint8_t r[16], g[16];
    kiln__dec_bc4_channel_u(block, r);
    kiln__dec_bc4_channel_u(block + 8, g);
    for (int t = 0; t < 16; t++) {
        out[t * 4 + 0] = r[t];
        out[t * 4 + 1] = g[t];
        out[t * 4 + 2] = 0;
        out[t * 4 + 3] = 255;
    }
}

void kiln__dec_bc5s(const uint8_t *block, void *texels)
{
    float *out = texels;
    int8_t r[16], g[16];
    kiln__dec_bc4_channel_s(block, r);
    kiln__dec_bc4_channel_s(block + 8, g);
    for (int t = 0; t < 16; t++) {
        out[t * 4 + 0] = (float)r[t] / 127.0f;
        out[t * 4 + 1] = (float)g[t] / 127.0f;
        out[t * 4 + 2] = 0.0f;
        out[t * 4 + 3] = 1.0f;
    }
}

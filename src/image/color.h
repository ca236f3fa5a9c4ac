/* color.h - sRGB <-> linear conversions and unorm quantisation shared by image I/O, mipmaps and
 * encoders. Everything here is pure (no state) and gives the same bits on every platform:
 *
 *  - kiln__srgb8_to_linear_table[v] is the float nearest to the exact sRGB EOTF of v/255
 *    (c <= 0.04045 ? c/12.92 : ((c+0.055)/1.055)^2.4), computed offline in 80-digit arithmetic.
 *  - kiln__linear_to_srgb8(x) is round-half-up(255 * encode(x)) for the exact inverse of that EOTF,
 *    evaluated without pow(): x is compared with the 255 decision points decode((k+0.5)/255), each
 *    stored as the smallest float not below the exact value. So for every float x the result is the
 *    correctly rounded 8-bit code, and kiln__linear_to_srgb8(kiln__srgb8_to_linear_table[v]) == v.
 *  - The 16-bit and float functions work in double precision (pow), then round once.
 * Inputs below 0 or NaN give 0, inputs above 1 give the largest code. Alpha is never converted. */
#ifndef KILN_IMAGE_COLOR_H
#define KILN_IMAGE_COLOR_H

#include <stdint.h>

extern const float kiln__srgb8_to_linear_table[256];
/* kiln__srgb8_thresholds[k] = smallest float >= decode((k + 0.5) / 255), k = 0..254 */
extern const float kiln__srgb8_thresholds[255];

/* sRGB-encoded value in [0,1] -> linear (double precision internally). */
float kiln__srgb_to_linear(float c);
/* linear -> sRGB-encoded value in [0,1] (double precision internally). */
float kiln__linear_to_srgb(float l);

static inline float kiln__srgb8_to_linear(uint8_t v) { return kiln__srgb8_to_linear_table[v]; }
/* 16-bit sRGB code -> linear. */
float kiln__srgb16_to_linear(uint16_t v);

/* Correctly rounded re-encoding of a linear value into an 8-bit / 16-bit sRGB code. */
uint8_t kiln__linear_to_srgb8(float l);
uint16_t kiln__linear_to_srgb16(float l);

/* Unorm quantisation: clamp to [0,1] (NaN -> 0), then round half up: floor(v * max + 0.5). */
uint8_t kiln__float_to_unorm8(float v);
uint16_t kiln__float_to_unorm16(float v);
/* Exact rounding of a 16-bit unorm to 8 bits: round(v / 257). */
static inline uint8_t kiln__unorm16_to_unorm8(uint16_t v) { return (uint8_t)(((uint32_t)v * 255u + 32767u) / 65535u); }

#endif

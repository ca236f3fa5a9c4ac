/* codec.h - the block codecs' internal contract. One file per format family implements it:
 *   bc.c (BC1-BC5), bc6h.c, bc7.c, etc.c (ETC1, ETC2, EAC); encoders in *_enc.c files.
 * decode.c and encode.c drive them over whole images (threads, padding, clipping).
 *
 * Texel order everywhere: 16 texels row-major (index = y * 4 + x), each RGBA.
 * Decoders write the format's decoded type (kiln_format_info.decoded_type):
 *   U8  -> uint8_t[64]; U16 -> uint16_t[64]; F32 -> float[64].
 * Channels a format lacks are 0, alpha is the maximum (255, 65535 or 1.0f), as Vulkan samples them.
 */
#ifndef KILN_CODEC_H
#define KILN_CODEC_H

#include "core/internal.h"

typedef void (*kiln_block_decode_fn)(const uint8_t *block, void *texels);

/* The decoder of a block-compressed format, NULL for uncompressed ones. */
kiln_block_decode_fn kiln__block_decoder(kiln_format format);

/* bc.c - D3D10 reference decoding: BC1 colours 2/3 = (2a+b)/3, (a+2b)/3 and (a+b)/2 in integers,
 * truncating; 565 expanded by bit replication; BC4/BC5 ramps ((8-i)*a+(i-1)*b)/7 style, truncating;
 * BC4/BC5 SNORM: -128 is treated as -127, output value/127.0f. */
void kiln__dec_bc1_rgb(const uint8_t *block, void *texels);  /* U8; 3-colour index 3 -> black, alpha 255 */
void kiln__dec_bc1_rgba(const uint8_t *block, void *texels); /* U8; 3-colour index 3 -> transparent black */
void kiln__dec_bc2(const uint8_t *block, void *texels);      /* U8 */
void kiln__dec_bc3(const uint8_t *block, void *texels);      /* U8 */
void kiln__dec_bc4u(const uint8_t *block, void *texels);     /* U8 (r,0,0,255) */
void kiln__dec_bc4s(const uint8_t *block, void *texels);     /* F32 (r,0,0,1) */
void kiln__dec_bc5u(const uint8_t *block, void *texels);     /* U8 (r,g,0,255) */
void kiln__dec_bc5s(const uint8_t *block, void *texels);     /* F32 (r,g,0,1) */
/* Single-channel BC4 helpers shared with BC3/BC5 and the encoders: 16 values. */
void kiln__dec_bc4_channel_u(const uint8_t *block8, uint8_t out[16]);
void kiln__dec_bc4_channel_s(const uint8_t *block8, int8_t out[16]); /* values in [-127, 127] */
/* BC1 colour block to RGBA8 with explicit punch-through handling (shared by BC2/BC3 which always use
 * the 4-colour interpolation regardless of endpoint order). */
void kiln__dec_bc1_colors(const uint8_t *block8, uint8_t out[64], int force_four_color, int punchthrough_alpha);

/* bc6h.c - all 14 modes, exact half-float results per the Khronos spec (F32 out, alpha 1). */
void kiln__dec_bc6h_uf(const uint8_t *block, void *texels);
void kiln__dec_bc6h_sf(const uint8_t *block, void *texels);
/* The same, but the 16-bit half values (RGB, 3 per texel), for exact comparisons. */
void kiln__dec_bc6h_half(const uint8_t *block, int is_signed, uint16_t out[48]);

/* bc7.c - all 8 modes, every partition, rotation and index selection (U8). Mode 8+ (invalid) -> 0. */
void kiln__dec_bc7(const uint8_t *block, void *texels);

/* etc.c - ETC1/ETC2 RGB (individual, differential, T, H, planar), RGB A1 (punch-through), RGBA (EAC
 * alpha), EAC R11/RG11. Unsigned EAC: the 11-bit value v widened to 16 bits as (v << 5) | (v >> 6).
 * Signed EAC: value/1023.0f clamped to [-1, 1]. */
void kiln__dec_etc2_rgb(const uint8_t *block, void *texels);    /* U8; also decodes ETC1 */
void kiln__dec_etc2_rgb_a1(const uint8_t *block, void *texels); /* U8 */
void kiln__dec_etc2_rgba(const uint8_t *block, void *texels);   /* U8 (EAC alpha in the first 8 bytes) */
void kiln__dec_eac_r11u(const uint8_t *block, void *texels);    /* U16 */
void kiln__dec_eac_r11s(const uint8_t *block, void *texels);    /* F32 */
void kiln__dec_eac_rg11u(const uint8_t *block, void *texels);   /* U16 */
void kiln__dec_eac_rg11s(const uint8_t *block, void *texels);   /* F32 */
/* EAC single channel helpers: 11-bit results (unsigned 0..2047, signed -1023..1023). */
void kiln__dec_eac_channel_u11(const uint8_t *block8, uint16_t out[16]);
void kiln__dec_eac_channel_s11(const uint8_t *block8, int16_t out[16]);
/* The 8-bit EAC alpha (ETC2 RGBA8). */
void kiln__dec_eac_alpha8(const uint8_t *block8, uint8_t out[16]);

/* ---- encoders ----
 * The driver (encode.c) fills a kiln_block per 4x4 block (edge-replicated at image borders) and calls
 * the format's kiln_block_encode_fn. All three representations are filled for every source type. */
typedef struct kiln_block {
    uint8_t rgba8[64];    /* 8-bit values (sRGB-encoded when the source is) */
    uint16_t rgba16[64];  /* 16-bit unorm (u8 * 257 for 8-bit sources) */
    float f[64];          /* raw floats: HDR values, or unorm [0,1]; for SIGNED formats from a non-float
                             source the driver maps unorm x to 2x-1 */
} kiln_block;

typedef void (*kiln_block_encode_fn)(const kiln_block *src, uint8_t *out, const kiln_encode_params *params);

/* The encoder of a format, NULL when kiln cannot encode it (yet). */
kiln_block_encode_fn kiln__block_encoder(kiln_format format);

/* ---- block encoders (kiln_block_encode_fn), registered in kiln__block_encoder (encode.c) ----
 * Variants (sRGB, 1-bit alpha, SNORM) come from params->format; quality from params->quality. */
/* bc1_enc.c: BC1 RGB and RGBA (punch-through alpha below params->alpha_threshold), BC2 (BC1 colour in
 * 4-colour mode + 4-bit alpha), BC3 (BC1 colour in 4-colour mode + BC4 alpha). */
void kiln__enc_bc1(const kiln_block *src, uint8_t *out, const kiln_encode_params *params);
void kiln__enc_bc2(const kiln_block *src, uint8_t *out, const kiln_encode_params *params);
void kiln__enc_bc3(const kiln_block *src, uint8_t *out, const kiln_encode_params *params);
/* bc4_enc.c: BC4 (R) and BC5 (R, G), UNORM and SNORM; optimal at KILN_QUALITY_MAX. */
void kiln__enc_bc4(const kiln_block *src, uint8_t *out, const kiln_encode_params *params);
void kiln__enc_bc5(const kiln_block *src, uint8_t *out, const kiln_encode_params *params);
/* One BC4 channel of 16 values (0..255, or -127..127 when is_signed) into 8 bytes; shared by BC3/BC5.
 * Returns the squared error under kiln's decoder. */
uint32_t kiln__enc_bc4_channel(const int v[16], int is_signed, kiln_quality quality, uint8_t out[8]);
/* Optional batch encoders: n (1..16) consecutive blocks at once, writing n * block_bytes bytes; the
 * bytes are exactly those of n calls of the block encoder. The driver uses one when there is one for
 * the format and quality (NULL otherwise). bc1_enc.c: BC1 / BC1a / BC3 at fast quality. */
typedef void (*kiln_batch_encode_fn)(const kiln_block *src, int n, uint8_t *out, const kiln_encode_params *params);
kiln_batch_encode_fn kiln__batch_encoder(kiln_format format, kiln_quality quality);
/* etc_enc_batch.c: ETC1 / ETC2 RGB at fast quality (kiln__batch_encoder hands those formats to it). */
kiln_batch_encode_fn kiln__etc_batch_encoder(kiln_format format, kiln_quality quality);
/* etc1_enc.c, etc2_enc.c, eac_enc.c (ETC/EAC encoders; signedness from params->format). */
void kiln__enc_etc1(const kiln_block *src, uint8_t *out, const kiln_encode_params *params);
void kiln__enc_etc2_rgb(const kiln_block *src, uint8_t *out, const kiln_encode_params *params);
void kiln__enc_etc2_rgb_a1(const kiln_block *src, uint8_t *out, const kiln_encode_params *params);
void kiln__enc_etc2_rgba(const kiln_block *src, uint8_t *out, const kiln_encode_params *params);
void kiln__enc_eac_r11(const kiln_block *src, uint8_t *out, const kiln_encode_params *params);
void kiln__enc_eac_rg11(const kiln_block *src, uint8_t *out, const kiln_encode_params *params);

/* bc6h_enc.c: BC6H UF16 / SF16 (from params->format), all 14 modes and 32 partitions; qualities and
 * input clamping (NaN -> 0, +-Inf -> +-65504, UF16 negatives -> 0) are described in the file. */
void kiln__enc_bc6h(const kiln_block *src, uint8_t *out, const kiln_encode_params *params);
/* One block of 16 RGBA floats (alpha ignored); quality 0..3; only_mode >= 0 restricts the search to
 * that mode (Khronos mode number: 0, 1, 2, 6, ..., 30, 3, 7, 11, 15). Returns the encoder's error. */
float kiln__enc_bc6h_rgb(const float rgba[64], int is_signed, int quality, int only_mode, uint8_t out[16]);
/* Packs decoded endpoints ep[subset * 2 + e][RGB] (after the inverse delta transform, before
 * unquantization; E1..E3 are delta-coded by the packer in transformed modes) and indices into a block
 * of `mode`. Returns 0 (and writes nothing) when the mode, partition, an endpoint or delta range, or
 * an anchor index (top bit set) does not fit. */
int kiln__bc6h_pack(int mode, int partition, const int32_t ep[4][3], const uint8_t idx[16], int is_signed,
                    uint8_t out[16]);
/* A CPU model of the seed design (GPURealTimeBC6H, as betsy ships it), UF16: quality 0 = its "fast"
 * (mode 3 only), 1 = its "quality" (+ best bounding-box partition in modes 1 and 14). */
void kiln__enc_bc6h_seed(const float rgba[64], int quality, uint8_t out[16]);

#endif

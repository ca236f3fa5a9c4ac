/* decode.c - whole-image decoding on the CPU (and dispatch to the GPU decoders when the context's
 * backend is Vulkan). Block rows run in parallel; every block writes only its own texels. */
#include "codec/codec.h"
#include "gpu/gpu.h"

#include <stdio.h>
#include <string.h>

kiln_block_decode_fn kiln__block_decoder(kiln_format format)
{
    switch (format) {
    case KILN_FORMAT_BC1_RGB_UNORM:
    case KILN_FORMAT_BC1_RGB_SRGB: return kiln__dec_bc1_rgb;
    case KILN_FORMAT_BC1_RGBA_UNORM:
    case KILN_FORMAT_BC1_RGBA_SRGB: return kiln__dec_bc1_rgba;
    case KILN_FORMAT_BC2_UNORM:
    case KILN_FORMAT_BC2_SRGB: return kiln__dec_bc2;
    case KILN_FORMAT_BC3_UNORM:
    case KILN_FORMAT_BC3_SRGB: return kiln__dec_bc3;
    case KILN_FORMAT_BC4_UNORM: return kiln__dec_bc4u;
    case KILN_FORMAT_BC4_SNORM: return kiln__dec_bc4s;
    case KILN_FORMAT_BC5_UNORM: return kiln__dec_bc5u;
    case KILN_FORMAT_BC5_SNORM: return kiln__dec_bc5s;
    case KILN_FORMAT_BC6H_UFLOAT: return kiln__dec_bc6h_uf;
    case KILN_FORMAT_BC6H_SFLOAT: return kiln__dec_bc6h_sf;
    case KILN_FORMAT_BC7_UNORM:
    case KILN_FORMAT_BC7_SRGB: return kiln__dec_bc7;
    case KILN_FORMAT_ETC1_UNORM:
    case KILN_FORMAT_ETC1_SRGB:
    case KILN_FORMAT_ETC2_RGB8_UNORM:
    case KILN_FORMAT_ETC2_RGB8_SRGB: return kiln__dec_etc2_rgb;
    case KILN_FORMAT_ETC2_RGB8A1_UNORM:
    case KILN_FORMAT_ETC2_RGB8A1_SRGB: return kiln__dec_etc2_rgb_a1;
    case KILN_FORMAT_ETC2_RGBA8_UNORM:
    case KILN_FORMAT_ETC2_RGBA8_SRGB: return kiln__dec_etc2_rgba;
    case KILN_FORMAT_EAC_R11_UNORM: return kiln__dec_eac_r11u;
    case KILN_FORMAT_EAC_R11_SNORM: return kiln__dec_eac_r11s;
    case KILN_FORMAT_EAC_RG11_UNORM: return kiln__dec_eac_rg11u;
    case KILN_FORMAT_EAC_RG11_SNORM: return kiln__dec_eac_rg11s;
    default: return NULL;
    }
}

typedef struct decode_job {
    const kiln_format_info *fi;
    kiln_block_decode_fn fn;
    const uint8_t *src;
    size_t src_size;
    uint32_t bx; /* blocks per row */
    kiln_image *out;
} decode_job;

static void decode_rows(void *user, size_t begin, size_t end, uint32_t worker)
{
    decode_job *j = user;
    const size_t esz = (size_t)j->fi->decoded_type; /* bytes per channel */
    uint8_t texels[64 * 4];
    uint8_t *dst = j->out->pixels;
    const uint32_t w = j->out->width, h = j->out->height;
    for (size_t by = begin; by < end; by++) {
        for (uint32_t bx = 0; bx < j->bx; bx++) {
            const uint8_t *blk = j->src + (by * j->bx + bx) * j->fi->block_bytes;
            j->fn(blk, texels);
            for (uint32_t y = 0; y < 4; y++) {
                size_t py = by * 4 + y;
                if (py >= h) break;
                uint32_t px = bx * 4;
                uint32_t n = w - px < 4 ? w - px : 4;
                memcpy(dst + ((py * w + px) * 4) * esz, texels + (y * 4) * 4 * esz, n * 4 * esz);
            }
        }
    }
}

static kiln_status decode_uncompressed(kiln_context *ctx, const kiln_format_info *fi, const uint8_t *src, kiln_image *out)
{
    size_t n = (size_t)out->width * out->height;
    if (fi->decoded_type == KILN_PIXEL_U8) {
        uint8_t *d = out->pixels;
        for (size_t i = 0; i < n; i++) {
            uint8_t px[4] = {0, 0, 0, 255};
            memcpy(px, src + i * fi->block_bytes, fi->block_bytes);
            memcpy(d + i * 4, px, 4);
        }
    } else {
        float *d = out->pixels;
        for (size_t i = 0; i < n * 4; i++) {
            if (fi->format == KILN_FORMAT_RGBA16F) {
                uint16_t hv;
                memcpy(&hv, src + i * 2, 2);
                d[i] = kiln__half_to_float(hv);
            } else {
                memcpy(&d[i], src + i * 4, 4);
            }
        }
    }
    return KILN_OK;
}

kiln_status kiln_decode(kiln_context *ctx, const kiln_texture *tex, uint32_t level, uint32_t layer, uint32_t face,
                        kiln_image *out)
{
    kiln__clear_error(ctx);
    if (!ctx || !tex || !out) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_decode: NULL argument");
    memset(out, 0, sizeof *out);
    const kiln_format_info *fi = kiln_format_get_info(tex->format);
    if (!fi) return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "texture has an unknown format");
    if (level >= tex->levels)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "level %u does not exist (the texture has %u)", level, tex->levels);
    if (layer >= tex->layers || face >= tex->faces)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "layer %u / face %u does not exist", layer, face);
    size_t size = 0;
    const uint8_t *src = kiln_texture_image(tex, level, layer, face, &size);
    if (!src) return kiln__fail(ctx, KILN_ERR_CORRUPT, "level %u is missing or truncated", level);
    uint32_t w = kiln_level_dim(tex->width, level), h = kiln_level_dim(tex->height, level);

    if (fi->flags & KILN_FF_COMPRESSED) {
        kiln_status gst = KILN_OK;
        if (kiln__gpu_wanted(ctx, &gst)) {
            kiln_status st = kiln__gpu_decode(ctx, tex, level, layer, face, out);
            /* AUTO: a device that cannot run this kernel (e.g. too little shared memory) falls back to
             * the CPU, which gives the same bytes. An explicit VULKAN backend reports the failure. */
            if (st != KILN_ERR_UNSUPPORTED || ctx->params.backend == KILN_BACKEND_VULKAN) return st;
            if (ctx->params.verbose) fprintf(stderr, "kiln: %s; decoding on the CPU\n", kiln_last_error(ctx));
            kiln__clear_error(ctx);
            memset(out, 0, sizeof *out);
        }
        if (gst != KILN_OK) return gst;
    }
    ctx->last_gpu_ms = -1.0;
    KILN_TRY(kiln_image_alloc(ctx, out, w, h, fi->decoded_type));
    out->channels = fi->channels;
    out->srgb = (fi->flags & KILN_FF_SRGB) != 0;
    out->hdr = fi->format == KILN_FORMAT_BC6H_UFLOAT || fi->format == KILN_FORMAT_BC6H_SFLOAT ||
               fi->format == KILN_FORMAT_RGBA16F || fi->format == KILN_FORMAT_RGBA32F;
    if (!(fi->flags & KILN_FF_COMPRESSED)) return decode_uncompressed(ctx, fi, src, out);

    decode_job j = {fi, kiln__block_decoder(fi->format), src, size, (w + 3) / 4, out};
    if (!j.fn) {
        kiln_image_free(out);
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "no decoder for %s", fi->name);
    }
    kiln_status st = kiln__parallel_for(ctx, (h + 3) / 4, 4, decode_rows, &j);
    if (st != KILN_OK) kiln_image_free(out);
    return st;
}

/* image_io.h - encoders behind kiln_image_save, exposed inside the library (and to the tests) so that
 * files can be produced in memory with options the public API does not offer (EXR compression, tiles). */
#ifndef KILN_IMAGE_IO_H
#define KILN_IMAGE_IO_H

#include "core/internal.h"

typedef struct kiln__exr_options {
    int compression;     /* an exr_compression_t value (EXR_COMPRESSION_ZIP is what kiln_image_save uses) */
    int full_float;      /* 1: FLOAT channels, 0: HALF */
    uint32_t tile_w;     /* 0: scanline part; else a one-level tiled part with tile_w x tile_h tiles */
    uint32_t tile_h;
} kiln__exr_options;

/* Serialises img as OpenEXR into a malloc'ed buffer. U8/U16 become F32 in [0,1]; colour channels of an
 * image tagged srgb = 1 are linearised (EXR holds linear light). channels 1 -> Y, 2 -> Y+A, 3 -> RGB,
 * 4 -> RGBA. `name` is used in error messages. */
kiln_status kiln__exr_encode(kiln_context *ctx, const kiln_image *img, const kiln__exr_options *opt, const char *name,
                             uint8_t **out, size_t *out_size);

/* Serialises img as PNG (8-bit for U8, else 16-bit) into a malloc'ed buffer. */
kiln_status kiln__png_encode(kiln_context *ctx, const kiln_image *img, const char *name, uint8_t **out,
                             size_t *out_size);

#endif

/* PLACEHOLDER: replaced by the owner of this file. */
#include "core/internal.h"
kiln_status kiln_image_load(kiln_context *ctx, const char *path, kiln_image *out) { return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "not implemented"); }
kiln_status kiln_image_load_memory(kiln_context *ctx, const void *d, size_t n, kiln_image *out) { return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "not implemented"); }
kiln_status kiln_image_save(kiln_context *ctx, const kiln_image *img, const char *path, uint32_t flags) { return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "not implemented"); }
kiln_status kiln_image_convert(kiln_context *ctx, const kiln_image *s, kiln_pixel_type t, kiln_image *d) { return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "not implemented"); }

/* PLACEHOLDER: replaced by the owner of this file. */
#include "codec/codec.h"
#include <string.h>
kiln_block_encode_fn kiln__block_encoder(kiln_format format) { return NULL; }
void kiln_encode_params_init(kiln_encode_params *p, kiln_format f, kiln_quality q) { memset(p, 0, sizeof *p); p->format = f; p->quality = q; p->alpha_threshold = 128; }
kiln_status kiln_encode_image(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *p, uint8_t *dst, size_t n) { return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "not implemented"); }
kiln_status kiln_encode(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *p, kiln_texture *out) { return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "not implemented"); }

/* PLACEHOLDER: replaced by the owner of this file. */
#include "core/internal.h"
#include <string.h>
void kiln_save_params_init(kiln_save_params *p) { memset(p, 0, sizeof *p); }
kiln_status kiln_texture_load(kiln_context *ctx, const char *path, kiln_texture *out) { return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "not implemented"); }
kiln_status kiln_texture_load_memory(kiln_context *ctx, const void *d, size_t n, kiln_texture *out) { return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "not implemented"); }
kiln_status kiln_texture_save(kiln_context *ctx, const kiln_texture *t, const char *path, const kiln_save_params *p) { return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "not implemented"); }
kiln_status kiln_texture_save_memory(kiln_context *ctx, const kiln_texture *t, kiln_container c, const kiln_save_params *p, uint8_t **o, size_t *n) { return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "not implemented"); }
kiln_status kiln_validate_memory(kiln_context *ctx, const void *d, size_t n, kiln_report_fn r, void *u) { return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "not implemented"); }
kiln_status kiln_describe_memory(kiln_context *ctx, const void *d, size_t n, char **o) { return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "not implemented"); }

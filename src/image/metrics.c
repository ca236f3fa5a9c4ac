/* PLACEHOLDER: replaced by the owner of this file. */
#include "core/internal.h"
kiln_status kiln_compare(kiln_context *ctx, const kiln_image *a, const kiln_image *b, kiln_metrics *out) { return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "not implemented"); }

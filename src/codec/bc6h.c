/* PLACEHOLDER: replaced by the owner of this file. */
#include "codec/codec.h"
#include <string.h>
void kiln__dec_bc6h_uf(const uint8_t *b, void *t) { memset(t, 0, 256); }
void kiln__dec_bc6h_sf(const uint8_t *b, void *t) { memset(t, 0, 256); }

/* PLACEHOLDER: replaced by the owner of this file. */
#include "codec/codec.h"
#include <string.h>
void kiln__dec_bc7(const uint8_t *b, void *t) { memset(t, 0, 64); }

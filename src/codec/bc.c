/* PLACEHOLDER: replaced by the owner of this file. */
#include "codec/codec.h"
#include <string.h>
void kiln__dec_bc1_rgb(const uint8_t *b, void *t) { memset(t, 0, 64); }
void kiln__dec_bc1_rgba(const uint8_t *b, void *t) { memset(t, 0, 64); }
void kiln__dec_bc2(const uint8_t *b, void *t) { memset(t, 0, 64); }
void kiln__dec_bc3(const uint8_t *b, void *t) { memset(t, 0, 64); }
void kiln__dec_bc4u(const uint8_t *b, void *t) { memset(t, 0, 64); }
void kiln__dec_bc4s(const uint8_t *b, void *t) { memset(t, 0, 256); }
void kiln__dec_bc5u(const uint8_t *b, void *t) { memset(t, 0, 64); }
void kiln__dec_bc5s(const uint8_t *b, void *t) { memset(t, 0, 256); }

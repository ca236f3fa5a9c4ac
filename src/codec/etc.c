/* PLACEHOLDER: replaced by the owner of this file. */
#include "codec/codec.h"
#include <string.h>
void kiln__dec_etc2_rgb(const uint8_t *b, void *t) { memset(t, 0, 64); }
void kiln__dec_etc2_rgb_a1(const uint8_t *b, void *t) { memset(t, 0, 64); }
void kiln__dec_etc2_rgba(const uint8_t *b, void *t) { memset(t, 0, 64); }
void kiln__dec_eac_r11u(const uint8_t *b, void *t) { memset(t, 0, 128); }
void kiln__dec_eac_r11s(const uint8_t *b, void *t) { memset(t, 0, 256); }
void kiln__dec_eac_rg11u(const uint8_t *b, void *t) { memset(t, 0, 128); }
void kiln__dec_eac_rg11s(const uint8_t *b, void *t) { memset(t, 0, 256); }

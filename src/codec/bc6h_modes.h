/* bc6h_modes.h - the BC6H mode table (Khronos Data Format Specification, table-bptcblockformat),
 * shared by the decoder (bc6h.c) and the encoder (bc6h_enc.c). */
#ifndef KILN_BC6H_MODES_H
#define KILN_BC6H_MODES_H

#include <stdint.h>

/* endpoint fields of a mode's bit layout; PB = partition bits, MB = mode bits, END ends a list */
enum { R0, G0, B0, R1, G1, B1, R2, G2, B2, R3, G3, B3, PB, MB, END };

/* A run of bits v^a..b (see the spec's notation): a >= b stores bits b..a in increasing order;
 * a < b is reversed and stores bits b, b-1, ..., a. */
typedef struct span {
    uint8_t field, a, b;
} span;

typedef struct bc6h_mode {
    uint8_t value;       /* mode number as in the spec */
    uint8_t transformed; /* delta-coded endpoints */
    uint8_t pb;          /* partition bits: 5 (two subsets) or 0 */
    uint8_t epb;         /* endpoint bits */
    uint8_t delta[3];    /* delta bits per channel (transformed modes) */
    span spans[28];
} bc6h_mode;

/* in table order (bc6h.c) */
extern const bc6h_mode kiln__bc6h_modes[14];

#endif

/* etc_tables.c - ETC1/ETC2/EAC constant tables (see etc_tables.h for the spec references). */
#include "codec/etc_tables.h"

/* Table-etc2-modifiers lists each codeword's set as -b, -a, +a, +b; reordered here by pixel index value
 * (Table-etc2-pixelindices: 00 -> +a, 01 -> +b, 10 -> -a, 11 -> -b). */
const int16_t kiln__etc_modifiers[8][4] = {
    {2, 8, -2, -8},     {5, 17, -5, -17},   {9, 29, -9, -29},     {13, 42, -13, -42},
    {18, 60, -18, -60}, {24, 80, -24, -80}, {33, 106, -33, -106}, {47, 183, -47, -183},
};

/* Table-etc2punch-modifiers-b (opaque bit unset): -b, 0, 0, +b, by pixel index value as above. */
const int16_t kiln__etc_modifiers_nonopaque[8][4] = {
    {0, 8, 0, -8},     {0, 17, 0, -17},   {0, 29, 0, -29},   {0, 42, 0, -42},
    {0, 60, 0, -60},   {0, 80, 0, -80},   {0, 106, 0, -106}, {0, 183, 0, -183},
};

/* Table-etc2-distancetable. */
const uint8_t kiln__etc_distances[8] = {3, 6, 11, 16, 23, 32, 41, 64};

/* Table-etc2eac-modifiers (by table index, then 3-bit pixel index). */
const int8_t kiln__eac_modifiers[16][8] = {
    {-3, -6, -9, -15, 2, 5, 8, 14}, {-3, -7, -10, -13, 2, 6, 9, 12}, {-2, -5, -8, -13, 1, 4, 7, 12},
    {-2, -4, -6, -13, 1, 3, 5, 12}, {-3, -6, -8, -12, 2, 5, 7, 11},  {-3, -7, -9, -11, 2, 6, 8, 10},
    {-4, -7, -8, -11, 3, 6, 7, 10}, {-3, -5, -8, -11, 2, 4, 7, 10},  {-2, -6, -8, -10, 1, 5, 7, 9},
    {-2, -5, -8, -10, 1, 4, 7, 9},  {-2, -4, -8, -10, 1, 3, 7, 9},   {-2, -5, -7, -10, 1, 4, 6, 9},
    {-3, -4, -7, -10, 2, 3, 6, 9},  {-1, -2, -3, -10, 0, 1, 2, 9},   {-4, -6, -8, -9, 3, 5, 7, 8},
    {-3, -5, -7, -9, 2, 4, 6, 8},
};

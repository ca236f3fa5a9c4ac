// etc_tables.glsl - tables of ETC1/ETC2/EAC from the Khronos Data Format Specification.
// Valid GLSL and, with KILN_TABLES_C defined, C: src/gpu/gpu_decode.c uploads them into the table
// buffer the decoders read (table_lookup.glsl; offsets in gpu_abi.h).

// ETC1 intensity modifiers: per table, the values of pixel indices 0..3 (msb << 1 | lsb).
#ifdef KILN_TABLES_C
static const int32_t ETC_MOD[32] = {
#else
const int ETC_MOD[32] = int[32](
#endif
    2, 8, -2, -8,
    5, 17, -5, -17,
    9, 29, -9, -29,
    13, 42, -13, -42,
    18, 60, -18, -60,
    24, 80, -24, -80,
    33, 106, -33, -106,
    47, 183, -47, -183
#ifdef KILN_TABLES_C
};
#else
);
#endif

// ETC2 T and H mode distances.
#ifdef KILN_TABLES_C
static const int32_t ETC_DIST[8] = {
#else
const int ETC_DIST[8] = int[8](
#endif
    3, 6, 11, 16, 23, 32, 41, 64
#ifdef KILN_TABLES_C
};
#else
);
#endif

// EAC modifiers: 16 tables of 8.
#ifdef KILN_TABLES_C
static const int32_t EAC_MOD[128] = {
#else
const int EAC_MOD[128] = int[128](
#endif
    -3, -6, -9, -15, 2, 5, 8, 14,
    -3, -7, -10, -13, 2, 6, 9, 12,
    -2, -5, -8, -13, 1, 4, 7, 12,
    -2, -4, -6, -13, 1, 3, 5, 12,
    -3, -6, -8, -12, 2, 5, 7, 11,
    -3, -7, -9, -11, 2, 6, 8, 10,
    -4, -7, -8, -11, 3, 6, 7, 10,
    -3, -5, -8, -11, 2, 4, 7, 10,
    -2, -6, -8, -10, 1, 5, 7, 9,
    -2, -5, -8, -10, 1, 4, 7, 9,
    -2, -4, -8, -10, 1, 3, 7, 9,
    -2, -5, -7, -10, 1, 4, 6, 9,
    -3, -4, -7, -10, 2, 3, 6, 9,
    -1, -2, -3, -10, 0, 1, 2, 9,
    -4, -6, -8, -9, 3, 5, 7, 8,
    -3, -5, -7, -9, 2, 4, 6, 8
#ifdef KILN_TABLES_C
};
#else
);
#endif

// bptc_tables.glsl - tables of the BPTC formats (BC6H and BC7) from the Khronos Data Format
// Specification (section "BPTC Compressed Texture Image Formats"): partitions, anchor (fix-up)
// indices, interpolation weights and the BC6H mode parameters.
// Valid GLSL and, with KILN_TABLES_C defined, C: src/gpu/gpu_decode.c uploads them into the table
// buffer the decoders read (table_lookup.glsl; offsets and the reason in gpu_abi.h).

// Two subsets: bit t set = texel t (row-major) is in subset 1. BC6H uses the first 32.
#ifdef KILN_TABLES_C
static const uint32_t BPTC_P2[64] = {
#else
const uint BPTC_P2[64] = uint[64](
#endif
    0xccccu, 0x8888u, 0xeeeeu, 0xecc8u, 0xc880u, 0xfeecu, 0xfec8u, 0xec80u,
    0xc800u, 0xffecu, 0xfe80u, 0xe800u, 0xffe8u, 0xff00u, 0xfff0u, 0xf000u,
    0xf710u, 0x008eu, 0x7100u, 0x08ceu, 0x008cu, 0x7310u, 0x3100u, 0x8cceu,
    0x088cu, 0x3110u, 0x6666u, 0x366cu, 0x17e8u, 0x0ff0u, 0x718eu, 0x399cu,
    0xaaaau, 0xf0f0u, 0x5a5au, 0x33ccu, 0x3c3cu, 0x55aau, 0x9696u, 0xa55au,
    0x73ceu, 0x13c8u, 0x324cu, 0x3bdcu, 0x6996u, 0xc33cu, 0x9966u, 0x0660u,
    0x0272u, 0x04e4u, 0x4e40u, 0x2720u, 0xc936u, 0x936cu, 0x39c6u, 0x639cu,
    0x9336u, 0x9cc6u, 0x817eu, 0xe718u, 0xccf0u, 0x0fccu, 0x7744u, 0xee22u
#ifdef KILN_TABLES_C
};
#else
);
#endif

// Three subsets: 2 bits per texel (texel t at bits 2t).
#ifdef KILN_TABLES_C
static const uint32_t BPTC_P3[64] = {
#else
const uint BPTC_P3[64] = uint[64](
#endif
    0xaa685050u, 0x6a5a5040u, 0x5a5a4200u, 0x5450a0a8u, 0xa5a50000u, 0xa0a05050u, 0x5555a0a0u, 0x5a5a5050u,
    0xaa550000u, 0xaa555500u, 0xaaaa5500u, 0x90909090u, 0x94949494u, 0xa4a4a4a4u, 0xa9a59450u, 0x2a0a4250u,
    0xa5945040u, 0x0a425054u, 0xa5a5a500u, 0x55a0a0a0u, 0xa8a85454u, 0x6a6a4040u, 0xa4a45000u, 0x1a1a0500u,
    0x0050a4a4u, 0xaaa59090u, 0x14696914u, 0x69691400u, 0xa08585a0u, 0xaa821414u, 0x50a4a450u, 0x6a5a0200u,
    0xa9a58000u, 0x5090a0a8u, 0xa8a09050u, 0x24242424u, 0x00aa5500u, 0x24924924u, 0x24499224u, 0x50a50a50u,
    0x500aa550u, 0xaaaa4444u, 0x66660000u, 0xa5a0a5a0u, 0x50a050a0u, 0x69286928u, 0x44aaaa44u, 0x66666600u,
    0xaa444444u, 0x54a854a8u, 0x95809580u, 0x96969600u, 0xa85454a8u, 0x80959580u, 0xaa141414u, 0x96960000u,
    0xaaaa1414u, 0xa05050a0u, 0xa0a5a5a0u, 0x96000000u, 0x40804080u, 0xa9a8a9a8u, 0xaaaaaa44u, 0x2a4a5254u
#ifdef KILN_TABLES_C
};
#else
);
#endif

// Anchor texel of subset 1 in two-subset partitions.
#ifdef KILN_TABLES_C
static const uint32_t BPTC_A2[64] = {
#else
const uint BPTC_A2[64] = uint[64](
#endif
    15u, 15u, 15u, 15u, 15u, 15u, 15u, 15u, 15u, 15u, 15u, 15u, 15u, 15u, 15u, 15u,
    15u, 2u, 8u, 2u, 2u, 8u, 8u, 15u, 2u, 8u, 2u, 2u, 8u, 8u, 2u, 2u,
    15u, 15u, 6u, 8u, 2u, 8u, 15u, 15u, 2u, 8u, 2u, 2u, 2u, 15u, 15u, 6u,
    6u, 2u, 6u, 8u, 15u, 15u, 2u, 2u, 15u, 15u, 15u, 15u, 15u, 2u, 2u, 15u
#ifdef KILN_TABLES_C
};
#else
);
#endif

// Anchor texels of subsets 1 and 2 in three-subset partitions.
#ifdef KILN_TABLES_C
static const uint32_t BPTC_A3B[64] = {
#else
const uint BPTC_A3B[64] = uint[64](
#endif
    3u, 3u, 15u, 15u, 8u, 3u, 15u, 15u, 8u, 8u, 6u, 6u, 6u, 5u, 3u, 3u,
    3u, 3u, 8u, 15u, 3u, 3u, 6u, 10u, 5u, 8u, 8u, 6u, 8u, 5u, 15u, 15u,
    8u, 15u, 3u, 5u, 6u, 10u, 8u, 15u, 15u, 3u, 15u, 5u, 15u, 15u, 15u, 15u,
    3u, 15u, 5u, 5u, 5u, 8u, 5u, 10u, 5u, 10u, 8u, 13u, 15u, 12u, 3u, 3u
#ifdef KILN_TABLES_C
};
#else
);
#endif
#ifdef KILN_TABLES_C
static const uint32_t BPTC_A3C[64] = {
#else
const uint BPTC_A3C[64] = uint[64](
#endif
    15u, 8u, 8u, 3u, 15u, 15u, 3u, 8u, 15u, 15u, 15u, 15u, 15u, 15u, 15u, 8u,
    15u, 8u, 15u, 3u, 15u, 8u, 15u, 8u, 3u, 15u, 6u, 10u, 15u, 15u, 10u, 8u,
    15u, 3u, 15u, 10u, 10u, 8u, 9u, 10u, 6u, 15u, 8u, 15u, 3u, 6u, 6u, 8u,
    15u, 3u, 15u, 15u, 15u, 15u, 15u, 15u, 15u, 15u, 15u, 15u, 3u, 15u, 15u, 8u
#ifdef KILN_TABLES_C
};
#else
);
#endif

// Interpolation weights (out of 64) for 2-, 3- and 4-bit indices.
#ifdef KILN_TABLES_C
static const uint32_t BPTC_W2[4] = {
#else
const uint BPTC_W2[4] = uint[4](
#endif
    0u, 21u, 43u, 64u
#ifdef KILN_TABLES_C
};
#else
);
#endif
#ifdef KILN_TABLES_C
static const uint32_t BPTC_W3[8] = {
#else
const uint BPTC_W3[8] = uint[8](
#endif
    0u, 9u, 18u, 27u, 37u, 46u, 55u, 64u
#ifdef KILN_TABLES_C
};
#else
);
#endif
#ifdef KILN_TABLES_C
static const uint32_t BPTC_W4[16] = {
#else
const uint BPTC_W4[16] = uint[16](
#endif
    0u, 4u, 9u, 13u, 17u, 21u, 26u, 30u, 34u, 38u, 43u, 47u, 51u, 55u, 60u, 64u
#ifdef KILN_TABLES_C
};
#else
);
#endif

// BC6H modes in the order of the specification's mode table (00, 01, 00010, 00110, 01010, 01110,
// 10010, 10110, 11010, 11110, 00011, 00111, 01011, 01111): regions | transformed << 4 |
// endpoint bits << 8 | delta bits of R << 16, G << 20, B << 24.
#define BC6M(ns, tr, epb, dr, dg, db) ((ns) | ((tr) << 4) | ((epb) << 8) | ((dr) << 16) | ((dg) << 20) | ((db) << 24))
#ifdef KILN_TABLES_C
static const uint32_t BC6_MODES[14] = {
#else
const uint BC6_MODES[14] = uint[14](
#endif
    BC6M(2u, 1u, 10u, 5u, 5u, 5u), BC6M(2u, 1u, 7u, 6u, 6u, 6u), BC6M(2u, 1u, 11u, 5u, 4u, 4u),
    BC6M(2u, 1u, 11u, 4u, 5u, 4u), BC6M(2u, 1u, 11u, 4u, 4u, 5u), BC6M(2u, 1u, 9u, 5u, 5u, 5u),
    BC6M(2u, 1u, 8u, 6u, 5u, 5u), BC6M(2u, 1u, 8u, 5u, 6u, 5u), BC6M(2u, 1u, 8u, 5u, 5u, 6u),
    BC6M(2u, 0u, 6u, 6u, 6u, 6u), BC6M(1u, 0u, 10u, 10u, 10u, 10u), BC6M(1u, 1u, 11u, 9u, 9u, 9u),
    BC6M(1u, 1u, 12u, 8u, 8u, 8u), BC6M(1u, 1u, 16u, 4u, 4u, 4u)
#ifdef KILN_TABLES_C
};
#else
);
#endif
#undef BC6M

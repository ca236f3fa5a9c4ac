/*
 * kiln_formats.h - THE format table. Every per-format fact in kiln is derived from this list:
 * the kiln_format enum, block geometry, Vulkan and DXGI numbers and names, DDS FourCC, the KTX2
 * data format descriptor (colour model + flags), CLI names and the test matrix.
 *
 * Included by kiln.h; do not include directly. To add a format, add one row here.
 *
 * Columns:
 *   ID        enum suffix: KILN_FORMAT_<ID>
 *   CLI       base CLI name; the full name adds "-srgb" (SRGB flag) or "-snorm"/"-sf" (SIGNED flag)
 *   VKNAME    VkFormat name without the VK_FORMAT_ prefix (accepted as an alias on the CLI)
 *   VK        VkFormat number
 *   DXGI      DXGI_FORMAT number, 0 when DXGI has none (DDS refuses such formats)
 *   DXGINAME  DXGI name without the DXGI_FORMAT_ prefix, "" when none (accepted as an alias)
 *   FOURCC    legacy DDS FourCC as a 4-char string, "" when a DX10 header is required
 *   BW, BH    block width and height in texels (1 for uncompressed)
 *   BYTES     bytes per block (per texel for uncompressed)
 *   CH        meaningful channels: 1 = R, 2 = RG, 3 = RGB, 4 = RGBA
 *   MODEL     KTX2 DFD colour model (KHR_DF_MODEL_*)
 *   FLAGS     KILN_FF_* bits
 *   DEC       pixel type a decode produces: U8, U16 or F32 (kiln_pixel_type without prefix)
 *   TYPESIZE  KTX2 typeSize
 */
/*  ID                CLI            VKNAME                        VK   DXGI DXGINAME              FOURCC  BW BH BYTES CH MODEL FLAGS                                                 DEC  TYPESIZE */
#define KILN_FORMAT_TABLE(X) \
  X(BC1_RGB_UNORM,    "bc1",         "BC1_RGB_UNORM_BLOCK",        131, 71,  "BC1_UNORM",          "DXT1", 4, 4, 8,  3, 128, KILN_FF_COMPRESSED,                                    U8,  1) \
  X(BC1_RGB_SRGB,     "bc1",         "BC1_RGB_SRGB_BLOCK",         132, 72,  "BC1_UNORM_SRGB",     "",     4, 4, 8,  3, 128, KILN_FF_COMPRESSED | KILN_FF_SRGB,                     U8,  1) \
  X(BC1_RGBA_UNORM,   "bc1a",        "BC1_RGBA_UNORM_BLOCK",       133, 71,  "BC1_UNORM",          "DXT1", 4, 4, 8,  4, 128, KILN_FF_COMPRESSED | KILN_FF_ALPHA1,                   U8,  1) \
  X(BC1_RGBA_SRGB,    "bc1a",        "BC1_RGBA_SRGB_BLOCK",        134, 72,  "BC1_UNORM_SRGB",     "",     4, 4, 8,  4, 128, KILN_FF_COMPRESSED | KILN_FF_ALPHA1 | KILN_FF_SRGB,    U8,  1) \
  X(BC2_UNORM,        "bc2",         "BC2_UNORM_BLOCK",            135, 74,  "BC2_UNORM",          "DXT3", 4, 4, 16, 4, 129, KILN_FF_COMPRESSED,                                    U8,  1) \
  X(BC2_SRGB,         "bc2",         "BC2_SRGB_BLOCK",             136, 75,  "BC2_UNORM_SRGB",     "",     4, 4, 16, 4, 129, KILN_FF_COMPRESSED | KILN_FF_SRGB,                     U8,  1) \
  X(BC3_UNORM,        "bc3",         "BC3_UNORM_BLOCK",            137, 77,  "BC3_UNORM",          "DXT5", 4, 4, 16, 4, 130, KILN_FF_COMPRESSED,                                    U8,  1) \
  X(BC3_SRGB,         "bc3",         "BC3_SRGB_BLOCK",             138, 78,  "BC3_UNORM_SRGB",     "",     4, 4, 16, 4, 130, KILN_FF_COMPRESSED | KILN_FF_SRGB,                     U8,  1) \
  X(BC4_UNORM,        "bc4",         "BC4_UNORM_BLOCK",            139, 80,  "BC4_UNORM",          "ATI1", 4, 4, 8,  1, 131, KILN_FF_COMPRESSED,                                    U8,  1) \
  X(BC4_SNORM,        "bc4",         "BC4_SNORM_BLOCK",            140, 81,  "BC4_SNORM",          "BC4S", 4, 4, 8,  1, 131, KILN_FF_COMPRESSED | KILN_FF_SIGNED,                   F32, 1) \
  X(BC5_UNORM,        "bc5",         "BC5_UNORM_BLOCK",            141, 83,  "BC5_UNORM",          "ATI2", 4, 4, 16, 2, 132, KILN_FF_COMPRESSED,                                    U8,  1) \
  X(BC5_SNORM,        "bc5",         "BC5_SNORM_BLOCK",            142, 84,  "BC5_SNORM",          "BC5S", 4, 4, 16, 2, 132, KILN_FF_COMPRESSED | KILN_FF_SIGNED,                   F32, 1) \
  X(BC6H_UFLOAT,      "bc6h",        "BC6H_UFLOAT_BLOCK",          143, 95,  "BC6H_UF16",          "",     4, 4, 16, 3, 133, KILN_FF_COMPRESSED | KILN_FF_FLOAT,                    F32, 1) \
  X(BC6H_SFLOAT,      "bc6h",        "BC6H_SFLOAT_BLOCK",          144, 96,  "BC6H_SF16",          "",     4, 4, 16, 3, 133, KILN_FF_COMPRESSED | KILN_FF_FLOAT | KILN_FF_SIGNED,   F32, 1) \
  X(BC7_UNORM,        "bc7",         "BC7_UNORM_BLOCK",            145, 98,  "BC7_UNORM",          "",     4, 4, 16, 4, 134, KILN_FF_COMPRESSED,                                    U8,  1) \
  X(BC7_SRGB,         "bc7",         "BC7_SRGB_BLOCK",             146, 99,  "BC7_UNORM_SRGB",     "",     4, 4, 16, 4, 134, KILN_FF_COMPRESSED | KILN_FF_SRGB,                     U8,  1) \
  X(ETC1_UNORM,       "etc1",        "ETC2_R8G8B8_UNORM_BLOCK",    147, 0,   "",                   "",     4, 4, 8,  3, 161, KILN_FF_COMPRESSED | KILN_FF_ETC1,                     U8,  1) \
  X(ETC1_SRGB,        "etc1",        "ETC2_R8G8B8_SRGB_BLOCK",     148, 0,   "",                   "",     4, 4, 8,  3, 161, KILN_FF_COMPRESSED | KILN_FF_ETC1 | KILN_FF_SRGB,      U8,  1) \
  X(ETC2_RGB8_UNORM,  "etc2-rgb",    "ETC2_R8G8B8_UNORM_BLOCK",    147, 0,   "",                   "",     4, 4, 8,  3, 161, KILN_FF_COMPRESSED,                                    U8,  1) \
  X(ETC2_RGB8_SRGB,   "etc2-rgb",    "ETC2_R8G8B8_SRGB_BLOCK",     148, 0,   "",                   "",     4, 4, 8,  3, 161, KILN_FF_COMPRESSED | KILN_FF_SRGB,                     U8,  1) \
  X(ETC2_RGB8A1_UNORM,"etc2-rgb-a1", "ETC2_R8G8B8A1_UNORM_BLOCK",  149, 0,   "",                   "",     4, 4, 8,  4, 161, KILN_FF_COMPRESSED | KILN_FF_ALPHA1,                   U8,  1) \
  X(ETC2_RGB8A1_SRGB, "etc2-rgb-a1", "ETC2_R8G8B8A1_SRGB_BLOCK",   150, 0,   "",                   "",     4, 4, 8,  4, 161, KILN_FF_COMPRESSED | KILN_FF_ALPHA1 | KILN_FF_SRGB,    U8,  1) \
  X(ETC2_RGBA8_UNORM, "etc2-rgba",   "ETC2_R8G8B8A8_UNORM_BLOCK",  151, 0,   "",                   "",     4, 4, 16, 4, 161, KILN_FF_COMPRESSED,                                    U8,  1) \
  X(ETC2_RGBA8_SRGB,  "etc2-rgba",   "ETC2_R8G8B8A8_SRGB_BLOCK",   152, 0,   "",                   "",     4, 4, 16, 4, 161, KILN_FF_COMPRESSED | KILN_FF_SRGB,                     U8,  1) \
  X(EAC_R11_UNORM,    "eac-r11",     "EAC_R11_UNORM_BLOCK",        153, 0,   "",                   "",     4, 4, 8,  1, 161, KILN_FF_COMPRESSED,                                    U16, 1) \
  X(EAC_R11_SNORM,    "eac-r11",     "EAC_R11_SNORM_BLOCK",        154, 0,   "",                   "",     4, 4, 8,  1, 161, KILN_FF_COMPRESSED | KILN_FF_SIGNED,                   F32, 1) \
  X(EAC_RG11_UNORM,   "eac-rg11",    "EAC_R11G11_UNORM_BLOCK",     155, 0,   "",                   "",     4, 4, 16, 2, 161, KILN_FF_COMPRESSED,                                    U16, 1) \
  X(EAC_RG11_SNORM,   "eac-rg11",    "EAC_R11G11_SNORM_BLOCK",     156, 0,   "",                   "",     4, 4, 16, 2, 161, KILN_FF_COMPRESSED | KILN_FF_SIGNED,                   F32, 1) \
  X(R8_UNORM,         "r8",          "R8_UNORM",                   9,   61,  "R8_UNORM",           "",     1, 1, 1,  1, 1,   0,                                                     U8,  1) \
  X(RG8_UNORM,        "rg8",         "R8G8_UNORM",                 16,  49,  "R8G8_UNORM",         "",     1, 1, 2,  2, 1,   0,                                                     U8,  1) \
  X(RGBA8_UNORM,      "rgba8",       "R8G8B8A8_UNORM",             37,  28,  "R8G8B8A8_UNORM",     "",     1, 1, 4,  4, 1,   0,                                                     U8,  1) \
  X(RGBA8_SRGB,       "rgba8",       "R8G8B8A8_SRGB",              43,  29,  "R8G8B8A8_UNORM_SRGB","",     1, 1, 4,  4, 1,   KILN_FF_SRGB,                                          U8,  1) \
  X(RGBA16F,          "rgba16f",     "R16G16B16A16_SFLOAT",        97,  10,  "R16G16B16A16_FLOAT", "",     1, 1, 8,  4, 1,   KILN_FF_FLOAT | KILN_FF_SIGNED,                        F32, 2) \
  X(RGBA32F,          "rgba32f",     "R32G32B32A32_SFLOAT",        109, 2,   "R32G32B32A32_FLOAT", "",     1, 1, 16, 4, 1,   KILN_FF_FLOAT | KILN_FF_SIGNED,                        F32, 4)

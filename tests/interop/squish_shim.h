/* squish_shim.h - a C view of the few libsquish (C++) entry points the BC interop test uses.
 * Implemented in squish_shim.cpp; built only when libsquish is found (see CMakeLists.txt). */
#ifndef KILN_SQUISH_SHIM_H
#define KILN_SQUISH_SHIM_H

#ifdef __cplusplus
extern "C" {
#endif

enum {
    KT_SQUISH_DXT1 = 1,
    KT_SQUISH_DXT3 = 2,
    KT_SQUISH_DXT5 = 3,
    KT_SQUISH_BC4 = 4,
    KT_SQUISH_BC5 = 5
};
enum { KT_SQUISH_RANGE_FIT = 0, KT_SQUISH_CLUSTER_FIT = 1 };

/* squish::Decompress of one block into 16 RGBA8 texels (row-major). libsquish 1.15 decodes only
 * DXT1/3/5 (BC4/BC5 flags fall back to a colour block), so BC4/5 are not accepted here. */
void kt_squish_decompress(unsigned char rgba[64], const void *block, int format);
/* squish::Compress of 16 RGBA8 texels; BC4 takes R, BC5 takes R and G. */
void kt_squish_compress(const unsigned char rgba[64], void *block, int format, int fit);

#ifdef __cplusplus
}
#endif

#endif

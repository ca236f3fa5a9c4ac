// squish_shim.cpp - extern "C" wrappers around libsquish for the C interop test (test_bc_squish.c).
#include "squish_shim.h"

#include <squish.h>

static int squish_format(int format)
{
    switch (format) {
    case KT_SQUISH_DXT1: return squish::kDxt1;
    case KT_SQUISH_DXT3: return squish::kDxt3;
    case KT_SQUISH_DXT5: return squish::kDxt5;
    case KT_SQUISH_BC4: return squish::kBc4;
    case KT_SQUISH_BC5: return squish::kBc5;
    default: return squish::kDxt1;
    }
}

extern "C" void kt_squish_decompress(unsigned char rgba[64], const void *block, int format)
{
    squish::Decompress(rgba, block, squish_format(format));
}

extern "C" void kt_squish_compress(const unsigned char rgba[64], void *block, int format, int fit)
{
    int flags = squish_format(format) | (fit == KT_SQUISH_CLUSTER_FIT ? squish::kColourClusterFit : squish::kColourRangeFit);
    squish::Compress(rgba, block, flags);
}

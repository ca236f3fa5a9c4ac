#version 450
// enc_bc4_max_pool.comp - BC4 / BC5 / BC3-alpha max: the code is enc_bc4_max_pool.glsl (also compiled as
// enc_bc4_max_pool_h.comp, with 16-bit float arithmetic for option bit 29)
#extension GL_GOOGLE_include_directive : require
#include "enc_bc4_max_pool.glsl"

#version 450
// enc_bc4_max_pool_h.comp - enc_bc4_max_pool.glsl with BC4_F16 (option bit 29, helper bc4n): the cell bound of
// bit 28 on two values at once in 16-bit floats (needs shaderFloat16)
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define BC4_F16 1
#extension GL_GOOGLE_include_directive : require
#include "enc_bc4_max_pool.glsl"

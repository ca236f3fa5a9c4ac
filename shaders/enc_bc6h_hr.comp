#version 450
// enc_bc6h_hr.comp - enc_bc6h_hl.comp (GPU-native BC6H high, several lanes per block) with its 16-texel
// loops rolled (HL_ROLLED: a smaller program; KILN_BC6H_HIGH_OPT bit 2, gpu_encode_bc6h.c); the same bytes.
#extension GL_GOOGLE_include_directive : require
#define HL_ROLLED 1
#include "enc_bc6h_hl.glsl"

#version 450
// enc_bc6h_hbt.comp - kernel B of GPU high in two kernels with HL_TRIM (KILN_BC6H_HIGH_TRIM=1; helper bc6hfast,
// 2026-11-26): enc_bc6h_hb.comp without the shared arrays only kernel A uses (the same code, so the same bytes)
#extension GL_GOOGLE_include_directive : require
#define HL_ROLLED 1
#define HL_SPLIT 2
#define HL_TRIM 1
#include "enc_bc6h_hl.glsl"

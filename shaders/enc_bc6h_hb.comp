#version 450
// enc_bc6h_hb.comp - kernel B of GPU high in two kernels (KILN_BC6H_HIGH_SPLIT=1; helper bc6hsplit, 2026-11-26):
// the texels again (phase 0), kernel A's hand-off (binding 3: the RG jobs to refine), then enc_bc6h_hr.comp's
// phases 5 and 6 (least-squares passes, the lowest error, the block packed). enc_bc6h_hl.glsl with HL_SPLIT = 2.
#extension GL_GOOGLE_include_directive : require
#define HL_ROLLED 1
#define HL_SPLIT 2
#include "enc_bc6h_hl.glsl"

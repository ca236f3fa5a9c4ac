#version 450
// enc_bc6h_hau.comp - kernel A of GPU high in two kernels, KILN_BC6H_HIGH_AUNROLL=1 (helper bc6hfast, 2026-11-26):
// enc_bc6h_hat.comp (HL_TRIM) with the 16-texel loops of the partition residuals, fits and cheap scores unrolled (no
// HL_ROLLED, as enc_bc6h_hl.comp; the same arithmetic per texel in the same order)
#extension GL_GOOGLE_include_directive : require
#define HL_SPLIT 1
#define HL_TRIM 1
#include "enc_bc6h_hl.glsl"

#version 450
// enc_bc6h_ha.comp - kernel A of GPU high in two kernels (KILN_BC6H_HIGH_SPLIT=1; helper bc6hsplit, 2026-11-26):
// enc_bc6h_hr.comp's phases 0-4 (texels, partition ranking, fits, mode filter, cheap scores, exact measure) and the
// choice of the RG jobs that get the least-squares passes; per block it writes those jobs' state (code, partition,
// job number, measured error, quantized endpoints, indices: 16 words per job, binding 3) for kernel B
// (enc_bc6h_hb.comp). The code is enc_bc6h_hl.glsl's (HL_SPLIT = 1), so the bytes equal the one-kernel encoder's.
#extension GL_GOOGLE_include_directive : require
#define HL_ROLLED 1
#define HL_SPLIT 1
#include "enc_bc6h_hl.glsl"

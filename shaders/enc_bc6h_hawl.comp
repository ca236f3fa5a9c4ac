#version 450
// enc_bc6h_hawl.comp - kernel A at 16 lanes (enc_bc6h_haw.comp) with less shared memory per workgroup (HL_LEANSH: s_red as
// uvec2, the log's x in s_W.w, no arrays for REFSH / RECOMP / LINE), KILN_BC6H_HIGH_LEANSH=1 or 3 (the default; helper bc6hk, 2026-11-26)
#extension GL_GOOGLE_include_directive : require
#define HL_ROLLED 1
#define HL_SPLIT 1
#define HL_TRIM 1
#define HL_GFIX 4u
#define HL_LEANSH 1
#include "enc_bc6h_hl.glsl"

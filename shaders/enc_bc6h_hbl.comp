#version 450
// enc_bc6h_hbl.comp - kernel B (enc_bc6h_hb.comp) with less shared memory per workgroup (HL_LEANSH: the log's x in s_W.w, no
// arrays for REFSH / RECOMP / LINE), KILN_BC6H_HIGH_LEANSH=2 or 3 (the default; helper bc6hk, 2026-11-26)
#extension GL_GOOGLE_include_directive : require
#define HL_ROLLED 1
#define HL_SPLIT 2
#define HL_LEANSH 1
#include "enc_bc6h_hl.glsl"

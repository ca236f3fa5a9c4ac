#version 450
// enc_bc6h_haw.comp - kernel A of GPU high in two kernels at 16 lanes per block, KILN_BC6H_HIGH_AWIDE=1 (helper bc6hfast,
// 2026-11-26): kernel A with HL_TRIM (the arrays only kernel B uses: one entry per block) specialised to LANES = 16 by the host, with phase 4's lane groups of 4 lanes
// (HL_GFIX: kernel B's groups at 8 lanes and R = 2), so 4 jobs are measured at once; the hand-off is the 8-lane
// kernel A's (kernel B runs at 8 lanes). The host also runs it at 32 lanes (KILN_BC6H_HIGH_AWIDE=2) and at 20 lanes (=3, 3 blocks
// per workgroup of 60: all 5 jobs measured at once; helper bc6hhigh)
#extension GL_GOOGLE_include_directive : require
#define HL_ROLLED 1
#define HL_SPLIT 1
#define HL_TRIM 1
#define HL_GFIX 4u
#include "enc_bc6h_hl.glsl"

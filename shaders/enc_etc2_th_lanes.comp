#version 450
// enc_etc2_th_lanes.comp - enc_etc2_th.glsl's search (PHASE 1) with LANES invocations per block (KILN_GPU_ETC2_TH_LANES);
// th_eval's pixel loops unrolled as in enc_etc2_th_unroll.comp.
#extension GL_GOOGLE_include_directive : require
#define TH_UNROLL_LOOPS 1
#define TH_LANES 1
#include "enc_etc2_th.glsl"

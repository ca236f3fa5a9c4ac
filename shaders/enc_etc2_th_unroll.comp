#version 450
// enc_etc2_th_unroll.comp - enc_etc2_th.glsl with th_eval's pixel loops unrolled (KILN_GPU_ETC2_TH_UNROLL=1).
#extension GL_GOOGLE_include_directive : require
#define TH_UNROLL_LOOPS 1
#include "enc_etc2_th.glsl"

#version 450
// enc_etc2_th.comp - the ETC2 T / H pass (gpu_etc2_th.c); the code is enc_etc2_th.glsl.
#extension GL_GOOGLE_include_directive : require
#define TH_UNROLL_LOOPS 0
#include "enc_etc2_th.glsl"

#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// enc_etc1_q_a1.comp - the ETC1 modes of ETC2 RGB A1 on the GPU (every quality; 64-bit floats): see
// enc_etc1_q.glsl.
#define ETC_A1 1
#include "enc_etc1_q.glsl"

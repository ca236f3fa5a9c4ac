#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// enc_etc1_q.comp - kiln's GPU ETC1 search (NORMAL / HIGH / MAX), opaque blocks: see enc_etc1_q.glsl.
#define ETC_A1 0
#include "enc_etc1_q.glsl"

#version 450
// enc_etc2_th_lanes.comp - enc_etc2_th.glsl with the gate's partitions (PREP = 1, the default above FAST: PHASE 0 writes
// them, PHASE 1 searches them; the name is from the removed several-invocations-per-block search); th_eval's pixel loops
// unrolled as in enc_etc2_th_unroll.comp.
#extension GL_GOOGLE_include_directive : require
#define TH_UNROLL_LOOPS 1
#define TH_LANES 1
#include "enc_etc2_th.glsl"

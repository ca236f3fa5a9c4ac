// flame_abi.glsl - numbers shared by the flame shaders (shaders/flame_*.comp) and their host code
// (src/gpu/gpu_flame.c). Valid GLSL and C: only #defines.
//
// Xform records (binding 1, floats; the uint fields hold uint bits): the buffer starts with the
// xform table, then the records.
//   [KF_TAB_OFFSETS + i]  record offset of xform i (normal xforms 0..n-1, then the final xform)
//   [KF_TAB_CUM + j]      cumulative selection weight of the proposal distribution, j = 0..n-1
//   [KF_TAB_ACC + p*n+j]  acceptance of xform j after previous xform p (p = 0: none, p = i+1: xform i)
// A record: KF_HDR_WORDS header words, then nvars entries of KF_VAR_WORDS words
//   header: c00 c01 c10 c11 c20 c21 | post (same order) | color, color_speed, vis, opacity |
//           flags (uint) | pre_blur weight | nvars (uint) | pad
//   entry:  id (uint), weight, p0..p7 (the variation's parameters in flame.h's X-macro order),
//           e0..e5 (precalculated values, see flame_variations.glsl)
#ifndef FLAME_ABI_GLSL
#define FLAME_ABI_GLSL

#define KF_LOCAL_SIZE_MIN 256u   // workgroup size; 8 subgroups at least (larger for subgroups > 32)
#define KF_HDR_WORDS 20u
#define KF_VAR_WORDS 16u
#define KF_H_POST 6u
#define KF_H_COLOR 12u
#define KF_H_SPEED 13u
#define KF_H_VIS 14u
#define KF_H_OPACITY 15u
#define KF_H_FLAGS 16u
#define KF_H_PREBLUR 17u
#define KF_H_NVARS 18u

#define KF_FLAG_ATAN_XY 1u
#define KF_FLAG_ANGLES 2u
#define KF_FLAG_ATAN_YX 4u
#define KF_FLAG_POST 8u

#define KF_MAX_XFORMS 128u
#define KF_TAB_OFFSETS 0u
#define KF_TAB_CUM (KF_TAB_OFFSETS + KF_MAX_XFORMS + 1u)
#define KF_TAB_ACC (KF_TAB_CUM + KF_MAX_XFORMS)
// records start after the acceptance table of the genome: KF_TAB_ACC + (n + 1) * n

// Accumulator: 2 packed words per bucket (R | G << 16, B | A << 16) in integer units of flam3's bucket
// scale (KF_UNITS per unit), plus 4 carry counters per bucket (R carries, word-0 wraps, B carries,
// word-1 wraps); see flame_iterate.comp.
#define KF_UNITS 1.0

// Push constants of flame_iterate.comp (32-bit words)
#define KF_PUSH_WORDS 26u

#endif

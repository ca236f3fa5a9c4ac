// flame_post_abi.glsl - numbers shared by the flame post-processing shaders (flame_de_prep.comp,
// flame_de_gather.comp, flame_tonemap.comp) and their host code (src/gpu/gpu_flame_post.c).
// Valid GLSL and C: only #defines.
#ifndef FLAME_POST_ABI_GLSL
#define FLAME_POST_ABI_GLSL

#define KFP_TILE 16u            // 16 x 16 invocations per workgroup in every post pass
#define KFP_SKIP 0xffffffffu    // de index of a bucket that scatters nothing (A == 0 or in the rim)
#define KFP_REACH_SHIFT 24u     // de word: filter index (bits 0..23) | reach ceil(width) - 1 (bits 24..31)
#define KFP_INDEX_MASK 0xffffffu
#define KFP_SHARED_MAX 16384u   // bytes of the gather's shared idx tile (Vulkan's guaranteed minimum)
#define KFP_MODE_LOG 0u         // prep: acc = bucket * log scale (estimator_radius 0)
#define KFP_MODE_DE 1u          // prep: per-bucket log-scaled colour + DE filter index
#define KFP_TM_VIB 1u           // tonemap flags: vibrancy != 1 (adds the per-channel gamma term)
#define KFP_TM_HIGHPOW 2u       // highlight_power >= 0

#endif

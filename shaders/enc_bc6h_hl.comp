#version 450
// enc_bc6h_hl.comp - kiln's GPU-native BC6H encoder for quality high with SEVERAL LANES PER BLOCK
// (the default at high; KILN_BC6H_HIGH_DESIGN=lanes; helper bc6hlanes, 2026-11-25). The search is
// enc_bc6h_h.comp's (one invocation per block; same steps, same knobs P, K, L, R; P, K <= 4 here),
// spread over NL = LANES invocations per block (specialisation constant 1: 4, 8 or 16; BPW blocks per
// workgroup, specialisation constant 5: by default 8, 4 at 16 lanes) so that each invocation has a short chain and few live values (no
// block-sized private arrays: the block's data and the reductions live in shared memory):
//   0. texels: lane n converts texels n, n + NL, ... (the CPU's input policy); targets centred on
//      texel 0 (+ the mean fitting weight), per-channel weights and logs go to shared memory;
//   1. partitions: lane n computes the moment residual of partitions n, n + NL, ...; the best P by rank
//      counting (ties to the lower number, as the CPU);
//   2. fits: lane n fits the subsets n, n + NL, ... of the jobs (line, partition 1 subset 0, 1, ...);
//      then lane s applies the mode filter of slot s;
//   3. cheap scores: the surviving candidates (slot, mode; + the recentred variant) strided over the
//      lanes, each lane keeps its best K and its best one-subset candidate; the block's best K by rank
//      counting over the lanes' lists (ties: the candidate order, as enc_bc6h_h.comp), the best
//      one-subset candidate by a minimum;
//   4. exact measure of the K + 1 jobs: RG (specialisation constant 2) groups of G = NL / RG lanes,
//      one job per group and round, each lane the texels gl, gl + G, ... of it (the exact index
//      choice of enc_bc6h_h.comp), partial errors summed in lane order through shared memory;
//   5. the best R = RG jobs (ties: the earlier job): group r gives job r L least-squares passes, the
//      lanes of a group summing the normal equations of their texels through shared memory (two
//      barriers per pass, three with SUM2), the quantization's 12 components split over the group's
//      lanes; each pass kept while it lowers the error (uniform trip counts; a stopped group skips
//      the work);
//   6. the lowest error (ties: the earlier job) is packed by all lanes: header spans and indices
//      strided over the lanes, ORed in shared memory.
// Reductions through shared memory and barriers only, always summed in the same lane order: no
// subgroup operations, any subgroup size, no lane order assumed. Float only (no fp64).
// (the code: enc_bc6h_hl.glsl; enc_bc6h_hr.comp is the same with the texel loops rolled)
#extension GL_GOOGLE_include_directive : require
#include "enc_bc6h_hl.glsl"

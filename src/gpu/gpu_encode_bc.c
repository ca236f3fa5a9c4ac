/* gpu_encode_bc.c - BC1 (RGB, RGBA punch-through), BC3, BC4 and BC5 (UNORM, SNORM) encoding on the
 * GPU. Two strategies (params->gpu_strategy):
 *
 * kiln (0): the CPU encoders' own searches (src/codec/bc1_enc.c, bc4_enc.c) with arithmetic designed
 *   to give the same bytes: integer palettes and errors, `precise` float/double expressions in the C
 *   order, correctly rounded divisions (enc_bc_common.glsl). BC4/BC5/BC3-alpha: every quality
 *   (shaders/enc_bc4.comp, one invocation per channel; max: enc_bc4_max_pool.comp, the exact search as
 *   a quadtree over the endpoint plane whose cells, of all the workgroup's channel tasks, share one pool).
 *   BC1/BC3 colour at fast quality: the CPU's 16-block batch path per invocation (enc_bc1.comp), and
 *   the CPU's per-block path for the blocks the batch gives back;
 *   at normal quality the per-block path (principal axis, extremes, three least-squares refits, both
 *   modes); flat and near-flat blocks take the CPU's single-colour tables (bc1_enc_tables.h, copied
 *   into a storage buffer at binding 3: flat_table_words), transparent and cut-out texels count as the
 *   CPU counts them: no block goes back (the mask stays zero). At high and max quality the CPU's cluster fit
 *   (encode_cluster): KILN_EBC_CFK_LANES invocations per block (64 / that many blocks per workgroup)
 *   split the partitions of the CPU's own factor tables (bc1_enc_tables.h, copied into a storage
 *   buffer at binding 3), the block's best are merged by (error, table entry), and the candidates are
 *   refined (max) on one invocation each (enc_bc1_cf.comp, design 1) or with their scoring and channel
 *   steps split over the block's invocations (enc_bc1_cf2.comp, design 2), or one invocation runs the
 *   CPU's whole serial search for its block, every invocation reading the same table entry at a time
 *   (enc_bc1_cf3.comp, design 3, the default at high and max, with the code variants KILN_EBC_CF3_OPT;
 *   see KILN_EBC_CF_DESIGN); KILN_GPU_CF_DESIGN=1, 2 or 3 forces one;
 *   the pipelined path of gpu_encode_bc_ring.inc does not take it). The blocks those paths hand
 *   elsewhere on the CPU (cluster fit: flat blocks and near-flat ones that try the exact single-colour
 *   tables, degenerate blocks, punch-through or cut-out texels) are flagged in a bit mask (cluster fit: a word per block) and
 *   encoded here by the CPU block encoder, so the output equals the CPU's everywhere (a verbose
 *   context says how many).
 *   Dithering (params->dither; every format and quality, synchronous path only): the plan without it,
 *   then a post-pass that re-picks the indices as the CPU does (add_dither_passes below).
 *   Needs shaderFloat64 (the divisions).
 *
 * seed (1): the designs of the seeds (betsy; Castano's cluster-fit paper): BC1 fast/normal one
 *   invocation per block (principal axis, extremes, least-squares refinement: enc_bc1_seed.comp);
 *   BC1 high/max the paper's cluster fit, a workgroup per block (enc_bc1_cf_seed.comp); BC4 channels 4
 *   invocations per block with atomicOr-merged index masks (enc_bc4_seed.comp); BC3/BC5 stitched from
 *   the channel passes writing their halves of each block. PRELOAD (specialisation constant 4) picks
 *   staging the texels in shared memory or reading them from the buffer.
 *
 * Input: 8-bit images go up as they are (edge replication in the shaders); 16-bit and float images
 * are first converted on the host to exactly what the CPU encoder reads (enc_bc_abi.glsl). Large
 * images run in batches of block rows that fit the device's storage-buffer range (or the byte count
 * in KILN_GPU_BATCH_BYTES when smaller: a testing aid). ctx->last_gpu_ms is the kernel time of all
 * batches (timestamps). */
#include "gpu/gpu_encode.h"
#include "gpu/vk.h"
#include "codec/codec.h"
#include "codec/bc1_enc_tables.h"

#include "../../shaders/enc_bc_abi.glsl"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EBC_BATCH_MAX (256u << 20)
/* enc_bc1_cf.comp: invocations per block (8, 16, 32 or 64; 64 / lanes blocks per workgroup of 64;
 * KILN_GPU_CF_LANES overrides it for experiments). 8: on the H100 (2026-11-25, 2048^2 BC1) 8 lanes ran
 * high at 1438 Mpix/s and max at 650, 16 lanes 1122 / 418, 32 lanes 740 / 249 (kernel time). */
#define KILN_EBC_CFK_LANES 8u
/* BC4 / BC5 / BC3-alpha max: the design without KILN_GPU_BC4_MAX (only "pool" is left; see make_plan).
 * "pool" since the H100 run of 2026-11-26 08:10 UTC (helper bc4lanes; `KILN_GPU_BC4_MAX=d gpu_encode --size 4096
 * --formats F --qualities max --strategies kiln --runs 5 --no-cpu`, one process per row, kernel min ms, quadtree /
 * pool): bc4 27.67, 27.54 / 18.41, 18.38; bc5 37.19, 36.75 / 31.05, 31.07; bc4-snorm 33.13 / 25.64; bc3 11.66 /
 * 11.81 (its alpha); a workgroup of 128 (KILN_GPU_BC4_POOL_WG) 22.79, 22.78 for bc4. */
#define KILN_EBC_BC4_MAX_DEFAULT "pool"
/* enc_bc4_max_pool.comp's option bits 16+ by default (KILN_GPU_BC4_POOL_OPT replaces them; helper bc4max):
 * 65536 = step 1 in registers. H100 2026-11-26 11:49 UTC, `gpu_encode --size 4096 --formats bc4 --qualities max
 * --runs 5 --no-cpu`, kernel min ms, two rounds: 4194304 (the former code) 17.39, 17.41; 0 (the heuristic's
 * return at error 0) 16.58, 16.55; 65536 15.48, 15.42.
 * Now 0xd0000 = 65536 + 262144 (the DP's rows in a rolled loop) + 524288 (the cell bound two values an
 * iteration, unsigned ramp division); helper bc4k, H100 2026-11-26 14:38 UTC, same command, two rounds:
 * bc4 0x10000 15.32, 15.37; 0x50000 15.03, 15.03; 0x90000 11.78, 11.77; 0xd0000 11.52, 11.56; 0x1d0000 (+ bit 20,
 * all 16 slots, no early stop) 12.27, 12.25; bc5 29.46 / 21.90 / 20.10 (0x10000 / 0xd0000 / 0x1d0000); bc4-snorm
 * 20.70 / 20.02 / 22.44. Bit 21 (the DP in shared memory, few registers: the kernel had 220 registers with
 * 0x10000, 168 with 0xd0000) is opt-in until the H100 has timed it. */
#define KILN_EBC_BC4_POOL_OPT 0xd0000u
/* BC4 / BC5 max split into kernels (helper bc4s, 2026-11-27): enc_bc4.comp's pre-pass (MAX_LIST: the high heuristic
 * at full occupancy writes every block and lists the tasks whose error H is above 0, the only ones the exact
 * search can improve), then enc_bc4_max_pool.comp over that list (option bit 23, FROM_LIST: full workgroups, no
 * heuristic): 1 = step 1 and the search in one kernel, 2 = step 1 (bit 24: records to binding 2) and the search
 * (bit 25, 62 instead of 195 registers on the H100) in kernels of their own; 0 = the pool kernel alone.
 * KILN_GPU_BC4_SPLIT=0|1|2 overrides it (bench, tests). BC3 keeps one kernel (its colour pass uses binding 2), as does
 * the device-resident mip path (ebc_plan_unsplit); the synchronous path and the pipelined ring run the split
 * (binding 2's layout: ebc_fb_layout). */
#define KILN_EBC_BC4_SPLIT 2
#define KILN_EBC_BC4_FROM_LIST 0x800000u
/* with the split: the pool's workgroup (KILN_GPU_BC4_POOL_WG overrides it) and its stack of 16 entries an invocation
 * (option bit 27, added to the default options; KILN_GPU_BC4_POOL_OPT replaces them). H100 2026-11-27 08:13 UTC
 * (`gpu_encode --size 4096 --formats bc4 --qualities max --strategies kiln --runs 5 --no-cpu`, kernel min ms, two
 * rounds): split 1 wg 64 9.08, 9.15; wg 32 8.87, 8.88; + bit 27 7.90, 7.87; split 2 wg 32 8.84, 8.86; + bit 27
 * 7.63, 7.62 (then the default); split 2 wg 64 + bit 27 7.73, 7.72; split 0 (one kernel) 11.54. With helper bc4m's
 * search (four quarters a pop) 64 is faster: H100 2026-11-28 ~02:17 UTC (helper bc5p, `gpu_encode --size 4096 --formats
 * F --qualities max --strategies kiln --runs 20 --no-cpu`, kernel min ms, three rounds, main's binary alternated):
 * bc5 5.925-5.936 -> 5.884-5.892, bc4 3.263-3.267 -> 3.215-3.226, bc5-snorm 7.170-7.182 -> 7.071-7.080, bc4-snorm
 * 4.000-4.001 -> 3.906-3.910; workgroup 128: bc5 5.954, 5.959, bc4 3.235, 3.232. */
#define KILN_EBC_BC4_LIST_WG 64u
#define KILN_EBC_BC4_LIST_STACK16 0x8000000u
/* with the split (helper bc4n), added to the step-1 and search kernels' default options (KILN_GPU_BC4_POOL_OPT
 * replaces them): bit 31, the cell's entry ranges without a branch on the mode; where the device has shaderFloat16
 * (device_has_f16, which vk_device.c enables; KILN_GPU_BC4_F16=0 turns it off) bit 29, the cell bound in 16-bit floats,
 * two values an operation (enc_bc4_max_pool_h.comp; four values an iteration then, all 16 at once since helper bc4t,
 * below); and the pre-pass's heuristic with its pair
 * errors on two texels an operation in 16-bit floats, its local search skipping the pairs of its last two windows
 * (enc_bc4_h.comp; without shaderFloat16 or with KILN_GPU_BC4_F16=0: enc_bc4.comp's integers; the knob
 * KILN_GPU_BC4_PRE_HALF=0, enc_bc4.comp's pre-pass with the 16-bit search, was removed by helper bc4t).
 * `gpu_encode --size 4096 --formats bc4 --qualities max --strategies kiln --runs 5 --no-cpu`, kernel min ms, every
 * row its own process, two rounds. H200 2026-11-27 11:13 UTC: the former default 7.548, 7.511; bit 31 7.438, 7.404;
 * the 16-bit bound (two values an iteration) 7.462, 7.449; the 16-bit pre-pass 6.780, 6.799 (pre-pass + step 1 alone
 * 1.725 -> 0.990); losers (removed): the pre-pass in 32-bit floats 7.476, 7.463, the bound in 32-bit floats (with bits
 * 30, 31) 9.12, 9.13, pushes by one atomic a subgroup (bit 30) 8.17, 8.16, step 1's DP in shared memory 9.15, 9.15.
 * H100 11:46 UTC: the former default (through the knobs) 7.633, 7.582; bits 31 + 29 + the 16-bit pre-pass 6.421,
 * 6.424; + the skipping local search 6.400, 6.408; + four values an iteration 5.842, 5.833; bit 31 without bit 29
 * 6.676, 6.670; bc5 14.33, 14.34 -> 12.39, 12.39 and bc4-snorm 10.20 -> 7.08, 7.06 (two values an iteration). */
#define KILN_EBC_BC4_LIST_OPT 0x80000000u
#define KILN_EBC_BC4_F16_BOUND 0x20000000u
/* with bit 29 (helper bc4t): bit 30, the cell bounded without a branch (the clip's and the spacing bound's tests after
 * the cell bound), while bit 29's bound takes all 16 value slots at once (no early stop, no loop). H100 2026-11-27
 * 14:16 UTC (`gpu_encode --size 4096 --formats F --qualities max --strategies kiln --runs 5 --no-cpu`, kernel min ms,
 * every row its own process, two rounds): bc4 main 5.779, 5.786 -> 4.657, 4.640 (16 values at once alone 5.196,
 * 5.197; bit 30 alone 5.387, 5.391); bc5 11.09 -> 8.69, bc4-snorm 6.44 -> 5.33. Losers (removed): eight values an
 * iteration 5.483, 5.466; the entries' min as a tree 5.770, 5.775; (C, W) of an entry in one register 5.652, 5.687
 * (nothing with the winner: 4.641, 4.641); two cells an invocation a round 5.786, 5.789 (4.991, 5.023 with the
 * winner: more walks, 83 registers). As the built-in default, H100 14:44 UTC: bc4 main 5.784, 5.761 -> 4.633, 4.619;
 * bc5 8.70, bc4-snorm 5.33 (main 11.09 / 6.44 at 14:16). */
#define KILN_EBC_BC4_BRANCH_FREE 0x40000000u
/* without shaderFloat16 (KILN_GPU_BC4_F16=0; helper bc4t): bit 30 too, and bit 20, the integer bound over all 16 value
 * slots without the early stop. H100 2026-11-27 14:31 UTC, same command, bc4: 7.670 -> 7.027 (bit 30) -> 6.317 (bits 30
 * + 20); as the built-in default at 14:44 UTC: 7.473 -> 6.157 */
#define KILN_EBC_BC4_INT_ALL 0x100000u
/* The cluster-fit shader: 1 = enc_bc1_cf.comp (candidates refined on one invocation each), 2 =
 * enc_bc1_cf2.comp (texel loads, ranks, prefix sums and the refinement's scoring / channel steps
 * split over the block's invocations); KILN_GPU_CF_DESIGN=1 or 2 overrides it. H100 2026-11-25, 2048^2
 * kernel ms design 1 / 2 (21:48 UTC, after the fix below): bc1 high 2.91 / 3.07, max 6.43 / 4.33, bc1a max
 * 3.74 / 2.66, bc3 max 18.6 / 11.8. Default then: design 2 at max, design 1 at high (where it is ~5% faster).
 * (Design 2's first version gave other bytes than the CPU for BC1 / BC1a max on grassB 1024^2 on the H100:
 * spirv-opt's unroller dropped NoContraction from the refit's products; they are now fp64 as in design 1
 * and the float loops are not unrolled by glslc; bit-identical on the H100 since, docs/PERFORMANCE.md.)
 * Design 3 (enc_bc1_cf3.comp, one invocation per block) with KILN_EBC_CF3_OPT 33, H200 2026-11-26 02:05 UTC,
 * 2048^2 kernel min ms design 1 / 2 / 3: bc1 high 2.91 / 3.07 / 2.67, max 6.44 / 4.34 / 3.60, bc1a max
 * 3.74 / 2.66 / 2.29 (opt 39), bc3 max 30.0 / 3.89 / 3.00 (opt 39); 4096^2 bc1 max design 2 16.9, design 3
 * 14.1 (opt 39): the default at high and max since. */
#define KILN_EBC_CF_DESIGN(q) 3
/* enc_bc1_cf3.comp (design 3: one invocation per block, the CPU's serial search): its CF_OPT bits
 * (specialisation constant 5; KILN_GPU_CF_OPT overrides): 1 = plain `precise` products instead of
 * (a * b) * one, 2 = the search loads P3(i) once per run of equal i, 4 = the search loops without
 * [[dont_unroll]] (the driver may unroll them), 8 = the search's exact early exit after one channel (an
 * entry whose first channel's error plus the lowest possible errors of the other two and a rounding margin
 * cannot beat the second best (high: the best) is skipped), 16 = with 8, a second exit after two channels,
 * 32 = one prefix-sum table in shared memory (P3, then P2: fewer bytes per block, for occupancy), 64 =
 * the search's clamps by min / max. H200 (2026-11-26, 2048^2 bc1 max kernel min ms, local 32): 0: 5.98,
 * 1: 5.51, 7: 5.50 (2 and 4 change nothing), 15: 7.37 and 31: 8.23 (the early exits cost more than they
 * skip), 32: 4.06, 33: 3.60, 35 / 37 / 39: 3.61 / 3.61 / 3.65, 65: 5.51 (64 changes nothing); local 64 with
 * 39: 4.29. Registers: 119-122 for every variant, so the shared memory per block (32: 268 instead of 472
 * bytes) decides the occupancy. Default 33: plain products (bit-identical on the H200 and on lavapipe; the
 * tests check it) and one prefix-sum table. */
#define KILN_EBC_CF3_OPT 33u
/* Bits 128, 256, 512 (helper bc1split, 2026-11-26): 128 = two passes, a search pass (setup and the table
 * search; its candidates' endpoints go into the block's output and fallback words) and, after a barrier,
 * a refine pass (the same shader with KILN_EBC_CF3_REFINE: exact scoring, refit, +-2 steps, the CPU's
 * routing), so that the search's register count is not the refinement's; 256 = 8-bit texels read from
 * the source buffer instead of shared memory (less shared memory per block); 512 = the four-colour
 * search scores two entries per iteration; 1024 (with 128) = the refine pass runs one invocation per
 * candidate (3 per block, workgroup 96); 2048 = the search rounds by adding and subtracting 1.5 * 2^23
 * (exact for its clamped 0..63) instead of roundEven; 4096 = the search skips the entries' penalty loads
 * (every entry cf_table_words keeps has penalty +0: make_plan drops the bit when cf_pens_zero says
 * otherwise); 8192 = the covariance (search setup, refine pass) as a rolled loop with 4 texels live at a
 * time (the same sums in the same order), for fewer registers; 16384 (with 512) = four entries per
 * iteration. The device-resident mip path keeps one pass (ebc_plan_unsplit). H200 2026-11-26 ~04:34 UTC,
 * 2048^2 BC1 kernel min ms high / max (every row the CPU's bytes): 33 2.68 / 3.61, 161 2.67 / 3.22, 417
 * 2.10 / 2.92, 929 1.82 / 2.63, 1441 2.12 / 2.73, 1953 1.84 / 2.46; registers search ~120 (the split did
 * not lower them), refine 90 (56-96 with 1024); BC3 high split 6.3-9.5 against 2.40 (its refine pass then
 * ran before the alpha pass; it is last now, not yet measured): the default stays 33 until then. */
#define KILN_EBC_CF3_OPT_MAX 32767u
/* Bits 16-22 (helper bc1fast, 2026-11-26; enc_bc1_cf3.comp says what each does, the same bytes): 16 = 8-bit texels
 * to float without conversion instructions, 17 = the refine pass's texels in shared memory, 18 = the refine pass's
 * spread from the covariance's diagonal only, 19 = exact scoring / channel steps without local arrays, 20 = the
 * refinement's products in float, 21 = the channel steps' rounding by magic adds, 22 = the search setup's
 * products in float (8-bit sources); 27 (helper bc1max) = channel_step's b terms once per channel. KILN_GPU_CF_OPT
 * takes any combination of KILN_EBC_CF3_OPT_BITS (every bit of the max default, and bit 10): the opt-in bits 1-4, 6,
 * 13 and 23-26 (bit 25 is helper bc1m's list since; 3, 4, 6, 13, 23 helper bc1n's variants since, see below), 28,
 * none in a default and none a gain on the H100 / H200 (docs/PERFORMANCE.md: the early exits, P3(i) hoisting,
 * driver unrolling, min / max clamps, the rolled covariance, 16-byte prefix-sum words, the nested searches) were
 * removed from enc_bc1_cf3.comp by helper bc1k (2026-11-26: lavapipe compile time in CI) and are refused; bit 15 is
 * the host's refine flag. */
/* Bits 3, 4, 6, 13, 23 (helper bc1n, 2026-11-27; enc_bc1_cf3.comp says what each does, the same bytes): 3 = the
 * three-colour search four entries per iteration, 4 = the prefix sums' x and y as one 8-byte shared word per row,
 * 6 (with 27) = channel_step's p2 / p3 by one fma and one add, 13 = channel_step's per-index counts and sums in integers
 * (8-bit sources), 23 = the exact scoring by fma with unit weights (8-bit sources, not perceptual). Lost on the device
 * and removed: bit 2 (the refine pass's exact steps of a block's three candidates as one queue per invocation: H200
 * 6.080 / 6.078 against 5.980 / 5.976 ms alone, H100 5.481 against 5.452 / 5.454 ms on top of the new default) and bit
 * 28 (P3(i) loaded once for a group of four entries with one i: H100 6.405 against 5.454 ms). */
#define KILN_EBC_CF3_OPT_BITS (142565281u | KILN_EBC_CF3_PRELIST | 8u | 16u | 64u | 8192u | 8388608u)
/* bit 25 (PRELIST, helper bc1m, 2026-11-27): a first pass of the same shader (bit 26, CLASSIFY, the host's) flags the
 * blocks the CPU encodes and lists the others; the search and refine passes run one invocation per listed block (no
 * invocation idles through a search for a flat block). Binding 2 holds the fallback words, then the list's length
 * and an unused word (both zeroed by the host before the passes: the synchronous path and the ring), then the list
 * (nblocks words). The device-resident mip path drops the bit (ebc_plan_unsplit); a device without subgroup ballot
 * in compute too (make_plan). Bit 30 (REFILL: invocations refilled from an atomic counter) lost to it on the H100
 * (7.01 against 6.03 ms) and was removed. */
#define KILN_EBC_CF3_PRELIST 33554432u
#define KILN_EBC_CF3_CLASSIFY 67108864u
/* the bits whose passes use binding 2's list (ebc_fb_layout) */
#define KILN_EBC_CF3_REFILL KILN_EBC_CF3_PRELIST
/* the bits at high quality (KILN_EBC_CF3_OPT: at max); KILN_GPU_CF_OPT overrides both */
#define KILN_EBC_CF3_OPT_HIGH KILN_EBC_CF3_OPT
/* BC1 / BC1a at high and max since the H200 run of 2026-11-26 05:20 UTC (lead, helper bc1split's final script on the
 * merged build: `KILN_GPU_CF_OPT=o gpu_encode --size 2048 --formats bc1,bc1a,bc3 --qualities high,max --strategies
 * kiln --runs 5 --cpu-runs 1`, one process per o, kernel min ms, every row the CPU's bytes; only the first rows of a
 * process are clean: the SM clock drops from 1980 to ~840 MHz a few seconds into such a process): bc1 high / max 33:
 * 2.688 / 3.623, 24481: 1.649 / 2.270; 4096^2 bc1 max (`--size 4096 --formats bc1 --qualities max --runs 3 --no-cpu`)
 * 33: 14.04, 1953: 9.51, 8097: 9.15, 24481: 8.90 (1.89 Gpix/s). BC3 keeps 33: its rows came late in each process and
 * were not measured cleanly. */
#define KILN_EBC_CF3_OPT_BC1 24481u
/* BC1, BC1a and BC3 colour since helper bc1fast's H100 run (2026-11-26 08:03-08:10 UTC, lead; `KILN_GPU_CF_OPT=o
 * gpu_encode --size 4096 --formats bc1 --qualities max --strategies kiln --runs 3 --no-cpu`, one process per row,
 * kernel min ms): 24481 8.913 / 8.907, 24481 + bits 16-22 = 8347553 7.801, + bits 16-23 8.323 / 8.322; BC3 2048^2
 * (`--formats bc3 --qualities max|high --runs 3 --cpu-runs 1`, every row the CPU's bytes): max 33 3.026 / 3.046,
 * 24481 2.127 / 2.117, 16736161 2.043 / 2.041; high 33 2.399, 24481 1.519, 16736161 1.606. So max takes 8347553 and
 * high 24481, for BC3 as well (BC3 had 33). Max + bit 27 (helper bc1max; the lead's H100 run of 2026-11-26 11:47-11:49
 * UTC, same command, alternated): 8347553 7.799 / 7.804, 142565281 7.625 / 7.625; bits 24-26 (the nested searches)
 * were slower there (8.56-9.17: 154 registers instead of 83) and were removed later (helper bc1k). */
/* Since helper bc1m's H100 runs (2026-11-27 07:51-08:13 UTC, NVIDIA H100 80GB HBM3, one process per row, alternated,
 * kernel min ms of `KILN_GPU_CF_OPT=o gpu_encode --size 4096 --formats bc1 --qualities max --strategies kiln --runs 5
 * --no-cpu`): 142565281 7.630 / 7.631, + bit 30 (REFILL) 7.020 / 7.012, + bit 25 (PRELIST) 6.033 / 6.034, + bit 25 -
 * bit 10 (176118689) 6.005 / 6.002 (2.79 Gpix/s); search pass alone 142565281 6.25 (run 1), PRELIST 4.62. High
 * (`--qualities high`): 24481 6.327, 24481 + bit 25 4.715. Every row the CPU's bytes (2048^2 bc1 / bc1a / bc3 high and
 * max with PRELIST: "same"). */
/* Helper bc1n (2026-11-27): + bits 3, 4, 6, 13, 23 at max (184515577), + bits 3, 4 at high (33578937). The lead's runs
 * (same command, one process per row after a warm-up, alternated, kernel min ms): NVIDIA H200 11:09-11:11 UTC:
 * 176118689 5.980 / 5.976, + bit 4 5.741 / 5.737, + bit 3 5.900 / 5.900, + bit 6 5.911, + bit 23 6.014, + bits 2, 6,
 * 13, 23 5.749, + bits 2, 3, 4, 6, 13, 23 5.593 / 5.594; search pass alone 4.614, + bit 3 4.535, + bit 4 4.375.
 * NVIDIA H100 80GB HBM3 11:45-11:46 UTC: 176118689 5.747, 184515577 **5.452 / 5.454 (3.08 Gpix/s)**, without bit 23
 * 5.520. High (+ bits 3, 4: the search's bits) was not timed cleanly (dropped clock). */
#define KILN_EBC_CF3_OPT_COLOUR_MAX 184515577u
#define KILN_EBC_CF3_OPT_COLOUR_HIGH (KILN_EBC_CF3_OPT_BC1 | KILN_EBC_CF3_PRELIST | 8u | 16u)
#define KILN_EBC_CF3_REFINE 32768u
#define KILN_EBC_CF3_SPLIT 128u
#define KILN_EBC_CF3_LOCAL 32u

typedef struct ebc_pass {
    const char *shader;
    uint32_t spec[5];  /* VARIANT, QUALITY, INPUT_U8, PRELOAD; enc_bc1_cf: CF_LANES */
    uint32_t local;    /* workgroup size */
    uint32_t per_task; /* invocations per task (1, 4, or a whole workgroup) */
    uint32_t tasks_per_block;
    int fallback;      /* 1: writes the fallback bit mask; 2: a fallback word per block */
    int cf_tables;     /* binds the cluster-fit factor tables (binding 3) */
    int flat_tables;   /* binds the single-colour tables (binding 3, flat_table_words) */
    int after_barrier; /* reads what the passes before it wrote (the dither post-passes) */
    int bc4_list;      /* BC4 / BC5 max split (KILN_EBC_BC4_SPLIT): 1 the pre-pass (enc_bc4.comp MAX_LIST) that
                        * appends the tasks with heuristic error > 0 to binding 2, 2 the pool over that list, 3 the
                        * step-1 kernel between them (split 2) */
} ebc_pass;

typedef struct ebc_plan {
    ebc_pass pass[5]; /* the last only for dithering (add_dither_passes; the synchronous path); the split
                       * cluster fit (KILN_EBC_CF3_SPLIT) adds its refine pass after the colour (search) pass
                       * and BC3's alpha pass; bit 25 (KILN_EBC_CF3_PRELIST) its classify pass first */
    int npass;
    int prepared_words; /* 0: raw RGBA8 input; 1: BC4 channel bytes; 2: BC1 R16G16 / B16A8 */
    int channel_kind;   /* prepared 1: 0 unsigned R[G], 1 signed */
    int signed_map;
} ebc_plan;

static int is_bc1(kiln_format f)
{
    return f == KILN_FORMAT_BC1_RGB_UNORM || f == KILN_FORMAT_BC1_RGB_SRGB || f == KILN_FORMAT_BC1_RGBA_UNORM ||
           f == KILN_FORMAT_BC1_RGBA_SRGB;
}
static int is_bc3(kiln_format f) { return f == KILN_FORMAT_BC3_UNORM || f == KILN_FORMAT_BC3_SRGB; }

/* ---------------------------------------------------------------- host-side texel preparation */

typedef struct prep_job {
    const kiln_image *img;
    uint32_t *out;
    uint32_t y0, rows;
    int words;       /* 1 or 2 per texel */
    int is_signed;   /* words == 1: SNORM channel values */
    int signed_map;  /* unorm x -> 2x - 1 (non-float sources of SNORM formats) */
} prep_job;

static inline float clamp01(float v) { return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v; }

/* What encode.c's fetch_texel puts in a kiln_block for texel (x, y), for one channel c. */
static void texel_values(const kiln_image *img, uint32_t x, uint32_t y, int c, int signed_map, uint8_t *u8,
                         uint16_t *u16, float *f)
{
    size_t base = ((size_t)y * img->width + x) * 4 + (size_t)c;
    switch (img->type) {
    case KILN_PIXEL_U8: {
        uint8_t p = ((const uint8_t *)img->pixels)[base];
        *u8 = p;
        *u16 = (uint16_t)(p * 257u);
        *f = (float)p * (1.0f / 255.0f);
        break;
    }
    case KILN_PIXEL_U16: {
        uint16_t p = ((const uint16_t *)img->pixels)[base];
        *u8 = (uint8_t)(((uint32_t)p * 255u + 32767u) / 65535u);
        *u16 = p;
        *f = (float)p * (1.0f / 65535.0f);
        break;
    }
    default: {
        float v = ((const float *)img->pixels)[base];
        if (v != v) v = 0.0f;
        float u = clamp01(v);
        *u8 = (uint8_t)(u * 255.0f + 0.5f);
        *u16 = (uint16_t)(u * 65535.0f + 0.5f);
        *f = v;
        break;
    }
    }
    if (signed_map) *f = *f * 2.0f - 1.0f;
}

/* bc4_enc.c channel_values for one texel. */
static int channel_value(const kiln_image *img, uint32_t x, uint32_t y, int c, int is_signed, int signed_map)
{
    uint8_t u8;
    uint16_t u16;
    float f;
    texel_values(img, x, y, c, signed_map, &u8, &u16, &f);
    if (!is_signed) return u8;
    if (!(f >= -1.0f)) f = -1.0f;
    if (f > 1.0f) f = 1.0f;
    float s = f * 127.0f;
    return (int)(s < 0 ? s - 0.5f : s + 0.5f);
}

static void prep_rows(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    const prep_job *j = user;
    const uint32_t w = j->img->width;
    for (size_t r = begin; r < end; r++) {
        uint32_t y = j->y0 + (uint32_t)r;
        uint32_t *o = j->out + r * (size_t)w * (size_t)j->words;
        for (uint32_t x = 0; x < w; x++) {
            if (j->words == 1) {
                int v0 = channel_value(j->img, x, y, 0, j->is_signed, j->signed_map);
                int v1 = channel_value(j->img, x, y, 1, j->is_signed, j->signed_map);
                o[x] = ((uint32_t)v0 & 255u) | (((uint32_t)v1 & 255u) << 8);
            } else {
                uint8_t u8[4];
                uint16_t u16[4];
                float f;
                for (int c = 0; c < 4; c++) texel_values(j->img, x, y, c, 0, &u8[c], &u16[c], &f);
                o[2 * x] = (uint32_t)u16[0] | (uint32_t)u16[1] << 16;
                o[2 * x + 1] = (uint32_t)u16[2] | (uint32_t)u8[3] << 16;
            }
        }
    }
}

/* For BC4 with a prepared input the shader reads channels 0 and 1 of the word: BC3 alpha would need
 * channel 3, so BC3 always takes the two-word BC1 layout for colour and the alpha byte (A8) for its
 * channel pass (the shader reads bits 16..23 of word 1). */

/* ---------------------------------------------------------------- CPU fallback blocks */

/* encode.c's fetch_block for block (bx, by). */
static void fill_block(const kiln_image *img, uint32_t bx, uint32_t by, int signed_map, kiln_block *b)
{
    for (uint32_t y = 0; y < 4; y++) {
        uint32_t sy = by * 4 + y;
        if (sy >= img->height) sy = img->height - 1;
        for (uint32_t x = 0; x < 4; x++) {
            uint32_t sx = bx * 4 + x;
            if (sx >= img->width) sx = img->width - 1;
            int t = (int)(y * 4 + x);
            for (int c = 0; c < 4; c++)
                texel_values(img, sx, sy, c, signed_map, &b->rgba8[t * 4 + c], &b->rgba16[t * 4 + c], &b->f[t * 4 + c]);
        }
    }
}

typedef struct fallback_job {
    const kiln_image *img;
    const kiln_encode_params *params;
    kiln_block_encode_fn fn;
    const uint32_t *list;
    uint8_t *dst;
    uint32_t bx, block_bytes;
    int signed_map;
} fallback_job;

static void fallback_blocks(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    const fallback_job *j = user;
    kiln_block blk;
    for (size_t i = begin; i < end; i++) {
        uint32_t b = j->list[i];
        fill_block(j->img, b % j->bx, b / j->bx, j->signed_map, &blk);
        j->fn(&blk, j->dst + (size_t)b * j->block_bytes, j->params);
    }
}

/* ---------------------------------------------------------------- cluster-fit tables */

/* enc_bc1_cf.comp's binding 3 (w NULL: only counts): the four- and three-colour entries n4, n3, the
 * float 1.0 (the shader's unfoldable one), then per entry the 8 factor rows of bc1_enc_tables.h (float
 * bits) and i | j << 8 | k << 16, in the CPU's table order; entries whose penalty is not below 1e29
 * (padding, rank-1 partitions: the CPU drops them) are left out. Then, from the next multiple of 4
 * words, the same entries for enc_bc1_cf2.comp's 16-byte loads, 12 words each: Ah, Bh, C, ijk, the
 * four products' factors p1..p4, pen, 0, 0, 0. Returns the word count. */
static size_t cf_table_words(uint32_t *w)
{
    size_t o = 3, n_all = 0;
    uint32_t n[2] = {0, 0};
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            o = (3 + 9 * n_all + 3) / 4 * 4;
            if (w)
                for (size_t z = 3 + 9 * n_all; z < o; z++) w[z] = 0;
        }
        for (int four = 1; four >= 0; four--) {
            const int entries = (four ? KILN_CF4_VECTORS : KILN_CF3_VECTORS) * 16;
            for (int e = 0; e < entries; e++) {
                const float(*t)[16] = four ? k_cf4[e / 16] : k_cf3[e / 16];
                if (!(t[7][e % 16] < 1e29f)) continue;
                const uint32_t ijk = four ? (uint32_t)k_cf4_ijk[e][0] | (uint32_t)k_cf4_ijk[e][1] << 8 | (uint32_t)k_cf4_ijk[e][2] << 16
                                          : (uint32_t)k_cf3_ij[e][0] | (uint32_t)k_cf3_ij[e][1] << 8;
                if (pass == 0) {
                    if (w) {
                        for (int r = 0; r < 8; r++) memcpy(&w[o + (size_t)r], &t[r][e % 16], 4);
                        w[o + 8] = ijk;
                    }
                    o += 9;
                    n[four ? 0 : 1]++;
                    n_all++;
                } else {
                    if (w) {
                        for (int r = 0; r < 3; r++) memcpy(&w[o + (size_t)r], &t[r][e % 16], 4);
                        w[o + 3] = ijk;
                        for (int r = 3; r < 8; r++) memcpy(&w[o + 1 + (size_t)r], &t[r][e % 16], 4);
                        w[o + 9] = w[o + 10] = w[o + 11] = 0;
                    }
                    o += 12;
                }
            }
        }
    }
    if (w) {
        const float one = 1.0f;
        w[0] = n[0];
        w[1] = n[1];
        memcpy(&w[2], &one, 4);
    }
    return o;
}

/* 1 when every entry cf_table_words keeps (penalty below 1e29) has penalty +0 (enc_bc1_cf3.comp's
 * CF_OPT bit 4096 relies on it). */
static int cf_pens_zero(void)
{
    for (int four = 1; four >= 0; four--) {
        const int entries = (four ? KILN_CF4_VECTORS : KILN_CF3_VECTORS) * 16;
        for (int e = 0; e < entries; e++) {
            const float p = (four ? k_cf4[e / 16] : k_cf3[e / 16])[7][e % 16];
            if (p < 1e29f && (p != 0.0f || signbit(p))) return 0;
        }
    }
    return 1;
}

/* enc_bc1.comp's binding 3: bc1_enc_tables.h's single-colour tables (flat_solution), three words per
 * 8-bit value v: bytes near_5, near_6, match4_5 q0, q1, match4_6 q0, q1, match3_5 q0, q1, match3_6 q0,
 * q1 (then zeros). */
#define EBC_FLAT_WORDS (256u * 3u)
static void flat_table_words(uint32_t w[EBC_FLAT_WORDS])
{
    for (int v = 0; v < 256; v++) {
        const uint8_t b[12] = {k_bc1_near_5[v][0],    k_bc1_near_6[v][0],    k_bc1_match4_5[v][0], k_bc1_match4_5[v][1],
                               k_bc1_match4_6[v][0],  k_bc1_match4_6[v][1],  k_bc1_match3_5[v][0], k_bc1_match3_5[v][1],
                               k_bc1_match3_6[v][0],  k_bc1_match3_6[v][1],  0,                    0};
        for (int k = 0; k < 3; k++)
            w[v * 3 + k] = (uint32_t)b[4 * k] | (uint32_t)b[4 * k + 1] << 8 | (uint32_t)b[4 * k + 2] << 16 |
                           (uint32_t)b[4 * k + 3] << 24;
    }
}

/* ---------------------------------------------------------------- planning */

static int device_has_fp64(kiln_gpu *gpu)
{
    VkPhysicalDeviceFeatures f;
    vkGetPhysicalDeviceFeatures(gpu->physical, &f);
    return f.shaderFloat64 == VK_TRUE;
}

static int device_has_ballot(kiln_gpu *gpu)
{
    VkPhysicalDeviceSubgroupProperties sg = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sg};
    vkGetPhysicalDeviceProperties2(gpu->physical, &p2);
    return (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) && (sg.supportedOperations & VK_SUBGROUP_FEATURE_BALLOT_BIT);
}

/* shaderFloat16, which vk_device.c enables wherever the device (Vulkan 1.2+) offers it (BC4 / BC5 max's 16-bit paths) */
static int device_has_f16(kiln_gpu *gpu)
{
    if (gpu->props.apiVersion < VK_API_VERSION_1_2) return 0;
    VkPhysicalDeviceShaderFloat16Int8Features f16 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f16};
    vkGetPhysicalDeviceFeatures2(gpu->physical, &f2);
    return f16.shaderFloat16 == VK_TRUE;
}

static kiln_status make_plan(kiln_context *ctx, kiln_gpu *gpu, const kiln_image *img, const kiln_encode_params *p,
                             const kiln_format_info *fi, ebc_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    const kiln_format f = fi->format;
    const int seed = p->gpu_strategy == 1;
    const uint32_t q = (uint32_t)p->quality;
    const int u8 = img->type == KILN_PIXEL_U8;
    if (p->gpu_strategy != 0 && p->gpu_strategy != 1)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "gpu_strategy %d is not 0 (kiln) or 1 (seed)", p->gpu_strategy);
    if (!seed && !device_has_fp64(gpu))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s: the kiln GPU encoder needs shaderFloat64, which %s lacks", fi->name,
                          gpu->props.deviceName);
    /* dithering: only the synchronous path (kiln__gpu_encode_bc plans without it, then adds the dither
     * post-passes); the pipelined ring and the device-resident mip path refuse it here */
    if (p->dither && !seed)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s with dithering: only the synchronous GPU encoder dithers", fi->name);
    plan->signed_map = (fi->flags & KILN_FF_SIGNED) && img->type != KILN_PIXEL_F32;
    const int colour = is_bc1(f) || is_bc3(f);
    ebc_pass refine; /* design 3 split (KILN_EBC_CF3_SPLIT): the refine pass, added last */
    int split = 0;
    memset(&refine, 0, sizeof refine);
    if (colour) {
        uint32_t variant = is_bc3(f) ? KILN_EBC_BC3C
                           : (fi->flags & KILN_FF_ALPHA1) ? KILN_EBC_BC1A : KILN_EBC_BC1;
        plan->prepared_words = u8 ? 0 : 2;
        ebc_pass *ps = &plan->pass[plan->npass++];
        ps->spec[0] = variant;
        ps->spec[1] = q;
        ps->spec[2] = u8 ? 1u : 0u;
        ps->spec[3] = 1u;
        ps->tasks_per_block = 1;
        if (!seed && q > KILN_QUALITY_NORMAL) {
            uint32_t lanes = KILN_EBC_CFK_LANES;
            const char *env = getenv("KILN_GPU_CF_LANES");
            if (env && env[0]) {
                unsigned long v = strtoul(env, NULL, 10);
                if (v < 8 || v > 64 || (v & (v - 1)) != 0)
                    return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "KILN_GPU_CF_LANES=%s is not 8, 16, 32 or 64", env);
                lanes = (uint32_t)v;
            }
            int design = KILN_EBC_CF_DESIGN(q);
            const char *denv = getenv("KILN_GPU_CF_DESIGN");
            if (denv && denv[0]) {
                if ((denv[0] < '1' || denv[0] > '3') || denv[1] != 0)
                    return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "KILN_GPU_CF_DESIGN=%s is not 1, 2 or 3", denv);
                design = denv[0] - '0';
            }
            ps->shader = design == 1 ? "enc_bc1_cf" : design == 2 ? "enc_bc1_cf2" : "enc_bc1_cf3";
            ps->local = KILN_EBC_LOCAL;
            ps->per_task = lanes;
            ps->spec[4] = lanes;
            if (design == 3) { /* one invocation per block; specialisation constant 5 = CF_OPT bits */
                uint32_t opt = q == KILN_QUALITY_MAX ? KILN_EBC_CF3_OPT_COLOUR_MAX : KILN_EBC_CF3_OPT_COLOUR_HIGH;
                const char *oenv = getenv("KILN_GPU_CF_OPT");
                if (oenv && oenv[0]) {
                    char *end = NULL;
                    unsigned long v = strtoul(oenv, &end, 10);
                    if (!end || *end || (v & ~(unsigned long)KILN_EBC_CF3_OPT_BITS))
                        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT,
                                          "KILN_GPU_CF_OPT=%s has bits outside %u (enc_bc1_cf3.comp's variants)", oenv,
                                          (unsigned)KILN_EBC_CF3_OPT_BITS);
                    opt = (uint32_t)v;
                }
                if ((opt & 4096u) && !cf_pens_zero()) opt &= ~4096u;
                if ((opt & KILN_EBC_CF3_REFILL) && !device_has_ballot(gpu)) opt &= ~KILN_EBC_CF3_REFILL;
                ps->per_task = 1;
                ps->spec[4] = opt;
                /* shared memory per block: 472 bytes (8-bit sources; 268 with CF_OPT 32), 664 (16-bit
                 * sources: float texels): 32 blocks per workgroup fit every device's 32 KiB;
                 * KILN_GPU_CF_LOCAL=64 for experiments (8-bit sources only) */
                ps->local = KILN_EBC_CF3_LOCAL;
                const char *lenv = getenv("KILN_GPU_CF_LOCAL");
                if (lenv && lenv[0]) {
                    if (strcmp(lenv, "32") != 0 && strcmp(lenv, "64") != 0)
                        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "KILN_GPU_CF_LOCAL=%s is not 32 or 64", lenv);
                    ps->local = (uint32_t)atoi(lenv);
                }
                if (!u8) ps->local = 32;
            }
            ps->fallback = 2;
            ps->cf_tables = 1;
            if (design == 3 && (ps->spec[4] & KILN_EBC_CF3_PRELIST)) { /* bit 25: the classify pass first */
                ebc_pass search = *ps;
                ps->spec[4] |= KILN_EBC_CF3_CLASSIFY;
                search.after_barrier = 1;
                plan->pass[plan->npass++] = search;
                ps = &plan->pass[plan->npass - 1];
            }
            if (design == 3 && (ps->spec[4] & KILN_EBC_CF3_SPLIT)) { /* the refine pass, after a barrier */
                refine = *ps;
                refine.spec[4] |= KILN_EBC_CF3_REFINE;
                refine.after_barrier = 1;
                if (refine.spec[4] & 1024u) { /* one invocation per candidate: 3 per block, 32 blocks per workgroup */
                    refine.local = 96;
                    refine.per_task = 3;
                }
                split = 1;
            }
        } else if (!seed) {
            ps->shader = "enc_bc1";
            ps->local = KILN_EBC_LOCAL;
            ps->per_task = 1;
            ps->fallback = 1;
            ps->flat_tables = 1;
        } else if (q <= KILN_QUALITY_NORMAL) {
            ps->shader = "enc_bc1_seed";
            ps->local = KILN_EBC_LOCAL;
            ps->per_task = 1;
        } else {
            ps->shader = "enc_bc1_cf_seed";
            ps->local = KILN_EBC_CF_LOCAL;
            ps->per_task = KILN_EBC_CF_LOCAL;
        }
    }
    if (!is_bc1(f)) {
        uint32_t variant;
        switch (f) {
        case KILN_FORMAT_BC4_UNORM: variant = KILN_EBC_BC4U; break;
        case KILN_FORMAT_BC4_SNORM: variant = KILN_EBC_BC4S; break;
        case KILN_FORMAT_BC5_UNORM: variant = KILN_EBC_BC5U; break;
        case KILN_FORMAT_BC5_SNORM: variant = KILN_EBC_BC5S; break;
        case KILN_FORMAT_BC3_UNORM:
        case KILN_FORMAT_BC3_SRGB: variant = KILN_EBC_BC3A; break;
        default: return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s has no GPU encoder", fi->name);
        }
        if (!colour) {
            plan->prepared_words = u8 ? 0 : 1;
            plan->channel_kind = (fi->flags & KILN_FF_SIGNED) ? 1 : 0;
        }
        ebc_pass *ps = &plan->pass[plan->npass++];
        ps->spec[0] = variant;
        ps->spec[1] = q;
        ps->spec[2] = u8 ? 1u : 0u;
        ps->spec[3] = 1u;
        ps->tasks_per_block = (variant == KILN_EBC_BC5U || variant == KILN_EBC_BC5S) ? 2 : 1;
        if (seed) {
            ps->shader = "enc_bc4_seed";
            ps->local = KILN_EBC_LOCAL;
            ps->per_task = 4;
        } else if (q == KILN_QUALITY_MAX) {
            /* KILN_GPU_BC4_MAX (bench, tests): "pool" (the only design left) enc_bc4_max_pool, the quadtree
             * cells of a workgroup's tasks in one shared pool (helper bc4lanes; KILN_GPU_BC4_POOL_CAP=N shrinks its
             * stack: tests of the overflow path; KILN_GPU_BC4_POOL_WG=32|64|128 its workgroup). The designs that
             * lost on the H100, "quadtree" (enc_bc4_max.comp, one invocation walking its task's tree) and "v1"
             * (enc_bc4_max_v1.comp, a workgroup per task), were removed (helper bc4k, 2026-11-26). */
            const char *design = getenv("KILN_GPU_BC4_MAX");
            if (!design || !design[0]) design = KILN_EBC_BC4_MAX_DEFAULT;
            ps->local = KILN_EBC_LOCAL;
            ps->per_task = 1;
            if (strcmp(design, "pool") == 0) {
                ps->shader = "enc_bc4_max_pool";
                const char *cap = getenv("KILN_GPU_BC4_POOL_CAP"), *wg = getenv("KILN_GPU_BC4_POOL_WG");
                if (cap && cap[0]) {
                    char *end;
                    unsigned long c = strtoul(cap, &end, 10);
                    if (*end || c == 0 || c > 8192)
                        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "KILN_GPU_BC4_POOL_CAP=%s is not 1..8192", cap);
                    ps->spec[4] = (uint32_t)c;
                }
                if (wg && wg[0]) { /* workgroup size = tasks sharing a pool (bench; 128: 31 KB of shared memory) */
                    if (strcmp(wg, "32") != 0 && strcmp(wg, "64") != 0 && strcmp(wg, "128") != 0)
                        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "KILN_GPU_BC4_POOL_WG=%s is not 32, 64 or 128", wg);
                    ps->local = (uint32_t)atoi(wg);
                }
                /* bench: 1 = no search, 2 = the split's pre-pass alone (wrong bytes) */
                const char *diag = getenv("KILN_GPU_BC4_POOL_DIAG");
                if (diag && strcmp(diag, "1") == 0) ps->spec[4] |= 16384u;
                /* KILN_GPU_BC4_POOL_OPT (bench, tests; helper bc4max): the shader's option bits 16+
                 * (enc_bc4_max_pool.comp), replacing the default KILN_EBC_BC4_POOL_OPT */
                const char *popt = getenv("KILN_GPU_BC4_POOL_OPT");
                uint32_t pool_opt = KILN_EBC_BC4_POOL_OPT;
                if (popt && popt[0]) {
                    char *end;
                    unsigned long o = strtoul(popt, &end, 0);
                    if (*end || (o & 0xffffu) != 0 || o > 0xffffffffu)
                        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "KILN_GPU_BC4_POOL_OPT=%s: only bits 16-31", popt);
                    pool_opt = (uint32_t)o;
                }
                ps->spec[4] |= pool_opt;
                /* bit 29 (helper bc4n): the cell bound in 16-bit floats, enc_bc4_max_pool_h (shaderFloat16) */
                if (pool_opt & KILN_EBC_BC4_F16_BOUND) {
                    if (!device_has_f16(gpu))
                        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "KILN_GPU_BC4_POOL_OPT=%s: bit 29 needs shaderFloat16", popt);
                    ps->shader = "enc_bc4_max_pool_h";
                }
                int split = KILN_EBC_BC4_SPLIT;
                const char *senv = getenv("KILN_GPU_BC4_SPLIT");
                if (senv && senv[0]) {
                    if (strcmp(senv, "0") != 0 && strcmp(senv, "1") != 0 && strcmp(senv, "2") != 0)
                        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "KILN_GPU_BC4_SPLIT=%s is not 0, 1 or 2", senv);
                    split = senv[0] - '0';
                }
                if (pool_opt & (KILN_EBC_BC4_FROM_LIST | 0x3000000u))
                    return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "KILN_GPU_BC4_POOL_OPT=%s: bits 23-25 are KILN_GPU_BC4_SPLIT's", popt);
                if (split == 2 && (pool_opt & 0x210000u) != 0x10000u)
                    return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "KILN_GPU_BC4_SPLIT=2 needs pool option bit 16 without bit 21");
                if (split && !colour) { /* the pre-pass first, then the pool over its list */
                    ebc_pass pool = *ps;
                    pool.spec[4] |= KILN_EBC_BC4_FROM_LIST;
                    const char *f16e = getenv("KILN_GPU_BC4_F16");
                    const int f16 = device_has_f16(gpu) && !(f16e && f16e[0] == '0');
                    if (!(popt && popt[0])) {
                        pool.spec[4] |= KILN_EBC_BC4_LIST_STACK16 | KILN_EBC_BC4_LIST_OPT | KILN_EBC_BC4_BRANCH_FREE;
                        if (f16) {
                            pool.spec[4] |= KILN_EBC_BC4_F16_BOUND;
                            pool.shader = "enc_bc4_max_pool_h";
                        } else {
                            pool.spec[4] |= KILN_EBC_BC4_INT_ALL;
                        }
                    }
                    if (!(wg && wg[0])) pool.local = KILN_EBC_BC4_LIST_WG;
                    pool.after_barrier = 1;
                    pool.bc4_list = 2;
                    memset(ps, 0, sizeof *ps);
                    ps->shader = "enc_bc4";
                    ps->spec[0] = variant;
                    ps->spec[2] = u8 ? 1u : 0u;
                    ps->spec[3] = 1u;
                    ps->spec[4] = 1u; /* MAX_LIST */
                    if (f16) ps->shader = "enc_bc4_h";
                    ps->local = KILN_EBC_LOCAL;
                    ps->per_task = 1;
                    ps->tasks_per_block = pool.tasks_per_block;
                    ps->bc4_list = 1;
                    if (split == 2) { /* step 1 (records to binding 2), then the search reading them */
                        ebc_pass s1 = pool;
                        s1.spec[4] |= 0x1000000u;
                        s1.bc4_list = 3;
                        plan->pass[plan->npass++] = s1;
                        pool.spec[4] |= 0x2000000u;
                    }
                    plan->pass[plan->npass++] = pool;
                    if (diag && strcmp(diag, "2") == 0) plan->npass -= split == 2 ? 2 : 1; /* the pre-pass alone */
                }
            } else {
                return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "KILN_GPU_BC4_MAX=%s is not pool (v1 and quadtree were removed)", design);
            }
        } else {
            ps->shader = "enc_bc4";
            ps->local = KILN_EBC_LOCAL;
            ps->per_task = 1;
        }
    }
    /* the split cluster fit's refine pass last (after BC3's alpha pass, which then overlaps the colour search
     * as it overlaps the one-pass colour encoder: the H200 run of 2026-11-26 04:34 UTC had BC3 high 2.40 ms in
     * one pass and 6.3-9.5 ms split with the refine pass before the alpha pass) */
    if (split) plan->pass[plan->npass++] = refine;
    /* bench only (helper bc1max): KILN_GPU_CF_BENCH_NO_REFINE=1 drops the split's refine pass, so the kernel
     * time is the search pass's alone (the bytes are then wrong) */
    const char *nre = getenv("KILN_GPU_CF_BENCH_NO_REFINE");
    if (split && nre && nre[0] == '1') plan->npass--;
    /* seed: PRELOAD from the environment (bench / tests: KILN_GPU_PRELOAD=0 reads texels directly) */
    const char *pre = getenv("KILN_GPU_PRELOAD");
    if (seed && pre && pre[0] == '0')
        for (int i = 0; i < plan->npass; i++) plan->pass[i].spec[3] = 0;
    /* Specialisation constants only where the shader's code depends on them (each combination is a
     * pipeline to compile): the kiln BC4 heuristic takes its quality from the push constants
     * (flags bits 10-11); enc_bc1_seed stages nothing (PRELOAD fixed at 1). */
    for (int i = 0; i < plan->npass; i++) {
        ebc_pass *ps = &plan->pass[i];
        if (strcmp(ps->shader, "enc_bc1_cf_seed") != 0 && strcmp(ps->shader, "enc_bc1") != 0) ps->spec[1] = 0;
        if (strcmp(ps->shader, "enc_bc1_seed") == 0) ps->spec[3] = 1;
    }
    return KILN_OK;
}

/* The plan with design 3's split (KILN_EBC_CF3_SPLIT) undone: its refine pass dropped and the search pass
 * running the whole encoder again (the device-resident mip path records its passes without barriers). */
static void ebc_plan_unsplit(ebc_plan *plan)
{
    for (int i = 0; i < plan->npass; i++) { /* BC4 / BC5 max (KILN_EBC_BC4_SPLIT): the pool alone, with its heuristic */
        ebc_pass *ps = &plan->pass[i];
        if (ps->bc4_list == 1 || ps->bc4_list == 3) {
            for (int k = i + 1; k < plan->npass; k++) plan->pass[k - 1] = plan->pass[k];
            plan->npass--;
            i--;
        } else if (ps->bc4_list == 2) {
            ps->spec[4] &= ~(KILN_EBC_BC4_FROM_LIST | 0x2000000u);
            ps->after_barrier = 0;
            ps->bc4_list = 0;
        }
    }
    for (int i = 0; i < plan->npass; i++) {
        ebc_pass *ps = &plan->pass[i];
        if (ps->cf_tables && strcmp(ps->shader, "enc_bc1_cf3") == 0) {
            if (ps->spec[4] & KILN_EBC_CF3_CLASSIFY) { /* bit 25's first pass */
                for (int k = i + 1; k < plan->npass; k++) plan->pass[k - 1] = plan->pass[k];
                plan->npass--;
                i--;
                continue;
            }
            if (ps->spec[4] & KILN_EBC_CF3_PRELIST) ps->after_barrier = 0;
            ps->spec[4] &= ~KILN_EBC_CF3_REFILL;
        }
        if (!ps->cf_tables || strcmp(ps->shader, "enc_bc1_cf3") != 0 || !(ps->spec[4] & KILN_EBC_CF3_SPLIT)) continue;
        if (ps->spec[4] & KILN_EBC_CF3_REFINE) {
            for (int k = i + 1; k < plan->npass; k++) plan->pass[k - 1] = plan->pass[k];
            plan->npass--;
            i--;
        } else {
            ps->spec[4] &= ~KILN_EBC_CF3_SPLIT;
        }
    }
}

/* params->dither, kiln strategy (helper gpudither). bc1_enc.c and bc4_enc.c dither only the final
 * indices of the endpoints their searches chose (bc1: select_indices_dither in finish(); bc4/bc5:
 * redither), so the GPU runs the plan without dithering and then a post-pass that re-picks the
 * indices with the CPU's Floyd-Steinberg loop and arithmetic: enc_bc1_dither.comp (BC1, BC1a, BC3
 * colour) and enc_bc4_dither.comp (BC4, BC5; the CPU does not dither BC3's alpha). One place where
 * dithering changes the search: at fast quality the CPU's batch (fast_batch) sends every block to its
 * per-block encoder, so enc_bc1.comp then runs its per_block on every block (ALL_PER_BLOCK,
 * specialisation constant 5). Blocks flagged for the CPU are re-encoded there with params->dither, as
 * before. */
static void add_dither_passes(const kiln_format_info *fi, const kiln_encode_params *p, ebc_plan *plan)
{
    ebc_pass *c = &plan->pass[0]; /* make_plan: the colour pass first, else the channel pass */
    ebc_pass *d = &plan->pass[plan->npass++];
    memset(d, 0, sizeof *d);
    d->spec[0] = c->spec[0]; /* VARIANT */
    d->spec[2] = c->spec[2]; /* INPUT_U8 */
    d->spec[3] = 1u;
    d->local = KILN_EBC_LOCAL;
    d->per_task = 1;
    d->after_barrier = 1;
    if (is_bc1(fi->format) || is_bc3(fi->format)) {
        if (strcmp(c->shader, "enc_bc1") == 0 && p->quality == KILN_QUALITY_FAST) c->spec[4] = 1u; /* ALL_PER_BLOCK */
        d->shader = "enc_bc1_dither";
        d->tasks_per_block = 1;
    } else {
        d->shader = "enc_bc4_dither";
        d->tasks_per_block = c->tasks_per_block; /* BC5: two channel tasks */
    }
}

/* A plan's binding 2 for nblocks blocks (kiln__gpu_encode_bc and the ring): fallback flags, a bit per block
 * (enc_bc1.comp) or a word per block (enc_bc1_cf3.comp), then with CF_OPT bit 25 two counters and a list of nblocks
 * words; or, for BC4 / BC5 max in several kernels (bc4_list), a count, a word, and 2 or 18 words per channel task.
 * Returns the words to bind; *flag_bytes = the bytes of flags to download (0: none), *zero_at / *zero_bytes = the
 * counters to zero before the dispatches (*zero_bytes 0: none), *word_per_block = 1 for a word per block. */
static size_t ebc_fb_layout(const ebc_plan *p, size_t nblocks, size_t *flag_bytes, size_t *zero_at, size_t *zero_bytes,
                            int *word_per_block)
{
    int any = 0, per_block = 0, refill = 0, list = 0;
    for (int i = 0; i < p->npass; i++) {
        any |= p->pass[i].fallback != 0;
        per_block |= p->pass[i].fallback == 2;
        refill |= p->pass[i].cf_tables && strcmp(p->pass[i].shader, "enc_bc1_cf3") == 0 &&
                  (p->pass[i].spec[4] & KILN_EBC_CF3_REFILL);
        if (p->pass[i].bc4_list) list = p->pass[i].bc4_list == 3 || list == 18 ? 18 : 2; /* words per channel task */
    }
    *word_per_block = per_block;
    if (list) {
        *flag_bytes = 0;
        *zero_at = 0;
        *zero_bytes = 4;
        return 2 + 2 * (size_t)list * nblocks;
    }
    const size_t flags = per_block ? nblocks : (nblocks + 31) / 32;
    *flag_bytes = any ? flags * 4 : 0;
    *zero_at = flags * 4;
    *zero_bytes = refill ? 8 : 0;
    return flags + (refill ? 2 + nblocks : 0);
}

/* ---------------------------------------------------------------- the encoder */

kiln_status kiln__gpu_encode_bc(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                                uint32_t subgroup_size, uint8_t *dst, size_t dst_size)
{
    const kiln_format_info *fi = kiln_format_get_info(params->format);
    if (!fi) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_encode: unknown format %d", (int)params->format);
    if (!img || !img->pixels || img->width == 0 || img->height == 0)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "GPU encode: empty image");
    if (img->type != KILN_PIXEL_U8 && img->type != KILN_PIXEL_U16 && img->type != KILN_PIXEL_F32)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "GPU encode: bad pixel type %d", (int)img->type);
    const size_t need = kiln_format_image_size(fi->format, img->width, img->height);
    if (need == 0 || !dst || dst_size < need)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "GPU encode: %ux%u %s needs %zu bytes, the buffer holds %zu",
                          img->width, img->height, fi->name, need, dst ? dst_size : (size_t)0);
    kiln_gpu *gpu;
    KILN_TRY(kiln__gpu_get(ctx, &gpu));
    ebc_plan plan;
    const int dither = params->dither && params->gpu_strategy == 0;
    if (dither) {
        kiln_encode_params nd = *params;
        nd.dither = 0;
        KILN_TRY(make_plan(ctx, gpu, img, &nd, fi, &plan));
        add_dither_passes(fi, params, &plan);
    } else {
        KILN_TRY(make_plan(ctx, gpu, img, params, fi, &plan));
    }

    const kiln_vk_pipeline *pipes[5]; /* ebc_plan.pass */
    for (int i = 0; i < plan.npass; i++) {
        kiln_vk_pipeline_desc desc = {
            .shader = plan.pass[i].shader,
            .local_size = plan.pass[i].local,
            .spec = plan.pass[i].spec,
            .nspec = plan.pass[i].cf_tables || plan.pass[i].spec[4] ? 5u : 4u,
            .nbindings = plan.pass[i].cf_tables || plan.pass[i].flat_tables ? 4u : 3u,
            .push_size = KILN_EBC_PUSH_WORDS * 4,
            .subgroup_size = subgroup_size,
        };
        KILN_TRY(kiln_vk_pipeline_get(ctx, gpu, &desc, &pipes[i]));
    }

    const uint32_t w = img->width, h = img->height;
    const uint32_t bx = (w + 3) / 4, by = (h + 3) / 4;
    const uint32_t words_per_texel = plan.prepared_words == 2 ? 2u : 1u;
    const size_t in_row = (size_t)w * 4 * 4 * words_per_texel; /* bytes per block row of input */
    const size_t out_row = (size_t)bx * fi->block_bytes;
    size_t limit = gpu->props.limits.maxStorageBufferRange;
    if (limit > EBC_BATCH_MAX) limit = EBC_BATCH_MAX;
    const char *dbg = getenv("KILN_GPU_BATCH_BYTES");
    if (dbg && strtoull(dbg, NULL, 10) > 0 && strtoull(dbg, NULL, 10) < limit) limit = (size_t)strtoull(dbg, NULL, 10);
    size_t rows = limit / (in_row > out_row ? in_row : out_row);
    int bc4_list = 0; /* BC4 / BC5 max split: binding 2 holds the pre-pass's list (+ step 1's records) */
    for (int i = 0; i < plan.npass; i++) bc4_list |= plan.pass[i].bc4_list != 0;
    size_t fl, za, zb;
    int wpb;
    while (rows > 0 && ebc_fb_layout(&plan, rows * bx, &fl, &za, &zb, &wpb) * 4 > limit) rows--; /* binding 2 too */
    if (rows == 0)
        return kiln__fail(ctx, KILN_ERR_TOO_LARGE, "a block row of the %ux%u image exceeds the device's buffer range", w, h);
    if (rows > by) rows = by;
    int any_fallback = 0, cf_tables = 0, flat_tables = 0;
    for (int i = 0; i < plan.npass; i++) {
        any_fallback |= plan.pass[i].fallback != 0;
        cf_tables |= plan.pass[i].cf_tables;
        flat_tables |= plan.pass[i].flat_tables;
    }
    const size_t fb_words = ebc_fb_layout(&plan, rows * bx, &fl, &za, &zb, &wpb); /* binding 2 at its largest */

    kiln_vk_io in, out, fbits, tab;
    memset(&in, 0, sizeof in);
    memset(&out, 0, sizeof out);
    memset(&fbits, 0, sizeof fbits);
    memset(&tab, 0, sizeof tab);
    uint32_t *flist = NULL;
    size_t nflagged_total = 0;
    /* KILN_GPU_BC4_LIST_STATS=1 (bench): how many channel tasks the BC4 / BC5 max pre-pass listed */
    const char *lst = getenv("KILN_GPU_BC4_LIST_STATS");
    const int bc4_stats = bc4_list && lst && lst[0] == '1';
    size_t bc4_listed = 0;
    const size_t tab_bytes = cf_tables ? cf_table_words(NULL) * 4 : flat_tables ? EBC_FLAT_WORDS * 4 : 4;
    kiln_status st = kiln_vk_io_create(ctx, gpu, rows * in_row, 0, &in);
    if (st == KILN_OK) st = kiln_vk_io_create(ctx, gpu, rows * out_row, 1, &out);
    if (st == KILN_OK) st = kiln_vk_io_create(ctx, gpu, fb_words * 4, 1, &fbits);
    if (st == KILN_OK && (cf_tables || flat_tables)) {
        st = kiln_vk_io_create(ctx, gpu, tab_bytes, 0, &tab);
        if (st == KILN_OK) {
            if (cf_tables) cf_table_words(kiln_vk_io_map(&tab));
            else flat_table_words(kiln_vk_io_map(&tab));
            st = kiln_vk_buffer_flush(ctx, gpu, tab.direct ? &tab.dev : &tab.staging);
        }
    }
    if (st == KILN_OK && any_fallback) {
        flist = kiln__malloc(ctx, rows * bx * sizeof *flist);
        if (!flist) st = KILN_ERR_OUT_OF_MEMORY;
    }
    double total_ms = 0.0;
    for (uint32_t r0 = 0; st == KILN_OK && r0 < by; r0 += (uint32_t)rows) {
        const uint32_t nrows = by - r0 < rows ? by - r0 : (uint32_t)rows;
        const uint32_t y0 = r0 * 4, ty = h - y0 < nrows * 4 ? h - y0 : nrows * 4;
        const size_t in_bytes = (size_t)ty * w * 4 * words_per_texel, out_bytes = (size_t)nrows * out_row;
        const size_t nblocks = (size_t)nrows * bx;
        void *map = kiln_vk_io_map(&in);
        if (plan.prepared_words == 0) {
            memcpy(map, (const uint8_t *)img->pixels + (size_t)y0 * w * 4, in_bytes);
        } else {
            prep_job pj = {img, map, y0, ty, (int)words_per_texel, plan.channel_kind, plan.signed_map};
            st = kiln__parallel_for(ctx, ty, 4, prep_rows, &pj);
            if (st != KILN_OK) break;
        }
        st = kiln_vk_buffer_flush(ctx, gpu, in.direct ? &in.dev : &in.staging);
        if (st != KILN_OK) break;
        kiln_vk_cmd cmd;
        st = kiln_vk_cmd_begin(ctx, gpu, (uint32_t)plan.npass, &cmd);
        if (st != KILN_OK) break;
        kiln_vk_cmd_upload(&cmd, &in, in_bytes);
        if (cf_tables || flat_tables) kiln_vk_cmd_upload(&cmd, &tab, tab_bytes);
        const size_t fb_words_n = ebc_fb_layout(&plan, nblocks, &fl, &za, &zb, &wpb);
        if (zb) { /* counters at 0: CF_OPT bit 25's list length (and an unused word), BC4 max's list count */
            vkCmdFillBuffer(cmd.cb, fbits.dev.buffer, za, zb, 0);
            kiln_vk_cmd_transfer_to_compute(cmd.cb);
        }
        kiln_vk_cmd_timestamp(&cmd, 0);
        const float sw[3] = {params->perceptual ? sqrtf(0.299f * 3.0f) : 1.0f, params->perceptual ? sqrtf(0.587f * 3.0f) : 1.0f,
                             params->perceptual ? sqrtf(0.114f * 3.0f) : 1.0f};
        uint32_t push[KILN_EBC_PUSH_WORDS] = {bx, nrows, w, ty,
                                              (uint32_t)params->alpha_threshold | (params->perceptual ? 1u << 8 : 0u) |
                                                  (params->alpha_cutout ? 1u << 9 : 0u) | ((uint32_t)params->quality & 3u) << 10};
        memcpy(&push[5], sw, sizeof sw);
        kiln_vk_binding b[4] = {{.buffer = in.dev.buffer, .range = in_bytes},
                                {.buffer = out.dev.buffer, .range = out_bytes},
                                {.buffer = fbits.dev.buffer, .range = fb_words_n * 4},
                                {.buffer = tab.dev.buffer, .range = tab_bytes}};
        for (int i = 0; st == KILN_OK && i < plan.npass; i++) {
            const ebc_pass *ps = &plan.pass[i];
            uint64_t items = (uint64_t)nblocks * ps->tasks_per_block * ps->per_task;
            if (ps->after_barrier) kiln_vk_cmd_barrier(&cmd);
            st = kiln_vk_cmd_dispatch_linear(ctx, &cmd, pipes[i], b, push, items);
        }
        kiln_vk_cmd_timestamp(&cmd, 1);
        kiln_vk_cmd_download(&cmd, &out, out_bytes);
        if (any_fallback) kiln_vk_cmd_download(&cmd, &fbits, fl);
        if (bc4_stats) kiln_vk_cmd_download(&cmd, &fbits, 4); /* the list's count */
        double ms = 0.0;
        if (st == KILN_OK) st = kiln_vk_cmd_submit(ctx, &cmd, &ms);
        kiln_vk_cmd_free(&cmd);
        total_ms += ms;
        if (st == KILN_OK) st = kiln_vk_buffer_invalidate(ctx, gpu, out.direct ? &out.dev : &out.staging);
        if (st == KILN_OK && (any_fallback || bc4_stats))
            st = kiln_vk_buffer_invalidate(ctx, gpu, fbits.direct ? &fbits.dev : &fbits.staging);
        if (st != KILN_OK) break;
        if (bc4_stats) bc4_listed += *(const uint32_t *)kiln_vk_io_map(&fbits);
        uint8_t *d = dst + (size_t)r0 * out_row;
        memcpy(d, kiln_vk_io_map(&out), out_bytes);
        if (any_fallback) {
            const uint32_t *bits = kiln_vk_io_map(&fbits);
            size_t nf = 0;
            for (size_t k = 0; k < nblocks; k++)
                if (wpb ? bits[k] != 0 : (bits[k / 32] >> (k % 32) & 1u)) flist[nf++] = (uint32_t)k;
            /* KILN_GPU_SKIP_FALLBACK=1 (a testing aid): flagged blocks keep whatever the device wrote, so a
             * test can tell the blocks the GPU encoded from those the CPU did */
            const char *skip = getenv("KILN_GPU_SKIP_FALLBACK");
            if (skip && skip[0] == '1') nflagged_total += nf, nf = 0;
            if (nf) {
                fallback_job fj = {img, params, kiln__block_encoder(fi->format), flist, d, bx, fi->block_bytes, plan.signed_map};
                /* the list's block numbers are relative to this batch: shift the image rows */
                kiln_image sub = *img;
                sub.pixels = (uint8_t *)img->pixels + (size_t)y0 * w * 4 * (size_t)img->type;
                sub.height = h - y0;
                fj.img = &sub;
                st = kiln__parallel_for(ctx, nf, 16, fallback_blocks, &fj);
                nflagged_total += nf;
            }
        }
        if (st == KILN_OK) st = kiln__progress(ctx, (float)(r0 + nrows) / (float)by);
    }
    free(flist);
    kiln_vk_io_destroy(gpu, &in);
    kiln_vk_io_destroy(gpu, &out);
    kiln_vk_io_destroy(gpu, &fbits);
    kiln_vk_io_destroy(gpu, &tab);
    if (st != KILN_OK) return st;
    if (ctx->params.verbose && any_fallback)
        fprintf(stderr, "kiln: %s on the GPU: %zu of %zu blocks were encoded by the CPU encoder (flat, near-flat or degenerate blocks, transparent or cut-out texels)\n",
                fi->name, nflagged_total, (size_t)bx * by);
    if (bc4_stats)
        fprintf(stderr, "kiln: %s max: %zu of %zu channel tasks listed for the exact search (heuristic error > 0)\n", fi->name,
                bc4_listed, (size_t)bx * by * plan.pass[0].tasks_per_block);
    if (ctx->params.verbose && dither)
        fprintf(stderr, "kiln: %s on the GPU: dithered indices by %s\n", fi->name, plan.pass[plan.npass - 1].shader);
    ctx->last_gpu_ms = total_ms;
    return KILN_OK;
}

/* the pipelined multi-image / multi-format path (owner gpuio): shares this file's statics */
#include "gpu/gpu_encode_bc_ring.inc"

/* device-resident texels: the mip chain + encode path (owner mipdev, src/gpu/gpu_mip_encode.c) */
#include "gpu/gpu_mip_encode_bc.inc"

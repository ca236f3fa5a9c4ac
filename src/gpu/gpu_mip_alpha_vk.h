/* gpu_mip_alpha_vk.h - alpha coverage (mip.h rule 8) on a mip chain that stays on the device (helper
 * alphacov, issue 5; src/gpu/gpu_mip_alpha.c, shaders/mip_alpha.comp). Used by gpu_mip_filter.c
 * (kiln_mip_generate / kiln_mip_texture on the GPU) and gpu_mip_encode.c (kiln_encode_mips, resident).
 *
 * The caller describes every output level ("pair": texture z, level m >= 1): where its fp32 chain texels
 * are (vec4 index into `chain`), where its output starts (word index into `out`), its texel count and its
 * target (round(cov0 * n / n0), as mip.c run_chain). kiln__gpu_mip_alpha_run then, after the caller's mip
 * pass recorded in *cmd:
 *   submission 1  the caller's command + pass 0 (bucket histograms, or the raw alpha of small levels)
 *   submission 2  pass 1 (the chosen bucket's 16-bit histogram), only when some level needs it
 *   host          filters.c's own decisions (kiln__mip_coverage_early / _final, kiln__mip_coverage_scale
 *                 on small levels): the scale of every level, exactly the CPU's
 * and leaves *cmd begun again with pass 2 recorded (alpha' = min(1, s * clamp(a, 0, 1)) written into the
 * outputs as `mode` says) and a compute barrier after it: the caller records the rest and submits. */
#ifndef KILN_GPU_MIP_ALPHA_VK_H
#define KILN_GPU_MIP_ALPHA_VK_H

#include "gpu/vk.h"
#include "gpu/gpu_mip.h"
#include "gpu/gpu_mip_alpha.h"

enum {
    KILN_GPU_MIP_ALPHA_PATCH_U8 = 0,  /* out: RGBA8 words (the alpha byte is replaced) */
    KILN_GPU_MIP_ALPHA_PATCH_F16 = 1, /* out: RGBA16F, 2 words per texel (the alpha half) */
    KILN_GPU_MIP_ALPHA_PATCH_F32 = 2, /* out: RGBA32F, 4 words per texel; alpha read from out itself */
    KILN_GPU_MIP_ALPHA_CONVERT_U8 = 3, /* out: RGBA8 words made from the chain (colour sRGB8 when srgb) */
    KILN_GPU_MIP_ALPHA_CONVERT_F16 = 4 /* out: RGBA16F (2 words a texel) made from the chain (helper mipfall) */
};

typedef struct kiln__gpu_mip_alpha_pair {
    uint64_t chain_vec4; /* the level's first texel in chain (vec4s) */
    uint64_t out_word;   /* its first output word in out */
    uint32_t n;          /* texels */
    uint64_t target;     /* texels that should pass */
} kiln__gpu_mip_alpha_pair;

typedef struct kiln__gpu_mip_alpha {
    /* the caller's description (kiln__gpu_mip_alpha_init allocates pairs) */
    uint32_t npairs;
    kiln__gpu_mip_alpha_pair *pairs;
    float thr;       /* kiln__mip_alpha_pass_threshold(sink kind, ref) */
    uint32_t mode;   /* KILN_GPU_MIP_ALPHA_* */
    int srgb;        /* CONVERT_U8: colour is sRGB-encoded */
    VkBuffer chain, out;
    /* filled by kiln__gpu_mip_alpha_run */
    float *scale;    /* per pair */
    uint32_t hist_levels;
    /* internal */
    kiln_gpu *gpu;
    const kiln_vk_pipeline *pipe;
    kiln_vk_io tab, acc, lut;
    uint32_t *tab_host;
    size_t tab_words;
    uint32_t nchunks;
    uint64_t acc_words, off_hist, off_direct, off_lo;
} kiln__gpu_mip_alpha;

/* mip.c's kiln__mip_base_coverage(img, ref) (texels whose stored alpha is > ref), counted on ctx's threads. */
kiln_status kiln__gpu_mip_alpha_base_coverage(kiln_context *ctx, const kiln_image *img, float ref, uint64_t *count);
/* Allocates pairs (zeroed) for npairs levels. */
kiln_status kiln__gpu_mip_alpha_init(kiln_context *ctx, kiln_gpu *gpu, kiln__gpu_mip_alpha *a, uint32_t npairs);
/* Builds the tables and buffers once the pairs, thr, mode, srgb, chain and out are set (KILN_ERR_UNSUPPORTED
 * when they exceed the device's storage-buffer range). */
kiln_status kiln__gpu_mip_alpha_prepare(kiln_context *ctx, kiln__gpu_mip_alpha *a);
/* See above. *cmd: begun, holding the caller's mip pass; on return (KILN_OK) begun anew with room for
 * more_dispatches further dispatches. *ms (may be NULL) accumulates the timed sections of the submissions. */
kiln_status kiln__gpu_mip_alpha_run(kiln_context *ctx, kiln__gpu_mip_alpha *a, kiln_vk_cmd *cmd, uint32_t more_dispatches,
                                    double *ms);
/* Without coverage (helper mipfall, gpu_mip16.c): after kiln__gpu_mip_alpha_prepare with mode CONVERT_U8 or
 * CONVERT_F16 (thr and the pairs' targets unused), records into *cmd a barrier, pass 2 writing the outputs from the
 * chain with alpha unscaled (as mip.c's U8 / F16 sinks store it) and a barrier; nothing is submitted. */
kiln_status kiln__gpu_mip_alpha_convert(kiln_context *ctx, kiln__gpu_mip_alpha *a, kiln_vk_cmd *cmd);
/* Dispatches kiln__gpu_mip_alpha_run records (for the caller's kiln_vk_cmd_begin counts). */
#define KILN_GPU_MIP_ALPHA_DISPATCHES 3u
void kiln__gpu_mip_alpha_free(kiln__gpu_mip_alpha *a);

/* The device-resident encoder's part (gpu_mip_encode.c, kiln_encode_mips): one image whose float chain
 * levels 1..L-1 the mip pass left in md->out at md->off[l] (out_kind 4; the linear chain, colour sRGB-encoded
 * only for float images as mip.c's F32 sink does). img: the source (8-bit, 16-bit or float; its base
 * coverage and the CPU sink kind that sets the pass threshold), ref: the alpha reference, srgb: the 8-bit
 * levels' colour encoding. Runs kiln__gpu_mip_alpha_run on *cmd (see above); afterwards
 *   float / 16-bit images: the alpha of md->out is alpha' (the conversion passes read it as before);
 *   8-bit images: md->out and md->off point at RGBA8 words (res->u8), the levels mip.c's U8 sink makes.
 * Free with kiln__gpu_mip_alpha_resident_free after the command completed. */
typedef struct kiln__gpu_mip_alpha_res {
    kiln__gpu_mip_alpha a;
    kiln_vk_buffer u8;
} kiln__gpu_mip_alpha_res;

kiln_status kiln__gpu_mip_alpha_resident(kiln_context *ctx, kiln_gpu *gpu, const kiln_image *img, float ref, int srgb,
                                         uint32_t levels, kiln__gpu_mip_dev *md, kiln_vk_cmd *cmd,
                                         uint32_t more_dispatches, kiln__gpu_mip_alpha_res *res);
void kiln__gpu_mip_alpha_resident_free(kiln__gpu_mip_alpha_res *res);

#endif

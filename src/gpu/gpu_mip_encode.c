/* gpu_mip_encode.c - kiln_encode_mips on the GPU with the mip chain kept on the device (issue #5;
 * owner mipdev). The host path (kiln_mip_generate, then kiln_encode_image per level) downloads every
 * level after the mip pass and uploads it again for the encoder. Here ONE command buffer holds:
 *
 *   uploads     the base image (RGBA8 words), the mip job tables, the encoder's tables
 *   mip pass    gpu_mip.c (box: the tiled strategies, AUTO = single pass) or gpu_mip_filter.c (Kaiser,
 *               Lanczos-3, Mitchell, normal maps): levels 1..L-1 quantised to RGBA8 words in one device
 *               buffer, each level at an offset aligned to minStorageBufferOffsetAlignment; the blit
 *               strategy (helper mipres2): gpu_mip_blit.c's vkCmdBlitImage chain in a VkImage, its levels
 *               copied image -> buffer on the device into that same layout (kiln__gpu_mip_blit_record)
 *   convert     a float chain into BC1-BC5 / ETC / EAC (helper mipres2): shaders/mip_enc_convert.comp
 *               turns each level's RGBA32F texels into the words kiln__gpu_encode_bc / _etc prepare on
 *               the host for a float image (BC1/BC3: R16G16 / B16A8; BC4/BC5: channel bytes; ETC: RGBA8;
 *               EAC: int32 targets, read by enc_eac.comp INMODE 1), with encode.c fetch_texel's rounding
 *   encode      level 0 from the uploaded base (no barrier: it may overlap the mip pass), then a barrier
 *               (compute writes -> compute reads) and levels 1..L-1; per level the BC passes of
 *               gpu_encode_bc.c (the same shaders, specialisation and push constants as
 *               kiln__gpu_encode_bc for an 8-bit image) or, for BC6H from a float image, the
 *               shader gpu_encode_bc6h.c picks, binding the level's range of the mip output (level 0:
 *               the uploaded base, which is level 0 byte for byte: rule 9's copy of a same-type sink);
 *               for the ETC family (owner mipetc) the pass gpu_mip_encode_etc.inc records (EAC R11/RG11
 *               unsigned: enc_eac.comp on the RGBA8 words; signed: mip_enc_eac_targets.comp's int32
 *               targets (a 256-entry table in binding 3's buffer) into a scratch buffer, then enc_eac.comp; ETC1: enc_etc1.comp / enc_etc1_q.comp; ETC2 RGB
 *               FAST: enc_etc1.comp ETC2 = 1 into a scratch buffer (blocks, then T / H flag words), then
 *               after a barrier shaders/mip_enc_etc2_stitch.comp copies blocks and flags into place;
 *               ETC2 RGBA FAST: the same colour pass, enc_eac.comp's alpha into the blocks and flags,
 *               and the stitch puts the colour in place and ORs the two passes' flags; ETC2 RGB / RGBA
 *               above FAST and RGB A1 (helper etc2res): the ETC1-modes, planar and T / H passes over a
 *               block state per block in scratch, each after a barrier, then a copy into the blocks)
 *   gather      blocks the encoder flags for the CPU encoder (BC1/BC3 colour: flat or degenerate blocks
 *               at high/max, punch-through cases; EAC: jobs on the CPU estimate's double rounding
 *               boundary; ETC2 RGB/RGBA FAST: the T / H blocks): shaders/mip_enc_gather.comp copies
 *               each such block's 16 texels into a compact record list (atomic counter); from a float
 *               chain mip_enc_gather_f32.comp copies the RGBA32F texels, so the CPU encoder sees the
 *               kiln_block encode.c makes from a float image
 *   downloads   the compressed blocks of every level and the record counter
 *
 * then (only when records exist) a second small copy of just those records into host memory,
 * and the CPU encoder redoes those blocks from their texels, as the host path does. The RGBA8 words the
 * mip pass writes are exactly what the BC encoders read for an 8-bit image (INPUT_U8: one word per
 * texel, edge replication in the shaders), and the RGBA32F texels of a float chain exactly what the BC6H
 * encoders read (no conversion pass for those). Bytes: those of the host
 * path (same mip arithmetic, same encoder shaders, same CPU fallback), tested on lavapipe by
 * tests/unit/test_gpu_mip_encode.c.
 *
 * 16-bit images (helper mip16, gpu_mip16.c): mip.c's decoder makes the base's floats on the host
 * (kiln__mip_decode_f32), the float mip pass filters them, and shaders/mip16_convert.comp (instead of
 * mip_enc_convert.comp, same modes) quantises every level (level 0: the decoded base; decode + requantise
 * is the identity, checked) exactly as mip.c's 16-bit sink and writes the words the host prepares from a
 * 16-bit level; gathered float texels are requantised to 16 bits on the host for the CPU encoder. The base is
 * decoded on the device (helper mip16dev: kiln__gpu_mip16_dec_*, the RGBA16 texels and the CPU decoder's tables
 * uploaded; every filter since mip16b, through kiln__gpu_mip16_filter_record for the quality filters and normal
 * maps; KILN_GPU_MIP16_DEVICE_DECODE=0: the host decode). 16-bit normal maps (mip16b): the filter path reads the
 * decoded unorm base as n = 2v - 1 (z rebuilt for fewer than 3 channels) and writes 0.5 n + 0.5, as mip.c's
 * cfg.normal_unorm; then the 16-bit quantisation as above.
 *
 * BC6H from 8-bit and 16-bit images (helper mip16b): the host path hands the encoder fetch_texel's floats of each
 * 8- / 16-bit level (v / 255, p / 65535); mip16_convert.comp mode 8 makes them from the 8-bit chain's RGBA8 words,
 * mode 7 from the 16-bit quantisation of the 16-bit chain, as RGBA32F for the BC6H encoder (the GPU's; the host
 * path encodes such images on the CPU, as kiln_encode_image does, so the bytes are the GPU encoder's on the CPU's
 * chain, not the host path's).
 *
 * Alpha coverage (helper alphacov, gpu_mip_alpha.c): the mip pass writes the float chain (8-bit images too),
 * the command is submitted after it, gpu_mip_alpha.c counts the chain's alpha on the device (two small
 * histogram read-backs, the scales picked on the host with filters.c's own code) and records into a new
 * command the pass that writes alpha' = min(1, s * clamp(a, 0, 1)): in place into the float chain (float and
 * 16-bit images; the conversion passes then read it) or, for 8-bit images, as the RGBA8 words mip.c's U8
 * sink makes (md.out then points at them); everything after is recorded into that command as before. Every
 * strategy with a float chain (helper mipfall: subgroup, pyramid and single-pass too; the CPU filters the
 * unscaled chain, the scale only changes the stored alpha). Formats that store no alpha (BC1 RGB, BC4, BC5, BC6H,
 * ETC1, ETC2 RGB, EAC; colour never depends on the scale) skip the coverage passes (mipfall; BC6H from integer
 * images is resident with coverage that way).
 *
 * 16-bit images with the blit strategy (helper mipfall): the base decoded on the host, gpu_mip_blit.c's chain in
 * R32G32B32A32_SFLOAT, then the 16-bit conversions; as inexact as every blit (exact box only on opaque even sizes),
 * byte-identical to the host path (kiln_mip_generate runs the same chain in gpu_mip16.c).
 *
 * Not here (KILN_ERR_UNSUPPORTED: kiln_encode_mips takes the host path): BC6H from float images with an
 * sRGB chain, BC6H with its tuning variables, BC7, ETC2 above FAST / RGB A1 without 64-bit shader arithmetic or
 * with KILN_GPU_ETC2_TH=host, the seed GPU strategy, alpha coverage with the blit strategy (its 8-bit chain is
 * RGBA8 texels, no fp32 chain to count; the host path's kiln_mip_generate refuses it too), the baseline strategy,
 * the blit strategy with a non-box filter (not a blit), dithering and bc1_black
 * (no GPU encoder). KILN_GPU_MIP_RESIDENT=0 turns the path off
 * (tests and bench compare); KILN_GPU_MIP_POISON=1 (testing aid) fills its device buffers with 0xAB
 * bytes before use (gpu_mip.c kiln__gpu_mip_poison). */
#include "gpu/gpu_mip_encode.h"
#include "gpu/gpu_mip.h"
#include "gpu/gpu_mip_encode_etc.h"
#include "gpu/gpu_mip16.h"
#include "gpu/gpu_mip_alpha_vk.h"
#include "image/color.h"
#include "codec/codec.h"
#include "mip/mip.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ME_GATHER_LOCAL 64u
#define ME_RECORD_WORDS 18u
#define ME_RECORD_WORDS_F32 66u /* mip_enc_gather_f32.comp: level, block, 16 RGBA32F texels */

void kiln__gpu_mip_encode_stats_get(kiln_context *ctx, kiln__gpu_mip_encode_stats *out)
{
    if (!out) return;
    memset(out, 0, sizeof *out);
    kiln_gpu *gpu = ctx ? ctx->gpu : NULL;
    if (!gpu) return;
    out->runs = gpu->mip_enc_count[0];
    out->levels = gpu->mip_enc_count[1];
    out->fallback_blocks = gpu->mip_enc_count[2];
    out->mip_ms = gpu->mip_enc_ms[0];
    out->encode_ms = gpu->mip_enc_ms[1];
}

static VkDeviceSize align_up(VkDeviceSize v, VkDeviceSize a) { return (v + a - 1) / a * a; }

typedef struct fb_job {
    const uint32_t *rec;
    uint8_t *const *dst;
    const kiln_encode_params *params;
    kiln_block_encode_fn fn;
    uint32_t block_bytes, levels;
    int signed_map;
    int f32; /* records of RGBA32F texels (mip_enc_gather_f32.comp) */
    int u16; /* f32 records of a 16-bit source's chain (helper mip16): quantised as mip.c's SINK_U16 first */
    int srgb16; /* u16: colour is kiln__linear_to_srgb16 (else kiln__float_to_unorm16) */
    int bad; /* a record with an impossible level (never expected) */
} fb_job;

static inline float clamp01(float v) { return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v; }

/* The CPU encoder on gathered blocks: each record's texels filled into a kiln_block as encode.c's
 * fetch_block does for an 8-bit image (float records: as its fetch_texel does for a float image, which
 * never takes the SNORM mapping). */
static void fallback_records(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    fb_job *j = user;
    kiln_block blk;
    for (size_t i = begin; i < end; i++) {
        const uint32_t *r = j->rec + 1 + i * (j->f32 ? ME_RECORD_WORDS_F32 : ME_RECORD_WORDS);
        if (r[0] >= j->levels) {
            j->bad = 1;
            continue;
        }
        if (j->f32 && j->u16) { /* encode.c fetch_texel for KILN_PIXEL_U16 on the 16-bit level */
            for (int k = 0; k < 64; k++) {
                float v;
                memcpy(&v, &r[2 + k], sizeof v);
                uint16_t p = (k & 3) != 3 && j->srgb16 ? kiln__linear_to_srgb16(v) : kiln__float_to_unorm16(v);
                blk.rgba8[k] = kiln__unorm16_to_unorm8(p);
                blk.rgba16[k] = p;
                float f = (float)p * (1.0f / 65535.0f);
                blk.f[k] = j->signed_map ? f * 2.0f - 1.0f : f;
            }
            j->fn(&blk, j->dst[r[0]] + (size_t)r[1] * j->block_bytes, j->params);
            continue;
        }
        if (j->f32) {
            for (int k = 0; k < 64; k++) {
                float v;
                memcpy(&v, &r[2 + k], sizeof v);
                if (v != v) v = 0.0f; /* NaN */
                float u = clamp01(v);
                blk.rgba8[k] = (uint8_t)(u * 255.0f + 0.5f);
                blk.rgba16[k] = (uint16_t)(u * 65535.0f + 0.5f);
                blk.f[k] = v;
            }
            j->fn(&blk, j->dst[r[0]] + (size_t)r[1] * j->block_bytes, j->params);
            continue;
        }
        for (int t = 0; t < 16; t++)
            for (int c = 0; c < 4; c++) {
                uint8_t v = (uint8_t)(r[2 + t] >> (8 * c));
                blk.rgba8[t * 4 + c] = v;
                blk.rgba16[t * 4 + c] = (uint16_t)(v * 257u);
                float f = (float)v * (1.0f / 255.0f);
                blk.f[t * 4 + c] = j->signed_map ? f * 2.0f - 1.0f : f;
            }
        j->fn(&blk, j->dst[r[0]] + (size_t)r[1] * j->block_bytes, j->params);
    }
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Copies the first `bytes` of src (written by compute shaders) into the host-visible dst. */
static void copy_to_host(VkCommandBuffer cb, VkBuffer src, VkBuffer dst, VkDeviceSize bytes)
{
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, NULL, 0,
                         NULL);
    VkBufferCopy region = {0, 0, bytes};
    vkCmdCopyBuffer(cb, src, dst, 1, &region);
    VkMemoryBarrier hb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &hb, 0, NULL, 0, NULL);
}

/* A float chain into an 8-bit encoder (BC1-BC5: bc set; ETC / EAC: etc set): the mode of
 * mip_enc_convert.comp that makes the words kiln__gpu_encode_bc / kiln__gpu_encode_etc prepare on the host
 * for a float image, its words per texel, its pipeline, and for EAC the enc_eac pipeline on int32 targets
 * (*eac: INMODE 1, as eac_pass runs for a float image). ETC1 / ETC2 read the RGBA8 view gpu_encode_etc.c
 * makes of a float image (ETC2's T / H and planar passes included). */
static kiln_status float_chain_plan(kiln_context *ctx, kiln_gpu *gpu, const kiln_format_info *fi, const kiln__gpu_bc_dev *bc,
                                    const kiln__gpu_etc_dev *etc, uint32_t *mode, uint32_t *words,
                                    const kiln_vk_pipeline **conv, const kiln_vk_pipeline **eac)
{
    VkPhysicalDeviceFeatures f;
    vkGetPhysicalDeviceFeatures(gpu->physical, &f);
    if (!f.shaderFloat64)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "device-resident mip encoding: %s from a float chain needs shaderFloat64",
                          fi->name);
    if (bc) {
        *mode = bc->prepared_words == 2 ? 3u : bc->channel_kind ? 2u : 1u;
        *words = bc->prepared_words == 2 ? 2u : 1u;
    } else if (etc->kind == 1 || etc->kind == 2 || etc->kind == 3 || etc->kind == 5 || etc->kind == 6 || etc->kind == 7) {
        /* ETC1 / ETC2 colour (and ETC2 RGBA's EAC alpha on the bytes): the RGBA8 view (rgba8_rows) */
        *mode = 0;
        *words = 1;
    } else if (etc->kind == 0 || etc->kind == 4) { /* EAC: int32 targets, nch per texel */
        *mode = etc->kind == 0 ? 4u : 5u;
        *words = etc->nch;
        if (etc->kind == 4) {
            *eac = etc->pipe; /* enc_eac KIND 2 INMODE 1 */
        } else {
            uint32_t spec[3] = {1u /* KIND: unsigned R11 */, 1u /* INMODE: int32 targets */, 0u};
            const char *shader = kiln__gpu_eac_shader(&spec[2]); /* as eac_pass */
            kiln_vk_pipeline_desc d = {.shader = shader, .local_size = 64, .spec = spec, .nspec = 3, .nbindings = 3,
                                       .push_size = 9 * 4};
            KILN_TRY(kiln_vk_pipeline_get(ctx, gpu, &d, eac));
        }
    } else {
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "device-resident mip encoding: %s from a float chain takes the host path",
                          fi->name);
    }
    kiln_vk_pipeline_desc d = {.shader = "mip_enc_convert", .local_size = 64, .nbindings = 2, .push_size = 3 * 4};
    return kiln_vk_pipeline_get(ctx, gpu, &d, conv);
}

/* EAC from a float chain: enc_eac.comp (INMODE 1) on the level's int32 targets, push constants and jobs
 * as kiln__gpu_etc_dev_record's EAC kinds (16 invocations per job). */
static kiln_status eac_targets_record(kiln_context *ctx, kiln_vk_cmd *cmd, const kiln_vk_pipeline *pipe,
                                      const kiln__gpu_etc_dev *plan, uint32_t w, uint32_t h, const kiln_vk_binding *targets,
                                      const kiln_vk_binding *blocks, const kiln_vk_binding *flags)
{
    const uint32_t bx = (w + 3) / 4, by = (h + 3) / 4;
    const uint64_t jobs = (uint64_t)bx * by * plan->nch;
    if (jobs > UINT32_MAX / 256u) return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%ux%u: too many blocks for one GPU pass", w, h);
    uint32_t push[9] = {w, h, bx, (uint32_t)jobs};
    memcpy(&push[4], plan->tail, sizeof plan->tail);
    kiln_vk_binding b[3] = {*targets, *blocks, *flags};
    return kiln_vk_cmd_dispatch_linear(ctx, cmd, pipe, b, push, jobs * 16u);
}

kiln_status kiln__gpu_encode_mips(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                                  const kiln_mip_params *mp, kiln_texture *out)
{
    const char *env = getenv("KILN_GPU_MIP_RESIDENT");
    if (env && env[0] == '0')
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "device-resident mip encoding is off (KILN_GPU_MIP_RESIDENT=0)");
    const kiln_format_info *fi = params ? kiln_format_get_info(params->format) : NULL;
    if (!img || !img->pixels || !mp || !out || !fi)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "device-resident mip encoding: missing arguments");
    const int bc6h = fi->format == KILN_FORMAT_BC6H_UFLOAT || fi->format == KILN_FORMAT_BC6H_SFLOAT;
    int etc = 0;
    switch (fi->format) {
    case KILN_FORMAT_ETC1_UNORM: case KILN_FORMAT_ETC1_SRGB:
    case KILN_FORMAT_ETC2_RGB8_UNORM: case KILN_FORMAT_ETC2_RGB8_SRGB:
    case KILN_FORMAT_ETC2_RGB8A1_UNORM: case KILN_FORMAT_ETC2_RGB8A1_SRGB:
    case KILN_FORMAT_ETC2_RGBA8_UNORM: case KILN_FORMAT_ETC2_RGBA8_SRGB:
    case KILN_FORMAT_EAC_R11_UNORM: case KILN_FORMAT_EAC_R11_SNORM:
    case KILN_FORMAT_EAC_RG11_UNORM: case KILN_FORMAT_EAC_RG11_SNORM: etc = 1; break;
    default: break;
    }
    /* 16-bit images (helper mip16): the float chain of the base decoded as mip.c decodes it, quantised
     * to 16 bits and converted for the encoder by mip16_convert.comp */
    if (img->type != KILN_PIXEL_F32 && img->type != KILN_PIXEL_U8 && img->type != KILN_PIXEL_U16)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                          "device-resident mip encoding: %u-bit images take the host path for %s (8-bit, 16-bit and "
                          "float images only)",
                          (unsigned)img->type * 8, fi->name);
    const int u16src = img->type == KILN_PIXEL_U16;
    /* 16-bit normal maps (helper mip16b): the filter path maps the decoded base (n = 2v - 1, 0.5 n + 0.5 on
     * write) as mip.c's cfg.normal_unorm. 16-bit images with the blit strategy (helper mipfall): the base decoded
     * on the host (dev16 is 0), blitted as R32G32B32A32_SFLOAT (gpu_mip_blit.c: linear floats, a float chain, exact
     * box only where blits are: opaque, even sizes), then the usual 16-bit conversions (kiln_mip_generate does the
     * same in gpu_mip16.c) */
    /* a float (or 16-bit) chain into an 8-bit encoder: mip_enc_convert.comp (mip16_convert.comp) makes
     * what the host would prepare */
    const int fsrc = (img->type == KILN_PIXEL_F32 || u16src) && !bc6h;
    /* BC6H from an 8- or 16-bit image (helper mip16b): the encoder reads what encode.c fetch_texel makes of the
     * host path's 8- / 16-bit level, f = v / 255 or p / 65535 as RGBA32F (mip16_convert.comp modes 8 / 7; the
     * 16-bit chain quantised to 16 bits first) */
    const int bc6h_conv = bc6h && img->type != KILN_PIXEL_F32;
    const int cpass = fsrc || bc6h_conv; /* a conversion pass per level */
    if (img->channels < 1 || img->channels > 4)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "device-resident mip encoding: %u channels", img->channels);
    if ((unsigned)mp->filter > KILN_MIP_FILTER_MITCHELL || (unsigned)mp->edge > KILN_MIP_EDGE_WRAP ||
        (unsigned)mp->color > KILN_MIP_COLOR_LINEAR || (unsigned)mp->alpha > KILN_MIP_ALPHA_PREMULTIPLIED ||
        (unsigned)mp->strategy > KILN_MIP_STRATEGY_BASELINE || (mp->normal_map && mp->color == KILN_MIP_COLOR_SRGB))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "device-resident mip encoding: parameters left to the host path");
    /* alpha coverage (helper alphacov): counted and scaled on the device (gpu_mip_alpha.c) between the mip
     * pass and the encoders. Every strategy that makes a float chain (helper mipfall: subgroup, pyramid and
     * single-pass too; the CPU filters the unscaled chain, the scale only changes each level's stored alpha, so
     * any exact box chain serves); not blit (no float chain: its RGBA8 levels are the blit's). Formats that store
     * no alpha (fewer than 4 channels, no punch-through: BC1 RGB, BC4, BC5, BC6H, ETC1, ETC2 RGB, EAC) skip the
     * coverage passes (mipfall): the scale never touches colour, so their bytes are those of the chain with
     * coverage (tests/unit/test_gpu_mip_alpha.c compares them with the CPU's made with coverage). */
    const int keeps_alpha = fi->channels >= 4 || (fi->flags & KILN_FF_ALPHA1) != 0;
    const int cov = mp->alpha_coverage_ref != 0.0f && keeps_alpha;
    if (cov && (!(mp->alpha_coverage_ref > 0.0f && mp->alpha_coverage_ref < 1.0f) || mp->strategy == KILN_MIP_STRATEGY_BLIT))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                          "device-resident mip encoding: alpha coverage with strategy %d or reference %g (host path)",
                          (int)mp->strategy, (double)mp->alpha_coverage_ref);
    if (!keeps_alpha && mp->alpha_coverage_ref != 0.0f && !(mp->alpha_coverage_ref > 0.0f && mp->alpha_coverage_ref < 1.0f))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "device-resident mip encoding: alpha coverage reference %g (host path)",
                          (double)mp->alpha_coverage_ref);
    if (mp->strategy == KILN_MIP_STRATEGY_BASELINE)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "device-resident mip encoding: not with the baseline strategy");
    /* blit: the box filter only (as kiln__gpu_mip: other filters are not blits) */
    const int blit = mp->strategy == KILN_MIP_STRATEGY_BLIT;
    if (blit && (mp->filter != KILN_MIP_FILTER_BOX || mp->normal_map))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "device-resident mip encoding: the blit strategy filters with a box");
    const uint32_t W = img->width, H = img->height, full = kiln_mip_level_count(W, H);
    const uint32_t L = mp->levels ? mp->levels : full;
    if (L < 2 || L > full || L > KILN_GPU_MIP_MAX_LEVELS)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "device-resident mip encoding: %u levels", L);

    kiln_gpu *gpu;
    KILN_TRY(kiln__gpu_get(ctx, &gpu));
    /* the encoder's passes: BC1-BC5 on RGBA8 words, BC6H on RGBA floats (what the mip pass writes for
     * 8-bit and float images: no conversion pass) */
    kiln__gpu_bc_dev plan;
    kiln__gpu_bc6h_dev plan6;
    kiln__gpu_etc_dev plane;
    memset(&plan, 0, sizeof plan);
    memset(&plane, 0, sizeof plane);
    /* out_bpb: bytes per block the encoder writes per level; fstride: flag words per block (fallback 2) */
    uint32_t out_bpb, fstride = 1;
    if (etc) {
        KILN_TRY(kiln__gpu_etc_dev_plan(ctx, gpu, params, 0, &plane));
        /* ETC2 RGBA: colour, alpha, stitch; signed EAC: targets, encode; ETC2 RGB: colour, stitch */
        plan.npass = plane.npass;
        plan.block_bytes = plane.block_bytes;
        plan.table_words = plane.table_words;
        plan.fallback = plane.fallback ? 2 : 0;
        fstride = plane.fallback == 1 ? plane.nch : 1u;
    } else if (bc6h) {
        KILN_TRY(kiln__gpu_bc6h_dev_plan(ctx, gpu, params, 0, &plan6));
        plan.npass = 1;
        plan.block_bytes = 16;
        plan.table_words = plan6.has_table ? plan6.table_words : 1;
    } else {
        KILN_TRY(kiln__gpu_bc_dev_plan(ctx, gpu, params, W, H, u16src ? KILN_PIXEL_F32 : img->type, 0, &plan));
    }
    out_bpb = etc ? plane.out_bytes : plan.block_bytes;
    const VkDeviceSize texel_bytes = bc6h ? 16 : 4;
    kiln_block_encode_fn fn = kiln__block_encoder(fi->format);
    if (!fn) return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "%s has no block encoder", fi->name);
    /* float chain: the conversion (mip_enc_convert.comp mode, words per texel) and, for EAC, enc_eac on
     * int32 targets (INMODE 1) as kiln__gpu_encode_etc runs it on a float image */
    uint32_t cmode = 0, cwords = 0;
    const kiln_vk_pipeline *conv = NULL, *eac_tg = NULL;
    if (fsrc) KILN_TRY(float_chain_plan(ctx, gpu, fi, etc ? NULL : &plan, etc ? &plane : NULL, &cmode, &cwords, &conv, &eac_tg));
    /* 16-bit: the same layouts from the 16-bit values (mip16_convert.comp's modes 0-5 are
     * mip_enc_convert.comp's), with the SNORM 2x - 1 mapping of non-float sources */
    uint32_t cflags = u16src && !bc6h && (fi->flags & KILN_FF_SIGNED) ? 1u : 0u;
    if (u16src || bc6h_conv) KILN_TRY(kiln__gpu_mip16_pipeline(ctx, gpu, &conv));
    if (bc6h_conv) { /* (alpha coverage: cov is 0 for BC6H, no alpha stored, see above) */
        cmode = u16src ? 7u : 8u;
        cwords = 4;
    }

    /* the mip job, as mip.c's try_gpu builds it for kiln_mip_generate on this image */
    const int srgb = mp->normal_map ? 0
                     : mp->color == KILN_MIP_COLOR_SRGB ? 1
                     : mp->color == KILN_MIP_COLOR_LINEAR ? 0
                                                          : img->srgb != 0 && img->type == KILN_PIXEL_U8;
    if (bc6h && srgb && img->type == KILN_PIXEL_F32)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "device-resident mip encoding: sRGB float chains take the host path");
    if (srgb) cflags |= 2u; /* mip16_convert.comp: sRGB colour codes */
    kiln_image fimg;
    memset(&fimg, 0, sizeof fimg);
    /* 16-bit: the base decoded on the device (gpu_mip16.c, mip16dev; every filter and normal maps since
     * mip16b) unless KILN_GPU_MIP16_DEVICE_DECODE=0 */
    const int dev16 = u16src && !blit && kiln__gpu_mip16_device_decode();
    /* 16-bit with a quality filter or a normal map: gpu_mip_filter.c through kiln__gpu_mip16_filter_record */
    const int filt16 = u16src && (mp->filter != KILN_MIP_FILTER_BOX || mp->normal_map);
    kiln__gpu_mip16_dec dec16;
    memset(&dec16, 0, sizeof dec16);
    /* (decoded after the checks below, with the buffers: freed at the end) */
    uint8_t weighted = !mp->normal_map && mp->alpha == KILN_MIP_ALPHA_WEIGHTED &&
                       (img->channels == 2 || img->channels == 4) && kiln__mip_base_has_alpha(img);
    kiln__gpu_mip_job job = {.images = u16src ? &fimg : img, .count = 1, .levels = L, .decode_srgb = u16src ? 0 : srgb,
                             .out_srgb = u16src || (cov && img->type == KILN_PIXEL_U8) ? 0 : srgb,
                             .out_kind = img->type == KILN_PIXEL_U8 && !cov ? 1 : 4, /* coverage: the float chain */
                             .weighted = &weighted, .dst = NULL,
                             .strategy = (int)mp->strategy,
                             .filter = (int)mp->filter, .edge = (int)mp->edge, .normal_map = mp->normal_map != 0,
                             .alpha_coverage_ref = 0.0f};

    /* geometry: per level blocks and their offsets in the block / flag buffers */
    VkDeviceSize align = gpu->props.limits.minStorageBufferOffsetAlignment;
    if (align < 16) align = 16;
    uint32_t lw[KILN_GPU_MIP_MAX_LEVELS], lh[KILN_GPU_MIP_MAX_LEVELS];
    VkDeviceSize boff[KILN_GPU_MIP_MAX_LEVELS], foff[KILN_GPU_MIP_MAX_LEVELS], soff[KILN_GPU_MIP_MAX_LEVELS];
    VkDeviceSize bytes_blocks = 0, bytes_flags = 0, bytes_scratch = 16;
    /* ETC2 RGBA: the colour pass's blocks and flags; signed EAC: the int32 targets */
    const int scratch_used = etc && kiln__gpu_etc_dev_scratch(&plane, 4, 4) != 0;
    if (scratch_used) bytes_scratch = 0;
    uint64_t total_blocks = 0;
    for (uint32_t l = 0; l < L; l++) {
        lw[l] = kiln_level_dim(W, l);
        lh[l] = kiln_level_dim(H, l);
        uint64_t nb = (uint64_t)((lw[l] + 3) / 4) * ((lh[l] + 3) / 4);
        total_blocks += nb;
        boff[l] = bytes_blocks;
        bytes_blocks = align_up(bytes_blocks + nb * out_bpb, align);
        foff[l] = bytes_flags;
        bytes_flags = align_up(bytes_flags + (plan.fallback == 2 ? nb * fstride : (nb + 31) / 32) * 4, align);
        soff[l] = scratch_used ? bytes_scratch : 0;
        if (scratch_used) bytes_scratch = align_up(bytes_scratch + kiln__gpu_etc_dev_scratch(&plane, lw[l], lh[l]), align);
    }
    const uint64_t range = gpu->props.limits.maxStorageBufferRange;
    if (bytes_blocks > range || bytes_scratch > range)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                          "device-resident mip encoding: %llu bytes of blocks (%llu of colour scratch) exceed %s's range",
                          (unsigned long long)bytes_blocks, (unsigned long long)bytes_scratch, gpu->props.deviceName);
    /* float chain: each level's converted words */
    VkDeviceSize coff[KILN_GPU_MIP_MAX_LEVELS], bytes_conv = cpass ? 0 : 16;
    for (uint32_t l = 0; l < L && cpass; l++) {
        coff[l] = bytes_conv;
        bytes_conv = align_up(bytes_conv + (VkDeviceSize)lw[l] * lh[l] * cwords * 4, align);
    }
    if (bytes_conv > range || (cpass && (uint64_t)W * H * 16 > range))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "device-resident mip encoding: a %ux%u float chain exceeds %s's range",
                          W, H, gpu->props.deviceName);
    /* gathered blocks: up to every block of the chain, within the device's storage range (float chain:
     * records of RGBA32F texels) */
    const uint32_t rec_words = fsrc ? ME_RECORD_WORDS_F32 : ME_RECORD_WORDS;
    uint64_t capacity = plan.fallback ? total_blocks : 0;
    if (capacity > (range - 16) / (rec_words * 4)) capacity = (range - 16) / (rec_words * 4);

    KILN_TRY(kiln_texture_alloc(ctx, out, fi->format, W, H, L, 1, 1));
    uint8_t *dst[KILN_GPU_MIP_MAX_LEVELS];
    kiln_status st = KILN_OK;
    for (uint32_t l = 0; l < L && st == KILN_OK; l++) {
        size_t size = 0;
        dst[l] = kiln_texture_image(out, l, 0, 0, &size);
        if (!dst[l] || size < (size_t)((lw[l] + 3) / 4) * ((lh[l] + 3) / 4) * plan.block_bytes)
            st = kiln__fail(ctx, KILN_ERR_INTERNAL, "device-resident mip encoding: texture level %u is missing", l);
    }

    kiln_vk_io blocks = {0}, tab = {0}, tab16 = {0};
    /* records stay in device memory; the counter (and, when there are records, just those) are copied
     * into small host buffers */
    kiln_vk_buffer flags = {0}, recs = {0}, cnt = {0}, rdown = {0}, scratch = {0}, convb = {0};
    kiln__gpu_mip_dev md;
    memset(&md, 0, sizeof md);
    kiln__gpu_mip_alpha_res cres; /* alpha coverage (alphacov) */
    memset(&cres, 0, sizeof cres);
    kiln_vk_cmd cmd;
    memset(&cmd, 0, sizeof cmd);
    VkQueryPool qp = VK_NULL_HANDLE;
    const kiln_vk_pipeline *gather = NULL;
    double t_wall = now_ms(), t_setup = 0.0, t_cov = 0.0;
    if (st == KILN_OK) st = kiln_vk_io_create(ctx, gpu, bytes_blocks, 1, &blocks);
    if (st == KILN_OK) st = kiln_vk_buffer_create(ctx, gpu, bytes_flags, KILN_VK_MEM_DEVICE, &flags);
    if (st == KILN_OK) st = kiln_vk_buffer_create(ctx, gpu, bytes_scratch, KILN_VK_MEM_DEVICE, &scratch);
    if (st == KILN_OK) st = kiln_vk_buffer_create(ctx, gpu, 16 + capacity * rec_words * 4, KILN_VK_MEM_DEVICE, &recs);
    if (st == KILN_OK) st = kiln_vk_buffer_create(ctx, gpu, bytes_conv, KILN_VK_MEM_DEVICE, &convb);
    if (st == KILN_OK) st = kiln_vk_buffer_create(ctx, gpu, 16, KILN_VK_MEM_DOWNLOAD, &cnt);
    if (st == KILN_OK) st = kiln_vk_io_create(ctx, gpu, (VkDeviceSize)plan.table_words * 4, 0, &tab);
    /* 16-bit: the decoded base (the mip pass's input) and the quantisers' decision points */
    if (st == KILN_OK && u16src && !dev16) st = kiln__mip_decode_f32(ctx, img, srgb, &fimg);
    if (st == KILN_OK && dev16) { /* fimg: sizes and type only */
        fimg.width = W;
        fimg.height = H;
        fimg.type = KILN_PIXEL_F32;
        fimg.channels = img->channels;
        fimg.hdr = img->hdr;
        st = kiln__gpu_mip16_dec_prepare(ctx, gpu, img, srgb, &dec16);
    }
    if (st == KILN_OK && u16src) st = kiln_vk_io_create(ctx, gpu, (VkDeviceSize)KILN_GPU_MIP16_THR_FLOATS * 4, 0, &tab16);
    if (st == KILN_OK && u16src) {
        int roundtrip = 0;
        const float *t = kiln__gpu_mip16_cached_thresholds(ctx, gpu, srgb, &roundtrip);
        if (!t) st = KILN_ERR_OUT_OF_MEMORY;
        else {
            /* level 0 is converted from the decoded base: decode + requantise must be the identity */
            if (!roundtrip)
                st = kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                                "device-resident mip encoding: 16-bit %s values do not round-trip", srgb ? "sRGB" : "linear");
            memcpy(kiln_vk_io_map(&tab16), t, (size_t)KILN_GPU_MIP16_THR_FLOATS * sizeof *t);
        }
        if (st == KILN_OK) st = kiln_vk_buffer_flush(ctx, gpu, tab16.direct ? &tab16.dev : &tab16.staging);
    }
    if (st == KILN_OK) {
        if (bc6h && plan6.has_table) kiln__gpu_bc6h_dev_table(kiln_vk_io_map(&tab));
        else if (bc6h) *(uint32_t *)kiln_vk_io_map(&tab) = 0;
        else if (etc) kiln__gpu_etc_dev_table(&plane, kiln_vk_io_map(&tab));
        else kiln__gpu_bc_dev_tables(&plan, kiln_vk_io_map(&tab));
        st = kiln_vk_buffer_flush(ctx, gpu, tab.direct ? &tab.dev : &tab.staging);
    }
    if (st == KILN_OK && plan.fallback) {
        kiln_vk_pipeline_desc d = {.shader = fsrc ? "mip_enc_gather_f32" : "mip_enc_gather",
                                   .local_size = ME_GATHER_LOCAL, .nbindings = 3,
                                   .push_size = 9 * 4};
        st = kiln_vk_pipeline_get(ctx, gpu, &d, &gather);
    }
    if (st == KILN_OK && gpu->timestamps) {
        VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                    .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = 3};
        st = kiln_vk_check(ctx, vkCreateQueryPool(gpu->device, &qi, NULL, &qp), "vkCreateQueryPool");
    }
    if (st == KILN_OK)
        st = kiln_vk_cmd_begin(ctx, gpu, KILN_GPU_MIP_MAX_DISPATCHES(L) + L * (plan.npass + 1 + (cpass ? 1u : 0u)) + 1 + (dev16 ? 1u : 0u), &cmd);
    if (st == KILN_OK) {
        VkCommandBuffer cb = cmd.cb;
        if (qp) vkCmdResetQueryPool(cb, qp, 0, 3);
        kiln__gpu_mip_poison(cb, (VkBuffer[]){blocks.dev.buffer, flags.buffer, recs.buffer, scratch.buffer, convb.buffer},
                             5); /* testing aid */
        vkCmdFillBuffer(cb, recs.buffer, 0, 16, 0); /* the record counter */
        kiln_vk_cmd_transfer_to_compute(cb);
        kiln_vk_cmd_upload(&cmd, &tab, 0);
        if (u16src) kiln_vk_cmd_upload(&cmd, &tab16, 0);
        if (dev16) kiln__gpu_mip16_dec_upload(&cmd, &dec16);
        st = blit ? kiln__gpu_mip_blit_record(ctx, gpu, &job, (uint32_t)align, &cmd, qp, &md)
                  : filt16 ? kiln__gpu_mip16_filter_record(ctx, gpu, &job, (uint32_t)align, &cmd, qp, &md,
                                                           dev16 ? kiln__gpu_mip16_dec_fill : NULL,
                                                           dev16 ? &dec16 : NULL, mp->normal_map)
                  : dev16 ? kiln__gpu_mip_record_fill(ctx, gpu, &job, (uint32_t)align, &cmd, qp, &md,
                                                      kiln__gpu_mip16_dec_fill, &dec16)
                  : kiln__gpu_mip_record(ctx, gpu, &job, (uint32_t)align, &cmd, qp, &md);
        if (st == KILN_OK && qp) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp, 1);
        t_setup = now_ms() - t_wall; /* (verbose: host work before the first submission) */
        if (st == KILN_OK && cov) { /* submits the mip pass; cmd is begun anew with the scaled levels recorded */
            st = kiln__gpu_mip_alpha_resident(ctx, gpu, img, mp->alpha_coverage_ref, srgb, L, &md, &cmd,
                                              L * (plan.npass + 2 + (cpass ? 1u : 0u)) + 1, &cres);
            cb = cmd.cb;
            t_cov = now_ms() - t_wall - t_setup;
        }
        const kiln_vk_binding tb = {.buffer = tab.dev.buffer, .range = (VkDeviceSize)plan.table_words * 4};
        /* float chain: every level's float texels -> the encoder's words (level 0 from the uploaded base
         * beside the mip pass, the others after it), then a barrier before the encoders read them */
        for (uint32_t l = 0; l < L && st == KILN_OK && cpass; l++) {
            if (l == 1) kiln_vk_cmd_barrier(&cmd);
            kiln_vk_binding b[2] = {{.buffer = l == 0 ? md.in : md.out, .offset = l == 0 ? 0 : md.off[l],
                                     .range = (VkDeviceSize)lw[l] * lh[l] * (img->type == KILN_PIXEL_U8 ? 4 : 16)},
                                    {.buffer = convb.buffer, .offset = coff[l], .range = (VkDeviceSize)lw[l] * lh[l] * cwords * 4}};
            const uint32_t push[3] = {lw[l] * lh[l], cmode, cwords};
            /* (8-bit BC6H, mode 8: no thresholds read; the encoder's table is bound in their place) */
            const kiln_vk_binding t16 = u16src ? (kiln_vk_binding){.buffer = tab16.dev.buffer,
                                                                   .range = (VkDeviceSize)KILN_GPU_MIP16_THR_FLOATS * 4}
                                               : tb;
            if (u16src || bc6h_conv) st = kiln__gpu_mip16_record(ctx, &cmd, conv, &b[0], &b[1], &t16, lw[l] * lh[l], cmode, cwords, cflags);
            else st = kiln_vk_cmd_dispatch_linear(ctx, &cmd, conv, b, push, (uint64_t)lw[l] * lh[l]);
        }
        if (st == KILN_OK && cpass) kiln_vk_cmd_barrier(&cmd);
        for (uint32_t l = 0; l < L && st == KILN_OK; l++) {
            /* level 0 reads the uploaded base: no barrier, so it may overlap the mip pass; the others
             * wait for the mip pass's writes */
            if (l == 1) kiln_vk_cmd_barrier(&cmd);
            const uint64_t nb = (uint64_t)((lw[l] + 3) / 4) * ((lh[l] + 3) / 4);
            kiln_vk_binding texb = {.buffer = l == 0 ? md.in : md.out, .offset = l == 0 ? 0 : md.off[l],
                                    .range = (VkDeviceSize)lw[l] * lh[l] * texel_bytes};
            if (cpass) texb = (kiln_vk_binding){.buffer = convb.buffer, .offset = coff[l],
                                                .range = (VkDeviceSize)lw[l] * lh[l] * cwords * 4};
            kiln_vk_binding bb = {.buffer = blocks.dev.buffer, .offset = boff[l], .range = nb * out_bpb};
            kiln_vk_binding fb = {.buffer = flags.buffer, .offset = foff[l],
                                  .range = (plan.fallback == 2 ? nb * fstride : (nb + 31) / 32) * 4};
            kiln_vk_binding sb = {.buffer = scratch.buffer, .offset = soff[l],
                                  .range = scratch_used ? kiln__gpu_etc_dev_scratch(&plane, lw[l], lh[l]) : 16u};
            if (eac_tg) st = eac_targets_record(ctx, &cmd, eac_tg, &plane, lw[l], lh[l], &texb, &bb, &fb);
            else if (etc) st = kiln__gpu_etc_dev_record(ctx, &cmd, &plane, lw[l], lh[l], &texb, &bb, &fb, &sb, &tb);
            else if (bc6h) st = kiln__gpu_bc6h_dev_record(ctx, &cmd, &plan6, lw[l], lh[l], &texb, &bb, &tb);
            else st = kiln__gpu_bc_dev_record(ctx, &cmd, &plan, lw[l], lh[l], &texb, &bb, &fb, &tb);
        }
        /* ETC2: the passes after the first, phase by phase over every level (FAST: the stitch; above FAST and
         * RGB A1: planar, T / H gate, T / H search, state copy), each after a barrier */
        const uint32_t nphase = etc ? kiln__gpu_etc_dev_phases(&plane) : 0u;
        for (uint32_t ph = 0; ph < nphase && st == KILN_OK; ph++) {
            kiln_vk_cmd_barrier(&cmd);
            for (uint32_t l = 0; l < L && st == KILN_OK; l++) {
                const uint64_t nb = (uint64_t)((lw[l] + 3) / 4) * ((lh[l] + 3) / 4);
                kiln_vk_binding texb = {.buffer = l == 0 ? md.in : md.out, .offset = l == 0 ? 0 : md.off[l],
                                        .range = (VkDeviceSize)lw[l] * lh[l] * texel_bytes};
                if (cpass) texb = (kiln_vk_binding){.buffer = convb.buffer, .offset = coff[l],
                                                    .range = (VkDeviceSize)lw[l] * lh[l] * cwords * 4};
                kiln_vk_binding bb = {.buffer = blocks.dev.buffer, .offset = boff[l], .range = nb * out_bpb};
                kiln_vk_binding fb = {.buffer = flags.buffer, .offset = foff[l],
                                      .range = (plan.fallback == 2 ? nb * fstride : (nb + 31) / 32) * 4};
                kiln_vk_binding sb = {.buffer = scratch.buffer, .offset = soff[l],
                                      .range = kiln__gpu_etc_dev_scratch(&plane, lw[l], lh[l])};
                st = kiln__gpu_etc_dev_record_post(ctx, &cmd, &plane, ph, lw[l], lh[l], &texb, &bb, &fb, &sb);
            }
        }
        if (st == KILN_OK && plan.fallback) {
            kiln_vk_cmd_barrier(&cmd); /* flags -> gather */
            for (uint32_t l = 0; l < L && st == KILN_OK; l++) {
                const uint32_t bx = (lw[l] + 3) / 4, by = (lh[l] + 3) / 4;
                const uint64_t nb = (uint64_t)bx * by;
                kiln_vk_binding b[3] = {
                    {.buffer = l == 0 ? md.in : md.out, .offset = l == 0 ? 0 : md.off[l],
                     .range = (VkDeviceSize)lw[l] * lh[l] * (fsrc ? 16 : 4)},
                    {.buffer = flags.buffer, .offset = foff[l], .range = (plan.fallback == 2 ? nb * fstride : (nb + 31) / 32) * 4},
                    {.buffer = recs.buffer, .range = 16 + capacity * rec_words * 4}};
                uint32_t push[9] = {bx, by, lw[l], lh[l], (uint32_t)plan.fallback, l, (uint32_t)capacity,
                                    0u, fstride};
                st = kiln_vk_cmd_dispatch_linear(ctx, &cmd, gather, b, push, nb);
            }
        }
        if (st == KILN_OK && qp) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp, 2);
        if (st == KILN_OK) {
            kiln_vk_cmd_download(&cmd, &blocks, bytes_blocks);
            copy_to_host(cb, recs.buffer, cnt.buffer, 16);
            st = kiln_vk_cmd_submit(ctx, &cmd, NULL);
        }
    }
    kiln_vk_cmd_free(&cmd);
    double mip_ms = -1.0, enc_ms = -1.0;
    if (st == KILN_OK && qp) {
        uint64_t ts[3];
        VkResult r = vkGetQueryPoolResults(gpu->device, qp, 0, 3, sizeof ts, ts, sizeof ts[0],
                                           VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
        if (r != VK_SUCCESS) st = kiln_vk_check(ctx, r, "vkGetQueryPoolResults");
        else {
            uint64_t mask = gpu->timestamp_bits >= 64 ? ~0ull : (1ull << gpu->timestamp_bits) - 1;
            mip_ms = (double)((ts[1] - ts[0]) & mask) * gpu->timestamp_period / 1e6;
            enc_ms = (double)((ts[2] - ts[1]) & mask) * gpu->timestamp_period / 1e6;
        }
    }
    /* the blocks of every level */
    if (st == KILN_OK) st = kiln_vk_buffer_invalidate(ctx, gpu, blocks.direct ? &blocks.dev : &blocks.staging);
    if (st == KILN_OK) {
        const uint8_t *src = kiln_vk_io_map(&blocks);
        for (uint32_t l = 0; l < L; l++)
            memcpy(dst[l], src + boff[l], (size_t)((lw[l] + 3) / 4) * ((lh[l] + 3) / 4) * plan.block_bytes);
    }
    /* the flagged blocks: their texels, then the CPU encoder */
    uint64_t nrec = 0;
    if (st == KILN_OK && plan.fallback) {
        st = kiln_vk_buffer_invalidate(ctx, gpu, &cnt);
        if (st == KILN_OK) nrec = *(const uint32_t *)cnt.mapped;
        if (st == KILN_OK && nrec > capacity)
            st = kiln__fail(ctx, KILN_ERR_UNSUPPORTED,
                            "device-resident mip encoding: %llu blocks for the CPU encoder, room for %llu (host path)",
                            (unsigned long long)nrec, (unsigned long long)capacity);
        const char *skip = getenv("KILN_GPU_SKIP_FALLBACK"); /* testing aid, as in gpu_encode_bc.c */
        if (st == KILN_OK && nrec && !(skip && skip[0] == '1')) {
            const VkDeviceSize rbytes = 4 + nrec * rec_words * 4;
            st = kiln_vk_buffer_create(ctx, gpu, rbytes, KILN_VK_MEM_DOWNLOAD, &rdown);
            kiln_vk_cmd c2;
            memset(&c2, 0, sizeof c2);
            if (st == KILN_OK) st = kiln_vk_cmd_begin(ctx, gpu, 1, &c2);
            if (st == KILN_OK) {
                copy_to_host(c2.cb, recs.buffer, rdown.buffer, rbytes);
                st = kiln_vk_cmd_submit(ctx, &c2, NULL);
            }
            kiln_vk_cmd_free(&c2);
            if (st == KILN_OK) st = kiln_vk_buffer_invalidate(ctx, gpu, &rdown);
            if (st == KILN_OK) {
                fb_job fj = {.rec = rdown.mapped, .dst = dst, .params = params, .fn = fn, .f32 = fsrc,
                             .u16 = u16src, .srgb16 = srgb,
                             .block_bytes = plan.block_bytes, .levels = L,
                             .signed_map = (fi->flags & KILN_FF_SIGNED) != 0};
                st = kiln__parallel_for(ctx, (size_t)nrec, 16, fallback_records, &fj);
                if (st == KILN_OK && fj.bad)
                    st = kiln__fail(ctx, KILN_ERR_INTERNAL, "device-resident mip encoding: a bad gathered block");
            }
        }
    }
    t_wall = now_ms() - t_wall;
    if (st == KILN_OK) {
        gpu->mip_enc_count[0]++;
        gpu->mip_enc_count[1] += L;
        gpu->mip_enc_count[2] += nrec;
        gpu->mip_enc_ms[0] = mip_ms;
        gpu->mip_enc_ms[1] = enc_ms;
        ctx->last_gpu_ms = mip_ms >= 0.0 ? mip_ms + enc_ms : t_wall;
        if (ctx->params.verbose)
            fprintf(stderr,
                    "kiln: %s mip chain on %s, device-resident: %u levels (%s%s%s) encoded where the mip pass wrote "
                    "them, only blocks downloaded, %llu block(s) to the CPU encoder; kernel time mip %.3f ms + "
                    "encode %.3f ms, %.3f ms wall (host buffers, uploads and recording %.1f ms before the first "
                    "submission; alpha-coverage submissions %.1f ms)\n",
                    fi->name, gpu->props.deviceName, L, md.what,
                    dev16 ? "; 16-bit base decoded, levels quantised and converted on the device"
                    : u16src ? "; 16-bit levels quantised and converted on the device"
                    : bc6h_conv ? "; 8-bit levels converted to BC6H's float input on the device"
                    : fsrc ? "; float levels converted on the device" : "",
                    cov ? "; alpha coverage scaled on the device" : "",
                    (unsigned long long)nrec, mip_ms, enc_ms, t_wall, t_setup, t_cov);
        (void)kiln__progress(ctx, 1.0f);
    }
    kiln__gpu_mip_alpha_resident_free(&cres);
    kiln__gpu_mip_dev_free(&md);
    kiln_vk_io_destroy(gpu, &blocks);
    kiln_vk_buffer_destroy(gpu, &recs);
    kiln_vk_buffer_destroy(gpu, &cnt);
    kiln_vk_buffer_destroy(gpu, &rdown);
    kiln_vk_io_destroy(gpu, &tab);
    kiln_vk_io_destroy(gpu, &tab16);
    kiln_image_free(&fimg);
    kiln__gpu_mip16_dec_free(&dec16);
    kiln_vk_buffer_destroy(gpu, &flags);
    kiln_vk_buffer_destroy(gpu, &scratch);
    kiln_vk_buffer_destroy(gpu, &convb);
    if (qp) vkDestroyQueryPool(gpu->device, qp, NULL);
    if (st != KILN_OK) kiln_texture_free(out);
    return st;
}

/* gpu_decode.c - block decoding on the GPU: shaders/decode_{bc,bc6h,bc7,etc}.comp, one invocation per
 * block, workgroups of KILN_DEC_LOCAL_SIZE staging their texels in shared memory and writing the
 * image layout kiln_decode produces (so the host copies whole rows, no reshuffle). Bindings: blocks,
 * texels, and the lookup-table buffer uploaded once per device (gpu_abi.h). Large images go in
 * batches of block rows that fit the device's storage-buffer range (and, for tests, the byte count
 * in the environment variable KILN_GPU_BATCH_BYTES when that is smaller). Kernel time (timestamps)
 * of all batches lands in ctx->last_gpu_ms. */
#include "gpu/gpu_abi.h"
#include "gpu/vk.h"

#include <stdlib.h>
#include <string.h>

/* Largest buffer one batch uses (further limited by maxStorageBufferRange). */
#define KILN_GPU_BATCH_MAX (512u << 20)

typedef struct dec_kernel {
    const char *shader;
    uint32_t variant;
} dec_kernel;

static int kernel_for(kiln_format f, dec_kernel *k)
{
    switch (f) {
    case KILN_FORMAT_BC1_RGB_UNORM:
    case KILN_FORMAT_BC1_RGB_SRGB: *k = (dec_kernel){"decode_bc", KILN_DEC_BC1_RGB}; return 1;
    case KILN_FORMAT_BC1_RGBA_UNORM:
    case KILN_FORMAT_BC1_RGBA_SRGB: *k = (dec_kernel){"decode_bc", KILN_DEC_BC1_RGBA}; return 1;
    case KILN_FORMAT_BC2_UNORM:
    case KILN_FORMAT_BC2_SRGB: *k = (dec_kernel){"decode_bc", KILN_DEC_BC2}; return 1;
    case KILN_FORMAT_BC3_UNORM:
    case KILN_FORMAT_BC3_SRGB: *k = (dec_kernel){"decode_bc", KILN_DEC_BC3}; return 1;
    case KILN_FORMAT_BC4_UNORM: *k = (dec_kernel){"decode_bc", KILN_DEC_BC4U}; return 1;
    case KILN_FORMAT_BC4_SNORM: *k = (dec_kernel){"decode_bc", KILN_DEC_BC4S}; return 1;
    case KILN_FORMAT_BC5_UNORM: *k = (dec_kernel){"decode_bc", KILN_DEC_BC5U}; return 1;
    case KILN_FORMAT_BC5_SNORM: *k = (dec_kernel){"decode_bc", KILN_DEC_BC5S}; return 1;
    case KILN_FORMAT_BC6H_UFLOAT: *k = (dec_kernel){"decode_bc6h", KILN_DEC_BC6H_UF}; return 1;
    case KILN_FORMAT_BC6H_SFLOAT: *k = (dec_kernel){"decode_bc6h", KILN_DEC_BC6H_SF}; return 1;
    case KILN_FORMAT_BC7_UNORM:
    case KILN_FORMAT_BC7_SRGB: *k = (dec_kernel){"decode_bc7", 0}; return 1;
    case KILN_FORMAT_ETC1_UNORM:
    case KILN_FORMAT_ETC1_SRGB:
    case KILN_FORMAT_ETC2_RGB8_UNORM:
    case KILN_FORMAT_ETC2_RGB8_SRGB: *k = (dec_kernel){"decode_etc", KILN_DEC_ETC2_RGB}; return 1;
    case KILN_FORMAT_ETC2_RGB8A1_UNORM:
    case KILN_FORMAT_ETC2_RGB8A1_SRGB: *k = (dec_kernel){"decode_etc", KILN_DEC_ETC2_RGB_A1}; return 1;
    case KILN_FORMAT_ETC2_RGBA8_UNORM:
    case KILN_FORMAT_ETC2_RGBA8_SRGB: *k = (dec_kernel){"decode_etc", KILN_DEC_ETC2_RGBA}; return 1;
    case KILN_FORMAT_EAC_R11_UNORM: *k = (dec_kernel){"decode_etc", KILN_DEC_EAC_R11U}; return 1;
    case KILN_FORMAT_EAC_R11_SNORM: *k = (dec_kernel){"decode_etc", KILN_DEC_EAC_R11S}; return 1;
    case KILN_FORMAT_EAC_RG11_UNORM: *k = (dec_kernel){"decode_etc", KILN_DEC_EAC_RG11U}; return 1;
    case KILN_FORMAT_EAC_RG11_SNORM: *k = (dec_kernel){"decode_etc", KILN_DEC_EAC_RG11S}; return 1;
    default: return 0;
    }
}

typedef struct copy_job {
    uint8_t *dst;
    const uint8_t *src;
    size_t size;
} copy_job;

#define COPY_CHUNK ((size_t)1 << 20)

static void copy_chunks(void *user, size_t begin, size_t end, uint32_t worker)
{
    (void)worker;
    copy_job *j = user;
    size_t a = begin * COPY_CHUNK, b = end * COPY_CHUNK;
    if (b > j->size) b = j->size;
    if (a < b) memcpy(j->dst + a, j->src + a, b - a);
}

/* memcpy on the context's threads (large decodes move hundreds of MB through the host). */
static kiln_status parallel_copy(kiln_context *ctx, void *dst, const void *src, size_t size)
{
    if (size < 8 * COPY_CHUNK || ctx->threads < 2) {
        memcpy(dst, src, size);
        return KILN_OK;
    }
    copy_job j = {dst, src, size};
    return kiln__parallel_for(ctx, (size + COPY_CHUNK - 1) / COPY_CHUNK, 4, copy_chunks, &j);
}

static kiln_status io_scratch(kiln_context *ctx, kiln_gpu *gpu, kiln_vk_io **slot, VkDeviceSize size, int output)
{
    if (!*slot) {
        *slot = kiln__calloc(ctx, 1, sizeof **slot);
        if (!*slot) return KILN_ERR_OUT_OF_MEMORY;
    }
    return kiln_vk_io_ensure(ctx, gpu, size, output, *slot);
}

/* The decoders' lookup tables (binding 2, offsets in gpu_abi.h), uploaded once per device. The
 * table files are valid GLSL and C. */
#define KILN_TABLES_C 1
#include "../../shaders/bptc_tables.glsl"
#include "../../shaders/etc_tables.glsl"

static void fill_tables(uint32_t *t)
{
    memcpy(t + KILN_TAB_P2, BPTC_P2, sizeof BPTC_P2);
    memcpy(t + KILN_TAB_P3, BPTC_P3, sizeof BPTC_P3);
    memcpy(t + KILN_TAB_A2, BPTC_A2, sizeof BPTC_A2);
    memcpy(t + KILN_TAB_A3B, BPTC_A3B, sizeof BPTC_A3B);
    memcpy(t + KILN_TAB_A3C, BPTC_A3C, sizeof BPTC_A3C);
    memcpy(t + KILN_TAB_W2, BPTC_W2, sizeof BPTC_W2);
    memcpy(t + KILN_TAB_W3, BPTC_W3, sizeof BPTC_W3);
    memcpy(t + KILN_TAB_W4, BPTC_W4, sizeof BPTC_W4);
    memcpy(t + KILN_TAB_BC6_MODE, BC6_MODES, sizeof BC6_MODES);
    memcpy(t + KILN_TAB_ETC_MOD, ETC_MOD, sizeof ETC_MOD); /* int32 -> the same bits */
    memcpy(t + KILN_TAB_ETC_DIST, ETC_DIST, sizeof ETC_DIST);
    memcpy(t + KILN_TAB_EAC_MOD, EAC_MOD, sizeof EAC_MOD);
}

_Static_assert(KILN_TAB_EAC_MOD + 128 == KILN_TAB_WORDS, "table layout");

static kiln_status ensure_tables(kiln_context *ctx, kiln_gpu *gpu)
{
    if (gpu->dec_tables) return KILN_OK;
    kiln_vk_io *io = kiln__calloc(ctx, 1, sizeof *io);
    if (!io) return KILN_ERR_OUT_OF_MEMORY;
    kiln_status st = kiln_vk_io_create(ctx, gpu, KILN_TAB_WORDS * 4, 0, io);
    if (st == KILN_OK) {
        fill_tables(kiln_vk_io_map(io));
        st = kiln_vk_buffer_flush(ctx, gpu, io->direct ? &io->dev : &io->staging);
    }
    if (st == KILN_OK && !io->direct) {
        kiln_vk_cmd cmd;
        st = kiln_vk_cmd_begin(ctx, gpu, 1, &cmd);
        if (st == KILN_OK) {
            kiln_vk_cmd_upload(&cmd, io, KILN_TAB_WORDS * 4);
            st = kiln_vk_cmd_submit(ctx, &cmd, NULL);
            kiln_vk_cmd_free(&cmd);
        }
    }
    if (st != KILN_OK) {
        kiln_vk_io_destroy(gpu, io);
        free(io);
        return st;
    }
    gpu->dec_tables = io;
    return KILN_OK;
}

kiln_status kiln__gpu_decode_blocks(kiln_context *ctx, kiln_format format, const uint8_t *blocks, size_t size,
                                    uint32_t width, uint32_t height, uint32_t subgroup_size, kiln_image *out)
{
    memset(out, 0, sizeof *out);
    const kiln_format_info *fi = kiln_format_get_info(format);
    if (!fi) return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "unknown format %d", (int)format);
    dec_kernel k;
    if (!(fi->flags & KILN_FF_COMPRESSED) || !kernel_for(format, &k))
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "no GPU decoder for %s (GPU decoding covers block formats)", fi->name);
    size_t need = kiln_format_image_size(format, width, height);
    if (need == 0 || !blocks || size < need)
        return kiln__fail(ctx, KILN_ERR_CORRUPT, "%s image of %ux%u needs %zu bytes of blocks, got %zu", fi->name, width,
                          height, need, size);
    kiln_gpu *gpu;
    KILN_TRY(kiln__gpu_get(ctx, &gpu));
    /* shared memory of decode_output.glsl: words per texel (= bytes per channel) x 16 texels x
     * workgroup, plus one word per block */
    uint32_t shared_bytes = ((uint32_t)fi->decoded_type * 16u + 1u) * KILN_DEC_LOCAL_SIZE * 4u;
    if (shared_bytes > gpu->props.limits.maxComputeSharedMemorySize)
        return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "decoding %s on the GPU needs %u bytes of shared memory; %s offers %u",
                          fi->name, shared_bytes, gpu->props.deviceName, gpu->props.limits.maxComputeSharedMemorySize);
    const kiln_vk_pipeline *pipe;
    kiln_vk_pipeline_desc desc = {
        .shader = k.shader,
        .local_size = KILN_DEC_LOCAL_SIZE,
        .spec = &k.variant,
        .nspec = 1,
        .nbindings = KILN_DEC_BINDINGS,
        .push_size = KILN_DEC_PUSH_WORDS * 4,
        .subgroup_size = subgroup_size,
    };
    KILN_TRY(kiln_vk_pipeline_get(ctx, gpu, &desc, &pipe));
    KILN_TRY(ensure_tables(ctx, gpu));
    KILN_TRY(kiln_image_alloc(ctx, out, width, height, fi->decoded_type));
    out->channels = fi->channels;
    out->srgb = (fi->flags & KILN_FF_SRGB) != 0;
    out->hdr = format == KILN_FORMAT_BC6H_UFLOAT || format == KILN_FORMAT_BC6H_SFLOAT;

    const uint32_t bx = (width + 3) / 4, by = (height + 3) / 4;
    const size_t texel_bytes = 4 * (size_t)fi->decoded_type;
    const size_t in_row = (size_t)bx * fi->block_bytes;      /* one block row of input */
    const size_t out_row = (size_t)width * 4 * texel_bytes;   /* one block row of output */
    size_t limit = gpu->props.limits.maxStorageBufferRange;
    if (limit > KILN_GPU_BATCH_MAX) limit = KILN_GPU_BATCH_MAX;
    const char *dbg = getenv("KILN_GPU_BATCH_BYTES"); /* testing aid: force small batches */
    if (dbg && strtoull(dbg, NULL, 10) > 0 && strtoull(dbg, NULL, 10) < limit) limit = (size_t)strtoull(dbg, NULL, 10);
    size_t rows = limit / (out_row > in_row ? out_row : in_row);
    kiln_status st = KILN_OK;
    if (rows == 0) st = kiln__fail(ctx, KILN_ERR_TOO_LARGE, "a block row of %u texels exceeds the device's buffer range", width);
    if (rows > by) rows = by;
    if (st == KILN_OK) st = io_scratch(ctx, gpu, &gpu->dec_in, rows * in_row, 0);
    if (st == KILN_OK) st = io_scratch(ctx, gpu, &gpu->dec_out, rows * out_row, 1);
    double total_ms = 0.0;
    for (uint32_t r0 = 0; st == KILN_OK && r0 < by; r0 += (uint32_t)rows) {
        uint32_t nrows = by - r0 < rows ? by - r0 : (uint32_t)rows;
        uint32_t texel_rows = height - r0 * 4 < nrows * 4 ? height - r0 * 4 : nrows * 4;
        size_t in_bytes = nrows * in_row, out_bytes = (size_t)texel_rows * width * texel_bytes;
        memcpy(kiln_vk_io_map(gpu->dec_in), blocks + (size_t)r0 * in_row, in_bytes);
        st = kiln_vk_buffer_flush(ctx, gpu, gpu->dec_in->direct ? &gpu->dec_in->dev : &gpu->dec_in->staging);
        if (st != KILN_OK) break;
        kiln_vk_cmd cmd;
        st = kiln_vk_cmd_begin(ctx, gpu, 1, &cmd);
        if (st != KILN_OK) break;
        kiln_vk_cmd_upload(&cmd, gpu->dec_in, in_bytes);
        kiln_vk_cmd_timestamp(&cmd, 0);
        uint32_t push[KILN_DEC_PUSH_WORDS] = {bx, nrows, width, texel_rows};
        kiln_vk_binding b[KILN_DEC_BINDINGS] = {{.buffer = gpu->dec_in->dev.buffer, .range = in_bytes},
                                                {.buffer = gpu->dec_out->dev.buffer, .range = out_bytes},
                                                {.buffer = gpu->dec_tables->dev.buffer}};
        st = kiln_vk_cmd_dispatch_linear(ctx, &cmd, pipe, b, push, (uint64_t)bx * nrows);
        kiln_vk_cmd_timestamp(&cmd, 1);
        kiln_vk_cmd_download(&cmd, gpu->dec_out, out_bytes);
        double ms = 0.0;
        if (st == KILN_OK) st = kiln_vk_cmd_submit(ctx, &cmd, &ms);
        kiln_vk_cmd_free(&cmd);
        total_ms += ms;
        if (st == KILN_OK)
            st = kiln_vk_buffer_invalidate(ctx, gpu, gpu->dec_out->direct ? &gpu->dec_out->dev : &gpu->dec_out->staging);
        if (st == KILN_OK)
            st = parallel_copy(ctx, (uint8_t *)out->pixels + (size_t)r0 * 4 * width * texel_bytes,
                               kiln_vk_io_map(gpu->dec_out), out_bytes);
        if (st == KILN_OK) st = kiln__progress(ctx, (float)(r0 + nrows) / (float)by);
    }
    if (st != KILN_OK) {
        kiln_image_free(out);
        return st;
    }
    ctx->last_gpu_ms = total_ms;
    return KILN_OK;
}

kiln_status kiln__gpu_decode(kiln_context *ctx, const kiln_texture *tex, uint32_t level, uint32_t layer, uint32_t face,
                             kiln_image *out)
{
    memset(out, 0, sizeof *out);
    if (!tex) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "kiln_decode: NULL texture");
    const kiln_format_info *fi = kiln_format_get_info(tex->format);
    if (!fi) return kiln__fail(ctx, KILN_ERR_UNSUPPORTED, "texture has an unknown format");
    size_t size = 0;
    const uint8_t *src = kiln_texture_image(tex, level, layer, face, &size);
    if (!src) return kiln__fail(ctx, KILN_ERR_CORRUPT, "level %u (layer %u, face %u) is missing or truncated", level, layer, face);
    return kiln__gpu_decode_blocks(ctx, tex->format, src, size, kiln_level_dim(tex->width, level),
                                   kiln_level_dim(tex->height, level), 0, out);
}

uint32_t kiln__gpu_subgroup_sizes(kiln_context *ctx)
{
    if (!ctx || !ctx->gpu || !ctx->gpu->device) return 0;
    uint32_t mask = 0;
    for (uint32_t s = 1; s <= 128; s <<= 1)
        if (kiln_vk_subgroup_size_ok(ctx->gpu, s)) mask |= s;
    return mask;
}

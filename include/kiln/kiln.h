/*
 * kiln.h - the public API of kiln, a library that bakes images into GPU-ready textures.
 *
 * This header is the manual. Conventions:
 *  - Every fallible call returns a kiln_status. KILN_OK is 0; every other value has a message from
 *    kiln_status_string(), and the context that saw the failure keeps a formatted explanation
 *    (kiln_last_error()), e.g. "foo.ktx2: level 3 extends past the end of the file".
 *  - All state lives in a kiln_context: no global state. A context may be used by one thread at a
 *    time; it owns a thread pool that kiln uses internally. Different contexts are independent.
 *  - Parameter structs come with an init function that fills the defaults; set fields after it.
 *  - Results never depend on the thread count: the same input and parameters give the same bytes.
 *  - Images are always stored as 4 channels (RGBA) of one pixel type, rows tightly packed. The
 *    `channels` field says how many are meaningful (1 = R/grey, 2 = RG or grey+alpha, 3, 4).
 *  - Textures hold one format and a chain of mip levels; level 0 is the largest. Inside a level the
 *    images are ordered layer, then face, then z-slice (as in KTX2), each a run of block rows.
 *  - Pointers returned inside structs belong to the struct; free them with the matching _free call.
 */
#ifndef KILN_H
#define KILN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(KILN_SHARED_BUILD)
#define KILN_API __declspec(dllexport)
#elif defined(__GNUC__)
#define KILN_API __attribute__((visibility("default")))
#else
#define KILN_API
#endif

#define KILN_VERSION_MAJOR 0
#define KILN_VERSION_MINOR 1
#define KILN_VERSION_PATCH 0
#define KILN_VERSION_STRING "0.1.0"

/* ---------------------------------------------------------------- status ---------------------- */

typedef enum kiln_status {
    KILN_OK = 0,
    KILN_ERR_INVALID_ARGUMENT = 1, /* a parameter is out of range or inconsistent */
    KILN_ERR_OUT_OF_MEMORY = 2,
    KILN_ERR_IO = 3,               /* a file could not be opened, read or written */
    KILN_ERR_CORRUPT = 4,          /* input data is malformed or truncated */
    KILN_ERR_UNSUPPORTED = 5,      /* valid input kiln cannot handle (format, feature, container) */
    KILN_ERR_TOO_LARGE = 6,        /* sizes beyond kiln's limits (checked before allocating) */
    KILN_ERR_CANCELLED = 7,        /* the progress callback or kiln_cancel() stopped the work */
    KILN_ERR_NO_DEVICE = 8,        /* no usable Vulkan device for the requested backend */
    KILN_ERR_GPU = 9,              /* a Vulkan call failed */
    KILN_ERR_INTERNAL = 10
} kiln_status;

/* A fixed English sentence for each status; never NULL. */
KILN_API const char *kiln_status_string(kiln_status status);

/* ---------------------------------------------------------------- formats --------------------- */

/* Format flags (KILN_FF_*), see kiln_format_info.flags. */
#define KILN_FF_COMPRESSED 0x01u /* block-compressed */
#define KILN_FF_SRGB 0x02u       /* colour channels use the sRGB transfer function */
#define KILN_FF_SIGNED 0x04u     /* SNORM or signed float */
#define KILN_FF_FLOAT 0x08u      /* floating point (BC6H, RGBA16F, RGBA32F) */
#define KILN_FF_ALPHA1 0x10u     /* 1-bit (punch-through) alpha */
#define KILN_FF_ETC1 0x20u       /* ETC2 RGB8 container, ETC1 modes only */

/* Pixel types of images. The value is the size of one channel in bytes. */
typedef enum kiln_pixel_type { KILN_PIXEL_U8 = 1, KILN_PIXEL_U16 = 2, KILN_PIXEL_F32 = 4 } kiln_pixel_type;

#include "kiln_formats.h"

typedef enum kiln_format {
    KILN_FORMAT_UNDEFINED = 0,
#define KILN_X_ENUM(ID, ...) KILN_FORMAT_##ID,
    KILN_FORMAT_TABLE(KILN_X_ENUM)
#undef KILN_X_ENUM
    KILN_FORMAT_COUNT
} kiln_format;

typedef struct kiln_format_info {
    kiln_format format;
    const char *name;       /* full CLI name, e.g. "bc1-srgb", "bc4-snorm", "etc2-rgba" */
    const char *cli_base;   /* base CLI name, e.g. "bc1" */
    const char *vk_name;    /* without "VK_FORMAT_" */
    uint32_t vk_format;     /* VkFormat */
    uint32_t dxgi_format;   /* 0 when DXGI has no equivalent (ETC/EAC) */
    const char *dxgi_name;  /* without "DXGI_FORMAT_"; "" when none */
    const char *fourcc;     /* legacy DDS FourCC or "" */
    uint32_t block_width, block_height, block_bytes;
    uint32_t channels;      /* meaningful channels */
    uint32_t dfd_model;     /* KTX2 DFD colour model */
    uint32_t flags;         /* KILN_FF_* */
    kiln_pixel_type decoded_type; /* what kiln_decode produces */
    uint32_t ktx2_type_size;
} kiln_format_info;

/* Table entry of a format; NULL for KILN_FORMAT_UNDEFINED or out-of-range values. */
KILN_API const kiln_format_info *kiln_format_get_info(kiln_format format);

/* Looks a format up by any of its names, case-insensitively: the full CLI name ("bc7-srgb"), the base
 * CLI name plus flags (see kiln_format_from_cli), the Vulkan name with or without "VK_FORMAT_", or the
 * DXGI name with or without "DXGI_FORMAT_". Also accepts the texconv aliases DXT1, DXT3, DXT5, BC4U,
 * BC4S, BC5U, BC5S, ATI1, ATI2. KILN_FORMAT_UNDEFINED when nothing matches. */
KILN_API kiln_format kiln_format_from_name(const char *name);

/* A base CLI name ("bc1") and flags (KILN_FF_SRGB and/or KILN_FF_SIGNED) to the exact variant. */
KILN_API kiln_format kiln_format_from_cli(const char *base, uint32_t flags);
KILN_API kiln_format kiln_format_from_vk(uint32_t vk_format);     /* ETC2 RGB8, never ETC1 */
KILN_API kiln_format kiln_format_from_dxgi(uint32_t dxgi_format); /* DXGI BC1 -> BC1 RGBA */

/* Bytes of one w x h image of the format (whole blocks), or 0 on overflow / bad format. */
KILN_API size_t kiln_format_image_size(kiln_format format, uint32_t width, uint32_t height);

/* ---------------------------------------------------------------- context --------------------- */

typedef struct kiln_context kiln_context;

/* Where work that has a GPU path runs. AUTO takes the fastest Vulkan device (discrete, then
 * integrated, virtual, other: the order of kiln_gpu_list) when one works, else the CPU, silently
 * (one line on stderr when verbose). A CPU implementation of Vulkan (lavapipe/llvmpipe) is slower
 * than kiln's own CPU path, so AUTO takes it only when the environment has KILN_ALLOW_CPU_VULKAN=1;
 * VULKAN uses any device, lavapipe included, and fails with KILN_ERR_NO_DEVICE when there is none.
 * kiln_context_params.device_index picks a device explicitly under AUTO or VULKAN (an index that
 * does not exist is KILN_ERR_INVALID_ARGUMENT). KILN_VK_VALIDATION=1 in the environment turns on
 * the Khronos validation layer (messages go to stderr). */
typedef enum kiln_backend {
    KILN_BACKEND_AUTO = 0,   /* the fastest Vulkan GPU when one works, else the CPU */
    KILN_BACKEND_CPU = 1,
    KILN_BACKEND_VULKAN = 2  /* fails with KILN_ERR_NO_DEVICE when there is none */
} kiln_backend;

/* Progress: fraction in [0, 1]. Return non-zero to cancel (the call then returns KILN_ERR_CANCELLED). */
typedef int (*kiln_progress_fn)(void *user, float fraction);

typedef struct kiln_context_params {
    uint32_t threads;        /* 0 = one per online CPU */
    kiln_backend backend;
    int device_index;        /* -1 = choose automatically, else the index in kiln_gpu_list order */
    kiln_progress_fn progress;
    void *progress_user;
    int verbose;             /* 1: GPU selection and fallbacks are reported on stderr */
} kiln_context_params;

KILN_API void kiln_context_params_init(kiln_context_params *params);
KILN_API kiln_status kiln_context_create(const kiln_context_params *params, kiln_context **out);
KILN_API void kiln_context_free(kiln_context *ctx); /* accepts NULL */

/* The last failure's explanation (or "" when none). Valid until the next call on ctx. */
KILN_API const char *kiln_last_error(const kiln_context *ctx);
/* Number of worker threads the context uses. */
KILN_API uint32_t kiln_context_threads(const kiln_context *ctx);
/* Asks running work on ctx to stop; safe from another thread. Cleared at the start of each call. */
KILN_API void kiln_cancel(kiln_context *ctx);

/* ---------------------------------------------------------------- images ---------------------- */

typedef struct kiln_image {
    uint32_t width, height;
    kiln_pixel_type type;
    uint32_t channels;  /* meaningful channels (storage is always RGBA) */
    int srgb;           /* 1 when colour channels are sRGB-encoded */
    int hdr;            /* 1 when the source was a high dynamic range file */
    void *pixels;       /* width * height * 4 * type bytes */
} kiln_image;

/* Allocates a zeroed image; checks the size before allocating. */
KILN_API kiln_status kiln_image_alloc(kiln_context *ctx, kiln_image *img, uint32_t width, uint32_t height,
                                      kiln_pixel_type type);
KILN_API void kiln_image_free(kiln_image *img); /* accepts NULL and zeroed images */

/* Largest width or height kiln accepts, and the largest pixel count. */
#define KILN_MAX_DIMENSION 65536u
#define KILN_MAX_PIXELS (1ull << 30)

/* Reads PNG (8/16-bit, every colour type), JPEG, TGA, BMP, Radiance HDR and OpenEXR (half/float,
 * every compression). 16-bit PNG gives U16, HDR and EXR give F32, the rest U8. LDR colour images are
 * tagged srgb = 1. */
KILN_API kiln_status kiln_image_load(kiln_context *ctx, const char *path, kiln_image *out);
KILN_API kiln_status kiln_image_load_memory(kiln_context *ctx, const void *data, size_t size, kiln_image *out);

/* Writes by extension: .png (U8 -> 8-bit, U16 -> 16-bit; F32 is clamped to [0,1] and written 16-bit)
 * or .exr (F32 as half unless KILN_SAVE_EXR_FLOAT; U8/U16 converted). `channels` picks grey, grey+alpha,
 * RGB or RGBA. The file appears atomically (temporary name, then rename). */
#define KILN_SAVE_EXR_FLOAT 0x1u
KILN_API kiln_status kiln_image_save(kiln_context *ctx, const kiln_image *img, const char *path, uint32_t flags);

/* Converts pixel type (U8 <-> U16 <-> F32; values scaled to [0,1] for F32, clamped when narrowing). */
KILN_API kiln_status kiln_image_convert(kiln_context *ctx, const kiln_image *src, kiln_pixel_type type,
                                        kiln_image *dst);

/* ---------------------------------------------------------------- textures -------------------- */

#define KILN_MAX_LEVELS 32

typedef struct kiln_kv {
    char *key;          /* NUL-terminated */
    uint8_t *value;     /* value bytes as stored (a string value includes its NUL) */
    uint32_t value_size;
} kiln_kv;

typedef struct kiln_texture {
    kiln_format format;
    uint32_t width, height, depth; /* depth 1 for 2-D textures */
    uint32_t layers;               /* >= 1 (1 = not an array) */
    uint32_t faces;                /* 1 or 6 (cube map) */
    uint32_t levels;               /* >= 1 */
    int is_array;                  /* KTX2 layerCount > 0 */
    int premultiplied;             /* alpha is premultiplied */
    size_t level_offset[KILN_MAX_LEVELS]; /* byte offset of each level in data */
    size_t level_size[KILN_MAX_LEVELS];   /* bytes of each level (all layers, faces, slices) */
    uint8_t *data;
    size_t data_size;
    kiln_kv *kv;                   /* key/value metadata (KTX2), sorted by key */
    uint32_t kv_count;
} kiln_texture;

/* Fills the geometry and allocates zeroed data for `levels` levels (0 = full chain). */
KILN_API kiln_status kiln_texture_alloc(kiln_context *ctx, kiln_texture *tex, kiln_format format, uint32_t width,
                                        uint32_t height, uint32_t levels, uint32_t layers, uint32_t faces);
KILN_API void kiln_texture_free(kiln_texture *tex); /* accepts NULL and zeroed textures */
/* Width / height of a level (never below 1). */
KILN_API uint32_t kiln_level_dim(uint32_t base, uint32_t level);
/* Pointer to one image (level, layer, face, slice 0) and its size in bytes. NULL when out of range. */
KILN_API uint8_t *kiln_texture_image(const kiln_texture *tex, uint32_t level, uint32_t layer, uint32_t face,
                                     size_t *size);
/* Sets (replaces) a string key/value pair. */
KILN_API kiln_status kiln_texture_set_kv(kiln_context *ctx, kiln_texture *tex, const char *key, const char *value);

/* ---------------------------------------------------------------- containers ------------------ */

typedef enum kiln_container { KILN_CONTAINER_AUTO = 0, KILN_CONTAINER_KTX2, KILN_CONTAINER_DDS, KILN_CONTAINER_KTX1 } kiln_container;

typedef enum kiln_dds_header { KILN_DDS_HEADER_AUTO = 0, KILN_DDS_HEADER_DX10, KILN_DDS_HEADER_LEGACY } kiln_dds_header;

typedef struct kiln_save_params {
    kiln_container container;   /* AUTO: from the extension (.ktx2, .dds; .ktx writes KTX2 too) */
    int zstd_level;             /* KTX2: 0 = no supercompression, 1..22 = zstd level */
    kiln_dds_header dds_header; /* DDS: AUTO = legacy where the format allows (as texconv), else DX10 */
} kiln_save_params;

KILN_API void kiln_save_params_init(kiln_save_params *params);

/* Reads KTX2 (with or without zstd), KTX 1 or DDS, detected from the content. */
KILN_API kiln_status kiln_texture_load(kiln_context *ctx, const char *path, kiln_texture *out);
KILN_API kiln_status kiln_texture_load_memory(kiln_context *ctx, const void *data, size_t size, kiln_texture *out);
/* Writes atomically (temporary name, then rename); no partial file is left on failure. */
KILN_API kiln_status kiln_texture_save(kiln_context *ctx, const kiln_texture *tex, const char *path,
                                       const kiln_save_params *params);
/* Serialises into a malloc'ed buffer (free with kiln_free). */
KILN_API kiln_status kiln_texture_save_memory(kiln_context *ctx, const kiln_texture *tex, kiln_container container,
                                              const kiln_save_params *params, uint8_t **out, size_t *out_size);
KILN_API void kiln_free(void *p);

/* Strict validation. Calls `report` once per problem (severity 2 = error, 1 = warning) and returns
 * KILN_OK only when no error was found (KILN_ERR_CORRUPT otherwise). */
typedef void (*kiln_report_fn)(void *user, int severity, const char *message);
KILN_API kiln_status kiln_validate_memory(kiln_context *ctx, const void *data, size_t size, kiln_report_fn report,
                                          void *user);

/* Human-readable description of a file's header, levels, DFD and metadata (malloc'ed, kiln_free). */
KILN_API kiln_status kiln_describe_memory(kiln_context *ctx, const void *data, size_t size, char **out_text);
/* The same description as JSON (one object; keys as in the text form). */
KILN_API kiln_status kiln_describe_memory_json(kiln_context *ctx, const void *data, size_t size, char **out_json);

/* ---------------------------------------------------------------- decode ---------------------- */

/* Decodes one image of a texture to pixels of the format's decoded_type (U8 for 8-bit formats, U16
 * for unsigned EAC, F32 for BC6H, SNORM and float formats). Channels the format lacks are 0, alpha 1
 * (as Vulkan samples them). BC1-BC5 follow the D3D10 reference: integer interpolation without
 * rounding ((2a+b)/3, (a+b)/2, ((7-i)a+ib)/7 ...), as libsquish and rgbcx decode. Uses the context's
 * backend (GPU decode shaders when it is Vulkan). */
KILN_API kiln_status kiln_decode(kiln_context *ctx, const kiln_texture *tex, uint32_t level, uint32_t layer,
                                 uint32_t face, kiln_image *out);

/* ---------------------------------------------------------------- metrics --------------------- */

typedef struct kiln_metrics {
    double psnr_rgb;        /* over R, G, B together (dB); INFINITY when identical */
    double psnr[4];         /* per channel */
    double psnr_alpha;      /* same as psnr[3] */
    double mse_rgb;
    double ssim;            /* mean SSIM of the luma (8x8 windows, Wang et al. constants) */
    double max_error;       /* largest absolute channel difference, in the image's units (255 for U8) */
    double normal_angle_mean;  /* degrees; mean angle between decoded normals (xyz from RGB) */
    double rmse;            /* HDR: RMSE over RGB in linear values */
    double rmsle;           /* HDR: sqrt(mean over R,G,B of (ln(1+x) - ln(1+y))^2) */
    int hdr;
} kiln_metrics;

/* Compares two images of the same size (any pixel types; both brought to [0,1] floats, or raw floats
 * when either is HDR). Channels compared: max of the two `channels`. */
KILN_API kiln_status kiln_compare(kiln_context *ctx, const kiln_image *a, const kiln_image *b, kiln_metrics *out);

/* ---------------------------------------------------------------- encode ---------------------- */

typedef enum kiln_quality {
    KILN_QUALITY_FAST = 0,   /* principal axis + refinement class; fastest */
    KILN_QUALITY_NORMAL = 1,
    KILN_QUALITY_HIGH = 2,   /* cluster fit (BC1), wide searches (ETC) */
    KILN_QUALITY_MAX = 3     /* the best kiln knows; exhaustive/optimal where proven (BC4/BC5/EAC) */
} kiln_quality;

typedef struct kiln_encode_params {
    kiln_format format;
    kiln_quality quality;
    int perceptual;           /* weight R,G,B errors 0.299/0.587/0.114 style instead of equally */
    int dither;               /* error-diffusion dithering against banding */
    uint8_t alpha_threshold;  /* BC1a / ETC2 RGB A1: alpha below this is transparent (default 128) */
    int alpha_cutout;         /* ignore colour error where alpha is 0 (BC1a / ETC2 A1) */
    int gpu_strategy;         /* 0 = kiln's own design, 1 = the seed design (betsy / cluster-fit paper) */
    int bc1_black;            /* BC1 RGB, quality normal and up: dark texels may use the three-colour mode's
                                 black (rgbcx's default; higher PSNR on dark images). Only for data read as
                                 RGB: VK_FORMAT_BC1_RGB_* return alpha 1 there, but DXGI BC1 (DDS) readers
                                 return alpha 0 for those texels. Default 0. CPU only. */
} kiln_encode_params;

/* Defaults for a format and quality. */
KILN_API void kiln_encode_params_init(kiln_encode_params *params, kiln_format format, kiln_quality quality);
/* Encodes one image into one image of params->format: dst must hold kiln_format_image_size() bytes.
 * Sizes that are not multiples of the block size are padded by edge replication. Deterministic for
 * any thread count. */
KILN_API kiln_status kiln_encode_image(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                                       uint8_t *dst, size_t dst_size);
/* Encodes an image into a new one-level texture. */
KILN_API kiln_status kiln_encode(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                                 kiln_texture *out);

/* Batches: several images, each into several formats, in one call. out[i * nformats + f] receives a
 * new one-level texture of images[i] in params[f].format, with exactly the bytes kiln_encode gives
 * (for any backend and flags). When the context's backend resolves to Vulkan, the formats with a
 * pipelined GPU encoder (BC1, BC1a, BC3, BC4, BC5 at the qualities their GPU encoder covers, and ETC1,
 * ETC2 RGB / RGBA / RGB A1, EAC R11 / RG11 with the kiln strategy and no dithering; see
 * docs/PERFORMANCE.md) run through it: up to 3 block-row batches in flight, so the upload, kernels
 * and download of consecutive images (and of the batches of one large image) overlap, and the
 * formats of one image whose shader input is the same share one upload. Other formats are encoded
 * image by image as kiln_encode does (on the GPU when it has an encoder, else on the CPU).
 * KILN_ENCODE_BATCH_SPLIT ("--backend both"): the pipelined formats are split between the GPU and
 * the CPU: a CPU thread (with its own pool of kiln_context_threads - 1 workers) takes images from the
 * back of the queue the GPU takes from the front, and stops when it would only delay the end; without a
 * GPU everything runs on the CPU. Small images of one width go to the GPU several to a job. nformats is 1..8. On failure
 * every texture of out is freed. */
#define KILN_ENCODE_BATCH_SPLIT 1u
KILN_API kiln_status kiln_encode_batch(kiln_context *ctx, const kiln_image *images, uint32_t count,
                                       const kiln_encode_params *params, uint32_t nformats, uint32_t flags,
                                       kiln_texture *out);

/* ---------------------------------------------------------------- mipmaps --------------------- */

/* Mipmap chains on the CPU (src/mip; the exact arithmetic is specified in src/mip/mip.h, the
 * reference the GPU strategies are tested against) or, when the context's backend resolves to
 * Vulkan, on the GPU (kiln_mip_strategy below). Level l is max(1, W >> l) x max(1, H >> l); a
 * full chain has floor(log2(max(W, H))) + 1 levels and ends at 1x1. Every level is filtered from
 * the level above kept in fp32 linear values (never from a quantised level), separably, vertical
 * pass first, in a fixed order: results are the same bytes for any thread count. */

typedef enum kiln_mip_filter {
    KILN_MIP_FILTER_BOX = 0,      /* exact, energy-conserving box: 2 taps (1/2, 1/2) on an even axis, the
                                     3-tap NP2 kernel ((n-x)/D, n/D, (x+1)/D) on an odd axis D = 2n+1 */
    KILN_MIP_FILTER_KAISER = 1,   /* Kaiser-windowed sinc, NVTT defaults: width 3, alpha 4, stretch 1 */
    KILN_MIP_FILTER_LANCZOS3 = 2, /* sinc(x) sinc(x/3), support 3 */
    KILN_MIP_FILTER_MITCHELL = 3  /* Mitchell-Netravali cubic, B = C = 1/3, support 2 */
} kiln_mip_filter;
/* The quality filters are evaluated level by level (each level from the one above) as polyphase
 * kernels at output scale (12-13 taps for a 2:1 step, box-integrated over each source texel), as NVTT
 * does. They can ring: U8/U16 results are clamped, float results are not. */

typedef enum kiln_mip_edge {
    KILN_MIP_EDGE_CLAMP = 0,  /* taps outside the image repeat the edge texel */
    KILN_MIP_EDGE_WRAP = 1    /* tiling textures: taps wrap around (box never reads outside) */
} kiln_mip_edge;

typedef enum kiln_mip_color {
    KILN_MIP_COLOR_AUTO = 0,   /* sRGB for U8 images tagged srgb (unless normal_map), linear otherwise */
    KILN_MIP_COLOR_SRGB = 1,   /* decode sRGB to linear, filter, re-encode with correct rounding */
    KILN_MIP_COLOR_LINEAR = 2  /* values are data: filter them as stored */
} kiln_mip_color;

typedef enum kiln_mip_alpha {
    KILN_MIP_ALPHA_WEIGHTED = 0,     /* straight alpha: colour weighted by alpha (premultiply, filter,
                                        unpremultiply) so transparent texels do not bleed; a fully
                                        transparent footprint keeps its plain average colour */
    KILN_MIP_ALPHA_SEPARATE = 1,     /* alpha is unrelated data: all four channels filtered alike */
    KILN_MIP_ALPHA_PREMULTIPLIED = 2 /* input already premultiplied: filtered alike, texture marked so */
} kiln_mip_alpha;

/* Where the chain is made when the context's backend resolves to Vulkan (src/gpu/gpu_mip.c; the
 * designs and their measured speed: docs/PERFORMANCE.md "Mipmaps: GPU strategies"). Every GPU
 * strategy but blit computes the CPU reference's arithmetic (within 1 LSB of 8-bit outputs) for
 * every size, in one batch for all layers / faces of kiln_mip_texture_layers.
 * The GPU path covers U8 and F32 bases and RGBA8 / RGBA16F / RGBA32F outputs: every strategy does
 * the box filter; the quality filters, normal maps and alpha coverage run with AUTO and PER_LEVEL
 * (src/gpu/gpu_mip_filter.c). 16-bit bases and R8/RG8 outputs run on the CPU under AUTO;
 * what the GPU does not do is KILN_ERR_UNSUPPORTED with an explicit strategy. Backend CPU always
 * uses the CPU. */
typedef enum kiln_mip_strategy {
    KILN_MIP_STRATEGY_AUTO = 0,        /* on Vulkan the pyramid's fast plan (the fastest measured) */
    KILN_MIP_STRATEGY_BLIT = 1,        /* vkCmdBlitImage chain (graphics queue; keeps the input format:
                                          RGBA8 -> RGBA8 or linear RGBA32F): exact only where every level
                                          is even, and never alpha-weighted; AUTO never picks it */
    KILN_MIP_STRATEGY_PER_LEVEL = 2,   /* one compute dispatch and barrier per level */
    KILN_MIP_STRATEGY_SUBGROUP = 3,    /* subgroup-shuffle reduction, up to 5 levels per dispatch */
    KILN_MIP_STRATEGY_PYRAMID = 4,     /* nvpro_pyramid-style fast (<= 6 levels) + general (2 levels) stages */
    KILN_MIP_STRATEGY_SINGLE_PASS = 5, /* every level of every texture of the call in ONE dispatch, any size
                                          (odd included) and batch: the workgroup that completes the last input
                                          tile of a later stage's tile continues with it (atomic arrival
                                          counters, release/acquire, no waiting); on the fast box path (default)
                                          the pyramid's stages chained tile by tile (shaders/mip_one.comp), with
                                          KILN_GPU_MIP_FAST=0 shaders/mip_tile.comp. Exact; on the H100 / H200
                                          slower than pyramid except at some 16:9 sizes (docs/PERFORMANCE.md) */
    KILN_MIP_STRATEGY_BASELINE = 6     /* bench only: reads the base, writes every level WITHOUT reducing
                                          (wrong values; refused by kiln_mip_generate/kiln_mip_texture) */
} kiln_mip_strategy;

typedef struct kiln_mip_params {
    kiln_mip_filter filter;     /* default BOX */
    kiln_mip_edge edge;         /* default CLAMP */
    kiln_mip_color color;       /* default AUTO */
    kiln_mip_alpha alpha;       /* default WEIGHTED */
    float alpha_coverage_ref;   /* in (0, 1): keep alpha-test coverage (texconv -keepcoverage): each level's
                                   alpha is scaled so the fraction of texels whose stored alpha > ref is
                                   as close as possible to level 0's. 0 = off (default) */
    int normal_map;             /* 1: xyz are unit vectors (unorm 2v-1 for U8/U16, signed for F32),
                                   renormalised per level; implies linear, no alpha weighting */
    uint32_t levels;            /* levels including level 0; 0 = the full chain (default) */
    kiln_mip_strategy strategy; /* GPU strategy when the backend is Vulkan; default AUTO */
} kiln_mip_params;

KILN_API void kiln_mip_params_init(kiln_mip_params *params);

/* Number of levels of a full chain for a width x height image (0 when either is 0). */
KILN_API uint32_t kiln_mip_level_count(uint32_t width, uint32_t height);

/* Builds the chain of `base` as images: levels_out[l] for l = 0 .. *level_count - 1, each allocated
 * here (free each with kiln_image_free), with base's pixel type, channels, srgb and hdr flags (HDR
 * inputs are F32 and stay F32). levels_out[0] is a copy of base. On entry *level_count is the number
 * of slots in levels_out (KILN_MAX_LEVELS always suffices); on return the number of levels made. On
 * failure nothing stays allocated and *level_count is 0. */
KILN_API kiln_status kiln_mip_generate(kiln_context *ctx, const kiln_image *base, const kiln_mip_params *params,
                                       kiln_image *levels_out, uint32_t *level_count);

/* Builds an uncompressed texture with all levels of `base`. Formats: RGBA8_UNORM / RGBA8_SRGB (the
 * variant follows the colour space: SRGB when filtering decoded sRGB), RGBA16F and RGBA32F (linear
 * values; sRGB inputs are decoded), R8_UNORM (keeps R) and RG8_UNORM (keeps R, G): these are linear
 * under AUTO; under an explicit SRGB they hold sRGB-encoded values. Other formats:
 * KILN_ERR_UNSUPPORTED (compress levels with kiln_encode_image). */
KILN_API kiln_status kiln_mip_texture(kiln_context *ctx, const kiln_image *base, const kiln_mip_params *params,
                                      kiln_format uncompressed_format, kiln_texture *out);
/* The same for arrays and cube maps: images[layer * faces + face], all of one size and pixel type;
 * faces = 6 makes a cube map (square faces; filtered per face with the edge mode, not across seams).
 * is_array sets kiln_texture.is_array. */
KILN_API kiln_status kiln_mip_texture_layers(kiln_context *ctx, const kiln_image *images, uint32_t layers,
                                             uint32_t faces, int is_array, const kiln_mip_params *params,
                                             kiln_format uncompressed_format, kiln_texture *out);

/* Encodes `img` with a mip chain into a new texture of params->format: the levels are made by
 * kiln_mip_generate with `mip` (NULL = defaults: the full chain, exact box filter; mip->levels 0 = the
 * full chain) and each level is encoded as kiln_encode_image does. A colour space left AUTO follows
 * the target format: sRGB filtering for an _SRGB format, linear otherwise (--normal maps are linear).
 * Deterministic for any thread count. */
KILN_API kiln_status kiln_encode_mips(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *params,
                                      const kiln_mip_params *mip, kiln_texture *out);

/* ---------------------------------------------------------------- GPU ------------------------- */

typedef struct kiln_gpu_info {
    char name[256];
    char driver[256];
    uint32_t vendor_id, device_id;
    uint32_t api_version;
    uint32_t subgroup_size;
    int discrete;
    int bc_sampling;   /* textureCompressionBC */
    int etc2_sampling; /* textureCompressionETC2 */
} kiln_gpu_info;

/* Lists usable Vulkan devices (count 0 when there is no loader or device; that is not an error). */
KILN_API kiln_status kiln_gpu_list(kiln_context *ctx, kiln_gpu_info *infos, uint32_t capacity, uint32_t *count);
/* The backend the context ended up using after AUTO resolution (CPU or VULKAN), and the device. */
KILN_API kiln_backend kiln_context_backend(kiln_context *ctx);
KILN_API const kiln_gpu_info *kiln_context_gpu(kiln_context *ctx); /* NULL on the CPU */

/* Time of the last GPU dispatch of a decode/encode in milliseconds from timestamp queries (kernel
 * only), or a negative value when the last call ran on the CPU. After kiln_encode_batch: the kernel
 * time summed over all of the batch's GPU work (every image and format), negative when none ran there. */
KILN_API double kiln_last_gpu_ms(const kiln_context *ctx);

/* ---------------------------------------------------------------- flames ---------------------- */

/* Fractal flames: kiln renders flam3 3.1 genomes (XML, any number of <flame> elements) as a source of
 * images, statistically indistinguishable from flam3-render's output (see docs/FLAME.md). */
typedef struct kiln_flames kiln_flames; /* parsed genomes (opaque) */

/* Parses a genome file / buffer. Malformed XML, unknown variations, non-finite or absurd values give
 * KILN_ERR_CORRUPT with a message naming the flame and attribute. */
KILN_API kiln_status kiln_flames_load(kiln_context *ctx, const char *path, kiln_flames **out);
KILN_API kiln_status kiln_flames_load_memory(kiln_context *ctx, const void *data, size_t size, kiln_flames **out);
KILN_API uint32_t kiln_flames_count(const kiln_flames *flames);
/* The genome's name attribute ("" when none) and size; NULL / 0 for a bad index. */
KILN_API const char *kiln_flames_name(const kiln_flames *flames, uint32_t index);
KILN_API void kiln_flames_size(const kiln_flames *flames, uint32_t index, uint32_t *width, uint32_t *height);
KILN_API void kiln_flames_free(kiln_flames *flames); /* accepts NULL */

typedef struct kiln_flame_params {
    uint32_t width, height;  /* 0 = the genome's size; otherwise the framing is kept (scale follows width) */
    double quality;          /* samples per pixel; <= 0 = the genome's quality */
    uint32_t supersample;    /* 0 = the genome's */
    uint64_t seed;           /* same seed + parameters = same bytes, for any thread count (CPU) */
    kiln_backend backend;    /* AUTO = the context's backend */
} kiln_flame_params;

KILN_API void kiln_flame_params_init(kiln_flame_params *params);
/* Renders flame `index` into a new U8 image (srgb = 1, channels = 3, the stored alpha is 255). The
 * chaos game runs on the GPU when the backend resolves to Vulkan and the GPU renderer takes the
 * genome, else on the CPU. */
KILN_API kiln_status kiln_flame_render(kiln_context *ctx, const kiln_flames *flames, uint32_t index,
                                       const kiln_flame_params *params, kiln_image *out);

#ifdef __cplusplus
}
#endif
#endif /* KILN_H */

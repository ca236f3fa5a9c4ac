/* support.h - helpers shared by the unit tests (cmocka). */
#ifndef KILN_TEST_SUPPORT_H
#define KILN_TEST_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "kiln/kiln.h"

/* Deterministic pseudo-random numbers (xorshift64*). */
typedef struct kt_rng { uint64_t s; } kt_rng;
void kt_rng_seed(kt_rng *r, uint64_t seed);
uint32_t kt_rng_u32(kt_rng *r);
void kt_rng_bytes(kt_rng *r, void *dst, size_t n);

/* Fills img (allocated, 4 channels, U8, U16 or F32) with a crop of src (RGBA8, wrapping) at (ox, oy), or (src NULL)
 * random texels; U16 adds up to 199 of noise to v * 257, F32 maps v to v / 255 * 1.2 - 0.1 plus up to 0.001 of
 * noise. alpha_noise: the alpha of every third 4x4 block (by x / 4 + y / 4) is random. */
void kt_fill_crop(kiln_image *img, const kiln_image *src, uint32_t ox, uint32_t oy, int alpha_noise, kt_rng *rng);

/* Fills a w x h RGBA8 image (4 bytes a texel, rows packed) with blocks built for ties and boundaries of
 * the ETC/EAC encoders: per 4x4 block one of flat, two random values, two values with min + max = 255 and a
 * small range (the CPU's EAC range estimate's double rounding boundary), that plus values between, random. */
void kt_fill_crafted_blocks(uint8_t *px, uint32_t w, uint32_t h, kt_rng *rng);

/* A context for tests (threads: 0 = default; backend CPU unless the name says otherwise). */
kiln_context *kt_context(uint32_t threads, kiln_backend backend);
/* Path of a file under ../shared/testdata (static buffer, valid until the next call). */
const char *kt_testdata(const char *relative);
/* Path of a fresh scratch file in the build tree (static buffer). */
const char *kt_tmp(const char *name);
/* FNV-1a 64 of bytes, for golden hashes. */
uint64_t kt_hash(const void *data, size_t size);
/* kiln_encode_image on ctx, memoised for the process: the GPU tests compare many shader variants with the same
 * CPU reference, and the CPU encoder is deterministic (same bytes for any thread count), so a reference is encoded
 * once per (texels, size, type, channels, colour flags, every encode parameter) and copied out after. Up to 256 MB
 * of references are kept (the oldest dropped first). Returns what kiln_encode_image returned. */
kiln_status kt_encode_cpu_cached(kiln_context *ctx, const kiln_image *img, const kiln_encode_params *ep, uint8_t *dst,
                                 size_t size);

/* 1 in the sanitised (ASan + UBSan) build. Its purpose is the host code's memory and UB checks; long matrices of
 * shader-only variants (the same host path with another specialisation) run in full in the Release build and
 * thinned out there. */
int kt_sanitized(void);

/* 1 when the GPU tests run light: every host path, format and option once, on small images, instead of the full
 * matrix of shader variants (opt-in bits, lane counts, designs: the same host code with other specialisation
 * constants). KILN_TEST_GPU_LIGHT=1 in the environment turns it on, =0 off; unset, it follows kt_sanitized().
 * scripts/test.sh sets it for the sanitised build's ctest: ASan / UBSan instrument kiln's host code, while the
 * shaders run inside lavapipe, uninstrumented, so a variant matrix there repeats the same host code, and every
 * pipeline costs ~1 s of CPU under ASan. The Release build's ctest runs the full matrix (tests/README.md). */
int kt_gpu_light(void);

/* kiln__gpu_subgroup_sizes(gpu) on a device with several subgroup sizes, 0 on a device with one (lavapipe: 8, NVIDIA:
 * 32): there a pipeline that requires the size is the default's code again (another cache key, another LLVM compile on
 * lavapipe), so the tests compare a required size once per test file (with kiln__gpu_subgroup_sizes) and take this for
 * their other loops. */
uint32_t kt_subgroup_sizes_multi(kiln_context *gpu);

/* 1 when a Vulkan device is available (lavapipe in CI). */
int kt_have_vulkan(void);
/* The two contexts of a GPU test: *gpu on the Vulkan backend (lavapipe allowed) and *cpu on the CPU with
 * cpu_threads threads, with the Vulkan validation layer turned on first (KILN_VK_VALIDATION=1). Both stay
 * NULL when there is no Vulkan device (the tests then skip). Returns -1 when a context cannot be made.
 * KILN_TEST_VK_VALIDATION=0 in the environment: no validation layer. scripts/test.sh sets it for the sanitised
 * build's ctest only: the layer checks the Vulkan calls, which are the same in every build (the Release ctest
 * checks them, with the full test matrix), and under ASan its SPIR-V checks of every pipeline (uninstrumented
 * code whose allocations go through ASan's allocator) were ~60 % of a GPU test's CPU time (test_gpu_encode_bc's
 * dither_identical: 53 -> 21 CPU s, 2026-11-27). */
int kt_gpu_contexts(kiln_context **gpu, kiln_context **cpu, uint32_t cpu_threads);

/* The GPU tests' cmocka group fixture: *state points at a kt_gpu_fixture made by kt_gpu_contexts with a
 * CPU context of 2 threads (kt_gpu_setup) or 1 (kt_gpu_setup_1thread); kt_gpu_teardown frees both. */
typedef struct kt_gpu_fixture {
    kiln_context *gpu;
    kiln_context *cpu;
} kt_gpu_fixture;
int kt_gpu_setup(void **state);
int kt_gpu_setup_1thread(void **state);
int kt_gpu_teardown(void **state);

/* The Vulkan validation layer's message count for the GPU context (the tests assert 0); prints a note when the
 * layer is not installed, since nothing was checked then. */
uint32_t kt_gpu_validation_messages(kiln_context *gpu);

/* Random RGBA test images of the mip tests: 8-bit sRGB with transparent / opaque / partial alpha, 8-bit linear
 * opaque, or float with transparent texels (malloc'd pixels; aborts when out of memory). */
enum { KT_MIP_SRGB_ALPHA, KT_MIP_LINEAR_OPAQUE, KT_MIP_F32_ALPHA, KT_MIP_NMODES };
void kt_mip_test_image(kt_rng *rng, int mode, uint32_t w, uint32_t h, kiln_image *img);

#endif

#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void kt_rng_seed(kt_rng *r, uint64_t seed) { r->s = seed ? seed * 0x9E3779B97F4A7C15ull : 0x1234567ull; }

uint32_t kt_rng_u32(kt_rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return (uint32_t)((r->s * 0x2545F4914F6CDD1Dull) >> 32);
}

void kt_rng_bytes(kt_rng *r, void *dst, size_t n)
{
    uint8_t *d = dst;
    for (size_t i = 0; i < n; i++) d[i] = (uint8_t)kt_rng_u32(r);
}

kiln_context *kt_context(uint32_t threads, kiln_backend backend)
{
    kiln_context_params p;
    kiln_context_params_init(&p);
    p.threads = threads;
    p.backend = backend;
    kiln_context *ctx = NULL;
    if (kiln_context_create(&p, &ctx) != KILN_OK) return NULL;
    return ctx;
}

const char *kt_testdata(const char *relative)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", KILN_TESTDATA, relative);
    return buf;
}

const char *kt_tmp(const char *name)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/test-tmp", KILN_BINARY_DIR);
    static int made;
    if (!made) {
        char mk[4200];
        snprintf(mk, sizeof mk, "mkdir -p '%s/test-tmp'", KILN_BINARY_DIR);
        if (system(mk) != 0) fprintf(stderr, "cannot create %s\n", buf);
        made = 1;
    }
    snprintf(buf, sizeof buf, "%s/test-tmp/%d-%s", KILN_BINARY_DIR, (int)getpid(), name);
    return buf;
}

uint64_t kt_hash(const void *data, size_t size)
{
    const uint8_t *p = data;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

int kt_have_vulkan(void)
{
    kiln_context *ctx = kt_context(1, KILN_BACKEND_AUTO);
    if (!ctx) return 0;
    uint32_t n = 0;
    kiln_gpu_list(ctx, NULL, 0, &n);
    kiln_context_free(ctx);
    return n > 0;
}

int kt_gpu_contexts(kiln_context **gpu, kiln_context **cpu, uint32_t cpu_threads)
{
    setenv("KILN_VK_VALIDATION", "1", 1);
    *gpu = *cpu = NULL;
    if (!kt_have_vulkan()) return 0;
    *gpu = kt_context(2, KILN_BACKEND_VULKAN);
    *cpu = kt_context(cpu_threads, KILN_BACKEND_CPU);
    return *gpu && *cpu ? 0 : -1;
}

static kt_gpu_fixture kt_fixture;

static int kt_gpu_setup_n(void **state, uint32_t cpu_threads)
{
    memset(&kt_fixture, 0, sizeof kt_fixture);
    if (kt_gpu_contexts(&kt_fixture.gpu, &kt_fixture.cpu, cpu_threads)) return -1;
    *state = &kt_fixture;
    return 0;
}

int kt_gpu_setup(void **state) { return kt_gpu_setup_n(state, 2); }
int kt_gpu_setup_1thread(void **state) { return kt_gpu_setup_n(state, 1); }

int kt_gpu_teardown(void **state)
{
    kt_gpu_fixture *f = *state;
    kiln_context_free(f->gpu);
    kiln_context_free(f->cpu);
    f->gpu = f->cpu = NULL;
    return 0;
}

/* test_gpu_pipeline_cache.c - the on-disk Vulkan pipeline cache (src/gpu/vk_pcache.c, kiln_timings.h) in a
 * temporary KILN_PIPELINE_CACHE_DIR: written, loaded by the next context, a corrupt / truncated / foreign
 * file (another device, another driver's cache UUID, a bad checksum) ignored without changing a byte and then
 * replaced, KILN_PIPELINE_CACHE=0 reads and writes nothing; and the device started on another thread (as
 * `kiln compress` does while it reads the input) gives the CPU's bytes. Lavapipe is enough. */
#include "support.h"

#include "kiln/kiln_timings.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_dir[1024];

static int setup(void **state)
{
    (void)state;
    setenv("KILN_VK_VALIDATION", "1", 1);
    setenv("KILN_ALLOW_CPU_VULKAN", "1", 1);
    unsetenv("KILN_PIPELINE_CACHE");
    /* a fresh directory: in the build tree, else (binaries copied elsewhere) $TMPDIR or /tmp */
    snprintf(g_dir, sizeof g_dir, "%s/pcache-test.XXXXXX", KILN_BINARY_DIR);
    if (!mkdtemp(g_dir)) {
        const char *t = getenv("TMPDIR");
        snprintf(g_dir, sizeof g_dir, "%s/pcache-test.XXXXXX", t && t[0] ? t : "/tmp");
        if (!mkdtemp(g_dir)) return -1;
    }
    setenv("KILN_PIPELINE_CACHE_DIR", g_dir, 1);
    return 0;
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char p[1400];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    closedir(d);
    rmdir(dir);
}

static int teardown(void **state)
{
    (void)state;
    remove_dir(g_dir);
    return 0;
}

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void test_image(kiln_image *img, uint64_t seed)
{
    kt_rng rng;
    kt_rng_seed(&rng, seed);
    assert_int_equal(kiln_image_alloc(NULL, img, 32, 24, KILN_PIXEL_U8), KILN_OK);
    kt_fill_crafted_blocks(img->pixels, 32, 24, &rng);
    img->channels = 4;
}

/* encodes img as BC4 fast on ctx into a new buffer */
static uint8_t *encode(kiln_context *ctx, const kiln_image *img, size_t *size)
{
    kiln_encode_params ep;
    kiln_encode_params_init(&ep, KILN_FORMAT_BC4_UNORM, KILN_QUALITY_FAST);
    *size = kiln_format_image_size(KILN_FORMAT_BC4_UNORM, img->width, img->height);
    uint8_t *out = malloc(*size);
    assert_non_null(out);
    assert_int_equal(kiln_encode_image(ctx, img, &ep, out, *size), KILN_OK);
    return out;
}

static kiln_gpu_timings timings_of(kiln_context *ctx)
{
    kiln_gpu_timings t;
    assert_int_equal(kiln_context_gpu_timings(ctx, &t), KILN_OK);
    return t;
}

static uint8_t *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    assert_true(len > 0);
    rewind(f);
    uint8_t *b = malloc((size_t)len);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return b;
}

static void write_all(const char *path, const uint8_t *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    fclose(f);
}

static uint64_t fnv(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* A device of its own that only loads the cache: its state and note. */
static kiln_gpu_timings load_only(void)
{
    kiln_context *ctx = kt_context(1, KILN_BACKEND_VULKAN);
    assert_non_null(ctx);
    assert_int_equal(kiln_context_backend(ctx), KILN_BACKEND_VULKAN);
    kiln_gpu_timings t = timings_of(ctx);
    kiln_context_free(ctx); /* created no pipeline: writes nothing */
    return t;
}

static void round_trip_and_rejects(void **state)
{
    (void)state;
    if (!kt_have_vulkan()) {
        skip();
        return;
    }
    kiln_image img;
    test_image(&img, 11);
    kiln_context *cpu = kt_context(1, KILN_BACKEND_CPU);
    size_t n = 0;
    uint8_t *ref = encode(cpu, &img, &n);
    kiln_context_free(cpu);

    /* 1: no file: new; the save writes it */
    kiln_context *g1 = kt_context(1, KILN_BACKEND_VULKAN);
    uint8_t *a = encode(g1, &img, &n);
    assert_memory_equal(a, ref, n);
    kiln_gpu_timings t = timings_of(g1);
    assert_int_equal(t.cache_state, KILN_PIPELINE_CACHE_NEW);
    assert_true(t.pipelines >= 1);
    assert_true(!strncmp(t.cache_path, g_dir, strlen(g_dir)));
    assert_int_equal(kiln_context_save_pipeline_cache(g1), KILN_OK);
    assert_int_equal(kt_gpu_validation_messages(g1), 0);
    kiln_context_free(g1);
    free(a);
    assert_int_equal(count_files(g_dir), 1); /* the file, no temporary left */
    char path[1024];
    snprintf(path, sizeof path, "%s", t.cache_path);
    size_t fn = 0;
    uint8_t *file = read_all(path, &fn);
    assert_true(fn >= 24 + 32);
    assert_memory_equal(file, "KILNPC1", 8);

    /* 2: loaded, same bytes */
    kiln_context *g2 = kt_context(1, KILN_BACKEND_VULKAN);
    uint8_t *b = encode(g2, &img, &n);
    assert_memory_equal(b, ref, n);
    t = timings_of(g2);
    assert_int_equal(t.cache_state, KILN_PIPELINE_CACHE_LOADED);
    assert_int_equal(t.cache_bytes, fn - 24);
    kiln_context_free(g2);
    free(b);

    /* 3: foreign and broken files are ignored */
    struct {
        size_t off;    /* byte flipped (0 = none) */
        int fix_sum;   /* recompute the checksum after the flip */
        size_t cut;    /* bytes cut off the end */
        const char *why;
    } cases[] = {
        {24 + 16, 1, 0, "another driver"},  /* pipelineCacheUUID */
        {24 + 8, 1, 0, "another device"},   /* vendorID */
        {24 + 4, 1, 0, "header version"},   /* headerVersion */
        {24 + 0, 1, 0, "header size"},      /* headerSize (x ^ 0xff > 32 bytes only when the data is short) */
        {fn - 1, 0, 0, "checksum"},         /* a data byte, checksum left */
        {0, 0, 1, "length"},                /* truncated */
        {3, 0, 0, "not a kiln"},            /* magic */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uint8_t *bad = malloc(fn);
        assert_non_null(bad);
        memcpy(bad, file, fn);
        if (cases[c].off) bad[cases[c].off] ^= 0xff;
        if (cases[c].off == 24) { /* a header size bigger than the data */
            bad[24] = 0xff, bad[25] = 0xff, bad[26] = 0xff, bad[27] = 0x7f;
        }
        if (cases[c].fix_sum) put64(bad + 16, fnv(bad + 24, fn - 24));
        write_all(path, bad, fn - cases[c].cut);
        free(bad);
        t = load_only();
        print_message("case %zu: state %d, note '%s'\n", c, (int)t.cache_state, t.cache_note);
        assert_int_equal(t.cache_state, KILN_PIPELINE_CACHE_REJECTED);
        assert_non_null(strstr(t.cache_note, cases[c].why));
    }
    /* a rejected file gives the same bytes and is replaced by a valid one */
    kiln_context *g3 = kt_context(1, KILN_BACKEND_VULKAN);
    uint8_t *d = encode(g3, &img, &n);
    assert_memory_equal(d, ref, n);
    assert_int_equal(timings_of(g3).cache_state, KILN_PIPELINE_CACHE_REJECTED);
    kiln_context_free(g3);
    free(d);
    assert_int_equal(load_only().cache_state, KILN_PIPELINE_CACHE_LOADED);

    /* 4: off */
    unlink(path);
    setenv("KILN_PIPELINE_CACHE", "0", 1);
    kiln_context *g4 = kt_context(1, KILN_BACKEND_VULKAN);
    uint8_t *e = encode(g4, &img, &n);
    assert_memory_equal(e, ref, n);
    t = timings_of(g4);
    assert_int_equal(t.cache_state, KILN_PIPELINE_CACHE_OFF);
    assert_string_equal(t.cache_path, "");
    kiln_context_free(g4);
    free(e);
    unsetenv("KILN_PIPELINE_CACHE");
    assert_int_equal(count_files(g_dir), 0);

    free(file);
    free(ref);
    kiln_image_free(&img);
}

/* the CLI's pattern: the device started (and a warm-up image encoded) on another thread, then the job on
 * the caller's thread */
typedef struct warm_arg {
    kiln_context *ctx;
    const kiln_image *img;
    int backend;
} warm_arg;

static void *warm(void *user)
{
    warm_arg *w = user;
    w->backend = (int)kiln_context_backend(w->ctx);
    size_t n = 0;
    free(encode(w->ctx, w->img, &n));
    return NULL;
}

static void async_device_start_same_bytes(void **state)
{
    (void)state;
    if (!kt_have_vulkan()) {
        skip();
        return;
    }
    kiln_image warm_img, img;
    test_image(&warm_img, 5);
    test_image(&img, 6);
    kiln_context *cpu = kt_context(1, KILN_BACKEND_CPU);
    size_t n = 0;
    uint8_t *ref = encode(cpu, &img, &n);
    kiln_context_free(cpu);
    kiln_context *g = kt_context(1, KILN_BACKEND_VULKAN);
    warm_arg w = {g, &warm_img, -1};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, warm, &w), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(w.backend, KILN_BACKEND_VULKAN);
    uint8_t *out = encode(g, &img, &n);
    assert_memory_equal(out, ref, n);
    assert_int_equal(kt_gpu_validation_messages(g), 0);
    kiln_context_free(g);
    free(out);
    free(ref);
    kiln_image_free(&img);
    kiln_image_free(&warm_img);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip_and_rejects),
        cmocka_unit_test(async_device_start_same_bytes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

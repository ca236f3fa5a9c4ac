/* test_gpu_pipeline_cache.c - the on-disk Vulkan pipeline cache, one file per pipeline (src/gpu/vk_pcache.c,
 * kiln_timings.h) in a temporary KILN_PIPELINE_CACHE_DIR: written as pipelines are created, read by the next
 * context, a corrupt / truncated / foreign file (another device, another driver's cache UUID, another
 * pipeline's key, a bad checksum) ignored without changing a byte and then replaced, a read-only directory
 * only noted, the oldest files (and an earlier version's single file, and stale temporary files) evicted
 * beyond KILN_PIPELINE_CACHE_MAX_MB, KILN_PIPELINE_CACHE=0 reads and writes nothing; and the device started
 * on another thread (as `kiln compress` does while it reads the input) gives the CPU's bytes. Lavapipe is
 * enough. */
#include "support.h"

#include "kiln/kiln_timings.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#define PC_HEAD 32 /* vk_pcache.c's file header */

static char g_dir[1024], g_pdir[1100]; /* the cache directory, its pipelines/ directory */

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
    snprintf(g_pdir, sizeof g_pdir, "%s/pipelines", g_dir);
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
    chmod(g_pdir, 0700);
    remove_dir(g_pdir);
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

/* the first *.bin file of dir into path (0 when none); *bytes = the data bytes (size - header) of all */
static int first_bin(const char *dir, char *path, size_t cap, uint64_t *bytes)
{
    DIR *d = opendir(dir);
    int found = 0;
    *bytes = 0;
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".bin")) continue;
        char p[1400];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat sb;
        assert_int_equal(stat(p, &sb), 0);
        *bytes += (uint64_t)sb.st_size - PC_HEAD;
        if (!found) snprintf(path, cap, "%s", p), found = 1;
    }
    closedir(d);
    return found;
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

/* A device of its own that encodes img (reading the pipelines' files): its state and note; the CPU's bytes. */
static kiln_gpu_timings encode_once(const kiln_image *img, const uint8_t *ref)
{
    kiln_context *ctx = kt_context(1, KILN_BACKEND_VULKAN);
    assert_non_null(ctx);
    assert_int_equal(kiln_context_backend(ctx), KILN_BACKEND_VULKAN);
    size_t n = 0;
    uint8_t *out = encode(ctx, img, &n);
    assert_memory_equal(out, ref, n);
    free(out);
    kiln_gpu_timings t = timings_of(ctx);
    kiln_context_free(ctx);
    return t;
}

/* 5: eviction beyond KILN_PIPELINE_CACHE_MAX_MB=1 after a write: the oldest files first (never the one just
 * written), an earlier version's single file and a stale temporary file removed */
static char g_old[3][1400], g_legacy[1400], g_tmpf[1400];

static void evict_setup(void)
{
    uint8_t *junk = calloc(1, 600 << 10);
    assert_non_null(junk);
    for (int k = 0; k < 3; k++) {
        snprintf(g_old[k], sizeof g_old[k], "%s/0000-0000-00000000-old%d-0000000000000000.bin", g_pdir, k);
        write_all(g_old[k], junk, 600 << 10);
        struct timeval tv[2] = {{1000000000 + k * 100, 0}, {1000000000 + k * 100, 0}}; /* k = 0 oldest */
        assert_int_equal(utimes(g_old[k], tv), 0);
    }
    snprintf(g_legacy, sizeof g_legacy, "%s/pipelines-0005-0000-00000001-0000.bin", g_dir);
    write_all(g_legacy, junk, 16);
    snprintf(g_tmpf, sizeof g_tmpf, "%s/x.bin.tmp-AbCdEf", g_pdir);
    write_all(g_tmpf, junk, 16);
    struct timeval tv[2] = {{1000000000, 0}, {1000000000, 0}};
    assert_int_equal(utimes(g_tmpf, tv), 0);
    free(junk);
    setenv("KILN_PIPELINE_CACHE_MAX_MB", "1", 1);
}

static void evict_check(const char *written)
{
    unsetenv("KILN_PIPELINE_CACHE_MAX_MB");
    assert_int_equal(access(g_old[0], F_OK), -1); /* 1.8 MB + the new file: the two oldest go */
    assert_int_equal(access(g_old[1], F_OK), -1);
    assert_int_equal(access(g_old[2], F_OK), 0);
    assert_int_equal(access(written, F_OK), 0);
    assert_int_equal(access(g_legacy, F_OK), -1);
    assert_int_equal(access(g_tmpf, F_OK), -1);
    unlink(g_old[2]);
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

    /* 1: no file: new; each pipeline's file written as it is created */
    kiln_context *g1 = kt_context(1, KILN_BACKEND_VULKAN);
    uint8_t *a = encode(g1, &img, &n);
    assert_memory_equal(a, ref, n);
    kiln_gpu_timings t = timings_of(g1);
    assert_int_equal(t.cache_state, KILN_PIPELINE_CACHE_NEW);
    assert_true(t.pipelines >= 1);
    assert_int_equal(t.cache_files_written, t.pipelines);
    assert_int_equal(t.cache_files_loaded, 0);
    assert_string_equal(t.cache_path, g_pdir);
    assert_int_equal(kiln_context_save_pipeline_cache(g1), KILN_OK);
    assert_int_equal(kt_gpu_validation_messages(g1), 0);
    kiln_context_free(g1);
    free(a);
    const uint32_t npipes = t.pipelines;
    assert_int_equal(count_files(g_pdir), (int)npipes); /* the files, no temporary left */
    char path[1400];
    uint64_t all = 0;
    assert_true(first_bin(g_pdir, path, sizeof path, &all));
    size_t fn = 0;
    uint8_t *file = read_all(path, &fn);
    assert_true(fn >= PC_HEAD + 32);
    assert_memory_equal(file, "KILNPC2", 8);

    /* 2: loaded, same bytes, nothing written */
    kiln_context *g2 = kt_context(1, KILN_BACKEND_VULKAN);
    uint8_t *b = encode(g2, &img, &n);
    assert_memory_equal(b, ref, n);
    t = timings_of(g2);
    assert_int_equal(t.cache_state, KILN_PIPELINE_CACHE_LOADED);
    assert_int_equal(t.cache_files_loaded, npipes);
    assert_int_equal(t.cache_files_written, 0);
    assert_int_equal(t.cache_bytes, all);
    kiln_context_free(g2);
    free(b);

    /* 3: foreign and broken files are ignored (the same bytes) and replaced by a valid one (each case compiles
     * the pipeline again on lavapipe: the Vulkan header's vendor, version and size checks, next to the UUID's,
     * are left out for CI time). The last case's write also evicts (5 below) */
    struct {
        size_t off;    /* byte flipped (0 = none) */
        int fix_sum;   /* recompute the checksum after the flip */
        size_t cut;    /* bytes cut off the end */
        const char *why;
    } cases[] = {
        {PC_HEAD + 16, 1, 0, "another driver"}, /* pipelineCacheUUID */
        {24, 0, 0, "key"},                      /* another pipeline's file */
        {fn - 1, 0, 0, "checksum"},             /* a data byte, checksum left */
        {0, 0, 1, "length"},                    /* truncated */
        {3, 0, 0, "not a kiln"},                /* magic */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uint8_t *bad = malloc(fn);
        assert_non_null(bad);
        memcpy(bad, file, fn);
        if (cases[c].off) bad[cases[c].off] ^= 0xff;
        if (cases[c].fix_sum) put64(bad + 16, fnv(bad + PC_HEAD, fn - PC_HEAD));
        write_all(path, bad, fn - cases[c].cut);
        free(bad);
        const int last = c + 1 == sizeof cases / sizeof cases[0];
        if (last) evict_setup();
        t = encode_once(&img, ref);
        if (last) evict_check(path);
        print_message("case %zu: state %d, note '%s'\n", c, (int)t.cache_state, t.cache_note);
        assert_int_equal(t.cache_state, KILN_PIPELINE_CACHE_REJECTED);
        assert_non_null(strstr(t.cache_note, cases[c].why));
        assert_int_equal(t.cache_files_written, 1);
        size_t rn = 0;
        uint8_t *re = read_all(path, &rn); /* replaced */
        assert_int_equal(rn, fn);
        assert_memory_equal(re, "KILNPC2", 8);
        free(re);
    }

    /* 4: a read-only directory: the same bytes, nothing written, a note (not as root: it could write) */
    if (geteuid() != 0) {
        unlink(path);
        assert_int_equal(chmod(g_pdir, 0500), 0);
        t = encode_once(&img, ref);
        assert_int_equal(t.cache_files_written, 0);
        assert_non_null(strstr(t.cache_note, "cannot write"));
        assert_int_equal(chmod(g_pdir, 0700), 0);
    }

    /* 6: off */
    remove_dir(g_pdir);
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

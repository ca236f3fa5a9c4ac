/* fuzz_ktx1.c - libFuzzer target for the KTX 1 reader, validator and describer (see fuzz_texture.h).
 * Seeds are KTX 1 files built here: ETC1 with mips and key/value data, BC3 cube map, R8 with padded
 * rows, RGBA16F big-endian.
 * build: cmake -S . -B build-fuzz -DKILN_FUZZ=ON -DCMAKE_C_COMPILER=clang -DKILN_TESTS=OFF -DKILN_VULKAN=OFF
 * run:   tests/fuzz/run.sh build-fuzz 60   (or ./build-fuzz/fuzz_ktx1 CORPUS_DIR) */
#include "fuzz_texture.h"

static const uint8_t k_magic[12] = {0xAB, 'K', 'T', 'X', ' ', '1', '1', 0xBB, '\r', '\n', 0x1A, '\n'};

typedef struct k1 {
    uint8_t b[2048];
    size_t n;
    int be;
} k1;

static void put(k1 *w, uint32_t v)
{
    if (w->be) v = __builtin_bswap32(v);
    for (int i = 0; i < 4; i++) w->b[w->n++] = (uint8_t)(v >> (8 * i));
}

static void header(k1 *w, const uint32_t f[13])
{
    memcpy(w->b, k_magic, 12);
    w->n = 12;
    put(w, 0x04030201);
    for (int i = 0; i < 12; i++) put(w, f[i]);
}

static void bytes(k1 *w, size_t n, uint8_t seed)
{
    for (size_t i = 0; i < n; i++) w->b[w->n++] = (uint8_t)(seed + i * 37);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *dir = getenv("KILN_FUZZ_WRITE_SEEDS");
    if (!dir) return 0;
    for (int be = 0; be < 2; be++) {
        char name[64];
        k1 w = {{0}, 0, be};
        /* glType, glTypeSize, glFormat, glInternalFormat, glBaseInternalFormat, w, h, d, elements, faces, levels, kvd */
        static const uint32_t etc1[12] = {0, 1, 0, 0x8D64, 0x1907, 8, 4, 0, 0, 1, 4, 28};
        header(&w, etc1);
        put(&w, 23);
        memcpy(w.b + w.n, "KTXorientation\0S=r,T=d\0", 24);
        w.n += 24;
        static const uint32_t sizes[4] = {16, 8, 8, 8};
        for (int l = 0; l < 4; l++) {
            put(&w, sizes[l]);
            bytes(&w, sizes[l], (uint8_t)l);
        }
        snprintf(name, sizeof name, "etc1-%s.ktx", be ? "be" : "le");
        fuzz_write(dir, name, w.b, w.n);

        static const uint32_t cube[12] = {0, 1, 0, 0x83F3, 0x1908, 4, 4, 0, 0, 6, 1, 0};
        header(&w, cube);
        put(&w, 16);
        bytes(&w, 96, 7);
        snprintf(name, sizeof name, "bc3-cube-%s.ktx", be ? "be" : "le");
        fuzz_write(dir, name, w.b, w.n);

        static const uint32_t r8[12] = {0x1401, 1, 0x1903, 0x8229, 0x1903, 3, 2, 0, 0, 1, 2, 0};
        header(&w, r8);
        put(&w, 8);
        bytes(&w, 8, 1);
        put(&w, 4);
        bytes(&w, 4, 2);
        snprintf(name, sizeof name, "r8-%s.ktx", be ? "be" : "le");
        fuzz_write(dir, name, w.b, w.n);

        static const uint32_t half[12] = {0x140B, 2, 0x1908, 0x881A, 0x1908, 2, 1, 0, 2, 1, 1, 0};
        header(&w, half);
        put(&w, 32);
        bytes(&w, 32, 3);
        snprintf(name, sizeof name, "rgba16f-array-%s.ktx", be ? "be" : "le");
        fuzz_write(dir, name, w.b, w.n);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_one(data, size, k_magic, sizeof k_magic);
    return 0;
}

/* fuzz_ktx2.c - libFuzzer target for the KTX2 reader, validator and describer (see fuzz_texture.h).
 * build: cmake -S . -B build-fuzz -DKILN_FUZZ=ON -DCMAKE_C_COMPILER=clang -DKILN_TESTS=OFF -DKILN_VULKAN=OFF
 * run:   tests/fuzz/run.sh build-fuzz 60   (or ./build-fuzz/fuzz_ktx2 CORPUS_DIR) */
#include "fuzz_texture.h"

static const uint8_t k_magic[12] = {0xAB, 'K', 'T', 'X', ' ', '2', '0', 0xBB, '\r', '\n', 0x1A, '\n'};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *dir = getenv("KILN_FUZZ_WRITE_SEEDS");
    if (dir) fuzz_seed_textures(dir, KILN_CONTAINER_KTX2);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_one(data, size, k_magic, sizeof k_magic);
    return 0;
}

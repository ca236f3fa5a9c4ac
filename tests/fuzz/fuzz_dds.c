/* fuzz_dds.c - libFuzzer target for the DDS reader, validator and describer (see fuzz_texture.h).
 * build: cmake -S . -B build-fuzz -DKILN_FUZZ=ON -DCMAKE_C_COMPILER=clang -DKILN_TESTS=OFF -DKILN_VULKAN=OFF
 * run:   tests/fuzz/run.sh build-fuzz 60   (or ./build-fuzz/fuzz_dds CORPUS_DIR) */
#include "fuzz_texture.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *dir = getenv("KILN_FUZZ_WRITE_SEEDS");
    if (dir) fuzz_seed_textures(dir, KILN_CONTAINER_DDS);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_one(data, size, (const uint8_t *)"DDS ", 4);
    return 0;
}

/* fuzz_flame.c - libFuzzer target for the flam3 genome parser (and a tiny render of what parses).
 * build: cmake -S . -B build-fuzz -DKILN_FUZZ=ON -DCMAKE_C_COMPILER=clang -DKILN_TESTS=OFF -DKILN_VULKAN=OFF
 * run:   tests/fuzz/run.sh build-fuzz 60   (or ./build-fuzz/fuzz_flame CORPUS_DIR; the genomes in
 *        ../shared/testdata/flam3 make a good seed corpus) */
#include "kiln/kiln.h"

#include "flame/flame.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kiln_context_params cp;
    kiln_context_params_init(&cp);
    cp.threads = 1;
    cp.backend = KILN_BACKEND_CPU;
    kiln_context *ctx = NULL;
    if (kiln_context_create(&cp, &ctx) != KILN_OK) return 0;
    kiln_flames *fl = NULL;
    if (kiln_flames_load_memory(ctx, data, size, &fl) == KILN_OK) {
        uint32_t n = kiln_flames_count(fl);
        /* parse the same bytes internally to bound the work: zoom multiplies the samples by 4^zoom */
        kiln_flame *raw = NULL;
        uint32_t nraw = 0;
        int small = 0;
        if (kiln__flame_parse(ctx, (const char *)data, size, "fuzz", &raw, &nraw) == KILN_OK && nraw > 0) {
            kiln_flame_render_opts o = {12, 9, 0.5, 1, 0, 0};
            kiln_flame_setup su;
            small = kiln__flame_setup(ctx, &raw[0], &o, &su) != KILN_OK || su.nsamples <= 200000;
        }
        kiln__flame_free_all(raw, nraw);
        if (n > 0 && small) {
            /* a tiny render: small size and quality keep each input fast whatever the genome asks */
            kiln_flame_params p;
            kiln_flame_params_init(&p);
            p.width = 12;
            p.height = 9;
            p.quality = 0.5;
            p.supersample = 1;
            p.seed = size;
            kiln_image img;
            if (kiln_flame_render(ctx, fl, 0, &p, &img) == KILN_OK) kiln_image_free(&img);
        }
        (void)kiln_flames_name(fl, 0);
        kiln_flames_free(fl);
    }
    kiln_context_free(ctx);
    return 0;
}

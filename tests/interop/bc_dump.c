/* bc_dump.c - runs kiln's BC block decoders on a file of raw blocks, for interop tests that compare
 * them with third-party decoders (tests/interop/pillow_bc.sh).
 *
 *   kiln_bc_dump FORMAT BLOCKS OUT [INFO]
 *
 * FORMAT: bc1 bc1a bc2 bc3 bc4 bc4s bc5 bc5s bc6h bc6hs bc7. BLOCKS: raw blocks back to back.
 * OUT gets, per block, the 16 decoded texels (row-major):
 *   U8 formats: RGBA8 (64 bytes); bc4s/bc5s: RGBA float32 little-endian (256 bytes);
 *   bc6h/bc6hs: the RGB half-float bit patterns, uint16 little-endian (96 bytes).
 * INFO (BC6H only) gets 4 bytes per block: mode number (255 = reserved), subsets, partition and a flag
 * set when the signed format has a negative delta-coded endpoint (see kiln__bc6h_unpack).
 * Exit status: 0 ok, 2 usage or I/O error.
 */
#include "codec/bc_tables.h"
#include "codec/codec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int write_all(FILE *f, const void *p, size_t n) { return fwrite(p, 1, n, f) == n; }

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s FORMAT BLOCKS OUT [INFO]\n", argv[0]);
        return 2;
    }
    const char *fmt = argv[1];
    size_t bsize = 16;
    int kind = 0; /* 0: U8 via fn, 1: F32 via fn, 2: BC6H */
    int is_signed = 0;
    kiln_block_decode_fn fn = NULL;
    if (!strcmp(fmt, "bc1")) fn = kiln__dec_bc1_rgb, bsize = 8;
    else if (!strcmp(fmt, "bc1a")) fn = kiln__dec_bc1_rgba, bsize = 8;
    else if (!strcmp(fmt, "bc2")) fn = kiln__dec_bc2;
    else if (!strcmp(fmt, "bc3")) fn = kiln__dec_bc3;
    else if (!strcmp(fmt, "bc4")) fn = kiln__dec_bc4u, bsize = 8;
    else if (!strcmp(fmt, "bc4s")) fn = kiln__dec_bc4s, bsize = 8, kind = 1;
    else if (!strcmp(fmt, "bc5")) fn = kiln__dec_bc5u;
    else if (!strcmp(fmt, "bc5s")) fn = kiln__dec_bc5s, kind = 1;
    else if (!strcmp(fmt, "bc6h")) kind = 2;
    else if (!strcmp(fmt, "bc6hs")) kind = 2, is_signed = 1;
    else if (!strcmp(fmt, "bc7")) fn = kiln__dec_bc7;
    else {
        fprintf(stderr, "%s: unknown format '%s'\n", argv[0], fmt);
        return 2;
    }

    FILE *in = fopen(argv[2], "rb");
    if (!in) {
        fprintf(stderr, "%s: cannot open %s\n", argv[0], argv[2]);
        return 2;
    }
    FILE *out = fopen(argv[3], "wb");
    if (!out) {
        fprintf(stderr, "%s: cannot create %s\n", argv[0], argv[3]);
        fclose(in);
        return 2;
    }
    FILE *info = NULL;
    if (argc > 4 && kind == 2) {
        info = fopen(argv[4], "wb");
        if (!info) {
            fprintf(stderr, "%s: cannot create %s\n", argv[0], argv[4]);
            fclose(in);
            fclose(out);
            return 2;
        }
    }

    int rc = 0;
    uint8_t blk[16];
    size_t n, count = 0;
    while ((n = fread(blk, 1, bsize, in)) == bsize) {
        int ok;
        if (kind == 2) {
            uint16_t h[48];
            uint8_t le[96];
            kiln__dec_bc6h_half(blk, is_signed, h);
            for (int i = 0; i < 48; i++) {
                le[2 * i] = (uint8_t)(h[i] & 0xff);
                le[2 * i + 1] = (uint8_t)(h[i] >> 8);
            }
            ok = write_all(out, le, sizeof le);
            if (ok && info) {
                kiln_bc6h_info bi;
                int ns = kiln__bc6h_unpack(blk, is_signed, &bi);
                uint8_t rec[4] = {ns ? (uint8_t)bi.mode : 255, (uint8_t)ns, (uint8_t)bi.partition,
                                  (uint8_t)bi.wrapped_negative};
                ok = write_all(info, rec, 4);
            }
        } else if (kind == 1) {
            float f[64];
            uint8_t le[256];
            fn(blk, f);
            for (int i = 0; i < 64; i++) {
                uint32_t u;
                memcpy(&u, &f[i], 4);
                for (int k = 0; k < 4; k++) le[4 * i + k] = (uint8_t)(u >> (8 * k));
            }
            ok = write_all(out, le, sizeof le);
        } else {
            uint8_t t[64];
            fn(blk, t);
            ok = write_all(out, t, sizeof t);
        }
        if (!ok) {
            fprintf(stderr, "%s: write error on %s\n", argv[0], argv[3]);
            rc = 2;
            break;
        }
        count++;
    }
    if (rc == 0 && n != 0) {
        fprintf(stderr, "%s: %s ends with a partial block (%zu bytes)\n", argv[0], argv[2], n);
        rc = 2;
    }
    fclose(in);
    if (fclose(out) != 0) rc = 2;
    if (info && fclose(info) != 0) rc = 2;
    if (rc == 0) fprintf(stderr, "%s: decoded %zu %s blocks\n", argv[0], count, fmt);
    return rc;
}

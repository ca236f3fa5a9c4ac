/* dfd.c - the Khronos Basic Data Format Descriptor (KDF 1.3, descriptor block version 2) of each kiln
 * format, derived from the format table (model, flags, block dimensions, bytes, channels); its
 * validation against the DFD a file carries (word by word, naming the field that differs) and a
 * decoded description.
 *
 * Layout (little-endian u32 words): dfdTotalSize; then the basic block:
 *   w0 vendorId (bits 0-16) | descriptorType (17-31)      w1 versionNumber | descriptorBlockSize << 16
 *   w2 colorModel | colorPrimaries << 8 | transferFunction << 16 | flags << 24
 *   w3 texel block dimensions minus one (4 x u8)          w4, w5 bytesPlane0..7
 *   then per sample: bitOffset | (bitLength - 1) << 16 | channelType << 24; samplePosition0..3;
 *   sampleLower; sampleUpper.
 * Sample layouts per colour model follow the KTX-Software DFD of each VkFormat (see
 * shared/notes/containers.md, section 1.3). */
#include "container/container.h"

#include <stdio.h>
#include <string.h>

enum {
    Q_LINEAR = 0x10,
    Q_EXPONENT = 0x20,
    Q_SIGNED = 0x40,
    Q_FLOAT = 0x80,
    CH_ALPHA = 15,
    PRIMARIES_BT709 = 1,
    TRANSFER_LINEAR = 1,
    TRANSFER_SRGB = 2,
    MODEL_RGBSDA = 1,
    MODEL_BC1A = 128,
    MODEL_BC2 = 129,
    MODEL_BC3 = 130,
    MODEL_BC4 = 131,
    MODEL_BC5 = 132,
    MODEL_BC6H = 133,
    MODEL_BC7 = 134,
    MODEL_ETC1 = 160,
    MODEL_ETC2 = 161,
};

#define F32_ONE 0x3F800000u
#define F32_MINUS_ONE 0xBF800000u

typedef struct sample {
    uint32_t offset, bits, channel; /* channel includes qualifier bits */
    uint32_t lower, upper;
} sample;

/* Bounds of a sample from the format's flags. */
static void bounds(const kiln_format_info *fi, uint32_t bits, bool compressed, sample *s)
{
    if (fi->flags & KILN_FF_FLOAT) {
        s->lower = (fi->flags & KILN_FF_SIGNED) ? F32_MINUS_ONE : 0;
        s->upper = F32_ONE;
    } else if (fi->flags & KILN_FF_SIGNED) {
        s->lower = 0x80000000u;
        s->upper = 0x7FFFFFFFu;
    } else {
        s->lower = 0;
        s->upper = compressed || bits >= 32 ? 0xFFFFFFFFu : (uint32_t)((1ull << bits) - 1);
    }
}

static uint32_t qualifiers(const kiln_format_info *fi)
{
    uint32_t q = 0;
    if (fi->flags & KILN_FF_FLOAT) q |= Q_FLOAT;
    if (fi->flags & KILN_FF_SIGNED) q |= Q_SIGNED;
    return q;
}

static uint32_t build_samples(const kiln_format_info *fi, sample s[4])
{
    bool srgb = (fi->flags & KILN_FF_SRGB) != 0;
    uint32_t alpha = CH_ALPHA | (srgb ? Q_LINEAR : 0);
    uint32_t q = qualifiers(fi);
    uint32_t n = 0;
    if (!(fi->flags & KILN_FF_COMPRESSED)) {
        if (fi->channels == 0 || fi->block_bytes % fi->channels) return 0;
        uint32_t bits = fi->block_bytes * 8 / fi->channels;
        for (uint32_t c = 0; c < fi->channels; c++) {
            s[n].offset = c * bits;
            s[n].bits = bits;
            s[n].channel = (c == 3 ? alpha : c) | q;
            bounds(fi, bits, false, &s[n]);
            n++;
        }
        return n;
    }
    uint32_t block_bits = fi->block_bytes * 8;
#define ADD(OFF, BITS, CH)                                                                                  \
    do {                                                                                                    \
        s[n].offset = (OFF);                                                                                \
        s[n].bits = (BITS);                                                                                 \
        s[n].channel = (CH) | q;                                                                            \
        bounds(fi, (BITS), true, &s[n]);                                                                    \
        n++;                                                                                                \
    } while (0)
    switch (fi->dfd_model) {
    case MODEL_BC1A: ADD(0, 64, (fi->flags & KILN_FF_ALPHA1) ? 1u : 0u); break; /* COLOR or ALPHAPRESENT */
    case MODEL_BC2:
    case MODEL_BC3:
        ADD(0, 64, alpha);
        ADD(64, 64, 0);
        break;
    case MODEL_BC4:
    case MODEL_BC5:
        for (uint32_t c = 0; c < fi->channels; c++) ADD(64 * c, 64, c); /* DATA / RED, GREEN */
        break;
    case MODEL_BC6H:
    case MODEL_BC7: ADD(0, block_bits, 0); break;
    case MODEL_ETC2:
        if (fi->channels <= 2) { /* EAC R11 / RG11: RED, GREEN */
            for (uint32_t c = 0; c < fi->channels; c++) ADD(64 * c, 64, c);
        } else if (fi->channels == 3) { /* ETC2 RGB8 (and ETC1 data) */
            ADD(0, 64, 2);
        } else if (fi->flags & KILN_FF_ALPHA1) { /* RGB8A1: colour and alpha share the 64-bit block */
            ADD(0, 64, 2);
            ADD(0, 64, alpha);
        } else { /* RGBA8: EAC alpha block then ETC2 colour block */
            ADD(0, 64, alpha);
            ADD(64, 64, 2);
        }
        break;
    default: return 0;
    }
#undef ADD
    return n;
}

uint32_t kiln__dfd_build(kiln_format f, int premultiplied, uint32_t w[KILN_DFD_MAX_WORDS])
{
    const kiln_format_info *fi = kiln_format_get_info(f);
    if (!fi) return 0;
    sample s[4];
    memset(s, 0, sizeof s);
    uint32_t ns = build_samples(fi, s);
    if (ns == 0) return 0;
    uint32_t block_size = 24 + 16 * ns;
    uint32_t n = 0;
    w[n++] = 4 + block_size;
    w[n++] = 0;                        /* vendorId KHRONOS, descriptorType BASICFORMAT */
    w[n++] = 2u | (block_size << 16);  /* versionNumber 1.3 */
    w[n++] = fi->dfd_model | (PRIMARIES_BT709 << 8) |
             ((uint32_t)((fi->flags & KILN_FF_SRGB) ? TRANSFER_SRGB : TRANSFER_LINEAR) << 16) |
             ((uint32_t)(premultiplied ? 1 : 0) << 24);
    w[n++] = (fi->block_width - 1) | ((fi->block_height - 1) << 8);
    w[n++] = fi->block_bytes; /* bytesPlane0 */
    w[n++] = 0;
    for (uint32_t i = 0; i < ns; i++) {
        w[n++] = s[i].offset | ((s[i].bits - 1) << 16) | (s[i].channel << 24);
        w[n++] = 0;
        w[n++] = s[i].lower;
        w[n++] = s[i].upper;
    }
    return n;
}

/* ================================================================ names */

const char *kiln__dfd_model_name(uint32_t m)
{
    static const char *low[] = {"UNSPECIFIED", "RGBSDA", "YUVSDA", "YIQSDA", "LABSDA", "CMYKA", "XYZW", "HSVA_ANG",
                                "HSLA_ANG", "HSVA_HEX", "HSLA_HEX", "YCGCOA", "YCCBCCRC", "ICTCP", "CIEXYZ", "CIEXYY"};
    static const char *high[] = {"BC1A", "BC2", "BC3", "BC4", "BC5", "BC6H", "BC7"};
    static const char *etc[] = {"ETC1", "ETC2", "ASTC", "ETC1S", "PVRTC", "PVRTC2", "UASTC"};
    if (m < 16) return low[m];
    if (m >= 128 && m <= 134) return high[m - 128];
    if (m >= 160 && m <= 166) return etc[m - 160];
    return "";
}

const char *kiln__dfd_primaries_name(uint32_t p)
{
    static const char *n[] = {"UNSPECIFIED", "BT709", "BT601_EBU", "BT601_SMPTE", "BT2020", "CIEXYZ",
                              "ACES", "ACESCC", "NTSC1953", "PAL525", "DISPLAYP3", "ADOBERGB"};
    return p < 12 ? n[p] : "";
}

const char *kiln__dfd_transfer_name(uint32_t t)
{
    static const char *n[] = {"UNSPECIFIED", "LINEAR",   "SRGB",     "ITU",       "NTSC",        "SLOG",   "SLOG2",
                              "BT1886",      "HLG_OETF", "HLG_EOTF", "PQ_EOTF",   "PQ_OETF",     "DCIP3",  "PAL_OETF",
                              "PAL625_EOTF", "ST240",    "ACESCC",   "ACESCCT",   "ADOBERGB"};
    return t < 19 ? n[t] : "";
}

const char *kiln__dfd_channel_name(uint32_t model, uint32_t ch)
{
    ch &= 0xF;
    switch (model) {
    case MODEL_RGBSDA:
        return ch == 0 ? "RED" : ch == 1 ? "GREEN" : ch == 2 ? "BLUE" : ch == 13 ? "STENCIL" : ch == 14 ? "DEPTH"
               : ch == 15 ? "ALPHA" : "";
    case MODEL_BC1A: return ch == 0 ? "COLOR" : ch == 1 ? "ALPHAPRESENT" : "";
    case MODEL_BC2:
    case MODEL_BC3: return ch == 0 ? "COLOR" : ch == 15 ? "ALPHA" : "";
    case MODEL_BC4: return ch == 0 ? "DATA" : "";
    case MODEL_BC5: return ch == 0 ? "RED" : ch == 1 ? "GREEN" : "";
    case MODEL_BC6H:
    case MODEL_BC7:
    case MODEL_ETC1: return ch == 0 ? "COLOR" : "";
    case MODEL_ETC2: return ch == 0 ? "RED" : ch == 1 ? "GREEN" : ch == 2 ? "COLOR" : ch == 15 ? "ALPHA" : "";
    default: return "";
    }
}

static void qual_string(uint32_t q, char *out, size_t n)
{
    snprintf(out, n, "%s%s%s%s", (q & Q_LINEAR) ? "LINEAR " : "", (q & Q_EXPONENT) ? "EXPONENT " : "",
             (q & Q_SIGNED) ? "SIGNED " : "", (q & Q_FLOAT) ? "FLOAT " : "");
    size_t l = strlen(out);
    if (l) out[l - 1] = 0;
}

/* ================================================================ describe */

void kiln__dfd_describe(kiln__desc *d, const uint8_t *p, size_t n)
{
    kiln__d_obj(d, "dfd");
    if (n < 4) {
        kiln__d_s(d, "error", "DFD is shorter than its dfdTotalSize field");
        kiln__d_end(d);
        return;
    }
    uint32_t total = kiln__rd32(p);
    kiln__d_u(d, "dfdTotalSize", total);
    size_t words = n / 4 > 256 ? 256 : n / 4;
    kiln__d_arr(d, "words");
    for (size_t i = 0; i < words; i++) kiln__d_x(d, NULL, kiln__rd32(p + 4 * i), 8);
    kiln__d_end(d);
    if (n < 4 + 24) {
        kiln__d_s(d, "error", "no room for a basic descriptor block");
        kiln__d_end(d);
        return;
    }
    const uint8_t *b = p + 4;
    uint32_t w0 = kiln__rd32(b), w1 = kiln__rd32(b + 4), w2 = kiln__rd32(b + 8);
    uint32_t block_size = w1 >> 16;
    kiln__d_u(d, "vendorId", w0 & 0x1FFFF);
    kiln__d_u(d, "descriptorType", w0 >> 17);
    kiln__d_u(d, "versionNumber", w1 & 0xFFFF);
    kiln__d_u(d, "descriptorBlockSize", block_size);
    uint32_t model = w2 & 0xFF, prim = (w2 >> 8) & 0xFF, tf = (w2 >> 16) & 0xFF, flags = w2 >> 24;
    kiln__d_u(d, "colorModel", model);
    kiln__d_s(d, "colorModelName", kiln__dfd_model_name(model));
    kiln__d_u(d, "colorPrimaries", prim);
    kiln__d_s(d, "colorPrimariesName", kiln__dfd_primaries_name(prim));
    kiln__d_u(d, "transferFunction", tf);
    kiln__d_s(d, "transferFunctionName", kiln__dfd_transfer_name(tf));
    kiln__d_u(d, "flags", flags);
    kiln__d_s(d, "alpha", (flags & 1) ? "premultiplied" : "straight");
    char dims[64];
    snprintf(dims, sizeof dims, "%ux%ux%ux%u", b[12] + 1u, b[13] + 1u, b[14] + 1u, b[15] + 1u);
    kiln__d_s(d, "texelBlockDimension", dims);
    kiln__d_arr(d, "bytesPlane");
    for (int i = 0; i < 8; i++) kiln__d_u(d, NULL, b[16 + i]);
    kiln__d_end(d);
    size_t avail = n - 4;
    if (block_size > avail) block_size = (uint32_t)avail;
    uint32_t ns = block_size >= 24 ? (block_size - 24) / 16 : 0;
    kiln__d_arr(d, "samples");
    for (uint32_t i = 0; i < ns; i++) {
        const uint8_t *s = b + 24 + 16 * i;
        uint32_t s0 = kiln__rd32(s);
        uint32_t ct = s0 >> 24;
        char q[64];
        qual_string(ct & 0xF0, q, sizeof q);
        kiln__d_obj(d, NULL);
        kiln__d_u(d, "bitOffset", s0 & 0xFFFF);
        kiln__d_u(d, "bitLength", ((s0 >> 16) & 0xFF) + 1);
        kiln__d_u(d, "channelId", ct & 0xF);
        kiln__d_s(d, "channelName", kiln__dfd_channel_name(model, ct));
        kiln__d_s(d, "qualifiers", q);
        kiln__d_x(d, "samplePosition", kiln__rd32(s + 4), 8);
        kiln__d_x(d, "sampleLower", kiln__rd32(s + 8), 8);
        kiln__d_x(d, "sampleUpper", kiln__rd32(s + 12), 8);
        kiln__d_end(d);
    }
    kiln__d_end(d);
    kiln__d_end(d);
}

/* ================================================================ validate */

void kiln__dfd_validate(kiln__report *r, const uint8_t *p, size_t n, kiln_format f, uint32_t vk_format,
                        uint32_t scheme)
{
    if (n < 4) {
        kiln__rep(r, KILN__ERR, "DFD: %zu bytes cannot hold dfdTotalSize", n);
        return;
    }
    uint32_t total = kiln__rd32(p);
    if (total != n) kiln__rep(r, KILN__ERR, "DFD: dfdTotalSize is %u but dfdByteLength is %zu; they must match", total, n);
    if (n < 4 + 8) {
        kiln__rep(r, KILN__ERR, "DFD: %zu bytes left, too few for a descriptor block header", n - 4);
        return;
    }
    const uint8_t *b = p + 4;
    uint32_t w0 = kiln__rd32(b), w1 = kiln__rd32(b + 4);
    uint32_t block_size = w1 >> 16;
    if ((w0 & 0x1FFFF) != 0 || (w0 >> 17) != 0) {
        kiln__rep(r, KILN__ERR, "DFD: the first block has vendorId %u, descriptorType %u; a basic block "
                                "(vendorId 0 KHRONOS, descriptorType 0 BASICFORMAT) must come first",
                  w0 & 0x1FFFF, w0 >> 17);
        return;
    }
    if ((w1 & 0xFFFF) != 2)
        kiln__rep(r, KILN__ERR, "DFD: versionNumber is %u but it must be 2 (KHR_DF_VERSIONNUMBER_1_3)", w1 & 0xFFFF);
    if (block_size < 24) {
        kiln__rep(r, KILN__ERR, "DFD: descriptorBlockSize is %u, smaller than the 24 bytes of a basic block", block_size);
        return;
    }
    if ((block_size - 24) % 16) {
        kiln__rep(r, KILN__ERR, "DFD: descriptorBlockSize %u is not 24 + 16 * numSamples", block_size);
        return;
    }
    if (block_size > n - 4) {
        kiln__rep(r, KILN__ERR, "DFD: descriptorBlockSize is %u but only %zu bytes are left in the DFD", block_size, n - 4);
        return;
    }
    /* further blocks: walk their headers */
    size_t off = 4 + block_size;
    for (uint32_t k = 1; off < n && k < 64; k++) {
        if (n - off < 8) {
            kiln__rep(r, KILN__ERR, "DFD: %zu bytes left after block %u, too few for another block header", n - off, k - 1);
            break;
        }
        uint32_t bs = kiln__rd32(p + off + 4) >> 16, v = kiln__rd32(p + off);
        if (bs < 8 || bs > n - off) {
            kiln__rep(r, KILN__ERR, "DFD: block %u has descriptorBlockSize %u but %zu bytes are left", k, bs, n - off);
            break;
        }
        kiln__rep(r, KILN__WARN, "DFD: block %u (vendorId %u, descriptorType %u) is not recognised and is ignored", k,
                  v & 0x1FFFF, v >> 17);
        off += bs;
    }

    uint32_t w2 = kiln__rd32(b + 8), w3 = kiln__rd32(b + 12);
    uint32_t model = w2 & 0xFF, prim = (w2 >> 8) & 0xFF, tf = (w2 >> 16) & 0xFF, flags = w2 >> 24;
    uint32_t ns = (block_size - 24) / 16;
    if (prim > 11) kiln__rep(r, KILN__ERR, "DFD: colorPrimaries %u is not a value known to the KTX specification", prim);
    if (tf > 18) kiln__rep(r, KILN__ERR, "DFD: transferFunction %u is not a value known to the KTX specification (0-18)", tf);
    if (flags & ~1u) kiln__rep(r, KILN__ERR, "DFD: flags 0x%02X has bits other than ALPHA_PREMULTIPLIED (0x01)", flags);

    const kiln_format_info *fi = kiln_format_get_info(f);
    uint32_t e[KILN_DFD_MAX_WORDS];
    uint32_t en = fi ? kiln__dfd_build(f, flags & 1, e) : 0;
    if (!en) return; /* unknown format: reported by the caller */
    const char *vk = fi->vk_name;
    uint32_t em = e[3] & 0xFF, etf = (e[3] >> 16) & 0xFF;
    if (model != em)
        kiln__rep(r, KILN__ERR, "DFD: colorModel is %u (%s) but VK_FORMAT_%s needs %u (%s)", model,
                  kiln__dfd_model_name(model), vk, em, kiln__dfd_model_name(em));
    if (etf == TRANSFER_SRGB && tf != TRANSFER_SRGB)
        kiln__rep(r, KILN__ERR, "DFD: transferFunction is %u (%s) but VK_FORMAT_%s is an sRGB format and needs 2 (SRGB)",
                  tf, kiln__dfd_transfer_name(tf), vk);
    else if (etf != TRANSFER_SRGB && tf == TRANSFER_SRGB)
        kiln__rep(r, KILN__ERR, "DFD: transferFunction is 2 (SRGB) but VK_FORMAT_%s is not an sRGB format; use the _SRGB "
                  "variant or LINEAR", vk);
    else if (etf != TRANSFER_SRGB && tf != TRANSFER_LINEAR && tf <= 18)
        kiln__rep(r, KILN__WARN, "DFD: transferFunction is %u (%s); kiln expects LINEAR for VK_FORMAT_%s", tf,
                  kiln__dfd_transfer_name(tf), vk);
    if (w3 != e[4])
        kiln__rep(r, KILN__ERR, "DFD: texelBlockDimension is %ux%ux%ux%u but VK_FORMAT_%s needs %ux%ux%ux%u",
                  (w3 & 0xFF) + 1, ((w3 >> 8) & 0xFF) + 1, ((w3 >> 16) & 0xFF) + 1, (w3 >> 24) + 1, vk,
                  (e[4] & 0xFF) + 1, ((e[4] >> 8) & 0xFF) + 1, ((e[4] >> 16) & 0xFF) + 1, (e[4] >> 24) + 1);
    uint32_t bp0 = b[16], want_bp0 = e[5] & 0xFF;
    if (bp0 != want_bp0) {
        if (bp0 == 0 && scheme != 0)
            kiln__rep(r, KILN__WARN, "DFD: bytesPlane0 is 0 (the pre-2.0.4 convention for supercompressed files); "
                      "current files keep %u for VK_FORMAT_%s", want_bp0, vk);
        else
            kiln__rep(r, KILN__ERR, "DFD: bytesPlane0 is %u but VK_FORMAT_%s needs %u", bp0, vk, want_bp0);
    }
    for (int i = 1; i < 8; i++)
        if (b[16 + i]) {
            kiln__rep(r, KILN__ERR, "DFD: bytesPlane%d is %u but must be 0 (multi-plane formats are not supported)", i,
                      b[16 + i]);
            break;
        }
    uint32_t ens = (en - 7) / 4;
    if (ns != ens) {
        kiln__rep(r, KILN__ERR, "DFD: %u samples but VK_FORMAT_%s needs %u", ns, vk, ens);
        return;
    }
    for (uint32_t i = 0; i < ns; i++) {
        const uint8_t *s = b + 24 + 16 * i;
        const uint32_t *x = e + 7 + 4 * i;
        uint32_t s0 = kiln__rd32(s);
        char what[160];
        if ((s0 & 0xFFFF) != (x[0] & 0xFFFF)) {
            kiln__rep(r, KILN__ERR, "DFD: sample %u bitOffset is %u but VK_FORMAT_%s needs %u", i, s0 & 0xFFFF, vk,
                      x[0] & 0xFFFF);
            continue;
        }
        if (((s0 >> 16) & 0xFF) != ((x[0] >> 16) & 0xFF)) {
            kiln__rep(r, KILN__ERR, "DFD: sample %u bitLength is %u but VK_FORMAT_%s needs %u", i, ((s0 >> 16) & 0xFF) + 1,
                      vk, ((x[0] >> 16) & 0xFF) + 1);
            continue;
        }
        if ((s0 >> 24) != (x[0] >> 24)) {
            char q1[64], q2[64];
            qual_string((s0 >> 24) & 0xF0, q1, sizeof q1);
            qual_string((x[0] >> 24) & 0xF0, q2, sizeof q2);
            snprintf(what, sizeof what, "0x%02X (%s%s%s)", s0 >> 24, kiln__dfd_channel_name(model, s0 >> 24),
                     q1[0] ? " " : "", q1);
            kiln__rep(r, KILN__ERR, "DFD: sample %u channelType is %s but VK_FORMAT_%s needs 0x%02X (%s%s%s)", i, what, vk,
                      x[0] >> 24, kiln__dfd_channel_name(em, x[0] >> 24), q2[0] ? " " : "", q2);
            continue;
        }
        if (kiln__rd32(s + 4) != 0) {
            kiln__rep(r, KILN__ERR, "DFD: sample %u samplePosition is 0x%08X but must be 0 (no multisampling)", i,
                      kiln__rd32(s + 4));
            continue;
        }
        if (kiln__rd32(s + 8) != x[2]) {
            kiln__rep(r, KILN__ERR, "DFD: sample %u sampleLower is 0x%08X but VK_FORMAT_%s needs 0x%08X", i,
                      kiln__rd32(s + 8), vk, x[2]);
            continue;
        }
        if (kiln__rd32(s + 12) != x[3])
            kiln__rep(r, KILN__ERR, "DFD: sample %u sampleUpper is 0x%08X but VK_FORMAT_%s needs 0x%08X", i,
                      kiln__rd32(s + 12), vk, x[3]);
    }
    (void)vk_format;
}

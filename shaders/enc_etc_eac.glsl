// enc_etc_eac.glsl - what the EAC encoders (enc_eac.comp: kiln's exact design, enc_eac_seed.comp: betsy's
// 256-threads-per-block brute force) share: the job layout, the targets, the error metric and the
// block packing. Mirrors src/codec/eac_enc.c (see its header for the maths):
//   alpha8 (KIND 0): clamp(base + mod * m, 0, 255), m 1..15, targets = the 8-bit values (scale 1)
//   R11 u  (KIND 1): clamp(8 base + 4 + mod * (m ? 8m : 1), 0, 2047), targets = s16 * 2047 (scale 65535)
//   R11 s  (KIND 2): clamp(8 base + mod * (m ? 8m : 1), -1023, 1023), base -127..127, targets =
//                    llround(f * 1023 * 65536) computed by the host (scale 65536)
// Error: the sum over the 16 pixels of (target - level * scale)^2, in 64-bit integers.
//
// Jobs: one job = one EAC block of one channel; job j is block j / nch, channel j % nch.
// Input (binding 0): INMODE 0 = the image's RGBA8 words (byte c = channel c; KIND 0 and 1 only),
// INMODE 1 = int32 targets, nch per pixel, computed by the host. Output (binding 1): the 8 block bytes
// of job j at words out_stride * block + out_off + 2 * channel. Flags (binding 2, kiln design): 1 where
// the CPU encoder's floating-point range estimate sits exactly on a rounding boundary (the host
// re-encodes those jobs on the CPU so that the result stays bit-identical).
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

layout(constant_id = 1) const int KIND = 1;
layout(constant_id = 2) const int INMODE = 0;

layout(push_constant) uniform Push {
    uint width, height; // image size
    uint bx;            // blocks per row
    uint njobs;         // blocks * nch
    uint nch;           // channels encoded per block (1 or 2)
    uint ch0;           // first image channel (INMODE 0: byte of the RGBA8 word)
    uint out_stride;    // output words per block
    uint out_off;       // word offset of channel 0 inside a block
    int quality;        // kiln_quality (enc_eac.comp)
} pc;

layout(std430, binding = 0) readonly buffer Src { uint w[]; } src;
layout(std430, binding = 1) writeonly buffer Dst { uint w[]; } dst;

const int BMIN = KIND == 2 ? -127 : 0;
const int BMAX = KIND == 2 ? 127 : 255;
const int STEP = KIND == 0 ? 1 : 8;
const int C0 = KIND == 1 ? 4 : 0;
const int VMIN = KIND == 2 ? -1023 : 0;
const int VMAX = KIND == 0 ? 255 : (KIND == 1 ? 2047 : 1023);
const int MMIN = KIND == 0 ? 1 : 0;
const int SCALE = KIND == 0 ? 1 : (KIND == 1 ? 65535 : 65536);

#include "etc_tables.glsl"

#ifndef EAC_PACKED_MODS
// EAC modifiers in shared memory (constant arrays indexed per thread are slow on some drivers).
shared int s_mod[128];
void eac_load_mods(uint lid, uint wg)
{
    for (uint i = lid; i < 128u; i += wg) s_mod[i] = EAC_MOD[i];
}
#endif

// The target of pixel p (row-major) of a job, with edge replication at the right and bottom borders.
int eac_target(uint job, uint p)
{
    uint block = job / pc.nch, ch = job % pc.nch;
    uint x = min((block % pc.bx) * 4u + (p & 3u), pc.width - 1u);
    uint y = min((block / pc.bx) * 4u + (p >> 2u), pc.height - 1u);
    uint pix = y * pc.width + x;
    if (INMODE == 0) {
        int v = int((src.w[pix] >> (8u * (pc.ch0 + ch))) & 255u);
        return KIND == 0 ? v : v * 257 * 2047;
    }
    return int(src.w[pix * pc.nch + ch]);
}

// Offset factor of multiplier m.
int eac_factor(int m) { return KIND == 0 ? m : (m != 0 ? 8 * m : 1); }

// Scaled level of decoded value c + off.
int eac_level(int c, int off) { return clamp(c + off, VMIN, VMAX) * SCALE; }

// Squared distance of a target to the nearest of 8 scaled levels.
uint64_t eac_pixel_err(int t, int L[8])
{
    uint md = uint(abs(t - L[0]));
    for (int i = 1; i < 8; i++) md = min(md, uint(abs(t - L[i])));
    return uint64_t(md) * uint64_t(md);
}

#ifndef EAC_PACKED_MODS
// Packs base b, table t, multiplier m and the targets' nearest-level indices (the first index of the
// smallest error, as the CPU does) and writes the 8 bytes of `job`.
void eac_write(uint job, int T[16], int b, int t, int m)
{
    int L[8];
    int f = eac_factor(m), c = STEP * b + C0;
    for (int i = 0; i < 8; i++) L[i] = eac_level(c, s_mod[t * 8 + i] * f);
    uint64_t v = (uint64_t(uint(b) & 255u) << 56) | (uint64_t(m) << 52) | (uint64_t(t) << 48);
    for (int p = 0; p < 16; p++) {
        uint bd = uint(abs(T[p] - L[0]));
        int bi = 0;
        for (int i = 1; i < 8; i++) {
            uint d = uint(abs(T[p] - L[i]));
            if (d < bd) {
                bd = d;
                bi = i;
            }
        }
        int j = (p & 3) * 4 + (p >> 2);
        v |= uint64_t(bi) << (45 - 3 * j);
    }
    uint block = job / pc.nch, ch = job % pc.nch;
    uint o = block * pc.out_stride + pc.out_off + 2u * ch;
    uint hi = uint(v >> 32), lo = uint(v);
    dst.w[o] = (hi >> 24u) | ((hi >> 8u) & 0xff00u) | ((hi << 8u) & 0xff0000u) | (hi << 24u);
    dst.w[o + 1u] = (lo >> 24u) | ((lo >> 8u) & 0xff00u) | ((lo << 8u) & 0xff0000u) | (lo << 24u);
}
#endif

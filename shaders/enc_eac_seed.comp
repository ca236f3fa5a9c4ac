#version 450
// enc_eac_seed.comp - the seed design of the EAC encoder (betsy): one workgroup of 256 invocations per
// block (per channel: one job, see enc_etc_eac.glsl), one invocation per base value, each trying every
// table x multiplier with the full error; a parallel tree reduction of (error, (m, t, b)) in shared
// memory finds the optimum, which invocation 0 writes. The result is an exact optimum (the same error
// as kiln's design and the CPU at high/max; ties may resolve differently).
// PRELOAD (specialisation constant 3): 1 = the 16 targets are staged in shared memory once, 0 = every
// use reads (and converts) the source texel directly.
layout(local_size_x = 256) in;
layout(constant_id = 3) const int PRELOAD = 1;

#include "enc_etc_eac.glsl"

const uint64_t UMAX = 0xffffffffffffffffUL;

shared int s_tgt[16];
shared uint64_t s_err[256];
shared uint s_key[256];

void main()
{
    const uint lid = gl_LocalInvocationID.x;
    const uint job = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    const bool live = job < pc.njobs;
    eac_load_mods(lid, 256u);
    if (PRELOAD != 0 && live && lid < 16u) s_tgt[lid] = eac_target(job, lid);
    barrier();

    const int b = BMIN + int(lid);
    uint64_t be = UMAX;
    uint bk = 0xffffffffu;
    if (live && b <= BMAX) {
        const int c = STEP * b + C0;
        for (int t = 0; t < 16; t++) {
            for (int m = MMIN; m <= 15; m++) {
                int f = eac_factor(m), L[8];
                for (int i = 0; i < 8; i++) L[i] = eac_level(c, s_mod[t * 8 + i] * f);
                uint64_t e = 0;
                for (uint p = 0u; p < 16u; p++) e += eac_pixel_err(PRELOAD != 0 ? s_tgt[p] : eac_target(job, p), L);
                uint k = (uint(m) << 12) | (uint(t) << 8) | uint(b - BMIN);
                if (e < be || (e == be && k < bk)) {
                    be = e;
                    bk = k;
                }
            }
        }
    }
    s_err[lid] = be;
    s_key[lid] = bk;
    barrier();
    for (uint s = 128u; s > 0u; s >>= 1u) {
        if (lid < s) {
            uint64_t e2 = s_err[lid + s];
            uint k2 = s_key[lid + s];
            if (e2 < s_err[lid] || (e2 == s_err[lid] && k2 < s_key[lid])) {
                s_err[lid] = e2;
                s_key[lid] = k2;
            }
        }
        barrier();
    }
    if (live && lid == 0u) {
        int T[16];
        for (uint p = 0u; p < 16u; p++) T[p] = eac_target(job, p);
        uint k = s_key[0];
        eac_write(job, T, int(k & 255u) + BMIN, int((k >> 8u) & 15u), int(k >> 12u));
    }
}

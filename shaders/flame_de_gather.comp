#version 450
// flame_de_gather.comp - density estimation as a GATHER (src/gpu/gpu_flame_post.c). The CPU
// (kiln__flame_tonemap's density_estimation) scatters: source bucket s with filter k adds
// coef_k(|dx|, |dy|) * prep[s] to every bucket s + (dx, dy) with max(|dx|, |dy|) <= reach_k =
// ceil(width_k) - 1 (and coef != 0). Here every output bucket t visits the sources s in the window
// |t - s| <= R (R: the largest reach) and adds the same term when s's filter reaches t. Each (s, t)
// pair contributes exactly the term it contributes on the CPU, so the result is the same sum; only the
// summation order and precision differ (float here, in the source raster order; double on the CPU).
//
// Why a gather and not a scatter with float atomics: float atomic adds land in a scheduling-dependent
// order, so the image would change from run to run (and float atomics on storage buffers are an
// optional feature, absent on lavapipe); the gather sums every bucket in a fixed order, so the image is
// a deterministic function of the histogram, as the CPU's is. The cost is visiting the whole window of
// every bucket; the prep pass packs each source's filter index and reach into one word, and a 16 x 16
// tile stages the (16 + 2R)^2 words of its sources in shared memory (spec constant HALO = R when that
// fits in KFP_SHARED_MAX bytes; HALO = 0 reads them from the buffer), so most visits cost one shared
// load and a compare; only sources that reach t read their coefficient and colour.
#extension GL_GOOGLE_include_directive : require
#include "flame_post_abi.glsl"

layout(local_size_x = 16, local_size_y = 16) in;
layout(constant_id = 1) const uint HALO = 0u;   // R when the shared tile is used, else 0
const uint SRC_W = KFP_TILE + 2u * HALO;

layout(push_constant) uniform Push {
    uint w, h, ss, R;      // histogram size, supersample, window reach
    uint ks, pad0, pad1, pad2; // DE kernel_size (coefficients per filter)
} pc;

layout(std430, binding = 0) readonly buffer Prep { vec4 prep[]; };
layout(std430, binding = 1) readonly buffer Index { uint idxv[]; };
layout(std430, binding = 2) readonly buffer Coefs { float coefs[]; };
layout(std430, binding = 3) writeonly buffer Acc { vec4 acc[]; };

shared uint sidx[HALO > 0u ? SRC_W * SRC_W : 1u];

void main()
{
    uvec2 q = gl_GlobalInvocationID.xy;
    int w = int(pc.w), h = int(pc.h), ss = int(pc.ss), R = int(pc.R);
    // sources live in [ss-1, w-ss] x [ss-1, h-ss]
    if (HALO > 0u) {
        int tx = int(gl_WorkGroupID.x * KFP_TILE) - R, ty = int(gl_WorkGroupID.y * KFP_TILE) - R;
        for (uint k = gl_LocalInvocationIndex; k < SRC_W * SRC_W; k += KFP_TILE * KFP_TILE) {
            int sx = tx + int(k % SRC_W), sy = ty + int(k / SRC_W);
            bool in_src = sx >= ss - 1 && sx <= w - ss && sy >= ss - 1 && sy <= h - ss;
            sidx[k] = in_src ? idxv[uint(sy * w + sx)] : KFP_SKIP;
        }
        barrier();
    }
    if (q.x >= pc.w || q.y >= pc.h) return;
    int x = int(q.x), y = int(q.y);
    int x0 = max(x - R, ss - 1), x1 = min(x + R, w - ss);
    int y0 = max(y - R, ss - 1), y1 = min(y + R, h - ss);
    int ox = int(gl_WorkGroupID.x * KFP_TILE) - R, oy = int(gl_WorkGroupID.y * KFP_TILE) - R;
    vec4 sum = vec4(0.0);
    for (int sy = y0; sy <= y1; sy++) {
        int dy = abs(y - sy);
        uint row = uint(sy * w);
        for (int sx = x0; sx <= x1; sx++) {
            uint word = HALO > 0u ? sidx[uint(sy - oy) * SRC_W + uint(sx - ox)] : idxv[row + uint(sx)];
            if (word == KFP_SKIP) continue;
            int dx = abs(x - sx);
            int a = max(dx, dy), b = min(dx, dy);
            if (a > int(word >> KFP_REACH_SHIFT)) continue;
            float c = coefs[(word & KFP_INDEX_MASK) * pc.ks + uint(a * (a + 1) / 2 + b)];
            if (c == 0.0) continue;
            sum += c * prep[row + uint(sx)];
        }
    }
    acc[q.y * pc.w + q.x] = sum;
}

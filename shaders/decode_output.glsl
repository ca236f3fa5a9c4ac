// decode_output.glsl - the output side of the block decoders. Include after decode_common.glsl
// and after defining OUT_WORDS (words per texel: 1 for U8, 2 for U16, 4 for F32).
//
// put_*(t, colour) stages texel t (0..15, row-major) of this invocation's block in shared memory;
// main() then calls flush_outputs(), which waits for the workgroup and writes every staged texel
// that lies inside the image, ordered so that consecutive invocations store consecutive words of a
// texel row (coalesced), whatever the subgroup size.
//
// Layout: plane k (word of the texel) x texel t x block j, the block index rotated per (texel column,
// word) so that both the staging stores (consecutive j) and the flush loads (consecutive words of a
// row) fall in different shared-memory banks on 32-bank hardware. Any layout would be correct.

shared uint s_out[OUT_WORDS * 16u * KILN_DEC_LOCAL_SIZE];
shared uint s_origin[KILN_DEC_LOCAL_SIZE]; // per block: x | y << 16 of its top-left texel, ~0u when none

uint s_index(uint k, uint t, uint j)
{
    uint rot = (8u / OUT_WORDS) * ((t & 3u) * OUT_WORDS + k);
    return (k * 16u + t) * KILN_DEC_LOCAL_SIZE + ((j + rot) % KILN_DEC_LOCAL_SIZE);
}

void put_u8(uint t, uvec4 c)
{
    s_out[s_index(0u, t, gl_LocalInvocationID.x)] =
        (c.r & 255u) | ((c.g & 255u) << 8u) | ((c.b & 255u) << 16u) | ((c.a & 255u) << 24u);
}

void put_u16(uint t, uvec4 c)
{
    s_out[s_index(0u, t, gl_LocalInvocationID.x)] = (c.r & 65535u) | ((c.g & 65535u) << 16u);
    s_out[s_index(1u, t, gl_LocalInvocationID.x)] = (c.b & 65535u) | ((c.a & 65535u) << 16u);
}

// c holds float bit patterns.
void put_f32(uint t, uvec4 c)
{
    for (uint k = 0u; k < 4u; k++) s_out[s_index(k, t, gl_LocalInvocationID.x)] = c[k];
}

// Every invocation of the workgroup must call this, with its block index (NO_BLOCK when it has none)
// after decoding its block. Texel positions come from s_origin: no integer division per word.
void flush_outputs(uint bi)
{
    s_origin[gl_LocalInvocationID.x] =
        bi == NO_BLOCK ? 0xffffffffu : ((bi % pc.blocks_x) * 4u) | (((bi / pc.blocks_x) * 4u) << 16u);
    memoryBarrierShared();
    barrier();
    const uint n = OUT_WORDS * 16u * KILN_DEC_LOCAL_SIZE;
    for (uint i = gl_LocalInvocationID.x; i < n; i += KILN_DEC_LOCAL_SIZE) {
        // i = ((y * LOCAL + j) * 4 + x) * OUT_WORDS + k: word k of texel (x, y) of block j
        uint k = i % OUT_WORDS, r = i / OUT_WORDS;
        uint x = r & 3u;
        r >>= 2u;
        uint j = r % KILN_DEC_LOCAL_SIZE, y = r / KILN_DEC_LOCAL_SIZE;
        uint o = s_origin[j];
        if (o == 0xffffffffu) continue;
        uint px = (o & 0xffffu) + x, py = (o >> 16u) + y;
        if (px < pc.width && py < pc.height)
            dst.words[(py * pc.width + px) * OUT_WORDS + k] = s_out[s_index(k, y * 4u + x, j)];
    }
}

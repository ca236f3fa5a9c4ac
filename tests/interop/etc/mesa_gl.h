/* mesa_gl.h - an independent ETC2/EAC decoder for the tests: Mesa's desktop OpenGL through a surfaceless EGL
 * context (llvmpipe here). Blocks are uploaded with glCompressedTexImage2D and read back with glGetTexImage.
 * Used by tests/unit/test_etc_gl.c and tests/interop/etc/etc_ktx_gl_check.c (built only when EGL and GL are
 * found, see the "ETC/EAC Mesa GL interop" block at the end of CMakeLists.txt). */
#ifndef KILN_TEST_MESA_GL_H
#define KILN_TEST_MESA_GL_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln.h"

typedef struct kt_gl kt_gl;

/* Opens a surfaceless EGL display and a desktop GL (4.5 core if possible) context and makes it current.
 * Returns NULL with a reason in msg when there is no usable EGL/GL (the callers then skip). */
kt_gl *kt_gl_open(char *msg, size_t msg_size);
void kt_gl_close(kt_gl *gl);
const char *kt_gl_renderer(const kt_gl *gl); /* GL_RENDERER / GL_VERSION */

/* How kiln's ETC/EAC formats are uploaded and read back:
 *   ETC2 RGB8 / RGB8A1 / RGBA8 (and ETC1, as GL_COMPRESSED_RGB8_ETC2): GL_RGBA + GL_UNSIGNED_BYTE, 4 bytes a texel;
 *   EAC R11 / RG11: GL_RED / GL_RG + GL_UNSIGNED_SHORT (1 or 2 uint16 a texel), the 11-bit value widened
 *     as (v << 5) | (v >> 6);
 *   EAC signed R11 / RG11: GL_RED / GL_RG + GL_SHORT, sign-magnitude widened (|v| << 5) | (|v| >> 5).
 * Returns 0 for formats without a GL equivalent. */
int kt_gl_format(kiln_format format, unsigned *internal_format, unsigned *read_format, unsigned *read_type,
                 size_t *texel_bytes);

/* Uploads width x height texels of compressed data (size bytes) with the given internal format and reads
 * level 0 back as read_format/read_type into out (tightly packed rows). Returns 0 on success, otherwise
 * -1 with a message (GL error code included). */
int kt_gl_decode(kt_gl *gl, unsigned internal_format, int width, int height, const void *data, size_t size,
                 unsigned read_format, unsigned read_type, void *out, char *msg, size_t msg_size);

#endif

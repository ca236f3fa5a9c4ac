/* mesa_gl.c - see mesa_gl.h. Every GL entry point is fetched with eglGetProcAddress (EGL 1.5 returns core
 * functions too), so nothing depends on which GL library exports what. */
#include "mesa_gl.h"

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>
#include <GL/glext.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void(APIENTRYP kt_pfn_gentextures)(GLsizei, GLuint *);
typedef void(APIENTRYP kt_pfn_deletetextures)(GLsizei, const GLuint *);
typedef void(APIENTRYP kt_pfn_bindtexture)(GLenum, GLuint);
typedef void(APIENTRYP kt_pfn_texparameteri)(GLenum, GLenum, GLint);
typedef void(APIENTRYP kt_pfn_pixelstorei)(GLenum, GLint);
typedef void(APIENTRYP kt_pfn_gettexlevelparameteriv)(GLenum, GLint, GLenum, GLint *);
typedef void(APIENTRYP kt_pfn_getteximage)(GLenum, GLint, GLenum, GLenum, void *);
typedef GLenum(APIENTRYP kt_pfn_geterror)(void);
typedef const GLubyte *(APIENTRYP kt_pfn_getstring)(GLenum);

struct kt_gl {
    EGLDisplay dpy;
    EGLContext ctx;
    char renderer[512];
    kt_pfn_gentextures GenTextures;
    kt_pfn_deletetextures DeleteTextures;
    kt_pfn_bindtexture BindTexture;
    kt_pfn_texparameteri TexParameteri;
    kt_pfn_pixelstorei PixelStorei;
    kt_pfn_gettexlevelparameteriv GetTexLevelParameteriv;
    kt_pfn_getteximage GetTexImage;
    kt_pfn_geterror GetError;
    kt_pfn_getstring GetString;
    PFNGLCOMPRESSEDTEXIMAGE2DPROC CompressedTexImage2D;
};

static int has_ext(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && (p = strstr(p, name)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0)) return 1;
    return 0;
}

kt_gl *kt_gl_open(char *msg, size_t msg_size)
{
    const char *cext = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    if (!cext || !has_ext(cext, "EGL_MESA_platform_surfaceless")) {
        snprintf(msg, msg_size, "EGL_MESA_platform_surfaceless is not available");
        return NULL;
    }
    PFNEGLGETPLATFORMDISPLAYEXTPROC get_display =
        (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    if (!get_display) {
        snprintf(msg, msg_size, "eglGetPlatformDisplayEXT is missing");
        return NULL;
    }
    EGLDisplay dpy = get_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
    EGLint major = 0, minor = 0;
    if (dpy == EGL_NO_DISPLAY || !eglInitialize(dpy, &major, &minor)) {
        snprintf(msg, msg_size, "no surfaceless EGL display (0x%x)", (unsigned)eglGetError());
        return NULL;
    }
    kt_gl *gl = calloc(1, sizeof *gl);
    if (!gl) {
        eglTerminate(dpy);
        snprintf(msg, msg_size, "out of memory");
        return NULL;
    }
    gl->dpy = dpy;
    const char *dext = eglQueryString(dpy, EGL_EXTENSIONS);
    if (!eglBindAPI(EGL_OPENGL_API) || !has_ext(dext, "EGL_KHR_surfaceless_context")) {
        snprintf(msg, msg_size, "desktop GL or surfaceless contexts are not supported by EGL %d.%d", major, minor);
        kt_gl_close(gl);
        return NULL;
    }
    EGLConfig cfg = EGL_NO_CONFIG_KHR;
    if (!has_ext(dext, "EGL_KHR_no_config_context")) {
        const EGLint attrs[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
        EGLint n = 0;
        if (!eglChooseConfig(dpy, attrs, &cfg, 1, &n) || n < 1) {
            snprintf(msg, msg_size, "no EGL config for desktop GL");
            kt_gl_close(gl);
            return NULL;
        }
    }
    const EGLint ctx45[] = {EGL_CONTEXT_MAJOR_VERSION, 4, EGL_CONTEXT_MINOR_VERSION, 5, EGL_CONTEXT_OPENGL_PROFILE_MASK,
                            EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
    gl->ctx = eglCreateContext(dpy, cfg, EGL_NO_CONTEXT, ctx45);
    if (gl->ctx == EGL_NO_CONTEXT) {
        /* ETC2/EAC are core since GL 4.3 (ARB_ES3_compatibility); try any context and check below */
        const EGLint ctxany[] = {EGL_NONE};
        gl->ctx = eglCreateContext(dpy, cfg, EGL_NO_CONTEXT, ctxany);
    }
    if (gl->ctx == EGL_NO_CONTEXT || !eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, gl->ctx)) {
        snprintf(msg, msg_size, "cannot create/make current a desktop GL context (0x%x)", (unsigned)eglGetError());
        kt_gl_close(gl);
        return NULL;
    }
#define KT_LOAD(field, name)                                                                                   \
    do {                                                                                                       \
        void (*kt_p)(void) = eglGetProcAddress(name);                                                          \
        if (!kt_p) {                                                                                           \
            snprintf(msg, msg_size, "GL function %s is missing", name);                                        \
            kt_gl_close(gl);                                                                                   \
            return NULL;                                                                                       \
        }                                                                                                      \
        memcpy(&gl->field, &kt_p, sizeof kt_p);                                                                \
    } while (0)
    KT_LOAD(GenTextures, "glGenTextures");
    KT_LOAD(DeleteTextures, "glDeleteTextures");
    KT_LOAD(BindTexture, "glBindTexture");
    KT_LOAD(TexParameteri, "glTexParameteri");
    KT_LOAD(PixelStorei, "glPixelStorei");
    KT_LOAD(GetTexLevelParameteriv, "glGetTexLevelParameteriv");
    KT_LOAD(GetTexImage, "glGetTexImage");
    KT_LOAD(GetError, "glGetError");
    KT_LOAD(GetString, "glGetString");
    KT_LOAD(CompressedTexImage2D, "glCompressedTexImage2D");
#undef KT_LOAD
    const char *r = (const char *)gl->GetString(GL_RENDERER);
    const char *v = (const char *)gl->GetString(GL_VERSION);
    snprintf(gl->renderer, sizeof gl->renderer, "%s / OpenGL %s / EGL %d.%d", r ? r : "?", v ? v : "?", major, minor);
    int glmajor = v ? atoi(v) : 0;
    if (glmajor < 4) {
        snprintf(msg, msg_size, "OpenGL %s has no core ETC2/EAC (needs 4.3)", v ? v : "?");
        kt_gl_close(gl);
        return NULL;
    }
    return gl;
}

void kt_gl_close(kt_gl *gl)
{
    if (!gl) return;
    if (gl->dpy != EGL_NO_DISPLAY) {
        eglMakeCurrent(gl->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        if (gl->ctx != EGL_NO_CONTEXT) eglDestroyContext(gl->dpy, gl->ctx);
        eglTerminate(gl->dpy);
    }
    eglReleaseThread();
    free(gl);
}

const char *kt_gl_renderer(const kt_gl *gl) { return gl->renderer; }

int kt_gl_format(kiln_format format, unsigned *internal_format, unsigned *read_format, unsigned *read_type,
                 size_t *texel_bytes)
{
    unsigned i = 0, f = GL_RGBA, t = GL_UNSIGNED_BYTE;
    size_t tb = 4;
    switch (format) {
    case KILN_FORMAT_ETC1_UNORM: /* desktop GL has no ETC1_RGB8_OES; ETC1 is a subset of RGB8 ETC2 */
    case KILN_FORMAT_ETC2_RGB8_UNORM: i = GL_COMPRESSED_RGB8_ETC2; break;
    case KILN_FORMAT_ETC1_SRGB:
    case KILN_FORMAT_ETC2_RGB8_SRGB: i = GL_COMPRESSED_SRGB8_ETC2; break;
    case KILN_FORMAT_ETC2_RGB8A1_UNORM: i = GL_COMPRESSED_RGB8_PUNCHTHROUGH_ALPHA1_ETC2; break;
    case KILN_FORMAT_ETC2_RGB8A1_SRGB: i = GL_COMPRESSED_SRGB8_PUNCHTHROUGH_ALPHA1_ETC2; break;
    case KILN_FORMAT_ETC2_RGBA8_UNORM: i = GL_COMPRESSED_RGBA8_ETC2_EAC; break;
    case KILN_FORMAT_ETC2_RGBA8_SRGB: i = GL_COMPRESSED_SRGB8_ALPHA8_ETC2_EAC; break;
    case KILN_FORMAT_EAC_R11_UNORM: i = GL_COMPRESSED_R11_EAC, f = GL_RED, t = GL_UNSIGNED_SHORT, tb = 2; break;
    case KILN_FORMAT_EAC_R11_SNORM: i = GL_COMPRESSED_SIGNED_R11_EAC, f = GL_RED, t = GL_SHORT, tb = 2; break;
    case KILN_FORMAT_EAC_RG11_UNORM: i = GL_COMPRESSED_RG11_EAC, f = GL_RG, t = GL_UNSIGNED_SHORT, tb = 4; break;
    case KILN_FORMAT_EAC_RG11_SNORM: i = GL_COMPRESSED_SIGNED_RG11_EAC, f = GL_RG, t = GL_SHORT, tb = 4; break;
    default: return 0;
    }
    *internal_format = i;
    *read_format = f;
    *read_type = t;
    *texel_bytes = tb;
    return 1;
}

int kt_gl_decode(kt_gl *gl, unsigned internal_format, int width, int height, const void *data, size_t size,
                 unsigned read_format, unsigned read_type, void *out, char *msg, size_t msg_size)
{
    while (gl->GetError() != GL_NO_ERROR) {
    }
    GLuint tex = 0;
    gl->GenTextures(1, &tex);
    gl->BindTexture(GL_TEXTURE_2D, tex);
    gl->TexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAX_LEVEL, 0);
    gl->TexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    gl->TexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    gl->PixelStorei(GL_UNPACK_ALIGNMENT, 1);
    gl->PixelStorei(GL_PACK_ALIGNMENT, 1);
    gl->CompressedTexImage2D(GL_TEXTURE_2D, 0, internal_format, width, height, 0, (GLsizei)size, data);
    GLenum e = gl->GetError();
    if (e != GL_NO_ERROR) {
        snprintf(msg, msg_size, "glCompressedTexImage2D(0x%x, %dx%d, %zu bytes) failed: GL error 0x%x", internal_format,
                 width, height, size, (unsigned)e);
        gl->DeleteTextures(1, &tex);
        return -1;
    }
    GLint got = 0;
    gl->GetTexLevelParameteriv(GL_TEXTURE_2D, 0, GL_TEXTURE_INTERNAL_FORMAT, &got);
    if ((unsigned)got != internal_format) {
        snprintf(msg, msg_size, "texture internal format is 0x%x, not 0x%x", (unsigned)got, internal_format);
        gl->DeleteTextures(1, &tex);
        return -1;
    }
    gl->GetTexImage(GL_TEXTURE_2D, 0, read_format, read_type, out);
    e = gl->GetError();
    gl->DeleteTextures(1, &tex);
    if (e != GL_NO_ERROR) {
        snprintf(msg, msg_size, "glGetTexImage(0x%x, 0x%x) failed: GL error 0x%x", read_format, read_type, (unsigned)e);
        return -1;
    }
    return 0;
}

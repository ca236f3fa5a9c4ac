/* shaders.h - the SPIR-V blobs compiled from the shaders/NAME.comp files by glslc at build time (generated table). */
#ifndef KILN_SHADERS_H
#define KILN_SHADERS_H
#include <stddef.h>
#include <stdint.h>
typedef struct kiln_shader_blob {
    const char *name;     /* file name without .comp */
    const uint32_t *code;
    size_t size;          /* bytes */
} kiln_shader_blob;
extern const kiln_shader_blob kiln_shader_blobs[]; /* ends with a NULL name */
#endif

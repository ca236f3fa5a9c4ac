/* texture.c - texture geometry, allocation, key/value metadata; image allocation. */
#include "core/internal.h"

#include <stdlib.h>
#include <string.h>

uint32_t kiln_level_dim(uint32_t base, uint32_t level)
{
    if (level >= 32) return 1;
    uint32_t d = base >> level;
    return d ? d : 1;
}

static uint32_t full_chain(uint32_t w, uint32_t h)
{
    uint32_t m = w > h ? w : h, n = 1;
    while (m > 1) {
        m >>= 1;
        n++;
    }
    return n;
}

kiln_status kiln_texture_alloc(kiln_context *ctx, kiln_texture *tex, kiln_format format, uint32_t width,
                               uint32_t height, uint32_t levels, uint32_t layers, uint32_t faces)
{
    if (!tex) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "texture is NULL");
    memset(tex, 0, sizeof *tex);
    const kiln_format_info *fi = kiln_format_get_info(format);
    if (!fi) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "unknown format %d", (int)format);
    if (width == 0 || height == 0)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "texture size %ux%u is empty", width, height);
    if (width > KILN_MAX_DIMENSION || height > KILN_MAX_DIMENSION ||
        (uint64_t)width * height > KILN_MAX_PIXELS)
        return kiln__fail(ctx, KILN_ERR_TOO_LARGE, "texture size %ux%u exceeds kiln's limit (%u per side, %llu pixels)",
                          width, height, KILN_MAX_DIMENSION, (unsigned long long)KILN_MAX_PIXELS);
    if (layers == 0) layers = 1;
    if (faces != 1 && faces != 6) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "faces must be 1 or 6, not %u", faces);
    if (faces == 6 && width != height)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "cube map faces must be square, not %ux%u", width, height);
    if (layers > 2048) return kiln__fail(ctx, KILN_ERR_TOO_LARGE, "%u layers exceed the limit of 2048", layers);
    uint32_t maxl = full_chain(width, height);
    if (levels == 0) levels = maxl;
    if (levels > maxl)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "%u levels requested but a %ux%u texture has at most %u",
                          levels, width, height, maxl);
    size_t total = 0;
    for (uint32_t l = 0; l < levels; l++) {
        size_t img = kiln_format_image_size(format, kiln_level_dim(width, l), kiln_level_dim(height, l));
        size_t lv;
        if (img == 0 || !kiln__mul_size(img, (size_t)layers * faces, &lv) || !kiln__add_size(total, lv, &total))
            return kiln__fail(ctx, KILN_ERR_TOO_LARGE, "texture data size overflows");
        tex->level_offset[l] = total - lv;
        tex->level_size[l] = lv;
    }
    tex->data = kiln__calloc(ctx, 1, total);
    if (!tex->data) return KILN_ERR_OUT_OF_MEMORY;
    tex->data_size = total;
    tex->format = format;
    tex->width = width;
    tex->height = height;
    tex->depth = 1;
    tex->layers = layers;
    tex->faces = faces;
    tex->levels = levels;
    return KILN_OK;
}

void kiln_texture_free(kiln_texture *tex)
{
    if (!tex) return;
    free(tex->data);
    for (uint32_t i = 0; i < tex->kv_count; i++) {
        free(tex->kv[i].key);
        free(tex->kv[i].value);
    }
    free(tex->kv);
    memset(tex, 0, sizeof *tex);
}

uint8_t *kiln_texture_image(const kiln_texture *tex, uint32_t level, uint32_t layer, uint32_t face, size_t *size)
{
    if (!tex || !tex->data || level >= tex->levels || layer >= tex->layers || face >= tex->faces) return NULL;
    size_t img = kiln_format_image_size(tex->format, kiln_level_dim(tex->width, level),
                                        kiln_level_dim(tex->height, level));
    size_t depth = kiln_level_dim(tex->depth ? tex->depth : 1, level);
    size_t slice = img * depth;
    size_t off = tex->level_offset[level] + ((size_t)layer * tex->faces + face) * slice;
    if (off + img > tex->data_size || off + img > tex->level_offset[level] + tex->level_size[level]) return NULL;
    if (size) *size = img;
    return tex->data + off;
}

kiln_status kiln_texture_set_kv(kiln_context *ctx, kiln_texture *tex, const char *key, const char *value)
{
    if (!tex || !key || !value || !*key) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "bad key/value");
    size_t vlen = strlen(value) + 1;
    if (vlen > (1u << 20)) return kiln__fail(ctx, KILN_ERR_TOO_LARGE, "value for %s is too long", key);
    uint8_t *v = kiln__malloc(ctx, vlen);
    if (!v) return KILN_ERR_OUT_OF_MEMORY;
    memcpy(v, value, vlen);
    for (uint32_t i = 0; i < tex->kv_count; i++)
        if (strcmp(tex->kv[i].key, key) == 0) {
            free(tex->kv[i].value);
            tex->kv[i].value = v;
            tex->kv[i].value_size = (uint32_t)vlen;
            return KILN_OK;
        }
    char *k = strdup(key);
    kiln_kv *nkv = realloc(tex->kv, (tex->kv_count + 1) * sizeof *nkv);
    if (!k || !nkv) {
        free(k);
        free(v);
        if (nkv) tex->kv = nkv;
        return kiln__fail(ctx, KILN_ERR_OUT_OF_MEMORY, "out of memory");
    }
    tex->kv = nkv;
    /* keep sorted by key (byte order), as KTX2 requires */
    uint32_t pos = tex->kv_count;
    while (pos > 0 && strcmp(tex->kv[pos - 1].key, k) > 0) {
        tex->kv[pos] = tex->kv[pos - 1];
        pos--;
    }
    tex->kv[pos].key = k;
    tex->kv[pos].value = v;
    tex->kv[pos].value_size = (uint32_t)vlen;
    tex->kv_count++;
    return KILN_OK;
}

kiln_status kiln_image_alloc(kiln_context *ctx, kiln_image *img, uint32_t width, uint32_t height, kiln_pixel_type type)
{
    if (!img) return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "image is NULL");
    memset(img, 0, sizeof *img);
    if (type != KILN_PIXEL_U8 && type != KILN_PIXEL_U16 && type != KILN_PIXEL_F32)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "bad pixel type %d", (int)type);
    if (width == 0 || height == 0)
        return kiln__fail(ctx, KILN_ERR_INVALID_ARGUMENT, "image size %ux%u is empty", width, height);
    if (width > KILN_MAX_DIMENSION || height > KILN_MAX_DIMENSION || (uint64_t)width * height > KILN_MAX_PIXELS)
        return kiln__fail(ctx, KILN_ERR_TOO_LARGE, "image size %ux%u exceeds kiln's limit (%u per side, %llu pixels)",
                          width, height, KILN_MAX_DIMENSION, (unsigned long long)KILN_MAX_PIXELS);
    size_t bytes = (size_t)width * height * 4 * (size_t)type;
    img->pixels = kiln__calloc(ctx, 1, bytes);
    if (!img->pixels) return KILN_ERR_OUT_OF_MEMORY;
    img->width = width;
    img->height = height;
    img->type = type;
    img->channels = 4;
    return KILN_OK;
}

void kiln_image_free(kiln_image *img)
{
    if (!img) return;
    free(img->pixels);
    memset(img, 0, sizeof *img);
}

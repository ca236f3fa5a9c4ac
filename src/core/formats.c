/* formats.c - lookups over the one format table (include/kiln/kiln_formats.h). */
#include "core/internal.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static kiln_format_info g_info[KILN_FORMAT_COUNT];
static char g_names[KILN_FORMAT_COUNT][32];

/* Full CLI names are derived: base + "-srgb" for sRGB rows, "-snorm" for signed rows ("-sf" for BC6H).
 * The table is constant data, so it is built at compile time. */
#define KILN_X_INFO(ID, CLI, VKNAME, VK, DXGI, DXGINAME, FOURCC, BW, BH, BYTES, CH, MODEL, FLAGS, DEC, TS)   \
    [KILN_FORMAT_##ID] = {KILN_FORMAT_##ID, NULL, CLI, VKNAME, VK, DXGI, DXGINAME, FOURCC, BW, BH, BYTES, CH, \
                          MODEL, FLAGS, KILN_PIXEL_##DEC, TS},
static const kiln_format_info k_table[KILN_FORMAT_COUNT] = {KILN_FORMAT_TABLE(KILN_X_INFO)};
#undef KILN_X_INFO

static void build_names(void)
{
    /* Deterministic and idempotent: concurrent first calls write the same bytes. */
    for (int f = 1; f < KILN_FORMAT_COUNT; f++) {
        const kiln_format_info *t = &k_table[f];
        const char *suffix = "";
        if ((t->flags & KILN_FF_SRGB)) suffix = "-srgb";
        else if ((t->flags & KILN_FF_SIGNED) && !(t->flags & KILN_FF_FLOAT)) suffix = "-snorm";
        else if ((t->flags & KILN_FF_SIGNED) && (t->flags & KILN_FF_COMPRESSED)) suffix = "-sf";
        snprintf(g_names[f], sizeof g_names[f], "%s%s", t->cli_base, suffix);
        g_info[f] = *t;
        g_info[f].name = g_names[f];
    }
}

static const kiln_format_info *table(void)
{
    static atomic_int built;
    if (!atomic_load_explicit(&built, memory_order_acquire)) {
        build_names();
        atomic_store_explicit(&built, 1, memory_order_release);
    }
    return g_info;
}

const kiln_format_info *kiln_format_get_info(kiln_format format)
{
    if (format <= KILN_FORMAT_UNDEFINED || format >= KILN_FORMAT_COUNT) return NULL;
    return &table()[format];
}

kiln_format kiln_format_from_cli(const char *base, uint32_t flags)
{
    if (!base) return KILN_FORMAT_UNDEFINED;
    flags &= KILN_FF_SRGB | KILN_FF_SIGNED;
    for (int f = 1; f < KILN_FORMAT_COUNT; f++) {
        const kiln_format_info *t = &table()[f];
        if (strcasecmp(t->cli_base, base) != 0) continue;
        uint32_t tf = t->flags & (KILN_FF_SRGB | KILN_FF_SIGNED);
        if ((t->flags & KILN_FF_FLOAT) && !(t->flags & KILN_FF_COMPRESSED)) tf &= ~KILN_FF_SIGNED;
        if (tf == flags) return (kiln_format)f;
    }
    return KILN_FORMAT_UNDEFINED;
}

static const char *skip_prefix(const char *s, const char *prefix)
{
    size_t n = strlen(prefix);
    return strncasecmp(s, prefix, n) == 0 ? s + n : s;
}

kiln_format kiln_format_from_name(const char *name)
{
    if (!name || !*name) return KILN_FORMAT_UNDEFINED;
    const kiln_format_info *t = table();
    for (int f = 1; f < KILN_FORMAT_COUNT; f++)
        if (strcasecmp(t[f].name, name) == 0) return (kiln_format)f;
    /* Vulkan names: prefer real ETC2 rows over the ETC1 rows that share their VkFormat. */
    const char *vk = skip_prefix(name, "VK_FORMAT_");
    for (int pass = 0; pass < 2; pass++)
        for (int f = 1; f < KILN_FORMAT_COUNT; f++) {
            if (pass == 0 && (t[f].flags & KILN_FF_ETC1)) continue;
            if (strcasecmp(t[f].vk_name, vk) == 0) return (kiln_format)f;
        }
    const char *dx = skip_prefix(name, "DXGI_FORMAT_");
    for (int f = 1; f < KILN_FORMAT_COUNT; f++)
        if (t[f].dxgi_name[0] && strcasecmp(t[f].dxgi_name, dx) == 0) return (kiln_format)f;
    static const struct { const char *alias; kiln_format f; } aliases[] = {
        {"DXT1", KILN_FORMAT_BC1_RGB_UNORM}, {"DXT3", KILN_FORMAT_BC2_UNORM}, {"DXT5", KILN_FORMAT_BC3_UNORM},
        {"BC4U", KILN_FORMAT_BC4_UNORM},     {"BC4S", KILN_FORMAT_BC4_SNORM}, {"BC5U", KILN_FORMAT_BC5_UNORM},
        {"BC5S", KILN_FORMAT_BC5_SNORM},     {"ATI1", KILN_FORMAT_BC4_UNORM}, {"ATI2", KILN_FORMAT_BC5_UNORM},
        {"BC6H", KILN_FORMAT_BC6H_UFLOAT},   {"ETC2", KILN_FORMAT_ETC2_RGB8_UNORM},
        {"EAC", KILN_FORMAT_EAC_R11_UNORM},  {"RGBA", KILN_FORMAT_RGBA8_UNORM},
    };
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcasecmp(aliases[i].alias, name) == 0) return aliases[i].f;
    return KILN_FORMAT_UNDEFINED;
}

kiln_format kiln_format_from_vk(uint32_t vk_format)
{
    const kiln_format_info *t = table();
    for (int f = 1; f < KILN_FORMAT_COUNT; f++)
        if (t[f].vk_format == vk_format && !(t[f].flags & KILN_FF_ETC1)) return (kiln_format)f;
    return KILN_FORMAT_UNDEFINED;
}

kiln_format kiln_format_from_dxgi(uint32_t dxgi_format)
{
    if (dxgi_format == 71) return KILN_FORMAT_BC1_RGBA_UNORM;
    if (dxgi_format == 72) return KILN_FORMAT_BC1_RGBA_SRGB;
    const kiln_format_info *t = table();
    for (int f = 1; f < KILN_FORMAT_COUNT; f++)
        if (t[f].dxgi_format && t[f].dxgi_format == dxgi_format) return (kiln_format)f;
    return KILN_FORMAT_UNDEFINED;
}

size_t kiln_format_image_size(kiln_format format, uint32_t width, uint32_t height)
{
    const kiln_format_info *t = kiln_format_get_info(format);
    if (!t || width == 0 || height == 0) return 0;
    size_t bx = ((size_t)width + t->block_width - 1) / t->block_width;
    size_t by = ((size_t)height + t->block_height - 1) / t->block_height;
    size_t n, bytes;
    if (!kiln__mul_size(bx, by, &n) || !kiln__mul_size(n, t->block_bytes, &bytes)) return 0;
    return bytes;
}

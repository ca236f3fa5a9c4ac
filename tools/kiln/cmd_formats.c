/* cmd_formats.c - `kiln formats`: the format table, as the CLI sees it. */
#include "cli.h"

#include <string.h>

int kiln_cmd_formats(int argc, char **argv)
{
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: kiln formats [--json]\n\nLists every format: CLI name, Vulkan and DXGI names and numbers,\n"
                   "block size. -f accepts any of these names (case-insensitive, prefixes optional).\n");
            return KILN_EXIT_OK;
        } else return kiln_cli_usage_error("formats", "unknown option '%s'", argv[i]);
    }
    if (json) printf("[\n");
    else printf("%-16s %-28s %4s  %-22s %4s  %-6s %s\n", "name", "vulkan", "vk", "dxgi", "dxgi", "block", "bytes");
    for (int f = 1; f < KILN_FORMAT_COUNT; f++) {
        const kiln_format_info *t = kiln_format_get_info((kiln_format)f);
        if (json)
            printf("  {\"name\": \"%s\", \"vk_name\": \"VK_FORMAT_%s\", \"vk\": %u, \"dxgi_name\": \"%s%s\", \"dxgi\": %u, "
                   "\"block\": [%u, %u], \"block_bytes\": %u, \"channels\": %u}%s\n",
                   t->name, t->vk_name, t->vk_format, t->dxgi_name[0] ? "DXGI_FORMAT_" : "", t->dxgi_name,
                   t->dxgi_format, t->block_width, t->block_height, t->block_bytes, t->channels,
                   f + 1 < KILN_FORMAT_COUNT ? "," : "");
        else
            printf("%-16s %-28s %4u  %-22s %4u  %ux%-4u %u\n", t->name, t->vk_name, t->vk_format,
                   t->dxgi_name[0] ? t->dxgi_name : "-", t->dxgi_format, t->block_width, t->block_height,
                   t->block_bytes);
    }
    if (json) printf("]\n");
    return KILN_EXIT_OK;
}

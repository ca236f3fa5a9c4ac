/* main.c - the kiln command-line tool: dispatch to one subcommand per file. */
#include "cli.h"

#include <string.h>

typedef struct command {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
} command;

static const command k_commands[] = {
    {"compress", kiln_cmd_compress, "encode an image into a block-compressed KTX2 or DDS texture"},
    {"mip", kiln_cmd_mip, "build all mip levels of an image into an uncompressed KTX2 or DDS texture"},
    {"decode", kiln_cmd_decode, "decode a texture level to PNG or EXR"},
    {"info", kiln_cmd_info, "print everything about a KTX2, KTX or DDS file"},
    {"validate", kiln_cmd_validate, "check a KTX2, KTX or DDS file strictly"},
    {"compare", kiln_cmd_compare, "PSNR, SSIM, max error and more between two images or textures"},
    {"formats", kiln_cmd_formats, "list the formats kiln knows and their names"},
    {"devices", kiln_cmd_devices, "list the Vulkan devices kiln can use"},
    {"flame", kiln_cmd_flame, "render fractal flames (flam3 genomes) to an image or a texture"},
};

static void usage(FILE *f)
{
    fprintf(f, "kiln %s - bake images into GPU-ready textures\n\n"
               "usage: kiln <command> [options]\n\ncommands:\n", KILN_VERSION_STRING);
    for (size_t i = 0; i < sizeof k_commands / sizeof k_commands[0]; i++)
        fprintf(f, "  %-10s %s\n", k_commands[i].name, k_commands[i].summary);
    fprintf(f, "\n'kiln <command> --help' describes a command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return KILN_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return KILN_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("kiln %s\n", KILN_VERSION_STRING);
        return KILN_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof k_commands / sizeof k_commands[0]; i++)
        if (!strcmp(argv[1], k_commands[i].name)) return k_commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "kiln: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return KILN_EXIT_USAGE;
}

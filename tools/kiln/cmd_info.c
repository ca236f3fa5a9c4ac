/* cmd_info.c - `kiln info FILE [--json]`: everything about a KTX2, KTX 1 or DDS file (header fields,
 * format names, per-level offsets and sizes, the DFD decoded word by word, key/value pairs). */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
    printf("usage: kiln info FILE.ktx2|FILE.ktx|FILE.dds [--json]\n\n"
           "Prints the container's header fields, the texture format, each level's offset and size, the\n"
           "KTX2 data format descriptor (raw words and their meaning) and the key/value metadata.\n"
           "The file does not have to be valid: whatever can be read safely is shown (see kiln validate).\n\n"
           "  --json          one JSON object instead of the YAML-like text\n"
           "  --backend auto|cpu|vulkan, --device N, -j N, --quiet, --verbose, --progress auto|always|never\n");
}

int kiln_cmd_info(int argc, char **argv)
{
    kiln_cli_common c;
    kiln_cli_common_init(&c);
    const char *in = NULL;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help();
            return KILN_EXIT_OK;
        }
        int r = kiln_cli_common_option(&c, argc, argv, &i);
        if (r < 0) return KILN_EXIT_USAGE;
        if (r > 0) continue;
        if (!strcmp(a, "--json")) json = 1;
        else if (a[0] == '-' && a[1]) return kiln_cli_usage_error("info", "unknown option '%s' (see kiln info --help)", a);
        else if (!in) in = a;
        else return kiln_cli_usage_error("info", "one file at a time ('%s' and '%s' given)", in, a);
    }
    if (!in) return kiln_cli_usage_error("info", "no input file (see kiln info --help)");
    uint8_t *data = NULL;
    size_t size = 0;
    int e = kiln_cli_read_file(in, &data, &size);
    if (e) {
        fprintf(stderr, "kiln info: %s: cannot read: %s\n", in, strerror(e));
        return KILN_EXIT_IO;
    }
    kiln_context *ctx = kiln_cli_context(&c, "info");
    if (!ctx) {
        free(data);
        return KILN_EXIT_FAILURE;
    }
    char *text = NULL;
    kiln_status st = json ? kiln_describe_memory_json(ctx, data, size, &text) : kiln_describe_memory(ctx, data, size, &text);
    free(data);
    int rc = KILN_EXIT_OK;
    if (st != KILN_OK) {
        fprintf(stderr, "kiln info: %s: %s\n", in, kiln_last_error(ctx)[0] ? kiln_last_error(ctx) : kiln_status_string(st));
        rc = kiln_cli_exit_code(st);
    } else {
        if (!json) printf("file: %s\n", in);
        fputs(text, stdout);
    }
    kiln_free(text);
    kiln_context_free(ctx);
    return rc;
}

/* cmd_validate.c - `kiln validate FILE...`: strict checks of KTX2 (in the spirit of KTX-Software's
 * `ktx validate`: header ranges, level index, alignment, DFD against vkFormat, key/value data,
 * supercompression), KTX 1 and DDS files. Each problem is printed as "FILE: error: ..." or
 * "FILE: warning: ..."; the exit status is 0 when every file is valid, KILN_EXIT_BAD_INPUT (4) when
 * any has an error, KILN_EXIT_IO (3) when a file cannot be read. */
#include "cli.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
    printf("usage: kiln validate FILE... [options]\n\n"
           "Checks KTX2, KTX and DDS files strictly and prints every problem as 'FILE: error: ...' or\n"
           "'FILE: warning: ...'. Exit status: 0 all valid, 4 some file has errors, 3 a file cannot be read.\n\n"
           "  --warnings-as-errors  treat warnings as errors\n"
           "  --quiet               print nothing, only set the exit status\n"
           "  --backend auto|cpu|vulkan, --device N, -j N, --verbose, --progress auto|always|never\n");
}

typedef struct rep {
    const char *file;
    int quiet;
    unsigned errors, warnings;
} rep;

static void report(void *user, int severity, const char *message)
{
    rep *r = user;
    if (severity >= 2) r->errors++;
    else r->warnings++;
    if (!r->quiet) printf("%s: %s: %s\n", r->file, severity >= 2 ? "error" : "warning", message);
}

int kiln_cmd_validate(int argc, char **argv)
{
    kiln_cli_common c;
    kiln_cli_common_init(&c);
    int werror = 0, nfiles = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help();
            return KILN_EXIT_OK;
        }
        int r = kiln_cli_common_option(&c, argc, argv, &i);
        if (r < 0) return KILN_EXIT_USAGE;
        if (r > 0) continue;
        if (!strcmp(a, "--warnings-as-errors") || !strcmp(a, "-W")) werror = 1;
        else if (a[0] == '-' && a[1]) return kiln_cli_usage_error("validate", "unknown option '%s' (see kiln validate --help)", a);
        else nfiles++;
    }
    if (!nfiles) return kiln_cli_usage_error("validate", "no input file (see kiln validate --help)");
    c.progress = 0;
    kiln_context *ctx = kiln_cli_context(&c, "validate");
    if (!ctx) return KILN_EXIT_FAILURE;
    int rc = KILN_EXIT_OK;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        /* skip options (and their values) the first pass accepted */
        kiln_cli_common scratch;
        kiln_cli_common_init(&scratch);
        int j = i;
        if (kiln_cli_common_option(&scratch, argc, argv, &j) > 0) {
            i = j;
            continue;
        }
        if (a[0] == '-' && a[1]) continue;
        uint8_t *data = NULL;
        size_t size = 0;
        int e = kiln_cli_read_file(a, &data, &size);
        if (e) {
            fprintf(stderr, "%s: error: cannot read: %s\n", a, strerror(e));
            rc = KILN_EXIT_IO;
            continue;
        }
        rep r = {a, c.quiet, 0, 0};
        kiln_status st = kiln_validate_memory(ctx, data, size, report, &r);
        free(data);
        bool bad = st != KILN_OK || r.errors || (werror && r.warnings);
        if (st != KILN_OK && !r.errors && !c.quiet) /* a failure that produced no report (out of memory ...) */
            printf("%s: error: %s\n", a, kiln_last_error(ctx)[0] ? kiln_last_error(ctx) : kiln_status_string(st));
        if (!c.quiet && !bad)
            printf("%s: valid%s", a, r.warnings ? "" : "\n");
        if (!c.quiet && !bad && r.warnings) printf(" (%u warning%s)\n", r.warnings, r.warnings == 1 ? "" : "s");
        if (bad && rc == KILN_EXIT_OK) rc = KILN_EXIT_BAD_INPUT;
    }
    kiln_context_free(ctx);
    return rc;
}

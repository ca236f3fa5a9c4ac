/* cli.h - shared by the kiln subcommands (one file per subcommand: cmd_<name>.c). */
#ifndef KILN_CLI_H
#define KILN_CLI_H

#include "kiln/kiln.h"

#include <stdio.h>

/* Exit codes, one per error class (documented in docs/CLI.md). */
enum {
    KILN_EXIT_OK = 0,
    KILN_EXIT_FAILURE = 1,    /* anything not below */
    KILN_EXIT_USAGE = 2,      /* bad command line */
    KILN_EXIT_IO = 3,         /* cannot read or write a file */
    KILN_EXIT_BAD_INPUT = 4,  /* corrupt, unsupported or too large input; validation failed */
    KILN_EXIT_NO_DEVICE = 5,  /* --backend vulkan without a usable device, or a Vulkan failure */
    KILN_EXIT_CANCELLED = 6
};

typedef struct kiln_cli_common {
    kiln_context_params ctx_params;
    int quiet;
    int progress;    /* -1 auto (stderr is a terminal), 0 never, 1 always */
} kiln_cli_common;

/* Fills defaults (backend auto, threads 0, progress auto). */
void kiln_cli_common_init(kiln_cli_common *c);

/* Handles the options every subcommand shares; returns 1 if argv[*i] (and maybe the next argument)
 * was consumed, 0 if it is not a common option, -1 on a bad value (message printed). Options:
 *   --backend auto|cpu|vulkan   --device N   -j/--threads N   --quiet   --verbose
 *   --progress auto|always|never */
int kiln_cli_common_option(kiln_cli_common *c, int argc, char **argv, int *i);

/* Creates the context (with a progress bar on stderr when enabled). Prints and returns NULL on error. */
kiln_context *kiln_cli_context(kiln_cli_common *c, const char *cmd);

/* Prints "kiln CMD: message" (the context's last error, or the status string) and returns the exit code
 * for the status. */
int kiln_cli_fail(const char *cmd, kiln_context *ctx, kiln_status st);
int kiln_cli_exit_code(kiln_status st);
/* Prints "kiln CMD: <formatted>" on stderr and returns KILN_EXIT_USAGE. */
int kiln_cli_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Parses an unsigned decimal; 0 on success. */
int kiln_cli_parse_u32(const char *s, unsigned *out);
/* Reads a whole file (any size, also pipes) into a malloc'ed buffer; 0 or an errno value. */
int kiln_cli_read_file(const char *path, uint8_t **data, size_t *size);
/* Handles the mipmap filtering options shared by `kiln mip` and `kiln compress --mips`:
 *   --filter|--mip-filter box|kaiser|lanczos3|mitchell   --wrap|--clamp   --normal
 *   --alpha weighted|separate|premultiplied   --alpha-coverage REF
 *   --mip-strategy auto|blit|per-level|subgroup|pyramid|single-pass (GPU)
 * Returns 1 if consumed (with its value), 0 if not a mip option, -1 on a bad value (message printed). */
int kiln_cli_mip_option(const char *cmd, kiln_mip_params *mp, int argc, char **argv, int *i);
/* Ends a progress line if one was drawn. */
void kiln_cli_progress_done(void);

/* Subcommands: argc/argv start at the subcommand name. */
int kiln_cmd_info(int argc, char **argv);
int kiln_cmd_validate(int argc, char **argv);
int kiln_cmd_decode(int argc, char **argv);
int kiln_cmd_compare(int argc, char **argv);
int kiln_cmd_compress(int argc, char **argv);
int kiln_cmd_mip(int argc, char **argv);
int kiln_cmd_formats(int argc, char **argv);
int kiln_cmd_devices(int argc, char **argv);
int kiln_cmd_flame(int argc, char **argv);

#endif

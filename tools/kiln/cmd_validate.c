/* PLACEHOLDER: replaced by the owner of this file. */
#include "cli.h"
int kiln_cmd_validate(int argc, char **argv) { return kiln_cli_usage_error("validate", "not implemented yet"); }

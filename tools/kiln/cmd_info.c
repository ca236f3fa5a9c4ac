/* PLACEHOLDER: replaced by the owner of this file. */
#include "cli.h"
int kiln_cmd_info(int argc, char **argv) { return kiln_cli_usage_error("info", "not implemented yet"); }

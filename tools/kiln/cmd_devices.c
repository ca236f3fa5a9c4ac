/* cmd_devices.c - `kiln devices`: the Vulkan devices kiln can use, in --device order. */
#include "cli.h"

#include <string.h>

int kiln_cmd_devices(int argc, char **argv)
{
    kiln_cli_common c;
    kiln_cli_common_init(&c);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: kiln devices\n\nLists the Vulkan devices kiln can use; the index is what --device takes.\n"
                   "'--backend auto' uses the first listed GPU (discrete before integrated); CPU implementations\n"
                   "such as lavapipe only with --backend vulkan or KILN_ALLOW_CPU_VULKAN=1, since kiln's CPU path\n"
                   "is faster than them.\n");
            return KILN_EXIT_OK;
        }
        int r = kiln_cli_common_option(&c, argc, argv, &i);
        if (r < 0) return KILN_EXIT_USAGE;
        if (r == 0) return kiln_cli_usage_error("devices", "unknown option '%s'", argv[i]);
    }
    kiln_context *ctx = kiln_cli_context(&c, "devices");
    if (!ctx) return KILN_EXIT_FAILURE;
    kiln_gpu_info infos[16];
    uint32_t n = 0;
    kiln_status st = kiln_gpu_list(ctx, infos, 16, &n);
    if (st != KILN_OK) {
        int rc = kiln_cli_fail("devices", ctx, st);
        kiln_context_free(ctx);
        return rc;
    }
    if (n == 0) printf("no Vulkan device found: kiln runs on the CPU\n");
    for (uint32_t i = 0; i < n && i < 16; i++)
        printf("%u: %s (%s), Vulkan %u.%u, subgroup %u, %s, BC sampling %s, ETC2 sampling %s\n", i, infos[i].name,
               infos[i].driver, infos[i].api_version >> 22, (infos[i].api_version >> 12) & 0x3ff, infos[i].subgroup_size,
               infos[i].discrete ? "discrete" : "integrated/CPU", infos[i].bc_sampling ? "yes" : "no",
               infos[i].etc2_sampling ? "yes" : "no");
    kiln_context_free(ctx);
    return KILN_EXIT_OK;
}

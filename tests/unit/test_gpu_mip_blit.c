/* test_gpu_mip_blit.c - the `blit` mipmap strategy (src/gpu/gpu_mip_blit.c): the checks live in
 * test_gpu_mip.c (blit_power_of_two); this process runs only them, because Mesa 22.3's lavapipe leaks
 * 2 x 56 bytes inside the driver on its blit path and CMake turns LeakSanitizer off for this test. */
#define KILN_TEST_GPU_MIP_BLIT 1
#include "test_gpu_mip.c"

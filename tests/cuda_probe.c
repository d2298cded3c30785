/* Says whether a module created now with the CUDA engine would get a device: exit 0, or 77 with
 * the reason (what the shell-script tests use to skip their CUDA runs). */
#include "testutil.h"

int main(void)
{
    glcv_cuda_info info;
    test_cuda_or_skip(&info);
    return 0;
}

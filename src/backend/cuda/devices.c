/* devices.c — device selection for multi-GPU front ends (see devices.h). Kept apart from
 * device.c's probe: the probe answers "is there a usable GPU", this file "which one". */
#include "devices.h"
#include "cuda_util.h"
#include "error.h"

#include <stdlib.h>

int imgpu_cuda_device_count(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        imgpu__cuda_fail(e, "cudaGetDeviceCount");
        return -1;
    }
    return n;
}

int imgpu_cuda_use_device(int dev)
{
    int rc = 0;
    IMGPU_CUDA_TRY(cudaSetDevice(dev));
    return 0;
fail:
    return rc < 0 ? rc : -1;
}

int imgpu_cuda_default_device(void)
{
    const char *env = getenv("IMGPU_CUDA_DEVICE");
    return env && *env ? atoi(env) : 0;
}

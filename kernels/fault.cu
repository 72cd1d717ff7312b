// fault.cu — test-only kernels that fault on purpose, so the tests can check what imgpu does
// after a real sticky error (one that leaves the CUDA context unusable for the rest of the
// process; docs/reliability.md). Compiled in always, launched only when IMGPU_FAULT_INJECT is
// set (src/cuda/pipeline.c):
//   trap     the kernel executes a trap instruction: cudaErrorLaunchFailure
//   address  the kernel writes to an address no allocation can have: cudaErrorIllegalAddress.
//            On the H100 (driver 580) such an MMU fault leaves the GPU's EGL/CUDA-GL interop
//            broken for every later process on it (each viewer run then takes ~15 s and shows
//            stale frames), so the test suite injects traps.
#include "kernels.h"

#include <stdint.h>

static __global__ void fault_kernel(unsigned *p)
{
    p[threadIdx.x] = 0xdeadbeefu;
}

static __global__ void trap_kernel()
{
    __trap();
}

extern "C" cudaError_t imgpu_launch_fault(cudaStream_t stream, int illegal_address)
{
    if (illegal_address)
        fault_kernel<<<1, 32, 0, stream>>>(reinterpret_cast<unsigned *>(static_cast<uintptr_t>(0x10)));
    else
        trap_kernel<<<1, 32, 0, stream>>>();
    return cudaGetLastError();
}

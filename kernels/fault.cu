// fault.cu — a test-only kernel that faults on purpose: it writes to an address no allocation
// can have, which ends in cudaErrorIllegalAddress, a sticky error that leaves the CUDA context
// unusable for the rest of the process. Compiled in always, launched only when
// IMGPU_FAULT_INJECT=kernel is set (src/cuda/pipeline.c), so the tests can check what imgpu
// does after a real sticky fault (README, "Reliability").
#include "kernels.h"

#include <stdint.h>

static __global__ void fault_kernel(unsigned *p)
{
    p[threadIdx.x] = 0xdeadbeefu;
}

extern "C" cudaError_t imgpu_launch_fault(cudaStream_t stream)
{
    fault_kernel<<<1, 32, 0, stream>>>(reinterpret_cast<unsigned *>(static_cast<uintptr_t>(0x10)));
    return cudaGetLastError();
}

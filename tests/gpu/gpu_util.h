/* gpu_util.h — for GPU tests: skip (exit 77, CTest's SKIP_RETURN_CODE) where no usable GPU
 * exists, so CI without a GPU reports "skipped", never "passed". Any other CUDA failure is a
 * real failure. */
#ifndef IMGPU_GPU_UTIL_H
#define IMGPU_GPU_UTIL_H

#include <stdio.h>
#include <stdlib.h>

#include "cuda/cuda_backend.h"
#include "error.h"

static inline void gpu_require_or_skip(void)
{
    if (!imgpu_cuda_available()) {
        printf("SKIP: %s\n", imgpu_error_message());
        exit(77);
    }
}

#define CUDA_OK(call)                                                                   \
    do {                                                                                \
        cudaError_t e_ = (call);                                                        \
        if (e_ != cudaSuccess) {                                                        \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

/* xorshift: deterministic test data */
static inline uint32_t gpu_rand(uint32_t *s)
{
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

#endif

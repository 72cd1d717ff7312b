/* crop.cu — the op "crop" (src/op/crop.c): --trim's bounding box. One thread per pixel
 * compares its bytes (px = channels x sample bytes, 1..8) with the top-left pixel's; the
 * pixels that differ vote for the box {min x, min y, max x, max y} through the block's shared
 * copy (atomicMin / atomicMax), then one atomic per block into box[4] in device memory. Min
 * and max are exact in any order: the same box as the CPU's imgpu_crop_trim_box. The box's
 * copy itself is a cudaMemcpy2DAsync on the host side (src/backend/cuda/crop.c). */
#include "kernels.h"

#include <limits.h>

static __global__ void trim_init(int *box, int w, int h)
{
    box[0] = w;   /* min x: none yet */
    box[1] = h;   /* min y */
    box[2] = -1;  /* max x */
    box[3] = -1;  /* max y */
}

static __global__ void trim_box_kernel(const uint8_t *in, int w, int h, int px, int *box)
{
    __shared__ int s[4];
    if (threadIdx.x == 0) {
        s[0] = INT_MAX;
        s[1] = INT_MAX;
        s[2] = -1;
        s[3] = -1;
    }
    __syncthreads();
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (size_t)w * h) {
        const uint8_t *p = in + i * (size_t)px;
        int differs = 0;
        for (int k = 0; k < px; k++)
            differs |= p[k] != in[k];
        if (differs) {
            const int x = (int)(i % (size_t)w), y = (int)(i / (size_t)w);
            atomicMin(&s[0], x);
            atomicMin(&s[1], y);
            atomicMax(&s[2], x);
            atomicMax(&s[3], y);
        }
    }
    __syncthreads();
    if (threadIdx.x == 0 && s[2] >= 0) {
        atomicMin(&box[0], s[0]);
        atomicMin(&box[1], s[1]);
        atomicMax(&box[2], s[2]);
        atomicMax(&box[3], s[3]);
    }
}

extern "C" cudaError_t imgpu_launch_crop_trim_box(const void *d_in, int w, int h, int channels, int bytes, int *d_box,
                                                  cudaStream_t stream)
{
    if (w < 1 || h < 1 || channels < 1 || channels > 4 || (bytes != 1 && bytes != 2))
        return cudaErrorInvalidValue;
    trim_init<<<1, 1, 0, stream>>>(d_box, w, h);
    /* one dimension: a 1 x 268435456 strip is a legal image, and grid.y stops at 65535 */
    const size_t n = (size_t)w * h, blocks = (n + IMGPU_GATHER_THREADS - 1) / IMGPU_GATHER_THREADS;
    trim_box_kernel<<<(unsigned)blocks, IMGPU_GATHER_THREADS, 0, stream>>>((const uint8_t *)d_in, w, h,
                                                                         channels * bytes, d_box);
    return cudaGetLastError();
}

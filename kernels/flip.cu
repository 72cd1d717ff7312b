/* flip.cu — the op "flip" (src/op/flip.c): one thread per output pixel copies the input pixel
 * op.h's imgpu_flip_source names (the same index arithmetic, written out here), byte by byte
 * over the pixel's px = channels x sample bytes (1..8), so depth and layout need no cases. */
#include "kernels.h"

static __global__ void flip_kernel(const uint8_t *in, int w, int h, int px, uint8_t *out, int ow, int oh,
                                   int horizontal, int vertical, int transpose)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)ow * oh)
        return;
    const int x = (int)(i % (size_t)ow), y = (int)(i / (size_t)ow);
    const int u = transpose ? y : x, v = transpose ? x : y;
    const int sx = horizontal ? w - 1 - u : u, sy = vertical ? h - 1 - v : v;
    const uint8_t *s = in + ((size_t)sy * w + sx) * px;
    uint8_t *d = out + ((size_t)y * ow + x) * px;
    for (int k = 0; k < px; k++)
        d[k] = s[k];
}

extern "C" cudaError_t imgpu_launch_flip(const void *d_in, int w, int h, int channels, int bytes, void *d_out,
                                         int horizontal, int vertical, int transpose, cudaStream_t stream)
{
    if (w < 1 || h < 1 || channels < 1 || channels > 4 || (bytes != 1 && bytes != 2))
        return cudaErrorInvalidValue;
    const int ow = transpose ? h : w, oh = transpose ? w : h;
    /* one dimension: a 1 x 268435456 strip is a legal image, and grid.y stops at 65535 */
    const size_t n = (size_t)ow * oh, blocks = (n + IMGPU_GATHER_THREADS - 1) / IMGPU_GATHER_THREADS;
    flip_kernel<<<(unsigned)blocks, IMGPU_GATHER_THREADS, 0, stream>>>((const uint8_t *)d_in, w, h, channels * bytes, (uint8_t *)d_out, ow, oh,
                                            horizontal != 0, vertical != 0, transpose != 0);
    return cudaGetLastError();
}

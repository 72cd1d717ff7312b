/* normalize.cu — the op "normalize" (src/op/normalize.c): ImageMagick's intensity of each
 * pixel as a 16-bit quantum plane, which the 65536-bin privatized histogram
 * (imgpu_launch_histogram16_tuned) then counts. One thread per pixel:
 *     x = (0.212656 R + 0.715158 G) + 0.072186 B   over the quanta (257 v at 8 bits),
 *     q = x <= 0 ? 0 : x >= 65535 ? 65535 : (int)(x + 0.5)                (ClampToQuantum)
 * every product and sum rounded to double by the _rn intrinsics (never fused into a
 * multiply-add), the same IEEE operations as the CPU's tables and sums
 * (src/backend/cpu/tone_cdf.c), so the histograms are equal. */
#include "kernels.h"

template <typename T>
static __global__ void intensity_kernel(const T *in, size_t npix, int channels, int depth, uint16_t *out)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= npix)
        return;
    const T *p = in + i * (size_t)channels;
    const double scale = depth == 8 ? 257.0 : 1.0; /* v * 257 is exact in double */
    const double r = __dmul_rn((double)p[0], scale), g = __dmul_rn((double)p[1], scale),
                 b = __dmul_rn((double)p[2], scale);
    const double x = __dadd_rn(__dadd_rn(__dmul_rn(0.212656, r), __dmul_rn(0.715158, g)), __dmul_rn(0.072186, b));
    out[i] = (uint16_t)(x <= 0.0 ? 0u : x >= 65535.0 ? 65535u : (unsigned)__dadd_rn(x, 0.5));
}

extern "C" cudaError_t imgpu_launch_intensity16(const void *d_in, size_t npix, int channels, int depth,
                                                uint16_t *d_out, cudaStream_t stream)
{
    if (npix == 0)
        return cudaSuccess;
    if ((channels != 3 && channels != 4) || (depth != 8 && depth != 16))
        return cudaErrorInvalidValue;
    const size_t blocks = (npix + IMGPU_GATHER_THREADS - 1) / IMGPU_GATHER_THREADS;
    if (depth == 8)
        intensity_kernel<uint8_t><<<(unsigned)blocks, IMGPU_GATHER_THREADS, 0, stream>>>((const uint8_t *)d_in, npix,
                                                                                        channels, depth, d_out);
    else
        intensity_kernel<uint16_t><<<(unsigned)blocks, IMGPU_GATHER_THREADS, 0, stream>>>((const uint16_t *)d_in,
                                                                                         npix, channels, depth, d_out);
    return cudaGetLastError();
}

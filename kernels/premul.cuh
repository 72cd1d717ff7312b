/* premul.cuh — premultiplied interpolation of images with alpha on the device: the op floor's
 * rule (src/op.h, "interpolating filters") with the same operations as the CPU's helpers in
 * src/backend/cpu/premul.h, which explains them; tests/gpu hold the two backends equal bit for bit.
 * Float steps use the _rn intrinsics so that nvcc cannot fuse a product into an fma or replace
 * the division (an approximate one, under --use_fast_math or -prec-div=false, would differ
 * from the CPU's IEEE division). Used by rotate.cu; resize's kernels next. */
#ifndef IMGPU_PREMUL_CUH
#define IMGPU_PREMUL_CUH

#include <stdint.h>

/* One tap's premultiplied colour: c * a, one rounding (exact at 8 bits). */
static __device__ __forceinline__ float imgpu__premul(float c, float a) { return __fmul_rn(c, a); }

/* A float filter's colour from sums M and A whose taps' alphas differ, for A > 0: M / A
 * correctly rounded, clamped to 0..maxv (then rounded by the filter as any sample). */
static __device__ __forceinline__ float imgpu__unpremul(float m, float a, float maxv)
{
    const float v = __fdiv_rn(m, a);
    return v < 0.0f ? 0.0f : (v > maxv ? maxv : v);
}

/* An exact filter's colour: m / a rounded half up (a > 0, m <= maxv * a), in 64 bits (16-bit
 * images: m < 2^48) ... */
static __device__ __forceinline__ uint32_t imgpu__unpremul_exact(uint64_t m, uint64_t a)
{
    return (uint32_t)((m + (a >> 1)) / a);
}

/* ... or in 32 bits where m + a / 2 fits them (8-bit bilinear: m <= 65536 * 255 * 255, plus
 * a / 2 <= 255 * 32768, below 2^32): the same value, the rounding being exact either way. */
static __device__ __forceinline__ uint32_t imgpu__unpremul_exact32(uint32_t m, uint32_t a)
{
    return (m + (a >> 1)) / a;
}

#endif

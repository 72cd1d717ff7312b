/* color.cuh — full-range BT.601 YCbCr in OpenCV's 14-bit fixed point (cvtColor
 * RGB2YCrCb / YCrCb2RGB, 8-bit path), for the kernels. The CPU reference
 * (src/cpu/color.c) implements the same integer formulas; tests hold them equal, and hold
 * both equal to OpenCV. Arithmetic right shifts of negative ints round toward -inf, as
 * OpenCV's CV_DESCALE does. */
#ifndef IMGPU_COLOR_CUH
#define IMGPU_COLOR_CUH

#include <stdint.h>

#define IMGPU_YUV_SHIFT 14
#define IMGPU_DESCALE(x) (((x) + (1 << (IMGPU_YUV_SHIFT - 1))) >> IMGPU_YUV_SHIFT)

__device__ __forceinline__ int imgpu__clamp255(int v) { return v < 0 ? 0 : (v > 255 ? 255 : v); }

__device__ __forceinline__ int imgpu__rgb_to_y(int r, int g, int b)
{
    return IMGPU_DESCALE(r * 4899 + g * 9617 + b * 1868);
}

__device__ __forceinline__ void imgpu__rgb_to_ycbcr(int r, int g, int b, int *y, int *cb, int *cr)
{
    int Y = imgpu__rgb_to_y(r, g, b);
    *y = Y;
    *cr = imgpu__clamp255(IMGPU_DESCALE((r - Y) * 11682 + (128 << IMGPU_YUV_SHIFT)));
    *cb = imgpu__clamp255(IMGPU_DESCALE((b - Y) * 9241 + (128 << IMGPU_YUV_SHIFT)));
}

__device__ __forceinline__ void imgpu__ycbcr_to_rgb(int y, int cb, int cr, int *r, int *g, int *b)
{
    *r = imgpu__clamp255(y + IMGPU_DESCALE((cr - 128) * 22987));
    *g = imgpu__clamp255(y + IMGPU_DESCALE((cb - 128) * -5636 + (cr - 128) * -11698));
    *b = imgpu__clamp255(y + IMGPU_DESCALE((cb - 128) * 29049));
}

#endif

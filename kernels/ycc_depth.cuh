/* ycc_depth.cuh — full-range BT.601 RGB <-> YCbCr at 8 or 16 bits for the kernels that work at
 * both depths (local contrast, 16-bit and any-formula equalize): OpenCV's 14-bit fixed point with the chroma
 * offset HALF = 128 (8-bit) or 32768 (16-bit) and saturation to 0..MAXV, exactly as
 * src/cpu/color.c and src/cpu/color16.c. Every intermediate fits in an int at 16 bits
 * (largest: 65535 * 11682 + (32768 << 14) < 2^31), and >> of a negative int floors, as
 * the CPU's descale does. */
#ifndef IMGPU_YCC_DEPTH_CUH
#define IMGPU_YCC_DEPTH_CUH

#include <stdint.h>

template <typename T> struct imgpu__depth;
template <> struct imgpu__depth<uint8_t> {
    static constexpr int MAXV = 255, HALF = 128, LEVELS = 256;
};
template <> struct imgpu__depth<uint16_t> {
    static constexpr int MAXV = 65535, HALF = 32768, LEVELS = 65536;
};

__device__ __forceinline__ int imgpu__ycc_descale(int x) { return (x + (1 << 13)) >> 14; }

template <typename T>
__device__ __forceinline__ int imgpu__ycc_sat(int v)
{
    return v < 0 ? 0 : (v > imgpu__depth<T>::MAXV ? imgpu__depth<T>::MAXV : v);
}

template <typename T>
__device__ __forceinline__ int imgpu__ycc_y(int r, int g, int b)
{
    return imgpu__ycc_sat<T>(imgpu__ycc_descale(r * 4899 + g * 9617 + b * 1868));
}

/* Cr and Cb use the rounded integer Y (before saturation, which never changes it). */
template <typename T>
__device__ __forceinline__ void imgpu__ycc_forward(int r, int g, int b, int *y, int *cb, int *cr)
{
    const int yy = imgpu__ycc_descale(r * 4899 + g * 9617 + b * 1868);
    *y = imgpu__ycc_sat<T>(yy);
    *cr = imgpu__ycc_sat<T>(imgpu__ycc_descale((r - yy) * 11682 + (imgpu__depth<T>::HALF << 14)));
    *cb = imgpu__ycc_sat<T>(imgpu__ycc_descale((b - yy) * 9241 + (imgpu__depth<T>::HALF << 14)));
}

template <typename T>
__device__ __forceinline__ void imgpu__ycc_inverse(int y, int cb, int cr, int *r, int *g, int *b)
{
    const int dcr = cr - imgpu__depth<T>::HALF, dcb = cb - imgpu__depth<T>::HALF;
    *r = imgpu__ycc_sat<T>(y + imgpu__ycc_descale(22987 * dcr));
    *g = imgpu__ycc_sat<T>(y + imgpu__ycc_descale(-11698 * dcr - 5636 * dcb));
    *b = imgpu__ycc_sat<T>(y + imgpu__ycc_descale(29049 * dcb));
}

#endif

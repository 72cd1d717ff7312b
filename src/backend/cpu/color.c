/* color.c — full-range BT.601 RGB <-> YCbCr in OpenCV's 8-bit integer arithmetic.
 *
 * These are the reference formulas for luminance-mode equalization and for the `luma`
 * histogram; the CUDA kernels reimplement the same integer formulas and are held equal to
 * them by the tests. They reproduce OpenCV's cvtColor(COLOR_RGB2YCrCb) and
 * cvtColor(COLOR_YCrCb2RGB) on 8-bit data bit for bit (tests/opencv/cpu_ycc_exhaustive.py checks
 * every one of the 2^24 inputs in each direction against cv2).
 *
 * The arithmetic itself is inline in ycc.h (for the per-pixel loops); these are it behind a call.
 *
 * Fixed point: 14 fractional bits (OpenCV's yuv_shift). DESCALE(x) = (x + 2^13) >> 14, i.e.
 * round half up, with >> an arithmetic (flooring) shift for negative x.
 *
 *   forward (all intermediate values are non-negative):
 *     Y  = DESCALE(4899*R + 9617*G + 1868*B)              0.299, 0.587, 0.114 * 2^14
 *     Cr = DESCALE((R - Y)*11682 + (128 << 14))           0.713 * 2^14  (1 / 1.402)
 *     Cb = DESCALE((B - Y)*9241  + (128 << 14))           0.564 * 2^14  (1 / 1.772)
 *     each saturated to 0..255 (Y, Cr and Cb are in range anyway).
 *   Note Cr and Cb use the already-rounded integer Y, as OpenCV does.
 *
 *   inverse (intermediate values may be negative; DESCALE floors after adding 2^13):
 *     R = Y + DESCALE(22987*(Cr - 128))                   1.403 * 2^14
 *     G = Y + DESCALE(-11698*(Cr - 128) - 5636*(Cb - 128)) -0.714, -0.344 * 2^14
 *     B = Y + DESCALE(29049*(Cb - 128))                   1.773 * 2^14
 *     each saturated to 0..255.
 */
#include "cpu.h"
#include "ycc.h"

uint8_t imgpu_cpu_rgb_to_y(uint8_t r, uint8_t g, uint8_t b)
{
    return imgpu__rgb_to_y(r, g, b);
}

void imgpu_cpu_rgb_to_ycbcr(uint8_t r, uint8_t g, uint8_t b, uint8_t *y, uint8_t *cb, uint8_t *cr)
{
    imgpu__rgb_to_ycbcr(r, g, b, y, cb, cr);
}

void imgpu_cpu_ycbcr_to_rgb(uint8_t y, uint8_t cb, uint8_t cr, uint8_t *r, uint8_t *g, uint8_t *b)
{
    imgpu__ycbcr_to_rgb(y, cb, cr, r, g, b);
}

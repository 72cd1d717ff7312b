/* color.c — full-range BT.601 RGB <-> YCbCr in OpenCV's 8-bit integer arithmetic.
 *
 * These are the reference formulas for luminance-mode equalization and for the `luma`
 * histogram; the CUDA kernels reimplement the same integer formulas and are held equal to
 * them by the tests. They reproduce OpenCV's cvtColor(COLOR_RGB2YCrCb) and
 * cvtColor(COLOR_YCrCb2RGB) on 8-bit data bit for bit (tests/cpu_ycc_exhaustive.py checks
 * every one of the 2^24 inputs in each direction against cv2).
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

enum {
    YCC_SHIFT = 14,
    R2Y = 4899, G2Y = 9617, B2Y = 1868, /* sum 16384: white stays 255 */
    Y2CR = 11682, Y2CB = 9241,
    CR2R = 22987, CR2G = -11698, CB2G = -5636, CB2B = 29049,
};

/* Round-half-up descale by 2^14 that floors for negative x without relying on the
 * implementation-defined >> of a negative int: bias by a multiple of 2^14 that makes the
 * operand non-negative (|x| < 2^23 for every input here), shift, remove the bias. */
static int descale14(int x)
{
    const int bias = 1 << 24; /* = 1024 << 14 */
    return (int)(((unsigned)(x + bias + (1 << (YCC_SHIFT - 1)))) >> YCC_SHIFT) - (bias >> YCC_SHIFT);
}

static uint8_t sat_u8(int v)
{
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

uint8_t imgpu_cpu_rgb_to_y(uint8_t r, uint8_t g, uint8_t b)
{
    return sat_u8(descale14(R2Y * r + G2Y * g + B2Y * b));
}

void imgpu_cpu_rgb_to_ycbcr(uint8_t r, uint8_t g, uint8_t b, uint8_t *y, uint8_t *cb, uint8_t *cr)
{
    int yy = descale14(R2Y * r + G2Y * g + B2Y * b); /* 0..255: the weights sum to 2^14 */
    *y = sat_u8(yy);
    *cr = sat_u8(descale14((r - yy) * Y2CR + (128 << YCC_SHIFT)));
    *cb = sat_u8(descale14((b - yy) * Y2CB + (128 << YCC_SHIFT)));
}

void imgpu_cpu_ycbcr_to_rgb(uint8_t y, uint8_t cb, uint8_t cr, uint8_t *r, uint8_t *g, uint8_t *b)
{
    int dcr = cr - 128, dcb = cb - 128;
    *r = sat_u8(y + descale14(CR2R * dcr));
    *g = sat_u8(y + descale14(CR2G * dcr + CB2G * dcb));
    *b = sat_u8(y + descale14(CB2B * dcb));
}

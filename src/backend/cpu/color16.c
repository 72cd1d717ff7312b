/* color16.c — full-range BT.601 RGB <-> YCbCr on 16-bit samples, OpenCV's cvtColor
 * (COLOR_RGB2YCrCb / COLOR_YCrCb2RGB) on CV_16U: the 8-bit formulas of color.c with the same
 * 14-bit coefficients, the chroma offset 32768 (half of 65536) in place of 128, and
 * saturation to 0..65535. Intermediates reach about 1.4 * 2^30, so they are computed in
 * 64 bits here (OpenCV's int arithmetic does not overflow either; the values are the same).
 * DESCALE(x) = floor((x + 2^13) / 2^14). */
#include "cpu.h"

enum {
    SHIFT = 14,
    R2Y = 4899, G2Y = 9617, B2Y = 1868,
    Y2CR = 11682, Y2CB = 9241,
    CR2R = 22987, CR2G = -11698, CB2G = -5636, CB2B = 29049,
    HALF = 32768,
};

static int64_t descale(int64_t x)
{
    const int64_t v = x + (1 << (SHIFT - 1));
    return v >= 0 ? v >> SHIFT : -((-v + (1 << SHIFT) - 1) >> SHIFT); /* floor division */
}

static uint16_t sat16(int64_t v) { return (uint16_t)(v < 0 ? 0 : v > 65535 ? 65535 : v); }

uint16_t imgpu_cpu_rgb16_to_y(uint16_t r, uint16_t g, uint16_t b)
{
    return sat16(descale((int64_t)R2Y * r + (int64_t)G2Y * g + (int64_t)B2Y * b));
}

void imgpu_cpu_rgb16_to_ycbcr(uint16_t r, uint16_t g, uint16_t b, uint16_t *y, uint16_t *cb, uint16_t *cr)
{
    const int64_t yy = descale((int64_t)R2Y * r + (int64_t)G2Y * g + (int64_t)B2Y * b);
    *y = sat16(yy);
    *cr = sat16(descale((r - yy) * Y2CR + ((int64_t)HALF << SHIFT)));
    *cb = sat16(descale((b - yy) * Y2CB + ((int64_t)HALF << SHIFT)));
}

void imgpu_cpu_ycbcr16_to_rgb(uint16_t y, uint16_t cb, uint16_t cr, uint16_t *r, uint16_t *g, uint16_t *b)
{
    const int64_t dcr = (int64_t)cr - HALF, dcb = (int64_t)cb - HALF;
    *r = sat16(y + descale(CR2R * dcr));
    *g = sat16(y + descale(CR2G * dcr + CB2G * dcb));
    *b = sat16(y + descale(CB2B * dcb));
}

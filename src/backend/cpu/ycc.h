/* ycc.h — full-range BT.601 RGB <-> YCbCr in OpenCV's 8-bit integer arithmetic, inline, for
 * the per-pixel loops of the CPU backend (equalize, local contrast, the luma histogram): color.c's
 * imgpu_cpu_rgb_to_y / _rgb_to_ycbcr / _ycbcr_to_rgb are these same functions behind a call.
 * The formulas and their proof against cv2 are in color.c's header. Internal to src/cpu/.
 */
#ifndef IMGPU_CPU_YCC_H
#define IMGPU_CPU_YCC_H

#include <stdint.h>

enum {
    IMGPU_YCC_SHIFT = 14,
    IMGPU_R2Y = 4899, IMGPU_G2Y = 9617, IMGPU_B2Y = 1868, /* sum 16384: white stays 255 */
    IMGPU_Y2CR = 11682, IMGPU_Y2CB = 9241,
    IMGPU_CR2R = 22987, IMGPU_CR2G = -11698, IMGPU_CB2G = -5636, IMGPU_CB2B = 29049,
};

/* Round-half-up descale by 2^14 that floors for negative x without relying on the
 * implementation-defined >> of a negative int: bias by a multiple of 2^14 that makes the
 * operand non-negative (|x| < 2^23 for every input here), shift, remove the bias. */
static inline int imgpu__descale14(int x)
{
    const int bias = 1 << 24; /* = 1024 << 14 */
    return (int)(((unsigned)(x + bias + (1 << (IMGPU_YCC_SHIFT - 1)))) >> IMGPU_YCC_SHIFT) -
           (bias >> IMGPU_YCC_SHIFT);
}

/* v clamped to 0..255, as two selects with a constant each (a max, then a min): written so,
 * GCC vectorizes them as vpmaxsd / vpminsd. The one nested select v < 0 ? 0 : v > 255 ? 255 : v
 * (the same values) became compares and blends in the luminance loops, 1.5x their time. */
static inline int imgpu__clamp_u8(int v)
{
    v = v > 0 ? v : 0;
    return v < 255 ? v : 255;
}

static inline uint8_t imgpu__sat_u8(int v)
{
    return (uint8_t)imgpu__clamp_u8(v);
}

static inline uint8_t imgpu__rgb_to_y(uint8_t r, uint8_t g, uint8_t b)
{
    return imgpu__sat_u8(imgpu__descale14(IMGPU_R2Y * r + IMGPU_G2Y * g + IMGPU_B2Y * b));
}

static inline void imgpu__rgb_to_ycbcr(uint8_t r, uint8_t g, uint8_t b, uint8_t *y, uint8_t *cb,
                                       uint8_t *cr)
{
    int yy = imgpu__descale14(IMGPU_R2Y * r + IMGPU_G2Y * g + IMGPU_B2Y * b); /* 0..255 */
    *y = imgpu__sat_u8(yy);
    *cr = imgpu__sat_u8(imgpu__descale14((r - yy) * IMGPU_Y2CR + (128 << IMGPU_YCC_SHIFT)));
    *cb = imgpu__sat_u8(imgpu__descale14((b - yy) * IMGPU_Y2CB + (128 << IMGPU_YCC_SHIFT)));
}

static inline void imgpu__ycbcr_to_rgb(uint8_t y, uint8_t cb, uint8_t cr, uint8_t *r, uint8_t *g,
                                       uint8_t *b)
{
    int dcr = cr - 128, dcb = cb - 128;
    *r = imgpu__sat_u8(y + imgpu__descale14(IMGPU_CR2R * dcr));
    *g = imgpu__sat_u8(y + imgpu__descale14(IMGPU_CR2G * dcr + IMGPU_CB2G * dcb));
    *b = imgpu__sat_u8(y + imgpu__descale14(IMGPU_CB2B * dcb));
}

/* imgpu__rgb_to_ycbcr(r, g, b) then imgpu__ycbcr_to_rgb(y2, Cb, Cr) into q[0..2], where yy is
 * the pixel's unsaturated Y (imgpu__descale14 of the Y sum, 0..255) and y2 its replacement:
 * equalize's and CLAHE's luminance modes. Plain integer statements, no table, so that a loop
 * of them vectorizes; the caller stores q (its own pointer, whose aliasing it knows).
 * The same values as those two functions, with Cr - 128 and Cb - 128 computed directly:
 * descale14(x + (128 << 14)) = descale14(x) + 128 (the added term is a whole multiple of 2^14,
 * so neither the rounding nor the floor changes), and sat_u8(v + 128) - 128 = v clamped to
 * -128..127. test_cpu_equalize checks it against OpenCV's formulas written out plainly, on
 * every colour and (through Y' = 0 and 255) every replacement Y. */
static inline void imgpu__ycc_replace_y(int r, int b, int yy, int y2, uint8_t q[3])
{
    int dcr = imgpu__descale14((r - yy) * IMGPU_Y2CR), dcb = imgpu__descale14((b - yy) * IMGPU_Y2CB);
    dcr = dcr > -128 ? dcr : -128;
    dcr = dcr < 127 ? dcr : 127;
    dcb = dcb > -128 ? dcb : -128;
    dcb = dcb < 127 ? dcb : 127;
    q[0] = imgpu__sat_u8(y2 + imgpu__descale14(IMGPU_CR2R * dcr));
    q[1] = imgpu__sat_u8(y2 + imgpu__descale14(IMGPU_CR2G * dcr + IMGPU_CB2G * dcb));
    q[2] = imgpu__sat_u8(y2 + imgpu__descale14(IMGPU_CB2B * dcb));
}

#endif

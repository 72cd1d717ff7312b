/* test_cpu_color.c — BT.601 helpers and the histogram. The bit-exact proof against OpenCV is
 * tests/opencv/cpu_ycc_exhaustive.py; here: known points, closeness to the real-valued BT.601
 * full-range formulas over all 2^24 inputs (--quick: every 17th red level, 2^20 of them, for
 * valgrind), and the histogram counting every channel and Y. */
#include "cpu/cpu.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void known_points(void)
{
    uint8_t y, cb, cr, r, g, b;
    for (int v = 0; v < 256; v++) { /* grays have no chroma and come back unchanged */
        imgpu_cpu_rgb_to_ycbcr((uint8_t)v, (uint8_t)v, (uint8_t)v, &y, &cb, &cr);
        CHECKF(y == v && cb == 128 && cr == 128, "gray %d -> %d %d %d", v, y, cb, cr);
        CHECK(imgpu_cpu_rgb_to_y((uint8_t)v, (uint8_t)v, (uint8_t)v) == v);
        imgpu_cpu_ycbcr_to_rgb((uint8_t)v, 128, 128, &r, &g, &b);
        CHECKF(r == v && g == v && b == v, "Y %d -> %d %d %d", v, r, g, b);
    }
    /* Pure red: Y = round(0.299 * 255) = 76; Cr = 128 + (255 - 76) * 0.713 = 255.6 -> 255. */
    imgpu_cpu_rgb_to_ycbcr(255, 0, 0, &y, &cb, &cr);
    CHECKF(y == 76 && cr == 255, "red -> %d %d %d", y, cb, cr);
    /* Pure blue: Y = round(0.114 * 255) = 29; Cb = 128 + (255 - 29) * 0.564 = 255.5 -> 255. */
    imgpu_cpu_rgb_to_ycbcr(0, 0, 255, &y, &cb, &cr);
    CHECKF(y == 29 && cb == 255, "blue -> %d %d %d", y, cb, cr);
    /* Saturation on the way back: Y = 255 with full Cr would exceed 255 in R. */
    imgpu_cpu_ycbcr_to_rgb(255, 128, 255, &r, &g, &b);
    CHECK(r == 255 && b == 255);
    /* Y = 0, Cb = Cr = 0: R and B go negative -> 0; G = (0.714 + 0.344) * 128 = 135.4 -> 135 */
    imgpu_cpu_ycbcr_to_rgb(0, 0, 0, &r, &g, &b);
    CHECKF(r == 0 && b == 0 && g == 135, "-> %d %d %d", r, g, b);
}

/* Every input within rounding of the real-valued formulas (a different computation). */
static void close_to_real_formulas(int r_step)
{
    int worst_y = 0, worst_c = 0, worst_back = 0;
    for (int r = 0; r < 256; r += r_step)
        for (int g = 0; g < 256; g++)
            for (int b = 0; b < 256; b++) {
                uint8_t y, cb, cr, rr, gg, bb;
                imgpu_cpu_rgb_to_ycbcr((uint8_t)r, (uint8_t)g, (uint8_t)b, &y, &cb, &cr);
                double fy = 0.299 * r + 0.587 * g + 0.114 * b;
                double fcr = 128 + (r - fy) * 0.713, fcb = 128 + (b - fy) * 0.564;
                /* 14-bit coefficients (sum 0.299+0.587+0.114 rounded per term): within 0.51 of the real Y */
                int dy = fabs(y - fy) > 0.51 ? 1 : 0;
                int dc = (int)fmax(fabs(cr - fmin(255, floor(fcr + 0.5))),
                                   fabs(cb - fmin(255, floor(fcb + 0.5))));
                if (dy > worst_y) worst_y = dy;
                if (dc > worst_c) worst_c = dc;
                if (y != imgpu_cpu_rgb_to_y((uint8_t)r, (uint8_t)g, (uint8_t)b))
                    worst_y = 99;
                /* the inverse of the same (y, cb, cr) in real arithmetic */
                imgpu_cpu_ycbcr_to_rgb(y, cb, cr, &rr, &gg, &bb);
                double fr = y + 1.403 * (cr - 128), fg = y - 0.714 * (cr - 128) - 0.344 * (cb - 128);
                double fb = y + 1.773 * (cb - 128);
                double e = fmax(fabs(rr - fmin(255, fmax(0, fr))),
                                fmax(fabs(gg - fmin(255, fmax(0, fg))), fabs(bb - fmin(255, fmax(0, fb)))));
                if ((int)ceil(e - 0.5) > worst_back) worst_back = (int)ceil(e - 0.5);
            }
    CHECKF(worst_y == 0, "Y off the rounded real value by %d", worst_y);
    CHECKF(worst_c <= 1, "chroma off the rounded real value by %d", worst_c);
    CHECKF(worst_back <= 1, "inverse off the real value by %d", worst_back);
}

static void histogram(void)
{
    /* 3x2 RGBA with a padded stride: the padding bytes must not be counted. */
    enum { W = 3, H = 2, C = 4, STRIDE = W * C + 5 };
    uint8_t buf[STRIDE * H];
    memset(buf, 77, sizeof buf);
    const uint8_t px[H][W][C] = {{{255, 0, 0, 255}, {0, 0, 255, 0}, {10, 10, 10, 255}},
                                 {{10, 10, 10, 128}, {0, 255, 0, 255}, {255, 255, 255, 0}}};
    for (int y = 0; y < H; y++)
        memcpy(buf + y * STRIDE, px[y], W * C);
    imgpu_image im = {W, H, C, 8, STRIDE, buf, 0};
    imgpu_histogram h;
    memset(&h, 0xAB, sizeof h);
    CHECK(imgpu_cpu_histogram(&im, &h) == 0);
    CHECK(h.channels == 4 && h.has_luma == 1);
    CHECK(h.bins[0][255] == 2 && h.bins[0][0] == 2 && h.bins[0][10] == 2 && h.bins[0][77] == 0);
    CHECK(h.bins[1][0] == 2 && h.bins[1][255] == 2 && h.bins[1][10] == 2);
    CHECK(h.bins[3][255] == 3 && h.bins[3][0] == 2 && h.bins[3][128] == 1);
    /* Y: red 76, blue 29, gray 10 twice, green round(0.587*255) = 150, white 255 */
    CHECK(h.luma[76] == 1 && h.luma[29] == 1 && h.luma[10] == 2 && h.luma[150] == 1 &&
          h.luma[255] == 1);
    for (int k = 0; k < 4; k++) {
        uint32_t total = 0, luma = 0;
        for (int v = 0; v < 256; v++) {
            total += h.bins[k][v];
            luma += h.luma[v];
        }
        CHECK(total == W * H && luma == W * H);
    }
    /* gray+alpha: no luma, bins of absent channels zero */
    uint8_t ga[4] = {5, 200, 5, 100};
    imgpu_image g2 = {2, 1, 2, 8, 4, ga, 0};
    CHECK(imgpu_cpu_histogram(&g2, &h) == 0);
    CHECK(h.channels == 2 && h.has_luma == 0 && h.bins[0][5] == 2 && h.bins[1][200] == 1 &&
          h.bins[1][100] == 1 && h.bins[2][0] == 0 && h.luma[0] == 0);
    /* 16-bit is refused with a message, `out` untouched */
    imgpu_histogram before = h;
    imgpu_image im16 = {1, 1, 1, 16, 2, ga, 0};
    CHECK(imgpu_cpu_histogram(&im16, &h) == -1);
    CHECK(memcmp(&before, &h, sizeof h) == 0);
}

int main(int argc, char **argv)
{
    /* --quick (tests/robust/robust_valgrind.sh): 0, 17, ..., 255 for red, every green and blue */
    const int quick = argc > 1 && !strcmp(argv[1], "--quick");
    known_points();
    close_to_real_formulas(quick ? 17 : 1);
    histogram();
    TEST_MAIN_END();
}

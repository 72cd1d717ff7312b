/* plot.c — renders an imgpu_histogram as a bar chart image (see plot.h for the layout).
 * Plain pixel drawing on an RGB canvas: rectangles, and a 3x5 bitmap font just big enough
 * for the channel names and tick labels. */
#include "plot.h"
#include "error.h"

#include <string.h>

enum {
    BAR_W = 2,                   /* pixels per bin: 256 bins -> 512 px of plot */
    PLOT_W = 256 * BAR_W,
    PLOT_H = 120,
    MARGIN_L = 44,               /* room for "GRAY" at font scale 2 */
    MARGIN_R = 14,               /* half of "255" hangs past the last bar */
    MARGIN_T = 10,
    MARGIN_B = 24,               /* tick marks + tick labels */
    PANEL_H = MARGIN_T + PLOT_H + MARGIN_B,
    CANVAS_W = MARGIN_L + PLOT_W + MARGIN_R,
    FONT_SCALE = 2,
};

typedef struct rgb { unsigned char r, g, b; } rgb;

static void fill_rect(imgpu_image *im, int x0, int y0, int w, int h, rgb c)
{
    /* Clip here so callers can draw glyphs hanging past an edge without checks. */
    int x1 = x0 + w, y1 = y0 + h;
    if (x0 < 0) x0 = 0;
    if (y0 < 0) y0 = 0;
    if (x1 > im->width) x1 = im->width;
    if (y1 > im->height) y1 = im->height;
    for (int y = y0; y < y1; y++) {
        unsigned char *p = imgpu_image_row(im, y) + (size_t)x0 * 3;
        for (int x = x0; x < x1; x++, p += 3) {
            p[0] = c.r;
            p[1] = c.g;
            p[2] = c.b;
        }
    }
}

/* 3x5 glyphs, one byte per row, bit 2 = leftmost column. */
static const unsigned char *glyph(char ch)
{
    static const unsigned char digits[10][5] = {
        {7, 5, 5, 5, 7}, {2, 6, 2, 2, 7}, {7, 1, 7, 4, 7}, {7, 1, 7, 1, 7}, {5, 5, 7, 1, 1},
        {7, 4, 7, 1, 7}, {7, 4, 7, 5, 7}, {7, 1, 1, 1, 1}, {7, 5, 7, 5, 7}, {7, 5, 7, 1, 7},
    };
    static const unsigned char A[5] = {2, 5, 7, 5, 5}, B[5] = {6, 5, 6, 5, 6},
                               G[5] = {3, 4, 5, 5, 3}, R[5] = {6, 5, 6, 5, 5},
                               Y[5] = {5, 5, 2, 2, 2};
    if (ch >= '0' && ch <= '9')
        return digits[ch - '0'];
    switch (ch) {
    case 'A': return A;
    case 'B': return B;
    case 'G': return G;
    case 'R': return R;
    case 'Y': return Y;
    default: return NULL;
    }
}

static int text_width(const char *s)
{
    int n = (int)strlen(s);
    return n ? (n * 4 - 1) * FONT_SCALE : 0;
}

static void draw_text(imgpu_image *im, int x, int y, const char *s, rgb c)
{
    for (; *s; s++, x += 4 * FONT_SCALE) {
        const unsigned char *g = glyph(*s);
        if (!g)
            continue;
        for (int row = 0; row < 5; row++)
            for (int col = 0; col < 3; col++)
                if (g[row] & (4 >> col))
                    fill_rect(im, x + col * FONT_SCALE, y + row * FONT_SCALE, FONT_SCALE,
                              FONT_SCALE, c);
    }
}

static void draw_panel(imgpu_image *im, int top, const uint32_t bins[256], const char *label,
                       rgb color)
{
    const rgb axis = {64, 64, 64}, plot_bg = {244, 244, 244}, ink = {32, 32, 32};
    const int x0 = MARGIN_L, base = top + MARGIN_T + PLOT_H; /* first row below the bars */

    fill_rect(im, x0, top + MARGIN_T, PLOT_W, PLOT_H, plot_bg);

    uint32_t maxc = 0;
    for (int v = 0; v < 256; v++)
        if (bins[v] > maxc)
            maxc = bins[v];
    for (int v = 0; maxc && v < 256; v++) {
        if (!bins[v])
            continue;
        /* 64-bit product: a 2^28-pixel bin times PLOT_H overflows 32 bits. Round to nearest,
         * but never to 0: a bin that holds pixels must stay visible next to a huge spike. */
        int h = (int)(((uint64_t)bins[v] * PLOT_H + maxc / 2) / maxc);
        if (h < 1)
            h = 1;
        fill_rect(im, x0 + v * BAR_W, base - h, BAR_W, h, color);
    }

    /* Axes: y along the left edge of the plot, x just under the bars. */
    fill_rect(im, x0 - 1, top + MARGIN_T, 1, PLOT_H + 1, axis);
    fill_rect(im, x0 - 1, base, PLOT_W + 1, 1, axis);
    static const int ticks[] = {0, 64, 128, 192, 255};
    for (size_t i = 0; i < sizeof ticks / sizeof ticks[0]; i++) {
        char buf[4];
        int v = ticks[i], cx = x0 + v * BAR_W + BAR_W / 2;
        fill_rect(im, cx, base + 1, 1, 4, axis);
        buf[0] = (char)('0' + v / 100);
        buf[1] = (char)('0' + v / 10 % 10);
        buf[2] = (char)('0' + v % 10);
        buf[3] = '\0';
        const char *s = v >= 100 ? buf : v >= 10 ? buf + 1 : buf + 2;
        draw_text(im, cx - text_width(s) / 2, base + 7, s, ink);
    }

    draw_text(im, (MARGIN_L - text_width(label)) / 2, top + MARGIN_T + PLOT_H / 2 - 5 * FONT_SCALE / 2,
              label, color.r + color.g + color.b > 600 ? ink : color);
}

imgpu_image *imgpu__histogram_plot(const imgpu_histogram *h)
{
    const uint32_t *bins[6];
    const char *labels[6];
    rgb colors[6];
    int n = 0;

    if (h->channels < 1 || h->channels > 4) {
        imgpu_error("histogram plot: invalid channel count %d", h->channels);
        return NULL;
    }
    const int color = h->channels >= 3, alpha = h->channels == 2 || h->channels == 4;
    if (color) {
        static const char *names[3] = {"R", "G", "B"};
        static const rgb cols[3] = {{210, 40, 40}, {40, 150, 40}, {40, 80, 210}};
        for (int c = 0; c < 3; c++) {
            bins[n] = h->bins[c];
            labels[n] = names[c];
            colors[n++] = cols[c];
        }
    } else {
        bins[n] = h->bins[0];
        labels[n] = "GRAY";
        colors[n++] = (rgb){80, 80, 80};
    }
    if (alpha) {
        bins[n] = h->bins[h->channels - 1];
        labels[n] = "A";
        colors[n++] = (rgb){150, 150, 150};
    }
    if (color && h->has_luma) {
        bins[n] = h->luma;
        labels[n] = "Y";
        colors[n++] = (rgb){40, 40, 40};
    }

    imgpu_image *im = imgpu_image_new(CANVAS_W, n * PANEL_H, 3, 8);
    if (!im)
        return NULL;
    fill_rect(im, 0, 0, im->width, im->height, (rgb){255, 255, 255});
    for (int i = 0; i < n; i++)
        draw_panel(im, i * PANEL_H, bins[i], labels[i], colors[i]);
    return im;
}

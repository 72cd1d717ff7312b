/* text.c — the viewer's on-screen help in the shared 3x5 pixel font (src/font.h: upper case,
 * digits, common punctuation; lower case is drawn as upper case), rendered once into an RGBA
 * image that the display draws as an overlay. */
#include "viewer.h"
#include "error.h"
#include "font.h"

#include <string.h>

imgpu_image *vw__text_image(const char *text, int scale)
{
    enum { PAD = 8 };
    int lines = 1, cols = 0, col = 0;
    for (const char *p = text; *p; p++) {
        if (*p == '\n') {
            lines++;
            col = 0;
        } else if (++col > cols) {
            cols = col;
        }
    }
    const int cw = 4 * scale, lh = 7 * scale;
    imgpu_image *im = imgpu_image_new(cols * cw + 2 * PAD, lines * lh + 2 * PAD, 4, 8);
    if (!im)
        return NULL;
    for (int y = 0; y < im->height; y++)
        for (int x = 0; x < im->width; x++)
            imgpu_image_row(im, y)[x * 4 + 3] = 190; /* translucent black behind the text */
    int x0 = PAD, y0 = PAD;
    for (const char *p = text; *p; p++) {
        if (*p == '\n') {
            x0 = PAD;
            y0 += lh;
            continue;
        }
        const char *g = imgpu__font_glyph((unsigned char)*p);
        for (int r = 0; r < 5; r++)
            for (int c = 0; c < 3; c++)
                if ((g[r] - '0') & (4 >> c))
                    for (int dy = 0; dy < scale; dy++) {
                        unsigned char *px = imgpu_image_row(im, y0 + r * scale + dy) + (size_t)(x0 + c * scale) * 4;
                        for (int dx = 0; dx < scale; dx++, px += 4)
                            px[0] = px[1] = px[2] = px[3] = 255;
                    }
        x0 += cw;
    }
    return im;
}

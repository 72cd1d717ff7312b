/* text.c — the viewer's on-screen text in the shared 3x5 pixel font (src/core/font.h: upper case,
 * digits, common punctuation; lower case is drawn as upper case): the help, the notes and the
 * histogram overlay's labels, each rendered once into an RGBA image that the display draws as
 * an overlay. */
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

/* Glyph ink for the label colour codes ('w' white, 'r' 'g' 'b' the overlay's channel curves,
 * 'y' the gray CDF curve): the same colours as display.c's overlay shader, as bytes. */
static void label_rgb(char code, unsigned char rgb[3])
{
    static const struct { char c; unsigned char v[3]; } ink[] = {
        {'r', {255, 89, 89}}, {'g', {89, 255, 89}}, {'b', {115, 140, 255}}, {'y', {255, 230, 51}},
    };
    rgb[0] = rgb[1] = rgb[2] = 255;
    for (size_t i = 0; i < sizeof ink / sizeof ink[0]; i++)
        if (ink[i].c == code)
            memcpy(rgb, ink[i].v, 3);
}

imgpu_image *vw__label_image(const char *text, const char *colors, int scale, int pad)
{
    const int n = (int)strlen(text), cw = 4 * scale;
    if (n == 0 || strchr(text, '\n') || (colors && strlen(colors) != (size_t)n)) {
        imgpu_error("viewer label '%s': one non-empty line, one colour code per character", text);
        return NULL;
    }
    /* tight: no gap after the last glyph, five rows of glyph */
    imgpu_image *im = imgpu_image_new(n * cw - scale + 2 * pad, 5 * scale + 2 * pad, 4, 8);
    if (!im)
        return NULL;
    for (int y = 0; y < im->height; y++)
        for (int x = 0; x < im->width; x++)
            imgpu_image_row(im, y)[x * 4 + 3] = 190; /* translucent black behind the text */
    for (int i = 0; i < n; i++) {
        unsigned char rgb[3];
        label_rgb(colors ? colors[i] : 'w', rgb);
        const char *g = imgpu__font_glyph((unsigned char)text[i]);
        for (int r = 0; r < 5; r++)
            for (int c = 0; c < 3; c++)
                if ((g[r] - '0') & (4 >> c))
                    for (int dy = 0; dy < scale; dy++) {
                        unsigned char *px =
                            imgpu_image_row(im, pad + r * scale + dy) + (size_t)(pad + i * cw + c * scale) * 4;
                        for (int dx = 0; dx < scale; dx++, px += 4) {
                            memcpy(px, rgb, 3);
                            px[3] = 255;
                        }
                    }
    }
    return im;
}

/* text.c — a 3x5 pixel font (upper case, digits, common punctuation; lower case is drawn as
 * upper case) for the viewer's on-screen help, rendered once into an RGBA image that the
 * display draws as an overlay. Each glyph is five rows of three bits, written as the digits
 * 0..7 of a string (4 = left column, 1 = right column), so the table can be read by eye. */
#include "viewer.h"
#include "error.h"

#include <ctype.h>
#include <string.h>

static const char *glyph(int ch)
{
    static const char *az[26] = {
        "25755", "65656", "34443", "65556", "74647", "74644", "34553", "55755", "72227",
        "11152", "55655", "44447", "57755", "75555", "25552", "65644", "25563", "65655",
        "34216", "72222", "55557", "55552", "55775", "55255", "55222", "71247",
    };
    static const char *digits[10] = {"75557", "26227", "61247", "61216", "55711",
                                     "74616", "34757", "71122", "75757", "75711"};
    static const struct { char c; const char *g; } punct[] = {
        {'.', "00002"}, {',', "00024"}, {':', "02020"}, {';', "02024"}, {'/', "11244"},
        {'?', "61202"}, {'+', "02720"}, {'-', "00700"}, {'(', "24442"}, {')', "42224"},
        {'<', "12421"}, {'>', "42124"}, {'=', "07070"}, {'\'', "22000"}, {'!', "22202"},
        {'*', "05250"}, {'_', "00007"}, {'[', "64446"}, {']', "31113"}, {'|', "22222"},
        {'%', "51245"}, {'#', "57575"},
    };
    ch = toupper(ch);
    if (ch >= 'A' && ch <= 'Z')
        return az[ch - 'A'];
    if (ch >= '0' && ch <= '9')
        return digits[ch - '0'];
    for (size_t i = 0; i < sizeof punct / sizeof punct[0]; i++)
        if (punct[i].c == ch)
            return punct[i].g;
    return "00000";
}

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
        const char *g = glyph((unsigned char)*p);
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

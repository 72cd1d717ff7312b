/* font.c — the 3x5 bitmap font of font.h: one table for every place that draws text. */
#include "font.h"

#include <ctype.h>
#include <stddef.h>

const char *imgpu__font_glyph(int ch)
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
    /* toupper of a value outside unsigned char (a plain char with the top bit set) is
     * undefined: anything but ASCII is blank. */
    if (ch < 0 || ch > 127)
        return "00000";
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

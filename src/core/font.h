/* font.h — the one built-in bitmap font: 3x5 pixel glyphs for upper case letters, digits and
 * common punctuation (lower case is drawn as upper case; anything else is blank). Shared by
 * the histogram plot (src/cli/plot.c) and the viewer's on-screen help (src/viewer/text.c).
 *
 * A glyph is five rows of three bits, written as the digits '0'..'7' of a 5-character string:
 * 4 = left column, 2 = middle, 1 = right, so the table can be read by eye. Each glyph cell
 * is 3 pixels wide; callers advance 4 pixels per character (one blank column between). */
#ifndef IMGPU_FONT_H
#define IMGPU_FONT_H

#ifdef __cplusplus
extern "C" {
#endif

/* The glyph of ch (upper-cased), or the blank glyph "00000"; never NULL. */
const char *imgpu__font_glyph(int ch);

#ifdef __cplusplus
}
#endif
#endif

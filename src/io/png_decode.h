/* png_decode.h — the fast path of PNG decoding, for the files imgpu writes and most others:
 * 8 bits per sample, gray / gray+alpha / RGB / RGBA, not interlaced, no tRNS chunk. The zlib
 * stream is inflated by libdeflate in one call (about twice as fast as zlib's or stb's inflate
 * on photographs) straight into one buffer, whose rows are then unfiltered in place.
 *
 * Contract: returns the pixels (malloc(); rows of w*c bytes, tight) only when the file is one
 * of those and every check passes: a well-formed chunk sequence ending in IEND, consecutive
 * IDAT chunks, a zlib stream whose Adler-32 matches and that inflates to exactly the image's
 * filtered rows, filter types 0..4. Anything else returns NULL without recording an error, and
 * the caller decodes the file with stb (io.c), which then reports what is wrong with it. So
 * this path changes speed only: it never accepts a file stb would refuse for its pixels, and
 * its pixels equal stb's (tests/unit/png_decode.c checks both). Allocations stay within `budget`.
 */
#ifndef IMGPU_PNG_DECODE_H
#define IMGPU_PNG_DECODE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

unsigned char *imgpu__png_decode_fast(const unsigned char *b, size_t len, size_t budget, int *w, int *h,
                                      int *c);

/* Tests: 0 turns the fast path off in the PNG codec's loader (codec_png.c) (every PNG goes to stb), 1 on (default). */
void imgpu__png_decode_fast_enable(int on);
int imgpu__png_decode_fast_enabled(void);

#ifdef __cplusplus
}
#endif
#endif

/* jpeg_scan.h — does a baseline JPEG's scan hold every MCU? (issue 25)
 *
 * nvJPEG's hardware decoder reports success on a JPEG whose entropy-coded scan is cut short
 * (an EOI after it), and fills the missing MCUs from whatever its bitstream buffer holds next:
 * another file's data. libjpeg-turbo refuses such a file ("premature end of data segment").
 * Before a file goes to nvJPEG, its scan is walked here: every Huffman code is read and skipped,
 * nothing is dequantized or transformed, so it costs a fraction of a decode.
 *
 * The rule is libjpeg-turbo's: a scan is short when decoding its MCUs needs bits past the data
 * (a marker or the end of the file comes first). Anything but WHOLE is for libjpeg-turbo to
 * decode or refuse. Restart intervals are walked one by one (each must end at its RSTn marker, in order).
 */
#ifndef IMGPU_JPEG_SCAN_H
#define IMGPU_JPEG_SCAN_H

#include <stddef.h>

enum {
    IMGPU_SCAN_WHOLE = 0,   /* one baseline scan of every component, each MCU inside the data, then EOI */
    IMGPU_SCAN_BAD = 1,     /* short (a marker or the end of the data before the last MCU), a bad
                             * table, or a restart marker missing or out of order */
    IMGPU_SCAN_OTHER = 2,   /* not judged: not baseline/extended Huffman, several scans, no EOI after the
                             * scan, or a structure this walker does not take (the caller decides) */
    IMGPU_SCAN_IRREGULAR = 3, /* data the standard does not allow but libjpeg-turbo may decode without a
                             * word: a code no entry of its table holds (its fast path reads it as 0,
                             * its slow path warns), or 0xFF fill bytes before a stuffed FF 00 inside
                             * the data. No file for a decoder whose handling of it is unknown. */
};

/* Walks the JPEG in b[0..n). Reads nothing outside it, allocates nothing (its tables are on the
 * stack), and takes time linear in n: it stops at the first MCU that reads past the data. */
int imgpu__jpeg_scan_check(const unsigned char *b, size_t n);

/* The same, by the walk chosen: how 0 as imgpu__jpeg_scan_check (the many-code walk where the
 * scan holds 128 KiB or more, the reference walk below that), 1 the reference walk (one or two
 * codes a lookup: the walk before the many-code one, which builds its tables faster), 2 the
 * many-code walk. The same verdict on every input: tests and the fuzz target hold them to it. */
int imgpu__jpeg_scan_walk(const unsigned char *b, size_t n, int how);

#endif

/* png_parallel.h — a PNG encoder that spreads one image over several threads.
 *
 * Contract: 8-bit images of 1..4 channels (gray, gray+alpha, RGB, RGBA), rows top to bottom
 * `stride` bytes apart. The rows are cut into strips of a fixed number of rows (the cut depends
 * only on the image's size, never on the thread count, so the output bytes do not change with
 * `threads`). Each strip is filtered (per row, the filter with the smallest sum of absolute
 * values, as libpng and stb do) and deflated on its own thread into raw deflate data that ends
 * on a full flush (byte-aligned, no back-reference into the next strip), the last with the
 * final block. The strips are joined into one standard zlib stream: the 2-byte header, the
 * strips in order, and the Adler-32 of all filtered bytes combined from the strips' own with
 * zlib's adler32_combine. Each strip becomes one IDAT chunk whose CRC the strip's thread
 * computes (crc32_combine joins the header and trailer bytes of the first and last chunk).
 * The result is an ordinary PNG any decoder reads.
 */
#ifndef IMGPU_PNG_PARALLEL_H
#define IMGPU_PNG_PARALLEL_H

#include <stddef.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The PNG Paeth predictor (PNG spec, filter type 4) of left a, above b and upper-left c: the
 * one definition for the encoder's filters here and the decoder's unfilter (png_decode.c). */
static inline int imgpu__png_paeth(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* The zlib strategy for a compression level: level 1 (imgpu's default) is zlib's run-length
 * strategy (Z_RLE, also OpenCV's default for PNG): on filtered photographs it is faster than
 * LZ77 at level 1 and usually smaller than LZ77 at any level, because a photo's filtered bytes
 * hold few long repeats and short matches cost more than Huffman-coded literals. Levels 2..9
 * are zlib's default strategy (LZ77 + Huffman), level 0 stores. */
int imgpu__png_strategy(int level);

/* compress2() with imgpu__png_strategy(level): a zlib stream of src (len bytes) into dst, whose
 * capacity *dst_len must be at least compressBound(len); *dst_len becomes the stream's length.
 * Returns a zlib status (Z_OK on success). */
int imgpu__png_compress(unsigned char *dst, unsigned long *dst_len, const unsigned char *src,
                        unsigned long len, int level);

/* Rows per strip for an image with rows of `row_bytes` bytes (about 1 MiB of pixels). */
int imgpu__png_strip_rows(size_t row_bytes);

/* Encode into a malloc() buffer (*out, *out_len; the caller frees *out). level: zlib 0..9
 * (with imgpu__png_strategy(level));
 * threads: the most threads to use (the caller's counts as one; <= 1 encodes on the caller's
 * thread alone). Returns 0, or -1 with *why set to a static reason (no error recorded). */
int imgpu__png_encode_parallel(const unsigned char *pixels, int w, int h, int c, size_t stride,
                               int level, int threads, unsigned char **out, size_t *out_len,
                               const char **why);

#ifdef __cplusplus
}
#endif
#endif

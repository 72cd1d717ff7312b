/* fuzz_tiff.c — libFuzzer target: the TIFF codec (src/io/codec_tiff.c, libtiff over memory).
 * Every input is loaded through imgpu_image_load_memory under small limits (2^22 pixels, a 2 s
 * decode limit, as fuzz_decode.c) at page 0 and page 1, and the codec's metadata reader runs
 * on it at both pages (on any bytes, not only on files whose scan passed: damaged metadata must
 * be skipped, never trusted; the EXIF it builds must come out of imgpu_exif_rebuild unchanged).
 * Page 0, when it decodes, is checked for the invariants the rest
 * of imgpu relies on, then encoded again as TIFF with its metadata, with deflate and with one
 * other lossless compression picked from the input's size, and each encoding loaded back: it
 * must decode to exactly the same pixels (and an 8-bit image also encodes as JPEG-in-TIFF and
 * loads back at the same size).
 */
#include "codec.h"
#include "error.h"
#include "exif.h"
#include "io.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check_image(const imgpu_image *im, const imgpu_load_options *o)
{
    if (im->width < 1 || im->height < 1 || im->channels < 1 || im->channels > 4 ||
        (im->depth != 8 && im->depth != 16) ||
        (uint64_t)im->width * (uint64_t)im->height > o->max_pixels ||
        im->stride < (size_t)im->width * (size_t)im->channels * (size_t)(im->depth / 8) ||
        !im->data)
        abort();
    unsigned sum = 0;   /* touch every byte: short or uninitialized buffers show under ASan/MSan */
    const size_t row = (size_t)im->width * (size_t)im->channels * (size_t)(im->depth / 8);
    for (int y = 0; y < im->height; y++)
        for (size_t x = 0; x < row; x++)
            sum += imgpu_image_row(im, y)[x];
    volatile unsigned sink = sum;
    (void)sink;
}

static int same_pixels(const imgpu_image *a, const imgpu_image *b)
{
    if (a->width != b->width || a->height != b->height || a->channels != b->channels ||
        a->depth != b->depth)
        return 0;
    const size_t row = (size_t)a->width * (size_t)a->channels * (size_t)(a->depth / 8);
    for (int y = 0; y < a->height; y++)
        if (memcmp(imgpu_image_row(a, y), imgpu_image_row(b, y), row) != 0)
            return 0;
    return 1;
}

/* Encode im as TIFF with compression c, load it back; lossless: the same pixels. */
static void round_trip(const imgpu_image *im, imgpu_compression c, const imgpu_meta *m,
                       const imgpu_load_options *o, int lossless)
{
    imgpu_save_options so;
    memset(&so, 0, sizeof so);
    so.png_level = -1;
    so.compression = c;
    so.meta = m;
    unsigned char *buf = NULL;
    size_t len = 0;
    if (imgpu_image_encode(im, IMGPU_FORMAT_TIFF, &so, &buf, &len) < 0) {
        if (!imgpu_error_message()[0])
            abort();   /* a failure must always say why */
        imgpu_error_clear();
        return;
    }
    imgpu_image *back = imgpu_image_load_memory(buf, len, "fuzz-output", o);
    if (!back)
        abort();   /* what imgpu wrote, it must read */
    if (lossless ? !same_pixels(im, back)
                 : back->width != im->width || back->height != im->height)
        abort();
    imgpu_image_free(back);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const imgpu__codec *k = imgpu__codec_of(IMGPU_FORMAT_TIFF);
    imgpu_load_options opts;
    memset(&opts, 0, sizeof opts);
    opts.max_pixels = (uint64_t)1 << 22;
    opts.max_decode_ms = 2000;
    for (int page = 0; page < 2; page++) {
        opts.page = page;
        imgpu_error_clear();
        imgpu_image *im = imgpu_image_load_memory(data, size, "fuzz-input", &opts);
        imgpu_meta *m = calloc(1, sizeof *m);
        if (!m)
            abort();
        m->page = page;
        if (k->read_meta(data, size, m) < 0) {
            imgpu_meta_free(m);
            imgpu_image_free(im);
            return 0;   /* out of memory only */
        }
        if (m->orientation < 0 || m->orientation > 8 || (m->icc && !m->icc_len) ||
            (m->xmp && !m->xmp_len))
            abort();
        if (m->exif) {
            /* the EXIF read from a TIFF is rebuilt already (every offset its own): rebuilding
             * it again changes nothing */
            unsigned char *x = NULL;
            size_t xn = 0;
            if (!m->exif_len || imgpu_exif_rebuild(m->exif, m->exif_len, 0, NULL, 0, &x, &xn) == -1)
                abort();   /* (memory is plenty for a blob the reader just made) */
            if (xn != m->exif_len || memcmp(x, m->exif, xn))
                abort();
            free(x);
        }
        if (!im) {
            if (!imgpu_error_message()[0])
                abort();
        } else {
            check_image(im, &opts);
            /* the load turned the pixels upright: what is written says Orientation 1 */
            m->oriented = m->orientation >= 2;
            if (page == 0 && (uint64_t)im->width * (uint64_t)im->height <= ((uint64_t)1 << 18)) {
                static const imgpu_compression other[] = {
                    IMGPU_COMPRESSION_NONE, IMGPU_COMPRESSION_LZW, IMGPU_COMPRESSION_PACKBITS,
                    IMGPU_COMPRESSION_ZSTD, IMGPU_COMPRESSION_LZMA,
                };
                opts.page = 0;
                round_trip(im, IMGPU_COMPRESSION_DEFLATE, m, &opts, 1);
                round_trip(im, other[size % 5], m, &opts, 1);
                if (im->depth == 8 && size % 3 == 0)
                    round_trip(im, IMGPU_COMPRESSION_JPEG, m, &opts, 0);
            }
        }
        imgpu_meta_free(m);
        imgpu_image_free(im);
    }
    imgpu_error_clear();
    return 0;
}

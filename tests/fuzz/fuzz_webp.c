/* fuzz_webp.c — libFuzzer target: the WebP codec (src/io/codec_webp.c) on any bytes that sniff
 * as WebP ("RIFF" size "WEBP"; other formats are fuzz_decode's). The input is loaded through
 * the public load path (imgpu_image_load_memory: sniff, the RIFF scan, the limits, the
 * demuxer and libwebp's incremental decoder) under small limits (2^22 pixels,
 * 2 s of decoding, as fuzz_decode.c), and the codec's metadata reader runs on every input
 * whose scan passes (its contract). An input that decodes is encoded again, lossy at a
 * quality taken from the input and lossless, with the metadata that was read, and both
 * outputs are loaded back, checking what must hold:
 *   - a failed load always says why; a decoded image is 3 or 4 channels of 8 bits (WebP has
 *     no gray and no 16 bits) and every byte is readable;
 *   - the encodes succeed, their outputs load back at the same size and channel count (or as
 *     RGB where the alpha was 255 everywhere: libwebp then stores none), and the lossless one
 *     gives back exactly the pixels;
 *   - the metadata read back from the re-encoded file is the metadata written.
 * The encode is skipped for images of more than 2^16 pixels: libwebp's encoder under ASan
 * would make every such input slow, and the decode of the big ones is what is at stake; and
 * for a side of 16384, which VP8L can hold and libwebp decodes but cannot encode.
 */
#include "codec.h"
#include "error.h"
#include "io.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WEBP_SIDE_MAX 16383   /* what imgpu writes (codec_webp.c's max_side) */

static imgpu_image *load(const unsigned char *b, size_t n)
{
    imgpu_load_options opts = { 0 };
    opts.max_pixels = (uint64_t)1 << 22;
    opts.max_decode_ms = 2000;
    opts.no_auto_orient = 1;   /* the pixels as stored: the lossless round trip compares them */
    imgpu_image *im = imgpu_image_load_memory(b, n, "fuzz-input", &opts);
    if (!im && !imgpu_error_message()[0])
        abort();   /* a failure must always say why */
    return im;
}

static void meta_clear(imgpu_meta *m)
{
    free(m->icc);
    free(m->exif);
    free(m->xmp);
    free(m->text);   /* WebP has no text chunks: never filled */
}

static void same_block(const unsigned char *a, size_t an, const unsigned char *b, size_t bn)
{
    if (an != bn || (an && memcmp(a, b, an)))
        abort();
}

/* the metadata of b[0..n) where it is a WebP whose scan passes (the contract of read_meta),
 * else 0 fields */
static void read_meta(const unsigned char *b, size_t n, imgpu_meta *m)
{
    memset(m, 0, sizeof *m);
    imgpu__scan s = { 0 };
    if (imgpu__codec_webp.sniff(b, n) && imgpu__codec_webp.scan(b, n, &s) == NULL && imgpu__codec_webp.read_meta(b, n, m) < 0)
        abort();   /* only out of memory may fail it */
}

static int opaque(const imgpu_image *im)
{
    if (im->channels != 4)
        return 0;
    for (int y = 0; y < im->height; y++)
        for (int x = 0; x < im->width; x++)
            if (imgpu_image_row(im, y)[(size_t)x * 4 + 3] != 255)
                return 0;
    return 1;
}

static void round_trip(const imgpu_image *im, const imgpu_meta *meta, int lossless, int quality)
{
    imgpu_save_options so = { 0 };
    so.png_level = -1;
    so.quality = quality;
    so.lossless = lossless;
    so.meta = meta;
    unsigned char *out = NULL;
    size_t len = 0;
    if (imgpu_image_encode(im, IMGPU_FORMAT_WEBP, &so, &out, &len) < 0) {
        fprintf(stderr, "fuzz_webp: encode failed: %s\n", imgpu_error_message());
        abort();
    }
    imgpu_image *back = load(out, len);
    if (!back)
        fprintf(stderr, "fuzz_webp: the re-encoded file does not load: %s\n",
                imgpu_error_message());
    /* libwebp stores no alpha that is 255 everywhere: such an image loads back as RGB */
    if (!back || back->width != im->width || back->height != im->height || back->depth != 8 ||
        (back->channels != im->channels && (back->channels != 3 || !opaque(im))))
        abort();
    if (lossless)
        for (int y = 0; y < im->height; y++) {
            const unsigned char *a = imgpu_image_row(im, y), *b = imgpu_image_row(back, y);
            for (int x = 0; x < im->width; x++)
                if (memcmp(a + (size_t)x * im->channels, b + (size_t)x * back->channels,
                           (size_t)back->channels))
                    abort();
        }
    imgpu_meta m2;
    read_meta(out, len, &m2);
    same_block(meta->icc, meta->icc_len, m2.icc, m2.icc_len);
    same_block(meta->exif, meta->exif_len, m2.exif, m2.exif_len);
    same_block(meta->xmp, meta->xmp_len, m2.xmp, m2.xmp_len);
    meta_clear(&m2);
    imgpu_image_free(back);
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int quiet;
    if (!quiet) {
        imgpu_set_quiet(1);   /* the animation notice */
        quiet = 1;
    }
    if (!imgpu__codec_webp.sniff(data, size))
        return 0;   /* other formats are fuzz_decode's */
    imgpu_meta meta;
    read_meta(data, size, &meta);
    imgpu_image *im = load(data, size);
    if (im) {
        if (im->width < 1 || im->height < 1 || (im->channels != 3 && im->channels != 4) ||
            im->depth != 8 || (uint64_t)im->width * (uint64_t)im->height > (uint64_t)1 << 22 ||
            im->stride < (size_t)im->width * (size_t)im->channels || !im->data)
            abort();
        unsigned sum = 0;
        for (int y = 0; y < im->height; y++)
            for (size_t x = 0; x < (size_t)im->width * (size_t)im->channels; x++)
                sum += imgpu_image_row(im, y)[x];
        volatile unsigned sink = sum;
        (void)sink;
        /* VP8L codes sides up to 16384 and libwebp decodes them, but its encoder stops at
         * 16383 (WEBP_MAX_DIMENSION): such an image is read, never written */
        if ((uint64_t)im->width * (uint64_t)im->height <= (uint64_t)1 << 16 &&
            im->width <= WEBP_SIDE_MAX && im->height <= WEBP_SIDE_MAX) {
            round_trip(im, &meta, 0, 1 + (int)(size % 100));
            round_trip(im, &meta, 1, 0);
        }
    }
    imgpu_image_free(im);
    meta_clear(&meta);
    imgpu_error_clear();
    return 0;
}

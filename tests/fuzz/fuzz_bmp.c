/* fuzz_bmp.c — libFuzzer target: the BMP codec (src/codec_bmp_tga.c) on any bytes that sniff
 * as BMP ("BM"; other formats are fuzz_decode's), above all imgpu's own RLE8 / RLE4 decoder:
 * its structure scan walks the run-length stream, the decode walks it again into the image.
 * The input is loaded through the public load path (imgpu_image_load_memory: sniff, scan, the
 * limits, the decode) under small limits (2^22 pixels, 2 s of decoding, as fuzz_decode.c).
 * What must hold:
 *   - a failed load always says why; a loaded image is 8-bit, 3 or 4 channels (BMP has no
 *     gray: RLE bitmaps are 3), as large as its header, and every byte is readable;
 *   - an RLE bitmap that loads is written back as an uncompressed BMP, which loads back to
 *     exactly the same pixels (the decoder's output is a plain image, and the two paths, RLE
 *     and stb's, agree).
 */
#include "codec.h"
#include "error.h"
#include "io.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static imgpu_image *load(const unsigned char *b, size_t n)
{
    imgpu_load_options opts = { 0 };
    opts.max_pixels = (uint64_t)1 << 22;
    opts.max_decode_ms = 2000;
    imgpu_image *im = imgpu_image_load_memory(b, n, "fuzz-input", &opts);
    if (!im && !imgpu_error_message()[0])
        abort();   /* a failure must always say why */
    return im;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!imgpu__codec_bmp.sniff(data, size))
        return 0;
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
        const uint32_t compress = size >= 34 ? imgpu__le32(data + 30) : 0;
        if ((compress == 1 || compress == 2) &&
            (uint64_t)im->width * (uint64_t)im->height <= (uint64_t)1 << 18) {
            if (im->channels != 3)
                abort();
            imgpu_save_options so = { 0 };
            so.png_level = -1;
            unsigned char *out = NULL;
            size_t len = 0;
            if (imgpu_image_encode(im, IMGPU_FORMAT_BMP, &so, &out, &len) < 0)
                abort();
            imgpu_image *back = load(out, len);
            if (!back || back->width != im->width || back->height != im->height ||
                back->channels != 3)
                abort();
            for (int y = 0; y < im->height; y++)
                if (memcmp(imgpu_image_row(im, y), imgpu_image_row(back, y),
                           (size_t)im->width * 3))
                    abort();
            imgpu_image_free(back);
            free(out);
        }
    }
    imgpu_image_free(im);
    imgpu_error_clear();
    return 0;
}

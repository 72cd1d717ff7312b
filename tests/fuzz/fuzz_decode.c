/* fuzz_decode.c — libFuzzer target: the decode path the CLI takes for every input file.
 * imgpu_image_load() reads the file and hands the bytes to imgpu_image_load_memory(), which
 * sniffs, validates the structure, applies the limits and decodes under the bounded
 * allocator; this target calls that function with the CLI's limits, except --max-pixels,
 * which is 2^22 so that one input stays within libFuzzer's memory and time limits (a
 * decompression bomb within the CLI's 2^28 is a legitimate image, not a bug). Any decoded
 * image is checked for the invariants the rest of imgpu relies on.
 */
#include "io.h"
#include "error.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    imgpu_load_options opts = { 0 };
    opts.max_pixels = (uint64_t)1 << 22;
    /* well under libFuzzer's 10 s timeout, even under ASan: a decoder kept busy by a hostile
     * file (a progressive JPEG of hundreds of scans) must be stopped by imgpu's watchdog, and
     * a timeout here means the watchdog failed */
    opts.max_decode_ms = 2000;
    imgpu_image *im = imgpu_image_load_memory(data, size, "fuzz-input", &opts);
    if (im) {
        if (im->width < 1 || im->height < 1 || im->channels < 1 || im->channels > 4 ||
            (uint64_t)im->width * (uint64_t)im->height > opts.max_pixels ||
            im->stride < (size_t)im->width * (size_t)im->channels || !im->data)
            abort();
        /* Touch every byte: uninitialized or short pixel buffers show up under MSan/ASan. */
        unsigned sum = 0;
        for (int y = 0; y < im->height; y++)
            for (size_t x = 0; x < (size_t)im->width * (size_t)im->channels; x++)
                sum += imgpu_image_row(im, y)[x];
        volatile unsigned sink = sum;
        (void)sink;
    } else if (!imgpu_error_message()[0]) {
        abort();   /* a failure must always say why */
    }
    imgpu_image_free(im);
    imgpu_error_clear();
    return 0;
}

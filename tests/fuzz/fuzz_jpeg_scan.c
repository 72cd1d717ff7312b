/* fuzz_jpeg_scan.c — libFuzzer target: the baseline scan walker (src/io/jpeg_scan.c, issue 25),
 * which decides whether a JPEG may go to nvJPEG's engines, on any bytes. Checked for every input:
 *   - it reads nothing outside the input (an exact-size buffer under ASan) and returns one of
 *     its four verdicts, the same on a second call (no hidden state), and the same as the
 *     reference walk (imgpu__jpeg_scan_walk: the many-code walk and the one it replaced);
 *   - it agrees with libjpeg-turbo, the reference, where that matters: a file imgpu's CPU load
 *     decodes (libjpeg-turbo without a warning, small limits) is never called BAD (short or
 *     broken), so that no good file is refused by the GPU path's rule; and a WHOLE file that the
 *     CPU decodes, its last byte before the EOI cut away (its scan one byte shorter), is never
 *     WHOLE when the CPU load refuses the cut file.
 */
#include "error.h"
#include "image.h"
#include "io.h"
#include "jpeg_scan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int cpu_decodes(const uint8_t *b, size_t n)
{
    imgpu_load_options o;
    memset(&o, 0, sizeof o);
    o.max_pixels = (uint64_t)1 << 20;
    o.max_decode_ms = 2000;
    imgpu_image *im = imgpu_image_load_memory(b, n, "fuzz.jpg", &o);
    imgpu_error_clear();
    if (!im)
        return 0;
    imgpu_image_free(im);
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *b = malloc(size ? size : 1);
    if (!b)
        return 0;
    memcpy(b, data, size);
    const int v = imgpu__jpeg_scan_check(b, size);
    if (v < IMGPU_SCAN_WHOLE || v > IMGPU_SCAN_IRREGULAR || imgpu__jpeg_scan_check(b, size) != v)
        abort();
    if (imgpu__jpeg_scan_walk(b, size, 1) != v || imgpu__jpeg_scan_walk(b, size, 2) != v)
        abort();   /* the many-code walk and the reference walk disagree */
    if (v == IMGPU_SCAN_BAD && cpu_decodes(b, size))
        abort();   /* libjpeg-turbo decodes it without a word, the walker calls it broken */
    if (v == IMGPU_SCAN_WHOLE && size > 4 && b[size - 2] == 0xFF && b[size - 1] == 0xD9 && cpu_decodes(b, size)) {
        /* one byte less of scan data before the EOI */
        uint8_t *c = malloc(size - 1);
        if (c) {
            memcpy(c, b, size - 3);
            c[size - 3] = 0xFF;
            c[size - 2] = 0xD9;
            if (imgpu__jpeg_scan_check(c, size - 1) == IMGPU_SCAN_WHOLE && !cpu_decodes(c, size - 1))
                abort();   /* the CPU refuses the shorter scan, the walker would send it to the GPU */
            free(c);
        }
    }
    free(b);
    return 0;
}

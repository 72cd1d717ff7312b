/* histogram.c — the reference histogram: 256 bins for every channel of an 8-bit image
 * (alpha included, counted like any other channel), plus, for 3- and 4-channel images, a
 * 256-bin histogram of luma Y = imgpu_cpu_rgb_to_y(R, G, B) — the same full-range BT.601 Y,
 * in OpenCV's 14-bit fixed point, that luminance-mode equalization uses (see color.c).
 * Gray and gray+alpha images have no separate luma (has_luma = 0, luma[] all zero): their
 * gray channel is bins[0]. Bins of channels the image does not have are zero.
 * Counts are uint32_t: an image of 2^32 pixels or more is refused rather than wrapped. */
#include "cpu.h"
#include "../error.h"

#include <string.h>

int imgpu_cpu_histogram(const imgpu_image *in, imgpu_histogram *out)
{
    if (in->depth != 8)
        return imgpu_error("histogram: %d-bit images are not supported", in->depth);
    if (in->channels < 1 || in->channels > 4)
        return imgpu_error("histogram: invalid channel count %d", in->channels);
    if ((uint64_t)in->width * (uint64_t)in->height > UINT32_MAX)
        return imgpu_error("histogram: %dx%d has too many pixels for 32-bit bins", in->width,
                           in->height);

    imgpu_histogram h; /* built aside: `out` is written only on success */
    memset(&h, 0, sizeof h);
    h.channels = in->channels;
    h.has_luma = in->channels >= 3;
    const int c = in->channels;
    for (int y = 0; y < in->height; y++) {
        const uint8_t *p = imgpu_image_row(in, y);
        for (int x = 0; x < in->width; x++, p += c) {
            for (int k = 0; k < c; k++)
                h.bins[k][p[k]]++;
            if (h.has_luma)
                h.luma[imgpu_cpu_rgb_to_y(p[0], p[1], p[2])]++;
        }
    }
    *out = h;
    return 0;
}

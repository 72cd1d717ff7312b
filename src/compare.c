/* compare.c — the metrics behind `imgpu compare`: max / mean absolute difference and PSNR
 * over all samples (alpha included), and the amplified |A-B| image written by --diff. */
#include "compare.h"
#include "error.h"

#include <math.h>
#include <stdlib.h>


int imgpu__compare(const imgpu_image *a, const char *name_a, const imgpu_image *b,
                   const char *name_b, imgpu__compare_result *out)
{
    if (a->width != b->width || a->height != b->height)
        return imgpu_error("cannot compare '%s' (%dx%d) with '%s' (%dx%d): sizes differ",
                           name_a, a->width, a->height, name_b, b->width, b->height);
    if (a->channels != b->channels)
        return imgpu_error("cannot compare '%s' (%s) with '%s' (%s): channels differ",
                           name_a, imgpu_image_layout_name(a->channels), name_b, imgpu_image_layout_name(b->channels));
    if (a->depth != 8 || b->depth != 8)
        return imgpu_error("cannot compare '%s' with '%s': only 8-bit images are supported",
                           name_a, name_b);

    const int c = a->channels;
    uint64_t sum = 0, sumsq = 0, differing = 0;
    int max_abs = 0;
    for (int y = 0; y < a->height; y++) {
        const unsigned char *pa = imgpu_image_row(a, y), *pb = imgpu_image_row(b, y);
        for (int x = 0; x < a->width; x++) {
            int any = 0;
            for (int k = 0; k < c; k++) {
                int d = abs((int)pa[x * c + k] - (int)pb[x * c + k]);
                /* 64-bit sums: 255^2 * 2^28 pixels * 4 channels overflows 32 bits long before
                 * it overflows 64. */
                sum += (uint64_t)d;
                sumsq += (uint64_t)(d * d);
                if (d > max_abs)
                    max_abs = d;
                any |= d;
            }
            differing += any != 0;
        }
    }

    uint64_t n = (uint64_t)a->width * (uint64_t)a->height * (uint64_t)c;
    imgpu__compare_result r;
    r.max_abs = max_abs;
    r.samples = n;
    r.pixels = (uint64_t)a->width * (uint64_t)a->height;
    r.differing_pixels = differing;
    r.mean_abs = (double)sum / (double)n;
    r.mse = (double)sumsq / (double)n;
    r.psnr = sumsq == 0 ? INFINITY : 10.0 * log10(255.0 * 255.0 / r.mse);
    *out = r;
    return 0;
}

int imgpu__diff_gain(int max_abs)
{
    return max_abs <= 0 ? 1 : 255 / max_abs;
}

imgpu_image *imgpu__diff_image(const imgpu_image *a, const imgpu_image *b, int gain)
{
    const int c = a->channels;
    const int color = imgpu_image_color_channels(a);
    const int alpha = imgpu_image_has_alpha(a);
    imgpu_image *d = imgpu_image_new(a->width, a->height, color, 8);
    if (!d)
        return NULL;
    for (int y = 0; y < a->height; y++) {
        const unsigned char *pa = imgpu_image_row(a, y), *pb = imgpu_image_row(b, y);
        unsigned char *pd = imgpu_image_row(d, y);
        for (int x = 0; x < a->width; x++) {
            int da = alpha ? abs((int)pa[x * c + c - 1] - (int)pb[x * c + c - 1]) : 0;
            for (int k = 0; k < color; k++) {
                int v = abs((int)pa[x * c + k] - (int)pb[x * c + k]);
                if (da > v)
                    v = da;
                /* Saturate: a caller-chosen gain may push v * gain past 255. */
                long g = (long)v * gain;
                pd[x * color + k] = (unsigned char)(g > 255 ? 255 : g);
            }
        }
    }
    return d;
}

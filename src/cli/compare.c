/* compare.c — the metrics behind `imgpu compare`: max / mean absolute difference and PSNR
 * over all samples (alpha included), and the amplified |A-B| image written by --diff.
 * Metrics are in the levels of the images' depth (PSNR against 255 or 65535); an 8-bit image
 * compared with a 16-bit one is scaled by 257 first (0..255 onto 0..65535 exactly), so the
 * comparison is in 16-bit levels. */
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
    if ((a->depth != 8 && a->depth != 16) || (b->depth != 8 && b->depth != 16))
        return imgpu_error("cannot compare '%s' (%d-bit) with '%s' (%d-bit): only 8- and 16-bit images are "
                           "supported", name_a, a->depth, name_b, b->depth);

    const int c = a->channels;
    const int depth = a->depth > b->depth ? a->depth : b->depth;
    /* an 8-bit image against a 16-bit one: v * 257 (255 * 257 = 65535) */
    const unsigned sa = depth == 16 && a->depth == 8 ? 257 : 1, sb = depth == 16 && b->depth == 8 ? 257 : 1;
    uint64_t sum = 0, sumsq = 0, differing = 0;
    int max_abs = 0;
    for (int y = 0; y < a->height; y++) {
        const unsigned char *pa = imgpu_image_row(a, y), *pb = imgpu_image_row(b, y);
        for (size_t x = 0; x < (size_t)a->width; x++) {
            int any = 0;
            for (int k = 0; k < c; k++) {
                int d = abs((int)(imgpu_sample_get(pa, a->depth, x * c + k) * sa) -
                            (int)(imgpu_sample_get(pb, b->depth, x * c + k) * sb));
                /* 64-bit sums: 65535^2 * 2^28 pixels * 4 channels is below 2^64 (2^62 + ...);
                 * 32 bits would overflow long before. */
                sum += (uint64_t)d;
                sumsq += (uint64_t)d * (uint64_t)d;
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
    r.depth = depth;
    r.peak = depth == 16 ? 65535 : 255;
    r.scaled = a->depth != b->depth ? (a->depth == 8 ? 1 : 2) : 0;
    r.samples = n;
    r.pixels = (uint64_t)a->width * (uint64_t)a->height;
    r.differing_pixels = differing;
    r.mean_abs = (double)sum / (double)n;
    r.mse = (double)sumsq / (double)n;
    r.psnr = sumsq == 0 ? INFINITY : 10.0 * log10((double)r.peak * r.peak / r.mse);
    *out = r;
    return 0;
}

int imgpu__diff_gain(int max_abs, int depth)
{
    const int peak = depth == 16 ? 65535 : 255;
    return max_abs <= 0 ? 1 : peak / max_abs;
}

imgpu_image *imgpu__diff_image(const imgpu_image *a, const imgpu_image *b, int gain)
{
    const int c = a->channels;
    const int color = imgpu_image_color_channels(a);
    const int alpha = imgpu_image_has_alpha(a);
    const int depth = a->depth > b->depth ? a->depth : b->depth;
    const unsigned sa = depth == 16 && a->depth == 8 ? 257 : 1, sb = depth == 16 && b->depth == 8 ? 257 : 1;
    const long peak = depth == 16 ? 65535 : 255;
    imgpu_image *d = imgpu_image_new(a->width, a->height, color, depth);
    if (!d)
        return NULL;
    for (int y = 0; y < a->height; y++) {
        const unsigned char *pa = imgpu_image_row(a, y), *pb = imgpu_image_row(b, y);
        unsigned char *pd = imgpu_image_row(d, y);
        for (size_t x = 0; x < (size_t)a->width; x++) {
            int da = alpha ? abs((int)(imgpu_sample_get(pa, a->depth, x * c + c - 1) * sa) -
                                 (int)(imgpu_sample_get(pb, b->depth, x * c + c - 1) * sb))
                           : 0;
            for (int k = 0; k < color; k++) {
                int v = abs((int)(imgpu_sample_get(pa, a->depth, x * c + k) * sa) -
                            (int)(imgpu_sample_get(pb, b->depth, x * c + k) * sb));
                if (da > v)
                    v = da;
                /* Saturate: a caller-chosen gain may push v * gain past the peak. */
                long g = (long)v * gain;
                imgpu_sample_put(pd, depth, x * color + k, (unsigned)(g > peak ? peak : g));
            }
        }
    }
    return d;
}

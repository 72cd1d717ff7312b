/* compare.h — image comparison metrics for `imgpu compare` (and any test or front end that
 * wants the same numbers): max and mean absolute difference and PSNR over every channel,
 * alpha included, plus a visible difference image.
 *
 * Both images must have the same width, height and channel count; anything else is refused
 * with a message naming both files. Strides may differ. Depths may be 8 or 16: the metrics are
 * in levels of the deeper one, an 8-bit image against a 16-bit one scaled by 257 first.
 */
#ifndef IMGPU_COMPARE_H
#define IMGPU_COMPARE_H

#include <stdint.h>

#include "image.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct imgpu__compare_result {
    int max_abs;                /* largest |a - b| over all samples, 0..peak */
    double mean_abs;            /* sum |a - b| / (w * h * c) */
    double mse;                 /* sum (a - b)^2 / (w * h * c) */
    double psnr;                /* 10 log10(peak^2 / mse) dB; INFINITY when mse == 0 */
    int depth;                  /* the levels the metrics are in: 8 or 16 bits */
    int peak;                   /* 255 or 65535 */
    int scaled;                 /* 0; 1 or 2: image a or b was 8-bit, scaled by 257 to 16 */
    uint64_t samples;           /* w * h * c */
    uint64_t pixels;            /* w * h */
    uint64_t differing_pixels;  /* pixels where any channel differs */
} imgpu__compare_result;

/* Compare a and b; the names are only used in the message when they cannot be compared.
 * Returns 0, or -1 with an error recorded (size, channel or depth mismatch). */
int imgpu__compare(const imgpu_image *a, const char *name_a, const imgpu_image *b,
                   const char *name_b, imgpu__compare_result *out);

/* An opaque difference image (gray for 1/2-channel inputs, RGB for 3/4) at the comparison's
 * depth: each color sample is |a - b| of that channel, maxed with |a - b| of alpha (so an
 * alpha-only change still shows), times `gain`, saturated at the peak (255 or 65535). The
 * images must already have passed imgpu__compare.
 * NULL + error on allocation failure. */
imgpu_image *imgpu__diff_image(const imgpu_image *a, const imgpu_image *b, int gain);

/* The gain the CLI uses: the largest integer that keeps the biggest difference <= the peak of
 * `depth` (peak / max_abs), so a one-level difference is plainly visible; 1 when identical. */
int imgpu__diff_gain(int max_abs, int depth);

#ifdef __cplusplus
}
#endif
#endif

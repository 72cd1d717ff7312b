/* orient.c — imgpu_image_orient: the stored pixels turned into what a viewer shows under an
 * EXIF orientation (exif.h reads the value). One plain loop over the output: each output
 * pixel copies the stored pixel the orientation maps to it, whole pixels (all channels, 8 or
 * 16 bits) at a time, so depth and channel count need no cases.
 */
#include "image.h"
#include "error.h"

#include <string.h>

imgpu_image *imgpu_image_orient(const imgpu_image *im, int orientation)
{
    if (orientation < 1 || orientation > 8) {
        imgpu_error("EXIF orientation %d is not one of 1..8", orientation);
        return NULL;
    }
    const int w = im->width, h = im->height;
    const int swap = orientation >= 5;   /* 5..8 turn the image a quarter: width <-> height */
    imgpu_image *out = imgpu_image_new(swap ? h : w, swap ? w : h, im->channels, im->depth);
    if (!out)
        return NULL;
    const size_t px = (size_t)im->channels * (size_t)imgpu_image_sample_bytes(im);
    for (int y = 0; y < out->height; y++) {
        unsigned char *dst = imgpu_image_row(out, y);
        for (int x = 0; x < out->width; x++) {
            /* (sx, sy): the stored pixel shown at (x, y) */
            int sx, sy;
            switch (orientation) {
            case 1: sx = x;         sy = y;         break;
            case 2: sx = w - 1 - x; sy = y;         break;   /* mirrored left-right */
            case 3: sx = w - 1 - x; sy = h - 1 - y; break;   /* turned 180 */
            case 4: sx = x;         sy = h - 1 - y; break;   /* mirrored top-bottom */
            case 5: sx = y;         sy = x;         break;   /* transposed */
            case 6: sx = y;         sy = h - 1 - x; break;   /* turned 90 clockwise */
            case 7: sx = w - 1 - y; sy = h - 1 - x; break;   /* transverse */
            default: sx = w - 1 - y; sy = x;        break;   /* 8: turned 90 counter-clockwise */
            }
            memcpy(dst + (size_t)x * px, imgpu_image_row(im, sy) + (size_t)sx * px, px);
        }
    }
    return out;
}

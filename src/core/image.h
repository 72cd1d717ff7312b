/* image.h — the one image model every part of imgpu shares.
 *
 * Layout: rows top to bottom, pixels left to right, channels interleaved
 * (gray; gray+alpha; RGB; RGBA), samples of `depth` bits (8, or 16 stored as
 * native-endian uint16_t). Row r starts at data + r * stride; stride is at least
 * width * channels * bytes-per-sample and is exactly that unless a producer says
 * otherwise. The last channel of a 2- or 4-channel image is alpha.
 *
 * Ownership (the GLFW rule): imgpu_image_free accepts NULL; an image made by
 * imgpu_image_new owns its data and frees it; a view (owns == 0) does not.
 */
#ifndef IMGPU_IMAGE_H
#define IMGPU_IMAGE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct imgpu_image {
    int width;          /* pixels, >= 1 */
    int height;         /* pixels, >= 1 */
    int channels;       /* 1..4; 2 and 4 carry alpha last */
    int depth;          /* bits per sample: 8 or 16 */
    size_t stride;      /* bytes from one row to the next */
    unsigned char *data;
    int owns;           /* 1: imgpu_image_free frees data */
} imgpu_image;

/* Bytes of one sample (1 or 2). */
static inline int imgpu_image_sample_bytes(const imgpu_image *im) { return im->depth == 16 ? 2 : 1; }

/* Total bytes w*h*c*bytes, or -1 with an error recorded when it overflows size_t or a
 * dimension is out of range. Every allocation of pixels goes through this check first. */
int imgpu_image_bytes(int width, int height, int channels, int depth, size_t *out);

/* A new owned, zero-filled image with stride = width*channels*bytes. NULL + error on failure. */
imgpu_image *imgpu_image_new(int width, int height, int channels, int depth);
/* The same with the pixels left unset, for a producer that writes every byte (zeroing a 4K
 * image first costs as much as one pass over it). */
imgpu_image *imgpu_image_new_unset(int width, int height, int channels, int depth);
/* A deep copy (tight stride). */
imgpu_image *imgpu_image_copy(const imgpu_image *src);
void imgpu_image_free(imgpu_image *im);

/* A copy of an image with alpha (2 or 4 channels) composited onto the colour bg (R, G, B;
 * gray uses bg[0]), without its alpha channel: v = (c * a + bg * (max - a)) / max rounded to
 * nearest, at the image's depth (bg scaled by 257 at 16 bits). NULL + error on failure. */
imgpu_image *imgpu_image_flatten(const imgpu_image *im, const uint8_t bg[4]);

/* The image as a viewer shows it under EXIF orientation 1..8 (exif.h reads the tag):
 *   1 as stored                   5 transposed (mirrored left-right, then turned 90 CCW)
 *   2 mirrored left-right         6 turned 90 degrees clockwise
 *   3 turned 180 degrees          7 transverse (mirrored left-right, then turned 90 CW)
 *   4 mirrored top-bottom         8 turned 90 degrees counter-clockwise (270 CW)
 * 5..8 swap width and height. This is what OpenCV's imread applies to a JPEG's orientation.
 * Orientation 8 undoes 6 and 6 undoes 8; every other value undoes itself. Returns a new owned
 * image with tight stride (a copy for 1), or NULL with an error recorded for an orientation
 * outside 1..8 or a failed allocation. */
imgpu_image *imgpu_image_orient(const imgpu_image *im, int orientation);

/* Pointer to row y. */
static inline unsigned char *imgpu_image_row(const imgpu_image *im, int y) { return im->data + (size_t)y * im->stride; }

/* 1 when the image has an alpha channel (2 or 4 channels). */
static inline int imgpu_image_has_alpha(const imgpu_image *im) { return im->channels == 2 || im->channels == 4; }
/* "gray", "gray+alpha", "RGB" or "RGBA" ("?" otherwise). */
const char *imgpu_image_layout_name(int channels);

/* Number of color (non-alpha) channels: 1 or 3. */
static inline int imgpu_image_color_channels(const imgpu_image *im) { return im->channels >= 3 ? 3 : 1; }

/* Sample i (counted in samples, not bytes) of a row of `depth`-bit samples as an unsigned
 * integer: uint8_t at 8 bits, native-endian uint16_t at 16 (through memcpy: no alignment
 * assumption about the row). The depth-generic code of the CPU reference reads and writes
 * pixels through these two. */
static inline unsigned imgpu_sample_get(const unsigned char *row, int depth, size_t i)
{
    if (depth == 16) {
        uint16_t v;
        memcpy(&v, row + 2 * i, 2);
        return v;
    }
    return row[i];
}

static inline void imgpu_sample_put(unsigned char *row, int depth, size_t i, unsigned v)
{
    if (depth == 16) {
        const uint16_t s = (uint16_t)v;
        memcpy(row + 2 * i, &s, 2);
    } else {
        row[i] = (unsigned char)v;
    }
}

#ifdef __cplusplus
}
#endif
#endif

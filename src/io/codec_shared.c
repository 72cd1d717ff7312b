/* codec_shared.c — what the codec entries (codec_*.c) and io.c share: stb's encoder and 16-bit
 * decoder as an entry uses them (named by the entry it runs for, so nothing here looks the
 * table up), and a decoder's buffer adopted as an image. Below the table (codec.c), which
 * references the entries: nothing here calls back up into it.
 */
#include "codec.h"
#include "error.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static imgpu_image *load_fail(const char *name, const char *why)
{
    imgpu_error("cannot read '%s': %s", name, why);
    return NULL;
}

imgpu_image *imgpu__adopt_pixels(const char *name, void *px, int w, int h, int c, int depth)
{
    imgpu_image *im = calloc(1, sizeof *im);
    if (!im) {
        free(px);
        return load_fail(name, "out of memory");
    }
    im->width = w;
    im->height = h;
    im->channels = c;
    im->depth = depth;
    im->stride = (size_t)w * (size_t)c * (depth / 8);
    im->data = px;
    im->owns = 1;
    return im;
}

/* ---- stb-backed encode and 16-bit decode ------------------------------------------------ */

int imgpu__encode_stb_pixels(const imgpu__codec *k, const unsigned char *px, int w, int h, int c,
                             size_t stride, const imgpu__encode_args *a, unsigned char **out,
                             size_t *out_len, char *why, size_t n)
{
    const char *reason;
    if (imgpu__stb_encode(k->format, px, w, h, c, stride, a->quality, a->level, out, out_len,
                          &reason) < 0) {
        snprintf(why, n, "%s encoding failed: %s", k->name, reason);
        return -1;
    }
    return 0;
}

int imgpu__encode_stb(const imgpu__codec *k, const imgpu_image *im, const imgpu__encode_args *a,
                      unsigned char **out, size_t *out_len, char *why, size_t n)
{
    const int w = im->width, h = im->height, c = im->channels;
    const size_t row = (size_t)w * (size_t)c;
    const int png = k->format == IMGPU_FORMAT_PNG;
    if (png || im->stride == row)
        return imgpu__encode_stb_pixels(k, im->data, w, h, c, png ? im->stride : row, a, out,
                                        out_len, why, n);
    /* stb's writers other than PNG take tight rows only. */
    unsigned char *tight = malloc(row * (size_t)h);
    if (!tight) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    for (int y = 0; y < h; y++)
        memcpy(tight + (size_t)y * row, imgpu_image_row(im, y), row);
    int rc = imgpu__encode_stb_pixels(k, tight, w, h, c, row, a, out, out_len, why, n);
    free(tight);
    return rc;
}

imgpu_image *imgpu__load16_stb(const unsigned char *b, size_t n, const char *name,
                               const imgpu__scan *s, size_t budget, const imgpu__codec *k)
{
    int w, h, c;
    const char *why;
    unsigned char *px = imgpu__stb_decode16(b, n, budget, &w, &h, &c, &why);
    if (!px) {
        imgpu_error("cannot read '%s': corrupt %s data (%s)", name, k->name, why);
        return NULL;
    }
    if ((uint64_t)w != s->w || (uint64_t)h != s->h) {
        free(px);
        imgpu_error("cannot read '%s': corrupt %s data", name, k->name);
        return NULL;
    }
    return imgpu__adopt_pixels(name, px, w, h, c, 16);
}

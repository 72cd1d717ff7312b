/* image.c — allocation, copy and free of imgpu_image, with overflow-checked sizes. */
#include "image.h"
#include "error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int imgpu_image_bytes(int width, int height, int channels, int depth, size_t *out)
{
    if (width < 1 || height < 1)
        return imgpu_error("invalid image size %dx%d", width, height);
    if (channels < 1 || channels > 4)
        return imgpu_error("invalid channel count %d", channels);
    if (depth != 8 && depth != 16)
        return imgpu_error("invalid sample depth %d bits", depth);
    size_t n = (size_t)width;
    size_t per = (size_t)channels * (size_t)(depth / 8);
    if (n > SIZE_MAX / per)
        goto overflow;
    n *= per;
    if (n > SIZE_MAX / (size_t)height)
        goto overflow;
    *out = n * (size_t)height;
    return 0;
overflow:
    return imgpu_error("image of %dx%dx%d is too large for this machine", width, height, channels);
}

imgpu_image *imgpu_image_new(int width, int height, int channels, int depth)
{
    size_t bytes = 0;
    if (imgpu_image_bytes(width, height, channels, depth, &bytes) < 0)
        return NULL;
    imgpu_image *im = calloc(1, sizeof *im);
    if (!im)
        goto oom;
    im->data = calloc(1, bytes);
    if (!im->data) {
        free(im);
        goto oom;
    }
    im->width = width;
    im->height = height;
    im->channels = channels;
    im->depth = depth;
    im->stride = bytes / (size_t)height;
    im->owns = 1;
    return im;
oom:
    imgpu_error("out of memory allocating a %dx%d image (%zu bytes)", width, height, bytes);
    return NULL;
}

imgpu_image *imgpu_image_copy(const imgpu_image *src)
{
    imgpu_image *im = imgpu_image_new(src->width, src->height, src->channels, src->depth);
    if (!im)
        return NULL;
    size_t row = im->stride;
    for (int y = 0; y < src->height; y++)
        memcpy(imgpu_image_row(im, y), imgpu_image_row(src, y), row);
    return im;
}

const char *imgpu_image_layout_name(int channels)
{
    switch (channels) {
    case 1: return "gray";
    case 2: return "gray+alpha";
    case 3: return "RGB";
    case 4: return "RGBA";
    default: return "?";
    }
}

void imgpu_image_free(imgpu_image *im)
{
    if (!im)
        return;
    if (im->owns)
        free(im->data);
    free(im);
}

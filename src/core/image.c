/* image.c — allocation, copy and free of imgpu_image, with overflow-checked sizes. */
#include "image.h"
#include "error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

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

/* Pixel buffers of 4 MiB and more ask Linux for transparent huge pages, as numpy does for its
 * own arrays (madvise(MADV_HUGEPAGE) from 4 MiB, numpy's alloc.c): where the kernel's THP mode
 * is "madvise" (Debian's default), a fresh 4K RGB image then costs a dozen page faults instead
 * of 6,000, each fault several microseconds in a VM. A hint only: the pages within the buffer
 * (start rounded up, end down to 4 KiB), and its failure changes nothing. */
static void hint_huge_pages(void *p, size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t page = 4096, a = (uintptr_t)p;
    if (bytes < ((size_t)4 << 20))
        return;
    const uintptr_t start = (a + page - 1) & ~(page - 1), end = (a + bytes) & ~(page - 1);
    (void)madvise((void *)start, end - start, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

static imgpu_image *image_new(int width, int height, int channels, int depth, int zero)
{
    size_t bytes = 0;
    if (imgpu_image_bytes(width, height, channels, depth, &bytes) < 0)
        return NULL;
    imgpu_image *im = calloc(1, sizeof *im);
    if (!im)
        goto oom;
    im->data = zero ? calloc(1, bytes) : malloc(bytes);
    if (!im->data) {
        free(im);
        goto oom;
    }
    hint_huge_pages(im->data, bytes);
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

imgpu_image *imgpu_image_new(int width, int height, int channels, int depth)
{
    return image_new(width, height, channels, depth, 1);
}

imgpu_image *imgpu_image_new_unset(int width, int height, int channels, int depth)
{
    return image_new(width, height, channels, depth, 0);
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

imgpu_image *imgpu_image_flatten(const imgpu_image *im, const uint8_t bg[4])
{
    const int c = im->channels, oc = c == 2 ? 1 : 3;
    imgpu_image *o = imgpu_image_new(im->width, im->height, oc, im->depth);
    if (!o)
        return NULL;
    const uint64_t max = im->depth == 16 ? 65535 : 255, scale = im->depth == 16 ? 257 : 1;
    for (int y = 0; y < im->height; y++) {
        const unsigned char *r = imgpu_image_row(im, y);
        unsigned char *d = imgpu_image_row(o, y);
        for (int x = 0; x < im->width; x++) {
            const uint64_t a = imgpu_sample_get(r, im->depth, (size_t)x * c + c - 1);
            for (int k = 0; k < oc; k++) {
                const uint64_t v = imgpu_sample_get(r, im->depth, (size_t)x * c + k);
                const uint64_t b = bg[oc == 1 ? 0 : k] * scale;
                imgpu_sample_put(d, im->depth, (size_t)x * oc + k,
                                 (unsigned)((v * a + b * (max - a) + max / 2) / max));
            }
        }
    }
    return o;
}

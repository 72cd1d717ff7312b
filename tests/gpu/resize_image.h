/* resize_image.h — the test images of resize's GPU tests (test_gpu_resize on the GPU,
 * test_resize_emu on the host): smooth ramps or gpu_util.h's xorshift noise, 8 or 16 bits, and
 * for gray+alpha and RGBA an alpha with holes, half-transparent edges and opaque runs. */
#ifndef IMGPU_TESTS_RESIZE_IMAGE_H
#define IMGPU_TESTS_RESIZE_IMAGE_H

#include <stdint.h>

#include "gpu_util.h"
#include "image.h"

static inline imgpu_image *resize_test_image(int w, int h, int c, int depth, int smooth, uint32_t seed)
{
    imgpu_image *im = imgpu_image_new(w, h, c, depth);
    const unsigned maxv = depth == 16 ? 65535u : 255u;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int k = 0; k < c; k++) {
                unsigned v = smooth ? (unsigned)((uint64_t)maxv * (unsigned)(x * 37 / (w + 1) + y * 53 / (h + 1) + k * 5) / 100u)
                                    : gpu_rand(&seed) & maxv;
                if ((c == 2 || c == 4) && k == c - 1) /* alpha: holes, edges and ramps */
                    v = ((x / 3 + y / 2) % 4 == 0) ? 0 : ((x + y) % 5 == 0 ? maxv / 2 : maxv);
                imgpu_sample_put(im->data + (size_t)y * im->stride, depth, (size_t)x * c + k, v > maxv ? maxv : v);
            }
    return im;
}

#endif

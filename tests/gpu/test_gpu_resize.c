/* test_gpu_resize.c — resize on the GPU against the CPU reference, bit for bit: every filter
 * (nearest, bilinear, bicubic, area, lanczos), 8 and 16 bits, gray, gray+alpha, RGB, RGBA,
 * up and down, odd sizes and ratios, whole factors (area's box path, bilinear by 1/2), --scale,
 * --fit and --width, 1x1, 1xN, Nx1, 2x2, 3x1, 1x3 (windows wider than the image), scales 0.1
 * and 3, the same size (a copy); --antialias (Pillow's filters: wide 22-bit tables, both
 * passes rounded) for every filter but nearest, up and down; images of noise, a smooth ramp and
 * an alpha channel with transparent holes (the premultiplied path). Every GPU result goes
 * through imgpu_pipeline_run(--device cuda), so the dispatch is tested too. Exits 77 without a
 * usable GPU. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_util.h"
#include "image.h"
#include "ops.h"
#include "resize_image.h"
#include "test_util.h"


static long max_diff(const imgpu_image *a, const imgpu_image *b, size_t *nd)
{
    if (a->width != b->width || a->height != b->height || a->channels != b->channels || a->depth != b->depth)
        return -1;
    long m = 0;
    size_t n = 0;
    for (int y = 0; y < a->height; y++)
        for (size_t i = 0; i < (size_t)a->width * a->channels; i++) {
            long d = (long)imgpu_sample_get(a->data + (size_t)y * a->stride, a->depth, i) -
                     (long)imgpu_sample_get(b->data + (size_t)y * b->stride, b->depth, i);
            d = d < 0 ? -d : d;
            n += d != 0;
            m = d > m ? d : m;
        }
    *nd = n;
    return m;
}

static void check(const imgpu_image *im, imgpu_op op, const char *what)
{
    imgpu_device used = IMGPU_DEVICE_AUTO;
    imgpu_image *ref = imgpu_pipeline_run(im, &op, 1, IMGPU_DEVICE_CPU, NULL);
    imgpu_image *got = imgpu_pipeline_run(im, &op, 1, IMGPU_DEVICE_CUDA, &used);
    CHECKF(ref != NULL, "CPU reference failed on %s: %s", what, imgpu_error_message());
    CHECKF(got != NULL && used == IMGPU_DEVICE_CUDA, "GPU run failed on %s: %s", what,
           got ? "ran elsewhere" : imgpu_error_message());
    if (ref && got) {
        size_t nd = 0;
        long d = max_diff(got, ref, &nd);
        CHECKF(d == 0, "%s: max diff %ld, %zu samples differ", what, d, nd);
    }
    imgpu_image_free(ref);
    imgpu_image_free(got);
}

int main(void)
{
    gpu_require_or_skip();
    /* 2x2, 3x1, 1x3, 5x7: windows wider than the image on both sides (every tap clamped) */
    static const int src[][2] = {{1, 1}, {1, 37}, {41, 1}, {2, 2}, {3, 1}, {1, 3}, {5, 7}, {64, 48}, {97, 61}, {640, 427}};
    static const int dst[][2] = {{1, 1}, {1, 9}, {13, 1}, {32, 24}, {50, 31}, {200, 133}, {333, 211}, {1280, 854}};
    static const char *fname[] = {"nearest", "bilinear", "bicubic", "area", "lanczos"};
    static const int chans[] = {1, 2, 3, 4};
    uint32_t seed = 7;
    char what[160];
    /* IMGPU_TEST_QUICK=1 (compute-sanitizer runs, tests/robust/robust_gpu.sh): the sizes up to
     * 97x61, noise only, every filter, depth, channel count and way of sizing still */
    const int quick = getenv("IMGPU_TEST_QUICK") != NULL;
    for (size_t s = 0; s < sizeof src / sizeof src[0]; s++)
        for (int depth = 8; depth <= 16; depth += 8)
            for (size_t ci = 0; ci < 4; ci++)
                for (int smooth = 0; smooth < 2; smooth++) {
                    if (quick && (smooth || src[s][0] * src[s][1] > 97 * 61))
                        continue;
                    const int c = chans[ci];
                    imgpu_image *im = resize_test_image(src[s][0], src[s][1], c, depth, smooth, seed++);
                    for (int f = 0; f <= IMGPU_RESIZE_LANCZOS; f++) {
                        for (size_t d = 0; d < sizeof dst / sizeof dst[0]; d++) {
                            if ((d + s + ci + (size_t)smooth) % 2 && d != 0) /* half the matrix: every pair still occurs */
                                continue;
                            if (quick && dst[d][0] * dst[d][1] > 333 * 211)
                                continue;
                            snprintf(what, sizeof what, "%s %dx%d -> %dx%d c%d d%d %s", fname[f], src[s][0], src[s][1],
                                     dst[d][0], dst[d][1], c, depth, smooth ? "smooth" : "noise");
                            imgpu_op op = imgpu_op_resize(dst[d][0], dst[d][1], (imgpu_resize_filter)f);
                            check(im, op, what);
                            if (f != IMGPU_RESIZE_NEAREST) { /* --antialias: Pillow's, 22-bit tables */
                                op.u.resize.antialias = 1;
                                snprintf(what, sizeof what, "%s antialias %dx%d -> %dx%d c%d d%d %s", fname[f], src[s][0],
                                         src[s][1], dst[d][0], dst[d][1], c, depth, smooth ? "smooth" : "noise");
                                check(im, op, what);
                            }
                        }
                        /* whole factors and the other ways of sizing */
                        imgpu_op op = imgpu_op_resize(0, 0, (imgpu_resize_filter)f);
                        const double scales[] = {0.5, 1.0 / 3, 0.25, 2.0, 1.7, 0.37, 0.1, 3.0};
                        for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++) {
                            op.u.resize.scale = scales[k];
                            snprintf(what, sizeof what, "%s %dx%d scale %g c%d d%d", fname[f], src[s][0], src[s][1],
                                     scales[k], c, depth);
                            check(im, op, what);
                        }
                        if (f != IMGPU_RESIZE_NEAREST) { /* --antialias by large factors: wide windows */
                            op.u.resize.antialias = 1;
                            for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k += 3) {
                                op.u.resize.scale = scales[k];
                                snprintf(what, sizeof what, "%s antialias %dx%d scale %g c%d d%d", fname[f], src[s][0],
                                         src[s][1], scales[k], c, depth);
                                check(im, op, what);
                            }
                            op.u.resize.antialias = 0;
                        }
                        op.u.resize.scale = 0;
                        op.u.resize.fit_w = 150, op.u.resize.fit_h = 90;
                        snprintf(what, sizeof what, "%s fit 150x90 c%d d%d", fname[f], c, depth);
                        check(im, op, what);
                        op.u.resize.fit_w = op.u.resize.fit_h = 0;
                        op.u.resize.width = src[s][0];
                        op.u.resize.height = src[s][1]; /* the same size: a copy */
                        check(im, op, "same size");
                    }
                    imgpu_image_free(im);
                }
    TEST_MAIN_END();
}

/* test_gpu_geom.c — the geometry ops of issue 28 (op-geom) on CUDA against the CPU reference,
 * bit for bit, through imgpu_pipeline_run (--device cuda), so the dispatch and the chain's
 * shapes are tested too:
 *  - flip: every combination of --horizontal, --vertical, --transpose;
 *  - convert: the device copy;
 * over 8 and 16 bits, gray, gray+alpha, RGB, RGBA, and sizes 1x1, 1xN, Nx1, odd, 4K (not with
 * IMGPU_TEST_QUICK=1, the compute-sanitizer runs); chains with a rotation in front. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_util.h"
#include "ops.h"
#include "test_util.h"

static imgpu_image *make(int w, int h, int c, int depth, uint32_t seed)
{
    imgpu_image *im = imgpu_image_new(w, h, c, depth);
    if (!im) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    const unsigned maxv = depth == 16 ? 65535u : 255u;
    for (int y = 0; y < h; y++)
        for (int i = 0; i < w * c; i++)
            imgpu_sample_put(imgpu_image_row(im, y), depth, (size_t)i, gpu_rand(&seed) & maxv);
    return im;
}

/* 0 when equal (shape and every byte), else 1 */
static int differ(const imgpu_image *a, const imgpu_image *b)
{
    if (a->width != b->width || a->height != b->height || a->channels != b->channels || a->depth != b->depth)
        return 1;
    const size_t row = (size_t)a->width * a->channels * (a->depth / 8);
    for (int y = 0; y < a->height; y++)
        if (memcmp(imgpu_image_row(a, y), imgpu_image_row(b, y), row))
            return 1;
    return 0;
}

static void check_op(const imgpu_image *im, const imgpu_op *ops, int n, const char *what)
{
    imgpu_device used = IMGPU_DEVICE_AUTO;
    imgpu_image *ref = imgpu_pipeline_run(im, ops, n, IMGPU_DEVICE_CPU, NULL);
    CHECKF(ref != NULL, "CPU reference failed on %s: %s", what, imgpu_error_message());
    imgpu_image *got = imgpu_pipeline_run(im, ops, n, IMGPU_DEVICE_CUDA, &used);
    CHECKF(got != NULL && used == IMGPU_DEVICE_CUDA, "GPU run failed on %s: %s", what,
           got ? "ran elsewhere" : imgpu_error_message());
    if (ref && got)
        CHECKF(!differ(got, ref), "%s: GPU %dx%d != CPU %dx%d or bytes differ", what, got->width, got->height,
               ref->width, ref->height);
    imgpu_image_free(ref);
    imgpu_image_free(got);
}

static const int s_sizes[][2] = {{1, 1}, {1, 9}, {9, 1}, {37, 23}, {256, 3}, {3840, 2160}};
#define NSIZES ((int)(sizeof s_sizes / sizeof s_sizes[0]))

static void test_flip(const imgpu_image *im, const char *what)
{
    char buf[160];
    for (int m = 1; m < 8; m++) {
        imgpu_op op = imgpu_op_flip(m & 1, m & 2, m & 4);
        snprintf(buf, sizeof buf, "flip h%d v%d t%d on %s", m & 1, !!(m & 2), !!(m & 4), what);
        check_op(im, &op, 1, buf);
    }
}

int main(void)
{
    gpu_require_or_skip();
    const int quick = getenv("IMGPU_TEST_QUICK") != NULL;
    uint32_t seed = 12345;
    char what[96];
    for (int depth = 8; depth <= 16; depth += 8)
        for (int c = 1; c <= 4; c++)
            for (int s = 0; s < NSIZES; s++) {
                if (quick && s_sizes[s][0] * s_sizes[s][1] > 100000)
                    continue;
                imgpu_image *im = make(s_sizes[s][0], s_sizes[s][1], c, depth, seed++);
                snprintf(what, sizeof what, "%dx%d c=%d %d-bit", s_sizes[s][0], s_sizes[s][1], c, depth);
                test_flip(im, what);
                imgpu_op cv = imgpu_op_convert();
                check_op(im, &cv, 1, what);
                imgpu_image_free(im);
            }
    /* chains: a rotation then a flip (the flip reads the rotation's result in the ping-pong) */
    for (int depth = 8; depth <= 16; depth += 8) {
        imgpu_image *im = make(301, 199, 4, depth, seed++);
        imgpu_op ops[4] = {imgpu_op_rotate(30.0), imgpu_op_flip(1, 0, 1), imgpu_op_convert(), imgpu_op_flip(0, 1, 0)};
        snprintf(what, sizeof what, "chain rotate 30 -> flip h t -> convert -> flip v, %d-bit RGBA", depth);
        check_op(im, ops, 4, what);
        imgpu_image_free(im);
    }
    imgpu_cuda_shutdown();
    TEST_MAIN_END();
}

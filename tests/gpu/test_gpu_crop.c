/* test_gpu_crop.c — the op "crop" (issue 28, op-crop) on CUDA against the CPU reference, bit for
 * bit, through imgpu_pipeline_run (--device cuda), so the dispatch and the chain's shapes are
 * tested too:
 *  - --rect: the whole image, the last pixel, an inner box, one row, one column;
 *  - --size with each of the nine gravities (odd and even sizes);
 *  - --trim: noise in a border of one colour (the box from the bounding-box kernel, blocks far
 *    apart voting), one pixel unlike the border (in every corner and the middle, differing
 *    by one level in its last sample: alpha where there is one), an image of one colour (1x1);
 *    both backends' boxes are also held to op.h's serial imgpu_crop_trim_box;
 *  - chains: --trim then --rect then a flip (the chain goes on from the smaller result), --trim
 *    then a resize --fit larger than the plan's bound (the GPU's buffers regrow), a rotation
 *    then --inner (folded into the rotation by imgpu_ops_for_image);
 *  - refusals: a box outside the image fails on both, with the same message.
 * Over 8 and 16 bits, gray, gray+alpha, RGB, RGBA, and sizes 1x1, 1xN, Nx1, odd, 4K (not with
 * IMGPU_TEST_QUICK=1, the compute-sanitizer runs). Exits 77 without a usable GPU. */
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

/* Every sample of im set to v. */
static void fill(imgpu_image *im, unsigned v)
{
    for (int y = 0; y < im->height; y++)
        for (int i = 0; i < im->width * im->channels; i++)
            imgpu_sample_put(imgpu_image_row(im, y), im->depth, (size_t)i, v);
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

/* The chain on the CPU and on CUDA (after imgpu_ops_for_image, as every front end); both must
 * succeed with the same bytes, of want_w x want_h when given (> 0). */
static void check_ops(const imgpu_image *im, const imgpu_op *ops_in, int n, int want_w, int want_h, const char *what)
{
    imgpu_op ops[8];
    memcpy(ops, ops_in, sizeof ops[0] * (size_t)n);
    imgpu_ops_for_image(ops, n, imgpu_image_color_channels(im));
    imgpu_device used = IMGPU_DEVICE_AUTO;
    imgpu_image *ref = imgpu_pipeline_run(im, ops, n, IMGPU_DEVICE_CPU, NULL);
    CHECKF(ref != NULL, "CPU reference failed on %s: %s", what, imgpu_error_message());
    imgpu_image *got = imgpu_pipeline_run(im, ops, n, IMGPU_DEVICE_CUDA, &used);
    CHECKF(got != NULL && used == IMGPU_DEVICE_CUDA, "GPU run failed on %s: %s", what,
           got ? "ran elsewhere" : imgpu_error_message());
    if (ref && got)
        CHECKF(!differ(got, ref), "%s: GPU %dx%d != CPU %dx%d or bytes differ", what, got->width, got->height,
               ref->width, ref->height);
    if (ref && want_w > 0)
        CHECKF(ref->width == want_w && ref->height == want_h, "%s: %dx%d, want %dx%d", what, ref->width, ref->height,
               want_w, want_h);
    imgpu_image_free(ref);
    imgpu_image_free(got);
}

/* --trim on im: both backends, and the size op.h's serial imgpu_crop_trim_box gives. */
static void check_trim(const imgpu_image *im, const char *what)
{
    int box[4];
    imgpu_crop_trim_box(im->data, im->stride, im->width, im->height, im->channels * (im->depth / 8), box);
    imgpu_op op = imgpu_op_crop(0, 0, 0, 0);
    op.u.crop.trim = 1;
    check_ops(im, &op, 1, box[2], box[3], what);
    /* and the box's pixels: --trim == --rect of that box, on the CPU */
    imgpu_image *t = imgpu_pipeline_run(im, &op, 1, IMGPU_DEVICE_CPU, NULL);
    imgpu_op r = imgpu_op_crop(box[0], box[1], box[2], box[3]);
    imgpu_image *b = imgpu_pipeline_run(im, &r, 1, IMGPU_DEVICE_CPU, NULL);
    CHECKF(t && b && !differ(t, b), "%s: --trim is --rect %d,%d,%d,%d", what, box[0], box[1], box[2], box[3]);
    imgpu_image_free(t);
    imgpu_image_free(b);
}

static const int s_sizes[][2] = {{1, 1}, {1, 9}, {9, 1}, {37, 23}, {256, 3}, {3840, 2160}};
#define NSIZES ((int)(sizeof s_sizes / sizeof s_sizes[0]))

static void test_boxes(const imgpu_image *im, const char *what)
{
    char buf[200];
    const int w = im->width, h = im->height;
    const int rects[][4] = {{0, 0, w, h}, {w - 1, h - 1, 1, 1}, {w / 3, h / 4, w - w / 3, h - h / 4 - (h > 1)},
                            {0, h / 2, w, 1}, {w / 2, 0, 1, h}};
    for (size_t k = 0; k < sizeof rects / sizeof rects[0]; k++) {
        const int *r = rects[k];
        if (r[2] < 1 || r[3] < 1)
            continue;
        imgpu_op op = imgpu_op_crop(r[0], r[1], r[2], r[3]);
        snprintf(buf, sizeof buf, "crop --rect %d,%d,%d,%d on %s", r[0], r[1], r[2], r[3], what);
        check_ops(im, &op, 1, r[2], r[3], buf);
    }
    for (int g = IMGPU_GRAVITY_NORTHWEST; g <= IMGPU_GRAVITY_SOUTHEAST; g++) {
        imgpu_op op = imgpu_op_crop(0, 0, 0, 0);
        op.u.crop.gravity = g;
        op.u.crop.size_w = w > 2 ? w - 2 : w;
        op.u.crop.size_h = h > 1 ? h - 1 : h;
        snprintf(buf, sizeof buf, "crop --size %dx%d gravity %d on %s", op.u.crop.size_w, op.u.crop.size_h, g, what);
        check_ops(im, &op, 1, op.u.crop.size_w, op.u.crop.size_h, buf);
    }
}

static void test_trims(const imgpu_image *noise, const char *what)
{
    char buf[200];
    const int c = noise->channels, depth = noise->depth, w = noise->width, h = noise->height;
    const unsigned border = depth == 16 ? 0x1234u : 0x12u;
    /* noise framed by a border of one colour (noise samples equal to it moved off it) */
    imgpu_image *f = imgpu_image_new(w + 7, h + 4, c, depth);
    fill(f, border);
    for (int y = 0; y < h; y++)
        for (int i = 0; i < w * c; i++) {
            unsigned v = imgpu_sample_get(imgpu_image_row(noise, y), depth, (size_t)i);
            imgpu_sample_put(imgpu_image_row(f, y + 3), depth, (size_t)(5 * c + i), v == border ? v + 1 : v);
        }
    snprintf(buf, sizeof buf, "crop --trim of framed %s", what);
    check_trim(f, buf);
    /* one colour: the 1x1 top-left pixel */
    fill(f, border);
    snprintf(buf, sizeof buf, "crop --trim of one colour, %s", what);
    check_trim(f, buf);
    /* one pixel unlike the border in each corner and the middle, differing only by one level
     * in its last sample (alpha where there is one; one byte of the pixel's bytes) */
    const int at[][2] = {{0, 0}, {w + 6, 0}, {0, h + 3}, {w + 6, h + 3}, {(w + 7) / 2, (h + 4) / 2}};
    for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
        fill(f, border);
        imgpu_sample_put(imgpu_image_row(f, at[k][1]), depth, (size_t)(at[k][0] * c + c - 1), border + 1);
        snprintf(buf, sizeof buf, "crop --trim, one pixel at (%d, %d), %s", at[k][0], at[k][1], what);
        check_trim(f, buf);
    }
    imgpu_image_free(f);
}

static void test_refusal(void)
{
    imgpu_image *im = make(40, 30, 3, 8, 7);
    imgpu_op op = imgpu_op_crop(35, 3, 10, 5);
    char cpu_msg[256];
    CHECK(imgpu_pipeline_run(im, &op, 1, IMGPU_DEVICE_CPU, NULL) == NULL);
    snprintf(cpu_msg, sizeof cpu_msg, "%s", imgpu_error_message());
    CHECK(imgpu_pipeline_run(im, &op, 1, IMGPU_DEVICE_CUDA, NULL) == NULL);
    CHECKF(!strcmp(cpu_msg, imgpu_error_message()) && strstr(cpu_msg, "is outside the 40x30 image"),
           "a box outside: CPU '%s', CUDA '%s'", cpu_msg, imgpu_error_message());
    /* after --trim, a box inside the input but outside the trimmed image: each backend's own check */
    fill(im, 9);
    imgpu_op ops[2] = {imgpu_op_crop(0, 0, 0, 0), imgpu_op_crop(0, 0, 2, 2)};
    ops[0].u.crop.trim = 1;
    CHECK(imgpu_pipeline_run(im, ops, 2, IMGPU_DEVICE_CPU, NULL) == NULL);
    snprintf(cpu_msg, sizeof cpu_msg, "%s", imgpu_error_message());
    CHECK(imgpu_pipeline_run(im, ops, 2, IMGPU_DEVICE_CUDA, NULL) == NULL);
    CHECKF(!strcmp(cpu_msg, imgpu_error_message()) && strstr(cpu_msg, "outside the 1x1 image"),
           "after --trim: CPU '%s', CUDA '%s'", cpu_msg, imgpu_error_message());
    imgpu_image_free(im);
}

static void test_chains(uint32_t *seed)
{
    char what[160];
    for (int depth = 8; depth <= 16; depth += 8) {
        /* trim -> rect -> flip */
        imgpu_image *im = make(301, 199, 4, depth, (*seed)++);
        for (int y = 0; y < 199; y++)
            for (int x = 0; x < 301; x++)
                if (x < 20 || y < 11 || x >= 250 || y >= 190)
                    for (int k = 0; k < 4; k++)
                        imgpu_sample_put(imgpu_image_row(im, y), depth, (size_t)(x * 4 + k), 77);
        imgpu_op ops[3] = {imgpu_op_crop(0, 0, 0, 0), imgpu_op_crop(3, 5, 100, 60), imgpu_op_flip(1, 0, 1)};
        ops[0].u.crop.trim = 1;
        snprintf(what, sizeof what, "chain trim -> rect -> flip, %d-bit RGBA", depth);
        check_ops(im, ops, 3, 60, 100, what);
        imgpu_image_free(im);
        /* trim -> resize --fit: a strip whose content is a small square, fitted to 600x600:
         * 600x600 from the trimmed 8x8, far beyond the 600x2 the plan's bound (the strip) gives */
        im = make(2000, 9, 3, depth, (*seed)++);
        for (int y = 0; y < 9; y++)
            for (int x = 0; x < 2000; x++)
                if (x < 700 || x >= 708 || y >= 8)
                    for (int k = 0; k < 3; k++)
                        imgpu_sample_put(imgpu_image_row(im, y), depth, (size_t)(x * 3 + k), 5);
        imgpu_op grow[2] = {imgpu_op_crop(0, 0, 0, 0), imgpu_op_resize(0, 0, IMGPU_RESIZE_NEAREST)};
        grow[0].u.crop.trim = 1;
        grow[1].u.resize.fit_w = 600;
        grow[1].u.resize.fit_h = 600;
        snprintf(what, sizeof what, "chain trim -> resize --fit 600x600 (larger than planned), %d-bit RGB", depth);
        check_ops(im, grow, 2, 600, 600, what);
        imgpu_image_free(im);
        /* rotate -> crop --inner (folded into the rotation) */
        for (int f = IMGPU_FILTER_NEAREST; f <= IMGPU_FILTER_BICUBIC; f++) {
            im = make(123, 77, 2, depth, (*seed)++);
            imgpu_op in[2] = {imgpu_op_rotate(33.0), imgpu_op_crop(0, 0, 0, 0)};
            in[0].u.rotate.filter = (imgpu_filter)f;
            in[1].u.crop.inner = 1;
            snprintf(what, sizeof what, "chain rotate 33 filter %d -> crop --inner, %d-bit gray+alpha", f, depth);
            check_ops(im, in, 2, 0, 0, what);
            imgpu_image_free(im);
        }
    }
}

int main(void)
{
    gpu_require_or_skip();
    const int quick = getenv("IMGPU_TEST_QUICK") != NULL;
    uint32_t seed = 2028;
    char what[96];
    for (int depth = 8; depth <= 16; depth += 8)
        for (int c = 1; c <= 4; c++)
            for (int s = 0; s < NSIZES; s++) {
                if (quick && s_sizes[s][0] * s_sizes[s][1] > 100000)
                    continue;
                imgpu_image *im = make(s_sizes[s][0], s_sizes[s][1], c, depth, seed++);
                snprintf(what, sizeof what, "%dx%d c=%d %d-bit", s_sizes[s][0], s_sizes[s][1], c, depth);
                test_boxes(im, what);
                test_trims(im, what);
                imgpu_image_free(im);
            }
    test_refusal();
    test_chains(&seed);
    imgpu_cuda_shutdown();
    TEST_MAIN_END();
}

/* test_orient.c — imgpu_image_orient (src/io/orient.c) against the EXIF definition itself.
 *
 * The expectation is written from the words of the TIFF/EXIF Orientation tag, not from the
 * code under test: each value says on which side of the displayed image the stored 0th row
 * lies, and on which side the stored 0th column lies (1: top, left; 2: top, right; 3: bottom,
 * right; 4: bottom, left; 5: left, top; 6: right, top; 7: right, bottom; 8: left, bottom).
 * From that pair, forward formulas place every stored pixel (x, y) in the display; the code
 * under test goes the other way (each output pixel fetches its source). Checked on non-square
 * images (5x3, 3x5), single rows and columns and 1x1, at 8 and 16 bits with 1..4 channels, with
 * a padded input stride; then the inverse orientation restores the input; 5 and 7 equal their
 * EXIF descriptions as compositions (mirror left-right, then a quarter turn); bad values fail
 * with a message; the flip op for each orientation gives the same pixels. The OpenCV cross-check (what imread shows) is tests/opencv/opencv_exif_orient.py. */
#include "image.h"
#include "error.h"
#include "ops.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

enum side { TOP, BOTTOM, LEFT, RIGHT };

/* The TIFF 6.0 table: the side of the stored 0th row and of the stored 0th column. */
static const enum side row0_side[9] = {0, TOP, TOP, BOTTOM, BOTTOM, LEFT, RIGHT, RIGHT, LEFT};
static const enum side col0_side[9] = {0, LEFT, RIGHT, RIGHT, LEFT, TOP, TOP, BOTTOM, BOTTOM};

/* Where stored pixel (x, y) of a w x h image lands in the W x H display of orientation o. */
static void lands(int o, int w, int h, int x, int y, int *dx, int *dy, int *W, int *H)
{
    enum side r = row0_side[o], c = col0_side[o];
    if (r == TOP || r == BOTTOM) {   /* stored rows run left-right on the display */
        *W = w;
        *H = h;
        *dy = r == TOP ? y : h - 1 - y;
        *dx = c == LEFT ? x : w - 1 - x;
    } else {                         /* stored rows run top-bottom: a quarter turn */
        *W = h;
        *H = w;
        *dx = r == LEFT ? y : h - 1 - y;
        *dy = c == TOP ? x : w - 1 - x;
    }
}

/* A distinct value for every sample (x, y, k), using both bytes at 16 bits. */
static unsigned value(int depth, int w, int x, int y, int k, int c)
{
    unsigned i = (unsigned)((y * w + x) * c + k);
    return depth == 16 ? 1000u * i + 257u : (i * 4u + 1u) & 255u;
}

/* A w x h image (a view with a stride padded by 7 bytes) holding value() everywhere. */
static imgpu_image *make_input(int w, int h, int c, int depth, unsigned char **buf)
{
    static imgpu_image im;
    size_t bytes = (size_t)(depth / 8);
    im = (imgpu_image){w, h, c, depth, (size_t)w * (size_t)c * bytes + 7, NULL, 0};
    *buf = malloc(im.stride * (size_t)h);
    if (!*buf)
        abort();
    memset(*buf, 0xEE, im.stride * (size_t)h);
    im.data = *buf;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int k = 0; k < c; k++)
                imgpu_sample_put(imgpu_image_row(&im, y), depth, (size_t)x * c + k,
                                 value(depth, w, x, y, k, c));
    return &im;
}

static int same(const imgpu_image *a, const imgpu_image *b)
{
    if (a->width != b->width || a->height != b->height || a->channels != b->channels ||
        a->depth != b->depth)
        return 0;
    size_t row = (size_t)a->width * a->channels * imgpu_image_sample_bytes(a);
    for (int y = 0; y < a->height; y++)
        if (memcmp(imgpu_image_row(a, y), imgpu_image_row(b, y), row) != 0)
            return 0;
    return 1;
}

static void test_definition(void)
{
    const int sizes[][2] = {{5, 3}, {3, 5}, {1, 4}, {4, 1}, {1, 1}, {2, 2}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const int w = sizes[s][0], h = sizes[s][1];
        for (int depth = 8; depth <= 16; depth += 8) {
            for (int c = 1; c <= 4; c++) {
                unsigned char *buf;
                const imgpu_image *in = make_input(w, h, c, depth, &buf);
                for (int o = 1; o <= 8; o++) {
                    imgpu_image *out = imgpu_image_orient(in, o);
                    CHECKF(out != NULL, "orient %d: %s", o, imgpu_error_message());
                    if (!out)
                        continue;
                    int W, H, dx, dy, bad = 0;
                    lands(o, w, h, 0, 0, &dx, &dy, &W, &H);
                    CHECKF(out->width == W && out->height == H,
                           "%dx%d orientation %d: %dx%d, want %dx%d", w, h, o, out->width,
                           out->height, W, H);
                    CHECK(out->channels == c && out->depth == depth && out->owns);
                    CHECK(out->stride == (size_t)W * c * (size_t)(depth / 8));
                    if (out->width != W || out->height != H) {
                        imgpu_image_free(out);
                        continue;
                    }
                    for (int y = 0; y < h; y++)
                        for (int x = 0; x < w; x++) {
                            lands(o, w, h, x, y, &dx, &dy, &W, &H);
                            for (int k = 0; k < c; k++) {
                                unsigned got = imgpu_sample_get(imgpu_image_row(out, dy), depth,
                                                                (size_t)dx * c + k);
                                bad += got != value(depth, w, x, y, k, c);
                            }
                        }
                    CHECKF(bad == 0, "%dx%d c%d %d-bit orientation %d: %d samples misplaced",
                           w, h, c, depth, o, bad);

                    /* the inverse restores the input: 6 and 8 undo each other, the rest
                     * (mirrors, the half turn, transpose, transverse) undo themselves */
                    int inverse = o == 6 ? 8 : o == 8 ? 6 : o;
                    imgpu_image *back = imgpu_image_orient(out, inverse);
                    CHECKF(back && same(back, in), "%dx%d c%d %d-bit: %d then %d", w, h, c,
                           depth, o, inverse);
                    imgpu_image_free(back);
                    imgpu_image_free(out);
                }
                free(buf);
            }
        }
    }
}

/* 5 is "mirror horizontal and rotate 270 CW", 7 "mirror horizontal and rotate 90 CW". */
static void test_compositions(void)
{
    unsigned char *buf;
    const imgpu_image *in = make_input(5, 3, 3, 16, &buf);
    imgpu_image *mirrored = imgpu_image_orient(in, 2);
    imgpu_image *five = imgpu_image_orient(in, 5), *seven = imgpu_image_orient(in, 7);
    imgpu_image *m270 = imgpu_image_orient(mirrored, 8), *m90 = imgpu_image_orient(mirrored, 6);
    CHECK(five && m270 && same(five, m270));
    CHECK(seven && m90 && same(seven, m90));
    /* two quarter turns are a half turn, and four are the identity */
    imgpu_image *q1 = imgpu_image_orient(in, 6), *q2 = imgpu_image_orient(q1, 6);
    imgpu_image *half = imgpu_image_orient(in, 3);
    imgpu_image *q3 = imgpu_image_orient(q2, 6), *q4 = imgpu_image_orient(q3, 6);
    CHECK(q2 && half && same(q2, half));
    CHECK(q4 && same(q4, in));
    imgpu_image *copy = imgpu_image_orient(in, 1);
    CHECK(copy && copy->data != in->data && copy->stride == 5 * 3 * 2 && same(copy, in));
    imgpu_image *all[] = {mirrored, five, seven, m270, m90, q1, q2, half, q3, q4, copy};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        imgpu_image_free(all[i]);
    free(buf);
}

static void test_bad_values(void)
{
    unsigned char *buf;
    const imgpu_image *in = make_input(2, 3, 1, 8, &buf);
    const int bad[] = {0, 9, -1, 1000};
    for (int i = 0; i < 4; i++) {
        imgpu_error_clear();
        CHECK(imgpu_image_orient(in, bad[i]) == NULL && imgpu_error_message()[0]);
    }
    free(buf);
}

/* The flip op for each orientation (imgpu_op_flip_for_orientation: what batch runs on the GPU
 * to turn nvJPEG's decodes upright, issue 30), run by the CPU backend: the pixels
 * imgpu_image_orient gives, every orientation, depth and channel count, odd sizes. */
static void test_flip_op(void)
{
    static const int sizes[][2] = {{5, 3}, {3, 5}, {1, 4}, {4, 1}, {1, 1}, {37, 23}};
    for (int o = 1; o <= 8; o++)
        for (int d = 8; d <= 16; d += 8)
            for (int c = 1; c <= 4; c++)
                for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
                    unsigned char *buf;
                    const imgpu_image *in = make_input(sizes[s][0], sizes[s][1], c, d, &buf);
                    imgpu_image *want = imgpu_image_orient(in, o);
                    const imgpu_op op = imgpu_op_flip_for_orientation(o);
                    imgpu_image *got = imgpu_pipeline_run(in, &op, 1, IMGPU_DEVICE_CPU, NULL);
                    CHECKF(want && got && same(want, got), "flip for orientation %d, %dx%d, %d-bit, %d channels",
                           o, sizes[s][0], sizes[s][1], d, c);
                    imgpu_image_free(want);
                    imgpu_image_free(got);
                    free(buf);
                }
    const imgpu_op none = imgpu_op_flip_for_orientation(0);
    CHECK(!none.u.flip.horizontal && !none.u.flip.vertical && !none.u.flip.transpose);
}

int main(void)
{
    test_definition();
    test_compositions();
    test_bad_values();
    test_flip_op();
    TEST_MAIN_END();
}

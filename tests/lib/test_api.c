/* test_api.c — libimgpu's own additions (include/imgpu/imgpu.h, src/lib/api.c) on the CPU, in every
 * build (the sanitizer builds too): imgpu_image_wrap's checks and its zero-copy view, contexts
 * (a bad device, NULL, CUDA without a GPU failing with the same message each time), run and
 * run_into (a padded output written row by row, nothing past the rows; a wrong shape refused,
 * the output untouched), the histogram, and the version. */
#include <imgpu/imgpu.h>

#include "test_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    /* a 37x23 RGB ramp in caller memory, rows padded to 120 bytes */
    enum { W = 37, H = 23, C = 3, STRIDE = 120 };
    static unsigned char px[H * STRIDE];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W * C; x++)
            px[y * STRIDE + x] = (unsigned char)((x * 7 + y * 13) & 0xff);
    const unsigned char pad = 0xAB;
    for (int y = 0; y < H; y++)
        memset(px + y * STRIDE + W * C, pad, STRIDE - W * C);

    /* wrap: checks */
    CHECK(imgpu_image_wrap(NULL, W, H, C, 8, 0) == NULL && strstr(imgpu_error_message(), "NULL"));
    CHECK(imgpu_image_wrap(px, W, H, C, 8, W * C - 1) == NULL && strstr(imgpu_error_message(), "stride"));
    CHECK(imgpu_image_wrap(px, W, H, 5, 8, 0) == NULL);
    CHECK(imgpu_image_wrap(px, W, H, C, 12, 0) == NULL);
    CHECK(imgpu_image_wrap(px, 0, H, C, 8, 0) == NULL);
    CHECK(imgpu_image_wrap(px + 1, 4, 4, 1, 16, 8) == NULL || ((uintptr_t)(px + 1) & 1) == 0);
    CHECK(imgpu_image_wrap(px, 4, 4, 1, 16, 9) == NULL && strstr(imgpu_error_message(), "aligned"));
    imgpu_image *v = imgpu_image_wrap(px, W, H, C, 8, STRIDE);
    CHECK(v && v->data == px && v->stride == STRIDE && !v->owns);
    imgpu_image *tight = imgpu_image_wrap(px, W, H, C, 8, 0);
    CHECK(tight && tight->stride == (size_t)W * C);
    imgpu_image_free(tight);

    /* contexts */
    CHECK(imgpu_context_create((imgpu_device)7) == NULL && strstr(imgpu_error_message(), "unknown device"));
    imgpu_context_destroy(NULL);
    imgpu_image *r = NULL;
    imgpu_op op = imgpu_op_clahe(3.0, 4, 3, IMGPU_MODE_LUMINANCE);
    CHECK(imgpu_context_run(NULL, v, &op, 1, &r, NULL) == -1 && r == NULL);
    imgpu_context *ctx = imgpu_context_create(IMGPU_DEVICE_CPU);
    CHECK(ctx && imgpu_context_device(ctx) == IMGPU_DEVICE_CPU);
    imgpu_device used = IMGPU_DEVICE_AUTO;
    CHECK(imgpu_context_run(ctx, v, &op, 1, &r, &used) == 0 && r && used == IMGPU_DEVICE_CPU);
    /* the same op on a tight copy gives the same bytes: the view's stride was honoured */
    imgpu_image *copy = imgpu_image_copy(v);
    imgpu_image *want = copy ? imgpu_pipeline_run(copy, &op, 1, IMGPU_DEVICE_CPU, NULL) : NULL;
    CHECK(want && r && want->width == r->width && want->height == r->height);
    int same = want && r;
    for (int y = 0; same && y < H; y++)
        same = !memcmp(imgpu_image_row(want, y), imgpu_image_row(r, y), (size_t)W * C);
    CHECK(same);
    for (int y = 0; y < H; y++)   /* the input was only read */
        CHECK(px[y * STRIDE + W * C] == pad);

    /* run_into: a padded output gets the rows, its padding is left alone */
    static unsigned char o[H * 128];
    memset(o, 0x5A, sizeof o);
    imgpu_image *ov = imgpu_image_wrap(o, W, H, C, 8, 128);
    CHECK(ov && imgpu_context_run_into(ctx, v, &op, 1, ov, NULL) == 0);
    int rows_ok = want != NULL, pad_ok = 1;
    for (int y = 0; rows_ok && y < H; y++) {
        rows_ok = !memcmp(o + y * 128, imgpu_image_row(want, y), (size_t)W * C);
        for (int k = W * C; k < 128; k++)
            pad_ok &= o[y * 128 + k] == 0x5A;
    }
    CHECK(rows_ok && pad_ok);
    /* a wrong shape is refused and the output untouched */
    memset(o, 0x11, sizeof o);
    imgpu_image *small = imgpu_image_wrap(o, W - 1, H, C, 8, 128);
    CHECK(small && imgpu_context_run_into(ctx, v, &op, 1, small, NULL) == -1 &&
          strstr(imgpu_error_message(), "the result is"));
    int untouched = 1;
    for (size_t k = 0; k < sizeof o; k++)
        untouched &= o[k] == 0x11;
    CHECK(untouched);

    /* histogram through the context: every pixel counted once per plane, plus luma */
    imgpu_histogram_full h;
    memset(&h, 0, sizeof h);
    CHECK(imgpu_context_histogram(ctx, v, &h, NULL) == 0 && h.planes == 4 && h.levels == 256);
    uint64_t n = 0;
    for (int k = 0; h.counts && k < 256; k++)
        n += h.counts[k];
    CHECK(n == (uint64_t)W * H);
    imgpu_histogram_full_free(&h);

    /* CUDA without a usable GPU: -1 with the reason, the same on the second call */
    imgpu_context *cu = imgpu_context_create(IMGPU_DEVICE_CUDA);
    imgpu_device resolved;
    if (cu && imgpu_context_resolve(cu, &resolved) < 0) {
        char first[IMGPU_MESSAGE_MAX];
        snprintf(first, sizeof first, "%s", imgpu_error_message());
        imgpu_error_clear();
        imgpu_image *x = NULL;
        CHECK(imgpu_context_run(cu, v, &op, 1, &x, NULL) == -1 && x == NULL);
        CHECKF(first[0] && !strcmp(first, imgpu_error_message()), "'%s' vs '%s'", first, imgpu_error_message());
    } else {
        printf("a usable GPU: the CUDA-failure checks are skipped\n");
    }
    imgpu_context_destroy(cu);

    CHECK(!strcmp(imgpu_version_string(), IMGPU_VERSION_STRING));
    imgpu_image_free(small);
    imgpu_image_free(ov);
    imgpu_image_free(want);
    imgpu_image_free(copy);
    imgpu_image_free(r);
    imgpu_image_free(v);
    imgpu_context_destroy(ctx);
    TEST_MAIN_END();
}

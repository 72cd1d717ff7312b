/* test_plan.c — imgpu_pipeline_plan (ops.h): result shapes equal imgpu_rotate_output_size for
 * ordinary angles, sizes and chains; the --max-pixels boundary (exactly at the limit passes,
 * one pixel over is refused, with the op, the size and the option in the message); a rotation
 * whose bounding box is beyond int is refused rather than wrapped; CLAHE's tile LUTs count
 * (a 16-bit 256x256 grid is 8 GiB even on a 1x1 image) and the --max-memory boundary; the
 * same refusal from imgpu_pipeline_run before it allocates; imgpu_format_check_size. */
#include "error.h"
#include "io.h"
#include "ops.h"
#include "test_util.h"

#include <stdint.h>
#include <string.h>

static int contains(const char *s, const char *sub) { return strstr(s, sub) != NULL; }

int main(void)
{
    static const double angles[] = {0, 1, 33, 45, 89.9, 90, 135, 180, 270, -30, 359.5, 720 + 17};
    static const int sizes[][2] = {{1, 1}, {7, 3}, {640, 480}, {1, 1000}, {4096, 17}};
    const imgpu_limits big = {UINT64_C(1) << 40, UINT64_C(1) << 50};
    imgpu_plan p;

    /* shapes agree with imgpu_rotate_output_size, crop and expand, single ops and a chain */
    for (size_t a = 0; a < sizeof angles / sizeof angles[0]; a++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
            for (int crop = 0; crop < 2; crop++) {
                imgpu_op op = imgpu_op_rotate(angles[a]);
                op.u.rotate.crop = crop;
                int ew, eh;
                imgpu_rotate_output_size(sizes[k][0], sizes[k][1], &op.u.rotate, &ew, &eh);
                int rc = imgpu_pipeline_plan(sizes[k][0], sizes[k][1], 3, 8, &op, 1, &big, "x.png", &p);
                CHECKF(rc == 0 && p.out_w == ew && p.out_h == eh, "angle %g %dx%d crop %d: %dx%d, want %dx%d",
                       angles[a], sizes[k][0], sizes[k][1], crop, p.out_w, p.out_h, ew, eh);
                CHECK(p.channels == 3 && p.depth == 8);
            }
    {
        imgpu_op ops[3] = {imgpu_op_rotate(33), imgpu_op_equalize(IMGPU_MODE_LUMINANCE), imgpu_op_rotate(10)};
        int w1, h1, w2, h2;
        imgpu_rotate_output_size(640, 480, &ops[0].u.rotate, &w1, &h1);
        imgpu_rotate_output_size(w1, h1, &ops[2].u.rotate, &w2, &h2);
        CHECK(imgpu_pipeline_plan(640, 480, 4, 16, ops, 3, &big, NULL, &p) == 0);
        CHECK(p.out_w == w2 && p.out_h == h2 && p.channels == 4 && p.depth == 16);
        /* the worst stage holds at least the input, the last stage's input and its result */
        CHECK(p.peak_bytes >= (uint64_t)640 * 480 * 8 + (uint64_t)w1 * h1 * 8 + (uint64_t)w2 * h2 * 8);
    }

    /* --max-pixels: at the limit passes, one over is refused with a message that says how */
    {
        imgpu_op op = imgpu_op_rotate(33);
        int ow, oh;
        imgpu_rotate_output_size(1000, 1, &op.u.rotate, &ow, &oh);
        imgpu_limits at = {(uint64_t)ow * oh, 0}, under = {(uint64_t)ow * oh - 1, 0};
        CHECK(imgpu_pipeline_plan(1000, 1, 4, 8, &op, 1, &at, "s.png", &p) == 0);
        imgpu_error_clear();
        CHECK(imgpu_pipeline_plan(1000, 1, 4, 8, &op, 1, &under, "s.png", &p) < 0);
        const char *m = imgpu_error_message();
        CHECKF(contains(m, "cannot rotate 's.png'") && contains(m, "--max-pixels") &&
                   contains(m, "IMGPU_MAX_PIXELS"),
               "message: %s", m);
        char dims[32];
        snprintf(dims, sizeof dims, "%dx%d", ow, oh);
        CHECKF(contains(m, dims), "message lacks %s: %s", dims, m);
        /* the strip with the default limits */
        CHECK(imgpu_pipeline_plan(100000, 1, 4, 8, &op, 1, NULL, "strip.png", &p) < 0);
        CHECK(contains(imgpu_error_message(), "over --max-pixels 268435456"));
        /* an input at the limit, unrotated, still passes; a result over it in a chain fails */
        imgpu_op chain[2] = {imgpu_op_equalize(IMGPU_MODE_LUMINANCE), imgpu_op_rotate(45)};
        imgpu_limits l16 = {16384 * 16384, 0};
        CHECK(imgpu_pipeline_plan(16384, 16384, 4, 16, chain, 1, &l16, NULL, &p) == 0);
        CHECK(imgpu_pipeline_plan(16384, 16384, 4, 16, chain, 2, &l16, NULL, &p) < 0);
    }

    /* a bounding box beyond int: refused, never wrapped, whatever the limits */
    {
        imgpu_op op = imgpu_op_rotate(45);
        const imgpu_limits huge = {UINT64_MAX, UINT64_MAX};
        CHECK(imgpu_pipeline_plan(2000000000, 2000000000, 1, 8, &op, 1, &huge, "h.png", &p) < 0);
        CHECKF(contains(imgpu_error_message(), "too large"), "message: %s", imgpu_error_message());
        int ow = 0, oh = 0;
        imgpu_rotate_output_size(2000000000, 2000000000, &op.u.rotate, &ow, &oh);
        CHECK(ow == INT32_MAX && oh == INT32_MAX); /* saturates, no undefined cast */
    }

    /* CLAHE: the 16-bit 256x256 grid is 65536 LUTs of 65536 entries (8 GiB) even for 1x1 */
    {
        imgpu_op op = imgpu_op_clahe(40, 256, 256, IMGPU_MODE_LUMINANCE);
        CHECK(imgpu_pipeline_plan(1, 1, 1, 16, &op, 1, &big, NULL, &p) == 0);
        CHECK(p.peak_bytes >= (UINT64_C(8) << 30) && p.peak_bytes < (UINT64_C(9) << 30));
        CHECK(imgpu_pipeline_plan(1, 1, 1, 16, &op, 1, NULL, "px.png", &p) < 0);
        const char *m = imgpu_error_message();
        CHECKF(contains(m, "'px.png'") && contains(m, "--max-memory") && contains(m, "IMGPU_MAX_MEMORY"),
               "message: %s", m);
        /* the 8-bit grid is 256 times smaller and runs with the default */
        CHECK(imgpu_pipeline_plan(1, 1, 1, 8, &op, 1, NULL, "px.png", &p) == 0);
        /* the memory boundary: the plan's own peak passes, one byte less is refused */
        imgpu_op c8 = imgpu_op_clahe(40, 8, 8, IMGPU_MODE_PER_CHANNEL);
        CHECK(imgpu_pipeline_plan(300, 200, 3, 16, &c8, 1, &big, NULL, &p) == 0);
        imgpu_limits at = {0, p.peak_bytes}, under = {0, p.peak_bytes - 1};
        CHECK(imgpu_pipeline_plan(300, 200, 3, 16, &c8, 1, &at, NULL, &p) == 0);
        CHECK(imgpu_pipeline_plan(300, 200, 3, 16, &c8, 1, &under, NULL, &p) < 0);
        /* the default admits any one op on the largest default image (2^28 RGBA 16-bit) */
        imgpu_op all[3] = {imgpu_op_clahe(40, 8, 8, IMGPU_MODE_LUMINANCE), imgpu_op_rotate(90),
                           imgpu_op_equalize(IMGPU_MODE_PER_CHANNEL)};
        for (int i = 0; i < 3; i++)
            CHECKF(imgpu_pipeline_plan(16384, 16384, 4, 16, &all[i], 1, NULL, NULL, &p) == 0, "op %d: %s", i,
                   imgpu_error_message());
    }

    /* imgpu_pipeline_run refuses before allocating (the process-wide limits) */
    {
        imgpu_image *in = imgpu_image_new(100000, 1, 4, 8);
        imgpu_op op = imgpu_op_rotate(33);
        imgpu_error_clear();
        imgpu_image *out = imgpu_pipeline_run(in, &op, 1, IMGPU_DEVICE_CPU, NULL);
        CHECKF(!out && contains(imgpu_error_message(), "--max-pixels"), "message: %s", imgpu_error_message());
        imgpu_limits small = {0, 1000};
        imgpu_set_limits(&small);
        op = imgpu_op_rotate(90);
        out = imgpu_pipeline_run(in, &op, 1, IMGPU_DEVICE_CPU, NULL);
        CHECKF(!out && contains(imgpu_error_message(), "--max-memory"), "message: %s", imgpu_error_message());
        imgpu_set_limits(NULL);
        out = imgpu_pipeline_run(in, &op, 1, IMGPU_DEVICE_CPU, NULL);
        CHECK(out && out->width == 1 && out->height == 100000);
        imgpu_image_free(out);
        imgpu_image_free(in);
    }

    /* the formats' own limits, from the shape alone */
    {
        char why[200];
        CHECK(imgpu_format_check_size(IMGPU_FORMAT_JPEG, 65535, 10, 3, 8, why, sizeof why) == 0);
        CHECK(imgpu_format_check_size(IMGPU_FORMAT_JPEG, 65536, 10, 3, 8, why, sizeof why) < 0 &&
              contains(why, "65535"));
        CHECK(imgpu_format_check_size(IMGPU_FORMAT_TGA, 10, 65536, 4, 8, why, sizeof why) < 0);
        CHECK(imgpu_format_check_size(IMGPU_FORMAT_PNG, 65536, 10, 4, 8, why, sizeof why) == 0);
        /* JPEG flattens alpha on save (io.c); PNM refuses it */
        CHECK(imgpu_format_check_size(IMGPU_FORMAT_JPEG, 10, 10, 4, 8, why, sizeof why) == 0);
        CHECK(imgpu_format_check_size(IMGPU_FORMAT_PNM, 10, 10, 4, 8, why, sizeof why) < 0 &&
              contains(why, "alpha"));
        CHECK(imgpu_format_check_size(IMGPU_FORMAT_BMP, 40000, 40000, 3, 8, why, sizeof why) < 0);
        CHECK(imgpu_format_check_size(IMGPU_FORMAT_PNG, 24000, 24000, 4, 16, why, sizeof why) < 0);
        CHECK(imgpu_format_check_size(IMGPU_FORMAT_PNG, 16000, 16000, 4, 16, why, sizeof why) == 0);
    }
    TEST_MAIN_END();
}

/* fuzz_ops.c — libFuzzer target: decode, then every CPU operation, then encode to memory.
 * Inputs are limited to 2^16 pixels (256 x 256) so each run stays fast. The operation
 * parameters (rotation angle, filter, canvas, background) are derived from a hash of the
 * input, so one input always runs the same way. Oracles beyond "no sanitizer report":
 * histograms count every pixel, equalize and quarter turns keep the sizes the API promises,
 * and a PNG encode decodes back to exactly the same pixels.
 */
#include "io.h"
#include "error.h"
#include "ops.h"
#include "cpu/cpu.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint32_t hash32(const uint8_t *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

static int same_pixels(const imgpu_image *a, const imgpu_image *b)
{
    if (a->width != b->width || a->height != b->height || a->channels != b->channels)
        return 0;
    for (int y = 0; y < a->height; y++)
        if (memcmp(imgpu_image_row(a, y), imgpu_image_row(b, y),
                   (size_t)a->width * (size_t)a->channels))
            return 0;
    return 1;
}

static void encode_all(const imgpu_image *im)
{
    static const imgpu_format formats[] = { IMGPU_FORMAT_PNG, IMGPU_FORMAT_JPEG,
                                            IMGPU_FORMAT_BMP, IMGPU_FORMAT_TGA,
                                            IMGPU_FORMAT_PNM };
    imgpu_save_options so = { .quality = 80, .png_level = 1, .no_follow = 0 };
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        unsigned char *buf = NULL;
        size_t len = 0;
        if (imgpu_image_encode(im, formats[i], &so, &buf, &len) < 0) {
            /* Only alpha in JPEG/PNM may be refused. */
            if (!((formats[i] == IMGPU_FORMAT_JPEG || formats[i] == IMGPU_FORMAT_PNM) &&
                  imgpu_image_has_alpha(im)))
                abort();
            imgpu_error_clear();
            continue;
        }
        if (formats[i] == IMGPU_FORMAT_PNG) {
            imgpu_image *back = imgpu_image_load_memory(buf, len, "png-roundtrip", NULL);
            if (!back || !same_pixels(im, back))
                abort();
            imgpu_image_free(back);
        }
        free(buf);
    }
}

/* Rotation of im with parameters drawn from h: the reference must succeed, with the output
 * size imgpu_rotate_output_size gives and the input's channels and depth (8 or 16). */
static imgpu_image *rotate_checked(const imgpu_image *im, uint32_t h)
{
    imgpu_op op = imgpu_op_rotate(0.0);
    imgpu_rotate_params *rp = &op.u.rotate;
    /* A quarter of the inputs get an exact multiple of 90 degrees, the rest any angle in
     * (-720, 720) with a tenth-of-a-degree step. */
    rp->angle = (h & 3) == 0 ? 90.0 * (double)((h >> 2) % 9) - 360.0
                             : (double)((int)((h >> 2) % 14400) - 7200) / 10.0;
    rp->filter = (imgpu_filter)((h >> 20) % 3);
    rp->crop = (h >> 22) & 1;
    rp->has_background = (h >> 23) & 1;
    memcpy(rp->background, &h, 4);
    imgpu_image *rot = imgpu_cpu_rotate(im, rp);
    if (!rot)
        abort();
    int ow, oh;
    imgpu_rotate_output_size(im->width, im->height, rp, &ow, &oh);
    if (rot->width != ow || rot->height != oh || rot->channels != im->channels || rot->depth != im->depth)
        abort();
    return rot;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    imgpu_load_options lo = { 0 };
    lo.max_pixels = (uint64_t)1 << 16;
    lo.max_decode_ms = 2000;   /* as fuzz_decode: the watchdog, not libFuzzer, stops slow decodes */
    imgpu_image *im = imgpu_image_load_memory(data, size, "fuzz-input", &lo);
    if (!im) {
        imgpu_error_clear();
        return 0;
    }
    uint32_t h = hash32(data, size);

    if (im->depth == 16) {
        /* 16-bit PNG/PNM (issue 6): the depth-generic reference ops must succeed */
        imgpu_histogram_full hf;
        imgpu_equalize_params ep = { IMGPU_MODE_LUMINANCE, (imgpu_eq_formula)(h % 3) };
        imgpu_clahe_params cp = { 2.0, 1 + (int)(h >> 8) % 5, 1 + (int)(h >> 12) % 5,
                                  IMGPU_MODE_PER_CHANNEL };
        if (imgpu_cpu_histogram_full(im, &hf) < 0)
            abort();
        imgpu_histogram_full_free(&hf);
        imgpu_image *e = imgpu_cpu_equalize_full(im, &ep), *k = imgpu_cpu_clahe(im, &cp);
        if (!e || !k)
            abort();
        imgpu_image_free(e);
        imgpu_image_free(k);
        imgpu_image_free(rotate_checked(im, h)); /* 16-bit rotation, every filter */
        imgpu_image_free(im);
        return 0;
    }

    imgpu_histogram hist;
    if (imgpu_cpu_histogram(im, &hist) < 0)
        abort();
    for (int c = 0; c < im->channels; c++) {
        uint64_t n = 0;
        for (int v = 0; v < 256; v++)
            n += hist.bins[c][v];
        if (n != (uint64_t)im->width * (uint64_t)im->height)
            abort();
    }

    for (int m = 0; m < 2; m++) {
        imgpu_equalize_params ep;
        ep.mode = m ? IMGPU_MODE_PER_CHANNEL : IMGPU_MODE_LUMINANCE;
        imgpu_image *eq = imgpu_cpu_equalize(im, &ep);
        if (!eq || eq->width != im->width || eq->height != im->height ||
            eq->channels != im->channels)
            abort();
        if (m == 0)
            encode_all(eq);
        imgpu_image_free(eq);
    }

    imgpu_image *rot = rotate_checked(im, h);
    encode_all(rot);
    imgpu_image_free(rot);

    encode_all(im);
    imgpu_image_free(im);
    imgpu_error_clear();
    return 0;
}

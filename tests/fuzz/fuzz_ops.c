/* fuzz_ops.c — libFuzzer target: decode, then every operation of the op table on the CPU
 * backend, then encode to memory. Inputs are limited to 2^16 pixels (256 x 256) so each run
 * stays fast. Each op's parameters are drawn from a hash of the input through the table's
 * description of them (an enum's choices, a flag, a WxH grid of 1..5 a side, a colour, a
 * number near its minimum, an angle), so one input always runs the same way and a new op is
 * fuzzed without an edit here. Oracles beyond "no sanitizer report": histograms count every
 * pixel, every op gives the shape the plan (imgpu_pipeline_plan) promised with the input's
 * channels and depth, and a PNG encode decodes back to exactly the same pixels.
 */
#include "io.h"
#include "error.h"
#include "ops.h"
#include "cpu/cpu.h"
#include "op/op_table.h"

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

/* An op of d's kind with each parameter drawn from h (the same h, shifted, for each); a
 * parameter whose bit in `mask` is clear keeps its default (ops whose parameters exclude each
 * other, resize's ways of sizing, are drawn again with fewer set: run_all_ops). */
static imgpu_op draw_op(const imgpu_op_desc *d, uint32_t h, uint32_t mask)
{
    imgpu_op op = imgpu_op_default(d->kind);
    for (int i = 0; i < d->nparams; i++) {
        const imgpu_param *p = &d->params[i];
        if (!(mask >> (i % 32) & 1u))
            continue;
        const uint32_t r = h >> (i % 24) ^ (uint32_t)i * 2654435761u;
        void *v = imgpu_param_ptr(&op, p, p->offset);
        switch (p->type) {
        case IMGPU_PARAM_ENUM: {
            int n = 0;
            while (p->choices[n])
                n++;
            *(int *)v = (int)(r % (uint32_t)n);
            break;
        }
        case IMGPU_PARAM_FLAG:
            if (r & 1)
                *(int *)v = p->flag_value;
            break;
        case IMGPU_PARAM_SIZE: /* small grids: a 16-bit image has 65536 bins a cell */
            *(int *)v = 1 + (int)(r % 5);
            *(int *)imgpu_param_ptr(&op, p, p->offset2) = 1 + (int)((r >> 8) % 5);
            break;
        case IMGPU_PARAM_COLOR:
            if (r & 1) {
                memcpy(v, &h, 4);
                *(int *)imgpu_param_ptr(&op, p, p->offset2) = 1;
            }
            break;
        case IMGPU_PARAM_RECT: /* a small box, inside a small image or not (the plan refuses it) */
            if (r & 1) {
                int *b = v;
                b[0] = (int)(r >> 1 & 3);
                b[1] = (int)(r >> 3 & 3);
                b[2] = 1 + (int)(r >> 5 & 7);
                b[3] = 1 + (int)(r >> 8 & 7);
                *(int *)imgpu_param_ptr(&op, p, p->offset2) = 1;
            }
            break;
        case IMGPU_PARAM_INT:
            *(int *)v = (int)p->min + (int)(r % 8);
            break;
        case IMGPU_PARAM_LEVEL: /* a level or a percentage, low, middle or high in its range */
            *(int *)imgpu_param_ptr(&op, p, p->offset2) = (int)(r & 1);
            *(double *)v = (r & 1 ? 100.0 : p->max) * (double)((r >> 1) % 5) / 4.0;
            break;
        case IMGPU_PARAM_DOUBLE:
            if (p->min < -1e300) /* an angle: a quarter are exact multiples of 90 degrees, the
                                  * rest any in (-720, 720) with a tenth-of-a-degree step */
                *(double *)v = (r & 3) == 0 ? 90.0 * (double)((r >> 2) % 9) - 360.0
                                            : (double)((int)((r >> 2) % 14400) - 7200) / 10.0;
            else
                *(double *)v = p->min + (double)(r % 8);
            break;
        }
    }
    return op;
}

/* Every op of the table on im: the CPU backend must succeed with the plan's shape, the input's
 * channels and depth; 8-bit results are encoded (each format) and a PNG read back. */
static void run_all_ops(const imgpu_image *im, uint32_t h)
{
    for (int k = 0; k < imgpu_op_count(); k++) {
        const imgpu_op_desc *d = imgpu_op_at(k);
        const uint32_t hk = h * (2u * (uint32_t)k + 1u);
        imgpu_op op = draw_op(d, hk, ~0u);
        /* every parameter set may be a contradiction the op refuses (resize: one way of
         * sizing); draw again with some left at their defaults, or skip the op */
        uint32_t m = hk | 1u;
        for (int t = 0; t < 16 && d->check && d->check(&op) < 0; t++) {
            m = m * 1664525u + 1013904223u;
            op = draw_op(d, hk, m >> 7);
        }
        if (d->check && d->check(&op) < 0)
            continue;
        /* an op that cannot start a chain (crop --inner: after a rotation) is the plan's refusal */
        imgpu_op alone = op;
        if (d->chain && d->chain(&alone, NULL) < 0) {
            if (imgpu_pipeline_plan(im->width, im->height, im->channels, im->depth, &op, 1, NULL, NULL, NULL) == 0)
                abort();
            imgpu_error_clear();
            continue;
        }
        imgpu_plan plan;
        if (imgpu_pipeline_plan(im->width, im->height, im->channels, im->depth, &op, 1, NULL, NULL, &plan) < 0) {
            /* a box outside this image (check_shape) is refused, by the backend as well */
            char why[256];
            if (!d->check_shape || d->check_shape(im->width, im->height, &op, why, sizeof why) == 0)
                abort();
            if (imgpu_cpu_run(im, &op) != NULL)
                abort();
            imgpu_error_clear();
            continue;
        }
        imgpu_image *out = imgpu_cpu_run(im, &op);
        /* a data-sized result (crop --trim) is at most the plan's bound */
        const int bound = d->data_sized && d->data_sized(&op);
        if (!out || (bound ? out->width > plan.out_w || out->height > plan.out_h || out->width < 1 || out->height < 1
                           : out->width != plan.out_w || out->height != plan.out_h) ||
            out->channels != im->channels || out->depth != im->depth)
            abort();
        if (im->depth == 8)
            encode_all(out);
        imgpu_image_free(out);
    }
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
        /* 16-bit PNG/PNM (issue 6): the full-resolution histograms, then every op */
        imgpu_histogram_full hf;
        if (imgpu_cpu_histogram_full(im, &hf) < 0)
            abort();
        imgpu_histogram_full_free(&hf);
        run_all_ops(im, h);
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

    run_all_ops(im, h);

    encode_all(im);
    imgpu_image_free(im);
    imgpu_error_clear();
    return 0;
}

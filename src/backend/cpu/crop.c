/* crop.c — the CPU reference of the op "crop" (src/op/crop.c states it): the box from op.h's
 * imgpu_crop_box (checked against this input: after a --trim earlier in the chain the image
 * may be smaller than the plan's bound), or --trim's bounding box of the pixels whose bytes
 * differ from the top-left pixel's (rows split over threads, each part its own box, merged;
 * each row read from both ends inward: the same box as op.h's imgpu_crop_trim_box, which reads
 * every pixel and the GPU test holds both backends to); then the box's rows copied, whole
 * pixels at a time. */
#include "cpu.h"
#include "error.h"
#include "parallel.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const imgpu_image *in;
    imgpu_image *out;
    int box[4];
    int parts_box[IMGPU__CPU_MAX_THREADS][4]; /* --trim: x0, y0, x1, y1 of each part (x1 < 0: none) */
} crop_job;

static size_t pixel_bytes(const imgpu_image *im) { return (size_t)im->channels * (size_t)imgpu_image_sample_bytes(im); }

/* 1 when the px-byte pixel at a equals the one at r (px 1, 2, 3, 4, 6 or 8: constant sizes
 * the compiler turns into loads) */
static inline int same_px(const unsigned char *a, const unsigned char *r, size_t px)
{
    switch (px) {
    case 1: return a[0] == r[0];
    case 2: return !memcmp(a, r, 2);
    case 3: return !memcmp(a, r, 3);
    case 4: return !memcmp(a, r, 4);
    case 6: return !memcmp(a, r, 6);
    case 8: return !memcmp(a, r, 8);
    default: return !memcmp(a, r, px);
    }
}

/* Each row: its first pixel unlike the top-left one from the left, then its last from the
 * right (a border row is read whole; a row with content only up to its first and from its
 * last such pixel): the same box as a scan of every pixel, in less time. */
static void trim_rows(void *ctx, int part, int y0, int y1)
{
    crop_job *j = ctx;
    const size_t px = pixel_bytes(j->in);
    const int w = j->in->width;
    const unsigned char *ref = imgpu_image_row(j->in, 0);
    int bx0 = w, by0 = -1, bx1 = -1, by1 = -1;
    for (int y = y0; y < y1; y++) {
        const unsigned char *row = imgpu_image_row(j->in, y);
        int first = 0;
        while (first < w && same_px(row + (size_t)first * px, ref, px))
            first++;
        if (first == w)
            continue;
        int last = w - 1;
        while (last > first && same_px(row + (size_t)last * px, ref, px))
            last--;
        if (by0 < 0)
            by0 = y;
        by1 = y;
        if (first < bx0)
            bx0 = first;
        if (last > bx1)
            bx1 = last;
    }
    j->parts_box[part][0] = bx0;
    j->parts_box[part][1] = by0;
    j->parts_box[part][2] = bx1;
    j->parts_box[part][3] = by1;
}

static void copy_rows(void *ctx, int part, int y0, int y1)
{
    (void)part;
    const crop_job *j = ctx;
    const size_t px = pixel_bytes(j->in), n = (size_t)j->box[2] * px;
    for (int y = y0; y < y1; y++)
        memcpy(imgpu_image_row(j->out, y), imgpu_image_row(j->in, j->box[1] + y) + (size_t)j->box[0] * px, n);
}

static imgpu_image *run(const imgpu_image *in, const imgpu_op *op)
{
    static crop_job zero;
    crop_job *j = malloc(sizeof *j);
    if (!j) {
        imgpu_error("out of memory");
        return NULL;
    }
    *j = zero;
    j->in = in;
    imgpu_image *out = NULL;
    if (op->u.crop.trim) {
        const int parts = imgpu__cpu_parts(in->height, (size_t)in->width * in->channels, 0);
        imgpu__cpu_parallel_rows(in->height, parts, trim_rows, j);
        int x0 = in->width, y0 = -1, x1 = -1, y1 = -1;
        for (int p = 0; p < parts && p < in->height; p++) {
            const int *b = j->parts_box[p];
            if (b[2] < 0)
                continue;
            if (y0 < 0)
                y0 = b[1];
            y1 = b[3];
            x0 = b[0] < x0 ? b[0] : x0;
            x1 = b[2] > x1 ? b[2] : x1;
        }
        if (x1 < 0) { /* one colour: the top-left pixel */
            j->box[0] = j->box[1] = 0;
            j->box[2] = j->box[3] = 1;
        } else {
            j->box[0] = x0;
            j->box[1] = y0;
            j->box[2] = x1 - x0 + 1;
            j->box[3] = y1 - y0 + 1;
        }
    } else if (imgpu_crop_box(in->width, in->height, &op->u.crop, j->box) < 0) {
        goto done;
    }
    out = imgpu_image_new_unset(j->box[2], j->box[3], in->channels, in->depth);
    if (!out)
        goto done;
    j->out = out;
    imgpu__cpu_parallel_rows(j->box[3], imgpu__cpu_parts(j->box[3], (size_t)j->box[2] * in->channels, 0), copy_rows, j);
done:
    free(j);
    return out;
}

/* The run entry (ops_table.c). */
const imgpu_cpu_op imgpu__cpu_op_crop = {IMGPU_OP_CROP, run};

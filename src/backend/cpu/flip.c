/* flip.c — the CPU reference of the op "flip" (src/op/flip.c states it): each output pixel a
 * copy of the input pixel op.h's imgpu_flip_source names, whole pixels (all channels, 8 or 16
 * bits) at a time; rows split over threads. */
#include "cpu.h"
#include "error.h"
#include "parallel.h"

#include <string.h>

typedef struct {
    const imgpu_image *in;
    imgpu_image *out;
    const imgpu_flip_params *p;
} flip_job;

static void flip_rows(void *ctx, int part, int y0, int y1)
{
    (void)part;
    const flip_job *j = ctx;
    const size_t px = (size_t)j->in->channels * (size_t)imgpu_image_sample_bytes(j->in);
    for (int y = y0; y < y1; y++) {
        unsigned char *dst = imgpu_image_row(j->out, y);
        for (int x = 0; x < j->out->width; x++) {
            int sx, sy;
            imgpu_flip_source(j->p, j->in->width, j->in->height, x, y, &sx, &sy);
            memcpy(dst + (size_t)x * px, imgpu_image_row(j->in, sy) + (size_t)sx * px, px);
        }
    }
}

static imgpu_image *run(const imgpu_image *in, const imgpu_op *op)
{
    const imgpu_flip_params *p = &op->u.flip;
    const int ow = p->transpose ? in->height : in->width, oh = p->transpose ? in->width : in->height;
    imgpu_image *out = imgpu_image_new_unset(ow, oh, in->channels, in->depth);
    if (!out)
        return NULL;
    flip_job j = {in, out, p};
    imgpu__cpu_parallel_rows(oh, imgpu__cpu_parts(oh, (size_t)ow * in->channels, 0), flip_rows, &j);
    return out;
}

/* The run entry (ops_table.c). */
const imgpu_cpu_op imgpu__cpu_op_flip = {IMGPU_OP_FLIP, run};

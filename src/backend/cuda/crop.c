/* crop.c — host side of the op "crop" on the GPU (src/op/crop.c): the box from op.h's
 * imgpu_crop_box (checked against this input, as the CPU does), or --trim's box from
 * kernels/crop.cu (4 ints in the scratch, downloaded: the result's size is the host's to
 * know), then the box's rows copied by one cudaMemcpy2DAsync (a strided device-to-device
 * copy: every output pixel a copy of an input pixel, as on the CPU). --trim reports its
 * smaller shape through e->result; where the caller cannot take one (device images sized in
 * advance) it is refused. */
#include "cuda_util.h"
#include "error.h"
#include "kernels.h"
#include "op.h"
#include "scratch_ops.h"

static int run(imgpu__cuda_op_env *e, const imgpu_op *op, const unsigned char *d_in, unsigned char *d_out,
               imgpu__cuda_shape s, imgpu__cuda_shape o)
{
    int rc = 0, box[4];
    const size_t px = (size_t)s.c * s.b;
    if (op->u.crop.trim) {
        if (!e->result)
            return imgpu_error("crop: --trim is not available here (its size depends on the pixels)");
        int hb[4];
        if ((rc = imgpu__cuda_scratch_grow(e->scratch, 4 * sizeof(int), e->stream, e->held)) != 0)
            return rc;
        int *d_box = (int *)e->scratch->d;
        IMGPU_CUDA_TRY(imgpu_launch_crop_trim_box(d_in, s.w, s.h, s.c, s.b, d_box, e->stream));
        IMGPU_CUDA_TRY(cudaMemcpyAsync(hb, d_box, sizeof hb, cudaMemcpyDeviceToHost, e->stream));
        IMGPU_CUDA_TRY(cudaStreamSynchronize(e->stream));
        if (hb[2] < 0) { /* one colour: the top-left pixel */
            box[0] = box[1] = 0;
            box[2] = box[3] = 1;
        } else {
            box[0] = hb[0];
            box[1] = hb[1];
            box[2] = hb[2] - hb[0] + 1;
            box[3] = hb[3] - hb[1] + 1;
        }
        if (box[0] < 0 || box[1] < 0 || box[2] > o.w || box[3] > o.h || box[0] + box[2] > s.w || box[1] + box[3] > s.h)
            return imgpu_error("crop: a trim box %d,%d,%d,%d for a %dx%d image", box[0], box[1], box[2], box[3], s.w, s.h);
        e->result->w = box[2];
        e->result->h = box[3];
    } else {
        if (imgpu_crop_box(s.w, s.h, &op->u.crop, box) < 0)
            return -1;
        if (box[2] != o.w || box[3] != o.h)
            return imgpu_error("crop: a %dx%d result for a %dx%d box", o.w, o.h, box[2], box[3]);
    }
    IMGPU_CUDA_TRY(cudaMemcpy2DAsync(d_out, (size_t)box[2] * px, d_in + ((size_t)box[1] * s.w + box[0]) * px,
                                     (size_t)s.w * px, (size_t)box[2] * px, (size_t)box[3], cudaMemcpyDeviceToDevice,
                                     e->stream));
    return 0;
fail:
    return rc;
}

/* The run entry (ops_table.c). */
const imgpu__cuda_op imgpu__cuda_op_crop = {IMGPU_OP_CROP, run};

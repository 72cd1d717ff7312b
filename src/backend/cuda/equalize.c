/* equalize.c — host side of equalization on the GPU: 8-bit OpenCV equalization in one fused
 * pass (kernels/equalize.cu: histogram, LUT and map with counters that alternate between two
 * halves, so no memset between images), every other depth and formula through the scratch
 * (equalize_full.c). */
#include "cuda_util.h"
#include "error.h"
#include "kernels.h"
#include "op.h"
#include "scratch_ops.h"

static int run(imgpu__cuda_op_env *e, const imgpu_op *op, const unsigned char *d_in, unsigned char *d_out,
               imgpu__cuda_shape s, imgpu__cuda_shape o)
{
    (void)o;
    int rc = 0;
    const imgpu_equalize_params *p = &op->u.equalize;
    if (s.b == 2 || p->formula != IMGPU_FORMULA_OPENCV)
        return imgpu__cuda_equalize_full(e->scratch, e->held, e->stream, d_in, d_out, s.w, s.h, s.c, 8 * s.b, p);
    const int luma = p->mode == IMGPU_MODE_LUMINANCE && s.c >= 3;
    IMGPU_CUDA_TRY(imgpu_launch_equalize_fused(d_in, d_out, (size_t)s.w * s.h, s.c, luma, e->d_fused, *e->parity,
                                               imgpu__cuda_tuning(), e->stream));
    *e->parity ^= 1;
    return 0;
fail:
    return rc;
}

/* The run entry (ops_table.c). */
const imgpu__cuda_op imgpu__cuda_op_equalize = {IMGPU_OP_EQUALIZE, run};

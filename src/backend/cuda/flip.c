/* flip.c — host side of the op "flip" on the GPU (src/op/flip.c): one gather kernel
 * (kernels/flip.cu), the same index arithmetic as the CPU reference. */
#include "cuda_util.h"
#include "error.h"
#include "kernels.h"
#include "op.h"
#include "scratch_ops.h"

static int run(imgpu__cuda_op_env *e, const imgpu_op *op, const unsigned char *d_in, unsigned char *d_out,
               imgpu__cuda_shape s, imgpu__cuda_shape o)
{
    int rc = 0;
    const imgpu_flip_params *p = &op->u.flip;
    if (o.w != (p->transpose ? s.h : s.w) || o.h != (p->transpose ? s.w : s.h))
        return imgpu_error("flip: a %dx%d result for a %dx%d image", o.w, o.h, s.w, s.h);
    IMGPU_CUDA_TRY(imgpu_launch_flip(d_in, s.w, s.h, s.c, s.b, d_out, p->horizontal, p->vertical, p->transpose,
                                     e->stream));
    return 0;
fail:
    return rc;
}

/* The run entry (ops_table.c). */
const imgpu__cuda_op imgpu__cuda_op_flip = {IMGPU_OP_FLIP, run};

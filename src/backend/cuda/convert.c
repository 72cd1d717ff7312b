/* convert.c — the CUDA side of the op "convert" (src/op/convert.c): a device-to-device copy
 * of the pixels on the session's stream (no kernel). */
#include "cuda_util.h"
#include "error.h"
#include "op.h"
#include "scratch_ops.h"

static int run(imgpu__cuda_op_env *e, const imgpu_op *op, const unsigned char *d_in, unsigned char *d_out,
               imgpu__cuda_shape s, imgpu__cuda_shape o)
{
    int rc = 0;
    (void)op;
    if (o.w != s.w || o.h != s.h || o.c != s.c || o.b != s.b)
        return imgpu_error("convert: a %dx%d result for a %dx%d image", o.w, o.h, s.w, s.h);
    IMGPU_CUDA_TRY(cudaMemcpyAsync(d_out, d_in, (size_t)s.w * s.h * s.c * s.b, cudaMemcpyDeviceToDevice, e->stream));
    return 0;
fail:
    return rc;
}

/* The run entry (ops_table.c). */
const imgpu__cuda_op imgpu__cuda_op_convert = {IMGPU_OP_CONVERT, run};

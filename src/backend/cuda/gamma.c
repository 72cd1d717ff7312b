/* gamma.c — the CUDA run entry of "gamma": the LUT of src/op/gamma.c, computed here on the
 * host exactly as the CPU backend computes it, uploaded and applied (lut_apply.c). */
#include "error.h"
#include "op.h"
#include "scratch_ops.h"

#include <stdlib.h>

static int run(imgpu__cuda_op_env *e, const imgpu_op *op, const unsigned char *d_in, unsigned char *d_out,
               imgpu__cuda_shape s, imgpu__cuda_shape o)
{
    (void)o;
    uint16_t *lut = malloc((s.b == 2 ? 65536u : 256u) * sizeof *lut);
    if (!lut)
        return imgpu_error("gamma: out of memory");
    imgpu_gamma_lut(op->u.gamma.gamma, 8 * s.b, lut);
    const int rc = imgpu__cuda_apply_host_lut(e, d_in, d_out, s, lut, 1);
    free(lut);
    return rc;
}

const imgpu__cuda_op imgpu__cuda_op_gamma = {IMGPU_OP_GAMMA, run};

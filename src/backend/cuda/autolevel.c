/* autolevel.c — the CUDA run entry of "autolevel": the CDFs on the device (tone_cdf.c: the privatized
 * histogram and the block scan), downloaded; the LUT of src/op/autolevel.c computed from them on the
 * host, by the same call the CPU backend makes; uploaded and applied (lut_apply.c). */
#include "error.h"
#include "op.h"
#include "scratch_ops.h"

#include <stdlib.h>

static int run(imgpu__cuda_op_env *e, const imgpu_op *op, const unsigned char *d_in, unsigned char *d_out,
               imgpu__cuda_shape s, imgpu__cuda_shape o)
{
    (void)o;
    int rc = -1, planes, bins;
    uint32_t *cdf = malloc(3 * 65536 * sizeof *cdf);
    uint16_t *lut = malloc(3 * (s.b == 2 ? 65536u : 256u) * sizeof *lut);
    if (!cdf || !lut)
        rc = imgpu_error("autolevel: out of memory");
    else if ((rc = imgpu__cuda_tone_cdf(e, d_in, s, 0, cdf, &planes, &bins)) == 0) {
        const int lp = imgpu_autolevel_lut(&op->u.autolevel, cdf, planes, bins, (uint64_t)s.w * (uint64_t)s.h, 8 * s.b, lut);
        rc = imgpu__cuda_apply_host_lut(e, d_in, d_out, s, lut, lp);
    }
    free(lut);
    free(cdf);
    return rc;
}

const imgpu__cuda_op imgpu__cuda_op_autolevel = {IMGPU_OP_AUTOLEVEL, run};

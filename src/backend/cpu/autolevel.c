/* autolevel.c — the CPU run entry of "autolevel" (src/op/autolevel.c states the formula and
 * builds the LUT from the CDFs tone_cdf.c counts; lut_apply.c maps the colour channels). */
#include "cpu.h"

#include <stdlib.h>

static imgpu_image *run(const imgpu_image *in, const imgpu_op *op)
{
    uint32_t *cdf;
    int planes, bins;
    if (imgpu__cpu_tone_cdf(in, 0, &cdf, &planes, &bins) < 0)
        return NULL;
    uint16_t *lut = imgpu__cpu_lut_alloc(in->depth, planes);
    imgpu_image *out = NULL;
    if (lut) {
        const int lp = imgpu_autolevel_lut(&op->u.autolevel, cdf, planes, bins,
                                           (uint64_t)in->width * (uint64_t)in->height, in->depth, lut);
        out = imgpu__cpu_apply_lut(in, lut, lp);
    }
    free(lut);
    free(cdf);
    return out;
}

const imgpu_cpu_op imgpu__cpu_op_autolevel = {IMGPU_OP_AUTOLEVEL, run};

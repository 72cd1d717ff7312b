/* levels.c — the CPU run entry of "levels" (src/op/levels.c states the formula and builds the
 * LUT; lut_apply.c maps the colour channels through it). */
#include "cpu.h"

#include <stdlib.h>

static imgpu_image *run(const imgpu_image *in, const imgpu_op *op)
{
    uint16_t *lut = imgpu__cpu_lut_alloc(in->depth, 1);
    if (!lut)
        return NULL;
    imgpu_levels_lut(&op->u.levels, in->depth, lut);
    imgpu_image *out = imgpu__cpu_apply_lut(in, lut, 1);
    free(lut);
    return out;
}

const imgpu_cpu_op imgpu__cpu_op_levels = {IMGPU_OP_LEVELS, run};

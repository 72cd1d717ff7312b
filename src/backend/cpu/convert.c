/* convert.c — the CPU side of the op "convert" (src/op/convert.c): a copy of the pixels. */
#include "cpu.h"
#include "parallel.h"

static imgpu_image *run(const imgpu_image *in, const imgpu_op *op)
{
    (void)op;
    return imgpu__cpu_image_copy(in);
}

/* The run entry (ops_table.c). */
const imgpu_cpu_op imgpu__cpu_op_convert = {IMGPU_OP_CONVERT, run};

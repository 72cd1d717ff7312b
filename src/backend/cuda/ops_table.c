/* ops_table.c — the CUDA backend's run table: one entry per op of the registry
 * (src/op/registry.h), each exported by the op's host file (imgpu__cuda_op_<name>). */
#include "error.h"
#include "op/registry.h"
#include "scratch_ops.h"

#define IMGPU_CUDA_DECLARE(name) extern const imgpu__cuda_op imgpu__cuda_op_##name;
IMGPU_OP_REGISTRY(IMGPU_CUDA_DECLARE)
#define IMGPU_CUDA_ENTRY(name) &imgpu__cuda_op_##name,
static const imgpu__cuda_op *const s_ops[] = {IMGPU_OP_REGISTRY(IMGPU_CUDA_ENTRY)};

int imgpu__cuda_run_op(imgpu__cuda_op_env *e, const imgpu_op *op, const unsigned char *d_in, unsigned char *d_out,
                       imgpu__cuda_shape in, imgpu__cuda_shape out)
{
    for (size_t i = 0; i < sizeof s_ops / sizeof s_ops[0]; i++)
        if (s_ops[i]->kind == op->kind)
            return s_ops[i]->run(e, op, d_in, d_out, in, out);
    return imgpu_error("unknown operation %d", (int)op->kind);
}

/* ops_table.c — the CPU backend's run table: one entry per op of the registry
 * (src/op/registry.h), each exported by the op's CPU file (imgpu__cpu_op_<name>). */
#include "cpu.h"
#include "error.h"
#include "op/registry.h"

#define IMGPU_CPU_DECLARE(name) extern const imgpu_cpu_op imgpu__cpu_op_##name;
IMGPU_OP_REGISTRY(IMGPU_CPU_DECLARE)
#define IMGPU_CPU_ENTRY(name) &imgpu__cpu_op_##name,
static const imgpu_cpu_op *const s_ops[] = {IMGPU_OP_REGISTRY(IMGPU_CPU_ENTRY)};

imgpu_image *imgpu_cpu_run(const imgpu_image *in, const imgpu_op *op)
{
    for (size_t i = 0; i < sizeof s_ops / sizeof s_ops[0]; i++)
        if (s_ops[i]->kind == op->kind)
            return s_ops[i]->run(in, op);
    imgpu_error("unknown operation %d", (int)op->kind);
    return NULL;
}

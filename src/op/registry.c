/* registry.c — the op table (op_table.h) built from the registry's list (registry.h), and
 * the lookups every reader of the table uses: by position, by name, by kind. What reads one
 * descriptor (a parameter by name, an enum's word) is param.c's: the op files use it, and
 * this file references theirs. */
#include "op_table.h"
#include "registry.h"

#include <string.h>

#define IMGPU_OP_DECLARE(name) extern const imgpu_op_desc imgpu__op_##name;
IMGPU_OP_REGISTRY(IMGPU_OP_DECLARE)
#define IMGPU_OP_ENTRY(name) &imgpu__op_##name,
static const imgpu_op_desc *const s_ops[] = {IMGPU_OP_REGISTRY(IMGPU_OP_ENTRY)};
#define N_OPS ((int)(sizeof s_ops / sizeof s_ops[0]))

int imgpu_op_count(void) { return N_OPS; }

const imgpu_op_desc *imgpu_op_at(int i) { return i >= 0 && i < N_OPS ? s_ops[i] : NULL; }

const imgpu_op_desc *imgpu_op_find(const char *name)
{
    for (int i = 0; i < N_OPS; i++)
        if (!strcmp(s_ops[i]->name, name))
            return s_ops[i];
    return NULL;
}

const imgpu_op_desc *imgpu_op_desc_of(imgpu_op_kind kind)
{
    for (int i = 0; i < N_OPS; i++)
        if (s_ops[i]->kind == kind)
            return s_ops[i];
    return NULL;
}

imgpu_op imgpu_op_default(imgpu_op_kind kind)
{
    imgpu_op op;
    memset(&op, 0, sizeof op);
    const imgpu_op_desc *d = imgpu_op_desc_of(kind);
    if (d)
        d->defaults(&op);
    else
        op.kind = kind;
    return op;
}

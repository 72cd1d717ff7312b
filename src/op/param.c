/* param.c — what reads one op's descriptor (op_table.h), for the op files themselves and every
 * reader of the table: a parameter by its name or alias, an enum parameter's word. Below the
 * registry (registry.c references the op files, which call these). */
#include "op_table.h"

#include <string.h>

const imgpu_param *imgpu_op_param(const imgpu_op_desc *d, const char *name, size_t len)
{
    for (int i = 0; i < d->nparams; i++) {
        const imgpu_param *p = &d->params[i];
        if (strlen(p->name) == len && !strncmp(p->name, name, len))
            return p;
        for (const char *const *a = p->aliases; a && *a; a++)
            if (strlen(*a) == len && !strncmp(*a, name, len))
                return p;
    }
    return NULL;
}

const char *imgpu_param_choice(const imgpu_op *op, const imgpu_param *p)
{
    const int v = *(const int *)imgpu_param_cptr(op, p->offset);
    for (int i = 0; p->choices && p->choices[i]; i++)
        if (i == v)
            return p->choices[i];
    return "?";
}

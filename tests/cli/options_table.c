/* options_table.c — prints every option the two tables define, one name a line, for
 * tests/cli/options_help.py:
 *   NAME <tab> METAVAR (or "-" for a flag) <tab> FRONTS <tab> SETS <tab> OPS
 * FRONTS: the letters c (imgpu COMMAND), b (batch), v (view). SETS: R (a run option: a limit or
 * --depth), L (a load limit), S (an output option), A (batch's and the viewer's --OP: adds an
 * op). OPS: the ops of the op table (src/op/op_table.h) it is a parameter of, comma-
 * separated. Entries of the same name (--background: an output option and a rotation's
 * parameter; --mode: equalize's and clahe's) are merged into one line. The last line is
 * "#ops <tab> NAME,NAME,...": the op commands. */
#include "cli/options.h"

#include <stdio.h>
#include <string.h>

typedef struct entry {
    const char *name, *metavar;
    unsigned fronts, sets;   /* sets: the IMGPU_OPT_* bits, and 1u << 8 for A */
    char ops[256];
} entry;

static entry s_e[256];
static int s_n;

static entry *get(const char *name)
{
    for (int i = 0; i < s_n; i++)
        if (!strcmp(s_e[i].name, name))
            return &s_e[i];
    entry *e = &s_e[s_n++];
    memset(e, 0, sizeof *e);
    e->name = name;
    return e;
}

static void add_op(entry *e, const char *op)
{
    size_t n = strlen(e->ops);
    snprintf(e->ops + n, sizeof e->ops - n, "%s%s", n ? "," : "", op);
}

int main(void)
{
    for (size_t i = 0; i < imgpu_opt_count; i++) {
        const imgpu_opt *o = &imgpu_opt_table[i];
        entry *e = get(o->name);
        e->metavar = o->metavar;
        e->fronts |= o->fronts;
        e->sets |= o->sets;
    }
    for (int k = 0; k < imgpu_op_count(); k++) {
        const imgpu_op_desc *d = imgpu_op_at(k);
        entry *e = get(d->name);
        const imgpu_param *ap = d->add_param ? imgpu_op_param(d, d->add_param, strlen(d->add_param)) : NULL;
        e->metavar = ap ? ap->metavar : NULL;
        /* the viewer shows the ops with a view_doc (src/viewer/viewer.c); batch takes them all */
        e->fronts |= IMGPU_FRONT_BATCH | (d->view_doc && *d->view_doc ? IMGPU_FRONT_VIEW : 0);
        e->sets |= 1u << 8;   /* its ops column lists the ops with a parameter of the name (gamma),
                               * not the op itself (crop: rotate's --crop is not the crop op's) */
        for (int j = 0; j < d->nparams; j++) {
            const imgpu_param *p = &d->params[j];
            entry *q = get(p->name);
            if (!q->metavar)
                q->metavar = p->metavar;
            q->fronts |= p->fronts;
            add_op(q, d->name);
        }
    }
    for (int i = 0; i < s_n; i++) {
        const entry *e = &s_e[i];
        printf("%s\t%s\t%s%s%s\t%s%s%s%s\t%s\n", e->name, e->metavar ? e->metavar : "-",
               e->fronts & IMGPU_FRONT_CLI ? "c" : "", e->fronts & IMGPU_FRONT_BATCH ? "b" : "",
               e->fronts & IMGPU_FRONT_VIEW ? "v" : "", e->sets & IMGPU_OPT_RUN ? "R" : "",
               e->sets & IMGPU_OPT_LOAD ? "L" : "", e->sets & (1u << 8) ? "A" : "",
               e->sets & IMGPU_OPT_SAVE ? "S" : "", e->ops);
    }
    printf("#ops\t");
    for (int k = 0; k < imgpu_op_count(); k++)
        printf("%s%s", k ? "," : "", imgpu_op_at(k)->name);
    printf("\n");
    return fflush(stdout) ? 1 : 0;
}

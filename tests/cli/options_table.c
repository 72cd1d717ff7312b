/* options_table.c — prints options.h's table, one entry a line, for tests/cli/options_help.py:
 *   NAME <tab> METAVAR (or "-" for a flag) <tab> FRONTS <tab> SETS
 * FRONTS: the letters c (imgpu COMMAND), b (batch), v (view); SETS: e, r, l (equalize,
 * rotate, clahe ops), R (a run option: a limit or --depth), L (a load limit), A (adds an op). */
#include "options.h"

#include <stdio.h>

int main(void)
{
    for (size_t i = 0; i < imgpu_opt_count; i++) {
        const imgpu_opt *o = &imgpu_opt_table[i];
        printf("%s\t%s\t%s%s%s\t%s%s%s%s%s%s%s\n", o->name, o->metavar ? o->metavar : "-",
               o->fronts & IMGPU_FRONT_CLI ? "c" : "", o->fronts & IMGPU_FRONT_BATCH ? "b" : "",
               o->fronts & IMGPU_FRONT_VIEW ? "v" : "", o->sets & IMGPU_OPT_EQ ? "e" : "",
               o->sets & IMGPU_OPT_ROT ? "r" : "", o->sets & IMGPU_OPT_CLAHE ? "l" : "",
               o->sets & IMGPU_OPT_RUN ? "R" : "", o->sets & IMGPU_OPT_LOAD ? "L" : "",
               o->sets & IMGPU_OPT_ADD ? "A" : "", o->sets & IMGPU_OPT_SAVE ? "S" : "");
    }
    return fflush(stdout) ? 1 : 0;
}

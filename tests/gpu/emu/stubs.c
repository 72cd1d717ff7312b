#include <stdarg.h>
#include <stdio.h>
#include "op_table.h"
int imgpu_error(const char *fmt, ...) { va_list a; va_start(a, fmt); vfprintf(stderr, fmt, a); va_end(a); fputc('\n', stderr); return -1; }
const char *imgpu_param_choice(const imgpu_op *op, const imgpu_param *p) { (void)op; (void)p; return "x"; }

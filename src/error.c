/* error.c — the thread-local error message and stderr notices (see error.h). */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char s_message[1024];
static int s_quiet;

int imgpu_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s_message, sizeof s_message, fmt, ap);
    va_end(ap);
    return -1;
}

const char *imgpu_error_message(void) { return s_message; }

void imgpu_error_clear(void) { s_message[0] = '\0'; }

void imgpu_set_quiet(int quiet) { s_quiet = quiet; }

void imgpu_notice(const char *fmt, ...)
{
    if (s_quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("imgpu: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

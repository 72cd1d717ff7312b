/* cli_values.c — see cli_values.h. */
#include "cli_values.h"
#include "error.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Strict decimal integer in [lo, hi]: no leading blanks (strtol would skip them), no
 * trailing junk, no overflow. */
int imgpu__parse_long(const char *s, long lo, long hi, long *out)
{
    if (!*s || isspace((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* Unsigned 64-bit, digits only: strtoull would quietly turn "-1" into 2^64 - 1. */
int imgpu__parse_u64(const char *s, uint64_t *out)
{
    if (!*s)
        return -1;
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p))
            return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int imgpu__parse_double(const char *s, double lo, double hi, double *out)
{
    if (!*s || isspace((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    /* strtod accepts "nan" and "inf"; neither is a value of any option. */
    if (errno || *end || !isfinite(v) || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int imgpu__parse_angle(const char *s, double *out)
{
    return imgpu__parse_double(s, -HUGE_VAL, HUGE_VAL, out);
}

static int hex_digit(int ch)
{
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* COLOR: black | white | transparent | #RGB | #RGBA | #RRGGBB | #RRGGBBAA | R,G,B[,A]. */
int imgpu__parse_color(const char *s, uint8_t rgba[4])
{
    if (!strcasecmp(s, "black")) {
        rgba[0] = rgba[1] = rgba[2] = 0, rgba[3] = 255;
        return 0;
    }
    if (!strcasecmp(s, "white")) {
        rgba[0] = rgba[1] = rgba[2] = rgba[3] = 255;
        return 0;
    }
    if (!strcasecmp(s, "transparent")) {
        rgba[0] = rgba[1] = rgba[2] = rgba[3] = 0;
        return 0;
    }
    if (s[0] == '#') {
        size_t n = strlen(s + 1);
        int d[8];
        if (n != 3 && n != 4 && n != 6 && n != 8)
            return -1;
        for (size_t i = 0; i < n; i++)
            if ((d[i] = hex_digit((unsigned char)s[1 + i])) < 0)
                return -1;
        rgba[3] = 255;
        for (size_t i = 0; i < (n <= 4 ? n : n / 2); i++)
            /* Short forms repeat the digit: #F80 is #FF8800, not #0F0800. */
            rgba[i] = (uint8_t)(n <= 4 ? d[i] * 17 : d[2 * i] * 16 + d[2 * i + 1]);
        return 0;
    }
    /* Decimal list; blanks around the numbers are allowed ("255, 128, 0"). */
    long v[4];
    int k = 0;
    const char *p = s;
    for (;;) {
        char *end;
        while (*p == ' ')
            p++;
        if (!isdigit((unsigned char)*p) || k == 4)
            return -1;
        errno = 0;
        v[k] = strtol(p, &end, 10);
        if (errno || v[k] > 255)
            return -1;
        k++;
        p = end;
        while (*p == ' ')
            p++;
        if (*p == '\0')
            break;
        if (*p++ != ',')
            return -1;
    }
    if (k < 3)
        return -1;
    for (int i = 0; i < 3; i++)
        rgba[i] = (uint8_t)v[i];
    rgba[3] = (uint8_t)(k == 4 ? v[3] : 255);
    return 0;
}

void imgpu__format_double(double x, char *buf, size_t n)
{
    for (int prec = 0; prec <= 17; prec++) {
        snprintf(buf, n, "%.*f", prec, x);
        if (strtod(buf, NULL) == x)
            return;
    }
    snprintf(buf, n, "%.17g", x);
}

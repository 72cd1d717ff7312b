/* imgpu_limits.c — see imgpu_limits.h: the process-wide limits, read from the environment,
 * and the grammars of their values. */
#include "imgpu_limits.h"
#include "error.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static imgpu_limits s_limits; /* 0: the defaults; set before threads start */

void imgpu_set_limits(const imgpu_limits *l)
{
    if (l)
        s_limits = *l;
    else
        memset(&s_limits, 0, sizeof s_limits);
}

static imgpu_limits resolve_limits(const imgpu_limits *l)
{
    imgpu_limits r = l ? *l : s_limits;
    if (!r.max_pixels)
        r.max_pixels = IMGPU_DEFAULT_MAX_PIXELS;
    if (!r.max_memory)
        r.max_memory = IMGPU_DEFAULT_MAX_MEMORY;
    return r;
}

void imgpu_get_limits(imgpu_limits *l) { *l = resolve_limits(NULL); }

int imgpu_limits_from_env(imgpu_limits *l)
{
    const char *v;
    if (!l->max_pixels && (v = getenv("IMGPU_MAX_PIXELS")) != NULL) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(v, &end, 10);
        if (v[0] < '0' || v[0] > '9' || errno || *end || n == 0)
            return imgpu_error("invalid IMGPU_MAX_PIXELS '%s' (a positive whole number)", v);
        l->max_pixels = n;
    }
    if (!l->max_memory && (v = getenv("IMGPU_MAX_MEMORY")) != NULL &&
        imgpu_parse_size(v, &l->max_memory) < 0)
        return imgpu_error("invalid IMGPU_MAX_MEMORY '%s' (a positive number of bytes, optionally "
                           "with K, M or G)", v);
    return 0;
}

void imgpu__fmt_bytes(char *buf, size_t n, double b)
{
    if (b >= 1024.0 * 1024 * 1024)
        snprintf(buf, n, "%.2f GiB", b / (1024.0 * 1024 * 1024));
    else if (b >= 1024.0 * 1024)
        snprintf(buf, n, "%.1f MiB", b / (1024.0 * 1024));
    else if (b >= 1024.0)
        snprintf(buf, n, "%.1f KiB", b / 1024.0);
    else
        snprintf(buf, n, "%.0f bytes", b);
}

/* ---- the grammars of the limits' values ------------------------------------------------ */

int imgpu_parse_size(const char *s, uint64_t *bytes)
{
    if (!s || !*s || *s < '0' || *s > '9')
        return -1;
    uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    unsigned shift = 0;
    if (*s == 'k' || *s == 'K') shift = 10;
    else if (*s == 'm' || *s == 'M') shift = 20;
    else if (*s == 'g' || *s == 'G') shift = 30;
    if (shift)
        s++;
    if (*s || v == 0 || v > (UINT64_MAX >> shift))
        return -1;
    *bytes = v << shift;
    return 0;
}

int imgpu_parse_seconds(const char *s, uint64_t *ms)
{
    if (!s || !*s || ((*s < '0' || *s > '9') && *s != '.'))
        return -1;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    /* Up to a year; "nan", "inf", hex floats and exponents are refused by the first check
     * or here. */
    if (errno || *end || !(v > 0.0) || v > 365.0 * 86400.0)
        return -1;
    uint64_t m = (uint64_t)(v * 1000.0 + 0.5);
    *ms = m ? m : 1;
    return 0;
}


/* cli_values.h — the value grammars shared by the command-line front ends (src/cli/, batch.c,
 * the viewer): strict integers, angles, colours. Each returns 0, or -1 without a message (the
 * caller knows which option it was parsing and says so). The grammars of the limits' values
 * (imgpu_parse_size, imgpu_parse_seconds) are imgpu_limits.h's. */
#ifndef IMGPU_CLI_VALUES_H
#define IMGPU_CLI_VALUES_H

#include <stddef.h>
#include <stdint.h>

/* Strict decimal integer in [lo, hi]: no blanks, no trailing junk, no overflow. */
int imgpu__parse_long(const char *s, long lo, long hi, long *out);
/* Unsigned 64-bit, digits only ("-1" is refused, not wrapped). */
int imgpu__parse_u64(const char *s, uint64_t *out);
/* A finite decimal number in [lo, hi] (strtod's grammar; no leading blanks, no junk). */
int imgpu__parse_double(const char *s, double lo, double hi, double *out);
/* A finite number of degrees. */
int imgpu__parse_angle(const char *s, double *out);
/* COLOR: black | white | transparent | #RGB | #RGBA | #RRGGBB | #RRGGBBAA | R,G,B[,A] (0..255). */
int imgpu__parse_color(const char *s, uint8_t rgba[4]);
/* The other way: the shortest decimal that reads back as x ("40", "2.5", "0.15"), so that a
 * printed command (the viewer's, a manifest's) computes with the same number. */
void imgpu__format_double(double x, char *buf, size_t n);

#endif

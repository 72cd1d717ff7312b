/* error.h — the libvips error rule.
 *
 * Functions return 0 / -1 (constructors: pointer / NULL). The first place that detects
 * a failure records one message with its context (file name, CUDA call, reason) through
 * imgpu_error(); callers above only propagate. main() prints it as "imgpu: <message>".
 * The message buffer is thread-local, so batch worker threads do not trample each other.
 *
 * Messages are safe to print to a terminal: file names and bytes from files go into them,
 * so control bytes (C0 including tab and newline, DEL, the C1 range U+0080..U+009F) and
 * bytes that are not UTF-8 come out as \xNN; printable UTF-8 stays as it is. A message
 * longer than IMGPU_MESSAGE_MAX - 1 bytes is shortened in the middle of its longest
 * '...'-quoted span (the path), with "...", so the start and end of the path and the
 * reason after it survive.
 */
#ifndef IMGPU_ERROR_H
#define IMGPU_ERROR_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define IMGPU_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define IMGPU_PRINTF(a, b)
#endif

/* The size of the message buffer (the longest message is one byte less). */
#define IMGPU_MESSAGE_MAX 1024

/* Record a message (replaces any earlier one). Always returns -1, so callers can write
 * `return imgpu_error("cannot read '%s': %s", path, why);` */
int imgpu_error(const char *fmt, ...) IMGPU_PRINTF(1, 2);
/* The last recorded message, or "" when none. */
const char *imgpu_error_message(void);
void imgpu_error_clear(void);

/* Notices (one line on stderr, e.g. "falling back to the CPU"); silenced by imgpu_set_quiet(1). */
void imgpu_notice(const char *fmt, ...) IMGPU_PRINTF(1, 2);
void imgpu_set_quiet(int quiet);

/* For printing a file name (or any text from outside) anywhere but through imgpu_error:
 * writes s to buf (n bytes) escaped as above, shortened in its middle if it does not fit,
 * and returns buf. Escaping is idempotent: an escaped text comes back unchanged. */
const char *imgpu_escape(const char *s, char *buf, size_t n);
/* Format a message as imgpu_error does, into out (cap bytes), for front ends that print
 * their own lines (usage errors, batch reports). Returns the length written. */
size_t imgpu_format_message(char *out, size_t cap, const char *fmt, ...) IMGPU_PRINTF(3, 4);
size_t imgpu_vformat_message(char *out, size_t cap, const char *fmt, va_list ap);
/* The mechanism under all of these: text escaped into out (cap bytes); too long, it is
 * shortened in the middle of its longest quoted spans when `quoted`, else in its own
 * middle. Returns the length written. */
size_t imgpu_message_fit(char *out, size_t cap, const char *text, int quoted);

#ifdef __cplusplus
}
#endif
#endif

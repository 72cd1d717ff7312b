/* error.h — the libvips error rule.
 *
 * Functions return 0 / -1 (constructors: pointer / NULL). The first place that detects
 * a failure records one message with its context (file name, CUDA call, reason) through
 * imgpu_error(); callers above only propagate. main() prints it as "imgpu: <message>".
 * The message buffer is thread-local, so batch worker threads do not trample each other.
 */
#ifndef IMGPU_ERROR_H
#define IMGPU_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define IMGPU_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define IMGPU_PRINTF(a, b)
#endif

/* Record a message (replaces any earlier one). Always returns -1, so callers can write
 * `return imgpu_error("cannot read '%s': %s", path, why);` */
int imgpu_error(const char *fmt, ...) IMGPU_PRINTF(1, 2);
/* The last recorded message, or "" when none. */
const char *imgpu_error_message(void);
void imgpu_error_clear(void);

/* Notices (one line on stderr, e.g. "falling back to the CPU"); silenced by imgpu_set_quiet(1). */
void imgpu_notice(const char *fmt, ...) IMGPU_PRINTF(1, 2);
void imgpu_set_quiet(int quiet);

#ifdef __cplusplus
}
#endif
#endif

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

/* The length (1..4) of the well-formed UTF-8 character at s (n bytes readable), or 0 when s
 * does not start one. Well-formed is RFC 3629's: the shortest form only (no C0/C1 leads, no
 * overlong E0 80.. or F0 80..), no surrogates (ED A0..ED BF), nothing past U+10FFFF (F4 90..,
 * F5..FF), every continuation byte 80..BF and all of them inside n. An ASCII byte (NUL too)
 * is 1: which characters are safe to print is the caller's question. */
size_t imgpu__utf8_char(const unsigned char *s, size_t n);

/* text[0..n) as the inside of a JSON string (no quotes), into out (cap bytes, NUL-terminated):
 *   "  \                        \"  \\
 *   C0 controls, DEL            \u0000..\u001f, \u007f
 *   C1 controls U+0080..U+009F  \u0080..\u009f  (C2 9B is CSI to many terminals)
 *   U+2028, U+2029              \u2028, \u2029  (line ends to JavaScript)
 *   other well-formed UTF-8     as it is
 *   a byte B that is not part   \udcXX, XX = B (80..ff): U+DC00 + B, Python's "surrogateescape"
 *   of well-formed UTF-8        (PEP 383)
 * So the output is ASCII plus well-formed UTF-8, always a valid JSON string, and nothing is
 * lost or ambiguous: well-formed UTF-8 never holds a surrogate, so \udcXX only ever means the
 * raw byte XX. In Python, json.loads(...).encode("utf-8", "surrogateescape") (os.fsencode for
 * a file name) gives back the original bytes exactly. Strict parsers that refuse a lone
 * surrogate (RFC 8259 leaves them to the parser; I-JSON forbids them) see one only for bytes
 * that were not text to begin with. Whole units only: writes at most 6 bytes per input byte;
 * stops before a unit that does not fit. Returns the input bytes consumed (n when
 * cap >= 6 * n + 1) and sets *written to the bytes written, NUL excluded. */
size_t imgpu__json_escape(char *out, size_t cap, const char *text, size_t n, size_t *written);

#ifdef __cplusplus
}
#endif
#endif

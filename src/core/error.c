/* error.c — the thread-local error message and stderr notices (see error.h).
 *
 * Every message is made safe to print here, once: a message carries file names and bytes
 * from files (PNG chunk types), and either can hold terminal escape sequences. Bytes that
 * must not reach a terminal raw are written as \xNN, and a message longer than the buffer is
 * shortened in the middle of its longest quoted span (the path), so the reason after it
 * always survives.
 */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char s_message[IMGPU_MESSAGE_MAX];
static int s_quiet;

/* ---- UTF-8 (RFC 3629) -------------------------------------------------------------------- */

size_t imgpu__utf8_char(const unsigned char *s, size_t n)
{
    if (n == 0)
        return 0;
    const unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned char lo = 0x80, hi = 0xbf;   /* the range of the second byte */
    if (c >= 0xc2 && c <= 0xdf) {         /* 0xc0, 0xc1: overlong forms of ASCII */
        len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0)
            lo = 0xa0;                    /* below: overlong (< U+0800) */
        else if (c == 0xed)
            hi = 0x9f;                    /* above: the surrogates U+D800..U+DFFF */
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0)
            lo = 0x90;                    /* below: overlong (< U+10000) */
        else if (c == 0xf4)
            hi = 0x8f;                    /* above: past U+10FFFF */
    } else {
        return 0;                         /* a continuation byte, or 0xf5..0xff: never a lead */
    }
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return len;
}

/* ---- JSON strings ------------------------------------------------------------------------- */

size_t imgpu__json_escape(char *out, size_t cap, const char *text, size_t n, size_t *written)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)text;
    size_t p = 0, o = 0;
    while (p < n) {
        char u[8];
        size_t ul = 0, len = imgpu__utf8_char(s + p, n - p);
        unsigned cp = 0;   /* with esc: the code point written as \uXXXX */
        int esc = 0;
        if (len == 0) {                       /* not UTF-8: U+DC00 + the byte (PEP 383) */
            cp = 0xdc00u + s[p];
            esc = 1;
            len = 1;
        } else if (len == 1 && (s[p] == '"' || s[p] == '\\')) {
            u[ul++] = '\\';
            u[ul++] = (char)s[p];
        } else if (len == 1 && (s[p] < 0x20 || s[p] == 0x7f)) {
            cp = s[p];
            esc = 1;
        } else if (len == 2 && s[p] == 0xc2 && s[p + 1] <= 0x9f) {   /* C1: U+0080..U+009F */
            cp = s[p + 1];
            esc = 1;
        } else if (len == 3 && s[p] == 0xe2 && s[p + 1] == 0x80 &&
                   (s[p + 2] == 0xa8 || s[p + 2] == 0xa9)) {          /* U+2028, U+2029 */
            cp = s[p + 2] == 0xa8 ? 0x2028u : 0x2029u;
            esc = 1;
        } else {
            memcpy(u, s + p, len);
            ul = len;
        }
        if (esc) {
            u[0] = '\\';
            u[1] = 'u';
            u[2] = hex[cp >> 12 & 15];
            u[3] = hex[cp >> 8 & 15];
            u[4] = hex[cp >> 4 & 15];
            u[5] = hex[cp & 15];
            ul = 6;
        }
        if (o + ul + 1 > cap)
            break;
        memcpy(out + o, u, ul);
        o += ul;
        p += len;
    }
    if (cap)
        out[o] = '\0';
    *written = o;
    return p;
}

/* ---- escaping and shortening ----------------------------------------------------------- */

/* The bytes of the unit that starts at s (n bytes left; one UTF-8 character, or one byte to
 * escape) and, in *width, how many bytes it takes printed: 4 for every escaped byte
 * ("\xNN"). Escaped: C0 controls including \t and \n (a message is one line), DEL, bytes
 * that are not UTF-8 (imgpu__utf8_char: overlong forms, surrogates, past U+10FFFF), and the
 * C1 controls U+0080..U+009F (0x9b is CSI to many terminals) byte by byte. Valid printable
 * UTF-8 (é, 日本) stays as it is. */
static size_t unit(const unsigned char *s, size_t n, size_t *width)
{
    if (s[0] >= 0x20 && s[0] < 0x7f) {
        *width = 1;
        return 1;
    }
    size_t len = s[0] >= 0x80 ? imgpu__utf8_char(s, n) : 0;
    if (len == 0 || (len == 2 && s[0] == 0xc2 && s[1] <= 0x9f)) {   /* a C1 control */
        *width = 4;
        return 1;
    }
    *width = len;
    return len;
}

/* Printed width of raw[a, b). */
static size_t width_of(const unsigned char *raw, size_t a, size_t b)
{
    size_t w = 0, uw;
    while (a < b) {
        a += unit(raw + a, b - a, &uw);
        w += uw;
    }
    return w;
}

/* The cut that leaves `keep` printed bytes of raw[a, b): the first half and the last half,
 * whole units only. Returns the raw offsets of the part dropped. */
static void cut_middle(const unsigned char *raw, size_t a, size_t b, size_t keep, size_t *c0,
                       size_t *c1)
{
    size_t head = keep / 2, tail = keep - head, w = 0, uw, p = a;
    while (p < b) {
        size_t n = unit(raw + p, b - p, &uw);
        if (w + uw > head)
            break;
        w += uw;
        p += n;
    }
    *c0 = p;
    /* The tail: walk the units from *c0 and remember where the last `tail` bytes start. */
    size_t total = width_of(raw, p, b), skip = total > tail ? total - tail : 0;
    w = 0;
    while (p < b && w < skip) {
        p += unit(raw + p, b - p, &uw);
        w += uw;
    }
    *c1 = p;
}

/* A quoted span: 'text' whose opening quote does not follow a letter or digit and whose
 * closing quote is not followed by one (so the quote in "it's" is part of the text). */
static int is_word(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           c >= 0x80;
}

enum { MAX_SPANS = 8, MIN_KEEP = 24 };

static size_t find_spans(const unsigned char *raw, size_t n, size_t sp[][2])
{
    size_t k = 0;
    for (size_t i = 0; i < n && k < MAX_SPANS; i++) {
        if (raw[i] != '\'' || (i > 0 && is_word(raw[i - 1])))
            continue;
        size_t j = i + 1;
        while (j < n && !(raw[j] == '\'' && (j + 1 == n || !is_word(raw[j + 1]))))
            j++;
        if (j == n)
            break;   /* no closing quote after i, so none after a later opening one either */
        sp[k][0] = i + 1;
        sp[k][1] = j;
        k++;
        i = j;
    }
    return k;
}

size_t imgpu_message_fit(char *out, size_t cap, const char *text, int quoted)
{
    const unsigned char *raw = (const unsigned char *)text;
    size_t n = strlen(text);
    if (cap == 0)
        return 0;
    const size_t room = cap - 1;
    size_t total = width_of(raw, 0, n);
    size_t cut[MAX_SPANS][2];   /* raw ranges printed as "..." */
    size_t ncut = 0;

    if (total > room && quoted) {
        /* Shorten the longest quoted spans, one at a time, down to what is needed (never
         * below MIN_KEEP printed bytes: then the next span, or the fallback below). */
        size_t sp[MAX_SPANS][2], nsp = find_spans(raw, n, sp);
        size_t w[MAX_SPANS];
        int done[MAX_SPANS] = { 0 };
        for (size_t i = 0; i < nsp; i++)
            w[i] = width_of(raw, sp[i][0], sp[i][1]);
        size_t now = total;
        while (now > room) {
            size_t best = nsp;
            for (size_t i = 0; i < nsp; i++)
                if (!done[i] && (best == nsp || w[i] > w[best]))
                    best = i;
            if (best == nsp || w[best] < MIN_KEEP + 3)
                break;
            done[best] = 1;
            size_t excess = now - room;
            size_t keep = w[best] >= excess + 3 + MIN_KEEP ? w[best] - excess - 3 : MIN_KEEP;
            size_t c0, c1;
            cut_middle(raw, sp[best][0], sp[best][1], keep, &c0, &c1);
            now = now - width_of(raw, c0, c1) + 3;
            cut[ncut][0] = c0;
            cut[ncut][1] = c1;
            ncut++;
        }
        if (now > room)
            ncut = 0;   /* spans too short to help: shorten the whole message instead */
        else
            total = now;
    }
    if (total > room && ncut == 0) {
        cut_middle(raw, 0, n, room >= 3 ? room - 3 : 0, &cut[0][0], &cut[0][1]);
        ncut = 1;
    }
    /* Sort the cuts by position (at most MAX_SPANS: insertion sort). */
    for (size_t i = 1; i < ncut; i++)
        for (size_t j = i; j > 0 && cut[j][0] < cut[j - 1][0]; j--) {
            size_t t0 = cut[j][0], t1 = cut[j][1];
            cut[j][0] = cut[j - 1][0];
            cut[j][1] = cut[j - 1][1];
            cut[j - 1][0] = t0;
            cut[j - 1][1] = t1;
        }

    static const char hex[] = "0123456789abcdef";
    size_t o = 0, p = 0, k = 0;
    while (p < n) {
        if (k < ncut && p == cut[k][0]) {
            if (o + 3 <= room) {
                memcpy(out + o, "...", 3);
                o += 3;
            }
            p = cut[k][1];
            k++;
            continue;
        }
        size_t uw, len = unit(raw + p, n - p, &uw);
        if (o + uw > room)
            break;   /* only when room < 3 or so: never cut a unit in half */
        if (uw == 4 && len == 1) {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[raw[p] >> 4];
            out[o++] = hex[raw[p] & 15];
        } else {
            memcpy(out + o, raw + p, len);
            o += len;
        }
        p += len;
    }
    out[o] = '\0';
    return o;
}

/* ---- the message API ------------------------------------------------------------------- */

size_t imgpu_vformat_message(char *out, size_t cap, const char *fmt, va_list ap)
{
    /* Format in full first (on the heap when it is long), so that shortening, not
     * vsnprintf's truncation, decides what is dropped. */
    char local[2048];
    char *raw = local;
    va_list again;
    va_copy(again, ap);
    int len = vsnprintf(local, sizeof local, fmt, ap);
    if (len >= (int)sizeof local) {
        char *big = malloc((size_t)len + 1);
        if (big) {
            vsnprintf(big, (size_t)len + 1, fmt, again);
            raw = big;
        } /* else: the first 2047 bytes, still escaped and shortened below */
    } else if (len < 0) {
        local[0] = '\0';
    }
    va_end(again);
    size_t o = imgpu_message_fit(out, cap, raw, 1);
    if (raw != local)
        free(raw);
    return o;
}

size_t imgpu_format_message(char *out, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t o = imgpu_vformat_message(out, cap, fmt, ap);
    va_end(ap);
    return o;
}

const char *imgpu_escape(const char *s, char *buf, size_t n)
{
    imgpu_message_fit(buf, n, s ? s : "", 0);
    return buf;
}

int imgpu_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    imgpu_vformat_message(s_message, sizeof s_message, fmt, ap);
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
    char line[IMGPU_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    imgpu_vformat_message(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "imgpu: %s\n", line);
}

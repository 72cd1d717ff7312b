/* fuzz_utf8.c — libFuzzer target: the UTF-8 validator and the two escapers of src/core/error.c
 * (imgpu__utf8_char, imgpu__json_escape, imgpu_escape) on any bytes. It holds them to what
 * error.h promises, each checked by code of its own here:
 *   - imgpu__utf8_char at every offset agrees with a decoder written from RFC 3629's
 *     definition (the code point from its bits, then: shortest form, not a surrogate, at most
 *     U+10FFFF), and never reads past n (the input is an exact-size buffer under ASan);
 *   - imgpu__json_escape's output is ASCII plus well-formed UTF-8 with no control character,
 *     C1 control, U+2028/9, unescaped quote or lone backslash, and decodes (\uXXXX as JSON
 *     says, U+DC80..U+DCFF back to the byte) to exactly the input: nothing lost or invented;
 *   - the same output comes whatever the buffer size (whole units only, every byte consumed);
 *   - imgpu_escape's output (the text up to the first NUL) has no control byte, no C1, is
 *     well-formed UTF-8, and escaping it again changes nothing.
 */
#include "error.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* RFC 3629, table 3 read backwards: decode by the lead byte's count of 1 bits, then refuse
 * what the table leaves out. The length of the character at s, or 0. */
static size_t ref_char(const unsigned char *s, size_t n)
{
    if (n == 0)
        return 0;
    size_t len;
    uint32_t cp;
    if (s[0] < 0x80)
        return 1;
    else if ((s[0] & 0xe0) == 0xc0)
        len = 2, cp = s[0] & 0x1fu;
    else if ((s[0] & 0xf0) == 0xe0)
        len = 3, cp = s[0] & 0x0fu;
    else if ((s[0] & 0xf8) == 0xf0)
        len = 4, cp = s[0] & 0x07u;
    else
        return 0;
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3fu);
    }
    static const uint32_t min[5] = { 0, 0, 0x80, 0x800, 0x10000 };
    if (cp < min[len] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        return 0;
    return len;
}

static uint32_t ref_decode(const unsigned char *s, size_t len)
{
    static const unsigned char mask[5] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
    uint32_t cp = s[0] & mask[len];
    for (size_t i = 1; i < len; i++)
        cp = cp << 6 | (s[i] & 0x3fu);
    return cp;
}

static int hexv(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static size_t put_utf8(unsigned char *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xc0 | cp >> 6);
        o[1] = (unsigned char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xe0 | cp >> 12);
        o[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
        o[2] = (unsigned char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (unsigned char)(0xf0 | cp >> 18);
    o[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
    o[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
    o[3] = (unsigned char)(0x80 | (cp & 0x3f));
    return 4;
}

/* The inside of a JSON string back to bytes (U+DC80..U+DCFF: the byte); checks on the way
 * that only what JSON allows and error.h promises is there. Returns the length, or aborts. */
static size_t json_decode(const unsigned char *j, size_t jn, unsigned char *o)
{
    size_t k = 0;
    for (size_t i = 0; i < jn;) {
        unsigned char c = j[i];
        if (c == '\\') {
            if (i + 1 >= jn)
                abort();
            if (j[i + 1] == '"' || j[i + 1] == '\\') {
                o[k++] = j[i + 1];
                i += 2;
                continue;
            }
            if (j[i + 1] != 'u' || i + 6 > jn)
                abort();
            uint32_t cp = 0;
            for (int h = 0; h < 4; h++) {
                int v = hexv(j[i + 2 + h]);
                if (v < 0)
                    abort();
                cp = cp << 4 | (uint32_t)v;
            }
            i += 6;
            if (cp >= 0xdc80 && cp <= 0xdcff)
                o[k++] = (unsigned char)(cp - 0xdc00);   /* a byte that was not UTF-8 */
            else if (cp >= 0xd800 && cp <= 0xdfff)
                abort();   /* no other surrogate, no pair: error.h never writes one */
            else
                k += put_utf8(o + k, cp);
            continue;
        }
        if (c == '"' || c < 0x20 || c == 0x7f)
            abort();   /* raw in a JSON string: invalid, or a control to a terminal */
        size_t len = ref_char(j + i, jn - i);
        if (len == 0)
            abort();   /* the output must be well-formed UTF-8 */
        uint32_t cp = ref_decode(j + i, len);
        if ((cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029)
            abort();   /* C1 controls and JavaScript's line ends go out escaped */
        memcpy(o + k, j + i, len);
        k += len;
        i += len;
    }
    return k;
}

static void check_terminal_text(const char *t)
{
    const unsigned char *s = (const unsigned char *)t;
    size_t n = strlen(t);
    for (size_t i = 0; i < n;) {
        if (s[i] < 0x20 || s[i] == 0x7f)
            abort();
        size_t len = ref_char(s + i, n - i);
        if (len == 0)
            abort();
        uint32_t cp = ref_decode(s + i, len);
        if (cp >= 0x80 && cp <= 0x9f)
            abort();
        i += len;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* 1. the validator at every offset */
    for (size_t i = 0; i < size; i++) {
        size_t got = imgpu__utf8_char(data + i, size - i), want = ref_char(data + i, size - i);
        if (got != want) {
            fprintf(stderr, "offset %zu: imgpu__utf8_char %zu, RFC 3629 %zu\n", i, got, want);
            abort();
        }
    }

    /* 2. JSON: everything in one go, decoded back to the input */
    const size_t cap = size * 6 + 1;
    char *out = malloc(cap), *again = malloc(cap);
    unsigned char *back = malloc(size * 4 + 1);
    if (!out || !again || !back)
        abort();
    size_t w = 0;
    if (imgpu__json_escape(out, cap, (const char *)data, size, &w) != size || w >= cap || out[w])
        abort();
    size_t bn = json_decode((const unsigned char *)out, w, back);
    if (bn != size || memcmp(back, data, size) != 0)
        abort();

    /* 3. the same in pieces through a small buffer (whole units; 7..22 bytes) */
    const size_t small = 7 + (size ? data[0] % 16 : 0);
    char piece[32];
    size_t p = 0, o = 0;
    while (p < size) {
        size_t pw;
        size_t used = imgpu__json_escape(piece, small, (const char *)data + p, size - p, &pw);
        if (used == 0 || pw >= small)
            abort();   /* 7 bytes hold any unit and the NUL */
        memcpy(again + o, piece, pw);
        o += pw;
        p += used;
    }
    if (o != w || memcmp(again, out, w) != 0)
        abort();

    /* 4. the terminal escaper, on the text up to the first NUL */
    char *text = malloc(size + 1);
    if (!text)
        abort();
    memcpy(text, data, size);
    text[size] = '\0';
    size_t tn = strlen(text), tcap = tn * 4 + 1;
    char *shown = malloc(tcap), *twice = malloc(tcap);
    if (!shown || !twice)
        abort();
    imgpu_escape(text, shown, tcap);
    check_terminal_text(shown);
    imgpu_escape(shown, twice, tcap);
    if (strcmp(shown, twice) != 0)
        abort();
    /* shortened (a small buffer): still safe, never a unit cut in half */
    char tiny[40];
    imgpu_escape(text, tiny, sizeof tiny);
    check_terminal_text(tiny);

    free(out);
    free(again);
    free(back);
    free(text);
    free(shown);
    free(twice);
    return 0;
}

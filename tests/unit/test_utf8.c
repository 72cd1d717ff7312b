/* test_utf8.c — src/core/error.c's UTF-8 validator (imgpu__utf8_char) and JSON string escaper
 * (imgpu__json_escape), issue 25: `info --json` took F5..FF as leads and let surrogates and
 * F4 90.. through. The validator against RFC 3629 case by case (its table's edges, the forms
 * it excludes), then over every 1-, 2- and 3-byte sequence and every code point against an
 * encoder written here; the escaper against expectations written out by hand from error.h
 * (\udcXX per byte that is not UTF-8, \u00XX for C0, DEL and C1, \u2028/9, \" and \\), whole
 * units only when its buffer is small. fuzz_utf8 checks the same on any bytes. */
#include "error.h"
#include "test_util.h"

#include <stdint.h>
#include <string.h>

static size_t v(const char *s, size_t n) { return imgpu__utf8_char((const unsigned char *)s, n); }

static void test_table(void)
{
    static const struct {
        const char *s;
        size_t n, want;
        const char *what;
    } t[] = {
        { "A", 1, 1, "ASCII" },
        { "\0", 1, 1, "NUL is ASCII" },
        { "\x7f", 1, 1, "U+007F" },
        { "\xc2\x80", 2, 2, "U+0080" },
        { "\xdf\xbf", 2, 2, "U+07FF" },
        { "\xe0\xa0\x80", 3, 3, "U+0800" },
        { "\xed\x9f\xbf", 3, 3, "U+D7FF" },
        { "\xee\x80\x80", 3, 3, "U+E000" },
        { "\xef\xbf\xbf", 3, 3, "U+FFFF" },
        { "\xf0\x90\x80\x80", 4, 4, "U+10000" },
        { "\xf4\x8f\xbf\xbf", 4, 4, "U+10FFFF" },
        { "\xc3\xa9", 2, 2, "e acute" },
        { "\xf0\x9f\x98\x80", 4, 4, "an emoji" },
        /* overlong forms */
        { "\xc0\x80", 2, 0, "C0 80 (overlong NUL)" },
        { "\xc1\xbf", 2, 0, "C1 BF (overlong U+007F)" },
        { "\xe0\x80\x80", 3, 0, "E0 80 80" },
        { "\xe0\x9f\xbf", 3, 0, "E0 9F BF (overlong U+07FF)" },
        { "\xf0\x80\x80\x80", 4, 0, "F0 80 80 80" },
        { "\xf0\x8f\xbf\xbf", 4, 0, "F0 8F BF BF (overlong U+FFFF)" },
        /* surrogates */
        { "\xed\xa0\x80", 3, 0, "U+D800" },
        { "\xed\xaf\xbf", 3, 0, "U+DBFF" },
        { "\xed\xb0\x80", 3, 0, "U+DC00" },
        { "\xed\xbf\xbf", 3, 0, "U+DFFF" },
        /* past U+10FFFF, and leads RFC 3629 has none of */
        { "\xf4\x90\x80\x80", 4, 0, "U+110000" },
        { "\xf5\x80\x80\x80", 4, 0, "F5" },
        { "\xf7\xbf\xbf\xbf", 4, 0, "F7" },
        { "\xf8\x80\x80", 3, 0, "F8 (taken as a 3-byte lead once)" },
        { "\xf8\x88\x80\x80\x80", 5, 0, "F8, 5 bytes" },
        { "\xfc\x84\x80\x80\x80\x80", 6, 0, "FC, 6 bytes" },
        { "\xfe", 1, 0, "FE" },
        { "\xff", 1, 0, "FF" },
        /* continuation bytes alone, bad continuations, cut short */
        { "\x80", 1, 0, "80 alone" },
        { "\xbf", 1, 0, "BF alone" },
        { "\xc3\x28", 2, 0, "C3 28" },
        { "\xe2\x28\xa1", 3, 0, "E2 28 A1" },
        { "\xe2\x82\x28", 3, 0, "E2 82 28" },
        { "\xf0\x90\x28\xbc", 4, 0, "F0 90 28 BC" },
        { "\xf0\x90\x8c\x28", 4, 0, "F0 90 8C 28" },
        { "\xc2\xc2", 2, 0, "C2 C2" },
        { "\xc2", 1, 0, "C2 at the end" },
        { "\xe2\x82\xac", 2, 0, "E2 82 AC with n = 2: never read past n" },
        { "\xf0\x9f\x98\x80", 3, 0, "a 4-byte character with n = 3" },
        { "A", 0, 0, "n = 0" },
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        CHECKF(v(t[i].s, t[i].n) == t[i].want, "%s: %zu, want %zu", t[i].what, v(t[i].s, t[i].n),
               t[i].want);
}

/* UTF-8 of cp by the table of RFC 3629 section 3 */
static size_t enc(uint32_t cp, unsigned char *o)
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

/* Every code point, encoded here: accepted with its length unless a surrogate (whose encoding
 * the validator must refuse); and no 1-, 2- or 3-byte sequence is accepted that is not the
 * encoding of a code point (counted: 128 + 1920 + 61440 = the well-formed ones). */
static void test_exhaustive(void)
{
    unsigned char b[4];
    size_t wrong = 0;
    for (uint32_t cp = 0; cp <= 0x10ffff; cp++) {
        size_t n = enc(cp, b);
        size_t want = cp >= 0xd800 && cp <= 0xdfff ? 0 : n;
        if (imgpu__utf8_char(b, n) != want && wrong++ < 5)
            CHECKF(0, "U+%04X: %zu, want %zu", (unsigned)cp, imgpu__utf8_char(b, n), want);
        if (n > 1 && imgpu__utf8_char(b, n - 1) != 0 && wrong++ < 5)   /* cut short */
            CHECKF(0, "U+%04X cut to %zu bytes accepted", (unsigned)cp, n - 1);
    }
    CHECKF(wrong == 0, "%zu code points wrong", wrong);
    size_t ok2 = 0, ok3 = 0;
    for (unsigned a = 0; a < 256; a++)
        for (unsigned c = 0; c < 256; c++) {
            unsigned char s[3] = { (unsigned char)a, (unsigned char)c, 0 };
            ok2 += imgpu__utf8_char(s, 2) == 2;
            for (unsigned d = 0; d < 256; d++) {
                s[2] = (unsigned char)d;
                ok3 += imgpu__utf8_char(s, 3) == 3;
            }
        }
    /* 2 bytes: U+0080..U+07FF; 3 bytes: U+0800..U+FFFF less the 2048 surrogates */
    CHECKF(ok2 == 0x800 - 0x80, "2-byte sequences accepted: %zu", ok2);
    CHECKF(ok3 == 0x10000 - 0x800 - 0x800, "3-byte sequences accepted: %zu", ok3);
}

static void json_is(const char *in, size_t n, const char *want)
{
    char out[512];
    size_t w = 0, used = imgpu__json_escape(out, sizeof out, in, n, &w);
    CHECKF(used == n && w == strlen(want) && strcmp(out, want) == 0, "got '%s' (%zu of %zu), want '%s'",
           out, used, n, want);
}

#define J(lit, want) json_is(lit, sizeof lit - 1, want)

static void test_json(void)
{
    J("plain.png", "plain.png");
    J("q\"b\\s/", "q\\\"b\\\\s/");
    J("\x01\x1f\x7f\t\n", "\\u0001\\u001f\\u007f\\u0009\\u000a");
    J("\0x", "\\u0000x");
    /* C1 controls as their code point; NBSP (C2 A0) is printable */
    J("\xc2\x80\xc2\x9b\xc2\x9f\xc2\xa0", "\\u0080\\u009b\\u009f\xc2\xa0");
    J("\xe2\x80\xa8\xe2\x80\xa9\xe2\x80\xa7", "\\u2028\\u2029\xe2\x80\xa7");
    /* well-formed UTF-8 as it is */
    J("caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf", "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf");
    /* the names of issue 25: one \udcXX per byte that is not part of well-formed UTF-8 */
    J("bad\xf8\x80\x80.png", "bad\\udcf8\\udc80\\udc80.png");
    J("sur\xed\xa0\x80.png", "sur\\udced\\udca0\\udc80.png");
    J("big\xf4\x90\x80\x80.png", "big\\udcf4\\udc90\\udc80\\udc80.png");
    J("ovl\xc0\xaf\xe0\x80\xaf", "ovl\\udcc0\\udcaf\\udce0\\udc80\\udcaf");
    J("\xff\xfe", "\\udcff\\udcfe");
    J("raw\x9b", "raw\\udc9b");
    /* a bad byte does not swallow the good character after it */
    J("\xe2\x82\xc3\xa9", "\\udce2\\udc82\xc3\xa9");
    J("\xe2\x82", "\\udce2\\udc82");
    /* the string ends inside a character: the bytes before n only */
    json_is("\xe2\x82\xac", 2, "\\udce2\\udc82");
    J("", "");
}

static void test_json_small_buffer(void)
{
    char out[16];
    size_t w = 99;
    /* 7 bytes hold one \udcXX and the NUL, not two */
    size_t used = imgpu__json_escape(out, 7, "\xff\xff", 2, &w);
    CHECKF(used == 1 && w == 6 && !strcmp(out, "\\udcff"), "used %zu, wrote %zu '%s'", used, w, out);
    /* a unit that does not fit is not cut: nothing of the 4-byte character */
    used = imgpu__json_escape(out, 4, "\xf0\x9f\x98\x80", 4, &w);
    CHECKF(used == 0 && w == 0 && out[0] == '\0', "used %zu, wrote %zu", used, w);
    used = imgpu__json_escape(out, 5, "\xf0\x9f\x98\x80", 4, &w);
    CHECKF(used == 4 && w == 4, "used %zu, wrote %zu", used, w);
    used = imgpu__json_escape(out, 3, "ab\"", 3, &w);
    CHECKF(used == 2 && w == 2 && !strcmp(out, "ab"), "used %zu, wrote %zu '%s'", used, w, out);
}

/* imgpu_escape (the terminal's) takes its verdict from the same validator */
static void test_terminal(void)
{
    char out[256];
    CHECK(!strcmp(imgpu_escape("bad\xf8\x80\x80.png", out, sizeof out), "bad\\xf8\\x80\\x80.png"));
    CHECK(!strcmp(imgpu_escape("\xed\xa0\x80|\xf4\x90\x80\x80", out, sizeof out),
                  "\\xed\\xa0\\x80|\\xf4\\x90\\x80\\x80"));
    CHECK(!strcmp(imgpu_escape("\x1b]0;x\x07\xc2\x9b", out, sizeof out), "\\x1b]0;x\\x07\\xc2\\x9b"));
    CHECK(!strcmp(imgpu_escape("caf\xc3\xa9 \xf4\x8f\xbf\xbf", out, sizeof out), "caf\xc3\xa9 \xf4\x8f\xbf\xbf"));
}

int main(void)
{
    test_table();
    test_exhaustive();
    test_json();
    test_json_small_buffer();
    test_terminal();
    TEST_MAIN_END();
}

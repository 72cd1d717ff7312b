/* test_error.c — what src/core/error.c makes of a message before anyone prints it: bytes that
 * must not reach a terminal raw come out as \xNN (printable UTF-8 stays), and a message too
 * long for the buffer loses the middle of its path, never the reason after it. The
 * expectations are written out by hand from the rule in error.h. */
#include "error.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

static int ends_with(const char *s, const char *end)
{
    size_t a = strlen(s), b = strlen(end);
    return a >= b && memcmp(s + a - b, end, b) == 0;
}

static int starts_with(const char *s, const char *start)
{
    return strncmp(s, start, strlen(start)) == 0;
}

/* A path of `n` bytes of directories of 99 letters each ('a'..'z' cycling, so a piece of it
 * names its place), then "/last-component.png". */
static char *long_path(size_t n)
{
    char *p = malloc(n + 32);
    size_t i = 0;
    while (i < n) {
        p[i] = (i % 100 == 0) ? '/' : (char)('a' + (i / 100) % 26);
        i++;
    }
    strcpy(p + i, "/last-component.png");
    return p;
}

static void check_no_raw_control(const char *m, const char *what)
{
    const unsigned char *p = (const unsigned char *)m;
    while (*p && !(*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)))
        p++;
    CHECKF(*p == 0, "%s: raw byte 0x%02x at %zu", what, *p, (size_t)(p - (const unsigned char *)m));
}

static void test_long_path_keeps_reason(void)
{
    char *path = long_path(1500);
    imgpu_error("cannot read '%s': %s", path, "No such file or directory");
    const char *m = imgpu_error_message();
    CHECKF(strlen(m) <= IMGPU_MESSAGE_MAX - 1, "length %zu", strlen(m));
    CHECKF(strlen(m) >= IMGPU_MESSAGE_MAX - 8, "shortened more than needed: %zu", strlen(m));
    CHECKF(ends_with(m, "/last-component.png': No such file or directory"), "%s", m + strlen(m) - 60);
    char head[200];
    snprintf(head, sizeof head, "cannot read '%.150s", path);
    CHECKF(starts_with(m, head), "%.200s", m);
    CHECK(strstr(m, "...") != NULL);
    free(path);
}

static void test_two_long_paths(void)
{
    char *a = long_path(900), *b = long_path(800);
    imgpu_error("cannot rename '%s' to '%s': %s", a, b, "Permission denied");
    const char *m = imgpu_error_message();
    CHECKF(strlen(m) <= IMGPU_MESSAGE_MAX - 1, "length %zu", strlen(m));
    CHECKF(ends_with(m, "/last-component.png': Permission denied"), "%s", m);
    CHECK(strstr(m, "/last-component.png' to '/aaa") != NULL);   /* both ends of both */
    CHECK(starts_with(m, "cannot rename '/aaaa"));
    free(a);
    free(b);
}

static void test_quote_inside_path(void)
{
    char *tail = long_path(1500);
    char *path = malloc(strlen(tail) + 32);
    sprintf(path, "/data/it's here%s", tail);
    imgpu_error("cannot read '%s': %s", path, "corrupt PNG data (bad zlib header)");
    const char *m = imgpu_error_message();
    CHECKF(strlen(m) <= IMGPU_MESSAGE_MAX - 1, "length %zu", strlen(m));
    CHECKF(starts_with(m, "cannot read '/data/it's here/aaa"), "%.80s", m);
    CHECKF(ends_with(m, "component.png': corrupt PNG data (bad zlib header)"), "%s", m);
    free(path);
    free(tail);
}

static void test_no_quotes(void)
{
    char body[3000];
    memset(body, 'x', sizeof body - 1);
    body[sizeof body - 1] = '\0';
    imgpu_error("START %s END", body);
    const char *m = imgpu_error_message();
    CHECKF(strlen(m) <= IMGPU_MESSAGE_MAX - 1, "length %zu", strlen(m));
    CHECK(starts_with(m, "START xxx"));
    CHECK(ends_with(m, "xxx END"));
    CHECK(strstr(m, "...") != NULL);
}

static void test_escaping(void)
{
    /* C0 controls, tab, newline, DEL, a C1 control in UTF-8 (U+009B, CSI), a lone 0x9b, an
     * overlong '/', a UTF-16 surrogate, a sequence cut short at the end */
    imgpu_error("cannot read '%s': %s", "a\x1b[31mb\tc\nd\x7f" "e\xc2\x9b" "f\x9bg\xc0\xafh\xed\xa0\x80i\xe6\x97",
                "x");
    const char *m = imgpu_error_message();
    CHECKF(strcmp(m, "cannot read 'a\\x1b[31mb\\x09c\\x0ad\\x7fe\\xc2\\x9bf\\x9bg\\xc0\\xafh"
                     "\\xed\\xa0\\x80i\\xe6\\x97': x") == 0, "%s", m);
    check_no_raw_control(m, "escaped");

    /* printable UTF-8 (2, 3 and 4 bytes) is left alone */
    imgpu_error("cannot read '%s': %s", "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x99\x82 \xc2\xa0", "y");
    CHECKF(strcmp(imgpu_error_message(),
                  "cannot read 'caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x99\x82 \xc2\xa0': y") == 0,
           "%s", imgpu_error_message());

    /* escaping is idempotent: an escaped text comes back the same */
    char once[256], twice[256];
    imgpu_escape("\x1b]0;title\x07 \xff", once, sizeof once);
    CHECKF(strcmp(once, "\\x1b]0;title\\x07 \\xff") == 0, "%s", once);
    imgpu_escape(once, twice, sizeof twice);
    CHECK(strcmp(once, twice) == 0);
}

/* Shortening cuts between whole characters and whole escapes, never inside one. */
static void test_cut_at_unit_boundaries(void)
{
    static const char nichi[] = "\xe6\x97\xa5";   /* 日 */
    char *path = malloc(3 * 600 + 1);
    for (int i = 0; i < 600; i++)
        memcpy(path + 3 * i, nichi, 3);
    path[3 * 600] = '\0';
    imgpu_error("cannot read '%s': %s", path, "reason");
    const char *m = imgpu_error_message();
    CHECK(ends_with(m, "': reason"));
    CHECK(strlen(m) <= IMGPU_MESSAGE_MAX - 1);
    const char *q = strchr(m, '\'') + 1, *e = strrchr(m, '\'');
    size_t runs = 0;
    for (const char *p = q; p < e;) {
        if (strncmp(p, "...", 3) == 0) {
            p += 3;
            runs++;
        } else if (strncmp(p, nichi, 3) == 0) {
            p += 3;
        } else {
            CHECKF(0, "split character at %zu", (size_t)(p - m));
            break;
        }
    }
    CHECK(runs == 1);
    free(path);

    char *esc = malloc(1500 + 1);
    memset(esc, 0x1b, 1500);
    esc[1500] = '\0';
    imgpu_error("cannot read '%s': %s", esc, "reason");
    m = imgpu_error_message();
    CHECK(ends_with(m, "': reason"));
    CHECK(strlen(m) <= IMGPU_MESSAGE_MAX - 1);
    q = strchr(m, '\'') + 1;
    e = strrchr(m, '\'');
    runs = 0;
    for (const char *p = q; p < e;) {
        if (strncmp(p, "...", 3) == 0) {
            p += 3;
            runs++;
        } else if (strncmp(p, "\\x1b", 4) == 0) {
            p += 4;
        } else {
            CHECKF(0, "split escape at %zu", (size_t)(p - m));
            break;
        }
    }
    CHECK(runs == 1);
    check_no_raw_control(m, "escapes shortened");
    free(esc);
}

static void test_escape_small_buffer(void)
{
    char buf[16];
    imgpu_escape("/a/very/long/file/name.png", buf, sizeof buf);
    CHECKF(strlen(buf) <= 15, "%s", buf);
    CHECKF(starts_with(buf, "/a/ve") && ends_with(buf, "e.png") && strstr(buf, "...") != NULL,
           "%s", buf);
    imgpu_escape("short", buf, sizeof buf);
    CHECK(strcmp(buf, "short") == 0);
}

int main(void)
{
    test_long_path_keeps_reason();
    test_two_long_paths();
    test_quote_inside_path();
    test_no_quotes();
    test_escaping();
    test_cut_at_unit_boundaries();
    test_escape_small_buffer();
    TEST_MAIN_END();
}

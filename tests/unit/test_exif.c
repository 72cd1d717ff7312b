/* test_exif.c — the EXIF reader and editor (src/io/exif.h) on blobs built here byte by byte:
 * both byte orders with every orientation 1..8, Make/Model/date extraction (trimming, no NUL,
 * inline text, cut to fit, DateTimeOriginal over DateTime), the pixel size as SHORT and LONG,
 * GPS presence; the in-place rewrites of orientation and pixel size, then a re-parse, and
 * that nothing else changed; and malformed blobs that must come back safely: every truncation
 * of a valid blob, bad headers, IFD0 out of range, values and sub-IFDs out of range, 32-bit
 * offset + count wrap-around, huge counts, wrong types, IFD pointers back to a visited IFD,
 * an entry count larger than the blob, and the entry budget; the rebuild (imgpu_exif_rebuild:
 * nested and foreign pointers dropped, the parse's fields kept, an Orientation out of range
 * dropped, a keep list, a directory other than the header's, the value budget, the same bytes
 * when rebuilt again). Each blob is copied to a buffer of exactly its size, so an ASan build
 * sees any read past its end. */
#include "exif.h"
#include "error.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

/* ---- a TIFF writer for the tests ------------------------------------------------------ */

/* value placeholders the writer replaces with the offset of that IFD */
#define AT_EXIF 0xFFFFFF01u
#define AT_GPS 0xFFFFFF02u
#define AT_IFD0 0xFFFFFF03u

enum { ASCII = 2, SHORT = 3, LONG = 4, UNDEF = 7 };

typedef struct ent {
    unsigned tag, type;
    uint32_t count;   /* 0: strlen(text) + 1 for text, 1 otherwise */
    uint32_t value;   /* SHORT/LONG value, an AT_* placeholder, or a raw offset (raw_offset) */
    const char *text; /* ASCII bytes (count of them are written) */
    int raw_offset;   /* 1: write `value` into the field as is, even for out-of-line text */
} ent;

typedef struct blob {
    unsigned char p[1 << 17];
    size_t n;
    int be;
    size_t ifd0, exif, gps;   /* where the writer put each IFD (0: none) */
} blob;

static void w16(blob *b, size_t at, unsigned v)
{
    b->p[at + (b->be ? 0 : 1)] = (unsigned char)(v >> 8);
    b->p[at + (b->be ? 1 : 0)] = (unsigned char)v;
}

static void w32(blob *b, size_t at, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b->p[at + (size_t)(b->be ? 3 - i : i)] = (unsigned char)(v >> 8 * i);
}

static unsigned r16(const blob *b, size_t at)
{
    return b->be ? (unsigned)b->p[at] << 8 | b->p[at + 1] : (unsigned)b->p[at + 1] << 8 | b->p[at];
}

static uint32_t count_of(const ent *e)
{
    if (e->count)
        return e->count;
    return e->type == ASCII ? (uint32_t)strlen(e->text) + 1 : 1;
}

/* Out-of-line data goes after all IFDs, from *data. */
static size_t write_ifd(blob *b, size_t at, const ent *es, int n, size_t *data)
{
    w16(b, at, (unsigned)n);
    for (int i = 0; i < n; i++) {
        const ent *e = &es[i];
        size_t q = at + 2 + 12 * (size_t)i;
        uint32_t count = count_of(e);
        w16(b, q, e->tag);
        w16(b, q + 2, e->type);
        w32(b, q + 4, count);
        if (e->type == ASCII) {
            /* an explicit count copies that many bytes of text (a NUL inside it, or none) */
            size_t len = e->count ? e->count : strlen(e->text) + 1;
            if (count <= 4) {
                memcpy(b->p + q + 8, e->text, len);
            } else if (e->raw_offset) {
                w32(b, q + 8, e->value);
            } else {
                w32(b, q + 8, (uint32_t)*data);
                memcpy(b->p + *data, e->text, len);
                *data += count;
            }
        } else if (e->type == SHORT && !e->raw_offset) {
            w16(b, q + 8, e->value);
        } else {
            w32(b, q + 8, e->value);
        }
    }
    w32(b, at + 2 + 12 * (size_t)n, 0);
    return at + 2 + 12 * (size_t)n + 4;
}

/* header, IFD0, the Exif IFD (if ne >= 0), the GPS IFD (if ng >= 0), then the text */
static void build(blob *b, int be, const ent *ifd0, int n0, const ent *exif, int ne,
                  const ent *gps, int ng)
{
    memset(b, 0, sizeof *b);
    b->be = be;
    memcpy(b->p, be ? "MM\0*" : "II*\0", 4);
    b->ifd0 = 8;
    w32(b, 4, 8);
    size_t at = 8 + 2 + 12 * (size_t)n0 + 4;
    if (ne >= 0) {
        b->exif = at;
        at += 2 + 12 * (size_t)ne + 4;
    }
    if (ng >= 0) {
        b->gps = at;
        at += 2 + 12 * (size_t)ng + 4;
    }
    size_t data = at;
    const ent *lists[3] = {ifd0, exif, gps};
    int counts[3] = {n0, ne, ng};
    size_t where[3] = {b->ifd0, b->exif, b->gps};
    for (int k = 0; k < 3; k++) {
        if (counts[k] < 0)
            continue;
        ent tmp[64];
        for (int i = 0; i < counts[k]; i++) {
            tmp[i] = lists[k][i];
            if (tmp[i].value == AT_EXIF)
                tmp[i].value = (uint32_t)b->exif;
            else if (tmp[i].value == AT_GPS)
                tmp[i].value = (uint32_t)b->gps;
            else if (tmp[i].value == AT_IFD0)
                tmp[i].value = (uint32_t)b->ifd0;
        }
        write_ifd(b, where[k], tmp, counts[k], &data);
    }
    b->n = data;
}

/* The blob in a heap buffer of exactly its size (ASan sees a read one past the end). */
static unsigned char *exact(const unsigned char *p, size_t n)
{
    unsigned char *q = malloc(n ? n : 1);
    if (!q)
        abort();
    memcpy(q, p, n);
    return q;
}

static int parse(const unsigned char *p, size_t n, imgpu_exif_info *info)
{
    unsigned char *q = exact(p, n);
    memset(info, 0x5A, sizeof *info);
    int rc = imgpu_exif_parse(q, n, info);
    free(q);
    return rc;
}

/* 1 when every text field is NUL-terminated inside its array */
static int texts_terminated(const imgpu_exif_info *i)
{
    return memchr(i->make, 0, sizeof i->make) && memchr(i->model, 0, sizeof i->model) &&
           memchr(i->datetime_original, 0, sizeof i->datetime_original);
}

/* ---- a full blob ------------------------------------------------------------------------ */

static void full_blob(blob *b, int be, unsigned orientation)
{
    const ent ifd0[] = {
        {0x010F, ASCII, 0, 0, "Canon", 0},
        {0x0110, ASCII, 0, 0, "Canon EOS 5D Mark IV", 0},
        {0x0112, SHORT, 1, orientation, NULL, 0},
        {0x011A, 5, 1, 0, NULL, 0},   /* XResolution: a RATIONAL pointing at offset 0, unread */
        {0x0132, ASCII, 0, 0, "2021:02:03 04:05:06", 0},
        {0x8769, LONG, 1, AT_EXIF, NULL, 0},
        {0x8825, LONG, 1, AT_GPS, NULL, 0},
    };
    const ent exif[] = {
        {0x9003, ASCII, 0, 0, "2020:01:02 03:04:05", 0},
        {0xA002, SHORT, 1, 4032, NULL, 0},
        {0xA003, LONG, 1, 3024, NULL, 0},
    };
    const ent gps[] = {
        {0x0000, 1, 4, 0x00000302, NULL, 0},   /* GPSVersionID 2.3.0.0 (BYTE x4, inline) */
    };
    build(b, be, ifd0, 7, exif, 3, gps, 1);
}

static void check_full(const imgpu_exif_info *i, int orientation, const char *what)
{
    CHECKF(i->orientation == orientation, "%s: orientation %d, want %d", what, i->orientation,
           orientation);
    CHECKF(strcmp(i->make, "Canon") == 0, "%s: make '%s'", what, i->make);
    CHECKF(strcmp(i->model, "Canon EOS 5D Mark IV") == 0, "%s: model '%s'", what, i->model);
    CHECKF(strcmp(i->datetime_original, "2020:01:02 03:04:05") == 0, "%s: date '%s'", what,
           i->datetime_original);
    CHECKF(i->pixel_x == 4032 && i->pixel_y == 3024, "%s: pixels %u x %u", what,
           (unsigned)i->pixel_x, (unsigned)i->pixel_y);
    CHECKF(i->has_gps == 1, "%s: has_gps %d", what, i->has_gps);
}

static void test_skip_header(void)
{
    static const unsigned char app1[] = "Exif\0\0II*\0";
    CHECK(imgpu_exif_skip_header(app1, 10) == 6);
    CHECK(imgpu_exif_skip_header(app1, 6) == 6);
    CHECK(imgpu_exif_skip_header(app1, 5) == 0);
    CHECK(imgpu_exif_skip_header(app1 + 6, 4) == 0);
    CHECK(imgpu_exif_skip_header((const unsigned char *)"Exif\0X", 6) == 0);
    CHECK(imgpu_exif_skip_header(NULL, 0) == 0);
}

static void test_orientations(void)
{
    static blob b;
    for (int be = 0; be < 2; be++) {
        for (int o = 1; o <= 8; o++) {
            char what[64];
            snprintf(what, sizeof what, "%s orientation %d", be ? "MM" : "II", o);
            full_blob(&b, be, (unsigned)o);
            imgpu_exif_info info;
            CHECKF(parse(b.p, b.n, &info) == 0, "%s: %s", what, imgpu_error_message());
            check_full(&info, o, what);
            CHECK(texts_terminated(&info));

            /* as a JPEG's APP1 payload holds it */
            static unsigned char app1[sizeof b.p + 6];
            memcpy(app1, "Exif\0\0", 6);
            memcpy(app1 + 6, b.p, b.n);
            size_t off = imgpu_exif_skip_header(app1, b.n + 6);
            CHECK(off == 6);
            CHECK(parse(app1 + off, b.n + 6 - off, &info) == 0);
            check_full(&info, o, what);
            /* the prefix not skipped: not a TIFF header */
            imgpu_error_clear();
            CHECK(parse(app1, b.n + 6, &info) == -1 && imgpu_error_message()[0]);
        }
        /* out of range: 0 means "absent or unusable" */
        const unsigned bad[] = {0, 9, 255, 65535};
        for (int k = 0; k < 4; k++) {
            full_blob(&b, be, bad[k]);
            imgpu_exif_info info;
            CHECK(parse(b.p, b.n, &info) == 0);
            CHECKF(info.orientation == 0, "orientation %u read as %d", bad[k], info.orientation);
            CHECK(strcmp(info.make, "Canon") == 0);
        }
    }
}

static void test_text_fields(void)
{
    static blob b;
    for (int be = 0; be < 2; be++) {
        const char *long_model = "A model name that is longer than the sixty-three bytes of the "
                                 "field, so it is cut";
        const ent ifd0[] = {
            {0x010F, ASCII, 0, 0, "  NIKON CORPORATION   ", 0},  /* padded, as Nikon writes */
            {0x0110, ASCII, 0, 0, long_model, 0},
            {0x0132, ASCII, 0, 0, "2019:12:31 23:59:59", 0},
        };
        build(&b, be, ifd0, 3, NULL, -1, NULL, -1);
        imgpu_exif_info info;
        CHECK(parse(b.p, b.n, &info) == 0);
        CHECKF(strcmp(info.make, "NIKON CORPORATION") == 0, "make '%s'", info.make);
        CHECKF(strlen(info.model) == 63 && strncmp(info.model, long_model, 63) == 0, "model '%s'",
               info.model);
        /* no Exif IFD: DateTime stands in; no pixel size, no GPS */
        CHECKF(strcmp(info.datetime_original, "2019:12:31 23:59:59") == 0, "date '%s'",
               info.datetime_original);
        CHECK(info.orientation == 0 && info.pixel_x == 0 && info.pixel_y == 0 && !info.has_gps);
        CHECK(texts_terminated(&info));

        /* inline text (count <= 4), text without its NUL, text with a NUL inside, empty text,
         * a count that is not ASCII's type, DateTime with an Exif IFD lacking DateTimeOriginal */
        const ent ifd0b[] = {
            {0x010F, ASCII, 3, 0, "Ab", 0},
            {0x0110, ASCII, 7, 0, "Model X", 0},   /* 7 bytes, no NUL */
            {0x0132, ASCII, 0, 0, "2000:01:01 00:00:00", 0},
            {0x8769, LONG, 1, AT_EXIF, NULL, 0},
        };
        const ent exifb[] = {
            {0x9003, UNDEF, 20, 0, NULL, 0},       /* wrong type: ignored */
            {0x9003, ASCII, 0, 0, "    ", 0},      /* blank: DateTime stands */
        };
        build(&b, be, ifd0b, 4, exifb, 2, NULL, -1);
        CHECK(parse(b.p, b.n, &info) == 0);
        CHECKF(strcmp(info.make, "Ab") == 0, "make '%s'", info.make);
        CHECKF(strcmp(info.model, "Model X") == 0, "model '%s'", info.model);
        CHECKF(strcmp(info.datetime_original, "2000:01:01 00:00:00") == 0, "date '%s'",
               info.datetime_original);

        const ent ifd0c[] = {
            {0x010F, ASCII, 10, 0, "Fuji\0film", 0},  /* stops at the first NUL */
            {0x0110, ASCII, 1, 0, "", 0},
            {0x0132, ASCII, 0, 0, "   ", 0},           /* all spaces: "" */
        };
        build(&b, be, ifd0c, 3, NULL, -1, NULL, -1);
        CHECK(parse(b.p, b.n, &info) == 0);
        CHECKF(strcmp(info.make, "Fuji") == 0, "make '%s'", info.make);
        CHECK(info.model[0] == 0 && info.datetime_original[0] == 0);

        /* the first well-formed entry of a tag counts; a malformed one before it does not */
        const ent ifd0d[] = {
            {0x010F, SHORT, 1, 5, NULL, 0},            /* Make as SHORT: ignored */
            {0x010F, ASCII, 0, 0, "First", 0},
            {0x010F, ASCII, 0, 0, "Second", 0},
            {0x0112, ASCII, 0, 0, "6", 0},             /* Orientation as text: ignored */
            {0x0112, SHORT, 2, 6, NULL, 0},            /* count 2: ignored */
            {0x0112, LONG, 1, 6, NULL, 0},             /* LONG: read */
            {0x0112, SHORT, 1, 3, NULL, 0},
        };
        build(&b, be, ifd0d, 7, NULL, -1, NULL, -1);
        CHECK(parse(b.p, b.n, &info) == 0);
        CHECKF(strcmp(info.make, "First") == 0, "make '%s'", info.make);
        CHECKF(info.orientation == 6, "orientation %d", info.orientation);
    }
}

/* ---- in-place rewrites -------------------------------------------------------------------- */

/* The offset of IFD0's first entry with this tag in a blob built above. */
static size_t entry_at(const blob *b, size_t ifd, unsigned tag)
{
    unsigned n = r16(b, ifd);
    for (unsigned i = 0; i < n; i++)
        if (r16(b, ifd + 2 + 12 * i) == tag)
            return ifd + 2 + 12 * i;
    return 0;
}

/* 1 when a and b differ only inside [lo, hi) ranges given as pairs (end with 0, 0) */
static int same_outside(const unsigned char *a, const unsigned char *b, size_t n,
                        const size_t *ranges)
{
    for (size_t i = 0; i < n; i++) {
        int inside = 0;
        for (const size_t *r = ranges; r[0] || r[1]; r += 2)
            inside |= i >= r[0] && i < r[1];
        if (!inside && a[i] != b[i])
            return 0;
    }
    return 1;
}

static void test_set_orientation(void)
{
    static blob b;
    for (int be = 0; be < 2; be++) {
        for (int from = 1; from <= 8; from++) {
            for (int to = 1; to <= 8; to++) {
                full_blob(&b, be, (unsigned)from);
                unsigned char *q = exact(b.p, b.n);
                CHECK(imgpu_exif_set_orientation(q, b.n, to) == 1);
                imgpu_exif_info info;
                CHECK(parse(q, b.n, &info) == 0);
                check_full(&info, to, "after set_orientation");
                size_t at = entry_at(&b, b.ifd0, 0x0112);
                const size_t field[] = {at + 8, at + 12, 0, 0};
                CHECK(same_outside(q, b.p, b.n, field));
                free(q);
            }
        }
        /* LONG orientation: rewritten as LONG */
        const ent ifd0[] = {{0x0112, LONG, 1, 3, NULL, 0}};
        build(&b, be, ifd0, 1, NULL, -1, NULL, -1);
        unsigned char *q = exact(b.p, b.n);
        CHECK(imgpu_exif_set_orientation(q, b.n, 8) == 1);
        imgpu_exif_info info;
        CHECK(parse(q, b.n, &info) == 0 && info.orientation == 8);
        free(q);

        /* an out-of-range value is rewritten too */
        full_blob(&b, be, 0);
        q = exact(b.p, b.n);
        CHECK(imgpu_exif_set_orientation(q, b.n, 5) == 1);
        CHECK(parse(q, b.n, &info) == 0 && info.orientation == 5);
        free(q);

        /* duplicates: every well-formed one, so a last-wins reader agrees */
        const ent dup[] = {{0x0112, SHORT, 1, 6, NULL, 0}, {0x0112, SHORT, 1, 6, NULL, 0}};
        build(&b, be, dup, 2, NULL, -1, NULL, -1);
        q = exact(b.p, b.n);
        CHECK(imgpu_exif_set_orientation(q, b.n, 1) == 1);
        memcpy(b.p, q, b.n);
        CHECK(r16(&b, 8 + 2 + 8) == 1 && r16(&b, 8 + 2 + 12 + 8) == 1);
        free(q);

        /* no tag: 0, nothing written; bad value: -1 */
        const ent none[] = {{0x010F, ASCII, 0, 0, "Canon", 0}};
        build(&b, be, none, 1, NULL, -1, NULL, -1);
        q = exact(b.p, b.n);
        CHECK(imgpu_exif_set_orientation(q, b.n, 6) == 0);
        CHECK(memcmp(q, b.p, b.n) == 0);
        imgpu_error_clear();
        CHECK(imgpu_exif_set_orientation(q, b.n, 0) == -1 && imgpu_error_message()[0]);
        CHECK(imgpu_exif_set_orientation(q, b.n, 9) == -1);
        CHECK(memcmp(q, b.p, b.n) == 0);
        free(q);
    }
    /* malformed header */
    unsigned char junk[16] = "IX*\0";
    CHECK(imgpu_exif_set_orientation(junk, sizeof junk, 1) == -1);
    CHECK(imgpu_exif_set_pixel_size(junk, sizeof junk, 1, 1) == -1);
}

static void test_set_pixel_size(void)
{
    static blob b;
    for (int be = 0; be < 2; be++) {
        full_blob(&b, be, 1);   /* PixelX SHORT 4032, PixelY LONG 3024 */
        unsigned char *q = exact(b.p, b.n);
        CHECK(imgpu_exif_set_pixel_size(q, b.n, 3024, 4032) == 2);
        imgpu_exif_info info;
        CHECK(parse(q, b.n, &info) == 0);
        CHECK(info.pixel_x == 3024 && info.pixel_y == 4032);
        CHECK(info.orientation == 1 && strcmp(info.make, "Canon") == 0 && info.has_gps);
        size_t ax = entry_at(&b, b.exif, 0xA002), ay = entry_at(&b, b.exif, 0xA003);
        const size_t fields[] = {ax + 8, ax + 12, ay + 8, ay + 12, 0, 0};
        CHECK(same_outside(q, b.p, b.n, fields));

        /* too large for the SHORT: the entry becomes a LONG (type rewritten, count 1) */
        CHECK(imgpu_exif_set_pixel_size(q, b.n, 70000, 65535) == 2);
        CHECK(parse(q, b.n, &info) == 0);
        CHECKF(info.pixel_x == 70000 && info.pixel_y == 65535, "%u x %u",
               (unsigned)info.pixel_x, (unsigned)info.pixel_y);
        static blob c;   /* read the rewritten entry back through r16 */
        c = b;
        memcpy(c.p, q, b.n);
        CHECK(r16(&c, ax + 2) == LONG);
        const size_t fields2[] = {ax + 2, ax + 4, ax + 8, ax + 12, ay + 8, ay + 12, 0, 0};
        CHECK(same_outside(q, b.p, b.n, fields2));
        free(q);

        /* only one of the two present; none; no Exif IFD */
        const ent ifd0[] = {{0x8769, LONG, 1, AT_EXIF, NULL, 0}};
        const ent onlyy[] = {{0xA003, SHORT, 1, 10, NULL, 0}};
        build(&b, be, ifd0, 1, onlyy, 1, NULL, -1);
        q = exact(b.p, b.n);
        CHECK(imgpu_exif_set_pixel_size(q, b.n, 7, 8) == 1);
        CHECK(parse(q, b.n, &info) == 0 && info.pixel_x == 0 && info.pixel_y == 8);
        free(q);
        build(&b, be, ifd0, 1, NULL, 0, NULL, -1);
        q = exact(b.p, b.n);
        CHECK(imgpu_exif_set_pixel_size(q, b.n, 7, 8) == 0);
        CHECK(memcmp(q, b.p, b.n) == 0);
        free(q);
        const ent orient_only[] = {{0x0112, SHORT, 1, 6, NULL, 0}, {0xA002, SHORT, 1, 5, NULL, 0}};
        build(&b, be, orient_only, 2, NULL, -1, NULL, -1);   /* PixelX in IFD0: not the Exif IFD's */
        q = exact(b.p, b.n);
        CHECK(imgpu_exif_set_pixel_size(q, b.n, 7, 8) == 0);
        CHECK(memcmp(q, b.p, b.n) == 0);
        CHECK(parse(q, b.n, &info) == 0 && info.pixel_x == 0);
        free(q);
    }
}

/* ---- malformed blobs ---------------------------------------------------------------------- */

static void test_truncated(void)
{
    static blob b;
    for (int be = 0; be < 2; be++) {
        full_blob(&b, be, 6);
        for (size_t n = 0; n <= b.n; n++) {
            imgpu_exif_info info;
            imgpu_error_clear();
            int rc = parse(b.p, n, &info);
            if (n < 8 + 2) {
                CHECKF(rc == -1 && imgpu_error_message()[0], "%zu bytes: rc %d", n, rc);
                continue;
            }
            CHECKF(rc == 0, "%zu bytes: rc %d", n, rc);
            /* a field is either read whole or absent */
            CHECK(info.orientation == 6 || info.orientation == 0);
            CHECK(info.make[0] == 0 || strcmp(info.make, "Canon") == 0);
            CHECK(info.model[0] == 0 || strcmp(info.model, "Canon EOS 5D Mark IV") == 0);
            CHECK(info.pixel_x == 0 || info.pixel_x == 4032);
            CHECK(info.pixel_y == 0 || info.pixel_y == 3024);
            CHECK(texts_terminated(&info));
            unsigned char *q = exact(b.p, n);
            int r1 = imgpu_exif_set_orientation(q, n, 3);
            int r2 = imgpu_exif_set_pixel_size(q, n, 100000, 2);
            CHECK(r1 == (info.orientation == 6));
            CHECK(r2 == (info.pixel_x != 0) + (info.pixel_y != 0));
            free(q);
        }
        full_blob(&b, be, 6);
        imgpu_exif_info info;
        CHECK(parse(b.p, b.n, &info) == 0 && info.orientation == 6);
    }
}

static void test_bad_headers(void)
{
    static blob b;
    full_blob(&b, 0, 6);
    imgpu_exif_info info, before;
    /* out is untouched on failure */
    memset(&before, 0x5A, sizeof before);
    const struct {
        size_t at;
        const char *bytes;
        size_t len;
    } cases[] = {
        {0, "IM", 2}, {0, "MI", 2}, {0, "ii", 2}, {2, "+\0", 2}, {2, "\0*", 2},   /* II with MM's 42 */
        {4, "\0\0\0\0", 4}, {4, "\4\0\0\0", 4}, {4, "\xff\xff\xff\xff", 4},
        {4, "\xf0\xff\xff\xff", 4},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        static blob c;
        c = b;
        memcpy(c.p + cases[k].at, cases[k].bytes, cases[k].len);
        imgpu_error_clear();
        CHECKF(parse(c.p, c.n, &info) == -1 && imgpu_error_message()[0], "header case %zu", k);
        CHECK(memcmp(&info, &before, sizeof info) == 0);
    }
    /* IFD0 at the last byte, and where only its count fits (no entry: nothing, but rc 0) */
    static blob c;
    c = b;
    w32(&c, 4, (uint32_t)c.n - 1);
    CHECK(parse(c.p, c.n, &info) == -1);
    w32(&c, 4, (uint32_t)c.n - 2);
    CHECK(parse(c.p, c.n, &info) == 0 && info.orientation == 0 && info.make[0] == 0);
    CHECK(imgpu_exif_parse(NULL, 0, &info) == -1);
}

static void test_bad_entries(void)
{
    static blob b;
    for (int be = 0; be < 2; be++) {
        /* values out of range, offsets that wrap 32 bits, huge counts */
        const ent ifd0[] = {
            {0x010F, ASCII, 10, 0xFFFFFFF0u, "xxxxxxxxx", 1},   /* offset out of range */
            {0x0110, ASCII, 2, 0xFFFFFFFFu, "x", 1},            /* (inline: count 2 fits) */
            {0x0110, ASCII, 0xFFFFFFFFu, 8, "x", 1},            /* count runs past the end */
            {0x0132, ASCII, 0x10, 0xFFFFFFF8u, "x", 1},         /* offset + count wraps 32 bits */
            {0x0112, SHORT, 0x80000001u, 6, NULL, 0},           /* count * 2 wraps 32 bits */
            {0x8769, LONG, 1, 0xFFFFFFF0u, NULL, 0},            /* Exif IFD out of range */
            {0x8825, LONG, 1, 4, NULL, 0},                      /* GPS IFD over the header */
        };
        build(&b, be, ifd0, 7, NULL, -1, NULL, -1);
        imgpu_exif_info info;
        CHECK(parse(b.p, b.n, &info) == 0);
        CHECKF(info.make[0] == 0, "make '%s'", info.make);
        CHECKF(strcmp(info.model, "x") == 0, "model '%s'", info.model);  /* the inline one */
        CHECK(info.datetime_original[0] == 0);
        CHECK(info.orientation == 0 && info.pixel_x == 0 && !info.has_gps);
        unsigned char *q = exact(b.p, b.n);
        CHECK(imgpu_exif_set_orientation(q, b.n, 2) == 0);
        CHECK(imgpu_exif_set_pixel_size(q, b.n, 1, 2) == 0);
        CHECK(memcmp(q, b.p, b.n) == 0);
        free(q);

        /* loops: the Exif pointer aimed back at IFD0 (which holds a PixelX, so following it
         * would show), the GPS pointer at the Exif IFD; IFD0's next-IFD link at itself */
        const ent loop0[] = {
            {0x0112, SHORT, 1, 8, NULL, 0},
            {0x8769, LONG, 1, AT_IFD0, NULL, 0},
            {0x8825, LONG, 1, AT_IFD0, NULL, 0},
            {0xA002, SHORT, 1, 99, NULL, 0},
        };
        build(&b, be, loop0, 4, NULL, -1, NULL, -1);
        w32(&b, 8 + 2 + 12 * 4, 8);
        CHECK(parse(b.p, b.n, &info) == 0);
        CHECK(info.orientation == 8 && info.pixel_x == 0 && !info.has_gps);
        q = exact(b.p, b.n);
        CHECK(imgpu_exif_set_pixel_size(q, b.n, 1, 2) == 0);
        CHECK(imgpu_exif_set_orientation(q, b.n, 1) == 1);
        free(q);

        const ent loop1[] = {
            {0x8769, LONG, 1, AT_EXIF, NULL, 0},
            {0x8825, LONG, 1, AT_EXIF, NULL, 0},
        };
        const ent loop1e[] = {
            {0x8769, LONG, 1, AT_EXIF, NULL, 0},   /* an Exif pointer in the Exif IFD: unread */
            {0xA002, LONG, 1, 640, NULL, 0},
            {0x8825, LONG, 1, AT_IFD0, NULL, 0},
        };
        build(&b, be, loop1, 2, loop1e, 3, NULL, -1);
        w32(&b, b.exif + 2 + 12 * 3, (uint32_t)b.exif);   /* its next link: itself */
        CHECK(parse(b.p, b.n, &info) == 0);
        CHECK(info.pixel_x == 640 && !info.has_gps);

        /* an entry count larger than the blob: the whole entries are read */
        const ent big[] = {
            {0x0112, SHORT, 1, 7, NULL, 0},
            {0x010F, ASCII, 0, 0, "Sony", 0},
        };
        build(&b, be, big, 2, NULL, -1, NULL, -1);
        w16(&b, 8, 0xFFFF);
        for (size_t n = 8 + 2 + 12; n <= b.n; n++) {
            CHECK(parse(b.p, n, &info) == 0 && info.orientation == 7);
            q = exact(b.p, n);
            CHECK(imgpu_exif_set_orientation(q, n, 2) == 1);
            free(q);
        }

        /* GPS: an empty GPS IFD is no GPS */
        const ent g0[] = {{0x8825, LONG, 1, AT_GPS, NULL, 0}};
        build(&b, be, g0, 1, NULL, -1, NULL, 0);
        CHECK(parse(b.p, b.n, &info) == 0 && !info.has_gps);
        const ent g1[] = {{0x0001, ASCII, 2, 0, "N", 0}};
        build(&b, be, g0, 1, NULL, -1, g1, 1);
        CHECK(parse(b.p, b.n, &info) == 0 && info.has_gps);
        /* the IFD type (13) for pointers, as TIFF-EP allows */
        const ent g13[] = {{0x8825, 13, 1, AT_GPS, NULL, 0}};
        build(&b, be, g13, 1, NULL, -1, g1, 1);
        CHECK(parse(b.p, b.n, &info) == 0 && info.has_gps);
    }
}

/* IMGPU_EXIF_MAX_ENTRIES: an IFD0 of 5000 entries is read up to the budget. */
static void test_entry_budget(void)
{
    static blob b;
    static ent many[5000];
    for (int where = 0; where < 2; where++) {
        int at = where ? IMGPU_EXIF_MAX_ENTRIES : IMGPU_EXIF_MAX_ENTRIES - 1;
        for (int i = 0; i < 5000; i++)
            many[i] = (ent){0x9999, SHORT, 1, 0, NULL, 0};
        many[at] = (ent){0x0112, SHORT, 1, 4, NULL, 0};
        /* build() takes up to 64 entries per IFD for its placeholders: write IFD0 directly */
        memset(&b, 0, sizeof b);
        memcpy(b.p, "II*\0", 4);
        w32(&b, 4, 8);
        size_t data = 0;
        b.n = write_ifd(&b, 8, many, 5000, &data);
        imgpu_exif_info info;
        CHECK(parse(b.p, b.n, &info) == 0);
        CHECKF(info.orientation == (where ? 0 : 4), "orientation at entry %d: read %d", at,
               info.orientation);
        unsigned char *q = exact(b.p, b.n);
        CHECK(imgpu_exif_set_orientation(q, b.n, 1) == !where);
        free(q);
    }
}

/* ---- rebuild -------------------------------------------------------------------------- */

static uint32_t r32(const blob *b, size_t at)
{
    return b->be ? (uint32_t)b->p[at] << 24 | (uint32_t)b->p[at + 1] << 16 |
                       (uint32_t)b->p[at + 2] << 8 | b->p[at + 3]
                 : (uint32_t)b->p[at + 3] << 24 | (uint32_t)b->p[at + 2] << 16 |
                       (uint32_t)b->p[at + 1] << 8 | b->p[at];
}

/* rebuild b's blob (from a buffer of exactly its size) into o (its first 128 KiB; o->n the
 * whole size): the sub-IFDs written, or -1 */
static int rebuild(const blob *b, uint32_t ifd0, const unsigned *keep, int nkeep, blob *o)
{
    unsigned char *q = exact(b->p, b->n), *x = NULL;
    size_t xn = 0;
    const int subs = imgpu_exif_rebuild(q, b->n, ifd0, keep, nkeep, &x, &xn);
    free(q);
    memset(o, 0, sizeof *o);
    if (subs >= 0) {
        /* (the value-budget case makes 1 MiB: its head is enough to look at) */
        memcpy(o->p, x, xn < sizeof o->p ? xn : sizeof o->p);
        o->n = xn;
        o->be = b->be;
        o->ifd0 = 8;
        o->exif = entry_at(o, 8, 0x8769) ? r32(o, entry_at(o, 8, 0x8769) + 8) : 0;
        o->gps = entry_at(o, 8, 0x8825) ? r32(o, entry_at(o, 8, 0x8825) + 8) : 0;
        free(x);
    }
    return subs;
}

/* tags strictly ascending in the IFD at `at` */
static int ascending(const blob *b, size_t at)
{
    for (unsigned i = 1; i < r16(b, at); i++)
        if (r16(b, at + 2 + 12 * i) <= r16(b, at + 2 + 12 * (i - 1)))
            return 0;
    return 1;
}

static void test_rebuild(void)
{
    static blob b, o, o2;
    for (int be = 0; be < 2; be++) {
        /* a camera's blob whose Exif IFD points back at IFD0 and at an Interoperability IFD,
         * with IFD0's tags out of order: every pointer but the two the rebuild writes goes */
        const ent ifd0[] = {
            {0x0132, ASCII, 0, 0, "2021:02:03 04:05:06", 0},
            {0x010F, ASCII, 0, 0, "Canon", 0},
            {0x0110, ASCII, 0, 0, "Canon EOS 5D Mark IV", 0},
            {0x0112, SHORT, 1, 6, NULL, 0},
            {0x0111, LONG, 1, 8, NULL, 0},   /* StripOffsets */
            {0x8769, LONG, 1, AT_EXIF, NULL, 0},
            {0x8825, LONG, 1, AT_GPS, NULL, 0},
        };
        const ent exif[] = {
            {0x9003, ASCII, 0, 0, "2020:01:02 03:04:05", 0},
            {0xA002, SHORT, 1, 4032, NULL, 0},
            {0xA003, LONG, 1, 3024, NULL, 0},
            {0x8769, LONG, 1, AT_IFD0, NULL, 0},
            {0xA005, LONG, 1, AT_IFD0, NULL, 0},
        };
        const ent gps[] = {{0x0000, 1, 4, 0x00000302, NULL, 0}};
        build(&b, be, ifd0, 7, exif, 5, gps, 1);
        CHECK(rebuild(&b, 0, NULL, 0, &o) == 2);
        imgpu_exif_info info;
        CHECK(parse(o.p, o.n, &info) == 0);
        check_full(&info, 6, "rebuilt");
        CHECK(o.exif && o.gps && r16(&o, o.exif) == 3 && r16(&o, o.gps) == 1);
        CHECK(!entry_at(&o, o.exif, 0x8769) && !entry_at(&o, o.exif, 0xA005));
        CHECK(!entry_at(&o, 8, 0x0111) && r16(&o, 8) == 6);   /* 4 tags + 2 pointers */
        CHECK(ascending(&o, 8) && ascending(&o, o.exif));
        CHECK(r32(&o, 8 + 2 + 12 * 6) == 0);   /* no IFD1 */
        CHECK(rebuild(&o, 0, NULL, 0, &o2) == 2 && o2.n == o.n && !memcmp(o2.p, o.p, o.n));

        /* a keep list: IFD0 holds those tags and the pointers */
        const unsigned keep[2] = {0x010F, 0x0112};
        CHECK(rebuild(&b, 0, keep, 2, &o) == 2 && r16(&o, 8) == 4);
        CHECK(parse(o.p, o.n, &info) == 0 && !strcmp(info.make, "Canon") && !info.model[0] &&
              info.orientation == 6 && info.pixel_x == 4032);

        /* a directory other than the header's plays IFD0 (a TIFF's page): the Exif IFD's tags */
        full_blob(&b, be, 1);
        CHECK(rebuild(&b, (uint32_t)b.exif, NULL, 0, &o) == 0);
        CHECK(r16(&o, 8) == 3 && entry_at(&o, 8, 0xA002) && !entry_at(&o, 8, 0x010F));

        /* Orientation out of range: dropped (the parse reads none), and so is a later one;
         * of two Makes the first the parse takes (the SHORT one is not) */
        const ent odd[] = {
            {0x010F, SHORT, 1, 7, NULL, 0},
            {0x010F, ASCII, 0, 0, "First", 0},
            {0x010F, ASCII, 0, 0, "Second", 0},
            {0x0112, SHORT, 1, 9, NULL, 0},
            {0x0112, SHORT, 1, 3, NULL, 0},
        };
        build(&b, be, odd, 5, NULL, -1, NULL, -1);
        CHECK(parse(b.p, b.n, &info) == 0 && info.orientation == 0);
        CHECK(rebuild(&b, 0, NULL, 0, &o) == 0 && r16(&o, 8) == 1 && !entry_at(&o, 8, 0x0112));
        CHECK(parse(o.p, o.n, &info) == 0 && !strcmp(info.make, "First"));

        /* an empty Exif IFD is not written, nor its pointer */
        const ent mk[] = {{0x010F, ASCII, 0, 0, "Canon", 0}, {0x8769, LONG, 1, AT_EXIF, NULL, 0}};
        const ent junk[] = {{0x9003, 99, 1, 0, NULL, 0}};   /* a type TIFF does not have */
        build(&b, be, mk, 2, junk, 1, NULL, -1);
        CHECK(rebuild(&b, 0, NULL, 0, &o) == 0 && r16(&o, 8) == 1 && o.n == 8 + 2 + 12 + 4 + 6);

        /* the value budget: 20 values of 64 KiB (the same bytes) -> 16 of them */
        ent many[20];
        for (int i = 0; i < 20; i++) {
            ent e = {0x9000 + (unsigned)i, UNDEF, 65536, 0, NULL, 0};
            many[i] = e;
        }
        build(&b, be, many, 20, NULL, -1, NULL, -1);
        const uint32_t data = (uint32_t)b.n;
        for (int i = 0; i < 20; i++)
            many[i].value = data;
        build(&b, be, many, 20, NULL, -1, NULL, -1);
        b.n = data + 65536;
        CHECK(rebuild(&b, 0, NULL, 0, &o) == 0 && r16(&o, 8) == 16);
        CHECK(o.n == 8 + 2 + 12 * 16 + 4 + 16 * 65536);
    }
    /* malformed: -1 with a message, nothing out */
    unsigned char junk[16] = "IX*\0", *x = NULL;
    size_t xn = 0;
    imgpu_error_clear();
    CHECK(imgpu_exif_rebuild(junk, sizeof junk, 0, NULL, 0, &x, &xn) == -1 && !x &&
          imgpu_error_message()[0]);
    full_blob(&b, 0, 1);
    CHECK(imgpu_exif_rebuild(b.p, b.n, (uint32_t)b.n - 1, NULL, 0, &x, &xn) == -1 && !x);
    CHECK(imgpu_exif_rebuild(b.p, b.n, 4, NULL, 0, &x, &xn) == -1 && !x);
    imgpu_error_clear();
}

int main(void)
{
    test_skip_header();
    test_orientations();
    test_text_fields();
    test_set_orientation();
    test_set_pixel_size();
    test_truncated();
    test_bad_headers();
    test_bad_entries();
    test_entry_budget();
    test_rebuild();
    TEST_MAIN_END();
}

/* exif.c — the EXIF reader, in-place editor and rebuilder of exif.h: a TIFF header, IFD0, the
 * Exif IFD and the GPS IFD's existence, every read checked against the blob's end first; the
 * rebuild walks them as the reader does and lays a new blob out in two passes (what is kept and
 * the room its values take, then the writing), so no offset is ever copied from the input.
 *
 * Layout reminders (TIFF 6.0, EXIF 2.3): an IFD is a 16-bit entry count, that many 12-byte
 * entries and a 32-bit offset of the next IFD. An entry is tag (16), type (16), count (32)
 * and a 32-bit field that holds the value itself when count * size of the type fits in 4
 * bytes (left-justified: a SHORT sits in the field's first 2 bytes in both byte orders), else
 * the offset of the value. count comes from the file: count * size is computed in 64 bits.
 */
#include "exif.h"
#include "error.h"

#include <stdlib.h>
#include <string.h>

enum {
    TYPE_BYTE = 1, TYPE_ASCII = 2, TYPE_SHORT = 3, TYPE_LONG = 4, TYPE_RATIONAL = 5,
    TYPE_SBYTE = 6, TYPE_UNDEFINED = 7, TYPE_SSHORT = 8, TYPE_SLONG = 9, TYPE_SRATIONAL = 10,
    TYPE_IFD = 13,
};

enum {
    TAG_MAKE = 0x010F, TAG_MODEL = 0x0110, TAG_ORIENTATION = 0x0112, TAG_DATETIME = 0x0132,
    TAG_EXIF_IFD = 0x8769, TAG_GPS_IFD = 0x8825, TAG_INTEROP_IFD = 0xA005,
    TAG_DATETIME_ORIGINAL = 0x9003, TAG_PIXEL_X = 0xA002, TAG_PIXEL_Y = 0xA003,
};

#define HEADER_BYTES 8
#define ENTRY_BYTES 12
#define MAX_IFDS 3   /* IFD0, Exif, GPS */

typedef struct tiff {
    const unsigned char *b;
    size_t n;
    int big_endian;
    uint32_t ifd0;
} tiff;

/* The IFDs one call has opened and the entries it may still look at. */
typedef struct walk {
    const tiff *t;
    uint32_t visited[MAX_IFDS];
    int nvisited;
    unsigned entries_left;
} walk;

/* An opened IFD: its whole entries start at `first`; count is clipped to the blob's end and
 * to the walk's budget. */
typedef struct ifd {
    size_t first;
    unsigned count;
} ifd;

typedef struct entry {
    size_t at;   /* offset of the entry's 12 bytes; the value field is at + 8 */
    unsigned tag, type;
    uint32_t count;
} entry;

/* The readers and writers take offsets their callers have checked against n. */
static unsigned rd16(const tiff *t, size_t at)
{
    const unsigned char *p = t->b + at;
    return t->big_endian ? (unsigned)p[0] << 8 | p[1] : (unsigned)p[1] << 8 | p[0];
}

static uint32_t rd32(const tiff *t, size_t at)
{
    const unsigned char *p = t->b + at;
    if (t->big_endian)
        return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static void wr16(const tiff *t, unsigned char *wb, size_t at, unsigned v)
{
    unsigned char *p = wb + at;
    p[t->big_endian ? 0 : 1] = (unsigned char)(v >> 8);
    p[t->big_endian ? 1 : 0] = (unsigned char)v;
}

static void wr32(const tiff *t, unsigned char *wb, size_t at, uint32_t v)
{
    unsigned char *p = wb + at;
    for (int i = 0; i < 4; i++)
        p[t->big_endian ? 3 - i : i] = (unsigned char)(v >> 8 * i);
}

static int tiff_open(const unsigned char *b, size_t n, tiff *t)
{
    if (!b || n < HEADER_BYTES)
        return imgpu_error("EXIF: %zu bytes are too few for a TIFF header", b ? n : 0);
    tiff h = {b, n, 0, 0};
    if (b[0] == 'I' && b[1] == 'I')
        h.big_endian = 0;
    else if (b[0] == 'M' && b[1] == 'M')
        h.big_endian = 1;
    else
        return imgpu_error("EXIF: no TIFF byte-order mark (II or MM)");
    if (rd16(&h, 2) != 42)
        return imgpu_error("EXIF: the TIFF header's magic number is %u, not 42", rd16(&h, 2));
    h.ifd0 = rd32(&h, 4);
    /* 64-bit sum: ifd0 near 2^32 must not wrap on a 32-bit size_t */
    if (h.ifd0 < HEADER_BYTES || (uint64_t)h.ifd0 + 2 > n)
        return imgpu_error("EXIF: IFD0 at offset %u lies outside the %zu-byte blob", h.ifd0, n);
    *t = h;
    return 0;
}

static void walk_init(walk *w, const tiff *t)
{
    memset(w, 0, sizeof *w);
    w->t = t;
    w->entries_left = IMGPU_EXIF_MAX_ENTRIES;
}

/* Open the IFD at `off`: 0, or -1 when it lies outside the blob (or over the header) or was
 * opened before in this walk (a pointer back, which would loop or read tags twice). */
static int ifd_open(walk *w, uint32_t off, ifd *d)
{
    const tiff *t = w->t;
    if (off < HEADER_BYTES || (uint64_t)off + 2 > t->n || w->nvisited == MAX_IFDS)
        return -1;
    for (int i = 0; i < w->nvisited; i++)
        if (w->visited[i] == off)
            return -1;
    w->visited[w->nvisited++] = off;
    size_t whole = (t->n - off - 2) / ENTRY_BYTES;
    unsigned count = rd16(t, off);
    if (count > whole)
        count = (unsigned)whole;
    if (count > w->entries_left)
        count = w->entries_left;
    w->entries_left -= count;
    d->first = (size_t)off + 2;
    d->count = count;
    return 0;
}

static entry ifd_entry(const tiff *t, const ifd *d, unsigned i)
{
    entry e;
    e.at = d->first + (size_t)i * ENTRY_BYTES;
    e.tag = rd16(t, e.at);
    e.type = rd16(t, e.at + 2);
    e.count = rd32(t, e.at + 4);
    return e;
}

/* A SHORT or LONG of count 1 (the value is in the entry): 0 and *v, or -1. */
static int entry_uint(const tiff *t, const entry *e, uint32_t *v)
{
    if (e->count != 1)
        return -1;
    if (e->type == TYPE_SHORT)
        *v = rd16(t, e->at + 8);
    else if (e->type == TYPE_LONG)
        *v = rd32(t, e->at + 8);
    else
        return -1;
    return 0;
}

/* An IFD pointer (LONG, or TIFF-EP's IFD type, count 1). */
static int entry_pointer(const tiff *t, const entry *e, uint32_t *off)
{
    if (e->count != 1 || (e->type != TYPE_LONG && e->type != TYPE_IFD))
        return -1;
    *off = rd32(t, e->at + 8);
    return 0;
}

/* Where the entry's `size` bytes of value lie: in the entry itself when they fit its 4 bytes,
 * else at its offset. 0 and *pos, or -1 when they leave the blob. */
static int entry_value_pos(const tiff *t, const entry *e, uint64_t size, size_t *pos)
{
    if (size <= 4) {
        *pos = e->at + 8;
        return 0;
    }
    const uint32_t off = rd32(t, e->at + 8);
    if ((uint64_t)off + size > t->n)
        return -1;
    *pos = off;
    return 0;
}

static int is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* An ASCII value into out (cap bytes): up to its first NUL, trimmed, cut to cap - 1 bytes.
 * 0, or -1 (out untouched) when the entry is not ASCII or its bytes leave the blob. */
static int entry_text(const tiff *t, const entry *e, char *out, size_t cap)
{
    size_t pos;
    if (e->type != TYPE_ASCII || e->count == 0 || entry_value_pos(t, e, e->count, &pos) < 0)
        return -1;
    const unsigned char *s = t->b + pos;
    const unsigned char *nul = memchr(s, 0, e->count);
    size_t len = nul ? (size_t)(nul - s) : e->count;
    while (len > 0 && is_space(*s)) {
        s++;
        len--;
    }
    if (len > cap - 1)
        len = cap - 1;
    while (len > 0 && is_space(s[len - 1]))
        len--;
    memcpy(out, s, len);
    out[len] = '\0';
    return 0;
}

/* What IFD0 says: the fields of info it holds, and where the Exif and GPS IFDs are. */
typedef struct ifd0_scan {
    imgpu_exif_info info;   /* orientation, make, model; DateTime in datetime_original */
    int has_exif, has_gps;
    uint32_t exif_ifd, gps_ifd;
    int has_ifd0;           /* IFD0 itself, opened: d0 */
    ifd d0;
} ifd0_scan;

static void scan_ifd0(walk *w, ifd0_scan *s)
{
    const tiff *t = w->t;
    int seen_make = 0, seen_model = 0, seen_orientation = 0, seen_datetime = 0;
    memset(s, 0, sizeof *s);
    ifd d;
    if (ifd_open(w, t->ifd0, &d) < 0)
        return;
    s->has_ifd0 = 1;
    s->d0 = d;
    for (unsigned i = 0; i < d.count; i++) {
        entry e = ifd_entry(t, &d, i);
        uint32_t v;
        switch (e.tag) {
        case TAG_MAKE:
            if (!seen_make)
                seen_make = entry_text(t, &e, s->info.make, sizeof s->info.make) == 0;
            break;
        case TAG_MODEL:
            if (!seen_model)
                seen_model = entry_text(t, &e, s->info.model, sizeof s->info.model) == 0;
            break;
        case TAG_DATETIME:
            if (!seen_datetime)
                seen_datetime = entry_text(t, &e, s->info.datetime_original,
                                           sizeof s->info.datetime_original) == 0;
            break;
        case TAG_ORIENTATION:
            /* the first well-formed entry counts even when its value is out of range: the
             * editor rewrites it, and a reader must not then see a later one */
            if (!seen_orientation && entry_uint(t, &e, &v) == 0) {
                seen_orientation = 1;
                s->info.orientation = v >= 1 && v <= 8 ? (int)v : 0;
            }
            break;
        case TAG_EXIF_IFD:
            if (!s->has_exif)
                s->has_exif = entry_pointer(t, &e, &s->exif_ifd) == 0;
            break;
        case TAG_GPS_IFD:
            if (!s->has_gps)
                s->has_gps = entry_pointer(t, &e, &s->gps_ifd) == 0;
            break;
        default:
            break;
        }
    }
}

/* The blob opened, a walk begun over it and IFD0 scanned: what the readers start from. */
static int open_scan(const unsigned char *b, size_t n, tiff *t, walk *w, ifd0_scan *s)
{
    if (tiff_open(b, n, t) < 0)
        return -1;
    walk_init(w, t);
    scan_ifd0(w, s);
    return 0;
}

size_t imgpu_exif_skip_header(const unsigned char *b, size_t n)
{
    return b && n >= 6 && memcmp(b, "Exif\0\0", 6) == 0 ? 6 : 0;
}

int imgpu_exif_parse(const unsigned char *b, size_t n, imgpu_exif_info *out)
{
    tiff t;
    walk w;
    ifd0_scan s;
    if (open_scan(b, n, &t, &w, &s) < 0)
        return -1;
    imgpu_exif_info info = s.info;

    ifd d;
    if (s.has_exif && ifd_open(&w, s.exif_ifd, &d) == 0) {
        int seen_x = 0, seen_y = 0, seen_original = 0;
        char original[sizeof info.datetime_original];
        for (unsigned i = 0; i < d.count; i++) {
            entry e = ifd_entry(&t, &d, i);
            uint32_t v;
            if (e.tag == TAG_PIXEL_X && !seen_x && entry_uint(&t, &e, &v) == 0) {
                seen_x = 1;
                info.pixel_x = v;
            } else if (e.tag == TAG_PIXEL_Y && !seen_y && entry_uint(&t, &e, &v) == 0) {
                seen_y = 1;
                info.pixel_y = v;
            } else if (e.tag == TAG_DATETIME_ORIGINAL && !seen_original) {
                /* a blank one (some cameras write spaces) leaves DateTime standing */
                seen_original = entry_text(&t, &e, original, sizeof original) == 0 && original[0];
            }
        }
        /* DateTimeOriginal wins over IFD0's DateTime (the time of the last edit) */
        if (seen_original)
            memcpy(info.datetime_original, original, sizeof original);
    }
    if (s.has_gps && ifd_open(&w, s.gps_ifd, &d) == 0)
        info.has_gps = d.count > 0;

    *out = info;
    return 0;
}

int imgpu_exif_set_orientation(unsigned char *b, size_t n, int orientation)
{
    if (orientation < 1 || orientation > 8)
        return imgpu_error("EXIF: orientation %d is not one of 1..8", orientation);
    tiff t;
    if (tiff_open(b, n, &t) < 0)
        return -1;
    walk w;
    walk_init(&w, &t);
    ifd d;
    if (ifd_open(&w, t.ifd0, &d) < 0)
        return 0;
    int found = 0;
    for (unsigned i = 0; i < d.count; i++) {
        entry e = ifd_entry(&t, &d, i);
        uint32_t v;
        if (e.tag != TAG_ORIENTATION || entry_uint(&t, &e, &v) < 0)
            continue;
        if (e.type == TYPE_SHORT) {
            wr16(&t, b, e.at + 8, (unsigned)orientation);
            wr16(&t, b, e.at + 10, 0);   /* the field's unused half: zero, as writers leave it */
        } else {
            wr32(&t, b, e.at + 8, (uint32_t)orientation);
        }
        found = 1;
    }
    return found;
}

int imgpu_exif_set_pixel_size(unsigned char *b, size_t n, uint32_t w, uint32_t h)
{
    tiff t;
    walk wk;
    ifd0_scan s;
    if (open_scan(b, n, &t, &wk, &s) < 0)
        return -1;
    ifd d;
    if (!s.has_exif || ifd_open(&wk, s.exif_ifd, &d) < 0)
        return 0;
    int done_x = 0, done_y = 0;
    for (unsigned i = 0; i < d.count; i++) {
        entry e = ifd_entry(&t, &d, i);
        uint32_t old;
        if ((e.tag != TAG_PIXEL_X && e.tag != TAG_PIXEL_Y) || entry_uint(&t, &e, &old) < 0)
            continue;
        uint32_t v = e.tag == TAG_PIXEL_X ? w : h;
        if (e.type == TYPE_SHORT && v <= 0xFFFF) {
            wr16(&t, b, e.at + 8, v);
            wr16(&t, b, e.at + 10, 0);
        } else {
            /* a LONG, or a SHORT too small for v: count 1 still fits the 4-byte field */
            wr16(&t, b, e.at + 2, TYPE_LONG);
            wr32(&t, b, e.at + 8, v);
        }
        if (e.tag == TAG_PIXEL_X)
            done_x = 1;
        else
            done_y = 1;
    }
    return done_x + done_y;
}

/* ---- every entry -------------------------------------------------------------------------- */

/* Bytes per value of TIFF's twelve types; 0: not one of them (13, IFD, is a pointer). */
static uint32_t type_size(unsigned type)
{
    static const unsigned char sz[13] = { 0, 1, 1, 2, 4, 8, 1, 1, 2, 4, 8, 4, 8 };
    return type < 13 ? sz[type] : 0;
}

/* Hands over IFD d's entries that have a known type and whose values lie in the blob. */
static void each_in(const tiff *t, const ifd *d, int which,
                    void (*fn)(const imgpu_exif_entry *e, void *ctx), void *ctx)
{
    for (unsigned i = 0; i < d->count; i++) {
        entry e = ifd_entry(t, d, i);
        const uint64_t size = (uint64_t)type_size(e.type) * e.count;
        size_t pos;
        if (!size || e.tag == TAG_EXIF_IFD || e.tag == TAG_GPS_IFD || e.tag == TAG_INTEROP_IFD ||
            entry_value_pos(t, &e, size, &pos) < 0)
            continue;
        imgpu_exif_entry x = { which, e.tag, e.type, e.count, t->b + pos, t->big_endian };
        fn(&x, ctx);
    }
}

int imgpu_exif_each(const unsigned char *b, size_t n,
                    void (*fn)(const imgpu_exif_entry *e, void *ctx), void *ctx)
{
    tiff t;
    walk w;
    ifd0_scan s;
    if (open_scan(b, n, &t, &w, &s) < 0)
        return -1;
    if (s.has_ifd0)
        each_in(&t, &s.d0, IMGPU_EXIF_IFD0, fn, ctx);
    ifd d;
    if (s.has_exif && ifd_open(&w, s.exif_ifd, &d) == 0)
        each_in(&t, &d, IMGPU_EXIF_IFD_EXIF, fn, ctx);
    if (s.has_gps && ifd_open(&w, s.gps_ifd, &d) == 0)
        each_in(&t, &d, IMGPU_EXIF_IFD_GPS, fn, ctx);
    return 0;
}

/* The entry's bytes as a tiff for rd16 / rd32: offsets count from e->value. */
static tiff entry_view(const imgpu_exif_entry *e)
{
    tiff t = { e->value, 0, e->big_endian, 0 };
    return t;
}

uint32_t imgpu_exif_entry_uint(const imgpu_exif_entry *e, uint32_t i)
{
    const tiff t = entry_view(e);
    switch (e->type) {
    case TYPE_BYTE: case TYPE_SBYTE: case TYPE_UNDEFINED: return e->value[i];
    case TYPE_SHORT: case TYPE_SSHORT: return rd16(&t, (size_t)i * 2);
    case TYPE_LONG: case TYPE_SLONG: return rd32(&t, (size_t)i * 4);
    default: return 0;
    }
}

void imgpu_exif_entry_rational(const imgpu_exif_entry *e, uint32_t i, uint32_t *num,
                               uint32_t *den)
{
    const tiff t = entry_view(e);
    *num = *den = 0;
    if (e->type == TYPE_RATIONAL || e->type == TYPE_SRATIONAL) {
        *num = rd32(&t, (size_t)i * 8);
        *den = rd32(&t, (size_t)i * 8 + 4);
    }
}

/* ---- rebuild: a fresh blob, every offset computed here ------------------------------------ */

/* Tags whose value is an offset into the bytes they came from (TIFF 6.0, EXIF 2.3, TIFF-EP):
 * meaningless in a new blob. The rebuild drops them all and writes its own Exif and GPS
 * pointers; a nested pointer (an Exif pointer inside the Exif IFD) kept its old value once. */
static int is_offset_tag(unsigned tag)
{
    switch (tag) {
    case 0x0111:   /* StripOffsets */
    case 0x0120:   /* FreeOffsets */
    case 0x0144:   /* TileOffsets */
    case 0x014A:   /* SubIFDs */
    case 0x0190:   /* GlobalParametersIFD */
    case 0x0201:   /* JPEGInterchangeFormat (the thumbnail's) */
    case 0x0207: case 0x0208: case 0x0209:   /* JPEGQTables, JPEGDCTables, JPEGACTables */
    case TAG_EXIF_IFD: case TAG_GPS_IFD: case TAG_INTEROP_IFD:
        return 1;
    default:
        return 0;
    }
}

/* Whether e is an entry the parser would take for its tag: the text fields ASCII, the numbers
 * SHORT or LONG of count 1, every other tag any of the twelve types, its values inside the
 * blob. The first such entry of a tag is the one that counts, for the rebuild as for the parse. */
static int well_formed(const tiff *t, const entry *e, int which, size_t *pos, uint32_t *size)
{
    const uint64_t sz = (uint64_t)type_size(e->type) * e->count;
    if (!sz || entry_value_pos(t, e, sz, pos) < 0)
        return 0;
    *size = (uint32_t)sz;   /* inside the blob, and rebuild takes blobs under 4 GiB */
    uint32_t v;
    char text[2];
    const int ifd0 = which == IMGPU_EXIF_IFD0, exif = which == IMGPU_EXIF_IFD_EXIF;
    if ((ifd0 && (e->tag == TAG_MAKE || e->tag == TAG_MODEL || e->tag == TAG_DATETIME)) ||
        (exif && e->tag == TAG_DATETIME_ORIGINAL))
        return entry_text(t, e, text, sizeof text) == 0;
    if ((ifd0 && e->tag == TAG_ORIENTATION) ||
        (exif && (e->tag == TAG_PIXEL_X || e->tag == TAG_PIXEL_Y)))
        return entry_uint(t, e, &v) == 0;
    return 1;
}

/* One entry of the new blob: where its source lies (the pointers have none). */
typedef struct kept {
    unsigned tag;
    size_t at;      /* the source entry's 12 bytes; 0 for a pointer written here */
    size_t pos;     /* its value in the source */
    uint32_t size;  /* count * size of its type */
} kept;

typedef struct plan {
    kept *e;
    unsigned n;
    size_t vals;    /* bytes of out-of-line values, each padded to an even length */
} plan;

static int kept_cmp(const void *a, const void *b)
{
    const kept *x = a, *y = b;
    return (x->tag > y->tag) - (x->tag < y->tag);
}

static size_t padded(uint32_t size)
{
    return size > 4 ? ((size_t)size + 1) & ~(size_t)1 : 0;
}

/* The entries of d that the rebuild keeps, in p (sorted by tag; room for `extra` more);
 * budget: the out-of-line bytes still allowed. 0, or -1 out of memory. */
static int plan_ifd(const tiff *t, const ifd *d, int which, const unsigned *keep, int nkeep,
                    unsigned extra, size_t *budget, plan *p)
{
    unsigned char seen[65536 / 8];
    memset(seen, 0, sizeof seen);
    memset(p, 0, sizeof *p);
    if (!(p->e = malloc(((size_t)d->count + extra + 1) * sizeof *p->e)))
        return -1;
    for (unsigned i = 0; i < d->count; i++) {
        entry e = ifd_entry(t, d, i);
        size_t pos;
        uint32_t size;
        if (is_offset_tag(e.tag) || !well_formed(t, &e, which, &pos, &size))
            continue;
        if (keep) {
            int k = 0;
            while (k < nkeep && keep[k] != e.tag)
                k++;
            if (k == nkeep)
                continue;
        }
        /* a later entry of the same tag never stands in for the first: the parse reads the
         * first, and so will any reader of the new blob */
        if (seen[e.tag / 8] & 1u << e.tag % 8)
            continue;
        seen[e.tag / 8] |= (unsigned char)(1u << e.tag % 8);
        uint32_t v;
        if (which == IMGPU_EXIF_IFD0 && e.tag == TAG_ORIENTATION && entry_uint(t, &e, &v) == 0 &&
            (v < 1 || v > 8))
            continue;   /* out of range: read as none, so written as none */
        if (padded(size) > *budget)
            continue;
        *budget -= padded(size);
        p->vals += padded(size);
        kept k = { e.tag, e.at, pos, size };
        p->e[p->n++] = k;
    }
    return 0;
}

typedef struct out {
    tiff t;            /* the byte order; b is unused */
    unsigned char *b;
    size_t len;
} out;

/* Writes the IFD of p at `at` (its values right after its table): the offset just past it. */
static size_t write_ifd(out *o, const tiff *src, const plan *p, size_t at, const uint32_t *ptr)
{
    wr16(&o->t, o->b, at, p->n);
    size_t e = at + 2, va = at + 2 + (size_t)ENTRY_BYTES * p->n + 4;
    for (unsigned i = 0; i < p->n; i++, e += ENTRY_BYTES) {
        const kept *k = &p->e[i];
        wr16(&o->t, o->b, e, k->tag);
        if (!k->at) {   /* a pointer of this blob: LONG, count 1 */
            wr16(&o->t, o->b, e + 2, TYPE_LONG);
            wr32(&o->t, o->b, e + 4, 1);
            wr32(&o->t, o->b, e + 8, ptr[k->tag == TAG_GPS_IFD]);
            continue;
        }
        wr16(&o->t, o->b, e + 2, rd16(src, k->at + 2));
        wr32(&o->t, o->b, e + 4, rd32(src, k->at + 4));
        if (k->size <= 4) {
            memcpy(o->b + e + 8, src->b + k->pos, k->size);   /* the rest stays 0 */
        } else {
            wr32(&o->t, o->b, e + 8, (uint32_t)va);
            memcpy(o->b + va, src->b + k->pos, k->size);
            va += padded(k->size);
        }
    }
    /* the next-IFD link stays 0: no IFD1 */
    return va;
}

int imgpu_exif_rebuild(const unsigned char *b, size_t n, uint32_t ifd0_off,
                       const unsigned *keep0, int nkeep0, unsigned char **result,
                       size_t *result_len)
{
    tiff t;
    if (tiff_open(b, n, &t) < 0)
        return -1;
    if (n > UINT32_MAX)
        return imgpu_error("EXIF: a %zu-byte blob is too large to rebuild", n);
    if (ifd0_off) {
        if (ifd0_off < HEADER_BYTES || (uint64_t)ifd0_off + 2 > n)
            return imgpu_error("EXIF: IFD0 at offset %u lies outside the %zu-byte blob",
                               ifd0_off, n);
        t.ifd0 = ifd0_off;
    }
    walk w;
    ifd0_scan s;
    walk_init(&w, &t);
    scan_ifd0(&w, &s);

    plan p[3] = { { 0 } };
    size_t budget = IMGPU_EXIF_REBUILD_MAX_VALUES;
    int rc = -1;
    ifd d;
    if (s.has_ifd0 && plan_ifd(&t, &s.d0, IMGPU_EXIF_IFD0, keep0, nkeep0, 2, &budget, &p[0]) < 0)
        goto done;
    if (s.has_exif && ifd_open(&w, s.exif_ifd, &d) == 0 &&
        plan_ifd(&t, &d, IMGPU_EXIF_IFD_EXIF, NULL, 0, 0, &budget, &p[1]) < 0)
        goto done;
    if (s.has_gps && ifd_open(&w, s.gps_ifd, &d) == 0 &&
        plan_ifd(&t, &d, IMGPU_EXIF_IFD_GPS, NULL, 0, 0, &budget, &p[2]) < 0)
        goto done;
    if (!p[0].e && !(p[0].e = malloc(3 * sizeof *p[0].e)))   /* IFD0 itself lay outside */
        goto done;
    /* the pointers to the sub-IFDs that have entries, then IFD0 in tag order */
    for (int k = 1; k <= 2; k++) {
        if (p[k].n) {
            kept ptr = { k == 1 ? TAG_EXIF_IFD : TAG_GPS_IFD, 0, 0, 4 };
            p[0].e[p[0].n++] = ptr;
        }
    }
    for (int k = 0; k < 3; k++)
        if (p[k].n > 1)
            qsort(p[k].e, p[k].n, sizeof *p[k].e, kept_cmp);

    size_t at[3], len = HEADER_BYTES;
    for (int k = 0; k < 3; k++) {
        at[k] = len;
        if (k == 0 || p[k].n)
            len += 2 + (size_t)ENTRY_BYTES * p[k].n + 4 + p[k].vals;
    }
    out o = { t, calloc(1, len), len };
    if (!o.b)
        goto done;
    o.t.b = o.b;
    o.t.n = len;
    memcpy(o.b, t.big_endian ? "MM\0*" : "II*\0", 4);
    wr32(&o.t, o.b, 4, HEADER_BYTES);
    const uint32_t ptr[2] = { (uint32_t)at[1], (uint32_t)at[2] };
    int subs = 0;
    for (int k = 0; k < 3; k++) {
        if (k == 0 || p[k].n) {
            write_ifd(&o, &t, &p[k], at[k], ptr);
            subs += k > 0;
        }
    }
    *result = o.b;
    *result_len = o.len;
    rc = subs;
done:
    if (rc < 0)   /* every jump here is an allocation that failed */
        imgpu_error("EXIF: out of memory");
    for (int k = 0; k < 3; k++)
        free(p[k].e);
    return rc;
}

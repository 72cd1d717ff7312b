/* fuzz_exif_write.c — libFuzzer target: the EXIF writers on any bytes, as a JPEG's APP1 payload
 * ("Exif\0\0" first) or a bare TIFF blob: imgpu_exif_rebuild (exif.h: the fresh blob a TIFF's
 * EXIF becomes) and imgpu_meta_check_exif (meta.h: what load leaves for the outputs). What
 * holds for every input:
 *   - rebuild fails exactly when the parse does (the header decides), and says why;
 *   - the rebuilt blob is well formed, checked here by a walker of this file's own (not
 *     exif.c's): the header, IFD0 right after it, every IFD's table and every out-of-line value
 *     inside the blob, word-aligned, none overlapping another or a table; tags strictly
 *     ascending; types 1..12; no offset tag but IFD0's Exif and GPS pointers, each to an IFD
 *     of at least one entry; no next-IFD link; an Orientation only of 1..8;
 *   - the parse reads the same from it: orientation and pixel size equal, Make and Model
 *     equal or (a value dropped for size) empty, GPS only where the input had it;
 *   - rebuilding it again gives the same bytes; with a keep list, IFD0 holds only those tags;
 *   - after imgpu_meta_check_exif the block is gone exactly when the parse refused it, and
 *     otherwise every Orientation entry the editor can reach holds 1..8.
 */
#include "error.h"
#include "exif.h"
#include "meta.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct blob {
    const unsigned char *b;
    size_t n;
    int be;
    unsigned char *used;   /* one byte per blob byte: claimed by a table or a value */
} blob;

static unsigned r16(const blob *x, size_t at)
{
    const unsigned char *p = x->b + at;
    return x->be ? (unsigned)p[0] << 8 | p[1] : (unsigned)p[1] << 8 | p[0];
}

static uint32_t r32(const blob *x, size_t at)
{
    const unsigned char *p = x->b + at;
    return x->be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
                 : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* bytes [at, at + len) inside the blob and claimed by nothing else */
static void claim(blob *x, uint64_t at, uint64_t len)
{
    if (at + len > x->n)
        abort();
    for (uint64_t i = at; i < at + len; i++)
        if (x->used[i]++)
            abort();
}

static int is_offset_tag(unsigned tag)
{
    return tag == 0x0111 || tag == 0x0120 || tag == 0x0144 || tag == 0x014A || tag == 0x0190 ||
           tag == 0x0201 || tag == 0x0207 || tag == 0x0208 || tag == 0x0209 || tag == 0x8769 ||
           tag == 0x8825 || tag == 0xA005;
}

/* The IFD at `at`, which == 0 for IFD0: its pointers into ptr[0] (Exif) and ptr[1] (GPS). */
static void check_ifd(blob *x, uint32_t at, int which, uint32_t ptr[2], const unsigned *keep,
                      int nkeep)
{
    static const unsigned char sz[13] = { 0, 1, 1, 2, 4, 8, 1, 1, 2, 4, 8, 4, 8 };
    if ((uint64_t)at + 2 > x->n)
        abort();
    const unsigned count = r16(x, at);
    if (which && !count)
        abort();   /* an empty sub-IFD is not written */
    claim(x, at, 2 + 12 * (uint64_t)count + 4);
    if (r32(x, at + 2 + 12 * (size_t)count))
        abort();   /* no IFD1 */
    unsigned last = 0;
    for (unsigned i = 0; i < count; i++) {
        const size_t e = at + 2 + 12 * (size_t)i;
        const unsigned tag = r16(x, e), type = r16(x, e + 2);
        const uint32_t n = r32(x, e + 4), v = r32(x, e + 8);
        if ((i && tag <= last) || type < 1 || type > 12 || !n)
            abort();
        last = tag;
        const uint64_t size = (uint64_t)sz[type] * n;
        if (is_offset_tag(tag)) {
            if (which || (tag != 0x8769 && tag != 0x8825) || type != 4 || n != 1)
                abort();
            ptr[tag == 0x8825] = v;
            continue;
        }
        if (keep && !which) {
            int k = 0;
            while (k < nkeep && keep[k] != tag)
                k++;
            if (k == nkeep)
                abort();
        }
        if (!which && tag == 0x0112) {
            const uint32_t o = type == 3 && n == 1 ? r16(x, e + 8) : type == 4 && n == 1 ? v : 1;
            if (o < 1 || o > 8)
                abort();
        }
        if (size > 4) {
            if (v & 1)
                abort();
            claim(x, v, size + (size & 1));
        } else if (size < 4) {
            for (uint64_t k = size; k < 4; k++)
                if (x->b[e + 8 + k])
                    abort();   /* the unused part of the field is zero */
        }
    }
}

static void check_blob(const unsigned char *b, size_t n, int be, const unsigned *keep, int nkeep)
{
    blob x = { b, n, be, calloc(1, n ? n : 1) };
    if (!x.used)
        return;
    if (n < 8 || memcmp(b, be ? "MM\0*" : "II*\0", 4) || r32(&x, 4) != 8)
        abort();
    claim(&x, 0, 8);
    uint32_t ptr[2] = { 0, 0 }, none[2];
    check_ifd(&x, 8, 0, ptr, keep, nkeep);
    for (int k = 0; k < 2; k++)
        if (ptr[k])
            check_ifd(&x, ptr[k], k + 1, none, NULL, 0);
    for (size_t i = 0; i < n; i++)
        if (!x.used[i])
            abort();   /* nothing but tables and values: no stale bytes */
    free(x.used);
}

static int parse(const unsigned char *b, size_t n, imgpu_exif_info *info)
{
    imgpu_error_clear();
    const int rc = imgpu_exif_parse(b, n, info);
    if (rc != 0 && (rc != -1 || !imgpu_error_message()[0]))
        abort();
    return rc;
}

/* the Orientation entries of IFD0 that imgpu_exif_set_orientation rewrites */
static void check_orientations(const unsigned char *b, size_t n)
{
    if (n < 8)
        return;
    blob x = { b, n, b[0] == 'M', NULL };
    const uint32_t at = r32(&x, 4);
    if (at < 8 || (uint64_t)at + 2 > n)
        return;
    unsigned count = r16(&x, at);
    if (count > (n - at - 2) / 12)
        count = (unsigned)((n - at - 2) / 12);
    if (count > IMGPU_EXIF_MAX_ENTRIES)
        count = IMGPU_EXIF_MAX_ENTRIES;
    for (unsigned i = 0; i < count; i++) {
        const size_t e = at + 2 + 12 * (size_t)i;
        if (r16(&x, e) != 0x0112 || r32(&x, e + 4) != 1)
            continue;
        const unsigned type = r16(&x, e + 2);
        const uint32_t o = type == 3 ? r16(&x, e + 8) : type == 4 ? r32(&x, e + 8) : 1;
        if (o < 1 || o > 8)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const size_t off = imgpu_exif_skip_header(data, size);
    const unsigned char *b = data + off;
    const size_t n = size - off;
    imgpu_exif_info a, r;
    memset(&a, 0, sizeof a);
    const int rc = parse(b, n, &a);

    unsigned char *x = NULL, *y = NULL;
    size_t xn = 0, yn = 0;
    imgpu_error_clear();
    const int subs = imgpu_exif_rebuild(b, n, 0, NULL, 0, &x, &xn);
    if (rc < 0) {
        if (subs != -1 || !imgpu_error_message()[0] || x)
            abort();
    } else if (subs >= 0) {   /* (-1 here: out of memory) */
        if (subs > 2)
            abort();
        const int be = b[0] == 'M';
        check_blob(x, xn, be, NULL, 0);
        if (parse(x, xn, &r) != 0 || r.orientation != a.orientation || r.pixel_x != a.pixel_x ||
            r.pixel_y != a.pixel_y || (r.make[0] && strcmp(r.make, a.make)) ||
            (r.model[0] && strcmp(r.model, a.model)) || r.has_gps > a.has_gps)
            abort();
        if (imgpu_exif_rebuild(x, xn, 0, NULL, 0, &y, &yn) >= 0) {
            if (yn != xn || memcmp(x, y, xn))
                abort();
            free(y);
            y = NULL;
        }
        /* IFD0 cut down to the tags a TIFF's EXIF keeps (codec_tiff.c) */
        static const unsigned keep[3] = { 0x010F, 0x0112, 0x0132 };
        if (imgpu_exif_rebuild(b, n, 0, keep, 3, &y, &yn) >= 0) {
            check_blob(y, yn, be, keep, 3);
            free(y);
        }
    }
    free(x);

    /* what load does to the block before any output carries it */
    imgpu_meta *m = calloc(1, sizeof *m);
    if (m && n && imgpu_meta_set(&m->exif, &m->exif_len, b, n) == 0) {
        m->orientation = (int)(n % 10);   /* a format's own tag: sometimes out of range too */
        imgpu_meta_check_exif(m);
        if ((rc < 0) != (m->exif == NULL))
            abort();
        if (m->exif) {
            check_orientations(m->exif, m->exif_len);
            if (parse(m->exif, m->exif_len, &r) != 0)
                abort();
        }
    }
    imgpu_meta_free(m);
    imgpu_error_clear();
    return 0;
}

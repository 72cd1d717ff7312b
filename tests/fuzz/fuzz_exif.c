/* fuzz_exif.c — libFuzzer target: the EXIF reader and in-place editor (src/io/exif.h) on any
 * bytes, as a JPEG's APP1 payload ("Exif\0\0" first) or a bare TIFF blob. It parses, rewrites
 * the orientation and the pixel size in a copy of exactly the input's size (so ASan sees any
 * write or read past its end), and parses again, checking what holds for every input:
 *   - a failed parse always says why; the editors fail exactly when the parse does (the
 *     header decides, and no rewrite touches the header);
 *   - fields are in range and the text fields NUL-terminated, trimmed;
 *   - set_orientation returns 0 only when the parse found no orientation, and after a 1 the
 *     parse reads the new value (the rewrite touches only IFD0's value fields, never the
 *     tags, types and counts the parse walks);
 *   - set_pixel_size rewrites at least the dimensions the parse saw (non-zero).
 * Nothing is asserted about the pixel size read back: in a hostile blob the Exif IFD may
 * overlap IFD0, and rewriting it may then legitimately move what the parse reads.
 */
#include "exif.h"
#include "error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static void check_text(const char *s, size_t cap)
{
    const char *end = memchr(s, 0, cap);
    if (!end)
        abort();
    if (end > s && (space(s[0]) || space(end[-1])))
        abort();
}

static void check_info(const imgpu_exif_info *i)
{
    if (i->orientation < 0 || i->orientation > 8 || (i->has_gps != 0 && i->has_gps != 1))
        abort();
    check_text(i->make, sizeof i->make);
    check_text(i->model, sizeof i->model);
    check_text(i->datetime_original, sizeof i->datetime_original);
}

/* parse, and hold a failure to its contract */
static int parse(const unsigned char *b, size_t n, imgpu_exif_info *info)
{
    imgpu_error_clear();
    int rc = imgpu_exif_parse(b, n, info);
    if (rc == 0)
        check_info(info);
    else if (rc != -1 || !imgpu_error_message()[0])
        abort();
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t off = imgpu_exif_skip_header(data, size);
    if (off > size)
        abort();
    const size_t n = size - off;
    imgpu_exif_info a, b;
    memset(&a, 0, sizeof a);
    const int rc = parse(data + off, n, &a);

    unsigned char *copy = malloc(n ? n : 1);
    if (!copy)
        return 0;
    memcpy(copy, data + off, n);

    const int want = a.orientation % 8 + 1;   /* always a change where a valid value was read */
    const int r1 = imgpu_exif_set_orientation(copy, n, want);
    if (rc < 0 ? r1 != -1 : (r1 != 0 && r1 != 1) || (r1 == 0 && a.orientation != 0))
        abort();
    if (parse(copy, n, &b) != rc || (r1 == 1 && b.orientation != want))
        abort();

    /* one SHORT-sized and one LONG-only value: a SHORT entry is rewritten or becomes a LONG */
    const uint32_t w = (uint32_t)n + 0x10000u, h = (uint32_t)n & 0xFFFFu;
    const int r2 = imgpu_exif_set_pixel_size(copy, n, w, h);
    if (rc < 0 ? r2 != -1 : r2 < (b.pixel_x != 0) + (b.pixel_y != 0) || r2 > 2)
        abort();
    if (parse(copy, n, &b) != rc)
        abort();

    free(copy);
    imgpu_error_clear();
    return 0;
}

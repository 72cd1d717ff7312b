/* exif.h — a small, bounds-checked reader, in-place editor and rebuilder of EXIF metadata (no
 * libexif).
 *
 * The input is an EXIF blob in TIFF structure: it starts at the byte-order mark ("II*\0",
 * little-endian, or "MM\0*", big-endian), then the 32-bit offset of IFD0. Every offset in the
 * blob counts from that mark. A JPEG's APP1 segment holds "Exif\0\0" before it:
 * imgpu_exif_skip_header says how many bytes to skip.
 *
 * What is read: IFD0 (Make, Model, Orientation, DateTime, and the pointers to the Exif and
 * GPS IFDs), the Exif IFD (DateTimeOriginal, PixelXDimension, PixelYDimension) and whether a
 * GPS IFD exists; imgpu_exif_each hands every entry of those three IFDs to a writer that
 * rebuilds them elsewhere (the TIFF encoder's Exif and GPS IFDs); imgpu_exif_rebuild writes
 * them into a fresh blob whose every offset is its own (the TIFF decoder's EXIF). The next-IFD
 * link of IFD0 (IFD1, the thumbnail's tags) is not followed: its
 * tags describe the thumbnail, not the image. A pointer to an IFD already visited (the Exif
 * pointer aimed back at IFD0, say) is ignored, so at most three IFDs are read, and at most
 * IMGPU_EXIF_MAX_ENTRIES entries in all.
 *
 * Bad data never fails a call past the header: an entry whose type is wrong for its tag,
 * whose count is not the one the tag needs, or whose value lies (partly) outside the blob is
 * ignored, as is an IFD that lies outside it; entries of an IFD cut short by the end of the
 * blob are read as far as they are whole. Nothing outside [b, b + n) is ever read or written.
 * Of two entries with the same tag in one IFD the first that is well formed counts; the
 * editors rewrite every well-formed one, so that readers that take the last agree.
 *
 * Text fields come from the file as they are (up to the first NUL, spaces trimmed at both
 * ends, cut to fit): escape them (imgpu_escape, error.h) before printing them to a terminal.
 */
#ifndef IMGPU_EXIF_H
#define IMGPU_EXIF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most IFD entries one call looks at, over all IFDs (real files have tens). */
#define IMGPU_EXIF_MAX_ENTRIES 4096

typedef struct imgpu_exif_info {
    int orientation;              /* 1..8 (see imgpu_image_orient); 0: absent or out of range */
    char make[64];                /* "" when absent; always NUL-terminated */
    char model[64];
    char datetime_original[32];   /* DateTimeOriginal, else (absent or blank) IFD0's DateTime */
    uint32_t pixel_x, pixel_y;    /* PixelXDimension / PixelYDimension of the Exif IFD; 0: absent */
    int has_gps;                  /* 1: IFD0 points to a GPS IFD inside the blob with >= 1 entry */
} imgpu_exif_info;

/* 6 when b starts with "Exif\0\0" (a JPEG APP1 payload: the TIFF header follows), else 0. */
size_t imgpu_exif_skip_header(const unsigned char *b, size_t n);

/* Read the fields above from the n bytes at b. Returns 0 and fills *out, or -1 with an error
 * recorded and *out untouched when the header is malformed: fewer than 8 bytes, no byte-order
 * mark and 42, or an IFD0 offset that does not leave its 2-byte entry count inside the blob
 * (or points into the header). */
int imgpu_exif_parse(const unsigned char *b, size_t n, imgpu_exif_info *out);

/* Rewrite IFD0's Orientation (tag 0x0112: SHORT, or LONG as some writers store it, count 1)
 * in place to `orientation` (1..8). Returns 1 when IFD0 has such an entry and it now holds
 * the value (also when it held it before), 0 when it has none (nothing is added: there is no
 * room in place), -1 with an error recorded when the header is malformed or orientation is
 * out of range. */
int imgpu_exif_set_orientation(unsigned char *b, size_t n, int orientation);

/* Rewrite the Exif IFD's PixelXDimension (0xA002) to w and PixelYDimension (0xA003) to h in
 * place, where present (SHORT or LONG, count 1). A SHORT entry whose new value exceeds 65535
 * becomes a LONG (the EXIF standard allows both; a value of count 1 fits the entry either
 * way). Returns how many of the two it rewrote (0, 1 or 2; a missing one is not added), or -1
 * with an error recorded when the header is malformed. */
int imgpu_exif_set_pixel_size(unsigned char *b, size_t n, uint32_t w, uint32_t h);

/* Which IFD an entry comes from (imgpu_exif_each). */
enum { IMGPU_EXIF_IFD0 = 0, IMGPU_EXIF_IFD_EXIF = 1, IMGPU_EXIF_IFD_GPS = 2 };

/* One IFD entry as imgpu_exif_each hands it over: its values are the blob's own bytes, in the
 * blob's byte order (read them with the two helpers below). */
typedef struct imgpu_exif_entry {
    int ifd;                      /* IMGPU_EXIF_IFD0, _IFD_EXIF or _IFD_GPS */
    unsigned tag, type;           /* type: one of TIFF's twelve (1 BYTE .. 12 DOUBLE) */
    uint32_t count;               /* values, each of the type's size */
    const unsigned char *value;   /* count values, wholly inside the blob */
    int big_endian;
} imgpu_exif_entry;

/* Calls fn(e, ctx) for every entry of IFD0, then of the Exif IFD, then of the GPS IFD (never
 * IFD1, the thumbnail's) whose type is one of TIFF's twelve and whose values lie wholly inside
 * the blob, in the order the IFDs list them (duplicates included: the first is the one that
 * counts). The pointer entries (Exif, GPS and Interoperability IFDs) are not handed over: their
 * values are offsets into this blob, meaningless anywhere else. The same limits as
 * imgpu_exif_parse. Returns 0, or -1 with an error recorded when the header is malformed. */
int imgpu_exif_each(const unsigned char *b, size_t n,
                    void (*fn)(const imgpu_exif_entry *e, void *ctx), void *ctx);

/* Value i (< e->count) of a BYTE, SBYTE, UNDEFINED, SHORT, SSHORT, LONG or SLONG entry, as
 * the unsigned bits of its width (a signed one: cast to int8_t / int16_t / int32_t); 0 for
 * another type. */
uint32_t imgpu_exif_entry_uint(const imgpu_exif_entry *e, uint32_t i);

/* Value i (< e->count) of a RATIONAL or SRATIONAL entry: numerator and denominator (SRATIONAL:
 * cast both to int32_t). Both 0 for another type. */
void imgpu_exif_entry_rational(const imgpu_exif_entry *e, uint32_t i, uint32_t *num,
                               uint32_t *den);

/* The most bytes of out-of-line values one rebuilt blob holds (a real one: a few KiB, a maker
 * note tens of KiB); entries past it are dropped. */
#define IMGPU_EXIF_REBUILD_MAX_VALUES ((size_t)1 << 20)

/* A fresh, self-contained EXIF blob (*out, malloc()'ed, *out_len bytes) from the TIFF-structured
 * bytes b[0..n): an EXIF blob, or a whole TIFF file whose directory at ifd0_off (0: the one the
 * header names) plays IFD0. The blob has IFD0 (only the tags in keep0[0..nkeep0); keep0 NULL:
 * every tag), then the Exif IFD and the GPS IFD that IFD0 points to, each entry with its value
 * (out-of-line values after their IFD, word-aligned), in b's byte order. Every offset in it is
 * computed here, none is copied:
 *   - every tag whose value is an offset into b (the Exif, GPS and Interoperability pointers,
 *     SubIFDs, strip, tile and thumbnail offsets) is dropped, in any IFD; IFD0 gets pointers of
 *     its own to the copies of the Exif and GPS IFDs, which are written only when they keep an
 *     entry; no IFD1 (the next link is 0);
 *   - the IFDs are found and walked as imgpu_exif_parse walks them (the same limits, a pointer
 *     back ignored), and of the entries of one tag only the first the parse would take is kept
 *     (so the parse reads the same fields from the new blob), an Orientation out of 1..8
 *     dropped (the parse reads it as none);
 *   - entries of unknown type or whose values leave b are dropped, and so are those past
 *     IMGPU_EXIF_REBUILD_MAX_VALUES bytes of values;
 *   - entries are sorted by tag, as TIFF asks.
 * Returns how many sub-IFDs it wrote (0, 1 or 2), or -1 with an error recorded (*out
 * untouched) when the header is malformed, ifd0_off lies outside b, or memory is short.
 * Rebuilding a rebuilt blob gives the same bytes. */
int imgpu_exif_rebuild(const unsigned char *b, size_t n, uint32_t ifd0_off,
                       const unsigned *keep0, int nkeep0, unsigned char **out, size_t *out_len);

#ifdef __cplusplus
}
#endif
#endif

/* meta.h — what travels with an image besides its pixels: the ICC profile, EXIF, XMP and PNG
 * text chunks, as the file stored them, plus what load learned from them (orientation, pages).
 *
 * Load (io.h, imgpu_image_load_ex) fills an imgpu_meta from the file's bytes through the
 * format's read_meta (codec.h); save writes it into the output where the format can hold it
 * (imgpu_save_options.meta; NULL or --strip: nothing). The blocks are kept byte for byte and
 * never interpreted beyond what is said here: pixels are not colour-managed, the ICC profile
 * only travels, with one exception: a CMYK or YCCK JPEG is converted to sRGB through its
 * profile on load (codec_jpeg.c, lcms2), and icc then holds sRGB's profile, the file's own
 * kept in file_icc (a CMYK profile describes pixels that no longer exist). Ownership: every pointer is malloc()'ed and owned; imgpu_meta_free frees them
 * (NULL is fine).
 */
#ifndef IMGPU_META_H
#define IMGPU_META_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A PNG text chunk kept whole (tEXt, zTXt or iTXt): written back unchanged into PNG outputs. */
typedef struct imgpu_meta_text {
    char type[5];
    unsigned char *data;
    size_t len;
} imgpu_meta_text;

typedef struct imgpu_meta {
    unsigned char *icc;   size_t icc_len;   /* the ICC profile, whole */
    unsigned char *exif;  size_t exif_len;  /* EXIF in TIFF structure, from "II*\0" / "MM\0*" */
    unsigned char *xmp;   size_t xmp_len;   /* the XMP packet (UTF-8 XML), no header */
    imgpu_meta_text *text; int n_text;      /* PNG text chunks other than XMP */
    int orientation;  /* EXIF (or TIFF) Orientation as stored, 1..8; 0: none */
    int oriented;     /* 1: load turned the pixels upright and set Orientation to 1 */
    int pages;        /* pages (TIFF directories) in the file; 1 for single-image formats */
    int page;         /* the page loaded (0-based) */
    const char *colour;  /* the file's colour space where the format says ("CMYK", "YCCK",
                          * "RGB", "Gray": JPEG), a static string; NULL: as the channels say */
    int colour_converted;  /* 1: load converted the pixels from `colour` to sRGB through the
                            * file's ICC profile (now file_icc); icc is sRGB's */
    unsigned char *file_icc; size_t file_icc_len;  /* the file's own profile when load did not
                            * keep it as icc (CMYK, YCCK: the pixels are RGB now); else NULL */
} imgpu_meta;

void imgpu_meta_free(imgpu_meta *m);
/* Replace one block with a copy of b[0..n) (n == 0: drop it). 0, or -1 out of memory. */
int imgpu_meta_set(unsigned char **dst, size_t *dst_len, const unsigned char *b, size_t n);
/* Append a PNG text chunk. 0, or -1 out of memory. */
int imgpu_meta_add_text(imgpu_meta *m, const char type[4], const unsigned char *b, size_t n);
/* The EXIF block made fit to be written back, after load: dropped when imgpu_exif_parse
 * refuses it (damaged metadata is skipped, as a damaged ICC profile is); every Orientation
 * entry of IFD0 set to the one the parse reads, and where that is out of 1..8 (the parse reads
 * it as none) to m->orientation where that is 1..8 (what the load took instead: a format's own
 * tag), else to 1 (the pixels as stored). No Orientation entry is added. */
void imgpu_meta_check_exif(imgpu_meta *m);
/* The description of an ICC profile (its 'desc' tag: v2 textDescriptionType or v4
 * multiLocalizedUnicode, first record, ASCII only) into out[0..n); 0, or -1 when none. */
int imgpu_meta_icc_description(const unsigned char *icc, size_t len, char *out, size_t n);

#ifdef __cplusplus
}
#endif
#endif

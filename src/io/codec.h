/* codec.h — the codec table behind io.c: one entry per image format, each filled in by the
 * file of its family (codec_png.c, codec_jpeg.c, codec_bmp_tga.c, codec_pnm.c). An entry says
 * what the format is called, which extensions name it, how its magic bytes are recognised,
 * how its structure is walked before any decoder runs (dimensions, and proof that the pixel
 * data is all there), how it decodes at 8 and 16 bits, how it encodes, and what it can store.
 * io.c's load and save do every format-independent step and call the entry for the rest;
 * codec.c holds the table itself and the lookups (by format, by extension, by content).
 * Internal to imgpu_core: callers outside io use io.h.
 *
 * Adding a codec: write src/codec_NAME.c with its `const imgpu__codec imgpu__codec_NAME`,
 * add an imgpu_format value in io.h, list the entry in codec.c's table and the file in
 * CMakeLists.txt's imgpu_core.
 */
#ifndef IMGPU_CODEC_H
#define IMGPU_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "io.h"

/* What a structure scan learns. A header error (returned by scan) is reported at once; a
 * data error is kept and reported after the size and depth checks, so a huge header gets
 * the clearer "--max-pixels" message rather than "truncated". */
typedef struct imgpu__scan {
    int page;           /* in: the page asked for (--page; formats with pages) */
    const char *name;   /* in: the input's name, for notices (WebP: an animation's frames) */
    uint64_t w, h;
    const char *data_error;
    int pnm_maxval;     /* PNM: the header's maximum sample value */
    size_t pnm_data;    /* PNM: offset of the first sample */
    int pages;          /* formats with pages: how many the file has */
    int channels, deep; /* info_from_scan codecs: the decoded layout (deep: 16 bits) */
    /* The decoder's own memory at its peak beyond the file and the decoded image (w x h x
     * channels samples): strip or tile buffers, inflated rows, libwebp's pixel buffer,
     * libjpeg's coefficient arrays, as far as the structure tells. io.c checks file + image +
     * work against --max-memory before anything is decoded (README, "Limits"), and the
     * decoder's budget is capped at the limit too, for what the structure cannot tell. */
    uint64_t work;
    int own_decode;     /* out: 1 when the scan set channels and deep for a file the codec
                         * decodes itself though its entry is not info_from_scan (BMP's RLE:
                         * stb is not asked) */
    char buf[96];       /* room for a data_error or a returned message that is formatted */
} imgpu__scan;

/* What one encode is asked for: io.c has validated these (quality 1..100, level 0..9) and
 * resolved the defaults (subsampling, compression, background). */
typedef struct imgpu__encode_args {
    int quality;        /* JPEG, lossy WebP */
    int level;          /* PNG zlib level */
    int png_threads;    /* > 0: PNG through png_parallel.c's strip encoder */
    imgpu_subsampling subsampling;  /* JPEG: 444, 422 or 420 */
    int progressive, optimize;      /* JPEG */
    imgpu_compression compression;  /* TIFF */
    int lossless;                   /* WebP */
    uint8_t background[4];          /* JPEG: what alpha is flattened onto */
    const imgpu_meta *meta;         /* NULL: write no metadata */
    const char *path;               /* the output's name (NULL: to memory): PNM's extension
                                     * picks a graymap or a pixmap; for messages */
} imgpu__encode_args;

typedef struct imgpu__codec {
    imgpu_format format;
    const char *name;                 /* in messages: "PNG" */
    const char *const *extensions;    /* lower case, no dot, NULL-terminated */
    /* Whether b[0..n) starts with this format's magic bytes. A format with no magic (TGA)
     * sets weak_magic: it is tried only after every magic format and every refused one. */
    int (*sniff)(const unsigned char *b, size_t n);
    int weak_magic;
    /* 1: scan reports channels and depth and the codec decodes with its own library (no
     * stb info cross-check); 0: stb's info is asked and must agree with the scan. */
    int info_from_scan;
    /* Walks the file's structure: NULL, or a header error (a static string or s->buf). */
    const char *(*scan)(const unsigned char *b, size_t n, imgpu__scan *s);
    /* 8-bit decode into a malloc()'ed w*h*c buffer, or NULL with *why, which io.c reports
     * as "corrupt NAME data (WHY)" unless WHY names its kind itself ("corrupt ...",
     * "truncated ...", "out of memory ...": then WHY alone); NULL: stb's. */
    unsigned char *(*decode8)(const unsigned char *b, size_t n, const imgpu__scan *s,
                              size_t budget, int *w, int *h, int *c, const char **why);
    /* 16-bit load of a file whose scan passed; the image, or NULL with the error recorded
     * (the messages name `name`). NULL: stb's 16-bit decode (imgpu__load16_stb). */
    imgpu_image *(*load16)(const unsigned char *b, size_t n, const char *name,
                           const imgpu__scan *s, size_t budget);
    /* Fills m from the file's metadata (ICC, EXIF, XMP, text; orientation) after a
     * successful scan; m->pages and m->page (the page loaded) are already set. Damaged metadata is skipped, never an error: -1 only when out of
     * memory. NULL: the format carries none. */
    int (*read_meta)(const unsigned char *b, size_t n, imgpu_meta *m);
    /* What save can keep: alpha at all, sides up to max_side (0: no limit of its own), and
     * check_size for anything else (after the common checks; NULL: nothing more). */
    int stores_alpha;
    int flattens_alpha;   /* no alpha, but io.c composites onto the background (JPEG) */
    int max_side;
    int (*check_size)(int w, int h, int channels, int depth, char *why, size_t n);
    /* Encodes an 8-bit image (depth 8, stride checked) into a malloc()'ed buffer: 0, or -1
     * with the reason in why[0..n) for "cannot write 'PATH': WHY". NULL: stb's
     * (imgpu__encode_stb). */
    int (*encode8)(const imgpu_image *im, const imgpu__encode_args *a, unsigned char **out,
                   size_t *out_len, char *why, size_t n);
    /* The same for a 16-bit image; NULL: the format stores 8 bits, and io.c converts. */
    int (*encode16)(const imgpu_image *im, const imgpu__encode_args *a, unsigned char **out,
                    size_t *out_len, char *why, size_t n);
    /* Several images into one file (TIFF's pages; NULL: the format holds one image): begin
     * for `pages` images of about raw_bytes of samples (NULL with why), add each (an image
     * encode8 / encode16 would take; 0 or -1 with why), end (out != NULL: the file, 0 or -1
     * with why; out NULL: abandoned); end frees the writer either way. */
    void *(*pages_begin)(int pages, uint64_t raw_bytes, char *why, size_t n);
    int (*pages_add)(void *writer, const imgpu_image *im, const imgpu__encode_args *a, char *why,
                     size_t n);
    int (*pages_end)(void *writer, unsigned char **out, size_t *out_len, char *why, size_t n);
    /* The library behind the entry and its version at run time, for `imgpu --version`
     * ("libwebp 1.2.4"), written into buf[0..n); NULL: the codec is imgpu's own or stb's. */
    void (*library)(char *buf, size_t n);
    /* A bitstream of this format encoded elsewhere (nvJPEG's JPEG) with m's metadata put in as
     * encode8 would (JPEG: EXIF, XMP and ICC after its SOI and JFIF APP0, one written when it
     * has none; any APP segment of its own that is not JFIF is dropped; name: the output, for
     * notices), into a malloc()'ed *out. 0, or -1 with why. NULL: the format takes none. */
    int (*insert_meta)(const unsigned char *b, size_t n, const imgpu_meta *m, const char *name,
                       unsigned char **out, size_t *out_len, char *why, size_t why_n);
} imgpu__codec;

extern const imgpu__codec imgpu__codec_png;
extern const imgpu__codec imgpu__codec_jpeg;
extern const imgpu__codec imgpu__codec_bmp;
extern const imgpu__codec imgpu__codec_tga;
extern const imgpu__codec imgpu__codec_pnm;
extern const imgpu__codec imgpu__codec_tiff;
extern const imgpu__codec imgpu__codec_webp;

/* codec.c: the entry of format f, or NULL for UNKNOWN and anything not in the table. */
const imgpu__codec *imgpu__codec_of(imgpu_format f);
/* The format of b[0..n) by content. *refused is the name of a format recognised only to be
 * refused ("GIF"), with UNKNOWN; NULL otherwise. */
imgpu_format imgpu__codec_sniff(const unsigned char *b, size_t n, const char **refused);
/* The same, or -1 with the refusal recorded: "cannot read 'NAME': ...". */
int imgpu__codec_sniff_checked(const char *name, const unsigned char *b, size_t n,
                               imgpu_format *f);

/* codec_shared.c: shared by the stb-backed entries and io.c. */
/* stb's encoder for k's format on an 8-bit image: rows copied tight first where stb needs them
 * so (every format but PNG). */
int imgpu__encode_stb(const imgpu__codec *k, const imgpu_image *im, const imgpu__encode_args *a,
                      unsigned char **out, size_t *out_len, char *why, size_t n);
/* stb's encoder on pixels already laid out: the "%s encoding failed: %s" message. */
int imgpu__encode_stb_pixels(const imgpu__codec *k, const unsigned char *px, int w, int h, int c,
                             size_t stride, const imgpu__encode_args *a, unsigned char **out,
                             size_t *out_len, char *why, size_t n);
/* stb's 16-bit decode, checked against the scan, as an image. */
imgpu_image *imgpu__load16_stb(const unsigned char *b, size_t n, const char *name,
                               const imgpu__scan *s, size_t budget, const imgpu__codec *k);

/* io.c: the EXIF orientation applied on load (unless opts->no_auto_orient): the pixels
 * turned upright, and the EXIF Orientation set to 1 and its pixel size updated in m.
 * 0, or -1 with the error recorded (*im is then freed and NULL). */
int imgpu__orient_on_load(imgpu_image **im, imgpu_meta *m, const imgpu_load_options *opts);

/* codec_shared.c: a tight w x h x c image of `depth` bits that owns the decoder's malloc()'ed px
 * (freed when the image cannot be made; the error names `name`). */
imgpu_image *imgpu__adopt_pixels(const char *name, void *px, int w, int h, int c, int depth);

/* io_read.c: the input read whole, once (see imgpu_image_load in io.h). */
int imgpu__read_input(const char *path, const imgpu_load_options *opts, unsigned char **out,
                      size_t *out_len);
/* Largest file accepted: --max-file-size, and never beyond stb's int lengths. */
uint64_t imgpu__max_file_bytes(const imgpu_load_options *opts);

/* io_write.c: buf written whole to standard output ("-"); 0 or -1 with the error recorded. */
int imgpu__write_stdout(const unsigned char *buf, size_t len);
/* io_write.c: buf written to path atomically (see imgpu_image_save_recorded in io.h);
 * before_rename may be NULL. */
int imgpu__write_atomic(const char *path, const unsigned char *buf, size_t len, int no_follow,
                        int (*before_rename)(void *ctx, long long size, long long mtime_ns),
                        void *ctx);
/* io_write.c: this thread's next imgpu__write_atomic stages its output instead of putting it in
 * place: the temp file is named "DIR/.NAME.TAG.XXXXXX" (tag: [A-Za-z0-9_-], at most 40 bytes),
 * written whole and synced, before_rename is called, and it is left there, its path
 * malloc'ed into *staged for the caller to rename (or remove). A target that exists and is not
 * a regular file is refused. Used by the batch's staged runs (batch.h, imgpu_batch_stage). */
void imgpu__write_stage_next(const char *tag, char **staged);

/* The decode-time limit (--max-decode-time) for decoders other than stb: 1 once the deadline
 * io.c armed for this load has passed. Libraries with a progress hook (libjpeg's progress
 * monitor, a strip loop, an incremental decoder) poll it and stop with "took too long"; io.c
 * refuses any load that finishes late in any case. */
int imgpu__decode_late(void);

/* Byte readers for the structure scans. */
static inline uint32_t imgpu__be16(const unsigned char *p) { return (uint32_t)p[0] << 8 | p[1]; }
static inline uint32_t imgpu__le16(const unsigned char *p) { return (uint32_t)p[1] << 8 | p[0]; }
static inline uint32_t imgpu__be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint32_t imgpu__le32(const unsigned char *p)
{
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

#endif

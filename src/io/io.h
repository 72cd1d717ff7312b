/* io.h — loading and saving images (stb_image / stb_image_write for BMP and TGA, PNG deflate via
 * zlib; JPEG through libjpeg-turbo, TIFF through libtiff, WebP through libwebp).
 *
 * Contract:
 *  - Load reads PNG, JPEG, TIFF, WebP, BMP, TGA and PNM (8-bit; gray, gray+alpha, RGB, RGBA; PNG,
 *    TIFF and PNM also 16-bit, which load as depth 16 with native-endian samples; a PNM maxval other
 *    than 255 or 65535 is scaled to the full range) and returns the file's own channel
 *    count. Everything else (HDR, GIF, PSD, a
 *    truncated or corrupt file, a header larger than max_pixels, a decode that would need
 *    more than --max-memory) is refused with a message naming the file and the reason,
 *    before any pixel memory is allocated.
 *  - Save picks the format from the output's extension (.png .jpg/.jpeg .tif/.tiff .webp .bmp .tga
 *    .pnm/.pgm/.ppm); an unknown extension is an error the CLI reports as a usage error.
 *    The write is atomic: a temp file in the target directory, flushed and fsync'ed, then
 *    renamed over the target. A failed save leaves no partial file and never touches an
 *    existing one.
 *  - 16-bit images save as 16-bit PNG (codec_png.c's own encoder: zlib deflate, big-endian
 *    samples), 16-bit TIFF and 16-bit PNM (maxval 65535, big-endian); JPEG, BMP and TGA store 8 bits, so a 16-bit
 *    image is converted (imgpu_image_to_depth) with a notice.
 *  - BMP: stb's decoder, but RLE8 / RLE4 (which stb refuses) imgpu's own, loading as RGB
 *    (codec_bmp_tga.c); a stream that would draw outside the image is refused as corrupt.
 *  - JPEG decodes as OpenCV's imread(IMREAD_UNCHANGED) does, bit for bit: gray as 1 channel,
 *    YCbCr/RGB as RGB; CMYK/YCCK are converted to sRGB through their ICC profile with lcms2
 *    (relative colorimetric, as libvips; the metadata then carries sRGB's profile), or, without
 *    a usable profile or lcms2, with OpenCV's formula and a notice.
 *  - What each format keeps on save:
 *      PNG, TGA  every channel count, exactly.
 *      BMP       pixel values exactly, but BMP has no gray: gray is stored as RGB and loads
 *                back with 3 equal channels, gray+alpha as RGBA (4 channels). A 4-channel BMP
 *                whose alpha is 0 everywhere loads back opaque (stb treats such alpha as unused).
 *      PNM       binary gray (P5) and RGB (P6) exactly; .pgm always writes a graymap (an
 *                RGB image as OpenCV's RGB2GRAY luma, with a notice), .ppm always a pixmap,
 *                .pnm follows the image, .pbm is refused; an image with alpha is refused
 *                ("PNM cannot store alpha"): dropping it silently would lose data, and
 *                imgpu reads and writes no P7/PAM. Load reads P1..P6 (ASCII too).
 *      TIFF      8/16-bit gray, gray+alpha, RGB, RGBA exactly with --compression none, lzw,
 *                deflate (default), packbits, zstd or lzma; jpeg (8-bit only) is lossy, webp
 *                (8-bit RGB/RGBA only) lossy unless --lossless (then exact but for the colour
 *                under alpha 0, which libwebp rewrites). Alpha is written unassociated.
 *                Metadata: ICC, XMP and Orientation tags (EXIF is read from TIFF inputs, never
 *                written into TIFF outputs). Loading reads
 *                one page (--page), un-premultiplies associated alpha and expands 8-bit
 *                palettes to RGB (codec_tiff.c).
 *      JPEG      lossy (quality 1..100, default 92; chroma 4:2:0 unless --subsampling;
 *                progressive and optimized Huffman on request; the bytes equal
 *                cv2.imwrite's at the same settings). Gray is written as a 1-channel JPEG
 *                and loads back gray; an image with alpha (gray+alpha, RGBA) is flattened
 *                onto the background (white unless --background) with a notice, and is
 *                stored as gray or RGB.
 *      WebP      lossy (quality 1..100, default IMGPU_DEFAULT_WEBP_QUALITY, 75; libwebp's
 *                method 4: the bytes PIL writes) or, with lossless, every pixel exactly
 *                (libwebp's exact mode: colour under transparent pixels kept). No gray: gray
 *                is stored as RGB, gray+alpha as RGBA; an alpha that is 255 everywhere is
 *                dropped by libwebp, so such an image loads back as RGB. 8 bits (16-bit
 *                images converted, with a notice); sides up to 16383 (16384 read: VP8L can
 *                hold it, libwebp's encoder cannot write it). ICC, EXIF and XMP kept
 *                (chunks, through libwebp's muxer). On load, an animated WebP gives its first
 *                frame, composited on its canvas, with a notice.
 *  - Save through a symbolic link the user named replaces the file it points to (the link
 *    stays); with no_follow (batch outputs, the viewer's saves) the link itself is replaced
 *    and what it pointed to is never touched, so a link planted in OUTDIR cannot carry a
 *    write out of it. A target that exists and is not a regular file (a character device, a
 *    FIFO) is written in place, without the temp file, since it cannot be renamed over; a
 *    FIFO that no process is reading is refused at once rather than waited on. Replacing a regular file keeps
 *    its permission bits; a new file gets 0666 & ~umask.
 */
#ifndef IMGPU_IO_H
#define IMGPU_IO_H

#include <stddef.h>
#include <stdint.h>

#include "image.h"
#include "imgpu_limits.h"
#include "meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A JPEG with more scans than this is refused from its structure: a progressive decoder walks
 * the whole image once per scan, so scans are decoding time that no other limit bounds in
 * advance (the decode-time limit stops what is left). */
#define IMGPU_MAX_JPEG_SCANS 256

struct imgpu_image_shape;   /* below */

typedef struct imgpu_load_options {
    uint64_t max_pixels;      /* 0 means IMGPU_DEFAULT_MAX_PIXELS */
    uint64_t max_file_bytes;  /* 0 means IMGPU_DEFAULT_MAX_FILE_BYTES */
    uint64_t max_decode_ms;   /* 0 means IMGPU_DEFAULT_MAX_DECODE_MS */
    int no_auto_orient;       /* 1: keep the stored pixels and the EXIF Orientation tag
                               * (--no-auto-orient); 0: turn the image upright on load */
    int page;                 /* the page (TIFF directory) to load, 0-based (--page) */
    int no_page_notice;       /* 1: no notice that page 0 of a multi-page file is all that is
                               * used (`info` lists the pages; --pages all loads each) */
    /* Optional: called once the file is read and its structure checked, before the load's
     * own memory check and before any pixel memory is allocated, with the image the load
     * will return (the EXIF orientation applied unless no_auto_orient). Nonzero refuses the
     * load (the hook records the error): the front ends check there what the job will need
     * (imgpu_pipeline_plan against --max-pixels and --max-memory, the output format), so a
     * job that cannot run is refused from the header, before its input is decoded; the
     * single-image commands also decide there whether CUDA is worth starting while the
     * decode runs. */
    int (*on_shape)(const struct imgpu_image_shape *shape, void *ctx);
    void *on_shape_ctx;
    /* --max-memory for the load itself: the file, the decoded image, the decoder's working
     * memory and the copy that turns the image upright, checked from the structure before
     * the decode (and the decoder held to it while it runs). 0: the process-wide limit
     * (op.h, imgpu_set_limits: --max-memory, IMGPU_MAX_MEMORY, else 8 GiB). */
    uint64_t max_memory;
} imgpu_load_options;

/* Fill each limit still 0 in *o from the environment: IMGPU_MAX_PIXELS (a count),
 * IMGPU_MAX_FILE_SIZE (bytes, with an optional K, M or G suffix: binary units),
 * IMGPU_MAX_DECODE_TIME (seconds, decimals allowed). Options given on the command line win
 * because they are set first. -1 with an error naming the variable when one is malformed. */
int imgpu_load_options_from_env(imgpu_load_options *o);

typedef enum imgpu_format {
    IMGPU_FORMAT_UNKNOWN = 0,
    IMGPU_FORMAT_PNG,
    IMGPU_FORMAT_JPEG,
    IMGPU_FORMAT_BMP,
    IMGPU_FORMAT_TGA,
    IMGPU_FORMAT_PNM,
    IMGPU_FORMAT_TIFF,
    IMGPU_FORMAT_WEBP,
} imgpu_format;

/* JPEG chroma subsampling (--subsampling); 0 in imgpu_save_options means 4:2:0. */
typedef enum imgpu_subsampling {
    IMGPU_SUBSAMPLING_DEFAULT = 0,
    IMGPU_SUBSAMPLING_444,
    IMGPU_SUBSAMPLING_422,
    IMGPU_SUBSAMPLING_420,
} imgpu_subsampling;

/* TIFF compression (--compression); 0 in imgpu_save_options means deflate. */
typedef enum imgpu_compression {
    IMGPU_COMPRESSION_DEFAULT = 0,
    IMGPU_COMPRESSION_NONE,
    IMGPU_COMPRESSION_DEFLATE,
    IMGPU_COMPRESSION_LZW,
    IMGPU_COMPRESSION_PACKBITS,
    IMGPU_COMPRESSION_ZSTD,
    IMGPU_COMPRESSION_LZMA,
    IMGPU_COMPRESSION_JPEG,
    IMGPU_COMPRESSION_WEBP,
} imgpu_compression;

typedef struct imgpu_save_options {
    int quality;    /* JPEG and lossy WebP quality 1..100; 0 means IMGPU_DEFAULT_QUALITY
                     * (WebP: IMGPU_DEFAULT_WEBP_QUALITY) */
    int png_level;  /* zlib level 0..9; -1 means the default (fast: 1) */
    int no_follow;  /* 1: a symbolic link at the target is itself replaced by the new file,
                     * never followed (outputs whose name the user did not type: batch's
                     * OUTDIR/..., the viewer's NAME.view.png). 0: the link is followed. */
    imgpu_subsampling subsampling;   /* JPEG; default 4:2:0 */
    int progressive;                 /* JPEG: progressive scans */
    int optimize;                    /* JPEG: optimized Huffman tables */
    imgpu_compression compression;   /* TIFF; default deflate */
    int lossless;                    /* WebP: lossless */
    int has_background;              /* background[] set: what alpha is flattened onto for */
    uint8_t background[4];           /* formats without alpha (JPEG); default white */
    int strip;                       /* --strip: write no metadata even when meta is set */
    const imgpu_meta *meta;          /* metadata to write where the format can hold it */
    imgpu_format format;             /* the output format when the path does not name one
                                      * ("-": standard output); UNKNOWN: from the path */
} imgpu_save_options;

/* JPEG quality when none is asked for (issue 16: 92, as photo tools commonly write; OpenCV's
 * default is 95, libjpeg's 75). */
#define IMGPU_DEFAULT_QUALITY 92
/* Lossy WebP's own default: WebP's scale is not JPEG's (a WebP at 75 looks like a JPEG in the
 * high 80s), and 75 is what libwebp, cwebp, libvips and ImageMagick write when no quality is
 * given (PIL: 80). With --lossless the quality is the effort, as in cwebp. */
#define IMGPU_DEFAULT_WEBP_QUALITY 75
/* The quality a lossy save of format f uses with these options: the one the encoders use and the
 * batch manifest records (a WebP file's default is 75, every other's 92). */
#define IMGPU_SAVE_QUALITY(opts, f)                                                             \
    ((opts) && (opts)->quality > 0 ? (opts)->quality                                             \
     : (f) == IMGPU_FORMAT_WEBP ? IMGPU_DEFAULT_WEBP_QUALITY : IMGPU_DEFAULT_QUALITY)

/* A copy of `im` at `depth` bits (8 or 16): 16 -> 8 rounds v * 255 / 65535 to nearest,
 * 8 -> 16 multiplies by 257 (the exact inverse). NULL + error on failure. */
imgpu_image *imgpu_image_to_depth(const imgpu_image *im, int depth);

/* The output extensions, for messages. */
#define IMGPU_EXTENSIONS_HINT ".png, .jpg, .tif, .webp, .bmp, .tga, .pnm, .pgm or .ppm"

/* Format chosen by a path's extension (case-insensitive); UNKNOWN when none matches. */
imgpu_format imgpu_format_from_path(const char *path);
const char *imgpu_format_name(imgpu_format f);
/* The name of the format a path's extension names when imgpu knows that format but cannot
 * write it ("GIF" for .gif), or NULL (a writable format, no
 * extension, or one nobody knows). For messages: "GIF output is not supported", rather than
 * "cannot tell the output format". */
const char *imgpu_format_unwritable_from_path(const char *path);
/* The codec libraries and their versions, for `imgpu --version`: "libjpeg-turbo 2.1.5,
 * libtiff 4.5.0, ..." (each once) into buf[0..n). */
void imgpu_codec_libraries(char *buf, size_t n);
/* Names, in one notice, the output options in o that format f does not use (--quality on a
 * PNG, --compression on a JPEG, ...) instead of ignoring them silently; how many there were. */
int imgpu_save_options_note_ignored(const imgpu_save_options *o, imgpu_format f);

/* Whether format f can store a w x h image of `channels` and `depth` bits at all, decided
 * from the shape alone (no pixels): JPEG and TGA sides of at most 65535, the encoders' int
 * arithmetic (about 2 GiB of pixel data), 16-bit PNG rows of at most 4 GiB, no alpha in PNM
 * (JPEG flattens it on save). 0, or -1 with the reason in why[0..n) (no error recorded).
 * encode() uses it, and the front ends call it on the planned result before running the ops. */
int imgpu_format_check_size(imgpu_format f, int w, int h, int channels, int depth, char *why,
                            size_t n);

/* opts may be NULL (defaults). The path is opened once, without blocking, and read once:
 * a regular file to its end; a FIFO, a pipe (/dev/stdin) or a character device through
 * poll(), where --max-decode-time (max_decode_ms) bounds the whole wait for data (a FIFO
 * with no writer, a stalled writer), the read stops once it has more than max_file_bytes,
 * and a stream whose first bytes are no image format (/dev/zero) is refused after them.
 * Directories, block devices and sockets are refused by name. */
imgpu_image *imgpu_image_load(const char *path, const imgpu_load_options *opts);
/* The same, and what the bytes read were: their format by content (*format) and their count
 * (*bytes), both set only on success; either may be NULL. `imgpu info` uses it, so a pipe
 * or FIFO is never opened a second time to ask. */
imgpu_image *imgpu_image_load_info(const char *path, const imgpu_load_options *opts,
                                   imgpu_format *format, uint64_t *bytes);
/* What a load learned besides the pixels (imgpu_image_load_ex). */
typedef struct imgpu_load_result {
    imgpu_format format;  /* by content */
    uint64_t bytes;       /* the file's size as read */
    imgpu_meta *meta;     /* owned by the caller (imgpu_meta_free); never NULL on success */
} imgpu_load_result;
/* imgpu_image_load_info that also returns the metadata. "-" reads standard input. */
imgpu_image *imgpu_image_load_ex(const char *path, const imgpu_load_options *opts,
                                 imgpu_load_result *r);
/* What a decode would give, from a file's structure alone (imgpu_image_read_checked). */
typedef struct imgpu_image_shape {
    int width, height, channels, depth;
} imgpu_image_shape;
/* The file read and checked as imgpu_image_load_ex would (the limits, memory included, its
 * format by content, its structure, the pixel count, opts->on_shape) and its metadata read
 * (r->meta, the orientation resolved: EXIF's wins), but not decoded: for a decoder outside io
 * (nvJPEG in batch). *buf (*len bytes, malloc'ed, the caller frees) are the file's bytes,
 * *shape what a decode gives before the orientation is applied. 0, or -1 with the error
 * recorded (nothing to free). */
int imgpu_image_read_checked(const char *path, const imgpu_load_options *opts,
                             unsigned char **buf, size_t *len, imgpu_image_shape *shape,
                             imgpu_load_result *r);
/* The metadata of an image just turned upright from EXIF orientation m->orientation (into a
 * width x height image): EXIF's Orientation set to 1 and its pixel size to the new one,
 * m->oriented set; what a load that turns the image does (imgpu__orient_on_load), for a
 * decoder outside io (batch's nvJPEG path turns on the GPU). */
void imgpu_meta_set_upright(imgpu_meta *m, int width, int height);
/* What `imgpu info` reports, without decoding: imgpu_image_read_checked (every check a load
 * makes before its decode, the metadata), then *shape as the load would return the image
 * (turned upright: 5..8 swap the sides, and r->meta->oriented set, unless no_auto_orient).
 * Corrupt pixel data, which only a decode finds, passes. 0, or -1 with the error recorded. */
int imgpu_image_read_info(const char *path, const imgpu_load_options *opts,
                          imgpu_image_shape *shape, imgpu_load_result *r);
/* Every page of a file (a TIFF's directories; the one image of other formats), read from the
 * path once ("-": standard input) and each loaded as imgpu_image_load_ex would load it with
 * opts->page set to its number (and no page notice): page(ctx, index, count, im, meta) is
 * called in order, and owns im and meta (imgpu_image_free, imgpu_meta_free). It returns 0
 * to go on, -1 to stop (with its error recorded). 0 once every page was handed over, or -1
 * with the error recorded (a page that fails to load stops the walk). */
int imgpu_image_load_pages(const char *path, const imgpu_load_options *opts,
                           int (*page)(void *ctx, int index, int count, imgpu_image *im,
                                       imgpu_meta *meta),
                           void *ctx);
/* Several images written as the pages of one file (TIFF: --pages all), atomically like
 * imgpu_image_save: begin names the file, how many pages it gets and about how many bytes of
 * samples they add up to (a TIFF past 2 GiB becomes BigTIFF); add encodes each page in order
 * with its own metadata (opts->meta is not used; NULL or --strip: none); finish writes the
 * file (0, or -1 with the error recorded: the target untouched) and abandon drops it; both
 * free the writer (NULL is fine). A format that holds one image (PNG, JPEG, ...) fails begin:
 * "cannot write 'a.png': PNG holds one image, not pages (write a .tif ...)". */
typedef struct imgpu_page_writer imgpu_page_writer;
imgpu_page_writer *imgpu_pages_begin(const char *path, int pages, uint64_t raw_bytes,
                                     const imgpu_save_options *opts);
int imgpu_pages_add(imgpu_page_writer *w, const imgpu_image *im, const imgpu_meta *meta);
int imgpu_pages_finish(imgpu_page_writer *w);
void imgpu_pages_abandon(imgpu_page_writer *w);
/* Whether format f can hold several pages (TIFF). */
int imgpu_format_has_pages(imgpu_format f);
/* Decode from memory; `name` is used in messages (the fuzzers use this path). */
imgpu_image *imgpu_image_load_memory(const void *buf, size_t len, const char *name,
                                     const imgpu_load_options *opts);
/* The same with the metadata into *meta (the caller frees it), as imgpu_image_load_ex. */
imgpu_image *imgpu_image_load_memory_meta(const void *buf, size_t len, const char *name,
                                          const imgpu_load_options *opts, imgpu_meta **meta);
int imgpu_image_save(const imgpu_image *im, const char *path, const imgpu_save_options *opts);
/* The same, but a PNG is written by png_parallel.c's strip encoder on up to `png_threads`
 * threads (a standard PNG of the same pixels; other formats are unaffected). `imgpu batch`
 * and the single-image commands' results use it; plots and compare's diff images keep stb's
 * writer. */
int imgpu_image_save_threads(const imgpu_image *im, const char *path,
                             const imgpu_save_options *opts, int png_threads);
/* imgpu_image_save_threads, and once the temp file is written whole and synced, just before
 * it is renamed over the target, before_rename(ctx, size, mtime_ns) with the new file's size
 * and modification time (ns since the epoch; rename keeps both). Nonzero from it fails the
 * save (its message recorded by the callback): the temp file is removed, the target left as
 * it was. Not called for a device or FIFO target (written in place, no rename). Batch records
 * each output in OUTDIR's manifest there (src/batch/batch_manifest.h), so no output is ever in place
 * without its record. */
int imgpu_image_save_recorded(const imgpu_image *im, const char *path,
                              const imgpu_save_options *opts, int png_threads,
                              int (*before_rename)(void *ctx, long long size, long long mtime_ns),
                              void *ctx);
/* imgpu_image_save_recorded for a file already encoded elsewhere (nvJPEG's JPEG bitstream):
 * bytes[0..len) in format f are written with the same rules (atomic, no_follow, the record);
 * opts->meta goes in as a save would put it (JPEG: EXIF and XMP APP1, ICC APP2 after a JFIF
 * APP0) unless opts->strip. Only JPEG is taken. */
int imgpu_save_encoded_recorded(const unsigned char *bytes, size_t len, imgpu_format f,
                                const char *path, const imgpu_save_options *opts,
                                int (*before_rename)(void *ctx, long long size, long long mtime_ns),
                                void *ctx);
/* Encode into a malloc'ed buffer (*out, *out_len); the caller frees *out. */
int imgpu_image_encode(const imgpu_image *im, imgpu_format f, const imgpu_save_options *opts,
                       unsigned char **out, size_t *out_len);

/* ---- internal: the interface between the io files and stb_impl.c, not for other callers ----
 * stb_impl.c is the only file that compiles stb; io.c, io_read.c and the codec files
 * (codec.h) do the file handling and the checks stb lacks. Failures return a reason (a static
 * or thread-local string, valid until the next call on this thread) for them to put into
 * their messages; they record no error themselves. */
int imgpu__stb_info(const unsigned char *buf, size_t len, int *w, int *h, int *c, int *is16,
                    const char **why);
/* Decodes with the file's own channel count; every allocation of the decoder is charged to a
 * budget of `budget` bytes. Returns a plain malloc() buffer of w*h*c bytes, or NULL. */
unsigned char *imgpu__stb_decode(const unsigned char *buf, size_t len, size_t budget, int *w,
                                 int *h, int *c, const char **why);
/* The same for a 16-bit PNG: w*h*c native-endian uint16 samples. */
unsigned char *imgpu__stb_decode16(const unsigned char *buf, size_t len, size_t budget, int *w,
                                   int *h, int *c, const char **why);
/* The decode-time limit: io.c arms a deadline of `ms` from now around each load; from then
 * on every decoder allocation is refused, which stops stb at its next allocation.
 * _end disarms it and says whether the deadline passed (1) or not (0). Per thread. */
void imgpu__stb_deadline_begin(uint64_t ms);
int imgpu__stb_deadline_end(void);
/* PNG, BMP or TGA into a malloc() buffer (JPEG is codec_jpeg.c's; quality is unused). Rows
 * are tight (w*c bytes) except for PNG, which honours stride. */
int imgpu__stb_encode(imgpu_format f, const unsigned char *pixels, int w, int h, int c,
                      size_t stride, int quality, int png_level, unsigned char **out,
                      size_t *out_len, const char **why);

#ifdef __cplusplus
}
#endif
#endif

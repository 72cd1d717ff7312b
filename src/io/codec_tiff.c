/* codec_tiff.c — the TIFF entry of the codec table, through libtiff (Debian's 4.5).
 *
 * libtiff only ever sees the bytes in memory (TIFFClientOpenExt over a small reader/writer,
 * never a path, never mmap). Read: 8- and 16-bit gray, gray+alpha, RGB and RGBA, 8-bit
 * palette (expanded to 8-bit RGB, the 16-bit colormap scaled by >> 8 as libtiff's own RGBA
 * reader and PIL do), MinIsWhite (inverted to gray), YCbCr when JPEG-compressed (libjpeg
 * converts to RGB: JPEGCOLORMODE_RGB), strips or tiles, contiguous or separate planes, either
 * byte order, every compression this libtiff has (TIFFIsCODECConfigured). An alpha sample that
 * is unassociated or unspecified is kept as it is; associated (premultiplied) alpha is
 * un-premultiplied on load (c = min(max, round(c * max / a)); c = 0 where a = 0), since the
 * ops and every other format work on straight alpha. Anything else libtiff can read but the
 * ops cannot take (floats, signed or 32-bit integers, 1/2/4-bit samples, CMYK, Lab, more than
 * 4 samples, ...) is refused by the scan with a message that names what was found.
 *
 * Pages are TIFF directories: the scan counts them (meta->pages, `imgpu info`) and loads
 * --page N (0-based). The limits: the scan reports the page's size before anything is
 * decoded (io.c checks --max-pixels); the decode computes what it needs (the image, one strip
 * or tile, the palette expansion) with overflow checks against io.c's budget, caps every
 * single libtiff allocation at that budget (TIFFOpenOptionsSetMaxSingleMemAlloc), and polls
 * imgpu__decode_late() between strips and tiles.
 *
 * libtiff's errors and warnings never reach stderr: each open carries its own handlers
 * (TIFFOpenOptionsSetErrorHandlerExtR / ...WarningHandlerExtR) that keep the first error in
 * the open's own state, so decodes on several batch threads never share one; the global
 * handlers (still called by a few codec paths through TIFFErrorExt with the client handle)
 * are set once to ones that record into that same state, and the plain stderr printers are
 * removed.
 *
 * Write: 8/16-bit gray, gray+alpha, RGB, RGBA (alpha as EXTRASAMPLE_UNASSALPHA), strips of
 * about 1 MiB, --compression (deflate by default; horizontal predictor for LZW, deflate, zstd
 * and LZMA; JPEG and WebP for 8-bit only), into a growing memory buffer. A classic TIFF holds
 * 4 GiB: the output is BigTIFF when the samples alone exceed 2 GiB (only 16-bit images can:
 * imgpu_format_check_size keeps every format's pixel data within 2 GiB at 8 bits).
 * Metadata: the ICC profile (ICCProfile tag), XMP (XMLPacket) and the orientation (1 once
 * load turned the pixels upright) are read and written; EXIF is read (the Exif and GPS IFDs
 * copied into a blob, below) and so travels to PNG/JPEG/WebP outputs, and is written into TIFF
 * outputs as TIFF keeps it: IFD0's photographer tags in the main IFD, real Exif and GPS IFDs
 * through libtiff's custom-directory writer fed tag by tag ("encode: EXIF" below), Software
 * set to imgpu's name.
 */
#include "codec.h"
#include "error.h"
#include "exif.h"

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tiffio.h>

/* ---- libtiff over memory ------------------------------------------------------------------ */

#define TIFF_IO_MAGIC 0x74696f31u

typedef struct tiff_io {
    uint32_t magic;
    const unsigned char *rd;   /* read: the file (NULL when writing) */
    unsigned char *wr;         /* write: the output so far, cap bytes allocated */
    size_t len, cap;
    uint64_t pos;
    char err[200];             /* libtiff's first error on this handle */
    char warn[200];            /* and its last warning (used when a failure has no error) */
    int reading;               /* inside one strip or tile read (read_block) */
    char lost[200];            /* the first warning there that means the pixels are not all
                                * the file's (corrupt_read_warning) */
} tiff_io;

/* A write may not grow the output past this (a hostile seek must not allocate the world). */
#define TIFF_IO_MAX_OUT ((uint64_t)1 << 40)

static tmsize_t io_read(thandle_t h, void *buf, tmsize_t size)
{
    tiff_io *io = h;
    const unsigned char *src = io->rd ? io->rd : io->wr;
    if (size <= 0 || io->pos >= io->len)
        return 0;
    uint64_t left = io->len - io->pos;
    size_t k = (uint64_t)size < left ? (size_t)size : (size_t)left;
    memcpy(buf, src + io->pos, k);
    io->pos += k;
    return (tmsize_t)k;
}

static tmsize_t io_write(thandle_t h, void *buf, tmsize_t size)
{
    tiff_io *io = h;
    if (io->rd || size < 0)
        return -1;
    if (io->pos > TIFF_IO_MAX_OUT || (uint64_t)size > TIFF_IO_MAX_OUT - io->pos)
        return -1;
    const uint64_t end = io->pos + (uint64_t)size;
    if (end > io->cap) {
        uint64_t cap = io->cap ? io->cap : 65536;
        while (cap < end)
            cap *= 2;
        if (cap > SIZE_MAX)
            return -1;
        unsigned char *p = realloc(io->wr, (size_t)cap);
        if (!p)
            return -1;
        io->wr = p;
        io->cap = (size_t)cap;
    }
    if (io->pos > io->len)   /* a seek past the end leaves a gap: zeros, as in a file */
        memset(io->wr + io->len, 0, (size_t)(io->pos - io->len));
    if (size)
        memcpy(io->wr + io->pos, buf, (size_t)size);
    io->pos = end;
    if (end > io->len)
        io->len = (size_t)end;
    return size;
}

static toff_t io_seek(thandle_t h, toff_t off, int whence)
{
    tiff_io *io = h;
    uint64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? io->pos : io->len;
    uint64_t to;
    if (whence == SEEK_SET) {
        to = off;
    } else {
        int64_t d = (int64_t)off;   /* libtiff passes a negative step as its two's complement */
        if ((d < 0 && (uint64_t)-(d + 1) + 1 > base) || (d > 0 && (uint64_t)d > UINT64_MAX - base))
            return (toff_t)-1;
        to = base + (uint64_t)d;
    }
    if (to > TIFF_IO_MAX_OUT)
        return (toff_t)-1;
    io->pos = to;
    return to;
}

static int io_close(thandle_t h) { (void)h; return 0; }
static toff_t io_size(thandle_t h) { return ((tiff_io *)h)->len; }
static int io_map(thandle_t h, void **base, toff_t *size)
{
    (void)h, (void)base, (void)size;
    return 0;   /* no mapping: libtiff copies each strip, and never touches our bytes */
}
static void io_unmap(thandle_t h, void *base, toff_t size) { (void)h, (void)base, (void)size; }

/* Whether a warning libtiff gives while it decodes a strip or tile means that the block it
 * returns is not all the file's pixels. libtiff returns the full block length and only warns
 * when a JPEG strip or tile codes a smaller frame than the TIFF says ("Improper JPEG
 * strip/tile size": the rows and columns it did not code are whatever the buffer held
 * before), when libjpeg padded data that ends early ("Premature end of JPEG file"), and in
 * every other case a codec notices bad data and carries on: so every warning there is corrupt
 * data except these, which leave every pixel decoded from the file (libtiff 4.5's words):
 *  - a last strip whose JPEG frame is taller than the rows left: libtiff decodes the rows
 *    it needs;
 *  - a progressive JPEG strip: legal to decode, only unusual in a TIFF;
 *  - old-style LZW codes: the compatibility decoder takes over;
 *  - an LZW strip without its end code: a strip that is short of rows besides is an error;
 *  - PackBits data running past the strip's end: the rest is dropped.
 * libjpeg's own warnings (module "JPEGLib") all count, even those codec_jpeg.c lets pass
 * (extraneous bytes before a marker): libjpeg reports only the first warning of a frame to
 * libtiff, so a harmless first one would hide a "premature end" after it. */
static int corrupt_read_warning(const char *msg)
{
    static const char *const harmless[] = {
        "JPEG strip size exceeds expected dimensions",
        "encoded with progressive mode",
        "Old-style LZW codes",
        "not terminated with EOI code",
        "bytes to avoid buffer overrun",
    };
    for (size_t i = 0; i < sizeof harmless / sizeof harmless[0]; i++)
        if (strstr(msg, harmless[i]))
            return 0;
    return 1;
}

static void io_record(tiff_io *io, int is_error, const char *fmt, va_list ap)
{
    char *dst = is_error ? io->err : io->warn;
    if (is_error && io->err[0])
        return;   /* the first error names the cause; later ones are its echoes */
    vsnprintf(dst, sizeof io->err, fmt, ap);
    /* many messages start with the handle's name, which is always "TIFF" here */
    if (!strncmp(dst, "TIFF: ", 6))
        memmove(dst, dst + 6, strlen(dst + 6) + 1);
    if (!is_error && io->reading && !io->lost[0] && corrupt_read_warning(dst))
        snprintf(io->lost, sizeof io->lost, "%s", dst);
}

static int on_error(TIFF *t, void *user, const char *module, const char *fmt, va_list ap)
{
    (void)t, (void)module;
    io_record(user, 1, fmt, ap);
    return 1;   /* handled: the global handlers are not called */
}

static int on_warning(TIFF *t, void *user, const char *module, const char *fmt, va_list ap)
{
    (void)t, (void)module;
    io_record(user, 0, fmt, ap);
    return 1;
}

/* The global handlers get the client handle: ours, when it carries the magic. */
static void on_error_global(thandle_t h, const char *module, const char *fmt, va_list ap)
{
    (void)module;
    if (h && ((tiff_io *)h)->magic == TIFF_IO_MAGIC)
        io_record(h, 1, fmt, ap);
}

static void on_warning_global(thandle_t h, const char *module, const char *fmt, va_list ap)
{
    (void)module;
    if (h && ((tiff_io *)h)->magic == TIFF_IO_MAGIC)
        io_record(h, 0, fmt, ap);
}

static pthread_once_t s_handlers_once = PTHREAD_ONCE_INIT;

static void set_global_handlers(void)
{
    TIFFSetErrorHandler(NULL);     /* libtiff's defaults print to stderr */
    TIFFSetWarningHandler(NULL);
    TIFFSetErrorHandlerExt(on_error_global);
    TIFFSetWarningHandlerExt(on_warning_global);
}

/* Opens io (set up by the caller) with mode "r..." or "w...": NULL with io->err set. */
static TIFF *io_open(tiff_io *io, const char *mode, uint64_t max_alloc)
{
    pthread_once(&s_handlers_once, set_global_handlers);
    io->magic = TIFF_IO_MAGIC;
    TIFFOpenOptions *o = TIFFOpenOptionsAlloc();
    if (!o) {
        snprintf(io->err, sizeof io->err, "out of memory");
        return NULL;
    }
    if (max_alloc > (uint64_t)INT64_MAX)
        max_alloc = (uint64_t)INT64_MAX;
    TIFFOpenOptionsSetMaxSingleMemAlloc(o, (tmsize_t)max_alloc);
    TIFFOpenOptionsSetErrorHandlerExtR(o, on_error, io);
    TIFFOpenOptionsSetWarningHandlerExtR(o, on_warning, io);
    TIFF *t = TIFFClientOpenExt("TIFF", mode, io, io_read, io_write, io_seek, io_close, io_size,
                                io_map, io_unmap, o);
    TIFFOpenOptionsFree(o);   /* the handle keeps its own copy of the settings */
    if (!t && !io->err[0])
        snprintf(io->err, sizeof io->err, "%s", io->warn[0] ? io->warn : "not a TIFF file");
    return t;
}

static TIFF *open_read(tiff_io *io, const unsigned char *b, size_t n, uint64_t max_alloc)
{
    memset(io, 0, sizeof *io);
    io->rd = b;
    io->len = n;
    return io_open(io, "rm", max_alloc);
}

/* What libtiff said about a failure, never empty. */
static const char *io_reason(const tiff_io *io, const char *fallback)
{
    return io->err[0] ? io->err : io->warn[0] ? io->warn : fallback;
}

/* ---- what a directory holds ------------------------------------------------------------- */

typedef struct tiff_layout {
    uint32_t w, h;
    uint16_t bps, spp, photometric, planar, compression;
    int tiled;
    int channels;        /* decoded: 1..4 */
    int palette;         /* 8-bit indices expanded to RGB through the colormap */
    int invert;          /* MinIsWhite */
    int premultiplied;   /* the alpha sample is associated */
} tiff_layout;

/* Messages longer than the scan's own buffer: per thread, valid until the next call. */
static _Thread_local char s_msg[256];

static const char *photometric_name(uint16_t p)
{
    switch (p) {
    case PHOTOMETRIC_SEPARATED: return "CMYK (separated)";
    case PHOTOMETRIC_CIELAB: case PHOTOMETRIC_ICCLAB: case PHOTOMETRIC_ITULAB: return "L*a*b*";
    case PHOTOMETRIC_LOGL: case PHOTOMETRIC_LOGLUV: return "SGI LogL/LogLuv";
    case PHOTOMETRIC_MASK: return "transparency-mask";
    case PHOTOMETRIC_CFA: case 34892 /* LinearRaw */: return "raw (CFA)";
    case PHOTOMETRIC_YCBCR: return "YCbCr";
    default: return NULL;
    }
}

/* Fills L from the current directory: NULL, or why the ops cannot take it (s_msg). */
static const char *describe(TIFF *t, tiff_layout *L)
{
    memset(L, 0, sizeof *L);
    uint16_t fmt = SAMPLEFORMAT_UINT;
    if (!TIFFGetField(t, TIFFTAG_IMAGEWIDTH, &L->w) || !TIFFGetField(t, TIFFTAG_IMAGELENGTH, &L->h))
        return "corrupt TIFF header (no image size)";
    TIFFGetFieldDefaulted(t, TIFFTAG_BITSPERSAMPLE, &L->bps);
    TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLESPERPIXEL, &L->spp);
    TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLEFORMAT, &fmt);
    TIFFGetFieldDefaulted(t, TIFFTAG_PLANARCONFIG, &L->planar);
    TIFFGetFieldDefaulted(t, TIFFTAG_COMPRESSION, &L->compression);
    if (!TIFFGetField(t, TIFFTAG_PHOTOMETRIC, &L->photometric))
        L->photometric = L->spp >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;
    L->tiled = TIFFIsTiled(t);

    if (!TIFFIsCODECConfigured(L->compression)) {
        const TIFFCodec *cd = TIFFFindCODEC(L->compression);
        snprintf(s_msg, sizeof s_msg, "TIFF compression %s%s%u%s is not supported",
                 cd ? cd->name : "", cd ? " (" : "", (unsigned)L->compression, cd ? ")" : "");
        return s_msg;
    }
    if (fmt != SAMPLEFORMAT_UINT && fmt != SAMPLEFORMAT_VOID) {
        const char *kind = fmt == SAMPLEFORMAT_IEEEFP ? "float"
                         : fmt == SAMPLEFORMAT_INT ? "signed integer"
                         : fmt == SAMPLEFORMAT_COMPLEXINT || fmt == SAMPLEFORMAT_COMPLEXIEEEFP
                               ? "complex" : "unknown-format";
        snprintf(s_msg, sizeof s_msg, "TIFF with %u-bit %s samples is not supported",
                 (unsigned)L->bps, kind);
        return s_msg;
    }
    int color;
    switch (L->photometric) {
    case PHOTOMETRIC_MINISWHITE:
        L->invert = 1;
        /* fall through */
    case PHOTOMETRIC_MINISBLACK:
        color = 1;
        break;
    case PHOTOMETRIC_RGB:
        color = 3;
        break;
    case PHOTOMETRIC_PALETTE:
        color = 1;
        L->palette = 1;
        break;
    case PHOTOMETRIC_YCBCR:
        if (L->compression != COMPRESSION_JPEG || L->planar != PLANARCONFIG_CONTIG) {
            snprintf(s_msg, sizeof s_msg, "TIFF with YCbCr samples is not supported (only "
                     "JPEG-compressed YCbCr is)");
            return s_msg;
        }
        /* libjpeg turns it into RGB; strip sizes follow (upsampled) */
        if (!TIFFSetField(t, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB))
            return "corrupt TIFF header (JPEG settings)";
        color = 3;
        break;
    default: {
        const char *name = photometric_name(L->photometric);
        if (name)
            snprintf(s_msg, sizeof s_msg, "TIFF with %s samples is not supported", name);
        else
            snprintf(s_msg, sizeof s_msg, "TIFF with photometric interpretation %u is not "
                     "supported", (unsigned)L->photometric);
        return s_msg;
    }
    }
    if (L->palette && L->bps != 8) {
        snprintf(s_msg, sizeof s_msg, "TIFF with %u-bit palette samples is not supported "
                 "(only 8-bit palettes are)", (unsigned)L->bps);
        return s_msg;
    }
    if (L->bps != 8 && L->bps != 16) {
        snprintf(s_msg, sizeof s_msg, "TIFF with %u-bit%s samples is not supported (8 or 16 bits "
                 "are)", (unsigned)L->bps, L->bps == 1 ? " (bilevel)" : "");
        return s_msg;
    }
    if (L->spp > 4) {
        snprintf(s_msg, sizeof s_msg, "TIFF with %u samples per pixel is not supported (at most "
                 "4: gray, gray+alpha, RGB, RGBA)", (unsigned)L->spp);
        return s_msg;
    }
    if (L->spp < color) {
        snprintf(s_msg, sizeof s_msg, "corrupt TIFF header (%u samples per pixel for %s)",
                 (unsigned)L->spp, color == 3 ? "RGB" : "gray");
        return s_msg;
    }
    const int extra = L->spp - color;
    if (extra > 1 || (extra && (L->palette || L->photometric == PHOTOMETRIC_YCBCR))) {
        snprintf(s_msg, sizeof s_msg, "TIFF with %u samples per pixel for %s is not supported",
                 (unsigned)L->spp, L->palette ? "a palette image"
                                  : color == 3 ? "RGB (at most one extra sample, alpha)"
                                               : "gray (at most one extra sample, alpha)");
        return s_msg;
    }
    if (extra) {
        uint16_t n = 0, *types = NULL;
        if (TIFFGetField(t, TIFFTAG_EXTRASAMPLES, &n, &types) && n >= 1 && types &&
            types[0] == EXTRASAMPLE_ASSOCALPHA)
            L->premultiplied = 1;
    }
    L->channels = L->palette ? 3 : L->spp;
    return NULL;
}

/* ---- scan ------------------------------------------------------------------------------- */

/* What libtiff may allocate at once while only the header is known: its strip and tile
 * tables of a file of n bytes (a hostile header claims billions of strips). */
static uint64_t scan_alloc_limit(size_t n) { return 2 * (uint64_t)n + ((uint64_t)64 << 20); }

static const char *tiff_scan(const unsigned char *b, size_t n, imgpu__scan *s)
{
    /* a file cut short usually loses its directory first (writers put it last): say so,
     * rather than libtiff's "cannot read directory count" */
    if (n < 8)
        return "truncated TIFF header";
    if (b[2] == 42 || b[3] == 42) {   /* classic TIFF: the first directory's 32-bit offset */
        const uint32_t ifd = b[0] == 'I' ? imgpu__le32(b + 4) : imgpu__be32(b + 4);
        if (ifd >= 8 && (uint64_t)ifd + 2 > n)
            return "truncated TIFF file (its directory lies past the end of the file)";
        if (ifd >= 8 && (b[0] == 'I' ? imgpu__le16(b + ifd) : imgpu__be16(b + ifd)) == 0)
            return "corrupt TIFF header (the first directory is empty)";
    }
    tiff_io io;
    TIFF *t = open_read(&io, b, n, scan_alloc_limit(n));
    if (!t) {
        snprintf(s_msg, sizeof s_msg, "corrupt TIFF header (%s)", io_reason(&io, "unreadable"));
        return s_msg;
    }
    const char *err = NULL;
    tdir_t pages = TIFFNumberOfDirectories(t);
    if (pages < 1)
        pages = 1;
    s->pages = pages > INT_MAX ? INT_MAX : (int)pages;
    if (s->page < 0 || (uint64_t)s->page >= (uint64_t)pages) {
        snprintf(s_msg, sizeof s_msg, "the TIFF has %d page%s (0..%d); page %d does not exist",
                 s->pages, s->pages == 1 ? "" : "s", s->pages - 1, s->page);
        err = s_msg;
        goto done;
    }
    if (s->page > 0 && !TIFFSetDirectory(t, (tdir_t)s->page)) {
        snprintf(s_msg, sizeof s_msg, "corrupt TIFF data (page %d: %s)", s->page,
                 io_reason(&io, "unreadable directory"));
        err = s_msg;
        goto done;
    }
    tiff_layout L;
    if ((err = describe(t, &L)) != NULL)
        goto done;
    s->w = L.w;
    s->h = L.h;
    s->channels = L.channels;
    s->deep = L.bps == 16;
    /* the decode's memory beyond the image (tiff_decode): one strip or tile, a palette's
     * indices beside the RGB they expand to, and libtiff's own state (the strip tables, a
     * JPEG strip's libjpeg buffers: about one more strip) */
    {
        const uint64_t blk = L.tiled ? TIFFTileSize64(t) : TIFFStripSize64(t);
        const uint64_t strips = TIFFIsTiled(t) ? TIFFNumberOfTiles(t) : TIFFNumberOfStrips(t);
        s->work = blk + (L.palette ? (uint64_t)L.w * L.h : 0) + 16 * strips +
                  (L.compression == COMPRESSION_JPEG ? blk : 0) + ((uint64_t)1 << 20);
    }
    /* every strip or tile must lie in the file: a truncated file is named as such, after the
     * size checks, rather than by libtiff's read error half-way through the decode */
    const uint32_t nst = TIFFIsTiled(t) ? TIFFNumberOfTiles(t) : TIFFNumberOfStrips(t);
    for (uint32_t i = 0; i < nst; i++) {
        int e = 0;
        uint64_t off = TIFFGetStrileOffsetWithErr(t, i, &e);
        uint64_t cnt = e ? 0 : TIFFGetStrileByteCountWithErr(t, i, &e);
        if (!e && (off > n || cnt > n - off)) {
            snprintf(s->buf, sizeof s->buf, "truncated TIFF data (%s %u ends past the end of "
                     "the file)", TIFFIsTiled(t) ? "tile" : "strip", (unsigned)i);
            s->data_error = s->buf;
            break;
        }
    }
done:
    TIFFClose(t);
    return err;
}

/* ---- decode ----------------------------------------------------------------------------- */

enum { DEC_OK, DEC_CORRUPT, DEC_MEMORY, DEC_LATE };

/* Copies a decoded block (a strip, or a tile clipped to the image) into the file-layout
 * image `raw` (w x h pixels of spp samples of ss bytes): rows of `cols` pixels at (x0, y0),
 * the block's rows `src_row` bytes apart; plane < 0: all samples interleaved, else the one
 * sample `plane` of each pixel (separate planes). */
static void put_block(const tiff_layout *L, unsigned char *raw, const unsigned char *src,
                      size_t src_row, uint32_t x0, uint32_t y0, uint32_t cols, uint32_t rows,
                      int plane)
{
    const size_t ss = L->bps / 8, px = ss * L->spp;
    for (uint32_t r = 0; r < rows; r++) {
        unsigned char *d = raw + ((size_t)(y0 + r) * L->w + x0) * px;
        const unsigned char *p = src + (size_t)r * src_row;
        if (plane < 0) {
            memcpy(d, p, (size_t)cols * px);
        } else {
            d += (size_t)plane * ss;
            for (uint32_t x = 0; x < cols; x++, d += px, p += ss)
                memcpy(d, p, ss);
        }
    }
}

/* Decodes strip or tile `index` into blk: its length, or -1 with the reason in why. A block
 * libtiff returns whole but warned about (io_record, corrupt_read_warning) is refused: the
 * warning is the only sign that part of it was never written. */
static tmsize_t read_block(TIFF *t, tiff_io *io, int tiled, uint32_t index, unsigned char *blk,
                           tmsize_t size, char *why, size_t wn)
{
    io->lost[0] = '\0';
    io->reading = 1;
    tmsize_t got = tiled ? TIFFReadEncodedTile(t, index, blk, size)
                         : TIFFReadEncodedStrip(t, index, blk, size);
    io->reading = 0;
    const char *kind = tiled ? "tile" : "strip";
    if (got < 0)
        snprintf(why, wn, "%s", io_reason(io, tiled ? "unreadable tile" : "unreadable strip"));
    else if (io->lost[0])
        snprintf(why, wn, "%s %u: %s", kind, (unsigned)index, io->lost);
    else
        return got;
    return -1;
}

/* 0, or the DEC_ kind with the reason in why. */
static int read_pixels(TIFF *t, tiff_io *io, const tiff_layout *L, unsigned char *raw,
                       unsigned char *blk, uint64_t blk_size, char *why, size_t wn)
{
    const size_t ss = L->bps / 8;
    const int planes = L->planar == PLANARCONFIG_SEPARATE ? L->spp : 1;
    const size_t ps = L->planar == PLANARCONFIG_SEPARATE ? 1 : L->spp;  /* samples per block pixel */
    if (L->tiled) {
        uint32_t tw = 0, th = 0;
        TIFFGetField(t, TIFFTAG_TILEWIDTH, &tw);
        TIFFGetField(t, TIFFTAG_TILELENGTH, &th);
        if (!tw || !th || (uint64_t)tw * th * ps * ss > blk_size) {
            snprintf(why, wn, "bad tile size %ux%u", (unsigned)tw, (unsigned)th);
            return DEC_CORRUPT;
        }
        for (int p = 0; p < planes; p++)
            for (uint32_t y = 0; y < L->h; y += th)
                for (uint32_t x = 0; x < L->w; x += tw) {
                    if (imgpu__decode_late()) {
                        snprintf(why, wn, "decoding took longer than the time limit");
                        return DEC_LATE;
                    }
                    uint32_t tile = TIFFComputeTile(t, x, y, 0, (uint16_t)p);
                    tmsize_t got = read_block(t, io, 1, tile, blk, (tmsize_t)blk_size, why, wn);
                    if (got < 0)
                        return DEC_CORRUPT;
                    const uint32_t cols = L->w - x < tw ? L->w - x : tw;
                    const uint32_t rows = L->h - y < th ? L->h - y : th;
                    if ((uint64_t)got < ((uint64_t)(rows - 1) * tw + cols) * ps * ss) {
                        snprintf(why, wn, "tile %u is short", (unsigned)tile);
                        return DEC_CORRUPT;
                    }
                    put_block(L, raw, blk, (size_t)tw * ps * ss, x, y, cols, rows,
                              planes > 1 ? p : -1);
                }
        return DEC_OK;
    }
    uint32_t rps = 0;
    TIFFGetFieldDefaulted(t, TIFFTAG_ROWSPERSTRIP, &rps);
    if (rps == 0 || rps > L->h)
        rps = L->h;
    const uint64_t row = (uint64_t)L->w * ps * ss;
    for (int p = 0; p < planes; p++)
        for (uint32_t y = 0; y < L->h; y += rps) {
            if (imgpu__decode_late()) {
                snprintf(why, wn, "decoding took longer than the time limit");
                return DEC_LATE;
            }
            const uint32_t rows = L->h - y < rps ? L->h - y : rps;
            const uint32_t strip = TIFFComputeStrip(t, y, (uint16_t)p);
            if (strip >= TIFFNumberOfStrips(t) || rows * row > blk_size) {
                snprintf(why, wn, "bad strip layout");
                return DEC_CORRUPT;
            }
            tmsize_t got = read_block(t, io, 0, strip, blk, (tmsize_t)(rows * row), why, wn);
            if (got < 0)
                return DEC_CORRUPT;
            if ((uint64_t)got < rows * row) {
                snprintf(why, wn, "strip %u is short", (unsigned)strip);
                return DEC_CORRUPT;
            }
            put_block(L, raw, blk, (size_t)row, 0, y, L->w, rows, planes > 1 ? p : -1);
        }
    return DEC_OK;
}

/* Straight alpha from associated (premultiplied) alpha, rounded; the last sample is alpha. */
static void unpremultiply(const tiff_layout *L, unsigned char *raw)
{
    const size_t npx = (size_t)L->w * L->h, c = L->spp;
    if (L->bps == 8) {
        for (size_t i = 0; i < npx; i++) {
            unsigned char *p = raw + i * c;
            const unsigned a = p[c - 1];
            for (size_t k = 0; k + 1 < c; k++) {
                unsigned v = a ? (p[k] * 255u + a / 2) / a : 0;
                p[k] = (unsigned char)(v > 255 ? 255 : v);
            }
        }
    } else {
        uint16_t *q = (uint16_t *)(void *)raw;
        for (size_t i = 0; i < npx; i++) {
            uint16_t *p = q + i * c;
            const uint64_t a = p[c - 1];
            for (size_t k = 0; k + 1 < c; k++) {
                uint64_t v = a ? (p[k] * (uint64_t)65535 + a / 2) / a : 0;
                p[k] = (uint16_t)(v > 65535 ? 65535 : v);
            }
        }
    }
}

/* Decodes page `page` of b[0..n) under `budget`: the pixels (malloc()'ed, tight, w*h*c
 * samples of 8 or 16 bits, native order) and the layout, or NULL with the DEC_ kind. */
static void *tiff_decode(const unsigned char *b, size_t n, int page, size_t budget,
                         tiff_layout *L, int *kind, char *why, size_t wn)
{
    tiff_io io;
    unsigned char *raw = NULL, *blk = NULL, *out = NULL;
    *kind = DEC_CORRUPT;
    TIFF *t = open_read(&io, b, n, budget);
    if (!t) {
        snprintf(why, wn, "%s", io_reason(&io, "unreadable header"));
        return NULL;
    }
    if (page > 0 && !TIFFSetDirectory(t, (tdir_t)page)) {
        snprintf(why, wn, "%s", io_reason(&io, "unreadable directory"));
        goto fail;
    }
    const char *bad = describe(t, L);
    if (bad) {
        if (bad != why)   /* describe's message may already be in why (decode8's s_msg) */
            snprintf(why, wn, "%s", bad);
        goto fail;
    }
    const uint64_t ss = L->bps / 8, npx = (uint64_t)L->w * L->h;
    uint64_t blk_size = L->tiled ? TIFFTileSize64(t) : TIFFStripSize64(t);
    if (blk_size == 0) {
        snprintf(why, wn, "%s", io_reason(&io, "bad strip or tile size"));
        goto fail;
    }
    /* w, h < 2^32 and w * h within --max-pixels (io.c), so none of these can wrap */
    const uint64_t raw_size = npx * L->spp * ss;
    const uint64_t out_size = L->palette ? npx * 3 : 0;
    const uint64_t need = raw_size + out_size + blk_size;
    if (npx > (UINT64_MAX >> 4) || blk_size > UINT64_MAX / 2 || need > budget ||
        need > SIZE_MAX) {
        snprintf(why, wn, "out of memory (the image needs %llu MiB to decode, more than the "
                 "decoder's budget of %llu MiB)", (unsigned long long)(need >> 20),
                 (unsigned long long)(budget >> 20));
        *kind = DEC_MEMORY;
        goto fail;
    }
    raw = malloc((size_t)raw_size);
    /* zeroed: should a codec ever return a block short without a warning, the rest of the
     * first block is zeros and of later ones the previous block's pixels, never what the
     * heap held before (read_block refuses every short block that libtiff warns about) */
    blk = calloc(1, (size_t)blk_size);
    if (!raw || !blk) {
        snprintf(why, wn, "out of memory");
        *kind = DEC_MEMORY;
        goto fail;
    }
    int k = read_pixels(t, &io, L, raw, blk, blk_size, why, wn);
    if (k != DEC_OK) {
        *kind = k;
        goto fail;
    }
    free(blk);
    blk = NULL;
    if (L->invert) {   /* MinIsWhite: the gray sample only, never alpha */
        for (uint64_t i = 0; i < npx; i++) {
            if (ss == 1)
                raw[i * L->spp] = (unsigned char)(255 - raw[i * L->spp]);
            else {
                uint16_t *q = (uint16_t *)(void *)raw;
                q[i * L->spp] = (uint16_t)(65535 - q[i * L->spp]);
            }
        }
    }
    if (L->premultiplied)
        unpremultiply(L, raw);
    if (L->palette) {
        uint16_t *cr = NULL, *cg = NULL, *cb = NULL;
        if (!TIFFGetField(t, TIFFTAG_COLORMAP, &cr, &cg, &cb) || !cr || !cg || !cb) {
            snprintf(why, wn, "palette image without a colormap");
            goto fail;
        }
        out = malloc((size_t)out_size);
        if (!out) {
            snprintf(why, wn, "out of memory");
            *kind = DEC_MEMORY;
            goto fail;
        }
        for (uint64_t i = 0; i < npx; i++) {   /* 8-bit indices: the map has 256 entries */
            const unsigned v = raw[i];
            out[3 * i] = (unsigned char)(cr[v] >> 8);
            out[3 * i + 1] = (unsigned char)(cg[v] >> 8);
            out[3 * i + 2] = (unsigned char)(cb[v] >> 8);
        }
        free(raw);
        raw = out;
    }
    TIFFClose(t);
    *kind = DEC_OK;
    return raw;
fail:
    free(raw);
    free(blk);
    TIFFClose(t);
    return NULL;
}

static unsigned char *tiff_decode8(const unsigned char *b, size_t n, const imgpu__scan *s,
                                   size_t budget, int *w, int *h, int *c, const char **why)
{
    tiff_layout L;
    int kind;
    unsigned char *px = tiff_decode(b, n, s->page, budget, &L, &kind, s_msg, sizeof s_msg);
    *why = s_msg;
    if (!px)   /* DEC_MEMORY's reasons begin "out of memory" (codec.h); DEC_LATE is io.c's */
        return NULL;
    (void)kind;
    if (L.bps != 8) {   /* the scan said 8 bits; a file that changed its mind is corrupt */
        free(px);
        snprintf(s_msg, sizeof s_msg, "sample depth changed");
        return NULL;
    }
    *w = (int)L.w;
    *h = (int)L.h;
    *c = L.channels;
    return px;
}

static imgpu_image *tiff_load16(const unsigned char *b, size_t n, const char *name,
                                const imgpu__scan *s, size_t budget)
{
    tiff_layout L;
    int kind;
    char why[256];
    void *px = tiff_decode(b, n, s->page, budget, &L, &kind, why, sizeof why);
    if (!px) {
        if (kind == DEC_CORRUPT)
            imgpu_error("cannot read '%s': corrupt TIFF data (%s)", name, why);
        else
            imgpu_error("cannot read '%s': %s", name, why);
        return NULL;
    }
    if (L.bps != 16 || (uint64_t)L.w != s->w || (uint64_t)L.h != s->h) {
        free(px);
        imgpu_error("cannot read '%s': corrupt TIFF data", name);
        return NULL;
    }
    return imgpu__adopt_pixels(name, px, (int)L.w, (int)L.h, L.channels, 16);
}

/* ---- metadata --------------------------------------------------------------------------- */

/* EXIF: TIFF keeps it in sub-IFDs of the file (ExifIFD, GPSIFD) whose values may lie anywhere
 * in the file, while meta->exif is a self-contained TIFF-structured blob. The page's directory
 * plays IFD0 for imgpu_exif_rebuild (exif.h), which copies its photographer's tags
 * (ImageDescription, Make, Model, Orientation, DateTime, Artist, Copyright) and the Exif and
 * GPS IFDs it points to into a fresh blob in the file's byte order, every offset in it computed
 * anew: the file's pointers (a nested Exif pointer, Interoperability, strips) are dropped, not
 * copied with offsets that mean nothing in the blob. Only for a page whose Exif or GPS IFD has
 * an entry to carry (else IFD0's tags alone are the TIFF's own, read as such). Classic TIFF
 * only (a BigTIFF's EXIF is not read). */
static int tiff_read_exif(TIFF *t, const unsigned char *b, size_t n, imgpu_meta *m)
{
    static const unsigned s_keep[7] = { TIFFTAG_IMAGEDESCRIPTION, TIFFTAG_MAKE, TIFFTAG_MODEL,
                                        TIFFTAG_ORIENTATION, TIFFTAG_DATETIME, TIFFTAG_ARTIST,
                                        TIFFTAG_COPYRIGHT };
    uint64_t off = 0;
    const uint64_t dir = TIFFCurrentDirOffset(t);
    if (n < 8 || !(b[0] == 'I' ? b[2] == 42 && b[3] == 0 : b[2] == 0 && b[3] == 42) ||
        dir < 8 || dir > n - 2 ||
        (!TIFFGetField(t, TIFFTAG_EXIFIFD, &off) && !TIFFGetField(t, TIFFTAG_GPSIFD, &off)))
        return 0;
    unsigned char *x = NULL;
    size_t xn = 0;
    /* the header and the directory are checked above: a failure is memory */
    const int subs = imgpu_exif_rebuild(b, n, (uint32_t)dir, s_keep, 7, &x, &xn);
    if (subs < 0)
        return -1;
    if (subs == 0) {   /* nothing of the Exif or GPS IFD to carry: the page's own tags only */
        free(x);
        return 0;
    }
    m->exif = x;
    m->exif_len = xn;
    return 0;
}

static int tiff_read_meta(const unsigned char *b, size_t n, imgpu_meta *m)
{
    tiff_io io;
    TIFF *t = open_read(&io, b, n, scan_alloc_limit(n));
    if (!t)
        return 0;   /* damaged metadata is skipped, never an error */
    int rc = 0;
    if (m->page > 0 && !TIFFSetDirectory(t, (tdir_t)m->page))
        goto done;
    uint32_t len = 0;
    void *data = NULL;
    if (TIFFGetField(t, TIFFTAG_ICCPROFILE, &len, &data) && data && len >= 128 &&
        imgpu_meta_set(&m->icc, &m->icc_len, data, len) < 0)
        rc = -1;
    len = 0;
    data = NULL;
    if (!rc && TIFFGetField(t, TIFFTAG_XMLPACKET, &len, &data) && data && len &&
        imgpu_meta_set(&m->xmp, &m->xmp_len, data, len) < 0)
        rc = -1;
    uint16_t o = 0;
    if (TIFFGetField(t, TIFFTAG_ORIENTATION, &o) && o >= 1 && o <= 8)
        m->orientation = o;
    if (!rc && !m->exif)
        rc = tiff_read_exif(t, b, n, m);
done:
    TIFFClose(t);
    return rc;
}

/* ---- encode: EXIF ----------------------------------------------------------------------- */

/* meta->exif goes into the output as TIFF keeps EXIF: the photographer's IFD0 tags in the main
 * IFD, the Exif and GPS IFDs as libtiff custom directories (TIFFCreateEXIFDirectory /
 * TIFFCreateGPSDirectory, TIFFSetField per tag, TIFFWriteCustomDirectory) pointed at by
 * ExifIFD / GPSIFD. The custom directories are written first, before the main IFD exists
 * (each TIFFCreate...Directory drops the current directory): then the main IFD is created
 * afresh with their offsets, and nothing has to be read back and rewritten.
 *
 * Each entry goes through libtiff's own field table for its directory: a tag libtiff does not
 * know, a type or count other than the table's (a SHORT for a LONG field is widened, as EXIF
 * allows), a zero denominator, or a value libtiff refuses is skipped, that entry alone, and
 * libtiff's error for it forgotten: damaged metadata never fails a save. Not written: IFD1
 * (imgpu_exif_each never visits it), Orientation (the main IFD's own tag says how the written
 * pixels stand), the Interoperability IFD. PixelXDimension / PixelYDimension, where the input
 * has them, say the output's size. Of two entries with one tag the first counts. */

typedef struct exif_put {
    TIFF *t;
    tiff_io *io;
    int ifd;                          /* the blob's IFD being written (IMGPU_EXIF_IFD_*) */
    uint32_t w, h;                    /* the output's size */
    int set;                          /* fields set on the current directory */
    unsigned char seen[65536 / 8];    /* tags already handed over in this IFD */
} exif_put;

/* TIFFSetField's result for a metadata field: a refusal (its error recorded through the
 * handlers) is forgotten, the save goes on without the field. */
static int meta_set_ok(tiff_io *io, int had_error, int ok)
{
    if (!ok && !had_error)
        io->err[0] = '\0';
    return ok;
}

/* IFD0 tags that travel into the main IFD: ASCII, describing the photo (not the file). */
static int ifd0_tag_kept(unsigned tag)
{
    return tag == TIFFTAG_IMAGEDESCRIPTION || tag == TIFFTAG_MAKE || tag == TIFFTAG_MODEL ||
           tag == TIFFTAG_DATETIME || tag == TIFFTAG_ARTIST || tag == TIFFTAG_COPYRIGHT;
}

/* An ASCII entry as a C string (up to its first NUL) into a malloc()'ed buffer: NULL when it
 * is empty or memory is short. */
static char *entry_string(const imgpu_exif_entry *e)
{
    const unsigned char *nul = memchr(e->value, 0, e->count);
    const size_t len = nul ? (size_t)(nul - e->value) : e->count;
    char *s = len ? malloc(len + 1) : NULL;
    if (s) {
        memcpy(s, e->value, len);
        s[len] = '\0';
    }
    return s;
}

/* Sets entry e on the current directory as libtiff's field for its tag takes it: 1 when set. */
static int exif_set(exif_put *p, const imgpu_exif_entry *e)
{
    TIFF *t = p->t;
    const TIFFField *f = TIFFFindField(t, e->tag, TIFF_ANY);
    if (!f || TIFFFieldIsAnonymous(f))
        return 0;
    const TIFFDataType ft = TIFFFieldDataType(f);
    const int had = p->io->err[0] != '\0';
    if (ft == TIFF_ASCII) {
        if (e->type != TIFF_ASCII || TIFFFieldPassCount(f))
            return 0;
        char *str = entry_string(e);
        int ok = str && meta_set_ok(p->io, had, TIFFSetField(t, e->tag, str));
        free(str);
        return ok;
    }
    if ((unsigned)ft != e->type && !(ft == TIFF_LONG && e->type == TIFF_SHORT))
        return 0;
    /* the count the table wants: passed with the values, exactly 1, or exactly N */
    const int pass = TIFFFieldPassCount(f), wc = TIFFFieldWriteCount(f);
    const int csize = pass ? TIFFFieldSetGetCountSize(f) : 0;
    const uint32_t n = e->count;
    if (pass ? (csize != 2 && csize != 4) || (csize == 2 && n > 0xFFFF)
             : wc < 1 || (uint32_t)wc != n)
        return 0;
    /* the values in libtiff's storage type for the field (TIFFFieldSetGetSize bytes each) */
    const int ss = TIFFFieldSetGetSize(f);
    const int want = ft == TIFF_BYTE || ft == TIFF_SBYTE || ft == TIFF_UNDEFINED ? 1
                   : ft == TIFF_SHORT || ft == TIFF_SSHORT ? 2
                   : ft == TIFF_LONG || ft == TIFF_SLONG ? 4
                   : ft == TIFF_RATIONAL || ft == TIFF_SRATIONAL ? (ss == 8 ? 8 : 4) : 0;
    if (!want || ss != want)
        return 0;
    unsigned char *v = malloc((size_t)n * (size_t)ss);
    if (!v)
        return 0;
    int ok = 1;
    for (uint32_t i = 0; ok && i < n; i++) {
        unsigned char *d = v + (size_t)i * (size_t)ss;
        if (ft == TIFF_RATIONAL || ft == TIFF_SRATIONAL) {
            uint32_t num, den;
            imgpu_exif_entry_rational(e, i, &num, &den);
            const double x = ft == TIFF_SRATIONAL ? (double)(int32_t)num / (int32_t)den
                                                  : (double)num / den;
            ok = den != 0;
            if (ss == 8)
                memcpy(d, &x, 8);
            else {
                const float fx = (float)x;
                memcpy(d, &fx, 4);
            }
            continue;
        }
        uint32_t u = imgpu_exif_entry_uint(e, i);
        if (e->tag == EXIFTAG_PIXELXDIMENSION && p->ifd == IMGPU_EXIF_IFD_EXIF)
            u = p->w;
        else if (e->tag == EXIFTAG_PIXELYDIMENSION && p->ifd == IMGPU_EXIF_IFD_EXIF)
            u = p->h;
        if (ss == 1) {
            d[0] = (unsigned char)u;
        } else if (ss == 2) {
            const uint16_t u16 = (uint16_t)u;
            memcpy(d, &u16, 2);
        } else {
            memcpy(d, &u, 4);
        }
    }
    if (ok) {
        if (pass && csize == 4)
            ok = TIFFSetField(t, e->tag, n, v);
        else if (pass)
            ok = TIFFSetField(t, e->tag, (int)n, v);
        else if (n > 1)
            ok = TIFFSetField(t, e->tag, v);
        else if (ss == 8)   /* one value: passed by value, as its promoted type */
            ok = TIFFSetField(t, e->tag, *(const double *)(const void *)v);
        else if (ft == TIFF_RATIONAL || ft == TIFF_SRATIONAL)
            ok = TIFFSetField(t, e->tag, (double)*(const float *)(const void *)v);
        else if (ss == 4)
            ok = TIFFSetField(t, e->tag, *(const uint32_t *)(const void *)v);
        else if (ss == 2)
            ok = TIFFSetField(t, e->tag, (int)*(const uint16_t *)(const void *)v);
        else
            ok = TIFFSetField(t, e->tag, (int)v[0]);
        ok = meta_set_ok(p->io, had, ok);
    }
    free(v);
    return ok;
}

static void exif_put_entry(const imgpu_exif_entry *e, void *ctx)
{
    exif_put *p = ctx;
    if (e->ifd != p->ifd || p->seen[e->tag / 8] & 1u << e->tag % 8)
        return;
    p->seen[e->tag / 8] |= (unsigned char)(1u << e->tag % 8);
    if (p->ifd == IMGPU_EXIF_IFD0 && !ifd0_tag_kept(e->tag))
        return;
    p->set += exif_set(p, e);
}

/* The blob's IFD `ifd` (Exif or GPS) as a custom directory: its offset, or 0 when it has
 * nothing libtiff takes (or could not be written). Leaves no current image directory: the
 * caller creates the main one afterwards. */
static uint64_t exif_write_dir(exif_put *p, const imgpu_meta *m, int ifd)
{
    const int had = p->io->err[0] != '\0';
    /* libtiff 4.5's TIFFCreate...Directory drops the previous custom directory's values
     * without freeing them (valgrind): free them first */
    TIFFFreeDirectory(p->t);
    const int ok = ifd == IMGPU_EXIF_IFD_EXIF ? TIFFCreateEXIFDirectory(p->t) == 0
                                              : TIFFCreateGPSDirectory(p->t) == 0;
    uint64_t off = 0;
    p->ifd = ifd;
    p->set = 0;
    memset(p->seen, 0, sizeof p->seen);
    if (ok)
        imgpu_exif_each(m->exif, m->exif_len, exif_put_entry, p);
    if (!ok || !p->set || !meta_set_ok(p->io, had, TIFFWriteCustomDirectory(p->t, &off)))
        off = 0;
    return off;
}

/* Writes the Exif and GPS IFDs of m->exif, then makes a fresh main directory current (as the
 * open left it): 0, or -1 when libtiff cannot create that directory (out of memory). */
static int exif_write_dirs(TIFF *t, tiff_io *io, const imgpu_meta *m, uint32_t w, uint32_t h,
                           uint64_t *exif_off, uint64_t *gps_off)
{
    *exif_off = *gps_off = 0;
    imgpu_exif_info info;
    if (!m || !m->exif || imgpu_exif_parse(m->exif, m->exif_len, &info) < 0)
        return 0;   /* (the parse's message is for nobody: the save goes on) */
    exif_put *p = calloc(1, sizeof *p);
    if (!p)
        return 0;
    p->t = t;
    p->io = io;
    p->w = w;
    p->h = h;
    *exif_off = exif_write_dir(p, m, IMGPU_EXIF_IFD_EXIF);
    if (info.has_gps)
        *gps_off = exif_write_dir(p, m, IMGPU_EXIF_IFD_GPS);
    free(p);
    TIFFFreeDirectory(t);
    return TIFFCreateDirectory(t) == 0 ? 0 : -1;
}

/* libtiff keeps most EXIF rationals as float and writes back its own approximation
 * (ExposureTime 1/125 comes out as 8589935/1073741824). Once the file is complete, the
 * rationals of the written Exif / GPS IFD at `off` get the input's exact numerator and
 * denominator again: same tag, type and count, so the same 8 bytes per value. Classic TIFF
 * only (a BigTIFF output keeps libtiff's values). */
typedef struct rational_fix {
    unsigned char *b;
    size_t n;
    int le;
    uint64_t off;
    int ifd;
    unsigned char seen[65536 / 8];
} rational_fix;

static void rational_fix_entry(const imgpu_exif_entry *e, void *ctx)
{
    rational_fix *r = ctx;
    if (e->ifd != r->ifd || r->seen[e->tag / 8] & 1u << e->tag % 8)
        return;
    r->seen[e->tag / 8] |= (unsigned char)(1u << e->tag % 8);   /* the first one was written */
    if (e->type != TIFF_RATIONAL && e->type != TIFF_SRATIONAL)
        return;
    uint32_t (*r16)(const unsigned char *) = r->le ? imgpu__le16 : imgpu__be16;
    uint32_t (*r32)(const unsigned char *) = r->le ? imgpu__le32 : imgpu__be32;
    const uint32_t count = r16(r->b + r->off);
    for (uint32_t i = 0; i < count; i++) {
        const unsigned char *o = r->b + r->off + 2 + 12 * (size_t)i;
        const uint32_t vo = r32(o + 8);
        if (r16(o) != e->tag || r16(o + 2) != e->type || r32(o + 4) != e->count ||
            vo > r->n || (uint64_t)e->count * 8 > r->n - vo)
            continue;
        for (uint32_t k = 0; k < e->count; k++) {
            uint32_t num, den;
            imgpu_exif_entry_rational(e, k, &num, &den);
            unsigned char *d = r->b + vo + 8 * (size_t)k;
            for (int j = 0; j < 4; j++) {
                d[r->le ? j : 3 - j] = (unsigned char)(num >> 8 * j);
                d[4 + (r->le ? j : 3 - j)] = (unsigned char)(den >> 8 * j);
            }
        }
        return;
    }
}

static void exif_fix_rationals(unsigned char *b, size_t n, uint64_t off, int ifd,
                               const imgpu_meta *m)
{
    if (!off || n < 8 || (b[2] != 42 && b[3] != 42) || off > n - 2)
        return;
    rational_fix *r = calloc(1, sizeof *r);
    if (!r)
        return;
    r->b = b, r->n = n, r->le = b[0] == 'I', r->off = off, r->ifd = ifd;
    if ((uint64_t)(r->le ? imgpu__le16(b + off) : imgpu__be16(b + off)) * 12 <= n - off - 2)
        imgpu_exif_each(m->exif, m->exif_len, rational_fix_entry, r);
    free(r);
}

/* The photographer's IFD0 tags of m->exif into the main IFD. */
static void exif_write_ifd0(TIFF *t, tiff_io *io, const imgpu_meta *m)
{
    exif_put *p = m && m->exif ? calloc(1, sizeof *p) : NULL;
    if (!p)
        return;
    p->t = t;
    p->io = io;
    p->ifd = IMGPU_EXIF_IFD0;
    imgpu_exif_each(m->exif, m->exif_len, exif_put_entry, p);
    free(p);
}

/* ---- encode ----------------------------------------------------------------------------- */

static int compression_tag(imgpu_compression c, uint16_t *tag, const char **name)
{
    switch (c) {
    case IMGPU_COMPRESSION_NONE: *tag = COMPRESSION_NONE, *name = "none"; return 0;
    case IMGPU_COMPRESSION_DEFAULT:
    case IMGPU_COMPRESSION_DEFLATE: *tag = COMPRESSION_ADOBE_DEFLATE, *name = "deflate"; return 0;
    case IMGPU_COMPRESSION_LZW: *tag = COMPRESSION_LZW, *name = "lzw"; return 0;
    case IMGPU_COMPRESSION_PACKBITS: *tag = COMPRESSION_PACKBITS, *name = "packbits"; return 0;
    case IMGPU_COMPRESSION_ZSTD: *tag = COMPRESSION_ZSTD, *name = "zstd"; return 0;
    case IMGPU_COMPRESSION_LZMA: *tag = COMPRESSION_LZMA, *name = "lzma"; return 0;
    case IMGPU_COMPRESSION_JPEG: *tag = COMPRESSION_JPEG, *name = "jpeg"; return 0;
    case IMGPU_COMPRESSION_WEBP: *tag = COMPRESSION_WEBP, *name = "webp"; return 0;
    }
    return -1;
}

/* A TIFF being written page by page (one page: a plain encode): the handle over the growing
 * memory buffer, how many pages it will hold and how many it has. */
typedef struct tiff_pages {
    tiff_io io;
    TIFF *t;
    int pages, done;
} tiff_pages;

/* A new output for `pages` pages whose samples add up to about raw_bytes (a classic TIFF holds
 * 4 GiB: BigTIFF past 2 GiB of samples). NULL with why. */
static void *tiff_pages_begin(int pages, uint64_t raw_bytes, char *why, size_t wn)
{
    tiff_pages *tp = calloc(1, sizeof *tp);
    if (!tp) {
        snprintf(why, wn, "out of memory");
        return NULL;
    }
    tp->pages = pages;
    tp->t = io_open(&tp->io, raw_bytes > ((uint64_t)1 << 31) ? "w8" : "w", (uint64_t)1 << 40);
    if (!tp->t) {
        snprintf(why, wn, "TIFF encoding failed (%s)", io_reason(&tp->io, "cannot open"));
        free(tp->io.wr);
        free(tp);
        return NULL;
    }
    return tp;
}

/* One page, its directory written: 0, or -1 with why (the output is then only fit for
 * tiff_pages_end's abandon). A file of several pages marks each one a page
 * (NewSubfileType 2, PageNumber N of M), as ImageMagick and tiffcp do. */
static int tiff_pages_add(void *ctx, const imgpu_image *im, const imgpu__encode_args *a,
                          char *why, size_t wn)
{
    tiff_pages *tp = ctx;
    TIFF *t = tp->t;
    tiff_io *io = &tp->io;
    const int w = im->width, h = im->height, c = im->channels, ss = im->depth / 8;
    uint16_t comp;
    const char *cname;
    unsigned char *strip = NULL;
    if (compression_tag(a->compression, &comp, &cname) < 0) {
        snprintf(why, wn, "unknown TIFF compression");
        return -1;
    }
    if (!TIFFIsCODECConfigured(comp)) {
        snprintf(why, wn, "this libtiff cannot write %s compression", cname);
        return -1;
    }
    if ((comp == COMPRESSION_JPEG || comp == COMPRESSION_WEBP) && im->depth != 8) {
        snprintf(why, wn, "TIFF %s compression takes 8-bit images only (this one is 16-bit: "
                 "use --depth 8 or another --compression)", cname);
        return -1;
    }
    if (comp == COMPRESSION_WEBP && c < 3) {
        snprintf(why, wn, "TIFF webp compression takes RGB or RGBA images only (this one has "
                 "%d channel%s)", c, c == 1 ? "" : "s");
        return -1;
    }
    if (tp->done >= tp->pages) {
        snprintf(why, wn, "internal error: more TIFF pages than announced");
        return -1;
    }
    const size_t row = (size_t)w * (size_t)c * (size_t)ss;
    /* strips of about 1 MiB; JPEG wants whole 16-row MCU bands */
    uint64_t rps = ((uint64_t)1 << 20) / row;
    if (rps < 1)
        rps = 1;
    if (comp == COMPRESSION_JPEG)
        rps = (rps + 15) / 16 * 16;
    if (rps > (uint64_t)h)
        rps = (uint64_t)h;

    const imgpu_meta *m = a->meta;
    uint64_t exif_off = 0, gps_off = 0;
    if (exif_write_dirs(t, io, m, (uint32_t)w, (uint32_t)h, &exif_off, &gps_off) < 0)
        goto fail;
    const uint16_t photometric = c >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;
    int ok = TIFFSetField(t, TIFFTAG_IMAGEWIDTH, (uint32_t)w) &&
             TIFFSetField(t, TIFFTAG_IMAGELENGTH, (uint32_t)h) &&
             TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, (uint16_t)im->depth) &&
             TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, (uint16_t)c) &&
             TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_UINT) &&
             TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG) &&
             TIFFSetField(t, TIFFTAG_COMPRESSION, comp) &&
             TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, (uint32_t)rps);
    if (ok && tp->pages > 1)
        ok = TIFFSetField(t, TIFFTAG_SUBFILETYPE, (uint32_t)FILETYPE_PAGE) &&
             TIFFSetField(t, TIFFTAG_PAGENUMBER, (uint16_t)tp->done, (uint16_t)tp->pages);
    if (ok && comp == COMPRESSION_JPEG && c == 3) {
        /* YCbCr, subsampled as --subsampling says (default 4:2:0), libjpeg converting */
        uint16_t hs = a->subsampling == IMGPU_SUBSAMPLING_444 ? 1 : 2;
        uint16_t vs = a->subsampling == IMGPU_SUBSAMPLING_420 ||
                      a->subsampling == IMGPU_SUBSAMPLING_DEFAULT ? 2 : 1;
        ok = TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_YCBCR) &&
             TIFFSetField(t, TIFFTAG_YCBCRSUBSAMPLING, hs, vs) &&
             TIFFSetField(t, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
    } else if (ok) {
        ok = TIFFSetField(t, TIFFTAG_PHOTOMETRIC, photometric);
    }
    if (ok && comp == COMPRESSION_JPEG)
        ok = TIFFSetField(t, TIFFTAG_JPEGQUALITY, a->quality);
    if (ok && comp == COMPRESSION_WEBP)
        ok = TIFFSetField(t, TIFFTAG_WEBP_LEVEL, a->quality) &&
             TIFFSetField(t, TIFFTAG_WEBP_LOSSLESS, a->lossless ? 1 : 0);
    if (ok && (comp == COMPRESSION_LZW || comp == COMPRESSION_ADOBE_DEFLATE ||
               comp == COMPRESSION_ZSTD || comp == COMPRESSION_LZMA))
        ok = TIFFSetField(t, TIFFTAG_PREDICTOR, PREDICTOR_HORIZONTAL);
    if (ok && (c == 2 || c == 4)) {
        uint16_t extra = EXTRASAMPLE_UNASSALPHA;
        ok = TIFFSetField(t, TIFFTAG_EXTRASAMPLES, (uint16_t)1, &extra);
    }
    if (ok && m) {
        if (m->icc && m->icc_len && m->icc_len <= UINT32_MAX)
            ok = TIFFSetField(t, TIFFTAG_ICCPROFILE, (uint32_t)m->icc_len, m->icc);
        else if (m->icc && m->icc_len)   /* (an input holds less: it is read whole) */
            imgpu_notice("'%s': the ICC profile (%zu bytes) does not fit a TIFF tag (4 GiB at "
                         "most): left out", a->path ? a->path : "(memory)", m->icc_len);
        if (ok && m->xmp && m->xmp_len && m->xmp_len <= UINT32_MAX)
            ok = TIFFSetField(t, TIFFTAG_XMLPACKET, (uint32_t)m->xmp_len, m->xmp);
        /* turned upright on load: the stored tag now says so */
        const int o = m->oriented ? 1 : m->orientation;
        if (ok && o >= 1 && o <= 8)
            ok = TIFFSetField(t, TIFFTAG_ORIENTATION, (uint16_t)o);
        if (ok)
            ok = TIFFSetField(t, TIFFTAG_SOFTWARE, "imgpu " IMGPU_VERSION);
        exif_write_ifd0(t, io, m);
        if (ok && exif_off)
            ok = TIFFSetField(t, TIFFTAG_EXIFIFD, exif_off);
        if (ok && gps_off)
            ok = TIFFSetField(t, TIFFTAG_GPSIFD, gps_off);
    }
    if (!ok)
        goto fail;
    strip = malloc(row * (size_t)rps);
    if (!strip) {
        snprintf(io->err, sizeof io->err, "out of memory");
        goto fail;
    }
    for (uint32_t y = 0, s = 0; y < (uint32_t)h; y += (uint32_t)rps, s++) {
        const uint32_t rows = (uint32_t)h - y < rps ? (uint32_t)h - y : (uint32_t)rps;
        /* a copy: libtiff's predictor works in place on what it is given */
        for (uint32_t r = 0; r < rows; r++)
            memcpy(strip + (size_t)r * row, imgpu_image_row(im, (int)(y + r)), row);
        if (TIFFWriteEncodedStrip(t, s, strip, (tmsize_t)(row * rows)) < 0)
            goto fail;
    }
    if (!TIFFWriteDirectory(t) || io->err[0])
        goto fail;
    free(strip);
    /* the Exif and GPS IFDs are in the buffer for good once written: their rationals get the
     * input's exact values now, while this page's metadata is at hand */
    exif_fix_rationals(io->wr, io->len, exif_off, IMGPU_EXIF_IFD_EXIF, m);
    exif_fix_rationals(io->wr, io->len, gps_off, IMGPU_EXIF_IFD_GPS, m);
    tp->done++;
    return 0;
fail:
    free(strip);
    snprintf(why, wn, "TIFF encoding failed (%s)", io_reason(io, "out of memory"));
    return -1;
}

/* The file (out != NULL, every page announced added: 0, or -1 with why), or abandoned (out
 * NULL); either way ctx is freed. */
static int tiff_pages_end(void *ctx, unsigned char **out, size_t *out_len, char *why, size_t wn)
{
    tiff_pages *tp = ctx;
    if (!tp)
        return -1;
    TIFFClose(tp->t);
    int rc = -1;
    if (out && tp->done != tp->pages)
        snprintf(why, wn, "internal error: %d TIFF pages of %d written", tp->done, tp->pages);
    else if (out && tp->io.err[0])
        snprintf(why, wn, "TIFF encoding failed (%s)", tp->io.err);
    else if (out) {
        *out = tp->io.wr;
        *out_len = tp->io.len;
        tp->io.wr = NULL;
        rc = 0;
    }
    free(tp->io.wr);
    free(tp);
    return rc;
}

static int tiff_encode(const imgpu_image *im, const imgpu__encode_args *a, unsigned char **out,
                       size_t *out_len, char *why, size_t wn)
{
    const uint64_t raw = (uint64_t)im->width * (uint64_t)im->channels * (uint64_t)(im->depth / 8) *
                         (uint64_t)im->height;
    void *tp = tiff_pages_begin(1, raw, why, wn);
    if (!tp)
        return -1;
    if (tiff_pages_add(tp, im, a, why, wn) < 0) {
        tiff_pages_end(tp, NULL, NULL, NULL, 0);
        return -1;
    }
    return tiff_pages_end(tp, out, out_len, why, wn);
}

/* ---- the entry -------------------------------------------------------------------------- */

static int tiff_sniff(const unsigned char *b, size_t n)
{
    return n >= 4 && (!memcmp(b, "II*\0", 4) || !memcmp(b, "MM\0*", 4) ||
                      !memcmp(b, "II+\0", 4) || !memcmp(b, "MM\0+", 4));   /* + BigTIFF */
}

static const char *const s_ext[] = { "tif", "tiff", NULL };

static void library(char *buf, size_t n)
{
    /* "LIBTIFF, Version 4.5.0\nCopyright ..." */
    const char *v = strstr(TIFFGetVersion(), "Version ");
    int len = 0;
    if (v)
        for (v += 8; v[len] && v[len] != '\n' && v[len] != ' '; len++)
            ;
    snprintf(buf, n, "libtiff %.*s", len ? len : 1, len ? v : "?");
}

const imgpu__codec imgpu__codec_tiff = {
    .format = IMGPU_FORMAT_TIFF,
    .name = "TIFF",
    .extensions = s_ext,
    .sniff = tiff_sniff,
    .scan = tiff_scan,
    .info_from_scan = 1,
    .decode8 = tiff_decode8,
    .load16 = tiff_load16,
    .read_meta = tiff_read_meta,
    .stores_alpha = 1,
    .encode8 = tiff_encode,
    .encode16 = tiff_encode,
    .pages_begin = tiff_pages_begin,
    .pages_add = tiff_pages_add,
    .pages_end = tiff_pages_end,
    .library = library,
};

/* io.c — loading and saving images: the thin public API of io.h over the codec table
 * (codec.h). Load reads the input whole (io_read.c), names the format from its magic bytes
 * (never the extension), lets the format's own scan walk the file's structure to find the
 * dimensions and to prove that the pixel data is all there (stb v2.27 happily decodes a
 * truncated TGA, BMP, PNM or JPEG into uninitialized or made-up pixels), refuses what is too
 * large or not a supported format, and only then decodes under a memory budget and the
 * decode-time limit. Save checks the image and what the format can store, encodes into
 * memory through the format's entry, and hands the bytes to the atomic writer (io_write.c),
 * so a failure never leaves a partial file or harms an existing one. Messages are
 * "cannot read 'PATH': REASON" and "cannot write 'PATH': REASON".
 */
#include "io.h"
#include "codec.h"
#include "error.h"
#include "exif.h"
#include "op.h"

#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* ---- load -------------------------------------------------------------------------------- */

static imgpu_image *load_fail(const char *name, const char *why)
{
    imgpu_error("cannot read '%s': %s", name, why);
    return NULL;
}


static imgpu_image *decode(const unsigned char *b, size_t len, const char *name,
                           const imgpu_load_options *opts, const imgpu__codec *k,
                           const imgpu__scan *sc);

/* --max-memory of a load: its own, else the process-wide limit (op.h). */
static uint64_t load_max_memory(const imgpu_load_options *opts)
{
    if (opts && opts->max_memory)
        return opts->max_memory;
    imgpu_limits l;
    imgpu_get_limits(&l);
    return l.max_memory;
}

/* Bytes of the decoded image of scan s (in double: --max-pixels may be anything). */
static double image_bytes(const imgpu__scan *s)
{
    return (double)s->w * (double)s->h * s->channels * (s->deep ? 2 : 1);
}

/* Every check a load makes before decoding: the limits, the format by content, its structure
 * scan (into *s, with the channels and depth a decode gives) and the pixel count. 0, or -1
 * with the error recorded. */
static int check_memory(const unsigned char *b, size_t len, const char *name,
                        const imgpu_load_options *opts, const imgpu__codec **kp, imgpu__scan *s)
{
    uint64_t max_pixels = opts && opts->max_pixels ? opts->max_pixels : IMGPU_DEFAULT_MAX_PIXELS;
    if (!b || len == 0)
        return load_fail(name, "file is empty"), -1;
    if ((uint64_t)len > imgpu__max_file_bytes(opts))
        return imgpu_error("cannot read '%s': file is too large (%zu bytes; the limit is %llu "
                           "bytes, raise it with --max-file-size or IMGPU_MAX_FILE_SIZE)", name,
                           len, (unsigned long long)imgpu__max_file_bytes(opts));

    imgpu_format f;
    if (imgpu__codec_sniff_checked(name, b, len, &f) < 0)
        return -1;
    const imgpu__codec *k = imgpu__codec_of(f);
    *kp = k;

    memset(s, 0, sizeof *s);
    s->page = opts ? opts->page : 0;
    s->name = name;
    const char *err = k->scan(b, len, s);
    if (err)
        return load_fail(name, err), -1;
    if (s->page > 0 && s->pages == 0)   /* a format without pages: only page 0 exists */
        return imgpu_error("cannot read '%s': --page %d: a %s file has one image (page 0)", name,
                           s->page, k->name);
    if (s->w == 0 || s->h == 0)
        return load_fail(name, "corrupt image header (zero size)"), -1;
    /* Before anything allocates: w and h are each < 2^32, so the product cannot wrap. */
    if (s->w * s->h > max_pixels)
        return imgpu_error("cannot read '%s': image is %llux%llu = %llu pixels, more than the "
                           "limit of %llu (raise it with --max-pixels)", name,
                           (unsigned long long)s->w, (unsigned long long)s->h,
                           (unsigned long long)(s->w * s->h), (unsigned long long)max_pixels);

    int w, h, c, is16 = 0;
    const char *why;
    if (k->info_from_scan || s->own_decode) {
        c = s->channels;
        is16 = s->deep;
    } else if (imgpu__stb_info(b, len, &w, &h, &c, &is16, &why) < 0) {
        if (s->data_error)   /* stb's complaint is a symptom; ours names the cause */
            return load_fail(name, s->data_error), -1;
        return imgpu_error("cannot read '%s': corrupt %s file (%s)", name, imgpu_format_name(f),
                           why);
    } else if ((uint64_t)w != s->w || (uint64_t)(h < 0 ? -(int64_t)h : h) != s->h) {
        /* Our scan and stb must agree on the size, or the truncation checks above measured
         * a different image than the one stb would decode. (stb's BMP info reports a
         * top-down BMP's height negative, as the header has it.) */
        return imgpu_error("cannot read '%s': corrupt %s header", name, imgpu_format_name(f));
    }
    const int deep = is16 || s->pnm_maxval > 255;
    if (s->data_error)
        return load_fail(name, s->data_error), -1;
    s->deep = deep;
    s->channels = c;
    return 0;
}

/* The file's metadata (a new imgpu_meta, pages and page set) with its orientation resolved:
 * EXIF's Orientation wins over a format's own (TIFF's tag), as in every viewer. NULL with the
 * error recorded when out of memory. */
static imgpu_meta *read_meta(const unsigned char *b, size_t len, const char *name,
                             const imgpu__codec *k, const imgpu__scan *s)
{
    imgpu_meta *m = calloc(1, sizeof *m);
    if (m) {   /* before read_meta: a format with pages reads the page loaded */
        m->pages = s->pages > 0 ? s->pages : 1;
        m->page = s->page;
    }
    if (!m || (k->read_meta && k->read_meta(b, len, m) < 0)) {
        imgpu_meta_free(m);
        load_fail(name, "out of memory");
        return NULL;
    }
    imgpu_exif_info ex;
    if (m->exif && imgpu_exif_parse(m->exif, m->exif_len, &ex) == 0 && ex.orientation)
        m->orientation = ex.orientation;
    imgpu_meta_check_exif(m);   /* outputs carry only EXIF the parse reads, orientation 1..8 */
    return m;
}

/* Whether the load turns the image upright (imgpu__orient_on_load): a copy of the image. */
static int turns(const imgpu_meta *m, const imgpu_load_options *opts)
{
    return !(opts && opts->no_auto_orient) && m->orientation >= 2 && m->orientation <= 8;
}

/* The job's own check (opts->on_shape) on the image the load returns, then --max-memory
 * against what the load will hold at its peak, from the structure alone: the file, and then
 * either the decoder's output with its working memory (s->work) or, when the image is turned
 * upright, the image and its turned copy. (The job first: its figure, results and working
 * buffers included, is the one to raise the limit to.) 0, or -1 with the error recorded. */
static int check_load(size_t len, const char *name, const imgpu__scan *s, const imgpu_meta *m,
                      const imgpu_load_options *opts)
{
    if (opts && opts->on_shape) {
        const int swap = turns(m, opts) && m->orientation >= 5;   /* 5..8 transpose */
        const imgpu_image_shape sh = { (int)(swap ? s->h : s->w), (int)(swap ? s->w : s->h),
                                       s->channels, s->deep ? 16 : 8 };
        if (opts->on_shape(&sh, opts->on_shape_ctx) != 0)
            return -1;
    }
    const uint64_t limit = load_max_memory(opts);
    const double img = image_bytes(s), work = (double)s->work;
    const double need = (double)len + img + (turns(m, opts) && img > work ? img : work);
    if (need > (double)limit) {
        char a[48], b[48];
        imgpu__fmt_bytes(a, sizeof a, need);
        imgpu__fmt_bytes(b, sizeof b, (double)limit);
        return imgpu_error("cannot read '%s': decoding the %llux%llu image needs %s of memory "
                           "(the file, the image and the decoder's buffers), over --max-memory "
                           "%s (raise it with --max-memory or IMGPU_MAX_MEMORY)", name,
                           (unsigned long long)s->w, (unsigned long long)s->h, a, b);
    }
    return 0;
}

/* Everything before the decode: check_memory's checks, the metadata (*mp, the caller frees
 * it) and the memory the load and the job will need (check_load). 0, or -1 with the error
 * recorded and nothing to free. */
static int prepare(const unsigned char *b, size_t len, const char *name,
                   const imgpu_load_options *opts, const imgpu__codec **kp, imgpu__scan *s,
                   imgpu_meta **mp)
{
    if (check_memory(b, len, name, opts, kp, s) < 0)
        return -1;
    imgpu_meta *m = read_meta(b, len, name, *kp, s);
    if (!m)
        return -1;
    if (check_load(len, name, s, m, opts) < 0) {
        imgpu_meta_free(m);
        return -1;
    }
    *mp = m;
    return 0;
}

/* The whole load: checks (the memory and the job's from the structure), decode, then the
 * orientation; the metadata into *meta when meta is not NULL. */
static imgpu_image *load_memory(const void *buf, size_t len, const char *name,
                                const imgpu_load_options *opts, imgpu_meta **meta)
{
    const unsigned char *b = buf;
    if (!name)
        name = "(memory)";
    const imgpu__codec *k;
    imgpu__scan s;
    imgpu_meta *m;
    if (prepare(b, len, name, opts, &k, &s, &m) < 0)
        return NULL;
    if (s.pages > 1 && s.page == 0 && !(opts && opts->no_page_notice))
        imgpu_notice("'%s': %s of %d pages: only page 0 is used (--page N picks another; "
                     "the op commands take --pages all)", name, k->name, s.pages);
    imgpu_image *im = decode(b, len, name, opts, k, &s);
    if (!im) {
        imgpu_meta_free(m);
        return NULL;
    }
    if (imgpu__orient_on_load(&im, m, opts) < 0) {
        imgpu_meta_free(m);
        return NULL;
    }
    if (meta)
        *meta = m;
    else
        imgpu_meta_free(m);
    return im;
}

int imgpu_image_read_checked(const char *path, const imgpu_load_options *opts,
                             unsigned char **buf, size_t *len, imgpu_image_shape *shape,
                             imgpu_load_result *r)
{
    const imgpu__codec *k;
    imgpu__scan s;
    *buf = NULL;
    if (imgpu__read_input(path, opts, buf, len) < 0)
        return -1;
    if (prepare(*buf, *len, path, opts, &k, &s, &r->meta) < 0) {
        free(*buf);
        *buf = NULL;
        return -1;
    }
    r->format = k->format;
    r->bytes = *len;
    shape->width = (int)s.w;
    shape->height = (int)s.h;
    shape->channels = s.channels;
    shape->depth = s.deep ? 16 : 8;
    return 0;
}

int imgpu_image_read_info(const char *path, const imgpu_load_options *opts,
                          imgpu_image_shape *shape, imgpu_load_result *r)
{
    unsigned char *buf;
    size_t len;
    if (imgpu_image_read_checked(path, opts, &buf, &len, shape, r) < 0)
        return -1;
    free(buf);
    if (!turns(r->meta, opts))
        return 0;
    r->meta->oriented = 1;   /* as imgpu__orient_on_load sets it */
    if (r->meta->orientation >= 5) {   /* 5..8 transpose */
        const int t = shape->width;
        shape->width = shape->height;
        shape->height = t;
    }
    return 0;
}

/* A decode held to --max-memory that failed for want of memory: say which limit it met
 * rather than the decoder's "out of memory" or "more than an image of its size can use". */
static void memory_refusal(const char *name, const imgpu__scan *s, uint64_t limit)
{
    /* the reason: what follows the last "': " (the name may say "memory" itself) */
    const char *msg = imgpu_error_message(), *p;
    while ((p = strstr(msg, "': ")) != NULL)
        msg = p + 3;
    if (!strstr(msg, "memory"))
        return;
    char b[48];
    imgpu__fmt_bytes(b, sizeof b, (double)limit);
    imgpu_error("cannot read '%s': decoding the %llux%llu image needs more memory than "
                "--max-memory %s (raise it with --max-memory or IMGPU_MAX_MEMORY)", name,
                (unsigned long long)s->w, (unsigned long long)s->h, b);
}

/* The pixels of a file whose scan and checks passed. */
static imgpu_image *decode(const unsigned char *b, size_t len, const char *name,
                           const imgpu_load_options *opts, const imgpu__codec *k,
                           const imgpu__scan *sc)
{
    imgpu__scan s = *sc;
    const imgpu_format f = k->format;
    const int deep = s.deep;
    int w, h, c;
    const char *why;
    /* The decoder's budget: the compressed data twice over (stb grows its PNG data buffer by
     * doubling) plus 20 bytes per pixel of the image padded to whole 32x32 JPEG MCUs (JPEG:
     * up to 4 components of samples and of 16-bit progressive coefficients, and the output,
     * about 15; PNG: inflated rows, the image, the de-interlace copy, about 12), plus slack
     * for fixed-size state. */
    uint64_t area = ((s.w + 31) & ~(uint64_t)31) * ((s.h + 31) & ~(uint64_t)31);
    uint64_t budget = area > UINT64_MAX / 32 ? UINT64_MAX
                                             : 2 * (uint64_t)len + 20 * area + ((uint64_t)1 << 20);
    if (deep) /* every sample and inflated row twice as wide */
        budget = budget > UINT64_MAX / 2 ? UINT64_MAX : 2 * budget;
    /* and never past --max-memory, less the file it decodes from (check_load measured the
     * file + image + work against the limit: this holds the decoder to it for what the
     * structure could not tell) */
    const uint64_t limit = load_max_memory(opts);
    const uint64_t room = limit > (uint64_t)len ? limit - (uint64_t)len : 0;
    const int capped = budget > room;
    if (capped)
        budget = room;
    if (budget > SIZE_MAX)
        budget = SIZE_MAX;
    imgpu_image *im = NULL;
    if (deep) {
        im = k->load16 ? k->load16(b, len, name, &s, (size_t)budget)
                       : imgpu__load16_stb(b, len, name, &s, (size_t)budget, k);
        if (!im && capped)
            memory_refusal(name, &s, limit);
        return im;
    }

    unsigned char *px = k->decode8 ? k->decode8(b, len, &s, (size_t)budget, &w, &h, &c, &why)
                                   : imgpu__stb_decode(b, len, (size_t)budget, &w, &h, &c, &why);
    if (!px) {
        /* a reason that names its kind stands as it is (codec.h); anything else is the
         * library's complaint about the data. A decode stopped by the time limit is
         * reported by load_memory_timed, whatever it said here. */
        if (!strncmp(why, "corrupt ", 8) || !strncmp(why, "truncated ", 10) ||
            !strncmp(why, "out of memory", 13))
            imgpu_error("cannot read '%s': %s", name, why);
        else
            imgpu_error("cannot read '%s': corrupt %s data (%s)", name, imgpu_format_name(f), why);
        if (capped)
            memory_refusal(name, &s, limit);
        return NULL;
    }
    if ((uint64_t)w != s.w || (uint64_t)h != s.h) {
        free(px);
        imgpu_error("cannot read '%s': corrupt %s data", name, imgpu_format_name(f));
        return NULL;
    }
    return imgpu__adopt_pixels(name, px, w, h, c, 8);
}

/* The decode-time limit wraps the whole load (checks and decode): see
 * imgpu__stb_deadline_begin. A load that finishes after the deadline is refused too, so what
 * --max-decode-time promises holds for every format: no image comes back from a decode that
 * took longer, and a decode that is still allocating stops at its next allocation. */
static imgpu_image *load_memory_timed(const void *buf, size_t len, const char *name,
                                      const imgpu_load_options *opts, imgpu_meta **meta)
{
    uint64_t ms = opts && opts->max_decode_ms ? opts->max_decode_ms : IMGPU_DEFAULT_MAX_DECODE_MS;
    imgpu__stb_deadline_begin(ms);
    imgpu_image *im = load_memory(buf, len, name, opts, meta);
    if (imgpu__stb_deadline_end()) {
        imgpu_image_free(im);
        if (meta) {
            imgpu_meta_free(*meta);
            *meta = NULL;
        }
        imgpu_error("cannot read '%s': decoding took longer than the limit of %.3g s (raise it "
                    "with --max-decode-time or IMGPU_MAX_DECODE_TIME)", name ? name : "(memory)",
                    (double)ms / 1000.0);
        return NULL;
    }
    return im;
}

imgpu_image *imgpu_image_load_memory(const void *buf, size_t len, const char *name,
                                     const imgpu_load_options *opts)
{
    return load_memory_timed(buf, len, name, opts, NULL);
}

imgpu_image *imgpu_image_load_memory_meta(const void *buf, size_t len, const char *name,
                                          const imgpu_load_options *opts, imgpu_meta **meta)
{
    return load_memory_timed(buf, len, name, opts, meta);
}

imgpu_image *imgpu_image_load_ex(const char *path, const imgpu_load_options *opts,
                                 imgpu_load_result *r)
{
    unsigned char *buf;
    size_t len;
    if (imgpu__read_input(path, opts, &buf, &len) < 0)
        return NULL;
    imgpu_image *im = load_memory_timed(buf, len, path, opts, r ? &r->meta : NULL);
    if (im && r) {
        const char *refused;
        r->format = imgpu__codec_sniff(buf, len, &refused);
        r->bytes = len;
    }
    free(buf);
    return im;
}

int imgpu_image_load_pages(const char *path, const imgpu_load_options *opts,
                           int (*page)(void *ctx, int index, int count, imgpu_image *im,
                                       imgpu_meta *meta),
                           void *ctx)
{
    unsigned char *buf;
    size_t len;
    if (imgpu__read_input(path, opts, &buf, &len) < 0)
        return -1;
    imgpu_load_options o = { 0 };
    if (opts)
        o = *opts;
    o.no_page_notice = 1;
    int rc = 0, count = 1;
    for (int i = 0; i < count && rc == 0; i++) {
        imgpu_meta *m = NULL;
        o.page = i;
        imgpu_image *im = load_memory_timed(buf, len, path, &o, &m);
        if (!im) {
            rc = -1;
            break;
        }
        if (i == 0)
            count = m->pages > 0 ? m->pages : 1;
        rc = page(ctx, i, count, im, m) < 0 ? -1 : 0;
    }
    free(buf);
    return rc;
}

imgpu_image *imgpu_image_load_info(const char *path, const imgpu_load_options *opts,
                                   imgpu_format *format, uint64_t *bytes)
{
    imgpu_load_result r = { 0 };
    imgpu_image *im = imgpu_image_load_ex(path, opts, &r);
    if (im) {
        if (format)
            *format = r.format;
        if (bytes)
            *bytes = r.bytes;
        imgpu_meta_free(r.meta);
    }
    return im;
}

imgpu_image *imgpu_image_load(const char *path, const imgpu_load_options *opts)
{
    return imgpu_image_load_info(path, opts, NULL, NULL);
}

/* ---- encode ---------------------------------------------------------------------------- */

static int save_fail(const char *path, const char *why)
{
    if (path)
        return imgpu_error("cannot write '%s': %s", path, why);
    return imgpu_error("cannot encode image: %s", why);
}

imgpu_image *imgpu_image_to_depth(const imgpu_image *im, int depth)
{
    if (depth != 8 && depth != 16) {
        imgpu_error("invalid sample depth %d bits", depth);
        return NULL;
    }
    imgpu_image *o = imgpu_image_new(im->width, im->height, im->channels, depth);
    if (!o)
        return NULL;
    const size_t n = (size_t)im->width * (size_t)im->channels;
    for (int y = 0; y < im->height; y++) {
        const unsigned char *r = imgpu_image_row(im, y);
        unsigned char *d = imgpu_image_row(o, y);
        for (size_t i = 0; i < n; i++) {
            uint32_t v = imgpu_sample_get(r, im->depth, i);
            if (im->depth == 16 && depth == 8)
                v = (v * 255u + 32767u) / 65535u;
            else if (im->depth == 8 && depth == 16)
                v *= 257u;
            if (depth == 16)
                ((uint16_t *)(void *)d)[i] = (uint16_t)v;
            else
                d[i] = (unsigned char)v;
        }
    }
    return o;
}

/* What a codec's encoder is asked for: opts with their defaults resolved (quality and level
 * already validated). */
static imgpu__encode_args encode_args(int quality, int level, int png_threads,
                                      const imgpu_save_options *opts, const char *path)
{
    imgpu__encode_args args = { quality, level, png_threads, IMGPU_SUBSAMPLING_420, 0, 0,
                                IMGPU_COMPRESSION_DEFLATE, 0, { 255, 255, 255, 255 }, NULL, path };
    if (opts) {
        if (opts->subsampling)
            args.subsampling = opts->subsampling;
        args.progressive = opts->progressive;
        args.optimize = opts->optimize;
        if (opts->compression)
            args.compression = opts->compression;
        args.lossless = opts->lossless;
        if (opts->has_background)
            memcpy(args.background, opts->background, 4);
        args.meta = opts->strip ? NULL : opts->meta;
    }
    return args;
}

/* `path` only for messages (NULL from imgpu_image_encode). Every check that is not the
 * format's own, in the order the messages promise; then the codec's encoder. */
static int encode(const imgpu_image *im, imgpu_format f, const imgpu_save_options *opts,
                  int png_threads, const char *path, unsigned char **out, size_t *out_len)
{
    char why[160];

    if (!im || !im->data || im->width < 1 || im->height < 1 || im->channels < 1 ||
        im->channels > 4)
        return save_fail(path, "invalid image");
    if (im->depth != 8 && im->depth != 16)
        return save_fail(path, "invalid image (sample depth)");
    if (im->stride < (size_t)im->width * (size_t)im->channels * (im->depth / 8))
        return save_fail(path, "invalid image (row stride too small)");
    int quality = opts && opts->quality < 0 ? opts->quality : IMGPU_SAVE_QUALITY(opts, f);
    int level = opts && opts->png_level != -1 ? opts->png_level : 1;
    if (quality < 1 || quality > 100)
        return save_fail(path, "quality must be between 1 and 100");
    if (level < 0 || level > 9)
        return save_fail(path, "PNG compression level must be between 0 and 9");
    const imgpu__codec *k = imgpu__codec_of(f);
    if (!k)
        return save_fail(path, "unknown output format (use " IMGPU_EXTENSIONS_HINT ")");
    int w = im->width, h = im->height, c = im->channels;
    if (imgpu_format_check_size(f, w, h, c, im->depth, why, sizeof why) < 0)
        return save_fail(path, why);

    imgpu__encode_args args = encode_args(quality, level, png_threads, opts, path);
    if (k->flattens_alpha && (c == 2 || c == 4)) {
        /* JPEG has no alpha: composite onto the background (white unless --flatten) */
        imgpu_notice("%s%s%s%s cannot store alpha: flattening the image onto %s", path ? "'" : "",
                     path ? path : "", path ? "': " : "", k->name,
                     opts && opts->has_background ? "the --flatten colour" : "white");
        imgpu_image *flat = imgpu_image_flatten(im, args.background);
        if (!flat)
            return -1;
        imgpu_save_options o2 = opts ? *opts : (imgpu_save_options){ .quality = 0, .png_level = -1, .no_follow = 0 };
        int rc = encode(flat, f, &o2, png_threads, path, out, out_len);
        imgpu_image_free(flat);
        return rc;
    }
    if (im->depth == 16) {
        if (k->encode16)
            return k->encode16(im, &args, out, out_len, why, sizeof why) < 0 ? save_fail(path, why)
                                                                             : 0;
        /* no encode16 (JPEG, BMP, TGA): 8 bits per sample */
        imgpu_notice("%s%s%s%s stores 8 bits per sample: converting the 16-bit image", path ? "'" : "",
                     path ? path : "", path ? "': " : "", imgpu_format_name(f));
        imgpu_image *im8 = imgpu_image_to_depth(im, 8);
        if (!im8)
            return -1;
        int rc = encode(im8, f, opts, png_threads, path, out, out_len);
        imgpu_image_free(im8);
        return rc;
    }
    int rc = k->encode8 ? k->encode8(im, &args, out, out_len, why, sizeof why)
                        : imgpu__encode_stb(k, im, &args, out, out_len, why, sizeof why);
    return rc < 0 ? save_fail(path, why) : 0;
}

int imgpu_save_options_note_ignored(const imgpu_save_options *o, imgpu_format f)
{
    /* TIFF takes --quality and --subsampling with --compression jpeg, --quality and
     * --lossless with --compression webp */
    const int jpeg = f == IMGPU_FORMAT_JPEG, webp = f == IMGPU_FORMAT_WEBP;
    const int tiff = f == IMGPU_FORMAT_TIFF;
    const int tiff_jpeg = tiff && o->compression == IMGPU_COMPRESSION_JPEG;
    const int tiff_webp = tiff && o->compression == IMGPU_COMPRESSION_WEBP;
    const struct { int set, used; const char *name; } opt[] = {
        { o->quality != 0, jpeg || webp || tiff_jpeg || tiff_webp, "--quality" },
        { o->png_level != -1, f == IMGPU_FORMAT_PNG, "--png-level" },
        { o->subsampling != 0, jpeg || tiff_jpeg, "--subsampling" },
        { o->progressive, jpeg, "--progressive" },
        { o->optimize, jpeg, "--optimize" },
        { o->compression != 0, tiff, "--compression" },
        { o->lossless, webp || tiff_webp, "--lossless" },
    };
    char names[128] = "";
    int count = 0;
    size_t used = 0;
    for (size_t i = 0; i < sizeof opt / sizeof opt[0] && f != IMGPU_FORMAT_UNKNOWN; i++) {
        if (!opt[i].set || opt[i].used)
            continue;
        int k = snprintf(names + used, sizeof names - used, "%s%s", count ? ", " : "", opt[i].name);
        if (k > 0 && used + (size_t)k < sizeof names)
            used += (size_t)k;
        count++;
    }
    if (count)
        imgpu_notice("%s %s not apply to %s output: ignored", names, count == 1 ? "does" : "do",
                     imgpu_format_name(f));
    return count;
}

int imgpu_image_encode(const imgpu_image *im, imgpu_format f, const imgpu_save_options *opts,
                       unsigned char **out, size_t *out_len)
{
    return encode(im, f, opts, 0, NULL, out, out_len);
}

/* ---- save ------------------------------------------------------------------------------ */

static int save(const imgpu_image *im, const char *path, const imgpu_save_options *opts,
                int png_threads, int (*before_rename)(void *, long long, long long), void *ctx)
{
    imgpu_format f = opts && opts->format ? opts->format : imgpu_format_from_path(path);
    const char *unwritable = f == IMGPU_FORMAT_UNKNOWN ? imgpu_format_unwritable_from_path(path)
                                                       : NULL;
    if (unwritable)
        return imgpu_error("cannot write '%s': %s output is not supported (use "
                           IMGPU_EXTENSIONS_HINT ")", path, unwritable);
    if (f == IMGPU_FORMAT_UNKNOWN)
        return save_fail(path ? path : "(null)",
                         path && !strcmp(path, "-") ? "standard output needs --format"
                                                    : "unknown output format (use " IMGPU_EXTENSIONS_HINT ")");
    unsigned char *buf = NULL;
    size_t len = 0;
    if (encode(im, f, opts, png_threads, path, &buf, &len) < 0)
        return -1;
    int rc = !strcmp(path, "-") ? imgpu__write_stdout(buf, len)
                                : imgpu__write_atomic(path, buf, len, opts ? opts->no_follow : 0,
                                                      before_rename, ctx);
    free(buf);
    return rc;
}

int imgpu_image_save(const imgpu_image *im, const char *path, const imgpu_save_options *opts)
{
    return save(im, path, opts, 0, NULL, NULL);
}

int imgpu_image_save_threads(const imgpu_image *im, const char *path,
                             const imgpu_save_options *opts, int png_threads)
{
    return save(im, path, opts, png_threads, NULL, NULL);
}

int imgpu_image_save_recorded(const imgpu_image *im, const char *path,
                              const imgpu_save_options *opts, int png_threads,
                              int (*before_rename)(void *ctx, long long size, long long mtime_ns),
                              void *ctx)
{
    return save(im, path, opts, png_threads, before_rename, ctx);
}

int imgpu_save_encoded_recorded(const unsigned char *bytes, size_t len, imgpu_format f,
                                const char *path, const imgpu_save_options *opts,
                                int (*before_rename)(void *ctx, long long size, long long mtime_ns),
                                void *ctx)
{
    const imgpu__codec *k = imgpu__codec_of(f);
    if (!k || !k->insert_meta)
        return save_fail(path, "only JPEG bitstreams are written as they are");
    unsigned char *buf = NULL;
    size_t n = 0;
    char why[160];
    const imgpu_meta *m = opts && !opts->strip ? opts->meta : NULL;
    if (k->insert_meta(bytes, len, m, path, &buf, &n, why, sizeof why) < 0)
        return save_fail(path, why);
    int rc = !strcmp(path, "-") ? imgpu__write_stdout(buf, n)
                                : imgpu__write_atomic(path, buf, n, opts ? opts->no_follow : 0,
                                                      before_rename, ctx);
    free(buf);
    return rc;
}

/* ---- pages: several images into one file ------------------------------------------------ */

struct imgpu_page_writer {
    char *path;
    imgpu_save_options opts;
    const imgpu__codec *k;
    void *w;            /* the codec's writer */
};

int imgpu_format_has_pages(imgpu_format f)
{
    const imgpu__codec *k = imgpu__codec_of(f);
    return k && k->pages_begin;
}

imgpu_page_writer *imgpu_pages_begin(const char *path, int pages, uint64_t raw_bytes,
                                     const imgpu_save_options *opts)
{
    char why[200];
    imgpu_format f = opts && opts->format ? opts->format : imgpu_format_from_path(path);
    const imgpu__codec *k = imgpu__codec_of(f);
    if (!k) {
        save_fail(path, "unknown output format (use .tif or .tiff for pages)");
        return NULL;
    }
    if (!k->pages_begin) {
        imgpu_error("cannot write '%s': %s holds one image, not pages (write a .tif, or pick "
                    "one page with --page N)", path, k->name);
        return NULL;
    }
    if (pages < 1 || pages > 65535) {
        save_fail(path, "a multi-page file holds 1..65535 pages");
        return NULL;
    }
    imgpu_page_writer *pw = calloc(1, sizeof *pw);
    if (!pw || !(pw->path = strdup(path))) {
        free(pw);
        save_fail(path, "out of memory");
        return NULL;
    }
    if (opts)
        pw->opts = *opts;
    else
        pw->opts.png_level = -1;
    pw->opts.meta = NULL;
    pw->k = k;
    if (!(pw->w = k->pages_begin(pages, raw_bytes, why, sizeof why))) {
        save_fail(path, why);
        free(pw->path);
        free(pw);
        return NULL;
    }
    return pw;
}

int imgpu_pages_add(imgpu_page_writer *pw, const imgpu_image *im, const imgpu_meta *meta)
{
    char why[200];
    const imgpu_save_options *opts = &pw->opts;
    if (!im || !im->data || im->width < 1 || im->height < 1 || im->channels < 1 ||
        im->channels > 4 || (im->depth != 8 && im->depth != 16) ||
        im->stride < (size_t)im->width * (size_t)im->channels * (im->depth / 8))
        return save_fail(pw->path, "invalid image");
    const int quality = opts->quality ? opts->quality : IMGPU_DEFAULT_QUALITY;
    if (quality < 1 || quality > 100)
        return save_fail(pw->path, "quality must be between 1 and 100");
    if (imgpu_format_check_size(pw->k->format, im->width, im->height, im->channels, im->depth,
                                why, sizeof why) < 0)
        return save_fail(pw->path, why);
    imgpu_save_options o = *opts;
    o.meta = meta;
    imgpu__encode_args args = encode_args(quality, 1, 0, &o, pw->path);
    if (pw->k->pages_add(pw->w, im, &args, why, sizeof why) < 0)
        return save_fail(pw->path, why);
    return 0;
}

int imgpu_pages_finish(imgpu_page_writer *pw)
{
    char why[200];
    unsigned char *buf = NULL;
    size_t len = 0;
    int rc = pw->k->pages_end(pw->w, &buf, &len, why, sizeof why);
    if (rc < 0)
        save_fail(pw->path, why);
    else
        rc = !strcmp(pw->path, "-") ? imgpu__write_stdout(buf, len)
                                    : imgpu__write_atomic(pw->path, buf, len, pw->opts.no_follow,
                                                          NULL, NULL);
    free(buf);
    free(pw->path);
    free(pw);
    return rc;
}

void imgpu_pages_abandon(imgpu_page_writer *pw)
{
    if (!pw)
        return;
    pw->k->pages_end(pw->w, NULL, NULL, NULL, 0);
    free(pw->path);
    free(pw);
}

/* ---- orientation ------------------------------------------------------------------------ */

int imgpu__orient_on_load(imgpu_image **im, imgpu_meta *m, const imgpu_load_options *opts)
{
    const int o = m->orientation;   /* read_meta resolved it (EXIF's wins) */
    if ((opts && opts->no_auto_orient) || o < 2 || o > 8)
        return 0;
    imgpu_image *up = imgpu_image_orient(*im, o);
    imgpu_image_free(*im);
    *im = up;
    if (!up)
        return -1;
    imgpu_meta_set_upright(m, up->width, up->height);
    return 0;
}

void imgpu_meta_set_upright(imgpu_meta *m, int width, int height)
{
    /* the stored tag now describes pixels that are upright: 1, and the EXIF pixel size
     * follows the turned image */
    if (m->exif) {
        imgpu_exif_set_orientation(m->exif, m->exif_len, 1);
        imgpu_exif_set_pixel_size(m->exif, m->exif_len, (uint32_t)width, (uint32_t)height);
    }
    m->oriented = 1;
}

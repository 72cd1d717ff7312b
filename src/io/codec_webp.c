/* codec_webp.c — the WebP entry of the codec table, through libwebp (decode, encode), its
 * demuxer (frames, the metadata chunks' places) and its muxer (writing ICCP, EXIF and XMP).
 *
 * Read: the scan walks the RIFF structure itself (every chunk's size against the RIFF size and
 * the bytes really there, the padding byte of odd chunks, the VP8X canvas, the VP8/VP8L frame
 * headers) so that a truncated or damaged file is named before libwebp runs, and reports the
 * size and the channels: 3, or 4 when the file says it has alpha (the VP8X alpha flag, or the
 * VP8L header's alpha bit in a simple file: what libwebp's demuxer and PIL go by). The decode
 * takes the first frame through the demuxer and feeds it to libwebp's incremental decoder in
 * slices, polling the decode-time limit between them, straight into the output (RGB or RGBA).
 * An animated file gives its first frame as a viewer shows it: on a canvas that starts
 * transparent black (the frame's own pixels, unblended, at its offset: the first frame of an
 * animation is always a key frame), with a notice that the other frames are not used.
 * libwebp's own allocations cannot be charged to the load's budget; they are bounded by the
 * image's area (the VP8L pixel buffer, the alpha plane), and the output is checked against
 * the budget before it is allocated.
 *
 * Write: lossy at --quality (method 4, libwebp's other defaults: what PIL's save does, so the
 * bytes match PIL's at the same quality) or lossless with --lossless (exact: the RGB values
 * under transparent pixels are kept, so the pixels load back identical). WebP has no gray:
 * gray is stored as RGB, gray+alpha as RGBA. Metadata goes in through WebPMux, which sets the
 * VP8X flags. libwebp prints nothing; every failure comes back as a status mapped to a reason.
 */
#include "codec.h"
#include "error.h"
#include "exif.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <webp/decode.h>
#include <webp/demux.h>
#include <webp/encode.h>
#include <webp/mux.h>

/* VP8X flags (the WebP container specification) */
#define WEBP_F_ANIM 0x02
#define WEBP_F_XMP 0x04
#define WEBP_F_EXIF 0x08
#define WEBP_F_ALPHA 0x10
#define WEBP_F_ICC 0x20

/* The largest side WebP can code (14 bits of a VP8L size field, VP8's limit too). */
#define WEBP_MAX_SIDE 16383

static int sniff(const unsigned char *b, size_t n)
{
    return n >= 12 && !memcmp(b, "RIFF", 4) && !memcmp(b + 8, "WEBP", 4);
}

static uint32_t le24(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
}

/* ---- the structure walk ---------------------------------------------------------------- */

/* What the walk learns; the chunk pointers point into the file (NULL: absent). */
typedef struct webp_walk {
    uint32_t w, h;
    int alpha, animated, frames;
    const unsigned char *icc, *exif, *xmp;
    size_t icc_len, exif_len, xmp_len;
} webp_walk;

/* The width and height in a VP8 key frame header (payload p[0..n)): 0, or -1 when it is not a
 * key frame header. */
static int vp8_size(const unsigned char *p, size_t n, uint32_t *w, uint32_t *h)
{
    if (n < 10)
        return -1;
    const uint32_t tag = le24(p);
    /* bit 0: 0 for a key frame; bits 1-3: profile 0..3; bit 4: shown */
    if ((tag & 1) || ((tag >> 1) & 7) > 3 || !((tag >> 4) & 1) || memcmp(p + 3, "\x9d\x01\x2a", 3))
        return -1;
    *w = imgpu__le16(p + 6) & 0x3fff;   /* the top 2 bits are an upscaling hint */
    *h = imgpu__le16(p + 8) & 0x3fff;
    return 0;
}

/* Whether the first partition's size in the frame tag of a VP8 chunk of `len` bytes (whose
 * header vp8_size accepted) is more than the chunk holds after the 10-byte header: libwebp
 * refuses such a frame before decoding anything. */
static int vp8_partition_short(const unsigned char *p, uint32_t len)
{
    return (le24(p) >> 5) > len - 10;
}

/* The same for a VP8L header: signature 0x2f, 14 bits width - 1, 14 bits height - 1, the
 * alpha bit, 3 bits of version (0). */
static int vp8l_size(const unsigned char *p, size_t n, uint32_t *w, uint32_t *h, int *alpha)
{
    if (n < 5 || p[0] != 0x2f)
        return -1;
    const uint32_t v = imgpu__le32(p + 1);
    if (v >> 29)
        return -1;
    *w = (v & 0x3fff) + 1;
    *h = ((v >> 14) & 0x3fff) + 1;
    *alpha = (v >> 28) & 1;
    return 0;
}

/* Walks b[0..n): NULL with *o filled (a data error, if any, in s->data_error), or a header
 * error. s may be a scratch scan. The rules are the demuxer's (which the decode runs on), so
 * that what passes here parses there: a chunk, padding included, lies within the RIFF size
 * (else corrupt) and within the file (else truncated); the first chunk is VP8, VP8L or VP8X;
 * in an extended file a still image is an optional ALPH and one VP8/VP8L chunk of the canvas
 * size, an animation an ANIM chunk and then ANMF frames. Unknown chunks are skipped. */
static const char *walk(const unsigned char *b, size_t n, webp_walk *o, imgpu__scan *s)
{
    memset(o, 0, sizeof *o);
    if (n < 12)
        return "truncated WebP header";
    const uint32_t riff = imgpu__le32(b + 4);
    if (riff < 12 || riff > 0xfffffff6u)
        return "corrupt WebP header (bad RIFF size)";
    const uint64_t riff_end = (uint64_t)riff + 8;
    if (n < 20)
        return "truncated WebP header";
    const unsigned char *c = b + 12;
    const uint32_t first = imgpu__le32(c + 4);
    if (!memcmp(c, "VP8 ", 4) || !memcmp(c, "VP8L", 4)) {
        const size_t have = n - 20 < first ? n - 20 : first;
        if (!memcmp(c, "VP8 ", 4)) {
            if (first < 10)
                return "corrupt WebP header (VP8 chunk too small)";
            if (have < 10)
                return "truncated WebP header";
            if (vp8_size(c + 8, have, &o->w, &o->h) < 0)
                return "corrupt WebP header (bad VP8 frame header)";
            if (vp8_partition_short(c + 8, first))
                s->data_error = "corrupt WebP data (the VP8 first partition runs past its chunk)";
        } else {
            if (first < 5)
                return "corrupt WebP header (VP8L chunk too small)";
            if (have < 5)
                return "truncated WebP header";
            if (vp8l_size(c + 8, have, &o->w, &o->h, &o->alpha) < 0)
                return "corrupt WebP header (bad VP8L header)";
        }
        o->frames = 1;
        const uint64_t padded = (uint64_t)first + (first & 1);
        if (s->data_error)
            ;
        else if (20 + padded > riff_end)
            s->data_error = "corrupt WebP data (the image chunk runs past the RIFF size)";
        else if (20 + padded > n || riff_end > n)
            s->data_error = "truncated WebP data";
        return NULL;
    }
    if (memcmp(c, "VP8X", 4)) {
        snprintf(s->buf, sizeof s->buf, "corrupt WebP header (unknown first chunk '%.4s')",
                 (const char *)c);
        return s->buf;
    }
    if (first != 10)
        return "corrupt WebP header (bad VP8X chunk size)";
    if (n < 30)
        return "truncated WebP header";
    const unsigned flags = c[8];
    o->w = le24(c + 12) + 1;
    o->h = le24(c + 15) + 1;
    o->alpha = !!(flags & WEBP_F_ALPHA);
    o->animated = !!(flags & WEBP_F_ANIM);

    size_t pos = 30;
    int images = 0, anim = 0;
    const size_t end = riff_end < n ? (size_t)riff_end : n;
    while (pos < end) {
        if (end - pos < 8) {
            s->data_error = riff_end - pos < 8 ? "corrupt WebP data (a chunk header runs past "
                                                 "the RIFF size)"
                                               : "truncated WebP data";
            break;
        }
        const unsigned char *t = b + pos, *d = b + pos + 8;
        const uint32_t len = imgpu__le32(t + 4);
        const uint64_t padded = (uint64_t)len + (len & 1);
        if (pos + 8 + padded > riff_end) {
            s->data_error = "corrupt WebP data (a chunk runs past the RIFF size)";
            break;
        }
        if (pos + 8 + padded > n) {
            s->data_error = "truncated WebP data";
            break;
        }
        if (!memcmp(t, "ICCP", 4) && !o->icc) {
            o->icc = d, o->icc_len = len;
        } else if (!memcmp(t, "EXIF", 4) && !o->exif) {
            o->exif = d, o->exif_len = len;
        } else if (!memcmp(t, "XMP ", 4) && !o->xmp) {
            o->xmp = d, o->xmp_len = len;
        } else if (!memcmp(t, "ANIM", 4)) {
            if (len < 6 || !o->animated) {
                s->data_error = "corrupt WebP data (bad ANIM chunk)";
                break;
            }
            anim = 1;
        } else if (!memcmp(t, "ANMF", 4)) {
            /* x/2, y/2, width - 1, height - 1, duration (24 bits each), flags; then frame data */
            if (!anim || len < 16 + 8) {
                s->data_error = "corrupt WebP data (bad ANMF chunk)";
                break;
            }
            const uint64_t x = 2 * (uint64_t)le24(d), y = 2 * (uint64_t)le24(d + 3);
            const uint64_t fw = le24(d + 6) + 1, fh = le24(d + 9) + 1;
            if (x + fw > o->w || y + fh > o->h) {
                s->data_error = "corrupt WebP data (an animation frame lies outside the canvas)";
                break;
            }
            o->frames++;
        } else if (!memcmp(t, "ALPH", 4) || !memcmp(t, "VP8 ", 4) || !memcmp(t, "VP8L", 4)) {
            if (o->animated || images) {
                s->data_error = "corrupt WebP data (unexpected image chunk)";
                break;
            }
            if (memcmp(t, "ALPH", 4)) {   /* ALPH: the alpha of the VP8 chunk that follows */
                uint32_t iw = 0, ih = 0;
                int a = 0;
                int bad = !memcmp(t, "VP8 ", 4) ? vp8_size(d, len, &iw, &ih)
                                                : vp8l_size(d, len, &iw, &ih, &a);
                if (bad || iw != o->w || ih != o->h) {
                    s->data_error = bad ? "corrupt WebP data (bad frame header)"
                                        : "corrupt WebP data (the image size is not the "
                                          "canvas size)";
                    break;
                }
                if (!memcmp(t, "VP8 ", 4) && vp8_partition_short(d, len)) {
                    s->data_error = "corrupt WebP data (the VP8 first partition runs past its "
                                    "chunk)";
                    break;
                }
                images = 1;
            }
        }
        pos += 8 + (size_t)padded;
    }
    if (!s->data_error && riff_end > n)
        s->data_error = "truncated WebP data";
    if (!s->data_error && !o->animated && !images)
        s->data_error = "corrupt WebP data (no image chunk)";
    if (!s->data_error && o->animated && !o->frames)
        s->data_error = "corrupt WebP data (an animation without frames)";
    if (!o->animated)
        o->frames = 1;
    return NULL;
}

static const char *scan(const unsigned char *b, size_t n, imgpu__scan *s)
{
    webp_walk o;
    const char *err = walk(b, n, &o, s);
    if (err)
        return err;
    s->w = o.w;
    s->h = o.h;
    s->channels = o.alpha ? 4 : 3;
    s->deep = 0;
    /* libwebp's own memory beside the output, as decode8 bounds it: the VP8L pixels at 4
     * bytes and an alpha plane, 5 bytes a pixel of the first frame (at most the canvas) */
    s->work = 5 * (uint64_t)o.w * o.h + ((uint64_t)1 << 20);
    return NULL;
}

/* ---- decode ---------------------------------------------------------------------------- */

/* libwebp's statuses as reasons, for "corrupt WebP data (REASON)". */
static const char *status_reason(VP8StatusCode st)
{
    switch (st) {
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    case VP8_STATUS_INVALID_PARAM: return "libwebp refused the decoding parameters";
    case VP8_STATUS_BITSTREAM_ERROR: return "invalid or truncated bitstream";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
    case VP8_STATUS_SUSPENDED:
    case VP8_STATUS_NOT_ENOUGH_DATA: return "the image data ends early";
    case VP8_STATUS_USER_ABORT: return "decoding was stopped";
    default: return "unknown libwebp error";
    }
}

/* Compressed bytes handed to the incremental decoder at a time: between two slices the
 * decode-time limit is polled. A slice of lossy data decodes in a few milliseconds; lossless
 * data can say more per byte, but never more than the image's area allows. */
#define WEBP_SLICE ((size_t)64 << 10)

static unsigned char *decode8(const unsigned char *b, size_t n, const imgpu__scan *s,
                              size_t budget, int *w, int *h, int *c, const char **why)
{
    WebPData data = { b, n };
    WebPDemuxState state;
    WebPDemuxer *dmx = WebPDemuxPartial(&data, &state);
    unsigned char *px = NULL;
    WebPIterator it;
    int have_it = 0;
    WebPIDecoder *idec = NULL;
    WebPDecoderConfig cfg;
    const char *name = s->name ? s->name : "(memory)";

    if (!dmx || state != WEBP_DEMUX_DONE) {
        *why = state == WEBP_DEMUX_PARSE_ERROR || !dmx ? "bad chunk structure"
                                                        : "the file ends early";
        goto fail;
    }
    const uint32_t cw = WebPDemuxGetI(dmx, WEBP_FF_CANVAS_WIDTH);
    const uint32_t ch = WebPDemuxGetI(dmx, WEBP_FF_CANVAS_HEIGHT);
    const uint32_t frames = WebPDemuxGetI(dmx, WEBP_FF_FRAME_COUNT);
    if (cw != s->w || ch != s->h || (s->channels != 3 && s->channels != 4)) {
        *why = "the demuxer and the header disagree on the image";
        goto fail;
    }
    if (!WebPDemuxGetFrame(dmx, 1, &it)) {
        *why = "no frame";
        goto fail;
    }
    have_it = 1;
    if (it.x_offset < 0 || it.y_offset < 0 || it.width < 1 || it.height < 1 ||
        (uint64_t)it.x_offset + (uint64_t)it.width > cw ||
        (uint64_t)it.y_offset + (uint64_t)it.height > ch) {
        *why = "a frame lies outside the canvas";
        goto fail;
    }

    /* The output and what libwebp needs besides (at most the VP8L pixels at 4 bytes and an
     * alpha plane: 5 bytes a pixel of the frame), against the budget before any of it. */
    const int nc = s->channels;
    const uint64_t row = (uint64_t)cw * (uint64_t)nc, out_bytes = row * ch;
    const uint64_t lib_bytes = 5 * (uint64_t)it.width * (uint64_t)it.height + ((uint64_t)1 << 20);
    if (out_bytes + lib_bytes > budget || out_bytes > SIZE_MAX) {
        *why = "needs more memory than an image of its size can use (corrupt or malicious file)";
        goto fail;
    }
    const int covers = it.width == (int)cw && it.height == (int)ch;
    px = covers ? malloc((size_t)out_bytes) : calloc(1, (size_t)out_bytes);
    if (!px) {
        *why = "out of memory";
        goto fail;
    }
    if (!WebPInitDecoderConfig(&cfg)) {
        *why = "libwebp version mismatch";
        goto fail;
    }
    cfg.output.colorspace = nc == 4 ? MODE_RGBA : MODE_RGB;
    cfg.output.is_external_memory = 1;
    cfg.output.u.RGBA.rgba = px + (size_t)it.y_offset * (size_t)row + (size_t)it.x_offset * nc;
    cfg.output.u.RGBA.stride = (int)row;
    cfg.output.u.RGBA.size = (size_t)row * (size_t)(it.height - 1) + (size_t)it.width * nc;
    idec = WebPIDecode(NULL, 0, &cfg);
    if (!idec) {
        *why = "out of memory";
        goto fail;
    }
    const unsigned char *f = it.fragment.bytes;
    const size_t flen = it.fragment.size;
    VP8StatusCode st = VP8_STATUS_NOT_ENOUGH_DATA;
    for (size_t off = 0; off < flen;) {
        if (imgpu__decode_late()) {
            *why = "decoding took too long";
            goto fail;
        }
        off = flen - off > WEBP_SLICE ? off + WEBP_SLICE : flen;
        st = WebPIUpdate(idec, f, off);
        if (st != VP8_STATUS_SUSPENDED)
            break;
    }
    if (st != VP8_STATUS_OK) {
        *why = status_reason(st);
        goto fail;
    }
    if (imgpu__decode_late()) {
        *why = "decoding took too long";
        goto fail;
    }
    if (frames > 1)
        imgpu_notice("'%s': animated WebP: only the first of its %u frames is used", name,
                     (unsigned)frames);
    WebPIDelete(idec);
    WebPFreeDecBuffer(&cfg.output);
    WebPDemuxReleaseIterator(&it);
    WebPDemuxDelete(dmx);
    *w = (int)cw;
    *h = (int)ch;
    *c = nc;
    return px;

fail:
    if (idec) {
        WebPIDelete(idec);
        WebPFreeDecBuffer(&cfg.output);
    }
    if (have_it)
        WebPDemuxReleaseIterator(&it);
    WebPDemuxDelete(dmx);
    free(px);
    return NULL;
}

/* ---- metadata -------------------------------------------------------------------------- */

/* The first ICCP, EXIF and XMP chunks of an extended file (the walk's bounds: a chunk cut
 * short is not taken). EXIF is stored bare (from the TIFF header) by the specification, but
 * some writers put JPEG's "Exif\0\0" before it: skipped. */
static int read_meta(const unsigned char *b, size_t n, imgpu_meta *m)
{
    imgpu__scan scratch = { 0 };
    webp_walk o;
    if (n < 12 || walk(b, n, &o, &scratch))
        return 0;
    if (o.icc && o.icc_len >= 128 && imgpu_meta_set(&m->icc, &m->icc_len, o.icc, o.icc_len) < 0)
        return -1;
    if (o.exif) {
        const size_t skip = imgpu_exif_skip_header(o.exif, o.exif_len);
        const unsigned char *t = o.exif + skip;
        /* only a TIFF structure is EXIF (and what is written back reads back the same) */
        if (o.exif_len - skip >= 8 && (!memcmp(t, "II*\0", 4) || !memcmp(t, "MM\0*", 4)) &&
            imgpu_meta_set(&m->exif, &m->exif_len, o.exif + skip, o.exif_len - skip) < 0)
            return -1;
        imgpu_exif_info ex;
        if (m->exif && imgpu_exif_parse(m->exif, m->exif_len, &ex) == 0)
            m->orientation = ex.orientation;
        else
            imgpu_error_clear();   /* damaged EXIF is no error of the load */
    }
    if (o.xmp && o.xmp_len && imgpu_meta_set(&m->xmp, &m->xmp_len, o.xmp, o.xmp_len) < 0)
        return -1;
    return 0;
}

/* ---- encode ---------------------------------------------------------------------------- */

/* libwebp's writer into a growing malloc() buffer (not WebPMemoryWriter: its buffer must be
 * freed with WebPFree, ours is handed to io.c, which calls free()). */
typedef struct sink {
    unsigned char *p;
    size_t len, cap;
    int oom;
} sink;

static int sink_write(const uint8_t *d, size_t n, const WebPPicture *pic)
{
    sink *k = pic->custom_ptr;
    if (n > k->cap - k->len) {
        size_t cap = k->cap ? k->cap : 4096;
        while (n > cap - k->len) {
            if (cap > SIZE_MAX / 2) {
                k->oom = 1;
                return 0;
            }
            cap *= 2;
        }
        unsigned char *p = realloc(k->p, cap);
        if (!p) {
            k->oom = 1;
            return 0;
        }
        k->p = p;
        k->cap = cap;
    }
    memcpy(k->p + k->len, d, n);
    k->len += n;
    return 1;
}

static const char *enc_reason(WebPEncodingError e)
{
    switch (e) {
    case VP8_ENC_ERROR_OUT_OF_MEMORY:
    case VP8_ENC_ERROR_BITSTREAM_OUT_OF_MEMORY: return "out of memory";
    case VP8_ENC_ERROR_BAD_DIMENSION: return "WebP cannot store an image of this size";
    case VP8_ENC_ERROR_FILE_TOO_BIG: return "the WebP file would be larger than 4 GiB";
    default: return "WebP encoding failed";
    }
}

/* pixels of im as WebP wants them: RGB or RGBA (gray expanded); *tmp the buffer to free */
static const unsigned char *rgb_rows(const imgpu_image *im, unsigned char **tmp, size_t *stride)
{
    const int w = im->width, h = im->height, c = im->channels;
    *tmp = NULL;
    if (c == 3 || c == 4) {
        *stride = im->stride;
        return im->data;
    }
    const int oc = c == 1 ? 3 : 4;
    unsigned char *o = malloc((size_t)w * (size_t)h * (size_t)oc);
    if (!o)
        return NULL;
    for (int y = 0; y < h; y++) {
        const unsigned char *r = imgpu_image_row(im, y);
        unsigned char *d = o + (size_t)y * (size_t)w * oc;
        for (int x = 0; x < w; x++, d += oc) {
            d[0] = d[1] = d[2] = r[(size_t)x * c];
            if (oc == 4)
                d[3] = r[(size_t)x * c + 1];
        }
    }
    *tmp = o;
    *stride = (size_t)w * oc;
    return o;
}

/* The bitstream in k with meta's ICCP, EXIF and XMP added through the muxer (which writes
 * the VP8X chunk and its flags). */
static int add_meta(const imgpu_meta *meta, const char *name, sink *k, char *why, size_t n)
{
    if (!meta || (!meta->icc && !meta->exif && !meta->xmp))
        return 0;
    /* a RIFF file is under 4 GiB, whatever its chunks: a profile that cannot fit is left out
     * (an input holds less: it is read whole, and files are under 2 GiB) */
    const uint64_t rest = (uint64_t)k->len + meta->exif_len + meta->xmp_len + 64;
    const int icc = meta->icc && meta->icc_len && rest < UINT32_MAX &&
                    meta->icc_len <= UINT32_MAX - rest;
    if (meta->icc && meta->icc_len && !icc)
        imgpu_notice("'%s': the ICC profile (%zu bytes) does not fit a WebP file (4 GiB at "
                     "most): left out", name, meta->icc_len);
    WebPMux *mux = WebPMuxNew();
    WebPData img = { k->p, k->len }, out = { NULL, 0 };
    WebPMuxError e = mux ? WebPMuxSetImage(mux, &img, 0) : WEBP_MUX_MEMORY_ERROR;
    if (e == WEBP_MUX_OK && icc) {
        WebPData d = { meta->icc, meta->icc_len };
        e = WebPMuxSetChunk(mux, "ICCP", &d, 0);
    }
    if (e == WEBP_MUX_OK && meta->exif) {
        WebPData d = { meta->exif, meta->exif_len };
        e = WebPMuxSetChunk(mux, "EXIF", &d, 0);
    }
    if (e == WEBP_MUX_OK && meta->xmp) {
        WebPData d = { meta->xmp, meta->xmp_len };
        e = WebPMuxSetChunk(mux, "XMP ", &d, 0);
    }
    if (e == WEBP_MUX_OK)
        e = WebPMuxAssemble(mux, &out);
    WebPMuxDelete(mux);
    unsigned char *p = e == WEBP_MUX_OK ? malloc(out.size ? out.size : 1) : NULL;
    if (!p) {
        WebPDataClear(&out);
        snprintf(why, n, "%s", e == WEBP_MUX_OK || e == WEBP_MUX_MEMORY_ERROR
                                   ? "out of memory"
                                   : "WebP metadata could not be added (WebPMux error)");
        return -1;
    }
    memcpy(p, out.bytes, out.size);
    free(k->p);
    k->p = p;
    k->len = k->cap = out.size;
    WebPDataClear(&out);
    return 0;
}

static int encode8(const imgpu_image *im, const imgpu__encode_args *a, unsigned char **out,
                   size_t *out_len, char *why, size_t n)
{
    WebPConfig cfg;
    WebPPicture pic;
    sink k = { NULL, 0, 0, 0 };
    unsigned char *tmp = NULL;
    if (!WebPConfigInit(&cfg) || !WebPPictureInit(&pic)) {
        snprintf(why, n, "libwebp version mismatch");
        return -1;
    }
    /* PIL's save: WebPConfigInit's defaults, quality, method 4; exact only when lossless
     * (imgpu promises identical pixels there) */
    cfg.quality = (float)a->quality;
    cfg.method = 4;
    cfg.lossless = a->lossless ? 1 : 0;
    cfg.exact = a->lossless ? 1 : 0;
    if (!WebPValidateConfig(&cfg)) {
        snprintf(why, n, "invalid WebP encoder settings");
        return -1;
    }
    size_t stride;
    const unsigned char *px = rgb_rows(im, &tmp, &stride);
    if (!px) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    const int alpha = im->channels == 2 || im->channels == 4;
    pic.width = im->width;
    pic.height = im->height;
    pic.use_argb = 1;
    int ok = alpha ? WebPPictureImportRGBA(&pic, px, (int)stride)
                   : WebPPictureImportRGB(&pic, px, (int)stride);
    free(tmp);
    if (!ok) {
        snprintf(why, n, "%s", enc_reason(pic.error_code));
        WebPPictureFree(&pic);
        return -1;
    }
    pic.writer = sink_write;
    pic.custom_ptr = &k;
    ok = WebPEncode(&cfg, &pic);
    const WebPEncodingError e = pic.error_code;
    WebPPictureFree(&pic);
    if (!ok || k.oom) {
        snprintf(why, n, "%s", k.oom ? "out of memory" : enc_reason(e));
        free(k.p);
        return -1;
    }
    if (add_meta(a->meta, a->path ? a->path : "(memory)", &k, why, n) < 0) {
        free(k.p);
        return -1;
    }
    *out = k.p;
    *out_len = k.len;
    return 0;
}

static const char *const s_ext[] = { "webp", NULL };

static void library(char *buf, size_t n)
{
    const int v = WebPGetEncoderVersion();   /* 0xMMmmpp */
    snprintf(buf, n, "libwebp %d.%d.%d", (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff);
}

const imgpu__codec imgpu__codec_webp = {
    .format = IMGPU_FORMAT_WEBP,
    .name = "WebP",
    .extensions = s_ext,
    .sniff = sniff,
    .scan = scan,
    .info_from_scan = 1,
    .decode8 = decode8,
    .read_meta = read_meta,
    .stores_alpha = 1,
    .max_side = WEBP_MAX_SIDE,   /* the only limit of its own: any channel count is stored */
    .encode8 = encode8,
    .encode16 = NULL,   /* 8 bits: io.c converts with its notice */
    .library = library,
};

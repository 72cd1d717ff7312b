/* codec_png.c — the PNG entry of the codec table: the signature, the structure scan (every
 * chunk's length against the bytes really there, the CRC of every critical chunk, chunks
 * allowed once, unknown critical chunks refused), decoding through png_decode.c's fast path
 * with stb behind it (stb for 16-bit files), and encoding: 8-bit through stb_image_write or
 * png_parallel.c's strip encoder, 16-bit through imgpu's own encoder and chunk writer (stb
 * has no 16-bit writer).
 */
#include "codec.h"
#include "error.h"
#include "png_decode.h"
#include "png_parallel.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>
#include <zlib.h>

static int png_sniff(const unsigned char *b, size_t n)
{
    return n >= 8 && memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0;
}

/* Chunks the PNG specification allows at most once. A repeat is refused as libpng refuses
 * it: a decoder that sizes a buffer from the first PLTE must never meet a second one (two
 * PLTE chunks once overflowed a heap buffer here, tests/fuzz/regress/decode/). */
static const char s_png_once[][5] = {
    "IHDR", "PLTE", "tRNS", "cHRM", "gAMA", "iCCP", "sBIT", "sRGB", "cICP", "mDCV",
    "cLLI", "bKGD", "hIST", "pHYs", "tIME", "eXIf", "acTL",
};
#define IMGPU_PNG_ONCE (sizeof s_png_once / sizeof s_png_once[0])

/* The decoder's memory beyond the file and the image, at its peak (stb's PNG loader, the
 * larger of the two paths; png_decode.c's fast path needs less): the IDAT data gathered into
 * one buffer that grows by doubling, the inflated filtered rows; then, with that buffer
 * freed, the rows beside the image and, for a palette, the indices beside the colours they
 * expand to or, interlaced, one pass's image; and stb's copy of a file it rewrites
 * (png_for_stb). The 16-bit image and the 1-, 2- and 4-bit rows are counted as they are
 * (w, h < 2^32 and w * h within --max-pixels: no overflow). */
static uint64_t decode_work(uint64_t w, uint64_t h, int depth, int type, int interlaced,
                            int trns, uint64_t idat, size_t n)
{
    const int file_c = type == 2 ? 3 : type == 4 ? 2 : type == 6 ? 4 : 1;
    const int out_c = type == 3 ? (trns ? 4 : 3) : file_c + (trns && (type == 0 || type == 2));
    const double bits = depth >= 1 && depth <= 16 ? depth : 16, W = (double)w, H = (double)h;
    const double rows = ceil(W * file_c * bits / 8) * H + H + (interlaced ? 7 * H + 64 : 0);
    const double image = W * H * out_c * (bits == 16 ? 2 : 1);
    const double extra = type == 3 ? W * H : interlaced ? image : 0;
    const double gather = 2 * (double)idat + rows, unfilter = rows + image + extra;
    const double work = (gather > unfilter ? gather : unfilter) - image + (double)n + (1 << 20);
    /* in double: the scan runs before the pixel count is checked */
    return work >= 1.8e19 ? UINT64_MAX : work < 0 ? 0 : (uint64_t)work;
}

static const char *scan_png(const unsigned char *b, size_t n, imgpu__scan *s)
{
    size_t pos = 8;
    int have_ihdr = 0, depth = 8, type_ = 0, interlaced = 0, trns = 0;
    uint64_t idat = 0;
    unsigned char seen[IMGPU_PNG_ONCE] = { 0 };
    for (;;) {
        if (n - pos < 8) {
            s->data_error = "truncated PNG data";
            break;
        }
        uint32_t len = imgpu__be32(b + pos);
        const unsigned char *type = b + pos + 4;
        if (len > 0x7fffffffu) {
            s->data_error = "corrupt PNG data (bad chunk length)";
            break;
        }
        /* Checking every length against the bytes that are really there is what keeps stb
         * from reallocating its IDAT buffer to whatever a chunk header claims. */
        if (n - pos - 8 < (size_t)len + 4) {
            s->data_error = "truncated PNG data";
            break;
        }
        int critical = !(type[0] & 0x20);
        if (critical) {
            uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), type, len + 4);
            if (crc != imgpu__be32(b + pos + 8 + len)) {
                snprintf(s->buf, sizeof s->buf, "corrupt PNG data (CRC error in %.4s chunk)",
                         (const char *)type);
                s->data_error = s->buf;
                break;
            }
        }
        for (size_t i = 0; i < IMGPU_PNG_ONCE; i++) {
            if (memcmp(type, s_png_once[i], 4) != 0)
                continue;
            if (seen[i]++ && i > 0) {
                snprintf(s->buf, sizeof s->buf, "corrupt PNG data (more than one %.4s chunk)",
                         (const char *)type);
                s->data_error = s->buf;
            }
            break;
        }
        if (s->data_error)
            break;
        if (memcmp(type, "PLTE", 4) == 0 && (len == 0 || len > 768 || len % 3 != 0)) {
            s->data_error = "corrupt PNG data (bad PLTE length)";
            break;
        }
        if (memcmp(type, "IHDR", 4) == 0) {
            if (len != 13 || have_ihdr)
                return "corrupt PNG header";
            have_ihdr = 1;
            s->w = imgpu__be32(b + pos + 8);
            s->h = imgpu__be32(b + pos + 12);
            depth = b[pos + 16];
            type_ = b[pos + 17];
            interlaced = b[pos + 20] != 0;
        } else if (memcmp(type, "IDAT", 4) == 0) {
            idat += len;
        } else if (memcmp(type, "tRNS", 4) == 0) {
            trns = 1;
        } else if (memcmp(type, "IEND", 4) == 0) {
            break;
        } else if (critical && memcmp(type, "PLTE", 4) != 0 && memcmp(type, "IDAT", 4) != 0 &&
                   memcmp(type, "CgBI", 4) != 0) {
            snprintf(s->buf, sizeof s->buf, "unsupported PNG chunk '%.4s'", (const char *)type);
            s->data_error = s->buf;
            break;
        }
        pos += 12 + (size_t)len;
    }
    if (!have_ihdr)
        return s->data_error && strncmp(s->data_error, "trunc", 5) == 0 ? "truncated PNG header"
                                                                        : "corrupt PNG header";
    s->work = decode_work(s->w, s->h, depth, type_, interlaced, trns, idat, n);
    return NULL;
}

/* png_decode.c's fast path where it applies, stb for everything else. */
static unsigned char *png_decode8(const unsigned char *b, size_t n, const imgpu__scan *s,
                                  size_t budget, int *w, int *h, int *c, const char **why)
{
    (void)s;
    unsigned char *px = NULL;
    if (imgpu__png_decode_fast_enabled())
        px = imgpu__png_decode_fast(b, n, budget, w, h, c);
    if (!px)
        px = imgpu__stb_decode(b, n, budget, w, h, c, why);
    return px;
}

static int png_encode8(const imgpu_image *im, const imgpu__encode_args *a, unsigned char **out,
                       size_t *out_len, char *why, size_t n)
{
    if (a->png_threads > 0) {
        const char *reason;
        if (imgpu__png_encode_parallel(im->data, im->width, im->height, im->channels,
                                       im->stride, a->level, a->png_threads, out, out_len,
                                       &reason) < 0) {
            snprintf(why, n, "PNG encoding failed: %s", reason);
            return -1;
        }
        return 0;
    }
    return imgpu__encode_stb(&imgpu__codec_png, im, a, out, out_len, why, n);
}

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

/* Appends one PNG chunk (length, type, data, CRC over type + data) at *pos. */
static void png_chunk(unsigned char *out, size_t *pos, const char *type, const unsigned char *data,
                      uint32_t n)
{
    unsigned char *p = out + *pos;
    put_be32(p, n);
    memcpy(p + 4, type, 4);
    if (n)
        memcpy(p + 8, data, n);
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc32(crc, p + 4, 4);
    if (n)
        crc = crc32(crc, data, n);
    put_be32(p + 8 + n, (uint32_t)crc);
    *pos += 12 + (size_t)n;
}

/* 16-bit PNG: stb_image_write has no 16-bit path. Rows are filtered with Sub (type 1:
 * each byte minus the byte one pixel to the left, mod 256), samples big-endian as PNG
 * requires; one zlib stream split into IDAT chunks of at most 1 GiB. */
static int encode_png16(const imgpu_image *im, int level, unsigned char **out, size_t *out_len)
{
    static const unsigned char color_type[5] = {0, 0, 4, 2, 6};
    const int w = im->width, h = im->height, c = im->channels, bpp = 2 * c;
    const size_t rowb = (size_t)w * (size_t)bpp, raw_len = (rowb + 1) * (size_t)h;
    unsigned char *raw = NULL, *z = NULL, *o = NULL;
    if (raw_len > (size_t)UINT32_MAX) /* zlib's uLong is 64-bit here, but stay conservative */
        return -2;
    raw = malloc(raw_len);
    if (!raw)
        goto oom;
    for (int y = 0; y < h; y++) {
        const uint16_t *s = (const uint16_t *)(const void *)imgpu_image_row(im, y);
        unsigned char *d = raw + (size_t)y * (rowb + 1);
        d[0] = 1; /* Sub */
        unsigned char *px = d + 1;
        for (size_t i = 0; i < (size_t)w * (size_t)c; i++) {
            px[2 * i] = (unsigned char)(s[i] >> 8);
            px[2 * i + 1] = (unsigned char)s[i];
        }
        for (size_t i = rowb; i-- > (size_t)bpp;) /* right to left: the left byte is still raw */
            px[i] = (unsigned char)(px[i] - px[i - (size_t)bpp]);
    }
    uLongf zn = compressBound((uLong)raw_len);
    z = malloc(zn);
    if (!z)
        goto oom;
    if (imgpu__png_compress(z, &zn, raw, (uLong)raw_len, level) != Z_OK)
        goto oom;
    free(raw);
    raw = NULL;
    const size_t max_chunk = (size_t)1 << 30, nchunks = zn / max_chunk + 1;
    const size_t total = 8 + 25 + (size_t)zn + 12 * nchunks + 12;
    o = malloc(total);
    if (!o)
        goto oom;
    size_t pos = 8;
    memcpy(o, "\x89PNG\r\n\x1a\n", 8);
    unsigned char ihdr[13];
    put_be32(ihdr, (uint32_t)w);
    put_be32(ihdr + 4, (uint32_t)h);
    ihdr[8] = 16;
    ihdr[9] = color_type[c];
    ihdr[10] = ihdr[11] = ihdr[12] = 0; /* deflate, adaptive filtering, no interlace */
    png_chunk(o, &pos, "IHDR", ihdr, 13);
    for (size_t off = 0; off < (size_t)zn || off == 0; off += max_chunk) {
        const size_t n = (size_t)zn - off < max_chunk ? (size_t)zn - off : max_chunk;
        png_chunk(o, &pos, "IDAT", z + off, (uint32_t)n);
        if (n < max_chunk)
            break;
    }
    png_chunk(o, &pos, "IEND", NULL, 0);
    free(z);
    *out = o;
    *out_len = pos;
    return 0;
oom:
    free(raw);
    free(z);
    free(o);
    return -1;
}

static const char s_png16_too_large[] =
    "image too large for imgpu's 16-bit PNG encoder (4 GiB of rows)";

static int png_encode16(const imgpu_image *im, const imgpu__encode_args *a, unsigned char **out,
                        size_t *out_len, char *why, size_t n)
{
    int r = encode_png16(im, a->level, out, out_len);
    if (r < 0)
        snprintf(why, n, "%s", r == -2 ? s_png16_too_large : "out of memory");
    return r < 0 ? -1 : 0;
}

/* encode_png16: the filtered rows (a filter byte + 2 bytes a sample) within 4 GiB */
static int png_check_size(int w, int h, int channels, int depth, char *why, size_t n)
{
    if (depth == 16 &&
        ((uint64_t)w * 2 * (uint64_t)channels + 1) * (uint64_t)h > (uint64_t)UINT32_MAX) {
        snprintf(why, n, "%s", s_png16_too_large);
        return -1;
    }
    return 0;
}

/* ---- metadata: iCCP, eXIf, iTXt XMP and the other text chunks -------------------------- */

/* The zlib stream z[0..n) inflated into a buffer that grows as the stream delivers (a small
 * profile costs what it is, a bomb at most `cap`): NULL when it is damaged or inflates to more
 * than cap bytes. */
static unsigned char *inflate_bounded(const unsigned char *z, size_t n, size_t cap, size_t *out_n)
{
    size_t room = cap < ((size_t)64 << 10) ? cap : (size_t)64 << 10;
    unsigned char *o = malloc(room);
    if (!o)
        return NULL;
    z_stream st;
    memset(&st, 0, sizeof st);
    if (inflateInit(&st) != Z_OK) {
        free(o);
        return NULL;
    }
    st.next_in = (unsigned char *)z;
    st.avail_in = (uInt)n;   /* a chunk's length: under 2^31 */
    int r;
    for (;;) {
        st.next_out = o + st.total_out;
        st.avail_out = (uInt)(room - st.total_out);
        r = inflate(&st, Z_FINISH);
        if (r == Z_STREAM_END || (r != Z_BUF_ERROR && r != Z_OK) || st.avail_out || room == cap)
            break;   /* done, damaged, out of input, or at the cap with more to come */
        const size_t next = room > cap / 2 ? cap : 2 * room;
        unsigned char *g = realloc(o, next);
        if (!g)
            break;
        o = g;
        room = next;
    }
    *out_n = st.total_out;
    inflateEnd(&st);
    if (r != Z_STREAM_END) {
        free(o);
        return NULL;
    }
    return o;
}

/* The largest ICC profile read from (and so written into) a PNG's iCCP chunk. The chunk could
 * hold more (2^31 - 1 compressed bytes), but its zlib stream can claim 1000 times its size: a
 * 64 KiB chunk must not cost gigabytes. Real profiles are at most a few MiB; JPEG carries
 * 255 x 65519 bytes at most, TIFF and WebP what the file holds. */
#define PNG_MAX_ICC ((size_t)64 << 20)
static const char s_xmp_key[] = "XML:com.adobe.xmp";

static int png_read_meta(const unsigned char *b, size_t n, imgpu_meta *m)
{
    size_t pos = 8;
    while (pos + 12 <= n) {
        const uint32_t len = imgpu__be32(b + pos);
        const unsigned char *type = b + pos + 4, *d = b + pos + 8;
        if (len > n - pos - 12)
            break;
        if (!memcmp(type, "IEND", 4))
            break;
        if (!memcmp(type, "iCCP", 4) && !m->icc) {
            /* name (1..79 bytes), NUL, method 0, zlib stream */
            const unsigned char *z = memchr(d, 0, len < 81 ? len : 81);
            if (z && z > d && (size_t)(z - d) + 2 < len && z[1] == 0) {
                size_t got;
                unsigned char *icc = inflate_bounded(z + 2, len - (size_t)(z - d) - 2, PNG_MAX_ICC, &got);
                if (icc && got >= 128) {
                    m->icc = icc;
                    m->icc_len = got;
                } else {
                    free(icc);
                }
            }
        } else if (!memcmp(type, "eXIf", 4) && !m->exif && len >= 8) {
            if (imgpu_meta_set(&m->exif, &m->exif_len, d, len) < 0)
                return -1;
        } else if (!memcmp(type, "iTXt", 4) && len > sizeof s_xmp_key &&
                   !memcmp(d, s_xmp_key, sizeof s_xmp_key) && !m->xmp) {
            /* keyword NUL, compression flag, method, language NUL, translated keyword NUL, text */
            const unsigned char *p = d + sizeof s_xmp_key, *end = d + len;
            if (end - p >= 2 && p[0] == 0) {
                p += 2;
                const unsigned char *l = memchr(p, 0, (size_t)(end - p));
                const unsigned char *t = l ? memchr(l + 1, 0, (size_t)(end - l - 1)) : NULL;
                if (t && imgpu_meta_set(&m->xmp, &m->xmp_len, t + 1, (size_t)(end - t - 1)) < 0)
                    return -1;
            }
        } else if (!memcmp(type, "tEXt", 4) || !memcmp(type, "zTXt", 4) ||
                   !memcmp(type, "iTXt", 4)) {
            if (m->n_text < 256 && imgpu_meta_add_text(m, (const char *)type, d, len) < 0)
                return -1;
        }
        pos += 12 + (size_t)len;
    }
    return 0;
}

/* The metadata chunks of meta, ready to go after IHDR: a malloc()'ed run of whole chunks
 * (*len 0 and NULL when there is nothing to write); -1 out of memory. */
static int png_meta_chunks(const imgpu_meta *meta, const char *name, unsigned char **out,
                           size_t *len)
{
    *out = NULL;
    *len = 0;
    if (!meta)
        return 0;
    unsigned char *zicc = NULL;
    uLongf zn = 0;
    if (meta->icc && meta->icc_len > PNG_MAX_ICC)
        imgpu_notice("'%s': the ICC profile (%zu bytes) does not fit a PNG iCCP chunk "
                     "(imgpu reads %zu bytes at most): left out", name, meta->icc_len,
                     PNG_MAX_ICC);
    else if (meta->icc && meta->icc_len) {
        zn = compressBound((uLong)meta->icc_len);
        if (!(zicc = malloc(zn + 6)))
            return -1;
        memcpy(zicc, "ICC\0\0", 5);   /* profile name "ICC", NUL, method 0 */
        if (compress2(zicc + 5, &zn, meta->icc, (uLong)meta->icc_len, 6) != Z_OK) {
            free(zicc);
            return -1;
        }
        zn += 5;
    }
    size_t xmp_head = sizeof s_xmp_key + 4;  /* key NUL, flag, method, "" NUL, "" NUL */
    size_t total = (zicc ? 12 + zn : 0) + (meta->exif ? 12 + meta->exif_len : 0) +
                   (meta->xmp ? 12 + xmp_head + meta->xmp_len : 0);
    for (int i = 0; i < meta->n_text; i++)
        total += 12 + meta->text[i].len;
    if (!total) {
        free(zicc);
        return 0;
    }
    unsigned char *o = malloc(total), *x = NULL;
    if (!o || (meta->xmp && !(x = malloc(xmp_head + meta->xmp_len)))) {
        free(o);
        free(zicc);
        return -1;
    }
    size_t pos = 0;
    if (zicc)
        png_chunk(o, &pos, "iCCP", zicc, (uint32_t)zn);
    if (meta->exif)
        png_chunk(o, &pos, "eXIf", meta->exif, (uint32_t)meta->exif_len);
    if (meta->xmp) {
        memcpy(x, s_xmp_key, sizeof s_xmp_key);
        memset(x + sizeof s_xmp_key, 0, 4);
        memcpy(x + xmp_head, meta->xmp, meta->xmp_len);
        png_chunk(o, &pos, "iTXt", x, (uint32_t)(xmp_head + meta->xmp_len));
    }
    for (int i = 0; i < meta->n_text; i++)
        png_chunk(o, &pos, meta->text[i].type, meta->text[i].data, (uint32_t)meta->text[i].len);
    free(x);
    free(zicc);
    *out = o;
    *len = pos;
    return 0;
}

/* The encoded PNG in *png with the metadata chunks inserted right after IHDR (so iCCP comes
 * before PLTE and IDAT, as the spec requires). */
static int png_add_meta(const imgpu_meta *meta, const char *name, unsigned char **png,
                        size_t *png_len, char *why, size_t n)
{
    unsigned char *chunks;
    size_t clen;
    if (png_meta_chunks(meta, name, &chunks, &clen) < 0) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    if (!clen)
        return 0;
    const size_t head = 8 + 25;   /* signature + IHDR chunk */
    unsigned char *o = malloc(*png_len + clen);
    if (!o || *png_len < head) {
        free(o);
        free(chunks);
        snprintf(why, n, "out of memory");
        return -1;
    }
    memcpy(o, *png, head);
    memcpy(o + head, chunks, clen);
    memcpy(o + head + clen, *png + head, *png_len - head);
    free(chunks);
    free(*png);
    *png = o;
    *png_len += clen;
    return 0;
}

static int png_encode8_meta(const imgpu_image *im, const imgpu__encode_args *a, unsigned char **out,
                            size_t *out_len, char *why, size_t n)
{
    if (png_encode8(im, a, out, out_len, why, n) < 0)
        return -1;
    if (png_add_meta(a->meta, a->path ? a->path : "(memory)", out, out_len, why, n) < 0) {
        free(*out);
        return -1;
    }
    return 0;
}

static int png_encode16_meta(const imgpu_image *im, const imgpu__encode_args *a, unsigned char **out,
                             size_t *out_len, char *why, size_t n)
{
    if (png_encode16(im, a, out, out_len, why, n) < 0)
        return -1;
    if (png_add_meta(a->meta, a->path ? a->path : "(memory)", out, out_len, why, n) < 0) {
        free(*out);
        return -1;
    }
    return 0;
}

static const char *const s_png_ext[] = { "png", NULL };

static void library(char *buf, size_t n)
{
    snprintf(buf, n, "libdeflate %s + zlib %s (PNG)", LIBDEFLATE_VERSION_STRING, zlibVersion());
}

const imgpu__codec imgpu__codec_png = {
    .format = IMGPU_FORMAT_PNG,
    .name = "PNG",
    .extensions = s_png_ext,
    .sniff = png_sniff,
    .scan = scan_png,
    .decode8 = png_decode8,
    .load16 = NULL, /* stb */
    .stores_alpha = 1,
    .read_meta = png_read_meta,
    .check_size = png_check_size,
    .encode8 = png_encode8_meta,
    .encode16 = png_encode16_meta,
    .library = library,
};

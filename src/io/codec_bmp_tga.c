/* codec_bmp_tga.c — the BMP and TGA entries of the codec table, the two uncompressed-ish
 * formats that stb decodes and encodes whole. Each scan follows the layout as stb reads it
 * (stbi__bmp_parse_header, stbi__tga_load), not the specification, since what matters is
 * which bytes stb will touch: both prove the pixel data is all there (stb v2.27 decodes a
 * truncated BMP or TGA into uninitialized pixels), and BMP's checks every palette index.
 * TGA has no magic number; its sniff is stb's plausibility test.
 *
 * BMP's run-length encodings (RLE8, RLE4), which stb refuses, are imgpu's own (bmp_rle):
 * the scan walks the whole stream once and the decode a second time, writing palette
 * indices into an image of index 0 (what the stream skips, with a delta or an early end of
 * line or of bitmap, stays the palette's first colour, as PIL and ImageMagick leave it), then
 * RGB from the palette. Every code must stay inside the image: a run or an absolute run past
 * the end of its row, a delta past the right edge or the last row, pixels after the last row,
 * an index past the palette, and a stream that ends before its end-of-bitmap code with rows
 * still to draw are corrupt data.
 */
#include "codec.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- BMP ------------------------------------------------------------------------------ */

static int bmp_sniff(const unsigned char *b, size_t n)
{
    return n >= 2 && b[0] == 'B' && b[1] == 'M';
}

/* ---- BMP's run-length encodings (RLE8, RLE4) --------------------------------------------- */

/* What the header says of an RLE bitmap. */
typedef struct bmp_rle {
    uint32_t w, h;
    int top_down;        /* a negative height: the first line is the top row */
    int rle4;            /* 4-bit indices (RLE4), else 8-bit (RLE8) */
    uint32_t offset;     /* the stream's first byte */
    const unsigned char *palette;   /* BGRX entries */
    uint32_t colours;    /* entries in the palette */
} bmp_rle;

/* The header of an RLE8 (compression 1, 8 bits) or RLE4 (2, 4 bits) bitmap into *r: NULL,
 * or the header error. The palette's entries: biClrUsed (0: 2^bits), as many as lie between
 * the header and the pixel data, never more than 2^bits. */
static const char *bmp_rle_header(const unsigned char *b, size_t n, bmp_rle *r)
{
    const uint32_t hsz = imgpu__le32(b + 14), compress = imgpu__le32(b + 30);
    const uint32_t bpp = imgpu__le16(b + 28);
    const int32_t h = (int32_t)imgpu__le32(b + 22);
    memset(r, 0, sizeof *r);
    r->rle4 = compress == 2;
    if (bpp != (r->rle4 ? 4u : 8u))
        return r->rle4 ? "corrupt BMP header (RLE4 needs 4 bits per pixel)"
                       : "corrupt BMP header (RLE8 needs 8 bits per pixel)";
    r->w = imgpu__le32(b + 18);
    r->top_down = h < 0;
    r->h = h < 0 ? (uint32_t)0 - (uint32_t)h : (uint32_t)h;
    r->offset = imgpu__le32(b + 10);
    if (r->offset > n)
        return "truncated BMP data";
    const uint64_t pal_at = 14 + (uint64_t)hsz;
    if (r->offset < pal_at + 4)
        return "corrupt BMP header (no palette)";
    const uint64_t fit = (r->offset - pal_at) / 4, max = r->rle4 ? 16 : 256;
    uint64_t used = hsz >= 40 ? imgpu__le32(b + 46) : 0;
    if (used == 0 || used > max)
        used = max;
    r->colours = (uint32_t)(used < fit ? used : fit);
    r->palette = b + pal_at;
    return NULL;
}

/* Walks the stream of r: with idx NULL only to check it (NULL, or the data error in why),
 * else also writing each pixel's palette index into idx (w x h, rows top to bottom, zeroed by
 * the caller). Linear in the stream's length; what a delta skips is never visited. */
static const char *bmp_rle_walk(const unsigned char *b, size_t n, const bmp_rle *r,
                                unsigned char *idx)
{
    const uint32_t w = r->w, h = r->h, ncol = r->colours;
    size_t p = r->offset;
    uint64_t x = 0, line = 0;   /* line: counted from the first the stream draws */
#define ROW() (idx + (size_t)(r->top_down ? line : h - 1 - line) * w)
    for (;;) {
        if (n - p < 2)
            return line >= h ? NULL : "truncated BMP data (the RLE stream ends early)";
        const unsigned count = b[p], code = b[p + 1];
        p += 2;
        if (count) {   /* a run: `count` pixels of one index (RLE4: two alternating) */
            if (line >= h)
                return "corrupt BMP data (RLE pixels after the last row)";
            if (x + count > w)
                return "corrupt BMP data (an RLE run past the end of its row)";
            const unsigned i0 = r->rle4 ? code >> 4 : code, i1 = r->rle4 ? code & 15 : code;
            if (i0 >= ncol || (count > 1 && i1 >= ncol))
                return "corrupt BMP data (palette index out of range)";
            if (idx) {
                unsigned char *d = ROW() + x;
                for (unsigned k = 0; k < count; k++)
                    d[k] = (unsigned char)(k & 1 ? i1 : i0);
            }
            x += count;
        } else if (code == 0) {   /* end of line */
            x = 0;
            line++;
        } else if (code == 1) {   /* end of bitmap */
            return NULL;
        } else if (code == 2) {   /* delta: dx right, dy lines on (up, in a bottom-up file) */
            if (n - p < 2)
                return "truncated BMP data (the RLE stream ends early)";
            const unsigned dx = b[p], dy = b[p + 1];
            p += 2;
            /* to the end of a row is fine (only an end of line may follow), past it is not;
             * below the last row only to its start, as an end of line there would go */
            const uint64_t nx = x + dx, nl = line + dy;
            if (nx > w || nl > h || (nl == h && nx != 0))
                return "corrupt BMP data (an RLE delta moves outside the image)";
            x += dx;
            line += dy;
        } else {   /* absolute: `code` indices follow, padded to a 16-bit boundary */
            const size_t bytes = r->rle4 ? (code + 1u) / 2 : code;
            if (line >= h)
                return "corrupt BMP data (RLE pixels after the last row)";
            if (x + code > w)
                return "corrupt BMP data (an RLE run past the end of its row)";
            if (n - p < bytes + (bytes & 1))
                return "truncated BMP data (the RLE stream ends early)";
            unsigned char *d = idx ? ROW() + x : NULL;
            for (unsigned k = 0; k < code; k++) {
                const unsigned v = r->rle4 ? (b[p + k / 2] >> (k & 1 ? 0 : 4)) & 15 : b[p + k];
                if (v >= ncol)
                    return "corrupt BMP data (palette index out of range)";
                if (d)
                    d[k] = (unsigned char)v;
            }
            p += bytes + (bytes & 1);
            x += code;
        }
    }
#undef ROW
}

/* The scan of an RLE bitmap: the header, then the whole stream walked (so a damaged stream is
 * reported as data, after the size checks); decoded as 3-channel RGB by bmp_decode8. */
static const char *scan_bmp_rle(const unsigned char *b, size_t n, imgpu__scan *s)
{
    bmp_rle r;
    const char *err = bmp_rle_header(b, n, &r);
    if (err)
        return err;
    s->own_decode = 1;
    s->channels = 3;
    s->deep = 0;
    /* without an image to write, the walk costs the stream's length, whatever the size */
    s->data_error = bmp_rle_walk(b, n, &r, NULL);
    return NULL;
}

/* RLE bitmaps here, everything else by stb. */
static unsigned char *bmp_decode8(const unsigned char *b, size_t n, const imgpu__scan *s,
                                  size_t budget, int *w, int *h, int *c, const char **why)
{
    if (!s->own_decode)
        return imgpu__stb_decode(b, n, budget, w, h, c, why);
    bmp_rle r;
    if ((*why = bmp_rle_header(b, n, &r)) != NULL)
        return NULL;
    const uint64_t npx = (uint64_t)r.w * r.h;   /* within --max-pixels (io.c) */
    if (npx * 4 > budget || npx * 4 > SIZE_MAX) {
        *why = "out of memory (the image is larger than the decoder's budget)";
        return NULL;
    }
    unsigned char *idx = calloc(1, (size_t)npx), *rgb = malloc((size_t)npx * 3);
    if (!idx || !rgb) {
        free(idx);
        free(rgb);
        *why = "out of memory";
        return NULL;
    }
    if ((*why = bmp_rle_walk(b, n, &r, idx)) != NULL) {
        free(idx);
        free(rgb);
        return NULL;
    }
    for (uint64_t i = 0; i < npx; i++) {   /* index 0 exists: colours >= 1 (header) */
        const unsigned char *e = r.palette + 4 * (size_t)idx[i];
        rgb[3 * i] = e[2];
        rgb[3 * i + 1] = e[1];
        rgb[3 * i + 2] = e[0];
    }
    free(idx);
    *w = (int)r.w;
    *h = (int)r.h;
    *c = 3;
    return rgb;
}

/* The layout below is stb's (stbi__bmp_parse_header / stbi__bmp_load), not the spec's,
 * because what matters is which bytes stb will read. */
static const char *scan_bmp(const unsigned char *b, size_t n, imgpu__scan *s)
{
    s->work = (uint64_t)1 << 20;   /* stb decodes straight into its output: a palette, state */
    if (n < 18)
        return "truncated BMP header";
    uint32_t offset = imgpu__le32(b + 10), hsz = imgpu__le32(b + 14);
    if (hsz != 12 && hsz != 40 && hsz != 56 && hsz != 108 && hsz != 124)
        return "unsupported BMP header version";
    if (n < 14 + hsz)
        return "truncated BMP header";
    int64_t w, h;
    uint32_t bpp, compress = 0;
    if (hsz == 12) {
        w = imgpu__le16(b + 18);
        h = imgpu__le16(b + 20);
        bpp = imgpu__le16(b + 24);
    } else {
        w = (int32_t)imgpu__le32(b + 18);
        h = (int32_t)imgpu__le32(b + 22);
        bpp = imgpu__le16(b + 28);
        compress = imgpu__le32(b + 30);
    }
    if (h < 0)   /* top-down rows */
        h = -h;
    if (w <= 0 || h == 0)
        return "corrupt BMP header (bad size)";
    s->w = (uint64_t)w;
    s->h = (uint64_t)h;
    if (compress == 1 || compress == 2)
        return scan_bmp_rle(b, n, s);
    if (compress >= 4)
        return "BMP images with embedded JPEG/PNG data are not supported";
    if (bpp != 1 && bpp != 4 && bpp != 8 && bpp != 16 && bpp != 24 && bpp != 32)
        return "unsupported BMP bit depth";
    size_t header_end = 14 + hsz;
    if (hsz == 40 && compress == 3)
        header_end += 12;   /* the three bit masks follow a 40-byte header */
    if (offset < header_end)
        return "corrupt BMP header (pixel data overlaps the header)";

    uint64_t row = bpp == 1 ? ((uint64_t)w + 7) / 8 : bpp == 4 ? ((uint64_t)w + 1) / 2
                                                                 : (uint64_t)w * (bpp / 8);
    uint64_t padded = (row + 3) & ~(uint64_t)3;
    /* The last row's padding too: writers pad it, and a file missing it was cut short. */
    uint64_t need = offset + padded * (uint64_t)h;
    if (need > n) {
        s->data_error = "truncated BMP data";
        return NULL;
    }
    if (bpp < 16) {
        /* stb reads `psize` palette entries (its formula, including its off-by-12 for OS/2
         * headers) into an uninitialized table, then indexes it with every pixel: an index
         * past psize would read garbage, so check them all. */
        int64_t psize = hsz == 12 ? ((int64_t)offset - 14 - 24) / 3
                                  : ((int64_t)offset - 14 - (int64_t)hsz) >> 2;
        if (psize < 1 || psize > 256)
            return "corrupt BMP header (bad palette size)";
        for (uint64_t y = 0; y < (uint64_t)h && !s->data_error; y++) {
            const unsigned char *p = b + offset + y * padded;
            for (uint64_t x = 0; x < (uint64_t)w; x++) {
                int v = bpp == 8 ? p[x] : bpp == 4 ? (p[x / 2] >> (x % 2 ? 0 : 4)) & 15
                                                   : (p[x / 8] >> (7 - x % 8)) & 1;
                if (v >= psize) {
                    s->data_error = "corrupt BMP data (palette index out of range)";
                    break;
                }
            }
        }
    }
    return NULL;
}

static int bmp_encode8(const imgpu_image *im, const imgpu__encode_args *a, unsigned char **out,
                       size_t *out_len, char *why, size_t n)
{
    const int w = im->width, h = im->height;
    if (im->channels != 2)
        return imgpu__encode_stb(&imgpu__codec_bmp, im, a, out, out_len, why, n);
    /* stb's BMP writer drops the alpha of gray+alpha; as RGBA it survives. */
    unsigned char *tight = malloc((size_t)w * (size_t)h * 4);
    if (!tight) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    for (int y = 0; y < h; y++) {
        const unsigned char *s = imgpu_image_row(im, y);
        unsigned char *d = tight + (size_t)y * (size_t)w * 4;
        for (int x = 0; x < w; x++) {
            d[4 * x] = d[4 * x + 1] = d[4 * x + 2] = s[2 * x];
            d[4 * x + 3] = s[2 * x + 1];
        }
    }
    int rc = imgpu__encode_stb_pixels(&imgpu__codec_bmp, tight, w, h, 4, (size_t)w * 2, a, out,
                                      out_len, why, n);
    free(tight);
    return rc;
}

static const char *const s_bmp_ext[] = { "bmp", NULL };

const imgpu__codec imgpu__codec_bmp = {
    .format = IMGPU_FORMAT_BMP,
    .name = "BMP",
    .extensions = s_bmp_ext,
    .sniff = bmp_sniff,
    .scan = scan_bmp,
    .decode8 = bmp_decode8,   /* RLE: imgpu's own; the rest: stb */
    .stores_alpha = 1,
    .encode8 = bmp_encode8,
    .encode16 = NULL, /* 8 bits: io.c converts */
};

/* ---- TGA ------------------------------------------------------------------------------ */

/* TGA has no magic number; this is stb's own plausibility test (stbi__tga_test), so a file
 * we call TGA is one stb will also decode as TGA. */
static int tga_plausible(const unsigned char *b, size_t n)
{
    if (n < 18)
        return 0;
    int cmap = b[1], type = b[2], bpp = b[16];
    if (cmap > 1)
        return 0;
    if (cmap == 1) {
        if (type != 1 && type != 9)
            return 0;
        int pbits = b[7];
        if (pbits != 8 && pbits != 15 && pbits != 16 && pbits != 24 && pbits != 32)
            return 0;
        if (bpp != 8 && bpp != 16)
            return 0;
    } else if (type != 2 && type != 3 && type != 10 && type != 11) {
        return 0;
    }
    if (imgpu__le16(b + 12) < 1 || imgpu__le16(b + 14) < 1)
        return 0;
    return bpp == 8 || bpp == 15 || bpp == 16 || bpp == 24 || bpp == 32;
}

/* Offsets as stb's stbi__tga_load reads them (it skips `palette start` bytes, for one). */
static const char *scan_tga(const unsigned char *b, size_t n, imgpu__scan *s)
{
    s->work = (uint64_t)1 << 20;   /* as BMP: the output, a palette of at most 256 KiB, state */
    int idlen = b[0], indexed = b[1], type = b[2];
    uint32_t pal_start = imgpu__le16(b + 3), pal_len = imgpu__le16(b + 5);
    int pal_bits = b[7], bpp = b[16];
    s->w = imgpu__le16(b + 12);
    s->h = imgpu__le16(b + 14);
    int rle = type >= 8;
    uint64_t data = 18 + (uint64_t)idlen;
    if (indexed) {
        if (pal_len == 0)
            return "corrupt TGA header (empty palette)";
        int entry = pal_bits == 15 || pal_bits == 16 ? 2 : pal_bits / 8;
        data += pal_start + (uint64_t)pal_len * (uint64_t)entry;
    }
    if (data > n) {
        s->data_error = "truncated TGA data";
        return NULL;
    }
    uint64_t px = indexed ? (bpp == 8 ? 1 : 2) : (uint64_t)(bpp + 7) / 8;
    uint64_t count = s->w * s->h;
    if (!rle) {
        if (count * px > n - data)
            s->data_error = "truncated TGA data";
        return NULL;
    }
    /* RLE: walk the packets; stb would read zeros past the end. */
    uint64_t pos = data, seen = 0;
    while (seen < count) {
        if (pos >= n) {
            s->data_error = "truncated TGA data";
            return NULL;
        }
        int cmd = b[pos++];
        uint64_t run = 1 + (uint64_t)(cmd & 127);
        uint64_t bytes = cmd & 128 ? px : run * px;
        if (bytes > n - pos) {
            s->data_error = "truncated TGA data";
            return NULL;
        }
        pos += bytes;
        seen += run;
    }
    return NULL;
}

static const char *const s_tga_ext[] = { "tga", NULL };

const imgpu__codec imgpu__codec_tga = {
    .format = IMGPU_FORMAT_TGA,
    .name = "TGA",
    .extensions = s_tga_ext,
    .sniff = tga_plausible,
    .weak_magic = 1,
    .scan = scan_tga,
    .stores_alpha = 1,
    .max_side = 65535, /* 16-bit sides in the header */
    .encode8 = NULL,   /* stb */
    .encode16 = NULL,  /* 8 bits: io.c converts */
};

/* codec_bmp_tga.c — the BMP and TGA entries of the codec table, the two uncompressed-ish
 * formats that stb decodes and encodes whole. Each scan follows the layout as stb reads it
 * (stbi__bmp_parse_header, stbi__tga_load), not the specification, since what matters is
 * which bytes stb will touch: both prove the pixel data is all there (stb v2.27 decodes a
 * truncated BMP or TGA into uninitialized pixels), and BMP's checks every palette index.
 * TGA has no magic number; its sniff is stb's plausibility test.
 */
#include "codec.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- BMP ------------------------------------------------------------------------------ */

static int bmp_sniff(const unsigned char *b, size_t n)
{
    return n >= 2 && b[0] == 'B' && b[1] == 'M';
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
        return "RLE-compressed BMP images are not supported";
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

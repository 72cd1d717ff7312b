/* codec_pnm.c — the PNM entry of the codec table, imgpu's own reader and writer (Netpbm's
 * formats, no library): bitmaps (P1 ASCII, P4 packed bits; 1 is black), graymaps (P2 ASCII, P5
 * binary) and pixmaps (P3 ASCII, P6 binary) with any maxval up to 65535. A maxval above 255
 * loads as a 16-bit image; samples are scaled to the full range of 8 or 16 bits (maxval 15
 * and 1023 files do not come out nearly black). Binary samples above maxval clamp to it; an
 * ASCII sample above it is corrupt data. Encoding: binary, maxval 255 or 65535 (big-endian
 * samples); the output's extension picks the kind: .pgm is always a graymap (color becomes
 * OpenCV's cvtColor luma, with a notice), .ppm always a pixmap (gray is repeated in R, G and
 * B), .pnm follows the image. No alpha (no P7/PAM).
 */
#include "codec.h"
#include "error.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int pnm_space(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

static int pnm_sniff(const unsigned char *b, size_t n)
{
    return n >= 3 && b[0] == 'P' && b[1] >= '1' && b[1] <= '6' && (pnm_space(b[2]) || b[2] == '#');
}

/* Whitespace and '#' comments (to the end of the line) from pos on. */
static size_t skip_space(const unsigned char *b, size_t n, size_t pos)
{
    for (;;) {
        while (pos < n && pnm_space(b[pos]))
            pos++;
        if (pos < n && b[pos] == '#') {
            while (pos < n && b[pos] != '\n' && b[pos] != '\r')
                pos++;
            continue;
        }
        return pos;
    }
}

static int pnm_kind(const unsigned char *b) { return b[1] - '0'; }
static int pnm_ascii(int kind) { return kind <= 3; }
static int pnm_bitmap(int kind) { return kind == 1 || kind == 4; }
static int pnm_channels(int kind) { return kind == 3 || kind == 6 ? 3 : 1; }

/* The header: width, height and (not for bitmaps) maxval, each after whitespace or comments,
 * then one whitespace byte before binary samples. */
static const char *scan_pnm(const unsigned char *b, size_t n, imgpu__scan *s)
{
    const int kind = pnm_kind(b);
    const int fields = pnm_bitmap(kind) ? 2 : 3;
    size_t pos = 2;
    s->work = (uint64_t)64 << 10;   /* read_samples writes the output, nothing else */
    uint64_t v[3] = { 0, 0, 1 };
    for (int k = 0; k < fields; k++) {
        pos = skip_space(b, n, pos);
        if (pos >= n)
            return "truncated PNM header";
        if (b[pos] < '0' || b[pos] > '9')
            return "corrupt PNM header";
        v[k] = 0;
        while (pos < n && b[pos] >= '0' && b[pos] <= '9') {
            v[k] = v[k] * 10 + (uint64_t)(b[pos++] - '0');
            if (v[k] > INT_MAX)
                return "corrupt PNM header (number too large)";
        }
    }
    if (pos >= n)
        return "truncated PNM header";
    if (!pnm_space(b[pos]))
        return "corrupt PNM header";
    pos++;
    if (v[0] == 0 || v[1] == 0)
        return "corrupt PNM header (zero size)";
    if (v[2] == 0 || v[2] > 65535)
        return "corrupt PNM header (bad maximum value)";
    s->w = v[0];
    s->h = v[1];
    s->pnm_maxval = (int)v[2];
    s->pnm_data = pos;
    s->channels = pnm_channels(kind);
    s->deep = v[2] > 255;
    /* The least the samples can take: binary ones exactly; ASCII ones a digit each and (but
     * for bitmaps, whose digits may touch) a separator between them. Also what keeps a small
     * file from claiming a huge image. */
    const uint64_t count = v[0] * v[1] * (uint64_t)s->channels;
    uint64_t need;
    if (kind == 4)
        need = (v[0] + 7) / 8 * v[1];
    else if (kind == 1)
        need = count;
    else if (pnm_ascii(kind))
        need = 2 * count - 1;
    else
        need = count * (v[2] > 255 ? 2 : 1);
    if (need > n - pos)
        s->data_error = "truncated PNM data";
    return NULL;
}

/* Sample i of the file into the full range of `depth` bits; -1 with *why on bad data. */
static int scale(uint32_t v, uint32_t mv, int depth)
{
    const uint32_t top = depth == 16 ? 65535u : 255u;
    if (v >= mv)
        return (int)top;
    return mv == top ? (int)v : (int)((v * top + mv / 2) / mv);
}

/* Decodes every sample into px (w*h*c of 8 or 16 bits); NULL or the reason. */
static const char *read_samples(const unsigned char *b, size_t n, const imgpu__scan *s, int depth,
                                void *px)
{
    const int kind = pnm_kind(b);
    const size_t w = (size_t)s->w, h = (size_t)s->h, c = (size_t)s->channels;
    const uint32_t mv = (uint32_t)s->pnm_maxval;
    unsigned char *p8 = px;
    uint16_t *p16 = px;
    size_t pos = s->pnm_data;
    for (size_t y = 0; y < h; y++) {
        if ((y & 63) == 0 && imgpu__decode_late())
            return "took too long";
        if (kind == 4) {
            const unsigned char *row = b + pos + y * ((w + 7) / 8);
            for (size_t x = 0; x < w; x++)
                p8[y * w + x] = (row[x / 8] >> (7 - x % 8)) & 1 ? 0 : 255;
            continue;
        }
        if (!pnm_ascii(kind)) {
            const size_t bps = mv > 255 ? 2 : 1, row = w * c;
            const unsigned char *r = b + pos + y * row * bps;
            for (size_t i = 0; i < row; i++) {
                uint32_t v = bps == 2 ? imgpu__be16(r + 2 * i) : r[i];
                int o = scale(v, mv, depth);
                if (depth == 16)
                    p16[y * row + i] = (uint16_t)o;
                else
                    p8[y * row + i] = (unsigned char)o;
            }
            continue;
        }
        for (size_t i = 0; i < w * c; i++) {
            pos = skip_space(b, n, pos);
            if (pos >= n)
                return "truncated PNM data";
            uint32_t v;
            if (kind == 1) {   /* one digit, '0' or '1', separators optional */
                if (b[pos] != '0' && b[pos] != '1')
                    return "corrupt PNM data (a bitmap sample that is not 0 or 1)";
                p8[y * w + i] = b[pos++] == '1' ? 0 : 255;
                continue;
            }
            if (b[pos] < '0' || b[pos] > '9')
                return "corrupt PNM data (not a number)";
            v = 0;
            while (pos < n && b[pos] >= '0' && b[pos] <= '9') {
                v = v * 10 + (uint32_t)(b[pos++] - '0');
                if (v > mv)
                    return "corrupt PNM data (a sample above the maximum value)";
            }
            if (pos < n && !pnm_space(b[pos]) && b[pos] != '#')
                return "corrupt PNM data (not a number)";
            const int o = scale(v, mv, depth);
            if (depth == 16)
                p16[y * w * c + i] = (uint16_t)o;
            else
                p8[y * w * c + i] = (unsigned char)o;
        }
    }
    return NULL;
}

static void *alloc_samples(const imgpu__scan *s, int depth, size_t budget, const char **why)
{
    const uint64_t bytes = s->w * s->h * (uint64_t)s->channels * (depth / 8);
    if (bytes > budget || bytes > SIZE_MAX) {
        *why = "out of memory";
        return NULL;
    }
    void *px = malloc((size_t)bytes);
    if (!px)
        *why = "out of memory";
    return px;
}

static unsigned char *pnm_decode8(const unsigned char *b, size_t n, const imgpu__scan *s,
                                  size_t budget, int *w, int *h, int *c, const char **why)
{
    unsigned char *px = alloc_samples(s, 8, budget, why);
    if (!px)
        return NULL;
    if ((*why = read_samples(b, n, s, 8, px)) != NULL) {
        free(px);
        return NULL;
    }
    *w = (int)s->w;
    *h = (int)s->h;
    *c = s->channels;
    return px;
}

static imgpu_image *pnm_load16(const unsigned char *b, size_t n, const char *name,
                               const imgpu__scan *s, size_t budget)
{
    const char *why;
    void *px = alloc_samples(s, 16, budget, &why);
    if (px && (why = read_samples(b, n, s, 16, px)) != NULL) {
        free(px);
        px = NULL;
    }
    if (!px) {
        if (!strncmp(why, "corrupt", 7) || !strncmp(why, "truncated", 9))
            imgpu_error("cannot read '%s': %s", name, why);
        else
            imgpu_error("cannot read '%s': %s (PNM)", name, why);
        return NULL;
    }
    return imgpu__adopt_pixels(name, px, (int)s->w, (int)s->h, s->channels, 16);
}

/* ".pgm" -> 1 channel, ".ppm" -> 3, anything else: the image's own. */
static int out_channels(const char *dot, int c)
{
    if (dot && !strcasecmp(dot, ".pgm"))
        return 1;
    if (dot && !strcasecmp(dot, ".ppm"))
        return 3;
    return c == 1 ? 1 : 3;
}

/* P5 (gray) or P6 (RGB) with maxval 255 or 65535: the header, then the samples. Gray from RGB
 * is OpenCV's cvtColor RGB2GRAY: (4899 R + 9617 G + 1868 B + 2^13) >> 14 at 8 bits, and
 * (19596 R + 38470 G + 7470 B + 2^15) >> 16 at 16 bits (its 16-bit coefficients, measured). */
static int pnm_encode(const imgpu_image *im, const imgpu__encode_args *a, unsigned char **out,
                      size_t *out_len, char *why, size_t n)
{
    const int deep = im->depth == 16, bps = deep ? 2 : 1;
    const char *dot = a->path ? strrchr(a->path, '.') : NULL;
    if (dot && !strcasecmp(dot, ".pbm")) {
        snprintf(why, n, "writing 1-bit bitmaps (.pbm) is not supported (use .pgm)");
        return -1;
    }
    const int oc = out_channels(dot, im->channels);
    if (oc == 1 && im->channels != 1)
        imgpu_notice("'%s': a graymap (.pgm) holds gray only: storing the luma of the RGB image",
                     a->path ? a->path : "");
    char head[64];
    int hn = snprintf(head, sizeof head, "P%c\n%d %d\n%s\n", oc == 1 ? '5' : '6', im->width,
                      im->height, deep ? "65535" : "255");
    const size_t row = (size_t)im->width * (size_t)oc * (size_t)bps;
    if ((size_t)im->height > (SIZE_MAX - (size_t)hn) / row) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    const size_t total = (size_t)hn + row * (size_t)im->height;
    unsigned char *p = malloc(total);
    if (!p) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    memcpy(p, head, (size_t)hn);
    unsigned char *q = p + hn;
    for (int y = 0; y < im->height; y++) {
        const unsigned char *r = imgpu_image_row(im, y);
        for (int x = 0; x < im->width; x++) {
            uint32_t v[3];
            for (int k = 0; k < 3; k++)
                v[k] = imgpu_sample_get(r, im->depth, (size_t)x * im->channels +
                                                        (size_t)(im->channels >= 3 ? k : 0));
            if (oc == 1 && deep)
                v[0] = (uint32_t)(((uint64_t)v[0] * 19596u + (uint64_t)v[1] * 38470u +
                                   (uint64_t)v[2] * 7470u + (1u << 15)) >> 16);
            else if (oc == 1)
                v[0] = (v[0] * 4899u + v[1] * 9617u + v[2] * 1868u + (1u << 13)) >> 14;
            for (int k = 0; k < oc; k++, q += bps) {
                if (deep) {   /* big-endian, as PNM requires */
                    q[0] = (unsigned char)(v[k] >> 8);
                    q[1] = (unsigned char)v[k];
                } else {
                    q[0] = (unsigned char)v[k];
                }
            }
        }
    }
    *out = p;
    *out_len = total;
    return 0;
}

static const char *const s_pnm_ext[] = { "pnm", "pgm", "ppm", "pbm", NULL };

const imgpu__codec imgpu__codec_pnm = {
    .format = IMGPU_FORMAT_PNM,
    .name = "PNM",
    .extensions = s_pnm_ext,
    .sniff = pnm_sniff,
    .info_from_scan = 1,
    .scan = scan_pnm,
    .decode8 = pnm_decode8,
    .load16 = pnm_load16,
    .stores_alpha = 0, /* no P7/PAM */
    .encode8 = pnm_encode,
    .encode16 = pnm_encode,
};

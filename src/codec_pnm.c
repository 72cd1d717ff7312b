/* codec_pnm.c — the PNM entry of the codec table: binary graymaps and pixmaps (P5, P6) with
 * any maxval up to 65535. The header is scanned exactly as stb parses it; 8-bit samples are
 * stb's, scaled to the full range when maxval is below 255; 16-bit samples (maxval above
 * 255) are read here, since stb v2.27 returns them unswapped. Encoding is imgpu's own: P5
 * or P6 with maxval 255 or 65535 (big-endian samples); no alpha (no P7/PAM).
 */
#include "codec.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int pnm_sniff(const unsigned char *b, size_t n)
{
    return n >= 2 && b[0] == 'P' && (b[1] == '5' || b[1] == '6');
}

static int pnm_space(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

/* The header exactly as stb parses it (stbi__pnm_info): whitespace and '#' comments between
 * fields, then one byte, which must be whitespace, before the samples. */
static const char *scan_pnm(const unsigned char *b, size_t n, imgpu__scan *s)
{
    size_t pos = 2;
    uint64_t v[3];
    for (int k = 0; k < 3; k++) {
        for (;;) {
            while (pos < n && pnm_space(b[pos]))
                pos++;
            if (pos < n && b[pos] == '#') {
                while (pos < n && b[pos] != '\n' && b[pos] != '\r')
                    pos++;
                continue;
            }
            break;
        }
        if (pos >= n)
            return "truncated PNM header";
        if (b[pos] < '0' || b[pos] > '9')
            return "corrupt PNM header";
        v[k] = 0;
        while (pos < n && b[pos] >= '0' && b[pos] <= '9') {
            v[k] = v[k] * 10 + (uint64_t)(b[pos++] - '0');
            if (v[k] > INT_MAX)   /* stb's int parser would overflow */
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
    uint64_t need = v[0] * v[1] * (b[1] == '6' ? 3 : 1) * (v[2] > 255 ? 2 : 1);
    if (need > n - pos)
        s->data_error = "truncated PNM data";
    return NULL;
}

static unsigned char *pnm_decode8(const unsigned char *b, size_t n, const imgpu__scan *s,
                                  size_t budget, int *w, int *h, int *c, const char **why)
{
    unsigned char *px = imgpu__stb_decode(b, n, budget, w, h, c, why);
    if (px && s->pnm_maxval < 255) {
        /* stb returns PNM samples unscaled; a maxval-15 file would come out nearly black. */
        size_t count = (size_t)*w * (size_t)*h * (size_t)*c;
        int mv = s->pnm_maxval;
        for (size_t i = 0; i < count; i++)
            px[i] = (unsigned char)(px[i] >= mv ? 255 : (px[i] * 255 + mv / 2) / mv);
    }
    return px;
}

/* A 16-bit PNM whose structure scan_pnm has already validated (size, data all there), read
 * here: stb v2.27 returns PNM's big-endian samples unswapped. */
static imgpu_image *pnm_load16(const unsigned char *b, size_t n, const char *name,
                               const imgpu__scan *s, size_t budget)
{
    (void)n, (void)name, (void)budget;
    const int c = b[1] == '6' ? 3 : 1;
    imgpu_image *im = imgpu_image_new((int)s->w, (int)s->h, c, 16);
    if (!im)
        return NULL;
    const size_t count = (size_t)s->w * (size_t)s->h * (size_t)c;
    const unsigned char *p = b + s->pnm_data;
    uint16_t *q = (uint16_t *)(void *)im->data;
    const uint32_t mv = (uint32_t)s->pnm_maxval;
    for (size_t i = 0; i < count; i++) {
        uint32_t v = imgpu__be16(p + 2 * i);
        if (mv != 65535) /* scale to the full range, as the 8-bit path does for maxval < 255 */
            v = v >= mv ? 65535u : (v * 65535u + mv / 2) / mv;
        q[i] = (uint16_t)v;
    }
    return im;
}

/* P5 (gray) or P6 (RGB) with maxval 255 or 65535: the header, then the samples. */
static int encode_pnm_any(const imgpu_image *im, unsigned char **out, size_t *out_len,
                          char *why, size_t n)
{
    const int deep = im->depth == 16;
    char head[64];
    int hn = snprintf(head, sizeof head, "P%c\n%d %d\n%s\n", im->channels == 1 ? '5' : '6',
                      im->width, im->height, deep ? "65535" : "255");
    const size_t row = (size_t)im->width * (size_t)im->channels * (deep ? 2 : 1);
    const size_t total = (size_t)hn + row * (size_t)im->height;
    unsigned char *p = malloc(total);
    if (!p) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    memcpy(p, head, (size_t)hn);
    unsigned char *q = p + hn;
    for (int y = 0; y < im->height; y++, q += row) {
        if (!deep) {
            memcpy(q, imgpu_image_row(im, y), row);
            continue;
        }
        const uint16_t *s = (const uint16_t *)(const void *)imgpu_image_row(im, y);
        for (size_t i = 0; i < row / 2; i++) {   /* big-endian, as PNM requires */
            q[2 * i] = (unsigned char)(s[i] >> 8);
            q[2 * i + 1] = (unsigned char)s[i];
        }
    }
    *out = p;
    *out_len = total;
    return 0;
}

static int pnm_encode(const imgpu_image *im, const imgpu__encode_args *a, unsigned char **out,
                      size_t *out_len, char *why, size_t n)
{
    (void)a;
    return encode_pnm_any(im, out, out_len, why, n);
}

static const char *const s_pnm_ext[] = { "pnm", "pgm", "ppm", NULL };

const imgpu__codec imgpu__codec_pnm = {
    .format = IMGPU_FORMAT_PNM,
    .name = "PNM",
    .extensions = s_pnm_ext,
    .sniff = pnm_sniff,
    .scan = scan_pnm,
    .decode8 = pnm_decode8,
    .load16 = pnm_load16,
    .stores_alpha = 0, /* no P7/PAM */
    .encode8 = pnm_encode,
    .encode16 = pnm_encode,
};

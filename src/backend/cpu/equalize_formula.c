/* equalize_formula.c — equalization at 8 or 16 bits with any of the three LUT formulas, and
 * full-resolution histograms (256 or 65536 levels). equalize.c keeps the 8-bit OpenCV path;
 * this file generalizes it (and reproduces it exactly for 8-bit OpenCV).
 *
 * With L levels (256 or 65536), M = L - 1, N pixels, h[] the histogram, cum(i) = h[0] + ... + h[i]:
 *  - opencv (cv::equalizeHist, extended to 16 bits): i0 = first non-empty bin; N == h[i0]
 *    (a constant channel) -> identity; else scale = (float)M / (float)(N - h[i0]) and
 *    lut[i] = 0 for i <= i0, lut[i] = sat(round_half_even((float)(cum(i) - h[i0]) * scale)).
 *  - pil (PIL ImageOps.equalize; torchvision's equalize is the same scheme): the non-empty
 *    bins' total minus the LAST non-empty bin, step = that // M (integer division); when at
 *    most one bin is non-empty or step == 0 -> identity; else lut[i] = min(M, (step // 2 +
 *    cum(i - 1)) // step) — the count BELOW i, not including it (PIL's LUT values are clipped
 *    to 255 when the image is mapped).
 *  - imagemagick (ImageMagick 6, Q16, non-HDRI: `convert -equalize` on a gray image, or
 *    `-channel RGB -equalize` per channel): the map has 65536 entries; an 8-bit level v is the
 *    quantum 257 v. black = cum(0) (the count at level 0 — not the first non-empty level),
 *    white = N; black == white -> unchanged; else, in double,
 *        q(i) = 65535 * (cum(i) - black) / (white - black), Q = 0 if q <= 0,
 *        65535 if q >= 65535, else (int)(q + 0.5);
 *    16-bit output is Q; 8-bit output is ImageMagick's ScaleQuantumToChar:
 *        ((Q + 128) - ((Q + 128) >> 8)) >> 8.
 *    A constant non-black image therefore turns white, as it does in ImageMagick.
 * Modes as in equalize.c: luminance equalizes Y (BT.601 at the image's depth, color.c and
 * color16.c) and converts back, per-channel R, G, B; alpha is copied; when the Y LUT leaves
 * every present level unchanged the image is returned unchanged (no lossy color round trip). */
#include "cpu.h"
#include "ycc.h"
#include "error.h"
#include "parallel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void lut_identity(int levels, uint16_t *lut)
{
    for (int i = 0; i < levels; i++)
        lut[i] = (uint16_t)i;
}

static void lut_opencv(const uint32_t *hist, int levels, uint64_t n, uint16_t *lut)
{
    int i0 = 0;
    while (i0 < levels && hist[i0] == 0)
        i0++;
    if (i0 == levels || (uint64_t)hist[i0] >= n) {
        lut_identity(levels, lut);
        return;
    }
    const long maxv = levels - 1;
    const float scale = (float)maxv / (float)(n - hist[i0]);
    uint64_t sum = 0;
    for (int i = 0; i <= i0; i++)
        lut[i] = 0;
    for (int i = i0 + 1; i < levels; i++) {
        sum += hist[i];
        const long r = lrintf((float)sum * scale);
        lut[i] = (uint16_t)(r < 0 ? 0 : r > maxv ? maxv : r);
    }
}

static void lut_pil(const uint32_t *hist, int levels, uint16_t *lut)
{
    const uint64_t maxv = (uint64_t)levels - 1;
    uint64_t total = 0, last = 0;
    int nonempty = 0;
    for (int i = 0; i < levels; i++)
        if (hist[i]) {
            nonempty++;
            total += hist[i];
            last = hist[i];
        }
    const uint64_t step = nonempty > 1 ? (total - last) / maxv : 0;
    if (step == 0) {
        lut_identity(levels, lut);
        return;
    }
    uint64_t acc = step / 2;
    for (int i = 0; i < levels; i++) {
        const uint64_t v = acc / step;
        lut[i] = (uint16_t)(v > maxv ? maxv : v);
        acc += hist[i];
    }
}

static void lut_imagemagick(const uint32_t *hist, int levels, uint64_t n, uint16_t *lut)
{
    const uint64_t black = hist[0], white = n;
    if (black == white) {
        lut_identity(levels, lut);
        return;
    }
    uint64_t cum = 0;
    for (int i = 0; i < levels; i++) {
        cum += hist[i];
        const double q = (65535.0 * (double)(cum - black)) / (double)(white - black);
        const unsigned Q = q <= 0.0 ? 0u : q >= 65535.0 ? 65535u : (unsigned)(q + 0.5);
        lut[i] = (uint16_t)(levels == 256 ? ((Q + 128) - ((Q + 128) >> 8)) >> 8 : Q);
    }
}

void imgpu_cpu_equalize_lut_full(const uint32_t *hist, int levels, uint64_t n, imgpu_eq_formula formula,
                                 uint16_t *lut)
{
    switch (formula) {
    case IMGPU_FORMULA_PIL: lut_pil(hist, levels, lut); break;
    case IMGPU_FORMULA_IMAGEMAGICK: lut_imagemagick(hist, levels, n, lut); break;
    default: lut_opencv(hist, levels, n, lut); break;
    }
}

static inline unsigned luma_of(const unsigned char *row, int depth, size_t s)
{
    if (depth == 16)
        return imgpu_cpu_rgb16_to_y((uint16_t)imgpu_sample_get(row, 16, s), (uint16_t)imgpu_sample_get(row, 16, s + 1),
                                    (uint16_t)imgpu_sample_get(row, 16, s + 2));
    return imgpu__rgb_to_y(row[s], row[s + 1], row[s + 2]);
}

/* The passes below run on every core (parallel.h): histogram parts count their rows into
 * private histograms summed in integers afterwards (exact, any order); mapping passes write
 * disjoint rows with the same per-pixel code as before. */
typedef struct full_job {
    const imgpu_image *in;
    unsigned char *outdata;  /* equalize: the output image's rows (tight copy of in) */
    size_t out_stride;
    int k, levels;           /* channel (per-channel mode); bins per plane */
    uint32_t *hist;          /* parts x (planes x levels) counts */
    size_t part_len;         /* counts per part */
    const uint16_t *lut;
} full_job;

/* Sum the parts' counts into dst[0..len). */
static void merge_parts(const uint32_t *parts, int n, size_t len, uint32_t *dst)
{
    for (size_t i = 0; i < len; i++) {
        uint32_t s = 0;
        for (int t = 0; t < n; t++)
            s += parts[(size_t)t * len + i];
        dst[i] = s;
    }
}

static void full_hist_rows(void *ctx, int part, int y0, int y1)
{
    const full_job *j = ctx;
    const imgpu_image *in = j->in;
    const int c = in->channels, d = in->depth, levels = j->levels, has_luma = c >= 3, w = in->width;
    uint32_t *counts = j->hist + (size_t)part * j->part_len;
    for (int y = y0; y < y1; y++) {
        const unsigned char *row = imgpu_image_row(in, y);
        for (int x = 0; x < w; x++) {
            const size_t s = (size_t)x * c;
            for (int k = 0; k < c; k++)
                counts[(size_t)k * levels + imgpu_sample_get(row, d, s + k)]++;
            if (has_luma)
                counts[(size_t)c * levels + luma_of(row, d, s)]++;
        }
    }
}

int imgpu_cpu_histogram_full(const imgpu_image *in, imgpu_histogram_full *out)
{
    if (in->depth != 8 && in->depth != 16)
        return imgpu_error("histogram: %d-bit images are not supported", in->depth);
    if (in->channels < 1 || in->channels > 4)
        return imgpu_error("histogram: invalid channel count %d", in->channels);
    if ((uint64_t)in->width * (uint64_t)in->height > UINT32_MAX)
        return imgpu_error("histogram: %dx%d has too many pixels for 32-bit bins", in->width, in->height);
    imgpu_histogram_full h;
    memset(&h, 0, sizeof h);
    h.channels = in->channels;
    h.has_luma = in->channels >= 3;
    h.levels = in->depth == 16 ? 65536 : 256;
    h.planes = in->channels + h.has_luma;
    const size_t len = (size_t)h.planes * h.levels;
    h.counts = calloc(len, sizeof *h.counts);
    if (in->depth == 8 && h.counts) {
        /* 8-bit: the reference histogram (histogram.c: the same planes, the same luma, counted
         * in four histograms a plane and eight gray samples a load), laid out as planes */
        imgpu_histogram h8;
        if (imgpu_cpu_histogram(in, &h8) < 0) {
            free(h.counts);
            return -1;
        }
        for (int k = 0; k < h.planes; k++)
            memcpy(h.counts + (size_t)k * 256, k < in->channels ? h8.bins[k] : h8.luma, 256 * sizeof *h.counts);
        *out = h;
        return 0;
    }
    const int parts = imgpu__cpu_parts(in->height, (size_t)in->width * h.planes, len);
    uint32_t *scratch = parts > 1 ? calloc((size_t)parts * len, sizeof *scratch) : NULL;
    if (!h.counts || (parts > 1 && !scratch)) {
        free(h.counts);
        return imgpu_error("histogram: out of memory");
    }
    full_job j = {.in = in, .levels = h.levels, .hist = parts > 1 ? scratch : h.counts, .part_len = len};
    imgpu__cpu_parallel_rows(in->height, parts, full_hist_rows, &j);
    if (parts > 1)
        merge_parts(scratch, parts, len, h.counts);
    free(scratch);
    *out = h;
    return 0;
}

static void luma_hist_rows(void *ctx, int part, int y0, int y1)
{
    const full_job *j = ctx;
    const imgpu_image *in = j->in;
    const int c = in->channels, d = in->depth, w = in->width;
    uint32_t *hist = j->hist + (size_t)part * j->part_len;
    for (int y = y0; y < y1; y++) {
        const unsigned char *row = imgpu_image_row(in, y);
        for (int x = 0; x < w; x++)
            hist[luma_of(row, d, (size_t)x * c)]++;
    }
}

static void luma_map_rows(void *ctx, int part, int y0, int y1)
{
    (void)part;
    const full_job *j = ctx;
    const imgpu_image *in = j->in;
    const int c = in->channels, d = in->depth, w = in->width;
    const uint16_t *lut = j->lut;
    for (int y = y0; y < y1; y++) {
        const unsigned char *row = imgpu_image_row(in, y);
        unsigned char *o = j->outdata + (size_t)y * j->out_stride;
        for (int x = 0; x < w; x++) {
            const size_t s = (size_t)x * c;
            if (d == 16) {
                uint16_t yy, cb, cr, r, g, b;
                imgpu_cpu_rgb16_to_ycbcr((uint16_t)imgpu_sample_get(row, d, s),
                                         (uint16_t)imgpu_sample_get(row, d, s + 1),
                                         (uint16_t)imgpu_sample_get(row, d, s + 2), &yy, &cb, &cr);
                imgpu_cpu_ycbcr16_to_rgb(lut[yy], cb, cr, &r, &g, &b);
                imgpu_sample_put(o, d, s, r);
                imgpu_sample_put(o, d, s + 1, g);
                imgpu_sample_put(o, d, s + 2, b);
            } else {
                uint8_t yy, cb, cr;
                imgpu__rgb_to_ycbcr(row[s], row[s + 1], row[s + 2], &yy, &cb, &cr);
                imgpu__ycbcr_to_rgb((uint8_t)lut[yy], cb, cr, &o[s], &o[s + 1], &o[s + 2]);
            }
        }
    }
}

static void channel_hist_rows(void *ctx, int part, int y0, int y1)
{
    const full_job *j = ctx;
    const imgpu_image *in = j->in;
    const int c = in->channels, d = in->depth, k = j->k, w = in->width;
    uint32_t *hist = j->hist + (size_t)part * j->part_len;
    for (int y = y0; y < y1; y++) {
        const unsigned char *row = imgpu_image_row(in, y);
        for (int x = 0; x < w; x++)
            hist[imgpu_sample_get(row, d, (size_t)x * c + k)]++;
    }
}

static void channel_map_rows(void *ctx, int part, int y0, int y1)
{
    (void)part;
    const full_job *j = ctx;
    const imgpu_image *in = j->in;
    const int c = in->channels, d = in->depth, k = j->k, w = in->width;
    const uint16_t *lut = j->lut;
    for (int y = y0; y < y1; y++) {
        const unsigned char *row = imgpu_image_row(in, y);
        unsigned char *o = j->outdata + (size_t)y * j->out_stride;
        for (int x = 0; x < w; x++)
            imgpu_sample_put(o, d, (size_t)x * c + k, lut[imgpu_sample_get(row, d, (size_t)x * c + k)]);
    }
}

imgpu_image *imgpu_cpu_equalize_full(const imgpu_image *in, const imgpu_equalize_params *p)
{
    if (in->depth != 8 && in->depth != 16) {
        imgpu_error("equalize: %d-bit images are not supported", in->depth);
        return NULL;
    }
    if (p->mode != IMGPU_MODE_LUMINANCE && p->mode != IMGPU_MODE_PER_CHANNEL) {
        imgpu_error("equalize: unknown mode %d", (int)p->mode);
        return NULL;
    }
    if (p->formula != IMGPU_FORMULA_OPENCV && p->formula != IMGPU_FORMULA_PIL &&
        p->formula != IMGPU_FORMULA_IMAGEMAGICK) {
        imgpu_error("equalize: unknown formula %d", (int)p->formula);
        return NULL;
    }
    const uint64_t n = (uint64_t)in->width * (uint64_t)in->height;
    if (n > UINT32_MAX) {
        imgpu_error("equalize: %dx%d has too many pixels for 32-bit bins", in->width, in->height);
        return NULL;
    }
    const int levels = in->depth == 16 ? 65536 : 256;
    const int parts = imgpu__cpu_parts(in->height, (size_t)in->width * (size_t)in->channels, (size_t)levels);
    uint32_t *hist = malloc((size_t)levels * sizeof *hist);
    uint32_t *phist = calloc((size_t)parts * levels, sizeof *phist);
    uint16_t *lut = malloc((size_t)levels * sizeof *lut);
    imgpu_image *out = imgpu__cpu_image_copy(in);
    if (!hist || !phist || !lut || !out) {
        free(hist);
        free(phist);
        free(lut);
        imgpu_image_free(out);
        if (hist && phist && lut)
            return NULL; /* imgpu_image_copy recorded why */
        imgpu_error("equalize: out of memory");
        return NULL;
    }
    full_job j = {.in = in, .outdata = out->data, .out_stride = out->stride, .levels = levels,
                  .hist = phist, .part_len = (size_t)levels, .lut = lut};
    const int color = imgpu_image_color_channels(in);
    if (color == 3 && p->mode == IMGPU_MODE_LUMINANCE) {
        imgpu__cpu_parallel_rows(in->height, parts, luma_hist_rows, &j);
        merge_parts(phist, parts, (size_t)levels, hist);
        imgpu_cpu_equalize_lut_full(hist, levels, n, p->formula, lut);
        int identity = 1;
        for (int v = 0; v < levels && identity; v++)
            if (hist[v] && lut[v] != v)
                identity = 0;
        if (!identity)
            imgpu__cpu_parallel_rows(in->height, parts, luma_map_rows, &j);
    } else {
        for (int k = 0; k < color; k++) {
            memset(phist, 0, (size_t)parts * levels * sizeof *phist);
            j.k = k;
            imgpu__cpu_parallel_rows(in->height, parts, channel_hist_rows, &j);
            merge_parts(phist, parts, (size_t)levels, hist);
            imgpu_cpu_equalize_lut_full(hist, levels, n, p->formula, lut);
            imgpu__cpu_parallel_rows(in->height, parts, channel_map_rows, &j);
        }
    }
    free(phist);
    free(hist);
    free(lut);
    return out;
}

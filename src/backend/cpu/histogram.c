/* histogram.c — the reference histogram: 256 bins for every channel of an 8-bit image
 * (alpha included, counted like any other channel), plus, for 3- and 4-channel images, a
 * 256-bin histogram of luma Y = imgpu__rgb_to_y(R, G, B) — the same full-range BT.601 Y,
 * in OpenCV's 14-bit fixed point, that luminance-mode equalization uses (see color.c).
 * Gray and gray+alpha images have no separate luma (has_luma = 0, luma[] all zero): their
 * gray channel is bins[0]. Bins of channels the image does not have are zero.
 * Counts are uint32_t: an image of 2^32 pixels or more is refused rather than wrapped. */
#include "cpu.h"
#include "ycc.h"
#include "error.h"
#include "parallel.h"
#include "count8.h"

#include <stdlib.h>
#include <string.h>

/* Rows on every core (parallel.h): each part counts into its own imgpu_histogram, and the
 * parts are summed in integers (exact, any order). */
typedef struct hist_job {
    const imgpu_image *in;
    imgpu_histogram *parts;
} hist_job;

static void hist_rows(void *ctx, int part, int y0, int y1)
{
    const hist_job *j = ctx;
    const imgpu_image *in = j->in;
    imgpu_histogram *h = &j->parts[part];
    const int c = in->channels, has_luma = c >= 3, w = in->width;
    /* four histograms a plane (count8.h): gray's samples eight a load; the channels of wider
     * pixels, and luma, pixel by pixel over the four in turn. The same counts, summed below. */
    uint32_t h4[5][4][256];
    memset(h4, 0, (size_t)(c + has_luma) * sizeof h4[0]);
    uint8_t ys[256];
    for (int y = y0; y < y1; y++) {
        const uint8_t *row = imgpu_image_row(in, y);
        if (c == 1) {
            imgpu__count_run(h4[0], row, w);
            continue;
        }
        for (int x0 = 0; x0 < w; x0 += 256) {
            const int n = w - x0 < 256 ? w - x0 : 256;
            const uint8_t *p = row + (size_t)x0 * c;
            for (int x = 0; x < n; x++, p += c) {
                for (int k = 0; k < c; k++)
                    h4[k][x & 3][p[k]]++;
            }
            if (has_luma) {
                /* Y of these pixels first (no store the compiler must order against the
                 * counts), then counted as gray is */
                p = row + (size_t)x0 * c;
                for (int x = 0; x < n; x++)
                    ys[x] = imgpu__rgb_to_y(p[c * x], p[c * x + 1], p[c * x + 2]);
                imgpu__count_run(h4[c], ys, n);
            }
        }
    }
    for (int k = 0; k < c + has_luma; k++) {
        uint32_t *dst = k < c ? h->bins[k] : h->luma;
        for (int i = 0; i < 256; i++)
            dst[i] += h4[k][0][i] + h4[k][1][i] + h4[k][2][i] + h4[k][3][i];
    }
}

int imgpu_cpu_histogram(const imgpu_image *in, imgpu_histogram *out)
{
    if (in->depth != 8)
        return imgpu_error("histogram: %d-bit images are not supported", in->depth);
    if (in->channels < 1 || in->channels > 4)
        return imgpu_error("histogram: invalid channel count %d", in->channels);
    if ((uint64_t)in->width * (uint64_t)in->height > UINT32_MAX)
        return imgpu_error("histogram: %dx%d has too many pixels for 32-bit bins", in->width,
                           in->height);

    imgpu_histogram h; /* built aside: `out` is written only on success */
    memset(&h, 0, sizeof h);
    h.channels = in->channels;
    h.has_luma = in->channels >= 3;
    const int parts = imgpu__cpu_parts(in->height, (size_t)in->width * (in->channels + 1), 5 * 256);
    hist_job j = {.in = in, .parts = calloc((size_t)parts, sizeof *j.parts)};
    if (!j.parts)
        return imgpu_error("histogram: out of memory");
    imgpu__cpu_parallel_rows(in->height, parts, hist_rows, &j);
    for (int t = 0; t < parts; t++)
        for (int i = 0; i < 256; i++) {
            for (int k = 0; k < 4; k++)
                h.bins[k][i] += j.parts[t].bins[k][i];
            h.luma[i] += j.parts[t].luma[i];
        }
    free(j.parts);
    *out = h;
    return 0;
}

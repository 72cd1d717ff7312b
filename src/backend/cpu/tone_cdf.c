/* tone_cdf.c — the statistics of normalize and autolevel (issue 28, op-norm) on the CPU: the
 * CDFs (inclusive cumulative histograms) src/op/normalize.c and autolevel.c turn into a LUT
 * (op.h states which): one per colour channel of its levels (2^depth bins), or, for a colour
 * image when `intensity` is asked, one of ImageMagick's intensity quanta (65536 bins):
 *     ClampToQuantum((0.212656 R + 0.715158 G) + 0.072186 B), R, G, B the quanta (257 v at 8 bits).
 * The three products come from tables of doubles made by one multiplication each, so the per
 * pixel work is two additions: nothing a compiler could fuse into a multiply-add, and exactly
 * the IEEE operations the CUDA kernel makes (kernels/normalize.cu, __dmul_rn / __dadd_rn).
 * Rows on every core (parallel.h), each part into its own counts, summed in integers. */
#include "cpu.h"
#include "error.h"
#include "parallel.h"

#include <stdlib.h>
#include <string.h>

typedef struct cdf_job {
    const imgpu_image *in;
    uint32_t *parts; /* parts x planes x bins */
    const double *tab; /* intensity: 3 x 2^depth products, else NULL */
    int planes, bins;
} cdf_job;

static void count_rows(void *ctx, int part, int y0, int y1)
{
    const cdf_job *j = ctx;
    const imgpu_image *in = j->in;
    const int w = in->width, c = in->channels, d = in->depth;
    const size_t levels = d == 16 ? 65536u : 256u;
    uint32_t *h = j->parts + (size_t)part * (size_t)j->planes * (size_t)j->bins;
    for (int y = y0; y < y1; y++) {
        const unsigned char *row = imgpu_image_row(in, y);
        for (int x = 0; x < w; x++) {
            const size_t s = (size_t)x * c;
            if (j->tab) {
                const unsigned r = imgpu_sample_get(row, d, s), g = imgpu_sample_get(row, d, s + 1),
                               b = imgpu_sample_get(row, d, s + 2);
                const double v = (j->tab[r] + j->tab[levels + g]) + j->tab[2 * levels + b];
                h[v <= 0.0 ? 0u : v >= 65535.0 ? 65535u : (unsigned)(v + 0.5)]++;
            } else {
                for (int k = 0; k < j->planes; k++)
                    h[(size_t)k * j->bins + imgpu_sample_get(row, d, s + k)]++;
            }
        }
    }
}

int imgpu__cpu_tone_cdf(const imgpu_image *in, int intensity, uint32_t **cdf, int *planes, int *bins)
{
    *cdf = NULL;
    if (in->depth != 8 && in->depth != 16)
        return imgpu_error("%d-bit images are not supported", in->depth);
    if ((uint64_t)in->width * (uint64_t)in->height > UINT32_MAX)
        return imgpu_error("%dx%d has too many pixels for 32-bit bins", in->width, in->height);
    const int color = imgpu_image_color_channels(in), levels = in->depth == 16 ? 65536 : 256;
    cdf_job j = {.in = in};
    double *tab = NULL;
    if (intensity && color == 3) {
        j.planes = 1;
        j.bins = 65536;
        if (!(tab = malloc(3 * (size_t)levels * sizeof *tab)))
            return imgpu_error("out of memory");
        static const double coef[3] = {0.212656, 0.715158, 0.072186};
        for (int k = 0; k < 3; k++)
            for (int v = 0; v < levels; v++)
                tab[(size_t)k * levels + v] = coef[k] * (double)(in->depth == 8 ? 257 * v : v);
        j.tab = tab;
    } else {
        j.planes = color;
        j.bins = levels;
    }
    const size_t plane_n = (size_t)j.planes * (size_t)j.bins;
    const int parts = imgpu__cpu_parts(in->height, (size_t)in->width * (size_t)in->channels * (tab ? 2 : 1), plane_n);
    j.parts = calloc((size_t)parts * plane_n, sizeof *j.parts);
    uint32_t *out = malloc(plane_n * sizeof *out);
    if (!j.parts || !out) {
        free(tab);
        free(j.parts);
        free(out);
        return imgpu_error("out of memory");
    }
    imgpu__cpu_parallel_rows(in->height, parts, count_rows, &j);
    for (int k = 0; k < j.planes; k++) {
        uint32_t run = 0;
        for (int b = 0; b < j.bins; b++) {
            const size_t i = (size_t)k * j.bins + b;
            for (int t = 0; t < parts; t++)
                run += j.parts[(size_t)t * plane_n + i];
            out[i] = run;
        }
    }
    free(tab);
    free(j.parts);
    *cdf = out;
    *planes = j.planes;
    *bins = j.bins;
    return 0;
}

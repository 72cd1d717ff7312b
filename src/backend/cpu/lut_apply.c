/* lut_apply.c — the CPU side of the tone LUT ops (levels, gamma, normalize, autolevel; issue
 * 28): map every colour channel of an 8- or 16-bit image through a LUT of 2^depth entries
 * (the op files in src/op/ compute it; the CUDA backend uploads the same table), alpha copied. Rows are
 * split over the cores (parallel.h); each sample is one table lookup. */
#include "cpu.h"
#include "error.h"
#include "parallel.h"

#include <stdlib.h>

typedef struct lut_job {
    const imgpu_image *in;
    imgpu_image *out;
    const uint16_t *lut;
    int planes, levels;
} lut_job;

static void map_rows(void *ctx, int part, int y0, int y1)
{
    (void)part;
    const lut_job *j = ctx;
    const imgpu_image *in = j->in;
    const int w = in->width, c = in->channels, color = imgpu_image_color_channels(in), d = in->depth;
    for (int y = y0; y < y1; y++) {
        const unsigned char *row = imgpu_image_row(in, y);
        unsigned char *o = imgpu_image_row(j->out, y);
        if (d == 8) {
            for (int x = 0; x < w; x++)
                for (int k = 0; k < color; k++) {
                    const uint16_t *lut = j->lut + (size_t)(j->planes == 1 ? 0 : k) * (size_t)j->levels;
                    o[(size_t)x * c + k] = (unsigned char)lut[row[(size_t)x * c + k]];
                }
        } else {
            for (int x = 0; x < w; x++)
                for (int k = 0; k < color; k++) {
                    const uint16_t *lut = j->lut + (size_t)(j->planes == 1 ? 0 : k) * (size_t)j->levels;
                    const size_t s = (size_t)x * c + k;
                    imgpu_sample_put(o, 16, s, lut[imgpu_sample_get(row, 16, s)]);
                }
        }
    }
}

imgpu_image *imgpu__cpu_apply_lut(const imgpu_image *in, const uint16_t *lut, int planes)
{
    if (in->depth != 8 && in->depth != 16) {
        imgpu_error("%d-bit images are not supported", in->depth);
        return NULL;
    }
    imgpu_image *out = imgpu__cpu_image_for(in); /* alpha comes with a copy */
    if (!out)
        return NULL;
    lut_job j = {.in = in, .out = out, .lut = lut, .planes = planes, .levels = in->depth == 16 ? 65536 : 256};
    const int parts = imgpu__cpu_parts(in->height, (size_t)in->width * (size_t)in->channels, 256);
    imgpu__cpu_parallel_rows(in->height, parts, map_rows, &j);
    return out;
}

uint16_t *imgpu__cpu_lut_alloc(int depth, int planes)
{
    uint16_t *lut = malloc((size_t)planes * (depth == 16 ? 65536u : 256u) * sizeof *lut);
    if (!lut)
        imgpu_error("out of memory");
    return lut;
}

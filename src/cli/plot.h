/* plot.h — draws a histogram as an RGB chart for `imgpu histogram --plot`.
 *
 * Layout, top to bottom: a title (the file name and the channels; the depth, the number of
 * bins and the level range, and "(the data's range)" where it was not asked for), then one panel per series in the order given (the column order
 * of `histogram --csv`: gray | R, G, B; then alpha; then Y).
 *
 * Each panel plots exactly the bins it is given. The x axis is in the image's sample units
 * (levels lo..hi, "nice" tick values); a level v is drawn at (v - lo + 0.5) / (hi - lo + 1) of
 * the plot width. With at most PLOT_MAX_W (640) bins every bin is a bar of the same whole
 * number of pixel columns, bars side by side without gaps; with more bins each pixel column
 * shows the tallest of ceil(bins / 640) adjacent bins, so a spike is never averaged away. The
 * y axis counts pixels per bin: linear from 0 to a nice value at or above the tallest bar, or
 * with log_y decades from 1 (a bin of 1 pixel is a 1-pixel bar, an empty bin has none). With
 * cdf, the cumulative share of the pixels in the range is drawn over the bars as a curve
 * with its own 0..100% axis on the right. A bin that holds pixels is never drawn 0 high.
 */
#ifndef IMGPU_PLOT_H
#define IMGPU_PLOT_H

#include <stdint.h>

#include "image.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct imgpu_plot_series {
    const char *name;           /* "gray", "R", "G", "B", "alpha" or "Y" (picks the color) */
    const uint32_t *counts;     /* `bins` counts */
} imgpu_plot_series;

typedef struct imgpu_histogram_plot_spec {
    const char *file;           /* the input's name, for the title (its last component) */
    int depth;                  /* 8 or 16 */
    long lo, hi;                /* the bins cover levels lo..hi */
    long bins;                  /* 1 .. hi - lo + 1; bin b holds (v - lo) * bins / (hi - lo + 1) == b */
    int log_y;                  /* log10 y axis */
    int cdf;                    /* draw the cumulative distribution */
    int data_range;             /* lo..hi is the data's range, chosen for the user: the title says so */
    int nseries;                /* 1..6 */
    imgpu_plot_series series[6];
} imgpu_histogram_plot_spec;

/* A new 8-bit RGB image of the chart, or NULL with an error recorded. */
imgpu_image *imgpu__histogram_plot(const imgpu_histogram_plot_spec *s);

#ifdef __cplusplus
}
#endif
#endif

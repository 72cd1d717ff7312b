/* plot.h — draws a histogram as an RGB bar chart for `imgpu histogram --plot`.
 *
 * One panel per channel, stacked top to bottom: gray (or R, G, B), then alpha when
 * present, then Y (luminance) for color images: the column order of `histogram --csv`.
 * Each panel has 256 bars two pixels wide in the channel's color, scaled to that panel's
 * tallest bin, an x axis with ticks at 0, 64, 128, 192 and 255, and the channel's name at
 * the left in a built-in 3x5 pixel font.
 */
#ifndef IMGPU_PLOT_H
#define IMGPU_PLOT_H

#include "image.h"
#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A new 8-bit RGB image of the chart, or NULL with an error recorded. */
imgpu_image *imgpu__histogram_plot(const imgpu_histogram *h);

#ifdef __cplusplus
}
#endif
#endif

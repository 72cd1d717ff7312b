/* cmd_histogram.c — `imgpu histogram IN`: the histogram of each channel (and the luminance)
 * as a table, CSV (--csv) or a plot (--plot); 16-bit images, --bins and --range count the
 * full-resolution histogram into bins.
 */
#include "cli/cli.h"
#include "error.h"
#include "cli/plot.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char s_help_histogram[] =
    "Print the 256-bin histogram of each channel (gray; R, G, B; alpha) and, for color\n"
    "images, of the luminance Y (BT.601, the Y that equalize uses).\n"
    "Default output: min, max, mean, standard deviation and median per channel, and the\n"
    "share of pixels in 16 bins: of 16 levels (8-bit), or over the data's range (16-bit).\n"
    "\n"
    "options:\n"
    "  --csv                print 'value,<channels>' and 256 rows of counts instead\n"
    "                       (columns: gray | R,G,B; then alpha; then Y)\n"
    "  --plot OUT           also draw the histogram as a chart and save it to OUT: a title\n"
    "                       (file, channels, depth, bins, range), one panel per column of\n"
    "                       --csv; x in the image's levels, y in pixels per bin. Each bin\n"
    "                       asked for is one bar; over 640 bins, a pixel column shows the\n"
    "                       tallest of its ceil(N/640) bins\n"
    "  --log                plot y on a log10 scale (decades from 1; needs --plot)\n"
    "  --cdf                plot the cumulative share of the range's pixels too, on a\n"
    "                       0..100% axis at the right (needs --plot)\n"
    "  --bins N             count into N equal bins (default: the table 16, the plot and\n"
    "                       --csv 256, or fewer levels)\n"
    "  --range LO:HI        only levels LO..HI (default: 0..255; 16-bit: the table and the\n"
    "                       plot span the data's range, min..max, and say so; --csv 0..65535)\n" HELP_DEVICE HELP_LOAD
        HELP_MEMORY_READ HELP_SAVE HELP_QUIET HELP_TAIL;


/* ---- histogram ---------------------------------------------------------------------------- */

typedef struct hist_column {
    const char *name;
    const uint32_t *bins;
} hist_column;

/* The columns in a fixed order shared by the table, the CSV and the plot:
 * gray | R, G, B; then alpha; then Y for color images. */
static int hist_columns(const imgpu_histogram *h, hist_column cols[6])
{
    int n = 0;
    if (h->channels >= 3) {
        cols[n++] = (hist_column){"R", h->bins[0]};
        cols[n++] = (hist_column){"G", h->bins[1]};
        cols[n++] = (hist_column){"B", h->bins[2]};
    } else {
        cols[n++] = (hist_column){"gray", h->bins[0]};
    }
    if (h->channels == 2 || h->channels == 4)
        cols[n++] = (hist_column){"alpha", h->bins[h->channels - 1]};
    if (h->channels >= 3 && h->has_luma)
        cols[n++] = (hist_column){"Y", h->luma};
    return n;
}

static void print_csv(const imgpu_histogram *h)
{
    hist_column cols[6];
    int n = hist_columns(h, cols);
    fputs("value", stdout);
    for (int k = 0; k < n; k++)
        printf(",%s", cols[k].name);
    putchar('\n');
    for (int v = 0; v < 256; v++) {
        printf("%d", v);
        for (int k = 0; k < n; k++)
            printf(",%" PRIu32, cols[k].bins[v]);
        putchar('\n');
    }
}

static void print_table(const char *path, const imgpu_image *im, const imgpu_histogram *h,
                        imgpu_device used)
{
    hist_column cols[6];
    int n = hist_columns(h, cols);
    char shown[4096];
    printf("%s: %dx%d %s, %" PRIu64 " pixels (computed on the %s)\n\n",
           imgpu_escape(path, shown, sizeof shown), im->width,
           im->height, imgpu_image_layout_name(im->channels), (uint64_t)im->width * (uint64_t)im->height,
           used == IMGPU_DEVICE_CUDA ? "GPU" : "CPU");
    printf("%-8s %5s %5s %9s %9s %7s\n", "channel", "min", "max", "mean", "stddev", "median");
    for (int k = 0; k < n; k++) {
        const uint32_t *b = cols[k].bins;
        uint64_t total = 0, cum = 0;
        double sum = 0, sumsq = 0;
        int lo = -1, hi = -1, median = -1;
        for (int v = 0; v < 256; v++) {
            total += b[v];
            sum += (double)v * b[v];
            if (b[v]) {
                if (lo < 0)
                    lo = v;
                hi = v;
            }
        }
        if (!total) {
            printf("%-8s %5s %5s %9s %9s %7s\n", cols[k].name, "-", "-", "-", "-", "-");
            continue;
        }
        double mean = sum / (double)total;
        for (int v = 0; v < 256; v++) {
            sumsq += (v - mean) * (v - mean) * b[v];
            cum += b[v];
            /* Lower median: the first level holding at least half of the pixels. */
            if (median < 0 && 2 * cum >= total)
                median = v;
        }
        printf("%-8s %5d %5d %9.2f %9.2f %7d\n", cols[k].name, lo, hi, mean,
               sqrt(sumsq / (double)total), median);
    }

    printf("\n%% of pixels in bins of 16 levels:\n%-8s", "levels");
    for (int k = 0; k < n; k++)
        printf(" %6s", cols[k].name);
    putchar('\n');
    for (int g = 0; g < 16; g++) {
        printf("%3d-%-4d", g * 16, g * 16 + 15);
        for (int k = 0; k < n; k++) {
            uint64_t s = 0, total = 0;
            for (int v = 0; v < 256; v++) {
                total += cols[k].bins[v];
                if (v / 16 == g)
                    s += cols[k].bins[v];
            }
            printf(" %6.2f", total ? 100.0 * (double)s / (double)total : 0.0);
        }
        putchar('\n');
    }
}

/* Draw and save --plot: `n` series of `nb` bins over levels lo..hi (data_range: the data's
 * range, not asked for: the title says so). */
static int save_plot(const cli *c, int depth, long lo, long hi, long nb, int n, const char *const names[],
                     const uint32_t *const counts[], int data_range)
{
    imgpu_histogram_plot_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.file = c->pos[0];
    spec.depth = depth;
    spec.lo = lo;
    spec.hi = hi;
    spec.bins = nb;
    spec.log_y = c->log_y;
    spec.cdf = c->cdf;
    spec.data_range = data_range;
    spec.nseries = n;
    for (int k = 0; k < n; k++)
        spec.series[k] = (imgpu_plot_series){names[k], counts[k]};
    imgpu_image *plot = imgpu__histogram_plot(&spec);
    int rc = plot ? imgpu_image_save(plot, c->plot, &c->run.save) : -1;
    imgpu_image_free(plot);
    return rc;
}

/* Level v of lo..hi counted into bin (v - lo) * nb / (hi - lo + 1) of out[nb], per plane. */
static void bin_levels(const uint32_t *const planes[], int n, long lo, long hi, long nb, uint32_t *out)
{
    const uint64_t width = (uint64_t)(hi - lo + 1);
    memset(out, 0, (size_t)n * (size_t)nb * sizeof *out);
    for (int k = 0; k < n; k++)
        for (long v = lo; v <= hi; v++)
            out[(size_t)k * nb + (size_t)((uint64_t)(v - lo) * (uint64_t)nb / width)] += planes[k][v];
}

/* The first and last level of bin b of nb over lo..hi. */
static void bin_bounds(long lo, long hi, long nb, long b, long *first, long *last)
{
    const uint64_t width = (uint64_t)(hi - lo + 1);
    *first = lo + (long)(((uint64_t)b * width + (uint64_t)nb - 1) / (uint64_t)nb);
    *last = lo + (long)(((uint64_t)(b + 1) * width + (uint64_t)nb - 1) / (uint64_t)nb) - 1;
}

/* 16-bit images, --bins and --range: full-resolution histograms (256 or 65536 levels)
 * computed by the backend, counted into equal bins over [lo, hi] here: level v in range goes
 * to bin (v - lo) * bins / (hi - lo + 1); levels outside the range are not counted.
 * Statistics are over every pixel at full resolution.
 * The range: --range LO:HI; else for a 16-bit image's table and plot the data's range (the
 * lowest..highest level of the gray | R, G, B and Y columns; alpha, often all 65535, left
 * out), widened to --bins levels where it holds fewer, and said so; else (8-bit, and --csv)
 * the whole range. The bins: --bins N; else the table's are 16 (as an 8-bit image's compact
 * table, in % of pixels) and the plot's and the CSV's 256 (or fewer levels). */
static int histogram_binned(const cli *c, const imgpu_image *in)
{
    imgpu_histogram_full f;
    imgpu_device used = IMGPU_DEVICE_CPU;
    uint32_t *binned = NULL;
    int ok = 0;
    memset(&f, 0, sizeof f);
    if (imgpu_histogram_full_compute(in, c->device, &f, &used) < 0)
        goto done;
    const long L = f.levels;
    if (c->have_range && c->range_hi >= L) {
        imgpu_error("--range %ld:%ld is beyond the %d-bit levels 0..%ld of '%s'", c->range_lo, c->range_hi,
                    in->depth, L - 1, c->pos[0]);
        goto done;
    }
    static const char *names4[] = {"R", "G", "B", "alpha"};
    const char *names[5];
    const uint32_t *planes[5];
    int n = 0;
    for (int k = 0; k < f.channels; k++) {
        names[n] = f.channels >= 3 ? names4[k] : (k == 0 ? "gray" : "alpha");
        planes[n++] = f.counts + (size_t)k * L;
    }
    if (f.has_luma) {
        names[n] = "Y";
        planes[n++] = f.counts + (size_t)f.channels * L;
    }
    /* the range the table and the plot show (csv_*: the CSV's) */
    long lo = c->have_range ? c->range_lo : 0, hi = c->have_range ? c->range_hi : L - 1;
    const long csv_lo = lo, csv_hi = hi;
    const int data_range = !c->have_range && in->depth == 16;
    if (data_range) {
        long mn = L, mx = -1;
        for (int k = 0; k < n; k++) {
            if (!strcmp(names[k], "alpha"))
                continue;
            for (long v = 0; v < L; v++)
                if (planes[k][v]) {
                    mn = v < mn ? v : mn;
                    mx = v > mx ? v : mx;
                }
        }
        if (mx >= 0) {
            lo = mn;
            hi = mx;
        }
        if (c->bins && hi - lo + 1 < c->bins) { /* room for the bins asked for */
            hi = lo + c->bins - 1 < L - 1 ? lo + c->bins - 1 : L - 1;
            lo = hi - c->bins + 1 > 0 ? hi - c->bins + 1 : 0;
        }
    }
    const long width = hi - lo + 1, csv_width = csv_hi - csv_lo + 1;
    const long nb = c->bins ? c->bins : (width < 256 ? width : 256);
    const long csv_nb = c->bins ? c->bins : (csv_width < 256 ? csv_width : 256);
    const long table_nb = c->bins ? c->bins : (width < 16 ? width : 16);
    if (nb > width || csv_nb > csv_width) {
        imgpu_error("--bins %ld is more than the %ld levels of the range %ld:%ld", c->bins, width, lo, hi);
        goto done;
    }
    const long most = nb > csv_nb ? nb : csv_nb;
    binned = malloc((size_t)n * (size_t)most * sizeof *binned);
    if (!binned) {
        imgpu_error("histogram: out of memory");
        goto done;
    }
    if (c->plot) {
        const uint32_t *series[5];
        bin_levels(planes, n, lo, hi, nb, binned);
        for (int k = 0; k < n; k++)
            series[k] = binned + (size_t)k * nb;
        if (save_plot(c, in->depth, lo, hi, nb, n, names, series, data_range) < 0)
            goto done;
    }
    if (c->csv) {
        bin_levels(planes, n, csv_lo, csv_hi, csv_nb, binned);
        fputs("value", stdout);
        for (int k = 0; k < n; k++)
            printf(",%s", names[k]);
        putchar('\n');
        for (long b = 0; b < csv_nb; b++) {
            long first, last;
            bin_bounds(csv_lo, csv_hi, csv_nb, b, &first, &last);
            printf("%ld", first);
            for (int k = 0; k < n; k++)
                printf(",%" PRIu32, binned[(size_t)k * csv_nb + b]);
            putchar('\n');
        }
    } else {
        char shown[4096];
        printf("%s: %dx%d %s, %d-bit, %" PRIu64 " pixels (computed on the %s)\n\n",
               imgpu_escape(c->pos[0], shown, sizeof shown), in->width,
               in->height, imgpu_image_layout_name(in->channels), in->depth,
               (uint64_t)in->width * (uint64_t)in->height, used == IMGPU_DEVICE_CUDA ? "GPU" : "CPU");
        printf("%-8s %6s %6s %11s %11s %7s\n", "channel", "min", "max", "mean", "stddev", "median");
        uint64_t totals[5] = {0};
        for (int k = 0; k < n; k++) {
            uint64_t total = 0, cum = 0;
            double sum = 0, sumsq = 0;
            long mn = -1, mx = -1, med = -1;
            for (long v = 0; v < L; v++)
                if (planes[k][v]) {
                    total += planes[k][v];
                    sum += (double)v * planes[k][v];
                    if (mn < 0)
                        mn = v;
                    mx = v;
                }
            totals[k] = total;
            const double mean = total ? sum / (double)total : 0;
            for (long v = 0; v < L; v++) {
                sumsq += ((double)v - mean) * ((double)v - mean) * planes[k][v];
                cum += planes[k][v];
                if (med < 0 && 2 * cum >= total)
                    med = v;
            }
            printf("%-8s %6ld %6ld %11.2f %11.2f %7ld\n", names[k], mn, mx, mean,
                   total ? sqrt(sumsq / (double)total) : 0.0, med);
        }
        const char *note = !data_range ? "" : c->bins && width == c->bins ? "around the data's range"
                                                                         : "the data's range";
        bin_levels(planes, n, lo, hi, table_nb, binned);
        if (c->bins)
            printf("\n%ld bins over levels %ld..%ld (%s%spixel counts):\n%-13s", table_nb, lo, hi, note,
                   *note ? "; " : "", "levels");
        else
            printf("\n%% of pixels in %ld bins over levels %ld..%ld%s%s%s:\n%-13s", table_nb, lo, hi,
                   *note ? " (" : "", note, *note ? ")" : "", "levels");
        for (int k = 0; k < n; k++)
            printf(c->bins ? " %10s" : " %6s", names[k]);
        putchar('\n');
        for (long b = 0; b < table_nb; b++) {
            long first, last;
            bin_bounds(lo, hi, table_nb, b, &first, &last);
            printf("%6ld-%-6ld", first, last);
            for (int k = 0; k < n; k++) {
                const uint32_t v = binned[(size_t)k * table_nb + b];
                if (c->bins)
                    printf(" %10" PRIu32, v);
                else
                    printf(" %6.2f", totals[k] ? 100.0 * (double)v / (double)totals[k] : 0.0);
            }
            putchar('\n');
        }
    }
    ok = 1;
done:
    imgpu_histogram_full_free(&f);
    free(binned);
    return ok ? finish_stdout() : fail();
}

static int cmd_histogram(const cli *c)
{
    imgpu_image *in = NULL;
    imgpu_histogram h;
    imgpu_device used = IMGPU_DEVICE_CPU;
    int ok = 0;

    in = load_input(c, NULL, 0, NULL);
    if (!in)
        goto done;
    if (in->depth == 16 || c->bins || c->have_range) {
        int rc = histogram_binned(c, in);
        imgpu_image_free(in);
        return rc;
    }
    memset(&h, 0, sizeof h);
    if (imgpu_histogram_compute(in, c->device, &h, &used) < 0)
        goto done;
    if (c->plot) {
        /* Write the plot before printing, so a failed save leaves no half report. */
        hist_column cols[6];
        const char *names[6];
        const uint32_t *series[6];
        const int n = hist_columns(&h, cols);
        for (int k = 0; k < n; k++) {
            names[k] = cols[k].name;
            series[k] = cols[k].bins;
        }
        if (save_plot(c, 8, 0, 255, 256, n, names, series, 0) < 0)
            goto done;
    }
    if (c->csv)
        print_csv(&h);
    else
        print_table(c->pos[0], in, &h, used);
    ok = 1;
done:
    imgpu_image_free(in);
    return ok ? finish_stdout() : fail();
}

const command imgpu__cli_histogram = {"histogram", 1, "IN", "histogram as a table, CSV or plot",
                                      s_help_histogram, cmd_histogram};

/* plot.c — renders histogram bins as a chart image (see plot.h for what is drawn and how
 * bins map to pixels). Plain pixel drawing on an RGB canvas: rectangles and the shared 3x5
 * bitmap font (src/core/font.h) at twice its size. */
#include "plot.h"
#include "error.h"
#include "font.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    FONT_SCALE = 2,
    CHAR_W = 4 * FONT_SCALE,     /* advance per character */
    TEXT_H = 5 * FONT_SCALE,
    PLOT_MAX_W = 640,            /* pixel columns at most; bars are whole columns wide */
    PLOT_H = 150,
    MARGIN_L = 64,               /* y tick labels: up to 5 characters ("12.5K") + tick */
    MARGIN_R = 48,               /* "100%" of the CDF axis; half of the last x label */
    PAD = 8,
    TITLE_H = PAD + 2 * (TEXT_H + 6) + 4,
    PANEL_T = TEXT_H + 10,       /* the panel's heading above its plot */
    PANEL_B = 30,                /* tick marks + x tick labels */
    PANEL_H = PANEL_T + PLOT_H + PANEL_B,
    MIN_CANVAS_W = 480,          /* room for the title when there are few columns */
};

typedef struct rgb { unsigned char r, g, b; } rgb;

static const rgb c_white = {255, 255, 255}, c_axis = {64, 64, 64}, c_plot_bg = {244, 244, 244},
                 c_grid = {226, 226, 226}, c_ink = {32, 32, 32}, c_cdf = {235, 130, 0};

static void fill_rect(imgpu_image *im, int x0, int y0, int w, int h, rgb c)
{
    /* Clip here so callers can draw glyphs hanging past an edge without checks. */
    int x1 = x0 + w, y1 = y0 + h;
    if (x0 < 0) x0 = 0;
    if (y0 < 0) y0 = 0;
    if (x1 > im->width) x1 = im->width;
    if (y1 > im->height) y1 = im->height;
    for (int y = y0; y < y1; y++) {
        unsigned char *p = imgpu_image_row(im, y) + (size_t)x0 * 3;
        for (int x = x0; x < x1; x++, p += 3) {
            p[0] = c.r;
            p[1] = c.g;
            p[2] = c.b;
        }
    }
}

static int text_width(const char *s)
{
    int n = (int)strlen(s);
    return n ? n * CHAR_W - FONT_SCALE : 0;
}

static void draw_text(imgpu_image *im, int x, int y, const char *s, rgb c)
{
    for (; *s; s++, x += CHAR_W) {
        const char *g = imgpu__font_glyph((unsigned char)*s);
        for (int row = 0; row < 5; row++)
            for (int col = 0; col < 3; col++)
                if ((g[row] - '0') & (4 >> col))
                    fill_rect(im, x + col * FONT_SCALE, y + row * FONT_SCALE, FONT_SCALE,
                              FONT_SCALE, c);
    }
}

/* 1, 2, 2.5 (from 10 up) or 5 times a power of ten, >= x and >= 1: tick steps that read well. */
static uint64_t nice_step(double x, int allow_2_5)
{
    uint64_t p = 1;
    if (!(x > 1))
        return 1;
    while ((double)p * 10 <= x)
        p *= 10;
    if ((double)p >= x) return p;
    if ((double)(2 * p) >= x) return 2 * p;
    if (allow_2_5 && p >= 10 && (double)(5 * p / 2) >= x) return 5 * p / 2;
    if ((double)(5 * p) >= x) return 5 * p;
    return 10 * p;
}

/* Counts as tick labels: 2500, 12.5K, 137.5K, 1M, 4.3G. Below 1000 of a unit, %.4g never
 * switches to exponent notation for these tick values. */
static void format_count(uint64_t v, char buf[16])
{
    if (v < 10000)
        snprintf(buf, 16, "%llu", (unsigned long long)v);
    else if (v < 1000000)
        snprintf(buf, 16, "%.4gK", (double)v / 1e3);
    else if (v < 1000000000)
        snprintf(buf, 16, "%.4gM", (double)v / 1e6);
    else
        snprintf(buf, 16, "%.4gG", (double)v / 1e9);
}

static rgb series_color(const char *name)
{
    if (!strcmp(name, "R")) return (rgb){210, 40, 40};
    if (!strcmp(name, "G")) return (rgb){40, 150, 40};
    if (!strcmp(name, "B")) return (rgb){40, 80, 210};
    if (!strcmp(name, "alpha")) return (rgb){150, 150, 150};
    if (!strcmp(name, "Y")) return (rgb){40, 40, 40};
    return (rgb){80, 80, 80}; /* gray */
}

/* How bins become pixel columns (plot.h): `bw` columns per bin, or one column per `group`
 * bins. */
typedef struct geometry {
    long nb, group, ncols;
    int bw, w;                   /* bar width, plot width in pixels */
    double px_per_level;
} geometry;

static geometry make_geometry(const imgpu_histogram_plot_spec *s)
{
    geometry g;
    g.nb = s->bins;
    if (g.nb <= PLOT_MAX_W) {
        g.group = 1;
        g.ncols = g.nb;
        g.bw = (int)(PLOT_MAX_W / g.nb);
    } else {
        g.group = (g.nb + PLOT_MAX_W - 1) / PLOT_MAX_W;
        g.ncols = (g.nb + g.group - 1) / g.group;
        g.bw = 1;
    }
    g.w = (int)g.ncols * g.bw;
    /* a column is group bins, a bin (hi - lo + 1) / nb levels */
    g.px_per_level = (double)g.bw * (double)g.nb / ((double)g.group * (double)(s->hi - s->lo + 1));
    return g;
}

static void draw_panel(imgpu_image *im, int top, const imgpu_histogram_plot_spec *s,
                       const geometry *g, const imgpu_plot_series *ser, uint32_t *col)
{
    const rgb color = series_color(ser->name);
    const int x0 = MARGIN_L, ptop = top + PANEL_T, base = ptop + PLOT_H; /* first row below */
    char buf[64];

    /* Heading: the channel and what y means; "CDF %" over the right axis. */
    const rgb head = color.r + color.g + color.b > 400 ? c_ink : color;
    snprintf(buf, sizeof buf, "%s: pixels per bin%s", ser->name, s->log_y ? " (log scale)" : "");
    draw_text(im, x0, top + 4, buf, head);
    if (s->cdf)
        draw_text(im, x0 + g->w - text_width("CDF %") / 2, top + 4, "CDF %", c_cdf);

    /* Column values: a bin, or the tallest of a group of bins. */
    uint64_t maxc = 0, total = 0;
    for (long j = 0; j < g->ncols; j++) {
        uint32_t m = 0;
        for (long b = j * g->group; b < (j + 1) * g->group && b < g->nb; b++)
            if (ser->counts[b] > m)
                m = ser->counts[b];
        col[j] = m;
        if (m > maxc)
            maxc = m;
    }
    for (long b = 0; b < g->nb; b++)
        total += ser->counts[b];

    fill_rect(im, x0, ptop, g->w, PLOT_H, c_plot_bg);

    /* y scale: linear 0..ytop with ticks every ystep, or decades 10^0..10^decades. */
    uint64_t ystep = 1, ytop = 1;
    int decades = 1;
    if (s->log_y) {
        uint64_t p = 10;
        while (p < maxc) {
            p *= 10;
            decades++;
        }
    } else if (maxc) {
        ystep = nice_step((double)maxc / 4, 1);
        ytop = (maxc + ystep - 1) / ystep * ystep;
    }
    const int nyt = s->log_y ? decades : (int)(ytop / ystep);
    uint64_t yval = 1;
    for (int i = 0; i <= nyt; i++) {
        const uint64_t v = s->log_y ? yval : (uint64_t)i * ystep;
        const int y = base - 1 - (int)((uint64_t)i * (PLOT_H - 1) / (uint64_t)nyt);
        if (i > 0)
            fill_rect(im, x0, y, g->w, 1, c_grid);
        fill_rect(im, x0 - 5, y, 4, 1, c_axis);
        format_count(v, buf);
        draw_text(im, x0 - 7 - text_width(buf), y - TEXT_H / 2, buf, c_ink);
        yval *= 10;
    }

    /* Bars, bottom up from row base - 1; the rounding never takes a bin with pixels to 0. */
    for (long j = 0; j < g->ncols; j++) {
        if (!col[j])
            continue;
        int h;
        if (s->log_y)
            h = (int)lround(log10((double)col[j]) / decades * PLOT_H);
        else /* 64-bit product: a 2^28-pixel bin times PLOT_H overflows 32 bits */
            h = (int)(((uint64_t)col[j] * PLOT_H + ytop / 2) / ytop);
        if (h < 1)
            h = 1;
        if (h > PLOT_H)
            h = PLOT_H;
        fill_rect(im, x0 + (int)j * g->bw, base - h, g->bw, h, color);
    }

    /* Axes: y along the left edge of the plot, x just under the bars. */
    fill_rect(im, x0 - 1, ptop, 1, PLOT_H + 1, c_axis);
    fill_rect(im, x0 - 1, base, g->w + 1, 1, c_axis);

    /* x ticks at multiples of a nice step (about 90 pixels apart), at the level's centre. */
    const uint64_t xstep = nice_step(90.0 / g->px_per_level, 0);
    for (uint64_t t = ((uint64_t)s->lo + xstep - 1) / xstep * xstep; t <= (uint64_t)s->hi; t += xstep) {
        const int cx = x0 + (int)floor(((double)t - (double)s->lo + 0.5) * g->px_per_level);
        fill_rect(im, cx, base + 1, 1, 4, c_axis);
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)t);
        draw_text(im, cx - text_width(buf) / 2, base + 8, buf, c_ink);
    }

    /* CDF: the share of the range's pixels up to the right edge of each column, linear
     * within a bar; each column joins its value to the previous one, so the curve has no
     * gaps. 0% is the bottom row of the plot, 100% its top row. */
    if (s->cdf) {
        fill_rect(im, x0 + g->w, ptop, 1, PLOT_H + 1, c_cdf);
        for (int i = 0; i <= 4; i++) {
            const int y = base - 1 - i * (PLOT_H - 1) / 4;
            fill_rect(im, x0 + g->w + 1, y, 4, 1, c_cdf);
            snprintf(buf, sizeof buf, "%d%%", 25 * i);
            draw_text(im, x0 + g->w + 7, y - TEXT_H / 2, buf, c_cdf);
        }
        if (total) {
            uint64_t cum = 0;
            int yprev = base - 1;
            for (long j = 0; j < g->ncols; j++) {
                const uint64_t before = cum;
                for (long b = j * g->group; b < (j + 1) * g->group && b < g->nb; b++)
                    cum += ser->counts[b];
                for (int k = 0; k < g->bw; k++) {
                    const double frac = ((double)before + (double)(cum - before) * (k + 1) / g->bw) /
                                        (double)total;
                    const int y = base - 1 - (int)lround(frac * (PLOT_H - 1));
                    const int y1 = yprev > y + 1 ? yprev : y + 1; /* two pixels thick at least */
                    fill_rect(im, x0 + (int)j * g->bw + k, y, 1, (y1 < base ? y1 : base - 1) - y + 1, c_cdf);
                    yprev = y;
                }
            }
        }
    }
}

/* The file's last path component, shortened from the left with "..." to `max` characters. */
static void title_name(const char *path, int max, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash && slash[1] ? slash + 1 : path;
    size_t n = strlen(name);
    if (max < 4)
        max = 4;
    if (n > (size_t)max)
        snprintf(out, size, "...%s", name + n - (size_t)(max - 3));
    else
        snprintf(out, size, "%s", name);
}

imgpu_image *imgpu__histogram_plot(const imgpu_histogram_plot_spec *s)
{
    if (s->nseries < 1 || s->nseries > 6 || s->lo < 0 || s->hi < s->lo || s->bins < 1 ||
        s->bins > s->hi - s->lo + 1) {
        imgpu_error("histogram plot: invalid layout (%d series, %ld bins over %ld..%ld)", s->nseries,
                    s->bins, s->lo, s->hi);
        return NULL;
    }
    const geometry g = make_geometry(s);
    int cw = MARGIN_L + g.w + MARGIN_R;
    if (cw < MIN_CANVAS_W)
        cw = MIN_CANVAS_W;
    uint32_t *col = malloc((size_t)g.ncols * sizeof *col);
    imgpu_image *im = col ? imgpu_image_new(cw, TITLE_H + s->nseries * PANEL_H, 3, 8) : NULL;
    if (!im) {
        if (!col)
            imgpu_error("histogram plot: out of memory");
        free(col);
        return NULL;
    }
    fill_rect(im, 0, 0, im->width, im->height, c_white);

    /* Title: "file: channels", then "depth, bins over lo..hi". */
    char chans[64] = "", name[160], line[256];
    for (int i = 0; i < s->nseries; i++) {
        strcat(chans, i ? ", " : "");
        strncat(chans, s->series[i].name, 8);
    }
    const int max_chars = (cw - 2 * PAD) / CHAR_W - (int)strlen(chans) - 2;
    title_name(s->file ? s->file : "", max_chars < (int)sizeof name - 1 ? max_chars : (int)sizeof name - 1,
               name, sizeof name);
    snprintf(line, sizeof line, "%s: %s", name, chans);
    draw_text(im, PAD, PAD, line, c_ink);
    snprintf(line, sizeof line, "%d-bit, %ld bin%s over %ld..%ld%s", s->depth, s->bins, s->bins == 1 ? "" : "s",
             s->lo, s->hi, s->data_range ? " (the data's range)" : "");
    draw_text(im, PAD, PAD + TEXT_H + 6, line, c_ink);

    for (int i = 0; i < s->nseries; i++)
        draw_panel(im, TITLE_H + i * PANEL_H, s, &g, &s->series[i], col);
    free(col);
    return im;
}

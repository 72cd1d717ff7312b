/* clahe.c — reference CLAHE (contrast-limited adaptive histogram equalization) with OpenCV's
 * cv::createCLAHE(clipLimit, tileGridSize)->apply() semantics, on 8-bit (256 bins) and 16-bit
 * (65536 bins) planes. The CUDA kernels (kernels/clahe.cu) follow this file step for step and
 * are held to it bit for bit.
 *
 * Geometry (imgpu_clahe_geometry in the op floor, op.c, shared with the CUDA host side), for
 * a w x h plane and a tiles_x x tiles_y grid:
 *   - when w % tiles_x == 0 and h % tiles_y == 0 the tiles are w/tiles_x x h/tiles_y pixels;
 *     otherwise the histograms are taken from the image padded at the bottom by
 *     tiles_y - h % tiles_y rows and at the right by tiles_x - w % tiles_x columns (note: a
 *     FULL extra tile row of padding when h is already a multiple but w is not — OpenCV's
 *     rule) with reflect-101 borders (..., 2, 1 | 0, 1, 2, ..., n-2, n-1 | n-2, ...), and
 *     the tiles are ext_w/tiles_x x ext_h/tiles_y.
 *   - clip_limit = max(1, (int)(clip * tile_area / bins)) in double when clip > 0; else 0
 *     (no clipping). lut_scale = (float)(bins - 1) / tile_area, a float division.
 * Tile LUT (imgpu_cpu_clahe_tile_lut), per tile histogram h[0..bins):
 *   - clipped = sum over bins of max(0, h[i] - clip_limit); each such bin becomes clip_limit;
 *   - every bin gets clipped / bins; the residual r = clipped % bins goes one by one to bins
 *     0, step, 2*step, ... (r of them) with step = max(bins / r, 1);
 *   - lut[i] = saturate(round_half_even((float)cdf(i) * lut_scale)), cdf inclusive.
 * Interpolation (every output pixel, in float, in exactly this order, no FMA):
 *   txf = (float)x * inv_tw - 0.5f; tx1 = floor(txf); xa = txf - tx1; xa1 = 1 - xa;
 *   tx2 = min(tx1 + 1, tiles_x - 1); tx1 = max(tx1, 0)      (the same for y: ya, ya1)
 *   res = (L[ty1][tx1][v]*xa1 + L[ty1][tx2][v]*xa) * ya1 + (L[ty2][tx1][v]*xa1 + L[ty2][tx2][v]*xa) * ya
 *   out = saturate(round_half_even(res)).
 * OpenCV's 8-bit SIMD interpolation may round the last bit differently: within 1 level.
 * Color: luminance mode runs CLAHE on Y of BT.601 YCbCr (color.c / color16.c) and converts
 * back — OpenCV's cvtColor -> CLAHE -> cvtColor, always, even for a constant Y (CLAHE of a
 * constant is not the identity); per-channel mode runs it on R, G and B. Alpha is copied. */
#include "cpu.h"
#include "ycc.h"
#include "error.h"
#include "parallel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int imgpu_cpu_reflect101(int p, int len)
{
    if (len == 1)
        return 0;
    while (p < 0 || p >= len) {
        if (p < 0)
            p = -p;
        else
            p = 2 * (len - 1) - p;
    }
    return p;
}

void imgpu_cpu_clahe_tile_lut(uint32_t *hist, const imgpu_clahe_geom *g, uint16_t *lut)
{
    const int bins = g->bins;
    if (g->clip_limit > 0) {
        const uint32_t lim = (uint32_t)g->clip_limit;
        uint32_t clipped = 0;
        for (int i = 0; i < bins; i++)
            if (hist[i] > lim) {
                clipped += hist[i] - lim;
                hist[i] = lim;
            }
        const uint32_t batch = clipped / (uint32_t)bins, residual = clipped % (uint32_t)bins;
        for (int i = 0; i < bins; i++)
            hist[i] += batch;
        if (residual) {
            const uint32_t step = (uint32_t)bins / residual > 1 ? (uint32_t)bins / residual : 1;
            uint32_t left = residual;
            for (uint32_t i = 0; i < (uint32_t)bins && left > 0; i += step, left--)
                hist[i]++;
        }
    }
    const long maxv = bins - 1;
    uint32_t sum = 0;
    for (int i = 0; i < bins; i++) {
        sum += hist[i];
        const long v = lrintf((float)sum * g->lut_scale); /* product rounded to float first */
        lut[i] = (uint16_t)(v < 0 ? 0 : v > maxv ? maxv : v);
    }
}

/* Both passes of a plane run on every core (parallel.h): the tile LUTs by rows of tiles
 * (each part with its own histogram scratch; every tile's LUT is written by exactly one
 * part), the interpolation by output rows. Per tile and per pixel the code is unchanged. */
typedef struct plane_job {
    const uint16_t *src;
    const imgpu_clahe_geom *g;
    uint16_t *dst, *luts;
    uint32_t *hist; /* one bins-long scratch histogram per part */
    const int *colx;
    /* per output column, the x half of the blend, computed once per plane by the same
     * statements the pixel loop used to evaluate per pixel (so the same values) */
    const int *tx1s, *tx2s;
    const float *xas, *xa1s;
} plane_job;

/* 1. one LUT per tile, from the (padded) tile's histogram: tile rows j0..j1-1 */
static void tile_lut_rows(void *ctx, int part, int j0, int j1)
{
    const plane_job *jb = ctx;
    const imgpu_clahe_geom *g = jb->g;
    const int bins = g->bins, tx = g->tiles_x;
    uint32_t *hist = jb->hist + (size_t)part * bins;
    for (int j = j0; j < j1; j++)
        for (int i = 0; i < tx; i++) {
            memset(hist, 0, (size_t)bins * sizeof *hist);
            for (int y = j * g->tile_h; y < (j + 1) * g->tile_h; y++) {
                const uint16_t *row = jb->src + (size_t)imgpu_cpu_reflect101(y, g->h) * g->w;
                for (int x = i * g->tile_w; x < (i + 1) * g->tile_w; x++)
                    hist[row[jb->colx[x]]]++;
            }
            imgpu_cpu_clahe_tile_lut(hist, g, jb->luts + ((size_t)j * tx + i) * bins);
        }
}

/* Where sample i of one axis sits between tile centres: the two tiles around it (clamped to
 * the grid) and their weights a1 (t1) and a (t2). The same for x and y. */
static void blend_axis(int i, float inv, int tiles, int *t1, int *t2, float *a, float *a1)
{
    const float f = (float)i * inv - 0.5f;
    const int lo = (int)floorf(f);
    *a = f - (float)lo;
    *a1 = 1.0f - *a;
    *t1 = lo < 0 ? 0 : lo;
    *t2 = lo + 1 > tiles - 1 ? tiles - 1 : lo + 1;
}

/* 2. bilinear blend of the four nearest tiles' LUTs: output rows y0..y1-1 */
static void interp_rows(void *ctx, int part, int y0, int y1)
{
    (void)part;
    const plane_job *jb = ctx;
    const imgpu_clahe_geom *g = jb->g;
    const int bins = g->bins, tx = g->tiles_x, ty = g->tiles_y;
    const uint16_t *src = jb->src, *luts = jb->luts;
    uint16_t *dst = jb->dst;
    const long maxv = bins - 1;
    for (int y = y0; y < y1; y++) {
        int ty1, ty2;
        float ya, ya1;
        blend_axis(y, g->inv_th, ty, &ty1, &ty2, &ya, &ya1);
        const uint16_t *p1 = luts + (size_t)ty1 * tx * bins, *p2 = luts + (size_t)ty2 * tx * bins;
        for (int x = 0; x < g->w; x++) {
            const int tx1 = jb->tx1s[x], tx2 = jb->tx2s[x];
            const float xa = jb->xas[x], xa1 = jb->xa1s[x];
            const int v = src[(size_t)y * g->w + x];
            const size_t i1 = (size_t)tx1 * bins + v, i2 = (size_t)tx2 * bins + v;
            const float top = (float)p1[i1] * xa1 + (float)p1[i2] * xa;
            const float bot = (float)p2[i1] * xa1 + (float)p2[i2] * xa;
            const float res = top * ya1 + bot * ya;
            const long r = lrintf(res);
            dst[(size_t)y * g->w + x] = (uint16_t)(r < 0 ? 0 : r > maxv ? maxv : r);
        }
    }
}

int imgpu_cpu_clahe_plane(const uint16_t *src, const imgpu_clahe_geom *g, uint16_t *dst)
{
    const int bins = g->bins, tx = g->tiles_x, ty = g->tiles_y;
    const size_t nluts = (size_t)tx * ty;
    /* a row of tiles is tile_h x ext_w samples of work, plus a histogram to clear per tile */
    const int tparts = imgpu__cpu_parts(ty, (size_t)g->tile_h * g->ext_w + (size_t)tx * bins, 0);
    uint16_t *luts = malloc(nluts * bins * sizeof *luts);
    uint32_t *hist = malloc((size_t)tparts * bins * sizeof *hist);
    int *colx = malloc((size_t)g->ext_w * sizeof *colx);
    int *tx1s = malloc((size_t)g->w * 2 * sizeof *tx1s);
    float *xas = malloc((size_t)g->w * 2 * sizeof *xas);
    if (!luts || !hist || !colx || !tx1s || !xas) {
        free(luts);
        free(hist);
        free(colx);
        free(tx1s);
        free(xas);
        return imgpu_error("clahe: out of memory");
    }
    for (int x = 0; x < g->ext_w; x++)
        colx[x] = imgpu_cpu_reflect101(x, g->w);
    int *tx2s = tx1s + g->w;
    float *xa1s = xas + g->w;
    for (int x = 0; x < g->w; x++)
        blend_axis(x, g->inv_tw, tx, &tx1s[x], &tx2s[x], &xas[x], &xa1s[x]);
    plane_job jb = {.src = src, .g = g, .dst = dst, .luts = luts, .hist = hist, .colx = colx,
                    .tx1s = tx1s, .tx2s = tx2s, .xas = xas, .xa1s = xa1s};
    imgpu__cpu_parallel_rows(ty, tparts, tile_lut_rows, &jb);
    imgpu__cpu_parallel_rows(g->h, imgpu__cpu_parts(g->h, (size_t)g->w, 0), interp_rows, &jb);
    free(luts);
    free(hist);
    free(colx);
    free(tx1s);
    free(xas);
    return 0;
}

/* 8-bit luminance mode's conversions (ycc.h) as table lookups with the same integer results:
 * Cr and Cb depend only on R - Y and B - Y (-255..255); the inverse's red and blue terms only
 * on Cr and Cb, and its green term is the descale of two products tabled by Cr and Cb (a
 * descale of a sum is not a sum of descales). tests/unit/test_cpu_clahe.c checks every colour
 * against ycc.h's conversions. */
struct clahe_ycc {
    uint8_t cr[511], cb[511];  /* index R - Y + 255, B - Y + 255 */
    int16_t r[256], b[256];    /* descale14(CR2R (Cr - 128)), descale14(CB2B (Cb - 128)) */
    int32_t gr[256], gb[256];  /* CR2G (Cr - 128), CB2G (Cb - 128) */
    uint8_t sat[1024];         /* v + 384 -> v saturated to 0..255 (v in -384..639) */
};

static void clahe_ycc_init(struct clahe_ycc *t)
{
    for (int d = -255; d <= 255; d++) {
        t->cr[d + 255] = imgpu__sat_u8(imgpu__descale14(d * IMGPU_Y2CR + (128 << IMGPU_YCC_SHIFT)));
        t->cb[d + 255] = imgpu__sat_u8(imgpu__descale14(d * IMGPU_Y2CB + (128 << IMGPU_YCC_SHIFT)));
    }
    for (int v = 0; v < 256; v++) {
        t->r[v] = (int16_t)imgpu__descale14(IMGPU_CR2R * (v - 128));
        t->b[v] = (int16_t)imgpu__descale14(IMGPU_CB2B * (v - 128));
        t->gr[v] = IMGPU_CR2G * (v - 128);
        t->gb[v] = IMGPU_CB2G * (v - 128);
    }
    for (int v = 0; v < 1024; v++)
        t->sat[v] = imgpu__sat_u8(v - 384);
}

/* The colour conversions and plane copies of imgpu_cpu_clahe, by rows on every core. */
typedef struct conv_job {
    const imgpu_image *in;
    imgpu_image *out;
    uint16_t *plane, *res, *cb, *cr;
    int k;
    const struct clahe_ycc *t;   /* 8-bit luminance mode */
} conv_job;

IMGPU__CPU_WIDE static void to_ycc_rows(void *ctx, int part, int y0, int y1)
{
    (void)part;
    const conv_job *j = ctx;
    const imgpu_image *in = j->in;
    const int w = in->width, c = in->channels, d = in->depth;
    uint16_t *plane = j->plane, *cb = j->cb, *cr = j->cr;
    for (int y = y0; y < y1; y++) {
        const unsigned char *row = imgpu_image_row(in, y);
        const size_t i0 = (size_t)y * w;
        if (d == 16) {
            for (int x = 0; x < w; x++) {
                const size_t i = i0 + x, s = (size_t)x * c;
                imgpu_cpu_rgb16_to_ycbcr((uint16_t)imgpu_sample_get(row, d, s),
                                         (uint16_t)imgpu_sample_get(row, d, s + 1),
                                         (uint16_t)imgpu_sample_get(row, d, s + 2), &plane[i], &cb[i], &cr[i]);
            }
            continue;
        }
        const unsigned char *p = row;
        uint16_t *restrict pl = plane + i0;
        if (c == 3) { /* the same statement with a constant step: vectorized */
            for (int x = 0; x < w; x++)
                pl[x] = imgpu__rgb_to_y(p[3 * x], p[3 * x + 1], p[3 * x + 2]);
            continue;
        }
        for (int x = 0; x < w; x++, p += c)
            pl[x] = imgpu__rgb_to_y(p[0], p[1], p[2]);   /* Cb, Cr: from_ycc_rows */
    }
}

IMGPU__CPU_WIDE static void from_ycc_rows(void *ctx, int part, int y0, int y1)
{
    (void)part;
    const conv_job *j = ctx;
    const int w = j->in->width, c = j->in->channels, d = j->in->depth;
    const uint16_t *res = j->res, *cb = j->cb, *cr = j->cr;
    const struct clahe_ycc *t = j->t;
    for (int y = y0; y < y1; y++) {
        unsigned char *row = imgpu_image_row(j->out, y);
        const size_t i0 = (size_t)y * w;
        if (d == 16) {
            for (int x = 0; x < w; x++) {
                const size_t i = i0 + x, s = (size_t)x * c;
                uint16_t r, gg, b;
                imgpu_cpu_ycbcr16_to_rgb(res[i], cb[i], cr[i], &r, &gg, &b);
                imgpu_sample_put(row, d, s, r);
                imgpu_sample_put(row, d, s + 1, gg);
                imgpu_sample_put(row, d, s + 2, b);
            }
            continue;
        }
        /* 8 bits: Cb and Cr again from the input pixel (the same integers to_ycc_rows would
         * have stored: two planes less to write and read back) */
        const unsigned char *p = imgpu_image_row(j->in, y);
        unsigned char *q = row;
        if (c == 3) { /* RGB: ycc.h's statements themselves, no table: a loop that vectorizes */
            const uint16_t *rs = res + i0;
            for (int x = 0; x < w; x++) {
                const int r = p[3 * x], g = p[3 * x + 1], b = p[3 * x + 2];
                uint8_t o[3];
                imgpu__ycc_replace_y(r, b, imgpu__descale14(IMGPU_R2Y * r + IMGPU_G2Y * g + IMGPU_B2Y * b), rs[x], o);
                q[3 * x] = o[0];
                q[3 * x + 1] = o[1];
                q[3 * x + 2] = o[2];
            }
            continue;
        }
        for (int x = 0; x < w; x++, p += c, q += c) {
            /* exactly imgpu__rgb_to_ycbcr's Cb and Cr, then imgpu__ycbcr_to_rgb */
            const int r = p[0], b = p[2], yy = imgpu__rgb_to_y(p[0], p[1], p[2]);
            const int y2 = res[i0 + x] + 384, vr = t->cr[r - yy + 255], vb = t->cb[b - yy + 255];
            q[0] = t->sat[y2 + t->r[vr]];
            q[1] = t->sat[y2 + imgpu__descale14(t->gr[vr] + t->gb[vb])];
            q[2] = t->sat[y2 + t->b[vb]];
        }
    }
}

static void get_plane_rows(void *ctx, int part, int y0, int y1)
{
    (void)part;
    const conv_job *j = ctx;
    const int w = j->in->width, c = j->in->channels, d = j->in->depth, k = j->k;
    for (int y = y0; y < y1; y++) {
        const unsigned char *row = imgpu_image_row(j->in, y);
        for (int x = 0; x < w; x++)
            j->plane[(size_t)y * w + x] = (uint16_t)imgpu_sample_get(row, d, (size_t)x * c + k);
    }
}

static void put_plane_rows(void *ctx, int part, int y0, int y1)
{
    (void)part;
    const conv_job *j = ctx;
    const int w = j->in->width, c = j->in->channels, d = j->in->depth, k = j->k;
    for (int y = y0; y < y1; y++) {
        unsigned char *row = imgpu_image_row(j->out, y);
        for (int x = 0; x < w; x++)
            imgpu_sample_put(row, d, (size_t)x * c + k, j->res[(size_t)y * w + x]);
    }
}

imgpu_image *imgpu_cpu_clahe(const imgpu_image *in, const imgpu_clahe_params *p)
{
    imgpu_clahe_geom g;
    if (imgpu_clahe_geometry(in->width, in->height, in->depth, p, &g) < 0)
        return NULL;
    if (p->mode != IMGPU_MODE_LUMINANCE && p->mode != IMGPU_MODE_PER_CHANNEL) {
        imgpu_error("clahe: unknown mode %d", (int)p->mode);
        return NULL;
    }
    const int w = in->width, h = in->height, c = in->channels;
    const size_t n = (size_t)w * h;
    imgpu_image *out = imgpu__cpu_image_for(in); /* every colour sample is written; alpha copied */
    uint16_t *plane = malloc(n * sizeof *plane), *res = malloc(n * sizeof *res);
    uint16_t *cb = NULL, *cr = NULL;
    if (!out || !plane || !res) {
        imgpu_error("clahe: out of memory");
        goto fail;
    }
    const int color = imgpu_image_color_channels(in);
    const int parts = imgpu__cpu_parts(h, (size_t)w * c, 0);
    conv_job j = {.in = in, .out = out, .plane = plane, .res = res};
    if (color == 3 && p->mode == IMGPU_MODE_LUMINANCE) {
        if (in->depth == 16) {   /* 8 bits recompute them from the input (from_ycc_rows) */
            cb = malloc(n * sizeof *cb);
            cr = malloc(n * sizeof *cr);
            if (!cb || !cr) {
                imgpu_error("clahe: out of memory");
                goto fail;
            }
        }
        struct clahe_ycc t;
        clahe_ycc_init(&t);
        j.cb = cb;
        j.cr = cr;
        j.t = &t;
        imgpu__cpu_parallel_rows(h, parts, to_ycc_rows, &j);
        if (imgpu_cpu_clahe_plane(plane, &g, res) < 0)
            goto fail;
        imgpu__cpu_parallel_rows(h, parts, from_ycc_rows, &j);
    } else {
        for (int k = 0; k < color; k++) {
            j.k = k;
            imgpu__cpu_parallel_rows(h, parts, get_plane_rows, &j);
            if (imgpu_cpu_clahe_plane(plane, &g, res) < 0)
                goto fail;
            imgpu__cpu_parallel_rows(h, parts, put_plane_rows, &j);
        }
    }
    free(plane);
    free(res);
    free(cb);
    free(cr);
    return out;
fail:
    imgpu_image_free(out);
    free(plane);
    free(res);
    free(cb);
    free(cr);
    return NULL;
}

static imgpu_image *run(const imgpu_image *in, const imgpu_op *op) { return imgpu_cpu_clahe(in, &op->u.clahe); }

/* The run entry (ops_table.c). */
const imgpu_cpu_op imgpu__cpu_op_clahe = {IMGPU_OP_CLAHE, run};

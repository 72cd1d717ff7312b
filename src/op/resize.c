/* resize.c — the op "resize": cv2.resize's semantics (INTER_NEAREST_EXACT, INTER_LINEAR,
 * INTER_CUBIC, INTER_AREA, INTER_LANCZOS4). Its constructor, the sizing rules, the tables both
 * backends run from (resize_tab.h: indices and fixed-point / float coefficients, computed here
 * once, with OpenCV's arithmetic) and its descriptor. The CPU backend runs it in
 * src/backend/cpu/resize.c (which states the rules), CUDA in src/backend/cuda/resize.c and
 * kernels/resize.cu. */
#include "op_table.h"
#include "resize_tab.h"
#include "error.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The coefficients are computed in float exactly as OpenCV does: no fused multiply-add. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

imgpu_op imgpu_op_resize(int width, int height, imgpu_resize_filter filter)
{
    imgpu_op op;
    memset(&op, 0, sizeof op);
    op.kind = IMGPU_OP_RESIZE;
    op.u.resize.size_w = width;
    op.u.resize.size_h = height;
    op.u.resize.filter = (int)filter;
    return op;
}

static void defaults(imgpu_op *op) { *op = imgpu_op_resize(0, 0, IMGPU_RESIZE_BILINEAR); }

/* ---- sizing --------------------------------------------------------------------------------- */

static int n_ways(const imgpu_resize_params *p)
{
    return (p->size_w > 0 || p->size_h > 0) + (p->width > 0 || p->height > 0) + (p->scale > 0) +
           (p->fit_w > 0 || p->fit_h > 0);
}

static int check(const imgpu_op *op)
{
    /* 0 is "not given" (the op table's default of every parameter must be a value it takes:
     * nothing given is the input's size, a copy); a given size must have no side of 0 */
    const imgpu_resize_params *p = &op->u.resize;
    if (n_ways(p) > 1)
        return imgpu_error("resize: give one of --size, --width/--height, --scale or --fit");
    if ((p->size_w > 0) != (p->size_h > 0) || (p->fit_w > 0) != (p->fit_h > 0))
        return imgpu_error("resize: a size of 0 pixels (--size and --fit need both sides)");
    if (p->size_w < 0 || p->size_h < 0 || p->width < 0 || p->height < 0 || p->fit_w < 0 || p->fit_h < 0)
        return imgpu_error("resize: a negative size");
    if (!(p->scale == 0 || (p->scale > 0 && p->scale <= 1e6)))
        return imgpu_error("resize: invalid --scale (a factor over 0, up to 1e6)");
    if (p->filter < 0 || p->filter > IMGPU_RESIZE_LANCZOS)
        return imgpu_error("resize: unknown filter");
    if (p->antialias && p->filter == IMGPU_RESIZE_NEAREST)
        return imgpu_error("resize: --antialias takes --filter bilinear, bicubic, lanczos or area, not nearest");
    return 0;
}

/* x rounded half up, at least 1 (a side of a kept aspect ratio) */
static double keep_side(double x) { return fmax(1.0, floor(x + 0.5)); }

/* The result in double (the plan refuses one beyond its limits before anything is sized). */
static void dims(int w, int h, const imgpu_resize_params *p, double *ow, double *oh)
{
    *ow = w;
    *oh = h;
    if (p->size_w > 0 || p->size_h > 0) {
        *ow = p->size_w;
        *oh = p->size_h;
    } else if (p->width > 0 && p->height > 0) {
        *ow = p->width;
        *oh = p->height;
    } else if (p->width > 0) {
        *ow = p->width;
        *oh = keep_side((double)h * p->width / w);
    } else if (p->height > 0) {
        *oh = p->height;
        *ow = keep_side((double)w * p->height / h);
    } else if (p->fit_w > 0 || p->fit_h > 0) {
        if ((double)p->fit_w * h <= (double)p->fit_h * w) { /* the width limits */
            *ow = p->fit_w;
            *oh = fmin(p->fit_h, keep_side((double)h * p->fit_w / w));
        } else {
            *oh = p->fit_h;
            *ow = fmin(p->fit_w, keep_side((double)w * p->fit_h / h));
        }
    } else if (p->scale > 0) {
        /* cv2: dsize = saturate_cast<int>(ssize * fx), rounded half to even; at least 1 */
        *ow = fmax(1.0, nearbyint((double)w * p->scale));
        *oh = fmax(1.0, nearbyint((double)h * p->scale));
    }
    if (!(*ow >= 1))
        *ow = 1;
    if (!(*oh >= 1))
        *oh = 1;
}

static void shape(int w, int h, const imgpu_op *op, double *ow, double *oh) { dims(w, h, &op->u.resize, ow, oh); }

static int to_int(double x) { return x >= INT_MAX ? INT_MAX : (int)x; }

void imgpu_resize_geometry(int w, int h, const imgpu_resize_params *p, int *dw, int *dh, double *inv_x,
                           double *inv_y)
{
    double ow, oh;
    dims(w, h, p, &ow, &oh);
    *dw = to_int(ow);
    *dh = to_int(oh);
    /* cv2.resize(src, None, fx=F, fy=F) keeps inv_scale = F; with a dsize it is dsize / ssize */
    const int by_scale = p->scale > 0 && !(p->size_w > 0 || p->width > 0 || p->height > 0 || p->fit_w > 0);
    *inv_x = by_scale && nearbyint((double)w * p->scale) >= 1 ? p->scale : (double)*dw / w;
    *inv_y = by_scale && nearbyint((double)h * p->scale) >= 1 ? p->scale : (double)*dh / h;
}

static void out_size(int w, int h, const imgpu_op *op, int *ow, int *oh)
{
    double x, y;
    imgpu_resize_geometry(w, h, &op->u.resize, ow, oh, &x, &y);
}

/* ---- the tables (resize_tab.h; src/backend/cpu/resize.c states the rules) ---------------- */

static int ifloor_f(float v) { int i = (int)v; return i - (i > v); }
static int ifloor_d(double v) { int i = (int)v; return i - (i > v); }
static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }
static int16_t fix_coef(float c)
{
    /* saturate_cast<short>(c * INTER_RESIZE_COEF_SCALE): rounded half to even */
    long v = lrintf(c * 2048.0f);
    return (int16_t)(v < -32768 ? -32768 : v > 32767 ? 32767 : v);
}

static void cubic_coefs(float x, float *c)
{
    const float A = -0.75f;
    c[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
    c[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
    c[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
    c[3] = 1.f - c[0] - c[1] - c[2];
}

static void lanczos4_coefs(float x, float *c)
{
    static const double s45 = 0.70710678118654752440084436210485;
    static const double cs[8][2] = {{1, 0}, {-s45, -s45}, {0, 1}, {s45, -s45}, {-1, 0}, {s45, s45}, {0, -1}, {-s45, s45}};
    if (x < FLT_EPSILON) {
        for (int i = 0; i < 8; i++)
            c[i] = 0;
        c[3] = 1;
        return;
    }
    float sum = 0;
    const double y0 = -(x + 3) * M_PI * 0.25, s0 = sin(y0), c0 = cos(y0);
    for (int i = 0; i < 8; i++) {
        const double y = -(x + 3 - i) * M_PI * 0.25;
        c[i] = (float)((cs[i][0] * s0 + cs[i][1] * c0) / (y * y));
        sum += c[i];
    }
    sum = 1.f / sum;
    for (int i = 0; i < 8; i++)
        c[i] *= sum;
}

/* One axis of an interpolating filter (OpenCV's resize generic: linear, cubic, lanczos4, and
 * INTER_AREA's upscale, area_mode): s source, d output samples, `horiz`: the horizontal axis
 * (whose linear taps OpenCV pins at the borders). */
static void axis_interp(int s, int d, double scale, double inv, int filter, int area_mode, int horiz, int ks,
                        int32_t *xi, int32_t *wi, float *wf)
{
    float cbuf[8];
    const int k2 = ks / 2;
    for (int dx = 0; dx < d; dx++) {
        float fx;
        int sx;
        if (!area_mode) {
            fx = (float)((dx + 0.5) * scale - 0.5);
            sx = ifloor_f(fx);
            fx -= sx;
        } else {
            sx = ifloor_d(dx * scale);
            fx = (float)((dx + 1) - (sx + 1) * inv);
            fx = fx <= 0 ? 0.f : fx - ifloor_f(fx);
        }
        if (horiz && ks == 2) {
            if (sx < 0)
                fx = 0, sx = 0;
            if (sx >= s - 1)
                fx = 0, sx = s - 1;
        }
        if (filter == IMGPU_RESIZE_BICUBIC)
            cubic_coefs(fx, cbuf);
        else if (filter == IMGPU_RESIZE_LANCZOS)
            lanczos4_coefs(fx, cbuf);
        else
            cbuf[0] = 1.f - fx, cbuf[1] = fx;
        for (int k = 0; k < ks; k++) {
            xi[dx * ks + k] = clampi(sx - k2 + 1 + k, 0, s - 1);
            wi[dx * ks + k] = fix_coef(cbuf[k]);
            wf[dx * ks + k] = cbuf[k];
        }
    }
}

/* INTER_AREA's downscale by a non-integer factor (OpenCV computeResizeAreaTab): each output
 * sample's taps in ascending order, padded to ks with weight 0. Returns the taps needed (ks
 * NULL arrays: count only). */
static int axis_area(int s, int d, double scale, int ks, int32_t *xi, int32_t *wi, float *wf)
{
    int most = 0;
    for (int dx = 0; dx < d; dx++) {
        const double fsx1 = dx * scale, fsx2 = fsx1 + scale;
        const double cell = fmin(scale, s - fsx1);
        int sx1 = (int)ceil(fsx1), sx2 = ifloor_d(fsx2);
        sx2 = sx2 < s - 1 ? sx2 : s - 1;
        sx1 = sx1 < sx2 ? sx1 : sx2;
        int n = 0, last = clampi(sx1, 0, s - 1);
#define PUT(idx, a)                                        \
    do {                                                   \
        if (xi) {                                          \
            xi[dx * ks + n] = (idx);                       \
            wf[dx * ks + n] = (a);                         \
            wi[dx * ks + n] = 1;                           \
        }                                                  \
        last = (idx);                                      \
        n++;                                               \
    } while (0)
        if (sx1 - fsx1 > 1e-3)
            PUT(sx1 - 1, (float)((sx1 - fsx1) / cell));
        for (int sx = sx1; sx < sx2; sx++)
            PUT(sx, (float)(1.0 / cell));
        if (fsx2 - sx2 > 1e-3)
            PUT(sx2, (float)(fmin(fmin(fsx2 - sx2, 1.), cell) / cell));
#undef PUT
        if (xi)
            for (int k = n; k < ks; k++) {
                xi[dx * ks + k] = last;
                wf[dx * ks + k] = 0.f;
                wi[dx * ks + k] = 0;
            }
        most = n > most ? n : most;
    }
    return most;
}

/* INTER_AREA by a whole factor k (OpenCV resizeAreaFast): taps d*k .. d*k+k-1, those past the
 * image weighted 0. */
static void axis_box(int s, int d, int k, int32_t *xi, int32_t *wi, float *wf)
{
    for (int dx = 0; dx < d; dx++)
        for (int t = 0; t < k; t++) {
            const long sx = (long)dx * k + t;
            xi[dx * k + t] = sx < s ? (int)sx : s - 1;
            wi[dx * k + t] = sx < s;
            wf[dx * k + t] = sx < s ? 1.f : 0.f;
        }
}

/* --antialias: Pillow's filters (Image.resize; ImagingResample's precompute_coeffs), in double.
 * Box is area's (an average over the scaled cell). */
static double pil_box(double x) { return x > -0.5 && x <= 0.5 ? 1.0 : 0.0; }
static double pil_bilinear(double x)
{
    x = fabs(x);
    return x < 1.0 ? 1.0 - x : 0.0;
}
static double pil_bicubic(double x)
{
    const double a = -0.5;
    x = fabs(x);
    if (x < 1.0)
        return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
    if (x < 2.0)
        return (((x - 5) * x + 8) * x - 4) * a;
    return 0.0;
}
static double pil_sinc(double x)
{
    if (x == 0.0)
        return 1.0;
    x = x * M_PI;
    return sin(x) / x;
}
static double pil_lanczos(double x) { return -3.0 <= x && x < 3.0 ? pil_sinc(x) * pil_sinc(x / 3) : 0.0; }

typedef struct pil_filter {
    double (*f)(double);
    double support;
} pil_filter;

static pil_filter pil_for(int filter)
{
    switch (filter) {
    case IMGPU_RESIZE_BICUBIC: return (pil_filter){pil_bicubic, 2.0};
    case IMGPU_RESIZE_LANCZOS: return (pil_filter){pil_lanczos, 3.0};
    case IMGPU_RESIZE_AREA: return (pil_filter){pil_box, 0.5};
    default: return (pil_filter){pil_bilinear, 1.0};
    }
}

/* One output sample's source window [*lo, *hi) (Pillow's xmin, xmin + xmax). */
static void pil_window(int s, int dx, double scale, double support, int *lo, int *hi)
{
    const double center = (dx + 0.5) * scale;
    double a = center - support + 0.5, b = center + support + 0.5;
    int x0 = a >= (double)INT_MAX ? INT_MAX : a <= (double)INT_MIN ? INT_MIN : (int)a;
    int x1 = b >= (double)INT_MAX ? INT_MAX : b <= (double)INT_MIN ? INT_MIN : (int)b;
    x0 = x0 < 0 ? 0 : x0;
    x1 = x1 > s ? s : x1;
    *lo = x0;
    *hi = x1;
}

/* The taps an axis needs (the widest window), at least 1. */
static int pil_taps(int s, int d, const pil_filter *pf)
{
    if (s == d)
        return 1;
    const double scale = (double)(float)s / d, fs = scale < 1.0 ? 1.0 : scale, support = pf->support * fs;
    int most = 1;
    for (int dx = 0; dx < d; dx++) {
        int lo, hi;
        pil_window(s, dx, scale, support, &lo, &hi);
        most = hi - lo > most ? hi - lo : most;
    }
    return most;
}

/* One axis of --antialias: Pillow's window, weights filter((x - center + 0.5) / fs) normalized
 * by their sum, then (int)(w * 2^22 +- 0.5) (rounded half away from 0). The same size: one tap
 * of weight 1 (Pillow skips the pass; the identity is the same). Taps past the window: the
 * window's last index, weight 0. */
static int axis_pil(int s, int d, const pil_filter *pf, int ks, int32_t *xi, int32_t *wi, float *wf)
{
    const double one = (double)(1 << IMGPU_RSZ_PIL_BITS);
    if (s == d) {
        for (int dx = 0; dx < d; dx++)
            xi[dx] = dx, wi[dx] = 1 << IMGPU_RSZ_PIL_BITS, wf[dx] = 1.f;
        return 0;
    }
    /* Pillow: scale = (double)(in1 - in0) / outSize with float box edges */
    const double scale = (double)(float)s / d, fs = scale < 1.0 ? 1.0 : scale, support = pf->support * fs;
    const double ss = 1.0 / fs;
    double *w = malloc((size_t)ks * sizeof *w);
    if (!w)
        return imgpu_error("out of memory for the resize tables");
    for (int dx = 0; dx < d; dx++) {
        const double center = (dx + 0.5) * scale;
        int lo, hi;
        pil_window(s, dx, scale, support, &lo, &hi);
        int n = hi - lo;
        n = n > ks ? ks : n;
        double ww = 0.0;
        for (int k = 0; k < n; k++) {
            w[k] = pf->f((k + lo - center + 0.5) * ss);
            ww += w[k];
        }
        for (int k = 0; k < ks; k++) {
            double v = k < n ? w[k] : 0.0;
            if (k < n && ww != 0.0)
                v /= ww;
            const int last = n > 0 ? lo + n - 1 : lo;
            xi[dx * ks + k] = clampi(k < n ? lo + k : last, 0, s - 1);
            wi[dx * ks + k] = (int32_t)(v < 0 ? -0.5 + v * one : 0.5 + v * one);
            wf[dx * ks + k] = (float)v;
        }
    }
    free(w);
    return 0;
}

/* INTER_NEAREST_EXACT (OpenCV resizeNN_bitexact), in 64 bits. */
static void axis_nearest(int s, int d, int32_t *xi)
{
    const int64_t f = (((int64_t)s << 16) + d / 2) / d, f0 = f / 2 - 1; /* OpenCV 4.6 */
    for (int x = 0; x < d; x++) {
        int64_t sx = (f * x + f0) >> 16;
        xi[x] = (int32_t)(sx < 0 ? 0 : sx > s - 1 ? s - 1 : sx);
    }
}

void imgpu_resize_tab_free(imgpu_resize_tab *t)
{
    if (t) {
        free(t->block);
        t->block = NULL;
    }
}

int imgpu_resize_tab_build(int sw, int sh, int cn, int depth, const imgpu_resize_params *p, imgpu_resize_tab *t)
{
    memset(t, 0, sizeof *t);
    double inv_x, inv_y;
    imgpu_resize_geometry(sw, sh, p, &t->dw, &t->dh, &inv_x, &inv_y);
    t->sw = sw, t->sh = sh, t->cn = cn, t->depth = depth;
    const int dw = t->dw, dh = t->dh;
    int filter = p->filter;
    if (dw == sw && dh == sh) {
        t->method = IMGPU_RSZ_COPY;
        return 0;
    }
    const double scale_x = 1. / inv_x, scale_y = 1. / inv_y;
    const int iscale_x = (int)nearbyint(fmin(scale_x, INT_MAX)), iscale_y = (int)nearbyint(fmin(scale_y, INT_MAX));
    const int area_fast = fabs(scale_x - iscale_x) < DBL_EPSILON && fabs(scale_y - iscale_y) < DBL_EPSILON;
    const int pil = p->antialias && filter != IMGPU_RESIZE_NEAREST;
    const pil_filter pf = pil_for(filter);
    if (!pil && filter == IMGPU_RESIZE_BILINEAR && area_fast && iscale_x == 2 && iscale_y == 2)
        filter = IMGPU_RESIZE_AREA; /* as cv2 does */
    int kind; /* 0 nearest, 1 interp, 2 box, 3 area tab, 4 Pillow's (--antialias) */
    int ks_x = 1, ks_y = 1, area_mode = 0;
    if (pil) {
        kind = 4;
        ks_x = pil_taps(sw, dw, &pf);
        ks_y = pil_taps(sh, dh, &pf);
    } else if (filter == IMGPU_RESIZE_NEAREST)
        kind = 0;
    else if (filter == IMGPU_RESIZE_AREA && scale_x >= 1 && scale_y >= 1) {
        /* whole factors: integer box sums, while they fit int32 (OpenCV's would overflow
         * past that: those take the float weights, the same average) */
        const double maxv = depth == 16 ? 65535.0 : 255.0;
        kind = area_fast && maxv * iscale_x * (double)iscale_y < 2147483647.0 ? 2 : 3;
        if (kind == 2)
            ks_x = iscale_x, ks_y = iscale_y;
        else
            ks_x = axis_area(sw, dw, scale_x, 0, NULL, NULL, NULL), ks_y = axis_area(sh, dh, scale_y, 0, NULL, NULL, NULL);
    } else {
        kind = 1;
        area_mode = filter == IMGPU_RESIZE_AREA;
        ks_x = ks_y = filter == IMGPU_RESIZE_BICUBIC ? 4 : filter == IMGPU_RESIZE_LANCZOS ? 8 : 2;
    }
    if (ks_x < 1)
        ks_x = 1;
    if (ks_y < 1)
        ks_y = 1;
    t->kx = ks_x, t->ky = ks_y;
    const double nx = (double)dw * ks_x, ny = (double)dh * ks_y;
    const double tiles = ((double)dh + IMGPU_RSZ_TILE_H - 1) / IMGPU_RSZ_TILE_H;
    const double words = 3 * nx + 4 * ny + sh + floor(tiles);
    if (words > (double)INT_MAX / 2)
        return imgpu_error("resize: %dx%d to %dx%d needs tables too large", sw, sh, dw, dh);
    t->o_xi = 0;
    t->o_xwi = (int)nx;
    t->o_xwf = (int)(2 * nx);
    t->o_yi = (int)(3 * nx);
    t->o_ywi = (int)(3 * nx + ny);
    t->o_ywf = (int)(3 * nx + 2 * ny);
    t->o_yc = (int)(3 * nx + 3 * ny);
    t->o_hrow = (int)(3 * nx + 4 * ny);
    t->o_tile = (int)(3 * nx + 4 * ny + sh);
    t->block_words = (int)words;
    t->block = calloc((size_t)words + 1, sizeof(int32_t));
    if (!t->block)
        return imgpu_error("out of memory for the resize tables (%dx%d to %dx%d)", sw, sh, dw, dh);
    int32_t *B = t->block;
    float *xwf = (float *)(void *)(B + t->o_xwf), *ywf = (float *)(void *)(B + t->o_ywf);
    int32_t *xi = B + t->o_xi, *yi = B + t->o_yi, *xwi = B + t->o_xwi, *ywi = B + t->o_ywi;
    if (kind == 0) {
        t->method = IMGPU_RSZ_NEAREST;
        axis_nearest(sw, dw, xi);
        axis_nearest(sh, dh, yi);
        return 0;
    }
    t->method = IMGPU_RSZ_SEPARABLE;
    t->alpha_mix = cn == 2 || cn == 4;
    const int W = dw * cn;
    if (kind == 1) {
        axis_interp(sw, dw, scale_x, inv_x, filter, area_mode, 1, ks_x, xi, xwi, xwf);
        axis_interp(sh, dh, scale_y, inv_y, filter, area_mode, 0, ks_y, yi, ywi, ywf);
        if (depth == 8) {
            t->vmode = IMGPU_RSZ_V_FIX;
            if (ks_x == 2) { /* OpenCV's VResizeLinearVec_32s8u: the whole row (found by test) */
                t->vfix_kind = IMGPU_RSZ_VEC_LINEAR;
                t->vec_end = W;
            } else if (ks_x == 4) { /* VResizeCubicVec_32s8u: 8 samples a step */
                t->vfix_kind = IMGPU_RSZ_VEC_CUBIC;
                t->vec_end = W / 8 * 8;
            }
        } else {
            t->vmode = IMGPU_RSZ_V_FLOAT;
            t->hfloat = 1;
        }
    } else if (kind == 2) {
        axis_box(sw, dw, ks_x, xi, xwi, xwf);
        axis_box(sh, dh, ks_y, yi, ywi, ywf);
        t->vmode = IMGPU_RSZ_V_BOX;
        t->box_area = ks_x * ks_y;
        t->box_round2 = ks_x == 2 && ks_y == 2 && cn != 2;
    } else if (kind == 3) {
        axis_area(sw, dw, scale_x, ks_x, xi, xwi, xwf);
        axis_area(sh, dh, scale_y, ks_y, yi, ywi, ywf);
        t->vmode = IMGPU_RSZ_V_FLOAT;
        t->hfloat = 1;
    } else {
        if (axis_pil(sw, dw, &pf, ks_x, xi, xwi, xwf) < 0 || axis_pil(sh, dh, &pf, ks_y, yi, ywi, ywf) < 0) {
            imgpu_resize_tab_free(t);
            return -1;
        }
        t->vmode = IMGPU_RSZ_V_PIL;
        t->pil = 1;
    }
    /* the rows the vertical pass reads, ascending, and each tap's place among them */
    int32_t *hrow = B + t->o_hrow, *yc = B + t->o_yc;
    char *used = calloc((size_t)sh, 1);
    if (!used) {
        imgpu_resize_tab_free(t);
        return imgpu_error("out of memory for the resize tables");
    }
    for (long i = 0; i < (long)ny; i++)
        used[yi[i]] = 1;
    int32_t *place = hrow; /* reuse: hrow is filled in the same pass */
    int n = 0;
    for (int y = 0; y < sh; y++)
        if (used[y])
            place[n++] = y;
    t->nh = n;
    for (long i = 0; i < (long)ny; i++) {
        int lo = 0, hi = n - 1;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (hrow[mid] < yi[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        yc[i] = lo;
    }
    free(used);
    /* each band's first row and the widest band (the GPU's fused kernel) */
    int32_t *tile = B + t->o_tile;
    const int ky = t->ky;
    for (long b = 0; b * IMGPU_RSZ_TILE_H < dh; b++) {
        const long e = (b + 1) * IMGPU_RSZ_TILE_H, i0 = b * IMGPU_RSZ_TILE_H * ky, i1 = (e < dh ? e : dh) * ky;
        int mn = yc[i0], mx = yc[i0];
        for (long i = i0 + 1; i < i1; i++) {
            mn = yc[i] < mn ? yc[i] : mn;
            mx = yc[i] > mx ? yc[i] : mx;
        }
        tile[b] = mn;
        t->tile_span = mx - mn + 1 > t->tile_span ? mx - mn + 1 : t->tile_span;
    }
    return 0;
}

/* ---- plan ------------------------------------------------------------------------------------- */

/* --antialias: the taps of the wider axis (Pillow's ksize bound: 2 ceil(support) + 1) */
static double pil_k(int w, int h, double ow, double oh, int f)
{
    const double sup = pil_for(f).support * fmax(1.0, fmax(w / ow, h / oh));
    return 2 * ceil(sup) + 1;
}

static void work(int w, int h, int c, int depth, const imgpu_op *op, double *host, double *dev)
{
    (void)depth;
    double ow, oh;
    dims(w, h, &op->u.resize, &ow, &oh);
    const int f = op->u.resize.filter;
    const double k = op->u.resize.antialias ? pil_k(w, h, ow, oh, f)
                   : f == IMGPU_RESIZE_NEAREST ? 1 : f == IMGPU_RESIZE_BICUBIC ? 4 : f == IMGPU_RESIZE_LANCZOS ? 8
                   : f == IMGPU_RESIZE_AREA ? fmax(2.0, ceil(fmax(w / ow, h / oh)) + 1) : 2;
    /* the tables (3 words a tap a side, 4 a row) and the horizontal pass: h rows of ow * c words */
    const double tables = 4.0 * (3 * ow * k + 4 * oh * k + h);
    const double inter = f == IMGPU_RESIZE_NEAREST ? 0 : 4.0 * fmin(h, oh * k) * ow * c;
    *host = tables + inter;
    *dev = tables + inter;
}

static double cpu_ns(int w, int h, int c, const imgpu_op *op)
{
    double ow, oh;
    dims(w, h, &op->u.resize, &ow, &oh);
    const int f = op->u.resize.filter;
    const double k = op->u.resize.antialias ? pil_k(w, h, ow, oh, f)
                   : f == IMGPU_RESIZE_NEAREST ? 0.5 : f == IMGPU_RESIZE_BICUBIC ? 4 : f == IMGPU_RESIZE_LANCZOS ? 8 : 2;
    return (fmin(h, oh * k) * ow + ow * oh) * c * k * 1.5 + (f == IMGPU_RESIZE_AREA ? (double)w * h * c : 0);
}

static int heavy(const imgpu_op *op) { return op->u.resize.filter != IMGPU_RESIZE_NEAREST; }

/* ---- parameters and text ---------------------------------------------------------------- */

static const char *const s_filters[] = {"nearest", "bilinear", "bicubic", "area", "lanczos", NULL};
#define SIDE_MAX 2147483647.0

static const imgpu_param s_params[] = {
    {.name = "size", .type = IMGPU_PARAM_SIZE, .metavar = "WxH", .def = 0, .min = 0, .max = SIDE_MAX,
     .help = "the result's size (in 'imgpu view', --size is the snapshot's)",
     .hint = "WxH, e.g. 640x480",
     .doc = "the result's size, W by H pixels (the aspect ratio may change)",
     .offset = offsetof(imgpu_resize_params, size_w), .offset2 = offsetof(imgpu_resize_params, size_h),
     .fronts = IMGPU_FRONT_CLI | IMGPU_FRONT_BATCH},
    {.name = "width", .type = IMGPU_PARAM_INT, .metavar = "W", .def = 0, .min = 0, .max = SIDE_MAX,
     .help = "the result's width; the height keeps the aspect ratio", .hint = "a width in pixels",
     .doc = "the result's width; the height keeps the aspect ratio\n(with --height too: the size WxH)",
     .offset = offsetof(imgpu_resize_params, width), .fronts = IMGPU_FRONT_ALL},
    {.name = "height", .type = IMGPU_PARAM_INT, .metavar = "H", .def = 0, .min = 0, .max = SIDE_MAX,
     .help = "the result's height; the width keeps the aspect ratio", .hint = "a height in pixels",
     .doc = "the result's height; the width keeps the aspect ratio",
     .offset = offsetof(imgpu_resize_params, height), .fronts = IMGPU_FRONT_ALL},
    {.name = "scale", .type = IMGPU_PARAM_DOUBLE, .metavar = "F", .def = 0, .min = 0, .max = 1e6,
     .help = "scale both sides by F (cv2.resize's fx = fy = F)", .hint = "a factor, e.g. 0.5 or 2",
     .doc = "scale both sides by F: each side round(side * F), half to\neven, at least 1 (cv2.resize's fx = fy = F)",
     .offset = offsetof(imgpu_resize_params, scale), .fronts = IMGPU_FRONT_ALL},
    {.name = "fit", .type = IMGPU_PARAM_SIZE, .metavar = "WxH", .def = 0, .min = 0, .max = SIDE_MAX,
     .help = "the largest size within WxH that keeps the aspect ratio", .hint = "WxH, e.g. 1920x1080",
     .doc = "the largest size within WxH that keeps the aspect ratio\n(it may enlarge)",
     .offset = offsetof(imgpu_resize_params, fit_w), .offset2 = offsetof(imgpu_resize_params, fit_h),
     .fronts = IMGPU_FRONT_ALL},
    {.name = "filter", .type = IMGPU_PARAM_ENUM, .metavar = "nearest|bilinear|bicubic|area|lanczos", .choices = s_filters,
     .def = IMGPU_RESIZE_BILINEAR, .help = "resampling filter (default bilinear)",
     .hint = "use nearest, bilinear, bicubic, area or lanczos",
     .doc = "resampling filter, cv2.resize's INTER_NEAREST_EXACT,\nINTER_LINEAR, INTER_CUBIC, INTER_AREA, INTER_LANCZOS4\n"
            "(default bilinear; area is the one for shrinking)",
     .offset = offsetof(imgpu_resize_params, filter), .fronts = IMGPU_FRONT_ALL},
    {.name = "antialias", .type = IMGPU_PARAM_FLAG,
     .help = "Pillow's filters (Image.resize), support widened by the scale",
     .doc = "Pillow's Image.resize filters instead of cv2's: bilinear,\nbicubic (a = -0.5), lanczos (a = 3), area = Pillow's box;\n"
            "their support widened by the scale when shrinking (not with nearest)",
     .offset = offsetof(imgpu_resize_params, antialias), .flag_value = 1, .fronts = IMGPU_FRONT_ALL},
};

static int write(const imgpu_op *op, imgpu_op_text how, char *buf, size_t n)
{
    const imgpu_resize_params *r = &op->u.resize;
    const char *filter = imgpu_param_choice(op, &s_params[5]);
    char sz[96];
    if (r->size_w > 0 || r->size_h > 0)
        snprintf(sz, sizeof sz, how == IMGPU_OP_TEXT_MANIFEST ? "size=%dx%d" : "--size %dx%d", r->size_w, r->size_h);
    else if (r->width > 0 && r->height > 0)
        snprintf(sz, sizeof sz, how == IMGPU_OP_TEXT_MANIFEST ? "width=%d height=%d" : "--width %d --height %d",
                 r->width, r->height);
    else if (r->width > 0)
        snprintf(sz, sizeof sz, how == IMGPU_OP_TEXT_MANIFEST ? "width=%d" : "--width %d", r->width);
    else if (r->height > 0)
        snprintf(sz, sizeof sz, how == IMGPU_OP_TEXT_MANIFEST ? "height=%d" : "--height %d", r->height);
    else if (r->fit_w > 0 || r->fit_h > 0)
        snprintf(sz, sizeof sz, how == IMGPU_OP_TEXT_MANIFEST ? "fit=%dx%d" : "--fit %dx%d", r->fit_w, r->fit_h);
    else
        snprintf(sz, sizeof sz, how == IMGPU_OP_TEXT_MANIFEST ? "scale=%.17g" : "--scale %.17g", r->scale);
    const int aa = r->antialias != 0;
    switch (how) {
    case IMGPU_OP_TEXT_MANIFEST: return snprintf(buf, n, "resize %s filter=%s%s", sz, filter, aa ? " antialias=1" : "");
    case IMGPU_OP_TEXT_OPTIONS: return snprintf(buf, n, "%s --filter %s%s", sz, filter, aa ? " --antialias" : "");
    case IMGPU_OP_TEXT_STATUS:
        return snprintf(buf, n, "resize %s %s%s", sz + (how == IMGPU_OP_TEXT_MANIFEST ? 0 : 2), filter, aa ? " antialias" : "");
    }
    return snprintf(buf, n, "resize");
}

const imgpu_op_desc imgpu__op_resize = {
    .name = "resize",
    .kind = IMGPU_OP_RESIZE,
    .summary = "resize (cv2.resize's filters, or Pillow's with --antialias)",
    .args = "IN OUT --size WxH | --width W | --height H | --scale F | --fit WxH",
    .verb = "resize",
    .doc = "Resize with cv2.resize's semantics: give one of --size, --width and/or --height,\n"
           "--scale or --fit (0, or none given: the input's size, a copy). 8-bit nearest, bilinear, bicubic and lanczos equal cv2.resize\n"
           "bit for bit (area within 1 level). --antialias: Pillow's Image.resize filters instead\n"
           "(within 1 level of Pillow at 8 bits). Images with alpha mix colour premultiplied by\n"
           "alpha, so transparent pixels leave no dark fringe.\n"
           "Names: in 'imgpu batch' an option sets the latest op that has it (a --filter after\n"
           "the resize is the resize's, after a rotation the rotation's); in 'imgpu view',\n"
           "--size is the snapshot's size: size the view's resize with --fit, --scale, --width\n"
           "or --height.\n",
    .params = s_params,
    .nparams = sizeof s_params / sizeof s_params[0],
    .add_param = NULL,
    .add_help = "resize (as 'imgpu resize'), sized by the options that follow",
    .batch_doc = "resize; --size WxH | --width W | --height H | --scale F | --fit WxH,\n"
                 "--filter nearest|bilinear|bicubic|area|lanczos, --antialias (as for\n"
                 "'imgpu resize'; an option sets the latest op that has it)",
    .view_doc = "  --resize             resize: --fit WxH | --scale F | --width W | --height H\n"
                "                       (--size stays the snapshot's), --filter, --antialias as for\n"
                "                       'imgpu resize'\n",
    .view_keys = "",
    .defaults = defaults,
    .check = check,
    .shape = shape,
    .out_size = out_size,
    .work = work,
    .cpu_ns = cpu_ns,
    .heavy = heavy,
    .write = write,
};

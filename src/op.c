/* op.c — the op floor (op.h): constructors and defaults, parameter validation, the
 * geometry both backends share (rotation sizes, quarter turns, trig, backgrounds; CLAHE
 * tiles) and the plan of a pipeline against the process-wide limits. Pure functions of
 * shapes and parameters, apart from the limits set once at start-up; nothing here
 * allocates an image or knows which backend will run. */
#include "op.h"
#include "error.h"
#include "image.h"
#include "io.h" /* IMGPU_DEFAULT_MAX_PIXELS, imgpu_parse_size */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

imgpu_op imgpu_op_equalize(imgpu_eq_mode mode)
{
    imgpu_op op;
    memset(&op, 0, sizeof op);
    op.kind = IMGPU_OP_EQUALIZE;
    op.u.equalize.mode = mode;
    return op;
}

imgpu_op imgpu_op_rotate(double angle)
{
    imgpu_op op;
    memset(&op, 0, sizeof op);
    op.kind = IMGPU_OP_ROTATE;
    op.u.rotate.angle = angle;
    op.u.rotate.filter = IMGPU_FILTER_BILINEAR;
    return op;
}

imgpu_op imgpu_op_clahe(double clip, int tiles_x, int tiles_y, imgpu_eq_mode mode)
{
    imgpu_op op;
    memset(&op, 0, sizeof op);
    op.kind = IMGPU_OP_CLAHE;
    op.u.clahe.clip = clip;
    op.u.clahe.tiles_x = tiles_x;
    op.u.clahe.tiles_y = tiles_y;
    op.u.clahe.mode = mode;
    return op;
}

/* ---- validation ------------------------------------------------------------------------ */

int imgpu_clahe_check_tiles(int tiles_x, int tiles_y)
{
    if (tiles_x < 1 || tiles_y < 1 || tiles_x > IMGPU_CLAHE_MAX_TILES || tiles_y > IMGPU_CLAHE_MAX_TILES)
        return imgpu_error("clahe: tile grid %dx%d out of range (1..%d each)", tiles_x, tiles_y,
                           IMGPU_CLAHE_MAX_TILES);
    return 0;
}

int imgpu_clahe_check(const imgpu_clahe_params *p)
{
    if (imgpu_clahe_check_tiles(p->tiles_x, p->tiles_y) < 0)
        return -1;
    if (!(p->clip == p->clip) || p->clip > 1e9) /* NaN or absurd */
        return imgpu_error("clahe: invalid clip limit");
    return 0;
}

void imgpu_histogram_full_free(imgpu_histogram_full *h)
{
    if (h) {
        free(h->counts);
        h->counts = NULL;
    }
}

/* ---- rotation geometry ------------------------------------------------------------------ */

double imgpu_rotate_reduce_angle(double angle)
{
    double a = fmod(angle, 360.0);
    if (a < 0)
        a += 360.0;
    return a;
}

int imgpu_rotate_quarter(double angle)
{
    double a = imgpu_rotate_reduce_angle(angle);
    if (a == 0.0)
        return 0;
    if (a == 90.0)
        return 1;
    if (a == 180.0)
        return 2;
    if (a == 270.0)
        return 3;
    return -1;
}

void imgpu_rotate_trig(double angle, float *cos_t, float *sin_t)
{
    double r = imgpu_rotate_reduce_angle(angle) * (M_PI / 180.0);
    *cos_t = (float)cos(r);
    *sin_t = (float)sin(r);
}

void imgpu_rotate_background(const imgpu_rotate_params *p, int channels, uint8_t bg[4])
{
    memset(bg, 0, 4);
    if (!p->has_background)
        return; /* transparent (alpha images) or black */
    switch (channels) {
    case 1: bg[0] = p->background[0]; break;
    case 2: bg[0] = p->background[0]; bg[1] = p->background[3]; break;
    case 3: memcpy(bg, p->background, 3); break;
    default: memcpy(bg, p->background, 4); break;
    }
}

void imgpu_rotate_background_pixel(const uint8_t bg8[4], int depth, uint8_t px[8])
{
    /* bg8 * 257 at 16 bits (#ff -> 65535), so taps outside read it like any other pixel */
    for (int k = 0; k < 4; k++)
        imgpu_sample_put(px, depth, k, depth == 16 ? bg8[k] * 257u : bg8[k]);
}

void imgpu_rotate_output_size(int w, int h, const imgpu_rotate_params *p, int *out_w, int *out_h)
{
    if (p->crop) {
        *out_w = w;
        *out_h = h;
        return;
    }
    double a = imgpu_rotate_reduce_angle(p->angle);
    if (a == 90.0 || a == 270.0) {
        *out_w = h;
        *out_h = w;
        return;
    }
    if (a == 0.0 || a == 180.0) {
        *out_w = w;
        *out_h = h;
        return;
    }
    double r = a * (M_PI / 180.0);
    double c = fabs(cos(r)), s = fabs(sin(r));
    /* The bounding box of the rotated rectangle; the small slack keeps 1e-12 rounding noise
     * from adding a whole empty row or column. */
    double bw = ceil((double)w * c + (double)h * s - 1e-6), bh = ceil((double)w * s + (double)h * c - 1e-6);
    /* A box beyond int saturates at INT_MAX (a cast would be undefined); imgpu_pipeline_plan
     * refuses such a result before anyone allocates it. */
    *out_w = bw < 1 ? 1 : bw >= INT_MAX ? INT_MAX : (int)bw;
    *out_h = bh < 1 ? 1 : bh >= INT_MAX ? INT_MAX : (int)bh;
}

static int floor_half(int x) { return x >= 0 ? x / 2 : -((-x + 1) / 2); }

void imgpu_rotate_quarter_offset(int out_w, int out_h, int rw, int rh, int *ox, int *oy)
{
    *ox = floor_half(out_w - rw);
    *oy = floor_half(out_h - rh);
}

/* ---- CLAHE geometry (src/cpu/clahe.c states the rules) ------------------------------------ */

int imgpu_clahe_geometry(int w, int h, int depth, const imgpu_clahe_params *p, imgpu_clahe_geom *g)
{
    if (imgpu_clahe_check(p) < 0)
        return -1;
    if (depth != 8 && depth != 16)
        return imgpu_error("clahe: %d-bit images are not supported", depth);
    imgpu_clahe_geom r;
    memset(&r, 0, sizeof r);
    r.w = w;
    r.h = h;
    r.tiles_x = p->tiles_x;
    r.tiles_y = p->tiles_y;
    r.bins = depth == 16 ? 65536 : 256;
    if (w % p->tiles_x == 0 && h % p->tiles_y == 0) {
        r.ext_w = w;
        r.ext_h = h;
    } else {
        r.ext_w = w + p->tiles_x - w % p->tiles_x;
        r.ext_h = h + p->tiles_y - h % p->tiles_y;
    }
    r.tile_w = r.ext_w / p->tiles_x;
    r.tile_h = r.ext_h / p->tiles_y;
    const int64_t area = (int64_t)r.tile_w * r.tile_h;
    if (area > INT32_MAX / 2)
        return imgpu_error("clahe: tiles of %dx%d pixels are too large", r.tile_w, r.tile_h);
    r.lut_scale = (float)(r.bins - 1) / (float)area;
    if (p->clip > 0.0) {
        const int c = (int)(p->clip * (double)area / r.bins);
        r.clip_limit = c < 1 ? 1 : c;
    }
    r.inv_tw = 1.0f / (float)r.tile_w;
    r.inv_th = 1.0f / (float)r.tile_h;
    *g = r;
    return 0;
}


/* ---- bounds (op.h: imgpu_pipeline_plan) ---------------------------------------------- */

static imgpu_limits s_limits; /* 0: the defaults; set before threads start */

void imgpu_set_limits(const imgpu_limits *l)
{
    if (l)
        s_limits = *l;
    else
        memset(&s_limits, 0, sizeof s_limits);
}

static imgpu_limits resolve_limits(const imgpu_limits *l)
{
    imgpu_limits r = l ? *l : s_limits;
    if (!r.max_pixels)
        r.max_pixels = IMGPU_DEFAULT_MAX_PIXELS;
    if (!r.max_memory)
        r.max_memory = IMGPU_DEFAULT_MAX_MEMORY;
    return r;
}

void imgpu_get_limits(imgpu_limits *l) { *l = resolve_limits(NULL); }

int imgpu_limits_from_env(imgpu_limits *l)
{
    const char *v;
    if (!l->max_pixels && (v = getenv("IMGPU_MAX_PIXELS")) != NULL) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(v, &end, 10);
        if (v[0] < '0' || v[0] > '9' || errno || *end || n == 0)
            return imgpu_error("invalid IMGPU_MAX_PIXELS '%s' (a positive whole number)", v);
        l->max_pixels = n;
    }
    if (!l->max_memory && (v = getenv("IMGPU_MAX_MEMORY")) != NULL &&
        imgpu_parse_size(v, &l->max_memory) < 0)
        return imgpu_error("invalid IMGPU_MAX_MEMORY '%s' (a positive number of bytes, optionally "
                           "with K, M or G)", v);
    return 0;
}

void imgpu__fmt_bytes(char *buf, size_t n, double b)
{
    if (b >= 1024.0 * 1024 * 1024)
        snprintf(buf, n, "%.2f GiB", b / (1024.0 * 1024 * 1024));
    else if (b >= 1024.0 * 1024)
        snprintf(buf, n, "%.1f MiB", b / (1024.0 * 1024));
    else if (b >= 1024.0)
        snprintf(buf, n, "%.1f KiB", b / 1024.0);
    else
        snprintf(buf, n, "%.0f bytes", b);
}

static void fmt_pixels(char *buf, size_t n, double p)
{
    if (p >= 1e9)
        snprintf(buf, n, "%.2f Gpixels", p / 1e9);
    else if (p >= 1e6)
        snprintf(buf, n, "%.2f Mpixels", p / 1e6);
    else
        snprintf(buf, n, "%.0f pixels", p);
}

static const char *op_verb(imgpu_op_kind k)
{
    switch (k) {
    case IMGPU_OP_EQUALIZE: return "equalize";
    case IMGPU_OP_ROTATE: return "rotate";
    case IMGPU_OP_CLAHE: return "apply clahe to";
    }
    return "process";
}

/* "cannot rotate 'in.png': " or, without a name, "cannot rotate a 100x1 image: ". */
static int plan_fail(const imgpu_op *op, const char *name, int w, int h, const char *what)
{
    if (name)
        return imgpu_error("cannot %s '%s': %s", op_verb(op->kind), name, what);
    return imgpu_error("cannot %s a %dx%d image: %s", op_verb(op->kind), w, h, what);
}

/* The result of one op as doubles (a rotation's bounding box may be beyond int). The same
 * formula as imgpu_rotate_output_size, which gives the int answer once this one fits. */
static void stage_shape(int w, int h, const imgpu_op *op, double *ow, double *oh)
{
    *ow = w;
    *oh = h;
    if (op->kind != IMGPU_OP_ROTATE || op->u.rotate.crop)
        return;
    double a = imgpu_rotate_reduce_angle(op->u.rotate.angle);
    if (a == 90.0 || a == 270.0) {
        *ow = h;
        *oh = w;
        return;
    }
    if (a == 0.0 || a == 180.0 || !(a == a))
        return;
    const double r = a * (M_PI / 180.0), c = fabs(cos(r)), s = fabs(sin(r));
    *ow = fmax(1.0, ceil((double)w * c + (double)h * s - 1e-6));
    *oh = fmax(1.0, ceil((double)w * s + (double)h * c - 1e-6));
}

/* Working memory of one op beyond its input and result, as the backends allocate it:
 * host (the CPU reference, src/cpu/) and device scratch (src/cuda/). */
static void stage_work(int w, int h, int c, int depth, const imgpu_op *op, double *host, double *dev)
{
    const double npx = (double)w * h, levels = depth == 16 ? 65536.0 : 256.0;
    const int color = c >= 3 ? 3 : 1;
    *host = *dev = 0;
    switch (op->kind) {
    case IMGPU_OP_ROTATE:
        /* CPU: none. CUDA, 8-bit non-quarter angles: a texture array of 1 or 4 bytes a pixel */
        *dev = depth == 8 ? npx * (c == 1 ? 1 : 4) : 0;
        break;
    case IMGPU_OP_EQUALIZE: {
        /* equalize_formula.c: full histograms (channels + luma planes) + one hist and LUT */
        const double planes = c + (c >= 3);
        *host = planes * levels * 4 + levels * 6;
        *dev = planes * levels * 4 + levels * 6;
        break;
    }
    case IMGPU_OP_CLAHE: {
        /* src/cpu/clahe.c: Y or one channel plane + its result (2 bytes a pixel each), Cb and
         * Cr in luminance mode, one LUT of `levels` uint16 per tile, one histogram, one column
         * map over the padded width (OpenCV pads a plane that the grid does not divide up to
         * the next multiple: a 1x1 image with a 256x256 grid has 65536 1x1 tiles). */
        const double tiles = (double)op->u.clahe.tiles_x * op->u.clahe.tiles_y;
        const int lum = op->u.clahe.mode == IMGPU_MODE_LUMINANCE && color == 3;
        const double ext_w = (double)w + op->u.clahe.tiles_x;
        *host = npx * 2 * (lum ? 4 : 2) + tiles * levels * 2 + levels * 4 + ext_w * 4;
        /* src/cuda/clahe.c: planes x tiles x levels counters (4 bytes) and LUT entries */
        const double planes = lum || color == 1 ? 1 : 3;
        *dev = planes * tiles * levels * (4.0 + depth / 8) + 256;
        break;
    }
    }
}

int imgpu_pipeline_plan(int w, int h, int channels, int depth, const imgpu_op *ops, int n,
                        const imgpu_limits *lim, const char *name, imgpu_plan *out)
{
    const imgpu_limits L = resolve_limits(lim);
    char what[320], a[48], b[48];
    if (w < 1 || h < 1 || channels < 1 || channels > 4 || (depth != 8 && depth != 16) || n < 0)
        return imgpu_error("invalid image shape %dx%d, %d channels, %d bits", w, h, channels, depth);
    const double bps = depth / 8, base = (double)w * h * channels * bps;
    double peak = base * 2, device = 0, largest = base; /* n == 0: the result is a copy */
    int peak_stage = -1, cw = w, ch = h;
    for (int i = 0; i < n; i++) {
        const imgpu_op *op = &ops[i];
        double ow, oh;
        stage_shape(cw, ch, op, &ow, &oh);
        const double px = ow * oh;
        if (ow > INT_MAX || oh > INT_MAX || px > (double)L.max_pixels) {
            fmt_pixels(a, sizeof a, px);
            if (ow > INT_MAX || oh > INT_MAX)
                snprintf(what, sizeof what, "the %.0fx%.0f result (%s) is too large (a side over %d pixels)", ow,
                         oh, a, INT_MAX);
            else
                snprintf(what, sizeof what,
                         "the %.0fx%.0f result (%s) is over --max-pixels %" PRIu64
                         " (raise it with --max-pixels or IMGPU_MAX_PIXELS)",
                         ow, oh, a, L.max_pixels);
            return plan_fail(op, name, w, h, what);
        }
        if (op->kind == IMGPU_OP_CLAHE && imgpu_clahe_check_tiles(op->u.clahe.tiles_x, op->u.clahe.tiles_y) < 0)
            return -1;
        double work, dwork;
        stage_work(cw, ch, channels, depth, op, &work, &dwork);
        const double in_b = (double)cw * ch * channels * bps, out_b = px * channels * bps;
        const double stage = base + (i > 0 ? in_b : 0) + out_b + work;
        if (stage > peak || peak_stage < 0) {
            peak = stage;
            peak_stage = i;
        }
        if (out_b > largest)
            largest = out_b;
        if (dwork > device)
            device = dwork;
        /* the CUDA backend's host side at the end: the input, its pinned staging (the larger
         * of input and result), the downloaded result */
        const double cuda_host = i == n - 1 ? base + (base > out_b ? base : out_b) + out_b : 0;
        const double need = stage > cuda_host ? stage : cuda_host;
        if (need > peak)
            peak = need;
        if (need > (double)L.max_memory) {
            imgpu__fmt_bytes(a, sizeof a, need);
            imgpu__fmt_bytes(b, sizeof b, (double)L.max_memory);
            snprintf(what, sizeof what,
                     "it needs %s of memory for a %.0fx%.0f result (input, result and working buffers), "
                     "over --max-memory %s (raise it with --max-memory or IMGPU_MAX_MEMORY)",
                     a, ow, oh, b);
            return plan_fail(op, name, w, h, what);
        }
        cw = (int)ow;
        ch = (int)oh;
    }
    /* the CUDA backend's device side: the source, two ping-pong buffers of the largest stage, the scratch */
    device = n > 0 ? base + 2 * largest + device + 256 : 0;
    if (out) {
        memset(out, 0, sizeof *out);
        out->out_w = cw;
        out->out_h = ch;
        out->channels = channels;
        out->depth = depth;
        out->peak_bytes = peak >= 1.8e19 ? UINT64_MAX : (uint64_t)peak;
        out->device_bytes = device >= 1.8e19 ? UINT64_MAX : (uint64_t)device;
        out->peak_stage = peak_stage;
    }
    return 0;
}

void imgpu_ops_for_image(imgpu_op *ops, int n, int color_channels)
{
    for (int i = 0; i < n; i++) {
        imgpu_rotate_params *p = &ops[i].u.rotate;
        if (ops[i].kind == IMGPU_OP_ROTATE && p->has_background && color_channels == 1)
            p->background[0] = (uint8_t)lround(0.299 * p->background[0] + 0.587 * p->background[1] +
                                               0.114 * p->background[2]);
    }
}

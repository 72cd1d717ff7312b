/* ops.c — the operations API: op constructors, rotation geometry, and the dispatcher that
 * runs a pipeline on the CPU or CUDA backend (see ops.h for the conventions). */
#include "ops.h"
#include "error.h"
#include "io.h"
#include "cpu/cpu.h"
#ifdef IMGPU_HAVE_CUDA
#include "cuda/cuda_backend.h"
#endif

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

void imgpu_rotate_output_size(int w, int h, const imgpu_rotate_params *p, int *out_w, int *out_h)
{
    if (p->crop) {
        *out_w = w;
        *out_h = h;
        return;
    }
    double a = fmod(p->angle, 360.0);
    if (a < 0)
        a += 360.0;
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

/* ---- bounds (ops.h: imgpu_pipeline_plan) ---------------------------------------------- */

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

/* "1.50 GiB", "12.0 MiB", "900 bytes" (binary units, as --max-memory reads them). */
static void fmt_bytes(char *buf, size_t n, double b)
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
    double a = fmod(op->u.rotate.angle, 360.0);
    if (a < 0)
        a += 360.0;
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
        if (op->kind == IMGPU_OP_CLAHE &&
            (op->u.clahe.tiles_x < 1 || op->u.clahe.tiles_y < 1 || op->u.clahe.tiles_x > 256 ||
             op->u.clahe.tiles_y > 256))
            return imgpu_error("clahe: tile grid %dx%d out of range (1..256 each)", op->u.clahe.tiles_x,
                               op->u.clahe.tiles_y);
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
            fmt_bytes(a, sizeof a, need);
            fmt_bytes(b, sizeof b, (double)L.max_memory);
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

void imgpu_backend_prepare(imgpu_device requested)
{
#ifdef IMGPU_HAVE_CUDA
    if (requested != IMGPU_DEVICE_CPU)
        imgpu_cuda_prepare();
#else
    (void)requested;
#endif
}

int imgpu_backend_shutdown(void)
{
#ifdef IMGPU_HAVE_CUDA
    return imgpu_cuda_shutdown();
#else
    return 0;
#endif
}

int imgpu_device_from_env(imgpu_device *d)
{
    const char *v = getenv("IMGPU_DEVICE");
    if (!v || !*v)
        return 0;
    if (!strcmp(v, "auto"))
        *d = IMGPU_DEVICE_AUTO;
    else if (!strcmp(v, "cpu"))
        *d = IMGPU_DEVICE_CPU;
    else if (!strcmp(v, "cuda"))
        *d = IMGPU_DEVICE_CUDA;
    else
        return imgpu_error("invalid IMGPU_DEVICE '%s' (use auto, cpu or cuda)", v);
    return 0;
}

const char *imgpu_device_name(imgpu_device d)
{
    switch (d) {
    case IMGPU_DEVICE_CPU: return "cpu";
    case IMGPU_DEVICE_CUDA: return "cuda";
    default: return "auto";
    }
}

int imgpu_device_resolve(imgpu_device requested, imgpu_device *resolved)
{
    if (requested == IMGPU_DEVICE_CPU) {
        *resolved = IMGPU_DEVICE_CPU;
        return 0;
    }
#ifdef IMGPU_HAVE_CUDA
    if (imgpu_cuda_available()) {
        *resolved = IMGPU_DEVICE_CUDA;
        return 0;
    }
    if (requested == IMGPU_DEVICE_CUDA)
        return -1; /* imgpu_cuda_available recorded why */
    static int noticed;
    if (!noticed) {
        noticed = 1;
        imgpu_notice("%s; running on the CPU", imgpu_error_message());
    }
    imgpu_error_clear();
    *resolved = IMGPU_DEVICE_CPU;
    return 0;
#else
    if (requested == IMGPU_DEVICE_CUDA)
        return imgpu_error("--device cuda: this imgpu was built without CUDA support");
    *resolved = IMGPU_DEVICE_CPU;
    return 0;
#endif
}

static imgpu_image *cpu_run_op(const imgpu_image *in, const imgpu_op *op)
{
    switch (op->kind) {
    case IMGPU_OP_EQUALIZE:
        if (in->depth == 8 && op->u.equalize.formula == IMGPU_FORMULA_OPENCV)
            return imgpu_cpu_equalize(in, &op->u.equalize);
        return imgpu_cpu_equalize_full(in, &op->u.equalize);
    case IMGPU_OP_ROTATE: return imgpu_cpu_rotate(in, &op->u.rotate);
    case IMGPU_OP_CLAHE: return imgpu_cpu_clahe(in, &op->u.clahe);
    }
    imgpu_error("unknown operation %d", (int)op->kind);
    return NULL;
}

static imgpu_image *cpu_pipeline(const imgpu_image *in, const imgpu_op *ops, int n)
{
    if (n == 0)
        return imgpu_image_copy(in);
    /* the first op reads the caller's image itself (ops never write their input): no copy,
     * so a stage holds input + result + working memory, as imgpu_pipeline_plan counts it */
    imgpu_image *cur = cpu_run_op(in, &ops[0]);
    for (int i = 1; cur && i < n; i++) {
        imgpu_image *next = cpu_run_op(cur, &ops[i]);
        imgpu_image_free(cur);
        cur = next;
    }
    return cur;
}

#ifdef IMGPU_HAVE_CUDA
/* After a failed CUDA run: 1 when the CPU should run the op instead — `auto` after running out
 * of device memory or a sticky fault (the GPU is gone for this process, see
 * IMGPU_CUDA_STICKY), with a one-line notice; 0 when the error stands. */
static int cpu_takes_over(int rc, imgpu_device requested)
{
    if ((rc != IMGPU_CUDA_OOM && rc != IMGPU_CUDA_STICKY) || requested == IMGPU_DEVICE_CUDA)
        return 0;
    imgpu_notice("%s; running on the CPU", imgpu_error_message());
    imgpu_error_clear();
    return 1;
}

#endif

/* ---- auto: run each job where it will finish first ------------------------------------------
 * CUDA's start-up (the context creation imgpu_backend_prepare starts on a background thread)
 * costs about 300 ms on an H100 machine, seconds when many processes start at once; a small
 * job is done on the CPU long before. So `auto` estimates both and takes the smaller:
 *   CPU   sum over the ops of (samples or output pixels) x a cost per sample or pixel;
 *   CUDA  what is left of the start-up (0 once it is done; 300 ms minus the time since it
 *         began while it runs, at least 50 ms) + 10 ms of first-use cost (allocation, module
 *         load) + the bytes in and out x 0.4 ns (pinned staging copy and PCIe) + kernels (the
 *         kernels take microseconds: bench/RESULTS.md).
 * The CPU costs are one core's, measured on this project's CPU machine with 4K images
 * (2026-11-23; `imgpu OP --device cpu` minus a plain copy); being off by a factor of two moves
 * the break-even a little, never a 16x16 image onto the GPU or an 8K rotation onto the CPU.
 * Without a GPU (the probe said no), or once a GPU fault made it unusable, the answer is the
 * CPU, as before. */
#define IMGPU_CUDA_START_MS 300.0
#define IMGPU_CUDA_FIRST_USE_MS 10.0
#define IMGPU_CUDA_NS_PER_BYTE 0.4

static double cpu_cost_ms(const imgpu_image *in, const imgpu_op *ops, int n)
{
    double w = in->width, h = in->height, c = in->channels, ns = 0;
    const double depth_f = in->depth == 16 ? 1.3 : 1.0;
    for (int i = 0; i < n; i++) {
        const imgpu_op *op = &ops[i];
        const int color = c >= 3;
        switch (op->kind) {
        case IMGPU_OP_EQUALIZE:
            ns += w * h * (3.0 * c + (color && op->u.equalize.mode == IMGPU_MODE_LUMINANCE ? 8.0 : 0.0));
            break;
        case IMGPU_OP_CLAHE:
            ns += w * h * (6.0 * c + (color && op->u.clahe.mode == IMGPU_MODE_LUMINANCE ? 8.0 : 0.0));
            break;
        case IMGPU_OP_ROTATE: {
            int ow, oh;
            imgpu_rotate_output_size((int)w, (int)h, &op->u.rotate, &ow, &oh);
            double a = fmod(fabs(op->u.rotate.angle), 90.0);
            double per = a == 0.0 ? 2.0 * c   /* quarter turns: a permutation */
                       : (op->u.rotate.filter == IMGPU_FILTER_NEAREST ? 9.0
                          : op->u.rotate.filter == IMGPU_FILTER_BICUBIC ? 26.0 : 18.0) + 4.0 * (c - 1);
            ns += (double)ow * oh * per;
            w = ow;
            h = oh;
            break;
        }
        }
    }
    return ns * depth_f / 1e6;
}

static double cuda_cost_ms(double start_left_ms, size_t bytes)
{
    return start_left_ms + IMGPU_CUDA_FIRST_USE_MS + (double)bytes * IMGPU_CUDA_NS_PER_BYTE / 1e6;
}

/* 1 when `auto` should run this job on the CPU without waiting for CUDA. */
static int auto_prefers_cpu(const imgpu_image *in, double cpu_ms, size_t gpu_bytes)
{
    (void)in;
#ifdef IMGPU_HAVE_CUDA
    /* Decided on cost alone, whatever the probe found, so that the outcome does not depend on
     * how far it got: a job the CPU wins runs there silently; one that would go to the GPU
     * goes on to imgpu_device_resolve, which says once if there is none. */
    double since = 0;
    int st = imgpu_cuda_state(&since);
    double left = 0;
    if (st == 0)
        left = since < IMGPU_CUDA_START_MS - 50.0 ? IMGPU_CUDA_START_MS - since : 50.0;
    return cpu_ms <= cuda_cost_ms(left, gpu_bytes);
#else
    (void)cpu_ms;
    (void)gpu_bytes;
    return 1;
#endif
}

static size_t image_bytes(const imgpu_image *im)
{
    return (size_t)im->width * im->height * im->channels * (size_t)(im->depth / 8);
}

imgpu_image *imgpu_pipeline_run(const imgpu_image *in, const imgpu_op *ops, int n,
                                imgpu_device device, imgpu_device *used)
{
    imgpu_device d;
    if (in->depth != 8 && in->depth != 16) {
        imgpu_error("%d-bit images are not supported", in->depth);
        return NULL;
    }
    /* the bounds first, before either backend allocates anything (front ends check the same
     * plan earlier, with the file's name; this is the check no caller can skip) */
    imgpu_plan plan;
    if (imgpu_pipeline_plan(in->width, in->height, in->channels, in->depth, ops, n, NULL, NULL, &plan) < 0)
        return NULL;
    size_t out_bytes = (size_t)plan.out_w * plan.out_h * plan.channels * (size_t)(plan.depth / 8);
    if (device == IMGPU_DEVICE_AUTO &&
        auto_prefers_cpu(in, cpu_cost_ms(in, ops, n), image_bytes(in) + out_bytes))
        d = IMGPU_DEVICE_CPU;
    else if (imgpu_device_resolve(device, &d) < 0)
        return NULL;
#ifdef IMGPU_HAVE_CUDA
    if (d == IMGPU_DEVICE_CUDA) { /* the CUDA backend runs every op at 8 and 16 bits */
        imgpu_image *out = NULL;
        int rc = imgpu_cuda_pipeline_run(in, ops, n, &out);
        if (rc == 0) {
            if (used)
                *used = d;
            return out;
        }
        if (!cpu_takes_over(rc, device))
            return NULL;
        d = IMGPU_DEVICE_CPU;
    }
#endif
    if (used)
        *used = d;
    return cpu_pipeline(in, ops, n);
}

int imgpu_histogram_compute(const imgpu_image *in, imgpu_device device, imgpu_histogram *out,
                            imgpu_device *used)
{
    imgpu_device d;
    if (in->depth != 8)
        return imgpu_error("%d-bit images are not supported yet", in->depth);
    /* a histogram: about 1.5 ns a sample on one core, against the upload of the image */
    if (device == IMGPU_DEVICE_AUTO &&
        auto_prefers_cpu(in, 1.5e-6 * (double)image_bytes(in), image_bytes(in)))
        d = IMGPU_DEVICE_CPU;
    else if (imgpu_device_resolve(device, &d) < 0)
        return -1;
#ifdef IMGPU_HAVE_CUDA
    if (d == IMGPU_DEVICE_CUDA) {
        int rc = imgpu_cuda_histogram(in, out);
        if (rc == 0) {
            if (used)
                *used = d;
            return 0;
        }
        if (!cpu_takes_over(rc, device))
            return -1;
        d = IMGPU_DEVICE_CPU;
    }
#endif
    if (used)
        *used = d;
    return imgpu_cpu_histogram(in, out);
}

void imgpu_histogram_full_free(imgpu_histogram_full *h)
{
    if (h) {
        free(h->counts);
        h->counts = NULL;
    }
}

int imgpu_histogram_full_compute(const imgpu_image *in, imgpu_device device, imgpu_histogram_full *out,
                                 imgpu_device *used)
{
    imgpu_device d;
    if (in->depth != 8 && in->depth != 16)
        return imgpu_error("%d-bit images are not supported", in->depth);
    if (device == IMGPU_DEVICE_AUTO &&
        auto_prefers_cpu(in, 1.5e-6 * (double)image_bytes(in), image_bytes(in)))
        d = IMGPU_DEVICE_CPU;
    else if (imgpu_device_resolve(device, &d) < 0)
        return -1;
#ifdef IMGPU_HAVE_CUDA
    if (d == IMGPU_DEVICE_CUDA) {
        int rc = imgpu_cuda_histogram_full(in, out);
        if (rc == 0) {
            if (used)
                *used = d;
            return 0;
        }
        if (!cpu_takes_over(rc, device))
            return -1;
    }
#endif
    if (used)
        *used = IMGPU_DEVICE_CPU;
    return imgpu_cpu_histogram_full(in, out);
}

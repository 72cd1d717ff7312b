/* plan.c — the op floor (op.h): the plan of a pipeline against the process-wide limits, each
 * stage's shape, memory and validation read from the op table (src/op/op_table.h; each op's
 * constructor and geometry live in its own file, src/op/<op>.c). Pure functions of shapes and
 * parameters, apart from the limits set once at start-up; nothing here allocates an image or
 * knows which backend will run. */
#include "op.h"
#include "op_table.h"
#include "error.h"
#include "image.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void imgpu_histogram_full_free(imgpu_histogram_full *h)
{
    if (h) {
        free(h->counts);
        h->counts = NULL;
    }
}

/* ---- bounds (op.h: imgpu_pipeline_plan) ---------------------------------------------- */

/* lim's fields, or the process-wide limits for NULL; a field 0 is its default. */
static imgpu_limits resolve_limits(const imgpu_limits *lim)
{
    imgpu_limits r;
    if (!lim) {
        imgpu_get_limits(&r);
        return r;
    }
    r = *lim;
    if (!r.max_pixels)
        r.max_pixels = IMGPU_DEFAULT_MAX_PIXELS;
    if (!r.max_memory)
        r.max_memory = IMGPU_DEFAULT_MAX_MEMORY;
    return r;
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

/* "cannot rotate 'in.png': " or, without a name, "cannot rotate a 100x1 image: ". */
static int plan_fail(const imgpu_op *op, const char *name, int w, int h, const char *what)
{
    const imgpu_op_desc *d = imgpu_op_desc_of(op->kind);
    const char *verb = d ? d->verb : "process";
    if (name)
        return imgpu_error("cannot %s '%s': %s", verb, name, what);
    return imgpu_error("cannot %s a %dx%d image: %s", verb, w, h, what);
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
        const imgpu_op_desc *d = imgpu_op_desc_of(op->kind);
        if (!d)
            return imgpu_error("unknown operation %d", (int)op->kind);
        double ow = cw, oh = ch;
        if (d->shape)
            d->shape(cw, ch, op, &ow, &oh);
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
        if (d->check && d->check(op) < 0)
            return -1;
        if (d->check_shape && d->check_shape(cw, ch, op, what, sizeof what) < 0)
            return plan_fail(op, name, w, h, what);
        if (d->chain) {
            /* on copies: the chain must be possible and already folded (imgpu_ops_for_image) */
            imgpu_op self, prev;
            memcpy(&self, op, sizeof self);
            memcpy(&prev, i > 0 ? &ops[i - 1] : op, sizeof prev);
            if (d->chain(&self, i > 0 ? &prev : NULL) < 0)
                return -1;
            if (i > 0 && memcmp(&prev, &ops[i - 1], sizeof prev))
                return imgpu_error("%s: the chain was not prepared for the image (imgpu_ops_for_image)", d->name);
        }
        double work = 0, dwork = 0;
        if (d->work)
            d->work(cw, ch, channels, depth, op, &work, &dwork);
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
        const imgpu_op_desc *d = imgpu_op_desc_of(ops[i].kind);
        if (d && d->for_image)
            d->for_image(&ops[i], color_channels);
        /* a chain the op cannot follow is refused by the plan, with the same message */
        if (d && d->chain && d->chain(&ops[i], i > 0 ? &ops[i - 1] : NULL) < 0)
            imgpu_error_clear();
    }
}

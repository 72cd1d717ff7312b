/* ops.c — the operations API: op constructors, rotation geometry, and the dispatcher that
 * runs a pipeline on the CPU or CUDA backend (see ops.h for the conventions). */
#include "ops.h"
#include "error.h"
#include "cpu/cpu.h"
#ifdef IMGPU_HAVE_CUDA
#include "cuda/cuda_backend.h"
#endif

#include <math.h>
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
    double bw = w * c + h * s, bh = w * s + h * c;
    int ow = (int)ceil(bw - 1e-6), oh = (int)ceil(bh - 1e-6);
    *out_w = ow < 1 ? 1 : ow;
    *out_h = oh < 1 ? 1 : oh;
}

static int floor_half(int x) { return x >= 0 ? x / 2 : -((-x + 1) / 2); }

void imgpu_rotate_quarter_offset(int out_w, int out_h, int rw, int rh, int *ox, int *oy)
{
    *ox = floor_half(out_w - rw);
    *oy = floor_half(out_h - rh);
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

void imgpu_backend_shutdown(void)
{
#ifdef IMGPU_HAVE_CUDA
    imgpu_cuda_shutdown();
#endif
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
    imgpu_image *cur = imgpu_image_copy(in);
    for (int i = 0; cur && i < n; i++) {
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

imgpu_image *imgpu_pipeline_run(const imgpu_image *in, const imgpu_op *ops, int n,
                                imgpu_device device, imgpu_device *used)
{
    imgpu_device d;
    if (in->depth != 8 && in->depth != 16) {
        imgpu_error("%d-bit images are not supported", in->depth);
        return NULL;
    }
    if (imgpu_device_resolve(device, &d) < 0)
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
    if (imgpu_device_resolve(device, &d) < 0)
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
    if (imgpu_device_resolve(device, &d) < 0)
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

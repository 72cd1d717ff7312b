/* api.c — what libimgpu's public header adds to the library's own API (include/imgpu/imgpu.h):
 * contexts (a device resolved once, lazily, and the backend state it keeps), images over
 * caller-owned memory, and the version. The rest of the public API is the library's own
 * functions (image.h, io.h, op.h, ops.h, error.h), exported as they are. */
#include <imgpu/imgpu.h>

#include "device_state.h"
#include "session.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *imgpu_version_string(void) { return IMGPU_VERSION_STRING; }

int imgpu_built_with_cuda(void)
{
#ifdef IMGPU_HAVE_CUDA
    return 1;
#else
    return 0;
#endif
}

/* ---- contexts ------------------------------------------------------------------------------ */

/* struct imgpu_context: device_state.h (device_image.c reaches its slot without calling here) */

imgpu_context *imgpu_context_create(imgpu_device device)
{
    if (device != IMGPU_DEVICE_AUTO && device != IMGPU_DEVICE_CPU && device != IMGPU_DEVICE_CUDA) {
        imgpu_error("unknown device %d (use IMGPU_DEVICE_AUTO, _CPU or _CUDA)", (int)device);
        return NULL;
    }
    imgpu_context *c = calloc(1, sizeof *c);
    if (!c) {
        imgpu_error("out of memory creating a context");
        return NULL;
    }
    if (pthread_mutex_init(&c->lock, NULL) != 0 || pthread_mutex_init(&c->dev_lock, NULL) != 0) {
        free(c);
        imgpu_error("cannot create a context's lock");
        return NULL;
    }
    c->device = device;
    c->ordinal = -1;
    return c;
}

imgpu_context *imgpu_context_create_on(imgpu_device device, int cuda_device)
{
    if (cuda_device >= 0 && device != IMGPU_DEVICE_CUDA) {
        imgpu_error("CUDA device %d: a device number needs IMGPU_DEVICE_CUDA", cuda_device);
        return NULL;
    }
    imgpu_context *c = imgpu_context_create(device);
    if (c && cuda_device >= 0)
        c->ordinal = cuda_device;
    return c;
}

int imgpu_context_cuda_ordinal(const imgpu_context *ctx) { return ctx ? ctx->ordinal : -1; }

void imgpu_context_destroy(imgpu_context *ctx)
{
    if (!ctx)
        return;
    /* The backend's device state is shared by every context of the process (ops.c, the CUDA
     * backend's cached session) and released at exit; the device state of its device-image
     * calls (a private stream and buffers) is its own. */
    imgpu__device_state_free(ctx->dev);
    pthread_mutex_destroy(&ctx->dev_lock);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
}

imgpu_device imgpu_context_device(const imgpu_context *ctx) { return ctx->device; }

int imgpu_context_resolve(imgpu_context *ctx, imgpu_device *resolved)
{
    pthread_mutex_lock(&ctx->lock);
    if (!ctx->resolved_once) {
        /* AUTO stays a per-job choice (ops.c's cost rule); resolving it here only starts the
         * device's state, so that the first job does not pay for it. */
        ctx->resolve_rc = imgpu_device_resolve(ctx->device, &ctx->resolved);
        if (ctx->resolve_rc == 0 && ctx->ordinal >= 0) {
            const int count = imgpu_session_device_count();
            if (ctx->ordinal >= count)
                ctx->resolve_rc = imgpu_error("CUDA device %d: this machine has %d CUDA device%s (0..%d)", ctx->ordinal,
                                              count, count == 1 ? "" : "s", count - 1);
        }
        if (ctx->resolve_rc < 0)
            snprintf(ctx->why, sizeof ctx->why, "%s", imgpu_error_message());
        ctx->resolved_once = 1;
    }
    int rc = ctx->resolve_rc;
    if (rc == 0 && resolved)
        *resolved = ctx->resolved;
    pthread_mutex_unlock(&ctx->lock);
    if (rc < 0)
        imgpu_error("%s", ctx->why);
    return rc;
}

/* A CUDA context resolves on its first call: without a GPU it fails at once, each time with the
 * same message, and never probes twice. AUTO is left to each job (ops.c's cost rule), so a
 * program whose jobs are all small never starts CUDA. */
static int ready(imgpu_context *ctx)
{
    if (!ctx)
        return imgpu_error("no context (NULL)");
    return ctx->device == IMGPU_DEVICE_CUDA ? imgpu_context_resolve(ctx, NULL) : 0;
}

int imgpu_context_run(imgpu_context *ctx, const imgpu_image *in, const imgpu_op *ops, int n,
                      imgpu_image **out, imgpu_device *used)
{
    if (ready(ctx) < 0)
        return -1;
    if (!in || (n > 0 && !ops) || n < 0)
        return imgpu_error("imgpu_context_run: no input image or ops");
    if (ctx->ordinal >= 0) {   /* a chosen GPU: through its own device state (device_image.c) */
        if (used)
            *used = IMGPU_DEVICE_CUDA;
        return imgpu__context_run_host_on_device(ctx, in, ops, n, out);
    }
    imgpu_image *r = imgpu_pipeline_run(in, ops, n, ctx->device, used);
    if (!r)
        return -1;
    *out = r;
    return 0;
}

int imgpu_context_run_into(imgpu_context *ctx, const imgpu_image *in, const imgpu_op *ops, int n,
                           imgpu_image *out, imgpu_device *used)
{
    if (!out || !out->data)
        return imgpu_error("imgpu_context_run_into: no output image");
    imgpu_image *r = NULL;
    if (imgpu_context_run(ctx, in, ops, n, &r, used) < 0)
        return -1;
    if (r->width != out->width || r->height != out->height || r->channels != out->channels ||
        r->depth != out->depth) {
        imgpu_error("the output is %dx%d, %d channels, %d bits, but the result is %dx%d, %d channels, "
                    "%d bits", out->width, out->height, out->channels, out->depth, r->width, r->height,
                    r->channels, r->depth);
        imgpu_image_free(r);
        return -1;
    }
    const size_t row = (size_t)r->width * (size_t)r->channels * (size_t)(r->depth / 8);
    for (int y = 0; y < r->height; y++)
        memcpy(imgpu_image_row(out, y), imgpu_image_row(r, y), row);
    imgpu_image_free(r);
    return 0;
}

int imgpu_context_histogram(imgpu_context *ctx, const imgpu_image *in, imgpu_histogram_full *out,
                            imgpu_device *used)
{
    if (ready(ctx) < 0)
        return -1;
    if (!in || !out)
        return imgpu_error("imgpu_context_histogram: no input image or output");
    if (ctx->ordinal >= 0) {
        if (used)
            *used = IMGPU_DEVICE_CUDA;
        return imgpu__context_histogram_host_on_device(ctx, in, out);
    }
    return imgpu_histogram_full_compute(in, ctx->device, out, used);
}

/* ---- caller-owned memory ------------------------------------------------------------------- */

imgpu_image *imgpu_image_wrap(void *data, int width, int height, int channels, int depth,
                              size_t stride)
{
    size_t total;
    if (!data) {
        imgpu_error("imgpu_image_wrap: no data (NULL)");
        return NULL;
    }
    if (imgpu_image_bytes(width, height, channels, depth, &total) < 0)
        return NULL;
    const size_t row = total / (size_t)height;
    if (stride == 0)
        stride = row;
    if (stride < row) {
        imgpu_error("imgpu_image_wrap: stride %zu is less than a row's %zu bytes", stride, row);
        return NULL;
    }
    if (depth == 16 && (((uintptr_t)data & 1) || (stride & 1))) {
        imgpu_error("imgpu_image_wrap: 16-bit samples must be 2-byte aligned (data and stride)");
        return NULL;
    }
    imgpu_image *im = calloc(1, sizeof *im);
    if (!im) {
        imgpu_error("out of memory");
        return NULL;
    }
    im->width = width;
    im->height = height;
    im->channels = channels;
    im->depth = depth;
    im->stride = stride;
    im->data = data;
    im->owns = 0;
    return im;
}

/* device_image.c — images in device memory (include/imgpu/imgpu.h): a context's private stream
 * and buffers (a CUDA session of its own, pipeline.c), runs from one device buffer into another
 * with the caller's stream ordered before and after through events, stream-ordered result
 * memory (from the context's own pool on the private stream; freed after the streams its
 * readers used; events reused through a pool),
 * copies to and from the host, and batched JPEG decode / encode on nvJPEG (jpeg.c). */
#include "cuda/cuda_util.h"
#include "cuda/scratch_ops.h"
#include "device_state.h"
#include "cuda/devices.h"
#include "cpu/parallel.h"
#include "error.h"
#include "exif.h"
#include "io.h"

#include <imgpu/imgpu.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct imgpu_device_event {
    cudaEvent_t e;
    int device;   /* the device current when it was made: its pool (event_put) */
};

typedef struct devstate {
    int device;
    imgpu_cuda_session *s;
    cudaStream_t stream;              /* the session's: the context's private stream */
    cudaEvent_t ev_in;                /* reused: the point in the caller's stream to wait for */
    cudaMemPool_t pool;               /* results' memory (NULL: the device's default pool) */
    unsigned char *d_in, *d_out;      /* gathered inputs / outputs of other layouts */
    size_t in_bytes, out_bytes;
    imgpu__cuda_scratch hist;         /* histogram counters (imgpu_context_histogram_device) */
    size_t hist_held;
#ifdef IMGPU_HAVE_NVJPEG
    imgpu_cuda_jpeg *jpeg;            /* made on the first decode_batch / encode */
#endif
} devstate;

static int fail_rc(int rc) { return rc < 0 ? -1 : rc; }

void imgpu__device_state_free(void *state)
{
    devstate *st = state;
    if (!st)
        return;
    int prev = 0;
    cudaGetDevice(&prev);
    cudaSetDevice(st->device);
    if (st->stream)
        cudaStreamSynchronize(st->stream);
#ifdef IMGPU_HAVE_NVJPEG
    imgpu_cuda_jpeg_free(st->jpeg);
#endif
    cudaFree(st->d_in);
    cudaFree(st->d_out);
    imgpu__cuda_scratch_free(&st->hist, &st->hist_held);
    if (st->ev_in)
        cudaEventDestroy(st->ev_in);
    if (st->pool)
        cudaMemPoolDestroy(st->pool);   /* results still alive keep it until they are freed */
    imgpu_cuda_session_free(st->s);
    cudaSetDevice(prev);
    free(st);
}

/* The results' memory pool of a context on `device` (current): one of its own, so that the
 * memory of a freed result is reused by the next call. The device's default pool (what
 * cudaMallocAsync takes) keeps nothing across a synchronization (its release threshold is 0):
 * every result allocated after a cudaDeviceSynchronize / cudaStreamSynchronize /
 * cudaEventSynchronize maps fresh physical memory (24 MB for a 4K RGB image), and the
 * synchronization unmaps it again: a call and a sync a loop paid both (issue 27's per-call
 * latency; bench/op_latency.py takes a synchronized call apart). This pool keeps up to
 * min(1 GiB, an eighth of the device) of freed memory; the rest goes back at each
 * synchronization as before, and an allocation that fails trims the pool and tries again
 * (dev_alloc). NULL (the default pool) where pools cannot be made. */
static cudaMemPool_t make_pool(int device)
{
    int supported = 0;
    if (cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device) != cudaSuccess || !supported) {
        cudaGetLastError();
        return NULL;
    }
    struct cudaMemPoolProps p;
    memset(&p, 0, sizeof p);
    p.allocType = cudaMemAllocationTypePinned;
    p.handleTypes = cudaMemHandleTypeNone;
    p.location.type = cudaMemLocationTypeDevice;
    p.location.id = device;
    cudaMemPool_t pool = NULL;
    if (cudaMemPoolCreate(&pool, &p) != cudaSuccess) {
        cudaGetLastError();
        return NULL;
    }
    size_t free_b = 0, total_b = 0;
    uint64_t keep = (uint64_t)1 << 30;
    if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess && total_b / 8 < keep)
        keep = total_b / 8;
    cudaGetLastError();
    cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
    cudaGetLastError();
    return pool;
}

/* Stream-ordered memory for a result, on the context's stream, from its pool. */
static cudaError_t dev_alloc(devstate *st, void **p, size_t bytes)
{
    if (!st->pool)
        return cudaMallocAsync(p, bytes, st->stream);
    cudaError_t r = cudaMallocFromPoolAsync(p, bytes, st->pool, st->stream);
    if (r == cudaErrorMemoryAllocation) {   /* what the pool keeps may be what is missing */
        cudaGetLastError();
        cudaMemPoolTrimTo(st->pool, 0);
        r = cudaMallocFromPoolAsync(p, bytes, st->pool, st->stream);
    }
    return r;
}

/* ---- events, reused -------------------------------------------------------------------------
 * cudaEventCreate / cudaEventDestroy are driver calls with host time of their own, and every
 * device call made two of each (its `done` and, from Python, the result's `ready`). An event freed by its holder (imgpu_device_event_free: nobody can query or wait on it
 * any more; a stream already made to wait on it keeps the point it was recorded at) goes back
 * to its device's pool here and is recorded afresh by a later call on that device. */
#define EVENT_POOL_DEVICES 64
#define EVENT_POOL_KEEP 64

static cudaEvent_t s_ev_pool[EVENT_POOL_DEVICES][EVENT_POOL_KEEP];
static int s_ev_count[EVENT_POOL_DEVICES];
static pthread_mutex_t s_ev_lock = PTHREAD_MUTEX_INITIALIZER;

/* An event of the current device (*device), from the pool or new. */
static cudaError_t event_get(cudaEvent_t *e, int *device)
{
    int dev = -1;
    cudaError_t r = cudaGetDevice(&dev);
    if (r != cudaSuccess)
        return r;
    *device = dev;
    if (dev >= 0 && dev < EVENT_POOL_DEVICES) {
        pthread_mutex_lock(&s_ev_lock);
        if (s_ev_count[dev] > 0) {
            *e = s_ev_pool[dev][--s_ev_count[dev]];
            pthread_mutex_unlock(&s_ev_lock);
            return cudaSuccess;
        }
        pthread_mutex_unlock(&s_ev_lock);
    }
    return cudaEventCreateWithFlags(e, cudaEventDisableTiming);
}

static void event_put(cudaEvent_t e, int device)
{
    if (!e)
        return;
    if (device >= 0 && device < EVENT_POOL_DEVICES) {
        pthread_mutex_lock(&s_ev_lock);
        if (s_ev_count[device] < EVENT_POOL_KEEP) {
            s_ev_pool[device][s_ev_count[device]++] = e;
            pthread_mutex_unlock(&s_ev_lock);
            return;
        }
        pthread_mutex_unlock(&s_ev_lock);
    }
    cudaEventDestroy(e);
}

/* The context's state, created on first use, its lock held (release with leave()); the
 * calling thread's device is switched to the context's (restored by leave). */
static devstate *enter(imgpu_context *ctx, pthread_mutex_t **lock, int *prev)
{
    if (!ctx) {
        imgpu_error("no context (NULL)");
        return NULL;
    }
    if (!imgpu_cuda_available()) {
        imgpu_error("CUDA not available: %s", imgpu_error_message());
        return NULL;
    }
    void **slot = imgpu__context_device_slot(ctx, lock);
    pthread_mutex_lock(*lock);
    *prev = -1;
    cudaGetDevice(prev);
    devstate *st = *slot;
    if (!st) {
        int rc = 0;
        if (!(st = calloc(1, sizeof *st))) {
            imgpu_error("out of memory");
            goto fail;
        }
        st->device = ctx->ordinal >= 0 ? ctx->ordinal : imgpu_cuda_default_device();
        IMGPU_CUDA_TRY(cudaSetDevice(st->device));
        if (!(st->s = imgpu_cuda_session_new()))
            goto fail;
        st->stream = imgpu_cuda_session_stream(st->s);
        IMGPU_CUDA_TRY(cudaEventCreateWithFlags(&st->ev_in, cudaEventDisableTiming));
        st->pool = make_pool(st->device);
        *slot = st;
        return st;
    fail:
        (void)rc;
        imgpu__device_state_free(st);
        if (*prev >= 0)
            cudaSetDevice(*prev);
        pthread_mutex_unlock(*lock);
        return NULL;
    }
    if (*prev != st->device && cudaSetDevice(st->device) != cudaSuccess) {
        imgpu_error("cannot select CUDA device %d", st->device);
        pthread_mutex_unlock(*lock);
        return NULL;
    }
    return st;
}

static void leave(pthread_mutex_t *lock, int prev, const devstate *st)
{
    if (prev >= 0 && prev != st->device)
        cudaSetDevice(prev);
    pthread_mutex_unlock(lock);
}

int imgpu_context_cuda_device(imgpu_context *ctx, int *device)
{
    pthread_mutex_t *lock;
    int prev;
    devstate *st = enter(ctx, &lock, &prev);
    if (!st)
        return -1;
    *device = st->device;
    leave(lock, prev, st);
    return 0;
}

void *imgpu_context_cuda_stream(imgpu_context *ctx)
{
    pthread_mutex_t *lock;
    int prev;
    devstate *st = enter(ctx, &lock, &prev);
    if (!st)
        return NULL;
    void *s = (void *)st->stream;
    leave(lock, prev, st);
    return s;
}

/* ---- device images and events ----------------------------------------------------------------- */

static int check_shape(int w, int h, int c, int depth, const char *what)
{
    size_t total;
    if (c < 1 || c > 4 || (depth != 8 && depth != 16))
        return imgpu_error("%s: %d channels of %d bits (imgpu takes 1..4 channels of 8 or 16 bits)", what, c, depth);
    return imgpu_image_bytes(w, h, c, depth, &total);
}

imgpu_device_image *imgpu_device_image_wrap(void *data, int width, int height, int channels, int depth,
                                            size_t stride, int device)
{
    if (!data) {
        imgpu_error("imgpu_device_image_wrap: no data (NULL)");
        return NULL;
    }
    if (check_shape(width, height, channels, depth, "imgpu_device_image_wrap") < 0)
        return NULL;
    const size_t row = (size_t)width * channels * (depth / 8);
    if (stride == 0)
        stride = row;
    if (stride < row) {
        imgpu_error("imgpu_device_image_wrap: stride %zu is less than a row's %zu bytes", stride, row);
        return NULL;
    }
    if (depth == 16 && (((uintptr_t)data & 1) || (stride & 1))) {
        imgpu_error("imgpu_device_image_wrap: 16-bit samples must be 2-byte aligned (data and stride)");
        return NULL;
    }
    imgpu_device_image *im = calloc(1, sizeof *im);
    if (!im) {
        imgpu_error("out of memory");
        return NULL;
    }
    *im = (imgpu_device_image){data, width, height, channels, depth, stride, device, 0, NULL};
    return im;
}

void imgpu_device_image_free(imgpu_device_image *im, void *const *streams, int nstreams)
{
    if (!im)
        return;
    if (im->owns && im->data) {
        cudaStream_t own = (cudaStream_t)im->internal;
        if (nstreams < 0) {
            cudaDeviceSynchronize();
        } else {
            for (int i = 0; i < nstreams; i++) {
                cudaEvent_t e = NULL;
                int dev = -1;
                if (streams[i] == (void *)own || event_get(&e, &dev) != cudaSuccess)
                    continue;   /* (its own stream: the free below is ordered after it anyway) */
                if (cudaEventRecord(e, (cudaStream_t)streams[i]) == cudaSuccess)
                    cudaStreamWaitEvent(own, e, 0);
                event_put(e, dev);   /* the wait keeps the point recorded: the event is free again */
            }
        }
        cudaFreeAsync(im->data, own);
    }
    free(im);
}

int imgpu_device_event_query(const imgpu_device_event *e)
{
    cudaError_t r = cudaEventQuery(e->e);
    if (r == cudaSuccess)
        return 1;
    if (r == cudaErrorNotReady)
        return 0;
    int rc = imgpu__cuda_fail(r, "cudaEventQuery");
    (void)rc;
    return -1;
}

int imgpu_device_event_wait(const imgpu_device_event *e)
{
    cudaError_t r = cudaEventSynchronize(e->e);
    return r == cudaSuccess ? 0 : fail_rc(imgpu__cuda_fail(r, "cudaEventSynchronize"));
}

int imgpu_device_event_order(const imgpu_device_event *e, void *stream)
{
    cudaError_t r = cudaStreamWaitEvent((cudaStream_t)stream, e->e, 0);
    return r == cudaSuccess ? 0 : fail_rc(imgpu__cuda_fail(r, "cudaStreamWaitEvent"));
}

/* An event (from the pool) recorded on `stream`; NULL with a message. */
static imgpu_device_event *event_record(cudaStream_t stream)
{
    imgpu_device_event *e = calloc(1, sizeof *e);
    if (!e) {
        imgpu_error("out of memory");
        return NULL;
    }
    cudaError_t r = event_get(&e->e, &e->device);
    if (r == cudaSuccess && (r = cudaEventRecord(e->e, stream)) != cudaSuccess)
        cudaEventDestroy(e->e);   /* (not back to the pool: it may be what failed) */
    if (r != cudaSuccess) {
        imgpu__cuda_fail(r, "cudaEventRecord");
        free(e);
        return NULL;
    }
    return e;
}

imgpu_device_event *imgpu_device_event_record(void *stream) { return event_record((cudaStream_t)stream); }

imgpu_device_event *imgpu_device_event_record_on(int device, void *stream)
{
    int cur = -1;
    if (device < 0 || cudaGetDevice(&cur) != cudaSuccess || cur == device)
        return event_record((cudaStream_t)stream);
    cudaError_t r = cudaSetDevice(device);
    if (r != cudaSuccess) {
        imgpu__cuda_fail(r, "cudaSetDevice");
        return NULL;
    }
    imgpu_device_event *e = event_record((cudaStream_t)stream);
    cudaSetDevice(cur);   /* the caller's device as it was */
    return e;
}

void imgpu_device_event_free(imgpu_device_event *e)
{
    if (!e)
        return;
    event_put(e->e, e->device);
    free(e);
}

/* ---- ordering against the caller's stream -------------------------------------------------------- */

/* The private stream waits for what the caller enqueued on cs so far (nothing to do when cs is
 * the private stream itself: its own order). */
static int wait_caller(devstate *st, cudaStream_t cs)
{
    int rc = 0;
    if (cs == st->stream)
        return 0;
    IMGPU_CUDA_TRY(cudaEventRecord(st->ev_in, cs));
    IMGPU_CUDA_TRY(cudaStreamWaitEvent(st->stream, st->ev_in, 0));
    return 0;
fail:
    return rc;
}

/* cs waits for the private stream's work so far; *done (may be NULL) marks it. Nothing to
 * record when cs is the private stream and no one asks for *done. */
static int signal_caller(devstate *st, cudaStream_t cs, imgpu_device_event **done)
{
    int rc = 0;
    if (cs == st->stream && !done)
        return 0;
    imgpu_device_event *e = event_record(st->stream);
    if (!e)
        return -1;
    if (cs != st->stream)
        IMGPU_CUDA_TRY(cudaStreamWaitEvent(cs, e->e, 0));
    if (done)
        *done = e;
    else
        imgpu_device_event_free(e);
    return 0;
fail:
    imgpu_device_event_free(e);
    return rc;
}

/* A device buffer of the state grown to `need` (after the private stream's work). */
static int grow(devstate *st, unsigned char **p, size_t *have, size_t need)
{
    int rc = 0;
    if (need <= *have)
        return 0;
    IMGPU_CUDA_TRY(cudaStreamSynchronize(st->stream));
    cudaFree(*p);
    *p = NULL;
    *have = 0;
    IMGPU_CUDA_TRY(cudaMalloc((void **)p, need));
    *have = need;
    return 0;
fail:
    return rc;
}

static imgpu_device_image *owned(devstate *st, void *data, int w, int h, int c, int depth)
{
    imgpu_device_image *im = calloc(1, sizeof *im);
    if (!im) {
        imgpu_error("out of memory");
        return NULL;
    }
    *im = (imgpu_device_image){data, w, h, c, depth, (size_t)w * c * (depth / 8), st->device, 1, (void *)st->stream};
    return im;
}

/* ---- runs ------------------------------------------------------------------------------------ */

static int run_common(imgpu_context *ctx, const imgpu_device_image *in, const imgpu_op *ops, int n, void *stream,
                      imgpu_device_image *into, imgpu_device_image **out, imgpu_device_event **done)
{
    if (!in || !in->data || n < 0 || (n > 0 && !ops))
        return imgpu_error("imgpu_context_run_device: no input image or ops");
    if (check_shape(in->width, in->height, in->channels, in->depth, "input") < 0)
        return -1;
    imgpu_plan plan;
    imgpu_limits lim;
    imgpu_get_limits(&lim);
    if (imgpu_pipeline_plan(in->width, in->height, in->channels, in->depth, ops, n, &lim, NULL, &plan) < 0)
        return -1;
    if (into && (!into->data || into->width != plan.out_w || into->height != plan.out_h ||
                 into->channels != plan.channels || into->depth != plan.depth))
        return imgpu_error("the output is %dx%d, %d channels, %d bits, but the result is %dx%d, %d channels, %d bits",
                           into ? into->width : 0, into ? into->height : 0, into ? into->channels : 0,
                           into ? into->depth : 0, plan.out_w, plan.out_h, plan.channels, plan.depth);
    pthread_mutex_t *lock;
    int prev, rc = 0;
    devstate *st = enter(ctx, &lock, &prev);
    if (!st)
        return -1;
    void *mem = NULL;
    const cudaStream_t cs = (cudaStream_t)stream;
    const int b = in->depth / 8;
    const size_t row = (size_t)in->width * in->channels * b;
    const size_t orow = (size_t)plan.out_w * plan.channels * (plan.depth / 8), obytes = orow * plan.out_h;
    if (in->device != st->device || (into && into->device != st->device)) {
        rc = imgpu_error("an image on CUDA device %d, but this context runs on device %d",
                         in->device != st->device ? in->device : into->device, st->device);
        goto fail;
    }
    if ((rc = wait_caller(st, cs)) != 0)
        goto fail;
    const unsigned char *src = in->data;
    if (in->stride != row || ((uintptr_t)in->data & 15)) {   /* gathered on the device */
        if ((rc = grow(st, &st->d_in, &st->in_bytes, row * in->height + 64)) != 0)
            goto fail;
        IMGPU_CUDA_TRY(cudaMemcpy2DAsync(st->d_in, row, in->data, in->stride, row, in->height,
                                         cudaMemcpyDeviceToDevice, st->stream));
        src = st->d_in;
    }
    unsigned char *dst;
    int direct = 1;
    if (into) {
        direct = into->stride == orow && !((uintptr_t)into->data & 15);
        if (!direct && (rc = grow(st, &st->d_out, &st->out_bytes, obytes + 64)) != 0)
            goto fail;
        dst = direct ? into->data : st->d_out;
    } else {
        IMGPU_CUDA_TRY(dev_alloc(st, &mem, obytes ? obytes : 1));
        dst = mem;
    }
    if ((rc = imgpu_cuda_session_run_device(st->s, src, in->width, in->height, in->channels, b, ops, n, dst)) != 0)
        goto fail;
    if (!direct)
        IMGPU_CUDA_TRY(cudaMemcpy2DAsync(into->data, into->stride, dst, orow, orow, plan.out_h,
                                         cudaMemcpyDeviceToDevice, st->stream));
    imgpu_device_image *res = NULL;
    if (!into && !(res = owned(st, mem, plan.out_w, plan.out_h, plan.channels, plan.depth))) {
        rc = -1;
        goto fail;
    }
    if ((rc = signal_caller(st, cs, done)) != 0) {
        if (res)
            res->data = NULL;
        free(res);
        goto fail;
    }
    if (out)
        *out = res;
    leave(lock, prev, st);
    return 0;
fail:
    if (mem)
        cudaFreeAsync(mem, st->stream);
    leave(lock, prev, st);
    return fail_rc(rc);
}

int imgpu_context_run_device(imgpu_context *ctx, const imgpu_device_image *in, const imgpu_op *ops, int n,
                             void *stream, imgpu_device_image **out, imgpu_device_event **done)
{
    if (!out)
        return imgpu_error("imgpu_context_run_device: no output (NULL)");
    return run_common(ctx, in, ops, n, stream, NULL, out, done);
}

int imgpu_context_run_device_into(imgpu_context *ctx, const imgpu_device_image *in, const imgpu_op *ops, int n,
                                  void *stream, imgpu_device_image *out, imgpu_device_event **done)
{
    if (!out)
        return imgpu_error("imgpu_context_run_device_into: no output image (NULL)");
    return run_common(ctx, in, ops, n, stream, out, NULL, done);
}

/* ---- host <-> device ---------------------------------------------------------------------------- */

int imgpu_context_upload(imgpu_context *ctx, const imgpu_image *in, void *stream, imgpu_device_image **out)
{
    if (!in || !in->data || !out)
        return imgpu_error("imgpu_context_upload: no image");
    if (check_shape(in->width, in->height, in->channels, in->depth, "upload") < 0)
        return -1;
    pthread_mutex_t *lock;
    int prev, rc = 0;
    devstate *st = enter(ctx, &lock, &prev);
    if (!st)
        return -1;
    void *mem = NULL;
    const size_t row = (size_t)in->width * in->channels * (in->depth / 8);
    if ((rc = wait_caller(st, (cudaStream_t)stream)) != 0)
        goto fail;
    IMGPU_CUDA_TRY(dev_alloc(st, &mem, row * in->height));
    /* from pageable memory the copy has taken the host rows when it returns */
    IMGPU_CUDA_TRY(cudaMemcpy2DAsync(mem, row, in->data, in->stride, row, in->height, cudaMemcpyHostToDevice,
                                     st->stream));
    imgpu_device_image *res = owned(st, mem, in->width, in->height, in->channels, in->depth);
    if (!res || (rc = signal_caller(st, (cudaStream_t)stream, NULL)) != 0) {
        free(res);
        rc = -1;
        goto fail;
    }
    *out = res;
    leave(lock, prev, st);
    return 0;
fail:
    if (mem)
        cudaFreeAsync(mem, st->stream);
    leave(lock, prev, st);
    return fail_rc(rc);
}

int imgpu_context_download(imgpu_context *ctx, const imgpu_device_image *in, void *stream, imgpu_image **out)
{
    if (!in || !in->data || !out)
        return imgpu_error("imgpu_context_download: no image");
    imgpu_image *res = imgpu_image_new(in->width, in->height, in->channels, in->depth);
    if (!res)
        return -1;
    pthread_mutex_t *lock;
    int prev, rc = 0;
    devstate *st = enter(ctx, &lock, &prev);
    if (!st) {
        imgpu_image_free(res);
        return -1;
    }
    const size_t row = (size_t)in->width * in->channels * (in->depth / 8);
    if ((rc = wait_caller(st, (cudaStream_t)stream)) != 0)
        goto fail;
    IMGPU_CUDA_TRY(cudaMemcpy2DAsync(res->data, res->stride, in->data, in->stride, row, in->height,
                                     cudaMemcpyDeviceToHost, st->stream));
    IMGPU_CUDA_TRY(cudaStreamSynchronize(st->stream));
    *out = res;
    leave(lock, prev, st);
    return 0;
fail:
    imgpu_image_free(res);
    leave(lock, prev, st);
    return fail_rc(rc);
}

/* ---- batched JPEG ------------------------------------------------------------------------------- */

static char *dup_message(const char *m)
{
    char *s = strdup(m && *m ? m : "failed");
    return s;
}

/* Full-resolution histograms of a device image (the GPU path of `imgpu.histogram` on a CUDA
 * array): the rows gathered into the state's padded buffer (the 8-bit kernel reads 16 bytes at
 * a time, past the last pixel), counted by the same kernels as the CPU image's CUDA path, and
 * downloaded; the host waits for them. */
int imgpu_context_histogram_device(imgpu_context *ctx, const imgpu_device_image *in, void *stream,
                                   imgpu_histogram_full *out)
{
    if (!in || !in->data || !out)
        return imgpu_error("imgpu_context_histogram_device: no input image or output");
    if (check_shape(in->width, in->height, in->channels, in->depth, "input") < 0)
        return -1;
    memset(out, 0, sizeof *out);
    pthread_mutex_t *lock;
    int prev, rc = 0, planes = 0;
    uint32_t *counts = NULL;
    devstate *st = enter(ctx, &lock, &prev);
    if (!st)
        return -1;
    const cudaStream_t cs = (cudaStream_t)stream;
    const size_t row = (size_t)in->width * in->channels * (in->depth / 8);
    const int levels = in->depth == 16 ? 65536 : 256;
    const uint32_t *d_counts = NULL;
    if (in->device != st->device) {
        rc = imgpu_error("an image on CUDA device %d, but this context runs on device %d", in->device, st->device);
        goto fail;
    }
    if ((rc = wait_caller(st, cs)) != 0 || (rc = grow(st, &st->d_in, &st->in_bytes, row * in->height + 64)) != 0)
        goto fail;
    IMGPU_CUDA_TRY(cudaMemcpy2DAsync(st->d_in, row, in->data, in->stride ? in->stride : row, row, in->height,
                                     cudaMemcpyDeviceToDevice, st->stream));
    if ((rc = imgpu__cuda_histogram_full(&st->hist, &st->hist_held, st->stream, st->d_in, in->width, in->height,
                                         in->channels, in->depth, &d_counts, &planes)) != 0)
        goto fail;
    const size_t bytes = (size_t)planes * levels * 4;
    if (!(counts = malloc(bytes))) {
        rc = imgpu_error("histogram: out of memory");
        goto fail;
    }
    IMGPU_CUDA_TRY(cudaMemcpyAsync(counts, d_counts, bytes, cudaMemcpyDeviceToHost, st->stream));
    IMGPU_CUDA_TRY(cudaStreamSynchronize(st->stream));
    if ((rc = signal_caller(st, cs, NULL)) != 0)
        goto fail;
    out->channels = in->channels;
    out->has_luma = in->channels >= 3;
    out->levels = levels;
    out->planes = planes;
    out->counts = counts;
    leave(lock, prev, st);
    return 0;
fail:
    free(counts);
    leave(lock, prev, st);
    return fail_rc(rc);
}

int imgpu__context_run_host_on_device(imgpu_context *ctx, const imgpu_image *in, const imgpu_op *ops, int n,
                                      imgpu_image **out)
{
    void *s = imgpu_context_cuda_stream(ctx);
    imgpu_device_image *d = NULL, *r = NULL;
    imgpu_device_event *done = NULL;
    if (!s)
        return -1;
    int rc = imgpu_context_upload(ctx, in, s, &d);
    if (rc == 0)
        rc = imgpu_context_run_device(ctx, d, ops, n, s, &r, &done);
    if (rc == 0)
        rc = imgpu_context_download(ctx, r, s, out);   /* waits for its copy */
    imgpu_device_event_free(done);
    imgpu_device_image_free(r, &s, 1);
    imgpu_device_image_free(d, &s, 1);
    return rc < 0 ? -1 : rc;
}

int imgpu__context_histogram_host_on_device(imgpu_context *ctx, const imgpu_image *in, imgpu_histogram_full *out)
{
    void *s = imgpu_context_cuda_stream(ctx);
    imgpu_device_image *d = NULL;
    if (!s)
        return -1;
    int rc = imgpu_context_upload(ctx, in, s, &d);
    if (rc == 0)
        rc = imgpu_context_histogram_device(ctx, d, s, out);
    imgpu_device_image_free(d, &s, 1);
    return rc < 0 ? -1 : rc;
}

#ifdef IMGPU_HAVE_NVJPEG
/* The frame size and whether an EXIF orientation other than 1 is there (from the markers). */
static void jpeg_header(const unsigned char *b, size_t n, int *w, int *h, int *turned)
{
    *w = *h = 0;
    *turned = 0;
    size_t i = 2;
    while (n >= 4 && i + 4 <= n && b[i] == 0xFF) {
        const int m = b[i + 1];
        if (m == 0xFF) {
            i++;
            continue;
        }
        if (m == 0xDA)
            break;
        const size_t L = (size_t)b[i + 2] << 8 | b[i + 3];
        if (L < 2 || i + 2 + L > n)
            break;
        const unsigned char *d = b + i + 4;
        if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC && L >= 8) {
            *h = d[1] << 8 | d[2];
            *w = d[3] << 8 | d[4];
        } else if (m == 0xE1) {
            size_t k = imgpu_exif_skip_header(d, L - 2);
            imgpu_exif_info ex;
            if (k && imgpu_exif_parse(d + k, L - 2 - k, &ex) == 0 && ex.orientation > 1)
                *turned = 1;
        }
        i += 2 + L;
    }
}
#endif

/* Item i on the CPU: decoded by the library's loaders, uploaded (8-bit gray or RGB stay as
 * they are; others as the loaders give them). */
static int cpu_item(devstate *st, const unsigned char *data, size_t len, int auto_orient, int i,
                    imgpu_device_image **out, char **err)
{
    int rc = 0;
    char name[48];
    snprintf(name, sizeof name, "<item %d>", i);
    imgpu_load_options lo;
    memset(&lo, 0, sizeof lo);
    lo.no_auto_orient = !auto_orient;
    void *mem = NULL;
    imgpu_image *im = NULL;
    if (imgpu_load_options_from_env(&lo) < 0 || !(im = imgpu_image_load_memory(data, len, name, &lo))) {
        *err = dup_message(imgpu_error_message());
        return 0;
    }
    const size_t row = (size_t)im->width * im->channels * (im->depth / 8);
    IMGPU_CUDA_TRY(dev_alloc(st, &mem, row * im->height));
    IMGPU_CUDA_TRY(cudaMemcpy2DAsync(mem, row, im->data, im->stride, row, im->height, cudaMemcpyHostToDevice,
                                     st->stream));
    if (!(out[i] = owned(st, mem, im->width, im->height, im->channels, im->depth))) {
        rc = -1;
        goto fail;
    }
    imgpu_image_free(im);
    return 0;
fail:
    if (mem)
        cudaFreeAsync(mem, st->stream);
    imgpu_image_free(im);
    *err = dup_message(imgpu_error_message());
    return rc == IMGPU_CUDA_STICKY ? rc : 0;
}

#ifdef IMGPU_HAVE_NVJPEG
/* Each item's decoder and frame. The route walks every baseline scan (issue 25,
 * src/io/jpeg_scan.c: about a fifth of a CPU decode), so it runs ahead of the decodes on a
 * thread of its own, a sub-batch at a time over the CPU backend's threads, while the engines
 * decode the sub-batch before: `routed` counts the items whose route is known. */
typedef struct {
    const unsigned char *const *data;
    const size_t *len;
    int n, has_jpeg, base;
    int *route, *ch, *w, *h, *turned;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int routed;
} route_job;

static void route_rows(void *ctx, int part, int y0, int y1)
{
    (void)part;
    route_job *J = ctx;
    for (int i = J->base + y0; i < J->base + y1; i++) {
        J->ch[i] = 0;
        J->route[i] = J->has_jpeg ? imgpu_cuda_jpeg_route(J->data[i], J->len[i], &J->ch[i]) : IMGPU_JPEG_CPU;
        jpeg_header(J->data[i], J->len[i], &J->w[i], &J->h[i], &J->turned[i]);
    }
}

static void *route_thread(void *arg)
{
    route_job *J = arg;
    const int threads = imgpu__cpu_threads();
    for (int i0 = 0; i0 < J->n; i0 += IMGPU_JPEG_BATCH) {
        const int m = J->n - i0 < IMGPU_JPEG_BATCH ? J->n - i0 : IMGPU_JPEG_BATCH;
        J->base = i0;
        imgpu__cpu_parallel_rows(m, m < threads ? m : threads, route_rows, J);
        pthread_mutex_lock(&J->mu);
        J->routed = i0 + m;
        pthread_cond_broadcast(&J->cv);
        pthread_mutex_unlock(&J->mu);
    }
    return NULL;
}

/* Waits until item i's route is known. */
static void route_wait(route_job *J, int i)
{
    pthread_mutex_lock(&J->mu);
    while (J->routed <= i)
        pthread_cond_wait(&J->cv, &J->mu);
    pthread_mutex_unlock(&J->mu);
}
#endif

int imgpu_context_decode_batch(imgpu_context *ctx, int n, const unsigned char *const *data, const size_t *len,
                               int auto_orient, void *stream, imgpu_device_image **out, char **errors)
{
    if (n < 0 || (n > 0 && (!data || !len || !out || !errors)))
        return imgpu_error("imgpu_context_decode_batch: bad arguments");
    for (int i = 0; i < n; i++) {
        out[i] = NULL;
        errors[i] = NULL;
    }
    pthread_mutex_t *lock;
    int prev, rc = 0;
#ifdef IMGPU_HAVE_NVJPEG
    int *routes = NULL, router_started = 0;
    pthread_t router;
#endif
    devstate *st = enter(ctx, &lock, &prev);
    if (!st)
        return -1;
    const cudaStream_t cs = (cudaStream_t)stream;
    if ((rc = wait_caller(st, cs)) != 0)
        goto fail;
#ifdef IMGPU_HAVE_NVJPEG
    if (!st->jpeg && !(st->jpeg = imgpu_cuda_jpeg_new()))
        imgpu_error_clear();   /* no nvJPEG here: every item on the CPU */
    int idx[IMGPU_JPEG_BATCH], route[IMGPU_JPEG_BATCH], ch[IMGPU_JPEG_BATCH], w[IMGPU_JPEG_BATCH], h[IMGPU_JPEG_BATCH];
    int ok[IMGPU_JPEG_BATCH], how[IMGPU_JPEG_BATCH];
    const unsigned char *bd[IMGPU_JPEG_BATCH], *d_img[IMGPU_JPEG_BATCH];
    size_t bl[IMGPU_JPEG_BATCH];
    routes = calloc((size_t)(n > 0 ? n : 1), 5 * sizeof(int));
    if (!routes) {
        rc = imgpu_error("out of memory");
        goto fail;
    }
    route_job J = {data, len, n, st->jpeg != NULL, 0, routes, routes + n, routes + 2 * n, routes + 3 * n,
                   routes + 4 * n, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    if (n > 0 && pthread_create(&router, NULL, route_thread, &J) != 0)
        route_thread(&J);   /* no thread: every route first, on this one */
    else if (n > 0)
        router_started = 1;
    int k = 0;
    for (int i = 0; i <= n; i++) {
        if (i < n) {
            route_wait(&J, i);
            const int c = J.ch[i], turned = J.turned[i], ww = J.w[i], hh = J.h[i], r = J.route[i];
            if (r == IMGPU_JPEG_CPU || ww < 1 || hh < 1 || (turned && auto_orient)) {
                if ((rc = cpu_item(st, data[i], len[i], auto_orient, i, out, &errors[i])) != 0)
                    goto fail;
                continue;
            }
            idx[k] = i;
            route[k] = r;
            ch[k] = c;
            w[k] = ww;
            h[k] = hh;
            bd[k] = data[i];
            bl[k] = len[i];
            k++;
        }
        if (k == IMGPU_JPEG_BATCH || (i == n && k > 0)) {
            /* the pool is reused by the next decode: the copies out of it finish first */
            IMGPU_CUDA_TRY(cudaStreamSynchronize(st->stream));
            /* the engines' batch enqueued; the copies below wait for it on st->stream, and
             * this thread goes on: the next sub-batch, or back to the caller, whose next call
             * walks its files while the engines finish these */
            rc = imgpu_cuda_jpeg_decode_after(st->jpeg, k, bd, bl, route, ch, w, h, d_img, ok, how, st->stream);
            if (rc == IMGPU_CUDA_STICKY)
                goto fail;
            for (int j = 0; j < k; j++) {
                const int it = idx[j];
                if (rc || !ok[j]) {   /* refused (or the batch failed): the CPU decodes it */
                    int r2 = cpu_item(st, bd[j], bl[j], auto_orient, it, out, &errors[it]);
                    if (r2) {
                        rc = r2;
                        goto fail;
                    }
                    continue;
                }
                void *mem = NULL;
                const size_t bytes = (size_t)w[j] * h[j] * ch[j];
                IMGPU_CUDA_TRY(dev_alloc(st, &mem, bytes));
                IMGPU_CUDA_TRY(cudaMemcpyAsync(mem, d_img[j], bytes, cudaMemcpyDeviceToDevice, st->stream));
                if (!(out[it] = owned(st, mem, w[j], h[j], ch[j], 8))) {
                    cudaFreeAsync(mem, st->stream);
                    errors[it] = dup_message("out of memory");
                }
            }
            rc = 0;
            k = 0;
        }
    }
    if (router_started)
        pthread_join(router, NULL);
    router_started = 0;
    free(routes);
    routes = NULL;
#else
    for (int i = 0; i < n; i++)
        if ((rc = cpu_item(st, data[i], len[i], auto_orient, i, out, &errors[i])) != 0)
            goto fail;
#endif
    if ((rc = signal_caller(st, cs, NULL)) != 0)
        goto fail;
    leave(lock, prev, st);
    return 0;
fail:
#ifdef IMGPU_HAVE_NVJPEG
    if (router_started)
        pthread_join(router, NULL);   /* it reads the caller's data: done before returning */
    free(routes);
#endif
    for (int i = 0; i < n; i++) {
        imgpu_device_image_free(out[i], NULL, 0);
        out[i] = NULL;
        free(errors[i]);
        errors[i] = NULL;
    }
    leave(lock, prev, st);
    return fail_rc(rc);
}

int imgpu_context_encode_jpeg_batch(imgpu_context *ctx, int n, const imgpu_device_image *const *in, int quality,
                                    int subsampling, int optimize, int progressive, void *stream,
                                    void *const *streams, unsigned char **buf, size_t *len, int *status,
                                    char **errors)
{
    for (int i = 0; i < n; i++) {
        buf[i] = NULL;
        len[i] = 0;
        status[i] = 1;
        errors[i] = NULL;
    }
    if (n < 0 || (n > 0 && !in))
        return imgpu_error("imgpu_context_encode_jpeg_batch: no images");
#ifdef IMGPU_HAVE_NVJPEG
    if (n == 0)
        return 0;
    pthread_mutex_t *lock;
    int prev, rc = 0;
    devstate *st = enter(ctx, &lock, &prev);
    if (!st)
        return -1;
    if (!st->jpeg && !(st->jpeg = imgpu_cuda_jpeg_new())) {
        leave(lock, prev, st);
        imgpu_error_clear();
        return 0;   /* every status 1: the CPU's */
    }
    imgpu_cuda_jpeg_src *src = calloc((size_t)n, sizeof *src);
    if (!src) {
        leave(lock, prev, st);
        return imgpu_error("out of memory");
    }
    for (int i = 0; i < n; i++) {
        const imgpu_device_image *d = in[i];
        /* src[i].c 0 (calloc): not nvJPEG's, status 1 */
        if (!d || !d->data || d->depth != 8 || (d->channels != 1 && d->channels != 3) || d->width < 1 ||
            d->height < 1 || d->stride < (size_t)d->width * d->channels)
            continue;
        if (d->device != st->device) {
            imgpu_error("an image on CUDA device %d, but this context runs on device %d", d->device, st->device);
            status[i] = -1;
            errors[i] = dup_message(imgpu_error_message());
            continue;
        }
        src[i] = (imgpu_cuda_jpeg_src){d->data, d->stride, d->width, d->height, d->channels,
                                       (cudaStream_t)(streams ? streams[i] : stream)};
    }
    const imgpu_cuda_jpeg_params p = {quality, subsampling, optimize, progressive};
    int *st2 = malloc((size_t)n * sizeof *st2);
    if (!st2) {
        free(src);
        leave(lock, prev, st);
        return imgpu_error("out of memory");
    }
    char **err2 = calloc((size_t)n, sizeof *err2);
    if (!err2) {
        free(st2);
        free(src);
        leave(lock, prev, st);
        return imgpu_error("out of memory");
    }
    rc = imgpu_cuda_jpeg_encode_many(st->jpeg, n, src, &p, buf, len, st2, err2);
    for (int i = 0; i < n; i++)
        if (status[i] != -1) {   /* the device check's refusals keep their message */
            status[i] = st2[i];
            errors[i] = err2[i];
        } else
            free(err2[i]);
    free(err2);
    free(st2);
    free(src);
    leave(lock, prev, st);
    (void)rc;   /* a device failure: the items not done carry its message */
    return 0;
#else
    (void)ctx, (void)quality, (void)subsampling, (void)optimize, (void)progressive, (void)stream, (void)streams;
    return 0;   /* every status 1: no nvJPEG in this build */
#endif
}

int imgpu_context_encode_jpeg(imgpu_context *ctx, const imgpu_device_image *in, int quality, int subsampling,
                              int optimize, int progressive, void *stream, unsigned char **buf, size_t *len)
{
#ifdef IMGPU_HAVE_NVJPEG
    if (!in || !in->data || !buf || !len)
        return imgpu_error("imgpu_context_encode_jpeg: no image");
    if (in->depth != 8 || (in->channels != 1 && in->channels != 3))
        return 1;
    pthread_mutex_t *lock;
    int prev, rc = 0;
    devstate *st = enter(ctx, &lock, &prev);
    if (!st)
        return -1;
    if (!st->jpeg && !(st->jpeg = imgpu_cuda_jpeg_new())) {
        leave(lock, prev, st);
        imgpu_error_clear();
        return 1;
    }
    const size_t row = (size_t)in->width * in->channels;
    const unsigned char *src = in->data;
    if ((rc = wait_caller(st, (cudaStream_t)stream)) != 0)
        goto fail;
    if (in->stride != row) {
        if ((rc = grow(st, &st->d_in, &st->in_bytes, row * in->height + 64)) != 0)
            goto fail;
        IMGPU_CUDA_TRY(cudaMemcpy2DAsync(st->d_in, row, in->data, in->stride, row, in->height,
                                         cudaMemcpyDeviceToDevice, st->stream));
        src = st->d_in;
    }
    const imgpu_cuda_jpeg_params p = {quality, subsampling, optimize, progressive};
    rc = imgpu_cuda_jpeg_encode(st->jpeg, src, in->width, in->height, in->channels, &p, st->stream, buf, len);
    leave(lock, prev, st);
    return fail_rc(rc);
fail:
    leave(lock, prev, st);
    return fail_rc(rc);
#else
    (void)ctx, (void)in, (void)quality, (void)subsampling, (void)optimize, (void)progressive, (void)stream;
    (void)buf, (void)len;
    return 1;
#endif
}

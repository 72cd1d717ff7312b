/* pipeline.c — runs a pipeline of ops on the GPU: one upload, the whole chain on the
 * device, one download.
 *
 * The image crosses into pinned host staging memory, then to the device with an async copy
 * on the backend's own stream (never the legacy default stream, so nothing synchronizes
 * behind our back). Ops ping-pong between two packed device buffers; rotation samples a
 * CUDA array through texture objects (texture.c). Device buffers, pinned staging and the
 * histogram/LUT scratch are cached across calls and only grow, so a bench loop or the viewer
 * does not pay cudaMalloc per image. One mutex serializes users of the cached context.
 * Every call and launch is checked (IMGPU_CUDA_TRY); device memory is checked against the
 * budget before large allocations, and an allocation failure comes back as IMGPU_CUDA_OOM,
 * which `--device auto` answers by running on the CPU.
 */
#include "cuda_util.h"
#include "error.h"
#include "op.h"
#include "op/op_table.h"
#include "kernels.h"
#include "scratch_ops.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HIST_WORDS (5 * 256)     /* the most planes a histogram has: RGBA + luma */
#define FUSED_WORDS (2 * 3 * 256) /* fused equalize: 2 parities x up to 3 planes */

struct imgpu_cuda_session {
    int ready;
    cudaStream_t stream;
    unsigned char *h_pinned;  /* staging for uploads and downloads */
    size_t pinned_bytes;
    unsigned char *d_src;     /* the uploaded source: ops read it, never write it */
    size_t src_bytes;
    unsigned char *d_buf[2];  /* ping-pong for the ops' results */
    size_t buf_bytes;
    uint32_t *d_hist;   /* HIST_WORDS */
    uint32_t *d_fused;  /* FUSED_WORDS, zeroed once; see imgpu_launch_equalize_fused */
    uint8_t *d_lut;     /* 3 * 256 + 1 (the constant flag) */
    int parity;
    imgpu__cuda_tex tex;
    size_t held;        /* device bytes this session holds, for the budget */
    int src_w, src_h, src_c;         /* shape of d_src */
    int src_b, res_b;                /* bytes per sample of d_src and of the result: 1 or 2 */
    imgpu__cuda_scratch scratch;     /* the ops' histograms and LUTs (scratch_ops.h) */
    imgpu__cuda_resize_cache rsz;    /* resize's tables of the last size (resize.c) */
    const unsigned char *d_result;   /* the last run's result (d_src, d_buf[0] or d_buf[1]) */
    int res_w, res_h, res_c;
};
typedef struct imgpu_cuda_session ctx;

/* The session behind the one-call API (imgpu_cuda_pipeline_run, imgpu_cuda_histogram). */
static ctx s_ctx;
static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int ctx_init(ctx *c)
{
    int rc = 0;
    if (c->ready)
        return 0;
    size_t small = HIST_WORDS * 4 + FUSED_WORDS * 4 + 3 * 256 + 1;
    if ((rc = imgpu__cuda_reserve(small, 0)) != 0)
        return rc;
    IMGPU_CUDA_TRY(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
    IMGPU_CUDA_TRY(cudaMalloc((void **)&c->d_hist, HIST_WORDS * 4));
    IMGPU_CUDA_TRY(cudaMalloc((void **)&c->d_fused, FUSED_WORDS * 4));
    IMGPU_CUDA_TRY(cudaMalloc((void **)&c->d_lut, 3 * 256 + 1));
    IMGPU_CUDA_TRY(cudaMemsetAsync(c->d_fused, 0, FUSED_WORDS * 4, c->stream));
    c->held = small;
    c->ready = 1;
    return 0;
fail:
    cudaFree(c->d_hist);
    cudaFree(c->d_fused);
    cudaFree(c->d_lut);
    if (c->stream)
        cudaStreamDestroy(c->stream);
    memset(c, 0, sizeof *c);
    return rc;
}

/* Grow a device buffer to at least `need` bytes (contents not kept). */
static int grow_device(ctx *c, unsigned char **p, size_t *have, size_t need)
{
    int rc = 0;
    if (need <= *have)
        return 0;
    IMGPU_CUDA_TRY(cudaStreamSynchronize(c->stream)); /* queued work may still use it */
    cudaFree(*p);
    *p = NULL;
    c->held -= *have;
    *have = 0;
    if ((rc = imgpu__cuda_reserve(need, c->held)) != 0)
        return rc;
    IMGPU_CUDA_TRY(cudaMalloc((void **)p, need));
    *have = need;
    c->held += need;
    return 0;
fail:
    return rc;
}

/* Grow the two ping-pong buffers to `bytes` each. */
static int grow_buffers(ctx *c, size_t bytes)
{
    int rc = 0;
    if (bytes <= c->buf_bytes)
        return 0;
    size_t have0 = c->buf_bytes, have1 = c->buf_bytes;
    if ((rc = grow_device(c, &c->d_buf[0], &have0, bytes)) != 0 ||
        (rc = grow_device(c, &c->d_buf[1], &have1, bytes)) != 0) {
        /* keep the books right: both buffers at the smaller of the two sizes */
        c->buf_bytes = have0 < have1 ? have0 : have1;
        return rc;
    }
    c->buf_bytes = bytes;
    return 0;
}

static int grow_pinned(ctx *c, size_t need)
{
    int rc = 0;
    if (need <= c->pinned_bytes)
        return 0;
    IMGPU_CUDA_TRY(cudaStreamSynchronize(c->stream));
    cudaFreeHost(c->h_pinned);
    c->h_pinned = NULL;
    c->pinned_bytes = 0;
    IMGPU_CUDA_TRY(cudaMallocHost((void **)&c->h_pinned, need));
    c->pinned_bytes = need;
    return 0;
fail:
    return rc;
}

static void session_release(ctx *c)
{
    if (!c->ready)
        return;
    cudaStreamSynchronize(c->stream);
    imgpu__cuda_tex_destroy(&c->tex, &c->held);
    cudaFree(c->d_src);
    cudaFree(c->d_buf[0]);
    cudaFree(c->d_buf[1]);
    cudaFree(c->d_hist);
    cudaFree(c->d_fused);
    cudaFree(c->d_lut);
    cudaFreeHost(c->h_pinned);
    imgpu__cuda_scratch_free(&c->scratch, &c->held);
    imgpu__cuda_resize_cache_free(&c->rsz, &c->held);
    cudaStreamDestroy(c->stream);
    memset(c, 0, sizeof *c);
}

int imgpu_cuda_shutdown(void)
{
    /* A probe still creating the context means no op ever ran on the GPU (every GPU path
     * joins the probe first): nothing to release, and waiting would cost the rest of CUDA's
     * start-up (0.3 s, seconds on a busy machine) for nothing. */
    if (imgpu_cuda_state(NULL) == 0 && imgpu__cuda_probe_running())
        return 1;
    imgpu__cuda_join_probe();
    pthread_mutex_lock(&s_lock);
    session_release(&s_ctx);
    pthread_mutex_unlock(&s_lock);
    return 0;
}

/* Shape of an image as it flows through the chain (scratch_ops.h). */
typedef imgpu__cuda_shape shape;

static size_t shape_bytes(shape s) { return (size_t)s.w * s.h * s.c * s.b; }

static shape op_output(shape in, const imgpu_op *op)
{
    shape out = in;
    const imgpu_op_desc *d = imgpu_op_desc_of(op->kind);
    if (d && d->out_size)
        d->out_size(in.w, in.h, op, &out.w, &out.h);
    return out;
}

/* Stage a host image into pinned memory and upload it into the session's source buffer. */
static int upload(ctx *c, const imgpu_image *in)
{
    int rc = 0;
    const size_t row = (size_t)in->width * in->channels * (in->depth / 8), bytes = row * in->height;
    /* pad so every 16-pixel chunk's 16-byte loads stay inside the allocation */
    if ((rc = ctx_init(c)) != 0 || (rc = grow_device(c, &c->d_src, &c->src_bytes, bytes + 64)) != 0 ||
        (rc = grow_pinned(c, bytes > HIST_WORDS * 4 ? bytes : HIST_WORDS * 4)) != 0)
        return rc;
    IMGPU_CUDA_TRY(cudaStreamSynchronize(c->stream)); /* the staging may still feed a download */
    for (int y = 0; y < in->height; y++)
        memcpy(c->h_pinned + (size_t)y * row, imgpu_image_row(in, y), row);
    IMGPU_CUDA_TRY(cudaMemcpyAsync(c->d_src, c->h_pinned, bytes, cudaMemcpyHostToDevice, c->stream));
    c->src_w = in->width;
    c->src_h = in->height;
    c->src_c = in->channels;
    c->src_b = c->res_b = in->depth / 8;
    c->d_result = c->d_src;
    c->res_w = in->width;
    c->res_h = in->height;
    c->res_c = in->channels;
    return 0;
fail:
    return rc;
}

/* Enqueue ops[0..n) on the uploaded source; the result stays on the device. */
/* IMGPU_FAULT_INJECT=trap|address (tests only; "kernel" is "trap"): the first run of the process
 * launches a kernel that faults (kernels/fault.cu) before its ops, so tests see a real sticky
 * error. Inert unless set. */
static int inject_fault(ctx *c)
{
    static int s_injected;
    const char *v = getenv("IMGPU_FAULT_INJECT");
    if (s_injected || !v)
        return 0;
    const int address = !strcmp(v, "address");
    if (!address && strcmp(v, "trap") != 0 && strcmp(v, "kernel") != 0)
        return 0;
    s_injected = 1;
    cudaError_t e = imgpu_launch_fault(c->stream, address);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(c->stream);
    if (e == cudaSuccess)
        return imgpu_error("IMGPU_FAULT_INJECT=%s: the faulting kernel did not fault", v);
    char what[64];
    snprintf(what, sizeof what, "the kernel injected by IMGPU_FAULT_INJECT=%s", v);
    return imgpu__cuda_fail(e, what);
}

/* Grow the ping-pong buffers to `bytes` keeping the `keep` bytes at *held_in (one of them):
 * through a temporary device copy; the kept bytes end in the same buffer index. */
static int regrow_keeping(ctx *c, unsigned char *held_in, size_t keep, size_t bytes)
{
    int rc = 0;
    unsigned char *tmp = NULL;
    const int idx = held_in == c->d_buf[1];
    if ((rc = imgpu__cuda_reserve(keep, c->held)) != 0)
        return rc;
    IMGPU_CUDA_TRY(cudaMalloc((void **)&tmp, keep ? keep : 1));
    IMGPU_CUDA_TRY(cudaMemcpyAsync(tmp, held_in, keep, cudaMemcpyDeviceToDevice, c->stream));
    c->held += keep;
    rc = grow_buffers(c, bytes);
    c->held -= keep;
    if (rc)
        goto fail;
    IMGPU_CUDA_TRY(cudaMemcpyAsync(c->d_buf[idx], tmp, keep, cudaMemcpyDeviceToDevice, c->stream));
    IMGPU_CUDA_TRY(cudaStreamSynchronize(c->stream));
fail:
    cudaFree(tmp);
    return rc;
}

static int run_ops(ctx *c, const imgpu_op *ops, int n)
{
    int rc = 0;
    if (!c->ready || !c->d_src)
        return imgpu_error("CUDA session: run before any upload");
    if ((rc = inject_fault(c)) != 0)
        return rc;
    /* The bounds before any device allocation (sessions reach here without
     * imgpu_pipeline_run): results and host memory as for the CPU, and the device memory this
     * run needs against the same --max-memory; over it the GPU is out of memory for this job,
     * which `auto` answers on the CPU (where the host check above still holds). */
    imgpu_plan plan;
    imgpu_limits lim;
    imgpu_get_limits(&lim);
    if (imgpu_pipeline_plan(c->src_w, c->src_h, c->src_c, 8 * c->src_b, ops, n, &lim, NULL, &plan) < 0)
        return -1;
    if (plan.device_bytes > lim.max_memory) {
        imgpu_error("the GPU would need %" PRIu64 " bytes for this %dx%d image's ops, over --max-memory %" PRIu64,
                    plan.device_bytes, c->src_w, c->src_h, lim.max_memory);
        return IMGPU_CUDA_OOM;
    }
    shape s = {c->src_w, c->src_h, c->src_c, c->src_b};
    size_t most = 0;
    for (int i = 0; i < n; i++) {
        s = op_output(s, &ops[i]);
        if ((uint64_t)s.w * s.h > ((uint64_t)1 << 31)) {
            imgpu_error("a %dx%d intermediate image is too large for the GPU backend", s.w, s.h);
            return IMGPU_CUDA_OOM;
        }
        if (shape_bytes(s) > most)
            most = shape_bytes(s);
    }
    if (n > 0 && (rc = grow_buffers(c, most + 64)) != 0)
        return rc;
    const unsigned char *src = c->d_src;
    s = (shape){c->src_w, c->src_h, c->src_c, c->src_b};
    imgpu__cuda_op_env env = {c->stream, &c->scratch, &c->held, &c->tex, c->d_fused, &c->parity, NULL, &c->rsz};
    for (int i = 0; i < n; i++) {
        shape o = op_output(s, &ops[i]);
        const shape planned = o;
        unsigned char *dst = c->d_buf[i & 1];
        env.result = &o;   /* a data-sized op (crop --trim) may make it smaller */
        rc = imgpu__cuda_run_op(&env, &ops[i], src, dst, s, o);
        if (rc)
            return rc;
        if ((o.w != planned.w || o.h != planned.h) && i + 1 < n) {
            /* the rest of the chain from the smaller image (each op checks its own input, as
             * on the CPU: a crop's box inside it); a stage may now be larger than planned (a
             * resize --fit of a trimmed strip): the buffers grow, the result moved across */
            shape r = o;
            size_t need = 0;
            for (int k = i + 1; k < n; k++) {
                r = op_output(r, &ops[k]);
                if ((uint64_t)r.w * r.h > ((uint64_t)1 << 31)) {
                    imgpu_error("a %dx%d intermediate image is too large for the GPU backend", r.w, r.h);
                    return IMGPU_CUDA_OOM;
                }
                if (shape_bytes(r) > need)
                    need = shape_bytes(r);
            }
            if (need + 64 > c->buf_bytes && (rc = regrow_keeping(c, dst, shape_bytes(o), need + 64)) != 0)
                return rc;
            dst = c->d_buf[i & 1];
        }
        src = dst;
        s = o;
    }
    c->d_result = src;
    c->res_w = s.w;
    c->res_h = s.h;
    c->res_c = s.c;
    c->res_b = s.b;
    return 0;
}

/* Download the last result into a new image (waits for the stream). */
static int download(ctx *c, imgpu_image **out)
{
    int rc = 0;
    const shape final = {c->res_w, c->res_h, c->res_c, c->res_b};
    imgpu_image *res = NULL;
    if ((rc = grow_pinned(c, shape_bytes(final))) != 0)
        return rc;
    if (!(res = imgpu_image_new(final.w, final.h, final.c, 8 * final.b)))
        return -1;
    IMGPU_CUDA_TRY(cudaMemcpyAsync(c->h_pinned, c->d_result, shape_bytes(final), cudaMemcpyDeviceToHost, c->stream));
    IMGPU_CUDA_TRY(cudaStreamSynchronize(c->stream));
    memcpy(res->data, c->h_pinned, shape_bytes(final));
    *out = res;
    return 0;
fail:
    imgpu_image_free(res);
    return rc;
}

static int pipeline_locked(ctx *c, const imgpu_image *in, const imgpu_op *ops, int n, imgpu_image **out)
{
    int rc;
    double t0 = now_ms();
    if ((rc = upload(c, in)) != 0 || (rc = run_ops(c, ops, n)) != 0 || (rc = download(c, out)) != 0)
        return rc;
    if (getenv("IMGPU_STATS"))
        fprintf(stderr, "imgpu: gpu part (stage, upload, %d op(s), download): %.3f ms\n", n, now_ms() - t0);
    return 0;
}

int imgpu_cuda_pipeline_run(const imgpu_image *in, const imgpu_op *ops, int n, imgpu_image **out)
{
    if (in->depth != 8 && in->depth != 16)
        return imgpu_error("the CUDA backend handles 8- and 16-bit images only");
    pthread_mutex_lock(&s_lock);
    int rc = pipeline_locked(&s_ctx, in, ops, n, out);
    pthread_mutex_unlock(&s_lock);
    return rc;
}

static int histogram_locked(ctx *c, const imgpu_image *in, imgpu_histogram *out)
{
    int rc = 0;
    const int planes = imgpu_hist_planes(in->channels, 1);
    if ((rc = upload(c, in)) != 0) /* the pinned staging is >= HIST_WORDS words: it takes the bins back */
        return rc;
    IMGPU_CUDA_TRY(cudaMemsetAsync(c->d_hist, 0, (size_t)planes * 256 * 4, c->stream));
    IMGPU_CUDA_TRY(imgpu_launch_histogram(IMGPU_HIST_DEFAULT_FOR(in->channels), c->d_src, (size_t)in->width * in->height,
                                          in->channels, 1, c->d_hist, imgpu_hist_grid(imgpu__cuda_tuning()),
                                          c->stream));
    IMGPU_CUDA_TRY(cudaMemcpyAsync(c->h_pinned, c->d_hist, (size_t)planes * 256 * 4, cudaMemcpyDeviceToHost, c->stream));
    IMGPU_CUDA_TRY(cudaStreamSynchronize(c->stream));
    memset(out, 0, sizeof *out);
    out->channels = in->channels;
    out->has_luma = in->channels >= 3;
    const uint32_t *h = (const uint32_t *)c->h_pinned;
    for (int ch = 0; ch < in->channels; ch++)
        memcpy(out->bins[ch], h + ch * 256, 256 * 4);
    if (out->has_luma)
        memcpy(out->luma, h + in->channels * 256, 256 * 4);
    return 0;
fail:
    return rc;
}

int imgpu_cuda_histogram(const imgpu_image *in, imgpu_histogram *out)
{
    if (in->depth != 8)
        return imgpu_error("the CUDA backend handles 8-bit images only");
    pthread_mutex_lock(&s_lock);
    int rc = histogram_locked(&s_ctx, in, out);
    pthread_mutex_unlock(&s_lock);
    return rc;
}

/* Full-resolution histograms (8 or 16 bits; op.h's imgpu_histogram_full layout). */
static int histogram_full_locked(ctx *c, const imgpu_image *in, imgpu_histogram_full *out)
{
    int rc = 0, planes = 0;
    const uint32_t *d_counts = NULL;
    uint32_t *counts = NULL;
    const int levels = in->depth == 16 ? 65536 : 256;
    if ((rc = upload(c, in)) != 0 ||
        (rc = imgpu__cuda_histogram_full(&c->scratch, &c->held, c->stream, c->d_src, in->width, in->height,
                                         in->channels, in->depth, &d_counts, &planes)) != 0)
        return rc;
    const size_t bytes = (size_t)planes * levels * 4;
    if ((rc = grow_pinned(c, bytes)) != 0)
        return rc;
    if (!(counts = malloc(bytes)))
        return imgpu_error("histogram: out of memory");
    IMGPU_CUDA_TRY(cudaMemcpyAsync(c->h_pinned, d_counts, bytes, cudaMemcpyDeviceToHost, c->stream));
    IMGPU_CUDA_TRY(cudaStreamSynchronize(c->stream));
    memcpy(counts, c->h_pinned, bytes);
    memset(out, 0, sizeof *out);
    out->channels = in->channels;
    out->has_luma = in->channels >= 3;
    out->levels = levels;
    out->planes = planes;
    out->counts = counts;
    return 0;
fail:
    free(counts);
    return rc;
}

int imgpu_cuda_histogram_full(const imgpu_image *in, imgpu_histogram_full *out)
{
    if (in->depth != 8 && in->depth != 16)
        return imgpu_error("histogram: %d-bit images are not supported", in->depth);
    pthread_mutex_lock(&s_lock);
    int rc = histogram_full_locked(&s_ctx, in, out);
    pthread_mutex_unlock(&s_lock);
    return rc;
}

/* ---- sessions: device-resident images for the viewer and batch mode ------------------------ */

imgpu_cuda_session *imgpu_cuda_session_new(void)
{
    ctx *c = calloc(1, sizeof *c);
    if (!c) {
        imgpu_error("out of memory");
        return NULL;
    }
    if (ctx_init(c) != 0) {
        free(c);
        return NULL;
    }
    return c;
}

void imgpu_cuda_session_free(imgpu_cuda_session *s)
{
    if (!s)
        return;
    session_release(s);
    free(s);
}

cudaStream_t imgpu_cuda_session_stream(const imgpu_cuda_session *s) { return s->stream; }

int imgpu_cuda_session_upload(imgpu_cuda_session *s, const imgpu_image *in)
{
    if (in->depth != 8 && in->depth != 16)
        return imgpu_error("the CUDA backend handles 8- and 16-bit images only");
    return upload(s, in);
}

int imgpu_cuda_session_upload_device(imgpu_cuda_session *s, const unsigned char *d, int w, int h, int c)
{
    int rc = 0;
    const size_t bytes = (size_t)w * h * c;
    if ((rc = ctx_init(s)) != 0 || (rc = grow_device(s, &s->d_src, &s->src_bytes, bytes + 64)) != 0)
        return rc;
    IMGPU_CUDA_TRY(cudaMemcpyAsync(s->d_src, d, bytes, cudaMemcpyDeviceToDevice, s->stream));
    s->src_w = s->res_w = w;
    s->src_h = s->res_h = h;
    s->src_c = s->res_c = c;
    s->src_b = s->res_b = 1;
    s->d_result = s->d_src;
    return 0;
fail:
    return rc;
}

int imgpu_cuda_session_run(imgpu_cuda_session *s, const imgpu_op *ops, int n, const unsigned char **d_out,
                           int *w, int *h, int *channels)
{
    int rc = run_ops(s, ops, n);
    if (rc)
        return rc;
    if (d_out)
        *d_out = s->d_result;
    if (w)
        *w = s->res_w;
    if (h)
        *h = s->res_h;
    if (channels)
        *channels = s->res_c;
    return 0;
}

int imgpu_cuda_session_download(imgpu_cuda_session *s, imgpu_image **out) { return download(s, out); }

/* ---- device images (device_image.c): a chain from one device buffer into another ----------- */

int imgpu_cuda_session_run_device(imgpu_cuda_session *s, const unsigned char *d_in, int w, int h, int c, int b,
                                  const imgpu_op *ops, int n, unsigned char *d_out)
{
    int rc = 0;
    if ((rc = ctx_init(s)) != 0)
        return rc;
    imgpu_plan plan;
    imgpu_limits lim;
    imgpu_get_limits(&lim);
    if (imgpu_pipeline_plan(w, h, c, 8 * b, ops, n, &lim, NULL, &plan) < 0)
        return -1;
    shape sh = {w, h, c, b};
    size_t most = 0;
    for (int i = 0; i + 1 < n; i++) {   /* the intermediates: the last op writes d_out */
        sh = op_output(sh, &ops[i]);
        if ((uint64_t)sh.w * sh.h > ((uint64_t)1 << 31)) {
            imgpu_error("a %dx%d intermediate image is too large for the GPU backend", sh.w, sh.h);
            return IMGPU_CUDA_OOM;
        }
        if (shape_bytes(sh) > most)
            most = shape_bytes(sh);
    }
    if (most && (rc = grow_buffers(s, most + 64)) != 0)
        return rc;
    sh = (shape){w, h, c, b};
    if (n == 0) {
        IMGPU_CUDA_TRY(cudaMemcpyAsync(d_out, d_in, shape_bytes(sh), cudaMemcpyDeviceToDevice, s->stream));
        return 0;
    }
    const unsigned char *src = d_in;
    /* sized in advance: no result smaller than its plan (env.result NULL: crop --trim refuses) */
    imgpu__cuda_op_env env = {s->stream, &s->scratch, &s->held, &s->tex, s->d_fused, &s->parity, NULL, &s->rsz};
    for (int i = 0; i < n; i++) {
        shape o = op_output(sh, &ops[i]);
        unsigned char *dst = i == n - 1 ? d_out : s->d_buf[i & 1];
        if ((rc = imgpu__cuda_run_op(&env, &ops[i], src, dst, sh, o)) != 0)
            return rc;
        src = dst;
        sh = o;
    }
    s->d_result = NULL;   /* the session's own source and results are not involved */
    return 0;
fail:
    return rc;
}

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
#include "../error.h"
#include "../cpu/cpu.h"
#include "kernels.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HIST_WORDS (5 * 256)     /* the most planes a histogram has: RGBA + luma */
#define FUSED_WORDS (2 * 3 * 256) /* fused equalize: 2 parities x up to 3 planes */

typedef struct ctx {
    int ready;
    cudaStream_t stream;
    unsigned char *h_pinned;
    size_t pinned_bytes;
    unsigned char *d_buf[2];
    size_t buf_bytes;
    uint32_t *d_hist;   /* HIST_WORDS */
    uint32_t *d_fused;  /* FUSED_WORDS, zeroed once; see imgpu_launch_equalize_fused */
    uint8_t *d_lut;     /* 3 * 256 + 1 (the constant flag) */
    int parity;
    imgpu__cuda_tex tex;
    size_t held;        /* device bytes imgpu holds, for the budget */
} ctx;

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

/* Grow the two device buffers to `bytes` each and the pinned staging to `pinned` bytes. */
static int ctx_reserve(ctx *c, size_t bytes, size_t pinned)
{
    int rc = 0;
    if (bytes > c->buf_bytes) {
        IMGPU_CUDA_TRY(cudaStreamSynchronize(c->stream));
        cudaFree(c->d_buf[0]);
        cudaFree(c->d_buf[1]);
        c->d_buf[0] = c->d_buf[1] = NULL;
        c->held -= 2 * c->buf_bytes;
        c->buf_bytes = 0;
        if ((rc = imgpu__cuda_reserve(2 * bytes, c->held)) != 0)
            return rc;
        IMGPU_CUDA_TRY(cudaMalloc((void **)&c->d_buf[0], bytes));
        IMGPU_CUDA_TRY(cudaMalloc((void **)&c->d_buf[1], bytes));
        c->buf_bytes = bytes;
        c->held += 2 * bytes;
    }
    if (pinned > c->pinned_bytes) {
        IMGPU_CUDA_TRY(cudaStreamSynchronize(c->stream));
        cudaFreeHost(c->h_pinned);
        c->h_pinned = NULL;
        c->pinned_bytes = 0;
        IMGPU_CUDA_TRY(cudaMallocHost((void **)&c->h_pinned, pinned));
        c->pinned_bytes = pinned;
    }
    return 0;
fail:
    if (c->d_buf[0] && !c->d_buf[1]) { /* half-grown: drop both, keep the books right */
        cudaFree(c->d_buf[0]);
        c->d_buf[0] = NULL;
    }
    return rc;
}

void imgpu_cuda_shutdown(void)
{
    imgpu__cuda_join_probe();
    pthread_mutex_lock(&s_lock);
    ctx *c = &s_ctx;
    if (c->ready) {
        cudaStreamSynchronize(c->stream);
        imgpu__cuda_tex_destroy(&c->tex, &c->held);
        cudaFree(c->d_buf[0]);
        cudaFree(c->d_buf[1]);
        cudaFree(c->d_hist);
        cudaFree(c->d_fused);
        cudaFree(c->d_lut);
        cudaFreeHost(c->h_pinned);
        cudaStreamDestroy(c->stream);
        memset(c, 0, sizeof *c);
    }
    pthread_mutex_unlock(&s_lock);
}

/* Shape of an image as it flows through the chain. */
typedef struct shape {
    int w, h, c;
} shape;

static size_t shape_bytes(shape s) { return (size_t)s.w * s.h * s.c; }

static shape op_output(shape in, const imgpu_op *op)
{
    shape out = in;
    if (op->kind == IMGPU_OP_ROTATE)
        imgpu_rotate_output_size(in.w, in.h, &op->u.rotate, &out.w, &out.h);
    return out;
}

/* Stage a host image into pinned memory and upload it to d_dst. */
static int upload(ctx *c, const imgpu_image *in, unsigned char *d_dst)
{
    int rc = 0;
    const size_t row = (size_t)in->width * in->channels;
    for (int y = 0; y < in->height; y++)
        memcpy(c->h_pinned + (size_t)y * row, imgpu_image_row(in, y), row);
    IMGPU_CUDA_TRY(cudaMemcpyAsync(d_dst, c->h_pinned, row * in->height, cudaMemcpyHostToDevice, c->stream));
    return 0;
fail:
    return rc;
}

static int run_equalize(ctx *c, const unsigned char *d_in, unsigned char *d_out, shape s, const imgpu_equalize_params *p)
{
    int rc = 0;
    const int luma = p->mode == IMGPU_MODE_LUMINANCE && s.c >= 3;
    IMGPU_CUDA_TRY(imgpu_launch_equalize_fused(d_in, d_out, (size_t)s.w * s.h, s.c, luma, c->d_fused, c->parity,
                                               c->stream));
    c->parity ^= 1;
    return 0;
fail:
    return rc;
}

static int run_rotate(ctx *c, const unsigned char *d_in, unsigned char *d_out, shape s, shape o,
                      const imgpu_rotate_params *p)
{
    int rc = 0;
    uint8_t bg[4];
    imgpu_cpu_rotate_background(p, s.c, bg); /* the reference's own geometry helpers */
    const int q = imgpu_cpu_rotate_quarter(p->angle);
    if (q >= 0) {
        int rw = q & 1 ? s.h : s.w, rh = q & 1 ? s.w : s.h, ox, oy;
        imgpu_rotate_quarter_offset(o.w, o.h, rw, rh, &ox, &oy);
        IMGPU_CUDA_TRY(imgpu_launch_turn(d_in, s.w, s.h, s.c, q, d_out, o.w, o.h, ox, oy, bg, c->stream));
        return 0;
    }
    if ((rc = imgpu__cuda_tex_load(&c->tex, d_in, s.w, s.h, s.c, bg, c->stream, &c->held)) != 0)
        return rc;
    imgpu_rotate_geom g;
    memset(&g, 0, sizeof g);
    g.in_w = s.w;
    g.in_h = s.h;
    g.out_w = o.w;
    g.out_h = o.h;
    g.channels = s.c;
    g.filter = (int)p->filter;
    imgpu_cpu_rotate_trig(p->angle, &g.cos_t, &g.sin_t);
    g.in_cx = s.w / 2.0f;
    g.in_cy = s.h / 2.0f;
    g.out_cx = o.w / 2.0f;
    g.out_cy = o.h / 2.0f;
    memcpy(g.background, bg, 4);
    IMGPU_CUDA_TRY(imgpu_launch_rotate(c->tex.linear, c->tex.point, d_out, &g, c->stream));
    return 0;
fail:
    return rc;
}

static int pipeline_locked(ctx *c, const imgpu_image *in, const imgpu_op *ops, int n, imgpu_image **out)
{
    int rc = 0;
    imgpu_image *res = NULL;
    shape s = {in->width, in->height, in->channels};
    size_t most = shape_bytes(s);
    for (int i = 0; i < n; i++) {
        s = op_output(s, &ops[i]);
        if ((uint64_t)s.w * s.h > ((uint64_t)1 << 31)) {
            imgpu_error("a %dx%d intermediate image is too large for the GPU backend", s.w, s.h);
            return IMGPU_CUDA_OOM;
        }
        if (shape_bytes(s) > most)
            most = shape_bytes(s);
    }
    const shape final = s;
    /* pad so every 16-pixel chunk's 16-byte loads stay in bounds of the allocation */
    if ((rc = ctx_init(c)) != 0 || (rc = ctx_reserve(c, most + 64, most)) != 0)
        return rc;
    if (!(res = imgpu_image_new(final.w, final.h, final.c, 8)))
        return -1;

    double t0 = now_ms();
    int cur = 0;
    if ((rc = upload(c, in, c->d_buf[0])) != 0)
        goto fail;
    s = (shape){in->width, in->height, in->channels};
    for (int i = 0; i < n; i++) {
        shape o = op_output(s, &ops[i]);
        unsigned char *src = c->d_buf[cur], *dst = c->d_buf[cur ^ 1];
        switch (ops[i].kind) {
        case IMGPU_OP_EQUALIZE: rc = run_equalize(c, src, dst, s, &ops[i].u.equalize); break;
        case IMGPU_OP_ROTATE: rc = run_rotate(c, src, dst, s, o, &ops[i].u.rotate); break;
        default: rc = imgpu_error("unknown operation %d", (int)ops[i].kind); break;
        }
        if (rc)
            goto fail;
        cur ^= 1;
        s = o;
    }
    IMGPU_CUDA_TRY(cudaMemcpyAsync(c->h_pinned, c->d_buf[cur], shape_bytes(final), cudaMemcpyDeviceToHost, c->stream));
    IMGPU_CUDA_TRY(cudaStreamSynchronize(c->stream));
    memcpy(res->data, c->h_pinned, shape_bytes(final));
    if (getenv("IMGPU_STATS"))
        fprintf(stderr, "imgpu: gpu part (stage, upload, %d op(s), download): %.3f ms\n", n, now_ms() - t0);
    *out = res;
    return 0;
fail:
    imgpu_image_free(res);
    return rc;
}

int imgpu_cuda_pipeline_run(const imgpu_image *in, const imgpu_op *ops, int n, imgpu_image **out)
{
    if (in->depth != 8)
        return imgpu_error("the CUDA backend handles 8-bit images only");
    pthread_mutex_lock(&s_lock);
    int rc = pipeline_locked(&s_ctx, in, ops, n, out);
    pthread_mutex_unlock(&s_lock);
    return rc;
}

static int histogram_locked(ctx *c, const imgpu_image *in, imgpu_histogram *out)
{
    int rc = 0;
    const size_t bytes = (size_t)in->width * in->height * in->channels;
    const int planes = imgpu_hist_planes(in->channels, 1);
    /* the pinned staging also receives the histogram: at least HIST_WORDS words */
    const size_t pinned = bytes > HIST_WORDS * 4 ? bytes : HIST_WORDS * 4;
    if ((rc = ctx_init(c)) != 0 || (rc = ctx_reserve(c, bytes + 64, pinned)) != 0)
        return rc;
    if ((rc = upload(c, in, c->d_buf[0])) != 0)
        return rc;
    IMGPU_CUDA_TRY(cudaMemsetAsync(c->d_hist, 0, (size_t)planes * 256 * 4, c->stream));
    IMGPU_CUDA_TRY(imgpu_launch_histogram(IMGPU_HIST_DEFAULT, c->d_buf[0], (size_t)in->width * in->height,
                                          in->channels, 1, c->d_hist, 0, c->stream));
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

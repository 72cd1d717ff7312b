/* resize.c — host side of resize on the GPU: the tables are built here by the same code as the
 * CPU's (src/op/resize.c, imgpu_resize_tab_build) and run by kernels/resize.cu with the CPU's
 * operations, so the two backends agree bit for bit.
 *
 * Per image, a session's resize only enqueues its kernel(s): the tables are kept on the device
 * in the session (imgpu__cuda_resize_cache) and built and uploaded again only when the source
 * shape, the output geometry or the filter changes; the fused kernel needs no intermediate, so
 * the scratch is not touched (the two-pass way, for large shrink factors, grows it once). No
 * synchronization, allocation or host loop per image once the size is known. Without a cache
 * (an env that has none) the tables go to the scratch as before. */
#include "cuda_util.h"
#include "error.h"
#include "kernels.h"
#include "op.h"
#include "op/resize_tab.h"
#include "scratch_ops.h"

#include <string.h>

void imgpu__cuda_resize_cache_free(imgpu__cuda_resize_cache *rc, size_t *held)
{
    if (!rc)
        return;
    cudaFree(rc->d_block);
    if (held)
        *held -= rc->d_bytes;
    memset(rc, 0, sizeof *rc);
}

/* The key: what imgpu_resize_tab_build reads (the shape, the geometry, the filter). */
static int cache_hit(const imgpu__cuda_resize_cache *rc, imgpu__cuda_shape s, const imgpu_resize_params *p, int dw,
                     int dh, double inv_x, double inv_y)
{
    return rc->valid && rc->sw == s.w && rc->sh == s.h && rc->cn == s.c && rc->depth == s.b * 8 && rc->dw == dw &&
           rc->dh == dh && rc->filter == p->filter && rc->antialias == p->antialias && rc->inv_x == inv_x &&
           rc->inv_y == inv_y;
}

/* The tables of this resize in the cache, uploaded (stream-ordered after the work that read the
 * previous ones). */
static int cache_load(imgpu__cuda_op_env *e, const imgpu_op *op, imgpu__cuda_shape s)
{
    int rc = 0;
    imgpu__cuda_resize_cache *c = e->rsz;
    const imgpu_resize_params *p = &op->u.resize;
    int dw, dh;
    double ix, iy;
    imgpu_resize_geometry(s.w, s.h, p, &dw, &dh, &ix, &iy);
    if (cache_hit(c, s, p, dw, dh, ix, iy))
        return 0;
    c->valid = 0;
    imgpu_resize_tab t;
    if (imgpu_resize_tab_build(s.w, s.h, s.c, s.b * 8, p, &t) < 0)
        return -1;
    const size_t bytes = (size_t)t.block_words * 4 + 4;
    if (bytes > c->d_bytes) {
        /* cudaFree waits for the device: queued kernels may still read the old tables */
        cudaFree(c->d_block);
        c->d_block = NULL;
        *e->held -= c->d_bytes;
        c->d_bytes = 0;
        const size_t want = bytes + bytes / 4; /* room for a slightly larger size next */
        if ((rc = imgpu__cuda_reserve(want, *e->held)) != 0)
            goto fail;
        IMGPU_CUDA_TRY(cudaMalloc((void **)&c->d_block, want));
        c->d_bytes = want;
        *e->held += want;
    }
    /* pageable source, once per size: the copy has read t.block when cudaMemcpyAsync returns */
    if (t.block_words > 0)
        IMGPU_CUDA_TRY(cudaMemcpyAsync(c->d_block, t.block, (size_t)t.block_words * 4, cudaMemcpyHostToDevice,
                                       e->stream));
    c->sw = s.w, c->sh = s.h, c->cn = s.c, c->depth = s.b * 8, c->dw = dw, c->dh = dh;
    c->filter = p->filter, c->antialias = p->antialias, c->inv_x = ix, c->inv_y = iy;
    c->t = t;
    c->t.block = NULL;
    c->valid = 1;
fail:
    imgpu_resize_tab_free(&t);
    return rc;
}

static int run(imgpu__cuda_op_env *e, const imgpu_op *op, const unsigned char *d_in, unsigned char *d_out,
               imgpu__cuda_shape s, imgpu__cuda_shape o)
{
    int rc = 0;
    imgpu_resize_tab t, dt;
    memset(&t, 0, sizeof t);
    unsigned char *d_tab;
    if (e->rsz) {
        if ((rc = cache_load(e, op, s)) != 0)
            return rc;
        dt = e->rsz->t;
        d_tab = (unsigned char *)e->rsz->d_block;
    } else {
        if (imgpu_resize_tab_build(s.w, s.h, s.c, s.b * 8, &op->u.resize, &t) < 0)
            return -1;
        dt = t;
        d_tab = NULL;
    }
    if (dt.dw != o.w || dt.dh != o.h) {
        rc = imgpu_error("resize: internal size mismatch (%dx%d, planned %dx%d)", dt.dw, dt.dh, o.w, o.h);
        goto fail;
    }
    if (dt.method == IMGPU_RSZ_COPY) {
        IMGPU_CUDA_TRY(cudaMemcpyAsync(d_out, d_in, (size_t)s.w * s.h * s.c * s.b, cudaMemcpyDeviceToDevice,
                                       e->stream));
        goto fail; /* done: rc 0 */
    }
    {
        const size_t tab_b = d_tab ? 0 : ((size_t)dt.block_words * 4 + 255) / 256 * 256;
        const size_t h_b =
            dt.method == IMGPU_RSZ_NEAREST || imgpu_resize_fused(&dt) ? 0 : (size_t)dt.nh * dt.dw * dt.cn * 4;
        if (tab_b + h_b > 0 && (rc = imgpu__cuda_scratch_grow(e->scratch, tab_b + h_b + 4, e->stream, e->held)) != 0)
            goto fail;
        if (!d_tab) {
            /* pageable source: the copy has read the host block when cudaMemcpyAsync returns */
            IMGPU_CUDA_TRY(cudaMemcpyAsync(e->scratch->d, t.block, (size_t)dt.block_words * 4, cudaMemcpyHostToDevice,
                                           e->stream));
            d_tab = e->scratch->d;
        }
        dt.block = (int32_t *)(void *)d_tab;
        IMGPU_CUDA_TRY(imgpu_launch_resize(&dt, d_in, h_b ? e->scratch->d + tab_b : NULL, d_out, e->stream));
    }
fail:
    imgpu_resize_tab_free(&t);
    return rc;
}

/* The run entry (ops_table.c). */
const imgpu__cuda_op imgpu__cuda_op_resize = {IMGPU_OP_RESIZE, run};

/* resize.c — host side of resize on the GPU: the tables are built here by the same code as the
 * CPU's (src/op/resize.c, imgpu_resize_tab_build), copied once into the session's scratch
 * beside the horizontal pass's intermediate, and run by kernels/resize.cu with the CPU's
 * operations, so the two backends agree bit for bit. */
#include "cuda_util.h"
#include "error.h"
#include "kernels.h"
#include "op.h"
#include "op/resize_tab.h"
#include "scratch_ops.h"

#include <string.h>

static int run(imgpu__cuda_op_env *e, const imgpu_op *op, const unsigned char *d_in, unsigned char *d_out,
               imgpu__cuda_shape s, imgpu__cuda_shape o)
{
    int rc = 0;
    imgpu_resize_tab t;
    if (imgpu_resize_tab_build(s.w, s.h, s.c, s.b * 8, &op->u.resize, &t) < 0)
        return -1;
    if (t.dw != o.w || t.dh != o.h) {
        imgpu_resize_tab_free(&t);
        return imgpu_error("resize: internal size mismatch (%dx%d, planned %dx%d)", t.dw, t.dh, o.w, o.h);
    }
    if (t.method == IMGPU_RSZ_COPY) {
        IMGPU_CUDA_TRY(cudaMemcpyAsync(d_out, d_in, (size_t)s.w * s.h * s.c * s.b, cudaMemcpyDeviceToDevice,
                                       e->stream));
        imgpu_resize_tab_free(&t);
        return 0;
    }
    {
        const size_t tab_b = ((size_t)t.block_words * 4 + 255) / 256 * 256;
        const size_t h_b = t.method == IMGPU_RSZ_NEAREST ? 0 : (size_t)t.nh * t.dw * t.cn * 4;
        if ((rc = imgpu__cuda_scratch_grow(e->scratch, tab_b + h_b + 4, e->stream, e->held)) != 0)
            goto fail;
        /* pageable source: the copy has read the host block when cudaMemcpyAsync returns */
        IMGPU_CUDA_TRY(cudaMemcpyAsync(e->scratch->d, t.block, (size_t)t.block_words * 4, cudaMemcpyHostToDevice,
                                       e->stream));
        imgpu_resize_tab dt = t;
        dt.block = (int32_t *)(void *)e->scratch->d;
        IMGPU_CUDA_TRY(imgpu_launch_resize(&dt, d_in, e->scratch->d + tab_b, d_out, e->stream));
    }
fail:
    imgpu_resize_tab_free(&t);
    return rc;
}

/* The run entry (ops_table.c). */
const imgpu__cuda_op imgpu__cuda_op_resize = {IMGPU_OP_RESIZE, run};

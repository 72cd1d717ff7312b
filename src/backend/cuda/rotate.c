/* rotate.c — host side of rotation on the GPU: quarter turns as exact permutations
 * (kernels/rotate.cu), any other angle through a texture over the source at 8 bits
 * (texture.c; bicubic gray images may gather four taps a fetch) or plain loads at 16 bits.
 * The geometry (sizes, offsets, trig, background) is the op floor's, as for the CPU. */
#include "cuda_util.h"
#include "error.h"
#include "kernels.h"
#include "op.h"
#include "scratch_ops.h"

#include <string.h>

static _Atomic int s_last_rotate_gathered; /* tests: did the last 8-bit rotation gather? */

int imgpu__cuda_last_rotate_gathered(void) { return s_last_rotate_gathered; }

static int run(imgpu__cuda_op_env *e, const imgpu_op *op, const unsigned char *d_in, unsigned char *d_out,
               imgpu__cuda_shape s, imgpu__cuda_shape o)
{
    int rc = 0;
    const imgpu_rotate_params *p = &op->u.rotate;
    uint8_t bg[4];
    imgpu_rotate_background(p, s.c, bg); /* the op floor's geometry, as the CPU reference */
    const int q = imgpu_rotate_quarter(imgpu_rotate_angle(p));
    if (q >= 0) {
        int rw = q & 1 ? s.h : s.w, rh = q & 1 ? s.w : s.h, ox, oy;
        imgpu_rotate_quarter_offset(o.w, o.h, rw, rh, &ox, &oy);
        if (s.b == 2)
            IMGPU_CUDA_TRY(imgpu_launch_turn16((const uint16_t *)(const void *)d_in, s.w, s.h, s.c, q,
                                               (uint16_t *)(void *)d_out, o.w, o.h, ox, oy, bg, e->stream));
        else
            IMGPU_CUDA_TRY(imgpu_launch_turn(d_in, s.w, s.h, s.c, q, d_out, o.w, o.h, ox, oy, bg, e->stream));
        return 0;
    }
    /* 8-bit: a texture over the image (texture.c); 16-bit: plain loads (kernels/rotate.cu) */
    const int want_gather = s.b == 1 && p->filter == IMGPU_FILTER_BICUBIC && imgpu__cuda_tuning()->rot_gather;
    if (s.b == 1) {
        rc = imgpu__cuda_tex_load(e->tex, d_in, s.w, s.h, s.c, bg, want_gather, e->stream, e->held);
        if (rc == IMGPU_CUDA_OOM && want_gather) /* no room for the gather array: point fetches, in place */
            rc = imgpu__cuda_tex_load(e->tex, d_in, s.w, s.h, s.c, bg, 0, e->stream, e->held);
        if (rc != 0)
            return rc;
    }
    imgpu_rotate_geom g;
    memset(&g, 0, sizeof g);
    g.in_w = s.w;
    g.in_h = s.h;
    g.out_w = o.w;
    g.out_h = o.h;
    g.channels = s.c;
    g.filter = (int)p->filter;
    imgpu_rotate_trig(imgpu_rotate_angle(p), &g.cos_t, &g.sin_t);
    g.in_cx = s.w / 2.0f;
    g.in_cy = s.h / 2.0f;
    g.out_cx = o.w / 2.0f;
    g.out_cy = o.h / 2.0f;
    memcpy(g.background, bg, 4);
    g.gather = want_gather && e->tex->gather;
    s_last_rotate_gathered = g.gather && s.c == 1;
    if (s.b == 2)
        IMGPU_CUDA_TRY(imgpu_launch_rotate16((const uint16_t *)(const void *)d_in, (uint16_t *)(void *)d_out, &g,
                                             e->stream));
    else
        IMGPU_CUDA_TRY(imgpu_launch_rotate(e->tex->linear, e->tex->point, d_out, &g, imgpu__cuda_tuning(), e->stream));
    return 0;
fail:
    return rc;
}

/* The run entry (ops_table.c). */
const imgpu__cuda_op imgpu__cuda_op_rotate = {IMGPU_OP_ROTATE, run};

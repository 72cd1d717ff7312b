/* clahe.c — host side of CLAHE on the GPU: the geometry comes from the op floor
 * (imgpu_clahe_geometry, op.h, the function the CPU reference uses too, so tile sizes, clip
 * limit and the float scales are the same numbers), then three launches on the session's stream (kernels/clahe.cu): tile
 * histograms, tile LUTs, interpolation. Histograms and LUTs live in the session's scratch:
 * planes x tiles x bins counters and entries (16-bit with a large grid is big: 8x8 tiles of a
 * 16-bit RGB image per channel take 3 x 64 x 65536 x 6 bytes = 75 MB; the budget check turns
 * an impossible size into IMGPU_CUDA_OOM, which `auto` answers on the CPU). */
#include "cuda_util.h"
#include "scratch_ops.h"
#include "op.h"
#include "error.h"
#include "kernels.h"

#include <string.h>

static int clahe(imgpu__cuda_scratch *s, size_t *held, cudaStream_t st, const void *d_in, void *d_out, int w,
                      int h, int c, int depth, const imgpu_clahe_params *p)
{
    int rc = 0;
    imgpu_clahe_geom g;
    if (imgpu_clahe_geometry(w, h, depth, p, &g) < 0)
        return -1;
    if (p->mode != IMGPU_MODE_LUMINANCE && p->mode != IMGPU_MODE_PER_CHANNEL)
        return imgpu_error("clahe: unknown mode %d", (int)p->mode);
    imgpu_clahe_kgeom k;
    memset(&k, 0, sizeof k);
    k.w = w;
    k.h = h;
    k.channels = c;
    k.depth = depth;
    k.luminance = p->mode == IMGPU_MODE_LUMINANCE && c >= 3;
    k.planes = k.luminance ? 1 : (c >= 3 ? 3 : 1);
    k.tiles_x = g.tiles_x;
    k.tiles_y = g.tiles_y;
    k.tile_w = g.tile_w;
    k.tile_h = g.tile_h;
    k.bins = g.bins;
    k.clip_limit = g.clip_limit;
    k.lut_scale = g.lut_scale;
    k.inv_tw = g.inv_tw;
    k.inv_th = g.inv_th;
    const size_t entries = (size_t)k.planes * g.tiles_x * g.tiles_y * g.bins;
    const size_t hist_b = (entries * 4 + 255) & ~(size_t)255, lut_b = entries * (size_t)(depth / 8);
    if ((rc = imgpu__cuda_scratch_grow(s, hist_b + lut_b, st, held)) != 0)
        return rc;
    uint32_t *hist = (uint32_t *)(void *)s->d;
    void *luts = s->d + hist_b;
    IMGPU_CUDA_TRY(cudaMemsetAsync(hist, 0, entries * 4, st));
    IMGPU_CUDA_TRY(imgpu_launch_clahe_hist(d_in, &k, hist, st));
    IMGPU_CUDA_TRY(imgpu_launch_clahe_lut(hist, &k, luts, st));
    IMGPU_CUDA_TRY(imgpu_launch_clahe_apply(d_in, d_out, luts, &k, st));
    return 0;
fail:
    return rc;
}

static int run(imgpu__cuda_op_env *e, const imgpu_op *op, const unsigned char *d_in, unsigned char *d_out,
               imgpu__cuda_shape in, imgpu__cuda_shape out)
{
    (void)out;
    return clahe(e->scratch, e->held, e->stream, d_in, d_out, in.w, in.h, in.c, 8 * in.b, &op->u.clahe);
}

/* The run entry (ops_table.c). */
const imgpu__cuda_op imgpu__cuda_op_clahe = {IMGPU_OP_CLAHE, run};

/* The same for the benchmarks (bench/bench_full.c times the host side on its own buffers). */
int imgpu__cuda_clahe(imgpu__cuda_scratch *s, size_t *held, cudaStream_t st, const void *d_in, void *d_out, int w,
                      int h, int c, int depth, const imgpu_clahe_params *p);
int imgpu__cuda_clahe(imgpu__cuda_scratch *s, size_t *held, cudaStream_t st, const void *d_in, void *d_out, int w,
                      int h, int c, int depth, const imgpu_clahe_params *p)
{
    return clahe(s, held, st, d_in, d_out, w, h, c, depth, p);
}

/* scratch_ops.h — the CUDA backend's run table and what an op's host side gets from the
 * session that runs it: its stream, its growable device scratch (imgpu__cuda_scratch, grown
 * and freed in equalize_full.c), its texture (rotation) and its fused-equalize counters. Each
 * op's host file (src/backend/cuda/<op>.c) exports one entry, imgpu__cuda_op_<name> (the
 * registry's names, src/op/registry.h); pipeline.c runs a chain through them (ops_table.c),
 * ping-ponging between the session's two buffers. Equalization at 16 bits or with a
 * non-OpenCV formula and full-resolution histograms are equalize_full.c's.
 * Return 0, -1 or IMGPU_CUDA_OOM with a message (cuda_backend.h). */
#ifndef IMGPU_CUDA_SCRATCH_OPS_H
#define IMGPU_CUDA_SCRATCH_OPS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "op.h"
#include "op/resize_tab.h"
#include "cuda_util.h"

typedef struct imgpu__cuda_scratch {
    unsigned char *d;
    size_t bytes;
} imgpu__cuda_scratch;

/* Grow to at least `need` bytes (contents not kept; waits for `st` first, which may still use
 * it); *held counts the session's device bytes for the budget. */
int imgpu__cuda_scratch_grow(imgpu__cuda_scratch *s, size_t need, cudaStream_t st, size_t *held);
void imgpu__cuda_scratch_free(imgpu__cuda_scratch *s, size_t *held);

/* d_in and d_out: packed w x h x c images of `depth` bits (cudaMalloc'ed; d_in padded by at
 * least 64 bytes for the 8-bit histogram's 16-byte loads); they must not overlap. */
int imgpu__cuda_equalize_full(imgpu__cuda_scratch *s, size_t *held, cudaStream_t st, const void *d_in, void *d_out,
                              int w, int h, int c, int depth, const imgpu_equalize_params *p);
/* Histograms laid out as imgpu_histogram_full (op.h): planes 0..c-1 the channels, then luma
 * when c >= 3, `levels` = 2^depth counters each, into the scratch: *d_counts points there (valid until the
 * scratch is next used). */
int imgpu__cuda_histogram_full(imgpu__cuda_scratch *s, size_t *held, cudaStream_t st, const void *d_in, int w, int h,
                               int c, int depth, const uint32_t **d_counts, int *planes);

/* resize's tables on the device, kept by a session for the next image (resize.c): built and
 * uploaded again only when the source shape, the output geometry or the filter changes, so a
 * batch of same-sized images builds and uploads them once. `t` is the host header of the
 * uploaded tables (t.block: NULL; the device copy is d_block). */
typedef struct imgpu__cuda_resize_cache {
    int valid;
    int sw, sh, cn, depth, dw, dh, filter, antialias;
    double inv_x, inv_y;
    imgpu_resize_tab t;
    int32_t *d_block;
    size_t d_bytes;
} imgpu__cuda_resize_cache;
void imgpu__cuda_resize_cache_free(imgpu__cuda_resize_cache *rc, size_t *held);

/* ---- the run table (ops_table.c) ---------------------------------------------------------- */

/* An image as it flows through a chain: w x h x c samples of b bytes (1, or 2 at 16 bits). */
typedef struct imgpu__cuda_shape {
    int w, h, c, b;
} imgpu__cuda_shape;

/* What the session running a chain lends each op. */
typedef struct imgpu__cuda_op_env {
    cudaStream_t stream;
    imgpu__cuda_scratch *scratch;
    size_t *held;           /* the session's device bytes, for the budget */
    imgpu__cuda_tex *tex;   /* the texture over a rotation's source (texture.c) */
    uint32_t *d_fused;      /* fused equalize's counters (imgpu_launch_equalize_fused) */
    int *parity;            /* and which half of them is next */
    imgpu__cuda_shape *result; /* a data-sized op (op_table.h data_sized: crop --trim) writes its
                                * result's shape here, at most the out shape it was given; NULL:
                                * the caller cannot take a smaller result (device images) */
    imgpu__cuda_resize_cache *rsz; /* resize's tables kept across images; NULL: none kept */
} imgpu__cuda_op_env;

typedef struct imgpu__cuda_op {
    imgpu_op_kind kind;
    /* One op from d_in (shape in) to d_out (shape out, the op's out_size): packed device
     * images that must not overlap; d_in padded by at least 64 bytes. Enqueued on e->stream. */
    int (*run)(imgpu__cuda_op_env *e, const imgpu_op *op, const unsigned char *d_in, unsigned char *d_out,
               imgpu__cuda_shape in, imgpu__cuda_shape out);
} imgpu__cuda_op;

/* The tone LUT ops (issue 28, lut_apply.c): map the colour channels of d_in (shape s) into d_out
 * through a host LUT of 2^depth entries per plane (planes 1: the same for every colour
 * channel; 3: R, G, B), alpha copied. Uses the scratch. */
int imgpu__cuda_apply_host_lut(imgpu__cuda_op_env *e, const unsigned char *d_in, unsigned char *d_out,
                               imgpu__cuda_shape s, const uint16_t *lut, int planes);

/* normalize and autolevel (issue 28, op-norm; tone_cdf.c): the CDFs op.h describes (intensity:
 * IM's intensity for a colour image) of d_in into cdf (host memory for 3 x 65536 counters):
 * *planes x *bins. Uses the scratch; waits for the stream. */
int imgpu__cuda_tone_cdf(imgpu__cuda_op_env *e, const unsigned char *d_in, imgpu__cuda_shape s, int intensity,
                         uint32_t *cdf, int *planes, int *bins);

/* One op through its entry; -1 with a message for a kind without one. */
int imgpu__cuda_run_op(imgpu__cuda_op_env *e, const imgpu_op *op, const unsigned char *d_in, unsigned char *d_out,
                       imgpu__cuda_shape in, imgpu__cuda_shape out);

#endif

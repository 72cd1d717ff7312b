/* resize_tab.h — the resize op's tables: for each output column and row, the source indices
 * (replicate border: clamped into the image) and the weights of its taps, computed once per
 * image by imgpu_resize_tab_build (src/op/resize.c) with cv2.resize's arithmetic. The CPU
 * backend (src/backend/cpu/resize.c, which states the rules) runs from them, and the CUDA
 * backend uploads the same block (`block`, `block_words` 32-bit words) and runs the same
 * integer and float operations from it (kernels/resize.cu): the GPU equals the CPU bit for bit
 * because neither computes a coefficient of its own. */
#ifndef IMGPU_OP_RESIZE_TAB_H
#define IMGPU_OP_RESIZE_TAB_H

#include <stdint.h>

#include "op.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    IMGPU_RSZ_COPY = 0,   /* the same size: cv2 copies */
    IMGPU_RSZ_NEAREST,    /* one tap a side: xi, yi */
    IMGPU_RSZ_SEPARABLE,  /* horizontal pass over the rows hrow[], then vertical (vmode) */
};

/* How the vertical pass combines the horizontal pass's rows (h: int32 or float). */
enum {
    IMGPU_RSZ_V_FIX = 0,  /* 8-bit fixed point: sum(h_k * b_k) + 2^21 >> 22, saturated; below
                           * vec_end the formula of OpenCV's vector code (vfix_kind) */
    IMGPU_RSZ_V_FLOAT,    /* float: sum(b_k * h_k) from 0 in order, rounded half even, saturated */
    IMGPU_RSZ_V_BOX,      /* INTER_AREA by a whole factor: integer box sums */
    IMGPU_RSZ_V_PIL,      /* --antialias (Pillow's ImagingResample): both passes
                           * floor((2^21 + sum(s_k * w_k)) / 2^22) in int64 with 22-bit weights;
                           * 8 bits: each pass clamped to 0..255 (the intermediate is 8-bit);
                           * 16 bits: the intermediate kept (int32), the result clamped */
};
enum { IMGPU_RSZ_VEC_NONE = 0, IMGPU_RSZ_VEC_LINEAR, IMGPU_RSZ_VEC_CUBIC };

typedef struct imgpu_resize_tab {
    int sw, sh, dw, dh, cn, depth;
    int method;            /* IMGPU_RSZ_* */
    int vmode;             /* IMGPU_RSZ_V_* */
    int hfloat;            /* horizontal pass in float (else int32) */
    int vfix_kind;         /* IMGPU_RSZ_VEC_*: which vector formula below vec_end */
    int vec_end;           /* samples of a row (x = dx * cn + c) below which it applies */
    int box_area;          /* V_BOX: kx * ky, a full box */
    int box_round2;        /* V_BOX: a full 2x2 box is (sum + 2) >> 2 (else sum * (1.f / area)) */
    int alpha_mix;         /* 1: the colour of an image with alpha is mixed premultiplied */
    int pil;               /* V_PIL: the horizontal pass rounds as the vertical one (above) */
    int kx, ky;            /* taps per output column / row */
    int nh;                /* source rows the horizontal pass computes */
    /* offsets (in 32-bit words) into block of: */
    int o_xi, o_yi;        /* int32 [dw*kx], [dh*ky]: source column / row of each tap */
    int o_yc;              /* int32 [dh*ky]: that row's index among hrow (separable) */
    int o_hrow;            /* int32 [nh]: the source rows, ascending */
    int o_xwi, o_ywi;      /* int32 [dw*kx], [dh*ky]: integer weights (fixed point, box 0/1) */
    int o_xwf, o_ywf;      /* float [dw*kx], [dh*ky]: float weights (the float passes, alpha) */
    int o_tile;            /* int32 [ceil(dh / IMGPU_RSZ_TILE_H)] (separable): the least yc of
                            * each band of IMGPU_RSZ_TILE_H output rows (the GPU's fused kernel) */
    int tile_span;         /* the most rows of hrow a band's taps span, first to last (separable) */
    int32_t *block;
    int block_words;
} imgpu_resize_tab;

/* Output rows of a band of the GPU's fused kernel (kernels/resize_body.cuh). */
#define IMGPU_RSZ_TILE_H 16

/* V_PIL's rounding: floor((2^21 + acc) / 2^22), without shifting a negative number. */
#define IMGPU_RSZ_PIL_BITS 22
#ifdef __CUDACC__
__host__ __device__
#endif
static inline long long imgpu_rsz_pil_round(long long acc)
{
    acc += 1LL << (IMGPU_RSZ_PIL_BITS - 1);
    return acc >= 0 ? acc >> IMGPU_RSZ_PIL_BITS : -((-acc + (1LL << IMGPU_RSZ_PIL_BITS) - 1) >> IMGPU_RSZ_PIL_BITS);
}

/* The tables of a resize of a sw x sh image of cn channels and `depth` bits to dw x dh, the
 * scales cv2 would use (imgpu_resize_geometry). 0, or -1 with a message (out of memory). */
int imgpu_resize_tab_build(int sw, int sh, int cn, int depth, const imgpu_resize_params *p, imgpu_resize_tab *t);
void imgpu_resize_tab_free(imgpu_resize_tab *t);

/* The output size and cv2's inverse scales (dsize / ssize, or fx = fy = --scale). */
void imgpu_resize_geometry(int w, int h, const imgpu_resize_params *p, int *dw, int *dh, double *inv_x,
                           double *inv_y);

static inline const int32_t *imgpu_rsz_i(const imgpu_resize_tab *t, int off) { return t->block + off; }
static inline const float *imgpu_rsz_f(const imgpu_resize_tab *t, int off)
{
    return (const float *)(const void *)(t->block + off);
}

#ifdef __cplusplus
}
#endif
#endif

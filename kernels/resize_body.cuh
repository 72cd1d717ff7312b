/* resize_body.cuh — what one thread of resize's kernels computes (kernels/resize.cu launches
 * them), as __host__ __device__ functions so that tests/gpu/test_resize_emu.cu can run the very
 * same code on the host, grid and block by grid and block, against the CPU reference on a
 * machine without a GPU. On the device every float step is an _rn intrinsic (no fma
 * contraction, IEEE rounding as on the CPU); on the host the same operations, one rounding each
 * (rz_* below). The tables are src/op/resize_tab.h's; no coefficient is computed here.
 *
 * Two ways to run a separable resize:
 *  - fused (rz_tile_h then rz_tile_v, one block per tile of RZ_TX x RZ_TY output pixels): the
 *    block computes the horizontal pass of the source rows its tile reads (the table's per-tile
 *    first row, tile_span rows) into shared memory, then the vertical pass from there. No
 *    intermediate image goes through device memory; the values are those of the two-pass way
 *    (the same function of the same inputs), so the result is the same bit for bit. The
 *    common tables (rz_spec_mode) run the same tiles compiled for their depth, channels, mode
 *    and taps (rz_tile_h_s, rz_tile_v_s: no per-sample branch, 32-bit offsets, taps loaded once
 *    per column and per row); the rest the generic rz_tile_h, rz_tile_v.
 *  - two passes (rz_h_px over the rows hrow[], rz_v_px), through an intermediate of nh rows,
 *    where a tile's rows would not fit shared memory (shrinking by large factors). */
#ifndef IMGPU_RESIZE_BODY_CUH
#define IMGPU_RESIZE_BODY_CUH

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "op/resize_tab.h"
#ifdef __CUDA_ARCH__
#include "premul.cuh"
#endif

#define RZ_HD __host__ __device__ __forceinline__
#define RZ_TX 32              /* output pixels of a tile across (blockDim.x) */
#define RZ_TY IMGPU_RSZ_TILE_H /* output rows of a tile */
#define RZ_BY 8               /* blockDim.y of the fused kernel */
#define RZ_SMEM_MAX (48 * 1024)
#ifdef __CUDA_ARCH__
#define RZ_UNROLL _Pragma("unroll")
#else
#define RZ_UNROLL
#endif

/* ---- one rounding per step, on both sides ------------------------------------------------ */
#ifdef __CUDA_ARCH__
RZ_HD float rz_add(float a, float b) { return __fadd_rn(a, b); }
RZ_HD float rz_mul(float a, float b) { return __fmul_rn(a, b); }
RZ_HD float rz_div(float a, float b) { return __fdiv_rn(a, b); }
RZ_HD float rz_u2f(uint32_t v) { return __uint2float_rn(v); }
RZ_HD float rz_i2f(int32_t v) { return __int2float_rn(v); }
RZ_HD int rz_f2i(float v) { return __float2int_rn(v); }
RZ_HD int32_t rz_fbits(float v) { return __float_as_int(v); }
RZ_HD float rz_bitsf(int32_t v) { return __int_as_float(v); }
RZ_HD float rz_premul(float c, float a) { return imgpu__premul(c, a); }
RZ_HD float rz_unpremul(float m, float a, float maxv) { return imgpu__unpremul(m, a, maxv); }
#else
RZ_HD float rz_add(float a, float b) { volatile float r = a + b; return r; }
RZ_HD float rz_mul(float a, float b) { volatile float r = a * b; return r; }
RZ_HD float rz_div(float a, float b) { volatile float r = a / b; return r; }
RZ_HD float rz_u2f(uint32_t v) { return (float)v; }
RZ_HD float rz_i2f(int32_t v) { return (float)v; }
RZ_HD int rz_f2i(float v) { return (int)nearbyintf(v); } /* half to even, as __float2int_rn */
RZ_HD int32_t rz_fbits(float v) { int32_t r; memcpy(&r, &v, 4); return r; }
RZ_HD float rz_bitsf(int32_t v) { float r; memcpy(&r, &v, 4); return r; }
RZ_HD float rz_premul(float c, float a) { return rz_mul(c, a); }
RZ_HD float rz_unpremul(float m, float a, float maxv)
{
    const float v = rz_div(m, a);
    return v < 0.0f ? 0.0f : (v > maxv ? maxv : v);
}
#endif

RZ_HD uint32_t rz_rd(const void *img, int depth, size_t i)
{
    return depth == 16 ? ((const uint16_t *)img)[i] : ((const uint8_t *)img)[i];
}
RZ_HD void rz_wr(void *img, int depth, size_t i, uint32_t v)
{
    if (depth == 16)
        ((uint16_t *)img)[i] = (uint16_t)v;
    else
        ((uint8_t *)img)[i] = (uint8_t)v;
}
RZ_HD uint32_t rz_sat(long long v, long long maxv) { return (uint32_t)(v < 0 ? 0 : v > maxv ? maxv : v); }
RZ_HD int32_t rz_sat16(int32_t v) { return v < -32768 ? -32768 : v > 32767 ? 32767 : v; }

/* The horizontal pass's values of every channel of output column dx on the source row
 * starting at sample `row` (int32, or a float's bits) into v[0..cn): each channel's sum in tap
 * order, as the CPU's; a tap's index and weight are read once for all channels. */
RZ_HD void rz_h_px_row(const imgpu_resize_tab &t, const void *in, size_t row, int dx, int32_t *v)
{
    const int kx = t.kx, cn = t.cn;
    const int32_t *xi = t.block + t.o_xi + (size_t)dx * kx, *xwi = t.block + t.o_xwi + (size_t)dx * kx;
    if (t.pil) {
        long long acc[4] = {0, 0, 0, 0};
        for (int k = 0; k < kx; k++) {
            const size_t b = row + (size_t)xi[k] * cn;
            const long long w = xwi[k];
            for (int c = 0; c < cn; c++)
                acc[c] += (long long)rz_rd(in, t.depth, b + c) * w;
        }
        for (int c = 0; c < cn; c++) {
            long long u = imgpu_rsz_pil_round(acc[c]);
            if (t.depth == 8)
                u = u < 0 ? 0 : u > 255 ? 255 : u;
            v[c] = (int32_t)u;
        }
        return;
    }
    if (t.hfloat) {
        const float *xwf = (const float *)(t.block + t.o_xwf) + (size_t)dx * kx;
        float acc[4] = {0.f, 0.f, 0.f, 0.f};
        for (int k = 0; k < kx; k++) {
            const size_t b = row + (size_t)xi[k] * cn;
            const float w = xwf[k];
            for (int c = 0; c < cn; c++)
                acc[c] = rz_add(acc[c], rz_mul(rz_u2f(rz_rd(in, t.depth, b + c)), w));
        }
        for (int c = 0; c < cn; c++)
            v[c] = rz_fbits(acc[c]);
        return;
    }
    uint32_t acc[4] = {0, 0, 0, 0}; /* int32 arithmetic, wrapping as the CPU's */
    for (int k = 0; k < kx; k++) {
        const size_t b = row + (size_t)xi[k] * cn;
        const uint32_t w = (uint32_t)xwi[k];
        for (int c = 0; c < cn; c++)
            acc[c] += rz_rd(in, t.depth, b + c) * w;
    }
    for (int c = 0; c < cn; c++)
        v[c] = (int32_t)acc[c];
}

/* The vertical pass's value of sample x = dx * cn + c of output row dy: tap k reads the
 * horizontal pass's row yc[k] at h[(yc[k] - lo) * stride + xl] (two passes: lo 0, stride
 * dw * cn, xl = x; fused: the tile's first row, its shared-memory stride and column). */
RZ_HD uint32_t rz_v_sample(const imgpu_resize_tab &t, const int32_t *h, int lo, int stride, int dy, int dx, int x,
                           int xl)
{
    const int ky = t.ky;
    const int32_t *yc = t.block + t.o_yc + (size_t)dy * ky, *ywi = t.block + t.o_ywi + (size_t)dy * ky;
    const long long maxv = t.depth == 16 ? 65535 : 255;
#define RZ_H(k) (h[(size_t)(yc[k] - lo) * stride + xl])
    if (t.vmode == IMGPU_RSZ_V_FIX) {
        if (x < t.vec_end && t.vfix_kind == IMGPU_RSZ_VEC_LINEAR) {
            const int32_t a = rz_sat16(RZ_H(0) >> 4), b = rz_sat16(RZ_H(1) >> 4);
            const int32_t v = rz_sat16(((a * (int32_t)(int16_t)ywi[0]) >> 16) + ((b * (int32_t)(int16_t)ywi[1]) >> 16));
            return rz_sat((v + 2) >> 2, 255);
        }
        if (x < t.vec_end && t.vfix_kind == IMGPU_RSZ_VEC_CUBIC) {
            const float sc = 1.f / (2048 * 2048);
            float f = rz_mul(rz_i2f(RZ_H(3)), rz_mul(rz_i2f(ywi[3]), sc));
            for (int k = 2; k >= 0; k--)
                f = rz_add(rz_mul(rz_i2f(RZ_H(k)), rz_mul(rz_i2f(ywi[k]), sc)), f);
            return rz_sat(rz_f2i(f), 255);
        }
        uint32_t acc = 0; /* wrapping, as the CPU's */
        for (int k = 0; k < ky; k++)
            acc += (uint32_t)RZ_H(k) * (uint32_t)ywi[k];
        acc += 1u << 21;
        return rz_sat((acc & 0x80000000u) ? -(long long)((~acc) >> 22) - 1 : (long long)(acc >> 22), 255);
    }
    if (t.vmode == IMGPU_RSZ_V_FLOAT) {
        const float *ywf = (const float *)(t.block + t.o_ywf) + (size_t)dy * ky;
        float acc = 0.f;
        for (int k = 0; k < ky; k++)
            acc = rz_add(acc, rz_mul(ywf[k], rz_bitsf(RZ_H(k))));
        return rz_sat(rz_f2i(acc), maxv);
    }
    if (t.vmode == IMGPU_RSZ_V_PIL) {
        long long acc = 0;
        for (int k = 0; k < ky; k++)
            acc += (long long)RZ_H(k) * ywi[k];
        return rz_sat(imgpu_rsz_pil_round(acc), maxv);
    }
    uint32_t sum = 0; /* V_BOX: int32, wrapping */
    int32_t cy = 0, cx = 0;
    for (int k = 0; k < ky; k++) {
        sum += (uint32_t)RZ_H(k) * (uint32_t)ywi[k];
        cy += ywi[k];
    }
#undef RZ_H
    const int32_t *xwi = t.block + t.o_xwi + (size_t)dx * t.kx;
    for (int k = 0; k < t.kx; k++)
        cx += xwi[k];
    const int32_t count = cx * cy, s = (int32_t)sum;
    if (count == t.box_area) {
        if (t.box_round2)
            return rz_sat((s + 2) >> 2, maxv);
        return rz_sat(rz_f2i(rz_mul(rz_i2f(s), rz_div(1.f, rz_i2f(t.box_area)))), maxv);
    }
    return rz_sat(rz_f2i(rz_div(rz_i2f(s), rz_i2f(count))), maxv);
}

/* premultiplied colour of a pixel with alpha; 0: keep the straight value */
RZ_HD int rz_alpha_pixel(const imgpu_resize_tab &t, const void *in, int dx, int dy, uint32_t *col)
{
    const int cn = t.cn, ac = cn - 1, kx = t.kx, ky = t.ky, depth = t.depth;
    const int32_t *xi = t.block + t.o_xi + (size_t)dx * kx, *yi = t.block + t.o_yi + (size_t)dy * ky;
    const int fix = t.vmode == IMGPU_RSZ_V_FIX;
    const float *xwf = (const float *)(t.block + t.o_xwf) + (size_t)dx * kx;
    const float *ywf = (const float *)(t.block + t.o_ywf) + (size_t)dy * ky;
    const int32_t *xwi = t.block + t.o_xwi + (size_t)dx * kx, *ywi = t.block + t.o_ywi + (size_t)dy * ky;
    const float maxv = depth == 16 ? 65535.f : 255.f;
    float A = 0.f, M[3] = {0.f, 0.f, 0.f};
    int first = -1, same = 1;
    for (int r = 0; r < ky; r++) {
        const float wy = fix ? rz_div(rz_i2f(ywi[r]), 2048.f) : ywf[r];
        const size_t row = (size_t)yi[r] * t.sw * cn;
        float ra = 0.f, rm[3] = {0.f, 0.f, 0.f};
        for (int k = 0; k < kx; k++) {
            const float wx = fix ? rz_div(rz_i2f(xwi[k]), 2048.f) : xwf[k];
            const size_t base = row + (size_t)xi[k] * cn;
            const uint32_t a = rz_rd(in, depth, base + ac);
            if (wx != 0.f && wy != 0.f) {
                if (first < 0)
                    first = (int)a;
                else if ((int)a != first)
                    same = 0;
            }
            const float af = rz_u2f(a);
            ra = rz_add(ra, rz_mul(wx, af));
            for (int c = 0; c < ac; c++)
                rm[c] = rz_add(rm[c], rz_mul(wx, rz_premul(rz_u2f(rz_rd(in, depth, base + c)), af)));
        }
        A = rz_add(A, rz_mul(wy, ra));
        for (int c = 0; c < ac; c++)
            M[c] = rz_add(M[c], rz_mul(wy, rm[c]));
    }
    if (same || !(A > 0.f))
        return 0;
    for (int c = 0; c < ac; c++)
        col[c] = (uint32_t)floorf(rz_add(rz_unpremul(M[c], A, maxv), 0.5f));
    return 1;
}

/* Every channel of output pixel (dx, dy) from the vertical pass's taps (rz_v_sample's lo,
 * stride; xl0 the pixel's first sample there), then the premultiplied colour. */
RZ_HD void rz_out_px(const imgpu_resize_tab &t, const void *in, const int32_t *h, int lo, int stride, int xl0,
                     void *out, int dx, int dy)
{
    const int cn = t.cn;
    const size_t o = ((size_t)dy * t.dw + dx) * cn;
    for (int c = 0; c < cn; c++)
        rz_wr(out, t.depth, o + c, rz_v_sample(t, h, lo, stride, dy, dx, dx * cn + c, xl0 + c));
    uint32_t col[3];
    if (t.alpha_mix && rz_alpha_pixel(t, in, dx, dy, col))
        for (int c = 0; c < cn - 1; c++)
            rz_wr(out, t.depth, o + c, col[c]);
}

/* ---- two passes -------------------------------------------------------------------------- */

/* every channel of column dx of the intermediate's row r (source row hrow[r]) */
RZ_HD void rz_h_px(const imgpu_resize_tab &t, const void *in, int32_t *h, int r, int dx)
{
    const int cn = t.cn;
    const size_t row = (size_t)t.block[t.o_hrow + r] * t.sw * cn, o = ((size_t)r * t.dw + dx) * cn;
    int32_t v[4];
    rz_h_px_row(t, in, row, dx, v);
    for (int c = 0; c < cn; c++)
        h[o + c] = v[c];
}

RZ_HD void rz_v_px(const imgpu_resize_tab &t, const void *in, const int32_t *h, void *out, int dx, int dy)
{
    rz_out_px(t, in, h, 0, t.dw * t.cn, dx * t.cn, out, dx, dy);
}

/* ---- fused ------------------------------------------------------------------------------- */

/* Shared memory of a fused block: tile_span rows of RZ_TX pixels of cn int32; 0 when the
 * fused way cannot run this resize (then two passes). */
static inline size_t rz_fused_smem(const imgpu_resize_tab *t)
{
    if (t->method != IMGPU_RSZ_SEPARABLE || t->tile_span <= 0)
        return 0;
    const size_t b = (size_t)t->tile_span * RZ_TX * t->cn * 4;
    const long long tiles_y = ((long long)t->dh + RZ_TY - 1) / RZ_TY;
    return b <= RZ_SMEM_MAX && tiles_y <= 65535 ? b : 0;
}

/* Phase 1 of block (bx, by), thread (tx, ty): the horizontal pass of the tile's source rows
 * into sm (row j: the intermediate's row tile_lo + j). */
RZ_HD void rz_tile_h(const imgpu_resize_tab &t, const void *in, int32_t *sm, int bx, int by, int tx, int ty)
{
    const int dx = bx * RZ_TX + tx, lo = t.block[t.o_tile + by], cn = t.cn;
    if (dx >= t.dw)
        return;
    for (int j = ty; j < t.tile_span && lo + j < t.nh; j += RZ_BY) {
        const size_t row = (size_t)t.block[t.o_hrow + lo + j] * t.sw * cn;
        int32_t v[4];
        rz_h_px_row(t, in, row, dx, v);
        for (int c = 0; c < cn; c++)
            sm[((size_t)j * RZ_TX + tx) * cn + c] = v[c];
    }
}

/* Phase 2 (after the block's barrier): the tile's output pixels of column tx. */
RZ_HD void rz_tile_v(const imgpu_resize_tab &t, const void *in, const int32_t *sm, void *out, int bx, int by, int tx,
                     int ty)
{
    const int dx = bx * RZ_TX + tx, lo = t.block[t.o_tile + by], cn = t.cn;
    if (dx >= t.dw)
        return;
    for (int oy = ty; oy < RZ_TY; oy += RZ_BY) {
        const int dy = by * RZ_TY + oy;
        if (dy >= t.dh)
            return;
        rz_out_px(t, in, sm, lo, RZ_TX * cn, tx * cn, out, dx, dy);
    }
}

/* ---- fused, specialized at compile time ---------------------------------------------------
 * The fused tiles above, for the common tables, with what decides the arithmetic fixed at
 * compile time: depth D, channels CN, the mode M (below) and the taps K of either side (kx ==
 * ky). The same operations in the same order as rz_h_px_row / rz_v_sample (each step the same
 * rz_* call on the same operands), so the same bits; what changes is only the control flow
 * (no per-sample branch on the table's modes, unrolled taps, channels in registers), the
 * indexing (32-bit offsets: rz_spec_mode admits only images whose sample offsets fit) and the
 * loads (a column's x taps loaded once for all the rows of its tile, a row's y taps once for
 * all its channels). rz_fused_dispatch picks the instantiation for both the launcher
 * (kernels/resize.cu) and the host emulation test; anything else runs the generic tiles. */
enum {
    RZM_LIN = 0, /* 8 bits, V_FIX, VEC_LINEAR over the whole row, 2 taps */
    RZM_CUB,     /* 8 bits, V_FIX, VEC_CUBIC below vec_end (V_FIX's sum past it), 4 taps */
    RZM_FIX,     /* 8 bits, V_FIX, no vector formula (lanczos: 8 taps) */
    RZM_FLOAT,   /* hfloat + V_FLOAT (16 bits: 2, 4, 8 taps) */
    RZM_BOX,     /* V_BOX, integer box sums (2x2: bilinear or area by 1/2) */
    RZM_COUNT
};

/* A pixel's int32 in the specialized tiles' shared memory: 3 channels padded to 4, so that
 * every pixel is one 128-bit access (as 4 channels; 2: 64 bits) instead of 3 32-bit ones. */
#define RZ_SP(cn) ((cn) == 3 ? 4 : (cn))
RZ_HD int rz_spec_hwords(const imgpu_resize_tab &t) { return t.tile_span * RZ_TX * RZ_SP(t.cn); }
/* the tile's shared memory: its rows of the horizontal pass (rz_spec_hwords), then for each of
 * its RZ_TY output rows the K taps' offsets there, then their weights (int32 or float bits) */
static inline size_t rz_spec_smem(const imgpu_resize_tab *t)
{
    const size_t span = (size_t)(t->tile_span > 0 ? t->tile_span : 0);
    return (span * RZ_TX * RZ_SP(t->cn) + 2 * (size_t)RZ_TY * (size_t)(t->ky > 0 ? t->ky : 0)) * 4;
}

/* the specialized mode of a fused resize, or -1: the generic tiles */
static inline int rz_spec_mode(const imgpu_resize_tab *t)
{
    if (t->method != IMGPU_RSZ_SEPARABLE || t->pil || t->cn < 1 || t->cn > 4 || t->kx != t->ky)
        return -1;
    /* 32-bit sample offsets: every source and output sample index below 2^31 */
    const long long lim = 2147483647LL;
    if ((long long)t->sw * t->sh * t->cn >= lim || (long long)t->dw * t->dh * t->cn >= lim)
        return -1;
    if (rz_fused_smem(t) == 0 || rz_spec_smem(t) > RZ_SMEM_MAX)
        return -1;
    const int k = t->kx;
    if (t->depth == 8 && !t->hfloat && t->vmode == IMGPU_RSZ_V_FIX) {
        if (t->vfix_kind == IMGPU_RSZ_VEC_LINEAR && k == 2 && (long long)t->vec_end >= (long long)t->dw * t->cn)
            return RZM_LIN;
        if (t->vfix_kind == IMGPU_RSZ_VEC_CUBIC && k == 4)
            return RZM_CUB;
        if (t->vfix_kind == IMGPU_RSZ_VEC_NONE && k == 8)
            return RZM_FIX;
        return -1;
    }
    if (t->depth == 16 && t->hfloat && t->vmode == IMGPU_RSZ_V_FLOAT && (k == 2 || k == 4 || k == 8))
        return RZM_FLOAT;
    if ((t->depth == 8 || t->depth == 16) && !t->hfloat && t->vmode == IMGPU_RSZ_V_BOX && k == 2)
        return RZM_BOX;
    return -1;
}

/* The instantiations: f.template run<D, CN, M, K>() for t's, true; false: none (generic).
 * Their list, for the emulation test's census: rz_spec_index() over RZ_SPEC_N. */
#define RZ_SPEC_N 32 /* 8 (depth, mode, taps) x 4 channel counts */
static inline int rz_spec_index(int depth, int cn, int m, int k)
{
    int i;
    if (depth == 8)
        i = m == RZM_LIN ? 0 : m == RZM_CUB ? 1 : m == RZM_FIX ? 2 : 3;
    else
        i = m == RZM_BOX ? 7 : k == 2 ? 4 : k == 4 ? 5 : 6;
    return i * 4 + cn - 1;
}

template <int CN, class F> static inline bool rz_dispatch_cn(const imgpu_resize_tab &t, int m, F &f)
{
    if (t.depth == 8)
        switch (m) {
        case RZM_LIN: f.template run<8, CN, RZM_LIN, 2>(); return true;
        case RZM_CUB: f.template run<8, CN, RZM_CUB, 4>(); return true;
        case RZM_FIX: f.template run<8, CN, RZM_FIX, 8>(); return true;
        case RZM_BOX: f.template run<8, CN, RZM_BOX, 2>(); return true;
        default: return false;
        }
    switch (m) {
    case RZM_FLOAT:
        if (t.kx == 2)
            f.template run<16, CN, RZM_FLOAT, 2>();
        else if (t.kx == 4)
            f.template run<16, CN, RZM_FLOAT, 4>();
        else
            f.template run<16, CN, RZM_FLOAT, 8>();
        return true;
    case RZM_BOX: f.template run<16, CN, RZM_BOX, 2>(); return true;
    default: return false;
    }
}

template <class F> static inline bool rz_fused_dispatch(const imgpu_resize_tab &t, F &f)
{
    const int m = rz_spec_mode(&t);
    if (m < 0)
        return false;
    switch (t.cn) {
    case 1: return rz_dispatch_cn<1>(t, m, f);
    case 2: return rz_dispatch_cn<2>(t, m, f);
    case 3: return rz_dispatch_cn<3>(t, m, f);
    default: return rz_dispatch_cn<4>(t, m, f);
    }
}

/* a sample of D bits; pointers formed once per tap (a row's + the tap's offset), so that the
 * channels are constant displacements of one address */
template <int D> struct rz_sample { typedef uint8_t T; };
template <> struct rz_sample<16> { typedef uint16_t T; };
/* the CN int32 of one pixel in shared memory (16 bytes: one 128-bit load, 8: one 64-bit) */
template <int CN> RZ_HD void rz_ld_px(const int32_t *p, int32_t *v)
{
#ifdef __CUDA_ARCH__
    if (CN == 4 || CN == 3) {
        const int4 q = *(const int4 *)p;
        v[0] = q.x, v[1 % CN] = q.y, v[2 % CN] = q.z;
        if (CN == 4)
            v[3 % CN] = q.w;
    } else if (CN == 2) {
        const int2 q = *(const int2 *)p;
        v[0] = q.x, v[1 % CN] = q.y;
    } else
#endif
    {
RZ_UNROLL
        for (int c = 0; c < CN; c++)
            v[c] = p[c];
    }
}
template <int CN> RZ_HD void rz_st_px(int32_t *p, const int32_t *v)
{
#ifdef __CUDA_ARCH__
    if (CN == 4 || CN == 3)
        *(int4 *)p = make_int4(v[0], v[1 % CN], v[2 % CN], CN == 4 ? v[3 % CN] : 0);
    else if (CN == 2)
        *(int2 *)p = make_int2(v[0], v[1 % CN]);
    else
#endif
    {
RZ_UNROLL
        for (int c = 0; c < CN; c++)
            p[c] = v[c];
    }
}
/* K int32 (2, 4, 8; aligned to their size, 16 bytes at most): 64- or 128-bit loads */
template <int K> RZ_HD void rz_ld_words(const int32_t *p, int32_t *v)
{
#ifdef __CUDA_ARCH__
    if (K == 2) {
        const int2 q = *(const int2 *)p;
        v[0] = q.x, v[1 % K] = q.y;
    } else if (K % 4 == 0) {
RZ_UNROLL
        for (int k = 0; k < K; k += 4) {
            const int4 q = *(const int4 *)(p + k);
            v[k] = q.x, v[(k + 1) % K] = q.y, v[(k + 2) % K] = q.z, v[(k + 3) % K] = q.w;
        }
    } else
#endif
    {
RZ_UNROLL
        for (int k = 0; k < K; k++)
            v[k] = p[k];
    }
}
RZ_HD int rz_clampi(int v, int maxv) { return v < 0 ? 0 : v > maxv ? maxv : v; }

/* Phase 1, as rz_tile_h: the horizontal pass of the tile's source rows into sm. */
template <int D, int CN, int M, int K>
RZ_HD void rz_tile_h_s(const imgpu_resize_tab &t, const void *in, int32_t *sm, int bx, int by, int tx, int ty)
{
    const int dx = bx * RZ_TX + tx, lo = t.block[t.o_tile + by];
    /* one thread a tap word: the block must have as many threads as a tile has taps, and the
     * weights' region (after RZ_TY * K offsets) must stay 16-byte aligned for phase 2's loads */
    static_assert(RZ_TY * K <= RZ_TX * RZ_BY, "a block stages every y tap of its tile");
    static_assert((RZ_TY * K) % 4 == 0, "the y weights start 16-byte aligned in shared memory");
    { /* the y taps of the tile's rows, for phase 2: thread i, tap i % K of row i / K */
        const int i = ty * RZ_TX + tx, ho = rz_spec_hwords(t);
        if (i < RZ_TY * K) {
            const int dy = by * RZ_TY + i / K, e = dy * K + i % K;
            const int ok = dy < t.dh;
            sm[ho + i] = ok ? (t.block[t.o_yc + e] - lo) * (RZ_TX * RZ_SP(CN)) : 0;
            sm[ho + RZ_TY * K + i] = ok ? t.block[(M == RZM_FLOAT ? t.o_ywf : t.o_ywi) + e] : 0;
        }
    }
    if (dx >= t.dw)
        return;
    const int n = t.nh - lo < t.tile_span ? t.nh - lo : t.tile_span;
    typedef typename rz_sample<D>::T S;
    const S *src = (const S *)in;
    const uint32_t rowlen = (uint32_t)t.sw * CN;
    const int32_t *xi = t.block + t.o_xi + dx * K;
    uint32_t xo[K];
RZ_UNROLL
    for (int k = 0; k < K; k++)
        xo[k] = (uint32_t)xi[k] * CN;
    if (M == RZM_FLOAT) {
        const float *xwf = (const float *)(t.block + t.o_xwf) + dx * K;
        float w[K];
RZ_UNROLL
        for (int k = 0; k < K; k++)
            w[k] = xwf[k];
        for (int j = ty; j < n; j += RZ_BY) {
            const S *pr = src + (uint32_t)t.block[t.o_hrow + lo + j] * rowlen;
            float acc[CN];
RZ_UNROLL
            for (int c = 0; c < CN; c++)
                acc[c] = 0.f;
RZ_UNROLL
            for (int k = 0; k < K; k++)
RZ_UNROLL
                for (int c = 0; c < CN; c++)
                    acc[c] = rz_add(acc[c], rz_mul(rz_u2f((uint32_t)(pr + xo[k])[c]), w[k]));
            int32_t v[CN];
RZ_UNROLL
            for (int c = 0; c < CN; c++)
                v[c] = rz_fbits(acc[c]);
            rz_st_px<CN>(sm + (j * RZ_TX + tx) * RZ_SP(CN), v);
        }
        return;
    }
    const int32_t *xwi = t.block + t.o_xwi + dx * K;
    uint32_t w[K];
RZ_UNROLL
    for (int k = 0; k < K; k++)
        w[k] = (uint32_t)xwi[k];
    for (int j = ty; j < n; j += RZ_BY) {
        const S *pr = src + (uint32_t)t.block[t.o_hrow + lo + j] * rowlen;
        uint32_t acc[CN]; /* int32 arithmetic, wrapping as the CPU's */
RZ_UNROLL
        for (int c = 0; c < CN; c++)
            acc[c] = 0;
RZ_UNROLL
        for (int k = 0; k < K; k++)
RZ_UNROLL
            for (int c = 0; c < CN; c++)
                acc[c] += (uint32_t)(pr + xo[k])[c] * w[k];
        int32_t v[CN];
RZ_UNROLL
        for (int c = 0; c < CN; c++)
            v[c] = (int32_t)acc[c];
        rz_st_px<CN>(sm + (j * RZ_TX + tx) * RZ_SP(CN), v);
    }
}

/* Phase 2, as rz_tile_v: the tile's output pixels of column tx, rz_v_sample's operations. */
template <int D, int CN, int M, int K>
RZ_HD void rz_tile_v_s(const imgpu_resize_tab &t, const void *in, const int32_t *sm, void *out, int bx, int by,
                       int tx, int ty)
{
    const int dx = bx * RZ_TX + tx;
    if (dx >= t.dw)
        return;
    const int maxv = D == 16 ? 65535 : 255;
    int32_t cx = 0; /* V_BOX: the column's taps */
    if (M == RZM_BOX) {
        const int32_t *xwi = t.block + t.o_xwi + dx * K;
RZ_UNROLL
        for (int k = 0; k < K; k++)
            cx += xwi[k];
    }
    const int ho = rz_spec_hwords(t);
    for (int oy = ty; oy < RZ_TY; oy += RZ_BY) {
        const int dy = by * RZ_TY + oy;
        if (dy >= t.dh)
            return;
        int32_t yo[K], yw[K]; /* the row's taps (phase 1 put them there): offsets, weights */
        rz_ld_words<K>(sm + ho + oy * K, yo);
        rz_ld_words<K>(sm + ho + RZ_TY * K + oy * K, yw);
        int32_t h[K][CN];
RZ_UNROLL
        for (int k = 0; k < K; k++)
            rz_ld_px<CN>(sm + yo[k] + tx * RZ_SP(CN), h[k]);
        uint32_t r[CN];
        if (M == RZM_LIN) {
            const int32_t b0 = (int32_t)(int16_t)yw[0], b1 = (int32_t)(int16_t)yw[1 % K];
RZ_UNROLL
            for (int c = 0; c < CN; c++) {
                const int32_t a = rz_sat16(h[0][c] >> 4), b = rz_sat16(h[1 % K][c] >> 4);
                const int32_t v = rz_sat16(((a * b0) >> 16) + ((b * b1) >> 16));
                r[c] = (uint32_t)rz_clampi((v + 2) >> 2, 255);
            }
        } else if (M == RZM_CUB || M == RZM_FIX) {
            uint32_t w[K];
RZ_UNROLL
            for (int k = 0; k < K; k++)
                w[k] = (uint32_t)yw[k];
            float ws[K]; /* VEC_CUBIC's b' = b * 2^-22, the same rz_mul as rz_v_sample's */
            if (M == RZM_CUB) {
                const float sc = 1.f / (2048 * 2048);
RZ_UNROLL
                for (int k = 0; k < K; k++)
                    ws[k] = rz_mul(rz_i2f(yw[k]), sc);
            }
RZ_UNROLL
            for (int c = 0; c < CN; c++) {
                if (M == RZM_CUB && dx * CN + c < t.vec_end) {
                    float f = rz_mul(rz_i2f(h[3 % K][c]), ws[3 % K]);
RZ_UNROLL
                    for (int k = 2; k >= 0; k--)
                        f = rz_add(rz_mul(rz_i2f(h[k % K][c]), ws[k % K]), f);
                    r[c] = (uint32_t)rz_clampi(rz_f2i(f), 255);
                } else {
                    uint32_t acc = 0; /* wrapping, as the CPU's */
RZ_UNROLL
                    for (int k = 0; k < K; k++)
                        acc += (uint32_t)h[k][c] * w[k];
                    acc += 1u << 21;
                    r[c] = (uint32_t)rz_clampi((int32_t)acc >> 22, 255);
                }
            }
        } else if (M == RZM_FLOAT) {
            float w[K];
RZ_UNROLL
            for (int k = 0; k < K; k++)
                w[k] = rz_bitsf(yw[k]);
RZ_UNROLL
            for (int c = 0; c < CN; c++) {
                float acc = 0.f;
RZ_UNROLL
                for (int k = 0; k < K; k++)
                    acc = rz_add(acc, rz_mul(w[k], rz_bitsf(h[k][c])));
                r[c] = (uint32_t)rz_clampi(rz_f2i(acc), maxv);
            }
        } else { /* RZM_BOX */
            uint32_t w[K];
            int32_t cy = 0;
RZ_UNROLL
            for (int k = 0; k < K; k++) {
                w[k] = (uint32_t)yw[k];
                cy += yw[k];
            }
            const int32_t count = cx * cy;
RZ_UNROLL
            for (int c = 0; c < CN; c++) {
                uint32_t sum = 0; /* int32, wrapping */
RZ_UNROLL
                for (int k = 0; k < K; k++)
                    sum += (uint32_t)h[k][c] * w[k];
                const int32_t s = (int32_t)sum;
                int q;
                if (count == t.box_area)
                    q = t.box_round2 ? (s + 2) >> 2 : rz_f2i(rz_mul(rz_i2f(s), rz_div(1.f, rz_i2f(t.box_area))));
                else
                    q = rz_f2i(rz_div(rz_i2f(s), rz_i2f(count)));
                r[c] = (uint32_t)rz_clampi(q, maxv);
            }
        }
        typedef typename rz_sample<D>::T S;
        S *po = (S *)out + ((uint32_t)dy * (uint32_t)t.dw + (uint32_t)dx) * CN;
RZ_UNROLL
        for (int c = 0; c < CN; c++)
            po[c] = (S)r[c];
        if (CN == 2 || CN == 4) {
            uint32_t col[3];
            if (t.alpha_mix && rz_alpha_pixel(t, in, dx, dy, col))
                for (int c = 0; c < CN - 1; c++)
                    po[c] = (S)col[c];
        }
    }
}

/* ---- nearest ------------------------------------------------------------------------------ */
RZ_HD void rz_nearest_px(const imgpu_resize_tab &t, const uint8_t *in, uint8_t *out, int dx, int dy)
{
    const int bpp = t.cn * (t.depth == 16 ? 2 : 1);
    const uint8_t *s = in + ((size_t)t.block[t.o_yi + dy] * t.sw + t.block[t.o_xi + dx]) * bpp;
    uint8_t *d = out + ((size_t)dy * t.dw + dx) * bpp;
    for (int b = 0; b < bpp; b++)
        d[b] = s[b];
}

#endif

/* resize.cu — resize on the device: the CPU reference's operations (src/backend/cpu/resize.c
 * states the rules) from the same tables (src/op/resize_tab.h), built on the host once and
 * uploaded, so that no coefficient is computed here. One thread per sample: the horizontal
 * pass over the rows the vertical pass reads (int32 or float into an intermediate), the
 * vertical pass (and, for images with alpha, the premultiplied colour), or a nearest copy.
 * Every float step is an _rn intrinsic: no fma contraction, IEEE rounding as on the CPU. */
#include <stdint.h>
#include "kernels.h"
#include "premul.cuh"
#include "op/resize_tab.h"

namespace {

__device__ __forceinline__ uint32_t rd(const void *img, int depth, size_t i)
{
    return depth == 16 ? ((const uint16_t *)img)[i] : ((const uint8_t *)img)[i];
}
__device__ __forceinline__ void wr(void *img, int depth, size_t i, uint32_t v)
{
    if (depth == 16)
        ((uint16_t *)img)[i] = (uint16_t)v;
    else
        ((uint8_t *)img)[i] = (uint8_t)v;
}
__device__ __forceinline__ uint32_t sat(long long v, long long maxv) { return (uint32_t)(v < 0 ? 0 : v > maxv ? maxv : v); }
__device__ __forceinline__ int32_t sat16(int32_t v) { return v < -32768 ? -32768 : v > 32767 ? 32767 : v; }

__global__ void k_nearest(imgpu_resize_tab t, const uint8_t *in, uint8_t *out)
{
    const long long n = (long long)t.dw * t.dh;
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const int dx = (int)(i % t.dw), dy = (int)(i / t.dw);
    const int bpp = t.cn * (t.depth == 16 ? 2 : 1);
    const uint8_t *s = in + ((size_t)t.block[t.o_yi + dy] * t.sw + t.block[t.o_xi + dx]) * bpp;
    uint8_t *d = out + (size_t)i * bpp;
    for (int b = 0; b < bpp; b++)
        d[b] = s[b];
}

__global__ void k_h(imgpu_resize_tab t, const void *in, void *h)
{
    const int W = t.dw * t.cn;
    const long long n = (long long)t.nh * W;
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const int r = (int)(i / W), x = (int)(i % W), dx = x / t.cn, c = x % t.cn, kx = t.kx;
    const size_t row = (size_t)t.block[t.o_hrow + r] * t.sw * t.cn;
    const int32_t *xi = t.block + t.o_xi + (size_t)dx * kx, *xwi = t.block + t.o_xwi + (size_t)dx * kx;
    const float *xwf = (const float *)(t.block + t.o_xwf) + (size_t)dx * kx;
    if (t.pil) {
        long long acc = 0;
        for (int k = 0; k < kx; k++)
            acc += (long long)rd(in, t.depth, row + (size_t)xi[k] * t.cn + c) * xwi[k];
        long long v = imgpu_rsz_pil_round(acc);
        if (t.depth == 8)
            v = v < 0 ? 0 : v > 255 ? 255 : v;
        ((int32_t *)h)[i] = (int32_t)v;
    } else if (t.hfloat) {
        float acc = 0.f;
        for (int k = 0; k < kx; k++)
            acc = __fadd_rn(acc, __fmul_rn(__uint2float_rn(rd(in, t.depth, row + (size_t)xi[k] * t.cn + c)), xwf[k]));
        ((float *)h)[i] = acc;
    } else {
        int32_t acc = 0;
        for (int k = 0; k < kx; k++)
            acc += (int32_t)rd(in, t.depth, row + (size_t)xi[k] * t.cn + c) * xwi[k];
        ((int32_t *)h)[i] = acc;
    }
}

__device__ uint32_t v_sample(const imgpu_resize_tab &t, const void *h, int dy, int dx, int x)
{
    const int ky = t.ky, W = t.dw * t.cn;
    const int32_t *yc = t.block + t.o_yc + (size_t)dy * ky, *ywi = t.block + t.o_ywi + (size_t)dy * ky;
    const float *ywf = (const float *)(t.block + t.o_ywf) + (size_t)dy * ky;
    const long long maxv = t.depth == 16 ? 65535 : 255;
    const int32_t *hi = (const int32_t *)h;
    const float *hf = (const float *)h;
    if (t.vmode == IMGPU_RSZ_V_FIX) {
        if (x < t.vec_end && t.vfix_kind == IMGPU_RSZ_VEC_LINEAR) {
            const int32_t a = sat16(hi[(size_t)yc[0] * W + x] >> 4), b = sat16(hi[(size_t)yc[1] * W + x] >> 4);
            const int32_t v = sat16(((a * (int32_t)(int16_t)ywi[0]) >> 16) + ((b * (int32_t)(int16_t)ywi[1]) >> 16));
            return sat((v + 2) >> 2, 255);
        }
        if (x < t.vec_end && t.vfix_kind == IMGPU_RSZ_VEC_CUBIC) {
            const float sc = 1.f / (2048 * 2048);
            float f = __fmul_rn(__int2float_rn(hi[(size_t)yc[3] * W + x]), __fmul_rn(__int2float_rn(ywi[3]), sc));
            for (int k = 2; k >= 0; k--)
                f = __fadd_rn(__fmul_rn(__int2float_rn(hi[(size_t)yc[k] * W + x]), __fmul_rn(__int2float_rn(ywi[k]), sc)), f);
            return sat(__float2int_rn(f), 255);
        }
        uint32_t acc = 0; /* wrapping, as the CPU's */
        for (int k = 0; k < ky; k++)
            acc += (uint32_t)hi[(size_t)yc[k] * W + x] * (uint32_t)ywi[k];
        acc += 1u << 21;
        return sat((acc & 0x80000000u) ? -(long long)((~acc) >> 22) - 1 : (long long)(acc >> 22), 255);
    }
    if (t.vmode == IMGPU_RSZ_V_FLOAT) {
        float acc = 0.f;
        for (int k = 0; k < ky; k++)
            acc = __fadd_rn(acc, __fmul_rn(ywf[k], hf[(size_t)yc[k] * W + x]));
        return sat(__float2int_rn(acc), maxv);
    }
    if (t.vmode == IMGPU_RSZ_V_PIL) {
        long long acc = 0;
        for (int k = 0; k < ky; k++)
            acc += (long long)hi[(size_t)yc[k] * W + x] * ywi[k];
        return sat(imgpu_rsz_pil_round(acc), maxv);
    }
    int32_t sum = 0, cy = 0, cx = 0;
    for (int k = 0; k < ky; k++) {
        sum += hi[(size_t)yc[k] * W + x] * ywi[k];
        cy += ywi[k];
    }
    const int32_t *xwi = t.block + t.o_xwi + (size_t)dx * t.kx;
    for (int k = 0; k < t.kx; k++)
        cx += xwi[k];
    const int32_t count = cx * cy;
    if (count == t.box_area) {
        if (t.box_round2)
            return sat((sum + 2) >> 2, maxv);
        return sat(__float2int_rn(__fmul_rn(__int2float_rn(sum), __fdiv_rn(1.f, __int2float_rn(t.box_area)))), maxv);
    }
    return sat(__float2int_rn(__fdiv_rn(__int2float_rn(sum), __int2float_rn(count))), maxv);
}

/* premultiplied colour of a pixel with alpha; 0: keep the straight value */
__device__ int alpha_pixel(const imgpu_resize_tab &t, const void *in, int dx, int dy, uint32_t *col)
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
        const float wy = fix ? __fdiv_rn(__int2float_rn(ywi[r]), 2048.f) : ywf[r];
        const size_t row = (size_t)yi[r] * t.sw * cn;
        float ra = 0.f, rm[3] = {0.f, 0.f, 0.f};
        for (int k = 0; k < kx; k++) {
            const float wx = fix ? __fdiv_rn(__int2float_rn(xwi[k]), 2048.f) : xwf[k];
            const size_t base = row + (size_t)xi[k] * cn;
            const uint32_t a = rd(in, depth, base + ac);
            if (wx != 0.f && wy != 0.f) {
                if (first < 0)
                    first = (int)a;
                else if ((int)a != first)
                    same = 0;
            }
            const float af = __uint2float_rn(a);
            ra = __fadd_rn(ra, __fmul_rn(wx, af));
            for (int c = 0; c < ac; c++)
                rm[c] = __fadd_rn(rm[c], __fmul_rn(wx, imgpu__premul(__uint2float_rn(rd(in, depth, base + c)), af)));
        }
        A = __fadd_rn(A, __fmul_rn(wy, ra));
        for (int c = 0; c < ac; c++)
            M[c] = __fadd_rn(M[c], __fmul_rn(wy, rm[c]));
    }
    if (same || !(A > 0.f))
        return 0;
    for (int c = 0; c < ac; c++)
        col[c] = (uint32_t)floorf(__fadd_rn(imgpu__unpremul(M[c], A, maxv), 0.5f));
    return 1;
}

__global__ void k_v(imgpu_resize_tab t, const void *in, const void *h, void *out)
{
    const long long n = (long long)t.dw * t.dh;
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const int dx = (int)(i % t.dw), dy = (int)(i / t.dw), cn = t.cn;
    for (int c = 0; c < cn; c++)
        wr(out, t.depth, (size_t)i * cn + c, v_sample(t, h, dy, dx, dx * cn + c));
    uint32_t col[3];
    if (t.alpha_mix && alpha_pixel(t, in, dx, dy, col))
        for (int c = 0; c < cn - 1; c++)
            wr(out, t.depth, (size_t)i * cn + c, col[c]);
}

unsigned blocks(long long n, int b) { return (unsigned)((n + b - 1) / b); }

} // namespace

extern "C" cudaError_t imgpu_launch_resize(const imgpu_resize_tab *t, const void *d_in, void *d_h, void *d_out,
                                           cudaStream_t st)
{
    const int B = 256;
    if (t->method == IMGPU_RSZ_NEAREST) {
        k_nearest<<<blocks((long long)t->dw * t->dh, B), B, 0, st>>>(*t, (const uint8_t *)d_in, (uint8_t *)d_out);
        return cudaGetLastError();
    }
    if (t->nh > 0)
        k_h<<<blocks((long long)t->nh * t->dw * t->cn, B), B, 0, st>>>(*t, d_in, d_h);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return e;
    k_v<<<blocks((long long)t->dw * t->dh, B), B, 0, st>>>(*t, d_in, d_h, d_out);
    return cudaGetLastError();
}

/* rotate.cu — rotation about the image centre, output-driven.
 *
 * Sampled ops read a CUDA array through texture objects: the texture cache keeps the 2D
 * neighbourhood a rotated row walks through, the hardware does bilinear filtering, and the
 * border address mode (border colour = background) supplies the taps outside the image.
 * Conventions (src/core/op.h): pixel centres at +0.5, source point of output pixel (u, v):
 *   dx = u + 0.5 - out_w/2, dy = v + 0.5 - out_h/2
 *   sx = cos*dx - sin*dy + in_w/2,  sy = sin*dx + cos*dy + in_h/2
 * in float, with __fmul_rn/__fadd_rn so that nvcc cannot contract into FMAs the CPU
 * reference does not do: nearest and the tap positions of bicubic then agree bit for bit.
 *  - nearest: the texel containing (sx, sy), fetched at its exact centre with point sampling.
 *  - bilinear: one hardware-filtered fetch (weights with 8 fractional bits; the CPU models it),
 *    except on images with alpha: the hardware blends straight colour, and the premultiplied
 *    rule (src/op.h, premul.cuh) needs each tap's alpha, so gray+alpha and RGBA take 4 point
 *    fetches and the CPU's integer formula (bilinear_premul), equal to it bit for bit.
 *  - bicubic: Keys a = -0.75 (OpenCV INTER_CUBIC) from 16 taps; its negative lobes rule out
 *    the 4-bilinear-fetch trick, which only fits all-positive (B-spline) weights. Gray images
 *    take the 16 taps in 4 tex2Dgather fetches (2 x 2 texels each) from an array made for
 *    gathers (texture.c); other channel counts take 16 point fetches (a gather returns one
 *    channel). The taps and the arithmetic are the same either way, so the bytes are too.
 *    With alpha the colour is premultiplied (src/cpu/rotate.c, "Alpha"), in the CPU's order.
 * Each thread writes 4 consecutive pixels of a row with one wide store.
 * Quarter turns are exact permutations: turn_kernel, a shared-memory tiled transpose.
 */
#include <stdlib.h>

#include <type_traits>

#include "kernels.h"
#include "premul.cuh"
#include "tuning.h"

template <int C> struct tex_t;
template <> struct tex_t<1> { typedef float T; };
template <> struct tex_t<2> { typedef float2 T; };
template <> struct tex_t<3> { typedef float4 T; };
template <> struct tex_t<4> { typedef float4 T; };

static __device__ __forceinline__ void to_array(float v, float *a) { a[0] = v; }
static __device__ __forceinline__ void to_array(float2 v, float *a) { a[0] = v.x; a[1] = v.y; }
static __device__ __forceinline__ void to_array(float4 v, float *a) { a[0] = v.x; a[1] = v.y; a[2] = v.z; a[3] = v.w; }

static __device__ __forceinline__ int to_u8(float v) /* round half up, then clamp: as the CPU */
{
    int i = __float2int_rd(__fadd_rn(v, 0.5f));
    return i < 0 ? 0 : (i > 255 ? 255 : i);
}

/* Keys cubic convolution weights, a = -0.75, for the 4 taps at -1, 0, 1, 2 from floor. */
static __device__ __forceinline__ void cubic_weights(float t, float w[4])
{
    const float A = -0.75f;
    float x;
    x = __fadd_rn(t, 1.0f); /* 1..2 */
    w[0] = __fadd_rn(__fmul_rn(__fadd_rn(__fmul_rn(__fadd_rn(__fmul_rn(A, x), -5.0f * A), x), 8.0f * A), x), -4.0f * A);
    x = t; /* 0..1 */
    w[1] = __fadd_rn(__fmul_rn(__fmul_rn(__fadd_rn(__fmul_rn(A + 2.0f, x), -(A + 3.0f)), x), x), 1.0f);
    x = __fadd_rn(1.0f, -t); /* 0..1 */
    w[2] = __fadd_rn(__fmul_rn(__fmul_rn(__fadd_rn(__fmul_rn(A + 2.0f, x), -(A + 3.0f)), x), x), 1.0f);
    w[3] = __fadd_rn(__fadd_rn(__fadd_rn(1.0f, -w[0]), -w[1]), -w[2]);
}

static __device__ __forceinline__ int weight8(float t) /* the texture unit's 8 fractional bits */
{
    const int a = (int)roundf(__fmul_rn(t, 256.0f)); /* roundf: half away from zero, as the CPU */
    return a < 0 ? 0 : (a > 256 ? 256 : a);
}

/* Bilinear of an image with alpha (C = 2 or 4, alpha last): the CPU's bilinear_premul
 * (src/cpu/rotate.c), exact integers. Taps t[k] = p00, p10, p01, p11 as numbers of 8 or 16
 * bits (D), integer weights w[k] summing to 65536. Sa = sum w a < 2^32; the premultiplied sum
 * fits 32 bits at 8 bits (<= 65536 * 255 * 255, plus Sa / 2: premul.cuh), 48 at 16. */
template <int C, int D>
static __device__ __forceinline__ void bilinear_premul(const uint32_t w[4], const uint32_t t[4][4], uint32_t *res)
{
    constexpr int AL = C - 1;
    const uint32_t sa = w[0] * t[0][AL] + w[1] * t[1][AL] + w[2] * t[2][AL] + w[3] * t[3][AL];
    res[AL] = (sa + 32768u) >> 16;
    const bool same = t[0][AL] == t[1][AL] && t[0][AL] == t[2][AL] && t[0][AL] == t[3][AL];
#pragma unroll
    for (int c = 0; c < AL; c++) {
        if (sa == 0 || same) { /* the straight formula (the same value when the alphas agree) */
            res[c] = (w[0] * t[0][c] + w[1] * t[1][c] + w[2] * t[2][c] + w[3] * t[3][c] + 32768u) >> 16;
        } else if (D == 8) {
            uint32_t m = 0;
#pragma unroll
            for (int k = 0; k < 4; k++)
                m += w[k] * (t[k][AL] * t[k][c]);
            res[c] = imgpu__unpremul_exact32(m, sa);
        } else {
            uint64_t m = 0;
#pragma unroll
            for (int k = 0; k < 4; k++)
                m += (uint64_t)w[k] * (t[k][AL] * t[k][c]);
            res[c] = imgpu__unpremul_exact(m, sa);
        }
    }
}

/* Bicubic accumulators of one sample: the straight sums acc[c] of every channel and, with
 * alpha (C = 2 or 4), the premultiplied sums accm[c] of the colour channels, each in the CPU's
 * order (rows left to right from 0, then rows top to bottom from 0), and whether every tap's
 * alpha equals the first one's. */
template <int C>
struct cubic_acc {
    float acc[4], accm[4], row[4], rowm[4];
    float a0;
    bool same;
    __device__ __forceinline__ void start()
    {
#pragma unroll
        for (int c = 0; c < 4; c++)
            acc[c] = accm[c] = 0.f;
        same = true;
    }
    __device__ __forceinline__ void start_row()
    {
#pragma unroll
        for (int c = 0; c < 4; c++)
            row[c] = rowm[c] = 0.f;
    }
    /* tap v[] (exact integers as floats) with weight wx; first: the first tap of the 16 */
    __device__ __forceinline__ void tap(const float *v, float wx, bool first)
    {
#pragma unroll
        for (int c = 0; c < C; c++)
            row[c] = __fadd_rn(row[c], __fmul_rn(wx, v[c]));
        if constexpr (C == 2 || C == 4) {
            constexpr int AL = C - 1;
            if (first)
                a0 = v[AL];
            same = same && v[AL] == a0;
#pragma unroll
            for (int c = 0; c < AL; c++)
                rowm[c] = __fadd_rn(rowm[c], __fmul_rn(wx, imgpu__premul(v[c], v[AL])));
        }
    }
    __device__ __forceinline__ void end_row(float wy)
    {
#pragma unroll
        for (int c = 0; c < C; c++)
            acc[c] = __fadd_rn(acc[c], __fmul_rn(wy, row[c]));
        if constexpr (C == 2 || C == 4) {
#pragma unroll
            for (int c = 0; c < C - 1; c++)
                accm[c] = __fadd_rn(accm[c], __fmul_rn(wy, rowm[c]));
        }
    }
    /* channel c's value before rounding: the straight sum, or for a colour channel of an image
     * with alpha whose taps' alphas differ and whose alpha sum is positive, M / A clamped */
    __device__ __forceinline__ float value(int c, float maxv) const
    {
        if constexpr (C == 2 || C == 4) {
            constexpr int AL = C - 1;
            if (c < AL && !same && acc[AL] > 0.0f)
                return imgpu__unpremul(accm[c], acc[AL], maxv);
        }
        return acc[c];
    }
};

template <int C, int F>
static __device__ __forceinline__ void sample(cudaTextureObject_t tl, cudaTextureObject_t tp, float sx, float sy, int *px)
{
    typedef typename tex_t<C>::T T;
    float a[4];
    if (F == 0) {
        to_array(tex2D<T>(tp, floorf(sx) + 0.5f, floorf(sy) + 0.5f), a);
#pragma unroll
        for (int c = 0; c < C; c++)
            px[c] = to_u8(__fmul_rn(a[c], 255.0f));
    } else if (F == 1 && (C == 2 || C == 4)) { /* premultiplied: 4 point fetches, the CPU's integers */
        const float x = __fadd_rn(sx, -0.5f), y = __fadd_rn(sy, -0.5f);
        const float ix = floorf(x), iy = floorf(y);
        const uint32_t A = (uint32_t)weight8(__fadd_rn(x, -ix)), B = (uint32_t)weight8(__fadd_rn(y, -iy));
        const uint32_t w[4] = {(256u - A) * (256u - B), A * (256u - B), (256u - A) * B, A * B};
        uint32_t t[4][4], res[4];
#pragma unroll
        for (int k = 0; k < 4; k++) { /* p00, p10, p01, p11; outside: the border colour = background */
            to_array(tex2D<T>(tp, ix + (float)(k & 1) + 0.5f, iy + (float)(k >> 1) + 0.5f), a);
#pragma unroll
            for (int c = 0; c < C; c++) /* texel back to its exact 0..255 integer */
                t[k][c] = (uint32_t)rintf(__fmul_rn(a[c], 255.0f));
        }
        bilinear_premul<C, 8>(w, t, res);
#pragma unroll
        for (int c = 0; c < C; c++)
            px[c] = (int)res[c];
    } else if (F == 1) {
        to_array(tex2D<T>(tl, sx, sy), a);
#pragma unroll
        for (int c = 0; c < C; c++)
            px[c] = to_u8(__fmul_rn(a[c], 255.0f));
    } else if (F == 3) { /* bicubic, gray, through gathers */
        static_assert(F != 3 || C == 1, "a gather returns one channel");
        const float x = __fadd_rn(sx, -0.5f), y = __fadd_rn(sy, -0.5f);
        const float ix = floorf(x), iy = floorf(y);
        float wx[4], wy[4];
        cubic_weights(__fadd_rn(x, -ix), wx);
        cubic_weights(__fadd_rn(y, -iy), wy);
        /* t[j][i]: the tap at column ix - 1 + i, row iy - 1 + j. A gather at (X, Y) returns the
         * 2 x 2 texels a bilinear fetch there would blend: columns floor(X - 0.5) and the next,
         * rows likewise. At X = ix + 2gi (an integer, so X - 0.5 has no rounding) those are
         * ix - 1 + 2gi and ix + 2gi. Order of the result: .w (left, top), .z (right, top),
         * .x (left, bottom), .y (right, bottom). */
        float t[4][4];
#pragma unroll
        for (int gj = 0; gj < 2; gj++)
#pragma unroll
            for (int gi = 0; gi < 2; gi++) {
                const float4 q = tex2Dgather<float4>(tp, ix + (float)(2 * gi), iy + (float)(2 * gj), 0);
                t[2 * gj][2 * gi] = q.w;
                t[2 * gj][2 * gi + 1] = q.z;
                t[2 * gj + 1][2 * gi] = q.x;
                t[2 * gj + 1][2 * gi + 1] = q.y;
            }
        float acc = 0.f;
#pragma unroll
        for (int j = 0; j < 4; j++) { /* the order of the point-fetch path below, term by term */
            float row = 0.f;
#pragma unroll
            for (int i = 0; i < 4; i++)
                row = __fadd_rn(row, __fmul_rn(wx[i], rintf(__fmul_rn(t[j][i], 255.0f))));
            acc = __fadd_rn(acc, __fmul_rn(wy[j], row));
        }
        px[0] = to_u8(acc);
    } else {
        const float x = __fadd_rn(sx, -0.5f), y = __fadd_rn(sy, -0.5f);
        const float ix = floorf(x), iy = floorf(y);
        float wx[4], wy[4];
        cubic_weights(__fadd_rn(x, -ix), wx);
        cubic_weights(__fadd_rn(y, -iy), wy);
        cubic_acc<C> s;
        s.start();
#pragma unroll
        for (int j = 0; j < 4; j++) {
            s.start_row();
#pragma unroll
            for (int i = 0; i < 4; i++) {
                to_array(tex2D<T>(tp, ix + (float)(i - 1) + 0.5f, iy + (float)(j - 1) + 0.5f), a);
#pragma unroll
                for (int c = 0; c < C; c++) /* texel back to its exact 0..255 integer */
                    a[c] = rintf(__fmul_rn(a[c], 255.0f));
                s.tap(a, wx[i], i == 0 && j == 0);
            }
            s.end_row(wy[j]);
        }
#pragma unroll
        for (int c = 0; c < C; c++)
            px[c] = to_u8(s.value(c, 255.0f));
    }
}

/* Source points this far outside the image have no tap inside it (nearest: the texel; bilinear:
 * 2 x 2 taps; bicubic: 4 x 4), so the output is the background itself (the CPU reference's
 * rule, src/cpu/rotate.c). The margin is half a pixel wider than the filter's reach, so the
 * texture unit's 8-bit fixed-point coordinates cannot put a tap back inside. A warp whose
 * every pixel is such a point writes the background without a texture fetch: at 30 degrees
 * ~21% of a same-size canvas (more when expanded). The test is per warp, not per lane: a
 * per-lane branch around each fetch costs the fetches their overlap (measured slower). */
template <int F>
static __device__ __forceinline__ bool no_tap_inside(float sx, float sy, const imgpu_rotate_geom &g)
{
    constexpr float M = F >= 2 ? 2.0f : 1.0f; /* 2, 3: bicubic */
    return sx < -M || sy < -M || sx > (float)g.in_w + M || sy > (float)g.in_h + M;
}

template <int C, int F>
static __global__ void __launch_bounds__(IMGPU_ROT_BX *IMGPU_ROT_BY)
rotate_kernel(cudaTextureObject_t tl, cudaTextureObject_t tp, uint8_t *out, imgpu_rotate_geom g)
{
    constexpr int PIX = IMGPU_ROT_PIX; /* 8 for gray measured slower on the H100: 70 vs 58 us at 8K */
    const int v = blockIdx.y * blockDim.y + threadIdx.y;
    const int u0 = (blockIdx.x * blockDim.x + threadIdx.x) * PIX;
    if (v >= g.out_h || u0 >= g.out_w)
        return;
    const float dy = __fadd_rn(__fadd_rn((float)v, 0.5f), -g.out_cy);
    const float sdy = __fmul_rn(g.sin_t, dy), cdy = __fmul_rn(g.cos_t, dy);
    uint32_t packed[PIX * C / 4] = {0}; /* PIX * C bytes */
    int px[PIX][4];
    float sx[PIX], sy[PIX];
    bool outside = true;
#pragma unroll
    for (int k = 0; k < PIX; k++) {
        const float dx = __fadd_rn(__fadd_rn((float)(u0 + k), 0.5f), -g.out_cx);
        sx[k] = __fadd_rn(__fadd_rn(__fmul_rn(g.cos_t, dx), -sdy), g.in_cx);
        sy[k] = __fadd_rn(__fadd_rn(__fmul_rn(g.sin_t, dx), cdy), g.in_cy);
        outside = outside && no_tap_inside<F>(sx[k], sy[k], g);
    }
    if (__all_sync(__activemask(), outside)) {
#pragma unroll
        for (int k = 0; k < PIX; k++)
#pragma unroll
            for (int c = 0; c < C; c++)
                px[k][c] = g.background[c];
    } else {
#pragma unroll
        for (int k = 0; k < PIX; k++)
            sample<C, F>(tl, tp, sx[k], sy[k], px[k]);
    }
    uint8_t *row = out + ((size_t)v * g.out_w + u0) * C;
    if (u0 + PIX <= g.out_w && ((uintptr_t)row & 3) == 0) {
#pragma unroll
        for (int k = 0; k < PIX; k++)
#pragma unroll
            for (int c = 0; c < C; c++) {
                const int b = k * C + c; /* byte b of the 4*C-byte group */
                packed[b >> 2] |= (uint32_t)px[k][c] << ((b & 3) * 8);
            }
        /* widest aligned store the group allows: 16 B for RGBA, 8 B gray and gray+alpha, else 4 B */
        if constexpr (PIX * C == 16) {
            if (((uintptr_t)row & 15) == 0) {
                *reinterpret_cast<uint4 *>(row) = make_uint4(packed[0], packed[1], packed[2], packed[3]);
                return;
            }
        }
        if constexpr (PIX * C == 8) {
            if (((uintptr_t)row & 7) == 0) {
                *reinterpret_cast<uint2 *>(row) = make_uint2(packed[0], packed[1]);
                return;
            }
        }
#pragma unroll
        for (int w = 0; w < PIX * C / 4; w++)
            reinterpret_cast<uint32_t *>(row)[w] = packed[w];
    } else {
        for (int k = 0; k < PIX && u0 + k < g.out_w; k++)
            for (int c = 0; c < C; c++)
                row[k * C + c] = (uint8_t)px[k][c];
    }
}

/* Warp-tiled layout: a warp owns a 32 x 4 tile of the output, and each of its 4 texture
 * fetches covers a compact 8 x 4 sub-block of it (lane l: column 8k + l%8, row l/8), whose
 * source footprint at any angle is a small 2D patch: few texture-cache lines per fetch
 * instruction, where the row layout's fetch (32 lanes 4 pixels apart along one row) spans a
 * 128-pixel diagonal. Then 4 warp shuffles per channel regroup the pixels so that each lane
 * holds 4 consecutive pixels of its row for one wide store (the 4 values a lane computed are
 * packed one byte per fetch, and lane l picks byte (l%8)/2 of each word it receives). */
template <int C, int F>
static __global__ void __launch_bounds__(IMGPU_ROT_BX *IMGPU_ROT_BY)
rotate_tiled_kernel(cudaTextureObject_t tl, cudaTextureObject_t tp, uint8_t *out, imgpu_rotate_geom g, int wx)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int wy = (int)(blockDim.x >> 5) / wx;
    const int tile_u = (blockIdx.x * wx + warp % wx) * 32, tile_v = (blockIdx.y * wy + warp / wx) * 4;
    if (tile_u >= g.out_w || tile_v >= g.out_h) /* whole warps only: the shuffles need all 32 lanes */
        return;
    const int v = tile_v + (lane >> 3);
    const float dy = __fadd_rn(__fadd_rn((float)v, 0.5f), -g.out_cy);
    const float sdy = __fmul_rn(g.sin_t, dy), cdy = __fmul_rn(g.cos_t, dy);
    uint32_t slot[C]; /* byte k of slot[c]: channel c of the pixel fetched k-th */
#pragma unroll
    for (int c = 0; c < C; c++)
        slot[c] = 0;
    float sx[4], sy[4];
    bool outside = true;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const int u = tile_u + 8 * k + (lane & 7);
        const float dx = __fadd_rn(__fadd_rn((float)u, 0.5f), -g.out_cx);
        sx[k] = __fadd_rn(__fadd_rn(__fmul_rn(g.cos_t, dx), -sdy), g.in_cx);
        sy[k] = __fadd_rn(__fadd_rn(__fmul_rn(g.sin_t, dx), cdy), g.in_cy);
        outside = outside && no_tap_inside<F>(sx[k], sy[k], g);
    }
    if (__all_sync(0xffffffffu, outside)) { /* the whole 32 x 4 tile is background */
#pragma unroll
        for (int c = 0; c < C; c++)
            slot[c] = g.background[c] * 0x01010101u;
    } else {
#pragma unroll
        for (int k = 0; k < 4; k++) {
            int px[4];
            sample<C, F>(tl, tp, sx[k], sy[k], px);
#pragma unroll
            for (int c = 0; c < C; c++)
                slot[c] |= (uint32_t)px[c] << (8 * k);
        }
    }
    /* lane l stores columns 4(l%8)..+3 of row v; column 4(l%8)+j was fetched k = (l%8)/2-th by
     * lane 8(l/8) + 4(l%2) + j */
    const int u0 = tile_u + 4 * (lane & 7), pick = 8 * ((lane & 7) >> 1);
    int px[4][4];
#pragma unroll
    for (int j = 0; j < 4; j++)
#pragma unroll
        for (int c = 0; c < C; c++)
            px[j][c] = (int)((__shfl_sync(0xffffffffu, slot[c], (lane & ~7) | (4 * (lane & 1) + j)) >> pick) & 0xffu);
    if (v >= g.out_h || u0 >= g.out_w)
        return;
    uint8_t *row = out + ((size_t)v * g.out_w + u0) * C;
    if (u0 + 4 <= g.out_w && ((uintptr_t)row & 3) == 0) {
        uint32_t packed[C] = {0}; /* 4 * C bytes */
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int c = 0; c < C; c++) {
                const int b = j * C + c;
                packed[b >> 2] |= (uint32_t)px[j][c] << ((b & 3) * 8);
            }
        if constexpr (C == 4) {
            if (((uintptr_t)row & 15) == 0) {
                *reinterpret_cast<uint4 *>(row) = make_uint4(packed[0], packed[1], packed[2], packed[3]);
                return;
            }
        }
        if constexpr (C == 2) {
            if (((uintptr_t)row & 7) == 0) {
                *reinterpret_cast<uint2 *>(row) = make_uint2(packed[0], packed[1]);
                return;
            }
        }
#pragma unroll
        for (int w = 0; w < C; w++)
            reinterpret_cast<uint32_t *>(row)[w] = packed[w];
    } else {
        for (int j = 0; j < 4 && u0 + j < g.out_w; j++)
            for (int c = 0; c < C; c++)
                row[j * C + c] = (uint8_t)px[j][c];
    }
}

/* Every block has IMGPU_ROT_BX * IMGPU_ROT_BY threads, whatever its shape (tuning.h). */
constexpr int ROT_THREADS = IMGPU_ROT_BX * IMGPU_ROT_BY;
constexpr int ROT_WARPS = ROT_THREADS / 32;
static const imgpu_tuning k_default_tuning = IMGPU_TUNING_DEFAULTS;

/* The kernels' filter parameter: g->filter, or 3 for gray bicubic through gathers. */
template <int C>
static int kernel_filter(const imgpu_rotate_geom *g)
{
    return C == 1 && g->filter == 2 && g->gather ? 3 : g->filter;
}

/* wx: warps side by side in a block (tune->rot_wx, checked by the caller) */
template <int C>
static void launch_tiled(cudaTextureObject_t tl, cudaTextureObject_t tp, uint8_t *out, const imgpu_rotate_geom *g,
                         int wx, cudaStream_t s)
{
    constexpr int WARPS = ROT_WARPS;
    const int wy = WARPS / wx;
    dim3 grid((g->out_w + 32 * wx - 1) / (32 * wx), (g->out_h + 4 * wy - 1) / (4 * wy));
    switch (kernel_filter<C>(g)) {
    case 0: rotate_tiled_kernel<C, 0><<<grid, WARPS * 32, 0, s>>>(tl, tp, out, *g, wx); break;
    case 2: rotate_tiled_kernel<C, 2><<<grid, WARPS * 32, 0, s>>>(tl, tp, out, *g, wx); break;
    case 3:
        if constexpr (C == 1)
            rotate_tiled_kernel<1, 3><<<grid, WARPS * 32, 0, s>>>(tl, tp, out, *g, wx);
        break;
    default: rotate_tiled_kernel<C, 1><<<grid, WARPS * 32, 0, s>>>(tl, tp, out, *g, wx); break;
    }
}

/* bx: the block width (tune->rot_bx, checked by the caller); the threads stay ROT_THREADS */
template <int C>
static void launch_rot(cudaTextureObject_t tl, cudaTextureObject_t tp, uint8_t *out, const imgpu_rotate_geom *g,
                       int bx, cudaStream_t s)
{
    constexpr int PIX = IMGPU_ROT_PIX;
    const int by = ROT_THREADS / bx;
    dim3 block(bx, by);
    dim3 grid((g->out_w + bx * PIX - 1) / (bx * PIX), (g->out_h + by - 1) / by);
    switch (kernel_filter<C>(g)) {
    case 0: rotate_kernel<C, 0><<<grid, block, 0, s>>>(tl, tp, out, *g); break;
    case 2: rotate_kernel<C, 2><<<grid, block, 0, s>>>(tl, tp, out, *g); break;
    case 3:
        if constexpr (C == 1)
            rotate_kernel<1, 3><<<grid, block, 0, s>>>(tl, tp, out, *g);
        break;
    default: rotate_kernel<C, 1><<<grid, block, 0, s>>>(tl, tp, out, *g); break;
    }
}

extern "C" cudaError_t imgpu_launch_rotate(cudaTextureObject_t tex_linear, cudaTextureObject_t tex_point,
                                           uint8_t *d_out, const imgpu_rotate_geom *g,
                                           const imgpu_tuning *tune, cudaStream_t stream)
{
    if (!tune)
        tune = &k_default_tuning;
    if (g->filter < 0 || g->filter > 2) /* imgpu_filter's three; 3 is the kernels' own (gathers) */
        return cudaErrorInvalidValue;
    const int bx = tune->rot_bx, wx = tune->rot_wx;
    if (bx < 1 || bx > ROT_THREADS || ROT_THREADS % bx != 0 || wx < 1 || wx > ROT_WARPS || ROT_WARPS % wx != 0)
        return cudaErrorInvalidValue;
    const int layout = tune->rot_layout;
    const int bicubic_points = g->filter == 2 && !(g->channels == 1 && g->gather); /* 16 fetches a pixel */
    const int tiled = layout >= 0 ? layout == 1 : (g->channels > IMGPU_ROT_ROWS_MAX_C || bicubic_points);
    switch (g->channels) {
    case 1: tiled ? launch_tiled<1>(tex_linear, tex_point, d_out, g, wx, stream)
                  : launch_rot<1>(tex_linear, tex_point, d_out, g, bx, stream); break;
    case 2: tiled ? launch_tiled<2>(tex_linear, tex_point, d_out, g, wx, stream)
                  : launch_rot<2>(tex_linear, tex_point, d_out, g, bx, stream); break;
    case 3: tiled ? launch_tiled<3>(tex_linear, tex_point, d_out, g, wx, stream)
                  : launch_rot<3>(tex_linear, tex_point, d_out, g, bx, stream); break;
    case 4: tiled ? launch_tiled<4>(tex_linear, tex_point, d_out, g, wx, stream)
                  : launch_rot<4>(tex_linear, tex_point, d_out, g, bx, stream); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

/* ---- quarter turns -------------------------------------------------------------------------- */

template <int C>
static __device__ __forceinline__ uint32_t load_px(const uint8_t *p)
{
    if constexpr (C == 4)
        return *reinterpret_cast<const uint32_t *>(p);
    uint32_t v = 0;
#pragma unroll
    for (int c = 0; c < C; c++)
        v |= (uint32_t)p[c] << (8 * c);
    return v;
}

template <int C>
static __device__ __forceinline__ void store_px(uint8_t *p, uint32_t v)
{
    if constexpr (C == 4) {
        *reinterpret_cast<uint32_t *>(p) = v;
    } else {
#pragma unroll
        for (int c = 0; c < C; c++)
            p[c] = (uint8_t)(v >> (8 * c));
    }
}

/* The turned image R (rw x rh) sits at (ox, oy) in the canvas. Output (u, v) shows R pixel
 * (ru, rv) = (u - ox, v - oy), which is input pixel
 *   q=0: (ru, rv)   q=1: (w-1-rv, ru)   q=2: (w-1-ru, h-1-rv)   q=3: (rv, h-1-ru).
 * Loads walk the input along its rows (coalesced) into a shared tile, stores walk the
 * output along its rows; the +1 column of padding keeps the transposed reads conflict-free. */
/* The input pixel (x, y) of a w x h image that lands on (ru, rv) of its turn by q quarter
 * turns counterclockwise (q in 0..3); outside the input where the canvas is larger. */
static __device__ __forceinline__ void turn_source(int q, int w, int h, int ru, int rv, int *x, int *y)
{
    switch (q) {
    case 1: *x = w - 1 - rv; *y = ru; break;
    case 2: *x = w - 1 - ru; *y = h - 1 - rv; break;
    case 3: *x = rv; *y = h - 1 - ru; break;
    default: *x = ru; *y = rv; break;
    }
}

template <int C>
static __global__ void turn_kernel(const uint8_t *in, int w, int h, int q, uint8_t *out, int ow, int oh, int ox,
                                   int oy, uint32_t bg)
{
    __shared__ uint32_t tile[IMGPU_TURN_TILE][IMGPU_TURN_TILE + 1];
    const int u0 = blockIdx.x * IMGPU_TURN_TILE, v0 = blockIdx.y * IMGPU_TURN_TILE;
    const int tx = threadIdx.x;
    for (int r = threadIdx.y; r < IMGPU_TURN_TILE; r += IMGPU_TURN_ROWS) {
        /* pick the tile cell (a, b) so that consecutive tx read consecutive input x */
        int a, b;
        switch (q) {
        case 1: a = r; b = IMGPU_TURN_TILE - 1 - tx; break;
        case 2: a = IMGPU_TURN_TILE - 1 - tx; b = r; break;
        case 3: a = r; b = tx; break;
        default: a = tx; b = r; break;
        }
        const int ru = u0 + a - ox, rv = v0 + b - oy;
        int x, y;
        turn_source(q, w, h, ru, rv, &x, &y);
        uint32_t px = bg;
        if (x >= 0 && x < w && y >= 0 && y < h)
            px = load_px<C>(in + ((size_t)y * w + x) * C);
        tile[b][a] = px;
    }
    __syncthreads();
    for (int r = threadIdx.y; r < IMGPU_TURN_TILE; r += IMGPU_TURN_ROWS) {
        const int u = u0 + tx, v = v0 + r;
        if (u < ow && v < oh)
            store_px<C>(out + ((size_t)v * ow + u) * C, tile[r][tx]);
    }
}

/* Calls launch(std::integral_constant<int, C>{}) for C = channels (1..4), then reports the
 * launch's error; other channel counts are invalid. */
template <typename F>
static cudaError_t by_channels(int channels, F launch)
{
    switch (channels) {
    case 1: launch(std::integral_constant<int, 1>{}); break;
    case 2: launch(std::integral_constant<int, 2>{}); break;
    case 3: launch(std::integral_constant<int, 3>{}); break;
    case 4: launch(std::integral_constant<int, 4>{}); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

extern "C" cudaError_t imgpu_launch_turn(const uint8_t *d_in, int w, int h, int channels, int q, uint8_t *d_out,
                                         int out_w, int out_h, int off_x, int off_y, const uint8_t background[4],
                                         cudaStream_t stream)
{
    uint32_t bg = 0;
    for (int c = 0; c < channels; c++)
        bg |= (uint32_t)background[c] << (8 * c);
    dim3 block(IMGPU_TURN_TILE, IMGPU_TURN_ROWS);
    dim3 grid((out_w + IMGPU_TURN_TILE - 1) / IMGPU_TURN_TILE, (out_h + IMGPU_TURN_TILE - 1) / IMGPU_TURN_TILE);
    q &= 3;
    return by_channels(channels, [&](auto c) {
        turn_kernel<decltype(c)::value><<<grid, block, 0, stream>>>(d_in, w, h, q, d_out, out_w, out_h, off_x, off_y, bg);
    });
}

static __global__ void rgb_to_surface_kernel(const uint8_t *rgb, int w, int h, cudaSurfaceObject_t surf)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    const uint8_t *p = rgb + ((size_t)y * w + x) * 3;
    surf2Dwrite(make_uchar4(p[0], p[1], p[2], 255), surf, x * 4, y);
}

extern "C" cudaError_t imgpu_launch_rgb_to_surface(const uint8_t *d_rgb, int w, int h, cudaSurfaceObject_t surf,
                                                   cudaStream_t stream)
{
    dim3 block(32, 8), grid((w + 31) / 32, (h + 7) / 8);
    rgb_to_surface_kernel<<<grid, block, 0, stream>>>(d_rgb, w, h, surf);
    return cudaGetLastError();
}

/* ---- 16-bit images ---------------------------------------------------------------------------
 * 16-bit rotation reads the packed samples with ordinary cached loads instead of a texture:
 * the precision of the texture unit's filtering of 16-bit texels is not documented, so the taps
 * are fetched one by one and blended in software with the CPU reference's own arithmetic
 * (src/cpu/rotate.c: bilinear in integers with the texture unit's 8-bit weights, bicubic in
 * float in the same order, colour premultiplied by alpha as there), which makes the GPU equal
 * to the CPU bit for bit; and with point
 * taps only, a texture would buy little for the copy it needs (RGB16 has no 3-channel texel
 * format). The background is the 8-bit one times 257. One pixel per thread: 16-bit rotation
 * has no speed target, it has to be exact. Quarter turns are a plain permutation. */
template <int C>
static __device__ __forceinline__ void tap16(const uint16_t *in, int w, int h, int x, int y, const uint32_t *bg,
                                             uint32_t *v)
{
    if (x < 0 || y < 0 || x >= w || y >= h) {
#pragma unroll
        for (int c = 0; c < C; c++)
            v[c] = bg[c];
    } else {
        const uint16_t *p = in + ((size_t)y * w + x) * C;
#pragma unroll
        for (int c = 0; c < C; c++)
            v[c] = __ldg(p + c);
    }
}

template <int C, int F>
static __global__ void __launch_bounds__(256) rotate16_kernel(const uint16_t *in, uint16_t *out, imgpu_rotate_geom g)
{
    const int u = blockIdx.x * blockDim.x + threadIdx.x, v = blockIdx.y * blockDim.y + threadIdx.y;
    if (u >= g.out_w || v >= g.out_h)
        return;
    uint32_t bg[4], res[4];
#pragma unroll
    for (int c = 0; c < C; c++)
        bg[c] = g.background[c] * 257u;
    const float dy = __fadd_rn(__fadd_rn((float)v, 0.5f), -g.out_cy);
    const float dx = __fadd_rn(__fadd_rn((float)u, 0.5f), -g.out_cx);
    const float sx = __fadd_rn(__fadd_rn(__fmul_rn(g.cos_t, dx), -__fmul_rn(g.sin_t, dy)), g.in_cx);
    const float sy = __fadd_rn(__fadd_rn(__fmul_rn(g.sin_t, dx), __fmul_rn(g.cos_t, dy)), g.in_cy);
    if (no_tap_inside<F>(sx, sy, g)) {
#pragma unroll
        for (int c = 0; c < C; c++)
            res[c] = bg[c];
    } else if (F == 0) {
        tap16<C>(in, g.in_w, g.in_h, (int)floorf(sx), (int)floorf(sy), bg, res);
    } else {
        const float x = __fadd_rn(sx, -0.5f), y = __fadd_rn(sy, -0.5f);
        const float fi = floorf(x), fj = floorf(y);
        const int i = (int)fi, j = (int)fj;
        if (F == 1) {
            const uint32_t A = (uint32_t)weight8(__fadd_rn(x, -fi)), B = (uint32_t)weight8(__fadd_rn(y, -fj));
            uint32_t t[4][4];
            tap16<C>(in, g.in_w, g.in_h, i, j, bg, t[0]);
            tap16<C>(in, g.in_w, g.in_h, i + 1, j, bg, t[1]);
            tap16<C>(in, g.in_w, g.in_h, i, j + 1, bg, t[2]);
            tap16<C>(in, g.in_w, g.in_h, i + 1, j + 1, bg, t[3]);
            const uint32_t w[4] = {(256u - A) * (256u - B), A * (256u - B), (256u - A) * B, A * B};
            if constexpr (C == 2 || C == 4) {
                bilinear_premul<C, 16>(w, t, res);
            } else {
#pragma unroll
                for (int c = 0; c < C; c++) /* the weights sum to 65536: < 2^32 for 16-bit taps */
                    res[c] = (w[0] * t[0][c] + w[1] * t[1][c] + w[2] * t[2][c] + w[3] * t[3][c] + 32768u) >> 16;
            }
        } else {
            float wx[4], wy[4];
            cubic_weights(__fadd_rn(x, -fi), wx);
            cubic_weights(__fadd_rn(y, -fj), wy);
            cubic_acc<C> s;
            s.start();
#pragma unroll
            for (int r = 0; r < 4; r++) {
                s.start_row();
#pragma unroll
                for (int k = 0; k < 4; k++) {
                    uint32_t t[4];
                    float v[4];
                    tap16<C>(in, g.in_w, g.in_h, i - 1 + k, j - 1 + r, bg, t);
#pragma unroll
                    for (int c = 0; c < C; c++)
                        v[c] = (float)t[c];
                    s.tap(v, wx[k], r == 0 && k == 0);
                }
                s.end_row(wy[r]);
            }
#pragma unroll
            for (int c = 0; c < C; c++) {
                const int q = __float2int_rd(__fadd_rn(s.value(c, 65535.0f), 0.5f));
                res[c] = (uint32_t)(q < 0 ? 0 : (q > 65535 ? 65535 : q));
            }
        }
    }
    uint16_t *o = out + ((size_t)v * g.out_w + u) * C;
#pragma unroll
    for (int c = 0; c < C; c++)
        o[c] = (uint16_t)res[c];
}

template <int C>
static void launch_rot16(const uint16_t *in, uint16_t *out, const imgpu_rotate_geom *g, cudaStream_t s)
{
    dim3 block(32, 8), grid((g->out_w + 31) / 32, (g->out_h + 7) / 8);
    switch (g->filter) {
    case 0: rotate16_kernel<C, 0><<<grid, block, 0, s>>>(in, out, *g); break;
    case 2: rotate16_kernel<C, 2><<<grid, block, 0, s>>>(in, out, *g); break;
    default: rotate16_kernel<C, 1><<<grid, block, 0, s>>>(in, out, *g); break;
    }
}

extern "C" cudaError_t imgpu_launch_rotate16(const uint16_t *d_in, uint16_t *d_out, const imgpu_rotate_geom *g,
                                             cudaStream_t stream)
{
    switch (g->channels) {
    case 1: launch_rot16<1>(d_in, d_out, g, stream); break;
    case 2: launch_rot16<2>(d_in, d_out, g, stream); break;
    case 3: launch_rot16<3>(d_in, d_out, g, stream); break;
    case 4: launch_rot16<4>(d_in, d_out, g, stream); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

/* Quarter turns at 16 bits: output pixel (u, v) copies input pixel per the q mapping of
 * turn_kernel, or the background outside the turned image. */
template <int C>
static __global__ void turn16_kernel(const uint16_t *in, int w, int h, int q, uint16_t *out, int ow, int oh, int ox,
                                     int oy, uint4 bgv)
{
    const int u = blockIdx.x * blockDim.x + threadIdx.x, v = blockIdx.y * blockDim.y + threadIdx.y;
    if (u >= ow || v >= oh)
        return;
    const uint32_t bg[4] = {bgv.x, bgv.y, bgv.z, bgv.w};
    const int ru = u - ox, rv = v - oy;
    int x, y;
    turn_source(q, w, h, ru, rv, &x, &y);
    uint32_t px[4];
    tap16<C>(in, w, h, x, y, bg, px); /* outside the turned image is outside the input */
    uint16_t *o = out + ((size_t)v * ow + u) * C;
#pragma unroll
    for (int c = 0; c < C; c++)
        o[c] = (uint16_t)px[c];
}

extern "C" cudaError_t imgpu_launch_turn16(const uint16_t *d_in, int w, int h, int channels, int q, uint16_t *d_out,
                                           int out_w, int out_h, int off_x, int off_y, const uint8_t background[4],
                                           cudaStream_t stream)
{
    const uint4 bg = make_uint4(background[0] * 257u, background[1] * 257u, background[2] * 257u,
                                background[3] * 257u);
    dim3 block(32, 8), grid((out_w + 31) / 32, (out_h + 7) / 8);
    q &= 3;
    return by_channels(channels, [&](auto c) {
        turn16_kernel<decltype(c)::value><<<grid, block, 0, stream>>>(d_in, w, h, q, d_out, out_w, out_h, off_x, off_y, bg);
    });
}

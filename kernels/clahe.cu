/* clahe.cu — CLAHE on the GPU (OpenCV createCLAHE semantics), held bit for bit to the CPU
 * reference src/cpu/clahe.c, which states the rules. Three launches:
 *  1. tile histograms: blocks take a segment of one tile of the reflect-101 padded image and
 *     count it in shared memory (8-bit: warp-private 32-bit sub-histograms; 16-bit: 65536
 *     16-bit counters packed two per word, at most 65535 pixels per block so none can carry
 *     into its neighbour), then add the non-zero bins to the tile's global histogram;
 *  2. tile LUTs: one block per tile (a batched scan): clip at clip_limit, spread the excess
 *     evenly, the remainder one by one to bins 0, step, 2 step, ...; inclusive scan; the LUT
 *     entry lrintf((float)cdf * lut_scale), saturated;
 *  3. apply: every pixel blends the four nearest tiles' LUTs bilinearly in the CPU's float
 *     order, each operation rounded on its own (__fmul_rn / __fadd_rn: no FMA contraction).
 * Luminance mode computes Y (and Cb, Cr) of BT.601 on the fly in passes 1 and 3. */
#include "kernels.h"
#include "per_device.cuh"
#include "scan.cuh"
#include "tuning.h"
#include "ycc_depth.cuh"

static_assert(IMGPU_CLAHE16_PIXELS <= 65535, "a packed 16-bit counter must not overflow");

/* OpenCV borderInterpolate(BORDER_REFLECT_101), the CPU's loop (several bounces for tiny
 * images under a large grid). */
__device__ __forceinline__ int reflect101(int p, int len)
{
    if (len == 1)
        return 0;
    while (p < 0 || p >= len)
        p = p < 0 ? -p : 2 * (len - 1) - p;
    return p;
}

/* Calls f(sample index of the pixel) for the pixels [lo, hi) of tile `tile` (row-major inside
 * the tile), thread-strided; the division happens once per thread. */
template <typename F>
__device__ __forceinline__ void for_tile_pixels(const imgpu_clahe_kgeom &g, int tile, int lo, int hi, F f)
{
    int q = lo + (int)threadIdx.x;
    if (q >= hi)
        return;
    const int x0 = (tile % g.tiles_x) * g.tile_w, y0 = (tile / g.tiles_x) * g.tile_h;
    int row = q / g.tile_w, col = q - row * g.tile_w;
    const int drow = (int)blockDim.x / g.tile_w, dcol = (int)blockDim.x - drow * g.tile_w;
    for (; q < hi; q += blockDim.x) {
        const int sx = reflect101(x0 + col, g.w), sy = reflect101(y0 + row, g.h);
        f((size_t)sy * g.w + sx);
        row += drow;
        col += dcol;
        if (col >= g.tile_w) {
            col -= g.tile_w;
            row++;
        }
    }
}

template <typename T, int C, bool LUMA>
__device__ __forceinline__ int sample_value(const T *img, size_t pix, int plane)
{
    const T *px = img + pix * C;
    if constexpr (LUMA)
        return imgpu__ycc_y<T>(px[0], px[1], px[2]);
    else
        return px[plane];
}

/* ---- 1. tile histograms -------------------------------------------------------------------- */

template <int C, bool LUMA>
static __global__ void __launch_bounds__(256) clahe_hist8(const uint8_t *img, imgpu_clahe_kgeom g, uint32_t *hist, int ppb)
{
    __shared__ uint32_t s[8][256];
    for (int i = threadIdx.x; i < 8 * 256; i += 256)
        (&s[0][0])[i] = 0;
    __syncthreads();
    const int tile = blockIdx.x, plane = blockIdx.z, area = g.tile_w * g.tile_h;
    const int lo = blockIdx.y * ppb, hi = min(area, lo + ppb);
    uint32_t *sw = s[threadIdx.x >> 5];
    for_tile_pixels(g, tile, lo, hi, [&](size_t pix) { atomicAdd(&sw[sample_value<uint8_t, C, LUMA>(img, pix, plane)], 1u); });
    __syncthreads();
    const int b = threadIdx.x;
    uint32_t sum = 0;
#pragma unroll
    for (int w = 0; w < 8; w++)
        sum += s[w][b];
    if (sum)
        atomicAdd(&hist[((size_t)plane * g.tiles_x * g.tiles_y + tile) * 256 + b], sum);
}

template <int C, bool LUMA>
static __global__ void __launch_bounds__(1024) clahe_hist16(const uint16_t *img, imgpu_clahe_kgeom g, uint32_t *hist, int ppb)
{
    extern __shared__ uint32_t s_packed16[]; /* 65536 16-bit counters */
    for (int i = threadIdx.x; i < 32768; i += blockDim.x)
        s_packed16[i] = 0;
    __syncthreads();
    const int tile = blockIdx.x, plane = blockIdx.z, area = g.tile_w * g.tile_h;
    const int lo = blockIdx.y * ppb, hi = min(area, lo + ppb);
    for_tile_pixels(g, tile, lo, hi, [&](size_t pix) {
        const int v = sample_value<uint16_t, C, LUMA>(img, pix, plane);
        atomicAdd(&s_packed16[v >> 1], 1u << ((v & 1) * 16));
    });
    __syncthreads();
    uint32_t *h = hist + ((size_t)plane * g.tiles_x * g.tiles_y + tile) * 65536;
    for (int i = threadIdx.x; i < 32768; i += blockDim.x) {
        const uint32_t w = s_packed16[i];
        if (w & 0xffffu)
            atomicAdd(&h[2 * i], w & 0xffffu);
        if (w >> 16)
            atomicAdd(&h[2 * i + 1], w >> 16);
    }
}

/* ---- 2. tile LUTs -------------------------------------------------------------------------- */

/* Thread t owns the R = BINS / B consecutive bins [t R, t R + R). Two reads of the histogram:
 * the first gives the excess (block total) and what the run keeps, so the run's total after
 * redistribution is known before the block scan; the second writes the LUT. */
template <typename T, int B>
static __global__ void __launch_bounds__(B) clahe_lut_kernel(const uint32_t *hist_all, imgpu_clahe_kgeom g, T *luts_all)
{
    constexpr int BINS = imgpu__depth<T>::LEVELS, R = BINS / B, MAXV = BINS - 1;
    __shared__ uint32_t s_scan[2 * B];
    __shared__ uint32_t s_excess;
    const size_t t = blockIdx.x + (size_t)blockIdx.y * gridDim.x;
    const uint32_t *hist = hist_all + t * BINS;
    T *lut = luts_all + t * BINS;
    const int i0 = threadIdx.x * R;
    const uint32_t lim = (uint32_t)g.clip_limit;
    if (threadIdx.x == 0)
        s_excess = 0;
    __syncthreads();
    uint32_t kept = 0, excess = 0;
#pragma unroll 8
    for (int r = 0; r < R; r++) {
        const uint32_t h = hist[i0 + r];
        if (lim && h > lim) {
            excess += h - lim;
            kept += lim;
        } else {
            kept += h;
        }
    }
    if (excess)
        atomicAdd(&s_excess, excess);
    __syncthreads();
    const uint32_t clipped = s_excess, batch = clipped / BINS, residual = clipped % BINS;
    const uint32_t step = residual ? ((uint32_t)BINS / residual > 1 ? (uint32_t)BINS / residual : 1u) : 1u;
    /* bins k * step, k < residual, get one more */
    uint32_t extra = 0;
    if (residual) {
        const uint32_t first_k = ((uint32_t)i0 + step - 1) / step;             /* first k with k step >= i0 */
        const uint32_t end_k = min(residual, ((uint32_t)i0 + R + step - 1) / step); /* k step < i0 + R */
        extra = end_k > first_k ? end_k - first_k : 0;
    }
    const uint32_t total = kept + (uint32_t)R * batch + extra;
    uint32_t sum = imgpu__block_scan<B>(IMGPU_SCAN_DEFAULT, total, s_scan) - total;
#pragma unroll 8
    for (int r = 0; r < R; r++) {
        const uint32_t i = (uint32_t)(i0 + r);
        uint32_t h = hist[i];
        if (lim)
            h = min(h, lim) + batch + (residual && i % step == 0 && i / step < residual ? 1u : 0u);
        sum += h;
        int v = __float2int_rn(__fmul_rn(__uint2float_rn(sum), g.lut_scale)); /* product rounded first */
        lut[i] = (T)(v < 0 ? 0 : v > MAXV ? MAXV : v);
    }
}

/* ---- 3. apply ------------------------------------------------------------------------------ */

template <typename T>
__device__ __forceinline__ int blend(const T *p1, const T *p2, size_t i1, size_t i2, float xa, float xa1, float ya,
                                     float ya1)
{
    const float top = __fadd_rn(__fmul_rn((float)__ldg(&p1[i1]), xa1), __fmul_rn((float)__ldg(&p1[i2]), xa));
    const float bot = __fadd_rn(__fmul_rn((float)__ldg(&p2[i1]), xa1), __fmul_rn((float)__ldg(&p2[i2]), xa));
    const int r = __float2int_rn(__fadd_rn(__fmul_rn(top, ya1), __fmul_rn(bot, ya)));
    return r < 0 ? 0 : r > imgpu__depth<T>::MAXV ? imgpu__depth<T>::MAXV : r;
}

template <typename T, int C, bool LUMA>
static __global__ void __launch_bounds__(IMGPU_CLAHE_APPLY_BX * IMGPU_CLAHE_APPLY_BY)
    clahe_apply_kernel(const T *in, T *out, const T *luts, imgpu_clahe_kgeom g)
{
    constexpr int BINS = imgpu__depth<T>::LEVELS;
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= g.w)
        return;
    for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < g.h; y += gridDim.y * blockDim.y) {
        const float tyf = __fsub_rn(__fmul_rn((float)y, g.inv_th), 0.5f);
        int ty1 = (int)floorf(tyf);
        const float ya = __fsub_rn(tyf, (float)ty1), ya1 = __fsub_rn(1.0f, ya);
        int ty2 = ty1 + 1;
        ty1 = max(ty1, 0);
        ty2 = min(ty2, g.tiles_y - 1);
        const float txf = __fsub_rn(__fmul_rn((float)x, g.inv_tw), 0.5f);
        int tx1 = (int)floorf(txf);
        const float xa = __fsub_rn(txf, (float)tx1), xa1 = __fsub_rn(1.0f, xa);
        int tx2 = tx1 + 1;
        tx1 = max(tx1, 0);
        tx2 = min(tx2, g.tiles_x - 1);
        const size_t plane_stride = (size_t)g.tiles_x * g.tiles_y * BINS;
        const T *p1 = luts + (size_t)ty1 * g.tiles_x * BINS, *p2 = luts + (size_t)ty2 * g.tiles_x * BINS;
        const size_t o = ((size_t)y * g.w + x) * C;
        T px[C];
#pragma unroll
        for (int k = 0; k < C; k++)
            px[k] = in[o + k];
        if constexpr (LUMA) {
            int yy, cb, cr, r, gg, b;
            imgpu__ycc_forward<T>(px[0], px[1], px[2], &yy, &cb, &cr);
            const int v = blend<T>(p1, p2, (size_t)tx1 * BINS + yy, (size_t)tx2 * BINS + yy, xa, xa1, ya, ya1);
            imgpu__ycc_inverse<T>(v, cb, cr, &r, &gg, &b);
            px[0] = (T)r;
            px[1] = (T)gg;
            px[2] = (T)b;
        } else {
            constexpr int COLOR = C >= 3 ? 3 : 1;
#pragma unroll
            for (int k = 0; k < COLOR; k++) {
                const int v = px[k];
                px[k] = (T)blend<T>(p1 + k * plane_stride, p2 + k * plane_stride, (size_t)tx1 * BINS + v,
                                    (size_t)tx2 * BINS + v, xa, xa1, ya, ya1);
            }
        }
#pragma unroll
        for (int k = 0; k < C; k++)
            out[o + k] = px[k];
    }
}

/* ---- launchers ----------------------------------------------------------------------------- */

static bool geom_ok(const imgpu_clahe_kgeom *g)
{
    return g && g->w > 0 && g->h > 0 && g->channels >= 1 && g->channels <= 4 && (g->depth == 8 || g->depth == 16) &&
           g->bins == (g->depth == 16 ? 65536 : 256) && g->tiles_x >= 1 && g->tiles_y >= 1 && g->tile_w >= 1 &&
           g->tile_h >= 1 && (g->planes == 1 || (g->planes == 3 && g->channels >= 3 && !g->luminance)) &&
           (!g->luminance || g->channels >= 3);
}

template <int C, bool LUMA>
static cudaError_t hist_launch(const void *img, const imgpu_clahe_kgeom &g, uint32_t *hist, cudaStream_t st)
{
    const int area = g.tile_w * g.tile_h, tiles = g.tiles_x * g.tiles_y;
    if (g.depth == 8) {
        int ppb = IMGPU_CLAHE8_PIXELS;
        if ((area + ppb - 1) / ppb > 65535)
            ppb = (area + 65534) / 65535;
        const dim3 grid(tiles, (area + ppb - 1) / ppb, g.planes);
        clahe_hist8<C, LUMA><<<grid, 256, 0, st>>>(static_cast<const uint8_t *>(img), g, hist, ppb);
    } else {
        const size_t smem = 32768 * 4;
        static imgpu__smem_optin optin;
        const cudaError_t e = optin.ensure((const void *)clahe_hist16<C, LUMA>, (int)smem);
        if (e != cudaSuccess)
            return e;
        const int ppb = IMGPU_CLAHE16_PIXELS;
        const dim3 grid(tiles, (area + ppb - 1) / ppb, g.planes);
        clahe_hist16<C, LUMA><<<grid, 1024, smem, st>>>(static_cast<const uint16_t *>(img), g, hist, ppb);
    }
    return cudaGetLastError();
}

extern "C" cudaError_t imgpu_launch_clahe_hist(const void *d_img, const imgpu_clahe_kgeom *g, uint32_t *d_hist,
                                               cudaStream_t stream)
{
    if (!geom_ok(g))
        return cudaErrorInvalidValue;
    switch (g->channels) {
    case 1: return hist_launch<1, false>(d_img, *g, d_hist, stream);
    case 2: return hist_launch<2, false>(d_img, *g, d_hist, stream);
    case 3: return g->luminance ? hist_launch<3, true>(d_img, *g, d_hist, stream) : hist_launch<3, false>(d_img, *g, d_hist, stream);
    default: return g->luminance ? hist_launch<4, true>(d_img, *g, d_hist, stream) : hist_launch<4, false>(d_img, *g, d_hist, stream);
    }
}

extern "C" cudaError_t imgpu_launch_clahe_lut(const uint32_t *d_hist, const imgpu_clahe_kgeom *g, void *d_luts,
                                              cudaStream_t stream)
{
    if (!geom_ok(g))
        return cudaErrorInvalidValue;
    const dim3 grid(g->tiles_x * g->tiles_y, g->planes);
    if (g->depth == 8)
        clahe_lut_kernel<uint8_t, 256><<<grid, 256, 0, stream>>>(d_hist, *g, static_cast<uint8_t *>(d_luts));
    else
        clahe_lut_kernel<uint16_t, 1024><<<grid, 1024, 0, stream>>>(d_hist, *g, static_cast<uint16_t *>(d_luts));
    return cudaGetLastError();
}

template <typename T, int C, bool LUMA>
static cudaError_t apply_launch(const void *in, void *out, const void *luts, const imgpu_clahe_kgeom &g, cudaStream_t st)
{
    const dim3 block(IMGPU_CLAHE_APPLY_BX, IMGPU_CLAHE_APPLY_BY);
    const dim3 grid((g.w + block.x - 1) / block.x, min((g.h + block.y - 1) / block.y, 65535u));
    clahe_apply_kernel<T, C, LUMA><<<grid, block, 0, st>>>(static_cast<const T *>(in), static_cast<T *>(out),
                                                            static_cast<const T *>(luts), g);
    return cudaGetLastError();
}

template <typename T>
static cudaError_t apply_depth(const void *in, void *out, const void *luts, const imgpu_clahe_kgeom &g, cudaStream_t st)
{
    switch (g.channels) {
    case 1: return apply_launch<T, 1, false>(in, out, luts, g, st);
    case 2: return apply_launch<T, 2, false>(in, out, luts, g, st);
    case 3: return g.luminance ? apply_launch<T, 3, true>(in, out, luts, g, st) : apply_launch<T, 3, false>(in, out, luts, g, st);
    default: return g.luminance ? apply_launch<T, 4, true>(in, out, luts, g, st) : apply_launch<T, 4, false>(in, out, luts, g, st);
    }
}

extern "C" cudaError_t imgpu_launch_clahe_apply(const void *d_in, void *d_out, const void *d_luts,
                                                const imgpu_clahe_kgeom *g, cudaStream_t stream)
{
    if (!geom_ok(g))
        return cudaErrorInvalidValue;
    return g->depth == 8 ? apply_depth<uint8_t>(d_in, d_out, d_luts, *g, stream)
                         : apply_depth<uint16_t>(d_in, d_out, d_luts, *g, stream);
}

/* equalize.cu — histogram equalization: the LUT from a histogram (a block-wide scan), the
 * LUT apply (16 pixels per thread, 16-byte loads and stores; the luminance mode converts
 * RGB -> YCbCr, maps Y and converts back in the same pass), and the fused single-launch
 * versions that do histogram, LUT and apply in one cooperative kernel: on chip (the image is
 * read from memory once and kept in shared memory across the grid barrier; what does not fit
 * spills and is read twice), or two-pass (read twice) where the device lacks the shared memory.
 *
 * The LUT is OpenCV's equalizeHist, bit for bit (src/core/op.h states it; src/cpu/equalize.c is
 * the reference): i0 = first non-empty bin -> 0; scale = 255.0f / (N - h[i0]) in single
 * precision (IEEE division: this file must not be built with --use_fast_math); bin i > i0
 * -> round-half-even(float(cdf[i] - h[i0]) * scale); N == h[i0] (constant image) -> identity.
 * __fmul_rn keeps nvcc from contracting anything into an FMA the CPU would not do. */
#include <cooperative_groups.h>
#include <stdlib.h>

#include "kernels.h"
#include "per_device.cuh"
#include "tuning.h"
#include "hist.cuh"
#include "scan.cuh"

namespace cg = cooperative_groups;

/* Builds lut[0..255] from hist[0..255] (a global pointer) with IMGPU_CDF_BINS threads. */
static __device__ __forceinline__ void build_lut(imgpu_scan_variant v, const uint32_t *hist, uint64_t npix,
                                                 uint8_t *lut, uint8_t *constant, uint32_t *s_scan, int *s_i0)
{
    const int t = threadIdx.x;
    uint32_t h = __ldcg(hist + t); /* L2: the bins were just written by other blocks' atomics */
    if (t == 0)
        *s_i0 = 256;
    __syncthreads();
    if (h)
        atomicMin(s_i0, t);
    uint32_t cdf = imgpu__block_scan<IMGPU_CDF_BINS>(v, h, s_scan); /* ends with a barrier */
    const int i0 = *s_i0;
    int out;
    if (i0 >= 256) {
        out = t; /* empty histogram (no pixels): identity */
    } else {
        const uint32_t h0 = __ldcg(hist + i0); /* cdf[i0] == h[i0]: every bin before is empty */
        const uint64_t rest = npix - h0;
        if (rest == 0) {
            out = t; /* constant image: returned unchanged */
        } else if (t <= i0) {
            out = 0;
        } else {
            const float scale = 255.0f / (float)rest;
            out = __float2int_rn(__fmul_rn((float)(cdf - h0), scale));
            out = out > 255 ? 255 : out;
        }
    }
    lut[t] = (uint8_t)out;
    if (constant && t == 0) /* one value (or none) in the whole image */
        *constant = (uint8_t)(i0 >= 256 || npix == __ldcg(hist + i0));
    __syncthreads();
}

static __global__ void __launch_bounds__(IMGPU_CDF_BINS)
equalize_lut_kernel(imgpu_scan_variant v, const uint32_t *hist, uint64_t npix, uint8_t *lut)
{
    __shared__ uint32_t s_scan[2 * IMGPU_CDF_BINS];
    __shared__ int s_i0;
    build_lut(v, hist + blockIdx.x * 256, npix, lut + blockIdx.x * 256,
              blockIdx.x == 0 ? lut + gridDim.x * 256 : NULL, s_scan, &s_i0);
}

extern "C" cudaError_t imgpu_launch_equalize_lut(imgpu_scan_variant v, const uint32_t *d_hist, int planes,
                                                 uint64_t npix, uint8_t *d_lut, cudaStream_t stream)
{
    equalize_lut_kernel<<<planes, IMGPU_CDF_BINS, 0, stream>>>(v, d_hist, npix, d_lut);
    return cudaGetLastError();
}

/* ---- LUT apply ------------------------------------------------------------------------------ */

static __device__ __forceinline__ bool is_alpha(int C, int ch) { return (C == 2 && ch == 1) || (C == 4 && ch == 3); }

/* Map one chunk of 16 pixels (u[] in, o[] out) through the shared LUTs. */
template <int C, bool LUMA>
static __device__ __forceinline__ void map_chunk(const uint32_t (&u)[4 * C], uint32_t (&o)[4 * C], const uint8_t *s_lut)
{
#pragma unroll
    for (int w = 0; w < 4 * C; w++)
        o[w] = 0;
    if (!LUMA) {
#pragma unroll
        for (int k = 0; k < 16 * C; k++) {
            const int ch = k % C;
            uint32_t b = IMGPU_CHUNK_BYTE(u, k);
            if (!is_alpha(C, ch))
                b = s_lut[(C >= 3 ? ch : 0) * 256 + b];
            o[k >> 2] |= b << ((k & 3) * 8);
        }
    } else {
#pragma unroll
        for (int p = 0; p < 16; p++) {
            int y, cb, cr, r, g, b;
            imgpu__rgb_to_ycbcr(IMGPU_CHUNK_BYTE(u, p * C), IMGPU_CHUNK_BYTE(u, p * C + 1), IMGPU_CHUNK_BYTE(u, p * C + 2),
                                &y, &cb, &cr);
            imgpu__ycbcr_to_rgb(s_lut[y], cb, cr, &r, &g, &b);
            const int k = p * C;
            o[k >> 2] |= (uint32_t)r << ((k & 3) * 8);
            o[(k + 1) >> 2] |= (uint32_t)g << (((k + 1) & 3) * 8);
            o[(k + 2) >> 2] |= (uint32_t)b << (((k + 2) & 3) * 8);
            if (C == 4)
                o[(k + 3) >> 2] |= IMGPU_CHUNK_BYTE(u, k + 3) << (((k + 3) & 3) * 8);
        }
    }
}

template <int C, bool LUMA>
static __device__ __forceinline__ void map_pixel(const uint8_t *in, uint8_t *out, const uint8_t *s_lut)
{
    if (LUMA) {
        int y, cb, cr, r, g, b;
        imgpu__rgb_to_ycbcr(in[0], in[1], in[2], &y, &cb, &cr);
        imgpu__ycbcr_to_rgb(s_lut[y], cb, cr, &r, &g, &b);
        out[0] = (uint8_t)r;
        out[1] = (uint8_t)g;
        out[2] = (uint8_t)b;
        if (C == 4)
            out[3] = in[3];
    } else {
#pragma unroll
        for (int ch = 0; ch < C; ch++)
            out[ch] = is_alpha(C, ch) ? in[ch] : s_lut[(C >= 3 ? ch : 0) * 256 + in[ch]];
    }
}

/* Maps one chunk and stores it with streaming stores (the output is not read again). */
template <int C, bool LUMA>
static __device__ __forceinline__ void map_store(const uint32_t (&u)[4 * C], uint4 *q, const uint8_t *s_lut,
                                                 bool passthrough)
{
    uint32_t o[4 * C];
    if (passthrough) {
#pragma unroll
        for (int w = 0; w < 4 * C; w++)
            o[w] = u[w];
    } else {
        map_chunk<C, LUMA>(u, o, s_lut);
    }
#pragma unroll
    for (int k = 0; k < C; k++)
        __stcs(q + k, make_uint4(o[4 * k], o[4 * k + 1], o[4 * k + 2], o[4 * k + 3]));
}

/* Grid-stride apply over npix pixels with the LUTs already in shared memory. */
template <int C, bool LUMA>
static __device__ __forceinline__ void apply_range(const uint8_t *in, uint8_t *out, size_t npix, const uint8_t *s_lut)
{
    /* luminance mode on an image whose Y is constant: returned unchanged, without the lossy
     * RGB -> YCbCr -> RGB round trip (the CPU reference's rule; src/cpu/equalize.c) */
    const bool passthrough = LUMA && s_lut[256];
    const size_t nchunks = npix / 16;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (size_t i = first; i < nchunks; i += stride) {
        uint32_t u[4 * C];
        imgpu__load_chunk<C>(in + i * 16 * C, u);
        /* streaming stores: keep the L2 for the input the fused kernel re-reads */
        map_store<C, LUMA>(u, reinterpret_cast<uint4 *>(out + i * 16 * C), s_lut, passthrough);
    }
    const size_t tail = npix - nchunks * 16;
    if (first < tail) {
        size_t p = (nchunks * 16 + first) * C;
        if (passthrough)
            for (int ch = 0; ch < C; ch++)
                out[p + ch] = in[p + ch];
        else
            map_pixel<C, LUMA>(in + p, out + p, s_lut);
    }
}

/* LUT planes an equalize needs: luminance 1 (Y); per-channel 1 (gray) or 3 (R, G, B). */
static __host__ __device__ constexpr int lut_planes(int C, bool luma) { return luma ? 1 : (C >= 3 ? 3 : 1); }

template <int C, bool LUMA>
static __global__ void __launch_bounds__(IMGPU_LUT_BLOCK)
apply_lut_kernel(const uint8_t *in, uint8_t *out, size_t npix, const uint8_t *lut)
{
    constexpr int P = lut_planes(C, LUMA);
    __shared__ uint8_t s_lut[P * 256 + 1];
    for (int i = threadIdx.x; i < P * 256 + 1; i += blockDim.x)
        s_lut[i] = lut[i];
    __syncthreads();
    apply_range<C, LUMA>(in, out, npix, s_lut);
}

template <int C, bool LUMA>
static void launch_apply(const uint8_t *in, uint8_t *out, size_t npix, const uint8_t *lut, int grid, cudaStream_t s)
{
    size_t need = (npix / 16 + IMGPU_LUT_BLOCK) / IMGPU_LUT_BLOCK;
    if (grid <= 0)
        grid = imgpu__sm_count() * IMGPU_LUT_BLOCKS_PER_SM;
    if ((size_t)grid > need)
        grid = (int)need;
    apply_lut_kernel<C, LUMA><<<grid, IMGPU_LUT_BLOCK, 0, s>>>(in, out, npix, lut);
}

extern "C" cudaError_t imgpu_launch_apply_lut(const uint8_t *d_in, uint8_t *d_out, size_t npix, int channels,
                                              int luminance, const uint8_t *d_lut, int grid, cudaStream_t stream)
{
    if (npix == 0)
        return cudaSuccess;
    const bool luma = luminance && channels >= 3;
    switch (channels) {
    case 1: launch_apply<1, false>(d_in, d_out, npix, d_lut, grid, stream); break;
    case 2: launch_apply<2, false>(d_in, d_out, npix, d_lut, grid, stream); break;
    case 3: luma ? launch_apply<3, true>(d_in, d_out, npix, d_lut, grid, stream)
                 : launch_apply<3, false>(d_in, d_out, npix, d_lut, grid, stream); break;
    case 4: luma ? launch_apply<4, true>(d_in, d_out, npix, d_lut, grid, stream)
                 : launch_apply<4, false>(d_in, d_out, npix, d_lut, grid, stream); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

/* ---- fused: one cooperative launch ---------------------------------------------------------- */

/* Per-channel equalize of 2- to 4-channel images: the color channels (alpha skipped) into a
 * block-private histogram (gray and luma use the lane-private one, hist.cuh). */
template <int C>
static __device__ __forceinline__ void eq_hist_chunk(const uint32_t (&u)[4 * C], uint32_t *hist)
{
    constexpr int CC = C >= 3 ? 3 : 1;
#pragma unroll
    for (int ch = 0; ch < CC; ch++) {
        imgpu__run_adder<true> a;
        a.start(IMGPU_CHUNK_BYTE(u, ch));
#pragma unroll
        for (int k = 1; k < 16; k++)
            a.add(hist + ch * 256, IMGPU_CHUNK_BYTE(u, k * C + ch));
        a.finish(hist + ch * 256);
    }
}

/* What the two fused kernels share: the block's privatized histogram (luma: lane-private
 * sub-histograms, hist.cuh; gray and per-channel: block-private), the parity halves of the
 * global histogram, the grid barrier and the per-block LUT build. */
template <int C, bool LUMA>
struct fused_shared {
    static constexpr int P = lut_planes(C, LUMA);
    static constexpr int HIST_WORDS = LUMA ? 256 * 32 : P * 256;
    uint32_t hist[HIST_WORDS];
    uint32_t scan[2 * IMGPU_CDF_BINS];
    uint8_t lut[P * 256 + 1]; /* + the constant-image flag of plane 0 */
    int i0;
};

template <int C, bool LUMA>
static __device__ __forceinline__ void fused_hist_chunk(const uint32_t (&u)[4 * C], uint32_t *s_hist)
{
    if constexpr (LUMA)
        imgpu__hist_lanes_luma<C>(u, s_hist, threadIdx.x & 31u);
    else if constexpr (C == 1)
        imgpu__hist_gray_chunk(u, s_hist);
    else
        eq_hist_chunk<C>(u, s_hist);
}

template <int C, bool LUMA>
static __device__ __forceinline__ void fused_hist_pixel(const uint8_t *p, uint32_t *s_hist)
{
    if (LUMA)
        atomicAdd(&s_hist[IMGPU_LANE_SLOT(imgpu__rgb_to_y(p[0], p[1], p[2]), threadIdx.x & 31u)], 1u);
    else
        for (int ch = 0; ch < (C >= 3 ? 3 : 1); ch++)
            atomicAdd(&s_hist[ch * 256 + p[ch]], 1u);
}

/* Clears the block's histogram; block 0 zeroes the other parity half for the next run.
 * Halves sit at fixed offsets (3 planes each) whatever P is, and a run zeroes ALL of the other
 * half: runs of different modes then never see each other's stale counts. */
template <int C, bool LUMA>
static __device__ __forceinline__ void fused_begin(fused_shared<C, LUMA> &sh, uint32_t *g_hist2, int parity)
{
    uint32_t *g_next = g_hist2 + (parity ^ 1) * 3 * 256;
    for (int i = threadIdx.x; i < fused_shared<C, LUMA>::HIST_WORDS; i += blockDim.x)
        sh.hist[i] = 0;
    if (blockIdx.x == 0) /* the previous run used g_next and has finished (stream order) */
        for (int i = threadIdx.x; i < 3 * 256; i += blockDim.x)
            g_next[i] = 0;
    __syncthreads();
}

/* Merges the block's histogram of P planes (LANES: lane-private sub-histograms, hist.cuh; else
 * one count per bin) into the run's parity half, one atomic per non-empty bin, waits for every
 * block's merge, then builds the LUTs (and plane 0's constant-image flag at lut[P * 256]) in
 * this block: 256 bins are cheaper to scan than to broadcast. */
template <int P, bool LANES>
static __device__ __forceinline__ void merge_and_luts(const uint32_t *s_hist, uint32_t *g_hist2, int parity,
                                                      size_t npix, uint8_t *lut, uint32_t *s_scan, int *s_i0)
{
    uint32_t *g_hist = g_hist2 + parity * 3 * 256;
    __syncthreads();
    for (int b = threadIdx.x; b < P * 256; b += blockDim.x) {
        const uint32_t n = LANES ? imgpu__lanes_sum(s_hist, (uint32_t)b) : s_hist[b];
        if (n)
            atomicAdd(&g_hist[b], n);
    }
    cg::this_grid().sync();
    for (int p = 0; p < P; p++)
        build_lut(IMGPU_SCAN_DEFAULT, g_hist + p * 256, npix, lut + p * 256, p == 0 ? lut + P * 256 : NULL, s_scan,
                  s_i0);
}

template <int C, bool LUMA>
static __device__ __forceinline__ void fused_luts(fused_shared<C, LUMA> &sh, uint32_t *g_hist2, int parity,
                                                  size_t npix)
{
    merge_and_luts<fused_shared<C, LUMA>::P, LUMA>(sh.hist, g_hist2, parity, npix, sh.lut, sh.scan, &sh.i0);
}

/* Two-pass fused kernel: any image size. The histogram pass streams the image from memory,
 * the apply pass reads it again (grid-stride, the same chunks per block, so L2 hits while the
 * image fits the L2; at 8K gray it does not, and the second read comes from HBM). */
template <int C, bool LUMA>
static __global__ void __launch_bounds__(IMGPU_CDF_BINS)
equalize_fused_kernel(const uint8_t *in, uint8_t *out, size_t npix, uint32_t *g_hist2, int parity)
{
    __shared__ fused_shared<C, LUMA> sh;
    fused_begin(sh, g_hist2, parity);

    const size_t nchunks = npix / 16;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (size_t i = first; i < nchunks; i += 2 * stride) { /* two loads in flight */
        uint32_t u[4 * C], v[4 * C];
        const bool second = i + stride < nchunks;
        imgpu__load_chunk<C>(in + i * 16 * C, u);
        if (second)
            imgpu__load_chunk<C>(in + (i + stride) * 16 * C, v);
        fused_hist_chunk<C, LUMA>(u, sh.hist);
        if (second)
            fused_hist_chunk<C, LUMA>(v, sh.hist);
    }
    const size_t tail = npix - nchunks * 16;
    if (first < tail)
        fused_hist_pixel<C, LUMA>(in + (nchunks * 16 + first) * C, sh.hist);

    fused_luts(sh, g_hist2, parity, npix);
    apply_range<C, LUMA>(in, out, npix, sh.lut);
}

/* Two-pass fused kernel for per-channel equalize of 2-4 channels with lane-private
 * sub-histograms (hist.cuh's layout, one per lane, P planes x 32 KiB of dynamic shared memory:
 * RGB 96 KiB, 2 blocks per SM), where the block-private one serializes on the equal colours of
 * neighbouring pixels (the RGB histogram alone: 8K photo 35 us lane-private, 85 block-private,
 * H200). The colour channels only; alpha is neither counted nor mapped. */
template <int C>
struct lanes_eq_shared {
    static constexpr int P = lut_planes(C, false);
    uint32_t scan[2 * IMGPU_CDF_BINS];
    uint8_t lut[P * 256 + 1];
    int i0;
};

template <int C>
static __global__ void __launch_bounds__(IMGPU_CDF_BINS)
equalize_lanes_kernel(const uint8_t *in, uint8_t *out, size_t npix, uint32_t *g_hist2, int parity)
{
    constexpr int P = lut_planes(C, false), CC = C >= 3 ? 3 : 1;
    extern __shared__ uint32_t s_lanes[]; /* P * 256 * 32 */
    __shared__ lanes_eq_shared<C> sh;
    uint32_t *g_next = g_hist2 + (parity ^ 1) * 3 * 256;
    for (int i = threadIdx.x; i < P * 256 * 32; i += blockDim.x)
        s_lanes[i] = 0;
    if (blockIdx.x == 0) /* as fused_begin: the previous run used g_next and has finished */
        for (int i = threadIdx.x; i < 3 * 256; i += blockDim.x)
            g_next[i] = 0;
    __syncthreads();

    const uint32_t lane = threadIdx.x & 31u;
    imgpu__for_each_chunk<C>(in, npix, [&](const uint32_t (&u)[4 * C]) {
        imgpu__hist_lanes_channels<C, CC>(u, s_lanes, lane);
    });
    const size_t nchunks = npix / 16, tail = npix - nchunks * 16;
    const size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (first < tail) {
        const uint8_t *p = in + (nchunks * 16 + first) * C;
        for (int ch = 0; ch < CC; ch++)
            atomicAdd(&s_lanes[IMGPU_LANE_SLOT(ch * 256 + p[ch], lane)], 1u);
    }

    merge_and_luts<P, true>(s_lanes, g_hist2, parity, npix, sh.lut, sh.scan, &sh.i0);
    apply_range<C, false>(in, out, npix, sh.lut);
}

template <int C>
static __device__ __forceinline__ void unpack(const uint4 *w, uint32_t (&u)[4 * C])
{
#pragma unroll
    for (int k = 0; k < C; k++) {
        u[4 * k + 0] = w[k].x;
        u[4 * k + 1] = w[k].y;
        u[4 * k + 2] = w[k].z;
        u[4 * k + 3] = w[k].w;
    }
}

/* On-chip fused kernel: the image is read from memory ONCE. Every block owns one contiguous
 * run of chunks and keeps up to keep_cap of them in (dynamic) shared memory across the grid
 * barrier: 2 blocks x ~110 KiB per SM, so an H100 holds ~28 MiB of image on chip. Chunks
 * beyond that (the spill) are read last in the histogram pass, with ordinary caching loads,
 * and first in the apply pass, so their second read hits the L2 while the spill fits there;
 * the kept chunks are loaded evict-first, so they do not push the spill out of it. */
template <int C, bool LUMA>
static __global__ void __launch_bounds__(IMGPU_CDF_BINS, IMGPU_EQ_ONCHIP_BLOCKS_PER_SM)
equalize_onchip_kernel(const uint8_t *in, uint8_t *out, size_t npix, uint32_t *g_hist2, int parity,
                       size_t per_block, size_t keep_cap)
{
    extern __shared__ uint4 s_keep[]; /* keep_cap chunks of C uint4 */
    __shared__ fused_shared<C, LUMA> sh;
    constexpr int U = C >= 4 ? 1 : 4 / C; /* chunks in flight per thread: 48..64 bytes */
    fused_begin(sh, g_hist2, parity);

    const size_t nchunks = npix / 16;
    const size_t lo = (size_t)blockIdx.x * per_block;
    const size_t hi = lo + per_block < nchunks ? lo + per_block : nchunks;
    const size_t cnt = hi > lo ? hi - lo : 0;
    const size_t kept = cnt < keep_cap ? cnt : keep_cap;
    const uint4 *src = reinterpret_cast<const uint4 *>(in) + lo * C;
    uint4 *dst = reinterpret_cast<uint4 *>(out) + lo * C;
    const size_t t = threadIdx.x, nt = blockDim.x;

    /* 1a. the kept chunks: evict-first loads (U in flight), into shared memory and the histogram */
    for (size_t j0 = t; j0 < kept; j0 += U * nt) {
        uint4 w[U][C];
#pragma unroll
        for (int r = 0; r < U; r++)
            if (j0 + r * nt < kept)
#pragma unroll
                for (int k = 0; k < C; k++)
                    w[r][k] = __ldcs(src + (j0 + r * nt) * C + k);
#pragma unroll
        for (int r = 0; r < U; r++)
            if (j0 + r * nt < kept) {
                uint32_t u[4 * C];
#pragma unroll
                for (int k = 0; k < C; k++)
                    s_keep[(j0 + r * nt) * C + k] = w[r][k];
                unpack<C>(w[r], u);
                fused_hist_chunk<C, LUMA>(u, sh.hist);
            }
    }
    /* 1b. the spill: caching loads, so that the apply pass finds them in the L2 */
    for (size_t j0 = kept + t; j0 < cnt; j0 += U * nt) {
        uint4 w[U][C];
#pragma unroll
        for (int r = 0; r < U; r++)
            if (j0 + r * nt < cnt)
#pragma unroll
                for (int k = 0; k < C; k++)
                    w[r][k] = src[(j0 + r * nt) * C + k];
#pragma unroll
        for (int r = 0; r < U; r++)
            if (j0 + r * nt < cnt) {
                uint32_t u[4 * C];
                unpack<C>(w[r], u);
                fused_hist_chunk<C, LUMA>(u, sh.hist);
            }
    }
    const size_t tail = npix - nchunks * 16; /* < 16 pixels, the last block's */
    const bool has_tail = blockIdx.x == gridDim.x - 1 && t < tail;
    if (has_tail)
        fused_hist_pixel<C, LUMA>(in + (nchunks * 16 + t) * C, sh.hist);

    fused_luts(sh, g_hist2, parity, npix);

    /* luminance mode on an image whose Y is constant: returned unchanged (src/cpu/equalize.c) */
    const bool passthrough = LUMA && sh.lut[sh.P * 256];
    /* 3a. the spill first, while it is the most recently read data in the L2 */
    for (size_t j = kept + t; j < cnt; j += nt) {
        uint4 w[C];
        uint32_t u[4 * C];
#pragma unroll
        for (int k = 0; k < C; k++)
            w[k] = __ldcs(src + j * C + k);
        unpack<C>(w, u);
        map_store<C, LUMA>(u, dst + j * C, sh.lut, passthrough);
    }
    /* 3b. the kept chunks, from shared memory */
    for (size_t j = t; j < kept; j += nt) {
        uint32_t u[4 * C];
        unpack<C>(s_keep + j * C, u);
        map_store<C, LUMA>(u, dst + j * C, sh.lut, passthrough);
    }
    if (has_tail) {
        const size_t p = (nchunks * 16 + t) * C;
        if (passthrough)
            for (int ch = 0; ch < C; ch++)
                out[p + ch] = in[p + ch];
        else
            map_pixel<C, LUMA>(in + p, out + p, sh.lut);
    }
}

static const imgpu_tuning k_default_tuning = IMGPU_TUNING_DEFAULTS;

/* The fused kernels' launch shapes on this device, computed once per instantiation and device
 * (per_device.cuh: the opt-in and occupancy belong to the device). Two-pass: max_grid
 * co-resident blocks (a cooperative grid must not exceed it), per_sm of them on each SM (the
 * cap of a tuned blocks-per-SM count). On-chip: the dynamic shared memory that leaves
 * IMGPU_EQ_ONCHIP_BLOCKS_PER_SM blocks resident per SM, and the grid co-resident with it;
 * oc_ok = 0 when the device cannot. */
struct fused_shape {
    int max_grid, per_sm, sms;
    int oc_ok, oc_grid_max;
    size_t oc_dyn, oc_keep_cap;
    int lanes_grid_max; /* per-channel lane-private kernel: co-resident blocks; 0: it cannot run */
};

/* The lane-private per-channel kernel (2-4 channels): its shared-memory opt-in and grid. */
template <int C, bool LUMA>
static cudaError_t lanes_setup(fused_shape &s, int dev)
{
    if constexpr (LUMA || C == 1) {
        (void)s;
        (void)dev;
        return cudaSuccess;
    } else {
        const int bytes = lut_planes(C, false) * 256 * 32 * 4;
        int optin = 0, per_sm = 0;
        const void *fn = (const void *)equalize_lanes_kernel<C>;
        cudaFuncAttributes fa;
        cudaError_t e;
        if ((e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)) != cudaSuccess ||
            (e = cudaFuncGetAttributes(&fa, fn)) != cudaSuccess)
            return e;
        if ((size_t)bytes + fa.sharedSizeBytes > (size_t)optin)
            return cudaSuccess;
        if ((e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)) != cudaSuccess ||
            (e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, IMGPU_CDF_BINS, (size_t)bytes)) !=
                cudaSuccess)
            return e;
        s.lanes_grid_max = per_sm * s.sms;
        return cudaSuccess;
    }
}

template <int C, bool LUMA>
static cudaError_t onchip_setup(fused_shape &s, int dev)
{
    int per_sm_smem = 0, optin = 0, reserved = 0, per_sm = 0;
    cudaFuncAttributes fa;
    const void *fn = (const void *)equalize_onchip_kernel<C, LUMA>;
    cudaError_t e;
    if ((e = cudaDeviceGetAttribute(&per_sm_smem, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev)) != cudaSuccess ||
        (e = cudaFuncGetAttributes(&fa, fn)) != cudaSuccess)
        return e;
    long dyn = (long)per_sm_smem / IMGPU_EQ_ONCHIP_BLOCKS_PER_SM - reserved - (long)fa.sharedSizeBytes;
    if (dyn > (long)optin - (long)fa.sharedSizeBytes)
        dyn = (long)optin - (long)fa.sharedSizeBytes;
    dyn -= dyn % (16 * C);
    if (dyn < 16L * C * IMGPU_CDF_BINS)
        return cudaSuccess; /* too little shared memory to be worth it: oc_ok stays 0 */
    if ((e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dyn)) != cudaSuccess)
        return e;
    for (;;) { /* the per-SM arithmetic above is the documented one; occupancy has the last word */
        if ((e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, IMGPU_CDF_BINS, (size_t)dyn)) != cudaSuccess)
            return e;
        if (per_sm >= IMGPU_EQ_ONCHIP_BLOCKS_PER_SM || dyn <= 16L * C * IMGPU_CDF_BINS + 1024)
            break;
        dyn -= 1024 - 1024 % (16 * C);
    }
    if (per_sm < 1)
        return cudaSuccess;
    s.oc_dyn = (size_t)dyn;
    s.oc_keep_cap = (size_t)dyn / (16 * C);
    s.oc_grid_max = per_sm * s.sms;
    s.oc_ok = 1;
    return cudaSuccess;
}

template <int C, bool LUMA>
static cudaError_t fused_setup(fused_shape &s, int dev)
{
    int per_sm = 0;
    cudaError_t e;
    if ((e = cudaDeviceGetAttribute(&s.sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess ||
        (e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, equalize_fused_kernel<C, LUMA>, IMGPU_CDF_BINS,
                                                           0)) != cudaSuccess)
        return e;
    s.max_grid = per_sm * s.sms;
    s.per_sm = per_sm;
    if (onchip_setup<C, LUMA>(s, dev) != cudaSuccess) {
        cudaGetLastError(); /* the on-chip kernel stays off (oc_ok = 0): the two-pass one runs */
        s.oc_ok = 0;
    }
    if (lanes_setup<C, LUMA>(s, dev) != cudaSuccess) {
        cudaGetLastError(); /* the lane-private kernel stays off */
        s.lanes_grid_max = 0;
    }
    return cudaSuccess;
}

template <int C, bool LUMA>
static cudaError_t launch_fused(const uint8_t *in, uint8_t *out, size_t npix, uint32_t *hist2, int parity,
                                const imgpu_tuning *t, cudaStream_t s)
{
    static imgpu__per_device<fused_shape> shapes;
    const fused_shape *k = nullptr;
    cudaError_t e = shapes.get(fused_setup<C, LUMA>, &k);
    if (e != cudaSuccess)
        return e;
    const int bps = t->eq_blocks_per_sm; /* > 0: a fixed grid, for tuning sweeps */
    const size_t fixed_grid = bps > 0 ? (size_t)(bps < k->per_sm ? bps : k->per_sm) * (size_t)k->sms : 0;
    size_t want = fixed_grid ? fixed_grid : (npix + IMGPU_EQ_PIXELS_PER_BLOCK - 1) / IMGPU_EQ_PIXELS_PER_BLOCK;
    if (!fixed_grid && want < (size_t)k->sms)
        want = k->sms;
    const size_t nchunks = npix / 16;

    /* per-channel RGB: the two-pass kernel with lane-private histograms, whose histogram pass
     * is what the image's colours cost least (tuning.h has the figures; 2 and 4 channels were
     * not measured, and take it when asked: path 3). Its grid is every co-resident block:
     * eq_blocks_per_sm does not apply. */
    if constexpr (!LUMA && C > 1) {
        if (((t->eq_path == 0 && C == 3) || t->eq_path == 3) && k->lanes_grid_max > 0) {
            const size_t need = (nchunks + IMGPU_CDF_BINS) / IMGPU_CDF_BINS; /* never an idle block */
            size_t grid = (size_t)k->lanes_grid_max;
            if (grid > need)
                grid = need;
            void *args[] = {(void *)&in, (void *)&out, (void *)&npix, (void *)&hist2, (void *)&parity};
            return cudaLaunchCooperativeKernel((const void *)equalize_lanes_kernel<C>, dim3((unsigned)grid),
                                               dim3(IMGPU_CDF_BINS), args,
                                               (size_t)lut_planes(C, false) * 256 * 32 * 4, s);
        }
    }
    /* on chip whenever the device has the shared memory: past what fits, the spill is read
     * twice like the two-pass kernel reads everything, so it is never slower (tuning.h) */
    if (t->eq_path != 1 && k->oc_ok) {
        const size_t keep = t->eq_keep_chunks > 0 ? (size_t)t->eq_keep_chunks : 0;
        const size_t cap = keep > 0 && keep < k->oc_keep_cap ? keep : k->oc_keep_cap;
        size_t grid = want < (size_t)k->oc_grid_max ? want : (size_t)k->oc_grid_max;
        const size_t need = (nchunks + IMGPU_CDF_BINS - 1) / IMGPU_CDF_BINS; /* >= 1 chunk per thread */
        if (grid > need)
            grid = need;
        if (grid < 1)
            grid = 1;
        size_t per_block = (nchunks + grid - 1) / grid;
        int g = (int)grid;
        void *args[] = {(void *)&in, (void *)&out, (void *)&npix, (void *)&hist2, (void *)&parity,
                        (void *)&per_block, (void *)&cap};
        return cudaLaunchCooperativeKernel((const void *)equalize_onchip_kernel<C, LUMA>, dim3(g),
                                           dim3(IMGPU_CDF_BINS), args, k->oc_dyn, s);
    }

    const size_t need = (nchunks + IMGPU_CDF_BINS) / IMGPU_CDF_BINS; /* never an idle block */
    if (want > need)
        want = need;
    const int grid = want > (size_t)k->max_grid ? k->max_grid : (int)want;
    void *args[] = {(void *)&in, (void *)&out, (void *)&npix, (void *)&hist2, (void *)&parity};
    return cudaLaunchCooperativeKernel((const void *)equalize_fused_kernel<C, LUMA>, dim3(grid), dim3(IMGPU_CDF_BINS),
                                       args, 0, s);
}

extern "C" cudaError_t imgpu_launch_equalize_fused(const uint8_t *d_in, uint8_t *d_out, size_t npix, int channels,
                                                   int luminance, uint32_t *d_hist2, int parity,
                                                   const imgpu_tuning *tune, cudaStream_t stream)
{
    if (npix == 0)
        return cudaSuccess;
    if (!tune)
        tune = &k_default_tuning;
    const bool luma = luminance && channels >= 3;
    switch (channels) {
    case 1: return launch_fused<1, false>(d_in, d_out, npix, d_hist2, parity, tune, stream);
    case 2: return launch_fused<2, false>(d_in, d_out, npix, d_hist2, parity, tune, stream);
    case 3: return luma ? launch_fused<3, true>(d_in, d_out, npix, d_hist2, parity, tune, stream)
                        : launch_fused<3, false>(d_in, d_out, npix, d_hist2, parity, tune, stream);
    case 4: return luma ? launch_fused<4, true>(d_in, d_out, npix, d_hist2, parity, tune, stream)
                        : launch_fused<4, false>(d_in, d_out, npix, d_hist2, parity, tune, stream);
    default: return cudaErrorInvalidValue;
    }
}

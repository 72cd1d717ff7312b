/* histogram.cu — 256-bin histograms of 8-bit images, three variants side by side:
 *  - global atomics: the baseline every textbook starts from; on a constant image every
 *    thread of the GPU hits one address;
 *  - block-privatized: each block counts into shared memory and merges once, one atomic
 *    per non-empty bin per block (a block that saw no pixel of a bin must not touch it);
 *  - warp-privatized: one shared sub-histogram per warp, so only the 32 lanes of a warp
 *    contend; merged per block the same way;
 *  - lane-privatized: one sub-histogram per lane, bank-interleaved, so no two lanes of a warp
 *    ever contend (gray: 32 KiB of static shared memory; 2-4 channels: P x 32 KiB dynamic).
 * All three read 16 pixels per thread with 16-byte loads (hist.cuh). */
#include <stdlib.h>

#include "kernels.h"
#include "tuning.h"
#include "hist.cuh"
#include "per_device.cuh"

extern "C" const char *imgpu_hist_variant_name(imgpu_hist_variant v)
{
    switch (v) {
    case IMGPU_HIST_GLOBAL_ATOMICS: return "global-atomics";
    case IMGPU_HIST_BLOCK_PRIVATE: return "block-private";
    case IMGPU_HIST_WARP_PRIVATE: return "warp-private";
    case IMGPU_HIST_LANE_PRIVATE: return "lane-private";
    default: return "?";
    }
}

extern "C" int imgpu_hist_planes(int channels, int want_luma)
{
    return channels + ((want_luma && channels >= 3) ? 1 : 0);
}

template <int C, bool LUMA>
static __global__ void __launch_bounds__(IMGPU_HIST_BLOCK)
hist_global_kernel(const uint8_t *img, size_t npix, uint32_t *g_hist)
{
    imgpu__hist_range<C, LUMA, false>(img, npix, g_hist);
}

template <int C, bool LUMA, int COPIES>
static __global__ void __launch_bounds__(IMGPU_HIST_BLOCK)
hist_private_kernel(const uint8_t *img, size_t npix, uint32_t *g_hist)
{
    constexpr int P = C + (LUMA ? 1 : 0);
    __shared__ uint32_t s_hist[COPIES * P * 256];
    for (int i = threadIdx.x; i < COPIES * P * 256; i += blockDim.x)
        s_hist[i] = 0;
    __syncthreads();
    const int copy = COPIES == 1 ? 0 : (int)(threadIdx.x / 32) % COPIES;
    imgpu__hist_range<C, LUMA, true>(img, npix, s_hist + copy * P * 256);
    __syncthreads();
    for (int b = threadIdx.x; b < P * 256; b += blockDim.x) {
        uint32_t sum = 0;
#pragma unroll
        for (int c = 0; c < COPIES; c++)
            sum += s_hist[c * P * 256 + b];
        if (sum)
            atomicAdd(&g_hist[b], sum);
    }
}

/* gray only: 256 bins x 32 lane copies = 32 KiB of shared memory */
static __global__ void __launch_bounds__(IMGPU_HIST_BLOCK)
hist_lane_kernel(const uint8_t *img, size_t npix, uint32_t *g_hist)
{
    __shared__ uint32_t s_hist[256 * 32];
    for (int i = threadIdx.x; i < 256 * 32; i += blockDim.x)
        s_hist[i] = 0;
    __syncthreads();
    const uint32_t lane = threadIdx.x & 31u;
    const size_t nchunks = npix / 16;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (size_t i = first; i < nchunks; i += 2 * stride) { /* two 16-byte loads in flight */
        uint32_t u[4], v[4];
        const bool second = i + stride < nchunks;
        imgpu__load_chunk<1>(img + i * 16, u);
        if (second)
            imgpu__load_chunk<1>(img + (i + stride) * 16, v);
        imgpu__hist_lanes_gray<1>(u, s_hist, lane);
        if (second)
            imgpu__hist_lanes_gray<1>(v, s_hist, lane);
    }
    const size_t tail = npix - nchunks * 16;
    if (first < tail)
        atomicAdd(&s_hist[IMGPU_LANE_SLOT(img[nchunks * 16 + first], lane)], 1u);
    __syncthreads();
    for (uint32_t b = threadIdx.x; b < 256; b += blockDim.x) {
        uint32_t sum = imgpu__lanes_sum(s_hist, b);
        if (sum)
            atomicAdd(&g_hist[b], sum);
    }
}

/* 2 to 4 channels (and luma): P planes x 256 bins x 32 lane copies in dynamic shared memory
 * (RGB: 96 KiB, 2 blocks per SM; RGBA or RGB + luma: 128 KiB, 1). Every atomic of a warp
 * lands in 32 different banks at 32 different addresses, whatever the photo: neighbouring
 * lanes see similar colours, which in one block-shared histogram serialize on the same bins. */
template <int C, bool LUMA>
static __global__ void __launch_bounds__(IMGPU_HIST_LANES_BLOCK)
hist_lanes_kernel(const uint8_t *img, size_t npix, uint32_t *g_hist)
{
    constexpr int P = C + (LUMA ? 1 : 0);
    extern __shared__ uint32_t s_lanes[]; /* P * 256 * 32 */
    for (int i = threadIdx.x; i < P * 256 * 32; i += blockDim.x)
        s_lanes[i] = 0;
    __syncthreads();
    const uint32_t lane = threadIdx.x & 31u;
    imgpu__for_each_chunk<C>(img, npix, [&](const uint32_t (&u)[4 * C]) {
        imgpu__hist_lanes_channels<C, C>(u, s_lanes, lane);
        if (LUMA)
            imgpu__hist_lanes_luma<C>(u, s_lanes + C * 256 * 32, lane);
    });
    const size_t nchunks = npix / 16, tail = npix - nchunks * 16; /* < 16 pixels */
    const size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (first < tail) {
        const uint8_t *p = img + (nchunks * 16 + first) * C;
#pragma unroll
        for (int ch = 0; ch < C; ch++)
            atomicAdd(&s_lanes[IMGPU_LANE_SLOT(ch * 256 + p[ch], lane)], 1u);
        if (LUMA)
            atomicAdd(&s_lanes[IMGPU_LANE_SLOT(C * 256 + imgpu__rgb_to_y(p[0], p[1], p[2]), lane)], 1u);
    }
    __syncthreads();
    for (uint32_t b = threadIdx.x; b < P * 256; b += blockDim.x) {
        const uint32_t sum = imgpu__lanes_sum(s_lanes, b);
        if (sum)
            atomicAdd(&g_hist[b], sum);
    }
}

/* The lane kernel's shared memory opt-in and co-resident blocks, per device (per_device.cuh). */
struct lanes_shape {
    int grid_max; /* co-resident blocks on the whole device; 0: it cannot run here */
};

template <int C, bool LUMA>
static cudaError_t lanes_setup(lanes_shape &s, int dev)
{
    constexpr int P = C + (LUMA ? 1 : 0);
    const int bytes = P * 256 * 32 * 4;
    int optin = 0, sms = 0, per_sm = 0;
    cudaError_t e;
    const void *fn = (const void *)hist_lanes_kernel<C, LUMA>;
    if ((e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess)
        return e;
    if (bytes > optin)
        return cudaSuccess; /* grid_max stays 0: the block-private kernel runs instead */
    if ((e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)) != cudaSuccess ||
        (e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, IMGPU_HIST_LANES_BLOCK, (size_t)bytes)) !=
            cudaSuccess)
        return e;
    s.grid_max = per_sm * sms;
    return cudaSuccess;
}

/* 0 when launched; 1 when this device cannot run the lane kernel for C, LUMA */
template <int C, bool LUMA>
static int launch_lanes(const uint8_t *img, size_t npix, uint32_t *hist, cudaStream_t s)
{
    static imgpu__per_device<lanes_shape> shapes;
    const lanes_shape *k = nullptr;
    if (shapes.get(lanes_setup<C, LUMA>, &k) != cudaSuccess) {
        cudaGetLastError();
        return 1;
    }
    if (k->grid_max < 1)
        return 1;
    const size_t need = (npix / 16 + IMGPU_HIST_LANES_BLOCK) / IMGPU_HIST_LANES_BLOCK; /* never an idle block */
    const int grid = need < (size_t)k->grid_max ? (int)need : k->grid_max;
    constexpr int P = C + (LUMA ? 1 : 0);
    hist_lanes_kernel<C, LUMA><<<grid, IMGPU_HIST_LANES_BLOCK, P * 256 * 32 * 4, s>>>(img, npix, hist);
    return 0;
}

extern "C" int imgpu_hist_grid(const imgpu_tuning *tune)
{
    const int per_sm = tune && tune->hist_blocks_per_sm > 0 ? tune->hist_blocks_per_sm : IMGPU_HIST_BLOCKS_PER_SM;
    return imgpu__sm_count() * per_sm;
}

static int default_grid(void) { return imgpu_hist_grid(nullptr); }

template <int C, bool LUMA>
static void launch_hist(imgpu_hist_variant v, const uint8_t *img, size_t npix, uint32_t *hist, int grid,
                        cudaStream_t s)
{
    /* never more blocks than chunks: an idle block would still pay its zero-and-merge */
    size_t chunks = npix / 16 + 1;
    size_t need = (chunks + IMGPU_HIST_BLOCK - 1) / IMGPU_HIST_BLOCK;
    if ((size_t)grid > need)
        grid = (int)need;
    switch (v) {
    case IMGPU_HIST_GLOBAL_ATOMICS:
        hist_global_kernel<C, LUMA><<<grid, IMGPU_HIST_BLOCK, 0, s>>>(img, npix, hist);
        break;
    case IMGPU_HIST_WARP_PRIVATE:
        hist_private_kernel<C, LUMA, IMGPU_HIST_BLOCK / 32><<<grid, IMGPU_HIST_BLOCK, 0, s>>>(img, npix, hist);
        break;
    case IMGPU_HIST_LANE_PRIVATE:
        if constexpr (C == 1) {
            hist_lane_kernel<<<grid, IMGPU_HIST_BLOCK, 0, s>>>(img, npix, hist);
            break;
        } else {
            if (launch_lanes<C, LUMA>(img, npix, hist, s) == 0)
                break;
        }
        hist_private_kernel<C, LUMA, 1><<<grid, IMGPU_HIST_BLOCK, 0, s>>>(img, npix, hist);
        break;
    default:
        hist_private_kernel<C, LUMA, 1><<<grid, IMGPU_HIST_BLOCK, 0, s>>>(img, npix, hist);
        break;
    }
}

extern "C" cudaError_t imgpu_launch_histogram(imgpu_hist_variant v, const uint8_t *d_img, size_t npix,
                                              int channels, int want_luma, uint32_t *d_hist, int grid,
                                              cudaStream_t stream)
{
    if (npix == 0)
        return cudaSuccess;
    if (grid <= 0)
        grid = default_grid();
    bool luma = want_luma && channels >= 3;
    switch (channels) {
    case 1: launch_hist<1, false>(v, d_img, npix, d_hist, grid, stream); break;
    case 2: launch_hist<2, false>(v, d_img, npix, d_hist, grid, stream); break;
    case 3: luma ? launch_hist<3, true>(v, d_img, npix, d_hist, grid, stream)
                 : launch_hist<3, false>(v, d_img, npix, d_hist, grid, stream); break;
    case 4: luma ? launch_hist<4, true>(v, d_img, npix, d_hist, grid, stream)
                 : launch_hist<4, false>(v, d_img, npix, d_hist, grid, stream); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

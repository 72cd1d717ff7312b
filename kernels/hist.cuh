/* hist.cuh — the per-thread histogram step shared by histogram.cu and equalize.cu.
 *
 * A thread takes a chunk of 16 pixels: 16*C bytes, read as C aligned 16-byte loads (so a
 * chunk starts on a pixel and every load is one coalesced 128-bit transaction per lane).
 * Within the chunk it merges runs of equal values before touching memory: a constant
 * image costs one atomic per channel per 16 pixels instead of 16, which is what keeps the
 * worst case for atomics (every pixel in one bin) from serializing a whole warp 16 times.
 */
#ifndef IMGPU_HIST_CUH
#define IMGPU_HIST_CUH

#include <stdint.h>

#include "color.cuh"

/* Byte k (compile-time after unrolling) of the chunk held in u[]. */
#define IMGPU_CHUNK_BYTE(u, k) (((u)[(k) >> 2] >> (((k) & 3) * 8)) & 0xffu)

template <int C>
__device__ __forceinline__ void imgpu__load_chunk(const uint8_t *p, uint32_t (&u)[4 * C])
{
    const uint4 *q = reinterpret_cast<const uint4 *>(p);
#pragma unroll
    for (int k = 0; k < C; k++) {
        uint4 w = q[k];
        u[4 * k + 0] = w.x;
        u[4 * k + 1] = w.y;
        u[4 * k + 2] = w.z;
        u[4 * k + 3] = w.w;
    }
}

/* Add a run-length-merged stream of 16 values to hist[]. MERGE = false: one atomic each. */
template <bool MERGE>
struct imgpu__run_adder {
    uint32_t prev, cnt;
    __device__ __forceinline__ void start(uint32_t v) { prev = v; cnt = 1; }
    __device__ __forceinline__ void add(uint32_t *hist, uint32_t v)
    {
        if (!MERGE) {
            atomicAdd(&hist[prev], cnt);
            prev = v;
            return;
        }
        if (v == prev) {
            cnt++;
        } else {
            atomicAdd(&hist[prev], cnt);
            prev = v;
            cnt = 1;
        }
    }
    __device__ __forceinline__ void finish(uint32_t *hist) { atomicAdd(&hist[prev], cnt); }
};

/* Gray: a chunk of 16 equal bytes (a flat region; every chunk of a constant image) costs one
 * atomic; any other chunk 16 plain atomics, with no data-dependent branches per byte. */
__device__ __forceinline__ void imgpu__hist_gray_chunk(const uint32_t (&u)[4], uint32_t *hist)
{
    const uint32_t b0 = u[0] & 0xffu, rep = b0 * 0x01010101u;
    if (u[0] == rep && u[1] == rep && u[2] == rep && u[3] == rep) {
        atomicAdd(&hist[b0], 16u);
        return;
    }
#pragma unroll
    for (int k = 0; k < 16; k++)
        atomicAdd(&hist[IMGPU_CHUNK_BYTE(u, k)], 1u);
}

/* Lane-private sub-histograms (one 256-bin plane): lane l counts bin b at s[b * 32 + l], so the
 * 32 lanes of a warp always hit 32 different banks and never the same address, whatever the
 * data: on photos, where neighbouring lanes see similar values, the block-shared histogram
 * serializes on bank and address conflicts instead. 32 KiB of shared memory per plane. */
#define IMGPU_LANE_SLOT(bin, lane) ((bin) * 32u + (lane))

template <int C>
__device__ __forceinline__ void imgpu__hist_lanes_gray(const uint32_t (&u)[4 * C], uint32_t *s, uint32_t lane)
{
    static_assert(C == 1, "lane-private histograms are for one plane");
    const uint32_t b0 = u[0] & 0xffu, rep = b0 * 0x01010101u;
    if (u[0] == rep && u[1] == rep && u[2] == rep && u[3] == rep) {
        atomicAdd(&s[IMGPU_LANE_SLOT(b0, lane)], 16u);
        return;
    }
#pragma unroll
    for (int k = 0; k < 16; k++)
        atomicAdd(&s[IMGPU_LANE_SLOT(IMGPU_CHUNK_BYTE(u, k), lane)], 1u);
}

/* Channels 0..CC-1 of 16 pixels of C channels into lane-private sub-histograms: plane ch (256
 * bins x 32 lanes) at s + ch * 256 * 32. */
template <int C, int CC>
__device__ __forceinline__ void imgpu__hist_lanes_channels(const uint32_t (&u)[4 * C], uint32_t *s, uint32_t lane)
{
#pragma unroll
    for (int k = 0; k < 16; k++)
#pragma unroll
        for (int ch = 0; ch < CC; ch++)
            atomicAdd(&s[IMGPU_LANE_SLOT(ch * 256 + IMGPU_CHUNK_BYTE(u, k * C + ch), lane)], 1u);
}

/* Grid-stride over the whole 16-pixel chunks of an image, two chunks' loads in flight before
 * the first is counted: f(u) for each chunk (u: its 4 * C words). The < 16 pixels of the tail
 * are the caller's. */
template <int C, typename F>
__device__ __forceinline__ void imgpu__for_each_chunk(const uint8_t *img, size_t npix, F &&f)
{
    const size_t nchunks = npix / 16;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < nchunks; i += 2 * stride) {
        uint32_t u[4 * C], v[4 * C];
        const bool second = i + stride < nchunks;
        imgpu__load_chunk<C>(img + i * 16 * C, u);
        if (second)
            imgpu__load_chunk<C>(img + (i + stride) * 16 * C, v);
        f(u);
        if (second)
            f(v);
    }
}

/* Y of 16 RGB(A) pixels into lane-private sub-histograms. */
template <int C>
__device__ __forceinline__ void imgpu__hist_lanes_luma(const uint32_t (&u)[4 * C], uint32_t *s, uint32_t lane)
{
#pragma unroll
    for (int k = 0; k < 16; k++)
        atomicAdd(&s[IMGPU_LANE_SLOT(imgpu__rgb_to_y(IMGPU_CHUNK_BYTE(u, k * C), IMGPU_CHUNK_BYTE(u, k * C + 1),
                                                     IMGPU_CHUNK_BYTE(u, k * C + 2)), lane)], 1u);
}

/* Sum of bin b over the 32 lane copies; the start is rotated by b so that the threads of a
 * warp (consecutive b) read 32 different banks at every step. */
__device__ __forceinline__ uint32_t imgpu__lanes_sum(const uint32_t *s, uint32_t b)
{
    uint32_t sum = 0;
#pragma unroll 8
    for (uint32_t l = 0; l < 32; l++)
        sum += s[IMGPU_LANE_SLOT(b, (l + b) & 31u)];
    return sum;
}

/* Histogram of BT.601 Y of a chunk of 16 RGB(A) pixels into hist[0..255]. */
template <int C, bool MERGE>
__device__ __forceinline__ void imgpu__hist_luma_chunk(const uint32_t (&u)[4 * C], uint32_t *hist)
{
    imgpu__run_adder<MERGE> a;
    a.start(imgpu__rgb_to_y(IMGPU_CHUNK_BYTE(u, 0), IMGPU_CHUNK_BYTE(u, 1), IMGPU_CHUNK_BYTE(u, 2)));
#pragma unroll
    for (int k = 1; k < 16; k++)
        a.add(hist, imgpu__rgb_to_y(IMGPU_CHUNK_BYTE(u, k * C), IMGPU_CHUNK_BYTE(u, k * C + 1),
                                    IMGPU_CHUNK_BYTE(u, k * C + 2)));
    a.finish(hist);
}

/* Histogram a 16-pixel chunk: planes 0..C-1 are the channels, plane C is luma when LUMA. */
template <int C, bool LUMA, bool MERGE>
__device__ __forceinline__ void imgpu__hist_chunk(const uint32_t (&u)[4 * C], uint32_t *hist)
{
    if constexpr (C == 1 && MERGE) {
        imgpu__hist_gray_chunk(u, hist);
    } else {
#pragma unroll
        for (int ch = 0; ch < C; ch++) {
            imgpu__run_adder<MERGE> a;
            a.start(IMGPU_CHUNK_BYTE(u, ch));
#pragma unroll
            for (int k = 1; k < 16; k++)
                a.add(hist + ch * 256, IMGPU_CHUNK_BYTE(u, k * C + ch));
            a.finish(hist + ch * 256);
        }
        if (LUMA)
            imgpu__hist_luma_chunk<C, MERGE>(u, hist + C * 256);
    }
}

/* One pixel (the tail that does not fill a chunk). */
template <int C, bool LUMA>
__device__ __forceinline__ void imgpu__hist_pixel(const uint8_t *p, uint32_t *hist)
{
#pragma unroll
    for (int ch = 0; ch < C; ch++)
        atomicAdd(&hist[ch * 256 + p[ch]], 1u);
    if (LUMA)
        atomicAdd(&hist[C * 256 + imgpu__rgb_to_y(p[0], p[1], p[2])], 1u);
}

/* Grid-stride histogram of npix pixels into `hist` (shared or global). */
template <int C, bool LUMA, bool MERGE>
__device__ __forceinline__ void imgpu__hist_range(const uint8_t *img, size_t npix, uint32_t *hist)
{
    const size_t nchunks = npix / 16;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    /* two chunks per step: both 16-byte loads are in flight before the first atomic */
    for (size_t i = first; i < nchunks; i += 2 * stride) {
        uint32_t u[4 * C], v[4 * C];
        const bool second = i + stride < nchunks;
        imgpu__load_chunk<C>(img + i * 16 * C, u);
        if (second)
            imgpu__load_chunk<C>(img + (i + stride) * 16 * C, v);
        imgpu__hist_chunk<C, LUMA, MERGE>(u, hist);
        if (second)
            imgpu__hist_chunk<C, LUMA, MERGE>(v, hist);
    }
    const size_t tail = npix - nchunks * 16; /* < 16 pixels */
    if (first < tail)
        imgpu__hist_pixel<C, LUMA>(img + (nchunks * 16 + first) * C, hist);
}

#endif

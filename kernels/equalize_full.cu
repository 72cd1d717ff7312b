/* equalize_full.cu — equalization beyond 8-bit OpenCV: 65536-bin histograms of 16-bit
 * images (four designs side by side, imgpu bench times them), the LUT of any formula
 * (opencv, pil, imagemagick) at 256 or 65536 levels built on the device from the histogram
 * and its scan (at 65536 levels on sm_90 the scan and the LUT are one cluster launch), and the
 * LUT apply at 8 or 16 bits with 16-byte loads and stores.
 * src/cpu/equalize_formula.c is the reference: every float/double operation below is the
 * CPU's, in the CPU's order, with explicit round-to-nearest intrinsics so nothing is fused. */
#include "kernels.h"
#include "op.h" /* imgpu_eq_formula: the `formula` ints compared below */
#include "tuning.h"
#include "per_device.cuh"
#include "scan.cuh"
#include "ycc_depth.cuh"

#include <cooperative_groups.h>
#include <stdlib.h>

namespace cg = cooperative_groups;

static_assert(IMGPU_H16_PIXELS_PER_BLOCK <= 65535 && IMGPU_H16_PIXELS_PER_BLOCK % 8 == 0,
              "a packed 16-bit counter must not overflow; blocks start on a chunk");
static_assert(IMGPU_H16_SLICE_PIXELS % 8 == 0 && 65536 % IMGPU_H16_SLICES == 0, "slices");

/* A chunk: 16 bytes per channel = PIX pixels of C samples, loaded as C 16-byte words. */
template <typename T, int C>
union imgpu__chunk {
    static constexpr int PIX = 16 / (int)sizeof(T);
    uint4 q[C];
    T s[PIX * C];
};

template <typename T, int C>
__device__ __forceinline__ void load_chunk(const T *p, imgpu__chunk<T, C> &u)
{
    const uint4 *q = reinterpret_cast<const uint4 *>(p);
#pragma unroll
    for (int k = 0; k < C; k++)
        u.q[k] = __ldg(q + k);
}

/* The plane value of a pixel: channel ch, or Y when LUMA. */
template <typename T, int C, bool LUMA>
__device__ __forceinline__ int plane_value(const T *px, int ch)
{
    if constexpr (LUMA)
        return imgpu__ycc_y<T>(px[0], px[1], px[2]);
    else
        return px[ch];
}

/* ---- 16-bit histograms --------------------------------------------------------------------- */

/* Packed counter add: bin v lives in half (v & 1) of word v >> 1. */
__device__ __forceinline__ void add_packed(uint32_t *s, int v, uint32_t n)
{
    atomicAdd(&s[v >> 1], n << ((v & 1) * 16));
}

/* Counts one loaded chunk of 8 pixels with add(value, count); runs of equal values (a flat
 * region) cost one add. */
template <int C, bool LUMA, typename Add>
__device__ __forceinline__ void count_chunk(const imgpu__chunk<uint16_t, C> &u, int ch, Add add)
{
    int prev = plane_value<uint16_t, C, LUMA>(&u.s[0], ch);
    uint32_t cnt = 1;
#pragma unroll
    for (int p = 1; p < 8; p++) {
        const int v = plane_value<uint16_t, C, LUMA>(&u.s[p * C], ch);
        if (v == prev) {
            cnt++;
        } else {
            add(prev, cnt);
            prev = v;
            cnt = 1;
        }
    }
    add(prev, cnt);
}

/* Zeroes s_packed (65536 16-bit counters in 32768 words) and counts this block's pixels into
 * it: block b takes pixels [b P, (b + 1) P), P = IMGPU_H16_PIXELS_PER_BLOCK <= 65535, so no
 * counter can carry into its neighbour. Ends with a barrier: the counts are complete.
 * (Loading all 8 of a thread's chunks before counting them measured slower: 38.9 against
 * 34.1 us at 4K.) */
template <int C, bool LUMA>
__device__ __forceinline__ void count_packed(const uint16_t *img, size_t npix, int ch, uint32_t *s_packed)
{
    for (int i = threadIdx.x; i < 32768; i += blockDim.x)
        s_packed[i] = 0;
    __syncthreads();
    const size_t lo = (size_t)blockIdx.x * IMGPU_H16_PIXELS_PER_BLOCK;
    const size_t hi = min(npix, lo + IMGPU_H16_PIXELS_PER_BLOCK);
    const size_t nch = hi > lo ? (hi - lo) / 8 : 0;
    for (size_t i = threadIdx.x; i < nch; i += blockDim.x) {
        imgpu__chunk<uint16_t, C> u;
        load_chunk<uint16_t, C>(img + (lo + i * 8) * C, u);
        count_chunk<C, LUMA>(u, ch, [s_packed](int v, uint32_t n) { add_packed(s_packed, v, n); });
    }
    for (size_t p = lo + nch * 8 + threadIdx.x; p < hi; p += blockDim.x)
        add_packed(s_packed, plane_value<uint16_t, C, LUMA>(img + p * C, ch), 1u);
    __syncthreads();
}

/* Adds the counts of bins 2i (even) and 2i + 1 (odd) to the global histogram with one 64-bit
 * atomic on the pair (little-endian: bin 2i is the low word; no carry between them, as no bin
 * exceeds 2^32 - 1 pixels): the merge is most of these kernels' time (at 4K, 17 us of
 * shared16's 34 with two 32-bit atomics per pair), and it is bound by the atomics' count.
 * hist must be 8-byte aligned. */
__device__ __forceinline__ void merge_pair(uint32_t *hist, int i, uint32_t even, uint32_t odd)
{
    if (even | odd)
        atomicAdd(reinterpret_cast<unsigned long long *>(hist) + i,
                  (unsigned long long)odd << 32 | (unsigned long long)even);
}

template <int C, bool LUMA>
static __global__ void __launch_bounds__(IMGPU_H16_BLOCK)
    hist16_shared16(const uint16_t *img, size_t npix, int ch, uint32_t *hist)
{
    extern __shared__ uint32_t s_packed[]; /* 32768 words = 65536 16-bit counters */
    count_packed<C, LUMA>(img, npix, ch, s_packed);
    /* a pair of bins this block never saw must not touch global memory */
    for (int i = threadIdx.x; i < 32768; i += blockDim.x) {
        const uint32_t w = s_packed[i];
        merge_pair(hist, i, w & 0xffffu, w >> 16);
    }
}

/* The same counting, merged through the cluster first (sm_90 thread-block clusters): the
 * merge of a block-private 65536-bin histogram is one global atomic per non-empty pair of bins
 * (merge_pair), and a 16-bit photo fills most of the bins of every block (4K: 127 blocks), so
 * the merge, not the counting, is most of shared16's time. Here the blocks of a cluster (one
 * per SM) first sum their counters through distributed shared memory: block r reads slice r of
 * every block's counters (coalesced remote loads, 32-bit sums, so no 16-bit overflow) and
 * merges only that slice into global memory: one atomic per non-empty pair per cluster.
 * IMGPU_HIST16_CLUSTER runs shared16 instead below sm_90, for a single block's worth of pixels
 * and with IMGPU_NO_CLUSTERS. (Tried first: counting straight into 32-bit counters spread over the cluster,
 * every pixel a remote atomic: 244 us at 4K against shared16's 34; remote shared-memory
 * atomics are slow.) */
template <int C, bool LUMA>
static __global__ void __launch_bounds__(IMGPU_H16_BLOCK)
    hist16_cluster(const uint16_t *img, size_t npix, int ch, uint32_t *hist)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    extern __shared__ uint32_t s_packed[];
    cg::cluster_group cl = cg::this_cluster();
    count_packed<C, LUMA>(img, npix, ch, s_packed);
    cl.sync(); /* every block of the cluster has counted */
    const unsigned cs = cl.num_blocks();
    const int words = 32768 / (int)cs, w0 = (int)cl.block_rank() * words;
    for (int i = threadIdx.x; i < words; i += blockDim.x) {
        uint32_t even = 0, odd = 0;
#pragma unroll 4
        for (unsigned b = 0; b < cs; b++) {
            const uint32_t w = cl.map_shared_rank(s_packed, b)[w0 + i];
            even += w & 0xffffu;
            odd += w >> 16;
        }
        merge_pair(hist, w0 + i, even, odd);
    }
    cl.sync(); /* no block may leave while another still reads its counters */
#endif
}

template <int C, bool LUMA>
static __global__ void __launch_bounds__(IMGPU_H16_BLOCK)
    hist16_sliced(const uint16_t *img, size_t npix, int ch, uint32_t *hist)
{
    constexpr int W = 65536 / IMGPU_H16_SLICES;
    extern __shared__ uint32_t s_slice[]; /* W 32-bit counters */
    for (int i = threadIdx.x; i < W; i += blockDim.x)
        s_slice[i] = 0;
    __syncthreads();
    const int base = blockIdx.y * W;
    const size_t lo = (size_t)blockIdx.x * IMGPU_H16_SLICE_PIXELS;
    const size_t hi = min(npix, lo + IMGPU_H16_SLICE_PIXELS);
    const size_t nch = (hi - lo) / 8;
    for (size_t i = threadIdx.x; i < nch; i += blockDim.x) {
        imgpu__chunk<uint16_t, C> u;
        load_chunk<uint16_t, C>(img + (lo + i * 8) * C, u);
#pragma unroll
        for (int p = 0; p < 8; p++) {
            const unsigned v = (unsigned)(plane_value<uint16_t, C, LUMA>(&u.s[p * C], ch) - base);
            if (v < (unsigned)W)
                atomicAdd(&s_slice[v], 1u);
        }
    }
    for (size_t p = lo + nch * 8 + threadIdx.x; p < hi; p += blockDim.x) {
        const unsigned v = (unsigned)(plane_value<uint16_t, C, LUMA>(img + p * C, ch) - base);
        if (v < (unsigned)W)
            atomicAdd(&s_slice[v], 1u);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < W; i += blockDim.x)
        if (s_slice[i])
            atomicAdd(&hist[base + i], s_slice[i]);
}

template <int C, bool LUMA>
static __global__ void __launch_bounds__(256) hist16_global(const uint16_t *img, size_t npix, int ch, uint32_t *hist)
{
    const size_t nch = npix / 8, stride = (size_t)gridDim.x * blockDim.x;
    const size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (size_t i = first; i < nch; i += stride) {
        imgpu__chunk<uint16_t, C> u;
        load_chunk<uint16_t, C>(img + i * 8 * C, u);
        count_chunk<C, LUMA>(u, ch, [hist](int v, uint32_t n) { atomicAdd(&hist[v], n); });
    }
    for (size_t p = nch * 8 + first; p < npix; p += stride)
        atomicAdd(&hist[plane_value<uint16_t, C, LUMA>(img + p * C, ch)], 1u);
}

static const imgpu_tuning k_default_tuning = IMGPU_TUNING_DEFAULTS;

/* The cluster variant on this device with cs blocks per cluster (tune->h16_cluster:
 * IMGPU_H16_CLUSTER, or a sweep's); ok = 0 below sm_90, for a cs other than a power of two in
 * 2..16, or when no such cluster of 128 KiB blocks fits (occupancy says; a cluster must fit in
 * one GPC): the launcher then runs shared16. */
struct cluster_shape {
    int ok, cs;
};

/* The per-device setups of hist16_launch: one per cluster size (slot log2(cs), 1..4), slot 0
 * for sizes that cannot be. */
constexpr int H16_CS_SLOTS = 5;
static int h16_cs_slot(int cs)
{
    return cs == 2 ? 1 : cs == 4 ? 2 : cs == 8 ? 3 : cs == 16 ? 4 : 0;
}

template <int C, bool LUMA>
static cudaError_t cluster_setup(cluster_shape &s, int dev, int cs)
{
    int major = 0;
    cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    if (e != cudaSuccess || major < 9 || !imgpu__clusters_allowed())
        return e;
    if ((cs & (cs - 1)) || cs < 2 || cs > 16)
        return cudaSuccess;
    const void *fn = (const void *)hist16_cluster<C, LUMA>;
    if (!imgpu__built_for_sm90(fn))
        return cudaSuccess;
    if ((e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, 32768 * 4)) != cudaSuccess)
        return e;
    if (cs > 8 && (e = cudaFuncSetAttribute(fn, cudaFuncAttributeNonPortableClusterSizeAllowed, 1)) != cudaSuccess)
        return e;
    imgpu__cluster_launch L((unsigned)cs, IMGPU_H16_BLOCK, (unsigned)cs, 32768 * 4, 0);
    int clusters = 0;
    if ((e = cudaOccupancyMaxActiveClusters(&clusters, fn, &L.cfg)) != cudaSuccess)
        return e;
    s.cs = cs;
    s.ok = clusters >= 1;
    return cudaSuccess;
}

template <int C, bool LUMA>
static cudaError_t hist16_launch(imgpu_hist16_variant v, const uint16_t *img, size_t npix, int ch, uint32_t *hist,
                                 const imgpu_tuning *t, cudaStream_t st)
{
    cudaError_t e;
    const size_t blocks = (npix + IMGPU_H16_PIXELS_PER_BLOCK - 1) / IMGPU_H16_PIXELS_PER_BLOCK;
    if (v == IMGPU_HIST16_CLUSTER) {
        static imgpu__per_device<cluster_shape> shapes[H16_CS_SLOTS];
        const int cs = t->h16_cluster;
        const cluster_shape *k = nullptr;
        if ((e = shapes[h16_cs_slot(cs)].get([cs](cluster_shape &s, int dev) { return cluster_setup<C, LUMA>(s, dev, cs); },
                                             &k)) != cudaSuccess)
            return e;
        if (k->ok && blocks > 1) {
            /* whole clusters; the blocks past the image count nothing and merge zeros */
            imgpu__cluster_launch L((unsigned)((blocks + k->cs - 1) / k->cs * k->cs), IMGPU_H16_BLOCK,
                                    (unsigned)k->cs, 32768 * 4, st);
            if ((e = cudaLaunchKernelEx(&L.cfg, hist16_cluster<C, LUMA>, img, npix, ch, hist)) != cudaSuccess)
                return e;
            return cudaGetLastError();
        }
        v = IMGPU_HIST16_SHARED16; /* one block's worth of pixels, or no clusters here */
    }
    switch (v) {
    case IMGPU_HIST16_SHARED16: {
        const size_t smem = 32768 * 4;
        static imgpu__smem_optin optin;
        if ((e = optin.ensure((const void *)hist16_shared16<C, LUMA>, (int)smem)) != cudaSuccess)
            return e;
        hist16_shared16<C, LUMA><<<(unsigned)blocks, IMGPU_H16_BLOCK, smem, st>>>(img, npix, ch, hist);
        break;
    }
    case IMGPU_HIST16_SLICED: {
        const size_t smem = 65536 / IMGPU_H16_SLICES * 4;
        static imgpu__smem_optin optin;
        if ((e = optin.ensure((const void *)hist16_sliced<C, LUMA>, (int)smem)) != cudaSuccess)
            return e;
        const size_t segs = (npix + IMGPU_H16_SLICE_PIXELS - 1) / IMGPU_H16_SLICE_PIXELS;
        hist16_sliced<C, LUMA><<<dim3((unsigned)segs, IMGPU_H16_SLICES), IMGPU_H16_BLOCK, smem, st>>>(img, npix, ch, hist);
        break;
    }
    default: {
        size_t grid = (npix / 8 + 255) / 256;
        const size_t cap = (size_t)imgpu__sm_count() * 8;
        grid = grid < 1 ? 1 : grid > cap ? cap : grid;
        hist16_global<C, LUMA><<<(unsigned)grid, 256, 0, st>>>(img, npix, ch, hist);
        break;
    }
    }
    return cudaGetLastError();
}

extern "C" const char *imgpu_hist16_variant_name(imgpu_hist16_variant v)
{
    switch (v) {
    case IMGPU_HIST16_SHARED16: return "shared-16bit-counters";
    case IMGPU_HIST16_SLICED: return "shared-sliced-x4";
    case IMGPU_HIST16_GLOBAL_ATOMICS: return "global-atomics";
    case IMGPU_HIST16_CLUSTER: return "shared-16bit, cluster merge";
    default: return "?";
    }
}

extern "C" cudaError_t imgpu_launch_histogram16_tuned(imgpu_hist16_variant v, const uint16_t *d_img, size_t npix,
                                                      int channels, int plane, uint32_t *d_hist,
                                                      const imgpu_tuning *tune, cudaStream_t stream)
{
    if (npix == 0)
        return cudaSuccess;
    if (!tune)
        tune = &k_default_tuning;
    if (plane < 0 || plane > channels || (plane == channels && channels < 3) || v < 0 ||
        v >= IMGPU_HIST16_VARIANT_COUNT || ((uintptr_t)d_hist & 7u))
        return cudaErrorInvalidValue;
    const bool luma = plane == channels;
    switch (channels) {
    case 1: return hist16_launch<1, false>(v, d_img, npix, plane, d_hist, tune, stream);
    case 2: return hist16_launch<2, false>(v, d_img, npix, plane, d_hist, tune, stream);
    case 3: return luma ? hist16_launch<3, true>(v, d_img, npix, plane, d_hist, tune, stream)
                        : hist16_launch<3, false>(v, d_img, npix, plane, d_hist, tune, stream);
    case 4: return luma ? hist16_launch<4, true>(v, d_img, npix, plane, d_hist, tune, stream)
                        : hist16_launch<4, false>(v, d_img, npix, plane, d_hist, tune, stream);
    default: return cudaErrorInvalidValue;
    }
}

/* ---- the LUT, any formula ------------------------------------------------------------------ */

static_assert(IMGPU_LUTF_LUT_THREADS >= 64 && IMGPU_LUTF_LUT_THREADS % 32 == 0 &&
                  IMGPU_LUTF_LUT_ENTRIES % IMGPU_LUTF_LUT_THREADS == 0,
              "two warps search, every thread takes the same number of entries");

/* The first index a in [0, end) whose CDF value satisfies `pred`, or `end` when none does. The
 * CDF is monotone and the predicates used (c > 0: first non-empty bin; c == total: last
 * non-empty bin) are false, then true, so one warp cuts the range into 64 pieces per step and
 * probes each piece's last index (two probes per lane): the valid probes that fail are the
 * pieces before the answer. 65536 bins take 3 dependent loads, 256 take 2 (a loop over the
 * bins took 64 round trips per block). Also returns cdf[a - 1] (0 for a == 0) and cdf[a]
 * (at_end for a == end), which the formulas need, from the probes themselves. Call with a
 * whole warp; every lane gets the same answer. */
template <typename P>
__device__ __forceinline__ int cdf_search(const uint32_t *cdf, int end, uint32_t at_end, P pred, uint32_t *before_a,
                                          uint32_t *at_a)
{
    const int lane = threadIdx.x & 31;
    int lo = 0, hi = end;                /* pred fails below lo; hi == end or pred(cdf[hi]) holds */
    uint32_t before = 0u, at = at_end;   /* cdf[lo - 1], cdf[hi] */
    while (lo < hi) {
        const int s = (hi - lo + 63) / 64; /* piece j = [lo + j s, lo + (j+1) s), probe j at its end */
        const int nv = (hi - lo) / s;      /* probes inside [lo, hi): 1..64 */
        const int p0 = lo + (2 * lane + 1) * s - 1, p1 = p0 + s; /* probes j = 2 lane, 2 lane + 1 */
        const bool in0 = 2 * lane < nv, in1 = 2 * lane + 1 < nv;
        const uint32_t c0 = in0 ? cdf[p0] : 0u, c1 = in1 ? cdf[p1] : 0u;
        const int f = __popc(__ballot_sync(~0u, in0 && !pred(c0))) + __popc(__ballot_sync(~0u, in1 && !pred(c1)));
        const int lo0 = lo;
        if (f > 0) { /* probe f - 1 failed: the answer is after it */
            const int j = f - 1;
            before = __shfl_sync(~0u, (j & 1) ? c1 : c0, j >> 1);
            lo = lo0 + (j + 1) * s;
        }
        if (f < nv) { /* probe f holds: the answer is at most it */
            at = __shfl_sync(~0u, (f & 1) ? c1 : c0, f >> 1);
            hi = lo0 + (f + 1) * s - 1;
        }
    }
    *before_a = before;
    *at_a = at;
    return lo;
}

/* A formula's constants for one histogram, from what each formula needs of it: i0, the first
 * non-empty bin, and h0 = hist[i0] (opencv, pil); il, the last non-empty bin, and hl =
 * hist[il] (pil); black = hist[0] (imagemagick); total = the sum of the bins; n = the pixels.
 * lut_entry() is then each entry: the CPU's arithmetic (src/cpu/equalize_formula.c),
 * unchanged. */
struct lut_formula {
    int formula, levels, maxv, i0;
    bool identity;
    uint32_t h0;
    unsigned long long step, black;
    double den;
    float scale;
};

__device__ __forceinline__ lut_formula lut_formula_make(int formula, int levels, unsigned long long n, int i0,
                                                        uint32_t h0, int il, uint32_t hl, uint32_t total,
                                                        unsigned long long black)
{
    lut_formula f = {};
    f.formula = formula;
    f.levels = levels;
    f.maxv = levels - 1;
    f.i0 = i0;
    f.black = black;
    if (formula == IMGPU_FORMULA_PIL) { /* pil: total of the non-empty bins minus the last one, // maxv */
        f.step = i0 < il ? ((unsigned long long)total - hl) / (unsigned long long)f.maxv : 0ull;
        f.identity = f.step == 0;
    } else if (formula == IMGPU_FORMULA_IMAGEMAGICK) { /* imagemagick: black = count of level 0, white = n, in double */
        f.identity = black == n;
        if (!f.identity)
            f.den = (double)(n - black);
    } else { /* opencv: the first non-empty bin maps to 0, scale in float */
        f.identity = i0 == levels || (unsigned long long)h0 >= n;
        if (!f.identity) {
            f.h0 = h0;
            f.scale = __fdiv_rn((float)f.maxv, __ull2float_rn(n - h0));
        }
    }
    return f;
}

/* The LUT entry of level i; c is the count BELOW i for pil (cdf[i - 1], 0 at i = 0), else
 * cdf[i]. */
__device__ __forceinline__ unsigned lut_entry(const lut_formula &f, int i, uint32_t c)
{
    if (f.identity)
        return (unsigned)i;
    if (f.formula == IMGPU_FORMULA_PIL) {
        const unsigned long long v = (f.step / 2 + c) / f.step;
        return (unsigned)(v > (unsigned long long)f.maxv ? f.maxv : v);
    }
    if (f.formula == IMGPU_FORMULA_IMAGEMAGICK) {
        const double q = __ddiv_rn(__dmul_rn(65535.0, (double)((unsigned long long)c - f.black)), f.den);
        const unsigned Q = q <= 0.0 ? 0u : q >= 65535.0 ? 65535u : __double2uint_rz(__dadd_rn(q, 0.5));
        return f.levels == 256 ? ((Q + 128) - ((Q + 128) >> 8)) >> 8 : Q;
    }
    int v = 0;
    if (i > f.i0) {
        v = __float2int_rn(__fmul_rn(__uint2float_rn(c - f.h0), f.scale));
        v = v < 0 ? 0 : v > f.maxv ? f.maxv : v;
    }
    return (unsigned)v;
}

/* One block per IMGPU_LUTF_LUT_ENTRIES levels. Each block finds what its formula needs from
 * the CDF (warp 0: i0, the first non-empty bin, and hist[i0] = cdf[i0]; warp 1, pil only: il,
 * the last non-empty bin = the first whose CDF is the total, and hist[il] = total - cdf[il-1])
 * while every thread's own hist/cdf loads are already in flight; then each entry is
 * lut_entry(). *changed must be zero before the first plane's launch: a block that maps a
 * present level elsewhere ORs 1 into it, nobody writes 0. */
static __global__ void __launch_bounds__(IMGPU_LUTF_LUT_THREADS)
    lut_full_kernel(const uint32_t *hist, const uint32_t *cdf, int levels, unsigned long long n, int formula,
                    uint16_t *lut, uint32_t *changed)
{
    constexpr int T = IMGPU_LUTF_LUT_THREADS, E = IMGPU_LUTF_LUT_ENTRIES / T;
    __shared__ int s_i0, s_il;
    __shared__ uint32_t s_h0, s_hl, s_total;
    const int t = threadIdx.x, warp = t >> 5, first = blockIdx.x * IMGPU_LUTF_LUT_ENTRIES;
    uint32_t h[E], c[E]; /* hist[i]; cdf[i - 1] (pil: the count BELOW i) or cdf[i] */
#pragma unroll
    for (int e = 0; e < E; e++) {
        const int i = first + e * T + t;
        h[e] = i < levels ? hist[i] : 0u;
        c[e] = i >= levels ? 0u : formula == IMGPU_FORMULA_PIL ? (i ? cdf[i - 1] : 0u) : cdf[i];
    }
    const unsigned long long black = formula == IMGPU_FORMULA_IMAGEMAGICK ? hist[0] : 0u; /* imagemagick: count of level 0 */
    if (formula != IMGPU_FORMULA_IMAGEMAGICK && warp == 0) {
        uint32_t before, at;
        const int i0 = cdf_search(cdf, levels, 0u, [](uint32_t v) { return v > 0u; }, &before, &at);
        if (t == 0) {
            s_i0 = i0;
            s_h0 = at; /* cdf[i0] = hist[i0]: nothing before i0 */
        }
    } else if (formula == IMGPU_FORMULA_PIL && warp == 1) {
        const uint32_t total = cdf[levels - 1];
        uint32_t before, at;
        const int il = cdf_search(cdf, levels - 1, total, [total](uint32_t v) { return v == total; }, &before, &at);
        if (t == 32) {
            s_il = il;
            s_hl = total - before; /* hist[il] */
            s_total = total;
        }
    }
    __syncthreads();
    const bool pil = formula == IMGPU_FORMULA_PIL, near = formula != IMGPU_FORMULA_IMAGEMAGICK; /* what the searches above set */
    const lut_formula f = lut_formula_make(formula, levels, n, near ? s_i0 : 0, near ? s_h0 : 0u, pil ? s_il : 0,
                                           pil ? s_hl : 0u, pil ? s_total : 0u, black);
    bool ch = false;
#pragma unroll
    for (int e = 0; e < E; e++) {
        const int i = first + e * T + t;
        if (i >= levels)
            break;
        const unsigned r = lut_entry(f, i, c[e]);
        lut[i] = (uint16_t)r;
        ch |= h[e] != 0u && r != (unsigned)i; /* every r is <= maxv: the stored value */
    }
    if (__syncthreads_or(ch) && t == 0)
        atomicOr(changed, 1u);
}

/* The CDF scan and the LUT of a 65536-bin histogram in one launch: one sm_90 cluster of
 * IMGPU_CDF16_CLUSTER blocks of 1024 threads, block r owning bins [r W, (r + 1) W), W = 65536 /
 * IMGPU_CDF16_CLUSTER, E = W / 1024 consecutive bins per thread (16-byte loads). Each block
 * scans its bins (each thread its E, then the block scan of the thread totals: Kogge-Stone,
 * double-buffered, scan.cuh) and finds its first and last non-empty bins; the blocks then
 * read each other's totals and bins through distributed shared memory, so every block has
 * the sum of the bins before its own, the total, i0/h0 and il/hl, and writes its LUT entries.
 * (Before: a one-block tiled scan, 13.6 us at 4K, then the LUT kernel, 4.7 us, each reading
 * the other's 256 KiB through global memory.) */
struct cdf16_part {
    uint32_t total, first, first_h, last, last_h; /* first/last: bin + 1, 0 when all empty */
};

static __global__ void __launch_bounds__(1024)
    cdf_lut16_cluster_kernel(const uint32_t *hist, unsigned long long n, int formula, uint16_t *lut,
                             uint32_t *changed)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    constexpr int CS = IMGPU_CDF16_CLUSTER, W = 65536 / CS, E = W / 1024;
    static_assert(E % 8 == 0 && CS <= 8, "whole 16-byte words of LUT entries per thread; a portable cluster");
    __shared__ uint32_t s_scan[2 * 1024];
    __shared__ cdf16_part s_part;
    __shared__ unsigned s_first, s_last;
    cg::cluster_group cl = cg::this_cluster();
    const int t = threadIdx.x, r = (int)cl.block_rank(), i0 = r * W + t * E;
    if (t == 0) {
        s_first = 0xffffffffu;
        s_last = 0u;
    }
    uint32_t h[E], c[E];
#pragma unroll
    for (int k = 0; k < E / 4; k++) {
        const uint4 q = __ldg(reinterpret_cast<const uint4 *>(hist + i0) + k);
        h[4 * k] = q.x;
        h[4 * k + 1] = q.y;
        h[4 * k + 2] = q.z;
        h[4 * k + 3] = q.w;
    }
    unsigned mine_first = 0xffffffffu, mine_last = 0u; /* bin + 1 */
    uint32_t run = 0;
#pragma unroll
    for (int j = 0; j < E; j++) {
        run += h[j];
        c[j] = run; /* inclusive within the thread */
        if (h[j]) {
            mine_first = min(mine_first, (unsigned)(i0 + j + 1));
            mine_last = (unsigned)(i0 + j + 1);
        }
    }
    __syncthreads(); /* s_first / s_last initialised */
    if (mine_first != 0xffffffffu)
        atomicMin(&s_first, mine_first);
    if (mine_last)
        atomicMax(&s_last, mine_last);
    const uint32_t incl = imgpu__scan_ks_db<1024>(run, s_scan); /* ends with a barrier */
    const uint32_t before_thread = incl - run;
    if (t == 1023)
        s_part.total = incl;
    if (s_first != 0xffffffffu && s_first - 1 >= (unsigned)i0 && s_first - 1 < (unsigned)(i0 + E))
        s_part.first_h = h[s_first - 1 - i0];
    if (s_last && s_last - 1 >= (unsigned)i0 && s_last - 1 < (unsigned)(i0 + E))
        s_part.last_h = h[s_last - 1 - i0];
    if (t == 0) {
        s_part.first = s_first == 0xffffffffu ? 0u : s_first;
        s_part.last = s_last;
    }
    cl.sync(); /* every block's part is written */
    uint32_t below = 0, total = 0, h0 = 0, hl = 0;
    int first = 65536, last = -1;
#pragma unroll
    for (int b = 0; b < CS; b++) {
        const cdf16_part p = *cl.map_shared_rank(&s_part, (unsigned)b);
        total += p.total;
        if (b < r)
            below += p.total;
        if (p.first && first == 65536) {
            first = (int)p.first - 1;
            h0 = p.first_h;
        }
        if (p.last) {
            last = (int)p.last - 1;
            hl = p.last_h;
        }
    }
    cl.sync(); /* no block leaves while another still reads its part */
    const unsigned long long black = formula == IMGPU_FORMULA_IMAGEMAGICK ? __ldg(hist) : 0u;
    const lut_formula f = lut_formula_make(formula, 65536, n, first, h0, last, hl, total, black);
    bool ch = false;
    uint32_t out[E / 2]; /* two entries per word, the lower level in the low half */
#pragma unroll
    for (int j = 0; j < E; j++) {
        const uint32_t cdf = below + before_thread + c[j];
        const unsigned v = lut_entry(f, i0 + j, formula == IMGPU_FORMULA_PIL ? cdf - h[j] : cdf);
        out[j / 2] = j & 1 ? out[j / 2] | v << 16 : v;
        ch |= h[j] != 0u && v != (unsigned)(i0 + j);
    }
#pragma unroll
    for (int k = 0; k < E / 8; k++)
        reinterpret_cast<uint4 *>(lut + i0)[k] = make_uint4(out[4 * k], out[4 * k + 1], out[4 * k + 2], out[4 * k + 3]);
    if (__syncthreads_or(ch) && t == 0)
        atomicOr(changed, 1u);
#endif
}

/* Whether this device runs cdf_lut16_cluster_kernel (sm_90 and a cluster of its size fits). */
struct cdf16_shape {
    int ok;
};

static cudaError_t cdf16_setup(cdf16_shape &s, int dev)
{
    int major = 0;
    cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    if (e != cudaSuccess || major < 9 || !imgpu__clusters_allowed() ||
        !imgpu__built_for_sm90((const void *)cdf_lut16_cluster_kernel))
        return e;
    imgpu__cluster_launch L(IMGPU_CDF16_CLUSTER, 1024, IMGPU_CDF16_CLUSTER, 0, 0);
    int clusters = 0;
    if ((e = cudaOccupancyMaxActiveClusters(&clusters, (const void *)cdf_lut16_cluster_kernel, &L.cfg)) != cudaSuccess)
        return e;
    s.ok = clusters >= 1;
    return cudaSuccess;
}

extern "C" int imgpu_equalize_lut16_fused_available(const imgpu_tuning *tune)
{
    static imgpu__per_device<cdf16_shape> shapes;
    const cdf16_shape *k = nullptr;
    if (tune && tune->lut16_path == 1)
        return 0;
    if (shapes.get(cdf16_setup, &k) != cudaSuccess) {
        cudaGetLastError(); /* fall back to scan + LUT; the next launch must not report this */
        return 0;
    }
    return k->ok;
}

extern "C" cudaError_t imgpu_launch_equalize_lut16_fused(const uint32_t *d_hist, uint64_t npix, int formula,
                                                         uint16_t *d_lut, uint32_t *d_changed, cudaStream_t stream)
{
    if (formula < 0 || formula > 2)
        return cudaErrorInvalidValue;
    imgpu__cluster_launch L(IMGPU_CDF16_CLUSTER, 1024, IMGPU_CDF16_CLUSTER, 0, stream);
    cudaError_t e = cudaLaunchKernelEx(&L.cfg, cdf_lut16_cluster_kernel, d_hist, (unsigned long long)npix, formula,
                                       d_lut, d_changed);
    return e != cudaSuccess ? e : cudaGetLastError();
}

extern "C" cudaError_t imgpu_launch_equalize_lut_full(const uint32_t *d_hist, const uint32_t *d_cdf, int levels,
                                                      uint64_t npix, int formula, uint16_t *d_lut,
                                                      uint32_t *d_changed, cudaStream_t stream)
{
    if ((levels != 256 && levels != 65536) || formula < 0 || formula > 2)
        return cudaErrorInvalidValue;
    const unsigned grid = (unsigned)((levels + IMGPU_LUTF_LUT_ENTRIES - 1) / IMGPU_LUTF_LUT_ENTRIES);
    lut_full_kernel<<<grid, IMGPU_LUTF_LUT_THREADS, 0, stream>>>(d_hist, d_cdf, levels, (unsigned long long)npix,
                                                                 formula, d_lut, d_changed);
    return cudaGetLastError();
}

/* ---- apply --------------------------------------------------------------------------------- */

template <typename T, int C, bool LUMA>
__device__ __forceinline__ void map_pixel(T *px, const uint16_t *lut, bool copy)
{
    constexpr int L = imgpu__depth<T>::LEVELS;
    if constexpr (LUMA) {
        if (copy)
            return;
        int y, cb, cr, r, g, b;
        imgpu__ycc_forward<T>(px[0], px[1], px[2], &y, &cb, &cr);
        imgpu__ycc_inverse<T>(__ldg(&lut[y]), cb, cr, &r, &g, &b);
        px[0] = (T)r;
        px[1] = (T)g;
        px[2] = (T)b;
    } else {
        constexpr int COLOR = C >= 3 ? 3 : 1;
#pragma unroll
        for (int k = 0; k < COLOR; k++)
            px[k] = (T)__ldg(&lut[k * L + px[k]]);
    }
}

template <typename T, int C, bool LUMA>
static __global__ void __launch_bounds__(IMGPU_LUTF_BLOCK)
    apply_full_kernel(const T *in, T *out, size_t npix, const uint16_t *lut, const uint32_t *changed)
{
    using chunk = imgpu__chunk<T, C>;
    constexpr int PIX = chunk::PIX;
    const bool copy = LUMA && *changed == 0u;
    const size_t nch = npix / PIX, stride = (size_t)gridDim.x * blockDim.x;
    const size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (size_t i = first; i < nch; i += stride) {
        chunk u;
        load_chunk<T, C>(in + i * PIX * C, u);
#pragma unroll
        for (int p = 0; p < PIX; p++)
            map_pixel<T, C, LUMA>(&u.s[p * C], lut, copy);
        uint4 *o = reinterpret_cast<uint4 *>(out + i * PIX * C);
#pragma unroll
        for (int k = 0; k < C; k++)
            __stcs(o + k, u.q[k]);
    }
    for (size_t p = nch * PIX + first; p < npix; p += stride) {
        T px[C];
#pragma unroll
        for (int k = 0; k < C; k++)
            px[k] = in[p * C + k];
        map_pixel<T, C, LUMA>(px, lut, copy);
#pragma unroll
        for (int k = 0; k < C; k++)
            out[p * C + k] = px[k];
    }
}

template <typename T, int C, bool LUMA>
static cudaError_t apply_launch(const void *in, void *out, size_t npix, const uint16_t *lut, const uint32_t *changed,
                                cudaStream_t st)
{
    size_t grid = (npix / imgpu__chunk<T, C>::PIX + IMGPU_LUTF_BLOCK - 1) / IMGPU_LUTF_BLOCK;
    const size_t cap = (size_t)imgpu__sm_count() * IMGPU_LUTF_BLOCKS_PER_SM;
    grid = grid < 1 ? 1 : grid > cap ? cap : grid;
    apply_full_kernel<T, C, LUMA><<<(unsigned)grid, IMGPU_LUTF_BLOCK, 0, st>>>(
        static_cast<const T *>(in), static_cast<T *>(out), npix, lut, changed);
    return cudaGetLastError();
}

template <typename T>
static cudaError_t apply_depth(const void *in, void *out, size_t npix, int channels, int luminance,
                               const uint16_t *lut, const uint32_t *changed, cudaStream_t st)
{
    switch (channels) {
    case 1: return apply_launch<T, 1, false>(in, out, npix, lut, changed, st);
    case 2: return apply_launch<T, 2, false>(in, out, npix, lut, changed, st);
    case 3: return luminance ? apply_launch<T, 3, true>(in, out, npix, lut, changed, st)
                             : apply_launch<T, 3, false>(in, out, npix, lut, changed, st);
    case 4: return luminance ? apply_launch<T, 4, true>(in, out, npix, lut, changed, st)
                             : apply_launch<T, 4, false>(in, out, npix, lut, changed, st);
    default: return cudaErrorInvalidValue;
    }
}

extern "C" cudaError_t imgpu_launch_apply_lut_full(const void *d_in, void *d_out, size_t npix, int channels,
                                                   int depth, int luminance, const uint16_t *d_lut,
                                                   const uint32_t *d_changed, cudaStream_t stream)
{
    if (npix == 0)
        return cudaSuccess;
    luminance = luminance && channels >= 3;
    if (depth == 16)
        return apply_depth<uint16_t>(d_in, d_out, npix, channels, luminance, d_lut, d_changed, stream);
    if (depth == 8)
        return apply_depth<uint8_t>(d_in, d_out, npix, channels, luminance, d_lut, d_changed, stream);
    return cudaErrorInvalidValue;
}

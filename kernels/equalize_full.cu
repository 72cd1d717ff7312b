/* equalize_full.cu — equalization beyond 8-bit OpenCV: 65536-bin histograms of 16-bit
 * images (three designs side by side, imgpu bench times them), the LUT of any formula
 * (opencv, pil, imagemagick) at 256 or 65536 levels built on the device from the histogram
 * and its scan, and the LUT apply at 8 or 16 bits with 16-byte loads and stores.
 * src/cpu/equalize_formula.c is the reference: every float/double operation below is the
 * CPU's, in the CPU's order, with explicit round-to-nearest intrinsics so nothing is fused. */
#include "kernels.h"
#include "tuning.h"
#include "ycc_depth.cuh"

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

template <int C, bool LUMA>
static __global__ void __launch_bounds__(IMGPU_H16_BLOCK)
    hist16_shared16(const uint16_t *img, size_t npix, int ch, uint32_t *hist)
{
    extern __shared__ uint32_t s_packed[]; /* 32768 words = 65536 16-bit counters */
    for (int i = threadIdx.x; i < 32768; i += blockDim.x)
        s_packed[i] = 0;
    __syncthreads();
    const size_t lo = (size_t)blockIdx.x * IMGPU_H16_PIXELS_PER_BLOCK;
    const size_t hi = min(npix, lo + IMGPU_H16_PIXELS_PER_BLOCK);
    const size_t nch = (hi - lo) / 8;
    for (size_t i = threadIdx.x; i < nch; i += blockDim.x) {
        imgpu__chunk<uint16_t, C> u;
        load_chunk<uint16_t, C>(img + (lo + i * 8) * C, u);
        int prev = plane_value<uint16_t, C, LUMA>(&u.s[0], ch);
        uint32_t cnt = 1;
#pragma unroll
        for (int p = 1; p < 8; p++) { /* runs of equal values: one atomic (a flat region) */
            const int v = plane_value<uint16_t, C, LUMA>(&u.s[p * C], ch);
            if (v == prev) {
                cnt++;
            } else {
                add_packed(s_packed, prev, cnt);
                prev = v;
                cnt = 1;
            }
        }
        add_packed(s_packed, prev, cnt);
    }
    for (size_t p = lo + nch * 8 + threadIdx.x; p < hi; p += blockDim.x)
        add_packed(s_packed, plane_value<uint16_t, C, LUMA>(img + p * C, ch), 1u);
    __syncthreads();
    /* a bin this block never saw must not touch the global bin */
    for (int i = threadIdx.x; i < 32768; i += blockDim.x) {
        const uint32_t w = s_packed[i];
        if (w & 0xffffu)
            atomicAdd(&hist[2 * i], w & 0xffffu);
        if (w >> 16)
            atomicAdd(&hist[2 * i + 1], w >> 16);
    }
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
        int prev = plane_value<uint16_t, C, LUMA>(&u.s[0], ch);
        uint32_t cnt = 1;
#pragma unroll
        for (int p = 1; p < 8; p++) {
            const int v = plane_value<uint16_t, C, LUMA>(&u.s[p * C], ch);
            if (v == prev) {
                cnt++;
            } else {
                atomicAdd(&hist[prev], cnt);
                prev = v;
                cnt = 1;
            }
        }
        atomicAdd(&hist[prev], cnt);
    }
    for (size_t p = nch * 8 + first; p < npix; p += stride)
        atomicAdd(&hist[plane_value<uint16_t, C, LUMA>(img + p * C, ch)], 1u);
}

static int s_sms;
static int sm_count(void)
{
    if (!s_sms) {
        int dev = 0, n = 0;
        if (cudaGetDevice(&dev) == cudaSuccess && cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess)
            s_sms = n;
        else
            return 1;
    }
    return s_sms;
}

template <int C, bool LUMA>
static cudaError_t hist16_launch(imgpu_hist16_variant v, const uint16_t *img, size_t npix, int ch, uint32_t *hist,
                                 cudaStream_t st)
{
    cudaError_t e;
    switch (v) {
    case IMGPU_HIST16_SHARED16: {
        const size_t smem = 32768 * 4;
        if ((e = cudaFuncSetAttribute(hist16_shared16<C, LUMA>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      (int)smem)) != cudaSuccess)
            return e;
        const size_t grid = (npix + IMGPU_H16_PIXELS_PER_BLOCK - 1) / IMGPU_H16_PIXELS_PER_BLOCK;
        hist16_shared16<C, LUMA><<<(unsigned)grid, IMGPU_H16_BLOCK, smem, st>>>(img, npix, ch, hist);
        break;
    }
    case IMGPU_HIST16_SLICED: {
        const size_t smem = 65536 / IMGPU_H16_SLICES * 4;
        if ((e = cudaFuncSetAttribute(hist16_sliced<C, LUMA>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      (int)smem)) != cudaSuccess)
            return e;
        const size_t segs = (npix + IMGPU_H16_SLICE_PIXELS - 1) / IMGPU_H16_SLICE_PIXELS;
        hist16_sliced<C, LUMA><<<dim3((unsigned)segs, IMGPU_H16_SLICES), IMGPU_H16_BLOCK, smem, st>>>(img, npix, ch, hist);
        break;
    }
    default: {
        size_t grid = (npix / 8 + 255) / 256;
        const size_t cap = (size_t)sm_count() * 8;
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
    default: return "?";
    }
}

extern "C" cudaError_t imgpu_launch_histogram16(imgpu_hist16_variant v, const uint16_t *d_img, size_t npix,
                                                int channels, int plane, uint32_t *d_hist, cudaStream_t stream)
{
    if (npix == 0)
        return cudaSuccess;
    if (plane < 0 || plane > channels || (plane == channels && channels < 3) || v < 0 ||
        v >= IMGPU_HIST16_VARIANT_COUNT)
        return cudaErrorInvalidValue;
    const bool luma = plane == channels;
    switch (channels) {
    case 1: return hist16_launch<1, false>(v, d_img, npix, plane, d_hist, stream);
    case 2: return hist16_launch<2, false>(v, d_img, npix, plane, d_hist, stream);
    case 3: return luma ? hist16_launch<3, true>(v, d_img, npix, plane, d_hist, stream)
                        : hist16_launch<3, false>(v, d_img, npix, plane, d_hist, stream);
    case 4: return luma ? hist16_launch<4, true>(v, d_img, npix, plane, d_hist, stream)
                        : hist16_launch<4, false>(v, d_img, npix, plane, d_hist, stream);
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

/* One block per IMGPU_LUTF_LUT_ENTRIES levels. Each block finds what its formula needs from
 * the CDF (warp 0: i0, the first non-empty bin, and hist[i0] = cdf[i0]; warp 1, pil only: il,
 * the last non-empty bin = the first whose CDF is the total, and hist[il] = total - cdf[il-1])
 * while every thread's own hist/cdf loads are already in flight; then each entry is the CPU's
 * arithmetic, unchanged. *changed must be zero before the first plane's launch: a block that
 * maps a present level elsewhere ORs 1 into it, nobody writes 0. */
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
        c[e] = i >= levels ? 0u : formula == 1 ? (i ? cdf[i - 1] : 0u) : cdf[i];
    }
    const unsigned long long black = formula == 2 ? hist[0] : 0u; /* imagemagick: count of level 0 */
    if (formula != 2 && warp == 0) {
        uint32_t before, at;
        const int i0 = cdf_search(cdf, levels, 0u, [](uint32_t v) { return v > 0u; }, &before, &at);
        if (t == 0) {
            s_i0 = i0;
            s_h0 = at; /* cdf[i0] = hist[i0]: nothing before i0 */
        }
    } else if (formula == 1 && warp == 1) {
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
    const int maxv = levels - 1;
    bool identity;
    unsigned long long step = 0ull;
    double den = 0.0;
    float scale = 0.0f;
    int i0 = 0;
    uint32_t h0 = 0u;
    if (formula == 1) { /* pil: total of the non-empty bins minus the last one, // maxv */
        const unsigned long long total = s_total;
        i0 = s_i0;
        step = i0 < s_il ? (total - s_hl) / (unsigned long long)maxv : 0ull;
        identity = step == 0;
    } else if (formula == 2) { /* imagemagick: black = count of level 0, white = n, in double */
        const unsigned long long white = n;
        identity = black == white;
        if (!identity)
            den = (double)(white - black);
    } else { /* opencv: the first non-empty bin maps to 0, scale in float */
        i0 = s_i0;
        identity = i0 == levels || (unsigned long long)s_h0 >= n;
        if (!identity) {
            h0 = s_h0;
            scale = __fdiv_rn((float)maxv, __ull2float_rn(n - h0));
        }
    }
    bool ch = false;
#pragma unroll
    for (int e = 0; e < E; e++) {
        const int i = first + e * T + t;
        if (i >= levels)
            break;
        unsigned r = (unsigned)i;
        if (!identity) {
            if (formula == 1) {
                const unsigned long long below = c[e];
                const unsigned long long v = (step / 2 + below) / step;
                r = (unsigned)(v > (unsigned long long)maxv ? maxv : v);
            } else if (formula == 2) {
                const double q = __ddiv_rn(__dmul_rn(65535.0, (double)((unsigned long long)c[e] - black)), den);
                const unsigned Q = q <= 0.0 ? 0u : q >= 65535.0 ? 65535u : __double2uint_rz(__dadd_rn(q, 0.5));
                r = levels == 256 ? ((Q + 128) - ((Q + 128) >> 8)) >> 8 : Q;
            } else {
                int v = 0;
                if (i > i0) {
                    v = __float2int_rn(__fmul_rn(__uint2float_rn(c[e] - h0), scale));
                    v = v < 0 ? 0 : v > maxv ? maxv : v;
                }
                r = (unsigned)v;
            }
        }
        lut[i] = (uint16_t)r;
        ch |= h[e] != 0u && r != (unsigned)i; /* every r is <= maxv: the stored value */
    }
    if (__syncthreads_or(ch) && t == 0)
        atomicOr(changed, 1u);
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
    const size_t cap = (size_t)sm_count() * IMGPU_LUTF_BLOCKS_PER_SM;
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

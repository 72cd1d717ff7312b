/* scan.cuh — block-wide inclusive scans of one uint32 per thread (device functions).
 *
 * Three variants, kept side by side because each teaches something (imgpu bench times them):
 *  - Kogge-Stone, double-buffered: every step reads one shared buffer and writes the other,
 *    so a step needs one barrier (after the writes) instead of two. log2(B) steps,
 *    B*log2(B) additions.
 *  - Kogge-Stone, in place: a step must read its partner before anyone overwrites it, and
 *    finish writing before the next step reads: two barriers per step.
 *  - Brent-Kung: work-efficient up-sweep (reduction tree) then down-sweep (distribution
 *    tree): 2*log2(B) steps but only ~2B additions.
 * B (the block size) must be a power of two, 32..1024, equal to blockDim.x. `s` is shared
 * memory of 2*B words (Kogge-Stone double-buffered uses both halves, the others the first).
 * Every variant ends with a barrier, so `s` may be reused right after it returns.
 */
#ifndef IMGPU_SCAN_CUH
#define IMGPU_SCAN_CUH

#include <stdint.h>

#include "kernels.h"

template <int B>
__device__ __forceinline__ uint32_t imgpu__scan_ks_db(uint32_t v, uint32_t *s)
{
    const int t = threadIdx.x;
    uint32_t *src = s, *dst = s + B;
    src[t] = v;
    __syncthreads();
#pragma unroll
    for (int off = 1; off < B; off <<= 1) {
        uint32_t x = src[t];
        if (t >= off)
            x += src[t - off];
        dst[t] = x;
        __syncthreads(); /* the only barrier of the step: nobody writes `src` this step */
        uint32_t *tmp = src;
        src = dst;
        dst = tmp;
    }
    uint32_t r = src[t];
    __syncthreads(); /* everyone has read its result before `s` is reused */
    return r;
}

template <int B>
__device__ __forceinline__ uint32_t imgpu__scan_ks_2b(uint32_t v, uint32_t *s)
{
    const int t = threadIdx.x;
    s[t] = v;
    __syncthreads();
#pragma unroll
    for (int off = 1; off < B; off <<= 1) {
        uint32_t x = t >= off ? s[t - off] : 0u;
        __syncthreads(); /* all partners read before anyone writes */
        s[t] += x;
        __syncthreads(); /* all writes done before the next step reads */
    }
    uint32_t r = s[t];
    __syncthreads();
    return r;
}

template <int B>
__device__ __forceinline__ uint32_t imgpu__scan_brent_kung(uint32_t v, uint32_t *s)
{
    const int t = threadIdx.x;
    s[t] = v;
    __syncthreads();
    /* up-sweep: after the step of stride d, s[k*2d - 1] holds the sum of its 2d-element block */
#pragma unroll
    for (int d = 1; d < B; d <<= 1) {
        int i = (t + 1) * 2 * d - 1;
        if (i < B)
            s[i] += s[i - d];
        __syncthreads();
    }
    /* down-sweep: push each block total into the middle of the next block to the right */
#pragma unroll
    for (int d = B / 4; d >= 1; d >>= 1) {
        int i = (t + 1) * 2 * d - 1;
        if (i + d < B)
            s[i + d] += s[i];
        __syncthreads();
    }
    uint32_t r = s[t];
    __syncthreads();
    return r;
}

template <int B>
__device__ __forceinline__ uint32_t imgpu__block_scan(imgpu_scan_variant v, uint32_t x, uint32_t *s)
{
    switch (v) {
    case IMGPU_SCAN_KOGGE_STONE_2B: return imgpu__scan_ks_2b<B>(x, s);
    case IMGPU_SCAN_BRENT_KUNG: return imgpu__scan_brent_kung<B>(x, s);
    default: return imgpu__scan_ks_db<B>(x, s);
    }
}

#endif

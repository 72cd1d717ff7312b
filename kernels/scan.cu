/* scan.cu — a one-block inclusive scan of any length, for the unit tests and for CDFs
 * longer than a block (the 65536-bin CDF of 16-bit equalize).
 *
 * The input goes through in tiles of B*R values staged in shared memory, so that global
 * memory is only touched by coalesced loads and stores (thread t takes t, t+B, t+2B, ...):
 *  1. the tile's values (already in registers, see 3) are stored to shared memory "striped";
 *  2. each thread reads back R CONSECUTIVE values ("blocked") and scans them serially;
 *  3. meanwhile the loads of the next tile are in flight into registers, so one tile's global
 *     latency hides behind the previous tile's shared-memory work (one block, one SM: latency
 *     is all there is to fight);
 *  4. the block scans the per-thread totals with the chosen variant (scan.cuh), each thread
 *     adds its exclusive prefix and the carry of the earlier tiles and writes back blocked;
 *  5. the tile leaves striped, coalesced.
 * Shared memory gets one padding word per max(R, 32) words: the blocked accesses (stride R
 * between lanes) then hit 32 different banks, and the striped ones (32 consecutive words of
 * one padded group) too. Arithmetic is uint32 and wraps, like a sequential scan. In place
 * (d_in == d_out) is allowed: a tile is loaded before it is written and tiles are disjoint. */
#include "kernels.h"
#include "per_device.cuh"
#include "scan.cuh"
#include "tuning.h"

static_assert(IMGPU_SCAN_TILE >= 1024 && (IMGPU_SCAN_TILE & (IMGPU_SCAN_TILE - 1)) == 0,
              "the tile must be a power of two and hold at least one value per thread of 1024");

extern "C" const char *imgpu_scan_variant_name(imgpu_scan_variant v)
{
    switch (v) {
    case IMGPU_SCAN_KOGGE_STONE_DB: return "kogge-stone-double-buffered";
    case IMGPU_SCAN_KOGGE_STONE_2B: return "kogge-stone-two-barrier";
    case IMGPU_SCAN_BRENT_KUNG: return "brent-kung";
    default: return "?";
    }
}

/* Items per thread of a tile: R (a power of two, <= 64: beyond that the blocked registers
 * spill) for B threads. The padded tile and the 2*B words of the block scan. */
template <int B, int R>
struct scan_tile {
    static constexpr int N = B * R;
    static constexpr int GROUP = R > 32 ? R : 32; /* one padding word per GROUP words */
    static constexpr int WORDS = N + N / GROUP;
    static constexpr size_t SMEM = (size_t)(WORDS + 2 * B) * 4;
    static __device__ __forceinline__ unsigned pad(unsigned i) { return i + i / GROUP; }
};

template <int B, int R>
static __global__ void __launch_bounds__(B) block_scan_kernel(imgpu_scan_variant v, const uint32_t *in,
                                                              uint32_t *out, int n)
{
    using tile = scan_tile<B, R>;
    extern __shared__ uint32_t s_mem[];
    uint32_t *s_tile = s_mem, *s_scan = s_mem + tile::WORDS; /* apart: the scan may start while
                                                                 slower threads still read s_tile */
    __shared__ uint32_t s_total;
    const unsigned t = threadIdx.x, un = (unsigned)n; /* unsigned: base + tile may pass INT_MAX */
    uint32_t next[R];
#pragma unroll
    for (int j = 0; j < R; j++) {
        const unsigned i = j * B + t;
        next[j] = i < un ? in[i] : 0u;
    }
    uint32_t carry = 0; /* sum of every earlier tile */
    for (unsigned base = 0; base < un; base += tile::N) {
#pragma unroll
        for (int j = 0; j < R; j++)
            s_tile[tile::pad(j * B + t)] = next[j];
        __syncthreads();
        const unsigned nb = base + tile::N;
        if (nb < un) { /* the next tile's loads fly while this one is scanned */
#pragma unroll
            for (int j = 0; j < R; j++) {
                const unsigned i = nb + j * B + t;
                next[j] = i < un ? in[i] : 0u;
            }
        }
        uint32_t x[R];
#pragma unroll
        for (int j = 0; j < R; j++)
            x[j] = s_tile[tile::pad(t * R + j)];
#pragma unroll
        for (int j = 1; j < R; j++)
            x[j] += x[j - 1];
        const uint32_t incl = imgpu__block_scan<B>(v, x[R - 1], s_scan); /* ends with a barrier */
        if (t == B - 1)
            s_total = incl; /* read after the barrier below, rewritten only after the next
                               tile's block-scan barriers */
        const uint32_t add = carry + (incl - x[R - 1]);
#pragma unroll
        for (int j = 0; j < R; j++)
            s_tile[tile::pad(t * R + j)] = x[j] + add;
        __syncthreads();
#pragma unroll
        for (int j = 0; j < R; j++) { /* a thread reads back the words it stored in step 1, so
                                         the next tile's step 1 needs no barrier before it */
            const unsigned i = base + j * B + t;
            if (i < un)
                out[i] = s_tile[tile::pad(j * B + t)];
        }
        carry += s_total;
    }
}

template <int B, int R>
static cudaError_t scan_launch(imgpu_scan_variant v, const uint32_t *d_in, uint32_t *d_out, int n,
                               cudaStream_t stream)
{
    constexpr size_t smem = scan_tile<B, R>::SMEM;
    if (smem > 48 * 1024) {
        static imgpu__smem_optin optin;
        const cudaError_t e = optin.ensure((const void *)block_scan_kernel<B, R>, (int)smem);
        if (e != cudaSuccess)
            return e;
    }
    block_scan_kernel<B, R><<<1, B, smem, stream>>>(v, d_in, d_out, n);
    return cudaGetLastError();
}

/* R from n: the fewest items per thread whose tile holds all of n (a short scan pays for no
 * empty slots), at most IMGPU_SCAN_TILE / B (and 64) for long scans. */
template <int B>
static cudaError_t scan_dispatch(imgpu_scan_variant v, const uint32_t *d_in, uint32_t *d_out, int n,
                                 cudaStream_t stream)
{
    constexpr int RMAX = IMGPU_SCAN_TILE / B > 64 ? 64 : IMGPU_SCAN_TILE / B;
    static_assert(RMAX >= 16, "the items-per-thread ladder 1, 4, 16, RMAX");
    if (n <= B)
        return scan_launch<B, 1>(v, d_in, d_out, n, stream);
    if (n <= 4 * B)
        return scan_launch<B, 4>(v, d_in, d_out, n, stream);
    if (n <= 16 * B || RMAX == 16)
        return scan_launch<B, 16>(v, d_in, d_out, n, stream);
    return scan_launch<B, RMAX>(v, d_in, d_out, n, stream);
}

extern "C" cudaError_t imgpu_launch_block_scan(imgpu_scan_variant v, int block, const uint32_t *d_in,
                                               uint32_t *d_out, int n, cudaStream_t stream)
{
    if (n < 1)
        return cudaErrorInvalidValue;
    switch (block) {
    case 32: return scan_dispatch<32>(v, d_in, d_out, n, stream);
    case 64: return scan_dispatch<64>(v, d_in, d_out, n, stream);
    case 128: return scan_dispatch<128>(v, d_in, d_out, n, stream);
    case 256: return scan_dispatch<256>(v, d_in, d_out, n, stream);
    case 512: return scan_dispatch<512>(v, d_in, d_out, n, stream);
    case 1024: return scan_dispatch<1024>(v, d_in, d_out, n, stream);
    default: return cudaErrorInvalidValue;
    }
}

static __global__ void empty_kernel(void) {}

extern "C" cudaError_t imgpu_launch_empty(cudaStream_t stream)
{
    empty_kernel<<<1, 32, 0, stream>>>();
    return cudaGetLastError();
}

/* resize.cu — resize on the device: the CPU reference's operations (src/backend/cpu/resize.c
 * states the rules) from the same tables (src/op/resize_tab.h), built on the host and uploaded,
 * so that no coefficient is computed here. What each thread computes is resize_body.cuh's
 * (shared with the host emulation test); here are the grids.
 *  - separable, fused (the usual case): one block of RZ_TX x RZ_BY threads per tile of RZ_TX x
 *    RZ_TY output pixels; the block's horizontal pass goes to shared memory, not to an
 *    intermediate image in device memory. 4K -> 1080p RGB reads the source once and writes the
 *    result: no 50 MB int32 intermediate written and read back.
 *    Common tables (8-bit bilinear, bicubic, lanczos, box by 2; 16-bit bilinear, bicubic,
 *    lanczos, box by 2; 1 to 4 channels) run k_fused_s, the same tiles specialized at compile
 *    time (resize_body.cuh, rz_fused_dispatch); the rest k_fused, the generic tiles.
 *  - separable, two passes (a band's rows beyond shared memory: large shrink factors): the
 *    horizontal pass over the rows hrow[] into d_h, then the vertical pass.
 *  - nearest: one thread per output pixel.
 * Grids are 2-D (x: pixels of a row, y: rows, striding past 65535): no 64-bit division or
 * modulo per thread (session 16's kernels spent most of their time in those). */
#include <stdint.h>
#include "kernels.h"
#include "resize_body.cuh"

namespace {

const int TB = 128; /* threads a block across a row (two passes, nearest) */

__global__ void k_nearest(imgpu_resize_tab t, const uint8_t *in, uint8_t *out)
{
    const int dx = blockIdx.x * blockDim.x + threadIdx.x;
    if (dx >= t.dw)
        return;
    for (int dy = blockIdx.y; dy < t.dh; dy += gridDim.y)
        rz_nearest_px(t, in, out, dx, dy);
}

__global__ void k_h(imgpu_resize_tab t, const void *in, int32_t *h)
{
    const int dx = blockIdx.x * blockDim.x + threadIdx.x;
    if (dx >= t.dw)
        return;
    for (int r = blockIdx.y; r < t.nh; r += gridDim.y)
        rz_h_px(t, in, h, r, dx);
}

__global__ void k_v(imgpu_resize_tab t, const void *in, const int32_t *h, void *out)
{
    const int dx = blockIdx.x * blockDim.x + threadIdx.x;
    if (dx >= t.dw)
        return;
    for (int dy = blockIdx.y; dy < t.dh; dy += gridDim.y)
        rz_v_px(t, in, h, out, dx, dy);
}

__global__ void __launch_bounds__(RZ_TX *RZ_BY) k_fused(imgpu_resize_tab t, const void *in, void *out)
{
    extern __shared__ int32_t sm[];
    rz_tile_h(t, in, sm, blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y);
    __syncthreads();
    rz_tile_v(t, in, sm, out, blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y);
}

/* the fused tiles specialized for the table (resize_body.cuh: rz_fused_dispatch) */
template <int D, int CN, int M, int K>
__global__ void __launch_bounds__(RZ_TX *RZ_BY) k_fused_s(imgpu_resize_tab t, const void *__restrict__ in,
                                                           void *__restrict__ out)
{
    extern __shared__ int4 sm4[]; /* 16-byte aligned: a pixel's int32 in one access (RZ_SP) */
    int32_t *sm = (int32_t *)sm4;
    rz_tile_h_s<D, CN, M, K>(t, in, sm, blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y);
    __syncthreads();
    rz_tile_v_s<D, CN, M, K>(t, in, sm, out, blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y);
}

struct launch_fused {
    const imgpu_resize_tab *t;
    const void *in;
    void *out;
    dim3 g;
    cudaStream_t st;
    template <int D, int CN, int M, int K> void run()
    {
        k_fused_s<D, CN, M, K><<<g, dim3(RZ_TX, RZ_BY), rz_spec_smem(t), st>>>(*t, in, out);
    }
};

dim3 grid_rows(int w, int rows)
{
    return dim3((unsigned)((w + TB - 1) / TB), (unsigned)(rows < 65535 ? (rows > 0 ? rows : 1) : 65535));
}

} // namespace

extern "C" cudaError_t imgpu_launch_resize(const imgpu_resize_tab *t, const void *d_in, void *d_h, void *d_out,
                                           cudaStream_t st)
{
    if (t->method == IMGPU_RSZ_NEAREST) {
        k_nearest<<<grid_rows(t->dw, t->dh), TB, 0, st>>>(*t, (const uint8_t *)d_in, (uint8_t *)d_out);
        return cudaGetLastError();
    }
    const size_t smem = rz_fused_smem(t);
    if (smem) {
        const dim3 g((unsigned)((t->dw + RZ_TX - 1) / RZ_TX), (unsigned)((t->dh + RZ_TY - 1) / RZ_TY));
        launch_fused L = {t, d_in, d_out, g, st};
        if (rz_fused_dispatch(*t, L))
            return cudaGetLastError();
        k_fused<<<g, dim3(RZ_TX, RZ_BY), smem, st>>>(*t, d_in, d_out);
        return cudaGetLastError();
    }
    if (t->nh > 0)
        k_h<<<grid_rows(t->dw, t->nh), TB, 0, st>>>(*t, d_in, (int32_t *)d_h);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return e;
    k_v<<<grid_rows(t->dw, t->dh), TB, 0, st>>>(*t, d_in, (const int32_t *)d_h, d_out);
    return cudaGetLastError();
}

extern "C" int imgpu_resize_fused(const imgpu_resize_tab *t) { return rz_fused_smem(t) != 0; }

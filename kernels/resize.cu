/* resize.cu — resize on the device: the CPU reference's operations (src/backend/cpu/resize.c
 * states the rules) from the same tables (src/op/resize_tab.h), built on the host and uploaded,
 * so that no coefficient is computed here. What each thread computes is resize_body.cuh's
 * (shared with the host emulation test); here are the grids.
 *  - separable, fused (the usual case): one block of RZ_TX x RZ_BY threads per tile of RZ_TX x
 *    RZ_TY output pixels; the block's horizontal pass goes to shared memory, not to an
 *    intermediate image in device memory. 4K -> 1080p RGB reads the source once and writes the
 *    result: no 50 MB int32 intermediate written and read back.
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

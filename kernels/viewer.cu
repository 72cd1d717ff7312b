/* viewer.cu — the viewer's display kernels: they write straight into GL textures that the
 * viewer registered with CUDA (cudaGraphicsGLRegisterImage with surface load/store), so a
 * processed frame goes from the ops' packed device buffer to the screen without touching
 * the host.
 *  - to_surface: a packed 1..4-channel 8-bit image into an RGBA8 surface (gray -> g,g,g,255;
 *    gray+alpha -> g,g,g,a; RGB -> r,g,b,255). One thread per pixel, one 4-byte store; the
 *    surface's x coordinate is in BYTES (a classic trap: x * 4, not x).
 *  - hist_to_surface: the histogram overlay's data, 256 x 4 float4 texels: rows 0/1 are the
 *    "before" counts and CDF, rows 2/3 the "after" ones; x, y, z hold R, G, B (gray: x).
 *    Counts are scaled by the largest bin of bins 1..254 over the colour channels (the 0 and
 *    255 spikes of clipped or rotated images would flatten everything else) and clamped to 1;
 *    the CDF is the plain cumulative share. The fragment shader draws bars and curves from it.
 */
#include "kernels.h"

#include <stdint.h>

static __global__ void to_surface_kernel(const uint8_t *__restrict__ d_img, int w, int h, int channels,
                                         cudaSurfaceObject_t surf)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    const uint8_t *p = d_img + ((size_t)y * w + x) * channels;
    uchar4 v;
    switch (channels) {
    case 1: v = make_uchar4(p[0], p[0], p[0], 255); break;
    case 2: v = make_uchar4(p[0], p[0], p[0], p[1]); break;
    case 3: v = make_uchar4(p[0], p[1], p[2], 255); break;
    default: v = make_uchar4(p[0], p[1], p[2], p[3]); break;
    }
    surf2Dwrite(v, surf, x * 4, y);
}

extern "C" cudaError_t imgpu_launch_view_to_surface(const uint8_t *d_img, int w, int h, int channels,
                                                    cudaSurfaceObject_t surf, cudaStream_t stream)
{
    if (w <= 0 || h <= 0 || channels < 1 || channels > 4)
        return cudaErrorInvalidValue;
    const dim3 block(32, 8);
    const dim3 grid((unsigned)((w + 31) / 32), (unsigned)((h + 7) / 8));
    to_surface_kernel<<<grid, block, 0, stream>>>(d_img, w, h, channels, surf);
    return cudaGetLastError();
}

/* One block of 256 threads per histogram (blockIdx.x: 0 before, 1 after); thread = bin. */
static __global__ void hist_to_surface_kernel(const uint32_t *__restrict__ d_before,
                                              const uint32_t *__restrict__ d_after, int colors,
                                              cudaSurfaceObject_t surf)
{
    __shared__ uint32_t s_max[3];
    __shared__ unsigned long long s_cum[3][256];
    const uint32_t *hist = blockIdx.x == 0 ? d_before : d_after;
    const int t = threadIdx.x;
    if (t < 3)
        s_max[t] = 0;
    __syncthreads();
    for (int c = 0; c < colors; c++) {
        const uint32_t v = hist[c * 256 + t];
        s_cum[c][t] = v;
        if (t >= 1 && t <= 254)
            atomicMax(&s_max[c], v);
    }
    __syncthreads();
    /* 256-entry inclusive scans, one per channel: a plain Hillis-Steele in shared memory is
     * plenty for 768 values drawn once per change. */
    for (int off = 1; off < 256; off <<= 1) {
        unsigned long long add[3] = {0, 0, 0};
        for (int c = 0; c < colors; c++)
            add[c] = t >= off ? s_cum[c][t - off] : 0;
        __syncthreads();
        for (int c = 0; c < colors; c++)
            s_cum[c][t] += add[c];
        __syncthreads();
    }
    uint32_t m = 0;
    for (int c = 0; c < colors; c++)
        m = max(m, s_max[c]);
    float cnt[3] = {0, 0, 0}, cdf[3] = {0, 0, 0};
    for (int c = 0; c < colors; c++) {
        const uint32_t v = hist[c * 256 + t];
        const unsigned long long total = s_cum[c][255];
        cnt[c] = m ? fminf((float)v / (float)m, 1.0f) : (v ? 1.0f : 0.0f);
        cdf[c] = total ? (float)((double)s_cum[c][t] / (double)total) : 0.0f;
    }
    const int row = blockIdx.x * 2;
    surf2Dwrite(make_float4(cnt[0], cnt[1], cnt[2], 1.0f), surf, t * 16, row);
    surf2Dwrite(make_float4(cdf[0], cdf[1], cdf[2], 1.0f), surf, t * 16, row + 1);
}

extern "C" cudaError_t imgpu_launch_view_hist_to_surface(const uint32_t *d_before, const uint32_t *d_after,
                                                         int colors, cudaSurfaceObject_t surf,
                                                         cudaStream_t stream)
{
    if (colors != 1 && colors != 3)
        return cudaErrorInvalidValue;
    hist_to_surface_kernel<<<2, 256, 0, stream>>>(d_before, d_after, colors, surf);
    return cudaGetLastError();
}

/* peers.cu — CUB (ships with the CUDA toolkit) and, when CMake found it, NPP: the peers that
 * `imgpu bench` puts in the same table as imgpu's kernels. */
#include <cub/device/device_histogram.cuh>

#include "peers.h"

#ifdef IMGPU_HAVE_NPP
#include <npp.h>
#endif

extern "C" cudaError_t bench_cub_histogram(void *temp, size_t *temp_bytes, const uint8_t *d_img, size_t npix,
                                           int channels, int32_t *d_hist, cudaStream_t s)
{
    if (channels == 1)
        return cub::DeviceHistogram::HistogramEven(temp, *temp_bytes, d_img, d_hist, 257, 0, 256, (int)npix, s);
    int levels[4] = {257, 257, 257, 257}, lower[4] = {0, 0, 0, 0}, upper[4] = {256, 256, 256, 256};
    int32_t *h[4] = {d_hist, d_hist + 256, d_hist + 512, d_hist + 768};
    if (channels == 3)
        return cub::DeviceHistogram::MultiHistogramEven<3, 3>(temp, *temp_bytes, d_img, h, levels, lower, upper,
                                                                (int)npix, s);
    return cub::DeviceHistogram::MultiHistogramEven<4, 4>(temp, *temp_bytes, d_img, h, levels, lower, upper,
                                                            (int)npix, s);
}

#ifdef IMGPU_HAVE_NPP
static NppStreamContext npp_ctx(cudaStream_t s)
{
    NppStreamContext c;
    memset(&c, 0, sizeof c);
    int dev = 0;
    cudaGetDevice(&dev);
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, dev);
    c.hStream = s;
    c.nCudaDeviceId = dev;
    c.nMultiProcessorCount = p.multiProcessorCount;
    c.nMaxThreadsPerMultiProcessor = p.maxThreadsPerMultiProcessor;
    c.nMaxThreadsPerBlock = p.maxThreadsPerBlock;
    c.nSharedMemPerBlock = p.sharedMemPerBlock;
    c.nCudaDevAttrComputeCapabilityMajor = p.major;
    c.nCudaDevAttrComputeCapabilityMinor = p.minor;
    unsigned flags = 0;
    cudaStreamGetFlags(s, &flags);
    c.nStreamFlags = flags;
    return c;
}

extern "C" int bench_have_npp(void) { return 1; }

extern "C" size_t bench_npp_histogram_buffer(int w, int h, int channels)
{
    NppiSize roi = {w, h};
    size_t bytes = 0;
    NppStreamContext c = npp_ctx(0);
    if (channels == 1)
        nppiHistogramEvenGetBufferSize_8u_C1R_Ctx(roi, 257, &bytes, c);
    else {
        int levels[3] = {257, 257, 257};
        nppiHistogramEvenGetBufferSize_8u_C3R_Ctx(roi, levels, &bytes, c);
    }
    return bytes;
}

extern "C" int bench_npp_histogram(const uint8_t *d_img, int w, int h, int channels, int32_t *d_hist, void *buffer,
                                   cudaStream_t s)
{
    NppiSize roi = {w, h};
    NppStreamContext c = npp_ctx(s);
    if (channels == 1)
        return nppiHistogramEven_8u_C1R_Ctx(d_img, w, roi, d_hist, 257, 0, 256, (Npp8u *)buffer, c) == NPP_SUCCESS ? 0 : -1;
    Npp32s *hist[3] = {d_hist, d_hist + 256, d_hist + 512};
    int levels[3] = {257, 257, 257}, lower[3] = {0, 0, 0}, upper[3] = {256, 256, 256};
    return nppiHistogramEven_8u_C3R_Ctx(d_img, w * 3, roi, hist, levels, lower, upper, (Npp8u *)buffer, c) == NPP_SUCCESS
               ? 0 : -1;
}

extern "C" int bench_npp_rotate(const uint8_t *d_src, uint8_t *d_dst, int w, int h, int channels, double angle,
                                int filter, cudaStream_t s)
{
    NppiSize size = {w, h};
    NppiRect roi = {0, 0, w, h};
    const double r = angle * 3.14159265358979323846 / 180.0, cx = w / 2.0, cy = h / 2.0;
    /* NPP rotates about the origin, then shifts: shift so that the centre stays put */
    const double sx = cx - (cos(r) * cx + sin(r) * cy), sy = cy - (-sin(r) * cx + cos(r) * cy);
    const int interp = filter == 0 ? NPPI_INTER_NN : filter == 1 ? NPPI_INTER_LINEAR : NPPI_INTER_CUBIC;
    NppStreamContext c = npp_ctx(s);
    NppStatus st = channels == 1
        ? nppiRotate_8u_C1R_Ctx(d_src, size, w, roi, d_dst, w, roi, angle, sx, sy, interp, c)
        : nppiRotate_8u_C3R_Ctx(d_src, size, w * 3, roi, d_dst, w * 3, roi, angle, sx, sy, interp, c);
    return st == NPP_SUCCESS ? 0 : -1;
}
#else
extern "C" int bench_have_npp(void) { return 0; }
extern "C" size_t bench_npp_histogram_buffer(int, int, int) { return 0; }
extern "C" int bench_npp_histogram(const uint8_t *, int, int, int, int32_t *, void *, cudaStream_t) { return -1; }
extern "C" int bench_npp_rotate(const uint8_t *, uint8_t *, int, int, int, double, int, cudaStream_t) { return -1; }
#endif

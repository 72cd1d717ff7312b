/* peers.h — the libraries imgpu is measured against, behind a C interface (peers.cu). */
#ifndef IMGPU_BENCH_PEERS_H
#define IMGPU_BENCH_PEERS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CUB DeviceHistogram::HistogramEven (1 channel) / MultiHistogramEven<C, C> (3 or 4), 256
 * bins of [0, 256). Call once with temp == NULL to get *temp_bytes. */
cudaError_t bench_cub_histogram(void *temp, size_t *temp_bytes, const uint8_t *d_img, size_t npix, int channels,
                                int32_t *d_hist, cudaStream_t s);

/* 1 when built with NPP. */
int bench_have_npp(void);
/* nppiHistogramEven_8u_C{1,3}R_Ctx; buffer from bench_npp_histogram_buffer. */
size_t bench_npp_histogram_buffer(int w, int h, int channels);
int bench_npp_histogram(const uint8_t *d_img, int w, int h, int channels, int32_t *d_hist, void *buffer,
                        cudaStream_t s);
/* nppiRotate_8u_C{1,3}R_Ctx about the centre, same-size output; filter 0 nearest, 1 linear, 2 cubic. */
int bench_npp_rotate(const uint8_t *d_src, uint8_t *d_dst, int w, int h, int channels, double angle, int filter,
                     cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif

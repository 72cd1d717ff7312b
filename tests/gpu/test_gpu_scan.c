/* test_gpu_scan.c — every block-scan variant against a sequential inclusive scan, at block
 * sizes 32..1024, for lengths that are and are not powers of two, shorter and longer than the
 * block (each thread then scans a run), checking every element, first and last included. */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_util.h"
#include "kernels.h"
#include "test_util.h"

int main(void)
{
    gpu_require_or_skip();
    static const int blocks[] = {32, 64, 128, 256, 512, 1024};
    static const int sizes[] = {1, 2, 31, 32, 33, 255, 256, 257, 1000, 1023, 1024, 1025, 4097, 65536, 100003};
    const int maxn = 100003;
    uint32_t *h_in = malloc(maxn * 4), *h_ref = malloc(maxn * 4), *h_out = malloc(maxn * 4);
    uint32_t *d_in, *d_out;
    CUDA_OK(cudaMalloc((void **)&d_in, maxn * 4));
    CUDA_OK(cudaMalloc((void **)&d_out, maxn * 4));
    uint32_t seed = 12345;
    for (int v = 0; v < IMGPU_SCAN_VARIANT_COUNT; v++)
        for (size_t b = 0; b < sizeof blocks / sizeof *blocks; b++)
            for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
                const int n = sizes[k];
                uint32_t sum = 0;
                for (int i = 0; i < n; i++) {
                    /* mostly small values, some large ones: sums wrap mod 2^32 like the GPU's */
                    h_in[i] = (gpu_rand(&seed) % 8 == 0) ? gpu_rand(&seed) : gpu_rand(&seed) % 300;
                    h_ref[i] = sum += h_in[i];
                }
                CUDA_OK(cudaMemcpy(d_in, h_in, n * 4, cudaMemcpyHostToDevice));
                CUDA_OK(cudaMemset(d_out, 0xAB, n * 4));
                CUDA_OK(imgpu_launch_block_scan((imgpu_scan_variant)v, blocks[b], d_in, d_out, n, 0));
                CUDA_OK(cudaDeviceSynchronize());
                CUDA_OK(cudaMemcpy(h_out, d_out, n * 4, cudaMemcpyDeviceToHost));
                int bad = -1;
                for (int i = 0; i < n && bad < 0; i++)
                    if (h_out[i] != h_ref[i])
                        bad = i;
                CHECKF(bad < 0, "%s block %d n %d: first mismatch at %d (got %u, want %u)",
                       imgpu_scan_variant_name((imgpu_scan_variant)v), blocks[b], n, bad, bad >= 0 ? h_out[bad] : 0,
                       bad >= 0 ? h_ref[bad] : 0);
                CHECK(h_out[0] == h_in[0]);
                CHECK(h_out[n - 1] == h_ref[n - 1]);
            }
    CHECK(imgpu_launch_block_scan(IMGPU_SCAN_DEFAULT, 48, d_in, d_out, 10, 0) == cudaErrorInvalidValue);
    cudaFree(d_in);
    cudaFree(d_out);
    free(h_in);
    free(h_ref);
    free(h_out);
    TEST_MAIN_END();
}

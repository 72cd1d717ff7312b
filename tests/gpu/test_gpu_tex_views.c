/* test_gpu_tex_views.c — texture.c: a new background on an RGB source of the same shape
 * (array mode: RGB never goes in place) retires the old texture views but must keep (or
 * destroy) the surface object over the same array: on HEAD a second surface object is made
 * and the first is never destroyed (one leaked per background change). */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_util.h"
#include "gpu_util.h"
#include "test_util.h"

int main(void)
{
    gpu_require_or_skip();
    const int w = 64, h = 48;
    unsigned char *d = NULL;
    CHECK(cudaMalloc((void **)&d, (size_t)w * h * 3) == cudaSuccess);
    CHECK(cudaMemset(d, 7, (size_t)w * h * 3) == cudaSuccess);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s) == cudaSuccess);
    imgpu__cuda_tex t;
    memset(&t, 0, sizeof t);
    size_t held = 0;
    const unsigned char bg1[4] = {1, 2, 3, 255}, bg2[4] = {9, 8, 7, 255};
    CHECK(imgpu__cuda_tex_load(&t, d, w, h, 3, bg1, 0, s, &held) == 0);
    const cudaSurfaceObject_t first = t.surf;
    CHECK(first != 0);
    CHECK(imgpu__cuda_tex_load(&t, d, w, h, 3, bg2, 0, s, &held) == 0);
    /* the array is the same: so is its surface (a new handle means the old one was dropped) */
    CHECKF(t.surf == first, "a background change made a new surface object (%llu -> %llu) without "
           "destroying the old one", (unsigned long long)first, (unsigned long long)t.surf);
    imgpu__cuda_tex_destroy(&t, &held);
    cudaStreamDestroy(s);
    cudaFree(d);
    TEST_MAIN_END();
}

/* resize_gpu.cu — imgpu-bench-resize: resize kernels on the GPU against NPP's nppiResize (issue 28,
 * "Speed"), on the same device images. 4K (3840x2160) -> 1080p and 1080p -> 4K, RGB 8-bit,
 * bilinear, bicubic, area (NPP: LINEAR, CUBIC, SUPER; SUPER only shrinks), and imgpu's
 * --antialias of each. imgpu: the tables built and uploaded once (as a session does per image
 * size), then imgpu_launch_resize (horizontal + vertical pass) per image. Timing as bench.c:
 * K inputs cycled so that together they exceed 4x the L2 (no image is hot in L2), CUDA events
 * around R launches, the median of 15 such batches, per image in microseconds.
 *     build/imgpu-bench-resize [--csv]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>

#include <cuda_runtime.h>
#ifdef IMGPU_HAVE_NPP
#include <nppi_geometry_transforms.h>
#endif

#include "kernels.h"
#include "op/resize_tab.h"

#define CK(x)                                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

struct Case {
    int sw, sh, dw, dh, k;
    std::vector<uint8_t *> in;
    uint8_t *out;
    cudaStream_t s;
};

template <class F> static double time_us(Case &c, F launch)
{
    const int R = 20, B = 15;
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < c.k; i++)
        if (launch(i))
            return -1; /* warm-up, and the peer's refusal */
    std::vector<float> t;
    for (int j = 0; j < B; j++) {
        CK(cudaEventRecord(a, c.s));
        for (int r = 0; r < R; r++)
            launch(r % c.k);
        CK(cudaEventRecord(b, c.s));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms * 1000.f / R);
    }
    std::sort(t.begin(), t.end());
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return t[t.size() / 2];
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
#endif

int main(int argc, char **argv)
{
    const int csv = argc > 1 && !strcmp(argv[1], "--csv");
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    const int cn = 3;
    static const char *fname[] = {"nearest", "bilinear", "bicubic", "area", "lanczos"};
    if (csv)
        printf("case,filter,variant,us_per_image,gpix_per_s\n");
    else
        printf("%s, L2 %d MiB\n\n| case | filter | variant | us / image | output Gpix/s |\n|---|---|---|---|---|\n", prop.name,
               prop.l2CacheSize >> 20);
    const int sizes[2][4] = {{3840, 2160, 1920, 1080}, {1920, 1080, 3840, 2160}};
    for (int z = 0; z < 2; z++) {
        Case c;
        c.sw = sizes[z][0], c.sh = sizes[z][1], c.dw = sizes[z][2], c.dh = sizes[z][3];
        const size_t ib = (size_t)c.sw * c.sh * cn, ob = (size_t)c.dw * c.dh * cn;
        c.k = (int)(4.0 * prop.l2CacheSize / ib) + 2;
        CK(cudaStreamCreateWithFlags(&c.s, cudaStreamNonBlocking));
        std::vector<uint8_t> h(ib);
        uint32_t seed = 12345;
        for (size_t i = 0; i < ib; i++) { /* smooth ramps plus grain: photo-like */
            seed = seed * 1664525u + 1013904223u;
            const size_t px = i / cn, x = px % c.sw, y = px / c.sw;
            h[i] = (uint8_t)((x * 255 / c.sw + y * 127 / c.sh + (i % cn) * 40 + (seed >> 29)) & 255);
        }
        for (int i = 0; i < c.k; i++) {
            uint8_t *d;
            CK(cudaMalloc((void **)&d, ib + 64));
            CK(cudaMemcpy(d, h.data(), ib, cudaMemcpyHostToDevice));
            c.in.push_back(d);
        }
        CK(cudaMalloc((void **)&c.out, ob + 64));
        char cname[64];
        snprintf(cname, sizeof cname, "%dx%d->%dx%d RGB8", c.sw, c.sh, c.dw, c.dh);
        const int filters[] = {IMGPU_RESIZE_BILINEAR, IMGPU_RESIZE_BICUBIC, IMGPU_RESIZE_AREA};
        for (int fi = 0; fi < 3; fi++) {
            const int f = filters[fi];
            for (int aa = 0; aa <= 1; aa++) {
                imgpu_resize_params p;
                memset(&p, 0, sizeof p);
                p.size_w = c.dw, p.size_h = c.dh, p.filter = f, p.antialias = aa;
                imgpu_resize_tab t;
                if (imgpu_resize_tab_build(c.sw, c.sh, cn, 8, &p, &t) < 0)
                    return 1;
                void *dtab, *dh;
                CK(cudaMalloc(&dtab, (size_t)t.block_words * 4));
                CK(cudaMalloc(&dh, (size_t)t.nh * t.dw * cn * 4 + 4));
                CK(cudaMemcpy(dtab, t.block, (size_t)t.block_words * 4, cudaMemcpyHostToDevice));
                imgpu_resize_tab dt = t;
                dt.block = (int32_t *)dtab;
                const double us = time_us(c, [&](int i) {
                    return imgpu_launch_resize(&dt, c.in[i], dh, c.out, c.s) != cudaSuccess;
                });
                char v[64];
                snprintf(v, sizeof v, "imgpu%s (%d x %d taps)", aa ? " --antialias" : "", t.kx, t.ky);
                printf(csv ? "%s,%s,%s,%.1f,%.2f\n" : "| %s | %s | %s | %.1f | %.2f |\n", cname, fname[f], v, us,
                       (double)c.dw * c.dh / us / 1e3);
                cudaFree(dtab);
                cudaFree(dh);
                imgpu_resize_tab_free(&t);
            }
#ifdef IMGPU_HAVE_NPP
            const int interp = f == IMGPU_RESIZE_BILINEAR ? NPPI_INTER_LINEAR : f == IMGPU_RESIZE_BICUBIC ? NPPI_INTER_CUBIC
                                                                                                          : NPPI_INTER_SUPER;
            NppStreamContext nc = npp_ctx(c.s);
            const NppiSize ss = {c.sw, c.sh}, ds = {c.dw, c.dh};
            const NppiRect sr = {0, 0, c.sw, c.sh}, dr = {0, 0, c.dw, c.dh};
            const double us = time_us(c, [&](int i) {
                return nppiResize_8u_C3R_Ctx(c.in[i], c.sw * cn, ss, sr, c.out, c.dw * cn, ds, dr, interp, nc) != NPP_SUCCESS;
            });
            if (us < 0)
                printf(csv ? "%s,%s,NPP nppiResize (refused),,\n" : "| %s | %s | NPP nppiResize (refused: SUPER only shrinks) | - | - |\n",
                       cname, fname[f]);
            else
                printf(csv ? "%s,%s,NPP nppiResize,%.1f,%.2f\n" : "| %s | %s | NPP nppiResize | %.1f | %.2f |\n", cname, fname[f], us,
                       (double)c.dw * c.dh / us / 1e3);
#endif
            fflush(stdout);
        }
        for (uint8_t *d : c.in)
            cudaFree(d);
        cudaFree(c.out);
        cudaStreamDestroy(c.s);
    }
    return 0;
}

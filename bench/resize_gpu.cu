/* resize_gpu.cu — imgpu-bench-resize: resize kernels on the GPU against NPP's nppiResize (issue 28,
 * "Speed"), on the same device images. 4K (3840x2160) -> 1080p and 1080p -> 4K, RGB 8-bit, one
 * row per filter: bilinear, bicubic, area, lanczos, imgpu (cv2's filters) and imgpu --antialias
 * (Pillow's) beside nppiResize_8u_C3R_Ctx with NPPI_INTER_LINEAR, _CUBIC, _SUPER (area: NPP's
 * supersampling, which only shrinks: refused when enlarging) and _LANCZOS.
 * imgpu: the tables built and uploaded once (as a session does per image size), then
 * imgpu_launch_resize (the kernels alone) per image; "imgpu session": the whole op through the
 * CUDA backend's run table, imgpu_cuda_session_run_device per image (the plan, the cached tables'
 * check, the launch: what a batch or the Python module pays), events on the session's stream;
 * NPP: one call per image.
 * Timing (../shared/GPU.md's throughput time, as imgpu bench): K input and K output buffers,
 * together more than 4x the L2, rotated so that no image is hot in L2; CUDA events around 40
 * back-to-back calls / 40, the median of 15 such batches, per image in microseconds, after a
 * warm-up over all K. "floor" is (input + output bytes) / the bandwidth of a device-to-device
 * copy timed the same way on the input buffers: no resize can be faster.
 *     build/imgpu-bench-resize [--csv]
 */
#include <math.h>
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
#include "op.h"
#include "backend/cuda/cuda_backend.h"

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
    size_t ib, ob;
    std::vector<uint8_t *> in, out;
    cudaStream_t s;
    long idx; /* rotates over the K buffers across batches and timings */
};

/* launch(i) enqueues one op reading in[i], writing out[i]; non-zero is its failure, kept in
 * *status. NAN when the op fails (during the warm-up or later). With IMGPU_BENCH_ONCE set, each
 * op runs once and is not timed: one launch of each kernel for a profiler (Nsight Compute). */
template <class F> static double time_us(Case &c, F launch, int *status)
{
    const int R = 40, B = 15;
    *status = 0;
    if (getenv("IMGPU_BENCH_ONCE")) {
        *status = launch(0);
        CK(cudaStreamSynchronize(c.s));
        return NAN;
    }
    for (int i = 0; i < c.k; i++)
        if ((*status = launch(i)) != 0)
            return NAN; /* the peer's refusal */
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> t;
    for (int j = 0; j < B; j++) {
        CK(cudaEventRecord(a, c.s));
        for (int r = 0; r < R; r++)
            if (!*status)
                *status = launch((int)(c.idx++ % c.k));
        CK(cudaEventRecord(b, c.s));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms * 1000.f / R);
    }
    CK(cudaGetLastError());
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    if (*status)
        return NAN;
    std::sort(t.begin(), t.end());
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

/* imgpu's resize of c's images with filter f (--antialias when aa): tables built and uploaded
 * once, then one launch per image. */
static double time_imgpu(Case &c, int f, int aa, int *status)
{
    const int cn = 3;
    imgpu_resize_params p;
    memset(&p, 0, sizeof p);
    p.size_w = c.dw, p.size_h = c.dh, p.filter = f, p.antialias = aa;
    imgpu_resize_tab t;
    if (imgpu_resize_tab_build(c.sw, c.sh, cn, 8, &p, &t) < 0) {
        *status = -1;
        return NAN;
    }
    void *dtab, *dh;
    CK(cudaMalloc(&dtab, (size_t)t.block_words * 4));
    CK(cudaMalloc(&dh, (size_t)t.nh * t.dw * cn * 4 + 4));
    CK(cudaMemcpy(dtab, t.block, (size_t)t.block_words * 4, cudaMemcpyHostToDevice));
    imgpu_resize_tab dt = t;
    dt.block = (int32_t *)dtab;
    const double us = time_us(c, [&](int i) { return (int)imgpu_launch_resize(&dt, c.in[i], dh, c.out[i], c.s); }, status);
    CK(cudaStreamSynchronize(c.s));
    cudaFree(dtab);
    cudaFree(dh);
    imgpu_resize_tab_free(&t);
    return us;
}

/* The same resize as a session runs it (the run table, resize.c's cached tables): per image,
 * imgpu_cuda_session_run_device from in[i] to out[i], timed on the session's stream. */
static double time_session(Case &c, int f, int *status)
{
    imgpu_op op = imgpu_op_resize(c.dw, c.dh, (imgpu_resize_filter)f);
    imgpu_cuda_session *s = imgpu_cuda_session_new();
    if (!s) {
        *status = -1;
        return NAN;
    }
    /* one run creates the session's stream */
    if ((*status = imgpu_cuda_session_run_device(s, c.in[0], c.sw, c.sh, 3, 1, &op, 1, c.out[0])) != 0) {
        imgpu_cuda_session_free(s);
        return NAN;
    }
    Case cs = c;
    cs.s = imgpu_cuda_session_stream(s);
    const double us = time_us(cs, [&](int i) {
        return imgpu_cuda_session_run_device(s, c.in[i], c.sw, c.sh, 3, 1, &op, 1, c.out[i]);
    }, status);
    c.idx = cs.idx;
    CK(cudaStreamSynchronize(cs.s));
    imgpu_cuda_session_free(s);
    return us;
}

static void cell(char *buf, size_t n, double us, int status, const char *why)
{
    if (isnan(us))
        snprintf(buf, n, status ? "refused (%d%s%s)" : "n/a", status, why ? ": " : "", why ? why : "");
    else
        snprintf(buf, n, "%.1f", us);
}

int main(int argc, char **argv)
{
    const int csv = argc > 1 && !strcmp(argv[1], "--csv");
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    const int cn = 3;
    static const char *fname[] = {"nearest", "bilinear", "bicubic", "area", "lanczos"};
    const int sizes[2][4] = {{3840, 2160, 1920, 1080}, {1920, 1080, 3840, 2160}};
    for (int z = 0; z < 2; z++) {
        Case c;
        c.sw = sizes[z][0], c.sh = sizes[z][1], c.dw = sizes[z][2], c.dh = sizes[z][3];
        c.ib = (size_t)c.sw * c.sh * cn, c.ob = (size_t)c.dw * c.dh * cn;
        c.k = (int)(4.0 * prop.l2CacheSize / (c.ib + c.ob)) + 2;
        c.idx = 0;
        CK(cudaStreamCreateWithFlags(&c.s, cudaStreamNonBlocking));
        std::vector<uint8_t> h(c.ib);
        uint32_t seed = 12345;
        for (size_t i = 0; i < c.ib; i++) { /* smooth ramps plus grain: photo-like */
            seed = seed * 1664525u + 1013904223u;
            const size_t px = i / cn, x = px % c.sw, y = px / c.sw;
            h[i] = (uint8_t)((x * 255 / c.sw + y * 127 / c.sh + (i % cn) * 40 + (seed >> 29)) & 255);
        }
        for (int i = 0; i < c.k; i++) {
            uint8_t *d, *o;
            CK(cudaMalloc((void **)&d, c.ib + 64));
            CK(cudaMalloc((void **)&o, c.ob + 64));
            CK(cudaMemcpy(d, h.data(), c.ib, cudaMemcpyHostToDevice));
            c.in.push_back(d);
            c.out.push_back(o);
        }
        /* the floor: a device copy of each input into the next (read + write of ib; all K hold the
         * same pixels) gives the bandwidth */
        int st;
        const double copy_us = time_us(c, [&](int i) {
            return (int)cudaMemcpyAsync(c.in[(i + 1) % c.k], c.in[i], c.ib, cudaMemcpyDeviceToDevice, c.s);
        }, &st);
        const double bw = 2.0 * c.ib / (copy_us * 1e-6); /* bytes / s */
        const double floor_us = (c.ib + c.ob) / bw * 1e6;
        char cname[64];
        snprintf(cname, sizeof cname, "%dx%d->%dx%d", c.sw, c.sh, c.dw, c.dh);
        if (z == 0) {
            if (csv)
                printf("case,filter,imgpu_us,imgpu_antialias_us,imgpu_session_us,npp_us,imgpu_over_npp,floor_us\n");
            else
                printf("imgpu-bench-resize: %s, L2 %d MiB; RGB 8-bit; throughput time: events around 40 back-to-back "
                       "calls / 40, median of 15, K in+out buffers > 4x L2; floor = (in + out bytes) / D2D copy "
                       "bandwidth\n\n| case | filter | imgpu us | imgpu --antialias us | imgpu session us | NPP nppiResize us "
                       "| imgpu / NPP | floor us |\n|---|---|---:|---:|---:|---:|---:|---:|\n",
                       prop.name, prop.l2CacheSize >> 20);
        }
        if (!csv)
            fprintf(stderr, "%s: K = %d buffers, D2D copy %.1f us = %.0f GB/s\n", cname, c.k, copy_us, bw / 1e9);
        const int filters[] = {IMGPU_RESIZE_BILINEAR, IMGPU_RESIZE_BICUBIC, IMGPU_RESIZE_AREA, IMGPU_RESIZE_LANCZOS};
        for (int fi = 0; fi < 4; fi++) {
            const int f = filters[fi];
            int s0, s1, s2 = 0, s3;
            const double t0 = time_imgpu(c, f, 0, &s0), t1 = time_imgpu(c, f, 1, &s1), t3 = time_session(c, f, &s3);
            double tn = NAN;
            const char *why = NULL;
#ifdef IMGPU_HAVE_NPP
            const int interp = f == IMGPU_RESIZE_BILINEAR  ? NPPI_INTER_LINEAR
                               : f == IMGPU_RESIZE_BICUBIC ? NPPI_INTER_CUBIC
                               : f == IMGPU_RESIZE_AREA    ? NPPI_INTER_SUPER
                                                           : NPPI_INTER_LANCZOS;
            NppStreamContext nc = npp_ctx(c.s);
            const NppiSize ss = {c.sw, c.sh}, ds = {c.dw, c.dh};
            const NppiRect sr = {0, 0, c.sw, c.sh}, dr = {0, 0, c.dw, c.dh};
            tn = time_us(c, [&](int i) {
                const NppStatus e = nppiResize_8u_C3R_Ctx(c.in[i], c.sw * cn, ss, sr, c.out[i], c.dw * cn, ds, dr, interp, nc);
                return e < 0 ? (int)e : 0; /* > 0: warnings */
            }, &s2);
            if (s2 && f == IMGPU_RESIZE_AREA && c.dw > c.sw)
                why = "SUPER only shrinks";
            CK(cudaStreamSynchronize(c.s));
#else
            why = "built without NPP";
            s2 = 1;
#endif
            char a[64], b[64], n[64], r[32], se[64];
            cell(a, sizeof a, t0, s0, NULL);
            cell(b, sizeof b, t1, s1, NULL);
            cell(se, sizeof se, t3, s3, NULL);
            cell(n, sizeof n, tn, s2, why);
            if (isnan(t0) || isnan(tn))
                snprintf(r, sizeof r, "-");
            else
                snprintf(r, sizeof r, "%.2f", t0 / tn);
            printf(csv ? "%s,%s,%s,%s,%s,%s,%s,%.1f\n" : "| %s | %s | %s | %s | %s | %s | %s | %.1f |\n", cname, fname[f], a,
                   b, se, n, r, floor_us);
            fflush(stdout);
        }
        for (int i = 0; i < c.k; i++) {
            cudaFree(c.in[i]);
            cudaFree(c.out[i]);
        }
        cudaStreamDestroy(c.s);
    }
    return 0;
}

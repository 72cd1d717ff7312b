/* per_device.cuh — launch setup done once per device, not once per process.
 *
 * Kernel attributes (cudaFuncSetAttribute: opt-in shared memory, non-portable cluster sizes)
 * and what occupancy says about them belong to one device's context: set on device 0 they do
 * nothing for device 1, and `imgpu batch --devices 0,1` runs one GPU stage per device, each on
 * its own thread. A `static int done` would set device 0 up and then launch on device 1 with
 * no opt-in (cudaErrorInvalidValue on the first image there). imgpu__per_device<S> keeps one
 * setup result S per device: get() runs init(S &, device) once per device under a lock
 * (until it succeeds) and is afterwards one acquire load. S is a plain struct of numbers. */
#pragma once

#include <cuda_runtime.h>

#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <mutex>

#define IMGPU_MAX_DEVICES 64

template <typename S>
struct imgpu__per_device {
    S slot[IMGPU_MAX_DEVICES];
    std::atomic<bool> ready[IMGPU_MAX_DEVICES];
    std::mutex lock;

    /* *out = this device's S, set up by init (cudaError_t init(S &, int device)) on the first
     * call for the device. An init that fails is tried again on the next call. */
    template <typename F>
    cudaError_t get(F init, const S **out)
    {
        int dev = 0;
        cudaError_t e = cudaGetDevice(&dev);
        if (e != cudaSuccess)
            return e;
        if (dev < 0 || dev >= IMGPU_MAX_DEVICES)
            return cudaErrorInvalidDevice;
        if (!ready[dev].load(std::memory_order_acquire)) {
            std::lock_guard<std::mutex> g(lock);
            if (!ready[dev].load(std::memory_order_relaxed)) {
                slot[dev] = S{};
                if ((e = init(slot[dev], dev)) != cudaSuccess)
                    return e;
                ready[dev].store(true, std::memory_order_release);
            }
        }
        *out = &slot[dev];
        return cudaSuccess;
    }
};

/* Whether the thread-block-cluster kernels (sm_90: the 16-bit histogram's cluster merge, the
 * 16-bit CDF + LUT) may run: yes unless IMGPU_NO_CLUSTERS is set to a non-empty value other
 * than 0, which makes every launcher take its non-cluster path. For tool runs that cannot
 * take them: compute-sanitizer racecheck with a --kernel-name filter that leaves a cluster
 * kernel uninstrumented stops at it with "failed to handle a hardware exception" (unfiltered,
 * racecheck, memcheck, initcheck and synccheck all run them cleanly). */
static inline bool imgpu__clusters_allowed(void)
{
    static const bool allowed = [] {
        const char *e = getenv("IMGPU_NO_CLUSTERS");
        return !(e && *e && strcmp(e, "0") != 0);
    }();
    return allowed;
}

/* Whether `fn` was compiled for sm_90 or later (its PTX, not only the device: a build for
 * compute_80 runs on an H100 through the JIT, and the bodies of the cluster kernels exist only
 * for __CUDA_ARCH__ >= 900). */
static inline bool imgpu__built_for_sm90(const void *fn)
{
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, fn) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return fa.ptxVersion >= 90;
}

/* The multiprocessor count of the current device (cached per device). */
static inline int imgpu__sm_count(void)
{
    struct sms { int n; };
    static imgpu__per_device<sms> s;
    const sms *p = nullptr;
    if (s.get([](sms &x, int dev) { return cudaDeviceGetAttribute(&x.n, cudaDevAttrMultiProcessorCount, dev); },
              &p) != cudaSuccess)
        return 1;
    return p->n > 0 ? p->n : 1;
}

/* Sets cudaFuncAttributeMaxDynamicSharedMemorySize of `fn` to `bytes` once per device (the
 * launchers of kernels with more than 48 KiB of dynamic shared memory call it before each
 * launch; after the first it is one load). One instance per kernel: pass a static. */
struct imgpu__smem_optin {
    imgpu__per_device<int> set;
    cudaError_t ensure(const void *fn, int bytes)
    {
        const int *p = nullptr;
        return set.get([fn, bytes](int &x, int) {
            x = bytes;
            return cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
        }, &p);
    }
};

/* The launch configuration of a thread-block-cluster kernel (sm_90): `grid` blocks of `threads`
 * in clusters of `cs`, for cudaOccupancyMaxActiveClusters(&n, fn, &L.cfg) and
 * cudaLaunchKernelEx(&L.cfg, kernel, args...). cfg points into the object: not copyable. */
struct imgpu__cluster_launch {
    cudaLaunchConfig_t cfg;
    cudaLaunchAttribute at[1];
    imgpu__cluster_launch(unsigned grid, unsigned threads, unsigned cs, size_t smem, cudaStream_t st) : cfg(), at()
    {
        at[0].id = cudaLaunchAttributeClusterDimension;
        at[0].val.clusterDim.x = cs;
        at[0].val.clusterDim.y = 1;
        at[0].val.clusterDim.z = 1;
        cfg.gridDim = dim3(grid);
        cfg.blockDim = dim3(threads);
        cfg.dynamicSmemBytes = smem;
        cfg.stream = st;
        cfg.attrs = at;
        cfg.numAttrs = 1;
    }
    imgpu__cluster_launch(const imgpu__cluster_launch &) = delete;
    imgpu__cluster_launch &operator=(const imgpu__cluster_launch &) = delete;
};

/* device.c — is there a usable GPU? The probe (device count, driver vs runtime version,
 * and one real kernel launch, which catches a binary built for another architecture) runs
 * once; imgpu_cuda_prepare() starts it on a background thread so that CUDA's context
 * creation (tens to hundreds of milliseconds) overlaps decoding the input. Also the
 * error and memory-budget helpers of cuda_util.h. */
#include "cuda_util.h"
#include "error.h"
#include "kernels.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_once_t s_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t s_thread;
static int s_thread_started, s_probed, s_usable;
/* Read without the lock by imgpu_cuda_state: set once, when the probe has finished, after
 * s_usable and s_why. s_start_ns: when the probe started (0: not yet). */
static atomic_int s_done;
static _Atomic uint64_t s_start_ns;
static char s_why[512];

static int s_lost;            /* a sticky error happened: the context is unusable */
static char s_lost_why[384];

/* Errors after which every later CUDA call in this process fails too. */
static int is_sticky(cudaError_t e)
{
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
        return 1;
    default:
        return 0;
    }
}

int imgpu__cuda_fail(cudaError_t e, const char *what)
{
    cudaGetLastError(); /* clear the error state where it is not sticky */
    imgpu_error("CUDA error in %s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
    if (is_sticky(e)) {
        pthread_mutex_lock(&s_lock);
        if (!s_lost) {
            s_lost = 1;
            snprintf(s_lost_why, sizeof s_lost_why, "the GPU faulted earlier in this run (%s in %s)",
                     cudaGetErrorName(e), what);
        }
        pthread_mutex_unlock(&s_lock);
        return IMGPU_CUDA_STICKY;
    }
    return e == cudaErrorMemoryAllocation ? IMGPU_CUDA_OOM : -1;
}

static void probe(void)
{
    int n = 0, drv = 0, rt = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    /* No driver and no device read alike to a user: "no NVIDIA GPU or driver was found". The
     * runtime's own text for the first ("CUDA driver version is insufficient for CUDA runtime
     * version") reads like a request to upgrade a driver that is not there: only its name is
     * kept, for a search. */
    if (e == cudaErrorInsufficientDriver) {
        cudaDriverGetVersion(&drv);
        cudaRuntimeGetVersion(&rt);
        if (drv == 0)
            snprintf(s_why, sizeof s_why, "no NVIDIA GPU or driver was found (%s)", cudaGetErrorName(e));
        else
            snprintf(s_why, sizeof s_why, "the NVIDIA driver supports CUDA %d.%d, older than this imgpu's runtime %d.%d",
                     drv / 1000, drv % 1000 / 10, rt / 1000, rt % 1000 / 10);
        goto done;
    }
    if (e == cudaErrorNoDevice || (e == cudaSuccess && n == 0)) {
        const char *vis = getenv("CUDA_VISIBLE_DEVICES");
        char esc[96];
        if (vis)
            snprintf(s_why, sizeof s_why, "no NVIDIA GPU or driver was found (cudaErrorNoDevice: "
                     "CUDA_VISIBLE_DEVICES='%s' shows none)", imgpu_escape(vis, esc, sizeof esc));
        else
            snprintf(s_why, sizeof s_why, "no NVIDIA GPU or driver was found (cudaErrorNoDevice)");
        goto done;
    }
    if (e != cudaSuccess) {
        snprintf(s_why, sizeof s_why, "%s", cudaGetErrorString(e));
        goto done;
    }
    int dev = 0;
    const char *env = getenv("IMGPU_CUDA_DEVICE");
    if (env && *env) {
        dev = atoi(env);
        if (dev < 0 || dev >= n) {
            snprintf(s_why, sizeof s_why, "IMGPU_CUDA_DEVICE=%s: only %d device(s)", env, n);
            goto done;
        }
    }
    if ((e = cudaSetDevice(dev)) != cudaSuccess || (e = imgpu_launch_empty(0)) != cudaSuccess ||
        (e = cudaDeviceSynchronize()) != cudaSuccess) {
        if (e == cudaErrorNoKernelImageForDevice) {
            struct cudaDeviceProp p;
            cudaGetDeviceProperties(&p, dev);
            snprintf(s_why, sizeof s_why, "imgpu was built for other GPUs than the %s (compute capability %d.%d): "
                     "rebuild with -DCMAKE_CUDA_ARCHITECTURES=%d%d", p.name, p.major, p.minor, p.major, p.minor);
        } else {
            snprintf(s_why, sizeof s_why, "%s", cudaGetErrorString(e));
        }
        cudaGetLastError();
        goto done;
    }
    s_usable = 1;
done:
    s_probed = 1;
    atomic_store(&s_done, 1);
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

static void *probe_thread(void *arg)
{
    (void)arg;
    probe();
    return NULL;
}

static void start_thread(void)
{
    atomic_store(&s_start_ns, mono_ns());
    if (pthread_create(&s_thread, NULL, probe_thread, NULL) == 0)
        s_thread_started = 1;
}

int imgpu_cuda_state(double *started_ms)
{
    uint64_t t0 = atomic_load(&s_start_ns);
    if (started_ms)
        *started_ms = t0 ? (double)(mono_ns() - t0) / 1e6 : 0.0;
    if (!atomic_load(&s_done))
        return 0;
    return s_usable && !s_lost ? 1 : -1;
}

void imgpu_cuda_prepare(void)
{
    pthread_once(&s_once, start_thread);
}

int imgpu_cuda_available(void)
{
    pthread_once(&s_once, start_thread);
    pthread_mutex_lock(&s_lock);
    if (s_thread_started) {
        pthread_join(s_thread, NULL);
        s_thread_started = 0;
    }
    if (!s_probed)
        probe(); /* the thread could not be started */
    int lost = s_lost;
    pthread_mutex_unlock(&s_lock);
    if (lost) {
        imgpu_error("no usable GPU: %s", s_lost_why);
        return 0;
    }
    if (!s_usable)
        imgpu_error("no usable GPU: %s", s_why);
    return s_usable;
}

int imgpu__cuda_probe_running(void)
{
    pthread_mutex_lock(&s_lock);
    int r = s_thread_started;
    pthread_mutex_unlock(&s_lock);
    return r;
}

void imgpu__cuda_join_probe(void)
{
    pthread_mutex_lock(&s_lock);
    if (s_thread_started) {
        pthread_join(s_thread, NULL);
        s_thread_started = 0;
    }
    pthread_mutex_unlock(&s_lock);
}

static size_t parse_bytes(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0)
        return SIZE_MAX;
    switch (*end) {
    case 'k': case 'K': v *= 1024.0; break;
    case 'm': case 'M': v *= 1024.0 * 1024.0; break;
    case 'g': case 'G': v *= 1024.0 * 1024.0 * 1024.0; break;
    default: break;
    }
    return v >= (double)SIZE_MAX ? SIZE_MAX : (size_t)v;
}

int imgpu__cuda_reserve(size_t bytes, size_t already_held)
{
    size_t free_b = 0, total_b = 0;
    cudaError_t e = cudaMemGetInfo(&free_b, &total_b);
    if (e != cudaSuccess)
        return imgpu__cuda_fail(e, "cudaMemGetInfo");
    const char *env = getenv("IMGPU_CUDA_MEM_LIMIT");
    if (env && *env) {
        size_t cap = parse_bytes(env);
        size_t left = cap > already_held ? cap - already_held : 0;
        if (bytes > left) {
            imgpu_error("out of device memory: need %zu MiB more, IMGPU_CUDA_MEM_LIMIT=%s leaves %zu MiB",
                        bytes >> 20, env, left >> 20);
            return IMGPU_CUDA_OOM;
        }
    }
    /* keep 64 MiB for the driver, the kernels' stacks and other processes */
    size_t slack = (size_t)64 << 20;
    if (bytes + slack > free_b) {
        imgpu_error("out of device memory: need %zu MiB, %zu MiB free of %zu MiB", bytes >> 20, free_b >> 20,
                    total_b >> 20);
        return IMGPU_CUDA_OOM;
    }
    return 0;
}

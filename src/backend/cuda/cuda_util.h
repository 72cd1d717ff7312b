/* cuda_util.h — shared by the CUDA backend's host files: the checked-call macro (every
 * CUDA call and launch is checked; the first failure records the call and CUDA's message,
 * then jumps to the function's one cleanup label), and the device-memory budget. */
#ifndef IMGPU_CUDA_UTIL_H
#define IMGPU_CUDA_UTIL_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "cuda_backend.h"
#include "tuning.h"

/* Records "CUDA error in WHAT: <message>" (clearing a non-sticky error state so the next
 * call starts clean) and returns -1, or IMGPU_CUDA_OOM for an allocation failure. */
int imgpu__cuda_fail(cudaError_t e, const char *what);

/* Inside a function with `int rc` and a `fail:` label. */
#define IMGPU_CUDA_TRY(call)                                   \
    do {                                                       \
        cudaError_t e_ = (call);                               \
        if (e_ != cudaSuccess) {                               \
            rc = imgpu__cuda_fail(e_, #call);                  \
            goto fail;                                         \
        }                                                      \
    } while (0)

/* Waits for a probe thread started by imgpu_cuda_prepare (the process must not exit while
 * that thread is inside the CUDA runtime: exit's teardown would crash it). */
void imgpu__cuda_join_probe(void);
/* 1 while the background probe thread has been started and not yet joined. */
int imgpu__cuda_probe_running(void);

/* Checks that `bytes` more device memory fit: under the free memory the driver reports and
 * under IMGPU_CUDA_MEM_LIMIT (bytes, or with a K/M/G suffix) when that variable is set, counting
 * what imgpu already holds. 0, or IMGPU_CUDA_OOM with a message. */
int imgpu__cuda_reserve(size_t bytes, size_t already_held);

/* A source image as a CUDA array with two texture objects over it (texture.c creates and
 * destroys them). RGB is stored as RGBA: textures have no 3-channel format. */
typedef struct imgpu__cuda_tex {
    cudaArray_t array;        /* NULL when the views sample the packed buffer itself */
    const void *pitched;      /* that buffer (texture over pitched linear memory) */
    cudaSurfaceObject_t surf; /* RGB only: the RGB->RGBA kernel writes through it */
    cudaTextureObject_t linear, point;
    int w, h, channels;
    int gather;               /* 1: the array allows tex2Dgather (cudaArrayTextureGather) */
    unsigned char bg[4];
    /* views replaced while kernels enqueued before may still sample them (a new source
     * address for the in-place views, a new background): destroyed once `done` completes */
    struct {
        cudaTextureObject_t linear, point;
        cudaEvent_t done; /* made once per slot, recorded at each retirement */
        int live;
    } retired[4];
} imgpu__cuda_tex;

/* 1 when textures can sample a packed w x channels image at d_src in place (pitched linear
 * memory): 1, 2 or 4 channels, a row pitch that is a multiple of the texture pitch alignment
 * and a base address aligned to the device's texture alignment. */
int imgpu__cuda_tex_pitched_ok(const void *d_src, int w, int h, int channels);
/* Benchmarks only: 1 makes every texture an array copy, to compare the two. */
void imgpu__cuda_tex_force_array(int on);

/* The process's tuning config (src/cuda/tuning.c: tuning.h's defaults and the environment's
 * sweep variables, read on the first call; the variant setters of tuning.h change it between
 * runs). Pass it to every launcher that takes a `const imgpu_tuning *`. */
const imgpu_tuning *imgpu__cuda_tuning(void);

/* Fill t from a packed device image: in place when imgpu__cuda_tex_pitched_ok (d_src must then
 * stay untouched while t is in use), else by a copy into t's array (reused when the size
 * matches); the texture objects are recreated when the background or the buffer changes.
 * gather: a gray image goes into an array that allows tex2Dgather (never in place: gathers
 * need an array), where the device's gather size limit allows; t->gather says whether t's
 * array allows them (such an array also stays for later loads that do not ask for gathers).
 * *held tracks imgpu's device bytes. 0, -1 or IMGPU_CUDA_OOM. */
int imgpu__cuda_tex_load(imgpu__cuda_tex *t, const unsigned char *d_src, int w, int h, int channels,
                         const unsigned char bg[4], int gather, cudaStream_t s, size_t *held);
void imgpu__cuda_tex_destroy(imgpu__cuda_tex *t, size_t *held);
/* Tests: 1 when the last 8-bit rotation that any pipeline or session ran took gray bicubic's
 * taps by gathers (pipeline.c), so a test comparing it with point fetches knows both ran. */
int imgpu__cuda_last_rotate_gathered(void);

#endif

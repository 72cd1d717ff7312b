/* cuda_util.h — shared by the CUDA backend's host files: the checked-call macro (every
 * CUDA call and launch is checked; the first failure records the call and CUDA's message,
 * then jumps to the function's one cleanup label), and the device-memory budget. */
#ifndef IMGPU_CUDA_UTIL_H
#define IMGPU_CUDA_UTIL_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "cuda_backend.h"

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

/* Checks that `bytes` more device memory fit: under the free memory the driver reports and
 * under IMGPU_CUDA_MEM_LIMIT (bytes, or with a K/M/G suffix) when that variable is set, counting
 * what imgpu already holds. 0, or IMGPU_CUDA_OOM with a message. */
int imgpu__cuda_reserve(size_t bytes, size_t already_held);

/* Keep [ptr, ptr + bytes) in L2 for the stream's next kernels (best effort; l2.c), and undo it. */
void imgpu__cuda_l2_keep(cudaStream_t s, const void *ptr, size_t bytes);
void imgpu__cuda_l2_release(cudaStream_t s);

/* A source image as a CUDA array with two texture objects over it (texture.c creates and
 * destroys them). RGB is stored as RGBA: textures have no 3-channel format. */
typedef struct imgpu__cuda_tex {
    cudaArray_t array;
    cudaSurfaceObject_t surf; /* RGB only: the RGB->RGBA kernel writes through it */
    cudaTextureObject_t linear, point;
    int w, h, channels;
    unsigned char bg[4];
} imgpu__cuda_tex;

/* Fill t from a packed device image, reusing t's array when the size matches and recreating
 * the texture objects when the background changes; *held tracks imgpu's device bytes.
 * 0, -1 or IMGPU_CUDA_OOM. Call only when no kernel still reads t (stream synchronized). */
int imgpu__cuda_tex_load(imgpu__cuda_tex *t, const unsigned char *d_src, int w, int h, int channels,
                         const unsigned char bg[4], cudaStream_t s, size_t *held);
void imgpu__cuda_tex_destroy(imgpu__cuda_tex *t, size_t *held);

#endif

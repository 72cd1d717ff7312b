/* cuda_backend.h — the CUDA backend's host-side entry points (src/cuda/).
 * Compiled only when CMake found a CUDA toolkit (IMGPU_HAVE_CUDA); ops.c dispatches here.
 * Status codes: 0 success; -1 error (message recorded); IMGPU_CUDA_OOM out of device memory
 * (message recorded, the sticky state cleared), which `--device auto` answers by falling
 * back to the CPU. */
#ifndef IMGPU_CUDA_BACKEND_H
#define IMGPU_CUDA_BACKEND_H

#include "../image.h"
#include "../ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#define IMGPU_CUDA_OOM (-2)

/* 1 when a usable device is present; 0 otherwise, with the reason recorded as the error
 * (no device, driver older than the runtime, ...). Probes once and caches the answer. */
int imgpu_cuda_available(void);
/* Starts the probe (and so CUDA's context creation) on a background thread; returns at once. */
void imgpu_cuda_prepare(void);
/* Frees the backend's cached device and pinned memory (safe to call when nothing is held). */
void imgpu_cuda_shutdown(void);

int imgpu_cuda_pipeline_run(const imgpu_image *in, const imgpu_op *ops, int n, imgpu_image **out);
int imgpu_cuda_histogram(const imgpu_image *in, imgpu_histogram *out);

#ifdef __cplusplus
}
#endif
#endif

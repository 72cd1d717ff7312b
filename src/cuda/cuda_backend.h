/* cuda_backend.h — the CUDA backend's host-side entry points (src/cuda/).
 * Compiled only when CMake found a CUDA toolkit (IMGPU_HAVE_CUDA); ops.c dispatches here
 * (its CUDA entry in the backend table). Includes the op floor (op.h), never the dispatcher.
 * Status codes: 0 success; -1 error (message recorded); IMGPU_CUDA_OOM out of device memory
 * (message recorded, the sticky state cleared), which `--device auto` answers by falling
 * back to the CPU. */
#ifndef IMGPU_CUDA_BACKEND_H
#define IMGPU_CUDA_BACKEND_H

#include <cuda_runtime_api.h>

#include "../image.h"
#include "../op.h"

#ifdef __cplusplus
extern "C" {
#endif

#define IMGPU_CUDA_OOM (-2)
/* A sticky error (illegal address, launch failure, ...): the CUDA context is unusable for the
 * rest of the process. imgpu does not call cudaDeviceReset (other threads' sessions, the
 * viewer's interop resources would dangle); from then on imgpu_cuda_available() says no, so
 * `auto` runs everything after it, including the op that faulted, on the CPU. */
#define IMGPU_CUDA_STICKY (-3)

/* 1 when a usable device is present; 0 otherwise, with the reason recorded as the error
 * (no device, driver older than the runtime, ...). Probes once and caches the answer. */
int imgpu_cuda_available(void);
/* Starts the probe (and so CUDA's context creation) on a background thread; returns at once. */
void imgpu_cuda_prepare(void);
/* Where the probe stands, without waiting: 1 usable, -1 not usable (no device, no driver, a
 * sticky fault), 0 still starting or never started. *started_ms (may be NULL): milliseconds
 * since the probe started (0 when it has not). `auto`'s cost rule (ops.c) reads it. */
int imgpu_cuda_state(double *started_ms);
/* Frees the backend's cached device and pinned memory (safe to call when nothing is held).
 * Returns 1, freeing nothing, when the probe is still creating CUDA's context: nothing was
 * run on the GPU then, and the caller should leave with _exit() rather than wait for (or
 * race) a start-up it no longer needs. 0 otherwise. */
int imgpu_cuda_shutdown(void);

int imgpu_cuda_pipeline_run(const imgpu_image *in, const imgpu_op *ops, int n, imgpu_image **out);
int imgpu_cuda_histogram(const imgpu_image *in, imgpu_histogram *out);
/* 8- or 16-bit full-resolution histograms (op.h imgpu_histogram_full; counts malloc'ed). */
int imgpu_cuda_histogram_full(const imgpu_image *in, imgpu_histogram_full *out);

/* Sessions: a stream, pinned staging and device buffers of one's own, for front ends that
 * keep images on the GPU (the viewer re-runs ops on a resident source every frame; batch mode
 * alternates two sessions so that one uploads while the other computes). Not thread-safe:
 * one thread per session. Every call returns 0, -1 or IMGPU_CUDA_OOM with a message.
 *  - upload: copies `in` into pinned staging (after the session's earlier work finished) and
 *    enqueues the host-to-device copy; returns without waiting for it.
 *  - run: enqueues ops[0..n) on the uploaded source (which stays intact, so runs can repeat);
 *    *d_out (device memory owned by the session, valid until its next run or upload) and the
 *    shape of the result. n == 0 gives the source itself.
 *  - download: the last result into a new host image; waits for the stream. */
typedef struct imgpu_cuda_session imgpu_cuda_session;
imgpu_cuda_session *imgpu_cuda_session_new(void);
void imgpu_cuda_session_free(imgpu_cuda_session *s);
cudaStream_t imgpu_cuda_session_stream(const imgpu_cuda_session *s);
int imgpu_cuda_session_upload(imgpu_cuda_session *s, const imgpu_image *in);
int imgpu_cuda_session_run(imgpu_cuda_session *s, const imgpu_op *ops, int n, const unsigned char **d_out,
                           int *w, int *h, int *channels);
int imgpu_cuda_session_download(imgpu_cuda_session *s, imgpu_image **out);

#ifdef __cplusplus
}
#endif
#endif

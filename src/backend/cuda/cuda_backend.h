/* cuda_backend.h — the CUDA backend's host-side entry points (src/cuda/).
 * Compiled only when CMake found a CUDA toolkit (IMGPU_HAVE_CUDA); ops.c dispatches here
 * (its CUDA entry in the backend table). Includes the op floor (op.h), never the dispatcher.
 * Status codes: 0 success; -1 error (message recorded); IMGPU_CUDA_OOM out of device memory
 * (message recorded, the sticky state cleared), which `--device auto` answers by falling
 * back to the CPU. */
#ifndef IMGPU_CUDA_BACKEND_H
#define IMGPU_CUDA_BACKEND_H

#include <cuda_runtime_api.h>

#include "image.h"
#include "op.h"

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
/* upload from device memory: a copy of the packed 8-bit image at d (complete: its producer
 * has finished) on the session's stream becomes the source. */
int imgpu_cuda_session_upload_device(imgpu_cuda_session *s, const unsigned char *d, int w, int h, int c);
int imgpu_cuda_session_run(imgpu_cuda_session *s, const imgpu_op *ops, int n, const unsigned char **d_out,
                           int *w, int *h, int *channels);
int imgpu_cuda_session_download(imgpu_cuda_session *s, imgpu_image **out);
/* Device images (device_image.c): enqueues ops[0..n) on the packed w x h x c image of b bytes a
 * sample at d_in (16-byte aligned; complete when this is called, i.e. its producer finished or
 * was enqueued on the session's stream: nothing here waits for another stream; and unchanged
 * until the work is done), the last op
 * writing the packed result into d_out (16-byte aligned, the result's size; n == 0: a copy).
 * Intermediates live in the session's buffers. No waiting. */
int imgpu_cuda_session_run_device(imgpu_cuda_session *s, const unsigned char *d_in, int w, int h, int c, int b,
                                  const imgpu_op *ops, int n, unsigned char *d_out);

/* ---- nvJPEG (src/cuda/jpeg.c; built when CMake finds the toolkit's nvJPEG) ------------------
 * One per GPU worker thread, on the current device: the hardware decoder (the GPU's NVJPG
 * engines, batched) where the GPU has one, nvJPEG's CUDA decoder, the CUDA encoder, and a pool
 * of IMGPU_JPEG_BATCH device buffers for the decoded images (grown to the largest image seen,
 * never shrunk: the device memory it holds is at most IMGPU_JPEG_BATCH x the largest
 * w x h x channels decoded). Not thread-safe. */
#ifdef IMGPU_HAVE_NVJPEG
#define IMGPU_JPEG_BATCH 16
enum { IMGPU_JPEG_CPU = 0, IMGPU_JPEG_HW = 1, IMGPU_JPEG_CUDA = 2 };
/* Which decoder takes a JPEG, from its markers alone (host, no GPU): IMGPU_JPEG_HW for
 * baseline or extended Huffman, 8-bit, gray or YCbCr 4:4:4/4:2:2/4:2:0/4:4:0, at most 16000
 * pixels a side; IMGPU_JPEG_CUDA for the same but progressive; IMGPU_JPEG_CPU for the rest
 * (CMYK/YCCK, RGB-coded, arithmetic, 12-bit, lossless, other samplings, and a baseline file
 * whose one scan holds the wrong count of restart markers: data cut short, issue 25).
 * *channels: 1 or 3. */
int imgpu_cuda_jpeg_route(const unsigned char *b, size_t n, int *channels);
typedef struct imgpu_cuda_jpeg imgpu_cuda_jpeg;
imgpu_cuda_jpeg *imgpu_cuda_jpeg_new(void);
void imgpu_cuda_jpeg_free(imgpu_cuda_jpeg *j);
/* 1 when the hardware decoder is in use. */
int imgpu_cuda_jpeg_hardware(const imgpu_cuda_jpeg *j);
/* Decodes n (<= IMGPU_JPEG_BATCH) JPEGs, each routed (route[i], channels[i], w[i] x h[i]),
 * into the pool: d_img[i] (valid until the next decode) and ok[i] (1 decoded, with how[i]
 * IMGPU_JPEG_HW or IMGPU_JPEG_CUDA; 0: nvJPEG refused it, the caller decodes it on the CPU).
 * Returns when the images are complete. 0, IMGPU_CUDA_OOM or -1 / IMGPU_CUDA_STICKY (a
 * device error: the images are not decoded). */
int imgpu_cuda_jpeg_decode(imgpu_cuda_jpeg *j, int n, const unsigned char *const *data, const size_t *len,
                           const int *route, const int *channels, const int *w, const int *h,
                           const unsigned char **d_img, int *ok, int *how);
/* The same, but it returns once the engines' batch is enqueued (the images the CUDA decoder
 * takes, rare: progressive files and the engines' refusals, are still complete on return), and
 * work enqueued on `after` from then on runs after every image is written: a caller's host
 * thread goes on (to its next batch's walk) while the engines decode. The pool stays in use
 * until `after` gets past that point; synchronize it before the next decode. A device fault
 * in the engines then surfaces at that synchronize (or the caller's), not as this call's
 * status: ok[] says what was handed to them. */
int imgpu_cuda_jpeg_decode_after(imgpu_cuda_jpeg *j, int n, const unsigned char *const *data, const size_t *len,
                                 const int *route, const int *channels, const int *w, const int *h,
                                 const unsigned char **d_img, int *ok, int *how, cudaStream_t after);
typedef struct imgpu_cuda_jpeg_params {
    int quality;        /* 1..100 */
    int subsampling;    /* 444, 422 or 420 */
    int optimize, progressive;
} imgpu_cuda_jpeg_params;
/* Encodes the packed 8-bit image at d (1 or 3 channels) after the work already on `stream`;
 * *out (malloc'ed) the JPEG bitstream. 0; 1 when nvJPEG cannot encode it this way (the
 * caller encodes on the CPU); -1 / IMGPU_CUDA_OOM / IMGPU_CUDA_STICKY with a message. */
int imgpu_cuda_jpeg_encode(imgpu_cuda_jpeg *j, const unsigned char *d, int w, int h, int c,
                           const imgpu_cuda_jpeg_params *p, cudaStream_t stream, unsigned char **out,
                           size_t *len);
/* One image of imgpu_cuda_jpeg_encode_many: 8 bits, c 1 or 3 channels, rows `pitch` bytes
 * apart, ready after the work already on `after`. */
typedef struct imgpu_cuda_jpeg_src {
    const unsigned char *d;
    size_t pitch;
    int w, h, c;
    cudaStream_t after;
} imgpu_cuda_jpeg_src;
/* Encodes n images, IMGPU_JPEG_ENC_SLOTS at a time, each slot an encoder state on a stream of
 * its own: the SMs encode the next images while the host fetches the bitstream of the one
 * before. status[i]: 0 with out[i] (malloc'ed, len[i] bytes); 1 when nvJPEG cannot encode it
 * this way (the caller encodes it on the CPU); -1 with its message in errors[i] (malloc'ed;
 * NULL when out of memory). Returns 0, or IMGPU_CUDA_STICKY / -1 when the device failed (the
 * items not done then carry that error). */
#define IMGPU_JPEG_ENC_SLOTS 8
int imgpu_cuda_jpeg_encode_many(imgpu_cuda_jpeg *j, int n, const imgpu_cuda_jpeg_src *src,
                                const imgpu_cuda_jpeg_params *p, unsigned char **out, size_t *len, int *status,
                                char **errors);
#endif

#ifdef __cplusplus
}
#endif
#endif

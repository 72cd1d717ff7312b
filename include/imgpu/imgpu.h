/* imgpu.h — the public C API of libimgpu: `#include <imgpu/imgpu.h>`, link with -limgpu
 * (pkg-config imgpu, or find_package(imgpu) and imgpu::imgpu in CMake).
 *
 * What is here: the image model (image.h: imgpu_image, rows top to bottom, channels
 * interleaved gray / gray+alpha / RGB / RGBA, 8 or 16 bits, row stride in bytes), loading and
 * saving (io.h: imgpu_image_load, _load_memory, _save, _encode), the ops (op.h: imgpu_op with
 * `kind` and the union `u`, each op's constructor imgpu_op_<name>, IMGPU_MODE_*,
 * IMGPU_FILTER_*), running them (ops.h: imgpu_pipeline_run, imgpu_device, IMGPU_DEVICE_*), the
 * error rule (error.h: imgpu_error_message), and below: contexts, wrapped caller memory and the
 * version. Only imgpu_ names are exported by libimgpu.so; names with a double underscore
 * (imgpu__*) that the headers mention are internal and not part of the library's ABI.
 *
 * Errors: functions return 0 / -1 (constructors: a pointer / NULL) and record one message,
 * which imgpu_error_message() returns. The message is thread-local: read it on the thread that
 * made the failing call, before that thread's next imgpu call.
 *
 * Ownership (the GLFW rule): whoever creates an object destroys it; every free/destroy
 * function accepts NULL; a failed create leaves nothing to free; an output argument is written
 * only on success. An image from imgpu_image_load, imgpu_pipeline_run or imgpu_context_run owns
 * its pixels (imgpu_image_free frees both). An image from imgpu_image_wrap does not: the caller
 * keeps the memory alive while the image is in use and frees it after imgpu_image_free. Input
 * images are never written; results are always new images.
 *
 * Thread safety: every function may be called from any number of threads at once, except
 *  - the process-wide settings imgpu_set_limits, imgpu_set_quiet and imgpu_backend_cpu_threads
 *    (set them once, before other threads call imgpu);
 *  - one image may be read by many threads at once, but not freed while another uses it;
 *  - an imgpu_context may be shared by threads (its calls run in parallel on the CPU; on the
 *    GPU they are serialized on the device's one cached stream), but imgpu_context_destroy
 *    must not race with calls on the same context;
 *  - imgpu_batch_main (the `imgpu batch` command) runs one batch at a time per process;
 *  - device work (imgpu_context_run_device and the calls near it) on one context is serialized
 *    on the context's private stream; contexts run in parallel.
 */
#ifndef IMGPU_IMGPU_H
#define IMGPU_IMGPU_H

#include "version.h"

#include "error.h"
#include "image.h"
#include "meta.h"
#include "op.h"
#include "ops.h"
#include "io.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "0.1.0": the library's version (IMGPU_VERSION_STRING is the headers' version; the two
 * differ only when a program runs against another build than it was compiled with). */
const char *imgpu_version_string(void);
/* 1 when this library was built with the CUDA backend (a GPU may still be absent). */
int imgpu_built_with_cuda(void);

/* ---- contexts -------------------------------------------------------------------------------
 * A context is the device a program works on and the state kept there between calls. Creating
 * one is cheap and touches no GPU: the device is resolved and its state (the CUDA context, its
 * stream, pinned staging and device buffers) is created on the first call that needs it and
 * reused by every later call, so a program pays CUDA's start-up once, not per image.
 * IMGPU_DEVICE_AUTO picks per job (ops.h: the CPU for jobs it finishes before a GPU could,
 * the GPU otherwise, the CPU when there is no usable GPU); IMGPU_DEVICE_CUDA fails where there
 * is none (the message says why). */
typedef struct imgpu_context imgpu_context;

/* NULL with a message only for an unknown device value or out of memory. */
imgpu_context *imgpu_context_create(imgpu_device device);
/* A context on one CUDA device (cuda_device >= 0, with IMGPU_DEVICE_CUDA; -1: the process's default
 * device, as imgpu_context_create). Device images must live on that device; host images are
 * uploaded to it, run there and downloaded. A number past the machine's devices fails on the
 * first call (imgpu_context_resolve), saying how many there are. */
imgpu_context *imgpu_context_create_on(imgpu_device device, int cuda_device);
/* The CUDA device number the context was created on, or -1 (the default device). */
int imgpu_context_cuda_ordinal(const imgpu_context *ctx);
void imgpu_context_destroy(imgpu_context *ctx);
/* The device the context was created for (as asked: AUTO stays AUTO). */
imgpu_device imgpu_context_device(const imgpu_context *ctx);
/* Resolve the device now (creating its state): 0 and *resolved (CPU or CUDA), or -1 with the
 * reason (IMGPU_DEVICE_CUDA without a usable GPU). Later calls return the same answer. */
int imgpu_context_resolve(imgpu_context *ctx, imgpu_device *resolved);
/* Run ops[0..n) on `in` (n == 0: a copy). 0 and *out (a new owned image), or -1 with a
 * message. *used (may be NULL): the backend that ran it. */
int imgpu_context_run(imgpu_context *ctx, const imgpu_image *in, const imgpu_op *ops, int n,
                      imgpu_image **out, imgpu_device *used);
/* The same, the result written into the caller's image `out` (it must already have the
 * result's width, height, channels and depth: imgpu_pipeline_plan gives them; its stride may
 * be padded). Today the result is computed into library memory and copied row by row. */
int imgpu_context_run_into(imgpu_context *ctx, const imgpu_image *in, const imgpu_op *ops, int n,
                           imgpu_image *out, imgpu_device *used);
/* Full-resolution histograms (op.h: imgpu_histogram_full; free with imgpu_histogram_full_free). */
int imgpu_context_histogram(imgpu_context *ctx, const imgpu_image *in, imgpu_histogram_full *out,
                            imgpu_device *used);

/* ---- caller-owned memory --------------------------------------------------------------------
 * An image over the caller's host memory, without a copy: width x height pixels of `channels`
 * (1..4) samples of `depth` bits (8, or 16 as native-endian uint16_t), row r at
 * data + r * stride (stride 0: width * channels * depth / 8; otherwise at least that). The
 * image does not own the memory (imgpu_image_free frees only the struct). 16-bit data must be
 * 2-byte aligned, with an even stride. NULL with a message for a bad shape. Inputs are only
 * read, so `data` may point to read-only memory when the image is used as an input. */
imgpu_image *imgpu_image_wrap(void *data, int width, int height, int channels, int depth,
                              size_t stride);


/* ---- images in device memory (CUDA) ----------------------------------------------------------
 * An imgpu_device_image is an image in CUDA device memory, laid out as imgpu_image is (rows top
 * to bottom, channels interleaved, 8 or 16 bits, row r at data + r * stride) on CUDA device
 * `device`. imgpu_device_image_wrap describes caller memory (a torch or CuPy tensor, a
 * cudaMalloc'ed buffer) without a copy and without owning it; the results of
 * imgpu_context_run_device own theirs (stream-ordered allocations on the context's stream).
 *
 * Streams: a `stream` argument is a cudaStream_t passed as void *: NULL (0) is the legacy
 * default stream, IMGPU_STREAM_PER_THREAD the per-thread default stream, any other value a
 * stream the caller created. A context works on a private stream of its own (with its buffers:
 * two contexts run in parallel on one GPU). A call first makes that stream wait, through an
 * event, for the work the caller has enqueued on `stream` so far (so a producer's kernels that
 * write the input are finished before imgpu reads it), enqueues its own work, then makes
 * `stream` wait for that work (so what the caller enqueues on `stream` afterwards sees the
 * result), and returns without waiting for the GPU. *done (may be NULL; free it with
 * imgpu_device_event_free) completes when the call's work, every read of `in` included, has
 * finished: `in` must stay allocated until then.
 *
 * Layout: inputs with any row stride are taken; tight rows (stride = width * channels * bytes)
 * at a 16-byte-aligned address are read in place, anything else is first gathered into the
 * context's buffer by a device-to-device copy (never through the host). 16-bit data must be
 * 2-byte aligned. Only the device the context runs on (imgpu_context_cuda_device) is taken.
 * Errors: -1 with a message, as everywhere (a build without CUDA: "built without CUDA"). */
#define IMGPU_STREAM_PER_THREAD ((void *)2)

typedef struct imgpu_device_image {
    void *data;              /* device pointer */
    int width, height, channels, depth;
    size_t stride;           /* bytes between rows */
    int device;              /* CUDA device ordinal */
    int owns;                /* 1: a result (freed by imgpu_device_image_free); 0: wrapped */
    void *internal;          /* the library's (the stream that allocated it) */
} imgpu_device_image;

/* Wraps caller device memory (stride 0: tight rows). NULL with a message for a bad shape. */
imgpu_device_image *imgpu_device_image_wrap(void *data, int width, int height, int channels, int depth,
                                            size_t stride, int device);
/* Frees the struct and, when it owns its memory, the memory: after the work enqueued so far on
 * each of streams[0..nstreams) (the streams its readers used; the allocating context's own
 * work is always waited for). nstreams < 0: after all work on the device (a device-wide wait:
 * for memory handed to readers whose streams are unknown). NULL is accepted. */
void imgpu_device_image_free(imgpu_device_image *im, void *const *streams, int nstreams);

/* A point in a stream's work (cudaEvent_t): completed or not. */
typedef struct imgpu_device_event imgpu_device_event;
/* 1 completed, 0 not yet, -1 with a message (a device error). */
int imgpu_device_event_query(const imgpu_device_event *e);
/* Waits on the host until e completes. 0 or -1. */
int imgpu_device_event_wait(const imgpu_device_event *e);
/* Makes work enqueued on `stream` from now on wait for e (no host wait). 0 or -1. */
int imgpu_device_event_order(const imgpu_device_event *e, void *stream);
/* An event at the end of the work enqueued on `stream` so far. NULL with a message. */
imgpu_device_event *imgpu_device_event_record(void *stream);
/* The same for a stream of CUDA device `device` (its legacy default stream, 1 or NULL, too),
 * whichever device the calling thread has: it is left as it was. device -1: the thread's. */
imgpu_device_event *imgpu_device_event_record_on(int device, void *stream);
void imgpu_device_event_free(imgpu_device_event *e);

/* The CUDA device the context's device work runs on (the process's default device,
 * IMGPU_CUDA_DEVICE or 0), creating its stream: 0 and *device, or -1 (no usable GPU). */
int imgpu_context_cuda_device(imgpu_context *ctx, int *device);
/* The context's private stream (a cudaStream_t), for callers that order their own work after
 * it; NULL with a message when there is no GPU. */
void *imgpu_context_cuda_stream(imgpu_context *ctx);

/* Runs ops[0..n) on a device image (n == 0: a copy): *out, a new device image that owns its
 * memory, on the same device. See "Streams" above for `stream` and *done. */
int imgpu_context_run_device(imgpu_context *ctx, const imgpu_device_image *in, const imgpu_op *ops, int n,
                             void *stream, imgpu_device_image **out, imgpu_device_event **done);
/* The same, written into the caller's device image `out` (the result's exact width, height,
 * channels and depth: imgpu_pipeline_plan gives them; any row stride). */
int imgpu_context_run_device_into(imgpu_context *ctx, const imgpu_device_image *in, const imgpu_op *ops, int n,
                                  void *stream, imgpu_device_image *out, imgpu_device_event **done);
/* Full-resolution histograms of a device image (as imgpu_context_histogram), counted on its GPU
 * after the work enqueued on `stream`; *out is complete on return. 0 or -1. */
int imgpu_context_histogram_device(imgpu_context *ctx, const imgpu_device_image *in, void *stream,
                                   imgpu_histogram_full *out);
/* Copies between host and device images of one shape (either stride), ordered on `stream` as
 * the runs are; host memory is read or written before the call returns only when it waits:
 * a download waits for its copy (the host image is complete on return), an upload stages
 * the host rows first (the host image may be reused on return). */
int imgpu_context_upload(imgpu_context *ctx, const imgpu_image *in, void *stream, imgpu_device_image **out);
int imgpu_context_download(imgpu_context *ctx, const imgpu_device_image *in, void *stream, imgpu_image **out);

/* ---- batched JPEG on the GPU (nvJPEG) ---------------------------------------------------------
 * Decodes n JPEG files' bytes into device images (8-bit gray or RGB, EXIF orientation applied
 * when auto_orient): the JPEGs the GPU's hardware engines take are decoded there, batched
 * (nvJPEG's CUDA decoder takes progressive ones), the rest (and any other format) on the CPU and
 * uploaded. Item i's result is out[i], or NULL with its message in errors[i] (malloc'ed; the
 * caller frees it): a corrupt item does not fail the others. Results are ready for work the
 * caller enqueues on `stream` afterwards. 0, or -1 when nothing could be done (no GPU). */
int imgpu_context_decode_batch(imgpu_context *ctx, int n, const unsigned char *const *data, const size_t *len,
                               int auto_orient, void *stream, imgpu_device_image **out, char **errors);
/* Encodes a device image (8-bit, 1 or 3 channels) as JPEG on the GPU after the work enqueued on
 * `stream`: 0 and *buf (malloc'ed, *len bytes); 1 when nvJPEG cannot encode it this way (or this
 * build has no nvJPEG: the caller encodes on the CPU); -1 with a message. */
int imgpu_context_encode_jpeg(imgpu_context *ctx, const imgpu_device_image *in, int quality, int subsampling,
                              int optimize, int progressive, void *stream, unsigned char **buf, size_t *len);
/* Encodes n device images as imgpu_context_encode_jpeg does, several at once: while the SMs
 * encode the next images, the host fetches the bytes of the one before. Item i runs after the
 * work enqueued on streams[i] (or on `stream` for all, when streams is NULL). status[i]: 0 with
 * buf[i] (malloc'ed, len[i] bytes); 1 when nvJPEG cannot encode it this way (not 8-bit gray or
 * RGB, or this build has no nvJPEG: the caller encodes it on the CPU); -1 with its message in
 * errors[i] (malloc'ed; the caller frees it). A failed item does not fail the others. Returns
 * 0, or -1 with a message when nothing could be done (no GPU; then every status is -1 or 1). */
int imgpu_context_encode_jpeg_batch(imgpu_context *ctx, int n, const imgpu_device_image *const *in, int quality,
                                    int subsampling, int optimize, int progressive, void *stream,
                                    void *const *streams, unsigned char **buf, size_t *len, int *status,
                                    char **errors);

#ifdef __cplusplus
}
#endif
#endif

/* imgpu.h — the public C API of libimgpu: `#include <imgpu/imgpu.h>`, link with -limgpu
 * (pkg-config imgpu, or find_package(imgpu) and imgpu::imgpu in CMake).
 *
 * What is here: the image model (image.h: imgpu_image, rows top to bottom, channels
 * interleaved gray / gray+alpha / RGB / RGBA, 8 or 16 bits, row stride in bytes), loading and
 * saving (io.h: imgpu_image_load, _load_memory, _save, _encode), the ops (op.h: imgpu_op with
 * `kind` and the union `u`, imgpu_op_equalize / _clahe / _rotate, IMGPU_MODE_*,
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
 *  - imgpu_batch_main (the `imgpu batch` command) runs one batch at a time per process.
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

#ifdef __cplusplus
}
#endif
#endif

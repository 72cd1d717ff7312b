/* ops.h — the operations API every front end speaks to: runs a pipeline of ops (op.h) on
 * one backend, chosen from a small table of backends in ops.c (the CPU, and CUDA when built
 * with it). `auto` picks where a job finishes first; when CUDA fails with out-of-memory or a
 * sticky fault, the CPU takes over with a notice. On the GPU the whole chain stays on the
 * device (one upload, one download). What an op means — kinds, parameters, defaults,
 * validation, geometry, the plan and its limits — is the op floor, op.h, included here so
 * that every front end needs only this header.
 */
#ifndef IMGPU_OPS_H
#define IMGPU_OPS_H

#include <stdint.h>

#include "device.h"
#include "image.h"
#include "op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Full-resolution histograms (imgpu_histogram_full, op.h) of an 8- or 16-bit image on
 * `device`; *out's counts are malloc'ed, freed with imgpu_histogram_full_free. */
int imgpu_histogram_full_compute(const imgpu_image *in, imgpu_device device,
                                 imgpu_histogram_full *out, imgpu_device *used);

/* Run ops[0..n) on `in`. Returns a new image, or NULL with an error recorded.
 * `device` picks the backend; *used (may be NULL) says which one ran. The plan
 * (imgpu_pipeline_plan with the process-wide limits) is checked first, before any
 * allocation, on either backend. */
imgpu_image *imgpu_pipeline_run(const imgpu_image *in, const imgpu_op *ops, int n,
                                imgpu_device device, imgpu_device *used);

int imgpu_histogram_compute(const imgpu_image *in, imgpu_device device, imgpu_histogram *out,
                            imgpu_device *used);

/* Resolve `auto` to a concrete backend (checks for a usable GPU once, prints the fallback
 * notice once). Returns -1 with an error when `cuda` is asked for and unavailable. */
int imgpu_device_resolve(imgpu_device requested, imgpu_device *resolved);
const char *imgpu_device_name(imgpu_device d);
/* The device a name (imgpu_device_name's: auto, cpu or cuda) stands for: 0 and *d, or -1 (no
 * message: --device and IMGPU_DEVICE word their errors themselves). The one parser of them. */
int imgpu_device_parse(const char *v, imgpu_device *d);
/* The default of --device from IMGPU_DEVICE (auto, cpu or cuda), for every front end: sets *d
 * when the variable is set; an option given on the command line wins. -1 with an error
 * naming the variable when it holds anything else; 0 otherwise. */
int imgpu_device_from_env(imgpu_device *d);
/* The CPU backend splits an op's rows over every core (IMGPU_CPU_THREADS sets how many). A
 * front end that already runs several images at once (batch's workers) caps the threads of
 * the ops started from the calling thread at n (0: no cap). Same bytes whatever the count. */
void imgpu_backend_cpu_threads(int n);
/* How many threads the CPU backend uses for one op (IMGPU_CPU_THREADS, else the cores); the
 * single-image commands encode a PNG output on as many (io.h, imgpu_image_save_threads). */
int imgpu_backend_cpu_thread_count(void);
/* Optional: start backend initialization early (CUDA context creation on a background
 * thread) so it overlaps decoding; and release cached backend resources at the end. */
void imgpu_backend_prepare(imgpu_device requested);
/* The same for one job of this shape (n ops; n == 0: a histogram): with `auto`, CUDA is
 * started only when the cost rule could send the job to the GPU (ops.c). */
void imgpu_backend_prepare_for(imgpu_device requested, int width, int height, int channels, int depth,
                               const imgpu_op *ops, int n);
/* `auto`'s two rules as numbers (ops.c; tests/unit/test_auto_rule.c holds them to each other):
 * whether to start CUDA for a job the CPU would take cpu_ms over, with gpu_bytes in and out;
 * and whether the job then runs on the CPU, CUDA being in imgpu_cuda_state's `state` (0:
 * starting, since_ms ago; 1: ready; -1: none). */
int imgpu__auto_start_worth(double cpu_ms, size_t gpu_bytes);
int imgpu__auto_cpu_first(double cpu_ms, size_t gpu_bytes, int state, double since_ms);
/* Without starting CUDA: 1, with the reason in why, when this machine plainly has no NVIDIA
 * GPU to use (no driver's device files, or CUDA_VISIBLE_DEVICES hides every GPU); 0 when one
 * may be there. For a message only: what a front end tells a user who ran on the CPU. */
int imgpu_backend_gpu_absent(char *why, size_t n);
/* Returns 1 when CUDA is still starting (nothing ran on it): the caller should then end the
 * process with _exit() after flushing its output, instead of waiting for the start-up it
 * no longer needs; 0 when everything was released. */
int imgpu_backend_shutdown(void);

#ifdef __cplusplus
}
#endif
#endif

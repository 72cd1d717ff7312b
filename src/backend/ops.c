/* ops.c — the dispatcher (ops.h): a table of backends (the CPU, and CUDA when built with it),
 * `auto`'s cost rule that picks one per job, and the one fall-back rule that hands a job the
 * GPU could not finish to the CPU. What the ops mean lives in the op floor, op.{h,c}. */
#include "ops.h"
#include "error.h"
#include "op/op_table.h"
#include "cpu/cpu.h"
#ifdef IMGPU_HAVE_CUDA
#include "cuda/cuda_backend.h"
#endif

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the backends ---------------------------------------------------------------------------
 * One entry per backend, GLFW's platform table: what the dispatcher may ask of a backend.
 * Each function returns 0, or -1 with a message recorded; the CUDA backend also returns
 * IMGPU_CUDA_OOM or IMGPU_CUDA_STICKY (cuda_backend.h), which `auto` answers on the CPU
 * (run_job). A pipeline writes *out only on success. The CPU entry comes first: it is the
 * reference, always available, and the one that takes over. */
typedef struct imgpu_backend {
    const char *name;
    imgpu_device device;
    int (*available)(void); /* 1, or 0 with the reason recorded as the error */
    int (*pipeline)(const imgpu_image *in, const imgpu_op *ops, int n, imgpu_image **out);
    int (*histogram)(const imgpu_image *in, imgpu_histogram *out);
    int (*histogram_full)(const imgpu_image *in, imgpu_histogram_full *out);
} imgpu_backend;

static int cpu_pipeline(const imgpu_image *in, const imgpu_op *ops, int n, imgpu_image **out)
{
    imgpu_image *cur;
    if (n == 0) {
        cur = imgpu_image_copy(in);
    } else {
        /* the first op reads the caller's image itself (ops never write their input): no
         * copy, so a stage holds input + result + working memory, as imgpu_pipeline_plan
         * counts it */
        cur = imgpu_cpu_run(in, &ops[0]);
        for (int i = 1; cur && i < n; i++) {
            imgpu_image *next = imgpu_cpu_run(cur, &ops[i]);
            imgpu_image_free(cur);
            cur = next;
        }
    }
    if (!cur)
        return -1;
    *out = cur;
    return 0;
}

static int cpu_available(void) { return 1; }

static const imgpu_backend s_backends[] = {
    {"cpu", IMGPU_DEVICE_CPU, cpu_available, cpu_pipeline, imgpu_cpu_histogram, imgpu_cpu_histogram_full},
#ifdef IMGPU_HAVE_CUDA
    {"cuda", IMGPU_DEVICE_CUDA, imgpu_cuda_available, imgpu_cuda_pipeline_run, imgpu_cuda_histogram,
     imgpu_cuda_histogram_full},
#endif
};
#define CPU_BACKEND (&s_backends[0])

/* The entry of a concrete device; NULL when this build has none (CUDA without the toolkit). */
static const imgpu_backend *backend_for(imgpu_device d)
{
    for (size_t i = 0; i < sizeof s_backends / sizeof s_backends[0]; i++)
        if (s_backends[i].device == d)
            return &s_backends[i];
    return NULL;
}

/* One job for a backend: a pipeline or one of the histograms, with where its result goes. */
typedef struct job {
    enum { JOB_PIPELINE, JOB_HISTOGRAM, JOB_HISTOGRAM_FULL } kind;
    const imgpu_image *in;
    const imgpu_op *ops;
    int n;
    imgpu_image **image;
    imgpu_histogram *hist;
    imgpu_histogram_full *hist_full;
} job;

static int job_call(const imgpu_backend *b, const job *j)
{
    switch (j->kind) {
    case JOB_PIPELINE: return b->pipeline(j->in, j->ops, j->n, j->image);
    case JOB_HISTOGRAM: return b->histogram(j->in, j->hist);
    case JOB_HISTOGRAM_FULL: return b->histogram_full(j->in, j->hist_full);
    }
    return imgpu_error("unknown job %d", (int)j->kind);
}

/* After a failed run on a GPU backend: 1 when the CPU should run the job instead — `auto`
 * after running out of device memory or a sticky fault (the GPU is gone for this process,
 * see IMGPU_CUDA_STICKY), with a one-line notice; 0 when the error stands. */
static int cpu_takes_over(int rc, imgpu_device requested)
{
#ifdef IMGPU_HAVE_CUDA
    if ((rc != IMGPU_CUDA_OOM && rc != IMGPU_CUDA_STICKY) || requested == IMGPU_DEVICE_CUDA)
        return 0;
    imgpu_notice("%s; running on the CPU", imgpu_error_message());
    imgpu_error_clear();
    return 1;
#else
    (void)rc;
    (void)requested;
    return 0;
#endif
}

/* Run j on the backend of `d` (already resolved from `requested`), the fall-back rule
 * written once for every job: a GPU backend's result, or its error unless cpu_takes_over;
 * then the CPU. *used (may be NULL) is set when the GPU succeeded, and before the CPU runs. */
static int run_job(const job *j, imgpu_device requested, imgpu_device d, imgpu_device *used)
{
    const imgpu_backend *b = backend_for(d);
    if (b && b != CPU_BACKEND) {
        int rc = job_call(b, j);
        if (rc == 0) {
            if (used)
                *used = b->device;
            return 0;
        }
        if (!cpu_takes_over(rc, requested))
            return -1;
    }
    if (used)
        *used = IMGPU_DEVICE_CPU;
    return job_call(CPU_BACKEND, j);
}

void imgpu_backend_prepare(imgpu_device requested)
{
#ifdef IMGPU_HAVE_CUDA
    if (requested != IMGPU_DEVICE_CPU)
        imgpu_cuda_prepare();
#else
    (void)requested;
#endif
}

int imgpu_backend_shutdown(void)
{
#ifdef IMGPU_HAVE_CUDA
    return imgpu_cuda_shutdown();
#else
    return 0;
#endif
}

/* The driver's files and CUDA_VISIBLE_DEVICES do not change while imgpu runs: looked at once
 * (auto asks before every job). */
static pthread_once_t s_absent_once = PTHREAD_ONCE_INIT;
static char s_absent_why[160];   /* "" when a GPU may be there */

static void look_for_gpu(void)
{
    /* The NVIDIA driver, once loaded, makes /dev/nvidiactl (or, under WSL2, /dev/dxg) and
     * /proc/driver/nvidia; none of them: no GPU to use, whatever a CUDA start would say. A
     * file check, not a CUDA call: the caller chose not to pay CUDA's start-up (nor load
     * libcuda, which tests/cli/auto_start.sh watches for). */
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    if (access("/dev/nvidiactl", F_OK) != 0 && access("/dev/dxg", F_OK) != 0 &&
        access("/proc/driver/nvidia", F_OK) != 0)
        snprintf(s_absent_why, sizeof s_absent_why, "no NVIDIA GPU or driver was found");
    else if (vis && (!*vis || !strcmp(vis, "-1")))
        snprintf(s_absent_why, sizeof s_absent_why,
                 "no NVIDIA GPU or driver was found (CUDA_VISIBLE_DEVICES='%.40s' shows none)", vis);
}

int imgpu_backend_gpu_absent(char *why, size_t n)
{
    pthread_once(&s_absent_once, look_for_gpu);
    if (!s_absent_why[0])
        return 0;
    snprintf(why, n, "%s", s_absent_why);
    return 1;
}

void imgpu_backend_cpu_threads(int n) { imgpu_cpu_threads_cap(n); }

int imgpu_backend_cpu_thread_count(void) { return imgpu_cpu_threads(); }

int imgpu_device_from_env(imgpu_device *d)
{
    const char *v = getenv("IMGPU_DEVICE");
    if (!v || !*v)
        return 0;
    if (imgpu_device_parse(v, d) < 0)
        return imgpu_error("invalid IMGPU_DEVICE '%s' (use auto, cpu or cuda)", v);
    return 0;
}

int imgpu_device_parse(const char *v, imgpu_device *d)
{
    static const imgpu_device devices[] = {IMGPU_DEVICE_AUTO, IMGPU_DEVICE_CPU, IMGPU_DEVICE_CUDA};
    for (size_t i = 0; i < sizeof devices / sizeof devices[0]; i++)
        if (!strcmp(v, imgpu_device_name(devices[i]))) {
            *d = devices[i];
            return 0;
        }
    return -1;
}

const char *imgpu_device_name(imgpu_device d)
{
    switch (d) {
    case IMGPU_DEVICE_CPU: return "cpu";
    case IMGPU_DEVICE_CUDA: return "cuda";
    default: return "auto";
    }
}

int imgpu_device_resolve(imgpu_device requested, imgpu_device *resolved)
{
    if (requested == IMGPU_DEVICE_CPU) {
        *resolved = IMGPU_DEVICE_CPU;
        return 0;
    }
    const imgpu_backend *gpu = backend_for(IMGPU_DEVICE_CUDA);
    if (!gpu) {
        if (requested == IMGPU_DEVICE_CUDA)
            return imgpu_error("--device cuda: this imgpu was built without CUDA support");
        *resolved = IMGPU_DEVICE_CPU;
        return 0;
    }
    /* auto where the file check finds no GPU: the CPU, with the same one notice, without
     * asking CUDA (whose answer takes longer where a driver is installed but hidden) */
    char absent[160];
    if (requested == IMGPU_DEVICE_AUTO && imgpu_backend_gpu_absent(absent, sizeof absent))
        imgpu_error("%s", absent);
    else if (gpu->available()) {
        *resolved = IMGPU_DEVICE_CUDA;
        return 0;
    }
    if (requested == IMGPU_DEVICE_CUDA)
        return -1; /* available() recorded why */
    static int noticed;
    if (!noticed) {
        noticed = 1;
        imgpu_notice("%s; running on the CPU", imgpu_error_message());
    }
    imgpu_error_clear();
    *resolved = IMGPU_DEVICE_CPU;
    return 0;
}

/* ---- auto: run each job where it will finish first ------------------------------------------
 * CUDA's start-up (the context creation imgpu_backend_prepare starts on a background thread)
 * costs about 300 ms on an H100 machine, seconds when many processes start at once; a small
 * job is done on the CPU long before. So `auto` estimates both and takes the smaller:
 *   CPU   sum over the ops of (samples or output pixels) x a cost per sample or pixel;
 *   CUDA  what is left of the start-up (0 once it is done; 300 ms minus the time since it
 *         began while it runs, at least 50 ms) + 10 ms of first-use cost (allocation, module
 *         load) + the bytes in and out x 0.4 ns (pinned staging copy and PCIe) + kernels (the
 *         kernels take microseconds: bench/RESULTS.md).
 * The CPU costs are one core's, measured on this project's CPU machine with 4K images
 * (2026-11-23; `imgpu OP --device cpu` minus a plain copy), divided by the CPU backend's
 * threads for jobs it splits (cpu_cost_ms); being off by a factor of two moves
 * the break-even a little, never a 16x16 image onto the GPU or an 8K rotation onto the CPU.
 * The choice is made on cost alone, whatever the probe has found so far: a job the GPU would
 * win goes on to imgpu_device_resolve, which takes the CPU (saying so once) when there is no
 * usable GPU. */
#define IMGPU_CUDA_START_MS 300.0
#define IMGPU_CUDA_LEFT_MIN_MS 50.0   /* the least start-up charged while it is in flight */
#define IMGPU_CUDA_FIRST_USE_MS 10.0
#define IMGPU_CUDA_NS_PER_BYTE 0.4

static double cpu_cost_ms_shape(int width, int height, int channels, int depth, const imgpu_op *ops, int n)
{
    int w = width, h = height;
    double ns = 0;
    const double depth_f = depth == 16 ? 1.3 : 1.0;
    for (int i = 0; i < n; i++) {
        const imgpu_op_desc *d = imgpu_op_desc_of(ops[i].kind);
        if (!d)
            continue;
        if (d->cpu_ns)
            ns += d->cpu_ns(w, h, channels, &ops[i]);
        if (d->out_size)
            d->out_size(w, h, &ops[i], &w, &h);
    }
    /* The CPU backend splits a job this size over its threads (src/cpu/parallel.c; jobs under
     * about 65536 samples a thread stay on one): the per-core costs above, divided. */
    double threads = imgpu_cpu_threads();
    double work = width * (double)height * channels;
    if (threads > 1 && work > 65536.0 * threads)
        ns /= threads;
    return ns * depth_f / 1e6;
}

static double cpu_cost_ms(const imgpu_image *in, const imgpu_op *ops, int n)
{
    return cpu_cost_ms_shape(in->width, in->height, in->channels, in->depth, ops, n);
}

static double cuda_cost_ms(double start_left_ms, size_t bytes)
{
    return start_left_ms + IMGPU_CUDA_FIRST_USE_MS + (double)bytes * IMGPU_CUDA_NS_PER_BYTE / 1e6;
}

/* The run-time rule as numbers: state is imgpu_cuda_state's (0: starting, `since_ms` ago; 1:
 * ready; -1: none, or no GPU by the file check, where only the cost counts). While CUDA starts,
 * what is left of it is charged, never less than IMGPU_CUDA_LEFT_MIN_MS. */
int imgpu__auto_cpu_first(double cpu_ms, size_t gpu_bytes, int state, double since_ms)
{
    double left = 0;
    if (state == 0)
        left = since_ms < IMGPU_CUDA_START_MS - IMGPU_CUDA_LEFT_MIN_MS ? IMGPU_CUDA_START_MS - since_ms
                                                                        : IMGPU_CUDA_LEFT_MIN_MS;
    return cpu_ms <= cuda_cost_ms(left, gpu_bytes);
}

/* The start rule (imgpu_backend_prepare_for) as numbers: start CUDA only for a job that the
 * run-time rule above gives the GPU while the start-up is still in flight, i.e. with the least
 * start-up it charges then (IMGPU_CUDA_LEFT_MIN_MS). A job between that and the GPU's cost with
 * no start-up at all (the rule before issue 30) started CUDA and then ran on the CPU unless the
 * start-up had ended before the decode did: the start-up thread and the driver's work
 * (context creation, mappings under the process's memory lock) then ran beside the CPU
 * backend's threads and cost it 5-18% (an 8K bicubic rotation on the H200 machine). Leaving
 * such a job on the CPU costs at most IMGPU_CUDA_LEFT_MIN_MS by the same model. */
int imgpu__auto_start_worth(double cpu_ms, size_t gpu_bytes)
{
    return cpu_ms > cuda_cost_ms(IMGPU_CUDA_LEFT_MIN_MS, gpu_bytes);
}

/* 1 when `auto` should run this job on the CPU without waiting for CUDA. */
static int auto_prefers_cpu(double cpu_ms, size_t gpu_bytes)
{
#ifdef IMGPU_HAVE_CUDA
    double since = 0;
    char absent[160];
    /* no GPU by the file check: no start-up to wait for, so the choice is the cost rule's
     * alone, the same on every machine without one (then imgpu_device_resolve says so) */
    int st = imgpu_backend_gpu_absent(absent, sizeof absent) ? -1 : imgpu_cuda_state(&since);
    return imgpu__auto_cpu_first(cpu_ms, gpu_bytes, st, since);
#else
    (void)cpu_ms;
    (void)gpu_bytes;
    return 1;
#endif
}

static size_t image_bytes(const imgpu_image *im)
{
    return (size_t)im->width * im->height * im->channels * (size_t)(im->depth / 8);
}

/* The backend a job runs on: `auto` takes the CPU when the cost rule says it finishes first
 * (cpu_ms against CUDA for gpu_bytes in and out), else the request is resolved as usual. */
static int pick_device(imgpu_device requested, double cpu_ms, size_t gpu_bytes, imgpu_device *d)
{
    if (requested == IMGPU_DEVICE_AUTO && auto_prefers_cpu(cpu_ms, gpu_bytes)) {
        *d = IMGPU_DEVICE_CPU;
        return 0;
    }
    return imgpu_device_resolve(requested, d);
}

/* A histogram: about 1.5 ns a sample on one core, against the upload of the image. */
static int pick_device_histogram(imgpu_device requested, const imgpu_image *in, imgpu_device *d)
{
    return pick_device(requested, 1.5e-6 * (double)image_bytes(in), image_bytes(in), d);
}

/* `auto` starts CUDA only for a job the GPU wins by the run-time rule while the start-up is
 * still in flight (imgpu__auto_start_worth). Any other job runs on the CPU (or would, unless
 * the start-up raced the decode and won), and a process that touched CUDA pays for the
 * start-up in flight even when it ends without it (measured on an H100: 50-300 ms of a 1080p
 * equalize's 35-200 ms; on the H200, 5% of an 8K rotation run on the CPU beside it:
 * bench/RESULTS.md), so it is never begun. */
void imgpu_backend_prepare_for(imgpu_device requested, int width, int height, int channels, int depth,
                               const imgpu_op *ops, int n)
{
#ifdef IMGPU_HAVE_CUDA
    char absent[160];
    if (requested == IMGPU_DEVICE_AUTO && imgpu_backend_gpu_absent(absent, sizeof absent))
        return;   /* nothing to start: a job the GPU would win gets resolve's one notice */
    if (requested == IMGPU_DEVICE_AUTO) {
        const size_t in_bytes = (size_t)width * height * channels * (size_t)(depth / 8);
        size_t out_bytes = in_bytes;
        double cpu_ms = 1.5e-6 * (double)in_bytes;   /* a histogram (n == 0) */
        imgpu_plan plan;
        if (n > 0) {
            if (imgpu_pipeline_plan(width, height, channels, depth, ops, n, NULL, NULL, &plan) < 0) {
                imgpu_error_clear();   /* the load or the run says why, with the file's name */
                return;
            }
            out_bytes = (size_t)plan.out_w * plan.out_h * plan.channels * (size_t)(plan.depth / 8);
            cpu_ms = cpu_cost_ms_shape(width, height, channels, depth, ops, n);
        } else {
            out_bytes = 0;
        }
        if (!imgpu__auto_start_worth(cpu_ms, in_bytes + out_bytes))
            return;
    }
#else
    (void)width;
    (void)height;
    (void)channels;
    (void)depth;
    (void)ops;
    (void)n;
#endif
    imgpu_backend_prepare(requested);
}

imgpu_image *imgpu_pipeline_run(const imgpu_image *in, const imgpu_op *ops, int n,
                                imgpu_device device, imgpu_device *used)
{
    imgpu_device d;
    if (in->depth != 8 && in->depth != 16) {
        imgpu_error("%d-bit images are not supported", in->depth);
        return NULL;
    }
    /* the bounds first, before either backend allocates anything (front ends check the same
     * plan earlier, with the file's name; this is the check no caller can skip) */
    imgpu_plan plan;
    if (imgpu_pipeline_plan(in->width, in->height, in->channels, in->depth, ops, n, NULL, NULL, &plan) < 0)
        return NULL;
    size_t out_bytes = (size_t)plan.out_w * plan.out_h * plan.channels * (size_t)(plan.depth / 8);
    if (pick_device(device, cpu_cost_ms(in, ops, n), image_bytes(in) + out_bytes, &d) < 0)
        return NULL;
    imgpu_image *out = NULL; /* every backend runs every op at 8 and 16 bits */
    const job j = {JOB_PIPELINE, in, ops, n, &out, NULL, NULL};
    return run_job(&j, device, d, used) == 0 ? out : NULL;
}

int imgpu_histogram_compute(const imgpu_image *in, imgpu_device device, imgpu_histogram *out,
                            imgpu_device *used)
{
    imgpu_device d;
    if (in->depth != 8)
        return imgpu_error("%d-bit images are not supported yet", in->depth);
    if (pick_device_histogram(device, in, &d) < 0)
        return -1;
    const job j = {JOB_HISTOGRAM, in, NULL, 0, NULL, out, NULL};
    return run_job(&j, device, d, used);
}

int imgpu_histogram_full_compute(const imgpu_image *in, imgpu_device device, imgpu_histogram_full *out,
                                 imgpu_device *used)
{
    imgpu_device d;
    if (in->depth != 8 && in->depth != 16)
        return imgpu_error("%d-bit images are not supported", in->depth);
    if (pick_device_histogram(device, in, &d) < 0)
        return -1;
    const job j = {JOB_HISTOGRAM_FULL, in, NULL, 0, NULL, NULL, out};
    return run_job(&j, device, d, used);
}

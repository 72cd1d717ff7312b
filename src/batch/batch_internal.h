/* batch_internal.h — what the files of `imgpu batch` share; not an API (batch.h is):
 *   batch.c           the command line (options, --help) and one run from start to summary;
 *   batch_plan.c      the inputs (files, folders, globs), output names and path rules (the
 *                     extensions batch takes, --name's rule), resume against OUTDIR's manifest;
 *   batch_run.c       the pipeline: decode threads -> op stage -> encode threads, the tokens
 *                     that bound memory, Ctrl-C;
 *   batch_item.c      what every stage does to one item: reports, failures, progress, its ops
 *                     on the CPU, its load's options and checks;
 *   batch_gpu.c       the op stage on the GPU (double-buffered CUDA sessions, nvJPEG, the GPU
 *                     fault policy) and --stage-copy's plain copy;
 *   batch_queue.c     the bounded queue between the stages;
 *   batch_manifest.c  OUTDIR/.imgpu-batch, what made each output. */
#ifndef IMGPU_BATCH_INTERNAL_H
#define IMGPU_BATCH_INTERNAL_H

#include "batch.h"
#include "batch_manifest.h"
#include "error.h"
#include "image.h"
#include "io.h"
#include "ops.h"
#include "cli/options.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };
#define MAX_OPS 32
#define MAX_DEVICES 64   /* GPU workers (listed ids, each repeated per_id times) */
#define IMGPU_BATCH_LATER 16   /* >= IMGPU_JPEG_BATCH: what one nvJPEG batch gathers */

typedef struct bopts {
    imgpu_op ops[MAX_OPS];
    int nops;
    const char *outdir;
    const char *format;      /* --format: output extension; NULL keeps each input's */
    const char *name;        /* --name template */
    int overwrite, dry_run, quiet, verbose, jobs, stage_copy;
    int shard_k, shard_n;    /* 1-based K of N; N = 1: everything */
    imgpu_device device;
    int devices[MAX_DEVICES], ndevices;
    imgpu_run_options run;   /* limits, --depth and the output options, from options.h's table */
    char **inputs;
    int ninputs;
} bopts;

typedef struct bjob {
    char *in;       /* input path as found */
    char *rel;      /* subfolder under a directory input ("" or "a/b/") */
    char *out;      /* output path, or NULL when planning failed */
    const char *why;/* planning failure (static or owned in why_buf) */
    char *why_buf;
    int skip;       /* output exists (no --overwrite) */
    off_t in_size;
    long long in_mtime; /* ns; with in_size, the input's identity in the manifest */
    const char *settings; /* what makes this output (batch_manifest.h): joblist's, by format */
    int stale;      /* an imgpu_manifest_state: the existing output was made otherwise */
    const char *recorded; /* its recorded settings (IMGPU_MANIFEST_OTHER_SETTINGS) */
} bjob;

typedef struct joblist {
    bjob *v;
    size_t n, cap;
    int input_errors;   /* inputs that did not exist or could not be read */
    int special;        /* FIFOs, devices, sockets with an image name in a folder: skipped */
    int not_images;     /* files in a folder whose extension names no image format */
    char *not_image_names[3];   /* the first few, for the summary */
    int quiet;
    char *settings[8];  /* the manifest's settings string, by output format (imgpu_format) */
} joblist;

typedef struct stats {
    atomic_int done, failed;
    atomic_int jpeg_hw, jpeg_cuda, jpeg_cpu, jpeg_enc;   /* nvJPEG: who decoded, GPU encodes */
    atomic_int jpeg_turned;  /* nvJPEG decodes turned upright on the GPU (EXIF orientation) */
    atomic_int jpeg_first;   /* the first JPEGs, on the CPU by design (jpeg_cpu: refused ones) */
    /* IMGPU_BATCH_PROFILE=1: where the time goes, in thread-microseconds per stage */
    atomic_llong t_read, t_gpu_decode, t_gpu_ops, t_write, t_setup;
    int failed_before;  /* failures found before the pipeline (not in `total`) */
    atomic_llong in_bytes, out_bytes;
    int total, skipped, quiet;
    double t0, last_print, interval;
} stats;

typedef struct item {
    bjob *job;
    imgpu_image *in, *out;
    imgpu_meta *meta;   /* the input's ICC, EXIF, XMP and text: written with the output */
    /* A JPEG for nvJPEG: its bytes, read and checked but not decoded (in is NULL), the
     * decoder that takes it and the shape it decodes to. */
    unsigned char *jpeg;
    size_t jpeg_len;
    int route, w, h, c;
    /* The EXIF orientation (2..8) the GPU turns nvJPEG's decode upright from, by a flip op
     * run before the batch's ops (w x h is the stored size); 0: upright as stored. */
    int orient;
    /* The output already encoded on the GPU (out is NULL): a JPEG bitstream. */
    unsigned char *bits;
    size_t bits_len;
} item;

typedef struct tokens {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    int left; /* below 0 for a while when the op stage turns out to hold no images */
} tokens;

/* A run split over processes (batch.h: imgpu_batch_plan, imgpu_batch_stage); NULL: a whole run. */
typedef struct batch_split {
    imgpu_batch_todo_fn on_todo;     /* plan: each file to write, nothing run */
    const char *const *pairs;        /* stage: the files (in, out pairs) instead of argv's inputs */
    size_t npairs;
    const char *tag;                 /* stage: the outputs' temp-name tag */
    imgpu_batch_staged_fn on_staged; /* stage: each output staged */
    void *ctx;
    pthread_mutex_t lock;            /* on_staged one at a time */
    /* stage: where the share sits in its plan (0, 0: the share is the whole list): the plan's
     * file count and its JPEG inputs before pairs[0], so that which decoder takes each JPEG
     * follows the whole run's rule (batch_run.c: imgpu__batch_auto_cpu, jpeg_split) */
    size_t plan_ntodo, plan_jpegs_before;
} batch_split;

enum { STAGE_PENDING, STAGE_DECIDED, STAGE_ABORT };

typedef struct batch {
    const bopts *o;
    bjob **todo;             /* the files to process, in order */
    size_t ntodo;
    atomic_size_t next;      /* the decode threads' cursor into todo */
    imgpu__queue *to_gpu, *to_enc;
    tokens tok;
    stats st;
    /* The op stage is decided once CUDA's start-up (begun after the plan) answers.
     * The decode threads start before that and wait for the decision only with their first
     * image in hand, so the start-up overlaps decoding. */
    pthread_mutex_t stage_lock;
    pthread_cond_t stage_cv;
    atomic_int stage;        /* STAGE_PENDING, STAGE_DECIDED or STAGE_ABORT */
    int use_gpu_stage;       /* 0: decode threads run the ops (CPU backend); set before stage */
    atomic_int gpu_workers_alive;
    atomic_int busy_encoders;
    atomic_int sticky_seen;  /* a sticky GPU fault was reported (one file failed for it) */
    int jobs;
    /* nvJPEG's set-up costs ~1 s (bench/nvjpeg_setup.c): the first `jpeg_first_n` JPEGs are
     * decoded on the CPU while it runs, and a batch with no more JPEGs than that never sets it
     * up. todo[nvjpeg_from] is the first JPEG nvJPEG may take (ntodo: none). */
    size_t nvjpeg_from, njpeg;
    long jpeg_first_n;
    /* --device auto took the CPU for the whole batch: it holds no more images than the CPU
     * finishes while a GPU would set up (2 x jpeg_first_n; imgpu__batch_auto_cpu), so CUDA is
     * never started. */
    int auto_cpu;
    imgpu_manifest *mf;      /* OUTDIR's manifest: each output's line goes in before its rename */
    batch_split *split;      /* a staged run (outputs handed over, no manifest); NULL: usual */
} batch;

typedef struct gpu_worker {
    batch *B;
    int device;
    pthread_t tid;
} gpu_worker;

/* The load options of one job: the batch's limits, and a hook that checks the job's
 * pipeline and output (imgpu_pipeline_plan, the format) from the input's header, before it is
 * decoded. Lives on the caller's stack for the load (lo.on_shape_ctx points at it). */
typedef struct batch_load {
    imgpu_load_options lo;
    batch *B;
    const bjob *job;
} batch_load;

/* ---- batch_plan.c ---- */
int imgpu__batch_add_input(joblist *l, const char *arg, const struct stat *outdir_st, int globbed);
int imgpu__batch_cmp_job(const void *a, const void *b);
int imgpu__batch_plan(const bopts *b, joblist *l);
int imgpu__batch_manifest_plan(const bopts *b, joblist *l, imgpu_manifest *mf, int *legacy);
void imgpu__batch_free_jobs(joblist *l);
/* A staged run's files: the jobs in -> out of pairs (2n strings) with their settings, instead
 * of the inputs' walk and plan. 0, or -1 + error. */
int imgpu__batch_given(const bopts *b, joblist *l, const char *const *pairs, size_t n);

int imgpu__batch_known_ext(const char *ext);   /* an image extension batch takes (no dot) */
const char *imgpu__batch_name_rule(const char *name);   /* why a --name result is refused, or NULL */

/* ---- batch_item.c: what every stage does to one item ---- */
void imgpu__batch_report(const char *fmt, ...) IMGPU_PRINTF(1, 2);
/* A file that failed: reported as imgpu__batch_report(fmt, ...) does, or, in an in-process run
 * (imgpu_batch_run), handed to its caller as (path, reason) instead. */
void imgpu__batch_failed(const char *path, const char *reason, const char *fmt, ...) IMGPU_PRINTF(3, 4);
/* The in-process run's callback (NULL: the command line's stderr reports). */
void imgpu__batch_set_fail_hook(imgpu_batch_fail_fn fn, void *ctx);
double imgpu__batch_now(void);
void imgpu__batch_progress(stats *st, int final);
void imgpu__batch_set_tty(int tty);
void imgpu__batch_item_free(item *it);
void imgpu__batch_token_give(tokens *t);
void imgpu__batch_fail_item(batch *B, item *it, const char *msg);
void imgpu__batch_ops_for_channels(const bopts *o, int channels, imgpu_op *ops);
void imgpu__batch_ops_for(const bopts *o, const imgpu_image *in, imgpu_op *ops);
int imgpu__batch_cpu_ops(batch *B, item *it);
int imgpu__batch_jpeg_to_pixels(batch *B, item *it);
void imgpu__batch_load_options(batch *B, const bjob *job, batch_load *bl);
/* The bounds of a job's pipeline on a w x h image (imgpu_pipeline_plan) and whether its output
 * format holds the result: 0, or -1 with the error naming the file. */
int imgpu__batch_check_job(const batch *B, const bjob *job, int w, int h, int c, int depth);

/* ---- batch_run.c: the pipeline ---- */
int imgpu__batch_cores(void);
void imgpu__batch_catch_stop_signals(void);
int imgpu__batch_stop_signal(void);   /* the signal that stopped the batch, or 0 */
int imgpu__batch_run_pipeline(batch *B, int planned);
/* Read IMGPU_NVJPEG_CPU_FIRST into B->jpeg_first_n (default 4 per decode thread) and say
 * whether `--device auto` runs this batch on the CPU alone (sets B->auto_cpu). Call once the
 * list to run (todo) is known, before CUDA is started. */
int imgpu__batch_auto_cpu(batch *B);

/* ---- batch_gpu.c: the GPU stage, through the session door (session.h) ---- */
void *imgpu__batch_copy_stage_thread(void *arg);   /* arg: a gpu_worker */
/* A decode thread's read of todo[idx]: 1 when it read the file (an nvJPEG-bound JPEG kept as
 * bytes, or decoded, or an error), 0 when the caller loads it as usual. */
int imgpu__batch_jpeg_read(batch *B, item *it, size_t idx);
void *imgpu__batch_gpu_thread(void *arg);          /* arg: a gpu_worker */
int imgpu__batch_gpu_count(void);                  /* GPUs CUDA sees (< 0: none usable) */
int imgpu__batch_default_gpu(void);                /* IMGPU_CUDA_DEVICE, else 0 */

#endif

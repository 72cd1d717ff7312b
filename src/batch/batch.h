/* batch.h — `imgpu batch`: many images through a pipeline of decode threads, the GPU stage
 * and encode threads (src/batch/batch.c), and the bounded queue that joins the stages
 * (src/batch/batch_queue.c). */
#ifndef IMGPU_BATCH_H
#define IMGPU_BATCH_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The `batch` command: argv[0] is "batch". Returns the exit status (0, 1, 2). */
int imgpu_batch_main(int argc, char **argv);

/* The same run in-process, for libimgpu's callers (the Python module's imgpu.batch): no signal
 * handlers, no progress bar or summary, no change to the process's notices, allocator or CUDA
 * state (kept for the next call); each file that fails goes to on_fail (path, reason; called
 * from the batch's threads, one at a time) instead of stderr. Returns the exit status: 2 is a
 * usage error, its message in imgpu_usage_message() (options.h); so is the error that stopped a
 * run before its files (sum->fatal: OUTDIR not a folder, ...). *sum (may be NULL): the counts.
 * One batch at a time per process. */
typedef struct imgpu_batch_summary {
    int done, skipped, failed, stale;
    int fatal;   /* 1: the run stopped before its files, the message as above */
} imgpu_batch_summary;
typedef void (*imgpu_batch_fail_fn)(void *ctx, const char *path, const char *reason);
int imgpu_batch_run(int argc, char **argv, imgpu_batch_fail_fn on_fail, void *ctx,
                    imgpu_batch_summary *sum);

/* The process's allocator set for batches (glibc: one arena, image buffers kept in the heap and
 * reused rather than mapped afresh each time): what the `batch` command does at its start, for a
 * process that runs batches and little else (an imgpu.dask worker). Nothing elsewhere. */
void imgpu_batch_tune_allocator(void);

/* One batch split over processes (the Python module's imgpu.dask): one process, the client,
 * plans the run and is the one writer of OUTDIR's manifest; the others, the workers, write
 * outputs under temp names and hand them to the client, which records each one and then puts
 * it in place, the order imgpu batch itself keeps (batch_manifest.h). Every process must see
 * the inputs and OUTDIR at the same paths (a shared file system). */
typedef struct imgpu_batch_record {
    const char *in, *out;    /* the input, and its output (OUTDIR/...) */
    const char *staged;      /* the output, written whole and synced, as "DIR/.NAME.TAG.XXXXXX"
                              * beside out (the same folder, so a rename puts it in place) */
    const char *settings;    /* the manifest's SETTINGS for it */
    long long in_size, in_mtime_ns, out_size, out_mtime_ns;
} imgpu_batch_record;
typedef void (*imgpu_batch_todo_fn)(void *ctx, const char *in, const char *out);
typedef void (*imgpu_batch_staged_fn)(void *ctx, const imgpu_batch_record *r);

/* Keep each GPU's nvJPEG module (handles, states, decode pool) between batches of this process
 * (1) instead of setting it up again in each (0, the default: a command runs one batch). The
 * Python module turns it on: imgpu.batch and imgpu.dask's workers then pay nvJPEG's set-up once. */
void imgpu_batch_keep_state(int keep);
/* Frees the modules kept so far (their decode buffers: 32 of the largest image a GPU worker,
 * 0.8 GB for 4K RGB) and the GPU workers' kept sessions, and returns how many objects it freed;
 * a later batch sets nvJPEG up again, and keeps its state if still asked to. */
int imgpu_batch_release_state(void);
/* The plan of the run imgpu_batch_run would make with argv (inputs walked, output names, resume
 * against OUTDIR's manifest; OUTDIR created, and the lines a first run writes for outputs that
 * were there before the manifest), without running it: on_todo(ctx, in, out) for each file the
 * run would write, in the run's order; failures to on_fail; sum->done counts the files to
 * write. Returns imgpu_batch_run's status. */
int imgpu_batch_plan(int argc, char **argv, imgpu_batch_todo_fn on_todo, imgpu_batch_fail_fn on_fail,
                     void *ctx, imgpu_batch_summary *sum);
/* A worker's share: argv's options (its inputs are not read, but one must be there, as for the
 * command: the plan's argv as it is), the files
 * pairs[2i] -> pairs[2i + 1] (outputs under argv's -o OUTDIR, as the plan named them), run
 * through the usual pipeline, but each output is left staged under a temp name with `tag` in it
 * ([A-Za-z0-9_-], 1 to 40 bytes) and handed to on_staged (from the batch's threads, one at a
 * time; the record's strings live until it returns) instead of recorded and renamed; OUTDIR's
 * manifest is not read or written. Failures go to on_fail. Returns imgpu_batch_run's status. */
int imgpu_batch_stage(int argc, char **argv, const char *const *pairs, size_t npairs, const char *tag,
                      imgpu_batch_staged_fn on_staged, imgpu_batch_fail_fn on_fail, void *ctx,
                      imgpu_batch_summary *sum);
/* imgpu_batch_stage for a share cut from a plan of plan_ntodo files, with jpegs_before JPEG
 * inputs (by name: imgpu_format_from_path) before pairs[0] in the plan's order. A GPU run then
 * gives each JPEG the decoder the plan's whole run gives it (its first JPEGs go to libjpeg-turbo
 * while nvJPEG sets up, and `auto` keeps a small plan on the CPU), so the shares' outputs equal
 * the whole run's byte for byte however the plan is cut. plan_ntodo 0: the share alone. */
int imgpu_batch_stage_part(int argc, char **argv, const char *const *pairs, size_t npairs, size_t plan_ntodo,
                           size_t jpegs_before, const char *tag, imgpu_batch_staged_fn on_staged,
                           imgpu_batch_fail_fn on_fail, void *ctx, imgpu_batch_summary *sum);
/* The client's half: each staged output's line appended to OUTDIR's manifest, then the output
 * renamed into place (and its folder synced). A record that cannot be put in place (its staged
 * file gone or changed, the manifest refused, the rename failed) goes to on_fail with the
 * reason, and its staged file is removed (when it is a hidden name beside its output: a path
 * elsewhere is never touched). Returns how many were put in place, or -1 + error
 * when OUTDIR's manifest cannot be used at all (then nothing was put in place). */
long imgpu_batch_commit(const char *outdir, const imgpu_batch_record *r, size_t n,
                        imgpu_batch_fail_fn on_fail, void *ctx);

/* A bounded multi-producer, multi-consumer queue of pointers. push blocks while the queue is
 * full; pop blocks while it is empty and some producer is still running, and returns NULL
 * once every producer has called done and the queue is drained. */
typedef struct imgpu__queue imgpu__queue;
imgpu__queue *imgpu__queue_new(int capacity, int producers);
void imgpu__queue_free(imgpu__queue *q);
void imgpu__queue_push(imgpu__queue *q, void *item);
void *imgpu__queue_pop(imgpu__queue *q);
/* An item if one is waiting now, else NULL at once (never waits: NULL is not the end). */
void *imgpu__queue_try_pop(imgpu__queue *q);
void imgpu__queue_done(imgpu__queue *q);   /* one producer finished */

#ifdef __cplusplus
}
#endif
#endif

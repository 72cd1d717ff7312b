/* batch.h — `imgpu batch`: many images through a pipeline of decode threads, the GPU stage
 * and encode threads (src/batch/batch.c), and the bounded queue that joins the stages
 * (src/batch/batch_queue.c). */
#ifndef IMGPU_BATCH_H
#define IMGPU_BATCH_H

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

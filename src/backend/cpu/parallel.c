/* parallel.c — the CPU backend's thread helper (contract in parallel.h): rows cut into
 * contiguous parts, run by a pool of worker threads started on first use and kept for the
 * process (the caller's thread runs the first part, and any part no worker has taken yet).
 *
 * Why a pool: a pass over a 4K gray image takes a millisecond or two per core, and starting a
 * thread per part on every pass (equalize makes two passes) cost tens of microseconds each,
 * more on a loaded machine where a new thread waits for its first time slice.
 *
 * The pool: one queue of jobs (one per imgpu__cpu_parallel_rows call in flight, on that
 * caller's stack) under one mutex. A job's parts are claimed in order, each exactly once, by
 * whoever comes first: an idle worker, or the caller once it has run part 0. So a caller never
 * waits on a part nobody has started, whatever the other callers do (many caller threads, a
 * part that itself calls imgpu__cpu_parallel_rows, workers that could not be started): it only
 * waits for parts already running. Workers are started as calls need them (parts - 1, at most
 * IMGPU__CPU_MAX_THREADS - 1), block every signal, and are stopped and joined when the library
 * is unloaded or the process exits (valgrind-clean). After fork() the child has no workers: the
 * pool starts again empty there.
 *
 * Traps: the part bounds are computed in 64 bits (rows * p overflows int for tall images
 * with many threads); a part that could not get a thread still runs, once, on the caller's
 * thread — a histogram part skipped would silently lose counts. */
#include "parallel.h"
#include "image.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_once_t s_once = PTHREAD_ONCE_INIT;
static int s_threads = 1;      /* from the environment or the cores, read once */
static int s_forced = 0;       /* imgpu__cpu_threads_set, tests only */
static int s_small_jobs = 0;

static int clamp_threads(long n)
{
    return n < 1 ? 1 : n > IMGPU__CPU_MAX_THREADS ? IMGPU__CPU_MAX_THREADS : (int)n;
}

static void read_config(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    const char *env = getenv("IMGPU_CPU_THREADS");
    if (env && *env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (*end == '\0' && v >= 1)
            n = v; /* anything else (0, negative, junk) is ignored: the cores */
    }
    s_threads = clamp_threads(n);
}

/* A cap for ops started from this thread (imgpu_cpu_threads_cap): batch's workers, which
 * already run one image each on every core, set it to their share. 0: none. */
static _Thread_local int s_cap;

int imgpu__cpu_threads(void)
{
    pthread_once(&s_once, read_config);
    int n = s_forced ? s_forced : s_threads;
    return s_cap > 0 && s_cap < n ? s_cap : n;
}

int imgpu_cpu_threads(void) { return imgpu__cpu_threads(); }

void imgpu_cpu_threads_cap(int n) { s_cap = n > 0 ? clamp_threads(n) : 0; }

void imgpu__cpu_threads_set(int threads, int small_jobs)
{
    pthread_once(&s_once, read_config);
    s_forced = threads > 0 ? clamp_threads(threads) : 0;
    s_small_jobs = small_jobs != 0;
}

int imgpu__cpu_parts(int rows, size_t row_work, size_t part_cost)
{
    if (rows <= 1)
        return 1;
    int parts = imgpu__cpu_threads();
    if (parts > rows)
        parts = rows;
    if (!s_small_jobs) {
        const uint64_t work = (uint64_t)rows * (row_work ? row_work : 1);
        const uint64_t most = work / (IMGPU__CPU_MIN_PART_WORK + part_cost);
        if ((uint64_t)parts > most)
            parts = most < 1 ? 1 : (int)most;
    }
    return parts;
}

/* One imgpu__cpu_parallel_rows call in flight, on its caller's stack. next and left change
 * under s_mu only. */
typedef struct pool_job {
    imgpu__cpu_rows_fn fn;
    void *ctx;
    int rows, parts;
    int next;              /* the next part nobody has claimed; parts: all claimed */
    int left;              /* parts not finished yet */
    pthread_cond_t done;   /* signalled (under s_mu) when left reaches 0 */
    struct pool_job *link; /* the queue, while it has unclaimed parts */
} pool_job;

static pthread_mutex_t s_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t s_work = PTHREAD_COND_INITIALIZER; /* workers wait here for a job or the stop */
static pool_job *s_queue;                                /* jobs with unclaimed parts, oldest first */
static pthread_t s_worker[IMGPU__CPU_MAX_THREADS];
static int s_nworkers;   /* started and not yet stopped */
static int s_idle;       /* of them, waiting on s_work */
static int s_stop;       /* set at unload / exit: workers return */
static pthread_once_t s_pool_once = PTHREAD_ONCE_INIT;

static void run_part(const pool_job *j, int p)
{
    j->fn(j->ctx, p, (int)((int64_t)j->rows * p / j->parts), (int)((int64_t)j->rows * (p + 1) / j->parts));
}

/* Claim j's next part (s_mu held; j->next < j->parts); the job leaves the queue with its last. */
static int claim(pool_job *j)
{
    const int p = j->next++;
    if (j->next == j->parts) {
        pool_job **q = &s_queue;
        while (*q != j)
            q = &(*q)->link;
        *q = j->link;
    }
    return p;
}

/* A part of j has finished (s_mu held). j must not be touched after this by a worker: once
 * left is 0 and s_mu released, its caller returns and the job is gone. */
static void finish(pool_job *j)
{
    if (--j->left == 0)
        pthread_cond_signal(&j->done);
}

static void *worker_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&s_mu);
    for (;;) {
        while (!s_queue && !s_stop) {
            s_idle++;
            pthread_cond_wait(&s_work, &s_mu);
            s_idle--;
        }
        if (s_stop)
            break;
        pool_job *j = s_queue;
        const int p = claim(j);
        pthread_mutex_unlock(&s_mu);
        run_part(j, p);
        pthread_mutex_lock(&s_mu);
        finish(j);
    }
    pthread_mutex_unlock(&s_mu);
    return NULL;
}

/* Unload / exit: stop and join every worker (each finishes the part it is running first). */
__attribute__((destructor)) static void pool_stop(void)
{
    pthread_mutex_lock(&s_mu);
    s_stop = 1;
    const int n = s_nworkers;
    pthread_cond_broadcast(&s_work);
    pthread_mutex_unlock(&s_mu);
    for (int i = 0; i < n; i++)
        pthread_join(s_worker[i], NULL);
    pthread_mutex_lock(&s_mu);
    s_nworkers = 0;
    pthread_mutex_unlock(&s_mu);
}

/* fork(): s_mu is held across it, so the child gets a consistent pool, which it then empties:
 * its workers did not come with it, and the jobs queued belong to threads it does not have. */
static void fork_prepare(void) { pthread_mutex_lock(&s_mu); }
static void fork_parent(void) { pthread_mutex_unlock(&s_mu); }
static void fork_child(void)
{
    s_queue = NULL;
    s_nworkers = 0;
    s_idle = 0;
    pthread_cond_init(&s_work, NULL);
    pthread_mutex_unlock(&s_mu);
}

static void pool_init(void) { pthread_atfork(fork_prepare, fork_parent, fork_child); }

/* Start workers until there are `want` (s_mu held); stops at the first that cannot start. */
static void pool_grow(int want)
{
    if (s_stop)
        return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* inherited: signals go to the program's threads */
    while (s_nworkers < want && pthread_create(&s_worker[s_nworkers], NULL, worker_main, NULL) == 0)
        s_nworkers++;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void imgpu__cpu_parallel_rows(int rows, int parts, imgpu__cpu_rows_fn fn, void *ctx)
{
    if (rows <= 0)
        return;
    if (parts > rows)
        parts = rows;
    if (parts > IMGPU__CPU_MAX_THREADS)
        parts = IMGPU__CPU_MAX_THREADS;
    if (parts <= 1) {
        fn(ctx, 0, 0, rows);
        return;
    }
    pthread_once(&s_pool_once, pool_init);
    pool_job j = {.fn = fn, .ctx = ctx, .rows = rows, .parts = parts, .next = 1, .left = parts};
    pthread_cond_init(&j.done, NULL);
    pthread_mutex_lock(&s_mu);
    if (s_nworkers < parts - 1)
        pool_grow(parts - 1);
    pool_job **q = &s_queue;
    while (*q)
        q = &(*q)->link;
    *q = &j;
    /* wake as many idle workers as there are parts for them, no more */
    for (int w = s_idle < parts - 1 ? s_idle : parts - 1; w > 0; w--)
        pthread_cond_signal(&s_work);
    pthread_mutex_unlock(&s_mu);

    run_part(&j, 0);
    pthread_mutex_lock(&s_mu);
    finish(&j);
    while (j.next < parts) { /* parts no worker has taken: run them here */
        const int p = claim(&j);
        pthread_mutex_unlock(&s_mu);
        run_part(&j, p);
        pthread_mutex_lock(&s_mu);
        finish(&j);
    }
    while (j.left > 0)
        pthread_cond_wait(&j.done, &s_mu);
    pthread_mutex_unlock(&s_mu);
    pthread_cond_destroy(&j.done);
}

typedef struct copy_job {
    const imgpu_image *src;
    imgpu_image *dst;
} copy_job;

static void copy_rows(void *ctx, int part, int y0, int y1)
{
    (void)part;
    const copy_job *j = ctx;
    const size_t row = j->dst->stride; /* tight: the bytes of one row */
    for (int y = y0; y < y1; y++)
        memcpy(imgpu_image_row(j->dst, y), imgpu_image_row(j->src, y), row);
}

imgpu_image *imgpu__cpu_image_copy(const imgpu_image *src)
{
    imgpu_image *im = imgpu_image_new(src->width, src->height, src->channels, src->depth);
    if (!im)
        return NULL;
    copy_job j = {src, im};
    imgpu__cpu_parallel_rows(src->height, imgpu__cpu_parts(src->height, im->stride / 4, 0), copy_rows, &j);
    return im;
}

imgpu_image *imgpu__cpu_image_for(const imgpu_image *src)
{
    if (src->channels != imgpu_image_color_channels(src))
        return imgpu__cpu_image_copy(src);
    return imgpu_image_new_unset(src->width, src->height, src->channels, src->depth);
}

/* parallel.c — the CPU backend's thread helper (contract in parallel.h): rows cut into
 * contiguous parts, run by a pool of worker threads started on first use and kept for the
 * process (the caller's thread runs the first part, and any part no worker has taken yet).
 *
 * Why a pool: a pass over a 4K gray image takes a millisecond or two per core, and starting a
 * thread per part on every pass (equalize makes two passes) cost tens of microseconds each,
 * more on a loaded machine where a new thread waits for its first time slice.
 *
 * The pool: a queue of jobs (one per imgpu__cpu_parallel_rows call in flight, on its caller's
 * stack) under one mutex. A job's parts are claimed in order by an atomic counter, each exactly
 * once, by whoever comes first: a worker, or the caller once it has run part 0. So a caller
 * never waits on a part nobody has started, whatever the other callers do (many caller threads,
 * a part that itself calls imgpu__cpu_parallel_rows, workers that could not be started): it
 * only waits for parts already running. Parts outnumber threads (IMGPU__CPU_PARTS_PER_THREAD to
 * one, parallel.h), so a thread that starts late or shares its core holds the rest up by one
 * small part at most. Workers are started as calls need them (each call wants one fewer than
 * its caller's imgpu__cpu_threads(), or than its parts; the pool grows to what the calls in
 * flight want together, as a thread per part did), block every signal, poll for about 20 us before
 * they sleep (an op's next pass usually comes sooner), and are stopped and joined when the
 * library is unloaded or the process exits (valgrind-clean). After fork() the child has no
 * workers: the pool starts again empty there.
 *
 * Traps: the part bounds are computed in 64 bits (rows * p overflows int for tall images
 * with many threads); a part that could not get a thread still runs, once, on the caller's
 * thread — a histogram part skipped would silently lose counts. */
#include "parallel.h"
#include "image.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
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
    const int threads = imgpu__cpu_threads();
    /* several parts a thread, claimed as threads come free: a thread that starts late, or that
     * shares its core with other work, holds up the rest by one small part at most */
    int parts = threads > 1 ? threads * IMGPU__CPU_PARTS_PER_THREAD : 1;
    if (parts > IMGPU__CPU_MAX_THREADS)
        parts = IMGPU__CPU_MAX_THREADS;
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

/* One imgpu__cpu_parallel_rows call in flight, on its caller's stack. It is in s_queue (under
 * s_mu) from its start until its caller has seen every part claimed; a worker reaches it only
 * through the queue, under s_mu, and claims a part there, so the job outlives every worker's
 * use of it: left cannot reach 0 before the claimed part is done, and a worker does not touch
 * the job after its decrement of left. */
typedef struct pool_job {
    imgpu__cpu_rows_fn fn;
    void *ctx;
    int rows, parts;
    atomic_int next;       /* the next part nobody has claimed (>= parts: all claimed) */
    atomic_int left;       /* parts not finished yet */
    struct pool_job *link; /* s_queue */
} pool_job;

static pthread_mutex_t s_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t s_work = PTHREAD_COND_INITIALIZER; /* idle workers wait here for a job or the stop */
static pthread_cond_t s_done = PTHREAD_COND_INITIALIZER; /* callers wait here for their last parts */
static pool_job *s_queue; /* jobs in flight, oldest first (s_mu; peeked at without it by __atomic_load_n) */
static pthread_t s_worker[IMGPU__CPU_MAX_THREADS];
static int s_nworkers;   /* started and not yet stopped (s_mu) */
static int s_idle;       /* of them, asleep on s_work (s_mu) */
static int s_want;       /* helpers the calls in flight asked for, summed (s_mu) */
static atomic_int s_stop; /* set at unload / exit: workers return */
static pthread_once_t s_pool_once = PTHREAD_ONCE_INIT;

/* How long a thread out of work polls before it sleeps: the next pass of an op (equalize's
 * map after its histogram) usually comes within microseconds, and a sleeping thread takes a
 * wake-up through the kernel, far longer on a loaded machine. About 20 us. */
#define POOL_SPINS 2000

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void run_part(const pool_job *j, int p)
{
    j->fn(j->ctx, p, (int)((int64_t)j->rows * p / j->parts), (int)((int64_t)j->rows * (p + 1) / j->parts));
}

/* Take j out of s_queue if it is there (s_mu held). */
static void unqueue(pool_job *j)
{
    for (pool_job **q = &s_queue; *q; q = &(*q)->link)
        if (*q == j) {
            __atomic_store_n(q, j->link, __ATOMIC_RELAXED); /* peeked at by idle workers */
            return;
        }
}

/* A part of j has finished. After the decrement j may be gone (its caller returns once left
 * is 0), so the wake-up goes through the shared s_done, under s_mu: a caller that found left
 * above 0 under s_mu is asleep by then and gets it. */
static void finish(pool_job *j)
{
    if (atomic_fetch_sub(&j->left, 1) == 1) {
        pthread_mutex_lock(&s_mu);
        pthread_cond_broadcast(&s_done);
        pthread_mutex_unlock(&s_mu);
    }
}

static void *worker_main(void *arg)
{
    (void)arg;
    for (;;) {
        for (int i = 0; i < POOL_SPINS && !__atomic_load_n(&s_queue, __ATOMIC_RELAXED) &&
                        !atomic_load_explicit(&s_stop, memory_order_relaxed); i++)
            cpu_relax();
        pthread_mutex_lock(&s_mu);
        pool_job *j;
        int p = 0;
        for (;;) {
            if (atomic_load(&s_stop)) {
                pthread_mutex_unlock(&s_mu);
                return NULL;
            }
            j = s_queue;
            while (j && (p = atomic_fetch_add(&j->next, 1)) >= j->parts) {
                unqueue(j); /* all claimed: its caller need not find it there */
                j = s_queue;
            }
            if (j)
                break;
            s_idle++;
            pthread_cond_wait(&s_work, &s_mu);
            s_idle--;
        }
        const int parts = j->parts; /* j may be gone after its last finish() */
        pthread_mutex_unlock(&s_mu);
        for (;;) { /* p, then j's next parts while there are any: no lock needed, as the part
                    * claimed before the one finished keeps j alive */
            run_part(j, p);
            const int more = atomic_fetch_add(&j->next, 1);
            finish(j);
            if (more >= parts)
                break;
            p = more;
        }
    }
}

/* Unload / exit: stop and join every worker (each finishes the part it is running first). */
__attribute__((destructor)) static void pool_stop(void)
{
    pthread_mutex_lock(&s_mu);
    atomic_store(&s_stop, 1);
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
    s_want = 0;
    pthread_cond_init(&s_work, NULL);
    pthread_cond_init(&s_done, NULL);
    pthread_mutex_unlock(&s_mu);
}

static void pool_init(void) { pthread_atfork(fork_prepare, fork_parent, fork_child); }

/* Start workers until there are `want` (s_mu held); stops at the first that cannot start. */
static void pool_grow(int want)
{
    if (atomic_load(&s_stop))
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
    pool_job j = {.fn = fn, .ctx = ctx, .rows = rows, .parts = parts, .link = NULL};
    atomic_init(&j.next, 1); /* part 0 is the caller's */
    atomic_init(&j.left, parts);
    /* helpers: one thread fewer than the caller's thread count (its cap included), or than parts */
    int helpers = imgpu__cpu_threads();
    helpers = (helpers < parts ? helpers : parts) - 1;
    pthread_mutex_lock(&s_mu);
    /* as many workers as the calls in flight want together: batch's decode threads each run
     * their ops on their share of the cores (imgpu_cpu_threads_cap), at once */
    s_want += helpers;
    if (s_nworkers < s_want)
        pool_grow(s_want < IMGPU__CPU_MAX_THREADS - 1 ? s_want : IMGPU__CPU_MAX_THREADS - 1);
    pool_job **q = &s_queue;
    while (*q)
        q = &(*q)->link;
    __atomic_store_n(q, &j, __ATOMIC_RELAXED);
    /* wake sleeping workers up to the helpers wanted, no more */
    for (int w = s_idle < helpers ? s_idle : helpers; w > 0; w--)
        pthread_cond_signal(&s_work);
    pthread_mutex_unlock(&s_mu);

    int p = 0;
    do { /* part 0, then whatever no worker has taken */
        run_part(&j, p);
        finish(&j);
    } while ((p = atomic_fetch_add(&j.next, 1)) < parts);
    pthread_mutex_lock(&s_mu);
    unqueue(&j);
    s_want -= helpers;
    pthread_mutex_unlock(&s_mu);
    for (int i = 0; i < POOL_SPINS && atomic_load_explicit(&j.left, memory_order_acquire) > 0; i++)
        cpu_relax();
    if (atomic_load(&j.left) > 0) {
        pthread_mutex_lock(&s_mu);
        while (atomic_load(&j.left) > 0)
            pthread_cond_wait(&s_done, &s_mu);
        pthread_mutex_unlock(&s_mu);
    }
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

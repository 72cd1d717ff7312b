/* parallel.c — the CPU backend's thread helper (contract in parallel.h): rows cut into
 * contiguous parts, one pthread per part but the first, which the caller's thread runs;
 * every thread is joined before returning, nothing outlives the call (valgrind-clean).
 *
 * Traps: the part bounds are computed in 64 bits (rows * p overflows int for tall images
 * with many threads); a part that could not get a thread still runs, once, inline — a
 * histogram part skipped would silently lose counts. */
#include "parallel.h"
#include "image.h"

#include <pthread.h>
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

typedef struct part_job {
    imgpu__cpu_rows_fn fn;
    void *ctx;
    int part, y0, y1;
} part_job;

static void *part_main(void *arg)
{
    const part_job *j = arg;
    j->fn(j->ctx, j->part, j->y0, j->y1);
    return NULL;
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
    part_job job[IMGPU__CPU_MAX_THREADS];
    pthread_t tid[IMGPU__CPU_MAX_THREADS];
    int started[IMGPU__CPU_MAX_THREADS];
    for (int p = 0; p < parts; p++) {
        job[p].fn = fn;
        job[p].ctx = ctx;
        job[p].part = p;
        job[p].y0 = (int)((int64_t)rows * p / parts);
        job[p].y1 = (int)((int64_t)rows * (p + 1) / parts);
    }
    for (int p = 1; p < parts; p++)
        started[p] = pthread_create(&tid[p], NULL, part_main, &job[p]) == 0;
    part_main(&job[0]);
    for (int p = 1; p < parts; p++) {
        if (started[p])
            pthread_join(tid[p], NULL);
        else
            part_main(&job[p]); /* no thread: run it here, exactly once */
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

/* test_cpu_pool.c — imgpu__cpu_parallel_rows's contract (src/backend/cpu/parallel.h) on its
 * thread pool: every row of every part is run exactly once with part p's bounds, from many
 * caller threads at once, from inside a part (nested), and in a child after fork(); 4 calls at
 * once get 4 threads each, all running together; and the threads are kept: 40 calls of 4
 * parts run on at most 4 distinct threads (a thread started per part and call gives about 120). */
#define _GNU_SOURCE
#include "cpu/parallel.h"
#include "test_util.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROWS 1000
#define PARTS 4

typedef struct job {
    int rows, parts;
    atomic_int seen[ROWS];    /* times each row was run */
    atomic_int bad;           /* a part given bounds other than its own */
    atomic_int part_runs[IMGPU__CPU_MAX_THREADS];
    int nested;               /* each part runs a job of its own inside */
    atomic_int nested_bad;
    pid_t tid[IMGPU__CPU_MAX_THREADS]; /* the thread that ran each part */
} job;

static void spin(int n)
{
    volatile unsigned x = 0;
    for (int i = 0; i < n; i++)
        x += (unsigned)i;
}

static int run_job(int rows, int parts, int nested, job *j);

static void rows_fn(void *ctx, int part, int y0, int y1)
{
    job *j = ctx;
    if (part < 0 || part >= j->parts || y0 != (int)((int64_t)j->rows * part / j->parts) ||
        y1 != (int)((int64_t)j->rows * (part + 1) / j->parts))
        atomic_fetch_add(&j->bad, 1);
    else
        atomic_fetch_add(&j->part_runs[part], 1);
    j->tid[part] = (pid_t)syscall(SYS_gettid);
    for (int y = y0; y < y1; y++)
        if (y >= 0 && y < ROWS)
            atomic_fetch_add(&j->seen[y], 1);
    spin(20000); /* long enough that the other threads take parts */
    if (j->nested) {
        job *in = calloc(1, sizeof *in);
        if (!in || run_job(37, 3, 0, in) != 0)
            atomic_fetch_add(&j->nested_bad, 1);
        free(in);
    }
}

/* 0 when every row and part was run exactly once with the right bounds. */
static int run_job(int rows, int parts, int nested, job *j)
{
    memset(j, 0, sizeof *j);
    j->rows = rows;
    j->parts = parts > rows ? rows : parts;
    j->nested = nested;
    imgpu__cpu_parallel_rows(rows, parts, rows_fn, j);
    int errors = atomic_load(&j->bad) + atomic_load(&j->nested_bad);
    for (int y = 0; y < rows; y++)
        errors += atomic_load(&j->seen[y]) != 1;
    for (int p = 0; p < j->parts; p++)
        errors += atomic_load(&j->part_runs[p]) != 1;
    return errors;
}

/* Concurrency: CALLERS threads each run a job of PARTS parts at once; every part waits (up to
 * 30 s: valgrind on a loaded machine is slow to start them) until all CALLERS x PARTS parts are
 * running together, as they did with a thread per part (batch's decode threads each run their
 * ops on their share of the cores at once). */
#define CALLERS 4
static atomic_int s_running, s_all_met;

static void together_fn(void *ctx, int part, int y0, int y1)
{
    (void)ctx, (void)part, (void)y0, (void)y1;
    atomic_fetch_add(&s_running, 1);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        if (atomic_load(&s_running) >= CALLERS * PARTS) {
            atomic_fetch_add(&s_all_met, 1);
            return;
        }
        sched_yield(); /* under valgrind, one thread runs at a time: let the others start */
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while (t.tv_sec - t0.tv_sec < 30);
}

static void *together_main(void *arg)
{
    (void)arg;
    imgpu__cpu_parallel_rows(PARTS, PARTS, together_fn, NULL);
    return NULL;
}

static void *caller_main(void *arg)
{
    atomic_int *errors = arg;
    job *j = calloc(1, sizeof *j);
    if (!j) {
        atomic_fetch_add(errors, 1);
        return NULL;
    }
    for (int i = 0; i < 400; i++) /* mostly tiny jobs: parts finish while others are claimed */
        if (run_job(i % 4 ? 1 + i % 9 : ROWS - i, 2 + i % 6, i % 50 == 0, j) != 0)
            atomic_fetch_add(errors, 1);
    free(j);
    return NULL;
}

int main(void)
{
    job *j = calloc(1, sizeof *j);
    if (!j)
        return 1;
    imgpu__cpu_threads_set(PARTS, 0); /* PARTS threads, whatever this machine's cores */

    /* the threads are kept: the parts of 40 calls run on at most PARTS threads (first: no call
     * with more parts has grown the pool yet) */
    pid_t tids[40 * PARTS];
    int ntid = 0;
    for (int i = 0; i < 40; i++) {
        CHECK(run_job(ROWS, PARTS, 0, j) == 0);
        for (int p = 0; p < PARTS; p++) {
            int k = 0;
            while (k < ntid && tids[k] != j->tid[p])
                k++;
            if (k == ntid)
                tids[ntid++] = j->tid[p];
        }
    }
    CHECKF(ntid <= PARTS, "40 calls of %d parts ran on %d threads", PARTS, ntid);

    /* bounds and exactly-once, odd row and part counts, more parts than rows */
    const int shapes[][2] = {{1, 1}, {2, 2}, {5, 3}, {7, 7}, {3, 9}, {1000, 4}, {999, 7}, {ROWS, 64}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        CHECKF(run_job(shapes[s][0], shapes[s][1], 0, j) == 0, "%d rows in %d parts", shapes[s][0], shapes[s][1]);

    /* nested: every part runs a 3-part job of its own */
    CHECK(run_job(ROWS, PARTS, 1, j) == 0);

    /* many callers at once, some nesting */
    atomic_int errors = 0;
    pthread_t th[6];
    int started = 0;
    for (int t = 0; t < 6; t++)
        started += pthread_create(&th[started], NULL, caller_main, &errors) == 0;
    for (int t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    CHECK(started == 6);
    CHECKF(atomic_load(&errors) == 0, "%d concurrent calls went wrong", atomic_load(&errors));

    /* CALLERS calls at once get PARTS threads each, all running together */
    pthread_t tt[CALLERS];
    int tstarted = 0;
    for (int t = 0; t < CALLERS; t++)
        tstarted += pthread_create(&tt[tstarted], NULL, together_main, NULL) == 0;
    for (int t = 0; t < tstarted; t++)
        pthread_join(tt[t], NULL);
    CHECK(tstarted == CALLERS);
    CHECKF(atomic_load(&s_all_met) == CALLERS * PARTS, "%d of %d parts ran all together", atomic_load(&s_all_met),
           CALLERS * PARTS);

    /* fork after the pool has threads: the child's calls still finish, exactly once */
    fflush(NULL);
    const pid_t pid = fork();
    if (pid == 0) {
        int bad = 0;
        for (int i = 0; i < 10; i++)
            bad += run_job(ROWS, PARTS, i == 3, j) != 0;
        free(j);
        _exit(bad ? 1 : 0);
    }
    int status = -1;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    CHECK(run_job(ROWS, PARTS, 0, j) == 0); /* and the parent's pool still works */

    free(j);
    TEST_MAIN_END();
}

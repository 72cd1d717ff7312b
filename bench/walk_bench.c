/* bench/walk_bench.c — the JPEG scan walk (imgpu__jpeg_scan_check, src/io/jpeg_scan.c, issues 25
 * and 27) alone on one core, no GPU: every file is read into memory, then walked REPS times over
 * (one pass = every file once); prints each pass's MB/s (bytes over the thread's CPU time) and
 * their median, and the verdicts.
 * imgpu-bench-walk in a build; bench/walk_bench.sh makes 4K q92 inputs as bench/python_bench.py
 * does and runs it. Usage: imgpu-bench-walk [-r REPS] FILE... */
#define _POSIX_C_SOURCE 200809L
#include "jpeg_scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* the thread's CPU time, not the wall clock: on a machine shared with other work, time spent
 * waiting for a core is not the walk's */
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int reps = 9, a = 1;
    if (a + 1 < argc && !strcmp(argv[a], "-r")) {
        reps = atoi(argv[a + 1]);
        a += 2;
    }
    const int n = argc - a;
    if (n < 1 || reps < 1 || reps > 1000) {
        fprintf(stderr, "usage: imgpu-bench-walk [-r REPS] FILE...\n");
        return 2;
    }
    unsigned char **data = calloc((size_t)n, sizeof *data);
    size_t *len = calloc((size_t)n, sizeof *len), total = 0;
    double *mbs = calloc((size_t)reps, sizeof *mbs);
    if (!data || !len || !mbs)
        return 1;
    for (int i = 0; i < n; i++) {
        FILE *f = fopen(argv[a + i], "rb");
        long sz = -1;
        if (f && !fseek(f, 0, SEEK_END))
            sz = ftell(f);
        if (sz < 0 || fseek(f, 0, SEEK_SET) || !(data[i] = malloc((size_t)sz + 1)) ||
            fread(data[i], 1, (size_t)sz, f) != (size_t)sz) {
            fprintf(stderr, "imgpu-bench-walk: %s: cannot read\n", argv[a + i]);
            return 1;
        }
        fclose(f);
        len[i] = (size_t)sz;
        total += len[i];
    }
    int verdicts[4] = {0};
    for (int i = 0; i < n; i++)   /* the warm-up pass gives the verdicts */
        verdicts[imgpu__jpeg_scan_check(data[i], len[i]) & 3]++;
    for (int r = 0; r < reps; r++) {
        const double t0 = now();
        int sink = 0;
        for (int i = 0; i < n; i++)
            sink += imgpu__jpeg_scan_check(data[i], len[i]);
        const double dt = now() - t0;
        mbs[r] = (double)total / dt / 1e6;
        printf("pass %d: %.1f MB/s%s\n", r + 1, mbs[r], sink < 0 ? " " : "");
    }
    qsort(mbs, (size_t)reps, sizeof *mbs, cmp);
    printf("walk: %d files, %.1f MB, median %.1f MB/s (%.2f ms a file), %d passes; whole %d, bad %d, other %d, "
           "irregular %d\n",
           n, (double)total / 1e6, mbs[reps / 2], (double)total / n / mbs[reps / 2] / 1e3, reps, verdicts[0],
           verdicts[1], verdicts[2], verdicts[3]);
    for (int i = 0; i < n; i++)
        free(data[i]);
    free(data);
    free(len);
    free(mbs);
    return 0;
}

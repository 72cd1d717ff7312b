/* wall_clock.h — wall-clock timing for the CPU benchmarks built by their scripts
 * (bench/cpu_ops.c, bench/equalize_split.c): CLOCK_MONOTONIC seconds and the median of a
 * sample (sorted in place). The GPU benchmarks time with CUDA events instead (timing.h). */
#ifndef IMGPU_BENCH_WALL_CLOCK_H
#define IMGPU_BENCH_WALL_CLOCK_H

#include <stdlib.h>
#include <time.h>

static inline double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline int wall_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline double wall_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, wall_cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif

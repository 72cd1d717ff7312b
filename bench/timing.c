/* timing.c — see timing.h. */
#include "timing.h"

#include <math.h>

#include "error.h"

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void bench_time(cudaStream_t s, bench_op_fn fn, void *ctx, int *idx, int nk, double *thr, double *lat)
{
    cudaEvent_t e0, e1;
    double t[BENCH_REPS], l[BENCH_REPS];
    BENCH_CK(cudaEventCreate(&e0));
    BENCH_CK(cudaEventCreate(&e1));
    for (int i = 0; i < 3; i++)
        if (fn(ctx, (*idx)++ % nk)) {
            if (*imgpu_error_message())
                fprintf(stderr, "imgpu bench: %s\n", imgpu_error_message());
            *thr = *lat = NAN;
            goto out;
        }
    BENCH_CK(cudaStreamSynchronize(s));
    for (int r = 0; r < BENCH_REPS; r++) {
        float ms;
        BENCH_CK(cudaEventRecord(e0, s));
        for (int i = 0; i < BENCH_BATCH; i++)
            fn(ctx, (*idx)++ % nk);
        BENCH_CK(cudaEventRecord(e1, s));
        BENCH_CK(cudaEventSynchronize(e1));
        BENCH_CK(cudaEventElapsedTime(&ms, e0, e1));
        t[r] = ms * 1000.0 / BENCH_BATCH;
    }
    for (int r = 0; r < BENCH_REPS; r++) {
        float ms;
        BENCH_CK(cudaEventRecord(e0, s));
        fn(ctx, (*idx)++ % nk);
        BENCH_CK(cudaEventRecord(e1, s));
        BENCH_CK(cudaEventSynchronize(e1));
        BENCH_CK(cudaEventElapsedTime(&ms, e0, e1));
        l[r] = ms * 1000.0;
    }
    BENCH_CK(cudaGetLastError());
    qsort(t, BENCH_REPS, sizeof *t, cmp_d);
    qsort(l, BENCH_REPS, sizeof *l, cmp_d);
    *thr = t[BENCH_REPS / 2];
    *lat = l[BENCH_REPS / 2];
out:
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
}

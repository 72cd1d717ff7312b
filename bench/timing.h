/* timing.h — the one timing method of imgpu bench (../shared/GPU.md): CUDA events around
 * BENCH_BATCH back-to-back ops divided by BENCH_BATCH (throughput), and around one op
 * (latency, which carries the launch floor), medians of BENCH_REPS, after 3 warm-up ops.
 * The caller rotates inputs through `k` (the op's second argument: 0..nk-1). */
#ifndef IMGPU_BENCH_TIMING_H
#define IMGPU_BENCH_TIMING_H

#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#define BENCH_REPS 15
#define BENCH_BATCH 40

#define BENCH_CK(call)                                                                                 \
    do {                                                                                               \
        cudaError_t e_ = (call);                                                                       \
        if (e_ != cudaSuccess) {                                                                       \
            fprintf(stderr, "imgpu bench: %s: %s\n", #call, cudaGetErrorString(e_));                   \
            exit(1);                                                                                   \
        }                                                                                              \
    } while (0)

/* Enqueue one op on input k; non-zero on failure (then the op reads n/a). */
typedef int (*bench_op_fn)(void *ctx, int k);

/* *idx counts ops across calls (so inputs keep rotating); nk inputs. NAN when the op fails
 * during warm-up. */
void bench_time(cudaStream_t s, bench_op_fn fn, void *ctx, int *idx, int nk, double *thr, double *lat);

/* BENCH_DEFINE_TIMER(name, T) defines
 *   static void name(T *b, int (*op)(T *b, int k), double *thr, double *lat)
 * which times a typed op with bench_time() on b->s, rotating b->idx over b->k inputs (T has
 * those three members): the adapter from a typed op to bench_op_fn, written once. */
#define BENCH_DEFINE_TIMER(name, T)                                                                    \
    typedef struct {                                                                                   \
        T *b;                                                                                          \
        int (*op)(T *, int);                                                                           \
    } name##_adapter;                                                                                  \
    static int name##_adapt(void *p, int k)                                                            \
    {                                                                                                  \
        name##_adapter *a = (name##_adapter *)p;                                                       \
        return a->op(a->b, k);                                                                         \
    }                                                                                                  \
    static void name(T *b, int (*op)(T *, int), double *thr, double *lat)                              \
    {                                                                                                  \
        name##_adapter a = {b, op};                                                                    \
        bench_time(b->s, name##_adapt, &a, &b->idx, b->k, thr, lat);                                   \
    }

#endif

/* parallel.h — the CPU backend's one thread helper: a loop over rows cut into contiguous
 * parts, run concurrently by a pool of threads kept for the process and by the caller's
 * thread (which runs the first), all finished before the call returns. Internal to src/cpu/.
 *
 * Bit-identical by construction: every row is still computed by the same code with the same
 * arithmetic; threads only decide who computes it. Callers that reduce (histograms) give each
 * part a private buffer and merge them in integers afterwards, which is exact in any order.
 *
 * The thread count is sysconf(_SC_NPROCESSORS_ONLN), or the environment variable
 * IMGPU_CPU_THREADS (a positive integer; 1 = one thread, the former single-threaded
 * behaviour), read once per process. Small jobs run inline: a part gets at least
 * IMGPU__CPU_MIN_PART_WORK units of work, so a tiny image never pays thread start-up. */
#ifndef IMGPU_CPU_PARALLEL_H
#define IMGPU_CPU_PARALLEL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IMGPU__CPU_MAX_THREADS 256
/* Parts a thread when the backend has several: the pool's threads claim them as they come free,
 * which evens out threads that start late or share their core. */
#define IMGPU__CPU_PARTS_PER_THREAD 4
/* Work units (roughly: samples touched) below which another part does not pay off. */
#define IMGPU__CPU_MIN_PART_WORK ((size_t)1 << 16)

/* IMGPU__CPU_WIDE before a row function: the compiler builds it twice, for x86-64's baseline
 * and for AVX2, and the loader picks the one the CPU runs (GCC and clang's target_clones; an
 * empty macro elsewhere). The same C, vectorized 8 lanes wide instead of 4, so the same
 * values: AVX2 alone has no fused multiply-add (that is the separate "fma" target, never
 * named here), the build compiles C17 (GCC then contracts nothing) and rotate.c, whose float
 * order is stated, is compiled with -ffp-contract=off for clang too. Defining IMGPU_NO_CPU_CLONES
 * (-DCMAKE_C_FLAGS=-DIMGPU_NO_CPU_CLONES) builds the baseline only. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(IMGPU_NO_CPU_CLONES)
#define IMGPU__CPU_WIDE __attribute__((target_clones("avx2", "default")))
#else
#define IMGPU__CPU_WIDE
#endif

/* Rows y0..y1-1 (y0 < y1) of part `part` (0-based, < the parts asked for). */
typedef void (*imgpu__cpu_rows_fn)(void *ctx, int part, int y0, int y1);

/* The threads the backend uses (IMGPU_CPU_THREADS or the online cores), 1..MAX. */
int imgpu__cpu_threads(void);

/* How many parts a loop of `rows` rows of `row_work` units each should be cut into:
 * 1..min(threads * IMGPU__CPU_PARTS_PER_THREAD, rows, IMGPU__CPU_MAX_THREADS) (1 with one thread),
 * 1 for a small job (and 1 when rows <= 1). part_cost is the extra
 * work each part brings (a private histogram to clear and merge: its bins), so 16-bit
 * histograms of small images are not split into 65536-bin parts. Callers with per-part
 * buffers size them with this and pass the same number to imgpu__cpu_parallel_rows. */
int imgpu__cpu_parts(int rows, size_t row_work, size_t part_cost);

/* Run fn over rows 0..rows-1 in `parts` contiguous parts (part p: rows rows*p/parts ..
 * rows*(p+1)/parts - 1), each exactly once, concurrently; returns when all have finished.
 * Parts no pool thread has taken (none idle, or none could be started) are run on the
 * caller's thread: the result is the same, only slower. Safe to call from many threads at
 * once and from inside a part. parts is clamped to 1..min(rows, IMGPU__CPU_MAX_THREADS). */
void imgpu__cpu_parallel_rows(int rows, int parts, imgpu__cpu_rows_fn fn, void *ctx);

/* imgpu_image_copy (a new tight image, same bytes) with the rows copied on every core: the
 * ops that start from a copy of their input (equalize, local contrast) would otherwise spend a
 * single-threaded pass on it. NULL + error on failure. */
struct imgpu_image;
struct imgpu_image *imgpu__cpu_image_copy(const struct imgpu_image *src);
/* The output image of an op that writes every colour channel of every pixel and leaves the
 * others (alpha) as they were: a copy of src (above) when it has channels beyond colour,
 * else a new image of its shape with the pixels unset (no pass spent copying what the op
 * overwrites). */
struct imgpu_image *imgpu__cpu_image_for(const struct imgpu_image *src);

/* Tests only: use `threads` threads (0: back to the environment / cores) and, when
 * small_jobs is nonzero, split even tiny jobs (no minimum work per part), so a 37x23
 * image exercises the same code paths as a 4K one. Not thread-safe: call it between ops. */
void imgpu__cpu_threads_set(int threads, int small_jobs);

#ifdef __cplusplus
}
#endif
#endif

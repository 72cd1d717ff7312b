/* scratch_ops.h — the CUDA ops that work through a session's growable device scratch, and
 * that scratch: CLAHE (clahe.c), equalization at 16 bits or with a non-OpenCV formula and
 * full-resolution histograms (equalize_full.c), all called by pipeline.c. They run on a
 * session's stream between its ping-pong buffers and take their histograms, CDFs and LUTs
 * from the scratch (imgpu__cuda_scratch, grown and freed in equalize_full.c).
 * Return 0, -1 or IMGPU_CUDA_OOM with a message (cuda_backend.h). */
#ifndef IMGPU_CUDA_SCRATCH_OPS_H
#define IMGPU_CUDA_SCRATCH_OPS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "../op.h"

typedef struct imgpu__cuda_scratch {
    unsigned char *d;
    size_t bytes;
} imgpu__cuda_scratch;

/* Grow to at least `need` bytes (contents not kept; waits for `st` first, which may still use
 * it); *held counts the session's device bytes for the budget. */
int imgpu__cuda_scratch_grow(imgpu__cuda_scratch *s, size_t need, cudaStream_t st, size_t *held);
void imgpu__cuda_scratch_free(imgpu__cuda_scratch *s, size_t *held);

/* d_in and d_out: packed w x h x c images of `depth` bits (cudaMalloc'ed; d_in padded by at
 * least 64 bytes for the 8-bit histogram's 16-byte loads); they must not overlap. */
int imgpu__cuda_equalize_full(imgpu__cuda_scratch *s, size_t *held, cudaStream_t st, const void *d_in, void *d_out,
                              int w, int h, int c, int depth, const imgpu_equalize_params *p);
int imgpu__cuda_clahe(imgpu__cuda_scratch *s, size_t *held, cudaStream_t st, const void *d_in, void *d_out, int w,
                      int h, int c, int depth, const imgpu_clahe_params *p);
/* Histograms laid out as imgpu_histogram_full (op.h): planes 0..c-1 the channels, then luma
 * when c >= 3, `levels` = 2^depth counters each, into the scratch: *d_counts points there (valid until the
 * scratch is next used). */
int imgpu__cuda_histogram_full(imgpu__cuda_scratch *s, size_t *held, cudaStream_t st, const void *d_in, int w, int h,
                               int c, int depth, const uint32_t **d_counts, int *planes);

#endif

/* equalize_full.c — host side of equalization at 16 bits or with the pil / imagemagick
 * formula (any depth), and of full-resolution histograms: histogram (kernels/
 * equalize_full.cu at 16 bits, the 8-bit histogram kernels at 8), the CDF by
 * imgpu_launch_block_scan, the LUT built on the device with the CPU's formula (at 16 bits on
 * sm_90 the CDF and the LUT are one cluster launch), then one vectorized apply. Nothing waits
 * for the device: a chain of ops stays queued on the stream.
 * Also the session's growable scratch (scratch_ops.h). */
#include "cuda_util.h"
#include "scratch_ops.h"
#include "error.h"
#include "kernels.h"
#include "tuning.h"

#include <stdlib.h>
#include <string.h>

int imgpu__cuda_scratch_grow(imgpu__cuda_scratch *s, size_t need, cudaStream_t st, size_t *held)
{
    int rc = 0;
    if (need <= s->bytes)
        return 0;
    IMGPU_CUDA_TRY(cudaStreamSynchronize(st)); /* queued work may still read it */
    cudaFree(s->d);
    s->d = NULL;
    *held -= s->bytes;
    s->bytes = 0;
    if ((rc = imgpu__cuda_reserve(need, *held)) != 0)
        return rc;
    IMGPU_CUDA_TRY(cudaMalloc((void **)&s->d, need));
    s->bytes = need;
    *held += need;
    return 0;
fail:
    return rc;
}

void imgpu__cuda_scratch_free(imgpu__cuda_scratch *s, size_t *held)
{
    if (!s)
        return;
    cudaFree(s->d);
    if (held)
        *held -= s->bytes;
    s->d = NULL;
    s->bytes = 0;
}

static size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }

int imgpu__cuda_histogram_full(imgpu__cuda_scratch *s, size_t *held, cudaStream_t st, const void *d_in, int w, int h,
                               int c, int depth, const uint32_t **d_counts, int *planes)
{
    int rc = 0;
    const imgpu_tuning *tune = imgpu__cuda_tuning();
    const size_t npix = (size_t)w * h;
    const int levels = depth == 16 ? 65536 : 256, np = c + (c >= 3);
    if (npix > UINT32_MAX)
        return imgpu_error("histogram: %dx%d has too many pixels for 32-bit bins", w, h);
    const size_t bytes = (size_t)np * levels * 4;
    if ((rc = imgpu__cuda_scratch_grow(s, bytes, st, held)) != 0)
        return rc;
    uint32_t *hist = (uint32_t *)(void *)s->d;
    IMGPU_CUDA_TRY(cudaMemsetAsync(hist, 0, bytes, st));
    if (depth == 8) {
        IMGPU_CUDA_TRY(imgpu_launch_histogram(IMGPU_HIST_DEFAULT_FOR(c), d_in, npix, c, 1, hist, imgpu_hist_grid(tune), st));
    } else {
        for (int p = 0; p < np; p++)
            IMGPU_CUDA_TRY(imgpu_launch_histogram16_tuned(IMGPU_HIST16_DEFAULT, d_in, npix, c, p, hist + (size_t)p * levels,
                                                          tune, st));
    }
    *d_counts = hist;
    *planes = np;
    return 0;
fail:
    return rc;
}

int imgpu__cuda_equalize_full(imgpu__cuda_scratch *s, size_t *held, cudaStream_t st, const void *d_in, void *d_out,
                              int w, int h, int c, int depth, const imgpu_equalize_params *p)
{
    int rc = 0;
    const imgpu_tuning *tune = imgpu__cuda_tuning();
    if (p->mode != IMGPU_MODE_LUMINANCE && p->mode != IMGPU_MODE_PER_CHANNEL)
        return imgpu_error("equalize: unknown mode %d", (int)p->mode);
    if (p->formula != IMGPU_FORMULA_OPENCV && p->formula != IMGPU_FORMULA_PIL && p->formula != IMGPU_FORMULA_IMAGEMAGICK)
        return imgpu_error("equalize: unknown formula %d", (int)p->formula);
    if (depth != 8 && depth != 16)
        return imgpu_error("equalize: %d-bit images are not supported", depth);
    const size_t npix = (size_t)w * h;
    if (npix > UINT32_MAX)
        return imgpu_error("equalize: %dx%d has too many pixels for 32-bit bins", w, h);
    const int levels = depth == 16 ? 65536 : 256;
    const int luma = p->mode == IMGPU_MODE_LUMINANCE && c >= 3;
    const int planes = luma ? 1 : (c >= 3 ? 3 : 1);
    /* 8-bit: the 256-bin kernels fill every channel's plane (and luma's) at once */
    const int hplanes = depth == 8 ? imgpu_hist_planes(c, luma) : planes;
    const size_t hist_b = align256((size_t)hplanes * levels * 4), cdf_b = align256((size_t)levels * 4);
    const size_t lut_b = align256((size_t)planes * levels * 2);
    if ((rc = imgpu__cuda_scratch_grow(s, 256 + hist_b + cdf_b + lut_b, st, held)) != 0)
        return rc;
    /* `changed` sits just before the histograms so that the one memset zeroes both: the LUT
     * kernels only OR into it (many blocks, no ordering between them), and a launch saved is
     * ~1-2 us on this latency-bound path. One word for all planes: only luminance (one plane)
     * reads it. */
    uint32_t *changed = (uint32_t *)(void *)s->d, *hist = (uint32_t *)(void *)(s->d + 256);
    uint32_t *cdf = (uint32_t *)(void *)(s->d + 256 + hist_b);
    uint16_t *lut = (uint16_t *)(void *)(s->d + 256 + hist_b + cdf_b);
    IMGPU_CUDA_TRY(cudaMemsetAsync(changed, 0, 256 + (size_t)hplanes * levels * 4, st));
    if (depth == 8)
        IMGPU_CUDA_TRY(imgpu_launch_histogram(IMGPU_HIST_DEFAULT_FOR(c), d_in, npix, c, luma, hist, imgpu_hist_grid(tune), st));
    const int fused16 = depth == 16 && imgpu_equalize_lut16_fused_available(tune);
    for (int k = 0; k < planes; k++) {
        uint32_t *hp;
        if (depth == 8) {
            hp = hist + (size_t)(luma ? c : k) * 256;
        } else {
            hp = hist + (size_t)k * levels;
            IMGPU_CUDA_TRY(imgpu_launch_histogram16_tuned(IMGPU_HIST16_DEFAULT, d_in, npix, c, luma ? c : k, hp, tune, st));
        }
        if (levels == 65536 && fused16) { /* CDF and LUT in one cluster launch (sm_90) */
            IMGPU_CUDA_TRY(imgpu_launch_equalize_lut16_fused(hp, npix, (int)p->formula, lut + (size_t)k * levels,
                                                             changed, st));
            continue;
        }
        IMGPU_CUDA_TRY(imgpu_launch_block_scan(IMGPU_SCAN_DEFAULT, levels == 256 ? 256 : tune->scan_cdf16_block, hp, cdf,
                                               levels, st));
        IMGPU_CUDA_TRY(imgpu_launch_equalize_lut_full(hp, cdf, levels, npix, (int)p->formula, lut + (size_t)k * levels,
                                                      changed, st));
    }
    IMGPU_CUDA_TRY(imgpu_launch_apply_lut_full(d_in, d_out, npix, c, depth, luma, lut, changed, st));
    return 0;
fail:
    return rc;
}

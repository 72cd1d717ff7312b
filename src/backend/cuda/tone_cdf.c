/* tone_cdf.c — the statistics of normalize and autolevel (issue 28, op-norm) on the device: the
 * CDFs op.h describes, with the equalize path's kernels: the privatized histograms (8 bits:
 * imgpu_launch_histogram, every channel at once; 16 bits and ImageMagick's intensity plane:
 * imgpu_launch_histogram16_tuned), then imgpu_launch_block_scan per plane; the CDFs are
 * downloaded (256 or 65536 counters a plane) for the op's host function, which builds the LUT
 * exactly as the CPU backend does (src/op/normalize.c, autolevel.c). The intensity plane comes
 * from kernels/normalize.cu, the same IEEE operations as src/backend/cpu/tone_cdf.c.
 * This waits for the stream: the LUT depends on the image. */
#include "cuda_util.h"
#include "error.h"
#include "kernels.h"
#include "scratch_ops.h"

static size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }

int imgpu__cuda_tone_cdf(imgpu__cuda_op_env *e, const unsigned char *d_in, imgpu__cuda_shape s, int intensity,
                         uint32_t *cdf, int *planes, int *bins)
{
    int rc = 0;
    const imgpu_tuning *tune = imgpu__cuda_tuning();
    const int depth = 8 * s.b, color = s.c >= 3 ? 3 : 1;
    const size_t npix = (size_t)s.w * (size_t)s.h;
    if (depth != 8 && depth != 16)
        return imgpu_error("%d-bit images are not supported", depth);
    if (npix > UINT32_MAX)
        return imgpu_error("%dx%d has too many pixels for 32-bit bins", s.w, s.h);
    const int use_int = intensity && color == 3;
    const int np = use_int ? 1 : color, nb = use_int || depth == 16 ? 65536 : 256;
    /* 8 bits: the kernel counts every channel (alpha too) into its own 256-bin plane */
    const int hplanes = !use_int && depth == 8 ? s.c : np;
    const size_t hist_b = align256((size_t)hplanes * nb * 4), cdf_b = align256((size_t)np * nb * 4);
    const size_t plane_b = use_int ? align256(npix * 2 + 64) : 0;
    if ((rc = imgpu__cuda_scratch_grow(e->scratch, hist_b + cdf_b + plane_b, e->stream, e->held)) != 0)
        return rc;
    uint32_t *d_hist = (uint32_t *)(void *)e->scratch->d, *d_cdf = (uint32_t *)(void *)(e->scratch->d + hist_b);
    uint16_t *d_plane = (uint16_t *)(void *)(e->scratch->d + hist_b + cdf_b);
    IMGPU_CUDA_TRY(cudaMemsetAsync(d_hist, 0, (size_t)hplanes * nb * 4, e->stream));
    if (use_int) {
        IMGPU_CUDA_TRY(imgpu_launch_intensity16(d_in, npix, s.c, depth, d_plane, e->stream));
        IMGPU_CUDA_TRY(imgpu_launch_histogram16_tuned(IMGPU_HIST16_DEFAULT, d_plane, npix, 1, 0, d_hist, tune, e->stream));
    } else if (depth == 8) {
        IMGPU_CUDA_TRY(imgpu_launch_histogram(IMGPU_HIST_DEFAULT_FOR(s.c), d_in, npix, s.c, 0, d_hist,
                                              imgpu_hist_grid(tune), e->stream));
    } else {
        for (int k = 0; k < np; k++)
            IMGPU_CUDA_TRY(imgpu_launch_histogram16_tuned(IMGPU_HIST16_DEFAULT, (const uint16_t *)(const void *)d_in, npix,
                                                          s.c, k, d_hist + (size_t)k * nb, tune, e->stream));
    }
    for (int k = 0; k < np; k++)
        IMGPU_CUDA_TRY(imgpu_launch_block_scan(IMGPU_SCAN_DEFAULT, nb == 256 ? 256 : tune->scan_cdf16_block,
                                               d_hist + (size_t)k * nb, d_cdf + (size_t)k * nb, nb, e->stream));
    IMGPU_CUDA_TRY(cudaMemcpyAsync(cdf, d_cdf, (size_t)np * nb * 4, cudaMemcpyDeviceToHost, e->stream));
    IMGPU_CUDA_TRY(cudaStreamSynchronize(e->stream));
    *planes = np;
    *bins = nb;
    return 0;
fail:
    return rc;
}

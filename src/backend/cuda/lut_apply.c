/* lut_apply.c — the CUDA side of the tone LUT ops (levels, gamma, normalize, autolevel; issue
 * 28): a LUT computed on the host by the op's own function (in src/op/, the same call the CPU
 * backend makes, so the table is the same bytes) is copied into the session's scratch as three
 * planes (R, G, B; one for gray) and every colour channel is mapped through it by the
 * equalize kernels' vectorized apply (imgpu_launch_apply_lut_full, luminance 0; alpha copied).
 * So CUDA equals the CPU bit for bit by construction. Nothing waits: the copy from pageable
 * memory returns once the table is staged, and the apply is queued behind it on the stream. */
#include "cuda_util.h"
#include "error.h"
#include "kernels.h"
#include "scratch_ops.h"

#include <string.h>

int imgpu__cuda_apply_host_lut(imgpu__cuda_op_env *e, const unsigned char *d_in, unsigned char *d_out,
                               imgpu__cuda_shape s, const uint16_t *lut, int planes)
{
    int rc = 0;
    const int depth = 8 * s.b, color = s.c >= 3 ? 3 : 1;
    const size_t levels = depth == 16 ? 65536u : 256u, plane_b = levels * sizeof(uint16_t);
    if ((depth != 8 && depth != 16) || (planes != 1 && planes != 3))
        return imgpu_error("LUT: unsupported depth %d or planes %d", depth, planes);
    if ((rc = imgpu__cuda_scratch_grow(e->scratch, (size_t)color * plane_b, e->stream, e->held)) != 0)
        return rc;
    uint16_t *d_lut = (uint16_t *)(void *)e->scratch->d;
    for (int k = 0; k < color; k++)
        IMGPU_CUDA_TRY(cudaMemcpyAsync(d_lut + (size_t)k * levels, lut + (size_t)(planes == 1 ? 0 : k) * levels, plane_b,
                                       cudaMemcpyHostToDevice, e->stream));
    IMGPU_CUDA_TRY(imgpu_launch_apply_lut_full(d_in, d_out, (size_t)s.w * (size_t)s.h, s.c, depth, 0, d_lut, NULL,
                                               e->stream));
    return 0;
fail:
    return rc;
}

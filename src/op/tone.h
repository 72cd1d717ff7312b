/* tone.h — ImageMagick 6 (Q16, non-HDRI) quantum arithmetic shared by the tone LUT ops (levels,
 * gamma, normalize, autolevel; issue 28). IM6 Q16 holds every sample as a 16-bit quantum
 * Q in 0..65535 (QuantumRange = MaxMap = 65535) and does its arithmetic in double:
 *  - an 8-bit level v is the quantum 257 v (ScaleCharToQuantum); a 16-bit level is itself;
 *  - ClampToQuantum(x) = 0 if x <= 0, 65535 if x >= 65535, else (Q)(x + 0.5) (truncation of
 *    x + 0.5); ScaleMapToQuantum is the same at Q16 (MaxMap == QuantumRange);
 *  - 8-bit output: ScaleQuantumToChar(Q) = ((Q + 128) - ((Q + 128) >> 8)) >> 8, as IM's PNM,
 *    TIFF and BMP writers store it. (IM's PNG writer stores floor(Q / 257) at 8 bits instead: a
 *    coder's rounding, not the operator's; tests/cli/tone_formula.py compares with IM through
 *    PNM and 16-bit PNG for that reason.) */
#ifndef IMGPU_OP_TONE_H
#define IMGPU_OP_TONE_H

#include <stdint.h>

#include "op.h"

/* The descriptor hooks every tone LUT op shares (op_table.h's work and cpu_ns): its working
 * memory is the LUT (256 or 65536 16-bit entries), three planes of it for the upload, on the
 * host and the device; its CPU cost one table lookup a sample. */
static inline void imgpu__tone_work(int w, int h, int c, int depth, const imgpu_op *op, double *host, double *dev)
{
    (void)w, (void)h, (void)c, (void)op;
    const double levels = depth == 16 ? 65536.0 : 256.0;
    *host = levels * 2 * 3;
    *dev = levels * 2 * 3;
}

static inline double imgpu__tone_cpu_ns(int w, int h, int c, const imgpu_op *op)
{
    (void)op;
    return (double)w * h * 1.0 * c;
}

static inline unsigned imgpu__im_clamp_quantum(double x)
{
    return x <= 0.0 ? 0u : x >= 65535.0 ? 65535u : (unsigned)(x + 0.5);
}

/* 1 / x, or sign(x) / MagickEpsilon (1e-12) when |x| < 1e-12 */
static inline double imgpu__im_perceptible_reciprocal(double x)
{
    const double sign = x < 0.0 ? -1.0 : 1.0;
    return sign * x >= 1e-12 ? 1.0 / x : sign / 1e-12;
}

static inline unsigned imgpu__im_quantum_to_char(unsigned q) { return ((q + 128u) - ((q + 128u) >> 8)) >> 8; }

/* The quantum of level v at `depth` bits, and a quantum Q back to a level at `depth` bits. */
static inline unsigned imgpu__im_quantum(unsigned v, int depth) { return depth == 8 ? 257u * v : v; }
static inline uint16_t imgpu__im_level(unsigned q, int depth)
{
    return (uint16_t)(depth == 8 ? imgpu__im_quantum_to_char(q) : q);
}

#endif

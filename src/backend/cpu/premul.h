/* premul.h — premultiplied interpolation of images with alpha, the op floor's rule (op.h,
 * "interpolating filters"), as small inline helpers for the CPU filters (rotate.c; resize
 * next). kernels/premul.cuh is the same arithmetic on the device, operation for operation;
 * tests/gpu hold the two equal bit for bit.
 *
 * Images keep straight (unassociated) alpha, the last channel of a 2- or 4-channel image. An
 * interpolating filter mixes each colour sample c of a tap as c * a, a its alpha, both in the
 * image's own units (0..255 or 0..65535; no division by the maximum, which would round), so a
 * transparent tap adds nothing to the colour however dark its (invisible) colour is. With the
 * filter's weights w_k:
 *     A = sum w_k a_k              the output alpha, rounded and clamped as any sample
 *     M = sum w_k (c_k a_k)        in the same order as A's sum
 *     colour = M / A               when A > 0, else the straight sum sum w_k c_k
 * Two forms, one per kind of filter:
 *   - exact (integer weights: bilinear): M and A are integers, the colour is M / A rounded half
 *     up, computed exactly (imgpu__unpremul_exact); when the weighted taps share one alpha a > 0,
 *     M / A = sum w_k c_k / sum w_k exactly, so such pixels keep the straight result's bytes.
 *   - float (bicubic, and any filter whose weights are floats): premultiply with
 *     imgpu__premul (one rounded product, exact at 8 bits), sum in the filter's own order, and
 *     un-premultiply with imgpu__unpremul (one IEEE division, clamped to 0..max before it is
 *     rounded). Float division does not give back the straight sum exactly when all alphas
 *     are equal, so a float filter whose taps all share one alpha keeps the straight sum: the
 *     caller tests that (the rule, not a shortcut: it keeps opaque and fully transparent
 *     regions byte for byte). */
#ifndef IMGPU_CPU_PREMUL_H
#define IMGPU_CPU_PREMUL_H

#include <stdint.h>

/* Channel index of alpha in a pixel of `channels` samples, or -1 without alpha. */
static inline int imgpu__alpha_channel(int channels) { return channels == 2 || channels == 4 ? channels - 1 : -1; }

/* One tap's premultiplied colour: c * a in float, one rounding (none at 8 bits: c * a <= 65025
 * fits float's 24-bit significand; at 16 bits up to 65535^2, rounded to nearest). Its own
 * function (a separate statement at every call) so that it never fuses with the weight into
 * an fma. */
static inline float imgpu__premul(float c, float a) { return c * a; }

/* The colour of a float filter's sample whose taps' alphas differ, for A > 0 (the caller keeps
 * the straight sum otherwise): M / A, one IEEE division, clamped to 0..maxv before the
 * filter's rounding (M / A is unbounded where A is tiny: bicubic lobes cancelling; the clamp
 * also keeps the float-to-int conversion defined). NaN cannot occur: A > 0 and M finite. */
static inline float imgpu__unpremul(float m, float a, float maxv)
{
    const float v = m / a;
    return v < 0.0f ? 0.0f : v > maxv ? maxv : v;
}

/* The colour of an exact (integer) filter's sample: m / a rounded half up, for a > 0 and
 * m <= maxv * a (a weighted mean of samples): floor(m / a + 1/2) = (m + floor(a / 2)) / a, in
 * integers, so any integer width that holds m + a / 2 gives the same value. */
static inline uint32_t imgpu__unpremul_exact(uint64_t m, uint64_t a) { return (uint32_t)((m + (a >> 1)) / a); }

#endif

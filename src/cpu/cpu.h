/* cpu.h — the CPU backend: the reference every GPU result is tested against, and the
 * fallback when no GPU is present. Plain, obviously correct code; speed is the GPU's job. */
#ifndef IMGPU_CPU_H
#define IMGPU_CPU_H

#include <stdint.h>

#include "../image.h"
#include "../ops.h"

#ifdef __cplusplus
extern "C" {
#endif

int imgpu_cpu_histogram(const imgpu_image *in, imgpu_histogram *out);

/* OpenCV equalizeHist LUT from a 256-bin histogram of n pixels (the shared reference formula). */
void imgpu_cpu_equalize_lut(const uint32_t hist[256], uint64_t n, uint8_t lut[256]);

imgpu_image *imgpu_cpu_equalize(const imgpu_image *in, const imgpu_equalize_params *p);
imgpu_image *imgpu_cpu_rotate(const imgpu_image *in, const imgpu_rotate_params *p);

/* Rotation pieces shared with the CUDA host side and the tests; rotate.c states the exact
 * convention (coordinates, float operation order, weights, rounding, 90-degree crop rule). */
/* Counterclockwise quarter turns 0..3 when fmod(angle, 360) (made non-negative) is exactly
 * 0, 90, 180 or 270 — the same test imgpu_rotate_output_size uses — else -1. */
int imgpu_cpu_rotate_quarter(double angle);
/* cos and sin of the angle reduced to [0, 360), computed in double, rounded to float. */
void imgpu_cpu_rotate_trig(double angle, float *cos_t, float *sin_t);
/* The background in the image's own channel order (gray: R; gray+alpha: R, A; RGB; RGBA). */
void imgpu_cpu_rotate_background(const imgpu_rotate_params *p, int channels, uint8_t bg[4]);
/* One output pixel: `in` (8-bit) sampled at the continuous point (sx, sy), pixel (i, j)
 * covering [i, i+1) x [j, j+1); taps outside the image read bg. Writes in->channels bytes. */
void imgpu_cpu_rotate_sample(const imgpu_image *in, imgpu_filter filter, float sx, float sy,
                             const uint8_t bg[4], uint8_t *out);

/* BT.601 full-range conversions in OpenCV's 14-bit fixed point, shared by CPU and CUDA
 * (the kernels reimplement the same integer formula; tests hold them equal). */
uint8_t imgpu_cpu_rgb_to_y(uint8_t r, uint8_t g, uint8_t b);
void imgpu_cpu_rgb_to_ycbcr(uint8_t r, uint8_t g, uint8_t b, uint8_t *y, uint8_t *cb, uint8_t *cr);
void imgpu_cpu_ycbcr_to_rgb(uint8_t y, uint8_t cb, uint8_t cr, uint8_t *r, uint8_t *g, uint8_t *b);

#ifdef __cplusplus
}
#endif
#endif

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

/* BT.601 full-range conversions in OpenCV's 14-bit fixed point, shared by CPU and CUDA
 * (the kernels reimplement the same integer formula; tests hold them equal). */
uint8_t imgpu_cpu_rgb_to_y(uint8_t r, uint8_t g, uint8_t b);
void imgpu_cpu_rgb_to_ycbcr(uint8_t r, uint8_t g, uint8_t b, uint8_t *y, uint8_t *cb, uint8_t *cr);
void imgpu_cpu_ycbcr_to_rgb(uint8_t y, uint8_t cb, uint8_t cr, uint8_t *r, uint8_t *g, uint8_t *b);

#ifdef __cplusplus
}
#endif
#endif

/* cpu.h — the CPU backend: the reference every GPU result is tested against, and the
 * fallback when no GPU is present. Plain, obviously correct code, run on every core: the hot
 * loops split rows over threads (parallel.h; IMGPU_CPU_THREADS), which changes who computes
 * a pixel, never how — results are byte-identical on any number of threads. */
#ifndef IMGPU_CPU_H
#define IMGPU_CPU_H

#include <stdint.h>

#include "image.h"
#include "op.h"

#ifdef __cplusplus
extern "C" {
#endif

int imgpu_cpu_histogram(const imgpu_image *in, imgpu_histogram *out);

/* OpenCV equalizeHist LUT from a 256-bin histogram of n pixels (the shared reference formula). */
void imgpu_cpu_equalize_lut(const uint32_t hist[256], uint64_t n, uint8_t lut[256]);

imgpu_image *imgpu_cpu_equalize(const imgpu_image *in, const imgpu_equalize_params *p);
imgpu_image *imgpu_cpu_rotate(const imgpu_image *in, const imgpu_rotate_params *p);

/* One output pixel: `in` (8- or 16-bit) sampled at the continuous point (sx, sy), pixel (i, j)
 * covering [i, i+1) x [j, j+1); taps outside the image read bg, the 8-bit background above
 * (bg * 257 at 16 bits). Writes in->channels samples of in->depth bits: bytes at 8 bits,
 * native-endian uint16_t at 16 (2 * in->channels bytes). */
void imgpu_cpu_rotate_sample(const imgpu_image *in, imgpu_filter filter, float sx, float sy,
                             const uint8_t bg[4], uint8_t *out);

/* BT.601 full-range conversions in OpenCV's 14-bit fixed point, shared by CPU and CUDA
 * (the kernels reimplement the same integer formula; tests hold them equal). */
uint8_t imgpu_cpu_rgb_to_y(uint8_t r, uint8_t g, uint8_t b);
void imgpu_cpu_rgb_to_ycbcr(uint8_t r, uint8_t g, uint8_t b, uint8_t *y, uint8_t *cb, uint8_t *cr);
void imgpu_cpu_ycbcr_to_rgb(uint8_t y, uint8_t cb, uint8_t cr, uint8_t *r, uint8_t *g, uint8_t *b);

/* ---- 16-bit color (color16.c): OpenCV's cvtColor RGB <-> YCrCb on CV_16U, the same 14-bit
 * fixed point as the 8-bit functions with 32768 in place of 128, saturated to 0..65535. */
uint16_t imgpu_cpu_rgb16_to_y(uint16_t r, uint16_t g, uint16_t b);
void imgpu_cpu_rgb16_to_ycbcr(uint16_t r, uint16_t g, uint16_t b, uint16_t *y, uint16_t *cb, uint16_t *cr);
void imgpu_cpu_ycbcr16_to_rgb(uint16_t y, uint16_t cb, uint16_t cr, uint16_t *r, uint16_t *g, uint16_t *b);

/* ---- equalization at any depth and formula (equalize_formula.c) ---------------------------- */
/* The LUT of `formula` for a histogram of `levels` (256 or 65536) bins of n pixels; 8-bit
 * OpenCV is exactly imgpu_cpu_equalize_lut. */
void imgpu_cpu_equalize_lut_full(const uint32_t *hist, int levels, uint64_t n,
                                 imgpu_eq_formula formula, uint16_t *lut);
/* Any depth, any formula (imgpu_cpu_equalize handles 8-bit OpenCV; this everything). */
imgpu_image *imgpu_cpu_equalize_full(const imgpu_image *in, const imgpu_equalize_params *p);
/* Full-resolution histograms (see imgpu_histogram_full in op.h). */
int imgpu_cpu_histogram_full(const imgpu_image *in, imgpu_histogram_full *out);

/* OpenCV borderInterpolate(BORDER_REFLECT_101) of p into 0..len-1. */
int imgpu_cpu_reflect101(int p, int len);

/* Each op's own entry points (the tile LUTs of a local-contrast op, ...) stay in its CPU file
 * and are reached through the run table (imgpu_cpu_run); tests that reach further declare
 * what they call themselves. */

/* ---- the floor's geometry under its former CPU names -------------------------------------
 * These rules used to live here and the CUDA host side borrowed them; they are the op floor's
 * now (op.h). The old names stay as aliases for the tests and benchmarks written against them;
 * new code calls the op.h names. */
static inline int imgpu_cpu_rotate_quarter(double angle) { return imgpu_rotate_quarter(angle); }
static inline void imgpu_cpu_rotate_trig(double angle, float *cos_t, float *sin_t)
{
    imgpu_rotate_trig(angle, cos_t, sin_t);
}
static inline void imgpu_cpu_rotate_background(const imgpu_rotate_params *p, int channels, uint8_t bg[4])
{
    imgpu_rotate_background(p, channels, bg);
}

/* ---- the run table (ops_table.c) -------------------------------------------------------------
 * Each op's CPU file exports its entry, imgpu__cpu_op_<name> (the registry's names,
 * src/op/registry.h): the kind it runs and how. */
typedef struct imgpu_cpu_op {
    imgpu_op_kind kind;
    /* A new image, or NULL with a message; never writes its input. */
    imgpu_image *(*run)(const imgpu_image *in, const imgpu_op *op);
} imgpu_cpu_op;
/* One op on `in` through its entry: a new image, or NULL with a message. */
imgpu_image *imgpu_cpu_run(const imgpu_image *in, const imgpu_op *op);

/* The threads the CPU backend runs an op on (IMGPU_CPU_THREADS or the cores, at most the
 * calling thread's cap), and that cap: ops started from the calling thread use at most n
 * threads (0: no cap). Per thread; the results are the same bytes whatever the count. */
/* The tone LUT ops (issue 28; lut_apply.c): a new image whose colour channels k are
 * lut[(planes == 1 ? 0 : k) * 2^depth + v] (planes 1, or 3 for R, G, B), alpha copied; NULL with
 * a message. imgpu__cpu_lut_alloc: planes * 2^depth entries (malloc), or NULL with a message. */
imgpu_image *imgpu__cpu_apply_lut(const imgpu_image *in, const uint16_t *lut, int planes);
uint16_t *imgpu__cpu_lut_alloc(int depth, int planes);
/* normalize and autolevel (op-norm; tone_cdf.c): the CDFs op.h describes (intensity: IM's
 * intensity for a colour image), malloc'ed into *cdf (*planes x *bins); 0, or -1 with a message. */
int imgpu__cpu_tone_cdf(const imgpu_image *in, int intensity, uint32_t **cdf, int *planes, int *bins);

int imgpu_cpu_threads(void);
void imgpu_cpu_threads_cap(int n);

#ifdef __cplusplus
}
#endif
#endif

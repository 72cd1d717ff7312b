/* placeholder; the CPU work replaces this file with histogram.c, equalize.c, rotate.c, color.c */
#include "cpu.h"
#include "../error.h"
int imgpu_cpu_histogram(const imgpu_image *in, imgpu_histogram *out) { (void)in; (void)out; return imgpu_error("not implemented"); }
void imgpu_cpu_equalize_lut(const uint32_t hist[256], uint64_t n, uint8_t lut[256]) { (void)hist; (void)n; for (int i = 0; i < 256; i++) lut[i] = (uint8_t)i; }
imgpu_image *imgpu_cpu_equalize(const imgpu_image *in, const imgpu_equalize_params *p) { (void)in; (void)p; imgpu_error("not implemented"); return 0; }
imgpu_image *imgpu_cpu_rotate(const imgpu_image *in, const imgpu_rotate_params *p) { (void)in; (void)p; imgpu_error("not implemented"); return 0; }
uint8_t imgpu_cpu_rgb_to_y(uint8_t r, uint8_t g, uint8_t b) { (void)g; (void)b; return r; }
void imgpu_cpu_rgb_to_ycbcr(uint8_t r, uint8_t g, uint8_t b, uint8_t *y, uint8_t *cb, uint8_t *cr) { *y = r; *cb = g; *cr = b; }
void imgpu_cpu_ycbcr_to_rgb(uint8_t y, uint8_t cb, uint8_t cr, uint8_t *r, uint8_t *g, uint8_t *b) { *r = y; *g = cb; *b = cr; }

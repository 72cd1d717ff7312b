/* bench_full.h — issue-6 rows of `imgpu bench` (bench_full.c). */
#ifndef IMGPU_BENCH_FULL_H
#define IMGPU_BENCH_FULL_H

#include <stddef.h>

#include "image.h"

/* CLAHE, 16-bit histograms and equalize, formulas; sizes/chans/contents filter as bench.c's
 * options do; gray / rgb: the photos (may be NULL: flat content). */
void bench_full(const char *sizes, const char *chans, const char *contents, size_t l2, int csv,
                const imgpu_image *gray, const imgpu_image *rgb);

#endif

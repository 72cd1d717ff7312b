/* bench_full.h — issue-6 rows of `imgpu bench` (bench_full.c). */
#ifndef IMGPU_BENCH_FULL_H
#define IMGPU_BENCH_FULL_H

#include <stddef.h>

#include "image.h"

/* CLAHE, 16-bit histograms and equalize, formulas; sizes/chans/contents/depths filter as
 * bench.c's options do; parts: which rows ("full" for all, else any of "hist16", "eqfull",
 * "clahe"); gray / rgb: the photos (may be NULL: flat content). */
void bench_full(const char *sizes, const char *chans, const char *contents, const char *depths, const char *parts,
                size_t l2, int csv, const imgpu_image *gray, const imgpu_image *rgb);

#endif

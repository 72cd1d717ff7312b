/* bench_cpu.h — the CPU table of `imgpu bench` (bench_cpu.c): `--cpu`, or no usable GPU. */
#ifndef IMGPU_BENCH_CPU_H
#define IMGPU_BENCH_CPU_H

#include <stdio.h>

/* The usage text of imgpu bench, both tables. */
void bench_usage(FILE *f);
/* Parses imgpu bench's options (argv[0] is the program) and prints the CPU table; why: the
 * reason the GPU table is not run, said on stderr (NULL: --cpu asked for it). The exit
 * status: 0, 1 (an op failed), 2 (a usage error). */
int bench_cpu_main(int argc, char **argv, const char *why);

#endif

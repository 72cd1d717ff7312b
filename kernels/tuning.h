/* tuning.h — every tuning number of the kernels in one place, with the constraints each
 * must meet beside it. Change a number here, re-run `imgpu bench`, keep what wins. */
#ifndef IMGPU_TUNING_H
#define IMGPU_TUNING_H

/* Histogram (kernels/histogram.cu). One thread consumes a chunk of 16 pixels = 16*C bytes
 * with C 16-byte loads, so a chunk never straddles a pixel and every load is aligned
 * (device buffers are cudaMalloc'ed: 256-byte aligned, rows packed).
 * IMGPU_HIST_BLOCK must be a multiple of 32 and >= 256 (the merge loop gives each thread
 * at least one bin). Warp-privatized variant: one sub-histogram per warp, so
 * (IMGPU_HIST_BLOCK/32) * planes * 1 KiB must fit in 48 KiB of static shared memory
 * (8 warps * 5 planes = 40 KiB). */
#define IMGPU_HIST_BLOCK 256
#define IMGPU_HIST_BLOCKS_PER_SM 8   /* persistent grid: SMs * this many blocks (8 x 256 = full occupancy) */
/* Fused equalize: blocks per SM, at most what the occupancy calculator allows (a cooperative
 * grid must be co-resident). Fewer blocks: fewer global merges; more: more loads in flight. */
#define IMGPU_EQ_BLOCKS_PER_SM 8
/* Both may be overridden at run time for tuning sweeps (imgpu bench): the environment
 * variables IMGPU_HIST_BLOCKS_PER_SM and IMGPU_EQ_BLOCKS_PER_SM. */

/* Scans (kernels/scan.cu). The equalize CDF is a 256-bin scan done by one block of 256
 * threads, one bin each. The generic block scan accepts 32..1024 threads (powers of two). */
#define IMGPU_CDF_BINS 256

/* LUT apply (kernels/lut.cu): threads per block; each thread maps 16 pixels per step. */
#define IMGPU_LUT_BLOCK 256
#define IMGPU_LUT_BLOCKS_PER_SM 8

/* Rotation (kernels/rotate.cu): a block is IMGPU_ROT_BX x IMGPU_ROT_BY threads, each thread
 * writes IMGPU_ROT_PIX consecutive output pixels of one row, packed into one wide store.
 * IMGPU_ROT_PIX must be 4 (the stores are written for 4*C bytes). */
#define IMGPU_ROT_BX 32
#define IMGPU_ROT_BY 8
#define IMGPU_ROT_PIX 4
/* 90-degree turns: square tiles through shared memory (TILE x TILE pixels, TILE/ROWS rows
 * per thread). TILE must be a multiple of ROWS. */
#define IMGPU_TURN_TILE 32
#define IMGPU_TURN_ROWS 8

#endif

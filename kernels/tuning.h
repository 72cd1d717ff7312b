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
/* Persistent grid: SMs * this many blocks. Every block pays a shared-memory clear and one
 * global atomic per non-empty bin, so more blocks is not better: on the H100 (4K and 8K gray
 * photos) 2 per SM measured 8.8 / 18.0 us, 4 per SM 10.6 / 18.7, 8 per SM 15.7 / 23.4. */
#define IMGPU_HIST_BLOCKS_PER_SM 2
/* The lane-private histogram of 2-4 channels (histogram.cu): threads per block; its grid is
 * every block that fits beside its P x 32 KiB of shared memory (RGB: 2 per SM). */
#define IMGPU_HIST_LANES_BLOCK 512
/* Fused equalize: one block per IMGPU_EQ_PIXELS_PER_BLOCK pixels, at least one per SM and at
 * most what is co-resident (a cooperative grid must be). 4K gray: 2 blocks per SM measured
 * 14.8 us against 20.2 at 8; 8K gray wants more blocks (46 us at 4-8 per SM, 50 at 2). */
#define IMGPU_EQ_PIXELS_PER_BLOCK 32768
/* On-chip fused equalize (read the image once): blocks per SM, each with ~1/this of the SM's
 * shared memory for its run of the image (H100: ~28 MiB on chip in all). It is the default
 * wherever the shared memory exists: past what fits, the spill is read twice, as the two-pass
 * kernel reads everything. H100 (imgpu bench, forced on-chip / forced two-pass, us):
 * gray photo 4K 12.3 / 13.8, 8K 30.3 / 48.8; RGB luminance 4K 28.9 / 34.8, 8K (100 MB, 3.5x
 * what fits) 115.6 / 128.1; RGB per-channel 8K 168.1 / 168.7; noise per-channel 8K 149.4 / 158.2.
 * Per-channel mode on RGB takes neither: H200 (2026-11-27) RGB photo on-chip / two-pass
 * 1080p 22.1 / 21.2, 4K 46.4 / 43.8, 8K 154.7 / 132.7 us, both bound by their block-private
 * histogram pass (the RGB histogram alone, 8K: 85.5 us block-private, 35.1 lane-private), so it
 * runs the two-pass kernel with lane-private histograms (equalize_lanes_kernel). */
#define IMGPU_EQ_ONCHIP_BLOCKS_PER_SM 2
/* Tuning sweeps (imgpu bench) may override them at run time (imgpu_tuning, below):
 * IMGPU_HIST_BLOCKS_PER_SM, and IMGPU_EQ_BLOCKS_PER_SM (a fixed blocks-per-SM count for the
 * fused equalize). */

/* Scans (kernels/scan.cu). The equalize CDF is a 256-bin scan done by one block of 256
 * threads, one bin each. The generic block scan accepts 32..1024 threads (powers of two). */
#define IMGPU_CDF_BINS 256
/* The generic block scan (imgpu_launch_block_scan) stages IMGPU_SCAN_TILE values at a time
 * through shared memory (a power of two >= 1024; B threads take TILE/B each, at most 64):
 * 16384 -> 66 KiB of dynamic shared memory plus 2*B words for the block scan, and a 65536-bin
 * CDF in 4 tiles. Each tile costs one block scan of the per-thread totals, so the 65536-bin
 * CDF of 16-bit equalize (src/cuda/equalize_full.c) uses IMGPU_SCAN_CDF16_BLOCK threads:
 * 256 threads x 64 values pay 8 barrier steps per tile where 1024 x 16 pay 10 steps of 4x the
 * warps; the shared-memory traffic of the transposes is the same. H100, 16-bit equalize of a
 * 4K gray photo (imgpu bench, throughput): 68.5 us at 256, 66.9 at 512, 67.2 at 1024, i.e.
 * within noise; ncu puts the scan at 13.6 us of a single run. Sweeps: IMGPU_SCAN_CDF16_BLOCK in
 * the environment (256, 512, 1024). Must be a block size the launcher accepts. */
#define IMGPU_SCAN_TILE 16384
#define IMGPU_SCAN_CDF16_BLOCK 256
/* On sm_90 the 65536-bin CDF and its LUT are one launch instead (equalize_full.cu
 * cdf_lut16_cluster_kernel): a cluster of IMGPU_CDF16_CLUSTER blocks of 1024 threads, 65536 /
 * (IMGPU_CDF16_CLUSTER * 1024) bins per thread (a multiple of 8). 8: a portable cluster size. */
#define IMGPU_CDF16_CLUSTER 8

/* LUT apply (kernels/equalize.cu, the three-launch path): threads per block; each thread
 * maps 16 pixels per step. */
#define IMGPU_LUT_BLOCK 256
#define IMGPU_LUT_BLOCKS_PER_SM 8

/* Rotation (kernels/rotate.cu): a block is IMGPU_ROT_BX x IMGPU_ROT_BY threads, each thread
 * writes IMGPU_ROT_PIX consecutive output pixels of one row, packed into one wide store.
 * IMGPU_ROT_PIX must be 4 (the stores are written for 4*C bytes). */
#define IMGPU_ROT_BX 32
#define IMGPU_ROT_BY 8
#define IMGPU_ROT_PIX 4
/* Layout of the rotation threads: rows (the above) or warp tiles (each warp a 32 x 4 output
 * tile, IMGPU_ROT_TILED_WX warps side by side in a block of IMGPU_ROT_BX * IMGPU_ROT_BY
 * threads; rotate.cu says why one might help), chosen per image and filter: rows for images
 * of up to IMGPU_ROT_ROWS_MAX_C channels with nearest or bilinear, and for gray bicubic by
 * gathers (4 fetches per pixel); tiles for more channels and for bicubic by point fetches (16
 * per pixel, where the compact footprint pays). H100, rotate 30 photo, texture over a CUDA
 * array, with the per-warp background skip (bench/tune_sweep.sh):
 *   bilinear gray 4K 13.9 us rows / 17.4 tiles, 8K 52.1 / 59.7 (pitched linear 56.4 / 60.1);
 *   bilinear RGB  4K 28.4 rows / 26.2 tiles, 8K 99.0 / 91.0;
 *   bicubic gray (pitched linear) 4K 153.3 rows / 109.7 tiles, 8K 586.8 / 421.1.
 * H200, 2026-11-27: bicubic gray by gathers 4K 43.8 rows / 49.1 tiles, 8K 160.9 / 181.6.
 * Without the skip every layout and width measured 56.9-57.7 us at 8K gray, nearest 53.6-58.3,
 * and the L1/shared carveout (0 or 100%) changed nothing: the time is the texture unit's fetch
 * rate, one fetch per output pixel. Sweeps: IMGPU_ROT_LAYOUT (0 rows, 1 tiles, for every
 * channel count), IMGPU_ROT_WX, IMGPU_ROT_BX. */
#define IMGPU_ROT_ROWS_MAX_C 2
#define IMGPU_ROT_TILED_WX 2
/* 90-degree turns: square tiles through shared memory (TILE x TILE pixels, TILE/ROWS rows
 * per thread). TILE must be a multiple of ROWS. */
#define IMGPU_TURN_TILE 32
#define IMGPU_TURN_ROWS 8

/* 16-bit histograms (kernels/equalize_full.cu). Shared 16-bit counters: a block of
 * IMGPU_H16_BLOCK threads takes IMGPU_H16_PIXELS_PER_BLOCK pixels, which must be <= 65535 (a
 * 16-bit counter may then see every pixel of its block without carrying into its neighbour)
 * and a multiple of 8 (chunks of 8 pixels = 16-byte loads start on a block boundary).
 * 128 KiB of shared memory: one block per SM. Sliced variant: IMGPU_H16_SLICES bin slices of
 * 65536 / SLICES 32-bit counters, segments of IMGPU_H16_SLICE_PIXELS (multiple of 8). */
#define IMGPU_H16_BLOCK 1024
#define IMGPU_H16_PIXELS_PER_BLOCK 65528
#define IMGPU_H16_SLICES 4
#define IMGPU_H16_SLICE_PIXELS 131072
/* Cluster variant (sm_90): the shared16 blocks, IMGPU_H16_CLUSTER to a cluster (2..16, a power
 * of two; above 8 is a non-portable cluster size), merged through distributed shared memory
 * before global memory. H100, 4K gray photo / noise, histogram + memset, with the 64-bit pair
 * merge: 1 (= shared16) 24.9 / 28.9 us, 2: 24.2 / 25.6, 4: 35.8 / 36.2 (32-bit merge: 1: 40.8 /
 * 49.7, 2: 34.8 / 39.8, 4: 44.3 / 44.9, 8: 43.0 / 42.8, 16: 44.8 / 44.9): the remote reads grow
 * with the cluster faster than the merge shrinks. Sweep: IMGPU_H16_CLUSTER. */
#define IMGPU_H16_CLUSTER 2
/* LUT apply at any depth: threads per block, blocks per SM of the persistent grid. */
#define IMGPU_LUTF_BLOCK 256
#define IMGPU_LUTF_BLOCKS_PER_SM 8
/* The LUT of any formula at 65536 levels (lut_full_kernel): blocks of IMGPU_LUTF_LUT_THREADS
 * threads, IMGPU_LUTF_LUT_ENTRIES entries each (a multiple of the threads): 64 blocks for
 * 65536 levels, one for 256. Every block repeats a 3-step warp search of the CDF for the first
 * and last non-empty bin, so fewer, fuller blocks keep that traffic small. */
#define IMGPU_LUTF_LUT_THREADS 256
#define IMGPU_LUTF_LUT_ENTRIES 1024

/* CLAHE (kernels/clahe.cu). Tile histograms: 8-bit blocks of 256 threads with warp-private
 * 256-bin sub-histograms take IMGPU_CLAHE8_PIXELS of one tile each (more blocks per tile when
 * a tile is larger; at most 65535 segments per tile, so a huge tile raises it); 16-bit blocks
 * of 1024 threads with packed 16-bit counters take at most IMGPU_CLAHE16_PIXELS (<= 65535, the
 * counter limit). Tile LUTs: one block per tile, 256 threads (8-bit, one bin each) or 1024
 * threads (16-bit, runs of 64 bins). Apply: blocks of IMGPU_CLAHE_APPLY_BX x _BY pixels. */
#define IMGPU_CLAHE8_PIXELS 16384
#define IMGPU_CLAHE16_PIXELS 65535
#define IMGPU_CLAHE_APPLY_BX 64
#define IMGPU_CLAHE_APPLY_BY 4

/* ---- the run-time tuning config -------------------------------------------------------------
 * The numbers above that a sweep may change, and the variant switches of tests and imgpu bench,
 * as one struct the launchers receive (kernels.h: a `const imgpu_tuning *`; NULL means the
 * defaults above, IMGPU_TUNING_DEFAULTS). The launchers read nothing else: no environment, no
 * switch of their own. The CUDA backend fills one per process, once, before its first launch
 * (src/cuda/tuning.c: these defaults, then the sweep variables of the environment, each checked
 * as its comment says; an invalid value keeps the default) and passes it to every launch;
 * bench/tune_sweep.sh sets those variables before imgpu bench starts. */
typedef struct imgpu_tuning {
    int hist_blocks_per_sm; /* IMGPU_HIST_BLOCKS_PER_SM: > 0 */
    int eq_blocks_per_sm;   /* IMGPU_EQ_BLOCKS_PER_SM: > 0 fixes the fused equalize's blocks per SM
                               (at most what is co-resident); 0 sizes the grid by the image. The
                               lane-private per-channel kernel always runs every co-resident block */
    int eq_path;            /* imgpu_kernels_eq_path: 0 choose, 1 two-pass, 2 on-chip, 3 lane-private
                               per-channel (2-4 channels; else as 0; 0 takes it for RGB) */
    int eq_keep_chunks;     /* imgpu_kernels_eq_path: > 0 caps an on-chip block's kept chunks */
    int scan_cdf16_block;   /* IMGPU_SCAN_CDF16_BLOCK: 256, 512 or 1024 */
    int h16_cluster;        /* IMGPU_H16_CLUSTER: > 0; other than a power of two in 2..16, the
                               cluster variant runs as shared16 (no clusters) */
    int lut16_path;         /* imgpu_kernels_lut16_path: 0 fused where available, 1 scan + LUT */
    int rot_layout;         /* IMGPU_ROT_LAYOUT, imgpu_kernels_rot_layout: -1 by channel count and
                               filter (above), 0 rows, 1 warp tiles */
    int rot_bx;             /* IMGPU_ROT_BX: the rows layout's block width, a divisor of
                               IMGPU_ROT_BX * IMGPU_ROT_BY (the threads stay that many) */
    int rot_wx;             /* IMGPU_ROT_WX: warps side by side in a warp-tile block, a divisor
                               of IMGPU_ROT_BX * IMGPU_ROT_BY / 32 */
    int rot_gather;         /* imgpu_kernels_rot_gather: 1 gray bicubic takes its taps by
                               tex2Dgather from an array made for it, 0 by point fetches */
} imgpu_tuning;

#define IMGPU_TUNING_DEFAULTS                                                                    \
    { IMGPU_HIST_BLOCKS_PER_SM, 0, 0, 0, IMGPU_SCAN_CDF16_BLOCK, IMGPU_H16_CLUSTER, 0, -1,       \
      IMGPU_ROT_BX, IMGPU_ROT_TILED_WX, 1 }

#ifdef __cplusplus
extern "C" {
#endif
/* Tests and imgpu bench, between runs (one thread, nothing in flight): set the variant fields
 * of the CUDA backend's config (src/cuda/tuning.c). Fused equalize (equalize.cu): path 0
 * chooses (per-channel mode on RGB: the two-pass kernel with lane-private histograms;
 * otherwise the on-chip kernel, which keeps the image in shared memory across the grid barrier
 * and reads only what does not fit twice, wherever the device has the shared memory; else the
 * two-pass one), 1 always the two-pass kernel with the block-private histogram, 2 always the
 * on-chip one, 3 the lane-private one where it applies (else as 0); keep_chunks > 0 caps
 * the 16-pixel chunks an on-chip block keeps (the rest spill and are read twice), so tests can
 * cover the spill on small images. */
void imgpu_kernels_eq_path(int path, int keep_chunks);
/* Rotation's thread layout (rotate.cu): 0 rows of 4-pixel groups, 1 warp tiles, -1 back to the
 * default (IMGPU_ROT_LAYOUT if set, else by channel count and filter). */
void imgpu_kernels_rot_layout(int layout);
/* Gray bicubic rotation's taps: 1 (the default) by tex2Dgather, 0 by 16 point fetches; the
 * bytes are the same (tests/gpu/test_gpu_ops.c compares them), the speed is not. */
void imgpu_kernels_rot_gather(int on);
/* The 16-bit LUT (equalize_full.cu): 0 the default (fused where available), 1 always the scan
 * + LUT kernels. */
void imgpu_kernels_lut16_path(int path);
/* ---- op-geom (issue 28): flip and crop, one thread per output pixel on a 1-D grid ---- */
#define IMGPU_GATHER_THREADS 256

#ifdef __cplusplus
}
#endif

#endif

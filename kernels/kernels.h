/* kernels.h — the C-clean interface to every CUDA kernel in the kernels/ .cu files.
 *
 * Launchers (imgpu_launch_*) take a stream, never allocate, never synchronize, never exit,
 * and return the cudaError_t of the launch (cudaGetLastError right after it). Buffers are
 * device pointers from cudaMalloc (256-byte aligned) holding packed images: rows top to
 * bottom with no padding, channels interleaved, samples of 8 bits or, where a launcher takes a
 * depth or uint16_t pointers, 16 bits (native-endian uint16_t, as src/core/image.h); so a streaming
 * kernel can treat an image as one flat array of `npix` pixels of `channels` samples.
 * Launchers with run-time tuning or variant choices take them as a `const imgpu_tuning *`
 * (tuning.h; NULL: the compile-time defaults) and read no tuning from the environment (the one
 * variable they see is IMGPU_NO_CLUSTERS, per_device.cuh, a switch for sanitizer runs).
 */
#ifndef IMGPU_KERNELS_H
#define IMGPU_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "tuning.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- histogram (histogram.cu) ---------------------------------------------------------- */
typedef enum imgpu_hist_variant {
    IMGPU_HIST_GLOBAL_ATOMICS = 0, /* every pixel an atomicAdd on global memory (the baseline) */
    IMGPU_HIST_BLOCK_PRIVATE,      /* one shared-memory histogram per block, merged once */
    IMGPU_HIST_WARP_PRIVATE,       /* one shared-memory histogram per warp: less contention */
    IMGPU_HIST_LANE_PRIVATE,       /* one per lane, bank-interleaved: no bank or address conflicts
                                      (gray: 32 KiB; 2-4 channels: planes x 32 KiB of dynamic shared
                                      memory, block-private where the device lacks it) */
    IMGPU_HIST_VARIANT_COUNT
} imgpu_hist_variant;
/* The variant a channel count runs by default (bench/RESULTS.md, 2026-11-27, H200): RGB
 * lane-private (8K photo 35.1 us against 85.5 block-private: a block-shared histogram
 * serializes on the equal colours of neighbouring pixels); gray block-private (8K photo 16.8
 * us, lane-private 17.8); gray + alpha and RGBA block-private, not measured otherwise (their
 * alpha planes, often constant, cost block-private's run merge one atomic a chunk). */
#define IMGPU_HIST_DEFAULT_FOR(channels) ((channels) == 3 ? IMGPU_HIST_LANE_PRIVATE : IMGPU_HIST_BLOCK_PRIVATE)
const char *imgpu_hist_variant_name(imgpu_hist_variant v);

/* Number of 256-bin planes the histogram of a `channels`-channel image has: one per channel,
 * plus one for luma (BT.601 Y) when want_luma and channels >= 3. */
int imgpu_hist_planes(int channels, int want_luma);

/* Adds the histogram of d_img to d_hist (planes*256 counters). The caller zeroes d_hist
 * first (cudaMemsetAsync). grid <= 0 picks the persistent-grid default, imgpu_hist_grid(NULL). */
cudaError_t imgpu_launch_histogram(imgpu_hist_variant v, const uint8_t *d_img, size_t npix,
                                   int channels, int want_luma, uint32_t *d_hist, int grid,
                                   cudaStream_t stream);
/* The persistent grid of imgpu_launch_histogram on the current device: its SMs times
 * tune->hist_blocks_per_sm (NULL: IMGPU_HIST_BLOCKS_PER_SM). */
int imgpu_hist_grid(const imgpu_tuning *tune);

/* ---- scans (scan.cu) ----------------------------------------------------------------------- */
typedef enum imgpu_scan_variant {
    IMGPU_SCAN_KOGGE_STONE_DB = 0, /* Kogge-Stone, double-buffered shared memory: one barrier per step */
    IMGPU_SCAN_KOGGE_STONE_2B,     /* Kogge-Stone in place: two barriers per step */
    IMGPU_SCAN_BRENT_KUNG,         /* work-efficient up-sweep / down-sweep */
    IMGPU_SCAN_VARIANT_COUNT
} imgpu_scan_variant;
#define IMGPU_SCAN_DEFAULT IMGPU_SCAN_KOGGE_STONE_DB
const char *imgpu_scan_variant_name(imgpu_scan_variant v);

/* Inclusive scan of n uint32 values (wrapping mod 2^32) by ONE block of `block` threads
 * (32, 64, ..., 1024), in tiles of up to IMGPU_SCAN_TILE values staged through shared memory
 * (coalesced loads and stores): each thread scans a few consecutive values of the tile, the
 * block scans the thread totals with the chosen variant, and the carry of earlier tiles is
 * added. Any n >= 1; d_in == d_out allowed. (Unit tests and large CDFs.) */
cudaError_t imgpu_launch_block_scan(imgpu_scan_variant v, int block, const uint32_t *d_in,
                                    uint32_t *d_out, int n, cudaStream_t stream);

/* ---- equalize (equalize.cu) --------------------------------------------------------------- */
/* Equalize LUTs (OpenCV equalizeHist formula, see src/core/op.h) for `planes` consecutive
 * 256-bin histograms of npix pixels each: d_lut[p*256 + v]. One block per plane. d_lut holds
 * planes*256 + 1 bytes: the last is 1 when plane 0 has a single value (a constant image),
 * which the luminance apply reads to return such an image unchanged (the CPU's rule). */
cudaError_t imgpu_launch_equalize_lut(imgpu_scan_variant v, const uint32_t *d_hist, int planes,
                                      uint64_t npix, uint8_t *d_lut, cudaStream_t stream);

/* Apply LUTs. luminance = 0: color channel k maps through d_lut[k*256..] (gray: plane 0;
 * alpha is copied). luminance = 1 (channels >= 3): Y of BT.601 YCbCr maps through d_lut[0..255]
 * and the pixel is converted back (OpenCV's fixed point) unless d_lut[256] (the constant flag)
 * says Y is constant, then the image is copied; alpha is copied. In place allowed. */
cudaError_t imgpu_launch_apply_lut(const uint8_t *d_in, uint8_t *d_out, size_t npix, int channels,
                                   int luminance, const uint8_t *d_lut, int grid, cudaStream_t stream);

/* The whole equalize in ONE cooperative launch: privatized histogram, grid-wide barrier,
 * every block builds the LUT from the merged histogram (double-buffered Kogge-Stone scan),
 * then maps the pixels it has just read (still in L2). d_hist2 holds 2 * 3 * 256 counters,
 * zeroed once at allocation: run k accumulates into half `parity` and zeroes the other half
 * for run k+1, so no memset launch is needed. Flip parity between runs; one d_hist2 per
 * stream. tune: which fused kernel (eq_path, eq_keep_chunks: tuning.h) and the grid
 * (eq_blocks_per_sm). */
cudaError_t imgpu_launch_equalize_fused(const uint8_t *d_in, uint8_t *d_out, size_t npix,
                                        int channels, int luminance, uint32_t *d_hist2,
                                        int parity, const imgpu_tuning *tune, cudaStream_t stream);

/* ---- rotation (rotate.cu) ----------------------------------------------------------------- */
typedef struct imgpu_rotate_geom {
    int in_w, in_h;        /* source size (the texture) */
    int out_w, out_h;      /* canvas size */
    int channels;          /* 1..4 of the OUTPUT buffer (the texture may hold RGB as RGBA) */
    int filter;            /* imgpu_filter: 0 nearest, 1 bilinear, 2 bicubic */
    float cos_t, sin_t;    /* of the angle, computed in double and rounded once */
    float in_cx, in_cy;    /* in_w/2, in_h/2 */
    float out_cx, out_cy;  /* out_w/2, out_h/2 */
    uint8_t background[4]; /* for taps/pixels outside the source (also the texture border) */
    int gather;            /* 1: tex_point's array allows tex2Dgather: gray bicubic takes its 16
                            * taps in 4 gathers (imgpu__cuda_tex.gather); 0: 16 point fetches */
} imgpu_rotate_geom;

/* Output-driven rotation through texture objects over a CUDA array: tex_linear has
 * cudaFilterModeLinear, tex_point cudaFilterModePoint, both normalized-float reads with the
 * border address mode whose border color is the background. tune: the thread layout
 * (rot_layout: rows of 4-pixel groups or warp tiles, rotate.cu) and its block shape (rot_bx,
 * rot_wx); cudaErrorInvalidValue when those are not ones tuning.h allows. */
cudaError_t imgpu_launch_rotate(cudaTextureObject_t tex_linear, cudaTextureObject_t tex_point,
                                uint8_t *d_out, const imgpu_rotate_geom *g, const imgpu_tuning *tune,
                                cudaStream_t stream);

/* Exact quarter turns (q = 0..3 counterclockwise) as a tiled permutation through shared
 * memory, no texture: the turned image lands at (off_x, off_y) in an out_w x out_h canvas,
 * the rest is background. */
cudaError_t imgpu_launch_turn(const uint8_t *d_in, int w, int h, int channels, int q,
                              uint8_t *d_out, int out_w, int out_h, int off_x, int off_y,
                              const uint8_t background[4], cudaStream_t stream);

/* 16-bit rotation (samples uint16_t, packed rows) with the CPU reference's arithmetic, bit
 * for bit (rotate.cu says why no texture): the same geometry and filters; the background is
 * g->background times 257. */
cudaError_t imgpu_launch_rotate16(const uint16_t *d_in, uint16_t *d_out, const imgpu_rotate_geom *g,
                                  cudaStream_t stream);
/* 16-bit quarter turns, as imgpu_launch_turn (background times 257). */
cudaError_t imgpu_launch_turn16(const uint16_t *d_in, int w, int h, int channels, int q, uint16_t *d_out,
                                int out_w, int out_h, int off_x, int off_y, const uint8_t background[4],
                                cudaStream_t stream);

/* RGB (3 bytes/pixel) to an RGBA CUDA array through a surface object (textures have no
 * 3-channel format); alpha 255. */
cudaError_t imgpu_launch_rgb_to_surface(const uint8_t *d_rgb, int w, int h,
                                        cudaSurfaceObject_t surf, cudaStream_t stream);

/* ---- viewer (viewer.cu): writing into GL textures registered with CUDA -------------------- */
/* A packed 1..4-channel image into an RGBA8 surface (gray -> g,g,g,255; gray+alpha -> g,g,g,a;
 * RGB -> r,g,b,255), pixel (x, y) to texel (x, y). */
cudaError_t imgpu_launch_view_to_surface(const uint8_t *d_img, int w, int h, int channels,
                                         cudaSurfaceObject_t surf, cudaStream_t stream);
/* The histogram overlay's 256 x 4 RGBA32F texels from two histograms of `colors` (1 or 3)
 * 256-bin planes: rows 0/1 counts and CDF of d_before, rows 2/3 of d_after (viewer.cu says how
 * counts are scaled). */
cudaError_t imgpu_launch_view_hist_to_surface(const uint32_t *d_before, const uint32_t *d_after,
                                              int colors, cudaSurfaceObject_t surf, cudaStream_t stream);

/* ---- any depth, any formula equalization (equalize_full.cu) ---------------------------------
 * Images here are packed like the rest, with 8- or 16-bit samples (depth 8 or 16); a 16-bit
 * histogram has 65536 uint32 counters, a LUT `levels` (256 or 65536) uint16 entries. */
typedef enum imgpu_hist16_variant {
    IMGPU_HIST16_SHARED16 = 0,   /* block-private: 65536 16-bit counters packed two per word in
                                    128 KiB of shared memory; at most 65535 pixels per block, so
                                    no counter can overflow into its neighbour */
    IMGPU_HIST16_SLICED,         /* 32-bit shared counters for one quarter of the bin range
                                    (64 KiB); four blocks read each segment, one per quarter */
    IMGPU_HIST16_GLOBAL_ATOMICS, /* every sample (runs merged) an atomicAdd on global memory */
    IMGPU_HIST16_CLUSTER,        /* SHARED16's counting in blocks grouped into sm_90 clusters
                                    that sum their counters through distributed shared memory:
                                    one global merge per cluster, not per block (SHARED16 below
                                    sm_90) */
    IMGPU_HIST16_VARIANT_COUNT
} imgpu_hist16_variant;
#define IMGPU_HIST16_DEFAULT IMGPU_HIST16_CLUSTER
const char *imgpu_hist16_variant_name(imgpu_hist16_variant v);

/* Adds the 65536-bin histogram of one plane of a 16-bit image to d_hist (zeroed by the
 * caller; 8-byte aligned: bins are merged in pairs by 64-bit atomics): plane 0..channels-1 is
 * that channel, plane == channels (channels >= 3) BT.601 Y. tune: the cluster variant's
 * cluster size (h16_cluster). */
cudaError_t imgpu_launch_histogram16_tuned(imgpu_hist16_variant v, const uint16_t *d_img, size_t npix,
                                           int channels, int plane, uint32_t *d_hist,
                                           const imgpu_tuning *tune, cudaStream_t stream);

/* The LUT of `formula` (an imgpu_eq_formula of src/core/op.h, IMGPU_FORMULA_OPENCV, _PIL or
 * _IMAGEMAGICK, passed as an int; src/cpu/equalize_formula.c states them) for one histogram d_hist of `levels` bins of npix pixels,
 * d_cdf being its inclusive scan (imgpu_launch_block_scan). One block per 1024 levels
 * (tuning.h). 1 is ORed into *d_changed when some present level maps to another value; the
 * caller zeroes it first (stream order), so it may be shared by several planes' launches. */
cudaError_t imgpu_launch_equalize_lut_full(const uint32_t *d_hist, const uint32_t *d_cdf, int levels,
                                           uint64_t npix, int formula, uint16_t *d_lut,
                                           uint32_t *d_changed, cudaStream_t stream);
/* The same LUT for a 65536-bin histogram without the separate scan: the CDF and the LUT in one
 * launch of one sm_90 thread-block cluster (IMGPU_CDF16_CLUSTER blocks sharing their partial
 * sums through distributed shared memory). d_hist and d_lut 16-byte aligned. Only where
 * imgpu_equalize_lut16_fused_available(tune) says so (sm_90 or later, and tune->lut16_path 0);
 * else imgpu_launch_block_scan + imgpu_launch_equalize_lut_full. *d_changed as above. */
int imgpu_equalize_lut16_fused_available(const imgpu_tuning *tune);
cudaError_t imgpu_launch_equalize_lut16_fused(const uint32_t *d_hist, uint64_t npix, int formula, uint16_t *d_lut,
                                              uint32_t *d_changed, cudaStream_t stream);

/* Map a packed 8- or 16-bit image through LUTs of 2^depth entries: luminance = 0: color
 * channel k through d_lut[k * levels ..] (gray: 0; alpha copied); luminance = 1 (channels >= 3):
 * Y of BT.601 YCbCr through d_lut[0 ..] and back, or a plain copy when *d_changed == 0 (the
 * CPU's rule: no lossy color round trip for an identity map). 16-byte loads and stores. */
cudaError_t imgpu_launch_apply_lut_full(const void *d_in, void *d_out, size_t npix, int channels,
                                        int depth, int luminance, const uint16_t *d_lut,
                                        const uint32_t *d_changed, cudaStream_t stream);

/* ---- CLAHE (clahe.cu): OpenCV createCLAHE semantics, src/cpu/clahe.c step for step ---------- */
typedef struct imgpu_clahe_kgeom {
    int w, h, channels, depth;  /* the packed image; depth 8 or 16 */
    int luminance;              /* 1: one LUT plane, Y of BT.601 YCbCr (channels >= 3) */
    int planes;                 /* LUT planes: 1 (gray, luminance) or 3 (R, G, B) */
    int tiles_x, tiles_y, tile_w, tile_h; /* the grid over the reflect-101 padded image */
    int bins;                   /* 256 or 65536 (= 2^depth) */
    int clip_limit;             /* 0: no clipping */
    float lut_scale, inv_tw, inv_th; /* as imgpu_clahe_geom (src/core/op.h, imgpu_clahe_geometry) */
} imgpu_clahe_kgeom;

/* Tile histograms: d_hist[(plane * tiles + tile) * bins + v], tile = ty * tiles_x + tx, over the
 * padded image (reflect-101); the caller zeroes d_hist. */
cudaError_t imgpu_launch_clahe_hist(const void *d_img, const imgpu_clahe_kgeom *g, uint32_t *d_hist,
                                    cudaStream_t stream);
/* One block per tile and plane: clip, redistribute, scan, LUT (d_luts: same layout as d_hist,
 * uint8 entries at depth 8, uint16 at 16). d_hist is read only. */
cudaError_t imgpu_launch_clahe_lut(const uint32_t *d_hist, const imgpu_clahe_kgeom *g, void *d_luts,
                                   cudaStream_t stream);
/* Bilinear blend of the four nearest tiles' LUTs for every pixel; alpha copied. */
cudaError_t imgpu_launch_clahe_apply(const void *d_in, void *d_out, const void *d_luts,
                                     const imgpu_clahe_kgeom *g, cudaStream_t stream);

/* ---- misc ---------------------------------------------------------------------------------- */
/* An empty kernel: the launch-latency floor for benchmarks. */
cudaError_t imgpu_launch_empty(cudaStream_t stream);
/* Test only (fault.cu): a kernel that writes to an illegal address, a sticky fault. */
cudaError_t imgpu_launch_fault(cudaStream_t stream, int illegal_address);

/* ---- op-geom (issue 28): flip.cu ----------------------------------------------------------- */
/* The op "flip" (src/op/flip.c, op.h imgpu_flip_source) of a packed w x h image of `channels`
 * samples of `bytes` (1 or 2) bytes into d_out (h x w with transpose, else w x h). */
cudaError_t imgpu_launch_flip(const void *d_in, int w, int h, int channels, int bytes, void *d_out,
                              int horizontal, int vertical, int transpose, cudaStream_t stream);
/* ---- op-crop (issue 28): crop.cu ------------------------------------------------------------ */
/* crop --trim's box of a packed w x h image of `channels` samples of `bytes` (1 or 2) bytes:
 * into d_box (4 ints of device memory) {min x, min y, max x, max y} of the pixels whose bytes
 * differ from the top-left pixel's; max x = -1 when none do. Enqueued on stream. */
cudaError_t imgpu_launch_crop_trim_box(const void *d_in, int w, int h, int channels, int bytes, int *d_box,
                                       cudaStream_t stream);
/* ---- resize (resize.cu) ---------------------------------------------------------------- */
/* One resize from d_in (sw x sh) to d_out (dw x dh) by the tables t (src/op/resize_tab.h),
 * whose `block` points at a device copy of the host's block; d_h: nh * dw * cn words of
 * intermediate (the horizontal pass), unused by nearest and where imgpu_resize_fused(t) (one
 * fused kernel, the horizontal pass in shared memory): NULL may be passed then. A copy (method
 * COPY) is the caller's. Only launches: no allocation, copy or synchronization. */
struct imgpu_resize_tab;
cudaError_t imgpu_launch_resize(const struct imgpu_resize_tab *t, const void *d_in, void *d_h, void *d_out,
                                cudaStream_t st);
int imgpu_resize_fused(const struct imgpu_resize_tab *t);
/* ---- op-norm (issue 28): normalize.cu ---------------------------------------------------- */
/* ImageMagick's intensity quantum of each pixel of a packed RGB(A) image (channels 3 or 4,
 * depth 8 or 16), ClampToQuantum((0.212656 R + 0.715158 G) + 0.072186 B) over the quanta (257 v
 * at 8 bits), into d_out (npix uint16): the plane normalize's histogram counts. */
cudaError_t imgpu_launch_intensity16(const void *d_in, size_t npix, int channels, int depth, uint16_t *d_out,
                                     cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif

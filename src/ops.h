/* ops.h — the operations API every front end speaks to.
 *
 * Operations are data: an imgpu_op is a kind plus its parameters, a pipeline is an array
 * of them. imgpu_pipeline_run() runs a pipeline on one backend; on the GPU the whole chain
 * stays on the device (one upload, one download).
 *
 * Conventions (stated once here, implemented in src/cpu/ and kernels/):
 *  - equalize, 8-bit: OpenCV equalizeHist. The first non-empty bin i0 maps to 0;
 *    scale = 255.0f / (N - hist[i0]) in single precision; bin i > i0 maps to
 *    round_half_even(cum(i0+1..i) * scale), saturated to 255; a constant image is returned
 *    unchanged.
 *  - luminance mode: Y of full-range BT.601 YCbCr (JPEG / OpenCV YCrCb, OpenCV's 14-bit
 *    fixed-point coefficients) is equalized and converted back; per-channel mode equalizes
 *    R, G and B independently. Alpha always passes through untouched.
 *  - rotate: angle in degrees, counterclockwise positive as seen on screen, about the
 *    image's geometric centre (w/2, h/2) with pixel centres at (x + 0.5, y + 0.5).
 *    Multiples of 90 degrees are exact pixel permutations whatever the filter.
 */
#ifndef IMGPU_OPS_H
#define IMGPU_OPS_H

#include <stdint.h>

#include "image.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum imgpu_device {
    IMGPU_DEVICE_AUTO = 0,  /* where the job finishes first: the CPU for jobs smaller than
                             * what is left of CUDA's start-up plus the transfers (ops.c states
                             * the rule), else CUDA when a usable GPU is present; the CPU with
                             * a notice when none is */
    IMGPU_DEVICE_CPU,
    IMGPU_DEVICE_CUDA,
} imgpu_device;

typedef enum imgpu_eq_mode {
    IMGPU_MODE_LUMINANCE = 0,
    IMGPU_MODE_PER_CHANNEL,
} imgpu_eq_mode;

typedef enum imgpu_filter {
    IMGPU_FILTER_NEAREST = 0,
    IMGPU_FILTER_BILINEAR,
    IMGPU_FILTER_BICUBIC,
} imgpu_filter;

typedef enum imgpu_op_kind {
    IMGPU_OP_EQUALIZE = 0,
    IMGPU_OP_ROTATE,
    IMGPU_OP_CLAHE,
} imgpu_op_kind;

/* Equalization LUT formulas (--formula); src/cpu/equalize_formula.c states each exactly. */
typedef enum imgpu_eq_formula {
    IMGPU_FORMULA_OPENCV = 0, /* cv::equalizeHist (the default) */
    IMGPU_FORMULA_PIL,        /* PIL ImageOps.equalize / torchvision equalize: the step scheme */
    IMGPU_FORMULA_IMAGEMAGICK,/* ImageMagick 6 Q16 -equalize (black = count of level 0) */
} imgpu_eq_formula;

typedef struct imgpu_equalize_params {
    imgpu_eq_mode mode;
    imgpu_eq_formula formula; /* 0: OpenCV */
} imgpu_equalize_params;

/* CLAHE, OpenCV createCLAHE(clip, (tiles_x, tiles_y)) semantics (src/cpu/clahe.c states them):
 * 8-bit: 256 bins, 16-bit: 65536 bins. Color images: luminance (Y of BT.601 YCbCr, as for
 * equalize) or each of R, G, B; alpha passes through. */
typedef struct imgpu_clahe_params {
    double clip;            /* OpenCV clipLimit (default 40); <= 0: no clipping */
    int tiles_x, tiles_y;   /* tile grid (default 8 x 8), each >= 1 */
    imgpu_eq_mode mode;
} imgpu_clahe_params;

typedef struct imgpu_rotate_params {
    double angle;           /* degrees, counterclockwise positive */
    imgpu_filter filter;    /* default bilinear */
    int crop;               /* 0: expand canvas to the rotated bounding box (default); 1: keep size */
    int has_background;     /* 0: transparent where the image has alpha, else black */
    uint8_t background[4];  /* R, G, B, A (gray images use R); used when has_background;
                             * 16-bit images get each value * 257 (0xff -> 65535) */
} imgpu_rotate_params;

typedef struct imgpu_op {
    imgpu_op_kind kind;
    union {
        imgpu_equalize_params equalize;
        imgpu_rotate_params rotate;
        imgpu_clahe_params clahe;
    } u;
} imgpu_op;

/* Histogram: 256 bins per channel (alpha included), plus luminance for color images. */
typedef struct imgpu_histogram {
    int channels;           /* channels of the image */
    int has_luma;           /* 1 for 3/4-channel images: luma[] is filled */
    uint32_t bins[4][256];  /* bins[c][v]: pixels whose channel c equals v */
    uint32_t luma[256];     /* Y (BT.601 full range, the same Y that equalize uses) */
} imgpu_histogram;

/* Default parameters for each op kind. */
imgpu_op imgpu_op_equalize(imgpu_eq_mode mode);
imgpu_op imgpu_op_rotate(double angle);
imgpu_op imgpu_op_clahe(double clip, int tiles_x, int tiles_y, imgpu_eq_mode mode);

/* Full-resolution histograms of an 8- or 16-bit image: `levels` = 256 or 65536 counters per
 * plane; planes 0..channels-1 are the channels (alpha included), plane `channels` is luma
 * (BT.601 Y at the image's depth) for 3/4-channel images. *out is malloc'ed
 * (planes * levels uint32), freed by the caller. */
typedef struct imgpu_histogram_full {
    int channels, has_luma, levels, planes;
    uint32_t *counts;       /* counts[p * levels + v] */
} imgpu_histogram_full;
int imgpu_histogram_full_compute(const imgpu_image *in, imgpu_device device,
                                 imgpu_histogram_full *out, imgpu_device *used);
void imgpu_histogram_full_free(imgpu_histogram_full *h);

/* Output size of a rotation (expand: bounding box; crop: the input size). Multiples of 90
 * degrees give exact sizes (w,h or h,w). */
void imgpu_rotate_output_size(int w, int h, const imgpu_rotate_params *p, int *out_w, int *out_h);

/* Where a quarter turn's rw x rh result sits in the out_w x out_h canvas: offsets
 * floor((out_w - rw) / 2), floor((out_h - rh) / 2) (0 when expanding; may be negative with
 * --crop on a non-square image, which then cuts). */
void imgpu_rotate_quarter_offset(int out_w, int out_h, int rw, int rh, int *ox, int *oy);

/* ---- bounds: what a pipeline will need, known before anything is allocated ----
 * Limits every run obeys (--max-pixels, --max-memory; 0 means the default):
 *  - max_pixels bounds every stage's result, not only the input (a 100000x1 strip turned
 *    by 33 degrees is an 83867x54463 result);
 *  - max_memory bounds the host memory of the worst stage: the caller's input (held for the
 *    whole run) + the stage's input + its result + its working buffers (CLAHE: one LUT of
 *    256 or 65536 entries per tile, planes of the image; equalize: histograms), and for the
 *    CUDA backend the input + its pinned staging + the result. The default, 8 GiB, lets the
 *    largest image the default --max-pixels admits (2^28 RGBA 16-bit pixels = 2 GiB) run any
 *    one op whose result also fits: CLAHE's peak there is 6 GiB; a 16-bit CLAHE with a
 *    256x256 tile grid needs 8 GiB of LUTs by itself and is refused. The CUDA backend's device
 *    memory is held to the same number (over it, `auto` runs on the CPU). */
#define IMGPU_DEFAULT_MAX_MEMORY (UINT64_C(8) << 30)
typedef struct imgpu_limits {
    uint64_t max_pixels;      /* 0: IMGPU_DEFAULT_MAX_PIXELS (io.h, 2^28) */
    uint64_t max_memory;      /* bytes; 0: IMGPU_DEFAULT_MAX_MEMORY */
} imgpu_limits;

/* Fill each limit still 0 from IMGPU_MAX_PIXELS (a count) and IMGPU_MAX_MEMORY (bytes, K/M/G
 * suffixes as --max-file-size). -1 with an error naming the variable when one is malformed. */
int imgpu_limits_from_env(imgpu_limits *l);
/* The process-wide limits imgpu_pipeline_run (and the CUDA sessions) enforce. Set them once,
 * before starting threads that run pipelines; unset, they are the defaults. */
void imgpu_set_limits(const imgpu_limits *l);
void imgpu_get_limits(imgpu_limits *l); /* resolved: no field is 0 */

typedef struct imgpu_plan {
    int out_w, out_h, channels, depth; /* the final result */
    uint64_t peak_bytes;      /* host memory of the worst stage (see above) */
    uint64_t device_bytes;    /* device memory of a CUDA run */
    int peak_stage;           /* index of that stage (-1 when n == 0) */
} imgpu_plan;

/* Walk ops[0..n) over a w x h image of `channels` and `depth` bits: each stage's result shape
 * (computed in double, so a result too large for int is refused, not wrapped) and memory.
 * A pure function of shapes and parameters (allocates nothing). `lim` NULL: the process-wide
 * limits. `name` (may be NULL) names the input in messages. 0 and *out, or -1 with a message
 * naming the op, the size it would need and how to raise the limit, e.g.
 *   cannot rotate 'in.png': the 83867x54463 result (4.57 Gpixels) is over --max-pixels
 *   268435456 (raise it with --max-pixels or IMGPU_MAX_PIXELS) */
int imgpu_pipeline_plan(int w, int h, int channels, int depth, const imgpu_op *ops, int n,
                        const imgpu_limits *lim, const char *name, imgpu_plan *out);

/* Run ops[0..n) on `in`. Returns a new image, or NULL with an error recorded.
 * `device` picks the backend; *used (may be NULL) says which one ran. The plan
 * (imgpu_pipeline_plan with the process-wide limits) is checked first, before any
 * allocation, on either backend. */
imgpu_image *imgpu_pipeline_run(const imgpu_image *in, const imgpu_op *ops, int n,
                                imgpu_device device, imgpu_device *used);

int imgpu_histogram_compute(const imgpu_image *in, imgpu_device device, imgpu_histogram *out,
                            imgpu_device *used);

/* Resolve `auto` to a concrete backend (checks for a usable GPU once, prints the fallback
 * notice once). Returns -1 with an error when `cuda` is asked for and unavailable. */
int imgpu_device_resolve(imgpu_device requested, imgpu_device *resolved);
const char *imgpu_device_name(imgpu_device d);
/* The default of --device from IMGPU_DEVICE (auto, cpu or cuda), for every front end: sets *d
 * when the variable is set; an option given on the command line wins. -1 with an error
 * naming the variable when it holds anything else; 0 otherwise. */
int imgpu_device_from_env(imgpu_device *d);
/* Optional: start backend initialization early (CUDA context creation on a background
 * thread) so it overlaps decoding; and release cached backend resources at the end. */
void imgpu_backend_prepare(imgpu_device requested);
/* Returns 1 when CUDA is still starting (nothing ran on it): the caller should then end the
 * process with _exit() after flushing its output, instead of waiting for the start-up it
 * no longer needs; 0 when everything was released. */
int imgpu_backend_shutdown(void);

#ifdef __cplusplus
}
#endif
#endif

/* op.h — the op floor: what an operation means, below both backends and every front end.
 *
 * An imgpu_op is a kind plus its parameters; a pipeline is an array of them. This header
 * holds the kinds and parameter structs, their constructors and defaults, the validation of
 * parameters (with its message), the shapes of the results the backends produce
 * (histograms), and every piece of geometry a backend or a front end needs: rotation output
 * sizes, quarter turns and their offsets, the reduced angle's cos/sin, the background in an
 * image's channel order and depth, CLAHE's tile geometry, and the plan of a pipeline (each
 * stage's result and memory) against the process-wide limits. The CPU backend (src/backend/cpu/)
 * and the CUDA backend (src/backend/cuda/, kernels/) both include it and neither includes the other;
 * the dispatcher that runs a pipeline on one of them is ops.h.
 *
 * Conventions (stated once here, implemented in src/backend/cpu/ and kernels/):
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
 *  - interpolating filters (rotate's bilinear and bicubic; resize's, next) on an image with
 *    alpha (2 or 4 channels, alpha last, stored straight) mix colour premultiplied by alpha:
 *    over the taps k with weights w_k, background taps included (a transparent background
 *    adds nothing, an opaque one is a tap like any other), samples in the image's units
 *    (0..255 or 0..65535), at 8 and 16 bits alike:
 *        alpha  A = sum w_k a_k                  rounded and clamped as any sample
 *        colour M = sum w_k (c_k * a_k)           in the order of A's sum
 *               c = M / A when A > 0, else the straight sum w_k c_k; clamped, then rounded
 *    Integer weights (bilinear) compute c exactly in integers (rounded half up); float
 *    weights (bicubic) premultiply in float (one rounded product), divide once, clamp to
 *    0..max, then round, and keep the straight sum when all taps share one alpha (so opaque
 *    and fully transparent regions keep their bytes). src/cpu/rotate.c states each filter's
 *    operations; src/backend/cpu/premul.h and kernels/premul.cuh hold the helpers, the same arithmetic.
 *    Nearest and quarter turns copy pixels and need no rule.
 */
#ifndef IMGPU_OP_H
#define IMGPU_OP_H

#include <stddef.h>
#include <stdint.h>

#include "imgpu_limits.h"

#ifdef __cplusplus
extern "C" {
#endif

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
    IMGPU_OP_FLIP,          /* op-geom (issue 28) */
    IMGPU_OP_CONVERT,       /* op-geom (issue 28): no pixel change */
    IMGPU_OP_RESIZE,
    IMGPU_OP_LEVELS,        /* issue 28, op-tone */
    IMGPU_OP_GAMMA,         /* issue 28, op-tone */
    IMGPU_OP_CROP,          /* issue 28, op-crop */
    IMGPU_OP_NORMALIZE,     /* issue 28, op-norm */
    IMGPU_OP_AUTOLEVEL,     /* issue 28, op-norm */
} imgpu_op_kind;

/* Equalization LUT formulas (--formula); src/backend/cpu/equalize_formula.c states each exactly.
 * The kernels receive the value as an int (kernels/kernels.h) and compare it with these names. */
typedef enum imgpu_eq_formula {
    IMGPU_FORMULA_OPENCV = 0, /* cv::equalizeHist (the default) */
    IMGPU_FORMULA_PIL,        /* PIL ImageOps.equalize / torchvision equalize: the step scheme */
    IMGPU_FORMULA_IMAGEMAGICK,/* ImageMagick 6 Q16 -equalize (black = count of level 0) */
} imgpu_eq_formula;

typedef struct imgpu_equalize_params {
    imgpu_eq_mode mode;
    imgpu_eq_formula formula; /* default IMGPU_FORMULA_OPENCV */
} imgpu_equalize_params;

/* CLAHE defaults (OpenCV's createCLAHE defaults are 40 and 8x8 too) and the grid's bound. */
#define IMGPU_CLAHE_DEFAULT_CLIP 40.0
#define IMGPU_CLAHE_DEFAULT_TILES 8   /* tiles_x and tiles_y */
#define IMGPU_CLAHE_MAX_TILES 256     /* each of tiles_x, tiles_y */
#define IMGPU_CLAHE_CLIP_MAX 1e6      /* --clip's bound (the viewer's keys stop there too) */

/* CLAHE, OpenCV createCLAHE(clip, (tiles_x, tiles_y)) semantics (src/backend/cpu/clahe.c states them):
 * 8-bit: 256 bins, 16-bit: 65536 bins. Color images: luminance (Y of BT.601 YCbCr, as for
 * equalize) or each of R, G, B; alpha passes through. */
typedef struct imgpu_clahe_params {
    double clip;            /* OpenCV clipLimit (default IMGPU_CLAHE_DEFAULT_CLIP); <= 0: no clipping */
    int tiles_x, tiles_y;   /* tile grid (default IMGPU_CLAHE_DEFAULT_TILES each), 1..IMGPU_CLAHE_MAX_TILES */
    imgpu_eq_mode mode;
} imgpu_clahe_params;

typedef struct imgpu_rotate_params {
    double angle;           /* degrees, counterclockwise positive (unless clockwise) */
    imgpu_filter filter;    /* default bilinear */
    int crop;               /* 0: expand canvas to the rotated bounding box (default); 1: keep size */
    int has_background;     /* 0: transparent where the image has alpha, else black */
    uint8_t background[4];  /* R, G, B, A (gray images use R); used when has_background;
                             * 16-bit images get each value * 257 (0xff -> 65535) */
    int clockwise;          /* 1: angle turns clockwise (--clockwise, as ImageMagick and vips);
                             * every consumer reads imgpu_rotate_angle(), never angle itself */
} imgpu_rotate_params;

/* flip (issue 28, op-geom): mirrors and the transpose; src/op/flip.c states the order. */
typedef struct imgpu_flip_params {
    int horizontal;         /* mirror left-right (ImageMagick -flop, cv2.flip(a, 1)) */
    int vertical;           /* mirror top-bottom (ImageMagick -flip, cv2.flip(a, 0)) */
    int transpose;          /* swap the axes (cv2.transpose), after the mirrors */
} imgpu_flip_params;
/* ---- resize (src/op/resize.c; src/backend/cpu/resize.c states the rules) ---- */
typedef enum imgpu_resize_filter {
    IMGPU_RESIZE_NEAREST = 0, /* cv2 INTER_NEAREST_EXACT */
    IMGPU_RESIZE_BILINEAR,    /* INTER_LINEAR (the default) */
    IMGPU_RESIZE_BICUBIC,     /* INTER_CUBIC */
    IMGPU_RESIZE_AREA,        /* INTER_AREA */
    IMGPU_RESIZE_LANCZOS,     /* INTER_LANCZOS4 */
} imgpu_resize_filter;

/* Exactly one way of sizing is given (0: not given): --size, --width and/or --height (both:
 * the same as --size), --scale, --fit. */
typedef struct imgpu_resize_params {
    int size_w, size_h;     /* --size WxH */
    int width, height;      /* --width W, --height H: the other side keeps the aspect ratio */
    int fit_w, fit_h;       /* --fit WxH: the largest size within, keeping the aspect ratio */
    double scale;           /* --scale F (cv2.resize's fx = fy = F) */
    int filter;             /* imgpu_resize_filter, default bilinear */
    int antialias;          /* --antialias: Pillow's Image.resize filters (support widened by the
                             * scale) instead of cv2's; not with nearest */
} imgpu_resize_params;
/* ---- tone LUT ops (issue 28, op-tone): ImageMagick 6 Q16 semantics; src/op/levels.c, gamma.c,
 * normalize.c and autolevel.c state each formula. Every one is a LUT of 2^depth entries per
 * colour channel, computed on the host in double by the functions below, the same for both
 * backends (the CUDA backend uploads it), so CUDA equals the CPU bit for bit. Alpha is untouched. */
typedef struct imgpu_levels_params {
    double black, white;    /* levels (0..65535: image units, 0..255 at 8 bits), or percentages */
    int black_pct, white_pct; /* 1: black / white is a percentage of the range (default white 100%) */
    double gamma;           /* default 1 */
} imgpu_levels_params;
/* lut[v] for v < 2^depth (depth 8 or 16). */
void imgpu_levels_lut(const imgpu_levels_params *p, int depth, uint16_t *lut);

typedef struct imgpu_gamma_params {
    double gamma;           /* out = in^(1/gamma); default 1 */
} imgpu_gamma_params;
void imgpu_gamma_lut(double gamma, int depth, uint16_t *lut);

/* ---- crop (issue 28, op-crop; src/op/crop.c states the rules) ---- */
/* --gravity: ImageMagick's names and placement (GravityAdjustGeometry). */
typedef enum imgpu_crop_gravity {
    IMGPU_GRAVITY_NORTHWEST = 0, IMGPU_GRAVITY_NORTH, IMGPU_GRAVITY_NORTHEAST,
    IMGPU_GRAVITY_WEST, IMGPU_GRAVITY_CENTER, IMGPU_GRAVITY_EAST,
    IMGPU_GRAVITY_SOUTHWEST, IMGPU_GRAVITY_SOUTH, IMGPU_GRAVITY_SOUTHEAST,
} imgpu_crop_gravity;

/* At most one way of choosing the box (none: the whole image, a copy): --rect, --size (placed
 * by --gravity), --trim, --inner. */
typedef struct imgpu_crop_params {
    int x, y, w, h;         /* --rect X,Y,W,H (w, h >= 1) */
    int has_rect;           /* 1: --rect given */
    int size_w, size_h;     /* --size WxH (0x0: not given) */
    int gravity;            /* imgpu_crop_gravity, default center */
    int trim;               /* --trim: remove the border of the top-left pixel's colour */
    int inner;              /* --inner: after a rotation, the largest rectangle without background */
} imgpu_crop_params;

/* The box {x, y, w, h} a crop takes from a w x h input: --rect as given, --size placed by
 * --gravity as ImageMagick places it, else the whole image (--trim's box depends on the
 * pixels: imgpu_crop_trim_box; --inner's is the rotation's, src/op/crop.c). 0, or -1 with
 * "crop: the box X,Y,W,H is outside the WxH image" (or the --size wording) recorded. */
int imgpu_crop_box(int w, int h, const imgpu_crop_params *p, int box[4]);
/* --trim's box of a w x h image of px-byte pixels (row stride `stride` bytes): the bounding box
 * of the pixels whose bytes differ from the top-left pixel's; {0, 0, 1, 1} when none do (an
 * image of one colour keeps its top-left pixel, as ImageMagick's -trim). */
void imgpu_crop_trim_box(const unsigned char *data, size_t stride, int w, int h, int px, int box[4]);
/* ---- normalize and autolevel (issue 28, op-norm): ImageMagick 6 Q16 -normalize (with its
 * ContrastStretchImageChannel) and -auto-level; src/op/normalize.c and autolevel.c state the
 * formulas. Both backends compute the same statistics, CDFs (inclusive cumulative
 * histograms), hand them to the host functions below, and apply the LUT they return. */
#define IMGPU_NORMALIZE_BLACK_CLIP 0.15 /* % of the pixels: IM 6.9.11's -normalize (N * 0.0015) */
#define IMGPU_NORMALIZE_WHITE_CLIP 0.05 /* % of the pixels: IM 6.9.11's -normalize (N * 0.9995) */
typedef struct imgpu_normalize_params {
    double black_clip;      /* % of the pixels that become black (0..100) */
    double white_clip;      /* % of the pixels that become white (0..100) */
    int mode;               /* imgpu_eq_mode: luminance (one map from the histogram of IM's
                             * intensity, 0.212656 R + 0.715158 G + 0.072186 B) or per-channel */
} imgpu_normalize_params;
typedef struct imgpu_autolevel_params {
    int mode;               /* 0 linked (one map from the range of R, G and B together), 1 per-channel */
} imgpu_autolevel_params;
/* The statistics (both backends): for a colour image in normalize's luminance mode one CDF of
 * IM's intensity quanta, ClampToQuantum((0.212656 R + 0.715158 G) + 0.072186 B) over the quanta
 * (65536 bins at either depth); else one CDF per colour channel (1 or 3) of its levels (2^depth
 * bins). */
/* The LUT from `planes` CDFs of `bins` (256 or 65536) counters over npix pixels (bin b holds
 * the quantum b * 65535 / (bins - 1): an 8-bit level v is 257 v): lut gets 2^depth entries per
 * plane; returns the LUT's planes (1: the same map for every colour channel, or `planes`). */
int imgpu_normalize_lut(const imgpu_normalize_params *p, const uint32_t *cdf, int planes, int bins, uint64_t npix,
                        int depth, uint16_t *lut);
int imgpu_autolevel_lut(const imgpu_autolevel_params *p, const uint32_t *cdf, int planes, int bins, uint64_t npix,
                        int depth, uint16_t *lut);

typedef struct imgpu_op {
    imgpu_op_kind kind;
    union {
        imgpu_equalize_params equalize;
        imgpu_rotate_params rotate;
        imgpu_clahe_params clahe;
        imgpu_flip_params flip;         /* op-geom */
        imgpu_resize_params resize;
        imgpu_levels_params levels;     /* issue 28, op-tone */
        imgpu_gamma_params gamma;       /* issue 28, op-tone */
        imgpu_crop_params crop;         /* issue 28, op-crop */
        imgpu_normalize_params normalize; /* issue 28, op-norm */
        imgpu_autolevel_params autolevel; /* issue 28, op-norm */
    } u;
} imgpu_op;

/* Constructors: the given parameters, every other one at its default. */
imgpu_op imgpu_op_equalize(imgpu_eq_mode mode);
imgpu_op imgpu_op_rotate(double angle);
imgpu_op imgpu_op_clahe(double clip, int tiles_x, int tiles_y, imgpu_eq_mode mode);
/* convert (op-geom): no parameters, no pixel change: the load, --depth, metadata and save
 * options around it are the whole command (`imgpu convert IN OUT`). */
imgpu_op imgpu_op_convert(void);
/* flip (op-geom): each argument 0 or nonzero (all 0: a copy). */
imgpu_op imgpu_op_flip(int horizontal, int vertical, int transpose);
/* The flip that turns stored pixels into what EXIF orientation o (1..8) shows: the same pixels
 * as imgpu_image_orient (src/io/orient.c), as an op a backend runs (batch turns nvJPEG's
 * decodes upright on the GPU with it). Orientation 1, or one out of range: no flip at all. */
imgpu_op imgpu_op_flip_for_orientation(int o);
/* The input pixel (*sx, *sy) of a w x h image that a flip writes at output (x, y): with the
 * transpose, (u, v) = (y, x), else (x, y); then sx = horizontal ? w-1-u : u and
 * sy = vertical ? h-1-v : v. The result is h x w with the transpose, else w x h. */
static inline void imgpu_flip_source(const imgpu_flip_params *p, int w, int h, int x, int y, int *sx, int *sy)
{
    const int u = p->transpose ? y : x, v = p->transpose ? x : y;
    *sx = p->horizontal ? w - 1 - u : u;
    *sy = p->vertical ? h - 1 - v : v;
}
imgpu_op imgpu_op_resize(int width, int height, imgpu_resize_filter filter); /* --size WxH */
imgpu_op imgpu_op_levels(double black, double white, double gamma); /* levels; white < 0: 100% */
imgpu_op imgpu_op_gamma(double gamma);
imgpu_op imgpu_op_crop(int x, int y, int w, int h); /* --rect X,Y,W,H */
imgpu_op imgpu_op_normalize(double black_clip, double white_clip, imgpu_eq_mode mode); /* op-norm */
imgpu_op imgpu_op_autolevel(int per_channel);                                         /* op-norm */

/* ---- validation: 0, or -1 with the message recorded (imgpu_error) ---------------------------- */
/* "clahe: tile grid WxH out of range (1..256 each)" */
int imgpu_clahe_check_tiles(int tiles_x, int tiles_y);
/* The tile grid as above, then the clip limit: "clahe: invalid clip limit" (NaN or over 1e9). */
int imgpu_clahe_check(const imgpu_clahe_params *p);

/* ---- results the backends produce ---------------------------------------------------------- */
/* Histogram: 256 bins per channel (alpha included), plus luminance for color images. */
typedef struct imgpu_histogram {
    int channels;           /* channels of the image */
    int has_luma;           /* 1 for 3/4-channel images: luma[] is filled */
    uint32_t bins[4][256];  /* bins[c][v]: pixels whose channel c equals v */
    uint32_t luma[256];     /* Y (BT.601 full range, the same Y that equalize uses) */
} imgpu_histogram;

/* Full-resolution histograms of an 8- or 16-bit image: `levels` = 256 or 65536 counters per
 * plane; planes 0..channels-1 are the channels (alpha included), plane `channels` is luma
 * (BT.601 Y at the image's depth) for 3/4-channel images. counts is malloc'ed
 * (planes * levels uint32), freed by imgpu_histogram_full_free (accepts NULL). */
typedef struct imgpu_histogram_full {
    int channels, has_luma, levels, planes;
    uint32_t *counts;       /* counts[p * levels + v] */
} imgpu_histogram_full;
void imgpu_histogram_full_free(imgpu_histogram_full *h);

/* ---- rotation geometry (src/backend/cpu/rotate.c states the whole convention) ------------------------ */
/* The rotation's counterclockwise angle in degrees: p->angle, negated when p->clockwise (so
 * `--angle 30 --clockwise` is `--angle -30`, bit for bit). Every rule below takes this. */
static inline double imgpu_rotate_angle(const imgpu_rotate_params *p)
{
    return p->clockwise ? -p->angle : p->angle;
}
/* The angle reduced to [0, 360): fmod, + 360 when negative. Every rule below starts from it. */
double imgpu_rotate_reduce_angle(double angle);
/* Counterclockwise quarter turns 0..3 when the reduced angle is exactly 0, 90, 180 or 270 —
 * the same test imgpu_rotate_output_size uses — else -1. */
int imgpu_rotate_quarter(double angle);
/* cos and sin of the reduced angle, computed in double, rounded to float. */
void imgpu_rotate_trig(double angle, float *cos_t, float *sin_t);

/* Output size of a rotation (expand: bounding box; crop: the input size). Multiples of 90
 * degrees give exact sizes (w,h or h,w). */
void imgpu_rotate_output_size(int w, int h, const imgpu_rotate_params *p, int *out_w, int *out_h);

/* Where a quarter turn's rw x rh result sits in the out_w x out_h canvas: offsets
 * floor((out_w - rw) / 2), floor((out_h - rh) / 2) (0 when expanding; may be negative with
 * --crop on a non-square image, which then cuts). */
void imgpu_rotate_quarter_offset(int out_w, int out_h, int rw, int rh, int *ox, int *oy);

/* The 8-bit background in the image's own channel order (gray: R; gray+alpha: R, A; RGB;
 * RGBA); all zero without has_background (transparent where there is alpha, else black). */
void imgpu_rotate_background(const imgpu_rotate_params *p, int channels, uint8_t bg[4]);
/* The ops as they run on an image whose color channels are `color_channels` (1: gray, 3:
 * color; imgpu_image_color_channels): a rotation's background on a gray image becomes the
 * color's BT.601 luma in R (lround(0.299 R + 0.587 G + 0.114 B)), so "#FF0000" on a gray image
 * is the gray red would turn into, not white. Every front end calls it once per image. */
void imgpu_ops_for_image(imgpu_op *ops, int n, int color_channels);
/* That 8-bit background as one pixel of `depth` bits (8: the bytes; 16: each value * 257,
 * #ff -> 65535, native-endian uint16_t as image.h lays samples out); px holds 4 samples of up
 * to 16 bits. The kernels apply the same * 257 to the 8-bit background themselves. */
void imgpu_rotate_background_pixel(const uint8_t bg8[4], int depth, uint8_t px[8]);

/* ---- CLAHE geometry --------------------------------------------------------------------------
 * Everything the tile LUTs and the interpolation need, computed once per image (OpenCV's
 * CLAHE_Impl::apply): the image is padded at the bottom and right to ext_w x ext_h, a
 * multiple of the grid, by reflect-101 when (and only when) w or h is not a multiple.
 * src/backend/cpu/clahe.c states the rules; the CUDA host side passes these numbers to the kernels. */
typedef struct imgpu_clahe_geom {
    int w, h;               /* image */
    int tiles_x, tiles_y;
    int tile_w, tile_h;     /* ext_w / tiles_x, ext_h / tiles_y */
    int ext_w, ext_h;
    int bins;               /* 256 or 65536 */
    int clip_limit;         /* 0: no clipping */
    float lut_scale;        /* (bins - 1) / (tile_w * tile_h), in float */
    float inv_tw, inv_th;   /* 1.0f / tile_w, 1.0f / tile_h */
} imgpu_clahe_geom;
/* 0 and *g, or -1 with a message (imgpu_clahe_check's, an unsupported depth, tiles too large). */
int imgpu_clahe_geometry(int w, int h, int depth, const imgpu_clahe_params *p, imgpu_clahe_geom *g);

/* ---- the plan: what a pipeline will need, known before anything is allocated ----
 * Against the limits of imgpu_limits.h (--max-pixels, --max-memory; what each bounds is
 * stated there). */

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

#ifdef __cplusplus
}
#endif
#endif

/* rotate.c — the op "rotate": rotation by any angle about the image centre. Its
 * constructor, the geometry both backends share (op.h: output sizes, quarter turns and their
 * offsets, the reduced angle's cos/sin, the background in an image's channel order and
 * depth), and its descriptor. The CPU backend runs it in src/backend/cpu/rotate.c (which
 * states the whole convention), CUDA in src/backend/cuda/rotate.c and kernels/rotate.cu. */
#include "op_table.h"
#include "error.h"
#include "image.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

imgpu_op imgpu_op_rotate(double angle)
{
    imgpu_op op;
    memset(&op, 0, sizeof op);
    op.kind = IMGPU_OP_ROTATE;
    op.u.rotate.angle = angle;
    op.u.rotate.filter = IMGPU_FILTER_BILINEAR;
    return op;
}

static void defaults(imgpu_op *op) { *op = imgpu_op_rotate(0.0); }

/* ---- geometry ---------------------------------------------------------------------------- */

double imgpu_rotate_reduce_angle(double angle)
{
    double a = fmod(angle, 360.0);
    if (a < 0)
        a += 360.0;
    return a;
}

int imgpu_rotate_quarter(double angle)
{
    double a = imgpu_rotate_reduce_angle(angle);
    if (a == 0.0)
        return 0;
    if (a == 90.0)
        return 1;
    if (a == 180.0)
        return 2;
    if (a == 270.0)
        return 3;
    return -1;
}

void imgpu_rotate_trig(double angle, float *cos_t, float *sin_t)
{
    double r = imgpu_rotate_reduce_angle(angle) * (M_PI / 180.0);
    *cos_t = (float)cos(r);
    *sin_t = (float)sin(r);
}

void imgpu_rotate_background(const imgpu_rotate_params *p, int channels, uint8_t bg[4])
{
    memset(bg, 0, 4);
    if (!p->has_background)
        return; /* transparent (alpha images) or black */
    switch (channels) {
    case 1: bg[0] = p->background[0]; break;
    case 2: bg[0] = p->background[0]; bg[1] = p->background[3]; break;
    case 3: memcpy(bg, p->background, 3); break;
    default: memcpy(bg, p->background, 4); break;
    }
}

void imgpu_rotate_background_pixel(const uint8_t bg8[4], int depth, uint8_t px[8])
{
    /* bg8 * 257 at 16 bits (#ff -> 65535), so taps outside read it like any other pixel */
    for (int k = 0; k < 4; k++)
        imgpu_sample_put(px, depth, k, depth == 16 ? bg8[k] * 257u : bg8[k]);
}

/* The inner canvas (canvas 2: crop --inner folded into the rotation before it): the
 * largest centred axis-aligned rectangle inside the w x h source rotated by the angle, on the
 * source shrunk by the filter's reach m on every side (nearest 0.5, bilinear 1, bicubic 2
 * pixels, + 1e-3 + 1e-6 (w + h) against float rounding), so no tap of any of its pixels reads the
 * background: the continuous rectangle wr x hr of the classic construction (the short side's
 * half-width against the long side when the angle makes the corners touch it, else the
 * exact solution of w' cos + h' sin = w, w' sin + h' cos = h), then the pixel centres within
 * it: floor(wr) + 1 columns, less one when that differs in parity from the expanded canvas
 * (bw x bh), so the inner canvas is the expanded one cut symmetrically and its pixels are the
 * expanded rotation's. Quarter turns: the turned image (no background). At least 1x1. */
static void inner_size(double w, double h, double a, int filter, double bw, double bh, double *ow, double *oh)
{
    if (a == 0.0 || a == 180.0 || a == 90.0 || a == 270.0 || !(a == a)) {
        *ow = bw;
        *oh = bh;
        return;
    }
    const double m = (filter == IMGPU_FILTER_NEAREST ? 0.5 : filter == IMGPU_FILTER_BICUBIC ? 2.0 : 1.0) + 1e-3 +
                     1e-6 * (w + h);
    const double sw = w - 2 * m, sh = h - 2 * m;
    double wr = 0, hr = 0;
    if (sw > 0 && sh > 0) {
        const double r = a * (M_PI / 180.0), s = fabs(sin(r)), c = fabs(cos(r));
        const int wide = sw >= sh;
        const double lo = wide ? sh : sw, hi = wide ? sw : sh;
        if (lo <= 2.0 * s * c * hi || fabs(s - c) < 1e-10) {
            const double x = 0.5 * lo;
            wr = wide ? x / s : x / c;
            hr = wide ? x / c : x / s;
        } else {
            const double c2 = c * c - s * s;
            wr = (sw * c - sh * s) / c2;
            hr = (sh * c - sw * s) / c2;
        }
    }
    double iw = floor(wr) + 1, ih = floor(hr) + 1;
    if (fmod(bw - iw, 2.0) != 0)
        iw -= 1;
    if (fmod(bh - ih, 2.0) != 0)
        ih -= 1;
    *ow = fmin(bw, fmax(1.0, iw));
    *oh = fmin(bh, fmax(1.0, ih));
}

void imgpu_rotate_output_size(int w, int h, const imgpu_rotate_params *p, int *out_w, int *out_h)
{
    if (p->crop == 1) {
        *out_w = w;
        *out_h = h;
        return;
    }
    double a = imgpu_rotate_reduce_angle(imgpu_rotate_angle(p));
    if (a == 90.0 || a == 270.0) {
        *out_w = h;
        *out_h = w;
        return;
    }
    if (a == 0.0 || a == 180.0) {
        *out_w = w;
        *out_h = h;
        return;
    }
    double r = a * (M_PI / 180.0);
    double c = fabs(cos(r)), s = fabs(sin(r));
    /* The bounding box of the rotated rectangle; the small slack keeps 1e-12 rounding noise
     * from adding a whole empty row or column. */
    double bw = ceil((double)w * c + (double)h * s - 1e-6), bh = ceil((double)w * s + (double)h * c - 1e-6);
    bw = bw < 1 ? 1 : bw;
    bh = bh < 1 ? 1 : bh;
    if (p->crop == 2)
        inner_size(w, h, a, p->filter, bw, bh, &bw, &bh);
    /* A box beyond int saturates at INT_MAX (a cast would be undefined); imgpu_pipeline_plan
     * refuses such a result before anyone allocates it. */
    *out_w = bw >= INT_MAX ? INT_MAX : (int)bw;
    *out_h = bh >= INT_MAX ? INT_MAX : (int)bh;
}

static int floor_half(int x) { return x >= 0 ? x / 2 : -((-x + 1) / 2); }

void imgpu_rotate_quarter_offset(int out_w, int out_h, int rw, int rh, int *ox, int *oy)
{
    *ox = floor_half(out_w - rw);
    *oy = floor_half(out_h - rh);
}

/* The result as doubles (a rotation's bounding box may be beyond int). The same formula as
 * imgpu_rotate_output_size, which gives the int answer once this one fits. */
static void shape(int w, int h, const imgpu_op *op, double *ow, double *oh)
{
    *ow = w;
    *oh = h;
    if (op->u.rotate.crop == 1)
        return;
    double a = imgpu_rotate_reduce_angle(imgpu_rotate_angle(&op->u.rotate));
    if (a == 90.0 || a == 270.0) {
        *ow = h;
        *oh = w;
        return;
    }
    if (a == 0.0 || a == 180.0 || !(a == a))
        return;
    const double r = a * (M_PI / 180.0), c = fabs(cos(r)), s = fabs(sin(r));
    *ow = fmax(1.0, ceil((double)w * c + (double)h * s - 1e-6));
    *oh = fmax(1.0, ceil((double)w * s + (double)h * c - 1e-6));
    if (op->u.rotate.crop == 2)
        inner_size(w, h, a, op->u.rotate.filter, *ow, *oh, ow, oh);
}

static void out_size(int w, int h, const imgpu_op *op, int *ow, int *oh)
{
    imgpu_rotate_output_size(w, h, &op->u.rotate, ow, oh);
}

static void work(int w, int h, int c, int depth, const imgpu_op *op, double *host, double *dev)
{
    (void)op;
    /* CPU: none. CUDA, 8-bit non-quarter angles: a texture array of 1 or 4 bytes a pixel */
    *host = 0;
    *dev = depth == 8 ? (double)w * h * (c == 1 ? 1 : 4) : 0;
}

static double cpu_ns(int w, int h, int c, const imgpu_op *op)
{
    int ow, oh;
    imgpu_rotate_output_size(w, h, &op->u.rotate, &ow, &oh);
    double a = fmod(fabs(imgpu_rotate_angle(&op->u.rotate)), 90.0);
    double per = a == 0.0 ? 2.0 * c   /* quarter turns: a permutation */
               : (op->u.rotate.filter == IMGPU_FILTER_NEAREST ? 9.0
                  : op->u.rotate.filter == IMGPU_FILTER_BICUBIC ? 26.0 : 18.0) + 4.0 * (c - 1);
    return (double)ow * oh * per;
}

static void notes(const imgpu_op *op, int has_alpha, const char *name)
{
    if (op->u.rotate.has_background && !has_alpha && op->u.rotate.background[3] != 255)
        imgpu_notice("'%s' has no alpha channel: the background's alpha is ignored", name);
}

/* Any angle but a quarter turn resamples every pixel. */
static int heavy(const imgpu_op *op) { return imgpu_rotate_quarter(imgpu_rotate_angle(&op->u.rotate)) < 0; }

/* A gray image's background is the color's BT.601 luma in R (op.h imgpu_ops_for_image). */
static void for_image(imgpu_op *op, int color_channels)
{
    imgpu_rotate_params *p = &op->u.rotate;
    if (p->has_background && color_channels == 1)
        p->background[0] = (uint8_t)lround(0.299 * p->background[0] + 0.587 * p->background[1] +
                                           0.114 * p->background[2]);
}

/* ---- parameters and text ------------------------------------------------------------------ */

static const char *const s_filters[] = {"nearest", "bilinear", "bicubic", NULL};

static const char *const s_crop_aliases[] = {"keep-size", NULL};

static const imgpu_param s_params[] = {
    {.name = "angle", .type = IMGPU_PARAM_DOUBLE, .metavar = "DEG", .def = 0.0, .min = -HUGE_VAL, .max = HUGE_VAL,
     .units = "degrees", .help = "rotation in degrees, counterclockwise positive", .hint = "degrees, e.g. 30 or -12.5",
     .doc = "rotation in degrees, counterclockwise positive (required)",
     .offset = offsetof(imgpu_rotate_params, angle), .fronts = IMGPU_FRONT_CLI, .required = 1},
    {.name = "clockwise", .type = IMGPU_PARAM_FLAG, .help = "positive angles turn clockwise (ImageMagick, vips)",
     .doc = "positive angles turn clockwise, as ImageMagick's -rotate and\n"
            "vips rotate do (default: counterclockwise, as OpenCV, Pillow\n"
            "and torchvision); --angle 30 --clockwise is --angle -30",
     .offset = offsetof(imgpu_rotate_params, clockwise), .flag_value = 1, .fronts = IMGPU_FRONT_ALL},
    {.name = "filter", .type = IMGPU_PARAM_ENUM, .metavar = "nearest|bilinear|bicubic", .choices = s_filters,
     .def = IMGPU_FILTER_BILINEAR, .help = "resampling filter (default bilinear)",
     .hint = "use nearest, bilinear or bicubic", .doc = "resampling filter (default bilinear)",
     .offset = offsetof(imgpu_rotate_params, filter), .fronts = IMGPU_FRONT_ALL},
    {.name = "expand", .type = IMGPU_PARAM_FLAG, .help = "grow the canvas to the rotated image (default)",
     .doc = "grow the canvas to hold the whole rotated image (default)",
     .offset = offsetof(imgpu_rotate_params, crop), .flag_value = 0, .fronts = IMGPU_FRONT_ALL},
    {.name = "crop", .type = IMGPU_PARAM_FLAG, .help = "keep the input size (also --keep-size)",
     .doc = "keep the input size, cutting off the corners (also\n--keep-size; in 'imgpu batch' see 'imgpu crop --help')",
     .offset = offsetof(imgpu_rotate_params, crop), .flag_value = 1, .fronts = IMGPU_FRONT_ALL,
     .aliases = s_crop_aliases},
    {.name = "background", .type = IMGPU_PARAM_COLOR, .metavar = "COLOR",
     .help = "fill for uncovered areas (default: transparent with alpha, else black)",
     .hint = "black, white, transparent, #RRGGBB, #RRGGBBAA or R,G,B[,A]",
     .doc = "fill for uncovered areas: black, white, transparent, #RGB,\n"
            "#RGBA, #RRGGBB, #RRGGBBAA or R,G,B[,A] in decimal 0..255\n"
            "(default: transparent when the image has alpha, else black;\n"
            "gray images get the color's luma; without an alpha channel\n"
            "the color's alpha is ignored)",
     .offset = offsetof(imgpu_rotate_params, background), .offset2 = offsetof(imgpu_rotate_params, has_background),
     .fronts = IMGPU_FRONT_CLI | IMGPU_FRONT_BATCH},
};

static int write(const imgpu_op *op, imgpu_op_text how, char *buf, size_t n)
{
    const imgpu_rotate_params *r = &op->u.rotate;
    const char *filter = imgpu_param_choice(op, &s_params[2]);
    const char *canvas = r->crop == 2 ? "inner" : r->crop ? "crop" : "expand";
    const double angle = imgpu_rotate_angle(r);   /* counterclockwise: --clockwise folded in */
    switch (how) {
    case IMGPU_OP_TEXT_MANIFEST: {
        char bg[32] = "default";
        if (r->has_background)
            snprintf(bg, sizeof bg, "#%02x%02x%02x%02x", r->background[0], r->background[1], r->background[2],
                     r->background[3]);
        return snprintf(buf, n, "rotate angle=%.17g filter=%s canvas=%s background=%s", angle, filter, canvas, bg);
    }
    case IMGPU_OP_TEXT_OPTIONS: return snprintf(buf, n, "--angle %.17g --filter %s --%s", angle, filter, canvas);
    case IMGPU_OP_TEXT_STATUS: return snprintf(buf, n, "rotate %.17g %s %s", angle, filter, canvas);
    }
    return snprintf(buf, n, "rotate");
}

const imgpu_op_desc imgpu__op_rotate = {
    .name = "rotate",
    .kind = IMGPU_OP_ROTATE,
    .summary = "rotate by any angle",
    .args = "IN OUT --angle DEG",
    .verb = "rotate",
    .doc = "Rotate by DEG degrees about the image centre. Positive DEG turns counterclockwise, as\n"
           "in OpenCV, Pillow and torchvision; ImageMagick and vips turn clockwise: add\n"
           "--clockwise for their sense. Multiples of 90 are exact pixel permutations whatever\n"
           "the filter.\n",
    .params = s_params,
    .nparams = sizeof s_params / sizeof s_params[0],
    .add_param = "angle",
    .add_help = "rotation counterclockwise (--clockwise: clockwise; as 'imgpu rotate --angle DEG')",
    .batch_doc = "rotation, counterclockwise (--clockwise: clockwise); --filter\n"
                 "nearest|bilinear|bicubic, --expand|--crop, --background COLOR\n"
                 "(as for 'imgpu rotate')",
    .view_doc = "  --rotate DEG         rotate counterclockwise (arrows, right drag, 9 / 0)\n"
                "  --clockwise          --rotate DEG turns clockwise (ImageMagick's, vips' sense)\n"
                "  --filter nearest|bilinear|bicubic (F)       --expand | --crop (X)\n",
    .view_keys = "LEFT/RIGHT  ROTATE 1 DEG (SHIFT 0.1)   RIGHT DRAG  FREE ROTATION\n"
                 "9 / 0  -90 / +90   F  FILTER   X  EXPAND/CROP   R  RESET\n",
    .defaults = defaults,
    .shape = shape,
    .out_size = out_size,
    .work = work,
    .cpu_ns = cpu_ns,
    .heavy = heavy,
    .notes = notes,
    .for_image = for_image,
    .write = write,
};

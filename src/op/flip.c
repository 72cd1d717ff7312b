/* flip.c — the op "flip" (issue 28): mirror left-right (--horizontal, ImageMagick -flop,
 * cv2.flip(a, 1)), top-bottom (--vertical, -flip, cv2.flip(a, 0)) and swap the axes
 * (--transpose, cv2.transpose), any combination. The order is fixed: the mirrors, then the
 * transpose, so
 *     out = transpose(flip_v(flip_h(in)))      (each step only when asked)
 * e.g. --horizontal --vertical is the 180-degree turn, --horizontal --transpose is
 * cv2.transpose(cv2.flip(a, 1)), a 90-degree counterclockwise turn. Every output pixel is a
 * copy of one input pixel (op.h imgpu_flip_source): exact at any depth and channel count.
 * The CPU backend runs it in src/backend/cpu/flip.c, CUDA in src/backend/cuda/flip.c and
 * kernels/flip.cu.
 *
 * Orientation: the EXIF orientation is applied at load (auto-orient) and the output's EXIF
 * says 1, so the flipped pixels are what the output shows; with --no-auto-orient the stored
 * pixels are flipped and the tag is kept as it was (as for rotate). */
#include "op_table.h"
#include "error.h"

#include <stdio.h>
#include <string.h>

imgpu_op imgpu_op_flip(int horizontal, int vertical, int transpose)
{
    imgpu_op op;
    memset(&op, 0, sizeof op);
    op.kind = IMGPU_OP_FLIP;
    op.u.flip.horizontal = horizontal != 0;
    op.u.flip.vertical = vertical != 0;
    op.u.flip.transpose = transpose != 0;
    return op;
}

/* Orientation o's source pixel for output (x, y) (orient.c) against the flip's
 * (op.h imgpu_flip_source: u, v = the transpose's swap; then the mirrors):
 *   2: (w-1-x, y) H     3: (w-1-x, h-1-y) H V     4: (x, h-1-y) V
 *   5: (y, x) T         6: (y, h-1-x) T V         7: (w-1-y, h-1-x) T H V     8: (w-1-y, x) T H */
imgpu_op imgpu_op_flip_for_orientation(int o)
{
    static const unsigned char hvt[9][3] = {
        {0, 0, 0}, {0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 0, 1}, {0, 1, 1}, {1, 1, 1}, {1, 0, 1},
    };
    const int k = o >= 1 && o <= 8 ? o : 1;
    return imgpu_op_flip(hvt[k][0], hvt[k][1], hvt[k][2]);
}

static void defaults(imgpu_op *op) { *op = imgpu_op_flip(0, 0, 0); }

/* None of the three: the image is copied unchanged, with a notice (the op table's rule: an op
 * at its defaults runs). */
static void notes(const imgpu_op *op, int has_alpha, const char *name)
{
    (void)has_alpha;
    const imgpu_flip_params *p = &op->u.flip;
    if (!p->horizontal && !p->vertical && !p->transpose)
        imgpu_notice("flip: no --horizontal, --vertical or --transpose: '%s' is copied unchanged", name);
}

static void shape(int w, int h, const imgpu_op *op, double *ow, double *oh)
{
    *ow = op->u.flip.transpose ? h : w;
    *oh = op->u.flip.transpose ? w : h;
}

static void out_size(int w, int h, const imgpu_op *op, int *ow, int *oh)
{
    *ow = op->u.flip.transpose ? h : w;
    *oh = op->u.flip.transpose ? w : h;
}

static void work(int w, int h, int c, int depth, const imgpu_op *op, double *host, double *dev)
{
    (void)w, (void)h, (void)c, (void)depth, (void)op;
    *host = 0;
    *dev = 0;
}

/* a copy of each pixel (the transpose reads across rows: a little more) */
static double cpu_ns(int w, int h, int c, const imgpu_op *op)
{
    return (double)w * h * (0.5 * c + (op->u.flip.transpose ? 2.0 : 0.5));
}

static const imgpu_param s_params[] = {
    {.name = "horizontal", .type = IMGPU_PARAM_FLAG, .help = "mirror left-right (ImageMagick -flop, cv2.flip(a, 1))",
     .doc = "mirror left and right (ImageMagick -flop, cv2.flip(a, 1))",
     .offset = offsetof(imgpu_flip_params, horizontal), .flag_value = 1, .fronts = IMGPU_FRONT_CLI | IMGPU_FRONT_BATCH},
    {.name = "vertical", .type = IMGPU_PARAM_FLAG, .help = "mirror top-bottom (ImageMagick -flip, cv2.flip(a, 0))",
     .doc = "mirror top and bottom (ImageMagick -flip, cv2.flip(a, 0))",
     .offset = offsetof(imgpu_flip_params, vertical), .flag_value = 1, .fronts = IMGPU_FRONT_CLI | IMGPU_FRONT_BATCH},
    {.name = "transpose", .type = IMGPU_PARAM_FLAG, .help = "swap rows and columns (cv2.transpose), after the mirrors",
     .doc = "swap rows and columns (cv2.transpose), after the mirrors",
     .offset = offsetof(imgpu_flip_params, transpose), .flag_value = 1, .fronts = IMGPU_FRONT_CLI | IMGPU_FRONT_BATCH},
};

static int write(const imgpu_op *op, imgpu_op_text how, char *buf, size_t n)
{
    const imgpu_flip_params *p = &op->u.flip;
    switch (how) {
    case IMGPU_OP_TEXT_MANIFEST:
        return snprintf(buf, n, "flip horizontal=%d vertical=%d transpose=%d", p->horizontal, p->vertical,
                        p->transpose);
    case IMGPU_OP_TEXT_OPTIONS:
        return snprintf(buf, n, "%s%s%s", p->horizontal ? "--horizontal " : "", p->vertical ? "--vertical " : "",
                        p->transpose ? "--transpose" : "");
    case IMGPU_OP_TEXT_STATUS:
        return snprintf(buf, n, "flip%s%s%s", p->horizontal ? " horizontal" : "", p->vertical ? " vertical" : "",
                        p->transpose ? " transpose" : "");
    }
    return snprintf(buf, n, "flip");
}

const imgpu_op_desc imgpu__op_flip = {
    .name = "flip",
    .kind = IMGPU_OP_FLIP,
    .summary = "mirror left-right or top-bottom, transpose",
    .args = "IN OUT",
    .verb = "flip",
    .doc = "Mirror the image and/or swap its axes: exact pixel copies at any depth. The mirrors\n"
           "come first, then the transpose (--horizontal --vertical is the 180-degree turn).\n"
           "Without any of the three the image is copied unchanged (with a notice).\n",
    .params = s_params,
    .nparams = sizeof s_params / sizeof s_params[0],
    .add_help = "mirror / transpose (as 'imgpu flip')",
    .batch_doc = "mirror / transpose; --horizontal, --vertical, --transpose\n"
                 "(as 'imgpu flip')",
    .view_doc = "", /* not in the viewer */
    .view_keys = "",
    .defaults = defaults,
    .notes = notes,
    .shape = shape,
    .out_size = out_size,
    .work = work,
    .cpu_ns = cpu_ns,
    .write = write,
};

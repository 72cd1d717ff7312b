/* crop.c — the op "crop" (issue 28): cut a box out of the image. One way of choosing the box:
 *  - --rect X,Y,W,H: the W x H box whose top-left pixel is (X, Y);
 *  - --size WxH placed by --gravity (default center), ImageMagick's placement
 *    (GravityAdjustGeometry, integer arithmetic): x = 0 (west), floor(iw/2) - floor(W/2)
 *    (north, center, south) or iw - W (east); y likewise with the heights. So
 *    `crop --gravity G --size WxH` is `convert -gravity G -crop WxH+0+0 +repage`;
 *  - --trim: the bounding box of the pixels that differ (in any channel, alpha included, any
 *    bit) from the top-left pixel; an image of one colour keeps its top-left pixel (1x1), as
 *    ImageMagick's -trim does. It equals `convert -trim +repage` whenever the border is one
 *    colour (ImageMagick compares the right edge with the top-right pixel and the bottom edge
 *    with the bottom-left one; with a uniform border they are the same colour);
 *  - --inner: after an expanding rotation, the largest centred axis-aligned rectangle whose
 *    every pixel is interpolated from the image alone, never the background. The box depends
 *    on the rotation's source, not on the crop's input (at 45 degrees an expanded canvas is
 *    square whatever the source's aspect), so the crop is folded into the rotation before it
 *    (imgpu_ops_for_image: the rotation's canvas becomes "inner", src/op/rotate.c states the
 *    rectangle) and the crop itself then copies. The inner canvas is the expanded one cut
 *    symmetrically (same parity, same pixel centres): the pixels are those of
 *    `rotate --expand` inside that rectangle, bit for bit.
 *  - none: the whole image (a copy, with a notice).
 * A box that does not lie inside the image is refused, never clipped: "crop: the box
 * X,Y,W,H is outside the WxH image". Every output pixel is a copy of an input pixel: exact at
 * any depth and channel count. The CPU backend runs it in src/backend/cpu/crop.c, CUDA in
 * src/backend/cuda/crop.c and kernels/crop.cu (--trim: a bounding-box kernel, then the same
 * gather). */
#include "op_table.h"
#include "error.h"

#include <stdio.h>
#include <string.h>

imgpu_op imgpu_op_crop(int x, int y, int w, int h)
{
    imgpu_op op;
    memset(&op, 0, sizeof op);
    op.kind = IMGPU_OP_CROP;
    op.u.crop.gravity = IMGPU_GRAVITY_CENTER;
    if (w > 0 || h > 0 || x || y) {
        op.u.crop.x = x;
        op.u.crop.y = y;
        op.u.crop.w = w;
        op.u.crop.h = h;
        op.u.crop.has_rect = 1;
    }
    return op;
}

static void defaults(imgpu_op *op) { *op = imgpu_op_crop(0, 0, 0, 0); }

static int n_ways(const imgpu_crop_params *p)
{
    return (p->has_rect != 0) + (p->size_w > 0 || p->size_h > 0) + (p->trim != 0) + (p->inner != 0);
}

static int check(const imgpu_op *op)
{
    const imgpu_crop_params *p = &op->u.crop;
    if (n_ways(p) > 1)
        return imgpu_error("crop: give one of --rect, --size, --trim or --inner");
    if (p->has_rect && (p->w < 1 || p->h < 1))
        return imgpu_error("crop: a box of %dx%d pixels (--rect needs a width and height of 1 or more)", p->w, p->h);
    if (p->has_rect && (p->x < 0 || p->y < 0))
        return imgpu_error("crop: a box at %d,%d (--rect's X and Y start at 0)", p->x, p->y);
    if ((p->size_w > 0) != (p->size_h > 0) || p->size_w < 0 || p->size_h < 0)
        return imgpu_error("crop: a size of %dx%d pixels (--size needs both sides, 1 or more)", p->size_w, p->size_h);
    if (p->gravity < IMGPU_GRAVITY_NORTHWEST || p->gravity > IMGPU_GRAVITY_SOUTHEAST)
        return imgpu_error("crop: unknown gravity");
    return 0;
}

/* The box, or -1 with the reason in why (without the "crop: " of the recorded message). */
static int box_why(int w, int h, const imgpu_crop_params *p, int box[4], char *why, size_t n)
{
    box[0] = 0;
    box[1] = 0;
    box[2] = w;
    box[3] = h;
    if (p->has_rect) {
        /* in 64 bits: X + W may pass INT_MAX */
        if (p->x < 0 || p->y < 0 || p->w < 1 || p->h < 1 || (long long)p->x + p->w > w ||
            (long long)p->y + p->h > h) {
            snprintf(why, n, "the box %d,%d,%d,%d is outside the %dx%d image", p->x, p->y, p->w, p->h, w, h);
            return -1;
        }
        box[0] = p->x;
        box[1] = p->y;
        box[2] = p->w;
        box[3] = p->h;
    } else if (p->size_w > 0 || p->size_h > 0) {
        if (p->size_w < 1 || p->size_h < 1 || p->size_w > w || p->size_h > h) {
            snprintf(why, n, "the %dx%d box is larger than the %dx%d image", p->size_w, p->size_h, w, h);
            return -1;
        }
        const int col = p->gravity % 3, row = p->gravity / 3; /* 0: west / north, 1: middle, 2: east / south */
        box[0] = col == 0 ? 0 : col == 1 ? w / 2 - p->size_w / 2 : w - p->size_w;
        box[1] = row == 0 ? 0 : row == 1 ? h / 2 - p->size_h / 2 : h - p->size_h;
        box[2] = p->size_w;
        box[3] = p->size_h;
    }
    return 0;
}

int imgpu_crop_box(int w, int h, const imgpu_crop_params *p, int box[4])
{
    char why[160];
    if (box_why(w, h, p, box, why, sizeof why) < 0)
        return imgpu_error("crop: %s", why);
    return 0;
}

void imgpu_crop_trim_box(const unsigned char *data, size_t stride, int w, int h, int px, int box[4])
{
    int x0 = w, y0 = h, x1 = -1, y1 = -1;
    for (int y = 0; y < h; y++) {
        const unsigned char *row = data + (size_t)y * stride;
        int first = -1, last = -1;
        for (int x = 0; x < w; x++)
            if (memcmp(row + (size_t)x * px, data, (size_t)px)) {
                if (first < 0)
                    first = x;
                last = x;
            }
        if (first < 0)
            continue;
        if (y0 == h)
            y0 = y;
        y1 = y;
        if (first < x0)
            x0 = first;
        if (last > x1)
            x1 = last;
    }
    if (x1 < 0) { /* one colour: its top-left pixel */
        box[0] = box[1] = 0;
        box[2] = box[3] = 1;
        return;
    }
    box[0] = x0;
    box[1] = y0;
    box[2] = x1 - x0 + 1;
    box[3] = y1 - y0 + 1;
}

/* The box against the input's size: the plan refuses a box outside before anything runs. */
static int check_shape(int w, int h, const imgpu_op *op, char *why, size_t n)
{
    int box[4];
    return box_why(w, h, &op->u.crop, box, why, n);
}

/* --trim's result is at most the input; its size depends on the pixels */
static int data_sized(const imgpu_op *op) { return op->u.crop.trim != 0; }

static void box_or_whole(int w, int h, const imgpu_op *op, int box[4])
{
    char why[160];
    if (box_why(w, h, &op->u.crop, box, why, sizeof why) < 0) {
        box[2] = w; /* the plan says why (check_shape); the size here is a bound */
        box[3] = h;
    }
}

static void shape(int w, int h, const imgpu_op *op, double *ow, double *oh)
{
    int box[4];
    box_or_whole(w, h, op, box);
    *ow = box[2];
    *oh = box[3];
}

static void out_size(int w, int h, const imgpu_op *op, int *ow, int *oh)
{
    int box[4];
    box_or_whole(w, h, op, box);
    *ow = box[2];
    *oh = box[3];
}

static void work(int w, int h, int c, int depth, const imgpu_op *op, double *host, double *dev)
{
    (void)w, (void)h, (void)c, (void)depth, (void)op;
    *host = 0;
    *dev = 16; /* --trim's box on the device */
}

/* a copy of the box's rows (--trim reads every pixel once more) */
static double cpu_ns(int w, int h, int c, const imgpu_op *op)
{
    return (double)w * h * (0.25 * c + (op->u.crop.trim ? 1.0 : 0.0));
}

static void notes(const imgpu_op *op, int has_alpha, const char *name)
{
    (void)has_alpha;
    if (!n_ways(&op->u.crop))
        imgpu_notice("crop: no --rect, --size, --trim or --inner: '%s' is copied unchanged", name);
}

/* --inner: the rotation before the crop takes the inner canvas (src/op/rotate.c); the crop
 * then copies. Refused without an expanding rotation before it. */
static int chain(imgpu_op *op, imgpu_op *prev)
{
    if (!op->u.crop.inner)
        return 0;
    if (!prev || prev->kind != IMGPU_OP_ROTATE || prev->u.rotate.crop == 1)
        return imgpu_error("crop: --inner must follow an expanding rotation (rotate --expand)");
    prev->u.rotate.crop = 2; /* the inner canvas */
    return 0;
}

static const char *const s_gravities[] = {"northwest", "north", "northeast", "west", "center",
                                          "east", "southwest", "south", "southeast", NULL};

static const imgpu_param s_params[] = {
    {.name = "rect", .type = IMGPU_PARAM_RECT, .metavar = "X,Y,W,H", .def = 0, .min = 0, .max = 2147483647.0,
     .help = "the W x H box whose top-left pixel is (X, Y)", .hint = "X,Y,W,H: X, Y 0 or more, W, H 1 or more",
     .doc = "the W x H box whose top-left pixel is (X, Y); it must lie\ninside the image",
     .offset = offsetof(imgpu_crop_params, x), .offset2 = offsetof(imgpu_crop_params, has_rect),
     .fronts = IMGPU_FRONT_CLI | IMGPU_FRONT_BATCH},
    {.name = "size", .type = IMGPU_PARAM_SIZE, .metavar = "WxH", .def = 0, .min = 0, .max = 2147483647.0,
     .help = "a W x H box placed by --gravity (in 'imgpu view', --size is the snapshot's)",
     .hint = "WxH, e.g. 640x480",
     .doc = "a W x H box placed by --gravity; it must fit in the image",
     .offset = offsetof(imgpu_crop_params, size_w), .offset2 = offsetof(imgpu_crop_params, size_h),
     .fronts = IMGPU_FRONT_CLI | IMGPU_FRONT_BATCH},
    {.name = "gravity", .type = IMGPU_PARAM_ENUM, .metavar = "GRAVITY", .choices = s_gravities,
     .def = IMGPU_GRAVITY_CENTER, .help = "where --size's box sits (ImageMagick's -gravity; default center)",
     .hint = "northwest, north, northeast, west, center, east, southwest, south or southeast",
     .doc = "where --size's box sits, as ImageMagick's -gravity: northwest,\n"
            "north, northeast, west, center (default), east, southwest,\nsouth, southeast",
     .offset = offsetof(imgpu_crop_params, gravity), .fronts = IMGPU_FRONT_CLI | IMGPU_FRONT_BATCH},
    {.name = "trim", .type = IMGPU_PARAM_FLAG, .help = "remove the border of the top-left pixel's colour (-trim)",
     .doc = "remove the border of the top-left pixel's colour, as\nImageMagick's -trim (one colour: its 1x1 top-left pixel)",
     .offset = offsetof(imgpu_crop_params, trim), .flag_value = 1, .fronts = IMGPU_FRONT_CLI | IMGPU_FRONT_BATCH},
    {.name = "inner", .type = IMGPU_PARAM_FLAG,
     .help = "after an expanding rotation: the largest rectangle without background",
     .doc = "the largest centred rectangle without background, in a chain\n"
            "right after an expanding rotation (in 'imgpu batch', this op\n"
            "after the rotation); on its own it is an error",
     .offset = offsetof(imgpu_crop_params, inner), .flag_value = 1, .fronts = IMGPU_FRONT_CLI | IMGPU_FRONT_BATCH},
};

static int write(const imgpu_op *op, imgpu_op_text how, char *buf, size_t n)
{
    const imgpu_crop_params *p = &op->u.crop;
    const char *g = imgpu_param_choice(op, &s_params[2]);
    const int man = how == IMGPU_OP_TEXT_MANIFEST, opt = how == IMGPU_OP_TEXT_OPTIONS;
    const char *head = opt ? "" : "crop ";
    if (p->has_rect)
        return snprintf(buf, n, opt ? "%s--rect %d,%d,%d,%d" : man ? "%srect=%d,%d,%d,%d" : "%srect %d,%d,%d,%d", head,
                        p->x, p->y, p->w, p->h);
    if (p->size_w > 0 || p->size_h > 0)
        return snprintf(buf, n, opt ? "%s--gravity %s --size %dx%d" : man ? "%sgravity=%s size=%dx%d" : "%s%s %dx%d",
                        head, g, p->size_w, p->size_h);
    if (p->trim)
        return snprintf(buf, n, opt ? "%s--trim" : man ? "%strim=1" : "%strim", head);
    if (p->inner)
        return snprintf(buf, n, opt ? "%s--inner" : man ? "%sinner=1" : "%sinner", head);
    return snprintf(buf, n, opt ? "%s" : man ? "%swhole=1" : "%swhole", head);
}

const imgpu_op_desc imgpu__op_crop = {
    .name = "crop",
    .kind = IMGPU_OP_CROP,
    .summary = "cut a box out: --rect, --gravity with --size, --trim, --inner",
    .args = "IN OUT --rect X,Y,W,H | --size WxH [--gravity G] | --trim | --inner",
    .verb = "crop",
    .doc = "Cut a box out of the image: exact pixel copies at any depth. Give one of --rect,\n"
           "--size (placed by --gravity, as ImageMagick's -gravity G -crop WxH+0+0), --trim or\n"
           "--inner; a box that does not lie inside the image is an error, never clipped. None\n"
           "given: the image is copied unchanged (with a notice).\n"
           "Names: in 'imgpu batch' the op's name is also rotate's flag that keeps the input\n"
           "size (alias keep-size): after a rotation it sets that flag, unless the next option is\n"
           "one of --rect, --size, --gravity, --trim or --inner, which start this op (see\n"
           "'imgpu batch --help'). In 'imgpu view', --size is the snapshot's size.\n",
    .params = s_params,
    .nparams = sizeof s_params / sizeof s_params[0],
    .add_help = "crop (as 'imgpu crop'), the box from the options that follow",
    .batch_doc = "crop; --rect X,Y,W,H | --size WxH --gravity G | --trim | --inner\n"
                 "(as 'imgpu crop'; after --rotate, --crop alone is rotate's keep-size\n"
                 "unless one of crop's options follows it)",
    .view_doc = "", /* not in the viewer: --crop there is rotate's, --size the snapshot's */
    .view_keys = "",
    .defaults = defaults,
    .check = check,
    .check_shape = check_shape,
    .data_sized = data_sized,
    .chain = chain,
    .shape = shape,
    .out_size = out_size,
    .work = work,
    .cpu_ns = cpu_ns,
    .notes = notes,
    .write = write,
};

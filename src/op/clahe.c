/* clahe.c — the op "clahe": contrast-limited adaptive histogram equalization with OpenCV's
 * createCLAHE semantics. Its constructor, validation and tile geometry (op.h: both backends
 * take the tile sizes, clip limit and float scales from imgpu_clahe_geometry, so they are
 * the same numbers), and its descriptor. The CPU backend runs it in src/backend/cpu/clahe.c
 * (which states the rules), CUDA in src/backend/cuda/clahe.c and kernels/clahe.cu. */
#include "cli_values.h"
#include "op_table.h"
#include "error.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

imgpu_op imgpu_op_clahe(double clip, int tiles_x, int tiles_y, imgpu_eq_mode mode)
{
    imgpu_op op;
    memset(&op, 0, sizeof op);
    op.kind = IMGPU_OP_CLAHE;
    op.u.clahe.clip = clip;
    op.u.clahe.tiles_x = tiles_x;
    op.u.clahe.tiles_y = tiles_y;
    op.u.clahe.mode = mode;
    return op;
}

static void defaults(imgpu_op *op)
{
    *op = imgpu_op_clahe(IMGPU_CLAHE_DEFAULT_CLIP, IMGPU_CLAHE_DEFAULT_TILES, IMGPU_CLAHE_DEFAULT_TILES,
                         IMGPU_MODE_LUMINANCE);
}

/* ---- validation ------------------------------------------------------------------------ */

int imgpu_clahe_check_tiles(int tiles_x, int tiles_y)
{
    if (tiles_x < 1 || tiles_y < 1 || tiles_x > IMGPU_CLAHE_MAX_TILES || tiles_y > IMGPU_CLAHE_MAX_TILES)
        return imgpu_error("clahe: tile grid %dx%d out of range (1..%d each)", tiles_x, tiles_y,
                           IMGPU_CLAHE_MAX_TILES);
    return 0;
}

int imgpu_clahe_check(const imgpu_clahe_params *p)
{
    if (imgpu_clahe_check_tiles(p->tiles_x, p->tiles_y) < 0)
        return -1;
    if (!(p->clip == p->clip) || p->clip > 1e9) /* NaN or absurd */
        return imgpu_error("clahe: invalid clip limit");
    return 0;
}

/* What the plan checks before it counts the LUTs: the grid (the clip limit is the backends'). */
static int check(const imgpu_op *op) { return imgpu_clahe_check_tiles(op->u.clahe.tiles_x, op->u.clahe.tiles_y); }

/* ---- geometry (src/backend/cpu/clahe.c states the rules) ---------------------------------- */

int imgpu_clahe_geometry(int w, int h, int depth, const imgpu_clahe_params *p, imgpu_clahe_geom *g)
{
    if (imgpu_clahe_check(p) < 0)
        return -1;
    if (depth != 8 && depth != 16)
        return imgpu_error("clahe: %d-bit images are not supported", depth);
    imgpu_clahe_geom r;
    memset(&r, 0, sizeof r);
    r.w = w;
    r.h = h;
    r.tiles_x = p->tiles_x;
    r.tiles_y = p->tiles_y;
    r.bins = depth == 16 ? 65536 : 256;
    if (w % p->tiles_x == 0 && h % p->tiles_y == 0) {
        r.ext_w = w;
        r.ext_h = h;
    } else {
        r.ext_w = w + p->tiles_x - w % p->tiles_x;
        r.ext_h = h + p->tiles_y - h % p->tiles_y;
    }
    r.tile_w = r.ext_w / p->tiles_x;
    r.tile_h = r.ext_h / p->tiles_y;
    const int64_t area = (int64_t)r.tile_w * r.tile_h;
    if (area > INT32_MAX / 2)
        return imgpu_error("clahe: tiles of %dx%d pixels are too large", r.tile_w, r.tile_h);
    r.lut_scale = (float)(r.bins - 1) / (float)area;
    if (p->clip > 0.0) {
        const int c = (int)(p->clip * (double)area / r.bins);
        r.clip_limit = c < 1 ? 1 : c;
    }
    r.inv_tw = 1.0f / (float)r.tile_w;
    r.inv_th = 1.0f / (float)r.tile_h;
    *g = r;
    return 0;
}

/* ---- memory and cost ---------------------------------------------------------------------- */

static void work(int w, int h, int c, int depth, const imgpu_op *op, double *host, double *dev)
{
    const double npx = (double)w * h, levels = depth == 16 ? 65536.0 : 256.0;
    const int color = c >= 3 ? 3 : 1;
    /* the CPU: Y or one channel plane + its result (2 bytes a pixel each), Cb and Cr in
     * luminance mode, one LUT of `levels` uint16 per tile, one histogram, one column map over
     * the padded width (OpenCV pads a plane that the grid does not divide up to the next
     * multiple: a 1x1 image with a 256x256 grid has 65536 1x1 tiles). */
    const double tiles = (double)op->u.clahe.tiles_x * op->u.clahe.tiles_y;
    const int lum = op->u.clahe.mode == IMGPU_MODE_LUMINANCE && color == 3;
    const double ext_w = (double)w + op->u.clahe.tiles_x;
    *host = npx * 2 * (lum ? 4 : 2) + tiles * levels * 2 + levels * 4 + ext_w * 4;
    /* CUDA: planes x tiles x levels counters (4 bytes) and LUT entries */
    const double planes = lum || color == 1 ? 1 : 3;
    *dev = planes * tiles * levels * (4.0 + depth / 8) + 256;
}

static double cpu_ns(int w, int h, int c, const imgpu_op *op)
{
    const int color = c >= 3;
    return (double)w * h * (6.0 * c + (color && op->u.clahe.mode == IMGPU_MODE_LUMINANCE ? 8.0 : 0.0));
}

/* ---- parameters and text ------------------------------------------------------------------ */

static const char *const s_modes[] = {"luminance", "per-channel", NULL};

static const imgpu_param s_params[] = {
    {.name = "clip", .type = IMGPU_PARAM_DOUBLE, .metavar = "X", .def = IMGPU_CLAHE_DEFAULT_CLIP, .min = 0.0,
     .max = IMGPU_CLAHE_CLIP_MAX, .help = "CLAHE clip limit (default 40)",
     .hint = "a number 0..1000000; 0 disables clipping",
     .doc = "clip limit (default 40, OpenCV's): each tile's bins are clipped\n"
            "at max(1, floor(X * tile area / bins)); 0 disables clipping",
     .offset = offsetof(imgpu_clahe_params, clip), .fronts = IMGPU_FRONT_ALL},
    {.name = "tiles", .type = IMGPU_PARAM_SIZE, .metavar = "WxH", .def = IMGPU_CLAHE_DEFAULT_TILES, .min = 1,
     .max = IMGPU_CLAHE_MAX_TILES, .help = "CLAHE tile grid (default 8x8)", .hint = "WxH, each 1..256, e.g. 8x8",
     .doc = "tile grid (default 8x8); images that are not a multiple of it\n"
            "are padded by reflection (reflect-101) for the histograms",
     .offset = offsetof(imgpu_clahe_params, tiles_x), .offset2 = offsetof(imgpu_clahe_params, tiles_y),
     .fronts = IMGPU_FRONT_ALL},
    {.name = "mode", .type = IMGPU_PARAM_ENUM, .metavar = "luminance|per-channel", .choices = s_modes,
     .def = IMGPU_MODE_LUMINANCE, .help = "luminance (default): Y of BT.601 YCbCr; per-channel: R, G, B",
     .hint = "use luminance or per-channel",
     .doc = "luminance (default) works on Y of BT.601 YCbCr;\n"
            "per-channel on R, G and B independently",
     .offset = offsetof(imgpu_clahe_params, mode), .fronts = IMGPU_FRONT_ALL},
};

static int write(const imgpu_op *op, imgpu_op_text how, char *buf, size_t n)
{
    const imgpu_clahe_params *p = &op->u.clahe;
    const char *mode = imgpu_param_choice(op, &s_params[2]);
    char clip[40];
    imgpu__format_double(p->clip, clip, sizeof clip);
    switch (how) {
    case IMGPU_OP_TEXT_MANIFEST:
        return snprintf(buf, n, "clahe clip=%.17g tiles=%dx%d mode=%s", p->clip, p->tiles_x, p->tiles_y, mode);
    case IMGPU_OP_TEXT_OPTIONS:
        return snprintf(buf, n, "--clip %s --tiles %dx%d --mode %s", clip, p->tiles_x, p->tiles_y, mode);
    case IMGPU_OP_TEXT_STATUS:
        return snprintf(buf, n, "clahe clip %s tiles %dx%d %s", clip, p->tiles_x, p->tiles_y, mode);
    }
    return snprintf(buf, n, "clahe");
}

const imgpu_op_desc imgpu__op_clahe = {
    .name = "clahe",
    .kind = IMGPU_OP_CLAHE,
    .summary = "local contrast: CLAHE (OpenCV createCLAHE)",
    .args = "IN OUT",
    .verb = "apply clahe to",
    .doc = "Contrast-limited adaptive histogram equalization with OpenCV's createCLAHE semantics:\n"
           "a LUT per tile from its clipped histogram, blended bilinearly between the four nearest\n"
           "tile centres. 8-bit (256 bins) and 16-bit (65536 bins) images. Alpha passes through.\n",
    .params = s_params,
    .nparams = sizeof s_params / sizeof s_params[0],
    .add_help = "CLAHE (as 'imgpu clahe')",
    .batch_doc = "CLAHE (as 'imgpu clahe'); --clip X, --tiles WxH, --mode",
    .view_doc = "  --clahe [--clip X] [--tiles WxH]   CLAHE (C; [ ] clip, , . tiles), as 'imgpu clahe';\n"
                "                       default clip 40, tiles 8x8; not with --equalize\n",
    .view_keys = "C  CLAHE ON/OFF (NOT WITH E)   [ / ]  CLIP -/+ 1 (SHIFT 10)   , / .  TILES -/+\n",
    .view_key = 'C',
    .view_steps = {{'[', ']', "clip", 1.0, 10.0, 0.0, IMGPU_CLAHE_CLIP_MAX}, /* not below 0 */
                   {',', '.', "tiles", 1.0, 1.0, 1.0, 64.0}},                 /* square grids 1..64 */
    .defaults = defaults,
    .check = check,
    .work = work,
    .cpu_ns = cpu_ns,
    .write = write,
};

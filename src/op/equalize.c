/* equalize.c — the op "equalize": histogram equalization (OpenCV equalizeHist by default,
 * or PIL's / ImageMagick's LUT) of 8- and 16-bit images, on luminance or per channel. Its
 * descriptor: parameters, memory, cost and text; the CPU backend runs it in
 * src/backend/cpu/equalize.c, CUDA in src/backend/cuda/equalize.c. */
#include "op_table.h"

#include <stdio.h>
#include <string.h>

imgpu_op imgpu_op_equalize(imgpu_eq_mode mode)
{
    imgpu_op op;
    memset(&op, 0, sizeof op);
    op.kind = IMGPU_OP_EQUALIZE;
    op.u.equalize.mode = mode;
    return op;
}

static void defaults(imgpu_op *op) { *op = imgpu_op_equalize(IMGPU_MODE_LUMINANCE); }

static void work(int w, int h, int c, int depth, const imgpu_op *op, double *host, double *dev)
{
    (void)w, (void)h, (void)op;
    /* equalize_formula.c: full histograms (channels + luma planes) + one hist and LUT */
    const double levels = depth == 16 ? 65536.0 : 256.0, planes = c + (c >= 3);
    *host = planes * levels * 4 + levels * 6;
    *dev = planes * levels * 4 + levels * 6;
}

static double cpu_ns(int w, int h, int c, const imgpu_op *op)
{
    const int color = c >= 3;
    return (double)w * h * (3.0 * c + (color && op->u.equalize.mode == IMGPU_MODE_LUMINANCE ? 8.0 : 0.0));
}

static const char *const s_modes[] = {"luminance", "per-channel", NULL};
static const char *const s_formulas[] = {"opencv", "pil", "imagemagick", NULL};

static const imgpu_param s_params[] = {
    {.name = "mode", .type = IMGPU_PARAM_ENUM, .metavar = "luminance|per-channel", .choices = s_modes,
     .def = IMGPU_MODE_LUMINANCE, .help = "luminance (default): Y of BT.601 YCbCr; per-channel: R, G, B",
     .hint = "use luminance or per-channel",
     .doc = "luminance (default) equalizes Y of BT.601 YCbCr and\n"
            "keeps the colors; per-channel equalizes R, G and B independently\n"
            "(gray images: both are the same)",
     .offset = offsetof(imgpu_equalize_params, mode), .fronts = IMGPU_FRONT_ALL},
    {.name = "formula", .type = IMGPU_PARAM_ENUM, .metavar = "opencv|pil|imagemagick", .choices = s_formulas,
     .def = IMGPU_FORMULA_OPENCV, .help = "equalization LUT (default opencv)",
     .hint = "use opencv, pil or imagemagick",
     .doc = "the LUT: OpenCV equalizeHist (default), PIL\n"
            "ImageOps.equalize / torchvision (step scheme), or ImageMagick's\n"
            "-equalize (see docs/cli.md)",
     .offset = offsetof(imgpu_equalize_params, formula), .fronts = IMGPU_FRONT_CLI | IMGPU_FRONT_BATCH},
};

static int write(const imgpu_op *op, imgpu_op_text how, char *buf, size_t n)
{
    const char *mode = imgpu_param_choice(op, &s_params[0]), *formula = imgpu_param_choice(op, &s_params[1]);
    switch (how) {
    case IMGPU_OP_TEXT_MANIFEST: return snprintf(buf, n, "equalize mode=%s formula=%s", mode, formula);
    case IMGPU_OP_TEXT_OPTIONS: return snprintf(buf, n, "--mode %s", mode);
    case IMGPU_OP_TEXT_STATUS: return snprintf(buf, n, "equalize %s", mode);
    }
    return snprintf(buf, n, "equalize");
}

const imgpu_op_desc imgpu__op_equalize = {
    .name = "equalize",
    .kind = IMGPU_OP_EQUALIZE,
    .summary = "histogram equalization (luminance or per channel)",
    .args = "IN OUT",
    .verb = "equalize",
    .doc = "Histogram equalization (OpenCV equalizeHist) of 8- and 16-bit images (16 bits: a\n"
           "65536-level map). Alpha passes through untouched.\n",
    .params = s_params,
    .nparams = sizeof s_params / sizeof s_params[0],
    .add_help = "histogram equalization (as 'imgpu equalize')",
    .batch_doc = "histogram equalization; --mode luminance|per-channel,\n"
                 "--formula opencv|pil|imagemagick (as 'imgpu equalize')",
    .view_doc = "  --equalize           equalize (E)           --mode luminance|per-channel (M)\n",
    .view_keys = "E  EQUALIZE ON/OFF          M  LUMINANCE / PER-CHANNEL\n",
    .view_key = 'E',
    .defaults = defaults,
    .work = work,
    .cpu_ns = cpu_ns,
    .write = write,
};

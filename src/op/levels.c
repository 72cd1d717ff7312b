/* levels.c — the op "levels": ImageMagick 6's -level BLACK,WHITE,GAMMA (Q16, non-HDRI;
 * magick/enhance.c LevelImageChannel with LevelPixel), on every colour channel with the same
 * map (R, G and B of a colour image, the gray of a gray one: IM's default channels), alpha
 * untouched. With b and w the black and white points as quanta (tone.h: 0..65535), for each
 * level v of the image, q its quantum (257 v at 8 bits, v at 16):
 *     t = PerceptibleReciprocal(w - b) * (q - b)   (a reciprocal, then a product, as IM does)
 *     x = 65535.0 * (t < 0 ? t : pow(t, 1.0 / gamma))
 *     out = ClampToQuantum(x), then ScaleQuantumToChar at 8 bits (tone.h),
 * PerceptibleReciprocal(d) = 1 / d, or sign(d) / 1e-12 (MagickEpsilon) when |d| < 1e-12: so
 * black == white is a threshold (q <= b: 0; q > b: white). That is IM 6.9.11's LevelPixel (the
 * version Debian and Ubuntu ship, which tests/cli/tone_formula.py compares with); IM 6.9.10 and
 * earlier returned the pixel unchanged when |w - b| < 1e-12.
 * b and w: --black B / --white W in the image's levels (b = 257 B at 8 bits, B at 16), or
 * percentages of the range with '%' (b = P * (65535 / 100.0), IM's "-level 10%,90%"). The
 * defaults are black 0, white 100% and gamma 1 (the identity). Unlike IM's "-level B" with no
 * white, which means white = 65535 - B, a missing --white is 100%. black > white inverts, as in IM.
 * The LUT (2^depth entries) is computed here once, in double, for both backends: the CPU maps
 * through it (src/backend/cpu/levels.c), CUDA uploads it (src/backend/cuda/levels.c). */
#include "op_table.h"
#include "tone.h"
#include "error.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

imgpu_op imgpu_op_levels(double black, double white, double gamma)
{
    imgpu_op op;
    memset(&op, 0, sizeof op);
    op.kind = IMGPU_OP_LEVELS;
    op.u.levels.black = black;
    op.u.levels.white = white < 0 ? 100.0 : white;
    op.u.levels.white_pct = white < 0;
    op.u.levels.gamma = gamma;
    return op;
}

static void defaults(imgpu_op *op) { *op = imgpu_op_levels(0.0, -1.0, 1.0); }

/* A --black / --white value as a quantum (double). */
static double point_quantum(double v, int pct, int depth)
{
    if (pct)
        return v * (65535.0 / 100.0);
    return depth == 8 ? v * 257.0 : v;
}

void imgpu_levels_lut(const imgpu_levels_params *p, int depth, uint16_t *lut)
{
    const unsigned levels = depth == 16 ? 65536u : 256u;
    const double b = point_quantum(p->black, p->black_pct, depth), w = point_quantum(p->white, p->white_pct, depth);
    const double scale = imgpu__im_perceptible_reciprocal(w - b), inv_gamma = 1.0 / p->gamma;
    for (unsigned v = 0; v < levels; v++) {
        const double q = (double)imgpu__im_quantum(v, depth), t = scale * (q - b);
        const double x = 65535.0 * (t < 0.0 ? t : pow(t, inv_gamma));
        lut[v] = imgpu__im_level(imgpu__im_clamp_quantum(x), depth);
    }
}

static int check(const imgpu_op *op)
{
    const imgpu_levels_params *p = &op->u.levels;
    if (!(p->gamma >= 0.01 && p->gamma <= 100.0))
        return imgpu_error("levels: gamma %g out of range (0.01..100)", p->gamma);
    if (!isfinite(p->black) || !isfinite(p->white))
        return imgpu_error("levels: invalid black or white point");
    return 0;
}



/* In a batch, --gamma adds the gamma op (an op's name comes first there): the levels' gamma is
 * --level-gamma in a batch (either name in `imgpu levels`). */
static const char *const s_gamma_aliases[] = {"level-gamma", NULL};

static const imgpu_param s_params[] = {
    {.name = "black", .type = IMGPU_PARAM_LEVEL, .metavar = "B", .def = 0, .min = 0, .max = 65535,
     .help = "black point: a level (0..255 at 8 bits, 0..65535 at 16) or P% (default 0)",
     .hint = "use a level 0..65535 or a percentage 0%..100%",
     .doc = "the level that becomes black: in the image's levels\n"
            "(0..255 at 8 bits, 0..65535 at 16) or a percentage P%\n"
            "(default 0)",
     .offset = offsetof(imgpu_levels_params, black), .offset2 = offsetof(imgpu_levels_params, black_pct),
     .fronts = IMGPU_FRONT_ALL},
    {.name = "white", .type = IMGPU_PARAM_LEVEL, .metavar = "W", .def = 100, .min = 0, .max = 65535,
     .help = "white point: a level or P% (default 100%: the image's maximum)",
     .hint = "use a level 0..65535 or a percentage 0%..100%",
     .doc = "the level that becomes white, as --black (default\n"
            "100%: 255 at 8 bits, 65535 at 16); below --black inverts",
     .offset = offsetof(imgpu_levels_params, white), .offset2 = offsetof(imgpu_levels_params, white_pct),
     .fronts = IMGPU_FRONT_ALL},
    {.name = "gamma", .type = IMGPU_PARAM_DOUBLE, .metavar = "G", .def = 1.0, .min = 0.01, .max = 100.0,
     .help = "gamma applied after the stretch (default 1)", .hint = "use a number 0.01..100",
     .doc = "gamma applied after the stretch: out = in^(1/G)\n"
            "(default 1, linear; in a batch: --level-gamma G)",
     .offset = offsetof(imgpu_levels_params, gamma), .fronts = IMGPU_FRONT_CLI | IMGPU_FRONT_BATCH,
     .aliases = s_gamma_aliases},
};

static int level_text(char *buf, size_t n, double v, int pct) { return snprintf(buf, n, "%g%s", v, pct ? "%" : ""); }

static int write(const imgpu_op *op, imgpu_op_text how, char *buf, size_t n)
{
    const imgpu_levels_params *p = &op->u.levels;
    char b[48], w[48];
    level_text(b, sizeof b, p->black, p->black_pct);
    level_text(w, sizeof w, p->white, p->white_pct);
    switch (how) {
    case IMGPU_OP_TEXT_MANIFEST: return snprintf(buf, n, "levels black=%s white=%s gamma=%g", b, w, p->gamma);
    case IMGPU_OP_TEXT_OPTIONS: return snprintf(buf, n, "--black %s --white %s --gamma %g", b, w, p->gamma);
    case IMGPU_OP_TEXT_STATUS: return snprintf(buf, n, "levels %s,%s,%g", b, w, p->gamma);
    }
    return snprintf(buf, n, "levels");
}

const imgpu_op_desc imgpu__op_levels = {
    .name = "levels",
    .kind = IMGPU_OP_LEVELS,
    .summary = "stretch black..white to the full range, then a gamma (ImageMagick -level)",
    .args = "IN OUT",
    .verb = "level",
    .doc = "Levels, as ImageMagick's -level B,W,G (6, Q16): each colour channel maps\n"
           "B..W to the full range, then through the gamma 1/G; values outside clip. The same\n"
           "map on R, G and B; alpha passes through untouched. 8- and 16-bit images.\n",
    .params = s_params,
    .nparams = sizeof s_params / sizeof s_params[0],
    .add_help = "levels (as 'imgpu levels')",
    .batch_doc = "levels; --black B, --white W (levels or P%),\n"
                 "--level-gamma G (as 'imgpu levels --gamma G': in a batch\n"
                 "--gamma adds the gamma op)",
    .view_doc = "  --levels [--black B] [--white W]   levels (L; [ ] gamma), as 'imgpu levels'\n",
    .view_keys = "L  LEVELS ON/OFF   [ / ]  GAMMA -/+ 0.1 (SHIFT 1)\n",
    .view_key = 'L',
    .view_steps = {{'[', ']', "gamma", 0.1, 1.0, 0.1, 10.0}},
    .defaults = defaults,
    .check = check,
    .work = imgpu__tone_work,
    .cpu_ns = imgpu__tone_cpu_ns,
    .write = write,
};

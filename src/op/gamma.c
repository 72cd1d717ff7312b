/* gamma.c — the op "gamma": ImageMagick 6's -gamma G (Q16, non-HDRI; magick/enhance.c
 * GammaImageChannel): out = in^(1/G) on R, G and B with one map (the gray of a gray image), alpha
 * untouched. IM builds a 65536-entry map over the quanta (tone.h: an 8-bit level v is 257 v)
 *     map[i] = ClampToQuantum(65535.0 * pow(i / 65535.0, 1.0 / G))    (G == 1: the identity)
 * and maps each sample's quantum through it; 8-bit results are ScaleQuantumToChar(map[257 v]).
 * The LUT (2^depth entries) is computed here once, in double, for both backends: the CPU maps
 * through it (src/backend/cpu/gamma.c), CUDA uploads it (src/backend/cuda/gamma.c). */
#include "op_table.h"
#include "tone.h"
#include "error.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

imgpu_op imgpu_op_gamma(double gamma)
{
    imgpu_op op;
    memset(&op, 0, sizeof op);
    op.kind = IMGPU_OP_GAMMA;
    op.u.gamma.gamma = gamma;
    return op;
}

static void defaults(imgpu_op *op) { *op = imgpu_op_gamma(1.0); }

void imgpu_gamma_lut(double gamma, int depth, uint16_t *lut)
{
    const unsigned levels = depth == 16 ? 65536u : 256u;
    const double inv = 1.0 / gamma;
    for (unsigned v = 0; v < levels; v++) {
        const unsigned q = imgpu__im_quantum(v, depth);
        const unsigned m = gamma == 1.0 ? q : imgpu__im_clamp_quantum(65535.0 * pow((double)q / 65535.0, inv));
        lut[v] = imgpu__im_level(m, depth);
    }
}

static int check(const imgpu_op *op)
{
    const double g = op->u.gamma.gamma;
    if (!(g >= 0.01 && g <= 100.0))
        return imgpu_error("gamma: %g out of range (0.01..100)", g);
    return 0;
}



static const imgpu_param s_params[] = {
    {.name = "gamma", .type = IMGPU_PARAM_DOUBLE, .metavar = "G", .def = 1.0, .min = 0.01, .max = 100.0,
     .help = "out = in^(1/G) (default 1: unchanged)", .hint = "use a number 0.01..100",
     .doc = "out = in^(1/G), on a 0..1 scale (default 1: unchanged;\n"
            "2.2 brightens, 0.45 darkens)",
     .offset = offsetof(imgpu_gamma_params, gamma), .fronts = IMGPU_FRONT_ALL},
};

static int write(const imgpu_op *op, imgpu_op_text how, char *buf, size_t n)
{
    switch (how) {
    case IMGPU_OP_TEXT_MANIFEST: return snprintf(buf, n, "gamma gamma=%g", op->u.gamma.gamma);
    case IMGPU_OP_TEXT_OPTIONS: return snprintf(buf, n, "--gamma %g", op->u.gamma.gamma);
    case IMGPU_OP_TEXT_STATUS: return snprintf(buf, n, "gamma %g", op->u.gamma.gamma);
    }
    return snprintf(buf, n, "gamma");
}

const imgpu_op_desc imgpu__op_gamma = {
    .name = "gamma",
    .kind = IMGPU_OP_GAMMA,
    .summary = "gamma correction, out = in^(1/G) (ImageMagick -gamma)",
    .args = "IN OUT",
    .verb = "gamma-correct",
    .doc = "Gamma correction, as ImageMagick's -gamma G (6, Q16): out = in^(1/G) on each\n"
           "colour channel, one map for R, G and B; alpha passes through untouched. 8- and\n"
           "16-bit images.\n",
    .params = s_params,
    .nparams = sizeof s_params / sizeof s_params[0],
    .add_param = "gamma",
    .add_help = "gamma correction (as 'imgpu gamma --gamma G')",
    .batch_doc = "gamma correction, out = in^(1/G) (as 'imgpu gamma')",
    .view_doc = "  --gamma G            gamma correction (G; [ ] gamma), as 'imgpu gamma'\n",
    .view_keys = "G  GAMMA ON/OFF   [ / ]  GAMMA -/+ 0.1 (SHIFT 1)\n",
    .view_key = 'G',
    .view_steps = {{'[', ']', "gamma", 0.1, 1.0, 0.1, 10.0}},
    .defaults = defaults,
    .check = check,
    .work = imgpu__tone_work,
    .cpu_ns = imgpu__tone_cpu_ns,
    .write = write,
};

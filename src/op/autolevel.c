/* autolevel.c — the op "autolevel": ImageMagick 6's -auto-level (Q16, non-HDRI; magick/enhance.c
 * AutoLevelImageChannel = MinMaxStretchImage(image, channel, 0, 0)): the darkest level present
 * becomes black and the lightest white, linearly between, through LevelImageChannel with gamma 1
 * (the levels op's formula, src/op/levels.c):
 *  - linked (default; IM's default channels, SyncChannels): min and max over R, G and B together
 *    (GetImageChannelRange), one map for all three;
 *  - per-channel (IM's -channel RGB -auto-level): each colour channel its own min and max.
 * With min and max as quanta (an 8-bit level v is 257 v, tone.h), for each quantum q:
 *     t = PerceptibleReciprocal(max - min) * (q - min),  out = ClampToQuantum(65535.0 * t)
 * (pow(t, 1 / 1) = t), and 8-bit results ScaleQuantumToChar(out); min == max (a constant
 * channel) leaves it unchanged. Alpha is untouched.
 * Both backends compute each colour channel's CDF (the CUDA backend with the privatized
 * histogram and the block scan: min is the first bin whose CDF is above 0, max the first whose
 * CDF is N) and this file turns them into the LUT, once, for both. */
#include "op_table.h"
#include "tone.h"
#include "error.h"

#include <stdio.h>
#include <string.h>

imgpu_op imgpu_op_autolevel(int per_channel)
{
    imgpu_op op;
    memset(&op, 0, sizeof op);
    op.kind = IMGPU_OP_AUTOLEVEL;
    op.u.autolevel.mode = per_channel ? 1 : 0;
    return op;
}

static void defaults(imgpu_op *op) { *op = imgpu_op_autolevel(0); }

/* The first and last non-empty bins of a CDF over npix >= 1 pixels. */
static void range_of(const uint32_t *cdf, int bins, uint64_t npix, int *lo, int *hi)
{
    int b = 0;
    while (b < bins - 1 && cdf[b] == 0)
        b++;
    *lo = b;
    while (b < bins - 1 && cdf[b] != (uint32_t)npix)
        b++;
    *hi = b;
}

static void plane_lut(int lo, int hi, int bins, int depth, uint16_t *lut)
{
    const unsigned levels = depth == 16 ? 65536u : 256u;
    if (lo == hi) { /* IM: fabs(min - max) < MagickEpsilon, nothing levelled */
        for (unsigned v = 0; v < levels; v++)
            lut[v] = (uint16_t)v;
        return;
    }
    /* the levels op's map, black and white given in the image's levels (quanta at 16 bits, and
     * at 8 bits the bins are the levels themselves: imgpu_levels_lut takes 257 B) */
    (void)bins;
    imgpu_levels_params lp = {.black = lo, .white = hi, .black_pct = 0, .white_pct = 0, .gamma = 1.0};
    imgpu_levels_lut(&lp, depth, lut);
}

int imgpu_autolevel_lut(const imgpu_autolevel_params *p, const uint32_t *cdf, int planes, int bins, uint64_t npix,
                        int depth, uint16_t *lut)
{
    const unsigned levels = depth == 16 ? 65536u : 256u;
    int lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    for (int k = 0; k < planes && k < 3; k++)
        range_of(cdf + (size_t)k * (size_t)bins, bins, npix, &lo[k], &hi[k]);
    if (p->mode == IMGPU_MODE_PER_CHANNEL) {
        for (int k = 0; k < planes && k < 3; k++)
            plane_lut(lo[k], hi[k], bins, depth, lut + (size_t)k * levels);
        return planes;
    }
    int l = lo[0], h = hi[0]; /* planes >= 1 */
    for (int k = 1; k < planes && k < 3; k++) {
        l = lo[k] < l ? lo[k] : l;
        h = hi[k] > h ? hi[k] : h;
    }
    plane_lut(l, h, bins, depth, lut);
    return 1;
}

static int check(const imgpu_op *op)
{
    if (op->u.autolevel.mode != 0 && op->u.autolevel.mode != 1)
        return imgpu_error("autolevel: unknown mode %d", op->u.autolevel.mode);
    return 0;
}

static const char *const s_modes[] = {"linked", "per-channel", NULL};

/* --mode's choices are not equalize's and normalize's (luminance|per-channel), so the viewer,
 * which gives --mode to every contrast op that has it, does not take this one (its M key still
 * switches it, as the others'). */
static const imgpu_param s_params[] = {
    {.name = "mode", .type = IMGPU_PARAM_ENUM, .metavar = "linked|per-channel", .choices = s_modes, .def = 0,
     .help = "linked (default): one map from the range of R, G and B; per-channel: each its own",
     .hint = "use linked or per-channel",
     .doc = "linked (default) stretches the range of R, G and B\n"
            "together, one map for the three (ImageMagick's default);\n"
            "per-channel stretches each on its own (ImageMagick's\n"
            "-channel RGB -auto-level)",
     .offset = offsetof(imgpu_autolevel_params, mode), .fronts = IMGPU_FRONT_CLI | IMGPU_FRONT_BATCH},
};

static int write(const imgpu_op *op, imgpu_op_text how, char *buf, size_t n)
{
    const char *mode = op->u.autolevel.mode == 1 ? "per-channel" : "linked";
    switch (how) {
    case IMGPU_OP_TEXT_MANIFEST: return snprintf(buf, n, "autolevel mode=%s", mode);
    case IMGPU_OP_TEXT_OPTIONS: return snprintf(buf, n, "--mode %s", mode);
    case IMGPU_OP_TEXT_STATUS: return snprintf(buf, n, "autolevel %s", mode);
    }
    return snprintf(buf, n, "autolevel");
}

/* The CDFs as well as the LUT: up to three 65536-bin histograms and their scans. */
static void work(int w, int h, int c, int depth, const imgpu_op *op, double *host, double *dev)
{
    imgpu__tone_work(w, h, c, depth, op, host, dev);
    *host += 3.0 * 65536 * 4 * 2;
    *dev += 3.0 * 65536 * 4 * 2;
}

/* A histogram pass, then a table lookup a sample. */
static double cpu_ns(int w, int h, int c, const imgpu_op *op) { return 2.0 * imgpu__tone_cpu_ns(w, h, c, op); }

const imgpu_op_desc imgpu__op_autolevel = {
    .name = "autolevel",
    .kind = IMGPU_OP_AUTOLEVEL,
    .summary = "stretch the darkest..lightest levels to the full range (ImageMagick -auto-level)",
    .args = "IN OUT",
    .verb = "auto-level",
    .doc = "Auto level, as ImageMagick's -auto-level (6, Q16): the darkest level present\n"
           "becomes black, the lightest white, linearly between (-level min,max). One map\n"
           "for R, G and B from their joint range, or each channel on its own; alpha\n"
           "passes through untouched. 8- and 16-bit images.\n",
    .params = s_params,
    .nparams = sizeof s_params / sizeof s_params[0],
    .add_help = "auto level (as 'imgpu autolevel')",
    .batch_doc = "auto level; --mode linked|per-channel (as 'imgpu autolevel')",
    .view_doc = "  --autolevel          auto level (U; M: linked / per channel), as 'imgpu autolevel'\n",
    .view_keys = "U  AUTOLEVEL ON/OFF\n",
    .view_key = 'U',
    .defaults = defaults,
    .check = check,
    .work = work,
    .cpu_ns = cpu_ns,
    .write = write,
};

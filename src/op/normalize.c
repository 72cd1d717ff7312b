/* normalize.c — the op "normalize": ImageMagick 6's -normalize (Q16, non-HDRI; magick/enhance.c
 * NormalizeImageChannel, which calls ContrastStretchImageChannel), with the clipped fractions as
 * parameters. IM 6.9.11 (and 7) clip 0.15% of the pixels to black and 0.05% to white
 * (black_point = N * 0.0015, white_point = N * 0.9995); IM's older documentation and issue 28
 * say 2% and 1%: `--black-clip 2 --white-clip 1` (IM's -contrast-stretch 2%x1%).
 *
 * With N the pixels, B and W the clips in %, all in double as IM does:
 *     black_point = N * (B / 100),  white_point = N * (1 - W / 100)
 * (for B = 0.15 and W = 0.05 these are IM's N * 0.0015 and N * 0.9995 to the bit), and a
 * histogram h over the 65536 quanta (an 8-bit level v is the quantum 257 v, tone.h):
 *  - luminance (default; IM's default channels, SyncChannels): one histogram of IM's intensity
 *    ClampToQuantum((0.212656 R + 0.715158 G) + 0.072186 B) of each pixel (a gray image: the
 *    gray itself), one map for R, G and B;
 *  - per-channel (IM's -channel RGB): each colour channel its own histogram and map.
 *  black = the first q in 0..65535 with h[0] + ... + h[q] > black_point (65536 when none);
 *  white = the first q going down from 65535 to 1 with h[q] + ... + h[65535] > N - white_point
 *          (0 when none);
 *  map[q] = 0 for q < black, 65535 for q > white, else
 *           ClampToQuantum(65535.0 * (q - black) / (white - black))   (IM's ScaleMapToQuantum);
 *  black == white leaves the channel unchanged. Alpha is untouched; 8-bit results are
 *  ScaleQuantumToChar(map[257 v]) (tone.h).
 * Both backends compute the histograms' CDFs (the CUDA backend with the privatized histogram
 * and the block scan), and this file turns them into the LUT, once, for both. */
#include "cli_values.h"
#include "op_table.h"
#include "tone.h"
#include "error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

imgpu_op imgpu_op_normalize(double black_clip, double white_clip, imgpu_eq_mode mode)
{
    imgpu_op op;
    memset(&op, 0, sizeof op);
    op.kind = IMGPU_OP_NORMALIZE;
    op.u.normalize.black_clip = black_clip;
    op.u.normalize.white_clip = white_clip;
    op.u.normalize.mode = (int)mode;
    return op;
}

static void defaults(imgpu_op *op)
{
    *op = imgpu_op_normalize(IMGPU_NORMALIZE_BLACK_CLIP, IMGPU_NORMALIZE_WHITE_CLIP, IMGPU_MODE_LUMINANCE);
}

/* The cumulative count of quanta 0..q of a CDF of `bins` bins (bin b: quantum b * step). */
static uint64_t cum_at(const uint32_t *cdf, unsigned step, unsigned q) { return cdf[q / step]; }

/* black and white (quanta; tone.h's names for IM's) of one CDF, as ContrastStretchImageChannel. */
static void clip_points(const uint32_t *cdf, int bins, uint64_t npix, double black_point, double white_point,
                        unsigned *black, unsigned *white)
{
    const unsigned step = bins == 256 ? 257u : 1u;
    unsigned q;
    for (q = 0; q <= 65535u; q++)
        if ((double)cum_at(cdf, step, q) > black_point)
            break;
    *black = q;
    for (q = 65535u; q != 0; q--) /* the count of q..65535 is N minus the count of 0..q-1 */
        if ((double)(npix - cum_at(cdf, step, q - 1)) > (double)npix - white_point)
            break;
    *white = q;
}

static unsigned stretch(unsigned q, unsigned black, unsigned white)
{
    if (q < black)
        return 0;
    if (q > white)
        return 65535;
    return imgpu__im_clamp_quantum(65535.0 * ((double)q - (double)black) / ((double)white - (double)black));
}

int imgpu_normalize_lut(const imgpu_normalize_params *p, const uint32_t *cdf, int planes, int bins, uint64_t npix,
                        int depth, uint16_t *lut)
{
    const unsigned levels = depth == 16 ? 65536u : 256u;
    const double n = (double)npix;
    const double black_point = n * (p->black_clip / 100.0), white_point = n * (1.0 - p->white_clip / 100.0);
    for (int k = 0; k < planes; k++) {
        unsigned black, white;
        clip_points(cdf + (size_t)k * (size_t)bins, bins, npix, black_point, white_point, &black, &white);
        uint16_t *l = lut + (size_t)k * levels;
        for (unsigned v = 0; v < levels; v++) {
            const unsigned q = imgpu__im_quantum(v, depth);
            l[v] = black == white ? (uint16_t)v : imgpu__im_level(stretch(q, black, white), depth);
        }
    }
    return planes;
}

static int check(const imgpu_op *op)
{
    const imgpu_normalize_params *p = &op->u.normalize;
    if (!(p->black_clip >= 0.0 && p->black_clip <= 100.0) || !(p->white_clip >= 0.0 && p->white_clip <= 100.0))
        return imgpu_error("normalize: clip out of range (0..100%% of the pixels)");
    if (p->mode != IMGPU_MODE_LUMINANCE && p->mode != IMGPU_MODE_PER_CHANNEL)
        return imgpu_error("normalize: unknown mode %d", p->mode);
    return 0;
}

static const char *const s_modes[] = {"luminance", "per-channel", NULL};

static const imgpu_param s_params[] = {
    {.name = "black-clip", .type = IMGPU_PARAM_DOUBLE, .metavar = "P", .def = IMGPU_NORMALIZE_BLACK_CLIP, .min = 0,
     .max = 100, .units = "%",
     .help = "% of the pixels that become black (default 0.15, ImageMagick's)",
     .hint = "use a percentage of the pixels, 0..100",
     .doc = "the percentage of the pixels clipped to black (default\n"
            "0.15, as ImageMagick 6.9 and 7's -normalize; 2 with\n"
            "--white-clip 1 is their older documented 2%/1%)",
     .offset = offsetof(imgpu_normalize_params, black_clip), .fronts = IMGPU_FRONT_ALL},
    {.name = "white-clip", .type = IMGPU_PARAM_DOUBLE, .metavar = "P", .def = IMGPU_NORMALIZE_WHITE_CLIP, .min = 0,
     .max = 100, .units = "%",
     .help = "% of the pixels that become white (default 0.05, ImageMagick's)",
     .hint = "use a percentage of the pixels, 0..100",
     .doc = "the percentage of the pixels clipped to white (default\n"
            "0.05)",
     .offset = offsetof(imgpu_normalize_params, white_clip), .fronts = IMGPU_FRONT_ALL},
    {.name = "mode", .type = IMGPU_PARAM_ENUM, .metavar = "luminance|per-channel", .choices = s_modes,
     .def = IMGPU_MODE_LUMINANCE,
     .help = "luminance (default): one map from the luma histogram; per-channel: R, G, B",
     .hint = "use luminance or per-channel",
     .doc = "luminance (default) finds the clip points in the\n"
            "histogram of the luma 0.212656 R + 0.715158 G +\n"
            "0.072186 B and maps R, G and B alike (ImageMagick's\n"
            "default);\n"
            "per-channel stretches each of R, G and B on its own\n"
            "(ImageMagick's -channel RGB -normalize)",
     .offset = offsetof(imgpu_normalize_params, mode), .fronts = IMGPU_FRONT_ALL},
};

static int write(const imgpu_op *op, imgpu_op_text how, char *buf, size_t n)
{
    const imgpu_normalize_params *p = &op->u.normalize;
    const char *mode = p->mode == IMGPU_MODE_PER_CHANNEL ? "per-channel" : "luminance";
    char b[40], w[40];
    imgpu__format_double(p->black_clip, b, sizeof b);
    imgpu__format_double(p->white_clip, w, sizeof w);
    switch (how) {
    case IMGPU_OP_TEXT_MANIFEST: return snprintf(buf, n, "normalize black-clip=%s white-clip=%s mode=%s", b, w, mode);
    case IMGPU_OP_TEXT_OPTIONS: return snprintf(buf, n, "--black-clip %s --white-clip %s --mode %s", b, w, mode);
    case IMGPU_OP_TEXT_STATUS: return snprintf(buf, n, "normalize %s%%,%s%% %s", b, w, mode);
    }
    return snprintf(buf, n, "normalize");
}

/* The CDFs as well as the LUT: up to three 65536-bin histograms and their scans. */
static void work(int w, int h, int c, int depth, const imgpu_op *op, double *host, double *dev)
{
    imgpu__tone_work(w, h, c, depth, op, host, dev);
    *host += 3.0 * 65536 * 4 * 2;
    *dev += 3.0 * 65536 * 4 * 2 + (c >= 3 ? (double)w * h * 2 + 512 : 0);
}

/* A histogram pass (IM's intensity for colour images), then a table lookup a sample. */
static double cpu_ns(int w, int h, int c, const imgpu_op *op)
{
    return imgpu__tone_cpu_ns(w, h, c, op) + (double)w * h * (c >= 3 ? 4.0 : 1.0);
}

const imgpu_op_desc imgpu__op_normalize = {
    .name = "normalize",
    .kind = IMGPU_OP_NORMALIZE,
    .summary = "contrast stretch, a few darkest and lightest pixels clipped (ImageMagick -normalize)",
    .args = "IN OUT",
    .verb = "normalize",
    .doc = "Contrast stretch, as ImageMagick's -normalize (6, Q16): the level below which\n"
           "--black-clip % of the pixels lie becomes black, the level above which\n"
           "--white-clip % lie becomes white, and the levels between are stretched\n"
           "linearly. One map for R, G and B from the luma histogram, or each channel on\n"
           "its own; alpha passes through untouched. 8- and 16-bit images.\n",
    .params = s_params,
    .nparams = sizeof s_params / sizeof s_params[0],
    .add_help = "contrast stretch (as 'imgpu normalize')",
    .batch_doc = "contrast stretch; --black-clip P, --white-clip P\n"
                 "(% of the pixels), --mode (as 'imgpu normalize')",
    .view_doc = "  --normalize [--black-clip P] [--white-clip P]   contrast stretch (Z; [ ] , . the\n"
                "                       clips; M), as 'imgpu normalize'\n",
    .view_keys = "Z  NORMALIZE ON/OFF   [ / ]  BLACK CLIP -/+ 0.05% (SHIFT 1%)   , / .  WHITE CLIP\n",
    .view_key = 'Z',
    .view_steps = {{'[', ']', "black-clip", 0.05, 1.0, 0.0, 50.0}, {',', '.', "white-clip", 0.05, 1.0, 0.0, 50.0}},
    .defaults = defaults,
    .check = check,
    .work = work,
    .cpu_ns = cpu_ns,
    .write = write,
};

/* equalize.c — reference histogram equalization of 8-bit images, bit for bit OpenCV's
 * cv::equalizeHist, in the libvips shape: find histogram, cumulate, normalise, map a LUT.
 *
 * The LUT (imgpu_cpu_equalize_lut, shared with the CUDA backend) for a histogram of N pixels:
 *   - i0 = the first non-empty bin. lut[i0] = 0; bins below i0 (empty) also map to 0.
 *   - If hist[i0] == N (a constant channel) the LUT is the identity: the data is returned
 *     unchanged. (OpenCV fills the output with i0, which is the same thing.)
 *   - Otherwise scale = 255.0f / (float)(N - hist[i0]), a single-precision division, and for
 *     i > i0: sum += hist[i] (an exact integer), lut[i] = rint((float)sum * scale) with the
 *     product rounded to float first and rint rounding half to EVEN (OpenCV's
 *     saturate_cast<uchar>(float) -> cvRound -> lrintf in the default rounding mode), then
 *     saturated to 0..255. Half-way cases do occur: scale = 0.5f, sum = 253 gives 126, not 127.
 *     (float)sum is exact while sum < 2^24; above that it rounds to nearest even like
 *     OpenCV's int -> float conversion.
 *
 * Modes:
 *   - gray, gray+alpha: the gray channel is equalized; luminance and per-channel mode are the
 *     same thing.
 *   - color, per-channel: R, G and B each get their own histogram and LUT.
 *   - color, luminance (default): every pixel goes to full-range BT.601 YCbCr in OpenCV's
 *     integer arithmetic (color.c), Y is equalized with the LUT of the histogram of Y over the
 *     whole image, and (Y', Cb, Cr) goes back to RGB with OpenCV's integer inverse — exactly
 *     cvtColor(RGB2YCrCb) -> equalizeHist(Y) -> cvtColor(YCrCb2RGB). One deliberate exception:
 *     when Y is constant over the image the LUT is the identity and the image is returned
 *     unchanged, without the lossy RGB -> YCbCr -> RGB round trip OpenCV would still apply.
 *   - alpha (channel 2 of 2, channel 4 of 4) is copied untouched in every mode.
 * Input rows may be padded (stride); the output is a new tight image. */
#include "cpu.h"
#include "ycc.h"
#include "error.h"
#include "parallel.h"
#include "count8.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void imgpu_cpu_equalize_lut(const uint32_t hist[256], uint64_t n, uint8_t lut[256])
{
    int i0 = 0;
    while (i0 < 256 && hist[i0] == 0)
        i0++;
    if (i0 == 256 || (uint64_t)hist[i0] >= n) { /* empty or constant: identity */
        for (int i = 0; i < 256; i++)
            lut[i] = (uint8_t)i;
        return;
    }
    const float scale = 255.0f / (float)(n - hist[i0]);
    uint64_t sum = 0;
    for (int i = 0; i <= i0; i++)
        lut[i] = 0;
    for (int i = i0 + 1; i < 256; i++) {
        sum += hist[i];
        const float v = (float)sum * scale; /* rounded to float before rint, as in OpenCV */
        const long r = lrintf(v);           /* round half to even (default rounding mode) */
        lut[i] = (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
    }
}

/* The passes below run on every core (parallel.h): each histogram part counts its own rows
 * into a private histogram and the parts are summed in integers (exact, any order); the
 * mapping passes write disjoint rows. Per pixel the code is what it was single-threaded. */
typedef struct eq_job {
    const imgpu_image *in;
    imgpu_image *out;
    int k;                 /* channel, per-channel mode */
    uint32_t (*hist)[256]; /* one histogram per part */
    const uint8_t *lut;
    const int32_t *lut32;      /* luminance mode, RGB: lut widened (luma_map_rgb) */
    const struct ycc_tabs *t;  /* luminance mode: the per-level terms of the conversions */
} eq_job;

/* Luminance mode's per-pixel conversions (ycc.h) as table lookups with the same integer
 * results: Cr and Cb depend only on R - Y and B - Y (-255..255), so each term of the inverse
 * does too, and is tabled by that difference: the red and blue terms whole, the green term's
 * two products before their sum is descaled (a descale of a sum is not a sum of descales).
 * Checked against imgpu__rgb_to_ycbcr + imgpu__ycbcr_to_rgb on all 2^24 colours. */
struct ycc_tabs {
    int16_t r[511], b[511];    /* index R - Y + 255, B - Y + 255: descale14(CR2R (Cr - 128)), ... */
    int32_t gr[511], gb[511];  /* CR2G (Cr - 128), CB2G (Cb - 128), by the same indexes */
    uint8_t sat[1024];         /* v + 384 -> v saturated to 0..255 (v in -384..639) */
};

static void ycc_tabs_init(struct ycc_tabs *t)
{
    for (int d = -255; d <= 255; d++) {
        const int cr = imgpu__sat_u8(imgpu__descale14(d * IMGPU_Y2CR + (128 << IMGPU_YCC_SHIFT)));
        const int cb = imgpu__sat_u8(imgpu__descale14(d * IMGPU_Y2CB + (128 << IMGPU_YCC_SHIFT)));
        t->r[d + 255] = (int16_t)imgpu__descale14(IMGPU_CR2R * (cr - 128));
        t->b[d + 255] = (int16_t)imgpu__descale14(IMGPU_CB2B * (cb - 128));
        t->gr[d + 255] = IMGPU_CR2G * (cr - 128);
        t->gb[d + 255] = IMGPU_CB2G * (cb - 128);
    }
    for (int v = 0; v < 1024; v++)
        t->sat[v] = imgpu__sat_u8(v - 384);
}

/* Sum the parts' histograms into hist. */
static void merge_hist(uint32_t (*parts)[256], int n, uint32_t hist[256])
{
    for (int i = 0; i < 256; i++) {
        uint32_t s = 0;
        for (int t = 0; t < n; t++)
            s += parts[t][i];
        hist[i] = s;
    }
}

/* Histogram of channel k of a c-channel 8-bit image, rows y0..y1-1, in four histograms (one
 * per pixel of each group of four) summed at the end, as luma_hist_rows below: the counts are
 * the same integers, without each increment waiting for the one before it when neighbouring
 * pixels share a value. */
static void channel_hist_rows(void *ctx, int part, int y0, int y1)
{
    const eq_job *j = ctx;
    const imgpu_image *in = j->in;
    uint32_t h4[4][256];
    memset(h4, 0, sizeof h4);
    /* locals, not in->...: a store to a histogram may alias them, which would reload them per pixel */
    const int w = in->width, c = in->channels, k = j->k;
    for (int y = y0; y < y1; y++) {
        const uint8_t *p = imgpu_image_row(in, y) + k;
        if (c == 1) { /* gray: eight pixels a load */
            imgpu__count_run(h4, p, w);
            continue;
        }
        int x = 0;
        for (; x + 4 <= w; x += 4, p += 4 * c) {
            h4[0][p[0]]++;
            h4[1][p[c]]++;
            h4[2][p[2 * c]]++;
            h4[3][p[3 * c]]++;
        }
        for (; x < w; x++, p += c)
            h4[0][*p]++;
    }
    uint32_t *hist = j->hist[part];
    for (int i = 0; i < 256; i++)
        hist[i] += h4[0][i] + h4[1][i] + h4[2][i] + h4[3][i];
}

/* out channel k = lut[in channel k]. */
static void channel_map_rows(void *ctx, int part, int y0, int y1)
{
    (void)part;
    const eq_job *j = ctx;
    const imgpu_image *in = j->in;
    const int w = in->width, c = in->channels, k = j->k;
    /* a private copy, and restrict: no store to the output can change the LUT, so the lookups
     * need not wait for the stores before them (with j->lut, the gray loop's speed swung 1.4x
     * with where the LUT happened to lie on the stack) */
    uint8_t lut[256];
    memcpy(lut, j->lut, sizeof lut);
    for (int y = y0; y < y1; y++) {
        const uint8_t *restrict p = imgpu_image_row(in, y) + k;
        uint8_t *restrict q = imgpu_image_row(j->out, y) + k;
        if (c == 1) { /* gray: the same statement with a constant step, which the compiler unrolls */
            for (int x = 0; x < w; x++)
                q[x] = lut[p[x]];
            continue;
        }
        for (int x = 0; x < w; x++, p += c, q += c)
            *q = lut[*p];
    }
}

/* Four histograms, one per pixel of each group of four, summed at the end: neighbouring pixels
 * of a photo often share a Y, and one histogram would make each increment wait for the one
 * before it (a store-to-load dependency through the same counter). */
IMGPU__CPU_WIDE static void luma_hist_rows(void *ctx, int part, int y0, int y1)
{
    const eq_job *j = ctx;
    const imgpu_image *in = j->in;
    const int c = in->channels, w = in->width;
    uint32_t h4[4][256];
    uint8_t ys[256];
    memset(h4, 0, sizeof h4);
    for (int y = y0; y < y1; y++) {
        const uint8_t *row = imgpu_image_row(in, y);
        /* Y of 256 pixels at a time, then counted: the first loop has no store the compiler
         * must order against the counts, so it vectorizes */
        for (int x0 = 0; x0 < w; x0 += 256) {
            const int n = w - x0 < 256 ? w - x0 : 256;
            const uint8_t *p = row + (size_t)x0 * c;
            if (c == 3)
                for (int x = 0; x < n; x++)
                    ys[x] = imgpu__rgb_to_y(p[3 * x], p[3 * x + 1], p[3 * x + 2]);
            else
                for (int x = 0; x < n; x++)
                    ys[x] = imgpu__rgb_to_y(p[c * x], p[c * x + 1], p[c * x + 2]);
            imgpu__count_run(h4, ys, n); /* eight Y a load, as the gray histogram */
        }
    }
    uint32_t *hist = j->hist[part];
    for (int i = 0; i < 256; i++)
        hist[i] += h4[0][i] + h4[1][i] + h4[2][i] + h4[3][i];
}

/* RGB (3 channels): the same conversions as luma_map_rows in their integer arithmetic itself
 * (ycc.h's imgpu__ycc_replace_y: imgpu__rgb_to_ycbcr then imgpu__ycbcr_to_rgb(lut[Y], Cb, Cr),
 * the statements the tables of luma_map_rows were built from), with no table but the LUT, widened to 32 bits: a
 * loop the compiler vectorizes (AVX2 clone: eight pixels a step, the LUT by a gather). */
static inline __attribute__((always_inline)) void luma_map_rgb(const uint8_t *restrict p, uint8_t *restrict q, int w,
                                                                const int32_t *restrict lut)
{
    for (int x = 0; x < w; x++) {
        const int r = p[3 * x], g = p[3 * x + 1], b = p[3 * x + 2];
        /* imgpu__descale14 of a non-negative sum, without its bias for negative ones: 0..255 */
        const int yy = (IMGPU_R2Y * r + IMGPU_G2Y * g + IMGPU_B2Y * b + (1 << 13)) >> 14;
        uint8_t o[3];
        imgpu__ycc_replace_y(r, b, yy, lut[yy], o);
        q[3 * x] = o[0];
        q[3 * x + 1] = o[1];
        q[3 * x + 2] = o[2];
    }
}

IMGPU__CPU_WIDE static void luma_map_rows(void *ctx, int part, int y0, int y1)
{
    (void)part;
    const eq_job *j = ctx;
    const imgpu_image *in = j->in;
    const int c = in->channels, w = in->width;
    const uint8_t *lut = j->lut;
    const struct ycc_tabs *t = j->t;
    for (int y = y0; y < y1; y++) {
        const uint8_t *p = imgpu_image_row(in, y);
        uint8_t *q = imgpu_image_row(j->out, y);
        if (c == 3) {
            luma_map_rgb(p, q, w, j->lut32);
            continue;
        }
        for (int x = 0; x < w; x++, p += c, q += c) {
            /* exactly imgpu__rgb_to_ycbcr then imgpu__ycbcr_to_rgb(lut[Y], Cb, Cr) */
            const int r = p[0], g = p[1], b = p[2];
            const int yy = (IMGPU_R2Y * r + IMGPU_G2Y * g + IMGPU_B2Y * b + (1 << 13)) >> 14;
            const int dr = r - yy + 255, db = b - yy + 255;
            const int y2 = lut[yy] + 384;
            q[0] = t->sat[y2 + t->r[dr]];
            q[1] = t->sat[y2 + imgpu__descale14(t->gr[dr] + t->gb[db])];
            q[2] = t->sat[y2 + t->b[db]];
            /* q[3] (alpha) came with the copy (imgpu__cpu_image_for) */
        }
    }
}

static void equalize_luminance(eq_job *j, int parts)
{
    const imgpu_image *in = j->in;
    uint32_t hist[256];
    uint8_t lut[256];
    imgpu__cpu_parallel_rows(in->height, parts, luma_hist_rows, j);
    merge_hist(j->hist, parts, hist);
    const uint64_t n = (uint64_t)in->width * (uint64_t)in->height;
    imgpu_cpu_equalize_lut(hist, n, lut);
    int i0 = 0;
    while (hist[i0] == 0)
        i0++;
    if (hist[i0] == n) { /* constant Y: the image is its own result (with alpha, `out` is a copy already) */
        if (in->channels == 3)
            for (int y = 0; y < in->height; y++)
                memcpy(imgpu_image_row(j->out, y), imgpu_image_row(in, y), j->out->stride);
        return;
    }
    struct ycc_tabs t;
    ycc_tabs_init(&t);
    int32_t lut32[256];
    for (int i = 0; i < 256; i++)
        lut32[i] = lut[i];
    j->lut = lut;
    j->lut32 = lut32;
    j->t = &t;
    imgpu__cpu_parallel_rows(in->height, parts, luma_map_rows, j);
}

imgpu_image *imgpu_cpu_equalize(const imgpu_image *in, const imgpu_equalize_params *p)
{
    if (in->depth != 8) {
        imgpu_error("equalize: %d-bit images are not supported", in->depth);
        return NULL;
    }
    if (p->mode != IMGPU_MODE_LUMINANCE && p->mode != IMGPU_MODE_PER_CHANNEL) {
        imgpu_error("equalize: unknown mode %d", (int)p->mode);
        return NULL;
    }
    const uint64_t n = (uint64_t)in->width * (uint64_t)in->height;
    if (n > UINT32_MAX) { /* the 32-bit bins below would wrap */
        imgpu_error("equalize: %dx%d has too many pixels for 32-bit bins", in->width, in->height);
        return NULL;
    }
    /* Every colour sample is written below; alpha comes with a copy of the input. */
    imgpu_image *out = imgpu__cpu_image_for(in);
    if (!out)
        return NULL;
    const int parts = imgpu__cpu_parts(in->height, (size_t)in->width * (size_t)in->channels, 256);
    eq_job j = {.in = in, .out = out, .hist = calloc((size_t)parts, sizeof *j.hist)};
    if (!j.hist) {
        imgpu_image_free(out);
        imgpu_error("equalize: out of memory");
        return NULL;
    }
    const int color = imgpu_image_color_channels(in); /* 1 or 3 */
    if (color == 3 && p->mode == IMGPU_MODE_LUMINANCE) {
        equalize_luminance(&j, parts);
    } else {
        for (int k = 0; k < color; k++) {
            uint32_t hist[256];
            uint8_t lut[256];
            memset(j.hist, 0, (size_t)parts * sizeof *j.hist);
            j.k = k;
            imgpu__cpu_parallel_rows(in->height, parts, channel_hist_rows, &j);
            merge_hist(j.hist, parts, hist);
            imgpu_cpu_equalize_lut(hist, n, lut);
            j.lut = lut;
            imgpu__cpu_parallel_rows(in->height, parts, channel_map_rows, &j);
        }
    }
    free(j.hist);
    return out;
}

/* The run entry (ops_table.c): 8-bit OpenCV here, every other depth and formula in
 * equalize_formula.c. */
static imgpu_image *run(const imgpu_image *in, const imgpu_op *op)
{
    if (in->depth == 8 && op->u.equalize.formula == IMGPU_FORMULA_OPENCV)
        return imgpu_cpu_equalize(in, &op->u.equalize);
    return imgpu_cpu_equalize_full(in, &op->u.equalize);
}

const imgpu_cpu_op imgpu__cpu_op_equalize = {IMGPU_OP_EQUALIZE, run};

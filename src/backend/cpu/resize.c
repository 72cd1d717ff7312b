/* resize.c — the CPU reference of resize: cv2.resize's filters, run from the tables of
 * src/op/resize.c (resize_tab.h), which the CUDA backend uploads and runs with the same
 * operations (kernels/resize.cu).
 *
 * Rules (OpenCV 4.6's resize.cpp, reproduced from its behaviour; cv2 is the oracle):
 *  - Size: --size WxH; --width W (H = max(1, floor(h W / w + 1/2))), --height likewise,
 *    both: WxH; --fit WxH: the side that limits is exact, the other rounded as above and at
 *    most the box; --scale F: each side round(side * F) half to even, at least 1. cv2's inverse
 *    scale is dsize / ssize, or F itself with --scale (cv2.resize(a, None, fx=F, fy=F)).
 *    The same size is a copy (cv2 copies whatever the filter).
 *  - nearest: INTER_NEAREST_EXACT: f = ((s << 16) + d / 2) / d, src = min((f x + f / 2 -
 *    s % 2) >> 16, s - 1) (in 64 bits; OpenCV's int overflows past 32767 pixels).
 *  - bilinear, bicubic, lanczos (and area when enlarging, with OpenCV's "area_mode"
 *    coordinates): source coordinate fx = (float)((d + 0.5) * scale - 0.5), sx = floor(fx),
 *    t = fx - sx; Keys a = -0.75 (cubic) and OpenCV's normalized Lanczos-4 weights in float;
 *    taps sx - k/2 + 1 + i clamped into the image (BORDER_REPLICATE); horizontal linear taps
 *    with sx < 0 or sx >= w - 1 are pinned there with t = 0.
 *    8 bits: weights round(c * 2048) (INTER_RESIZE_COEF_BITS = 11), half to even, as int16;
 *    horizontal pass: sum S * wx in int32; vertical pass: (sum h_k * wy_k + 2^21) >> 22,
 *    saturated, except where OpenCV's vector code computes it differently, which we follow:
 *      bilinear, samples x < vec_end: v = mulhi(h0 >> 4, b0) + mulhi(h1 >> 4, b1) (16-bit
 *        saturating lanes, mulhi(a, b) = a * b >> 16), out = sat8((v + 2) >> 2);
 *      bicubic, x < vec_end: float f = h0 b0' + (h1 b1' + (h2 b2' + h3 b3')), b' = b * 2^-22,
 *        rounded half even, saturated.
 *    vec_end is where OpenCV's 128-bit loops stop (resize_tab.c). Bilinear by exactly 1/2 is
 *    area, as in cv2.
 *    16 bits: float weights, horizontal sum S * wx from 0 in order, vertical sum wy * h in
 *    order, rounded half even (within 1 level of cv2, which may order its vector sums
 *    differently).
 *  - area, shrinking (both scales >= 1): by whole factors kx, ky: box sums in integers; a
 *    full box is (sum + 2) >> 2 at 2x2 (not for 2 channels) or round(sum * (1.f / (kx ky)))
 *    half even, a box cut by the border (float)sum / count rounded; otherwise OpenCV's
 *    computeResizeAreaTab weights in float: horizontal sum, vertical sum of wy * h in order,
 *    rounded half even.
 *  - --antialias: Pillow 9's Image.resize (ImagingResample), filters bilinear, bicubic (a =
 *    -0.5), lanczos (a = 3) and box (for area): scale = s / d, fs = max(1, scale), support =
 *    filter support * fs; output d's window [lo, hi) = [(int)(c - support + 0.5), (int)(c +
 *    support + 0.5)) clamped into the image, c = (d + 0.5) scale; weights f((x - c + 0.5) / fs)
 *    in double, normalized by their sum, then (int)(w * 2^22 +- 0.5). Horizontal pass, then
 *    vertical, each floor((2^21 + sum s_k w_k) / 2^22) (int64); 8 bits: each pass clamped to
 *    0..255 (Pillow's 8-bit intermediate); 16 bits: the intermediate unclamped, the result
 *    clamped (Pillow 9 resizes I;16 only as mode I, int32 with double sums). A side of the same
 *    size is the identity (Pillow skips that pass). Alpha as below, with the float weights.
 *  - alpha (2 or 4 channels, the op floor's premultiplied rule, op.h): alpha is filtered as
 *    above; where the taps (weight > 0 on both sides) do not all share one alpha, each colour
 *    is M / A with A = sum_r wy_r sum_k wx_k a, M = the same over premul(c, a) (float weights:
 *    the fixed-point ones / 2048, box taps 1), clamped to 0..max, floor(v + 0.5); where A = 0
 *    or the alphas are equal, the straight value above. Nearest copies pixels.
 */
#include "cpu.h"
#include "error.h"
#include "image.h"
#include "op/resize_tab.h"
#include "parallel.h"
#include "premul.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

typedef struct job {
    const imgpu_resize_tab *t;
    const imgpu_image *in;
    imgpu_image *out;
    void *h; /* nh rows of dw * cn int32 or float */
} job;

static inline uint32_t get(const unsigned char *row, int depth, int i)
{
    return depth == 16 ? ((const uint16_t *)(const void *)row)[i] : row[i];
}
static inline void put(unsigned char *row, int depth, int i, uint32_t v)
{
    if (depth == 16)
        ((uint16_t *)(void *)row)[i] = (uint16_t)v;
    else
        row[i] = (uint8_t)v;
}
static inline uint32_t sat(long v, long maxv) { return (uint32_t)(v < 0 ? 0 : v > maxv ? maxv : v); }
/* (int32_t)v >> 22, arithmetic, for any bit pattern */
static inline long imgpu__asr22(uint32_t v) { return (v & 0x80000000u) ? -(long)((~v) >> 22) - 1 : (long)(v >> 22); }
static inline int16_t sat16(int32_t v) { return (int16_t)(v < -32768 ? -32768 : v > 32767 ? 32767 : v); }

static void nearest_rows(void *ctx, int part, int y0, int y1)
{
    (void)part;
    const job *j = ctx;
    const imgpu_resize_tab *t = j->t;
    const int32_t *xi = imgpu_rsz_i(t, t->o_xi), *yi = imgpu_rsz_i(t, t->o_yi);
    const size_t px = (size_t)t->cn * (t->depth == 16 ? 2 : 1);
    for (int y = y0; y < y1; y++) {
        const unsigned char *s = j->in->data + (size_t)yi[y] * j->in->stride;
        unsigned char *d = j->out->data + (size_t)y * j->out->stride;
        for (int x = 0; x < t->dw; x++)
            memcpy(d + x * px, s + (size_t)xi[x] * px, px);
    }
}

/* horizontal pass: rows hrow[y0..y1) of the source */
static void h_rows(void *ctx, int part, int y0, int y1)
{
    (void)part;
    const job *j = ctx;
    const imgpu_resize_tab *t = j->t;
    const int cn = t->cn, kx = t->kx, W = t->dw * cn;
    const int32_t *xi = imgpu_rsz_i(t, t->o_xi), *xwi = imgpu_rsz_i(t, t->o_xwi), *hrow = imgpu_rsz_i(t, t->o_hrow);
    const float *xwf = imgpu_rsz_f(t, t->o_xwf);
    for (int r = y0; r < y1; r++) {
        const unsigned char *s = j->in->data + (size_t)hrow[r] * j->in->stride;
        for (int dx = 0; dx < t->dw; dx++)
            for (int c = 0; c < cn; c++) {
                if (t->pil) {
                    long long acc = 0;
                    for (int k = 0; k < kx; k++)
                        acc += (long long)get(s, t->depth, xi[dx * kx + k] * cn + c) * xwi[dx * kx + k];
                    long long v = imgpu_rsz_pil_round(acc);
                    if (t->depth == 8)
                        v = v < 0 ? 0 : v > 255 ? 255 : v;
                    ((int32_t *)j->h)[(size_t)r * W + dx * cn + c] = (int32_t)v;
                } else if (t->hfloat) {
                    float acc = 0.f;
                    for (int k = 0; k < kx; k++) {
                        const float p = (float)get(s, t->depth, xi[dx * kx + k] * cn + c) * xwf[dx * kx + k];
                        acc = acc + p;
                    }
                    ((float *)j->h)[(size_t)r * W + dx * cn + c] = acc;
                } else {
                    int32_t acc = 0;
                    for (int k = 0; k < kx; k++)
                        acc += (int32_t)get(s, t->depth, xi[dx * kx + k] * cn + c) * xwi[dx * kx + k];
                    ((int32_t *)j->h)[(size_t)r * W + dx * cn + c] = acc;
                }
            }
    }
}

/* One output sample of the vertical pass (kernels/resize.cu: the same function). */
static uint32_t v_sample(const imgpu_resize_tab *t, const void *h, int dy, int dx, int x)
{
    const int ky = t->ky, W = t->dw * t->cn;
    const int32_t *yc = imgpu_rsz_i(t, t->o_yc) + (size_t)dy * ky, *ywi = imgpu_rsz_i(t, t->o_ywi) + (size_t)dy * ky;
    const float *ywf = imgpu_rsz_f(t, t->o_ywf) + (size_t)dy * ky;
    const long maxv = t->depth == 16 ? 65535 : 255;
    const int32_t *hi = h;
    const float *hf = h;
    switch (t->vmode) {
    case IMGPU_RSZ_V_FIX:
        if (x < t->vec_end && t->vfix_kind == IMGPU_RSZ_VEC_LINEAR) {
            const int32_t a = sat16(hi[(size_t)yc[0] * W + x] >> 4), b = sat16(hi[(size_t)yc[1] * W + x] >> 4);
            const int32_t v = sat16(((a * (int32_t)(int16_t)ywi[0]) >> 16) + ((b * (int32_t)(int16_t)ywi[1]) >> 16));
            return sat((v + 2) >> 2, 255);
        }
        if (x < t->vec_end && t->vfix_kind == IMGPU_RSZ_VEC_CUBIC) {
            const float sc = 1.f / (2048 * 2048);
            float b[4], r[4];
            for (int k = 0; k < 4; k++) {
                b[k] = (float)ywi[k] * sc;
                r[k] = (float)hi[(size_t)yc[k] * W + x];
            }
            float f = r[3] * b[3];
            f = r[2] * b[2] + f;
            f = r[1] * b[1] + f;
            f = r[0] * b[0] + f;
            return sat(lrintf(f), 255);
        } else {
            /* in 32 bits, wrapping as OpenCV's int does (lanczos weights of a tiny fraction
             * can be huge: OpenCV's own formula), without C's undefined overflow */
            uint32_t acc = 0;
            for (int k = 0; k < ky; k++)
                acc += (uint32_t)hi[(size_t)yc[k] * W + x] * (uint32_t)ywi[k];
            acc += 1u << 21;
            return sat(imgpu__asr22(acc), 255);
        }
    case IMGPU_RSZ_V_FLOAT: {
        float acc = 0.f;
        for (int k = 0; k < ky; k++) {
            const float p = ywf[k] * hf[(size_t)yc[k] * W + x];
            acc = acc + p;
        }
        return sat(lrintf(acc), maxv);
    }
    case IMGPU_RSZ_V_PIL: {
        long long acc = 0;
        for (int k = 0; k < ky; k++)
            acc += (long long)hi[(size_t)yc[k] * W + x] * ywi[k];
        return sat((long)imgpu_rsz_pil_round(acc), maxv);
    }
    default: { /* V_BOX */
        int32_t sum = 0, cy = 0, cx = 0;
        for (int k = 0; k < ky; k++) {
            sum += hi[(size_t)yc[k] * W + x] * ywi[k];
            cy += ywi[k];
        }
        const int32_t *xwi = imgpu_rsz_i(t, t->o_xwi) + (size_t)dx * t->kx;
        for (int k = 0; k < t->kx; k++)
            cx += xwi[k];
        const int32_t count = cx * cy;
        if (count == t->box_area) {
            if (t->box_round2)
                return sat((sum + 2) >> 2, maxv);
            return sat(lrintf((float)sum * (1.f / (float)t->box_area)), maxv);
        }
        return sat(lrintf((float)sum / (float)count), maxv);
    }
    }
}

/* The colour of a pixel with alpha, premultiplied (the rule above); returns 0 to keep the
 * straight value. */
static int alpha_pixel(const imgpu_resize_tab *t, const imgpu_image *in, int dx, int dy, uint32_t *col)
{
    const int cn = t->cn, ac = cn - 1, kx = t->kx, ky = t->ky, depth = t->depth;
    const int32_t *xi = imgpu_rsz_i(t, t->o_xi) + (size_t)dx * kx, *yi = imgpu_rsz_i(t, t->o_yi) + (size_t)dy * ky;
    const int fix = t->vmode == IMGPU_RSZ_V_FIX;
    const float *xwf = imgpu_rsz_f(t, t->o_xwf) + (size_t)dx * kx, *ywf = imgpu_rsz_f(t, t->o_ywf) + (size_t)dy * ky;
    const int32_t *xwi = imgpu_rsz_i(t, t->o_xwi) + (size_t)dx * kx, *ywi = imgpu_rsz_i(t, t->o_ywi) + (size_t)dy * ky;
    const float maxv = depth == 16 ? 65535.f : 255.f;
    float A = 0.f, M[3] = {0.f, 0.f, 0.f};
    int first = -1, same = 1;
    for (int r = 0; r < ky; r++) {
        const float wy = fix ? (float)ywi[r] / 2048.f : ywf[r];
        const unsigned char *row = in->data + (size_t)yi[r] * in->stride;
        float ra = 0.f, rm[3] = {0.f, 0.f, 0.f};
        for (int k = 0; k < kx; k++) {
            const float wx = fix ? (float)xwi[k] / 2048.f : xwf[k];
            const int base = xi[k] * cn;
            const uint32_t a = get(row, depth, base + ac);
            if (wx != 0.f && wy != 0.f) {
                if (first < 0)
                    first = (int)a;
                else if ((int)a != first)
                    same = 0;
            }
            const float af = (float)a, pa = wx * af;
            ra = ra + pa;
            for (int c = 0; c < ac; c++) {
                const float m = imgpu__premul((float)get(row, depth, base + c), af);
                const float pm = wx * m;
                rm[c] = rm[c] + pm;
            }
        }
        const float qa = wy * ra;
        A = A + qa;
        for (int c = 0; c < ac; c++) {
            const float qm = wy * rm[c];
            M[c] = M[c] + qm;
        }
    }
    if (same || !(A > 0.f))
        return 0;
    for (int c = 0; c < ac; c++)
        col[c] = (uint32_t)floorf(imgpu__unpremul(M[c], A, maxv) + 0.5f);
    return 1;
}

static void v_rows(void *ctx, int part, int y0, int y1)
{
    (void)part;
    const job *j = ctx;
    const imgpu_resize_tab *t = j->t;
    const int cn = t->cn;
    for (int y = y0; y < y1; y++) {
        unsigned char *d = j->out->data + (size_t)y * j->out->stride;
        for (int dx = 0; dx < t->dw; dx++) {
            for (int c = 0; c < cn; c++)
                put(d, t->depth, dx * cn + c, v_sample(t, j->h, y, dx, dx * cn + c));
            uint32_t col[3];
            if (t->alpha_mix && alpha_pixel(t, j->in, dx, y, col))
                for (int c = 0; c < cn - 1; c++)
                    put(d, t->depth, dx * cn + c, col[c]);
        }
    }
}

static imgpu_image *imgpu_cpu_resize(const imgpu_image *in, const imgpu_resize_params *p)
{
    imgpu_resize_tab t;
    if (imgpu_resize_tab_build(in->width, in->height, in->channels, in->depth, p, &t) < 0)
        return NULL;
    if (t.method == IMGPU_RSZ_COPY)
        return imgpu__cpu_image_copy(in);
    imgpu_image *out = imgpu_image_new_unset(t.dw, t.dh, in->channels, in->depth);
    if (!out) {
        imgpu_resize_tab_free(&t);
        return NULL;
    }
    job j = {&t, in, out, NULL};
    const size_t W = (size_t)t.dw * t.cn;
    if (t.method == IMGPU_RSZ_NEAREST) {
        imgpu__cpu_parallel_rows(t.dh, imgpu__cpu_parts(t.dh, W, 0), nearest_rows, &j);
    } else {
        j.h = malloc((size_t)t.nh * W * 4 + 4);
        if (!j.h) {
            imgpu_resize_tab_free(&t);
            imgpu_image_free(out);
            imgpu_error("out of memory for the resize (%dx%d to %dx%d)", in->width, in->height, t.dw, t.dh);
            return NULL;
        }
        imgpu__cpu_parallel_rows(t.nh, imgpu__cpu_parts(t.nh, W * t.kx, 0), h_rows, &j);
        imgpu__cpu_parallel_rows(t.dh, imgpu__cpu_parts(t.dh, W * t.ky * (t.alpha_mix ? t.kx : 1), 0), v_rows, &j);
        free(j.h);
    }
    imgpu_resize_tab_free(&t);
    return out;
}

static imgpu_image *run(const imgpu_image *in, const imgpu_op *op) { return imgpu_cpu_resize(in, &op->u.resize); }

/* The run entry (ops_table.c). */
const imgpu_cpu_op imgpu__cpu_op_resize = {IMGPU_OP_RESIZE, run};

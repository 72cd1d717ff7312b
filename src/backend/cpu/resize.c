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
 *
 * Two implementations of these rules, bit for bit equal: the per-sample code first below
 * (h_rows, v_sample: the reference, obviously the rules) and the row engine after it (the
 * default; its comment says how it stays equal). */
#include "cpu.h"
#include "error.h"
#include "image.h"
#include "op/resize_tab.h"
#include "parallel.h"
#include "premul.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
/* no-trapping-math: no value changes (imgpu reads no floating-point exception flags); it lets
 * GCC turn the float clamps of the row engine into branch-free vector code (clang's default) */
#pragma GCC optimize("fp-contract=off", "no-trapping-math")
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

/* Tests only (not thread-safe: call it between ops): 0 the default, 1 the per-sample path, 2
 * the row engine or an error where it cannot run (so a test knows which one it compared), 3
 * as 2 without the AVX2 build of the row engine. */
static int s_mode;
void imgpu__cpu_resize_mode(int mode);
void imgpu__cpu_resize_mode(int mode) { s_mode = mode; }

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
        switch (s_mode == 1 ? 0 : px) { /* a constant size: one load and store a pixel */
#define NN(n)                                                                                                \
    case n:                                                                                                  \
        for (int x = 0; x < t->dw; x++)                                                                      \
            memcpy(d + (size_t)x * (n), s + (size_t)xi[x] * (n), n);                                         \
        break;
            NN(1) NN(2) NN(3) NN(4) NN(6) NN(8)
#undef NN
        default:
            for (int x = 0; x < t->dw; x++)
                memcpy(d + x * px, s + (size_t)xi[x] * px, px);
        }
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
    /* first, with integer compares only, whether the taps that weigh share one alpha (every
     * pixel of an opaque image): then the straight value stands, and the float sums below,
     * which would be discarded, are skipped */
    int first = -1, same = 1;
    for (int r = 0; r < ky && same; r++) {
        const float wy = fix ? (float)ywi[r] / 2048.f : ywf[r];
        const unsigned char *row = in->data + (size_t)yi[r] * in->stride;
        for (int k = 0; k < kx && wy != 0.f; k++) {
            const float wx = fix ? (float)xwi[k] / 2048.f : xwf[k];
            if (wx == 0.f)
                continue;
            const int a = (int)get(row, depth, xi[k] * cn + ac);
            if (first < 0)
                first = a;
            else if (a != first)
                same = 0;
        }
    }
    if (same)
        return 0;
    float A = 0.f, M[3] = {0.f, 0.f, 0.f};
    for (int r = 0; r < ky; r++) {
        const float wy = fix ? (float)ywi[r] / 2048.f : ywf[r];
        const unsigned char *row = in->data + (size_t)yi[r] * in->stride;
        float ra = 0.f, rm[3] = {0.f, 0.f, 0.f};
        for (int k = 0; k < kx; k++) {
            const float wx = fix ? (float)xwi[k] / 2048.f : xwf[k];
            const int base = xi[k] * cn;
            const uint32_t a = get(row, depth, base + ac);
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
    if (!(A > 0.f))
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

/* ---- the row engine (the default path) --------------------------------------------------------
 * The same arithmetic as h_rows / v_sample above, sample for sample, organised as OpenCV
 * organises it: each part of the output rows keeps a ring of ky horizontal-pass rows (source
 * row r in slot r % ky: a row's taps are at most ky consecutive source rows, so they never
 * share a slot), computes a source row once when a tap first needs it, and runs the vertical
 * pass a whole row at a time. The loops are specialised for 1..4 channels and 2 or 4 taps
 * (the compiler unrolls them), read consecutive taps from one offset where the tables allow
 * it, and the vertical loops have no branch per sample, so the compiler vectorises them.
 * Area and bilinear by whole factors (V_BOX) sum the box's rows first (box_row), and 8-bit
 * bilinear keeps its rows as OpenCV's vector code reduces them (H_LIN16).
 * Exactness: integer sums are the same integers (the int32 Pillow sums and the int16 bilinear
 * steps are used only where a bound computed from the weights shows that nothing overflows or
 * saturates); float sums add the same products in the same order; a tap of weight 0 adds
 * exactly 0 whichever pixel it reads; rounding half to even is round_even_sat below.
 * imgpu__cpu_resize_mode(1) runs the per-sample code above instead (tests/unit/
 * test_cpu_resize.c compares the two, and the AVX2 build with the plain one). */

#define RSZ_INLINE static inline __attribute__((always_inline))

/* The row engine is compiled twice, the second time for AVX2 (fast_rows_avx2, below) */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RSZ_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define RSZ_SANITIZED 1
#endif
/* (not in sanitizer builds: the plain build has the same loops, and the second copy doubles
 * their compile time; valgrind's runs of the release build check the AVX2 one) */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(RSZ_SANITIZED)
#define RSZ_HAVE_AVX2 1
#endif
/* 1: the AVX2 copies run (the CPU has AVX2; test mode 3 asks for the plain ones) */
static int use_avx2(void)
{
#ifdef RSZ_HAVE_AVX2
    return s_mode != 3 && __builtin_cpu_supports("avx2");
#else
    return 0;
#endif
}

/* H_LIN16: H_INT's sums stored as OpenCV's bilinear vector code first reduces them,
 * sat16(h >> 4), as int16 (v_row's bilinear formula then runs in 16-bit lanes) */
enum { H_INT = 0, H_FLOAT, H_PIL32, H_PIL64, H_LIN16 };

typedef struct fast {
    const imgpu_resize_tab *t;
    const imgpu_image *in;
    imgpu_image *out;
    int W;            /* samples of an output row: dw * cn */
    int hmode;        /* H_* */
    int vpil32;       /* V_PIL at 8 bits: the vertical sums fit int32 */
    int lin16_nosat;  /* H_LIN16: every column's weights are >= 0 and sum to <= 2048, so
                       * h >> 4 <= 255 * 2048 / 16 < 32767 (sat16 is the identity) */
    int xl, xr;       /* output columns [xl, xr) read their taps from xo[dx] + k * cn */
    int dfull;        /* V_BOX: columns [0, dfull) are whole boxes */
    int box;          /* V_BOX: rows summed first (box_row), the ring holds one source-wide row */
    int32_t *xo;      /* [dw] the first tap's sample index */
    int32_t *xs;      /* [dw * kx] each tap's sample index (xi * cn) */
    int32_t *cx;      /* [dw] V_BOX: each column's taps of weight 1 */
    int32_t *ps, *pw; /* H_LIN16 at 2 taps (h_pairs), [W] for the samples of [xl, xr): each
                       * one's first tap (xo[dx] + c), and its two weights (pw[2 x], pw[2 x + 1]) */
    void (*pairs)(const struct fast *, const uint8_t *, int16_t *, int32_t *); /* h_pairs' copy */
    size_t part_words; /* per part: ky ring rows + 1 accumulator row of W words (+ sw * cn
                        * words: h_pairs' pair row) */
    int32_t *ring;     /* parts * part_words */
    int *tag;          /* parts * ky: the source row in each slot, -1: none */
    const int32_t **rp; /* parts * ky: each tap's ring row */
} fast;

/* rint to even of v, then clamped to 0..maxv: exact for |v| < 2^22, and v is clamped to
 * [-1, maxv + 1] first (which rounds and clamps to the same value), so it is exact for any
 * finite v. The same value as sat(lrintf(v), maxv) in the default rounding mode. */
RSZ_INLINE int32_t round_even_sat(float v, float maxv)
{
    v = v < -1.f ? -1.f : v;
    v = v > maxv + 1.f ? maxv + 1.f : v;
    const float magic = 12582912.f; /* 1.5 * 2^23: v + magic has no fraction bits left */
    int32_t r = (int32_t)((v + magic) - magic);
    r = r < 0 ? 0 : r;
    return r > (int32_t)maxv ? (int32_t)maxv : r;
}
RSZ_INLINE int32_t clamp_i32(int32_t v, int32_t hi) { return v < 0 ? 0 : v > hi ? hi : v; }

/* One source row through the horizontal pass (h_rows' arithmetic); kxc: the taps when
 * constant (0: t->kx). */
RSZ_INLINE void h_span_k(const fast *f, const unsigned char *srow, void *hout, const int hmode, const int d16,
                         const int cn, const int kxc, const int d0, const int d1, const int reg)
{
    const imgpu_resize_tab *t = f->t;
    const int kx = kxc ? kxc : t->kx;
    const uint8_t *restrict s8 = srow;
    const uint16_t *restrict s16 = (const uint16_t *)(const void *)srow;
    const int32_t *restrict wi = imgpu_rsz_i(t, t->o_xwi);
    const float *restrict wf = imgpu_rsz_f(t, t->o_xwf);
    const int32_t *restrict xs = f->xs, *restrict xo = f->xo;
    int32_t *restrict hi = hout;
    float *restrict hf = hout;
    {
        for (int dx = d0; dx < d1; dx++) {
            const int32_t *tw = wi + (size_t)dx * kx, *ts = xs + (size_t)dx * kx;
            const float *tf = wf + (size_t)dx * kx;
            /* regular: the taps are p[k * cn + c] from the first one's sample */
            const uint8_t *p8 = s8 + xo[dx];
            const uint16_t *p16 = s16 + xo[dx];
            int32_t *ho = hi + (size_t)dx * cn;
            float *fo = hf + (size_t)dx * cn;
#define SMP(k) ((int32_t)(d16 ? (reg ? p16[(k) * cn + c] : s16[ts[k] + c]) : (reg ? p8[(k) * cn + c] : s8[ts[k] + c])))
            /* taps outer, channels inner: each channel's sum still adds its taps in order */
            if (hmode == H_INT || hmode == H_PIL32 || hmode == H_LIN16) {
                int32_t acc[4];
                for (int c = 0; c < cn; c++)
                    acc[c] = hmode == H_PIL32 ? 1 << (IMGPU_RSZ_PIL_BITS - 1) : 0;
                for (int k = 0; k < kx; k++) {
                    const int32_t w = tw[k];
                    for (int c = 0; c < cn; c++)
                        acc[c] += SMP(k) * w;
                }
                if (hmode == H_LIN16) /* sat16 changes nothing where lin16_nosat (fast_setup) */
                    for (int c = 0; c < cn; c++)
                        ((int16_t *)(void *)hout)[(size_t)dx * cn + c] =
                            f->lin16_nosat ? (int16_t)(acc[c] >> 4) : sat16(acc[c] >> 4);
                else /* H_PIL32: 8 bits, the sums bounded (fast_setup) */
                    for (int c = 0; c < cn; c++)
                        ho[c] = hmode == H_INT ? acc[c] : acc[c] < 0 ? 0 : clamp_i32(acc[c] >> IMGPU_RSZ_PIL_BITS, 255);
            } else if (hmode == H_FLOAT) {
                float acc[4];
                for (int c = 0; c < cn; c++)
                    acc[c] = 0.f;
                for (int k = 0; k < kx; k++) {
                    const float w = tf[k];
                    for (int c = 0; c < cn; c++) {
                        const float p = (float)SMP(k) * w;
                        acc[c] = acc[c] + p;
                    }
                }
                for (int c = 0; c < cn; c++)
                    fo[c] = acc[c];
            } else {
                for (int c = 0; c < cn; c++) {
                    long long acc = 0;
                    for (int k = 0; k < kx; k++)
                        acc += (long long)SMP(k) * tw[k];
                    long long v = imgpu_rsz_pil_round(acc);
                    if (!d16)
                        v = v < 0 ? 0 : v > 255 ? 255 : v;
                    ho[c] = (int32_t)v;
                }
            }
#undef SMP
        }
    }
}

/* H_LIN16's regular columns [xl, xr) (2 taps, 8 bits) a sample at a time rather than a
 * column at a time: each source sample is first paired with the one a pixel to its right,
 * pr[i] = s[i] | s[i + cn] << 16, so that a sample's two taps are one 32-bit load from a
 * per-sample offset (ps), which the compiler vectorises (a gather with AVX2; a byte gather
 * it cannot). Then the same int32 sum S0 w0 + S1 w1 as h_span_k's, and the same >> 4. A
 * regular column's second tap is in the image (fast_setup), so the last pixel's pairs, whose
 * upper half is 0, are read only as a first tap. */
RSZ_INLINE void h_pairs_body(const fast *f, const uint8_t *restrict s8, int16_t *restrict ho, int32_t *restrict pr)
{
    const int cn = f->t->cn, n = f->t->sw * cn, x0 = f->xl * cn, x1 = f->xr * cn;
    for (int i = 0; i < n - cn; i++)
        pr[i] = (int32_t)s8[i] | (int32_t)s8[i + cn] << 16;
    for (int i = n - cn > 0 ? n - cn : 0; i < n; i++)
        pr[i] = s8[i];
    const int32_t *restrict ps = f->ps, *restrict pw = f->pw;
    for (int x = x0; x < x1; x++) {
        const int32_t v = pr[ps[x]], acc = (v & 0xffff) * pw[2 * x] + (v >> 16) * pw[2 * x + 1];
        ho[x] = f->lin16_nosat ? (int16_t)(acc >> 4) : sat16(acc >> 4);
    }
}
/* Out of line (through fast.pairs), plain and AVX2: inlined into each specialisation of the
 * row engine, it slowed bicubic's loops by 15 % (code layout). */
static void h_pairs(const fast *f, const uint8_t *s8, int16_t *ho, int32_t *pr) { h_pairs_body(f, s8, ho, pr); }
#ifdef RSZ_HAVE_AVX2
__attribute__((target("avx2"))) static void h_pairs_avx2(const fast *f, const uint8_t *s8, int16_t *ho, int32_t *pr)
{
    h_pairs_body(f, s8, ho, pr);
}
#endif

/* One source row: the columns before xl and from xr through their indices, [xl, xr) through
 * one offset each (separate loops, so that neither tests which it is per column); pr: the
 * part's scratch row for h_pairs. */
RSZ_INLINE void h_row_k(const fast *f, const unsigned char *srow, void *hout, int32_t *pr, const int hmode,
                        const int d16, const int cn, const int kxc)
{
    h_span_k(f, srow, hout, hmode, d16, cn, kxc, 0, f->xl, 0);
    if (hmode == H_LIN16 && kxc == 2 && f->ps)
        f->pairs(f, srow, hout, pr);
    else
        h_span_k(f, srow, hout, hmode, d16, cn, kxc, f->xl, f->xr, 1);
    h_span_k(f, srow, hout, hmode, d16, cn, kxc, f->xr, f->t->dw, 0);
}

/* The specialisations (each an inlined copy of h_row_k, twice with the AVX2 build): those the
 * common cases run, and one generic copy for the rest: 1..4 channels; 2 and 4 taps at 8 bits
 * (bilinear, bicubic; area's tables, lanczos and 16 bits take the generic tap loop). */
#define H_KX(hm, d, cn)                                                                                      \
    switch (f->t->kx) {                                                                                      \
    case 2: h_row_k(f, s, h, pr, hm, d, cn, 2); return;                                                      \
    case 4: h_row_k(f, s, h, pr, hm, d, cn, 4); return;                                                      \
    default: h_row_k(f, s, h, pr, hm, d, cn, 0); return;                                                     \
    }
#define H_KX2(hm, d, cn) h_row_k(f, s, h, pr, hm, d, cn, 2); return;
#define H_KXANY(hm, d, cn) h_row_k(f, s, h, pr, hm, d, cn, 0); return;
#define H_CN(hm, d, KX)                                                                                      \
    switch (f->t->cn) {                                                                                      \
    case 1: KX(hm, d, 1)                                                                                     \
    case 2: KX(hm, d, 2)                                                                                     \
    case 3: KX(hm, d, 3)                                                                                     \
    default: KX(hm, d, 4)                                                                                    \
    }

RSZ_INLINE void h_row(const fast *f, const unsigned char *s, void *h, int32_t *pr)
{
    const int d16 = f->t->depth == 16;
    switch (f->hmode) {
    case H_INT: /* bilinear (beyond H_LIN16's bound), bicubic, lanczos: 8 bits */
        if (d16)
            break;
        H_CN(H_INT, 0, H_KX)
    case H_FLOAT: /* 16 bits; area's tables at 8 */
        if (d16) {
            H_CN(H_FLOAT, 1, H_KXANY)
        }
        H_CN(H_FLOAT, 0, H_KXANY)
    case H_PIL32: H_CN(H_PIL32, 0, H_KXANY)
    case H_LIN16: H_CN(H_LIN16, 0, H_KX2)
    default: break;
    }
    /* H_PIL64 (and anything else): generic */
    if (d16)
        h_row_k(f, s, h, pr, f->hmode == H_INT ? H_INT : H_PIL64, 1, f->t->cn, 0);
    else
        h_row_k(f, s, h, pr, H_PIL64, 0, f->t->cn, 0);
}
#undef H_KX
#undef H_KX2
#undef H_KXANY
#undef H_CN

/* acc[x] += h[x] * w over a row: separate functions so that restrict on their parameters tells
 * the compiler that the ring row and the accumulator do not overlap (it vectorises them). */
RSZ_INLINE void axpy_u32(uint32_t *restrict acc, const int32_t *restrict h, uint32_t w, int x0, int n)
{
    for (int x = x0; x < n; x++)
        acc[x] += (uint32_t)h[x] * w;
}
RSZ_INLINE void axpy_i32(int32_t *restrict acc, const int32_t *restrict h, int32_t w, int n)
{
    for (int x = 0; x < n; x++)
        acc[x] += h[x] * w;
}
RSZ_INLINE void axpy_f32(float *restrict acc, const float *restrict h, float w, int n)
{
    for (int x = 0; x < n; x++) {
        const float p = w * h[x];
        acc[x] = acc[x] + p;
    }
}

/* The vertical pass of output row y over the ring rows rp[k] (v_sample's arithmetic for
 * every x of the row); acc: a scratch row of W words. */
RSZ_INLINE void v_row(const fast *f, int y, const int32_t *const *rp, int32_t *restrict acc, unsigned char *drow)
{
    const imgpu_resize_tab *t = f->t;
    const int ky = t->ky, W = f->W, cn = t->cn;
    const int32_t *ywi = imgpu_rsz_i(t, t->o_ywi) + (size_t)y * ky;
    const float *ywf = imgpu_rsz_f(t, t->o_ywf) + (size_t)y * ky;
    uint8_t *restrict d8 = drow;
    uint16_t *restrict d16 = (uint16_t *)(void *)drow;
    const int is16 = t->depth == 16;
    const float maxf = is16 ? 65535.f : 255.f;
    switch (t->vmode) {
    case IMGPU_RSZ_V_FIX: { /* 8 bits */
        int x0 = 0;
        if (f->hmode == H_LIN16) { /* the bilinear formula, every product within int16 (fast_setup) */
            const int16_t *restrict h0 = (const int16_t *)(const void *)rp[0];
            const int16_t *restrict h1 = (const int16_t *)(const void *)rp[1];
            const int16_t b0 = (int16_t)ywi[0], b1 = (int16_t)ywi[1];
            /* written in int16 steps (|m0 + m1 + 2| <= 2^14 + 2) and the clamp as two int16
             * statements: GCC then keeps the lanes 16-bit (mulhi, add, shift, min, max, pack)
             * rather than widening the + 2 and the clamp to int32 (5x slower here) */
            for (int x = 0; x < W; x++) {
                const int16_t m0 = (int16_t)((h0[x] * b0) >> 16), m1 = (int16_t)((h1[x] * b1) >> 16);
                int16_t r = (int16_t)((int16_t)(m0 + m1 + 2) >> 2);
                r = r > 255 ? 255 : r;
                r = r < 0 ? 0 : r;
                d8[x] = (uint8_t)r;
            }
            return;
        }
        if (t->vfix_kind == IMGPU_RSZ_VEC_LINEAR) {
            const int32_t *restrict h0 = rp[0], *restrict h1 = rp[1];
            const int32_t b0 = (int16_t)ywi[0], b1 = (int16_t)ywi[1];
            const int n = t->vec_end;
            for (int x = 0; x < n; x++) {
                const int32_t a = sat16(h0[x] >> 4), b = sat16(h1[x] >> 4);
                const int32_t v = sat16(((a * b0) >> 16) + ((b * b1) >> 16));
                d8[x] = (uint8_t)clamp_i32((v + 2) >> 2, 255);
            }
            x0 = n;
        } else if (t->vfix_kind == IMGPU_RSZ_VEC_CUBIC) {
            const int32_t *restrict h0 = rp[0], *restrict h1 = rp[1], *restrict h2 = rp[2], *restrict h3 = rp[3];
            const float sc = 1.f / (2048 * 2048);
            const float b0 = (float)ywi[0] * sc, b1 = (float)ywi[1] * sc, b2 = (float)ywi[2] * sc,
                        b3 = (float)ywi[3] * sc;
            const int n = t->vec_end;
            for (int x = 0; x < n; x++) {
                float v = (float)h3[x] * b3;
                const float p2 = (float)h2[x] * b2;
                v = p2 + v;
                const float p1 = (float)h1[x] * b1;
                v = p1 + v;
                const float p0 = (float)h0[x] * b0;
                v = p0 + v;
                d8[x] = (uint8_t)round_even_sat(v, 255.f);
            }
            x0 = n;
        }
        if (x0 >= W)
            return;
        /* 32-bit sums wrapping as OpenCV's int does (v_sample), then an arithmetic shift */
        uint32_t *restrict u = (uint32_t *)acc;
        for (int x = x0; x < W; x++)
            u[x] = 1u << 21;
        for (int k = 0; k < ky; k++)
            axpy_u32(u, rp[k], (uint32_t)ywi[k], x0, W);
        for (int x = x0; x < W; x++) {
            /* (int32_t) of a uint32 is modulo 2^32 and >> of a negative int is arithmetic in
             * GCC and clang (documented implementation-defined behaviour): imgpu__asr22 */
            const int32_t v = (int32_t)u[x] >> 22;
            d8[x] = (uint8_t)clamp_i32(v, 255);
        }
        return;
    }
    case IMGPU_RSZ_V_FLOAT: {
        float *restrict a = (float *)(void *)acc;
        {
            const float *restrict h = (const float *)(const void *)rp[0];
            const float w = ywf[0];
            for (int x = 0; x < W; x++) {
                const float p = w * h[x];
                a[x] = 0.f + p;
            }
        }
        for (int k = 1; k < ky; k++)
            axpy_f32(a, (const float *)(const void *)rp[k], ywf[k], W);
        if (is16)
            for (int x = 0; x < W; x++)
                d16[x] = (uint16_t)round_even_sat(a[x], 65535.f);
        else
            for (int x = 0; x < W; x++)
                d8[x] = (uint8_t)round_even_sat(a[x], 255.f);
        return;
    }
    case IMGPU_RSZ_V_PIL: {
        if (f->vpil32) { /* 8 bits, the sums bounded (fast_setup) */
            for (int x = 0; x < W; x++)
                acc[x] = 1 << (IMGPU_RSZ_PIL_BITS - 1);
            for (int k = 0; k < ky; k++)
                axpy_i32(acc, rp[k], ywi[k], W);
            for (int x = 0; x < W; x++)
                d8[x] = (uint8_t)(acc[x] < 0 ? 0 : clamp_i32(acc[x] >> IMGPU_RSZ_PIL_BITS, 255));
            return;
        }
        const long maxv = is16 ? 65535 : 255;
        for (int x = 0; x < W; x++) {
            long long s = 0;
            for (int k = 0; k < ky; k++)
                s += (long long)rp[k][x] * ywi[k];
            const uint32_t v = sat((long)imgpu_rsz_pil_round(s), maxv);
            if (is16)
                d16[x] = (uint16_t)v;
            else
                d8[x] = (uint8_t)v;
        }
        return;
    }
    default: { /* V_BOX */
        int32_t cy = 0;
        for (int x = 0; x < W; x++)
            acc[x] = 0;
        for (int k = 0; k < ky; k++) {
            const int32_t *restrict h = rp[k];
            const int32_t w = ywi[k];
            cy += w;
            for (int x = 0; x < W; x++)
                acc[x] += h[x] * w;
        }
        int x0 = 0;
        if (cy * t->kx == t->box_area) { /* whole boxes up to dfull */
            const int n = f->dfull * cn;
            if (t->box_round2) {
                if (is16)
                    for (int x = 0; x < n; x++)
                        d16[x] = (uint16_t)clamp_i32((acc[x] + 2) >> 2, 65535);
                else
                    for (int x = 0; x < n; x++)
                        d8[x] = (uint8_t)clamp_i32((acc[x] + 2) >> 2, 255);
            } else {
                const float inv = 1.f / (float)t->box_area;
                if (is16)
                    for (int x = 0; x < n; x++)
                        d16[x] = (uint16_t)round_even_sat((float)acc[x] * inv, 65535.f);
                else
                    for (int x = 0; x < n; x++)
                        d8[x] = (uint8_t)round_even_sat((float)acc[x] * inv, 255.f);
            }
            x0 = n;
        }
        for (int x = x0; x < W; x++) { /* boxes cut by the border: v_sample's rule */
            const int32_t count = f->cx[x / cn] * cy;
            int32_t v;
            if (count == t->box_area)
                v = t->box_round2 ? clamp_i32((acc[x] + 2) >> 2, (int32_t)maxf)
                                  : round_even_sat((float)acc[x] * (1.f / (float)t->box_area), maxf);
            else
                v = round_even_sat((float)acc[x] / (float)count, maxf);
            if (is16)
                d16[x] = (uint16_t)v;
            else
                d8[x] = (uint8_t)v;
        }
        return;
    }
    }
}

/* box_row_k's second half: each column's kx sums of the summed rows (b: uint16 sums, else
 * a: int32), rounded as v_sample does; q: scratch of sw * cn bytes where b is used. */
RSZ_INLINE void box_cols(const fast *f, const uint16_t *restrict b, const int32_t *restrict a, int32_t cy,
                         unsigned char *drow, uint8_t *restrict q, const int d16, const int cn, const int kx,
                         const int a16)
{
    const imgpu_resize_tab *t = f->t;
    const int W = f->W;
#define A(i) (a16 ? (int32_t)b[i] : a[i])
    uint8_t *restrict o8 = drow;
    uint16_t *restrict o16 = (uint16_t *)(void *)drow;
    const int32_t maxv = d16 ? 65535 : 255;
    const int dfull = f->dfull;
    if (cy * kx == t->box_area) { /* whole boxes */
        if (t->box_round2 && a16 && cn == 3 && kx == 2) {
            /* RGB 2x2, the same sums in two vectorised steps (the loop below is a stride-6
             * gather of 3): first every sample's pair over the whole row, contiguous, q[i] =
             * (b[i] + b[i + 3] + 2) >> 2 (<= 255), then the boxes' samples picked from q four
             * pixels at a time (a fixed pattern, which GCC turns into byte shuffles) */
            const int m = (2 * dfull - 1) * 3; /* q is read at [0, m) */
            for (int i = 0; i < m; i++)
                q[i] = (uint8_t)((b[i] + b[i + 3] + 2) >> 2);
            int dx = 0;
            for (; dx + 4 <= dfull; dx += 4) {
                const uint8_t *p = q + 6 * dx;
                uint8_t *o = o8 + 3 * dx;
                o[0] = p[0], o[1] = p[1], o[2] = p[2], o[3] = p[6], o[4] = p[7], o[5] = p[8];
                o[6] = p[12], o[7] = p[13], o[8] = p[14], o[9] = p[18], o[10] = p[19], o[11] = p[20];
            }
            for (; dx < dfull; dx++)
                for (int c = 0; c < 3; c++)
                    o8[dx * 3 + c] = q[dx * 6 + c];
        } else if (t->box_round2) { /* 2x2: (sum + 2) >> 2 of 4 samples needs no clamp */
            for (int dx = 0; dx < dfull; dx++)
                for (int c = 0; c < cn; c++) {
                    int32_t sum = 0;
                    for (int k = 0; k < kx; k++)
                        sum += A((dx * kx + k) * cn + c);
                    const int32_t v = (sum + 2) >> 2;
                    if (d16)
                        o16[dx * cn + c] = (uint16_t)v;
                    else
                        o8[dx * cn + c] = (uint8_t)v;
                }
        } else {
            const float inv = 1.f / (float)t->box_area;
            for (int dx = 0; dx < dfull; dx++)
                for (int c = 0; c < cn; c++) {
                    int32_t sum = 0;
                    for (int k = 0; k < kx; k++)
                        sum += A((dx * kx + k) * cn + c);
                    const int32_t v = round_even_sat((float)sum * inv, (float)maxv);
                    if (d16)
                        o16[dx * cn + c] = (uint16_t)v;
                    else
                        o8[dx * cn + c] = (uint8_t)v;
                }
        }
    }
    const int32_t *wi = imgpu_rsz_i(t, t->o_xwi);
    for (int x = cy * kx == t->box_area ? dfull * cn : 0; x < W; x++) { /* v_sample's rule */
        const int dx = x / cn, c = x % cn;
        int32_t sum = 0;
        for (int k = 0; k < kx; k++)
            sum += A(f->xs[(size_t)dx * kx + k] + c) * wi[(size_t)dx * kx + k];
        const int32_t count = f->cx[dx] * cy;
        int32_t v;
        if (count == t->box_area)
            v = t->box_round2 ? clamp_i32((sum + 2) >> 2, maxv)
                              : round_even_sat((float)sum * (1.f / (float)t->box_area), (float)maxv);
        else
            v = round_even_sat((float)sum / (float)count, (float)maxv);
        if (d16)
            o16[x] = (uint16_t)v;
        else
            o8[x] = (uint8_t)v;
    }
#undef A
}

/* V_BOX (INTER_AREA by whole factors) in the other order: the box's source rows summed first
 * (whole rows, contiguous), then each column's kx sums. The same integer sum of the same
 * samples (box weights are 0 or 1; the table builder bounds the sum within int32), so the same
 * result as h_rows + v_sample, with the wide loop vectorised. kxc: the taps when constant. */
RSZ_INLINE void box_row_k(const fast *f, int y, int32_t *restrict a, unsigned char *drow, const int d16, const int cn,
                          const int kxc)
{
    const imgpu_resize_tab *t = f->t;
    const int kx = kxc ? kxc : t->kx, ky = t->ky, n = t->sw * cn;
    const int32_t *yi = imgpu_rsz_i(t, t->o_yi) + (size_t)y * ky, *ywi = imgpu_rsz_i(t, t->o_ywi) + (size_t)y * ky;
    /* the rows of weight 1 (those past the image weigh 0); at 8 bits with at most 257 rows
     * the sums fit uint16 (a16), else int32 */
    const int a16 = !d16 && ky <= 257;
    uint16_t *restrict b = (uint16_t *)(void *)a;
    int32_t cy = 0;
    const unsigned char *prev = NULL;
    for (int k = 0; k < ky; k++) {
        if (!ywi[k])
            continue;
        const unsigned char *row = f->in->data + (size_t)yi[k] * f->in->stride;
        const uint8_t *restrict s8 = row, *restrict p8 = prev;
        const uint16_t *restrict s16 = (const uint16_t *)(const void *)row;
        cy++;
        if (cy == 1) { /* kept for the next row: the first two are summed in one pass */
            prev = row;
            continue;
        }
        if (cy == 2) {
            if (a16)
                for (int i = 0; i < n; i++)
                    b[i] = (uint16_t)(p8[i] + s8[i]);
            else if (d16) {
                const uint16_t *restrict p16 = (const uint16_t *)(const void *)prev;
                for (int i = 0; i < n; i++)
                    a[i] = (int32_t)p16[i] + s16[i];
            } else
                for (int i = 0; i < n; i++)
                    a[i] = (int32_t)p8[i] + s8[i];
        } else if (a16)
            for (int i = 0; i < n; i++)
                b[i] = (uint16_t)(b[i] + s8[i]);
        else if (d16)
            for (int i = 0; i < n; i++)
                a[i] += s16[i];
        else
            for (int i = 0; i < n; i++)
                a[i] += s8[i];
    }
    if (cy == 1) { /* one row */
        const uint8_t *restrict p8 = prev;
        const uint16_t *restrict p16 = (const uint16_t *)(const void *)prev;
        if (a16)
            for (int i = 0; i < n; i++)
                b[i] = p8[i];
        else if (d16)
            for (int i = 0; i < n; i++)
                a[i] = p16[i];
        else
            for (int i = 0; i < n; i++)
                a[i] = p8[i];
    }
    if (a16)
        box_cols(f, b, NULL, cy, drow, (uint8_t *)(void *)(b + n), d16, cn, kx, 1);
    else
        box_cols(f, NULL, a, cy, drow, NULL, d16, cn, kx, 0);
}

/* Whether every alpha of the source rows that output row y reads is one value (an opaque
 * image): then each pixel's taps, a subset of them, share it, and alpha_pixel would keep every
 * straight value. */
static int rows_one_alpha(const fast *f, int y)
{
    const imgpu_resize_tab *t = f->t;
    const int cn = t->cn, ac = cn - 1, n = t->sw;
    const int32_t *yi = imgpu_rsz_i(t, t->o_yi) + (size_t)y * t->ky;
    const uint32_t a0 = get(f->in->data + (size_t)yi[0] * f->in->stride, t->depth, ac);
    uint32_t diff = 0;
    for (int k = 0; k < t->ky && !diff; k++) {
        const unsigned char *row = f->in->data + (size_t)yi[k] * f->in->stride;
        const uint8_t *restrict s8 = row;
        const uint16_t *restrict s16 = (const uint16_t *)(const void *)row;
        if (t->depth == 16)
            for (int x = 0; x < n; x++)
                diff |= s16[(size_t)x * cn + ac] ^ a0;
        else
            for (int x = 0; x < n; x++)
                diff |= s8[(size_t)x * cn + ac] ^ a0;
    }
    return diff == 0;
}

/* Images with alpha: the premultiplied colour where the taps' alphas differ (alpha_pixel). */
static void alpha_row(const fast *f, int y, unsigned char *d)
{
    const imgpu_resize_tab *t = f->t;
    if (rows_one_alpha(f, y))
        return;
    for (int dx = 0; dx < t->dw; dx++) {
        uint32_t col[3];
        if (alpha_pixel(t, f->in, dx, y, col))
            for (int c = 0; c < t->cn - 1; c++)
                put(d, t->depth, dx * t->cn + c, col[c]);
    }
}

RSZ_INLINE void box_row(const fast *f, int y, int32_t *a, unsigned char *drow)
{
#define BOX_KX(d, cn)                                                                                        \
    if (f->t->kx == 2)                                                                                       \
        box_row_k(f, y, a, drow, d, cn, 2);                                                                  \
    else                                                                                                     \
        box_row_k(f, y, a, drow, d, cn, 0);                                                                  \
    return;
#define BOX_CN(d)                                                                                            \
    switch (f->t->cn) {                                                                                      \
    case 1: BOX_KX(d, 1)                                                                                     \
    case 2: BOX_KX(d, 2)                                                                                     \
    case 3: BOX_KX(d, 3)                                                                                     \
    default: BOX_KX(d, 4)                                                                                    \
    }
    if (f->t->depth == 16) {
        BOX_CN(1)
    } else {
        BOX_CN(0)
    }
#undef BOX_CN
#undef BOX_KX
}

RSZ_INLINE void fast_rows_body(void *ctx, int part, int y0, int y1)
{
    const fast *f = ctx;
    const imgpu_resize_tab *t = f->t;
    const int ky = t->ky, W = f->W;
    int32_t *ring = f->ring + (size_t)part * f->part_words, *acc = f->box ? ring : ring + (size_t)ky * W;
    int *tag = f->tag + (size_t)part * ky;
    const int32_t **rp = f->rp + (size_t)part * ky;
    for (int k = 0; k < ky; k++)
        tag[k] = -1;
    const int32_t *yi_all = imgpu_rsz_i(t, t->o_yi);
    for (int y = y0; y < y1; y++) {
        if (f->box) {
            unsigned char *d = f->out->data + (size_t)y * f->out->stride;
            box_row(f, y, ring, d);
            if (t->alpha_mix)
                alpha_row(f, y, d);
            continue;
        }
        const int32_t *yi = yi_all + (size_t)y * ky;
        for (int k = 0; k < ky; k++) {
            const int r = yi[k], slot = r % ky;
            int32_t *h = ring + (size_t)slot * W;
            if (tag[slot] != r) {
                h_row(f, f->in->data + (size_t)r * f->in->stride, h, ring + (size_t)(ky + 1) * W);
                tag[slot] = r;
            }
            rp[k] = h;
        }
        unsigned char *d = f->out->data + (size_t)y * f->out->stride;
        v_row(f, y, rp, acc, d);
        if (t->alpha_mix)
            alpha_row(f, y, d);
    }
}

static void fast_rows(void *ctx, int part, int y0, int y1) { fast_rows_body(ctx, part, y0, y1); }

/* The same C compiled for AVX2 as well, chosen at run time where the CPU has it: the
 * compiler's own vectorisation of the loops above with 8 lanes and 32-bit multiplies and
 * min/max (SSE2 has neither), no intrinsics. Integer lanes give the same integers, and float
 * lanes the same IEEE operations (AVX2 brings no fused multiply-add, and contraction is off). */
#ifdef RSZ_HAVE_AVX2
__attribute__((target("avx2"))) static void fast_rows_avx2(void *ctx, int part, int y0, int y1)
{
    fast_rows_body(ctx, part, y0, y1);
}
#endif

static imgpu__cpu_rows_fn fast_rows_fn(void)
{
#ifdef RSZ_HAVE_AVX2
    if (use_avx2())
        return fast_rows_avx2;
#endif
    return fast_rows;
}

/* The bound of a Pillow pass's partial sums: 2^21 + sum of w * s over s in 0..255 stays in
 * int32 for every output sample (then the int32 sums are the int64 ones). */
static int pil_fits32(const int32_t *w, int n, int k)
{
    for (int i = 0; i < n; i++) {
        long long pos = 1LL << (IMGPU_RSZ_PIL_BITS - 1), neg = pos;
        for (int j = 0; j < k; j++) {
            const long long v = (long long)w[(size_t)i * k + j] * 255;
            if (v > 0)
                pos += v;
            else
                neg += v;
        }
        if (pos > INT32_MAX || neg < INT32_MIN)
            return 0;
    }
    return 1;
}

static void fast_free(fast *f)
{
    free(f->xo);
    free(f->xs);
    free(f->cx);
    free(f->ps);
    free(f->pw);
    free(f->ring);
    free(f->tag);
    free((void *)f->rp);
}

/* The row engine's tables; 1: ready, 0: the tables do not have the shape it needs (the
 * per-sample path runs), -1: out of memory. */
static int fast_setup(fast *f, const imgpu_resize_tab *t, const imgpu_image *in, imgpu_image *out, int parts)
{
    memset(f, 0, sizeof *f);
    f->t = t, f->in = in, f->out = out;
    const int cn = t->cn, kx = t->kx, ky = t->ky, dw = t->dw, sw = t->sw;
    f->W = dw * cn;
    /* each output row's taps: at most ky consecutive source rows (the ring's rule) */
    const int32_t *yi = imgpu_rsz_i(t, t->o_yi);
    for (int y = 0; y < t->dh; y++) {
        int lo = yi[(size_t)y * ky], hi = lo;
        for (int k = 1; k < ky; k++) {
            const int r = yi[(size_t)y * ky + k];
            lo = r < lo ? r : lo;
            hi = r > hi ? r : hi;
        }
        if (hi - lo >= ky)
            return 0;
    }
    f->hmode = t->pil ? (t->depth == 8 && pil_fits32(imgpu_rsz_i(t, t->o_xwi), dw, kx) ? H_PIL32 : H_PIL64)
             : t->hfloat ? H_FLOAT : H_INT;
    f->vpil32 = t->pil && t->depth == 8 && pil_fits32(imgpu_rsz_i(t, t->o_ywi), t->dh, ky);
    /* bilinear at 8 bits: with |b| <= 2^14 (OpenCV's weights are at most 2048), |h * b >> 16|
     * <= 2^13 and the sum and the + 2 stay within int16, where sat16 changes nothing */
    if (f->hmode == H_INT && t->vmode == IMGPU_RSZ_V_FIX && t->vfix_kind == IMGPU_RSZ_VEC_LINEAR &&
        t->vec_end == f->W && ky == 2) {
        const int32_t *ywi = imgpu_rsz_i(t, t->o_ywi);
        int ok = 1;
        for (size_t i = 0; i < (size_t)t->dh * 2; i++)
            ok &= (int16_t)ywi[i] >= -16384 && (int16_t)ywi[i] <= 16384;
        if (ok) {
            f->hmode = H_LIN16;
            const int32_t *xw = imgpu_rsz_i(t, t->o_xwi);
            int nosat = 1;
            for (int dx = 0; dx < dw && nosat; dx++) {
                int32_t sum = 0;
                for (int k = 0; k < kx; k++) {
                    nosat &= xw[(size_t)dx * kx + k] >= 0;
                    sum += xw[(size_t)dx * kx + k];
                }
                nosat &= sum <= 2048;
            }
            f->lin16_nosat = nosat;
        }
    }
    f->xo = malloc((size_t)dw * sizeof *f->xo);
    f->xs = malloc((size_t)dw * kx * sizeof *f->xs);
    f->cx = malloc((size_t)dw * sizeof *f->cx);
    f->box = t->vmode == IMGPU_RSZ_V_BOX;
    const int pairs = f->hmode == H_LIN16 && kx == 2; /* h_pairs' tables and row */
    f->part_words = f->box ? (size_t)t->sw * cn : (size_t)(ky + 1) * f->W + (pairs ? (size_t)sw * cn : 0);
    f->ring = malloc((size_t)parts * f->part_words * sizeof(int32_t));
    f->tag = malloc((size_t)parts * ky * sizeof *f->tag);
    f->rp = malloc((size_t)parts * ky * sizeof *f->rp);
    if (!f->xo || !f->xs || !f->cx || !f->ring || !f->tag || !f->rp) {
        fast_free(f);
        return -1;
    }
    const int32_t *xi = imgpu_rsz_i(t, t->o_xi), *xwi = imgpu_rsz_i(t, t->o_xwi);
    const float *xwf = imgpu_rsz_f(t, t->o_xwf);
    /* a column is regular when tap k reads column xi[0] + k, or weighs 0 (it then adds 0
     * whatever it reads) and that column is in the image; [xl, xr) is what lies between the
     * irregular columns at either border (all of them through their indices if one is
     * irregular in between) */
    int lead = 0, trail = 0, inner_irr = 0;
    for (int dx = 0; dx < dw; dx++) {
        const size_t o = (size_t)dx * kx;
        const int b = xi[o];
        int reg = 1, cnt = 0;
        for (int k = 0; k < kx; k++) {
            f->xs[o + k] = xi[o + k] * cn;
            cnt += xwi[o + k];
            const int zero = f->hmode == H_FLOAT ? xwf[o + k] == 0.f : xwi[o + k] == 0;
            if (!(xi[o + k] == b + k || (zero && b + k < sw)))
                reg = 0;
        }
        f->xo[dx] = b * cn;
        f->cx[dx] = cnt;
        if (!reg) {
            if (lead == dx)
                lead++;
            else {
                        trail++;
            }
        } else if (trail > 0) {
            inner_irr = 1; /* an irregular run followed by a regular column */
            trail = 0;
        }
    }
    f->xl = lead, f->xr = dw - trail;
    if (inner_irr)
        f->xl = f->xr = 0;
    if (pairs && f->xr > f->xl) {
        f->ps = malloc((size_t)f->W * sizeof *f->ps);
        f->pw = malloc((size_t)f->W * 2 * sizeof *f->pw);
        if (!f->ps || !f->pw) {
            fast_free(f);
            return -1;
        }
        for (int dx = f->xl; dx < f->xr; dx++)
            for (int c = 0; c < cn; c++) {
                const int x = dx * cn + c;
                f->ps[x] = f->xo[dx] + c;
                f->pw[2 * x] = xwi[(size_t)dx * 2];
                f->pw[2 * x + 1] = xwi[(size_t)dx * 2 + 1];
            }
        f->pairs = h_pairs;
#ifdef RSZ_HAVE_AVX2
        if (use_avx2())
            f->pairs = h_pairs_avx2;
#endif
    }
    if (t->vmode == IMGPU_RSZ_V_BOX) {
        int n = 0;
        while (n < dw && f->cx[n] == kx)
            n++;
        f->dfull = n;
    }
    return 1;
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
        const int parts = imgpu__cpu_parts(t.dh, W * ((size_t)t.kx * (t.nh / t.dh + 1) + t.ky) * (t.alpha_mix ? t.kx : 1), 0);
        fast f;
        const int ok = s_mode == 1 ? 0 : fast_setup(&f, &t, in, out, parts);
        if (ok == 1) {
            imgpu__cpu_parallel_rows(t.dh, parts, fast_rows_fn(), &f);
            fast_free(&f);
            imgpu_resize_tab_free(&t);
            return out;
        }
        if (ok < 0) {
            imgpu_resize_tab_free(&t);
            imgpu_image_free(out);
            imgpu_error("out of memory for the resize (%dx%d to %dx%d)", in->width, in->height, t.dw, t.dh);
            return NULL;
        }
        if (s_mode >= 2) {
            imgpu_resize_tab_free(&t);
            imgpu_image_free(out);
            imgpu_error("resize: the row engine cannot run these tables (test mode)");
            return NULL;
        }
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

/* rotate.c — reference rotation of 8- and 16-bit images about their geometric centre, with
 * nearest, bilinear (modelling the GPU texture unit) and bicubic (Keys, a = -0.75) filters.
 * The output has the input's channels and depth. Everything below holds at both depths
 * except where "16 bits" says otherwise: the background is scaled by 257, bilinear sums in
 * integers, bicubic clamps to 65535.
 *
 * Geometry (continuous coordinates, y down, as seen on screen):
 *   - angle in degrees, counterclockwise positive on screen. It is first reduced to
 *     a in [0, 360) by fmod (+360 when negative) (imgpu_rotate_reduce_angle, op.c) — the same
 *     reduction imgpu_rotate_output_size uses — and cos/sin of a * pi / 180 are computed in double once per image and rounded to
 *     float: c, s (imgpu_rotate_trig, op.c).
 *   - pixel (i, j) covers [i, i+1) x [j, j+1); its centre is (i + 0.5, j + 0.5). The input's
 *     centre is (w/2, h/2); the output canvas W' x H' comes from imgpu_rotate_output_size
 *     (expand: the bounding box; crop: w x h) and its centre is (W'/2, H'/2).
 *   - output pixel (u, v) takes the source point, evaluated in float in exactly this order
 *     (each operation rounded to float, no fused multiply-add — the CUDA side must use
 *     __fmul_rn/__fadd_rn or --fmad=false to match bit for bit):
 *         dx = ((float)u + 0.5f) - 0.5f*W'        dy = ((float)v + 0.5f) - 0.5f*H'   (exact)
 *         sx = (c*dx - s*dy) + 0.5f*w             sy = (s*dx + c*dy) + 0.5f*h
 *     This is the inverse of OpenCV getRotationMatrix2D's forward map (x' = c*x + s*y + ..,
 *     y' = -s*x + c*y + ..) about ((w-1)/2, (h-1)/2) in OpenCV's pixel-index coordinates, so a
 *     crop-mode rotation agrees with cv2.warpAffine (tests/opencv/opencv_rotate.py).
 *
 * Filters (imgpu_cpu_rotate_sample), as below for every channel of an image without alpha and
 * for the alpha channel; the colour channels of an image with alpha follow "Alpha" further down:
 *   - nearest: pixel (floor(sx), floor(sy)), the pixel that contains the point; outside ->
 *     background.
 *   - bilinear: x = sx - 0.5f, y = sy - 0.5f, i = floor(x), j = floor(y), a = x - i,
 *     b = y - j (exact). The texture unit keeps 8 fractional bits of each weight, so
 *     a_q = roundf(a * 256) / 256 (roundf: half away from zero; a_q in [0, 1]), likewise b_q.
 *     v = (1-a_q)(1-b_q) p(i,j) + a_q(1-b_q) p(i+1,j) + (1-a_q)b_q p(i,j+1) + a_q b_q p(i+1,j+1)
 *     in float, taps outside the image reading the background (OpenCV BORDER_CONSTANT, the
 *     CUDA border address mode); out = floor(v + 0.5), clamped to 0..255. Every product and
 *     partial sum is a multiple of 2^-16 below 2^8, i.e. fits float's 24-bit significand, so
 *     this float arithmetic is exact and equals the integer formula
 *     (sum of integer weights (256-A)(256-B).. times taps + 2^15) >> 16 with A = 256 a_q.
 *     When no tap lies inside the image the result is the background itself.
 *     16 bits: the integer formula itself, with A = (int)roundf((x - i) * 256) and B likewise
 *     clamped to 0..256 (the same A = 256 a_q as above):
 *         v = ((256-A)(256-B) p00 + A(256-B) p10 + (256-A)B p01 + AB p11 + 32768) >> 16
 *     in uint32_t (weights sum to 65536, samples <= 65535: the sum stays below 2^32); no
 *     clamp is needed (v <= 65535). Float would not be exact here (a 16-bit weight times a
 *     16-bit sample needs up to 32 significant bits), hence the integers.
 *   - bicubic: x, y, i, j as for bilinear, t = x - i unquantized; taps i-1..i+2 by j-1..j+2;
 *     Keys weights with A = -0.75f (OpenCV INTER_CUBIC), in float:
 *         w0 = ((A*(t+1) - 5A)*(t+1) + 8A)*(t+1) - 4A     w1 = ((A+2)*t - (A+3))*t*t + 1
 *         w2 = ((A+2)*(1-t) - (A+3))*(1-t)*(1-t) + 1       w3 = 1 - w0 - w1 - w2
 *     each row r = sum over k = 0..3 (in order) of wx[k] * tap, then v = sum over r = 0..3 (in
 *     order) of wy[r] * row[r]; taps outside read the background; out = floor(v + 0.5f)
 *     clamped to 0..255 (Keys overshoots), at 16 bits the same float sum of the 16-bit
 *     samples (as float) clamped to 0..65535. No tap inside -> background. Unlike bilinear this
 *     float arithmetic is inexact, so a GPU version matches bit for bit only if it keeps this
 *     exact operation order with no FMA contraction (w3 = ((1 - w0) - w1) - w2, rows summed
 *     left to right starting from 0); any other order may differ by 1.
 *
 * Alpha (gray+alpha, RGBA; the op floor's premultiplied rule, op.h; helpers in premul.h, the
 * device's in kernels/premul.cuh). Nearest and quarter turns copy pixels: nothing to mix. The
 * interpolating filters mix colour premultiplied by alpha, so that the colour of a transparent
 * tap (the transparent background's black, or whatever an image keeps under alpha 0) does not
 * darken its neighbours. Per output pixel, a_k and c_k the alpha and a colour sample of tap k
 * (a background tap included: a transparent background adds nothing to the mix, an opaque one
 * is a tap like any other), in the image's units (0..255 or 0..65535):
 *   - alpha: the filter above, unchanged.
 *   - bilinear colour, exact in integers at both depths: with the integer weights W_k of the
 *     formula above (summing to 65536), Sa = sum W_k a_k and Sc = sum W_k (a_k c_k) (< 2^48);
 *     Sa > 0: out = floor(Sc / Sa + 1/2), computed as (Sc + floor(Sa / 2)) div Sa; Sa = 0: the
 *     straight formula above. No clamp is needed (Sc <= max * Sa). Because it is exact, a pixel
 *     whose weighted taps share one alpha gets the straight result, byte for byte.
 *   - bicubic colour, in float in the order of the bicubic sum above: m_k = (float)c_k *
 *     (float)a_k (one rounding; exact at 8 bits), M = the bicubic sum of the m_k, A = the alpha
 *     channel's sum (before rounding or clamping). If the 16 taps' alphas are all equal: the
 *     straight sum (premultiplying by a constant and dividing by it changes nothing but float
 *     rounding; this keeps opaque and fully transparent regions byte for byte). Else, if
 *     A > 0: v = M / A (one IEEE division), clamped to 0..max in float, then floor(v + 0.5f);
 *     else (the lobes cancel the alpha; the output alpha is 0): the straight sum, rounded and
 *     clamped. The division is by A itself, not by the clamped output alpha: where Keys
 *     overshoots, A > max beside an opaque edge, and M / A still gives the edge's colour where
 *     M / max would brighten it by the overshoot.
 * RGB and gray images are unaffected.
 *
 * Background (imgpu_rotate_background, op.c): has_background picks background[] = R, G, B, A
 * (gray uses R; gray+alpha uses R and A); without it, all zero: transparent where the image
 * has alpha, else black. 16 bits: each background sample is bg * 257 (#ff -> 65535), so a
 * nearest or quarter-turn rotation of an image of samples v * 257 is exactly the 8-bit
 * rotation of v times 257, background included.
 *
 * Multiples of 90 degrees (imgpu_rotate_quarter >= 0, op.c) are exact pixel permutations
 * whatever the filter; q counterclockwise quarter turns map turned pixel (u, v) to input
 *     q = 0: (u, v)   q = 1: (w-1-v, u)   q = 2: (w-1-u, h-1-v)   q = 3: (v, h-1-u)
 * (q = 1 and 3 give an h x w image; these are what the general formula gives at exact angles).
 * Expand mode outputs the turned image. Crop mode with q = 1 or 3 on a non-square image puts
 * the turned h x w image into the w x h canvas at the integer offset
 *     ox = floor((w - h) / 2) columns, oy = floor((h - w) / 2) rows
 * (turned (u', v') lands at (u' + ox, v' + oy)); what falls outside is cut, what is not
 * covered is background. The geometric centring would need a half-pixel shift when w - h is
 * odd; floor picks the shift toward the top-left. E.g. w = 5, h = 8: ox = -2, oy = 1.
 * At 16 bits the permutation moves 2 * channels bytes per pixel, unchanged.
 *
 * The output is a new tight image; input rows may be padded (stride). */
#include "cpu.h"
#include "error.h"
#include "parallel.h"
#include "premul.h"

#include <math.h>
#include <string.h>

/* Bytes of one pixel. */
static size_t pixel_bytes(const imgpu_image *im)
{
    return (size_t)im->channels * (size_t)imgpu_image_sample_bytes(im);
}

/* Pointer to pixel (i, j), or NULL when it lies outside the image. */
static const uint8_t *tap(const imgpu_image *in, int i, int j)
{
    if (i < 0 || j < 0 || i >= in->width || j >= in->height)
        return NULL;
    return imgpu_image_row(in, j) + (size_t)i * pixel_bytes(in);
}

/* floor(v) as an int, for |v| < 2^31: floorf without its library call (x86-64's baseline has
 * no rounding instruction), the same value. Source coordinates lie within a few image sides of
 * the canvas, and bicubic sums within 2x the sample range, far inside that. */
static inline int ifloor(float v)
{
    const int i = (int)v; /* truncation toward zero */
    return i - ((float)i > v);
}

/* floor(v + 0.5) clamped to 0..maxv (255 or 65535). */
static inline uint32_t round_clamp(float v, float maxv)
{
    const int r = ifloor(v + 0.5f);
    return r < 0 ? 0u : (float)r > maxv ? (uint32_t)maxv : (uint32_t)r;
}

/* roundf(f * 256) for f in [0, 1] (half away from zero), without the library call: f * 256
 * is exact (a power of two), the truncation is its floor, and t - q is exact (t < 2^23). */
static inline int round256(float f)
{
    const float t = f * 256.0f;
    const int q = (int)t;
    return q + (t - (float)q >= 0.5f);
}

/* bg below is one pixel at the image's depth (imgpu_rotate_background_pixel). */
static void sample_nearest(const imgpu_image *in, float sx, float sy, const uint8_t *bg,
                           uint8_t *out)
{
    const uint8_t *p = tap(in, ifloor(sx), ifloor(sy));
    memcpy(out, p ? p : bg, pixel_bytes(in));
}

/* Bilinear's tap (i, j) and 8-bit weights A, B of a source point (the file's comment). */
static inline void bilinear_setup(float sx, float sy, int *i, int *j, int *A, int *B)
{
    const float x = sx - 0.5f, y = sy - 0.5f;
    *i = ifloor(x);
    *j = ifloor(y);
    /* 8 fractional bits, like the texture unit: A = 256 a_q in 0..256 (the clamp is a guard;
     * (x - i) * 256 is already in [0, 256]). */
    const int a = round256(x - (float)*i), b = round256(y - (float)*j);
    *A = a < 0 ? 0 : a > 256 ? 256 : a;
    *B = b < 0 ? 0 : b > 256 ? 256 : b;
}

/* Bilinear of an image with alpha (c = 2 or 4, alpha last; the premultiplied rule, exact form:
 * premul.h): taps t[k] = p00, p10, p01, p11 as numbers of either depth, integer weights w[k]
 * summing to 65536. Sa = sum w a < 2^32 (65536 x 65535); M = sum w (a c) < 2^48, hence 64 bits;
 * the straight sum fits 32 bits as for images without alpha. Four equal alphas take the
 * straight sum, which is then the same value (a common factor cancels): a shortcut past the
 * division, not a rule. */
static inline void bilinear_premul(const uint32_t w[4], const uint32_t t[4][4], int c, uint32_t res[4])
{
    const int al = c - 1;
    const uint32_t sa = w[0] * t[0][al] + w[1] * t[1][al] + w[2] * t[2][al] + w[3] * t[3][al];
    res[al] = (sa + 32768u) >> 16;
    const int same = t[0][al] == t[1][al] && t[0][al] == t[2][al] && t[0][al] == t[3][al];
    for (int ch = 0; ch < al; ch++) {
        if (sa == 0 || same) {
            res[ch] = (w[0] * t[0][ch] + w[1] * t[1][ch] + w[2] * t[2][ch] + w[3] * t[3][ch] + 32768u) >> 16;
            continue;
        }
        uint64_t m = 0;
        for (int k = 0; k < 4; k++)
            m += (uint64_t)w[k] * (t[k][al] * t[k][ch]); /* a c <= 65535^2 < 2^32 */
        res[ch] = imgpu__unpremul_exact(m, sa);
    }
}

/* The four integer weights of bilinear_setup's A, B (sum 65536), in tap order p00, p10, p01, p11. */
static inline void bilinear_weights(int A, int B, uint32_t w[4])
{
    w[0] = (uint32_t)((256 - A) * (256 - B));
    w[1] = (uint32_t)(A * (256 - B));
    w[2] = (uint32_t)((256 - A) * B);
    w[3] = (uint32_t)(A * B);
}

/* 8 bits: the integer formula, which the exact float one at the top of the file equals (the
 * sum is at most 65536 x 255, so no clamp); c channels; with alpha, bilinear_premul. */
static inline void bilinear_mix8(const uint8_t *p00, const uint8_t *p10, const uint8_t *p01, const uint8_t *p11,
                                 int A, int B, int c, uint8_t *out)
{
    uint32_t w[4];
    bilinear_weights(A, B, w);
    if (c == 2 || c == 4) {
        uint32_t t[4][4], res[4];
        for (int k = 0; k < c; k++) {
            t[0][k] = p00[k];
            t[1][k] = p10[k];
            t[2][k] = p01[k];
            t[3][k] = p11[k];
        }
        bilinear_premul(w, t, c, res);
        for (int k = 0; k < c; k++)
            out[k] = (uint8_t)res[k];
        return;
    }
    for (int k = 0; k < c; k++)
        out[k] = (uint8_t)((w[0] * p00[k] + w[1] * p10[k] + w[2] * p01[k] + w[3] * p11[k] + 32768u) >> 16);
}

static void sample_bilinear(const imgpu_image *in, float sx, float sy, const uint8_t *bg,
                            uint8_t *out)
{
    int i, j, A, B;
    bilinear_setup(sx, sy, &i, &j, &A, &B);
    const uint8_t *p00 = tap(in, i, j), *p10 = tap(in, i + 1, j);
    const uint8_t *p01 = tap(in, i, j + 1), *p11 = tap(in, i + 1, j + 1);
    if (!p00 && !p10 && !p01 && !p11) {
        memcpy(out, bg, pixel_bytes(in));
        return;
    }
    if (!p00) p00 = bg;
    if (!p10) p10 = bg;
    if (!p01) p01 = bg;
    if (!p11) p11 = bg;
    const int d = in->depth;
    if (d == 16) {
        /* Integer weights summing to 65536, samples <= 65535: the sum plus 2^15 stays below
         * 65536 * 65535 + 2^15 < 2^32, so uint32_t cannot overflow. */
        uint32_t w[4];
        bilinear_weights(A, B, w);
        const int c = in->channels;
        if (c == 2 || c == 4) {
            uint32_t t[4][4], res[4];
            for (int k = 0; k < c; k++) {
                t[0][k] = imgpu_sample_get(p00, d, k);
                t[1][k] = imgpu_sample_get(p10, d, k);
                t[2][k] = imgpu_sample_get(p01, d, k);
                t[3][k] = imgpu_sample_get(p11, d, k);
            }
            bilinear_premul(w, t, c, res);
            for (int k = 0; k < c; k++)
                imgpu_sample_put(out, d, k, res[k]);
            return;
        }
        for (int k = 0; k < c; k++) {
            uint32_t v = w[0] * imgpu_sample_get(p00, d, k) + w[1] * imgpu_sample_get(p10, d, k) +
                         w[2] * imgpu_sample_get(p01, d, k) + w[3] * imgpu_sample_get(p11, d, k);
            imgpu_sample_put(out, d, k, (v + 32768u) >> 16);
        }
        return;
    }
    bilinear_mix8(p00, p10, p01, p11, A, B, in->channels, out);
}

/* Keys cubic convolution weights for taps at offsets -1, 0, 1, 2 from floor(x), t in [0, 1). */
static void cubic_weights(float t, float w[4])
{
    const float A = -0.75f;
    const float t1 = t + 1.0f, u = 1.0f - t;
    w[0] = ((A * t1 - 5.0f * A) * t1 + 8.0f * A) * t1 - 4.0f * A;
    w[1] = ((A + 2.0f) * t - (A + 3.0f)) * t * t + 1.0f;
    w[2] = ((A + 2.0f) * u - (A + 3.0f)) * u * u + 1.0f;
    w[3] = 1.0f - w[0] - w[1] - w[2];
}

/* Bicubic's tap (i, j) (taps i-1..i+2 by j-1..j+2) and weights of a source point. */
static inline void bicubic_setup(float sx, float sy, int *i, int *j, float wx[4], float wy[4])
{
    const float x = sx - 0.5f, y = sy - 0.5f;
    *i = ifloor(x);
    *j = ifloor(y);
    cubic_weights(x - (float)*i, wx);
    cubic_weights(y - (float)*j, wy);
}

/* The bicubic sum of the file's comment over taps p[r][k] (column i-1+k, row j-1+r; each a
 * pixel of samples at depth d) for channel ch, in its order, unrounded: the one place this
 * arithmetic is written. With premul_al >= 0 each tap's sample is first premultiplied by its
 * alpha (channel premul_al; premul.h). */
static inline float bicubic_sum(const uint8_t *const p[4][4], const float wx[4], const float wy[4], int d, int ch,
                                int premul_al)
{
    float v = 0.0f;
    for (int r = 0; r < 4; r++) {
        float row = 0.0f;
        for (int k = 0; k < 4; k++) {
            float t = (float)imgpu_sample_get(p[r][k], d, (size_t)ch);
            if (premul_al >= 0)
                t = imgpu__premul(t, (float)imgpu_sample_get(p[r][k], d, (size_t)premul_al));
            row += wx[k] * t;
        }
        v += wy[r] * row;
    }
    return v;
}

/* The bicubic sample of c channels, rounded and clamped. With alpha (the premultiplied rule,
 * float form: premul.h): alpha as any channel; the colour from the premultiplied sums unless
 * the 16 taps share one alpha or the alpha sum is not positive (then the straight sum). */
static inline void bicubic_mix(const uint8_t *const p[4][4], const float wx[4], const float wy[4], int d, int c,
                               uint8_t *out)
{
    const float maxv = d == 16 ? 65535.0f : 255.0f;
    const int al = imgpu__alpha_channel(c);
    if (al < 0) {
        for (int ch = 0; ch < c; ch++)
            imgpu_sample_put(out, d, (size_t)ch, round_clamp(bicubic_sum(p, wx, wy, d, ch, -1), maxv));
        return;
    }
    const float va = bicubic_sum(p, wx, wy, d, al, -1);
    imgpu_sample_put(out, d, (size_t)al, round_clamp(va, maxv));
    const unsigned a0 = imgpu_sample_get(p[0][0], d, (size_t)al);
    int same = 1;
    for (int r = 0; r < 4; r++)
        for (int k = 0; k < 4; k++)
            same &= imgpu_sample_get(p[r][k], d, (size_t)al) == a0;
    for (int ch = 0; ch < al; ch++) {
        const float v = !same && va > 0.0f ? imgpu__unpremul(bicubic_sum(p, wx, wy, d, ch, al), va, maxv)
                                           : bicubic_sum(p, wx, wy, d, ch, -1);
        imgpu_sample_put(out, d, (size_t)ch, round_clamp(v, maxv));
    }
}

static void sample_bicubic(const imgpu_image *in, float sx, float sy, const uint8_t *bg,
                           uint8_t *out)
{
    int i, j;
    float wx[4], wy[4];
    bicubic_setup(sx, sy, &i, &j, wx, wy);
    const uint8_t *p[4][4];
    int inside = 0;
    for (int r = 0; r < 4; r++)
        for (int k = 0; k < 4; k++) {
            p[r][k] = tap(in, i - 1 + k, j - 1 + r);
            if (p[r][k])
                inside = 1;
            else
                p[r][k] = bg;
        }
    if (!inside) {
        memcpy(out, bg, pixel_bytes(in));
        return;
    }
    bicubic_mix(p, wx, wy, in->depth, in->channels, out);
}

/* One output pixel; bg is one pixel at the image's depth. */
static void sample(const imgpu_image *in, imgpu_filter filter, float sx, float sy,
                   const uint8_t *bg, uint8_t *out)
{
    switch (filter) {
    case IMGPU_FILTER_NEAREST: sample_nearest(in, sx, sy, bg, out); break;
    case IMGPU_FILTER_BILINEAR: sample_bilinear(in, sx, sy, bg, out); break;
    default: sample_bicubic(in, sx, sy, bg, out); break;
    }
}

void imgpu_cpu_rotate_sample(const imgpu_image *in, imgpu_filter filter, float sx, float sy,
                             const uint8_t bg[4], uint8_t *out)
{
    uint8_t bgpx[8];
    imgpu_rotate_background_pixel(bg, in->depth, bgpx);
    sample(in, filter, sx, sy, bgpx, out);
}

/* Both rotations run on every core by output rows (parallel.h; the general angle in interleaved
 * bands of rows: general_parts); each output pixel is computed by the same code as
 * single-threaded, so the result is bit-identical. */
typedef struct rot_job {
    const imgpu_image *in;
    imgpu_image *out;
    const imgpu_rotate_params *p;
    const uint8_t *bg;
    int q, tw, th, ox, oy; /* quarter turns */
    float c, s;            /* general angle */
    int parts;             /* general angle: the threads' count (general_parts) */
} rot_job;

static void quarter_rows(void *ctx, int part, int v0, int v1)
{
    (void)part;
    const rot_job *j = ctx;
    const imgpu_image *in = j->in, *out = j->out;
    const int w = in->width, h = in->height, q = j->q, tw = j->tw, th = j->th;
    const size_t pb = pixel_bytes(in);
    for (int v = v0; v < v1; v++) {
        uint8_t *dst = imgpu_image_row(out, v);
        for (int u = 0; u < out->width; u++, dst += pb) {
            const int tu = u - j->ox, tv = v - j->oy;
            if (tu < 0 || tv < 0 || tu >= tw || tv >= th) {
                memcpy(dst, j->bg, pb);
                continue;
            }
            int x, y;
            switch (q) {
            case 0: x = tu; y = tv; break;
            case 1: x = w - 1 - tv; y = tu; break;
            case 2: x = w - 1 - tu; y = h - 1 - tv; break;
            default: x = tv; y = h - 1 - tu; break;
            }
            memcpy(dst, tap(in, x, y), pb);
        }
    }
}

static void rotate_quarter(rot_job *j)
{
    const int w = j->in->width, h = j->in->height, q = j->q;
    j->tw = (q & 1) ? h : w; /* the turned image */
    j->th = (q & 1) ? w : h;
    /* 0 unless crop */
    imgpu_rotate_quarter_offset(j->out->width, j->out->height, j->tw, j->th, &j->ox, &j->oy);
    const int rows = j->out->height;
    imgpu__cpu_parallel_rows(rows, imgpu__cpu_parts(rows, (size_t)j->out->width * j->out->channels, 0),
                             quarter_rows, j);
}

/* The source point of output column u in the row whose centre is dy from the canvas centre:
 * the file's formula, in its order. */
static inline void source_point(float c, float s, int u, float dy, float ocx, float icx, float icy, float *sx,
                                float *sy)
{
    const float dx = ((float)u + 0.5f) - ocx;
    /* Separate statements: no contraction into fma, whatever the compiler flags. */
    const float cdx = c * dx, sdy = s * dy, sdx = s * dx, cdy = c * dy;
    *sx = (cdx - sdy) + icx;
    *sy = (sdx + cdy) + icy;
}

/* Columns per chunk of the 8-bit row loops below. Each chunk runs in two passes: the first
 * computes every column's source point and filter setup (source_point, then bilinear_setup
 * or bicubic_setup: the same inline functions, so the same statements and values) into small
 * arrays; the second fetches the taps and mixes. The first pass has no memory access but its
 * own arrays and a constant trip count, so the compiler vectorizes it (GCC's -O2 cost model
 * takes only loops without a scalar remainder; the columns past the row's end that the last
 * chunk computes are never used). Vectorizing changes no value: each float operation is
 * still one IEEE operation on the same operands, with no contraction (C17 mode) and no
 * reassociation. */
enum { ROT_CHUNK = 64, ROT_BAND = 8 };

/* rows8's geometry: what source_point needs, per image and per row. */
typedef struct rot_geom {
    float c, s, ocx, icx, icy, dy;
} rot_geom;

/* The bilinear setup of columns u0..u0+ROT_CHUNK-1: tap (I, J) and weights A, B. */
static inline __attribute__((always_inline)) void bilinear_chunk(const rot_geom *g, int u0, int32_t *restrict I,
                                                                  int32_t *restrict J, int32_t *restrict A,
                                                                  int32_t *restrict B)
{
    const float c = g->c, s = g->s, ocx = g->ocx, icx = g->icx, icy = g->icy, dy = g->dy;
    for (int k = 0; k < ROT_CHUNK; k++) {
        float sx, sy;
        int i, j, a, b;
        source_point(c, s, u0 + k, dy, ocx, icx, icy, &sx, &sy);
        bilinear_setup(sx, sy, &i, &j, &a, &b);
        I[k] = i;
        J[k] = j;
        A[k] = a;
        B[k] = b;
    }
}

/* The bicubic setup of columns u0..u0+ROT_CHUNK-1: tap (I, J) and weights WX[.][k], WY[.][k]. */
static inline __attribute__((always_inline)) void bicubic_chunk(const rot_geom *g, int u0, int32_t *restrict I,
                                                                 int32_t *restrict J, float (*restrict WX)[ROT_CHUNK],
                                                                 float (*restrict WY)[ROT_CHUNK])
{
    const float c = g->c, s = g->s, ocx = g->ocx, icx = g->icx, icy = g->icy, dy = g->dy;
    for (int k = 0; k < ROT_CHUNK; k++) {
        float sx, sy, wx[4], wy[4];
        int i, j;
        source_point(c, s, u0 + k, dy, ocx, icx, icy, &sx, &sy);
        bicubic_setup(sx, sy, &i, &j, wx, wy);
        I[k] = i;
        J[k] = j;
        for (int r = 0; r < 4; r++) {
            WX[r][k] = wx[r];
            WY[r][k] = wy[r];
        }
    }
}

/* 8 bits: pixels whose every tap lies inside the image take their taps by pointer, without
 * sample()'s per-tap bounds tests and background substitution; pixels with no tap inside
 * take the background at once; the rest (the image's edges) go through sample(). All run
 * the same setup and mixing functions above, so the bytes are the same. */
static inline __attribute__((always_inline)) void rows8(const rot_job *j, int v0, int v1, const int ch,
                                                         const int filter)
{
    const imgpu_image *in = j->in, *out = j->out;
    rot_geom g = {.c = j->c, .s = j->s, .ocx = 0.5f * (float)out->width, .icx = 0.5f * (float)in->width,
                  .icy = 0.5f * (float)in->height};
    const float ocy = 0.5f * (float)out->height;
    const int w = in->width, h = in->height, ow = out->width;
    const size_t stride = in->stride;
    const uint8_t *base = in->data;
    int32_t I[ROT_CHUNK], J[ROT_CHUNK], A[ROT_CHUNK], B[ROT_CHUNK];
    float WX[4][ROT_CHUNK], WY[4][ROT_CHUNK];
    /* tiles of ROT_BAND rows by ROT_CHUNK columns: the taps of one tile lie close together
     * in the source, and the next tile's overlap them, so they come from the cache */
    for (int vb = v0; vb < v1; vb += ROT_BAND)
    for (int u0 = 0; u0 < ow; u0 += ROT_CHUNK)
    for (int v = vb; v < v1 && v < vb + ROT_BAND; v++) {
        uint8_t *dst = imgpu_image_row(out, v) + (size_t)u0 * ch;
        g.dy = ((float)v + 0.5f) - ocy;
        {
            const int n = ow - u0 < ROT_CHUNK ? ow - u0 : ROT_CHUNK;
            if (filter == IMGPU_FILTER_BILINEAR)
                bilinear_chunk(&g, u0, I, J, A, B);
            else if (filter == IMGPU_FILTER_BICUBIC)
                bicubic_chunk(&g, u0, I, J, WX, WY);
            for (int k = 0; k < n; k++, dst += ch) {
                if (filter == IMGPU_FILTER_BILINEAR) {
                    const int i = I[k], jj = J[k];
                    if (i >= 0 && jj >= 0 && i < w - 1 && jj < h - 1) {
                        const uint8_t *p00 = base + (size_t)jj * stride + (size_t)i * ch, *p01 = p00 + stride;
                        bilinear_mix8(p00, p00 + ch, p01, p01 + ch, A[k], B[k], ch, dst);
                        continue;
                    }
                    if (i + 1 < 0 || i >= w || jj + 1 < 0 || jj >= h) { /* no tap inside: the background */
                        memcpy(dst, j->bg, (size_t)ch);
                        continue;
                    }
                } else if (filter == IMGPU_FILTER_BICUBIC) {
                    const int i = I[k], jj = J[k];
                    if (i >= 1 && jj >= 1 && i < w - 2 && jj < h - 2) {
                        const uint8_t *p[4][4];
                        const float wx[4] = {WX[0][k], WX[1][k], WX[2][k], WX[3][k]};
                        const float wy[4] = {WY[0][k], WY[1][k], WY[2][k], WY[3][k]};
                        const uint8_t *row = base + (size_t)(jj - 1) * stride + (size_t)(i - 1) * ch;
                        for (int r = 0; r < 4; r++, row += stride)
                            for (int t = 0; t < 4; t++)
                                p[r][t] = row + t * ch;
                        bicubic_mix(p, wx, wy, 8, ch, dst);
                        continue;
                    }
                    if (i + 2 < 0 || i - 1 >= w || jj + 2 < 0 || jj - 1 >= h) { /* no tap inside */
                        memcpy(dst, j->bg, (size_t)ch);
                        continue;
                    }
                }
                float sx, sy;
                source_point(g.c, g.s, u0 + k, g.dy, g.ocx, g.icx, g.icy, &sx, &sy);
                if (filter == IMGPU_FILTER_NEAREST) {
                    const int i = ifloor(sx), jj = ifloor(sy);
                    memcpy(dst,
                           i >= 0 && jj >= 0 && i < w && jj < h ? base + (size_t)jj * stride + (size_t)i * ch : j->bg,
                           (size_t)ch);
                    continue;
                }
                sample(in, (imgpu_filter)filter, sx, sy, j->bg, dst);
            }
        }
    }
}

/* rows8 with the channel count and the filter as constants, so that the compiler unrolls the
 * per-channel loops (one specialization each). */
IMGPU__CPU_WIDE static void general_rows8(const rot_job *j, int v0, int v1)
{
    const int f = j->p->filter;
    switch (j->in->channels) {
#define IMGPU_ROWS8(C)                                                                             \
    case C:                                                                                        \
        if (f == IMGPU_FILTER_BILINEAR)                                                            \
            rows8(j, v0, v1, C, IMGPU_FILTER_BILINEAR);                                            \
        else if (f == IMGPU_FILTER_BICUBIC)                                                        \
            rows8(j, v0, v1, C, IMGPU_FILTER_BICUBIC);                                             \
        else                                                                                       \
            rows8(j, v0, v1, C, IMGPU_FILTER_NEAREST);                                             \
        break;
    IMGPU_ROWS8(1)
    IMGPU_ROWS8(2)
    IMGPU_ROWS8(3)
    IMGPU_ROWS8(4)
#undef IMGPU_ROWS8
    default: break; /* general_rows passes 1 to 4 channels only */
    }
}

static void general_rows(void *ctx, int part, int v0, int v1)
{
    (void)part;
    const rot_job *j = ctx;
    const imgpu_image *in = j->in, *out = j->out;
    if (in->depth == 8 && in->channels >= 1 && in->channels <= 4) {
        general_rows8(j, v0, v1);
        return;
    }
    const float c = j->c, s = j->s;
    const float ocx = 0.5f * (float)out->width, ocy = 0.5f * (float)out->height;
    const float icx = 0.5f * (float)in->width, icy = 0.5f * (float)in->height;
    const size_t pb = pixel_bytes(out);
    for (int v = v0; v < v1; v++) {
        uint8_t *dst = imgpu_image_row(out, v);
        const float dy = ((float)v + 0.5f) - ocy;
        for (int u = 0; u < out->width; u++, dst += pb) {
            float sx, sy;
            source_point(c, s, u, dy, ocx, icx, icy, &sx, &sy);
            sample(in, j->p->filter, sx, sy, j->bg, dst);
        }
    }
}

/* Part `part` of j->parts takes the bands of ROT_BAND rows numbered part, part + parts, ...:
 * rows near the top and bottom of a rotated canvas are mostly background and cost little, so
 * contiguous runs of rows would give the middle threads most of the work (at 16 threads, 1.4x
 * the mean for a 4K expand by 15 degrees); interleaved bands share it evenly. */
static void general_parts(void *ctx, int part, int p0, int p1)
{
    const rot_job *j = ctx;
    const int rows = j->out->height;
    for (int p = p0; p < p1; p++)
        for (int v = p * ROT_BAND; v < rows; v += j->parts * ROT_BAND)
            general_rows(ctx, part, v, rows - v < ROT_BAND ? rows : v + ROT_BAND);
}

static void rotate_general(rot_job *j)
{
    imgpu_rotate_trig(imgpu_rotate_angle(j->p), &j->c, &j->s);
    /* bicubic reads 16 taps per sample, bilinear 4: weigh the work accordingly */
    const size_t per = j->p->filter == IMGPU_FILTER_BICUBIC ? 16 : 4;
    const int rows = j->out->height, bands = (rows + ROT_BAND - 1) / ROT_BAND;
    int parts = imgpu__cpu_parts(rows, (size_t)j->out->width * j->out->channels * per, 0);
    j->parts = parts < bands ? parts : bands;
    imgpu__cpu_parallel_rows(j->parts, j->parts, general_parts, j);
}

imgpu_image *imgpu_cpu_rotate(const imgpu_image *in, const imgpu_rotate_params *p)
{
    if (in->depth != 8 && in->depth != 16) {
        imgpu_error("rotate: %d-bit images are not supported", in->depth);
        return NULL;
    }
    if (!isfinite(p->angle)) {
        imgpu_error("rotate: the angle must be a finite number of degrees");
        return NULL;
    }
    if (p->filter != IMGPU_FILTER_NEAREST && p->filter != IMGPU_FILTER_BILINEAR &&
        p->filter != IMGPU_FILTER_BICUBIC) {
        imgpu_error("rotate: unknown filter %d", (int)p->filter);
        return NULL;
    }
    int ow, oh;
    imgpu_rotate_output_size(in->width, in->height, p, &ow, &oh);
    imgpu_image *out = imgpu_image_new(ow, oh, in->channels, in->depth);
    if (!out)
        return NULL;
    uint8_t bg8[4], bg[8];
    imgpu_rotate_background(p, in->channels, bg8);
    imgpu_rotate_background_pixel(bg8, in->depth, bg);
    rot_job j = {.in = in, .out = out, .p = p, .bg = bg, .q = imgpu_rotate_quarter(imgpu_rotate_angle(p))};
    if (j.q >= 0)
        rotate_quarter(&j);
    else
        rotate_general(&j);
    return out;
}

static imgpu_image *run(const imgpu_image *in, const imgpu_op *op) { return imgpu_cpu_rotate(in, &op->u.rotate); }

/* The run entry (ops_table.c). */
const imgpu_cpu_op imgpu__cpu_op_rotate = {IMGPU_OP_ROTATE, run};

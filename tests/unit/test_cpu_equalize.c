/* test_cpu_equalize.c — the CPU equalize: hand-computed LUTs (two levels, half-way rounding
 * to even, constant, 1x1, ramps), a second, differently organised implementation of OpenCV's
 * definition, shapes (1xN, Nx1, odd width 451 with padded rows), alpha pass-through, luminance
 * versus per-channel, the "equalization raises contrast" invariant, and luminance mode on every
 * one of the 2^24 colours (one 4096x4096 image; --quick: 65536 of them, for valgrind) against
 * the plain per-pixel conversions of cpu/ycc.h, which the mapping loop replaces by tables, and
 * ycc.h's clamp and luminance statements against OpenCV's formulas written out plainly, on every
 * input they can take.
 * Bit-exactness against cv2 itself is tests/opencv/cpu_opencv_equalize.py. */
#include "cpu/cpu.h"
#include "cpu/ycc.h"
#include "error.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A small deterministic generator (xorshift32), so failures reproduce. */
static uint32_t rng_state = 2463534242u;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

/* An image view over caller memory with a padded stride (pad bytes per row set to 0xEE). */
static imgpu_image *padded_copy(const imgpu_image *src, int pad)
{
    imgpu_image *im = calloc(1, sizeof *im);
    *im = *src;
    im->stride = (size_t)src->width * src->channels + (size_t)pad;
    im->data = malloc(im->stride * src->height);
    memset(im->data, 0xEE, im->stride * src->height);
    for (int y = 0; y < src->height; y++)
        memcpy(imgpu_image_row(im, y), imgpu_image_row(src, y), (size_t)src->width * src->channels);
    im->owns = 1;
    return im;
}

static imgpu_image *gray_from(const uint8_t *v, int w, int h)
{
    imgpu_image *im = imgpu_image_new(w, h, 1, 8);
    memcpy(im->data, v, (size_t)w * h);
    return im;
}

static imgpu_image *eq(const imgpu_image *in, imgpu_eq_mode mode)
{
    imgpu_equalize_params p = {mode, IMGPU_FORMULA_OPENCV};
    imgpu_image *out = imgpu_cpu_equalize(in, &p);
    CHECKF(out != NULL, "equalize failed: %s", imgpu_error_message());
    if (out)
        CHECK(out->width == in->width && out->height == in->height &&
              out->channels == in->channels && out->stride == (size_t)in->width * in->channels);
    return out;
}

static int same_pixels(const imgpu_image *a, const imgpu_image *b)
{
    if (a->width != b->width || a->height != b->height || a->channels != b->channels)
        return 0;
    for (int y = 0; y < a->height; y++)
        if (memcmp(imgpu_image_row(a, y), imgpu_image_row(b, y), (size_t)a->width * a->channels))
            return 0;
    return 1;
}

/* OpenCV's definition organised differently: a cumulative histogram cdf[] first, then
 * lut[i] = nearest-even((float)(cdf[i] - cdf[i0]) * (255.0f / (float)(n - cdf[i0]))) via
 * rintf on a float, with explicit handling of the constant case. */
static void reference_lut(const uint32_t hist[256], uint8_t lut[256])
{
    uint64_t cdf[256], run = 0;
    for (int i = 0; i < 256; i++)
        cdf[i] = run += hist[i];
    const uint64_t n = cdf[255];
    int i0 = 0;
    while (i0 < 255 && cdf[i0] == 0)
        i0++;
    if (n == 0 || cdf[i0] == n) {
        for (int i = 0; i < 256; i++)
            lut[i] = (uint8_t)i;
        return;
    }
    volatile float scale = 255.0f / (float)(n - cdf[i0]); /* volatile: force float rounding */
    for (int i = 0; i < 256; i++) {
        if (i <= i0) {
            lut[i] = 0;
            continue;
        }
        volatile float prod = (float)(cdf[i] - cdf[i0]) * scale;
        float r = rintf(prod);
        lut[i] = (uint8_t)(r > 255.0f ? 255.0f : r);
    }
}

static void hist_of(const imgpu_image *im, int k, uint32_t hist[256])
{
    memset(hist, 0, 256 * sizeof hist[0]);
    for (int y = 0; y < im->height; y++)
        for (int x = 0; x < im->width; x++)
            hist[imgpu_image_row(im, y)[x * im->channels + k]]++;
}

static void lut_hand_cases(void)
{
    uint32_t hist[256];
    uint8_t lut[256];

    /* two levels: the first maps to 0, the second to 255 whatever the counts */
    memset(hist, 0, sizeof hist);
    hist[40] = 7;
    hist[200] = 1000;
    imgpu_cpu_equalize_lut(hist, 1007, lut);
    CHECK(lut[40] == 0 && lut[200] == 255);

    /* 0, 1, 2 once each: scale = 127.5f; 1 * 127.5 = 127.5 rounds to EVEN: 128; 2 -> 255 */
    memset(hist, 0, sizeof hist);
    hist[0] = hist[1] = hist[2] = 1;
    imgpu_cpu_equalize_lut(hist, 3, lut);
    CHECKF(lut[0] == 0 && lut[1] == 128 && lut[2] == 255, "%d %d %d", lut[0], lut[1], lut[2]);

    /* 0 once, 1 x 253, 2 x 257: scale = 255 / 510 = 0.5f exactly; 253 * 0.5 = 126.5 -> 126
     * (half to even; half-up would give 127); 510 * 0.5 = 255 */
    memset(hist, 0, sizeof hist);
    hist[0] = 1;
    hist[1] = 253;
    hist[2] = 257;
    imgpu_cpu_equalize_lut(hist, 511, lut);
    CHECKF(lut[0] == 0 && lut[1] == 126 && lut[2] == 255, "%d %d %d", lut[0], lut[1], lut[2]);

    /* ramp 0..255 once each: i0 = 0, scale = 1, lut is the identity */
    for (int i = 0; i < 256; i++)
        hist[i] = 1;
    imgpu_cpu_equalize_lut(hist, 256, lut);
    int ident = 1;
    for (int i = 0; i < 256; i++)
        ident &= lut[i] == i;
    CHECK(ident);

    /* constant: identity (the image comes back unchanged), also for all-255 and empty */
    const int levels[3] = {0, 123, 255};
    for (int k = 0; k < 3; k++) {
        memset(hist, 0, sizeof hist);
        hist[levels[k]] = 99;
        imgpu_cpu_equalize_lut(hist, 99, lut);
        CHECKF(lut[levels[k]] == levels[k] && lut[7] == 7, "constant %d", levels[k]);
    }
    memset(hist, 0, sizeof hist);
    imgpu_cpu_equalize_lut(hist, 0, lut);
    CHECK(lut[0] == 0 && lut[255] == 255);

    /* i0 = 10, one pixel each at 10, 20, 30, 40, 50: scale = 255/4 = 63.75;
     * 20 -> 63.75 -> 64, 30 -> 127.5 -> 128 (even), 40 -> 191.25 -> 191, 50 -> 255 */
    memset(hist, 0, sizeof hist);
    for (int v = 10; v <= 50; v += 10)
        hist[v] = 1;
    imgpu_cpu_equalize_lut(hist, 5, lut);
    CHECKF(lut[10] == 0 && lut[20] == 64 && lut[30] == 128 && lut[40] == 191 && lut[50] == 255,
           "%d %d %d %d %d", lut[10], lut[20], lut[30], lut[40], lut[50]);

    /* random histograms against the second implementation; monotone; max bin -> 255 */
    for (int trial = 0; trial < 2000; trial++) {
        uint64_t n = 0;
        int spread = 1 + (int)(rnd() % 256);
        memset(hist, 0, sizeof hist);
        for (int i = 0; i < 256; i++) {
            if ((int)(rnd() % 256) < spread)
                hist[i] = rnd() % (trial % 3 == 0 ? 5u : trial % 3 == 1 ? 1000u : 200000u);
            n += hist[i];
        }
        uint8_t ref[256];
        imgpu_cpu_equalize_lut(hist, n, lut);
        reference_lut(hist, ref);
        int ok = 1, mono = 1, last = -1;
        for (int i = 0; i < 256; i++) {
            if (!hist[i])
                continue; /* empty bins never reach a pixel */
            ok &= lut[i] == ref[i];
            mono &= lut[i] >= last;
            last = lut[i];
        }
        CHECKF(ok, "trial %d differs from the reference implementation", trial);
        CHECKF(mono, "trial %d: LUT not monotone", trial);
        int distinct = 0;
        for (int i = 0; i < 256; i++)
            distinct += hist[i] != 0;
        if (distinct >= 2)
            CHECKF(last == 255, "trial %d: top bin maps to %d", trial, last);
    }
}

/* Equalize gray images of awkward shapes through the public entry point and compare with the
 * reference LUT applied by hand. */
static void gray_shapes(void)
{
    const int shapes[][2] = {{1, 1}, {1, 300}, {300, 1}, {451, 17}, {256, 3}, {7, 5}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int w = shapes[s][0], h = shapes[s][1];
        imgpu_image *in = imgpu_image_new(w, h, 1, 8);
        for (int i = 0; i < w * h; i++)
            in->data[i] = (uint8_t)(60 + rnd() % 50);
        uint32_t hist[256];
        uint8_t lut[256];
        hist_of(in, 0, hist);
        reference_lut(hist, lut);
        imgpu_image *pad = padded_copy(in, 3);
        imgpu_image *out = eq(pad, IMGPU_MODE_LUMINANCE);
        imgpu_image *out2 = eq(pad, IMGPU_MODE_PER_CHANNEL);
        int ok = out && out2;
        for (int i = 0; ok && i < w * h; i++)
            ok &= out->data[i] == lut[in->data[i]] && out2->data[i] == out->data[i];
        CHECKF(ok, "gray %dx%d", w, h);
        if (w * h == 1)
            CHECK(out && out->data[0] == in->data[0]); /* a single pixel is a constant image */
        imgpu_image_free(out);
        imgpu_image_free(out2);
        imgpu_image_free(pad);
        imgpu_image_free(in);
    }

    /* two-level image -> {0, 255}; all-255 and constant unchanged */
    uint8_t v[12] = {40, 200, 200, 40, 200, 200, 200, 40, 40, 40, 200, 200};
    imgpu_image *in = gray_from(v, 4, 3), *out = eq(in, IMGPU_MODE_LUMINANCE);
    int ok = 1;
    for (int i = 0; out && i < 12; i++)
        ok &= out->data[i] == (v[i] == 40 ? 0 : 255);
    CHECK(out && ok);
    imgpu_image_free(in);
    imgpu_image_free(out);
    const uint8_t consts[2] = {255, 77};
    for (int k = 0; k < 2; k++) {
        memset(v, consts[k], sizeof v);
        in = gray_from(v, 3, 4);
        out = eq(in, IMGPU_MODE_LUMINANCE);
        CHECKF(out && same_pixels(in, out), "constant %d changed", consts[k]);
        imgpu_image_free(in);
        imgpu_image_free(out);
    }
    /* a ramp 0..255 is already equalized: unchanged */
    uint8_t ramp[256];
    for (int i = 0; i < 256; i++)
        ramp[i] = (uint8_t)i;
    in = gray_from(ramp, 256, 1);
    out = eq(in, IMGPU_MODE_LUMINANCE);
    CHECK(out && same_pixels(in, out));
    imgpu_image_free(in);
    imgpu_image_free(out);
}

static double stddev(const imgpu_image *im, int k)
{
    double s = 0, s2 = 0, n = (double)im->width * im->height;
    for (int y = 0; y < im->height; y++)
        for (int x = 0; x < im->width; x++) {
            double v = imgpu_image_row(im, y)[x * im->channels + k];
            s += v;
            s2 += v * v;
        }
    return sqrt(s2 / n - (s / n) * (s / n));
}

static void color_and_alpha(void)
{
    /* an RGBA image with padded rows: smooth low-contrast color plus noise, random alpha */
    const int w = 451, h = 37;
    imgpu_image *in = imgpu_image_new(w, h, 4, 8);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t *p = imgpu_image_row(in, y) + 4 * x;
            p[0] = (uint8_t)(90 + x / 12 + rnd() % 8);
            p[1] = (uint8_t)(110 + y + rnd() % 8);
            p[2] = (uint8_t)(70 + (x + y) / 20 + rnd() % 8);
            p[3] = (uint8_t)rnd();
        }
    imgpu_image *pad = padded_copy(in, 5);
    imgpu_image *lum = eq(pad, IMGPU_MODE_LUMINANCE);
    imgpu_image *chan = eq(pad, IMGPU_MODE_PER_CHANNEL);
    if (!lum || !chan)
        goto done;
    int alpha_ok = 1, chan_ok = 1, lum_ok = 1;
    uint32_t hist[3][256], yhist[256] = {0};
    uint8_t lut[3][256], ylut[256];
    for (int k = 0; k < 3; k++) {
        hist_of(in, k, hist[k]);
        reference_lut(hist[k], lut[k]);
    }
    for (int i = 0; i < w * h; i++) {
        const uint8_t *p = in->data + 4 * i;
        yhist[imgpu_cpu_rgb_to_y(p[0], p[1], p[2])]++;
    }
    reference_lut(yhist, ylut);
    for (int i = 0; i < w * h; i++) {
        const uint8_t *p = in->data + 4 * i, *l = lum->data + 4 * i, *c = chan->data + 4 * i;
        alpha_ok &= l[3] == p[3] && c[3] == p[3];
        for (int k = 0; k < 3; k++)
            chan_ok &= c[k] == lut[k][p[k]];
        uint8_t yy, cb, cr, r, g, b;
        imgpu_cpu_rgb_to_ycbcr(p[0], p[1], p[2], &yy, &cb, &cr);
        imgpu_cpu_ycbcr_to_rgb(ylut[yy], cb, cr, &r, &g, &b);
        lum_ok &= l[0] == r && l[1] == g && l[2] == b;
    }
    CHECK(alpha_ok);
    CHECK(chan_ok);
    CHECK(lum_ok);
    CHECK(!same_pixels(lum, chan)); /* the two modes differ on color */
    /* contrast rises: every channel's spread grows in per-channel mode, and luma's spread in
     * luminance mode */
    for (int k = 0; k < 3; k++)
        CHECKF(stddev(chan, k) > stddev(in, k), "channel %d: std %.2f -> %.2f", k,
               stddev(in, k), stddev(chan, k));
    imgpu_histogram hi, ho;
    CHECK(imgpu_cpu_histogram(in, &hi) == 0 && imgpu_cpu_histogram(lum, &ho) == 0);
    int ylo_in = 255, yhi_in = 0, ylo_out = 255, yhi_out = 0;
    for (int v = 0; v < 256; v++) {
        if (hi.luma[v]) { ylo_in = v < ylo_in ? v : ylo_in; yhi_in = v; }
        if (ho.luma[v]) { ylo_out = v < ylo_out ? v : ylo_out; yhi_out = v; }
    }
    CHECKF(yhi_out - ylo_out > 2 * (yhi_in - ylo_in), "luma range %d..%d -> %d..%d", ylo_in,
           yhi_in, ylo_out, yhi_out);
done:
    imgpu_image_free(lum);
    imgpu_image_free(chan);
    imgpu_image_free(pad);
    imgpu_image_free(in);

    /* gray+alpha: gray equalized, alpha untouched */
    imgpu_image *ga = imgpu_image_new(30, 20, 2, 8);
    for (int i = 0; i < 600; i++) {
        ga->data[2 * i] = (uint8_t)(100 + rnd() % 20);
        ga->data[2 * i + 1] = (uint8_t)rnd();
    }
    imgpu_image *o = eq(ga, IMGPU_MODE_LUMINANCE);
    int ok = o != NULL;
    for (int i = 0; ok && i < 600; i++)
        ok &= o->data[2 * i + 1] == ga->data[2 * i + 1];
    CHECK(ok);
    CHECK(o && stddev(o, 0) > 4 * stddev(ga, 0));
    imgpu_image_free(o);
    imgpu_image_free(ga);

    /* a constant color image comes back unchanged in both modes */
    imgpu_image *cc = imgpu_image_new(9, 4, 3, 8);
    for (int i = 0; i < 36; i++) {
        cc->data[3 * i] = 200;
        cc->data[3 * i + 1] = 30;
        cc->data[3 * i + 2] = 99;
    }
    imgpu_image *a = eq(cc, IMGPU_MODE_LUMINANCE), *b = eq(cc, IMGPU_MODE_PER_CHANNEL);
    CHECK(a && same_pixels(a, cc));
    CHECK(b && same_pixels(b, cc));
    imgpu_image_free(a);
    imgpu_image_free(b);
    imgpu_image_free(cc);
}

/* clock_motion-like data: a low-contrast gray photo (values 95..150, smooth + noise). */
static void raises_contrast(void)
{
    imgpu_image *in = imgpu_image_new(400, 300, 1, 8);
    for (int y = 0; y < 300; y++)
        for (int x = 0; x < 400; x++) {
            double v = 120 + 20 * sin(x / 40.0) * cos(y / 55.0) + (rnd() % 9) - 4;
            imgpu_image_row(in, y)[x] = (uint8_t)v;
        }
    imgpu_image *out = eq(in, IMGPU_MODE_LUMINANCE);
    if (out) {
        double s0 = stddev(in, 0), s1 = stddev(out, 0);
        CHECKF(s1 >= s0, "std %.2f -> %.2f", s0, s1);
        CHECKF(s1 > 3 * s0, "std %.2f -> %.2f: expected a large gain", s0, s1);
        /* equalizing again changes little: the result is already spread out */
        imgpu_image *again = eq(out, IMGPU_MODE_LUMINANCE);
        CHECK(again && fabs(stddev(again, 0) - s1) < 2.0);
        imgpu_image_free(again);
    }
    imgpu_image_free(out);
    imgpu_image_free(in);
}

static void errors(void)
{
    uint8_t buf[8] = {0};
    imgpu_image im16 = {2, 2, 1, 16, 4, buf, 0};
    imgpu_equalize_params p = {IMGPU_MODE_LUMINANCE};
    imgpu_error_clear();
    CHECK(imgpu_cpu_equalize(&im16, &p) == NULL);
    CHECK(imgpu_error_message()[0] != '\0');
    imgpu_image im8 = {2, 2, 1, 8, 2, buf, 0};
    p.mode = (imgpu_eq_mode)7;
    imgpu_error_clear();
    CHECK(imgpu_cpu_equalize(&im8, &p) == NULL);
    CHECK(imgpu_error_message()[0] != '\0');
}

/* Luminance mode on every colour (quick: a 256x256 slice, G varying with R and B): the output
 * is ycbcr_to_rgb(lut[Y], Cb, Cr) of each pixel's rgb_to_ycbcr, with the LUT of the Y
 * histogram by the second implementation above. */
static void every_colour(int quick)
{
    const int w = quick ? 256 : 4096, h = quick ? 256 : 4096;
    imgpu_image *in = imgpu_image_new(w, h, 3, 8);
    CHECK(in != NULL);
    if (!in)
        return;
    uint32_t hist[256] = {0};
    for (int y = 0; y < h; y++) {
        uint8_t *p = imgpu_image_row(in, y);
        for (int x = 0; x < w; x++, p += 3) {
            const uint32_t i = (uint32_t)y * (uint32_t)w + (uint32_t)x;
            p[0] = (uint8_t)(quick ? (uint32_t)y : i >> 16);
            p[2] = (uint8_t)(quick ? (uint32_t)x : i);
            p[1] = (uint8_t)(quick ? (uint32_t)(y * 7 + x * 13) : i >> 8);
            hist[imgpu__rgb_to_y(p[0], p[1], p[2])]++;
        }
    }
    uint8_t lut[256];
    reference_lut(hist, lut);
    imgpu_image *out = eq(in, IMGPU_MODE_LUMINANCE);
    size_t bad = 0;
    for (int y = 0; out && y < h; y++) {
        const uint8_t *p = imgpu_image_row(in, y), *q = imgpu_image_row(out, y);
        for (int x = 0; x < w; x++, p += 3, q += 3) {
            uint8_t yy, cb, cr, r, g, b;
            imgpu__rgb_to_ycbcr(p[0], p[1], p[2], &yy, &cb, &cr);
            imgpu__ycbcr_to_rgb(lut[yy], cb, cr, &r, &g, &b);
            bad += q[0] != r || q[1] != g || q[2] != b;
        }
    }
    CHECKF(out && bad == 0, "luminance equalize on %d colours: %zu differ from ycc.h's conversions",
           w * h, bad);
    imgpu_image_free(out);
    imgpu_image_free(in);
}

/* ycc.h's per-pixel statements against their definitions written out here the plain way (the
 * nested saturations and the "+ (128 << 14)" of OpenCV's formulas, floor division by 2^14 in
 * 64 bits), on every input each can take:
 *   - imgpu__sat_u8 on every int of -2^24..2^24 (quick: 2^16; the sums here stay under 2^23);
 *   - imgpu__ycc_replace_y(r, b, Y, y2) on every colour (quick: 65536) with y2 = 0 and 255.
 *     Both sides have the shape sat(y2 + t) per channel, t a function of the colour alone with
 *     |t| <= 180: y2 = 0 shows t when t >= 0 and y2 = 255 when t <= 0, so equal outputs at
 *     these two mean equal t, and so equal outputs for every y2 in 0..255. */
static int plain_sat(long v)
{
    return v < 0 ? 0 : v > 255 ? 255 : (int)v;
}

static long plain_descale14(long x) /* round half up, floor for negatives */
{
    const long s = x + (1L << 13);
    return s >= 0 ? s / 16384 : -((-s + 16383) / 16384);
}

static void plain_replace_y(int r, int g, int b, int y2, uint8_t q[3])
{
    const long yy = plain_descale14(4899L * r + 9617L * g + 1868L * b);
    const int cr = plain_sat(plain_descale14((r - yy) * 11682L + (128L << 14)));
    const int cb = plain_sat(plain_descale14((b - yy) * 9241L + (128L << 14)));
    q[0] = (uint8_t)plain_sat(y2 + plain_descale14(22987L * (cr - 128)));
    q[1] = (uint8_t)plain_sat(y2 + plain_descale14(-11698L * (cr - 128) - 5636L * (cb - 128)));
    q[2] = (uint8_t)plain_sat(y2 + plain_descale14(29049L * (cb - 128)));
}

static void ycc_statements(int quick)
{
    long bad_sat = 0;
    const long lim = quick ? 1L << 16 : 1L << 24;
    for (long v = -lim; v <= lim; v++)
        bad_sat += imgpu__sat_u8((int)v) != plain_sat(v);
    CHECKF(bad_sat == 0, "imgpu__sat_u8: %ld of the ints within +-%ld differ", bad_sat, lim);
    const uint32_t n = quick ? 1u << 16 : 1u << 24;
    long bad = 0;
    for (uint32_t i = 0; i < n; i++) {
        /* quick: R and B every value, G a spread of them */
        const int r = (int)(quick ? i >> 8 : i >> 16), b = (int)(i & 255);
        const int g = (int)(quick ? (r * 7 + b * 13) & 255 : (i >> 8) & 255);
        const int yy = imgpu__descale14(IMGPU_R2Y * r + IMGPU_G2Y * g + IMGPU_B2Y * b);
        for (int y2 = 0; y2 <= 255; y2 += 255) {
            uint8_t got[3], want[3];
            imgpu__ycc_replace_y(r, b, yy, y2, got);
            plain_replace_y(r, g, b, y2, want);
            bad += memcmp(got, want, 3) != 0;
        }
    }
    CHECKF(bad == 0, "imgpu__ycc_replace_y: %ld of %u colours x 2 differ from the plain formulas", bad, n);
}

int main(int argc, char **argv)
{
    const int quick = argc > 1 && !strcmp(argv[1], "--quick");
    lut_hand_cases();
    gray_shapes();
    color_and_alpha();
    raises_contrast();
    errors();
    every_colour(quick);
    ycc_statements(quick);
    TEST_MAIN_END();
}

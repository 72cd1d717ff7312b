/* test_cpu_rotate.c — the CPU rotation: exact quarter turns (four 90-degree turns and 360 are
 * the identity for every filter, 180 flips both axes, 90 on 1xN / Nx1 / odd sizes, the crop
 * rule for non-square images), expand sizes, background defaults and explicit values, alpha
 * confined to the rotated footprint, nearest on a hand-derived 45-degree pattern, and
 * hand-computed bilinear values (half-way points, edges against the background, the 8-bit
 * weight quantization). The OpenCV comparison is tests/cpu_opencv_rotate.py. */
#include "cpu/cpu.h"
#include "error.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const imgpu_filter filters[3] = {IMGPU_FILTER_NEAREST, IMGPU_FILTER_BILINEAR,
                                        IMGPU_FILTER_BICUBIC};
static const char *filter_names[3] = {"nearest", "bilinear", "bicubic"};

static uint32_t rng_state = 88172645u;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

static imgpu_image *random_image(int w, int h, int c)
{
    imgpu_image *im = imgpu_image_new(w, h, c, 8);
    for (size_t i = 0; i < im->stride * (size_t)h; i++)
        im->data[i] = (uint8_t)rnd();
    return im;
}

static imgpu_rotate_params params(double angle, imgpu_filter f, int crop)
{
    imgpu_op op = imgpu_op_rotate(angle);
    op.u.rotate.filter = f;
    op.u.rotate.crop = crop;
    return op.u.rotate;
}

static imgpu_image *rot(const imgpu_image *in, double angle, imgpu_filter f, int crop)
{
    imgpu_rotate_params p = params(angle, f, crop);
    imgpu_image *out = imgpu_cpu_rotate(in, &p);
    CHECKF(out != NULL, "rotate %g failed: %s", angle, imgpu_error_message());
    return out;
}

static const uint8_t *px(const imgpu_image *im, int x, int y)
{
    return imgpu_image_row(im, y) + (size_t)x * im->channels;
}

static int same_pixels(const imgpu_image *a, const imgpu_image *b)
{
    if (!a || !b || a->width != b->width || a->height != b->height || a->channels != b->channels)
        return 0;
    for (int y = 0; y < a->height; y++)
        if (memcmp(imgpu_image_row(a, y), imgpu_image_row(b, y), (size_t)a->width * a->channels))
            return 0;
    return 1;
}

static void quarter_turns(void)
{
    const int sizes[][2] = {{1, 1}, {1, 9}, {9, 1}, {5, 8}, {7, 3}, {16, 16}, {33, 17}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const int w = sizes[s][0], h = sizes[s][1];
        for (int c = 1; c <= 4; c++) {
            imgpu_image *in = random_image(w, h, c);
            for (int f = 0; f < 3; f++) {
                /* 0 and 360 and -720 are the identity */
                const double ident[3] = {0.0, 360.0, -720.0};
                for (int k = 0; k < 3; k++) {
                    imgpu_image *o = rot(in, ident[k], filters[f], 0);
                    CHECKF(same_pixels(o, in), "%g %s %dx%dx%d", ident[k], filter_names[f], w, h, c);
                    imgpu_image_free(o);
                }
                /* 90 CCW: h x w, output (u, v) = input (w-1-v, u) */
                imgpu_image *r90 = rot(in, 90.0, filters[f], 0);
                int ok = r90 && r90->width == h && r90->height == w;
                for (int v = 0; ok && v < w; v++)
                    for (int u = 0; ok && u < h; u++)
                        ok &= !memcmp(px(r90, u, v), px(in, w - 1 - v, u), (size_t)c);
                CHECKF(ok, "90 %s %dx%dx%d", filter_names[f], w, h, c);
                /* 180: both axes flipped */
                imgpu_image *r180 = rot(in, 180.0, filters[f], 0);
                ok = r180 && r180->width == w && r180->height == h;
                for (int v = 0; ok && v < h; v++)
                    for (int u = 0; ok && u < w; u++)
                        ok &= !memcmp(px(r180, u, v), px(in, w - 1 - u, h - 1 - v), (size_t)c);
                CHECKF(ok, "180 %s %dx%dx%d", filter_names[f], w, h, c);
                /* -90 == 270 == 90 clockwise: output (u, v) = input (v, h-1-u) */
                imgpu_image *r270 = rot(in, -90.0, filters[f], 0);
                ok = r270 && r270->width == h && r270->height == w;
                for (int v = 0; ok && v < w; v++)
                    for (int u = 0; ok && u < h; u++)
                        ok &= !memcmp(px(r270, u, v), px(in, v, h - 1 - u), (size_t)c);
                CHECKF(ok, "-90 %s %dx%dx%d", filter_names[f], w, h, c);
                /* four turns are the identity; so are 90 then 270 */
                imgpu_image *t = r90 ? rot(r90, 90.0, filters[f], 0) : NULL;
                imgpu_image *t3 = t ? rot(t, 90.0, filters[f], 0) : NULL;
                imgpu_image *t4 = t3 ? rot(t3, 90.0, filters[f], 0) : NULL;
                CHECKF(same_pixels(t4, in), "4 x 90 %s %dx%dx%d", filter_names[f], w, h, c);
                CHECK(same_pixels(t, r180));
                imgpu_image *back = r90 ? rot(r90, 270.0, filters[f], 0) : NULL;
                CHECK(same_pixels(back, in));
                imgpu_image_free(back);
                imgpu_image_free(t);
                imgpu_image_free(t3);
                imgpu_image_free(t4);
                imgpu_image_free(r90);
                imgpu_image_free(r180);
                imgpu_image_free(r270);
            }
            imgpu_image_free(in);
        }
    }
}

/* Crop mode with a 90-degree turn of a non-square image: the turned h x w image is placed at
 * ox = floor((w-h)/2), oy = floor((h-w)/2) in the w x h canvas (worked out by hand below). */
static void quarter_crop(void)
{
    /* 5 wide, 8 tall, gray, value = 10*y + x + 1 (never 0, the background) */
    imgpu_image *in = imgpu_image_new(5, 8, 1, 8);
    for (int y = 0; y < 8; y++)
        for (int x = 0; x < 5; x++)
            imgpu_image_row(in, y)[x] = (uint8_t)(10 * y + x + 1);
    imgpu_image *o = rot(in, 90.0, IMGPU_FILTER_BILINEAR, 1);
    /* turned image: 8 wide, 5 tall, (u', v') <- (4 - v', u'); ox = floor(-3/2) = -2,
     * oy = floor(3/2) = 1: canvas (u, v) shows turned (u + 2, v - 1); rows 0, 6, 7 background */
    int ok = o && o->width == 5 && o->height == 8;
    for (int v = 0; ok && v < 8; v++)
        for (int u = 0; ok && u < 5; u++) {
            int tu = u + 2, tv = v - 1;
            int want = (tv < 0 || tv >= 5) ? 0 : 10 * tu + (4 - tv) + 1;
            ok &= imgpu_image_row(o, v)[u] == want;
        }
    CHECK(ok);
    /* spot values by hand: canvas (0,1) = turned (2,0) = input (4,2) = 25 */
    CHECK(o && imgpu_image_row(o, 1)[0] == 25 && imgpu_image_row(o, 0)[2] == 0);
    imgpu_image_free(o);
    /* a square image: crop == expand */
    imgpu_image *sq = random_image(6, 6, 3);
    for (int f = 0; f < 3; f++) {
        imgpu_image *a = rot(sq, 270.0, filters[f], 1), *b = rot(sq, 270.0, filters[f], 0);
        CHECK(same_pixels(a, b));
        imgpu_image_free(a);
        imgpu_image_free(b);
    }
    imgpu_image_free(sq);
    imgpu_image_free(in);
}

static void expand_sizes(void)
{
    struct { int w, h; double angle; int ow, oh; } cases[] = {
        {10, 10, 45.0, 15, 15},    /* 10 * sqrt(2) = 14.14 */
        {100, 50, 30.0, 112, 94},  /* 86.6 + 25 = 111.6; 50 + 43.3 = 93.3 */
        {100, 50, -30.0, 112, 94},
        {100, 50, 90.0, 50, 100},
        {100, 50, 180.0, 100, 50},
        {1, 1, 45.0, 2, 2},        /* sqrt(2) = 1.41 */
        {7, 3, 60.0, 7, 8},        /* 3.5 + 2.598 = 6.1; 6.06 + 1.5 = 7.56 */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        imgpu_image *in = random_image(cases[k].w, cases[k].h, 1);
        imgpu_image *o = rot(in, cases[k].angle, IMGPU_FILTER_BILINEAR, 0);
        CHECKF(o && o->width == cases[k].ow && o->height == cases[k].oh, "%dx%d %g -> %dx%d",
               cases[k].w, cases[k].h, cases[k].angle, o ? o->width : 0, o ? o->height : 0);
        imgpu_image *c = rot(in, cases[k].angle, IMGPU_FILTER_BILINEAR, 1);
        CHECK(c && c->width == cases[k].w && c->height == cases[k].h);
        imgpu_image_free(o);
        imgpu_image_free(c);
        imgpu_image_free(in);
    }
}

static void background(void)
{
    /* RGB, no alpha: default black corners at 45 degrees; explicit color there */
    imgpu_image *rgb = imgpu_image_new(20, 20, 3, 8);
    memset(rgb->data, 200, rgb->stride * 20);
    for (int f = 0; f < 3; f++) {
        imgpu_rotate_params p = params(45.0, filters[f], 0);
        imgpu_image *o = imgpu_cpu_rotate(rgb, &p);
        CHECK(o && !memcmp(px(o, 0, 0), "\0\0\0", 3));
        CHECK(o && !memcmp(px(o, o->width / 2, o->height / 2), "\xc8\xc8\xc8", 3));
        imgpu_image_free(o);
        p.has_background = 1;
        memcpy(p.background, "\x0a\x14\x1e\x28", 4); /* 10, 20, 30, 40 */
        o = imgpu_cpu_rotate(rgb, &p);
        CHECK(o && !memcmp(px(o, 0, 0), "\x0a\x14\x1e", 3));
        CHECK(o && !memcmp(px(o, o->width - 1, o->height - 1), "\x0a\x14\x1e", 3));
        imgpu_image_free(o);
    }
    imgpu_image_free(rgb);
    /* gray uses R; gray+alpha uses R and A; RGBA default transparent */
    const int chans[3] = {1, 2, 4};
    const uint8_t want_explicit[3][4] = {{10}, {10, 40}, {10, 20, 30, 40}};
    for (int k = 0; k < 3; k++) {
        imgpu_image *im = imgpu_image_new(9, 9, chans[k], 8);
        memset(im->data, 255, im->stride * 9);
        /* expand: the canvas corner's source point is > 3 px outside, beyond every tap */
        imgpu_rotate_params p = params(30.0, IMGPU_FILTER_BICUBIC, 0);
        imgpu_image *o = imgpu_cpu_rotate(im, &p);
        static const uint8_t zero[4];
        CHECKF(o && !memcmp(px(o, 0, 0), zero, (size_t)chans[k]), "default bg, %d channels", chans[k]);
        imgpu_image_free(o);
        p.has_background = 1;
        memcpy(p.background, "\x0a\x14\x1e\x28", 4);
        o = imgpu_cpu_rotate(im, &p);
        CHECKF(o && !memcmp(px(o, 0, 0), want_explicit[k], (size_t)chans[k]),
               "explicit bg, %d channels", chans[k]);
        imgpu_image_free(o);
        /* background through the crop rule of a quarter turn, too */
        imgpu_image *tall = imgpu_image_new(3, 7, chans[k], 8);
        memset(tall->data, 255, tall->stride * 7);
        p = params(90.0, IMGPU_FILTER_NEAREST, 1);
        p.has_background = 1;
        memcpy(p.background, "\x0a\x14\x1e\x28", 4);
        o = imgpu_cpu_rotate(tall, &p);
        CHECK(o && !memcmp(px(o, 1, 0), want_explicit[k], (size_t)chans[k]));
        imgpu_image_free(o);
        imgpu_image_free(tall);
        imgpu_image_free(im);
    }
}

/* An opaque RGBA image rotated with a transparent background: alpha is 0 wherever the source
 * point is more than 1.5 px outside the image (no tap can reach), 255 wherever it is more than
 * 2.5 px inside (every bicubic tap inside); the geometry is recomputed here in double. */
static void alpha_footprint(void)
{
    const int w = 41, h = 23;
    imgpu_image *in = imgpu_image_new(w, h, 4, 8);
    for (size_t i = 0; i < (size_t)w * h; i++) {
        in->data[4 * i] = (uint8_t)rnd();
        in->data[4 * i + 1] = (uint8_t)rnd();
        in->data[4 * i + 2] = (uint8_t)rnd();
        in->data[4 * i + 3] = 255;
    }
    const double angles[3] = {33.0, 100.0, -71.0};
    for (int a = 0; a < 3; a++)
        for (int f = 0; f < 3; f++) {
            imgpu_image *o = rot(in, angles[a], filters[f], 0);
            if (!o)
                continue;
            const double t = angles[a] * M_PI / 180.0, c = cos(t), s = sin(t);
            int bad = 0, inside = 0, outside = 0;
            for (int v = 0; v < o->height; v++)
                for (int u = 0; u < o->width; u++) {
                    double dx = u + 0.5 - o->width / 2.0, dy = v + 0.5 - o->height / 2.0;
                    double sx = c * dx - s * dy + w / 2.0, sy = s * dx + c * dy + h / 2.0;
                    double depth = fmin(fmin(sx, w - sx), fmin(sy, h - sy)); /* <0: outside */
                    uint8_t al = px(o, u, v)[3];
                    if (depth < -1.5) {
                        outside++;
                        bad += al != 0;
                    } else if (depth > 2.5) {
                        inside++;
                        bad += al != 255;
                    }
                }
            CHECKF(bad == 0 && inside > 0 && outside > 0, "%g %s: %d alpha samples off",
                   angles[a], filter_names[f], bad);
            imgpu_image_free(o);
        }
    imgpu_image_free(in);
}

/* Nearest, 45 degrees, crop, 3x3 with values 1..9. Source points worked out by hand from the
 * convention (c = s in float, so c*d - s*d is exactly 0 and the .5 values are exact):
 *   (0,0): source (1.5, 0.09) -> 2     (1,0): (2.21, 0.79) -> 3    (2,0): (2.91, 1.5) -> 6
 *   (0,1): (0.79, 0.79) -> 1           (1,1): (1.5, 1.5) -> 5      (2,1): (2.21, 2.21) -> 9
 *   (0,2): (0.09, 1.5) -> 4            (1,2): (0.79, 2.21) -> 7    (2,2): (1.5, 2.91) -> 8
 * i.e. the ring turns one step counterclockwise on screen. */
/* Padded input rows give the same result as tight ones, for every filter. */
static void padded_stride(void)
{
    imgpu_image *tight = random_image(13, 9, 3);
    imgpu_image pad = *tight;
    pad.stride = 13 * 3 + 7;
    pad.owns = 0;
    pad.data = malloc(pad.stride * 9);
    memset(pad.data, 0xEE, pad.stride * 9);
    for (int y = 0; y < 9; y++)
        memcpy(imgpu_image_row(&pad, y), imgpu_image_row(tight, y), 13 * 3);
    for (int f = 0; f < 3; f++)
        for (int k = 0; k < 2; k++) {
            double angle = k ? 90.0 : 33.0;
            imgpu_image *a = rot(tight, angle, filters[f], 0), *b = rot(&pad, angle, filters[f], 0);
            CHECKF(same_pixels(a, b) && b->stride == (size_t)b->width * 3, "%g %s", angle,
                   filter_names[f]);
            imgpu_image_free(a);
            imgpu_image_free(b);
        }
    free(pad.data);
    imgpu_image_free(tight);
}

static void nearest_pattern(void)
{
    CHECK((float)cos(M_PI / 4) == (float)sin(M_PI / 4)); /* the premise of the exact .5 values */
    const uint8_t v[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const uint8_t want[9] = {2, 3, 6, 1, 5, 9, 4, 7, 8};
    imgpu_image *in = imgpu_image_new(3, 3, 1, 8);
    memcpy(in->data, v, 9);
    imgpu_image *o = rot(in, 45.0, IMGPU_FILTER_NEAREST, 1);
    CHECK(o && !memcmp(o->data, want, 9));
    if (o && memcmp(o->data, want, 9))
        fprintf(stderr, "got %d %d %d / %d %d %d / %d %d %d\n", o->data[0], o->data[1],
                o->data[2], o->data[3], o->data[4], o->data[5], o->data[6], o->data[7], o->data[8]);
    imgpu_image_free(o);
    /* 405 degrees is the same rotation */
    o = rot(in, 405.0, IMGPU_FILTER_NEAREST, 1);
    CHECK(o && !memcmp(o->data, want, 9));
    imgpu_image_free(o);
    imgpu_image_free(in);
}

static void bilinear_values(void)
{
    /* 2x2 gray, padded stride: 10 20 / 30 41 */
    uint8_t buf[2 * 8] = {10, 20, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 30, 41, 0xEE};
    imgpu_image im = {2, 2, 1, 8, 8, buf, 0};
    const uint8_t bg[4] = {0, 0, 0, 0}, bg9[4] = {90, 0, 0, 0};
    uint8_t out[4];
    /* the centre of the 2x2: equal weights, (10 + 20 + 30 + 41) / 4 = 25.25 -> 25 */
    imgpu_cpu_rotate_sample(&im, IMGPU_FILTER_BILINEAR, 1.0f, 1.0f, bg, out);
    CHECKF(out[0] == 25, "%d", out[0]);
    /* half-way along the top row: (10 + 20) / 2 = 15; along the left column: 20 */
    imgpu_cpu_rotate_sample(&im, IMGPU_FILTER_BILINEAR, 1.0f, 0.5f, bg, out);
    CHECKF(out[0] == 15, "%d", out[0]);
    imgpu_cpu_rotate_sample(&im, IMGPU_FILTER_BILINEAR, 0.5f, 1.0f, bg, out);
    CHECKF(out[0] == 20, "%d", out[0]);
    /* half-way along the bottom row: (30 + 41) / 2 = 35.5 -> 36 (halves round up) */
    imgpu_cpu_rotate_sample(&im, IMGPU_FILTER_BILINEAR, 1.0f, 1.5f, bg, out);
    CHECKF(out[0] == 36, "%d", out[0]);
    /* pixel centres reproduce the pixels exactly */
    imgpu_cpu_rotate_sample(&im, IMGPU_FILTER_BILINEAR, 1.5f, 1.5f, bg, out);
    CHECK(out[0] == 41);
    /* the left edge (x = 0): half pixel (0,0), half background: 10/2 = 5; with bg 90: 50 */
    imgpu_cpu_rotate_sample(&im, IMGPU_FILTER_BILINEAR, 0.0f, 0.5f, bg, out);
    CHECKF(out[0] == 5, "%d", out[0]);
    imgpu_cpu_rotate_sample(&im, IMGPU_FILTER_BILINEAR, 0.0f, 0.5f, bg9, out);
    CHECKF(out[0] == 50, "%d", out[0]);
    /* the corner (0, 0): a quarter of pixel (0,0), three quarters background 90:
     * 10/4 + 3*90/4 = 70 */
    imgpu_cpu_rotate_sample(&im, IMGPU_FILTER_BILINEAR, 0.0f, 0.0f, bg9, out);
    CHECKF(out[0] == 70, "%d", out[0]);
    /* far outside: background; nearest agrees at pixel centres and outside */
    imgpu_cpu_rotate_sample(&im, IMGPU_FILTER_BILINEAR, -3.0f, 0.5f, bg9, out);
    CHECK(out[0] == 90);
    imgpu_cpu_rotate_sample(&im, IMGPU_FILTER_NEAREST, 1.99f, 0.01f, bg9, out);
    CHECK(out[0] == 20);
    imgpu_cpu_rotate_sample(&im, IMGPU_FILTER_NEAREST, 2.0f, 0.5f, bg9, out);
    CHECK(out[0] == 90);
    /* weight quantization to 1/256: between 0 and 255 at x = 0.5 + 0.3 the exact value is 76.5;
     * a_q = round(76.8) / 256 = 77/256 -> 255 * 77 / 256 = 76.70 -> 77 */
    uint8_t ramp[2] = {0, 255};
    imgpu_image r = {2, 1, 1, 8, 2, ramp, 0};
    imgpu_cpu_rotate_sample(&r, IMGPU_FILTER_BILINEAR, 0.8f, 0.5f, bg, out);
    CHECKF(out[0] == 77, "%d", out[0]);
    /* 1/512 from a pixel centre rounds onto it: a = 1/512 -> a_q = round(0.5)/256 = 1/256 */
    imgpu_cpu_rotate_sample(&r, IMGPU_FILTER_BILINEAR, 0.5f + 1.0f / 512, 0.5f, bg, out);
    CHECKF(out[0] == 1, "%d", out[0]); /* 255/256 = 0.996 -> 1 */
    /* the bilinear result equals the integer formula on random points (a second implementation) */
    imgpu_image *rnd_im = random_image(5, 4, 3);
    int ok = 1;
    for (int k = 0; k < 20000; k++) {
        float sx = (float)(rnd() % 8000) / 1000.0f - 1.5f, sy = (float)(rnd() % 7000) / 1000.0f - 1.5f;
        const uint8_t bgc[4] = {7, 99, 250, 0};
        imgpu_cpu_rotate_sample(rnd_im, IMGPU_FILTER_BILINEAR, sx, sy, bgc, out);
        float x = sx - 0.5f, y = sy - 0.5f;
        int i = (int)floorf(x), j = (int)floorf(y);
        int A = (int)lroundf((x - floorf(x)) * 256), B = (int)lroundf((y - floorf(y)) * 256);
        for (int ch = 0; ch < 3; ch++) {
            int acc = 0;
            for (int dj = 0; dj < 2; dj++)
                for (int di = 0; di < 2; di++) {
                    int xi = i + di, yj = j + dj;
                    int p = (xi < 0 || yj < 0 || xi >= 5 || yj >= 4) ? bgc[ch] : px(rnd_im, xi, yj)[ch];
                    acc += (di ? A : 256 - A) * (dj ? B : 256 - B) * p;
                }
            ok &= out[ch] == (acc + 32768) >> 16;
        }
    }
    CHECK(ok);
    imgpu_image_free(rnd_im);

    /* a whole rotation by hand: 1x1 white gray, 45 degrees, expand -> 2x2 canvas. Output (0,0):
     * d = (-0.5, -0.5), sx = 0.5, sy = 0.5 - 0.7071 -> y = -0.7071, j = -1, b = 0.2929,
     * b_q = 75/256; tap (0,-1) is background 0, tap (0,0) is 255: 255 * 75/256 = 74.7 -> 75.
     * By symmetry all four pixels are 75. */
    uint8_t white = 255;
    imgpu_image one = {1, 1, 1, 8, 1, &white, 0};
    imgpu_image *o = rot(&one, 45.0, IMGPU_FILTER_BILINEAR, 0);
    CHECK(o && o->width == 2 && o->height == 2);
    CHECKF(o && o->data[0] == 75 && o->data[1] == 75 && o->data[2] == 75 && o->data[3] == 75,
           "%d %d %d %d", o ? o->data[0] : -1, o ? o->data[1] : -1, o ? o->data[2] : -1,
           o ? o->data[3] : -1);
    imgpu_image_free(o);
}

static void bicubic_values(void)
{
    /* at pixel centres Keys weights are (0, 1, 0, 0): exact reproduction */
    imgpu_image *im = random_image(6, 5, 2);
    const uint8_t bg[4] = {0};
    uint8_t out[4];
    int ok = 1;
    for (int y = 0; y < 5; y++)
        for (int x = 0; x < 6; x++) {
            imgpu_cpu_rotate_sample(im, IMGPU_FILTER_BICUBIC, x + 0.5f, y + 0.5f, bg, out);
            ok &= !memcmp(out, px(im, x, y), 2);
        }
    CHECK(ok);
    imgpu_image_free(im);
    /* half-way on a constant 255 interior: weights sum to 1 -> 255; on a step 0 | 255 the Keys
     * kernel at t = 0.5 gives w = (-0.09375, 0.59375, 0.59375, -0.09375): 255 * 0.5 = 127.5
     * -> 128 */
    uint8_t step[8] = {0, 0, 0, 0, 255, 255, 255, 255};
    imgpu_image s = {8, 1, 1, 8, 8, step, 0};
    const uint8_t edge[4] = {0};
    imgpu_cpu_rotate_sample(&s, IMGPU_FILTER_BICUBIC, 4.0f, 0.5f, edge, out);
    CHECKF(out[0] == 128, "%d", out[0]);
    /* overshoot is clamped: at t = 0.25 left of the step the ringing goes below 0 */
    imgpu_cpu_rotate_sample(&s, IMGPU_FILTER_BICUBIC, 2.75f, 0.5f, edge, out);
    CHECK(out[0] == 0);
}

static void errors(void)
{
    uint8_t buf[8] = {0};
    imgpu_image im16 = {2, 2, 1, 16, 4, buf, 0};
    imgpu_rotate_params p = params(10.0, IMGPU_FILTER_BILINEAR, 0);
    imgpu_error_clear();
    CHECK(imgpu_cpu_rotate(&im16, &p) == NULL && imgpu_error_message()[0]);
    imgpu_image im8 = {2, 2, 1, 8, 2, buf, 0};
    p.angle = NAN;
    imgpu_error_clear();
    CHECK(imgpu_cpu_rotate(&im8, &p) == NULL && imgpu_error_message()[0]);
    p.angle = INFINITY;
    CHECK(imgpu_cpu_rotate(&im8, &p) == NULL);
    p.angle = 10.0;
    p.filter = (imgpu_filter)9;
    CHECK(imgpu_cpu_rotate(&im8, &p) == NULL);
    CHECK(imgpu_cpu_rotate_quarter(450.0) == 1 && imgpu_cpu_rotate_quarter(-90.0) == 3 &&
          imgpu_cpu_rotate_quarter(-360.0) == 0 && imgpu_cpu_rotate_quarter(90.0000001) == -1);
}

int main(void)
{
    quarter_turns();
    quarter_crop();
    expand_sizes();
    background();
    alpha_footprint();
    padded_stride();
    nearest_pattern();
    bilinear_values();
    bicubic_values();
    errors();
    TEST_MAIN_END();
}

/* test_cpu_clahe.c — the CPU reference for issue 6: CLAHE geometry (OpenCV's padding rule),
 * reflect-101, clipping and redistribution, the equalize formulas (OpenCV at 8 and 16 bits,
 * PIL, ImageMagick) on small histograms whose LUTs are worked out by hand in the comments,
 * and whole-image invariants; and luminance mode on every one of the 2^24 colours (one 4096x4096
 * image; --quick: 65536 of them, for valgrind) against ycc.h's plain conversions around the
 * plane CLAHE, which the colour loops replace by tables. The OpenCV agreement on real images is
 * opencv_clahe.py's job. */
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cpu/ycc.h"
#include "error.h"
#include "test_util.h"

/* The CPU file's own entry points this test reaches (src/backend/cpu/clahe.c; the backend
 * declares no op's internals in cpu.h, so a new op touches only its own files). */
void imgpu_cpu_clahe_tile_lut(uint32_t *hist, const imgpu_clahe_geom *g, uint16_t *lut);
int imgpu_cpu_clahe_plane(const uint16_t *src, const imgpu_clahe_geom *g, uint16_t *dst);
imgpu_image *imgpu_cpu_clahe(const imgpu_image *in, const imgpu_clahe_params *p);

static void test_reflect(void)
{
    /* ... 2 1 | 0 1 2 3 4 | 3 2 ... */
    CHECK(imgpu_cpu_reflect101(-1, 5) == 1);
    CHECK(imgpu_cpu_reflect101(-2, 5) == 2);
    CHECK(imgpu_cpu_reflect101(5, 5) == 3);
    CHECK(imgpu_cpu_reflect101(6, 5) == 2);
    CHECK(imgpu_cpu_reflect101(4, 5) == 4);
    CHECK(imgpu_cpu_reflect101(3, 1) == 0);
    CHECK(imgpu_cpu_reflect101(7, 3) == 1); /* 7 -> -3 -> 3 -> 1 */
}

static void test_geometry(void)
{
    imgpu_clahe_params p = {40.0, 4, 4, IMGPU_MODE_LUMINANCE};
    imgpu_clahe_geom g;
    /* 10 x 16: the width is not a multiple of 4, so BOTH get padded: 12 x 20 (OpenCV pads
     * tiles_y - 16 % 4 = 4 rows too), tiles 3 x 5, area 15, clip (int)(40*15/256) = 2 */
    CHECK(imgpu_clahe_geometry(10, 16, 8, &p, &g) == 0);
    CHECK(g.ext_w == 12 && g.ext_h == 20 && g.tile_w == 3 && g.tile_h == 5);
    CHECK(g.clip_limit == 2 && g.lut_scale == 17.0f && g.bins == 256);
    /* multiples: no padding; 16-bit: 65536 bins, clip max(1, (int)(40*4/65536)) = 1 */
    CHECK(imgpu_clahe_geometry(8, 8, 16, &p, &g) == 0);
    CHECK(g.ext_w == 8 && g.ext_h == 8 && g.tile_w == 2 && g.clip_limit == 1 && g.bins == 65536);
    p.clip = 0;
    CHECK(imgpu_clahe_geometry(8, 8, 8, &p, &g) == 0 && g.clip_limit == 0);
    p.tiles_x = 0;
    CHECK(imgpu_clahe_geometry(8, 8, 8, &p, &g) < 0);
    imgpu_error_clear();
}

static void test_tile_lut(void)
{
    imgpu_clahe_params p = {40.0, 4, 4, IMGPU_MODE_LUMINANCE};
    imgpu_clahe_geom g;
    imgpu_clahe_geometry(10, 16, 8, &p, &g); /* area 15, clip 2, scale 17 */
    uint32_t h[256] = {0};
    uint16_t lut[256];
    h[0] = 10;
    h[1] = 5;
    /* clipped 8 + 3 = 11 < 256: no batch; residual 11, step 256 / 11 = 23: bins 0, 23, ..., 230
     * get one each. h[0] = 3, h[1] = 2, h[23] = 1, ... */
    imgpu_cpu_clahe_tile_lut(h, &g, lut);
    CHECK(h[0] == 3 && h[1] == 2 && h[22] == 0 && h[23] == 1 && h[230] == 1 && h[231] == 0 && h[253] == 0);
    CHECK(lut[0] == 51 && lut[1] == 85 && lut[22] == 85 && lut[23] == 102 && lut[255] == 255);
}

static void test_formulas(void)
{
    uint32_t h[256] = {0};
    uint16_t lut[256];
    h[10] = 300, h[20] = 500, h[30] = 200; /* N = 1000 */
    /* PIL: step = (1000 - 200) // 255 = 3, acc starts at 1: lut[i] = (1 + cum(i-1)) // 3 */
    imgpu_cpu_equalize_lut_full(h, 256, 1000, IMGPU_FORMULA_PIL, lut);
    CHECK(lut[10] == 0 && lut[11] == 100 && lut[20] == 100 && lut[21] == 255 && lut[30] == 255);
    /* ImageMagick: black = h[0] = 0; 65535 * 0.3 = 19660.5 -> 19661 -> char 77; 0.8 -> 52428 -> 204 */
    imgpu_cpu_equalize_lut_full(h, 256, 1000, IMGPU_FORMULA_IMAGEMAGICK, lut);
    CHECK(lut[0] == 0 && lut[10] == 77 && lut[20] == 204 && lut[30] == 255);
    /* OpenCV at 8 bits is the existing reference exactly */
    uint8_t ref[256];
    imgpu_cpu_equalize_lut(h, 1000, ref);
    imgpu_cpu_equalize_lut_full(h, 256, 1000, IMGPU_FORMULA_OPENCV, lut);
    int same = 1;
    for (int i = 0; i < 256; i++)
        same &= lut[i] == ref[i];
    CHECK(same);
    /* PIL: too few pixels for a step -> identity */
    uint32_t small[256] = {0};
    small[10] = 3, small[20] = 5;
    imgpu_cpu_equalize_lut_full(small, 256, 8, IMGPU_FORMULA_PIL, lut);
    CHECK(lut[10] == 10 && lut[20] == 20);
    /* 16-bit OpenCV: h[100] = 1, h[200] = 1, h[300] = 2: scale = 65535 / 3 = 21845 */
    uint32_t *h16 = calloc(65536, sizeof *h16);
    uint16_t *l16 = malloc(65536 * sizeof *l16);
    h16[100] = 1, h16[200] = 1, h16[300] = 2;
    imgpu_cpu_equalize_lut_full(h16, 65536, 4, IMGPU_FORMULA_OPENCV, l16);
    CHECK(l16[100] == 0 && l16[200] == 21845 && l16[300] == 65535 && l16[65535] == 65535);
    free(h16);
    free(l16);
}

static void test_images(void)
{
    /* CLAHE with clip 0 and a 1x1 grid is plain equalization through the tile's CDF:
     * lut[v] = rint(cdf(v) * 255 / N); on a 4-level image of 4 x 1 pixels: 64, 128, 191, 255 */
    imgpu_image *im = imgpu_image_new(4, 1, 1, 8);
    im->data[0] = 0, im->data[1] = 50, im->data[2] = 100, im->data[3] = 150;
    imgpu_clahe_params p = {0.0, 1, 1, IMGPU_MODE_LUMINANCE};
    imgpu_image *o = imgpu_cpu_clahe(im, &p);
    CHECK(o && o->data[0] == 64 && o->data[1] == 128 && o->data[2] == 191 && o->data[3] == 255);
    imgpu_image_free(o);
    imgpu_image_free(im);
    /* 16-bit RGBA: alpha untouched, size and depth kept */
    im = imgpu_image_new(37, 23, 4, 16);
    uint16_t *s = (uint16_t *)(void *)im->data;
    uint32_t r = 1;
    for (int i = 0; i < 37 * 23 * 4; i++) {
        r = r * 1664525u + 1013904223u;
        s[i] = (uint16_t)(r >> 16);
    }
    p = (imgpu_clahe_params){2.0, 3, 2, IMGPU_MODE_LUMINANCE};
    for (int m = 0; m < 2; m++) {
        p.mode = m ? IMGPU_MODE_PER_CHANNEL : IMGPU_MODE_LUMINANCE;
        o = imgpu_cpu_clahe(im, &p);
        CHECK(o && o->depth == 16 && o->width == 37 && o->channels == 4);
        int alpha_ok = 1, changed = 0;
        for (int i = 0; o && i < 37 * 23; i++) {
            alpha_ok &= ((uint16_t *)(void *)o->data)[4 * i + 3] == s[4 * i + 3];
            changed |= ((uint16_t *)(void *)o->data)[4 * i] != s[4 * i];
        }
        CHECK(alpha_ok && changed);
        imgpu_image_free(o);
    }
    imgpu_image_free(im);
}

/* Luminance mode on every colour (quick: a 256x256 slice): rgb_to_ycbcr, the plane CLAHE,
 * ycbcr_to_rgb with the pixel's own Cb and Cr, done here with ycc.h's functions. */
static void test_every_colour(int quick)
{
    const int w = quick ? 256 : 4096, h = quick ? 256 : 4096;
    const size_t n = (size_t)w * h;
    imgpu_image *in = imgpu_image_new(w, h, 3, 8);
    uint16_t *plane = malloc(n * sizeof *plane), *res = malloc(n * sizeof *res);
    uint8_t *cb = malloc(n), *cr = malloc(n);
    CHECK(in && plane && res && cb && cr);
    if (!in || !plane || !res || !cb || !cr)
        goto done;
    for (int y = 0; y < h; y++) {
        uint8_t *p = imgpu_image_row(in, y);
        for (int x = 0; x < w; x++, p += 3) {
            const uint32_t i = (uint32_t)y * (uint32_t)w + (uint32_t)x;
            p[0] = (uint8_t)(quick ? (uint32_t)y : i >> 16);
            p[1] = (uint8_t)(quick ? (uint32_t)(y * 7 + x * 13) : i >> 8);
            p[2] = (uint8_t)(quick ? (uint32_t)x : i);
            uint8_t yy;
            imgpu__rgb_to_ycbcr(p[0], p[1], p[2], &yy, &cb[i], &cr[i]);
            plane[i] = yy;
        }
    }
    const imgpu_clahe_params prm = {40.0, 8, 8, IMGPU_MODE_LUMINANCE};
    imgpu_clahe_geom g;
    CHECK(imgpu_clahe_geometry(w, h, 8, &prm, &g) == 0);
    CHECK(imgpu_cpu_clahe_plane(plane, &g, res) == 0);
    imgpu_image *out = imgpu_cpu_clahe(in, &prm);
    CHECKF(out != NULL, "clahe failed: %s", imgpu_error_message());
    size_t bad = 0;
    for (int y = 0; out && y < h; y++) {
        const uint8_t *q = imgpu_image_row(out, y);
        for (int x = 0; x < w; x++, q += 3) {
            const size_t i = (size_t)y * w + x;
            uint8_t r, gg, b;
            imgpu__ycbcr_to_rgb((uint8_t)res[i], cb[i], cr[i], &r, &gg, &b);
            bad += q[0] != r || q[1] != gg || q[2] != b;
        }
    }
    CHECKF(out && bad == 0, "luminance CLAHE on %zu colours: %zu differ from ycc.h's conversions", n, bad);
    imgpu_image_free(out);
done:
    imgpu_image_free(in);
    free(plane);
    free(res);
    free(cb);
    free(cr);
}

int main(int argc, char **argv)
{
    const int quick = argc > 1 && !strcmp(argv[1], "--quick");
    test_reflect();
    test_geometry();
    test_tile_lut();
    test_formulas();
    test_images();
    test_every_colour(quick);
    TEST_MAIN_END();
}

/* test_cpu_resize.c — the CPU resize's row engine (src/backend/cpu/resize.c: ring of
 * horizontal-pass rows, whole-row vertical pass, loops specialised by channels and taps)
 * against the per-sample reference code it replaced, byte for byte: every filter, with and
 * without --antialias, 1..4 channels (alpha mixed premultiplied at 2 and 4), 8 and 16 bits,
 * up, down, whole factors (the integer box, with boxes cut by the border), odd factors,
 * 1-pixel sides, one side unchanged, padded input rows, images with extremes (so that the
 * saturations and overshoots of bicubic and lanczos are reached), on 1 and 3 threads with
 * even tiny jobs split (a part starts its ring at any row), and the row engine's plain build
 * beside its AVX2 one. Mode 2 makes the library fail
 * where the row engine could not run, so each comparison is known to have compared it. */
#include "cpu/cpu.h"
#include "cpu/parallel.h"
#include "error.h"
#include "test_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void imgpu__cpu_resize_mode(int mode); /* src/backend/cpu/resize.c */

static uint32_t s_rng = 2024u;
static unsigned rnd(void)
{
    s_rng = s_rng * 1664525u + 1013904223u;
    return s_rng >> 8;
}

/* Structure (a gradient), noise, 0/max stripes (overshoot), and alpha that varies
 * (transparent, opaque and partial areas) in the middle third of the rows and is one value
 * in the others (opaque above, a third of max below: rows the row engine skips, and rows
 * whose taps straddle the bands); rows padded by `pad` pixels (a view). */
static imgpu_image *make_image(int w, int h, int c, int d, int pad, imgpu_image **owner)
{
    imgpu_image *big = imgpu_image_new(w + pad, h, c, d);
    if (!big)
        return NULL;
    const unsigned maxv = d == 16 ? 65535u : 255u;
    for (int y = 0; y < h; y++) {
        unsigned char *row = imgpu_image_row(big, y);
        for (int x = 0; x < w + pad; x++)
            for (int k = 0; k < c; k++) {
                unsigned v;
                const int zone = (x * 3 / (w + 1) + y * 2 / (h + 1)) % 3;
                if (zone == 0)
                    v = (unsigned)(((x * 7 + y * 13 + k * 29) % 256) * (maxv / 255u) + rnd() % 7);
                else if (zone == 1)
                    v = ((x + y) & 1) ? maxv : 0;
                else
                    v = rnd() % (maxv + 1);
                if ((c == 2 || c == 4) && k == c - 1) { /* alpha: opaque rows, varying, one value */
                    const int band = y * 3 / h;
                    v = band == 0 ? maxv
                      : band == 2 ? maxv / 3
                                  : (x % 5 == 0) ? 0 : (y % 3 == 0) ? maxv : rnd() % (maxv + 1);
                }
                imgpu_sample_put(row, d, (size_t)x * c + k, v > maxv ? maxv : v);
            }
    }
    *owner = big;
    imgpu_image *view = malloc(sizeof *view);
    if (!view)
        return NULL;
    *view = *big;
    view->width = w;
    view->owns = 0;
    return view;
}

static int same(const imgpu_image *a, const imgpu_image *b)
{
    if (a->width != b->width || a->height != b->height || a->channels != b->channels || a->depth != b->depth)
        return 0;
    const size_t n = (size_t)a->width * a->channels * (a->depth / 8);
    for (int y = 0; y < a->height; y++)
        if (memcmp(imgpu_image_row((imgpu_image *)a, y), imgpu_image_row((imgpu_image *)b, y), n) != 0)
            return 0;
    return 1;
}

typedef struct sz {
    int sw, sh, dw, dh; /* dw 0: by scale */
    double scale;
} sz;

int main(int argc, char **argv)
{
    /* --quick (valgrind, tests/robust/robust_valgrind.sh): every other size */
    const int step = argc > 1 && strcmp(argv[1], "--quick") == 0 ? 2 : 1;
    static const sz sizes[] = {
        {1, 1, 5, 3, 0},     {7, 1, 3, 1, 0},     {1, 9, 1, 4, 0},    {37, 23, 100, 61, 0},
        {100, 61, 37, 23, 0}, {64, 48, 32, 24, 0}, {90, 60, 30, 20, 0}, {91, 61, 0, 0, 1.0 / 3},
        {45, 31, 0, 0, 0.5}, {50, 40, 17, 13, 0}, {13, 7, 40, 29, 0},  {300, 10, 7, 3, 0},
        {40, 30, 40, 11, 0}, {29, 33, 58, 33, 0}, {17, 16, 16, 15, 0}, {64, 64, 16, 16, 0},
        {3, 2, 200, 150, 0},
        /* wide rows, so that the vectorised loops (h_pairs, the 16-bit bilinear rows, the
         * 2x2 box) run whole vectors and a remainder: 2x up (area: weights 1 and 0), 2x
         * down, bilinear down by a fraction, 3x up */
        {131, 5, 262, 11, 0}, {263, 10, 131, 5, 0}, {200, 7, 77, 3, 0}, {67, 4, 0, 0, 2.0}, {45, 3, 135, 9, 0},
    };
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    int compared = 0;
    int nrun = 0;
    for (int si = 0; si < nsizes; si += step, nrun++)
        for (int d = 8; d <= 16; d += 8)
            for (int c = 1; c <= 4; c++) {
                const sz *s = &sizes[si];
                imgpu_image *owner = NULL;
                imgpu_image *in = make_image(s->sw, s->sh, c, d, si % 3 == 1 ? 3 : 0, &owner);
                CHECK(in != NULL);
                if (!in)
                    continue;
                for (int f = IMGPU_RESIZE_NEAREST; f <= IMGPU_RESIZE_LANCZOS; f++)
                    for (int aa = 0; aa <= 1; aa++) {
                        if (aa && f == IMGPU_RESIZE_NEAREST)
                            continue;
                        imgpu_op op = imgpu_op_resize(s->dw, s->dh, (imgpu_resize_filter)f);
                        op.u.resize.antialias = aa;
                        if (s->dw == 0)
                            op.u.resize.scale = s->scale;
                        imgpu__cpu_threads_set(1, 1);
                        imgpu__cpu_resize_mode(1);
                        imgpu_image *ref = imgpu_cpu_run(in, &op);
                        CHECKF(ref != NULL, "reference %dx%d c%d d%d f%d aa%d: %s", s->sw, s->sh, c, d, f, aa,
                               imgpu_error_message());
                        /* 1 and 3 threads; the row engine's AVX2 build where the CPU has
                         * it (mode 2), its plain build (mode 3) */
                        static const int threads[] = {1, 3, 2};
                        for (int ti = 0; ti < 3 && ref; ti++) {
                            imgpu__cpu_threads_set(threads[ti], 1);
                            imgpu__cpu_resize_mode(f == IMGPU_RESIZE_NEAREST ? 0 : ti == 2 ? 3 : 2);
                            imgpu_image *out = imgpu_cpu_run(in, &op);
                            CHECKF(out != NULL, "row engine %dx%d c%d d%d f%d aa%d: %s", s->sw, s->sh, c, d, f, aa,
                                   imgpu_error_message());
                            if (out) {
                                CHECKF(same(ref, out), "%dx%d -> %dx%d (scale %g) c%d d%d filter %d aa %d threads %d: the row engine differs from the reference",
                                       s->sw, s->sh, ref->width, ref->height, s->scale, c, d, f, aa, threads[ti]);
                                compared++;
                            }
                            imgpu_image_free(out);
                        }
                        imgpu_image_free(ref);
                    }
                free(in);
                imgpu_image_free(owner);
            }
    imgpu__cpu_resize_mode(0);
    imgpu__cpu_threads_set(0, 0);
    CHECKF(compared == nrun * 2 * 4 * 9 * 3, "compared %d", compared);
    printf("%d resizes compared\n", compared);
    TEST_MAIN_END();
}

/* test_cpu_threads.c — the CPU backend gives byte-identical results on any number of threads
 * (src/cpu/parallel.h). Every threaded op (equalize at 8 and 16 bits with each mode and
 * formula, CLAHE with odd grids and clip limits, rotation with each filter, quarter turns,
 * both histograms) runs on odd-sized images — 1x1, 1xN, Nx1, 37x23, sizes not divisible by
 * the thread counts, padded rows — with 1 thread (the reference: one part, the former
 * single-threaded code path) and then with 2, 3, 4 and 7 threads, the small-job shortcut
 * off so that even a 1x5 image is split; every output must equal the 1-thread output byte
 * for byte. */
#include "cpu/cpu.h"
#include "cpu/parallel.h"
#include "error.h"
#include "test_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One result: the bytes of an output (an image's rows, or a histogram). */
typedef struct result {
    unsigned char *bytes;
    size_t len;
    char name[96];
} result;

#define MAX_RESULTS 64

static uint32_t s_rng = 12345u;
static unsigned rnd(void)
{
    s_rng = s_rng * 1664525u + 1013904223u;
    return s_rng >> 8;
}

/* An image with structure (a gradient), noise and a narrow-range region (so CLAHE clips),
 * rows padded by `pad` bytes when pad > 0 (a view into a wider owned buffer). */
static imgpu_image *make_image(int w, int h, int c, int d, int pad, imgpu_image **owner)
{
    const int bps = d / 8;
    const int padpx = (pad + c * bps - 1) / (c * bps);
    imgpu_image *big = imgpu_image_new(w + padpx, h, c, d);
    if (!big)
        return NULL;
    const unsigned maxv = d == 16 ? 65535u : 255u;
    for (int y = 0; y < h; y++) {
        unsigned char *row = imgpu_image_row(big, y);
        for (int x = 0; x < w + padpx; x++)
            for (int k = 0; k < c; k++) {
                unsigned v;
                if (x < w / 2)
                    v = (unsigned)((x * 7 + y * 13 + k * 29) % 256) * (maxv / 255u) + rnd() % 5;
                else
                    v = (maxv / 3u) + rnd() % (d == 16 ? 2000u : 9u);
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

static void add_image(result *r, int *n, const imgpu_image *im, const char *name)
{
    if (*n >= MAX_RESULTS) {
        CHECKF(0, "too many results (%s)", name);
        return;
    }
    result *x = &r[(*n)++];
    snprintf(x->name, sizeof x->name, "%s", name);
    x->bytes = NULL;
    x->len = 0;
    if (!im) {
        CHECKF(0, "%s failed: %s", name, imgpu_error_message());
        return;
    }
    const size_t rowb = (size_t)im->width * im->channels * (im->depth / 8);
    x->len = rowb * im->height + 2 * sizeof(int);
    x->bytes = malloc(x->len);
    memcpy(x->bytes, &im->width, sizeof(int));
    memcpy(x->bytes + sizeof(int), &im->height, sizeof(int));
    for (int y = 0; y < im->height; y++)
        memcpy(x->bytes + 2 * sizeof(int) + (size_t)y * rowb, imgpu_image_row(im, y), rowb);
}

static void add_bytes(result *r, int *n, const void *p, size_t len, const char *name)
{
    if (*n >= MAX_RESULTS)
        return;
    result *x = &r[(*n)++];
    snprintf(x->name, sizeof x->name, "%s", name);
    x->bytes = malloc(len);
    memcpy(x->bytes, p, len);
    x->len = len;
}

/* Every threaded op on `in`; results appended to r. */
static int run_all(const imgpu_image *in, result *r)
{
    int n = 0;
    char name[96];
    for (int mode = 0; mode < 2; mode++) {
        if (in->depth == 8) {
            imgpu_equalize_params ep = {.mode = (imgpu_eq_mode)mode};
            imgpu_image *o = imgpu_cpu_equalize(in, &ep);
            snprintf(name, sizeof name, "equalize mode %d", mode);
            add_image(r, &n, o, name);
            imgpu_image_free(o);
        }
        for (int f = 0; f < 3; f++) {
            imgpu_equalize_params ep = {.mode = (imgpu_eq_mode)mode, .formula = (imgpu_eq_formula)f};
            imgpu_image *o = imgpu_cpu_equalize_full(in, &ep);
            snprintf(name, sizeof name, "equalize_full mode %d formula %d", mode, f);
            add_image(r, &n, o, name);
            imgpu_image_free(o);
        }
        const imgpu_clahe_params cps[3] = {{40.0, 8, 8, (imgpu_eq_mode)mode},
                                           {2.0, 3, 5, (imgpu_eq_mode)mode},
                                           {0.0, 7, 1, (imgpu_eq_mode)mode}};
        /* 16 bits: 65536-bin tiles are costly, one grid (the odd one) is enough there */
        for (int i = in->depth == 16 ? 1 : 0; i < (in->depth == 16 ? 2 : 3); i++) {
            imgpu_op cop = imgpu_op_clahe(cps[i].clip, cps[i].tiles_x, cps[i].tiles_y, cps[i].mode);
            imgpu_image *o = imgpu_cpu_run(in, &cop);
            snprintf(name, sizeof name, "clahe mode %d clip %g grid %dx%d", mode, cps[i].clip, cps[i].tiles_x,
                     cps[i].tiles_y);
            add_image(r, &n, o, name);
            imgpu_image_free(o);
        }
    }
    const struct { double angle; imgpu_filter f; int crop; } rots[] = {
        {30, IMGPU_FILTER_BILINEAR, 0}, {30, IMGPU_FILTER_BICUBIC, 0}, {-17.5, IMGPU_FILTER_NEAREST, 1},
        {200, IMGPU_FILTER_BICUBIC, 1}, {90, IMGPU_FILTER_BILINEAR, 0}, {270, IMGPU_FILTER_NEAREST, 1},
        {180, IMGPU_FILTER_BICUBIC, 0}};
    for (size_t i = 0; i < sizeof rots / sizeof rots[0]; i++) {
        imgpu_rotate_params rp = {.angle = rots[i].angle, .filter = rots[i].f, .crop = rots[i].crop,
                                  .has_background = (int)(i & 1), .background = {10, 200, 30, 128}};
        imgpu_image *o = imgpu_cpu_rotate(in, &rp);
        snprintf(name, sizeof name, "rotate %g filter %d crop %d", rots[i].angle, (int)rots[i].f, rots[i].crop);
        add_image(r, &n, o, name);
        imgpu_image_free(o);
    }
    /* normalize and autolevel (issue 28, op-norm): their CDFs are counted per part (tone_cdf.c) */
    const imgpu_op tone[] = {imgpu_op_normalize(0.15, 0.05, IMGPU_MODE_LUMINANCE),
                             imgpu_op_normalize(2.0, 1.0, IMGPU_MODE_PER_CHANNEL), imgpu_op_autolevel(0),
                             imgpu_op_autolevel(1)};
    for (size_t i = 0; i < sizeof tone / sizeof tone[0]; i++) {
        imgpu_image *o = imgpu_cpu_run(in, &tone[i]);
        snprintf(name, sizeof name, "tone op %zu", i);
        add_image(r, &n, o, name);
        imgpu_image_free(o);
    }
    if (in->depth == 8) {
        imgpu_histogram h;
        if (imgpu_cpu_histogram(in, &h) == 0)
            add_bytes(r, &n, &h, sizeof h, "histogram");
        else
            CHECKF(0, "histogram failed: %s", imgpu_error_message());
    }
    imgpu_histogram_full hf;
    if (imgpu_cpu_histogram_full(in, &hf) == 0) {
        add_bytes(r, &n, hf.counts, (size_t)hf.planes * hf.levels * sizeof *hf.counts, "histogram_full");
        free(hf.counts);
    } else {
        CHECKF(0, "histogram_full failed: %s", imgpu_error_message());
    }
    return n;
}

static void free_results(result *r, int n)
{
    for (int i = 0; i < n; i++)
        free(r[i].bytes);
}

int main(int argc, char **argv)
{
    imgpu_set_quiet(1);
    /* --quick (tests/robust/robust_valgrind.sh: threads under memcheck): 8-bit, three sizes, 3 threads */
    const int quick = argc > 1 && !strcmp(argv[1], "--quick");
    static const int sizes[][2] = {{1, 5}, {37, 23}, {5, 1}, {1, 1}, {1, 29}, {29, 1}, {64, 61}, {83, 130}};
    static const int threads[] = {3, 2, 4, 7};
    const size_t nsizes = quick ? 3 : sizeof sizes / sizeof sizes[0];
    const size_t nthreads = quick ? 1 : sizeof threads / sizeof threads[0];
    int images = 0;
    for (size_t s = 0; s < nsizes; s++)
        for (int c = 1; c <= 4; c++)
            for (int d = 8; d <= (quick ? 8 : 16); d += 8)
                for (int pad = 0; pad <= (d == 8 ? 3 : 0); pad += 3) {
                    const int w = sizes[s][0], h = sizes[s][1];
                    imgpu_image *owner = NULL;
                    imgpu_image *in = make_image(w, h, c, d, pad, &owner);
                    CHECK(in != NULL);
                    if (!in) {
                        imgpu_image_free(owner);
                        continue;
                    }
                    images++;
                    result ref[MAX_RESULTS], got[MAX_RESULTS];
                    imgpu__cpu_threads_set(1, 1);
                    const int nref = run_all(in, ref);
                    for (size_t t = 0; t < nthreads; t++) {
                        imgpu__cpu_threads_set(threads[t], 1);
                        const int ngot = run_all(in, got);
                        CHECK(ngot == nref);
                        for (int i = 0; i < nref && i < ngot; i++)
                            CHECKF(ref[i].len == got[i].len && (!ref[i].len || !memcmp(ref[i].bytes, got[i].bytes, ref[i].len)),
                                   "%dx%d c%d %d-bit pad %d: %s differs on %d threads from 1 thread", w, h, c, d,
                                   pad, ref[i].name, threads[t]);
                        free_results(got, ngot);
                    }
                    free_results(ref, nref);
                    imgpu_image_free(owner);
                    free(in);
                }
    /* The shortcut for small jobs: with it on (the default), a 37x23 image is one part. */
    imgpu__cpu_threads_set(4, 0);
    CHECK(imgpu__cpu_parts(23, 37 * 3, 256) == 1);
    CHECK(imgpu__cpu_parts(2160, 3840 * 3, 256) == 4 * IMGPU__CPU_PARTS_PER_THREAD);
    CHECK(imgpu__cpu_parts(1, 1 << 30, 0) == 1);
    imgpu__cpu_threads_set(4, 1);
    CHECK(imgpu__cpu_parts(23, 37 * 3, 256) == 4 * IMGPU__CPU_PARTS_PER_THREAD);
    CHECK(imgpu__cpu_parts(3, 1, 0) == 3);
    imgpu__cpu_threads_set(1, 1); /* one thread: one part, whatever the size */
    CHECK(imgpu__cpu_parts(2160, 3840 * 3, 256) == 1);
    imgpu__cpu_threads_set(0, 0);
    printf("%d images x 1 + %zu thread counts\n", images, nthreads);
    TEST_MAIN_END();
}

/* test_gpu_clahe.c — the issue-6 GPU ops against the CPU reference, bit for bit:
 *  - CLAHE (8 and 16 bits; gray, gray+alpha, RGB, RGBA; luminance and per-channel) over sizes
 *    1x1, odd, not a multiple of the grid, and 4K; clip 0, 1, 40; grids 1x1, 8x8, 7x2, 16x16;
 *  - 16-bit histograms, every kernel variant, and the full-resolution histogram entry point;
 *  - equalize at 8 and 16 bits with every formula (opencv, pil, imagemagick), both modes, and
 *    at 16 bits both ways to the LUT (one cluster launch; block scan + LUT kernel);
 *  - 16-bit rotation, every filter, quarter turns, both canvases;
 *  - chains (CLAHE then pil equalize; rotate then equalize at 16 bits) equal to the CPU chain.
 * Every GPU result goes through imgpu_pipeline_run(--device cuda), so the dispatch is tested
 * too. Images: noise, smooth ramps with a little noise, constant, 8-bit values scaled to 16
 * bits (only 256 distinct levels). IMGPU_TEST_QUICK=1 (compute-sanitizer runs) leaves out 4K;
 * IMGPU_TEST_RACE=1 (racecheck runs) is a small matrix that still reaches every kernel.
 * #18, the default run: every image of the size x channels x kind matrix takes every grid, with
 * the clip limit turning with the grid and the channel count (clip index (grid + size +
 * channels + kind) % 3), so every (size, kind, grid, clip) and every (size, channels, kind,
 * grid) still occurs, not every product of the five (3x fewer CPU CLAHE references, the 16-bit
 * ones being 65536 bins per tile); at 4K, equalize with the opencv formula only (the formulas
 * are LUT arithmetic whose image size plays no part: all three run at every smaller size).
 * IMGPU_TEST_FULL=1: every clip with every grid, and every formula at 4K (the matrix before #18). */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cuda/cuda_util.h" /* imgpu__cuda_tuning: IMGPU_H16_CLUSTER and the rest */
#include "gpu_util.h"
#include "kernels.h"
#include "ops.h"
#include "test_util.h"

enum { NOISE, SMOOTH, CONSTANT, SCALED8, KINDS };
static const char *kind_name[] = {"noise", "smooth", "constant", "scaled8"};

static imgpu_image *make(int w, int h, int c, int depth, int kind, uint32_t seed)
{
    imgpu_image *im = imgpu_image_new(w, h, c, depth);
    const unsigned maxv = depth == 16 ? 65535u : 255u;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int k = 0; k < c; k++) {
                unsigned v;
                switch (kind) {
                case NOISE: v = gpu_rand(&seed) & maxv; break;
                case SMOOTH:
                    v = (unsigned)((uint64_t)maxv * (unsigned)(x * 37 / (w + 1) + y * 53 / (h + 1) + k * 11) / 100u) +
                        gpu_rand(&seed) % (maxv / 50 + 1);
                    v = v > maxv ? maxv : v;
                    break;
                case CONSTANT: v = maxv / 3; break;
                default: v = (gpu_rand(&seed) & 255u) * (depth == 16 ? 257u : 1u); break;
                }
                imgpu_sample_put(imgpu_image_row(im, y), depth, (size_t)x * c + k, v);
            }
    return im;
}

/* max |a-b| over all samples, -1 when shapes differ; *ndiff: samples that differ */
static long max_diff(const imgpu_image *a, const imgpu_image *b, size_t *ndiff)
{
    if (!a || !b || a->width != b->width || a->height != b->height || a->channels != b->channels ||
        a->depth != b->depth)
        return -1;
    long m = 0;
    size_t nd = 0;
    for (int y = 0; y < a->height; y++)
        for (int i = 0; i < a->width * a->channels; i++) {
            long d = labs((long)imgpu_sample_get(imgpu_image_row(a, y), a->depth, (size_t)i) -
                          (long)imgpu_sample_get(imgpu_image_row(b, y), b->depth, (size_t)i));
            nd += d != 0;
            if (d > m)
                m = d;
        }
    if (ndiff)
        *ndiff = nd;
    return m;
}

/* The op on the GPU (through the dispatcher) against the CPU pipeline. */
static void check_op(const imgpu_image *im, const imgpu_op *ops, int n, const char *what)
{
    imgpu_device used = IMGPU_DEVICE_AUTO;
    imgpu_image *ref = imgpu_pipeline_run(im, ops, n, IMGPU_DEVICE_CPU, NULL);
    imgpu_image *got = imgpu_pipeline_run(im, ops, n, IMGPU_DEVICE_CUDA, &used);
    CHECKF(ref != NULL, "CPU reference failed on %s", what);
    CHECKF(got != NULL && used == IMGPU_DEVICE_CUDA, "GPU run failed on %s: %s", what,
           got ? "ran elsewhere" : imgpu_error_message());
    if (ref && got) {
        size_t nd = 0;
        long d = max_diff(got, ref, &nd);
        CHECKF(d == 0, "%s: max diff %ld, %zu samples differ", what, d, nd);
    }
    imgpu_image_free(ref);
    imgpu_image_free(got);
}

static void test_clahe(const imgpu_image *im, double clip, int tx, int ty, imgpu_eq_mode mode, const char *what)
{
    char buf[256];
    imgpu_op op = imgpu_op_clahe(clip, tx, ty, mode);
    snprintf(buf, sizeof buf, "clahe clip %g grid %dx%d mode %d on %s", clip, tx, ty, (int)mode, what);
    check_op(im, &op, 1, buf);
}

static void test_equalize_formulas(const imgpu_image *im, int nformulas, const char *what);

static void test_equalize(const imgpu_image *im, const char *what)
{
    test_equalize_formulas(im, 3, what);
}

/* formulas 0 .. nformulas-1 (opencv, pil, imagemagick) */
static void test_equalize_formulas(const imgpu_image *im, int nformulas, const char *what)
{
    char buf[256];
    /* 16 bits: the CDF + LUT in one cluster launch (the default on sm_90), and the block scan
     * then the LUT kernel (path 1, the fallback elsewhere) */
    for (int path = 0; path < (im->depth == 16 ? 2 : 1); path++) {
        imgpu_kernels_lut16_path(path);
        for (int f = 0; f < nformulas; f++)
            for (int m = 0; m < (im->channels >= 3 ? 2 : 1); m++) {
                imgpu_op op = imgpu_op_equalize((imgpu_eq_mode)m);
                op.u.equalize.formula = (imgpu_eq_formula)f;
                snprintf(buf, sizeof buf, "equalize formula %d mode %d lut16 path %d on %s", f, m, path, what);
                check_op(im, &op, 1, buf);
            }
    }
    imgpu_kernels_lut16_path(0);
}

static void test_hist16(const imgpu_image *im, const char *what)
{
    imgpu_histogram_full ref, got;
    CHECK(imgpu_cpu_histogram_full(im, &ref) == 0);
    const size_t npix = (size_t)im->width * im->height, bytes = npix * im->channels * 2;
    uint16_t *d_img;
    uint32_t *d_hist, *h = malloc(65536 * 4);
    CUDA_OK(cudaMalloc((void **)&d_img, bytes + 64));
    CUDA_OK(cudaMalloc((void **)&d_hist, 65536 * 4));
    CUDA_OK(cudaMemcpy(d_img, im->data, bytes, cudaMemcpyHostToDevice));
    for (int v = 0; v < IMGPU_HIST16_VARIANT_COUNT; v++)
        for (int p = 0; p < ref.planes; p++) {
            CUDA_OK(cudaMemset(d_hist, 0, 65536 * 4));
            CUDA_OK(imgpu_launch_histogram16_tuned((imgpu_hist16_variant)v, d_img, npix, im->channels, p, d_hist,
                                                     imgpu__cuda_tuning(), 0));
            CUDA_OK(cudaMemcpy(h, d_hist, 65536 * 4, cudaMemcpyDeviceToHost));
            CHECKF(memcmp(h, ref.counts + (size_t)p * 65536, 65536 * 4) == 0, "histogram16 %s plane %d on %s",
                   imgpu_hist16_variant_name((imgpu_hist16_variant)v), p, what);
        }
    imgpu_device used = IMGPU_DEVICE_AUTO;
    memset(&got, 0, sizeof got);
    CHECKF(imgpu_histogram_full_compute(im, IMGPU_DEVICE_CUDA, &got, &used) == 0 && used == IMGPU_DEVICE_CUDA, "%s",
           imgpu_error_message());
    CHECKF(got.planes == ref.planes && got.levels == ref.levels && got.has_luma == ref.has_luma && got.counts &&
               memcmp(got.counts, ref.counts, (size_t)ref.planes * ref.levels * 4) == 0,
           "imgpu_histogram_full_compute(cuda) on %s", what);
    imgpu_histogram_full_free(&ref);
    imgpu_histogram_full_free(&got);
    free(h);
    cudaFree(d_img);
    cudaFree(d_hist);
}

int main(void)
{
    gpu_require_or_skip();
    const int quick = getenv("IMGPU_TEST_QUICK") != NULL;
    const int full = getenv("IMGPU_TEST_FULL") != NULL;
    if (getenv("IMGPU_TEST_RACE")) {
        /* compute-sanitizer racecheck shadows every shared-memory access, and the 16-bit kernels
         * make 65536-bin passes over 128 KiB per block: the quick matrix takes far too long
         * under it. This one reaches every kernel of this test once or twice per channel
         * layout (CLAHE 8/16-bit both modes, a tile split over blocks, 16-bit histograms of
         * every design, equalize with every formula and both LUT paths, 16-bit rotation). */
        uint32_t rseed = 99;
        char what[64];
        for (int depth = 8; depth <= 16; depth += 8)
            for (int c = 1; c <= 3; c += 2) {
                imgpu_image *im = make(depth == 16 ? 613 : 101, depth == 16 ? 409 : 67, c, depth, SMOOTH, rseed++);
                snprintf(what, sizeof what, "race %d-bit c%d", depth, c);
                test_clahe(im, 40, 2, 2, IMGPU_MODE_LUMINANCE, what);
                test_clahe(im, 2.5, 7, 2, c >= 3 ? IMGPU_MODE_PER_CHANNEL : IMGPU_MODE_LUMINANCE, what);
                test_equalize(im, what);
                if (depth == 16) {
                    test_hist16(im, what);
                    imgpu_op rot = imgpu_op_rotate(30);
                    for (int f = 0; f < 3; f++) {
                        rot.u.rotate.filter = (imgpu_filter)f;
                        check_op(im, &rot, 1, what);
                    }
                    rot = imgpu_op_rotate(90);
                    check_op(im, &rot, 1, what);
                }
                imgpu_image_free(im);
            }
        imgpu_cuda_shutdown();
        TEST_MAIN_END();
    }
    static const int sizes[][2] = {{1, 1}, {37, 23}, {101, 67}, {64, 48}, {257, 130}};
    static const double clips[] = {0, 1, 40};
    static const int grids[][2] = {{1, 1}, {8, 8}, {7, 2}, {16, 16}};
    char what[128];
    uint32_t seed = 1;
    for (int depth = 8; depth <= 16; depth += 8)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes - (quick ? 2 : 0); s++)
            for (int c = 1; c <= 4; c++)
                for (int k = 0; k < KINDS; k++) {
                    if (k == SCALED8 && depth == 8)
                        continue;
                    imgpu_image *im = make(sizes[s][0], sizes[s][1], c, depth, k, seed++ * 7919u);
                    snprintf(what, sizeof what, "%dx%dx%d %d-bit %s", sizes[s][0], sizes[s][1], c, depth, kind_name[k]);
                    for (size_t ci = 0; ci < sizeof clips / sizeof *clips; ci++)
                        for (size_t gi = 0; gi < sizeof grids / sizeof *grids; gi++)
                            for (int m = 0; m < (c >= 3 ? 2 : 1); m++) {
                                /* keep the run short: constant images once per grid; under a
                                 * sanitizer, the 16x16 grid at 16 bits (256 tiles x 65536 bins
                                 * per plane) on gray only */
                                if ((k == CONSTANT && ci != 2) || (quick && depth == 16 && gi == 3 && c > 1))
                                    continue;
                                if (!full && k != CONSTANT && ci != (gi + s + (size_t)c + (size_t)k) % 3)
                                    continue;
                                test_clahe(im, clips[ci], grids[gi][0], grids[gi][1], (imgpu_eq_mode)m, what);
                            }
                    test_equalize(im, what);
                    if (depth == 16)
                        test_hist16(im, what);
                    imgpu_image_free(im);
                }

    /* more pixels than one 16-bit counter block holds (65535), so the merge across blocks and
     * a tile split over several blocks are exercised even in quick runs */
    for (int depth = 8; depth <= 16; depth += 8) {
        imgpu_image *im = make(613, 409, 3, depth, SMOOTH, 4242u + depth);
        snprintf(what, sizeof what, "613x409x3 %d-bit smooth", depth);
        test_clahe(im, 40, 2, 2, IMGPU_MODE_LUMINANCE, what);
        test_clahe(im, 2.5, 1, 1, IMGPU_MODE_PER_CHANNEL, what);
        test_equalize(im, what);
        if (depth == 16)
            test_hist16(im, what);
        imgpu_image_free(im);
    }

    if (!quick) { /* 4K: the benchmark's size */
        for (int depth = 8; depth <= 16; depth += 8)
            for (int c = 1; c <= 3; c += 2) {
                imgpu_image *im = make(3840, 2160, c, depth, SMOOTH, 77u + (uint32_t)(depth + c));
                snprintf(what, sizeof what, "3840x2160x%d %d-bit smooth", c, depth);
                test_clahe(im, 40, 8, 8, IMGPU_MODE_LUMINANCE, what);
                test_clahe(im, 0, 16, 16, IMGPU_MODE_PER_CHANNEL, what);
                test_clahe(im, 2, 7, 2, IMGPU_MODE_PER_CHANNEL, what);
                test_equalize_formulas(im, full ? 3 : 1, what);
                if (depth == 16)
                    test_hist16(im, what);
                imgpu_image_free(im);
            }
    }

    /* a chain on the device: CLAHE, then pil equalize, at 16 bits; and with a rotation at 8 */
    {
        imgpu_image *im = make(300, 200, 3, 16, SMOOTH, 31337u);
        imgpu_op ops[2] = {imgpu_op_clahe(3, 4, 4, IMGPU_MODE_LUMINANCE), imgpu_op_equalize(IMGPU_MODE_PER_CHANNEL)};
        ops[1].u.equalize.formula = IMGPU_FORMULA_PIL;
        check_op(im, ops, 2, "16-bit chain clahe -> pil equalize");
        imgpu_image_free(im);
        im = make(300, 200, 4, 8, SMOOTH, 31338u);
        imgpu_op ops8[3] = {imgpu_op_clahe(2, 3, 5, IMGPU_MODE_PER_CHANNEL), imgpu_op_rotate(90),
                            imgpu_op_equalize(IMGPU_MODE_LUMINANCE)};
        ops8[2].u.equalize.formula = IMGPU_FORMULA_IMAGEMAGICK;
        check_op(im, ops8, 3, "8-bit chain clahe -> rotate 90 -> imagemagick equalize");
        imgpu_image_free(im);
    }

    /* 16-bit rotation: every filter, quarter turns, both canvases, a background or none; the
     * GPU equals the CPU bit for bit (both use the same integer bilinear and float bicubic) */
    {
        static const int rs[][2] = {{1, 1}, {37, 23}, {101, 67}, {257, 130}};
        static const double angles[] = {30, -45, 17.5, 123.4, 90, 180, 270, 0};
        for (size_t s = 0; s < sizeof rs / sizeof *rs - (quick ? 1 : 0); s++)
            for (int c = 1; c <= 4; c++)
                for (int k = NOISE; k <= SMOOTH; k++) {
                    imgpu_image *im = make(rs[s][0], rs[s][1], c, 16, k, seed++ * 104729u);
                    for (size_t a = 0; a < sizeof angles / sizeof *angles; a++)
                        for (int f = 0; f < 3; f++) {
                            imgpu_op rot = imgpu_op_rotate(angles[a]);
                            rot.u.rotate.filter = (imgpu_filter)f;
                            rot.u.rotate.crop = (int)(a % 2);
                            if (a % 3 == 0) {
                                rot.u.rotate.has_background = 1;
                                memcpy(rot.u.rotate.background, (uint8_t[4]){200, 30, 255, 128}, 4);
                            }
                            snprintf(what, sizeof what, "16-bit rotate %g filter %d crop %d bg %d on %dx%dx%d %s",
                                     angles[a], f, (int)(a % 2), a % 3 == 0, rs[s][0], rs[s][1], c, kind_name[k]);
                            check_op(im, &rot, 1, what);
                        }
                    imgpu_image_free(im);
                }
        imgpu_image *im = make(300, 200, 3, 16, SMOOTH, 4711u);
        imgpu_op ops[2] = {imgpu_op_rotate(-17.5), imgpu_op_equalize(IMGPU_MODE_LUMINANCE)};
        ops[0].u.rotate.filter = IMGPU_FILTER_BICUBIC;
        ops[1].u.equalize.formula = IMGPU_FORMULA_PIL;
        check_op(im, ops, 2, "16-bit chain rotate bicubic -> pil equalize");
        imgpu_image_free(im);
    }

    imgpu_cuda_shutdown();
    TEST_MAIN_END();
}

/* test_gpu_norm.c — normalize and autolevel (issue 28, op-norm) on CUDA against the CPU
 * reference, bit for bit.
 * 1. The intensity kernel (kernels/normalize.cu) against the CPU's formula for every 8-bit RGB
 *    colour (2^24 pixels, as RGB and as RGBA) and 2^22 random 16-bit pixels: the quantum
 *    ClampToQuantum((0.212656 R + 0.715158 G) + 0.072186 B), each product and sum rounded to
 *    double (src/backend/cpu/tone_cdf.c's tables of products, then two additions). A single
 *    differing pixel could move normalize's clip points on some image, so all are checked.
 * 2. Both ops through imgpu_pipeline_run (the dispatch, the run tables, the device histograms,
 *    the scans, the download and the shared host LUT): 8 and 16 bits; gray, gray+alpha, RGB,
 *    RGBA; 1x1, 1x13, 13x1, odd sizes and one large enough for the histograms' many blocks;
 *    noise, a narrow band, a constant, gray-valued RGB, and few distinct values (ties at the
 *    clip points); several clips including none, 2%/1% and clips that cross; a chain that
 *    shares the session's scratch with equalize.
 * Exits 77 without a usable GPU. */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_util.h"
#include "kernels.h"
#include "op/op_table.h"
#include "ops.h"
#include "test_util.h"

/* The CPU's intensity quantum (tone_cdf.c): products tabled, then summed. */
static unsigned cpu_intensity(const double *tab, size_t levels, unsigned r, unsigned g, unsigned b)
{
    const double v = (tab[r] + tab[levels + g]) + tab[2 * levels + b];
    return v <= 0.0 ? 0u : v >= 65535.0 ? 65535u : (unsigned)(v + 0.5);
}

static void check_intensity(int depth, int c, size_t npix, uint32_t seed)
{
    const size_t levels = depth == 16 ? 65536u : 256u, bytes = npix * (size_t)c * (depth / 8);
    double *tab = malloc(3 * levels * sizeof *tab);
    static const double coef[3] = {0.212656, 0.715158, 0.072186};
    for (int k = 0; k < 3; k++)
        for (size_t v = 0; v < levels; v++)
            tab[k * levels + v] = coef[k] * (double)(depth == 8 ? 257 * v : v);
    unsigned char *img = malloc(bytes);
    uint16_t *got = malloc(npix * 2);
    for (size_t i = 0; i < npix; i++)
        for (int k = 0; k < c; k++) {
            /* 8 bits: pixel i is the colour i (every colour once for npix = 2^24) */
            const unsigned v = depth == 8 ? (k < 3 ? (unsigned)(i >> (8 * (2 - k))) & 255u : 255u - (unsigned)(i & 255u))
                                          : gpu_rand(&seed) & 65535u;
            imgpu_sample_put(img, depth, i * (size_t)c + k, v);
        }
    void *d_in;
    uint16_t *d_out;
    CUDA_OK(cudaMalloc(&d_in, bytes + 64));
    CUDA_OK(cudaMalloc((void **)&d_out, npix * 2));
    CUDA_OK(cudaMemcpy(d_in, img, bytes, cudaMemcpyHostToDevice));
    CUDA_OK(imgpu_launch_intensity16(d_in, npix, c, depth, d_out, 0));
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(got, d_out, npix * 2, cudaMemcpyDeviceToHost));
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < npix; i++) {
        const size_t s = i * (size_t)c;
        const unsigned want = cpu_intensity(tab, levels, imgpu_sample_get(img, depth, s),
                                            imgpu_sample_get(img, depth, s + 1), imgpu_sample_get(img, depth, s + 2));
        if (got[i] != want && bad++ == 0)
            first = i;
    }
    CHECKF(bad == 0, "intensity %d-bit c%d: %zu of %zu pixels differ (first at %zu)", depth, c, bad, npix, first);
    cudaFree(d_in);
    cudaFree(d_out);
    free(tab);
    free(img);
    free(got);
}

enum { NOISE, BAND, CONSTANT, GRAY_RGB, FEW, KINDS };

static imgpu_image *make(int w, int h, int c, int depth, int kind, uint32_t seed)
{
    imgpu_image *im = imgpu_image_new(w, h, c, depth);
    const unsigned maxv = depth == 16 ? 65535u : 255u;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const unsigned g = gpu_rand(&seed) & maxv;
            for (int k = 0; k < c; k++) {
                unsigned v = gpu_rand(&seed) & maxv;
                if (kind == BAND)
                    v = maxv / 4 + v % (maxv / 3);
                else if (kind == CONSTANT)
                    v = maxv / 3;
                else if (kind == GRAY_RGB)
                    v = k < 3 ? g : v;
                else if (kind == FEW)
                    v = (v % 4) * (maxv / 5) + maxv / 10;
                imgpu_sample_put(imgpu_image_row(im, y), depth, (size_t)x * c + k, v);
            }
        }
    return im;
}

static void check_ops(const imgpu_image *im, const imgpu_op *ops, int n, const char *what)
{
    imgpu_device used = IMGPU_DEVICE_AUTO;
    imgpu_image *ref = imgpu_pipeline_run(im, ops, n, IMGPU_DEVICE_CPU, NULL);
    imgpu_image *got = imgpu_pipeline_run(im, ops, n, IMGPU_DEVICE_CUDA, &used);
    CHECKF(ref != NULL, "CPU reference failed on %s: %s", what, imgpu_error_message());
    CHECKF(got != NULL && used == IMGPU_DEVICE_CUDA, "GPU run failed on %s: %s", what,
           got ? "ran elsewhere" : imgpu_error_message());
    if (ref && got) {
        int same = ref->width == got->width && ref->height == got->height && ref->channels == got->channels &&
                   ref->depth == got->depth;
        size_t nd = 0;
        for (int y = 0; same && y < ref->height; y++)
            for (size_t i = 0; i < (size_t)ref->width * ref->channels; i++)
                nd += imgpu_sample_get(imgpu_image_row(ref, y), ref->depth, i) !=
                      imgpu_sample_get(imgpu_image_row(got, y), got->depth, i);
        CHECKF(same && nd == 0, "%s: %s, %zu samples differ", what, same ? "same shape" : "shapes differ", nd);
    }
    imgpu_image_free(ref);
    imgpu_image_free(got);
}

static int norm_ops(imgpu_op *ops)
{
    int n = 0;
    ops[n++] = imgpu_op_normalize(IMGPU_NORMALIZE_BLACK_CLIP, IMGPU_NORMALIZE_WHITE_CLIP, IMGPU_MODE_LUMINANCE);
    ops[n++] = imgpu_op_normalize(IMGPU_NORMALIZE_BLACK_CLIP, IMGPU_NORMALIZE_WHITE_CLIP, IMGPU_MODE_PER_CHANNEL);
    ops[n++] = imgpu_op_normalize(2.0, 1.0, IMGPU_MODE_LUMINANCE);
    ops[n++] = imgpu_op_normalize(0.0, 0.0, IMGPU_MODE_PER_CHANNEL);
    ops[n++] = imgpu_op_normalize(10.0, 25.0, IMGPU_MODE_PER_CHANNEL);
    ops[n++] = imgpu_op_normalize(60.0, 50.0, IMGPU_MODE_LUMINANCE); /* the clips cross */
    ops[n++] = imgpu_op_normalize(100.0, 0.0, IMGPU_MODE_LUMINANCE); /* no black point: all black */
    ops[n++] = imgpu_op_autolevel(0);
    ops[n++] = imgpu_op_autolevel(1);
    return n;
}

int main(void)
{
    gpu_require_or_skip();
    /* IMGPU_TEST_QUICK=1 (the compute-sanitizer runs, tests/robust/robust_gpu.sh): 2^16 pixels
     * of the intensity check, no 1031x517 */
    const int quick = getenv("IMGPU_TEST_QUICK") != NULL;
    check_intensity(8, 3, (size_t)1 << (quick ? 16 : 24), 1);
    check_intensity(8, 4, (size_t)1 << (quick ? 16 : 24), 2);
    check_intensity(16, 3, (size_t)1 << (quick ? 16 : 22), 3);
    check_intensity(16, 4, (size_t)1 << (quick ? 16 : 22), 4);

    static const int sizes[][2] = {{1, 1}, {1, 13}, {13, 1}, {37, 29}, {1031, 517}};
    const size_t nsizes = sizeof sizes / sizeof sizes[0] - (quick ? 1 : 0);
    imgpu_op ops[16];
    const int nops = norm_ops(ops);
    uint32_t seed = 28;
    for (size_t s = 0; s < nsizes; s++)
        for (int depth = 8; depth <= 16; depth += 8)
            for (int c = 1; c <= 4; c++)
                for (int kind = 0; kind < KINDS; kind++) {
                    imgpu_image *im = make(sizes[s][0], sizes[s][1], c, depth, kind, seed += 7919);
                    for (int i = 0; i < nops; i++) {
                        char what[200], text[120];
                        imgpu_op_desc_of(ops[i].kind)->write(&ops[i], IMGPU_OP_TEXT_MANIFEST, text, sizeof text);
                        snprintf(what, sizeof what, "%s on %dx%d c%d %d-bit kind %d", text, sizes[s][0], sizes[s][1],
                                 c, depth, kind);
                        check_ops(im, &ops[i], 1, what);
                    }
                    /* a chain: the CDFs share the session's scratch with equalize's histograms */
                    imgpu_op chain[3] = {ops[0], imgpu_op_equalize(IMGPU_MODE_PER_CHANNEL), ops[8]};
                    chain[1].u.equalize.formula = IMGPU_FORMULA_IMAGEMAGICK;
                    check_ops(im, chain, 3, "chain normalize, equalize, autolevel");
                    imgpu_image_free(im);
                }
    imgpu_cuda_shutdown();
    TEST_MAIN_END();
}

/* test_gpu_tone.c — the tone LUT ops of issue 28 (levels; gamma, normalize, autolevel as they
 * land) on CUDA against the CPU reference, bit for bit, through imgpu_pipeline_run (so the
 * dispatch and the run tables are tested too): 8 and 16 bits; gray, gray+alpha, RGB, RGBA;
 * sizes 1x1, 1x13, 13x1, odd, and one large enough for the apply kernel's grid-stride loop;
 * noise, a narrow band, a constant; and a chain (levels then equalize then levels). Both
 * backends apply the same host LUT, so any difference is the upload or the apply. Exits 77
 * without a usable GPU. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_util.h"
#include "op/op_table.h"
#include "ops.h"
#include "test_util.h"

enum { NOISE, BAND, CONSTANT, KINDS };

static imgpu_image *make(int w, int h, int c, int depth, int kind, uint32_t seed)
{
    imgpu_image *im = imgpu_image_new(w, h, c, depth);
    const unsigned maxv = depth == 16 ? 65535u : 255u;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int k = 0; k < c; k++) {
                unsigned v = gpu_rand(&seed) & maxv;
                if (kind == BAND)
                    v = maxv / 4 + v % (maxv / 3);
                else if (kind == CONSTANT)
                    v = maxv / 3;
                imgpu_sample_put(imgpu_image_row(im, y), depth, (size_t)x * c + k, v);
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

/* The ops under test, each at a few settings (the tone ops' own parameters). */
static int tone_ops(imgpu_op *ops)
{
    int n = 0;
    ops[n++] = imgpu_op_levels(0.0, -1.0, 1.0);   /* identity */
    ops[n++] = imgpu_op_levels(20.0, 220.0, 1.0);
    ops[n] = imgpu_op_levels(5.0, 90.0, 1.7);
    ops[n].u.levels.black_pct = ops[n].u.levels.white_pct = 1;
    n++;
    ops[n++] = imgpu_op_levels(200.0, 30.0, 0.6); /* inverted */
    ops[n++] = imgpu_op_levels(50.0, 50.0, 1.0);  /* a threshold */
    ops[n++] = imgpu_op_gamma(2.2);
    ops[n++] = imgpu_op_gamma(0.45);
    ops[n++] = imgpu_op_gamma(1.0);                /* identity */
    return n;
}

int main(void)
{
    gpu_require_or_skip();
    static const int sizes[][2] = {{1, 1}, {1, 13}, {13, 1}, {37, 29}, {1031, 517}};
    imgpu_op ops[16];
    const int nops = tone_ops(ops);
    uint32_t seed = 28;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int depth = 8; depth <= 16; depth += 8)
            for (int c = 1; c <= 4; c++)
                for (int kind = 0; kind < KINDS; kind++) {
                    imgpu_image *im = make(sizes[s][0], sizes[s][1], c, depth, kind, seed += 7919);
                    for (int i = 0; i < nops; i++) {
                        char what[160];
                        char text[96];
                        imgpu_op_desc_of(ops[i].kind)->write(&ops[i], IMGPU_OP_TEXT_MANIFEST, text, sizeof text);
                        snprintf(what, sizeof what, "%s on %dx%d c%d %d-bit kind %d", text, sizes[s][0], sizes[s][1],
                                 c, depth, kind);
                        check_ops(im, &ops[i], 1, what);
                    }
                    /* a chain: the ops share the session's scratch with equalize's histograms */
                    imgpu_op chain[3] = {ops[1], imgpu_op_equalize(IMGPU_MODE_PER_CHANNEL), ops[2]};
                    chain[1].u.equalize.formula = IMGPU_FORMULA_IMAGEMAGICK;
                    check_ops(im, chain, 3, "chain levels, equalize, levels");
                    imgpu_image_free(im);
                }
    imgpu_cuda_shutdown();
    TEST_MAIN_END();
}

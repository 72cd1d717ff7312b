/* cpu_ops.c — the CPU backend's hot ops timed alone (no decode, no encode): equalize, CLAHE
 * and rotation by 30 degrees (crop, bilinear and bicubic) of a gray and an RGB image, the
 * median of N calls each, wall clock (CLOCK_MONOTONIC) around the imgpu_cpu_* call, output
 * allocation included. The thread count is the backend's: IMGPU_CPU_THREADS or the cores.
 * Built by bench/cpu_threads.sh against a build tree's libimgpu_core.a (so the same source
 * times the code before and after threading); not part of the CMake build.
 *
 *   cpu_ops GRAY.png RGB.png N
 * Prints "op<TAB>median seconds<TAB>min seconds" lines. */
#include "cpu/cpu.h"
#include "error.h"
#include "io.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "wall_clock.h"

enum { EQ, CLAHE, ROT_BILINEAR, ROT_BICUBIC };

static imgpu_image *run(int op, const imgpu_image *in)
{
    switch (op) {
    case EQ: {
        imgpu_equalize_params p = {.mode = IMGPU_MODE_LUMINANCE};
        return imgpu_cpu_equalize(in, &p);
    }
    case CLAHE: {
        imgpu_op op = imgpu_op_clahe(IMGPU_CLAHE_DEFAULT_CLIP, 8, 8, IMGPU_MODE_LUMINANCE);
        return imgpu_cpu_run(in, &op);
    }
    default: {
        imgpu_rotate_params p = {.angle = 30, .crop = 1,
                                 .filter = op == ROT_BICUBIC ? IMGPU_FILTER_BICUBIC : IMGPU_FILTER_BILINEAR};
        return imgpu_cpu_rotate(in, &p);
    }
    }
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s GRAY.png RGB.png N\n", argv[0]);
        return 2;
    }
    const int n = atoi(argv[3]) > 0 ? atoi(argv[3]) : 5;
    static const char *names[] = {"equalize", "clahe", "rotate30_bilinear", "rotate30_bicubic"};
    double *t = malloc((size_t)n * sizeof *t);
    for (int f = 1; f <= 2; f++) {
        imgpu_image *in = imgpu_image_load(argv[f], NULL);
        if (!in || !t) {
            fprintf(stderr, "cpu_ops: %s\n", imgpu_error_message());
            return 1;
        }
        for (int op = EQ; op <= ROT_BICUBIC; op++) {
            imgpu_image_free(run(op, in)); /* warm-up */
            for (int i = 0; i < n; i++) {
                const double t0 = wall_now();
                imgpu_image *out = run(op, in);
                t[i] = wall_now() - t0;
                if (!out) {
                    fprintf(stderr, "cpu_ops: %s\n", imgpu_error_message());
                    return 1;
                }
                imgpu_image_free(out);
            }
            qsort(t, (size_t)n, sizeof *t, wall_cmp);
            printf("%s_%s\t%.4f\t%.4f\n", in->channels == 1 ? "gray" : "rgb", names[op],
                   n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]), t[0]);
            fflush(stdout);
        }
        imgpu_image_free(in);
    }
    free(t);
    return 0;
}

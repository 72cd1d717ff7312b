/* equalize_split.c — where the time of `imgpu equalize` goes: decode, equalize, encode+write,
 * each the median of N runs, through the same library calls the CLI makes (imgpu_image_load,
 * imgpu_pipeline_run, imgpu_image_save with default options). Built by bench/im_equalize.sh
 * against a build tree's libimgpu_core.a; not part of the CMake build.
 *
 *   equalize_split IN OUT N [luminance|per-channel]
 */
#include "error.h"
#include "io.h"
#include "ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wall_clock.h"

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s IN OUT N [luminance|per-channel]\n", argv[0]);
        return 2;
    }
    int n = atoi(argv[3]);
    if (n < 1 || n > 1000)
        n = 5;
    imgpu_eq_mode mode = argc > 4 && !strcmp(argv[4], "per-channel") ? IMGPU_MODE_PER_CHANNEL
                                                                     : IMGPU_MODE_LUMINANCE;
    imgpu_set_quiet(1);
    double *t = calloc((size_t)n * 3, sizeof *t);
    imgpu_device used = IMGPU_DEVICE_CPU;
    for (int i = 0; i < n; i++) {
        double t0 = wall_now();
        imgpu_image *in = imgpu_image_load(argv[1], NULL);
        double t1 = wall_now();
        imgpu_op op = imgpu_op_equalize(mode);
        imgpu_image *out = in ? imgpu_pipeline_run(in, &op, 1, IMGPU_DEVICE_AUTO, &used) : NULL;
        double t2 = wall_now();
        int rc = out ? imgpu_image_save(out, argv[2], NULL) : -1;
        double t3 = wall_now();
        imgpu_image_free(in);
        imgpu_image_free(out);
        if (rc < 0) {
            fprintf(stderr, "equalize_split: %s\n", imgpu_error_message());
            return 1;
        }
        t[i] = t1 - t0;
        t[n + i] = t2 - t1;
        t[2 * n + i] = t3 - t2;
    }
    double d = wall_median(t, n), e = wall_median(t + n, n), s = wall_median(t + 2 * n, n);
    printf("| decode (stb_image) | %.3f |\n| equalize (%s, %s backend) | %.3f |\n"
           "| encode + write (PNG level 1, zlib) | %.3f |\n| sum of medians | %.3f |\n",
           d, mode == IMGPU_MODE_LUMINANCE ? "luminance" : "per-channel",
           imgpu_device_name(used), e, s, d + e + s);
    free(t);
    return 0;
}

/* test_cpu_driver.c — a small command-line front end to the CPU reference backend over raw
 * files, so the OpenCV cross-check scripts (tests/opencv/cpu_*.py) can drive imgpu_cpu_* directly
 * while the real CLI is written elsewhere. Raw files are tight 8-bit interleaved pixels in
 * imgpu's channel order (R, G, B, A). Not a test by itself.
 *
 *   test_cpu_driver ycc FWD.raw INV.raw
 *       FWD: for every (r, g, b), index (r << 16 | g << 8 | b), the bytes Y, Cr, Cb
 *            (OpenCV's YCrCb order) of imgpu_cpu_rgb_to_ycbcr.
 *       INV: for every (y, cr, cb), index (y << 16 | cr << 8 | cb), the bytes R, G, B of
 *            imgpu_cpu_ycbcr_to_rgb.
 *   test_cpu_driver equalize W H C luminance|per-channel IN.raw OUT.raw
 * Exit status 0 on success, 1 with a message on failure, 2 on usage errors. */
#include "cpu/cpu.h"
#include "error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(void)
{
    fprintf(stderr, "usage: test_cpu_driver ycc FWD.raw INV.raw\n"
                    "       test_cpu_driver equalize W H C luminance|per-channel IN.raw OUT.raw\n");
    return 2;
}

static int write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "test_cpu_driver: cannot write %s\n", path);
        return -1;
    }
    return 0;
}

static imgpu_image *read_raw(const char *path, int w, int h, int c)
{
    imgpu_image *im = imgpu_image_new(w, h, c, 8);
    if (!im)
        return NULL;
    size_t n = (size_t)w * h * c;
    FILE *f = fopen(path, "rb");
    if (!f || fread(im->data, 1, n, f) != n) {
        imgpu_error("cannot read %zu bytes from %s", n, path);
        if (f)
            fclose(f);
        imgpu_image_free(im);
        return NULL;
    }
    fclose(f);
    return im;
}

static int cmd_ycc(const char *fwd_path, const char *inv_path)
{
    const size_t n = (size_t)1 << 24;
    uint8_t *buf = malloc(3 * n);
    if (!buf)
        return 1;
    for (size_t i = 0; i < n; i++) {
        uint8_t y, cb, cr;
        imgpu_cpu_rgb_to_ycbcr((uint8_t)(i >> 16), (uint8_t)(i >> 8), (uint8_t)i, &y, &cb, &cr);
        buf[3 * i] = y;
        buf[3 * i + 1] = cr;
        buf[3 * i + 2] = cb;
    }
    int rc = write_file(fwd_path, buf, 3 * n);
    for (size_t i = 0; rc == 0 && i < n; i++)
        imgpu_cpu_ycbcr_to_rgb((uint8_t)(i >> 16), (uint8_t)i, (uint8_t)(i >> 8), &buf[3 * i],
                               &buf[3 * i + 1], &buf[3 * i + 2]);
    if (rc == 0)
        rc = write_file(inv_path, buf, 3 * n);
    free(buf);
    return rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "ycc") == 0)
        return cmd_ycc(argv[2], argv[3]);
    if (argc < 5)
        return usage();
    int w = atoi(argv[2]), h = atoi(argv[3]), c = atoi(argv[4]);
    imgpu_image *in = NULL, *out = NULL;
    const char *out_path;
    if (strcmp(argv[1], "equalize") == 0 && argc == 8) {
        imgpu_equalize_params p = {IMGPU_MODE_LUMINANCE};
        if (strcmp(argv[5], "per-channel") == 0)
            p.mode = IMGPU_MODE_PER_CHANNEL;
        else if (strcmp(argv[5], "luminance") != 0)
            return usage();
        if (!(in = read_raw(argv[6], w, h, c)))
            goto fail;
        out = imgpu_cpu_equalize(in, &p);
        out_path = argv[7];
    } else {
        return usage();
    }
    if (!out)
        goto fail;
    if (write_file(out_path, out->data, out->stride * (size_t)out->height) < 0)
        goto fail;
    imgpu_image_free(in);
    imgpu_image_free(out);
    return 0;
fail:
    fprintf(stderr, "test_cpu_driver: %s\n", imgpu_error_message());
    imgpu_image_free(in);
    imgpu_image_free(out);
    return 1;
}

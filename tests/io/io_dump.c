/* io_dump.c — test helper for io_crosscheck.py and tiff_crosscheck.py: loads one image with
 * imgpu_image_load (--page N: that page of a TIFF) and writes "W H C\n" ("W H C 16\n" for a
 * 16-bit image) and then the raw samples (rows top to bottom, tight; 16-bit samples native
 * endian) to stdout; on failure, the message to stderr and exit status 1. */
#include "error.h"
#include "io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    imgpu_load_options opts = { 0 };
    if (argc == 4 && !strcmp(argv[2], "--page")) {
        opts.page = atoi(argv[3]);
    } else if (argc != 2) {
        fprintf(stderr, "usage: io_dump FILE [--page N]\n");
        return 2;
    }
    imgpu_image *im = imgpu_image_load(argv[1], &opts);
    if (!im) {
        fprintf(stderr, "%s\n", imgpu_error_message());
        return 1;
    }
    if (im->depth == 16)
        printf("%d %d %d 16\n", im->width, im->height, im->channels);
    else
        printf("%d %d %d\n", im->width, im->height, im->channels);
    size_t row = (size_t)im->width * (size_t)im->channels * (size_t)(im->depth / 8);
    for (int y = 0; y < im->height; y++)
        fwrite(imgpu_image_row(im, y), 1, row, stdout);
    imgpu_image_free(im);
    return fflush(stdout) == 0 ? 0 : 1;
}

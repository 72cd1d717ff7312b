/* io_dump.c — test helper for io_crosscheck.py: loads one image with imgpu_image_load and
 * writes "W H C\n" and then the raw samples (rows top to bottom, tight) to stdout; on failure,
 * the message to stderr and exit status 1. */
#include "error.h"
#include "io.h"

#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: io_dump FILE\n");
        return 2;
    }
    imgpu_image *im = imgpu_image_load(argv[1], NULL);
    if (!im) {
        fprintf(stderr, "%s\n", imgpu_error_message());
        return 1;
    }
    printf("%d %d %d\n", im->width, im->height, im->channels);
    size_t row = (size_t)im->width * (size_t)im->channels;
    for (int y = 0; y < im->height; y++)
        fwrite(imgpu_image_row(im, y), 1, row, stdout);
    imgpu_image_free(im);
    return fflush(stdout) == 0 ? 0 : 1;
}

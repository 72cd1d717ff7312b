/* exif_dump.c — a small front end to src/io/exif.h and imgpu_image_orient for
 * tests/opencv/opencv_exif_orient.py. Not a test by itself.
 *
 *   exif_dump BLOB
 *       prints the fields imgpu_exif_parse reads from BLOB (a TIFF blob, or a JPEG APP1
 *       payload starting "Exif\0\0"), one "name=value" line each.
 *   exif_dump BLOB W H C DEPTH IN.raw OUT.raw
 *       also turns the raw image IN (tight, interleaved, native-endian at 16 bits) by the
 *       blob's orientation and writes OUT, printing "size=OW OH".
 * Exit status 0 on success, 1 with a message on failure, 2 on usage errors. */
#include "exif.h"
#include "image.h"
#include "error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    unsigned char *p = NULL;
    size_t cap = 0;
    *n = 0;
    for (;;) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 4096;
            unsigned char *q = realloc(p, cap);
            if (!q)
                break;
            p = q;
        }
        size_t got = fread(p + *n, 1, cap - *n, f);
        *n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    return p;
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 8) {
        fprintf(stderr, "usage: exif_dump BLOB [W H C DEPTH IN.raw OUT.raw]\n");
        return 2;
    }
    size_t n;
    unsigned char *b = read_file(argv[1], &n);
    if (!b) {
        fprintf(stderr, "exif_dump: cannot read %s\n", argv[1]);
        return 1;
    }
    size_t off = imgpu_exif_skip_header(b, n);
    imgpu_exif_info info;
    if (imgpu_exif_parse(b + off, n - off, &info) < 0) {
        fprintf(stderr, "exif_dump: %s\n", imgpu_error_message());
        return 1;
    }
    free(b);
    printf("orientation=%d\nmake=%s\nmodel=%s\ndatetime_original=%s\npixel_x=%u\npixel_y=%u\n"
           "has_gps=%d\n", info.orientation, info.make, info.model, info.datetime_original,
           (unsigned)info.pixel_x, (unsigned)info.pixel_y, info.has_gps);
    if (argc == 2)
        return 0;

    imgpu_image *in = imgpu_image_new(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
    if (!in) {
        fprintf(stderr, "exif_dump: %s\n", imgpu_error_message());
        return 1;
    }
    size_t bytes = in->stride * (size_t)in->height, got;
    unsigned char *raw = read_file(argv[6], &got);
    if (!raw || got != bytes) {
        fprintf(stderr, "exif_dump: %s: want %zu bytes\n", argv[6], bytes);
        return 1;
    }
    memcpy(in->data, raw, bytes);
    free(raw);
    imgpu_image *out = imgpu_image_orient(in, info.orientation ? info.orientation : 1);
    if (!out) {
        fprintf(stderr, "exif_dump: %s\n", imgpu_error_message());
        return 1;
    }
    FILE *f = fopen(argv[7], "wb");
    size_t out_bytes = out->stride * (size_t)out->height;
    if (!f || fwrite(out->data, 1, out_bytes, f) != out_bytes || fclose(f) != 0) {
        fprintf(stderr, "exif_dump: cannot write %s\n", argv[7]);
        return 1;
    }
    printf("size=%d %d\n", out->width, out->height);
    imgpu_image_free(in);
    imgpu_image_free(out);
    return 0;
}

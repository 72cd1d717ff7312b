/* stb_decode.c — decode an image with stb_image (the decoder imgpu uses) and write it as PNG,
 * unchanged: `stb_decode IN OUT.png`. tests/golden/regenerate.sh builds it to feed OpenCV
 * the same pixels imgpu sees (libjpeg and stb decode a JPEG a level or two apart), so the
 * OpenCV goldens stay independent of imgpu's own code. */
#define STB_IMAGE_IMPLEMENTATION
#include <stb_image.h>
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>

#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s IN OUT.png\n", argv[0]);
        return 2;
    }
    int w, h, n;
    unsigned char *p = stbi_load(argv[1], &w, &h, &n, 0);
    if (!p) {
        fprintf(stderr, "stb_decode: %s: %s\n", argv[1], stbi_failure_reason());
        return 1;
    }
    int ok = stbi_write_png(argv[2], w, h, n, p, w * n);
    stbi_image_free(p);
    if (!ok) {
        fprintf(stderr, "stb_decode: cannot write %s\n", argv[2]);
        return 1;
    }
    return 0;
}

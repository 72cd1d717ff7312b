/* example.c — the README's C example (notes/pylib.md): equalize an image file, then the same op
 * on pixels the program owns, through one context. Built against an installed imgpu by
 * tests/lib/install_check.sh, once through pkg-config and once through find_package(imgpu).
 *   cc example.c $(pkg-config --cflags --libs imgpu) -o example && ./example in.png out.png */
#include <imgpu/imgpu.h>

#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s IN OUT\n", argv[0]);
        return 2;
    }
    int rc = 1;
    imgpu_image *in = NULL, *out = NULL, *view = NULL, *eq = NULL;
    /* a context: the device is resolved and set up on first use, then reused */
    imgpu_context *ctx = imgpu_context_create(IMGPU_DEVICE_AUTO);
    if (!ctx || !(in = imgpu_image_load(argv[1], NULL)))   /* NULL options: the defaults */
        goto done;
    imgpu_op op = imgpu_op_equalize(IMGPU_MODE_LUMINANCE);
    if (imgpu_context_run(ctx, in, &op, 1, &out, NULL) < 0 || imgpu_image_save(out, argv[2], NULL) < 0)
        goto done;

    /* pixels the program owns, wrapped without a copy: a 4x2 gray ramp */
    unsigned char px[2][4] = { {10, 20, 30, 40}, {50, 60, 70, 80} };
    if (!(view = imgpu_image_wrap(px, 4, 2, 1, 8, sizeof px[0])) ||
        imgpu_context_run(ctx, view, &op, 1, &eq, NULL) < 0)
        goto done;
    printf("imgpu %s: %s %dx%d -> %s; ramp equalized: %d .. %d\n", imgpu_version_string(), argv[1],
           out->width, out->height, argv[2], eq->data[0], imgpu_image_row(eq, 1)[3]);
    rc = 0;
done:
    if (rc)
        fprintf(stderr, "imgpu: %s\n", imgpu_error_message());
    imgpu_image_free(eq);
    imgpu_image_free(view);   /* frees the struct, not px */
    imgpu_image_free(out);
    imgpu_image_free(in);
    imgpu_context_destroy(ctx);
    return rc;
}

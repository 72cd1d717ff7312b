/* cmd_compare.c — `imgpu compare A B`: the difference metrics of two images (max and mean
 * absolute difference, PSNR, differing pixels; compare.h computes them), --diff writes |A-B|
 * amplified, --max-abs makes a larger difference exit 1.
 */
#include "cli/cli.h"
#include "cli/compare.h"
#include "error.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

static const char s_help_compare[] =
    "Compare two images of the same size and channels, over all channels (alpha too):\n"
    "max and mean absolute difference, PSNR in dB (inf when identical), and the number of\n"
    "pixels that differ. Different sizes or channel counts are an error (exit 1).\n"
    "16-bit images are compared in 16-bit levels (PSNR against 65535); an 8-bit image against\n"
    "a 16-bit one is scaled by 257 (0..255 onto 0..65535) first, and a note says so.\n"
    "\n"
    "options:\n"
    "  --diff OUT           write |A-B| as an opaque image (gray, or RGB for color inputs;\n"
    "                       an alpha difference shows in every color channel), amplified\n"
    "                       by the gain 255 / max-difference rounded down, so the largest\n"
    "                       difference is near white and a 1-level one is plainly visible;\n"
    "                       the gain used is printed; 16-bit comparisons write a 16-bit image\n"
    "  --max-abs N          exit 1 when the max absolute difference exceeds N (in the levels\n"
    "                       of the comparison: 16-bit ones where an image is 16-bit)\n" HELP_LOAD
        HELP_MEMORY_READ HELP_SAVE HELP_QUIET HELP_TAIL;


/* ---- compare ------------------------------------------------------------------------------ */

static int cmd_compare(const cli *c)
{
    imgpu_image *a = NULL, *b = NULL, *d = NULL;
    imgpu__compare_result r;
    int ok = 0, gain = 1;

    a = imgpu_image_load(c->pos[0], &c->run.load);
    if (!a)
        goto done;
    b = imgpu_image_load(c->pos[1], &c->run.load);
    if (!b)
        goto done;
    if (imgpu__compare(a, c->pos[0], b, c->pos[1], &r) < 0)
        goto done;
    if (c->diff) {
        gain = imgpu__diff_gain(r.max_abs, r.depth);
        d = imgpu__diff_image(a, b, gain);
        if (!d || imgpu_image_save(d, c->diff, &c->run.save) < 0)
            goto done;
    }
    ok = 1;
done:
    imgpu_image_free(a);
    imgpu_image_free(b);
    imgpu_image_free(d);
    if (!ok)
        return fail();

    char shown[4096], shown2[4096];
    if (r.scaled)
        printf("note:                '%s' is 8-bit, '%s' 16-bit: the 8-bit samples are scaled by 257 "
               "(0..255 onto 0..65535) and the metrics are in 16-bit levels\n",
               imgpu_escape(c->pos[r.scaled - 1], shown, sizeof shown),
               imgpu_escape(c->pos[2 - r.scaled], shown2, sizeof shown2));
    if (r.depth == 16)
        printf("max abs difference:  %d (16-bit levels)\n", r.max_abs);
    else
        printf("max abs difference:  %d\n", r.max_abs);
    printf("mean abs difference: %.6f\n", r.mean_abs);
    if (isinf(r.psnr))
        printf("PSNR:                inf\n");
    else
        printf("PSNR:                %.2f dB%s\n", r.psnr, r.depth == 16 ? " (peak 65535)" : "");
    printf("differing pixels:    %" PRIu64 " of %" PRIu64 " (%.4f%%)\n", r.differing_pixels,
           r.pixels, 100.0 * (double)r.differing_pixels / (double)r.pixels);
    if (c->diff)
        printf("diff image:          %s (|A-B| x %d)\n", imgpu_escape(c->diff, shown, sizeof shown),
               gain);
    int rc = finish_stdout();
    if (rc == EXIT_OK && c->have_max_abs && r.max_abs > c->max_abs) {
        imgpu_error("'%s' and '%s' differ by up to %d, more than --max-abs %ld", c->pos[0],
                    c->pos[1], r.max_abs, c->max_abs);
        return fail();
    }
    return rc;
}

const command imgpu__cli_compare = {"compare", 2, "A B", "difference metrics (max, mean, PSNR), diff image",
                                    s_help_compare, cmd_compare};

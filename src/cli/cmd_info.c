/* cmd_info.c — `imgpu info IN...`: each file's format, size, channels, depth, colour space,
 * pages, orientation, ICC profile, camera and date and file size, as text blocks or JSON lines
 * (--json); a file that fails is reported and the others still printed.
 */
#include "cli/cli.h"
#include "error.h"
#include "exif.h"

#include <stdio.h>
#include <string.h>

static const char s_help_info[] =
    "Print each file's format (from its content, not its name), width x height, channels\n"
    "(gray, gray+alpha, RGB, RGBA), bit depth, colour space (Gray, RGB; JPEG: CMYK, YCCK),\n"
    "pages (TIFF), EXIF orientation, ICC profile, camera and date (EXIF) and file size; a\n"
    "blank line between files. Every field comes from the file's headers and structure,\n"
    "which are checked as a load checks them (a truncated file is reported), without\n"
    "decoding the pixels; --decode decodes them too, so corrupt pixel data is reported as\n"
    "well. A file that fails is reported, the others are still printed, and the exit\n"
    "status is 1 if any failed. Dimensions are as loaded: upright unless --no-auto-orient.\n"
    "\n"
    "options:\n"
    "  --decode             decode every image too (slower), so corrupt pixel data fails\n"
    "  --json               one JSON object per line and file: path, format, width, height,\n"
    "                       channels, depth, pages, page, orientation, oriented, icc\n"
    "                       ({description, bytes} or null), exif, xmp, camera, date,\n"
    "                       colour_space, colour_converted, file_size; a file that\n"
    "                       fails: {path, error}\n"
    HELP_LOAD HELP_MEMORY_READ HELP_QUIET HELP_TAIL_READ;


/* ---- info --------------------------------------------------------------------------------- */

/* s as a JSON string, escaped by imgpu__json_escape (error.h): always valid JSON; a byte that
 * is not well-formed UTF-8 (a file name can hold any) becomes \udcXX, so the bytes can be
 * recovered (Python: os.fsencode). */
static void json_str(const char *s)
{
    char buf[4096];
    size_t n = strlen(s), w;
    putchar('"');
    while (n) {
        size_t used = imgpu__json_escape(buf, sizeof buf, s, n, &w);
        fwrite(buf, 1, w, stdout);
        s += used;
        n -= used;
    }
    putchar('"');
}

static const char *const s_orientation_names[9] = {
    "none", "normal", "mirrored horizontally", "rotated 180", "mirrored vertically",
    "transposed", "rotated 90 clockwise", "transversed", "rotated 90 counterclockwise",
};

/* One line of info's text block whose value comes from the file or its name (the path, the
 * ICC description, EXIF's Make, Model and date): every such value goes through imgpu_escape,
 * so no byte of it reaches the terminal raw (ESC, BEL, CSI, C2 9B, bytes that are not UTF-8). */
static void info_text(const char *label, const char *value)
{
    char shown[4096];
    printf("%-13s%s\n", label, imgpu_escape(value, shown, sizeof shown));
}

/* One file's block (or JSON line); 0, or -1 with the error printed and, for --json, an
 * object with "error" written. */
static int info_one(const cli *c, const char *path, int separate)
{
    /* Format and size from the bytes the loader read: a second open or stat of the path
     * would hang on a FIFO, and a pipe (/dev/stdin) has neither by then. */
    imgpu_load_result r = { 0 };
    imgpu_load_options lo = c->run.load;
    lo.no_page_notice = 1;   /* the report lists the pages */
    /* No field needs the pixels: the file read and checked as a load checks it (its format by
     * content, the structure scan, the limits) and its metadata, but no decode (28x faster on
     * 12 MP photos: bench/RESULTS.md); --decode decodes too. The shape is what a decode
     * gives, turned as the load turns it (imgpu_image_read_info). */
    imgpu_image_shape sh = { 0 };
    int ok;
    if (c->decode) {
        imgpu_image *im = imgpu_image_load_ex(path, &lo, &r);
        if ((ok = im != NULL))
            sh = (imgpu_image_shape){ im->width, im->height, im->channels, im->depth };
        imgpu_image_free(im);
    } else {
        ok = imgpu_image_read_info(path, &lo, &sh, &r) == 0;
    }
    const imgpu_image_shape *im = &sh;
    if (!ok) {
        if (c->json) {
            fputs("{\"path\": ", stdout);
            json_str(path);
            fputs(", \"error\": ", stdout);
            json_str(imgpu_error_message());
            fputs("}\n", stdout);
        }
        fflush(stdout);
        fail();
        return -1;
    }
    if (separate && !c->json)   /* the blank line between blocks: only between printed ones */
        putchar('\n');
    const imgpu_meta *m = r.meta;
    const char *fmt = imgpu_format_name(r.format);
    char icc[128] = "";
    /* the file's own profile: a CMYK JPEG's, not the sRGB one load put in its place */
    const unsigned char *icc_b = m->file_icc ? m->file_icc : m->icc;
    const size_t icc_n = m->file_icc ? m->file_icc_len : m->icc_len;
    if (icc_b && imgpu_meta_icc_description(icc_b, icc_n, icc, sizeof icc) < 0)
        snprintf(icc, sizeof icc, "(no description)");
    /* the file's colour space: the format's word (JPEG), else what the channels are */
    const char *colour = m->colour ? m->colour : im->channels <= 2 ? "Gray" : "RGB";
    imgpu_exif_info ex;
    int have_exif = m->exif && imgpu_exif_parse(m->exif, m->exif_len, &ex) == 0;
    const int orient = m->orientation;
    char cam[sizeof ex.make + sizeof ex.model + 1] = "";   /* "Make Model" */
    if (have_exif)
        snprintf(cam, sizeof cam, "%s%s%s", ex.make, ex.make[0] && ex.model[0] ? " " : "", ex.model);
    if (c->json) {
        fputs("{\"path\": ", stdout);
        json_str(path);
        printf(", \"format\": \"%s\", \"width\": %d, \"height\": %d, \"channels\": %d, "
               "\"depth\": %d, \"pages\": %d, \"page\": %d, \"orientation\": %d, "
               "\"oriented\": %s, \"icc\": ",
               fmt, im->width, im->height, im->channels, im->depth, m->pages, m->page, orient,
               m->oriented ? "true" : "false");
        if (icc_b) {
            fputs("{\"description\": ", stdout);
            json_str(icc);
            printf(", \"bytes\": %zu}", icc_n);
        } else {
            fputs("null", stdout);
        }
        printf(", \"exif\": %s, \"xmp\": %s", m->exif ? "true" : "false", m->xmp ? "true" : "false");
        if (have_exif) {
            fputs(", \"camera\": ", stdout);
            json_str(cam);
            fputs(", \"date\": ", stdout);
            json_str(ex.datetime_original);
        }
        printf(", \"colour_space\": \"%s\", \"colour_converted\": %s", colour,
               m->colour_converted ? "true" : "false");
        printf(", \"file_size\": %llu}\n", (unsigned long long)r.bytes);
    } else {
        imgpu_format by_name = imgpu_format_from_path(path);
        info_text("file:", path);
        if (by_name != IMGPU_FORMAT_UNKNOWN && by_name != r.format)
            printf("format:      %s (by content; the name says %s)\n", fmt,
                   imgpu_format_name(by_name));
        else
            printf("format:      %s\n", fmt);
        printf("dimensions:  %d x %d\n", im->width, im->height);
        printf("channels:    %d (%s)\n", im->channels, imgpu_image_layout_name(im->channels));
        printf("bit depth:   %d\n", im->depth);
        if (strcmp(colour, "CMYK") && strcmp(colour, "YCCK"))
            printf("colour:      %s\n", colour);
        else   /* what load made of it */
            printf("colour:      %s (%s)\n", colour,
                   m->colour_converted ? "converted to sRGB through its ICC profile"
                                       : "converted to RGB by formula, without colour management");
        if (m->pages > 1)
            printf("pages:       %d (showing page %d; --page N picks another)\n", m->pages, m->page);
        if (orient >= 1 && orient <= 8)
            printf("orientation: %d (%s)%s\n", orient, s_orientation_names[orient],
                   m->oriented && orient != 1 ? "; shown upright, as loaded" : "");
        if (icc_b) {
            char v[sizeof icc + 32];
            snprintf(v, sizeof v, "%s (%zu bytes)", icc, icc_n);
            info_text("ICC profile:", v);
        }
        if (cam[0])
            info_text("camera:", cam);
        if (have_exif && ex.datetime_original[0])
            info_text("date:", ex.datetime_original);
        if (m->exif || m->xmp || m->n_text)
            printf("metadata:   %s%s%s\n", m->exif ? " EXIF" : "", m->xmp ? " XMP" : "",
                   m->n_text ? " text" : "");
        printf("file size:   %llu bytes", (unsigned long long)r.bytes);
        if (r.bytes >= 1024 * 1024)
            printf(" (%.1f MiB)", (double)r.bytes / (1024.0 * 1024.0));
        else if (r.bytes >= 1024)
            printf(" (%.1f KiB)", (double)r.bytes / 1024.0);
        putchar('\n');
    }
    imgpu_meta_free(r.meta);
    return 0;
}

/* Every file named: a block each (a blank line between), or one JSON object per line with
 * --json; a file that fails is reported and the rest still printed; exit 1 if any failed. */
static int cmd_info(const cli *c)
{
    int failed = 0, printed = 0;
    for (int i = 0; i < c->nfiles; i++) {
        if (info_one(c, c->files[i], printed) < 0)
            failed = 1;
        else
            printed = 1;
    }
    int rc = finish_stdout();
    return failed ? EXIT_FAIL : rc;
}

const command imgpu__cli_info = {"info", -1, "IN...", "format, size, depth, pages, orientation, ICC, EXIF",
                                 s_help_info, cmd_info};
